/*-------------------------------------------------------------------------
 *
 * walscale_worker.c
 *		walscale's background worker: it applies walscale.insert_locks, runs
 *		auto mode's windows and the wait sampler.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/shmem.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/wait_event.h"

#include "walscale_auto.h"
#include "walscale_counters.h"
#include "walscale_settings.h"
#include "walscale_waits.h"
#include "walscale_worker.h"

typedef struct WalscaleWorkerShared
{
	bool		resizer_started;	/* a worker ran since server start */
} WalscaleWorkerShared;

static WalscaleWorkerShared *worker_shared = NULL;

PGDLLEXPORT void walscale_worker_main(Datum main_arg);

Size
walscale_worker_shmem_size(void)
{
	return sizeof(WalscaleWorkerShared);
}

/* Under AddinShmemInitLock. */
void
walscale_worker_shmem_init(void)
{
	bool		found;

	worker_shared = ShmemInitStruct("walscale worker",
									sizeof(WalscaleWorkerShared), &found);
	if (!found)
		worker_shared->resizer_started = false;
}

/*
 * Apply walscale.insert_locks as it is now: a number is applied as it is;
 * -1 hands the number to auto mode, which starts from the number in effect.
 * Returns whether auto mode is on.
 */
static bool
walscale_apply_insert_locks(AutoBeginCause cause, bool was_auto)
{
	if (walscale_insert_locks != WALSCALE_INSERT_LOCKS_AUTO)
	{
		if (was_auto)
			ereport(LOG,
					(errmsg("walscale: auto mode off, %d WAL insertion locks configured",
							walscale_insert_locks)));
		(void) walscale_resize_to(walscale_insert_locks);
		return false;
	}
	if (!was_auto)
		walscale_auto_begin(cause);
	return true;
}

/*
 * The background worker.  With the core patch it applies
 * walscale.insert_locks: at start, in case it changed while no worker ran,
 * and at each reload.  One process applies every change, so resizes never
 * race each other.  In auto mode it also wakes at the end of each window of
 * walscale.auto_interval to let walscale_auto.c decide.  On any server it
 * samples the backends' wait events every walscale.sample_interval
 * (walscale_waits.c).
 *
 * SIGTERM only sets a flag, checked between resizes, so that a resize, which
 * holds all insertion locks, always completes.  The worker then exits with
 * status 1, for the postmaster to start it again if the server goes on (as
 * after pg_terminate_backend()); status 0 would unregister it for good.
 */
void
walscale_worker_main(Datum main_arg)
{
	bool		auto_mode;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);

	/*
	 * The worker runs no statement for a cancel to end, and a cancel would
	 * otherwise turn into an ERROR at its next CHECK_FOR_INTERRUPTS(), an
	 * exit, and no resizing until the postmaster starts it again.
	 */
	pqsignal(SIGINT, SIG_IGN);
	BackgroundWorkerUnblockSignals();
	/* no database: only to be seen in pg_stat_activity, with its waits */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	/* one worker at a time, so no other process writes resizer_started */
	auto_mode = walscale_core_active &&
		walscale_apply_insert_locks(worker_shared->resizer_started ?
									AUTO_BEGIN_WORKER_RESTART :
									AUTO_BEGIN_SERVER_START,
									false);
	worker_shared->resizer_started = true;
	while (!ShutdownRequestPending)
	{
		long		timeout_ms = -1;
		long		sample_ms;
		int			events = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;

		if (walscale_waits_due(&sample_ms))
		{
			walscale_waits_sample();
			(void) walscale_waits_due(&sample_ms);
		}
		if (auto_mode && walscale_auto_due(&timeout_ms))
		{
			walscale_auto_step();
			(void) walscale_auto_due(&timeout_ms);
		}
		/* the earlier of the two, -1 meaning none */
		if (sample_ms >= 0 && (timeout_ms < 0 || sample_ms < timeout_ms))
			timeout_ms = sample_ms;
		if (timeout_ms >= 0)
			events |= WL_TIMEOUT;

		(void) WaitLatch(MyLatch, events, timeout_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);

			/*
			 * Before any resize, outside its critical section, a test can
			 * pause the worker here.  On PostgreSQL 17 a process's first wait
			 * at an injection point attaches injection_points' DSM segment,
			 * which allocates memory, as no critical section may: a test that
			 * pauses the worker inside a resize has it wait here once first
			 * (prepare_worker_waits() in t/WalscaleInjection.pm).
			 */
			INJECTION_POINT("walscale-worker-reload", NULL);
			if (walscale_core_active)
				auto_mode = walscale_apply_insert_locks(AUTO_BEGIN_RELOAD,
														auto_mode);
		}
	}
	proc_exit(1);
}

void
walscale_register_worker(void)
{
	BackgroundWorker worker = {0};

	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	/* a standby too, so that a promoted one runs with the number asked for */
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 5;
	strlcpy(worker.bgw_library_name, "walscale", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "walscale_worker_main", BGW_MAXLEN);
	strlcpy(worker.bgw_name, walscale_core_active ?
			"walscale insertion lock resizer" : "walscale wait sampler",
			BGW_MAXLEN);
	strlcpy(worker.bgw_type, "walscale", BGW_MAXLEN);
	RegisterBackgroundWorker(&worker);
}
