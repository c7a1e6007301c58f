/*-------------------------------------------------------------------------
 *
 * test_cpus.c
 *		Unit tests of the parsing steps of walscale_cpus.c: the lines of
 *		/proc/self/cgroup and /proc/self/mountinfo that name the cpu
 *		controller's hierarchy, the directory of a cgroup under a mount whose
 *		root is not the hierarchy's, the quota files' contents, and the walk
 *		up a tree of plain files laid out as cgroups.  Prints TAP.
 *
 * The lines are those of real hosts and containers: a hybrid host (v1
 * controllers under /sys/fs/cgroup, v2 at /sys/fs/cgroup/unified), a pure
 * v2 host, Docker without a cgroup namespace (the container's cgroup
 * mounted in place of the hierarchy), and a cgroup namespace that sees the
 * host's mount as "/../..".  t/019_cgroup_cpus.pl builds this file with the
 * compiler and flags of the server under test and runs it; the same file
 * then runs servers in real cgroups.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <stdarg.h>
#include <stdlib.h>

#include "walscale_cpus.h"
#include "unit_tap.h"


static void
is_str(const char *got, const char *expected, const char *what)
{
	bool		same = got != NULL && expected != NULL ?
		strcmp(got, expected) == 0 : got == expected;

	ok(same, "%s", what);
	if (!same)
		printf("#   got \"%s\", expected \"%s\"\n",
			   got ? got : "(none)", expected ? expected : "(none)");
}

static void
is_quota(double got, double expected, const char *what)
{
	ok(got == expected, "%s", what);
	if (got != expected)
		printf("#   got %g, expected %g\n", got, expected);
}

/* the path of /proc/self/cgroup's line for version, or NULL */
static const char *
cgroup_path(const char *text, int version)
{
	static char line[256];
	char	   *path;

	strlcpy(line, text, sizeof(line));
	return walscale_cgroup_line(line, version, &path) ? path : NULL;
}

/* "ROOT MOUNTPOINT" of a mountinfo line for version, or NULL */
static const char *
mount_of(const char *text, int version)
{
	static char result[512];
	char		line[512];
	char	   *root;
	char	   *mountpoint;

	strlcpy(line, text, sizeof(line));
	if (!walscale_mountinfo_line(line, version, &root, &mountpoint))
		return NULL;
	snprintf(result, sizeof(result), "%s %s", root, mountpoint);
	return result;
}

/* the directory of path under a mount of root at mountpoint, or NULL */
static const char *
dir_of(const char *root, const char *mountpoint, const char *path)
{
	static char dir[MAXPGPATH];

	return walscale_cgroup_dir(root, mountpoint, path, dir, sizeof(dir)) ? dir : NULL;
}

static void
test_cgroup_lines(void)
{
	is_str(cgroup_path("1:cpu:/walscale-test/nested/leaf\n", 1),
		   "/walscale-test/nested/leaf", "cgroup: v1 line of the cpu controller alone");
	is_str(cgroup_path("4:cpu,cpuacct:/docker/abc\n", 1), "/docker/abc",
		   "cgroup: v1 line of cpu,cpuacct");
	is_str(cgroup_path("4:cpuacct,cpu:/docker/abc\n", 1), "/docker/abc",
		   "cgroup: v1 line of cpuacct,cpu");
	is_str(cgroup_path("2:cpuacct:/x\n", 1), NULL, "cgroup: cpuacct is not cpu");
	is_str(cgroup_path("3:cpuset:/x\n", 1), NULL, "cgroup: cpuset is not cpu");
	is_str(cgroup_path("9:name=cpu:/x\n", 1), NULL, "cgroup: a named hierarchy is not cpu");
	is_str(cgroup_path("0::/user.slice/a.scope\n", 1), NULL, "cgroup: v2's line is not v1's");
	is_str(cgroup_path("0::/user.slice/a.scope\n", 2), "/user.slice/a.scope",
		   "cgroup: v2's line");
	is_str(cgroup_path("0::/\n", 2), "/", "cgroup: v2's line at the namespace root");
	is_str(cgroup_path("1:cpu:/walscale-test\n", 2), NULL, "cgroup: a v1 line is not v2's");
	is_str(cgroup_path("1:cpu:/a:b\n", 1), "/a:b", "cgroup: a colon in the path");
	is_str(cgroup_path("1:cpu\n", 1), NULL, "cgroup: a line with one colon");
	is_str(cgroup_path("garbage", 2), NULL, "cgroup: a line without a colon");
	is_str(cgroup_path("0::relative\n", 2), NULL, "cgroup: a path that is not absolute");
}

