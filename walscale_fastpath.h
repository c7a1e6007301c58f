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

#include "walscale.h"

extern Size walscale_fastpath_shmem_size(void);
extern void walscale_fastpath_shmem_init(void);
extern void walscale_fastpath_publish(void);

/* with the reset lock held (walscale_counters.h) */
extern uint64 walscale_fastpath_overflows_locked(void);
extern void walscale_fastpath_reset_locked(void);

#endif							/* WALSCALE_FASTPATH_H */
