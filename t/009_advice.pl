
# Copyright (c) 2026, walscale developers

# The advisor, walscale_advice: one row per setting, with the current and
# the recommended value, whether applying it needs a restart, the figures
# since the last reset, their time span, and the reason.
#
# (a) Right after a reset it has too little data, and says so.
# (b) A contended cluster (1 lock, 32 clients) is told to double the locks
#     and to try 2 conditional attempts.
# (c) An uncontended one (64 locks, 1 client) is told to use fewer locks.
# (d) A cluster whose transactions overflow the fast path (1 group, 40
#     tables in each transaction) is told the smallest power of two of
#     groups that holds twice the relation locks of a transaction, at a
#     restart; after that restart nothing overflows and the advice holds.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $node = PostgreSQL::Test::Cluster->new('advice');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
include = 'walscale_case.conf'
include = 'walscale_fastpath.conf'
max_connections = 60
log_statement = none
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '1GB'
});

sub write_fastpath_conf
{
	my ($groups) = @_;
	open my $fh, '>', $node->data_dir . '/walscale_fastpath.conf' or die $!;
	print $fh "walscale.fastpath_groups = $groups\n";
	close $fh;
	return;
}
write_case_conf($node, 1, 0);
write_fastpath_conf(1);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');

my $small = $node->basedir . '/small_records.sql';
append_to_file($small,
	"SELECT count(pg_logical_emit_message(false, 'walscale', 'small record '"
	  . " || i)) FROM generate_series(1, 20) AS i;\n");

# A row of walscale_advice as a hash.
sub advice
{
	my ($setting) = @_;
	my %row;
	my @cols = qw(current_value recommended_value needs_restart evidence
	  since_ok span_ok reason);
	@row{@cols} = split /\|/, $node->safe_psql(
		'postgres', qq{
SELECT current_value, coalesce(recommended_value, 'NULL'), needs_restart,
       evidence, since = (SELECT stats_reset FROM walscale_fastpath),
       span > interval '0' AND span < interval '1 hour', reason
FROM walscale_advice WHERE setting = '$setting'});
	return \%row;
}

sub reload_with
{
	my ($locks, $attempts) = @_;
	write_case_conf($node, $locks, $attempts);
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		"SELECT insert_locks = $locks AND insert_lock_attempts = $attempts FROM walscale_settings")
	  or die "$locks locks and $attempts attempts did not take effect";
	return;
}

is($node->safe_psql('postgres', 'SELECT string_agg(setting, \',\' ORDER BY setting) FROM walscale_advice'),
	'walscale.fastpath_groups,walscale.insert_lock_attempts,walscale.insert_locks',
	'one row per setting');

# (a) a fresh reset: not enough data, for every setting
$node->safe_psql('postgres', 'SELECT walscale_reset()');
for my $setting (qw(walscale.insert_locks walscale.insert_lock_attempts walscale.fastpath_groups))
{
	my $a = advice($setting);
	is($a->{recommended_value}, 'NULL', "fresh reset, $setting: no recommendation");
	# PostgreSQL 17 has no fast-path groups to recommend, whatever the data
	like($a->{reason},
		$setting eq 'walscale.fastpath_groups' && no_fastpath_groups()
		? qr/^No recommendation: PostgreSQL 17 has 16 fixed fast-path slots per backend and no fast-path lock groups, which PostgreSQL 18 added\. /
		: qr/^Not enough data: \d+ \S.* since the last reset, and at least \d+ are needed\.$/,
		"fresh reset, $setting: says there is not enough data, or that nothing can be recommended");
	is($a->{needs_restart}, 'f', "fresh reset, $setting: nothing to restart for");
	is($a->{since_ok} . $a->{span_ok}, 'tt', "fresh reset, $setting: since the reset, over a span");
}

# (b) contended: 1 lock, 32 clients
$node->safe_psql('postgres', 'SELECT walscale_reset()');
finish_pgbench(start_pgbench($node, 32, 8, '--file' => $small), 'contended');
my $locks = advice('walscale.insert_locks');
note("contended, walscale.insert_locks: $locks->{evidence}: $locks->{reason}");
is($locks->{current_value} . ' ' . $locks->{recommended_value} . ' ' . $locks->{needs_restart},
	'1 2 f', 'contended: 1 lock, 2 recommended, on a reload');
