/*-------------------------------------------------------------------------
 *
 * walscale_counters.h
 *		The insertion-lock counters' baseline and the record of resizes.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_COUNTERS_H
#define WALSCALE_COUNTERS_H

#include "datatype/timestamp.h"
#include "storage/lwlock.h"

#include "walscale.h"

/*
 * The reset lock: walscale_reset() holds it exclusively while it takes every
 * baseline, so a reader that holds it shared sees the figures of all files
 * as of one reset.
 */
extern void walscale_counters_lock(LWLockMode mode);
extern void walscale_counters_unlock(void);

/* the insertion-lock counters since the last reset, read as one */
typedef struct WalscaleCounterSums
{
	TimestampTz stats_reset;
	uint64		sums[WALINSERT_NUM_COUNTERS];	/* all insertion locks */
	int			locks_used;		/* locks acquired at all */
	int			nactive;		/* locks active now */
	bool		resized;		/* the number changed since the reset */
} WalscaleCounterSums;

/* the last change of the number of locks */
typedef struct WalscaleResizeRecord
{
	int64		resizes;		/* since server start */
	TimestampTz last_resize;	/* 0 if none */
	int			last_resize_from;
	double		last_resize_held_ms;
} WalscaleResizeRecord;

extern Size walscale_counters_shmem_size(void);
extern bool walscale_counters_shmem_init(LWLock *lock);
extern int	walscale_resize_to(int target);
extern TimestampTz walscale_stats_reset_time(void);
extern void walscale_counters_resize_record(WalscaleResizeRecord *record);

/* with the reset lock held */
extern TimestampTz walscale_counters_reset_time_locked(void);
extern void walscale_counters_read_locked(WalscaleCounterSums *sums);
extern void walscale_counters_reset_locked(TimestampTz now);

#endif							/* WALSCALE_COUNTERS_H */
