
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
use WalscaleInjection;

# the cluster every injection-point race file uses (WalscaleInjection.pm)
my ($node, $mon) = race_cluster('injection_races', 40, 2);

# counters of one lock since the last reset, as a hash
sub lock_counters
{
	my ($lockno) = @_;
	my $row = $mon->query_safe(
		qq{
SELECT acquisitions, first_try, failed_attempts, blocking_waits, flush_waits
FROM walscale_stats WHERE lock_id = $lockno});
	my %c;
	@c{qw(acquisitions first_try failed_attempts blocking_waits flush_waits)}
	  = split /\|/, $row;
	return \%c;
}

my $one_record = one_record_sql();

sub restart_with
{
	my ($locks, $attempts) = @_;
	write_case_conf($node, $locks, $attempts);
	$mon->quit if $mon;
	$node->restart;
	$mon = $node->background_psql('postgres', on_error_stop => 1);
	lock_counters(0);
	activity_of($node, $$, $mon);
	is($node->safe_psql('postgres', 'SELECT count(*) FROM walscale_stats'),
		$locks, "server runs with $locks insertion locks");
	return;
}

# (a) a flush must wait for an insertion paused on lock $paused of $nlocks
sub flush_waits_for_paused_insertion
{
	my ($nlocks, $paused) = @_;
	my $case = "$nlocks locks, insertion paused on lock $paused";

	my $p = session_preferring($node, $paused, $nlocks);
	my $c = session_preferring($node, ($paused + 1) % $nlocks, $nlocks);
	my $c_pid = backend_pid($c);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	pause_at($node, $p, 'walscale-wal-insert-reserved', $one_record, $mon);

	start_in($node, $c, "INSERT INTO t VALUES (2, 'committer');", $mon);
	is(outcome($node, $c_pid, $mon), 'waits',
		"$case: a commit past it waits for it, not returning");
	is(lock_counters($paused)->{flush_waits},
		0, "$case: no flush wait counted while the flusher still sleeps");

	release_point($node, 'walscale-wal-insert-reserved', $mon);
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
	my $p = session_preferring($node, 0, 2);
	my $h = session_preferring($node, 0, 2);
	my $h_pid = backend_pid($h);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	pause_at($node, $p, 'walscale-wal-insert-reserved', $one_record, $mon);

	$h->query_safe('SET synchronous_commit = off');
	start_in($node, $h, "INSERT INTO t VALUES (2, 'hopper');", $mon);
	is(outcome($node, $h_pid, $mon), 'done',
		'with attempts, an insertion whose preferred lock is busy completes');
	my $other = lock_counters(1);
	cmp_ok($other->{failed_attempts}, '>=', 1,
		'it tried the busy lock, then took the other one');
	is($other->{blocking_waits}, 0, 'it did not sleep');

	release_point($node, 'walscale-wal-insert-reserved', $mon);
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
	my $s = session_preferring($node, 1, 2);
	my $h = session_preferring($node, 0, 2);
	my $h_pid = backend_pid($h);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	pause_at($node, $s, 'walscale-all-locks-but-last-held',
		'SELECT pg_switch_wal();', $mon);

	$h->query_safe('SET synchronous_commit = off');
	start_in($node, $h, "INSERT INTO t VALUES (1, 'waiter');", $mon);
	is(outcome($node, $h_pid, $mon), 'waits',
		'while a WAL switch takes all locks, a backend that finds its lock busy waits for it'
	);

	release_point($node, 'walscale-all-locks-but-last-held', $mon);
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
