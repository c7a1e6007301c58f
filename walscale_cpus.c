/*-------------------------------------------------------------------------
 *
 * walscale_cpus.c
 *		The CPUs this server may use, as the system says: its affinity mask,
 *		and the CPU quota of its cgroups.  Auto mode starts from the CPU
 *		count and never goes above eight locks per CPU (walscale_settings.c,
 *		walscale_rules_cpus()), so a 4-CPU container on a 96-core host must
 *		count 4, not 96.
 *
 * A CPU quota limits a cgroup and everything below it, so the quota that
 * binds this process is the smallest over its own cgroup and each ancestor:
 * a container's runtime sets it on the container's cgroup, and the process
 * may sit in a cgroup below it (a systemd unit inside the container, a
 * nested pool).  In cgroup v1 the quota is cpu.cfs_quota_us (-1: none) over
 * cpu.cfs_period_us, in the hierarchy the cpu controller is attached to; in
 * cgroup v2 it is cpu.max, "max PERIOD" (none) or "QUOTA PERIOD".
 *
 * Where to read them:
 *
 * - /proc/self/cgroup gives the process's cgroup in each hierarchy, as a
 *	 path from the root of its cgroup namespace: "ID:CONTROLLERS:PATH", the
 *	 v1 line whose controllers include "cpu" (often "cpu,cpuacct"), and v2's
 *	 "0::PATH".
 * - /proc/self/mountinfo says where each hierarchy is mounted (v1: type
 *	 "cgroup", its controllers among the super options; v2: "cgroup2") and
 *	 which cgroup is the root of the mount (the fourth field), as a path from
 *	 the same namespace root.  It is "/" when the whole hierarchy is
 *	 mounted, or a container's own cgroup mounted in its place (Docker
 *	 without a cgroup namespace bind-mounts /docker/ID at
 *	 /sys/fs/cgroup/cpu).  The cgroup's directory is the mount point
 *	 followed by the rest of its path below the mount's root; a cgroup not
 *	 below the root (a mount made outside the process's cgroup namespace
 *	 shows a root such as "/../..") cannot be reached through that mount.
 *	 The ancestors above a mount's root cannot be read through it either;
 *	 they belong to the host, whose quota a container's own is within.
 *
 * Both versions are read, through every mount of each, and the smallest
 * quota taken: on a hybrid host (systemd's, with the v1 controllers under
 * /sys/fs/cgroup/<controller> and v2 at /sys/fs/cgroup/unified) the cpu
 * controller is in one hierarchy only, and a v2 tree without cpu.max says
 * nothing about the quota in v1's.  A file that is missing or unreadable,
 * or says anything but a quota, counts as no quota: a wrong count costs
 * locks, never the server.
 *
 * The cpuset controller is not read: the kernel keeps each task's affinity
 * mask within its cpuset's effective CPUs, in both versions, and changes
 * the masks when the cpuset changes, so sched_getaffinity() counts it.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifdef FRONTEND
#include "postgres_fe.h"
#else
#include "postgres.h"
#endif

#include <sched.h>

#include "common/string.h"
#include "lib/stringinfo.h"

#include "walscale_cpus.h"

int
walscale_cpus_affinity(void)
{
#ifdef CPU_COUNT_S
	for (int size = 1024; size <= 65536; size *= 2)
	{
		cpu_set_t  *set = CPU_ALLOC(size);
		size_t		bytes = CPU_ALLOC_SIZE(size);
		int			n = 0;

		if (set == NULL)
			return 0;
		if (sched_getaffinity(0, bytes, set) == 0)
			n = CPU_COUNT_S(bytes, set);
		CPU_FREE(set);
		if (n > 0 || errno != EINVAL)
			return n;
	}
#endif
	return 0;
}

/* Whether the comma-separated list has the item name. */
static bool
has_item(const char *list, const char *name)
{
	size_t		len = strlen(name);

	for (;;)
	{
		size_t		n = strcspn(list, ",");

		if (n == len && strncmp(list, name, len) == 0)
			return true;
		if (list[n] == '\0')
			return false;
		list += n + 1;
	}
}

bool
walscale_cgroup_line(char *line, int version, char **path)
{
	char	   *controllers = strchr(line, ':');
	char	   *rest;

	if (controllers == NULL)
		return false;
	*controllers++ = '\0';
	if ((rest = strchr(controllers, ':')) == NULL)
		return false;
	*rest++ = '\0';
	rest[strcspn(rest, "\n")] = '\0';
	if (rest[0] != '/')
		return false;
	*path = rest;
	if (version == 2)
		return strcmp(line, "0") == 0 && controllers[0] == '\0';
	return strcmp(line, "0") != 0 && has_item(controllers, "cpu");
}

