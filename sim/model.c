/*-------------------------------------------------------------------------
 *
 * model.c
 *		The server model: backends scheduled on CPUs in time slices, the WAL
 *		insertion locks, insertpos_lck, WAL writing and flushing.
 *
 * A backend runs a transaction as records_per_txn WAL records, each after
 * record_cpu_ns of CPU, then a commit record and, with synchronous_commit,
 * a flush.  It inserts a record holding one insertion lock, chosen as the
 * core patch's WALInsertLockAcquire() does; inside it reserves WAL under
 * insertpos_lck (a FIFO serial point that it spins on, on its CPU) and, when
 * the WAL buffers are full, waits for the WAL write with the insertion lock
 * still held, as 18.6 does in AdvanceXLInsertBuffer().
 *
 * The locks follow LWLock: a release wakes the first waiter and no other
 * until that one has run (LW_FLAG_RELEASE_OK); the woken backend becomes
 * runnable after wake_ns and retries, and a running backend may take the
 * lock first (barging); a waiter that loses requeues at the tail.
 *
 * The scheduler is a run queue per machine: a backend runs until it sleeps
 * or its quantum ends with another backend runnable; a preempted backend
 * goes to the tail, and one that wakes goes to the head (Linux places a
 * waking task ahead of those that ran).  A preempted lock holder keeps its
 * lock.
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
 * retry the lock; the rest, refilling the caches that other backends
 * evicted, slows the work that follows, and only when another backend ran
 * on the CPU meanwhile, or the backend woke on another CPU.
 */
#define SWITCH_CPU_NS	5e3

#define WAL_PAGE_BYTES	8192.0	/* XLOG_BLCKSZ */

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
	int			procno;
	bool		connected;
	int			lock_to_try;	/* -1: none yet (stock's lockToTry) */
	int			stride;			/* 0: not chosen for this lock count */
	int			lock;			/* the lock held or slept on (MyLockNo) */
	bool		slept;			/* this acquisition has slept */
	int			sleeps;			/* how often */
	double		cold_ns;		/* CPU a sleep costs after the lock is got */
	int			last_cpu;		/* -1: none yet */
	uint64_t	last_dispatches;	/* that CPU's dispatches when it came */
	bool		cold;			/* another backend ran there meanwhile */
	double		ready_at;		/* end of a wait (BS_WAITING) */
	double		lsn;			/* end of its last record */
	bool		in_txn;
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
	EV_READY					/* a backend becomes runnable */
} EventType;

typedef struct Event
{
	double		time;
	uint64_t	seq;			/* ties break in order of scheduling */
	int			type;
	int			id;
	uint64_t	gen;
} Event;

struct Sim
{
	SimParams	p;
	Rng			rng;
	double		now;
	uint64_t	seq;

	int			clients;		/* backends with a client */
	int			locks;
	Backend    *backends;
	Lock		lock[SIM_MAX_LOCKS];
	Cpu		   *cpu;
	int		   *idle_cpus;
	int		   *idle_pos;		/* a CPU's place in idle_cpus, -1: busy */
	int			n_idle;

	int		   *runq;			/* ring, head first */
	int			rq_head;
	int			rq_len;

	Event	   *heap;
	int			heap_len;
	int			heap_cap;

	/* ProcNumbers, first in first out as PostgreSQL 18 hands them out */
	int		   *free_procs;
	int			fp_head;
	int			fp_len;

	/* insertpos_lck: when it is next free */
	double		spin_free;

	/* WAL: reserved and written up to, in bytes, written as a fluid */
	double		inserted;
	double		written;
	double		written_at;

