/*-------------------------------------------------------------------------
 *
 * walscale.c
 *		Size and steer PostgreSQL's WAL insertion locks and fast-path lock
 *		groups from GUCs, and report their contention counters through SQL.
 *
 * The mechanism lives in the server, added by walscale's core patch
 * (patches/pg18/): a variable-size array of insertion locks with counters
 * beside each lock, a number of active locks that can change at run time,
 * conditional attempts before sleeping, a requested number of fast-path
 * groups and a fast-path overflow counter.  This module holds the policy: it
 * chooses the fast-path size at server start, the number of active locks and
 * of attempts at any reload (a background worker of its own applies the
 * number of locks), and keeps a baseline of the counters so that a reset
 * never writes to the counters the insertion path updates.
 *
 * This file is the top of the module (walscale.h lists the files), and no
 * other file calls into it: _PG_init defines the settings (their table is
 * walscale_settings.c's) and sets up shared memory, and its SQL functions
 * are those that span the others, walscale_reset() and the settings'
 * views.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "walscale_advice.h"
#include "walscale_auto.h"
#include "walscale_counters.h"
#include "walscale_fastpath.h"
#include "walscale_settings.h"
#include "walscale_waits.h"
#include "walscale_worker.h"

/* the Makefile's EXTVERSION */
#ifndef WALSCALE_VERSION
#error "WALSCALE_VERSION is not defined: build walscale with its Makefile"
#endif
PG_MODULE_MAGIC_EXT(.name = "walscale",.version = WALSCALE_VERSION);

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

PG_FUNCTION_INFO_V1(walscale_reset);
PG_FUNCTION_INFO_V1(walscale_settings_info);
PG_FUNCTION_INFO_V1(walscale_settings_info_1_5);
PG_FUNCTION_INFO_V1(walscale_setting_status);

static void
walscale_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(walscale_counters_shmem_size());
	RequestAddinShmemSpace(walscale_fastpath_shmem_size());
	RequestAddinShmemSpace(walscale_worker_shmem_size());
	RequestAddinShmemSpace(walscale_auto_shmem_size());
	RequestAddinShmemSpace(walscale_advice_shmem_size());
	RequestAddinShmemSpace(walscale_waits_shmem_size());
	/* the reset lock, auto mode's decisions, the wait samples */
	RequestNamedLWLockTranche("walscale", 3);
}

static void
walscale_shmem_startup(void)
{
	LWLockPadded *locks;
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);

	/*
	 * The structures keep pointers to these locks, set by the process that
	 * initialises shared memory: the postmaster or a single-user backend.  An
	 * EXEC_BACKEND child, which runs this hook too, finds them set, and could
	 * not look the tranche up: GetNamedLWLockTranche() searches the requests,
	 * which only the process that initialised shared memory made.
	 */
	locks = IsUnderPostmaster ? NULL : GetNamedLWLockTranche("walscale");
	found = walscale_counters_shmem_init(locks ? &locks[0].lock : NULL);
	Assert(found == (locks == NULL));
	walscale_fastpath_shmem_init();
	walscale_worker_shmem_init();
	walscale_auto_shmem_init(locks ? &locks[1].lock : NULL, found);
	walscale_advice_shmem_init(found);
	walscale_waits_shmem_init(locks ? &locks[2].lock : NULL);
	LWLockRelease(AddinShmemInitLock);
	walscale_shmem_attached = true;

	/* say once, at each start, what the server runs with */
#if WALSCALE_HAS_FASTPATH_GROUPS
	if (!found && walscale_core_active)
		ereport(LOG,
				(errmsg("walscale: %d WAL insertion locks, %d conditional attempts, %d fast-path lock groups per backend",
						GetNumWALInsertLocks(), XLogInsertLockAttempts,
						FastPathLockGroupsPerBackend)));
#else
	if (!found && walscale_core_active)
		ereport(LOG,
				(errmsg("walscale: %d WAL insertion locks, %d conditional attempts, %d fast-path slots per backend",
						GetNumWALInsertLocks(), XLogInsertLockAttempts,
						FastPathLockSlotsPerBackend()),
				 errdetail("\"walscale.fastpath_groups\" is not in effect: %s",
						   WALSCALE_NO_FASTPATH_GROUPS_REASON)));
