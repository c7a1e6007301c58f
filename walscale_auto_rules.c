/*-------------------------------------------------------------------------
 *
 * walscale_auto_rules.c
 *		Auto mode's rules: the CPUs that count, how many WAL insertion locks
 *		to start from, the bounds, and what to do with the number at the end
 *		of each window.
 *
 * This comment is where each rule and constant is argued; the header names
 * them, and the documents describe the behaviour.  Auto mode moves the
 * number in doublings and halvings, each a trial that is kept or undone on
 * measurement, and it settles where no neighbour does better by more than
 * the measurement can tell: the stochastic test (t/unit/test_auto_noise.c)
 * holds it to that over days of noisy windows.
 *
 * The signal for acting.  The share of active backend time spent asleep on
 * the insertion locks: the sleep summed over backends, over the window's
 * length and the mean number of active backends the wait sampler saw.  It
 * means the same with 2 backends as with 2000, on 2 CPUs as on 480.
 *
 * - AUTO_GROW_BLOCKED_SHARE, 5%: a doubling is not free.  Each all-lock
 *	 acquisition takes every active lock (42 instructions a lock in stock
 *	 18.6 recompiled, and on many cores a cache line another core owns),
 *	 each flush visits every lock of the groups of 8 that insertions used
 *	 (core patch 0006), and more locks spread the inserters over more
 *	 groups; a grow can win back at most the share blocked.
 * - AUTO_SHRINK_BLOCKED_SHARE, 0.5%: ten times below.  A halving at most
 *	 doubles the load on each lock, which at low use about doubles the wait,
 *	 still far from 5%: a quiet shrink cannot provoke the next grow.
 * - AUTO_MIN_WAITS, 20: a count of n waits is good to about 1/sqrt(n),
 *	 22% at 20, enough to tell 5% from the 2.5% a halving gives.
 * - AUTO_MIN_ACQUISITIONS, 500: below it a window is idle; it judges
 *	 nothing, breaks a contended streak and counts as quiet.
 *
 * The measure for judging.  The insertion rate per running backend:
 * acquisitions per second over the fewer of the active backends and the
 * CPUs.  Time no longer asleep on a lock should become inserting; per
 * running backend, so that a fixed offered load (fewer backends busy when
 * each is faster) counts as helped, and per CPU beyond the CPU count, where
 * only throughput can rise.  The share is no measure of a gain: with far
 * more backends than locks it sits near 1 - locks / backends.
 *
 * The noise.  A window's rate varies from the next by checkpoints,
 * autovacuum and the workload's mix, by a few percent on a real server.
 * The spread is a moving mean (weight AUTO_SPREAD_WEIGHT, 1/16: about the
 * last half hour of 10-s windows that qualify) of |log| of the ratio of a
 * window's rate to the one before, over windows in a row at one number and
 * load.  For two independent windows of deviation s it is 2 s / sqrt(pi).
 * It starts at AUTO_SPREAD_START, 10%, high: until the worker has measured
 * the noise, it assumes much, and its first trials are long.  The load (the
 * active backends, below) has a spread of its own, measured the same way
 * over the same windows, from the same start.
 *
 * The trial.  A change is judged on the mean rate of n windows after it
 * against the mean of the n windows before it at the number it came from.
 * n is the least (up to AUTO_TRIAL_WINDOWS_MAX) that puts AUTO_TRIAL_Z
 * standard errors of the difference of the two means, s sqrt(2 / n),
 * within the gain asked; with AUTO_TRIAL_WINDOWS_MAX windows the margin is
 * at least AUTO_TRIAL_Z standard errors, so noise beyond what 5 minutes can
 * resolve raises the margin instead of lengthening the trial.
 *
 * - AUTO_TRIAL_Z, 2.5: a grow that does nothing is kept by noise in about
 *	 one trial in 160 (and then needs its sleep per acquisition not to have
 *	 risen, about one in two), and the halving tried later takes it back.
 * - AUTO_TRIAL_WINDOWS_MAX, 30: five minutes of 10-s windows a side.  A
 *	 spread of 5% a window needs 27 for a 3% gain; more, and a trial that
 *	 fails costs more windows at a worse number than it can win.
 * - AUTO_KEEP_MIN_GAIN, 3%, or AUTO_KEEP_GAIN_OF_SHARE (half) of the share
 *	 before a grow if that is less: Sokolov's 128 to 256 locks gave 2% at
 *	 200 clients, about what the doubling's flush cost is; a grow cannot
 *	 free more than the share blocked.  A grow is kept if the rate rose by
 *	 the margin and the sleep per acquisition did not rise (the contention
 *	 it was for, per insertion, must not have grown; in 18.6 a backend that
 *	 must replace a WAL buffer waits for the WAL write holding its insertion
 *	 lock, and more locks then move the wait without moving the rate).
 *	 A halving is kept unless the rate fell by the margin: fewer locks cost
 *	 every flush and all-lock acquisition less, so a tie goes to fewer.
 * - AUTO_LOOK_AHEAD_PART, half: while backends share locks the gain of a
 *	 doubling grows with the number (in the simulator at 16 CPUs and 2000
 *	 clients +2.1%, +4.0%, +5.2%), so a first doubling may gain less than
 *	 the margin though the next gains more.  A grow whose rate rose by half
 *	 the margin, in a window still contended, doubles once more on the same
 *	 trial, and the two are kept or undone together against the first
 *	 baseline.  Once per trial.
 * - Looking past a grow that did not help: the same curve can dip before
 *	 it rises (in the simulator at 16 CPUs and 500 unpooled clients, 525,
 *	 521, 557 and 637 tps at 16, 32, 64 and 128 locks), and a search by
 *	 single doublings stops at the dip for good, since its ceiling's hold
 *	 doubles with each failure.  So a first doubling that gained less than
 *	 the look-ahead's part, in a window still contended and with its sleep
 *	 per acquisition no more than the margin above its baseline's, doubles
 *	 once more on the same trial, kept or undone against the first baseline
 *	 as a look-ahead is, with the kept grow's strict test of the sleep.
 *	 Once per load (within AUTO_LOAD_MOVED), and again only from a number
 *	 above the one the last grew from: a load whose curve is flat or falls
 *	 pays one trial at four times its number, then the ceiling holds as
 *	 before, and no more than one per doubling up to the maximum.  Again
 *	 from above, since a look-past spent further from the dip (from 64,
 *	 judging 256 in the dip against 64) must not leave it unpassed from the
 *	 number just before it (in the stochastic test's dip load at 5% noise,
 *	 a run settled at 128 of a best 512 so).  The margin on the sleep: in a
 *	 dip the doubling moves neither the rate nor the sleep, and the sleep
 *	 per acquisition, a quotient over the same windows with the
 *	 acquisitions below it, moves from window to window as much as the rate
 *	 or more (in the simulator's controller runs at 16 CPUs on windows of a
 *	 server's length, 1.4% against 1.3% at 16 locks, 3.1% against 0.3% at
 *	 128); a strict test leaves the dip unpassed on about every other
 *	 trial, on noise (in that run's ramp the grow from 16 gained 0.8% with
 *	 1.2% more sleep, and 16 held for ten minutes where 128 ran 23%
 *	 faster).  Only here: a look-past keeps nothing and is bounded as
 *	 above, where a look-ahead is bounded by nothing but its trial.
 * The load.  A change is judged only against the load it was made under,
 * measured as the active backends the sampler saw; a window's count may
 * wander far from the next's (on this project's 2-core VM, 1 to 8 active
 * backends in turn under 32 steady clients), so loads are compared as
 * means, and a single window only for a step.
 *
 * - AUTO_LOAD_STEP, twice: a window with more than twice, or less than
 *	 half, the active backends of the baseline does not count for a trial
 *	 (a burst, or its end), nor its ratio to the window before it for the
 *	 spread.
 * - AUTO_TRIAL_MAX_LOAD_CHANGE, 10%: the trial's windows, on their mean,
 *	 must have the baseline's load within this, or they start again: the
 *	 load moved, not only the locks.  Active, not running: beyond the CPU
 *	 count the running number stops moving while the load still grows.
 *	 Two allowances.  The noise: two means of n windows of a load that
 *	 wanders differ by chance, so the tolerance is at least AUTO_TRIAL_Z
 *	 standard errors of their difference, from the load's spread as the
 *	 margin is from the rate's (on this project's 2-core VM the active
 *	 backends of 8 steady clients have a standard deviation of 12% over
 *	 1-s windows, and a mean of ten such windows 4%).  The change
 *	 itself: it moves the backends asleep on the locks, and a backend woken
 *	 whose client waits on the network goes back to it sooner, so fewer are
 *	 active at once (a halving, the reverse); after a grow the trial's mean
 *	 may lie anywhere from the baseline's down to it less the sleepers the
 *	 grow freed, give or take the tolerance, and after a halving up to it
 *	 plus the sleepers added.  Not the other way: more sleepers after a
 *	 grow are more load (in the simulator's ramp at 16 CPUs, a symmetric
 *	 allowance let the ramp's own sleepers judge, and undo, its first
 *	 grow).
 * - AUTO_TRIAL_SPARE_WINDOWS, 12: a trial that has not had its n windows
 *	 within n + 12 (two minutes of windows that could not judge it) is
 *	 undone.  A change that nothing judged must not stay: kept untested, it
 *	 is the next trial's baseline, and a burst's grows would stay after the
 *	 burst.  It leaves no ceiling, since nothing showed it did not help: a
 *	 ramp whose first grow the moving load could not judge grows again once
 *	 the load holds still.  Where the window that undoes it has the load
 *	 the trial began with, give or take the noise, nothing moved but the
 *	 noise, and the next grow waits until the load has held still
 *	 (AUTO_TRIAL_WINDOWS_MAX windows, none stepped, halves within
 *	 AUTO_LOAD_MOVED): a grow undone and made again at once is a swing.  A
 *	 load that went elsewhere grows as soon as it is hot (in the
 *	 simulator's ramp a wait for stillness cost the 2000 clients after it
 *	 five minutes at 8 locks).
 * - AUTO_LOAD_MOVED, 20%: what a ceiling's or a halving's hold learnt, and
 *	 what a kept grow was judged under, belong to a load within this of
 *	 the load now; the load has held still when AUTO_TRIAL_WINDOWS_MAX
 *	 windows, none stepped from their mean, have halves whose means are
 *	 within it.  Twice the judging tolerance, so that a load whose active
 *	 backends wander by 10% each window is still one load.  A kept grow's
 *	 load is the mean of its baseline's few windows: it has moved when the
 *	 mean of the windows since differs from it by this and by AUTO_TRIAL_Z
 *	 standard errors of the two means' difference.
 *
 * Growing.  Double, up to the maximum and the ceiling, after hot_needed
 * contended windows in a row (the share at or above the grow share, over
 * AUTO_MIN_WAITS sleeps) once the baseline has its n windows; right after a
 * kept grow, in the next contended window (a ramp doubles as fast as each
 * doubling is judged).
 *
 * - AUTO_HOT_WINDOWS, 2: one contended window may be a burst or a lock
 *	 holder preempted (on this project's 2-core VM, 16 clients summed 957
 *	 ms asleep per second from preemption alone).
 * - The grow backoff: a halving (kept, or quiet) back to where a kept grow
 *	 came from within AUTO_BACKOFF_DECAY_S, or a grow that could not be
 *	 judged, shows contention that did not last; the hot windows the next
 *	 grow needs double, up to AUTO_HOT_WINDOWS_MAX (32, five minutes), and
 *	 halve after AUTO_GROW_BACKOFF_DECAY_S (6 hours) without another.  A
 *	 load with a burst every ten minutes would otherwise make a dozen
 *	 changes an hour chasing it.
 * - The ceiling: a grow undone leaves the number it came from as a
 *	 ceiling for that number's hold, AUTO_CEILING_HOLD_S (10 minutes) at
 *	 first, doubled at each failure from the same number under the same
 *	 load (within AUTO_LOAD_MOVED) up to AUTO_CEILING_HOLD_MAX_S (a day).
 *	 A steady load then tries the grow every 10, 20, 40 minutes and soon
 *	 once a day; a load that moved is another load, and starts over.  A
 *	 kept halving sets the same ceiling at the number it reached: the grow
 *	 back is as good as tried.
 *
 * Trying fewer under contention.  A number above the floor, held for its
 * hold (AUTO_DOWN_HOLD_S, 30 minutes, doubled by each failed halving from
 * it under the same load, up to a day, and by a kept grow back to it after
 * a kept halving), while contended but not quiet, has its halving tried
 * once the load has held still for AUTO_TRIAL_WINDOWS_MAX windows (a burst
 * must not judge it); and at once, on the same condition of stillness,
 * when the number was reached by a grow kept under a load that has since
 * moved by more than AUTO_LOAD_MOVED.  The start is a guess and a kept
 * grow a judgement on noisy windows: without this, a number once reached
 * is never tested again while backends wait, and noise ratchets it up.
 * A kept halving is followed by the next, until one hurts: a descent from
 * a start of 512 to 32 takes four trials, not four holds.  Each is judged
 * against the descent's best as well as its own baseline: the best
 * baseline rate of the descent's numbers, under its load (within
 * AUTO_LOAD_MOVED), the fewest locks on a tie.  A tie goes to fewer, but
 * small losses each within the margin would otherwise add up and walk the
 * number down a curve that rises (in the stochastic test's dip load at 5%
 * noise, from 128 to 8 where 512 was best); and a halving kept on a loss
 * within the margin may still lead to a gain (in the simulator at 96 CPUs
 * and 200 clients, 64 locks ran 4.6% below 128 and 32 locks 7% above it),
 * so the descent goes on past it.  One that hurts goes back to the
 * descent's best, not only to the number it came from, which lost its own
 * part of the sum.  The next waits
 * only for fresh windows, as many as its trial's baseline needs, that show
 * the load still: the halving before was judged on windows whose load held
 * within AUTO_TRIAL_MAX_LOAD_CHANGE of its baseline's, so the load has held
 * still all along.  Fresh, since the windows that kept a halving were
 * chosen by their luck: as the next baseline they would bias its trial.
 * The start itself is tried as soon as the load has held still for
 * AUTO_TRIAL_WINDOWS_MAX windows, not after a hold: it was not measured,
 * only derived from the CPU count, and on a many-core server it is 128 or
 * 512 locks; no trial has yet shown the load still.  And it is tried before
 * any grow: until something has moved the start, contention does not grow
 * it, unless it is the floor, with nothing below to try.  A grow first
 * spends its trial, and a look-past, at two and four times a start that
 * may already be past the best (in the simulator at 480 CPUs and 2000
 * clients, growing first reached 1024 locks and ran at 0.946 of the best
 * fixed count, 16 locks; halving first, 0.973).  Any change ends the wait,
 * a quiet shrink included, so a load that comes after a night's shrinks
 * grows as soon as it is hot.
 *
 * Judging a descent's end at the floor again.  A halving's trial judges
 * the first windows after it, as few as the noise allows (one, where the
 * spread is small), and a harm can build more slowly: a convoy of backends
 * behind a preempted holder of a lock they now share forms when it forms
 * (in the simulator at 16 CPUs and 2000 clients, 64, 32, 16 and 8 locks
 * each ran at 128's rate on the one window of its trial, and 8 fell to 62%
 * of it 12 windows later).  Above the floor, the next halving judges the
 * number a halving reached, against the descent's best: a harm built by
 * then counts against it, and one that builds later against the number
 * after it.  At the floor nothing comes next, and the descent would hold
 * whatever harm its last trial missed until the floor's grow is tried,
 * after the ceiling its kept halving left.  So a floor a descent's kept
 * halving reached is judged against the descent's best again on each
 * window, on the newest windows as many as a halving's trial takes and
 * with its margin, under the descent's load, until AUTO_TRIAL_WINDOWS_MAX
 * windows at it have shown the load still.  Not above the floor: judging a
 * number again before its next halving would test anew what its trial
 * passed, and stop a descent whose loss within the margin leads to a gain
 * (in the simulator at 96 CPUs and 200 clients it held 128, at 0.923 of
 * the best fixed count, 32).  A floor that falls short goes back to where
 * the descent began, whose hold doubles as for a halving that hurt: not to
 * the descent's best, whose number was judged on windows the harm may not
 * yet have reached, as every number of the descent was but the first, held
 * for its hold.  Each window is a look, so noise sends a floor that costs
 * nothing back more often than one trial would; in the stochastic test's
 * flat load it adds at most 0.4 to the mean changes a day and 6 to the
 * most in a day, and the doubled hold keeps it rare.
 *
 * Looking past a halving that hurt.  The rate is not always monotonic in
 * the number: a count at which backends' ProcNumbers happen to pair onto
 * busy locks, or a flush that visits one group more, can make a halving
 * cost a few percent where the one after it gains more back (in the
 * simulator at 96 CPUs and 2000 clients, 64 locks ran at 647 tps against
 * 674 at 128 and 829 at 32: a search by single halvings stops at 128).
 * So a first halving
 * that hurt, while contended and with a half of its own above the floor,
 * halves once more on the same trial, judged against the same baseline;
 * kept if the quarter does as well as the number the trial began at,
 * undone to it otherwise.  Once per load (within AUTO_LOAD_MOVED): a load
 * whose curve is monotonic pays one extra trial window set at a quarter of
 * its number, and then holds as before.
 *
 * Shrinking when quiet.  Halve, down to the floor, after quiet_needed
 * windows in a row below the quiet share (or idle), unless the halving
 * would make two locks that were both in use in the window one: lock i
 * and lock i + n/2 become one, and backends that did not share a lock
 * would share one.  Not judged: at that share a halving cannot provoke
 * contention worth judging, and if it does, the grow rule answers.
 *
 * - AUTO_QUIET_WINDOWS, 6: a minute of calm at 10-s windows.  A grow that
 *	 undoes a recent shrink doubles the windows the next shrink needs, up to
 *	 AUTO_QUIET_WINDOWS_MAX (96), halving after AUTO_BACKOFF_DECAY_S (an
 *	 hour) without another: a load on the edge does not swing.
 * - AUTO_MERGE_MIN_EVEN_SHARE, a quarter: a lock is in use with a quarter
 *	 of an even share of the window's acquisitions.  One acquisition is not
 *	 use (the bgwriter's standby snapshot every 15 s, alone on a lock).
 *
 * The bounds.  The floor is PostgreSQL's 8 (walscale.auto_min_locks for a
 * DBA who wants fewer); the start one lock per CPU, the maximum 8 per CPU
 * (walscale_rules_start_locks() and walscale_rules_max_locks() argue them).
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
	/* the start was derived, not measured: its halving is tried first */
	state->descending = true;
	state->start_untried = true;
	state->quiet_needed = AUTO_QUIET_WINDOWS;
	state->hot_needed = AUTO_HOT_WINDOWS;
	for (int i = 0; i < AUTO_LEVELS; i++)
	{
		state->grow_hold_s[i] = AUTO_CEILING_HOLD_S;
		state->down_hold_s[i] = AUTO_DOWN_HOLD_S;
	}
	state->spread = AUTO_SPREAD_START;
	state->load_spread = AUTO_SPREAD_START;

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

