
# Copyright (c) 2026, walscale developers

# Auto mode: walscale.insert_locks = -1 lets walscale's background worker
# choose the number of WAL insertion locks from the contention it measures.
#
# (a) Auto mode is the default: a server whose configuration does not set
#     walscale.insert_locks starts from the number derived from the CPU
#     count, between PostgreSQL's 8 and its maximum, and says so.  The rest
#     lowers the floor to 1 (walscale.auto_min_locks), and (a2) raising it
#     again above the number in effect raises the number to it.
# (b) From 1 lock under 32 clients of WAL-heavy load it grows, by doublings
#     that each window's figures justify (a share of active backend time
#     blocked at or above the grow threshold, with the sampler's count of
#     active backends; a grow that gained under the margin may double once
#     more on the same trial), once it has the windows of a baseline (at
#     most AUTO_TRIAL_WINDOWS_MAX, as many as the noise it measured asks),
#     and each grow is judged: kept, undone, or undone for want of windows
#     that could judge it, within its windows and their spare.
# (c) Under 1 client it shrinks, for unused locks, and stays small; under 2
#     clients from 1 lock it stays small.
# (d) Under steady load it makes a bounded number of changes, begins at
#     most one trial in the second half, and does not oscillate: the
#     direction changes at most once and no change is made twice
#     (WALSCALE_AUTO_STEADY_SECONDS, default 60; 300 for five minutes).
# (e) walscale's worker terminated in auto mode: the postmaster starts it
#     again, and it goes on from the number in effect, saying why.
# (f) A kill -9 under the ledger clients of t/106 loses no acknowledged
#     commit, and auto mode starts again with the server.
# (g) A server whose affinity mask allows one CPU counts one, whatever the
#     machine has online.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time usleep);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;
use WalscaleStorm;

my $interval = 1;    # walscale.auto_interval, seconds
my $steady_seconds = $ENV{WALSCALE_AUTO_STEADY_SECONDS} // 60;

# the controller's thresholds (walscale_auto_rules.h)
my $grow_share = 0.05;
my $shrink_share = 0.005;
my $min_acquisitions = 500;    # a window with fewer is idle
my $trial_windows_max = 30;    # the most windows a baseline or a trial has
my $trial_spare_windows = 12;
my $look_ahead = 'look-ahead: grow helped under the margin';
my $look_past = 'look-past: fewer hurt, try half as many';
my $look_past_grow = 'look-past: grow did not help, try twice as many';
my $undo = 'grow did not help';
my $unjudged = 'change could not be judged';

my $node = PostgreSQL::Test::Cluster->new('auto');
$node->init;
$node->append_conf(
	'postgresql.conf', qq{
shared_preload_libraries = 'walscale'
walscale.auto_interval = ${interval}s
include = 'walscale_case.conf'
max_connections = 60
log_statement = none
log_min_messages = debug1
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '1GB'
restart_after_crash = on
});
write_case_conf($node, undef, 0);    # walscale.insert_locks: the default
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');

my $script = $node->basedir . '/small_records.sql';
append_to_file($script,
	"SELECT count(pg_logical_emit_message(false, 'walscale', 'small record '"
	  . " || i)) FROM generate_series(1, 20) AS i;\n");

sub nextpow2
{
	my ($n) = @_;
	my $p = 1;
	$p *= 2 while $p < $n;
	return $p;
}

# (a) the start, from the CPU count
my ($start_locks, $cpus, $min, $max) = slurp_file($node->logfile) =~
  /walscale: auto mode on with (\d+) WAL insertion locks \((\d+) CPUs: between (\d+) and (\d+)\)/;
ok(defined $start_locks, 'auto mode says at start how many locks and CPUs');
$max //= 0;
is($min, 8, "the floor is PostgreSQL's 8 by default");
is($max, (sort { $a <=> $b } (8 * $cpus <= 8 ? 8 : nextpow2(8 * $cpus), 1024))[0],
	"the maximum is 8 locks per CPU ($cpus CPUs), a power of two, at least 8");
is($start_locks, (sort { $a <=> $b } ($cpus <= 8 ? 8 : nextpow2($cpus)), $max)[0],
	'the start is a lock per CPU, a power of two, at least 8');
is($node->safe_psql('postgres',
		'SELECT insert_locks || \' \' || insert_locks_configured || \' \' || insert_locks_mode FROM walscale_settings'),
	"$start_locks -1 auto",
	'walscale_settings shows auto mode, the default, and the start number in effect');
