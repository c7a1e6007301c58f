/*-------------------------------------------------------------------------
 *
 * walscale_auto_rules.c
 *		Auto mode's rules: the CPUs that count, how many WAL insertion locks
 *		to start from, the bounds, and what to do with the number at the end
 *		of each window.
 *
 * The signal is the share of active backend time spent asleep on the
 * insertion locks: the sleep summed over backends, divided by the window's
 * length and the mean number of active backends the wait sampler saw.  It
 * means the same with 2 backends as with 2000, on 2 CPUs as on 480.  At the
 * end of each window:
 *
 * - a grow on trial (the previous window's) is judged first: it is kept if
 *	 the sleep per acquisition did not rise and a running backend inserted
 *	 faster, by AUTO_KEEP_MIN_GAIN (or half the share before the grow, if
 *	 less).  The rate, not the share, is what decides: with far more
 *	 backends than locks the share is about 1 - locks / backends, and a
 *	 doubling that lifts throughput by a sixth moves it by two points.  A
 *	 grow that gained less than that, but AUTO_LOOK_AHEAD_PART of it, in a
 *	 window still contended, doubles once more on the same trial, judged
 *	 against the same window before the first doubling: while backends
 *	 share locks, the gain of a doubling grows with the number, so the
 *	 first may gain less than the margin though the next gains more.
 *	 Otherwise the grow (both doublings, after one more) is undone, and
 *	 the number it came from is a ceiling for a while: more locks do not
 *	 cure a wait behind a WAL write that a lock holder makes, nor the next
 *	 serial point (the reservation spinlock), and each lock costs every
 *	 flush and every all-lock acquisition.  A window whose load changed by
 *	 more than AUTO_TRIAL_MAX_LOAD_CHANGE keeps the grow untested;
 * - grow (double, up to the maximum and the ceiling) when the share is at or
 *	 above AUTO_GROW_BLOCKED_SHARE, over AUTO_MIN_WAITS sleeps or more, in
 *	 AUTO_HOT_WINDOWS windows in a row, or in one window right after a grow
 *	 that was kept (a ramp doubles every window);
 * - shrink (halve, down to the floor) after quiet_needed windows in a row
 *	 below AUTO_SHRINK_BLOCKED_SHARE, or idle, unless halving would make two
 *	 locks that were both used in the window one: backends that did not
 *	 share a lock would then share one;
 * - otherwise hold.
 *
 * A window with too little data breaks a contended streak and counts as
 * quiet.  A grow that undoes a shrink doubles the quiet windows the next
 * shrink needs (up to AUTO_QUIET_WINDOWS_MAX); that backoff halves again
 * after AUTO_BACKOFF_DECAY_S without another.  The ceiling's hold doubles
 * at each failure in a row, from AUTO_CEILING_HOLD_S up to
 * AUTO_CEILING_HOLD_MAX_S, and goes back to its start when a grow is kept.
 *
 * Nothing here reads shared memory, the clock or a GUC (see the header).
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include <math.h>

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

int
walscale_rules_cpus(int online, int affinity, double quota_cpus)
{
	int			n = 4096;

	/* nothing known: one CPU, whose bounds are PostgreSQL's 8 */
	if (online <= 0 && affinity <= 0 && quota_cpus <= 0)
		return 1;

	if (online > 0)
		n = Min(n, online);
	if (affinity > 0)
		n = Min(n, affinity);
	if (quota_cpus > 0)
		n = Min(n, (int) Max(ceil(quota_cpus), 1.0));
	return n;
}

/*
 * The floor: PostgreSQL's 8 unless the DBA set walscale.auto_min_locks
 * otherwise, and never above the maximum.
 */
int
walscale_rules_min_locks(int dba_min_locks, int max_locks)
{
	return Max(Min(dba_min_locks, max_locks), 1);
}

/*
 * The most locks auto mode uses: 8 per CPU, a power of two, at least
 * PostgreSQL's 8.  Sokolov's 8-core laptop was fastest at 64 to 128 locks
 * with 200 and 400 clients ("Increase NUM_XLOGINSERT_LOCKS", pgsql-hackers,
 * Jan 2025); the feedback rule stops short of the maximum where growing
 * stops helping.
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
 * more ("Fixed xloginsert_locks for 9.4", pgsql-hackers, 2014): about one
 * lock per core is where the gain stops, and 8 keeps stock behaviour on
 * small machines.
 */
