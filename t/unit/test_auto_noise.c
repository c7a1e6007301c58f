/*-------------------------------------------------------------------------
 *
 * test_auto_noise.c
 *		Auto mode's rules (walscale_auto_rules.c) under noise: days of 10-s
 *		windows of synthetic loads on a 96-CPU server, with seeded noise on
 *		the insertion rate, the blocked share and the active backends, fed
 *		to walscale_rules_decide() as the worker feeds it, each decision
 *		applied to the next window; and t/008_auto.pl's steady minute on a
 *		2-CPU server, ten thousand times.  Prints a table of what each run
 *		did, then TAP.
 *
 * A load is a response: for L active locks and B clients, the rate a
 * running backend inserts at, as a factor of its rate at the load's best
 * number of locks K (the knee), and the share of active backend time spent
 * asleep on the locks.  Each doubling below the knee multiplies the rate by
 * 1 + gain, each doubling above it by 1 - cost; the share is share_at_knee
 * at and above the knee, and rises by share_slope per halving below it.
 * The loads:
 *
 * - flat: 500 clients bound by WAL writing: every number of locks gives the
 *	 same rate, and a fifth of backend time is spent asleep on the locks
 *	 (behind a holder that waits for a WAL write), so every window is
 *	 contended and no grow can help;
 * - knee: 400 clients, best at 64 locks, each doubling past 64 costing 3%,
 *	 still contended there (6%, above the grow share), so that the rules
 *	 are asked again and again to grow where growing hurts;
 * - ramp: every day 8 hours of 16 clients, a ramp to 2000 in 10 minutes,
 *	 2000 clients with their best at 256 locks, and a ramp back down;
 * - bursts: 100 clients, lukewarm, best at 16 locks, and every 10 minutes
 *	 a minute of 2000 clients, best at 256;
 * - dip: 500 unpooled clients whose rate dips one doubling above the start
 *	 before it rises: 256 locks run 1% slower than 128, 512 run 8% faster
 *	 than 128, 1024 3% slower than 512 (the simulator's unpooled clients at
 *	 16 CPUs dip so: 525, 521, 557 and 637 tps at 16 to 128 locks,
 *	 simulated); contended throughout, so that a search by single doublings
 *	 stops at the start.
 *
 * Noise: the rate and the share of each window are multiplied by 1 + e,
 * e normal with a standard deviation of 0, 2 or 5%, and the active
 * backends by 1 + u, u uniform within 0, 5, 10 or 35%.  A real server's
 * windows carry noise of this size from checkpoints, autovacuum and the
 * workload's mix; 35% (a standard deviation of 20%) is a load whose active
 * backends wander as on this project's 2-core VM (12% for 8 steady
 * clients over 1-s windows, more under 32).  The throughput a run achieves is reckoned without the
 * noise, from the response at the number each window had, and compared
 * with the best fixed number's over the same clients.
 *
 * The run fails if, for any seed:
 * - the flat load holds a number above twice its start for longer than a
 *	 trial lasts (the ratchet: noise taken for a gain, each kept grow making
 *	 the next easier);
 * - the knee load ends more than one doubling from its knee;
 * - the dip load ends below its best number, at the near side of the dip;
 * - the throughput over the run falls below MIN_RATIO of the best fixed
 *	 number's;
 * - a day has more than MAX_CHANGES_PER_DAY changes (argued there);
 * - a steady load (flat, knee) has more than MAX_UNJUDGED_STEADY trials
 *	 undone for want of windows that could judge them (argued there);
 * - the steady minute fails t/008's checks too often (see there).
 *
 * Every run starts from a fixed seed, so a failure repeats exactly.
 * t/020_auto_noise.pl builds this file with the server's compiler and flags
 * and runs it; no server is needed.
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

#define HOST_CPUS		96
#define WINDOW_S		10.0	/* walscale.auto_interval's default */
#define DAY_S			86400.0
#define DAYS			3
#ifndef SEEDS
#define SEEDS			8
#endif

