#!/usr/bin/env bash
# The WAL flush of a commit while other committers keep their own insertion
# locks busy: instructions per commit and per flush (WaitXLogInsertionsToFinish),
# and the insertion locks the flush read, of ONE traced backend of a
# multi-user server, with 1, 16 and 64 committers spread over the lock
# groups of patch 0006, steady and in the first commits after a CHECKPOINT,
# beside stock 18.6 (make bench-flush, issue 50 item 3).
#
#   bench/flush-contended.sh
#
# How.  Each configuration (stock, walscale at each of BENCH_FC_LOCKS) is a
# fresh copy of one template cluster whose postmaster runs under
# valgrind --tool=callgrind --instr-atstart=no: every process it forks runs
# on valgrind's core without instrumentation (a few times slower than
# native, all alike), and only the traced backend has its instrumentation
# switched on (it calls CALLGRIND_START_INSTRUMENTATION, bench/fc_callgrind), so only it is
# counted; --dump-after=pg_backend_pid writes a profile at each of its
# markers, which cut its statements into blocks.
#
# Placement.  A backend's insertion lock is its proc number modulo the
# active locks (insert_lock_attempts = 0: it never hops), and proc numbers
# are handed out first-in first-out, so short connections ("fillers") made
# before a committer connects move it to the proc number wanted.  The
# traced backend has proc 0 (lock 0, group 0); background committer k
# (k = 1..63) proc k * max(1, L / 64): at 1024 locks committer k uses lock
# 16k, group 2k, so that 64 committers use 64 of the 128 groups and 16
# (k = 4, 8, ..., 60) use 16; at 64 and 8 locks, and in stock, locks k mod L.
# The report gives the groups actually used, from the proc numbers read back.
#
# Load.  Each background committer is a session running a procedure that,
# while its row of fc_ctl says go, inserts one row and commits (a flush at
# synchronous_commit on, fsync off), and otherwise sleeps.  With N
# committers, N - 1 of them go; the traced backend is the N-th.
#
# Measures, per N: a steady block of BENCH_FC_STEADY single-row INSERT
# statements after the committers have run 3 s; then BENCH_FC_CKPT times:
# CHECKPOINT, then 3 single-row INSERTs each in a block of its own (the
# commits in the two epochs after the checkpoint, and one after).  Each
# block's cost less that of an empty block (marker after marker) is the
# cost of its statements: instructions per commit, and, from the calls
# recorded in the profile, per flush the inclusive instructions of
# WaitXLogInsertionsToFinish, the calls of LWLockFirstHeldExclusive (one per
# group of 8 locks visited that it finds free, one more per held lock
# found) and of LWLockWaitForVarSlept (one per held lock found; stock
# calls LWLockWaitForVar for each of its 8 locks).  Locks read per flush:
# 8 per group visited in the patched server, (calls of
# LWLockFirstHeldExclusive - calls of LWLockWaitForVarSlept) * 8; in stock
# its calls of LWLockWaitForVar.  Each lock is a padded slot of its own
# 128 bytes, so the locks read are the lock-array lines the flush reads;
# that is derived from the code, not traced (see the report).
#
# Writes BENCH_RESULTS (default bench/results/<date>-<host>-flush-contended):
# flush-contended.csv (one line per configuration, N and block),
# placement.csv (proc numbers and locks of the committers), flush-contended.md.
#
# Environment: BENCH_FC_LOCKS (8 64 1024), BENCH_FC_COMMITTERS (1 16 64),
# BENCH_FC_STEADY (30), BENCH_FC_CKPT (3), BENCH_FC_SKIP_STOCK=1.
set -euo pipefail
. "$(dirname "$0")/../scripts/lib.sh"

host=$(hostname -s 2>/dev/null || hostname)
RESULTS=${BENCH_RESULTS:-$repo/bench/results/$(date -u +%F)-$host-flush-contended}
FC_LOCKS=${BENCH_FC_LOCKS:-8 64 1024}
FC_COMMITTERS=${BENCH_FC_COMMITTERS:-1 16 64}
FC_STEADY=${BENCH_FC_STEADY:-30}
export BENCH_FC_STEADY=$FC_STEADY
FC_CKPT=${BENCH_FC_CKPT:-3}
t_start=$(date +%s)