is($node->safe_psql('postgres',
		q{SELECT boot_val || ' ' || source FROM pg_settings WHERE name = 'walscale.insert_locks'}),
	'-1 default', 'walscale.insert_locks is -1 by default');
is($node->safe_psql('postgres',
		q{SELECT from_locks || ' ' || to_locks || ' ' || reason FROM walscale_auto_decisions}),
	"$start_locks $start_locks auto mode on at server start, $cpus CPUs",
	'walscale_auto_decisions records the start');

# the rest starts from 1 lock: lower the floor
$node->append_conf('postgresql.conf', "walscale.auto_min_locks = 1\n");
$node->reload;
$node->poll_query_until('postgres',
	q{SELECT effective = 1 FROM walscale_setting_status WHERE setting = 'walscale.auto_min_locks'})
  or die 'walscale.auto_min_locks did not become 1';

# The server's clock now, to pick the decisions made after it.
sub server_now
{
	return $node->safe_psql('postgres', 'SELECT clock_timestamp()');
}

# Set a fixed number and wait until it is in effect, then -1 and wait for
# auto mode to take over from it.  Returns the time auto mode started.
sub restart_auto_from
{
	my ($locks) = @_;
	write_case_conf($node, $locks, 0);
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		"SELECT insert_locks = $locks AND insert_locks_mode = 'fixed' FROM walscale_settings")
	  or die "the number of locks did not become $locks";
	my $t0 = server_now();
	write_case_conf($node, -1, 0);
	$node->safe_psql('postgres', 'SELECT pg_reload_conf()');
	$node->poll_query_until('postgres',
		"SELECT count(*) = 1 FROM walscale_auto_decisions WHERE decided_at > '$t0' AND reason LIKE 'auto mode on at reload%'")
	  or die 'auto mode did not start at the reload';
	return $t0;
}

