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
#include "portability/instr_time.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "walscale.h"

PG_MODULE_MAGIC_EXT(.name = "walscale",.version = "1.2");

/* Largest walscale.insert_lock_attempts; more only delays the sleep. */
#define WALSCALE_MAX_ATTEMPTS	16

/* GUC variables */
int			walscale_insert_locks = WALSCALE_INSERT_LOCKS_AUTO;
int			walscale_auto_interval = 10;
static int	walscale_insert_lock_attempts = 0;
static int	walscale_fastpath_groups = 0;

/*
 * Shared state: the counter values at the last reset, which the SQL
 * functions subtract; the fast-path overflows published by backends; and
 * what the background worker did to the number of insertion locks.
 */
typedef struct WalscaleShared
{
	LWLock	   *lock;			/* protects all but fastpath_overflows */
	TimestampTz stats_reset;
	pg_atomic_uint64 fastpath_overflows;
	uint64		fastpath_baseline;

	/*
	 * Insertion locks numbered below locks_shown were active at some time
	 * since the last reset, and keep their row in walscale_stats.
	 */
	int			locks_shown;
	int64		resizes;		/* since server start */
	bool		resizer_started;	/* a worker ran since server start */
	TimestampTz last_resize;	/* 0 if none */
	int			last_resize_from;
	int			last_resize_to;
	uint64		last_resize_held_ns;
	uint64		last_resize_wait_ns;
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

PGDLLEXPORT void walscale_resizer_main(Datum main_arg);

/*
 * The baselines have room for every insertion lock allocated: _PG_init()
 * asks for the largest number.
 */
static Size
walscale_shmem_size(void)
{
	return add_size(offsetof(WalscaleShared, baseline),
					mul_size(sizeof(uint64),
							 mul_size(XLOG_INSERT_LOCKS_MAX,
									  WALINSERT_NUM_COUNTERS)));
}

static void
walscale_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();

	RequestAddinShmemSpace(walscale_shmem_size());
	RequestAddinShmemSpace(walscale_auto_shmem_size());
	RequestAddinShmemSpace(walscale_advice_shmem_size());
	/* one for the counters' baseline, one for auto mode's decisions */
	RequestNamedLWLockTranche("walscale", 2);
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
		walscale_shared->locks_shown = GetNumWALInsertLocks();
	}
	walscale_auto_shmem_init(&(GetNamedLWLockTranche("walscale"))[1].lock,
							 found);
	walscale_advice_shmem_init(found);
	LWLockRelease(AddinShmemInitLock);

	/* say once, at each start, what the server runs with */
	if (!found)
		ereport(LOG,
				(errmsg("walscale: %d WAL insertion locks, %d conditional attempts, %d fast-path lock groups per backend",
						GetNumWALInsertLocks(), XLogInsertLockAttempts,
						FastPathLockGroupsPerBackend)));
}

/*
 * Make target the number of active insertion locks, if it is not already,
 * and say what it cost.  Only the background worker calls it.  Returns the
 * number before.
 */
int
walscale_resize_to(int target)
{
	int			from;
	uint64		held_ns;
	uint64		total_ns;
	instr_time	start;
	instr_time	duration;

	if (target == GetNumWALInsertLocks())
		return target;

	/* rows for the locks about to be active, before they are */
	LWLockAcquire(walscale_shared->lock, LW_EXCLUSIVE);
	walscale_shared->locks_shown = Max(walscale_shared->locks_shown, target);
	LWLockRelease(walscale_shared->lock);

	INSTR_TIME_SET_CURRENT(start);
	from = SetNumWALInsertLocks(target, &held_ns);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	total_ns = INSTR_TIME_GET_NANOSEC(duration);

	LWLockAcquire(walscale_shared->lock, LW_EXCLUSIVE);
	walscale_shared->resizes++;
	walscale_shared->last_resize = GetCurrentTimestamp();
	walscale_shared->last_resize_from = from;
	walscale_shared->last_resize_to = target;
	walscale_shared->last_resize_held_ns = held_ns;
	walscale_shared->last_resize_wait_ns = total_ns - Min(held_ns, total_ns);
	LWLockRelease(walscale_shared->lock);

	ereport(LOG,
			(errmsg("walscale: WAL insertion locks resized from %d to %d; all locks held for %.3f ms after waiting %.3f ms for them",
					from, target, held_ns / 1000000.0,
					(total_ns - Min(held_ns, total_ns)) / 1000000.0)));
	return from;
}

