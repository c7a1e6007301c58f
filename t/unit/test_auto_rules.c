/*-------------------------------------------------------------------------
 *
 * test_auto_rules.c
 *		Unit tests of auto mode's rules (walscale_auto_rules.c): the CPUs
 *		that count, the start and bounds for 2, 16, 96 and 480 CPUs, and
 *		synthetic windows that put each part of the paired probe just below
 *		and at its boundary: the noise gate, the phases' lengths, the keep
 *		margins with and without noise, the holds and their doubling and
 *		cap, their lift by the context, the step after a failure, a probe
 *		abandoned, the chain after a kept probe, the bounds, and a day of a
 *		steady load at each CPU count.  Prints TAP.
 *
 * Expected values are derived from the header's constants, so that a
 * retuned constant keeps the tests valid while a broken rule fails them.
 * t/010_auto_rules.pl builds this file with the compiler and flags of the
 * server under test and runs it; no server is needed.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include <math.h>
#include <stdarg.h>

#include "walscale_auto_rules.h"
#include "unit_tap.h"

/* the core patch's XLOG_INSERT_LOCKS_DEFAULT and XLOG_INSERT_LOCKS_MAX */
#define STOCK_LOCKS		8
#define CORE_MAX_LOCKS	1024
#define MOST_LOCKS		4096

/*
 * The default window: walscale.auto_interval's 10 s, 16 backends on 16
 * CPUs.  ACQUISITIONS is large, so that a rate factor of exp(x) is carried
 * by the integer count to about 1e-7.
 */
#define WINDOW_S		10.0
#define BACKENDS		16.0
#define CPUS			16
#define ACQUISITIONS	16000000.0
#define HOT_SHARE		0.2
#define K				AUTO_PROBE_WINDOWS
#define EPS				1e-4

/* windows of WINDOW_S in s seconds */
#define WINDOWS_IN(s)	((int) ((s) / WINDOW_S))


static AutoVerdict last_verdict;
static uint64 lock_use[MOST_LOCKS];

/*
 * The load the windows are built from: the log of the rate factor at a
 * number of locks, a term of the window's index (noise or drift), and the
 * blocked share; the index counts every window built.
 */
static double (*log_rate_at) (int locks);
static double (*log_rate_term) (long index);
static double share_now = HOT_SHARE;
static double backends_now = BACKENDS;
static long window_index = 0;
static int	floor_now = STOCK_LOCKS;
static int	max_now = 128;

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

static int
log2_of(int n)
{
	int			l = 0;

	while ((1 << (l + 1)) <= n)
		l++;
	return l;
}

/* ---- loads ---- */

static double
flat_rate(int locks)
{
	return 0;
}

static double
no_term(long index)
{
	return 0;
}

/* a knee: each doubling below knee_locks loses knee_gain, above it knee_cost */
static int	knee_locks = 32;
static double knee_gain = 0.2;
static double knee_cost = 0.03;

static double
knee_rate(int locks)
{
	double		d = log2((double) locks / knee_locks);

	return d < 0 ? d * log(1 + knee_gain) : d * log(1 - knee_cost);
}

/* one number differs from all others by probe_gain */
static int	probe_target = 0;
static double probe_gain = 0;

static double
step_rate(int locks)
{
	return locks == probe_target ? probe_gain : 0;
}

/* the quadratic term c i^2: every null probe measures -c (K + 1)^2 */
static double quad_c = 0;

static double
quad_term(long index)
{
	return quad_c * (double) index * index;
}

static void
set_load(double (*rate) (int), double (*term) (long))
{
	log_rate_at = rate;
	log_rate_term = term;
	share_now = HOT_SHARE;
	backends_now = BACKENDS;
	window_index = 0;
}

static AutoWindowFigures
window_for(int locks)
{
	AutoWindowFigures w;

	memset(&w, 0, sizeof(w));
	w.acquisitions = (uint64) rint(ACQUISITIONS *
								   exp(log_rate_at(locks) +
									   log_rate_term(window_index)));
	w.blocking_waits = 100;
	w.blocked_ns = (uint64) rint(share_now * backends_now * WINDOW_S * 1e9);
	memset(lock_use, 0, sizeof(lock_use));
	for (int i = 0; i < locks; i++)
		lock_use[i] = 1000;
	w.lock_acquisitions = lock_use;
	w.active_locks = locks;
	w.backends = backends_now;
	w.window_s = WINDOW_S;
	w.cpus = CPUS;
	w.min_locks = floor_now;
	w.max_locks = max_now;
	window_index++;
	return w;
}

