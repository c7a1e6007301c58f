#!/usr/bin/env bash
# bench/device-sweep.sh: the Sokolov's "Increase NUM_XLOGINSERT_LOCKS" (pgsql-hackers, Jan 2025) insert/delete sweep on a lent
# many-core machine, in one go and under 9 minutes including two builds of
# PostgreSQL: stock against walscale at insert_locks {8, 64, 256} x
# attempts {0, 2} and auto mode (insert_locks = -1, 1-s windows), clients
# {16, 64, 128}, 2 repetitions interleaved.
#
# Runs from the repository root on a fresh Linux x86_64 machine without
# network, as root or not.  It needs gcc, make, tar with gzip, and patch or
# git; bison, flex and perl are not needed when the tarball comes from
# bench/device-prepare.sh (it carries their outputs), readline, zlib and ICU
# are configured out.
#
#   bench/device-prepare.sh                  # here: fills .device/
#   bash bench/device-sweep.sh               # there, carrying .device
#
# Writes into $OUT (the device tool sets it; default bench/results/device):
# runs.csv, meta.env, workloads.tsv, settings-*.conf, plan.txt, timings.txt,
# and report.md (+ PNG plots when python3 has matplotlib; without python3 a
# plain table).  bench/report.py DIR rewrites the report from those files.
#
# Environment: DEVICE_QUICK=1 (a smoke test: 2 clients, 2 s runs, the
# smallest sweep), DEVICE_JOBS (make -j, default nproc), DEVICE_DEADLINE
# (seconds after start when no new run starts, default 500),
# DEVICE_WAL_BUFFERS (default 1024MB as in Sokolov's "Increase NUM_XLOGINSERT_LOCKS" (pgsql-hackers, Jan 2025), 256MB when a server
# start with 1 GB takes over 5 s), DEVICE_SECONDS (run length, default: what
# fits before the deadline, 3 to 10 s), DEVICE_WORK (default
# /tmp/walscale-device); DEVICE_PG_STOCK and DEVICE_PG_PATCHED (prefixes of
# existing builds) skip the builds, to test the rest of the script.
set -euo pipefail
umask 022