static void
test_mountinfo_lines(void)
{
	const char *v1 = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n";
	const char *v1_both =
		"25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n";
	const char *cpuacct = "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n";
	const char *v2 = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
	const char *docker =
		"1210 1201 0:29 /docker/abc /sys/fs/cgroup/cpu ro,nosuid master:11 - cgroup cgroup rw,cpu,cpuacct\n";
	const char *spaced = "50 31 0:29 /a\\040b /mnt/my\\040cgroups rw - cgroup cgroup rw,cpu\n";

	is_str(mount_of(v1, 1), "/ /sys/fs/cgroup/cpu", "mountinfo: v1 cpu hierarchy");
	is_str(mount_of(v1_both, 1), "/ /sys/fs/cgroup/cpu,cpuacct",
		   "mountinfo: v1 cpu,cpuacct hierarchy, with an optional field");
	is_str(mount_of(cpuacct, 1), NULL, "mountinfo: the cpuacct hierarchy is not cpu's");
	is_str(mount_of(v1, 2), NULL, "mountinfo: a v1 mount is not v2");
	is_str(mount_of(v2, 2), "/ /sys/fs/cgroup/unified", "mountinfo: v2");
	is_str(mount_of(v2, 1), NULL, "mountinfo: v2 is not v1's cpu hierarchy");
	is_str(mount_of(docker, 1), "/docker/abc /sys/fs/cgroup/cpu",
		   "mountinfo: a container's cgroup mounted in place of the hierarchy");
	is_str(mount_of(spaced, 1), "/a b /mnt/my cgroups", "mountinfo: escaped spaces");
	is_str(mount_of("31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n", 1), NULL,
		   "mountinfo: not a cgroup");
	is_str(mount_of("32 31 0:29 / /sys/fs/cgroup/cpu rw - cgroup\n", 1), NULL,
		   "mountinfo: a line cut short");
	is_str(mount_of("32 31 0:29 /\n", 1), NULL, "mountinfo: a line without its separator");
}

static void
test_dirs(void)
{
	is_str(dir_of("/", "/sys/fs/cgroup/cpu", "/a/b"), "/sys/fs/cgroup/cpu/a/b",
		   "dir: the whole hierarchy mounted");
	is_str(dir_of("/", "/sys/fs/cgroup/cpu", "/"), "/sys/fs/cgroup/cpu",
		   "dir: the hierarchy's root is the mount point");
	is_str(dir_of("/docker/abc", "/sys/fs/cgroup/cpu", "/docker/abc"), "/sys/fs/cgroup/cpu",
		   "dir: the container's cgroup mounted in place of the hierarchy");
	is_str(dir_of("/docker/abc", "/sys/fs/cgroup/cpu", "/docker/abc/sub"),
		   "/sys/fs/cgroup/cpu/sub", "dir: a cgroup below a mounted container's");
	is_str(dir_of("/docker/abc", "/sys/fs/cgroup/cpu", "/docker/abcd"), NULL,
		   "dir: a sibling whose name begins with the root's is not below it");
	is_str(dir_of("/docker/abc", "/sys/fs/cgroup/cpu", "/docker"), NULL,
		   "dir: an ancestor of the mount's root cannot be reached");
	is_str(dir_of("/../..", "/sys/fs/cgroup/cpu", "/"), NULL,
		   "dir: a mount made outside the cgroup namespace");
	is_str(dir_of("/", "/", "/a"), "/a", "dir: a hierarchy mounted at /");
	is_str(dir_of("/", "/", "/"), "/", "dir: the root of a hierarchy mounted at /");
	is_str(dir_of("/", "/sys/fs/cgroup", "relative"), NULL, "dir: a relative path");
}

static void
test_quotas(void)
{
	is_quota(walscale_quota_v1("100000\n", "100000\n"), 1.0, "v1: one CPU");
	is_quota(walscale_quota_v1("150000\n", "100000\n"), 1.5, "v1: one and a half CPUs");
	is_quota(walscale_quota_v1("-1\n", "100000\n"), 0, "v1: -1 is no quota");
	is_quota(walscale_quota_v1("100000\n", "0\n"), 0, "v1: a zero period is no quota");
	is_quota(walscale_quota_v1("", "100000\n"), 0, "v1: an empty file is no quota");
	is_quota(walscale_quota_v2("max 100000\n"), 0, "v2: max is no quota");
	is_quota(walscale_quota_v2("200000 100000\n"), 2.0, "v2: two CPUs");
	is_quota(walscale_quota_v2("50000 100000\n"), 0.5, "v2: half a CPU");
	is_quota(walscale_quota_v2("100000\n"), 0, "v2: a quota without a period");
	is_quota(walscale_quota_v2("0 100000\n"), 0, "v2: a zero quota is no quota");
}