	/* group flush: the flush in progress and the one queued after it */
	double		flush_end;
	double		flush_upto;
	double		next_flush_end;
	double		next_flush_upto;

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

/* ---- the scheduler ---- */

/* integrate idle CPUs before their number changes */
static void
idle_change(Sim *sim)
{
	sim->f.idle_cpu_ns += sim->n_idle * (sim->now - sim->idle_since);
	sim->idle_since = sim->now;
}

static void run_backend(Sim *sim, int c);

static void
runq_push(Sim *sim, int b, bool front)
{
	int			cap = sim->p.max_clients;

	if (front)
	{
		sim->rq_head = (sim->rq_head + cap - 1) % cap;
		sim->runq[sim->rq_head] = b;
	}
	else
		sim->runq[(sim->rq_head + sim->rq_len) % cap] = b;
	sim->rq_len++;
	sim->backends[b].state = BS_RUNQ;
}

static int
runq_pop(Sim *sim)
{
	int			b = sim->runq[sim->rq_head];

	sim->rq_head = (sim->rq_head + 1) % sim->p.max_clients;
	sim->rq_len--;
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

/* ---- insertion locks ---- */

static double
jitter(Sim *sim, double mean)
{
	/* uniform within half of the mean either side: work is regular */
	return mean * (0.5 + rng_double(&sim->rng));
}

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

/* WAL position reservation and the copy, with lock l just taken by b */
static void
acquired(Sim *sim, int bi, int l, bool contended)
{
	Backend    *b = &sim->backends[bi];
	double		start;

	sim->lock[l].holder = bi;
	b->lock = l;
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
	b->lock_to_try = contended ? (l + 1) % sim->locks : l;

	/* insertpos_lck, FIFO: spin on this CPU until it is ours */
	start = Max(sim->now, sim->spin_free);
	sim->spin_free = start + sim->p.reserve_ns;
	sim->f.spin_ns += start - sim->now;
	sim->inserted += sim->p.record_bytes;
	b->lsn = sim->inserted;

	b->phase = PH_HOLD;
	b->remaining = (start - sim->now) + sim->p.reserve_ns +
		jitter(sim, sim->p.hold_ns);
}

static void
lock_sleep(Sim *sim, int bi, int l)
{
	Backend    *b = &sim->backends[bi];
	Lock	   *lk = &sim->lock[l];

	lk->queue[(lk->qhead + lk->qlen) % sim->p.max_clients] = bi;
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
 * got a lock (and goes on with PH_HOLD), false when it sleeps.
 */
static bool
lock_acquire(Sim *sim, int bi)
{
	Backend    *b = &sim->backends[bi];
	int			n = sim->locks;
	int			l;
	int			attempts;

	if (b->lock_to_try < 0 || b->lock_to_try >= n)
		b->lock_to_try = b->procno % n;
	l = b->lock_to_try;
	if (sim->lock[l].holder < 0)
	{
		acquired(sim, bi, l, false);
		return true;
	}

	attempts = Min(sim->p.attempts, n - 1);
	if (attempts > 0)
	{
		if (b->stride == 0 || gcd(b->stride, n) != 1 || b->stride >= n)
		{
			do
				b->stride = 1 + (int) rng_range(&sim->rng, n - 1);
			while (gcd(b->stride, n) != 1);
		}
		for (int failed = 1; failed < attempts; failed++)
		{
			l = (l + b->stride) % n;
			if (sim->lock[l].holder < 0)
			{
				acquired(sim, bi, l, false);
				return true;
			}
		}
		l = (l + b->stride) % n;
		/* LWLockAcquire() attempts once more before it queues */
		if (sim->lock[l].holder < 0)
		{
			acquired(sim, bi, l, false);
			return true;
		}
	}
	lock_sleep(sim, bi, l);
	return false;
}

static void
lock_release(Sim *sim, int bi)
{
	Backend    *b = &sim->backends[bi];
	Lock	   *lk = &sim->lock[b->lock];

	lk->holder = -1;
	if (lk->qlen > 0 && lk->release_ok)
	{
		int			w = lk->queue[lk->qhead];

		lk->qhead = (lk->qhead + 1) % sim->p.max_clients;
		lk->qlen--;
		lk->release_ok = false;
		sim->backends[w].state = BS_WAITING;
		schedule(sim, sim->now + sim->p.wake_ns, EV_READY, w, 0);
	}
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
				b->phase = PH_WORK;
				b->remaining = jitter(sim, sim->p.record_cpu_ns);
				if (sim->p.unpooled && !b->connected)
				{
					b->procno = take_procno(sim);
					b->connected = true;
					b->lock_to_try = -1;
					b->stride = 0;
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
					acquired(sim, bi, b->lock, true);
				else
				{
					lock_sleep(sim, bi, b->lock);
					cpu_next(sim, c);
					return;
				}
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
							floor((b->lsn - sim->p.record_bytes) / WAL_PAGE_BYTES);

						b->phase = PH_BUFFER;
						b->remaining = crosses ? sim->locks * sim->p.visit_ns : 0;
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
				lock_release(sim, bi);
				if (b->records_left > 0)
				{
					b->records_left--;
					b->phase = PH_WORK;
					b->remaining = b->cold_ns + (b->records_left > 0 ?
												 jitter(sim, sim->p.record_cpu_ns) :
												 jitter(sim, sim->p.commit_cpu_ns));
					b->cold_ns = 0;
				}
				else if (sim->p.sync_commit)
				{
					b->phase = PH_FLUSH;
					b->remaining = sim->locks * sim->p.visit_ns;
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
	Backend    *b = &sim->backends[cpu->backend];

	b->remaining -= sim->now - cpu->burst_start;

	/*
	 * Done when what is left is under a femtosecond, or too little to move
	 * the clock: past 2^33 ns of model time (8.6 s) a double's step exceeds
	 * 1e-6 ns, a burst of less than half a step would end at now itself,
	 * and the backend would loop on it with the clock stopped.  Runs with
	 * SIM_WINDOW_STRETCH go that far.
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
		int			bi = cpu->backend;

		runq_push(sim, bi, false);
		cpu_next(sim, c);
		return;
	}
	cpu->quantum_end = sim->now + sim->p.quantum_ns;
	burst(sim, c);
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
	sim->backends = calloc(n, sizeof(Backend));
	sim->cpu = calloc(params->cpus, sizeof(Cpu));
	sim->idle_cpus = calloc(params->cpus, sizeof(int));
	sim->idle_pos = calloc(params->cpus, sizeof(int));
	sim->runq = calloc(n, sizeof(int));
	sim->heap_cap = 1024;
	sim->heap = malloc(sizeof(Event) * sim->heap_cap);
	sim->free_procs = calloc(sim->p.max_connections, sizeof(int));
	for (int i = 0; i < sim->p.max_connections; i++)
		sim->free_procs[i] = i;
	sim->fp_len = sim->p.max_connections;
	for (int i = 0; i < SIM_MAX_LOCKS; i++)
	{
		sim->lock[i].holder = -1;
		sim->lock[i].release_ok = true;
		sim->lock[i].queue = calloc(n, sizeof(int));
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
	}
	sim->locks = locks;
	sim->clients = 0;
	sim_set_clients(sim, clients);
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

/*
 * A new count takes effect for the next acquisitions; each backend starts
 * again from its ProcNumber modulo the count, as the core patch does when
 * it sees a new count.
 */
void
sim_set_locks(Sim *sim, int locks)
{
	sim->locks = locks;
	for (int i = 0; i < sim->p.max_clients; i++)
	{
		sim->backends[i].lock_to_try = -1;
		sim->backends[i].stride = 0;
	}
}

void
sim_set_attempts(Sim *sim, int attempts)
{
	sim->p.attempts = attempts;
}

void
sim_run(Sim *sim, double ns)
{
	double		until = sim->now + ns;

	while (sim->heap_len > 0 && sim->heap[0].time <= until)
	{
		Event		e = pop_event(sim);

		sim->now = e.time;
		if (e.type == EV_CPU)
		{
			if (e.gen == sim->cpu[e.id].gen)
				on_cpu_event(sim, e.id);
		}
		else if (sim->backends[e.id].phase == PH_START &&
				 e.id >= sim->clients)
			sim->backends[e.id].state = BS_IDLE;	/* client gone */
		else
			make_ready(sim, e.id);
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

	*figures = sim->f;
	figures->locks = sim->locks;
	for (int i = 0; i < SIM_MAX_LOCKS; i++)
		figures->lock_acquisitions[i] = sim->ext_lock_acq[i];

	figures->elapsed_ns = sim->now - sim->window_start;

	memset(&sim->f, 0, sizeof(sim->f));
	memset(sim->ext_lock_acq, 0, sizeof(sim->ext_lock_acq));
	sim->window_start = sim->now;
}
