/*-------------------------------------------------------------------------
 *
 * test_auto_rules.c
 *		Unit tests of auto mode's rules (walscale_auto_rules.c): synthetic
 *		windows, each rule just below and at its threshold, and the start
 *		and bounds for 2, 16, 96 and 480 CPUs.  Prints TAP.
 *
 * t/010_auto_rules.pl builds it with the compiler and flags of the server
 * under test and runs it; no server is needed.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include <stdarg.h>

#include "walscale_auto_rules.h"

/* the core patch's XLOG_INSERT_LOCKS_DEFAULT and XLOG_INSERT_LOCKS_MAX */
#define STOCK_LOCKS		8
#define CORE_MAX_LOCKS	1024

/* the windows below last 10 s, so that ms/s thresholds are round figures */
#define WINDOW_S		10.0
#define NS_PER_MS		UINT64CONST(1000000)

static int	tests_run = 0;
static int	tests_failed = 0;

/* the verdict on the window decide() judged last */
static AutoVerdict last_verdict;

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

/* a 10-s window on active_locks, within the bounds of 128 CPUs (1 to 1024) */
static AutoWindowFigures
window_of(int active_locks, uint64 acquisitions, uint64 blocking_waits,
		  uint64 blocked_ms, int locks_used)
{
	AutoWindowFigures w;

	w.acquisitions = acquisitions;
	w.blocking_waits = blocking_waits;
	w.blocked_ns = blocked_ms * NS_PER_MS;
	w.locks_used = locks_used;
	w.active_locks = active_locks;
	w.window_s = WINDOW_S;
	w.min_locks = walscale_rules_min_locks(128);
	w.max_locks = max_for(128);
	return w;
}

/* 10 blocking waits per 1000 acquisitions on every lock */
static AutoWindowFigures
hot_window(int active_locks)
{
	return window_of(active_locks, 10000, 100, 0, active_locks);
}

/* no sleep, one lock in use */
static AutoWindowFigures
quiet_window(int active_locks)
{
	return window_of(active_locks, 10000, 0, 0, 1);
}

/* between the thresholds: 1 blocking wait per 1000, all locks in use */
static AutoWindowFigures
lukewarm_window(int active_locks)
{
	return window_of(active_locks, 10000, 10, 0, active_locks);
}

static AutoRulesState
fresh_state(void)
{
	AutoRulesState state;

	(void) walscale_rules_begin(&state, 16, CORE_MAX_LOCKS);
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
	AutoRulesState state = fresh_state();
	int			target = w.active_locks;

	for (int i = 0; i < n; i++)
		target = decide(&state, w);
	return target;
}

/*
 * Windows like make_window(locks) on the number in effect, each change
 * applied, until window_limit windows passed; returns the number reached and
 * sets *changes.
 */
static int
run_windows(AutoRulesState *state, int locks, int window_limit,
			AutoWindowFigures (*make_window) (int),
			int min_locks, int max_locks, int *changes)
{
	*changes = 0;
	for (int i = 0; i < window_limit; i++)
	{
		AutoWindowFigures w = make_window(locks);
		int			target;

		w.min_locks = min_locks;
		w.max_locks = max_locks;
		target = decide(state, w);
		if (target != locks)
			(*changes)++;
		locks = target;
	}
	return locks;
}

/* Windows needed, on a steady window kind, for the next change. */
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

static void
test_bounds_and_start(void)
{
	is_int(max_for(1), 8, "max at 1 CPU: PostgreSQL's 8");
	is_int(max_for(2), 16, "max at 2 CPUs: 8 per CPU");
	is_int(max_for(16), 128, "max at 16 CPUs: 8 per CPU");
	is_int(max_for(64), 512, "max at 64 CPUs: 512, a power of two");
	is_int(max_for(65), 1024, "max at 65 CPUs: 520 rounded up to 1024");
	is_int(max_for(96), 1024, "max at 96 CPUs: 768 rounded up to 1024");
	is_int(max_for(128), 1024, "max at 128 CPUs: 1024");
	is_int(max_for(480), 1024, "max at 480 CPUs: capped at the core's 1024");
	is_int(walscale_rules_max_locks(480, STOCK_LOCKS, 4096), 4096,
		   "max at 480 CPUs with 4096 slots: 3840 rounded up to 4096");

	is_int(start_for(1), 8, "start at 1 CPU: PostgreSQL's 8");
	is_int(start_for(2), 8, "start at 2 CPUs: PostgreSQL's 8");
	is_int(start_for(8), 8, "start at 8 CPUs: 8");
	is_int(start_for(9), 16, "start at 9 CPUs: rounded up to 16");
	is_int(start_for(16), 16, "start at 16 CPUs: one per CPU");
	is_int(start_for(96), 128, "start at 96 CPUs: rounded up to 128");
	is_int(start_for(480), 512, "start at 480 CPUs: rounded up to 512");
	is_int(start_for(1024), 1024, "start at 1024 CPUs: 1024");
	is_int(start_for(2048), 1024, "start at 2048 CPUs: no more than the max");

	is_int(walscale_rules_min_locks(2), 1, "min at 2 CPUs: 1");
	is_int(walscale_rules_min_locks(16), 1, "min at 16 CPUs: 1");
	is_int(walscale_rules_min_locks(96), 1, "min at 96 CPUs: 1");
	is_int(walscale_rules_min_locks(480), 1, "min at 480 CPUs: 1");
}

