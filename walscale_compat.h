/*-------------------------------------------------------------------------
 *
 * walscale_compat.h
 *		What differs between the PostgreSQL major versions walscale builds
 *		against, 17 and 18, so that one source serves both.
 *
 * walscale is written against PostgreSQL 18.  Where 17 differs, this file
 * gives 17 the name 18 has, or a wrapper both spell alike, each with the
 * version that differs and why, as pg_wait_sampling's compat.h does.  A
 * module built against 17's headers loads only into 17 (the magic block
 * checks the major version), so every test here is a compile-time one.
 *
 * The core patch's own differences, the fast-path variables that 17's
 * series lacks, are in walscale_core.h.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_COMPAT_H
#define WALSCALE_COMPAT_H

#include "fmgr.h"
#include "storage/proc.h"
#include "utils/injection_point.h"

#if PG_VERSION_NUM < 170000
#error "walscale needs PostgreSQL 17 or 18"
#endif

/*
 * PostgreSQL 18 moved the wait event classes (PG_WAIT_LWLOCK, ...) out of
 * utils/wait_event.h into utils/wait_classes.h, which 17 does not have.
 */
#if PG_VERSION_NUM >= 180000
#include "utils/wait_classes.h"
#else
#include "utils/wait_event.h"
#endif

/*
 * PostgreSQL 18 added PG_MODULE_MAGIC_EXT, which records the module's name
 * and version for pg_get_loaded_modules(); 17 has the plain magic block.
 */
#if PG_VERSION_NUM < 180000
#define PG_MODULE_MAGIC_EXT(...) PG_MODULE_MAGIC
#endif

/*
 * PostgreSQL 18 passes an argument to an injection point's callback
 * (INJECTION_POINT(name, arg)); 17's points take the name alone.  walscale
 * passes NULL, so on 17 the argument is dropped.
 */
#if PG_VERSION_NUM < 180000
#undef INJECTION_POINT
#ifdef USE_INJECTION_POINTS
#define INJECTION_POINT(name, arg) InjectionPointRun(name)
#else
#define INJECTION_POINT(name, arg) ((void) name)
#endif
#endif

/*
 * PostgreSQL 18 keeps whether a PGPROC is a regular backend
 * (isRegularBackend); 17 keeps the opposite, isBackgroundWorker, which is
 * set for background workers and auxiliary processes alike, as 18's flag is
 * clear for both.
 */
#if PG_VERSION_NUM >= 180000
#define WALSCALE_PROC_IS_REGULAR_BACKEND(proc) ((proc)->isRegularBackend)
#else
#define WALSCALE_PROC_IS_REGULAR_BACKEND(proc) (!(proc)->isBackgroundWorker)
#endif

/*
 * Fast-path lock groups are PostgreSQL 18's: a backend has
 * FastPathLockGroupsPerBackend groups of FP_LOCK_SLOTS_PER_GROUP (16)
 * slots, derived from max_locks_per_transaction, or, with walscale's core
 * patch, from walscale.fastpath_groups, and PGPROC's fpLockBits points to
 * one uint64 of lock-mode bits per group.  PostgreSQL 17 has 16 fixed
 * slots per backend (FP_LOCK_SLOTS_PER_BACKEND), whose bits are one uint64
 * in PGPROC laid out as one of 18's groups: there, the code that counts the
 * slots in use sees one group of 16, and nothing can change their number.
 *
 * WALSCALE_HAS_FASTPATH_GROUPS says whether the server has groups to size;
 * WALSCALE_NO_FASTPATH_GROUPS_REASON, where it has not, is why
 * walscale.fastpath_groups is not in effect, for walscale_setting_status,
 * the log and the advice.
 */
#if PG_VERSION_NUM >= 180000
#define WALSCALE_HAS_FASTPATH_GROUPS	1
#define WALSCALE_NO_FASTPATH_GROUPS_REASON	NULL
#else
#define WALSCALE_HAS_FASTPATH_GROUPS	0
#define WALSCALE_NO_FASTPATH_GROUPS_REASON \
	"PostgreSQL 17 has 16 fixed fast-path slots per backend and no fast-path lock groups, which PostgreSQL 18 added."
#define FP_LOCK_SLOTS_PER_GROUP			FP_LOCK_SLOTS_PER_BACKEND
#define FastPathLockGroupsPerBackend	1
#define FastPathLockSlotsPerBackend()	FP_LOCK_SLOTS_PER_BACKEND
#endif

/* what the core patch lets walscale change, for the observe mode warning */
#if PG_VERSION_NUM >= 180000
#define WALSCALE_CORE_CHANGES \
	"the WAL insertion locks or the fast-path lock groups"
#else
#define WALSCALE_CORE_CHANGES	"the WAL insertion locks"
#endif

/*
 * The largest walscale.fastpath_groups: 18's bound on the number of groups.
 * On PostgreSQL 17, which has no groups, the setting accepts the same
 * values, so that one postgresql.conf serves both versions; they are not in
 * effect there.
 */
#if PG_VERSION_NUM >= 180000
#define WALSCALE_FASTPATH_GROUPS_MAX	FP_LOCK_GROUPS_PER_BACKEND_MAX
#else
#define WALSCALE_FASTPATH_GROUPS_MAX	1024
#endif

/*
 * A PGPROC's fast-path lock bits, one uint64 per group: 18's fpLockBits is
 * a pointer to them (NULL until the PGPROC is set up), 17's is the one
 * uint64 itself.
 */
static inline uint64 *
walscale_fp_lock_bits(PGPROC *proc)
{
#if PG_VERSION_NUM >= 180000
	return proc->fpLockBits;
#else
	return &proc->fpLockBits;
#endif
}

#endif							/* WALSCALE_COMPAT_H */
