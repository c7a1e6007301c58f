/*-------------------------------------------------------------------------
 *
 * walscale_auto_rules.c
 *		Auto mode's rules: the CPUs that count, how many WAL insertion locks
 *		to start from, the bounds, and what to do with the number at the end
 *		of each window.
 *
 * This comment is where each rule and constant is argued; the header names
 * them, and docs/auto-mode.md describes the behaviour.
 *
 * One mechanism: the paired probe.  Auto mode holds a number of locks and,
 * now and then, measures a neighbour against it in time order A-B-A: the
 * AUTO_PROBE_WINDOWS windows just before (A), as many at twice or half the
 * number (B), and as many back at the number (A again); the first window
 * after each change is not measured, since backends that were queued for
 * the old locks are still draining.  The gain is
 *
 *		g = mean log rate (B) - (mean log rate (A before) + mean (A after)) / 2
 *
 * A drift of the load that is linear over the probe cancels out, and so does
 * any noise slower than the probe.  The rate is insertions per second per
 * running backend (the fewer of the active backends and the CPUs): time no
 * longer asleep on a lock should become inserting, and beyond the CPU count
 * only throughput can rise.  The blocked share (the share of active backend
 * time asleep on the insertion locks) is no measure of a gain: with far more
 * backends than locks it sits near 1 - locks / backends, and in 18 a backend
 * that replaces a WAL buffer page waits for the WAL write holding its lock,
 * so more locks move that wait without moving the rate.
 *
 * The noise is measured where it acts, on the probe's own geometry: while
 * no probe runs, every AUTO_PROBE_SPAN windows in a row at one number give a
 * null probe, g computed as above on windows where nothing changed.  The
 * noise is a moving mean of |g| over them (weight AUTO_NOISE_WEIGHT, 1/32:
 * about the last 32 windows' worth of null probes, which overlap), and its
 * deviation sqrt(pi / 2) times that.  Independent, correlated (AR(1)),
 * periodic (a checkpoint's dip) and heavy-tailed noise each show in the null
 * probes as much as in a real one, so none needs a model of its own: a
 * margin taken from the spread of consecutive windows understates noise that
 * persists across windows, and let correlated noise walk the number up.
 * Until AUTO_PROBE_WINDOWS null probes are in, nothing is probed.
 *
 * - AUTO_PROBE_WINDOWS, 6: a minute of 10-s windows a phase, a probe about
 *	 2.5 minutes.  For independent noise of deviation s a window, g has a
 *	 deviation of s sqrt(1.5 / 6): 2.5% at s = 5%, so a gain of 6% is told
 *	 from nothing at AUTO_PROBE_Z.  Longer probes see smaller gains but pay
 *	 longer at a worse number when the neighbour is worse (a halving below
 *	 the knee can cost a third of the rate for its phase).
 * - AUTO_PROBE_Z, 2.5: a grow that gains nothing is kept by noise in about
 *	 one probe in 160; a probe that way is tried at most once an hour when it
 *	 keeps failing (below), so a useless grow is kept about once in a week,
 *	 and the next halving probe takes it back.
 * - AUTO_MIN_GAIN, 2%: a grow is kept only past this, however quiet the
 *	 noise: Sokolov's 128 to 256 locks gave 2% at 200 clients ("Increase
 *	 NUM_XLOGINSERT_LOCKS", pgsql-hackers, Jan 2025), about what a doubling
 *	 costs flushes and all-lock acquisitions.  A halving is kept when its
 *	 gain is at least one deviation of the probe's noise less half of
 *	 AUTO_MIN_GAIN.  Without noise a tie goes to fewer (fewer locks cost
 *	 every flush and all-lock acquisition less), and a halving that loses
 *	 under 1% is kept.  With noise it must show evidence: a point estimate
 *	 alone keeps a halving that costs 4% about one time in nine at a
 *	 deviation of 2.5%, and from there a grow back that gains the same 4%
 *	 is kept less often, so noise walks the number down below the knee.  The
 *	 price: under heavy noise (a checkpoint's dip over a whole phase) a
 *	 start above the best comes down slowly, which t/020's grid shows.
 *
 * When to probe.  Twice the number, while contended: the blocked share, as
 * a moving mean over about a phase, at or above AUTO_GROW_BLOCKED_SHARE.
 * Half the number, always (above the floor).  When both are due, they take
 * turns, the first being the halving: the start is derived from the CPU
 * count, not measured, and on a many-core server it is 128 or 512 locks.
 *
 * - AUTO_GROW_BLOCKED_SHARE, 5%: a grow can win back at most the share
 *	 blocked, and a doubling is not free (each all-lock acquisition takes
 *	 every active lock; each flush visits the groups of 8 that insertions
 *	 used).  walscale_advice's insert_locks row uses the same share.
 * - AUTO_MIN_ACQUISITIONS, 500: a window with fewer is idle.  It measures
 *	 nothing, breaks the run of windows a null probe needs, and ends a probe
 *	 (abandoned: back to the number it came from, nothing learnt).
 *
 * The load.  A-B-A cancels a drift, not a step, so the load (the active
 * backends) is compared as means of phases: a phase whose mean is
 * AUTO_CONTEXT_CHANGE times more or fewer than the phase before the probe
 * ends the probe as an idle window does, and a run whose three phases'
 * means are not within it of each other gives no null probe.  A probe
 * begins only on a whole run that held still (AUTO_PROBE_SPAN windows, 200
 * s of 10-s windows), so that a burst shorter than a probe does not start
 * one it cannot finish; right after a kept probe, on a phase's windows,
 * since the load held still through the probe (a ramp's climb then takes a
 * probe and a phase per doubling).
 *
 * The step.  A probe that failed one way is followed, that way, by one two
 * doublings (or halvings) away, then one again, in turn: the rate is not
 * always monotonic in the number (in the simulator at 16 CPUs and 500
 * unpooled clients, 525, 521, 557 and 637 tps at 16, 32, 64 and 128 locks),
 * and single steps stop at such a dip for good.  No constant: the step
 * alternates.
 *
 * The holds.  A probe that failed one way holds that way for AUTO_HOLD_S
 * (10 minutes), doubled at each further failure up to AUTO_HOLD_MAX_S (45
 * minutes); a probe kept one way clears that way's hold and holds the other
 * way for AUTO_HOLD_S, since the way back was just shown worse.  A steady
 * load at its best therefore probes each way every 10, 20, 40 and then 45
 * minutes: about 6 changes an hour, each a resize that holds all locks for
 * microseconds and makes inserters wait at most about 25 ms for them (the
 * resize figures in bench/results: 0.007 ms held at the median, 0.12 ms at
 * most under load, after waiting up to 25 ms).  The cap is what lets auto
 * mode follow a load whose best number moved while nothing it measures at
 * its number did (a connection pool whose mix of work changed): within 45
 * minutes it probes again, and with the probe's own 2.5 within the hour.
 * - AUTO_CONTEXT_CHANGE, 2: a hold belongs to the load it was learnt under,
 *	 told by the blocked share of the probes that failed (their lowest and
 *	 highest).  When the moving share rises above AUTO_CONTEXT_CHANGE times
 *	 the highest, the grow's hold is lifted; when it falls below the lowest
 *	 over it, the halving's.  A lift does not shorten the hold: a probe that
 *	 fails again doubles it and widens the range, so a load that swings
 *	 between two contexts (a checkpoint's dip and its recovery) lifts a hold
 *	 at most once for each.
 *
 * The bounds.  The floor is PostgreSQL's 8 (walscale.auto_min_locks for a
 * DBA who wants fewer); the start one lock per CPU, the maximum 8 per CPU
 * (walscale_rules_start_locks() and walscale_rules_max_locks() argue them).
 * A number outside them moves to the bound at once, ending any probe.
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
	state->share = -1;			/* none measured yet */
	/* no hold has a context yet */
	state->up.share_low = state->up.share_high = -1;
	state->down.share_low = state->down.share_high = -1;
	/* the start was derived, not measured: its halving is probed first */
	state->last_probe_up = true;

	if (current_locks > max_locks)
		return max_locks;
	if (current_locks < min_locks)
		return min_locks;
	return current_locks;
}

