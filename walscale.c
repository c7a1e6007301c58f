/*-------------------------------------------------------------------------
 *
 * walscale.c
 *		Size and steer PostgreSQL's WAL insertion locks and fast-path lock
 *		groups from GUCs, and report their contention counters through SQL.
 *
 * The mechanism lives in the server, added by walscale's core patch
 * (patches/pg18/): a variable-size array of insertion locks with counters
 * beside each lock, conditional attempts before sleeping, a requested number
 * of fast-path groups and a fast-path overflow counter.  This module holds
 * the policy: it chooses the sizes at server start, the number of attempts
 * at any reload, and keeps a baseline of the counters so that a reset never
 * writes to the counters the insertion path updates.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

/*
 * A module built against a patched server and loaded into a stock one must
 * say so in words, not fail with "undefined symbol": every symbol of the core
 * patch is referenced weakly, and _PG_init() checks WalscaleCoreVersion.
 */
#ifndef WALSCALE_CORE_VERSION
#error "this PostgreSQL lacks walscale's core patch: build the server with scripts/build-postgres.sh and point PG_CONFIG at it (make does both)"
#endif

#ifdef __GNUC__
#pragma weak WalscaleCoreVersion
#pragma weak XLogInsertLocksRequested
#pragma weak GetNumWALInsertLocks
#pragma weak XLogInsertLockAttempts
#pragma weak GetWALInsertLockCounters
#pragma weak FastPathLockGroupsRequested
#pragma weak FastPathLockOverflows
#endif

PG_MODULE_MAGIC_EXT(.name = "walscale",.version = "1.0");

/* Largest walscale.insert_lock_attempts; more only delays the sleep. */
#define WALSCALE_MAX_ATTEMPTS	16

/* GUC variables */
static int	walscale_insert_locks = XLOG_INSERT_LOCKS_DEFAULT;
static int	walscale_insert_lock_attempts = 0;
static int	walscale_fastpath_groups = 0;

/*
 * Shared state: the counter values at the last reset, which the SQL
 * functions subtract, and the fast-path overflows published by backends.
 */
typedef struct WalscaleShared
{
	LWLock	   *lock;			/* protects stats_reset and the baselines */
	TimestampTz stats_reset;
	pg_atomic_uint64 fastpath_overflows;
	uint64		fastpath_baseline;
	uint64		baseline[FLEXIBLE_ARRAY_MEMBER];	/* [lock][counter] */
} WalscaleShared;

static WalscaleShared *walscale_shared = NULL;
static bool walscale_preloaded = false;

/* FastPathLockOverflows of this backend that were added to the shared sum */
static uint64 fastpath_overflows_published = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

PG_FUNCTION_INFO_V1(walscale_insert_lock_stats);
PG_FUNCTION_INFO_V1(walscale_fastpath_stats);
PG_FUNCTION_INFO_V1(walscale_reset);
PG_FUNCTION_INFO_V1(walscale_settings_info);

/*
 * The baselines have room for the number of insertion locks that _PG_init()
 * requested, which shared memory initialisation makes the number in use.
 */
static Size
walscale_shmem_size(void)
{
	return add_size(offsetof(WalscaleShared, baseline),
					mul_size(sizeof(uint64),
							 mul_size(XLogInsertLocksRequested,
									  WALINSERT_NUM_COUNTERS)));
}

static void
walscale_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(walscale_shmem_size());
	RequestNamedLWLockTranche("walscale", 1);
}

static void
walscale_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	walscale_shared = ShmemInitStruct("walscale", walscale_shmem_size(), &found);
	if (!found)
	{
		/* the counters start at zero with the server: so does the baseline */
		memset(walscale_shared, 0, walscale_shmem_size());
		walscale_shared->lock = &(GetNamedLWLockTranche("walscale"))->lock;
		walscale_shared->stats_reset = GetCurrentTimestamp();
		pg_atomic_init_u64(&walscale_shared->fastpath_overflows, 0);
	}
	LWLockRelease(AddinShmemInitLock);

	/* say once, at each start, what the server runs with */
	if (!found)
		ereport(LOG,
				(errmsg("walscale: %d WAL insertion locks, %d conditional attempts, %d fast-path lock groups per backend",
						GetNumWALInsertLocks(), XLogInsertLockAttempts,
						FastPathLockGroupsPerBackend)));
}

/*
 * Add this backend's fast-path overflows since the last call to the shared
 * sum.  Called at transaction end, so the lock path itself only increments a
 * backend-local counter.
 */