/* ---- the trial of a change ---- */

/*
 * The standard deviation of one window's log rate, from the spread: for
 * two independent windows of that deviation s, the mean absolute log ratio
 * is 2 s / sqrt(pi).
 */
static double
window_deviation(double spread)
{
	return spread * sqrt(M_PI) / 2;
}

/*
 * Windows on each side of a trial: as many as make AUTO_TRIAL_Z standard
 * errors of the difference between the two means fit in gain, within 1 and
 * AUTO_TRIAL_WINDOWS_MAX.
 */
static int
trial_windows_needed(double spread, double gain)
{
	double		n = 2 * pow(AUTO_TRIAL_Z * window_deviation(spread) / gain, 2);

	return (int) Min(Max(ceil(n), 1.0), (double) AUTO_TRIAL_WINDOWS_MAX);
}

/* the margin a trial of n windows a side is judged with: gain, or more */
static double
trial_margin(double spread, double gain, int n)
{
	return Max(gain, AUTO_TRIAL_Z * window_deviation(spread) * sqrt(2.0 / n));
}

/* forget the windows at the number in effect */
static void
recent_forget(AutoRulesState *state)
{
	state->recent = 0;
}

/*
 * The mean of the newest n of the windows at the number in effect, of
 * values (one of the recent_ arrays); 0 if n is 0
 */
