/*-------------------------------------------------------------------------
 *
 * walscale_counters.c
 *		The insertion-lock counters' baseline, the record of resizes, and
 *		walscale_stats.
 *
 * The core patch keeps the counters beside each insertion lock, and the
 * insertion path updates them without a lock; nothing here ever writes
 * them.  A reset takes their current values as the baseline, which the
 * readers subtract.  The lock that guards the baseline is also the reset
 * lock of every file that keeps figures since the last reset: held
 * exclusively by walscale_reset(), shared by a reader that needs figures
 * as of one reset.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "portability/instr_time.h"
#include "storage/shmem.h"
#include "utils/timestamp.h"

#include "walscale_counters.h"

/*
 * The counter values at the last reset, and what the background worker did
 * to the number of insertion locks.
 */
typedef struct WalscaleCounters
{
	LWLock	   *lock;			/* the reset lock; protects all below */
	TimestampTz stats_reset;

	/*
	 * Insertion locks numbered below locks_shown were active at some time
	 * since the last reset, and keep their row in walscale_stats.
	 */
	int			locks_shown;
	int64		resizes;		/* since server start */
	TimestampTz last_resize;	/* 0 if none */
	int			last_resize_from;
	int			last_resize_to;
	uint64		last_resize_held_ns;
	uint64		last_resize_wait_ns;
	uint64		baseline[FLEXIBLE_ARRAY_MEMBER];	/* [lock][counter] */
} WalscaleCounters;

static WalscaleCounters *counters = NULL;

PG_FUNCTION_INFO_V1(walscale_insert_lock_stats);
PG_FUNCTION_INFO_V1(walscale_insert_lock_stats_1_5);

/* walscale_stats' columns, by the extension version that set them */
#define STATS_COLS_V1_0		9
#define STATS_COLS_V1_1		10

/*
 * The baselines have room for every insertion lock allocated: _PG_init()
 * asks for the largest number.
 */
Size
walscale_counters_shmem_size(void)
{
	return add_size(offsetof(WalscaleCounters, baseline),
					mul_size(sizeof(uint64),
							 mul_size(XLOG_INSERT_LOCKS_MAX,
									  WALINSERT_NUM_COUNTERS)));
}

/*
 * Under AddinShmemInitLock.  Returns whether the shared memory was there
 * already: false at server start and after a crash.
 */
bool
walscale_counters_shmem_init(LWLock *lock)
{
	bool		found;

	counters = ShmemInitStruct("walscale", walscale_counters_shmem_size(),
							   &found);
	if (!found)
	{
		/* the counters start at zero with the server: so does the baseline */
		memset(counters, 0, walscale_counters_shmem_size());
		counters->lock = lock;
		counters->stats_reset = GetCurrentTimestamp();
		counters->locks_shown = walscale_core_active ?
			GetNumWALInsertLocks() : 0;
	}
	return found;
}

void
walscale_counters_lock(LWLockMode mode)
{
	LWLockAcquire(counters->lock, mode);
}

void
walscale_counters_unlock(void)
{
	LWLockRelease(counters->lock);
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
	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	counters->locks_shown = Max(counters->locks_shown, target);
	LWLockRelease(counters->lock);

	INSTR_TIME_SET_CURRENT(start);
	from = SetNumWALInsertLocks(target, &held_ns);
	INSTR_TIME_SET_CURRENT(duration);
	INSTR_TIME_SUBTRACT(duration, start);
	total_ns = INSTR_TIME_GET_NANOSEC(duration);

	LWLockAcquire(counters->lock, LW_EXCLUSIVE);
	counters->resizes++;
	counters->last_resize = GetCurrentTimestamp();
	counters->last_resize_from = from;
	counters->last_resize_to = target;
	counters->last_resize_held_ns = held_ns;
	counters->last_resize_wait_ns = total_ns - Min(held_ns, total_ns);
	LWLockRelease(counters->lock);

	ereport(LOG,
			(errmsg("walscale: WAL insertion locks resized from %d to %d; all locks held for %.3f ms after waiting %.3f ms for them",
					from, target, held_ns / 1000000.0,
					(total_ns - Min(held_ns, total_ns)) / 1000000.0)));
	return from;
}

