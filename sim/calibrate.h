/*-------------------------------------------------------------------------
 *
 * calibrate.h
 *		Throughput of a fixed configuration, the fit of the two fitted
 *		parameters, and the validation against published measurements.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIM_CALIBRATE_H
#define SIM_CALIBRATE_H

#include <stdbool.h>
#include <stdio.h>

#include "model.h"

extern double steady_tps(const SimParams *p, int clients, int locks,
						 int attempts, uint64_t seed, double warm_s,
						 double measure_s);
extern void calibrate_fit(FILE *out);
extern void calibrate_costs(FILE *out);
extern void calibrate_probe(FILE *out, int cpus, int clients, int locks,
							int attempts, bool lock_free, double measure_s);

/* prints the table; returns the predictions that missed the target */
extern int	calibrate_validate(FILE *out, double *worst_error);

#endif							/* SIM_CALIBRATE_H */
