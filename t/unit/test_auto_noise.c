/*-------------------------------------------------------------------------
 *
 * test_auto_noise.c
 *		A test bench for auto mode's controller (walscale_auto_rules.c): a
 *		grid of synthetic servers, loads and noises, days of 10-s windows
 *		fed to walscale_rules_decide() as the worker feeds it, each decision
 *		applied to the next window, judged on four goals per seed against
 *		the best fixed number of locks, stock's 8 and a static number per
 *		CPU size fitted on the same grid; and t/008_auto.pl's steady minute
 *		on a 2-CPU server, ten thousand times.  Prints a table, then TAP.
 *
 * The bench knows the controller only by its interface: walscale_rules_*
 * for the bounds and the start, walscale_rules_begin() and
 * walscale_rules_decide().  AutoRulesState is opaque here: allocated and
 * passed, never read.  Of AutoVerdict it reads target, and reason in trace
 * mode only.  A target must be a power of two from the floor to the
 * maximum (the responses are known there only): any other bails out.
 *
 * THE GRID: a cell is a server, a load and a noise.
 *
 * Servers: 16, 96 and 480 CPUs, each with its maximum and start from
 * walscale_rules_max_locks() and walscale_rules_start_locks() (128/16,
 * 1024/128, 1024/512 with the rules of this writing), the floor 8 (stock),
 * times three hand-over slopes β of insertpos_lck (sim/README.md, "How
 * much rests on β": past the best number, β decides what each doubling
 * costs, and at 0 the best number moves up).  The mapping:
 *
 * - β = 0: the rate rises half as steeply for one more doubling past the
 *	 load's knee K, so that the best number is 2K, and past 2K every number
 *	 ties (the simulator's best moves from 16-32 to 128 at β = 0, and 1024
 *	 locks cost 2 to 13% there);
 * - β = 0.5: the best is K, each doubling past it costs 1.5%;
 * - β = 1: the best is K, each doubling past it costs 3% (COST_AT_BETA_1),
 *	 the steepest this bench argues plausible: the simulator's 30-50% from
 *	 the best to 1024 locks at β = 0.5-1 is five or six doublings of 6-10%,
 *	 which no measurement on a real server has shown; 3% a doubling is
 *	 the knee load of the bench before this one.
 *
 * The WAL-bound load has its own cost (below), 1% + 2% β a doubling.  The
 * ramp's and the bursts' cost scales with their clients as their share
 * does (clients / 200, at most 1): the hand-over's cost is per spinner, and
 * the ramp's night of 16 clients has few.
 *
 * A load is a response: for L locks, the rate a running backend inserts
 * at, a factor of its rate at the best number, and the share of active
 * backend time spent asleep on the locks.  Below the knee each doubling
 * multiplies the rate by 1 + gain (0.10), and the share rises by 0.08 per
 * halving below the best; at and past the best the share is share_at.
 * The throughput of a window is the factor times the running backends
 * (the clients, at most the CPUs).  The loads:
 *
 * - steady16, steady64, steady256: clients that never change, best at K
 *	 (at most the maximum), contended there (a share of 6%, so that a
 *	 controller is asked again and again to grow where growing hurts).  A
 *	 knee that equals the start moves one doubling down (16 CPUs: steady8),
 *	 so that no steady cell at β 0.5 or 1 passes by never moving: its start
 *	 is a doubling or more below its best (a throughput of at most 0.91) or
 *	 at twice it or more (over, below).  At β 0 every number from 2K up
 *	 ties, and a start there is as good as the best;
 * - ramp: every day a night of 16 clients (best 8: quiet) until 8:00, a
 *	 ramp to 2000 in 10 minutes, 2000 clients with their best at 256 (the
 *	 power of two at or above clients / 8, from 8 to 256) until 20:00, a
 *	 ramp back down in 10 minutes, and night again: both moves within each
 *	 day, so that a day's run follows both;
 * - bursts: 100 clients, lukewarm (3%), best at 16, and every 10 minutes a
 *	 minute of 2000 clients, best at 256;
 * - pool: a connection pool's 2 x CPUs (at least 512) active backends that
 *	 never change, whose best alternates 16, 64, 16 ... every 4 hours (the
 *	 mix behind the pool changes, not its size);
 * - step: the same backends, best 16 for 6 hours, then 256 for good;
 * - walbound: 500 clients (2 x CPUs at 480) bound by WAL writing: a fifth of
 *	 backend time asleep on the locks at every number (behind a holder that
 *	 waits for a WAL write), best at the floor 8, each doubling past it
 *	 costing 1% + 2% β, so that a controller that never halves fails its
 *	 throughput.
 *
 * Noises, on each window's rate and blocked share (independent draws for
 * each), and, but for "none", the active backends times 1 + u, u uniform
 * within +-10%:
 *
 * - none: no noise at all (deterministic: one seed is run, not 64);
 * - iid2, iid5: 1 + e, e normal with a standard deviation of 2 or 5%;
 * - ar9: e an AR(1) series, rho 0.9, standard deviation 5%: a drift that
 *	 lasts minutes, which a trial's before-and-after comparison takes for
 *	 its effect;
 * - ckpt: iid2 and checkpoint dips, 60 s in every 300 (at a random phase,
 *	 so that windows straddle them): the rate 15% lower, the share 50%
 *	 higher (full-page images: more WAL per transaction);
 * - tail: iid2 and, in 1% of windows, an outlier of 20 to 30% either way.
 *
 * THE GOALS, checked per cell and per seed (a cell fails if any seed does;
 * the TAP line names the first failing seed and how to trace it):
 *
 * - throughput: the run's, reckoned without noise from the response at the
 *	 number in effect each window, at least MIN_RATIO (0.98) of the best
 *	 fixed number's over the same clients; where the best moves for hours
 *	 (ramp, pool, step: "moving"), at least MIN_PHASE_RATIO (0.97) of the
 *	 best number's in each window (the per-phase best).  Bursts are judged
 *	 against the best fixed number: a minute's burst is shorter than any
 *	 controller can follow in 10-s windows;
 * - over: at most MAX_OVER_SHARE (5%) of windows at twice the window's
 *	 best number or more (with ties, the largest tied number: a number
 *	 within TIE, half a percent, of the best's throughput is never over);
 * - follow (moving loads): after the best moves to a number it holds for
 *	 an hour or more, the count is within one doubling of it (of the tied
 *	 range) within FOLLOW_S (an hour), also when the backends stay the
 *	 same (pool, step);
 * - changes: at most MAX_CHANGES_PER_DAY (240) changes in any day (argued
 *	 there).
 *
 * Beside each cell the bench prints the throughput of the best fixed
 * number, of stock's 8 and of the static number fitted for the CPU size:
 * for each CPU size the single fixed number, floor to maximum, that
 * maximizes the worst ratio over that size's loads and slopes (each cell
 * by its own goal's ratio).  The last line compares auto mode with the
 * static numbers: the cells where each meets its throughput goal.
 *
 * SEEDS.  Each run draws a base seed afresh from /dev/urandom and prints
 * it; each run of a cell draws from a run seed hashed from the base, the
 * cell and the seed's index.  WALSCALE_NOISE_SEED=BASE repeats a whole
 * run; WALSCALE_NOISE_SEED=CELL:RUNSEED runs one cell at one run seed;
 * `test_auto_noise trace CELL RUNSEED` prints that run's every change.
 * regressions[] lists run seeds that once failed: they run every time.
 *
 * WHAT make test RUNS (t/020_auto_noise.pl): the whole grid, 3 CPU sizes x
 * 3 slopes x 8 loads x 6 noises = 432 cells, 64 seeds a cell (1 for
 * "none"), but DEFAULT_DAYS (1) day a run, not 3: a day holds every
 * load's every phase (the ramp's day, the pool's six 4-hour phases, the
 * step at 6 hours) and the first day, where a controller settles from its
 * start, is the day with the most changes.  The full grid at 3 days is
 * WALSCALE_NOISE_DAYS=3 (three times the CPU).  The two weigh differently:
 * at 1 day the settling from the start is a third of the run's windows it
 * is at 3, so the throughput and over goals are harder on a slow start (the
 * rules of this writing fail the step's throughput at 1 day, not at 3); at
 * 3 days a ratchet has longer to climb and the ramp moves six times, not
 * twice.  Run both before a controller is called done.  Measured with the
 * rules of this writing on this project's 2-core machine: 49 s of CPU at 1
 * day (62 s of wall time under prove at nice 10, the other core busy),
 * 142 s at 3; a controller that does more per window costs more.  The grid is not cut to a rotating subset: every cell runs in every
 * make test, so that a controller's change that breaks one cell fails the
 * next run, not a run chosen by chance.
 * WALSCALE_NOISE_SEEDS=N sets the seeds a cell; WALSCALE_NOISE_CELLS=TEXT
 * runs only the cells whose name contains TEXT.
 *
 * `test_auto_noise report` prints the grid's table as Markdown instead of
 * TAP (docs/auto-mode.md's table).
 *
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
#include <time.h>
#include <unistd.h>

#include "walscale_auto_rules.h"
#include "unit_tap.h"

/* the core patch's XLOG_INSERT_LOCKS_DEFAULT and XLOG_INSERT_LOCKS_MAX */
#define STOCK_LOCKS		8
#define CORE_MAX_LOCKS	1024
#define FLOOR_LOCKS		8		/* walscale.auto_min_locks's default */

