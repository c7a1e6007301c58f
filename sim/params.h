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

/* measured with callgrind, one backend (the core patch's commit messages) */
#define INSNS_PER_RECORD		2000.0	/* a small WAL record, all of it */
#define INSNS_PER_COMMIT		52000.0 /* a single-row commit */
#define INSNS_PER_LOCK_VISIT	2.8 /* WaitXLogInsertionsToFinish, patched */

/* assumed */
#define NS_PER_INSN				0.5 /* 2 GHz, 1 instruction per cycle a thread */
#define QUANTUM_NS				4e6
#define WAKE_NS					10e3
#define SLEEP_CPU_NS			40e3
#define THINK_NS				120e3
#define RECORD_BYTES			70.0
#define HOLD_INSNS				400.0	/* a record's copy and bookkeeping */
#define POS_CS_INSNS			20.0	/* ReserveXLogInsertLocation's */
#define POS_SPIN_NS				40.0	/* one turn: pause and a test */
#define POS_BETA				0.5 /* hand-over: a transfer per 2 spinners */
#define LOCK_OP_NS				50.0	/* LWLockAcquire or release, free */
#define ALL_LOCKS_HOLD_NS		1e3 /* a checkpoint's work, all locks held */
#define BGWRITER_S				15.0	/* LOG_SNAPSHOT_INTERVAL_MS */
#define FPI_BYTES				8192.0	/* BLCKSZ, no wal_compression */
#define FPI_CPU_NS				1.5e3	/* assembling it and its CRC */
#define FPI_COPY_NS				1e3 /* copying it into the WAL buffers */

/*
 * Fitted to two anchors of Sokolov's table (sim/calibrate.c, "walscale_sim
 * fit"): the executor's CPU per WAL record (a row inserted or deleted, an
 * index entry), in instructions at NS_PER_INSN, to which a record's
 * measured INSNS_PER_RECORD is added; and the cache misses a record's hold
 * of its insertion lock takes beyond HOLD_INSNS, each a cache-line
 * transfer of the machine (cacheline_ns()).
 */
extern double fit_executor_insns;
extern double fit_hold_misses;

/*
 * Fitted to a third anchor: how far ahead of the backends already runnable
 * a waking one is queued, in ms; on a server with more runnable backends
 * than CPUs, about how long a preempted one waits for a CPU again.
 */
extern double fit_wake_ahead_ms;

/* Sokolov's transaction: insert 1001 rows into a table with one index, and
 * delete them: a heap and an index record per row inserted, a heap record
 * per row deleted */
#define SOKOLOV_RECORDS		3003

/* Sokolov's "attempt=k" is walscale.insert_lock_attempts k + 1 */
#define SOKOLOV_ATTEMPTS_OFFSET 1

extern double cacheline_ns(int cpus);
extern void machine_params(SimParams *p, int cpus, int max_clients);

/* full-page writes on, checkpoint_timeout checkpoint_s */
extern void checkpoint_params(SimParams *p, double checkpoint_s);

#endif							/* SIM_PARAMS_H */