static double
recent_mean(const AutoRulesState *state, const double *values, int n)
{
	double		mean = 0;

	for (int i = state->recent - n; i < state->recent; i++)
		mean += values[i] / n;
	return mean;
}

/* the mean load of the windows at the number in effect; 0 if none */
static double
recent_mean_load(const AutoRulesState *state)
{
	return recent_mean(state, state->recent_load, state->recent);
}

/*
 * Whether load, the mean of windows windows, is another load than before,
 * the mean of before_windows (0: none known): more than AUTO_LOAD_MOVED
 * apart, and more than AUTO_TRIAL_Z standard errors of the two means'
 * difference, which the load's spread gives: means of a few windows of a
 * load that wanders differ by chance.
 */
static bool
load_moved(const AutoRulesState *state, double load, int windows,
		   double before, int before_windows)
{
	double		noise = AUTO_TRIAL_Z * window_deviation(state->load_spread) *
		sqrt(1.0 / Max(windows, 1) + 1.0 / Max(before_windows, 1));

	return before <= 0 ||
		fabs(load - before) > Max(AUTO_LOAD_MOVED, noise) * before;
}

/* whether load is more than AUTO_LOAD_STEP times before, or less than 1/ */
static bool
load_stepped(double load, double before)
{
	return load > before * AUTO_LOAD_STEP || load * AUTO_LOAD_STEP < before;
}

