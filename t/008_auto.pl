
# Copyright (c) 2026, walscale developers

# Auto mode: walscale.insert_locks = -1 lets walscale's background worker
# choose the number of WAL insertion locks from the contention it measures.
#
# (a) Auto mode is the default: a server whose configuration does not set
#     walscale.insert_locks starts from the number derived from the CPU
#     count, between PostgreSQL's 8 and its maximum, and says so.  The rest
#     lowers the floor to 1 (walscale.auto_min_locks), and (a2) raising it
#     again above the number in effect raises the number to it.
# (b) From 1 lock under 32 clients of WAL-heavy load it probes more locks:
#     every change is a step of a paired probe (the other number, back,
#     and kept or not) or a bound; each probe of more locks began with the
#     phase before it contended (its mean blocked share at or above
#     AUTO_GROW_BLOCKED_SHARE, from the worker's own windows), and the first
#     came once the noise gate was passed.
# (c) Under 1 client after that it never probes more, nor goes above the
#     number it had.
# (d) Under steady load every change is a step of a probe, and there are no
#     more probes than the time allows (WALSCALE_AUTO_STEADY_SECONDS,
#     default 60; 300 for five minutes).
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

# the controller's constants (walscale_auto_rules.h)
my $grow_share = 0.05;
my $min_acquisitions = 500;    # a window with fewer is idle
my $probe_windows = 6;         # AUTO_PROBE_WINDOWS
my $span = 3 * $probe_windows + 2;    # AUTO_PROBE_SPAN
# from the first loaded window to the first probe: a window that settles,
# a run of AUTO_PROBE_SPAN and AUTO_PROBE_WINDOWS null probes
my $gate_windows = 1 + $span + $probe_windows - 1;
my $phase_windows = 1 + $probe_windows;    # a window settles, then a phase
my %probe_up = map { $_ => 1 }
  ('probe: contended, try twice as many', 'probe: contended, try four times as many');
my %probe_down = map { $_ => 1 } ('probe: try half as many', 'probe: try a quarter as many');
my $back = 'probe: back to compare';
my $abandon = 'probe abandoned: idle window or another load';
my %keep = map { $_ => 1 } ('probe kept: more ran faster', 'probe kept: fewer ran as fast');
my %bound = map { $_ => 1 } ('below the floor', 'above the maximum');

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
		  /walscale: auto mode (holds|raises|lowers) (?:WAL insertion locks from \d+ to \d+ \(([^)]*)\))?.*?: ([\d.]+)% (?:of active backend time )?blocked.* (\d+) acquisitions in [\d.]+ s/;
		push @windows,
		  { did => $1, reason => $2 // '', share => $3 / 100, acquisitions => $4 };
	}
	return @windows;
}