#define WINDOW_S		10.0	/* walscale.auto_interval's default */
#define DAY_S			86400.0
#define HOUR_S			3600.0
#define DEFAULT_DAYS	1
#define DEFAULT_SEEDS	64
#define MAX_DAYS		7
#define MAX_WINDOWS		((int) (MAX_DAYS * DAY_S / WINDOW_S))

/* numbers of locks, powers of two from the floor: 8 to 1024 */
#define LEVELS			8

/* a running backend's insertions per second at the best number */
#define BASE_RATE		1000.0

/* past the best, the rate lost per doubling at β = 1 */
#define COST_AT_BETA_1	0.03

/*
 * The throughput over a run must be at least MIN_RATIO of the best fixed
 * number's, or where the best moves for hours, MIN_PHASE_RATIO of the best
 * number's in each window.  Trials cost: each halving or doubling that is
 * tried and undone runs a few windows at a worse number; following a move
 * costs the windows before the controller notices.
 */
#define MIN_RATIO		0.98
#define MIN_PHASE_RATIO 0.97

/* the part of the run a controller may spend at twice the best or more */
#define MAX_OVER_SHARE	0.05

/*
 * A number within this part of the best's throughput ties with the best,
 * for the over and follow goals: a count that costs less is not one to
 * flee or to chase
 */
#define TIE				0.005

/* a move of the best that holds this long is to be followed within it */
#define FOLLOW_S		3600.0

/*
 * Changes in any day of a run, at most.  What a change costs besides the
 * windows a probe spends at a worse number (which the throughput goal
 * counts): a resize takes every active lock, which makes inserters wait up
 * to about 25 ms under load on this project's measurements (the resize
 * figures in bench/results).  Ten changes an hour are then a quarter of a
 * second of such waits an hour, under 0.01% of the time; following a best
 * that moves where nothing at the number in effect shows it needs a probe
 * each way within the hour, two or three changes each, and a noisy load
 * keeps a neighbour now and then.
 */
#define MAX_CHANGES_PER_DAY 240

/* ---- the random numbers: splitmix64, one stream per run ---- */

static uint64 rng_state;

