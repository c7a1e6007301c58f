/*-------------------------------------------------------------------------
 *
 * model.h
 *		A discrete-event model of a PostgreSQL server inserting WAL: backends
 *		on a number of CPUs, the WAL insertion locks with LWLock semantics and
 *		the core patch's acquisition policy, the position-reservation
 *		spinlock, WAL writing and flushing.
 *
 * Times are in nanoseconds of simulated time.  Every figure the model gives
 * is simulated.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#define SIM_MAX_LOCKS	1024	/* XLOG_INSERT_LOCKS_MAX */

#ifndef Min
#define Min(x, y)	((x) < (y) ? (x) : (y))
#define Max(x, y)	((x) > (y) ? (x) : (y))
#endif

/* what the model is made of; see sim/README.md for each value's source */
typedef struct SimParams
{
	int			cpus;
	int			max_clients;	/* backends that can exist at once */
	int			max_connections;	/* ProcNumbers handed out (unpooled) */
	bool		unpooled;		/* each transaction a new connection */

	/* scheduler */
	double		quantum_ns;		/* time slice */
	double		wake_ns;		/* from a wake-up to runnable */
	double		sleep_cpu_ns;	/* CPU a sleep on a lock costs, all told */

	/* workload, per transaction */
	int			records_per_txn;	/* WAL records before the commit */
	double		record_cpu_ns;	/* CPU between two records, outside locks */
	double		commit_cpu_ns;	/* CPU of the commit, outside locks */
	double		think_ns;		/* idle between transactions (client) */
	double		connect_cpu_ns; /* a new connection's CPU (unpooled) */
	double		record_bytes;	/* WAL per record */
	bool		sync_commit;

	/* insertion */
	double		hold_ns;		/* CPU a record spends holding its lock */
	double		reserve_ns;		/* insertpos_lck held per record */
	double		visit_ns;		/* a flush's cost per active lock */
	int			attempts;		/* walscale.insert_lock_attempts */

	/* WAL writing */
	double		write_bytes_per_ns; /* bandwidth of WAL writing */
	double		wal_buffers;	/* bytes */
	double		fsync_ns;		/* per flush, when synchronous_commit */
} SimParams;

/* counters since the last sim_take_figures() */
typedef struct SimFigures
{
	double		elapsed_ns;
	uint64_t	transactions;
	uint64_t	acquisitions;
	uint64_t	blocking_waits;
	double		blocked_ns;
	double		active_backend_ns;	/* integral of non-idle backends */
	double		idle_cpu_ns;	/* integral of idle CPUs */
	uint64_t	sleeps;			/* sleeps, more than one per wait if futile */
	double		spin_ns;		/* spent spinning on insertpos_lck */
	double		write_wait_ns;	/* inserters waiting for a WAL write */
	int			locks;			/* in effect */
	uint64_t	lock_acquisitions[SIM_MAX_LOCKS];
} SimFigures;

typedef struct Sim Sim;

extern Sim *sim_create(const SimParams *params, int clients, int locks,
					   uint64_t seed);
extern void sim_free(Sim *sim);
extern void sim_set_clients(Sim *sim, int clients);
extern void sim_set_locks(Sim *sim, int locks);
extern void sim_set_attempts(Sim *sim, int attempts);
extern void sim_run(Sim *sim, double ns);
extern void sim_take_figures(Sim *sim, SimFigures *figures);

#endif							/* SIM_MODEL_H */
