/*-------------------------------------------------------------------------
 *
 * scenarios.c
 *		The decision code of walscale_auto_rules.c, unmodified, in the loop
 *		of the simulated server, and the scenarios it is judged on.
 *
 * Auto mode's hour of a scenario is WINDOWS_PER_HOUR windows of window_s =
 * 10 s each, as on a server with walscale.auto_interval's default; the
 * fixed counts of the sweep run SWEEP_WINDOWS_PER_HOUR windows of 60 s.
 * Each of auto mode's windows is simulated as auto_window_model_s() of
 * model time, 1.28 or 0.32 s by CPU count, long enough that two windows at
 * the best count differ about as much as two real windows of 10 s are
 * expected to; each of the sweep's as sweep_window_model_s(), so that a
 * fixed count's run holds a checkpoint interval of model time, whose
 * windows' noise only their mean sees.  A checkpoint's all-lock acquisition
 * comes every 30 of auto mode's windows, in model time compressed as the
 * windows are (checkpoint_model_s()).  The server's state runs on
 * from one window to the next; the counts the rules see are scaled up to
 * the seconds the window stands for, and the scenario's clock (loads,
 * checkpoints' full-page images) runs that many seconds per window.  What
 * is compressed is the time a window stands for.  The price: a window's
 * figures are those of a fraction of its seconds, and the model's own slow
 * transients weigh more on a window than on a server's (sim/README.md).
 *
 * Only the public functions of walscale_auto_rules.h are called, with the
 * figures of AutoWindowFigures, so that a rewrite of the rules needs a
 * rebuild only.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "walscale_auto_rules.h"

#include "model.h"
#include "params.h"
#include "scenarios.h"

#define WINDOWS_PER_HOUR	360 /* walscale.auto_interval's 10 s */
#define SWEEP_WINDOWS_PER_HOUR	60
#define STOCK_LOCKS		8		/* XLOG_INSERT_LOCKS_DEFAULT */
#define CORE_MAX_LOCKS	1024	/* XLOG_INSERT_LOCKS_MAX */
#define DBA_MIN_LOCKS	8		/* walscale.auto_min_locks' default */
#define AUTO_ATTEMPTS	0		/* walscale.insert_lock_attempts' default */
#define CHECKPOINT_S	300.0	/* checkpoint_timeout's default */
#define MAX_WINDOWS		1024

/*
 * The goals, as bench/auto-grid.sh's grid has them (t/unit/test_auto_noise.c
 * argues each): throughput at least MIN_RATIO of the best fixed count's, or
 * MIN_PHASE_RATIO of the per-phase best's where the best moves; at most
 * MAX_OVER_SHARE of the windows at twice the phase's best count or more; at
 * most MAX_CHANGES_PER_DAY changes a day.  A count within TIE of the phase's
 * best throughput ties with it for the over goal: the sweep's means carry
 * about a percent of the model's noise.
 */
#define MIN_RATIO		0.98
#define MIN_PHASE_RATIO	0.97
#define MAX_OVER_SHARE	0.05
#define MAX_CHANGES_PER_DAY	240
#define TIE				0.02

/*
 * Changes a day: a day has one start, whose settling (the first START_S of
 * a run) counts once; the changes after it are scaled from the run's rest
 * to the rest of a day.
 */
#define START_S			600.0

/*
 * After a change, each backend starts again from ProcNumber modulo the new
 * count, evenly spread; for a few ms of model time the server runs faster
 * than it will once stock's lockToTry + 1 has bunched backends again.  In a
 * real window that is nothing; in one of 40 ms it would be a tenth, and a
 * grow would be judged on it.  So a change settles for SETTLE_S of model
 * time, counted in no window.  The resize's all-lock acquisition happens
 * there too, and the settling goes on while it lasts, up to SETTLE_MAX_S:
 * on a server it takes microseconds to a second of a window of a minute; a
 * window of 40 ms that held it would be judged on it alone.
 */
#define SETTLE_S		0.01
#define SETTLE_MAX_S	0.2

/*
 * Every run, auto mode's and each fixed count's, starts after WARM_S of
 * model time at its first load: the clients connected, the WAL buffers of
 * (d) full, the start's synchronised transactions spread out, spinning
 * settled.  Each fixed count then runs the whole scenario, as auto mode
 * does.
 */
#define WARM_S					0.3