/* ---- the run of windows at the number in effect ---- */

static double run_mean_of(const double *values, int first, int n);

/* the mean load of the run's newest AUTO_PROBE_WINDOWS, a phase's */
static double
newest_phase_load(const AutoRulesState *state)
{
	return run_mean_of(state->run_load, state->run_windows - AUTO_PROBE_WINDOWS,
					   AUTO_PROBE_WINDOWS);
}

/* whether load is another load than mean: AUTO_CONTEXT_CHANGE times apart */
static bool
load_stepped(double load, double mean)
{
	return mean > 0 &&
		(load > mean * AUTO_CONTEXT_CHANGE || load < mean / AUTO_CONTEXT_CHANGE);
}

/*
 * Add a window to the run at the number in effect; true if it is measured.
 * The first window at a number is not (the backends queued for the old
 * locks are draining), and an idle one breaks the run.
 */
static bool
run_add(AutoRulesState *state, int locks, bool enough, double rate,
		double load, double share)
{
	if (locks != state->run_locks)
	{
		state->run_locks = locks;
		state->run_windows = 0;
		return false;
	}
	if (!enough)
	{
		state->run_windows = 0;
		return false;
	}
	if (state->run_windows == AUTO_PROBE_SPAN)
	{
		memmove(state->run_log_rate, state->run_log_rate + 1,
				sizeof(double) * (AUTO_PROBE_SPAN - 1));
		memmove(state->run_load, state->run_load + 1,
				sizeof(double) * (AUTO_PROBE_SPAN - 1));
		memmove(state->run_share, state->run_share + 1,
				sizeof(double) * (AUTO_PROBE_SPAN - 1));
		state->run_windows--;
	}
	state->run_log_rate[state->run_windows] = log(rate);
	state->run_load[state->run_windows] = load;
	state->run_share[state->run_windows] = share;
	state->run_windows++;
	return true;
}

