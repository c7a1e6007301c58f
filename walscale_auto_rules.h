/*-------------------------------------------------------------------------
 *
 * walscale_auto_rules.h
 *		Auto mode's rules as pure functions: the number of insertion locks
 *		to start from, its bounds, and the decision at the end of a window.
 *
 * They read no shared memory, clock, GUC or other global, and need only
 * c.h, so that t/unit/test_auto_rules.c can call them outside the server
 * (t/010_auto_rules.pl).  walscale_auto.c gathers the figures and applies
 * the decisions.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_AUTO_RULES_H
#define WALSCALE_AUTO_RULES_H

/* the controller's thresholds, which the advisor shares */
#define WALSCALE_GROW_WAITS_PER_1000	2.0
#define WALSCALE_SHRINK_WAITS_PER_1000	0.2

/* below this many acquisitions in a window, the figures are noise */
#define AUTO_MIN_ACQUISITIONS	500

/* sleep on the insertion locks, in ms summed over backends, per second */
#define AUTO_GROW_BLOCKED_MS_PER_S		200.0
#define AUTO_SHRINK_BLOCKED_MS_PER_S	20.0

/* contended windows in a row before a grow */
#define AUTO_HOT_WINDOWS		2

/* quiet windows in a row before a shrink, and their most after backoffs */
#define AUTO_QUIET_WINDOWS		3
#define AUTO_QUIET_WINDOWS_MAX	48

/* what a closed window measured, and the bounds it is judged within */
typedef struct AutoWindowFigures
{
	uint64		acquisitions;
	uint64		blocking_waits; /* acquisitions that slept */
	uint64		blocked_ns;		/* their sleep, summed over backends */
	int			locks_used;		/* active locks acquired at least once */
	int			active_locks;	/* in effect during the window */
	double		window_s;		/* the window's length, > 0 */
	int			min_locks;
	int			max_locks;
} AutoWindowFigures;

/* what the controller remembers from one window to the next */
typedef struct AutoRulesState
{
	int			hot_windows;	/* contended windows in a row */
	int			quiet_windows;	/* quiet windows in a row */
	int			quiet_needed;	/* quiet windows the next shrink needs */
	int			last_shrink_from;	/* the number before the last shrink */
} AutoRulesState;

/* the decision on one window */
typedef struct AutoVerdict
{
	int			target;			/* the number for the next window */
	const char *reason;			/* why it changes; NULL when it holds */
	double		waits_per_1000; /* blocking waits per 1000 acquisitions */
	double		blocked_ms_per_s;	/* ms slept, summed over backends, per s */
} AutoVerdict;

/*
 * The bounds and the start, for cpus from 1 to 4096.  stock_locks is
 * PostgreSQL's own number and core_max_locks the most the core patch has
 * slots for (XLOG_INSERT_LOCKS_DEFAULT and XLOG_INSERT_LOCKS_MAX).
 */
extern int	walscale_rules_min_locks(int cpus);
extern int	walscale_rules_max_locks(int cpus, int stock_locks,
									 int core_max_locks);
extern int	walscale_rules_start_locks(int cpus, int stock_locks,
									   int core_max_locks);

extern int	walscale_rules_begin(AutoRulesState *state, int current_locks,
								 int max_locks);
extern void walscale_rules_decide(const AutoWindowFigures *window,
								  AutoRulesState *state,
								  AutoVerdict *verdict);

#endif							/* WALSCALE_AUTO_RULES_H */
