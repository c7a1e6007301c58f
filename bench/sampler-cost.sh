#!/usr/bin/env bash
# The wait sampler's cost at its default interval (walscale.sample_interval
# = 10 ms): a part of make bench (bench/run.sh), or on its own.
#
#   bench/sampler-cost.sh
#
# 1. Instructions per sampling round, exactly: the server under valgrind
#    --tool=callgrind --trace-children=yes, collecting only inside
#    walscale_waits_sample(), with CLIENTS sessions open (half of them busy
#    in pg_sleep, half idle) for CG_SECONDS; the worker's profile holds the
#    rounds' instructions, walscale_sampling their number.
# 2. The same cluster natively: one-row commits (synchronous_commit = off,
#    so that the backends are CPU-bound) from CLIENTS pgbench clients, runs
#    of SECONDS alternating sampling off (0) and on (10 ms), ROUNDS pairs,
#    each pair in a random order.  Reported: tps median of each, the ratio,
#    and the worker's CPU time (/proc/PID/stat) per second.
# 3. The share by instruction count: the sampler's instructions per second
#    (rounds per second x instructions per round) over the backends'
#    (tps x the instructions of one such commit, 52,000 by make bench's
#    callgrind count of a single-row commit in a single-user backend, less
#    than a pgbench commit, which adds the protocol: the share is an upper
#    bound).
#
# Writes BENCH_RESULTS (default bench/results/<YYYY-MM-DD>-<host>-sampler/):
# sampler.md and sampler-runs.csv.
#
# Environment: BENCH_SAMPLER_CLIENTS (8 x CPUs), BENCH_SAMPLER_SECONDS (5),
# BENCH_SAMPLER_ROUNDS (5), BENCH_SAMPLER_CG_SECONDS (20),
# BENCH_SAMPLER_PG (the patched installation with walscale, default
# .pg/walscale; the sampler is the same code on a stock server),
# BENCH_COMMIT_INSTRUCTIONS (52000).
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/cluster.sh"

cores=$(nproc)
clients=${BENCH_SAMPLER_CLIENTS:-$((8 * cores))}
seconds=${BENCH_SAMPLER_SECONDS:-5}
rounds=${BENCH_SAMPLER_ROUNDS:-5}
cg_seconds=${BENCH_SAMPLER_CG_SECONDS:-20}
commit_instructions=${BENCH_COMMIT_INSTRUCTIONS:-52000}
pg=$(readlink -f "${BENCH_SAMPLER_PG:-$repo/.pg/walscale}")
out=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$(hostname -s)-sampler}
[ -x "$pg/bin/postgres" ] || { echo "sampler-cost: no server in $pg" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "sampler-cost: valgrind is needed" >&2; exit 2; }
mkdir -p "$out"

pg_start() { run "$pg/bin/pg_ctl" -D "$data" -l "$dir/server.log" -w start >/dev/null; }
pg_stop() { run "$pg/bin/pg_ctl" -D "$data" -m fast -w stop >/dev/null 2>&1 || true; }

bench_cluster sampler-cost 56200 $((clients + 20)) <<EOF
shared_preload_libraries = 'walscale'
walscale.sample_interval = 10ms
synchronous_commit = off
autovacuum = off
EOF
trap 'run "$pg/bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true' EXIT
procs_note="max_connections = $((clients + 20))"

# --- 1. instructions per round, under callgrind ------------------------------
mkdir -p "$dir/cg"
chown "$run_user" "$dir/cg"
# Sampling starts once the sessions are connected and stops before the
# server does, each by a reload, so that the worker's profile, which
# collects only inside walscale_waits_sample(), holds exactly the rounds
# walscale_sampling counts.  (callgrind_control cannot reach a PostgreSQL
# child: the postmaster overwrites the environment vgdb names its FIFOs
# from, for its process titles.)
sed -i 's/^walscale.sample_interval = .*/walscale.sample_interval = 0/' "$data/postgresql.conf"
run env PGDATA="$data" valgrind --tool=callgrind --trace-children=yes --vgdb=no \
	--toggle-collect=walscale_waits_sample --dump-instr=no \
	--callgrind-out-file="$dir/cg/cg.%p" \
	"$pg/bin/postgres" -D "$data" >"$dir/valgrind.log" 2>&1 &
for _ in $(seq 600); do
	sql 'SELECT 1' >/dev/null 2>&1 && break
	sleep 0.5
done
sql 'CREATE EXTENSION walscale'
sessions=()
for i in $(seq "$clients"); do
	if [ $((i % 2)) = 0 ]; then
		run "$pg/bin/psql" -X -q -h "$dir" -p "$port" -d postgres \
			-c "SELECT pg_sleep($cg_seconds + 60)" >/dev/null 2>&1 &
	else
		# an idle session: psql waits on its stdin, the backend in ClientRead
		sleep $((cg_seconds + 60)) | run "$pg/bin/psql" -X -q -h "$dir" -p "$port" -d postgres >/dev/null 2>&1 &
	fi
	sessions+=($!)
done
for _ in $(seq 600); do
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'")" -gt "$clients" ] && break
	sleep 0.5