/* the mean of n of the run's values (one of its arrays), from the first'th */
static double
run_mean_of(const double *values, int first, int n)
{
	double		sum = 0;

	for (int i = first; i < first + n; i++)
		sum += values[i];
	return sum / n;
}

/* the mean log rate of n windows of the run, from the first'th */
static double
run_mean(const AutoRulesState *state, int first, int n)
{
	return run_mean_of(state->run_log_rate, first, n);
}

/*
 * A null probe on the newest AUTO_PROBE_SPAN windows, none of them after a
 * change: the gain a probe would have measured had B been the number in
 * effect, each phase after a window left out as a probe leaves one.
 */
static double
run_null_gain(const AutoRulesState *state)
{
	int			k = AUTO_PROBE_WINDOWS;

	return run_mean(state, k + 1, k) -
		(run_mean(state, 0, k) + run_mean(state, 2 * k + 2, k)) / 2;
}

/*
 * Whether the load held still over the newest AUTO_PROBE_SPAN windows: the
 * mean loads of a null probe's three phases within AUTO_CONTEXT_CHANGE of
 * each other.  Loads are compared as means: a window's count of active
 * backends wanders far from the next's (on a 2-core VM, from 9 to 4 under
 * 32 steady clients).
 */
static bool
run_still(const AutoRulesState *state)
{
	int			k = AUTO_PROBE_WINDOWS;
	double		before = run_mean_of(state->run_load, 0, k);

	return state->run_windows == AUTO_PROBE_SPAN &&
		!load_stepped(run_mean_of(state->run_load, k + 1, k), before) &&
		!load_stepped(run_mean_of(state->run_load, 2 * k + 2, k), before);
}

/* the deviation of a probe's gain, from the mean |g| of null probes */
static double
noise_deviation(const AutoRulesState *state)
{
	return state->noise * sqrt(M_PI / 2);
}

/* ---- holds ---- */

static void
hold_tick(AutoHold *hold, double window_s)
{
	if (hold->left_s > 0)
		hold->left_s -= window_s;
}

/* a probe this way failed, with share blocked at the number it left */
static void
hold_fail(AutoHold *hold, double share)
{
	if (hold->share_high < 0)
	{
		hold->share_low = share;
		hold->share_high = share;
	}
	else
	{
		hold->share_low = Min(hold->share_low, share);
		hold->share_high = Max(hold->share_high, share);
	}
	hold->length_s = hold->length_s > 0 ?
		Min(hold->length_s * 2, AUTO_HOLD_MAX_S) : AUTO_HOLD_S;
	hold->left_s = hold->length_s;
	/* the next probe this way goes one step further, the one after not */
	hold->far = !hold->far;
}

