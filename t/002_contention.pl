
# Copyright (c) 2026, walscale developers

# Contention on WAL insertion locks: with a single lock and many clients
# writing small WAL records, backends must sleep on lock 0 and the sleeps
# must be counted and timed; conditional attempts, switched on by a reload,
# must be counted as failed attempts; with 8 locks every number stays sane.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

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
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1
walscale.insert_lock_attempts = 0
max_connections = 40
log_statement = none
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

# Counters must hold together; $processed transactions and the wall-clock
# milliseconds they took since the last reset bound them from both sides.
sub check_sane
{
	my ($name, $attempts, $processed, $elapsed_ms) = @_;

	note sprintf("%s: %d transactions in %.0f ms; %s",
		$name, $processed, $elapsed_ms,
		$node->safe_psql('postgres', stats_summary_query()));

	is($node->safe_psql('postgres', inconsistent_locks_query($attempts)),
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
			'postgres',
			'SELECT count(DISTINCT stats_reset) FROM walscale_stats'),
		'1',
		"$name: all locks share one reset time");
	return;
}

# Run bursts of load after a reset until $condition holds for lock 0;
# returns the transactions processed and the milliseconds spent.
sub load_until
{
	my ($name, $condition) = @_;
	my ($processed, $elapsed_ms) = (0, 0);

	$node->safe_psql('postgres', 'SELECT walscale_reset()');
	for my $burst (1 .. $max_bursts)
	{
		my ($p, $ms) = run_load("$name, burst $burst");
		$processed  += $p;
		$elapsed_ms += $ms;
		last
		  if $node->safe_psql('postgres',
			"SELECT $condition FROM walscale_stats WHERE lock_id = 0") eq 't';
	}
	return ($processed, $elapsed_ms);
}

# 1. one lock, plain sleeps
my $name = 'one lock, no attempts';
is( $node->safe_psql(
		'postgres',
		'SELECT insert_locks, insert_lock_attempts FROM walscale_settings'),
	'1|0',
	"$name: settings in effect");

my ($processed, $elapsed_ms) =
  load_until($name, 'blocking_waits > 0 AND blocked_ms > 0');
is( $node->safe_psql(
		'postgres', q{
SELECT blocking_waits > 0, blocked_ms > 0, failed_attempts = 0
FROM walscale_stats WHERE lock_id = 0}),
	't|t|t',
	"$name: backends slept on lock 0, for a measured time");
check_sane($name, 0, $processed, $elapsed_ms);

# 2. conditional attempts, switched on by a reload
$name = 'one lock, one attempt';
my $started =
  $node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()');
$node->safe_psql('postgres',
	'ALTER SYSTEM SET walscale.insert_lock_attempts = 1');
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
ok( $node->poll_query_until(
		'postgres', 'SELECT insert_lock_attempts FROM walscale_settings', '1'
	),
	"$name: the reload changes walscale_settings.insert_lock_attempts");
is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time()'),
	$started, "$name: without a restart");

($processed, $elapsed_ms) = load_until($name, 'failed_attempts > 0');
is( $node->safe_psql(
		'postgres', q{
SELECT failed_attempts > 0, failed_attempts = acquisitions - first_try
FROM walscale_stats WHERE lock_id = 0}),
	't|t',
	"$name: each contended acquisition counts one failed attempt");
check_sane($name, 1, $processed, $elapsed_ms);

# 3. eight locks, no attempts, as PostgreSQL does it
$name = 'eight locks, no attempts';
$node->safe_psql(
	'postgres', q{
ALTER SYSTEM SET walscale.insert_locks = 8;
ALTER SYSTEM SET walscale.insert_lock_attempts = 0;
});
$node->restart;
is( $node->safe_psql(
		'postgres',
		'SELECT insert_locks, insert_lock_attempts FROM walscale_settings'),
	'8|0',
	"$name: settings in effect after restart");
is($node->safe_psql('postgres', 'SELECT count(*) FROM walscale_stats'),
	'8', "$name: eight rows");

($processed, $elapsed_ms) = load_until($name, 'true');
check_sane($name, 0, $processed, $elapsed_ms);
cmp_ok(
	$node->safe_psql(
		'postgres',
		'SELECT count(*) FROM walscale_stats WHERE acquisitions > 0'),
	'>', 1,
	"$name: the clients spread over more than one lock");

my $log = slurp_file($node->logfile);
unlike($log, qr/\b(?:PANIC|FATAL):/, 'no PANIC or FATAL in the server log');

$node->stop;

done_testing();
