/*-------------------------------------------------------------------------
 *
 * walscale_waits.c
 *		The wait-event sampler: where active backends spend their time, on a
 *		stock server as on a patched one, for the views walscale_waits and
 *		walscale_wait_groups and for the advisor.
 *
 * Every walscale.sample_interval walscale's background worker reads the
 * wait_event_info of each regular backend's PGPROC, as pg_wait_sampling's
 * collector does, and counts it: a backend waiting for its client
 * (Client:ClientRead) is idle and counted apart; one with no wait event is
 * running, "CPU".  On the same pass it reads how full each backend's
 * fast-path lock groups are.  Both reads take no lock: wait_event_info is a
 * 4-byte field its backend stores with a single write, and fpLockBits is
 * read racily, so a sample may see a slot being filled or emptied; a sample
 * of many is no worse for it, and the lock that protects fpLockBits
 * (fpInfoLock) is taken by its backend on every relation lock, which a
 * sampler must not contend with.  Only the worker writes the counts, under
 * a lock of their own that SQL takes to copy them whole.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "walscale_counters.h"
#include "walscale_fastpath.h"
#include "walscale_settings.h"
#include "walscale_waits.h"

/*
 * Distinct wait events kept; PostgreSQL 18 has about 280, and extensions add
 * a few.  An event that finds the table full is counted in "dropped".
 */
#define WAITS_SLOTS			1024

/* wait_event_info of a backend that waits on no event */
#define WAIT_NONE			0

/* as PostgreSQL's own readers of other backends' fields define it */
#define UINT32_ACCESS_ONCE(var)		 ((uint32)(*((volatile uint32 *)&(var))))

typedef struct WaitSlot
{
	uint32		event;			/* wait_event_info; WAIT_NONE is running */
	bool		used;
	uint64		samples;
} WaitSlot;

typedef struct WalscaleWaitsShared
{
	LWLock	   *lock;
	TimestampTz first_sample;	/* since the last reset; 0: none yet */
	TimestampTz last_sample;
	uint64		rounds;			/* passes over the backends */
	uint64		active;			/* backend samples not waiting for a client */
	uint64		idle;			/* backend samples waiting for a client */
	uint64		dropped;		/* events that found the table full */
	uint64		fastpath_samples;	/* active backends holding a fast-path
									 * lock */
	uint64		fastpath_full;	/* of those, with at least one group full */
	uint32		fastpath_max_slots; /* most slots one backend held */
	WaitSlot	slots[WAITS_SLOTS];
} WalscaleWaitsShared;

static WalscaleWaitsShared *waits_shared = NULL;

/* when the worker took its last sample */
static TimestampTz last_round = 0;

/*
 * Passes and active backend samples since the worker started, which no
 * reset touches: auto mode takes their change over its window.
 */
static uint64 rounds_in_worker = 0;
static uint64 active_in_worker = 0;

PG_FUNCTION_INFO_V1(walscale_wait_samples);
PG_FUNCTION_INFO_V1(walscale_sampling_info);

Size
walscale_waits_shmem_size(void)
{
	return sizeof(WalscaleWaitsShared);
}

void
walscale_waits_shmem_init(LWLock *lock)
{
	bool		found;

	waits_shared = ShmemInitStruct("walscale waits", walscale_waits_shmem_size(),
								   &found);
	if (!found)
	{
		memset(waits_shared, 0, walscale_waits_shmem_size());
		waits_shared->lock = lock;
	}
}

/* Called by walscale_reset() under walscale's lock. */
void
walscale_waits_reset(void)
{
	LWLockAcquire(waits_shared->lock, LW_EXCLUSIVE);
	memset(((char *) waits_shared) + offsetof(WalscaleWaitsShared, first_sample), 0,
		   sizeof(WalscaleWaitsShared) - offsetof(WalscaleWaitsShared, first_sample));
	LWLockRelease(waits_shared->lock);
}

static void
waits_count(uint32 event)
{
	uint32		h = (event * 0x9E3779B1U) % WAITS_SLOTS;

	for (int probe = 0; probe < WAITS_SLOTS; probe++)
	{
		WaitSlot   *slot = &waits_shared->slots[(h + probe) % WAITS_SLOTS];

		if (!slot->used)
		{
			slot->used = true;
			slot->event = event;
		}
		if (slot->event == event)
		{
			slot->samples++;
			return;
		}
	}
	waits_shared->dropped++;
}

/*
 * Whether a sample is due, and in how many milliseconds the next one is;
 * never due with walscale.sample_interval = 0.
 */
