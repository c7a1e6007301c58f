/*-------------------------------------------------------------------------
 *
 * walscale_fastpath.h
 *		The fast-path overflows that backends publish.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_FASTPATH_H
#define WALSCALE_FASTPATH_H

#include "port/pg_bitutils.h"
#include "storage/proc.h"

#include "walscale.h"

/*
 * lock.c's layout of a group's fpLockBits: FAST_PATH_BITS_PER_SLOT (3) bits
 * of lock modes per slot, FP_LOCK_SLOTS_PER_GROUP (16) slots; the mask has
 * the lowest bit of each slot.
 */
#define FP_SLOT_LOW_BITS	UINT64CONST(0x249249249249)
StaticAssertDecl(FP_SLOT_LOW_BITS >> (3 * (FP_LOCK_SLOTS_PER_GROUP - 1)) == 1,
				 "FP_SLOT_LOW_BITS has one bit per fast-path slot of a group");

/* The slots in use in one group: those with any of their 3 bits set. */
static inline uint32
walscale_fastpath_slots_used(uint64 group_bits)
{
	return pg_popcount64((group_bits | (group_bits >> 1) | (group_bits >> 2)) &
						 FP_SLOT_LOW_BITS);
}

extern Size walscale_fastpath_shmem_size(void);
extern void walscale_fastpath_shmem_init(void);
extern void walscale_fastpath_publish(void);

/* with the reset lock held (walscale_counters.h) */
extern uint64 walscale_fastpath_overflows_locked(void);
extern void walscale_fastpath_reset_locked(void);

#endif							/* WALSCALE_FASTPATH_H */
