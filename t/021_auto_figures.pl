
# Copyright (c) 2026, walscale developers

# The figures auto mode decides on are the load's.  Every window the worker
# closes is logged (a change at LOG, a hold at DEBUG1) with its active
# backends, blocked share, rate per running backend and acquisitions, and
# each change is kept in walscale_auto_decisions with the same figures.
# Here they are checked against what the test drives: pgbench's clients,
# its transactions (from its per-transaction log, each of a known number of
# WAL records, so of insertion-lock acquisitions) and the windows' times;
# and against each other (the rate is the acquisitions over the window and
# the running backends, the view holds what the log says).  For a fresh
# worker, and for the same worker after a load of another size, a reset of
# walscale's statistics, a fixed number and back, and idle minutes.

use strict;
use warnings FATAL => 'all';

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::Local qw(timegm);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $records = 20;    # WAL records, each an insertion-lock acquisition, a transaction

my $node = PostgreSQL::Test::Cluster->new('figures');
$node->init;
$node->append_conf(
	'postgresql.conf', q{
shared_preload_libraries = 'walscale'
walscale.auto_interval = 1s
walscale.auto_min_locks = 1
include = 'walscale_case.conf'
log_min_messages = debug1
log_line_prefix = '%m [%p] '
log_timezone = 'UTC'
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '1GB'
});
write_case_conf($node, -1, 0);
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
my ($cpus) = slurp_file($node->logfile) =~ /auto mode on with \d+ WAL insertion locks \((\d+) CPUs/;
ok(defined $cpus, 'auto mode is on, and says how many CPUs it counts');

# a transaction of $records non-transactional WAL records: no xid, no commit
# record, so its acquisitions are exactly its records
my $script = $node->basedir . '/records.sql';
append_to_file($script,
	"SELECT count(pg_logical_emit_message(false, 'walscale', 'record ' || i))"
	  . " FROM generate_series(1, $records) AS i;\n");

# seconds since the epoch of a log line's "%m" prefix (UTC)
sub log_time
{
	my ($line) = @_;
	my ($y, $mo, $d, $h, $mi, $s, $ms) =
	  $line =~ /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3}) UTC/
	  or return undef;
	return timegm($s, $mi, $h, $d, $mo - 1, $y) + $ms / 1000;
}

# The windows the worker closed in the log after byte $offset: when it
# closed each, and the figures it logged.
sub windows_since
{
	my ($offset) = @_;
	my @windows;
	for my $line (split /\n/, slurp_file($node->logfile, $offset))
	{
		next
		  unless $line =~
		  /walscale: auto mode (holds|raises|lowers) .*?([\d.]+)% (?:of active backend time )?blocked.*?, ([\d.]+) active backends, (\d+) acquisitions per s per running backend .*?, (\d+) acquisitions in ([\d.]+) s/;
		push @windows,
		  {
			did => $1,
			share => $2 / 100,
			backends => $3,
			rate => $4,
			acquisitions => $5,
			length => $6,
			end => log_time($line),
		  };
	}
	return @windows;
}

# When each transaction of a pgbench run ended: its per-transaction logs
# (one a thread) under $prefix, the 5th and 6th fields.
sub transaction_ends
{
	my ($prefix) = @_;
	my @ends;
	for my $file (glob("$prefix.*"))
	{
		for my $line (split /\n/, slurp_file($file))
		{
			my @f = split / /, $line;
			push @ends, $f[4] + $f[5] / 1e6;
		}
	}
	return sort { $a <=> $b } @ends;
}

