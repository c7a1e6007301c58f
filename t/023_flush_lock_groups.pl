
# Copyright (c) 2026, walscale developers

# A flush visits only the insertion locks of the groups in use (groups of 8
# consecutive locks, a bit each; see XLogCtlInsert.lockGroupsOpen in the
# core patch).  Its races, made deterministic with injection points, with
# 1024 insertion locks, so that a backend's preferred lock is its ProcNumber:
#
# (a) The second word of groups (locks 512 and up): with an insertion
#     paused on a lock of group 65 after reserving WAL, a commit from
#     another group waits for it.
# (b) A group's bit is not dropped while an insertion in it is in flight:
#     with an insertion paused after reserving WAL, three commits from other
#     groups, one after the other, each wait for it.  The first closes the
#     epoch in which the insertion set its bit; the next two would close the
#     following ones, and drop its bit, if an epoch closed before every
#     insertion in it had finished.
# (c) An epoch closed during a scan: a commit pauses after reading the
#     groups; an insertion in another group then reserves WAL and pauses.
#     The paused flush goes on without waiting for that insertion, which
#     reserved after it read the position (stock PostgreSQL's flush, which
#     visits every lock, would wait); the next commit, from a third group,
#     closes the epoch the paused flush had opened, in which the insertion
#     set its bit, and waits for it.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleInjection;

my $nlocks = 1024;

# as the core patch's groups of insertion locks
use constant WALINSERT_LOCKS_PER_GROUP => 8;
my $max_connections = 600;

# The cluster of the other race files; wal_level = minimal besides: no
# standby snapshots from the bgwriter, whose insertions could land in a
# group that (c) expects unused.
my ($node, $mon) = race_cluster(
	'flush_lock_groups', $max_connections, $nlocks, q{
wal_level = minimal
max_wal_senders = 0
});
is($node->safe_psql('postgres', 'SELECT count(*) FROM walscale_stats'),
	$nlocks, "server runs with $nlocks insertion locks");
my $one_record = one_record_sql();

# Sessions on chosen insertion locks.  With 1024 locks a backend prefers the
# lock of its ProcNumber, and client backends take ProcNumbers from a free
# list, first in, first out: each connection that comes and goes (pgbench
# -C, one at a time) moves the list's head on by one.  session_where()
# opens sessions until one has a ProcNumber that &$fits takes, moving the
# head on between tries: to $aim if given, else by the 8 locks of a group.
my $select_one = $node->basedir . '/select_one.sql';
PostgreSQL::Test::Utils::append_to_file($select_one, "SELECT 1;\n");

sub session_where
{
	my ($fits, $aim) = @_;

	for (1 .. 20)
	{
		my $s = $node->background_psql('postgres', on_error_stop => 1);
		my $procno = $s->query_safe(
			q{SELECT s FROM pg_stat_get_backend_idset() AS s
			  WHERE pg_stat_get_backend_pid(s) = pg_backend_pid()});
		return ($s, $procno) if $fits->($procno);
		$s->quit;

		# Perl's % takes the sign of its right operand: 0 .. max - 1
		my $skip =
		  defined $aim
		  ? ($aim - $procno - 1) % $max_connections
		  : WALINSERT_LOCKS_PER_GROUP;
		next if $skip == 0;
		run_log(
			[
				'pgbench', '-n', '-C', '-t', $skip, '-f', $select_one,
				'-h', $node->host, '-p', $node->port, 'postgres'
			]) or die "pgbench failed";
	}
	die 'no session with a ProcNumber that fits';
}


# a session on a lock of a group not in %$used, which it is added to
sub session_in_new_group
{
	my ($used) = @_;
	my ($s, $procno) =
	  session_where(sub { !$used->{ int($_[0] / WALINSERT_LOCKS_PER_GROUP) } });
	$used->{ int($procno / WALINSERT_LOCKS_PER_GROUP) } = 1;
	return $s;
}

sub commit_sql
{
	my ($who) = @_;
	return "INSERT INTO t VALUES (1, '$who');";
}

sub rows
{
	return $node->safe_psql('postgres',
		q{SELECT string_agg(who, ',' ORDER BY who) FROM t});
}

# (a) groups 64 and up, in the second word; first, while the free list of
# ProcNumbers is still in order, so that the head is moved on to 524 at once
{
	my ($p) = session_where(sub { $_[0] >= 520 && $_[0] < 528 }, 524);
	my $b = session_in_new_group({ 65 => 1 });
	my $b_pid = backend_pid($b);

	pause_at($node, $p, 'walscale-wal-insert-reserved', $one_record, $mon);
	start_in($node, $b, commit_sql('b'), $mon);
	is(outcome($node, $b_pid, $mon),
		'waits',
		'(a) a commit waits for the insertion in flight on a lock of group 65');
	release_point($node, 'walscale-wal-insert-reserved', $mon);
	$_->query_safe('SELECT 1') for ($p, $b);
	is(rows(), 'b', '(a) the commit is there');
	$node->safe_psql('postgres', 'TRUNCATE t');
	$_->quit for ($p, $b);
}

# (b) three commits in turn, each from a group of its own, while an
# insertion in another group is in flight
{
	my %used;
	my $p = session_in_new_group(\%used);
	my @committers = map { session_in_new_group(\%used) } 1 .. 3;
	my @pids = map { backend_pid($_) } @committers;

	pause_at($node, $p, 'walscale-wal-insert-reserved', $one_record, $mon);
	for my $n (0 .. 2)
	{
		my $s = $committers[$n];
		start_in($node, $s, commit_sql("c$n"), $mon);
		is(outcome($node, $pids[$n], $mon),
			'waits', "(b) commit $n waits for the insertion in flight");
	}
	release_point($node, 'walscale-wal-insert-reserved', $mon);
	$_->query_safe('SELECT 1') for ($p, @committers);
	is(rows(), 'c0,c1,c2', '(b) every commit is there once it finished');
	$node->safe_psql('postgres', 'TRUNCATE t');
	$_->quit for ($p, @committers);
}

# (c) an epoch closed while a flush scans
{
	my %used;
	my $f = session_in_new_group(\%used);
	my $p = session_in_new_group(\%used);
	my $c = session_in_new_group(\%used);
	my $f_pid = backend_pid($f);
	my $c_pid = backend_pid($c);

	# two commits of $f's own, so that the groups in use before are out of
	# both epochs: the one that $f's paused flush closes holds only its group
	$f->query_safe(commit_sql('warm 1'));
	$f->query_safe(commit_sql('warm 2'));

	pause_at($node, $f, 'walscale-flush-groups-read', commit_sql('f'), $mon);
	pause_at($node, $p, 'walscale-wal-insert-reserved', $one_record, $mon);
	release_point($node, 'walscale-flush-groups-read', $mon);
	is(outcome($node, $f_pid, $mon),
		'done',
		'(c) a flush does not wait for an insertion that reserved after it read the groups'
	);

	start_in($node, $c, commit_sql('c'), $mon);
	is(outcome($node, $c_pid, $mon),
		'waits',
		'(c) the next commit closes the epoch the insertion is in, and waits for it'
	);
	release_point($node, 'walscale-wal-insert-reserved', $mon);
	$_->query_safe('SELECT 1') for ($p, $c);
	is(rows(), 'c,f,warm 1,warm 2', '(c) every commit is there');
	$_->quit for ($f, $p, $c);
}

$mon->quit;
$node->stop;
done_testing();
