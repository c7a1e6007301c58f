#!/usr/bin/env bash
# What the advisor's fast-path measurement costs a transaction, exactly, by
# instruction count: a single-user backend of the patched server under
# valgrind --tool=callgrind, as bench/instructions.sh measures, running
# transactions that lock TABLES tables, each in two weak modes (LOCK TABLE
# ... IN ROW EXCLUSIVE MODE, then IN ACCESS SHARE MODE: no planning, so that
# the locks are most of what a transaction does).
#
#   bench/fastpath-measure.sh
#
# Configurations: without walscale; walscale with walscale.fastpath_groups =
# 1 (16 slots: every transaction overflows, and walscale counts the
# relations it holds from its local lock table); walscale with enough
# groups that none overflows (it counts its fpLockBits).  The cost of one
# transaction is (the profile of a block of 2N - that of a block of N) / N,
# as in bench/instructions.sh; so is that of walscale's transaction
# callback, inclusive.
#
# Writes BENCH_RESULTS (default bench/results/<YYYY-MM-DD>-<host>-fastpath/):
# fastpath.md.
#
# Environment: BENCH_FASTPATH_TABLES (40), BENCH_FASTPATH_N (100),
# BENCH_FASTPATH_PG (the patched installation with walscale, default
# .pg/walscale).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/cluster.sh"
. "$(dirname "$0")/instructions.sh"

tables=${BENCH_FASTPATH_TABLES:-40}
n=${BENCH_FASTPATH_N:-100}
pg=$(readlink -f "${BENCH_FASTPATH_PG:-$repo/.pg/walscale}")
out=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$(hostname -s)-fastpath}
[ -x "$pg/bin/postgres" ] || { echo "fastpath-measure: no server in $pg" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "fastpath-measure: valgrind is needed" >&2; exit 2; }
mkdir -p "$out"

ensure_run_user
dir=$(scratch_dir fastpath-measure)

run "$pg/bin/initdb" -D "$dir/template" -A trust -U postgres --no-sync >/dev/null
list=$(seq -s, -f 'fp_%g' 1 "$tables")
for i in $(seq "$tables"); do echo "CREATE TABLE fp_$i (id int);"; done |
	run "$pg/bin/postgres" --single -D "$dir/template" postgres >/dev/null 2>&1

xacts() {
	local i
	for i in $(seq "$1"); do
		echo "BEGIN;"
		echo "LOCK TABLE $list IN ROW EXCLUSIVE MODE;"
		echo "LOCK TABLE $list IN ACCESS SHARE MODE;"
		echo "COMMIT;"
	done
}
{
	xacts 20
	echo "SELECT pg_backend_pid();"
	xacts "$n"
	echo "SELECT pg_backend_pid();"
	xacts $((2 * n))
	echo "SELECT pg_backend_pid();"
} >"$dir/script.sql"
chmod a+r "$dir/script.sql"

# enough groups that none overflows: twice the tables, a power of two
groups=1
while [ $((groups * 16)) -lt $((2 * tables)) ]; do groups=$((groups * 2)); done

# a profile's total, and the callback's inclusive count (bench/instructions.sh)
CG_FUNCS=walscale_xact_callback
total() { cg_total "$1"; }
inclusive() { cg_functions "$2" | awk -v fn="$1" '$1 == fn { print $2 }'; }
per_xact() { awk -v a="$1" -v b="$2" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / n }'; }

rows=()
for cfg in "no walscale:" "walscale, 1 group (overflows):1" "walscale, $groups groups (no overflow):$groups"; do
	label=${cfg%%:*} g=${cfg##*:}
	rm -rf "$dir/data" "$dir/cg"
	cp -a "$dir/template" "$dir/data"
	mkdir -p "$dir/cg"
	chown -R "$run_user" "$dir/data" "$dir/cg"
	opts=(-c fsync=off)
	[ -n "$g" ] && opts+=(-c shared_preload_libraries=walscale -c walscale.insert_locks=8 -c "walscale.fastpath_groups=$g")
	run valgrind --tool=callgrind --dump-after=pg_backend_pid --callgrind-out-file="$dir/cg/cg.out" \
		"$pg/bin/postgres" --single -D "$dir/data" "${opts[@]}" postgres \
		<"$dir/script.sql" >"$dir/cg/run.log" 2>&1 ||
		{ tail -n 20 "$dir/cg/run.log" >&2; exit 1; }
	xact=$(per_xact "$(total "$dir/cg/cg.out.2")" "$(total "$dir/cg/cg.out.3")")
	callback=$(per_xact "$(inclusive walscale_xact_callback "$dir/cg/cg.out.2")" \
		"$(inclusive walscale_xact_callback "$dir/cg/cg.out.3")")
	rows+=("| $label | $xact | $callback |")
	echo "fastpath-measure: $label: $xact instructions per transaction, $callback in walscale's transaction callback"
done

{
	echo "# The fast-path measurement's cost, by instruction count"
	echo
	echo "$(date -u '+%F %H:%M UTC'), $(uname -srm), $(nproc) CPUs; $("$pg/bin/postgres" --version)"
	commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
	git -C "$repo" diff --quiet HEAD 2>/dev/null || commit="$commit with uncommitted changes"
	echo "(\`$(basename "$pg")\`), commit $commit."
	echo "Single-user backend under callgrind, fsync off; each transaction locks"
	echo "$tables tables in ROW EXCLUSIVE mode, then in ACCESS SHARE mode"
	echo "(two weak modes each: $((2 * tables)) local locks, $tables fast-path slots needed);"
	echo "per transaction: (a block of $((2 * n)) - a block of $n) / $n."
	echo
	echo "| configuration | instructions per transaction | of them in walscale's transaction callback |"
	echo "|---|---:|---:|"
	printf '%s\n' "${rows[@]}"
} >"$out/fastpath.md"
cat "$out/fastpath.md"
