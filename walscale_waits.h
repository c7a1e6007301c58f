/*-------------------------------------------------------------------------
 *
 * walscale_waits.h
 *		The wait sampler: the backends' wait events, grouped.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_WAITS_H
#define WALSCALE_WAITS_H

#include "datatype/timestamp.h"
#include "storage/lwlock.h"

#include "walscale.h"

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

#endif							/* WALSCALE_WAITS_H */
