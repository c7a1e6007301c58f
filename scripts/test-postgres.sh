#!/usr/bin/env bash
# PostgreSQL's own test suites, from the source tree the patched server was
# built from, against that server with walscale preloaded at extreme settings;
# then walscale's robustness tests (crash, standby, all-locks loop, hostile
# input: t/1NN_*.pl) and, in full mode, memory-error runs under
# AddressSanitizer/UBSan and under valgrind; and all of that which can run
# without injection points on the patched server built with EXEC_BACKEND.
#
#   scripts/test-postgres.sh [ci|full|memcheck|valgrind|robustness|execbackend]    (make test-postgres SUITES_MODE=...)
#
#   ci          what fits CI's budget (11 minutes measured on 2 idle cores,
#               twice that on a busy machine, then 12 to 19 for
#               execbackend, plus 4 to 7 to build it once), run by make
#               test before walscale's own suites, which include t/1NN_*.pl
#               with their short settings (about 4 minutes more):
#                 src/test/regress (parallel schedule, then pg_amcheck of
#                 the regression database) and src/test/isolation at
#                 1/3/1, 1024/0/1024, 1/0/1024 and 1024/3/1 (every pair of
#                 values of any two settings), and all of src/test/recovery
#                 at 1024/3/1; and execbackend (below).
#   full        (default) everything: regress and isolation at all eight
#               combinations of insert_locks {1,1024} x attempts {0,3} x
#               fastpath_groups {1,1024}; all of src/test/recovery at 1/3/1,
#               1024/0/1024 and 1024/3/1; t/1NN_*.pl with long settings
#               (25+25 crash cycles, 60-90 s of load, 6 resize-storm
#               crashes after 30 s each); memcheck; valgrind; and
#               execbackend.  61 minutes on 2 idle cores (measured: 59 without
#               valgrind, 2 for it), then execbackend's 12 to 19.
#   memcheck    build (once, cached) the patched server with --enable-cassert
#               and -fsanitize=address,undefined into its own directory under
#               the cache, walscale with the same flags, and run
#               src/test/regress and src/test/isolation on it at 1024/3/1024
#               and 1/3/1, and walscale's pg_regress suite at walscale.conf's
#               settings; any ASan or UBSan report fails it.
#   valgrind    scripts/test-valgrind.sh: the patched server built with
#               USE_VALGRIND, every server process under valgrind's
#               memcheck, walscale's pg_regress suite and a WAL load with
#               all-lock rounds at walscale.conf's settings, 1024/3/1024 and
#               1/3/1; any valgrind error fails it.
#   robustness  only t/1NN_*.pl, with the long settings of full.
#   execbackend build (once, cached; 4 to 7 minutes) the patched server with
#               CPPFLAGS=-DEXEC_BACKEND (.pg/walscale-execbackend), as on
#               Windows: every child of the postmaster is exec'd, loads
#               shared_preload_libraries and attaches to shared memory
#               again.  On it: src/test/regress without walscale; regress
#               and isolation with walscale at 1024/3/1024, as at the other
#               configurations (resize loop, counters, restart); walscale's
#               pg_regress suite, and its TAP files with their short
#               settings and WALSCALE_EXEC_BACKEND=required (those that need
#               injection points skip themselves: the flavor has none).
#
# src/test/recovery runs on the test flavor of the patched server
# (assertions and injection points, .pg/walscale-injection), so that its
# tests of injection points (035, 041, 044, 046, 047) run too.  Every
# node of src/test/recovery preloads walscale, also in the tests that set
# shared_preload_libraries themselves (scripts/perl/WalscalePreload.pm), and
# the run fails unless each node's log shows walscale's line at every start.
#
# Every failure reaches both the summary (a FAIL line) and the exit status
# (each suite runs in a subshell whose own status counts); a command that
# fails unexpectedly ends its suite, recorded as aborted, not the run.
#
# A configuration is written LOCKS/ATTEMPTS/GROUPS for walscale.insert_locks,
# walscale.insert_lock_attempts and walscale.fastpath_groups.
#
# Environment (each overrides what the mode chooses):
#   WALSCALE_SUITES             which of: regress isolation recovery robustness memcheck valgrind execbackend
#   WALSCALE_EXECBACKEND_CONFIGS  configurations for regress and isolation with
#                               walscale on the EXEC_BACKEND build (1024/3/1024)
#   WALSCALE_EXECBACKEND_TESTS  walscale's TAP files to run there (ci: six
#                               that exercise what EXEC_BACKEND changes;
#                               otherwise all of t/*.pl)
#   WALSCALE_SUITE_CONFIGS      configurations for regress and isolation
#   WALSCALE_RECOVERY_CONFIGS   configurations for src/test/recovery
#   WALSCALE_RECOVERY_TESTS     test files of src/test/recovery, "all", or "quick" (19 of them)
#   PROVE_JOBS                  parallel prove jobs for src/test/recovery (1)
#   WALSCALE_SIDE_RESIZE        1 (default): while regress and isolation run, a
#                               side loop resizes walscale.insert_locks (below); 0: not
#   WALSCALE_SIDE_RESIZE_VALUES the counts it cycles through ("1 3 8 64 1024")
#   WALSCALE_SIDE_RESIZE_INTERVAL  seconds between two of its reloads (0.2)
#   WALSCALE_SIDE_RESIZE_MIN    resizes it must have made at each configuration (50)
#
# While src/test/regress and src/test/isolation run at a configuration,
# walscale.insert_locks is set by ALTER SYSTEM and a reload every 0.2 s, in
# one psql session beside the suites, cycling through 1, 3, 8, 64 and 1024:
# the suites must pass while the number of insertion locks changes under
# them.  Then the configuration's own count is set back, and the check
# "resizes during suites" fails unless walscale_settings.resizes and the
# server log's "resized from" lines show WALSCALE_SIDE_RESIZE_MIN resizes,
# the loop's psql exited 0 with nothing on stderr, and the count settled
# back.
# shellcheck disable=SC2317 # functions run through run_suite and the EXIT trap
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mode=${1:-full}
case "$mode" in
	ci | full | memcheck | valgrind | robustness | execbackend) ;;
	*) echo "usage: $0 [ci|full|memcheck|valgrind|robustness|execbackend]" >&2; exit 2 ;;
esac

all_configs="1/0/1 1/0/1024 1/3/1 1/3/1024 1024/0/1 1024/0/1024 1024/3/1 1024/3/1024"
# WALSCALE_RECOVERY_TESTS=quick: the recovery tests that exercise WAL
# insertion, flushing, all-locks acquisition (checkpoints, backups, WAL
# switches, end of recovery) and crash recovery, in about 3 minutes.
quick_recovery_tests="001_stream_rep.pl 002_archiving.pl 004_timeline_switch.pl
	009_twophase.pl 013_crash_restart.pl 016_min_consistency.pl 018_wal_optimize.pl
	019_replslot_limit.pl 024_archive_recovery.pl 026_overwrite_contrecord.pl
	027_stream_regress.pl 028_pitr_timelines.pl 033_replay_tsp_drops.pl
	034_create_database.pl 039_end_of_wal.pl 042_low_level_backup.pl
	043_no_contrecord_switch.pl 045_archive_restartpoint.pl"
