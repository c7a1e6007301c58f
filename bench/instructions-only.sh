#!/usr/bin/env bash
# Instruction counts only (the callgrind part of make bench), for checking a
# change to the core patch against stock in a few minutes:
#
#   bench/instructions-only.sh [N M K]      (make bench-instructions)
#
# N small WAL records, M single-row commits and K plpgsql commits per block,
# as in bench/instructions.sh (default: make bench's quick sizes, 2000 200
# 400).  Writes instructions.csv, cg-functions.csv and summary.md under
# BENCH_RESULTS (default bench/results/DATE-HOST-instructions).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

n=${1:-2000} m=${2:-200} k=${3:-400}
host=$(hostname -s 2>/dev/null || hostname)
RESULTS=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$host-instructions}

bench_as() { as_run_user "$@"; }
. "$repo/bench/common.sh"
. "$repo/bench/instructions.sh"

ensure_servers
install_extension
ensure_run_user
BENCH_WORK=$(scratch_dir bench-instructions)
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

echo "== instruction counts: one backend under callgrind ($n records, $m and $k commits per block)"
measure_instructions "$n" "$m" "$k"

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$repo" status --porcelain -- patches 'walscale*.c' 'walscale*.h' 2>/dev/null | head -c1)" ] &&
	commit="$commit (patches or walscale's sources modified in the working tree)"
{
	echo "# Instructions per operation, callgrind, one backend"
	echo
	echo "$(date -u +%FT%TZ), commit $commit, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores;"
	echo "$("$PG_STOCK/bin/postgres" --version); fsync off, synchronous_commit on, wal_buffers 64MB;"
	echo "$n records, $m and $k commits per block (bench/instructions.sh)."
	echo
	echo "| config | per WAL record | vs stock | per commit | vs stock | per commit (plpgsql) | vs stock |"
	echo "|---|---|---|---|---|---|---|"
	awk -F, 'NR == 1 { next }
		$1 == "stock" { r = $6; c = $7; p = $8 }
		{ printf "| %s | %.0f | %+.1f%% | %.0f | %+.1f%% | %.0f | %+.1f%% |\n",
			$1, $6, 100 * ($6 / r - 1), $7, 100 * ($7 / c - 1), $8, 100 * ($8 / p - 1) }' \
		"$RESULTS/instructions.csv"
} > "$RESULTS/summary.md"
cat "$RESULTS/summary.md"
