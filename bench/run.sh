#!/usr/bin/env bash
# make bench [BENCH_MODE=quick|full]: the seed workloads on walscale and on
# stock PostgreSQL 18 built from the same source, side by side in one run,
# plus instruction counts of the insertion and flush paths under callgrind.
#
#   bench/run.sh [quick|full]
#
# quick (default): every workload, a reduced sweep, 3 s runs, 3 repetitions;
#                  then auto mode head to head with each best fixed
#                  setting, 6 rounds; about 20 minutes on 2 cores once the
#                  builds exist.
# full:            the whole sweep (insert_locks 1..1024 x attempts 0..2 x
#                  client counts scaled to the cores), 10 s runs, 3
#                  repetitions; hours, the estimate is printed first.
#
# Writes bench/results/<YYYY-MM-DD>-<host>/: report.md, runs.csv (every run),
# summary.csv, instructions.csv, cg-functions.csv, the server settings and
# PNG plots.  See bench/README.md.
#
# Environment: BENCH_SECONDS, BENCH_REPS override the run length and the
# repetitions; BENCH_CONFIRM_REPS the rounds of the head-to-head (0: none);
# BENCH_RESULTS the output directory; BENCH_SKIP_CALLGRIND=1 leaves out the
# instruction counts, BENCH_SKIP_RESIZE=1 bench/resize.sh,
# BENCH_SKIP_COLDSTART=1 bench/auto-coldstart.sh, BENCH_SKIP_SAMPLER=1
# bench/sampler-cost.sh, BENCH_SKIP_CACHELINES=1 bench/cachelines.sh,
# BENCH_SKIP_HANDOVER=1 bench/handover.sh;
# BENCH_WORKLOADS="insdel
# walmsg ..." runs a subset; BENCH_DRY_RUN=1 prints the plan's size and
# duration only.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

mode=${1:-quick}
case $mode in
	quick | full) ;;
	*) echo "usage: $0 [quick|full]" >&2; exit 2 ;;
esac

bench_t0=$(date +%s)
BENCH_LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
BENCH_STARTED=$(date -u +%FT%TZ)
BENCH_CORES=$(nproc)
C=$BENCH_CORES

if [ "$mode" = quick ]; then
	BENCH_SECONDS=${BENCH_SECONDS:-3}
	reps=${BENCH_REPS:-3}
	confirm_reps=${BENCH_CONFIRM_REPS:-6}
	coldstart_seconds=${BENCH_AUTO_SECONDS:-60}
	TPCB_SCALE=10
	# zeroing 1 GB of WAL buffers at every server start costs 10-12 s on the
	# 2-core development VMs, and the quick mode restarts ~60 times
	WAL_BUFFERS=64MB
	cg_n=2000 cg_m=200 cg_k=400
	declare -A wl_configs=(
		[insdel]="stock auto 1/0 8/0 8/2 64/0 64/2 256/0 1024/0"
		[tpcb]="stock auto 8/0 64/2"
		[fp_fit]="stock fp=0 fp=64"
		[fp_overflow]="stock fp=0 fp=64"
		[walmsg]="stock auto 8/0 64/0 64/2 1024/0"
		[synccommit]="stock auto 8/0 64/0 1024/0"
	)
	declare -A wl_clients=(
		[insdel]="$((2 * C)) $((8 * C))"
		[tpcb]="$((8 * C))"
		[fp_fit]="$((2 * C))"
		[fp_overflow]="$((2 * C))"
		[walmsg]="$((8 * C))"
		[synccommit]="1 $((8 * C))"
	)