static int
decide_window(AutoRulesState *state, AutoWindowFigures w)
{
	walscale_rules_decide(&w, state, &last_verdict);
	return last_verdict.target;
}

static int
decide(AutoRulesState *state, int locks)
{
	return decide_window(state, window_for(locks));
}

/*
 * Windows at the number in effect, each change applied, up to and with the
 * first change or n windows; returns the windows decided (0: none changed
 * within n) and leaves the number in *locks.
 */
static int
windows_to_change(AutoRulesState *state, int *locks, int n)
{
	for (int i = 1; i <= n; i++)
	{
		int			target = decide(state, *locks);

		if (target != *locks)
		{
			*locks = target;
			return i;
		}
	}
	return 0;
}

/* the windows from a fresh state to the first probe on a still load */
#define GATE_WINDOWS	(1 + AUTO_PROBE_SPAN + K - 1)
/* a probe's phase: a window settling, then K measured */
#define PHASE_WINDOWS	(1 + K)

/* a fresh state at locks, through the noise gate to its first probe */
static AutoRulesState
gated_state(int *locks)
{
	AutoRulesState state;

	*locks = walscale_rules_begin(&state, *locks, floor_now, max_now);
	(void) windows_to_change(&state, locks, GATE_WINDOWS);
	return state;
}

/*
 * From the window that began a probe: its phase at the other number, then
 * its phase back, judged on the last window; the number is left in *locks.
 */
static void
finish_probe(AutoRulesState *state, int *locks)
{
	(void) windows_to_change(state, locks, 100);
	(void) windows_to_change(state, locks, PHASE_WINDOWS);
}

/* ---- the tests ---- */

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
	ok(state.run_locks == 0 && state.run_windows == 0 &&
	   state.noise == 0 && state.noise_samples == 0 && state.share < 0 &&
	   state.phase == AUTO_PROBE_NONE && !state.kept &&
	   state.last_probe_up &&
	   state.up.length_s == 0 && state.up.left_s == 0 && !state.up.far &&
	   state.up.share_high < 0 &&
	   state.down.length_s == 0 && state.down.left_s == 0 && !state.down.far &&
	   state.down.share_low < 0,
	   "begin forgets the run, the noise, the share, any probe and both holds, and has the halving probed first");
}

static void
test_figures(void)
{
	AutoRulesState state;

	set_load(flat_rate, no_term);
	floor_now = STOCK_LOCKS;
	max_now = 128;
	(void) walscale_rules_begin(&state, 16, floor_now, max_now);
	(void) decide(&state, 16);
	ok(last_verdict.waits_per_1000 == 100 * 1000.0 / ACQUISITIONS,
	   "figures: waits per 1000 acquisitions");
	ok(fabs(last_verdict.blocked_ms_per_s - HOT_SHARE * BACKENDS * 1000.0) < 1e-6,
	   "figures: ms blocked per s, summed over backends");
	ok(fabs(last_verdict.blocked_share - HOT_SHARE) < 1e-12,
	   "figures: the blocked share");
	ok(fabs(last_verdict.rate - ACQUISITIONS / WINDOW_S / BACKENDS) < 1e-6,
	   "figures: acquisitions per s per running backend");
	is_int(last_verdict.locks_used, 16, "figures: 16 of 16 locks used");
	ok(reason_is(NULL) && last_verdict.target == 16,
	   "figures: the first window holds");

	/* more backends than CPUs: the rate is per CPU */
	backends_now = 4 * CPUS;
	(void) decide(&state, 16);
	ok(fabs(last_verdict.rate - ACQUISITIONS / WINDOW_S / CPUS) < 1e-6,
	   "figures: with 64 active backends on 16 CPUs, the rate is per running backend, 16");
	ok(fabs(last_verdict.blocked_share - HOT_SHARE) < 1e-12,
	   "figures: with 64 active backends on 16 CPUs, the share is per active backend");
	backends_now = BACKENDS;
}

/*
 * Nothing is probed before AUTO_PROBE_WINDOWS null probes are in: on a
 * still load, the first probe is decided on window GATE_WINDOWS, and it is
 * the halving.
 */
