/*-------------------------------------------------------------------------
 *
 * calibrate.c
 *		Fit the two fitted parameters to two anchors of Sokolov's table, and
 *		check the model, without refitting, against what was published in
 *		four regimes; score a trivial model against the same checks.
 *
 * Sokolov's measurements: "Increase NUM_XLOGINSERT_LOCKS", Yura Sokolov,
 * pgsql-hackers, January 2025; an 8-core, 16-thread Ryzen 5825U held at
 * 2 GHz, fsync, synchronous_commit and full_page_writes off, wal_buffers
 * 1GB, pgbench -M prepared, each transaction inserting 1001 rows into a
 * table with one index and deleting them; min/avg/max of three runs of
 * 20 s.  Greg Smith's: "Fixed xloginsert_locks for 9.4", pgsql-hackers,
 * 2014, a 24-core server, at most as many clients as cores.  Intel's:
 * "[RFC] Enhance scalability of TPCC performance on HCC (high-core-count)
 * systems", Zhiguo Zhou, pgsql-hackers, July 2025, a 384-vCPU server,
 * HammerDB TPROC-C with 192 virtual users.  Measured by this project
 * (bench/results/2026-12-04-device16-sweep): a 16-vCPU Xeon, Sokolov's
 * transaction and settings, 32 clients, 8-s runs in 5 interleaved rounds.
 *
 * A check passes when the simulated value lies in its published range.
 * Sokolov gives min and max: a level's range is theirs, widened by 5% for
 * the model's own noise; an effect (the ratio of two configurations) runs
 * from the lowest min over the highest max to the highest max over the
 * lowest min, widened by 2%.  Greg Smith gives single runs: his ratios get
 * 10%, about the spread of his own repeats (56.7 to 60.9 tps).  Intel gives
 * directions and one figure (17.4% CPU): directions pass or fail, the
 * figure gets a factor of two.  The 16-vCPU sweep gives each round's
 * paired ratio: an effect's range is their min and max widened by 2%, a
 * blocked share's range the rounds' min and max widened by 5%.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "params.h"

#define lengthof_(a) (sizeof(a) / sizeof((a)[0]))

#define SOKOLOV_CPUS	16		/* hardware threads */
#define WARM_S			0.3
#define MEASURE_S		1.5
#define LEVEL_SLACK		0.05
#define EFFECT_SLACK	0.02
#define SINGLE_RUN_SLACK 0.10

/* what one run of a fixed configuration measured */
typedef struct Point
{
	double		tps;
	double		cpu_busy;		/* share of CPU time not idle */
	double		pos_share;		/* of insertion-lock holds, on insertpos_lck */
	double		blocked_share;	/* of active backends' time, asleep on an
								 * insertion lock */
} Point;

static Point
run_point(const SimParams *p, int clients, int locks, int attempts,
		  uint64_t seed, double warm_s, double measure_s)
{
	Sim		   *sim = sim_create(p, clients, locks, seed);
	SimFigures	f;
	Point		pt;

	sim_set_attempts(sim, attempts);
	sim_run(sim, warm_s * 1e9);
	sim_take_figures(sim, &f);
	sim_run(sim, measure_s * 1e9);
	sim_take_figures(sim, &f);
	sim_free(sim);

	/*
	 * Transactions per second counted as the records inserted divided by
	 * those of a transaction: a count of whole transactions in a short run is
	 * lumpy when they are long.
	 */
	pt.tps = f.acquisitions / (double) (p->records_per_txn + 1) /
		(f.elapsed_ns / 1e9);
	pt.cpu_busy = 1 - f.idle_cpu_ns / (p->cpus * f.elapsed_ns);
	pt.pos_share = (f.spin_ns + f.pos_sleep_ns) / Max(f.hold_ns, 1);
	pt.blocked_share = f.blocked_ns / Max(f.active_backend_ns, 1);
	return pt;
}

double
steady_tps(const SimParams *p, int clients, int locks, int attempts,
		   uint64_t seed, double warm_s, double measure_s)
{
	return run_point(p, clients, locks, attempts, seed, warm_s,
					 measure_s).tps;
}

/*
 * One fixed configuration, with the figures behind its throughput: printed
 * by "walscale_sim probe" to see what the model does at a point.
 */
