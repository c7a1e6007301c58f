/*-------------------------------------------------------------------------
 *
 * test_auto_rules.c
 *		Unit tests of auto mode's rules (walscale_auto_rules.c): the CPUs
 *		that count, the start and bounds for 2, 16, 96 and 480 CPUs, and
 *		synthetic windows that put each rule just below and at its boundary,
 *		the trial of a grow, the ceiling, the backoff and its decay, the
 *		lock-use hysteresis, a ramp and steady loads.  Prints TAP.
 *
 * Expected values are derived from the header's constants where they can
 * be, so that a retuned constant keeps the tests valid while a broken rule
 * fails them.  t/010_auto_rules.pl builds this file with the compiler and
 * flags of the server under test and runs it; no server is needed.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include <math.h>
#include <stdarg.h>

#include "walscale_auto_rules.h"

/* the core patch's XLOG_INSERT_LOCKS_DEFAULT and XLOG_INSERT_LOCKS_MAX */
#define STOCK_LOCKS		8
#define CORE_MAX_LOCKS	1024
#define MOST_LOCKS		4096	/* the most any test window has */

/*
 * The default window: walscale.auto_interval's 10 s, 16 backends on 16
 * CPUs, bounds 8 (walscale.auto_min_locks' default) to 128.  16000
 * acquisitions are 100 per s per backend.  The shares used are k/16 or the
 * thresholds, which these figures give exactly (checked below), so that
 * "at the boundary" is at it and not a rounding off it.
 */
#define WINDOW_S		10.0
#define BACKENDS		16.0
#define CPUS			16
#define MIN_LOCKS		STOCK_LOCKS
#define MAX_LOCKS		128
#define ACQUISITIONS	16000
#define WAITS			100

#define HOT_SHARE		0.25	/* well above the grow threshold */
#define LUKEWARM_SHARE	0.02	/* between the thresholds */

/* windows of WINDOW_S in an interval of s seconds */
#define WINDOWS_IN(s)	((int) ((s) / WINDOW_S))

static int	tests_run = 0;
static int	tests_failed = 0;

/* the verdict on the window decide() judged last */
static AutoVerdict last_verdict;

/* per-lock acquisitions of the window built last */
static uint64 lock_use[MOST_LOCKS];

/* the host the windows are built for: its CPUs and its max */
static int	host_cpus = CPUS;
static int	host_max = MAX_LOCKS;

static void ok(bool pass, const char *fmt,...) pg_attribute_printf(2, 3);

static void
ok(bool pass, const char *fmt,...)
{
	va_list		args;

	tests_run++;
	if (!pass)
		tests_failed++;
	printf("%s %d - ", pass ? "ok" : "not ok", tests_run);
	va_start(args, fmt);
	vprintf(fmt, args);
	va_end(args);
	printf("\n");
}

static void is_int(int got, int expected, const char *fmt,...) pg_attribute_printf(3, 4);

static void
is_int(int got, int expected, const char *fmt,...)
{
	va_list		args;
	char		what[256];

	va_start(args, fmt);
	vsnprintf(what, sizeof(what), fmt, args);
	va_end(args);
	ok(got == expected, "%s", what);
	if (got != expected)
		printf("#   got %d, expected %d\n", got, expected);
}

static bool
reason_is(const char *reason)
{
	if (reason == NULL || last_verdict.reason == NULL)
		return reason == last_verdict.reason;
	return strcmp(last_verdict.reason, reason) == 0;
}

static int
max_for(int cpus)
{
	return walscale_rules_max_locks(cpus, STOCK_LOCKS, CORE_MAX_LOCKS);
}

static int
start_for(int cpus)
{
	return walscale_rules_start_locks(cpus, STOCK_LOCKS, CORE_MAX_LOCKS);
}

static void
set_host(int cpus)
{
	host_cpus = cpus;
	host_max = max_for(cpus);
}

/* the index of a number's holds in AutoRulesState */
static int
level_of(int locks)
{
	int			level = 0;

	while ((2 << level) <= locks)
		level++;
	return level;
}

static int
log2_of(int n)
{
	int			l = 0;

	while ((1 << (l + 1)) <= n)
		l++;
	return l;
}

/* the sleep that makes share of backends' time over window_s */
static uint64
blocked_ns_for(double share, double backends, double window_s)
{
	return (uint64) rint(share * backends * window_s * 1e9);
}

/*
 * Locks 0 to n/2 - 1 used, the rest not: a shrink by half merges no two
 * used locks.
 */
static void
use_low_half(int locks)
{
	memset(lock_use, 0, sizeof(lock_use));
	for (int i = 0; i < Max(locks / 2, 1); i++)
		lock_use[i] = 1000;
}

/* only the locks given used, the list ending with -1 */
static void
use_only(int lock,...)
{
	va_list		args;

	memset(lock_use, 0, sizeof(lock_use));
	va_start(args, lock);
	for (int i = lock; i >= 0; i = va_arg(args, int))
		lock_use[i] = 1000;
	va_end(args);
}

/* a default window on locks whose backends slept share of their time */
static AutoWindowFigures
window_at(int locks, double share)
{
	AutoWindowFigures w;

	memset(&w, 0, sizeof(w));
	w.acquisitions = ACQUISITIONS;
	w.blocking_waits = WAITS;
	w.blocked_ns = blocked_ns_for(share, BACKENDS, WINDOW_S);
	use_low_half(locks);
	w.lock_acquisitions = lock_use;
	w.active_locks = locks;
	w.backends = BACKENDS;
	w.window_s = WINDOW_S;
	w.cpus = host_cpus;
	w.min_locks = MIN_LOCKS;
	w.max_locks = host_max;
	return w;
}

static AutoWindowFigures
hot_window(int locks)
{
	return window_at(locks, HOT_SHARE);
}

static AutoWindowFigures
lukewarm_window(int locks)
{
	return window_at(locks, LUKEWARM_SHARE);
}

static AutoWindowFigures
quiet_window(int locks)
{
	return window_at(locks, 0);
}

/* no acquisition at all */
static AutoWindowFigures
idle_window(int locks)
{
	AutoWindowFigures w = window_at(locks, 0);

	w.acquisitions = 0;
	w.blocking_waits = 0;
	memset(lock_use, 0, sizeof(lock_use));
	return w;
}

/*
 * After a grow from a hot window: the share down to LUKEWARM_SHARE and the
 * rate up by a quarter, far more than the trial asks, so the grow is kept
 * and the window is neither hot nor quiet.
 */
static AutoWindowFigures
relieved_window(int locks)
{
	AutoWindowFigures w = window_at(locks, LUKEWARM_SHARE);

	w.acquisitions = ACQUISITIONS + ACQUISITIONS / 4;
	return w;
}

/*
 * A load that each doubling of the locks relieves up to model_knee locks,
 * and more do not: the share is model_share at model_from locks and halves
 * at each doubling up to the knee; an active backend inserts in the time it
 * does not sleep, so its rate rises as the share falls.
 */
static int	model_from;
static int	model_knee;
static double model_share;

static AutoWindowFigures
model_window(int locks)
{
	double		share = Min(model_share * model_from / Min(locks, model_knee),
							0.99);
	AutoWindowFigures w = window_at(locks, share);

	w.acquisitions = (uint64) (ACQUISITIONS * (1.0 - share) /
							   (1.0 - model_share));
	return w;
}

static void
set_model(int from, int knee, double share)
{
	model_from = from;
	model_knee = knee;
	model_share = share;
}

/*
 * walscale_rules_begin(), with the noise measured as none (below), and the
 * number begun at taken as measured: its halving waits for its hold, and
 * contention grows it, as any number's (test_start tests the start's)
 */
static int
calm_begin(AutoRulesState *state, int locks, int min, int max)
{
	int			target = walscale_rules_begin(state, locks, min, max);

	state->spread = 0;
	state->load_spread = 0;
	state->descending = false;
	state->start_untried = false;
	return target;
}

/*
 * As if a halving's look-past had been tried under the load of the trial
 * on now: a halving that hurts is undone at once (test_look_past tests the
 * look-past itself)
 */
static void
looked_past(AutoRulesState *state)
{
	state->looked_past_load = state->trial_load;
}

/*
 * As if a grow's look-past had been tried under the load of the default
 * windows, from the most locks: a grow that does not help there is undone
 * at once
 * (test_look_past_grow tests the look-past itself)
 */
static void
looked_past_grow(AutoRulesState *state)
{
	state->looked_past_grow_load = BACKENDS;
	state->looked_past_grow_windows = 1;
	state->looked_past_grow_from = CORE_MAX_LOCKS;
}

/*
 * A state as walscale_rules_begin() leaves it, but with the noise measured
 * as none: a trial is judged on one window, as the windows here, each like
 * the last, would teach it after a while (test_spread tests that); and with
 * a grow's look-past tried under the default windows' load.
 */
static AutoRulesState
fresh_state(int locks)
{
	AutoRulesState state;

	(void) calm_begin(&state, locks, MIN_LOCKS, host_max);
	looked_past_grow(&state);
	return state;
}

static int
decide(AutoRulesState *state, AutoWindowFigures w)
{
	walscale_rules_decide(&w, state, &last_verdict);
	return last_verdict.target;
}

/* the target after n windows like w from a fresh state, none applied */
static int
after_windows(int n, AutoWindowFigures w)
{
	AutoRulesState state = fresh_state(w.active_locks);
	int			target = w.active_locks;

	for (int i = 0; i < n; i++)
		target = decide(&state, w);
	return target;
}

/*
 * n windows like make_window(locks) on the number in effect, each change
 * applied; returns the number reached and adds the changes to *changes.
 */
static int
run_windows(AutoRulesState *state, int locks, int n,
			AutoWindowFigures (*make_window) (int), int *changes)
{
	for (int i = 0; i < n; i++)
	{
		int			target = decide(state, make_window(locks));

		if (target != locks)
			(*changes)++;
		locks = target;
	}
	return locks;
}

/* windows like make_window(locks) up to the first change (-1: none) */
static int
windows_to_change(AutoRulesState *state, int locks,
				  AutoWindowFigures (*make_window) (int), int window_limit)
{
	for (int i = 1; i <= window_limit; i++)
	{
		if (decide(state, make_window(locks)) != locks)
			return i;
	}
	return -1;
}

/* from a fresh state on 16: two hot windows, a grow to 32 on trial */
static AutoRulesState
grown_state(void)
{
	AutoRulesState state = fresh_state(16);

	(void) decide(&state, hot_window(16));
	(void) decide(&state, hot_window(16));
	return state;
}

/*
 * Whether the window just decided kept a grow from from: neither undone nor
 * looked past, whatever comes after it
 */
static bool
grow_kept(const AutoRulesState *state, int from)
{
	return state->last_grow_from == from && state->since_grow_s == 0;
}

/*
 * grown_state() then a window at 32 whose rate rose by AUTO_LOOK_AHEAD_PART
 * of the margin, as contended: the look-ahead to 64 on trial from 16
 */
static AutoWindowFigures
small_gain_window(void)
{
	double		gain = Min(AUTO_KEEP_MIN_GAIN,
						   AUTO_KEEP_GAIN_OF_SHARE * HOT_SHARE);
	AutoWindowFigures w = window_at(32, HOT_SHARE);

	w.acquisitions = (uint64) ceil(ACQUISITIONS *
								   (1.0 + gain * AUTO_LOOK_AHEAD_PART));
	return w;
}

static AutoRulesState
looked_ahead_state(void)
{
	AutoRulesState state = grown_state();

	(void) decide(&state, small_gain_window());
	return state;
}

static void
test_cpus(void)
{
	is_int(walscale_rules_cpus(96, 96, 0), 96,
		   "cpus: 96 online, 96 in the mask, no quota: 96");
	is_int(walscale_rules_cpus(96, 96, 4.0), 4,
		   "cpus: a 4-CPU quota on a 96-CPU host: 4");
	is_int(walscale_rules_cpus(96, 8, 0), 8,
		   "cpus: 8 in the affinity mask of 96 online: 8");
	is_int(walscale_rules_cpus(96, 8, 4.0), 4,
		   "cpus: mask 8, quota 4: the quota");
	is_int(walscale_rules_cpus(96, 2, 4.0), 2,
		   "cpus: mask 2, quota 4: the mask");
	is_int(walscale_rules_cpus(2, 8, 4.0), 2,
		   "cpus: 2 online, mask 8, quota 4: those online");
	is_int(walscale_rules_cpus(96, 96, 2.5), 3,
		   "cpus: a quota of 2.5 CPUs rounds up to 3");
	is_int(walscale_rules_cpus(96, 96, 2.0), 2,
		   "cpus: a quota of 2.0 CPUs is 2");
	is_int(walscale_rules_cpus(96, 96, 0.25), 1,
		   "cpus: a quota of a quarter CPU is 1");
	is_int(walscale_rules_cpus(96, 0, 0), 96,
		   "cpus: a zero mask and quota are ignored");
	is_int(walscale_rules_cpus(96, -1, -2.0), 96,
		   "cpus: a negative mask and quota are ignored");
	is_int(walscale_rules_cpus(0, 8, 0), 8,
		   "cpus: zero online is ignored");
	is_int(walscale_rules_cpus(-1, -1, 3.0), 3,
		   "cpus: only the quota known: the quota");
	is_int(walscale_rules_cpus(8192, 0, 0), 4096,
		   "cpus: 8192 online are capped at 4096");
	is_int(walscale_rules_cpus(5000, 6000, 7000.0), 4096,
		   "cpus: all above 4096: 4096");
	is_int(walscale_rules_cpus(0, 0, 0), 1,
		   "cpus: nothing known: 1, whose bounds are PostgreSQL's 8");

	/* issue 16: such a container started at 128 locks */
	is_int(start_for(walscale_rules_cpus(96, 96, 4.0)), STOCK_LOCKS,
		   "cpus: a 4-CPU container on a 96-CPU host starts at 8");
}

static void
test_bounds_and_start(void)
{
	is_int(max_for(1), 8, "max at 1 CPU: PostgreSQL's 8");
	is_int(max_for(2), 16, "max at 2 CPUs: 8 per CPU");
	is_int(max_for(16), 128, "max at 16 CPUs: 8 per CPU");
	is_int(max_for(65), 1024, "max at 65 CPUs: 520 rounded up to 1024");
	is_int(max_for(96), 1024, "max at 96 CPUs: 768 rounded up to 1024");
	is_int(max_for(480), 1024, "max at 480 CPUs: capped at the core's 1024");
	is_int(walscale_rules_max_locks(480, STOCK_LOCKS, 4096), 4096,
		   "max at 480 CPUs with 4096 slots: 3840 rounded up to 4096");

	is_int(start_for(1), 8, "start at 1 CPU: PostgreSQL's 8");
	is_int(start_for(2), 8, "start at 2 CPUs: PostgreSQL's 8");
	is_int(start_for(9), 16, "start at 9 CPUs: rounded up to 16");
	is_int(start_for(16), 16, "start at 16 CPUs: one per CPU");
	is_int(start_for(96), 128, "start at 96 CPUs: rounded up to 128");
	is_int(start_for(480), 512, "start at 480 CPUs: rounded up to 512");
	is_int(start_for(2048), 1024, "start at 2048 CPUs: no more than the max");

	/* walscale.auto_min_locks defaults to PostgreSQL's 8 */
	is_int(walscale_rules_min_locks(STOCK_LOCKS, max_for(2)), 8,
		   "min at 2 CPUs: 8 by default");
	is_int(walscale_rules_min_locks(STOCK_LOCKS, max_for(16)), 8,
		   "min at 16 CPUs: 8 by default");
	is_int(walscale_rules_min_locks(STOCK_LOCKS, max_for(96)), 8,
		   "min at 96 CPUs: 8 by default");
	is_int(walscale_rules_min_locks(STOCK_LOCKS, max_for(480)), 8,
		   "min at 480 CPUs: 8 by default");
	is_int(walscale_rules_min_locks(2, max_for(16)), 2,
		   "min: a DBA minimum of 2 is taken");
	is_int(walscale_rules_min_locks(1, max_for(2)), 1,
		   "min: a DBA minimum of 1 is taken");
	is_int(walscale_rules_min_locks(64, max_for(2)), 16,
		   "min: a DBA minimum of 64 above the max (16 at 2 CPUs) is the max");
	is_int(walscale_rules_min_locks(2048, max_for(480)), 1024,
		   "min: a DBA minimum of 2048 at 480 CPUs is the max, 1024");
}