static void
walscale_publish_fastpath_overflows(void)
{
	uint64		pending = FastPathLockOverflows - fastpath_overflows_published;

	if (pending > 0 && walscale_shared != NULL)
	{
		pg_atomic_fetch_add_u64(&walscale_shared->fastpath_overflows, pending);
		fastpath_overflows_published = FastPathLockOverflows;
	}
}

static void
walscale_xact_callback(XactEvent event, void *arg)
{
	walscale_publish_fastpath_overflows();
}

static bool
walscale_check_fastpath_groups(int *newval, void **extra, GucSource source)
{
	if (*newval == 0 || (*newval <= FP_LOCK_GROUPS_PER_BACKEND_MAX &&
						 *newval == (int) pg_nextpower2_32(*newval)))
		return true;

	GUC_check_errdetail("\"walscale.fastpath_groups\" must be 0 or a power of two between 1 and %d.",
						FP_LOCK_GROUPS_PER_BACKEND_MAX);
	return false;
}

static void
walscale_assign_insert_lock_attempts(int newval, void *extra)
{
	if (walscale_preloaded)
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

void
_PG_init(void)
{
	char	   *config_insert_locks;
	char	   *config_attempts;
	char	   *config_fastpath_groups;

	/*
	 * Sizes are fixed at server start; loaded later, the module only provides
	 * its SQL functions, which then report that it is not preloaded.
	 */
	if (!process_shared_preload_libraries_in_progress)
		return;

	if (&WalscaleCoreVersion == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("walscale requires a PostgreSQL server built with walscale's core patch"),
				 errdetail("This server is a stock PostgreSQL %s; it cannot size WAL insertion locks.",
						   PG_VERSION),
				 errhint("Build the server with walscale's scripts/build-postgres.sh, or remove walscale from \"shared_preload_libraries\".")));
	if (WalscaleCoreVersion != WALSCALE_CORE_VERSION)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("walscale was built for core patch version %d, but the server has version %d",
						WALSCALE_CORE_VERSION, WalscaleCoreVersion),
				 errhint("Rebuild walscale against this server's pg_config.")));

	walscale_preloaded = true;

	config_insert_locks = walscale_config_value("walscale.insert_locks");
	config_attempts = walscale_config_value("walscale.insert_lock_attempts");
	config_fastpath_groups = walscale_config_value("walscale.fastpath_groups");

	DefineCustomIntVariable("walscale.insert_locks",
							"Number of WAL insertion locks.",
							"More locks let more backends copy WAL records at once; "
							"PostgreSQL's own number is 8.",
							&walscale_insert_locks,
							XLOG_INSERT_LOCKS_DEFAULT,
							1, XLOG_INSERT_LOCKS_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("walscale.insert_lock_attempts",
							"Conditional attempts on different WAL insertion locks before sleeping on one.",
							"0 sleeps on the preferred lock, as PostgreSQL does; "
							"at most the number of locks minus 1 are made.",
							&walscale_insert_lock_attempts,
							0,
							0, WALSCALE_MAX_ATTEMPTS,
							PGC_SIGHUP,
							0,
							NULL, walscale_assign_insert_lock_attempts, NULL);

	DefineCustomIntVariable("walscale.fastpath_groups",
							"Number of 16-slot fast-path lock groups per backend.",
							"0 derives it from max_locks_per_transaction, as PostgreSQL does.",
							&walscale_fastpath_groups,
							0,
							0, FP_LOCK_GROUPS_PER_BACKEND_MAX,
							PGC_POSTMASTER,
							0,
							walscale_check_fastpath_groups, NULL, NULL);

	MarkGUCPrefixReserved("walscale");

	walscale_recheck_config_value("walscale.insert_locks", config_insert_locks);
	walscale_recheck_config_value("walscale.insert_lock_attempts", config_attempts);
	walscale_recheck_config_value("walscale.fastpath_groups", config_fastpath_groups);

	/* the attempts reach the server through their assign hook */
	XLogInsertLocksRequested = walscale_insert_locks;
	FastPathLockGroupsRequested = walscale_fastpath_groups;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = walscale_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = walscale_shmem_startup;

	RegisterXactCallback(walscale_xact_callback, NULL);
}

static void
walscale_require_preloaded(void)
{
	if (walscale_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("walscale must be loaded via \"shared_preload_libraries\"")));
}

/*
 * One row per WAL insertion lock: its counters since the last reset.
 */