#endif
}

static void
walscale_xact_callback(XactEvent event, void *arg)
{
	/* before the overflows are published: it needs this transaction's */
	walscale_advice_xact_callback(event);
	walscale_fastpath_publish();
}

/*
 * A missing or other core is not bad input: the server must start, so say
 * once, in the postmaster, what walscale cannot do and what to install.
 */
static void
walscale_warn_core_missing(void)
{
	ereport(WARNING,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("walscale is in observe mode: its settings are not in effect"),
			 errdetail("%s Without it, walscale cannot change %s, and has no counters.",
					   walscale_core_missing_reason(), WALSCALE_CORE_CHANGES),
			 errhint("Install the PostgreSQL server built with walscale's core patch version %d, and the walscale module built for it; walscale_setting_status shows what is in effect.",
					 WALSCALE_CORE_VERSION)));
}

void
_PG_init(void)
{
	/*
	 * Shared memory is sized at server start; loaded later, the module only
	 * provides its SQL functions, which then report that it is not preloaded.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	walscale_core_active = walscale_core_present();
	if (!walscale_core_active && !IsUnderPostmaster)
		walscale_warn_core_missing();

	walscale_settings_define();

	/*
	 * Without the core, the settings keep their values, checked as above, and
	 * walscale_setting_status says that they are not in effect.  With it:
	 * slots for the most locks, whatever the number active, so that a resize
	 * needs no allocation.  They cost 256 bytes each, and flushers and the
	 * all-lock path visit only the active ones.  The number of locks and the
	 * attempts reach the server through their assign hooks.
	 */
	if (walscale_core_active)
	{
		XLogInsertLocksAllocated = XLOG_INSERT_LOCKS_MAX;
		if (walscale_core_fastpath())
			FastPathLockGroupsRequested = walscale_fastpath_groups;
		RegisterXactCallback(walscale_xact_callback, NULL);
	}
	walscale_register_worker();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = walscale_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = walscale_shmem_startup;
}

/* walscale_settings' columns, by the extension version that set them */
#define SETTINGS_COLS_V1_0	5
#define SETTINGS_COLS_V1_1	11
#define SETTINGS_COLS_V1_2	12

/*
 * Start every figure since the last reset afresh: the counters' baseline,
 * the fast-path overflows', the advisor's and the wait sampler's, all under
 * the reset lock, so that a reader holding it sees them as of one reset.
 */
Datum
walscale_reset(PG_FUNCTION_ARGS)
{
	TimestampTz now;

	walscale_require_preloaded();
	walscale_fastpath_publish();

	/* read the clock under the lock, so that concurrent resets stay in order */
	walscale_counters_lock(LW_EXCLUSIVE);
	now = GetCurrentTimestamp();
	walscale_counters_reset_locked(now);
	walscale_fastpath_reset_locked();
	walscale_advice_reset_locked();
	walscale_waits_reset();
	walscale_counters_unlock();

	PG_RETURN_TIMESTAMPTZ(now);
}

/*
 * The settings in effect, as the server applied them, beside the number of
 * insertion locks configured, and the last resize, in the columns of the
 * extension version given.
 */
