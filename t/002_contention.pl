
# Copyright (c) 2026, walscale developers

# Contention on WAL insertion locks: with a single lock and many clients
# writing small WAL records, backends must sleep on lock 0 and the sleeps
# must be counted and timed, and a reset with the server idle must bring
# every counter back to zero.  Conditional attempts, switched on by a
# reload that sessions already connected must see, cannot help a single
# lock; with two locks every contended acquisition must fail exactly one
# attempt and sleep on the other lock, which is mostly free; with four locks
# and three attempts, most contended acquisitions must get the second lock
# they try.  With 8 locks every number stays sane.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $clients = 16;
my $load_seconds = 3;

# WAL records each pgbench transaction writes
my $records_per_xact = 20;

# Contention is a matter of chance on a machine with few cores: run up to
# this many bursts of load until the counter under test has moved.
my $max_bursts = 3;

my $node = PostgreSQL::Test::Cluster->new('contention');
$node->init;
# Nothing but this test writes WAL: no autovacuum, and no timed checkpoint,
# so that a reset with the server idle (after a CHECKPOINT, which waits for
# one that the WAL volume may have started) must leave every counter at zero.
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1
walscale.insert_lock_attempts = 0
max_connections = 40
log_statement = none
autovacuum = off
checkpoint_timeout = '1h'
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');

my $script = $node->basedir . '/small_records.sql';
append_to_file($script,
	"SELECT count(pg_logical_emit_message(false, 'walscale', 'small record '"
	  . " || i)) FROM generate_series(1, $records_per_xact) AS i;\n");

# Run one burst of load; returns the number of transactions processed and
# the wall-clock milliseconds the burst took.
sub run_load
{
	my ($name) = @_;
	my $start = time();
	my $processed = finish_pgbench(
		start_pgbench($node, $clients, $load_seconds, '--file' => $script),
		$name);
	return ($processed, (time() - $start) * 1000);
}

# All locks' counters summed, as a one-row relation with walscale_stats'
# column names and contended.
my $sums = q{
(SELECT sum(acquisitions) AS acquisitions, sum(first_try) AS first_try,
        sum(acquisitions - first_try) AS contended,
        sum(failed_attempts) AS failed_attempts,
        sum(blocking_waits) AS blocking_waits, sum(blocked_ms) AS blocked_ms,
        min(exclusive_acquisitions) AS exclusive_acquisitions,
        sum(flush_waits) AS flush_waits
 FROM walscale_stats) AS sums};

# Counters must hold together at $attempts attempts and $locks locks;
# $processed transactions and the wall-clock milliseconds they took since the
# reset at $reset_at bound them from both sides.
sub check_sane
{
	my ($name, $locks, $attempts, $processed, $elapsed_ms, $reset_at) = @_;

	note sprintf("%s: %d transactions in %.0f ms; %s",
		$name, $processed, $elapsed_ms,
		$node->safe_psql('postgres', stats_summary_query()));

	is( $node->safe_psql(
			'postgres', inconsistent_locks_query($attempts, $locks)),
		'0',
		"$name: per-lock counters are consistent");

	cmp_ok(
		$node->safe_psql(
			'postgres', 'SELECT sum(acquisitions) FROM walscale_stats'),
		'>=',
		$processed * $records_per_xact,
		"$name: every record written was counted");

	# No backend can sleep longer than the load ran; leave room for a few
	# background processes beside the clients.
	cmp_ok(
		$node->safe_psql(
			'postgres', 'SELECT sum(blocked_ms) FROM walscale_stats'),
		'<=',
		($clients + 8) * $elapsed_ms,
		"$name: blocked_ms is within the wall-clock time of the load");

	is( $node->safe_psql(
			'postgres', qq{
SELECT min(s.stats_reset) = '$reset_at' AND max(s.stats_reset) = '$reset_at'
       AND f.stats_reset = '$reset_at'
FROM walscale_stats s, walscale_fastpath f GROUP BY f.stats_reset}),
		't',
		"$name: both views report the time the last reset returned");
	return;
}