Datum
walscale_insert_lock_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			nlocks;
	TimestampTz stats_reset;
	uint64	   *baseline;

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);

	nlocks = GetNumWALInsertLocks();
	baseline = palloc(sizeof(uint64) * nlocks * WALINSERT_NUM_COUNTERS);
	LWLockAcquire(walscale_shared->lock, LW_SHARED);
	memcpy(baseline, walscale_shared->baseline,
		   sizeof(uint64) * nlocks * WALINSERT_NUM_COUNTERS);
	stats_reset = walscale_shared->stats_reset;
	LWLockRelease(walscale_shared->lock);

	for (int lockno = 0; lockno < nlocks; lockno++)
	{
		uint64		c[WALINSERT_NUM_COUNTERS];
		uint64	   *base = &baseline[lockno * WALINSERT_NUM_COUNTERS];
		Datum		values[9];
		bool		nulls[9] = {0};
		int			i = 0;

		GetWALInsertLockCounters(lockno, c);
		for (int k = 0; k < WALINSERT_NUM_COUNTERS; k++)
			c[k] -= base[k];

		values[i++] = Int32GetDatum(lockno);
		values[i++] = Int64GetDatum(c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED]);
		values[i++] = Int64GetDatum(c[WALINSERT_FIRST_TRY]);
		values[i++] = Int64GetDatum(c[WALINSERT_FAILED_ATTEMPTS]);
		values[i++] = Int64GetDatum(c[WALINSERT_BLOCKED]);
		values[i++] = Float8GetDatum(c[WALINSERT_BLOCKED_NS] / 1000000.0);
		values[i++] = Int64GetDatum(c[WALINSERT_EXCLUSIVE]);
		values[i++] = Int64GetDatum(c[WALINSERT_FLUSH_WAITS]);
		values[i++] = TimestampTzGetDatum(stats_reset);
		Assert(i == lengthof(values));

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	return (Datum) 0;
}

/*
 * Fast-path lock groups of every backend, and overflows since the last reset.
 */
Datum
walscale_fastpath_stats(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {0};
	uint64		overflows;
	TimestampTz stats_reset;

	walscale_require_preloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	walscale_publish_fastpath_overflows();

	LWLockAcquire(walscale_shared->lock, LW_SHARED);
	overflows = pg_atomic_read_u64(&walscale_shared->fastpath_overflows) -
		walscale_shared->fastpath_baseline;
	stats_reset = walscale_shared->stats_reset;
	LWLockRelease(walscale_shared->lock);

	values[0] = Int32GetDatum(FastPathLockGroupsPerBackend);
	values[1] = Int32GetDatum(FastPathLockSlotsPerBackend());
	values[2] = Int64GetDatum(overflows);
	values[3] = TimestampTzGetDatum(stats_reset);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * Start all counters afresh by taking the current values as the baseline;
 * the counters themselves, which the insertion path updates without a lock,
 * are never written.
 */
Datum
walscale_reset(PG_FUNCTION_ARGS)
{
	TimestampTz now;

	walscale_require_preloaded();
	walscale_publish_fastpath_overflows();

	/* read the clock under the lock, so that concurrent resets stay in order */
	LWLockAcquire(walscale_shared->lock, LW_EXCLUSIVE);
	now = GetCurrentTimestamp();
	for (int lockno = 0; lockno < GetNumWALInsertLocks(); lockno++)
		GetWALInsertLockCounters(lockno,
								 &walscale_shared->baseline[lockno * WALINSERT_NUM_COUNTERS]);
	walscale_shared->fastpath_baseline =
		pg_atomic_read_u64(&walscale_shared->fastpath_overflows);
	walscale_shared->stats_reset = now;
	LWLockRelease(walscale_shared->lock);

	PG_RETURN_TIMESTAMPTZ(now);
}

/*
 * The settings in effect, as the server applied them.
 */
Datum
walscale_settings_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[5];
	bool		nulls[5] = {0};

	walscale_require_preloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	values[0] = Int32GetDatum(WalscaleCoreVersion);
	values[1] = Int32GetDatum(GetNumWALInsertLocks());
	values[2] = Int32GetDatum(XLogInsertLockAttempts);
	values[3] = Int32GetDatum(FastPathLockGroupsPerBackend);
	values[4] = CStringGetTextDatum(FastPathLockGroupsRequested != 0 ?
									"walscale.fastpath_groups" :
									"max_locks_per_transaction");

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
