/*-------------------------------------------------------------------------
 *
 * walscale_auto.h
 *		Auto mode: the worker's step, its bounds, and the decisions ring.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_AUTO_H
#define WALSCALE_AUTO_H

#include "storage/lwlock.h"

#include "walscale.h"

extern Size walscale_auto_shmem_size(void);
extern void walscale_auto_shmem_init(LWLock *lock, bool found);

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

#endif							/* WALSCALE_AUTO_H */