# Drive $clients clients for $seconds, then check every window that lay
# wholly inside the load, and the idle ones after it.
sub check_load
{
	my ($name, $clients, $seconds) = @_;
	my $offset = -s $node->logfile;
	sleep 2;    # a window before the load
	my $prefix = $node->basedir . '/pgbench_' . ($name =~ s/\W+/_/gr);
	my $start = $node->safe_psql('postgres', 'SELECT extract(epoch FROM clock_timestamp())');
	my $run = start_pgbench($node, $clients, $seconds, '--file' => $script,
		'--log', "--log-prefix=$prefix");
	my $processed = finish_pgbench($run, $name);
	sleep 3;    # idle windows after the load
	my @ends = transaction_ends($prefix);
	is(scalar @ends, $processed, "$name: pgbench logged each transaction");
	my ($first, $last) = ($ends[0], $ends[-1]);
	my @windows = windows_since($offset);

	my ($inside, $bad_acq, $bad_backends, $bad_rate, $bad_share, $idle, $bad_idle) =
	  (0, 0, 0, 0, 0, 0, 0);
	my @notes;
	for my $w (@windows)
	{
		my $from = $w->{end} - $w->{length};
		if ($from >= $first + 1 && $w->{end} <= $last - 1)
		{
			$inside++;
			my $txns = grep { $_ > $from && $_ <= $w->{end} } @ends;
			# A transaction's records fall in the window it ran in, not
			# always the one it ended in: one in flight per client at each
			# edge.  The log's time of a window's end is a little after the
			# worker read the counters (a loaded machine may not run it at
			# once): a tenth more or less.  The sum below has no such slack.
			my $expected = $records * $txns;
			my $slack = 2 * $records * $clients + 0.1 * $expected;
			if (abs($w->{acquisitions} - $expected) > $slack)
			{
				$bad_acq++;
				diag(sprintf('%s: window of %.3f to %.3f: %d acquisitions, %d expected',
					$name, $from, $w->{end}, $w->{acquisitions}, $expected));
			}
			# active: in a statement, or waiting for the client's next one
			# is idle; the sampler counts only backends, never the worker
			$bad_backends++ if $w->{backends} <= 0 || $w->{backends} > $clients + 1;
			# the logged figures are rounded, to a tenth of a second and of
			# a backend and to a whole acquisition a second: the rate lies
			# between what the ends of their intervals give
			my $runners = sub { my ($b) = @_; $b < $cpus ? $b : $cpus };
			my $low = $w->{acquisitions} / ($w->{length} + 0.05) /
			  $runners->($w->{backends} + 0.05);
			my $high = $w->{acquisitions} / ($w->{length} - 0.05) /
			  $runners->($w->{backends} > 0.05 ? $w->{backends} - 0.05 : 0.001);
			$bad_rate++ if $w->{rate} < $low - 1 || $w->{rate} > $high + 1;
			$bad_share++ if $w->{share} < 0 || $w->{share} >= 1;
			push @notes,
			  sprintf('%.1f s: %d acquisitions for %d transactions, %.1f backends, rate %d',
				$w->{length}, $w->{acquisitions}, $txns, $w->{backends}, $w->{rate});
		}
		elsif ($from > $last + 0.1)
		{
			$idle++;
			$bad_idle++ if $w->{acquisitions} >= 500 || $w->{backends} > 1;
		}
	}
	note("$name, windows inside the load: " . join('; ', @notes));

	# The windows are contiguous and every acquisition is in one: over the
	# windows from the last before the load to the first idle one after it,
	# the acquisitions are the transactions' records, and a few of the
	# server's own (a standby snapshot every 15 s); their lengths add up to
	# the time between their ends.
	my ($before) = grep { $windows[$_]->{end} < $start } reverse 0 .. $#windows;
	my ($after) = grep { $windows[$_]->{end} - $windows[$_]->{length} > $last + 0.1 } 0 .. $#windows;
	ok(defined $before && defined $after, "$name: windows before and after the load were logged");
	$before //= 0;
	$after //= $#windows;
	my ($sum, $length) = (0, 0);
	for my $i ($before + 1 .. $after)
	{
		$sum += $windows[$i]->{acquisitions};
		$length += $windows[$i]->{length};
	}
	my $span = $windows[$after]->{end} - $windows[$before]->{end};
	cmp_ok(abs($sum - $records * $processed), '<=', 100 * ($after - $before),
		"$name: the windows' acquisitions add up to $records per transaction ($sum for $processed)");
	cmp_ok(abs($length - $span), '<=', 0.05 * ($after - $before) + 0.1,
		"$name: the windows' lengths add up to the time they span ($length s in $span s)");
	cmp_ok($inside, '>=', $seconds - 4, "$name: the windows inside the load were logged");
	is($bad_acq, 0,
		"$name: each window's acquisitions are $records per transaction that ended in it, within the transactions in flight at its edges");
	is($bad_backends, 0, "$name: each window saw between 0 and $clients + 1 active backends");
	is($bad_rate, 0,
		"$name: each window's rate is its acquisitions over its length and the fewer of its active backends and the $cpus CPUs");
	is($bad_share, 0, "$name: each window's blocked share is between 0 and 1");
	cmp_ok($idle, '>=', 1, "$name: idle windows after the load were logged");
	is($bad_idle, 0, "$name: an idle window has under 500 acquisitions and at most one active backend");

	# each change the load made is in walscale_auto_decisions with the
	# figures of the window it closed
	my @changes = grep { $_->{did} ne 'holds' } @windows;
	my $rows = $node->safe_psql(
		'postgres', q{
SELECT extract(epoch FROM decided_at), acquisitions, active_backends, blocked_share, rate, window_s
FROM walscale_auto_decisions WHERE from_locks <> to_locks ORDER BY decided_at});
	my @rows = map { [ split /\|/ ] } split /\n/, $rows;
	my $unmatched = 0;
	for my $c (@changes)
	{
		my ($row) = grep { abs($_->[0] - $c->{end}) < 0.5 && $_->[1] == $c->{acquisitions} } @rows;
		$unmatched++
		  unless $row
		  && abs($row->[2] - $c->{backends}) < 0.06
		  && abs($row->[3] - $c->{share}) < 0.00006
		  && abs($row->[4] - $c->{rate}) < 0.6
		  && abs($row->[5] - $c->{length}) < 0.06;
	}
	is($unmatched, 0,
		"$name: each of the " . scalar(@changes) . " changes is in walscale_auto_decisions with the figures of its window");
	return scalar @changes;
}

# A fixed number, then auto mode again from it.
sub restart_auto_from
{
	my ($locks) = @_;
	write_case_conf($node, $locks, 0);
	$node->reload;
	$node->poll_query_until('postgres',
		"SELECT insert_locks = $locks AND insert_locks_mode = 'fixed' FROM walscale_settings")
	  or die "the number of locks did not become $locks";
	write_case_conf($node, -1, 0);
	$node->reload;
	$node->poll_query_until('postgres',
		"SELECT insert_locks_mode = 'auto' FROM walscale_settings")
	  or die 'auto mode did not start at the reload';
}

# a fresh worker's first load, from 1 lock
restart_auto_from(1);
check_load('fresh worker, 8 clients', 8, 15);

# the same worker, long after: another load, a reset, a fixed number and
# back, idle minutes
check_load('same worker, 2 clients', 2, 10);
$node->safe_psql('postgres', 'SELECT walscale_reset()');
restart_auto_from(4);
sleep 5;
check_load('same worker after a reset and a resize, 6 clients', 6, 15);

unlike(slurp_file($node->logfile),
	qr/TRAP:|(?:ERROR|WARNING|FATAL):\s+walscale/,
	'no failed assertion or walscale error in the log');
$node->stop;
done_testing();
