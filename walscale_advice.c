/*-------------------------------------------------------------------------
 *
 * walscale_advice.c
 *		The advisor: the view walscale_advice says, for each of walscale's
 *		settings, what to set it to and why, from the figures since the last
 *		walscale_reset(); and the fast-path measurement it needs.  With the
 *		core patch it reads the core's counters, with the wait samples of
 *		walscale_waits.c beside them; without it, the wait samples alone.
 *
 * walscale.fastpath_groups is sized at server start and cannot follow the
 * load, so the advisor needs the most fast-path slots one transaction would
 * have used.  At pre-commit, when the transaction's relation locks are all
 * still held, each backend counts the slots it holds (its own fpLockBits).
 * Only if this transaction found a group full (the core patch's
 * backend-local FastPathLockOverflows moved) does it count instead the
 * relations it holds eligible locks on, wherever each lock went, from its
 * own local lock table: no lock manager partition lock is taken, and, as
 * the walk costs 2% of such a transaction, only in one of 16 of them.  The
 * number of overflows itself is no measure, since a catalog lock released
 * and taken again counts each time.  So the lock path pays nothing beyond
 * the backend-local overflow count the core patch already keeps.  The
 * count goes to shared memory only when it beats the maximum there, which
 * backends read from a cache line of its own; transactions are counted
 * locally and added to the shared count in batches.
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
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/injection_point.h"
#include "utils/timestamp.h"

#include "walscale_advice.h"
#include "walscale_auto.h"
#include "walscale_counters.h"
#include "walscale_fastpath.h"
#include "walscale_settings.h"
#include "walscale_waits.h"

/* fewer than these since the last reset, and the advisor will not guess */
#define ADVICE_MIN_ACQUISITIONS		1000
#define ADVICE_MIN_XACTS			100

/*
 * With a fixed number, the advice judges the span since the reset as a
 * whole, by blocking waits per 1000 acquisitions: more than 2 suggest more
 * locks, fewer than 0.2 with most locks idle suggest fewer.  Auto mode
 * decides window by window on the share of active time blocked instead
 * (walscale_auto_rules.h).
 */
#define ADVICE_GROW_WAITS_PER_1000		2.0
#define ADVICE_SHRINK_WAITS_PER_1000	0.2

/* transactions a backend counts before adding them to the shared count */
#define ADVICE_XACT_BATCH			16

/* of a backend's transactions that overflowed, those that walk its locks */
#define ADVICE_WALK_EVERY			16

/* headroom over the slots seen, for relations that hash to the same group */
#define ADVICE_FASTPATH_HEADROOM	2

/*
 * Fewer fast-path groups are recommended only from at least this span: a
 * restart for a setting that can only overflow sooner must rest on more
 * than a quiet moment.
 */
#define ADVICE_FASTPATH_LOWER_SPAN_S	3600

/* PGPROC memory per fast-path group per process: the bits and 16 OIDs */
#define ADVICE_FASTPATH_GROUP_BYTES \
	(sizeof(uint64) + FP_LOCK_SLOTS_PER_GROUP * sizeof(Oid))

/*
 * The wait samples the advisor needs: at least this many of active
 * backends, over at least this span (docs/advice.md).
 */
#define ADVICE_MIN_ACTIVE_SAMPLES	1000
#define ADVICE_MIN_SAMPLED_SPAN_S	30

/*
 * A wait group that takes this share of active backend time is a
 * bottleneck worth a change: removing less could not gain more than it.
 */
#define ADVICE_BOTTLENECK_SHARE		0.10

/* samples of backends holding fast-path locks the fast-path advice needs */
#define ADVICE_MIN_FASTPATH_SAMPLES	100

/* sampled backends holding fast-path locks with a group full: too many */
#define ADVICE_FASTPATH_FULL_SHARE	0.01

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

/* overflowing transactions, counted from this backend's PID (the phase) */
static uint32 overflowing_xacts = 0;

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

/*
 * Everything the advisor reads since the last reset, under the reset lock,
 * so that no reset falls between two of the figures (a baseline newer than
 * a value would make a difference wrap around).  With the core patch only.
 */
