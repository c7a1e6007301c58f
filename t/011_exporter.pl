
# Copyright (c) 2026, walscale developers

# monitoring/postgres_exporter/walscale.yaml in the exporter people run:
# Debian's prometheus-postgres-exporter (0.11.1 on bookworm) loads it with
# --extend.query-path, connects as a login role that is only a member of
# pg_monitor, and its scrape must carry walscale's metrics with the values
# SQL reports: counters named *_total that agree with walscale_stats, the
# active locks of walscale_settings, times in seconds, no per-lock series,
# and no failed query.  Then the same with walscale-per-lock.yaml added,
# which must have one series of each counter per row of walscale_stats.
#
# Without the exporter the file skips, unless CI is set: there (.ci/run
# installs it) a missing exporter fails.  WALSCALE_POSTGRES_EXPORTER names
# another binary, WALSCALE_QUERIES_DIR another directory of queries files.

use strict;
use warnings FATAL => 'all';

use HTTP::Tiny;
use IO::Socket::INET;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(sleep time);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $exporter_bin = $ENV{WALSCALE_POSTGRES_EXPORTER}
  // '/usr/bin/prometheus-postgres-exporter';
my $ci = defined $ENV{CI} && $ENV{CI} ne '';

if (!-x $exporter_bin)
{
	plan skip_all =>
	  "$exporter_bin is not installed (apt-get install prometheus-postgres-exporter)"
	  unless $ci;
	fail("$exporter_bin is installed (CI is set, so it must be)");
	done_testing();
	exit;
}

# 0.11 (bookworm) has a bgwriter collector that fails at every scrape on
# PostgreSQL 17 and later, and is turned off as monitoring/README.md says;
# 0.17 (trixie) has stat_bgwriter instead, which reads PostgreSQL 17's
# columns, and refuses --no-collector.bgwriter as an unknown flag.
my $exporter_help = `$exporter_bin --help 2>&1`;
my @exporter_version_flags =
  $exporter_help =~ /--(?:\[no-\])?collector\.bgwriter\b/
  ? ('--no-collector.bgwriter')
  : ();

# seconds to wait for the exporter's port, and for one scrape
my $port_deadline = 30;
my $scrape_timeout = 30;

# the queries files: monitoring/ beside t/, which the scratch copy of
# scripts/test.sh must hold too, or WALSCALE_QUERIES_DIR
my $queries_dir = $ENV{WALSCALE_QUERIES_DIR}
  // "$FindBin::RealBin/../monitoring/postgres_exporter";
my $queries = "$queries_dir/walscale.yaml";
my $per_lock_queries = "$queries_dir/walscale-per-lock.yaml";
if (!ok(-r $queries && -r $per_lock_queries,
		"the queries files are in $queries_dir"))
{
	done_testing();
	exit;
}

# The exporter now running, if any: stopped at the end of each part, and by
# the END block when a check dies first.
my $exporter;

sub stop_exporter
{
	return unless $exporter;
	my $h = $exporter->{handle};
	$exporter = undef;
	$h->kill_kill(grace => 5) if $h->pumpable;
	eval { $h->finish };
	return;
}

END
{
	my $exit = $?;
	stop_exporter();
	$? = $exit;
}

my $node = PostgreSQL::Test::Cluster->new('exporter');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
log_statement = none
});
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION walscale;
CREATE ROLE walscale_exporter LOGIN IN ROLE pg_monitor;
CREATE TABLE exporter_rows (i int, t text);
});
is( $node->safe_psql(
		'postgres', q{
SELECT rolsuper, pg_has_role('walscale_exporter', 'pg_monitor', 'MEMBER'),
       (SELECT count(*) FROM pg_auth_members m
        WHERE m.member = r.oid)
FROM pg_roles r WHERE rolname = 'walscale_exporter'}),
	'f|t|1',
	'the exporter role is no superuser, and a member of pg_monitor only');

