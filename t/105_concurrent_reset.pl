
# Copyright (c) 2026, walscale developers

# walscale_reset() from three sessions at once, over and over, while 32
# clients insert at walscale.insert_locks = 1024 and a monitor reads
# walscale_stats and walscale_fastpath as fast as it can.  Between two
# readings with the same stats_reset no counter may go down, no counter may
# ever be negative, stats_reset may never go back in time, and no reset may
# be lost: once all have returned, stats_reset is the latest one returned,
# and a reset with the load stopped leaves the counters at about zero.
#
# WALSCALE_LOOP_SECONDS (default 30) sets the duration.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $seconds = $ENV{WALSCALE_LOOP_SECONDS} // 30;

my $node = PostgreSQL::Test::Cluster->new('resets');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1024
walscale.insert_lock_attempts = 3
walscale.fastpath_groups = 1
max_connections = 50
log_statement = none
});
$node->start;
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION walscale;
CREATE TABLE ins (id bigserial PRIMARY KEY, client int, pad text);
-- more relations than one fast-path group holds, for the overflow counter
CREATE TABLE parts (id int, client int) PARTITION BY HASH (id);
SELECT format('CREATE TABLE parts_%s PARTITION OF parts FOR VALUES WITH (MODULUS 24, REMAINDER %s)', g, g)
FROM generate_series(0, 23) g \gexec
CREATE TABLE monitor_result (snapshots int, resets_seen int, went_down int, negative int,
                             reset_went_back int, mixed_reset int, fastpath_went_down int,
                             observed_resets timestamptz[]);
});
my $initial_reset = $node->safe_psql('postgres',
	q{SELECT to_char(min(stats_reset), 'YYYY-MM-DD HH24:MI:SS.US') FROM walscale_stats});

my $script = $node->basedir . '/insert.sql';
PostgreSQL::Test::Utils::append_to_file($script, q{
INSERT INTO ins (client, pad) SELECT :client_id, repeat('x', 200) FROM generate_series(1, 3);
SELECT count(*) FROM parts WHERE client = :client_id;
});
my $pgbench = start_pgbench($node, 32, $seconds, '--file' => $script);