void
walscale_advice_snapshot(WalscaleSinceReset *snap)
{
	memset(snap, 0, sizeof(*snap));
	walscale_fastpath_publish();
	walscale_counters_lock(LW_SHARED);
	walscale_counters_read_locked(&snap->counters);
	/* t/018 pauses here: a reset must wait until the snapshot is whole */
	INJECTION_POINT("walscale-advice-snapshot", NULL);
	snap->fastpath_overflows = walscale_fastpath_overflows_locked();
	snap->xacts = pg_atomic_read_u64(&advice_shared->xacts) -
		pg_atomic_read_u64(&advice_shared->xacts_baseline);
	snap->fastpath_max_slots =
		pg_atomic_read_u32(&advice_shared->fastpath_max_slots);
	walscale_counters_unlock();
}

/* Called by walscale_reset() with the reset lock held exclusively. */
void
walscale_advice_reset_locked(void)
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
 * Whether the fast path could hold this lock: lock.c's
 * EligibleForRelationFastPath(), a relation of this database in a weak mode.
 */
static bool
advice_fastpath_eligible(const LOCKTAG *tag, LOCKMODE mode)
{
	return tag->locktag_lockmethodid == DEFAULT_LOCKMETHOD &&
		tag->locktag_type == LOCKTAG_RELATION &&
		tag->locktag_field1 == MyDatabaseId &&
		MyDatabaseId != InvalidOid &&
		mode < ShareUpdateExclusiveLock;
}

/* Whether this backend holds the lock on *tag in a weaker mode too. */
static bool
advice_held_in_weaker_mode(HTAB *locallocks, const LOCKTAG *tag, LOCKMODE mode)
{
	for (LOCKMODE weaker = AccessShareLock; weaker < mode; weaker++)
	{
		LOCALLOCKTAG key;
		LOCALLOCK  *locallock;

		/* lock.c zeroes the key's padding too: the hash covers all of it */
		memset(&key, 0, sizeof(key));
		key.lock = *tag;
		key.mode = weaker;
		locallock = hash_search(locallocks, &key, HASH_FIND, NULL);
		if (locallock != NULL && locallock->nLocks > 0)
			return true;
	}
	return false;
}

/*
 * The relations this backend holds locks on that the fast path could hold,
 * wherever each went: the slots its transaction would have used had no
 * group been full.  The local lock table (core patch 0004) is this
 * backend's own and changes only when this backend takes or releases a
 * lock, so it is read with no lock at all, unlike its PROCLOCKs, which
 * would take each lock manager partition lock in turn.  A relation held in
 * two weak modes has an entry for each but takes one slot.
 */
static uint32
advice_fastpath_eligible_relations(void)
{
	HTAB	   *locallocks = GetLockMethodLocalHash();
	HASH_SEQ_STATUS status;
	LOCALLOCK  *locallock;
	uint32		n = 0;

	hash_seq_init(&status, locallocks);
	while ((locallock = hash_seq_search(&status)) != NULL)
	{
		const LOCKTAG *tag = &locallock->tag.lock;
		LOCKMODE	mode = locallock->tag.mode;

		if (locallock->nLocks > 0 &&
			advice_fastpath_eligible(tag, mode) &&
			!advice_held_in_weaker_mode(locallocks, tag, mode))
			n++;
	}
	return n;
}

/*
 * The fast-path slots this transaction needs: those it holds, or, if a
 * group was full (the core patch's backend-local FastPathLockOverflows
 * moved), every eligible relation it holds a lock on.  The walk costs about
 * 170 instructions a local lock (bench/fastpath-measure.sh: 13,800 for 80,
 * 2% of such a transaction), so a backend walks in one of
 * ADVICE_WALK_EVERY of its overflowing transactions, at a phase its PID
 * sets, so that a new connection's first transaction walks no more often
 * than any other; the others count the slots they hold, fewer.  The
 * maximum sought is that of a steady workload's transactions, which
 * sampling finds.
 */
