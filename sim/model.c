/*-------------------------------------------------------------------------
 *
 * model.c
 *		The server model: backends scheduled on CPUs in time slices, the WAL
 *		insertion locks, insertpos_lck, the processes that take every lock,
 *		checkpoints, WAL writing and flushing.
 *
 * A backend runs a transaction as records_per_txn WAL records, each after
 * record_cpu_ns of CPU, then a commit record and, with synchronous_commit,
 * a flush.  It inserts a record holding one insertion lock, chosen as the
 * core patch's WALInsertLockAcquire() does; inside it reserves WAL under
 * insertpos_lck and copies the record; when the WAL buffers are full it
 * waits for the WAL write with the insertion lock still held, as 18.6 does
 * in AdvanceXLInsertBuffer().
 *
 * The insertion locks follow LWLock: a release wakes the first waiter and
 * no other until that one has run (LW_FLAG_RELEASE_OK); the woken backend
 * becomes runnable after wake_ns and retries, and a running backend may take
 * the lock first (barging); a waiter that loses requeues at the tail.
 *
 * insertpos_lck follows s_lock.c: a backend that finds it taken spins on its
 * CPU, its insertion lock held, for spins_per_delay turns of pos_spin_ns;
 * then it sleeps (pg_usleep) 1 ms, and each further sleep of the same
 * acquisition is longer by a random factor from 1 to 2, back to 1 ms past
 * 1 s; spins_per_delay, per backend, grows by 100 (up to 1000) after an
 * acquisition that did not sleep and shrinks by 1 (down to 10) after one
 * that did.  The lock, its position and the previous position share one
 * cache line, which every spinner reads: a release hands the line to the
 * next holder, chosen at random among the spinners still on their CPUs,
 * after xfer_ns * (1 + pos_beta * spinners), so that the hand-over slows as
 * spinners gather.
 *
 * A read of a lock's cache line that another process wrote since this
 * process last read it costs a transfer, xfer_ns: a flusher pays it per
 * such lock it visits in WaitXLogInsertionsToFinish(),
 * GetLastImportantRecPtr() per such lock it reads, and the processes that
 * take every lock (a checkpoint, a resize) per lock.  Those processes are
 * the "agent": one job at a time, off the CPUs.
 *
 * A flush visits only the locks of the groups (SIM_LOCK_GROUP consecutive
 * locks) that insertions marked in the open or the last closed epoch, as
 * core patch 0006 has it: see visit_locks().
 *
 * The scheduler is a run queue per machine: a backend runs until it sleeps
 * or its quantum ends with another backend runnable; a preempted backend
 * goes to the tail, and one that wakes goes to the head (Linux places a
 * waking task ahead of those that ran).  A preempted lock holder keeps its
 * lock, and a preempted spinner stops spinning until it runs again.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "rng.h"

/*
 * Of a sleep's CPU, what the switch back in costs before the backend can
 * retry; the rest, refilling the caches that other backends evicted, slows
 * the work that follows, and only when another backend ran on the CPU
 * meanwhile, or the backend woke on another CPU.
 */
#define SWITCH_CPU_NS	5e3

#define WAL_PAGE_BYTES	8192.0	/* XLOG_BLCKSZ */

/* s_lock.c */
#define MIN_SPINS_PER_DELAY		10
#define MAX_SPINS_PER_DELAY		1000
#define DEFAULT_SPINS_PER_DELAY 100
#define MIN_DELAY_USEC			1000
#define MAX_DELAY_USEC			1000000

typedef enum BackendState
{
	BS_IDLE,					/* between transactions, or no client */
	BS_RUNQ,
	BS_RUNNING,
	BS_LOCKWAIT,				/* asleep on an insertion lock */
	BS_WAITING					/* asleep on a WAL write, a flush, a timer */
} BackendState;

/* what a backend does when its current burst of CPU ends */
typedef enum Phase
{
	PH_START,					/* begin a transaction */
	PH_WORK,					/* CPU before a record */
	PH_WOKEN,					/* woken: the CPU a sleep and wake-up cost */
	PH_RETRY,					/* then try the lock slept on again */
	PH_SPIN,					/* spinning on insertpos_lck */
	PH_SPIN_WOKEN,				/* back from s_lock's pg_usleep() */
	PH_SPIN_RETRY,				/* then try insertpos_lck again */
	PH_HOLD,					/* copying the record, lock held */
	PH_BUFFER,					/* lock held: make room in the WAL buffers */
	PH_RELEASE,					/* lock held: release it */
	PH_FLUSH,					/* visiting the locks before a flush */
	PH_END						/* transaction done */
} Phase;

typedef struct Backend
{
	BackendState state;
	Phase		phase;
	double		remaining;		/* CPU left in the current burst */
	int			records_left;
	bool		mid_txn;		/* starts in the middle of a transaction */
	int			procno;
	bool		connected;
	int			lock_to_try;	/* -1: none yet (stock's lockToTry) */
	int			locks_seen;		/* WALInsertLocksSeen */
	int			stride;			/* 0: not chosen for this lock count */
	int			lock;			/* the lock held or slept on (MyLockNo) */
	bool		slept;			/* this acquisition has slept */
	int			sleeps;			/* how often */
	double		cold_ns;		/* CPU a sleep costs after the lock is got */
	int			last_cpu;		/* -1: none yet; while running, its CPU */
	uint64_t	last_dispatches;	/* that CPU's dispatches when it came */
	bool		cold;			/* another backend ran there meanwhile */
	double		ready_at;		/* end of a wait (BS_WAITING) */
	double		lsn;			/* end of its last record */
	bool		in_txn;

	/* the record being inserted */
	bool		fpi;			/* carries a full-page image */

	/* s_lock.c's state for insertpos_lck */
	int			spins_per_delay;
	bool		in_slock;		/* inside s_lock(): found it taken */
	bool		delayed;		/* this s_lock() has slept */
	int			cur_delay_us;
	int			spin_idx;		/* place among the spinners, -1: none */
	double		spin_since;

	double		hold_since;		/* its insertion lock */
	int64_t		epoch;			/* the epoch its insertion reserved in */
} Backend;

typedef struct Lock
{
	int			holder;			/* -1: free */
	bool		release_ok;
	int		   *queue;			/* FIFO ring of backends */
	int			qhead;
	int			qlen;
} Lock;

typedef struct Cpu
{
	int			backend;		/* -1: idle */
	double		burst_start;
	double		quantum_end;
	uint64_t	gen;			/* invalidates stale events */
	uint64_t	dispatches;		/* backends put on it */
} Cpu;

typedef enum EventType
{
	EV_CPU,						/* a CPU's burst or quantum ends */
	EV_READY,					/* a backend becomes runnable */
	EV_POS_RELEASE,				/* insertpos_lck's holder lets it go */
	EV_POS_HANDOVER,			/* its line reaches the next holder */
	EV_AGENT,					/* the all-lock process's next step */
	EV_CHECKPOINT,				/* on the scenario's clock */
	EV_CHECKPOINT_LOCKS,		/* in model time */
	EV_BGWRITER					/* in model time */
} EventType;

/* a runnable backend, keyed by when it queued, less a bonus if it woke */
typedef struct RunqEntry
{
	double		key;
	uint64_t	seq;
	int			backend;
} RunqEntry;

typedef struct Event
{
	double		time;
	uint64_t	seq;			/* ties break in order of scheduling */
	int			type;
	int			id;
	uint64_t	gen;
} Event;

