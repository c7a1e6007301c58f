/*-------------------------------------------------------------------------
 *
 * walscale_sim.c
 *		make simulate's program: validate the model against published
 *		measurements, and run auto mode's decision code in it.
 *
 *		walscale_sim fit
 *		walscale_sim validate OUT.md
 *		walscale_sim scenarios OUT.md DIR CPUS[,CPUS...] [NAME]
 *		walscale_sim list
 *		walscale_sim probe CPUS CLIENTS LOCKS ATTEMPTS [LOCK_FREE [SECONDS]]
 *		walscale_sim costs
 *		walscale_sim history NAME CPUS PRE_LOCKS PRE_WINDOWS LOCKS
 *		walscale_sim spread NAME CPUS LOCKS WINDOWS MARGIN
 *		walscale_sim window CPUS	(auto mode's window, ms of model time)
 *
 * SIM_WINDOW_STRETCH=K runs each of auto mode's windows for K times its
 * model time, SIM_WINDOW_MS=M for M ms at every CPU count;
 * SIM_SWEEP_WINDOW_STRETCH=K each of the fixed counts' K times its 40 ms;
 * SIM_WINDOWS_PER_HOUR and SIM_SWEEP_WINDOWS_PER_HOUR set how many windows
 * an hour has for auto mode and for the fixed counts; SIM_POS_BETA the
 * slope of insertpos_lck's hand-over; SIM_SEEDS="N ..." the scenarios'
 * seeds (default 0; auto mode runs once per seed, the fixed counts with the
 * first); SIM_DURATION_S=S cuts each scenario at S seconds;
 * SIM_SPREAD_WINDOWS=1 makes spread print each window's tps.
 *
 * Everything it prints is simulated.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "c.h"

#include <stdlib.h>
#include <string.h>

#include "calibrate.h"
#include "scenarios.h"

static FILE *
open_out(const char *path)
{
	FILE	   *f = fopen(path, "w");

	if (f == NULL)
	{
		perror(path);
		exit(2);
	}
	return f;
}

int
main(int argc, char **argv)
{
	/*
	 * SIM_WINDOW_STRETCH: each of auto mode's windows K times its model time
	 * (default 1); SIM_WINDOW_MS: that many ms of model time instead, at
	 * every CPU count; SIM_SWEEP_WINDOW_STRETCH: the fixed counts' windows
	 * K times theirs
	 */
	const char *stretch = getenv("SIM_WINDOW_STRETCH");
	const char *window_ms = getenv("SIM_WINDOW_MS");
	const char *sweep_stretch = getenv("SIM_SWEEP_WINDOW_STRETCH");

	/*
	 * SIM_WINDOWS_PER_HOUR: auto mode's windows in an hour of a scenario
	 * (default 360); SIM_SWEEP_WINDOWS_PER_HOUR: the fixed counts' (60)
	 */
	const char *per_hour = getenv("SIM_WINDOWS_PER_HOUR");
	const char *sweep_per_hour = getenv("SIM_SWEEP_WINDOWS_PER_HOUR");

	scenarios_set_window_stretch(stretch != NULL ? atof(stretch) : 0,
								 window_ms != NULL ? atof(window_ms) : 0,
								 sweep_stretch != NULL ? atof(sweep_stretch) : 0);
	scenarios_set_windows_per_hour(per_hour != NULL ? atoi(per_hour) : 0,
								   sweep_per_hour != NULL ? atoi(sweep_per_hour) : 0);
	/*
	 * SIM_SEEDS: the scenarios' seeds, space-separated (default 0): auto
	 * mode runs once per seed, the fixed counts with the first;
	 * SIM_DURATION_S: cut each scenario at that many seconds
	 */
	if (getenv("SIM_SEEDS") != NULL)
	{
		uint64		list[16];
		int			n = 0;
		char	   *seeds = strdup(getenv("SIM_SEEDS"));

		for (char *tok = strtok(seeds, " ,"); tok != NULL && n < 16;
			 tok = strtok(NULL, " ,"))
			list[n++] = strtoull(tok, NULL, 10);
		scenarios_set_seeds(list, n);
		free(seeds);
	}
	if (getenv("SIM_DURATION_S") != NULL)
		scenarios_set_duration(atof(getenv("SIM_DURATION_S")));
	if (argc == 2 && strcmp(argv[1], "list") == 0)
	{
		list_scenarios(stdout);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "window") == 0)
	{
		printf("%.0f\n", auto_window_model_s(atoi(argv[2])) * 1e3);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "costs") == 0)
	{
		calibrate_costs(stdout);
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "fit") == 0)
	{
		calibrate_fit(stdout);
		return 0;
	}
	if (argc == 3 && strcmp(argv[1], "validate") == 0)
	{
		FILE	   *out = open_out(argv[2]);
		double		worst;
		int			misses = calibrate_validate(out, &worst);

		fclose(out);
		return misses > 0 ? 1 : 0;
	}
	if ((argc == 5 || argc == 6) && strcmp(argv[1], "scenarios") == 0)
	{
		FILE	   *out = open_out(argv[2]);
		int			cpus[8];
		int			n = 0;
		char	   *list = strdup(argv[4]);
		int			misses;

		for (char *tok = strtok(list, ","); tok != NULL && n < 8;
			 tok = strtok(NULL, ","))
			cpus[n++] = atoi(tok);
		misses = run_scenarios(out, argv[3], cpus, n,
							   argc == 6 ? argv[5] : NULL);
		fclose(out);
		return misses > 0 ? 1 : 0;
	}
	if ((argc == 6 || argc == 7 || argc == 8) && strcmp(argv[1], "probe") == 0)
	{
		calibrate_probe(stdout, atoi(argv[2]), atoi(argv[3]), atoi(argv[4]),
						atoi(argv[5]), argc >= 7 && atoi(argv[6]) != 0,
						argc == 8 ? atof(argv[7]) : 1.5);
		return 0;
	}
	if (argc == 7 && strcmp(argv[1], "history") == 0)
		return run_history(stdout, argv[2], atoi(argv[3]), atoi(argv[4]),
						   atoi(argv[5]), atoi(argv[6]));
	if (argc == 7 && strcmp(argv[1], "spread") == 0)
		return run_spread(stdout, argv[2], atoi(argv[3]), atoi(argv[4]),
						  atoi(argv[5]), atof(argv[6]),
						  getenv("SIM_SPREAD_WINDOWS") != NULL);
	fprintf(stderr, "usage: %s fit | validate OUT.md | scenarios OUT.md DIR CPUS [NAME]\n"
			"       | history NAME CPUS PRE_LOCKS PRE_WINDOWS LOCKS\n"
			"       | spread NAME CPUS LOCKS WINDOWS MARGIN\n",
			argv[0]);
	return 2;
}
