/*
 * bench/spinlock-handover.c: what a hand-over of a PostgreSQL spinlock
 * between cores costs, for the simulator's insertpos_lck (sim/README.md,
 * "hand-over slope β").  Built by bench/handover.sh with the server's
 * compiler and flags (pg_config) against its headers: the lock is a slock_t,
 * taken with SpinLockAcquire() and let go with SpinLockRelease() of
 * storage/spin.h, as XLogCtl->Insert.insertpos_lck is.
 *
 *   spinlock-handover [REPS [HANDOVERS]]
 *
 * The lock shares one 64-byte line with two 8-byte positions, as
 * insertpos_lck shares it with CurrBytePos and PrevBytePos; the critical
 * section is ReserveXLogInsertLocation()'s: read both, add a record's size,
 * write both (and the holder's number and a count, on the same line).  The
 * processes are forked, each pinned (sched_setaffinity) to a CPU of its own,
 * the line in a MAP_SHARED mapping, as backends share the main segment.
 *
 * Three measures, every configuration once per round, the order reversed
 * every other round; each printed as the median over REPS rounds with the
 * min..max of the rounds:
 *
 * 1. uncontended: one process, acquire, critical section, release, in a
 *    loop: the median over chunks of 10000 iterations of ns per iteration.
 * 2. hand-over with S spinners (S = 1 .. CPUs - 1): S + 1 processes; one that
 *    holds the lock finds itself the last holder and lets go at once, then
 *    waits, reading the line, until another took it, so every counted
 *    acquisition moves the line to another core.  A round's figure is the
 *    median over chunks of 1000 hand-overs of the time per hand-over
 *    (a chunk that a preemption hit is one chunk).  S = 1 is the two-core
 *    ping-pong.
 * 3. where S reaches 2 or more (3 CPUs): the simulator's model, hand-over
 *    = xfer x (1 + beta x spinners), fitted by least squares to the medians,
 *    h(S) = a + b S: xfer = a, beta = b / a.  Also the slope per extra
 *    spinner relative to one spinner, (h(S) / h(1) - 1) / (S - 1), fitted
 *    through 0 (= beta / (1 + beta) in the model).  With fewer CPUs it says
 *    so and gives no beta.
 *
 * s_lock.c is not linked: its out-of-line s_lock() sleeps (pg_usleep) once
 * a waiter spun spins_per_delay turns, and the model's spinners are those
 * still on a CPU.  s_lock() here spins as s_lock.c does, TAS_SPIN() and
 * SPIN_DELAY() per turn, without sleeping, and counts the acquisitions
 * that spun more than DEFAULT_SPINS_PER_DELAY turns, where s_lock.c would
 * first have slept: that share is printed per configuration.
 */
#include "postgres.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "storage/spin.h"

#define LINE 64
#define MAX_PROCS 256
#define CHUNK 1000
#define MAX_CHUNKS 64

typedef struct
{
	/* the line of insertpos_lck, CurrBytePos and PrevBytePos */
	slock_t		lck;
	int			last;			/* the holder before the current one */
	uint64		curr;
	uint64		prev;
	uint64		count;			/* acquisitions counted */
	char		pad[LINE - sizeof(slock_t) - sizeof(int) - 3 * sizeof(uint64)];
} PosLine;

typedef struct
{
	PosLine		line __attribute__((aligned(LINE)));
	/* off the line: the start flag and what the run records */
	volatile int go __attribute__((aligned(LINE)));
	volatile int ready;
	uint64		target;
	double		stamp[MAX_CHUNKS + 1];	/* at every CHUNK-th acquisition */
	uint64		long_spins[MAX_PROCS];
} Shared;

static Shared *sh;
static int	me;

/* spins of the current acquisition, for the count of long ones */
static int	cur_spins;

