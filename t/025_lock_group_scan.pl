
# Copyright (c) 2026, walscale developers

# The scan by which a WAL flush visits only the groups of insertion locks in
# use (WALInsertLockNextHeld(), core patch 0006), unit-tested against a
# plain scan of every lock: t/unit/test_lock_group_scan.c.  The function and
# the definitions it uses are extracted from the xlog.c of the tested
# server's build tree (WALSCALE_PG_BUILD, which make mutate sets to its
# copy, or the build tree beside the installation that pg_config reports,
# where scripts/build-postgres.sh leaves it), so that the code under test is
# the server's, mutated or not.  No server is started.

use strict;
use warnings FATAL => 'all';

use File::Basename qw(dirname);
use IPC::Run;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
my ($bindir, $includedir, $err);
IPC::Run::run([ $pg_config, '--bindir' ], '>' => \$bindir, '2>' => \$err)
  or BAIL_OUT("$pg_config --bindir failed: $err");
IPC::Run::run([ $pg_config, '--includedir-server' ],
	'>' => \$includedir, '2>' => \$err)
  or BAIL_OUT("$pg_config --includedir-server failed: $err");
chomp($bindir, $includedir);

my $build = $ENV{WALSCALE_PG_BUILD} // dirname($bindir) . '/build';
my $xlog_c = "$build/src/backend/access/transam/xlog.c";
plan skip_all => "no build tree of the tested server at $build "
  . '(WALSCALE_PG_BUILD names one)'
  unless -f $xlog_c;
my $source = slurp_file($xlog_c);
plan skip_all => 'the tested server has no WALInsertLockNextHeld() '
  . '(a stock server, or a core patch without groups of locks)'
  unless $source =~ /^WALInsertLockNextHeld\(/m;
note("testing WALInsertLockNextHeld() of $xlog_c");

my $xlog_h = slurp_file("$includedir/access/xlog.h");
my %value;
for my $name (qw(XLOG_INSERT_LOCKS_DEFAULT XLOG_INSERT_LOCKS_MAX))
{
	$xlog_h =~ /^#define\s+$name\s+(\d+)/m
	  or BAIL_OUT("no $name in $includedir/access/xlog.h");
	$value{$name} = $1;
}

# The definitions of the groups, each a #define with its continuation lines,
# and the function from its return type to its closing brace.
my @parts;
for my $name (qw(WALINSERT_LOCKS_PER_GROUP WALINSERT_LOCK_GROUP_WORDS))
{
	$source =~ /^(#define\s+$name\b(?:.*\\\n)*.*\n)/m
	  or BAIL_OUT("no #define $name in $xlog_c");
	push @parts, $1;
}
$source =~ /^(static inline int\nWALInsertLockNextHeld\(.*?\n\}\n)/ms
  or BAIL_OUT("WALInsertLockNextHeld() not found whole in $xlog_c");
push @parts, $1;

my $dir = PostgreSQL::Test::Utils::tempdir('lock_group_scan');
my $unit = "$dir/lock_group_scan.c";
open my $fh, '>', $unit or die "could not write \"$unit\": $!";
print $fh <<"EOC";
/* extracted by t/025_lock_group_scan.pl from $xlog_c */
#include "postgres_fe.h"

#include "port/pg_bitutils.h"

#define XLOG_INSERT_LOCKS_DEFAULT $value{XLOG_INSERT_LOCKS_DEFAULT}
#define XLOG_INSERT_LOCKS_MAX $value{XLOG_INSERT_LOCKS_MAX}

typedef union LWLockPadded LWLockPadded;
extern LWLockPadded *WALInsertLocks;
extern int	LWLockFirstHeldExclusive(LWLockPadded *locks, int start, int nlocks);

@{[ join("\n", @parts) ]}
const int	lock_group_scan_locks_per_group = WALINSERT_LOCKS_PER_GROUP;
const int	lock_group_scan_max_locks = XLOG_INSERT_LOCKS_MAX;

int			lock_group_scan(const uint64 *groups, int start, int nlocks);

int
lock_group_scan(const uint64 *groups, int start, int nlocks)
{
	return WALInsertLockNextHeld(groups, start, nlocks);
}
EOC
close $fh;

run_unit_program('test_lock_group_scan', $unit);

done_testing();