else
	BENCH_SECONDS=${BENCH_SECONDS:-10}
	reps=${BENCH_REPS:-3}
	confirm_reps=${BENCH_CONFIRM_REPS:-6}
	coldstart_seconds=${BENCH_AUTO_SECONDS:-180}
	TPCB_SCALE=50
	WAL_BUFFERS=1024MB
	cg_n=20000 cg_m=2000 cg_k=4000
	sweep=""
	for l in 1 8 16 64 128 256 1024; do
		for a in 0 1 2; do sweep="$sweep $l/$a"; done
	done
	declare -A wl_configs=(
		[insdel]="stock auto$sweep"
		[tpcb]="stock auto 8/0 8/2 64/0 64/2 256/0 256/2 1024/0 1024/2"
		[fp_fit]="stock fp=0 fp=16 fp=64 fp=256 fp=1024"
		[fp_overflow]="stock fp=0 fp=16 fp=64 fp=256 fp=1024"
		[walmsg]="stock auto$sweep"
		[synccommit]="stock auto 8/0 16/0 64/0 64/2 128/0 256/0 1024/0 1024/2"
	)
	declare -A wl_clients=(
		[insdel]="$C $((4 * C)) $((16 * C))"
		[tpcb]="$C $((4 * C)) $((16 * C))"
		[fp_fit]="1 $C $((4 * C))"
		[fp_overflow]="1 $C $((4 * C))"
		[walmsg]="$C $((4 * C)) $((16 * C))"
		[synccommit]="1 $C $((8 * C))"
	)
fi
workloads=${BENCH_WORKLOADS:-insdel tpcb fp_fit fp_overflow walmsg synccommit}
export WAL_BUFFERS TPCB_SCALE

host=$(hostname -s 2>/dev/null || hostname)
RESULTS=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$host}

bench_as() { as_run_user "$@"; }
. "$repo/bench/common.sh"
. "$repo/bench/instructions.sh"

# ---------------------------------------------------------------------------
# The plan and its expected duration, before anything else.
plan=$(mktemp)
trap 'rm -f "$plan"' EXIT
for wl in $workloads; do
	plan_workload "$wl" "$reps" "${wl_configs[$wl]}" "${wl_clients[$wl]}"
done > "$plan"
nruns=$(wc -l < "$plan")

# per run and per restart beyond the run itself: 129 sweep runs took 443 s
# and 90 head-to-head runs (each after a restart) 320 s on an idle 2-core
# VM; a loaded one (load 5 to 17) took about twice that
EST_RUN_OVERHEAD=1
if [ "$mode" = quick ]; then EST_RESTART=1; else EST_RESTART=12; fi
est_runs=$(plan_seconds "$plan")
# the head-to-head: auto, the best fixed setting, stock and (where it is
# another) the static one per auto arm, each run after a restart; counted
# as four, an upper bound
n_auto=$(awk '$3 == -1 && $7 == 1' "$plan" | wc -l)
est_confirm=$(awk -v n="$n_auto" -v r="$confirm_reps" -v t="$BENCH_SECONDS" -v o="$EST_RUN_OVERHEAD" \
	-v s="$EST_RESTART" 'BEGIN { printf "%d\n", n * 4 * r * (t + o + s) }')
est_runs=$((est_runs + est_confirm))
[ "$n_auto" -gt 0 ] && [ "${BENCH_SKIP_COLDSTART:-0}" != 1 ] && est_runs=$((est_runs + coldstart_seconds + 10))
# callgrind: ~30M instructions/s, 2k per record, 52k and 25k per commit,
# 3N of each per configuration, plus start-up and annotate; 6
# configurations, as many at once as there are CPUs
est_cg=0
cg_jobs=${CG_JOBS:-$C}
[ "${BENCH_SKIP_CALLGRIND:-0}" = 1 ] ||
	est_cg=$(( (6 + cg_jobs - 1) / cg_jobs *
		(12 + (3 * cg_n * 2000 + 3 * cg_m * 52000 + 3 * cg_k * 25000) / 30000000) ))
est_setup=$((15 + TPCB_SCALE * 2 * 2 / C))
est_build=0
for v in "" --stock; do
	p=$("$repo/scripts/build-postgres.sh" $v --print-prefix 2>/dev/null || true)
	[ -n "$p" ] && [ -f "$p/.complete" ] || est_build=$((est_build + 420 * 2 / C))