/*
 * Scenario seconds per window: auto mode's, and the fixed counts' of the
 * sweep.  A fixed count's mean over a scenario is the mean of its steady
 * rates over the scenario's loads, which fewer, longer windows sample as
 * well at a sixth of the cost; auto mode's rules count windows (trials,
 * hot windows) as well as seconds, so it runs with as many windows as on a
 * server with walscale.auto_interval's default.
 */
static double window_s = 3600.0 / WINDOWS_PER_HOUR;
static double sweep_window_s = 3600.0 / SWEEP_WINDOWS_PER_HOUR;

typedef struct Scenario
{
	const char *name;
	const char *title;
	double		duration_s;
	bool		moving;			/* the best moves: judged per phase */
	int			max_clients;
	int			(*clients) (double t);
	void		(*setup) (SimParams *p);
	int			(*phase) (double t);	/* NULL: one phase */
} Scenario;

/* ---- the loads ---- */

static int
load_200(double t)
{
	return 200;
}

static int
load_2000(double t)
{
	return 2000;
}

/* 100 clients, and a burst of 2000 for a minute every ten from 5 minutes */
static int
load_bursts(double t)
{
	double		in = fmod(t, 600.0);

	return t >= 300 && in >= 300 && in < 360 ? 2000 : 100;
}

/* an hour of one batch writer, then 1 to 2000 clients in 10 minutes */
static int
load_night(double t)
{
	if (t < 3600)
		return 1;
	if (t < 4200)
		return 1 + (int) ((t - 3600) / 600 * 1999);
	return 2000;
}

static int
load_500(double t)
{
	return 500;
}

/* ---- the phases: stretches of one load, each with its own best count ---- */

static int
phase_bursts(double t)
{
	return load_bursts(t) == 2000 ? 1 : 0;
}

/* the night, the ramp, the day */
static int
phase_night(double t)
{
	return t < 3600 ? 0 : t < 4200 ? 1 : 2;
}

#define MAX_PHASES	3

/* ---- the servers ---- */

static void
setup_plain(SimParams *p)
{
}

/*
 * Bound by WAL writing: synchronous_commit on, wal_buffers 16MB, and a WAL
 * device that writes 2 MB/s per CPU up to 128 MB/s, a fifth of what 16 CPUs
 * insert and less than insertpos_lck lets 480 insert: an inserter that has
 * to replace a buffer waits for the write with its insertion lock held.
 */
static void
setup_write_bound(SimParams *p)
{
	p->sync_commit = true;
	p->fsync_ns = 1e6;
	p->wal_buffers = 16.0 * 1024 * 1024;
	p->write_bytes_per_ns = 0.002 * Min(p->cpus, 64);
}

/* each transaction a new connection, ProcNumbers FIFO over 1000 */
static void
setup_unpooled(SimParams *p)
{
	p->unpooled = true;
	p->max_connections = 1000;
}

static const Scenario scenarios[] = {
	{"a-steady-200", "(a) steady, 200 clients", 3600, false, 200,
	load_200, setup_plain, NULL},
	{"a-steady-2000", "(a) steady, 2000 clients", 3600, false, 2000,
	load_2000, setup_plain, NULL},
	{"b-bursts", "(b) 100 clients, bursts of 2000 for 60 s every 600 s", 3600,
	false, 2000, load_bursts, setup_plain, phase_bursts},
	{"c-night-morning", "(c) a night of 1 writer, then a ramp to 2000 in 600 s",
	5400, true, 2000, load_night, setup_plain, phase_night},
	{"d-write-bound", "(d) 2000 clients bound by WAL writing", 3600, false,
	2000, load_2000, setup_write_bound, NULL},
	{"e-unpooled", "(e) 500 unpooled clients, max_connections 1000", 3600,
	false, 1000, load_500, setup_unpooled, NULL},
};

