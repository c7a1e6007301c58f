
# Copyright (c) 2026, walscale developers

# Auto mode's CPU count under cgroup quotas (walscale_cpus.c): auto mode
# starts from the count and never goes above eight locks per CPU, so a
# container limited to a few CPUs of a big host must count the few.
#
# (a) The parsing steps, unit-tested (t/unit/test_cpus.c, no server): the
#     lines of /proc/self/cgroup and /proc/self/mountinfo, a mount whose root
#     is a container's cgroup, the quota files.
# (b) Servers started in real cgroups, which scripts/test-cgroups.sh made as
#     root (make test and make mutate run it; the tests run as the run user):
#     - nested: the postmaster in nested/leaf, under nested's quota of 1 CPU,
#       the hierarchy mounted whole;
#     - bind: the postmaster in bind/leaf, whose quota is 1 CPU, with bind/
#       mounted in place of the hierarchy, as Docker does without a cgroup
#       namespace: the cgroup's directory is the mount point followed by its
#       path below the mount's root;
#     - ns: the postmaster in ns (1 CPU) and its own cgroup namespace, with
#       the hierarchy mounted afresh elsewhere, as a container runtime does:
#       /proc/self/cgroup says "/", and the host's mount shows "/../..".
#     Each must count 1 CPU on a machine that gives the server 2 or more
#     without a quota.  The quota is in cgroup v1's cpu hierarchy, or in v2
#     where the cpu controller is v2's; the other version's tree has none,
#     as on a hybrid host (v1 controllers, v2 at /sys/fs/cgroup/unified),
#     where it must not hide the quota.  The server says at DEBUG1 which
#     cgroup directories it read and what each said; the test checks that it
#     read the postmaster's own cgroup and each ancestor up to the mount, in
#     both versions, so that v2's path is checked on a host whose cpu
#     controller is v1's too.  bind and ns need unprivileged user namespaces
#     (for the mount and cgroup namespaces); without them they are skipped.
#
# The postmaster is moved into a cgroup by a pg_ctl wrapper: it writes its
# own pid into the cgroup's cgroup.procs, enters the namespaces, and runs
# pg_ctl, whose postmaster inherits all that.

use strict;
use warnings FATAL => 'all';

use File::Basename qw(basename dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use FindBin;
use lib $FindBin::RealBin;
use WalscaleTest;

my $repo = dirname($FindBin::RealBin);

# (a)
run_unit_program('test_cpus', 'walscale_cpus.c');

# (b)
my %tree;
$tree{1} = $ENV{WALSCALE_TEST_CGROUP_V1} if $ENV{WALSCALE_TEST_CGROUP_V1};
$tree{2} = $ENV{WALSCALE_TEST_CGROUP_V2} if $ENV{WALSCALE_TEST_CGROUP_V2};
my @why = split /; /,
  $ENV{WALSCALE_TEST_CGROUPS_WHY}
  // 'no cgroups were made: run this file through make test or make mutate, as root';

# a version whose tree this user cannot move a process into is left out
for my $v (sort keys %tree)
{
	my $procs = "$tree{$v}/nested/leaf/cgroup.procs";
	next if system('sh', '-c', 'echo $$ > "$1"', 'sh', $procs) == 0;
	push @why, "cannot move a process into $procs";
	delete $tree{$v};
}
my $quota_version =
	$ENV{WALSCALE_TEST_CGROUP_V2_CPU} && $tree{2} ? 2
  : $tree{1} ? 1
  :            undef;

# user namespaces for bind and ns: root of a new one with a new mount (and
# cgroup) namespace, then one that maps this user back, as pg_ctl must run
my ($uid, $gid) = ($<, $( + 0);
my $userns = system(
	'unshare', '--user', '--map-root-user', '--mount',
	'--cgroup', '--', 'unshare',
	'--user', "--map-user=$uid",
	"--map-group=$gid", '--',
	'true') == 0;
push @why,
  'unshare cannot make a user namespace with a mount and a cgroup namespace, then map this user back (--map-user): bind and ns skipped'
  unless $userns;

diag("cgroups: quotas in v"
	  . ($quota_version // 'none')
	  . ", trees: "
	  . (join(', ', map { "v$_ $tree{$_}" } sort keys %tree) || 'none')
	  . (@why ? '; not tested: ' . join('; ', @why) : ''));

# the pg_ctl of the server under test, and the wrapper put before it in PATH
my ($real_pg_ctl) =
  grep { -x $_ } map { "$_/pg_ctl" } split /:/, $ENV{PATH};
my $tmp = PostgreSQL::Test::Utils::tempdir('cgroup');
my $wrapper = "$tmp/bin/pg_ctl";
mkdir "$tmp/bin" or die "mkdir $tmp/bin: $!";
open my $fh, '>', $wrapper or die "could not write $wrapper: $!";
print $fh <<"EOF";
#!/bin/sh
# pg_ctl in the cgroups of \$WALSCALE_JOIN (cgroup.procs files) and, with
# with \$WALSCALE_UNSHARE (unshare's options), in new namespaces, where
# \$WALSCALE_MOUNTS are mounted
set -e
case "\${WALSCALE_STAGE:-join}" in
join)
	for procs in \$WALSCALE_JOIN; do echo \$\$ >"\$procs"; done
	[ -n "\$WALSCALE_UNSHARE" ] || exec "$real_pg_ctl" "\$@"
	export WALSCALE_STAGE=mount
	exec unshare --user --map-root-user \$WALSCALE_UNSHARE -- "\$0" "\$@"
	;;
mount)
	while read -r kind dir source; do
		case \$kind in
		bind) mount --bind "\$source" "\$dir" ;;
		cgroup1) mkdir -p "\$dir"; mount -t cgroup -o cpu cgroup "\$dir" ;;
		cgroup2) mkdir -p "\$dir"; mount -t cgroup2 cgroup2 "\$dir" ;;
		esac
	done <<MOUNTS
