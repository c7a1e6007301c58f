/*-------------------------------------------------------------------------
 *
 * scenarios.h
 *		Auto mode's decision code in the loop of the simulated server, and
 *		the scenarios of issue 16 it is judged on.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIM_SCENARIOS_H
#define SIM_SCENARIOS_H

#include <stdio.h>

/*
 * Run every scenario at each of the CPU counts, print the controller table
 * to out, and write the per-window series as CSV under dir.  Returns the
 * number of goals missed.
 */
extern int	run_history(FILE *out, const char *name, int cpus, int pre_locks,
						int pre_windows, int locks);
extern int	run_spread(FILE *out, const char *name, int cpus, int locks,
					   int nwindows, double margin, bool print_windows);
extern void list_scenarios(FILE *out);
extern void scenarios_set_window_stretch(double stretch, double fixed_ms,
										 double sweep);
extern double auto_window_model_s(int cpus);
extern void scenarios_set_windows_per_hour(int n, int sweep_n);
extern void scenarios_set_seeds(const uint64 *list, int n);
extern void scenarios_set_duration(double s);
extern int	run_scenarios(FILE *out, const char *dir, const int *cpus,
						  int ncpus, const char *only);

#endif							/* SIM_SCENARIOS_H */
