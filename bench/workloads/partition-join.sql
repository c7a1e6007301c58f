-- Tomas Vondra, "scalability bottlenecks with (many) partitions (and
-- more)" (pgsql-hackers), the case that overflows the fast-path slots: a lookup in
-- pgbench_accounts split into 128 partitions, joined to pgbench_branches,
-- run with a generic plan (the database sets plan_cache_mode), so every
-- execution locks all 128 partitions and the parent: about 131 relation
-- locks per transaction against 64 fast-path slots at the default
-- max_locks_per_transaction.
\set aid random(1, 100000 * :scale)
SELECT a.abalance, b.bbalance
FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid
WHERE a.aid = :aid;