static void
test_begin(void)
{
	AutoRulesState state;

	is_int(walscale_rules_begin(&state, 1024, max_for(2)), 16,
		   "begin above the max (1024 at 2 CPUs): down to 16");
	is_int(walscale_rules_begin(&state, 16, max_for(2)), 16,
		   "begin at the max: kept");
	is_int(walscale_rules_begin(&state, 1, max_for(2)), 1,
		   "begin below the max: kept");

	state.hot_windows = 1;
	state.quiet_windows = 2;
	state.quiet_needed = 24;
	state.last_shrink_from = 64;
	(void) walscale_rules_begin(&state, 32, CORE_MAX_LOCKS);
	ok(state.hot_windows == 0 && state.quiet_windows == 0 &&
	   state.quiet_needed == AUTO_QUIET_WINDOWS && state.last_shrink_from == 0,
	   "begin forgets streaks and backoff");
}

static void
test_figures(void)
{
	AutoRulesState state = fresh_state();

	(void) decide(&state, window_of(16, 10000, 25, 3000, 16));
	ok(last_verdict.waits_per_1000 == 2.5,
	   "25 waits in 10000 acquisitions: 2.5 per 1000");
	ok(last_verdict.blocked_ms_per_s == 300.0,
	   "3000 ms blocked in 10 s: 300 ms/s");

	state = fresh_state();
	is_int(decide(&state, window_of(16, 0, 0, 0, 0)), 16,
		   "a window without acquisitions holds");
	ok(last_verdict.waits_per_1000 == 0 && last_verdict.reason == NULL,
	   "a window without acquisitions: 0 waits per 1000, no reason");
}

static void
test_grow(void)
{
	AutoRulesState state;

	/* 10000 acquisitions, 16 of 16 locks used */
	is_int(after_windows(2, window_of(16, 10000, 19, 0, 16)), 16,
		   "grow: 1.9 waits per 1000 twice holds");
	is_int(after_windows(2, window_of(16, 10000, 20, 0, 16)), 32,
		   "grow: 2.0 waits per 1000 twice doubles");
	is_int(after_windows(2, window_of(16, 10000, 0, 1999, 16)), 16,
		   "grow: 199.9 ms/s blocked twice holds");
	is_int(after_windows(2, window_of(16, 10000, 0, 2000, 16)), 32,
		   "grow: 200 ms/s blocked twice doubles");
	is_int(after_windows(2, window_of(16, 499, 100, 0, 16)), 16,
		   "grow: 499 acquisitions are too few to judge");
	is_int(after_windows(2, window_of(16, 500, 100, 0, 16)), 32,
		   "grow: 500 acquisitions are enough");
	is_int(after_windows(2, window_of(16, 10000, 100, 0, 7)), 16,
		   "grow: 7 of 16 locks used holds");
	is_int(after_windows(2, window_of(16, 10000, 100, 0, 8)), 32,
		   "grow: 8 of 16 locks used (half) doubles");

	is_int(after_windows(1, hot_window(16)), 16,
		   "grow: one hot window holds");
	state = fresh_state();
	(void) decide(&state, hot_window(16));
	is_int(decide(&state, hot_window(16)), 32,
		   "grow: the second hot window in a row doubles");
	ok(last_verdict.reason != NULL &&
	   strcmp(last_verdict.reason, "contention") == 0,
	   "grow: the reason is contention");

	state = fresh_state();
	(void) decide(&state, hot_window(16));
	(void) decide(&state, lukewarm_window(16));
	is_int(decide(&state, hot_window(16)), 16,
		   "grow: a window between the thresholds breaks the hot run");
	state = fresh_state();
	(void) decide(&state, hot_window(16));
	(void) decide(&state, quiet_window(16));
	is_int(decide(&state, hot_window(16)), 16,
		   "grow: a quiet window breaks the hot run");
	state = fresh_state();
	(void) decide(&state, hot_window(16));
	(void) decide(&state, window_of(16, 499, 0, 0, 1));
	is_int(decide(&state, hot_window(16)), 32,
		   "grow: a window too small to judge does not break the hot run");

	state = fresh_state();
	(void) decide(&state, hot_window(16));
	(void) decide(&state, hot_window(16));
	is_int(decide(&state, hot_window(32)), 32,
		   "grow: the window after a grow starts a new hot run");
	is_int(decide(&state, hot_window(32)), 64,
		   "grow: two hot windows after a grow double again");

	is_int(after_windows(2, hot_window(1024)), 1024,
		   "grow: at the max (1024) hot windows hold");
	is_int(after_windows(2, hot_window(768)), 1024,
		   "grow: from 768, doubling stops at the max (1024)");
}

