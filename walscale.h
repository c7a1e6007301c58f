/*-------------------------------------------------------------------------
 *
 * walscale.h
 *		Declarations shared by walscale's source files.
 *
 * walscale.c holds the GUCs, the shared memory, the background worker and
 * the SQL functions of the counters; walscale_auto.c chooses the number of
 * insertion locks when walscale.insert_locks is -1, by the rules of
 * walscale_auto_rules.c; walscale_advice.c measures fast-path use and says
 * which setting to change.
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

/*
 * A module built against a patched server and loaded into a stock one must
 * say so in words, not fail with "undefined symbol": every symbol of the core
 * patch is referenced weakly, in every file, and _PG_init() checks
 * WalscaleCoreVersion.
 */
#ifndef WALSCALE_CORE_VERSION
#error "this PostgreSQL lacks walscale's core patch: build the server with scripts/build-postgres.sh and point PG_CONFIG at it (make does both)"
#endif

#ifdef __GNUC__
#pragma weak WalscaleCoreVersion
#pragma weak XLogInsertLocksRequested
#pragma weak XLogInsertLocksAllocated
#pragma weak GetNumWALInsertLocks
#pragma weak GetMaxWALInsertLocks
#pragma weak SetNumWALInsertLocks
#pragma weak XLogInsertLockAttempts
#pragma weak GetWALInsertLockCounters
#pragma weak FastPathLockGroupsRequested
#pragma weak FastPathLockOverflows
#endif

/* walscale.insert_locks = -1: the background worker chooses the number */
#define WALSCALE_INSERT_LOCKS_AUTO	(-1)

/* walscale.c */
extern PGDLLIMPORT int walscale_insert_locks;
extern PGDLLIMPORT int walscale_auto_interval;
extern int	walscale_resize_to(int target);
extern void walscale_require_preloaded(void);
extern TimestampTz walscale_stats_reset_time(void);
extern uint64 walscale_fastpath_overflows_since_reset(void);
extern int	walscale_counters_since_reset(uint64 sums[WALINSERT_NUM_COUNTERS],
										  int *locks_used);

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

/* walscale_advice.c */
extern Size walscale_advice_shmem_size(void);
extern void walscale_advice_shmem_init(bool found);
extern void walscale_advice_reset(void);
extern void walscale_advice_xact_callback(XactEvent event);

#endif							/* WALSCALE_H */
