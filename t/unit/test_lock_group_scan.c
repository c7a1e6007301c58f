/*-------------------------------------------------------------------------
 *
 * test_lock_group_scan.c
 *		Unit test of WALInsertLockNextHeld(), the scan by which a WAL flush
 *		visits only the groups of insertion locks in use (core patch 0006):
 *		compared with a plain scan of every lock, over group words, held
 *		locks, start positions and numbers of active locks, at the edges of
 *		groups and of the two words of groups, then at random.  Prints TAP.
 *
 * The function is not copied here: t/025_lock_group_scan.pl extracts it,
 * with the definitions it uses, from the xlog.c of the tested server's build
 * tree into lock_group_scan.c, which defines lock_group_scan() to call it;
 * so a change to the function, or a mutation planted in it by make mutate,
 * is what runs.  LWLockFirstHeldExclusive() is replaced by the stub below,
 * which reads the held[] array instead of lock states and checks what the
 * scan asks of it: a range of the active locks (no address past them
 * formed), inside one group that is set, at or after the scan's start.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <stdarg.h>
#include <stdlib.h>

#include "unit_tap.h"

/* from lock_group_scan.c */
typedef union LWLockPadded LWLockPadded;
extern int	lock_group_scan(const uint64 *groups, int start, int nlocks);
extern const int lock_group_scan_locks_per_group;
extern const int lock_group_scan_max_locks;
extern LWLockPadded *WALInsertLocks;

#define MAX_LOCKS 1024			/* XLOG_INSERT_LOCKS_MAX, checked below */
#define GROUP_WORDS 2

union LWLockPadded
{
	char		pad[128];
};

static LWLockPadded lock_slots[MAX_LOCKS];
LWLockPadded *WALInsertLocks = lock_slots;

static bool held[MAX_LOCKS];

/* what the current scan may ask of the stub */
static const uint64 *cur_groups;
static int	cur_start;
static int	cur_nlocks;
static char violation[256];


static bool
group_set(const uint64 *groups, int group)
{
	return (groups[group / 64] >> (group % 64)) & 1;
}

/*
 * The stub of LWLockFirstHeldExclusive(locks, start, nlocks): the first held
 * lock of locks[start .. nlocks - 1], or nlocks.  It records the first call
 * that reads outside what the scan may read.
 */
int			LWLockFirstHeldExclusive(LWLockPadded *locks, int start, int nlocks);

int
LWLockFirstHeldExclusive(LWLockPadded *locks, int start, int nlocks)
{
	int			per = lock_group_scan_locks_per_group;
	int			i;

	if (violation[0] == '\0')
	{
		if (locks != WALInsertLocks)
			snprintf(violation, sizeof(violation), "called on another array");
		else if (start < cur_start || start > nlocks || nlocks > cur_nlocks)
			snprintf(violation, sizeof(violation),
					 "asked for locks %d to %d, with the scan from %d below %d",
					 start, nlocks, cur_start, cur_nlocks);
		else if (start < nlocks &&
				 (start / per != (nlocks - 1) / per ||
				  !group_set(cur_groups, start / per)))
			snprintf(violation, sizeof(violation),
					 "asked for locks %d to %d, not in one group that is set",
					 start, nlocks);
	}
	/* clamp, so that a bad range reads nothing outside held[] */
	for (i = Max(start, 0); i < Min(nlocks, MAX_LOCKS); i++)
		if (held[i])
			return i;
	return nlocks;
}

/* the plain scan: every lock from start on, below nlocks */
static int
plain_scan(const uint64 *groups, int start, int nlocks)
{
	int			per = lock_group_scan_locks_per_group;
	int			i;

	for (i = start; i < nlocks; i++)
		if (held[i] && group_set(groups, i / per))
			return i;
	return nlocks;
}

static long cases = 0;
static long mismatches = 0;
static long violations = 0;
static char first_failure[512];

/*
 * One scan; with 'follow', all the scans a flush would make from its result
 * on, as WaitXLogInsertionsToFinish() does.
 */
static void
check(const uint64 *groups, int start, int nlocks, bool follow)
{
	for (;;)
	{
		int			got;
		int			want;

		cur_groups = groups;
		cur_start = start;
		cur_nlocks = nlocks;
		violation[0] = '\0';
		got = lock_group_scan(groups, start, nlocks);
		want = plain_scan(groups, start, nlocks);
		cases++;
		if (got != want || violation[0] != '\0')
		{
			if (got != want)
				mismatches++;
			if (violation[0] != '\0')
				violations++;
			if (first_failure[0] == '\0')
				snprintf(first_failure, sizeof(first_failure),
						 "groups %016llx %016llx, nlocks %d, start %d: got %d, plain scan %d%s%s",
						 (unsigned long long) groups[0],
						 (unsigned long long) groups[1],
						 nlocks, start, got, want,
						 violation[0] ? "; " : "", violation);
			return;
		}
		if (!follow || want >= nlocks)
			return;
		start = want + 1;
	}
}

static uint64 rng_state = UINT64CONST(0x9E3779B97F4A7C15);

static uint64
rnd(void)
{
	/* xorshift64*, deterministic */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64CONST(2685821657736338717);
}

static int
rnd_below(int n)
{
	return (int) (rnd() % (uint64) n);
}

/* a word whose bits are each set with probability 1 / (1 << sparsity) */
static uint64
rnd_word(int sparsity)
{
	uint64		w = ~UINT64CONST(0);
	int			i;

	for (i = 0; i < sparsity; i++)
		w &= rnd();
	return w;
}