/* a running backend's insertions per second at the knee */
#define BASE_RATE		1000.0

/*
 * The throughput over a run must be at least this part of the best fixed
 * number's.  Trials cost: each halving or doubling that is tried and undone
 * runs a few windows at a worse number.
 */
#define MIN_RATIO		0.98

/*
 * Changes in any day of a run, at most.  A change costs an all-lock
 * acquisition (a few microseconds at 1024 locks on this project's
 * measurements) and, when it is a trial that is undone, a few windows at a
 * worse number.  A steady load should settle and then try a neighbour now
 * and then: with holds that double at each failed trial up to a day, the
 * first day of a load takes about a dozen failed trials each way, two
 * changes each; later days fewer.  Two an hour is far more than settling
 * needs and far less than a rule that chases noise makes (the rules before
 * this test made hundreds).
 */
#define MAX_CHANGES_PER_DAY 48

/*
 * Trials undone unjudged in a run of a steady load (flat, knee: clients
 * that never change), at most.  Each is noise taken for a load that moved:
 * the grow is undone without a verdict, and made again once the load has
 * held still.  Two means of a steady load's windows fall beyond
 * AUTO_TRIAL_Z standard errors of their difference in 1.2% of trials, and
 * a run makes a few dozen: more than three is a run in well over a hundred.
 * The rules that compared loads with a fixed tolerance undid up to nine in
 * a run at a backends' noise of 35%.
 */
#define MAX_UNJUDGED_STEADY 3

/*
 * The most windows a trial (with a look-ahead, two) can hold a number: a
 * number held longer was not on trial but kept.
 */
#define TRIAL_LONGEST	(2 * (AUTO_TRIAL_WINDOWS_MAX + AUTO_TRIAL_SPARE_WINDOWS))

typedef struct Shape
{
	double		knee;			/* the best number of locks */
	double		gain;			/* rate factor per doubling below the knee */
	double		cost;			/* rate lost per doubling above it */
	double		share_at_knee;
	double		share_slope;	/* added per halving below the knee */
	int			dip_at;			/* 0, or where the rate is that of half */
} Shape;

/* the rate lost at dip_at against half as many locks */
#define DIP_LOSS		0.01

typedef struct Load
{
	const char *name;
	double		(*clients) (double t);
	void		(*shape) (double clients, Shape *s);
} Load;

/* ---- the random numbers: splitmix64, one stream per run ---- */

static uint64 rng_state;

static uint64
rng_next(void)
{
	uint64		z = (rng_state += UINT64CONST(0x9E3779B97F4A7C15));

	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

/* uniform in [0, 1) */
static double
rng_uniform(void)
{
	return (rng_next() >> 11) * (1.0 / 9007199254740992.0);
}

/* standard normal, Box-Muller, one value per call */
static double
rng_normal(void)
{
	double		u1 = rng_uniform();
	double		u2 = rng_uniform();

	return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * M_PI * u2);
}

/* ---- the loads ---- */

static double
log2d(double x)
{
	return log(x) / log(2.0);
}

static double
rate_factor(const Shape *s, int locks)
{
	double		below = Max(0.0, log2d(s->knee / locks));
	double		above = Max(0.0, log2d(locks / s->knee));

	if (locks == s->dip_at)
		return rate_factor(s, locks / 2) * (1.0 - DIP_LOSS);
	return pow(1.0 + s->gain, -below) * pow(1.0 - s->cost, above);
}

static double
share_of(const Shape *s, int locks)
{
	double		below = Max(0.0, log2d(s->knee / locks));

	return Min(s->share_at_knee + s->share_slope * below, 0.9);
}

static double
flat_clients(double t)
{
	return 500;
}

static void
flat_shape(double clients, Shape *s)
{
	s->knee = STOCK_LOCKS;
	s->gain = 0;
	s->cost = 0;
	s->share_at_knee = 0.20;
	s->share_slope = 0;
	s->dip_at = 0;
}

