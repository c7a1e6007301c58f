
# Copyright (c) 2026, walscale developers

# make bench's auto tables show auto mode beside a static setting fitted on
# the same run: the one fixed setting whose medians, over each auto arm's
# best fixed median, have the highest geometric mean among the settings
# measured at every arm (bench/report.py).  Here runs.csv is written with
# known medians: 64 locks is best at one arm and within 1% of the best at
# the other, where 1024 is best but 20% behind at the first, so the static
# setting is 64, neither arm's best alone; 256 was measured at one arm only
# and cannot be it.  The head-to-head rounds are planned with it
# (--best-fixed) and the tables give auto's ratio to it.  No server.

use strict;
use warnings FATAL => 'all';

use File::Temp qw(tempdir);
use FindBin;
use Test::More;

my $report = "$FindBin::RealBin/../bench/report.py";
plan skip_all => 'no python3' if system('python3 -c 1 2>/dev/null') != 0;

my @cols = qw(workload variant insert_locks attempts fastpath_groups clients
  rep seconds tps xacts started locks_at_end);

# workload => { config => tps }; config "auto" is insert_locks -1, "stock"
# the stock server at 8
my %tps = (
	insdel => { stock => 900, 8 => 1000, 64 => 1100, 1024 => 880, 256 => 1300, auto => 1089 },
	walmsg => { stock => 900, 8 => 1000, 64 => 1188, 1024 => 1200, auto => 1176 },
);

my $dir = tempdir(CLEANUP => 1);
open my $csv, '>', "$dir/runs.csv" or die $!;
print $csv join(',', @cols), "\n";
for my $rep (1 .. 3)
{
	for my $wl (sort keys %tps)
	{
		for my $cfg (sort keys %{ $tps{$wl} })
		{
			# the median is the configured figure; the other two straddle it
			my $t = $tps{$wl}{$cfg} * (1 + 0.01 * ($rep - 2));
			my %row = (
				workload => $wl,
				variant => $cfg eq 'stock' ? 'stock' : 'walscale',
				insert_locks => $cfg eq 'stock' ? 8 : $cfg eq 'auto' ? -1 : $cfg,
				clients => 16, rep => $rep, seconds => 3, tps => $t,
				xacts => int($t * 3), started => '2026-12-07T00:00:00Z',
				locks_at_end => $cfg eq 'auto' ? 64 : '');
			print $csv join(',', map { $row{$_} // 0 } @cols), "\n";
		}
	}
}
close $csv;
open my $meta, '>', "$dir/meta.env" or die $!;
print $meta "host=test\ncores=2\nseconds=3\nreps=3\n";
close $meta;

my @plan = `python3 $report --best-fixed $dir 2>&1`;
is($?, 0, 'the rounds are planned') or diag(@plan);
is_deeply(
	[ sort @plan ],
	[ "insdel 16 256/0 64/0\n", "walmsg 16 1024/0 64/0\n" ],
	'each arm: its best fixed setting, then the static one fitted on the run');

my $out = `python3 $report $dir 2>&1`;
is($?, 0, 'the report ran') or diag($out);
open my $fh, '<', "$dir/report.md" or die "$dir/report.md: $!";
my $md = do { local $/; <$fh> };
close $fh;
like($md, qr/\| auto \/ stock \| auto \/ static fitted \|/, 'the auto table has the column');
like(
	$md,
	qr/^\| insdel \| 16 \|.*\| 1\.210 \| walscale 64\/0: 0\.990 \|$/m,
	'insdel: auto against stock and against the static setting');
like(
	$md,
	qr/^\| walmsg \| 16 \|.*\| 1\.307 \| walscale 64\/0: 0\.990 \|$/m,
	'walmsg: auto against stock and against the static setting');

done_testing();