static void
test_begin(void)
{
	AutoRulesState state;

	is_int(walscale_rules_begin(&state, 1024, 8, max_for(2)), 16,
		   "begin above the max (1024 at 2 CPUs): down to 16");
	is_int(walscale_rules_begin(&state, 4, 8, max_for(2)), 8,
		   "begin below the min: up to 8");
	is_int(walscale_rules_begin(&state, 16, 8, max_for(2)), 16,
		   "begin within the bounds: kept");

	memset(&state, 0x5a, sizeof(state));
	(void) walscale_rules_begin(&state, 32, 8, CORE_MAX_LOCKS);
	ok(state.hot_windows == 0 && state.quiet_windows == 0 &&
	   state.quiet_needed == AUTO_QUIET_WINDOWS &&
	   state.since_backoff_s == 0 && state.last_shrink_from == 0 &&
	   state.trial_from == 0 && state.ceiling == 0 &&
	   state.grow_hold_s[level_of(32)] == AUTO_CEILING_HOLD_S &&
	   state.down_hold_s[level_of(32)] == AUTO_DOWN_HOLD_S &&
	   state.hot_needed == AUTO_HOT_WINDOWS && state.recent == 0 &&
	   state.spread == AUTO_SPREAD_START &&
	   state.load_spread == AUTO_SPREAD_START && state.since_settled_s == 0 &&
	   state.grown_load == 0 && !state.grow_waits_still,
	   "begin forgets streaks, trial, ceiling, holds, backoffs, recent windows, and starts both spreads at AUTO_SPREAD_START");
}

static void
test_figures(void)
{
	AutoRulesState state = fresh_state(16);
	AutoWindowFigures w = window_at(16, HOT_SHARE);

	use_only(0, 3, 5, 9, 15, -1);
	(void) decide(&state, w);
	ok(last_verdict.waits_per_1000 == WAITS * 1000.0 / ACQUISITIONS,
	   "figures: waits per 1000 acquisitions");
	ok(last_verdict.blocked_ms_per_s == HOT_SHARE * BACKENDS * 1000.0,
	   "figures: ms blocked per s, summed over backends");
	ok(last_verdict.blocked_share == HOT_SHARE,
	   "figures: the blocked share");
	ok(last_verdict.rate == ACQUISITIONS / WINDOW_S / BACKENDS,
	   "figures: acquisitions per s per running backend");
	is_int(last_verdict.locks_used, 5, "figures: 5 of 16 locks used");

	state = fresh_state(16);
	is_int(decide(&state, idle_window(16)), 16,
		   "figures: a window without acquisitions holds");
	ok(last_verdict.waits_per_1000 == 0 && reason_is(NULL),
	   "figures: a window without acquisitions: 0 waits per 1000, no reason");

	/* the exactness the boundaries below rely on */
	(void) decide(&state, window_at(16, AUTO_GROW_BLOCKED_SHARE));
	ok(last_verdict.blocked_share == AUTO_GROW_BLOCKED_SHARE,
	   "figures: a window at the grow threshold has exactly its share");
	(void) decide(&state, window_at(16, AUTO_SHRINK_BLOCKED_SHARE));
	ok(last_verdict.blocked_share == AUTO_SHRINK_BLOCKED_SHARE,
	   "figures: a window at the shrink threshold has exactly its share");
}

static void
test_thresholds(void)
{
	AutoWindowFigures w;
	AutoRulesState state;
	int			changes = 0;
	int			reasons = 0;

	/* the share: grow at or above the threshold */
	w = window_at(16, AUTO_GROW_BLOCKED_SHARE);
	w.blocked_ns--;
	is_int(after_windows(AUTO_HOT_WINDOWS, w), 16,
		   "grow: a share just below AUTO_GROW_BLOCKED_SHARE holds");
	is_int(after_windows(AUTO_HOT_WINDOWS,
						 window_at(16, AUTO_GROW_BLOCKED_SHARE)), 32,
		   "grow: a share at AUTO_GROW_BLOCKED_SHARE doubles");

	/* the waits: a share of few sleeps is noise */
	w = hot_window(16);
	w.blocking_waits = AUTO_MIN_WAITS - 1;
	is_int(after_windows(AUTO_HOT_WINDOWS, w), 16,
		   "grow: AUTO_MIN_WAITS - 1 sleeps hold");
	w.blocking_waits = AUTO_MIN_WAITS;
	is_int(after_windows(AUTO_HOT_WINDOWS, w), 32,
		   "grow: AUTO_MIN_WAITS sleeps double");

	/* the acquisitions: fewer are not judged, however high the share */
	w = hot_window(16);
	w.acquisitions = AUTO_MIN_ACQUISITIONS - 1;
	is_int(after_windows(AUTO_HOT_WINDOWS, w), 16,
		   "grow: AUTO_MIN_ACQUISITIONS - 1 acquisitions hold");
	w.acquisitions = AUTO_MIN_ACQUISITIONS;
	is_int(after_windows(AUTO_HOT_WINDOWS, w), 32,
		   "grow: AUTO_MIN_ACQUISITIONS acquisitions double");

	/* the hot windows in a row */
	is_int(after_windows(AUTO_HOT_WINDOWS - 1, hot_window(16)), 16,
		   "grow: AUTO_HOT_WINDOWS - 1 hot windows hold");
	state = fresh_state(16);
	for (int i = 0; i < AUTO_HOT_WINDOWS; i++)
		(void) decide(&state, hot_window(16));
	is_int(last_verdict.target, 32, "grow: AUTO_HOT_WINDOWS hot windows double");
	ok(reason_is(AUTO_REASON_GROW), "grow: the reason is AUTO_REASON_GROW");

	/* the share: quiet below the threshold */
	is_int(after_windows(AUTO_QUIET_WINDOWS,
						 window_at(16, AUTO_SHRINK_BLOCKED_SHARE)), 16,
		   "shrink: a share at AUTO_SHRINK_BLOCKED_SHARE holds");
	w = window_at(16, AUTO_SHRINK_BLOCKED_SHARE);
	w.blocked_ns--;
	is_int(after_windows(AUTO_QUIET_WINDOWS, w), 8,
		   "shrink: a share just below AUTO_SHRINK_BLOCKED_SHARE halves");

	/* the quiet windows in a row */
	is_int(after_windows(AUTO_QUIET_WINDOWS - 1, quiet_window(16)), 16,
		   "shrink: AUTO_QUIET_WINDOWS - 1 quiet windows hold");
	state = fresh_state(16);
	for (int i = 0; i < AUTO_QUIET_WINDOWS; i++)
		(void) decide(&state, quiet_window(16));
	is_int(last_verdict.target, 8,
		   "shrink: AUTO_QUIET_WINDOWS quiet windows halve");
	ok(reason_is(AUTO_REASON_SHRINK), "shrink: the reason is AUTO_REASON_SHRINK");
	/* a "shrink" to the floor itself would be recorded as a change */
	state = fresh_state(8);
	for (int i = 0; i < 3 * AUTO_QUIET_WINDOWS; i++)
	{
		if (decide(&state, quiet_window(8)) != 8)
			changes++;
		if (last_verdict.reason != NULL)
			reasons++;
	}
	is_int(changes, 0, "shrink: at the floor (8) quiet windows hold");
	is_int(reasons, 0, "shrink: at the floor no reason is given");
	state = fresh_state(32);
	(void) windows_to_change(&state, 32, quiet_window, 100);
	is_int(windows_to_change(&state, 16, quiet_window, 100),
		   AUTO_QUIET_WINDOWS,
		   "shrink: after a shrink, AUTO_QUIET_WINDOWS more to the next");
}

static void
test_streaks(void)
{
	AutoRulesState state;
	AutoWindowFigures w;

	state = fresh_state(16);
	(void) decide(&state, hot_window(16));
	(void) decide(&state, lukewarm_window(16));
	is_int(decide(&state, hot_window(16)), 16,
		   "streak: a window between the thresholds breaks the hot one");
	state = fresh_state(16);
	(void) decide(&state, hot_window(16));
	(void) decide(&state, quiet_window(16));
	is_int(decide(&state, hot_window(16)), 16,
		   "streak: a quiet window breaks the hot one");
	state = fresh_state(16);
	(void) decide(&state, hot_window(16));
	w = hot_window(16);
	w.acquisitions = AUTO_MIN_ACQUISITIONS - 1;
	(void) decide(&state, w);
	is_int(decide(&state, hot_window(16)), 16,
		   "streak: a window with too little data breaks the hot one");

	state = fresh_state(16);
	for (int i = 0; i < AUTO_QUIET_WINDOWS - 1; i++)
		(void) decide(&state, quiet_window(16));
	(void) decide(&state, lukewarm_window(16));
	is_int(decide(&state, quiet_window(16)), 16,
		   "streak: a window between the thresholds breaks the quiet one");
	state = fresh_state(16);
	for (int i = 0; i < AUTO_QUIET_WINDOWS - 1; i++)
		(void) decide(&state, quiet_window(16));
	(void) decide(&state, hot_window(16));
	is_int(decide(&state, quiet_window(16)), 16,
		   "streak: a hot window breaks the quiet one");

	/* too little data is quiet: nothing runs, the locks are not needed */
	is_int(after_windows(AUTO_QUIET_WINDOWS, idle_window(16)), 8,
		   "streak: AUTO_QUIET_WINDOWS idle windows halve");
	w = hot_window(16);
	w.acquisitions = AUTO_MIN_ACQUISITIONS - 1;
	is_int(after_windows(AUTO_QUIET_WINDOWS, w), 8,
		   "streak: windows with too little data count as quiet, whatever their share");
	state = fresh_state(16);
	for (int i = 0; i < AUTO_QUIET_WINDOWS - 1; i++)
		(void) decide(&state, quiet_window(16));
	is_int(decide(&state, idle_window(16)), 8,
		   "streak: an idle window continues the quiet one");
}

