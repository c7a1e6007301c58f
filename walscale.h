/*-------------------------------------------------------------------------
 *
 * walscale.h
 *		Declarations every walscale source file needs.
 *
 * walscale is split by responsibility, each file calling only those below
 * it (t/017_layers.pl checks that no file includes the header of one above,
 * or uses a name one above defines):
 *
 *	walscale.c			  _PG_init, shared memory, walscale_reset(), the
 *						  settings' views; no file calls into it
 *	walscale_worker.c	  the background worker
 *	walscale_advice.c	  fast-path measurement and walscale_advice
 *	walscale_auto.c		  auto mode: the worker's step, the decisions ring
 *	walscale_waits.c	  the wait sampler
 *	walscale_fastpath.c	  the fast-path overflow count
 *	walscale_counters.c	  the insertion-lock counters' baseline, resizes and
 *						  walscale_stats
 *	walscale_settings.c	  the settings: variables, table, checks, effective
 *						  values, auto mode's bounds on this machine
 *	walscale_auto_rules.c auto mode's rules, pure functions
 *	walscale_cpus.c		  the CPUs the server may use
 *	walscale_common.c	  this header: the state and checks every file needs
 *
 * walscale_core.h is the core patch's interface, walscale_compat.h what
 * differs between PostgreSQL 17 and 18.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_H
#define WALSCALE_H

#include "datatype/timestamp.h"

#include "walscale_compat.h"
#include "walscale_core.h"

/*
 * Preloaded into a server with the core patch of our version: only then are
 * the settings applied and the core's symbols used.  Otherwise walscale only
 * reports (observe mode).
 */
extern bool walscale_core_active;

/*
 * The core patch's fast-path lock groups and overflow count are in effect:
 * PostgreSQL 18's core patch alone, since 17 has no groups
 * (walscale_compat.h).  Only then may FastPathLockGroupsRequested and
 * FastPathLockOverflows be used.
 */
static inline bool
walscale_core_fastpath(void)
{
	return WALSCALE_HAS_FASTPATH_GROUPS && walscale_core_active;
}

/* shared memory is attached: walscale was preloaded */
extern bool walscale_shmem_attached;

/*
 * The extension's SQL versions, for the C functions whose columns changed
 * with them.  From 1.5 on, such a function has one C entry point per version
 * (walscale_settings_info_1_5, ...), each passing its version to the
 * function's _internal(), as pg_stat_statements does; the entry point of 1.0
 * to 1.4 passes the oldest version it serves, and _internal() tells the
 * others apart by the number of columns the installed SQL declares.
 */
typedef enum WalscaleVersion
{
	WALSCALE_V1_0 = 0,
	WALSCALE_V1_1,
	WALSCALE_V1_2,
	WALSCALE_V1_3,
	WALSCALE_V1_4,
	WALSCALE_V1_5,
} WalscaleVersion;

extern void walscale_require_preloaded(void);
extern void walscale_require_core(const char *what);
extern char *walscale_core_missing_reason(void);

#endif							/* WALSCALE_H */
