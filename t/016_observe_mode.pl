
# Copyright (c) 2026, walscale developers

# Observe mode: walscale's worker samples the backends' wait events and
# fast-path slots on a stock server as on a patched one, and walscale_advice
# says from the samples whether the WAL insertion locks are the bottleneck.
# Three stock servers with walscale preloaded run a load each, at the same
# time, for a little more than the advisor's shortest span:
#
# (a) WAL-heavy, large records from 32 clients: the advice names the WAL
#     insertion locks and the patched server's number;
# (b) one-row commits with synchronous_commit = on and fsync = on: WAL
#     flush, which more locks do not help, and what would;
# (c) transactions that lock 40 tables with one fast-path group: the
#     groups fill, and the advice says how many would hold them, and what
#     they cost.
#
# Then idle sessions are counted as idle, sampling stops at 0, and on the
# patched server the same samples stand beside the counters, the advice
# recommends no fewer fast-path groups from a short span (though 1 group,
# PostgreSQL's own number at max_locks_per_transaction = 16, would hold
# what the transactions took), and it says when
# the locks it counts as used were resized since the reset.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

ok(defined $ENV{PG_STOCK} && -x "$ENV{PG_STOCK}/bin/postgres",
	'PG_STOCK names a PostgreSQL installation')
  or BAIL_OUT('set PG_STOCK to the stock PostgreSQL installation');

# the advisor needs samples over 30 s (ADVICE_MIN_SAMPLED_SPAN_S)
my $load_seconds = 33;

sub stock_node
{
	my ($name, $conf) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name,
		install_path => $ENV{PG_STOCK});
	$node->init;
	$node->append_conf(
		'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
walscale.sample_interval = 10ms
max_connections = 60
log_statement = none
$conf
});
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
	return $node;
}

sub advice_of
{
	my ($node, $setting) = @_;
	my ($recommended, $reason, $evidence) = split /\|/,
	  $node->safe_psql(
		'postgres', qq{
SELECT coalesce(recommended_value, 'NULL'), reason, evidence
FROM walscale_advice WHERE setting = '$setting'}), 3;
	return { recommended => $recommended, reason => $reason, evidence => $evidence };
}

sub script
{
	my ($node, $name, $sql) = @_;
	my $file = $node->basedir . "/$name.sql";
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $sql;
	close $fh;
	return $file;
}

my $insert = stock_node(
	'stock_insert', q{
synchronous_commit = off
wal_buffers = 64MB
max_wal_size = 4GB
});
my $flush = stock_node(
	'stock_flush', q{
synchronous_commit = on
fsync = on
});
my $fastpath = stock_node('stock_fastpath', 'max_locks_per_transaction = 16');

# on a fresh reset, and before the span, no advice
foreach my $node ($insert, $flush, $fastpath)
{
	$node->safe_psql('postgres', 'SELECT walscale_reset()');
}
my $early = advice_of($insert, 'walscale.insert_locks');
is($early->{recommended}, 'NULL', 'fresh reset: no recommendation');
like(
	$early->{reason},
	qr/^Not enough data: \d+ active backend samples over \d+ s since the last reset, and at least 1000 over 30 s are needed\.$/,
	'fresh reset: not enough data, and the span it needs');

$fastpath->safe_psql('postgres',
	join('', map { "CREATE TABLE fp$_ (id int);" } 1 .. 40));
$flush->safe_psql('postgres',
	'CREATE TABLE committed (id int, at timestamptz DEFAULT now())');

my @runs = (
	start_pgbench(
		$insert, 32, $load_seconds,
		'--file' => script(
			$insert, 'insert',
			"SELECT pg_logical_emit_message(false, 'walscale', repeat('x', 200000));\n"
		)),
	start_pgbench(
		$flush, 16, $load_seconds,
		'--file' => script(
			$flush, 'flush', "INSERT INTO committed (id) VALUES (1);\n")),
	start_pgbench(
		$fastpath, 4, $load_seconds,
		'--file' => script(
			$fastpath, 'fastpath',
			"BEGIN;\n"
			  . join('', map { "SELECT count(*) FROM fp$_;\n" } 1 .. 40)
			  . "SELECT pg_sleep(0.02);\nCOMMIT;\n")));