TimestampTz
walscale_stats_reset_time(void)
{
	TimestampTz t;

	LWLockAcquire(counters->lock, LW_SHARED);
	t = counters->stats_reset;
	LWLockRelease(counters->lock);
	return t;
}

TimestampTz
walscale_counters_reset_time_locked(void)
{
	return counters->stats_reset;
}

/*
 * The counters of every lock active now or since the reset, summed.  With
 * the core patch only.
 */
void
walscale_counters_read_locked(WalscaleCounterSums *sums)
{
	int			nlocks;

	memset(sums, 0, sizeof(*sums));
	sums->stats_reset = counters->stats_reset;
	sums->nactive = GetNumWALInsertLocks();
	nlocks = Max(counters->locks_shown, sums->nactive);
	for (int lockno = 0; lockno < nlocks; lockno++)
	{
		uint64		c[WALINSERT_NUM_COUNTERS];
		uint64	   *base = &counters->baseline[lockno * WALINSERT_NUM_COUNTERS];

		GetWALInsertLockCounters(lockno, c);
		for (int k = 0; k < WALINSERT_NUM_COUNTERS; k++)
			sums->sums[k] += c[k] - base[k];
		if (c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED] >
			base[WALINSERT_FIRST_TRY] + base[WALINSERT_CONTENDED])
			sums->locks_used++;
	}
	sums->resized = counters->resizes > 0 &&
		counters->last_resize > counters->stats_reset;
}

/*
 * Take the current values as the baseline; the counters themselves, which
 * the insertion path updates without a lock, are never written.  With the
 * reset lock held exclusively.
 */
void
walscale_counters_reset_locked(TimestampTz now)
{
	if (walscale_core_active)
	{
		for (int lockno = 0; lockno < GetMaxWALInsertLocks(); lockno++)
			GetWALInsertLockCounters(lockno,
									 &counters->baseline[lockno * WALINSERT_NUM_COUNTERS]);
		counters->locks_shown = GetNumWALInsertLocks();
	}
	counters->stats_reset = now;
}

void
walscale_counters_resize_record(WalscaleResizeRecord *record)
{
	LWLockAcquire(counters->lock, LW_SHARED);
	record->resizes = counters->resizes;
	record->last_resize = counters->last_resize;
	record->last_resize_from = counters->last_resize_from;
	record->last_resize_held_ms = counters->last_resize_held_ns / 1000000.0;
	LWLockRelease(counters->lock);
}

/*
 * One row per WAL insertion lock active now or at some time since the last
 * reset: its counters since the reset, in the columns of the extension
 * version given.
 */
static void
walscale_insert_lock_stats_internal(FunctionCallInfo fcinfo,
									WalscaleVersion version)
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

	/* the entry point of 1.0 to 1.4 serves the columns of 1.0 and 1.1 */
	if (version == WALSCALE_V1_0 && ncols == STATS_COLS_V1_1)
		version = WALSCALE_V1_1;
	if (ncols != (version >= WALSCALE_V1_1 ? STATS_COLS_V1_1 : STATS_COLS_V1_0))
		elog(ERROR, "incorrect number of output arguments");

	baseline = palloc(sizeof(uint64) * XLOG_INSERT_LOCKS_MAX * WALINSERT_NUM_COUNTERS);
	LWLockAcquire(counters->lock, LW_SHARED);
	nactive = GetNumWALInsertLocks();
	nlocks = Max(counters->locks_shown, nactive);
	memcpy(baseline, counters->baseline,
		   sizeof(uint64) * nlocks * WALINSERT_NUM_COUNTERS);
	stats_reset = counters->stats_reset;
	LWLockRelease(counters->lock);

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
		if (version >= WALSCALE_V1_1)
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
}

/* extension versions 1.0 to 1.4 */
Datum
walscale_insert_lock_stats(PG_FUNCTION_ARGS)
{
	walscale_insert_lock_stats_internal(fcinfo, WALSCALE_V1_0);
	return (Datum) 0;
}

Datum
walscale_insert_lock_stats_1_5(PG_FUNCTION_ARGS)
{
	walscale_insert_lock_stats_internal(fcinfo, WALSCALE_V1_5);
	return (Datum) 0;
}
