
# Copyright (c) 2026, walscale developers

# WAL insertion locks at 1, 8, 64 and 1024: each backend must insert
# through its preferred lock, its ProcNumber modulo the number of locks, so
# that up to that many backends insert at once; then a concurrent WAL-heavy
# pgbench runs while checkpoints, WAL switches and base backups take every
# insertion lock at once, and the counters of walscale_stats must add up.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

# number of rows each pgbench transaction inserts and deletes again
my $rows_per_xact = 100;

# WAL records written by one backend for the counting check
my $records = 1000;

# sessions open at once for the preferred-lock check, and the WAL records
# each of them writes
my $sessions = 20;
my $session_records = 50;

# seconds of background load for each lock count
my $load_seconds = 6;
my $load_clients = 8;

my $node = PostgreSQL::Test::Cluster->new('insert_locks');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
wal_level = replica
max_wal_senders = 0
max_wal_size = 256MB
log_statement = none
include = 'walscale_case.conf'
});

# Open $sessions sessions at once, so that they have distinct ProcNumbers,
# then let each in turn write WAL records alone: all must be inserted
# through its preferred lock, ProcNumber % $locks, at the first try.  Returns
# the number of distinct locks the sessions inserted through, and the number
# of distinct values of ProcNumber % $locks among them.
sub check_preferred_locks
{
	my ($name, $locks) = @_;
	my @open;
	my %used;
	my %residues;

	push @open, $node->background_psql('postgres') for 1 .. $sessions;
	my $first_try_query =
	  q{SELECT string_agg(first_try::text, ',' ORDER BY lock_id) FROM walscale_stats};
	my $misplaced = 0;
	foreach my $session (@open)
	{
		my $procnumber = $session->query_safe(
			q{SELECT s FROM pg_stat_get_backend_idset() AS s
WHERE pg_stat_get_backend_pid(s) = pg_backend_pid()});
		my @before = split /,/, $session->query_safe($first_try_query);
		$session->query_safe(
			qq{SELECT count(pg_logical_emit_message(false, 'walscale', 'preferred ' || i))
FROM generate_series(1, $session_records) AS i});
		my @after = split /,/, $session->query_safe($first_try_query);
		die "walscale_stats has not $locks rows"
		  unless @before == $locks && @after == $locks;

		# the lock whose first_try grew most, and the growth elsewhere
		my @grew = map { $after[$_] - $before[$_] } 0 .. $locks - 1;
		my ($top) = sort { $grew[$b] <=> $grew[$a] || $a <=> $b } 0 .. $locks - 1;
		my $elsewhere = 0;
		$elsewhere += $grew[$_] for grep { $_ != $top } 0 .. $locks - 1;
		my $preferred = $procnumber % $locks;
		$used{$top} = 1;
		$residues{$preferred} = 1;
		if ($top != $preferred
			|| $grew[$top] < $session_records
			|| $elsewhere >= $session_records)
		{
			diag("$name: ProcNumber $procnumber wrote $session_records records; "
				  . "first_try grew by $grew[$top] on lock $top (preferred $preferred), "
				  . "by $elsewhere on the others");
			$misplaced++;
		}
	}
	$_->quit for @open;
	is($misplaced, 0,
		"$name: each of $sessions sessions inserted through lock ProcNumber % $locks, at the first try"
	);
	return (scalar keys %used, scalar keys %residues);
}

# the settings of one case, in a file postgresql.conf includes
sub set_case
{
	my ($locks, $attempts) = @_;
	write_case_conf($node, $locks, $attempts);
	return;
}

my $load_script = $node->basedir . '/wal_load.sql';
append_to_file(
	$load_script, qq{\\set id random(1, 1000000000)
BEGIN;
INSERT INTO wal_load SELECT i FROM generate_series(:id, :id + $rows_per_xact - 1) AS i;
DELETE FROM wal_load WHERE id BETWEEN :id AND :id + $rows_per_xact - 1;
END;
});

