#!/usr/bin/env bash
# bench/handover.sh: the hand-over cost of a PostgreSQL spinlock between
# cores (bench/spinlock-handover.c), which the simulator's insertpos_lck
# model needs: xfer, and beta where there are 3 CPUs or more (sim/README.md,
# "hand-over slope β").  A part of make bench; alone: make bench-handover.
#
#   bench/handover.sh [REPS [HANDOVERS]]       (defaults 11 and 20000)
#
# Builds the program with the compiler and flags of PG_CONFIG (default: the
# stock server's, built if missing) against its server headers, runs it, and
# writes what it printed, under a header naming the commit, the machine,
# the compiler and the load average, to BENCH_RESULTS/handover.txt
# (default bench/results/<YYYY-MM-DD>-<host>-handover/).  A few seconds on 2
# cores; on 16 CPUs each of the 15 spinner counts adds a fraction of a
# second per round.  Needs no server running and no unprivileged user.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

reps=${1:-11}
handovers=${2:-20000}
if [ -z "${PG_CONFIG:-}" ]; then
	if [ -z "${PG_STOCK:-}" ]; then
		ensure_stock_server >/dev/null
	fi
	PG_CONFIG=$PG_STOCK/bin/pg_config
fi
out=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$(hostname -s)-handover}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cc=$("$PG_CONFIG" --cc)
cflags=$("$PG_CONFIG" --cflags)
# shellcheck disable=SC2086
$cc $cflags $("$PG_CONFIG" --cppflags) -I"$("$PG_CONFIG" --includedir-server)" \
	-o "$tmp/spinlock-handover" "$repo/bench/spinlock-handover.c" \
	-L"$("$PG_CONFIG" --libdir)" -lpgcommon -lpgport $("$PG_CONFIG" --libs)

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
if [ "$commit" != unknown ] && ! git -C "$repo" diff --quiet HEAD -- bench/spinlock-handover.c 2>/dev/null; then
	commit="$commit (bench/spinlock-handover.c modified)"
fi
load0=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "# spinlock hand-over (bench/handover.sh $reps $handovers)"
	echo "date: $(date -u +%FT%TZ)"
	echo "commit: $commit"
	echo "machine: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs, $(uname -sr), host $(hostname)"
	echo "compiler: $cc $cflags ($("$PG_CONFIG" --version) headers)"
	echo "load average at the start: $load0"
	"$tmp/spinlock-handover" "$reps" "$handovers"
	echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$out/handover.txt"
