
# Copyright (c) 2026, walscale developers

# What the tests that pause backends at injection points share: sessions
# that prefer a given insertion lock, pausing and releasing them, and
# telling whether a statement waits or completes.  They need a server built
# with --enable-injection-points and injection_points preloaded.

package WalscaleInjection;

use strict;
use warnings FATAL => 'all';

use Exporter 'import';
use PostgreSQL::Test::Utils;
use PostgreSQL::Test::Cluster;
use Test::More;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

our @EXPORT = qw(require_injection_points session_preferring backend_pid
  activity_of outcome wait_for_event_through start_in pause_at release_point
  one_record_sql resize_to acquisitions_on race_cluster
  prepare_worker_waits);

# Skip the file on a server without injection points, unless make test,
# which runs on a server with them, says they are required.
sub require_injection_points
{
	my ($node) = @_;
	return if -e $node->config_data('--pkglibdir') . '/injection_points.so';
	BAIL_OUT('this server has no injection points, which make test requires')
	  if ($ENV{WALSCALE_INJECTION_POINTS} // '') eq 'required';
	plan skip_all => 'the server is not built with injection points';
	return;
}

# Let walscale's worker wait at an injection point inside a resize, where
# it holds insertion locks in a critical section.  On PostgreSQL 17 a
# process's first wait at a point attaches injection_points' DSM segment,
# which allocates memory, and the assertion that a critical section
# allocates none would stop the server; 18's injection_points, preloaded,
# keeps its state in the main shared memory instead.  So on 17 the worker
# first waits once where it may, at walscale-worker-reload, on a reload,
# before it resizes.  A test's own backend attaches the segment itself
# (pause_at() calls injection_points_set_local()).  Nothing to do on 18.
sub prepare_worker_waits
{
	my ($node, $mon) = @_;
	return if tested_pg_major() >= 18;
	$mon->query_safe(
		"SELECT injection_points_attach('walscale-worker-reload', 'wait')");
	$mon->query_safe('SELECT pg_reload_conf()');
	wait_for_event_through($mon, 'walscale', 'walscale-worker-reload');
	release_point($node, 'walscale-worker-reload', $mon);
	return;
}

# A session whose preferred insertion lock is $lockno of $nlocks: a backend
# prefers the lock at its ProcNumber modulo the number of active locks.
# Sessions opened on the way stay open (so that the next one gets another
# ProcNumber) until one fits, and are then closed; past 3 * $nlocks + 3 of
# them, the oldest is closed as the next opens, PostgreSQL handing out free
# ProcNumbers first in, first out, so that $tries sessions (default that
# many) go through as many ProcNumbers.
sub session_preferring
{
	my ($node, $lockno, $nlocks, $tries) = @_;
	my $keep = 3 * $nlocks + 3;
	my @opened;

	for (1 .. ($tries // $keep))
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
		(shift @opened)->quit if @opened > $keep;
	}
	die "no session prefers lock $lockno of $nlocks";
}

sub backend_pid
{
	my ($s) = @_;
	return $s->query_safe('SELECT pg_backend_pid()');
}

# State and wait event of a backend.  Asked through $mon, a session opened
# beforehand, if given: while all insertion locks are held, a new session
# could wait for one to write WAL of its own (pruning a catalog page, say).
sub activity_of
{
	my ($node, $pid, $mon) = @_;
	my $q =
	  "SELECT coalesce(state, '') || '/' || coalesce(wait_event, '') FROM pg_stat_activity WHERE pid = $pid";
	return $mon ? $mon->query_safe($q) : $node->safe_psql('postgres', $q);
}

# What backend $pid's statement comes to: 'waits' on the WAL insertion lock
# tranche, or 'done' (the backend is idle again).
sub outcome
{
	my ($node, $pid, $mon) = @_;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		my $a = activity_of($node, $pid, $mon);
		return 'waits' if $a eq 'active/WALInsert';
		return 'done' if $a =~ /^idle/;
		usleep(100_000);
	}
	return "still '" . activity_of($node, $pid, $mon) . "'";
}

# Wait until a backend of type $type waits on $event, asking through $mon.
sub wait_for_event_through
{
	my ($mon, $type, $event) = @_;
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return 1
		  if $mon->query_safe(
			"SELECT count(*) FROM pg_stat_activity WHERE backend_type = '$type' AND wait_event = '$event'"
		  ) > 0;
		usleep(100_000);
	}
	die "no $type waits on $event";
}

# Start statement $sql (one statement: psql sends each separately) in
# session $s without waiting for it to finish, and wait until the server
# has it, so that an idle backend afterwards means it is done, not that it
# has not begun.  A comment with a number of its own marks the statement in
# pg_stat_activity.  Asked through $mon if given, as in activity_of().
my $statements_started = 0;

