/* walscale--1.2--1.3.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "ALTER EXTENSION walscale UPDATE TO '1.3'" to load this file. \quit

-- walscale_setting_status says, setting by setting, whether it is in
-- effect, and why not: on a server without walscale's core patch none of
-- them is.

CREATE FUNCTION walscale_setting_status(
    OUT setting text,
    OUT configured text,
    OUT effective integer,
    OUT in_effect boolean,
    OUT reason text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walscale_setting_status'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walscale_setting_status AS
    SELECT * FROM walscale_setting_status();

GRANT SELECT ON walscale_setting_status TO PUBLIC;

-- The wait-event sampler (walscale.sample_interval), on stock and patched
-- servers alike: per wait event, per group, and the sampler's totals.

CREATE FUNCTION walscale_wait_samples(
    OUT wait_group text,
    OUT wait_event_type text,
    OUT wait_event text,
    OUT samples bigint,
    OUT share double precision,
    OUT stats_reset timestamp with time zone,
    OUT span interval
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walscale_wait_samples'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walscale_waits AS
    SELECT * FROM walscale_wait_samples();

CREATE VIEW walscale_wait_groups AS
    SELECT wait_group, sum(samples)::bigint AS samples, sum(share) AS share
    FROM walscale_wait_samples()
    GROUP BY wait_group;

CREATE FUNCTION walscale_sampling_info(
    OUT sample_interval_ms integer,
    OUT rounds bigint,
    OUT active_samples bigint,
    OUT idle_samples bigint,
    OUT dropped_samples bigint,
    OUT span interval,
    OUT fastpath_samples bigint,
    OUT fastpath_full_samples bigint,
    OUT fastpath_max_slots integer,
    OUT stats_reset timestamp with time zone
)
RETURNS record
AS 'MODULE_PATHNAME', 'walscale_sampling_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walscale_sampling AS
    SELECT * FROM walscale_sampling_info();

GRANT SELECT ON walscale_waits, walscale_wait_groups, walscale_sampling TO PUBLIC;
