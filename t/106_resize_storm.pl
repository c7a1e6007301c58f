
# Copyright (c) 2026, walscale developers

# The resize storm: walscale.insert_locks changed by a reload every 100 ms,
# through 1, 2, 7, 8, 64, 1000, 1024 and 3, while clients commit WAL-heavy
# transactions (synchronous_commit = on, fsync = on) into a client-side
# ledger of the commits the server acknowledged, and while a second loop
# takes all locks in every other way: CHECKPOINT, pg_switch_wal(),
# pg_backup_start / pg_backup_stop and full_page_writes changed by ALTER
# SYSTEM and a reload.  A streaming standby follows.  Then kill -9 of the
# postmaster, in the middle of all that, and a restart.  One more phase
# runs auto mode (walscale.insert_locks = -1, windows of 1 s) in the same
# storm, from 1024 locks and then from 1, and ends in kill -9 too.  After each crash
# every acknowledged commit must be there, each transaction all there or not
# at all, amcheck must find nothing, and pg_waldump must read the WAL the
# crash left in pg_wal, from the first segment there, through the last
# record that recovery replayed (and no further than recovery did).  The
# resizes must have happened: walscale_settings.resizes grows, each resize
# logs its old and new count (each from the count the one before left), the
# count in effect takes several values, and locks above the eighth take
# insertions.  At the end the count settles on a last value with only that
# many locks used, and the standby holds the primary's data.
#
# WALSCALE_STORM_CLIENTS (default 32) ledger clients;
# WALSCALE_STORM_SECONDS (default 20) seconds of storm before each crash;
# WALSCALE_STORM_CYCLES (default 2) crash cycles;
# WALSCALE_STORM_INTERVAL_MS (default 100) between two reloads.
# At the defaults: about 95 s on two idle cores, 130 s on a busy machine.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleStorm;

my $nclients = $ENV{WALSCALE_STORM_CLIENTS} // 32;
my $seconds = $ENV{WALSCALE_STORM_SECONDS} // 20;
my $cycles = $ENV{WALSCALE_STORM_CYCLES} // 2;
my $interval = ($ENV{WALSCALE_STORM_INTERVAL_MS} // 100) / 1000;
my @values = (1, 2, 7, 8, 64, 1000, 1024, 3);
# the count the storm settles on at the end: in none of the cycles' values
my $final_locks = 16;

# The number of insertion locks goes into an included file, rewritten
# (atomically, by a rename) before each reload: cheaper than ALTER SYSTEM,
# which the other loop uses for full_page_writes.
sub write_resize_conf
{
	my ($node, $locks) = @_;
	my $file = $node->data_dir . '/walscale_resize.conf';
	open my $fh, '>', "$file.tmp" or die "could not write \"$file.tmp\": $!";
	print $fh "walscale.insert_locks = $locks\n";
	close $fh;
	rename "$file.tmp", $file or die "could not rename \"$file.tmp\": $!";
	return;
}

# small WAL segments: more segment boundaries for pg_waldump to cross, and
# less to write for each WAL switch
my $primary = PostgreSQL::Test::Cluster->new('storm_primary');
$primary->init(allows_streaming => 1, extra => ['--wal-segsize=1']);
$primary->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
include 'walscale_resize.conf'
walscale.insert_lock_attempts = 3
# auto mode's windows, in its phase of the storm
walscale.auto_interval = 1s
fsync = on
synchronous_commit = on
full_page_writes = on
restart_after_crash = on
max_connections = 60
shared_buffers = 16MB
# every client statement in the log would make it grow by gigabytes
log_statement = none
checkpoint_timeout = 30s
max_wal_size = 64MB
min_wal_size = 16MB
});
write_resize_conf($primary, 8);
$primary->start;
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION walscale;
SELECT pg_create_physical_replication_slot('storm_standby', immediately_reserve => true);
});
is( $primary->safe_psql(
		'postgres',
		q{SELECT (e.extversion = a.default_version) || ' ' || s.insert_locks
		  || '/' || s.insert_locks_configured || '/' || s.insert_locks_allocated
		  || ' ' || s.insert_lock_attempts
		  FROM pg_extension e, pg_available_extensions a, walscale_settings s
		  WHERE e.extname = 'walscale' AND a.name = 'walscale'}),
	'true 8/8/1024 3',
	'walscale at its default version, 8 locks of 1024 allocated, 3 attempts');

