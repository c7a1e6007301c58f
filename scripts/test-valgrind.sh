#!/usr/bin/env bash
# walscale and the patched server under valgrind's memcheck.  PostgreSQL is
# built with USE_VALGRIND, so that its memory contexts tell valgrind which
# bytes are allocated and defined, and with assertions; the postmaster and
# every process it forks run under valgrind.  At walscale.conf's settings
# walscale's pg_regress suite runs; at each configuration a WAL-heavy load
# goes through the insertion locks while checkpoints, WAL switches and
# resets take all of them and the views are read.  Any valgrind error, any
# assertion failure, fails it.
#
#   scripts/test-valgrind.sh    (make test-postgres SUITES_MODE=valgrind; also in full)
#
# About 2 minutes on 2 cores, plus about 5 for the build, once.
#
# Environment:
#   WALSCALE_VALGRIND_CONFIGS   LOCKS/ATTEMPTS/GROUPS list (walscale.conf's, 1024/3/1024, 1/3/1)
#   WALSCALE_VALGRIND_SECONDS   seconds of load per configuration (20)
#
# Prints a line "test-valgrind: result: WHAT | CONFIG | ok or FAIL | DETAIL |
# SECONDS" per check, which scripts/test-postgres.sh collects, and exits 1
# when one failed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

if ! command -v valgrind >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "test-valgrind: installing valgrind from Debian"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null 2>&1 || true
fi
command -v valgrind >/dev/null || {
	echo "test-valgrind: valgrind is not installed; install Debian's valgrind package" >&2
	exit 1
}
ensure_run_user
PG_VG=$(build_instrumented_server valgrind \
	--enable-debug --enable-cassert --without-icu \
	CFLAGS="-Og -ggdb -fno-omit-frame-pointer" CPPFLAGS="-DUSE_VALGRIND")
bin=$PG_VG/bin
pg_regress="$(dirname "$(dirname "$(dirname "$("$bin/pg_config" --pgxs)")")")/src/test/regress/pg_regress"

install_extension_into "$PG_VG"

regress_conf=$(walscale_conf_settings)
configs=${WALSCALE_VALGRIND_CONFIGS:-$regress_conf 1024/3/1024 1/3/1}
seconds=${WALSCALE_VALGRIND_SECONDS:-20}
failures=0

elapsed_since() { echo $(($(date +%s) - $1)); }

result() {
	echo "test-valgrind: result: $1 | $2 | $3 | $4 | $5"
	[ "$3" = ok ] || failures=$((failures + 1))
}

psql_at() {
	as_run_user "$bin/psql" -X -q -At -h "$dir" -p "$port" -v ON_ERROR_STOP=1 "$@"
}

# Every line valgrind writes with --quiet is part of an error report, except
# its warnings about large shared-memory ranges.
valgrind_errors() {
	cat "$1"/valgrind.*.log 2>/dev/null | grep -E '^==[0-9]+== ' | grep -v -E '^==[0-9]+== Warning: ' || true
}

for cfg in $configs; do
	IFS=/ read -r locks attempts groups <<<"$cfg"
	dir=$(scratch_dir "valgrind-$locks-$attempts-$groups")
	port=$(free_port 58432)
	start=$(date +%s)
	as_run_user "$bin/initdb" -D "$dir/data" -A trust -U "$run_user" --no-locale -E UTF8 --no-sync \
		>"$dir/initdb.log" 2>&1 ||
		{ tail -n 20 "$dir/initdb.log"; result initdb "$cfg" FAIL "initdb failed" 0; continue; }
	as_run_user tee -a "$dir/data/postgresql.conf" >/dev/null <<CONF
listen_addresses = ''
unix_socket_directories = '$dir'
port = $port
fsync = off
max_connections = 20
shared_buffers = 32MB
$(config_lines "$cfg")
CONF
	# pg_ctl starts this in place of postgres; exec keeps the PID it waits on
	as_run_user tee "$dir/postgres-under-valgrind" >/dev/null <<WRAPPER
#!/bin/sh
exec valgrind --quiet --trace-children=yes --track-origins=yes \\
	--leak-check=no --num-callers=40 \\
	--suppressions="$PG_VG/build/src/tools/valgrind.supp" \\
	--log-file="$dir/valgrind.%p.log" "$bin/postgres" "\$@"