static double
knee_clients(double t)
{
	return 400;
}

static void
knee_shape(double clients, Shape *s)
{
	s->knee = 64;
	s->gain = 0.125;			/* Sokolov's 8 to 64 locks: about +12% each */
	s->cost = 0.03;
	s->share_at_knee = 0.06;
	s->share_slope = 0.08;
	s->dip_at = 0;
}

/*
 * Many clients need more locks: the knee is the power of two at or above
 * clients / 8, from 8 to 256, and the share scales with the clients up to
 * 200; 16 clients are quiet.
 */
static void
scaled_shape(double clients, Shape *s)
{
	double		busy = Min(clients / 200.0, 1.0);

	s->knee = STOCK_LOCKS;
	while (s->knee < clients / 8 && s->knee < 256)
		s->knee *= 2;
	s->gain = 0.10;
	s->cost = 0.02;
	s->share_at_knee = 0.06 * busy;
	s->share_slope = 0.08 * busy;
	s->dip_at = 0;
}

static double
ramp_clients(double t)
{
	double		s = fmod(t, DAY_S);
	const double night = 8 * 3600.0;
	const double ramp = 600.0;
	const double down = DAY_S - ramp;

	if (s < night)
		return 16;
	if (s < night + ramp)
		return 16 + (2000 - 16) * (s - night) / ramp;
	if (s < down)
		return 2000;
	return 2000 - (2000 - 16) * (s - down) / ramp;
}

static double
bursts_clients(double t)
{
	return fmod(t, 600.0) < 60.0 ? 2000 : 100;
}

static void
bursts_shape(double clients, Shape *s)
{
	scaled_shape(clients, s);
	if (clients < 200)
	{
		/* between the thresholds: contended, not enough to grow */
		s->share_at_knee = 0.03;
		s->share_slope = 0.03;
	}
}

static double
dip_clients(double t)
{
	return 500;
}

static void
dip_shape(double clients, Shape *s)
{
	s->knee = 512;
	s->gain = 0.04;
	s->cost = 0.03;
	s->share_at_knee = 0.06;
	s->share_slope = 0.02;
	s->dip_at = 256;
}

static const Load loads[] = {
	{"flat", flat_clients, flat_shape},
	{"knee", knee_clients, knee_shape},
	{"ramp", ramp_clients, scaled_shape},
	{"bursts", bursts_clients, bursts_shape},
	{"dip", dip_clients, dip_shape},
};

typedef struct Noise
{
	double		rate;			/* sd of the rate's and the share's factor */
	double		backends;		/* half-width of the backends' factor */
} Noise;

static const Noise noises[] = {
	{0, 0}, {0.02, 0}, {0.05, 0},
	{0, 0.10}, {0.02, 0.05}, {0.05, 0.10},
	{0.02, 0.35}, {0.05, 0.35},
};

/* ---- a run ---- */

typedef struct RunResult
{
	int			final_locks;
	int			most_locks;		/* on trial or not */
	int			most_held;		/* held longer than any trial lasts */
	int			changes_max_day;	/* the most changes in one day */
	double		changes_per_day;	/* over the run */
	int			unjudged;		/* trials undone unjudged */
	double		ratio;			/* throughput against the best fixed */
	int			best_locks;
	double		time_at_max;	/* part of the run at the maximum */
} RunResult;

static uint64 lock_use[CORE_MAX_LOCKS];

/* with "trace LOAD NOISE SEED": print each change of that run */
static bool trace = false;