# a few hundred insertions, each its own transaction, and a checkpoint,
# which takes all locks at once
$node->safe_psql(
	'postgres',
	join('',
		map { "INSERT INTO exporter_rows VALUES ($_, 'row $_');\n" } 1 .. 300)
	  . "CHECKPOINT;\n");

# One resize, so that the last resize's figures are not all zero: 4 locks,
# then auto mode (the default) again, which goes on from the number in
# effect.
$node->safe_psql('postgres',
	"ALTER SYSTEM SET walscale.insert_locks = 4; SELECT pg_reload_conf();");
ok( $node->poll_query_until(
		'postgres',
		'SELECT insert_locks = 4 AND resizes > 0 FROM walscale_settings'),
	'the number of locks changes to 4');
$node->safe_psql('postgres',
	"ALTER SYSTEM RESET walscale.insert_locks; SELECT pg_reload_conf();");
ok( $node->poll_query_until(
		'postgres',
		q{SELECT insert_locks_mode = 'auto' AND insert_locks_configured = -1
FROM walscale_settings}),
	'auto mode is on again');

# What SQL reports, as a hash of column => value: as the exporter's role, so
# that it too needs no more than pg_monitor.
sub sql_figures
{
	my $out = $node->safe_psql(
		'postgres', q{
SELECT 'acquisitions=' || sum(acquisitions),
       'blocked_ms=' || sum(blocked_ms),
       'locks=' || count(*),
       'active=' || count(*) FILTER (WHERE active),
       'stats_reset=' || extract(epoch FROM max(stats_reset)),
       'now=' || extract(epoch FROM now())
FROM walscale_stats;
SELECT 'insert_locks=' || insert_locks,
       'resizes=' || resizes,
       'held_ms=' || coalesce(last_resize_held_ms, 0),
       'last_resize=' || coalesce(extract(epoch FROM last_resize), 0)
FROM walscale_settings},
		extra_params => [ '--username' => 'walscale_exporter' ]);
	my %f = map { split /=/, $_, 2 } split /[|\n]/, $out;
	return \%f;
}

# Start the exporter on the queries file $file, and wait until its port
# accepts connections.
sub start_exporter
{
	my ($name, $file) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $log = $node->basedir . "/exporter_$name.log";

	# the node listens on a unix socket only
	local $ENV{DATA_SOURCE_NAME} =
		'host='
	  . $node->host
	  . ' port='
	  . $node->port
	  . ' user=walscale_exporter dbname=postgres sslmode=disable';
	my $h = IPC::Run::start(
		[
			$exporter_bin,
			"--web.listen-address=127.0.0.1:$port",
			"--extend.query-path=$file",
			'--disable-default-metrics',
			'--disable-settings-metrics',
			'--no-collector.database',
			@exporter_version_flags,
			'--log.level=info',
		],
		'<' => \undef,
		'>' => $log,
		'2>' => "$log.stderr");
	$exporter = { handle => $h, port => $port, log => $log };

	my $deadline = time() + $port_deadline;
	my $up = 0;
	while (time() < $deadline)
	{
		my $sock = IO::Socket::INET->new(
			PeerAddr => '127.0.0.1',
			PeerPort => $port,
			Proto => 'tcp',
			Timeout => 1);
		if ($sock)
		{
			close $sock;
			$up = 1;
			last;
		}
		last unless $h->pumpable;
		sleep 0.1;
	}
	ok($up, "$name: the exporter listens on 127.0.0.1:$port")
	  or diag(exporter_log());
	return $up;
}

sub exporter_log
{
	return '' unless $exporter;
	return join('',
		map { -f $_ ? slurp_file($_) : '' }
		  ($exporter->{log}, "$exporter->{log}.stderr"));
}

