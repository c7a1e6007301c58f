/*-------------------------------------------------------------------------
 *
 * walscale_auto.c
 *		Auto mode: with walscale.insert_locks = -1, walscale's background
 *		worker chooses the number of active WAL insertion locks from the
 *		contention it measures, and keeps its recent decisions for the view
 *		walscale_auto_decisions.
 *
 * Every walscale.auto_interval the worker reads the per-lock counters of
 * the core patch and takes their change over the window it just closed:
 * acquisitions, acquisitions that slept, the time slept, and how many of the
 * active locks were taken at all.  Then:
 *
 * - grow (double the number, up to the maximum) when backends sleep on the
 *	 locks, at or above WALSCALE_GROW_WAITS_PER_1000 blocking waits per 1000
 *	 acquisitions or AUTO_GROW_BLOCKED_MS_PER_S of sleep per second, and at
 *	 least half the active locks are in use (with fewer in use, the sleeps
 *	 come from backends that share a lock by their ProcNumber, not from too
 *	 few locks), in AUTO_HOT_WINDOWS windows in a row;
 * - shrink (halve, down to the minimum) when waits are ten times below the
 *	 grow threshold and at most half the locks are used, for several windows
 *	 in a row: every WAL flush and every all-lock acquisition visits each
 *	 active lock, so idle locks are not free;
 * - otherwise hold.
 *
 * The gap between the two thresholds, the windows a shrink needs, and a
 * window that always starts afresh after a change are the hysteresis: a
 * steady load settles after a few doublings.  A grow that undoes a shrink
 * doubles the quiet windows the next shrink needs, so that a load sitting on
 * the edge cannot make the number swing back and forth.  Windows with too
 * few acquisitions to judge change nothing.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "funcapi.h"
#include "port/pg_bitutils.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "walscale.h"

/* decisions kept for walscale_auto_decisions */
#define AUTO_DECISIONS_KEPT		64

/* below this many acquisitions in a window, the figures are noise */
#define AUTO_MIN_ACQUISITIONS	500

/* sleep on the insertion locks, in ms summed over backends, per second */
#define AUTO_GROW_BLOCKED_MS_PER_S		200.0
#define AUTO_SHRINK_BLOCKED_MS_PER_S	20.0

/* contended windows in a row before a grow */
#define AUTO_HOT_WINDOWS		2

/* quiet windows in a row before a shrink, and their most after backoffs */
#define AUTO_QUIET_WINDOWS		3
#define AUTO_QUIET_WINDOWS_MAX	48

#define AUTO_REASON_LEN			64

typedef struct AutoDecision
{
	TimestampTz time;
	int			from_locks;
	int			to_locks;
	char		reason[AUTO_REASON_LEN];
	double		window_s;
	uint64		acquisitions;
	uint64		blocking_waits;
	double		waits_per_1000;
	double		blocked_ms_per_s;
	int			locks_used;
} AutoDecision;

typedef struct WalscaleAutoShared
{
	LWLock	   *lock;
	uint64		ndecisions;		/* made since server start */
	AutoDecision decisions[AUTO_DECISIONS_KEPT];	/* ring, by ndecisions */
} WalscaleAutoShared;

static WalscaleAutoShared *auto_shared = NULL;

/* The controller's state, in the background worker only. */
typedef struct AutoWindow
{
	TimestampTz start;
	int			nlocks;			/* active locks during the window */
	uint64		acquisitions[XLOG_INSERT_LOCKS_MAX];
	uint64		blocked[XLOG_INSERT_LOCKS_MAX];
	uint64		blocked_ns[XLOG_INSERT_LOCKS_MAX];
} AutoWindow;

static AutoWindow window;
static int	quiet_windows = 0;
static int	hot_windows = 0;
static int	quiet_needed = AUTO_QUIET_WINDOWS;
static int	last_shrink_from = 0;

PG_FUNCTION_INFO_V1(walscale_auto_decisions);

