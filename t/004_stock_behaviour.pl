
# Copyright (c) 2026, walscale developers

# Without walscale preloaded, the patched server must behave like stock
# PostgreSQL, and walscale's functions must say why they cannot work.
# Preloaded into a stock server, walscale must never stop it from starting:
# one WARNING says what is missing, the settings keep their values and are
# shown as not in effect, the functions that need the core say so, and the
# others return what a stock server has.  A bad value still stops it.

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
		q{SELECT extversion = default_version FROM pg_extension, pg_available_extensions
		  WHERE extname = 'walscale' AND name = extname}),
	't',
	'patched without walscale: CREATE EXTENSION walscale installs the default version');

foreach my $query (
	'SELECT * FROM walscale_stats',
	'SELECT * FROM walscale_fastpath',
	'SELECT * FROM walscale_settings',
	'SELECT * FROM walscale_setting_status',
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
# the running server's version, as Debian's builds extend it
my $stock_version = $stock->safe_psql('postgres', 'SHOW server_version');
$patched->stop;
$stock->stop;

my $observe_mode =
  qr/WARNING:  walscale is in observe mode: its settings are not in effect/;
my $no_core =
  qr/This server is PostgreSQL \Q$stock_version\E without walscale's core patch\./;

# The module built against the patched server's headers, loaded into the
# stock server: it starts, in observe mode.  (Only preloaded: CREATE
# EXTENSION would load the stock server's own $libdir/walscale.)
my $pg_config =
  defined $ENV{PG_PATCHED} ? "$ENV{PG_PATCHED}/bin/pg_config" : 'pg_config';
my ($patched_libdir) = run_command([ $pg_config, '--pkglibdir' ]);
chomp $patched_libdir;
ok(-f "$patched_libdir/walscale.so",
	"the patched server's walscale.so is installed in $patched_libdir");
$stock->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
dynamic_library_path = '$patched_libdir'
walscale.insert_locks = 64
});
my $log_offset = -s $stock->logfile;
ok($stock->start(fail_ok => 1),
	'stock server with the patched build of walscale preloaded starts');
my $log = slurp_file($stock->logfile, $log_offset);
like($log, $observe_mode, 'patched build on stock: the log says observe mode');
like($log, qr/DETAIL:  $no_core/, 'patched build on stock: and why');
unlike($log, qr/undefined symbol/i, 'patched build on stock: no "undefined symbol"');
is($stock->safe_psql('postgres', 'SHOW walscale.insert_locks'),
	'64', 'patched build on stock: walscale.insert_locks keeps its value');
$stock->stop;

# The module built against the stock server's headers (make test installs
# it into the stock server), with its SQL.
$stock->adjust_conf('postgresql.conf', 'dynamic_library_path', q{'$libdir'});
$log_offset = -s $stock->logfile;
$stock->start;
$log = slurp_file($stock->logfile, $log_offset);
my @warnings = $log =~ /^.*WARNING:  .*$/mg;
is(scalar(grep { /$observe_mode/ } @warnings),
	1, 'stock build on stock: one WARNING says observe mode');
is(scalar(@warnings), 1, 'stock build on stock: and no other warning')
  or diag(join "\n", @warnings);
like(
	$log,
	qr/HINT:  Install the PostgreSQL server built with walscale's core patch version \d+/,
	'stock build on stock: the hint says what to install');
is( $stock->safe_psql(
		'postgres',
		q{SELECT string_agg(backend_type, ',') FROM pg_stat_activity
WHERE backend_type = 'walscale' AND wait_event = 'Extension'}),
	'walscale',
	'stock build on stock: walscale\'s worker runs, to sample wait events');

$stock->safe_psql('postgres', 'CREATE EXTENSION walscale');
# PostgreSQL 17 has no fast-path groups: no effective number, and that reason
my $no_groups = no_fastpath_groups();
my $status = $stock->safe_psql(
	'postgres', q{
SELECT setting || '=' || configured || ':' || coalesce(effective::text, '')
       || ':' || in_effect
FROM walscale_setting_status ORDER BY setting});
is( $status,
	join("\n",
		'walscale.auto_interval=10s:10:false',
		'walscale.auto_min_locks=8:8:false',
		'walscale.fastpath_groups=0:'
		  . $stock->safe_psql('postgres',
			'SELECT coalesce(groups_per_backend::text, \'\') FROM walscale_fastpath')
		  . ':false',
		'walscale.insert_lock_attempts=0:0:false',
		'walscale.insert_locks=64:8:false'),
	'stock build on stock: every setting keeps its value, and none is in effect'
);
is( $stock->safe_psql(
		'postgres',
		q{SELECT count(*) FROM walscale_setting_status
WHERE reason ~ 'without walscale''s core patch'}),
	$stock->safe_psql('postgres',
		    'SELECT count(*) FROM walscale_setting_status'
		  . ($no_groups ? q{ WHERE setting <> 'walscale.fastpath_groups'} : '')),
	'stock build on stock: each says the core patch is missing');