static void
test_shrink(void)
{
	AutoRulesState state;
	AutoWindowFigures w;

	/* 100000 acquisitions, 1 of 16 locks used */
	is_int(after_windows(3, window_of(16, 100000, 20, 0, 1)), 16,
		   "shrink: 0.2 waits per 1000 three times holds");
	is_int(after_windows(3, window_of(16, 100000, 19, 0, 1)), 8,
		   "shrink: 0.19 waits per 1000 three times halves");
	is_int(after_windows(3, window_of(16, 100000, 0, 200, 1)), 16,
		   "shrink: 20 ms/s blocked three times holds");
	w = window_of(16, 100000, 0, 0, 1);
	w.blocked_ns = 200 * NS_PER_MS - 1;
	is_int(after_windows(3, w), 8,
		   "shrink: just under 20 ms/s blocked three times halves");
	is_int(after_windows(3, window_of(16, 499, 0, 0, 1)), 16,
		   "shrink: 499 acquisitions are too few to judge");
	is_int(after_windows(3, window_of(16, 500, 0, 0, 1)), 8,
		   "shrink: 500 acquisitions are enough");
	is_int(after_windows(3, window_of(16, 100000, 0, 0, 9)), 16,
		   "shrink: 9 of 16 locks used holds");
	is_int(after_windows(3, window_of(16, 100000, 0, 0, 8)), 8,
		   "shrink: 8 of 16 locks used (half) halves");

	is_int(after_windows(2, quiet_window(16)), 16,
		   "shrink: two quiet windows hold");
	state = fresh_state();
	(void) decide(&state, quiet_window(16));
	(void) decide(&state, quiet_window(16));
	is_int(decide(&state, quiet_window(16)), 8,
		   "shrink: the third quiet window in a row halves");
	ok(last_verdict.reason != NULL &&
	   strcmp(last_verdict.reason, "locks unused") == 0,
	   "shrink: the reason is locks unused");

	state = fresh_state();
	(void) decide(&state, quiet_window(16));
	(void) decide(&state, quiet_window(16));
	(void) decide(&state, lukewarm_window(16));
	is_int(decide(&state, quiet_window(16)), 16,
		   "shrink: a window between the thresholds breaks the quiet run");
	state = fresh_state();
	(void) decide(&state, quiet_window(16));
	(void) decide(&state, quiet_window(16));
	(void) decide(&state, hot_window(16));
	is_int(decide(&state, quiet_window(16)), 16,
		   "shrink: a hot window breaks the quiet run");
	state = fresh_state();
	(void) decide(&state, quiet_window(16));
	(void) decide(&state, quiet_window(16));
	(void) decide(&state, window_of(16, 499, 100, 0, 16));
	is_int(decide(&state, quiet_window(16)), 8,
		   "shrink: a window too small to judge does not break the quiet run");

	state = fresh_state();
	for (int i = 0; i < 3; i++)
		(void) decide(&state, quiet_window(16));
	is_int(windows_to_change(&state, 8, quiet_window, 10), 3,
		   "shrink: after a shrink, three more quiet windows to the next");

	is_int(after_windows(3, window_of(16, 100000, 0, 0, 3)), 8,
		   "shrink: 3 of 16 locks used: down to 8, half");
	is_int(after_windows(3, window_of(12, 100000, 0, 0, 6)), 8,
		   "shrink: 6 of 12 locks used: down to 8, not 6, a power of two that holds them");
	is_int(after_windows(3, quiet_window(2)), 1,
		   "shrink: from 2 down to the min, 1");
	is_int(after_windows(3, quiet_window(1)), 1,
		   "shrink: at the min quiet windows hold");
	state = fresh_state();
	(void) decide(&state, quiet_window(1));
	is_int(state.quiet_windows, 0,
		   "shrink: at the min a quiet window counts for nothing");
	w = quiet_window(6);
	w.min_locks = 4;
	is_int(after_windows(3, w), 4,
		   "shrink: from 6 with a min of 4: down to 4, not 3");
}

/*
 * Shrink from 16 to 8, then let two hot windows undo it; returns the quiet
 * windows the shrink took.
 */