Size
walscale_auto_shmem_size(void)
{
	return sizeof(WalscaleAutoShared);
}

void
walscale_auto_shmem_init(LWLock *lock, bool found)
{
	bool		auto_found;

	auto_shared = ShmemInitStruct("walscale auto", walscale_auto_shmem_size(),
								  &auto_found);
	if (!auto_found)
	{
		memset(auto_shared, 0, walscale_auto_shmem_size());
		auto_shared->lock = lock;
	}
}

/* Online CPUs, as the worker sees them; 1 if the system will not say. */
int
walscale_auto_cpus(void)
{
	long		n = sysconf(_SC_NPROCESSORS_ONLN);

	return n >= 1 ? (int) Min(n, 4096) : 1;
}

/*
 * The most locks auto mode uses: 8 per CPU, a power of two, at least
 * PostgreSQL's 8.  Sokolov's 8-core laptop was fastest at 64 to 128 locks
 * with 200 and 400 clients (seeds/000); more locks than that only lengthen
 * flushes.
 */
int
walscale_auto_max_locks(void)
{
	uint32		n = pg_nextpower2_32((uint32) walscale_auto_cpus() * 8);

	return (int) Min(Max(n, XLOG_INSERT_LOCKS_DEFAULT), XLOG_INSERT_LOCKS_MAX);
}

/* One lock is enough for a single writer; auto mode may go down to it. */
int
walscale_auto_min_locks(void)
{
	return 1;
}

/*
 * The number auto mode starts with at server start: one lock per CPU,
 * rounded up to a power of two, never below PostgreSQL's 8.  On Greg Smith's
 * 24-core server 8 locks gave most of the gain over 1 and 24 locks about 10%
 * more (seeds/004): about one lock per core is where the gain stops, and 8
 * keeps stock behaviour on small machines.  Contention then grows it.
 */
int
walscale_auto_start_locks(void)
{
	uint32		n = pg_nextpower2_32((uint32) walscale_auto_cpus());

	n = Max(n, XLOG_INSERT_LOCKS_DEFAULT);
	return (int) Min((int) n, walscale_auto_max_locks());
}

static void
auto_record(int from, int to, const char *reason, double window_s,
			uint64 acquisitions, uint64 blocking_waits, double waits_per_1000,
			double blocked_ms_per_s, int locks_used)
{
	AutoDecision *d;

	LWLockAcquire(auto_shared->lock, LW_EXCLUSIVE);
	d = &auto_shared->decisions[auto_shared->ndecisions % AUTO_DECISIONS_KEPT];
	d->time = GetCurrentTimestamp();
	d->from_locks = from;
	d->to_locks = to;
	strlcpy(d->reason, reason, AUTO_REASON_LEN);
	d->window_s = window_s;
	d->acquisitions = acquisitions;
	d->blocking_waits = blocking_waits;
	d->waits_per_1000 = waits_per_1000;
	d->blocked_ms_per_s = blocked_ms_per_s;
	d->locks_used = locks_used;
	auto_shared->ndecisions++;
	LWLockRelease(auto_shared->lock);
}

/* Start a new window: the counters now are its baseline. */
static void
auto_open_window(void)
{
	window.start = GetCurrentTimestamp();
	window.nlocks = GetNumWALInsertLocks();
	for (int i = 0; i < window.nlocks; i++)
	{
		uint64		c[WALINSERT_NUM_COUNTERS];

		GetWALInsertLockCounters(i, c);
		window.acquisitions[i] = c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED];
		window.blocked[i] = c[WALINSERT_BLOCKED];
		window.blocked_ns[i] = c[WALINSERT_BLOCKED_NS];
	}
}

/*
 * Auto mode starts: at the worker's first start (the server started with
 * the number walscale_auto_start_locks() gave), at a restart of the worker,
 * or at a reload that set -1; the last two go on from the number in effect.
 * A number above the maximum comes down to it at once.
 */