sub describe_windows
{
	return join('; ',
		map { sprintf('%s %.2f%% %d %s', $_->{did}, 100 * $_->{share}, $_->{acquisitions}, $_->{reason}) } @_);
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

# Whether changes follow the paired probe: each begins a probe from the
# number in effect to a neighbour (twice or four times, half or a quarter,
# within the bounds), goes back or is abandoned back to where it began, and
# once back either keeps the neighbour or holds; a bound may intervene.
# Returns the count of changes that break it, and of probes begun each way.
sub probe_errors
{
	my ($first_from, @changes) = @_;
	my $floor = 1;    # walscale.auto_min_locks in (b) to (d)
	my ($bad, $ups, $downs) = (0, 0, 0);
	my ($from, $to, $state) = (undef, undef, 'none');
	my $at = $first_from;
	for my $c (@changes)
	{
		my $r = $c->{reason};
		$bad++ if defined $at && $c->{from} != $at;
		if ($bound{$r})
		{
			$state = 'none';
		}
		elsif ($probe_up{$r} || $probe_down{$r})
		{
			my $ratio = $c->{to} / $c->{from};
			$bad++ unless $state eq 'none' || $state eq 'back';
			$bad++ unless $probe_up{$r}
			  ? ($ratio == 2 || $ratio == 4 || $c->{to} == $max) && $ratio > 1
			  : ($ratio == 0.5 || $ratio == 0.25 || $c->{to} == $floor) && $ratio < 1;
			($from, $to, $state) = ($c->{from}, $c->{to}, 'away');
			$probe_up{$r} ? $ups++ : $downs++;
		}
		elsif ($r eq $back || $r eq $abandon)
		{
			$bad++ unless $state eq 'away' && $c->{from} == $to && $c->{to} == $from;
			$state = $r eq $back ? 'back' : 'none';
		}
		elsif ($keep{$r})
		{
			$bad++ unless $state eq 'back' && $c->{from} == $from && $c->{to} == $to;
			$state = 'none';
		}
		else
		{
			$bad++;
		}
		$at = $c->{to};
	}
	return ($bad, $ups, $downs);
}

# (b) from 1 lock, 32 clients
{
	my $log_offset = -s $node->logfile;
	my $since = restart_auto_from(1);
	# time for the gate and two probes
	my $seconds = ($gate_windows + 4 * $phase_windows + 10) * $interval;
	finish_pgbench(start_pgbench($node, 32, $seconds, '--file' => $script), '32 clients');
	my @changes = changes_since($since);
	note('32 clients from 1 lock: ' . describe(@changes));
	my @windows = windows_since($log_offset);
	note('32 clients from 1 lock, each window: ' . describe_windows(@windows));
	my $final = in_effect();

	my ($bad, $ups) = probe_errors(1, @changes);
	is($bad, 0,
		'32 clients: every change was a step of a paired probe (the other number, back, kept) or a bound');
	cmp_ok($ups, '>=', 1, '32 clients: auto mode probed more locks from 1');

	# Counted in the worker's windows, from the first that had the load: a
	# client's clock would count pgbench's connecting and a slow machine's
	# delays as the controller's.  The gate (one window fewer when an idle
	# window before the load was the one left out after the change), and at
	# most one run more.
	my ($first_loaded) = grep { $windows[$_]->{acquisitions} >= $min_acquisitions } 0 .. $#windows;
	my ($first_raise) = grep { $windows[$_]->{did} eq 'raises' } 0 .. $#windows;
	ok(defined $first_loaded && defined $first_raise
		  && $first_raise - $first_loaded >= $gate_windows - 2
		  && $first_raise - $first_loaded < $gate_windows + $span,
		'32 clients: the first probe came once the noise gate was passed, within a run more'
	  )
	  or diag("first loaded window "
		  . ($first_loaded // 'none')
		  . ', first probe at window '
		  . ($first_raise // 'none'));

	# each probe of more locks: the phase before it (the newest windows at
	# the number, up to AUTO_PROBE_WINDOWS) was contended on its mean
	my $cold = 0;
	for my $i (grep { $probe_up{ $windows[$_]->{reason} } } 0 .. $#windows)
	{
		my @phase = @windows[ ($i - $probe_windows + 1) .. $i ];
		my $mean = 0;
		$mean += $_->{share} / @phase for @phase;
		$cold++ if $mean < $grow_share - 0.0001;
	}
	is($cold, 0, "32 clients: each probe of more locks followed a phase with $grow_share or more of active backend time blocked, on its mean");
	cmp_ok($final, '<=', $max, '32 clients: never above the maximum');

	# (c) then 1 client: nothing contended, so no probe of more locks, and
	# the number never above where it was
	my $since1 = server_now();
	my $since1_epoch = $node->safe_psql('postgres', "SELECT extract(epoch FROM '$since1'::timestamptz)");
	finish_pgbench(
		start_pgbench($node, 1, ($span + 2 * $phase_windows + 10) * $interval,
			'--file' => $script),
		'1 client');
	# (b) and (c) as one sequence, since a probe may span them; (c)'s
	# changes alone for what it probes
	my @after = changes_since($since1);
	note('1 client after 32: ' . describe(@after));
	my ($bad1) = probe_errors(1, changes_since($since));
	is($bad1, 0, '32 then 1 client: every change was a step of a paired probe');
	# Once a phase of windows has had the one client alone: before it, the
	# phase a probe begins on may still hold 32 clients' windows (a probe
	# chained to one kept at the end of (b) begins on one phase), and such a
	# probe ends abandoned, the load having stepped.
	my $settled = $since1_epoch + ($probe_windows + 1) * $interval;
	my @late = grep { $_->{at} > $settled } @after;
	is(scalar(grep { $probe_up{ $_->{reason} } } @late),
		0, '1 client: no probe of more locks once a phase had the one client alone');
	my $bound = (sort { $b <=> $a } $final, map { $_->{to} } grep { $_->{at} <= $settled } @after)[0];
	cmp_ok((sort { $b <=> $a } map { $_->{to} } @late)[0] // 0, '<=', $bound,
		'1 client: never above the number under 32 clients, or than a probe begun before that phase');
}

# (d) steady load: every change a step of a probe, and no more probes than
# the time allows: the gate, then a probe's two phases each
{
	my $log_offset = -s $node->logfile;
	my $since = restart_auto_from(1);
	my $run = start_pgbench($node, 8, $steady_seconds, '--file' => $script);
	finish_pgbench($run, "8 clients for $steady_seconds s");
	my @changes = changes_since($since);
	note("8 clients for $steady_seconds s from 1 lock: " . describe(@changes));
	note("8 clients for $steady_seconds s from 1 lock, each window: "
		  . describe_windows(windows_since($log_offset)));
	my ($bad, $ups, $downs) = probe_errors(1, @changes);
	is($bad, 0, 'steady load: every change was a step of a paired probe');
	my $most = 1 + int(($steady_seconds / $interval - $gate_windows) / (2 * $phase_windows));
	cmp_ok($ups + $downs, '<=', $most,
		"steady load: at most $most probes in $steady_seconds s");
	cmp_ok(scalar @changes, '<=', 3 * $most, "steady load: at most three changes a probe");
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