int
walscale_rules_start_locks(int cpus, int stock_locks, int core_max_locks)
{
	int			n = Max((int) next_power_of_2((uint32) cpus), stock_locks);

	return Min(n, walscale_rules_max_locks(cpus, stock_locks, core_max_locks));
}

/*
 * Auto mode begins with current_locks in effect: forget the past windows,
 * and return the number to go on from, within the bounds.
 */
int
walscale_rules_begin(AutoRulesState *state, int current_locks, int min_locks,
					 int max_locks)
{
	memset(state, 0, sizeof(*state));
	state->quiet_needed = AUTO_QUIET_WINDOWS;
	state->ceiling_hold_s = AUTO_CEILING_HOLD_S;

	if (current_locks > max_locks)
		return max_locks;
	if (current_locks < min_locks)
		return min_locks;
	return current_locks;
}

/*
 * Whether halving from current to target would merge two locks that were
 * both in use: a backend's lock is its ProcNumber modulo the number, so lock
 * i joins lock i - target.  For a target that is not half (a floor that is
 * not a power of two), i modulo target is the approximation.  A lock is in
 * use with at least AUTO_MERGE_MIN_EVEN_SHARE of an even share of the
 * window's acquisitions: the bgwriter's standby snapshot every 15 s, alone
 * on a lock, shares nothing worth keeping apart.
 */
static bool
shrink_merges_used_locks(const uint64 *lock_acquisitions, int current,
						 int target, uint64 acquisitions)
{
	uint64		in_use = Max((uint64) (acquisitions * AUTO_MERGE_MIN_EVEN_SHARE /
									   current), 1);

	for (int i = target; i < current; i++)
	{
		if (lock_acquisitions[i] >= in_use &&
			lock_acquisitions[i % target] >= in_use)
			return true;
	}
	return false;
}

/*
 * Judge a closed window: set the verdict's target (the active number when
 * it holds) and figures, and carry the streaks, the trial and the ceiling
 * over to the next window.
 */
