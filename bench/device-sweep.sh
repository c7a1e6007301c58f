#!/usr/bin/env bash
# bench/device-sweep.sh: make sweep (bench/sweep.sh) on a lent many-core
# machine without network, in one go and under 9 minutes including the
# build of the patched server: insert/delete of Sokolov's "Increase
# NUM_XLOGINSERT_LOCKS" (pgsql-hackers, Jan 2025) at 8, 16, 32 ... locks up
# to 8 per CPU and in auto mode, 2 clients per CPU, in as many interleaved
# rounds as the report needs to call a gain (7 at 16 CPUs).
#
# Runs from the repository root on a fresh Linux x86_64 machine, as root or
# not.  It needs gcc, make, tar with gzip, patch or git, and python3 for the
# report; bison, flex and perl are not needed when the tarball comes from
# bench/device-prepare.sh (it carries their outputs), readline, zlib and ICU
# are configured out.
#
#   bench/device-prepare.sh                  # here: fills .device/
#   bash bench/device-sweep.sh               # there, carrying .device
#
# Writes into $OUT (the device tool sets it; default bench/results/device)
# four files, since the device tool returns at most eight: results.tar.gz,
# everything make sweep writes (sweep.md, sweep.svg, runs.csv, meta.env,
# ...) with sweep.log, timings.txt and handover.txt, for bench/results/;
# and sweep.md, timings.txt and handover.txt on their own, to read at once.
# Before the sweep, bench/handover.sh measures a spinlock's hand-over
# between cores with 1 to CPUs - 1 spinners (the simulator's xfer and
# beta), a few seconds.  They are written also when
# the run fails or is stopped (SIGTERM, SIGINT).
#
# Environment: DEVICE_QUICK=1 (a smoke test: 8 clients, 2 s runs, 8 and 16
# locks), DEVICE_JOBS (make -j, default nproc), DEVICE_DEADLINE (seconds
# after start when no new run starts, default 500), DEVICE_SECONDS (run
# length, default 8: runs of 3 s ranged over +-40% on 16 CPUs),
# DEVICE_ROUNDS (default bench/sweep.sh's: as many as its report needs to
# call a gain among the numbers compared), DEVICE_WORKLOADS (insdel),
# DEVICE_WORK (default /tmp/walscale-device); DEVICE_PG_PATCHED (the prefix
# of an existing patched build) skips the build, to test the rest.
set -euo pipefail
umask 022

T0=$(date +%s)
repo=$(cd "$(dirname "$0")/.." && pwd)
OUT=${OUT:-$repo/bench/results/device}
quick=${DEVICE_QUICK:-0}
J=${DEVICE_JOBS:-$(nproc)}
deadline=$((T0 + ${DEVICE_DEADLINE:-500}))
# a directory every user can enter and run programs from (not noexec)
if [ -z "${DEVICE_WORK:-}" ]; then
	for d in /tmp /var/tmp /dev/shm; do
		if [ -d "$d" ] && cp /bin/sh "$d/.walscale-exec-test" 2>/dev/null &&
			"$d/.walscale-exec-test" -c true 2>/dev/null; then
			rm -f "$d/.walscale-exec-test"
			DEVICE_WORK=$d/walscale-device
			break
		fi
		rm -f "$d/.walscale-exec-test" 2>/dev/null || true
	done
fi
work=${DEVICE_WORK:-/tmp/walscale-device}
mkdir -p "$OUT"
timings="$OUT/timings.txt"
: > "$timings"
log() {
	printf '[%4ds] %s\n' $(( $(date +%s) - T0 )) "$*"
	printf '%d %s\n' $(( $(date +%s) - T0 )) "$*" >> "$timings"
}
fail() {
	log "FAILED: $*"
	exit 1
}

log "device sweep: $(nproc) cores, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"

# ---------------------------------------------------------------------------
# Sources and tools
tarball=$(ls "$repo"/.device/postgresql-18.*.tar.* 2>/dev/null | sort -V | tail -n 1 || true)
[ -n "$tarball" ] || [ -n "${DEVICE_PG_PATCHED:-}" ] || fail "no .device/postgresql-18.*.tar.*: run bench/device-prepare.sh and carry .device"
for t in make tar gzip; do
	command -v "$t" >/dev/null || fail "$t is missing"
done
command -v gcc >/dev/null || command -v cc >/dev/null || fail "no C compiler (gcc or cc)"
if command -v patch >/dev/null; then
	apply_patch() { patch -d "$1" -p1 --forward --batch --quiet < "$2"; }
elif command -v git >/dev/null; then
	apply_patch() { (cd "$1" && git apply -p1 "$2"); }
else
	fail "neither patch nor git to apply patches/pg18"
fi