/*
 * A window joins those at the number in effect, the oldest going when they
 * are AUTO_TRIAL_WINDOWS_MAX; one with too little data leaves none.  Two
 * windows in a row among them update the spreads of the rate and of the
 * load, unless the load stepped from one to the other.
 */
static void
recent_add(AutoRulesState *state, bool enough, double rate, double wait_ns,
		   double load, double blocked)
{
	int			n = state->recent;

	if (!enough)
	{
		recent_forget(state);
		return;
	}
	if (n > 0 && !load_stepped(load, state->recent_load[n - 1]))
	{
		state->spread += (fabs(log(rate / state->recent_rate[n - 1])) -
						  state->spread) * AUTO_SPREAD_WEIGHT;
		state->load_spread += (fabs(log(load / state->recent_load[n - 1])) -
							   state->load_spread) * AUTO_SPREAD_WEIGHT;
	}
	if (n == AUTO_TRIAL_WINDOWS_MAX)
	{
		memmove(state->recent_rate, state->recent_rate + 1,
				sizeof(double) * (n - 1));
		memmove(state->recent_wait_ns, state->recent_wait_ns + 1,
				sizeof(double) * (n - 1));
		memmove(state->recent_load, state->recent_load + 1,
				sizeof(double) * (n - 1));
		memmove(state->recent_blocked, state->recent_blocked + 1,
				sizeof(double) * (n - 1));
		n--;
	}
	state->recent_rate[n] = rate;
	state->recent_wait_ns[n] = wait_ns;
	state->recent_load[n] = load;
	state->recent_blocked[n] = blocked;
	state->recent = n + 1;
}

