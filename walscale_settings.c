/*-------------------------------------------------------------------------
 *
 * walscale_settings.c
 *		walscale's settings: their variables and their table, from which
 *		_PG_init defines them, their checks, and what the server runs with
 *		for each.
 *
 * The files that read a setting call into this one, never the reverse:
 * it sits below them (walscale.h lists the files), above only the pure
 * rules and the CPU count that auto mode's bounds come from.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "utils/guc.h"

#include "walscale_settings.h"
#include "walscale_cpus.h"
#include "walscale_auto_rules.h"

/* Largest walscale.insert_lock_attempts; more only delays the sleep. */
#define WALSCALE_MAX_ATTEMPTS	16

/* the CPU count, read once per process: it changes only with a restart */
static int	auto_cpus = 0;

/*
 * The CPUs this server may use: those online, in its affinity mask and
 * within its cgroup quota (walscale_cpus.c), the fewest.  A 4-CPU container
 * on a 96-core host is a 4-CPU server.  Read once: the bounds it gives must
 * stay put.
 */
int
walscale_auto_cpus(void)
{
	if (auto_cpus == 0)
	{
		long		online = sysconf(_SC_NPROCESSORS_ONLN);

		auto_cpus = walscale_rules_cpus(online > 0 ? (int) Min(online, 4096) : 0,
										walscale_cpus_affinity(),
										walscale_cpus_quota());
	}
	return auto_cpus;
}

/* The bounds and the start of walscale_auto_rules.c, for this machine. */
int
walscale_auto_max_locks(void)
{
	return walscale_rules_max_locks(walscale_auto_cpus(),
									XLOG_INSERT_LOCKS_DEFAULT,
									XLOG_INSERT_LOCKS_MAX);
}

int
walscale_auto_min_locks(void)
{
	return walscale_rules_min_locks(walscale_auto_min_locks_setting,
									walscale_auto_max_locks());
}

int
walscale_auto_start_locks(void)
{
	return walscale_rules_start_locks(walscale_auto_cpus(),
									  XLOG_INSERT_LOCKS_DEFAULT,
									  XLOG_INSERT_LOCKS_MAX);
}

/*
 * walscale.insert_locks is -1 (auto mode) or a number of locks; 0 is not a
 * number of locks and would read as "off".
 */
static bool
walscale_check_insert_locks(int *newval, void **extra, GucSource source)
{
	if (*newval != 0)
		return true;

	GUC_check_errdetail("0 is not a number of WAL insertion locks.");
	GUC_check_errhint("Set it to -1 to let walscale choose the number of WAL insertion locks, or to a number between 1 and %d.",
					  XLOG_INSERT_LOCKS_MAX);
	return false;
}

static bool
walscale_check_fastpath_groups(int *newval, void **extra, GucSource source)
{
	if (*newval == 0 || (*newval <= WALSCALE_FASTPATH_GROUPS_MAX &&
						 *newval == (int) pg_nextpower2_32(*newval)))
		return true;

	GUC_check_errdetail("\"walscale.fastpath_groups\" must be 0 or a power of two between 1 and %d.",
						WALSCALE_FASTPATH_GROUPS_MAX);
	return false;
}

/*
 * The number of active locks at the next shared memory initialisation: at
 * start, or after a crash.  Between them, the background worker applies it.
 */
static void
walscale_assign_insert_locks(int newval, void *extra)
{
	if (walscale_core_active)
		XLogInsertLocksRequested = newval == WALSCALE_INSERT_LOCKS_AUTO ?
			walscale_auto_start_locks() : newval;
}

static void
walscale_assign_insert_lock_attempts(int newval, void *extra)
{
	if (walscale_core_active)
		XLogInsertLockAttempts = newval;
}

/*
 * When the module defines a variable, a bad value that postgresql.conf gave
 * its placeholder only draws a WARNING and the default is used: a server
 * would start with a lock count nobody asked for.  Check that value again at
 * ERROR, which during preloading stops the server with the standard message
 * naming the setting.
 */
static void
walscale_recheck_config_value(const char *name, const char *config_value)
{
	if (config_value != NULL)
		(void) set_config_option(name, config_value, PGC_POSTMASTER, PGC_S_FILE,
								 GUC_ACTION_SET, false, ERROR, false);
}

static char *
walscale_config_value(const char *name)
{
	const char *value = GetConfigOption(name, true, false);

	return value ? pstrdup(value) : NULL;
}

/*
 * What the server runs with, for walscale_setting_status and
 * walscale_settings: without the core, what a stock server runs with.
 */
int
walscale_effective_insert_locks(void)
{
	return walscale_core_active ? GetNumWALInsertLocks() :
		WALSCALE_STOCK_INSERT_LOCKS;
}

int
walscale_effective_insert_lock_attempts(void)
{
	return walscale_core_active ? XLogInsertLockAttempts : 0;
}

int
walscale_effective_fastpath_groups(void)
{
	return FastPathLockGroupsPerBackend;
}

static int
walscale_effective_auto_interval(void)
{
	return walscale_auto_interval;
}

/*
 * The settings' variables.  None has an initializer: defining the setting
 * (walscale_settings_define(), from _PG_init()) sets it to its boot value
 * in the table below, before anything reads it, so the boot value is
 * written once.
 * walscale_settings.h declares those that other files read.
 */
