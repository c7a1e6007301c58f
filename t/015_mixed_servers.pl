
# Copyright (c) 2026, walscale developers

# Stock and patched servers side by side, with walscale preloaded on every
# one, as after an apt upgrade, a standby set up from a patched primary's
# configuration, or stock binaries put back:
#
# (a) a stock standby of a patched primary, and (b) a patched standby of a
#     stock primary: each streams, each is promoted and takes writes;
# (c) one data directory run by the stock server, then the patched one,
#     then the patched server of the core version before (its packages put
#     back with the new walscale module), the patched one again, and the
#     stock one again.
#
# Throughout, every committed row is there, the patched server applies
# walscale's settings, and the stock and the older core's servers start in
# observe mode, the older saying which version it has and which is needed.
# The same module file, built against the stock server's headers, runs on
# the stock and the older core's servers.

use strict;
use warnings FATAL => 'all';
use File::Path qw(rmtree);

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

ok(defined $ENV{PG_STOCK} && -x "$ENV{PG_STOCK}/bin/postgres",
	'PG_STOCK names a PostgreSQL installation')
  or BAIL_OUT('set PG_STOCK to the stock PostgreSQL installation');

my $core_version = $ENV{WALSCALE_CORE_VERSION};
ok(defined $core_version && $core_version =~ /^\d+$/,
	'WALSCALE_CORE_VERSION gives the core version of the patches')
  or BAIL_OUT('set WALSCALE_CORE_VERSION to the core version of the patches');

# the older core's server: make test builds it; elsewhere it may be absent
my $older_version = $ENV{PG_OLDER_CORE_VERSION};
my $have_older = defined $ENV{PG_OLDER_CORE} && -x "$ENV{PG_OLDER_CORE}/bin/postgres";
BAIL_OUT('make test needs PG_OLDER_CORE, the patched server of the previous core version')
  if !$have_older && ($ENV{WALSCALE_OLDER_CORE} // '') eq 'required';
if ($have_older)
{
	ok(defined $older_version && $older_version =~ /^\d+$/ && $older_version != $core_version,
		"the older core's server has core version $older_version, not $core_version");
}

my $observe_mode =
  qr/WARNING:  walscale is in observe mode: its settings are not in effect/;

my %install_path = (
	stock => $ENV{PG_STOCK},
	older => $ENV{PG_OLDER_CORE});

sub new_node
{
	my ($name, $kind) = @_;
	return PostgreSQL::Test::Cluster->new($name,
		$install_path{$kind} ? (install_path => $install_path{$kind}) : ());
}

sub preload
{
	my ($node) = @_;
	$node->append_conf(
		'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 32
log_statement = none
});
	return;
}

# What walscale says the server runs with: the patched one the 32 locks
# configured, the stock one PostgreSQL's 8 and no core, the older core's
# PostgreSQL's 8 and its version.
sub expected_settings
{
	my ($kind) = @_;
	return
	    $kind eq 'stock' ? 'none 8 not in effect'
	  : $kind eq 'older' ? "$older_version 8 not in effect"
	  :                    "$core_version 32 fixed";
}

sub walscale_settings
{
	my ($node) = @_;
	# the worker applies the number shortly after the start
	$node->poll_query_until('postgres',
		q{SELECT insert_locks = 32 OR insert_locks_mode = 'not in effect' FROM walscale_settings})
	  or diag('the 32 locks configured are not in effect');
	return $node->safe_psql(
		'postgres', q{
SELECT coalesce(core_version::text, 'none') || ' ' || insert_locks || ' '
       || insert_locks_mode
FROM walscale_settings});
}

sub rows_of
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		q{SELECT count(*) || ' ' || sum(id) FROM committed});
}

sub add_rows
{
	my ($node, $from, $to, $kind) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO committed SELECT g, '$kind' FROM generate_series($from, $to) g"
	);
	return;
}

sub sum_to
{
	my ($n) = @_;
	return "$n " . $n * ($n + 1) / 2;
}