/*
 * Apply walscale.insert_locks as it is now: a number is applied as it is;
 * -1 hands the number to auto mode, which starts from the number in effect.
 * Returns whether auto mode is on.
 */
static bool
walscale_apply_insert_locks(AutoBeginCause cause, bool was_auto)
{
	if (walscale_insert_locks != WALSCALE_INSERT_LOCKS_AUTO)
	{
		if (was_auto)
			ereport(LOG,
					(errmsg("walscale: auto mode off, %d WAL insertion locks configured",
							walscale_insert_locks)));
		(void) walscale_resize_to(walscale_insert_locks);
		return false;
	}
	if (!was_auto)
		walscale_auto_begin(cause);
	return true;
}

/*
 * The background worker that applies walscale.insert_locks: at start, in
 * case it changed while no worker ran, and at each reload.  One process
 * applies every change, so resizes never race each other.  In auto mode it
 * also wakes at the end of each window of walscale.auto_interval to let
 * walscale_auto.c decide.
 *
 * SIGTERM only sets a flag, checked between resizes, so that a resize, which
 * holds all insertion locks, always completes.  The worker then exits with
 * status 1, for the postmaster to start it again if the server goes on (as
 * after pg_terminate_backend()); status 0 would unregister it for good.
 */
void
walscale_resizer_main(Datum main_arg)
{
	bool		auto_mode;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);

	/*
	 * The worker runs no statement for a cancel to end, and a cancel would
	 * otherwise turn into an ERROR at its next CHECK_FOR_INTERRUPTS(), an
	 * exit, and no resizing until the postmaster starts it again.
	 */
	pqsignal(SIGINT, SIG_IGN);
	BackgroundWorkerUnblockSignals();
	/* no database: only to be seen in pg_stat_activity, with its waits */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	/* one worker at a time, so no other process writes resizer_started */
	auto_mode = walscale_apply_insert_locks(walscale_shared->resizer_started ?
											AUTO_BEGIN_WORKER_RESTART :
											AUTO_BEGIN_SERVER_START,
											false);
	walscale_shared->resizer_started = true;
	while (!ShutdownRequestPending)
	{
		long		timeout_ms = -1;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		if (auto_mode)
		{
			if (walscale_auto_due(&timeout_ms))
			{
				walscale_auto_step();
				(void) walscale_auto_due(&timeout_ms);
			}
			events |= WL_TIMEOUT;
		}

		(void) WaitLatch(MyLatch, events, timeout_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			auto_mode = walscale_apply_insert_locks(AUTO_BEGIN_RELOAD, auto_mode);
		}
	}
	proc_exit(1);
}

