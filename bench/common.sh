# bench/common.sh: the benchmark engine shared by bench/run.sh (make bench)
# and bench/device-sweep.sh.  Sourced, not run.
#
# The caller defines:
#   bench_as CMD...   run CMD as the unprivileged user that owns the clusters
#   PG_STOCK          prefix of the unpatched PostgreSQL 18 build
#   PG_PATCHED        prefix of the patched build with walscale installed
#   BENCH_WORK        scratch directory owned by that user (data, sockets)
#   RESULTS           directory the CSV files, settings and report go to
#   BENCH_SECONDS     length of one pgbench run
#   BENCH_CORES       number of CPUs (for pgbench -j)
#
# One data directory, made by the stock initdb, is shared by both builds:
# they are the same PostgreSQL 18.x, and the patch changes neither the
# catalog nor the WAL format, so stock and walscale run against the same
# files.  Every run first puts the server into the configuration it needs:
# a restart when the build, walscale.insert_locks, walscale.fastpath_groups
# or the workload's settings change, a reload when only
# walscale.insert_lock_attempts does (it is PGC_SIGHUP).

bench_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# ---------------------------------------------------------------------------
# Settings

# Yura Sokolov's "Increase NUM_XLOGINSERT_LOCKS" (pgsql-hackers, Jan 2025): the server settings of the insert/delete test,
# used for every workload unless the workload says otherwise.
# WAL_BUFFERS may shrink wal_buffers: the server zeroes all of it at every
# start, and on some virtual machines that alone takes 10 s per gigabyte.
settings_seed000() {
	cat <<CONF
max_connections = 1000
shared_buffers = 1024MB
fsync = off
synchronous_commit = off
wal_sync_method = fdatasync
full_page_writes = off
wal_buffers = ${WAL_BUFFERS:-1024MB}
checkpoint_timeout = 1d
# harness: keep checkpoints out of the runs (one is taken before each run)
max_wal_size = 8GB
CONF
}

# The flush path: the seed settings with every commit flushed to disk.
settings_synccommit() {
	settings_seed000 | sed -e 's/^fsync = off/fsync = on/' \
		-e 's/^synchronous_commit = off/synchronous_commit = on/'
}

# ---------------------------------------------------------------------------
# Workloads.  Each has: a title, the settings function, a database, the
# pgbench arguments, a setup (once, on a running server) and a preparation
# before every run.

wl_title() {
	case $1 in
		insdel) echo "Sokolov, Increase NUM_XLOGINSERT_LOCKS: insert then delete 1001 indexed rows per transaction" ;;
		tpcb) echo "pgbench tpcb-like (Sokolov's second test; Haas, Minor optimisation of XLogInsert)" ;;
		fp_fit) echo "Vondra, scalability bottlenecks with many partitions: fast path fits, pgbench -S, 4 partitions" ;;
		fp_overflow) echo "Vondra, fast path overflows: generic-plan join over 128 partitions" ;;
		walmsg) echo "WAL-insert micro: 100 pg_logical_emit_message records per transaction" ;;
		synccommit) echo "synchronous_commit on: single-row INSERT commits (flush path)" ;;
	esac
}

wl_settings() {
	case $1 in
		synccommit) echo synccommit ;;
		*) echo seed000 ;;
	esac
}

wl_db() {
	case $1 in
		insdel) echo insdel ;;
		tpcb) echo tpcb ;;
		fp_fit) echo fp4 ;;
		fp_overflow) echo fp128 ;;
		walmsg) echo walmsg ;;
		synccommit) echo sync ;;
	esac
}

# pgbench arguments after the client count and duration
wl_pgbench_args() {
	local w="$BENCH_WORK/workloads"
	case $1 in
		insdel) echo "-n -M prepared -f $w/insert-delete.sql" ;;
		tpcb) echo "-n -M prepared -b tpcb-like" ;;
		fp_fit) echo "-n -M prepared -b select-only" ;;
		fp_overflow) echo "-n -M prepared -s 1 -f $w/partition-join.sql" ;;
		walmsg) echo "-n -M prepared -f $w/wal-messages.sql" ;;
		synccommit) echo "-n -M prepared -f $w/sync-commit.sql" ;;
	esac
}

