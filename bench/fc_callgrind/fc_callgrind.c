/*
 * bench/fc_callgrind: lets one backend switch callgrind's instrumentation
 * on for itself (bench/flush-contended.sh).  A server run under
 * valgrind --tool=callgrind --instr-atstart=no counts nothing until a
 * backend calls fc_callgrind_on(); no-ops outside valgrind.  A benchmark
 * helper, never installed by the packages.
 */
#include "postgres.h"

#include "fmgr.h"

#include <valgrind/callgrind.h>

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(fc_callgrind_on);

Datum
fc_callgrind_on(PG_FUNCTION_ARGS)
{
	CALLGRIND_START_INSTRUMENTATION;
	PG_RETURN_VOID();
}
