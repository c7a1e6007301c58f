/*-------------------------------------------------------------------------
 *
 * walscale_auto_rules.h
 *		Auto mode's rules as pure functions: the CPU count that counts, the
 *		number of insertion locks to start from, its bounds, and the decision
 *		at the end of a window.
 *
 * They read no shared memory, clock, GUC or other global, and need only
 * c.h, so that t/unit/test_auto_rules.c can call them outside the server
 * (t/010_auto_rules.pl) and sim/ can drive them in a simulated server
 * (make simulate).  walscale_auto.c gathers the figures and applies the
 * decisions.  The header comment of walscale_auto_rules.c argues each rule
 * and constant; here they are named.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_AUTO_RULES_H
#define WALSCALE_AUTO_RULES_H

/* The tuning constants, all of them; walscale_auto_rules.c argues each. */

/* a window with fewer acquisitions is idle: it judges nothing */
#define AUTO_MIN_ACQUISITIONS	500
/* contended: a grow is tried only at or above this share of time asleep */
#define AUTO_GROW_BLOCKED_SHARE	0.05
/* the windows each phase of a probe measures: before, at the other, after */
#define AUTO_PROBE_WINDOWS		6
/* a grow is kept past this many deviations of the probe's noise */
#define AUTO_PROBE_Z			2.5
/* and past this gain, whatever the noise; a halving within half of it */
#define AUTO_MIN_GAIN			0.02
/* the weight of each new sample in the noise's moving mean */
#define AUTO_NOISE_WEIGHT		(1.0 / 32)
/* after a probe that failed: no other that way for this, doubling, */
#define AUTO_HOLD_S				600.0
/* up to this, so that a load whose best moved is followed within the hour */
#define AUTO_HOLD_MAX_S			2700.0
/* another context: the blocked share or the load moved by this factor */
#define AUTO_CONTEXT_CHANGE		2.0

/* the windows a null probe spans: three phases, each after a settling one */
#define AUTO_PROBE_SPAN			(3 * AUTO_PROBE_WINDOWS + 2)

/* what a closed window measured, and the bounds it is judged within */
typedef struct AutoWindowFigures
{
	uint64		acquisitions;
	uint64		blocking_waits; /* acquisitions that slept */
	uint64		blocked_ns;		/* their sleep, summed over backends */
	/* acquisitions of each active lock, active_locks entries */
	const uint64 *lock_acquisitions;
	int			active_locks;	/* in effect during the window */
	double		backends;		/* mean active backends sampled; 0: unknown */
	double		window_s;		/* the window's length, monotonic, > 0 */
	int			cpus;			/* walscale_rules_cpus() */
	int			min_locks;		/* the floor */
	int			max_locks;
} AutoWindowFigures;

/* where a probe stands */
typedef enum AutoProbePhase
{
	AUTO_PROBE_NONE = 0,		/* holding the number in effect */
	AUTO_PROBE_AWAY,			/* measuring the other number */
	AUTO_PROBE_BACK				/* measuring the number it came from again */
} AutoProbePhase;

/* what a failed probe one way left: a hold, and the context it was learnt in */
typedef struct AutoHold
{
	double		length_s;		/* the last hold; 0: none learnt */
	double		left_s;			/* until the next probe this way */
	double		share_low;		/* the blocked shares of its failed probes */
	double		share_high;
	bool		far;			/* the next probe this way: two steps */
} AutoHold;

/*
 * What the controller remembers from one window to the next: this, all of
 * it (docs/auto-mode.md lists it with the mechanism each part serves).
 */
typedef struct AutoRulesState
{
	/* the windows in a row at the number in effect, newest last */
	int			run_locks;		/* that number; 0: none yet */
	int			run_windows;	/* how many, up to AUTO_PROBE_SPAN */
	double		run_log_rate[AUTO_PROBE_SPAN];
	double		run_load[AUTO_PROBE_SPAN];	/* active backends, or cpus */
	double		run_share[AUTO_PROBE_SPAN]; /* blocked share */

	/* the noise: mean |g| of null probes on held windows, and their count */
	double		noise;
	int			noise_samples;
	/* the blocked share: the mean of the run's newest phase */
	double		share;

	/* the probe under way */
	AutoProbePhase phase;
	int			probe_from;
	int			probe_to;
	double		probe_before;	/* mean log rate, each phase */
	double		probe_away;
	double		probe_back;
	double		probe_share;	/* mean blocked share at probe_from */
	double		probe_away_share;	/* and at probe_to */
	double		probe_load;		/* the run's mean load when it began */
	bool		last_probe_up;
	bool		kept;			/* the last probe was kept, none since */

	AutoHold	up;
	AutoHold	down;
} AutoRulesState;

/* the decision on one window */
typedef struct AutoVerdict
{
	int			target;			/* the number for the next window */
	const char *reason;			/* why it changes; NULL when it holds */
	double		waits_per_1000; /* blocking waits per 1000 acquisitions */
	double		blocked_ms_per_s;	/* ms slept, summed over backends, per s */
	double		blocked_share;	/* of active backend time */
	double		rate;			/* acquisitions per s per running backend */
	int			locks_used;		/* active locks acquired at least once */
	double		spread;			/* a probe's noise: sd of its gain */
	bool		judged;			/* a probe was judged on this window */
	double		gain;			/* its measured gain */
} AutoVerdict;

/* reasons, for tests and walscale_auto_decisions */
#define AUTO_REASON_PROBE_UP	"probe: contended, try twice as many"
#define AUTO_REASON_PROBE_DOWN	"probe: try half as many"
#define AUTO_REASON_PROBE_UP_FAR	"probe: contended, try four times as many"
#define AUTO_REASON_PROBE_DOWN_FAR	"probe: try a quarter as many"
#define AUTO_REASON_PROBE_BACK	"probe: back to compare"
#define AUTO_REASON_KEEP_MORE	"probe kept: more ran faster"
#define AUTO_REASON_KEEP_FEWER	"probe kept: fewer ran as fast"
#define AUTO_REASON_ABANDON		"probe abandoned: idle window or another load"
#define AUTO_REASON_FLOOR		"below the floor"
#define AUTO_REASON_MAX			"above the maximum"

/*
 * The CPUs a server can use: the fewest of those online, those in its
 * affinity mask and its cgroup quota (quota_cpus, fractional; 0: none),
 * ignoring any that is not positive; at least 1, at most 4096, and 1 when
 * none is known.
 */
extern int	walscale_rules_cpus(int online, int affinity, double quota_cpus);

/*
 * The bounds and the start, for cpus from 1 to 4096.  stock_locks is
 * PostgreSQL's own number and core_max_locks the most the core patch has
 * slots for (XLOG_INSERT_LOCKS_DEFAULT and XLOG_INSERT_LOCKS_MAX).
 * dba_min_locks is walscale.auto_min_locks.
 */
extern int	walscale_rules_min_locks(int dba_min_locks, int max_locks);
extern int	walscale_rules_max_locks(int cpus, int stock_locks,
									 int core_max_locks);
extern int	walscale_rules_start_locks(int cpus, int stock_locks,
									   int core_max_locks);

extern int	walscale_rules_begin(AutoRulesState *state, int current_locks,
								 int min_locks, int max_locks);
extern void walscale_rules_decide(const AutoWindowFigures *window,
								  AutoRulesState *state,
								  AutoVerdict *verdict);

#endif							/* WALSCALE_AUTO_RULES_H */
