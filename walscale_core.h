/*-------------------------------------------------------------------------
 *
 * walscale_core.h
 *		The core patch's interface, as walscale uses it, on any PostgreSQL 17
 *		or 18.
 *
 * Built against a patched server, the declarations come from its headers;
 * against a stock server, from the copy below, which must match the core
 * version it names.  Either way every symbol of the core patch is referenced
 * weakly, so that the same module file loads into a stock server, a patched
 * one, or one with another core version, and walscale_core_present() says
 * which at run time.  The copy is the interface of core version 4
 * (patches/pg18/, xlog.h, proc.h and lock.h).
 *
 * PostgreSQL 17's series (patches/pg17/) also ends at version 4, without
 * 18's fast-path lock groups: its headers lack FastPathLockGroupsRequested
 * and FastPathLockOverflows, which are declared below for them, and its
 * servers lack them, so there they resolve to NULL.  walscale never uses
 * them where walscale_compat.h's WALSCALE_HAS_FASTPATH_GROUPS is false
 * (walscale_core_fastpath() in walscale.h).
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef WALSCALE_CORE_H
#define WALSCALE_CORE_H

#include "access/xlog.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/hsearch.h"

#ifndef WALSCALE_CORE_VERSION
#define WALSCALE_CORE_VERSION		4
#define XLOG_INSERT_LOCKS_DEFAULT	8
#define XLOG_INSERT_LOCKS_MAX		1024

extern PGDLLIMPORT const int WalscaleCoreVersion;
extern PGDLLIMPORT int XLogInsertLocksRequested;
extern PGDLLIMPORT int XLogInsertLocksAllocated;
extern PGDLLIMPORT int XLogInsertLockAttempts;

typedef enum WALInsertLockCounter
{
	WALINSERT_FIRST_TRY,
	WALINSERT_CONTENDED,
	WALINSERT_FAILED_ATTEMPTS,
	WALINSERT_BLOCKED,
	WALINSERT_BLOCKED_NS,
	WALINSERT_EXCLUSIVE,
	WALINSERT_FLUSH_WAITS,
	WALINSERT_NUM_COUNTERS
} WALInsertLockCounter;

extern int	GetNumWALInsertLocks(void);
extern int	GetMaxWALInsertLocks(void);
extern int	SetNumWALInsertLocks(int nlocks, uint64 *held_ns);
extern void GetWALInsertLockCounters(int lockno,
									 uint64 counters[WALINSERT_NUM_COUNTERS]);

extern PGDLLIMPORT int FastPathLockGroupsRequested;
extern PGDLLIMPORT uint64 FastPathLockOverflows;

/* stock servers declare and build it only with assertions */
extern HTAB *GetLockMethodLocalHash(void);
#elif WALSCALE_CORE_VERSION != 4
#error "walscale is written for version 4 of its core patch, and the server's headers are of another version"
#elif PG_VERSION_NUM < 180000
/* 17's core patch has no fast-path lock groups: never defined there */
extern PGDLLIMPORT int FastPathLockGroupsRequested;
extern PGDLLIMPORT uint64 FastPathLockOverflows;
#endif							/* !WALSCALE_CORE_VERSION */

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
#pragma weak GetLockMethodLocalHash
#else
#error "walscale needs weak symbols (GCC or Clang) to load into servers with and without its core patch"
#endif

/* the number of insertion locks that a server without the core patch has */
#define WALSCALE_STOCK_INSERT_LOCKS	8

/*
 * Whether the server has the core patch of the version this module was
 * built for: only then may the symbols above be used.
 */
static inline bool
walscale_core_present(void)
{
	return &WalscaleCoreVersion != NULL &&
		WalscaleCoreVersion == WALSCALE_CORE_VERSION;
}

#endif							/* WALSCALE_CORE_H */
