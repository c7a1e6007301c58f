/*-------------------------------------------------------------------------
 *
 * walscale_auto_rules.c
 *		Auto mode's rules: how many WAL insertion locks to start from, the
 *		bounds, and what to do with the number at the end of each window.
 *
 * At the end of each window, from its acquisitions, the acquisitions that
 * slept, the time slept, and how many of the active locks were taken at all:
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
 * Nothing here reads shared memory, the clock or a GUC (see the header).
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include "walscale_auto_rules.h"

/* The smallest power of two at or above n, for n from 1 to 2^31. */
static uint32
next_power_of_2(uint32 n)
{
	uint32		p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/*
 * One lock is enough for a single writer, on any number of CPUs; auto mode
 * may go down to it.
 */
int
walscale_rules_min_locks(int cpus)
{
	return 1;
}

/*
 * The most locks auto mode uses: 8 per CPU, a power of two, at least
 * PostgreSQL's 8.  Sokolov's 8-core laptop was fastest at 64 to 128 locks
 * with 200 and 400 clients ("Increase NUM_XLOGINSERT_LOCKS", pgsql-hackers,
 * Jan 2025); more locks than that only lengthen
 * flushes.
 */
int
walscale_rules_max_locks(int cpus, int stock_locks, int core_max_locks)
{
	int			n = (int) next_power_of_2((uint32) cpus * 8);

	return Min(Max(n, stock_locks), core_max_locks);
}

/*
 * The number auto mode starts with at server start: one lock per CPU,
 * rounded up to a power of two, never below PostgreSQL's 8.  On Greg Smith's
 * 24-core server 8 locks gave most of the gain over 1 and 24 locks about 10%
 * more ("Fixed xloginsert_locks for 9.4", pgsql-hackers, 2014): about one lock per core is where the gain stops, and 8
 * keeps stock behaviour on small machines.  Contention then grows it.
 */
int
walscale_rules_start_locks(int cpus, int stock_locks, int core_max_locks)
{
	int			n = Max((int) next_power_of_2((uint32) cpus), stock_locks);

	return Min(n, walscale_rules_max_locks(cpus, stock_locks, core_max_locks));
}

/*
 * Auto mode begins with current_locks in effect: forget the past windows,
 * and return the number to go on from.  More locks than the maximum come
 * down to it at once; fewer are left to the windows to judge.
 */
int
walscale_rules_begin(AutoRulesState *state, int current_locks, int max_locks)
{
	state->quiet_windows = 0;
	state->hot_windows = 0;
	state->quiet_needed = AUTO_QUIET_WINDOWS;
	state->last_shrink_from = 0;

	if (current_locks > max_locks)
		return max_locks;
	return current_locks;
}

/*
 * Judge a closed window: set the verdict's target (the active number when
 * it holds) and figures, and carry the streaks over to the next window.
 */
void
walscale_rules_decide(const AutoWindowFigures *window, AutoRulesState *state,
					  AutoVerdict *verdict)
{
	int			current = window->active_locks;
	int			min = window->min_locks;
	int			max = window->max_locks;
	int			locks_used = window->locks_used;
	uint64		acquisitions = window->acquisitions;
	double		waits_per_1000;
	double		blocked_ms_per_s;
	int			target = current;
	const char *reason = NULL;

	waits_per_1000 = acquisitions > 0 ?
		window->blocking_waits * 1000.0 / acquisitions : 0;
	blocked_ms_per_s = window->blocked_ns / 1000000.0 / window->window_s;

	if (acquisitions < AUTO_MIN_ACQUISITIONS)
	{
		/* too little to judge: neither grow nor count towards a shrink */
	}
	else if ((waits_per_1000 >= WALSCALE_GROW_WAITS_PER_1000 ||
			  blocked_ms_per_s >= AUTO_GROW_BLOCKED_MS_PER_S) &&
			 locks_used * 2 >= current)
	{
		state->quiet_windows = 0;
		/* one hot window may be a burst, or a preempted lock holder */
		if (current < max && ++state->hot_windows >= AUTO_HOT_WINDOWS)
		{
			target = Min(current * 2, max);
			reason = "contention";
			/* a grow that undoes a shrink: be slower to shrink next time */
			if (target == state->last_shrink_from)
				state->quiet_needed = Min(state->quiet_needed * 2,
										  AUTO_QUIET_WINDOWS_MAX);
		}
	}
	else if (waits_per_1000 < WALSCALE_SHRINK_WAITS_PER_1000 &&
			 blocked_ms_per_s < AUTO_SHRINK_BLOCKED_MS_PER_S &&
			 locks_used * 2 <= current && current > min)
	{
		state->hot_windows = 0;
		if (++state->quiet_windows >= state->quiet_needed)
		{
			/* never below a power of two that holds the locks in use */
			target = Max(Max(current / 2, min),
						 (int) next_power_of_2((uint32) Max(locks_used, 1)));
			if (target < current)
			{
				reason = "locks unused";
				state->last_shrink_from = current;
			}
			state->quiet_windows = 0;
		}
	}
	else
	{
		state->quiet_windows = 0;
		state->hot_windows = 0;
	}

	/* the next window starts afresh */
	if (target != current)
		state->hot_windows = 0;

	verdict->target = target;
	verdict->reason = reason;
	verdict->waits_per_1000 = waits_per_1000;
	verdict->blocked_ms_per_s = blocked_ms_per_s;
}