void
walscale_rules_decide(const AutoWindowFigures *window, AutoRulesState *state,
					  AutoVerdict *verdict)
{
	int			current = window->active_locks;
	int			min = window->min_locks;
	int			max = window->max_locks;
	double		backends = window->backends;
	double		window_s = window->window_s;
	uint64		acquisitions = window->acquisitions;
	bool		enough = acquisitions >= AUTO_MIN_ACQUISITIONS;
	bool		hot;
	bool		quiet;
	bool		kept_grow = false;
	double		share;
	double		load;
	double		runners;
	double		rate;
	double		wait_ns;
	int			locks_used = 0;
	int			limit;
	int			target = current;
	const char *reason = NULL;

	for (int i = 0; i < current; i++)
		if (window->lock_acquisitions[i] > 0)
			locks_used++;

	/* without samples, per CPU: what the backends that run can lose */
	share = window->blocked_ns / 1e9 / window_s /
		(backends > 0 ? backends : (double) window->cpus);
	/* a backend inserts only while it runs, and at most cpus run at once */
	load = backends > 0 ? backends : (double) window->cpus;
	runners = backends > 0 ? Min(backends, (double) window->cpus) :
		(double) window->cpus;
	rate = acquisitions / window_s / runners;
	wait_ns = acquisitions > 0 ? (double) window->blocked_ns / acquisitions : 0;
	hot = enough && window->blocking_waits >= AUTO_MIN_WAITS &&
		share >= AUTO_GROW_BLOCKED_SHARE;
	quiet = !enough || share < AUTO_SHRINK_BLOCKED_SHARE;

	verdict->waits_per_1000 = acquisitions > 0 ?
		window->blocking_waits * 1000.0 / acquisitions : 0;
	verdict->blocked_ms_per_s = window->blocked_ns / 1e6 / window_s;
	verdict->blocked_share = share;
	verdict->rate = rate;
	verdict->locks_used = locks_used;

	/* the ceiling and the backoff wear off with time, not with windows */
	if (state->ceiling > 0)
	{
		state->ceiling_left_s -= window_s;
		if (state->ceiling_left_s <= 0)
			state->ceiling = 0;
	}
	state->since_backoff_s += window_s;
	if (state->quiet_needed > AUTO_QUIET_WINDOWS &&
		state->since_backoff_s >= AUTO_BACKOFF_DECAY_S)
	{
		state->quiet_needed = Max(state->quiet_needed / 2, AUTO_QUIET_WINDOWS);
		state->since_backoff_s = 0;
	}
	state->since_shrink_s += window_s;

	/* the bounds moved (walscale.auto_min_locks reloaded): follow them */
	if (current < min || current > max)
	{
		verdict->target = current < min ? min : max;
		verdict->reason = current < min ? AUTO_REASON_FLOOR : AUTO_REASON_MAX;
		state->trial_from = 0;
		state->hot_windows = 0;
		state->quiet_windows = 0;
		return;
	}

	/* no grow beyond the maximum, nor the ceiling while it holds */
	limit = state->ceiling > 0 ? Min(max, state->ceiling) : max;

	/* judge the grow on trial; an idle window cannot, and keeps it */
	if (state->trial_from > 0)
	{
		int			from = state->trial_from;

		/*
		 * A first doubling goes to at most twice from; a look-ahead doubles a
		 * first doubling that was below the limit, so beyond twice from.
		 */
		bool		looked_ahead = current > 2 * from;

		state->trial_from = 0;
		if (enough && current > from &&
			fabs(load - state->trial_backends) <=
			AUTO_TRIAL_MAX_LOAD_CHANGE * state->trial_backends)
		{
			double		gain = Min(AUTO_KEEP_MIN_GAIN,
								   AUTO_KEEP_GAIN_OF_SHARE * state->trial_share);
			bool		no_more_sleep = wait_ns <= state->trial_wait_ns;

			if (no_more_sleep && rate >= state->trial_rate * (1.0 + gain))
			{
				kept_grow = true;
				state->ceiling_hold_s = AUTO_CEILING_HOLD_S;
			}
			else if (no_more_sleep &&
					 rate >= state->trial_rate * (1.0 + gain * AUTO_LOOK_AHEAD_PART) &&
					 hot && !looked_ahead && current < limit)
			{
				/*
				 * A gain under the margin, but a part of it, still contended:
				 * the gain of a doubling grows with the number while backends
				 * still share locks, so try one more, judged against the same
				 * baseline.
				 */
				target = Min(current * 2, limit);
				reason = AUTO_REASON_LOOK_AHEAD;
				state->trial_from = from;
				state->hot_windows = 0;
			}
			else
			{
				target = Max(from, min);
				reason = AUTO_REASON_UNDO;
				state->ceiling = target;
				state->ceiling_left_s = state->ceiling_hold_s;
				state->ceiling_hold_s = Min(state->ceiling_hold_s * 2,
											AUTO_CEILING_HOLD_MAX_S);
				state->hot_windows = 0;
				state->quiet_windows = 0;
			}
		}
	}

	if (reason != NULL)
	{
		/* undone, or one more doubling on trial: no streak carries over */
	}
	else if (hot)
	{
		state->quiet_windows = 0;
		/* one hot window may be a burst, unless a kept grow preceded it */
		state->hot_windows = kept_grow ? AUTO_HOT_WINDOWS :
			state->hot_windows + 1;
		if (current < limit && state->hot_windows >= AUTO_HOT_WINDOWS)
		{
			target = Min(current * 2, limit);
			reason = AUTO_REASON_GROW;
			state->trial_from = current;
			state->trial_share = share;
			state->trial_rate = rate;
			state->trial_backends = load;
			state->trial_wait_ns = wait_ns;
			state->hot_windows = 0;

			/*
			 * A grow that undoes a recent shrink: be slower to shrink next
			 * time.  One long after is a new load, not a swing.
			 */
			if (target == state->last_shrink_from &&
				state->since_shrink_s < AUTO_BACKOFF_DECAY_S)
			{
				state->quiet_needed = Min(state->quiet_needed * 2,
										  AUTO_QUIET_WINDOWS_MAX);
				state->since_backoff_s = 0;
			}
		}
	}
	else if (quiet)
	{
		state->hot_windows = 0;
		if (current > min && ++state->quiet_windows >= state->quiet_needed)
		{
			int			half = Max(current / 2, min);

			if (!shrink_merges_used_locks(window->lock_acquisitions,
										  current, half, acquisitions))
			{
				target = half;
				reason = AUTO_REASON_SHRINK;
				state->last_shrink_from = current;
				state->since_shrink_s = 0;
			}
			state->quiet_windows = 0;
		}
	}
	else
	{
		state->quiet_windows = 0;
		state->hot_windows = 0;
	}

	verdict->target = target;
	verdict->reason = reason;
}