/* s_lock.c's spinning, without its sleep (see the header comment) */
int
s_lock(volatile slock_t *lock, const char *file, int line, const char *func)
{
	int			spins = 0;

	while (TAS_SPIN(lock))
	{
		SPIN_DELAY();
		spins++;
	}
	cur_spins = spins;
	return 0;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void
pin(int cpu)
{
	cpu_set_t	set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
	{
		perror("sched_setaffinity");
		exit(2);
	}
}

/* ReserveXLogInsertLocation()'s critical section, on the lock's line */
static inline void
critical_section(volatile PosLine *l, uint64 size)
{
	uint64		start = l->curr;
	uint64		end = start + size;

	(void) l->prev;
	l->curr = end;
	l->prev = start;
}

/*
 * 1. uncontended: ns per acquire + critical section + release, the median
 * over chunks of UNC_CHUNK iterations (a chunk a preemption hit is one)
 */
#define UNC_CHUNK 10000
#define UNC_CHUNKS 100
static double median(double *v, int n);

static double
uncontended(int cpu)
{
	volatile PosLine *l = &sh->line;
	double		per[UNC_CHUNKS];

	pin(cpu);
	for (long i = 0; i < 10 * UNC_CHUNK; i++)
	{
		SpinLockAcquire(&l->lck);
		critical_section(l, 70);
		SpinLockRelease(&l->lck);
	}
	for (int c = 0; c < UNC_CHUNKS; c++)
	{
		double		t0 = now_ns();

		for (long i = 0; i < UNC_CHUNK; i++)
		{
			SpinLockAcquire(&l->lck);
			critical_section(l, 70);
			SpinLockRelease(&l->lck);
		}
		per[c] = (now_ns() - t0) / UNC_CHUNK;
	}
	return median(per, UNC_CHUNKS);
}

/* 2. one process of a hand-over run */
static void
handover_child(int id, int cpu, int nprocs)
{
	volatile PosLine *l = &sh->line;
	uint64		long_spins = 0;
	uint64		warm = 2 * CHUNK;

	me = id;
	pin(cpu);
	__sync_fetch_and_add(&sh->ready, 1);
	while (!sh->go)
		SPIN_DELAY();
	for (;;)
	{
		uint64		n;

		cur_spins = 0;
		SpinLockAcquire(&l->lck);
		if (l->count >= sh->target)
		{
			SpinLockRelease(&l->lck);
			break;
		}
		if (l->last == me)
		{
			/* not a hand-over: let go, wait until another took it */
			SpinLockRelease(&l->lck);
			while (l->last == me && l->count < sh->target)
				SPIN_DELAY();
			continue;
		}
		if (cur_spins > DEFAULT_SPINS_PER_DELAY)
			long_spins++;
		critical_section(l, 70);
		l->last = me;
		n = ++l->count;
		if (n >= warm && (n - warm) % CHUNK == 0 && (n - warm) / CHUNK <= MAX_CHUNKS)
			sh->stamp[(n - warm) / CHUNK] = now_ns();
		SpinLockRelease(&l->lck);
	}
	sh->long_spins[id] = long_spins;
	(void) nprocs;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a,
				y = *(const double *) b;

	return (x > y) - (x < y);
}

static double
median(double *v, int n)
{
	qsort(v, n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One hand-over run with nprocs processes on cpus[0..nprocs-1]: the median
 * over chunks of the ns per hand-over; *long_share gets the share of
 * acquisitions that spun past DEFAULT_SPINS_PER_DELAY turns.
 */
static double
handover_run(const int *cpus, int nprocs, int chunks, double *long_share)
{
	pid_t		pids[MAX_PROCS];
	double		per[MAX_CHUNKS];
	uint64		longs = 0;

	memset(sh, 0, sizeof(*sh));
	SpinLockInit(&sh->line.lck);
	sh->line.last = -1;
	sh->target = 2 * CHUNK + (uint64) chunks * CHUNK + 1;
	for (int i = 0; i < nprocs; i++)
	{
		pids[i] = fork();
		if (pids[i] < 0)
		{
			perror("fork");
			exit(2);
		}
		if (pids[i] == 0)
		{
			handover_child(i, cpus[i], nprocs);
			_exit(0);
		}
	}
	while (sh->ready < nprocs)
		usleep(100);
	__sync_synchronize();
	sh->go = 1;
	for (int i = 0; i < nprocs; i++)
	{
		int			st;

		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		{
			fprintf(stderr, "spinlock-handover: a child failed\n");
			exit(2);
		}
		longs += sh->long_spins[i];
	}
	for (int c = 0; c < chunks; c++)
		per[c] = (sh->stamp[c + 1] - sh->stamp[c]) / CHUNK;
	*long_share = (double) longs / ((double) chunks * CHUNK + 2 * CHUNK);
	return median(per, chunks);
}

/*
 * The CPUs this process may use, one per physical core first (by
 * topology/core_id and physical_package_id), their SMT siblings after.
 */
static int
usable_cpus(int *cpus, int *sibling_from)
{
	cpu_set_t	set;
	int			n = 0,
				first[MAX_PROCS],
				second[MAX_PROCS],
				nf = 0,
				ns = 0;
	char		seen[MAX_PROCS][32];
	int			nseen = 0;

	if (sched_getaffinity(0, sizeof(set), &set) != 0)
	{
		perror("sched_getaffinity");
		exit(2);
	}
	for (int c = 0; c < CPU_SETSIZE && nf + ns < MAX_PROCS; c++)
	{
		char		path[128],
					key[32] = "";
		int			core = -1,
					pkg = -1,
					dup = 0;
		FILE	   *f;

		if (!CPU_ISSET(c, &set))
			continue;
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		if ((f = fopen(path, "r")) != NULL)
		{
			if (fscanf(f, "%d", &core) != 1)
				core = -1;
			fclose(f);
		}
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		if ((f = fopen(path, "r")) != NULL)
		{
			if (fscanf(f, "%d", &pkg) != 1)
				pkg = -1;
			fclose(f);
		}
		if (core >= 0)
		{
			snprintf(key, sizeof(key), "%d/%d", pkg, core);
			for (int i = 0; i < nseen; i++)
				if (strcmp(seen[i], key) == 0)
					dup = 1;
		}
		if (dup)
			second[ns++] = c;
		else
		{
			if (core >= 0 && nseen < MAX_PROCS)
				strcpy(seen[nseen++], key);
			first[nf++] = c;
		}
	}
	for (int i = 0; i < nf; i++)
		cpus[n++] = first[i];
	for (int i = 0; i < ns; i++)
		cpus[n++] = second[i];
	*sibling_from = nf;
	return n;
}

int
main(int argc, char **argv)
{
	int			reps = argc > 1 ? atoi(argv[1]) : 11;
	int			chunks = argc > 2 ? atoi(argv[2]) / CHUNK : 20;
	int			cpus[MAX_PROCS],
				ncpus,
				sib_from,
				maxs,
				nconf;
	double	   *res,
			   *longs;

	if (reps < 1 || chunks < 1 || chunks > MAX_CHUNKS)
	{
		fprintf(stderr, "usage: spinlock-handover [REPS [HANDOVERS (1000..%d)]]\n", MAX_CHUNKS * CHUNK);
		return 2;
	}
	sh = mmap(NULL, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
	{
		perror("mmap");
		return 2;
	}
	ncpus = usable_cpus(cpus, &sib_from);
	if (ncpus < 2)
	{
		printf("cpus: %d usable; a hand-over needs 2\n", ncpus);
		return 1;
	}
	maxs = ncpus - 1;
	nconf = 1 + maxs;			/* uncontended, S = 1 .. maxs */
	res = calloc((size_t) nconf * reps, sizeof(double));
	longs = calloc((size_t) nconf * reps, sizeof(double));

	printf("cpus: %d usable, in the order used:", ncpus);
	for (int i = 0; i < ncpus; i++)
		printf(" %d", cpus[i]);
	if (sib_from < ncpus)
		printf(" (one per physical core first; SMT siblings from position %d)\n", sib_from + 1);
	else
		printf(" (no two on one physical core)\n");
	printf("method: slock_t with SpinLockAcquire/SpinLockRelease (s_lock.h's TAS, TAS_SPIN, SPIN_DELAY, S_UNLOCK), "
		   "ReserveXLogInsertLocation's critical section on the lock's line; %d rounds, configurations interleaved "
		   "(order reversed every other round); %d hand-overs per run, median over chunks of %d\n",
		   reps, chunks * CHUNK, CHUNK);
	fflush(stdout);

	for (int r = 0; r < reps; r++)
	{
		for (int k = 0; k < nconf; k++)
		{
			int			c = (r % 2 == 0) ? k : nconf - 1 - k;

			if (c == 0)
			{
				pid_t		p;
				int			st;

				/* in a child, so that the parent's affinity stays whole */
				memset(sh, 0, sizeof(*sh));
				SpinLockInit(&sh->line.lck);
				p = fork();
				if (p == 0)
				{
					sh->stamp[0] = uncontended(cpus[0]);
					_exit(0);
				}
				waitpid(p, &st, 0);
				res[c * reps + r] = sh->stamp[0];
			}
			else
				res[c * reps + r] = handover_run(cpus, c + 1, chunks, &longs[c * reps + r]);
		}
	}

	{
		double		med[MAX_PROCS],
					v[1024];
		int			nv = reps < 1024 ? reps : 1024;

		for (int c = 0; c < nconf; c++)
		{
			double		lo,
						hi,
						lmed;

			memcpy(v, &res[c * reps], nv * sizeof(double));
			med[c] = median(v, nv);
			lo = v[0];
			hi = v[nv - 1];
			memcpy(v, &longs[c * reps], nv * sizeof(double));
			lmed = median(v, nv);
			if (c == 0)
				printf("uncontended: %.1f ns per acquire + critical section + release (median of %d; %.1f..%.1f)\n",
					   med[c], reps, lo, hi);
			else
				printf("handover S=%d: %.1f ns (median of %d; %.1f..%.1f); on %d CPUs, %s; acquisitions past %d spins: %.4f\n",
					   c, med[c], reps, lo, hi, c + 1,
					   c + 1 > sib_from ? "some SMT siblings" : "one per core",
					   DEFAULT_SPINS_PER_DELAY, lmed);
		}
		printf("xfer-2core: %.1f ns per hand-over between two cores (CPUs %d and %d); the model's xfer x (1 + beta)\n",
			   med[1], cpus[0], cpus[1]);
		if (maxs < 2)
		{
			printf("beta: not measured: a slope needs hand-overs with 1 and 2 spinners, 3 CPUs or more; this machine gives %d\n",
				   ncpus);
		}
		else
		{
			/* h(S) = a + b S by least squares over S = 1 .. maxs */
			double		sx = 0,
						sy = 0,
						sxx = 0,
						sxy = 0,
						num = 0,
						den = 0,
						a,
						b;
			int			n = maxs;

			for (int s = 1; s <= maxs; s++)
			{
				sx += s;
				sy += med[s];
				sxx += (double) s * s;
				sxy += s * med[s];
				num += (med[s] / med[1] - 1) * (s - 1);
				den += (double) (s - 1) * (s - 1);
			}
			b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
			a = (sy - b * sx) / n;
			printf("fit: h(S) = %.1f + %.2f S ns over S = 1..%d%s\n", a, b, maxs,
				   maxs + 1 > sib_from ? " (the larger S include SMT siblings)" : "");
			printf("xfer: %.1f ns (the fit at 0 spinners)\n", a);
			printf("beta: %.3f (the model's hand-over = xfer x (1 + beta x spinners): b / a)\n", a > 0 ? b / a : 0.0);
			printf("slope-per-extra-spinner: %.3f ((h(S)/h(1) - 1)/(S - 1), fitted through 0)\n", num / den);
		}
	}
	return 0;
}
