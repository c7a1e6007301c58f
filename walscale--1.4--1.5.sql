/* walscale--1.4--1.5.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walscale UPDATE TO '1.5'" to load this file. \quit

-- walscale_auto_decisions gives the rate each decision judged (insertions
-- per second per running backend) and the noise it judged it against (the
-- spread of that rate from one window to the next).  From this version the
-- C function has a name of its own, as pg_stat_statements does, instead of
-- telling the versions apart by their number of columns.

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