done
wpid=$(sql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walscale'")
sql "ALTER SYSTEM SET walscale.sample_interval = '10ms'" >/dev/null
sql 'SELECT pg_reload_conf()' >/dev/null
sleep "$cg_seconds"
sql "ALTER SYSTEM SET walscale.sample_interval = 0" >/dev/null
sql 'SELECT pg_reload_conf()' >/dev/null
for _ in $(seq 100); do
	[ "$(sql 'SELECT sample_interval_ms FROM walscale_sampling')" = 0 ] && break
	sleep 0.2
done
sleep 1
cg_calls=$(sql 'SELECT rounds FROM walscale_sampling')
read -r cg_active cg_idle < <(sql 'SELECT active_samples, idle_samples FROM walscale_sampling' | tr '|' ' ')
kill "${sessions[@]}" 2>/dev/null || true
pg_stop
wait 2>/dev/null || true
dump="$dir/cg/cg.$wpid"
[ -f "$dump" ] || { echo "sampler-cost: callgrind wrote no profile for the worker ($wpid)" >&2; exit 1; }
best=$(sed -n 's/^totals: *//p' "$dump" | head -1)
[ "$cg_calls" -gt 0 ] || { echo "sampler-cost: no sampling round under callgrind" >&2; exit 1; }
echo "sampler-cost: $cg_active active and $cg_idle idle backend samples in $cg_calls rounds"
per_round=$((best / cg_calls))
echo "sampler-cost: $per_round instructions per round ($best in $cg_calls rounds; $clients sessions, half busy, half idle; $procs_note)"

# --- 2. natively, interleaved ---------------------------------------------------
sed -i 's/^walscale.sample_interval = .*/walscale.sample_interval = 10ms/' "$data/postgresql.conf"
pg_start
run "$pg/bin/pgbench" -h "$dir" -p "$port" -i -s 1 -q postgres >/dev/null 2>&1
cat >"$dir/commit.sql" <<'EOF'
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (1, 1, 1, 1, now());
EOF
chown "$run_user" "$dir/commit.sql"
worker_pid() { sql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'walscale'"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
set_interval() {
	sql "ALTER SYSTEM SET walscale.sample_interval = '$1ms'" >/dev/null
	sql 'SELECT pg_reload_conf()' >/dev/null
	for _ in $(seq 100); do
		[ "$(sql 'SELECT sample_interval_ms FROM walscale_sampling')" = "$1" ] && return 0
		sleep 0.1
	done
	echo "sampler-cost: the reload to $1 ms did not take" >&2
	exit 1
}
echo "round,interval_ms,tps,worker_cpu_ms_per_s" >"$out/sampler-runs.csv"
hz=$(getconf CLK_TCK)
for r in $(seq "$rounds"); do
	order="0 10"
	[ $((RANDOM % 2)) = 0 ] && order="10 0"
	for iv in $order; do
		set_interval "$iv"
		wpid=$(worker_pid)
		t0=$(cpu_ticks "$wpid")
		tps=$(run "$pg/bin/pgbench" -h "$dir" -p "$port" -n -c "$clients" -j "$cores" \
			-T "$seconds" -f "$dir/commit.sql" postgres 2>/dev/null |
			sed -n 's/^tps = \([0-9.]*\) .*/\1/p')
		t1=$(cpu_ticks "$wpid")
		cpu=$(awk -v d=$((t1 - t0)) -v hz="$hz" -v s="$seconds" 'BEGIN { printf "%.2f", d * 1000 / hz / s }')
		echo "$r,$iv,$tps,$cpu" >>"$out/sampler-runs.csv"
		echo "sampler-cost: round $r, interval $iv ms: $tps tps, worker $cpu ms CPU per s"
	done
done
pg_stop

# --- 3. the figures ---------------------------------------------------------------
python3 - "$out/sampler-runs.csv" "$per_round" "$commit_instructions" "$cg_calls" "$best" "$clients" "$cores" "$seconds" "$rounds" >"$out/sampler.md" <<'PY'
import csv, statistics, sys, platform, os
runs, per_round, per_commit, cg_calls, cg_total, clients, cores, seconds, rounds = sys.argv[1:]
per_round, per_commit = int(per_round), int(per_commit)
rows = list(csv.DictReader(open(runs)))
tps = {iv: [float(r["tps"]) for r in rows if r["interval_ms"] == iv] for iv in ("0", "10")}
cpu = [float(r["worker_cpu_ms_per_s"]) for r in rows if r["interval_ms"] == "10"]
cpu0 = [float(r["worker_cpu_ms_per_s"]) for r in rows if r["interval_ms"] == "0"]
m0, m10 = statistics.median(tps["0"]), statistics.median(tps["10"])
share = per_round * 100 / (per_commit * m10)
model = open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t")
print("# The wait sampler's cost at walscale.sample_interval = 10 ms")
print()
print(f"Measured by bench/sampler-cost.sh on {platform.node()}: {cores} CPUs ({model}), "
      f"{platform.system()} {platform.release()}; {clients} sessions/clients.")
print()
print("| figure | value |")
print("|---|---|")
print(f"| instructions per sampling round (callgrind, {clients} sessions, half busy, half idle) | {per_round} ({cg_total} in {cg_calls} rounds) |")
print(f"| sampler instructions per second at 10 ms | {per_round * 100} |")
print(f"| one-row commits per second, sampling on (median of {rounds} runs of {seconds} s) | {m10:.0f} |")
print(f"| one-row commits per second, sampling off (median) | {m0:.0f} |")
print(f"| tps ratio on/off | {m10 / m0:.3f} |")
print(f"| share by instruction count (sampler / backends, {per_commit} per commit: an upper bound) | {100 * share:.3f}% |")
print(f"| worker CPU time, sampling on (median) | {statistics.median(cpu):.2f} ms per s |")
print(f"| worker CPU time, sampling off (median) | {statistics.median(cpu0):.2f} ms per s |")
print()
print("Runs (interleaved, each pair in a random order):")
print()
print("| round | interval ms | tps | worker CPU ms/s |")
print("|---|---|---|---|")
for r in rows:
    print(f"| {r['round']} | {r['interval_ms']} | {r['tps']} | {r['worker_cpu_ms_per_s']} |")
PY
cat "$out/sampler.md"