# GET /metrics; returns a hash of metric name => list of [labels, value],
# labels as a hash, and the body.
sub scrape
{
	my ($name) = @_;
	my $res = HTTP::Tiny->new(timeout => $scrape_timeout)
	  ->get("http://127.0.0.1:$exporter->{port}/metrics");
	my %m;
	if (!is($res->{status}, 200, "$name: the scrape answers 200"))
	{
		diag("$res->{status} $res->{reason}: $res->{content}");
		return (\%m, '');
	}
	foreach my $line (split /\n/, $res->{content} // '')
	{
		next if $line =~ /^#/ || $line !~ /\S/;
		my ($metric, $labels, $value) =
		  $line =~ /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/
		  or die "unexpected line in the scrape: $line";
		my %l;
		while (($labels // '') =~
			/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)
		{
			$l{$1} = $2;
		}
		push @{ $m{$metric} }, [ \%l, $value ];
	}
	return (\%m, $res->{content} // '');
}

# The value of the one series of $metric; NaN, which fails every
# comparison, when there is not exactly one.
sub value_of
{
	my ($m, $metric) = @_;
	my $series = $m->{$metric} // [];
	return $series->[0][1] if @$series == 1;
	diag(scalar(@$series) . " series of $metric");
	return 'NaN';
}

# The checks that any scrape must pass: the server up, no failed or
# unloadable query, no error in the exporter's log.
sub check_scrape_health
{
	my ($name, $m) = @_;

	is(value_of($m, 'pg_up'), 1, "$name: pg_up is 1");
	is(value_of($m, 'pg_exporter_last_scrape_error'),
		0, "$name: pg_exporter_last_scrape_error is 0");
	my $load = $m->{pg_exporter_user_queries_load_error} // [];
	ok( @$load >= 1 && !grep({ $_->[1] != 0 } @$load),
		"$name: pg_exporter_user_queries_load_error is 0"
	) or diag(explain($load));
	my @errors = grep { /level=error|level=warn/ } split /\n/, exporter_log();
	is(scalar(@errors), 0, "$name: no error or warning in the exporter's log")
	  or diag(join("\n", @errors));
	return;
}

my $version = `$exporter_bin --version 2>&1`;
note("exporter: " . (split /\n/, $version)[0]);

# 1. walscale.yaml alone
start_exporter('default', $queries) or BAIL_OUT('the exporter did not start');
my $before = sql_figures();
my ($m, $body) = scrape('default');
my $after = sql_figures();
check_scrape_health('default', $m);
note(join("\n", grep { /^walscale/ } split /\n/, $body));

my @ours = grep { /^walscale_/ } keys %$m;
my $series = 0;
$series += scalar @{ $m->{$_} } foreach @ours;
ok($series > 0 && $series <= 100,
	"default: walscale's series are bounded ($series)");
is_deeply([ grep { /^walscale_lock_/ } @ours ],
	[], 'default: no walscale_lock_* metric');
is_deeply(
	[
		grep {
			my $n = $_;
			grep { exists $_->[0]{lock_id} } @{ $m->{$n} }
		} @ours
	],
	[],
	'default: no series with a lock_id label');

# metric names: counters end in _total, times are in seconds
foreach my $metric (sort @ours)
{
	unlike(
		$metric,
		qr/_ms(_|$)|_ns(_|$)|millisecond|nanosecond/,
		"default: $metric is not in milli- or nanoseconds");
}
like(
	$body,
	qr/^# TYPE walscale_acquisitions_total counter$/m,
	'default: walscale_acquisitions_total is a counter');
like(
	$body,
	qr/^# TYPE walscale_locks_active gauge$/m,
	'default: walscale_locks_active is a gauge');
my @counters = $body =~ /^# TYPE (walscale_\S+) counter$/mg;
ok(@counters >= 8,
	'default: walscale has counters (' . scalar(@counters) . ')');
is_deeply([ grep { !/_total$/ } @counters ],
	[], 'default: every counter ends in _total');
my @gauges = $body =~ /^# TYPE (walscale_\S+) gauge$/mg;
is_deeply([ grep { /_total$/ } @gauges ],
	[], 'default: no gauge ends in _total');

# the counters against SQL before and after the scrape
my $acq = value_of($m, 'walscale_acquisitions_total');
ok($acq > 0, "default: walscale_acquisitions_total > 0 ($acq)");
ok( $acq >= $before->{acquisitions} && $acq <= $after->{acquisitions},
	"default: acquisitions between SQL's before and after the scrape ($before->{acquisitions} <= $acq <= $after->{acquisitions})"
);
ok($acq >= 300, 'default: at least one acquisition per insertion');
my $blocked = value_of($m, 'walscale_blocked_seconds_total');
ok( $blocked >= $before->{blocked_ms} / 1000 - 1e-9
	  && $blocked <= $after->{blocked_ms} / 1000 + 1e-9,
	"default: blocked seconds are SQL's blocked_ms / 1000 ($blocked)");
my $reset = value_of($m, 'walscale_stats_reset_timestamp_seconds');
ok( abs($reset - $before->{stats_reset}) < 1e-3,
	"default: the stats reset time is SQL's ($reset)");
ok($reset > 0 && $reset <= $after->{now} + 1,
	'default: the stats reset time is a Unix timestamp before now');
ok($blocked >= 0 && $blocked <= ($after->{now} - $reset + 1) * 100,
	'default: blocked seconds are not absurd');

foreach my $name (
	qw(first_try failed_attempts blocking_waits
	exclusive_acquisitions flush_waits))
{
	my $v = value_of($m, "walscale_${name}_total");
	ok( $v >= 0 && $v <= $after->{acquisitions} + 1e6,
		"default: walscale_${name}_total is there ($v)");
}
ok( value_of($m, 'walscale_first_try_total') <= $acq,
	'default: first tries are at most the acquisitions');
ok( value_of($m, 'walscale_exclusive_acquisitions_total') >= 1,
	'default: the checkpoint took all locks at once');

# locks: the active ones are walscale_settings' number in effect
my $active = value_of($m, 'walscale_locks_active');
is( $active,
	value_of($m, 'walscale_settings_insert_locks'),
	'default: active locks equal walscale_settings_insert_locks');
is( $active,
	$before->{insert_locks},
	"default: active locks are SQL's insert_locks ($active)");
is(value_of($m, 'walscale_locks_reported'),
	$before->{locks},
	'default: locks reported are the rows of walscale_stats');
ok( value_of($m, 'walscale_locks_used') >= 1
	  && value_of($m, 'walscale_locks_used') <= $before->{locks},
	'default: locks used are between 1 and the locks reported');
my $per_lock_max = value_of($m, 'walscale_blocking_waits_per_lock_max');
ok( $per_lock_max >= 0
	  && $per_lock_max <= value_of($m, 'walscale_blocking_waits_total'),
	'default: the per-lock maximum of blocking waits is at most their sum');

# settings
my $settings = $m->{walscale_settings_insert_locks} // [];
is(scalar(@$settings), 1, 'default: one walscale_settings series');
is($settings->[0][0]{mode}, 'auto', 'default: the mode label says auto');
# PostgreSQL 17 has no fast-path groups, so none derived from anything
is( $settings->[0][0]{fastpath_groups_source},
	no_fastpath_groups()
	? 'none: fixed fast-path slots'
	: 'max_locks_per_transaction',
	'default: the fast-path groups source label');
is(value_of($m, 'walscale_settings_insert_locks_configured'),
	-1, 'default: insert_locks_configured is -1');
is(value_of($m, 'walscale_settings_insert_locks_allocated'),
	1024, 'default: insert_locks_allocated is 1024');
is(value_of($m, 'walscale_settings_insert_lock_attempts'),
	0, 'default: insert_lock_attempts is 0');
my $resizes = value_of($m, 'walscale_settings_resizes_total');
ok( $resizes >= 1
	  && $resizes >= $before->{resizes}
	  && $resizes <= $after->{resizes},
	"default: resizes_total is SQL's resizes ($resizes)");
my $held = value_of($m, 'walscale_settings_last_resize_held_seconds');
ok($held >= 0 && $held < 60,
	"default: the last resize held the locks for a sane time ($held s)");
ok( $before->{resizes} != $after->{resizes}
	  || abs($held - $before->{held_ms} / 1000) < 1e-12,
	"default: the last resize's hold is SQL's last_resize_held_ms / 1000");
my $last_resize =
  value_of($m, 'walscale_settings_last_resize_timestamp_seconds');
ok( $last_resize >= $reset - 1 && $last_resize <= $after->{now} + 1,
	"default: the last resize's time is a Unix timestamp since the start");

# fast path and advice
# PostgreSQL 17's core patch counts no overflow: SQL's NULL, which the
# exporter gives as NaN
if (no_fastpath_groups())
{
	my $series = $m->{walscale_fastpath_overflows_total} // [];
	is(scalar(@$series), 1, 'default: one walscale_fastpath_overflows_total series');
	like($series->[0][1] // '', qr/^nan$/i,
		'default: walscale_fastpath_overflows_total is NaN on PostgreSQL 17');
}
else
{
	ok( value_of($m, 'walscale_fastpath_overflows_total') >= 0,
		'default: walscale_fastpath_overflows_total is there');
}
ok( value_of($m, 'walscale_fastpath_slots_per_backend') >= 16,
	'default: walscale_fastpath_slots_per_backend is there');
is_deeply(
	[
		sort map { $_->[0]{setting} }
		  @{ $m->{walscale_advice_enough_data} // [] }
	],
	[
		'walscale.fastpath_groups', 'walscale.insert_lock_attempts',
		'walscale.insert_locks'
	],
	'default: walscale_advice has one series per setting');
my ($locks_advice) = grep { $_->[0]{setting} eq 'walscale.insert_locks' }
  @{ $m->{walscale_advice_current_value} // [] };
is($locks_advice->[1], -1,
	'default: the advice sees walscale.insert_locks = -1');
ok(!grep({ $_->[1] < 0 } @{ $m->{walscale_advice_span_seconds} // [] }),
	'default: the advice spans are not negative');
stop_exporter();

# 2. walscale.yaml with walscale-per-lock.yaml after it, in one file, as
# the exporter reads one --extend.query-path
my $both = $node->basedir . '/walscale-all.yaml';
PostgreSQL::Test::Utils::append_to_file($both,
	slurp_file($queries) . "\n" . slurp_file($per_lock_queries));
start_exporter('per-lock', $both) or BAIL_OUT('the exporter did not start');
$before = sql_figures();
($m, $body) = scrape('per-lock');
$after = sql_figures();
check_scrape_health('per-lock', $m);
my $lock_series = $m->{walscale_lock_acquisitions_total} // [];
is(scalar(@$lock_series), $before->{locks},
	'per-lock: one walscale_lock_acquisitions_total series per row of walscale_stats'
);
is_deeply(
	[ sort { $a <=> $b } map { $_->[0]{lock_id} } @$lock_series ],
	[ 0 .. $before->{locks} - 1 ],
	'per-lock: labelled by lock_id from 0');
my $sum = 0;
$sum += $_->[1] foreach @$lock_series;
ok($sum >= $before->{acquisitions} && $sum <= $after->{acquisitions},
	'per-lock: the locks sum to SQL\'s acquisitions');
my $active_series = 0;
$active_series += $_->[1] foreach @{ $m->{walscale_lock_active} // [] };
is( $active_series,
	$before->{insert_locks},
	'per-lock: walscale_lock_active adds up to the locks in effect');
ok( value_of($m, 'walscale_acquisitions_total') > 0,
	'per-lock: the default metrics are there too');
my @lock_lines = grep { /^walscale_lock_acquisitions_total/ } split /\n/,
  $body;
note(join("\n", splice(@lock_lines, 0, 4)));
stop_exporter();

$node->stop;
done_testing();
