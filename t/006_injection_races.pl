
# Copyright (c) 2026, walscale developers

# Races on the WAL insertion path, made deterministic with injection points
# (the server must be built with --enable-injection-points, as make test's
# flavor is):
#
# (a) A backend pauses holding an insertion lock, with WAL reserved for a
#     record (a logical message) but not yet copied.  Another backend commits past it: its flush must sleep
#     until the paused insertion is finished, and count that sleep in
#     flush_waits.  Done with the paused lock at the first and last positions
#     of the eight-lock scan groups and of its tail.
# (b) With conditional attempts, a backend whose preferred lock is busy must
#     take another lock without sleeping.
# (c) While a backend takes all locks (pg_switch_wal), paused with all but
#     the last held, a backend that finds its preferred lock busy must not
#     hop to the last one, which would delay the all-lock holder: it waits in
#     its preferred lock's queue.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $node = PostgreSQL::Test::Cluster->new('injection_races');

# injection_points is preloaded, so that its state is in shared memory when a
# point waits in a critical section, where no memory can be allocated
if (!-e $node->config_data('--pkglibdir') . '/injection_points.so')
{
	if (($ENV{WALSCALE_INJECTION_POINTS} // '') eq 'required')
	{
		BAIL_OUT('this server has no injection points, which make test requires');
	}
	plan skip_all => 'the server is not built with injection points';
}

$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale,injection_points'
autovacuum = off
checkpoint_timeout = 1h
max_connections = 40
log_statement = none
include = 'walscale_case.conf'
});

write_case_conf($node, 2, 0);
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION walscale;
CREATE EXTENSION injection_points;
CREATE TABLE t (id int, who text);
});

# counters of one lock since the last reset, as a hash
sub lock_counters
{
	my ($lockno) = @_;
	my $row = $node->safe_psql(
		'postgres', qq{
SELECT acquisitions, first_try, failed_attempts, blocking_waits, flush_waits
FROM walscale_stats WHERE lock_id = $lockno});
	my %c;
	@c{qw(acquisitions first_try failed_attempts blocking_waits flush_waits)}
	  = split /\|/, $row;
	return \%c;
}

# A session whose preferred insertion lock is $lockno of $nlocks: a fresh
# backend prefers the lock at its ProcNumber modulo the number of locks.
# Sessions opened on the way stay open (so that the next one gets another
# ProcNumber) and are returned to be closed by the caller.
sub session_preferring
{
	my ($lockno, $nlocks, @avoid) = @_;
	my @opened;

	for (1 .. 3 * $nlocks + 3)
	{
		my $s = $node->background_psql('postgres', on_error_stop => 1);
		my $procno = $s->query_safe(
			q{SELECT s FROM pg_stat_get_backend_idset() AS s
			  WHERE pg_stat_get_backend_pid(s) = pg_backend_pid()});
		if ($procno % $nlocks == $lockno)
		{
			$_->quit for @opened;
			return $s;
		}
		push @opened, $s;
	}
	die "no session prefers lock $lockno of $nlocks";
}

sub backend_pid
{
	my ($s) = @_;
	return $s->query_safe('SELECT pg_backend_pid()');
}

# state and wait event of a backend
sub activity_of
{
	my ($pid) = @_;
	return $node->safe_psql('postgres',
		"SELECT state || '/' || coalesce(wait_event, '') FROM pg_stat_activity WHERE pid = $pid"
	);
}

# What backend $pid's statement comes to: 'waits' on the WAL insertion lock
# tranche, or 'done' (the backend is idle again).
sub outcome
{
	my ($pid) = @_;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my $a = activity_of($pid);
		return 'waits' if $a eq 'active/WALInsert';
		return 'done' if $a =~ /^idle/;
		usleep(100_000);
	}
	return "still '" . activity_of($pid) . "'";
}

# Make session $s stop at injection point $point in $sql, and wait until it
# does.  The point is loaded first: it sits in a critical section.
sub pause_at
{
	my ($s, $point, $sql) = @_;
	$s->query_safe(
		qq{SELECT injection_points_set_local();
		   SELECT injection_points_attach('$point', 'wait');
		   SELECT injection_points_load('$point')});
	start_in($s, $sql);
	$node->wait_for_event('client backend', $point);
	return;
}

# Let the backend waiting at injection point $name go on.  The points run
# only in the backend that loaded them (they sit in critical sections, where
# nothing can be loaded), and each test statement passes its point once.
sub release_point
{
	my ($name) = @_;
	$node->safe_psql('postgres',
		"SELECT injection_points_detach('$name'); SELECT injection_points_wakeup('$name')"
	);
	return;
}