/* what the agent does */
typedef enum JobKind
{
	JOB_EACH,					/* GetLastImportantRecPtr(), lock-free */
	JOB_EACH_LOCKED,			/* GetLastImportantRecPtr(): one at a time */
	JOB_CHECKPOINT,				/* WALInsertLockAcquireExclusive() */
	JOB_RESIZE					/* SetNumWALInsertLocks() */
} JobKind;

#define MAX_JOBS	16

typedef struct Agent
{
	bool		busy;
	JobKind		kind;
	int			target;			/* JOB_RESIZE's new count */
	int			n;				/* locks in effect when it began */
	int			next;			/* the next lock to take, or to release */
	bool		releasing;
	bool		waiting;		/* queued on lock next */
	double		started;
	JobKind		queue_kind[MAX_JOBS];
	int			queue_target[MAX_JOBS];
	int			queued;
} Agent;

struct Sim
{
	SimParams	p;
	Rng			rng;
	double		now;
	uint64_t	seq;

	int			clients;		/* backends with a client */
	int			locks;
	int			agent_id;		/* the agent's id in lock queues */
	Backend    *backends;
	Lock		lock[SIM_MAX_LOCKS];
	double		lock_written_at[SIM_MAX_LOCKS];
	int			lock_written_by[SIM_MAX_LOCKS];
	double		agent_read_at[SIM_MAX_LOCKS];	/* the agent's last read */

	/*
	 * Patch 0006's epochs of lock groups (visit_locks()): the open epoch's
	 * number, the epoch in which each group was last marked, the insertions
	 * in flight, those of them that reserved before the last close, the end
	 * of the last flusher's scan, and, per backend and group, when it last
	 * read the group's lock lines (max_clients * SIM_MAX_GROUPS).
	 */
	int64_t		epoch;
	int64_t		group_marked[SIM_MAX_GROUPS];
	int			in_flight;
	int			in_flight_closed;
	double		last_scan_end;
	double	   *group_read_at;
	Cpu		   *cpu;
	int		   *idle_cpus;
	int		   *idle_pos;		/* a CPU's place in idle_cpus, -1: busy */
	int			n_idle;

	RunqEntry  *runq;			/* a binary heap, earliest key first */
	int			rq_len;

	Event	   *heap;
	int			heap_len;
	int			heap_cap;

	/* ProcNumbers, first in first out as PostgreSQL 18 hands them out */
	int		   *free_procs;
	int			fp_head;
	int			fp_len;
	int			shared_spins_per_delay; /* ProcGlobal->spins_per_delay */

	/* insertpos_lck */
	double		pos_free_at;	/* when its holder lets it go */
	bool		pos_handover;	/* its line is on the way to a spinner */
	bool		pos_release_due;	/* an EV_POS_RELEASE is scheduled */
	int		   *spinners;
	int			n_spinners;

	/* WAL: reserved and written up to, in bytes, written as a fluid */
	double		inserted;
	double		written;
	double		written_at;

	/* group flush: the flush in progress and the one queued after it */
	double		flush_end;
	double		flush_upto;
	double		next_flush_end;
	double		next_flush_upto;

	/* the scenario's clock: scen_base at model time model_base */
	double		scale;			/* scenario s per model s */
	double		scen_base;
	double		model_base;
	uint64_t	clock_gen;		/* invalidates periodic events */
	double		last_checkpoint;	/* scenario s; -inf: none yet */
	int			checkpoints_locks;	/* all-lock acquisitions begun */

	Agent		agent;

	/* the sampler: non-idle backends, integrated over time */
	int			active;
	double		active_since;

	SimFigures	f;
	double		window_start;
	int			blocked;		/* backends in an acquisition that slept */
	double		blocked_since;
	double		idle_since;
	uint64_t	ext_lock_acq[SIM_MAX_LOCKS];
};

/* ---- event heap ---- */

static bool
event_before(const Event *a, const Event *b)
{
	if (a->time != b->time)
		return a->time < b->time;
	return a->seq < b->seq;
}

static void
schedule(Sim *sim, double time, int type, int id, uint64_t gen)
{
	int			i;

	if (sim->heap_len == sim->heap_cap)
	{
		sim->heap_cap *= 2;
		sim->heap = realloc(sim->heap, sizeof(Event) * sim->heap_cap);
	}
	i = sim->heap_len++;
	sim->heap[i].time = time;
	sim->heap[i].seq = sim->seq++;
	sim->heap[i].type = type;
	sim->heap[i].id = id;
	sim->heap[i].gen = gen;
	while (i > 0)
	{
		int			parent = (i - 1) / 2;
		Event		t;

		if (!event_before(&sim->heap[i], &sim->heap[parent]))
			break;
		t = sim->heap[i];
		sim->heap[i] = sim->heap[parent];
		sim->heap[parent] = t;
		i = parent;
	}
}

static Event
pop_event(Sim *sim)
{
	Event		top = sim->heap[0];
	int			i = 0;

	sim->heap[0] = sim->heap[--sim->heap_len];
	for (;;)
	{
		int			l = 2 * i + 1;
		int			r = l + 1;
		int			m = i;
		Event		t;

		if (l < sim->heap_len && event_before(&sim->heap[l], &sim->heap[m]))
			m = l;
		if (r < sim->heap_len && event_before(&sim->heap[r], &sim->heap[m]))
			m = r;
		if (m == i)
			break;
		t = sim->heap[i];
		sim->heap[i] = sim->heap[m];
		sim->heap[m] = t;
		i = m;
	}
	return top;
}

/* ---- the sampler ---- */

static void
set_active(Sim *sim, Backend *b, bool in_txn)
{
	if (b->in_txn == in_txn)
		return;
	sim->f.active_backend_ns += sim->active * (sim->now - sim->active_since);
	sim->active_since = sim->now;
	sim->active += in_txn ? 1 : -1;
	b->in_txn = in_txn;
}

/*
 * The core counts a wait's sleep when the lock is got; a window of the model
 * is far shorter than a real one, so the sleep is integrated as it passes
 * instead: the same sum over a long window, without the noise of waits that
 * straddle a short one.
 */
static void
set_blocked(Sim *sim, Backend *b, bool blocked)
{
	sim->f.blocked_ns += sim->blocked * (sim->now - sim->blocked_since);
	sim->blocked_since = sim->now;
	sim->blocked += blocked ? 1 : -1;
	b->slept = blocked;
}

/* ---- the scenario's clock ---- */

static double
scenario_now(Sim *sim)
{
	return sim->scen_base + (sim->now - sim->model_base) / 1e9 * sim->scale;
}

/* the model time at which the scenario's clock reads t */
static double
model_time_of(Sim *sim, double t)
{
	return sim->model_base + (t - sim->scen_base) / sim->scale * 1e9;
}

/* ---- the scheduler ---- */

/* integrate idle CPUs before their number changes */
static void
idle_change(Sim *sim)
{
	sim->f.idle_cpu_ns += sim->n_idle * (sim->now - sim->idle_since);
	sim->idle_since = sim->now;
}

static void run_backend(Sim *sim, int c);

static bool
runq_before(const RunqEntry *a, const RunqEntry *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	return a->seq < b->seq;
}

/*
 * A preempted backend queues behind those already runnable; one that wakes
 * goes ahead of those that queued less than wake_ahead_ns ago, as Linux
 * places a waking task ahead of those that ran (CFS by up to half its
 * scheduling latency, EEVDF by its lag), but never for ever ahead of a
 * backend that waits.  On a busy server wake_ahead_ns is about how long a
 * preempted backend waits for a CPU, its locks held.
 */
