/* walscale--1.1--1.2.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION walscale UPDATE TO '1.2'" to load this file. \quit

-- 1.2: auto mode (walscale.insert_locks = -1) and the advisor.
-- walscale_settings says whether auto mode is on; walscale_auto_decisions
-- keeps auto mode's recent decisions; walscale_advice says which setting
-- to change.

DROP VIEW walscale_settings;
DROP FUNCTION walscale_settings_info();

CREATE FUNCTION walscale_settings_info(
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
AS 'MODULE_PATHNAME', 'walscale_settings_info'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walscale_settings AS
    SELECT * FROM walscale_settings_info();

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
    OUT locks_used integer
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walscale_auto_decisions'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

CREATE VIEW walscale_auto_decisions AS
    SELECT * FROM walscale_auto_decisions();

CREATE FUNCTION walscale_advice(
    OUT setting text,
    OUT current_value text,
    OUT recommended_value text,
    OUT needs_restart boolean,
    OUT evidence text,
    OUT since timestamp with time zone,
    OUT span interval,
    OUT reason text
)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'walscale_advice'
LANGUAGE C STRICT VOLATILE PARALLEL RESTRICTED;

CREATE VIEW walscale_advice AS
    SELECT * FROM walscale_advice();

GRANT SELECT ON walscale_settings, walscale_auto_decisions, walscale_advice
    TO PUBLIC;
