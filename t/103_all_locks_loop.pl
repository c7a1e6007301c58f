
# Copyright (c) 2026, walscale developers

# Everything that takes all WAL insertion locks at once, in a loop, while 32
# clients insert, at walscale.insert_locks = 1024: CHECKPOINT,
# pg_backup_start / pg_backup_stop, pg_switch_wal, and full_page_writes
# changed by ALTER SYSTEM and a reload (the checkpointer then writes an
# XLOG_FPW_CHANGE record under all locks).  No statement may fail, no client
# transaction may fail, and the log must not say "too many LWLocks taken".
# A CHECKPOINT timed on its own in each round must finish within
# $checkpoint_limit seconds although the clients make conditional attempts:
# inserters must not hop onto the locks a checkpoint has yet to take.
#
# WALSCALE_LOOP_SECONDS (default 30) sets the duration.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $seconds = $ENV{WALSCALE_LOOP_SECONDS} // 30;
my $checkpoint_limit = 60;

my $node = PostgreSQL::Test::Cluster->new('all_locks');
# small segments, so that the many WAL switches use little disk
$node->init(allows_streaming => 1, extra => ['--wal-segsize=1']);
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1024
walscale.insert_lock_attempts = 3
max_connections = 50
log_statement = none
max_wal_size = 32MB
min_wal_size = 8MB
});
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION walscale;
CREATE EXTENSION pg_walinspect;
CREATE TABLE ins (id bigserial PRIMARY KEY, client int, pad text);
});
my $before = $node->safe_psql('postgres',
	'SELECT min(exclusive_acquisitions) FROM walscale_stats');

my $script = $node->basedir . '/insert.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"INSERT INTO ins (client, pad) SELECT :client_id, repeat('x', 300) FROM generate_series(1, 5);\n"
);
my $pgbench = start_pgbench($node, 32, $seconds, '--file' => $script);

# one session for each round, as pg_backup_start and pg_backup_stop must
# share one
my $round_sql = q{
\set ON_ERROR_STOP 1
CHECKPOINT;
SELECT pg_backup_start('walscale', fast => true) IS NOT NULL;
SELECT pg_switch_wal() IS NOT NULL;
INSERT INTO ins (client, pad) VALUES (0, 'in backup');
SELECT lsn IS NOT NULL FROM pg_backup_stop(wait_for_archive => false);
SELECT pg_switch_wal() IS NOT NULL;
ALTER SYSTEM SET full_page_writes = off;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
CHECKPOINT;
ALTER SYSTEM SET full_page_writes = on;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
};
my $start = time;
my $rounds = 0;
my @failures;
my @checkpoint_seconds;
while (time - $start < $seconds)
{
	my ($stdout, $stderr);
	my $t0 = time;
	$node->safe_psql('postgres', 'CHECKPOINT');
	push @checkpoint_seconds, time - $t0;
	my $ret = $node->psql('postgres', $round_sql, stdout => \$stdout, stderr => \$stderr);
	push @failures, "round $rounds: exit $ret: $stderr" if $ret != 0 || $stderr ne '';
	$rounds++;
}
my $xacts = finish_pgbench($pgbench, '32 clients');

is(scalar @failures, 0, "$rounds rounds of CHECKPOINT, backup, WAL switch and full_page_writes changes without an error")
  or diag(join "\n", @failures[ 0 .. ($#failures < 4 ? $#failures : 4) ]);
cmp_ok($rounds, '>=', 3, "at least 3 rounds ($rounds)");
my @sorted = sort { $a <=> $b } @checkpoint_seconds;
my $median = $sorted[ int($#sorted / 2) ];
note(sprintf('CHECKPOINT under 32 inserting clients at 3 attempts: '
	  . 'median %.3f s, max %.3f s over %d', $median, $sorted[-1], scalar @sorted));
cmp_ok($sorted[-1], '<', $checkpoint_limit,
	sprintf('every timed CHECKPOINT took less than %d s (max %.3f s)',
		$checkpoint_limit, $sorted[-1]));
cmp_ok($xacts, '>', 100, "the 32 clients committed ($xacts transactions)");

# every round took all 1024 locks at least 5 times (two checkpoints, backup
# start and stop, two switches, the full_page_writes changes), each time all
# of them: the exclusive counter is the same on every lock
my ($min, $max, $locks) = split /\|/, $node->safe_psql('postgres',
	'SELECT min(exclusive_acquisitions), max(exclusive_acquisitions), count(*) FROM walscale_stats');
is($locks, 1024, '1024 insertion locks');
is($min, $max, "every all-locks acquisition took each of the 1024 locks ($max)");
cmp_ok($min - $before, '>=', 5 * $rounds, 'at least 5 all-locks acquisitions per round');

my $log = slurp_file($node->logfile);
unlike($log, qr/too many LWLocks taken/, 'no "too many LWLocks taken"');
unlike($log, qr/PANIC|terminated by signal|TRAP:/, 'no PANIC or crash');
my @errors = $log =~ /^.*(?:ERROR|FATAL):.*$/mg;
is(scalar @errors, 0, 'no ERROR or FATAL in the server log')
  or diag(join "\n", @errors[ 0 .. ($#errors < 4 ? $#errors : 4) ]);

# the checkpointer does apply a full_page_writes change under all locks: an
# XLOG_FPW_CHANGE record follows (looked for only once WAL was flushed past
# the starting point, where pg_walinspect would find no record yet)
my $lsn = $node->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
$node->safe_psql('postgres',
	q{ALTER SYSTEM SET full_page_writes = off; SELECT pg_reload_conf()});
ok( $node->poll_query_until(
		'postgres', qq{
SELECT CASE WHEN pg_current_wal_flush_lsn() > '$lsn' THEN
  (SELECT count(*) > 0 FROM pg_get_wal_records_info('$lsn', pg_current_wal_flush_lsn())
   WHERE record_type = 'FPW_CHANGE') END}),
	'a full_page_writes change is written as XLOG_FPW_CHANGE');
$node->safe_psql('postgres',
	q{ALTER SYSTEM RESET full_page_writes; SELECT pg_reload_conf()});

# a clean shutdown (a shutdown checkpoint, all locks) and restart
$node->stop('fast');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*) > 0 FROM ins'), 't', 'restart after the loop');
$node->stop;
done_testing();