foreach my $case ([ 1, 0 ], [ 8, 0 ], [ 64, 2 ], [ 1024, 2 ])
{
	my ($locks, $attempts) = @$case;
	my $name = "insert_locks=$locks, attempts=$attempts";

	set_case($locks, $attempts);
	my $log_offset = -s $node->logfile // 0;
	$node->start;

	$node->safe_psql(
		'postgres', q{
DROP EXTENSION IF EXISTS walscale;
CREATE EXTENSION walscale;
DROP TABLE IF EXISTS wal_load;
CREATE TABLE wal_load (id int8 NOT NULL);
CREATE INDEX wal_load_id ON wal_load (id);
});

	is( $node->safe_psql(
			'postgres',
			'SELECT count(*), min(lock_id), max(lock_id) FROM walscale_stats'
		),
		"$locks|0|" . ($locks - 1),
		"$name: walscale_stats has one row per lock, numbered from 0");
	is( $node->safe_psql(
			'postgres',
			'SELECT insert_locks, insert_lock_attempts FROM walscale_settings'
		),
		"$locks|$attempts",
		"$name: walscale_settings reports the configured lock count");
	is($node->safe_psql('postgres', 'SHOW walscale.insert_locks'),
		$locks, "$name: SHOW walscale.insert_locks");

	my ($distinct, $residues) = check_preferred_locks($name, $locks);
	is($distinct, $residues,
		"$name: the sessions inserted through as many locks as they prefer ($distinct)"
	);
	if ($locks > 8)
	{
		# Distinct ProcNumbers below max_connections (100) leave at least 10
		# distinct values modulo 64; PostgreSQL's own choice, ProcNumber % 8,
		# would stop at 8 locks.
		cmp_ok($distinct, '>', 8,
			"$name: more than 8 locks took insertions from $sessions sessions"
		);
	}

	$node->safe_psql('postgres', 'SELECT walscale_reset()');

	# WAL-heavy load in the background ...
	my $pgbench = start_pgbench($node, $load_clients, $load_seconds,
		'--file' => $load_script);

	# ... while every insertion lock is taken at once, over and over
	my $rounds = 0;
	while ($rounds < 3 || ($pgbench->{handle}->pumpable && $rounds < 30))
	{
		$pgbench->{handle}->pump_nb if $pgbench->{handle}->pumpable;
		$node->safe_psql('postgres', 'CHECKPOINT');
		$node->safe_psql('postgres', 'SELECT pg_switch_wal()');
		$node->safe_psql(
			'postgres', q{
SELECT pg_backup_start('walscale_test', fast => true);
SELECT lsn > '0/0' FROM pg_backup_stop(wait_for_archive => false);
});
		$rounds++;
	}
	my $processed = finish_pgbench($pgbench, $name);
	note "$name: $rounds rounds of CHECKPOINT, pg_switch_wal and backups";
	unlike($pgbench->{err}, qr/error|abort/i,
		"$name: pgbench reports no error");
	cmp_ok($processed, '>', 0, "$name: pgbench processed transactions");

	# all quiet now: one more checkpoint, then read the counters
	$node->safe_psql('postgres', 'CHECKPOINT');
	note "$name: $processed transactions; "
	  . $node->safe_psql('postgres', stats_summary_query());

	is( $node->safe_psql(
			'postgres', q{
SELECT count(*) FILTER (WHERE exclusive_acquisitions > 0),
       min(exclusive_acquisitions) = max(exclusive_acquisitions)
FROM walscale_stats}),
		"$locks|t",
		"$name: every lock was taken exclusively, as often as every other");
	cmp_ok(
		$node->safe_psql(
			'postgres',
			'SELECT min(exclusive_acquisitions) FROM walscale_stats'),
		'>=',
		4 * $rounds,
		"$name: each checkpoint, switch, backup start and stop took all locks"
	);

	cmp_ok(
		$node->safe_psql(
			'postgres', 'SELECT sum(acquisitions) FROM walscale_stats'),
		'>=',
		3 * $processed * $rows_per_xact,
		"$name: acquisitions count at least the heap insert, index insert and heap delete of every row"
	);

	is($node->safe_psql('postgres', inconsistent_locks_query($attempts, $locks)),
		'0',
		"$name: per-lock counters are consistent");

	# one backend, K records: at least K acquisitions
	my $before = $node->safe_psql('postgres',
		'SELECT sum(acquisitions) FROM walscale_stats');
	my $after = $node->safe_psql(
		'postgres', qq{
SELECT count(pg_logical_emit_message(false, 'walscale', 'record ' || i))
FROM generate_series(1, $records) AS i;
SELECT sum(acquisitions) FROM walscale_stats;
});
	($after) = $after =~ /(\d+)$/;
	cmp_ok($after - $before, '>=', $records,
		"$name: $records WAL records raise acquisitions by at least $records"
	);

	my $log = slurp_file($node->logfile, $log_offset);
	like($log, qr/\bLOG:  walscale: /,
		"$name: the server logs a line about walscale at start");
	unlike(
		$log,
		qr/too many LWLocks taken/,
		"$name: no \"too many LWLocks taken\" in the server log");
	unlike($log, qr/\b(?:PANIC|FATAL):/,
		"$name: no PANIC or FATAL in the server log");
	unlike($log, qr/terminated by signal/, "$name: no server process died");

	$node->stop;
}

done_testing();