# What the report says about the workload's data.
wl_data() {
	case $1 in
		insdel) echo "table test1(id int8 not null) with index test1_ix_id; TRUNCATE + CHECKPOINT before each run" ;;
		tpcb) echo "pgbench -i -s ${TPCB_SCALE}; CHECKPOINT before each run" ;;
		fp_fit) echo "pgbench -i -s 1 --partitions=4; read-only" ;;
		fp_overflow) echo "pgbench -i -s 1 --partitions=128; ALTER DATABASE fp128 SET plan_cache_mode = force_generic_plan; read-only" ;;
		walmsg) echo "no table; CHECKPOINT before each run" ;;
		synccommit) echo "table sync_t(v int); TRUNCATE + CHECKPOINT before each run" ;;
	esac
}

wl_setup() {
	local db
	db=$(wl_db "$1")
	bench_psql postgres -c "CREATE DATABASE $db" >/dev/null
	case $1 in
		insdel)
			bench_psql "$db" -c "create table test1(id int8 not null)" \
				-c "create index test1_ix_id on test1(id)" >/dev/null ;;
		tpcb)
			bench_as "$PG_STOCK/bin/pgbench" -h "$BENCH_WORK" -p "$PORT" -U postgres \
				-i -q -s "$TPCB_SCALE" "$db" >/dev/null 2>&1 ;;
		fp_fit)
			bench_as "$PG_STOCK/bin/pgbench" -h "$BENCH_WORK" -p "$PORT" -U postgres \
				-i -q -s 1 --partitions=4 "$db" >/dev/null 2>&1 ;;
		fp_overflow)
			bench_as "$PG_STOCK/bin/pgbench" -h "$BENCH_WORK" -p "$PORT" -U postgres \
				-i -q -s 1 --partitions=128 "$db" >/dev/null 2>&1
			bench_psql "$db" -c "ALTER DATABASE $db SET plan_cache_mode = force_generic_plan" >/dev/null ;;
		walmsg) ;;
		synccommit)
			bench_psql "$db" -c "CREATE TABLE sync_t (v int)" >/dev/null ;;
	esac
}

wl_prep() {
	local db
	db=$(wl_db "$1")
	case $1 in
		insdel) bench_psql "$db" -c "TRUNCATE test1" -c "CHECKPOINT" >/dev/null ;;
		synccommit) bench_psql "$db" -c "TRUNCATE sync_t" -c "CHECKPOINT" >/dev/null ;;
		tpcb | walmsg) bench_psql "$db" -c "CHECKPOINT" >/dev/null ;;
		fp_fit | fp_overflow) ;;
	esac
}

# ---------------------------------------------------------------------------
# Clusters

bench_psql() {
	local db=$1
	shift
	bench_as "$PG_PATCHED/bin/psql" -h "$BENCH_WORK" -p "$PORT" -U postgres -X -q -A -t \
		-v ON_ERROR_STOP=1 -d "$db" "$@"
}

DATA=
CUR_SIG=
CUR_ATTEMPTS=
RESTARTS=0

bench_init_cluster() {
	DATA="$BENCH_WORK/data"
	bench_as "$PG_STOCK/bin/initdb" -D "$DATA" -A trust -U postgres --no-sync >/dev/null
	cat >> "$DATA/postgresql.conf" <<CONF

# walscale bench: the configuration of the current run
include 'bench.conf'
CONF
}

# bench.conf for: variant locks attempts fastpath_groups settings
write_bench_conf() {
	local variant=$1 locks=$2 attempts=$3 fp=$4 settings=$5
	{
		echo "# written by bench/common.sh for this run"
		echo "listen_addresses = ''"
		echo "port = $PORT"
		echo "unix_socket_directories = '$BENCH_WORK'"
		echo "log_min_messages = warning"
		echo "log_checkpoints = off"
		"settings_$settings"
		if [ "$variant" = walscale ]; then
			echo "shared_preload_libraries = 'walscale'"
			echo "walscale.insert_locks = $locks"
			echo "walscale.insert_lock_attempts = $attempts"
			echo "walscale.fastpath_groups = $fp"
			# auto mode: windows of 1 s, so that it adapts within a run
			[ "$locks" = -1 ] && echo "walscale.auto_interval = 1s"
		fi
	} > "$BENCH_WORK/bench.conf.new"
	bench_as cp "$BENCH_WORK/bench.conf.new" "$DATA/bench.conf"
}

pg_bin() { [ "$1" = stock ] && echo "$PG_STOCK/bin" || echo "$PG_PATCHED/bin"; }

server_running() { [ -n "$CUR_SIG" ]; }

server_stop() {
	[ -n "$CUR_SIG" ] || return 0
	bench_as "$PG_PATCHED/bin/pg_ctl" -D "$DATA" -m fast -w -t 600 stop >/dev/null
	CUR_SIG=
}

