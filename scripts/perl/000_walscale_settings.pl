# walscale: the settings of TEMP_CONFIG are in effect on the nodes of
# src/test/recovery and of the WAL tools' TAP suites, into whose t/
# scripts/test-postgres.sh copies this file
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use Test::More;
# insert_locks/insert_lock_attempts/fastpath_groups as walscale_settings
# gives them.  PostgreSQL 17 has no fast-path lock groups: there the column
# is NULL whatever the setting, which is then only shown to be read.
my $settings_sql = q{SELECT insert_locks || '/' || insert_lock_attempts || '/' ||
	CASE WHEN current_setting('server_version_num')::int >= 180000
		THEN fastpath_groups::text
		WHEN fastpath_groups IS NULL
		THEN current_setting('walscale.fastpath_groups') END
	FROM walscale_settings};
my $node = PostgreSQL::Test::Cluster->new('walscale');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
is( $node->safe_psql('postgres',
		$settings_sql),
	$ENV{WALSCALE_EXPECT}, 'walscale settings from TEMP_CONFIG');
$node->stop;

# a node that sets shared_preload_libraries itself, as 027_stream_regress.pl
# does, keeps walscale (scripts/perl/WalscalePreload.pm) and its own library
ok($WalscalePreload::active, 'WalscalePreload is loaded');
my $own = PostgreSQL::Test::Cluster->new('own_libraries');
$own->init;
$own->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_stat_statements'");
$own->start;
is($own->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'walscale,pg_stat_statements', 'own shared_preload_libraries with walscale');
$own->safe_psql('postgres', 'CREATE EXTENSION walscale');
is( $own->safe_psql('postgres',
		$settings_sql),
	$ENV{WALSCALE_EXPECT}, 'walscale settings with own shared_preload_libraries');
$own->stop;
done_testing();
