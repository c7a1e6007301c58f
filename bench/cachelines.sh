#!/usr/bin/env bash
# The shared cache lines that a commit, a WAL record and the acquisition of
# every insertion lock touch, at 8, 64, 256 and 1024 active locks beside
# stock, and the flush latency while another core keeps inserting: a part
# of make bench (bench/run.sh), or alone (make bench-cachelines).
#
#   bench/cachelines.sh
#
# 1. Distinct shared lines per operation.  One single-user backend (postgres
#    --single) per configuration under valgrind --tool=lackey
#    --trace-mem=yes, on a fresh copy of one template cluster; its trace
#    goes through bench/cachelines-filter.c, which keeps only the accesses
#    inside the shared memory segment (the largest shared mapping in
#    /proc/PID/maps) and cuts the trace into operations at the entry of a
#    function called once per operation (addresses from nm and the maps):
#
#      record          LogLogicalMessage: one SELECT of N
#                      pg_logical_emit_message(false, ...), a record each
#      commit          pg_parse_query: lines "INSERT INTO cl_t VALUES (1);",
#                      one single-row transaction each, synchronous_commit
#                      on, each commit a flush (WaitXLogInsertionsToFinish)
#      commit_plpgsql  SPI_commit: a DO loop of INSERT + COMMIT
#      all_locks       pg_parse_query: "SELECT pg_switch_wal();" with no WAL
#                      since the last switch: XLogInsertRecord takes every
#                      active insertion lock exclusively (as a checkpoint
#                      does for its redo point) and inserts nothing
#
#    Per operation the distinct 64-byte lines read (loads and
#    read-modify-writes) and written (stores and read-modify-writes) are
#    counted, then averaged over the operations after the first few
#    (warm-up).  Distinct lines per operation, not per block: a line read by
#    every commit costs a transfer per commit when another core wrote it in
#    between, which a count over a whole block would hide.
#
#    "Shared with an inserter": of the lines an operation touches, those
#    that an inserter in another backend writes at (nearly) every record.
#    They come from the same trace: the lines written by at least half of
#    the record operations (the insertion lock's slot, the insert position,
#    walscale's per-lock counters), with the backend's own lock (the slot
#    the records write) replaced by the next active lock, the one another
#    backend would hold; the slots' address is the pointer WALInsertLocks,
#    read from the process, and the counters' slots follow them.  With that
#    backend inserting without pause on another core, each such line is
#    modified there between two operations here: one line transfer per
#    operation.  The other lines an operation reads stay valid in this
#    core's cache as long as no other core writes them, so the lines read
#    are the bound on a server where other cores write all of them (many
#    inserters, or a checkpoint taking every lock).  An estimate, not a
#    count of transfers; cachelines.csv also has it with the inserter on
#    the backend's own lock (shared_same_lock_mean).
#
# 2. Flush latency across cores.  Two servers of the same settings (stock,
#    and the patched one with walscale, resized by reload between 8, 64,
#    256 and 1024 locks), the postmaster pinned to CPU 0 (taskset), so that
#    the measuring backend runs there; with "inserter", a second backend
#    moved to CPU 1 runs pg_logical_emit_message in a loop for the whole
#    run.  The measuring backend runs a procedure's loop of single-row
#    INSERT + COMMIT (synchronous_commit on, fsync off: the commit writes
#    WAL and scans the insertion locks but does not wait for a disk) and
#    takes the median, over batches of 20 commits, of the time per commit
#    (the loop's clock counts microseconds); configurations interleaved in rounds
#    (A B C, then C B A, ...), each point's median and min..max over the
#    rounds, and the ratio to stock.
#
# Writes BENCH_RESULTS (default bench/results/<YYYY-MM-DD>-<host>-cachelines):
# cachelines.md, cachelines.csv (part 1, per configuration and operation),
# flush-latency.csv (part 2, every run), and instructions.csv with
# instructions per operation (bench/instructions.sh, N = 2000/200/400) when
# the directory has none yet (make bench measures it before).  Run alone,
# without BENCH_RESULTS, it empties its directory first, so that a rerun on
# the same day measures everything again.
#
# Environment: BENCH_CL_OPS (60 operations a block, the first
# BENCH_CL_WARMUP = 10 not counted), BENCH_CL_LAT_ROUNDS (12),
# BENCH_CL_LAT_COMMITS (20000 a run), BENCH_CL_SKIP_LATENCY=1,
# BENCH_CL_SKIP_LINES=1, BENCH_CL_SKIP_INSTRUCTIONS=1; BENCH_PG_READY=1
# takes PG_STOCK and PG_PATCHED from the environment (make bench's builds)
# instead of building them.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