server_start() {
	local variant=$1 locks=$2 attempts=$3 fp=$4 settings=$5
	write_bench_conf "$@"
	if ! bench_as "$(pg_bin "$variant")/pg_ctl" -D "$DATA" -l "$BENCH_WORK/server.log" \
		-w -t 600 start >/dev/null; then
		echo "bench: the server did not start ($variant locks=$locks fp=$fp); log:" >&2
		tail -n 20 "$BENCH_WORK/server.log" >&2
		return 1
	fi
	CUR_SIG="$variant:$locks:$fp:$settings"
	CUR_ATTEMPTS=$attempts
	RESTARTS=$((RESTARTS + 1))
	if [ "$variant" = walscale ]; then
		local got
		got=$(bench_psql postgres -F ' ' -c \
			"SELECT current_setting('walscale.insert_locks'), current_setting('walscale.insert_lock_attempts')")
		if [ "$got" != "$locks $attempts" ]; then
			echo "bench: walscale_settings says '$got', expected '$locks $attempts'" >&2
			return 1
		fi
	fi
}

# Put the server into a configuration, restarting only when needed.
ensure_server() {
	local variant=$1 locks=$2 attempts=$3 fp=$4 settings=$5
	local sig="$variant:$locks:$fp:$settings"
	if [ "$sig" != "$CUR_SIG" ]; then
		server_stop
		server_start "$@"
	elif [ "$attempts" != "$CUR_ATTEMPTS" ]; then
		write_bench_conf "$@"
		bench_as "$PG_PATCHED/bin/pg_ctl" -D "$DATA" reload >/dev/null
		local i
		for i in $(seq 100); do
			[ "$(bench_psql postgres -c 'SHOW walscale.insert_lock_attempts')" = "$attempts" ] && break
			sleep 0.1
		done
		CUR_ATTEMPTS=$attempts
	fi
}

# Create the extension and every workload's data, once.
bench_setup_data() {
	ensure_server walscale 8 0 0 seed000
	bench_psql postgres -c "CREATE EXTENSION walscale" >/dev/null
	local wl
	for wl in "$@"; do
		wl_setup "$wl"
	done
	bench_psql postgres -c "CHECKPOINT" >/dev/null
}

# ---------------------------------------------------------------------------
# Runs

RUNS_HEADER="workload,variant,insert_locks,attempts,fastpath_groups,clients,rep,seconds,tps,xacts,acquisitions,first_try,failed_attempts,blocking_waits,blocked_ms,flush_waits,locks_used,fp_overflows,fp_groups,started,locks_at_end,cpu_busy,tps_each_second,top_waits"

STATS_SQL="SELECT coalesce(sum(acquisitions), 0), coalesce(sum(first_try), 0),
	coalesce(sum(failed_attempts), 0), coalesce(sum(blocking_waits), 0),
	round(coalesce(sum(blocked_ms), 0)::numeric, 3), coalesce(sum(flush_waits), 0),
	count(*) FILTER (WHERE acquisitions > 0),
	(SELECT overflows FROM walscale_fastpath), (SELECT groups_per_backend FROM walscale_fastpath)
	FROM walscale_stats"

# the four wait events sampled most often in the run (walscale_waits, reset
# with the rest), with their shares of active backend samples; "CPU" for a
# backend running
WAITS_SQL="SELECT string_agg(w, ';' ORDER BY samples DESC) FROM (
	SELECT coalesce(wait_event_type || ':' || wait_event, 'CPU') || '=' || round(share::numeric, 3) AS w, samples
	FROM walscale_waits ORDER BY samples DESC LIMIT 4) top"

# machine_cpu_ticks: the machine's CPU time and its idle part (idle and iowait), in
# ticks since boot, from /proc/stat's first line (user through steal; guest
# time is counted in user already)
machine_cpu_ticks() {
	awk '/^cpu / { print $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9, $5 + $6; exit }' /proc/stat
}

