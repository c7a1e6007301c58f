/*-------------------------------------------------------------------------
 *
 * walscale_fastpath.c
 *		The fast-path overflows that backends publish, and
 *		walscale_fastpath_stats.
 *
 * The core patch counts, in each backend, the relation locks that did not
 * fit in its fast-path groups (FastPathLockOverflows).  A backend adds what
 * it counted to a shared sum at transaction end, so the lock path itself
 * touches no shared cache line.  PostgreSQL 17 has no fast-path groups, and
 * its core patch no overflow count (walscale_compat.h): there, none is
 * published.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "port/atomics.h"
#include "storage/proc.h"
#include "storage/shmem.h"

#include "walscale_counters.h"
#include "walscale_fastpath.h"

typedef struct WalscaleFastpath
{
	pg_atomic_uint64 overflows; /* published by backends */
	uint64		baseline;		/* at the last reset; under the reset lock */
} WalscaleFastpath;

static WalscaleFastpath *fastpath = NULL;

/* FastPathLockOverflows of this backend that were added to the shared sum */
static uint64 fastpath_overflows_published = 0;

PG_FUNCTION_INFO_V1(walscale_fastpath_stats);

Size
walscale_fastpath_shmem_size(void)
{
	return sizeof(WalscaleFastpath);
}

/* Under AddinShmemInitLock. */
void
walscale_fastpath_shmem_init(void)
{
	bool		found;

	fastpath = ShmemInitStruct("walscale fastpath", sizeof(WalscaleFastpath),
							   &found);
	if (!found)
	{
		pg_atomic_init_u64(&fastpath->overflows, 0);
		fastpath->baseline = 0;
	}
}

/*
 * Add this backend's fast-path overflows since the last call to the shared
 * sum.  Called at transaction end, so the lock path itself only increments a
 * backend-local counter.
 */
void
walscale_fastpath_publish(void)
{
	uint64		pending;

	if (!walscale_core_fastpath())
		return;
	pending = FastPathLockOverflows - fastpath_overflows_published;
	if (pending > 0 && fastpath != NULL)
	{
		pg_atomic_fetch_add_u64(&fastpath->overflows, pending);
		fastpath_overflows_published = FastPathLockOverflows;
	}
}

uint64
walscale_fastpath_overflows_locked(void)
{
	return pg_atomic_read_u64(&fastpath->overflows) - fastpath->baseline;
}

void
walscale_fastpath_reset_locked(void)
{
	fastpath->baseline = pg_atomic_read_u64(&fastpath->overflows);
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

	walscale_fastpath_publish();

	walscale_counters_lock(LW_SHARED);
	overflows = walscale_fastpath_overflows_locked();
	stats_reset = walscale_counters_reset_time_locked();
	walscale_counters_unlock();

	/*
	 * A stock server has the groups, but counts no overflow; PostgreSQL 17
	 * has neither groups nor, with the core patch, an overflow count.
	 */
	values[0] = Int32GetDatum(FastPathLockGroupsPerBackend);
	nulls[0] = !WALSCALE_HAS_FASTPATH_GROUPS;
	values[1] = Int32GetDatum(FastPathLockSlotsPerBackend());
	values[2] = Int64GetDatum(overflows);
	nulls[2] = !walscale_core_fastpath();
	values[3] = TimestampTzGetDatum(stats_reset);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
