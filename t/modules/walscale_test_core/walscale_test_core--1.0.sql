/* t/modules/walscale_test_core/walscale_test_core--1.0.sql */

\echo Use "CREATE EXTENSION walscale_test_core" to load this file. \quit

-- Attach a callback to injection point "point" that calls
-- SetNumWALInsertLocks(nlocks) in whatever process reaches the point, and
-- load it in this backend (for points run with INJECTION_POINT_CACHED).
CREATE FUNCTION walscale_test_attach_resize(point text, nlocks int)
RETURNS void
AS 'MODULE_PATHNAME' LANGUAGE C STRICT;

-- SetNumWALInsertLocks(nlocks) called while holding WALWriteLock; returns
-- the number active before, if the core lets the call through.
CREATE FUNCTION walscale_test_resize_holding_lwlock(nlocks int)
RETURNS int
AS 'MODULE_PATHNAME' LANGUAGE C STRICT;

-- GetLastImportantRecPtr(), as the bgwriter and the checkpointer call it.
CREATE FUNCTION walscale_test_last_important_lsn()
RETURNS pg_lsn
AS 'MODULE_PATHNAME' LANGUAGE C STRICT;

-- Hold the content locks of the first n buffers at once, then let them go.
CREATE FUNCTION walscale_test_take_lwlocks(n int)
RETURNS int
AS 'MODULE_PATHNAME' LANGUAGE C STRICT;

-- XLOGShmemSize() computed with XLogInsertLocksRequested set to
-- "requested" in this backend, the number restored afterwards.
CREATE FUNCTION walscale_test_xlog_shmem_size(requested int)
RETURNS bigint
AS 'MODULE_PATHNAME' LANGUAGE C STRICT;

-- XLogInsertLocksAllocated and the number active, as this backend sees them.
CREATE FUNCTION walscale_test_insert_locks(OUT allocated int, OUT active int)
RETURNS record
AS 'MODULE_PATHNAME' LANGUAGE C STRICT;

-- Whether the server is built with EXEC_BACKEND, where every child of the
-- postmaster loads shared_preload_libraries again.
CREATE FUNCTION walscale_test_exec_backend()
RETURNS bool
AS 'MODULE_PATHNAME' LANGUAGE C STRICT;
