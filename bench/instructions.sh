# bench/instructions.sh: instruction counts of one backend under callgrind,
# which repeat exactly where timings on a shared 2-core machine swing by
# 10-20%.  Sourced by bench/run.sh; uses bench_as, PG_STOCK, PG_PATCHED,
# BENCH_WORK and RESULTS like bench/common.sh.
#
# Each configuration runs one single-user backend (postgres --single, which
# processes shared_preload_libraries, so walscale sizes the locks there too)
# under valgrind --tool=callgrind, on a fresh copy of one template cluster so
# that every configuration starts at the same WAL position.  The script it
# executes has three measured pairs, each a block of N operations and a
# block of 2N, separated by "SELECT pg_backend_pid()" markers;
# --dump-after=pg_backend_pid writes one profile per marker, so a block's
# profile holds exactly its own statements and the next marker.  The cost of
# one operation is (profile of the 2N block - profile of the N block) / N:
# start-up, warm-up and the markers cancel out.
#
#   record          SELECT count(pg_logical_emit_message(false, ...)) FROM
#                   generate_series(1, N): one small non-transactional WAL
#                   record each (about 60 bytes), no flush
#   commit          N lines "INSERT INTO cg_commit VALUES (1);": one
#                   single-row transaction each, synchronous_commit = on, so
#                   each commit flushes WAL through WaitXLogInsertionsToFinish
#                   (the method behind the 52.0k per commit)
#   commit_plpgsql  one DO block with N iterations of INSERT + COMMIT: the
#                   same commit with the parse/plan work of a statement left
#                   out, so the flush path is a larger share of it
#
# fsync = off keeps the runs short; the fdatasync system call is kernel time,
# which callgrind does not count either way.  wal_buffers = 64MB keeps the
# record blocks from writing WAL pages out (the commit blocks flush anyway).

CG_FUNCS="WALInsertLockAcquire WALInsertLockAcquireContended WALInsertLockRelease WaitXLogInsertionsToFinish LWLockFirstHeldExclusive LWLockConditionalAcquire LWLockAcquire LWLockRelease LWLockWaitForVar XLogInsertRecord XLogFlush"

cg_script() {
	local n=$1 m=$2 k=$3
	local i
	echo "SELECT count(pg_logical_emit_message(false, 'walscale', 'x')) FROM generate_series(1, 1000);"
	echo "SELECT pg_backend_pid();"
	echo "SELECT count(pg_logical_emit_message(false, 'walscale', 'x')) FROM generate_series(1, $n);"
	echo "SELECT pg_backend_pid();"
	echo "SELECT count(pg_logical_emit_message(false, 'walscale', 'x')) FROM generate_series(1, $((2 * n)));"
	echo "SELECT pg_backend_pid();"
	for i in $(seq 50); do echo "INSERT INTO cg_commit VALUES (1);"; done
	echo "SELECT pg_backend_pid();"
	for i in $(seq "$m"); do echo "INSERT INTO cg_commit VALUES (1);"; done
	echo "SELECT pg_backend_pid();"
	for i in $(seq $((2 * m))); do echo "INSERT INTO cg_commit VALUES (1);"; done
	echo "SELECT pg_backend_pid();"
	echo "DO \$\$BEGIN FOR i IN 1..100 LOOP INSERT INTO cg_commit VALUES (i); COMMIT; END LOOP; END\$\$;"
	echo "SELECT pg_backend_pid();"
	echo "DO \$\$BEGIN FOR i IN 1..$k LOOP INSERT INTO cg_commit VALUES (i); COMMIT; END LOOP; END\$\$;"
	echo "SELECT pg_backend_pid();"
	echo "DO \$\$BEGIN FOR i IN 1..$((2 * k)) LOOP INSERT INTO cg_commit VALUES (i); COMMIT; END LOOP; END\$\$;"
	echo "SELECT pg_backend_pid();"
}

cg_total() { sed -n 's/^totals: *//p' "$1"; }

