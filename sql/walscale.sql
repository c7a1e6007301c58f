-- walscale's SQL surface, on a server started with walscale.conf
CREATE EXTENSION walscale;

-- On a server without the core patch (a stock server, as in the Debian
-- package's installcheck): observe mode, and nothing after this block,
-- which needs the core.  The server's minor version, which the reasons
-- name, is left out of the output.
SELECT core_version IS NULL AS observe_mode FROM walscale_settings \gset
\if :observe_mode
SELECT insert_locks, insert_locks_configured, insert_locks_allocated,
       insert_lock_attempts, insert_locks_mode, resizes
FROM walscale_settings;
SELECT setting, configured, effective, in_effect,
       regexp_replace(reason, 'PostgreSQL [0-9]+\.[0-9]+', 'PostgreSQL N') AS reason
FROM walscale_setting_status ORDER BY setting;
\set VERBOSITY sqlstate
SELECT count(*) FROM walscale_stats;
\set VERBOSITY default
SELECT overflows IS NULL AS no_overflows FROM walscale_fastpath;
SELECT count(*) AS decisions FROM walscale_auto_decisions;
SELECT sample_interval_ms, rounds >= 0 AS counting, dropped_samples
FROM walscale_sampling;
SELECT count(*) >= 0 AS groups_listed FROM walscale_wait_groups;
SELECT array_agg(setting ORDER BY setting) AS advised FROM walscale_advice;
SELECT walscale_reset() <= clock_timestamp() AS reset;
\quit
\endif

-- one row per insertion lock, numbered from 0; counting since the server
-- started (shared memory is set up just before pg_postmaster_start_time),
-- the same time in both views
SELECT count(*) AS locks, min(lock_id) AS first, max(lock_id) AS last,
       bool_and(active) AS all_active,
       bool_and(s.stats_reset BETWEEN pg_postmaster_start_time() - interval '10 minutes'
                                  AND pg_postmaster_start_time()) AS since_start,
       bool_and(s.stats_reset = f.stats_reset) AS same_in_fastpath
FROM walscale_stats s, walscale_fastpath f;

-- the settings in effect are those of walscale.conf; slots are allocated
-- for the most locks, and nothing was resized since the start
SELECT core_version >= 1 AS patched, insert_locks, insert_locks_configured,
       insert_locks_allocated, insert_lock_attempts,
       fastpath_groups, fastpath_groups_source
FROM walscale_settings;
SELECT resizes, last_resize IS NULL AS never_resized,
       last_resize_from IS NULL AND last_resize_held_ms IS NULL AS nothing_held
FROM walscale_settings;

SELECT groups_per_backend, slots_per_backend
FROM walscale_fastpath;

-- with the core patch, every setting is in effect; auto_interval only in
-- auto mode, which walscale.conf turns off
SELECT setting, configured, effective, in_effect, reason
FROM walscale_setting_status ORDER BY setting;

-- the wait sampler runs at its default interval; its views answer
SELECT sample_interval_ms, rounds >= 0 AS counting, dropped_samples,
       stats_reset = (SELECT stats_reset FROM walscale_fastpath) AS same_reset
FROM walscale_sampling;
SELECT count(*) >= 0 AS groups_listed FROM walscale_wait_groups;
SELECT bool_and(share BETWEEN 0 AND 1) IS NOT FALSE AS shares_in_range
FROM walscale_waits;

-- every WAL record written by this backend is counted at least once, at
-- the first try on its preferred lock, its ProcNumber modulo the number of
-- locks (nothing else contends with it here)
SELECT s AS procnumber FROM pg_stat_get_backend_idset() AS s
WHERE pg_stat_get_backend_pid(s) = pg_backend_pid() \gset
SELECT sum(acquisitions) AS acquired_before,
       array_agg(first_try ORDER BY lock_id) AS first_try_before
FROM walscale_stats \gset
SELECT count(pg_logical_emit_message(false, 'walscale', 'record ' || i))
FROM generate_series(1, 500) AS i;
SELECT sum(acquisitions) - :acquired_before >= 500 AS counted
FROM walscale_stats;
SELECT lock_id = :procnumber % (SELECT insert_locks FROM walscale_settings)
         AS preferred_lock,
       first_try - (:'first_try_before'::bigint[])[lock_id + 1] >= 500
         AS at_first_try
FROM walscale_stats
ORDER BY first_try - (:'first_try_before'::bigint[])[lock_id + 1] DESC, lock_id
LIMIT 1;

-- CHECKPOINT takes every lock at once
SELECT array_agg(exclusive_acquisitions ORDER BY lock_id) AS exclusive_before
FROM walscale_stats \gset
CHECKPOINT;
SELECT count(*) FILTER (WHERE exclusive_acquisitions
                              - (:'exclusive_before'::bigint[])[lock_id + 1] >= 1)
         AS locks_taken_exclusively
FROM walscale_stats;

-- a reset starts every counter afresh and records when: the time it was
-- called, not an older one
SELECT clock_timestamp() AS before_reset \gset
SELECT walscale_reset() AS reset_at \gset
SELECT :'reset_at'::timestamptz >= :'before_reset'::timestamptz
       AND :'reset_at'::timestamptz <= clock_timestamp() AS reset_time_now;
SELECT bool_and(stats_reset = :'reset_at') AS same_time,
       sum(acquisitions) < 50 AS few_since,
       sum(exclusive_acquisitions) = 0 AS no_exclusive
FROM walscale_stats;
SELECT stats_reset = :'reset_at' AS fastpath_reset FROM walscale_fastpath;

-- a transaction that locks more relations than its 16 slots overflows
DO $$
BEGIN
  FOR i IN 1..40 LOOP
    EXECUTE format('CREATE TABLE walscale_fp_%s (i int)', i);
  END LOOP;
END $$;
BEGIN;
DO $$
BEGIN
  FOR i IN 1..40 LOOP
    EXECUTE format('SELECT 1 FROM walscale_fp_%s', i);
  END LOOP;
END $$;
SELECT count(*) AS fastpath_locks_held
FROM pg_locks WHERE pid = pg_backend_pid() AND fastpath AND locktype = 'relation';
COMMIT;
SELECT overflows >= 40 - 16 AS overflowed FROM walscale_fastpath;
-- and a reset starts the overflow count afresh
SELECT walscale_reset() IS NOT NULL AS reset;
SELECT overflows AS overflows_after_reset FROM walscale_fastpath;
DO $$
BEGIN
  FOR i IN 1..40 LOOP
    EXECUTE format('DROP TABLE walscale_fp_%s', i);
  END LOOP;
END $$;

-- the fast-path groups are sized at start
SET walscale.fastpath_groups = 2;
-- the number of locks and the attempts change only with a reload
SET walscale.insert_locks = 4;
SET walscale.insert_lock_attempts = 1;
-- and bad values are refused with the valid range
ALTER SYSTEM SET walscale.insert_locks = 0;
ALTER SYSTEM SET walscale.insert_locks = -2;
ALTER SYSTEM SET walscale.insert_locks = 1025;
ALTER SYSTEM SET walscale.insert_locks = 'many';
ALTER SYSTEM SET walscale.insert_lock_attempts = -5;
ALTER SYSTEM SET walscale.insert_lock_attempts = 17;
ALTER SYSTEM SET walscale.fastpath_groups = 3;
ALTER SYSTEM SET walscale.fastpath_groups = 2048;
ALTER SYSTEM SET walscale.auto_interval = 0;
-- the prefix is reserved
SET walscale.insert_lock = 8;

-- a fixed number: auto mode is off and has decided nothing
SELECT insert_locks_configured, insert_locks_mode FROM walscale_settings;
SELECT count(*) AS decisions FROM walscale_auto_decisions;

-- the advisor has a row per setting; right after a reset it has too little
-- data to recommend anything, and says so
SELECT walscale_reset() IS NOT NULL AS reset;
SELECT setting, current_value, recommended_value, needs_restart,
       reason LIKE 'Not enough data: %' AS not_enough_data,
       since = (SELECT stats_reset FROM walscale_fastpath) AS since_reset,
       span >= interval '0' AS span_ok, evidence <> '' AS has_evidence
FROM walscale_advice ORDER BY setting;

-- privileges: anyone may read, only those granted may reset
CREATE ROLE regress_walscale_reader;
SET ROLE regress_walscale_reader;
SELECT count(*) > 0 AS readable FROM walscale_stats;
SELECT count(*) AS advice_rows FROM walscale_advice;
SELECT count(*) >= 0 AS decisions_readable FROM walscale_auto_decisions;
SELECT walscale_reset();
RESET ROLE;
GRANT EXECUTE ON FUNCTION walscale_reset() TO regress_walscale_reader;
SET ROLE regress_walscale_reader;
SELECT walscale_reset() IS NOT NULL AS reset_by_grantee;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION walscale_reset() FROM regress_walscale_reader;
DROP ROLE regress_walscale_reader;

DROP EXTENSION walscale;

-- version 1.0's SQL keeps working with this module, and updates to each
-- version in turn
CREATE EXTENSION walscale VERSION '1.0';
SELECT count(*) AS locks FROM walscale_stats;
SELECT insert_locks, insert_lock_attempts, fastpath_groups, fastpath_groups_source
FROM walscale_settings;
ALTER EXTENSION walscale UPDATE TO '1.1';
SELECT count(*) AS locks, bool_and(active) AS all_active FROM walscale_stats;
SELECT insert_locks, insert_locks_configured, insert_locks_allocated, resizes
FROM walscale_settings;
SELECT has_table_privilege('public', 'walscale_stats', 'SELECT') AS stats_readable,
       has_table_privilege('public', 'walscale_settings', 'SELECT') AS settings_readable,
       has_function_privilege('public', 'walscale_reset()', 'EXECUTE') AS reset_by_anyone;
ALTER EXTENSION walscale UPDATE TO '1.2';
SELECT insert_locks, insert_locks_configured, insert_locks_mode
FROM walscale_settings;
SELECT count(*) AS advice_rows FROM walscale_advice;
SELECT has_table_privilege('public', 'walscale_advice', 'SELECT') AS advice_readable,
       has_table_privilege('public', 'walscale_auto_decisions', 'SELECT') AS decisions_readable;
ALTER EXTENSION walscale UPDATE TO '1.3';
SELECT count(*) AS settings, count(*) FILTER (WHERE in_effect) AS in_effect
FROM walscale_setting_status;
SELECT has_table_privilege('public', 'walscale_setting_status', 'SELECT') AS status_readable,
       has_table_privilege('public', 'walscale_waits', 'SELECT') AS waits_readable,
       has_table_privilege('public', 'walscale_sampling', 'SELECT') AS sampling_readable;
-- 1.3's walscale_auto_decisions, the 10 columns of 1.2, still reads
SELECT count(*) >= 0 AS decisions_1_3_read FROM walscale_auto_decisions;
ALTER EXTENSION walscale UPDATE TO '1.4';
SELECT string_agg(attname, ', ' ORDER BY attnum) AS decisions_columns
FROM pg_attribute
WHERE attrelid = 'walscale_auto_decisions'::regclass AND attnum > 9;
SELECT count(*) >= 0 AS decisions_1_4_read,
       coalesce(bool_and(active_backends >= 0 AND blocked_share >= 0), true) AS figures_sane
FROM walscale_auto_decisions;
SELECT has_table_privilege('public', 'walscale_auto_decisions', 'SELECT') AS decisions_readable;
ALTER EXTENSION walscale UPDATE TO '1.5';
SELECT string_agg(attname, ', ' ORDER BY attnum) AS decisions_columns
FROM pg_attribute
WHERE attrelid = 'walscale_auto_decisions'::regclass AND attnum > 12;
SELECT count(*) >= 0 AS decisions_1_5_read,
       coalesce(bool_and(rate IS NULL OR (rate >= 0 AND rate_spread >= 0)), true) AS figures_sane
FROM walscale_auto_decisions;
SELECT has_table_privilege('public', 'walscale_auto_decisions', 'SELECT') AS decisions_readable;
-- from 1.5 on, the functions whose columns changed call the C entry point
-- of their version
SELECT p.proname, p.prosrc
FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'walscale')
  AND p.prosrc <> p.proname::text
ORDER BY p.proname;
SELECT count(*) AS locks, bool_and(active) AS all_active FROM walscale_stats;
SELECT insert_locks, insert_locks_configured, insert_locks_mode
FROM walscale_settings;
DROP EXTENSION walscale;

-- version 1.4, installed as it is, reads the 1.5 module's decisions, stats
-- and settings through the entry points of 1.0 to 1.4
CREATE EXTENSION walscale VERSION '1.4';
SELECT count(*) >= 0 AS decisions_1_4_read FROM walscale_auto_decisions;
SELECT count(*) AS locks, bool_and(active) AS all_active FROM walscale_stats;
SELECT insert_locks, insert_locks_configured, insert_locks_mode
FROM walscale_settings;
DROP EXTENSION walscale;

-- version 1.1, installed as it is, keeps working too
CREATE EXTENSION walscale VERSION '1.1';
SELECT insert_locks, insert_locks_configured, resizes FROM walscale_settings;
SELECT count(*) AS locks FROM walscale_stats;
DROP EXTENSION walscale;