/*
 * Model time of one of auto mode's windows, by CPU count.  The rules judge
 * a change against the spread of a window's rate from the next at one
 * count, so a window must be no noisier than a server's.  On the 16-vCPU
 * machine (sim/real_spread.py on bench/results/2026-12-04-device16-sweep-cpu,
 * measured) two adjacent windows differ, as the rms of the log of their
 * ratio, by 3.5% at 1 s and 2.9% at 2 s, and by 1.1% at 10 s if its seconds
 * are independent (extrapolated).  Two of the model's windows at a fixed
 * count (walscale_sim spread, simulated) differ by:
 *
 *	16 CPUs, 200 clients, 128 locks (the best): 4.3% at 40 ms, 1.6% at
 *	160 ms, 1.5% at 640 ms, 1.1% at 2.56 s; 2000 clients at 64 locks 12.8%,
 *	6.2%, 3.4%, 2.1%, at 128 locks 0.2% at 40 ms.
 *	96 CPUs, 2000 clients: 32 locks (the best) 2.7%, 1.4%, 0.7% at 40, 160,
 *	640 ms; 128 locks 4.0%, 1.9%, 0.8%.
 *	480 CPUs, 2000 clients: 16 locks (the best) 0.3%, 0.2%, 0.1% at 40, 160,
 *	640 ms; 128 locks 3.0%, 1.8%, 0.8%.
 *
 * Where it is noise, four times the model time halves the spread; at 16
 * CPUs and 200 clients it halves less, some of it slower than a window.
 * So 1.28 s up to 16 CPUs, about 1.3% at the best count; beyond, 0.32 s,
 * about 1.0% and 1.3% at 32 and 128 locks on 96 CPUs, 0.2% and 1.3% at 16
 * and 128 on 480 (interpolated; the controller table's runs gave 1.00%,
 * 1.24% and 0.24% at the best counts of 16, 96 and 480 CPUs,
 * sim/window_spread.py).  Each is a power-of-two multiple of the ten 4-ms
 * slices of the 40 ms a window had before.  Auto mode's hour costs 0.3 (16
 * CPUs) to 1 (96) CPU second per second of model time, 1738 s of CPU for
 * the 18 runs; twice as long at 16 CPUs (2.56 s, 1.06%) would double that
 * there and moved none of the rows that miss (sim/README.md).  Fewer locks
 * than the best stay noisier at 16 CPUs and 2000 clients (4.0% at 16
 * locks, 3.4% at 64, at 640 ms): backends pile up behind preempted
 * holders, stalls of up to 65 ms that only a window of seconds of model
 * time averages out.
 *
 * window_stretch multiplies it (SIM_WINDOW_STRETCH), window_fixed_s replaces
 * it at every CPU count (SIM_WINDOW_MS), sweep_stretch multiplies the
 * sweep's (SIM_SWEEP_WINDOW_STRETCH).
 */
static double window_stretch = 1.0;
static double window_fixed_s = 0.0;
static double sweep_stretch = 1.0;

void
scenarios_set_window_stretch(double stretch, double fixed_ms,
							 double sweep)
{
	if (stretch > 0)
		window_stretch = stretch;
	if (fixed_ms > 0)
		window_fixed_s = fixed_ms / 1e3;
	if (sweep > 0)
		sweep_stretch = sweep;
}

void
scenarios_set_windows_per_hour(int n, int sweep_n)
{
	if (n > 0)
		window_s = 3600.0 / n;
	if (sweep_n > 0)
		sweep_window_s = 3600.0 / sweep_n;
}

double
auto_window_model_s(int cpus)
{
	double		s;

	if (window_fixed_s > 0)
		s = window_fixed_s;
	else if (cpus <= 16)
		s = 1.28;
	else
		s = 0.32;
	return s * window_stretch;
}

/*
 * A checkpoint's all-lock acquisition in model time: every checkpoint_timeout
 * compressed as auto mode's windows are (300 s of the scenario's clock is 30
 * windows, 38.4 s of model time at 16 CPUs and 9.6 s at 96 and 480), so
 * that a checkpoint comes once every 30 windows as on a server.  Its stall
 * lasts what it lasts in model time, so it weighs on a window as many times
 * more than on a server as the window is compressed (7.8 times at 16 CPUs,
 * 31 times beyond); the fixed counts of the sweep run under the same
 * checkpoints per second of model time, so they pay the same.
 */
static double
checkpoint_model_s(int cpus)
{
	return CHECKPOINT_S * auto_window_model_s(cpus) / window_s;
}

/*
 * Each of the sweep's windows: a fixed count's run of an hour or less is one
 * checkpoint interval of model time (an hour: 60 windows of 160 ms at 96
 * and 480 CPUs, of 640 ms at 16), a longer one as many more as it is
 * longer, so that every fixed count sees a checkpoint, in the middle of its
 * run, and pays for it per second of model time what auto mode pays.
 */
