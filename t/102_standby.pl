
# Copyright (c) 2026, walscale developers

# Streaming replication from a primary at walscale.insert_locks = 1024 under
# load: two standbys, one at 1024 locks and one at a single lock (the WAL does
# not depend on the number of locks that wrote it), must hold the primary's
# data once they have caught up, pass amcheck, and the first one must be
# promotable and then take writes.
#
# WALSCALE_LOAD_SECONDS (default 15) sets the duration of the load.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $seconds = $ENV{WALSCALE_LOAD_SECONDS} // 15;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1024
walscale.insert_lock_attempts = 3
max_connections = 40
log_statement = none
max_wal_size = 64MB
wal_keep_size = 256MB
});
$primary->start;
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION walscale;
CREATE EXTENSION amcheck;
CREATE TABLE walbig (id bigserial PRIMARY KEY, client int, pad text);
CREATE INDEX ON walbig (client, id);
});
$primary->command_ok([ 'pgbench', '-i', '-q', '-s', '2', '-d', 'postgres' ],
	'pgbench -i');

$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('standby_1024');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->start;
my $standby1 = PostgreSQL::Test::Cluster->new('standby_1');
$standby1->init_from_backup($primary, 'base', has_streaming => 1);
$standby1->append_conf('postgresql.conf', "walscale.insert_locks = 1\n");
$standby1->start;

# load: pgbench's TPC-B-like transactions and large inserts and deletes, from
# 16 clients, while checkpoints and WAL switches take all locks
my $script = $primary->basedir . '/walbig.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
BEGIN;
INSERT INTO walbig (client, pad) SELECT :client_id, repeat(md5(g::text), 30) FROM generate_series(1, 20) g;
DELETE FROM walbig WHERE client = :client_id AND id % 3 = 0;
COMMIT;
});
my $pgbench = start_pgbench($primary, 16, $seconds,
	'--builtin' => 'tpcb-like@3', '--file' => "$script\@1");
my $switches = 0;
while ($pgbench->{handle}->pumpable)
{
	$primary->safe_psql('postgres', 'SELECT pg_switch_wal(); CHECKPOINT;');
	$switches++;
	sleep 1;
	$pgbench->{handle}->pump_nb;
}
my $xacts = finish_pgbench($pgbench, 'under replication');
cmp_ok($xacts, '>', 100, "pgbench committed $xacts transactions, with $switches WAL switches and checkpoints");

# catch-up, then the same data
my @tables = qw(pgbench_accounts pgbench_branches pgbench_tellers pgbench_history walbig);
# ordered: a parallel append may return the branches in any order
my $fingerprint = 'SELECT * FROM ('
  . join(' UNION ALL ', map {
	"SELECT '$_', count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) FROM $_ t"
  } @tables)
  . ') f ORDER BY 1';
my $expected = $primary->safe_psql('postgres', $fingerprint);
for my $s ($standby, $standby1)
{
	my $name = $s->name;
	$primary->wait_for_replay_catchup($s);
	is($s->safe_psql('postgres', $fingerprint), $expected, "$name: same data as the primary");
	is( $s->safe_psql('postgres', 'SELECT insert_locks FROM walscale_settings'),
		$name eq 'standby_1' ? '1' : '1024',
		"$name: its own number of insertion locks");
	my ($ret, $stdout, $stderr) = $s->psql(
		'postgres', q{
SELECT count(bt_index_check(c.oid, true))
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam
WHERE am.amname = 'btree' AND c.relpersistence = 'p';
SELECT count(*) FROM pg_class c, LATERAL verify_heapam(c.oid) v
WHERE c.relkind IN ('r', 'm', 't') AND c.relpersistence = 'p';});
	like($stdout, qr/^[1-9]\d*\n0$/, "$name: amcheck reports nothing")
	  or diag("amcheck: $stdout $stderr");
}
is( $primary->safe_psql('postgres',
		'SELECT count(*) FROM walscale_stats WHERE exclusive_acquisitions > 0'),
	'1024', 'the primary took all 1024 locks at once');

# promotion: the end of recovery takes all locks; afterwards the new primary
# writes at 1024 locks and the other standby still follows the old one
my $rows_query = 'SELECT count(*) FROM walbig';
my $primary_rows = $primary->safe_psql('postgres', $rows_query);
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'standby_1024 promoted');
is($standby->safe_psql('postgres', $rows_query),
	$primary_rows, 'the promoted standby has as many rows as the primary');
$standby->safe_psql('postgres', q{
INSERT INTO walbig (client, pad) SELECT -1, 'after promotion' FROM generate_series(1, 1000);
CHECKPOINT;});
is( $standby->safe_psql('postgres', $rows_query),
	$primary->safe_psql('postgres', $rows_query) + 1000,
	'the promoted standby takes writes: 1000 rows more than the primary');
cmp_ok(
	$standby->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
	'>=', 2, 'the promoted standby is on a new timeline');
$standby->command_ok(
	[ 'pgbench', '-n', '-c', '8', '-T', '3', '-h', $standby->host, '-p', $standby->port, 'postgres' ],
	'pgbench on the promoted standby');
is( $standby->safe_psql('postgres',
		'SELECT sum(acquisitions) > 0 AND count(*) = 1024 FROM walscale_stats'),
	't', 'the promoted standby inserts WAL through its 1024 locks');

$primary->safe_psql('postgres', "INSERT INTO walbig (client, pad) VALUES (-2, 'after')");
$primary->wait_for_replay_catchup($standby1);
my $primary_after = $primary->safe_psql('postgres', $fingerprint);
is($standby1->safe_psql('postgres', $fingerprint),
	$primary_after, 'standby_1 still follows the old primary: same data');
isnt($primary_after, $expected,
	'(the old primary has written since the first comparison)');

for my $n ($primary, $standby, $standby1)
{
	unlike(slurp_file($n->logfile), qr/PANIC|too many LWLocks taken|terminated by signal/,
		$n->name . ': no PANIC, crash or LWLock error in the log');
}
$_->stop for ($standby1, $standby, $primary);
done_testing();
