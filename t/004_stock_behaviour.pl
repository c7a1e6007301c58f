
# Copyright (c) 2026, walscale developers

# Without walscale preloaded, the patched server must behave like stock
# PostgreSQL, and walscale's functions must say why they cannot work.
# Preloaded into a stock server, walscale must refuse to start it, in words.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $not_preloaded =
  qr/ERROR:  55000: walscale must be loaded via "shared_preload_libraries"/;
my $needs_patch =
  qr/walscale requires a PostgreSQL server built with walscale's core patch/;

# lists that must be the same on the patched server without walscale and
# on the stock server
my %same_as_stock = (
	'wait events' =>
	  q{SELECT string_agg(type || ':' || name, ',' ORDER BY type, name)
FROM pg_wait_events},
	# less the settings that only builds with assertions have: make test
	# runs this on the test flavor, which has them, and the stock build
	# does not
	'settings' =>
	  q{SELECT string_agg(name || ':' || vartype || ':' || context, ','
                  ORDER BY name)
FROM pg_settings
WHERE name NOT IN ('debug_copy_parse_plan_trees',
                   'debug_raw_expression_coverage_test',
                   'debug_write_read_parse_plan_trees')},
	'max_locks_per_transaction' => 'SHOW max_locks_per_transaction',);

# (a) the patched server with no module loaded
my $patched = PostgreSQL::Test::Cluster->new('patched_no_module');
$patched->init;
$patched->append_conf('postgresql.conf', 'log_statement = none');
$patched->start;

$patched->command_ok(
	[ 'pgbench', '--initialize', '--scale' => 1, 'postgres' ],
	'patched without walscale: pgbench --initialize');
$patched->pgbench(
	'--no-vacuum --client=4 --jobs=2 --time=3',
	0,
	[
		qr{transactions actually processed: [1-9]},
		qr{number of failed transactions: 0 }
	],
	[qr{^$}],
	'patched without walscale: pgbench');

my $wal_before = $patched->safe_psql('postgres',
	'SELECT pg_walfile_name(pg_current_wal_lsn())');
$patched->safe_psql(
	'postgres', q{
CHECKPOINT;
INSERT INTO pgbench_history (tid, bid, aid, delta) VALUES (1, 1, 1, 1);
SELECT pg_switch_wal();
CHECKPOINT;
});
isnt(
	$patched->safe_psql(
		'postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())'),
	$wal_before,
	'patched without walscale: CHECKPOINT and pg_switch_wal work');

is( $patched->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_wait_events
WHERE type = 'LWLock' AND name = 'WALInsert'}),
	'1',
	'patched without walscale: pg_wait_events lists LWLock WALInsert');
is( $patched->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_wait_events
WHERE type = 'LWLock' AND name = 'walscale'}),
	'0',
	'patched without walscale: no walscale tranche');
is( $patched->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_stat_activity
WHERE pid = pg_backend_pid() AND wait_event IS NULL}),
	'1',
	'patched without walscale: pg_stat_activity works');

$patched->safe_psql('postgres', 'CREATE EXTENSION walscale');
is( $patched->safe_psql(
		'postgres',
		q{SELECT extversion FROM pg_extension WHERE extname = 'walscale'}),
	'1.2',
	'patched without walscale: CREATE EXTENSION walscale works');

foreach my $query (
	'SELECT * FROM walscale_stats',
	'SELECT * FROM walscale_fastpath',
	'SELECT * FROM walscale_settings',
	'SELECT * FROM walscale_auto_decisions',
	'SELECT * FROM walscale_advice',
	'SELECT walscale_reset()')
{
	my ($stdout, $stderr);
	my $ret = $patched->psql(
		'postgres', "\\set VERBOSITY verbose\n$query",
		stdout => \$stdout,
		stderr => \$stderr);
	isnt($ret, 0, "patched without walscale: \"$query\" fails");
	like($stderr, $not_preloaded,
		"patched without walscale: \"$query\" raises 55000");
}
is($patched->safe_psql('postgres', 'SELECT 1'),
	'1', 'patched without walscale: the server still answers');

# (b) the stock server, which scripts/test.sh names in PG_STOCK
ok(defined $ENV{PG_STOCK} && -x "$ENV{PG_STOCK}/bin/postgres",
	'PG_STOCK names a PostgreSQL installation')
  or BAIL_OUT('set PG_STOCK to the stock PostgreSQL installation');
my $stock =
  PostgreSQL::Test::Cluster->new('stock', install_path => $ENV{PG_STOCK});
$stock->init;
$stock->append_conf('postgresql.conf', 'log_statement = none');
$stock->start;
is( $stock->safe_psql(
		'postgres', q{SELECT setting FROM pg_config WHERE name = 'BINDIR'}),
	"$ENV{PG_STOCK}/bin",
	'the stock node runs the stock server');

foreach my $what (sort keys %same_as_stock)
{
	is( $patched->safe_psql('postgres', $same_as_stock{$what}),
		$stock->safe_psql('postgres', $same_as_stock{$what}),
		"patched without walscale: $what as in stock PostgreSQL");
}
$patched->stop;
$stock->stop;

# walscale.so was built for the patched server: make the stock one find it
my $pg_config =
  defined $ENV{PG_PATCHED} ? "$ENV{PG_PATCHED}/bin/pg_config" : 'pg_config';
my ($pkglibdir) = run_command([ $pg_config, '--pkglibdir' ]);
chomp $pkglibdir;
ok(-f "$pkglibdir/walscale.so", "walscale.so is installed in $pkglibdir");

$stock->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
dynamic_library_path = '$pkglibdir'
});
my $log_offset = -s $stock->logfile;
ok(!$stock->start(fail_ok => 1),
	'stock server with walscale preloaded refuses to start');
my $log = slurp_file($stock->logfile, $log_offset);
like($log, qr/FATAL:\s+$needs_patch/,
	'stock server: the log says walscale needs the core patch');
like(
	$log,
	qr/This server is a stock PostgreSQL 18/,
	'stock server: the log says which server it is');
unlike($log, qr/undefined symbol/i, 'stock server: no "undefined symbol"');

# without walscale preloaded, the stock server starts again
$stock->adjust_conf('postgresql.conf', 'shared_preload_libraries', "''");
$stock->start;
is($stock->safe_psql('postgres', 'SELECT 1'),
	'1', 'stock server starts again without walscale');
$stock->stop;

done_testing();