bool
walscale_waits_due(long *timeout_ms)
{
	long		left;

	if (walscale_sample_interval == 0)
	{
		*timeout_ms = -1;
		return false;
	}
	left = TimestampDifferenceMilliseconds(GetCurrentTimestamp(),
										   TimestampTzPlusMilliseconds(last_round,
																	   walscale_sample_interval));
	*timeout_ms = Max(left, 1);
	return left <= 0;
}

/*
 * One pass over the regular backends.  pid and isRegularBackend are read
 * racily too: a backend that starts or exits during the pass is counted or
 * not, either of which a sample may do.
 */
void
walscale_waits_sample(void)
{
	TimestampTz now = GetCurrentTimestamp();
	uint32		nprocs = ProcGlobal->allProcCount;

	last_round = now;
	LWLockAcquire(waits_shared->lock, LW_EXCLUSIVE);
	if (waits_shared->first_sample == 0)
		waits_shared->first_sample = now;
	waits_shared->last_sample = now;
	waits_shared->rounds++;
	rounds_in_worker++;
	for (uint32 i = 0; i < nprocs; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];
		uint32		event;
		uint32		held = 0;
		bool		full = false;

		if (proc == MyProc || proc->pid == 0 ||
			!WALSCALE_PROC_IS_REGULAR_BACKEND(proc))
			continue;
		event = UINT32_ACCESS_ONCE(proc->wait_event_info);
		if (event == WAIT_EVENT_CLIENT_READ)
		{
			waits_shared->idle++;
			continue;
		}
		waits_shared->active++;
		active_in_worker++;
		waits_count(event);

		for (int g = 0; g < FastPathLockGroupsPerBackend; g++)
		{
			uint64		bits = ((volatile uint64 *) walscale_fp_lock_bits(proc))[g];
			uint32		used;

			if (bits == 0)
				continue;
			used = walscale_fastpath_slots_used(bits);
			held += used;
			full |= used == FP_LOCK_SLOTS_PER_GROUP;
		}
		if (held > 0)
		{
			waits_shared->fastpath_samples++;
			waits_shared->fastpath_full += full;
			waits_shared->fastpath_max_slots =
				Max(waits_shared->fastpath_max_slots, held);
		}
	}
	LWLockRelease(waits_shared->lock);
}

/*
 * The worker's own totals of passes and of active backend samples, for auto
 * mode's mean of active backends over its window.
 */
void
walscale_waits_activity(uint64 *rounds, uint64 *active)
{
	*rounds = rounds_in_worker;
	*active = active_in_worker;
}

/*
 * The group of a wait event, for the advisor and walscale_wait_groups:
 * the WAL insertion locks, WAL writing and flushing (which an inserter that
 * must replace a WAL buffer also waits for), the lock manager's own LWLocks,
 * heavyweight locks, other I/O, running, and the rest.
 */
const char *
walscale_wait_group(uint32 event)
{
	const char *type;
	const char *name;

	if (event == WAIT_NONE)
		return WAIT_GROUP_CPU;
	type = pgstat_get_wait_event_type(event);
	name = pgstat_get_wait_event(event);
	if (type == NULL || name == NULL)
		return WAIT_GROUP_OTHER;
	if (strcmp(type, "LWLock") == 0)
	{
		if (strcmp(name, "WALInsert") == 0)
			return WAIT_GROUP_WAL_INSERT;
		if (strcmp(name, "WALWrite") == 0 || strcmp(name, "WALBufMapping") == 0)
			return WAIT_GROUP_WAL_WRITE;
		if (strcmp(name, "LockManager") == 0 || strcmp(name, "LockFastPath") == 0)
			return WAIT_GROUP_LOCK_MANAGER;
		return WAIT_GROUP_OTHER;
	}
	if (strcmp(type, "IO") == 0)
	{
		if (strncmp(name, "Wal", 3) == 0 && strcmp(name, "WalRead") != 0 &&
			strncmp(name, "WalSummary", 10) != 0)
			return WAIT_GROUP_WAL_WRITE;
		return WAIT_GROUP_IO;
	}
	if (strcmp(type, "IPC") == 0 && strcmp(name, "SyncRep") == 0)
		return WAIT_GROUP_SYNC_REP;
	if (strcmp(type, "Lock") == 0)
		return WAIT_GROUP_HEAVYWEIGHT;
	return WAIT_GROUP_OTHER;
}

/*
 * A consistent copy of the counts, taken under their lock: the events seen,
 * in slots[0 .. nslots - 1] (palloc'd), and the totals.
 */