bench_as() { as_run_user "$@"; }
. "$repo/bench/common.sh"
. "$repo/bench/instructions.sh"

command -v valgrind >/dev/null || { echo "flush-contended: valgrind is needed" >&2; exit 2; }
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)

ensure_servers
install_extension
# the helper that lets the traced backend switch on its own instrumentation
fc_helper=$(scratch_dir fc-callgrind-build)
cp "$repo"/bench/fc_callgrind/* "$fc_helper/"
for prefix in "$PG_STOCK" "$PG_PATCHED"; do
	make -s -C "$fc_helper" clean >/dev/null
	make -s -C "$fc_helper" PG_CONFIG="$prefix/bin/pg_config" >/dev/null
	cp --remove-destination "$fc_helper/fc_callgrind.so" "$("$prefix/bin/pg_config" --pkglibdir)/"
done
ensure_run_user
BENCH_WORK=$(scratch_dir bench-flush-contended)
[ -n "${BENCH_RESULTS:-}" ] || rm -rf "$RESULTS"
mkdir -p "$RESULTS"
max_n=0
for n in $FC_COMMITTERS; do [ "$n" -le "$max_n" ] || max_n=$n; done

fc_template() {
	bench_as "$PG_STOCK/bin/initdb" -D "$BENCH_WORK/template" -A trust -U postgres --no-sync >/dev/null
	bench_as "$PG_STOCK/bin/postgres" --single -D "$BENCH_WORK/template" postgres >/dev/null 2>&1 <<'SQL'
CREATE TABLE fc_t (v int);
CREATE TABLE fc_ctl (k int PRIMARY KEY, go bool NOT NULL DEFAULT false);
INSERT INTO fc_ctl SELECT g FROM generate_series(1, 1000) g;
CREATE PROCEDURE fc_loop(k int) LANGUAGE plpgsql AS $$ DECLARE g bool; BEGIN LOOP SELECT c.go INTO g FROM fc_ctl c WHERE c.k = fc_loop.k; IF g THEN INSERT INTO fc_t VALUES (k); ELSE PERFORM pg_sleep(0.2); END IF; COMMIT; END LOOP; END $$;
SQL
}

# fc_wait_connected APPNAME: until the server's log has that session's
# connection authorized
fc_wait_connected() {
	local i
	for i in $(seq 1200); do
		grep -q "connection authorized: .*application_name=$1\$" "$RUN/server.log" && return 0
		sleep 0.1
	done
	echo "flush-contended: $1 did not connect" >&2
	return 1
}
fc_sql() { bench_as "$BIN/psql" -X -q -At -h "$RUN" -p "$PORT" -U postgres -d postgres "$@"; }

fc_stop() {
	local p
	for p in "${BG_PIDS[@]}" ${TR_PID:-}; do kill "$p" 2>/dev/null || true; done
	[ -z "${PM_PID:-}" ] || {
		bench_as "$BIN/pg_ctl" -D "$RUN/data" -m fast -w -t 120 stop >/dev/null 2>&1 ||
			bench_as "$BIN/pg_ctl" -D "$RUN/data" -m immediate stop >/dev/null 2>&1 || true
		wait "$PM_PID" 2>/dev/null || true
	}
	PM_PID=
}

# fc_config LABEL VARIANT LOCKS
fc_config() {
	local label=$1 variant=$2 locks=$3 t0=$SECONDS i k target next pid stride n r
	local -a opts
	BIN=$(pg_bin "$variant")
	RUN=$BENCH_WORK/$label
	bench_as mkdir -p "$RUN"
	bench_as cp -a "$BENCH_WORK/template" "$RUN/data"
	PORT=$(free_port 56400)
	opts=(-c "port=$PORT" -c "unix_socket_directories=$RUN" -c "listen_addresses="
		-c "max_connections=$((locks > 64 ? locks + 64 : 200))" -c shared_buffers=32MB -c wal_buffers=4MB
		-c fsync=off -c synchronous_commit=on -c max_wal_size=8GB -c checkpoint_timeout=1d
		-c autovacuum=off -c max_worker_processes=4 -c max_parallel_workers_per_gather=0
		-c log_connections=on)
	[ "$variant" = stock ] || opts+=(-c shared_preload_libraries=walscale
		-c "walscale.insert_locks=$locks" -c walscale.insert_lock_attempts=0)
	bench_as valgrind --tool=callgrind --instr-atstart=no --dump-after=pg_backend_pid \
		--callgrind-out-file="$RUN/cg.%p" "$BIN/postgres" -D "$RUN/data" "${opts[@]}" \
		>"$RUN/server.log" 2>&1 &
	PM_PID=$!
	BG_PIDS=() TR_PID=
	for i in $(seq 600); do
		grep -q "ready to accept connections" "$RUN/server.log" 2>/dev/null && break
		sleep 0.2
	done
	grep -q "ready to accept connections" "$RUN/server.log" ||
		{ echo "flush-contended: $label did not start" >&2; tail "$RUN/server.log" >&2; return 1; }
	# Proc numbers go to connections in the order they connect, first in
	# first out: no other connection may come in between until every
	# committer is placed, so the waits below read the server's log
	# (log_connections), not the server.  The traced session is the first.
	bench_as mkfifo "$RUN/tr.sql"
	bench_as env PGAPPNAME=fc_traced "$BIN/psql" -X -q -At -h "$RUN" -p "$PORT" -U postgres -d postgres \
		-v ON_ERROR_STOP=1 -f "$RUN/tr.sql" >"$RUN/tr.out" 2>&1 &
	TR_PID=$!
	exec {TRW}>"$RUN/tr.sql"
	fc_wait_connected fc_traced
	next=1
	stride=1
	[ "$variant" = stock ] || [ "$locks" -le 64 ] || stride=$((locks / 64))
	for k in $(seq $((max_n - 1))); do
		target=$((k * stride))
		if [ "$next" -lt "$target" ]; then
			seq $((target - next)) | xargs -P 4 -I{} runuser -u "$run_user" -- env PGAPPNAME=fc_filler \
				"$BIN/psql" -X -q -At -h "$RUN" -p "$PORT" -U postgres -d postgres -c "SELECT 1" >/dev/null
			next=$target
		fi
		bench_as env PGAPPNAME="fc_bg_$k" "$BIN/psql" -X -q -h "$RUN" -p "$PORT" -U postgres -d postgres \
			-c "CALL fc_loop($k)" >/dev/null 2>&1 {TRW}>&- &
		BG_PIDS+=($!)
		fc_wait_connected "fc_bg_$k"
		next=$((next + 1))
	done
	fc_sql -F, -c "SELECT '$label', '$variant', $locks, CASE WHEN a.application_name = 'fc_traced' THEN 'traced' ELSE 'bg' END,
		coalesce(nullif(substr(a.application_name, 7), ''), '0'), id, id % $([ "$variant" = stock ] && echo 8 || echo "$locks"), a.pid
		FROM pg_stat_get_backend_idset() id JOIN pg_stat_activity a ON a.pid = pg_stat_get_backend_pid(id)
		WHERE a.application_name = 'fc_traced' OR a.application_name LIKE 'fc_bg_%' ORDER BY id" |
		sed 's/,traced,[^,]*,/,traced,0,/' >"$RUN/placement"
	cut -d, -f1-7 "$RUN/placement" >>"$RESULTS/placement.csv"
	TRACED=$(awk -F, '$4 == "traced" { print $8 }' "$RUN/placement")
	printf '  %s: server and %d committers placed [%ss]\n' "$label" "$max_n" $((SECONDS - t0))
	# only the traced backend is instrumented from here
	echo "CREATE FUNCTION fc_callgrind_on() RETURNS void AS 'fc_callgrind' LANGUAGE C; SELECT fc_callgrind_on();" >&"$TRW"
	for n in $FC_COMMITTERS; do
		fc_sql -c "UPDATE fc_ctl SET go = (k % $(( (max_n - 1) / (n > 1 ? n - 1 : 1) )) = 0 AND k < $max_n AND $n > 1)" >/dev/null
		fc_sql -c "SELECT count(*) FROM fc_ctl WHERE go" >"$RUN/go-$n"
		sleep 3
		{
			echo "SELECT 'BLOCK $n calib', pg_backend_pid();"
			echo "SELECT 'BLOCK $n calib2', pg_backend_pid();"
			for i in $(seq "$FC_STEADY"); do echo "INSERT INTO fc_t VALUES ($i);"; done
			echo "SELECT 'BLOCK $n steady', pg_backend_pid();"
			for r in $(seq "$FC_CKPT"); do
				echo "CHECKPOINT;"
				echo "SELECT 'BLOCK $n ckpt$r', pg_backend_pid();"
				for i in 1 2 3; do
					echo "INSERT INTO fc_t VALUES ($i);"
					echo "SELECT 'BLOCK $n after$i', pg_backend_pid();"
				done
			done
			echo "SELECT 'DONE $n';"
		} >&"$TRW"
		for i in $(seq 3000); do grep -q "DONE $n" "$RUN/tr.out" && break; sleep 0.2; done
		grep -q "DONE $n" "$RUN/tr.out" || { echo "flush-contended: $label N=$n did not finish" >&2; return 1; }
		printf '  %s: N=%s (%s background committers going) [%ss]\n' "$label" "$n" "$(cat "$RUN/go-$n")" $((SECONDS - t0))
	done
	exec {TRW}>&-
	fc_stop
	TR_PID=
	# the traced backend's profiles, in marker order; the first is the
	# dump at "-i on" .. first marker (set-up), ignored
	"$PY" "$repo/bench/flush_contended_report.py" blocks "$label" "$variant" "$locks" "$RUN/tr.out" \
		"$RESULTS/placement.csv" $(ls -v "$RUN/cg.$TRACED".*) >>"$RESULTS/flush-contended.csv"
	bench_as rm -rf "$RUN"
	printf '  %s done [%ss]\n' "$label" $((SECONDS - t0))
}

fc_template
echo "config,variant,insert_locks,role,k,proc_number,lock" >"$RESULTS/placement.csv"
"$PY" "$repo/bench/flush_contended_report.py" header >"$RESULTS/flush-contended.csv"
trap fc_stop EXIT
configs=()
for l in $FC_LOCKS; do configs+=("walscale-$l walscale $l"); done
[ "${BENCH_FC_SKIP_STOCK:-0}" = 1 ] || configs+=("stock stock 8")
echo "== the flush under contention: one traced backend (callgrind) among 1..$max_n committers"
for cfg in "${configs[@]}"; do
	# shellcheck disable=SC2086
	fc_config $cfg
done
trap - EXIT

commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$repo" status --porcelain -- patches 'walscale*.c' 'walscale*.h' bench/flush-contended.sh bench/flush_contended_report.py 2>/dev/null | head -c1)" ] &&
	commit="$commit (with changes not committed)"
{
	echo "$(date -u +%FT%TZ), commit $commit, core patches $(cat "$repo"/patches/pg18/*.patch | sha256sum | cut -c1-12);"
	echo "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $(nproc) cores, load average at the end $(cut -d' ' -f1-3 /proc/loadavg);"
	echo "$("$PG_STOCK/bin/postgres" --version), stock and patched from the same source; $(valgrind --version)."
	echo "Locks $FC_LOCKS (and stock), committers $FC_COMMITTERS, $FC_STEADY steady commits and $FC_CKPT checkpoints per point;"
	echo "fsync off, synchronous_commit on, shared_buffers 32MB, wal_buffers 4MB, autovacuum off, walscale.insert_lock_attempts 0."
	echo "Made by \`${BENCH_FC_COMMAND:-make bench-flush}\` in $(fmt_secs $(($(date +%s) - t_start)))."
} >"$RESULTS/flush-contended-meta.txt"
"$PY" "$repo/bench/flush_contended_report.py" report "$RESULTS" >"$RESULTS/flush-contended.md"
cat "$RESULTS/flush-contended.md"
bench_as rm -rf "$BENCH_WORK" 2>/dev/null || rm -rf "$BENCH_WORK"