my $ledger = ledger_start($primary, clients => $nclients, rows => 5);

# the standby, from a backup taken under the load, with its own count
$primary->backup('base');
my $standby = PostgreSQL::Test::Cluster->new('storm_standby');
$standby->init_from_backup($primary, 'base', has_streaming => 1);
$standby->append_conf('postgresql.conf', "primary_slot_name = 'storm_standby'\n");
write_resize_conf($standby, 64);
$standby->start;

# The loop that takes all locks in every other way, in one session (as
# pg_backup_start and pg_backup_stop must share one), fed a round at a time:
# the next round once psql has echoed the end of this one.
my $dir = PostgreSQL::Test::Utils::tempdir;
my $all_locks_script = "$dir/all_locks.sh";
open my $fh, '>', $all_locks_script or die $!;
print $fh <<'SH';
#!/bin/bash
out=$1 stop=$2
round=0
while [ ! -e "$stop" ]; do
	round=$((round + 1))
	cat <<SQL
CHECKPOINT;
SELECT pg_switch_wal() IS NOT NULL;
SELECT pg_backup_start('storm $round', fast => true) IS NOT NULL;
SELECT pg_switch_wal() IS NOT NULL;
SELECT lsn IS NOT NULL FROM pg_backup_stop(wait_for_archive => false);
ALTER SYSTEM SET full_page_writes = off;
SELECT pg_reload_conf();
SELECT pg_sleep(0.2);
CHECKPOINT;
ALTER SYSTEM SET full_page_writes = on;
SELECT pg_reload_conf();
\echo round $round
SQL
	while ! grep -qx "round $round" "$out" 2>/dev/null; do
		[ -e "$stop" ] && exit 0
		sleep 0.1
	done
	sleep 0.3
done
SH
close $fh;
chmod 0755, $all_locks_script;

sub start_all_locks_loop
{
	my ($cycle) = @_;
	my %loop = (
		out => "$dir/all_locks.$cycle.out",
		err => "$dir/all_locks.$cycle.err",
		stop => "$dir/all_locks.$cycle.stop");
	$loop{handle} = IPC::Run::start(
		[ $all_locks_script, $loop{out}, $loop{stop} ],
		'<', '/dev/null', '|',
		[
			'psql', '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1',
			'-d', $primary->connstr('postgres') . ' application_name=all_locks'
		],
		'>', $loop{out}, '2>', $loop{err});
	return \%loop;
}

# Stop the loop (its psql lost its server with the crash) and return the
# rounds it completed and the errors it printed: statements that failed,
# not the lost connection.  The kill itself makes the loop's backend exit
# with a backup possibly open, and its exit callback then warns "aborting
# backup due to backend exiting before pg_backup_stop was called": that
# warning, printed after the kill (past offset $err_at_kill of the loop's
# stderr, taken right before it), is the kill's doing, not a failed
# statement.  Anything else, before or after, counts.
sub finish_all_locks_loop
{
	my ($loop, $err_at_kill) = @_;
	open my $fh, '>', $loop->{stop} or die $!;
	close $fh;
	my $h = $loop->{handle};
	my $deadline = time + 60;

	# The loop reads /dev/null and writes files, so the harness holds no
	# pipe and there is nothing to pump: pumpable reaps the children and is
	# false once they have exited.  (pump_nb would croak "process ended
	# prematurely" when they exit between its caller's test and its own.)
	usleep(100_000) while $h->pumpable && time < $deadline;
	if ($h->pumpable)
	{
		diag('the all-locks loop did not end; killed');
		$h->kill_kill(grace => 1);
	}
	else
	{
		eval { $h->finish };
	}
	my $out = -e $loop->{out} ? slurp_file($loop->{out}) : '';
	my $err = -e $loop->{err} ? slurp_file($loop->{err}) : '';
	my $rounds = () = $out =~ /^round \d+$/mg;
	my $after_kill = length($err) > $err_at_kill ? substr($err, $err_at_kill) : '';
	$after_kill =~
	  s/^(?:psql:[^\n]*?: )?WARNING:  aborting backup due to backend exiting before pg_backup_stop was called\n//mg;
	my @errors = grep { /\b(?:ERROR|PANIC|WARNING):/ } split /\n/,
	  substr($err, 0, $err_at_kill) . $after_kill;
	return ($rounds, @errors);
}