# Each window the worker closed, from its log after byte $offset: a change
# is logged at LOG, a hold at DEBUG1 (log_min_messages above).  A list of
# hashes: what it did, and the window's acquisitions and blocked share.
sub windows_since
{
	my ($offset) = @_;
	my @windows;
	for my $line (split /\n/, slurp_file($node->logfile, $offset))
	{
		next
		  unless $line =~
		  /walscale: auto mode (holds|raises|lowers) .*?: ([\d.]+)% (?:of active backend time )?blocked.* (\d+) acquisitions in [\d.]+ s(?:.*, (on trial|settled))?/;
		push @windows,
		  { did => $1, share => $2 / 100, acquisitions => $3, trial => $4 // '' };
	}
	return @windows;
}

sub describe_windows
{
	return join('; ',
		map { sprintf('%s %.2f%% %d %s', $_->{did}, 100 * $_->{share}, $_->{acquisitions}, $_->{trial}) } @_);
}

# The decisions after $since that changed the number: a list of hashes.
sub changes_since
{
	my ($since) = @_;
	my $out = $node->safe_psql(
		'postgres', qq{
SELECT extract(epoch FROM decided_at), from_locks, to_locks, reason,
       blocking_waits_per_1000, blocked_ms_per_s, locks_used, acquisitions,
       blocked_share, active_backends
FROM walscale_auto_decisions
WHERE decided_at > '$since' AND from_locks <> to_locks
ORDER BY decided_at});
	my @changes;
	for my $line (split /\n/, $out)
	{
		my %d;
		@d{qw(at from to reason waits blocked used acquisitions share backends)} =
		  split /\|/, $line;
		push @changes, \%d;
	}
	return @changes;
}

sub describe
{
	return join('; ',
		map {
			sprintf('%d->%d (%s: %.2f%% of %.1f active backends blocked, %.1f/1000, %d used)',
				$_->{from}, $_->{to}, $_->{reason}, 100 * $_->{share},
				$_->{backends}, $_->{waits}, $_->{used})
		} @_);
}

sub in_effect
{
	return $node->safe_psql('postgres', 'SELECT insert_locks FROM walscale_settings');
}

# (b) from 1 lock, 32 clients
{
	my $log_offset = -s $node->logfile;
	my $since = restart_auto_from(1);
	# time for a baseline, a grow and its trial with its spare windows
	my $seconds = (2 * ($trial_windows_max + 4) + $trial_spare_windows) * $interval;
	finish_pgbench(start_pgbench($node, 32, $seconds, '--file' => $script), '32 clients');
	my @changes = changes_since($since);
	note('32 clients from 1 lock: ' . describe(@changes));
	my @windows = windows_since($log_offset);
	note('32 clients from 1 lock, each window: ' . describe_windows(@windows));
	my $final = in_effect();

	my @grows = grep { $_->{to} > $_->{from} } @changes;
	cmp_ok(scalar @grows, '>=', 1, '32 clients: auto mode grew from 1 lock');

	# every change follows a rule: a grow for contention, a look-ahead or a
	# look-past on it, a halving tried, a look-past on it, the undo of a
	# trial back to where it began, or of a halving that hurt back to a
	# number its descent (halvings tried one after the other, each from where
	# the last went) came from
	my $bad = 0;
	my $trial_from;
	my @descent_froms;
	my $previous;
	for my $c (@changes)
	{
		my $r = $c->{reason};
		if ($r eq 'contention' || $r eq 'try fewer')
		{
			$trial_from = $c->{from};
			@descent_froms = ()
			  unless $r eq 'try fewer'
			  && defined $previous
			  && ($previous->{reason} eq 'try fewer' || $previous->{reason} eq $look_past)
			  && $previous->{to} == $c->{from};
			push @descent_froms, $c->{from} if $r eq 'try fewer';
		}
		elsif ($r eq 'fewer did not keep the rate')
		{
			$bad++ unless defined $trial_from && grep { $_ == $c->{to} } @descent_froms;
			undef $trial_from;
		}
		elsif ($r eq $look_ahead || $r eq $look_past_grow)
		{
			$bad++ unless defined $trial_from && $c->{to} == 2 * $c->{from};
		}
		elsif ($r eq $look_past)
		{
			$bad++ unless defined $trial_from && 2 * $c->{to} == $c->{from};
		}
		elsif ($r eq $undo || $r eq $unjudged)
		{
			$bad++ unless defined $trial_from && $c->{to} == $trial_from;
			undef $trial_from;
		}
		else
		{
			$bad++;
		}
		$previous = $c;
	}
	is($bad, 0,
		'32 clients: every change was a grow or a halving tried, a look-ahead or a look-past on a grow, a look-past on a halving, or the undo of the trial before it, back to where it or its descent began');
	my @undos = grep { $_->{reason} eq $undo || $_->{reason} eq $unjudged } @changes;
	my $grows_after_undo = 0;
	if (@undos)
	{
		my $ceiling = $undos[0]->{to};
		$grows_after_undo = grep { $_->{at} > $undos[0]->{at} && $_->{to} > $ceiling } @grows;
	}
	is($grows_after_undo, 0, '32 clients: no grow past the ceiling an undo left');
	# Counted in the worker's windows, from the first that had the load: a
	# client's clock would count pgbench's connecting and a slow machine's
	# delays as the controller's.  A grow needs two contended windows in a
	# row and a baseline of as many windows as the noise asks, at most
	# AUTO_TRIAL_WINDOWS_MAX.
	my ($first_loaded) = grep { $windows[$_]->{acquisitions} >= $min_acquisitions } 0 .. $#windows;
	my ($first_raise) = grep { $windows[$_]->{did} eq 'raises' } 0 .. $#windows;
	ok(defined $first_loaded && defined $first_raise && $first_raise >= $first_loaded
		  && $first_raise - $first_loaded < 2 * $trial_windows_max,
		'32 clients: the first grow came within twice AUTO_TRIAL_WINDOWS_MAX windows of the load'
	) or diag("first loaded window $first_loaded, first grow at window " . ($first_raise // 'none'));
	is(scalar(grep { $_->{to} != ($_->{from} * 2 < $max ? $_->{from} * 2 : $max) } @grows),
		0, '32 clients: each grow doubled the number, up to the maximum');
	is(scalar(grep {
				$_->{reason} ne 'contention' && $_->{reason} ne $look_ahead
				  && $_->{reason} ne $look_past_grow
				  || !($_->{share} >= $grow_share
					&& $_->{backends} > 0
					&& abs($_->{share} - $_->{blocked} / 1000 / $_->{backends}) < 1e-6)
			} @grows),
		0,
		"32 clients: each grow (or look-ahead or look-past) had $grow_share or more of active backend time blocked, from the sampler's count of active backends");

	# each trial ends, kept (a window holds, settled) or undone, within its
	# windows and their spare: a grow is never left untested
	my $untested = 0;
	for my $g (grep { $windows[$_]->{did} eq 'raises' } 0 .. $#windows)
	{
		my ($end) = grep { $windows[$_]->{trial} eq 'settled' || $windows[$_]->{did} ne 'holds' }
		  $g + 1 .. $#windows;
		next if !defined $end && $#windows - $g <= $trial_windows_max + $trial_spare_windows;
		$untested++
		  if !defined $end || $end - $g > $trial_windows_max + $trial_spare_windows;
	}
	is($untested, 0,
		'32 clients: each grow was kept or undone within AUTO_TRIAL_WINDOWS_MAX + AUTO_TRIAL_SPARE_WINDOWS windows');
	cmp_ok($final, '<=', $max, '32 clients: never above the maximum');

	# (c) then 1 client: the unused locks go, and the number stays small.
	# A grow still on trial is first undone for want of windows that can
	# judge it (the load stepped): up to AUTO_TRIAL_WINDOWS_MAX +
	# AUTO_TRIAL_SPARE_WINDOWS windows, then the quiet windows of a shrink.
	my $since1 = server_now();
	finish_pgbench(
		start_pgbench($node, 1, ($trial_windows_max + $trial_spare_windows + 10) * $interval,
			'--file' => $script),
		'1 client');
	my @shrinks = changes_since($since1);
	note('1 client after 32: ' . describe(@shrinks));
	shift @shrinks if @shrinks && $shrinks[0]->{reason} eq $unjudged;
	if ($final > 1)
	{
		cmp_ok(scalar @shrinks, '>=', 1, '1 client: auto mode shrank');
		is(scalar(grep {
					!($_->{to} < $_->{from} && $_->{reason} eq 'locks unused'
						&& $_->{share} < $shrink_share && $_->{used} * 2 <= $_->{from})
				} @shrinks),
			0,
			"1 client: after the undo of a trial left from 32 clients, each change was a shrink, with less than $shrink_share of active backend time blocked and at most half the locks used");
	}
	cmp_ok(in_effect(), '<', $final > 1 ? $final : 2, '1 client: fewer locks than under 32 clients');
}

# (c) from 1 lock, 1 and then 2 clients: it stays small
{
	my $since = restart_auto_from(1);
	finish_pgbench(start_pgbench($node, 1, 4 * $interval + 2, '--file' => $script),
		'1 client from 1 lock');
	cmp_ok(in_effect(), '<=', 2, '1 client from 1 lock: at most 2 locks');
	finish_pgbench(start_pgbench($node, 2, 4 * $interval + 2, '--file' => $script),
		'2 clients from 1 lock');
	note('1 then 2 clients from 1 lock: ' . describe(changes_since($since)));
	cmp_ok(in_effect(), '<=', 4, '2 clients from 1 lock: at most 4 locks');
}

# (d) steady load: few changes, and no oscillation
{
	my $log_offset = -s $node->logfile;
	my $since = restart_auto_from(1);
	my $run = start_pgbench($node, 8, $steady_seconds, '--file' => $script);
	finish_pgbench($run, "8 clients for $steady_seconds s");
	my @changes = changes_since($since);
	note("8 clients for $steady_seconds s from 1 lock: " . describe(@changes));
	note("8 clients for $steady_seconds s from 1 lock, each window: "
		  . describe_windows(windows_since($log_offset)));
	my $limit = 1;
	$limit++ while (2**($limit - 1) < $max);    # log2(max) + 1 grows from 1
	cmp_ok(scalar @changes, '<=', $limit + 1,
		"steady load: at most " . ($limit + 1) . " changes in $steady_seconds s");
	my $reversals = 0;
	for my $i (1 .. $#changes)
	{
		my $up_before = $changes[ $i - 1 ]->{to} > $changes[ $i - 1 ]->{from};
		my $up_now = $changes[$i]->{to} > $changes[$i]->{from};
		$reversals++ if $up_before != $up_now;
	}
	cmp_ok($reversals, '<=', 1, 'steady load: the direction changed at most once');
	# a trial and its verdict are two changes: count the trials begun
	my $late = grep {
		$_->{at} > $changes[0]->{at} + $steady_seconds / 2
		  && ($_->{reason} eq 'contention' || $_->{reason} eq 'try fewer')
	} @changes;
	cmp_ok($late, '<=', 1, 'steady load: at most one trial begun in the second half');
	# an undone grow leaves a ceiling, a kept halving the same: a steady
	# load that makes a change twice is chasing noise
	my %made;
	my $again = grep { $made{"$_->{from}->$_->{to}"}++ } @changes;
	is($again, 0, 'steady load: no change made twice');
}

# (e) the worker terminated: started again, it keeps the number in effect
#     (2, not the start number) and records why auto mode began again
{
	my $since = restart_auto_from(2);
	my $pid = $node->safe_psql('postgres',
		"SELECT pid FROM pg_stat_activity WHERE backend_type = 'walscale'");
	ok($pid =~ /^\d+$/, 'worker restart: one walscale worker runs');
	$node->safe_psql('postgres', "SELECT pg_terminate_backend($pid)");
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM walscale_auto_decisions WHERE decided_at > '$since'"
			  . " AND reason LIKE 'auto mode on after its worker restarted, % CPUs'"),
		'worker restart: the new worker says auto mode began again after a restart');
	is( $node->safe_psql(
			'postgres',
			"SELECT from_locks || ' ' || to_locks FROM walscale_auto_decisions"
			  . " WHERE decided_at > '$since' AND reason LIKE 'auto mode on after%'"),
		'2 2',
		'worker restart: auto mode goes on from the number in effect');
	is(in_effect(), 2, 'worker restart: 2 locks still in effect');

	# (a2) a floor raised above the number in effect raises the number
	my $t0 = server_now();
	$node->append_conf('postgresql.conf', "walscale.auto_min_locks = 4\n");
	$node->reload;
	ok( $node->poll_query_until(
			'postgres',
			"SELECT count(*) = 1 FROM walscale_auto_decisions WHERE decided_at > '$t0'"
			  . " AND from_locks = 2 AND to_locks = 4 AND reason = 'below the floor'"),
		'floor: auto mode raises 2 locks to a floor of 4');
	is(in_effect(), 4, 'floor: 4 locks in effect');
	$node->append_conf('postgresql.conf', "walscale.auto_min_locks = 1\n");
	$node->reload;
}

# (f) a crash under auto mode, with the ledger clients of t/106
{
	my $since = restart_auto_from(1);
	my $ledger = ledger_start($node, clients => 16, rows => 5);
	ok(ledger_wait_for_progress($ledger, 40), 'crash: the ledger clients commit');
	# a few windows for auto mode to act under the ledger clients
	for (1 .. 5 * $interval)
	{
		last if $node->safe_psql('postgres',
			"SELECT count(*) > 0 FROM walscale_auto_decisions WHERE decided_at > '$since' AND to_locks > from_locks"
		) eq 't';
		sleep 1;
	}
	my $grown = in_effect();
	note("crash: $grown locks in effect at the kill");
	ledger_pause($ledger);
	crash_postmaster($node, 'crash: postmaster kill under auto mode');
	my $offset = -s $node->logfile;
	$node->start;
	ok(server_up($node), 'crash: the server is up again');
	like(slurp_file($node->logfile, $offset),
		qr/walscale: auto mode on with $start_locks WAL insertion locks/,
		'crash: auto mode starts again, from the start number');
	ledger_verify($ledger, 'crash', 'false');
	ledger_resume($ledger);
	ok(ledger_wait_for_progress($ledger, 40), 'crash: the ledger clients commit after the restart');
	ledger_stop($ledger);
	my @errors = ledger_client_errors($ledger);
	is(scalar @errors, 0, 'crash: no client statement failed (but for lost connections)')
	  or diag(join "\n", @errors[ 0 .. ($#errors < 9 ? $#errors : 9) ]);
	my $commits = ledger_verify($ledger, 'crash, at the end', 'true');
	cmp_ok($commits, '>', 80, "crash: $commits acknowledged commits were checked");
}

# (g) the affinity mask: the postmaster inherits this process's at fork
SKIP:
{
	my ($mask) = (`taskset -p $$ 2>/dev/null` // '') =~ /mask: ([0-9a-f]+)/;
	skip 'taskset is not available', 2
	  unless defined $mask
	  && system("taskset -p -c 0 $$ >/dev/null 2>&1") == 0;
	my $one = PostgreSQL::Test::Cluster->new('one_cpu');
	$one->init;
	$one->append_conf('postgresql.conf', "shared_preload_libraries = 'walscale'\n");
	$one->start;
	system("taskset -p $mask $$ >/dev/null 2>&1");
	like(slurp_file($one->logfile),
		qr/walscale: auto mode on with 8 WAL insertion locks \(1 CPUs: between 8 and 8\)/,
		'affinity: a server bound to one CPU counts one, and its bounds are those of one CPU');
	is($one->safe_psql('postgres', 'SHOW walscale.insert_locks'), '-1',
		'affinity: in auto mode');
	$one->stop;
}

unlike(slurp_file($node->logfile),
	qr/TRAP:|too many LWLocks taken|was terminated by exception|(?:ERROR|WARNING|FATAL):\s+walscale/,
	'no failed assertion, LWLock error or walscale error in the log');

$node->stop;
done_testing();