# (a) and (b)
foreach my $pair ([ 'patched', 'stock' ], [ 'stock', 'patched' ])
{
	my ($primary_kind, $standby_kind) = @$pair;
	my $label =
	  $primary_kind eq 'patched'
	  ? '(a) stock standby of a patched primary'
	  : '(b) patched standby of a stock primary';

	my $primary = new_node("primary_$primary_kind", $primary_kind);
	$primary->init(allows_streaming => 1);
	preload($primary);
	$primary->start;
	$primary->safe_psql('postgres',
		'CREATE EXTENSION walscale; CREATE TABLE committed (id int, server text)'
	);
	add_rows($primary, 1, 1000, $primary_kind);
	$primary->backup('backup');

	my $standby = new_node("standby_$standby_kind", $standby_kind);
	$standby->init_from_backup($primary, 'backup', has_streaming => 1);
	my $offset = -s $standby->logfile // 0;
	$standby->start;
	add_rows($primary, 1001, 2000, $primary_kind);
	$primary->wait_for_catchup($standby);
	is(rows_of($standby), sum_to(2000),
		"$label: the standby has every row committed on the primary");
	is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
		't', "$label: it is a standby");
	my $log = slurp_file($standby->logfile, $offset);
	if ($standby_kind eq 'stock')
	{
		like($log, $observe_mode,
			"$label: the stock standby started in observe mode");
	}
	else
	{
		unlike($log, qr/observe mode/,
			"$label: the patched standby applies walscale's settings");
	}
	is( walscale_settings($standby),
		expected_settings($standby_kind),
		"$label: walscale_settings on the standby");

	$primary->stop;
	$standby->promote;
	add_rows($standby, 2001, 3000, $standby_kind);
	is(rows_of($standby), sum_to(3000),
		"$label: promoted, it takes writes, and keeps every row");
	is( walscale_settings($standby),
		expected_settings($standby_kind),
		"$label: walscale_settings after the promotion");
	$standby->stop;
}

# (c) stock, patched, older core, patched, stock, on one data directory
my @moves = $have_older ? ('patched', 'older', 'patched', 'stock') : ('patched', 'stock');
note('the older core\'s server is not there: (c) skips it') unless $have_older;
my %node;
$node{$_} //= new_node("move_$_", $_) for ('stock', @moves);
$node{stock}->init;
preload($node{stock});
foreach my $kind (grep { $_ ne 'stock' } keys %node)
{
	$node{$kind}->init;
	rmtree($node{$kind}->data_dir);
}

# Hand the data directory to $to's binaries, on $to's port.
sub move_data_dir
{
	my ($from, $to) = @_;
	rename($node{$from}->data_dir, $node{$to}->data_dir)
	  or die "could not move the data directory: $!";
	$node{$to}->adjust_conf('postgresql.conf', 'port', $node{$to}->port);
	return;
}

my $rows = 0;
my $kind = 'stock';
$node{stock}->start;
$node{stock}->safe_psql('postgres',
	'CREATE EXTENSION walscale; CREATE TABLE committed (id int, server text)');
foreach my $next (@moves)
{
	add_rows($node{$kind}, $rows + 1, $rows + 1000, $kind);
	$rows += 1000;
	$node{$kind}->stop;
	move_data_dir($kind, $next);
	$kind = $next;
	my $label = "(c) moved to the $kind server";
	my $offset = -s $node{$kind}->logfile // 0;
	ok($node{$kind}->start(fail_ok => 1), "$label: it starts");
	my $log = slurp_file($node{$kind}->logfile, $offset);
	if ($kind eq 'patched')
	{
		unlike($log, qr/observe mode/, "$label: walscale applies its settings");
	}
	else
	{
		my @warnings = $log =~ /$observe_mode/g;
		is(scalar(@warnings), 1, "$label: one WARNING says walscale is in observe mode");
	}
	if ($kind eq 'older')
	{
		like($log,
			qr/DETAIL:  This server has version $older_version of walscale's core patch, and this walscale module needs version $core_version\./,
			"$label: the DETAIL names the server's core version and the one needed");
		like($log, qr/HINT:  Install the PostgreSQL server built with walscale's core patch version $core_version,/,
			"$label: the HINT says which core version to install");
	}
	is(rows_of($node{$kind}), sum_to($rows),
		"$label: every row committed before is there");
	is( walscale_settings($node{$kind}),
		expected_settings($kind), "$label: walscale_settings");
	is( $node{$kind}->safe_psql(
			'postgres',
			q{SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'walscale'}),
		'1', "$label: walscale's worker runs");
}
add_rows($node{$kind}, $rows + 1, $rows + 1000, $kind);
$rows += 1000;
is(rows_of($node{$kind}), sum_to($rows), '(c) back on stock, it takes writes');
$node{$kind}->stop;

done_testing();