static void
test_gate(void)
{
	AutoRulesState state;
	int			locks = 16;
	int			n;

	set_load(flat_rate, no_term);
	floor_now = STOCK_LOCKS;
	max_now = 128;
	(void) walscale_rules_begin(&state, locks, floor_now, max_now);
	n = windows_to_change(&state, &locks, 1000);
	is_int(n, GATE_WINDOWS,
		   "gate: the first probe on window 1 + AUTO_PROBE_SPAN + AUTO_PROBE_WINDOWS - 1 (the first window settles)");
	ok(locks == 8 && reason_is(AUTO_REASON_PROBE_DOWN),
	   "gate: the first probe, while contended, is the halving");
	is_int(state.noise_samples, K, "gate: it has AUTO_PROBE_WINDOWS null probes");

	/* an idle window breaks the run: the gate starts again */
	(void) walscale_rules_begin(&state, 16, floor_now, max_now);
	locks = 16;
	for (int i = 0; i < GATE_WINDOWS - 1; i++)
		(void) decide(&state, locks);
	{
		AutoWindowFigures w = window_for(locks);

		w.acquisitions = AUTO_MIN_ACQUISITIONS - 1;
		is_int(decide_window(&state, w), 16,
			   "gate: an idle window (AUTO_MIN_ACQUISITIONS - 1) holds");
	}
	n = windows_to_change(&state, &locks, 1000);
	is_int(n, AUTO_PROBE_SPAN,
		   "gate: after an idle window, the first probe waits for a whole run again (AUTO_PROBE_SPAN windows)");
}

/*
 * A probe's phases: PHASE_WINDOWS at the other number, PHASE_WINDOWS back,
 * and the gain the difference of the log rates
 */
static void
test_phases(void)
{
	AutoRulesState state;
	int			locks = 16;
	int			n;

	set_load(step_rate, no_term);
	probe_target = 8;
	probe_gain = log(0.9);
	floor_now = STOCK_LOCKS;
	max_now = 128;
	state = gated_state(&locks);
	is_int(locks, 8, "phases: probing 8 from 16");
	n = windows_to_change(&state, &locks, 1000);
	ok(n == PHASE_WINDOWS && locks == 16 && reason_is(AUTO_REASON_PROBE_BACK),
	   "phases: back to 16 after 1 + AUTO_PROBE_WINDOWS windows at 8 (%d)", n);
	for (n = 1; n < PHASE_WINDOWS; n++)
		(void) decide(&state, locks);
	ok(state.phase == AUTO_PROBE_BACK, "phases: still measuring 16 after %d windows", n - 1);
	(void) decide(&state, locks);
	ok(state.phase == AUTO_PROBE_NONE && reason_is(NULL) &&
	   last_verdict.target == 16,
	   "phases: judged on window 1 + AUTO_PROBE_WINDOWS back: 8 ran 10%% slower, not kept");
	ok(fabs(last_verdict.gain - log(0.9)) < 1e-6,
	   "phases: the gain is the log of the rates' ratio (%.6f)", last_verdict.gain);
	ok(state.down.length_s == AUTO_HOLD_S && state.down.left_s == AUTO_HOLD_S,
	   "phases: the failed halving holds halvings for AUTO_HOLD_S");
}

/* the keep margins on a still load (no noise): a grow past AUTO_MIN_GAIN */
static void
test_keep_margins(void)
{
	AutoRulesState state;
	int			locks;

	set_load(step_rate, no_term);
	max_now = 128;

	/* at the floor: only the grow is due */
	for (int side = -1; side <= 1; side += 2)
	{
		floor_now = 16;
		locks = 16;
		probe_target = 32;
		probe_gain = AUTO_MIN_GAIN + side * EPS;
		state = gated_state(&locks);
		ok(locks == 32 && reason_is(AUTO_REASON_PROBE_UP),
		   "margins: at the floor, contended: the grow is probed");
		finish_probe(&state, &locks);
		if (side < 0)
			ok(locks == 16 && state.up.length_s == AUTO_HOLD_S,
			   "margins: a grow that gained AUTO_MIN_GAIN - 1e-4 is not kept, and holds");
		else
			ok(locks == 32 && reason_is(AUTO_REASON_KEEP_MORE) &&
			   state.up.length_s == 0 && state.down.left_s == AUTO_HOLD_S &&
			   state.down.length_s == 0,
			   "margins: a grow that gained AUTO_MIN_GAIN + 1e-4 is kept; the halving back holds for AUTO_HOLD_S, no failure counted");
	}

	/* at the max: only the halving is due; kept unless it lost half */
	for (int side = -1; side <= 1; side += 2)
	{
		floor_now = STOCK_LOCKS;
		max_now = 32;
		locks = 32;
		probe_target = 16;
		probe_gain = -AUTO_MIN_GAIN / 2 + side * EPS;
		state = gated_state(&locks);
		ok(locks == 16 && reason_is(AUTO_REASON_PROBE_DOWN),
		   "margins: at the max: the halving is probed");
		finish_probe(&state, &locks);
		if (side < 0)
			ok(locks == 32 && state.down.length_s == AUTO_HOLD_S,
			   "margins: a halving that lost AUTO_MIN_GAIN / 2 + 1e-4 is not kept");
		else
			ok(locks == 16 && reason_is(AUTO_REASON_KEEP_FEWER) &&
			   state.up.left_s == AUTO_HOLD_S,
			   "margins: a halving that lost AUTO_MIN_GAIN / 2 - 1e-4 is kept; the grow back holds for AUTO_HOLD_S");
	}
	max_now = 128;
}