like($locks->{reason}, qr/^Backends slept on [\d.]+ of every 1000 acquisitions, at least 2, with most locks in use: more locks let more of them insert at once\.$/,
	'contended: the reason is the blocking waits');
like($locks->{evidence}, qr/^\d+ acquisitions, \d+ blocking waits \([\d.]+ per 1000\), [\d.]+ ms blocked, 1 of 1 active locks used; \d+ active backend samples over \d+ s: [\d.]+% of active time on the WAL insertion locks \(LWLock:WALInsert\), [\d.]+% on WAL write and flush, most on [a-zA-Z ]+ \([\d.]+%\)$/,
	'contended: the evidence has the figures');
my $attempts = advice('walscale.insert_lock_attempts');
note("contended, walscale.insert_lock_attempts: $attempts->{reason}");
is($attempts->{current_value} . ' ' . $attempts->{recommended_value},
	'0 0', 'contended at 1 lock: no conditional attempts, which need another lock');
like($attempts->{reason}, qr/^With one lock there is no other lock to try/,
	'contended at 1 lock: the reason is that there is no other lock');

# (c) uncontended: 64 locks, 1 client
reload_with(64, 0);
$node->safe_psql('postgres', 'SELECT walscale_reset()');
finish_pgbench(start_pgbench($node, 1, 3, '--file' => $small), 'uncontended');
$locks = advice('walscale.insert_locks');
note("uncontended, walscale.insert_locks: $locks->{evidence}: $locks->{reason}");
is($locks->{current_value}, '64', 'uncontended: 64 locks');
cmp_ok($locks->{recommended_value} =~ /^\d+$/ ? $locks->{recommended_value} : 1e9,
	'<=', 4, 'uncontended: at most 4 recommended');
like($locks->{reason}, qr/^Only \d+ of 64 locks were taken, with [\d.]+ blocking waits per 1000 acquisitions: fewer locks make each WAL flush and all-lock acquisition cheaper\.$/,
	'uncontended: the reason is the unused locks');
$attempts = advice('walscale.insert_lock_attempts');
is($attempts->{recommended_value}, '0', 'uncontended: no attempts recommended');

# auto mode: the advisor leaves the number to it
reload_with(8, 0);
write_case_conf($node, -1, 0);
$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
$node->poll_query_until('postgres', "SELECT insert_locks_mode = 'auto' FROM walscale_settings")
  or die 'auto mode did not start';
finish_pgbench(start_pgbench($node, 1, 2, '--file' => $small), 'auto mode');
$locks = advice('walscale.insert_locks');
is($locks->{current_value} . ' ' . $locks->{recommended_value}, '-1 -1',
	'auto mode: the advisor keeps auto mode');

# (d) the fast path overflows: 1 group of 16 slots, 40 tables a
# transaction, each locked in two weak modes: 80 local locks, some in the
# fast path, most in the main lock table, and 40 slots needed
my $ntables = 40;
$node->safe_psql('postgres',
	join('', map { "CREATE TABLE fp_$_ (id int);\n" } 1 .. $ntables));
my $fp_tables = join(', ', map { "fp_$_" } 1 .. $ntables);
my $fp_script = $node->basedir . '/many_tables.sql';
append_to_file($fp_script, "BEGIN;\n"
	  . "LOCK TABLE $fp_tables IN ROW EXCLUSIVE MODE;\n"
	  . "SELECT count(*) FROM $fp_tables;\n"
	  . "COMMIT;\n");
# 2 x 120 transactions (a number, not a time: a build with assertions plans
# the 40-table join slowly); a backend adds its count in batches of 16
sub fast_path_load
{
	my ($name) = @_;
	$node->command_ok(
		[
			'pgbench', '--no-vacuum', '--client' => 2, '--jobs' => 2,
			'--transactions' => 120, '--file' => $fp_script, 'postgres'
		],
		"$name: pgbench");
	return;
}