done
est_total=$((est_build + est_cg + est_setup + est_runs + 15))
[ "${BENCH_SKIP_RESIZE:-0}" = 1 ] || est_total=$((est_total + $("$repo/bench/resize.sh" "$mode" --estimate)))
# the sampler's cost: a callgrind run of about a minute, 2 x 5 runs of 5 s
[ "${BENCH_SKIP_SAMPLER:-0}" = 1 ] || est_total=$((est_total + 150))
# the shared cache lines: five backends under lackey, about 3 minutes each
# on a shared 2-core machine, two at once; the flush latency, 2 minutes
[ "${BENCH_SKIP_CACHELINES:-0}" = 1 ] || est_total=$((est_total + 600))
# the spinlock hand-over: a build and 11 rounds, seconds
[ "${BENCH_SKIP_HANDOVER:-0}" = 1 ] || est_total=$((est_total + 15))

echo "== make bench ($mode): $nruns runs of ${BENCH_SECONDS}s, $reps repetitions, $C cores"
echo "== expected total time: ~$(fmt_secs "$est_total") (builds $(fmt_secs "$est_build"), callgrind $(fmt_secs "$est_cg"), setup $(fmt_secs "$est_setup"), runs $(fmt_secs "$est_runs"))"
echo "== results: $RESULTS"
for wl in $workloads; do
	printf '   %-12s configs: %s; clients: %s\n' "$wl" "${wl_configs[$wl]}" "${wl_clients[$wl]}"
done

[ "${BENCH_DRY_RUN:-0}" = 1 ] && exit 0

# ---------------------------------------------------------------------------
echo "== [$(fmt_secs $(( $(date +%s) - bench_t0 )))] servers and extension"
ensure_servers
install_extension
ensure_run_user
# what was built and installed, as of now
commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$repo" status --porcelain -- patches 'walscale*.c' 'walscale*.h' walscale--1.0.sql 2>/dev/null | head -c1)
[ -n "$dirty" ] && commit="$commit (patches or walscale's sources modified in the working tree)"
patches="$(cat "$repo"/patches/pg18/*.patch | sha256sum | cut -c1-12) ($(cd "$repo/patches/pg18" && ls *.patch | tr '\n' ' '))"

# matplotlib for the plots, from Debian's python3 (not a pyenv shim)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)
if [ -n "$PY" ] && ! "$PY" -c 'import matplotlib' 2>/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		echo "== installing python3-matplotlib for the plots"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			python3-matplotlib >/dev/null 2>&1 ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
				--no-install-recommends python3-matplotlib >/dev/null; } ||
			echo "bench: could not install python3-matplotlib; the report will have no plots" >&2
	else
		echo "bench: matplotlib is missing (apt-get install python3-matplotlib); no plots" >&2
	fi
fi
if ! command -v valgrind >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
	echo "== installing valgrind for the instruction counts"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends valgrind >/dev/null 2>&1 || true
fi

BENCH_WORK=$(scratch_dir bench)
cp -r "$repo/bench/workloads" "$BENCH_WORK/"
[ "$(id -u)" = 0 ] && chown -R "$run_user" "$BENCH_WORK"
PORT=$(free_port 55440)

rm -rf "$RESULTS"
mkdir -p "$RESULTS"
echo "$RUNS_HEADER" > "$RESULTS/runs.csv"
cp "$plan" "$RESULTS/plan.txt"
chmod 644 "$RESULTS/plan.txt"

# the hand-over cost of a spinlock between cores, for the simulator's
# insertpos_lck (xfer; beta from 3 CPUs on): handover.txt
if [ "${BENCH_SKIP_HANDOVER:-0}" != 1 ]; then
	echo "== [$(fmt_secs $(( $(date +%s) - bench_t0 )))] spinlock hand-over between cores (bench/handover.sh)"
	BENCH_RESULTS=$RESULTS PG_CONFIG=$PG_STOCK/bin/pg_config "$repo/bench/handover.sh" |
		sed -n 's/^\(uncontended\|handover\|xfer\|beta\|fit\)/   &/p'
fi