static double
sweep_window_model_s(int cpus, double duration_s)
{
	return checkpoint_model_s(cpus) * sweep_window_s /
		Min(duration_s, 3600.0) * sweep_stretch;
}

/*
 * The seeds (SIM_SEEDS): auto mode runs once per seed, the sweep of fixed
 * counts once, with the first.  Seed 0 is the generator's state of the
 * table of one seed a run.
 */
#define MAX_SEEDS	16
static uint64 seeds[MAX_SEEDS] = {0};
static int	nseeds = 1;
static uint64 run_seed = 0;

void
scenarios_set_seeds(const uint64 *list, int n)
{
	nseeds = Max(Min(n, MAX_SEEDS), 1);
	for (int i = 0; i < nseeds; i++)
		seeds[i] = n > 0 ? list[i] : 0;
}

/* each scenario cut at this many seconds (SIM_DURATION_S); 0: whole */
static double duration_cap_s = 0;

void
scenarios_set_duration(double s)
{
	duration_cap_s = s;
}

static double
scenario_duration(const Scenario *sc)
{
	return duration_cap_s > 0 ? Min(sc->duration_s, duration_cap_s) :
		sc->duration_s;
}

/* ---- one run ---- */

/* a change settles, counted in no window (SETTLE_S) */
static void
settle(Sim *sim)
{
	SimFigures	f;
	double		t = SETTLE_S;

	sim_run(sim, SETTLE_S * 1e9);
	while (sim_agent_busy(sim) && t < SETTLE_MAX_S)
	{
		sim_run(sim, 1e6);
		t += 1e-3;
	}
	sim_take_figures(sim, &f);
}

typedef struct WindowRow
{
	double		t;
	int			clients;
	int			locks;
	double		tps;
	double		share;
	double		backends;
	const char *reason;
} WindowRow;

typedef struct RunResult
{
	int			windows;
	double		window_s;
	double		tps;			/* mean over the windows counted */
	int			changes;
	int			last_change_window;
	int			final_locks;
	int			peak_locks;
	int			changes_first;	/* in the first START_S */
	int			checkpoints;	/* all-lock acquisitions begun */
	WindowRow	row[MAX_WINDOWS];
} RunResult;

/*
 * Run sc at cpus, with auto mode (fixed_locks 0) or a fixed count, for
 * nwindows windows of win_s seconds (0: the whole scenario), each model_s of
 * model time, after warm_s of model time at the first window's load.
 * A fixed count may run its first pre_windows windows, after the warm-up at
 * the fixed count, at pre_locks instead (0: none), to see how long the count
 * before weighs on it.  With compressed_checkpoints, a checkpoint's all-lock
 * acquisition comes every checkpoint_model_s(), from half of it into the
 * first window; without, every CHECKPOINT_S of model time.
 */
