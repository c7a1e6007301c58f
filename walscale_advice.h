/*-------------------------------------------------------------------------
 *
 * walscale_advice.h
 *		Fast-path measurement and walscale_advice.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_ADVICE_H
#define WALSCALE_ADVICE_H

#include "access/xact.h"
#include "datatype/timestamp.h"

#include "walscale_counters.h"

/* the advisor's figures since the last reset, read as one */
typedef struct WalscaleSinceReset
{
	WalscaleCounterSums counters;	/* the insertion locks' */
	uint64		fastpath_overflows;
	uint64		xacts;
	uint32		fastpath_max_slots;
} WalscaleSinceReset;

extern Size walscale_advice_shmem_size(void);
extern void walscale_advice_shmem_init(bool found);
extern void walscale_advice_snapshot(WalscaleSinceReset *snap);
extern void walscale_advice_xact_callback(XactEvent event);

/* with the reset lock held (walscale_counters.h) */
extern void walscale_advice_reset_locked(void);

#endif							/* WALSCALE_ADVICE_H */
