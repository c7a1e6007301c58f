
# Copyright (c) 2026, walscale developers

# Auto mode: walscale.insert_locks = -1 lets walscale's background worker
# choose the number of WAL insertion locks from the contention it measures.
#
# (a) Auto mode is the default: a server whose configuration does not set
#     walscale.insert_locks starts from the number derived from the CPU
#     count, and says so.
# (b) From 1 lock under 32 clients of WAL-heavy load it grows, by doublings
#     that each window's figures justify, within a bounded time, and then
#     stops growing: blocking waits fell below its threshold (or it reached
#     its maximum).
# (c) Under 1 client it shrinks, for unused locks, and stays small; under 2
#     clients from 1 lock it stays small.
# (d) Under steady load it makes a bounded number of changes and does not
#     oscillate (WALSCALE_AUTO_STEADY_SECONDS, default 60; 300 for the
#     five minutes of the issue).
# (e) walscale's worker terminated in auto mode: the postmaster starts it
#     again, and it goes on from the number in effect, saying why.
# (f) A kill -9 under the ledger clients of t/106 loses no acknowledged
#     commit, and auto mode starts again with the server.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleStorm;

my $interval = 2;    # walscale.auto_interval, seconds
my $steady_seconds = $ENV{WALSCALE_AUTO_STEADY_SECONDS} // 60;

# the controller's thresholds (walscale.h, walscale_auto.c)
my $grow_waits = 2;
my $grow_blocked_ms = 200;
my $shrink_waits = 0.2;

my $node = PostgreSQL::Test::Cluster->new('auto');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
walscale.auto_interval = ${interval}s
include = 'walscale_case.conf'
max_connections = 60
log_statement = none
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '1GB'
restart_after_crash = on
});
write_case_conf($node, undef, 0);    # walscale.insert_locks: the default
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');

my $script = $node->basedir . '/small_records.sql';
append_to_file($script,
	"SELECT count(pg_logical_emit_message(false, 'walscale', 'small record '"
	  . " || i)) FROM generate_series(1, 20) AS i;\n");

sub nextpow2
{
	my ($n) = @_;
	my $p = 1;
	$p *= 2 while $p < $n;
	return $p;
}

# (a) the start, from the CPU count
my ($start_locks, $cpus, $min, $max) = slurp_file($node->logfile) =~
  /walscale: auto mode on with (\d+) WAL insertion locks \((\d+) CPUs: between (\d+) and (\d+)\)/;
ok(defined $start_locks, 'auto mode says at start how many locks and CPUs');
$max //= 0;
is($max, (sort { $a <=> $b } (8 * $cpus <= 8 ? 8 : nextpow2(8 * $cpus), 1024))[0],
	"the maximum is 8 locks per CPU ($cpus CPUs), a power of two, at least 8");
is($start_locks, (sort { $a <=> $b } ($cpus <= 8 ? 8 : nextpow2($cpus)), $max)[0],
	'the start is a lock per CPU, a power of two, at least 8');
is($node->safe_psql('postgres',
		'SELECT insert_locks || \' \' || insert_locks_configured || \' \' || insert_locks_mode FROM walscale_settings'),
	"$start_locks -1 auto",
	'walscale_settings shows auto mode, the default, and the start number in effect');
is($node->safe_psql('postgres',
		q{SELECT boot_val || ' ' || source FROM pg_settings WHERE name = 'walscale.insert_locks'}),
	'-1 default', 'walscale.insert_locks is -1 by default');
is($node->safe_psql('postgres',
		q{SELECT from_locks || ' ' || to_locks || ' ' || reason FROM walscale_auto_decisions}),
	"$start_locks $start_locks auto mode on at server start, $cpus CPUs",
	'walscale_auto_decisions records the start');

# The server's clock now, to pick the decisions made after it.
sub server_now
{
	return $node->safe_psql('postgres', 'SELECT clock_timestamp()');
}

# Set a fixed number and wait until it is in effect, then -1 and wait for
# auto mode to take over from it.  Returns the time auto mode started.
sub restart_auto_from
{
	my ($locks) = @_;
	write_case_conf($node, $locks, 0);
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		"SELECT insert_locks = $locks AND insert_locks_mode = 'fixed' FROM walscale_settings")
	  or die "the number of locks did not become $locks";
	my $t0 = server_now();
	write_case_conf($node, -1, 0);
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM walscale_auto_decisions WHERE decided_at > '$t0' AND reason LIKE 'auto mode on at reload%'")
	  or die 'auto mode did not start at the reload';
	return $t0;
}