void
calibrate_probe(FILE *out, int cpus, int clients, int locks, int attempts,
				bool lock_free, double measure_s)
{
	SimParams	p;
	Sim		   *sim;
	SimFigures	f;
	double		cpu_ns;

	machine_params(&p, cpus, clients);
	p.pos_lock_free = lock_free;
	sim = sim_create(&p, clients, locks, 1000 + clients + locks);
	sim_set_attempts(sim, attempts);
	sim_run(sim, WARM_S * 1e9);
	sim_take_figures(sim, &f);
	sim_run(sim, measure_s * 1e9);
	sim_take_figures(sim, &f);
	sim_free(sim);
	cpu_ns = cpus * f.elapsed_ns;
	fprintf(out, "simulated: cpus %d clients %d locks %d attempts %d%s: %.1f tps, "
			"cpu busy %.1f%%, spinning %.1f%% of cpu, insertpos_lck sleeps %.0f/s "
			"(%.2f backends asleep there), insertion-lock sleep share %.3f, "
			"active %.1f, reservations contended %.1f%%\n",
			cpus, clients, locks, attempts, lock_free ? " lock-free" : "",
			f.acquisitions / (double) (p.records_per_txn + 1) / (f.elapsed_ns / 1e9),
			100.0 * (1 - f.idle_cpu_ns / cpu_ns),
			100.0 * f.spin_ns / cpu_ns,
			f.pos_sleeps / (f.elapsed_ns / 1e9),
			f.pos_sleep_ns / f.elapsed_ns,
			f.blocked_ns / Max(f.active_backend_ns, 1),
			f.active_backend_ns / f.elapsed_ns,
			100.0 * f.pos_contended / Max(f.acquisitions, 1));
}

/*
 * Run until the agent's job is done (at most 5 s of model time): its
 * duration, from its start to its last release, and the rate of insertion
 * while it ran over the rate before.
 */
static void
run_job(Sim *sim, double base_rate, double *ms, double *rate_share)
{
	SimFigures	f;
	double		t = 0;
	double		job_ns;

	while (sim_agent_busy(sim) && t < 5.0)
	{
		sim_run(sim, 1e5);
		t += 1e-4;
	}
	sim_take_figures(sim, &f);
	job_ns = f.all_lock_runs > 0 ? f.all_lock_ns / f.all_lock_runs :
		f.each_lock_runs > 0 ? f.each_lock_ns / f.each_lock_runs : f.elapsed_ns;
	*ms = job_ns / 1e6;
	*rate_share = f.acquisitions / (f.elapsed_ns / 1e9) / base_rate;
}

#define COST_REPEATS	3

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return x < y ? -1 : x > y;
}

/*
 * A steady stretch of Sokolov's load with synchronous_commit on, after the
 * warm-up: its insertion rate, and its flushes' visit of the locks, per
 * commit in ns and in locks per visit.
 */
static Sim *
costs_steady(int cpus, int clients, int locks, bool visit_all, double *rate,
			 double *visit_ns, double *visited)
{
	SimParams	p;
	Sim		   *sim;
	SimFigures	f;

	machine_params(&p, cpus, clients);
	p.sync_commit = true;
	p.flush_visits_all = visit_all;
	sim = sim_create(&p, clients, locks, 77 + cpus + locks);
	sim_run(sim, WARM_S * 1e9);
	sim_take_figures(sim, &f);
	sim_run(sim, 0.2e9);
	sim_take_figures(sim, &f);
	*rate = f.acquisitions / (f.elapsed_ns / 1e9);
	*visit_ns = f.visit_ns / Max(f.transactions, 1);
	*visited = f.visited_locks / (double) Max(f.visits, 1);
	return sim;
}

/*
 * What the processes that take every lock cost at each CPU count and
 * number, under Sokolov's load with synchronous_commit on: one at a time
 * after a steady stretch, each run to its end, its duration and the
 * insertion rate meanwhile, the median of three (a resize halves the
 * number, then doubles it back); GetLastImportantRecPtr() lock-free, as
 * patch 0005 makes it on platforms with 8-byte single-copy atomicity, and
 * taking each lock, as elsewhere; and a flush's visit of the locks per
 * commit, of the groups marked as patch 0006 has it, and of every lock, in
 * a second run of the same seed.
 */