static uint64
mix64(uint64 z)
{
	z = (z ^ (z >> 30)) * UINT64CONST(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64CONST(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static uint64
rng_next(void)
{
	return mix64(rng_state += UINT64CONST(0x9E3779B97F4A7C15));
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

static double
clamp(double x, double lo, double hi)
{
	return x < lo ? lo : x > hi ? hi : x;
}

static double
log2d(double x)
{
	return log(x) / log(2.0);
}

/* ---- servers ---- */

static const int cpu_sizes[] = {16, 96, 480};
static const double betas[] = {0, 0.5, 1};

typedef struct Server
{
	int			cpus;
	double		beta;
	int			max_locks;
	int			start;
	int			floor;
} Server;

static void
make_server(Server *sv, int cpus, double beta)
{
	sv->cpus = cpus;
	sv->beta = beta;
	sv->max_locks = walscale_rules_max_locks(cpus, STOCK_LOCKS,
											 CORE_MAX_LOCKS);
	sv->start = walscale_rules_start_locks(cpus, STOCK_LOCKS, CORE_MAX_LOCKS);
	sv->floor = walscale_rules_min_locks(FLOOR_LOCKS, sv->max_locks);
}

/* ---- loads ---- */

/* a load's response in one window: see the header */
typedef struct Shape
{
	double		knee;			/* the nominal best number */
	double		gain;			/* rate factor per doubling below it */
	double		cost;			/* rate lost per doubling past the best */
	bool		half_step;		/* β = 0: one more doubling at half the gain */
	double		share_at;		/* the blocked share at and past the best */
	double		share_slope;	/* added per halving below the best */
} Shape;

typedef enum LoadKind
{
	LOAD_STEADY,
	LOAD_RAMP,
	LOAD_BURSTS,
	LOAD_POOL,
	LOAD_STEP,
	LOAD_WALBOUND,
} LoadKind;

typedef struct Load
{
	const char *name;			/* steady's knee is appended */
	LoadKind	kind;
	int			knee;			/* steady only: the nominal knee */
	bool		moving;			/* the best moves for hours */
} Load;

static const Load loads[] = {
	{"steady", LOAD_STEADY, 16, false},
	{"steady", LOAD_STEADY, 64, false},
	{"steady", LOAD_STEADY, 256, false},
	{"ramp", LOAD_RAMP, 0, true},
	{"bursts", LOAD_BURSTS, 0, false},
	{"pool", LOAD_POOL, 0, true},
	{"step", LOAD_STEP, 0, true},
	{"walbound", LOAD_WALBOUND, 0, false},
};

#define N_LOADS lengthof(loads)

/* a steady load's knee on a server: never the start (see the header) */
static int
steady_knee(const Load *load, const Server *sv)
{
	int			k = load->knee;

	if (k == sv->start)
		k = k / 2 >= sv->floor ? k / 2 : k * 2;
	return k;
}

static void
load_name(const Load *load, const Server *sv, char *buf, size_t len)
{
	if (load->kind == LOAD_STEADY)
		snprintf(buf, len, "steady%d", steady_knee(load, sv));
	else
		snprintf(buf, len, "%s", load->name);
}

static double
pooled_clients(const Server *sv)
{
	return Max(2.0 * sv->cpus, 512.0);
}

static double
load_clients(const Load *load, const Server *sv, double t)
{
	switch (load->kind)
	{
		case LOAD_STEADY:
			return Max(4.0 * sv->cpus, 2.0 * steady_knee(load, sv));
		case LOAD_RAMP:
			{
				double		s = fmod(t, DAY_S);
				const double up = 8 * HOUR_S;
				const double ramp = 600.0;
				const double down = 20 * HOUR_S;

				if (s < up || s >= down + ramp)
					return 16;
				if (s < up + ramp)
					return 16 + (2000 - 16) * (s - up) / ramp;
				if (s < down)
					return 2000;
				return 2000 - (2000 - 16) * (s - down) / ramp;
			}
		case LOAD_BURSTS:
			return fmod(t, 600.0) < 60.0 ? 2000 : 100;
		case LOAD_POOL:
		case LOAD_STEP:
			return pooled_clients(sv);
		case LOAD_WALBOUND:
			return Max(500.0, 2.0 * sv->cpus);
	}
	return 0;
}

/* the nominal shape, before the slope β applies */
static void
load_shape(const Load *load, const Server *sv, double t, double clients,
		   Shape *s)
{
	double		busy = 1.0;

	s->gain = 0.10;
	s->share_at = 0.06;
	s->share_slope = 0.08;
	switch (load->kind)
	{
		case LOAD_STEADY:
			s->knee = steady_knee(load, sv);
			break;
		case LOAD_RAMP:
		case LOAD_BURSTS:
			{
				/* many clients need more locks, and contend more */
				busy = Min(clients / 200.0, 1.0);
				s->knee = STOCK_LOCKS;
				while (s->knee < clients / 8 && s->knee < 256)
					s->knee *= 2;
				s->share_at = 0.06 * busy;
				s->share_slope = 0.08 * busy;
				if (load->kind == LOAD_BURSTS && clients < 200)
				{
					/* between the thresholds: contended, not enough to grow */
					s->share_at = 0.03;
					s->share_slope = 0.03;
				}
				break;
			}
		case LOAD_POOL:
			s->knee = ((int) (t / (4 * HOUR_S))) % 2 == 0 ? 16 : 64;
			break;
		case LOAD_STEP:
			s->knee = t < 6 * HOUR_S ? 16 : 256;
			break;
		case LOAD_WALBOUND:
			s->knee = STOCK_LOCKS;
			s->gain = 0;
			s->share_at = 0.20;
			s->share_slope = 0;
			break;
	}
	if (load->kind == LOAD_WALBOUND)
	{
		s->cost = 0.01 + 0.02 * sv->beta;
		s->half_step = false;
	}
	else
	{
		/* the hand-over's cost grows with the spinners: few, few */
		s->cost = COST_AT_BETA_1 * sv->beta * busy;
		s->half_step = sv->beta == 0;
	}
}

/* the rate factor at locks, 1 at the best */
static double
rate_factor(const Shape *s, int locks)
{
	double		x = log2d(locks / s->knee);

	if (s->half_step)
	{
		if (x <= 0)
			return pow(1.0 + s->gain, x) / (1.0 + s->gain / 2);
		if (x < 1)
			return pow(1.0 + s->gain / 2, x - 1);
		return 1.0;
	}
	if (x <= 0)
		return pow(1.0 + s->gain, x);
	return pow(1.0 - s->cost, x);
}

static double
share_of(const Shape *s, int locks)
{
	double		best = s->half_step ? 2 * s->knee : s->knee;
	double		below = Max(0.0, log2d(best / locks));

	return Min(s->share_at + s->share_slope * below, 0.9);
}

/*
 * A load on a server without noise: per window, the throughput at each
 * number of locks (floor to maximum), the best range [best_lo, best_hi]
 * (the numbers that tie with the best), and the sums that judge a run.
 */
typedef struct Response
{
	int			windows;
	int			levels;			/* floor, 2 floor, ... maximum */
	int			level_locks[LEVELS];
	float	   *tp;				/* windows x levels */
	double	   *rate;			/* the rate factor, windows x levels */
	double	   *share;			/* the blocked share, windows x levels */
	double	   *clients;		/* per window */
	int		   *best_lo;
	int		   *best_hi;
	double		fixed_sum[LEVELS];	/* each fixed number's throughput */
	double		oracle_sum;		/* the best number's in each window */
	int			best_fixed;		/* the best fixed number */
	double		best_fixed_sum;
} Response;

static int
level_of(const Response *r, int locks)
{
	for (int i = 0; i < r->levels; i++)
		if (r->level_locks[i] == locks)
			return i;
	return -1;
}

static void
make_response(const Load *load, const Server *sv, int windows, Response *r)
{
	r->windows = windows;
	r->levels = 0;
	for (int l = sv->floor; l <= sv->max_locks && r->levels < LEVELS; l *= 2)
		r->level_locks[r->levels++] = l;
	r->tp = realloc(r->tp, sizeof(float) * windows * LEVELS);
	r->rate = realloc(r->rate, sizeof(double) * windows * LEVELS);
	r->share = realloc(r->share, sizeof(double) * windows * LEVELS);
	r->clients = realloc(r->clients, sizeof(double) * windows);
	r->best_lo = realloc(r->best_lo, sizeof(int) * windows);
	r->best_hi = realloc(r->best_hi, sizeof(int) * windows);
	memset(r->fixed_sum, 0, sizeof(r->fixed_sum));
	r->oracle_sum = 0;
	for (int w = 0; w < windows; w++)
	{
		double		t = w * WINDOW_S;
		double		clients = load_clients(load, sv, t);
		double		runners = Min(clients, (double) sv->cpus);
		double		best = 0;
		Shape		s;

		load_shape(load, sv, t, clients, &s);
		r->clients[w] = clients;
		for (int i = 0; i < r->levels; i++)
		{
			double		tp = rate_factor(&s, r->level_locks[i]) * runners;

			r->rate[w * LEVELS + i] = rate_factor(&s, r->level_locks[i]);
			r->share[w * LEVELS + i] = share_of(&s, r->level_locks[i]);

			r->tp[w * LEVELS + i] = tp;
			r->fixed_sum[i] += tp;
			best = Max(best, tp);
		}
		r->oracle_sum += best;
		r->best_lo[w] = 0;
		r->best_hi[w] = 0;
		for (int i = 0; i < r->levels; i++)
			if (r->tp[w * LEVELS + i] >= best * (1 - TIE))
			{
				if (r->best_lo[w] == 0)
					r->best_lo[w] = r->level_locks[i];
				r->best_hi[w] = r->level_locks[i];
			}
	}
	r->best_fixed = r->level_locks[0];
	r->best_fixed_sum = 0;
	for (int i = 0; i < r->levels; i++)
		if (r->fixed_sum[i] > r->best_fixed_sum * (1 + 1e-9))
		{
			r->best_fixed_sum = r->fixed_sum[i];
			r->best_fixed = r->level_locks[i];
		}
}

/* a fixed number's ratio by the load's goal */
static double
fixed_ratio(const Load *load, const Response *r, int locks)
{
	int			i = level_of(r, locks);
	double		sum = i >= 0 ? r->fixed_sum[i] : 0;

	return sum / (load->moving ? r->oracle_sum : r->best_fixed_sum);
}

/* ---- noises ---- */

typedef enum NoiseKind
{
	NOISE_NONE,
	NOISE_IID,
	NOISE_AR,
	NOISE_CKPT,
	NOISE_TAIL,
} NoiseKind;

typedef struct Noise
{
	const char *name;
	NoiseKind	kind;
	double		sd;				/* of the rate's and the share's factor */
	double		rho;			/* AR(1) */
	double		backends;		/* half-width of the backends' factor */
} Noise;

static const Noise noises[] = {
	{"none", NOISE_NONE, 0, 0, 0},
	{"iid2", NOISE_IID, 0.02, 0, 0.10},
	{"iid5", NOISE_IID, 0.05, 0, 0.10},
	{"ar9", NOISE_AR, 0.05, 0.9, 0.10},
	{"ckpt", NOISE_CKPT, 0.02, 0, 0.10},
	{"tail", NOISE_TAIL, 0.02, 0, 0.10},
};

#define N_NOISES lengthof(noises)

/* checkpoint dips: CKPT_DIP_S in every CKPT_EVERY_S */
#define CKPT_EVERY_S	300.0
#define CKPT_DIP_S		60.0
#define CKPT_RATE_LOSS	0.15
#define CKPT_SHARE_GAIN 0.5
/* outliers: this part of windows, of 20 to 30% either way */
#define TAIL_PART		0.01

/* a run's noise: the AR(1) series and the checkpoints' phase */
typedef struct NoiseState
{
	double		ar_rate;
	double		ar_share;
	double		ckpt_phase;
} NoiseState;

static void
noise_begin(const Noise *n, NoiseState *ns)
{
	ns->ar_rate = n->kind == NOISE_AR ? n->sd * rng_normal() : 0;
	ns->ar_share = n->kind == NOISE_AR ? n->sd * rng_normal() : 0;
	ns->ckpt_phase = rng_uniform() * CKPT_EVERY_S;
}

/* the part of [t, t + WINDOW_S) within a checkpoint's dip */
static double
ckpt_part(const NoiseState *ns, double t)
{
	double		in = 0;
	double		a = fmod(t + ns->ckpt_phase, CKPT_EVERY_S);

	/* the window may span the end of one period and the start of the next */
	for (double s = -CKPT_EVERY_S; s <= CKPT_EVERY_S; s += CKPT_EVERY_S)
	{
		double		lo = Max(a, s);
		double		hi = Min(a + WINDOW_S, s + CKPT_DIP_S);

		if (hi > lo)
			in += hi - lo;
	}
	return in / WINDOW_S;
}

/* one factor of the rate and one of the share */
static void
noise_draw(const Noise *n, NoiseState *ns, double t, double *rate_f,
		   double *share_f)
{
	double		er = 0;
	double		es = 0;

	switch (n->kind)
	{
		case NOISE_NONE:
			break;
		case NOISE_AR:
			{
				double		k = sqrt(1 - n->rho * n->rho) * n->sd;

				ns->ar_rate = n->rho * ns->ar_rate + k * rng_normal();
				ns->ar_share = n->rho * ns->ar_share + k * rng_normal();
				er = ns->ar_rate;
				es = ns->ar_share;
				break;
			}
		case NOISE_IID:
		case NOISE_CKPT:
		case NOISE_TAIL:
			er = n->sd * rng_normal();
			es = n->sd * rng_normal();
			break;
	}
	if (n->kind == NOISE_TAIL)
	{
		if (rng_uniform() < TAIL_PART)
			er += (rng_uniform() < 0.5 ? -1 : 1) * (0.20 + 0.10 * rng_uniform());
		if (rng_uniform() < TAIL_PART)
			es += (rng_uniform() < 0.5 ? -1 : 1) * (0.20 + 0.10 * rng_uniform());
	}
	*rate_f = Max(1.0 + er, 0.1);
	*share_f = Max(1.0 + es, 0.0);
	if (n->kind == NOISE_CKPT)
	{
		double		part = ckpt_part(ns, t);

		*rate_f *= 1 - CKPT_RATE_LOSS * part;
		*share_f *= 1 + CKPT_SHARE_GAIN * part;
	}
}

/* ---- a run ---- */

typedef struct Cell
{
	Server		server;
	const Load *load;
	const Noise *noise;
	char		name[64];
	int			index;			/* in the grid, for the run seeds */
} Cell;

typedef struct RunResult
{
	uint64		seed;
	double		ratio;			/* by the load's goal */
	double		ratio_fixed;	/* against the best fixed number */
	double		over;			/* part of windows at twice the best or more */
	double		follow_s;		/* the longest follow; -1: none; inf: never */
	int			changes_max_day;
	int			final_locks;
	bool		ok_tput;
	bool		ok_over;
	bool		ok_follow;
	bool		ok_changes;
} RunResult;

static uint64 lock_use[CORE_MAX_LOCKS];

static bool report = false;

/* comments: TAP's, or Markdown's list items in report mode */
#define NOTE (report ? "- " : "# ")

/* in trace mode: print each change */
static bool trace = false;

static int	days = DEFAULT_DAYS;

static void
run_one(const Cell *c, const Response *r, uint64 seed, RunResult *res)
{
	const Server *sv = &c->server;
	AutoRulesState *state = malloc(sizeof(AutoRulesState));
	AutoVerdict verdict;
	NoiseState	ns;
	int			windows = r->windows;
	int			per_day = (int) (DAY_S / WINDOW_S);
	int			locks;
	int			changes_today = 0;
	int			over = 0;
	double		achieved = 0;
	int			event = -1;		/* the window the best last moved at */
	bool		followed = true;

	rng_state = seed;
	noise_begin(c->noise, &ns);
	res->seed = seed;
	res->changes_max_day = 0;
	res->follow_s = -1;

	locks = walscale_rules_begin(state, sv->start, sv->floor, sv->max_locks);
	for (int w = 0; w < windows; w++)
	{
		double		t = w * WINDOW_S;
		double		clients = r->clients[w];
		int			li = level_of(r, locks);
		AutoWindowFigures fig;
		double		rate_f;
		double		share_f;
		double		backends;
		double		runners;
		double		share;
		double		acquisitions;
		int			used;

		/* the move of the best that this window begins, if it holds */
		if (w > 0 && (r->best_lo[w] != r->best_lo[w - 1] ||
					  r->best_hi[w] != r->best_hi[w - 1]))
		{
			int			end = w;

			while (end < windows && r->best_lo[end] == r->best_lo[w] &&
				   r->best_hi[end] == r->best_hi[w])
				end++;
			if (!followed && event >= 0)
				res->follow_s = INFINITY;
			event = (end - w) * WINDOW_S >= FOLLOW_S ? w : -1;
			followed = event < 0;
		}
		if (!followed && locks >= r->best_lo[w] / 2 &&
			locks <= 2 * r->best_hi[w])
		{
			followed = true;
			res->follow_s = Max(res->follow_s, (w - event) * WINDOW_S);
		}
		if (c->load->moving && res->follow_s < 0)
			res->follow_s = 0;

		/* the window as the worker measures it */
		noise_draw(c->noise, &ns, t, &rate_f, &share_f);
		backends = clients;
		if (c->noise->backends > 0)
			backends *= 1.0 + c->noise->backends * (2 * rng_uniform() - 1);
		runners = Min(backends, (double) sv->cpus);
		if (li < 0)
		{
			/* the bench knows the response only at powers of two */
			printf("Bail out! %s, run seed 0x%016llx: %d locks at %.0f s, not a power of two from %d to %d\n",
				   c->name, (unsigned long long) seed, locks, t, sv->floor,
				   sv->max_locks);
			exit(3);
		}
		acquisitions = BASE_RATE * r->rate[w * LEVELS + li] * runners *
			WINDOW_S * rate_f;
		share = clamp(r->share[w * LEVELS + li] * share_f, 0.0, 0.95);

		memset(&fig, 0, sizeof(fig));
		fig.acquisitions = (uint64) acquisitions;
		fig.blocking_waits = (uint64) (acquisitions * Min(2 * share, 1.0));
		fig.blocked_ns = (uint64) (share * backends * WINDOW_S * 1e9);
		/* a backend's lock is its ProcNumber modulo the number */
		used = (int) Min((double) locks, ceil(clients));
		memset(lock_use, 0, sizeof(uint64) * locks);
		for (int i = 0; i < used; i++)
			lock_use[i] = fig.acquisitions / used;
		fig.lock_acquisitions = lock_use;
		fig.active_locks = locks;
		fig.backends = backends;
		fig.window_s = WINDOW_S;
		fig.cpus = sv->cpus;
		fig.min_locks = sv->floor;
		fig.max_locks = sv->max_locks;

		achieved += r->tp[w * LEVELS + li];
		over += locks >= 2 * r->best_hi[w];

		walscale_rules_decide(&fig, state, &verdict);
		if (trace && verdict.target != locks)
			printf("%9.0f s %7.1f clients, best %4d..%-4d %4d -> %4d  %s\n",
				   t, clients, r->best_lo[w], r->best_hi[w], locks,
				   verdict.target, verdict.reason ? verdict.reason : "");
		if (verdict.target != locks)
			changes_today++;
		locks = verdict.target;
		if ((w + 1) % per_day == 0 || w + 1 == windows)
		{
			res->changes_max_day = Max(res->changes_max_day, changes_today);
			changes_today = 0;
		}
	}
	if (!followed && event >= 0)
		res->follow_s = INFINITY;
	free(state);

	res->final_locks = locks;
	res->ratio_fixed = achieved / r->best_fixed_sum;
	res->ratio = c->load->moving ? achieved / r->oracle_sum : res->ratio_fixed;
	res->over = over / (double) windows;
	res->ok_tput = res->ratio >= (c->load->moving ? MIN_PHASE_RATIO : MIN_RATIO);
	res->ok_over = res->over <= MAX_OVER_SHARE;
	res->ok_follow = !c->load->moving || res->follow_s <= FOLLOW_S;
	res->ok_changes = res->changes_max_day <= MAX_CHANGES_PER_DAY;
}

/* ---- the grid ---- */

static Cell cells[lengthof(cpu_sizes) * lengthof(betas) * N_LOADS * N_NOISES];
static int	n_cells = 0;

static void
make_cells(void)
{
	for (int ci = 0; ci < lengthof(cpu_sizes); ci++)
		for (int bi = 0; bi < lengthof(betas); bi++)
			for (int li = 0; li < N_LOADS; li++)
				for (int ni = 0; ni < N_NOISES; ni++)
				{
					Cell	   *c = &cells[n_cells];
					char		ln[32];

					make_server(&c->server, cpu_sizes[ci], betas[bi]);
					c->load = &loads[li];
					c->noise = &noises[ni];
					c->index = n_cells;
					load_name(c->load, &c->server, ln, sizeof(ln));
					snprintf(c->name, sizeof(c->name), "c%d-b%g-%s-%s",
							 cpu_sizes[ci], betas[bi], ln, noises[ni].name);
					n_cells++;
				}
}

static Cell *
find_cell(const char *name)
{
	for (int i = 0; i < n_cells; i++)
		if (strcmp(cells[i].name, name) == 0)
			return &cells[i];
	return NULL;
}

static uint64
run_seed(uint64 base, const Cell *c, int s)
{
	return mix64(base ^ mix64((uint64) c->index * 1000003 + s + 1));
}

/*
 * Run seeds that once failed, with the cell they failed in: each runs every
 * time, on top of the fresh seeds.  Add a failing run's line here (the TAP
 * line names it) to keep it as a case.
 */
typedef struct Regression
{
	const char *cell;
	uint64		seed;
} Regression;

static const Regression regressions[] = {
	/* the rules before issue 49's rewrite, at one day: each failed so */
	/* stays at 16 through the 64-phases (throughput, follow) */
	{"c96-b0.5-pool-iid2", UINT64CONST(0x250e4ccc930cf9c2)},
	/* an AR(1) drift taken for a grow's gain: over twice the best */
	{"c96-b1-walbound-ar9", UINT64CONST(0xfac4cc0e44378be7)},
	/* checkpoint dips walk the WAL-bound load up (throughput) */
	{"c480-b0.5-walbound-ckpt", UINT64CONST(0xf34fc5b46ea364a7)},
	/* trials that chase an AR(1) drift: more than 48 changes a day (the bound then) */
	{"c96-b0-ramp-ar9", UINT64CONST(0x28849143225f3846)},
	/* the step to 256 behind the same backends followed late */
	{"c96-b0.5-step-iid2", UINT64CONST(0x429b1e3c06c0afb4)},
	/* checkpoint dips walk the ramp's plateau up past twice its best */
	{"c480-b1-ramp-ckpt", UINT64CONST(0xe650a28ebfea43f2)},
};

/* ---- TAP ---- */

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/* what a cell's seeds did */
typedef struct CellSummary
{
	int			runs;
	double		ratio_min;
	double		ratio_med;
	double		over_max;
	double		follow_max;		/* -1: no move */
	int			changes_max;
	int			fail_tput;
	int			fail_over;
	int			fail_follow;
	int			fail_changes;
	uint64		first_fail[4];	/* run seed of the first failure of each */
	double		static_ratio;
	double		stock_ratio;
	double		best_ratio;
	int			best_fixed;
} CellSummary;

static const char *goal_names[] = {"throughput", "over", "follow", "changes"};

static void
summarize(const Cell *c, const Response *r, RunResult *runs, int n,
		  int static_locks, CellSummary *cs)
{
	double	   *ratios = malloc(sizeof(double) * n);

	memset(cs, 0, sizeof(*cs));
	cs->runs = n;
	cs->follow_max = -1;
	for (int i = 0; i < n; i++)
	{
		RunResult  *x = &runs[i];
		bool		goals[4] = {x->ok_tput, x->ok_over, x->ok_follow,
		x->ok_changes};
		int		   *fails[4] = {&cs->fail_tput, &cs->fail_over,
		&cs->fail_follow, &cs->fail_changes};

		ratios[i] = x->ratio;
		cs->over_max = Max(cs->over_max, x->over);
		cs->follow_max = Max(cs->follow_max, x->follow_s);
		cs->changes_max = Max(cs->changes_max, x->changes_max_day);
		for (int g = 0; g < 4; g++)
			if (!goals[g])
			{
				if (*fails[g] == 0)
					cs->first_fail[g] = x->seed;
				(*fails[g])++;
			}
	}
	qsort(ratios, n, sizeof(double), cmp_double);
	cs->ratio_min = ratios[0];
	cs->ratio_med = ratios[n / 2];
	free(ratios);
	cs->static_ratio = fixed_ratio(c->load, r, static_locks);
	cs->stock_ratio = fixed_ratio(c->load, r, STOCK_LOCKS);
	cs->best_ratio = fixed_ratio(c->load, r, r->best_fixed);
	cs->best_fixed = r->best_fixed;
}

static void
format_follow(double f, char *buf, size_t len)
{
	if (f < 0)
		snprintf(buf, len, "-");
	else if (isinf(f))
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%.0fm", f / 60);
}

static void
print_row(const Cell *c, const CellSummary *cs, int static_locks)
{
	char		follow[16];
	char		fails[64] = "";

	format_follow(cs->follow_max, follow, sizeof(follow));
	if (cs->fail_tput)
		snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails),
				 " tput:%d", cs->fail_tput);
	if (cs->fail_over)
		snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails),
				 " over:%d", cs->fail_over);
	if (cs->fail_follow)
		snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails),
				 " follow:%d", cs->fail_follow);
	if (cs->fail_changes)
		snprintf(fails + strlen(fails), sizeof(fails) - strlen(fails),
				 " changes:%d", cs->fail_changes);
	if (report)
		printf("| %s | %d | %.3f | %.3f | %.1f%% | %d | %s | %.3f (%d) | %.3f | %.3f (%d) | %s |\n",
			   c->name, cs->runs, cs->ratio_min, cs->ratio_med,
			   cs->over_max * 100, cs->changes_max, follow,
			   cs->static_ratio, static_locks, cs->stock_ratio,
			   cs->best_ratio, cs->best_fixed,
			   fails[0] ? fails + 1 : "");
	else
		printf("# %-30s %3d | %.3f %.3f | %5.1f%% | %4d | %6s | %.3f(%4d) %.3f %.3f(%4d) |%s\n",
			   c->name, cs->runs, cs->ratio_min, cs->ratio_med,
			   cs->over_max * 100, cs->changes_max, follow,
			   cs->static_ratio, static_locks, cs->stock_ratio,
			   cs->best_ratio, cs->best_fixed, fails);
}