\$WALSCALE_MOUNTS
MOUNTS
	export WALSCALE_STAGE=run
	exec unshare --user --map-user=$uid --map-group=$gid -- "\$0" "\$@"
	;;
run)
	exec "$real_pg_ctl" "\$@"
	;;
esac
EOF
close $fh;
chmod 0755, $wrapper or die "chmod $wrapper: $!";

my $node = PostgreSQL::Test::Cluster->new('cgroup');
$node->init;
$node->append_conf('postgresql.conf',
	"shared_preload_libraries = 'walscale'\nlog_min_messages = debug1\n");

# Start the server as %scene says, wait for auto mode's first line, stop
# it; return the CPUs it counted and, per version, the directories it read
# (dir => "none" or "1.00 CPUs").
sub start_in
{
	my (%scene) = @_;
	my $offset = -s $node->logfile // 0;
	{
		local $ENV{PATH} = "$tmp/bin:$ENV{PATH}";
		local $ENV{WALSCALE_JOIN} = join ' ', @{ $scene{join} // [] };
		local $ENV{WALSCALE_UNSHARE} = $scene{unshare} // '';
		local $ENV{WALSCALE_MOUNTS} = join "\n", @{ $scene{mounts} // [] };
		$node->start;
	}
	$node->wait_for_log(qr/walscale: auto mode on with \d+ WAL insertion locks/,
		$offset);
	my $log = slurp_file($node->logfile, $offset);
	$node->stop;
	my ($cpus) =
	  $log =~ /walscale: auto mode on with \d+ WAL insertion locks \((\d+) CPUs/;
	my %read;
	$read{$1}{$2} = $3
	  while $log =~ /walscale: CPU quota of cgroup v(\d) "([^"]*)": (none|[\d.]+ CPUs)/g;
	return ($cpus, \%read);
}

# Check that version $v's directories were read, each saying what %$expected
# says.
sub read_as
{
	my ($scene, $v, $read, $expected) = @_;
	my @wrong = grep { ($read->{$v}{$_} // 'not read') ne $expected->{$_} }
	  sort keys %$expected;
	ok(!@wrong,
		"$scene: cgroup v$v: the server read "
		  . join(', ', map { "$_ ($expected->{$_})" } sort keys %$expected))
	  or diag("read: "
		  . join(', ', map { "$_ ($read->{$v}{$_})" } sort keys %{ $read->{$v} })
		  . "; wrong: @wrong");
	return;
}

SKIP:
{
	skip 'no cgroup tree to start a server in', 1 unless %tree;

	my ($machine) = start_in();
	cmp_ok($machine // 0, '>=', 1,
		"outside the test's cgroups the server counts $machine CPUs");
	my $can_show = defined $quota_version && $machine >= 2;
	diag("the server counts $machine CPU without a quota: a quota of 1 CPU cannot show")
	  if defined $quota_version && !$can_show;
	my $one = '1.00 CPUs';

	# nested: the quota is nested's, an ancestor of the postmaster's cgroup
	my ($cpus, $read) =
	  start_in(join => [ map { "$tree{$_}/nested/leaf/cgroup.procs" } sort keys %tree ]);
	is($cpus, 1, 'nested: a postmaster under a parent cgroup with a quota of 1 CPU counts 1')
	  if $can_show;
	for my $v (sort keys %tree)
	{
		my $t = $tree{$v};
		read_as(
			'nested', $v, $read,
			{
				"$t/nested/leaf" => 'none',
				"$t/nested" => $v == ($quota_version // 0) ? $one : 'none',
				$t => 'none',
				dirname($t) => 'none'
			});
	}

	skip 'no unprivileged user namespaces', 1 unless $userns;

	# bind: bind/ mounted in place of the whole hierarchy; the hidden mount
	# of the whole hierarchy leads to paths that do not exist
	($cpus, $read) = start_in(
		join => [ map { "$tree{$_}/bind/leaf/cgroup.procs" } sort keys %tree ],
		unshare => '--mount',
		mounts =>
		  [ map { "bind " . dirname($tree{$_}) . " $tree{$_}/bind" } sort keys %tree ]);
	is($cpus, 1,
		'bind: a postmaster in a cgroup with a quota of 1 CPU, mounted as a container\'s, counts 1'
	) if $can_show;
	for my $v (sort keys %tree)
	{
		my $mp = dirname($tree{$v});
		read_as('bind', $v, $read,
			{
				"$mp/leaf" => $v == ($quota_version // 0) ? $one : 'none',
				$mp => 'none'
			});
	}

	# ns: its own cgroup namespace, the hierarchy mounted afresh
	($cpus, $read) = start_in(
		join => [ map { "$tree{$_}/ns/cgroup.procs" } sort keys %tree ],
		unshare => '--mount --cgroup',
		mounts => [ map { "cgroup$_ $tmp/ns-v$_" } sort keys %tree ]);
	is($cpus, 1,
		'ns: a postmaster in a cgroup namespace whose root has a quota of 1 CPU counts 1'
	) if $can_show;
	for my $v (sort keys %tree)
	{
		read_as('ns', $v, $read,
			{ "$tmp/ns-v$v" => $v == ($quota_version // 0) ? $one : 'none' });
	}
}

done_testing();
