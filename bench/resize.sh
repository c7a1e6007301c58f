#!/usr/bin/env bash
# Resizing the WAL insertion locks at run time (walscale.insert_locks is
# PGC_SIGHUP from extension 1.1 on): what one resize costs, and what tps
# does while the server resizes every second.
#
#   bench/resize.sh [quick|full] [--estimate]
#
# Part of make bench (bench/run.sh calls it last; BENCH_SKIP_RESIZE=1 leaves
# it out).  One cluster of the patched server, run as the unprivileged user
# like every bench cluster, started once with walscale.insert_locks = 8;
# every change of the count after that is ALTER SYSTEM SET
# walscale.insert_locks + SELECT pg_reload_conf(), which walscale's
# background worker applies by taking all active locks.
#
# 1. Cost of a resize: 8 -> 1024 and 1024 -> 8, alternating, R times each
#    (default 20), first with no load, then under CLIENTS (16) pgbench
#    clients of a WAL-heavy workload (walmsg: 100 pg_logical_emit_message
#    records per transaction).  Per resize: the time all locks were held and
#    the time the worker waited for them (its LOG line), the held time of
#    walscale_settings.last_resize_held_ms, and the latency a client sees
#    from pg_reload_conf() until walscale_settings.resizes has moved.
# 2. tps over time: arms "cycle" (a resize every second, 8 -> 64 -> 1024 ->
#    8 ...), "fixed8" and "fixed1024" (no resize in the run), interleaved
#    A B C, C B A, ... over RUNS rounds (default 4 x 15 s), pgbench -P 1
#    --progress-timestamp for per-second tps.  An arm "reloadN" (every
#    second a reload that leaves the count at N) separates the cost of the
#    reload itself from the resize; an arm "startN" (a restart with N locks
#    before each run) compares a server resized to N with one started so.
#    Each run records which insertion locks it used (walscale_stats after
#    walscale_reset()), so a lock beyond the count in effect shows.
#
# Writes into BENCH_RESULTS (make bench: its results directory; alone:
# bench/results/<YYYY-MM-DD>-<host>-resize/): resize.md (the report, by
# bench/resize_report.py), resize-summary.csv, resize-events.csv (every
# resize requested), resize-runs.csv (every pgbench run), resize-progress.csv
# (per-second tps), resize-server.log, resize-meta.env, resize-settings.conf,
# resize-pg-settings.tsv and, with matplotlib, resize-tps.png and
# resize-cost.png.
#
# Environment (defaults for quick; full doubles the repetitions and runs 6
# rounds of 30 s):
#   BENCH_RESIZE_REPEATS   resizes per direction and load (20)
#   BENCH_RESIZE_RUNS      rounds of the tps arms (4)
#   BENCH_RESIZE_SECONDS   length of one tps run (15)
#   BENCH_RESIZE_CLIENTS   pgbench clients (16)
#   BENCH_RESIZE_WORKLOAD  a workload of bench/common.sh (walmsg; synccommit
#                          puts the flush path under the resizes)
#   BENCH_RESIZE_ARMS      "cycle fixed8 fixed1024" (+ fixedN, reloadN, startN)
#   BENCH_RESIZE_CYCLE     the counts the cycle arm goes through ("8 64 1024")
#   BENCH_RESIZE_PAIR      the two counts of part 1 ("8 1024")
#   BENCH_RESIZE_PERIOD    seconds between resizes in part 1 under load (0.5)
#   BENCH_RESIZE_TIMEOUT   seconds a resize may take before it counts as
#                          failed (30)
#   BENCH_RESIZE_PREBUILT=1  use .pg/walscale and .pg/stock as they are:
#                          build nothing, install nothing
#   BENCH_RESULTS, BENCH_DRY_RUN=1 (print the plan and the estimate only)
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

mode=quick
estimate_only=0
for arg in "$@"; do
	case $arg in
		quick | full) mode=$arg ;;
		--estimate) estimate_only=1 ;;
		*) echo "usage: $0 [quick|full] [--estimate]" >&2; exit 2 ;;
	esac
done

if [ "$mode" = quick ]; then
	repeats=${BENCH_RESIZE_REPEATS:-20}
	runs=${BENCH_RESIZE_RUNS:-4}
	secs=${BENCH_RESIZE_SECONDS:-15}
	WAL_BUFFERS=${WAL_BUFFERS:-64MB}