rm -rf "$work"
mkdir -p "$work/shims"
pack() {
	[ -d "$work/results" ] || return 0
	cp "$timings" "$work/results/"
	[ ! -f "$work/results/sweep.md" ] || cp "$work/results/sweep.md" "$OUT/"
	tar -czf "$OUT/results.tar.gz" -C "$work/results" .
}
trap pack EXIT
trap 'exit 143' TERM INT
# configure insists on bison, flex and perl even when their outputs are
# present; stand-ins that only answer --version keep it going, and fail
# loudly should make ever need the real tool.
for t in bison flex perl; do
	command -v "$t" >/dev/null && continue
	cat > "$work/shims/$t" <<EOF
#!/bin/sh
case "\$1" in
	--version) [ $t = bison ] && echo "bison (GNU Bison) 3.8.2"; [ $t = flex ] && echo "flex 2.6.4"; exit 0 ;;
	-v) echo "This is perl 5, version 36, subversion 0 (v5.36.0)"; exit 0 ;;
esac
echo "device-sweep: $t is not installed and was needed: \$*" >&2
exit 1
EOF
	chmod +x "$work/shims/$t"
	log "no $t here: using the generated files of the tarball"
done
export PATH="$work/shims:$PATH"

# ---------------------------------------------------------------------------
# The patched server
build_one() {
	local src="$work/src" prefix="$work/pg-walscale" p
	mkdir -p "$src"
	tar -xf "$tarball" -C "$src" --strip-components=1
	for p in "$repo"/patches/pg18/*.patch; do
		apply_patch "$src" "$p" || { echo "patch $(basename "$p") does not apply" >&2; return 1; }
	done
	cd "$src"
	./configure --prefix="$prefix" --without-readline --without-zlib --without-icu \
		> configure.log 2>&1 || { tail -n 30 configure.log >&2; return 1; }
	make -s -j"$J" > make.log 2>&1 || { grep -E 'error|Error' make.log | head -n 20 >&2; tail -n 20 make.log >&2; return 1; }
	make -s -j"$J" install > install.log 2>&1 || { tail -n 20 install.log >&2; return 1; }
}

if [ -n "${DEVICE_PG_PATCHED:-}" ]; then
	ln -s "$DEVICE_PG_PATCHED" "$work/pg-walscale"
	log "using the build in $DEVICE_PG_PATCHED"
else
	log "building the patched PostgreSQL from $(basename "$tarball") with make -j$J"
	build_one > "$work/build.log" 2>&1 || { cat "$work/build.log"; fail "build"; }
	log "patched build finished"
fi
PG_PATCHED="$work/pg-walscale"

# walscale itself, through PGXS, from a copy of its sources
mkdir -p "$work/ext"
cp "$repo/Makefile" "$repo"/walscale*.c "$repo"/walscale*.h "$repo/walscale.control" "$repo"/walscale--*.sql "$work/ext/"
make -s -C "$work/ext" PG_CONFIG="$PG_PATCHED/bin/pg_config" install > "$work/ext/build.log" 2>&1 ||
	{ cat "$work/ext/build.log"; fail "walscale did not build"; }
log "walscale installed into the patched build"

# ---------------------------------------------------------------------------
# A spinlock's hand-over between cores with 1 .. CPUs-1 spinners
# (bench/handover.sh): the simulator's xfer and beta, in a few seconds
mkdir -p "$work/results"
if BENCH_RESULTS="$work/results" PG_CONFIG="$PG_PATCHED/bin/pg_config" \
	bash "$repo/bench/handover.sh" > "$work/handover.log" 2>&1; then
	cp "$work/results/handover.txt" "$OUT/"
	log "spinlock hand-over: $(grep -E '^(xfer-2core|xfer|beta):' "$work/results/handover.txt" | cut -c1-70 | paste -sd' ')"
else
	cat "$work/handover.log"
	log "spinlock hand-over failed (the sweep goes on)"
fi

# ---------------------------------------------------------------------------
# The sweep, with what is left of the time
if [ "$quick" = 1 ]; then
	export SWEEP_SECONDS=2 SWEEP_ROUNDS=3 SWEEP_MAX_LOCKS=16 SWEEP_CLIENTS=8
else
	export SWEEP_SECONDS=${DEVICE_SECONDS:-8}
	[ -z "${DEVICE_ROUNDS:-}" ] || export SWEEP_ROUNDS=$DEVICE_ROUNDS
fi
export SWEEP_PG=$PG_PATCHED SWEEP_DIR="$work/sweep" SWEEP_RESULTS="$work/results"
export SWEEP_WORKLOADS=${DEVICE_WORKLOADS:-insdel} SWEEP_DEADLINE=$((deadline - $(date +%s)))
log "bench/sweep.sh, no run starting after ${SWEEP_DEADLINE}s"
mkdir -p "$work/results"
bash "$repo/bench/sweep.sh" 2>&1 | tee "$work/results/sweep.log"
log "done: $OUT/sweep.md, $OUT/results.tar.gz"
