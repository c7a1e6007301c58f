
# Copyright (c) 2026, walscale developers

# The verdict of make sweep's report (bench/sweep_report.py), on runs.csv
# files written here with known ratios to 8 locks.  A number of locks is
# called a gain only when it beat 8 by 3% in every round over enough rounds
# that chance, among all the numbers compared, could do that in at most 5%
# of sweeps: one number needs 5 rounds (1/32), four need 7 (4/128).  So
# the same every-round gain is a gain alone, not settled among four numbers
# over 5 rounds, and a gain again over 7; ratios that cross 1 are noise,
# and a best number below 0.97 in every round is a loss.  The table gives
# each number's CPU use and the change of throughput from one second to the
# next.  No server.

use strict;
use warnings FATAL => 'all';

use File::Temp qw(tempdir);
use FindBin;
use Test::More;

my $report = "$FindBin::RealBin/../bench/sweep_report.py";
plan skip_all => 'no python3' if system('python3 -c 1 2>/dev/null') != 0;

my @cols = qw(workload variant insert_locks attempts fastpath_groups clients
  rep seconds tps xacts acquisitions first_try failed_attempts blocking_waits
  blocked_ms flush_waits locks_used fp_overflows fp_groups started locks_at_end
  cpu_busy tps_each_second top_waits);

# RATIOS: { locks => [ratio to 8 in round 1, 2, ...] }; 8 runs at a
# throughput that drifts between rounds, which the pairing must cancel.
# Every run's CPU busy is 0.75 at 8 locks and 0.5 otherwise; its seconds
# step by 10% after a first second of connecting; at 8 locks its backends
# wait on insertion locks 60% or 40% of the time in turn, elsewhere on the
# relation extension lock 20%.  Returns the verdict's
# line, and in list context the table's rows too.
sub verdict
{
	my ($ratios) = @_;
	my $dir = tempdir(CLEANUP => 1);
	open my $csv, '>', "$dir/runs.csv" or die $!;
	print $csv join(',', @cols), "\n";
	my $rounds = scalar @{ (values %$ratios)[0] };
	for my $rep (1 .. $rounds)
	{
		my $base = 1000 * (1 + 0.2 * sin($rep));
		for my $locks (8, sort { $a <=> $b } keys %$ratios)
		{
			my $tps = $locks == 8 ? $base : $base * $ratios->{$locks}[ $rep - 1 ];
			my %row = (
				workload => 'insdel', variant => 'walscale', insert_locks => $locks,
				clients => 8, rep => $rep, seconds => 5, tps => sprintf('%.3f', $tps),
				started => '2026-12-04T00:00:00Z', locks_at_end => $locks,
				cpu_busy => $locks == 8 ? 0.75 : 0.5,
				tps_each_second => join(';', 5, 100, 110),
				top_waits => $locks == 8
				? ($rep % 2 ? 'LWLock:WALInsert=0.6;CPU=0.3' : 'LWLock:WALInsert=0.4;CPU=0.5')
				: 'CPU=0.7;Lock:extend=0.2');
			print $csv join(',', map { $row{$_} // 0 } @cols), "\n";
		}
	}
	close $csv;
	open my $meta, '>', "$dir/meta.env" or die $!;
	print $meta "host=test\ncores=2\nseconds=5\nreps=$rounds\nclients=8\n";
	close $meta;
	my $out = `python3 $report $dir 2>&1`;
	is($?, 0, 'the report ran') or diag($out);
	my ($line) = $out =~ /^- (insdel: .*)$/m;
	open my $fh, '<', "$dir/sweep.md" or die "$dir/sweep.md: $!";
	my $md = do { local $/; <$fh> };
	close $fh;
	my @rows = $md =~ /^(\| (?:\d+|auto) \|.*)$/mg;
	return wantarray ? ($line // $out, @rows) : ($line // $out);
}

my @gain5 = (1.05, 1.08, 1.04, 1.06, 1.05);
my @gain7 = (@gain5, 1.07, 1.04);
my @cross5 = (1.10, 0.95, 1.06, 1.02, 0.99);
my @cross7 = (@cross5, 1.08, 0.96);

my ($line, @rows) = verdict({ 16 => \@gain5 });
like($line,
	qr/^insdel: more locks help: 16 locks give \+5\.0% over 8, at least \+4\.0% in every round/,
	'one number above 8 in all of 5 rounds is a gain');
like($rows[0], qr/^\| 8 \| 5 \|.*\| 75% \| 9\.5% \|/,
	"8 locks' row: CPU busy 75%, a 1-s step of ln(1.1), the first second left out");
like($rows[1], qr/^\| 16 \| 5 \|.*\| 50% \| 9\.5% \|/, "16 locks' row: CPU busy 50%");
is($rows[2], '| 8 | LWLock:WALInsert 52%, CPU 38% |',
	'what 8 locks waited on: the mean over the rounds, largest first');
is($rows[3], '| 16 | CPU 70%, Lock:extend 20% |', 'and 16 locks');

like(
	verdict({ 16 => \@cross5, 32 => \@gain5, 64 => \@cross5, 128 => \@cross5 }),
	qr/^insdel: not settled: 32 locks beat 8 by at least 4\.0% in every round .* with 4 numbers compared, chance alone does that in up to 12\.5% of sweeps; 7 rounds would decide/,
	'the same among four numbers over 5 rounds is not settled, and says how many rounds would be');

like(
	verdict({ 16 => \@cross7, 32 => \@gain7, 64 => \@cross7, 128 => \@cross7 }),
	qr/^insdel: more locks help: 32 locks/,
	'and over 7 rounds it is a gain');

like(
	verdict({ 16 => \@cross7, 32 => \@cross7, 64 => [ reverse @cross7 ] }),
	qr/^insdel: no difference beyond the noise: no number beat 8 by 3% in every round/,
	'ratios that cross 1 are noise, whatever their median');

like(verdict({ 16 => [ 0.90, 0.95, 0.92, 0.96, 0.91 ] }),
	qr/^insdel: more locks cost throughput: even the best, 16/,
	'a best number below 0.97 in every round is a loss');

like(verdict({ 16 => [ 1.05, 1.08, 1.04 ] }),
	qr/^insdel: too few rounds to judge 16 locks/,
	'3 rounds give no verdict');

done_testing();