/*
 * The noise: a log rate of c i^2 gives every null probe -c (K + 1)^2, so
 * the probe's deviation is c (K + 1)^2 sqrt(pi / 2); a grow is then kept
 * past AUTO_PROBE_Z of it, and a halving needs a deviation's evidence.
 */
static void
test_noise_margin(void)
{
	AutoRulesState state;
	int			locks;
	double		bias;
	double		sd;

	/* the deviation at twice the grow's floor */
	quad_c = 2 * AUTO_MIN_GAIN /
		(AUTO_PROBE_Z * (K + 1) * (K + 1) * sqrt(M_PI / 2));
	bias = quad_c * (K + 1) * (K + 1);
	sd = bias * sqrt(M_PI / 2);
	max_now = 128;

	for (int side = -1; side <= 1; side += 2)
	{
		set_load(step_rate, quad_term);
		floor_now = 16;
		locks = 16;
		probe_target = 32;
		/* the probe measures probe_gain - bias */
		probe_gain = AUTO_PROBE_Z * sd + bias + side * EPS;
		state = gated_state(&locks);
		if (side < 0)
			ok(fabs(last_verdict.spread - sd) < 1e-6,
			   "noise: null probes of |g| = c (K + 1)^2 give a deviation of that times sqrt(pi / 2) (%.6f)",
			   last_verdict.spread);
		finish_probe(&state, &locks);
		ok(side < 0 ? locks == 16 : locks == 32,
		   "noise: a grow that gained AUTO_PROBE_Z deviations %s 1e-4 (above AUTO_MIN_GAIN) %s",
		   side < 0 ? "-" : "+", side < 0 ? "is not kept" : "is kept");
	}

	for (int side = -1; side <= 1; side += 2)
	{
		set_load(step_rate, quad_term);
		floor_now = STOCK_LOCKS;
		max_now = 32;
		locks = 32;
		probe_target = 16;
		probe_gain = sd - AUTO_MIN_GAIN / 2 + bias + side * EPS;
		state = gated_state(&locks);
		finish_probe(&state, &locks);
		ok(side < 0 ? locks == 32 : locks == 16,
		   "noise: a halving whose gain is a deviation less AUTO_MIN_GAIN / 2, %s 1e-4, %s",
		   side < 0 ? "-" : "+", side < 0 ? "is not kept" : "is kept");
	}
	max_now = 128;
	quad_c = 0;
}

/*
 * The holds: after a failed grow, the next grow AUTO_HOLD_S later, to four
 * times the number, then twice, each hold doubled, up to AUTO_HOLD_MAX_S.
 */
static void
test_holds(void)
{
	AutoRulesState state;
	int			locks = 16;
	double		hold = AUTO_HOLD_S;
	bool		far = true;

	set_load(flat_rate, no_term);
	floor_now = 16;
	max_now = 1024;
	state = gated_state(&locks);
	finish_probe(&state, &locks);
	for (int i = 0; i < 6; i++)
	{
		int			n = windows_to_change(&state, &locks, 10000);

		ok(n == WINDOWS_IN(hold) && locks == (far ? 64 : 32) &&
		   reason_is(far ? AUTO_REASON_PROBE_UP_FAR : AUTO_REASON_PROBE_UP),
		   "holds: failed grow %d: the next probed %.0f s later, to %d", i + 1,
		   hold, far ? 64 : 32);
		if (n != WINDOWS_IN(hold))
			printf("#   got %d windows, %d locks\n", n, locks);
		(void) windows_to_change(&state, &locks, 100);
		n = windows_to_change(&state, &locks, PHASE_WINDOWS);
		ok(n == 0 && locks == 16, "holds: ... and not kept");
		hold = Min(hold * 2, AUTO_HOLD_MAX_S);
		far = !far;
	}
	ok(state.up.length_s == AUTO_HOLD_MAX_S,
	   "holds: after 7 failures the hold is at AUTO_HOLD_MAX_S");
}

