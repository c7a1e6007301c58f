/*-------------------------------------------------------------------------
 *
 * model.h
 *		A discrete-event model of a PostgreSQL server inserting WAL: backends
 *		on a number of CPUs, the WAL insertion locks with LWLock semantics and
 *		the core patch's acquisition policy, insertpos_lck as a test-and-set
 *		spinlock with s_lock's backoff, the cache-line transfers that lock
 *		state costs, checkpoints and the full-page images after them, the
 *		processes that take every lock, WAL writing and flushing.
 *
 * Times are in nanoseconds of model time.  Every figure the model gives is
 * simulated.
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
#define SIM_LOCK_GROUP	8		/* consecutive locks a flush visits together */
#define SIM_MAX_GROUPS	(SIM_MAX_LOCKS / SIM_LOCK_GROUP)

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
	double		sleep_cpu_ns;	/* CPU a sleep costs, all told */
	double		wake_ahead_ns;	/* how far a waking backend jumps the queue */

	/* workload, per transaction */
	int			records_per_txn;	/* WAL records before the commit */
	double		record_cpu_ns;	/* CPU between two records, outside locks */
	double		commit_cpu_ns;	/* CPU of the commit, outside locks */
	double		think_ns;		/* idle between transactions (client) */
	double		connect_cpu_ns; /* a new connection's CPU (unpooled) */
	double		record_bytes;	/* WAL per record */
	bool		sync_commit;

	/* the machine: one cache-line transfer between two cores */
	double		xfer_ns;

	/* insertion: a record's hold of its insertion lock, past insertpos_lck */
	double		hold_ns;		/* instructions and cache misses */
	int			attempts;		/* walscale.insert_lock_attempts */

	/* insertpos_lck, a test-and-set spinlock (s_lock.c) */
	double		pos_cs_ns;		/* its critical section */
	double		pos_spin_ns;	/* one turn of the spin loop */
	double		pos_beta;		/* hand-over: xfer_ns * (1 + beta * spinners) */
	bool		pos_lock_free;	/* an atomic fetch-add instead: no spinning */

	/* WaitXLogInsertionsToFinish(): per lock visited, plus a transfer */
	double		visit_ns;
	/* it visits every active lock, not the groups marked (no patch 0006) */
	bool		flush_visits_all;
	/* one acquisition or release by a process that takes every lock */
	double		lock_op_ns;

	/* WAL writing */
	double		write_bytes_per_ns; /* bandwidth of WAL writing */
	double		wal_buffers;	/* bytes */
	double		fsync_ns;		/* per flush, when synchronous_commit */

	/*
	 * Checkpoints and full-page images; 0 turns each off.  A checkpoint's
	 * images follow the scenario's clock (sim_set_time_scale()), its all-lock
	 * acquisition and bgwriter's calls model time.
	 */
	double		checkpoint_s;	/* checkpoint_timeout */
	/*
	 * The all-lock acquisition's period and first time in model time; 0:
	 * checkpoint_s for both, as on a server
	 */
	double		checkpoint_locks_s;
	double		checkpoint_locks_first_s;
	double		bgwriter_s;		/* GetLastImportantRecPtr() by bgwriter */
	double		fpi_share;		/* records that can carry one */
	double		fpi_tau_s;		/* their decay after a checkpoint */
	double		fpi_bytes;
	double		fpi_cpu_ns;		/* outside the lock: assembly, CRC */
	double		fpi_copy_ns;	/* inside it: the copy into WAL buffers */
	double		all_locks_hold_ns;	/* a checkpoint's work with all held */
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
	double		hold_ns;		/* insertion locks held, summed over holders */
	double		spin_ns;		/* spent spinning on insertpos_lck */
	double		pos_sleep_ns;	/* asleep in s_lock's backoff */
	uint64_t	pos_sleeps;
	uint64_t	pos_contended;	/* reservations that found it taken */
	double		write_wait_ns;	/* inserters waiting for a WAL write */
	double		visit_ns;		/* flushers visiting locks */
	uint64_t	visits;			/* WaitXLogInsertionsToFinish() calls */
	uint64_t	visited_locks;	/* locks they visited */
	uint64_t	fpis;			/* records with a full-page image */
	uint64_t	all_lock_runs;	/* all-lock acquisitions finished */
	double		all_lock_ns;	/* their time from start to release */
	uint64_t	each_lock_runs; /* GetLastImportantRecPtr() calls */
	double		each_lock_ns;
	uint64_t	each_lock_skipped;	/* bgwriter's turns skipped, still busy */
	int			locks;			/* in effect */
	uint64_t	lock_acquisitions[SIM_MAX_LOCKS];
} SimFigures;

typedef struct Sim Sim;

extern Sim *sim_create(const SimParams *params, int clients, int locks,
					   uint64_t seed);
extern void sim_free(Sim *sim);
extern void sim_set_clients(Sim *sim, int clients);

/*
 * A new count, as SetNumWALInsertLocks() makes it: an all-lock acquisition
 * of the locks in effect, then the new number.  Returns at once; the change
 * takes effect when the acquisition completes, as the model runs on.
 */
extern void sim_set_locks(Sim *sim, int locks);
extern void sim_set_attempts(Sim *sim, int attempts);

/*
 * WALInsertLockAcquireExclusive() with a checkpoint's work, and
 * GetLastImportantRecPtr(), on demand: lock-free as patch 0005 makes it
 * where 8-byte reads are single-copy atomic, or with take_locks each lock
 * taken and let go in turn, as elsewhere; whether such a job, or a resize,
 * is still under way.
 */
extern void sim_take_all_locks(Sim *sim);
extern void sim_get_last_important(Sim *sim, bool take_locks);
extern bool sim_agent_busy(Sim *sim);
extern int	sim_checkpoints(Sim *sim);

/*
 * Seconds of scenario time per second of model time: checkpoints' full-page
 * images and their decay follow the scenario's clock (1 unless set).
 */
extern void sim_set_time_scale(Sim *sim, double scenario_s_per_model_s);
extern void sim_run(Sim *sim, double ns);
extern void sim_take_figures(Sim *sim, SimFigures *figures);

#endif							/* SIM_MODEL_H */