# run_point workload variant locks attempts fp clients rep -> one line of
# $RUNS_CSV (default $RESULTS/runs.csv).  Besides pgbench's and walscale's
# figures: cpu_busy, the share of the machine's CPU time not idle during
# the run (every process's, pgbench's too); tps_each_second, pgbench's
# progress reports (-P 1) joined by ';', whose spread from one second to the
# next is the noise a window of auto mode sees at a fixed count; and
# top_waits, what the backends waited on (WAITS_SQL), so that what binds
# besides the insertion locks is named.
run_point() {
	local wl=$1 variant=$2 locks=$3 attempts=$4 fp=$5 clients=$6 rep=$7
	local db out tps xacts stats started jobs locks_at_end='' cpu0 cpu1 cpu_busy each waits=
	db=$(wl_db "$wl")
	ensure_server "$variant" "$locks" "$attempts" "$fp" "$(wl_settings "$wl")" || return 1
	wl_prep "$wl"
	[ "$variant" = walscale ] && bench_psql postgres -c "SELECT walscale_reset()" >/dev/null
	jobs=$clients
	[ "$jobs" -gt "$BENCH_CORES" ] && jobs=$BENCH_CORES
	started=$(date -u +%FT%TZ)
	cpu0=$(machine_cpu_ticks)
	# shellcheck disable=SC2046
	out=$(bench_as "$PG_STOCK/bin/pgbench" -h "$BENCH_WORK" -p "$PORT" -U postgres \
		-c "$clients" -j "$jobs" -T "$BENCH_SECONDS" -P 1 $(wl_pgbench_args "$wl") "$db" 2>&1) || {
		echo "bench: pgbench failed:" >&2
		echo "$out" | tail -n 20 >&2
		return 1
	}
	cpu1=$(machine_cpu_ticks)
	cpu_busy=$(echo "$cpu0 $cpu1" | awk '{ t = $3 - $1; printf "%.3f", (t > 0 ? 1 - ($4 - $2) / t : 0) }')
	each=$(echo "$out" | sed -n 's/^progress: [0-9.]* s, \([0-9.]*\) tps.*/\1/p' | paste -sd ';' -)
	tps=$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -n 1)
	xacts=$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')
	if [ "$variant" = walscale ]; then
		stats=$(bench_psql postgres -F , -c "$STATS_SQL")
		# what auto mode ended on (a fixed setting: the setting)
		locks_at_end=$(bench_psql postgres -c "SELECT insert_locks FROM walscale_settings")
		waits=$(bench_psql postgres -c "$WAITS_SQL")
	else
		stats=",,,,,,,,"
	fi
	LAST_TPS=$tps
	LAST_STATS=$stats
	echo "$wl,$variant,$locks,$attempts,$fp,$clients,$rep,$BENCH_SECONDS,$tps,$xacts,$stats,$started,$locks_at_end,$cpu_busy,$each,$waits" \
		>> "${RUNS_CSV:-$RESULTS/runs.csv}"
}

# ---------------------------------------------------------------------------
# Plans: one line per run, "workload variant locks attempts fp clients rep".
# Configurations are "stock" or "L/A" (walscale insert_locks/attempts, 8
# fast-path groups derived) or "fp=N" (walscale 8/0 with fastpath_groups N)
# or "auto" (walscale.insert_locks = -1, windows of 1 s; "-1/0" in the CSV).
# Every configuration is measured once per round: A B C, then C B A (a
# linear drift of the machine then weighs the same on every configuration),
# then a fixed pseudo-random order and its reverse, and so on.

plan_workload() {
	local wl=$1 reps=$2 configs=$3 clients=$4
	local rep list cfg c
	for rep in $(seq "$reps"); do
		if [ "$rep" = 1 ]; then
			list=$configs
		elif [ $((rep % 2)) = 0 ]; then
			list=$(echo "$list" | tr ' ' '\n' | tac | tr '\n' ' ')
		else
			# a fixed pseudo-random order: a third pass in either order
			# would favour the configurations at one end under a drift
			list=$(echo "$configs" | tr ' ' '\n' |
				awk -v seed="$rep" 'BEGIN { srand(seed) } { print rand() "\t" $0 }' |
				sort -k1,1g | cut -f2 | tr '\n' ' ')
		fi
		for cfg in $list; do
			for c in $clients; do
				case $cfg in
					stock) echo "$wl stock 8 0 0 $c $rep" ;;
					fp=*) echo "$wl walscale 8 0 ${cfg#fp=} $c $rep" ;;
					auto) echo "$wl walscale -1 0 0 $c $rep" ;;
					*/*) echo "$wl walscale ${cfg%/*} ${cfg#*/} 0 $c $rep" ;;
				esac
			done
		done
	done
}