static Datum
walscale_settings_info_internal(FunctionCallInfo fcinfo, WalscaleVersion version)
{
	TupleDesc	tupdesc;
	Datum		values[SETTINGS_COLS_V1_2];
	bool		nulls[SETTINGS_COLS_V1_2] = {0};
	int			i = 0;

	walscale_require_preloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	/* the entry point of 1.0 to 1.4 serves the columns of 1.0, 1.1 and 1.2 */
	if (version == WALSCALE_V1_0)
		version = tupdesc->natts == SETTINGS_COLS_V1_2 ? WALSCALE_V1_2 :
			tupdesc->natts == SETTINGS_COLS_V1_1 ? WALSCALE_V1_1 : WALSCALE_V1_0;
	if (tupdesc->natts != (version >= WALSCALE_V1_2 ? SETTINGS_COLS_V1_2 :
						   version >= WALSCALE_V1_1 ? SETTINGS_COLS_V1_1 :
						   SETTINGS_COLS_V1_0))
		elog(ERROR, "incorrect number of output arguments");

	/*
	 * Without the core: what a stock server runs with; the core's version
	 * where there is one, even another than walscale's, to say which.
	 */
	values[i] = Int32GetDatum(&WalscaleCoreVersion != NULL ? WalscaleCoreVersion : 0);
	nulls[i++] = &WalscaleCoreVersion == NULL;
	values[i++] = Int32GetDatum(walscale_effective_insert_locks());
	if (version >= WALSCALE_V1_1)
	{
		values[i++] = Int32GetDatum(walscale_insert_locks);
		values[i++] = Int32GetDatum(walscale_core_active ? GetMaxWALInsertLocks() :
									WALSCALE_STOCK_INSERT_LOCKS);
	}
	values[i++] = Int32GetDatum(walscale_effective_insert_lock_attempts());
	if (WALSCALE_HAS_FASTPATH_GROUPS)
	{
		values[i++] = Int32GetDatum(walscale_effective_fastpath_groups());
		values[i++] = CStringGetTextDatum(walscale_core_fastpath() &&
										  FastPathLockGroupsRequested != 0 ?
										  "walscale.fastpath_groups" :
										  "max_locks_per_transaction");
	}
	else
	{
		/* no groups to count: the slots are fixed */
		nulls[i++] = true;
		values[i++] = CStringGetTextDatum("none: fixed fast-path slots");
	}
	if (version >= WALSCALE_V1_1)
	{
		WalscaleResizeRecord record;

		walscale_counters_resize_record(&record);
		values[i++] = Int64GetDatum(record.resizes);
		if (record.resizes > 0)
		{
			values[i++] = TimestampTzGetDatum(record.last_resize);
			values[i++] = Int32GetDatum(record.last_resize_from);
			values[i++] = Float8GetDatum(record.last_resize_held_ms);
		}
		else
		{
			nulls[i++] = true;
			nulls[i++] = true;
			nulls[i++] = true;
		}
	}
	if (version >= WALSCALE_V1_2)
		values[i++] = CStringGetTextDatum(!walscale_core_active ? "not in effect" :
										  walscale_insert_locks ==
										  WALSCALE_INSERT_LOCKS_AUTO ?
										  "auto" : "fixed");
	Assert(i == tupdesc->natts);

	return HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls));
}

/* extension versions 1.0 to 1.4 */
Datum
walscale_settings_info(PG_FUNCTION_ARGS)
{
	return walscale_settings_info_internal(fcinfo, WALSCALE_V1_0);
}

Datum
walscale_settings_info_1_5(PG_FUNCTION_ARGS)
{
	return walscale_settings_info_internal(fcinfo, WALSCALE_V1_5);
}

/*
 * One row per walscale setting: its value in postgresql.conf, what the
 * server runs with, and if that is not the setting's doing, why.
 */
Datum
walscale_setting_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	char	   *no_core = walscale_core_active ? NULL :
		walscale_core_missing_reason();

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 5)
		elog(ERROR, "incorrect number of output arguments");

	for (int k = 0; k < walscale_settings_count; k++)
	{
		const WalscaleSetting *setting = &walscale_settings[k];
		Datum		values[5];
		bool		nulls[5] = {0};
		char	   *reason = no_core;

		if (setting->effective == NULL)
			continue;
		/* before the core's absence: no core could put it in effect */
		if (setting->not_in_this_version != NULL)
			reason = unconstify(char *, setting->not_in_this_version);
		if (reason == NULL && setting->auto_mode_only &&
			walscale_insert_locks != WALSCALE_INSERT_LOCKS_AUTO)
			reason = "Auto mode is off: \"walscale.insert_locks\" is not -1.";

		values[0] = CStringGetTextDatum(setting->name);
		values[1] = CStringGetTextDatum(GetConfigOptionByName(setting->name, NULL, false));
		if (setting->not_in_this_version != NULL)
			nulls[2] = true;
		else
			values[2] = Int32GetDatum(setting->effective());
		values[3] = BoolGetDatum(reason == NULL);
		if (reason != NULL)
			values[4] = CStringGetTextDatum(reason);
		else
			nulls[4] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
