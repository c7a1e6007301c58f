
# Copyright (c) 2026, walscale developers

# Changing the number of active WAL insertion locks at run time (a reload of
# walscale.insert_locks, applied by walscale's background worker), with the
# races made deterministic by injection points.  One case per invariant of
# SetNumWALInsertLocks() in the core patch:
#
# (a) Invariant 1, a lowering and an insertion in progress: with an insertion
#     paused on lock 12 of 16, a resize to 4 waits for it, and meanwhile a
#     commit past the insertion still waits for it to finish.
# (b) Invariant 1 and 4, a backend whose preferred lock went inactive: it
#     lets the lock go before reserving WAL and inserts on an active one, so
#     that a commit past its insertion still waits for it.
# (c) Invariant 2, a raise while an all-lock acquisition waits: pg_switch_wal
#     starts while the resizer holds all 4 locks, before it raises the number
#     to 16; once it has them it must hold the new locks too, so that an
#     insertion on lock 12 waits.
# (d) Invariant 4, a raise: a backend that inserted on lock 0 of 4 moves to
#     its ProcNumber modulo 16.
# (e) Invariant 3, GetLastImportantRecPtr() after a lowering: a row inserted
#     on lock 12 after a checkpoint, with the number lowered to 1 since, is
#     still seen as activity, so the next timed checkpoint is not skipped.
# (f) GetLastImportantRecPtr() takes no insertion lock: while a lowering
#     from 16 to 1 holds every lock, it returns at once, and with no less
#     than before; once the lowering is done, lock 0 carries what lock 12
#     saw.

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

my ($node, $mon) = race_cluster('resize_races', 60);
prepare_worker_waits($node, $mon);

my $one_record = one_record_sql();
my $hundred_records =
  q{SELECT count(pg_logical_emit_message(false, 'walscale', 'r' || i)) FROM generate_series(1, 100) i};
my $resize_point = 'walscale-resize-all-locks-held';

is($mon->query_safe(q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walscale'}),
	'1', "walscale's background worker runs");

# (a) a lowering waits for an insertion in progress on a lock it removes
{
	my $p = session_preferring($node, 12, 16);
	my $c = session_preferring($node, 13, 16);
	my $c_pid = backend_pid($c);
	my $log_offset = -s $node->logfile;

	pause_at($node, $p, 'walscale-wal-insert-reserved', $one_record, $mon);

	write_case_conf($node, 4, 0);
	$mon->query_safe('SELECT pg_reload_conf()');
	# until the resizer waits for a lock, or (wrongly) is done
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		last
		  if $mon->query_safe(
			q{SELECT (SELECT insert_locks FROM walscale_settings) <> 16
			      OR EXISTS (SELECT FROM pg_stat_activity
			                 WHERE backend_type = 'walscale' AND wait_event = 'WALInsert')}
		  ) eq 't';
		usleep(100_000);
	}
	is($mon->query_safe('SELECT insert_locks FROM walscale_settings'),
		'16', '(a) a resize to 4 waits for the insertion paused on lock 12');

	start_in($node, $c, "INSERT INTO t VALUES (1, 'committer');", $mon);
	is(outcome($node, $c_pid, $mon),
		'waits', '(a) a commit past the paused insertion waits for it');

	release_point($node, 'walscale-wal-insert-reserved', $mon);
	$p->query_safe('SELECT 1');
	$c->query_safe('SELECT 1');
	ok( $node->poll_query_until(
			'postgres', 'SELECT insert_locks FROM walscale_settings', '4'),
		'(a) the resize completes once the insertion is done');
	is($node->safe_psql('postgres', q{SELECT string_agg(who, ',') FROM t}),
		'committer', '(a) the commit is there');
	ok( $node->wait_for_log(
			qr/LOG:  walscale: WAL insertion locks resized from 16 to 4; all locks held for [0-9.]+ ms after waiting [0-9.]+ ms for them/,
			$log_offset),
		'(a) the resize is logged');
	cmp_ok(
		$node->safe_psql(
			'postgres',
			q{SELECT last_resize_held_ms FROM walscale_settings WHERE last_resize_from = 16}),
		'>=', 0, '(a) walscale_settings shows the last resize');
	$node->safe_psql('postgres', 'TRUNCATE t');
	$p->quit;
	$c->quit;
}

