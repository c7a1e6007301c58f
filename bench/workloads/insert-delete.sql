-- Yura Sokolov, "Increase NUM_XLOGINSERT_LOCKS" (pgsql-hackers, Jan 2025):
-- insert then delete 1001 rows per transaction on a table with one index.
\set id random(1, 1000000000000000)

begin;
insert into test1
select i
from generate_series(:id::int8, :id::int8 + 1000) as i;
delete from test1 where id >= :id::int8 and id <= :id::int8 + 1000;
end;