static void
run_one(const Scenario *sc, int cpus, int fixed_locks, double win_s,
		double model_s, int nwindows, double warm_s, int pre_locks,
		int pre_windows, bool compressed_checkpoints, RunResult *res)
{
	SimParams	p;
	Sim		   *sim;
	SimFigures	f;
	AutoRulesState state;
	int			max = walscale_rules_max_locks(cpus, STOCK_LOCKS, CORE_MAX_LOCKS);
	int			min = walscale_rules_min_locks(DBA_MIN_LOCKS, max);
	int			locks;
	double		s = model_s;
	double		scale = win_s / s;
	double		sum = 0;
	static uint64 lock_acq[SIM_MAX_LOCKS];

	if (nwindows <= 0)
		nwindows = (int) (scenario_duration(sc) / win_s);
	machine_params(&p, cpus, sc->max_clients);
	checkpoint_params(&p, CHECKPOINT_S);
	if (compressed_checkpoints)
	{
		p.checkpoint_locks_s = checkpoint_model_s(cpus);
		p.checkpoint_locks_first_s = warm_s + p.checkpoint_locks_s / 2;
	}
	sc->setup(&p);
	p.attempts = AUTO_ATTEMPTS;
	if (fixed_locks > 0)
		locks = fixed_locks;
	else
		locks = walscale_rules_begin(&state,
									 walscale_rules_start_locks(cpus, STOCK_LOCKS,
																CORE_MAX_LOCKS),
									 min, max);
	sim = sim_create(&p, sc->clients(0), locks,
					 (uint64_t) cpus * 7919 + (uint64_t) (sc - scenarios) * 131 +
					 run_seed * UINT64CONST(0x9E3779B97F4A7C15));

	if (warm_s > 0)
	{
		sim_run(sim, warm_s * 1e9);
		sim_take_figures(sim, &f);
	}
	/* the scenario's clock starts with the first window */
	sim_set_time_scale(sim, scale);
	memset(res, 0, sizeof(*res));
	res->peak_locks = locks;
	res->last_change_window = -1;
	for (int w = 0; w < nwindows && w < MAX_WINDOWS; w++)
	{
		WindowRow  *row = &res->row[w];
		AutoWindowFigures fig = {0};
		AutoVerdict verdict;

		if (fixed_locks > 0 && pre_windows > 0 &&
			(w == 0 || w == pre_windows))
		{
			/* each change settled outside any window, as auto mode's are */
			locks = w == 0 ? pre_locks : fixed_locks;
			sim_set_locks(sim, locks);
			settle(sim);
		}
		sim_set_clients(sim, sc->clients(w * win_s));
		sim_run(sim, s * 1e9);
		sim_take_figures(sim, &f);

		row->t = (w + 1) * win_s;
		row->clients = sc->clients(w * win_s);
		row->locks = locks;
		row->tps = f.acquisitions / (double) (p.records_per_txn + 1) / s;
		row->backends = f.active_backend_ns / f.elapsed_ns;
		row->share = row->backends > 0 ?
			f.blocked_ns / f.active_backend_ns : 0;
		sum += row->tps;

		if (fixed_locks > 0)
			continue;

		for (int i = 0; i < locks; i++)
			lock_acq[i] = (uint64) llround(f.lock_acquisitions[i] * scale);
		fig.acquisitions = (uint64) llround(f.acquisitions * scale);
		fig.blocking_waits = (uint64) llround(f.blocking_waits * scale);
		fig.blocked_ns = (uint64) llround(f.blocked_ns * scale);
		fig.lock_acquisitions = lock_acq;
		fig.active_locks = locks;
		fig.backends = row->backends;
		fig.window_s = win_s;
		fig.cpus = cpus;
		fig.min_locks = min;
		fig.max_locks = max;
		walscale_rules_decide(&fig, &state, &verdict);
		if (verdict.target != locks)
		{
			row->reason = verdict.reason;
			locks = verdict.target;
			sim_set_locks(sim, locks);
			/* let the change settle, outside any window (see SETTLE_S) */
			settle(sim);
			res->changes++;
			if ((w + 1) * win_s <= START_S)
				res->changes_first++;
			res->last_change_window = w;
			res->peak_locks = Max(res->peak_locks, locks);
		}
	}
	res->windows = Min(nwindows, MAX_WINDOWS);
	res->window_s = win_s;
	res->tps = sum / Max(res->windows, 1);
	res->final_locks = locks;
	res->checkpoints = sim_checkpoints(sim);
	sim_free(sim);
}

/*
 * Each window of auto mode's run as CSV: DIR/NAME-CPUS.csv for the model's
 * β and seed 0 (what plot.py and window_spread.py read), else
 * DIR/runs/NAME-CPUS-beta-B-seed-S.csv.
 */
static void
write_csv(const char *dir, const Scenario *sc, int cpus, double beta,
		  const RunResult *res, double best_tps, int best_locks)
{
	char		path[1024];
	FILE	   *f;

	if (beta == POS_BETA && run_seed == 0)
		snprintf(path, sizeof(path), "%s/%s-%d.csv", dir, sc->name, cpus);
	else
		snprintf(path, sizeof(path), "%s/runs/%s-%d-beta-%g-seed-%llu.csv",
				 dir, sc->name, cpus, beta, (unsigned long long) run_seed);
	f = fopen(path, "w");
	if (f == NULL)
	{
		perror(path);
		return;
	}
	fprintf(f, "# simulated: %s, %d CPUs, beta %g, seed %llu; best fixed %d locks at %.1f tps\n",
			sc->title, cpus, beta, (unsigned long long) run_seed, best_locks,
			best_tps);
	fprintf(f, "t_s,clients,locks,tps,blocked_share,backends,reason\n");
	for (int w = 0; w < res->windows; w++)
	{
		const WindowRow *r = &res->row[w];

		fprintf(f, "%.0f,%d,%d,%.2f,%.5f,%.1f,%s\n", r->t, r->clients,
				r->locks, r->tps, r->share, r->backends,
				r->reason ? r->reason : "");
	}
	fclose(f);
}