# (b) a backend whose preferred lock went inactive while it was idle
resize_to($node, 16);
{
	my $p = session_preferring($node, 12, 16);
	my $c = session_preferring($node, 13, 16);
	my $c_pid = backend_pid($c);
	$p->query_safe($one_record);

	$node->safe_psql('postgres', 'SELECT walscale_reset()');
	resize_to($node, 4);
	my $on_0 = acquisitions_on($node, 0);
	pause_at($node, $p, 'walscale-wal-insert-reserved', $one_record, $mon);

	# nothing else can insert on an inactive lock; other processes may
	# insert on lock 0 as well
	is( $mon->query_safe(
			'SELECT acquisitions, active FROM walscale_stats WHERE lock_id = 12'),
		'0|f',
		'(b) the backend that preferred lock 12 of 16 does not insert on it, now inactive'
	);
	cmp_ok(acquisitions_on($node, 0), '>', $on_0,
		'(b) it inserts on lock 12 % 4 instead');
	is( $mon->query_safe(
			'SELECT count(*), bool_or(active) FROM walscale_stats WHERE lock_id >= 4'),
		'12|f',
		'(b) the 12 locks made inactive since the reset keep their rows');

	start_in($node, $c, "INSERT INTO t VALUES (2, 'committer');", $mon);
	is(outcome($node, $c_pid, $mon),
		'waits', '(b) a commit past its insertion waits for it');

	release_point($node, 'walscale-wal-insert-reserved');
	$p->query_safe('SELECT 1');
	$c->query_safe('SELECT 1');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM t'),
		'1', '(b) the commit is there');
	$node->safe_psql('postgres', 'TRUNCATE t');
	$p->quit;
	$c->quit;
}

# (c) and (d): a raise from 4 to 16
resize_to($node, 4);
{
	# sessions made before the raise: $h has not inserted yet, $m has, on
	# lock 0 of 4; both prefer lock 12 of 16
	my $h = session_preferring($node, 12, 16);
	my $h_pid = backend_pid($h);
	my $m = session_preferring($node, 12, 16);
	my $s = $node->background_psql('postgres', on_error_stop => 1);
	my $s_pid = backend_pid($s);
	my $on_0 = acquisitions_on($node, 0);
	$m->query_safe($hundred_records);
	cmp_ok(acquisitions_on($node, 0) - $on_0,
		'>=', 100, '(d) before the raise, a backend inserts on lock 0 of 4');

	$s->query_safe(
		q{SELECT injection_points_set_local();
		  SELECT injection_points_attach('walscale-all-locks-but-last-held', 'wait');
		  SELECT injection_points_load('walscale-all-locks-but-last-held')});

	# the resizer pauses holding all 4 locks, the number not raised yet
	$mon->query_safe("SELECT injection_points_attach('$resize_point', 'wait')");
	write_case_conf($node, 16, 0);
	$mon->query_safe('SELECT pg_reload_conf()');
	wait_for_event_through($mon, 'walscale', $resize_point);

	# a WAL switch starts taking all locks, and waits for lock 0
	start_in($node, $s, 'SELECT pg_switch_wal();', $mon);
	is(outcome($node, $s_pid, $mon),
		'waits', '(c) a WAL switch waits for the locks the resizer holds');

	# the raise completes; the switch gets lock 0 and pauses with all the
	# locks but the last one held
	release_point($node, $resize_point, $mon);
	wait_for_event_through($mon, 'client backend',
		'walscale-all-locks-but-last-held');
	is($mon->query_safe('SELECT insert_locks FROM walscale_settings'),
		'16', '(c) the number is raised to 16');

	$h->query_safe('SET synchronous_commit = off');
	start_in($node, $h, "INSERT INTO t VALUES (3, 'new lock');", $mon);
	is(outcome($node, $h_pid, $mon), 'waits',
		'(c) an insertion on lock 12, active since the raise, waits for the WAL switch'
	);

	release_point($node, 'walscale-all-locks-but-last-held', $mon);
	$s->query_safe('SELECT 1');
	$h->query_safe('SELECT 1');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM t'),
		'1', '(c) its row is there');
	cmp_ok(
		$node->safe_psql(
			'postgres',
			'SELECT min(exclusive_acquisitions) FROM walscale_stats WHERE active'),
		'>=', 1, '(c) the switch took each of the 16 locks');

	my $on_12 = acquisitions_on($node, 12);
	$m->query_safe($hundred_records);
	cmp_ok(acquisitions_on($node, 12) - $on_12,
		'>=', 100,
		'(d) after the raise, the backend that inserted on lock 0 of 4 inserts on lock 12 of 16'
	);
	$node->safe_psql('postgres', 'TRUNCATE t');
	$h->quit;
	$m->quit;
	$s->quit;
}

