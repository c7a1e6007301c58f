#!/usr/bin/env bash
# Each patch of the core series on its own: PostgreSQL built with the first
# N patches, for every N, passes src/test/regress and src/test/isolation
# without walscale, and its server log shows no PANIC, assertion failure or
# crashed child.  A reviewer bisecting the series, or a committer taking
# only its first patches, meets a server that builds and runs at each step.
#
#   scripts/test-series.sh            (make test-series)
#   SERIES_FROM=5 scripts/test-series.sh   from the first 5 patches on
#   PG_MAJOR=17 scripts/test-series.sh     patches/pg17 on PostgreSQL 17
#
# Builds are cached like every other (scripts/build-postgres.sh, keyed by
# the patches applied): the first N patches as the flavor "firstN", with
# assertions on, about 5 minutes each on 2 idle cores when not cached; the
# whole series is make test's flavor (assertions and injection points).
# Prints a table, then "Result: PASS" or "Result: FAIL".
set -euo pipefail
. "$(dirname "$0")/lib.sh"

configure_opts=(--enable-tap-tests --enable-debug --without-icu --enable-cassert)
patches=("$repo"/patches/pg"$pg_major"/*.patch)
results=()
status=0

# $1: the number of patches applied; $2: the server's prefix
run_suites() {
	local n=$1 prefix=$2 dir port rc suite out bin build
	bin=$prefix/bin build=$prefix/build
	# the isolation tester is built by its own directory's make, not by make all
	[ -x "$build/src/test/isolation/pg_isolation_regress" ] ||
		make -s -C "$build/src/test/isolation" >/dev/null
	dir=$(scratch_dir "series-$n$pg_link_suffix")
	port=$(free_port 57432)
	as_run_user "$bin/initdb" -D "$dir/data" -A trust -U "$run_user" --no-locale -E UTF8 \
		--no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log"; results+=("$n | initdb | FAIL"); status=1; return; }
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "port = $port"
		echo "max_prepared_transactions = 2"
		echo "fsync = off"
	} | as_run_user tee -a "$dir/data/postgresql.conf" >/dev/null
	as_run_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null ||
		{ tail -n 20 "$dir/server.log"; results+=("$n | start | FAIL"); status=1; return; }
	for suite in regress isolation; do
		rc=0
		case $suite in
			regress)
				as_run_user "$build/src/test/regress/pg_regress" \
					--inputdir="$build/src/test/regress" --outputdir="$dir/regress" \
					--bindir="$bin" --dlpath="$build/src/test/regress" \
					--host="$dir" --port="$port" --max-concurrent-tests=20 \
					--schedule="$build/src/test/regress/parallel_schedule" \
					>"$dir/regress.out" 2>&1 || rc=$?
				out=$dir/regress.out ;;
			isolation)
				as_run_user "$build/src/test/isolation/pg_isolation_regress" \
					--inputdir="$build/src/test/isolation" --outputdir="$dir/isolation" \
					--bindir="$bin" --host="$dir" --port="$port" \
					--schedule="$build/src/test/isolation/isolation_schedule" \
					>"$dir/isolation.out" 2>&1 || rc=$?
				out=$dir/isolation.out ;;
		esac
		if [ $rc = 0 ]; then
			results+=("$n | $suite | ok: $(grep -o 'All [0-9]* tests passed' "$out" | tail -n 1)")
		else
			results+=("$n | $suite | FAIL: see $out")
			tail -n 20 "$out"
			status=1
		fi
	done
	as_run_user "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null ||
		{ results+=("$n | stop | FAIL"); status=1; }
	if grep -E 'PANIC|TRAP:|terminated by signal|was terminated by exception' \
		"$dir/server.log" >"$dir/alarms.log"; then
		head -n 20 "$dir/alarms.log"
		results+=("$n | server log | FAIL: see $dir/server.log")
		status=1
	else
		results+=("$n | server log | ok: no PANIC, failed assertion or crashed child")
	fi
}

ensure_run_user
for n in $(seq "${SERIES_FROM:-1}" ${#patches[@]}); do
	echo "== the first $n of ${#patches[@]} patches: $(basename "${patches[$((n - 1))]}")"
	if [ "$n" = ${#patches[@]} ]; then
		# the whole series: make test's flavor, which adds injection points
		# (inert unless a test loads them) to the same options
		ensure_injection_server
		run_suites "$n" "$PG_TESTED"
	else
		"$repo/scripts/build-postgres.sh" --flavor "first$n" --patches "$n" -- "${configure_opts[@]}"
		run_suites "$n" "$(readlink -f "$repo/.pg/walscale-first$n$pg_link_suffix")"
	fi
done

echo
echo "| patches | suite | result |"
echo "|---|---|---|"
for r in "${results[@]}"; do echo "| $r |"; done
if [ $status = 0 ]; then echo "Result: PASS"; else echo "Result: FAIL"; fi
exit $status