cleanup() {
	server_stop 2>/dev/null || true
	rm -f "$plan"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------
if [ "${BENCH_SKIP_CALLGRIND:-0}" != 1 ]; then
	echo "== [$(fmt_secs $(( $(date +%s) - bench_t0 )))] instruction counts: one backend under callgrind ($cg_n records, $cg_m and $cg_k commits per block)"
	measure_instructions "$cg_n" "$cg_m" "$cg_k"
fi

echo "== [$(fmt_secs $(( $(date +%s) - bench_t0 )))] cluster and data: $workloads"
t=$(date +%s)
bench_init_cluster
bench_setup_data $workloads
echo "   setup took $(( $(date +%s) - t ))s"

echo "== [$(fmt_secs $(( $(date +%s) - bench_t0 )))] $nruns runs, configurations interleaved"
run_plan "$plan"

# The sweep's best fixed setting is the highest of many noisy medians:
# auto mode meets it again in rounds of their own, with stock and the one
# fixed setting that does best across the whole run (the static count for
# this machine, fitted on the same loads).
if [ "$confirm_reps" -gt 0 ] && [ "$n_auto" -gt 0 ] && [ -n "$PY" ]; then
	"$PY" "$repo/bench/report.py" --best-fixed "$RESULTS" |
		while read -r wl c best static; do
			configs="auto $best stock"
			[ "$static" = "$best" ] || configs="$configs $static"
			plan_workload "$wl" "$confirm_reps" "$configs" "$c"
		done > "$RESULTS/confirm-plan.txt"
	chmod 644 "$RESULTS/confirm-plan.txt"
	echo "== [$(fmt_secs $(( $(date +%s) - bench_t0 )))] auto head to head with the best fixed settings: $(wc -l < "$RESULTS/confirm-plan.txt") runs"
	echo "$RUNS_HEADER" > "$RESULTS/confirm.csv"
	RUNS_CSV="$RESULTS/confirm.csv" run_plan "$RESULTS/confirm-plan.txt"
fi
server_stop

# auto mode from a cold start at 1 lock, tps each second: auto.md
if [ "$n_auto" -gt 0 ] && [ "${BENCH_SKIP_COLDSTART:-0}" != 1 ]; then
	echo "== [$(fmt_secs $(( $(date +%s) - bench_t0 )))] auto mode from a cold start at 1 lock, ${coldstart_seconds}s"
	BENCH_RESULTS=$RESULTS BENCH_AUTO_PG=$PG_PATCHED BENCH_AUTO_SECONDS=$coldstart_seconds \
		"$repo/bench/auto-coldstart.sh"
fi

elapsed=$(( $(date +%s) - bench_t0 ))
write_meta "mode=$mode" "reps=$reps" "confirm_reps=$confirm_reps" "commit=$commit" "patches=$patches" \
	"wal_buffers=$WAL_BUFFERS" "tpcb_scale=$TPCB_SCALE" "restarts=$RESTARTS" \
	"elapsed=$(fmt_secs "$elapsed")" "estimated=$(fmt_secs "$est_total")" \
	"command=make bench BENCH_MODE=$mode"
write_settings_files $workloads

if [ -n "$PY" ]; then
	"$PY" "$repo/bench/report.py" "$RESULTS"
else
	echo "bench: no python3, the report was not written; the CSV files are in $RESULTS" >&2
fi
echo "== [$(fmt_secs "$elapsed")] done: $RESULTS/report.md"

# resizing the insertion locks at run time: resize.md in the same directory
if [ "${BENCH_SKIP_RESIZE:-0}" != 1 ]; then
	BENCH_RESULTS=$RESULTS "$repo/bench/resize.sh" "$mode"
fi

# the wait sampler's cost at its default interval: sampler.md
if [ "${BENCH_SKIP_SAMPLER:-0}" != 1 ]; then
	BENCH_RESULTS=$RESULTS BENCH_SAMPLER_PG=$PG_PATCHED "$repo/bench/sampler-cost.sh"
fi

# shared cache lines per operation and cross-core flush latency:
# cachelines.md (the instruction counts above are reused)
if [ "${BENCH_SKIP_CACHELINES:-0}" != 1 ]; then
	BENCH_RESULTS=$RESULTS BENCH_PG_READY=1 BENCH_CL_COMMAND="make bench BENCH_MODE=$mode" \
		"$repo/bench/cachelines.sh"
fi
