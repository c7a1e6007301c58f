/*-------------------------------------------------------------------------
 *
 * walscale_advice.c
 *		The advisor: the view walscale_advice says, for each of walscale's
 *		settings, what to set it to and why, from the figures since the last
 *		walscale_reset(); and the fast-path measurement it needs.
 *
 * walscale.fastpath_groups is sized at server start and cannot follow the
 * load, so the advisor needs the most fast-path slots one transaction would
 * have used.  At pre-commit, when the transaction's relation locks are all
 * still held, each backend counts the slots it holds (its own fpLockBits).
 * Only if this transaction found a group full (the core patch's
 * backend-local FastPathLockOverflows moved) does it also count the
 * relation locks that could have used the fast path but went to the main
 * lock table, by walking its own PROCLOCKs: such a transaction already took
 * a partition lock for each of those.  The walk takes every partition lock
 * in shared mode, so a backend walks in one of ADVICE_WALK_EVERY of its
 * overflowing transactions only (the first one always): the maximum is of a
 * steady workload's transactions, which sampling finds.  The number of
 * overflows itself is no measure, since a catalog lock released and taken
 * again counts each time.  So the lock path pays nothing beyond the backend-local overflow
 * count the core patch already keeps.  The count goes
 * to shared memory only when it beats the maximum there, which backends read
 * from a cache line of its own; transactions are counted locally and added
 * to the shared count in batches.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "port/pg_bitutils.h"
#include "storage/ipc.h"
#include "storage/lock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "walscale.h"

/* fewer than these since the last reset, and the advisor will not guess */
#define ADVICE_MIN_ACQUISITIONS		1000
#define ADVICE_MIN_XACTS			100

/* transactions a backend counts before adding them to the shared count */
#define ADVICE_XACT_BATCH			16

/* of a backend's transactions that overflowed, those that walk its locks */
#define ADVICE_WALK_EVERY			16

/*
 * lock.c's layout of fpLockBits: 3 bits of lock modes per slot, 16 slots per
 * group; a slot is in use when any of its 3 bits is set.
 */
#define FP_BITS_PER_SLOT			3
#define FP_SLOT_LOW_BITS			UINT64CONST(0x249249249249)

/* headroom over the slots seen, for relations that hash to the same group */
#define ADVICE_FASTPATH_HEADROOM	2

typedef struct WalscaleAdviceShared
{
	/* most fast-path slots one transaction needed since the reset */
	pg_atomic_uint32 fastpath_max_slots;
	char		pad[PG_CACHE_LINE_SIZE];
	/* committed or prepared transactions that backends counted */
	pg_atomic_uint64 xacts;
	pg_atomic_uint64 xacts_baseline;
} WalscaleAdviceShared;

static WalscaleAdviceShared *advice_shared = NULL;

/* FastPathLockOverflows when this backend's transaction began */
static uint64 overflows_at_xact_start = 0;
static uint32 xacts_pending = 0;
static bool exit_callback_registered = false;
static uint64 overflowing_xacts = 0;

PG_FUNCTION_INFO_V1(walscale_advice);

Size
walscale_advice_shmem_size(void)
{
	return sizeof(WalscaleAdviceShared);
}

void
walscale_advice_shmem_init(bool found)
{
	bool		advice_found;

	advice_shared = ShmemInitStruct("walscale advice",
									walscale_advice_shmem_size(),
									&advice_found);
	if (!advice_found)
	{
		pg_atomic_init_u32(&advice_shared->fastpath_max_slots, 0);
		pg_atomic_init_u64(&advice_shared->xacts, 0);
		pg_atomic_init_u64(&advice_shared->xacts_baseline, 0);
	}
}

/* Called by walscale_reset() under walscale's lock. */
void
walscale_advice_reset(void)
{
	pg_atomic_write_u32(&advice_shared->fastpath_max_slots, 0);
	pg_atomic_write_u64(&advice_shared->xacts_baseline,
						pg_atomic_read_u64(&advice_shared->xacts));
}

static void
advice_publish_xacts(void)
{
	if (xacts_pending > 0 && advice_shared != NULL)
	{
		pg_atomic_fetch_add_u64(&advice_shared->xacts, xacts_pending);
		xacts_pending = 0;
	}
}

static void
advice_at_exit(int code, Datum arg)
{
	advice_publish_xacts();
}