void
calibrate_costs(FILE *out)
{
	static const int cpus[] = {16, 96, 480};
	static const int locks[] = {8, 64, 256, 1024};

	/* and last, one inserter at the most locks: a flush's best case */
	const int	ncosts = (int) (lengthof_(cpus) * lengthof_(locks)) + 1;

	fprintf(out, "Each job: its time from start to last release, the median of three, in ms, and in brackets the insertion rate while it ran over the rate before; GetLastImportantRecPtr() without locks: its time in us, and no rate, since it holds up no inserter. A flush's visit of the locks: per commit in us, and in brackets the locks visited per flush; of the lock groups marked in the open or the last closed epoch, and of every active lock, each in its own run. Simulated.\n\n");
	fprintf(out, "| CPUs | clients | locks | checkpoint's all-lock acquisition, ms | GetLastImportantRecPtr() without locks, us | GetLastImportantRecPtr() taking each lock, ms | resize to half, ms | a flush's visit: lock groups, us (locks) | a flush's visit: every lock, us (locks) |\n");
	fprintf(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
	for (int i = 0; i < ncosts; i++)
	{
		bool		single = i == ncosts - 1;
		int			ncpus = single ? 16 : cpus[i / lengthof_(locks)];
		int			nlocks = single ? 1024 : locks[i % lengthof_(locks)];
		int			clients = single ? 1 : ncpus == 16 ? 200 : 2000;
		Sim		   *sim;
		SimFigures	f;
		double		rate,
					visit,
					visited,
					visit_all,
					visited_all,
					ms[4][COST_REPEATS],
					share[4][COST_REPEATS];

		sim = costs_steady(ncpus, clients, nlocks, true, &rate,
						   &visit_all, &visited_all);
		sim_free(sim);
		sim = costs_steady(ncpus, clients, nlocks, false, &rate,
						   &visit, &visited);
		for (int k = 0; k < COST_REPEATS; k++)
		{
			/*
			 * First the call without locks, which takes the lines as the
			 * inserters left them, not just after an all-lock job read them
			 * all
			 */
			sim_get_last_important(sim, false);
			run_job(sim, rate, &ms[1][k], &share[1][k]);
			sim_take_all_locks(sim);
			run_job(sim, rate, &ms[0][k], &share[0][k]);
			sim_get_last_important(sim, true);
			run_job(sim, rate, &ms[2][k], &share[2][k]);
			sim_set_locks(sim, k % 2 == 0 ? Max(nlocks / 2, 1) : nlocks);
			run_job(sim, rate, &ms[3][k], &share[3][k]);
			/* a steady stretch between */
			sim_run(sim, 0.05e9);
			sim_take_figures(sim, &f);
		}
		for (int j = 0; j < 4; j++)
		{
			qsort(ms[j], COST_REPEATS, sizeof(double), cmp_double);
			qsort(share[j], COST_REPEATS, sizeof(double), cmp_double);
		}
		sim_free(sim);
		fprintf(out, "| %d | %d | %d | %.2f (%.2f) | %.2f | %.2f (%.2f) | %.2f (%.2f) | %.2f (%.0f) | %.2f (%.0f) |\n",
				ncpus, clients, nlocks, ms[0][1], share[0][1],
				ms[1][1] * 1e3, ms[2][1], share[2][1],
				ms[3][1], share[3][1], visit / 1e3, visited,
				visit_all / 1e3, visited_all);
		fflush(out);
	}
}

static double
sokolov_tps(int clients, int locks, int attempts)
{
	SimParams	p;

	machine_params(&p, SOKOLOV_CPUS, clients);
	return steady_tps(&p, clients, locks, attempts, 1000 + clients + locks,
					  WARM_S, MEASURE_S);
}

/*
 * Newton's method on the three anchors, 8, 64 and 128 locks at 200
 * clients, with differences of 3% (10% for the queueing): 8 locks depends
 * mostly on the hold, 64 locks on the CPU and the queueing, 128 locks
 * mostly on the CPU.  The model's runs are short and wander by 1 to 2%
 * near the answer, so each step is damped, the fit stops within 1% of
 * every anchor, and it ends on the iteration nearest all three.
 */
void
calibrate_fit(FILE *out)
{
	const double anchor[3] = {421, 591, 665};
	const int	locks[3] = {8, 64, 128};
	double	   *param[3] = {&fit_executor_insns, &fit_hold_misses,
	&fit_wake_ahead_ms};
	const double step[3] = {0.03, 0.03, 0.10};
	const double limit[3] = {0.3, 0.5, 0.5};
	double		best[3] = {fit_executor_insns, fit_hold_misses, fit_wake_ahead_ms};
	double		best_worst = INFINITY;

	for (int it = 0; it < 15; it++)
	{
		double		x0[3],
					f0[3],
					e[3],
					J[3][3],
					dx[3],
					det,
					worst = 0;

		for (int i = 0; i < 3; i++)
			x0[i] = *param[i];
		for (int k = 0; k < 3; k++)
		{
			f0[k] = sokolov_tps(200, locks[k], 0);
			e[k] = anchor[k] - f0[k];
			worst = Max(worst, fabs(e[k]) / anchor[k]);
		}
		fprintf(out, "fit %d: executor %.0f insns, hold %.2f misses, wake ahead %.1f ms: 8 locks %.1f, 64 locks %.1f, 128 locks %.1f tps (simulated)\n",
				it, x0[0], x0[1], x0[2], f0[0], f0[1], f0[2]);
		if (worst < best_worst)
		{
			best_worst = worst;
			memcpy(best, x0, sizeof(best));
		}
		if (worst < 0.01)
			break;
		for (int i = 0; i < 3; i++)
		{
			*param[i] = x0[i] * (1 + step[i]);
			for (int k = 0; k < 3; k++)
				J[k][i] = (sokolov_tps(200, locks[k], 0) - f0[k]) /
					(x0[i] * step[i]);
			*param[i] = x0[i];
		}
		/* Cramer's rule */
		det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
			J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
			J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
		if (det == 0)
			break;
		for (int i = 0; i < 3; i++)
		{
			double		M[3][3];
			double		d;

			memcpy(M, J, sizeof(M));
			for (int k = 0; k < 3; k++)
				M[k][i] = e[k];
			d = M[0][0] * (M[1][1] * M[2][2] - M[1][2] * M[2][1]) -
				M[0][1] * (M[1][0] * M[2][2] - M[1][2] * M[2][0]) +
				M[0][2] * (M[1][0] * M[2][1] - M[1][1] * M[2][0]);
			dx[i] = d / det;
			dx[i] = Max(Min(dx[i], x0[i] * limit[i]), -x0[i] * limit[i]);
		}
		for (int i = 0; i < 3; i++)
			*param[i] = x0[i] + 0.7 * dx[i];
	}
	for (int i = 0; i < 3; i++)
		*param[i] = best[i];
	fprintf(out, "fitted, within %.1f%% of every anchor (for sim/params.c): fit_executor_insns = %.0f; fit_hold_misses = %.2f; fit_wake_ahead_ms = %.1f\n",
			best_worst * 100, fit_executor_insns, fit_hold_misses,
			fit_wake_ahead_ms);
}

/* ---- the published figures ---- */

typedef struct SokolovRow
{
	int			clients;
	int			locks;
	int			attempt;		/* as in the mail */
	double		min,
				avg,
				max;
	bool		anchor;
} SokolovRow;

static const SokolovRow sokolov[] = {
	{200, 8, 0, 420, 421, 427, true},
	{400, 8, 0, 428, 443, 444},
	{200, 64, 0, 576, 591, 599, true},
	{400, 64, 0, 552, 575, 578},
	{200, 64, 1, 648, 680, 687},
	{400, 64, 1, 616, 640, 667},
	{200, 64, 2, 676, 696, 712},
	{400, 64, 2, 625, 654, 667},
	{200, 128, 0, 651, 665, 685, true},
	{400, 128, 0, 620, 651, 666},
	{200, 128, 1, 676, 678, 689},
	{400, 128, 1, 628, 652, 676},
	{200, 128, 2, 636, 675, 695},
	{400, 128, 2, 618, 658, 672},
	{200, 256, 0, 672, 678, 716},
	{400, 256, 0, 625, 658, 674},
	{200, 256, 1, 673, 687, 702},
	{400, 256, 1, 624, 657, 669},
	{200, 256, 2, 664, 695, 697},
	{400, 256, 2, 622, 648, 672},
};

#define NSOKOLOV ((int) lengthof_(sokolov))

/* effects: the ratio of row a to row b (indexes into sokolov[]) */
typedef struct Effect
{
	int			a,
				b;
	const char *what;
} Effect;

static const Effect effects[] = {
	{2, 0, "64 locks / 8, 200 clients"},
	{8, 2, "128 locks / 64, 200 clients"},
	{14, 8, "256 locks / 128, 200 clients"},
	{4, 2, "64 locks: attempt=1 / none, 200 clients"},
	{6, 4, "64 locks: attempt=2 / attempt=1, 200 clients"},
	{10, 8, "128 locks: attempt=1 / none, 200 clients"},
	{18, 14, "256 locks: attempt=2 / none, 200 clients"},
	{1, 0, "8 locks: 400 clients / 200"},
	{3, 2, "64 locks: 400 clients / 200"},
	{9, 8, "128 locks: 400 clients / 200"},
	{3, 1, "64 locks / 8, 400 clients"},
	{9, 3, "128 locks / 64, 400 clients"},
	{15, 9, "256 locks / 128, 400 clients"},
	{5, 3, "64 locks: attempt=1 / none, 400 clients"},
};

#define NEFFECTS ((int) lengthof_(effects))

/*
 * The trivial model the validation must reject: 421 tps at 8 locks, 640 at
 * any other count, whatever the clients, attempts, CPUs or reservation.
 */
static double
trivial_tps(int locks)
{
	return locks == 8 ? 421.0 : 640.0;
}

/* ---- the table ---- */

typedef struct Tally
{
	int			checks;
	int			passed;
	int			trivial_passed;
} Tally;

static void
check_row(FILE *out, Tally *t, const char *regime, const char *what,
		  const char *kind, const char *published, double lo, double hi,
		  double simulated, double trivial, const char *fmt)
{
	bool		pass = simulated >= lo && simulated <= hi;
	bool		tpass = !isnan(trivial) && trivial >= lo && trivial <= hi;
	char		sim_s[32],
				lo_s[32],
				hi_s[32],
				triv_s[32];

	snprintf(sim_s, sizeof(sim_s), fmt, simulated);
	snprintf(lo_s, sizeof(lo_s), fmt, lo);
	snprintf(hi_s, sizeof(hi_s), fmt, hi);
	if (isnan(trivial))
		snprintf(triv_s, sizeof(triv_s), "none");
	else
		snprintf(triv_s, sizeof(triv_s), fmt, trivial);
	fprintf(out, "| %s | %s | %s | %s | %s..%s | %s | %s | %s |\n",
			regime, what, kind, published,
			isinf(lo) ? "" : lo_s, isinf(hi) ? "" : hi_s,
			sim_s, pass ? "yes" : "**no**", triv_s);
	if (strcmp(kind, "anchor (fitted)") == 0)
		return;
	t->checks++;
	t->passed += pass;
	t->trivial_passed += tpass;
}

static void
tally_line(FILE *out, const char *what, const Tally *t)
{
	fprintf(out, "| %s | %d | %d | %d |\n", what, t->checks, t->passed,
			t->trivial_passed);
}

/* the rule of acceptance, for this model or the trivial one */
static bool
accepted(const Tally *changes, const Tally *nulls, const Tally *predictions,
		 bool trivial)
{
	int			c = trivial ? changes->trivial_passed : changes->passed;
	int			n = trivial ? nulls->trivial_passed : nulls->passed;
	int			p = trivial ? predictions->trivial_passed : predictions->passed;

	return 5 * c >= 4 * changes->checks && 5 * n >= 4 * nulls->checks &&
		2 * p >= predictions->checks;
}

int
calibrate_validate(FILE *out, double *worst_error)
{
	double		sim_tps[NSOKOLOV];
	Tally		levels = {0},
				effs = {0},
				nulls = {0},
				greg = {0},
				intel = {0};
	Tally		measured = {0},
				predictions = {0};
	SimParams	p;
	int			misses;
	char		pub[64];

	*worst_error = 0;
	for (int i = 0; i < NSOKOLOV; i++)
	{
		const SokolovRow *r = &sokolov[i];

		sim_tps[i] = sokolov_tps(r->clients, r->locks,
								 r->attempt > 0 ? r->attempt + SOKOLOV_ATTEMPTS_OFFSET : 0);
		if (!r->anchor)
			*worst_error = Max(*worst_error, fabs(sim_tps[i] / r->avg - 1));
	}

	fprintf(out, "Fitted: executor CPU %.0f instructions per record (plus the measured %.0f of the record itself); a record's hold of its insertion lock %.0f instructions and %.2f cache-line transfers (at %.1f ns an instruction); a waking backend queued %.1f ms ahead of those already runnable.\n\n",
			fit_executor_insns, INSNS_PER_RECORD, HOLD_INSNS, fit_hold_misses,
			NS_PER_INSN, fit_wake_ahead_ms);
	fprintf(out, "| regime | check | kind | published | range | simulated | in range | trivial model |\n");
	fprintf(out, "|---|---|---|---|---|---:|---|---:|\n");

	/* Sokolov's levels */
	for (int i = 0; i < NSOKOLOV; i++)
	{
		const SokolovRow *r = &sokolov[i];
		char		what[128];

		snprintf(what, sizeof(what), "%d clients, %d locks%s, tps",
				 r->clients, r->locks,
				 r->attempt == 1 ? " + attempt=1" :
				 r->attempt == 2 ? " + attempt=2" : "");
		snprintf(pub, sizeof(pub), "%.0f/%.0f/%.0f", r->min, r->avg, r->max);
		check_row(out, &levels, "Sokolov, 16 threads", what,
				  r->anchor ? "anchor (fitted)" : "in regime", pub,
				  r->min * (1 - LEVEL_SLACK), r->max * (1 + LEVEL_SLACK),
				  sim_tps[i], r->attempt > 0 ? 640.0 : trivial_tps(r->locks),
				  "%.0f");
	}
	/* Sokolov's effects */
	for (int e = 0; e < NEFFECTS; e++)
	{
		const SokolovRow *a = &sokolov[effects[e].a];
		const SokolovRow *b = &sokolov[effects[e].b];
		double		ta = a->attempt > 0 ? 640.0 : trivial_tps(a->locks);
		double		tb = b->attempt > 0 ? 640.0 : trivial_tps(b->locks);
		bool		fitted = a->anchor && b->anchor;
		double		lo = a->min / b->max * (1 - EFFECT_SLACK);
		double		hi = a->max / b->min * (1 + EFFECT_SLACK);
		bool		change = lo > 1 || hi < 1;

		snprintf(pub, sizeof(pub), "%.3f", a->avg / b->avg);
		check_row(out, change ? &effs : &nulls, "Sokolov, 16 threads",
				  effects[e].what,
				  fitted ? "anchor (fitted)" : change ? "in regime: a change" :
				  "in regime: no change", pub, lo, hi,
				  sim_tps[effects[e].a] / sim_tps[effects[e].b], ta / tb,
				  "%.3f");
	}

	/*
	 * Greg Smith: clients no more than cores.  His workload ("the 4 client
	 * test case Heikki provided") is not in his mail: Sokolov's transaction
	 * stands in for it.
	 */
	{
		double		t1,
					t8,
					t24,
					t8c4;

		machine_params(&p, 24, 24);
		t1 = steady_tps(&p, 24, 1, 0, 2401, WARM_S, MEASURE_S);
		t8 = steady_tps(&p, 24, 8, 0, 2408, WARM_S, MEASURE_S);
		t24 = steady_tps(&p, 24, 24, 0, 2424, WARM_S, MEASURE_S);
		machine_params(&p, 24, 4);
		t8c4 = steady_tps(&p, 4, 8, 0, 2404, WARM_S, MEASURE_S);
		check_row(out, &greg, "Greg Smith, 24 cores, clients <= cores",
				  "24 clients: 8 locks / 1 (57-60 / 25.4)", "prediction",
				  "2.30", 57.0 / 25.4 * (1 - SINGLE_RUN_SLACK),
				  60.0 / 25.4 * (1 + SINGLE_RUN_SLACK), t8 / t1,
				  trivial_tps(8) / trivial_tps(1), "%.2f");
		check_row(out, &greg, "Greg Smith, 24 cores, clients <= cores",
				  "24 clients: 24 locks / 8 (66.8 / 57-60)", "prediction",
				  "1.14", 66.8 / 60.0 * (1 - SINGLE_RUN_SLACK),
				  66.8 / 57.0 * (1 + SINGLE_RUN_SLACK), t24 / t8,
				  trivial_tps(24) / trivial_tps(8), "%.2f");
		check_row(out, &greg, "Greg Smith, 24 cores, clients <= cores",
				  "8 locks: 24 clients / 4 (56.7 / 60.9)", "prediction",
				  "0.93", 56.7 / 60.9 * (1 - SINGLE_RUN_SLACK),
				  56.7 / 60.9 * (1 + SINGLE_RUN_SLACK), t8 / t8c4, 1.0,
				  "%.2f");
	}

	/*
	 * Intel: 192 clients, as its 192 virtual users.  Its workload is
	 * HammerDB's TPROC-C; Sokolov's transaction stands in for it.
	 */
	{
		Point		c96,
					c384,
					l128,
					free8,
					free128;

		machine_params(&p, 96, 192);
		c96 = run_point(&p, 192, 8, 0, 9608, WARM_S, MEASURE_S);
		machine_params(&p, 384, 192);
		c384 = run_point(&p, 192, 8, 0, 38408, WARM_S, MEASURE_S);
		l128 = run_point(&p, 192, 128, 0, 38428, WARM_S, MEASURE_S);
		p.pos_lock_free = true;
		free8 = run_point(&p, 192, 8, 0, 38408, WARM_S, MEASURE_S);
		free128 = run_point(&p, 192, 128, 0, 38428, WARM_S, MEASURE_S);

		check_row(out, &intel, "Intel, 384 vCPUs, 192 clients",
				  "8 locks: tps at 384 CPUs / at 96 (fell as cores were added)",
				  "prediction", "< 1", -INFINITY, 0.999, c384.tps / c96.tps,
				  1.0, "%.3f");
		check_row(out, &intel, "Intel, 384 vCPUs, 192 clients",
				  "8 locks: CPU busy (17.4%)", "prediction", "0.174",
				  0.174 / 2, 0.174 * 2, c384.cpu_busy, NAN, "%.3f");
		check_row(out, &intel, "Intel, 384 vCPUs, 192 clients",
				  "128 locks / 8 (more locks relieve the first bottleneck)",
				  "prediction", "> 1", 1.001, INFINITY, l128.tps / c384.tps,
				  trivial_tps(128) / trivial_tps(8), "%.3f");
		check_row(out, &intel, "Intel, 384 vCPUs, 192 clients",
				  "128 locks: share of insertion-lock holds spent on insertpos_lck (it is next)",
				  "prediction", "> 0.5", 0.5, 1.0, l128.pos_share, NAN, "%.3f");
		check_row(out, &intel, "Intel, 384 vCPUs, 192 clients",
				  "lock-free reservation's gain at 128 locks / at 8",
				  "prediction", "> 1", 1.001, INFINITY,
				  (free128.tps / l128.tps) / (free8.tps / c384.tps), 1.0,
				  "%.3f");
	}

	/*
	 * This project's sweep of a 16-vCPU machine: Sokolov's transaction and
	 * settings, 2 clients per CPU, so outside the fitted regime (12 to 25
	 * clients per hardware thread).  Levels are another machine's, so only
	 * ratios and shares are checked.  The blocked share is the time clients
	 * slept on an insertion lock over their time, the model's over its active
	 * backends' (31.7 to 31.9 of 32).
	 */
	{
		static const char *const regime = "measured, 16 vCPUs, 32 clients";
		Point		m8,
					m16,
					m32,
					m128;
		double		b8,
					b16,
					b32;

		machine_params(&p, 16, 32);
		m8 = run_point(&p, 32, 8, 0, 1608, WARM_S, MEASURE_S);
		b8 = m8.blocked_share;
		m16 = run_point(&p, 32, 16, 0, 1616, WARM_S, MEASURE_S);
		b16 = m16.blocked_share;
		m32 = run_point(&p, 32, 32, 0, 1632, WARM_S, MEASURE_S);
		b32 = m32.blocked_share;
		m128 = run_point(&p, 32, 128, 0, 16128, WARM_S, MEASURE_S);

		check_row(out, &measured, regime, "16 locks / 8", "prediction",
				  "1.105", 0.997 * (1 - EFFECT_SLACK), 1.148 * (1 + EFFECT_SLACK),
				  m16.tps / m8.tps, trivial_tps(16) / trivial_tps(8), "%.3f");
		check_row(out, &measured, regime, "32 locks / 8", "prediction",
				  "1.102", 1.043 * (1 - EFFECT_SLACK), 1.124 * (1 + EFFECT_SLACK),
				  m32.tps / m8.tps, trivial_tps(32) / trivial_tps(8), "%.3f");
		check_row(out, &measured, regime, "128 locks / 32 (no change past the knee)",
				  "prediction", "1.018", 0.956 * (1 - EFFECT_SLACK),
				  1.086 * (1 + EFFECT_SLACK), m128.tps / m32.tps,
				  trivial_tps(128) / trivial_tps(32), "%.3f");
		check_row(out, &measured, regime, "8 locks: client time asleep on an insertion lock",
				  "prediction", "0.661", 0.658 * (1 - LEVEL_SLACK),
				  0.663 * (1 + LEVEL_SLACK), b8, NAN, "%.3f");
		check_row(out, &measured, regime, "16 locks: client time asleep on an insertion lock",
				  "prediction", "0.556", 0.548 * (1 - LEVEL_SLACK),
				  0.562 * (1 + LEVEL_SLACK), b16, NAN, "%.3f");
		check_row(out, &measured, regime, "32 locks: client time asleep on an insertion lock",
				  "prediction", "0.000", 0, 0.01, b32, NAN, "%.3f");
	}

	fprintf(out, "\n| checks | number | the model passes | the trivial model passes |\n");
	fprintf(out, "|---|---:|---:|---:|\n");
	tally_line(out, "Sokolov's levels, in the fitted regime", &levels);
	tally_line(out, "Sokolov's changes (ratios whose range excludes 1), in the fitted regime", &effs);
	tally_line(out, "Sokolov's non-changes (ratios whose range includes 1), in the fitted regime", &nulls);
	tally_line(out, "Greg Smith, predictions", &greg);
	tally_line(out, "Intel, predictions", &intel);
	tally_line(out, "Measured on 16 vCPUs, predictions", &measured);
	predictions.checks = greg.checks + intel.checks + measured.checks;
	predictions.passed = greg.passed + intel.passed + measured.passed;
	predictions.trivial_passed = greg.trivial_passed + intel.trivial_passed +
		measured.trivial_passed;
	misses = (levels.checks - levels.passed) + (effs.checks - effs.passed) +
		(nulls.checks - nulls.passed) +
		(greg.checks - greg.passed) + (intel.checks - intel.passed) +
		(measured.checks - measured.passed);
	fprintf(out, "\nAll figures simulated except the published and measured ones. The trivial model is 421 tps at 8 locks and 640 at any other count, whatever else; \"none\" where it says nothing. A model is accepted when it reproduces at least four in five of Sokolov's changes and of his non-changes, and at least half of the predictions: this model %s, the trivial model %s.\n",
			accepted(&effs, &nulls, &predictions, false) ?
			"is accepted" : "is **not** accepted",
			accepted(&effs, &nulls, &predictions, true) ?
			"is accepted" : "is rejected");
	fprintf(out, "\nSummary: %d checks, the model passes %d, the trivial model %d; predictions %d, reproduced %d; the model %s, the trivial model %s.\n",
			levels.checks + effs.checks + nulls.checks + predictions.checks,
			levels.passed + effs.passed + nulls.passed + predictions.passed,
			levels.trivial_passed + effs.trivial_passed + nulls.trivial_passed +
			predictions.trivial_passed,
			predictions.checks, predictions.passed,
			accepted(&effs, &nulls, &predictions, false) ? "accepted" : "not accepted",
			accepted(&effs, &nulls, &predictions, true) ? "accepted" : "rejected");
	return misses;
}
