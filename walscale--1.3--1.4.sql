/* walscale--1.3--1.4.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walscale UPDATE TO '1.4'" to load this file. \quit

-- walscale_auto_decisions gives the figures auto mode now decides on: the
-- mean number of active backends the wait sampler saw in the window, and
-- the share of their time spent asleep on the insertion locks.

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
    OUT blocked_share double precision
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walscale_auto_decisions'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walscale_auto_decisions AS
    SELECT * FROM walscale_auto_decisions();

GRANT SELECT ON walscale_auto_decisions TO PUBLIC;