SKIP:
{
	skip 'PostgreSQL 18 has fast-path lock groups', 1 unless $no_groups;
	is( $stock->safe_psql(
			'postgres', q{
SELECT effective IS NULL AND NOT in_effect
       AND reason = 'PostgreSQL 17 has 16 fixed fast-path slots per backend and no fast-path lock groups, which PostgreSQL 18 added.'
FROM walscale_setting_status WHERE setting = 'walscale.fastpath_groups'}),
		't',
		'stock build on stock: walscale.fastpath_groups says that PostgreSQL 17 has no fast-path groups'
	);
}
is( $stock->safe_psql(
		'postgres', q{
SELECT coalesce(core_version::text, 'none') || ' ' || insert_locks || ' '
       || insert_locks_configured || ' ' || insert_locks_allocated || ' '
       || insert_lock_attempts || ' ' || insert_locks_mode
FROM walscale_settings}),
	'none 8 64 8 0 not in effect',
	'stock build on stock: walscale_settings gives what a stock server runs with');
is( $stock->safe_psql(
		'postgres',
		$no_groups
		? q{SELECT overflows IS NULL AND groups_per_backend IS NULL AND slots_per_backend = 16
FROM walscale_fastpath}
		: q{SELECT overflows IS NULL AND slots_per_backend = 16 * groups_per_backend
FROM walscale_fastpath}),
	't',
	'stock build on stock: walscale_fastpath gives the groups and no overflow count');
is($stock->safe_psql('postgres', 'SELECT count(*) FROM walscale_auto_decisions'),
	'0', 'stock build on stock: walscale_auto_decisions has no decision');
is($stock->safe_psql('postgres', 'SELECT walscale_reset() IS NOT NULL'),
	't', 'stock build on stock: walscale_reset() works');
foreach my $view ('walscale_stats')
{
	my ($stdout, $stderr);
	$stock->psql(
		'postgres', "\\set VERBOSITY verbose\nSELECT * FROM $view",
		stdout => \$stdout,
		stderr => \$stderr);
	like(
		$stderr,
		qr/ERROR:  0A000: $view needs walscale's core patch\nDETAIL:  $no_core/,
		"stock build on stock: $view raises 0A000, and says why");
}
is( $stock->safe_psql(
		'postgres',
		q{SELECT string_agg(setting || ':' || coalesce(recommended_value, 'NULL'), ','
                 ORDER BY setting) FROM walscale_advice}),
	'walscale.fastpath_groups:NULL,walscale.insert_lock_attempts:NULL,walscale.insert_locks:NULL',
	'stock build on stock: walscale_advice works, with too little data yet');
$stock->command_ok(
	[ 'pgbench', '--initialize', '--scale' => 1, 'postgres' ],
	'stock build on stock: pgbench --initialize');
$stock->pgbench(
	'--no-vacuum --client=4 --jobs=2 --time=2',
	0,
	[ qr{transactions actually processed: [1-9]}, qr{number of failed transactions: 0 } ],
	[qr{^$}],
	'stock build on stock: pgbench');
$stock->stop;

# a bad value still stops the server, as PostgreSQL does for its own
$stock->append_conf('postgresql.conf', 'walscale.insert_locks = 0');
$log_offset = -s $stock->logfile;
ok(!$stock->start(fail_ok => 1),
	'stock build on stock: walscale.insert_locks = 0 stops the server');
like(
	slurp_file($stock->logfile, $log_offset),
	qr/invalid value for parameter "walscale.insert_locks": 0/,
	'stock build on stock: the log names the setting');
$stock->adjust_conf('postgresql.conf', 'walscale.insert_locks', '64');
$stock->start;
is($stock->safe_psql('postgres', 'SELECT 1'),
	'1', 'stock build on stock: starts again once the value is fixed');
$stock->stop;

done_testing();
