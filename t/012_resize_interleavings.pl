
# Copyright (c) 2026, walscale developers

# More interleavings of a change in the number of active WAL insertion locks
# with insertions, flushes and the checkpointer, each made deterministic by
# injection points (t/007 has the first five).  Each case is the situation
# of one bug that a plausible edit of the core patch would plant, and that
# t/007 and the storm of t/106 do not reach (mutations 58, 59, 81, 82, 83,
# 85):
#
# (f) A backend asleep in the acquisition of its preferred lock when a
#     lowering makes that lock inactive: woken with the lock, it must let it
#     go and insert on an active one, where flushers look.
# (g) A conditional attempt (insert_lock_attempts > 0) that lands on a lock
#     a lowering made inactive, by a backend that has not seen the lowering:
#     it must let that lock go too.
# (h) A lowering, then a raise: an insertion on a lock active again must be
#     seen by a commit past it, so the lowering must have left that lock's
#     position marker cleared.
# (i) After a raise, activity only on a lock above the old number: the
#     archive_timeout switch and the timed checkpoint must see it.
# (j) A raise between a flusher's entry and its read of the insert position:
#     the number and the position must be read together.
# (k) The stride of the conditional attempts after a change of the number:
#     it must be drawn again, coprime to the new number, or a hop may come
#     back to the lock it left (mutation 85).

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleInjection;

my ($node, $mon) = race_cluster('resize_interleavings', 120);
prepare_worker_waits($node, $mon);

my $one_record = one_record_sql();
my $reserved_point = 'walscale-wal-insert-reserved';
my $resize_point = 'walscale-resize-all-locks-held';

# Make session $s stop at $point the next time it gets there, without
# starting anything yet.
sub arm_point
{
	my ($s, $point) = @_;
	$s->query_safe(
		qq{SELECT injection_points_set_local();
		   SELECT injection_points_attach('$point', 'wait');
		   SELECT injection_points_load('$point')});
	return;
}

# Reload with $locks and wait until the worker pauses at $resize_point,
# holding all the locks active before, the number not changed yet.
sub pause_resize_to
{
	my ($locks, $attempts) = @_;
	$mon->query_safe("SELECT injection_points_attach('$resize_point', 'wait')");
	write_case_conf($node, $locks, $attempts // 0);
	$mon->query_safe('SELECT pg_reload_conf()');
	wait_for_event_through($mon, 'walscale', $resize_point);
	return;
}

sub rows_in_t
{
	return $node->safe_psql('postgres', 'SELECT count(*) FROM t');
}

# The segment that insertions go to.
sub current_segment
{
	return $node->safe_psql('postgres',
		'SELECT pg_walfile_name(pg_current_wal_insert_lsn())');
}

# (f) asleep on the preferred lock when a lowering makes it inactive
{
	my $q = session_preferring($node, 12, 16);
	my $q_pid = backend_pid($q);
	my $c = session_preferring($node, 13, 16);
	my $c_pid = backend_pid($c);
	$q->query_safe($one_record);    # on lock 12 of 16
	arm_point($q, $reserved_point);

	# the resizer holds all 16 locks; $q sleeps in the queue of lock 12
	pause_resize_to(4);
	start_in($node, $q, $one_record, $mon);
	is(outcome($node, $q_pid, $mon),
		'waits', '(f) a backend sleeps on its preferred lock 12 of 16, held by a lowering');

	# the lowering completes and lets lock 12 go to it: $q must let it go
	# and insert on lock 12 % 4, where it pauses
	release_point($node, $resize_point, $mon);
	wait_for_event_through($mon, 'client backend', $reserved_point);
	is($mon->query_safe('SELECT insert_locks FROM walscale_settings'),
		'4', '(f) the lowering to 4 is done');

	# $c prefers lock 1 of 4
	start_in($node, $c, "INSERT INTO t VALUES (1, 'committer');", $mon);
	is(outcome($node, $c_pid, $mon), 'waits',
		'(f) a commit past the insertion of the backend woken on lock 12 waits for it: it moved to an active lock'
	);

	release_point($node, $reserved_point, $mon);
	$q->query_safe('SELECT 1');
	$c->query_safe('SELECT 1');
	is(rows_in_t(), '1', '(f) the commit is there');
	$node->safe_psql('postgres', 'TRUNCATE t');
	$q->quit;
	$c->quit;
}

# (g) a conditional attempt on a lock made inactive by a lowering the
#     backend has not seen: from 16 locks to 1, where every hop from lock 0
#     lands on an inactive lock
resize_to($node, 16, 2);
{
	my $b = session_preferring($node, 0, 16);
	my $b_pid = backend_pid($b);
	my $p = session_preferring($node, 0, 16);
	$b->query_safe($one_record);    # $b has seen 16 locks
	resize_to($node, 1, 2);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	# $p holds lock 0, the only active one; $b finds it busy and hops
	pause_at($node, $p, $reserved_point, $one_record, $mon);
	start_in($node, $b, $one_record, $mon);
	is(outcome($node, $b_pid, $mon), 'waits',
		'(g) with one lock active and held, an insertion that hopped to an inactive lock waits for lock 0'
	);
	is( $mon->query_safe(
			'SELECT count(*) FROM walscale_stats WHERE lock_id > 0 AND acquisitions > 0'),
		'0',
		'(g) no inactive lock counts an acquisition');

	release_point($node, $reserved_point, $mon);
	$p->query_safe('SELECT 1');
	$b->query_safe('SELECT 1');
	cmp_ok(acquisitions_on($node, 0), '>=', 2,
		'(g) both insertions were on lock 0');
	$p->quit;
	$b->quit;
}

# (h) a lowering, a raise, and an insertion on a lock active again.  The
#     lock must see no other insertion in between, which would clear its
#     marker whatever the lowering left: the sessions are opened first, the
#     resizes asked for through $mon (a new session may prune a catalog page
#     and write WAL), the injection point armed before the lowering, and the
#     acquisitions counted since the lowering.  A process that does insert
#     on the lock meanwhile (the background writer's snapshot of running
#     transactions, on its own lock) spoils the try, and the next lock is
#     tried.
sub mon_resize_to
{
	my ($locks) = @_;
	write_case_conf($node, $locks, 0);
	$mon->query_safe('SELECT pg_reload_conf()');
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return
		  if $mon->query_safe('SELECT insert_locks FROM walscale_settings') eq
		  $locks;
		usleep(100_000);
	}
	die "the number of insertion locks did not become $locks";
}