# (e) GetLastImportantRecPtr() keeps what lock 12 saw after a lowering
{
	resize_to($node, 1);
	$node->safe_psql('postgres', 'CHECKPOINT');
	resize_to($node, 16);
	my $a = session_preferring($node, 12, 16);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');
	$a->query_safe("INSERT INTO t VALUES (5, 'important')");
	cmp_ok(acquisitions_on($node, 12), '>=', 1, '(e) a row is inserted on lock 12');
	$a->quit;
	resize_to($node, 1);

	# a checkpoint that is not skipped logs its start (log_checkpoints is on)
	# before its count of timed checkpoints reaches pg_stat_checkpointer; a
	# skipped one logs nothing
	my $timed = $node->safe_psql('postgres',
		'SELECT num_timed FROM pg_stat_checkpointer');
	my $log_offset = -s $node->logfile;
	$node->safe_psql('postgres',
		"ALTER SYSTEM SET checkpoint_timeout = '30s'; SELECT pg_reload_conf()");
	ok( $node->poll_query_until(
			'postgres', "SELECT num_timed > $timed FROM pg_stat_checkpointer"),
		'(e) a timed checkpoint comes');
	ok( $node->log_contains(qr/LOG:  checkpoint starting: time/, $log_offset),
		'(e) it is done, not skipped: the insertion on lock 12 counts as activity');
	$node->safe_psql('postgres',
		"ALTER SYSTEM RESET checkpoint_timeout; SELECT pg_reload_conf()");
}

# (f) GetLastImportantRecPtr() while a resize holds all locks
{
	$node->safe_psql('postgres', 'CREATE EXTENSION walscale_test_core');
	resize_to($node, 16);
	my $a = session_preferring($node, 12, 16);
	$node->safe_psql('postgres', 'SELECT walscale_reset()');
	$a->query_safe("INSERT INTO t VALUES (6, 'important')");
	cmp_ok(acquisitions_on($node, 12), '>=', 1, '(f) a row is inserted on lock 12');
	$a->quit;
	my $before = $node->safe_psql('postgres',
		'SELECT walscale_test_last_important_lsn()');

	$mon->query_safe("SELECT injection_points_attach('$resize_point', 'wait')");
	write_case_conf($node, 1, 0);
	$mon->query_safe('SELECT pg_reload_conf()');
	wait_for_event_through($mon, 'walscale', $resize_point);

	# Taking the locks, it would wait until the resize goes on: an LWLock
	# wait ignores statement_timeout, so the client gives up instead (30 s,
	# for a loaded machine; the call itself takes microseconds).
	my ($during, $stderr, $timed_out);
	my $ret = $node->psql(
		'postgres', 'SELECT walscale_test_last_important_lsn()',
		stdout => \$during,
		stderr => \$stderr,
		timeout => 30,
		timed_out => \$timed_out);
	ok(!$timed_out && defined($ret) && $ret == 0,
		'(f) it returns while the resizer holds every lock')
	  or diag("timed out: " . ($timed_out ? "yes" : "no") . "; " . ($stderr // ""));
	is( ($during // '') eq ''
		? 'no value'
		: $node->safe_psql(
			'postgres', "SELECT '$during'::pg_lsn >= '$before'::pg_lsn"),
		't',
		'(f) with no less than before (' . ($during // '') . ", $before)");

	release_point($node, $resize_point, $mon);
	ok( $node->poll_query_until(
			'postgres', 'SELECT insert_locks FROM walscale_settings', '1'),
		'(f) the lowering to 1 completes');
	is( $node->safe_psql(
			'postgres',
			"SELECT walscale_test_last_important_lsn() >= '$before'::pg_lsn"),
		't',
		'(f) after it, lock 0 carries what lock 12 saw');
}

unlike(
	slurp_file($node->logfile),
	qr/\bPANIC:|terminated by signal/,
	'no server process crashed');

$node->stop;
done_testing();
