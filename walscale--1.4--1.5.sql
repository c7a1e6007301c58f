/* walscale--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walscale UPDATE TO '1.5'" to load this file. \quit

-- walscale_auto_decisions gives the rate each decision judged (insertions
-- per second per running backend) and the noise it judged it against (the
-- spread of that rate from one window to the next).  From this version each
-- C function whose columns changed with the versions has an entry point of
-- its own for each version, as pg_stat_statements does, instead of telling
-- the versions apart by their number of columns: walscale_auto_decisions
-- here, and walscale_stats' and walscale_settings' functions, whose columns
-- are those of 1.4, below.

DROP VIEW walscale_auto_decisions;
DROP FUNCTION walscale_auto_decisions();

CREATE FUNCTION walscale_auto_decisions(
    OUT decided_at timestamp with time zone,
    OUT from_locks integer,
    OUT to_locks integer,
    OUT reason text,
    OUT window_s double precision,
    OUT acquisitions bigint,
    OUT blocking_waits bigint,
    OUT blocking_waits_per_1000 double precision,
    OUT blocked_ms_per_s double precision,
    OUT locks_used integer,
    OUT active_backends double precision,
    OUT blocked_share double precision,
    OUT rate double precision,
    OUT rate_spread double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walscale_auto_decisions_1_5'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walscale_auto_decisions AS
    SELECT * FROM walscale_auto_decisions();

GRANT SELECT ON walscale_auto_decisions TO PUBLIC;

CREATE OR REPLACE FUNCTION walscale_insert_lock_stats(
    OUT lock_id integer,
    OUT active boolean,
    OUT acquisitions bigint,
    OUT first_try bigint,
    OUT failed_attempts bigint,
    OUT blocking_waits bigint,
    OUT blocked_ms double precision,
    OUT exclusive_acquisitions bigint,
    OUT flush_waits bigint,
    OUT stats_reset timestamp with time zone
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walscale_insert_lock_stats_1_5'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE OR REPLACE FUNCTION walscale_settings_info(
    OUT core_version integer,
    OUT insert_locks integer,
    OUT insert_locks_configured integer,
    OUT insert_locks_allocated integer,
    OUT insert_lock_attempts integer,
    OUT fastpath_groups integer,
    OUT fastpath_groups_source text,
    OUT resizes bigint,
    OUT last_resize timestamp with time zone,
    OUT last_resize_from integer,
    OUT last_resize_held_ms double precision,
    OUT insert_locks_mode text
)
RETURNS record
AS 'MODULE_PATHNAME', 'walscale_settings_info_1_5'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;