static int
phase_of(const Scenario *sc, double t)
{
	return sc->phase != NULL ? sc->phase(t) : 0;
}

#define MAX_SWEEP	16

/*
 * Run every scenario (or only the one named) at each of the CPU counts:
 * auto mode, then every fixed count, powers of two from the floor to the
 * maximum, over the whole scenario, with the model's β (SIM_POS_BETA): the
 * sweep once, with the first seed of scenarios_set_seeds(), auto mode once
 * per seed.  Writes one tab-separated line per auto mode's run to
 * out (sim/controller_table.py makes the table of them) and each window of
 * auto mode's run as CSV under dir.  Returns the number of runs that missed
 * a goal.
 *
 * The line: scenario, title, CPUs, β, seed, the sweep's seed, moving (1: judged per phase),
 * minutes, auto mode's tps, its ratio by its goal, its ratio to the best
 * fixed count, its share of windows at twice the phase's best count or
 * more, its changes, changes a day (START_S counted once), the count it
 * ended on, its peak, the checkpoints its run saw, the best fixed count and
 * its tps, the per-phase best's tps, the fewest checkpoints a fixed count's
 * run saw, whether every goal was met, then each fixed count as
 * COUNT:RATIO:OVER (its ratio by the scenario's goal, its share of windows
 * over), comma-separated.
 */