# Where the loop's stderr ends, right before a kill.
sub all_locks_err_size
{
	my ($loop) = @_;
	return -s $loop->{err} // 0;
}

# what a server log must not hold
my $server_failure =
  qr/PANIC|TRAP:|too many LWLocks taken|terminated by signal|was terminated by exception/;

# After a storm, up to its kill: the all-locks loop ran without a failed
# statement, and the log has no crash and no walscale error.
sub check_before_kill
{
	my ($label, $log, $rounds, @loop_errors) = @_;
	cmp_ok($rounds, '>=', 1, "$label: $rounds rounds of the all-locks loop");
	is(scalar @loop_errors, 0, "$label: no statement of the all-locks loop failed")
	  or diag(join "\n", @loop_errors[ 0 .. ($#loop_errors < 9 ? $#loop_errors : 9) ]);
	unlike($log, $server_failure,
		"$label: no PANIC, failed assertion, crash or LWLock error before the kill");
	my @walscale_errors = $log =~ /^.*(?:ERROR|WARNING|FATAL):\s+walscale.*$/mg;
	is(scalar @walscale_errors, 0, "$label: no walscale ERROR, WARNING or FATAL in the log")
	  or diag(join "\n", @walscale_errors[ 0 .. ($#walscale_errors < 9 ? $#walscale_errors : 9) ]);
	return;
}

my $settings_query = q{
SELECT s.insert_locks || ' ' || s.insert_locks_configured || ' ' || s.resizes
       || ' ' || (SELECT count(*) FROM walscale_stats
                  WHERE lock_id >= 8 AND acquisitions > 0)
FROM walscale_settings s};

# the totals, for the summary
my %total = (
	resizes => 0,
	log_lines => 0,
	reloads => 0,
	rounds => 0,
	standby_resizes => 0,
	wal_records => 0,
	wal_bytes => 0);
my %all_transitions;
my ($max_held, $max_waited) = (0, 0);
my $value_index = 0;
my $standby_index = 0;
my $start_locks = 8;         # the count the primary (re)started with
my $lifetime_offset = 0;     # where its log since that start begins
my $commits = 0;

for my $cycle (1 .. $cycles)
{
	my $label = "cycle $cycle/$cycles";
	ok(ledger_wait_for_progress($ledger, 20), "$label: the clients commit");
	my (undef, undef, $resizes_before) = split / /,
	  $primary->safe_psql('postgres', $settings_query);
	my $storm_offset = -s $primary->logfile;

	my $loop = start_all_locks_loop($cycle);
	my $resizer = $primary->background_psql('postgres');
	$resizer->set_query_timer_restart;
	my $standby_resizer = $standby->background_psql('postgres');
	$standby_resizer->set_query_timer_restart;

	# the storm: a reload every $interval seconds, a look at the settings
	# and the counters every ninth (nine is prime to the eight values, so
	# that the looks fall after each of them in turn), a reload of the
	# standby every tenth
	my %seen;
	my $high_locks_used = 0;
	my ($reloads, $i, $last) = (0, 0, undef);
	my $t_end = time + $seconds;
	my $next = time;
	while (time < $t_end)
	{
		$last = $values[ $value_index++ % @values ];
		write_resize_conf($primary, $last);
		$resizer->query_safe('SELECT pg_reload_conf()');
		$reloads++;
		if ($i % 9 == 8)
		{
			my ($in_effect, $configured, $resizes, $high) = split / /,
			  $resizer->query_safe($settings_query);
			$seen{$in_effect}++;
			$high_locks_used = $high if $high > $high_locks_used;
		}
		if ($i % 10 == 4)
		{
			write_resize_conf($standby,
				$values[ $standby_index++ % @values ]);
			$standby_resizer->query_safe('SELECT pg_reload_conf()');
		}
		$i++;
		$next += $interval;
		my $wait = $next - time;
		if ($wait > 0) { usleep(int($wait * 1_000_000)); }
		else { $next = time; }
	}
	my ($in_effect, $configured, $resizes, $high) = split / /,
	  $resizer->query_safe($settings_query);
	$seen{$in_effect}++;
	$high_locks_used = $high if $high > $high_locks_used;
	my $resizes_made = $resizes - $resizes_before;
	my $standby_settings = $standby_resizer->query_safe(
		'SELECT insert_locks || \' \' || insert_locks_configured || \' \' || resizes FROM walscale_settings'
	);
	eval { $standby_resizer->quit };

	# one more reload, and the crash right after it, while the resize it
	# asks for may be under way, and the all-locks loop is somewhere in its
	# round
	$last = $values[ $value_index++ % @values ];
	write_resize_conf($primary, $last);
	$resizer->query_safe('SELECT pg_reload_conf()');
	$reloads++;
	usleep(int(rand(30_000)));
	ledger_pause($ledger);
	my $err_at_kill = all_locks_err_size($loop);
	crash_postmaster($primary, "$label: postmaster kill");
	eval { $resizer->quit };
	my ($rounds, @loop_errors) = finish_all_locks_loop($loop, $err_at_kill);

	# what the storm did
	my $log = slurp_file($primary->logfile, $lifetime_offset);
	my $storm_log = substr($log, $storm_offset - $lifetime_offset);
	my @lines = resize_log_lines($log);
	my @storm_lines = resize_log_lines($storm_log);
	my %to = map { ($_->[1] => 1) } @storm_lines;
	my %transitions = map { ($_->[0] . '->' . $_->[1] => 1) } @storm_lines;
	my @broken;
	my $count = $start_locks;
	for my $l (@lines)
	{
		push @broken, $l->[0] . '->' . $l->[1] . " after a resize to $count"
		  if $l->[0] != $count;
		push @broken, $l->[0] . '->' . $l->[1] . ' to a value never asked for'
		  unless grep { $_ == $l->[1] } @values, $final_locks;
		$count = $l->[1];
		$max_held = $l->[2] if $l->[2] > $max_held;
		$max_waited = $l->[3] if $l->[3] > $max_waited;
	}
	note("$label: $reloads reloads, $resizes_made resizes, "
		  . scalar(@storm_lines)
		  . " logged, counts seen "
		  . join(',', sort { $a <=> $b } keys %seen)
		  . ", $high_locks_used locks above the eighth used, "
		  . "$rounds all-locks rounds; standby (in effect, configured, resizes): $standby_settings"
	);
	cmp_ok($resizes_made, '>=', 10,
		"$label: walscale_settings.resizes grew by $resizes_made in $reloads reloads");
	cmp_ok(scalar @storm_lines, '>=', $resizes_made - 1,
		"$label: each resize logged its old and new count ("
		  . scalar(@storm_lines) . " lines)");
	cmp_ok(scalar keys %to, '>=', 4,
		"$label: resizes to " . scalar(keys %to) . " different counts");
	cmp_ok(scalar keys %transitions, '>=', 4,
		"$label: " . scalar(keys %transitions) . " different transitions logged");
	is(scalar @broken, 0,
		"$label: each logged resize starts from the count the one before left")
	  or diag(join "\n", @broken[ 0 .. ($#broken < 9 ? $#broken : 9) ]);
	cmp_ok(scalar keys %seen, '>=', 3,
		"$label: walscale_settings showed "
		  . scalar(keys %seen)
		  . " different counts in effect");
	cmp_ok($high_locks_used, '>', 0,
		"$label: insertions went through locks above the eighth ($high_locks_used of them)");
	check_before_kill($label, $log, $rounds, @loop_errors);
	$total{resizes} += $resizes_made;
	$total{log_lines} += @storm_lines;
	$total{reloads} += $reloads;
	$total{rounds} += $rounds;
	$all_transitions{$_}++ for keys %transitions;
	$total{standby_resizes} = (split / /, $standby_settings)[2];

	# pg_waldump over the WAL the crash left, before recovery writes to it
	my $dump = wal_dump($primary);
	note("$label: pg_waldump from $dump->{first} to $dump->{last}: "
		  . ($dump->{records} // 0)
		  . ' records, '
		  . ($dump->{bytes} // 0)
		  . ' bytes, to '
		  . ($dump->{end} // '?')
		  . "; exit $dump->{exit}: $dump->{error}");

	# the restart: crash recovery, at the count in the file at the kill
	my $restart_offset = -s $primary->logfile;
	$primary->start;
	ok(server_up($primary), "$label: the server is up again");
	my $restart_log = slurp_file($primary->logfile, $restart_offset);
	like($restart_log,
		qr/database system was interrupted|database system was not properly shut down/,
		"$label: the restart recovered from the crash");
	my ($redo_done) = $restart_log =~ m{redo done at ([0-9A-F]+/[0-9A-F]+)};
	ok(defined $redo_done, "$label: crash recovery replayed WAL (redo done at "
		  . ($redo_done // '?') . ')');
	is( $primary->safe_psql(
			'postgres',
			'SELECT insert_locks || \'/\' || insert_locks_configured FROM walscale_settings'),
		"$last/$last",
		"$label: restarted with the $last locks configured at the kill");
	$start_locks = $last;
	$lifetime_offset = $restart_offset;

	# pg_waldump read every record recovery replayed, and no more
	my $recovery_end = $primary->safe_psql('postgres',
		'SELECT redo_lsn FROM pg_control_checkpoint()');
	wal_read_through($dump, $label, $redo_done, $recovery_end);
	$total{wal_records} += $dump->{records} // 0;
	$total{wal_bytes} += $dump->{bytes} // 0;
	$commits = ledger_verify($ledger, $label, 'false');
	ledger_resume($ledger);
}

# Auto mode in the storm: walscale's worker resizes on its own, from 1024
# (above its maximum: lowered at once) and then from 1 (grown under
# contention), under the ledger clients and the all-locks loop; then kill
# -9, and every acknowledged commit must be there.
{
	my $label = 'auto mode';
	my $reload_with = sub {
		write_resize_conf($primary, $_[0]);
		$primary->safe_psql('postgres', 'SELECT pg_reload_conf()');
	};
	my $set_and_wait = sub {
		my ($locks) = @_;
		$reload_with->($locks);
		$primary->poll_query_until('postgres',
			"SELECT insert_locks = $locks AND insert_locks_mode = 'fixed' FROM walscale_settings")
		  or die "the count did not become $locks";
	};
	ok(ledger_wait_for_progress($ledger, 20), "$label: the clients commit");
	$set_and_wait->(1024);
	my $t0 = $primary->safe_psql('postgres', 'SELECT clock_timestamp()');
	my $log_offset = -s $primary->logfile;
	my $loop = start_all_locks_loop('auto');
	$reload_with->(-1);
	sleep($seconds / 2);
	$set_and_wait->(1);
	$reload_with->(-1);
	sleep($seconds / 2);
	my $decisions = $primary->safe_psql(
		'postgres', qq{
SELECT string_agg(from_locks || '->' || to_locks || ' (' || reason || ')', ', ' ORDER BY decided_at)
FROM walscale_auto_decisions WHERE decided_at > '$t0' AND from_locks <> to_locks});
	my $max = $primary->safe_psql('postgres',
		"SELECT to_locks FROM walscale_auto_decisions WHERE decided_at > '$t0'"
		  . " AND from_locks = 1024 AND reason LIKE 'above the maximum for % CPUs'");
	ok($max =~ /^\d+$/ && $max < 1024,
		"$label: auto mode lowered 1024 locks to its maximum ($max) under the load");
	my $grows = () = $decisions =~ /\(contention\)/g;
	note("$label: auto mode's changes: $decisions; $grows grows from contention");
	my $out_of_bounds = $primary->safe_psql('postgres',
		"SELECT count(*) FROM walscale_auto_decisions WHERE decided_at > '$t0'"
		  . " AND (to_locks < 1 OR to_locks > " . ($max =~ /^\d+$/ ? $max : 0) . ')');
	is($out_of_bounds, 0, "$label: every change stayed between 1 and the maximum");
	ledger_pause($ledger);
	my $err_at_kill = all_locks_err_size($loop);
	crash_postmaster($primary, "$label: postmaster kill");
	my ($rounds, @loop_errors) = finish_all_locks_loop($loop, $err_at_kill);
	check_before_kill($label, slurp_file($primary->logfile, $log_offset),
		$rounds, @loop_errors);
	$total{rounds} += $rounds;

	my $restart_offset = -s $primary->logfile;
	$primary->start;
	ok(server_up($primary), "$label: the server is up again");
	like(slurp_file($primary->logfile, $restart_offset),
		qr/walscale: auto mode on with \d+ WAL insertion locks/,
		"$label: auto mode starts again after the crash");
	$commits = ledger_verify($ledger, $label, 'false');
	ledger_resume($ledger);
}

# The last value: the count settles on it, and with the counters reset
# under load only the locks it keeps active take insertions.
ok(ledger_wait_for_progress($ledger, 20), 'the clients commit after the last restart');
write_resize_conf($primary, $final_locks);
$primary->safe_psql('postgres', 'SELECT pg_reload_conf()');
ok( $primary->poll_query_until(
		'postgres', qq{
SELECT s.insert_locks = $final_locks AND s.insert_locks_configured = $final_locks
       AND (SELECT count(*) FROM walscale_stats WHERE active) = $final_locks
FROM walscale_settings s}),
	"the count settles on $final_locks, with $final_locks locks active");
is( $primary->safe_psql(
		'postgres',
		'SELECT last_resize IS NOT NULL AND last_resize_held_ms >= 0 FROM walscale_settings'),
	't',
	'walscale_settings tells when the last resize was and how long it held the locks');
$primary->safe_psql('postgres', 'SELECT walscale_reset()');
ok(ledger_wait_for_progress($ledger, 50), 'the clients commit at the last count');
is( $primary->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE active AND acquisitions > 0) > 0
       AND count(*) FILTER (WHERE NOT active AND (acquisitions > 0
             OR exclusive_acquisitions > 0 OR flush_waits > 0)) = 0
FROM walscale_stats}),
	't',
	"after a reset, insertions go through the $final_locks active locks only");
ledger_stop($ledger);
my @client_errors = ledger_client_errors($ledger);
is(scalar @client_errors, 0, 'no client statement failed (but for lost connections)')
  or diag(join "\n", @client_errors[ 0 .. ($#client_errors < 9 ? $#client_errors : 9) ]);
$commits = ledger_verify($ledger, 'after all cycles', 'true');
cmp_ok($commits, '>', $cycles * 20, "$commits acknowledged commits were checked");

# the standby: the same data, to the tuple's position
# (a sum of hashes: no sort of the whole table on a busy machine)
my $fingerprint = q{
SELECT 'ledger_rows', count(*), sum(hashtextextended(ctid::text || r::text, 0))
FROM ledger_rows r
UNION ALL
SELECT 'ledger_counts', count(*), sum(hashtextextended(ctid::text || r::text, 0))
FROM ledger_counts r};
$primary->wait_for_replay_catchup($standby);
my $expected = $primary->safe_psql('postgres', $fingerprint);
$primary->wait_for_replay_catchup($standby);
is($standby->safe_psql('postgres', $fingerprint),
	$expected, 'the standby has the same ledger data as the primary');
my $standby_settings = $standby->safe_psql('postgres',
	'SELECT insert_locks || \' \' || insert_locks_configured || \' \' || resizes FROM walscale_settings');
my ($standby_in_effect, $standby_configured);
($standby_in_effect, $standby_configured, $total{standby_resizes}) = split / /,
  $standby_settings;
cmp_ok($total{standby_resizes}, '>', 0,
	"the standby resized too, during recovery ($total{standby_resizes} resizes)");
is($standby_in_effect, $standby_configured,
	'the standby runs with the count configured last');

for my $n ($primary, $standby)
{
	unlike(slurp_file($n->logfile), $server_failure,
		$n->name . ': no PANIC, failed assertion, crash or LWLock error in the log');
}

diag(sprintf(
		'resize storm, %d clients, %d s x %d crash cycles: %d resizes (%d logged) in %d reloads, '
		  . '%d different transitions, all locks held at most %s ms after waiting at most %s ms; '
		  . '%d all-locks rounds; %d acknowledged commits all present; '
		  . 'pg_waldump read %d records (%d bytes); standby: %d resizes',
		$nclients, $seconds, $cycles, $total{resizes}, $total{log_lines},
		$total{reloads}, scalar(keys %all_transitions), $max_held,
		$max_waited, $total{rounds}, $commits, $total{wal_records},
		$total{wal_bytes}, $total{standby_resizes}));

$standby->stop;
$primary->stop;
done_testing();
