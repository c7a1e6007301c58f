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

PG_MODULE_MAGIC_EXT(.name = "walscale",.version = "1.4");

/* Largest walscale.insert_lock_attempts; more only delays the sleep. */
#define WALSCALE_MAX_ATTEMPTS	16

/* GUC variables */
int			walscale_insert_locks = WALSCALE_INSERT_LOCKS_AUTO;
int			walscale_auto_interval = 10;
int			walscale_auto_min_locks_setting = WALSCALE_STOCK_INSERT_LOCKS;
int			walscale_sample_interval = WALSCALE_SAMPLE_INTERVAL_DEFAULT;
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

/*
 * Preloaded into a server with the core patch of our version: only then are
 * the settings applied and the core's symbols used.  Otherwise walscale only
 * reports (observe mode).
 */
bool		walscale_core_active = false;

/* FastPathLockOverflows of this backend that were added to the shared sum */
static uint64 fastpath_overflows_published = 0;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

PG_FUNCTION_INFO_V1(walscale_insert_lock_stats);
PG_FUNCTION_INFO_V1(walscale_fastpath_stats);
PG_FUNCTION_INFO_V1(walscale_reset);
PG_FUNCTION_INFO_V1(walscale_settings_info);
PG_FUNCTION_INFO_V1(walscale_setting_status);

PGDLLEXPORT void walscale_worker_main(Datum main_arg);

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
	RequestAddinShmemSpace(walscale_waits_shmem_size());
	/* the counters' baseline, auto mode's decisions, the wait samples */
	RequestNamedLWLockTranche("walscale", 3);
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
		walscale_shared->locks_shown = walscale_core_active ?
			GetNumWALInsertLocks() : 0;
	}
	walscale_auto_shmem_init(&(GetNamedLWLockTranche("walscale"))[1].lock,
							 found);
	walscale_advice_shmem_init(found);
	walscale_waits_shmem_init(&(GetNamedLWLockTranche("walscale"))[2].lock);
	LWLockRelease(AddinShmemInitLock);

	/* say once, at each start, what the server runs with */
	if (!found && walscale_core_active)
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
 * The background worker.  With the core patch it applies
 * walscale.insert_locks: at start, in case it changed while no worker ran,
 * and at each reload.  One process applies every change, so resizes never
 * race each other.  In auto mode it also wakes at the end of each window of
 * walscale.auto_interval to let walscale_auto.c decide.  On any server it
 * samples the backends' wait events every walscale.sample_interval
 * (walscale_waits.c).
 *
 * SIGTERM only sets a flag, checked between resizes, so that a resize, which
 * holds all insertion locks, always completes.  The worker then exits with
 * status 1, for the postmaster to start it again if the server goes on (as
 * after pg_terminate_backend()); status 0 would unregister it for good.
 */
void
walscale_worker_main(Datum main_arg)
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
	auto_mode = walscale_core_active &&
		walscale_apply_insert_locks(walscale_shared->resizer_started ?
									AUTO_BEGIN_WORKER_RESTART :
									AUTO_BEGIN_SERVER_START,
									false);
	walscale_shared->resizer_started = true;
	while (!ShutdownRequestPending)
	{
		long		timeout_ms = -1;
		long		sample_ms;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		if (walscale_waits_due(&sample_ms))
		{
			walscale_waits_sample();
			(void) walscale_waits_due(&sample_ms);
		}
		if (auto_mode && walscale_auto_due(&timeout_ms))
		{
			walscale_auto_step();
			(void) walscale_auto_due(&timeout_ms);
		}
		/* the earlier of the two, -1 meaning none */
		if (sample_ms >= 0 && (timeout_ms < 0 || sample_ms < timeout_ms))
			timeout_ms = sample_ms;
		if (timeout_ms >= 0)
			events |= WL_TIMEOUT;

		(void) WaitLatch(MyLatch, events, timeout_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			if (walscale_core_active)
				auto_mode = walscale_apply_insert_locks(AUTO_BEGIN_RELOAD,
														auto_mode);
		}
	}
	proc_exit(1);
}