int
run_scenarios(FILE *out, const char *dir, const int *cpus, int ncpus,
			  const char *only)
{
	static RunResult autorun;
	static RunResult fixed;
	int			misses = 0;
	SimParams	bp;
	double		beta;

	machine_params(&bp, 16, 1);
	beta = bp.pos_beta;
	fprintf(out, "#scenario\ttitle\tcpus\tbeta\tseed\tsweep_seed\tmoving\tminutes\tjudged_from_minute\tauto_tps\tauto_ratio\tauto_ratio_fixed\tauto_over\tchanges\tchanges_day\tfinal\tpeak\tcheckpoints\tbest_locks\tbest_tps\tphase_best_tps\tsweep_checkpoints_min\tok\tfixed\n");
	for (int i = 0; i < (int) lengthof(scenarios); i++)
	{
		const Scenario *sc = &scenarios[i];

		if (only != NULL && strcmp(sc->name, only) != 0)
			continue;
		for (int c = 0; c < ncpus; c++)
		{
			int			n = cpus[c];
			int			max = walscale_rules_max_locks(n, STOCK_LOCKS, CORE_MAX_LOCKS);
			double		dur = scenario_duration(sc);
			double		best = 0;
			int			best_locks = 0;
			double		sweep[MAX_SWEEP];
			int			sweep_locks[MAX_SWEEP];
			double		sweep_over[MAX_SWEEP];
			double		phase_sum[MAX_SWEEP][MAX_PHASES];
			int			phase_n[MAX_PHASES] = {0};
			double		phase_best[MAX_PHASES] = {0};
			int			phase_best_hi[MAX_PHASES] = {0};
			double		phase_best_tps = 0;
			int			sweep_ckpt_min = PG_INT32_MAX;
			int			nsweep = 0;
			int			judged_sweep = 0;
			double		from_s = dur >= 2 * START_S ? START_S : 0;

			/* the fixed counts, with the first seed */
			run_seed = seeds[0];
			memset(phase_sum, 0, sizeof(phase_sum));
			for (int l = walscale_rules_min_locks(DBA_MIN_LOCKS, max);
				 l <= max && nsweep < MAX_SWEEP; l *= 2)
			{
				double		sum = 0;
				int			nw = 0;

				run_one(sc, n, l, sweep_window_s,
						sweep_window_model_s(n, dur), 0, WARM_S, 0, 0, true,
						&fixed);
				sweep_locks[nsweep] = l;
				sweep_ckpt_min = Min(sweep_ckpt_min, fixed.checkpoints);
				for (int w = 0; w < fixed.windows; w++)
				{
					int			ph = phase_of(sc, w * sweep_window_s);

					if (w * sweep_window_s < from_s)
						continue;
					phase_sum[nsweep][ph] += fixed.row[w].tps;
					sum += fixed.row[w].tps;
					nw++;
					if (nsweep == 0)
						phase_n[ph]++;
				}
				sweep[nsweep] = sum / Max(nw, 1);
				judged_sweep = nw;
				if (sweep[nsweep] > best)
				{
					best = sweep[nsweep];
					best_locks = l;
				}
				nsweep++;
			}

			/* each phase's best, and the largest count tied with it */
			for (int ph = 0; ph < MAX_PHASES; ph++)
			{
				if (phase_n[ph] == 0)
					continue;
				for (int k = 0; k < nsweep; k++)
					phase_best[ph] = Max(phase_best[ph],
										 phase_sum[k][ph] / phase_n[ph]);
				for (int k = 0; k < nsweep; k++)
					if (phase_sum[k][ph] / phase_n[ph] >= (1 - TIE) * phase_best[ph])
						phase_best_hi[ph] = sweep_locks[k];
				phase_best_tps += phase_best[ph] * phase_n[ph] /
					(double) Max(judged_sweep, 1);
			}
			/* each fixed count's windows over its phase's best */
			for (int k = 0; k < nsweep; k++)
			{
				int			o = 0;

				for (int ph = 0; ph < MAX_PHASES; ph++)
					if (phase_n[ph] > 0 && sweep_locks[k] >= 2 * phase_best_hi[ph])
						o += phase_n[ph];
				sweep_over[k] = o / (double) Max(judged_sweep, 1);
			}

			/* auto mode, once per seed */
			for (int si = 0; si < nseeds; si++)
			{
				int			over = 0;
				int			nw = 0;
				double		sum = 0;
				double		auto_tps;
				double		ratio;
				double		ratio_goal;
				double		over_share;
				double		per_day;
				bool		ok;
				char		list[1024] = "";

				run_seed = seeds[si];
				run_one(sc, n, 0, window_s, auto_window_model_s(n), 0, WARM_S,
						0, 0, true, &autorun);
				for (int w = 0; w < autorun.windows; w++)
				{
					if (w * window_s < from_s)
						continue;
					sum += autorun.row[w].tps;
					nw++;
					if (autorun.row[w].locks >=
						2 * phase_best_hi[phase_of(sc, w * window_s)])
						over++;
				}
				auto_tps = sum / Max(nw, 1);
				ratio = auto_tps / best;
				ratio_goal = sc->moving ? auto_tps / phase_best_tps : ratio;
				over_share = over / (double) Max(nw, 1);
				per_day = autorun.changes_first;
				if (dur > START_S)
					per_day += (autorun.changes - autorun.changes_first) *
						(86400.0 - START_S) / (dur - START_S);
				ok = ratio_goal >= (sc->moving ? MIN_PHASE_RATIO : MIN_RATIO) &&
					over_share <= MAX_OVER_SHARE &&
					per_day <= MAX_CHANGES_PER_DAY;
				if (!ok)
					misses++;
				for (int k = 0; k < nsweep; k++)
				{
					char		item[64];

					snprintf(item, sizeof(item), "%s%d:%.4f:%.4f",
							 k > 0 ? "," : "", sweep_locks[k],
							 sweep[k] / (sc->moving ? phase_best_tps : best),
							 sweep_over[k]);
					strlcat(list, item, sizeof(list));
				}
				fprintf(out, "%s\t%s\t%d\t%g\t%llu\t%llu\t%d\t%.0f\t%.0f\t%.1f\t%.4f\t%.4f\t%.4f\t%d\t%.0f\t%d\t%d\t%d\t%d\t%.1f\t%.1f\t%d\t%s\t%s\n",
						sc->name, sc->title, n, beta,
						(unsigned long long) run_seed,
						(unsigned long long) seeds[0], sc->moving ? 1 : 0,
						dur / 60.0, from_s / 60.0, auto_tps, ratio_goal, ratio,
						over_share, autorun.changes, per_day,
						autorun.final_locks, autorun.peak_locks,
						autorun.checkpoints, best_locks, best, phase_best_tps,
						sweep_ckpt_min, ok ? "yes" : "no", list);
				fflush(out);
				write_csv(dir, sc, n, beta, &autorun, best, best_locks);
			}
		}
	}
	return misses;
}

/* the scenarios' names, one a line */
void
list_scenarios(FILE *out)
{
	for (int i = 0; i < (int) lengthof(scenarios); i++)
		fprintf(out, "%s\n", scenarios[i].name);
}

/* the scenario of that name, or NULL */
static const Scenario *
find_scenario(const char *name)
{
	for (int i = 0; i < (int) lengthof(scenarios); i++)
		if (strcmp(scenarios[i].name, name) == 0)
			return &scenarios[i];
	return NULL;
}