static void
walscale_register_resizer(void)
{
	BackgroundWorker worker = {0};

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* a standby too, so that a promoted one runs with the number asked for */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 5;
	strlcpy(worker.bgw_library_name, "walscale", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "walscale_resizer_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, "walscale insertion lock resizer", BGW_MAXLEN);
	strlcpy(worker.bgw_type, "walscale", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
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
	/* before the overflows are published: it needs this transaction's */
	walscale_advice_xact_callback(event);
	walscale_publish_fastpath_overflows();
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
	if (*newval == 0 || (*newval <= FP_LOCK_GROUPS_PER_BACKEND_MAX &&
						 *newval == (int) pg_nextpower2_32(*newval)))
		return true;

	GUC_check_errdetail("\"walscale.fastpath_groups\" must be 0 or a power of two between 1 and %d.",
						FP_LOCK_GROUPS_PER_BACKEND_MAX);
	return false;
}

/*
 * The number of active locks at the next shared memory initialisation: at
 * start, or after a crash.  Between them, the background worker applies it.
 */
static void
walscale_assign_insert_locks(int newval, void *extra)
{
	if (walscale_preloaded)
		XLogInsertLocksRequested = newval == WALSCALE_INSERT_LOCKS_AUTO ?
			walscale_auto_start_locks() : newval;
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
	 * Shared memory is sized at server start; loaded later, the module only
	 * provides its SQL functions, which then report that it is not preloaded.
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
							"Number of WAL insertion locks, or -1 to size them from contention.",
							"More locks let more backends copy WAL records at once; "
							"PostgreSQL's own number is 8.  A reload changes it, "
							"through walscale's background worker, which in auto "
							"mode (-1, the default) also chooses the number.",
							&walscale_insert_locks,
							WALSCALE_INSERT_LOCKS_AUTO,
							WALSCALE_INSERT_LOCKS_AUTO, XLOG_INSERT_LOCKS_MAX,
							PGC_SIGHUP,
							0,
							walscale_check_insert_locks,
							walscale_assign_insert_locks, NULL);

	DefineCustomIntVariable("walscale.auto_interval",
							"Time over which auto mode measures contention before each decision.",
							"Changes are at least this far apart.",
							&walscale_auto_interval,
							10,
							1, 3600,
							PGC_SIGHUP,
							GUC_UNIT_S,
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

	/*
	 * Slots for the most locks, whatever the number active: a resize then
	 * needs no allocation.  They cost 256 bytes each, and flushers and the
	 * all-lock path visit only the active ones.  The number of locks and the
	 * attempts reach the server through their assign hooks.
	 */
	XLogInsertLocksAllocated = XLOG_INSERT_LOCKS_MAX;
	FastPathLockGroupsRequested = walscale_fastpath_groups;
	walscale_register_resizer();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = walscale_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = walscale_shmem_startup;

	RegisterXactCallback(walscale_xact_callback, NULL);
}

void
walscale_require_preloaded(void)
{
	if (walscale_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("walscale must be loaded via \"shared_preload_libraries\"")));
}

/*
 * The SQL functions' columns changed with the extension's version: tell the
 * versions apart by the number of columns that the installed SQL declares.
 */
#define STATS_COLS_V1_0		9
#define STATS_COLS_V1_1		10
#define SETTINGS_COLS_V1_0	5
#define SETTINGS_COLS_V1_1	11
#define SETTINGS_COLS_V1_2	12

/*
 * The counters of all insertion locks since the last reset, summed; the
 * locks acquired at all since then; returns the number active now.  For the
 * advisor.
 */
int
walscale_counters_since_reset(uint64 sums[WALINSERT_NUM_COUNTERS],
							  int *locks_used)
{
	int			nlocks;
	int			nactive;

	memset(sums, 0, sizeof(uint64) * WALINSERT_NUM_COUNTERS);
	*locks_used = 0;
	LWLockAcquire(walscale_shared->lock, LW_SHARED);
	nactive = GetNumWALInsertLocks();
	nlocks = Max(walscale_shared->locks_shown, nactive);
	for (int lockno = 0; lockno < nlocks; lockno++)
	{
		uint64		c[WALINSERT_NUM_COUNTERS];
		uint64	   *base = &walscale_shared->baseline[lockno * WALINSERT_NUM_COUNTERS];

		GetWALInsertLockCounters(lockno, c);
		for (int k = 0; k < WALINSERT_NUM_COUNTERS; k++)
			sums[k] += c[k] - base[k];
		if (c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED] >
			base[WALINSERT_FIRST_TRY] + base[WALINSERT_CONTENDED])
			(*locks_used)++;
	}
	LWLockRelease(walscale_shared->lock);
	return nactive;
}

uint64
walscale_fastpath_overflows_since_reset(void)
{
	uint64		overflows;

	walscale_publish_fastpath_overflows();
	LWLockAcquire(walscale_shared->lock, LW_SHARED);
	overflows = pg_atomic_read_u64(&walscale_shared->fastpath_overflows) -
		walscale_shared->fastpath_baseline;
	LWLockRelease(walscale_shared->lock);
	return overflows;
}

TimestampTz
walscale_stats_reset_time(void)
{
	TimestampTz t;

	LWLockAcquire(walscale_shared->lock, LW_SHARED);
	t = walscale_shared->stats_reset;
	LWLockRelease(walscale_shared->lock);
	return t;
}

/*
 * One row per WAL insertion lock active now or at some time since the last
 * reset: its counters since the reset.
 */