/*
 * Put the change from the number in effect, from, to to, on trial: its
 * baseline is the mean of the last n windows at from, and it is judged on
 * the mean of n windows after it, with margin.
 */
static void trial_restart(AutoRulesState *state);

static void
trial_begin(AutoRulesState *state, int from, int to, int n, double margin)
{
	Assert(n >= 1 && n <= state->recent);
	state->start_untried = false;
	state->trial_from = from;
	state->trial_to = to;
	state->trial_needed = n;
	state->trial_margin = margin;
	state->trial_rate = recent_mean(state, state->recent_rate, n);
	state->trial_wait_ns = recent_mean(state, state->recent_wait_ns, n);
	state->trial_load = recent_mean(state, state->recent_load, n);
	state->trial_blocked = recent_mean(state, state->recent_blocked, n);
	state->trial_load_tolerance =
		Max(AUTO_TRIAL_MAX_LOAD_CHANGE,
			AUTO_TRIAL_Z * window_deviation(state->load_spread) *
			sqrt(2.0 / n));
	trial_restart(state);
}

/* the windows after the change: none yet */
static void
trial_restart(AutoRulesState *state)
{
	state->trial_windows = 0;
	state->trial_judged = 0;
	state->trial_sum_rate = 0;
	state->trial_sum_wait_ns = 0;
	state->trial_sum_load = 0;
	state->trial_sum_blocked = 0;
}

/*
 * Whether the mean load of the trial's windows is another load than its
 * baseline's: beyond the tolerance, after what the change itself explains.
 * The load counts the backends asleep on the locks, and a change moves
 * them: a grow that frees sleepers lets a backend with a client on the
 * other side of the network go back to it sooner, so fewer are active at
 * once; a halving that adds sleepers, more.  So after a grow the trial's
 * mean may lie anywhere from the baseline's load down to it less the
 * sleepers the grow freed (all of them for clients that wait on the
 * network, none for clients that never leave), give or take the
 * tolerance; after a halving, up to it plus the sleepers added.  Only in
 * that direction: more sleepers after a grow are more load, not its
 * effect, and in a ramp they would excuse most of the ramp.
 */
static bool
trial_load_moved(const AutoRulesState *state)
{
	bool		grew = state->trial_to > state->trial_from;
	double		load = state->trial_sum_load / state->trial_judged;
	double		asleep_change = state->trial_sum_blocked / state->trial_judged -
		state->trial_blocked;
	double		tolerance = state->trial_load_tolerance * state->trial_load;
	double		lowest = state->trial_load - tolerance;
	double		highest = state->trial_load + tolerance;

	if (grew)
		lowest += Min(asleep_change, 0.0);
	else
		highest += Max(asleep_change, 0.0);
	return load < lowest || load > highest;
}

/* the index of a number of locks in the holds: its log2, rounded down */
static int
level_of(int locks)
{
	int			level = 0;

	while (level < AUTO_LEVELS - 1 && (2 << level) <= locks)
		level++;
	return level;
}

/*
 * Whether the load has held still at the number in effect over its newest
 * windows (from 1 to AUTO_TRIAL_WINDOWS_MAX): none of them stepped from
 * their mean (a burst), and the mean load of their older half within
 * AUTO_LOAD_MOVED of their newer half's (a drift).  Means, since the
 * active backends of one window may wander far from the next's.
 */