finish_pgbench($_, 'observe-mode load') foreach @runs;

# (a)
my $groups = $insert->safe_psql('postgres',
	q{SELECT string_agg(wait_group || '=' || round(share::numeric, 3), ', '
                   ORDER BY samples DESC) FROM walscale_wait_groups});
note("(a) WAL-heavy, wait groups: $groups");
ok( $insert->safe_psql(
		'postgres', q{
SELECT rounds > 1000 AND active_samples > 1000 AND dropped_samples = 0
FROM walscale_sampling}),
	'(a) the sampler ran every 10 ms and counted active backends');
is( $insert->safe_psql(
		'postgres', q{
SELECT wait_group FROM walscale_waits
WHERE wait_event_type = 'LWLock' AND wait_event = 'WALInsert'}),
	'WAL insertion locks',
	'(a) LWLock:WALInsert is sampled, in the group of the WAL insertion locks');
my $a = advice_of($insert, 'walscale.insert_locks');
note("(a) advice: $a->{evidence}: $a->{reason}");
like(
	$a->{reason},
	qr/^\d+% of active backend time waits on LWLock:WALInsert: the patched server with (\d+) locks would spread it/,
	'(a) the advice names the WAL insertion locks and the patched server');
cmp_ok($a->{recommended}, '>=', 16, '(a) with at least 16 locks');

# (b)
$groups = $flush->safe_psql('postgres',
	q{SELECT string_agg(wait_group || '=' || round(share::numeric, 3), ', '
                   ORDER BY samples DESC) FROM walscale_wait_groups});
note("(b) synchronous commits, wait groups: $groups");
my $b = advice_of($flush, 'walscale.insert_locks');
note("(b) advice: $b->{evidence}: $b->{reason}");
like(
	$b->{reason},
	qr/^\d+% of active backend time waits on WAL write and flush, which more insertion locks do not help: synchronous_commit = off/,
	'(b) the advice names WAL flush, not the insertion locks, and what helps');
is($b->{recommended}, '8', '(b) and keeps the 8 locks');

