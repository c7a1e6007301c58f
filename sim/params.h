/*-------------------------------------------------------------------------
 *
 * params.h
 *		The model's parameters: measured, assumed and fitted, and the
 *		machines and workloads built from them.  sim/README.md gives each
 *		value's source.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIM_PARAMS_H
#define SIM_PARAMS_H

#include "model.h"

/* measured with callgrind on stock 18.6, one backend */
#define INSNS_PER_RECORD		2000.0	/* a small WAL record, all of it */
#define INSNS_PER_COMMIT		52000.0 /* a single-row commit */
#define INSNS_PER_LOCK_VISIT	42.0	/* WaitXLogInsertionsToFinish, a lock */

/* assumed */
#define NS_PER_INSN				0.5 /* 2 GHz, 1 instruction per cycle a thread */
#define QUANTUM_NS				4e6
#define WAKE_NS					10e3
#define SLEEP_CPU_NS			40e3
#define THINK_NS				120e3
#define RECORD_BYTES			70.0

/*
 * Fitted to two anchors of Sokolov's table (sim/calibrate.c, "walscale_sim
 * fit"): the executor's CPU per WAL record (a row inserted or deleted, an
 * index entry), to which a record's measured INSNS_PER_RECORD is added, and
 * the time a record holds its insertion lock, cache misses included; both
 * in instructions at NS_PER_INSN.
 */
extern double fit_executor_insns;
extern double fit_hold_insns;

/* Sokolov's transaction: insert 1001 rows into a table with one index, and
 * delete them: a heap and an index record per row inserted, a heap record
 * per row deleted */
#define SOKOLOV_RECORDS		3003

/* Sokolov's "attempt=k" is walscale.insert_lock_attempts k + 1 */
#define SOKOLOV_ATTEMPTS_OFFSET 1

extern double cacheline_ns(int cpus);
extern void machine_params(SimParams *p, int cpus, int max_clients);

#endif							/* SIM_PARAMS_H */