static void
runq_push(Sim *sim, int b, bool woken)
{
	int			i = sim->rq_len++;

	sim->runq[i].key = sim->now - (woken ? sim->p.wake_ahead_ns : 0);
	sim->runq[i].seq = sim->seq++;
	sim->runq[i].backend = b;
	while (i > 0)
	{
		int			parent = (i - 1) / 2;
		RunqEntry	t;

		if (!runq_before(&sim->runq[i], &sim->runq[parent]))
			break;
		t = sim->runq[i];
		sim->runq[i] = sim->runq[parent];
		sim->runq[parent] = t;
		i = parent;
	}
	sim->backends[b].state = BS_RUNQ;
}

static int
runq_pop(Sim *sim)
{
	int			b = sim->runq[0].backend;
	int			i = 0;

	sim->runq[0] = sim->runq[--sim->rq_len];
	for (;;)
	{
		int			l = 2 * i + 1;
		int			r = l + 1;
		int			m = i;
		RunqEntry	t;

		if (l < sim->rq_len && runq_before(&sim->runq[l], &sim->runq[m]))
			m = l;
		if (r < sim->rq_len && runq_before(&sim->runq[r], &sim->runq[m]))
			m = r;
		if (m == i)
			break;
		t = sim->runq[i];
		sim->runq[i] = sim->runq[m];
		sim->runq[m] = t;
		i = m;
	}
	return b;
}

static void
dispatch(Sim *sim, int c, int b)
{
	Cpu		   *cpu = &sim->cpu[c];

	cpu->backend = b;
	cpu->quantum_end = sim->now + sim->p.quantum_ns;
	cpu->dispatches++;
	/* its caches are cold if it moved, or another backend ran here since */
	sim->backends[b].cold = sim->backends[b].last_cpu != c ||
		sim->backends[b].last_dispatches + 1 != cpu->dispatches;
	sim->backends[b].last_cpu = c;
	sim->backends[b].last_dispatches = cpu->dispatches;
	sim->backends[b].state = BS_RUNNING;
	run_backend(sim, c);
}

/* the backend on CPU c left it: run the next one, or idle */
static void
cpu_next(Sim *sim, int c)
{
	sim->cpu[c].backend = -1;
	sim->cpu[c].gen++;
	if (sim->rq_len > 0)
		dispatch(sim, c, runq_pop(sim));
	else
	{
		idle_change(sim);
		sim->idle_pos[c] = sim->n_idle;
		sim->idle_cpus[sim->n_idle++] = c;
	}
}

/* take CPU c off the idle list */
static void
take_idle(Sim *sim, int c)
{
	int			pos = sim->idle_pos[c];
	int			last = sim->idle_cpus[--sim->n_idle];

	sim->idle_cpus[pos] = last;
	sim->idle_pos[last] = pos;
	sim->idle_pos[c] = -1;
}

/* a sleeping or new backend becomes runnable */
static void
make_ready(Sim *sim, int b)
{
	if (sim->n_idle > 0)
	{
		Backend    *bk = &sim->backends[b];
		int			c;

		/* Linux wakes a task on its last CPU when that one is idle */
		if (bk->last_cpu >= 0 && sim->idle_pos[bk->last_cpu] >= 0)
			c = bk->last_cpu;
		else
			c = sim->idle_cpus[sim->n_idle - 1];
		idle_change(sim);
		take_idle(sim, c);
		dispatch(sim, c, b);
	}
	else
		runq_push(sim, b, true);
}

/* the backend on CPU c goes on with sim->backends[b].remaining of CPU */
static void
burst(Sim *sim, int c)
{
	Cpu		   *cpu = &sim->cpu[c];
	Backend    *b = &sim->backends[cpu->backend];
	double		end = sim->now + b->remaining;

	cpu->burst_start = sim->now;
	cpu->gen++;
	if (end > cpu->quantum_end)
		end = cpu->quantum_end;
	schedule(sim, end, EV_CPU, c, cpu->gen);
}

static double
jitter(Sim *sim, double mean)
{
	/* uniform within half of the mean either side: work is regular */
	return mean * (0.5 + rng_double(&sim->rng));
}

/* ---- lock cache lines ---- */

/* process who (a backend, or the agent) wrote lock l's line */
static void
lock_written(Sim *sim, int l, int who)
{
	sim->lock_written_at[l] = sim->now;
	sim->lock_written_by[l] = who;
}

/*
 * WaitXLogInsertionsToFinish() by backend bi, as core patch 0006 has it.
 * Every insertion marks its lock's group (SIM_LOCK_GROUP consecutive locks)
 * in the open epoch, under insertpos_lck, which it holds anyway.  A flusher,
 * under insertpos_lck, closes the open epoch if every insertion of the one
 * closed last has finished: the open epoch becomes the closed one, and a new
 * one opens.  It then visits only the locks of the groups marked in the open
 * or the closed epoch, paying the patched loop's instructions for each, and
 * a transfer for each whose line another process wrote since bi last read
 * it, that is since bi last visited its group; the other locks cost nothing.
 *
 * "Every insertion of the closed epoch has finished" is the core's
 * logInsertResult having passed the position at which it was closed, which
 * a flusher's scan advances once no insertion before that position is in
 * flight.  The model has it as: no insertion that reserved before the last
 * close still holds its lock, and the scan of the flush before this one has
 * ended.  With flush_visits_all, every active lock is visited, as without
 * patch 0006.  The scan of the two bitmap words and the flusher's own
 * acquisition of insertpos_lck are not modelled.
 */
static double
visit_locks(Sim *sim, int bi)
{
	double	   *read_at = &sim->group_read_at[(size_t) bi * SIM_MAX_GROUPS];
	int			groups = (sim->locks + SIM_LOCK_GROUP - 1) / SIM_LOCK_GROUP;
	double		cost = 0;
	int			visited = 0;

	if (sim->in_flight_closed == 0 && sim->now >= sim->last_scan_end)
	{
		/* close the open epoch: all in flight now reserved before it */
		sim->epoch++;
		sim->in_flight_closed = sim->in_flight;
	}
	for (int g = 0; g < groups; g++)
	{
		int			last = Min((g + 1) * SIM_LOCK_GROUP, sim->locks);

		if (!sim->p.flush_visits_all && sim->group_marked[g] < sim->epoch - 1)
			continue;
		for (int l = g * SIM_LOCK_GROUP; l < last; l++)
		{
			cost += sim->p.visit_ns;
			if (sim->lock_written_at[l] > read_at[g] &&
				sim->lock_written_by[l] != bi)
				cost += sim->p.xfer_ns;
		}
		visited += last - g * SIM_LOCK_GROUP;
		read_at[g] = sim->now;
	}
	sim->last_scan_end = sim->now + cost;
	sim->f.visits++;
	sim->f.visited_locks += visited;
	sim->f.visit_ns += cost;
	return cost;
}

/* an insertion of backend b has let its lock go */
static void
insertion_done(Sim *sim, Backend *b)
{
	sim->in_flight--;
	if (b->epoch < sim->epoch)
		sim->in_flight_closed--;
}

/* ---- insertpos_lck ---- */

/* the bytes the record being inserted reserves */
static double
record_bytes(Sim *sim, Backend *b)
{
	return sim->p.record_bytes + (b->fpi ? sim->p.fpi_bytes : 0);
}

/*
 * Backend b holds insertpos_lck from now: it reserves, and after lead_ns
 * (getting the line) and the critical section, copies the record with its
 * insertion lock held.
 */