/* the context: a hold is lifted when the share moved by AUTO_CONTEXT_CHANGE */
static void
test_lift(void)
{
	AutoRulesState state;
	int			locks;
	int			n;

	for (int side = -1; side <= 1; side += 2)
	{
		set_load(flat_rate, no_term);
		floor_now = 16;
		max_now = 1024;
		locks = 16;
		state = gated_state(&locks);
		finish_probe(&state, &locks);
		share_now = HOT_SHARE * AUTO_CONTEXT_CHANGE * (1 + side * EPS);
		n = windows_to_change(&state, &locks, 10000);
		if (side < 0)
			is_int(n, WINDOWS_IN(AUTO_HOLD_S),
				   "lift: a share just under AUTO_CONTEXT_CHANGE times the failed grow's waits for the hold");
		else
			ok(n > 0 && n < WINDOWS_IN(AUTO_HOLD_S) && locks == 64,
			   "lift: a share just over AUTO_CONTEXT_CHANGE times the failed grow's lifts its hold (probed after %d windows)", n);
	}

	for (int side = -1; side <= 1; side += 2)
	{
		set_load(flat_rate, no_term);
		probe_target = 512;
		floor_now = STOCK_LOCKS;
		max_now = 32;
		locks = 32;
		set_load(step_rate, no_term);
		probe_target = 16;
		probe_gain = -0.5;
		state = gated_state(&locks);
		finish_probe(&state, &locks);
		share_now = HOT_SHARE / AUTO_CONTEXT_CHANGE * (1 - side * EPS);
		n = windows_to_change(&state, &locks, 10000);
		if (side < 0)
			is_int(n, WINDOWS_IN(AUTO_HOLD_S),
				   "lift: a share just over the failed halving's over AUTO_CONTEXT_CHANGE waits for the hold");
		else
			ok(n > 0 && n < WINDOWS_IN(AUTO_HOLD_S) && locks == 8,
			   "lift: a share just under the failed halving's over AUTO_CONTEXT_CHANGE lifts its hold (probed after %d windows)", n);
	}
	max_now = 128;
}

/* both due: the halving first, then they take turns; a grow needs contention */
static void
test_turns(void)
{
	AutoRulesState state;
	int			locks = 32;

	set_load(step_rate, no_term);
	probe_target = 0;
	floor_now = STOCK_LOCKS;
	max_now = 128;
	state = gated_state(&locks);
	is_int(locks, 16, "turns: the halving first");
	probe_target = 16;
	probe_gain = -0.5;
	finish_probe(&state, &locks);
	(void) windows_to_change(&state, &locks, 1000);
	ok(locks == 64 && reason_is(AUTO_REASON_PROBE_UP),
	   "turns: then the grow, its hold none");

	/* an abandoned halving leaves no hold: both due, the grow's turn */
	set_load(flat_rate, no_term);
	floor_now = STOCK_LOCKS;
	locks = 32;
	state = gated_state(&locks);
	{
		AutoWindowFigures w = window_for(locks);

		w.acquisitions = 0;
		locks = decide_window(&state, w);
	}
	(void) windows_to_change(&state, &locks, 1000);
	ok(locks == 64 && reason_is(AUTO_REASON_PROBE_UP),
	   "turns: after a halving abandoned, both due, the grow goes");

	/* just under the grow's share: only halvings */
	set_load(flat_rate, no_term);
	share_now = AUTO_GROW_BLOCKED_SHARE * (1 - EPS);
	floor_now = 32;
	locks = 32;
	(void) walscale_rules_begin(&state, locks, floor_now, max_now);
	is_int(windows_to_change(&state, &locks, 2000), 0,
		   "turns: at the floor with a share just under AUTO_GROW_BLOCKED_SHARE nothing is probed");
	share_now = AUTO_GROW_BLOCKED_SHARE * (1 + EPS);
	(void) windows_to_change(&state, &locks, 100);
	ok(locks == 64, "turns: just over AUTO_GROW_BLOCKED_SHARE the grow is probed");
}