resize_to($node, 16);
{
	my $clean;
	for my $lockno (12, 10, 6, 9)
	{
		my $r = session_preferring($node, $lockno, 16);
		my $c = session_preferring($node, ($lockno + 1) % 16, 16);
		my $c_pid = backend_pid($c);
		# the statement once, and the point armed, before the lowering: the
		# first call of a function may prune a catalog page
		$r->query_safe($one_record);
		arm_point($r, $reserved_point);
		mon_resize_to(4);
		$mon->query_safe('SELECT walscale_reset()');
		mon_resize_to(16);

		start_in($node, $r, $one_record, $mon);
		wait_for_event_through($mon, 'client backend', $reserved_point);
		my $acquisitions = $mon->query_safe(
			"SELECT acquisitions FROM walscale_stats WHERE lock_id = $lockno");
		$clean = $acquisitions eq '1';
		if ($clean)
		{
			start_in($node, $c, "INSERT INTO t VALUES (2, 'committer');", $mon);
			is(outcome($node, $c_pid, $mon), 'waits',
				"(h) a commit past an insertion on lock $lockno, active again, waits for it");
		}
		else
		{
			note("(h) lock $lockno saw $acquisitions acquisitions since the lowering, not 1; next lock");
		}
		release_point($node, $reserved_point, $mon);
		$r->query_safe('SELECT 1');
		$c->query_safe('SELECT 1');
		$r->quit;
		$c->quit;
		last if $clean;
	}
	ok($clean, '(h) one of the locks tried saw no other insertion after the lowering');
	cmp_ok(rows_in_t(), '<=', 1, '(h) the commit is there');
	$node->safe_psql('postgres', 'TRUNCATE t');
}

# (i) after a raise, activity only on a lock above the old number, for the
#     checkpointer, whose last insertion was at 1 lock
{
	my $a = session_preferring($node, 12, 16);
	my $insert_on_12 = sub {
		my ($id) = @_;
		$node->safe_psql('postgres', 'SELECT walscale_reset()');
		$a->query_safe("INSERT INTO t VALUES ($id, 'on lock 12')");
		cmp_ok(acquisitions_on($node, 12), '>=', 2,
			"(i) row $id and its commit are inserted on lock 12");
	};

	# archive_timeout: nothing important since the last switch, so no switch
	# comes by itself; then a row on lock 12 after a raise from 1
	resize_to($node, 1);
	$node->safe_psql('postgres', 'CHECKPOINT');
	$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
	my $segment = current_segment();
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET archive_timeout = '1s'; SELECT pg_reload_conf()");
	sleep 3;
	is(current_segment(), $segment,
		'(i) idle, archive_timeout switches no segment');
	resize_to($node, 16);
	$insert_on_12->(3);
	ok( $node->poll_query_until(
			'postgres',
			"SELECT pg_walfile_name(pg_current_wal_insert_lsn()) <> '$segment'"),
		'(i) archive_timeout switches the segment for a row inserted on lock 12 only');
	$node->safe_psql('postgres',
		"ALTER SYSTEM RESET archive_timeout; SELECT pg_reload_conf()");

	# the timed checkpoint, after one at 1 lock
	resize_to($node, 1);
	$node->safe_psql('postgres', 'CHECKPOINT');
	resize_to($node, 16);
	$insert_on_12->(4);
	my $timed = $node->safe_psql('postgres',
		'SELECT num_timed FROM pg_stat_checkpointer');
	my $log_offset = -s $node->logfile;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET checkpoint_timeout = '30s'; SELECT pg_reload_conf()");
	ok( $node->poll_query_until(
			'postgres', "SELECT num_timed > $timed FROM pg_stat_checkpointer"),
		'(i) a timed checkpoint comes');
	ok( $node->log_contains(qr/LOG:  checkpoint starting: time/, $log_offset),
		'(i) it is done, not skipped: the row on lock 12 counts as activity');
	$node->safe_psql('postgres',
		"ALTER SYSTEM RESET checkpoint_timeout; SELECT pg_reload_conf()");
	$node->safe_psql('postgres', 'TRUNCATE t');
	$a->quit;
}

