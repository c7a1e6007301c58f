/*-------------------------------------------------------------------------
 *
 * walscale_cpus.h
 *		The CPUs this server may use, as the system says: its affinity mask,
 *		and the CPU quota of its cgroups (v1, v2, or both on a hybrid host).
 *
 * walscale_settings.c reads them once per process and gives them, with the CPUs
 * online, to walscale_rules_cpus(), which takes the fewest.  The parsing
 * steps of the quota are exported for t/unit/test_cpus.c
 * (t/019_cgroup_cpus.pl), which builds this file outside the server with
 * FRONTEND defined.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_CPUS_H
#define WALSCALE_CPUS_H

/* CPUs in this process's affinity mask; 0 if the system will not say */
extern int	walscale_cpus_affinity(void);

/*
 * The smallest CPU quota, in CPUs (fractional), of this process's cgroup
 * and its ancestors, in cgroup v1's cpu hierarchy and in cgroup v2, wherever
 * /proc/self/mountinfo says they are mounted; 0 when there is none, or
 * nothing can be read.
 */
extern double walscale_cpus_quota(void);

/* The steps of walscale_cpus_quota(); version is 1 or 2. */

/*
 * A line of /proc/self/cgroup ("ID:CONTROLLERS:PATH"): whether it is the
 * line of the hierarchy that holds the cpu controller (v1: "cpu" among the
 * controllers) or of cgroup v2 ("0::PATH"); if so, *path points to the path,
 * in line, which loses its newline.
 */
extern bool walscale_cgroup_line(char *line, int version, char **path);

/*
 * A line of /proc/self/mountinfo: whether it mounts cgroup v1's hierarchy
 * of the cpu controller, or cgroup v2; if so, *root (the cgroup at the root
 * of the mount) and *mountpoint point into line, unescaped.
 */
extern bool walscale_mountinfo_line(char *line, int version, char **root,
									char **mountpoint);

/*
 * The directory, under a mount of root at mountpoint, of the cgroup at path;
 * false if path is not root or below it (nor is it then visible there), or
 * if dir is too small.
 */
extern bool walscale_cgroup_dir(const char *root, const char *mountpoint,
								const char *path, char *dir, size_t size);

/*
 * The smallest quota in CPUs of the cgroup at dir and of each ancestor, up
 * to and including the one at the mount point, dir's first top bytes; 0 for
 * none.  dir is cut down as it goes.
 */
extern double walscale_cgroup_quota(char *dir, size_t top, int version);

/*
 * The quota in CPUs of the contents of cpu.cfs_quota_us and
 * cpu.cfs_period_us (v1), or of cpu.max (v2); 0 for none ("-1", "max") or
 * anything else.
 */
extern double walscale_quota_v1(const char *quota, const char *period);
extern double walscale_quota_v2(const char *max);

#endif							/* WALSCALE_CPUS_H */