static int
undone_shrink(AutoRulesState *state)
{
	int			quiet = windows_to_change(state, 16, quiet_window, 100);

	(void) decide(state, hot_window(8));
	(void) decide(state, hot_window(8));
	return quiet;
}

static void
test_backoff(void)
{
	AutoRulesState state = fresh_state();
	int			changes;

	is_int(undone_shrink(&state), 3, "backoff: the first shrink takes 3 quiet windows");
	is_int(state.quiet_needed, 6, "backoff: a grow that undoes it doubles them to 6");
	is_int(undone_shrink(&state), 6, "backoff: the next shrink takes 6");
	is_int(undone_shrink(&state), 12, "backoff: then 12");
	is_int(undone_shrink(&state), 24, "backoff: then 24");
	is_int(state.quiet_needed, 48, "backoff: then 48, the cap");
	is_int(undone_shrink(&state), 48, "backoff: at the cap the shrink takes 48");
	is_int(state.quiet_needed, 48, "backoff: and the cap holds after another undone shrink");

	/* a grow to a number no shrink left: no backoff */
	state = fresh_state();
	(void) decide(&state, hot_window(16));
	(void) decide(&state, hot_window(16));
	is_int(state.quiet_needed, AUTO_QUIET_WINDOWS,
		   "backoff: a grow that undoes no shrink leaves 3 quiet windows");

	/* shrink 32 -> 16 -> 8, grow 8 -> 16: not back to 32, no backoff */
	state = fresh_state();
	(void) run_windows(&state, 32, 6, quiet_window, 1, 1024, &changes);
	(void) decide(&state, hot_window(8));
	(void) decide(&state, hot_window(8));
	is_int(state.quiet_needed, 6,
		   "backoff: shrinks 32 to 16 to 8, a grow to 16 undoes the last: doubles");
	state = fresh_state();
	(void) run_windows(&state, 32, 6, quiet_window, 1, 1024, &changes);
	(void) decide(&state, hot_window(8));
	(void) decide(&state, hot_window(8));
	(void) decide(&state, hot_window(16));
	(void) decide(&state, hot_window(16));
	is_int(state.quiet_needed, 6,
		   "backoff: the grow on to 32 does not double again");
}

/*
 * At this CPU count: the bounds and the start, then steady hot windows from
 * the start, a doubling every two windows up to the max, and steady quiet
 * windows from there, a halving every three down to the min.
 */
static void
test_cpus(int cpus, int start, int max, int doublings, int halvings)
{
	AutoRulesState state;
	int			min = walscale_rules_min_locks(cpus);
	int			locks;
	int			changes;

	is_int(start_for(cpus), start, "%d CPUs: start at %d", cpus, start);
	is_int(max_for(cpus), max, "%d CPUs: max %d", cpus, max);

	locks = walscale_rules_begin(&state, start_for(cpus), max_for(cpus));
	is_int(locks, start, "%d CPUs: begin at the start keeps it", cpus);
	locks = run_windows(&state, locks, AUTO_HOT_WINDOWS * doublings,
						hot_window, min, max, &changes);
	ok(locks == max && changes == doublings,
	   "%d CPUs: hot windows grow %d to %d, %d doubling%s",
	   cpus, start, max, doublings, doublings == 1 ? "" : "s");
	if (locks != max || changes != doublings)
		printf("#   got %d locks after %d changes\n", locks, changes);
	locks = run_windows(&state, locks, 10, hot_window, min, max, &changes);
	ok(locks == max && changes == 0,
	   "%d CPUs: at %d hot windows hold", cpus, max);

	locks = run_windows(&state, locks, AUTO_QUIET_WINDOWS * halvings,
						quiet_window, min, max, &changes);
	ok(locks == min && changes == halvings,
	   "%d CPUs: quiet windows shrink %d to %d, %d halving%s",
	   cpus, max, min, halvings, halvings == 1 ? "" : "s");
	if (locks != min || changes != halvings)
		printf("#   got %d locks after %d changes\n", locks, changes);
	locks = run_windows(&state, locks, 10, quiet_window, min, max, &changes);
	ok(locks == min && changes == 0,
	   "%d CPUs: at %d quiet windows hold", cpus, min);
}

int
main(void)
{
	test_bounds_and_start();
	test_begin();
	test_figures();
	test_grow();
	test_shrink();
	test_backoff();
	test_cpus(2, 8, 16, 1, 4);
	test_cpus(16, 16, 128, 3, 7);
	test_cpus(96, 128, 1024, 3, 10);
	test_cpus(480, 512, 1024, 1, 10);

	printf("1..%d\n", tests_run);
	if (tests_failed > 0)
		printf("# %d of %d failed\n", tests_failed, tests_run);
	return tests_failed > 0 ? 1 : 0;
}