void
walscale_waits_snapshot(WalscaleWaitsSnapshot *snap)
{
	int			n = 0;

	snap->slots = palloc(sizeof(WalscaleWaitCount) * WAITS_SLOTS);
	LWLockAcquire(waits_shared->lock, LW_SHARED);
	snap->first_sample = waits_shared->first_sample;
	snap->last_sample = waits_shared->last_sample;
	snap->rounds = waits_shared->rounds;
	snap->active = waits_shared->active;
	snap->idle = waits_shared->idle;
	snap->dropped = waits_shared->dropped;
	snap->fastpath_samples = waits_shared->fastpath_samples;
	snap->fastpath_full = waits_shared->fastpath_full;
	snap->fastpath_max_slots = waits_shared->fastpath_max_slots;
	for (int i = 0; i < WAITS_SLOTS; i++)
	{
		if (!waits_shared->slots[i].used)
			continue;
		snap->slots[n].event = waits_shared->slots[i].event;
		snap->slots[n].samples = waits_shared->slots[i].samples;
		n++;
	}
	LWLockRelease(waits_shared->lock);
	snap->nslots = n;
}

/* The samples of one group in a snapshot. */
uint64
walscale_waits_group_samples(const WalscaleWaitsSnapshot *snap,
							 const char *group)
{
	uint64		n = 0;

	for (int i = 0; i < snap->nslots; i++)
		if (strcmp(walscale_wait_group(snap->slots[i].event), group) == 0)
			n += snap->slots[i].samples;
	return n;
}

/*
 * One row per wait event seen since the last reset: its group, type and
 * name, samples, and share of active backend samples.
 */
Datum
walscale_wait_samples(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WalscaleWaitsSnapshot snap;
	TimestampTz since;
	Interval   *span = NULL;

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 7)
		elog(ERROR, "incorrect number of output arguments");

	/* the samples and the reset they count from, of one span: retry a reset */
	for (;;)
	{
		since = walscale_stats_reset_time();
		walscale_waits_snapshot(&snap);
		if (since == walscale_stats_reset_time())
			break;
		pfree(snap.slots);
	}
	if (snap.first_sample != 0)
	{
		span = palloc0(sizeof(Interval));
		span->time = snap.last_sample - snap.first_sample;
	}

	for (int i = 0; i < snap.nslots; i++)
	{
		uint32		event = snap.slots[i].event;
		Datum		values[7];
		bool		nulls[7] = {0};
		const char *type = event == WAIT_NONE ? NULL :
			pgstat_get_wait_event_type(event);
		const char *name = event == WAIT_NONE ? NULL :
			pgstat_get_wait_event(event);

		values[0] = CStringGetTextDatum(walscale_wait_group(event));
		if (type)
			values[1] = CStringGetTextDatum(type);
		else
			nulls[1] = true;
		if (name)
			values[2] = CStringGetTextDatum(name);
		else
			nulls[2] = true;
		values[3] = Int64GetDatum((int64) snap.slots[i].samples);
		values[4] = Float8GetDatum(snap.active > 0 ?
								   (double) snap.slots[i].samples / snap.active : 0);
		values[5] = TimestampTzGetDatum(since);
		if (span != NULL)
			values[6] = IntervalPGetDatum(span);
		else
			nulls[6] = true;
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * The sampler's totals since the last reset: rounds, backend samples active
 * and idle, events dropped, the span sampled, and the fast-path figures.
 */
Datum
walscale_sampling_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	WalscaleWaitsSnapshot snap;
	Datum		values[10];
	bool		nulls[10] = {0};

	walscale_require_preloaded();
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != 10)
		elog(ERROR, "incorrect number of output arguments");

	walscale_waits_snapshot(&snap);
	values[0] = Int32GetDatum(walscale_sample_interval);
	values[1] = Int64GetDatum((int64) snap.rounds);
	values[2] = Int64GetDatum((int64) snap.active);
	values[3] = Int64GetDatum((int64) snap.idle);
	values[4] = Int64GetDatum((int64) snap.dropped);
	if (snap.first_sample != 0)
	{
		Interval   *span = palloc0(sizeof(Interval));

		span->time = snap.last_sample - snap.first_sample;
		values[5] = IntervalPGetDatum(span);
	}
	else
		nulls[5] = true;
	values[6] = Int64GetDatum((int64) snap.fastpath_samples);
	values[7] = Int64GetDatum((int64) snap.fastpath_full);
	values[8] = Int32GetDatum((int32) snap.fastpath_max_slots);
	values[9] = TimestampTzGetDatum(walscale_stats_reset_time());
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
