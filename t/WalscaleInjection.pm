
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
use Test::More;
use Time::HiRes qw(usleep);

our @EXPORT = qw(require_injection_points session_preferring backend_pid
  activity_of outcome wait_for_event_through start_in pause_at release_point
  one_record_sql);

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

# A session whose preferred insertion lock is $lockno of $nlocks: a backend
# prefers the lock at its ProcNumber modulo the number of active locks.
# Sessions opened on the way stay open (so that the next one gets another
# ProcNumber) until one fits, and are then closed.
sub session_preferring
{
	my ($node, $lockno, $nlocks) = @_;
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

1;
