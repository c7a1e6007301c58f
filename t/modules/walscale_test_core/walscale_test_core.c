/*-------------------------------------------------------------------------
 *
 * walscale_test_core.c
 *	  Uses of the walscale core patch's interface that its documentation
 *	  forbids, so that a test can show the core refusing them instead of
 *	  hanging or sizing shared memory twice.  For t/014 and t/022 only; never
 *	  shipped.
 *
 *	  - walscale_test_attach_resize() makes an injection point call
 *	    SetNumWALInsertLocks(), which then runs in whatever the process was
 *	    doing there: inside an insertion, or holding every lock.
 *	  - walscale_test_resize_holding_lwlock() calls it holding WALWriteLock,
 *	    which an inserter may wait for with its insertion lock held.
 *	  - walscale_test_last_important_lsn() calls GetLastImportantRecPtr(),
 *	    which must not wait for the insertion locks (t/007).
 *	  - walscale_test_take_lwlocks() holds that many LWLocks at once, to
 *	    show the limit on held LWLocks outside the all-lock path (t/014).
 *	  - walscale_test_core.requested_locks (preloaded only) sets
 *	    XLogInsertLocksRequested and leaves XLogInsertLocksAllocated alone, as
 *	    a module that sizes only the number active would.
 *	  - walscale_test_xlog_shmem_size() computes XLOGShmemSize() with another
 *	    requested number, as an EXEC_BACKEND child does with its own.
 *	  - walscale_test_exec_backend() says whether the server is built with
 *	    EXEC_BACKEND.
 *	  - walscale_test_core.child_requested_locks and
 *	    walscale_test_core.child_fastpath_groups (preloaded only) set
 *	    XLogInsertLocksRequested and FastPathLockGroupsRequested in the
 *	    processes that load the preloaded libraries again, not in the
 *	    postmaster: only EXEC_BACKEND children do, and they size nothing,
 *	    so the core must hold them to the postmaster's numbers (t/022).
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/buf_internals.h"
#include "storage/bufmgr.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/injection_point.h"
#include "utils/pg_lsn.h"

PG_MODULE_MAGIC;

/* 0: leave XLogInsertLocksRequested as it is */
static int	requested_locks = 0;

/* in EXEC_BACKEND children only; 0: leave the number as it is */
static int	child_requested_locks = 0;
#if PG_VERSION_NUM >= 180000
static int	child_fastpath_groups = 0;
#endif

PGDLLEXPORT void walscale_test_resize_callback(const char *name,
											   const void *private_data,
											   void *arg);

