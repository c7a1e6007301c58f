/*-------------------------------------------------------------------------
 *
 * walscale.h
 *		Declarations shared by walscale's source files.
 *
 * walscale.c holds the GUCs, the shared memory, the background worker and
 * the SQL functions of the counters; walscale_auto.c chooses the number of
 * insertion locks when walscale.insert_locks is -1, by the rules of
 * walscale_auto_rules.c; walscale_waits.c samples the backends' wait
 * events; walscale_advice.c measures fast-path use and says which setting
 * to change.  walscale_core.h is the core patch's interface.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_H
#define WALSCALE_H

#include "access/xact.h"
#include "access/xlog.h"
#include "datatype/timestamp.h"
#include "storage/lock.h"
#include "storage/lwlock.h"
#include "storage/proc.h"

#include "walscale_auto_rules.h"
#include "walscale_core.h"

/* walscale.insert_locks = -1: the background worker chooses the number */
#define WALSCALE_INSERT_LOCKS_AUTO	(-1)

/* walscale.c */
extern bool walscale_core_active;
extern PGDLLIMPORT int walscale_insert_locks;
extern PGDLLIMPORT int walscale_auto_interval;
extern PGDLLIMPORT int walscale_auto_min_locks_setting;
extern int	walscale_resize_to(int target);
extern void walscale_require_preloaded(void);
extern void walscale_require_core(const char *what);
extern TimestampTz walscale_stats_reset_time(void);

/* the advisor's figures since the last reset, read as one */
typedef struct WalscaleSinceReset
{
	TimestampTz stats_reset;
	uint64		sums[WALINSERT_NUM_COUNTERS];	/* all insertion locks */
	int			locks_used;		/* locks acquired at all */
	int			nactive;		/* locks active now */
	bool		resized;		/* the number changed since the reset */
	uint64		fastpath_overflows;
	uint64		xacts;			/* walscale_advice.c's */
	uint32		fastpath_max_slots;
} WalscaleSinceReset;

extern void walscale_snapshot_since_reset(WalscaleSinceReset *snap);

/* walscale_auto.c */
extern Size walscale_auto_shmem_size(void);
extern void walscale_auto_shmem_init(LWLock *lock, bool found);
extern int	walscale_auto_cpus(void);
extern int	walscale_auto_start_locks(void);
extern int	walscale_auto_min_locks(void);
extern int	walscale_auto_max_locks(void);

/* why auto mode begins, for its log line and walscale_auto_decisions */
typedef enum AutoBeginCause
{
	AUTO_BEGIN_SERVER_START,	/* the worker's first start since shmem init */
	AUTO_BEGIN_WORKER_RESTART,	/* the postmaster started the worker again */
	AUTO_BEGIN_RELOAD,			/* a reload set -1 */
} AutoBeginCause;

extern void walscale_auto_begin(AutoBeginCause cause);
extern void walscale_auto_step(void);
extern bool walscale_auto_due(long *timeout_ms);

/* walscale_waits.c */
extern PGDLLIMPORT int walscale_sample_interval;

/* walscale.sample_interval, in ms: the default and the bounds (README) */
#define WALSCALE_SAMPLE_INTERVAL_DEFAULT	10
#define WALSCALE_SAMPLE_INTERVAL_MAX		1000

#define WAIT_GROUP_WAL_INSERT		"WAL insertion locks"
#define WAIT_GROUP_WAL_WRITE		"WAL write and flush"
#define WAIT_GROUP_SYNC_REP			"synchronous replication"
#define WAIT_GROUP_LOCK_MANAGER		"lock manager"
#define WAIT_GROUP_HEAVYWEIGHT		"heavyweight locks"
#define WAIT_GROUP_IO				"other I/O"
#define WAIT_GROUP_CPU				"CPU"
#define WAIT_GROUP_OTHER			"other"

typedef struct WalscaleWaitCount
{
	uint32		event;			/* wait_event_info; 0: running */
	uint64		samples;
} WalscaleWaitCount;

typedef struct WalscaleWaitsSnapshot
{
	TimestampTz first_sample;	/* 0: no sample since the last reset */
	TimestampTz last_sample;
	uint64		rounds;
	uint64		active;
	uint64		idle;
	uint64		dropped;
	uint64		fastpath_samples;
	uint64		fastpath_full;
	uint32		fastpath_max_slots;
	int			nslots;
	WalscaleWaitCount *slots;
} WalscaleWaitsSnapshot;

extern Size walscale_waits_shmem_size(void);
extern void walscale_waits_shmem_init(LWLock *lock);
extern void walscale_waits_reset(void);
extern bool walscale_waits_due(long *timeout_ms);
extern void walscale_waits_sample(void);
extern void walscale_waits_activity(uint64 *rounds, uint64 *active);
extern const char *walscale_wait_group(uint32 event);
extern void walscale_waits_snapshot(WalscaleWaitsSnapshot *snap);
extern uint64 walscale_waits_group_samples(const WalscaleWaitsSnapshot *snap,
										   const char *group);

/* walscale_advice.c */
extern Size walscale_advice_shmem_size(void);
extern void walscale_advice_shmem_init(bool found);
extern void walscale_advice_reset(void);
extern void walscale_advice_snapshot_locked(WalscaleSinceReset *snap);
extern void walscale_advice_xact_callback(XactEvent event);

#endif							/* WALSCALE_H */