# the monitor: one DO block that compares each reading with the one before
my $monitor_sql = qq{
DO \$\$
DECLARE
	prev bigint[];
	cur bigint[];
	prev_reset timestamptz;
	cur_reset timestamptz;
	nresets int;
	prev_fp bigint;
	cur_fp bigint;
	fp_reset timestamptz;
	prev_fp_reset timestamptz;
	snapshots int := 0;
	resets_seen int := 0;
	went_down int := 0;
	negative int := 0;
	reset_went_back int := 0;
	mixed_reset int := 0;
	fastpath_went_down int := 0;
	observed timestamptz[] := '{}';
BEGIN
	WHILE clock_timestamp() < now() + interval '$seconds seconds' LOOP
		SELECT array_agg(v ORDER BY lock_id, k), min(stats_reset), count(DISTINCT stats_reset)
		  INTO cur, cur_reset, nresets
		  FROM walscale_stats,
		       LATERAL unnest(ARRAY[acquisitions, first_try, failed_attempts, blocking_waits,
		                            exclusive_acquisitions, flush_waits,
		                            acquisitions - first_try, (blocked_ms * 1000)::bigint])
		               WITH ORDINALITY AS u(v, k);
		SELECT overflows, stats_reset INTO cur_fp, fp_reset FROM walscale_fastpath;
		snapshots := snapshots + 1;
		IF nresets <> 1 THEN mixed_reset := mixed_reset + 1; END IF;
		negative := negative + (SELECT count(*) FROM unnest(cur) v WHERE v < 0)::int
		                     + coalesce((cur_fp < 0)::int, 0);
		IF NOT cur_reset = ANY (observed) THEN observed := observed || cur_reset; END IF;
		IF prev IS NOT NULL THEN
			IF cur_reset = prev_reset THEN
				went_down := went_down +
					(SELECT count(*) FROM unnest(prev, cur) AS u(p, c) WHERE c < p)::int;
			ELSIF cur_reset < prev_reset THEN
				reset_went_back := reset_went_back + 1;
			ELSE
				resets_seen := resets_seen + 1;
			END IF;
			IF fp_reset = prev_fp_reset AND cur_fp < prev_fp THEN
				fastpath_went_down := fastpath_went_down + 1;
			END IF;
		END IF;
		prev := cur;
		prev_reset := cur_reset;
		prev_fp := cur_fp;
		prev_fp_reset := fp_reset;
	END LOOP;
	INSERT INTO monitor_result VALUES (snapshots, resets_seen, went_down, negative,
	                                   reset_went_back, mixed_reset, fastpath_went_down, observed);
END
\$\$;
};
# (scripts and outputs in files: IPC::Run feeds a scalar only while it is
# pumped, which would hold the sessions back until finish())
my $tmp = PostgreSQL::Test::Utils::tempdir;
PostgreSQL::Test::Utils::append_to_file("$tmp/monitor.sql", $monitor_sql);
my $monitor = IPC::Run::start(
	[ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
	'<', "$tmp/monitor.sql", '>', "$tmp/monitor.out", '2>', "$tmp/monitor.err");

# three resetters, each printing the time every reset returned
PostgreSQL::Test::Utils::append_to_file("$tmp/reset.sql",
	"SELECT to_char(walscale_reset(), 'YYYY-MM-DD HH24:MI:SS.US');\nSELECT pg_sleep(0.02);\n"
	  x int(40 * $seconds));
my @resetters;
for my $r (0 .. 2)
{
	push @resetters,
	  IPC::Run::start(
		[ 'psql', '-X', '-At', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('postgres') ],
		'<', "$tmp/reset.sql", '>', "$tmp/reset.$r.out", '2>', "$tmp/reset.$r.err");
}

finish_pgbench($pgbench, '32 clients');
$monitor->finish;
$_->finish for @resetters;

is($monitor->result(0), 0, 'the monitor ran through')
  or diag(slurp_file("$tmp/monitor.err"));

my @returned;
for my $r (0 .. 2)
{
	is($resetters[$r]->result(0), 0, "resetter $r: every walscale_reset() succeeded")
	  or diag(slurp_file("$tmp/reset.$r.err"));
	push @returned, grep { /^\d{4}-/ } split /\n/, slurp_file("$tmp/reset.$r.out");
}
my $nresets = scalar @returned;
cmp_ok($nresets, '>=', 30, "$nresets resets were made");
my ($latest) = sort { $b cmp $a } @returned;

my ($snapshots, $resets_seen, $went_down, $negative, $went_back, $mixed, $fp_down, $observed) =
  split /\|/, $node->safe_psql('postgres', q{
SELECT snapshots, resets_seen, went_down, negative, reset_went_back, mixed_reset,
       fastpath_went_down,
       (SELECT string_agg(to_char(t, 'YYYY-MM-DD HH24:MI:SS.US'), ',') FROM unnest(observed_resets) t)
FROM monitor_result});
cmp_ok($snapshots, '>=', 20, "the monitor took $snapshots readings of 1024 locks");
cmp_ok($resets_seen, '>', 0, "the monitor saw $resets_seen resets happen");
is($went_down, 0, 'no counter went down between two readings without a reset');
is($negative, 0, 'no counter was ever negative');
is($mixed, 0, 'every reading had one stats_reset for all locks');
is($fp_down, 0, 'the fast-path overflow count never went down without a reset');
is($went_back, 0, 'stats_reset never went back in time');
my %known = map { $_ => 1 } (@returned, $initial_reset);
my @strange = grep { !$known{$_} } split /,/, $observed;
is(scalar @strange, 0, 'every stats_reset the monitor saw was returned by a reset')
  or diag("unknown: @strange");

# no reset is lost
is( $node->safe_psql('postgres',
		q{SELECT to_char(min(stats_reset), 'YYYY-MM-DD HH24:MI:SS.US') FROM walscale_stats}),
	$latest, 'stats_reset is the latest reset returned');
# the clock read just before and just after a reset bound the time it
# returns, and both views then report that time: a reset that kept an older
# stats_reset, or returned one, fails here
my ($final, $in_time, $both_views) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT clock_timestamp() AS before_reset \gset
SELECT walscale_reset() AS final_reset \gset
SELECT clock_timestamp() AS after_reset \gset
SELECT to_char(:'final_reset'::timestamptz, 'YYYY-MM-DD HH24:MI:SS.US'),
       :'final_reset'::timestamptz BETWEEN :'before_reset' AND :'after_reset',
       (SELECT min(stats_reset) = :'final_reset' AND max(stats_reset) = :'final_reset'
        FROM walscale_stats)
       AND (SELECT stats_reset = :'final_reset' FROM walscale_fastpath);
});
cmp_ok($final, 'gt', $latest, 'a last reset returns a later time than all before it');
is($in_time, 't', 'it returns the time it was called, between the clock readings around it');
is($both_views, 't', 'and both views report that time');
my ($sum, $blocked_ms) = split /\|/, $node->safe_psql('postgres',
	q{SELECT sum(acquisitions + failed_attempts + blocking_waits + exclusive_acquisitions + flush_waits),
	         round(sum(blocked_ms)) FROM walscale_stats});
