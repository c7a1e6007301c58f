
# Copyright (c) 2026, walscale developers

# Fast-path lock groups sized by walscale.fastpath_groups, or derived from
# max_locks_per_transaction as PostgreSQL does when it is 0, and the count
# of relation locks that found their fast-path group full.

use strict;
use warnings FATAL => 'all';

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

# PostgreSQL 17 has 16 fixed slots per backend: nothing here exists there
plan skip_all => no_fastpath_groups() if no_fastpath_groups();

# relations locked by one transaction
my $tables = 40;

# PostgreSQL's own sizing, from InitializeFastPathLocks(): slots for
# max_locks_per_transaction locks, in groups of 16, 1 to 1024 groups
my $slots_per_group = 16;
my $max_groups = 1024;

sub derived_groups
{
	my ($max_locks_per_xact) = @_;
	my $pow2 = 1;
	$pow2 *= 2 while $pow2 < $max_locks_per_xact;
	my $groups = $pow2 / $slots_per_group;
	$groups = $max_groups if $groups > $max_groups;
	$groups = 1 if $groups < 1;
	return $groups;
}

my $node = PostgreSQL::Test::Cluster->new('fastpath');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
log_statement = none
# only this test's backends may take relation locks
autovacuum = off
include = 'walscale_case.conf'
});

sub set_case
{
	my ($settings) = @_;
	my $file = $node->data_dir . '/walscale_case.conf';

	open my $fh, '>', $file or die "could not write \"$file\": $!";
	print $fh $settings;
	close $fh;
	return;
}

set_case("walscale.fastpath_groups = 1\n");
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
$node->safe_psql(
	'postgres', qq{
DO \$\$
BEGIN
  FOR i IN 1..$tables LOOP
    EXECUTE format('CREATE TABLE fp_%s (i int)', i);
  END LOOP;
END \$\$;
});
my $lock_all =
	'LOCK TABLE '
  . join(', ', map { "fp_$_" } 1 .. $tables)
  . ' IN ACCESS SHARE MODE';

# In one transaction, lock every table, then report the relation locks this
# backend holds: on our tables by the fast path and in all, and all its
# fast-path relation locks.
sub lock_tables
{
	my $out = $node->safe_psql(
		'postgres', qq{
BEGIN;
$lock_all;
SELECT count(*) FILTER (WHERE l.fastpath AND c.relname LIKE 'fp\\_%'),
       count(*) FILTER (WHERE c.relname LIKE 'fp\\_%'),
       count(*) FILTER (WHERE l.fastpath)
FROM pg_locks l LEFT JOIN pg_class c ON c.oid = l.relation
WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation';
COMMIT;
});
	return split(/\|/, $out);
}

sub fastpath_row
{
	return split(
		/\|/,
		$node->safe_psql(
			'postgres',
			'SELECT groups_per_backend, slots_per_backend, overflows FROM walscale_fastpath'
		));
}

# 1. one group: 16 slots, and a transaction with more locks overflows
my $name = 'fastpath_groups = 1';
is( $node->safe_psql(
		'postgres',
		'SELECT fastpath_groups, fastpath_groups_source FROM walscale_settings'
	),
	'1|walscale.fastpath_groups',
	"$name: walscale_settings");

my ($groups, $slots, $overflows_before) = fastpath_row();
is($groups, 1, "$name: one group per backend");
is($slots, $slots_per_group, "$name: $slots_per_group slots per backend");

my ($ours_fast, $ours, $all_fast) = lock_tables();
is($ours, $tables, "$name: the transaction holds all $tables table locks");
cmp_ok($all_fast, '<=', $slots,
	"$name: pg_locks shows at most $slots fast-path relation locks");
cmp_ok($ours_fast, '>', 0, "$name: some table locks used the fast path");

my (undef, undef, $overflows_after) = fastpath_row();
cmp_ok(
	$overflows_after - $overflows_before,
	'>=',
	$tables - $slots,
	"$name: at least $tables - $slots overflows counted");

# a reset, with overflows counted before it, starts the count afresh and
# records the time it was called
my ($before_reset, $after_reset, $reset_in_time) = split /\|/,
  $node->safe_psql(
	'postgres', q{
SELECT overflows AS overflows_before_reset, clock_timestamp() AS before_reset
FROM walscale_fastpath \gset
SELECT walscale_reset() AS reset_at \gset
SELECT :overflows_before_reset, overflows,
       stats_reset = :'reset_at'
       AND :'reset_at'::timestamptz BETWEEN :'before_reset' AND clock_timestamp()
FROM walscale_fastpath;
});
cmp_ok($before_reset, '>=', $tables - $slots,
	"$name: the overflows are still counted before a reset");