# Run bursts of load after a reset until $condition holds for the sums of
# all locks' counters; returns the transactions processed, the milliseconds
# spent and the time the reset returned.  The reset must return a time
# between the clock readings taken just before and just after it.
sub load_until
{
	my ($name, $condition) = @_;
	my ($processed, $elapsed_ms) = (0, 0);

	my ($reset_at, $in_time) = split /\|/, $node->safe_psql(
		'postgres', q{
SELECT clock_timestamp() AS before_reset \gset
SELECT walscale_reset() AS reset_at \gset
SELECT :'reset_at',
       :'before_reset'::timestamptz <= :'reset_at'::timestamptz
       AND :'reset_at'::timestamptz <= clock_timestamp();
});
	is($in_time, 't',
		"$name: walscale_reset() returns the time it was called");
	for my $burst (1 .. $max_bursts)
	{
		my ($p, $ms) = run_load("$name, burst $burst");
		$processed  += $p;
		$elapsed_ms += $ms;
		last
		  if $node->safe_psql('postgres', "SELECT $condition FROM $sums") eq
		  't';
	}
	return ($processed, $elapsed_ms, $reset_at);
}

# With the load stopped, a reset must bring every counter back to exactly
# zero (nothing else writes WAL on this server), whatever it counted before:
# the counters in @moved must have been above zero before it.
sub check_reset_while_idle
{
	my ($name, @moved) = @_;
	my ($before, $after) = reset_while_idle($node);

	note "$name: before the reset: "
	  . join(' ', map { "$_=$before->{$_}" } sort keys %$before);
	for my $counter (@moved)
	{
		cmp_ok($before->{$counter}, '>', 0,
			"$name: $counter above zero before the reset");
	}
	for my $counter (sort keys %$after)
	{
		is($after->{$counter}, '0',
			"$name: $counter is zero right after a reset with the server idle"
		);
	}
	return;
}

# 1. one lock, plain sleeps
# Restart with $locks insertion locks and $attempts attempts, and check that
# the server runs with them.
sub restart_with
{
	my ($name, $locks, $attempts) = @_;
	$node->safe_psql(
		'postgres', qq{
ALTER SYSTEM SET walscale.insert_locks = $locks;
ALTER SYSTEM SET walscale.insert_lock_attempts = $attempts;
});
	$node->restart;
	is( $node->safe_psql(
			'postgres',
			'SELECT insert_locks, insert_lock_attempts FROM walscale_settings'),
		"$locks|$attempts",
		"$name: settings in effect after restart");
	return;
}

my $name = 'one lock, no attempts';
is( $node->safe_psql(
		'postgres',
		'SELECT insert_locks, insert_lock_attempts FROM walscale_settings'),
	'1|0',
	"$name: settings in effect");

my ($processed, $elapsed_ms, $reset_at) =
  load_until($name, 'blocking_waits > 0 AND blocked_ms > 0');
is( $node->safe_psql(
		'postgres', q{
SELECT blocking_waits > 0, blocked_ms > 0, failed_attempts = 0,
       acquisitions - first_try = blocking_waits
FROM walscale_stats WHERE lock_id = 0}),
	't|t|t|t',
	"$name: backends slept on lock 0, for a measured time, and every contended acquisition slept"
);
check_sane($name, 1, 0, $processed, $elapsed_ms, $reset_at);
check_reset_while_idle($name,
	qw(acquisitions first_try contended blocking_waits blocked_ms
	  exclusive_acquisitions));

# 2. conditional attempts, switched on by a reload that a session connected
# before it must see too, but useless with one lock: there is no other lock
# to try, so attempts behave as 0
$name = 'one lock, two attempts';
my $started =
  $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
my $setting_query = q{
SELECT current_setting('walscale.insert_lock_attempts') || '|'
       || insert_lock_attempts FROM walscale_settings};
my $old_session = $node->background_psql('postgres');
is($old_session->query_safe($setting_query),
	'0|0', "$name: a session connected before the reload sees attempts 0");
$node->safe_psql('postgres',
	'ALTER SYSTEM SET walscale.insert_lock_attempts = 2');
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');