/*
 * Relation locks this backend holds in the main lock table that the fast
 * path could have held (lock.c's EligibleForRelationFastPath()).  Each
 * partition's list of our PROCLOCKs changes only under its partition lock.
 */
static uint32
advice_main_table_eligible(void)
{
	const LOCKMASK weak = LOCKBIT_ON(AccessShareLock) |
		LOCKBIT_ON(RowShareLock) | LOCKBIT_ON(RowExclusiveLock);
	uint32		n = 0;

	if (MyDatabaseId == InvalidOid)
		return 0;
	for (int i = 0; i < NUM_LOCK_PARTITIONS; i++)
	{
		LWLock	   *partition_lock = LockHashPartitionLockByIndex(i);
		dlist_iter	iter;

		LWLockAcquire(partition_lock, LW_SHARED);
		dlist_foreach(iter, &MyProc->myProcLocks[i])
		{
			PROCLOCK   *proclock = dlist_container(PROCLOCK, procLink, iter.cur);
			LOCKTAG    *tag = &proclock->tag.myLock->tag;

			if (tag->locktag_lockmethodid == DEFAULT_LOCKMETHOD &&
				tag->locktag_type == LOCKTAG_RELATION &&
				tag->locktag_field1 == MyDatabaseId &&
				(proclock->holdMask & weak) != 0)
				n++;
		}
		LWLockRelease(partition_lock);
	}
	return n;
}

/*
 * The fast-path slots this transaction needs: those it holds, and, if a
 * group was full, the eligible relation locks it holds elsewhere.
 */
static uint32
advice_fastpath_slots_needed(void)
{
	uint32		used = 0;

	if (MyProc == NULL || MyProc->fpLockBits == NULL)
		return 0;
	for (int g = 0; g < FastPathLockGroupsPerBackend; g++)
	{
		uint64		bits = MyProc->fpLockBits[g];

		if (bits != 0)
			used += pg_popcount64((bits | (bits >> 1) | (bits >> 2)) &
								  FP_SLOT_LOW_BITS);
	}
	if (FastPathLockOverflows != overflows_at_xact_start)
	{
		/*
		 * The walk takes all NUM_LOCK_PARTITIONS partition locks, so it is
		 * sampled: the first overflowing transaction of a backend and one in
		 * ADVICE_WALK_EVERY after it.  It is skipped when it could not raise
		 * the maximum, since each eligible lock in the main table made the
		 * overflow count move at least once.
		 */
		uint64		overflowed = FastPathLockOverflows - overflows_at_xact_start;
		uint32		max = pg_atomic_read_u32(&advice_shared->fastpath_max_slots);

		if (used + overflowed > max &&
			overflowing_xacts++ % ADVICE_WALK_EVERY == 0)
			used += advice_main_table_eligible();
	}
	return used;
}

void
walscale_advice_xact_callback(XactEvent event)
{
	uint32		needed;
	uint32		max;

	if (advice_shared == NULL)
		return;

	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			/* the transaction's locks are all still held */
			needed = advice_fastpath_slots_needed();
			max = pg_atomic_read_u32(&advice_shared->fastpath_max_slots);
			while (needed > max &&
				   !pg_atomic_compare_exchange_u32(&advice_shared->fastpath_max_slots,
												   &max, needed))
				;
			if (!exit_callback_registered)
			{
				before_shmem_exit(advice_at_exit, (Datum) 0);
				exit_callback_registered = true;
			}
			if (++xacts_pending >= ADVICE_XACT_BATCH)
				advice_publish_xacts();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			overflows_at_xact_start = FastPathLockOverflows;
			break;
		default:
			break;
	}
}

typedef struct AdviceRow
{
	const char *setting;
	char	   *current;
	char	   *recommended;	/* NULL: not enough data */
	bool		needs_restart;
	char	   *evidence;
	char	   *reason;
} AdviceRow;