Datum
walscale_insert_lock_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			ncols;
	int			nactive;
	int			nlocks;
	TimestampTz stats_reset;
	uint64	   *baseline;

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	ncols = rsinfo->setDesc->natts;
	if (ncols != STATS_COLS_V1_0 && ncols != STATS_COLS_V1_1)
		elog(ERROR, "incorrect number of output arguments");

	baseline = palloc(sizeof(uint64) * XLOG_INSERT_LOCKS_MAX * WALINSERT_NUM_COUNTERS);
	LWLockAcquire(walscale_shared->lock, LW_SHARED);
	nactive = GetNumWALInsertLocks();
	nlocks = Max(walscale_shared->locks_shown, nactive);
	memcpy(baseline, walscale_shared->baseline,
		   sizeof(uint64) * nlocks * WALINSERT_NUM_COUNTERS);
	stats_reset = walscale_shared->stats_reset;
	LWLockRelease(walscale_shared->lock);

	for (int lockno = 0; lockno < nlocks; lockno++)
	{
		uint64		c[WALINSERT_NUM_COUNTERS];
		uint64	   *base = &baseline[lockno * WALINSERT_NUM_COUNTERS];
		Datum		values[STATS_COLS_V1_1];
		bool		nulls[STATS_COLS_V1_1] = {0};
		int			i = 0;

		GetWALInsertLockCounters(lockno, c);
		for (int k = 0; k < WALINSERT_NUM_COUNTERS; k++)
			c[k] -= base[k];

		values[i++] = Int32GetDatum(lockno);
		if (ncols >= STATS_COLS_V1_1)
			values[i++] = BoolGetDatum(lockno < nactive);
		values[i++] = Int64GetDatum(c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED]);
		values[i++] = Int64GetDatum(c[WALINSERT_FIRST_TRY]);
		values[i++] = Int64GetDatum(c[WALINSERT_FAILED_ATTEMPTS]);
		values[i++] = Int64GetDatum(c[WALINSERT_BLOCKED]);
		values[i++] = Float8GetDatum(c[WALINSERT_BLOCKED_NS] / 1000000.0);
		values[i++] = Int64GetDatum(c[WALINSERT_EXCLUSIVE]);
		values[i++] = Int64GetDatum(c[WALINSERT_FLUSH_WAITS]);
		values[i++] = TimestampTzGetDatum(stats_reset);
		Assert(i == ncols);

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
	for (int lockno = 0; lockno < GetMaxWALInsertLocks(); lockno++)
		GetWALInsertLockCounters(lockno,
								 &walscale_shared->baseline[lockno * WALINSERT_NUM_COUNTERS]);
	walscale_shared->locks_shown = GetNumWALInsertLocks();
	walscale_shared->fastpath_baseline =
		pg_atomic_read_u64(&walscale_shared->fastpath_overflows);
	walscale_shared->stats_reset = now;
	walscale_advice_reset();
	LWLockRelease(walscale_shared->lock);

	PG_RETURN_TIMESTAMPTZ(now);
}

/*
 * The settings in effect, as the server applied them, beside the number of
 * insertion locks configured, and the last resize.
 */
Datum
walscale_settings_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[SETTINGS_COLS_V1_2];
	bool		nulls[SETTINGS_COLS_V1_2] = {0};
	int			i = 0;

	walscale_require_preloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != SETTINGS_COLS_V1_0 &&
		tupdesc->natts != SETTINGS_COLS_V1_1 &&
		tupdesc->natts != SETTINGS_COLS_V1_2)
		elog(ERROR, "incorrect number of output arguments");

	values[i++] = Int32GetDatum(WalscaleCoreVersion);
	values[i++] = Int32GetDatum(GetNumWALInsertLocks());
	if (tupdesc->natts >= SETTINGS_COLS_V1_1)
	{
		values[i++] = Int32GetDatum(walscale_insert_locks);
		values[i++] = Int32GetDatum(GetMaxWALInsertLocks());
	}
	values[i++] = Int32GetDatum(XLogInsertLockAttempts);
	values[i++] = Int32GetDatum(FastPathLockGroupsPerBackend);
	values[i++] = CStringGetTextDatum(FastPathLockGroupsRequested != 0 ?
									  "walscale.fastpath_groups" :
									  "max_locks_per_transaction");
	if (tupdesc->natts >= SETTINGS_COLS_V1_1)
	{
		LWLockAcquire(walscale_shared->lock, LW_SHARED);
		values[i++] = Int64GetDatum(walscale_shared->resizes);
		if (walscale_shared->resizes > 0)
		{
			values[i++] = TimestampTzGetDatum(walscale_shared->last_resize);
			values[i++] = Int32GetDatum(walscale_shared->last_resize_from);
			values[i++] = Float8GetDatum(walscale_shared->last_resize_held_ns / 1000000.0);
		}
		else
		{
			nulls[i++] = true;
			nulls[i++] = true;
			nulls[i++] = true;
		}
		LWLockRelease(walscale_shared->lock);
	}
	if (tupdesc->natts >= SETTINGS_COLS_V1_2)
		values[i++] = CStringGetTextDatum(walscale_insert_locks ==
										  WALSCALE_INSERT_LOCKS_AUTO ?
										  "auto" : "fixed");
	Assert(i == tupdesc->natts);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
