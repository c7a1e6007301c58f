/*-------------------------------------------------------------------------
 *
 * walscale_worker.h
 *		The background worker: applies the number of locks, runs auto mode and the sampler.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_WORKER_H
#define WALSCALE_WORKER_H

#include "walscale.h"

extern Size walscale_worker_shmem_size(void);
extern void walscale_worker_shmem_init(void);
extern void walscale_register_worker(void);

#endif							/* WALSCALE_WORKER_H */
