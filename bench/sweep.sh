#!/usr/bin/env bash
# make sweep: do more WAL insertion locks help on this machine, and by how
# much?  The seed workloads (bench/workloads/) on a scratch cluster of the
# patched server, at walscale.insert_locks 8 (PostgreSQL's number), 16, 32
# ... up to auto mode's maximum for this machine's CPUs (8 per CPU, at most
# 1024), and in auto mode; rounds interleaved; then a table, a plot and a
# verdict from medians and paired ratios to 8 locks, with their spread.
#
#   bench/sweep.sh        (make sweep)
#
# It makes its own cluster in SWEEP_DIR, on a socket there and a free port,
# with no TCP listener, and refuses to start if SWEEP_DIR exists, unless it
# is the scratch cluster of an earlier sweep that is not running.  Running
# it as root, the cluster runs as the user walscale.  It removes the cluster
# at the end and keeps the results.
#
# Environment:
#   SWEEP_DIR        the scratch cluster's directory (/var/tmp/walscale-sweep)
#   SWEEP_RESULTS    where the results go (bench/results/<date>-<host>-sweep)
#   SWEEP_PG         prefix of a patched server with walscale installed, such
#                    as /usr/lib/postgresql/18 of the +walscale packages;
#                    default: the repository's build (built when missing)
#   SWEEP_WORKLOADS  of insdel, walmsg, synccommit (all three)
#   SWEEP_CLIENTS    pgbench clients (2 per CPU, at least 8)
#   SWEEP_SECONDS    length of one run (15), SWEEP_ROUNDS rounds (by default
#                    the fewest at which bench/sweep_report.py can call a
#                    gain among the numbers compared: 5 for one number
#                    besides 8, 6 for two or three, 7 for four to six, 8 for
#                    seven; fewer give no verdict, the report says why)
#   SWEEP_MAX_LOCKS  the largest number tried (8 per CPU, a power of two)
#   SWEEP_WAL_BUFFERS  wal_buffers (the seed's 1024MB; 256MB when a server
#                    start with it takes over 5 s)
#   SWEEP_DEADLINE   seconds after which no run starts (none)
set -euo pipefail
# the BENCH_ variables, RESULTS and PORT are bench/common.sh's
# shellcheck disable=SC2034
# shellcheck source-path=SCRIPTDIR source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

T0=$(date +%s)
BENCH_STARTED=$(date -u +%FT%TZ)
BENCH_LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
cpus=$(nproc)
BENCH_CORES=$cpus
BENCH_SECONDS=${SWEEP_SECONDS:-15}
workloads=${SWEEP_WORKLOADS:-insdel walmsg synccommit}
# (sweep_ names: bench/common.sh's run_plan reads into locks and clients)
sweep_clients=${SWEEP_CLIENTS:-$((2 * cpus > 8 ? 2 * cpus : 8))}
work=${SWEEP_DIR:-/var/tmp/walscale-sweep}
host=$(hostname -s 2>/dev/null || hostname)
RESULTS=${SWEEP_RESULTS:-$repo/bench/results/$(date -u +%F)-$host-sweep}
bench_as() { as_run_user "$@"; }
# shellcheck source=bench/common.sh
. "$repo/bench/common.sh"
say() { printf 'sweep: [%s] %s\n' "$(fmt_secs $(($(date +%s) - T0)))" "$*"; }
die() { echo "sweep: $*" >&2; exit 1; }

for wl in $workloads; do
	case $wl in insdel | walmsg | synccommit) ;; *) die "no workload '$wl' (insdel, walmsg, synccommit)" ;; esac
done
for v in "$BENCH_SECONDS" "${SWEEP_ROUNDS:-5}" "$sweep_clients" "${SWEEP_MAX_LOCKS:-8}"; do
	[[ "$v" =~ ^[1-9][0-9]*$ ]] || die "SWEEP_SECONDS, SWEEP_ROUNDS, SWEEP_CLIENTS and SWEEP_MAX_LOCKS take positive integers, not '$v'"
done
# 8, 16, 32 ... up to auto mode's maximum (walscale_rules_max_locks()),
# rounded up to a power of two, at most 1024
max=${SWEEP_MAX_LOCKS:-$((8 * cpus))}
sweep_locks="" l=8
while [ "$l" -le 1024 ]; do
	sweep_locks="$sweep_locks $l"
	[ "$l" -ge "$max" ] && break
	l=$((l * 2))
done
configs="$(for l in $sweep_locks; do printf '%s/0 ' "$l"; done)auto"
# bench/sweep_report.py's rounds_needed(): the fewest rounds n >= 5 at
# which the numbers compared with 8, k of them, have k / 2^n <= 0.05
compared=$(($(wc -w <<<"$sweep_locks") - 1))
needed=5
while [ $((compared * 100)) -gt $((5 << needed)) ]; do
	needed=$((needed + 1))
done
rounds=${SWEEP_ROUNDS:-$needed}