# The decisions after $since that changed the number: a list of hashes.
sub changes_since
{
	my ($since) = @_;
	my $out = $node->safe_psql(
		'postgres', qq{
SELECT extract(epoch FROM decided_at), from_locks, to_locks, reason,
       blocking_waits_per_1000, blocked_ms_per_s, locks_used, acquisitions
FROM walscale_auto_decisions
WHERE decided_at > '$since' AND from_locks <> to_locks
ORDER BY decided_at});
	my @changes;
	for my $line (split /\n/, $out)
	{
		my %d;
		@d{qw(at from to reason waits blocked used acquisitions)} =
		  split /\|/, $line;
		push @changes, \%d;
	}
	return @changes;
}

sub describe
{
	return join('; ',
		map {
			sprintf('%d->%d (%s: %.1f/1000, %.0f ms/s, %d used)',
				$_->{from}, $_->{to}, $_->{reason}, $_->{waits},
				$_->{blocked}, $_->{used})
		} @_);
}

sub in_effect
{
	return $node->safe_psql('postgres', 'SELECT insert_locks FROM walscale_settings');
}

# (b) from 1 lock, 32 clients
{
	my $since = restart_auto_from(1);
	my $load_start = time;
	my $run = start_pgbench($node, 32, 30, '--file' => $script);
	finish_pgbench($run, '32 clients');
	my $load_end = time;
	my $server_end = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
	my @changes = changes_since($since);
	note('32 clients from 1 lock: ' . describe(@changes));

	# Growing stops once waits are below the thresholds: no change in the
	# last three windows of the load.  A load that sits on a threshold may
	# tip over it late, so a run that ended with a recent grow gets more of
	# the same load, in rounds of ten windows, until a round ends quiet (at
	# most four rounds: each grow halves the clients per lock).
	my $final = in_effect();
	my $settled = !@changes || $changes[-1]->{at} <= $server_end - 3 * $interval;
	my $rounds = 0;
	while (!$settled && $final < $max && $rounds < 4)
	{
		$rounds++;
		my $round_since = server_now();
		finish_pgbench(start_pgbench($node, 32, 10 * $interval, '--file' => $script),
			"32 clients, round $rounds");
		my $round_end = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
		my @more = changes_since($round_since);
		note("32 clients, round $rounds of more load: " . describe(@more));
		push @changes, @more;
		$final = in_effect();
		$settled = !@more || $more[-1]->{at} <= $round_end - 3 * $interval;
	}

	my @grows = grep { $_->{to} > $_->{from} } @changes;
	cmp_ok(scalar @grows, '>=', 1, '32 clients: auto mode grew from 1 lock');
	is(scalar(@grows), scalar(@changes), '32 clients: every change was a grow');
	ok(@grows && $grows[0]->{at} - ($server_end - ($load_end - $load_start)) <= 4 * $interval + 5,
		'32 clients: the first grow came within four windows of the load');
	is(scalar(grep { $_->{to} != ($_->{from} * 2 < $max ? $_->{from} * 2 : $max) } @grows),
		0, '32 clients: each grow doubled the number, up to the maximum');
	is(scalar(grep {
				!(($_->{waits} >= $grow_waits || $_->{blocked} >= $grow_blocked_ms)
					&& $_->{used} * 2 >= $_->{from}
					&& $_->{reason} eq 'contention')
			} @grows),
		0,
		"32 clients: each grow had $grow_waits or more blocking waits per 1000 acquisitions or $grow_blocked_ms ms blocked per second, with most locks used");
	ok($settled || $final == $max,
		"32 clients: growth stopped at $final locks (below the thresholds) at least three windows before the load ended ($rounds more rounds of load), or reached the maximum $max");
	cmp_ok($final, '<=', $max, '32 clients: never above the maximum');

	# (c) then 1 client: the unused locks go, and the number stays small
	my $since1 = server_now();
	finish_pgbench(start_pgbench($node, 1, 6 * $interval + 6, '--file' => $script),
		'1 client');
	my @shrinks = changes_since($since1);
	note('1 client after 32: ' . describe(@shrinks));
	if ($final > 1)
	{
		cmp_ok(scalar @shrinks, '>=', 1, '1 client: auto mode shrank');
		is(scalar(grep {
					!($_->{to} < $_->{from} && $_->{reason} eq 'locks unused'
						&& $_->{waits} < $shrink_waits && $_->{used} * 2 <= $_->{from})
				} @shrinks),
			0,
			"1 client: each change was a shrink, with fewer than $shrink_waits blocking waits per 1000 acquisitions and at most half the locks used");
	}
	cmp_ok(in_effect(), '<', $final > 1 ? $final : 2, '1 client: fewer locks than under 32 clients');
}

