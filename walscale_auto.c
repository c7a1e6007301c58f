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
 * active locks were taken at all.  The rules that turn those figures into
 * grow, shrink or hold are pure functions in walscale_auto_rules.c, so that
 * unit tests can call them (t/010_auto_rules.pl); this file gathers what
 * they need from the counters, the clock and the CPU count, and applies and
 * records their decisions.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "funcapi.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "walscale.h"
#include "walscale_auto_rules.h"

/* decisions kept for walscale_auto_decisions */
#define AUTO_DECISIONS_KEPT		64

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
static AutoRulesState rules_state = {.quiet_needed = AUTO_QUIET_WINDOWS};

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
	return walscale_rules_min_locks(walscale_auto_cpus());
}

int
walscale_auto_start_locks(void)
{
	return walscale_rules_start_locks(walscale_auto_cpus(),
									  XLOG_INSERT_LOCKS_DEFAULT,
									  XLOG_INSERT_LOCKS_MAX);
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
	int			target = walscale_rules_begin(&rules_state, current, max);
	char		reason[AUTO_REASON_LEN];

	if (target != current)
	{
		snprintf(reason, sizeof(reason), "above the maximum for %d CPUs",
				 walscale_auto_cpus());
		ereport(LOG,
				(errmsg("walscale: auto mode lowers WAL insertion locks from %d to %d, the most for %d CPUs",
						current, target, walscale_auto_cpus())));
		walscale_resize_to(target);
		auto_record(current, target, reason, 0, 0, 0, 0, 0, 0);
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
	int			nlocks = Min(current, window.nlocks);
	AutoWindowFigures figures = {0};
	AutoVerdict verdict;
	int			target;

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
		figures.acquisitions += acq;
		figures.blocking_waits += c[WALINSERT_BLOCKED] - window.blocked[i];
		figures.blocked_ns += c[WALINSERT_BLOCKED_NS] - window.blocked_ns[i];
		if (acq > 0)
			figures.locks_used++;
	}
	figures.active_locks = current;
	figures.window_s = Max((now - window.start) / 1000000.0, 0.001);
	figures.min_locks = walscale_auto_min_locks();
	figures.max_locks = walscale_auto_max_locks();

	walscale_rules_decide(&figures, &rules_state, &verdict);
	target = verdict.target;
	if (target != current)
	{
		ereport(LOG,
				(errmsg("walscale: auto mode %s WAL insertion locks from %d to %d (%s): %.1f blocking waits per 1000 acquisitions (grow at %g, shrink below %g), %.1f ms blocked per second, %d of %d locks used, %llu acquisitions in %.1f s",
						target > current ? "raises" : "lowers",
						current, target, verdict.reason,
						verdict.waits_per_1000,
						WALSCALE_GROW_WAITS_PER_1000,
						WALSCALE_SHRINK_WAITS_PER_1000,
						verdict.blocked_ms_per_s, figures.locks_used, current,
						(unsigned long long) figures.acquisitions,
						figures.window_s)));
		walscale_resize_to(target);
		auto_record(current, target, verdict.reason, figures.window_s,
					figures.acquisitions, figures.blocking_waits,
					verdict.waits_per_1000, verdict.blocked_ms_per_s,
					figures.locks_used);
	}
	else
		elog(DEBUG1, "walscale: auto mode holds %d WAL insertion locks: %.1f blocking waits per 1000 acquisitions, %.1f ms blocked per second, %d locks used, %llu acquisitions in %.1f s, %d of %d quiet windows",
			 current, verdict.waits_per_1000, verdict.blocked_ms_per_s,
			 figures.locks_used, (unsigned long long) figures.acquisitions,
			 figures.window_s, rules_state.quiet_windows,
			 rules_state.quiet_needed);

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
