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
 * acquisitions of each lock, acquisitions that slept, and the time slept;
 * with them, the mean number of active backends its wait sampler saw, the
 * window's length on the monotonic clock, and the CPUs the server may use
 * (its affinity mask and cgroup quota, not only those online).  The rules
 * that turn those figures into grow, shrink or hold are pure functions in
 * walscale_auto_rules.c, so that unit tests (t/010_auto_rules.pl) and the
 * simulator (make simulate) call the same code; this file gathers what they
 * need and applies and records their decisions.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/xlog.h"
#include "funcapi.h"
#include "portability/instr_time.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "walscale_auto.h"
#include "walscale_counters.h"
#include "walscale_settings.h"
#include "walscale_waits.h"
#include "walscale_auto_rules.h"

/* decisions kept for walscale_auto_decisions */
#define AUTO_DECISIONS_KEPT		64

#define AUTO_REASON_LEN			64

/* walscale_auto_decisions' columns, by the extension version that set them */
#define DECISIONS_COLS_V1_2		10
#define DECISIONS_COLS_V1_4		12
#define DECISIONS_COLS_V1_5		14
#define DECISIONS_COLS			DECISIONS_COLS_V1_5

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
	double		backends;
	double		blocked_share;
	double		rate;			/* per running backend per s; 0: none */
	double		rate_spread;
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
	instr_time	start;			/* monotonic: a clock step moves no window */
	uint64		sample_rounds;
	uint64		active_samples;
	int			nlocks;			/* active locks during the window */
	uint64		acquisitions[XLOG_INSERT_LOCKS_MAX];
	uint64		blocked[XLOG_INSERT_LOCKS_MAX];
	uint64		blocked_ns[XLOG_INSERT_LOCKS_MAX];
} AutoWindow;

static AutoWindow window;
static AutoRulesState rules_state;

PG_FUNCTION_INFO_V1(walscale_auto_decisions);
PG_FUNCTION_INFO_V1(walscale_auto_decisions_1_5);

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

/*
 * Keep a decision for walscale_auto_decisions: the change, its reason, and
 * the figures of the window it was decided on (figures and verdict NULL for
 * the start of auto mode, which has none).
 */
static void
auto_record(int from, int to, const char *reason,
			const AutoWindowFigures *figures, const AutoVerdict *verdict)
{
	AutoDecision *d;

	LWLockAcquire(auto_shared->lock, LW_EXCLUSIVE);
	d = &auto_shared->decisions[auto_shared->ndecisions % AUTO_DECISIONS_KEPT];
	memset(d, 0, sizeof(*d));
	d->time = GetCurrentTimestamp();
	d->from_locks = from;
	d->to_locks = to;
	strlcpy(d->reason, reason, AUTO_REASON_LEN);
	if (figures != NULL)
	{
		d->window_s = figures->window_s;
		d->acquisitions = figures->acquisitions;
		d->blocking_waits = figures->blocking_waits;
		d->backends = figures->backends;
		d->waits_per_1000 = verdict->waits_per_1000;
		d->blocked_ms_per_s = verdict->blocked_ms_per_s;
		d->locks_used = verdict->locks_used;
		d->blocked_share = verdict->blocked_share;
		d->rate = verdict->rate;
		d->rate_spread = verdict->spread;
	}
	auto_shared->ndecisions++;
	LWLockRelease(auto_shared->lock);
}

/* Start a new window: the counters now are its baseline. */
static void
auto_open_window(void)
{
	INSTR_TIME_SET_CURRENT(window.start);
	walscale_waits_activity(&window.sample_rounds, &window.active_samples);
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
	int			min = walscale_auto_min_locks();
	int			target = walscale_rules_begin(&rules_state, current, min, max);
	char		reason[AUTO_REASON_LEN];

	if (target != current)
	{
		if (target > current)
			snprintf(reason, sizeof(reason), "below the floor of %d", min);
		else
			snprintf(reason, sizeof(reason), "above the maximum for %d CPUs",
					 walscale_auto_cpus());
		ereport(LOG,
				(errmsg("walscale: auto mode %s WAL insertion locks from %d to %d (%d CPUs: between %d and %d)",
						target > current ? "raises" : "lowers",
						current, target, walscale_auto_cpus(), min, max)));
		walscale_resize_to(target);
		auto_record(current, target, reason, NULL, NULL);
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
						min, max)));
		auto_record(current, current, reason, NULL, NULL);
	}
	auto_open_window();
}

/*
 * Whether the window is over; if not, how long until it is.
 */
bool
walscale_auto_due(long *timeout_ms)
{
	instr_time	now;
	long		left;

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, window.start);
	left = walscale_auto_interval * 1000L - (long) INSTR_TIME_GET_MILLISEC(now);

	*timeout_ms = Max(left, 1);
	return left <= 0;
}

/*
 * Close the window: measure it, decide, and apply and record a change.
 */
