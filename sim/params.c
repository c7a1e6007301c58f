/*-------------------------------------------------------------------------
 *
 * params.c
 *		The machines and the workload the simulations run.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include <string.h>

#include "params.h"

/* written by "walscale_sim fit"; see sim/README.md */
double		fit_executor_insns = 10823.0;
double		fit_hold_insns = 2130.0;

/*
 * A cache-line transfer between two cores, in ns: within the 8 cores of one
 * Ryzen CCX about 40, across a many-core socket's mesh about 100, and across
 * sockets about 150 (assumed; typical of published core-to-core latency
 * measurements).  It is what an insertpos_lck handover and a flush's visit
 * of a lock that another core wrote cost.
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
 * his mail (fsync off, synchronous_commit off, wal_buffers 1GB): the
 * scenarios change what they need.
 */
void
machine_params(SimParams *p, int cpus, int max_clients)
{
	memset(p, 0, sizeof(*p));
	p->cpus = cpus;
	p->max_clients = max_clients;
	p->max_connections = max_clients;
	p->quantum_ns = QUANTUM_NS;
	p->wake_ns = WAKE_NS;
	p->sleep_cpu_ns = SLEEP_CPU_NS;
	p->records_per_txn = SOKOLOV_RECORDS;
	p->record_cpu_ns = (fit_executor_insns + INSNS_PER_RECORD) * NS_PER_INSN;
	p->commit_cpu_ns = INSNS_PER_COMMIT * NS_PER_INSN;
	p->think_ns = THINK_NS;
	p->connect_cpu_ns = 1.5e6;
	p->record_bytes = RECORD_BYTES;
	p->sync_commit = false;
	p->hold_ns = fit_hold_insns * NS_PER_INSN;
	p->reserve_ns = cacheline_ns(cpus);
	/* the measured 42 instructions, plus a miss on a line another core wrote */
	p->visit_ns = INSNS_PER_LOCK_VISIT * NS_PER_INSN +
		(cpus <= 16 ? 0.0 : cacheline_ns(cpus));
	p->attempts = 0;
	/* fsync off: writes go to the page cache, a few GB/s */
	p->write_bytes_per_ns = 2.0;
	p->wal_buffers = 1024.0 * 1024 * 1024;
	p->fsync_ns = 0;
}