static void
test_trial(void)
{
	AutoRulesState state;
	AutoWindowFigures w;
	double		half = HOT_SHARE / 2;
	double		gain = Min(AUTO_KEEP_MIN_GAIN,
						   AUTO_KEEP_GAIN_OF_SHARE * HOT_SHARE);
	uint64		at_gain = (uint64) ceil(ACQUISITIONS * (1.0 + gain));
	double		tolerance;

	state = grown_state();
	ok(state.trial_from == 16 && state.trial_needed == 1 &&
	   state.trial_margin == gain &&
	   state.trial_rate == ACQUISITIONS / WINDOW_S / BACKENDS &&
	   state.trial_load == BACKENDS &&
	   state.trial_wait_ns == (double) blocked_ns_for(HOT_SHARE, BACKENDS, WINDOW_S) / ACQUISITIONS,
	   "trial: the grow from 16 is on trial with its window's figures, judged on one window without noise");

	/*
	 * The rate gain: AUTO_KEEP_MIN_GAIN.  Short of it, a window still hot
	 * looks ahead (test_look_ahead), so this one is calm.
	 */
	w = window_at(32, LUKEWARM_SHARE);
	w.acquisitions = at_gain - 1;
	is_int(decide(&state, w), 16,
		   "trial: a rate gain one acquisition short of AUTO_KEEP_MIN_GAIN, no longer contended, undoes the grow");
	ok(reason_is(AUTO_REASON_UNDO), "trial: the reason is AUTO_REASON_UNDO");
	state = grown_state();
	w = window_at(32, HOT_SHARE);
	w.acquisitions = at_gain + 1;
	is_int(decide(&state, w), 64,
		   "trial: a rate gain of AUTO_KEEP_MIN_GAIN keeps the grow (and, still hot, doubles again)");

	/* the sleep per acquisition must not rise, whatever the rate */
	state = grown_state();
	w = window_at(32, HOT_SHARE);
	w.acquisitions = 2 * ACQUISITIONS;
	w.blocked_ns = 2 * blocked_ns_for(HOT_SHARE, BACKENDS, WINDOW_S) + 1;
	is_int(decide(&state, w), 16,
		   "trial: a sleep per acquisition risen by a fraction of a nanosecond undoes, whatever the rate");
	state = grown_state();
	w.blocked_ns--;
	(void) decide(&state, w);
	ok(grow_kept(&state, 16),
	   "trial: the same sleep per acquisition, twice the share and the rate, keeps");

	/* a small share asks a smaller gain: half of it */
	state = fresh_state(16);
	w = window_at(16, AUTO_GROW_BLOCKED_SHARE);
	(void) decide(&state, w);
	(void) decide(&state, w);
	gain = AUTO_KEEP_GAIN_OF_SHARE * AUTO_GROW_BLOCKED_SHARE;
	ok(gain < AUTO_KEEP_MIN_GAIN && state.trial_from == 16,
	   "trial: a grow at AUTO_GROW_BLOCKED_SHARE, which can free less than AUTO_KEEP_MIN_GAIN");
	w = window_at(32, LUKEWARM_SHARE);
	w.acquisitions = (uint64) ceil(ACQUISITIONS * (1.0 + gain)) - 1;
	is_int(decide(&state, w), 16,
		   "trial: one acquisition short of half that share, no longer contended, undoes");
	state = fresh_state(16);
	(void) decide(&state, window_at(16, AUTO_GROW_BLOCKED_SHARE));
	(void) decide(&state, window_at(16, AUTO_GROW_BLOCKED_SHARE));
	w.acquisitions += 2;
	(void) decide(&state, w);
	ok(grow_kept(&state, 16),
	   "trial: half that share keeps");

	state = grown_state();
	w = window_at(32, half);
	is_int(decide(&state, w), 16,
		   "trial: the share halved but the rate no higher undoes");

	/* the rate is per running backend: per backend up to the CPUs */
	state = grown_state();
	w = window_at(32, half);
	w.backends = BACKENDS * (1.0 - AUTO_TRIAL_MAX_LOAD_CHANGE);
	w.blocked_ns = blocked_ns_for(half, w.backends, WINDOW_S);
	w.acquisitions = (uint64) (ACQUISITIONS * (1.0 - AUTO_TRIAL_MAX_LOAD_CHANGE));
	is_int(decide(&state, w), 16,
		   "trial: fewer backends, each as fast as before: undone");
	state = grown_state();
	w = window_at(32, half);
	w.backends = 2 * BACKENDS;
	w.blocked_ns = blocked_ns_for(half, w.backends, WINDOW_S);
	w.acquisitions = (uint64) (ACQUISITIONS * (1.0 + 2 * AUTO_KEEP_MIN_GAIN));
	is_int(decide(&state, w), 32,
		   "trial: twice the backends, each CPU inserting faster: another load, whatever the rate");
	ok(state.trial_from == 16 && state.trial_judged == 0,
	   "trial: the grow stays on trial, that window not counted");

	/* more backends than CPUs: the rate is per CPU, whatever their number */
	state = fresh_state(16);
	w = window_at(16, HOT_SHARE);
	w.backends = 2 * CPUS;
	w.blocked_ns = blocked_ns_for(HOT_SHARE, w.backends, WINDOW_S);
	(void) decide(&state, w);
	(void) decide(&state, w);
	ok(state.trial_from == 16 && state.trial_load == 2 * CPUS,
	   "trial: a grow with twice as many backends as CPUs");
	w = window_at(32, half);
	w.backends = 2 * CPUS + 2;
	w.blocked_ns = blocked_ns_for(half, w.backends, WINDOW_S);
	w.acquisitions = (uint64) (ACQUISITIONS * (1.0 + 4 * AUTO_KEEP_MIN_GAIN / 3));
	(void) decide(&state, w);
	ok(grow_kept(&state, 16),
	   "trial: two more backends, all CPUs inserting faster: kept, though each backend is slower");

	/* beyond the CPUs too: a ramp from 32 to 40 backends on 16 CPUs */
	state = fresh_state(16);
	w = window_at(16, HOT_SHARE);
	w.backends = 2 * CPUS;
	w.blocked_ns = blocked_ns_for(HOT_SHARE, w.backends, WINDOW_S);
	(void) decide(&state, w);
	(void) decide(&state, w);
	w = window_at(32, HOT_SHARE);
	w.backends = 2.5 * CPUS;
	w.blocked_ns = blocked_ns_for(HOT_SHARE, w.backends, WINDOW_S);
	is_int(decide(&state, w), 32,
		   "trial: 32 to 40 backends on 16 CPUs is a load change: the grow stays on trial");

	/*
	 * A load that changed cannot judge the grow: it stays on trial.  As many
	 * backends asleep as in the baseline (HOT_SHARE of BACKENDS), so that the
	 * change explains none of the load's.
	 */
	state = grown_state();
	w = window_at(32, HOT_SHARE);
	w.backends = BACKENDS * (1.0 - AUTO_TRIAL_MAX_LOAD_CHANGE) - 0.01;
	is_int(decide(&state, w), 32,
		   "trial: active backends changed by more than AUTO_TRIAL_MAX_LOAD_CHANGE, as many asleep: the grow stays");
	ok(reason_is(NULL) && state.trial_from == 16 && state.trial_judged == 0 &&
	   state.trial_windows == 1 && state.ceiling == 0,
	   "trial: still on trial, that window not counted, no ceiling");
	state = grown_state();
	w.backends = BACKENDS * (1.0 - AUTO_TRIAL_MAX_LOAD_CHANGE) + 0.01;
	w.acquisitions = (uint64) (ACQUISITIONS * w.backends / BACKENDS);
	is_int(decide(&state, w), 16,
		   "trial: changed by less, the same rate: undone");

	/*
	 * The backends the grow woke may leave: a load down by the tolerance and
	 * by as many as were asleep is the same load; by more, another.
	 */
	state = grown_state();
	w = window_at(32, 0);
	w.backends = BACKENDS * (1.0 - AUTO_TRIAL_MAX_LOAD_CHANGE - HOT_SHARE) + 0.01;
	w.acquisitions = (uint64) (ACQUISITIONS * w.backends / BACKENDS);
	is_int(decide(&state, w), 16,
		   "trial: down by AUTO_TRIAL_MAX_LOAD_CHANGE and the HOT_SHARE of backends no longer asleep: judged (the same rate: undone)");
	state = grown_state();
	w.backends -= 0.02;
	is_int(decide(&state, w), 32,
		   "trial: down by more: the grow stays on trial");
	state = grown_state();
	w = window_at(32, 0);
	w.backends = BACKENDS * (1.0 + AUTO_TRIAL_MAX_LOAD_CHANGE) + 0.01;
	is_int(decide(&state, w), 32,
		   "trial: up by more than AUTO_TRIAL_MAX_LOAD_CHANGE while fewer sleep: the grow stays on trial");
	state = grown_state();
	w = window_at(32, HOT_SHARE);
	w.backends = BACKENDS * (1.0 + AUTO_TRIAL_MAX_LOAD_CHANGE) + 0.01;
	w.blocked_ns = blocked_ns_for(HOT_SHARE, w.backends, WINDOW_S);
	is_int(decide(&state, w), 32,
		   "trial: up by more than AUTO_TRIAL_MAX_LOAD_CHANGE with more asleep: more load, not the grow's doing: the grow stays on trial");

	/*
	 * The load's own noise widens the tolerance: a mean of n windows a side
	 * differs from the baseline's by noise alone by AUTO_TRIAL_Z standard
	 * errors, load_spread * sqrt(pi) / 2 * sqrt(2 / n).
	 */
	state = fresh_state(16);
	state.load_spread = 0.1;
	(void) decide(&state, hot_window(16));
	(void) decide(&state, hot_window(16));
	/* the second window's ratio, the same load, moved the spread to 0 */
	tolerance = AUTO_TRIAL_Z * 0.1 * (1 - AUTO_SPREAD_WEIGHT) *
		sqrt(M_PI) / 2 * sqrt(2.0);
	ok(state.trial_from == 16 && state.trial_needed == 1 &&
	   fabs(state.trial_load_tolerance - tolerance) < 1e-12 &&
	   tolerance > AUTO_TRIAL_MAX_LOAD_CHANGE,
	   "trial: a load spread of 10%%, one window a side: a tolerance of %.1f%%",
	   100 * tolerance);
	w = window_at(32, HOT_SHARE);
	w.backends = BACKENDS * (1.0 - tolerance) + 0.01;
	w.acquisitions = (uint64) (ACQUISITIONS * w.backends / BACKENDS);
	is_int(decide(&state, w), 16,
		   "trial: down by just under that, as many asleep: judged (the same rate: undone)");
	state = fresh_state(16);
	state.load_spread = 0.1;
	(void) decide(&state, hot_window(16));
	(void) decide(&state, hot_window(16));
	w.backends = BACKENDS * (1.0 - tolerance) - 0.01;
	is_int(decide(&state, w), 32,
		   "trial: down by just over it: the grow stays on trial");

	/* a kept grow in a hot window grows again at once: a ramp */
	state = grown_state();
	w = window_at(32, half);
	w.acquisitions = 2 * ACQUISITIONS;
	is_int(decide(&state, w), 64,
		   "trial: a kept grow whose window is still hot doubles again");
	ok(reason_is(AUTO_REASON_GROW) && state.trial_from == 32,
	   "trial: that grow is on trial in turn");

	/* a kept grow in a calm window holds, and the streak starts afresh */
	state = grown_state();
	is_int(decide(&state, relieved_window(32)), 32,
		   "trial: a kept grow in a calm window holds");
	is_int(decide(&state, hot_window(32)), 32,
		   "trial: then one hot window holds");
	is_int(decide(&state, hot_window(32)), 64,
		   "trial: then a second one doubles");

	/* a window whose load stepped is no judge, whatever its rate */
	state = grown_state();
	w = window_at(32, LUKEWARM_SHARE);
	w.backends = BACKENDS * AUTO_LOAD_STEP + 0.01;
	w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
	is_int(decide(&state, w), 32,
		   "trial: a window whose backends stepped AUTO_LOAD_STEP times: the grow stays on trial");
	ok(state.trial_from == 16 && state.trial_judged == 0,
	   "trial: that window not counted");
	is_int(decide(&state, hot_window(32)), 16,
		   "trial: the next, at the baseline's load, judges it: no relief, undone");

	/* an idle window cannot judge: the grow stays on trial */
	state = grown_state();
	is_int(decide(&state, idle_window(32)), 32,
		   "trial: an idle window after a grow holds");
	ok(reason_is(NULL) && state.trial_from == 16 && state.trial_judged == 0 &&
	   state.ceiling == 0,
	   "trial: still on trial, no ceiling");
	is_int(decide(&state, hot_window(32)), 16,
		   "trial: the next window that can judge it does: no relief, undone");

	/* a grow not applied is not judged, and needs its hot windows again */
	state = grown_state();
	is_int(decide(&state, hot_window(16)), 16,
		   "trial: a grow not applied is not undone, one hot window holds");
	ok(reason_is(NULL) && state.trial_from == 0 && state.ceiling == 0,
	   "trial: a grow not applied leaves no ceiling");
	is_int(decide(&state, hot_window(16)), 32,
		   "trial: the next hot window grows again");

	/* the undo */
	state = grown_state();
	is_int(decide(&state, hot_window(32)), 16,
		   "undo: no relief at 32: back to 16");
	ok(reason_is(AUTO_REASON_UNDO) && state.ceiling == 16 &&
	   state.ceiling_left_s == AUTO_CEILING_HOLD_S &&
	   state.grow_hold_s[level_of(16)] == 2 * AUTO_CEILING_HOLD_S,
	   "undo: 16 is the ceiling for AUTO_CEILING_HOLD_S, the next hold from 16 twice that");

	/* walscale.auto_min_locks raised to 12 during the trial */
	state = fresh_state(8);
	(void) decide(&state, hot_window(8));
	(void) decide(&state, hot_window(8));
	w = hot_window(16);
	w.min_locks = 12;
	is_int(decide(&state, w), 12,
		   "undo: a grow from 8 undone with the min at 12: 12, not 8");
	is_int(state.ceiling, 12, "undo: the ceiling is the number undone to");
}

/*
 * A grow whose rate rose by less than the margin, but by AUTO_LOOK_AHEAD_PART
 * of it, in a window still hot, doubles once more, judged against the window
 * before the first doubling; the two are kept or undone together.
 */
static void
test_look_ahead(void)
{
	AutoRulesState state;
	AutoWindowFigures w;
	AutoWindowFigures small_gain;
	double		gain = Min(AUTO_KEEP_MIN_GAIN,
						   AUTO_KEEP_GAIN_OF_SHARE * HOT_SHARE);
	uint64		at_gain = (uint64) ceil(ACQUISITIONS * (1.0 + gain));
	uint64		at_part;
	double		base_rate = ACQUISITIONS / WINDOW_S / BACKENDS;

	/* AUTO_LOOK_AHEAD_PART of the margin, as contended as before */
	small_gain = small_gain_window();
	at_part = small_gain.acquisitions;
	ok(at_part > ACQUISITIONS && at_part < at_gain,
	   "look-ahead: AUTO_LOOK_AHEAD_PART of the margin is a gain, under the margin");

	state = grown_state();
	is_int(decide(&state, small_gain), 64,
		   "look-ahead: AUTO_LOOK_AHEAD_PART of the margin, still hot: 32 doubles to 64");
	ok(reason_is(AUTO_REASON_LOOK_AHEAD) && state.trial_from == 16 &&
	   last_verdict.target > 2 * state.trial_from && state.trial_rate == base_rate &&
	   state.trial_load == BACKENDS && state.trial_judged == 0 &&
	   state.ceiling == 0,
	   "look-ahead: on the same trial, from 16, against the baseline of 16's window, no ceiling");

	/* the rate must rise by that part, the sleep per acquisition must not */
	state = grown_state();
	w = small_gain;
	w.acquisitions = at_part - 1;
	is_int(decide(&state, w), 16,
		   "look-ahead: one acquisition short of AUTO_LOOK_AHEAD_PART of the margin, still hot: undone");
	ok(reason_is(AUTO_REASON_UNDO), "look-ahead: the reason is AUTO_REASON_UNDO");
	state = grown_state();
	w = small_gain;
	w.blocked_ns = (uint64) ceil((double) blocked_ns_for(HOT_SHARE, BACKENDS, WINDOW_S) *
								 at_part / ACQUISITIONS) + 1;
	is_int(decide(&state, w), 16,
		   "look-ahead: the rate up, the sleep per acquisition up by a fraction of a nanosecond: undone");
	state = grown_state();
	w = window_at(32, LUKEWARM_SHARE);
	w.acquisitions = at_part;
	is_int(decide(&state, w), 16,
		   "look-ahead: AUTO_LOOK_AHEAD_PART of the margin, no longer contended: undone");

	/* at the ceiling or the maximum there is no next doubling */
	state = grown_state();
	state.ceiling = 32;
	state.ceiling_left_s = 2 * AUTO_CEILING_HOLD_S;
	is_int(decide(&state, small_gain), 16,
		   "look-ahead: 32 at the ceiling: undone");
	state = fresh_state(MAX_LOCKS / 2);
	(void) decide(&state, hot_window(MAX_LOCKS / 2));
	(void) decide(&state, hot_window(MAX_LOCKS / 2));
	w = small_gain;
	w.active_locks = MAX_LOCKS;
	is_int(decide(&state, w), MAX_LOCKS / 2,
		   "look-ahead: %d at the maximum: undone", MAX_LOCKS);

	/* the look-ahead is judged against 16's window, with the same margin */
	state = looked_ahead_state();
	w = window_at(64, HOT_SHARE);
	w.acquisitions = at_gain - 1;
	is_int(decide(&state, w), 16,
		   "look-ahead: 64 one acquisition short of the margin over 16: both doublings undone, to 16");
	ok(reason_is(AUTO_REASON_UNDO) && state.ceiling == 16 &&
	   state.ceiling_left_s == AUTO_CEILING_HOLD_S &&
	   state.trial_from == 0,
	   "look-ahead: 16 is the ceiling, and no second look-ahead");
	state = looked_ahead_state();
	w = window_at(64, LUKEWARM_SHARE);
	w.acquisitions = at_gain;
	is_int(decide(&state, w), 64,
		   "look-ahead: 64 at the margin over 16: kept");
	ok(reason_is(NULL) && state.trial_from == 0 && state.ceiling == 0,
	   "look-ahead: kept, no ceiling");

	/* kept and still hot: a new grow, on its own trial, may look ahead */
	state = looked_ahead_state();
	w = window_at(64, HOT_SHARE);
	w.acquisitions = at_gain;
	is_int(decide(&state, w), 128,
		   "look-ahead: kept at 64, still hot: doubles again");
	ok(reason_is(AUTO_REASON_GROW) && state.trial_from == 64 &&
	   last_verdict.target == 2 * state.trial_from &&
	   state.trial_rate == at_gain / WINDOW_S / BACKENDS,
	   "look-ahead: that grow is a new trial, from 64 with 64's window, not a look-ahead");

	/* a load change judges neither doubling */
	state = looked_ahead_state();
	w = window_at(64, HOT_SHARE);
	w.backends = BACKENDS * (1.0 + AUTO_TRIAL_MAX_LOAD_CHANGE) + 0.01;
	is_int(decide(&state, w), 64,
		   "look-ahead: the load up by more than AUTO_TRIAL_MAX_LOAD_CHANGE over 16's window: 64 stays on trial");
	ok(reason_is(NULL) && state.trial_from == 16 && state.trial_judged == 0,
	   "look-ahead: still on trial from 16, that window not counted");

	/* walscale.auto_min_locks raised during the look-ahead: follow it */
	state = looked_ahead_state();
	w = window_at(64, HOT_SHARE);
	w.min_locks = 128;
	is_int(decide(&state, w), 128,
		   "look-ahead: the floor raised above 64: to the floor");
	ok(state.trial_from == 0,
	   "look-ahead: the bounds moved: no trial left");
}

/*
 * grown_state() as if no grow had looked past itself: the grow from 16 to
 * 32 on trial, its look-past still to come under the default load
 */
static AutoRulesState
unlooked_grown_state(void)
{
	AutoRulesState state = grown_state();

	state.looked_past_grow_load = 0;
	state.looked_past_grow_windows = 0;
	state.looked_past_grow_from = 0;
	return state;
}

/*
 * A first doubling that gained less than AUTO_LOOK_AHEAD_PART of the margin,
 * in a window still hot and with no more sleep per acquisition, doubles once
 * more on the same trial, once per load; the two are kept or undone
 * together against the first baseline.
 */