T0=$(date +%s)
BENCH_LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
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
[ -n "$tarball" ] || fail "no .device/postgresql-18.*.tar.*: run bench/device-prepare.sh and carry .device"
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
# Builds: stock and patched, configured and compiled side by side
build_one() {
	local v=$1 src="$work/src-$1" prefix="$work/pg-$1" p
	mkdir -p "$src"
	tar -xf "$tarball" -C "$src" --strip-components=1
	if [ "$v" = walscale ]; then
		for p in "$repo"/patches/pg18/*.patch; do
			apply_patch "$src" "$p" || { echo "patch $(basename "$p") does not apply" >&2; return 1; }
		done
	fi
	cd "$src"
	./configure --prefix="$prefix" --without-readline --without-zlib --without-icu \
		> configure.log 2>&1 || { tail -n 30 configure.log >&2; return 1; }
	make -s -j"$J" > make.log 2>&1 || { grep -E 'error|Error' make.log | head -n 20 >&2; tail -n 20 make.log >&2; return 1; }
	make -s -j"$J" install > install.log 2>&1 || { tail -n 20 install.log >&2; return 1; }
}

if [ -n "${DEVICE_PG_STOCK:-}" ] && [ -n "${DEVICE_PG_PATCHED:-}" ]; then
	# testing the rest of this script where the builds exist already
	mkdir -p "$work/pg-stock" "$work/pg-walscale"
	rmdir "$work/pg-stock" "$work/pg-walscale"
	ln -s "$DEVICE_PG_STOCK" "$work/pg-stock"
	ln -s "$DEVICE_PG_PATCHED" "$work/pg-walscale"
	log "using the builds in $DEVICE_PG_STOCK and $DEVICE_PG_PATCHED"
else
log "building stock and patched PostgreSQL from $(basename "$tarball") with make -j$J"
build_one stock > "$work/build-stock.log" 2>&1 &
pid_stock=$!
build_one walscale > "$work/build-walscale.log" 2>&1 &
pid_ws=$!
ok=1
wait "$pid_stock" || { ok=0; log "stock build failed:"; cat "$work/build-stock.log"; }
log "stock build finished"
wait "$pid_ws" || { ok=0; log "patched build failed:"; cat "$work/build-walscale.log"; }
log "patched build finished"
if [ $ok = 0 ]; then
	cp "$work"/build-*.log "$OUT/" 2>/dev/null || true
	for v in stock walscale; do
		tail -n 50 "$work/src-$v/configure.log" > "$OUT/configure-$v.log" 2>/dev/null || true
		tail -n 80 "$work/src-$v/make.log" > "$OUT/make-$v.log" 2>/dev/null || true
	done
	fail "build"
fi
fi
PG_STOCK="$work/pg-stock"
PG_PATCHED="$work/pg-walscale"
export PG_STOCK PG_PATCHED

# walscale itself, through PGXS, from a copy of its sources
mkdir -p "$work/ext"
cp "$repo/Makefile" "$repo"/walscale*.c "$repo"/walscale*.h "$repo/walscale.control" "$repo"/walscale--*.sql "$work/ext/"
make -s -C "$work/ext" PG_CONFIG="$PG_PATCHED/bin/pg_config" install > "$work/ext/build.log" 2>&1 ||
	{ cat "$work/ext/build.log"; fail "walscale did not build"; }
log "walscale installed into the patched build"

# ---------------------------------------------------------------------------
# An unprivileged user: PostgreSQL refuses to run as root
if [ "$(id -u)" = 0 ]; then
	user=walscale
	if ! id "$user" >/dev/null 2>&1; then
		useradd -r -M -d /nonexistent -s /bin/sh "$user" >/dev/null 2>&1 ||
			adduser -S -D -H "$user" >/dev/null 2>&1 || user=nobody
	fi
	id "$user" >/dev/null 2>&1 || fail "no unprivileged user to run PostgreSQL as"
	group=$(id -gn "$user")
	if command -v runuser >/dev/null && runuser -u "$user" -- true 2>/dev/null; then
		bench_as() { runuser -u "$user" -- "$@"; }
	elif command -v setpriv >/dev/null && setpriv --reuid="$user" --regid="$group" --clear-groups true 2>/dev/null; then
		bench_as() { setpriv --reuid="$user" --regid="$group" --clear-groups "$@"; }
	elif command -v su >/dev/null; then
		bench_as() { su -s /bin/sh "$user" -c "$(printf '%q ' "$@")"; }
	else
		fail "no runuser, setpriv or su to drop root"
	fi
	log "running PostgreSQL as $user"
else
	bench_as() { "$@"; }
fi

BENCH_WORK="$work/run"
mkdir -p "$BENCH_WORK"
cp -r "$repo/bench/workloads" "$BENCH_WORK/"
[ "$(id -u)" = 0 ] && chown -R "$user:$group" "$BENCH_WORK"
chmod 755 "$work"
RESULTS=$OUT
PORT=55440
BENCH_CORES=$(nproc)
TPCB_SCALE=1
export WAL_BUFFERS=${DEVICE_WAL_BUFFERS:-1024MB}

. "$repo/bench/common.sh"

# ---------------------------------------------------------------------------
# The sweep
if [ "$quick" = 1 ]; then
	configs="stock auto 8/0 64/2"
	clients="2"
	reps=2
else
	configs="stock auto 8/0 8/2 64/0 64/2 256/0 256/2"
	clients="16 64 128"
	reps=2
fi
plan="$work/plan.txt"
plan_workload insdel "$reps" "$configs" "$clients" > "$plan"
nruns=$(wc -l < "$plan")
cp "$plan" "$OUT/plan.txt"

echo "$RUNS_HEADER" > "$RESULTS/runs.csv"
trap 'server_stop 2>/dev/null || true' EXIT
bench_init_cluster
t=$(date +%s)
ensure_server walscale 8 0 0 seed000
start_s=$(( $(date +%s) - t ))
if [ "$start_s" -gt 5 ] && [ -z "${DEVICE_WAL_BUFFERS:-}" ]; then
	log "a server start with wal_buffers = $WAL_BUFFERS took ${start_s}s: 256MB from here on"
	WAL_BUFFERS=256MB
	server_stop
	t=$(date +%s)
	ensure_server walscale 8 0 0 seed000
	start_s=$(( $(date +%s) - t ))
fi
bench_setup_data insdel
log "cluster ready (a server start takes ${start_s}s, wal_buffers = $WAL_BUFFERS)"

# run length: what fits before the deadline
restarts=$(awk '{ s = $2 ":" $3; if (s != l) n++; l = s } END { print n + 0 }' "$plan")
left=$(( deadline - $(date +%s) ))
if [ -n "${DEVICE_SECONDS:-}" ]; then
	BENCH_SECONDS=$DEVICE_SECONDS
elif [ "$quick" = 1 ]; then
	BENCH_SECONDS=2
else
	BENCH_SECONDS=$(( (left - restarts * (start_s + 1)) / nruns - 2 ))
	[ "$BENCH_SECONDS" -gt 10 ] && BENCH_SECONDS=10
	[ "$BENCH_SECONDS" -lt 3 ] && BENCH_SECONDS=3
fi
BENCH_DEADLINE=$deadline
log "sweep: $nruns runs of ${BENCH_SECONDS}s ($configs; clients $clients; $reps repetitions), ~$(( nruns * (BENCH_SECONDS + 2) + restarts * (start_s + 1) ))s"
run_plan "$plan"
server_stop
log "sweep finished"

# ---------------------------------------------------------------------------
# Report
write_meta "mode=device" "reps=$reps" "commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo 'working tree copy')" \
	"patches=$(cat "$repo"/patches/pg18/*.patch | sha256sum | cut -c1-12) ($(cd "$repo/patches/pg18" && ls *.patch | tr '\n' ' '))" \
	"wal_buffers=$WAL_BUFFERS" "restarts=$RESTARTS" "elapsed=$(fmt_secs $(( $(date +%s) - T0 )))" \
	"estimated=under 9:00 (deadline for starting runs: ${DEVICE_DEADLINE:-500}s)" \
	"command=bash bench/device-sweep.sh" \
	"note=built here with --without-readline --without-zlib --without-icu, make -j$J; wal_buffers = $WAL_BUFFERS; $(grep -E 'build finished|took' "$timings" | tr '\n' ';')"
write_settings_files insdel
PY=
for p in /usr/bin/python3 $(command -v python3 || true); do
	[ -x "$p" ] || continue
	[ -z "$PY" ] && PY=$p
	"$p" -c 'import matplotlib' 2>/dev/null && { PY=$p; break; }
done
if [ -n "$PY" ] && "$PY" "$repo/bench/report.py" "$OUT"; then
	:
else
	# no python3: the table alone, from runs.csv
	{
		echo "# walscale device sweep (no python3 here: table only; bench/report.py $OUT rewrites it)"
		echo
		echo "| clients | configuration | runs | tps min | tps median | tps max | blocking waits / 1000 acq |"
		echo "|---|---|---|---|---|---|---|"
		tail -n +2 "$OUT/runs.csv" | sort -t, -k6,6n -k2,2 -k3,3n -k4,4n |
			awk -F, '{ k = $6 "|" ($2 == "stock" ? "stock" : "walscale " $3 "/" $4);
				n[k]++; v[k, n[k]] = $9; if ($11 > 0) { b[k] += $14; a[k] += $11 } ord[k] = ++o }
				END { for (k in n) { m = n[k]; for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
					if (v[k, j] < v[k, i]) { t = v[k, i]; v[k, i] = v[k, j]; v[k, j] = t }
					med = (m % 2) ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
					split(k, p, "|")
					printf "| %s | %s | %d | %.0f | %.0f | %.0f | %s |\n", p[1], p[2], m, v[k, 1], med, v[k, m],
						(a[k] > 0 ? sprintf("%.2f", 1000 * b[k] / a[k]) : "n/a") } }' | sort -t'|' -k2,2n
	} > "$OUT/report.md"
fi
log "done: $OUT/report.md"