static void
set_held(int kind, int nlocks_alloc)
{
	int			i;

	for (i = 0; i < MAX_LOCKS; i++)
	{
		switch (kind)
		{
			case 0:
				held[i] = false;
				break;
			case 1:
				held[i] = true;
				break;
			case 2:
				held[i] = rnd_below(16) == 0;
				break;
			default:
				held[i] = rnd_below(2) == 0;
				break;
		}
	}
	(void) nlocks_alloc;
}

int
main(void)
{
	/* lock counts at the edges of groups and of the words of groups */
	static const int edge_nlocks[] = {
		1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257,
		504, 505, 511, 512, 513, 519, 520, 521, 1000, 1015, 1016, 1017,
		1023, 1024
	};

	/* single locks held at the same edges */
	static const int edge_locks[] = {
		0, 1, 6, 7, 8, 9, 63, 64, 503, 504, 505, 510, 511, 512, 513,
		519, 520, 1015, 1016, 1017, 1022, 1023
	};
	uint64		words[][GROUP_WORDS] = {
		{0, 0},
		{~UINT64CONST(0), ~UINT64CONST(0)},
		{UINT64CONST(1), 0},
		{UINT64CONST(1) << 63, 0},
		{0, UINT64CONST(1)},
		{0, UINT64CONST(1) << 63},
		{UINT64CONST(1) << 63, UINT64CONST(1)},
		{UINT64CONST(0x5555555555555555), UINT64CONST(0xAAAAAAAAAAAAAAAA)},
		{~UINT64CONST(0), 0},
		{0, ~UINT64CONST(0)},
		{UINT64CONST(0x8000000000000001), UINT64CONST(0x8000000000000001)},
	};
	int			w;
	int			n;
	int			s;
	int			h;
	long		edge_cases;
	int			iter;

	printf("1..5\n");

	ok(lock_group_scan_max_locks == MAX_LOCKS &&
	   lock_group_scan_locks_per_group * 64 * GROUP_WORDS >= MAX_LOCKS,
	   "the server's maximum of locks (%d) and groups of %d fit this test's arrays",
	   lock_group_scan_max_locks, lock_group_scan_locks_per_group);

	/*
	 * Edges: every group word pattern, every edge count, every start from 0
	 * to nlocks, with no lock, every lock, and each edge lock alone held.
	 */
	for (w = 0; w < lengthof(words); w++)
		for (n = 0; n < lengthof(edge_nlocks); n++)
		{
			int			nlocks = edge_nlocks[n];

			for (h = -2; h < (int) lengthof(edge_locks); h++)
			{
				int			i;

				for (i = 0; i < MAX_LOCKS; i++)
					held[i] = (h == -1);
				if (h >= 0)
					held[edge_locks[h]] = true;
				for (s = 0; s <= nlocks; s++)
					check(words[w], s, nlocks, false);
			}
		}
	edge_cases = cases;
	ok(mismatches == 0 && violations == 0,
	   "edges: %ld scans of %d group words, %d lock counts, every start, %d held sets agree with the plain scan%s%s",
	   edge_cases, (int) lengthof(words), (int) lengthof(edge_nlocks),
	   (int) lengthof(edge_locks) + 2,
	   first_failure[0] ? ": first failure: " : "", first_failure);

	/* at random: words of any density, any count, any start, held sets */
	first_failure[0] = '\0';
	mismatches = violations = 0;
	for (iter = 0; iter < 200000; iter++)
	{
		uint64		g[GROUP_WORDS];
		int			nlocks;
		int			start;

		g[0] = rnd_word(rnd_below(7));
		g[1] = rnd_word(rnd_below(7));
		if (rnd_below(4) == 0)
			g[rnd_below(2)] = 0;
		nlocks = (rnd_below(3) == 0) ?
			edge_nlocks[rnd_below(lengthof(edge_nlocks))] :
			1 + rnd_below(MAX_LOCKS);
		start = rnd_below(nlocks + 1);
		set_held(rnd_below(4), nlocks);
		check(g, start, nlocks, true);
	}
	ok(mismatches == 0 && violations == 0,
	   "random: %ld scans agree with the plain scan%s%s",
	   cases - edge_cases, first_failure[0] ? ": first failure: " : "",
	   first_failure);

	/*
	 * Bits of groups past the active locks, as a flush finds them after a
	 * lowering of the number of locks: the scan must stop at nlocks without
	 * forming the address of a lock past it (the stub's range check).
	 */
	first_failure[0] = '\0';
	mismatches = violations = 0;
	for (n = 0; n < lengthof(edge_nlocks); n++)
	{
		uint64		all[GROUP_WORDS] = {~UINT64CONST(0), ~UINT64CONST(0)};
		int			nlocks = edge_nlocks[n];
		int			i;

		for (i = 0; i < MAX_LOCKS; i++)
			held[i] = false;
		for (s = 0; s <= nlocks; s++)
			check(all, s, nlocks, false);
	}
	ok(violations == 0 && mismatches == 0,
	   "groups set past the active locks: no lock past nlocks asked for%s%s",
	   first_failure[0] ? ": first failure: " : "", first_failure);

	/*
	 * A lock held in the group of the start but before it is not returned,
	 * and the second word of groups is reached from the first.
	 */
	{
		uint64		g[GROUP_WORDS] = {UINT64CONST(1), UINT64CONST(1)};
		int			i;

		for (i = 0; i < MAX_LOCKS; i++)
			held[i] = false;
		held[3] = true;
		held[512] = true;
		ok(lock_group_scan(g, 4, MAX_LOCKS) == 512 &&
		   lock_group_scan(g, 0, MAX_LOCKS) == 3 &&
		   lock_group_scan(g, 513, MAX_LOCKS) == MAX_LOCKS,
		   "from lock 4, lock 3 of the same group is skipped and lock 512 of the second word found");
	}

	return tests_failed > 0 ? 1 : 0;
}
