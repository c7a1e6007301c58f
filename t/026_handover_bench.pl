
# Copyright (c) 2026, walscale developers

# make bench's spinlock hand-over (bench/spinlock-handover.c, which
# bench/handover.sh builds): it builds with the server's compiler and flags
# against its headers, and prints its lines, in a second: the uncontended
# cost, the two-core hand-over, and beta where there are 3 CPUs or more,
# or else the plain statement that it was not measured, never a number.
# No server.

use strict;
use warnings FATAL => 'all';

use File::Temp qw(tempdir);
use FindBin;
use Test::More;

my $src = "$FindBin::RealBin/../bench/spinlock-handover.c";
plan skip_all => 'bench/spinlock-handover.c is not here' unless -f $src;
my $pg_config =
  defined $ENV{PG_STOCK} ? "$ENV{PG_STOCK}/bin/pg_config" : 'pg_config';
chomp(my $cc = `$pg_config --cc 2>/dev/null` // '');
plan skip_all => "no pg_config ($pg_config)" if $cc eq '';

sub pgc { my $o = shift; chomp(my $v = `$pg_config $o`); return $v; }

my $dir = tempdir(CLEANUP => 1);
my $bin = "$dir/spinlock-handover";
my $cmd = join(' ',
	$cc, pgc('--cflags'), pgc('--cppflags'),
	'-I' . pgc('--includedir-server'),
	'-o', $bin, $src, '-L' . pgc('--libdir'),
	'-lpgcommon', '-lpgport', pgc('--libs'));
my $log = `$cmd 2>&1`;
is($?, 0, 'it builds with the server\'s compiler and flags') or diag $log;

# 3 rounds of 2000 hand-overs: a second at most
my $out = `$bin 3 2000 2>&1`;
is($?, 0, 'it runs') or diag $out;
like($out, qr/^uncontended: [0-9.]+ ns per acquire/m, 'the uncontended cost');
like($out, qr/^handover S=1: [0-9.]+ ns \(median of 3; /m,
	'the hand-over with one spinner, median and spread');
like($out, qr/^xfer-2core: [0-9.]+ ns per hand-over between two cores/m,
	'the two-core figure');
my ($ncpus) = $out =~ /^cpus: (\d+) usable/m;
ok(defined $ncpus, 'it says how many CPUs it used');
if ($ncpus < 3)
{
	like($out, qr/^beta: not measured: .* 3 CPUs or more/m,
		'with fewer than 3 CPUs it says plainly that beta is not measured');
	unlike($out, qr/^beta: -?[0-9]/m, 'and gives no number for it');
}
else
{
	like($out, qr/^beta: -?[0-9.]+ /m, 'with 3 CPUs or more, beta');
	like($out, qr/^handover S=2: /m, 'from two spinners');
}

# arguments out of range are refused
system("$bin 3 999999999 >/dev/null 2>&1");
isnt($?, 0, 'too many hand-overs a run are refused');

done_testing();