# ---------------------------------------------------------------------------
# The scratch cluster: never an existing one.
inside_cluster() {
	local d=$1
	while [ "$d" != / ] && [ -n "$d" ]; do
		[ -f "$d/PG_VERSION" ] && { echo "$d"; return 0; }
		d=$(dirname "$d")
	done
	return 1
}
case $work in /*) ;; *) work=$PWD/$work ;; esac
if c=$(inside_cluster "$work"); then
	die "$work is inside the data directory $c of an existing cluster; the sweep makes a cluster of its own and never touches an existing one: set SWEEP_DIR to a new directory"
fi
if [ -e "$work" ]; then
	if [ ! -f "$work/.walscale-sweep" ]; then
		die "$work exists and is not a sweep's scratch directory: the sweep makes a cluster of its own and never touches an existing one; remove it or set SWEEP_DIR to a directory that does not exist"
	fi
	if [ -f "$work/data/postmaster.pid" ] && kill -0 "$(head -n 1 "$work/data/postmaster.pid")" 2>/dev/null; then
		die "a sweep's server is running in $work (pid $(head -n 1 "$work/data/postmaster.pid")): another sweep is under way"
	fi
	say "removing the scratch cluster an earlier sweep left in $work"
	rm -rf "$work"
fi

# ---------------------------------------------------------------------------
# The server: the packaged one, or the repository's build.
if [ -n "${SWEEP_PG:-}" ]; then
	PG_PATCHED=$SWEEP_PG
	[ -x "$PG_PATCHED/bin/postgres" ] || die "no $SWEEP_PG/bin/postgres (SWEEP_PG)"
	[ -f "$("$PG_PATCHED/bin/pg_config" --pkglibdir)/walscale.so" ] || die "walscale is not installed in $SWEEP_PG"
else
	say "the patched server: built now if it is not cached (about a quarter of an hour on 2 cores)"
	ensure_servers
	install_extension
fi
# one server for all: the sweep compares numbers of locks on it
PG_STOCK=$PG_PATCHED
ensure_run_user
mkdir -p "$work" "$RESULTS"
touch "$work/.walscale-sweep"
[ "$(id -u)" != 0 ] || chown -R "$run_user" "$work"
BENCH_WORK=$work
PORT=$(free_port 55440)
WAL_BUFFERS=${SWEEP_WAL_BUFFERS:-1024MB}
cp -r "$repo/bench/workloads" "$work/"
[ "$(id -u)" != 0 ] || chown -R "$run_user" "$work/workloads"

cleanup() {
	server_stop 2>/dev/null || true
	[ "${SWEEP_KEEP:-0}" = 1 ] || rm -rf "$work"
}
trap cleanup EXIT

plan=$RESULTS/plan.txt
for wl in $workloads; do plan_workload "$wl" "$rounds" "$configs" "$sweep_clients"; done >"$plan"
nruns=$(wc -l <"$plan")
say "$cpus CPUs, $(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo); $("$PG_PATCHED/bin/postgres" --version)"
say "$nruns runs of ${BENCH_SECONDS}s: $workloads at$sweep_locks locks and auto, $sweep_clients clients, $rounds rounds interleaved; about $(fmt_secs "$(plan_seconds "$plan")")"
say "scratch cluster in $work (port $PORT, no TCP); results in $RESULTS"
[ "$rounds" -ge "$needed" ] || say "$rounds rounds: a table and a plot, but too few to tell a gain from chance ($compared compared with 8: SWEEP_ROUNDS=$needed would do)"

bench_init_cluster
t=$(date +%s)
ensure_server walscale 8 0 0 seed000
if [ $(($(date +%s) - t)) -gt 5 ] && [ -z "${SWEEP_WAL_BUFFERS:-}" ]; then
	say "a start with wal_buffers = $WAL_BUFFERS took $(($(date +%s) - t)) s: 256MB from here on"
	WAL_BUFFERS=256MB
	server_stop
	ensure_server walscale 8 0 0 seed000
fi
[ "$(bench_psql postgres -c "SELECT current_setting('walscale.insert_locks', true) IS NOT NULL")" = t ] ||
	die "walscale is not loaded"
# shellcheck disable=SC2086 # one workload a word
bench_setup_data $workloads
[ "$(bench_psql postgres -c 'SELECT core_version IS NOT NULL FROM walscale_settings')" = t ] ||
	die "walscale is in observe mode on $PG_PATCHED: the sweep needs the server with walscale's core patch"

echo "$RUNS_HEADER" >"$RESULTS/runs.csv"
[ -z "${SWEEP_DEADLINE:-}" ] || BENCH_DEADLINE=$((T0 + SWEEP_DEADLINE))
run_plan "$plan"
server_stop

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo 'not a git checkout')
git -C "$repo" diff --quiet HEAD 2>/dev/null || commit="$commit with changes not committed"
write_meta "mode=sweep" "reps=$rounds" "clients=$sweep_clients" "locks=${sweep_locks# } auto" "commit=$commit" \
	"wal_buffers=$WAL_BUFFERS" "restarts=$RESTARTS" "elapsed=$(fmt_secs $(($(date +%s) - T0)))" \
	"command=$(env | grep -E '^SWEEP_' | sort | sed "s|=$repo/|=|" | tr '\n' ' ')$([ -n "${MAKELEVEL:-}" ] && echo 'make sweep' || echo bench/sweep.sh)"
# shellcheck disable=SC2086
write_settings_files $workloads
if ! command -v python3 >/dev/null; then
	say "no python3 here: the runs are in $RESULTS/runs.csv; bench/sweep_report.py $RESULTS writes the report where python3 is"
	exit 0
fi
python3 "$repo/bench/sweep_report.py" "$RESULTS"
say "done: $RESULTS/sweep.md, $RESULTS/sweep.svg"