static bool
recent_still(const AutoRulesState *state, int windows)
{
	int			first = state->recent - windows;
	int			half = windows / 2;
	double		mean;
	double		older = 0;
	double		newer = 0;

	if (first < 0)
		return false;
	mean = recent_mean(state, state->recent_load, windows);
	for (int i = first; i < state->recent; i++)
		if (load_stepped(state->recent_load[i], mean))
			return false;
	if (half == 0)
		return true;
	for (int i = 0; i < half; i++)
	{
		older += state->recent_load[first + i] / half;
		newer += state->recent_load[state->recent - 1 - i] / half;
	}
	return !load_moved(state, newer, half, older, half);
}

/*
 * A grow from from that did not help, or could not be judged: from is a
 * ceiling for the hold of that number, which then doubles.  A hold is what
 * failures taught about one load: under a load that moved since the last
 * failure from that number, it starts from AUTO_CEILING_HOLD_S again.
 */
static void
ceiling_set(AutoRulesState *state, int from)
{
	int			level = level_of(from);

	if (load_moved(state, state->trial_load, state->trial_needed,
				   state->grow_hold_load[level],
				   state->grow_hold_windows[level]))
		state->grow_hold_s[level] = AUTO_CEILING_HOLD_S;
	state->ceiling = from;
	state->ceiling_left_s = state->grow_hold_s[level];
	state->grow_hold_s[level] = Min(state->grow_hold_s[level] * 2,
									AUTO_CEILING_HOLD_MAX_S);
	state->grow_hold_load[level] = state->trial_load;
	state->grow_hold_windows[level] = state->trial_needed;
}

/*
 * A halving from from that hurt, or could not be judged, under load, the
 * mean of windows windows: hold longer
 */
static void
down_hold_double(AutoRulesState *state, int from, double load, int windows)
{
	int			level = level_of(from);

	if (load_moved(state, load, windows, state->down_hold_load[level],
				   state->down_hold_windows[level]))
		state->down_hold_s[level] = AUTO_DOWN_HOLD_S;
	state->down_hold_s[level] = Min(state->down_hold_s[level] * 2,
									AUTO_CEILING_HOLD_MAX_S);
	state->down_hold_load[level] = load;
	state->down_hold_windows[level] = windows;
	state->since_settled_s = 0;
}

/*
 * How long locks are held, under the load of the windows at the number in
 * effect, before their halving is tried
 */
static double
down_hold(const AutoRulesState *state, int locks)
{
	int			level = level_of(locks);

	return load_moved(state, recent_mean_load(state), state->recent,
					  state->down_hold_load[level],
					  state->down_hold_windows[level]) ?
		AUTO_DOWN_HOLD_S : state->down_hold_s[level];
}

/* contention that did not last: be slower to grow next time */
static void
hot_backoff(AutoRulesState *state)
{
	state->hot_needed = Min(state->hot_needed * 2, AUTO_HOT_WINDOWS_MAX);
	state->since_hot_backoff_s = 0;
}

/*
 * A halving, kept or for quiet, to to: if that is where a recent kept grow
 * came from, the grow was for a load that did not last.
 */
static void
grow_backoff(AutoRulesState *state, int to)
{
	if (to == state->last_grow_from &&
		state->since_grow_s < AUTO_BACKOFF_DECAY_S)
		hot_backoff(state);
}

/*
 * Whether the number in effect was reached by a grow kept under a load that
 * has since moved by more than AUTO_LOAD_MOVED: that judgement
 * was about another load.  The windows since it are the ones at the number
 * in effect.
 */