else
	repeats=${BENCH_RESIZE_REPEATS:-40}
	runs=${BENCH_RESIZE_RUNS:-6}
	secs=${BENCH_RESIZE_SECONDS:-30}
	WAL_BUFFERS=${WAL_BUFFERS:-1024MB}
fi
clients=${BENCH_RESIZE_CLIENTS:-16}
wl=${BENCH_RESIZE_WORKLOAD:-walmsg}
arms=${BENCH_RESIZE_ARMS:-cycle fixed8 fixed1024}
cycle=${BENCH_RESIZE_CYCLE:-8 64 1024}
pair=${BENCH_RESIZE_PAIR:-8 1024}
period_load=${BENCH_RESIZE_PERIOD:-0.5}
period_idle=0.25
timeout=${BENCH_RESIZE_TIMEOUT:-30}
TPCB_SCALE=${TPCB_SCALE:-10}
export WAL_BUFFERS TPCB_SCALE

read -r pair_a pair_b <<<"$pair"
read -r -a cycle_arr <<<"$cycle"
for a in $arms; do
	case $a in
		cycle | fixed[0-9]* | reload[0-9]* | start[0-9]*) ;;
		*) echo "resize: unknown arm '$a' (cycle, fixedN, reloadN, startN)" >&2; exit 2 ;;
	esac
done
narms=$(wc -w <<<"$arms")

# Expected duration: setup (initdb, start, data), part 1, part 2, report.
# Per-run overhead (CHECKPOINT, a resize to the arm's count, pgbench start)
# as measured on the 2-core development VM.
est_part1=$(awk -v r="$repeats" -v pl="$period_load" -v pi="$period_idle" \
	'BEGIN { printf "%d", 2 * r * pi + 2 + 2 * r * pl + 6 }')
nstart=$(tr ' ' '\n' <<<"$arms" | grep -c '^start' || true)
est_part2=$((narms * runs * (secs + 2) + nstart * runs * 4))
est_total=$((20 + est_part1 + est_part2 + 10))
if [ "$estimate_only" = 1 ]; then
	echo "$est_total"
	exit 0
fi

host=$(hostname -s 2>/dev/null || hostname)
RESULTS=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$host-resize}

bench_as() { as_run_user "$@"; }
. "$repo/bench/common.sh"

fmt() { fmt_secs "$1"; }
t_start=$(date +%s)
elapsed() { fmt $(( $(date +%s) - t_start )); }

echo "== resize ($mode): workload $wl, $clients clients; part 1: $repeats resizes each way $pair_a <-> $pair_b, idle and loaded; part 2: arms '$arms' x $runs rounds of ${secs}s"
echo "== expected time: ~$(fmt "$est_total") (part 1 $(fmt "$est_part1"), part 2 $(fmt "$est_part2"))"
echo "== results: $RESULTS/resize.md"
[ "${BENCH_DRY_RUN:-0}" = 1 ] && exit 0

BENCH_STARTED=$(date -u +%FT%TZ)
BENCH_LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
BENCH_CORES=$(nproc)
BENCH_SECONDS=$secs

# ---------------------------------------------------------------------------
if [ "${BENCH_RESIZE_PREBUILT:-0}" = 1 ]; then
	PG_PATCHED=$(readlink -f "$repo/.pg/walscale")
	PG_STOCK=$(readlink -f "$repo/.pg/stock")
	export PG_PATCHED PG_STOCK
else
	ensure_servers
	install_extension
fi
ensure_run_user

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -n "$PY" ] && ! "$PY" -c 'import matplotlib' 2>/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "== installing python3-matplotlib for the plots"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			python3-matplotlib >/dev/null 2>&1 ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends python3-matplotlib >/dev/null; } ||
			echo "resize: could not install python3-matplotlib; the report will have no plots" >&2
	else
		echo "resize: matplotlib is missing (apt-get install python3-matplotlib); no plots" >&2
	fi
fi

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- patches 'walscale*.c' 'walscale*.h' walscale.control 'walscale--*.sql' 2>/dev/null | head -c1 || true)
[ -n "$dirty" ] && commit="$commit (patches or walscale's sources modified in the working tree)"
patches="$(cat "$repo"/patches/pg18/*.patch | sha256sum | cut -c1-12) ($(cd "$repo/patches/pg18" && ls *.patch | tr '\n' ' '))"
walscale_c="$(sha256sum "$repo/walscale.c" | cut -c1-12)"
walscale_so=$(sha256sum "$("$PG_PATCHED/bin/pg_config" --pkglibdir)/walscale.so" 2>/dev/null | cut -c1-12 || echo "?")