static void
test_look_past_grow(void)
{
	AutoRulesState state;
	AutoWindowFigures w;
	double		gain = Min(AUTO_KEEP_MIN_GAIN,
						   AUTO_KEEP_GAIN_OF_SHARE * HOT_SHARE);
	uint64		at_gain = (uint64) ceil(ACQUISITIONS * (1.0 + gain));
	double		base_rate = ACQUISITIONS / WINDOW_S / BACKENDS;

	state = unlooked_grown_state();
	is_int(decide(&state, hot_window(32)), 64,
		   "look-past grow: 32 no faster than 16, still hot: 64 tried");
	ok(reason_is(AUTO_REASON_LOOK_PAST_GROW) && state.trial_from == 16 &&
	   state.trial_to == 64 && state.trial_rate == base_rate &&
	   state.trial_judged == 0 && state.ceiling == 0 &&
	   state.looked_past_grow_load == BACKENDS,
	   "look-past grow: on the same trial, from 16, against 16's window, under the load it was judged on");
	w = window_at(64, HOT_SHARE);
	w.acquisitions = at_gain - 1;
	is_int(decide(&state, w), 16,
		   "look-past grow: 64 one acquisition short of the margin over 16: undone to 16");
	ok(reason_is(AUTO_REASON_UNDO) && state.ceiling == 16 &&
	   state.trial_from == 0,
	   "look-past grow: 16 is the ceiling, and no look further");

	/* once per load: the next grow from 16 that does not help is undone */
	state.ceiling = 0;
	(void) decide(&state, hot_window(16));
	is_int(decide(&state, hot_window(16)), 32,
		   "look-past grow: with the ceiling gone, 16 grows again");
	is_int(decide(&state, hot_window(32)), 16,
		   "look-past grow: 32 no faster under the same load: undone at once");
	ok(reason_is(AUTO_REASON_UNDO), "look-past grow: the reason is AUTO_REASON_UNDO");

	/* under that load, again only from above the number the last grew from */
	for (int from = MIN_LOCKS; from <= 32; from *= 2)
	{
		state = fresh_state(from);
		state.looked_past_grow_from = 16;
		(void) decide(&state, hot_window(from));
		(void) decide(&state, hot_window(from));
		is_int(decide(&state, hot_window(2 * from)), from > 16 ? 4 * from : from,
			   "look-past grow: the last one from 16, under the same load: a grow from %d that does not help is %s",
			   from, from > 16 ? "looked past" : "undone");
	}

	/* kept if 64 gains the margin over 16 */
	state = unlooked_grown_state();
	(void) decide(&state, hot_window(32));
	w = window_at(64, LUKEWARM_SHARE);
	w.acquisitions = at_gain;
	is_int(decide(&state, w), 64,
		   "look-past grow: 64 at the margin over 16: kept");
	ok(reason_is(NULL) && state.trial_from == 0 && state.ceiling == 0,
	   "look-past grow: kept, no ceiling");

	/* only while still hot, and with no more sleep per acquisition */
	state = unlooked_grown_state();
	is_int(decide(&state, lukewarm_window(32)), 16,
		   "look-past grow: 32 no faster, no longer contended: undone");
	/* the sleep per acquisition may have risen by the margin, and no more */
	for (int beyond = 0; beyond < 2; beyond++)
	{
		double		sleep_at_margin;

		state = unlooked_grown_state();
		sleep_at_margin = state.trial_wait_ns * (1.0 + state.trial_margin) *
			ACQUISITIONS;
		w = hot_window(32);
		w.blocked_ns = beyond ? (uint64) ceil(sleep_at_margin) + 1 :
			(uint64) floor(sleep_at_margin);
		ok(w.blocked_ns > window_at(16, HOT_SHARE).blocked_ns,
		   "look-past grow: the sleep per acquisition %s the margin is up",
		   beyond ? "just beyond" : "at");
		is_int(decide(&state, w), beyond ? 16 : 64,
			   "look-past grow: 32 no faster, the sleep per acquisition up by %s: %s",
			   beyond ? "just beyond the margin" : "the margin",
			   beyond ? "undone" : "64 tried");
	}

	/* what it looked past to is kept only on the kept grow's strict test */
	state = unlooked_grown_state();
	w = hot_window(32);
	w.blocked_ns++;
	is_int(decide(&state, w), 64,
		   "look-past grow: 32 no faster, the sleep per acquisition up by a fraction of a nanosecond: 64 tried");
	w = window_at(64, HOT_SHARE);
	w.acquisitions = at_gain;
	w.blocked_ns = (uint64) ceil(state.trial_wait_ns * at_gain) + 1;
	is_int(decide(&state, w), 16,
		   "look-past grow: 64 at the margin over 16, the sleep per acquisition up by a fraction of a nanosecond: undone");
	w.blocked_ns = (uint64) floor(state.trial_wait_ns * at_gain);
	state = unlooked_grown_state();
	(void) decide(&state, hot_window(32));
	(void) decide(&state, w);
	ok(grow_kept(&state, 16),
	   "look-past grow: 64 at the margin over 16, no more sleep per acquisition: kept");

	/* not at the ceiling or the maximum */
	state = unlooked_grown_state();
	state.ceiling = 32;
	state.ceiling_left_s = 2 * AUTO_CEILING_HOLD_S;
	is_int(decide(&state, hot_window(32)), 16,
		   "look-past grow: 32 at the ceiling: undone");

	/* not after a look-ahead: 64 that fails goes back to 16, not on */
	state = unlooked_grown_state();
	(void) decide(&state, small_gain_window());
	ok(reason_is(AUTO_REASON_LOOK_AHEAD) && state.trial_to == 64,
	   "look-past grow: a look-ahead to 64");
	is_int(decide(&state, hot_window(64)), 16,
		   "look-past grow: 64 no faster than 16 after a look-ahead: undone to 16, not on to 128");

	/* a load beyond AUTO_LOAD_MOVED from the last look-past's, from 16: again */
	for (int beyond = 0; beyond < 2; beyond++)
	{
		state = unlooked_grown_state();
		state.looked_past_grow_load = BACKENDS / (1 + AUTO_LOAD_MOVED) +
			(beyond ? -0.01 : 0.01);
		state.looked_past_grow_windows = 1;
		state.looked_past_grow_from = 16;
		is_int(decide(&state, hot_window(32)), beyond ? 64 : 16,
			   "look-past grow: the last one under a load just %s AUTO_LOAD_MOVED of this one: %s",
			   beyond ? "beyond" : "within",
			   beyond ? "64 tried" : "undone");
	}
}

/*
 * A grow from 16 that fails: two hot windows are enough when no ceiling
 * holds; returns the windows the ceiling held the grow back.
 */
static int
failed_grow(AutoRulesState *state, int window_limit)
{
	int			held = windows_to_change(state, 16, hot_window, window_limit);

	(void) decide(state, hot_window(32));
	return held;
}

/*
 * No halving under contention, at the default windows' load: isolates the
 * other rules over hours
 */
static void
no_down_trials(AutoRulesState *state)
{
	for (int i = 0; i < AUTO_LEVELS; i++)
	{
		state->down_hold_s[i] = 1e12;
		state->down_hold_load[i] = BACKENDS;
	}
}

static void
test_ceiling(void)
{
	AutoRulesState state = grown_state();
	AutoWindowFigures w;
	double		hold = AUTO_CEILING_HOLD_S;
	int			failures = 0;
	bool		held_right = true;
	bool		hold_right = true;

	no_down_trials(&state);
	(void) decide(&state, hot_window(32));
	is_int(windows_to_change(&state, 16, hot_window,
							 WINDOWS_IN(AUTO_CEILING_HOLD_S) - 1), -1,
		   "ceiling: hot windows at 16 hold while it holds");
	is_int(decide(&state, hot_window(16)), 32,
		   "ceiling: it lifts after AUTO_CEILING_HOLD_S of windows");

	/* a second failure in a row: twice as long */
	(void) decide(&state, hot_window(32));
	is_int(failed_grow(&state, 100000), 2 * WINDOWS_IN(AUTO_CEILING_HOLD_S),
		   "ceiling: after a second failure it holds twice as long");

	/* up to the cap, which then holds */
	state = grown_state();
	no_down_trials(&state);
	(void) decide(&state, hot_window(32));
	while (hold < AUTO_CEILING_HOLD_MAX_S || failures < 2)
	{
		int			held = failed_grow(&state, 100000);
		double		next = Min(hold * 2, AUTO_CEILING_HOLD_MAX_S);

		held_right &= held == WINDOWS_IN(hold);
		hold_right &= state.ceiling_left_s == next;
		if (hold >= AUTO_CEILING_HOLD_MAX_S)
			failures++;
		hold = next;
	}
	ok(held_right, "ceiling: each failure in a row doubles the hold up to AUTO_CEILING_HOLD_MAX_S");
	ok(hold_right && state.grow_hold_s[level_of(16)] == AUTO_CEILING_HOLD_MAX_S,
	   "ceiling: the hold stays at AUTO_CEILING_HOLD_MAX_S");

	/* each number has its own hold */
	state = grown_state();
	no_down_trials(&state);
	(void) decide(&state, hot_window(32));
	(void) windows_to_change(&state, 16, hot_window, 100000);
	is_int(decide(&state, relieved_window(32)), 32,
		   "ceiling: once lifted, a grow that helps is kept");
	ok(state.grow_hold_s[level_of(16)] == 2 * AUTO_CEILING_HOLD_S,
	   "ceiling: a kept grow leaves the hold of 16 as it was");
	/* the relieved window taught some noise: more than one window judges */
	(void) windows_to_change(&state, 32, hot_window, 100);
	(void) windows_to_change(&state, 64, hot_window, 100);
	is_int(last_verdict.target, 32,
		   "ceiling: a failed grow from 32 after it: back to 32");
	ok(state.ceiling == 32 && state.ceiling_left_s == AUTO_CEILING_HOLD_S,
	   "ceiling: 32 held AUTO_CEILING_HOLD_S, its own first failure");

	/*
	 * A hold is about one load: a failure from 16 under a load more than
	 * AUTO_LOAD_MOVED from the last one's starts from AUTO_CEILING_HOLD_S
	 * again; under one within it, the hold goes on doubling.
	 */
	for (int beyond = 0; beyond < 2; beyond++)
	{
		double		load = BACKENDS * (1 + AUTO_LOAD_MOVED) +
			(beyond ? 0.01 : -0.01);

		state = grown_state();
		no_down_trials(&state);
		(void) decide(&state, hot_window(32));
		state.ceiling = 0;
		/* a grow's look-past tried under that load as well */
		state.looked_past_grow_load = load;
		w = hot_window(16);
		w.backends = load;
		w.blocked_ns = blocked_ns_for(HOT_SHARE, load, WINDOW_S);
		(void) decide(&state, w);
		(void) decide(&state, w);
		w.active_locks = 32;
		is_int(decide(&state, w), 16,
			   "ceiling: a second grow from 16, %s AUTO_LOAD_MOVED from the first's load, fails",
			   beyond ? "just beyond" : "just within");
		ok(state.ceiling_left_s ==
		   (beyond ? AUTO_CEILING_HOLD_S : 2 * AUTO_CEILING_HOLD_S),
		   "ceiling: its hold is %s", beyond ?
		   "AUTO_CEILING_HOLD_S: another load's" : "twice AUTO_CEILING_HOLD_S");
	}

	/*
	 * Each baseline is the mean of one window: of a load whose windows
	 * wander, two such means are another load only beyond AUTO_TRIAL_Z
	 * standard errors of their difference, here far beyond AUTO_LOAD_MOVED.
	 */
	state = grown_state();
	no_down_trials(&state);
	(void) decide(&state, hot_window(32));
	state.ceiling = 0;
	state.load_spread = 0.3;
	w = hot_window(16);
	w.backends = BACKENDS * (1 + 2 * AUTO_LOAD_MOVED);
	w.blocked_ns = blocked_ns_for(HOT_SHARE, w.backends, WINDOW_S);
	(void) decide(&state, w);
	(void) decide(&state, w);
	w.active_locks = 32;
	is_int(decide(&state, w), 16,
		   "ceiling: a load spread of 30%%, a second grow from 16 under a load twice AUTO_LOAD_MOVED from the first's fails");
	ok(state.ceiling_left_s == 2 * AUTO_CEILING_HOLD_S,
	   "ceiling: the same load, its means a window each: the hold doubles");

	/* a ceiling above the number: grows up to it */
	set_model(8, MAX_LOCKS, 0.8);
	state = fresh_state(8);
	state.ceiling = 32;
	state.ceiling_left_s = AUTO_CEILING_HOLD_S;
	{
		int			changes = 0;
		int			locks = run_windows(&state, 8, 20, model_window, &changes);

		is_int(locks, 32, "ceiling: a ceiling of 32 above 8: grows to 32, not past it");
	}
}

/*
 * Shrink from 16 to 8 in quiet windows, then grow back to 16 (undoing the
 * shrink) and keep that grow in a calm window; returns the quiet windows
 * the shrink took.  From the second time the shrink also goes back to where
 * a kept grow came from, which backs off grows (test_grow_backoff): as many
 * hot windows as they need.
 */
static int
undone_shrink(AutoRulesState *state)
{
	int			quiet = windows_to_change(state, 16, quiet_window, 1000);
	int			hot_needed = state->hot_needed;

	for (int i = 0; i < hot_needed; i++)
		(void) decide(state, hot_window(8));
	(void) decide(state, relieved_window(16));
	return quiet;
}

static void
test_backoff(void)
{
	AutoRulesState state = fresh_state(16);
	AutoWindowFigures w;
	int			needed = AUTO_QUIET_WINDOWS;
	bool		took_right = true;
	bool		doubled_right = true;
	int			changes = 0;

	no_down_trials(&state);

	is_int(undone_shrink(&state), AUTO_QUIET_WINDOWS,
		   "backoff: the first shrink takes AUTO_QUIET_WINDOWS");
	is_int(state.quiet_needed, 2 * AUTO_QUIET_WINDOWS,
		   "backoff: a grow that undoes it doubles them");
	is_int(undone_shrink(&state), 2 * AUTO_QUIET_WINDOWS,
		   "backoff: the next shrink takes twice AUTO_QUIET_WINDOWS");
	needed = 4 * AUTO_QUIET_WINDOWS;
	for (int i = 0; i < 10; i++)
	{
		took_right &= undone_shrink(&state) == needed;
		needed = Min(needed * 2, AUTO_QUIET_WINDOWS_MAX);
		doubled_right &= state.quiet_needed == needed;
	}
	ok(took_right && doubled_right,
	   "backoff: each undone shrink doubles the quiet windows up to AUTO_QUIET_WINDOWS_MAX");
	is_int(state.quiet_needed, AUTO_QUIET_WINDOWS_MAX,
		   "backoff: and the cap holds");

	/* a grow to a number no shrink left: no backoff */
	state = grown_state();
	is_int(state.quiet_needed, AUTO_QUIET_WINDOWS,
		   "backoff: a grow that undoes no shrink leaves AUTO_QUIET_WINDOWS");

	/* shrinks 32 -> 16 -> 8, grows 8 -> 16 -> 32: only the first undoes */
	state = fresh_state(32);
	(void) windows_to_change(&state, 32, quiet_window, 1000);
	(void) windows_to_change(&state, 16, quiet_window, 1000);
	(void) decide(&state, hot_window(8));
	(void) decide(&state, hot_window(8));
	is_int(state.quiet_needed, 2 * AUTO_QUIET_WINDOWS,
		   "backoff: the grow from 8 to 16 undoes the last shrink: doubles");
	/* kept and still hot: on to 32 at once */
	w = window_at(16, HOT_SHARE / 2);
	w.acquisitions = 2 * ACQUISITIONS;
	ok(decide(&state, w) == 32 && state.quiet_needed == 2 * AUTO_QUIET_WINDOWS,
	   "backoff: the grow on to 32 does not double again");

	/* the decay: halves after AUTO_BACKOFF_DECAY_S without another */
	state = fresh_state(16);
	no_down_trials(&state);
	(void) undone_shrink(&state);	/* the grow was 2 windows ago */
	(void) run_windows(&state, 16,
					   WINDOWS_IN(AUTO_BACKOFF_DECAY_S) - 2, lukewarm_window,
					   &changes);
	is_int(state.quiet_needed, 2 * AUTO_QUIET_WINDOWS,
		   "backoff: a window short of AUTO_BACKOFF_DECAY_S after the grow: still doubled");
	(void) decide(&state, lukewarm_window(16));
	is_int(state.quiet_needed, AUTO_QUIET_WINDOWS,
		   "backoff: AUTO_BACKOFF_DECAY_S after the grow: halved");

	state = fresh_state(16);
	no_down_trials(&state);
	(void) undone_shrink(&state);
	(void) undone_shrink(&state);
	(void) run_windows(&state, 16,
					   WINDOWS_IN(AUTO_BACKOFF_DECAY_S) - 1, lukewarm_window,
					   &changes);
	is_int(state.quiet_needed, 2 * AUTO_QUIET_WINDOWS,
		   "backoff: quadrupled, AUTO_BACKOFF_DECAY_S later: halved once");
	(void) decide(&state, lukewarm_window(16));
	is_int(state.quiet_needed, 2 * AUTO_QUIET_WINDOWS,
		   "backoff: the next window does not halve it again");
	(void) run_windows(&state, 16,
					   WINDOWS_IN(AUTO_BACKOFF_DECAY_S) - 2, lukewarm_window,
					   &changes);
	is_int(state.quiet_needed, 2 * AUTO_QUIET_WINDOWS,
		   "backoff: a window short of another AUTO_BACKOFF_DECAY_S: not yet");
	(void) decide(&state, lukewarm_window(16));
	is_int(state.quiet_needed, AUTO_QUIET_WINDOWS,
		   "backoff: another AUTO_BACKOFF_DECAY_S: back to AUTO_QUIET_WINDOWS");
	is_int(undone_shrink(&state), AUTO_QUIET_WINDOWS,
		   "backoff: decayed, a shrink takes AUTO_QUIET_WINDOWS again");

	/* a grow back long after the shrink is a new load, not a swing */
	state = fresh_state(16);
	no_down_trials(&state);
	is_int(windows_to_change(&state, 16, quiet_window, 1000),
		   AUTO_QUIET_WINDOWS, "backoff: 16 shrinks to 8");
	(void) run_windows(&state, 8, WINDOWS_IN(AUTO_BACKOFF_DECAY_S),
					   lukewarm_window, &changes);
	(void) decide(&state, hot_window(8));
	is_int(decide(&state, hot_window(8)), 16,
		   "backoff: AUTO_BACKOFF_DECAY_S after the shrink, 8 grows to 16");
	is_int(state.quiet_needed, AUTO_QUIET_WINDOWS,
		   "backoff: that grow, long after the shrink, does not double the quiet windows");
}