/* write text into dir/name, made with its directories */
static void
put(const char *base, const char *dir, const char *name, const char *text)
{
	char		path[MAXPGPATH];
	char		command[MAXPGPATH + 16];
	FILE	   *f;

	snprintf(command, sizeof(command), "mkdir -p %s/%s", base, dir);
	if (system(command) != 0)
		printf("# %s failed\n", command);
	if (name == NULL)
		return;
	snprintf(path, sizeof(path), "%s/%s/%s", base, dir, name);
	if ((f = fopen(path, "w")) == NULL)
	{
		printf("# could not write %s\n", path);
		return;
	}
	fputs(text, f);
	fclose(f);
}

/* walscale_cgroup_quota() from base/path up to base/mnt */
static double
quota_from(const char *base, const char *path, int version)
{
	char		dir[MAXPGPATH];

	snprintf(dir, sizeof(dir), "%s/mnt", base);
	return walscale_cgroup_quota(strcat(dir, path), strlen(base) + 4, version);
}

/*
 * The walk up the tree, on plain files laid out as a cgroup tree mounted at
 * BASE/mnt, with a quota in BASE above the mount point that must not count.
 */
static void
test_walk(void)
{
	char		base[] = "/tmp/test_cpus_XXXXXX";
	char		command[64];

	if (mkdtemp(base) == NULL)
	{
		ok(false, "walk: a temporary directory");
		return;
	}
	put(base, ".", "cpu.max", "10000 100000\n");
	put(base, "mnt", "cpu.max", "300000 100000\n");
	put(base, "mnt/a", "cpu.max", "150000 100000\n");
	put(base, "mnt/a/b", "cpu.max", "garbage\n");
	put(base, "mnt/a/b/c", "cpu.max", "max 100000\n");
	put(base, "mnt/d", NULL, NULL);
	is_quota(quota_from(base, "/a/b/c", 2), 1.5,
			 "walk: v2, an ancestor's quota, none above the mount point");
	is_quota(quota_from(base, "", 2), 3.0, "walk: v2, the mount point's quota");
	is_quota(quota_from(base, "/d", 2), 3.0,
			 "walk: v2, a cgroup without cpu.max, the mount point's quota");
	is_quota(quota_from(base, "/a/b/c", 1), 0, "walk: v1 reads no cpu.max");

	put(base, ".", "cpu.cfs_quota_us", "10000\n");
	put(base, ".", "cpu.cfs_period_us", "100000\n");
	put(base, "mnt", "cpu.cfs_quota_us", "-1\n");
	put(base, "mnt", "cpu.cfs_period_us", "100000\n");
	put(base, "mnt/a", "cpu.cfs_quota_us", "400000\n");
	put(base, "mnt/a", "cpu.cfs_period_us", "100000\n");
	put(base, "mnt/a/b", "cpu.cfs_quota_us", "50000\n");
	put(base, "mnt/a/b", "cpu.cfs_period_us", "100000\n");
	put(base, "mnt/a/b/c", "cpu.cfs_quota_us", "20000\n");
	is_quota(quota_from(base, "/a/b", 1), 0.5, "walk: v1, the cgroup's own quota");
	is_quota(quota_from(base, "/a/b/c", 1), 0.5,
			 "walk: v1, a quota without a period is none, the parent's counts");
	is_quota(quota_from(base, "/a", 1), 4.0, "walk: v1, above the smaller quota below");
	is_quota(quota_from(base, "/missing/x", 1), 0,
			 "walk: v1, missing directories up to a mount point without a quota");

	snprintf(command, sizeof(command), "rm -rf %s", base);
	if (system(command) != 0)
		printf("# %s failed\n", command);
}

int
main(void)
{
	test_cgroup_lines();
	test_mountinfo_lines();
	test_dirs();
	test_quotas();
	test_walk();
	/* whatever the machine: they must return, and say something sane */
	ok(walscale_cpus_quota() >= 0, "this process's quota is none or positive");
	ok(walscale_cpus_affinity() >= 0, "this process's affinity is read");
	return unit_tap_done();
}
