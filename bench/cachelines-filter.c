/*
 * bench/cachelines-filter.c: reads the memory trace of valgrind
 * --tool=lackey --trace-mem=yes on standard input and writes, for every
 * operation, the distinct 64-byte lines of PostgreSQL's shared memory
 * segment that the operation read and wrote.  Built and run by
 * bench/cachelines.sh; see there for the method.
 *
 *   cachelines-filter PARAMS > ops.txt
 *
 * PARAMS is a file that bench/cachelines.sh writes once the backend has
 * mapped its shared memory (the trace of start-up comes first and is
 * dropped); until it exists the input is skipped, and the file is looked
 * for again every 64k lines.  Its lines:
 *
 *   shm LO HI          the segment's address range, hex
 *   phase ADDR         entry of the function that starts the next phase
 *                      (pg_backend_pid: "SELECT pg_backend_pid()" between
 *                      the blocks of operations)
 *   split P ADDR       entry of the function that starts each operation of
 *                      phase P (called exactly once per operation)
 *
 * An operation is the trace between two consecutive split entries of its
 * phase: the part of a phase before its first split and after its last is
 * dropped.  Output, one line per distinct line an operation touched:
 *
 *   P OP LINE FLAGS    phase, operation number in the phase (from 0), line
 *                      number within the segment (offset / 64), FLAGS 1 read,
 *                      2 written, 3 both
 *
 * and at the end "# phases N lines L" (the number of phase markers seen,
 * the lines of input) for the caller to check.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PHASES 16

static unsigned long shm_lo,
			shm_hi,
			phase_addr;
static unsigned long split_addr[MAX_PHASES];
static unsigned char *flags;	/* per line of the segment, this operation */
static unsigned long *touched;	/* lines with flags set, in order */
static unsigned long ntouched;
static int	loaded;

static int
load_params(const char *path)
{
	FILE	   *f = fopen(path, "r");
	char		kw[16];
	unsigned long a,
				b;
	int			p;

	if (f == NULL)
		return 0;
	while (fscanf(f, "%15s", kw) == 1)
	{
		if (strcmp(kw, "shm") == 0 && fscanf(f, "%lx %lx", &a, &b) == 2)
			shm_lo = a, shm_hi = b;
		else if (strcmp(kw, "phase") == 0 && fscanf(f, "%lx", &a) == 1)
			phase_addr = a;
		else if (strcmp(kw, "split") == 0 && fscanf(f, "%d %lx", &p, &a) == 2 &&
				 p >= 0 && p < MAX_PHASES)
			split_addr[p] = a;
		else
		{
			fprintf(stderr, "cachelines-filter: bad line in %s\n", path);
			exit(2);
		}
	}
	fclose(f);
	if (shm_hi <= shm_lo || phase_addr == 0)
	{
		fprintf(stderr, "cachelines-filter: %s lacks shm or phase\n", path);
		exit(2);
	}
	flags = calloc((shm_hi - shm_lo) / 64 + 1, 1);
	touched = malloc(((shm_hi - shm_lo) / 64 + 1) * sizeof(unsigned long));
	if (flags == NULL || touched == NULL)
	{
		fprintf(stderr, "cachelines-filter: out of memory\n");
		exit(2);
	}
	return 1;
}

/* End the current operation: print it if wanted, then clear it. */
static void
end_op(int print, int phase, long op)
{
	unsigned long i;

	for (i = 0; i < ntouched; i++)
	{
		if (print)
			printf("%d %ld %lu %d\n", phase, op, touched[i], flags[touched[i]]);
		flags[touched[i]] = 0;
	}
	ntouched = 0;
}

static void
note_access(unsigned long addr, unsigned long size, int f)
{
	unsigned long first,
				last,
				l;

	if (addr + size <= shm_lo || addr >= shm_hi)
		return;
	if (addr < shm_lo)
		addr = shm_lo;
	if (addr + size > shm_hi)
		size = shm_hi - addr;
	first = (addr - shm_lo) / 64;
	last = (addr + size - 1 - shm_lo) / 64;
	for (l = first; l <= last; l++)
	{
		if (flags[l] == 0)
			touched[ntouched++] = l;
		flags[l] |= f;
	}
}

int
main(int argc, char **argv)
{
	char		buf[256];
	unsigned long nlines = 0;
	int			phase = 0;
	long		op = -1;		/* -1: before the phase's first split */

	if (argc != 2)
	{
		fprintf(stderr, "usage: cachelines-filter PARAMS\n");
		return 2;
	}
	while (fgets(buf, sizeof(buf), stdin))
	{
		unsigned long addr,
					size;
		char	   *end;

		nlines++;
		if (!loaded)
		{
			if ((nlines & 0xffff) == 0)
				loaded = load_params(argv[1]);
			continue;
		}
		if (buf[0] == 'I')
		{
			addr = strtoul(buf + 3, NULL, 16);
			if (addr == phase_addr)
			{
				end_op(0, phase, op);
				phase++;
				op = -1;
			}
			else if (phase < MAX_PHASES && split_addr[phase] != 0 &&
					 addr == split_addr[phase])
			{
				end_op(op >= 0, phase, op);
				op++;
			}
			continue;
		}
		if (buf[0] != ' ' || (buf[1] != 'L' && buf[1] != 'S' && buf[1] != 'M'))
			continue;
		addr = strtoul(buf + 3, &end, 16);
		if (*end != ',')
			continue;
		size = strtoul(end + 1, NULL, 10);
		note_access(addr, size, buf[1] == 'L' ? 1 : buf[1] == 'S' ? 2 : 3);
	}
	printf("# phases %d lines %lu loaded %d\n", phase, nlines, loaded);
	return 0;
}