sub start_in
{
	my ($node, $s, $sql, $mon) = @_;
	my $pid = backend_pid($s);
	my $marker = 'walscale_statement_' . ++$statements_started;
	my $q =
	  "SELECT count(*) FROM pg_stat_activity WHERE pid = $pid AND query LIKE '/* $marker */%'";

	$s->query_until(qr/started/, "\\echo started\n/* $marker */ $sql\n");
	for (1 .. 100 * $PostgreSQL::Test::Utils::timeout_default)
	{
		return if ($mon ? $mon->query_safe($q) : $node->safe_psql('postgres', $q)) > 0;
		usleep(10_000);
	}
	die "statement \"$sql\" did not start";
}

# Make session $s stop at injection point $point in $sql, and wait until it
# does (asking through $mon if given).  The point is loaded first: it sits in
# a critical section.
sub pause_at
{
	my ($node, $s, $point, $sql, $mon) = @_;
	$s->query_safe(
		qq{SELECT injection_points_set_local();
		   SELECT injection_points_attach('$point', 'wait');
		   SELECT injection_points_load('$point')});
	start_in($node, $s, $sql, $mon);
	if ($mon)
	{
		wait_for_event_through($mon, 'client backend', $point);
	}
	else
	{
		$node->wait_for_event('client backend', $point);
	}
	return;
}

# Let the backend waiting at injection point $name go on (through session
# $mon, if given, as in activity_of()).
sub release_point
{
	my ($node, $name, $mon) = @_;
	my $q =
	  "SELECT injection_points_detach('$name'); SELECT injection_points_wakeup('$name')";
	$mon ? $mon->query_safe($q) : $node->safe_psql('postgres', $q);
	return;
}

# A statement that writes exactly one WAL record, outside any transaction,
# so that a backend paused in it pauses once.
sub one_record_sql
{
	return
	  q{SELECT pg_logical_emit_message(false, 'walscale', 'paused') IS NOT NULL;};
}

# The cluster of the injection-point races (t/006, t/007, t/012, t/023),
# started with $locks insertion locks (default 16), walscale and
# injection_points created and a table t (id, who), and a monitoring
# session; returns both.  $extra_conf, if given, is appended to
# postgresql.conf.  injection_points is preloaded, so that its state is in
# shared memory when a point waits in a critical section, where no memory
# can be allocated.
#
# While a backend holds insertion locks, any backend that writes WAL on one
# of them waits, and a new session may write WAL of its own: with data
# checksums, the first hint bits set on a page after a checkpoint write a
# full-page image.  So checksums are off, the catalogs are vacuumed after the
# set-up, and what the test asks while locks are held goes through the
# monitoring session, which has asked the same before.
sub race_cluster
{
	my ($name, $max_connections, $locks, $extra_conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	require_injection_points($node);
	# 18 turned data checksums on by default; 17 has no option to say off
	$node->init(
		extra => tested_pg_major() >= 18 ? ['--no-data-checksums'] : []);
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'walscale,injection_points'
autovacuum = off
checkpoint_timeout = 1h
max_connections = $max_connections
log_statement = none
include = 'walscale_case.conf'
} . ($extra_conf // ''));
	write_case_conf($node, $locks // 16, 0);
	$node->start;

	$node->safe_psql(
		'postgres', q{
CREATE EXTENSION walscale;
CREATE EXTENSION injection_points;
CREATE TABLE t (id int, who text);
});
	$node->safe_psql('postgres', 'VACUUM (FREEZE)');
	$node->safe_psql('postgres', 'CHECKPOINT');
	my $mon = $node->background_psql('postgres', on_error_stop => 1);

	# what the tests ask through it while locks are held, asked once now
	activity_of($node, $$, $mon);
	$mon->query_safe('SELECT insert_locks FROM walscale_settings');
	return ($node, $mon);
}

# Reload with $locks insertion locks (and $attempts conditional attempts, 0
# if not given) and wait until walscale's worker applied them.
sub resize_to
{
	my ($node, $locks, $attempts) = @_;
	write_case_conf($node, $locks, $attempts // 0);
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		'SELECT insert_locks FROM walscale_settings', $locks)
	  or die "the number of insertion locks did not become $locks";
	return;
}

# The acquisitions of insertion lock $lockno since the last reset.
sub acquisitions_on
{
	my ($node, $lockno) = @_;
	return $node->safe_psql('postgres',
		"SELECT acquisitions FROM walscale_stats WHERE lock_id = $lockno");
}

1;