/*
 * The goals auto mode is known not to meet yet, by goal, load and noise
 * (NULL: any), each with why; docs/auto-mode.md's table shows how far.
 * Everything not listed here must pass at every seed.
 */
typedef struct Shortfall
{
	const char *goal;
	const char *load;
	const char *noise;
	/*
	 * How far it falls short, at most, in the goal's own measure: the
	 * least throughput ratio, the largest share of time over, the longest
	 * follow in seconds (1e12: never), the most changes in a day.  Past it
	 * the line is a failure, not a TODO: a known shortfall must not hide a
	 * worse one.  Where 128 seeds spread a goal's worst over its whole range
	 * (time over, follow), the limit is the range's end.
	 */
	double		limit;
	const char *why;
} Shortfall;

#define OVER_WHY "a probe above the best within the hour, and halvings that must show their evidence under noise, leave a number above the best for hours after the load falls (a ramp's night, a start of 512); a checkpoint's dip or correlated noise keeps them from showing it all day"
#define FOLLOW_WHY "with noise, a probe that finds the moved best is not kept on its first try, and the next comes after the hold"

static const Shortfall shortfalls[] = {
	{"over", NULL, "iid2", 1.0,
	OVER_WHY},
	{"over", NULL, "iid5", 1.0,
	OVER_WHY},
	{"over", NULL, "ar9", 1.0,
	OVER_WHY},
	{"over", NULL, "ckpt", 1.0,
	OVER_WHY},
	{"over", NULL, "tail", 1.0,
	OVER_WHY},
	{"over", "pool", "none", 0.15,
	"the best moving down while the share at the number stays, auto mode holds four times the best until its halving's hold ends"},
	{"throughput", "bursts", NULL, 0.85,
	"a minute's burst every ten is shorter than a probe: auto mode holds the lukewarm load's number and the bursts' best is never reached"},
	{"throughput", NULL, "ckpt", 0.75,
	"a checkpoint's 15% dip over a whole phase widens the null probes' spread, so the margin outgrows the gains of the doublings near the best"},
	{"throughput", NULL, "ar9", 0.90,
	"correlated noise (rho 0.9) over a probe's 2.5 minutes widens the margin as a checkpoint's dip does"},
	{"throughput", NULL, "iid5", 0.90,
	"at 5% noise a window, a doubling's gain near the best is within the margin"},
	{"follow", "pool", "iid2", 1e12,
	FOLLOW_WHY},
	{"follow", "pool", "iid5", 1e12,
	FOLLOW_WHY},
	{"follow", "pool", "ar9", 1e12,
	FOLLOW_WHY},
	{"follow", "pool", "ckpt", 1e12,
	FOLLOW_WHY},
	{"follow", "pool", "tail", 1e12,
	FOLLOW_WHY},
	{"follow", "ramp", "iid2", 1e12,
	FOLLOW_WHY},
	{"follow", "ramp", "iid5", 1e12,
	FOLLOW_WHY},
	{"follow", "ramp", "ar9", 1e12,
	FOLLOW_WHY},
	{"follow", "ramp", "ckpt", 1e12,
	FOLLOW_WHY},
	{"follow", "ramp", "tail", 1e12,
	FOLLOW_WHY},
	{"follow", "step", "iid2", 1e12,
	FOLLOW_WHY},
	{"follow", "step", "iid5", 1e12,
	FOLLOW_WHY},
	{"follow", "step", "ar9", 1e12,
	FOLLOW_WHY},
	{"follow", "step", "ckpt", 1e12,
	FOLLOW_WHY},
	{"follow", "step", "tail", 1e12,
	FOLLOW_WHY},
	{"changes", NULL, NULL, 400,
	"where numbers tie (past the knee at beta 0, and behind a pool whose best moves every 4 hours), noise keeps a neighbour now and then that the next probe takes back: up to 280 changes a day measured"},
};

