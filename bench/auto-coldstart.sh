#!/usr/bin/env bash
# Auto mode from a cold start at 1 lock: tps each second, with each resize
# auto mode made marked on the same time line.  The last part of make bench
# (bench/run.sh); the comparison of auto mode with the fixed settings is in
# its report.md.
#
#   bench/auto-coldstart.sh
#
# One cluster of the patched server (as the unprivileged user, like every
# bench cluster), started with walscale.insert_locks = 1; then -1 by a
# reload, and at once pgbench -P 1 --progress-timestamp.
#
# Writes into BENCH_RESULTS (default bench/results/<YYYY-MM-DD>-<host>-auto/):
# auto-progress.csv (second, tps, locks in effect), auto-decisions.csv
# (walscale_auto_decisions), auto-server.log, auto.md (tps per second with
# the resizes marked) and auto-coldstart.png (the same as a plot, when
# python3 has matplotlib).
#
# Environment:
#   BENCH_AUTO_CLIENTS     pgbench clients (32)
#   BENCH_AUTO_SECONDS     length of the run (60)
#   BENCH_AUTO_INTERVAL    walscale.auto_interval in seconds (2)
#   BENCH_AUTO_PG          the patched installation, with walscale installed
#                          (default .pg/walscale; nothing is built or
#                          installed)
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"
. "$(dirname "$0")/cluster.sh"

clients=${BENCH_AUTO_CLIENTS:-32}
seconds=${BENCH_AUTO_SECONDS:-60}
interval=${BENCH_AUTO_INTERVAL:-2}
pg=$(readlink -f "${BENCH_AUTO_PG:-$repo/.pg/walscale}")
out=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$(hostname -s)-auto}
[ -x "$pg/bin/postgres" ] || { echo "auto-coldstart: no server in $pg" >&2; exit 2; }
mkdir -p "$out"

bench_cluster auto-coldstart 56100 $((clients + 20)) <<EOF
shared_preload_libraries = 'walscale'
walscale.insert_locks = 1
walscale.auto_interval = ${interval}s
autovacuum = off
checkpoint_timeout = '1h'
max_wal_size = '4GB'
log_min_messages = info
EOF
run "$pg/bin/pg_ctl" -D "$data" -l "$dir/server.log" -w start >/dev/null
trap 'run "$pg/bin/pg_ctl" -D "$data" -m immediate stop >/dev/null 2>&1 || true' EXIT
sql 'CREATE EXTENSION walscale'
echo "SELECT count(pg_logical_emit_message(false, 'walscale', 'small record ' || i)) FROM generate_series(1, 20) AS i;" >"$dir/walmsg.sql"
chmod a+r "$dir/walmsg.sql"

# from 1 lock: below auto mode's floor of 8, which is lowered to let it
sql "ALTER SYSTEM SET walscale.auto_min_locks = 1"
sql "ALTER SYSTEM SET walscale.insert_locks = -1"
sql 'SELECT pg_reload_conf()' >/dev/null
start=$(sql "SELECT extract(epoch FROM clock_timestamp())")
run "$pg/bin/pgbench" -n -h "$dir" -p "$port" -c "$clients" -j "$((clients < 4 ? clients : 4))" \
	-T "$seconds" -P 1 --progress-timestamp -f "$dir/walmsg.sql" postgres \
	>"$dir/pgbench.out" 2>"$dir/pgbench.err"

sql "COPY (SELECT extract(epoch FROM decided_at) - $start, from_locks, to_locks, reason,
                  round(blocking_waits_per_1000::numeric, 2), round(blocked_ms_per_s::numeric, 1),
                  locks_used, acquisitions
           FROM walscale_auto_decisions ORDER BY decided_at) TO STDOUT WITH CSV" \
	>"$out/auto-decisions.csv.tmp"
{ echo "t_s,from_locks,to_locks,reason,blocking_waits_per_1000,blocked_ms_per_s,locks_used,acquisitions"; cat "$out/auto-decisions.csv.tmp"; } >"$out/auto-decisions.csv"
rm -f "$out/auto-decisions.csv.tmp"
cp "$dir/server.log" "$out/auto-server.log"

