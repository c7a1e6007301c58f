/*-------------------------------------------------------------------------
 *
 * params.c
 *		The machines and the workload the simulations run.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include <stdlib.h>
#include <string.h>

#include "params.h"

/* written by "walscale_sim fit"; see sim/README.md */
double		fit_executor_insns = 11097.0;
double		fit_hold_misses = 24.38;
double		fit_wake_ahead_ms = 65.0;

/*
 * A cache-line transfer between two cores, in ns, by the distance between
 * cores that a machine of that many CPUs puts between two backends: within
 * the 8 cores of one Ryzen CCX about 40, across a 16-core ring or a small
 * two-socket box about 70, across a many-core socket's mesh about 100, and
 * across the sockets of a 2- to 8-socket server about 150 (assumed; typical
 * of published core-to-core latency measurements, see sim/README.md).
 */
double
cacheline_ns(int cpus)
{
	if (cpus <= 16)
		return 40.0;
	if (cpus <= 32)
		return 70.0;
	if (cpus <= 128)
		return 100.0;
	return 150.0;
}

/*
 * A server of cpus CPUs running Sokolov's transaction with the settings of
 * his mail (fsync off, synchronous_commit off, full_page_writes off,
 * wal_buffers 1GB, no checkpoint): the scenarios change what they need.
 */
void
machine_params(SimParams *p, int cpus, int max_clients)
{
	double		xfer = cacheline_ns(cpus);

	memset(p, 0, sizeof(*p));
	p->cpus = cpus;
	p->max_clients = max_clients;
	p->max_connections = max_clients;
	p->quantum_ns = QUANTUM_NS;
	p->wake_ns = WAKE_NS;
	p->sleep_cpu_ns = SLEEP_CPU_NS;
	p->wake_ahead_ns = fit_wake_ahead_ms * 1e6;
	p->records_per_txn = SOKOLOV_RECORDS;
	p->record_cpu_ns = (fit_executor_insns + INSNS_PER_RECORD) * NS_PER_INSN;
	p->commit_cpu_ns = INSNS_PER_COMMIT * NS_PER_INSN;
	p->think_ns = THINK_NS;
	p->connect_cpu_ns = 1.5e6;
	p->record_bytes = RECORD_BYTES;
	p->sync_commit = false;
	p->xfer_ns = xfer;
	p->hold_ns = HOLD_INSNS * NS_PER_INSN + fit_hold_misses * xfer;
	p->attempts = 0;
	p->pos_cs_ns = POS_CS_INSNS * NS_PER_INSN;
	p->pos_spin_ns = POS_SPIN_NS;
	p->pos_beta = POS_BETA;
	/* SIM_POS_BETA: another hand-over slope, to see what it changes */
	if (getenv("SIM_POS_BETA") != NULL)
		p->pos_beta = atof(getenv("SIM_POS_BETA"));
	p->pos_lock_free = false;
	p->visit_ns = INSNS_PER_LOCK_VISIT * NS_PER_INSN;
	p->lock_op_ns = LOCK_OP_NS;
	/* fsync off: writes go to the page cache, a few GB/s */
	p->write_bytes_per_ns = 2.0;
	p->wal_buffers = 1024.0 * 1024 * 1024;
	p->fsync_ns = 0;
	p->checkpoint_s = 0;
	p->bgwriter_s = BGWRITER_S;
	p->fpi_share = 0;
	p->fpi_tau_s = 60.0;
	p->fpi_bytes = FPI_BYTES;
	p->fpi_cpu_ns = FPI_CPU_NS;
	p->fpi_copy_ns = FPI_COPY_NS;
	p->all_locks_hold_ns = ALL_LOCKS_HOLD_NS;
}

/*
 * Checkpoints every checkpoint_s of scenario time, full_page_writes on.
 * Of Sokolov's 3003 records, about nine can find their page unchanged since
 * the last checkpoint: the four or so index leaves that 1001 consecutive
 * keys fill, and the five heap pages of 1001 int8 rows once vacuum lets
 * inserts reuse pages; the leaves are spread over the whole index, so the
 * share decays over about a minute (assumed; sim/README.md).
 */
void
checkpoint_params(SimParams *p, double checkpoint_s)
{
	p->checkpoint_s = checkpoint_s;
	p->fpi_share = 9.0 / SOKOLOV_RECORDS;
	p->fpi_tau_s = 60.0;
}