static const char *
known_shortfall(const Cell *c, int goal, double worst)
{
	/* the load as the cell's name spells it, its knee included */
	const char *load = strchr(strchr(c->name, '-') + 1, '-') + 1;
	size_t		load_len = strcspn(load, "-");

	for (int i = 0; i < lengthof(shortfalls); i++)
	{
		const Shortfall *sf = &shortfalls[i];

		if (strcmp(sf->goal, goal_names[goal]) == 0 &&
			(sf->load == NULL || (strlen(sf->load) == load_len &&
								  strncmp(load, sf->load, load_len) == 0)) &&
			(sf->noise == NULL || strcmp(c->noise->name, sf->noise) == 0))
			return (goal == 0 ? worst >= sf->limit : worst <= sf->limit) ?
				sf->why : NULL;
	}
	return NULL;
}

static void
cell_tap(const Cell *c, const CellSummary *cs, const char *tag)
{
	int			fails[4] = {cs->fail_tput, cs->fail_over, cs->fail_follow,
	cs->fail_changes};
	char		what[4][96];
	char		follow[16];
	double		worsts[4] = {cs->ratio_min, cs->over_max,
		isinf(cs->follow_max) ? 1e12 : cs->follow_max, cs->changes_max};

	format_follow(cs->follow_max, follow, sizeof(follow));
	snprintf(what[0], sizeof(what[0]), "throughput >= %g of the %s, worst %.3f",
			 c->load->moving ? MIN_PHASE_RATIO : MIN_RATIO,
			 c->load->moving ? "per-phase best" : "best fixed",
			 cs->ratio_min);
	snprintf(what[1], sizeof(what[1]),
			 "<= %g%% of the time at twice the best or more, worst %.1f%%",
			 MAX_OVER_SHARE * 100, cs->over_max * 100);
	snprintf(what[2], sizeof(what[2]),
			 "within a doubling of a moved best within %.0f min, worst %s",
			 FOLLOW_S / 60, follow);
	snprintf(what[3], sizeof(what[3]), "<= %d changes a day, worst %d",
			 MAX_CHANGES_PER_DAY, cs->changes_max);
	for (int g = 0; g < 4; g++)
	{
		if (g == 2 && !c->load->moving)
			continue;
		unit_tap_todo = known_shortfall(c, g, worsts[g]);
		if (fails[g] > 0)
			ok(false, "%s%s: %s: %s; %d of %d seeds fail, first: test_auto_noise trace %s 0x%016llx",
			   tag, c->name, goal_names[g], what[g], fails[g], cs->runs,
			   c->name, (unsigned long long) cs->first_fail[g]);
		else
			ok(true, "%s%s: %s: %s; %d seeds", tag, c->name, goal_names[g],
			   what[g], cs->runs);
		unit_tap_todo = NULL;
	}
}