cmp_ok($sum, '<', 100, "a reset with the load stopped brings the counters to about zero ($sum)");
cmp_ok($blocked_ms, '<', 100, "and the time slept ($blocked_ms ms)");
my $fp = $node->safe_psql('postgres', 'SELECT overflows FROM walscale_fastpath');
if (no_fastpath_groups())
{
	# PostgreSQL 17's core patch counts no fast-path overflow
	is($fp, '', 'no fast-path overflow count on PostgreSQL 17');
}
else
{
	cmp_ok($fp, '<', 100, "the fast-path overflow count too ($fp)");
}

# A storm of resets: 8 sessions reset back to back for a few seconds while a
# monitor checks that stats_reset only moves forward.  Each reset must take
# its time stamp while it holds walscale's lock, or a reset that read the
# clock first but got the lock last writes an older time over a newer one.
PostgreSQL::Test::Utils::append_to_file("$tmp/storm.sql", "SELECT walscale_reset();\n");
my $storm = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '8', '-j', '8', '-T', '6', '-f', "$tmp/storm.sql",
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'<', \undef, '>', "$tmp/storm.out", '2>', "$tmp/storm.err");
my ($readings, $back) = split /\|/, $node->safe_psql(
	'postgres', q{
CREATE TEMP TABLE storm (readings int, went_back int);
DO $$
DECLARE prev timestamptz; cur timestamptz; back int := 0; n int := 0;
BEGIN
	PERFORM pg_sleep(0.5);
	WHILE clock_timestamp() < now() + interval '5 seconds' LOOP
		SELECT stats_reset INTO cur FROM walscale_fastpath;
		IF cur < prev THEN back := back + 1; END IF;
		prev := cur;
		n := n + 1;
	END LOOP;
	INSERT INTO storm VALUES (n, back);
END $$;
SELECT readings, went_back FROM storm;});
$storm->finish;
is($storm->result(0), 0, 'reset storm: 8 sessions of back-to-back resets')
  or diag(slurp_file("$tmp/storm.err"));
my ($storm_resets) = slurp_file("$tmp/storm.out") =~ /number of transactions actually processed: (\d+)/;
cmp_ok($readings, '>', 1000, "reset storm: $readings readings of stats_reset during $storm_resets resets");
is($back, 0, 'reset storm: stats_reset never went back in time')
  or diag('walscale_reset() must call GetCurrentTimestamp() after LWLockAcquire(walscale_shared->lock)');

unlike(slurp_file($node->logfile), qr/PANIC|terminated by signal|TRAP:/, 'no crash');
diag("concurrent resets: $nresets resets from 3 sessions under 32 clients at 1024 locks, "
	  . "$snapshots monitor readings, $resets_seen resets observed");
$node->stop;
done_testing();