/* ---- the trial under noise ---- */

/*
 * The spread whose windows a side are n, set in the middle of the interval
 * that rounds up to n: as walscale_auto_rules.c derives the windows from
 * the spread (a window's deviation is spread * sqrt(pi) / 2, and n windows
 * a side put AUTO_TRIAL_Z standard errors within gain at n / 2 (z sd /
 * gain)^2 = 1), inverted.
 */
static double
spread_needing(int n, double gain)
{
	double		deviation = gain * sqrt((n - 0.5) / 2) / AUTO_TRIAL_Z;

	return deviation * 2 / sqrt(M_PI);
}

/*
 * The spread to start from so that after k - 1 ratios of windows alike
 * (each moving it AUTO_SPREAD_WEIGHT of the way to 0) it is spread
 */
static double
spread_before(double spread, int k)
{
	return spread / pow(1 - AUTO_SPREAD_WEIGHT, k - 1);
}

/* a window like window_at(locks, share) whose rate is factor times */
static AutoWindowFigures
rate_window(int locks, double share, double factor)
{
	AutoWindowFigures w = window_at(locks, share);

	w.acquisitions = (uint64) rint(ACQUISITIONS * factor);
	/* the same sleep per acquisition */
	w.blocked_ns = (uint64) rint(w.blocked_ns * factor);
	return w;
}

static void
test_spread(void)
{
	AutoRulesState state;
	AutoWindowFigures w;
	double		gain = Min(AUTO_KEEP_MIN_GAIN,
						   AUTO_KEEP_GAIN_OF_SHARE * HOT_SHARE);
	int			windows;

	/* the spread: the moving mean of |log| of a window's rate ratio */
	state = fresh_state(16);
	(void) decide(&state, lukewarm_window(16));
	ok(state.spread == 0 && state.recent == 1,
	   "spread: one window at a number: none yet, one recent window");
	(void) decide(&state, rate_window(16, LUKEWARM_SHARE, 1.1));
	ok(fabs(state.spread - log(1.1) * AUTO_SPREAD_WEIGHT) < 1e-12 &&
	   state.recent == 2 && last_verdict.spread == state.spread,
	   "spread: a window 10%% faster: AUTO_SPREAD_WEIGHT of log(1.1)");

	/* a window whose load stepped from the last one's is no ratio */
	state = fresh_state(16);
	(void) decide(&state, lukewarm_window(16));
	w = rate_window(16, LUKEWARM_SHARE, 1.1);
	w.backends = BACKENDS * AUTO_LOAD_STEP - 0.01;
	(void) decide(&state, w);
	ok(state.recent == 2 && state.spread > 0,
	   "spread: a load just within AUTO_LOAD_STEP times the last window's: a ratio");
	state = fresh_state(16);
	(void) decide(&state, lukewarm_window(16));
	w.backends = BACKENDS * AUTO_LOAD_STEP + 0.01;
	(void) decide(&state, w);
	ok(state.recent == 2 && state.spread == 0,
	   "spread: one just beyond it: a recent window, but no ratio taken");
	state = fresh_state(16);
	(void) decide(&state, lukewarm_window(16));
	w.backends = BACKENDS / AUTO_LOAD_STEP - 0.01;
	(void) decide(&state, w);
	ok(state.recent == 2 && state.spread == 0,
	   "spread: nor for one just beyond AUTO_LOAD_STEP times fewer");
	(void) decide(&state, idle_window(16));
	is_int(state.recent, 0, "spread: an idle window leaves no recent window");
	for (int i = 0; i < AUTO_TRIAL_WINDOWS_MAX + 5; i++)
		(void) decide(&state, lukewarm_window(16));
	is_int(state.recent, AUTO_TRIAL_WINDOWS_MAX,
		   "spread: the recent windows are AUTO_TRIAL_WINDOWS_MAX at most");
	state = grown_state();
	is_int(state.recent, 0, "spread: a change forgets the recent windows");

	/* the start: AUTO_SPREAD_START asks for more than one window */
	(void) walscale_rules_begin(&state, 16, MIN_LOCKS, host_max);
	windows = windows_to_change(&state, 16, hot_window, 1000);
	ok(windows > AUTO_HOT_WINDOWS && state.trial_needed > 1 &&
	   state.trial_needed <= windows,
	   "spread: from the start, a grow waits for the noise to be known: %d windows, judged on %d",
	   windows, state.trial_needed);

	/* a spread that needs four windows a side, at the fourth window */
	state = fresh_state(16);
	state.spread = spread_before(spread_needing(4, gain), 4);
	for (int i = 0; i < 3; i++)
		(void) decide(&state, hot_window(16));
	ok(last_verdict.target == 16 && state.hot_windows >= AUTO_HOT_WINDOWS,
	   "noise: hot enough, but three windows are too few a baseline: holds");
	is_int(decide(&state, hot_window(16)), 32,
		   "noise: the fourth grows");
	ok(state.trial_needed == 4 && state.trial_margin == gain,
	   "noise: the grow is judged on four windows, with the margin of the gain");
	for (int i = 0; i < 3; i++)
		(void) decide(&state, rate_window(32, HOT_SHARE, 1 + 2 * gain));
	ok(last_verdict.target == 32 && reason_is(NULL) && state.trial_from == 16,
	   "noise: three windows 2 gains faster: not judged yet");
	(void) decide(&state, rate_window(32, HOT_SHARE, 1 - gain / 2));
	ok(state.trial_from == 0 && !reason_is(AUTO_REASON_UNDO),
	   "noise: a fourth half a gain slower: the mean is 1.375 gains faster, kept");

	state = fresh_state(16);
	state.spread = spread_before(spread_needing(4, gain), 4);
	for (int i = 0; i < 4; i++)
		(void) decide(&state, hot_window(16));
	for (int i = 0; i < 3; i++)
		(void) decide(&state, rate_window(32, LUKEWARM_SHARE, 1 + 2 * gain));
	is_int(decide(&state, rate_window(32, LUKEWARM_SHARE, 1 - 3 * gain - 0.001)), 16,
		   "noise: three windows 2 gains faster and one 3 gains slower: under the margin, undone");

	/*
	 * noise beyond what AUTO_TRIAL_WINDOWS_MAX windows resolve: a margin
	 * above the gain
	 */
	state = fresh_state(16);
	state.spread = spread_before(2 * spread_needing(AUTO_TRIAL_WINDOWS_MAX, gain),
								 AUTO_TRIAL_WINDOWS_MAX);
	windows = windows_to_change(&state, 16, hot_window, 1000);
	is_int(windows, AUTO_TRIAL_WINDOWS_MAX,
		   "noise: twice the spread AUTO_TRIAL_WINDOWS_MAX windows resolve: the grow waits for that many");
	ok(state.trial_needed == AUTO_TRIAL_WINDOWS_MAX &&
	   state.trial_margin > gain &&
	   fabs(state.trial_margin - AUTO_TRIAL_Z * state.spread * sqrt(M_PI) / 2 *
			sqrt(2.0 / AUTO_TRIAL_WINDOWS_MAX)) < 1e-12,
	   "noise: judged on AUTO_TRIAL_WINDOWS_MAX windows with AUTO_TRIAL_Z standard errors as the margin, %.4f",
	   state.trial_margin);
	{
		double		margin = state.trial_margin;

		for (int i = 0; i < AUTO_TRIAL_WINDOWS_MAX; i++)
			(void) decide(&state, rate_window(32, LUKEWARM_SHARE,
											  1 + (gain + margin) / 2));
		ok(reason_is(AUTO_REASON_UNDO),
		   "noise: a gain above the gain but under that margin: undone");
	}
}

/* a trial no window can judge */
static void
test_unjudged(void)
{
	AutoRulesState state = grown_state();
	int			windows;

	windows = windows_to_change(&state, 32, idle_window, 1000);
	is_int(windows, 1 + AUTO_TRIAL_SPARE_WINDOWS,
		   "unjudged: idle windows after a grow judged on one: undone after 1 + AUTO_TRIAL_SPARE_WINDOWS");
	ok(reason_is(AUTO_REASON_UNJUDGED) && last_verdict.target == 16 &&
	   state.ceiling == 0,
	   "unjudged: back to 16, and no ceiling: nothing showed the grow did not help");
	is_int(state.hot_needed, 2 * AUTO_HOT_WINDOWS,
		   "unjudged: the contention did not last: grows need twice AUTO_HOT_WINDOWS");
	ok(state.grow_waits_still,
	   "unjudged: the next grow waits for the load to hold still");
	is_int(windows_to_change(&state, 16, hot_window, 1000),
		   AUTO_TRIAL_WINDOWS_MAX,
		   "unjudged: hot windows at 16 grow again once they show the load still, after AUTO_TRIAL_WINDOWS_MAX, not 2 * AUTO_HOT_WINDOWS");
	ok(reason_is(AUTO_REASON_GROW) && !state.grow_waits_still,
	   "unjudged: that grow is an ordinary one, and the next need not wait");

	/* a load that went elsewhere (stepped: no window judged) need not wait */
	state = grown_state();
	{
		AutoWindowFigures w = hot_window(32);

		w.backends = BACKENDS * AUTO_LOAD_STEP + 1;
		w.blocked_ns = blocked_ns_for(HOT_SHARE, w.backends, WINDOW_S);
		for (windows = 1; windows < 1000; windows++)
			if (decide(&state, w) != 32)
				break;
		w.active_locks = 16;
		ok(reason_is(AUTO_REASON_UNJUDGED) && !state.grow_waits_still,
		   "unjudged: undone under a load that stepped away: the next grow need not wait for stillness");
		for (windows = 1; windows < 1000; windows++)
			if (decide(&state, w) != 16)
				break;
		is_int(windows, 2 * AUTO_HOT_WINDOWS,
			   "unjudged: hot windows there grow again after twice AUTO_HOT_WINDOWS, not AUTO_TRIAL_WINDOWS_MAX");
	}

	/* a window that can judge, late, still does */
	state = grown_state();
	for (int i = 0; i < AUTO_TRIAL_SPARE_WINDOWS; i++)
		(void) decide(&state, idle_window(32));
	(void) decide(&state, relieved_window(32));
	ok(state.trial_from == 0 && reason_is(NULL) && state.ceiling == 0,
	   "unjudged: a relieved window on the last window of the spare: kept");
}

/* a number held at 32 for AUTO_DOWN_HOLD_S under a lukewarm load */
static AutoRulesState
held_state(void)
{
	AutoRulesState state = fresh_state(32);

	for (int i = 0; i < WINDOWS_IN(AUTO_DOWN_HOLD_S); i++)
		(void) decide(&state, lukewarm_window(32));
	return state;
}