# (j) a raise while a flusher is between its entry and its read of the
#     insert position: it must look at the new locks
resize_to($node, 4);
{
	my $f = session_preferring($node, 13, 16);    # lock 1 of 4
	my $f_pid = backend_pid($f);
	my $r = session_preferring($node, 12, 16);

	# $f's commit pauses in WaitXLogInsertionsToFinish(), before it reads
	# the number of locks and the position
	arm_point($f, 'walscale-flush-before-position');
	start_in($node, $f, "INSERT INTO t VALUES (5, 'flusher');", $mon);
	wait_for_event_through($mon, 'client backend',
		'walscale-flush-before-position');

	# the raise, then an insertion on lock 12 that reserves WAL and pauses
	resize_to($node, 16);
	pause_at($node, $r, $reserved_point, $one_record, $mon);

	release_point($node, 'walscale-flush-before-position', $mon);
	is(outcome($node, $f_pid, $mon), 'waits',
		'(j) the flush, past the insertion on lock 12 reserved after its entry, waits for it'
	);

	release_point($node, $reserved_point, $mon);
	$r->query_safe('SELECT 1');
	$f->query_safe('SELECT 1');
	is(rows_in_t(), '1', '(j) the commit is there');
	$r->quit;
	$f->quit;
}

# (k) Backends that drew their stride among 3 locks (1 or 2, at random),
#     then insert with 2 locks active and their preferred lock 0 held: the
#     one attempt left must go to lock 1.  A stride kept from 3 locks would
#     be 2 for about half of them, and (0 + 2) % 2 sends the attempt back to
#     lock 0, to sleep there.  With 10 backends, a stride kept survives this
#     case only if all of them drew 1: one time in 1024.  Each backend
#     prefers lock 0 of 3 and of 2: its ProcNumber is a multiple of 6, of
#     which max_connections = 120 leaves 20.
resize_to($node, 3, 2);
{
	my $k = 10;
	my @b = map { session_preferring($node, 0, 6, 150) } 1 .. $k;
	my $p = session_preferring($node, 0, 6, 150);

	# among 3 locks, lock 0 held: each backend hops, and draws its stride
	pause_at($node, $p, $reserved_point, $one_record, $mon);
	my @first = map {
		my $pid = backend_pid($_);
		start_in($node, $_, $one_record, $mon);
		outcome($node, $pid, $mon);
	} @b;
	is(scalar(grep { $_ eq 'done' } @first),
		$k, "(k) with lock 0 of 3 held, each of $k backends hops to another lock");
	release_point($node, $reserved_point, $mon);
	$p->query_safe('SELECT 1');
	$_->query_safe('SELECT 1') for @b;

	# 2 locks, lock 0 held again
	resize_to($node, 2, 2);
	pause_at($node, $p, $reserved_point, $one_record, $mon);
	my @then = map {
		my $pid = backend_pid($_);
		start_in($node, $_, $one_record, $mon);
		outcome($node, $pid, $mon);
	} @b;
	is(scalar(grep { $_ eq 'done' } @then),
		$k,
		"(k) among 2 locks, lock 0 held, each of the $k backends hops to lock 1 instead of sleeping"
	);
	release_point($node, $reserved_point, $mon);
	$p->query_safe('SELECT 1');
	$_->query_safe('SELECT 1') for @b;
	$_->quit for @b, $p;
}

unlike(
	slurp_file($node->logfile),
	qr/\bPANIC:|terminated by signal/,
	'no server process crashed');

$node->stop;
done_testing();