/* a window of load at t on locks, with noise, as the worker measures it */
static AutoWindowFigures
make_window(const Load *load, const Noise *noise, double t, int locks,
			int max_locks)
{
	AutoWindowFigures w;
	Shape		s;
	double		clients = load->clients(t);
	double		backends;
	double		runners;
	double		share;
	double		acquisitions;
	int			used;

	load->shape(clients, &s);
	backends = clients * (1.0 + noise->backends * (2 * rng_uniform() - 1));
	runners = Min(backends, (double) HOST_CPUS);
	acquisitions = BASE_RATE * rate_factor(&s, locks) * runners * WINDOW_S *
		Max(1.0 + noise->rate * rng_normal(), 0.1);
	share = Min(Max(share_of(&s, locks) * (1.0 + noise->rate * rng_normal()),
					0.0), 0.95);

	memset(&w, 0, sizeof(w));
	w.acquisitions = (uint64) acquisitions;
	w.blocking_waits = (uint64) (acquisitions * Min(2 * share, 1.0));
	w.blocked_ns = (uint64) (share * backends * WINDOW_S * 1e9);
	/* a backend's lock is its ProcNumber modulo the number */
	used = (int) Min((double) locks, ceil(backends));
	memset(lock_use, 0, sizeof(uint64) * locks);
	for (int i = 0; i < used; i++)
		lock_use[i] = w.acquisitions / used;
	w.lock_acquisitions = lock_use;
	w.active_locks = locks;
	w.backends = backends;
	w.window_s = WINDOW_S;
	w.cpus = HOST_CPUS;
	w.min_locks = STOCK_LOCKS;
	w.max_locks = max_locks;
	return w;
}

/* the throughput of one window at locks, without noise */
static double
window_throughput(const Load *load, double t, int locks)
{
	Shape		s;
	double		clients = load->clients(t);

	load->shape(clients, &s);
	return rate_factor(&s, locks) * Min(clients, (double) HOST_CPUS);
}

static void
run_one(const Load *load, const Noise *noise, int seed, RunResult *r)
{
	int			windows = (int) (DAYS * DAY_S / WINDOW_S);
	int			max_locks = walscale_rules_max_locks(HOST_CPUS, STOCK_LOCKS,
													 CORE_MAX_LOCKS);
	int			start = walscale_rules_start_locks(HOST_CPUS, STOCK_LOCKS,
												   CORE_MAX_LOCKS);
	AutoRulesState state;
	AutoVerdict verdict;
	int			locks;
	int			changes_today = 0;
	int			changes = 0;
	int			unjudged = 0;
	int			at_max = 0;
	int			held = 0;		/* windows at the number in effect */
	double		achieved = 0;
	double		best = 0;

	rng_state = UINT64CONST(0x5EED) * 1000003 + seed * 7919 +
		(load - loads) * 104729 + (noise - noises) * 1299709;

	locks = walscale_rules_begin(&state, start, STOCK_LOCKS, max_locks);
	r->most_locks = locks;
	r->most_held = locks;
	r->changes_max_day = 0;
	for (int i = 0; i < windows; i++)
	{
		double		t = i * WINDOW_S;
		AutoWindowFigures w = make_window(load, noise, t, locks, max_locks);

		achieved += window_throughput(load, t, locks);
		at_max += locks == max_locks;
		walscale_rules_decide(&w, &state, &verdict);
		if (trace && verdict.target != locks)
			printf("%9.0f s %7.1f clients %4d -> %4d  %-42s share %.3f rate %.1f spread %.4f\n",
				   t, load->clients(t), locks, verdict.target, verdict.reason,
				   verdict.blocked_share, verdict.rate, verdict.spread);
		if (verdict.target != locks)
		{
			changes++;
			changes_today++;
		}
		if (verdict.reason != NULL &&
			strcmp(verdict.reason, AUTO_REASON_UNJUDGED) == 0)
			unjudged++;
		held = verdict.target == locks ? held + 1 : 0;
		if (held > TRIAL_LONGEST)
			r->most_held = Max(r->most_held, locks);
		locks = verdict.target;
		r->most_locks = Max(r->most_locks, locks);
		if ((i + 1) % (int) (DAY_S / WINDOW_S) == 0)
		{
			r->changes_max_day = Max(r->changes_max_day, changes_today);
			changes_today = 0;
		}
	}
	r->final_locks = locks;
	r->changes_per_day = changes / (double) DAYS;
	r->unjudged = unjudged;
	r->time_at_max = at_max / (double) windows;

	/* the best fixed number over the same clients */
	for (int l = STOCK_LOCKS; l <= max_locks; l *= 2)
	{
		double		sum = 0;

		for (int i = 0; i < windows; i++)
			sum += window_throughput(load, i * WINDOW_S, l);
		if (sum > best)
		{
			best = sum;
			r->best_locks = l;
		}
	}
	r->ratio = achieved / best;
}

