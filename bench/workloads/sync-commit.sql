-- synchronous_commit = on, one single-row INSERT per transaction: every
-- commit flushes WAL, and every flush scans all insertion locks in
-- WaitXLogInsertionsToFinish().
\set v random(1, 1000000)
INSERT INTO sync_t VALUES (:v);