BENCH_WORK=$(scratch_dir bench-resize)
cp -r "$repo/bench/workloads" "$BENCH_WORK/"
[ "$(id -u)" = 0 ] && chown -R "$run_user" "$BENCH_WORK"
PORT=$(free_port 55460)
mkdir -p "$RESULTS"
rm -f "$RESULTS"/resize.md "$RESULTS"/resize-*
tmp=$(mktemp -d)

PGB_PID=
cleanup() {
	server_stop 2>/dev/null || true
	if [ -n "$PGB_PID" ]; then wait "$PGB_PID" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

EVENTS="$RESULTS/resize-events.csv"
RUNS="$RESULTS/resize-runs.csv"
PROGRESS="$RESULTS/resize-progress.csv"
echo "phase,run,seq,from_locks,to_locks,requested_epoch,ok,observed_ms,locks_now,resizes_now,held_ms_view,resized_at_epoch,pgbench_conns,server_start" > "$EVENTS"
echo "phase,run,order,clients,seconds,started_epoch,tps,xacts,failed,rc,locks_start,locks_end,resizes_start,resizes_end,load1_start,load1_end,acquisitions,blocking_waits,blocked_ms,exclusive_acquisitions,locks_used,max_lock_used,server_start" > "$RUNS"
echo "phase,run,epoch,tps,lat_ms,failed" > "$PROGRESS"

# ---------------------------------------------------------------------------
echo "== [$(elapsed)] cluster and data ($wl)"
bench_init_cluster
bench_setup_data "$wl"
ensure_server walscale "$pair_a" 0 0 "$(wl_settings "$wl")"
bench_psql postgres -c "ALTER EXTENSION walscale UPDATE" >/dev/null 2>&1 || true

# The server must have the feature: extension 1.1's columns, a reloadable
# walscale.insert_locks.
cols=$(bench_psql postgres -c "SELECT count(*) FROM pg_attribute
	WHERE attrelid = 'walscale_settings'::regclass
	AND attname IN ('resizes', 'last_resize', 'last_resize_held_ms', 'insert_locks_configured')")
ctx=$(bench_psql postgres -c "SELECT context FROM pg_settings WHERE name = 'walscale.insert_locks'")
extversion=$(bench_psql postgres -c "SELECT extversion FROM pg_extension WHERE extname = 'walscale'")
if [ "$cols" != 4 ] || [ "$ctx" != sighup ]; then
	echo "resize: skipped: this server cannot resize at run time (walscale $extversion, walscale.insert_locks is '$ctx', $cols of 4 columns of walscale_settings 1.1)" >&2
	{
		echo "# walscale: resizing the WAL insertion locks at run time"
		echo
		echo "Skipped on $(date -u +%FT%TZ), commit $commit: the server cannot resize at run time"
		echo "(extension $extversion, \`walscale.insert_locks\` context '$ctx')."
	} > "$RESULTS/resize.md"
	exit 0
fi

# Waits, in the backend, until walscale's worker has applied a resize:
# resizes has moved past prev and the count in effect is target.
bench_psql postgres >/dev/null <<'SQL'
CREATE FUNCTION resize_bench_wait(prev bigint, target int, t0 timestamptz, timeout_s float8,
	OUT ok boolean, OUT observed_ms float8, OUT locks_now int, OUT resizes_now bigint,
	OUT held_ms float8, OUT resized_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
	s record;
BEGIN
	LOOP
		SELECT w.insert_locks, w.resizes, w.last_resize_held_ms, w.last_resize
			INTO s FROM walscale_settings w;
		IF (s.resizes > prev AND s.insert_locks = target)
			OR clock_timestamp() - t0 > make_interval(secs => timeout_s) THEN
			ok := s.resizes > prev AND s.insert_locks = target;
			observed_ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
			locks_now := s.insert_locks;
			resizes_now := s.resizes;
			held_ms := s.last_resize_held_ms;
			resized_at := s.last_resize;
			RETURN;
		END IF;
		PERFORM pg_sleep(0.0002);
	END LOOP;
END
$$;
SQL

# SQL for one resize to TARGET at epoch AT (empty: at once); prints one
# line "R,phase,run,seq,from,to,t0,ok,observed_ms,locks_now,resizes_now,
# held_ms,resized_at,pgbench connections".
emit_resize() {
	local phase=$1 run=$2 seq=$3 target=$4 at=${5:-}
	[ -n "$at" ] && echo "SELECT pg_sleep_until(to_timestamp($at)) \\g /dev/null"
	cat <<SQL
SELECT resizes AS prev, insert_locks AS from_locks FROM walscale_settings \\gset
ALTER SYSTEM SET walscale.insert_locks = $target;
SELECT extract(epoch FROM clock_timestamp()) AS t0, pg_reload_conf() AS reloaded \\gset
SELECT 'R', '$phase', $run, $seq, :from_locks, $target, :t0, w.ok, round(w.observed_ms::numeric, 3),
	w.locks_now, w.resizes_now, w.held_ms, extract(epoch FROM w.resized_at),
	(SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'), $RESTARTS
	FROM resize_bench_wait(:prev, $target, to_timestamp(:t0), $timeout) w;
SQL
}

# A reload that leaves the count as it is (arm reloadN).
emit_reload() {
	local phase=$1 run=$2 seq=$3 locks=$4 at=$5
	cat <<SQL
SELECT pg_sleep_until(to_timestamp($at)) \\g /dev/null
ALTER SYSTEM SET walscale.insert_locks = $locks;
SELECT 'R', '$phase', $run, $seq, s.insert_locks, $locks, extract(epoch FROM clock_timestamp()), 'reload',
	'', s.insert_locks, s.resizes, s.last_resize_held_ms, extract(epoch FROM s.last_resize),
	(SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbench'), $RESTARTS
	FROM walscale_settings s, pg_reload_conf();
SQL
}

# Run a generated script in one session; its R lines go to resize-events.csv.
run_driver() {
	local sql=$1 out
	out=$(bench_psql postgres -F , < "$sql") || {
		echo "resize: the driver failed:" >&2
		echo "$out" | tail -n 5 >&2
		return 1
	}
	echo "$out" | sed -n 's/^R,//p' | tee -a "$EVENTS" > "$tmp/last-events"
	if awk -F, '$7 == "f" { bad = 1 } END { exit !bad }' "$tmp/last-events"; then
		echo "resize: a resize did not complete within ${timeout}s:" >&2
		awk -F, '$7 == "f"' "$tmp/last-events" >&2
	fi
}

# The run's use of the insertion locks (walscale_reset() before it): which
# locks were taken, so that a lock beyond the count in effect shows.
LOCK_STATS_SQL="SELECT coalesce(sum(acquisitions), 0), coalesce(sum(blocking_waits), 0),
	round(coalesce(sum(blocked_ms), 0)::numeric, 1), coalesce(sum(exclusive_acquisitions), 0),
	count(*) FILTER (WHERE acquisitions > 0), coalesce(max(lock_id) FILTER (WHERE acquisitions > 0), -1)
	FROM walscale_stats"
reset_stats() { bench_psql postgres -c "SELECT walscale_reset()" >/dev/null; }

current_locks() { bench_psql postgres -c "SELECT insert_locks FROM walscale_settings"; }
current_resizes() { bench_psql postgres -c "SELECT resizes FROM walscale_settings"; }

# Bring the count to N (one resize, logged as phase "setup").
SETUP_SEQ=0
set_locks() {
	local n=$1
	[ "$(current_locks)" = "$n" ] && return 0
	SETUP_SEQ=$((SETUP_SEQ + 1))
	emit_resize setup 0 "$SETUP_SEQ" "$n" > "$tmp/setup.sql"
	run_driver "$tmp/setup.sql"
	[ "$(current_locks)" = "$n" ] || { echo "resize: could not set the count to $n" >&2; return 1; }
}

# Arm startN: a server started with N locks, for comparison with one
# resized to N (the resizes counter starts again at 0; server_start in the
# CSV files tells the starts apart).
restart_at() {
	bench_psql postgres -c "ALTER SYSTEM RESET walscale.insert_locks" >/dev/null
	server_stop
	server_start walscale "$1" 0 0 "$(wl_settings "$wl")"
}

epoch_now() { date +%s.%N; }
epoch_plus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a + b }'; }

# pgbench in the background for SECONDS; PGB_PID, PGB_OUT
start_pgbench() {
	local t=$1 jobs=$clients
	[ "$jobs" -gt "$BENCH_CORES" ] && jobs=$BENCH_CORES
	PGB_OUT="$tmp/pgbench.out"
	# shellcheck disable=SC2046
	bench_as "$PG_STOCK/bin/pgbench" -h "$BENCH_WORK" -p "$PORT" -U postgres \
		-c "$clients" -j "$jobs" -T "$t" -P 1 --progress-timestamp \
		$(wl_pgbench_args "$wl") "$(wl_db "$wl")" > "$PGB_OUT" 2>&1 < /dev/null &
	PGB_PID=$!
}

# Wait for pgbench; one line of resize-runs.csv, its progress lines.
finish_pgbench() {
	local phase=$1 run=$2 order=$3 t=$4 started=$5 locks0=$6 resizes0=$7 load0=$8
	local rc=0 tps xacts failed locks
	wait "$PGB_PID" || rc=$?
	PGB_PID=
	tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$PGB_OUT" | head -n 1)
	xacts=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$PGB_OUT")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$PGB_OUT")
	locks=$(bench_psql postgres -F , -c "$LOCK_STATS_SQL")
	echo "$phase,$run,$order,$clients,$t,$started,$tps,$xacts,$failed,$rc,$locks0,$(current_locks),$resizes0,$(current_resizes),$load0,$(cut -d' ' -f1 /proc/loadavg),$locks,$RESTARTS" >> "$RUNS"
	awk -v p="$phase" -v r="$run" '/^progress: / {
		f = ""
		for (i = 1; i <= NF; i++) if ($i == "failed" || $i == "failed,") f = $(i - 1)
		printf "%s,%s,%s,%s,%s,%s\n", p, r, $2, $4, $7, f }' "$PGB_OUT" >> "$PROGRESS"
	{ echo "### $phase run $run (rc $rc)"; cat "$PGB_OUT"; } >> "$RESULTS/resize-pgbench.txt"
	LAST_TPS=$tps
	if [ "$rc" != 0 ]; then
		echo "resize: pgbench exited with $rc in $phase run $run:" >&2
		grep -v '^progress:' "$PGB_OUT" | tail -n 10 >&2
	fi
}

# ---------------------------------------------------------------------------
# Part 1: the cost of one resize, idle and under load.
part1() {
	local phase=$1 period=$2 at0 seq=0 target t started locks0 resizes0 load0
	set_locks "$pair_a"
	wl_prep "$wl"
	if [ "$phase" = cost-load ]; then
		t=$(awk -v r="$repeats" -v p="$period" 'BEGIN { printf "%d", 2 * r * p + 4 }')
		locks0=$(current_locks) resizes0=$(current_resizes) load0=$(cut -d' ' -f1 /proc/loadavg)
		reset_stats
		started=$(epoch_now)
		start_pgbench "$t"
		at0=$(epoch_plus "$started" 2)    # clients connected and running
	else
		at0=$(epoch_plus "$(epoch_now)" 0.5)
	fi
	: > "$tmp/part1.sql"
	for _ in $(seq "$repeats"); do
		for target in "$pair_b" "$pair_a"; do
			emit_resize "$phase" 1 $((seq + 1)) "$target" "$(epoch_plus "$at0" "$(awk -v s="$seq" -v p="$period" 'BEGIN { print s * p }')")" >> "$tmp/part1.sql"
			seq=$((seq + 1))
		done
	done
	run_driver "$tmp/part1.sql"
	[ "$phase" = cost-load ] && finish_pgbench "$phase" 1 1 "$t" "$started" "$locks0" "$resizes0" "$load0"
	awk -F, -v p="$phase" '$1 == p { r++ } $1 == p && $7 == "t" { n++; h += $11; o += $8 } END {
		printf "   %d of %d resizes applied; on average all locks held %.3f ms (walscale_settings), %.1f ms from pg_reload_conf() until done\n",
			n, r, n ? h / n : 0, n ? o / n : 0 }' "$EVENTS"
}

echo "== [$(elapsed)] part 1: $repeats x ($pair_a -> $pair_b, $pair_b -> $pair_a) with no load, every ${period_idle}s"
part1 cost-idle "$period_idle"
echo "== [$(elapsed)] part 1: the same under $clients clients of $wl, every ${period_load}s"
part1 cost-load "$period_load"

# ---------------------------------------------------------------------------
# Part 2: tps over time, arms interleaved: A B C, C B A, then a fixed
# pseudo-random order and its reverse (as bench/common.sh's plans).
order_for() {
	local rep=$1
	if [ "$rep" = 1 ]; then
		echo $arms
	elif [ $((rep % 2)) = 0 ]; then
		order_for $((rep - 1)) | tr ' ' '\n' | tac | tr '\n' ' '
	else
		echo $arms | tr ' ' '\n' |
			awk -v seed="$rep" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' |
			sort -k1,1g | cut -f2 | tr '\n' ' '
	fi
}

arm_start_locks() {
	case $1 in
		cycle) echo "${cycle_arr[0]}" ;;
		fixed*) echo "${1#fixed}" ;;
		reload*) echo "${1#reload}" ;;
	esac
}