# the session processes the reload before its next command; poll it for up
# to a minute (within the session's own time limit)
my $deadline = time() + 60;
my $seen;
while (1)
{
	$seen = $old_session->query_safe($setting_query);
	last if $seen eq '2|2' || time() > $deadline;
	usleep(100_000);
}
is($seen, '2|2',
	"$name: the session connected before the reload sees the new attempts, in SHOW and in walscale_settings"
);
$old_session->quit;
is($node->safe_psql('postgres', $setting_query),
	'2|2', "$name: a new session sees them too");
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$started, "$name: without a restart");

($processed, $elapsed_ms, $reset_at) =
  load_until($name, 'blocking_waits > 0');
is( $node->safe_psql(
		'postgres', q{
SELECT blocking_waits > 0, failed_attempts = 0,
       acquisitions - first_try = blocking_waits
FROM walscale_stats WHERE lock_id = 0}),
	't|t|t',
	"$name: no attempt fails on a single lock, every contended acquisition slept"
);
check_sane($name, 1, 2, $processed, $elapsed_ms, $reset_at);

# 3. two locks, two attempts: one conditional attempt (on the preferred
# lock), then a sleep on the other lock, which another backend holds much
# less often than the one just found busy.
$name = 'two locks, two attempts';
restart_with($name, 2, 2);

($processed, $elapsed_ms, $reset_at) =
  load_until($name, 'contended >= 200');
my ($contended, $failed, $slept) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT contended, failed_attempts, blocking_waits FROM $sums");
cmp_ok($contended, '>', 0, "$name: some acquisitions were contended");
is($failed, $contended,
	"$name: each contended acquisition failed exactly one attempt");
# Had the backend slept on the lock it had just found busy (a stride of 0),
# nearly all would have slept.
cmp_ok($contended - $slept, '>=', 0.5 * $contended,
	"$name: most contended acquisitions got the other lock without sleeping ($slept of $contended slept)"
);
check_sane($name, 2, 2, $processed, $elapsed_ms, $reset_at);
check_reset_while_idle($name,
	qw(acquisitions first_try contended failed_attempts
	  exclusive_acquisitions));

# 4. four locks, three attempts: after the preferred lock, a conditional
# attempt on another lock, then on a third, then a sleep on the fourth.  The
# other locks are mostly free, so most contended acquisitions succeed at the
# second attempt, on another lock.
$name = 'four locks, three attempts';
restart_with($name, 4, 3);

($processed, $elapsed_ms, $reset_at) =
  load_until($name, 'contended >= 200');
($contended, $failed, $slept) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT contended, failed_attempts, blocking_waits FROM $sums");
cmp_ok($contended, '>', 0, "$name: some acquisitions were contended");
# Had the attempts stayed on the lock just found busy (a stride of 0), nearly
# every contended acquisition would have failed all three.
cmp_ok($failed, '<', 2 * $contended,
	"$name: contended acquisitions failed fewer than 2 attempts on average ($failed failed attempts, $contended contended, $slept slept)"
);
cmp_ok($contended - $slept, '>=', 0.5 * $contended,
	"$name: most contended acquisitions got another lock without sleeping");
check_sane($name, 4, 3, $processed, $elapsed_ms, $reset_at);

# 5. eight locks, no attempts, as PostgreSQL does it
$name = 'eight locks, no attempts';
restart_with($name, 8, 0);
is($node->safe_psql('postgres', 'SELECT count(*) FROM walscale_stats'),
	'8', "$name: eight rows");

($processed, $elapsed_ms, $reset_at) = load_until($name, 'true');
check_sane($name, 8, 0, $processed, $elapsed_ms, $reset_at);
cmp_ok(
	$node->safe_psql(
		'postgres',
		'SELECT count(*) FROM walscale_stats WHERE acquisitions > 0'),
	'>', 1,
	"$name: the clients spread over more than one lock");

my $log = slurp_file($node->logfile);
# (a restart may end a session whose client has just left)
unlike(
	$log,
	qr/\b(?:PANIC:|FATAL:  (?!terminating connection due to administrator command))/,
	'no PANIC or FATAL in the server log');

$node->stop;

done_testing();