static uint32
advice_fastpath_slots_needed(void)
{
	uint32		used = 0;

	if (MyProc == NULL || walscale_fp_lock_bits(MyProc) == NULL)
		return 0;
	if (walscale_core_fastpath() &&
		FastPathLockOverflows != overflows_at_xact_start &&
		overflowing_xacts++ % ADVICE_WALK_EVERY == 0)
		return advice_fastpath_eligible_relations();

	/*
	 * Only this backend sets its fpLockBits; another clears them only to move
	 * a lock to the main table for a strong locker, under our fpInfoLock,
	 * which is not taken here: such a read can miss a lock that just moved,
	 * and a maximum over many transactions is not hurt by it.
	 */
	for (int g = 0; g < FastPathLockGroupsPerBackend; g++)
	{
		uint64		bits = walscale_fp_lock_bits(MyProc)[g];

		if (bits != 0)
			used += walscale_fastpath_slots_used(bits);
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
			if (!exit_callback_registered)
			{
				/* this backend's first: its count at exit, its walks' phase */
				before_shmem_exit(advice_at_exit, (Datum) 0);
				exit_callback_registered = true;
				overflowing_xacts = (uint32) MyProcPid;
			}
			/* the transaction's locks are all still held */
			needed = advice_fastpath_slots_needed();
			max = pg_atomic_read_u32(&advice_shared->fastpath_max_slots);
			while (needed > max &&
				   !pg_atomic_compare_exchange_u32(&advice_shared->fastpath_max_slots,
												   &max, needed))
				;
			if (++xacts_pending >= ADVICE_XACT_BATCH)
				advice_publish_xacts();
			break;
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PREPARE:
			if (walscale_core_fastpath())
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


/* What the wait samples since the last reset say, for the advice. */
typedef struct WaitEvidence
{
	bool		enough;			/* enough samples over a long enough span */
	double		span_s;
	uint64		active;
	double		insert_share;	/* of active backend samples */
	double		write_share;
	const char *top_group;		/* the group with the most samples */
	double		top_share;
	char	   *text;			/* the figures, in words */
	WalscaleWaitsSnapshot snap;
} WaitEvidence;

static void
advice_wait_evidence(WaitEvidence *w)
{
	static const char *const groups[] = {
		WAIT_GROUP_WAL_INSERT, WAIT_GROUP_WAL_WRITE, WAIT_GROUP_SYNC_REP,
		WAIT_GROUP_LOCK_MANAGER, WAIT_GROUP_HEAVYWEIGHT, WAIT_GROUP_IO,
		WAIT_GROUP_CPU, WAIT_GROUP_OTHER,
	};
	double		active;

	walscale_waits_snapshot(&w->snap);
	w->active = w->snap.active;
	active = Max(w->snap.active, 1);
	w->span_s = w->snap.first_sample == 0 ? 0 :
		(w->snap.last_sample - w->snap.first_sample) / 1000000.0;
	w->enough = w->snap.active >= ADVICE_MIN_ACTIVE_SAMPLES &&
		w->span_s >= ADVICE_MIN_SAMPLED_SPAN_S;
	w->insert_share = walscale_waits_group_samples(&w->snap,
												   WAIT_GROUP_WAL_INSERT) / active;
	w->write_share = walscale_waits_group_samples(&w->snap,
												  WAIT_GROUP_WAL_WRITE) / active;
	w->top_group = WAIT_GROUP_CPU;
	w->top_share = -1;
	for (int i = 0; i < lengthof(groups); i++)
	{
		double		share = walscale_waits_group_samples(&w->snap, groups[i]) / active;

		if (share > w->top_share)
		{
			w->top_group = groups[i];
			w->top_share = share;
		}
	}
	w->text = psprintf("%llu active backend samples over %.0f s: %.1f%% of active time on the WAL insertion locks (LWLock:WALInsert), %.1f%% on WAL write and flush, most on %s (%.1f%%)",
					   (unsigned long long) w->snap.active, w->span_s,
					   100 * w->insert_share, 100 * w->write_share,
					   w->top_group, 100 * Max(w->top_share, 0));
}

static char *
advice_not_enough_samples(const WaitEvidence *w)
{
	if (walscale_sample_interval == 0)
		return pstrdup("Not enough data: sampling is off (\"walscale.sample_interval\" is 0).");
	return psprintf("Not enough data: %llu active backend samples over %.0f s since the last reset, and at least %d over %d s are needed.",
					(unsigned long long) w->active, w->span_s,
					ADVICE_MIN_ACTIVE_SAMPLES, ADVICE_MIN_SAMPLED_SPAN_S);
}

/* The fast-path groups the derived value gives: PostgreSQL's own rule. */
static int
advice_derived_fastpath_groups(void)
{
	return Max(Min(pg_nextpower2_32(max_locks_per_xact) / FP_LOCK_SLOTS_PER_GROUP,
				   WALSCALE_FASTPATH_GROUPS_MAX), 1);
}

/* What going from "groups" to "rec" groups per process costs, in words. */
static char *
advice_fastpath_cost(int groups, int rec)
{
	int			change = rec > groups ? rec - groups : groups - rec;
	double		kb = (double) change * ADVICE_FASTPATH_GROUP_BYTES *
		ProcGlobal->allProcCount / 1024.0;

	return psprintf("%s %.1f kB of shared memory (%d %s x %d bytes x %u processes)",
					rec > groups ? "costs" : "saves", kb, change,
					change == 1 ? "group" : "groups",
					(int) ADVICE_FASTPATH_GROUP_BYTES, ProcGlobal->allProcCount);
}

/*
 * walscale.insert_locks on a server without the core patch: from the wait
 * samples alone, whether the insertion locks are where active time goes, or
 * what is instead.
 */
static void
advice_stock_insert_locks(AdviceRow *row, const WaitEvidence *w)
{
	int			spread = Max(2 * WALSCALE_STOCK_INSERT_LOCKS,
							 walscale_auto_start_locks());

	row->setting = "walscale.insert_locks";
	row->current = psprintf("%d", WALSCALE_STOCK_INSERT_LOCKS);
	row->needs_restart = true;
	row->evidence = w->text;
	if (!w->enough)
	{
		row->recommended = NULL;
		row->reason = advice_not_enough_samples(w);
	}
	else if (w->insert_share >= ADVICE_BOTTLENECK_SHARE &&
			 w->insert_share >= w->write_share)
	{
		row->recommended = psprintf("%d", spread);
		row->reason = psprintf("%.0f%% of active backend time waits on LWLock:WALInsert: the patched server with %d locks would spread it (this server has no core patch, and PostgreSQL's 8 locks).",
							   100 * w->insert_share, spread);
	}
	else if (w->write_share >= ADVICE_BOTTLENECK_SHARE)
	{
		row->recommended = pstrdup(row->current);
		row->reason = psprintf("%.0f%% of active backend time waits on WAL write and flush, which more insertion locks do not help: synchronous_commit = off for transactions that may lose their last commits in a crash, commit_delay with many concurrent committers, or faster WAL storage would.",
							   100 * w->write_share);
	}
	else
	{
		row->recommended = pstrdup(row->current);
		row->reason = psprintf("The WAL insertion locks are not the bottleneck: %.1f%% of active backend time waits on them, and most is %s (%.0f%%).",
							   100 * w->insert_share, w->top_group,
							   100 * w->top_share);
	}
}

/* walscale.fastpath_groups without the core: from the sampled slots */
static void
advice_stock_fastpath(AdviceRow *row, const WaitEvidence *w)
{
	int			groups = FastPathLockGroupsPerBackend;
	uint64		sampled = w->snap.fastpath_samples;
	double		full_share = sampled > 0 ?
		(double) w->snap.fastpath_full / sampled : 0;

	row->setting = "walscale.fastpath_groups";
	row->current = psprintf("%d", groups);
	row->needs_restart = true;
	row->evidence = psprintf("%llu samples of backends holding fast-path locks, %llu with a group full, at most %u slots held; %d %s of %d slots, from max_locks_per_transaction",
							 (unsigned long long) sampled,
							 (unsigned long long) w->snap.fastpath_full,
							 w->snap.fastpath_max_slots, groups,
							 groups == 1 ? "group" : "groups",
							 FP_LOCK_SLOTS_PER_GROUP);
	if (!w->enough)
	{
		row->recommended = NULL;
		row->reason = advice_not_enough_samples(w);
	}
	else if (sampled < ADVICE_MIN_FASTPATH_SAMPLES)
	{
		row->recommended = NULL;
		row->reason = psprintf("Not enough data: %llu samples of backends holding fast-path locks since the last reset, and at least %d are needed.",
							   (unsigned long long) sampled,
							   ADVICE_MIN_FASTPATH_SAMPLES);
	}
	else if (full_share >= ADVICE_FASTPATH_FULL_SHARE &&
			 groups < WALSCALE_FASTPATH_GROUPS_MAX)
	{
		int			rec = groups * 2;

		row->recommended = psprintf("%d", rec);
		row->reason = psprintf("%.1f%% of sampled backends holding fast-path locks had a group full: %d groups (max_locks_per_transaction = %d here, which also enlarges the lock table, or walscale.fastpath_groups = %d on the patched server) would hold twice as many; it %s.",
							   100 * full_share, rec,
							   rec * FP_LOCK_SLOTS_PER_GROUP, rec,
							   advice_fastpath_cost(groups, rec));
	}
	else
	{
		row->recommended = pstrdup(row->current);
		row->reason = psprintf("%.1f%% of sampled backends holding fast-path locks had a group full: the %d %s fit the load.",
							   100 * full_share, groups,
							   groups == 1 ? "group" : "groups");
	}
}

/*
 * walscale.fastpath_groups where the server has no fast-path lock groups
 * (PostgreSQL 17, walscale_compat.h), with the core patch or without: no
 * setting changes its 16 slots per backend, so nothing is recommended
 * whatever the load, and the reason says why, and what the wait samples saw
 * of the slots.  The value shown is the one configured, which is not in
 * effect.
 */
static void
advice_no_fastpath_groups(AdviceRow *row, const WaitEvidence *w)
{
	uint64		sampled = w->snap.fastpath_samples;
	double		full_share = sampled > 0 ?
		(double) w->snap.fastpath_full / sampled : 0;
	const char *why = WALSCALE_NO_FASTPATH_GROUPS_REASON;
	const char *load;

	row->setting = "walscale.fastpath_groups";
	row->current = pstrdup(GetConfigOption("walscale.fastpath_groups",
										   false, false));
	row->recommended = NULL;
	row->needs_restart = false;
	row->evidence = psprintf("%llu samples of backends holding fast-path locks, %llu with all %d slots full, at most %u slots held",
							 (unsigned long long) sampled,
							 (unsigned long long) w->snap.fastpath_full,
							 FastPathLockSlotsPerBackend(),
							 w->snap.fastpath_max_slots);
	if (!w->enough || sampled < ADVICE_MIN_FASTPATH_SAMPLES)
		load = "";
	else if (full_share >= ADVICE_FASTPATH_FULL_SHARE)
		load = psprintf(" %.1f%% of sampled backends holding fast-path locks had all %d slots full, so that their other relation locks went to the shared lock table: PostgreSQL 18's fast-path lock groups would hold more.",
						100 * full_share, FastPathLockSlotsPerBackend());
	else
		load = psprintf(" %.1f%% of sampled backends holding fast-path locks had all %d slots full: the slots fit the load.",
						100 * full_share, FastPathLockSlotsPerBackend());
	row->reason = psprintf("No recommendation: %s No setting changes the number of fast-path slots here, so \"walscale.fastpath_groups\" is not in effect.%s",
						   why ? why : "", load);
}

/*
 * One row per setting: current value, recommended value, whether applying
 * it needs a restart, the figures since the last reset, their time span, and
 * why, in one sentence.  With the core patch, from its counters, with the
 * wait samples beside them; without it, from the wait samples.
 */
Datum
walscale_advice(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	WalscaleSinceReset f;
	WaitEvidence w;
	uint64	   *c = f.counters.sums;
	uint64		acquisitions;
	uint64		contended;
	double		waits_per_1000;
	int			max_locks = walscale_auto_max_locks();
	bool		contention;
	int			groups = FastPathLockGroupsPerBackend;
	char	   *locks_used_text;
	TimestampTz now;
	AdviceRow	row;

	walscale_require_preloaded();
	InitMaterializedSRF(fcinfo, 0);
	if (rsinfo->setDesc->natts != 8)
		elog(ERROR, "incorrect number of output arguments");

	/* this backend's own transactions count too */
	advice_publish_xacts();
	advice_wait_evidence(&w);

	if (!walscale_core_active)
	{
		TimestampTz since = walscale_stats_reset_time();

		now = GetCurrentTimestamp();
		advice_stock_insert_locks(&row, &w);
		advice_put(rsinfo, &row, since, now);

		row.setting = "walscale.insert_lock_attempts";
		row.current = pstrdup("0");
		row.recommended = NULL;
		row.needs_restart = true;
		row.evidence = w.text;
		row.reason = pstrdup("Conditional attempts need walscale's core patch, which this server lacks.");
		advice_put(rsinfo, &row, since, now);

		if (WALSCALE_HAS_FASTPATH_GROUPS)
			advice_stock_fastpath(&row, &w);
		else
			advice_no_fastpath_groups(&row, &w);
		advice_put(rsinfo, &row, since, now);
		return (Datum) 0;
	}

	walscale_advice_snapshot(&f);
	now = GetCurrentTimestamp();

	acquisitions = c[WALINSERT_FIRST_TRY] + c[WALINSERT_CONTENDED];
	contended = c[WALINSERT_CONTENDED];
	waits_per_1000 = acquisitions > 0 ?
		c[WALINSERT_BLOCKED] * 1000.0 / acquisitions : 0;
	contention = waits_per_1000 >= ADVICE_GROW_WAITS_PER_1000 &&
		f.counters.locks_used * 2 >= f.counters.nactive;
	/* locks active before a resize count as used: say so */
	locks_used_text = f.counters.resized ?
		psprintf("%d locks used since the reset, which resized them, %d active now",
				 f.counters.locks_used, f.counters.nactive) :
		psprintf("%d of %d active locks used", f.counters.locks_used, f.counters.nactive);

	/* walscale.insert_locks */
	row.setting = "walscale.insert_locks";
	row.current = psprintf("%d", walscale_insert_locks);
	row.needs_restart = false;
	row.evidence = psprintf("%llu acquisitions, %llu blocking waits (%.1f per 1000), %.1f ms blocked, %s; %s",
							(unsigned long long) acquisitions,
							(unsigned long long) c[WALINSERT_BLOCKED],
							waits_per_1000,
							c[WALINSERT_BLOCKED_NS] / 1000000.0,
							locks_used_text, w.text);
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
							  f.counters.nactive);
	}
	else if (contention && f.counters.nactive < max_locks)
	{
		row.recommended = psprintf("%d", Min(f.counters.nactive * 2, max_locks));
		row.reason = psprintf("Backends slept on %.1f of every 1000 acquisitions, at least %g, with most locks in use: more locks let more of them insert at once.",
							  waits_per_1000, ADVICE_GROW_WAITS_PER_1000);
	}
	else if (contention)
	{
		row.recommended = pstrdup(row.current);
		row.reason = psprintf("Backends slept on %.1f of every 1000 acquisitions, but %d locks are already the most that helps on %d CPUs.",
							  waits_per_1000, f.counters.nactive, walscale_auto_cpus());
	}
	else if (waits_per_1000 < ADVICE_SHRINK_WAITS_PER_1000 &&
			 f.counters.locks_used * 2 <= f.counters.nactive && f.counters.nactive > 1)
	{
		row.recommended = psprintf("%d", (int) pg_nextpower2_32((uint32) Max(f.counters.locks_used, 1)));
		row.reason = psprintf("Only %d of %d locks were taken, with %.1f blocking waits per 1000 acquisitions: fewer locks make each WAL flush and all-lock acquisition cheaper.",
							  f.counters.locks_used, f.counters.nactive, waits_per_1000);
	}
	else
	{
		row.recommended = pstrdup(row.current);
		row.reason = psprintf("%.1f blocking waits per 1000 acquisitions is below %g, and %d of %d locks are in use: the number fits the load.",
							  waits_per_1000, ADVICE_GROW_WAITS_PER_1000,
							  f.counters.locks_used, f.counters.nactive);
	}
	advice_put(rsinfo, &row, f.counters.stats_reset, now);

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
	else if (contention && XLogInsertLockAttempts == 0 && f.counters.nactive > 1)
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
		else if (f.counters.nactive == 1)
			row.reason = psprintf("With one lock there is no other lock to try, so the number of locks is the setting to change.");
		else
			row.reason = psprintf("Conditional attempts are on, and the number of locks is the setting to change.");
	}
	advice_put(rsinfo, &row, f.counters.stats_reset, now);

	/* walscale.fastpath_groups */
	if (!WALSCALE_HAS_FASTPATH_GROUPS)
	{
		advice_no_fastpath_groups(&row, &w);
		advice_put(rsinfo, &row, f.counters.stats_reset, now);
		return (Datum) 0;
	}
	row.setting = "walscale.fastpath_groups";
	row.current = psprintf("%d", groups);
	row.needs_restart = true;
	row.evidence = psprintf("%llu transactions, at most %u fast-path relation locks in one, %llu overflows; %d %s of %d slots%s",
							(unsigned long long) f.xacts, f.fastpath_max_slots,
							(unsigned long long) f.fastpath_overflows, groups,
							groups == 1 ? "group" : "groups",
							FP_LOCK_SLOTS_PER_GROUP,
							FastPathLockGroupsRequested != 0 ? "" :
							", from max_locks_per_transaction");
	if (f.xacts < ADVICE_MIN_XACTS)
	{
		row.recommended = NULL;
		row.reason = psprintf("Not enough data: %llu transactions since the last reset, and at least %d are needed.",
							  (unsigned long long) f.xacts, ADVICE_MIN_XACTS);
	}
	else
	{
		uint32		want = (f.fastpath_max_slots * ADVICE_FASTPATH_HEADROOM +
							FP_LOCK_SLOTS_PER_GROUP - 1) / FP_LOCK_SLOTS_PER_GROUP;
		int			rec = (int) Min(pg_nextpower2_32(Max(want, 1)),
									WALSCALE_FASTPATH_GROUPS_MAX);
		int			derived = advice_derived_fastpath_groups();
		double		span_s = (now - f.counters.stats_reset) / 1000000.0;

		/*
		 * Fewer groups only from a long span, and never fewer than
		 * PostgreSQL's own number: a setting that can only overflow sooner.
		 */
		if (rec < groups &&
			(span_s < ADVICE_FASTPATH_LOWER_SPAN_S || rec < derived))
		{
			row.recommended = pstrdup(row.current);
			if (span_s < ADVICE_FASTPATH_LOWER_SPAN_S)
				row.reason = psprintf("Transactions needed at most %u fast-path slots in %.0f s: fewer groups would be recommended only from at least %d s, as a restart to a setting that can only overflow sooner must rest on a long span.",
									  f.fastpath_max_slots, span_s,
									  ADVICE_FASTPATH_LOWER_SPAN_S);
			else
				row.reason = psprintf("Transactions needed at most %u fast-path slots, but %d %s, from max_locks_per_transaction, are the fewest to recommend.",
									  f.fastpath_max_slots, derived,
									  derived == 1 ? "group" : "groups");
		}
		else
		{
			row.recommended = psprintf("%d", rec);
			if (rec > groups)
				row.reason = psprintf("Transactions needed up to %u fast-path slots and %llu lock acquisitions overflowed: %d groups hold twice that, as headroom because relations hash to groups unevenly; it %s.",
									  f.fastpath_max_slots,
									  (unsigned long long) f.fastpath_overflows,
									  rec, advice_fastpath_cost(groups, rec));
			else if (rec < groups)
				row.reason = psprintf("Transactions needed at most %u fast-path slots: %d %s, the smallest power of two that holds twice that as headroom for uneven hashing, would have held them; it %s.",
									  f.fastpath_max_slots, rec,
									  rec == 1 ? "group" : "groups",
									  advice_fastpath_cost(groups, rec));
			else
				row.reason = psprintf("Transactions needed at most %u fast-path slots, and %d %s twice that, as headroom for uneven hashing.",
									  f.fastpath_max_slots, groups,
									  groups == 1 ? "group holds" : "groups hold");
		}
	}
	advice_put(rsinfo, &row, f.counters.stats_reset, now);

	return (Datum) 0;
}