# Seconds a plan takes: runs, restarts (a new signature), reloads.
# Per-item costs come from runs on the 2-core development machine.
EST_RUN_OVERHEAD=${EST_RUN_OVERHEAD:-1}
EST_RESTART=${EST_RESTART:-3}
plan_seconds() {
	awk -v T="$BENCH_SECONDS" -v O="$EST_RUN_OVERHEAD" -v R="$EST_RESTART" '
		{ sig = $2 ":" $3 ":" $5 ":" ($1 == "synccommit" ? "s" : "x");
		  t += T + O; if (sig != last) t += R; last = sig }
		END { printf "%d\n", t }' "$1"
}

fmt_secs() {
	if [ "$1" -ge 3600 ]; then
		printf '%d:%02d:%02d' $(($1 / 3600)) $(($1 % 3600 / 60)) $(($1 % 60))
	else
		printf '%d:%02d' $(($1 / 60)) $(($1 % 60))
	fi
}

# Execute a plan file, with a progress line per run.
run_plan() {
	local plan=$1 n i=0 start now left line
	n=$(wc -l < "$plan")
	start=$(date +%s)
	while read -r wl variant locks attempts fp clients rep; do
		if [ -n "${BENCH_DEADLINE:-}" ] &&
			[ $(( $(date +%s) + BENCH_SECONDS + 3 )) -gt "$BENCH_DEADLINE" ]; then
			echo "bench: time is up, $((n - i)) of $n runs left out"
			break
		fi
		i=$((i + 1))
		run_point "$wl" "$variant" "$locks" "$attempts" "$fp" "$clients" "$rep" </dev/null || return 1
		now=$(date +%s)
		left=$(( (now - start) * (n - i) / i ))
		local cfg=stock extra=""
		if [ "$variant" = walscale ]; then
			cfg="walscale $locks/$attempts"
			[ "$fp" != 0 ] && cfg="walscale fastpath_groups=$fp"
			extra=$(echo "$LAST_STATS" | awk -F, '{ if ($1 > 0) printf "  blocking %.1f/1000 acq, failed %.1f/1000", 1000*$4/$1, 1000*$3/$1 }')
		fi
		printf '[%3d/%d %s, ~%s left] %-12s %-28s %4s clients  rep %s: %10.1f tps%s\n' \
			"$i" "$n" "$(fmt_secs $((now - start)))" "$(fmt_secs "$left")" "$wl" "$cfg" \
			"$clients" "$rep" "${LAST_TPS:-0}" "$extra"
	done < "$plan"
}

# ---------------------------------------------------------------------------
# What the report prints about the machine and the software.

write_meta() {
	local f="$RESULTS/meta.env"
	{
		echo "date=$(date -u +%F)"
		echo "started=${BENCH_STARTED:-$(date -u +%FT%TZ)}"
		echo "host=$(hostname 2>/dev/null || cat /proc/sys/kernel/hostname)"
		echo "cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
		echo "cores=$(nproc)"
		echo "memory=$(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
		echo "kernel=$(uname -sr)"
		echo "os=$( (. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME") || echo unknown)"
		echo "pg_stock=$("$PG_STOCK/bin/postgres" --version) ($PG_STOCK)"
		echo "pg_patched=$("$PG_PATCHED/bin/postgres" --version) ($PG_PATCHED)"
		echo "pg_configure=$("$PG_PATCHED/bin/pg_config" --configure | tr -d "'")"
		echo "pg_cflags=$("$PG_PATCHED/bin/pg_config" --cflags)"
		echo "load_start=${BENCH_LOAD_START:-?}"
		echo "load_end=$(cut -d' ' -f1-3 /proc/loadavg)"
		echo "seconds=$BENCH_SECONDS"
		echo "cores_for_pgbench_j=$BENCH_CORES"
		for kv in "$@"; do echo "$kv"; done
	} > "$f"
}

write_settings_files() {
	local s
	for s in $(for wl in "$@"; do wl_settings "$wl"; done | sort -u); do
		"settings_$s" > "$RESULTS/settings-$s.conf"
	done
	{
		printf 'workload\ttitle\tsettings\tdatabase\tpgbench\tdata\n'
		local wl
		for wl in "$@"; do
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$wl" "$(wl_title "$wl")" "$(wl_settings "$wl")" \
				"$(wl_db "$wl")" \
				"pgbench -c CLIENTS -j min(CLIENTS,$BENCH_CORES) -T $BENCH_SECONDS $(wl_pgbench_args "$wl" | sed "s|$BENCH_WORK/workloads/|bench/workloads/|") $(wl_db "$wl")" \
				"$(wl_data "$wl")"
		done
	} > "$RESULTS/workloads.tsv"
}