case "$mode" in
	ci)
		suites=${WALSCALE_SUITES:-regress isolation recovery execbackend}
		# every pair of values of any two settings occurs in one of these
		suite_configs=${WALSCALE_SUITE_CONFIGS:-1/3/1 1024/0/1024 1/0/1024 1024/3/1}
		recovery_configs=${WALSCALE_RECOVERY_CONFIGS:-1024/3/1}
		recovery_tests=${WALSCALE_RECOVERY_TESTS:-all}
		# CI's time allows the TAP files that exercise what EXEC_BACKEND
		# changes: the core's interface, start-up, fast-path sizing and
		# the mixed servers; make test-postgres SUITES_MODE=execbackend
		# runs them all
		execbackend_tests=${WALSCALE_EXECBACKEND_TESTS:-t/001_insert_locks.pl t/003_bad_values.pl t/005_fastpath.pl t/014_core_interface_misuse.pl t/015_mixed_servers.pl t/022_exec_backend.pl}
		expected="about 11 minutes on 2 idle cores, twice that on a busy machine, then a few for the EXEC_BACKEND build's suites (plus 4 to 7 to build it, once)"
		;;
	full)
		suites=${WALSCALE_SUITES:-regress isolation recovery robustness memcheck valgrind execbackend}
		suite_configs=${WALSCALE_SUITE_CONFIGS:-$all_configs}
		recovery_configs=${WALSCALE_RECOVERY_CONFIGS:-1/3/1 1024/0/1024 1024/3/1}
		recovery_tests=${WALSCALE_RECOVERY_TESTS:-all}
		expected="about an hour on 2 idle cores (plus about 15 minutes for the sanitizer and valgrind builds, once)"
		;;
	memcheck)
		suites=memcheck
		suite_configs= recovery_configs= recovery_tests=
		expected="about 20 minutes on 2 cores (plus about 10 minutes for the sanitizer build, once)"
		;;
	valgrind)
		suites=valgrind
		suite_configs= recovery_configs= recovery_tests=
		expected="about 2 minutes on 2 cores (plus 5 minutes for the valgrind build, once)"
		;;
	robustness)
		suites=robustness
		suite_configs= recovery_configs= recovery_tests=
		expected="about 15 minutes on 2 cores"
		;;
	execbackend)
		suites=execbackend
		suite_configs= recovery_configs= recovery_tests=
		expected="12 to 19 minutes on 2 cores (plus 4 to 7 to build the server, once)"
		;;