host=$(hostname -s 2>/dev/null || hostname)
RESULTS=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$host-cachelines}
CL_OPS=${BENCH_CL_OPS:-60}
CL_WARMUP=${BENCH_CL_WARMUP:-10}
CL_LAT_ROUNDS=${BENCH_CL_LAT_ROUNDS:-12}
CL_LAT_COMMITS=${BENCH_CL_LAT_COMMITS:-20000}
CL_LOCKS=${BENCH_CL_LOCKS:-8 64 256 1024}
t_start=$(date +%s)

bench_as() { as_run_user "$@"; }
. "$repo/bench/common.sh"
. "$repo/bench/instructions.sh"

command -v valgrind >/dev/null || { echo "cachelines: valgrind is needed" >&2; exit 2; }
command -v taskset >/dev/null || { echo "cachelines: taskset (util-linux) is needed" >&2; exit 2; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

if [ "${BENCH_PG_READY:-0}" != 1 ]; then
	ensure_servers
	install_extension
fi
ensure_run_user
BENCH_WORK=$(scratch_dir bench-cachelines)
[ -n "${BENCH_RESULTS:-}" ] || rm -rf "$RESULTS"
mkdir -p "$RESULTS"

CL_FILTER=$BENCH_WORK/cachelines-filter
cc -O2 -o "$CL_FILTER" "$repo/bench/cachelines-filter.c"

# ---------------------------------------------------------------------------
# Part 1: distinct shared lines per operation

cl_script() {
	local n=$1 i
	# warm-up, and enough trace for the filter to find its parameters
	# before the first phase
	echo "SELECT count(pg_logical_emit_message(false, 'walscale', 'x')) FROM generate_series(1, 200);"
	for i in $(seq 10); do echo "INSERT INTO cl_t VALUES (1);"; done
	echo "DO \$\$BEGIN FOR i IN 1..10 LOOP INSERT INTO cl_t VALUES (i); COMMIT; END LOOP; END\$\$;"
	# where each line is: the allocations of the segment, for the report
	echo "SELECT 'ALLOC ' || coalesce(name, '(anonymous)') || '|' || off || '|' || allocated_size FROM pg_shmem_allocations WHERE off IS NOT NULL;"
	echo "SELECT pg_backend_pid();"
	# phase 1: records, n + 1 splits, n operations
	echo "SELECT count(pg_logical_emit_message(false, 'walscale', 'x')) FROM generate_series(1, $((n + 1)));"
	echo "SELECT pg_backend_pid();"
	# phase 2: commits, n + 1 statements parsed (the last is the marker)
	for i in $(seq "$n"); do echo "INSERT INTO cl_t VALUES (1);"; done
	echo "SELECT pg_backend_pid();"
	# phase 3: plpgsql commits, n + 1 splits
	echo "DO \$\$BEGIN FOR i IN 1..$((n + 1)) LOOP INSERT INTO cl_t VALUES (i); COMMIT; END LOOP; END\$\$;"
	# a switch that inserts, so that those of phase 4 insert nothing
	echo "SELECT pg_switch_wal();"
	echo "SELECT pg_backend_pid();"
	# phase 4: every insertion lock, exclusively
	for i in $(seq "$n"); do echo "SELECT pg_switch_wal();"; done
	echo "SELECT pg_backend_pid();"
}

# the functions whose entries cut the trace: the phase marker, then the
# split of phases 1 to 4
CL_MARKER=pg_backend_pid
CL_SPLITS=(LogLogicalMessage pg_parse_query SPI_commit pg_parse_query)
CL_MEASURES=(record commit commit_plpgsql all_locks)

# cl_layout BIN PID BASE "LO HI": the lines "lo", "slots" and, where the
# server has the symbol, "allocated", for bench/cachelines_report.py.
cl_layout() {
	local bin=$1 pid=$2 base=$3 shm=$4 slots_sym alloc_sym
	slots_sym=$(nm "$bin" | awk '$3 == "WALInsertLocks" { print $1 }')
	alloc_sym=$(nm "$bin" | awk '$3 == "NumXLogInsertLocksAllocated" { print $1 }')
	[ -n "$slots_sym" ] || { echo "cachelines: no symbol WALInsertLocks in $bin" >&2; return 1; }
	"$PY" - "$pid" "$((0x$base + 0x$slots_sym))" "$([ -n "$alloc_sym" ] && echo $((0x$base + 0x$alloc_sym)) || echo 0)" \
		"$((0x${shm% *}))" "$((0x${shm#* }))" <<'PY'
import sys, time
pid, slots_at, alloc_at, lo, hi = (int(a) for a in sys.argv[1:])
def read(at, n):
    with open(f"/proc/{pid}/mem", "rb") as f:
        f.seek(at)
        return int.from_bytes(f.read(n), "little")
for _ in range(1500):
    slots = read(slots_at, 8)
    if lo <= slots < hi:
        break
    time.sleep(0.2)
else:
    sys.exit("cachelines: WALInsertLocks never pointed into shared memory")
print("lo", lo)
print("slots", slots)
if alloc_at:
    print("allocated", read(alloc_at, 4))
PY
}

# cl_one LABEL VARIANT LOCKS PRELOAD: leaves ops.txt in $CL_DIR/LABEL.
cl_one() {
	local label=$1 variant=$2 locks=$3 preload=$4
	local run="$CL_DIR/$label" t0=$SECONDS bin pid="" maps shm base w i sym addr
	local -a opts
	bin="$(pg_bin "$variant")/postgres"
	bench_as mkdir -p "$run"
	bench_as cp -a "$CL_DIR/template" "$run/data"
	bench_as mkfifo "$run/sql"
	# small shared memory: start-up zeroes all of it, under lackey
	opts=(-c fsync=off -c synchronous_commit=on -c shared_buffers=16MB -c wal_buffers=4MB
		-c max_wal_size=8GB)
	[ "$preload" = yes ] && opts+=(-c shared_preload_libraries=walscale
		-c "walscale.insert_locks=$locks" -c walscale.insert_lock_attempts=0)
	(
		set -o pipefail
		bench_as valgrind --tool=lackey --trace-mem=yes --log-fd=9 \
			"$bin" --single -D "$run/data" "${opts[@]}" postgres \
			<"$run/sql" 9>&1 >"$run/out.log" 2>"$run/err.log" |
			"$CL_FILTER" "$run/params" >"$run/ops.txt"
	) &
	local job=$!
	exec {w}>"$run/sql"
	# the backend's PID (negative in a single-user backend's lock file),
	# then its shared memory and where the binary is mapped
	for i in $(seq 1500); do
		[ -s "$run/data/postmaster.pid" ] && pid=$(head -n 1 "$run/data/postmaster.pid" | tr -d -- -)
		if [ -n "$pid" ] && [ -r "/proc/$pid/maps" ]; then
			maps=$(cat "/proc/$pid/maps")
			shm=$(echo "$maps" | while read -r range perms _; do
				[[ $perms == rw?s ]] || continue
				echo "$((0x${range#*-} - 0x${range%-*})) ${range%-*} ${range#*-}"
			done | sort -n | tail -n 1 | awk '$1 >= 4194304 { print $2, $3 }')
			base=$(echo "$maps" | awk -v b="$bin" '$3 == "00000000" && $6 ~ /\/bin\/postgres$/ { print $1; exit }' | cut -d- -f1)
			[ -n "$shm" ] && [ -n "$base" ] && break
		fi
		sleep 0.2
	done
	if [ -z "${shm:-}" ] || [ -z "${base:-}" ]; then
		echo "cachelines: $label: no shared memory or binary mapping found in /proc/${pid:-?}/maps" >&2
		exec {w}>&-
		wait "$job" || true
		return 1
	fi
	{
		echo "shm $shm"
		echo "phase $(printf '%x' $((0x$base + 0x$(nm "$bin" | awk -v s="$CL_MARKER" '$3 == s { print $1 }'))))"
		for i in 0 1 2 3; do
			sym=${CL_SPLITS[$i]}
			addr=$(nm "$bin" | awk -v s="$sym" '$3 == s { print $1 }')
			[ -n "$addr" ] || { echo "cachelines: no symbol $sym in $bin" >&2; return 1; }
			echo "split $((i + 1)) $(printf '%x' $((0x$base + 0x$addr)))"
		done
	} >"$run/params.tmp"
	mv "$run/params.tmp" "$run/params"
	# where the insertion locks' slots are (the pointer WALInsertLocks,
	# read from the process once set), and, in the patched server, how
	# many are allocated: walscale's per-lock counters follow the slots
	cl_layout "$bin" "$pid" "$base" "$shm" >"$run/layout" || return 1
	cat "$BENCH_WORK/cl-script.sql" >&"$w"
	exec {w}>&-
	if ! wait "$job"; then
		echo "cachelines: lackey run $label failed:" >&2
		tail -n 20 "$run/err.log" >&2
		return 1
	fi
	"$PY" "$repo/bench/cachelines_report.py" ops "$label" "$variant" "$locks" "$CL_OPS" "$CL_WARMUP" \
		"${CL_MEASURES[*]}" "$run/ops.txt" "$run/out.log" "$run/layout" "$BENCH_WORK/cl-$label-regions.csv" \
		>"$BENCH_WORK/cl-$label.csv" || return 1
	cp "$run/params" "$BENCH_WORK/cl-$label.params"
	bench_as rm -rf "$run"
	printf '  lackey %-14s %s  [%ss]\n' "$label" \
		"$(awk -F, '{ printf "%s %s/%s/%s  ", $4, $6, $8, $10 }' "$BENCH_WORK/cl-$label.csv")" $((SECONDS - t0))
}

measure_lines() {
	local cfg jobs=${CG_JOBS:-$(nproc)} label
	local -a configs=("stock stock 8 no")
	for l in $CL_LOCKS; do configs+=("walscale-$l walscale $l yes"); done
	CL_DIR="$BENCH_WORK/lackey"
	bench_as mkdir -p "$CL_DIR"
	make_template_cluster "$CL_DIR/template" "CREATE TABLE cl_t (v int);"
	cl_script "$CL_OPS" >"$BENCH_WORK/cl-script.sql"
	echo "  (per configuration: measure read/written/shared-with-an-inserter lines, mean per operation)"
	run_configs_parallel "$jobs" configs cl_one || return 1
	"$PY" "$repo/bench/cachelines_report.py" header >"$RESULTS/cachelines.csv"
	for cfg in "${configs[@]}"; do
		label=${cfg%% *}
		cat "$BENCH_WORK/cl-$label.csv" >>"$RESULTS/cachelines.csv"
	done
	"$PY" "$repo/bench/cachelines_report.py" regions-header >"$RESULTS/cachelines-regions.csv"
	for cfg in "${configs[@]}"; do
		label=${cfg%% *}
		cat "$BENCH_WORK/cl-$label-regions.csv" >>"$RESULTS/cachelines-regions.csv"
	done
	bench_as rm -rf "$CL_DIR"
}

if [ "${BENCH_CL_SKIP_LINES:-0}" != 1 ]; then
	echo "== shared cache lines per operation: one backend under lackey, $CL_OPS operations a measure ($CL_WARMUP warm-up)"
	measure_lines
fi
t_lines=$(($(date +%s) - t_start))

# ---------------------------------------------------------------------------
# Part 2: flush latency while another core keeps inserting

lat_sql() {
	local v=$1
	shift
	bench_as "$(pg_bin "$v")/psql" -X -q -At -h "$BENCH_WORK" -p "${LAT_PORT[$v]}" -U postgres -d postgres "$@"
}

# lat_server VARIANT: a cluster of that build, its postmaster (and so every
# backend it forks) on CPU 0.
declare -A LAT_PORT=()
lat_server() {
	local v=$1 data="$BENCH_WORK/lat-$1"
	LAT_PORT[$v]=$(free_port $((56300 + ${#LAT_PORT[@]} * 10)))
	bench_as "$(pg_bin "$v")/initdb" -D "$data" -A trust -U postgres --no-sync >/dev/null
	{
		cat <<CONF
port = ${LAT_PORT[$v]}
unix_socket_directories = '$BENCH_WORK'
listen_addresses = ''
max_connections = 20
shared_buffers = 128MB
fsync = off
synchronous_commit = on
max_wal_size = 8GB
checkpoint_timeout = 1d
autovacuum = off
CONF
		[ "$v" = stock ] || cat <<CONF
shared_preload_libraries = 'walscale'
walscale.insert_locks = 8
walscale.insert_lock_attempts = 0
CONF
	} | bench_as tee -a "$data/postgresql.conf" >/dev/null
	bench_as taskset -c 0 "$(pg_bin "$v")/pg_ctl" -D "$data" -l "$data/server.log" -w start >/dev/null
	[ "$v" = stock ] || lat_sql "$v" -c "CREATE EXTENSION walscale" >/dev/null
	lat_sql "$v" >/dev/null <<'SQL'
CREATE TABLE cl_f (v int);
-- n single-row commits after 200 of warm-up, in batches of 20: the median
-- over the batches of a batch's time per commit (a clock of microseconds
-- is too coarse for one commit; a batch preempted by another process
-- moves the median little), and the mean, in microseconds
CREATE PROCEDURE cl_measure(n int, INOUT median_us float8 DEFAULT NULL,
	INOUT mean_us float8 DEFAULT NULL)
LANGUAGE plpgsql AS $$
DECLARE
	t timestamptz;
	t0 timestamptz;
	d float8[] := '{}';
BEGIN
	FOR i IN 1..200 LOOP
		INSERT INTO cl_f VALUES (i);
		COMMIT;
	END LOOP;
	t0 := clock_timestamp();
	FOR b IN 1..n / 20 LOOP
		t := clock_timestamp();
		FOR i IN 1..20 LOOP
			INSERT INTO cl_f VALUES (i);
			COMMIT;
		END LOOP;
		d := d || extract(epoch FROM clock_timestamp() - t)::float8 * 1e6 / 20;
	END LOOP;
	mean_us := extract(epoch FROM clock_timestamp() - t0)::float8 * 1e6 / (n / 20 * 20);
	SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) INTO median_us FROM unnest(d) x;
END
$$;
SQL
}

lat_stop() {
	local v
	for v in "${!LAT_PORT[@]}"; do
		bench_as "$(pg_bin "$v")/pg_ctl" -D "$BENCH_WORK/lat-$v" -m immediate -w stop >/dev/null 2>&1 || true
	done
}

# lat_resize LOCKS: the walscale server to LOCKS active locks, and wait
# until its worker has applied it.
lat_resize() {
	local locks=$1 i
	lat_sql walscale -c "ALTER SYSTEM SET walscale.insert_locks = $locks" -c "SELECT pg_reload_conf()" >/dev/null
	for i in $(seq 500); do
		[ "$(lat_sql walscale -c "SELECT insert_locks FROM walscale_settings")" = "$locks" ] && return 0
		sleep 0.02
	done
	echo "cachelines: the server did not resize to $locks locks" >&2
	return 1
}

# lat_run ROUND CONFIG LOAD: one run, one line of flush-latency.csv.
lat_run() {
	local round=$1 cfg=$2 load=$3 v=walscale locks ins_pid="" ipid="" i lsn0 lsn1 res
	if [ "$cfg" = stock ]; then v=stock locks=8; else locks=${cfg#walscale-}; fi
	[ "$v" = stock ] || [ "$(lat_sql walscale -c "SELECT insert_locks FROM walscale_settings")" = "$locks" ] ||
		lat_resize "$locks"
	lat_sql "$v" -c "TRUNCATE cl_f" -c "CHECKPOINT" >/dev/null
	if [ "$load" = inserter ]; then
		lat_sql "$v" -c "SET application_name = 'cl_inserter'" \
			-c "DO \$\$BEGIN LOOP PERFORM pg_logical_emit_message(false, 'walscale', 'x'); END LOOP; END\$\$" \
			>/dev/null 2>&1 &
		ipid=$!
		for i in $(seq 250); do
			ins_pid=$(lat_sql "$v" -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'cl_inserter' AND state = 'active'")
			[ -n "$ins_pid" ] && break
			sleep 0.02
		done
		[ -n "$ins_pid" ] || { echo "cachelines: the inserter did not start" >&2; return 1; }
		taskset -cp 1 "$ins_pid" >/dev/null
	fi
	lsn0=$(lat_sql "$v" -c "SELECT pg_current_wal_insert_lsn()")
	res=$(lat_sql "$v" -F, -c "CALL cl_measure($CL_LAT_COMMITS)")
	lsn1=$(lat_sql "$v" -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$lsn0')")
	if [ -n "$ipid" ]; then
		lat_sql "$v" -c "SELECT pg_cancel_backend($ins_pid)" >/dev/null
		wait "$ipid" 2>/dev/null || true
	fi
	echo "$round,$cfg,$v,$locks,$load,$CL_LAT_COMMITS,$res,$lsn1" >>"$RESULTS/flush-latency.csv"
	printf '  round %d %-14s %-8s median %s us, mean %s us, WAL %s bytes\n' "$round" "$cfg" "$load" \
		"${res%%,*}" "${res#*,}" "$lsn1"
}

measure_latency() {
	local -a arms=() order
	local cfg load r i
	for cfg in stock $(for l in $CL_LOCKS; do echo "walscale-$l"; done); do
		for load in none inserter; do arms+=("$cfg $load"); done
	done
	lat_server stock
	lat_server walscale
	trap lat_stop EXIT
	echo "round,config,variant,insert_locks,load,commits,median_us,mean_us,wal_bytes" >"$RESULTS/flush-latency.csv"
	for r in $(seq "$CL_LAT_ROUNDS"); do
		# A B C, C B A, then rotated: a drift of the shared machine spreads
		# over every arm
		order=()
		for i in "${!arms[@]}"; do order+=("${arms[$(( (i + (r / 2) * 3) % ${#arms[@]} ))]}"); done
		if [ $((r % 2)) = 0 ]; then
			for ((i = ${#order[@]} - 1; i >= 0; i--)); do
				# shellcheck disable=SC2086
				lat_run "$r" ${order[$i]}
			done
		else
			for i in "${!order[@]}"; do
				# shellcheck disable=SC2086
				lat_run "$r" ${order[$i]}
			done
		fi
	done
	lat_stop
	trap - EXIT
}

if [ "${BENCH_CL_SKIP_LATENCY:-0}" != 1 ]; then
	if [ "$(nproc)" -lt 2 ]; then
		echo "cachelines: one CPU, no cross-core flush latency" >&2
	else
		echo "== flush latency on CPU 0, alone and with an inserter on CPU 1: $CL_LAT_ROUNDS rounds of $CL_LAT_COMMITS commits"
		measure_latency
	fi
fi
t_lat=$(($(date +%s) - t_start - t_lines))

# ---------------------------------------------------------------------------
# Instructions per operation, unless make bench has measured them already

if [ "${BENCH_CL_SKIP_INSTRUCTIONS:-0}" != 1 ] && [ ! -f "$RESULTS/instructions.csv" ]; then
	echo "== instruction counts: one backend under callgrind (2000 records, 200 and 400 commits per block)"
	measure_instructions 2000 200 400
fi

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$repo" status --porcelain -- patches 'walscale*.c' 'walscale*.h' 2>/dev/null | head -c1)" ] &&
	commit="$commit (patches or walscale's sources modified in the working tree)"
elapsed=$(($(date +%s) - t_start))
{
	echo "$(date -u +%FT%TZ), commit $commit, core patches $(cat "$repo"/patches/pg18/*.patch | sha256sum | cut -c1-12);"
	echo "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores, load average at the end $(cut -d' ' -f1-3 /proc/loadavg);"
	echo "$("$PG_STOCK/bin/postgres" --version), stock and patched from the same source; $(valgrind --version)."
	echo "Lines: $CL_OPS operations a measure, the first $CL_WARMUP not counted; fsync off, synchronous_commit on,"
	echo "shared_buffers 16MB, wal_buffers 4MB (single-user backends, walscale.insert_lock_attempts 0)."
	echo "Latency: $CL_LAT_ROUNDS rounds of $CL_LAT_COMMITS commits per arm; fsync off, synchronous_commit on,"
	echo "shared_buffers 128MB, autovacuum off; postmaster on CPU 0, the inserter moved to CPU 1 (taskset)."
	echo "Made by \`${BENCH_CL_COMMAND:-make bench-cachelines}\` in $(fmt_secs "$elapsed") (lines $(fmt_secs "$t_lines"), latency $(fmt_secs "$t_lat"))."
} >"$RESULTS/cachelines-meta.txt"
"$PY" "$repo/bench/cachelines_report.py" report "$RESULTS" >/dev/null
cat "$RESULTS/cachelines.md"
bench_as rm -rf "$BENCH_WORK" 2>/dev/null || rm -rf "$BENCH_WORK"