static void
advice_put(ReturnSetInfo *rsinfo, AdviceRow *row, TimestampTz since,
		   TimestampTz now)
{
	Datum		values[8];
	bool		nulls[8] = {0};
	Interval   *span = palloc0(sizeof(Interval));

	span->time = now - since;
	values[0] = CStringGetTextDatum(row->setting);
	values[1] = CStringGetTextDatum(row->current);
	if (row->recommended)
		values[2] = CStringGetTextDatum(row->recommended);
	else
		nulls[2] = true;
	/* not enough data: no change, so no restart */
	values[3] = BoolGetDatum(row->recommended != NULL && row->needs_restart &&
							 strcmp(row->recommended, row->current) != 0);
	values[4] = CStringGetTextDatum(row->evidence);
	values[5] = TimestampTzGetDatum(since);
	values[6] = IntervalPGetDatum(span);
	values[7] = CStringGetTextDatum(row->reason);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * One row per setting: current value, recommended value, whether applying
 * it needs a restart, the figures since the last reset, their time span, and
 * why, in one sentence.
 */
Datum
walscale_advice(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	uint64		c[WALINSERT_NUM_COUNTERS];
	int			locks_used;
	int			nactive;
	uint64		acquisitions;
	uint64		contended;
	double		waits_per_1000;
	int			max_locks = walscale_auto_max_locks();
	bool		contention;
	uint32		fp_max;
	uint64		xacts;
	uint64		overflows;
	int			groups = FastPathLockGroupsPerBackend;
	TimestampTz since;
	TimestampTz now;
	AdviceRow	row;

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 8)
		elog(ERROR, "incorrect number of output arguments");

	/* this backend's own transactions count too */
	advice_publish_xacts();

	since = walscale_stats_reset_time();
	nactive = walscale_counters_since_reset(c, &locks_used);
	fp_max = pg_atomic_read_u32(&advice_shared->fastpath_max_slots);
	xacts = pg_atomic_read_u64(&advice_shared->xacts) -
		pg_atomic_read_u64(&advice_shared->xacts_baseline);
	overflows = walscale_fastpath_overflows_since_reset();
	now = GetCurrentTimestamp();

	acquisitions = c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED];
	contended = c[WALINSERT_CONTENDED];
	waits_per_1000 = acquisitions > 0 ?
		c[WALINSERT_BLOCKED] * 1000.0 / acquisitions : 0;
	contention = waits_per_1000 >= WALSCALE_GROW_WAITS_PER_1000 &&
		locks_used * 2 >= nactive;

	/* walscale.insert_locks */
	row.setting = "walscale.insert_locks";
	row.current = psprintf("%d", walscale_insert_locks);
	row.needs_restart = false;
	row.evidence = psprintf("%llu acquisitions, %llu blocking waits (%.1f per 1000), %.1f ms blocked, %d of %d active locks used",
							(unsigned long long) acquisitions,
							(unsigned long long) c[WALINSERT_BLOCKED],
							waits_per_1000,
							c[WALINSERT_BLOCKED_NS] / 1000000.0,
							locks_used, nactive);
	if (acquisitions < ADVICE_MIN_ACQUISITIONS)
	{
		row.recommended = NULL;
		row.reason = psprintf("Not enough data: %llu WAL insertion lock acquisitions since the last reset, and at least %d are needed.",
							  (unsigned long long) acquisitions,
							  ADVICE_MIN_ACQUISITIONS);
	}
	else if (walscale_insert_locks == WALSCALE_INSERT_LOCKS_AUTO)
	{
		row.recommended = pstrdup(row.current);
		row.reason = psprintf("Auto mode chooses the number from contention, and has %d locks active now.",
							  nactive);
	}
	else if (contention && nactive < max_locks)
	{
		row.recommended = psprintf("%d", Min(nactive * 2, max_locks));
		row.reason = psprintf("Backends slept on %.1f of every 1000 acquisitions, at least %g, with most locks in use: more locks let more of them insert at once.",
							  waits_per_1000, WALSCALE_GROW_WAITS_PER_1000);
	}
	else if (contention)
	{
		row.recommended = pstrdup(row.current);
		row.reason = psprintf("Backends slept on %.1f of every 1000 acquisitions, but %d locks are already the most that helps on %d CPUs.",
							  waits_per_1000, nactive, walscale_auto_cpus());
	}
	else if (waits_per_1000 < WALSCALE_SHRINK_WAITS_PER_1000 &&
			 locks_used * 2 <= nactive && nactive > 1)
	{
		row.recommended = psprintf("%d", (int) pg_nextpower2_32((uint32) Max(locks_used, 1)));
		row.reason = psprintf("Only %d of %d locks were taken, with %.1f blocking waits per 1000 acquisitions: fewer locks make each WAL flush and all-lock acquisition cheaper.",
							  locks_used, nactive, waits_per_1000);
	}
	else
	{
		row.recommended = pstrdup(row.current);
		row.reason = psprintf("%.1f blocking waits per 1000 acquisitions is below %g, and %d of %d locks are in use: the number fits the load.",
							  waits_per_1000, WALSCALE_GROW_WAITS_PER_1000,
							  locks_used, nactive);
	}
	advice_put(rsinfo, &row, since, now);

	/* walscale.insert_lock_attempts */
	row.setting = "walscale.insert_lock_attempts";
	row.current = psprintf("%d", XLogInsertLockAttempts);
	row.needs_restart = false;
	row.evidence = psprintf("%llu acquisitions, %llu contended, %llu failed attempts, %llu blocking waits (%.1f per 1000)",
							(unsigned long long) acquisitions,
							(unsigned long long) contended,
							(unsigned long long) c[WALINSERT_FAILED_ATTEMPTS],
							(unsigned long long) c[WALINSERT_BLOCKED],
							waits_per_1000);
	if (acquisitions < ADVICE_MIN_ACQUISITIONS)
	{
		row.recommended = NULL;
		row.reason = psprintf("Not enough data: %llu WAL insertion lock acquisitions since the last reset, and at least %d are needed.",
							  (unsigned long long) acquisitions,
							  ADVICE_MIN_ACQUISITIONS);
	}
	else if (contention && XLogInsertLockAttempts == 0 && nactive > 1)
	{
		row.recommended = pstrdup("2");
		row.reason = psprintf("Backends slept on %.1f of every 1000 acquisitions: two conditional attempts let them take another free lock before they sleep.",
							  waits_per_1000);
	}
	else
	{
		row.recommended = pstrdup(row.current);
		if (!contention)
			row.reason = psprintf("With %.1f blocking waits per 1000 acquisitions there is no contention for attempts to spread.",
								  waits_per_1000);
		else if (nactive == 1)
			row.reason = psprintf("With one lock there is no other lock to try, so the number of locks is the setting to change.");
		else
			row.reason = psprintf("Conditional attempts are on, and the number of locks is the setting to change.");
	}
	advice_put(rsinfo, &row, since, now);

	/* walscale.fastpath_groups */
	row.setting = "walscale.fastpath_groups";
	row.current = psprintf("%d", groups);
	row.needs_restart = true;
	row.evidence = psprintf("%llu transactions, at most %u fast-path relation locks in one, %llu overflows; %d %s of %d slots%s",
							(unsigned long long) xacts, fp_max,
							(unsigned long long) overflows, groups,
							groups == 1 ? "group" : "groups",
							FP_LOCK_SLOTS_PER_GROUP,
							FastPathLockGroupsRequested != 0 ? "" :
							", from max_locks_per_transaction");
	if (xacts < ADVICE_MIN_XACTS)
	{
		row.recommended = NULL;
		row.reason = psprintf("Not enough data: %llu transactions since the last reset, and at least %d are needed.",
							  (unsigned long long) xacts, ADVICE_MIN_XACTS);
	}
	else
	{
		uint32		want = (fp_max * ADVICE_FASTPATH_HEADROOM +
							FP_LOCK_SLOTS_PER_GROUP - 1) / FP_LOCK_SLOTS_PER_GROUP;
		int			rec = (int) Min(pg_nextpower2_32(Max(want, 1)),
									FP_LOCK_GROUPS_PER_BACKEND_MAX);

		row.recommended = psprintf("%d", rec);
		if (rec > groups)
			row.reason = psprintf("Transactions needed up to %u fast-path slots and %llu lock acquisitions overflowed: %d groups hold twice that, as headroom because relations hash to groups unevenly.",
								  fp_max, (unsigned long long) overflows, rec);
		else if (rec < groups)
			row.reason = psprintf("Transactions needed at most %u fast-path slots: %d %s, the smallest power of two that holds twice that as headroom for uneven hashing, would have held them.",
								  fp_max, rec, rec == 1 ? "group" : "groups");
		else
			row.reason = psprintf("Transactions needed at most %u fast-path slots, and %d %s twice that, as headroom for uneven hashing.",
								  fp_max, groups, groups == 1 ? "group holds" : "groups hold");
	}
	advice_put(rsinfo, &row, since, now);

	return (Datum) 0;
}