esac
execbackend_configs=${WALSCALE_EXECBACKEND_CONFIGS:-1024/3/1024}
execbackend_tests=${execbackend_tests:-${WALSCALE_EXECBACKEND_TESTS:-all}}
[ "$recovery_tests" = quick ] && recovery_tests=$quick_recovery_tests
side_resize=${WALSCALE_SIDE_RESIZE:-1}
side_resize_values=${WALSCALE_SIDE_RESIZE_VALUES:-1 3 8 64 1024}
side_resize_interval=${WALSCALE_SIDE_RESIZE_INTERVAL:-0.2}
side_resize_min=${WALSCALE_SIDE_RESIZE_MIN:-50}
has_suite() { case " $suites " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

t_start=$(date +%s)
elapsed() { echo $(($(date +%s) - $1)); }
say() { echo "test-postgres: [$(date +%H:%M:%S), $(elapsed "$t_start")s] $*"; }

# Each suite runs in a subshell (run_suite), so its outcomes go to a file:
# one line per check, its status, a tab, the summary's line.
results_file=$(mktemp)
# a suite's exit status, the other path by which its failure reaches ours
exit_status=0
finished=0
suite_failed=0

# Record one suite's outcome: name, configuration, status, counts, seconds.
record() {
	printf '%s\t%-26s %-12s %-5s %-38s %5ss\n' "$3" "$1${suite_tag:+ ($suite_tag)}" "$2" "$3" "$4" "$5" >>"$results_file"
	[ "$3" = ok ] || suite_failed=1
}

# Run one suite function in a subshell under errexit: a command that fails
# unexpectedly ends that suite alone, which is recorded as aborted, and the
# other suites still run.  The subshell's exit status says whether the suite
# recorded a failure or aborted; it reaches our exit status by itself, and
# the summary by the records.  $1: name, $2: configuration, then the
# function and its arguments.
run_suite() {
	local suite_name=$1 suite_cfg=$2 st marker
	shift 2
	marker=$(mktemp)
	set +e
	(
		set -eE
		trap 'echo "test-postgres: $suite_name at $suite_cfg: \"$BASH_COMMAND\" failed with exit $? (line $LINENO): suite aborted" >&2' ERR
		suite_failed=0
		"$@"
		echo finished >"$marker"
		exit "$suite_failed"
	)
	st=$?
	set -e
	if [ "$st" != 0 ]; then
		exit_status=1
		[ -s "$marker" ] ||
			record "$suite_name" "$suite_cfg" FAIL "aborted (exit $st), see output above" "$(elapsed "$t_start")"
	fi
	rm -f "$marker"
	return 0
}

# The summary, and our verdict as the exit status: every check passed and
# every suite exited 0.
summary() {
	local total failures
	total=$(wc -l <"$results_file")
	failures=$(awk -F '\t' '$1 != "ok"' "$results_file" | wc -l)
	echo
	echo "test-postgres: summary ($mode mode, $(elapsed "$t_start")s; configuration = insert_locks/attempts/fastpath_groups)"
	sed 's/^[^\t]*\t/  /' "$results_file"
	if [ "$mode" = ci ]; then
		echo "test-postgres: not in CI (make test-postgres SUITES_MODE=full): regress and isolation at the other"
		echo "  four combinations, src/test/recovery at two more, the long robustness runs, ASan/UBSan and valgrind"
	fi
	if [ "$failures" = 0 ] && [ "$exit_status" = 0 ]; then
		echo "test-postgres: all $total checks passed"
		return 0
	elif [ "$failures" = 0 ]; then
		echo "test-postgres: a suite exited with a failure that it did not record (outputs in $cache/run/)"
	else
		echo "test-postgres: $failures of $total checks FAILED (outputs in $cache/run/)"
	fi
	return 1
}

# On every exit, the summary: after an unexpected failure outside the
# suites too, with that failure recorded.
finish() {
	local st=$?
	trap - EXIT
	set +e
	if [ "$finished" != 1 ]; then
		exit_status=1
		record "test-postgres" "$mode" FAIL "aborted (exit $st)" "$(elapsed "$t_start")"
	fi
	summary
	st=$?
	rm -f "$results_file"
	exit "$st"
}
trap finish EXIT

# scripts/test.sh has built the servers and exported where they are
if [ -z "${PG_PATCHED:-}" ] || [ ! -f "$PG_PATCHED/.complete" ]; then
	ensure_servers
fi
install_extension
ensure_run_user
bin=$PG_PATCHED/bin
build=$PG_PATCHED/build
pgxs_dir=$(dirname "$(dirname "$(dirname "$("$bin/pg_config" --pgxs)")")")
[ -d "$build/src/test/regress" ] || {
	echo "test-postgres: no built source tree at $build" >&2
	exit 1
}

# The lines of a suite's output that tell its result, indented; nothing,
# and no failure, when there are none.
show_results() {
	sed -n -E 's/^(# All|# [0-9]+ of|not ok|1\.\.)/    \1/p' "$1" 2>/dev/null || true
}

# Stop a server when the suite's subshell ends, however it ends.
stop_on_exit() {
	# shellcheck disable=SC2064 # the values of now
	trap "as_run_user '$1/pg_ctl' -D '$2' -m immediate stop >/dev/null 2>&1 || true" EXIT
}

# Contrib modules that src/test/recovery loads, installed into the patched
# prefix from its own build tree when missing.
ensure_contrib() {
	local m
	for m in "$@"; do
		[ -f "$("$bin/pg_config" --pkglibdir)/$m.so" ] && continue
		say "installing contrib/$m into $PG_PATCHED"
		make -s -C "$build/contrib/$m" install >/dev/null
	done
}

# The side loop that resizes walscale.insert_locks while the suites run:
# ALTER SYSTEM and pg_reload_conf() every $side_resize_interval seconds, in
# one psql session (as the run user), through $side_resize_values, until
# $1/resize-loop.stop exists.  $1: the configuration's scratch directory,
# where its server's socket is; $2: the port.  Sets side_resize_pid (psql's
# end of the pipeline, whose status wait gives).
start_side_resize() {
	local dir=$1 port=$2
	rm -f "$dir/resize-loop.stop"
	{
		set +eE
		trap - ERR
		n=0
		while [ ! -e "$dir/resize-loop.stop" ]; do
			for v in $side_resize_values; do
				[ -e "$dir/resize-loop.stop" ] && break
				n=$((n + 1))
				# a psql that ended leaves nobody to write to: stop
				printf 'ALTER SYSTEM SET walscale.insert_locks = %s;\nSELECT pg_reload_conf();\n\\echo reload %d %s\n' \
					"$v" "$n" "$v" 2>/dev/null || exit 0
				sleep "$side_resize_interval"
			done
		done
	} | {
		# its failure is told by its status, not by the suite's ERR trap
		trap - ERR
		as_run_user "$bin/psql" -X -q -At -h "$dir" -p "$port" -d postgres -v ON_ERROR_STOP=1 \
			>"$dir/resize-loop.out" 2>"$dir/resize-loop.err"
	} &
	side_resize_pid=$!
}

# Stop the side loop, set the configuration's count back, and record what
# the loop did: "resizes during suites" passes if the server made at least
# $side_resize_min resizes (walscale_settings.resizes, and as many "resized
# from" lines in its log), the loop's psql exited 0 with nothing on stderr,
# and the count settled back on $locks.  Needs pgq, dir, cfg, locks and
# start of run_regress_isolation.
stop_side_resize() {
	local rc=0 reloads resizes logged settled=0 detail
	touch "$dir/resize-loop.stop"
	wait "$side_resize_pid" || rc=$?
	reloads=$(grep -c '^reload ' "$dir/resize-loop.out" || true)
	resizes=$(pgq -d postgres -c "SELECT resizes FROM walscale_settings" || echo 0)
	logged=$(grep -c 'walscale: WAL insertion locks resized from' "$dir/server.log" || true)
	pgq -d postgres -c "ALTER SYSTEM RESET walscale.insert_locks" -c "SELECT pg_reload_conf()" >/dev/null || rc=1
	for _ in $(seq 1 300); do
		if [ "$(pgq -d postgres -c "SELECT insert_locks = $locks AND insert_locks_configured = $locks FROM walscale_settings" 2>/dev/null || true)" = t ]; then
			settled=1
			break
		fi
		sleep 0.2
	done
	detail="$resizes resizes ($logged logged) in $reloads reloads"
	if [ "$rc" = 0 ] && [ ! -s "$dir/resize-loop.err" ] && [ "$settled" = 1 ] &&
		[ "$resizes" -ge "$side_resize_min" ] && [ "$logged" -ge "$side_resize_min" ]; then
		record "resizes during suites" "$cfg" ok "$detail" "$(elapsed "$start")"
	else
		[ -s "$dir/resize-loop.err" ] && head -n 20 "$dir/resize-loop.err"
		[ "$settled" = 1 ] || detail="$detail, not back at $locks"
		[ "$rc" = 0 ] || detail="$detail, psql exit $rc"
		record "resizes during suites" "$cfg" FAIL "$detail (min $side_resize_min)" "$(elapsed "$start")"
	fi
}

# ---------------------------------------------------------------------------
# src/test/regress and src/test/isolation, installcheck-style against one
# cluster per configuration, so that the settings can be checked on the
# running server before and after.
# ---------------------------------------------------------------------------
run_regress_isolation() {
	local cfg=$1 name dir port locks attempts groups pgq rc out start s side_start
	IFS=/ read -r locks attempts groups <<<"$cfg"
	name="${scratch_prefix:-suites}-${locks}-${attempts}-${groups}"
	dir=$(scratch_dir "$name")
	port=$(free_port 56432)
	pgq() { as_run_user "$bin/psql" -X -At -h "$dir" -p "$port" -v ON_ERROR_STOP=1 "$@"; }

	as_run_user "$bin/initdb" -D "$dir/data" -A trust -U "$run_user" --no-locale -E UTF8 \
		--no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log"; record "regress+isolation" "$cfg" FAIL "initdb failed" 0; return; }
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "port = $port"
		# what pg_regress writes for its own temporary instances
		echo "log_autovacuum_min_duration = 0"
		echo "log_checkpoints = on"
		echo "log_line_prefix = '%m %b[%p] %q%a '"
		echo "log_lock_waits = on"
		echo "log_temp_files = 128kB"
		echo "max_prepared_transactions = 2"
		# as in PostgreSQL::Test::Cluster: the suites test no durability
		echo "fsync = off"
		config_lines "$cfg"
	} | as_run_user tee -a "$dir/data/postgresql.conf" >/dev/null
	stop_on_exit "$bin" "$dir/data"
	as_run_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null ||
		{ tail -n 20 "$dir/server.log"; record "regress+isolation" "$cfg" FAIL "server did not start" 0; return; }

	# the server runs with the settings asked for
	pgq -d postgres -c "CREATE EXTENSION walscale" >/dev/null || true
	s=$(pgq -d postgres -c "SELECT insert_locks || '/' || insert_lock_attempts || '/' || fastpath_groups FROM walscale_settings") ||
		s="psql failed"
	if [ "$s" != "$cfg" ] || [ "$(pgq -d postgres -c 'SELECT count(*) FROM walscale_stats WHERE active' || true)" != "$locks" ]; then
		record "settings" "$cfg" FAIL "walscale_settings says $s" 0
		return
	fi

	if [ "$side_resize" = 1 ]; then
		say "resizing walscale.insert_locks every ${side_resize_interval}s ($side_resize_values) while the suites run at $cfg"
		side_start=$(date +%s)
		start_side_resize "$dir" "$port"
	fi

	if has_suite regress; then
		say "src/test/regress (parallel schedule) at $cfg: about a minute"
		start=$(date +%s)
		rc=0
		as_run_user "$build/src/test/regress/pg_regress" \
			--inputdir="$build/src/test/regress" --outputdir="$dir/regress" \
			--bindir="$bin" --dlpath="$build/src/test/regress" \
			--host="$dir" --port="$port" --max-concurrent-tests=20 \
			--schedule="$build/src/test/regress/parallel_schedule" \
			>"$dir/regress.out" 2>&1 || rc=$?
		show_results "$dir/regress.out"
		out=$(regress_counts "$dir/regress.out")
		if [ $rc = 0 ]; then
			record "regress" "$cfg" ok "$out" "$(elapsed "$start")"
		else
			record "regress" "$cfg" FAIL "$out" "$(elapsed "$start")"
			[ -f "$dir/regress/regression.diffs" ] && head -n 80 "$dir/regress/regression.diffs"
		fi
		# the heap and the B-tree indexes that the suite left are intact
		start=$(date +%s)
		rc=0
		as_run_user "$bin/pg_amcheck" -h "$dir" -p "$port" -d regression --install-missing \
			--heapallindexed --no-dependent-toast --progress >"$dir/amcheck.out" 2>&1 || rc=$?
		out=$(tr '\r' '\n' <"$dir/amcheck.out" | sed -n 's|^ *\([0-9]*\)/\1 relations.*|\1|p' | tail -n 1)
		[ -n "$out" ] || rc=1
		if [ $rc = 0 ]; then
			record "amcheck(regression)" "$cfg" ok "$out relations: no corruption" "$(elapsed "$start")"
		else
			head -n 30 "$dir/amcheck.out"
			record "amcheck(regression)" "$cfg" FAIL "pg_amcheck exit $rc" "$(elapsed "$start")"
		fi
	fi

	if has_suite isolation; then
		say "src/test/isolation at $cfg: about a minute"
		start=$(date +%s)
		rc=0
		as_run_user "$build/src/test/isolation/pg_isolation_regress" \
			--inputdir="$build/src/test/isolation" --outputdir="$dir/isolation" \
			--bindir="$bin" --host="$dir" --port="$port" \
			--schedule="$build/src/test/isolation/isolation_schedule" \
			prepared-transactions prepared-transactions-cic \
			>"$dir/isolation.out" 2>&1 || rc=$?
		show_results "$dir/isolation.out"
		out=$(regress_counts "$dir/isolation.out")
		if [ $rc = 0 ]; then
			record "isolation" "$cfg" ok "$out" "$(elapsed "$start")"
		else
			record "isolation" "$cfg" FAIL "$out" "$(elapsed "$start")"
			[ -f "$dir/isolation/output_iso/regression.diffs" ] &&
				head -n 80 "$dir/isolation/output_iso/regression.diffs"
		fi
	fi

	if [ "$side_resize" = 1 ]; then
		start=$side_start
		stop_side_resize
		# some of the locks active now may have been active only between
		# the suites' checkpoints: one more, at the configuration's count
		pgq -d postgres -c "CHECKPOINT" >/dev/null
	fi

	# after the suites: every active lock was taken by the all-locks path of
	# the checkpoints, and WAL went through the insertion locks
	s=$(pgq -d postgres -c "SELECT count(*) FILTER (WHERE active) = $locks
		AND min(exclusive_acquisitions) FILTER (WHERE active) > 0
		AND sum(acquisitions) > 10000 FROM walscale_stats") || s="psql failed"
	if [ "$s" = t ]; then
		record "counters after suites" "$cfg" ok "all locks ($locks) taken exclusively" 0
	else
		record "counters after suites" "$cfg" FAIL "walscale_stats unexpected" 0
		pgq -d postgres -c "SELECT count(*) FILTER (WHERE active), min(exclusive_acquisitions) FILTER (WHERE active), sum(acquisitions) FROM walscale_stats" || true
	fi

	# a clean shutdown and restart, and nothing alarming in the server log
	rc=0
	as_run_user "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || rc=$?
	as_run_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null || rc=$?
	[ "$(pgq -d postgres -c 'SELECT count(*) FROM walscale_stats WHERE active' || true)" = "$locks" ] || rc=1
	as_run_user "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || rc=$?
	if grep -E 'PANIC|TRAP:|too many LWLocks taken|terminated by signal|was terminated by exception' \
		"$dir/server.log" >"$dir/alarms.log"; then
		head -n 20 "$dir/alarms.log"
		rc=1
	fi
	if [ $rc = 0 ]; then
		record "server log, restart" "$cfg" ok "no PANIC/crash/LWLock error" 0
	else
		record "server log, restart" "$cfg" FAIL "see $dir/server.log" 0
	fi
}

# "P passed of N" from pg_regress' TAP output
regress_counts() {
	local total failed
	total=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$1" | tail -n 1)
	failed=$(grep -c '^not ok' "$1" || true)
	if [ -z "$total" ]; then
		echo "did not finish"
	else
		echo "$((total - failed))/$total tests passed"
	fi
}

# ---------------------------------------------------------------------------
# src/test/recovery through prove, with TEMP_CONFIG, from a copy of the test
# directory (the build tree belongs to root) plus one test of ours that
# checks that TEMP_CONFIG's settings are the ones in effect.
#
# A test that sets shared_preload_libraries itself (027_stream_regress.pl,
# the tests of injection points) would replace TEMP_CONFIG's 'walscale':
# scripts/perl/WalscalePreload.pm, loaded into every test file, puts walscale
# back into every such line that PostgreSQL::Test::Cluster writes.  After
# the run, every node's log must show walscale's line before each start.
# ---------------------------------------------------------------------------

# Every start of a node that reached "ready to accept connections" loaded
# walscale: its postmaster logged "LOG:  walscale: " when it initialised
# shared memory, which it does before "starting PostgreSQL", and again
# after "all server processes terminated; reinitializing".  A promotion
# ("ready to accept connections" after "... read-only connections") is no
# new start.  Starts that failed, as some tests mean them to, are not
# judged.  $1: the tests' log directory; prints "LOGS STARTS" and then the
# logs that fail, one a line.
check_node_logs() {
	local f verdict logs=0 starts=0 ready missing
	local -a bad=()
	for f in "$1"/*.log; do
		[ -f "$f" ] || continue
		case ${f##*/} in regress_log_*) continue ;; esac
		verdict=$(awk '
			/LOG:  walscale: / { pending = 1; current = 1 }
			/LOG:  starting PostgreSQL/ { current = pending; pending = 0 }
			/all server processes terminated; reinitializing/ { current = 0; pending = 0 }
			/database system is ready to accept/ { ready++; if (!current) missing++ }
			END { print ready + 0, missing + 0 }' "$f")
		read -r ready missing <<<"$verdict"
		[ "$ready" -gt 0 ] || continue
		logs=$((logs + 1))
		starts=$((starts + ready))
		[ "$missing" = 0 ] || bad+=("${f##*/}")
	done
	echo "$logs $starts"
	[ ${#bad[@]} = 0 ] || printf '%s\n' "${bad[@]}"
}

run_recovery() {
	local cfg=$1 name dir tests start rc locks attempts groups out logs starts
	local -a bad
	# on the test flavor (this runs in a subshell of its own)
	ensure_injection_server >/dev/null
	install_extension_into "$PG_TESTED"
	PG_PATCHED=$PG_TESTED bin=$PG_TESTED/bin build=$PG_TESTED/build
	IFS=/ read -r locks attempts groups <<<"$cfg"
	name="recovery-${locks}-${attempts}-${groups}"
	dir=$(scratch_dir "$name")
	ensure_contrib test_decoding pg_stat_statements pg_prewarm
	# the layout of src/test, for 027_stream_regress.pl's ../regress
	mkdir -p "$dir/recovery"
	cp -a "$build/src/test/recovery/t" "$dir/recovery/t"
	ln -s "$build/src/test/regress" "$dir/regress"
	config_lines "$cfg" >"$dir/temp_config"
	cat >"$dir/recovery/t/000_walscale_settings.pl" <<'PERL'
# walscale: the settings of TEMP_CONFIG are in effect on the suite's nodes
use strict;
use warnings FATAL => 'all';
use PostgreSQL::Test::Cluster;
use Test::More;
my $node = PostgreSQL::Test::Cluster->new('walscale');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION walscale');
is( $node->safe_psql('postgres',
		"SELECT insert_locks || '/' || insert_lock_attempts || '/' || fastpath_groups FROM walscale_settings"),
	$ENV{WALSCALE_EXPECT}, 'walscale settings from TEMP_CONFIG');
$node->stop;

# a node that sets shared_preload_libraries itself, as 027_stream_regress.pl
# does, keeps walscale (scripts/perl/WalscalePreload.pm) and its own library
ok($WalscalePreload::active, 'WalscalePreload is loaded');
my $own = PostgreSQL::Test::Cluster->new('own_libraries');
$own->init;
$own->append_conf('postgresql.conf', "shared_preload_libraries = 'pg_stat_statements'");
$own->start;
is($own->safe_psql('postgres', 'SHOW shared_preload_libraries'),
	'walscale,pg_stat_statements', 'own shared_preload_libraries with walscale');
$own->safe_psql('postgres', 'CREATE EXTENSION walscale');
is( $own->safe_psql('postgres',
		"SELECT insert_locks || '/' || insert_lock_attempts || '/' || fastpath_groups FROM walscale_settings"),
	$ENV{WALSCALE_EXPECT}, 'walscale settings with own shared_preload_libraries');
$own->stop;
done_testing();
PERL
	mkdir -p "$dir/perl"
	cp "$repo/scripts/perl/WalscalePreload.pm" "$dir/perl/"
	if [ "$recovery_tests" = all ]; then
		tests=$(cd "$dir/recovery" && ls t/0*.pl | tr '\n' ' ')
	else
		tests="t/000_walscale_settings.pl"
		for t in $recovery_tests; do
			if [ -f "$dir/recovery/t/$t" ]; then
				tests="$tests t/$t"
			else
				say "src/test/recovery of this PostgreSQL has no $t"
			fi
		done
	fi
	[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	say "src/test/recovery at $cfg: $(echo "$tests" | wc -w) test files, $( [ "$recovery_tests" = all ] && echo 'about 6 minutes (more on a busy machine)' || echo 'about 3 minutes')"
	start=$(date +%s)
	rc=0
	# prove's status through the pipe (pipefail: tee's is 0)
	{
		(
			cd "$dir/recovery" &&
				as_run_user env TESTLOGDIR="$dir/tmp_check/log" TESTDATADIR="$dir/tmp_check" \
					PATH="$bin:$PATH" PG_TEST_PORT_DIR="$dir/portlock" \
					PG_REGRESS="$build/src/test/regress/pg_regress" \
					REGRESS_SHLIB="$build/src/test/regress/regress.so" \
					share_contrib_dir="$PG_PATCHED/share/contrib" \
					enable_injection_points=yes with_ssl=no PG_TEST_EXTRA="" \
					TEMP_CONFIG="$dir/temp_config" WALSCALE_EXPECT="$cfg" \
					PERL5LIB="$dir/perl:$build/src/test/perl" PERL5OPT="-MWalscalePreload" \
					prove -I "$build/src/test/perl" -I "$dir/recovery" --timer -j "${PROVE_JOBS:-1}" $tests
		) 2>&1 | tee "$dir/prove.out"
	} || rc=$?
	[ $rc = 0 ] || say "prove exited with status $rc"
	grep -q '^Result: PASS' "$dir/prove.out" || rc=1
	out=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1 files, \2 tests/p' "$dir/prove.out")
	if [ $rc = 0 ]; then
		record "recovery" "$cfg" ok "${out:-?} passed" "$(elapsed "$start")"
	else
		record "recovery" "$cfg" FAIL "${out:-did not finish}" "$(elapsed "$start")"
		for f in "$dir"/tmp_check/log/regress_log_*; do
			grep -q 'not ok' "$f" 2>/dev/null || continue
			echo "==== $f"
			# sed reads to the end: head would end grep by SIGPIPE
			grep -B3 -A12 'not ok' "$f" | sed -n 1,60p
		done
	fi

	# walscale was loaded at every start of every node
	{
		read -r logs starts || true
		mapfile -t bad
	} < <(check_node_logs "$dir/tmp_check/log")
	if [ "${logs:-0}" = 0 ]; then
		record "walscale on every node" "$cfg" FAIL "no node log shows a start" 0
	elif [ ${#bad[@]} = 0 ]; then
		record "walscale on every node" "$cfg" ok "$logs node logs, $starts starts" 0
	else
		say "node logs with a start without walscale's \"LOG:  walscale: \" line, in $dir/tmp_check/log:"
		printf '    %s\n' "${bad[@]}"
		record "walscale on every node" "$cfg" FAIL "without walscale: ${bad[*]:0:3}$([ ${#bad[@]} -le 3 ] || echo " and $((${#bad[@]} - 3)) more")" 0
	fi
}

# ---------------------------------------------------------------------------
# walscale's robustness tests, t/1NN_*.pl, with long settings.  make test
# runs them with their short defaults as part of walscale's TAP suite.
# ---------------------------------------------------------------------------
run_robustness() {
	local dir start rc out
	dir=$(scratch_dir robustness)
	cp -a "$repo/t" "$dir/t"
	[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	say "walscale robustness tests t/1NN_*.pl, long settings: about 15 minutes"
	start=$(date +%s)
	rc=0
	# prove's status through the pipe (pipefail: tee's is 0)
	{
		(
			cd "$dir" &&
				as_run_user env TESTLOGDIR="$dir/tmp_check/log" TESTDATADIR="$dir/tmp_check" \
					PATH="$bin:$PATH" PG_REGRESS="$pgxs_dir/src/test/regress/pg_regress" \
					WALSCALE_POSTMASTER_KILLS=${WALSCALE_POSTMASTER_KILLS:-25} \
					WALSCALE_BACKEND_KILLS=${WALSCALE_BACKEND_KILLS:-25} \
					WALSCALE_LOOP_SECONDS=${WALSCALE_LOOP_SECONDS:-90} \
					WALSCALE_LOAD_SECONDS=${WALSCALE_LOAD_SECONDS:-60} \
					WALSCALE_STORM_SECONDS=${WALSCALE_STORM_SECONDS:-30} \
					WALSCALE_STORM_CYCLES=${WALSCALE_STORM_CYCLES:-6} \
					WALSCALE_TEST_TIME_LIMIT=${WALSCALE_TEST_TIME_LIMIT:-3600} \
					prove -I "$pgxs_dir/src/test/perl" --timer t/1*.pl
		) 2>&1 | tee "$dir/prove.out"
	} || rc=$?
	[ $rc = 0 ] || say "prove exited with status $rc"
	grep -q '^Result: PASS' "$dir/prove.out" || rc=1
	out=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1 files, \2 tests/p' "$dir/prove.out")
	if [ $rc = 0 ]; then
		record "walscale t/1NN" "long" ok "${out:-?} passed" "$(elapsed "$start")"
	else
		record "walscale t/1NN" "long" FAIL "${out:-did not finish}" "$(elapsed "$start")"
	fi
}

# ---------------------------------------------------------------------------
# memcheck: the patched server built with AddressSanitizer and UBSan, in its
# own directory (not one of build-postgres.sh's cache keys), then the
# regress, isolation and walscale suites on it.
# ---------------------------------------------------------------------------
build_sanitized() {
	# as PostgreSQL's own CI does for its sanitizer tasks
	PG_ASAN=$(build_instrumented_server asan \
		--enable-debug --enable-cassert --without-icu \
		CFLAGS="-Og -ggdb -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=alignment -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined")
}

# The verdict on one sanitized run: no report file, nothing in the log.
sanitizer_verdict() {
	local what=$1 cfg=$2 dir=$3 logs=$4 rc=0 f
	for f in "$dir"/asan.* "$dir"/ubsan.*; do
		[ -f "$f" ] || continue
		echo "==== $f"
		head -n 40 "$f"
		rc=1
	done
	# every matching line, into a file: grep's status is 2 when a log is
	# missing, and grep | head would end grep by SIGPIPE
	# shellcheck disable=SC2086
	grep -E 'ERROR: AddressSanitizer|runtime error:|TRAP:|terminated by signal' $logs \
		>"$dir/sanitizer-lines" 2>/dev/null || true
	if [ -s "$dir/sanitizer-lines" ]; then
		head -n 20 "$dir/sanitizer-lines"
		rc=1
	fi
	if [ $rc = 0 ]; then
		record "$what" "$cfg" ok "no ASan/UBSan report" 0
	else
		record "$what" "$cfg" FAIL "ASan/UBSan reports in $dir" 0
	fi
}

run_memcheck() {
	local cfg dir port rc start locks attempts groups run conf
	build_sanitized || { record "memcheck build" "-" FAIL "build failed" 0; return; }
	# the sanitized pg_config and the like leak on exit, as PostgreSQL's
	# programs may: leaks are not what this looks for
	export ASAN_OPTIONS=detect_leaks=0
	# walscale itself, built with the sanitized server's flags
	install_extension_into "$PG_ASAN"
	# both are instrumented, or this would prove nothing
	# (grep reads to the end: with pipefail, grep -q's early exit could fail
	# the pipeline by SIGPIPE)
	local so
	so="$("$PG_ASAN/bin/pg_config" --pkglibdir)/walscale.so"
	if ldd "$PG_ASAN/bin/postgres" | grep libasan >/dev/null &&
		nm -D "$so" | grep __asan_report >/dev/null &&
		nm -D "$so" | grep __ubsan_handle >/dev/null; then
		record "instrumented" "-" ok "postgres and walscale.so: ASan+UBSan" 0
	else
		record "instrumented" "-" FAIL "postgres or walscale.so lacks ASan/UBSan" 0
	fi
	asan_env() {
		echo "ASAN_OPTIONS=print_stacktrace=1:abort_on_error=1:detect_leaks=0:detect_stack_use_after_return=0:log_path=$1/asan"
		echo "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$1/ubsan"
	}

	# PostgreSQL's suites at the extreme settings
	for cfg in ${WALSCALE_MEMCHECK_CONFIGS:-1024/3/1024 1/3/1}; do
		IFS=/ read -r locks attempts groups <<<"$cfg"
		dir=$(scratch_dir "memcheck-${locks}-${attempts}-${groups}")
		port=$(free_port 57432)
		as_run_user env $(asan_env "$dir") "$PG_ASAN/bin/initdb" -D "$dir/data" -A trust \
			-U "$run_user" --no-locale -E UTF8 --no-sync >"$dir/initdb.log" 2>&1 ||
			{ tail -n 20 "$dir/initdb.log"; record "memcheck initdb" "$cfg" FAIL "initdb failed" 0; continue; }
		{
			echo "listen_addresses = ''"
			echo "unix_socket_directories = '$dir'"
			echo "port = $port"
			echo "max_prepared_transactions = 2"
			echo "fsync = off"
			config_lines "$cfg"
		} | as_run_user tee -a "$dir/data/postgresql.conf" >/dev/null
		stop_on_exit "$PG_ASAN/bin" "$dir/data"
		as_run_user env $(asan_env "$dir") "$PG_ASAN/bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
			-w -t 300 start >/dev/null ||
			{ tail -n 20 "$dir/server.log"; record "memcheck start" "$cfg" FAIL "server did not start" 0; continue; }
		say "memcheck at $cfg: regress and isolation under ASan/UBSan: about 8 minutes"
		start=$(date +%s)
		rc=0
		as_run_user env $(asan_env "$dir") "$PG_ASAN/build/src/test/regress/pg_regress" \
			--inputdir="$PG_ASAN/build/src/test/regress" --outputdir="$dir/regress" \
			--bindir="$PG_ASAN/bin" --dlpath="$PG_ASAN/build/src/test/regress" \
			--host="$dir" --port="$port" --max-concurrent-tests=20 \
			--schedule="$PG_ASAN/build/src/test/regress/parallel_schedule" \
			>"$dir/regress.out" 2>&1 || rc=$?
		show_results "$dir/regress.out"
		record "regress (ASan/UBSan)" "$cfg" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
			"$(regress_counts "$dir/regress.out")" "$(elapsed "$start")"
		[ $rc = 0 ] || { [ -f "$dir/regress/regression.diffs" ] && head -n 60 "$dir/regress/regression.diffs"; }
		start=$(date +%s)
		rc=0
		as_run_user env $(asan_env "$dir") "$PG_ASAN/build/src/test/isolation/pg_isolation_regress" \
			--inputdir="$PG_ASAN/build/src/test/isolation" --outputdir="$dir/isolation" \
			--bindir="$PG_ASAN/bin" --host="$dir" --port="$port" \
			--schedule="$PG_ASAN/build/src/test/isolation/isolation_schedule" \
			prepared-transactions prepared-transactions-cic \
			>"$dir/isolation.out" 2>&1 || rc=$?
		show_results "$dir/isolation.out"
		record "isolation (ASan/UBSan)" "$cfg" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
			"$(regress_counts "$dir/isolation.out")" "$(elapsed "$start")"
		# walscale's views at these settings, a checkpoint, and a shutdown
		# checkpoint: all locks at once
		rc=0
		as_run_user env $(asan_env "$dir") "$PG_ASAN/bin/psql" -X -q -h "$dir" -p "$port" -d postgres \
			-v ON_ERROR_STOP=1 -c "CREATE EXTENSION walscale" \
			-c "SELECT count(*), sum(acquisitions) FROM walscale_stats" \
			-c "SELECT * FROM walscale_fastpath" -c "SELECT * FROM walscale_settings" \
			-c "SELECT walscale_reset()" -c "CHECKPOINT" >/dev/null || rc=1
		as_run_user "$PG_ASAN/bin/pg_ctl" -D "$dir/data" -m fast -w -t 300 stop >/dev/null || rc=1
		[ $rc = 0 ] || record "walscale views (ASan)" "$cfg" FAIL "see $dir/server.log" 0
		sanitizer_verdict "ASan/UBSan reports" "$cfg" "$dir" "$dir/server.log"
	done

	# walscale's own pg_regress suite, at walscale.conf's settings, for which
	# its expected output is written
	conf=$(walscale_conf_settings)
	dir=$(scratch_dir memcheck-walscale)
	run="$dir/suite"
	mkdir -p "$run"
	cp -a "$repo/sql" "$repo/expected" "$repo/walscale.conf" "$run/"
	[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	say "memcheck: walscale's pg_regress suite under ASan/UBSan"
	start=$(date +%s)
	rc=0
	as_run_user env $(asan_env "$dir") \
		"$(dirname "$(dirname "$(dirname "$("$PG_ASAN/bin/pg_config" --pgxs)")")")/src/test/regress/pg_regress" \
		--inputdir="$run" --outputdir="$run" --bindir="$PG_ASAN/bin" \
		--temp-instance="$run/tmp_check" --temp-config="$run/walscale.conf" \
		$(cd "$repo/sql" && ls *.sql | sed 's/\.sql$//') >"$dir/walscale.out" 2>&1 || rc=$?
	show_results "$dir/walscale.out"
	record "walscale sql (ASan/UBSan)" "$conf" "$([ $rc = 0 ] && echo ok || echo FAIL)" \
		"$(regress_counts "$dir/walscale.out")" "$(elapsed "$start")"
	[ $rc = 0 ] || { [ -f "$run/regression.diffs" ] && head -n 60 "$run/regression.diffs"; }
	sanitizer_verdict "ASan/UBSan reports" "$conf" "$dir" "$run/log/postmaster.log"
}

trim() {
	local v=$1
	v=${v#"${v%%[! ]*}"}
	echo "${v%"${v##*[! ]}"}"
}

# valgrind: scripts/test-valgrind.sh, its result lines recorded here.
run_valgrind() {
	local dir start line what cfg status detail secs rc=0
	dir=$(scratch_dir valgrind-run)
	say "valgrind: walscale's pg_regress suite and a WAL load under valgrind's memcheck"
	start=$(date +%s)
	# test-valgrind.sh's status through the pipe (pipefail: the others' are 0)
	{
		"$repo/scripts/test-valgrind.sh" 2>&1 | tee "$dir/test-valgrind.out" |
			{ grep -v '^test-valgrind: result:' || true; }
	} || rc=$?
	while IFS= read -r line; do
		IFS='|' read -r what cfg status detail secs <<<"${line#test-valgrind: result: }"
		record "$(trim "$what") (valgrind)" "$(trim "$cfg")" "$(trim "$status")" "$(trim "$detail")" "$(trim "$secs")"
	done < <(grep '^test-valgrind: result:' "$dir/test-valgrind.out")
	grep -q '^test-valgrind: all checks passed' "$dir/test-valgrind.out" ||
		record "valgrind" "-" FAIL "see $dir/test-valgrind.out" "$(elapsed "$start")"
	[ $rc = 0 ] ||
		record "test-valgrind.sh" "-" FAIL "exit status $rc" "$(elapsed "$start")"
}

# ---------------------------------------------------------------------------
# The patched server built with EXEC_BACKEND (.pg/walscale-execbackend), as
# on Windows and in PostgreSQL's own CI: every child of the postmaster is
# exec'd, loads shared_preload_libraries again, computes again the numbers
# that shared memory was sized with, and attaches to shared memory again.
# Each function runs as a suite of its own (a subshell); their records say
# "(EXEC_BACKEND)".
# ---------------------------------------------------------------------------

# Build the flavor (once, cached), and install walscale and the test modules
# into it, built against its headers.
run_execbackend_setup() {
	local start
	suite_tag=EXEC_BACKEND
	start=$(date +%s)
	say "the EXEC_BACKEND build: about 5 minutes on 2 idle cores when it is not cached"
	ensure_execbackend_server
	install_extension_into "$PG_EXEC"
	install_test_modules_into "$PG_EXEC"
	record "build, install" "-" ok "$(basename "$PG_EXEC")" "$(elapsed "$start")"
}

# This suite's server is the EXEC_BACKEND flavor.
use_execbackend() {
	ensure_execbackend_server >/dev/null
	PG_PATCHED=$PG_EXEC bin=$PG_EXEC/bin build=$PG_EXEC/build
	suite_tag=EXEC_BACKEND scratch_prefix=execbackend
}

# src/test/regress on the EXEC_BACKEND build without walscale: the core
# patch alone, every child computing the numbers the postmaster computed.
run_execbackend_plain() {
	local dir port start rc out
	use_execbackend
	dir=$(scratch_dir execbackend-plain)
	port=$(free_port 56432)
	as_run_user "$bin/initdb" -D "$dir/data" -A trust -U "$run_user" --no-locale -E UTF8 \
		--no-sync >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log"; record "regress" "none" FAIL "initdb failed" 0; return; }
	{
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$dir'"
		echo "port = $port"
		echo "max_prepared_transactions = 2"
		echo "fsync = off"
	} | as_run_user tee -a "$dir/data/postgresql.conf" >/dev/null
	stop_on_exit "$bin" "$dir/data"
	as_run_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null ||
		{ tail -n 20 "$dir/server.log"; record "regress" "none" FAIL "server did not start" 0; return; }
	say "src/test/regress (parallel schedule) without walscale: about 2 minutes"
	start=$(date +%s)
	rc=0
	as_run_user "$build/src/test/regress/pg_regress" \
		--inputdir="$build/src/test/regress" --outputdir="$dir/regress" \
		--bindir="$bin" --dlpath="$build/src/test/regress" \
		--host="$dir" --port="$port" --max-concurrent-tests=20 \
		--schedule="$build/src/test/regress/parallel_schedule" \
		>"$dir/regress.out" 2>&1 || rc=$?
	show_results "$dir/regress.out"
	out=$(regress_counts "$dir/regress.out")
	if [ $rc = 0 ]; then
		record "regress" "none" ok "$out" "$(elapsed "$start")"
	else
		record "regress" "none" FAIL "$out" "$(elapsed "$start")"
		[ -f "$dir/regress/regression.diffs" ] && head -n 80 "$dir/regress/regression.diffs"
	fi
	rc=0
	as_run_user "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || rc=$?
	if grep -E 'PANIC|TRAP:|terminated by signal|was terminated by exception|fast-path lock groups per backend' \
		"$dir/server.log" >"$dir/alarms.log"; then
		head -n 20 "$dir/alarms.log"
		rc=1
	fi
	if [ $rc = 0 ]; then
		record "server log" "none" ok "no PANIC/crash/FATAL of a child" 0
	else
		record "server log" "none" FAIL "see $dir/server.log" 0
	fi
}

# src/test/regress and src/test/isolation with walscale, as at the other
# configurations (run_regress_isolation), on the EXEC_BACKEND build.
run_execbackend_walscale_suites() {
	use_execbackend
	# both, whichever of them this mode runs on the other builds (a subshell)
	suites="regress isolation"
	run_regress_isolation "$1"
}

# walscale's pg_regress suite and TAP files on the EXEC_BACKEND build, as
# make test runs them on the test flavor, with WALSCALE_EXEC_BACKEND=required
# (t/022 fails unless the server is an EXEC_BACKEND build).
run_execbackend_walscale_own() {
	local dir start rc out skipped
	local -a env_older=()
	use_execbackend
	dir=$(scratch_dir execbackend-walscale)
	cp -a "$repo/Makefile" "$repo/walscale.conf" "$repo/sql" "$repo/expected" "$repo/t" "$repo/monitoring" "$dir/"
	# the unit tests (t/010) compile walscale's sources
	cp -a "$repo"/walscale*.c "$repo"/walscale*.h "$dir/"
	[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	[ -z "${PG_OLDER_CORE:-}" ] ||
		env_older=(PG_OLDER_CORE="$PG_OLDER_CORE" PG_OLDER_CORE_VERSION="$PG_OLDER_CORE_VERSION")
	say "walscale's pg_regress suite and TAP files on the EXEC_BACKEND build: about 12 minutes"
	start=$(date +%s)
	rc=0
	as_run_user env PG_STOCK="$PG_STOCK" PG_PATCHED="$PG_EXEC" "${env_older[@]}" \
		WALSCALE_CORE_VERSION="$(core_version_of_patches)" WALSCALE_EXEC_BACKEND=required \
		make --no-print-directory -C "$dir" installcheck PG_CONFIG="$bin/pg_config" TAP_TESTS= \
		>"$dir/regress.out" 2>&1 || rc=$?
	show_results "$dir/regress.out"
	if [ $rc = 0 ]; then
		record "walscale sql" "$(walscale_conf_settings)" ok "$(regress_counts "$dir/regress.out")" "$(elapsed "$start")"
	else
		record "walscale sql" "$(walscale_conf_settings)" FAIL "$(regress_counts "$dir/regress.out")" "$(elapsed "$start")"
		[ -f "$dir/regression.diffs" ] && head -n 60 "$dir/regression.diffs"
	fi
	start=$(date +%s)
	rc=0
	# prove's status through the pipe (pipefail: tee's is 0)
	{
		as_run_user env PG_STOCK="$PG_STOCK" PG_PATCHED="$PG_EXEC" "${env_older[@]}" \
			WALSCALE_CORE_VERSION="$(core_version_of_patches)" WALSCALE_EXEC_BACKEND=required \
			make --no-print-directory -C "$dir" installcheck PG_CONFIG="$bin/pg_config" REGRESS= \
			PROVE_TESTS="$([ "$execbackend_tests" = all ] && (cd "$dir" && echo t/*.pl) || echo "$execbackend_tests")" \
			PROVE_FLAGS="--timer ${PROVE_FLAGS:-}" 2>&1 | tee "$dir/prove.out"
	} || rc=$?
	grep -q '^Result: PASS' "$dir/prove.out" || rc=1
	out=$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1 files, \2 tests/p' "$dir/prove.out")
	skipped=$(grep -c 'skipped: the server is not built with injection points' "$dir/prove.out" || true)
	if [ $rc = 0 ]; then
		record "walscale TAP" "short" ok "${out:-?} passed, $skipped skipped" "$(elapsed "$start")"
	else
		record "walscale TAP" "short" FAIL "${out:-did not finish}" "$(elapsed "$start")"
		for f in "$dir"/tmp_check/log/regress_log_*; do
			grep -q 'not ok' "$f" 2>/dev/null || continue
			echo "==== $f"
			grep -B3 -A12 'not ok' "$f" | sed -n 1,60p
		done
	fi
}

say "mode $mode: $suites; expected duration $expected"
if has_suite regress || has_suite isolation; then
	for cfg in $suite_configs; do run_suite "regress+isolation" "$cfg" run_regress_isolation "$cfg"; done
fi
if has_suite recovery; then
	for cfg in $recovery_configs; do run_suite "recovery" "$cfg" run_recovery "$cfg"; done
fi
if has_suite robustness; then run_suite "walscale t/1NN" "long" run_robustness; fi
if has_suite memcheck; then run_suite "memcheck" "-" run_memcheck; fi
if has_suite valgrind; then run_suite "valgrind" "-" run_valgrind; fi
if has_suite execbackend; then
	run_suite "build, install (EXEC_BACKEND)" "-" run_execbackend_setup
	run_suite "regress (EXEC_BACKEND)" "none" run_execbackend_plain
	for cfg in $execbackend_configs; do
		run_suite "regress+isolation (EXEC_BACKEND)" "$cfg" run_execbackend_walscale_suites "$cfg"
	done
	run_suite "walscale suites (EXEC_BACKEND)" "-" run_execbackend_walscale_own
fi

# finish (the EXIT trap) prints the summary and exits with the verdict
finished=1
exit 0
