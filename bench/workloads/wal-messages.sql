-- WAL-insert micro workload: 100 small WAL records per transaction and
-- nothing else.  Non-transactional logical messages take no xid, touch no
-- buffer and are not flushed, so the time goes to reserving WAL space and
-- copying records under an insertion lock.
SELECT count(pg_logical_emit_message(false, 'walscale', 'bench'))
FROM generate_series(1, 100);
