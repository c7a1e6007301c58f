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

/* The constants; walscale_auto_rules.c argues each. */

/* the blocked share: grow at or above, quiet below */
#define AUTO_GROW_BLOCKED_SHARE		0.05
#define AUTO_SHRINK_BLOCKED_SHARE	0.005

/* a window with fewer acquisitions is idle; with fewer sleeps, not hot */
#define AUTO_MIN_ACQUISITIONS	500
#define AUTO_MIN_WAITS			20

/* contended windows in a row before a grow, their most after backoffs */
#define AUTO_HOT_WINDOWS		2
#define AUTO_HOT_WINDOWS_MAX	32
#define AUTO_GROW_BACKOFF_DECAY_S	21600.0

/* the trial: its margin, the noise and the windows it is judged on */
#define AUTO_KEEP_MIN_GAIN			0.03
#define AUTO_KEEP_GAIN_OF_SHARE		0.5
#define AUTO_LOOK_AHEAD_PART		0.5
#define AUTO_TRIAL_Z				2.5
#define AUTO_TRIAL_WINDOWS_MAX		30
#define AUTO_TRIAL_SPARE_WINDOWS	12
#define AUTO_TRIAL_MAX_LOAD_CHANGE	0.1
#define AUTO_LOAD_MOVED				0.2
#define AUTO_LOAD_STEP				2.0
#define AUTO_SPREAD_START			0.10
#define AUTO_SPREAD_WEIGHT			(1.0 / 16)

/* the ceiling an undone grow leaves, and the hold before a halving */
#define AUTO_CEILING_HOLD_S			600.0
#define AUTO_CEILING_HOLD_MAX_S		86400.0
#define AUTO_DOWN_HOLD_S			1800.0

/* quiet windows in a row before a shrink, their most, their backoff's decay */
#define AUTO_QUIET_WINDOWS		6
#define AUTO_QUIET_WINDOWS_MAX	96
#define AUTO_BACKOFF_DECAY_S	3600.0

/* a lock is in use, for a shrink, with this part of an even share */
#define AUTO_MERGE_MIN_EVEN_SHARE	0.25

/* numbers of locks from 1 to 4096 have their own holds */
#define AUTO_LEVELS					13

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
	int			hot_needed;		/* hot windows the next grow needs */
	bool		grow_waits_still;	/* for the load to hold still first */
	double		since_hot_backoff_s;	/* since hot_needed last doubled */
	int			last_grow_from; /* the number before the last kept grow */
	double		since_grow_s;	/* since the last kept grow */
	double		grown_load;		/* the load it was judged under; 0: none */
	int			grown_windows;	/* the windows of that mean */
	int			quiet_windows;	/* quiet windows in a row */
	int			quiet_needed;	/* quiet windows the next shrink needs */
	double		since_backoff_s;	/* time since quiet_needed last doubled */
	int			last_shrink_from;	/* the number before the last shrink */
	double		since_shrink_s; /* time since the last shrink */

	/*
	 * The windows at the number in effect since it changed or was idle, the
	 * newest last: the baseline of the next trial
	 */
	int			recent;
	double		recent_rate[AUTO_TRIAL_WINDOWS_MAX];
	double		recent_wait_ns[AUTO_TRIAL_WINDOWS_MAX]; /* sleep per acquisition */
	double		recent_load[AUTO_TRIAL_WINDOWS_MAX];	/* active, or cpus */
	double		recent_blocked[AUTO_TRIAL_WINDOWS_MAX]; /* of them, asleep */
	double		spread;			/* mean |log| of a window's rate ratio */
	double		load_spread;	/* the same of its load's */

	/* a change on trial: the number it came from (0: none), its baseline */
	int			trial_from;
	int			trial_to;
	int			trial_needed;	/* windows that judge it */
	double		trial_margin;
	double		trial_rate;
	double		trial_wait_ns;
	double		trial_load;
	double		trial_blocked;
	double		trial_load_tolerance;	/* of the mean load, a part of it */
	/* the windows since the change, and those that can judge it */
	int			trial_windows;
	int			trial_judged;
	double		trial_sum_rate;
	double		trial_sum_wait_ns;
	double		trial_sum_load;
	double		trial_sum_blocked;

	/* the ceiling a failed grow left (0: none), and for how long */
	int			ceiling;
	double		ceiling_left_s;

	/* halvings under contention */
	double		since_settled_s;	/* since the number last moved for good */
	int			last_down_from; /* the number before the last kept halving */
	bool		descending;		/* it was kept: the next is due at once */
	/* the best baseline rate of the descent, its number and load (0: none) */
	double		descent_rate;
	int			descent_top;
	double		descent_load;
	int			descent_windows;	/* of that mean */
	int			descent_from;	/* the number it began from */
	bool		descent_recheck;	/* its last halving is to be judged again */
	bool		start_untried;	/* nothing has moved the start yet */
	double		looked_past_load;	/* the load of the last look-past; 0: none */
	int			looked_past_windows;	/* the windows of that mean */
	/* the same for the look-past of a grow, and the number it grew from */
	double		looked_past_grow_load;
	int			looked_past_grow_windows;
	int			looked_past_grow_from;

	/*
	 * Per number of locks (AUTO_LEVELS powers of two): the ceiling the next
	 * failed grow from it leaves, and how long it is held before its halving
	 * is tried; each with the load it was learnt under (0: none)
	 */
	double		grow_hold_s[AUTO_LEVELS];
	double		grow_hold_load[AUTO_LEVELS];
	int			grow_hold_windows[AUTO_LEVELS]; /* of each mean */
	double		down_hold_s[AUTO_LEVELS];
	double		down_hold_load[AUTO_LEVELS];
	int			down_hold_windows[AUTO_LEVELS];
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
	double		spread;			/* the noise, as AutoRulesState.spread */
} AutoVerdict;

/* reasons, for tests and walscale_auto_decisions */
#define AUTO_REASON_GROW		"contention"
#define AUTO_REASON_UNDO		"grow did not help"
#define AUTO_REASON_UNJUDGED	"change could not be judged"
#define AUTO_REASON_LOOK_AHEAD	"look-ahead: grow helped under the margin"
#define AUTO_REASON_LOOK_PAST_GROW	"look-past: grow did not help, try twice as many"
#define AUTO_REASON_TRY_FEWER	"try fewer"
#define AUTO_REASON_FEWER_HURT	"fewer did not keep the rate"
#define AUTO_REASON_LOOK_PAST	"look-past: fewer hurt, try half as many"
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