n2=$((narms * runs))
i2=0
echo "== [$(elapsed)] part 2: $n2 runs of ${secs}s, $clients clients, arms interleaved"
for rep in $(seq "$runs"); do
	order=0
	for arm in $(order_for "$rep"); do
		i2=$((i2 + 1))
		order=$((order + 1))
		case $arm in
			start*) restart_at "${arm#start}" ;;
			*) set_locks "$(arm_start_locks "$arm")" ;;
		esac
		wl_prep "$wl"
		locks0=$(current_locks) resizes0=$(current_resizes) load0=$(cut -d' ' -f1 /proc/loadavg)
		reset_stats
		started=$(epoch_now)
		start_pgbench "$secs"
		case $arm in
			cycle)
				# a resize in the middle of every second of the run
				: > "$tmp/arm.sql"
				for k in $(seq 0 $((secs - 2))); do
					emit_resize cycle "$rep" $((k + 1)) "${cycle_arr[$(( (k + 1) % ${#cycle_arr[@]} ))]}" \
						"$(epoch_plus "$started" "$k.5")" >> "$tmp/arm.sql"
				done
				run_driver "$tmp/arm.sql" ;;
			reload*)
				: > "$tmp/arm.sql"
				for k in $(seq 0 $((secs - 2))); do
					emit_reload "$arm" "$rep" $((k + 1)) "${arm#reload}" "$(epoch_plus "$started" "$k.5")" >> "$tmp/arm.sql"
				done
				run_driver "$tmp/arm.sql" ;;
		esac
		finish_pgbench "$arm" "$rep" "$order" "$secs" "$started" "$locks0" "$resizes0" "$load0"
		printf '[%2d/%d %s] %-10s round %d: %10.1f tps  (load %s)\n' "$i2" "$n2" "$(elapsed)" "$arm" "$rep" \
			"${LAST_TPS:-0}" "$(cut -d' ' -f1-3 /proc/loadavg)"
	done
