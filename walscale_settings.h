/*-------------------------------------------------------------------------
 *
 * walscale_settings.h
 *		walscale's settings: their variables, their table, and what the
 *		server runs with for each.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_SETTINGS_H
#define WALSCALE_SETTINGS_H

#include "utils/guc.h"

#include "walscale.h"

/* walscale.insert_locks = -1: the background worker chooses the number */
#define WALSCALE_INSERT_LOCKS_AUTO	(-1)

/* walscale.sample_interval in ms: default and bounds (docs/advice.md) */
#define WALSCALE_SAMPLE_INTERVAL_DEFAULT	10
#define WALSCALE_SAMPLE_INTERVAL_MAX		1000

/*
 * The settings' variables, defined in walscale_settings.c beside their rows
 * in the table, and set by the GUC machinery.
 */
extern PGDLLIMPORT int walscale_insert_locks;
extern PGDLLIMPORT int walscale_auto_interval;
extern PGDLLIMPORT int walscale_auto_min_locks_setting;
extern PGDLLIMPORT int walscale_sample_interval;
extern PGDLLIMPORT int walscale_fastpath_groups;

/*
 * walscale's settings, all integers: one row each drives its definition
 * (walscale_settings_define), the re-check of its value in postgresql.conf,
 * and its row in walscale_setting_status.
 */
typedef struct WalscaleSetting
{
	/* DefineCustomIntVariable()'s arguments */
	const char *name;
	const char *short_desc;
	const char *long_desc;
	int		   *variable;
	int			boot_value;
	int			min_value;
	int			max_value;
	GucContext	context;
	int			flags;
	GucIntCheckHook check_hook;
	GucIntAssignHook assign_hook;

	/*
	 * A bad value in postgresql.conf stops the server at start
	 * (walscale_recheck_config_value); without it PostgreSQL warns and the
	 * boot value is used.
	 */
	bool		recheck;

	/* what the server runs with, for walscale_setting_status; NULL: no row */
	int			(*effective) (void);

	/* in effect in auto mode only */
	bool		auto_mode_only;

	/*
	 * Why this PostgreSQL version has nothing the setting could change, for
	 * walscale_setting_status, which then gives no effective value; NULL
	 * where it has.
	 */
	const char *not_in_this_version;
} WalscaleSetting;

/* in the order of walscale_setting_status's rows */
extern const WalscaleSetting walscale_settings[];
extern const int walscale_settings_count;

extern void walscale_settings_define(void);

/* what the server runs with: without the core, what a stock server does */
extern int	walscale_effective_insert_locks(void);
extern int	walscale_effective_insert_lock_attempts(void);
extern int	walscale_effective_fastpath_groups(void);

/*
 * Auto mode's bounds and start on this machine (walscale_auto_rules.c's,
 * for the CPUs the server may use): the start is what walscale.insert_locks
 * = -1 means at server start, the floor what walscale.auto_min_locks does.
 */
extern int	walscale_auto_cpus(void);
extern int	walscale_auto_start_locks(void);
extern int	walscale_auto_min_locks(void);
extern int	walscale_auto_max_locks(void);

#endif							/* WALSCALE_SETTINGS_H */