static void
pos_got(Sim *sim, Backend *b, double lead_ns)
{
	sim->inserted += record_bytes(sim, b);
	b->lsn = sim->inserted;
	/* patch 0006: mark the lock's group in the open epoch */
	sim->group_marked[b->lock / SIM_LOCK_GROUP] = sim->epoch;
	b->epoch = sim->epoch;
	sim->in_flight++;
	b->phase = PH_HOLD;
	b->remaining = lead_ns + sim->p.pos_cs_ns +
		jitter(sim, sim->p.hold_ns) + (b->fpi ? sim->p.fpi_copy_ns : 0);
}

/* finish_spin_delay() */
static void
pos_finish_delay(Backend *b)
{
	if (!b->in_slock)
		return;
	if (!b->delayed)
		b->spins_per_delay = Min(b->spins_per_delay + 100, MAX_SPINS_PER_DELAY);
	else
		b->spins_per_delay = Max(b->spins_per_delay - 1, MIN_SPINS_PER_DELAY);
	b->in_slock = false;
	b->delayed = false;
	b->cur_delay_us = 0;
}

static void
pos_release_due(Sim *sim)
{
	if (sim->pos_handover || sim->pos_release_due)
		return;
	sim->pos_release_due = true;
	schedule(sim, Max(sim->now, sim->pos_free_at), EV_POS_RELEASE, 0, 0);
}

static void
spinner_add(Sim *sim, int bi)
{
	Backend    *b = &sim->backends[bi];

	b->spin_idx = sim->n_spinners;
	sim->spinners[sim->n_spinners++] = bi;
	b->spin_since = sim->now;
	pos_release_due(sim);
}

static void
spinner_remove(Sim *sim, int bi)
{
	Backend    *b = &sim->backends[bi];
	int			last = sim->spinners[--sim->n_spinners];

	sim->spinners[b->spin_idx] = last;
	sim->backends[last].spin_idx = b->spin_idx;
	b->spin_idx = -1;
	sim->f.spin_ns += sim->now - b->spin_since;
}

/*
 * SpinLockAcquire(&Insert->insertpos_lck) by backend bi, running: true if
 * it got the lock (and goes on with PH_HOLD); false if it spins (PH_SPIN).
 * fresh_budget: a new round of spins_per_delay turns (a first attempt, or
 * after a sleep); otherwise the round a preemption interrupted goes on.
 */
static bool
pos_acquire(Sim *sim, int bi, bool fresh_budget)
{
	Backend    *b = &sim->backends[bi];

	if (sim->p.pos_lock_free)
	{
		/*
		 * An atomic fetch-add on CurrBytePos: the line still goes from core
		 * to core, one at a time, but nobody spins or sleeps.
		 */
		double		start = Max(sim->now, sim->pos_free_at);

		sim->pos_free_at = start + sim->p.xfer_ns;
		pos_got(sim, b, start - sim->now + sim->p.xfer_ns);
		return true;
	}
	if (!sim->pos_handover && sim->now >= sim->pos_free_at)
	{
		/* the test-and-set wins: the line comes from the last holder */
		sim->pos_free_at = sim->now + sim->p.xfer_ns + sim->p.pos_cs_ns;
		pos_finish_delay(b);
		pos_got(sim, b, sim->p.xfer_ns);
		return true;
	}
	if (!b->in_slock)
	{
		b->in_slock = true;
		b->delayed = false;
		b->cur_delay_us = 0;
		sim->f.pos_contended++;
		fresh_budget = true;
	}
	b->phase = PH_SPIN;
	if (fresh_budget)
		b->remaining = b->spins_per_delay * sim->p.pos_spin_ns;
	spinner_add(sim, bi);
	return false;
}

/* the holder's critical section ended: start a hand-over to a spinner */
static void
on_pos_release(Sim *sim)
{
	sim->pos_release_due = false;
	if (sim->pos_handover || sim->n_spinners == 0)
		return;
	if (sim->now < sim->pos_free_at)
	{
		/* a newcomer took it meanwhile */
		pos_release_due(sim);
		return;
	}
	sim->pos_handover = true;
	schedule(sim, sim->now + sim->p.xfer_ns *
			 (1.0 + sim->p.pos_beta * sim->n_spinners),
			 EV_POS_HANDOVER, 0, 0);
}

/* the line reached the spinners: one of those still spinning wins */
static void
on_pos_handover(Sim *sim)
{
	int			wi;
	Backend    *w;
	int			c;

	sim->pos_handover = false;
	if (sim->n_spinners == 0)
	{
		sim->pos_free_at = sim->now;
		return;
	}
	wi = sim->spinners[rng_range(&sim->rng, sim->n_spinners)];
	w = &sim->backends[wi];
	spinner_remove(sim, wi);
	c = w->last_cpu;
	sim->pos_free_at = sim->now + sim->p.pos_cs_ns;
	pos_finish_delay(w);
	pos_got(sim, w, 0);
	burst(sim, c);
	if (sim->n_spinners > 0)
		pos_release_due(sim);
}

/* ---- insertion locks ---- */