void
_PG_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomIntVariable("walscale_test_core.requested_locks",
							"Sets XLogInsertLocksRequested, and only it, at server start.",
							"0 leaves it as it is.",
							&requested_locks,
							0, 0, XLOG_INSERT_LOCKS_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("walscale_test_core.child_requested_locks",
							"Sets XLogInsertLocksRequested in EXEC_BACKEND children, not in the postmaster.",
							"0 leaves it as it is.",
							&child_requested_locks,
							0, 0, XLOG_INSERT_LOCKS_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
#if PG_VERSION_NUM >= 180000
	/* PostgreSQL 17 has no fast-path lock groups, nor its core patch this */
	DefineCustomIntVariable("walscale_test_core.child_fastpath_groups",
							"Sets FastPathLockGroupsRequested in EXEC_BACKEND children, not in the postmaster.",
							"0 leaves it as it is.",
							&child_fastpath_groups,
							0, 0, FP_LOCK_GROUPS_PER_BACKEND_MAX,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
#endif
	MarkGUCPrefixReserved("walscale_test_core");

	if (requested_locks > 0)
		XLogInsertLocksRequested = requested_locks;

	/*
	 * Under the postmaster, preloading happens only in an EXEC_BACKEND child,
	 * before it attaches to shared memory; a forked child never gets here.
	 */
	if (IsUnderPostmaster)
	{
		if (child_requested_locks > 0)
			XLogInsertLocksRequested = child_requested_locks;
#if PG_VERSION_NUM >= 180000
		if (child_fastpath_groups > 0)
			FastPathLockGroupsRequested = child_fastpath_groups;
#endif
	}
}

/*
 * The injection point's callback: change the number of locks to the one
 * given at attach time, from wherever the point is.
 */
void
walscale_test_resize_callback(const char *name, const void *private_data,
							  void *arg)
{
	uint64		held_ns;

	elog(LOG, "walscale_test_core: SetNumWALInsertLocks(%d) at injection point \"%s\"",
		 *(const int *) private_data, name);
	SetNumWALInsertLocks(*(const int *) private_data, &held_ns);
}

PG_FUNCTION_INFO_V1(walscale_test_attach_resize);
Datum
walscale_test_attach_resize(PG_FUNCTION_ARGS)
{
	char	   *point = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int			nlocks = PG_GETARG_INT32(1);

	InjectionPointAttach(point, "walscale_test_core",
						 "walscale_test_resize_callback",
						 &nlocks, sizeof(nlocks));
	InjectionPointLoad(point);
	PG_RETURN_VOID();
}

/*
 * SetNumWALInsertLocks(nlocks) while holding WALWriteLock, an LWLock that is
 * no insertion lock; the core must refuse with an ERROR, whose abort
 * releases the lock.
 */
PG_FUNCTION_INFO_V1(walscale_test_resize_holding_lwlock);
Datum
walscale_test_resize_holding_lwlock(PG_FUNCTION_ARGS)
{
	int			old;

	LWLockAcquire(WALWriteLock, LW_EXCLUSIVE);
	old = SetNumWALInsertLocks(PG_GETARG_INT32(0), NULL);
	LWLockRelease(WALWriteLock);
	PG_RETURN_INT32(old);
}

/*
 * GetLastImportantRecPtr(), which the bgwriter and the checkpointer call;
 * with walscale's core patch it reads the insertion locks' lastImportantAt
 * without taking the locks, so it returns while another process holds them
 * all.
 */
PG_FUNCTION_INFO_V1(walscale_test_last_important_lsn);
Datum
walscale_test_last_important_lsn(PG_FUNCTION_ARGS)
{
	PG_RETURN_LSN(GetLastImportantRecPtr());
}

/*
 * Hold the content locks of the first n buffers at once, in shared mode,
 * then let them go; returns n.  Beyond the limit on LWLocks held at once
 * LWLockAcquire() raises "too many LWLocks taken", and the abort releases
 * those held.
 */
PG_FUNCTION_INFO_V1(walscale_test_take_lwlocks);
Datum
walscale_test_take_lwlocks(PG_FUNCTION_ARGS)
{
	int			n = PG_GETARG_INT32(0);

	if (n < 0 || n > NBuffers)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("number of locks (%d) must be between 0 and %d",
						n, NBuffers)));
	for (int i = 0; i < n; i++)
		LWLockAcquire(BufferDescriptorGetContentLock(GetBufferDescriptor(i)),
					  LW_SHARED);
	for (int i = n - 1; i >= 0; i--)
		LWLockRelease(BufferDescriptorGetContentLock(GetBufferDescriptor(i)));
	PG_RETURN_INT32(n);
}

PG_FUNCTION_INFO_V1(walscale_test_xlog_shmem_size);
Datum
walscale_test_xlog_shmem_size(PG_FUNCTION_ARGS)
{
	int			saved = XLogInsertLocksRequested;
	Size		size;

	XLogInsertLocksRequested = PG_GETARG_INT32(0);
	size = XLOGShmemSize();
	XLogInsertLocksRequested = saved;
	PG_RETURN_INT64((int64) size);
}

PG_FUNCTION_INFO_V1(walscale_test_insert_locks);
Datum
walscale_test_insert_locks(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int32GetDatum(XLogInsertLocksAllocated);
	values[1] = Int32GetDatum(GetNumWALInsertLocks());
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* Whether this server is built with EXEC_BACKEND: its children exec. */
PG_FUNCTION_INFO_V1(walscale_test_exec_backend);
Datum
walscale_test_exec_backend(PG_FUNCTION_ARGS)
{
#ifdef EXEC_BACKEND
	PG_RETURN_BOOL(true);
#else
	PG_RETURN_BOOL(false);
#endif
}