/*
 * How long the model takes to settle after a change: scenario name at cpus
 * with a fixed count, from the start, and after pre_windows windows at
 * pre_locks; the mean tps of each block of BLOCK windows.  Returns 2 for an
 * unknown scenario.
 */
#define HISTORY_BLOCK	30

int
run_history(FILE *out, const char *name, int cpus, int pre_locks,
			int pre_windows, int locks)
{
	static RunResult direct;
	static RunResult after;
	const Scenario *sc = find_scenario(name);
	int			nwin;

	if (sc == NULL)
		return 2;
	nwin = (int) (scenario_duration(sc) / window_s);
	run_one(sc, cpus, locks, window_s, auto_window_model_s(cpus), 0, WARM_S,
			0, 0, false, &direct);
	run_one(sc, cpus, locks, window_s, auto_window_model_s(cpus), 0, WARM_S,
			pre_locks, pre_windows, false, &after);
	fprintf(out, "simulated: %s, %d CPUs, %d locks: mean tps per %d windows (%.0f s)\n",
			sc->title, cpus, locks, HISTORY_BLOCK, HISTORY_BLOCK * window_s);
	fprintf(out, "| windows | from the start | after %d windows at %d locks |\n",
			pre_windows, pre_locks);
	fprintf(out, "|---|---:|---:|\n");
	for (int b = 0; b * HISTORY_BLOCK < nwin; b++)
	{
		double		sd = 0;
		double		sa = 0;
		int			n = 0;

		for (int w = b * HISTORY_BLOCK; w < Min(nwin, (b + 1) * HISTORY_BLOCK); w++, n++)
		{
			sd += direct.row[w].tps;
			sa += after.row[w].tps;
		}
		fprintf(out, "| %d-%d | %.1f | %.1f |\n", b * HISTORY_BLOCK,
				b * HISTORY_BLOCK + n - 1, sd / n, sa / n);
	}
	fprintf(out, "| all | %.1f | %.1f |\n", direct.tps, after.tps);
	return 0;
}

/*
 * How noisy one compressed window is: scenario name at cpus with a fixed
 * count, nwindows windows after the warm-up, and the ratio of each window's
 * tps to the one before it.  That ratio is what a one-window trial of a
 * grow compares, so its spread at a fixed count is the noise a trial's
 * margin must clear.  Prints the window's model time, the mean and
 * standard deviation of the tps, the standard deviation of the log of the
 * ratio, and the share of pairs whose ratio is at or above 1 + margin (a
 * grow that did nothing would look like a gain); with print_windows, each
 * window's tps before them.  Returns 2 for an unknown scenario.
 */
int
run_spread(FILE *out, const char *name, int cpus, int locks, int nwindows,
		   double margin, bool print_windows)
{
	static RunResult run;
	const Scenario *sc = find_scenario(name);
	double		sum = 0;
	double		sum2 = 0;
	double		lsum = 0;
	double		lsum2 = 0;
	int			above = 0;
	int			n;
	double		mean;

	if (sc == NULL || nwindows < 3)
		return 2;
	run_one(sc, cpus, locks, window_s, auto_window_model_s(cpus), nwindows,
			WARM_S, 0, 0, false, &run);
	n = run.windows;
	for (int w = 0; w < n; w++)
	{
		if (print_windows)
			fprintf(out, "window %d: %.2f tps\n", w, run.row[w].tps);
		sum += run.row[w].tps;
		sum2 += run.row[w].tps * run.row[w].tps;
		if (w > 0)
		{
			double		l = log(run.row[w].tps / run.row[w - 1].tps);

			lsum += l;
			lsum2 += l * l;
			if (run.row[w].tps >= run.row[w - 1].tps * (1.0 + margin))
				above++;
		}
	}
	mean = sum / n;
	fprintf(out, "| %s | %d | %d | %.2f ms | %d | %.1f | %.2f%% | %.2f%% | %.0f%% |\n",
			sc->name, cpus, locks, auto_window_model_s(cpus) * 1e3, n, mean,
			100.0 * sqrt(Max(sum2 / n - mean * mean, 0)) / mean,
			100.0 * sqrt(Max(lsum2 / (n - 1) - (lsum / (n - 1)) * (lsum / (n - 1)), 0)),
			100.0 * above / (n - 1));
	return 0;
}