/* a probe abandoned by an idle window or another load, and a kept chain */
static void
test_abandon_and_chain(void)
{
	AutoRulesState state;
	int			locks = 16;
	int			n;

	set_load(flat_rate, no_term);
	floor_now = STOCK_LOCKS;
	max_now = 128;
	state = gated_state(&locks);
	{
		AutoWindowFigures w = window_for(locks);

		w.acquisitions = 0;
		is_int(decide_window(&state, w), 16,
			   "abandon: an idle window at the other number goes back");
		ok(reason_is(AUTO_REASON_ABANDON) && state.phase == AUTO_PROBE_NONE &&
		   state.down.left_s <= 0 && state.down.length_s == 0,
		   "abandon: nothing learnt, no hold");
	}

	/* exactly AUTO_MIN_ACQUISITIONS is not idle: the probe goes on */
	locks = 16;
	state = gated_state(&locks);
	{
		AutoWindowFigures w = window_for(locks);

		w.acquisitions = AUTO_MIN_ACQUISITIONS;
		is_int(decide_window(&state, w), 8,
			   "abandon: a window of exactly AUTO_MIN_ACQUISITIONS is not idle");
		ok(state.phase == AUTO_PROBE_AWAY, "abandon: ... and the probe goes on");
	}

	/* another load while measuring back: no change, the probe ends */
	locks = 16;
	state = gated_state(&locks);
	(void) windows_to_change(&state, &locks, 100);
	backends_now = BACKENDS * AUTO_CONTEXT_CHANGE * (1 + EPS);
	(void) decide(&state, locks);
	ok(state.phase == AUTO_PROBE_BACK,
	   "abandon: one window of another load measuring back does not end the probe");
	for (int i = 1; i < PHASE_WINDOWS; i++)
		(void) decide(&state, locks);
	ok(state.phase == AUTO_PROBE_NONE && reason_is(NULL) &&
	   last_verdict.target == 16 && state.up.length_s == 0 &&
	   state.down.length_s == 0,
	   "abandon: a phase back whose mean load is over AUTO_CONTEXT_CHANGE times the phase before's ends the probe unjudged");
	backends_now = BACKENDS;

	/* a kept probe: the next goes as soon as a phase is measured */
	set_load(knee_rate, no_term);
	knee_locks = 128;
	floor_now = 16;
	locks = 16;
	state = gated_state(&locks);
	finish_probe(&state, &locks);
	ok(locks == 32 && reason_is(AUTO_REASON_KEEP_MORE), "chain: 32 kept");
	n = windows_to_change(&state, &locks, 100);
	ok(n == PHASE_WINDOWS && locks == 64,
	   "chain: after a kept probe the next begins after 1 + AUTO_PROBE_WINDOWS windows (%d)", n);

	/* an idle window after a kept probe: a whole run again */
	locks = 16;
	state = gated_state(&locks);
	finish_probe(&state, &locks);
	{
		AutoWindowFigures w = window_for(locks);

		w.acquisitions = 0;
		(void) decide_window(&state, w);
	}
	n = windows_to_change(&state, &locks, 100);
	is_int(n, AUTO_PROBE_SPAN,
		   "chain: an idle window after a kept probe: the next waits for a whole run");

	/*
	 * the halving back after a kept grow holds under the share the grow
	 * measured: a share that falls below half of it lifts the hold
	 */
	locks = 16;
	state = gated_state(&locks);
	finish_probe(&state, &locks);
	share_now = HOT_SHARE / AUTO_CONTEXT_CHANGE * (1 - EPS);
	n = windows_to_change(&state, &locks, 1000);
	ok(locks == 16 && n < WINDOWS_IN(AUTO_HOLD_S),
	   "chain: after a kept grow, a share fallen below the grow's over AUTO_CONTEXT_CHANGE lifts the halving's hold (%d windows)", n);
	share_now = HOT_SHARE;

	/* a failure after a keep the other way holds AUTO_HOLD_S, not twice */
	knee_locks = 32;
	locks = 16;
	state = gated_state(&locks);
	finish_probe(&state, &locks);	/* 32 kept */
	(void) windows_to_change(&state, &locks, 100);	/* 64 probed */
	(void) windows_to_change(&state, &locks, 100);	/* back, not kept */
	(void) windows_to_change(&state, &locks, 1000);	/* 16 probed */
	(void) windows_to_change(&state, &locks, 100);	/* back */
	(void) windows_to_change(&state, &locks, PHASE_WINDOWS);
	ok(locks == 32 && state.down.length_s == AUTO_HOLD_S &&
	   state.down.left_s == AUTO_HOLD_S,
	   "chain: a halving that failed after a kept grow holds AUTO_HOLD_S");
	knee_locks = 32;
}