# A statement that writes exactly one WAL record, outside any transaction,
# so that a backend paused in it pauses once.
my $one_record =
  q{SELECT pg_logical_emit_message(false, 'walscale', 'paused') IS NOT NULL;};

# Start $sql in session $s without waiting for it to finish.
sub start_in
{
	my ($s, $sql) = @_;
	$s->query_until(qr/started/, "\\echo started\n$sql\n");
	return;
}

sub restart_with
{
	my ($locks, $attempts) = @_;
	write_case_conf($node, $locks, $attempts);
	$node->restart;
	is($node->safe_psql('postgres', 'SELECT count(*) FROM walscale_stats'),
		$locks, "server runs with $locks insertion locks");
	return;
}

# (a) a flush must wait for an insertion paused on lock $paused of $nlocks
sub flush_waits_for_paused_insertion
{
	my ($nlocks, $paused) = @_;
	my $case = "$nlocks locks, insertion paused on lock $paused";

	my $p = session_preferring($paused, $nlocks);
	my $c = session_preferring(($paused + 1) % $nlocks, $nlocks);
	my $c_pid = backend_pid($c);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	pause_at($p, 'walscale-wal-insert-reserved', $one_record);

	start_in($c, "INSERT INTO t VALUES (2, 'committer');");
	is(outcome($c_pid), 'waits',
		"$case: a commit past it waits for it, not returning");
	is(lock_counters($paused)->{flush_waits},
		0, "$case: no flush wait counted while the flusher still sleeps");

	release_point('walscale-wal-insert-reserved');
	$p->query_safe('SELECT 1');
	$c->query_safe('SELECT 1');
	is($node->safe_psql('postgres', q{SELECT string_agg(who, ',') FROM t}),
		'committer', "$case: the commit is there once the insertion finished");
	cmp_ok(lock_counters($paused)->{flush_waits},
		'>=', 1, "$case: the committer's sleep is counted on lock $paused");

	$node->safe_psql('postgres', 'TRUNCATE t');
	$p->quit;
	$c->quit;
	return;
}

# the eight-lock groups of the scan: tail only; one group and a tail of
# one; two whole groups
restart_with(2, 0);
flush_waits_for_paused_insertion(2, 0);
flush_waits_for_paused_insertion(2, 1);
restart_with(9, 0);
flush_waits_for_paused_insertion(9, 7);
flush_waits_for_paused_insertion(9, 8);
restart_with(16, 0);
flush_waits_for_paused_insertion(16, 8);
flush_waits_for_paused_insertion(16, 15);

# (b) with 2 locks and attempts, a backend that finds its preferred lock held
# by a paused insertion takes the other one without sleeping; asynchronous
# commit, so that it does not wait to flush past the paused insertion
restart_with(2, 1);
{
	my $p = session_preferring(0, 2);
	my $h = session_preferring(0, 2);
	my $h_pid = backend_pid($h);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	pause_at($p, 'walscale-wal-insert-reserved', $one_record);

	start_in($h,
		"SET synchronous_commit = off; INSERT INTO t VALUES (2, 'hopper');");
	is(outcome($h_pid), 'done',
		'with attempts, an insertion whose preferred lock is busy completes');
	my $other = lock_counters(1);
	cmp_ok($other->{failed_attempts}, '>=', 1,
		'it tried the busy lock, then took the other one');
	is($other->{blocking_waits}, 0, 'it did not sleep');

	release_point('walscale-wal-insert-reserved');
	$p->query_safe('SELECT 1');
	$h->query_safe('SELECT 1');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM t'),
		1, 'its row is there');
	$node->safe_psql('postgres', 'TRUNCATE t');
	$p->quit;
	$h->quit;
}

# (c) no hopping while all locks are being taken
{
	my $s = session_preferring(1, 2);
	my $h = session_preferring(0, 2);
	my $h_pid = backend_pid($h);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	pause_at($s, 'walscale-all-locks-but-last-held', 'SELECT pg_switch_wal();');

	start_in($h,
		"SET synchronous_commit = off; INSERT INTO t VALUES (1, 'waiter');");
	is(outcome($h_pid), 'waits',
		'while a WAL switch takes all locks, a backend that finds its lock busy waits for it'
	);

	release_point('walscale-all-locks-but-last-held');
	$s->query_safe('SELECT 1');
	$h->query_safe('SELECT 1');
	my $mine = lock_counters(0);
	is($mine->{blocking_waits}, 1, 'the waiter slept on its preferred lock');
	is($mine->{failed_attempts}, 1, 'after one failed attempt, on that lock');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM t'),
		1, 'its row is there');
	$s->quit;
	$h->quit;
}

$node->stop;
done_testing();