static void
test_down_trial(void)
{
	AutoRulesState state;
	AutoWindowFigures w;
	int			windows;

	state = fresh_state(32);
	windows = windows_to_change(&state, 32, lukewarm_window, 100000);
	is_int(windows, WINDOWS_IN(AUTO_DOWN_HOLD_S),
		   "fewer: a lukewarm load at 32 has its halving tried after AUTO_DOWN_HOLD_S");
	ok(reason_is(AUTO_REASON_TRY_FEWER) && last_verdict.target == 16 &&
	   state.trial_from == 32 && state.trial_needed == 1 &&
	   state.trial_margin == AUTO_KEEP_MIN_GAIN,
	   "fewer: to 16, on trial, judged on one window against AUTO_KEEP_MIN_GAIN");

	/*
	 * A halving may add sleepers, and their backends stay active longer: the
	 * load may rise by as many, not fall by them
	 */
	for (int dir = 0; dir < 2; dir++)
	{
		AutoRulesState before = fresh_state(32);

		(void) windows_to_change(&before, 32, lukewarm_window, 100000);
		for (int beyond = 0; beyond < 2; beyond++)
		{
			double		moved = AUTO_TRIAL_MAX_LOAD_CHANGE + HOT_SHARE -
				LUKEWARM_SHARE + (beyond ? 0.01 : -0.01);

			state = before;
			w = window_at(16, HOT_SHARE);
			w.backends = BACKENDS * (dir ? 1.0 + moved : 1.0 - moved);
			w.blocked_ns = blocked_ns_for(HOT_SHARE, BACKENDS, WINDOW_S);
			w.acquisitions = (uint64) (ACQUISITIONS * w.backends / BACKENDS);
			(void) decide(&state, w);
			ok((dir && !beyond) ? state.trial_from == 0 : state.trial_from == 32,
			   "fewer: a load %s by %s AUTO_TRIAL_MAX_LOAD_CHANGE and the sleepers the halving added: %s",
			   dir ? "up" : "down", beyond ? "just over" : "just under",
			   (dir && !beyond) ? "judged" : "still on trial");
		}
	}

	state = fresh_state(32);
	is_int(windows_to_change(&state, 32, hot_window, 100000), AUTO_HOT_WINDOWS,
		   "fewer: a hot load grows first");
	state = fresh_state(32);
	no_down_trials(&state);
	state.ceiling = 32;
	state.ceiling_left_s = 1e9;
	is_int(windows_to_change(&state, 32, hot_window, 100000), -1,
		   "fewer: held back, hot windows never halve");
	state = fresh_state(32);
	state.ceiling = 32;
	state.ceiling_left_s = 1e9;
	is_int(windows_to_change(&state, 32, hot_window, 100000),
		   WINDOWS_IN(AUTO_DOWN_HOLD_S),
		   "fewer: at a ceiling, hot windows have the halving tried after AUTO_DOWN_HOLD_S");

	/* not when quiet (the quiet shrink is for that), nor at the floor */
	state = fresh_state(32);
	w = quiet_window(32);
	use_only(0, 16, -1);
	for (int i = 0; i < 2 * WINDOWS_IN(AUTO_DOWN_HOLD_S); i++)
		(void) decide(&state, w);
	ok(last_verdict.target == 32 && state.trial_from == 0,
	   "fewer: quiet windows whose halving would merge used locks: never tried");
	state = fresh_state(MIN_LOCKS);
	is_int(windows_to_change(&state, MIN_LOCKS, lukewarm_window, 100000), -1,
		   "fewer: at the floor, never");

	/*
	 * Only after the load held still for AUTO_TRIAL_WINDOWS_MAX windows: a
	 * load that steps every AUTO_TRIAL_WINDOWS_MAX - 1 windows never has
	 * them; one whose newer half of them is AUTO_LOAD_MOVED or more from the
	 * older half's mean is not still.
	 */
	state = fresh_state(32);
	for (int i = 0; i < 2 * WINDOWS_IN(AUTO_DOWN_HOLD_S); i++)
	{
		w = lukewarm_window(32);
		if ((i / (AUTO_TRIAL_WINDOWS_MAX - 1)) % 2)
			w.backends = BACKENDS * AUTO_LOAD_STEP * 1.5;
		w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
		if (decide(&state, w) != 32)
			break;
	}
	ok(last_verdict.target == 32,
	   "fewer: a load that steps every AUTO_TRIAL_WINDOWS_MAX - 1 windows: never tried");
	for (int beyond = 0; beyond < 2; beyond++)
	{
		state = fresh_state(32);
		state.since_settled_s = AUTO_DOWN_HOLD_S;
		for (int i = 0; i < AUTO_TRIAL_WINDOWS_MAX; i++)
		{
			w = lukewarm_window(32);
			if (i >= AUTO_TRIAL_WINDOWS_MAX / 2)
				w.backends = BACKENDS * (1 + AUTO_LOAD_MOVED) +
					(beyond ? 0.01 : -0.01);
			w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
			(void) decide(&state, w);
		}
		ok(beyond ? reason_is(NULL) : reason_is(AUTO_REASON_TRY_FEWER),
		   "fewer: the newer half of the windows %s AUTO_LOAD_MOVED above the older: %s",
		   beyond ? "just beyond" : "just within",
		   beyond ? "not still, not tried" : "still, tried");
	}

	/* one window of a burst among them: not still either */
	for (int burst = 0; burst < 2; burst++)
	{
		state = fresh_state(32);
		state.since_settled_s = AUTO_DOWN_HOLD_S;
		for (int i = 0; i < AUTO_TRIAL_WINDOWS_MAX; i++)
		{
			w = lukewarm_window(32);
			if (i == AUTO_TRIAL_WINDOWS_MAX - 2)
				w.backends = BACKENDS * (burst ? 4 : 1.9);
			w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
			(void) decide(&state, w);
		}
		ok(burst ? reason_is(NULL) : reason_is(AUTO_REASON_TRY_FEWER),
		   "fewer: a window of %s times the backends among them: %s",
		   burst ? "4" : "1.9",
		   burst ? "stepped from their mean, not still, not tried" : "still, tried");
	}

	/* judged: kept unless the rate fell by the margin */
	state = held_state();
	is_int(last_verdict.target, 16, "fewer: held_state() tries 16");
	w = lukewarm_window(16);
	w.acquisitions = (uint64) ceil(ACQUISITIONS * (1 - AUTO_KEEP_MIN_GAIN));
	is_int(decide(&state, w), 16,
		   "fewer: the rate down by AUTO_KEEP_MIN_GAIN: kept");
	ok(reason_is(NULL) && state.trial_from == 0 && state.ceiling == 16 &&
	   state.ceiling_left_s == AUTO_CEILING_HOLD_S &&
	   state.last_down_from == 32 && state.since_settled_s == 0,
	   "fewer: kept, and the grow back to 32 counts as tried: 16 the ceiling");
	is_int(state.recent, 0,
		   "fewer: kept, and the windows that judged it are forgotten: none is the next baseline");
	ok(state.descending && state.descent_top == 32 &&
	   state.descent_rate == ACQUISITIONS / (WINDOW_S * BACKENDS),
	   "fewer: kept on a lower rate, within the margin: the descent goes on, its best 32's rate");

	/*
	 * The next halving is judged against the descent's best as well as its
	 * own baseline: the two losses add up beyond the margin, so it hurt, back
	 * to 32; as little as the first, it is kept.
	 */
	for (int more = 0; more < 2; more++)
	{
		AutoWindowFigures at16 = lukewarm_window(16);
		AutoWindowFigures at8 = lukewarm_window(8);

		state = held_state();
		at16.acquisitions = w.acquisitions;
		(void) decide(&state, at16);
		is_int(decide(&state, at16), 8,
			   "fewer: the next halving, from 16, at once");
		at8.acquisitions = more ? w.acquisitions - 1 : w.acquisitions;
		if (more)
		{
			is_int(decide(&state, at8), 32,
				   "fewer: 8 one acquisition under 16, beyond the margin under 32: back to 32, the descent's best");
			ok(reason_is(AUTO_REASON_FEWER_HURT) && !state.descending &&
			   state.down_hold_s[level_of(32)] == 2 * AUTO_DOWN_HOLD_S &&
			   state.down_hold_s[level_of(16)] == AUTO_DOWN_HOLD_S,
			   "fewer: the descent ends, the hold of 32 doubled");
		}
		else
			ok(decide(&state, at8) == 8 && reason_is(NULL) &&
			   state.descending && state.descent_top == 32,
			   "fewer: 8 at 16's rate, within the margin under 32: kept, the descent goes on");
	}

	/*
	 * A descent's best is of its own load: a new descent, or one whose load
	 * moved beyond AUTO_LOAD_MOVED, starts it over from its first baseline
	 */
	for (int moved = 0; moved < 2; moved++)
	{
		state = fresh_state(32);
		state.descending = moved;
		state.descent_rate = 2 * ACQUISITIONS / (WINDOW_S * BACKENDS);
		state.descent_top = 64;
		state.descent_load = moved ? BACKENDS / (1 + 2 * AUTO_LOAD_MOVED) :
			BACKENDS;
		state.descent_windows = 1;
		if (!moved)
			state.since_settled_s = AUTO_DOWN_HOLD_S;
		(void) windows_to_change(&state, 32, lukewarm_window, 100000);
		ok(reason_is(AUTO_REASON_TRY_FEWER) && state.descent_top == 32 &&
		   state.descent_rate == ACQUISITIONS / (WINDOW_S * BACKENDS),
		   "fewer: %s: the descent's best starts over, 32's",
		   moved ? "a descent whose load moved" : "a new descent");
	}

	state = held_state();
	(void) decide(&state, lukewarm_window(16));
	is_int(windows_to_change(&state, 16, lukewarm_window, 100000), 1,
		   "fewer: the same rate: the next halving, from 16, as soon as fresh windows as many as its trial needs (1, here) show the load still");
	ok(reason_is(AUTO_REASON_TRY_FEWER) && state.descending,
	   "fewer: that is the descent going on");
	{
		AutoWindowFigures hurt = lukewarm_window(8);

		hurt.acquisitions = ACQUISITIONS / 2;
		is_int(decide(&state, hurt), 16, "fewer: 8 hurts: back to 16");
	}
	ok(!state.descending, "fewer: the descent ends where a halving hurt");
	is_int(windows_to_change(&state, 16, lukewarm_window, 100000),
		   WINDOWS_IN(2 * AUTO_DOWN_HOLD_S),
		   "fewer: the next halving from 16 after its doubled hold");

	state = held_state();
	looked_past(&state);
	w.acquisitions--;
	is_int(decide(&state, w), 32,
		   "fewer: one acquisition more lost: undone, back to 32");
	ok(reason_is(AUTO_REASON_FEWER_HURT) &&
	   state.down_hold_s[level_of(32)] == 2 * AUTO_DOWN_HOLD_S &&
	   state.down_hold_s[level_of(16)] == AUTO_DOWN_HOLD_S && state.ceiling == 0,
	   "fewer: undone, the hold of 32 doubled, no ceiling");
	is_int(windows_to_change(&state, 32, lukewarm_window, 100000),
		   WINDOWS_IN(2 * AUTO_DOWN_HOLD_S),
		   "fewer: the next halving from 32 twice AUTO_DOWN_HOLD_S later");

	/* the hold is about one load: under another, AUTO_DOWN_HOLD_S again */
	state = held_state();
	looked_past(&state);
	w = lukewarm_window(16);
	w.acquisitions = ACQUISITIONS / 2;
	(void) decide(&state, w);
	w = lukewarm_window(32);
	w.backends = BACKENDS * (1 + AUTO_LOAD_MOVED) + 0.01;
	w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
	for (windows = 1; windows < 100000; windows++)
		if (decide(&state, w) != 32)
			break;
	is_int(windows, WINDOWS_IN(AUTO_DOWN_HOLD_S),
		   "fewer: after a failure, under a load beyond AUTO_LOAD_MOVED, the next halving from 32 after AUTO_DOWN_HOLD_S");

	/* an undone halving that could not be judged: the same */
	state = held_state();
	windows = windows_to_change(&state, 16, idle_window, 1000);
	ok(windows == 1 + AUTO_TRIAL_SPARE_WINDOWS &&
	   reason_is(AUTO_REASON_UNJUDGED) && last_verdict.target == 32 &&
	   state.down_hold_s[level_of(32)] == 2 * AUTO_DOWN_HOLD_S,
	   "fewer: a halving no window judges: undone after 1 + AUTO_TRIAL_SPARE_WINDOWS, the hold doubled");

	/* a kept grow back to where a kept halving came from: slower to halve */
	state = held_state();
	(void) decide(&state, lukewarm_window(16));
	state.ceiling = 0;
	state.descending = false;	/* the descent aside */
	(void) decide(&state, hot_window(16));
	(void) decide(&state, hot_window(16));
	is_int(decide(&state, relieved_window(32)), 32,
		   "fewer: a grow back to 32 that helps: kept");
	ok(state.down_hold_s[level_of(32)] == 2 * AUTO_DOWN_HOLD_S,
	   "fewer: it doubles the hold of 32");

	/* a grow kept under another load: the halving at once */
	state = grown_state();
	(void) decide(&state, relieved_window(32));
	w = lukewarm_window(32);
	w.backends = BACKENDS * (1 + AUTO_LOAD_MOVED) + 0.01;
	w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
	for (windows = 1; windows < 1000; windows++)
		if (decide(&state, w) != 32)
			break;
	ok(windows == AUTO_TRIAL_WINDOWS_MAX && reason_is(AUTO_REASON_TRY_FEWER),
	   "fewer: 32 kept for a load that then moved beyond AUTO_LOAD_MOVED: halving tried after AUTO_TRIAL_WINDOWS_MAX windows of the new one");
	/* that halving hurt: 32 is judged for this load, as any number */
	w = lukewarm_window(16);
	w.backends = BACKENDS * (1 + AUTO_LOAD_MOVED) + 0.01;
	w.acquisitions = ACQUISITIONS / 2;
	w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
	looked_past(&state);
	is_int(decide(&state, w), 32, "fewer: that halving hurt: back to 32");
	w = lukewarm_window(32);
	w.backends = BACKENDS * (1 + AUTO_LOAD_MOVED) + 0.01;
	w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
	for (windows = 1; windows < 100000; windows++)
		if (decide(&state, w) != 32)
			break;
	is_int(windows, WINDOWS_IN(2 * AUTO_DOWN_HOLD_S),
		   "fewer: the next halving from 32 after its doubled hold, not when the load is still again");

	state = grown_state();
	(void) decide(&state, relieved_window(32));
	w.backends = BACKENDS * (1 + AUTO_LOAD_MOVED) - 0.01;
	w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
	for (windows = 1; windows < 1000; windows++)
		if (decide(&state, w) != 32)
			break;
	ok(windows > AUTO_TRIAL_WINDOWS_MAX,
	   "fewer: one that moved by less: not before AUTO_DOWN_HOLD_S");

	/*
	 * A load whose windows wander: a grow judged on one window a side knew
	 * its load to within what the wander allows, so a mean moved by more than
	 * AUTO_LOAD_MOVED is the same load until it moves beyond AUTO_TRIAL_Z
	 * standard errors of the two means.
	 */
	for (int moved = 0; moved < 2; moved++)
	{
		double		factor = moved ? 4.0 : 1 + 2 * AUTO_LOAD_MOVED;

		state = grown_state();
		(void) decide(&state, relieved_window(32));
		for (windows = 1; windows < 1000; windows++)
		{
			w = lukewarm_window(32);
			w.backends = BACKENDS * factor * (windows % 2 ? 0.8 : 1.2);
			w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
			if (decide(&state, w) != 32)
				break;
		}
		if (moved)
			ok(windows == AUTO_TRIAL_WINDOWS_MAX &&
			   reason_is(AUTO_REASON_TRY_FEWER),
			   "fewer: windows that wander by 20%% each, their mean 4 times the load 32 was kept for: halving tried after AUTO_TRIAL_WINDOWS_MAX windows");
		else
			ok(windows > AUTO_TRIAL_WINDOWS_MAX,
			   "fewer: the same, their mean moved by twice AUTO_LOAD_MOVED: not another load, not before AUTO_DOWN_HOLD_S");
	}
}

/* a lukewarm window at locks whose rate is part of the baseline's */
static AutoWindowFigures
part_rate_window(int locks, double part, bool quiet)
{
	AutoWindowFigures w = window_at(locks, quiet ? 0 : LUKEWARM_SHARE);

	w.acquisitions = (uint64) floor(ACQUISITIONS * part);
	return w;
}

/*
 * held_state(), then 32's halving kept at a rate 1% higher, then 16's: a
 * descent from 32 to the floor, its best 16's rate.  The windows at 8 since
 * its trial: none.
 */
static AutoRulesState
descended_state(void)
{
	AutoRulesState state = held_state();

	(void) decide(&state, part_rate_window(16, 1.01, false));
	is_int(decide(&state, part_rate_window(16, 1.01, false)), 8,
		   "recheck: descended_state() kept 32's halving, and tries 16's");
	is_int(decide(&state, part_rate_window(8, 1.01, false)), 8,
		   "recheck: and keeps it, at the floor");
	return state;
}

/*
 * The number a descent's kept halving reached is judged again against the
 * descent's best on each window, until AUTO_TRIAL_WINDOWS_MAX windows at it
 * have shown the load still.
 */
static void
test_descent_recheck(void)
{
	AutoRulesState state;
	double		margin_part = 1.0 - AUTO_KEEP_MIN_GAIN;

	/* a descent that goes on is judged by its next halving, not again */
	state = held_state();
	(void) decide(&state, lukewarm_window(16));
	ok(state.descent_recheck && state.descent_from == 32,
	   "recheck: 32's halving kept, 16 is to be judged again where the descent stops");
	ok(decide(&state, part_rate_window(16, 0.5, false)) == 8 &&
	   reason_is(AUTO_REASON_TRY_FEWER),
	   "recheck: 16 at half the rate on the window its next halving's baseline takes: that halving is tried, 16 not judged again");

	/*
	 * At the floor, where the descent stops, just beyond and just within the
	 * margin under the best (101 less 3%), on the window after the one the
	 * next halving's baseline would have taken
	 */
	for (int beyond = 0; beyond < 2; beyond++)
	{
		AutoWindowFigures w = part_rate_window(8, 1, false);

		w.acquisitions = (uint64) ceil(ACQUISITIONS * 1.01 * margin_part);
		state = descended_state();
		is_int(decide(&state, part_rate_window(8, 1.01, false)), 8,
			   "recheck: at the floor, a window as good as the best: held");
		if (beyond)
		{
			w.acquisitions--;
			is_int(decide(&state, w), 32,
				   "recheck: the next beyond the margin under the descent's best: back to 32, where the descent began");
			ok(reason_is(AUTO_REASON_FEWER_HURT) && !state.descending &&
			   !state.descent_recheck &&
			   state.down_hold_s[level_of(32)] == 2 * AUTO_DOWN_HOLD_S,
			   "recheck: the descent ends, the hold of 32 doubled");
			is_int(windows_to_change(&state, 32, lukewarm_window, 100000),
				   WINDOWS_IN(2 * AUTO_DOWN_HOLD_S),
				   "recheck: the next halving from 32 after its doubled hold");
		}
		else
			ok(decide(&state, w) == 8 && reason_is(NULL) &&
			   state.descent_recheck,
			   "recheck: the next within the margin: held, still to be judged");
	}

	/*
	 * At the floor, where the descent stops: a window beyond the margin under
	 * the best (97 against 101 less 3%, too little a fall to raise the spread
	 * and lengthen the check), on the last of AUTO_TRIAL_WINDOWS_MAX windows,
	 * goes back to where the descent began (32), not to its best (16); on the
	 * one after, it is not judged.
	 */
	for (int after = 0; after < 2; after++)
	{
		int			windows;

		state = descended_state();
		ok(state.descent_top == 16 && state.descent_from == 32,
		   "recheck: the descent's best 16, begun from 32");
		for (windows = 1; windows < AUTO_TRIAL_WINDOWS_MAX + after; windows++)
			if (decide(&state, part_rate_window(8, 1.01, false)) != 8)
				break;
		if (after)
		{
			ok(decide(&state, part_rate_window(8, 0.97, false)) == 8 &&
			   !reason_is(AUTO_REASON_FEWER_HURT) && !state.descent_recheck,
			   "recheck: a fall after AUTO_TRIAL_WINDOWS_MAX windows at the floor as good as the best: not judged");
		}
		else
		{
			ok(decide(&state, part_rate_window(8, 0.97, false)) == 32 &&
			   reason_is(AUTO_REASON_FEWER_HURT),
			   "recheck: a fall on the last of AUTO_TRIAL_WINDOWS_MAX windows at the floor: back to 32, where the descent began");
		}
	}

	/* a load that moved beyond AUTO_LOAD_MOVED is not the descent's */
	for (int moved = 0; moved < 2; moved++)
	{
		AutoWindowFigures w = part_rate_window(8, 0.9, false);

		w.backends = BACKENDS * (moved ? 1.0 + AUTO_LOAD_MOVED + 0.01 :
								 1.0 + AUTO_LOAD_MOVED - 0.01);
		w.blocked_ns = blocked_ns_for(LUKEWARM_SHARE, w.backends, WINDOW_S);
		state = descended_state();
		(void) decide(&state, part_rate_window(8, 1.01, false));
		(void) decide(&state, w);
		ok(moved ? !reason_is(AUTO_REASON_FEWER_HURT) :
		   reason_is(AUTO_REASON_FEWER_HURT),
		   "recheck: 0.9 of the rate under a load %s AUTO_LOAD_MOVED above the descent's: %s",
		   moved ? "just beyond" : "just within",
		   moved ? "not judged" : "back to 32");
	}
}