/* mountinfo's escapes of a space, tab, newline or backslash: "\040" */
static void
unescape_octal(char *s)
{
	char	   *out = s;

	while (*s != '\0')
	{
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
			s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7')
		{
			*out++ = (char) (((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		}
		else
			*out++ = *s++;
	}
	*out = '\0';
}

bool
walscale_mountinfo_line(char *line, int version, char **root, char **mountpoint)
{
	char	   *field[6];
	int			nfields = 0;
	char	   *fstype = NULL;
	char	   *options = NULL;
	char	   *save;

	/*
	 * ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE
	 * SOURCE SUPEROPTIONS
	 */
	for (char *tok = strtok_r(line, " \n", &save); tok != NULL;
		 tok = strtok_r(NULL, " \n", &save))
	{
		if (nfields < lengthof(field))
			field[nfields++] = tok;
		else if (strcmp(tok, "-") == 0)
		{
			fstype = strtok_r(NULL, " \n", &save);
			if (fstype != NULL && strtok_r(NULL, " \n", &save) != NULL)
				options = strtok_r(NULL, " \n", &save);
			break;
		}
	}
	if (options == NULL)
		return false;
	if (version == 1 &&
		(strcmp(fstype, "cgroup") != 0 || !has_item(options, "cpu")))
		return false;
	if (version == 2 && strcmp(fstype, "cgroup2") != 0)
		return false;
	unescape_octal(field[3]);
	unescape_octal(field[4]);
	*root = field[3];
	*mountpoint = field[4];
	return true;
}

bool
walscale_cgroup_dir(const char *root, const char *mountpoint,
					const char *path, char *dir, size_t size)
{
	/* every path is below "/", the root of the whole hierarchy */
	size_t		rootlen = strcmp(root, "/") == 0 ? 0 : strlen(root);
	const char *rest;

	if (path[0] != '/' || strncmp(path, root, rootlen) != 0)
		return false;
	/* below the root, not beside it: "/a/b" is below "/a", "/ab" is not */
	rest = path + rootlen;
	if (rest[0] != '\0' && rest[0] != '/')
		return false;
	/* the root itself: the mount point, without a trailing slash */
	if (strcmp(rest, "/") == 0)
		rest = "";
	/* a mount at "/" (a container's cgroupfs at its root): no double slash */
	if (strcmp(mountpoint, "/") == 0 && rest[0] != '\0')
		mountpoint = "";
	return snprintf(dir, size, "%s%s", mountpoint, rest) < (int) size;
}

double
walscale_quota_v1(const char *quota, const char *period)
{
	long long	q;
	long long	p;

	if (sscanf(quota, "%lld", &q) != 1 || sscanf(period, "%lld", &p) != 1 ||
		q <= 0 || p <= 0)
		return 0;
	return (double) q / p;
}

double
walscale_quota_v2(const char *max)
{
	long long	q;
	long long	p;

	/* "max 100000" fails at "max" */
	if (sscanf(max, "%lld %lld", &q, &p) != 2 || q <= 0 || p <= 0)
		return 0;
	return (double) q / p;
}

/* The first line of a small file, or false. */
static bool
read_first_line(const char *dir, const char *name, char *buf, int size)
{
	char		file[MAXPGPATH + 32];
	FILE	   *f;
	bool		found;

	snprintf(file, sizeof(file), "%s/%s", dir, name);
	if ((f = fopen(file, "r")) == NULL)
		return false;
	found = fgets(buf, size, f) != NULL;
	fclose(f);
	return found;
}

/* The quota of the cgroup at dir, in CPUs; 0: none. */
static double
dir_quota(const char *dir, int version)
{
	char		quota[64];
	char		period[64];

	if (version == 1)
	{
		if (!read_first_line(dir, "cpu.cfs_quota_us", quota, sizeof(quota)) ||
			!read_first_line(dir, "cpu.cfs_period_us", period, sizeof(period)))
			return 0;
		return walscale_quota_v1(quota, period);
	}
	if (!read_first_line(dir, "cpu.max", quota, sizeof(quota)))
		return 0;
	return walscale_quota_v2(quota);
}

/* The smaller of two quotas, 0 being none. */
static double
smaller_quota(double a, double b)
{
	if (a <= 0)
		return b;
	if (b <= 0)
		return a;
	return Min(a, b);
}

/* Each directory read is reported at DEBUG1: its quota, or none. */
double
walscale_cgroup_quota(char *dir, size_t top, int version)
{
	double		best = 0;

	for (;;)
	{
		double		q = dir_quota(dir, version);
		char	   *slash;

#ifndef FRONTEND
		if (q > 0)
			elog(DEBUG1, "walscale: CPU quota of cgroup v%d \"%s\": %.2f CPUs",
				 version, dir, q);
		else
			elog(DEBUG1, "walscale: CPU quota of cgroup v%d \"%s\": none",
				 version, dir);
#endif
		best = smaller_quota(best, q);
		if (strlen(dir) <= top || (slash = strrchr(dir, '/')) == NULL)
			break;
		/* the parent; below a mount at "/", "/" */
		if (slash == dir)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	return best;
}

/* This process's cgroup in the hierarchy of version, or NULL; palloc'd. */
static char *
own_cgroup(int version)
{
	FILE	   *f = fopen("/proc/self/cgroup", "r");
	StringInfoData line;
	char	   *path;
	char	   *result = NULL;

	if (f == NULL)
		return NULL;
	initStringInfo(&line);
	while (result == NULL && pg_get_line_buf(f, &line))
	{
		if (walscale_cgroup_line(line.data, version, &path))
			result = pstrdup(path);
	}
	pfree(line.data);
	fclose(f);
	return result;
}

double
walscale_cpus_quota(void)
{
	double		best = 0;

	for (int version = 1; version <= 2; version++)
	{
		char	   *path = own_cgroup(version);
		FILE	   *f;
		StringInfoData line;

		if (path == NULL)
			continue;
		if ((f = fopen("/proc/self/mountinfo", "r")) == NULL)
		{
			pfree(path);
			continue;
		}
		initStringInfo(&line);
		while (pg_get_line_buf(f, &line))
		{
			char	   *root;
			char	   *mountpoint;
			char		dir[MAXPGPATH];

			if (walscale_mountinfo_line(line.data, version, &root, &mountpoint) &&
				walscale_cgroup_dir(root, mountpoint, path, dir, sizeof(dir)))
				best = smaller_quota(best,
									 walscale_cgroup_quota(dir, strlen(mountpoint),
														   version));
		}
		pfree(line.data);
		fclose(f);
		pfree(path);
	}
	return best;
}