/*
 * A probe the other way was kept: this way was just shown worse, so it holds
 * for AUTO_HOLD_S, learnt under the blocked share the probe measured at the
 * number it keeps; no failure this way is counted, so one that follows
 * holds for AUTO_HOLD_S again.
 */
static void
hold_after_keep(AutoHold *hold, double share)
{
	hold->length_s = 0;
	hold->left_s = AUTO_HOLD_S;
	hold->share_low = share;
	hold->share_high = share;
	hold->far = false;
}

/* ---- the decision ---- */

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
	bool		measured;
	bool		up;
	bool		far;
	double		share;
	double		runners;
	double		rate;
	double		load;
	int			locks_used = 0;

	for (int i = 0; i < current; i++)
		if (window->lock_acquisitions[i] > 0)
			locks_used++;

	/* without samples, per CPU: what the backends that run can lose */
	share = window->blocked_ns / 1e9 / window_s /
		(backends > 0 ? backends : (double) window->cpus);
	share = Min(share, 1.0);
	/* a backend inserts only while it runs, and at most cpus run at once */
	runners = backends > 0 ? Min(backends, (double) window->cpus) :
		(double) window->cpus;
	rate = acquisitions / window_s / Max(runners, 1e-9);
	/* the load: the active backends, or the CPUs when none were sampled */
	load = backends > 0 ? backends : (double) window->cpus;

	verdict->target = current;
	verdict->reason = NULL;
	verdict->waits_per_1000 = acquisitions > 0 ?
		window->blocking_waits * 1000.0 / acquisitions : 0;
	verdict->blocked_ms_per_s = window->blocked_ns / 1e6 / window_s;
	verdict->blocked_share = share;
	verdict->rate = rate;
	verdict->locks_used = locks_used;
	verdict->judged = false;
	verdict->gain = 0;

	hold_tick(&state->up, window_s);
	hold_tick(&state->down, window_s);

	/* the bounds moved (walscale.auto_min_locks reloaded): follow them */
	if (current < min || current > max)
	{
		verdict->target = current < min ? min : max;
		verdict->reason = current < min ? AUTO_REASON_FLOOR : AUTO_REASON_MAX;
		verdict->spread = noise_deviation(state);
		state->phase = AUTO_PROBE_NONE;
		state->kept = false;
		state->run_locks = 0;
		return;
	}

	/*
	 * A number the probe did not ask for, or bounds that no longer hold the
	 * number it probes, end it unjudged
	 */
	if (state->phase != AUTO_PROBE_NONE &&
		(current != (state->phase == AUTO_PROBE_AWAY ?
					 state->probe_to : state->probe_from) ||
		 state->probe_to < min || state->probe_to > max))
		state->phase = AUTO_PROBE_NONE;

	measured = run_add(state, current, enough, rate, load, share);
	/* an idle window: the load did not hold still through it */
	if (!enough)
		state->kept = false;
	/* the blocked share now: the mean of the run's newest phase */
	if (measured)
		state->share = run_mean_of(state->run_share, state->run_windows -
								   Min(state->run_windows, AUTO_PROBE_WINDOWS),
								   Min(state->run_windows, AUTO_PROBE_WINDOWS));

	/* a null probe, while none is under way */
	if (measured && state->phase == AUTO_PROBE_NONE && run_still(state))
	{
		double		weight;

		state->noise_samples++;
		weight = Max(AUTO_NOISE_WEIGHT, 1.0 / state->noise_samples);
		state->noise += weight * (fabs(run_null_gain(state)) - state->noise);
	}
	verdict->spread = noise_deviation(state);

	if (state->phase != AUTO_PROBE_NONE &&
		(!enough ||
		 (measured && state->run_windows == AUTO_PROBE_WINDOWS &&
		  load_stepped(newest_phase_load(state), state->probe_load))))
	{
		/*
		 * An idle window, or a phase at another load: the probe can measure
		 * nothing more that compares with what it began with, and ends
		 * unjudged
		 */
		if (state->phase == AUTO_PROBE_AWAY)
		{
			verdict->target = state->probe_from;
			verdict->reason = AUTO_REASON_ABANDON;
		}
		state->phase = AUTO_PROBE_NONE;
		state->kept = false;
		return;
	}

	/*
	 * A phase of a probe is the run at its number: the run began again at the
	 * change, and an idle window ends the probe, so the phase is complete when
	 * the run has AUTO_PROBE_WINDOWS windows.
	 */
	if (state->phase != AUTO_PROBE_NONE &&
		(!measured || state->run_windows < AUTO_PROBE_WINDOWS))
		return;

	if (state->phase == AUTO_PROBE_AWAY)
	{
		state->probe_away = run_mean(state, 0, AUTO_PROBE_WINDOWS);
		state->probe_away_share = state->share;
		state->phase = AUTO_PROBE_BACK;
		verdict->target = state->probe_from;
		verdict->reason = AUTO_REASON_PROBE_BACK;
		return;
	}

	if (state->phase == AUTO_PROBE_BACK)
	{
		double		gain;
		bool		keep;

		state->probe_back = run_mean(state, 0, AUTO_PROBE_WINDOWS);
		/* the blocked share at the number, before and after */
		state->probe_share = (state->probe_share + state->share) / 2;
		state->phase = AUTO_PROBE_NONE;
		up = state->probe_to > state->probe_from;
		gain = state->probe_away -
			(state->probe_before + state->probe_back) / 2;
		verdict->judged = true;
		verdict->gain = gain;
		if (up)
			keep = gain >= Max(AUTO_MIN_GAIN,
							   AUTO_PROBE_Z * noise_deviation(state));
		else
			keep = gain >= noise_deviation(state) - AUTO_MIN_GAIN / 2;
		if (!keep)
		{
			hold_fail(up ? &state->up : &state->down, state->probe_share);
			return;
		}
		if (up)
		{
			memset(&state->up, 0, sizeof(state->up));
			state->up.share_low = state->up.share_high = -1;
			hold_after_keep(&state->down, state->probe_away_share);
		}
		else
		{
			memset(&state->down, 0, sizeof(state->down));
			state->down.share_low = state->down.share_high = -1;
			hold_after_keep(&state->up, state->probe_away_share);
		}
		state->kept = true;
		verdict->target = state->probe_to;
		verdict->reason = up ? AUTO_REASON_KEEP_MORE : AUTO_REASON_KEEP_FEWER;
		return;
	}

	/* no probe under way: begin one if a neighbour is due */
	if (!measured || state->noise_samples < AUTO_PROBE_WINDOWS ||
		!(state->kept ? state->run_windows >= AUTO_PROBE_WINDOWS :
		  run_still(state)))
		return;

	/* a hold learnt under another load is lifted */
	if (state->up.share_high >= 0 && state->up.left_s > 0 &&
		state->share > state->up.share_high * AUTO_CONTEXT_CHANGE)
		state->up.left_s = 0;
	if (state->down.share_low >= 0 && state->down.left_s > 0 &&
		state->share < state->down.share_low / AUTO_CONTEXT_CHANGE)
		state->down.left_s = 0;

	{
		bool		up_due = current < max && state->up.left_s <= 0 &&
			state->share >= AUTO_GROW_BLOCKED_SHARE;
		bool		down_due = current > min && state->down.left_s <= 0;

		if (!up_due && !down_due)
			return;
		up = up_due && (!down_due || !state->last_probe_up);
	}

	state->phase = AUTO_PROBE_AWAY;
	state->kept = false;
	state->probe_from = current;
	far = up ? state->up.far : state->down.far;
	if (up)
		state->probe_to = Min(current * (far ? 4 : 2), max);
	else
		state->probe_to = Max(current / (far ? 4 : 2), min);
	state->probe_before = run_mean(state, state->run_windows - AUTO_PROBE_WINDOWS,
								   AUTO_PROBE_WINDOWS);
	state->probe_share = state->share;
	state->probe_load = newest_phase_load(state);
	state->last_probe_up = up;
	verdict->target = state->probe_to;
	if (far)
		verdict->reason = up ? AUTO_REASON_PROBE_UP_FAR : AUTO_REASON_PROBE_DOWN_FAR;
	else
		verdict->reason = up ? AUTO_REASON_PROBE_UP : AUTO_REASON_PROBE_DOWN;
}