/* the start is derived from the CPU count: its halving is tried first */
static void
test_start(void)
{
	AutoRulesState state;
	int			locks;
	int			windows;

	set_host(96);
	locks = walscale_rules_begin(&state, start_for(96), MIN_LOCKS, host_max);
	is_int(locks, 128, "start: 96 CPUs begin at 128");
	ok(state.descending, "start: begun descending");
	windows = windows_to_change(&state, 128, lukewarm_window, 100000);
	is_int(windows, AUTO_TRIAL_WINDOWS_MAX,
		   "start: contended, its halving is tried as soon as the load has held still for AUTO_TRIAL_WINDOWS_MAX windows, not after AUTO_DOWN_HOLD_S");
	ok(reason_is(AUTO_REASON_TRY_FEWER) && last_verdict.target == 64,
	   "start: to 64");
	(void) walscale_rules_begin(&state, 128, MIN_LOCKS, host_max);
	state.spread = 0;
	is_int(windows_to_change(&state, 128, lukewarm_window, 100000),
		   AUTO_TRIAL_WINDOWS_MAX,
		   "start: with the noise measured as none, still AUTO_TRIAL_WINDOWS_MAX windows: no trial has shown the load still");

	/* hot, the start is not grown: its halving goes first */
	(void) walscale_rules_begin(&state, 128, MIN_LOCKS, host_max);
	state.spread = 0;
	state.load_spread = 0;
	windows = windows_to_change(&state, 128, hot_window, 100000);
	ok(windows == AUTO_TRIAL_WINDOWS_MAX && reason_is(AUTO_REASON_TRY_FEWER) &&
	   last_verdict.target == 64,
	   "start: hot windows do not grow it: its halving to 64 is tried after AUTO_TRIAL_WINDOWS_MAX windows");
	{
		AutoWindowFigures hurt = hot_window(64);

		hurt.acquisitions = ACQUISITIONS / 2;
		looked_past(&state);
		is_int(decide(&state, hurt), 128, "start: 64 hurts: back to 128");
	}
	is_int(windows_to_change(&state, 128, hot_window, 100000), AUTO_HOT_WINDOWS,
		   "start: once its halving was tried, AUTO_HOT_WINDOWS hot windows grow it");
	ok(reason_is(AUTO_REASON_GROW) && last_verdict.target == 256,
	   "start: to 256");

	/* a quiet shrink moved it: hot windows grow the number it reached */
	(void) walscale_rules_begin(&state, 128, MIN_LOCKS, host_max);
	state.spread = 0;
	state.load_spread = 0;
	is_int(windows_to_change(&state, 128, quiet_window, 100000),
		   AUTO_QUIET_WINDOWS, "start: quiet windows shrink it");
	is_int(windows_to_change(&state, 64, hot_window, 100000), AUTO_HOT_WINDOWS,
		   "start: then AUTO_HOT_WINDOWS hot windows grow 64");

	/* so did a floor raised above it and lowered again */
	(void) walscale_rules_begin(&state, 128, MIN_LOCKS, host_max);
	state.spread = 0;
	state.load_spread = 0;
	{
		AutoWindowFigures raised = hot_window(128);

		raised.min_locks = 256;
		is_int(decide(&state, raised), 256, "start: a floor of 256 raises it");
	}
	is_int(windows_to_change(&state, 256, hot_window, 100000), AUTO_HOT_WINDOWS,
		   "start: the floor lowered again, AUTO_HOT_WINDOWS hot windows grow 256");

	/* at the floor there is nothing to try, and contention grows it */
	set_host(2);
	locks = walscale_rules_begin(&state, start_for(2), MIN_LOCKS, host_max);
	is_int(windows_to_change(&state, locks, lukewarm_window, 100000), -1,
		   "start: 2 CPUs begin at the floor, and never halve");
	locks = walscale_rules_begin(&state, start_for(2), MIN_LOCKS, host_max);
	state.spread = 0;
	is_int(windows_to_change(&state, locks, hot_window, 100000),
		   AUTO_HOT_WINDOWS,
		   "start: at the floor, AUTO_HOT_WINDOWS hot windows grow it");
	set_host(CPUS);
}

/* held at 64 under a lukewarm load, its halving to 32 tried */
static AutoRulesState
held_at_64_state(void)
{
	AutoRulesState state = fresh_state(64);

	(void) windows_to_change(&state, 64, lukewarm_window, 100000);
	return state;
}

/* a first halving that hurt looks past itself once per load */
static void
test_look_past(void)
{
	AutoRulesState state;
	double		hurt = 1 - 2 * AUTO_KEEP_MIN_GAIN;
	double		tie = 1 - AUTO_KEEP_MIN_GAIN / 2;

	state = held_at_64_state();
	ok(reason_is(AUTO_REASON_TRY_FEWER) && state.trial_from == 64,
	   "look-past: held_at_64_state() tries 32");
	is_int(decide(&state, part_rate_window(32, hurt, false)), 16,
		   "look-past: 32 hurt, contended: 16 tried");
	ok(reason_is(AUTO_REASON_LOOK_PAST) && state.trial_from == 64 &&
	   state.trial_to == 16 && state.looked_past_load == BACKENDS,
	   "look-past: on the same trial, from 64, under the load it was judged on");
	is_int(decide(&state, part_rate_window(16, tie, false)), 16,
		   "look-past: 16 keeps the rate of 64 within the margin: kept");
	ok(reason_is(NULL) && state.trial_from == 0 &&
	   state.last_down_from == 64 && state.ceiling == 16,
	   "look-past: kept as a halving from 64, 16 the ceiling");

	/* the quarter hurt too: back to where the trial began */
	state = held_at_64_state();
	(void) decide(&state, part_rate_window(32, hurt, false));
	is_int(decide(&state, part_rate_window(16, hurt, false)), 64,
		   "look-past: 16 hurt too: back to 64, not on to 8");
	ok(reason_is(AUTO_REASON_FEWER_HURT) && state.trial_from == 0 &&
	   state.down_hold_s[level_of(64)] == 2 * AUTO_DOWN_HOLD_S,
	   "look-past: undone, the hold of 64 doubled");

	/* once per load: the next halving from 64 that hurts is undone */
	(void) windows_to_change(&state, 64, lukewarm_window, 100000);
	ok(reason_is(AUTO_REASON_TRY_FEWER), "look-past: 32 tried again");
	is_int(decide(&state, part_rate_window(32, hurt, false)), 64,
		   "look-past: 32 hurt again under the same load: back to 64 at once");

	/* a load beyond AUTO_LOAD_MOVED from the last look-past's, from 16: again */
	for (int beyond = 0; beyond < 2; beyond++)
	{
		state = held_at_64_state();
		state.looked_past_load = BACKENDS / (1 + AUTO_LOAD_MOVED) +
			(beyond ? -0.01 : 0.01);
		is_int(decide(&state, part_rate_window(32, hurt, false)),
			   beyond ? 16 : 64,
			   "look-past: the last one under a load just %s AUTO_LOAD_MOVED of this one: %s",
			   beyond ? "beyond" : "within",
			   beyond ? "looks past again" : "undone at once");
	}

	/* not when quiet: the quiet shrink is for that */
	state = held_at_64_state();
	is_int(decide(&state, part_rate_window(32, hurt, true)), 64,
		   "look-past: 32 hurt in a quiet window: back to 64");

	/* not below the floor */
	state = held_state();
	is_int(decide(&state, part_rate_window(16, hurt, false)), 8,
		   "look-past: from 32, 16 hurt: 8, the floor, tried");
	state = fresh_state(16);
	(void) windows_to_change(&state, 16, lukewarm_window, 100000);
	is_int(decide(&state, part_rate_window(8, hurt, false)), 16,
		   "look-past: from 16, 8 hurt: 4 is below the floor, back to 16");
}

/* grows for loads that do not last */
static void
test_grow_backoff(void)
{
	AutoRulesState state;
	bool		doubled_right = true;
	int			expected = AUTO_HOT_WINDOWS;

	/* kept 16 -> 32, then 32 -> 16 kept within AUTO_BACKOFF_DECAY_S */
	state = grown_state();
	(void) decide(&state, relieved_window(32));
	state.since_settled_s = AUTO_DOWN_HOLD_S;
	(void) windows_to_change(&state, 32, lukewarm_window, 100);
	is_int(last_verdict.target, 16, "grow backoff: 32 tries 16");
	(void) decide(&state, lukewarm_window(16));
	is_int(state.hot_needed, 2 * AUTO_HOT_WINDOWS,
		   "grow backoff: 16 kept, back where a kept grow came from: grows need twice AUTO_HOT_WINDOWS");
	state.ceiling = 0;
	state.descending = false;	/* the descent aside */
	is_int(windows_to_change(&state, 16, hot_window, 100),
		   2 * AUTO_HOT_WINDOWS, "grow backoff: so many hot windows grow");

	/* the same, AUTO_BACKOFF_DECAY_S after the grow: another load */
	state = grown_state();
	(void) decide(&state, relieved_window(32));
	for (int i = 0; i < WINDOWS_IN(AUTO_BACKOFF_DECAY_S); i++)
		(void) decide(&state, lukewarm_window(32));
	state.since_settled_s = AUTO_DOWN_HOLD_S;
	(void) windows_to_change(&state, 32, lukewarm_window, 100);
	(void) decide(&state, lukewarm_window(16));
	ok(state.trial_from == 0 && last_verdict.target == 16 &&
	   state.hot_needed == AUTO_HOT_WINDOWS,
	   "grow backoff: a halving back AUTO_BACKOFF_DECAY_S after the grow: none");

	/* the quiet shrink back to where a grow came from backs off too */
	state = grown_state();
	no_down_trials(&state);
	(void) decide(&state, relieved_window(32));
	use_low_half(32);
	(void) windows_to_change(&state, 32, quiet_window, 100);
	is_int(state.hot_needed, 2 * AUTO_HOT_WINDOWS,
		   "grow backoff: a quiet shrink back to 16 doubles them");

	/* each unjudged grow doubles them, up to AUTO_HOT_WINDOWS_MAX */
	state = fresh_state(16);
	no_down_trials(&state);
	for (int i = 0; i < 10; i++)
	{
		state.ceiling = 0;
		(void) windows_to_change(&state, 16, hot_window, 1000);
		(void) windows_to_change(&state, 32, idle_window, 1000);
		expected = Min(expected * 2, AUTO_HOT_WINDOWS_MAX);
		doubled_right &= state.hot_needed == expected;
	}
	ok(doubled_right && state.hot_needed == AUTO_HOT_WINDOWS_MAX,
	   "grow backoff: each unjudged grow doubles them, up to AUTO_HOT_WINDOWS_MAX");

	/* the decay: halves after AUTO_GROW_BACKOFF_DECAY_S without another */
	state = fresh_state(16);
	no_down_trials(&state);
	(void) windows_to_change(&state, 16, hot_window, 1000);
	(void) windows_to_change(&state, 32, idle_window, 1000);
	for (int i = 0; i < WINDOWS_IN(AUTO_GROW_BACKOFF_DECAY_S) - 1; i++)
		(void) decide(&state, lukewarm_window(16));
	is_int(state.hot_needed, 2 * AUTO_HOT_WINDOWS,
		   "grow backoff: a window short of AUTO_GROW_BACKOFF_DECAY_S: still doubled");
	(void) decide(&state, lukewarm_window(16));
	is_int(state.hot_needed, AUTO_HOT_WINDOWS,
		   "grow backoff: AUTO_GROW_BACKOFF_DECAY_S later: halved");
}

/* AUTO_QUIET_WINDOWS quiet windows on 16 with only the locks given used */
static int
shrink_with(int min_locks, int lock,...)
{
	AutoRulesState state = fresh_state(16);
	int			target = 16;
	va_list		args;

	for (int n = 0; n < AUTO_QUIET_WINDOWS; n++)
	{
		AutoWindowFigures w = quiet_window(16);

		memset(lock_use, 0, sizeof(lock_use));
		va_start(args, lock);
		for (int i = lock; i >= 0; i = va_arg(args, int))
			lock_use[i] = 1000;
		va_end(args);
		w.min_locks = min_locks;
		target = decide(&state, w);
	}
	return target;
}

static void
test_hysteresis(void)
{
	AutoRulesState state;
	AutoWindowFigures w;

	/* a backend's lock is its ProcNumber modulo the number */
	for (int i = 0; i < 8; i++)
		is_int(shrink_with(MIN_LOCKS, i, i + 8, -1), 16,
			   "hysteresis: locks %d and %d both used: no shrink to 8", i, i + 8);
	is_int(shrink_with(MIN_LOCKS, 0, 9, 2, 11, 4, 13, 6, 15, -1), 8,
		   "hysteresis: one lock of each pair used: shrinks to 8");
	is_int(shrink_with(MIN_LOCKS, 8, 9, 10, 11, 12, 13, 14, 15, -1), 8,
		   "hysteresis: the upper half used: shrinks to 8");
	is_int(shrink_with(MIN_LOCKS, 0, 1, 2, 3, 4, 5, 6, 7, -1), 8,
		   "hysteresis: the lower half used: shrinks to 8");

	/* a lock is in use from a quarter of an even share of acquisitions */
	{
		uint64		in_use = (uint64) (ACQUISITIONS * AUTO_MERGE_MIN_EVEN_SHARE / 16);
		AutoRulesState s2 = fresh_state(16);
		int			target = 16;

		for (int n = 0; n < AUTO_QUIET_WINDOWS; n++)
		{
			w = quiet_window(16);
			use_only(3, 11, -1);
			lock_use[11] = in_use - 1;
			target = decide(&s2, w);
		}
		is_int(target, 8,
			   "hysteresis: lock 11 one acquisition short of in use: shrinks to 8");
		s2 = fresh_state(16);
		for (int n = 0; n < AUTO_QUIET_WINDOWS; n++)
		{
			w = quiet_window(16);
			use_only(3, 11, -1);
			lock_use[11] = in_use;
			target = decide(&s2, w);
		}
		is_int(target, 16,
			   "hysteresis: lock 11 at a quarter of an even share: in use, no shrink");
		s2 = fresh_state(16);
		for (int n = 0; n < AUTO_QUIET_WINDOWS; n++)
		{
			w = quiet_window(16);
			w.acquisitions = 0;
			use_only(3, 11, -1);
			lock_use[3] = lock_use[11] = 1;
			target = decide(&s2, w);
		}
		is_int(target, 16,
			   "hysteresis: in an idle window, one acquisition each is in use");
	}

	/* a floor of 12: lock i joins lock i mod 12 */
	is_int(shrink_with(12, 1, 13, -1), 16,
		   "hysteresis: to 12, locks 1 and 13 both used: no shrink");
	is_int(shrink_with(12, 5, 13, -1), 12,
		   "hysteresis: to 12, locks 5 and 13 used: shrinks to 12, not below");

	/* a shrink not taken starts the quiet count afresh */
	state = fresh_state(16);
	for (int n = 0; n < AUTO_QUIET_WINDOWS; n++)
	{
		w = quiet_window(16);
		use_only(3, 11, -1);
		(void) decide(&state, w);
	}
	is_int(windows_to_change(&state, 16, quiet_window, 100),
		   AUTO_QUIET_WINDOWS,
		   "hysteresis: after a shrink not taken, AUTO_QUIET_WINDOWS more");
}