int			walscale_insert_locks;
int			walscale_auto_interval;
int			walscale_auto_min_locks_setting;
int			walscale_sample_interval;
static int	walscale_insert_lock_attempts;
int			walscale_fastpath_groups;

/* in the order of walscale_setting_status's rows */
const WalscaleSetting walscale_settings[] = {
	{
		.name = "walscale.insert_locks",
		.short_desc = "Number of WAL insertion locks, or -1 to size them from contention.",
		.long_desc = "More locks let more backends copy WAL records at once; "
		"PostgreSQL's own number is 8.  A reload changes it, "
		"through walscale's background worker, which in auto "
		"mode (-1, the default) also chooses the number.",
		.variable = &walscale_insert_locks,
		.boot_value = WALSCALE_INSERT_LOCKS_AUTO,
		.min_value = WALSCALE_INSERT_LOCKS_AUTO,
		.max_value = XLOG_INSERT_LOCKS_MAX,
		.context = PGC_SIGHUP,
		.check_hook = walscale_check_insert_locks,
		.assign_hook = walscale_assign_insert_locks,
		.recheck = true,
		.effective = walscale_effective_insert_locks,
	},
	{
		.name = "walscale.insert_lock_attempts",
		.short_desc = "Conditional attempts on different WAL insertion locks before sleeping on one.",
		.long_desc = "0 sleeps on the preferred lock, as PostgreSQL does; "
		"at most the number of locks minus 1 are made.",
		.variable = &walscale_insert_lock_attempts,
		.boot_value = 0,
		.min_value = 0,
		.max_value = WALSCALE_MAX_ATTEMPTS,
		.context = PGC_SIGHUP,
		.assign_hook = walscale_assign_insert_lock_attempts,
		.recheck = true,
		.effective = walscale_effective_insert_lock_attempts,
	},
	{
		.name = "walscale.fastpath_groups",
		.short_desc = "Number of 16-slot fast-path lock groups per backend.",
		.long_desc = "0 derives it from max_locks_per_transaction, as PostgreSQL does.",
		.variable = &walscale_fastpath_groups,
		.boot_value = 0,
		.min_value = 0,
		.max_value = WALSCALE_FASTPATH_GROUPS_MAX,
		.context = PGC_POSTMASTER,
		.check_hook = walscale_check_fastpath_groups,
		.recheck = true,
		.effective = walscale_effective_fastpath_groups,
		.not_in_this_version = WALSCALE_NO_FASTPATH_GROUPS_REASON,
	},
	{
		.name = "walscale.auto_interval",
		.short_desc = "Time over which auto mode measures contention before each decision.",
		.long_desc = "Changes are at least this far apart.",
		.variable = &walscale_auto_interval,
		.boot_value = 10,
		.min_value = 1,
		.max_value = 3600,
		.context = PGC_SIGHUP,
		.flags = GUC_UNIT_S,
		.effective = walscale_effective_auto_interval,
		.auto_mode_only = true,
	},
	{
		.name = "walscale.auto_min_locks",
		.short_desc = "Fewest WAL insertion locks auto mode goes down to.",
		.long_desc = "PostgreSQL's own 8 by default, so that auto mode "
		"never has fewer locks than a stock server.",
		.variable = &walscale_auto_min_locks_setting,
		.boot_value = WALSCALE_STOCK_INSERT_LOCKS,
		.min_value = 1,
		.max_value = XLOG_INSERT_LOCKS_MAX,
		.context = PGC_SIGHUP,
		.effective = walscale_auto_min_locks,
		.auto_mode_only = true,
	},
	/* in effect on any server: no row in walscale_setting_status */
	{
		.name = "walscale.sample_interval",
		.short_desc = "Time between two samples of the backends' wait events.",
		.long_desc = "0 turns sampling off.",
		.variable = &walscale_sample_interval,
		.boot_value = WALSCALE_SAMPLE_INTERVAL_DEFAULT,
		.min_value = 0,
		.max_value = WALSCALE_SAMPLE_INTERVAL_MAX,
		.context = PGC_SIGHUP,
		.flags = GUC_UNIT_MS,
	},
};

const int	walscale_settings_count = lengthof(walscale_settings);

/*
 * Define every setting, reserve the prefix, and check again at ERROR the
 * values postgresql.conf gave those that stop the server when bad.
 */
void
walscale_settings_define(void)
{
	char	   *config_values[lengthof(walscale_settings)];

	/* read before the definitions replace a bad value with the boot value */
	for (int i = 0; i < lengthof(walscale_settings); i++)
		config_values[i] = walscale_settings[i].recheck ?
			walscale_config_value(walscale_settings[i].name) : NULL;

	for (int i = 0; i < lengthof(walscale_settings); i++)
	{
		const WalscaleSetting *setting = &walscale_settings[i];

		DefineCustomIntVariable(setting->name, setting->short_desc,
								setting->long_desc, setting->variable,
								setting->boot_value,
								setting->min_value, setting->max_value,
								setting->context, setting->flags,
								setting->check_hook, setting->assign_hook,
								NULL);
	}

	MarkGUCPrefixReserved("walscale");

	for (int i = 0; i < lengthof(walscale_settings); i++)
		walscale_recheck_config_value(walscale_settings[i].name,
									  config_values[i]);
}