void
walscale_auto_begin(AutoBeginCause cause)
{
	int			current = GetNumWALInsertLocks();
	int			max = walscale_auto_max_locks();
	char		reason[AUTO_REASON_LEN];

	quiet_windows = 0;
	hot_windows = 0;
	quiet_needed = AUTO_QUIET_WINDOWS;
	last_shrink_from = 0;

	if (current > max)
	{
		snprintf(reason, sizeof(reason), "above the maximum for %d CPUs",
				 walscale_auto_cpus());
		ereport(LOG,
				(errmsg("walscale: auto mode lowers WAL insertion locks from %d to %d, the most for %d CPUs",
						current, max, walscale_auto_cpus())));
		walscale_resize_to(max);
		auto_record(current, max, reason, 0, 0, 0, 0, 0, 0);
	}
	else
	{
		snprintf(reason, sizeof(reason),
				 cause == AUTO_BEGIN_SERVER_START ? "auto mode on at server start, %d CPUs" :
				 cause == AUTO_BEGIN_WORKER_RESTART ? "auto mode on after its worker restarted, %d CPUs" :
				 "auto mode on at reload, %d CPUs",
				 walscale_auto_cpus());
		ereport(LOG,
				(errmsg("walscale: auto mode on with %d WAL insertion locks (%d CPUs: between %d and %d)",
						current, walscale_auto_cpus(),
						walscale_auto_min_locks(), max)));
		auto_record(current, current, reason, 0, 0, 0, 0, 0, 0);
	}
	auto_open_window();
}

/*
 * Whether the window is over; if not, how long until it is.
 */
bool
walscale_auto_due(long *timeout_ms)
{
	TimestampTz end = TimestampTzPlusMilliseconds(window.start,
												  walscale_auto_interval * 1000);
	long		left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), end);

	*timeout_ms = Max(left, 1);
	return left <= 0;
}

/*
 * Close the window: measure it, decide, and apply and record a change.
 */