# progress lines: "progress: 1764556400.123 s, 7012.3 tps, lat ..." (timestamps)
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
"$PY" - "$dir/pgbench.err" "$out" "$start" "$clients" "$interval" <<'EOF'
import csv, re, sys
err, out, start, clients, interval = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
prog = []
for line in open(err):
    m = re.match(r'progress: ([\d.]+) s, ([\d.]+) tps', line)
    if m:
        prog.append((float(m.group(1)) - start, float(m.group(2))))
dec = list(csv.DictReader(open(out + '/auto-decisions.csv')))
locks = 1
rows = []
for t, tps in prog:
    marks = [d for d in dec if float(d['t_s']) <= t and float(d['t_s']) > t - 1]
    for d in dec:
        if float(d['t_s']) <= t:
            locks = int(d['to_locks'])
    rows.append((t, tps, locks, '; '.join('%s->%s (%s, %s waits/1000, %s ms/s)' % (d['from_locks'], d['to_locks'], d['reason'], d['blocking_waits_per_1000'], d['blocked_ms_per_s']) for d in marks if d['from_locks'] != d['to_locks'])))
with open(out + '/auto-progress.csv', 'w') as f:
    f.write('t_s,tps,locks\n')
    for t, tps, locks, _ in rows:
        f.write('%.1f,%.1f,%d\n' % (t, tps, locks))
changes = [d for d in dec if d['from_locks'] != d['to_locks']]
plotted = False
try:
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(10, 4.2))
    ax.plot([r[0] for r in rows], [r[1] for r in rows], color='#1f77b4', label='tps (each second)')
    ax.set_xlabel('seconds since auto mode was turned on (at 1 lock)')
    ax.set_ylabel('tps')
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    top = max([r[1] for r in rows] + [1])
    for d in changes:
        t = float(d['t_s'])
        ax.axvline(t, color='#d62728', linestyle=':', linewidth=1)
        ax.text(t, top * 1.02, '%s->%s' % (d['from_locks'], d['to_locks']), rotation=90,
                fontsize=7, color='#d62728', va='bottom', ha='center')
    ax2 = ax.twinx()
    ax2.step([r[0] for r in rows], [r[2] for r in rows], where='post', color='#2ca02c', label='locks in effect')
    ax2.set_yscale('log', base=2)
    ticks = sorted({r[2] for r in rows})
    ax2.set_yticks(ticks)
    ax2.set_yticklabels([str(t) for t in ticks])
    ax2.minorticks_off()
    ax2.set_ylabel('WAL insertion locks')
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, loc='lower right', fontsize=8)
    fig.suptitle('auto mode from a cold start at 1 lock: %s clients, walscale.auto_interval = %s s; '
                 'dotted: each resize' % (clients, interval), fontsize=9, y=0.995)
    fig.tight_layout()
    fig.savefig(out + '/auto-coldstart.png', dpi=90)
    plotted = True
except Exception as e:  # noqa: BLE001
    print('auto-coldstart: no plot (%s)' % e, file=sys.stderr)
with open(out + '/auto.md', 'w') as f:
    f.write('# Auto mode from a cold start at 1 lock\n\n%s clients of walmsg (20 small records a transaction), walscale.auto_interval = %s s.\n\n' % (clients, interval))
    if plotted:
        f.write('![auto mode from a cold start](auto-coldstart.png)\n\n')
    f.write('| t (s) | tps | locks | resize |\n|---|---|---|---|\n')
    for t, tps, locks, mark in rows:
        f.write('| %.0f | %.0f | %d | %s |\n' % (t, tps, locks, mark))
EOF
echo "auto-coldstart: $out/auto.md"