static int
gcd(int a, int b)
{
	while (b != 0)
	{
		int			t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* wake lock l's first waiter, if a release may */
static void wake_next(Sim *sim, int l);

/*
 * Backend bi has just taken lock l: WALInsertLockInEffect().  If the count
 * changed since bi last looked, its preferred lock becomes ProcNumber
 * modulo the new count, and l is let go unless it is that lock: false, and
 * bi chooses again.
 */
static bool
take_lock(Sim *sim, int bi, int l)
{
	Backend    *b = &sim->backends[bi];

	sim->lock[l].holder = bi;
	lock_written(sim, l, bi);
	b->lock = l;
	if (b->locks_seen == sim->locks)
		return true;
	b->locks_seen = sim->locks;
	b->lock_to_try = b->procno % sim->locks;
	b->stride = 0;
	if (l == b->lock_to_try)
		return true;
	sim->lock[l].holder = -1;
	wake_next(sim, l);
	return false;
}

/* lock l, taken and in effect, is backend bi's: reserve WAL, then copy */
static void
acquired(Sim *sim, int bi, int l, bool contended)
{
	Backend    *b = &sim->backends[bi];

	b->hold_since = sim->now;
	sim->f.acquisitions++;
	sim->ext_lock_acq[l]++;
	if (b->slept)
	{
		sim->f.blocking_waits++;
		sim->f.sleeps += b->sleeps;
		b->sleeps = 0;
		set_blocked(sim, b, false);
	}
	/* after a sleep, stock tries the next lock next time */
	b->lock_to_try = contended ? (l + 1) % b->locks_seen : l;
	pos_acquire(sim, bi, true);
}

static void
lock_sleep(Sim *sim, int bi, int l)
{
	Backend    *b = &sim->backends[bi];
	Lock	   *lk = &sim->lock[l];

	lk->queue[(lk->qhead + lk->qlen) % (sim->p.max_clients + 1)] = bi;
	lk->qlen++;
	b->lock = l;
	b->sleeps++;
	if (!b->slept)
		set_blocked(sim, b, true);
	b->state = BS_LOCKWAIT;
	b->phase = PH_WOKEN;
}

/*
 * WALInsertLockAcquire() of the core patch.  Returns true when the backend
 * got a lock (and goes on with insertpos_lck), false when it sleeps.
 */
static bool
lock_acquire(Sim *sim, int bi)
{
	Backend    *b = &sim->backends[bi];

	for (;;)
	{
		int			n;
		int			l;
		int			attempts;
		bool		retry = false;

		if (b->lock_to_try < 0)
		{
			b->locks_seen = sim->locks;
			b->lock_to_try = b->procno % b->locks_seen;
		}
		n = b->locks_seen;
		l = b->lock_to_try;
		if (sim->lock[l].holder < 0)
		{
			if (take_lock(sim, bi, l))
			{
				acquired(sim, bi, l, false);
				return true;
			}
			continue;
		}

		attempts = Min(sim->p.attempts, n - 1);
		if (attempts > 0)
		{
			if (b->stride == 0)
			{
				do
					b->stride = 1 + (int) rng_range(&sim->rng, n - 1);
				while (gcd(b->stride, n) != 1);
			}
			for (int failed = 1; failed <= attempts; failed++)
			{
				/* the last is LWLockAcquire()'s attempt before it queues */
				l = (l + b->stride) % n;
				if (sim->lock[l].holder < 0)
				{
					if (take_lock(sim, bi, l))
					{
						acquired(sim, bi, l, false);
						return true;
					}
					retry = true;
					break;
				}
			}
			if (retry)
				continue;
		}
		lock_sleep(sim, bi, l);
		return false;
	}
}

/* wake lock l's first waiter, if a release may */
static void
wake_next(Sim *sim, int l)
{
	Lock	   *lk = &sim->lock[l];
	int			w;

	if (lk->qlen == 0 || !lk->release_ok)
		return;
	w = lk->queue[lk->qhead];
	lk->qhead = (lk->qhead + 1) % (sim->p.max_clients + 1);
	lk->qlen--;
	lk->release_ok = false;
	if (w == sim->agent_id)
		schedule(sim, sim->now + sim->p.wake_ns, EV_AGENT, 0, 0);
	else
	{
		sim->backends[w].state = BS_WAITING;
		schedule(sim, sim->now + sim->p.wake_ns, EV_READY, w, 0);
	}
}

static void
lock_release(Sim *sim, int l, int who)
{
	sim->lock[l].holder = -1;
	lock_written(sim, l, who);
	wake_next(sim, l);
}

/* ---- the agent: processes that take every lock ---- */

static void agent_step(Sim *sim);

/*
 * A job for the agent.  A periodic call skips its turn while the agent is
 * still at work (optional): bgwriter makes its next call only once the last
 * returned.
 */
static void
agent_submit(Sim *sim, JobKind kind, int target, bool optional)
{
	Agent	   *a = &sim->agent;

	if (optional && (a->busy || a->queued > 0))
	{
		sim->f.each_lock_skipped++;
		return;
	}
	if (a->queued < MAX_JOBS)
	{
		a->queue_kind[a->queued] = kind;
		a->queue_target[a->queued] = target;
		a->queued++;
	}
	if (!a->busy)
		agent_step(sim);
}

/* the next job, if any */
static void
agent_begin(Sim *sim)
{
	Agent	   *a = &sim->agent;

	if (a->queued == 0)
	{
		a->busy = false;
		return;
	}
	a->busy = true;
	a->kind = a->queue_kind[0];
	a->target = a->queue_target[0];
	a->queued--;
	memmove(a->queue_kind, a->queue_kind + 1, sizeof(JobKind) * a->queued);
	memmove(a->queue_target, a->queue_target + 1, sizeof(int) * a->queued);
	a->n = sim->locks;
	a->next = 0;
	a->releasing = false;
	a->waiting = false;
	a->started = sim->now;
}

/* the job is done */
static void
agent_finish(Sim *sim)
{
	Agent	   *a = &sim->agent;

	if (a->kind == JOB_EACH || a->kind == JOB_EACH_LOCKED)
	{
		sim->f.each_lock_runs++;
		sim->f.each_lock_ns += sim->now - a->started;
	}
	else
	{
		sim->f.all_lock_runs++;
		sim->f.all_lock_ns += sim->now - a->started;
	}
	a->busy = false;
}

/*
 * GetLastImportantRecPtr() without locks, as patch 0005 has it where 8-byte
 * reads are single-copy atomic: a full barrier, the number of active locks,
 * a read barrier (lock_op_ns for the three), then one read of each active
 * lock's lastImportantAt: the patched loop's instructions per lock
 * (visit_ns, as a flush's loop) and a transfer for each line another process
 * wrote since the agent last read it.  It waits for no holder and queues on
 * no lock; the reads are taken at its start.  Returns its duration.
 */
static double
read_each_lock(Sim *sim)
{
	double		cost = sim->p.lock_op_ns;

	for (int l = 0; l < sim->locks; l++)
	{
		cost += sim->p.visit_ns;
		if (sim->lock_written_at[l] > sim->agent_read_at[l] &&
			sim->lock_written_by[l] != sim->agent_id)
			cost += sim->p.xfer_ns;
		sim->agent_read_at[l] = sim->now;
	}
	return cost;
}

/*
 * One step: take the next lock (or queue on it), or, all taken, do the
 * job's work and release them in reverse order, one per step.  Each
 * acquisition writes a line another process wrote: lock_op_ns and a
 * transfer; a release writes a line the agent holds: lock_op_ns.  A
 * lock-free GetLastImportantRecPtr() is one step, and its end.
 */
static void
agent_step(Sim *sim)
{
	Agent	   *a = &sim->agent;

	if (!a->busy)
	{
		agent_begin(sim);
		if (!a->busy)
			return;
	}
	if (a->kind == JOB_EACH)
	{
		if (a->next == 0)
		{
			a->next = a->n;
			schedule(sim, sim->now + read_each_lock(sim), EV_AGENT, 0, 0);
			return;
		}
		agent_finish(sim);
		agent_step(sim);
		return;
	}
	if (a->waiting)
	{
		/* woken by a release, as a backend in PH_RETRY */
		a->waiting = false;
		sim->lock[a->next].release_ok = true;
	}
	if (a->releasing)
	{
		if (a->next < 0)
		{
			agent_finish(sim);
			agent_step(sim);
			return;
		}
		lock_release(sim, a->next, sim->agent_id);
		a->next--;
		schedule(sim, sim->now + sim->p.lock_op_ns, EV_AGENT, 0, 0);
		return;
	}
	if (a->next < a->n)
	{
		Lock	   *lk = &sim->lock[a->next];

		if (lk->holder >= 0)
		{
			lk->queue[(lk->qhead + lk->qlen) % (sim->p.max_clients + 1)] =
				sim->agent_id;
			lk->qlen++;
			a->waiting = true;
			return;
		}
		lk->holder = sim->agent_id;
		lock_written(sim, a->next, sim->agent_id);
		sim->agent_read_at[a->next] = sim->now;
		if (a->kind == JOB_EACH_LOCKED)
		{
			/* read lastImportantAt and let it go */
			lock_release(sim, a->next, sim->agent_id);
			schedule(sim, sim->now + 2 * sim->p.lock_op_ns + sim->p.xfer_ns,
					 EV_AGENT, 0, 0);
		}
		else
			schedule(sim, sim->now + sim->p.lock_op_ns + sim->p.xfer_ns,
					 EV_AGENT, 0, 0);
		a->next++;
		return;
	}
	if (a->kind == JOB_EACH_LOCKED)
	{
		agent_finish(sim);
		agent_step(sim);
		return;
	}
	/* all held: the job's own work, then release from the last */
	/* backends see the new count at their next acquisition (take_lock) */
	if (a->kind == JOB_RESIZE)
		sim->locks = a->target;
	a->releasing = true;
	a->next = a->n - 1;
	schedule(sim, sim->now + (a->kind == JOB_CHECKPOINT ?
							  sim->p.all_locks_hold_ns : sim->p.lock_op_ns),
			 EV_AGENT, 0, 0);
}

/* ---- WAL writing ---- */

/* bring the written position up to now: the writer is a fluid at full speed */
static void
advance_written(Sim *sim)
{
	double		w = sim->written +
		(sim->now - sim->written_at) * sim->p.write_bytes_per_ns;

	sim->written = Min(w, sim->inserted);
	sim->written_at = sim->now;
}

/* when WAL will be written up to upto, at the writer's speed */
static double
written_by(Sim *sim, double upto)
{
	advance_written(sim);
	if (sim->written >= upto)
		return sim->now;
	return sim->now + (upto - sim->written) / sim->p.write_bytes_per_ns;
}

/*
 * A commit at lsn waits for a flush: the one in progress covers it if it
 * started after lsn was inserted; otherwise it joins the next, which starts
 * when the one in progress ends (group commit).
 */
static double
flush_done(Sim *sim, double lsn)
{
	if (sim->now >= sim->flush_end && sim->next_flush_end > sim->flush_end)
	{
		sim->flush_end = sim->next_flush_end;
		sim->flush_upto = sim->next_flush_upto;
	}
	if (lsn <= sim->flush_upto)
		return Max(sim->flush_end, sim->now);
	if (sim->now >= sim->flush_end)
	{
		sim->flush_upto = sim->inserted;
		sim->flush_end = written_by(sim, sim->inserted) + sim->p.fsync_ns;
		return sim->flush_end;
	}
	if (sim->next_flush_end <= sim->flush_end)
		sim->next_flush_end = Max(sim->flush_end,
								  written_by(sim, sim->inserted)) +
			sim->p.fsync_ns;
	sim->next_flush_upto = sim->inserted;
	return sim->next_flush_end;
}

/* ---- backends ---- */

static void
wait_until(Sim *sim, int bi, double t)
{
	Backend    *b = &sim->backends[bi];

	b->state = BS_WAITING;
	b->ready_at = t;
	schedule(sim, t, EV_READY, bi, 0);
}

static int
take_procno(Sim *sim)
{
	int			p = sim->free_procs[sim->fp_head];

	sim->fp_head = (sim->fp_head + 1) % sim->p.max_connections;
	sim->fp_len--;
	return p;
}

static void
give_procno(Sim *sim, int p)
{
	sim->free_procs[(sim->fp_head + sim->fp_len) % sim->p.max_connections] = p;
	sim->fp_len++;
}

/*
 * Whether the next record carries a full-page image: after a checkpoint,
 * the first change of each page does; the share of records that find their
 * page not yet changed decays as the pages are changed.
 */
static bool
draw_fpi(Sim *sim)
{
	double		since;

	if (sim->p.fpi_share <= 0 || sim->last_checkpoint == -INFINITY)
		return false;
	since = scenario_now(sim) - sim->last_checkpoint;
	return rng_double(&sim->rng) <
		sim->p.fpi_share * exp(-since / sim->p.fpi_tau_s);
}

/* CPU before the next record, drawing whether it carries an image */
static double
record_work(Sim *sim, Backend *b)
{
	b->fpi = draw_fpi(sim);
	if (b->fpi)
		sim->f.fpis++;
	return jitter(sim, sim->p.record_cpu_ns) +
		(b->fpi ? sim->p.fpi_cpu_ns : 0);
}

/* s_lock's pg_usleep(): the spinner gives up its CPU, its locks held */
static void
pos_sleep(Sim *sim, int bi, int c)
{
	Backend    *b = &sim->backends[bi];
	double		ns;

	if (b->cur_delay_us == 0)
		b->cur_delay_us = MIN_DELAY_USEC;
	ns = b->cur_delay_us * 1e3;
	/* increase delay by a random fraction between 1X and 2X */
	b->cur_delay_us += (int) (b->cur_delay_us * rng_double(&sim->rng) + 0.5);
	if (b->cur_delay_us > MAX_DELAY_USEC)
		b->cur_delay_us = MIN_DELAY_USEC;
	b->delayed = true;
	sim->f.pos_sleeps++;
	sim->f.pos_sleep_ns += ns;
	b->phase = PH_SPIN_WOKEN;
	wait_until(sim, bi, sim->now + ns);
	cpu_next(sim, c);
}

/*
 * Step the backend on CPU c through its phases until it starts a burst of
 * CPU (scheduled) or leaves the CPU.
 */
static void
run_backend(Sim *sim, int c)
{
	int			bi = sim->cpu[c].backend;
	Backend    *b = &sim->backends[bi];

	for (;;)
	{
		switch (b->phase)
		{
			case PH_START:
				set_active(sim, b, true);
				b->records_left = sim->p.records_per_txn;
				if (b->mid_txn)
				{
					b->records_left = 1 + (int) rng_range(&sim->rng,
														  sim->p.records_per_txn);
					b->mid_txn = false;
				}
				b->phase = PH_WORK;
				b->remaining = record_work(sim, b);
				if (sim->p.unpooled && !b->connected)
				{
					b->procno = take_procno(sim);
					b->connected = true;
					b->lock_to_try = -1;
					b->stride = 0;
					b->spins_per_delay = sim->shared_spins_per_delay;
					b->remaining += sim->p.connect_cpu_ns;
				}
				break;

			case PH_WORK:
				if (b->remaining > 0)
					break;
				if (!lock_acquire(sim, bi))
				{
					cpu_next(sim, c);
					return;
				}
				break;

			case PH_WOKEN:
				/* the switch back in; the cold caches are paid after */
				b->phase = PH_RETRY;
				b->remaining = Min(sim->p.sleep_cpu_ns, SWITCH_CPU_NS);
				if (b->cold)
					b->cold_ns += sim->p.sleep_cpu_ns - b->remaining;
				break;

			case PH_RETRY:
				if (b->remaining > 0)
					break;
				sim->lock[b->lock].release_ok = true;
				if (sim->lock[b->lock].holder < 0)
				{
					/* a count changed while it slept sends it elsewhere */
					if (take_lock(sim, bi, b->lock))
						acquired(sim, bi, b->lock, true);
					else if (!lock_acquire(sim, bi))
					{
						cpu_next(sim, c);
						return;
					}
				}
				else
				{
					lock_sleep(sim, bi, b->lock);
					cpu_next(sim, c);
					return;
				}
				break;

			case PH_SPIN:
				if (b->spin_idx < 0)
				{
					/* back on a CPU after a preemption: spin on */
					pos_acquire(sim, bi, false);
					break;
				}
				if (b->remaining > 0)
					break;
				/* spins_per_delay turns without the lock: sleep */
				spinner_remove(sim, bi);
				pos_sleep(sim, bi, c);
				return;

			case PH_SPIN_WOKEN:
				b->phase = PH_SPIN_RETRY;
				b->remaining = Min(sim->p.sleep_cpu_ns, SWITCH_CPU_NS);
				if (b->cold)
					b->cold_ns += sim->p.sleep_cpu_ns - b->remaining;
				break;

			case PH_SPIN_RETRY:
				if (b->remaining > 0)
					break;
				pos_acquire(sim, bi, true);
				break;

			case PH_HOLD:
				if (b->remaining > 0)
					break;
				/* a full ring of buffers: write some out, lock held */
				b->phase = PH_RELEASE;
				if (b->lsn - sim->p.wal_buffers > sim->written)
				{
					advance_written(sim);
					if (b->lsn - sim->p.wal_buffers > sim->written)
					{
						/*
						 * The record's page is not free yet.  The backend
						 * that crosses into it replaces the buffer, and
						 * visits every lock first (WaitXLogInsertionsToFinish
						 * in AdvanceXLInsertBuffer); the others wait too.
						 */
						bool		crosses = floor(b->lsn / WAL_PAGE_BYTES) !=
							floor((b->lsn - record_bytes(sim, b)) / WAL_PAGE_BYTES);

						b->phase = PH_BUFFER;
						b->remaining = crosses ? visit_locks(sim, bi) : 0;
					}
				}
				break;

			case PH_BUFFER:
				if (b->remaining > 0)
					break;
				{
					double		t = written_by(sim, b->lsn - sim->p.wal_buffers);

					b->phase = PH_RELEASE;
					if (t > sim->now)
					{
						sim->f.write_wait_ns += t - sim->now;
						wait_until(sim, bi, t);
						cpu_next(sim, c);
						return;
					}
				}
				break;

			case PH_RELEASE:
				sim->f.hold_ns += sim->now - b->hold_since;
				insertion_done(sim, b);
				lock_release(sim, b->lock, bi);
				if (b->records_left > 0)
				{
					b->records_left--;
					b->phase = PH_WORK;
					if (b->records_left > 0)
						b->remaining = b->cold_ns + record_work(sim, b);
					else
					{
						/* the commit record: never an image */
						b->fpi = false;
						b->remaining = b->cold_ns +
							jitter(sim, sim->p.commit_cpu_ns);
					}
					b->cold_ns = 0;
				}
				else if (sim->p.sync_commit)
				{
					b->phase = PH_FLUSH;
					b->remaining = visit_locks(sim, bi);
				}
				else
					b->phase = PH_END;
				break;

			case PH_FLUSH:
				if (b->remaining > 0)
					break;
				b->phase = PH_END;
				{
					double		t = flush_done(sim, b->lsn);

					if (t > sim->now)
					{
						wait_until(sim, bi, t);
						cpu_next(sim, c);
						return;
					}
				}
				break;

			case PH_END:
				sim->f.transactions++;
				set_active(sim, b, false);
				b->phase = PH_START;
				if (sim->p.unpooled)
				{
					/* ProcKill(): update_spins_per_delay() */
					sim->shared_spins_per_delay =
						(sim->shared_spins_per_delay * 15 +
						 b->spins_per_delay) / 16;
					give_procno(sim, b->procno);
					b->connected = false;
				}
				if (bi >= sim->clients)
				{
					b->state = BS_IDLE;
					cpu_next(sim, c);
					return;
				}
				if (sim->p.think_ns > 0)
				{
					wait_until(sim, bi, sim->now + jitter(sim, sim->p.think_ns));
					cpu_next(sim, c);
					return;
				}
				break;
		}
		if (b->remaining > 0)
		{
			burst(sim, c);
			return;
		}
	}
}

static void
on_cpu_event(Sim *sim, int c)
{
	Cpu		   *cpu = &sim->cpu[c];
	int			bi = cpu->backend;
	Backend    *b = &sim->backends[bi];

	b->remaining -= sim->now - cpu->burst_start;

	/*
	 * Done when what is left is under a femtosecond, or too little to move
	 * the clock: past 2^33 ns of model time (8.6 s) a double's step exceeds
	 * 1e-6 ns, a burst of less than half a step would end at now itself, and
	 * the backend would loop on it with the clock stopped.
	 */
	if (b->remaining <= 1e-6 || sim->now + b->remaining == sim->now)
	{
		b->remaining = 0;
		run_backend(sim, c);
		return;
	}
	/* the quantum ended */
	if (sim->rq_len > 0)
	{
		/* a preempted spinner stops spinning, its locks held */
		if (b->spin_idx >= 0)
			spinner_remove(sim, bi);
		runq_push(sim, bi, false);
		cpu_next(sim, c);
		return;
	}
	cpu->quantum_end = sim->now + sim->p.quantum_ns;
	burst(sim, c);
}

/* ---- checkpoints and bgwriter ---- */

/*
 * Checkpoints follow two clocks.  Their full-page images follow the
 * scenario's: after each checkpoint_s of it, records find their pages
 * unchanged since the checkpoint, for a while of the scenario's time.
 * Their all-lock acquisitions, and bgwriter's GetLastImportantRecPtr(),
 * follow model time, every checkpoint_locks_s (default checkpoint_s) and
 * bgwriter_s of it: each lasts what it lasts in model time.  The scenarios
 * set checkpoint_locks_s to checkpoint_s compressed as auto mode's windows
 * are, so that a checkpoint comes as often per window as on a server and
 * its stall weighs on a window as many times more as the window is
 * compressed (sim/README.md).  sim_take_all_locks() and
 * sim_get_last_important() run one on demand.
 */
static void
schedule_periodic(Sim *sim)
{
	double		t = scenario_now(sim);

	sim->clock_gen++;
	if (sim->p.checkpoint_s > 0)
	{
		/* half a period out of step with the windows */
		double		next = (floor(t / sim->p.checkpoint_s - 0.5) + 1.5) *
			sim->p.checkpoint_s;

		schedule(sim, model_time_of(sim, next), EV_CHECKPOINT, 0,
				 sim->clock_gen);
	}
}

/* a checkpoint on the scenario's clock: its full-page images begin */
static void
on_checkpoint(Sim *sim)
{
	sim->last_checkpoint = scenario_now(sim);
	schedule(sim, model_time_of(sim, scenario_now(sim) + sim->p.checkpoint_s),
			 EV_CHECKPOINT, 0, sim->clock_gen);
}

/* the all-lock acquisitions' period in model time */
static double
checkpoint_locks_period(Sim *sim)
{
	return sim->p.checkpoint_locks_s > 0 ? sim->p.checkpoint_locks_s :
		sim->p.checkpoint_s;
}

/*
 * A checkpoint in model time, CreateCheckPoint(): GetLastImportantRecPtr()
 * to see whether anything happened, then WALInsertLockAcquireExclusive()
 * to fix the redo pointer.
 */
static void
on_checkpoint_locks(Sim *sim)
{
	agent_submit(sim, JOB_EACH, 0, false);
	agent_submit(sim, JOB_CHECKPOINT, 0, false);
	sim->checkpoints_locks++;
	schedule(sim, sim->now + checkpoint_locks_period(sim) * 1e9,
			 EV_CHECKPOINT_LOCKS, 0, 0);
}

/* bgwriter's standby snapshot check (LOG_SNAPSHOT_INTERVAL_MS) */
static void
on_bgwriter(Sim *sim)
{
	agent_submit(sim, JOB_EACH, 0, true);
	schedule(sim, sim->now + sim->p.bgwriter_s * 1e9, EV_BGWRITER, 0, 0);
}

/* ---- the interface ---- */

Sim *
sim_create(const SimParams *params, int clients, int locks, uint64_t seed)
{
	Sim		   *sim = calloc(1, sizeof(Sim));
	int			n = params->max_clients;

	sim->p = *params;
	if (sim->p.max_connections < n)
		sim->p.max_connections = n;
	rng_seed(&sim->rng, seed);
	sim->agent_id = n;
	sim->backends = calloc(n, sizeof(Backend));
	sim->cpu = calloc(params->cpus, sizeof(Cpu));
	sim->idle_cpus = calloc(params->cpus, sizeof(int));
	sim->idle_pos = calloc(params->cpus, sizeof(int));
	sim->runq = calloc(n, sizeof(RunqEntry));
	/* CFS: half of sched_latency, 6 ms * (1 + log2(min(cpus, 8))) */
	sim->spinners = calloc(n, sizeof(int));
	sim->group_read_at = calloc((size_t) n * SIM_MAX_GROUPS, sizeof(double));
	/* no group marked yet, in the open epoch or the closed one */
	for (int g = 0; g < SIM_MAX_GROUPS; g++)
		sim->group_marked[g] = -2;
	sim->heap_cap = 1024;
	sim->heap = malloc(sizeof(Event) * sim->heap_cap);
	sim->free_procs = calloc(sim->p.max_connections, sizeof(int));
	for (int i = 0; i < sim->p.max_connections; i++)
		sim->free_procs[i] = i;
	sim->fp_len = sim->p.max_connections;
	sim->shared_spins_per_delay = DEFAULT_SPINS_PER_DELAY;
	for (int i = 0; i < SIM_MAX_LOCKS; i++)
	{
		sim->lock[i].holder = -1;
		sim->lock[i].release_ok = true;
		/* the backends and the agent */
		sim->lock[i].queue = calloc(n + 1, sizeof(int));
		sim->lock_written_by[i] = -1;
	}
	for (int c = params->cpus - 1; c >= 0; c--)
	{
		sim->cpu[c].backend = -1;
		sim->idle_pos[c] = sim->n_idle;
		sim->idle_cpus[sim->n_idle++] = c;
	}
	for (int i = 0; i < n; i++)
	{
		Backend    *b = &sim->backends[i];

		b->state = BS_IDLE;
		b->phase = PH_START;
		b->procno = i;
		b->lock_to_try = -1;
		b->lock = -1;
		b->last_cpu = -1;
		b->spin_idx = -1;
		b->spins_per_delay = DEFAULT_SPINS_PER_DELAY;
	}
	sim->locks = locks;
	sim->clients = 0;
	sim->scale = 1.0;
	sim->last_checkpoint = -INFINITY;
	schedule_periodic(sim);
	if (sim->p.checkpoint_s > 0)
		schedule(sim, (sim->p.checkpoint_locks_first_s > 0 ?
					   sim->p.checkpoint_locks_first_s :
					   checkpoint_locks_period(sim)) * 1e9,
				 EV_CHECKPOINT_LOCKS, 0, 0);
	if (sim->p.bgwriter_s > 0)
		schedule(sim, sim->p.bgwriter_s * 1e9, EV_BGWRITER, 0, 0);
	sim_set_clients(sim, clients);

	/*
	 * The first clients find the server in its steady state: each is
	 * somewhere in a transaction, not all at its start, so that the first
	 * commits do not wait for a whole round of transactions.
	 */
	for (int i = 0; i < sim->clients; i++)
		sim->backends[i].mid_txn = true;
	sim->f.locks = locks;
	return sim;
}

void
sim_free(Sim *sim)
{
	for (int i = 0; i < SIM_MAX_LOCKS; i++)
		free(sim->lock[i].queue);
	free(sim->backends);
	free(sim->cpu);
	free(sim->idle_cpus);
	free(sim->idle_pos);
	free(sim->runq);
	free(sim->spinners);
	free(sim->group_read_at);
	free(sim->heap);
	free(sim->free_procs);
	free(sim);
}

/*
 * Clients come and go: new ones start a transaction after a short random
 * delay (so that a step is not one instant), those above the number finish
 * the transaction they are in and then stay idle.
 */
void
sim_set_clients(Sim *sim, int clients)
{
	if (clients > sim->p.max_clients)
		clients = sim->p.max_clients;
	for (int i = sim->clients; i < clients; i++)
	{
		Backend    *b = &sim->backends[i];

		if (b->state == BS_IDLE)
		{
			b->state = BS_WAITING;
			schedule(sim, sim->now + rng_double(&sim->rng) * 1e6,
					 EV_READY, i, 0);
		}
	}
	sim->clients = clients;
}

void
sim_set_locks(Sim *sim, int locks)
{
	agent_submit(sim, JOB_RESIZE, locks, false);
}

void
sim_take_all_locks(Sim *sim)
{
	agent_submit(sim, JOB_CHECKPOINT, 0, false);
}

void
sim_get_last_important(Sim *sim, bool take_locks)
{
	agent_submit(sim, take_locks ? JOB_EACH_LOCKED : JOB_EACH, 0, false);
}

/* the checkpoints' all-lock acquisitions begun since sim_create() */
int
sim_checkpoints(Sim *sim)
{
	return sim->checkpoints_locks;
}

bool
sim_agent_busy(Sim *sim)
{
	return sim->agent.busy || sim->agent.queued > 0;
}

void
sim_set_attempts(Sim *sim, int attempts)
{
	sim->p.attempts = attempts;
}

void
sim_set_time_scale(Sim *sim, double scenario_s_per_model_s)
{
	sim->scen_base = scenario_now(sim);
	sim->model_base = sim->now;
	sim->scale = scenario_s_per_model_s;
	schedule_periodic(sim);
}

void
sim_run(Sim *sim, double ns)
{
	double		until = sim->now + ns;

	while (sim->heap_len > 0 && sim->heap[0].time <= until)
	{
		Event		e = pop_event(sim);

		sim->now = e.time;
		switch (e.type)
		{
			case EV_CPU:
				if (e.gen == sim->cpu[e.id].gen)
					on_cpu_event(sim, e.id);
				break;
			case EV_READY:
				if (sim->backends[e.id].phase == PH_START &&
					e.id >= sim->clients)
					sim->backends[e.id].state = BS_IDLE;	/* client gone */
				else
					make_ready(sim, e.id);
				break;
			case EV_POS_RELEASE:
				on_pos_release(sim);
				break;
			case EV_POS_HANDOVER:
				on_pos_handover(sim);
				break;
			case EV_AGENT:
				agent_step(sim);
				break;
			case EV_CHECKPOINT:
				if (e.gen == sim->clock_gen)
					on_checkpoint(sim);
				break;
			case EV_CHECKPOINT_LOCKS:
				on_checkpoint_locks(sim);
				break;
			case EV_BGWRITER:
				on_bgwriter(sim);
				break;
		}
	}
	sim->now = until;
}

void
sim_take_figures(Sim *sim, SimFigures *figures)
{
	idle_change(sim);
	sim->f.blocked_ns += sim->blocked * (sim->now - sim->blocked_since);
	sim->blocked_since = sim->now;
	/* close the sampler's integral at now */
	sim->f.active_backend_ns += sim->active * (sim->now - sim->active_since);
	sim->active_since = sim->now;
	/* and the spinning still under way */
	for (int i = 0; i < sim->n_spinners; i++)
	{
		Backend    *b = &sim->backends[sim->spinners[i]];

		sim->f.spin_ns += sim->now - b->spin_since;
		b->spin_since = sim->now;
	}

	*figures = sim->f;
	figures->locks = sim->locks;
	for (int i = 0; i < SIM_MAX_LOCKS; i++)
		figures->lock_acquisitions[i] = sim->ext_lock_acq[i];

	figures->elapsed_ns = sim->now - sim->window_start;

	memset(&sim->f, 0, sizeof(sim->f));
	memset(sim->ext_lock_acq, 0, sizeof(sim->ext_lock_acq));
	sim->window_start = sim->now;
}