void
walscale_auto_step(void)
{
	instr_time	elapsed;
	int			current = GetNumWALInsertLocks();
	int			nlocks = Min(current, window.nlocks);
	AutoWindowFigures figures = {0};
	AutoVerdict verdict;
	uint64		rounds;
	uint64		active;
	int			target;
	static uint64 lock_acquisitions[XLOG_INSERT_LOCKS_MAX];

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
		lock_acquisitions[i] = acq;
	}
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, window.start);
	walscale_waits_activity(&rounds, &active);
	figures.lock_acquisitions = lock_acquisitions;
	figures.active_locks = current;
	figures.backends = rounds > window.sample_rounds ?
		(double) (active - window.active_samples) / (rounds - window.sample_rounds) : 0;
	figures.window_s = Max(INSTR_TIME_GET_DOUBLE(elapsed), 0.001);
	figures.cpus = walscale_auto_cpus();
	figures.min_locks = walscale_auto_min_locks();
	figures.max_locks = walscale_auto_max_locks();

	walscale_rules_decide(&figures, &rules_state, &verdict);
	target = verdict.target;
	if (target != current)
	{
		ereport(LOG,
				(errmsg("walscale: auto mode %s WAL insertion locks from %d to %d (%s): %.2f%% of active backend time blocked on them (more are probed at %g%%), %.1f active backends, %.0f acquisitions per s per running backend (probe noise %.1f%%, gain %+.1f%%), %.1f blocking waits per 1000 acquisitions, %d of %d locks used, %llu acquisitions in %.1f s",
						target > current ? "raises" : "lowers",
						current, target, verdict.reason,
						verdict.blocked_share * 100,
						AUTO_GROW_BLOCKED_SHARE * 100,
						figures.backends, verdict.rate, verdict.spread * 100,
						verdict.gain * 100,
						verdict.waits_per_1000,
						verdict.locks_used, current,
						(unsigned long long) figures.acquisitions,
						figures.window_s)));
		walscale_resize_to(target);
		auto_record(current, target, verdict.reason, &figures, &verdict);
	}
	else
	{
		/* a probe judged and not kept changes nothing, but says so */
		if (verdict.judged)
			ereport(LOG,
					(errmsg("walscale: auto mode keeps %d WAL insertion locks: the probe of %d ran %+.1f%% against a probe noise of %.1f%%, not kept",
							current, rules_state.probe_to, verdict.gain * 100,
							verdict.spread * 100)));
		elog(DEBUG1, "walscale: auto mode holds %d WAL insertion locks: %.2f%% blocked, %.1f active backends, %.0f acquisitions per s per running backend (probe noise %.1f%%, gain %+.1f%%), %.1f blocking waits per 1000 acquisitions, %d locks used, %llu acquisitions in %.1f s, %s",
			 current, verdict.blocked_share * 100, figures.backends,
			 verdict.rate, verdict.spread * 100, verdict.gain * 100,
			 verdict.waits_per_1000, verdict.locks_used,
			 (unsigned long long) figures.acquisitions, figures.window_s,
			 rules_state.phase == AUTO_PROBE_AWAY ? "probing" :
			 rules_state.phase == AUTO_PROBE_BACK ? "probe back" : "settled");
	}

	auto_open_window();
}

/*
 * The recent decisions of auto mode, oldest first, in the columns of the
 * extension version given.
 */
static void
auto_decisions_internal(FunctionCallInfo fcinfo, WalscaleVersion version)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	AutoDecision *copy;
	uint64		n;
	uint64		first;
	int			natts;

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	natts = rsinfo->setDesc->natts;

	/* the entry point of 1.2 to 1.4 serves the columns of 1.2 and 1.4 */
	if (version == WALSCALE_V1_2 && natts == DECISIONS_COLS_V1_4)
		version = WALSCALE_V1_4;
	if (natts != (version >= WALSCALE_V1_5 ? DECISIONS_COLS_V1_5 :
				  version >= WALSCALE_V1_4 ? DECISIONS_COLS_V1_4 :
				  DECISIONS_COLS_V1_2))
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
		Datum		values[DECISIONS_COLS];
		bool		nulls[DECISIONS_COLS] = {0};
		int			i = 0;

		values[i++] = TimestampTzGetDatum(d->time);
		values[i++] = Int32GetDatum(d->from_locks);
		values[i++] = Int32GetDatum(d->to_locks);
		values[i++] = CStringGetTextDatum(d->reason);
		values[i++] = Float8GetDatum(d->window_s);
		values[i++] = Int64GetDatum((int64) d->acquisitions);
		values[i++] = Int64GetDatum((int64) d->blocking_waits);
		values[i++] = Float8GetDatum(d->waits_per_1000);
		values[i++] = Float8GetDatum(d->blocked_ms_per_s);
		values[i++] = Int32GetDatum(d->locks_used);
		if (version >= WALSCALE_V1_4)
		{
			values[i++] = Float8GetDatum(d->backends);
			values[i++] = Float8GetDatum(d->blocked_share);
		}
		if (version >= WALSCALE_V1_5)
		{
			/* the start of auto mode judged no window */
			nulls[i] = d->window_s == 0;
			values[i++] = Float8GetDatum(d->rate);
			nulls[i] = d->window_s == 0;
			values[i++] = Float8GetDatum(d->rate_spread);
		}
		Assert(i == natts);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/* extension versions 1.2 to 1.4 */
Datum
walscale_auto_decisions(PG_FUNCTION_ARGS)
{
	auto_decisions_internal(fcinfo, WALSCALE_V1_2);
	return (Datum) 0;
}

Datum
walscale_auto_decisions_1_5(PG_FUNCTION_ARGS)
{
	auto_decisions_internal(fcinfo, WALSCALE_V1_5);
	return (Datum) 0;
}