/* ---- the steady minute of t/008_auto.pl (d) ---- */

/*
 * t/008 (d) runs 8 pgbench clients for 60 s on this project's 2-CPU VM,
 * auto mode from 1 lock (floor 1, maximum 16), 1-s windows, and fails if a
 * change is not a step of a paired probe (the other number, back or
 * abandoned, and kept), or if there are more probes than the time allows
 * after the noise gate (a probe's two phases each).  Here the same minute
 * is synthetic windows drawn as that server's were measured: the active
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
reason_in(const char *reason, const char *a, const char *b)
{
	return reason != NULL &&
		(strcmp(reason, a) == 0 || (b != NULL && strcmp(reason, b) == 0));
}

static bool
steady_minute_fails(double rate_noise, double load_noise, uint64 seed)
{
	AutoRulesState *state = malloc(sizeof(AutoRulesState));
	AutoVerdict verdict;
	int			locks;
	int			probes = 0;
	int			bad = 0;
	int			from = 0;
	int			to = 0;
	int			most;
	enum
	{
		NONE, AWAY, BACK
	}			phase = NONE;

	rng_state = seed;
	locks = walscale_rules_begin(state, 1, 1, 16);
	for (int i = 0; i < STEADY_WINDOWS; i++)
	{
		AutoWindowFigures w;
		double		en = rng_normal();
		double		rn = rng_normal();
		double		sn = rng_normal();
		double		backends = Max(1.7 * (1 + load_noise * en) *
								   (locks >= 2 ? 0.97 : 1.0), 0.5);
		double		rate = 150000 * Max(1 + rate_noise * rn, 0.1) *
			(locks >= 2 ? 1.05 : 1.0) * (locks >= 4 ? 1.025 : 1.0);
		double		share = (locks == 1 ? 0.05 : locks == 2 ? 0.035 : 0.02) *
			Max(1 + 0.3 * sn, 0.0);
		double		acquisitions = rate * Min(backends, 2.0);
		const char *r;

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
		walscale_rules_decide(&w, state, &verdict);
		if (verdict.target == locks)
			continue;
		r = verdict.reason;
		if (reason_in(r, AUTO_REASON_PROBE_UP, AUTO_REASON_PROBE_UP_FAR) ||
			reason_in(r, AUTO_REASON_PROBE_DOWN, AUTO_REASON_PROBE_DOWN_FAR))
		{
			bad += phase == AWAY;
			from = locks;
			to = verdict.target;
			phase = AWAY;
			probes++;
		}
		else if (reason_in(r, AUTO_REASON_PROBE_BACK, AUTO_REASON_ABANDON))
		{
			bad += !(phase == AWAY && locks == to && verdict.target == from);
			phase = strcmp(r, AUTO_REASON_PROBE_BACK) == 0 ? BACK : NONE;
		}
		else if (reason_in(r, AUTO_REASON_KEEP_MORE, AUTO_REASON_KEEP_FEWER))
		{
			bad += !(phase == BACK && locks == from && verdict.target == to);
			phase = NONE;
		}
		else
			bad++;
		locks = verdict.target;
	}
	free(state);
	most = 1 + (STEADY_WINDOWS - (AUTO_PROBE_SPAN + AUTO_PROBE_WINDOWS)) /
		(2 * (1 + AUTO_PROBE_WINDOWS));
	return bad > 0 || probes > most;
}

/* ---- main ---- */