is($after_reset, '0',
	"$name: walscale_reset() starts the overflow count afresh");
is($reset_in_time, 't',
	"$name: walscale_fastpath.stats_reset is the time walscale_reset() was called"
);

# counting goes on from the reset, not from where it was before it
lock_tables();
my (undef, undef, $overflows_again) = fastpath_row();
cmp_ok($overflows_again, '>=', $tables - $slots,
	"$name: the same transaction after the reset counts its overflows again");
cmp_ok($overflows_again, '<', $before_reset + $tables - $slots,
	"$name: counted from the reset");

# 2. 0: derived from max_locks_per_transaction, as PostgreSQL does
$name = 'fastpath_groups = 0';
set_case("walscale.fastpath_groups = 0\n");
$node->restart;
my $max_locks =
  $node->safe_psql('postgres', 'SHOW max_locks_per_transaction');
is($max_locks, '64', "$name: default max_locks_per_transaction");
is( $node->safe_psql(
		'postgres', q{
SELECT w.groups_per_backend, w.slots_per_backend,
       s.fastpath_groups, s.fastpath_groups_source
FROM walscale_fastpath w, walscale_settings s}),
	derived_groups($max_locks) . '|'
	  . derived_groups($max_locks) * $slots_per_group
	  . '|4|max_locks_per_transaction',
	"$name: four groups, derived from max_locks_per_transaction");
($ours_fast, $ours, $all_fast) = lock_tables();
cmp_ok(
	$all_fast, '<=',
	derived_groups($max_locks) * $slots_per_group,
	"$name: pg_locks shows at most slots_per_backend fast-path locks");

$name = 'fastpath_groups = 0, max_locks_per_transaction = 256';
set_case("walscale.fastpath_groups = 0\nmax_locks_per_transaction = 256\n");
$node->restart;
is( $node->safe_psql(
		'postgres',
		'SELECT groups_per_backend, fastpath_groups_source FROM walscale_fastpath, walscale_settings'
	),
	derived_groups(256) . '|max_locks_per_transaction',
	"$name: derived from max_locks_per_transaction");

$name = 'fastpath_groups = 2, max_locks_per_transaction = 256';
set_case("walscale.fastpath_groups = 2\nmax_locks_per_transaction = 256\n");
$node->restart;
is( $node->safe_psql(
		'postgres',
		'SELECT groups_per_backend, fastpath_groups_source FROM walscale_fastpath, walscale_settings'
	),
	'2|walscale.fastpath_groups',
	"$name: walscale's setting wins");

# 3. the largest number of groups
$name = 'fastpath_groups = 1024';
set_case("walscale.fastpath_groups = 1024\n");
$node->restart;
($groups, $slots) = fastpath_row();
is($groups, $max_groups, "$name: 1024 groups per backend");
is($slots, $max_groups * $slots_per_group, "$name: slots per backend");
($ours_fast, $ours, $all_fast) = lock_tables();
is($ours_fast, $tables, "$name: every table lock used the fast path");
cmp_ok($all_fast, '<=', $slots,
	"$name: pg_locks shows at most slots_per_backend fast-path locks");
$node->stop;

# 4. single-user mode applies the setting too
$name = 'single-user mode, fastpath_groups = 8, insert_locks = 32';
my $input =
  "SELECT groups_per_backend, (SELECT count(*) FROM walscale_stats) AS locks FROM walscale_fastpath;\n";
my ($stdout, $stderr);
IPC::Run::run(
	[
		'postgres', '--single',
		'-D' => $node->data_dir,
		'-c' => 'walscale.fastpath_groups=8',
		'-c' => 'walscale.insert_locks=32',
		'postgres'
	],
	'<' => \$input,
	'>' => \$stdout,
	'2>' => \$stderr,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
is($? >> 8, 0, "$name: exits with status 0");
like($stdout, qr/groups_per_backend = "8"/, "$name: eight fast-path groups");
like($stdout, qr/locks = "32"/, "$name: 32 insertion locks");

done_testing();