static void
walscale_register_worker(void)
{
	BackgroundWorker worker = {0};

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* a standby too, so that a promoted one runs with the number asked for */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 5;
	strlcpy(worker.bgw_library_name, "walscale", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "walscale_worker_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, walscale_core_active ?
			"walscale insertion lock resizer" : "walscale wait sampler",
			BGW_MAXLEN);
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
	uint64		pending;

	if (!walscale_core_active)
		return;
	pending = FastPathLockOverflows - fastpath_overflows_published;
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
 * Why the core patch is not in effect, as a sentence for an errdetail or a
 * view; only when walscale_core_present() is false.
 */
static char *
walscale_core_missing_reason(void)
{
	/* the running server's version, not that of the headers built against */
	if (&WalscaleCoreVersion == NULL)
		return psprintf("This server is PostgreSQL %s without walscale's core patch.",
						GetConfigOption("server_version", false, false));
	return psprintf("This server has version %d of walscale's core patch, and this walscale module needs version %d.",
					WalscaleCoreVersion, WALSCALE_CORE_VERSION);
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
			 errdetail("%s Without it, walscale cannot change the WAL insertion locks or the fast-path lock groups, and has no counters.",
					   walscale_core_missing_reason()),
			 errhint("Install the PostgreSQL server built with walscale's core patch version %d, and the walscale module built for it; walscale_setting_status shows what is in effect.",
					 WALSCALE_CORE_VERSION)));
}

/*
 * For the SQL functions whose figures only the core patch keeps.
 */