static uint64
fresh_seed(void)
{
	uint64		seed = 0;
	FILE	   *f = fopen("/dev/urandom", "rb");

	if (f == NULL || fread(&seed, sizeof(seed), 1, f) != 1)
		seed = (uint64) time(NULL) * 1000003 + (uint64) getpid();
	if (f != NULL)
		fclose(f);
	return seed;
}

static int
env_int(const char *name, int dflt, int lo, int hi)
{
	const char *v = getenv(name);
	int			x;

	if (v == NULL || *v == '\0')
		return dflt;
	x = atoi(v);
	if (x < lo || x > hi)
	{
		fprintf(stderr, "%s must be from %d to %d\n", name, lo, hi);
		exit(2);
	}
	return x;
}

static void
describe_cell(const Cell *c)
{
	printf("# cell %s: %d CPUs, floor %d, maximum %d, start %d, beta %g, load %s (%s), noise %s (sd %g, rho %g, backends +-%g), %d day%s of %g-s windows\n",
		   c->name, c->server.cpus, c->server.floor, c->server.max_locks,
		   c->server.start, c->server.beta, c->load->name,
		   c->load->moving ? "moving best" : "judged on the best fixed",
		   c->noise->name, c->noise->sd, c->noise->rho, c->noise->backends,
		   days, days == 1 ? "" : "s", WINDOW_S);
}