done

# ---------------------------------------------------------------------------
resizes_total=$(current_resizes)
bench_psql postgres -F '	' -c "SELECT name, setting, coalesce(unit, ''), source FROM pg_settings
	WHERE source NOT IN ('default', 'override', 'client') ORDER BY name" > "$RESULTS/resize-pg-settings.tsv"
bench_psql postgres -F '	' -c "SELECT * FROM walscale_settings" > "$tmp/settings-row"
settings_row=$(tr '\t' ' ' < "$tmp/settings-row")
server_stop
cp "$DATA/bench.conf" "$RESULTS/resize-settings.conf"
cp "$BENCH_WORK/server.log" "$RESULTS/resize-server.log"
chmod 644 "$RESULTS"/resize-*

elapsed_s=$(( $(date +%s) - t_start ))
(
	RESULTS=$tmp
	write_meta "mode=$mode" "commit=$commit" "patches=$patches" "walscale_c=$walscale_c" \
		"walscale_so=$walscale_so" "extversion=$extversion" "workload=$wl" \
		"workload_title=$(wl_title "$wl")" \
		"pgbench=pgbench -c $clients -j $(( clients < BENCH_CORES ? clients : BENCH_CORES )) -T SECONDS -P 1 --progress-timestamp $(wl_pgbench_args "$wl" | sed "s|$BENCH_WORK/workloads/|bench/workloads/|") $(wl_db "$wl")" \
		"clients=$clients" "repeats=$repeats" "runs=$runs" "arms=$arms" "cycle=$cycle" \
		"pair=$pair" "period_load=$period_load" "period_idle=$period_idle" "timeout=$timeout" \
		"wal_buffers=$WAL_BUFFERS" "resizes_total=$resizes_total" \
		"walscale_settings_end=$settings_row" \
		"elapsed=$(fmt "$elapsed_s")" "estimated=$(fmt "$est_total")" \
		"command=bench/resize.sh $mode"
)
cp "$tmp/meta.env" "$RESULTS/resize-meta.env"

if [ -n "$PY" ]; then
	"$PY" "$repo/bench/resize_report.py" "$RESULTS"
else
	echo "resize: no python3, the report was not written; the CSV files are in $RESULTS" >&2
fi
echo "== [$(elapsed)] done: $RESULTS/resize.md"