/* ---- the steady minute of t/008_auto.pl (d) ---- */

/*
 * t/008 (d) runs 8 pgbench clients for 60 s on this project's 2-CPU VM,
 * auto mode from 1 lock (floor 1, maximum 16), 1-s windows, and fails if
 * the direction changes more than once, if more than one trial begins in
 * the second half, or if a change is made twice.  Here the same minute is
 * synthetic windows drawn as that server's were measured: the active
 * backends a mean of 1.7 with a standard deviation of 12% (or 20%), 3%
 * fewer at 2 locks and more (the backends a grow woke leave sooner), the
 * blocked share 5% at 1 lock, 3.5% at 2 and 2% beyond, each window's within
 * 30% of it, the rate per running backend 5% higher at 2 locks and 2.5%
 * more at 4, with the given noise.  Each change is applied to the next
 * window.  The minute must fail t/008 (d)'s checks in fewer than one run
 * in STEADY_MAX_FAIL_IN.
 */
#define STEADY_RUNS			10000
#define STEADY_MAX_FAIL_IN	500
#define STEADY_WINDOWS		60

static bool
steady_minute_fails(double rate_noise, double load_noise, int seed)
{
	AutoRulesState state;
	AutoVerdict verdict;
	int			locks;
	int			changes = 0;
	int			from[STEADY_WINDOWS];
	int			to[STEADY_WINDOWS];
	int			at[STEADY_WINDOWS];
	bool		trial[STEADY_WINDOWS];
	int			reversals = 0;
	int			late = 0;
	int			again = 0;

	rng_state = UINT64CONST(0x57EAD1) * 1000003 + seed * 7919 +
		(uint64) (rate_noise * 1000) * 104729 +
		(uint64) (load_noise * 1000) * 1299709;
	locks = walscale_rules_begin(&state, 1, 1, 16);
	for (int i = 0; i < STEADY_WINDOWS; i++)
	{
		AutoWindowFigures w;
		double		backends = Max(1.7 * (1 + load_noise * rng_normal()) *
								   (locks >= 2 ? 0.97 : 1.0), 0.5);
		double		rate = 150000 * Max(1 + rate_noise * rng_normal(), 0.1) *
			(locks >= 2 ? 1.05 : 1.0) * (locks >= 4 ? 1.025 : 1.0);
		double		share = (locks == 1 ? 0.05 : locks == 2 ? 0.035 : 0.02) *
			Max(1 + 0.3 * rng_normal(), 0.0);
		double		acquisitions = rate * Min(backends, 2.0);

		memset(&w, 0, sizeof(w));
		w.acquisitions = (uint64) acquisitions;
		w.blocking_waits = (uint64) (acquisitions / 50);
		w.blocked_ns = (uint64) (share * backends * 1e9);
		memset(lock_use, 0, sizeof(uint64) * locks);
		for (int l = 0; l < locks; l++)
			lock_use[l] = w.acquisitions / locks;
		w.lock_acquisitions = lock_use;
		w.active_locks = locks;
		w.backends = backends;
		w.window_s = 1.0;
		w.cpus = 2;
		w.min_locks = 1;
		w.max_locks = 16;
		walscale_rules_decide(&w, &state, &verdict);
		if (verdict.target != locks)
		{
			from[changes] = locks;
			to[changes] = verdict.target;
			at[changes] = i;
			trial[changes] = strcmp(verdict.reason, AUTO_REASON_GROW) == 0 ||
				strcmp(verdict.reason, AUTO_REASON_TRY_FEWER) == 0;
			changes++;
			locks = verdict.target;
		}
	}
	for (int i = 0; i < changes; i++)
	{
		if (i > 0 && (to[i] > from[i]) != (to[i - 1] > from[i - 1]))
			reversals++;
		if (trial[i] && at[i] > at[0] + STEADY_WINDOWS / 2)
			late++;
		for (int j = 0; j < i; j++)
			if (from[j] == from[i] && to[j] == to[i])
				again++;
	}
	return reversals > 1 || late > 1 || again > 0;
}