# Inclusive and self instructions of the functions in CG_FUNCS in a profile:
# lines "function inclusive self".
cg_functions() {
	local f=$1 fn
	local inc self
	inc=$(callgrind_annotate --tree=none --inclusive=yes --threshold=100 "$f" 2>/dev/null)
	self=$(callgrind_annotate --tree=none --inclusive=no --threshold=100 "$f" 2>/dev/null)
	for fn in $CG_FUNCS; do
		printf '%s %s %s\n' "$fn" \
			"$(echo "$inc" | awk -v fn="$fn" '$0 !~ /=>/ && index($0, ":" fn " [") { gsub(",", "", $1); s += $1 } END { print s + 0 }')" \
			"$(echo "$self" | awk -v fn="$fn" '$0 !~ /=>/ && index($0, ":" fn " [") { gsub(",", "", $1); s += $1 } END { print s + 0 }')"
	done
}

# One configuration: label variant locks attempts preload, with N M K.
# Leaves result.csv, functions.csv and line (its progress line) in its
# directory.
cg_one() {
	local label=$1 variant=$2 locks=$3 attempts=$4 preload=$5 n=$6 m=$7 k=$8
	local run="$CG_DIR/$label" t0=$SECONDS
	local -a opts
	bench_as rm -rf "$run"
	bench_as mkdir -p "$run"
	bench_as cp -a "$CG_DIR/template" "$run/data"
	opts=(-c fsync=off -c synchronous_commit=on -c wal_buffers=64MB -c max_wal_size=8GB)
	[ "$preload" = yes ] && opts+=(-c shared_preload_libraries=walscale
		-c "walscale.insert_locks=$locks" -c "walscale.insert_lock_attempts=$attempts")
	if ! bench_as valgrind --tool=callgrind --dump-after=pg_backend_pid \
		--callgrind-out-file="$run/cg.out" \
		"$(pg_bin "$variant")/postgres" --single -D "$run/data" "${opts[@]}" postgres \
		< "$BENCH_WORK/cg-script.sql" > "$BENCH_WORK/cg-$label.log" 2>&1; then
		echo "bench: callgrind run $label failed:" >&2
		tail -n 20 "$BENCH_WORK/cg-$label.log" >&2
		return 1
	fi
	local t=() i
	for i in 1 2 3 4 5 6 7 8 9; do t[$i]=$(cg_total "$run/cg.out.$i"); done
	local rec com plp
	rec=$(awk -v a="${t[2]}" -v b="${t[3]}" -v n="$n" 'BEGIN { printf "%.1f", (b - a) / n }')
	com=$(awk -v a="${t[5]}" -v b="${t[6]}" -v n="$m" 'BEGIN { printf "%.1f", (b - a) / n }')
	plp=$(awk -v a="${t[8]}" -v b="${t[9]}" -v n="$k" 'BEGIN { printf "%.1f", (b - a) / n }')
	echo "$label,$variant,$locks,$attempts,$preload,$rec,$com,$plp,$n,$m,$k" > "$BENCH_WORK/cg-$label.result"

	# where they go: per-function differences of the same pairs (the
	# plpgsql commits run the same functions as the plain ones)
	local measure a b cnt
	: > "$BENCH_WORK/cg-$label.functions"
	for measure in "record 2 3 $n" "commit 5 6 $m"; do
		read -r measure a b cnt <<<"$measure"
		join <(cg_functions "$run/cg.out.$a" | sort) <(cg_functions "$run/cg.out.$b" | sort) |
			awk -v l="$label" -v m="$measure" -v n="$cnt" \
				'{ printf "%s,%s,%s,%.1f,%.1f\n", l, m, $1, ($4 - $2) / n, ($5 - $3) / n }' \
				>> "$BENCH_WORK/cg-$label.functions"
	done
	bench_as rm -rf "$run"
	printf '  callgrind %-18s %8s instr/WAL record %9s instr/commit %9s instr/commit (plpgsql)  [%ss]\n' \
		"$label" "$rec" "$com" "$plp" $((SECONDS - t0))
}

CG_CONFIGS=("stock stock 8 0 no" "patched-no-module walscale 8 0 no"
	"walscale-8 walscale 8 0 yes" "walscale-64 walscale 64 0 yes"
	"walscale-256 walscale 256 0 yes" "walscale-1024 walscale 1024 0 yes")

# measure_instructions N M K: writes instructions.csv and cg-functions.csv.
# The configurations run CG_JOBS at a time (default: the number of CPUs);
# instruction counts do not depend on what else runs.
# A template cluster in $1, made by the stock server's initdb, with the
# statement $2 run in it by a single-user backend: every configuration
# measured starts from a copy of it, at the same WAL position.
make_template_cluster() {
	bench_as "$PG_STOCK/bin/initdb" -D "$1" -A trust -U postgres --no-sync >/dev/null
	echo "$2" | bench_as "$PG_STOCK/bin/postgres" --single -D "$1" postgres >/dev/null 2>&1
}

# Run "FUNCTION CONFIG-WORDS... ARG..." for each configuration of the array
# named $2 (each a string of words), at most $1 at a time, in the
# background; fails if any run failed.  Each run is waited for by its pid,
# oldest first: "wait -n" can miss a run that ended before it was called
# and return 127, failing a sweep in which every run succeeded.
run_configs_parallel() {
	local jobs=$1 fn=$3 failed=0 cfg pid
	local -n rcp_configs=$2
	local -a pids=()
	shift 3
	for cfg in "${rcp_configs[@]}"; do
		if [ "${#pids[@]}" -ge "$jobs" ]; then
			wait "${pids[0]}" || failed=1
			pids=("${pids[@]:1}")
		fi
		# shellcheck disable=SC2086
		"$fn" $cfg "$@" &
		pids+=("$!")
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=1
	done
	[ "$failed" = 0 ]
}

measure_instructions() {
	local n=$1 m=$2 k=$3 cfg label jobs=${CG_JOBS:-$(nproc)}
	command -v valgrind >/dev/null || { echo "bench: valgrind is missing, no instruction counts" >&2; return 0; }
	CG_DIR="$BENCH_WORK/callgrind"
	bench_as mkdir -p "$CG_DIR"
	make_template_cluster "$CG_DIR/template" "CREATE TABLE cg_commit (v int);"
	cg_script "$n" "$m" "$k" > "$BENCH_WORK/cg-script.sql"
	chmod 644 "$BENCH_WORK/cg-script.sql"

	run_configs_parallel "$jobs" CG_CONFIGS cg_one "$n" "$m" "$k" || return 1

	echo "config,variant,insert_locks,attempts,preloaded,per_record,per_commit,per_commit_plpgsql,n_records,n_commits,n_commits_plpgsql" \
		> "$RESULTS/instructions.csv"
	echo "config,measure,function,inclusive_per_op,self_per_op" > "$RESULTS/cg-functions.csv"
	for cfg in "${CG_CONFIGS[@]}"; do
		label=${cfg%% *}
		cat "$BENCH_WORK/cg-$label.result" >> "$RESULTS/instructions.csv"
		cat "$BENCH_WORK/cg-$label.functions" >> "$RESULTS/cg-functions.csv"
	done
	bench_as rm -rf "$CG_DIR"
}
