
# Copyright (c) 2026, walscale developers

# Auto mode's rules, unit-tested: t/unit/test_auto_rules.c calls the pure
# functions of walscale_auto_rules.c: the CPU count from online CPUs,
# affinity and cgroup quota; the start and bounds for 2, 16, 96 and 480
# CPUs; and synthetic windows that put each rule just below and at its
# boundary (blocked share, waits, acquisitions, streaks), the trial of a
# grow and its undo, the ceiling and its hold, the shrink backoff and its
# decay, the lock-use hysteresis, the floor and maximum, scale-freedom from
# 2 to 2000 backends, a ramp, and the changes an hour of steady loads.  It
# is built here with the compiler and flags of the server under test (and
# libm: the rules round a fractional quota up with ceil()), needs no
# server, and each of its TAP lines becomes one test of this file.

use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;
use Text::ParseWords qw(shellwords);

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $repo = dirname($FindBin::RealBin);

# make installcheck puts the tested server's bindir first in PATH; a
# PG_CONFIG given to make is in the environment too
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';

sub pg_config_words
{
	my ($option) = @_;
	my ($out, $err);
	IPC::Run::run([ $pg_config, $option ], '>' => \$out, '2>' => \$err)
	  or BAIL_OUT("$pg_config $option failed: $err");
	chomp $out;
	return shellwords($out);
}

my @cc = pg_config_words('--cc');
my @cflags = (pg_config_words('--cflags'), pg_config_words('--cppflags'));
my ($includedir_server) = pg_config_words('--includedir-server');
my ($libdir) = pg_config_words('--libdir');
my @ldflags = pg_config_words('--ldflags');
# -lpgcommon -lpgport among them: c.h makes printf pg_printf
my @libs = pg_config_words('--libs');

my $dir = PostgreSQL::Test::Utils::tempdir('auto_rules');
my $binary = "$dir/test_auto_rules";
my @build = (
	@cc, @cflags, '-DFRONTEND',
	"-I$repo", "-I$includedir_server",
	'-o' => $binary,
	"$repo/t/unit/test_auto_rules.c", "$repo/walscale_auto_rules.c",
	"-L$libdir", @ldflags, @libs, '-lm');
note(join(' ', @build));

my ($out, $err) = ('', '');
my $built = IPC::Run::run(
	\@build,
	'>' => \$out,
	'2>' => \$err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
diag("compiler output:\n$out$err") if $out ne '' || $err ne '';
ok($built, "test_auto_rules.c builds with the server's compiler and flags");

unless ($built)
{
	done_testing();
	exit;
}

($out, $err) = ('', '');
IPC::Run::run(
	[$binary],
	'>' => \$out,
	'2>' => \$err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
my $status = $?;

my ($planned, $results) = (undef, 0);
for my $line (split /\n/, $out)
{
	if ($line =~ /^(not )?ok (\d+)(?: - (.*))?$/)
	{
		$results++;
		ok(!defined $1, 'unit: ' . ($3 // "test $2"));
	}
	elsif ($line =~ /^1\.\.(\d+)$/)
	{
		$planned = $1;
	}
	elsif ($line =~ /^#/)
	{
		diag($line);
	}
	else
	{
		diag("unexpected output: $line");
	}
}
diag($err) if $err ne '';
is($results, $planned // -1, 'test_auto_rules ran the tests of its plan');
is($status, 0, 'test_auto_rules exits with status 0');

done_testing();