# PostgreSQL 17: 16 slots, which no setting changes, and the advice says so
# under the same load, with what the wait samples saw of the slots
if (no_fastpath_groups())
{
	$node->safe_psql('postgres', 'SELECT walscale_reset()');
	fast_path_load('fast path on PostgreSQL 17');
	my $fp = advice('walscale.fastpath_groups');
	note("fast path on PostgreSQL 17: $fp->{evidence}: $fp->{reason}");
	is("$fp->{current_value} $fp->{recommended_value} $fp->{needs_restart}",
		'1 NULL f',
		'fast path on PostgreSQL 17: the value configured, no recommendation, nothing to restart for');
	like($fp->{reason},
		qr/^No recommendation: PostgreSQL 17 has 16 fixed fast-path slots per backend and no fast-path lock groups, which PostgreSQL 18 added\. No setting changes the number of fast-path slots here, so "walscale\.fastpath_groups" is not in effect\./,
		'fast path on PostgreSQL 17: the reason says why');
	my ($full, $held) = $fp->{evidence} =~
	  /^\d+ samples of backends holding fast-path locks, (\d+) with all 16 slots full, at most (\d+) slots held$/;
	ok(defined $held, 'fast path on PostgreSQL 17: the evidence has the samples');
	cmp_ok($full // 0, '>', 0,
		"fast path on PostgreSQL 17: backends locking $ntables tables were seen with all 16 slots full");
	is($held // 0, 16, 'fast path on PostgreSQL 17: at most the 16 slots held');
}

SKIP:
{
	skip no_fastpath_groups(), 12 if no_fastpath_groups();

	is($node->safe_psql('postgres', 'SELECT groups_per_backend FROM walscale_fastpath'),
		'1', 'fast path: 1 group per backend');
	$node->safe_psql('postgres', 'SELECT walscale_reset()');
	fast_path_load('fast path');
	my $fp = advice('walscale.fastpath_groups');
	note("fast path, 1 group: $fp->{evidence}: $fp->{reason}");
	my ($xacts, $most, $overflows) = $fp->{evidence} =~
	  /^(\d+) transactions, at most (\d+) fast-path relation locks in one, (\d+) overflows; 1 group of 16 slots$/;
	ok(defined $most, 'fast path: the evidence has the transactions, the most locks in one, the overflows');
	$most //= 0;
	cmp_ok($xacts // 0, '>=', 100, 'fast path: enough transactions counted');
	cmp_ok($most, '>=', $ntables, "fast path: at least the $ntables tables of a transaction seen in one");
	cmp_ok($most, '<', 2 * $ntables,
		'fast path: a relation locked in two modes counted as the one slot it takes');
	cmp_ok($overflows // 0, '>', 0, 'fast path: overflows counted');
	my $want = 1;
	$want *= 2 while $want * 16 < 2 * $most;
	is($fp->{current_value} . ' ' . $fp->{recommended_value} . ' ' . $fp->{needs_restart},
		"1 $want t",
		"fast path: $want groups (twice $most slots, a power of two) recommended, at a restart");
	like($fp->{reason}, qr/^Transactions needed up to $most fast-path slots and \d+ lock acquisitions overflowed: $want groups hold twice that, as headroom because relations hash to groups unevenly; it costs [\d.]+ kB of shared memory \(7 groups x 72 bytes x \d+ processes\)\.$/,
		'fast path: the reason names the slots, the overflows and the headroom');

	# applied: nothing overflows, and the advice holds (relation OIDs in a row
	# spread evenly over the groups)
	write_fastpath_conf($want);
	$node->restart;
	$node->safe_psql('postgres', 'SELECT walscale_reset()');
	fast_path_load('fast path, advice applied');
	$fp = advice('walscale.fastpath_groups');
	note("fast path, $want groups: $fp->{evidence}: $fp->{reason}");
	like($fp->{evidence}, qr/ 0 overflows; $want groups of 16 slots$/,
		"fast path, $want groups: no overflow");
	is($fp->{current_value} . ' ' . $fp->{recommended_value} . ' ' . $fp->{needs_restart},
		"$want $want f", "fast path, $want groups: the advice holds, nothing to restart for");
}

$node->stop;
done_testing();