void
walscale_require_core(const char *what)
{
	walscale_require_preloaded();
	if (!walscale_core_active)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("%s needs walscale's core patch", what),
				 errdetail("%s", walscale_core_missing_reason()),
				 errhint("walscale_settings and walscale_setting_status show what this server runs with.")));
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

	walscale_core_active = walscale_core_present();
	if (!walscale_core_active && !IsUnderPostmaster)
		walscale_warn_core_missing();

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

	DefineCustomIntVariable("walscale.auto_min_locks",
							"Fewest WAL insertion locks auto mode goes down to.",
							"PostgreSQL's own 8 by default, so that auto mode "
							"never has fewer locks than a stock server.",
							&walscale_auto_min_locks_setting,
							WALSCALE_STOCK_INSERT_LOCKS,
							1, XLOG_INSERT_LOCKS_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("walscale.sample_interval",
							"Time between two samples of the backends' wait events.",
							"0 turns sampling off.",
							&walscale_sample_interval,
							WALSCALE_SAMPLE_INTERVAL_DEFAULT,
							0, WALSCALE_SAMPLE_INTERVAL_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
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
		FastPathLockGroupsRequested = walscale_fastpath_groups;
		RegisterXactCallback(walscale_xact_callback, NULL);
	}
	walscale_register_worker();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = walscale_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = walscale_shmem_startup;
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
 * For the advisor: everything it reads since the last reset, read under the
 * lock that walscale_reset() takes exclusively, so that no reset falls
 * between two of the figures (a baseline newer than a value would make a
 * difference wrap around).  With the core patch only.
 */
void
walscale_snapshot_since_reset(WalscaleSinceReset *snap)
{
	int			nlocks;

	memset(snap, 0, sizeof(*snap));
	walscale_publish_fastpath_overflows();
	LWLockAcquire(walscale_shared->lock, LW_SHARED);
	snap->stats_reset = walscale_shared->stats_reset;
	snap->nactive = GetNumWALInsertLocks();
	nlocks = Max(walscale_shared->locks_shown, snap->nactive);
	for (int lockno = 0; lockno < nlocks; lockno++)
	{
		uint64		c[WALINSERT_NUM_COUNTERS];
		uint64	   *base = &walscale_shared->baseline[lockno * WALINSERT_NUM_COUNTERS];

		GetWALInsertLockCounters(lockno, c);
		for (int k = 0; k < WALINSERT_NUM_COUNTERS; k++)
			snap->sums[k] += c[k] - base[k];
		if (c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED] >
			base[WALINSERT_FIRST_TRY] + base[WALINSERT_CONTENDED])
			snap->locks_used++;
	}
	snap->resized = walscale_shared->resizes > 0 &&
		walscale_shared->last_resize > walscale_shared->stats_reset;
	snap->fastpath_overflows =
		pg_atomic_read_u64(&walscale_shared->fastpath_overflows) -
		walscale_shared->fastpath_baseline;
	walscale_advice_snapshot_locked(snap);
	LWLockRelease(walscale_shared->lock);
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

	walscale_require_core("walscale_stats");
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

	/* a stock server has the groups, but counts no overflow */
	values[0] = Int32GetDatum(FastPathLockGroupsPerBackend);
	values[1] = Int32GetDatum(FastPathLockSlotsPerBackend());
	values[2] = Int64GetDatum(overflows);
	nulls[2] = !walscale_core_active;
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
	if (walscale_core_active)
	{
		for (int lockno = 0; lockno < GetMaxWALInsertLocks(); lockno++)
			GetWALInsertLockCounters(lockno,
									 &walscale_shared->baseline[lockno * WALINSERT_NUM_COUNTERS]);
		walscale_shared->locks_shown = GetNumWALInsertLocks();
	}
	walscale_shared->fastpath_baseline =
		pg_atomic_read_u64(&walscale_shared->fastpath_overflows);
	walscale_shared->stats_reset = now;
	walscale_advice_reset();
	walscale_waits_reset();
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

	/*
	 * Without the core: what a stock server runs with; the core's version
	 * where there is one, even another than walscale's, to say which.
	 */
	values[i] = Int32GetDatum(&WalscaleCoreVersion != NULL ? WalscaleCoreVersion : 0);
	nulls[i++] = &WalscaleCoreVersion == NULL;
	values[i++] = Int32GetDatum(walscale_core_active ? GetNumWALInsertLocks() :
								WALSCALE_STOCK_INSERT_LOCKS);
	if (tupdesc->natts >= SETTINGS_COLS_V1_1)
	{
		values[i++] = Int32GetDatum(walscale_insert_locks);
		values[i++] = Int32GetDatum(walscale_core_active ? GetMaxWALInsertLocks() :
									WALSCALE_STOCK_INSERT_LOCKS);
	}
	values[i++] = Int32GetDatum(walscale_core_active ? XLogInsertLockAttempts : 0);
	values[i++] = Int32GetDatum(FastPathLockGroupsPerBackend);
	values[i++] = CStringGetTextDatum(walscale_core_active &&
									  FastPathLockGroupsRequested != 0 ?
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
		values[i++] = CStringGetTextDatum(!walscale_core_active ? "not in effect" :
										  walscale_insert_locks ==
										  WALSCALE_INSERT_LOCKS_AUTO ?
										  "auto" : "fixed");
	Assert(i == tupdesc->natts);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * One row per walscale setting: its value in postgresql.conf, what the
 * server runs with, and if that is not the setting's doing, why.
 */
Datum
walscale_setting_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	static const char *const names[] = {
		"walscale.insert_locks",
		"walscale.insert_lock_attempts",
		"walscale.fastpath_groups",
		"walscale.auto_interval",
		"walscale.auto_min_locks",
	};
	char	   *no_core = walscale_core_active ? NULL :
		walscale_core_missing_reason();

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 5)
		elog(ERROR, "incorrect number of output arguments");

	for (int k = 0; k < lengthof(names); k++)
	{
		Datum		values[5];
		bool		nulls[5] = {0};
		int			effective;
		char	   *reason = no_core;

		switch (k)
		{
			case 0:
				effective = walscale_core_active ? GetNumWALInsertLocks() :
					WALSCALE_STOCK_INSERT_LOCKS;
				break;
			case 1:
				effective = walscale_core_active ? XLogInsertLockAttempts : 0;
				break;
			case 2:
				effective = FastPathLockGroupsPerBackend;
				break;
			default:
				effective = k == 3 ? walscale_auto_interval :
					walscale_auto_min_locks();
				if (reason == NULL &&
					walscale_insert_locks != WALSCALE_INSERT_LOCKS_AUTO)
					reason = "Auto mode is off: \"walscale.insert_locks\" is not -1.";
				break;
		}
		values[0] = CStringGetTextDatum(names[k]);
		values[1] = CStringGetTextDatum(GetConfigOptionByName(names[k], NULL, false));
		values[2] = Int32GetDatum(effective);
		values[3] = BoolGetDatum(reason == NULL);
		if (reason != NULL)
			values[4] = CStringGetTextDatum(reason);
		else
			nulls[4] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