/* ---- TAP ---- */

static int	tests_run = 0;
static int	tests_failed = 0;

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

static int
cmp_int(const void *a, const void *b)
{
	return *(const int *) a - *(const int *) b;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	int			start = walscale_rules_start_locks(HOST_CPUS, STOCK_LOCKS,
												   CORE_MAX_LOCKS);

	if (argc == 5 && strcmp(argv[1], "trace") == 0)
	{
		RunResult	r;

		trace = true;
		for (int li = 0; li < lengthof(loads); li++)
			if (strcmp(loads[li].name, argv[2]) == 0)
			{
				run_one(&loads[li], &noises[atoi(argv[3])], atoi(argv[4]), &r);
				printf("final %d, most %d (kept %d), ratio %.3f against %d, %.1f changes a day, at most %d\n",
					   r.final_locks, r.most_locks, r.most_held, r.ratio,
					   r.best_locks, r.changes_per_day, r.changes_max_day);
			}
		return 0;
	}

	printf("# %d CPUs, start %d, %d days of %g-s windows, %d seeds per row\n",
		   HOST_CPUS, start, DAYS, WINDOW_S, SEEDS);
	printf("# %-6s %5s %5s | %-15s %5s %5s | %-13s %5s | %-13s %6s %8s | %s\n",
		   "load", "noise", "bknd", "final min/med/max", "kept", "tried",
		   "ratio min/med", "best", "changes/day", "max/d", "unjudged",
		   "at max");
	for (int li = 0; li < lengthof(loads); li++)
	{
		const Load *load = &loads[li];

		for (int ni = 0; ni < lengthof(noises); ni++)
		{
			const Noise *noise = &noises[ni];
			RunResult	r[SEEDS];
			int			finals[SEEDS];
			double		ratios[SEEDS];
			int			most = 0;
			int			most_held = 0;
			int			worst_day = 0;
			double		changes = 0;
			double		unjudged = 0;
			int			worst_unjudged = 0;
			double		at_max = 0;
			bool		drift_ok = true;
			bool		knee_ok = true;
			bool		dip_ok = true;

			for (int s = 0; s < SEEDS; s++)
			{
				run_one(load, noise, s, &r[s]);
				finals[s] = r[s].final_locks;
				ratios[s] = r[s].ratio;
				most = Max(most, r[s].most_locks);
				most_held = Max(most_held, r[s].most_held);
				worst_day = Max(worst_day, r[s].changes_max_day);
				changes += r[s].changes_per_day / SEEDS;
				unjudged += r[s].unjudged / (double) DAYS / SEEDS;
				worst_unjudged = Max(worst_unjudged, r[s].unjudged);
				at_max += r[s].time_at_max / SEEDS;
				if (r[s].most_held > 2 * start)
					drift_ok = false;
				if (r[s].final_locks < 64 / 2 || r[s].final_locks > 64 * 2)
					knee_ok = false;
				if (r[s].final_locks < 512)
					dip_ok = false;
			}
			qsort(finals, SEEDS, sizeof(int), cmp_int);
			qsort(ratios, SEEDS, sizeof(double), cmp_double);
			printf("# %-6s %4.0f%% %4.0f%% | %4d %4d %5d | %5d %5d | %.3f %.3f | %5d | %6.1f %6d %8.1f | %5.1f%%\n",
				   load->name, noise->rate * 100, noise->backends * 100,
				   finals[0], finals[SEEDS / 2], finals[SEEDS - 1], most_held,
				   most,
				   ratios[0], ratios[SEEDS / 2], r[0].best_locks,
				   changes, worst_day, unjudged, at_max * 100);

			if (strcmp(load->name, "flat") == 0)
				ok(drift_ok,
				   "%s, noise %g%%, backends %g%%: never kept above twice the start (%d), most %d (%d on trial)",
				   load->name, noise->rate * 100, noise->backends * 100,
				   2 * start, most_held, most);
			if (strcmp(load->name, "flat") == 0 ||
				strcmp(load->name, "knee") == 0)
				ok(worst_unjudged <= MAX_UNJUDGED_STEADY,
				   "%s, noise %g%%, backends %g%%: at most %d trial%s undone unjudged in a run, worst %d",
				   load->name, noise->rate * 100, noise->backends * 100,
				   MAX_UNJUDGED_STEADY, MAX_UNJUDGED_STEADY == 1 ? "" : "s",
				   worst_unjudged);
			if (strcmp(load->name, "knee") == 0)
				ok(knee_ok,
				   "%s, noise %g%%, backends %g%%: ends within a doubling of 64 (%d to %d)",
				   load->name, noise->rate * 100, noise->backends * 100,
				   finals[0], finals[SEEDS - 1]);
			if (strcmp(load->name, "dip") == 0)
				ok(dip_ok,
				   "%s, noise %g%%, backends %g%%: ends past the dip, at 512 or more (%d to %d)",
				   load->name, noise->rate * 100, noise->backends * 100,
				   finals[0], finals[SEEDS - 1]);
			ok(ratios[0] >= MIN_RATIO,
			   "%s, noise %g%%, backends %g%%: throughput at least %g of the best fixed (%d locks), worst seed %.3f",
			   load->name, noise->rate * 100, noise->backends * 100,
			   MIN_RATIO, r[0].best_locks, ratios[0]);
			ok(worst_day <= MAX_CHANGES_PER_DAY,
			   "%s, noise %g%%, backends %g%%: at most %d changes in a day, worst %d",
			   load->name, noise->rate * 100, noise->backends * 100,
			   MAX_CHANGES_PER_DAY, worst_day);
		}
	}

	printf("# the steady minute of t/008 (d): 2 CPUs, 8 clients, 60 1-s windows from 1 lock, %d runs a row\n",
		   STEADY_RUNS);
	printf("# %5s %5s | %s\n", "rate", "bknd", "runs failing t/008 (d)");
	for (int ri = 0; ri < 3; ri++)
		for (int bi = 0; bi < 2; bi++)
		{
			const double rate_noises[] = {0.01, 0.02, 0.05};
			const double load_noises[] = {0.12, 0.20};
			int			fails = 0;

			for (int s = 0; s < STEADY_RUNS; s++)
				if (steady_minute_fails(rate_noises[ri], load_noises[bi], s))
					fails++;
			printf("# %4.0f%% %4.0f%% | %d\n", rate_noises[ri] * 100,
				   load_noises[bi] * 100, fails);
			ok(fails * STEADY_MAX_FAIL_IN < STEADY_RUNS,
			   "steady minute, rate noise %g%%, backends %g%%: fewer than 1 run in %d fails t/008 (d), %d of %d",
			   rate_noises[ri] * 100, load_noises[bi] * 100,
			   STEADY_MAX_FAIL_IN, fails, STEADY_RUNS);
		}

	printf("1..%d\n", tests_run);
	if (tests_failed > 0)
		printf("# %d of %d failed\n", tests_failed, tests_run);
	return tests_failed > 0 ? 1 : 0;
}