WRAPPER
	chmod +x "$dir/postgres-under-valgrind"
	echo "test-valgrind: [$(date +%H:%M:%S)] $cfg: starting the server under valgrind"
	as_run_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -p "$dir/postgres-under-valgrind" \
		-w -t 600 start >/dev/null ||
		{ tail -n 20 "$dir/server.log"; result start "$cfg" FAIL "server did not start" 0; continue; }

	if [ "$cfg" = "$regress_conf" ]; then
		run="$dir/suite"
		mkdir -p "$run"
		cp -a "$repo/sql" "$repo/expected" "$run/"
		[ "$(id -u)" = 0 ] && chown -R "$run_user" "$run"
		rc=0
		as_run_user "$pg_regress" --host="$dir" --port="$port" \
			--inputdir="$run" --outputdir="$run" --bindir="$bin" --dbname=contrib_regression \
			$(cd "$repo/sql" && ls *.sql | sed 's/\.sql$//') >"$dir/walscale.out" 2>&1 || rc=$?
		[ $rc = 0 ] || { cat "$dir/walscale.out"; [ -f "$run/regression.diffs" ] && head -n 60 "$run/regression.diffs"; }
		result "walscale sql" "$cfg" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
			"$(sed -n -e 's|^# All \([0-9]*\) tests passed\.|\1/\1 tests passed|p' \
				-e 's|^# \([0-9]*\) of \([0-9]*\) tests failed\.|\1 of \2 tests failed|p' "$dir/walscale.out")" \
			"$(elapsed_since "$start")"
	fi

	# load: small inserts and deletes from 4 clients (the contended path at
	# one lock), while every lock is taken at once and the views are read
	psql_at -d postgres -c "CREATE EXTENSION walscale" \
		-c "CREATE TABLE wal_load (id int8 NOT NULL)" -c "CREATE INDEX ON wal_load (id)" ||
		result "setup" "$cfg" FAIL "could not create the load's table" 0
	as_run_user tee "$dir/load.sql" >/dev/null <<'SQL'
\set id random(1, 1000000000)
BEGIN;
INSERT INTO wal_load SELECT i FROM generate_series(:id, :id + 19) AS i;
DELETE FROM wal_load WHERE id BETWEEN :id AND :id + 19;
END;
SQL
	as_run_user "$bin/pgbench" -n -c 4 -j 2 -T "$seconds" -f "$dir/load.sql" -h "$dir" -p "$port" postgres \
		>"$dir/pgbench.out" 2>&1 &
	load=$!
	# the counters are summed over the resets; each round reads them, then
	# resets them
	counters_query="SELECT count(*), sum(acquisitions), sum(failed_attempts), sum(blocking_waits)
		FROM walscale_stats"
	rounds=0 round_failed=0 acq=0 failed=0 waits=0
	add_counters() {
		local n a f w
		IFS='|' read -r n a f w <<<"$1"
		[ "$n" = "$locks" ] || return 1
		acq=$((acq + a)) failed=$((failed + f)) waits=$((waits + w))
	}
	while kill -0 "$load" 2>/dev/null; do
		out=$(psql_at -d postgres -c "$counters_query" -c "SELECT walscale_reset()" \
			-c "CHECKPOINT" -c "SELECT pg_switch_wal()" \
			-c "SELECT count(*) FROM walscale_fastpath, walscale_settings") &&
			add_counters "$(echo "$out" | head -n 1)" || { round_failed=1; break; }
		rounds=$((rounds + 1))
	done
	rc=0
	wait "$load" || rc=$?
	out=$(psql_at -d postgres -c "$counters_query") && add_counters "$out" || round_failed=1
	xacts=$(sed -n 's/.*actually processed: \([0-9]*\).*/\1/p' "$dir/pgbench.out")
	# each transaction inserts and deletes 20 indexed rows, 61 records; the
	# counts between a round's reading and its reset are not seen
	if [ $rc = 0 ] && [ $round_failed = 0 ] && [ "$rounds" -gt 0 ] && [ "${xacts:-0}" -gt 0 ] &&
		[ "$acq" -ge $((20 * xacts)) ]; then
		result "load" "$cfg" ok "$xacts xacts, $rounds all-lock rounds, $acq acq, $failed failed, $waits waits" \
			"$(elapsed_since "$start")"
	else
		cat "$dir/pgbench.out"
		result "load" "$cfg" FAIL "pgbench exit $rc, $xacts xacts, round failed $round_failed, $acq acquisitions" "$(elapsed_since "$start")"
	fi
	# the shutdown checkpoint takes every lock once more
	as_run_user "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 600 stop >/dev/null ||
		result stop "$cfg" FAIL "server did not stop" 0

	errors=$(valgrind_errors "$dir")
	nprocs=$(ls "$dir"/valgrind.*.log 2>/dev/null | wc -l)
	if [ -z "$errors" ] && [ "$nprocs" -gt 1 ] &&
		! grep -E 'TRAP:|terminated by signal|PANIC:' "$dir/server.log" >/dev/null; then
		result "reports" "$cfg" ok "$nprocs processes, no error" "$(elapsed_since "$start")"
	else
		echo "$errors" | head -n 60
		grep -E 'TRAP:|terminated by signal|PANIC:' "$dir/server.log" | head -n 10 || true
		result "reports" "$cfg" FAIL "$nprocs processes; reports in $dir" "$(elapsed_since "$start")"
	fi
done

[ $failures = 0 ] || { echo "test-valgrind: $failures checks failed"; exit 1; }
echo "test-valgrind: all checks passed"