static void
test_clamps(void)
{
	AutoRulesState state;
	AutoWindowFigures w;

	w = hot_window(MAX_LOCKS);
	is_int(after_windows(AUTO_HOT_WINDOWS * 3, w), MAX_LOCKS,
		   "max: at the max hot windows hold");
	ok(reason_is(NULL), "max: at the max no reason is given");
	w = hot_window(64);
	w.max_locks = 96;
	is_int(after_windows(AUTO_HOT_WINDOWS, w), 96,
		   "max: from 64 with a max of 96, doubling stops at 96");

	w = quiet_window(16);
	w.min_locks = 12;
	is_int(after_windows(AUTO_QUIET_WINDOWS, w), 12,
		   "floor: from 16 with a floor of 12, halving stops at 12");

	state = fresh_state(8);
	w = quiet_window(4);
	is_int(decide(&state, w), 8, "floor: 4 below the floor 8: up to 8");
	ok(reason_is(AUTO_REASON_FLOOR), "floor: the reason is AUTO_REASON_FLOOR");
	w = lukewarm_window(256);
	is_int(decide(&state, w), MAX_LOCKS, "max: 256 above the max 128: down to it");
	ok(reason_is(AUTO_REASON_MAX), "max: the reason is AUTO_REASON_MAX");
	ok(last_verdict.blocked_share == LUKEWARM_SHARE &&
	   last_verdict.rate == ACQUISITIONS / WINDOW_S / BACKENDS &&
	   last_verdict.locks_used == 128 &&
	   last_verdict.waits_per_1000 == WAITS * 1000.0 / ACQUISITIONS &&
	   last_verdict.blocked_ms_per_s == w.blocked_ns / 1e6 / WINDOW_S,
	   "max: that verdict still gives the window's figures");

	/* a window that only follows the bounds still wears off the ceiling */
	state = fresh_state(16);
	state.ceiling = 16;
	state.ceiling_left_s = 2 * WINDOW_S;
	(void) decide(&state, quiet_window(4));
	ok(state.ceiling == 16 && state.ceiling_left_s == WINDOW_S,
	   "bounds: a window that follows the floor counts towards the ceiling's hold");

	/* a change of bounds forgets the streaks and the trial */
	state = fresh_state(8);
	(void) decide(&state, hot_window(8));
	w = hot_window(8);
	w.min_locks = 16;
	(void) decide(&state, w);
	w = hot_window(16);
	w.min_locks = 16;
	is_int(decide(&state, w), 16,
		   "bounds: after a raised floor, one hot window holds");
	state = fresh_state(32);
	for (int i = 0; i < AUTO_QUIET_WINDOWS - 1; i++)
		(void) decide(&state, quiet_window(32));
	w = quiet_window(32);
	w.max_locks = 16;
	(void) decide(&state, w);
	w = quiet_window(16);
	w.max_locks = 16;
	is_int(decide(&state, w), 16,
		   "bounds: after a lowered max, one quiet window holds");
	state = grown_state();
	w = hot_window(32);
	w.min_locks = 64;
	(void) decide(&state, w);
	w = hot_window(64);
	w.min_locks = 64;
	(void) decide(&state, w);
	ok(!reason_is(AUTO_REASON_UNDO) && state.ceiling == 0,
	   "bounds: a grow on trial when the floor rose is not judged");
}

/* one figure of one window at backends and cpus: the target after two */
static int
grow_at(double share, double backends, int cpus, bool below)
{
	AutoRulesState state;
	AutoWindowFigures w = window_at(8, share);
	int			target = 8;

	w.backends = backends;
	w.cpus = cpus;
	w.max_locks = max_for(cpus);
	w.blocked_ns = blocked_ns_for(share, backends > 0 ? backends : cpus,
								  WINDOW_S);
	if (below)
		w.blocked_ns--;
	(void) calm_begin(&state, 8, MIN_LOCKS, w.max_locks);
	for (int i = 0; i < AUTO_HOT_WINDOWS; i++)
		target = decide(&state, w);
	return target;
}

static void
test_scale_free(void)
{
	double		backends[] = {2, 16, 2000};
	int			cpus[] = {2, 480};
	AutoWindowFigures w;

	for (int i = 0; i < lengthof(backends); i++)
	{
		is_int(grow_at(AUTO_GROW_BLOCKED_SHARE, backends[i], CPUS, true), 8,
			   "scale: %g backends on %d CPUs, just below the grow share: holds",
			   backends[i], CPUS);
		is_int(grow_at(AUTO_GROW_BLOCKED_SHARE, backends[i], CPUS, false), 16,
			   "scale: %g backends on %d CPUs, at the grow share: grows",
			   backends[i], CPUS);
	}
	for (int i = 0; i < lengthof(cpus); i++)
	{
		is_int(grow_at(AUTO_GROW_BLOCKED_SHARE, BACKENDS, cpus[i], true), 8,
			   "scale: %g backends on %d CPUs, just below the grow share: holds",
			   BACKENDS, cpus[i]);
		is_int(grow_at(AUTO_GROW_BLOCKED_SHARE, BACKENDS, cpus[i], false), 16,
			   "scale: %g backends on %d CPUs, at the grow share: grows",
			   BACKENDS, cpus[i]);
	}

	/* backends unknown: per CPU, and the rate is the total */
	for (int i = 0; i < lengthof(cpus); i++)
	{
		is_int(grow_at(AUTO_GROW_BLOCKED_SHARE, 0, cpus[i], true), 8,
			   "scale: backends unknown on %d CPUs, just below the grow share per CPU: holds",
			   cpus[i]);
		is_int(grow_at(AUTO_GROW_BLOCKED_SHARE, 0, cpus[i], false), 16,
			   "scale: backends unknown on %d CPUs, at the grow share per CPU: grows",
			   cpus[i]);
	}
	w = window_at(8, 0);
	w.backends = 0;
	w.blocked_ns = blocked_ns_for(HOT_SHARE, CPUS, WINDOW_S);
	{
		AutoRulesState state = fresh_state(8);

		(void) decide(&state, w);
	}
	ok(last_verdict.blocked_share == HOT_SHARE &&
	   last_verdict.rate == ACQUISITIONS / WINDOW_S / CPUS,
	   "scale: backends unknown: the share and the rate per CPU");

	/* the shrink threshold means the same at 2000 backends */
	w = window_at(16, 0);
	w.backends = 2000;
	w.blocked_ns = blocked_ns_for(AUTO_SHRINK_BLOCKED_SHARE, 2000, WINDOW_S);
	is_int(after_windows(AUTO_QUIET_WINDOWS, w), 16,
		   "scale: 2000 backends at the shrink share: hold");
	w.blocked_ns--;
	is_int(after_windows(AUTO_QUIET_WINDOWS, w), 8,
		   "scale: 2000 backends just below the shrink share: halve");
}

/*
 * From 8 at 96 CPUs, a load that each doubling relieves up to 64 locks:
 * one grow every window once the first was kept, one try past 64 that is
 * undone, then 64 for the rest of the hour.
 */
static void
test_ramp(void)
{
	AutoRulesState state;
	int			locks;
	int			changes = 0;
	int			windows = 0;
	int			knee = 64;
	int			doublings = log2_of(knee / 8);
	int			most = 8;

	set_host(96);
	set_model(8, knee, 0.8);
	locks = calm_begin(&state, 8, MIN_LOCKS, host_max);
	while (locks < knee && windows < 100)
	{
		locks = run_windows(&state, locks, 1, model_window, &changes);
		windows++;
	}
	is_int(windows, AUTO_HOT_WINDOWS + doublings - 1,
		   "ramp: 8 to 64 at 96 CPUs in %d windows, a doubling a window after the first",
		   AUTO_HOT_WINDOWS + doublings - 1);
	locks = run_windows(&state, locks, 1, model_window, &changes);
	is_int(locks, 2 * knee, "ramp: then a try at 128");
	locks = run_windows(&state, locks, 1, model_window, &changes);
	is_int(locks, 4 * knee, "ramp: which did not help, still contended: a look past it, at 256");
	ok(reason_is(AUTO_REASON_LOOK_PAST_GROW) && state.trial_from == knee,
	   "ramp: on the trial from 64");
	most = locks;
	locks = run_windows(&state, locks, 1, model_window, &changes);
	is_int(locks, knee, "ramp: which did not help either, undone to 64");
	ok(reason_is(AUTO_REASON_UNDO) && state.ceiling == knee,
	   "ramp: 64 is the ceiling");
	windows += 3;
	for (; windows < WINDOWS_IN(3600); windows++)
	{
		locks = run_windows(&state, locks, 1, model_window, &changes);
		most = Max(most, locks);
	}

	/*
	 * retries at 128 as the ceiling's hold ends, each undone, without a
	 * look-past: once per load
	 */
	ok(locks == knee && most == 4 * knee &&
	   changes >= doublings + 3 && changes <= log2_of(host_max) + 3,
	   "ramp: 64 at the end of the hour, never above 256, within log2(max) + 3 = %d changes",
	   log2_of(host_max) + 3);
	if (locks != knee || most != 4 * knee || changes > log2_of(host_max) + 3)
		printf("#   got %d locks (at most %d) after %d changes\n",
			   locks, most, changes);
	set_host(CPUS);
}

/*
 * Trials an hour of a steady load makes when every one fails: grows at the
 * start and each time the ceiling's hold ends, the hold doubling from
 * AUTO_CEILING_HOLD_S; and, above the floor, halvings each time the
 * number has been held AUTO_DOWN_HOLD_S, that hold doubling too.  Each is
 * two changes.  A grow and a halving due in the same window count apart:
 * the bound is an upper one.
 */
static int
failed_trials_in(double seconds, bool above_floor)
{
	int			trials = 0;

	for (double t = 0, hold = AUTO_CEILING_HOLD_S; t < seconds; t += hold,
		 hold = Min(hold * 2, AUTO_CEILING_HOLD_MAX_S))
		trials++;
	if (above_floor)
		for (double t = AUTO_DOWN_HOLD_S, hold = AUTO_DOWN_HOLD_S; t < seconds;
			 hold = Min(hold * 2, AUTO_CEILING_HOLD_MAX_S), t += hold)
			trials++;
	return trials;
}

/*
 * At this CPU count: the start, a ramp to the max under a load that each
 * doubling relieves, an hour there, quiet windows back down to the floor,
 * and an hour of each steady load.
 */
static void
test_cpu_count(int cpus, int start, int max)
{
	AutoRulesState state;
	int			doublings = log2_of(max / start);
	int			halvings = log2_of(max / MIN_LOCKS);
	int			hour = WINDOWS_IN(3600);
	int			bound;
	int			locks;
	int			changes = 0;
	int			expected;

	set_host(cpus);
	is_int(start_for(cpus), start, "%d CPUs: start at %d", cpus, start);
	is_int(max_for(cpus), max, "%d CPUs: max %d", cpus, max);
	locks = calm_begin(&state, start, MIN_LOCKS, max);
	is_int(locks, start, "%d CPUs: begin at the start keeps it", cpus);

	set_model(start, max, 0.8);
	locks = run_windows(&state, locks, AUTO_HOT_WINDOWS + doublings - 1,
						model_window, &changes);
	ok(locks == max && changes == doublings,
	   "%d CPUs: contention grows %d to %d in %d windows", cpus, start, max,
	   AUTO_HOT_WINDOWS + doublings - 1);

	/*
	 * At the max, still contended: one halving tried, which hurts; it looks
	 * past to a quarter, when that is above the floor, which hurts more.
	 */
	changes = 0;
	expected = max / 4 >= MIN_LOCKS ? 3 : 2;
	locks = run_windows(&state, locks, hour, model_window, &changes);
	ok(locks == max && changes == expected,
	   "%d CPUs: at %d the load holds an hour but for its halving, tried after AUTO_DOWN_HOLD_S and undone (%d changes)",
	   cpus, max, expected);
	if (locks != max || changes != expected)
		printf("#   got %d locks after %d changes\n", locks, changes);
	changes = 0;
	locks = run_windows(&state, locks, AUTO_QUIET_WINDOWS * halvings,
						quiet_window, &changes);
	ok(locks == MIN_LOCKS && changes == halvings,
	   "%d CPUs: quiet windows halve %d to %d in %d windows", cpus, max,
	   MIN_LOCKS, AUTO_QUIET_WINDOWS * halvings);
	if (locks != MIN_LOCKS || changes != halvings)
		printf("#   got %d locks after %d changes\n", locks, changes);

	/* a steady load that no more locks relieve, and fewer hurt */
	set_model(start, start, 0.25);
	locks = calm_begin(&state, start, MIN_LOCKS, max);
	changes = 0;

	/*
	 * and one look-past of each: the first halving from the start that hurt,
	 * and the first grow that did not help, below the max
	 */
	bound = 2 * failed_trials_in(3600, start > MIN_LOCKS) + 1 +
		(start < max ? 1 : 0);
	locks = run_windows(&state, locks, hour, model_window, &changes);
	ok(locks == start && changes <= bound,
	   "%d CPUs: a load more locks do not relieve stays at %d, %d change(s) an hour (at most %d)",
	   cpus, start, changes, bound);

	/* the ramp load from the floor, for the hour */
	set_model(MIN_LOCKS, Min(64, max), 0.8);
	locks = calm_begin(&state, MIN_LOCKS, MIN_LOCKS, max);
	changes = 0;
	bound = log2_of(Min(64, max) / MIN_LOCKS) +
		2 * failed_trials_in(3600, true) + 2;
	locks = run_windows(&state, locks, hour, model_window, &changes);
	ok(locks == Min(64, max) && changes <= bound,
	   "%d CPUs: a load relieved up to %d settles there, %d change(s) an hour (at most %d)",
	   cpus, Min(64, max), changes, bound);

	/*
	 * Between the thresholds: contended, but not enough to grow; the halving
	 * is tried after AUTO_DOWN_HOLD_S, does as well, and is kept, and so is
	 * each next one, as soon as the load has held still, down to the floor
	 * within the hour.
	 */
	locks = calm_begin(&state, start, MIN_LOCKS, max);
	changes = 0;
	locks = run_windows(&state, locks, hour, lukewarm_window, &changes);
	ok(locks == MIN_LOCKS && changes == log2_of(start / MIN_LOCKS),
	   "%d CPUs: a lukewarm load at %d halves down to the floor within the hour", cpus, start);
	if (locks != MIN_LOCKS)
		printf("#   got %d locks after %d changes\n", locks, changes);
	set_host(CPUS);
}

int
main(void)
{
	test_cpus();
	test_bounds_and_start();
	test_begin();
	test_figures();
	test_thresholds();
	test_streaks();
	test_trial();
	test_look_ahead();
	test_look_past_grow();
	test_spread();
	test_unjudged();
	test_down_trial();
	test_descent_recheck();
	test_start();
	test_look_past();
	test_grow_backoff();
	test_ceiling();
	test_backoff();
	test_hysteresis();
	test_clamps();
	test_scale_free();
	test_ramp();
	test_cpu_count(2, 8, 16);
	test_cpu_count(16, 16, 128);
	test_cpu_count(96, 128, 1024);
	test_cpu_count(480, 512, 1024);

	printf("1..%d\n", tests_run);
	if (tests_failed > 0)
		printf("# %d of %d failed\n", tests_failed, tests_run);
	return tests_failed > 0 ? 1 : 0;
}