int
main(int argc, char **argv)
{
	static Response resp;
	const char *seed_env = getenv("WALSCALE_NOISE_SEED");
	const char *only = getenv("WALSCALE_NOISE_CELLS");
	uint64		base;
	int			seeds;
	int			windows;
	int			static_locks[lengthof(cpu_sizes)];
	const Cell *one_cell = NULL;
	uint64		one_seed = 0;
	int			auto_meets = 0;
	int			auto_meets_all = 0;
	int			static_meets = 0;
	int			stock_meets = 0;
	int			best_meets = 0;
	int			cells_run = 0;
	int			runs_total = 0;

	make_cells();
	days = env_int("WALSCALE_NOISE_DAYS", DEFAULT_DAYS, 1, MAX_DAYS);
	seeds = env_int("WALSCALE_NOISE_SEEDS", DEFAULT_SEEDS, 1, 100000);
	windows = (int) (days * DAY_S / WINDOW_S);

	if (argc == 4 && strcmp(argv[1], "trace") == 0)
	{
		const Cell *c = find_cell(argv[2]);
		RunResult	r;
		char		follow[16];

		if (c == NULL)
		{
			fprintf(stderr, "no cell \"%s\"; cells are named like c96-b0.5-pool-ar9\n",
					argv[2]);
			return 2;
		}
		trace = true;
		describe_cell(c);
		make_response(c->load, &c->server, windows, &resp);
		run_one(c, &resp, strtoull(argv[3], NULL, 0), &r);
		format_follow(r.follow_s, follow, sizeof(follow));
		printf("final %d, ratio %.3f (%.3f against the best fixed, %d), over %.1f%%, follow %s, at most %d changes a day; %s %s %s %s\n",
			   r.final_locks, r.ratio, r.ratio_fixed, resp.best_fixed,
			   r.over * 100, follow, r.changes_max_day,
			   r.ok_tput ? "throughput ok" : "THROUGHPUT FAILS",
			   r.ok_over ? "over ok" : "OVER FAILS",
			   r.ok_follow ? "follow ok" : "FOLLOW FAILS",
			   r.ok_changes ? "changes ok" : "CHANGES FAIL");
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "report") == 0)
	{
		report = true;
		unit_tap_quiet = true;
	}
	else if (argc != 1)
	{
		fprintf(stderr, "usage: %s [report | trace CELL RUNSEED]\n", argv[0]);
		return 2;
	}

	if (seed_env != NULL && strchr(seed_env, ':') != NULL)
	{
		char		name[64];
		const char *colon = strchr(seed_env, ':');

		snprintf(name, sizeof(name), "%.*s", (int) (colon - seed_env),
				 seed_env);
		one_cell = find_cell(name);
		if (one_cell == NULL)
		{
			fprintf(stderr, "WALSCALE_NOISE_SEED names no cell \"%s\"\n", name);
			return 2;
		}
		one_seed = strtoull(colon + 1, NULL, 0);
		base = 0;
	}
	else if (seed_env != NULL && *seed_env != '\0')
		base = strtoull(seed_env, NULL, 0);
	else
		base = fresh_seed();

	/* the static number per CPU size, fitted on the grid without noise */
	for (int ci = 0; ci < lengthof(cpu_sizes); ci++)
	{
		Server		sv;
		double		worst[LEVELS];
		double		best_worst = -1;
		int			levels = 0;
		int			level_locks[LEVELS];

		make_server(&sv, cpu_sizes[ci], 0);
		for (int l = sv.floor; l <= sv.max_locks && levels < LEVELS; l *= 2)
		{
			worst[levels] = 1e9;
			level_locks[levels++] = l;
		}
		for (int bi = 0; bi < lengthof(betas); bi++)
			for (int li = 0; li < N_LOADS; li++)
			{
				make_server(&sv, cpu_sizes[ci], betas[bi]);
				make_response(&loads[li], &sv, windows, &resp);
				for (int i = 0; i < levels; i++)
					worst[i] = Min(worst[i],
								   fixed_ratio(&loads[li], &resp,
											   level_locks[i]));
			}
		static_locks[ci] = level_locks[0];
		for (int i = 0; i < levels; i++)
			if (worst[i] > best_worst)
			{
				best_worst = worst[i];
				static_locks[ci] = level_locks[i];
			}
		printf("%sstatic number for %d CPUs: %d (its worst cell's ratio %.3f; per number:", NOTE,
			   cpu_sizes[ci], static_locks[ci], best_worst);
		for (int i = 0; i < levels; i++)
			printf(" %d:%.3f", level_locks[i], worst[i]);
		printf(")\n");
	}

	if (one_cell != NULL)
		printf("%sWALSCALE_NOISE_SEED=%s: cell %s, run seed 0x%016llx only\n", NOTE,
			   seed_env, one_cell->name, (unsigned long long) one_seed);
	else
		printf("%sbase seed 0x%016llx (WALSCALE_NOISE_SEED=0x%016llx repeats this run), %d seeds a cell (1 without noise), %d day%s of %g-s windows%s%s\n", NOTE,
			   (unsigned long long) base, (unsigned long long) base, seeds,
			   days, days == 1 ? "" : "s", WINDOW_S,
			   only ? ", cells matching " : "", only ? only : "");
	if (report)
	{
		printf("- each ratio is the throughput by the load's goal: for ramp, pool and step (the best moves for hours) against the best number of each window, goal %g; for the others against the best fixed number, goal %g; follow is the longest time to within a doubling of a best that moved (ramp, pool, step), changes the most in one day, and the last column the seeds failing each goal\n",
			   MIN_PHASE_RATIO, MIN_RATIO);
		printf("\n| cell | seeds | auto ratio min | median | time at >= 2x best, worst | changes a day, worst | follow, worst | static (its count) | stock 8 | best fixed (count) | goals failed (seeds) |\n");
		printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
	}
	else
		printf("# %-30s %3s | %-11s | %6s | %4s | %6s | %-26s |%s\n",
			   "cell", "n", "ratio min/med", "over", "chg", "follow",
			   "static(n) stock best(n)", " failing seeds");

	for (int ci = 0; ci < n_cells; ci++)
	{
		const Cell *c = &cells[ci];
		int			csize = 0;
		int			n = c->noise->kind == NOISE_NONE ? 1 : seeds;
		RunResult  *runs;
		CellSummary cs;
		double		goal;

		if (one_cell != NULL && c != one_cell)
			continue;
		if (only != NULL && strstr(c->name, only) == NULL)
			continue;
		while (cpu_sizes[csize] != c->server.cpus)
			csize++;
		/* one response for the noises of a load on a server */
		if (ci == 0 || one_cell != NULL || only != NULL ||
			c->load != cells[ci - 1].load ||
			c->server.beta != cells[ci - 1].server.beta ||
			c->server.cpus != cells[ci - 1].server.cpus)
			make_response(c->load, &c->server, windows, &resp);
		if (one_cell != NULL)
			n = 1;
		runs = malloc(sizeof(RunResult) * n);
		for (int s = 0; s < n; s++)
			run_one(c, &resp, one_cell ? one_seed : run_seed(base, c, s),
					&runs[s]);
		summarize(c, &resp, runs, n, static_locks[csize], &cs);
		free(runs);
		print_row(c, &cs, static_locks[csize]);
		cell_tap(c, &cs, "");
		cells_run++;
		runs_total += n;

		goal = c->load->moving ? MIN_PHASE_RATIO : MIN_RATIO;
		auto_meets += cs.fail_tput == 0;
		auto_meets_all += cs.fail_tput + cs.fail_over + cs.fail_follow +
			cs.fail_changes == 0;
		static_meets += cs.static_ratio >= goal;
		stock_meets += cs.stock_ratio >= goal;
		best_meets += cs.best_ratio >= goal;
	}

	/* the regressions: every goal at each */
	for (int i = 0; one_cell == NULL && i < lengthof(regressions); i++)
	{
		const Cell *c;
		RunResult	r;
		CellSummary cs;
		int			csize = 0;

		if (only != NULL && strstr(regressions[i].cell, only) == NULL)
			continue;
		c = find_cell(regressions[i].cell);
		if (c == NULL)
		{
			ok(false, "regression: no cell %s", regressions[i].cell);
			continue;
		}
		while (cpu_sizes[csize] != c->server.cpus)
			csize++;
		make_response(c->load, &c->server, windows, &resp);
		run_one(c, &resp, regressions[i].seed, &r);
		summarize(c, &resp, &r, 1, static_locks[csize], &cs);
		cell_tap(c, &cs, "regression ");
	}

	if (report)
		printf("\n");
	printf("%sverdict over %d cells (%d runs): auto mode meets its throughput goal at every seed in %d, every goal at every seed in %d; the static numbers (16 CPUs: %d, 96: %d, 480: %d) meet it in %d; stock's 8 in %d; the best fixed number in %d\n", NOTE,
		   cells_run, runs_total, auto_meets, auto_meets_all,
		   static_locks[0], static_locks[1], static_locks[2], static_meets,
		   stock_meets, best_meets);

	if (one_cell == NULL && only == NULL && !report)
	{
		printf("# the steady minute of t/008 (d): 2 CPUs, 8 clients, 60 1-s windows from 1 lock, %d runs a row\n",
			   STEADY_RUNS);
		for (int ri = 0; ri < 3; ri++)
			for (int bi = 0; bi < 2; bi++)
			{
				const double rate_noises[] = {0.01, 0.02, 0.05};
				const double load_noises[] = {0.12, 0.20};
				int			fails = 0;
				uint64		first = 0;

				for (int s = 0; s < STEADY_RUNS; s++)
				{
					uint64		seed = mix64(base ^ mix64(UINT64CONST(0x57EAD1) +
														  (ri * 2 + bi) * 1000003 + s));

					if (steady_minute_fails(rate_noises[ri], load_noises[bi],
											seed))
					{
						if (fails++ == 0)
							first = seed;
					}
				}
				printf("# steady minute, rate noise %g%%, backends %g%%: %d of %d fail\n",
					   rate_noises[ri] * 100, load_noises[bi] * 100, fails,
					   STEADY_RUNS);
				ok(fails * STEADY_MAX_FAIL_IN < STEADY_RUNS,
				   "steady minute, rate noise %g%%, backends %g%%: fewer than 1 run in %d fails t/008 (d), %d of %d, first 0x%016llx",
				   rate_noises[ri] * 100, load_noises[bi] * 100,
				   STEADY_MAX_FAIL_IN, fails, STEADY_RUNS,
				   (unsigned long long) first);
			}
	}

	if (report)
		return tests_failed > 0 ? 1 : 0;
	if (tests_failed > 0)
		printf("# base seed 0x%016llx repeats this run\n",
			   (unsigned long long) base);
	return unit_tap_done();
}
