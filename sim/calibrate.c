/*-------------------------------------------------------------------------
 *
 * calibrate.c
 *		Fit the two fitted parameters to two anchors of Sokolov's table, and
 *		predict the rest of it, and Greg Smith's ratios, without refitting.
 *
 * Sokolov's measurements: "Increase NUM_XLOGINSERT_LOCKS", Yura Sokolov,
 * pgsql-hackers, January 2025; an 8-core, 16-thread Ryzen 5825U held at
 * 2 GHz, fsync, synchronous_commit and full_page_writes off, wal_buffers
 * 1GB, pgbench -M prepared, each transaction inserting 1001 rows into a
 * table with one index and deleting them; averages of three runs.  Greg
 * Smith's: "Fixed xloginsert_locks for 9.4", pgsql-hackers, 2014, 24 cores,
 * 24 clients.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>

#include "calibrate.h"
#include "params.h"

#define SOKOLOV_CPUS	16		/* hardware threads */
#define WARM_S			0.3
#define MEASURE_S		1.5
#define TARGET_ERROR	0.15

/*
 * Transactions per second over measure_s after warm_s, counted as the
 * records inserted divided by those of a transaction: a count of whole
 * transactions in a short run is lumpy when they are long.
 */
double
steady_tps(const SimParams *p, int clients, int locks, int attempts,
		   uint64_t seed, double warm_s, double measure_s)
{
	Sim		   *sim = sim_create(p, clients, locks, seed);
	SimFigures	f;

	sim_set_attempts(sim, attempts);
	sim_run(sim, warm_s * 1e9);
	sim_take_figures(sim, &f);
	sim_run(sim, measure_s * 1e9);
	sim_take_figures(sim, &f);
	sim_free(sim);
	return f.acquisitions / (double) (p->records_per_txn + 1) /
		(f.elapsed_ns / 1e9);
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
 * Newton's method on the two anchors, with differences of 3%: 8 locks at
 * 200 clients depends mostly on the hold, 64 locks mostly on the CPU.
 */
void
calibrate_fit(FILE *out)
{
	const double a8 = 421,
				a64 = 591;

	for (int it = 0; it < 12; it++)
	{
		double		r0 = fit_executor_insns,
					h0 = fit_hold_insns;
		double		f8,
					f64,
					dr8,
					dr64,
					dh8,
					dh64,
					det,
					e8,
					e64,
					dr,
					dh;

		f8 = sokolov_tps(200, 8, 0);
		f64 = sokolov_tps(200, 64, 0);
		fprintf(out, "fit %d: executor %.0f hold %.0f insns: 8 locks %.1f, 64 locks %.1f tps (simulated)\n",
				it, r0, h0, f8, f64);
		e8 = a8 - f8;
		e64 = a64 - f64;
		if (fabs(e8) / a8 < 0.003 && fabs(e64) / a64 < 0.003)
			break;
		fit_executor_insns = r0 * 1.03;
		dr8 = (sokolov_tps(200, 8, 0) - f8) / (r0 * 0.03);
		dr64 = (sokolov_tps(200, 64, 0) - f64) / (r0 * 0.03);
		fit_executor_insns = r0;
		fit_hold_insns = h0 * 1.03;
		dh8 = (sokolov_tps(200, 8, 0) - f8) / (h0 * 0.03);
		dh64 = (sokolov_tps(200, 64, 0) - f64) / (h0 * 0.03);
		fit_hold_insns = h0;
		det = dr8 * dh64 - dh8 * dr64;
		if (det == 0)
			break;
		dr = (e8 * dh64 - dh8 * e64) / det;
		dh = (dr8 * e64 - e8 * dr64) / det;
		/* damped: the model is noisy at small steps */
		dr = Max(Min(dr, r0 * 0.3), -r0 * 0.3);
		dh = Max(Min(dh, h0 * 0.5), -h0 * 0.5);
		fit_executor_insns = r0 + 0.8 * dr;
		fit_hold_insns = h0 + 0.8 * dh;
	}
	fprintf(out, "fitted (for sim/params.c): fit_executor_insns = %.0f; fit_hold_insns = %.0f\n",
			fit_executor_insns, fit_hold_insns);
}

typedef struct SokolovRow
{
	int			clients;
	int			locks;
	int			attempt;		/* as in the mail */
	double		tps;
	bool		anchor;
} SokolovRow;

static const SokolovRow sokolov[] = {
	{200, 8, 0, 421, true}, {200, 64, 0, 591, true},
	{200, 64, 1, 680}, {200, 64, 2, 696},
	{200, 128, 0, 665}, {200, 128, 1, 678}, {200, 128, 2, 675},
	{200, 256, 0, 678}, {200, 256, 1, 687}, {200, 256, 2, 695},
	{400, 8, 0, 443}, {400, 64, 0, 575},
	{400, 64, 1, 640}, {400, 64, 2, 654},
	{400, 128, 0, 651}, {400, 128, 1, 652}, {400, 128, 2, 658},
	{400, 256, 0, 658}, {400, 256, 1, 657}, {400, 256, 2, 648},
};

static int
report(FILE *out, const char *what, double published, double simulated,
	   bool anchor, double *worst)
{
	double		err = simulated / published - 1;

	fprintf(out, "| %s | %s | %.2f | %.2f | %+.1f%% |%s\n", what,
			anchor ? "anchor (fitted)" : "prediction", published, simulated,
			err * 100, anchor || fabs(err) <= TARGET_ERROR ? "" : " **miss**");
	if (anchor)
		return 0;
	*worst = Max(*worst, fabs(err));
	return fabs(err) > TARGET_ERROR;
}

int
calibrate_validate(FILE *out, double *worst_error)
{
	int			misses = 0;
	SimParams	p;
	double		t1,
				t8,
				t24;

	*worst_error = 0;
	fprintf(out, "Fitted: executor CPU %.0f instructions per record (plus the measured %.0f of the record itself), lock hold %.0f instruction-times (at %.1f ns each).\n\n",
			fit_executor_insns, INSNS_PER_RECORD, fit_hold_insns, NS_PER_INSN);
	fprintf(out, "| point | kind | published | simulated | error |\n");
	fprintf(out, "|---|---|---:|---:|---:|\n");
	for (int i = 0; i < (int) (sizeof(sokolov) / sizeof(sokolov[0])); i++)
	{
		const SokolovRow *r = &sokolov[i];
		char		what[128];
		int			a = r->attempt > 0 ? r->attempt + SOKOLOV_ATTEMPTS_OFFSET : 0;

		snprintf(what, sizeof(what),
				 "Sokolov, %d clients, %d locks%s%s (attempts %d), tps",
				 r->clients, r->locks,
				 r->locks == 8 ? " (stock)" : "",
				 r->attempt == 1 ? " + attempt=1" :
				 r->attempt == 2 ? " + attempt=2" : "", a);
		misses += report(out, what, r->tps,
						 sokolov_tps(r->clients, r->locks, a),
						 r->anchor, worst_error);
	}

	/* Greg Smith: 24 clients on 24 cores, as ratios */
	machine_params(&p, 24, 24);
	t1 = steady_tps(&p, 24, 1, 0, 2401, WARM_S, MEASURE_S);
	t8 = steady_tps(&p, 24, 8, 0, 2408, WARM_S, MEASURE_S);
	t24 = steady_tps(&p, 24, 24, 0, 2424, WARM_S, MEASURE_S);
	misses += report(out, "Greg Smith, 24 cores, 24 clients: 8 locks / 1 lock (59 / 25.4)",
					 59.0 / 25.4, t8 / t1, false, worst_error);
	misses += report(out, "Greg Smith, 24 cores, 24 clients: 24 locks / 8 locks (66.8 / 59)",
					 66.8 / 59.0, t24 / t8, false, worst_error);
	fprintf(out, "\nPublished: the mails' figures; simulated: this model's. Target: every prediction within %.0f%%; worst %.1f%%, %d missed.\n",
			TARGET_ERROR * 100, *worst_error * 100, misses);
	return misses;
}