static bool
grown_for_another_load(const AutoRulesState *state)
{
	return state->grown_load > 0 &&
		recent_still(state, AUTO_TRIAL_WINDOWS_MAX) &&
		load_moved(state, recent_mean_load(state), state->recent,
				   state->grown_load, state->grown_windows);
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
	double		blocked;
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
	/* of them, asleep on the locks */
	blocked = Min(share, 1.0) * load;
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
	state->since_hot_backoff_s += window_s;
	if (state->hot_needed > AUTO_HOT_WINDOWS &&
		state->since_hot_backoff_s >= AUTO_GROW_BACKOFF_DECAY_S)
	{
		state->hot_needed = Max(state->hot_needed / 2, AUTO_HOT_WINDOWS);
		state->since_hot_backoff_s = 0;
	}
	state->since_shrink_s += window_s;
	state->since_grow_s += window_s;
	state->since_settled_s += window_s;

	/* the bounds moved (walscale.auto_min_locks reloaded): follow them */
	if (current < min || current > max)
	{
		verdict->target = current < min ? min : max;
		verdict->reason = current < min ? AUTO_REASON_FLOOR : AUTO_REASON_MAX;
		verdict->spread = state->spread;
		state->start_untried = false;
		state->trial_from = 0;
		state->hot_windows = 0;
		state->quiet_windows = 0;
		recent_forget(state);
		return;
	}

	recent_add(state, enough, rate, wait_ns, load, blocked);
	verdict->spread = state->spread;

	/* no grow beyond the maximum, nor the ceiling while it holds */
	limit = state->ceiling > 0 ? Min(max, state->ceiling) : max;

	/* a change not applied is not on trial */
	if (state->trial_from > 0 && current != state->trial_to)
		state->trial_from = 0;

	/*
	 * The change on trial: a window counts for it if it can judge it, and it
	 * is judged when enough have; until then, nothing else changes.
	 */
	if (state->trial_from > 0)
	{
		int			from = state->trial_from;
		bool		grew = current > from;

		state->trial_windows++;
		if (enough && !load_stepped(load, state->trial_load))
		{
			state->trial_judged++;
			state->trial_sum_rate += rate;
			state->trial_sum_wait_ns += wait_ns;
			state->trial_sum_load += load;
			state->trial_sum_blocked += blocked;
		}

		if (state->trial_judged >= state->trial_needed &&
			trial_load_moved(state))
		{
			/* the windows' mean load is another load's: start them again */
			int			windows = state->trial_windows;

			trial_restart(state);
			state->trial_windows = windows;
		}

		if (state->trial_judged >= state->trial_needed)
		{
			double		mean_rate = state->trial_sum_rate / state->trial_judged;
			double		mean_wait_ns = state->trial_sum_wait_ns /
				state->trial_judged;
			double		margin = state->trial_margin;

			state->trial_from = 0;
			if (grew)
			{
				/*
				 * A first doubling goes to at most twice from; a look-ahead
				 * or a look-past doubles a first doubling that was below the
				 * limit, so beyond twice from.
				 */
				bool		looked_ahead = current > 2 * from;
				bool		no_more_sleep = mean_wait_ns <= state->trial_wait_ns;
				bool		sleep_within_margin = mean_wait_ns <=
					state->trial_wait_ns * (1.0 + margin);

				if (no_more_sleep &&
					mean_rate >= state->trial_rate * (1.0 + margin))
				{
					kept_grow = true;
					state->descending = false;
					state->since_settled_s = 0;
					state->last_grow_from = from;
					state->since_grow_s = 0;
					state->grown_load = state->trial_load;
					state->grown_windows = state->trial_needed;
					/* back to where a kept halving came from: slower to halve */
					if (current == state->last_down_from)
						down_hold_double(state, current, state->trial_load,
										 state->trial_needed);
				}
				else if (no_more_sleep &&
						 mean_rate >= state->trial_rate *
						 (1.0 + margin * AUTO_LOOK_AHEAD_PART) &&
						 hot && !looked_ahead && current < limit)
				{
					/*
					 * A gain under the margin, but a part of it, still
					 * contended: the gain of a doubling grows with the number
					 * while backends still share locks, so try one more,
					 * judged against the same baseline.
					 */
					target = Min(current * 2, limit);
					reason = AUTO_REASON_LOOK_AHEAD;
					state->trial_from = from;
					state->trial_to = target;
					trial_restart(state);
				}
				else if (sleep_within_margin && hot && !looked_ahead &&
						 current < limit &&
						 (from > state->looked_past_grow_from ||
						  load_moved(state, state->trial_load,
									 state->trial_needed,
									 state->looked_past_grow_load,
									 state->looked_past_grow_windows)))
				{
					/*
					 * No gain, or less than that part, still contended and
					 * asleep per acquisition no more than the margin above
					 * the baseline: look past it once per load, or again from
					 * above the last one's from, to four times from, on the
					 * same trial and baseline.
					 */
					target = Min(current * 2, limit);
					reason = AUTO_REASON_LOOK_PAST_GROW;
					state->looked_past_grow_load = state->trial_load;
					state->looked_past_grow_windows = state->trial_needed;
					state->looked_past_grow_from = from;
					state->trial_from = from;
					state->trial_to = target;
					trial_restart(state);
				}
				else
				{
					target = Max(from, min);
					reason = AUTO_REASON_UNDO;
					ceiling_set(state, target);
				}
			}
			else if (mean_rate >= Max(state->trial_rate,
									  state->descent_rate) * (1.0 - margin))
			{
				/*
				 * Fewer locks did as well as from, and as the best number of
				 * the descent: they stay, the next halving is due, and the
				 * grow back to from is as good as tried and undone.  The
				 * windows that judged them are forgotten, so that the next
				 * trial's baseline is not the windows its keep was chosen on.
				 */
				state->since_settled_s = 0;
				state->last_down_from = from;
				state->descending = true;
				ceiling_set(state, current);
				state->grown_load = 0;
				grow_backoff(state, current);
				recent_forget(state);
				/* to be judged again, on the windows after these */
				state->descent_recheck = true;
			}
			else if (current / 2 >= min && !quiet &&
					 load_moved(state, state->trial_load, state->trial_needed,
								state->looked_past_load,
								state->looked_past_windows))
			{
				/*
				 * The first halving hurt: look past it once per load, to a
				 * quarter of from, on the same trial and baseline.
				 */
				target = current / 2;
				reason = AUTO_REASON_LOOK_PAST;
				state->looked_past_load = state->trial_load;
				state->looked_past_windows = state->trial_needed;
				state->trial_from = from;
				state->trial_to = target;
				trial_restart(state);
			}
			else
			{
				/*
				 * Back to the descent's best number: from, or above it when
				 * the halvings since were kept within the margin on lower
				 * rates, whose sum the one that hurt has shown to matter.
				 */
				target = Min(Max(from, state->descent_top), max);
				reason = AUTO_REASON_FEWER_HURT;
				state->descending = false;
				down_hold_double(state, target, state->trial_load,
								 state->trial_needed);
				/* it is now judged under this load */
				state->grown_load = 0;
			}
		}
		else if (state->trial_windows >=
				 state->trial_needed + AUTO_TRIAL_SPARE_WINDOWS)
		{
			/*
			 * The load moved or went idle too long to tell: go back to where
			 * the trial began, as if the change had not helped.
			 */
			state->trial_from = 0;
			reason = AUTO_REASON_UNJUDGED;
			if (grew)
			{
				target = Max(from, min);
				/* the contention it answered did not last */
				hot_backoff(state);

				/*
				 * Undone while the load is where the trial began: nothing
				 * moved but the noise, and a grow made again at once would
				 * swing; wait until the load has held still.  A load that
				 * went elsewhere (a ramp) is grown for as soon as it is hot.
				 */
				state->grow_waits_still =
					!load_moved(state, load, 1, state->trial_load,
								state->trial_needed);
			}
			else
			{
				target = Min(from, max);
				state->descending = false;
				down_hold_double(state, from, state->trial_load,
								 state->trial_needed);
				state->grown_load = 0;
			}
		}

		if (reason != NULL || state->trial_from > 0)
		{
			/* changed, or still on trial: no streak carries over */
			state->hot_windows = 0;
			state->quiet_windows = 0;
			if (target != current)
				recent_forget(state);
			verdict->target = target;
			verdict->reason = reason;
			return;
		}
	}

	/*
	 * The floor a descent's last kept halving reached: judged again against
	 * the descent's best on each window until AUTO_TRIAL_WINDOWS_MAX windows
	 * at it have shown the load still, for a harm that builds more slowly
	 * than the trial that kept it.  One that hurts goes back to where the
	 * descent began.
	 */
	if (state->descent_recheck && state->trial_from == 0 && current == min)
	{
		int			n = trial_windows_needed(state->spread, AUTO_KEEP_MIN_GAIN);

		if (recent_still(state, n))
		{
			double		recent_rate = recent_mean(state, state->recent_rate, n);
			double		recent_load = recent_mean(state, state->recent_load, n);

			if (!load_moved(state, recent_load, n, state->descent_load,
							state->descent_windows) &&
				recent_rate < state->descent_rate *
				(1.0 - trial_margin(state->spread, AUTO_KEEP_MIN_GAIN, n)))
			{
				target = Min(state->descent_from, max);
				state->descending = false;
				state->descent_recheck = false;
				down_hold_double(state, target, recent_load, n);
				state->grown_load = 0;
				state->hot_windows = 0;
				state->quiet_windows = 0;
				recent_forget(state);
				verdict->target = target;
				verdict->reason = AUTO_REASON_FEWER_HURT;
				return;
			}
			if (recent_still(state, AUTO_TRIAL_WINDOWS_MAX))
				state->descent_recheck = false;
		}
	}

	if (hot)
	{
		double		gain = Min(AUTO_KEEP_MIN_GAIN,
							   AUTO_KEEP_GAIN_OF_SHARE * share);
		int			n = trial_windows_needed(state->spread, gain);

		state->quiet_windows = 0;
		/* one hot window may be a burst, unless a kept grow preceded it */
		state->hot_windows = kept_grow ? state->hot_needed :
			state->hot_windows + 1;
		/* the start's halving goes first, unless it is the floor */
		if (current < limit && !(state->start_untried && current > min) &&
			state->hot_windows >= state->hot_needed &&
			state->recent >= n &&
			(!state->grow_waits_still ||
			 recent_still(state, AUTO_TRIAL_WINDOWS_MAX)))
		{
			target = Min(current * 2, limit);
			reason = AUTO_REASON_GROW;
			state->grow_waits_still = false;
			trial_begin(state, current, target, n,
						trial_margin(state->spread, gain, n));
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
				state->start_untried = false;
				state->last_shrink_from = current;
				state->since_shrink_s = 0;
				state->since_settled_s = 0;
				state->grown_load = 0;
				grow_backoff(state, target);
			}
			state->quiet_windows = 0;
		}
	}
	else
	{
		state->quiet_windows = 0;
		state->hot_windows = 0;
	}

	/*
	 * Contended, and held long enough at a number above the floor: try the
	 * halving.  The start is a guess and a kept grow a judgement on noisy
	 * windows; only a trial downwards can tell that fewer locks, which cost
	 * every flush and every all-lock acquisition less, do as well.
	 */
	if (reason == NULL && !quiet && current > min &&
		(state->descending ||
		 state->since_settled_s >=
		 down_hold(state, current) ||
		 grown_for_another_load(state)))
	{
		int			n = trial_windows_needed(state->spread, AUTO_KEEP_MIN_GAIN);

		/*
		 * Nothing presses: wait until the load has held still for as many
		 * windows as a trial can have, so that a burst does not judge it. In
		 * a descent, for the windows the trial's baseline takes: the halving
		 * before was judged on windows whose load held within
		 * AUTO_TRIAL_MAX_LOAD_CHANGE of its baseline's, so the load has held
		 * still all along, and the baseline's own windows show it still
		 * holds.
		 */
		if (recent_still(state, state->descending && state->last_down_from > 0 ?
						 n : AUTO_TRIAL_WINDOWS_MAX))
		{
			target = Max(current / 2, min);
			reason = AUTO_REASON_TRY_FEWER;
			trial_begin(state, current, target, n,
						trial_margin(state->spread, AUTO_KEEP_MIN_GAIN, n));
			state->hot_windows = 0;

			/*
			 * The best rate of the descent, under its load: each halving is
			 * judged against it as well as against its own baseline.
			 */
			if (!state->descending ||
				load_moved(state, state->trial_load, n,
						   state->descent_load, state->descent_windows))
			{
				state->descent_rate = state->trial_rate;
				state->descent_top = current;
				state->descent_from = current;
				state->descent_load = state->trial_load;
				state->descent_windows = n;
			}
			else if (state->trial_rate >= state->descent_rate)
			{
				/* a tie goes to fewer */
				state->descent_rate = state->trial_rate;
				state->descent_top = current;
			}
		}
	}

	if (target != current)
		recent_forget(state);
	verdict->target = target;
	verdict->reason = reason;
}
