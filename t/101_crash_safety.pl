
# Copyright (c) 2026, walscale developers

# Crash safety at walscale.insert_locks = 1024 and insert_lock_attempts = 3:
# clients commit WAL-heavy transactions with synchronous_commit = on and
# write down every commit the server acknowledged (a client-side ledger),
# while the postmaster, or a single backend, is killed with SIGKILL again and
# again.  After each restart every acknowledged commit must be there, each
# transaction must be all there or not at all, and amcheck (verify_heapam,
# bt_index_check with heapallindexed) must report nothing.
#
# WALSCALE_POSTMASTER_KILLS and WALSCALE_BACKEND_KILLS (default 5 each) set
# the number of cycles; WALSCALE_CRASH_CLIENTS (default 8) the clients.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleStorm;

my $postmaster_kills = $ENV{WALSCALE_POSTMASTER_KILLS} // 5;
my $backend_kills = $ENV{WALSCALE_BACKEND_KILLS} // 5;
my $nclients = $ENV{WALSCALE_CRASH_CLIENTS} // 8;
my $rows_per_xact = 5;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1024
walscale.insert_lock_attempts = 3
fsync = on
synchronous_commit = on
full_page_writes = on
restart_after_crash = on
max_connections = 40
# every client statement in the log would make it grow by gigabytes, and
# wait_for_log, which rereads it, slow to a crawl
log_statement = none
# checkpoints (all 1024 locks at once) during the load, and full-page images
checkpoint_timeout = 30s
max_wal_size = 48MB
min_wal_size = 32MB
});
$node->start;

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION walscale;
CREATE TABLE victim_rows (n int NOT NULL, payload text NOT NULL);
});
is( $node->safe_psql(
		'postgres',
		"SELECT insert_locks || '/' || insert_lock_attempts FROM walscale_settings"),
	'1024/3',
	'the server runs with 1024 insertion locks and 3 attempts');

# the ledger clients (t/WalscaleStorm.pm), and their tables, with amcheck
my $ledger = ledger_start($node, clients => $nclients, rows => $rows_per_xact);

# the server is up again, with its 1024 locks
my $up_query =
  'SELECT insert_locks = 1024 AND NOT pg_is_in_recovery() FROM walscale_settings';

ok(ledger_wait_for_progress($ledger, 20), 'the clients commit');

# 1. kill -9 of the postmaster: the other server processes follow it out
# (they notice that the postmaster is gone), then the server is started
# again and recovers from the crash.
my $survived_postmaster = 0;
for my $cycle (1 .. $postmaster_kills)
{
	my $label = "postmaster kill $cycle/$postmaster_kills";
	ok(ledger_wait_for_progress($ledger, 20), "$label: load before the kill");
	my $log_offset = -s $node->logfile;
	my $nchildren = crash_postmaster($node, $label);
	cmp_ok($nchildren, '>=', 5, "$label: there were server processes to follow");
	$node->start;
	ok(server_up($node, $up_query), "$label: the server is up again");
	like(slurp_file($node->logfile, $log_offset),
		qr/database system was interrupted|database system was not properly shut down/,
		"$label: the restart recovered from the crash");
	my $n = ledger_verify($ledger, $label, 'false');
	$survived_postmaster++ if $n > 0 && Test::More->builder->is_passing;
}

# 2. kill -9 of one backend: the postmaster ends every other process, resets
# shared memory (all 1024 locks with it) and recovers.  The backend killed
# is one that inserts and commits in a loop until it dies.  A ledger
# client's backend ends after 20 transactions, and a SIGKILL that reaches it
# between its exit and the postmaster's wait() does nothing: a CI run waited
# for a crash that never came.
sub start_victim
{
	my $stderr = '';
	my $h = IPC::Run::start(
		[
			'psql', '-X', '-q',
			'-d' => $node->connstr('postgres') . ' application_name=walscale_victim',
			'-c' => q{DO $$ BEGIN LOOP
			  INSERT INTO victim_rows
			    SELECT g, repeat(md5(g::text), 10) FROM generate_series(1, 10) g;
			  COMMIT; END LOOP; END $$}
		],
		'<', \undef, '>', '/dev/null', '2>', \$stderr);
	my $victim_query = q{FROM pg_stat_activity
	  WHERE application_name = 'walscale_victim' AND state = 'active'};
	$node->poll_query_until('postgres', "SELECT count(*) = 1 $victim_query")
	  or die "the backend to kill did not start";
	return ($h, $node->safe_psql('postgres', "SELECT pid $victim_query"));
}

my $survived_backend = 0;
for my $cycle (1 .. $backend_kills)
{
	my $label = "backend kill $cycle/$backend_kills";
	ok(ledger_wait_for_progress($ledger, 20), "$label: load before the kill");
	my $postmaster = $node->{_pid};
	my $log_offset = -s $node->logfile;
	my ($victim_psql, $victim) = start_victim();
	usleep(200_000);    # into its stream of commits
	my $runs = process_is_child_of($victim, $postmaster);
	ok($runs, "$label: the backend to kill runs, a child of the postmaster")
	  or die "$label: no backend to kill";
	ok(kill('KILL', $victim), "$label: a client backend was killed");
	# PostgreSQL 17 names a backend that died "server process"
	my $what =
	  tested_pg_major() >= 18 ? 'client backend' : 'server process';
	ok( $node->wait_for_log(
			qr/$what \(PID $victim\) was terminated by signal 9/, $log_offset),
		"$label: the postmaster saw its backend killed");
	eval { $victim_psql->finish; };    # psql lost its connection
	ok( $node->wait_for_log(
			qr/all server processes terminated; reinitializing/, $log_offset),
		"$label: the postmaster reinitializes");
	ok(server_up($node, $up_query), "$label: the server is up again");
	is($node->safe_psql('postgres', 'SELECT pg_postmaster_start_time() IS NOT NULL'),
		't', "$label: queries run");
	is(`head -n 1 ${\ $node->data_dir}/postmaster.pid` + 0,
		$postmaster, "$label: the same postmaster");
	my $n = ledger_verify($ledger, $label, 'false');
	$survived_backend++ if $n > 0 && Test::More->builder->is_passing;
}

# stop the clients, then a last, thorough check
ok(ledger_wait_for_progress($ledger, 20), 'the clients commit after the last restart');
ledger_stop($ledger);
my $total = ledger_verify($ledger, 'after all cycles', 'true');
cmp_ok($total, '>', ($postmaster_kills + $backend_kills) * 20,
	"$total acknowledged commits were checked");
my $stats = $node->safe_psql('postgres',
	q{SELECT count(*) FILTER (WHERE acquisitions > 0) || ' locks used, '
	  || min(exclusive_acquisitions) || ' all-locks acquisitions'
	  FROM walscale_stats});
is($survived_postmaster, $postmaster_kills, "$postmaster_kills postmaster kill -9 cycles survived");
is($survived_backend, $backend_kills, "$backend_kills backend kill -9 cycles survived");
diag("crash safety at 1024 locks, 3 attempts: survived $survived_postmaster of $postmaster_kills "
	  . "postmaster kills and $survived_backend of $backend_kills backend kills; "
	  . "$total acknowledged commits all present; since the last restart $stats");

$node->stop;
done_testing();