# (c) from 1 lock, 1 and then 2 clients: it stays small
{
	my $since = restart_auto_from(1);
	finish_pgbench(start_pgbench($node, 1, 4 * $interval + 2, '--file' => $script),
		'1 client from 1 lock');
	cmp_ok(in_effect(), '<=', 2, '1 client from 1 lock: at most 2 locks');
	finish_pgbench(start_pgbench($node, 2, 4 * $interval + 2, '--file' => $script),
		'2 clients from 1 lock');
	note('1 then 2 clients from 1 lock: ' . describe(changes_since($since)));
	cmp_ok(in_effect(), '<=', 4, '2 clients from 1 lock: at most 4 locks');
}

# (d) steady load: few changes, and no oscillation
{
	my $since = restart_auto_from(1);
	my $run = start_pgbench($node, 8, $steady_seconds, '--file' => $script);
	finish_pgbench($run, "8 clients for $steady_seconds s");
	my @changes = changes_since($since);
	note("8 clients for $steady_seconds s from 1 lock: " . describe(@changes));
	my $limit = 1;
	$limit++ while (2**($limit - 1) < $max);    # log2(max) + 1 grows from 1
	cmp_ok(scalar @changes, '<=', $limit + 1,
		"steady load: at most " . ($limit + 1) . " changes in $steady_seconds s");
	my $reversals = 0;
	for my $i (1 .. $#changes)
	{
		my $up_before = $changes[ $i - 1 ]->{to} > $changes[ $i - 1 ]->{from};
		my $up_now = $changes[$i]->{to} > $changes[$i]->{from};
		$reversals++ if $up_before != $up_now;
	}
	cmp_ok($reversals, '<=', 1, 'steady load: the direction changed at most once');
	my $late = grep { $_->{at} > $changes[0]->{at} + $steady_seconds / 2 } @changes;
	cmp_ok($late, '<=', 1, 'steady load: at most one change in the second half');
}

# (e) the worker terminated: started again, it keeps the number in effect
#     (2, not the start number) and records why auto mode began again
{
	my $since = restart_auto_from(2);
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walscale'");
	ok($pid =~ /^\d+$/, 'worker restart: one walscale worker runs');
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM walscale_auto_decisions WHERE decided_at > '$since'"
			  . " AND reason LIKE 'auto mode on after its worker restarted, % CPUs'"),
		'worker restart: the new worker says auto mode began again after a restart');
	is( $node->safe_psql(
			'postgres',
			"SELECT from_locks || ' ' || to_locks FROM walscale_auto_decisions"
			  . " WHERE decided_at > '$since' AND reason LIKE 'auto mode on after%'"),
		'2 2',
		'worker restart: auto mode goes on from the number in effect');
	is(in_effect(), 2, 'worker restart: 2 locks still in effect');
}

# (f) a crash under auto mode, with the ledger clients of t/106
{
	my $since = restart_auto_from(1);
	my $ledger = ledger_start($node, clients => 16, rows => 5);
	ok(ledger_wait_for_progress($ledger, 40), 'crash: the ledger clients commit');
	# a few windows for auto mode to act under the ledger clients
	for (1 .. 5 * $interval)
	{
		last if $node->safe_psql('postgres',
			"SELECT count(*) > 0 FROM walscale_auto_decisions WHERE decided_at > '$since' AND to_locks > from_locks"
		) eq 't';
		sleep 1;
	}
	my $grown = in_effect();
	note("crash: $grown locks in effect at the kill");
	ledger_pause($ledger);
	crash_postmaster($node, 'crash: postmaster kill under auto mode');
	my $offset = -s $node->logfile;
	$node->start;
	ok(server_up($node), 'crash: the server is up again');
	like(slurp_file($node->logfile, $offset),
		qr/walscale: auto mode on with $start_locks WAL insertion locks/,
		'crash: auto mode starts again, from the start number');
	ledger_verify($ledger, 'crash', 'false');
	ledger_resume($ledger);
	ok(ledger_wait_for_progress($ledger, 40), 'crash: the ledger clients commit after the restart');
	ledger_stop($ledger);
	my @errors = ledger_client_errors($ledger);
	is(scalar @errors, 0, 'crash: no client statement failed (but for lost connections)')
	  or diag(join "\n", @errors[ 0 .. ($#errors < 9 ? $#errors : 9) ]);
	my $commits = ledger_verify($ledger, 'crash, at the end', 'true');
	cmp_ok($commits, '>', 80, "crash: $commits acknowledged commits were checked");
}

unlike(slurp_file($node->logfile),
	qr/TRAP:|too many LWLocks taken|was terminated by exception|(?:ERROR|WARNING|FATAL):\s+walscale/,
	'no failed assertion, LWLock error or walscale error in the log');

$node->stop;
done_testing();
