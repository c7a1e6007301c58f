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
 * decisions.  The README's "Auto mode" section argues each constant.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_AUTO_RULES_H
#define WALSCALE_AUTO_RULES_H

/*
 * Contention, as the share of active backend time spent asleep on the
 * insertion locks: grow at or above the first, count a window as quiet
 * below the second.
 */
#define AUTO_GROW_BLOCKED_SHARE		0.05
#define AUTO_SHRINK_BLOCKED_SHARE	0.005

/* below this many acquisitions, a window is idle: nothing to judge */
#define AUTO_MIN_ACQUISITIONS	500

/* below this many blocking waits, a window's share is too noisy to grow on */
#define AUTO_MIN_WAITS			20

/* contended windows in a row before a grow that no kept grow preceded */
#define AUTO_HOT_WINDOWS		2

/*
 * A grow is kept only if, in the window after it, the sleep per acquisition
 * did not rise and the insertion rate per running backend (acquisitions per
 * second over the fewer of the active backends and the CPUs) rose by
 * AUTO_KEEP_MIN_GAIN, or by AUTO_KEEP_GAIN_OF_SHARE of the share before the
 * grow if that is less.  Otherwise it is undone, and the number it came from
 * becomes a ceiling for AUTO_CEILING_HOLD_S, doubled at each failure in a
 * row up to AUTO_CEILING_HOLD_MAX_S.  A window whose active backends differ
 * from the grow's by more than AUTO_TRIAL_MAX_LOAD_CHANGE cannot judge it:
 * the load changed, not only the locks.  A grow whose rate rose by less, but
 * by AUTO_LOOK_AHEAD_PART of that gain, in a window still contended, doubles
 * once more (AUTO_REASON_LOOK_AHEAD), and the two are kept or undone
 * together, against the first one's baseline.
 */
#define AUTO_KEEP_MIN_GAIN			0.03
#define AUTO_KEEP_GAIN_OF_SHARE		0.5
#define AUTO_TRIAL_MAX_LOAD_CHANGE	0.1
#define AUTO_CEILING_HOLD_S			600.0
#define AUTO_CEILING_HOLD_MAX_S		86400.0
#define AUTO_LOOK_AHEAD_PART		0.5

/*
 * Quiet windows in a row before a shrink, and their most after backoffs; a
 * backoff halves after AUTO_BACKOFF_DECAY_S without another.
 */
#define AUTO_QUIET_WINDOWS		6
#define AUTO_QUIET_WINDOWS_MAX	96
#define AUTO_BACKOFF_DECAY_S	3600.0

/*
 * A shrink is not taken if it would merge two locks in use; a lock is in use
 * with at least this part of an even share of the window's acquisitions.
 */
#define AUTO_MERGE_MIN_EVEN_SHARE	0.25

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

/* what the controller remembers from one window to the next */
typedef struct AutoRulesState
{
	int			hot_windows;	/* contended windows in a row */
	int			quiet_windows;	/* quiet windows in a row */
	int			quiet_needed;	/* quiet windows the next shrink needs */
	double		since_backoff_s;	/* time since quiet_needed last doubled */
	int			last_shrink_from;	/* the number before the last shrink */
	double		since_shrink_s; /* time since the last shrink */
	/* a grow on trial: the number it came from (0: none) and its figures */
	int			trial_from;
	double		trial_share;
	double		trial_rate;
	double		trial_backends; /* active, or cpus when unknown */
	double		trial_wait_ns;	/* sleep per acquisition */
	/* the ceiling a failed grow left (0: none), and for how long */
	int			ceiling;
	double		ceiling_left_s;
	double		ceiling_hold_s; /* the hold the next failure gets */
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
} AutoVerdict;

/* reasons, for tests and walscale_auto_decisions */
#define AUTO_REASON_GROW		"contention"
#define AUTO_REASON_UNDO		"grow did not help"
#define AUTO_REASON_LOOK_AHEAD	"look-ahead: grow helped under the margin"
#define AUTO_REASON_SHRINK		"locks unused"
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