void
walscale_auto_step(void)
{
	TimestampTz now = GetCurrentTimestamp();
	int			current = GetNumWALInsertLocks();
	int			max = walscale_auto_max_locks();
	int			min = walscale_auto_min_locks();
	int			nlocks = Min(current, window.nlocks);
	uint64		acquisitions = 0;
	uint64		blocking_waits = 0;
	uint64		blocked_ns = 0;
	int			locks_used = 0;
	double		window_s;
	double		waits_per_1000;
	double		blocked_ms_per_s;
	int			target = current;
	char		reason[AUTO_REASON_LEN];

	/* someone else changed the number (cannot happen in auto mode): restart */
	if (current != window.nlocks)
	{
		auto_open_window();
		return;
	}

	for (int i = 0; i < nlocks; i++)
	{
		uint64		c[WALINSERT_NUM_COUNTERS];
		uint64		acq;

		GetWALInsertLockCounters(i, c);
		acq = c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED] - window.acquisitions[i];
		acquisitions += acq;
		blocking_waits += c[WALINSERT_BLOCKED] - window.blocked[i];
		blocked_ns += c[WALINSERT_BLOCKED_NS] - window.blocked_ns[i];
		if (acq > 0)
			locks_used++;
	}
	window_s = Max((now - window.start) / 1000000.0, 0.001);
	waits_per_1000 = acquisitions > 0 ? blocking_waits * 1000.0 / acquisitions : 0;
	blocked_ms_per_s = blocked_ns / 1000000.0 / window_s;

	if (acquisitions < AUTO_MIN_ACQUISITIONS)
	{
		/* too little to judge: neither grow nor count towards a shrink */
	}
	else if ((waits_per_1000 >= WALSCALE_GROW_WAITS_PER_1000 ||
			  blocked_ms_per_s >= AUTO_GROW_BLOCKED_MS_PER_S) &&
			 locks_used * 2 >= current)
	{
		quiet_windows = 0;
		/* one hot window may be a burst, or a preempted lock holder */
		if (current < max && ++hot_windows >= AUTO_HOT_WINDOWS)
		{
			target = Min(current * 2, max);
			snprintf(reason, sizeof(reason), "contention");
			/* a grow that undoes a shrink: be slower to shrink next time */
			if (target == last_shrink_from)
				quiet_needed = Min(quiet_needed * 2, AUTO_QUIET_WINDOWS_MAX);
		}
	}
	else if (waits_per_1000 < WALSCALE_SHRINK_WAITS_PER_1000 &&
			 blocked_ms_per_s < AUTO_SHRINK_BLOCKED_MS_PER_S &&
			 locks_used * 2 <= current && current > min)
	{
		hot_windows = 0;
		if (++quiet_windows >= quiet_needed)
		{
			target = Max(Max(current / 2, min),
						 (int) pg_nextpower2_32((uint32) Max(locks_used, 1)));
			if (target < current)
			{
				snprintf(reason, sizeof(reason), "locks unused");
				last_shrink_from = current;
			}
			quiet_windows = 0;
		}
	}
	else
	{
		quiet_windows = 0;
		hot_windows = 0;
	}

	if (target != current)
	{
		hot_windows = 0;
		ereport(LOG,
				(errmsg("walscale: auto mode %s WAL insertion locks from %d to %d (%s): %.1f blocking waits per 1000 acquisitions (grow at %g, shrink below %g), %.1f ms blocked per second, %d of %d locks used, %llu acquisitions in %.1f s",
						target > current ? "raises" : "lowers",
						current, target, reason, waits_per_1000,
						WALSCALE_GROW_WAITS_PER_1000,
						WALSCALE_SHRINK_WAITS_PER_1000,
						blocked_ms_per_s, locks_used, current,
						(unsigned long long) acquisitions, window_s)));
		walscale_resize_to(target);
		auto_record(current, target, reason, window_s, acquisitions,
					blocking_waits, waits_per_1000, blocked_ms_per_s,
					locks_used);
	}
	else
		elog(DEBUG1, "walscale: auto mode holds %d WAL insertion locks: %.1f blocking waits per 1000 acquisitions, %.1f ms blocked per second, %d locks used, %llu acquisitions in %.1f s, %d of %d quiet windows",
			 current, waits_per_1000, blocked_ms_per_s, locks_used,
			 (unsigned long long) acquisitions, window_s, quiet_windows,
			 quiet_needed);

	auto_open_window();
}

/*
 * The recent decisions of auto mode, oldest first.
 */
Datum
walscale_auto_decisions(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	AutoDecision *copy;
	uint64		n;
	uint64		first;

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 10)
		elog(ERROR, "incorrect number of output arguments");

	copy = palloc(sizeof(auto_shared->decisions));
	LWLockAcquire(auto_shared->lock, LW_SHARED);
	n = auto_shared->ndecisions;
	memcpy(copy, auto_shared->decisions, sizeof(auto_shared->decisions));
	LWLockRelease(auto_shared->lock);

	first = n > AUTO_DECISIONS_KEPT ? n - AUTO_DECISIONS_KEPT : 0;
	for (uint64 k = first; k < n; k++)
	{
		AutoDecision *d = &copy[k % AUTO_DECISIONS_KEPT];
		Datum		values[10];
		bool		nulls[10] = {0};

		values[0] = TimestampTzGetDatum(d->time);
		values[1] = Int32GetDatum(d->from_locks);
		values[2] = Int32GetDatum(d->to_locks);
		values[3] = CStringGetTextDatum(d->reason);
		values[4] = Float8GetDatum(d->window_s);
		values[5] = Int64GetDatum((int64) d->acquisitions);
		values[6] = Int64GetDatum((int64) d->blocking_waits);
		values[7] = Float8GetDatum(d->waits_per_1000);
		values[8] = Float8GetDatum(d->blocked_ms_per_s);
		values[9] = Int32GetDatum(d->locks_used);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}

	return (Datum) 0;
}