# (c)
my $c = advice_of($fastpath, 'walscale.fastpath_groups');
note("(c) advice: $c->{evidence}: $c->{reason}");
if (no_fastpath_groups())
{
	# PostgreSQL 17: no groups to recommend; the share of full slots said
	is($c->{recommended}, 'NULL',
		'(c) PostgreSQL 17: its 16 slots full, no fast-path groups recommended'
	);
	like(
		$c->{reason},
		qr/^No recommendation: PostgreSQL 17 has 16 fixed fast-path slots per backend .* [\d.]+% of sampled backends holding fast-path locks had all 16 slots full, so that their other relation locks went to the shared lock table: PostgreSQL 18's fast-path lock groups would hold more\.$/,
		'(c) PostgreSQL 17: the reason says why, and the share of backends with all slots full'
	);
}
else
{
	is($c->{recommended}, '2', '(c) one full group: two recommended');
	like(
		$c->{reason},
		qr/^[\d.]+% of sampled backends holding fast-path locks had a group full: 2 groups \(max_locks_per_transaction = 32 here.*; it costs [\d.]+ kB of shared memory \(1 group x 72 bytes x \d+ processes\)\.$/,
		'(c) the reason gives the share of full groups, the setting, and its memory cost'
	);
}

# idle sessions are idle
{
	my @idle = map { $fastpath->background_psql('postgres') } 1 .. 10;
	$fastpath->safe_psql('postgres', 'SELECT walscale_reset()');
	usleep(1_500_000);
	my ($rounds, $active, $idle) = split /\|/,
	  $fastpath->safe_psql('postgres',
		'SELECT rounds, active_samples, idle_samples FROM walscale_sampling');
	note("idle sessions: $rounds rounds, $active active, $idle idle samples");
	cmp_ok($rounds, '>', 50, 'idle: the sampler runs');
	cmp_ok($active, '<', $rounds, 'idle: sessions waiting for their client are not active');
	cmp_ok($idle, '>=', 9 * $rounds, 'idle: they are counted as idle, each round');
	$_->quit foreach @idle;
}

# sampling off
$flush->append_conf('postgresql.conf', 'walscale.sample_interval = 0');
$flush->reload;
$flush->poll_query_until('postgres',
	'SELECT sample_interval_ms = 0 FROM walscale_sampling');
my $rounds_off = $flush->safe_psql('postgres', 'SELECT rounds FROM walscale_sampling');
usleep(500_000);
is($flush->safe_psql('postgres', 'SELECT rounds FROM walscale_sampling'),
	$rounds_off, 'walscale.sample_interval = 0: no more samples');
$flush->safe_psql('postgres', 'SELECT walscale_reset()');
like(
	advice_of($flush, 'walscale.insert_locks')->{reason},
	qr/^Not enough data: sampling is off/,
	'sampling off: the advice says so');

$_->stop foreach ($insert, $flush, $fastpath);

# the patched server: samples beside the counters
my $patched = PostgreSQL::Test::Cluster->new('patched');
$patched->init;
$patched->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1
walscale.fastpath_groups = 16
max_locks_per_transaction = 16
synchronous_commit = off
log_statement = none
});
$patched->start;
$patched->safe_psql('postgres', 'CREATE EXTENSION walscale');
$patched->safe_psql('postgres', 'SELECT walscale_reset()');
finish_pgbench(
	start_pgbench(
		$patched, 8, 5,
		'--file' => script(
			$patched, 'insert',
			"SELECT pg_logical_emit_message(false, 'walscale', repeat('x', 20000));\n"
		)),
	'patched');
cmp_ok(
	$patched->safe_psql(
		'postgres',
		q{SELECT samples FROM walscale_waits WHERE wait_event = 'WALInsert'}),
	'>', 0,
	'patched, 1 lock: the sampler sees LWLock:WALInsert');
my $p = advice_of($patched, 'walscale.insert_locks');
like(
	$p->{evidence},
	qr/blocking waits .* of 1 active locks used; \d+ active backend samples over \d+ s: [\d.]+% of active time on the WAL insertion locks/,
	'patched: the wait samples stand beside the counters');
my $fp = advice_of($patched, 'walscale.fastpath_groups');
note("patched, 16 groups: $fp->{evidence}: $fp->{reason}");
if (no_fastpath_groups())
{
	is($fp->{recommended}, 'NULL',
		'patched PostgreSQL 17: no fast-path groups recommended');
	like(
		$fp->{reason},
		qr/^No recommendation: PostgreSQL 17 has 16 fixed fast-path slots per backend and no fast-path lock groups/,
		'patched PostgreSQL 17: the reason says why');
}
else
{
	is($fp->{recommended}, '16',
		'patched, 16 groups, light load: no fewer recommended');
	like(
		$fp->{reason},
		qr/fewer groups would be recommended only from at least 3600 s/,
		'patched: not from a span this short');
}

$patched->append_conf('postgresql.conf', 'walscale.insert_locks = 4');
$patched->reload;
$patched->poll_query_until('postgres',
	'SELECT insert_locks = 4 FROM walscale_settings');
$patched->safe_psql('postgres',
	q{SELECT count(pg_logical_emit_message(false, 'x', 'y')) FROM generate_series(1, 100)});
like(
	advice_of($patched, 'walscale.insert_locks')->{evidence},
	qr/\d+ locks used since the reset, which resized them, 4 active now/,
	'patched: the locks used are said to span a resize');
$patched->stop;

done_testing();