/* the bounds, and a number the probe did not ask for */
static void
test_bounds_follow(void)
{
	AutoRulesState state;
	int			locks = 16;

	set_load(flat_rate, no_term);
	floor_now = STOCK_LOCKS;
	max_now = 128;
	state = gated_state(&locks);
	max_now = 4;
	floor_now = 1;
	is_int(decide(&state, locks), 4, "bounds: a probe at 8 with the max now 4: to 4");
	ok(reason_is(AUTO_REASON_MAX) && state.phase == AUTO_PROBE_NONE,
	   "bounds: the reason is the max, and the probe ends");
	ok(fabs(last_verdict.blocked_share - HOT_SHARE) < 1e-12 &&
	   last_verdict.rate > 0 && last_verdict.locks_used == 8,
	   "bounds: the decision reports the window's figures");
	floor_now = 32;
	max_now = 128;
	is_int(decide(&state, 4), 32, "bounds: below a floor of 32: to 32");
	ok(reason_is(AUTO_REASON_FLOOR), "bounds: the reason is the floor");

	floor_now = STOCK_LOCKS;
	locks = 16;
	state = gated_state(&locks);
	(void) decide(&state, 64);
	ok(state.phase == AUTO_PROBE_NONE && reason_is(NULL),
	   "bounds: a window at a number the probe did not ask for ends it");

	/* a floor raised above the number probed while measuring back */
	locks = 32;
	max_now = 128;
	state = gated_state(&locks);
	(void) windows_to_change(&state, &locks, 100);
	floor_now = 24;
	(void) windows_to_change(&state, &locks, PHASE_WINDOWS);
	ok(locks == 32 && state.phase == AUTO_PROBE_NONE,
	   "bounds: a floor raised above the number probed ends the probe unjudged");
	floor_now = STOCK_LOCKS;
}

/*
 * A day of a steady knee load at this CPU count, from its start: it ends
 * at the knee, and changes no more than the holds allow: a probe each way
 * per hold (AUTO_HOLD_S doubling to AUTO_HOLD_MAX_S), two changes each, and
 * three for each kept one on the way.
 */
static int
probes_in(double seconds)
{
	int			probes = 1;

	for (double t = 0, hold = AUTO_HOLD_S; t + hold < seconds;
		 t += hold, hold = Min(hold * 2, AUTO_HOLD_MAX_S))
		probes++;
	return probes;
}

static void
test_cpu_count(int cpus, int knee)
{
	AutoRulesState state;
	int			start = start_for(cpus);
	int			locks;
	int			changes = 0;
	int			bound;
	int			most = 0;

	set_load(knee_rate, no_term);
	knee_locks = knee;
	share_now = 0.06;
	floor_now = STOCK_LOCKS;
	max_now = max_for(cpus);
	locks = walscale_rules_begin(&state, start, floor_now, max_now);
	for (int i = 0; i < WINDOWS_IN(86400); i++)
	{
		int			target = decide(&state, locks);

		if (target != locks)
			changes++;
		locks = target;
		most = Max(most, locks);
	}
	bound = 3 * abs(log2_of(start) - log2_of(knee)) + 2 * 2 * probes_in(86400);
	ok(locks == knee && changes <= bound && most <= 4 * Max(start, knee),
	   "%d CPUs: a day of a load whose knee is %d, from %d: ends at %d, %d changes (at most %d), at most %d locks",
	   cpus, knee, start, locks, changes, bound, most);
	knee_locks = 32;
}

int
main(void)
{
	test_cpus();
	test_bounds_and_start();
	test_begin();
	test_figures();
	test_gate();
	test_phases();
	test_keep_margins();
	test_noise_margin();
	test_holds();
	test_lift();
	test_turns();
	test_abandon_and_chain();
	test_bounds_follow();
	test_cpu_count(2, 8);
	test_cpu_count(16, 64);
	test_cpu_count(96, 32);
	test_cpu_count(480, 256);

	return unit_tap_done();
}
