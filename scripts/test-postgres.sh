#!/usr/bin/env bash
# PostgreSQL's own suites, through their own make targets in the build tree
# of the patched server, against that server with walscale preloaded at
# extreme settings; walscale's long robustness runs; memory-error runs; and
# the same suites on the patched server built with EXEC_BACKEND.
#
#   scripts/test-postgres.sh [ci|full|memcheck|valgrind|robustness|execbackend]
#   (make test-postgres SUITES_MODE=...)
#
#   ci          run by make test: regress and isolation at 1/3/1,
#               1024/0/1024, 1/0/1024 and 1024/3/1 (every pair of values of
#               any two settings), src/test/recovery at 1024/3/1, the WAL
#               tools at 1024/3/1 with the upgrades from stock 18 and 17 to
#               the patched server and back to stock 18, and five of
#               them (pg_waldump, pg_walsummary, pg_resetwal, test_decoding,
#               pg_walinspect) at 1/3/1, and execbackend with six of
#               walscale's TAP files.
#   full        (default) regress and isolation at all eight combinations
#               of {1,1024} x {0,3} x {1,1024}; src/test/recovery at 1/3/1,
#               1024/0/1024 and 1024/3/1; every WAL tool at 1024/3/1, with
#               the upgrades from stock 18 and back to it and from stock 17
#               (built once, cached), and at 1/3/1;
#               robustness, memcheck, valgrind, and execbackend with all of
#               walscale's TAP files.
#   memcheck    regress and isolation at 1024/3/1024 and 1/3/1, and
#               walscale's pg_regress suite, on the patched server and
#               walscale built with assertions and ASan/UBSan (built once,
#               cached); any report fails it.
#   valgrind    scripts/test-valgrind.sh.
#   robustness  walscale's t/1NN_*.pl with long settings.
#   execbackend on the patched server built with CPPFLAGS=-DEXEC_BACKEND
#               (every child of the postmaster exec'd, as on Windows):
#               regress without walscale; regress and isolation with
#               walscale at 1024/3/1024; walscale's pg_regress suite and
#               TAP files with WALSCALE_EXEC_BACKEND=required (those that
#               need injection points skip themselves).
#
# A configuration LOCKS/ATTEMPTS/GROUPS sets walscale.insert_locks,
# walscale.insert_lock_attempts and walscale.fastpath_groups.
#
# At each configuration, regress (make installcheck-parallel, then
# pg_amcheck of the regression database) and isolation (make
# installcheck-prepared-txns) run against one cluster, so that walscale's
# walscale.insert_locks is set by ALTER SYSTEM and a reload every 0.2 s
# beside them, in one psql session, cycling through 1, 3, 8, 64 and 1024:
# "resizes during suites" fails unless the server made at least 50 resizes
# (walscale_settings.resizes, and as many lines in its log) and settled back
# on the configuration's count.  Then every active lock must have been taken
# exclusively, the server must restart cleanly, and its log show no PANIC,
# crash or LWLock error.
#
# src/test/recovery (make installcheck with TEMP_CONFIG and PROVE_TESTS) runs
# on the test flavor (assertions, injection points), from a copy of its t/
# with scripts/perl/000_walscale_settings.pl; every node preloads walscale,
# also where a test sets shared_preload_libraries itself
# (scripts/perl/WalscalePreload.pm), and every start of every node must log
# walscale's line.
#
# waltools, on the same flavor and the same way: the TAP suites of src/bin's
# pg_basebackup, pg_rewind, pg_waldump, pg_walsummary, pg_combinebackup,
# pg_resetwal and pg_upgrade (make installcheck from a copy of their t/;
# pg_upgrade's upgrades the patched server to itself, as its make check
# does), and contrib's test_decoding and pg_walinspect through their make
# check, whose pg_regress instances take their own --temp-config and
# TEMP_CONFIG, with the installed server as the temporary installation
# (then test_decoding's isolation and TAP tests).  The first TAP suite at a
# configuration runs 000_walscale_settings.pl, the nodes of every TAP suite
# must log walscale's line at every start, and pg_regress' instances, whose
# logs it removes when they pass, first run walscale_loaded: walscale_settings
# there is the configuration's.  pg_upgrade-from-stock and pg_upgrade-to-stock
# run pg_upgrade's 002 across the stock 18 server and the patched one, either
# way, pg_upgrade-from-stock17 from stock 17 to the patched 18 (its
# oldinstall; its olddump from src/test/regress run on the stock server, as
# its TESTING says), where stock's nodes must log walscale's warning of
# observe mode instead.
#
# Environment (each overrides what the mode chooses):
#   WALSCALE_SUITES             of: regress isolation recovery waltools robustness memcheck valgrind execbackend
#   WALSCALE_SUITE_CONFIGS      configurations for regress and isolation
#   WALSCALE_RECOVERY_CONFIGS   configurations for src/test/recovery
#   WALSCALE_RECOVERY_TESTS     its test files (PROVE_TESTS), or "all"
#   WALSCALE_WALTOOLS_RUNS      CONFIG=TOOLS ...: the tools at each
#                               configuration, comma-separated: of all (the
#                               nine), the nine, pg_upgrade-from-stock,
#                               pg_upgrade-to-stock, pg_upgrade-from-stock17
#   PROVE_JOBS                  parallel prove jobs for src/test/recovery and
#                               the WAL tools (1)
#   WALSCALE_MEMCHECK_CONFIGS, WALSCALE_EXECBACKEND_CONFIGS   the same for those
#   WALSCALE_EXECBACKEND_TESTS  walscale's TAP files on the EXEC_BACKEND build
#   WALSCALE_SIDE_RESIZE        0: no side loop; WALSCALE_SIDE_RESIZE_VALUES,
#                               _INTERVAL, _MIN: its counts, seconds, minimum
#
# Each check is one line of the summary; a command that fails unexpectedly
# ends its suite, recorded as aborted, and the others still run.  The exit
# status is 0 only when every check passed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

mode=${1:-full}
all_configs="1/0/1 1/0/1024 1/3/1 1/3/1024 1024/0/1 1024/0/1024 1024/3/1 1024/3/1024"
case "$mode" in
ci)
	suites="regress isolation recovery waltools execbackend"
	suite_configs="1/3/1 1024/0/1024 1/0/1024 1024/3/1" recovery_configs=1024/3/1
	# every tool at 1024 locks, and pg_upgrade across the stock servers
	# either way (stock 17's build is CI's already, scripts/ci-pg17.sh; the
	# two add about a minute); at 1 lock those that take a minute in all
	waltools_runs="1024/3/1=all,pg_upgrade-from-stock,pg_upgrade-to-stock,pg_upgrade-from-stock17 1/3/1=pg_waldump,pg_walsummary,pg_resetwal,test_decoding,pg_walinspect"
	# what EXEC_BACKEND changes: the core's interface, start-up, fast-path
	# sizing, the mixed servers
	execbackend_tests="t/001_insert_locks.pl t/003_bad_values.pl t/005_fastpath.pl t/014_core_interface_misuse.pl t/015_mixed_servers.pl t/022_exec_backend.pl"
	expected="35 minutes (1510 s measured on 2 cores under a load of 10 to 17, then the WAL tools' suites, about 10 minutes)"
	;;
full)
	suites="regress isolation recovery waltools robustness memcheck valgrind execbackend"
	suite_configs=$all_configs recovery_configs="1/3/1 1024/0/1024 1024/3/1"
	waltools_runs="1024/3/1=all,pg_upgrade-from-stock,pg_upgrade-to-stock,pg_upgrade-from-stock17 1/3/1=all"
	expected="about an hour on 2 idle cores, plus the instrumented builds once"
	;;
memcheck | valgrind | robustness | execbackend)
	suites=$mode expected="see the header of $0" ;;
*) echo "usage: $0 [ci|full|memcheck|valgrind|robustness|execbackend]" >&2; exit 2 ;;
esac
suites=${WALSCALE_SUITES:-$suites}
suite_configs=${WALSCALE_SUITE_CONFIGS:-${suite_configs:-}}
recovery_configs=${WALSCALE_RECOVERY_CONFIGS:-${recovery_configs:-}}
recovery_tests=${WALSCALE_RECOVERY_TESTS:-all}
waltools_runs=${WALSCALE_WALTOOLS_RUNS:-${waltools_runs:-}}
execbackend_tests=${WALSCALE_EXECBACKEND_TESTS:-${execbackend_tests:-all}}
side_resize=${WALSCALE_SIDE_RESIZE:-1}
side_resize_values=${WALSCALE_SIDE_RESIZE_VALUES:-1 3 8 64 1024}
side_resize_interval=${WALSCALE_SIDE_RESIZE_INTERVAL:-0.2}
side_resize_min=${WALSCALE_SIDE_RESIZE_MIN:-50}
has_suite() { case " $suites " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
say() { echo "test-postgres: [$(date +%H:%M:%S), ${SECONDS}s] $*"; }

# ---------------------------------------------------------------------------
# The summary: one line per check in $results, its status first.
# ---------------------------------------------------------------------------
results=$(mktemp)
record() {
	printf '%s\t%-30s %-12s %-5s %-40s %5ss\n' "$3" "$1${suite_tag:+ ($suite_tag)}" "$2" "$3" "$4" "$5" >>"$results"
}

# What a suite's output says it ran: prove's counts, pg_amcheck's relations,
# test-valgrind.sh's checks, pg_regress' tests; "did not finish" otherwise.
counts() {
	local total
	total=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$1" | tail -n 1)
	if grep -q '^Files=' "$1"; then
		# pg_regress' runs before prove's (contrib's check)
		grep -q '^# +++ [a-z]* check in ' "$1" &&
			printf '%s pg_regress tests, ' "$(($(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$1" | paste -sd+)))"
		echo "$(sed -n 's/^Files=\([0-9]*\), Tests=\([0-9]*\),.*/\1 files, \2 tests/p' "$1"), $(grep -c ' skipped: ' "$1" || true) skipped"
	elif grep -q 'relations (100%)' "$1"; then
		echo "$(tr '\r' '\n' <"$1" | sed -n 's|^ *\([0-9]*\)/\1 relations.*|\1|p' | tail -n 1) relations checked"
	elif grep -q '^test-valgrind: all checks passed' "$1"; then
		echo "$(grep -c '^test-valgrind: result:' "$1" || true) checks"
	elif [ -n "$total" ]; then
		echo "$((total - $(grep -c '^not ok' "$1" || true))) of $total tests passed"
	else
		echo "did not finish"
	fi
}

# One check: "$@" runs with its output in $3 (the lines that tell results
# shown as they come); ok when it exits 0 and its output says what it ran.
# On failure, the head of every regression.diffs and the failed TAP tests.
check() {
	local name=$1 cfg=$2 log=$3 start=$SECONDS rc=0 n f
	shift 3
	"$@" 2>&1 | tee "$log" | sed -u -n -E 's/^(# All|# [0-9]+ of|not ok|\[[0-9:]+\] t\/|Result:)/    \1/p' || rc=$?
	n=$(counts "$log")
	if [ $rc = 0 ] && [ "$n" != "did not finish" ]; then
		record "$name" "$cfg" ok "$n" $((SECONDS - start))
		return 0
	fi
	record "$name" "$cfg" FAIL "$n, exit $rc" $((SECONDS - start))
	tail -n 20 "$log"
	find "${log%/*}" -name regression.diffs -exec head -n 80 {} \;
	# (no TAP logs, as for regress and isolation: grep's exit 2 must not end the suite)
	{ grep -l '^not ok' "${log%/*}"/tmp_check/log/regress_log_* 2>/dev/null || true; } | while read -r f; do
		echo "==== $f"
		grep -B3 -A12 '^not ok' "$f" | sed -n 1,60p
	done
}

# A suite in a subshell under errexit: a command that fails unexpectedly
# ends that suite alone, recorded as aborted.  $1: name, $2: configuration,
# then the function and its arguments.
suite() {
	local st
	set +e
	(
		set -eE
		# the trap runs in the function that failed, with its $1 and $2
		suite_name=$1 suite_cfg=$2
		trap 'echo "test-postgres: $suite_name at $suite_cfg: \"$BASH_COMMAND\" failed with exit $? (line $LINENO)" >&2' ERR
		"${@:3}"
	)
	st=$?
	set -e
	[ $st = 0 ] || record "$1" "$2" FAIL "aborted (exit $st), see output above" "$SECONDS"
}

finish() {
	local st=$? failures total
	trap - EXIT
	[ "${finished:-0}" = 1 ] || record test-postgres "$mode" FAIL "aborted (exit $st)" "$SECONDS"
	total=$(wc -l <"$results")
	failures=$(grep -vc '^ok' "$results" || true)
	echo
	echo "test-postgres: summary ($mode mode, ${SECONDS}s; configuration = insert_locks/attempts/fastpath_groups)"
	sed 's/^[^\t]*\t/  /' "$results"
	rm -f "$results"
	[ "$mode" != ci ] || echo "test-postgres: not in CI (make test-postgres SUITES_MODE=full): regress and isolation at the other
  four combinations, src/test/recovery at two more, four WAL tools at 1/3/1, the long
  robustness runs, ASan/UBSan and valgrind"
	if [ "$failures" = 0 ]; then
		echo "test-postgres: all $total checks passed"
		exit 0
	fi
	echo "test-postgres: $failures of $total checks FAILED (outputs in $cache/run/)"
	exit 1
}
trap finish EXIT

# scripts/test.sh has built the servers and exported where they are
if [ -z "${PG_PATCHED:-}" ] || [ ! -f "$PG_PATCHED/.complete" ]; then
	ensure_servers
fi
install_extension
ensure_run_user
bin=$PG_PATCHED/bin build=$PG_PATCHED/build

# ---------------------------------------------------------------------------
# Clusters for regress and isolation.
# ---------------------------------------------------------------------------

# As the run user, with the suite's environment (suite_env: the sanitizers'
# options) and its cluster's socket and port.
pg() {
	# shellcheck disable=SC2046,SC2086 # one assignment a word
	as_run_user env $(suite_env) ${port:+PGHOST=$dir PGPORT=$port} "$@"
}
suite_env() { :; }
pgq() { pg "$bin/psql" -X -At -d postgres -v ON_ERROR_STOP=1 "$@"; }

# A cluster of $bin in $dir/data, on a socket in $dir, with postgresql.conf
# lines from stdin besides those of pg_regress' temporary instances;
# started, and stopped when the suite ends.
start_cluster() {
	port=$(free_port 56432)
	pg "$bin/initdb" -D "$dir/data" -A trust -U "$run_user" --no-locale -E UTF8 --no-sync \
		>"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log"; return 1; }
	{
		printf '%s\n' "listen_addresses = ''" "unix_socket_directories = '$dir'" "port = $port" \
			"log_autovacuum_min_duration = 0" "log_checkpoints = on" "log_lock_waits = on" \
			"log_line_prefix = '%m %b[%p] %q%a '" "log_temp_files = 128kB" \
			"max_prepared_transactions = 2" "fsync = off"
		cat
	} | as_run_user tee -a "$dir/data/postgresql.conf" >/dev/null
	# shellcheck disable=SC2064 # the values of now
	trap "as_run_user '$bin/pg_ctl' -D '$dir/data' -m immediate stop >/dev/null 2>&1 || true" EXIT
	pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 300 start >/dev/null ||
		{ tail -n 20 "$dir/server.log"; return 1; }
}

# The side loop: ALTER SYSTEM and a reload every $side_resize_interval
# seconds in one psql session, through $side_resize_values, until
# $dir/resize-loop.stop exists.  Sets side_pid (psql's, for wait).
start_side_resize() {
	say "resizing walscale.insert_locks every ${side_resize_interval}s ($side_resize_values) while the suites run at $cfg"
	{
		set +eE
		trap - ERR
		n=0
		while [ ! -e "$dir/resize-loop.stop" ]; do
			for v in $side_resize_values; do
				[ -e "$dir/resize-loop.stop" ] && break
				n=$((n + 1))
				# a psql that ended leaves nobody to write to: stop
				printf 'ALTER SYSTEM SET walscale.insert_locks = %s;\nSELECT pg_reload_conf();\n\\echo reload %d\n' \
					"$v" "$n" 2>/dev/null || exit 0
				sleep "$side_resize_interval"
			done
		done
	} | {
		trap - ERR
		pg "$bin/psql" -X -q -At -d postgres -v ON_ERROR_STOP=1 >"$dir/resize-loop.out" 2>"$dir/resize-loop.err"
	} &
	side_pid=$!
}

# Stop it, set the configuration's count back, and judge what it did.
stop_side_resize() {
	local rc=0 reloads resizes logged settled=0 detail
	touch "$dir/resize-loop.stop"
	wait "$side_pid" || rc=$?
	reloads=$(grep -c '^reload ' "$dir/resize-loop.out" || true)
	resizes=$(pgq -c "SELECT resizes FROM walscale_settings" || echo 0)
	logged=$(grep -c 'walscale: WAL insertion locks resized from' "$dir/server.log" || true)
	pgq -c "ALTER SYSTEM RESET walscale.insert_locks" -c "SELECT pg_reload_conf()" >/dev/null || rc=1
	for _ in $(seq 1 300); do
		[ "$(pgq -c "SELECT insert_locks = $locks AND insert_locks_configured = $locks FROM walscale_settings" || true)" = t ] &&
			{ settled=1; break; }
		sleep 0.2
	done
	detail="$resizes resizes ($logged logged) in $reloads reloads"
	[ "$settled" = 1 ] || detail="$detail, not back at $locks"
	[ "$rc" = 0 ] || detail="$detail, psql exit $rc"
	if [ "$rc" = 0 ] && [ ! -s "$dir/resize-loop.err" ] && [ "$settled" = 1 ] &&
		[ "$resizes" -ge "$side_resize_min" ] && [ "$logged" -ge "$side_resize_min" ]; then
		record "resizes during suites" "$cfg" ok "$detail" $((SECONDS - side_start))
	else
		head -n 20 "$dir/resize-loop.err"
		record "resizes during suites" "$cfg" FAIL "$detail (min $side_resize_min)" $((SECONDS - side_start))
	fi
}

# src/test/regress and src/test/isolation at configuration $1 ("none": the
# server without walscale, regress alone), through their make targets.
run_suites() {
	local cfg=$1 locks=${1%%/*} s side_start=$SECONDS
	dir=$(scratch_dir "${scratch_prefix:-suites}-${cfg//\//-}")
	# not the end of a pipeline, a subshell: start_cluster sets port and the
	# trap that stops the cluster
	if [ "$cfg" = none ]; then start_cluster </dev/null; else start_cluster < <(config_lines "$cfg"); fi

	if [ "$cfg" != none ]; then
		# the server runs with the settings asked for
		pgq -c "CREATE EXTENSION walscale" >/dev/null
		# on 17, which has no fast-path lock groups, fastpath_groups is NULL
		# whatever the setting: the setting is compared there
		s=$(pgq -c "SELECT insert_locks || '/' || insert_lock_attempts || '/' || CASE WHEN current_setting('server_version_num')::int >= 180000 THEN fastpath_groups::text WHEN fastpath_groups IS NULL THEN current_setting('walscale.fastpath_groups') END FROM walscale_settings")
		if [ "$s" != "$cfg" ] || [ "$(pgq -c 'SELECT count(*) FROM walscale_stats WHERE active')" != "$locks" ]; then
			record settings "$cfg" FAIL "walscale_settings says $s" 0
			return
		fi
		[ "$side_resize" = 0 ] || start_side_resize
	fi

	if has_suite regress; then
		say "src/test/regress (installcheck-parallel) at $cfg: about a minute"
		check regress "$cfg" "$dir/regress.out" pg make --no-print-directory -C "$build/src/test/regress" \
			installcheck-parallel EXTRA_REGRESS_OPTS="--outputdir=$dir/regress"
		# the heap and the B-tree indexes that the suite left are intact
		[ "$cfg" = none ] || check "amcheck(regression)" "$cfg" "$dir/amcheck.out" pg "$bin/pg_amcheck" \
			-d regression --install-missing --heapallindexed --no-dependent-toast --progress
	fi
	if has_suite isolation && [ "$cfg" != none ]; then
		say "src/test/isolation (installcheck-prepared-txns) at $cfg: about a minute"
		check isolation "$cfg" "$dir/isolation.out" pg make --no-print-directory -C "$build/src/test/isolation" \
			installcheck-prepared-txns NO_TEMP_INSTALL=1 EXTRA_REGRESS_OPTS="--outputdir=$dir/isolation"
	fi

	if [ "$cfg" != none ]; then
		if [ "$side_resize" != 0 ]; then
			stop_side_resize
			# locks active only between the suites' checkpoints: one more
			pgq -c CHECKPOINT >/dev/null
		fi
		# every active lock taken by the checkpoints' all-locks path, and
		# WAL through the insertion locks
		s=$(pgq -c "SELECT count(*) FILTER (WHERE active) = $locks
			AND min(exclusive_acquisitions) FILTER (WHERE active) > 0
			AND sum(acquisitions) > 10000 FROM walscale_stats")
		if [ "$s" = t ]; then
			record "counters after suites" "$cfg" ok "all locks ($locks) taken exclusively" 0
		else
			record "counters after suites" "$cfg" FAIL "walscale_stats unexpected" 0
		fi
	fi

	# a clean shutdown and restart, and nothing alarming in the server log
	local rc=0 alarms
	pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 300 stop >/dev/null || rc=1
	if [ "$cfg" != none ]; then
		pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 300 start >/dev/null || rc=1
		[ "$(pgq -c 'SELECT count(*) FROM walscale_stats WHERE active' || true)" = "$locks" ] || rc=1
		pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 300 stop >/dev/null || rc=1
	fi
	# (without walscale, its start-up line would be an alarm too)
	alarms='PANIC|TRAP:|too many LWLocks taken|terminated by signal|was terminated by exception'
	[ "$cfg" != none ] || alarms="$alarms|fast-path lock groups per backend"
	if grep -E "$alarms" "$dir/server.log" >"$dir/alarms.log"; then
		head -n 20 "$dir/alarms.log"
		rc=1
	fi
	record "server log, restart" "$cfg" "$([ $rc = 0 ] && echo ok || echo FAIL)" "no PANIC/crash/LWLock error: $([ $rc = 0 ] || echo "see ")$dir/server.log" 0
}

# ---------------------------------------------------------------------------
# src/test/recovery: its own installcheck target, run from a copy of its t/
# (the build tree belongs to root) with TEMP_CONFIG and PROVE_TESTS.
# ---------------------------------------------------------------------------

# Every start of a node that reached "ready to accept connections" loaded
# walscale: its postmaster logs "LOG:  walscale: " when it initialises shared
# memory, before "starting PostgreSQL" and again after "reinitializing"; a
# promotion is no new start, and starts that failed are not judged (with
# log_error_verbosity = verbose, each line has its SQLSTATE).  Prints
# "LOGS STARTS", then the logs that fail, one a line.  $2: patterns of the
# logs of nodes of the stock server, where walscale's line is its warning
# of observe mode.
check_node_logs() {
	local f p ready missing logs=0 starts=0 stock
	local -a bad=()
	for f in "$1"/*.log; do
		case ${f##*/} in regress_log_* | "*.log") continue ;; esac
		stock=0
		for p in ${2:-}; do
			# shellcheck disable=SC2254 # a pattern
			case ${f##*/} in $p) stock=1 ;; esac
		done
		read -r ready missing < <(awk -v stock="$stock" '
			(!stock && /LOG:  (00000: )?walscale: /) ||
			(stock && /WARNING:  (0A000: )?walscale is in observe mode/) { pending = 1; current = 1 }
			/LOG:  (00000: )?starting PostgreSQL/ { current = pending; pending = 0 }
			/all server processes terminated; reinitializing/ { current = 0; pending = 0 }
			/database system is ready to accept/ { ready++; if (!current) missing++ }
			END { print ready + 0, missing + 0 }' "$f")
		[ "$ready" -gt 0 ] || continue
		logs=$((logs + 1)) starts=$((starts + ready))
		[ "$missing" = 0 ] || bad+=("${f##*/}")
	done
	echo "$logs $starts"
	[ ${#bad[@]} = 0 ] || printf '%s\n' "${bad[@]}"
}

run_recovery() {
	local cfg=$1 tests t m
	# on the test flavor, so that its tests of injection points run
	ensure_injection_server >/dev/null
	install_extension_into "$PG_TESTED"
	bin=$PG_TESTED/bin build=$PG_TESTED/build
	for m in test_decoding pg_stat_statements pg_prewarm; do
		[ -f "$("$bin/pg_config" --pkglibdir)/$m.so" ] || make -s -C "$build/contrib/$m" install >/dev/null
	done
	dir=$(scratch_dir "recovery-${cfg//\//-}")
	# src/test's layout: 027_stream_regress.pl runs ../regress's schedule
	mkdir -p "$dir/recovery" "$dir/perl"
	cp -a "$build/src/test/recovery/t" "$dir/recovery/"
	cp "$repo/scripts/perl/000_walscale_settings.pl" "$dir/recovery/t/"
	cp "$repo/scripts/perl/WalscalePreload.pm" "$dir/perl/"
	ln -s "$build/src/test/regress" "$dir/regress"
	config_lines "$cfg" >"$dir/temp_config"
	tests=$(cd "$dir/recovery" && echo t/0*.pl)
	if [ "$recovery_tests" != all ]; then
		tests=t/000_walscale_settings.pl
		for t in $recovery_tests; do tests="$tests t/${t#t/}"; done
	fi
	[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	say "src/test/recovery at $cfg: $(echo "$tests" | wc -w) test files, about 6 minutes"
	# the Makefile of the build tree, run where the copy is: top_builddir
	# relative to it, and the build's generated headers taken as they are
	check recovery "$cfg" "$dir/recovery/prove.out" pg env TEMP_CONFIG="$dir/temp_config" WALSCALE_EXPECT="$cfg" \
		PG_TEST_PORT_DIR="$dir/portlock" PG_TEST_EXTRA= PERL5OPT=-MWalscalePreload \
		PERL5LIB="$dir/perl:$build/src/test/perl" \
		make --no-print-directory -C "$dir/recovery" -f "$build/src/test/recovery/Makefile" installcheck \
		top_builddir="$(realpath --relative-to="$dir/recovery" "$build")" NO_GENERATED_HEADERS=1 \
		PROVE_TESTS="$tests" PROVE_FLAGS="--timer -j ${PROVE_JOBS:-1}"

	record_node_logs "walscale on every node" "$cfg" "$dir/recovery/tmp_check/log"
}

# The check "$1" at "$2": walscale was loaded at every start of every node
# whose log is in $3; $4: check_node_logs' pattern of stock nodes.
record_node_logs() {
	local logs starts
	local -a bad
	{
		read -r logs starts || true
		mapfile -t bad
	} < <(check_node_logs "$3" "${4:-}")
	if [ "${logs:-0}" = 0 ]; then
		record "$1" "$2" FAIL "no node log shows a start" 0
	elif [ ${#bad[@]} = 0 ]; then
		record "$1" "$2" ok "$logs node logs, $starts starts" 0
	else
		printf '    without walscale: %s\n' "${bad[@]}"
		record "$1" "$2" FAIL "${#bad[@]} node logs without walscale's line" 0
	fi
}

# ---------------------------------------------------------------------------
# The WAL tools: the TAP suites of src/bin's tools (their installcheck, as
# src/test/recovery's) and contrib's test_decoding and pg_walinspect (their
# check: pg_regress' temporary instances with their own --temp-config and
# TEMP_CONFIG, then test_decoding's isolation and TAP tests), on the test
# flavor, each from a copy of its directory.
# ---------------------------------------------------------------------------
waltools_all="pg_basebackup pg_rewind pg_waldump pg_walsummary pg_combinebackup pg_resetwal pg_upgrade test_decoding pg_walinspect"
# pg_upgrade's 002 from the stock server to the patched one and back, and
# from stock 17
waltools_cross="pg_upgrade-from-stock pg_upgrade-to-stock pg_upgrade-from-stock17"

# The test flavor, with walscale and the contrib modules the suites load.
use_test_flavor() {
	local m
	ensure_injection_server >/dev/null
	install_extension_into "$PG_TESTED"
	bin=$PG_TESTED/bin build=$PG_TESTED/build
	for m in test_decoding pg_stat_statements pg_prewarm pg_walinspect pg_visibility; do
		[ -f "$("$bin/pg_config" --pkglibdir)/$m.so" ] || make -s -C "$build/contrib/$m" install >/dev/null
	done
}

# The first test of a contrib module's pg_regress and isolation runs, in
# their temporary instances (which pg_regress removes with their logs when
# the run passes): walscale is loaded there with TEMP_CONFIG's settings.
walscale_loaded_tests() {
	local d=$1 cfg=$2 q
	q="SELECT insert_locks || '/' || insert_lock_attempts || '/' ||
	CASE WHEN current_setting('server_version_num')::int >= 180000
		THEN fastpath_groups::text
		WHEN fastpath_groups IS NULL
		THEN current_setting('walscale.fastpath_groups') END = '$cfg' AS walscale_settings
	FROM walscale_settings;"
	mkdir -p "$d/sql" "$d/expected"
	printf '%s\n' "-- scripts/test-postgres.sh: walscale is preloaded, at TEMP_CONFIG's settings" \
		"CREATE EXTENSION walscale;" "$q" "DROP EXTENSION walscale;" >"$d/sql/walscale_loaded.sql"
	printf '%s\n' "-- scripts/test-postgres.sh: walscale is preloaded, at TEMP_CONFIG's settings" \
		"CREATE EXTENSION walscale;" "$q" " walscale_settings " "-------------------" " t" "(1 row)" "" \
		"DROP EXTENSION walscale;" >"$d/expected/walscale_loaded.out"
	[ -d "$d/specs" ] || return 0
	printf '%s\n' "# scripts/test-postgres.sh: walscale is preloaded, at TEMP_CONFIG's settings" \
		"setup { CREATE EXTENSION walscale; }" "teardown { DROP EXTENSION walscale; }" "session s1" \
		"step s1_settings { $q }" >"$d/specs/walscale_loaded_iso.spec"
	printf '%s\n' "Parsed test spec with 1 sessions" "" "starting permutation: s1_settings" \
		"step s1_settings: $q" "walscale_settings" "-----------------" "t                " "(1 row)" "" \
		>"$d/expected/walscale_loaded_iso.out"
}

# One tool's suites at configuration $2; $3: 1 to add 000_walscale_settings.pl
# to its t/.
run_waltool() {
	local tool=$1 cfg=$2 settings=$3 sub d stock_logs=
	local -a cross=()
	case $tool in
	test_decoding | pg_walinspect) sub=contrib/$tool ;;
	pg_upgrade-*-stock*) sub=src/bin/pg_upgrade ;;
	*) sub=src/bin/$tool ;;
	esac
	d=$dir/src/bin/$tool
	[ "${sub%%/*}" = src ] || d=$dir/$sub
	mkdir -p "$d"
	if [ "${sub%%/*}" = contrib ]; then
		# their Makefile, with walscale's test first and the installed
		# server as the temporary installation; top_builddir set in the
		# file, not passed down to the sub-makes of pg_regress and
		# isolationtester in the build tree
		cp -a "$build/$sub/." "$d/"
		walscale_loaded_tests "$d" "$cfg"
		cat >"$d/walscale.mk" <<-MK
			override top_builddir := $(realpath --relative-to="$d" "$build")
			override NO_TEMP_INSTALL := 1
			include $build/$sub/Makefile
			override with_temp_install = PATH="\$(bindir):\$\$PATH"
			REGRESS := walscale_loaded \$(REGRESS)
			ifdef ISOLATION
			ISOLATION := walscale_loaded_iso \$(ISOLATION)
			endif
		MK
		set -- -f "$d/walscale.mk" check
	else
		cp -a "$build/$sub/t" "$d/"
		set -- -f "$build/$sub/Makefile" installcheck \
			top_builddir="$(realpath --relative-to="$d" "$build")"
	fi
	# across servers, 002 (006, the other file that takes an old server,
	# moves tablespaces, which pg_upgrade refuses within one catalog
	# version): the old cluster of the one, loaded from a dump of stock's
	# regression database (its oldinstall and olddump), upgraded by the
	# other's pg_upgrade, which PATH gives (bindir)
	case $tool in
	pg_upgrade-from-stock)
		settings=0 stock_logs='*_old_node.log'
		cross=(oldinstall="$PG_STOCK" olddump="$olddump")
		set -- "$@" PROVE_TESTS=t/002_pg_upgrade.pl
		;;
	pg_upgrade-from-stock17)
		settings=0 stock_logs='*_old_node.log'
		cross=(oldinstall="$PG_STOCK17" olddump="$olddump17")
		set -- "$@" PROVE_TESTS=t/002_pg_upgrade.pl
		;;
	pg_upgrade-to-stock)
		settings=0 stock_logs='*_new_node.log'
		cross=(oldinstall="$PG_TESTED" olddump="$olddump")
		set -- "$@" PROVE_TESTS=t/002_pg_upgrade.pl bindir="$PG_STOCK/bin" \
			REGRESS_SHLIB="$PG_STOCK/build/src/test/regress/regress.so"
		;;
	esac
	[ "$settings" = 0 ] || [ ! -d "$d/t" ] || cp "$repo/scripts/perl/000_walscale_settings.pl" "$d/t/"
	[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	check "$tool" "$cfg" "$d/make.out" pg env "${cross[@]}" TEMP_CONFIG="$dir/temp_config" WALSCALE_EXPECT="$cfg" \
		PG_TEST_PORT_DIR="$dir/portlock" PG_TEST_EXTRA= PERL5OPT=-MWalscalePreload \
		PERL5LIB="$dir/perl:$build/src/test/perl" \
		make --no-print-directory -C "$d" "$@" NO_GENERATED_HEADERS=1 \
		PROVE_FLAGS="--timer -j ${PROVE_JOBS:-1}"
	# pg_regress' instances are gone: walscale_loaded above was their check
	[ ! -d "$d/t" ] || record_node_logs "$tool nodes" "$cfg" "$d/tmp_check/log" "$stock_logs"
}

# pg_upgrade's dump of the old version's regression database (its TESTING):
# the stock server $1's src/test/regress, in its build tree, then its
# pg_dumpall; prints the dump's path.
waltools_olddump() {
	local bin=$1/bin build=$1/build dir port name
	name=stock$("$bin/pg_config" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
	dir=$(scratch_dir "waltools-olddump-$name")
	start_cluster </dev/null
	say "src/test/regress on $name, for pg_upgrade's dump: about a minute" >&2
	check "regress for dump" "$name" "$dir/regress.out" pg make --no-print-directory \
		-C "$build/src/test/regress" installcheck-parallel EXTRA_REGRESS_OPTS="--outputdir=$dir/regress" >&2 ||
		return 1
	pg "$bin/pg_dumpall" -f "$dir/olddump.sql" || return 1
	pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 300 stop >/dev/null || return 1
	echo "$dir/olddump.sql"
}

# The stock 17 server (built once, cached) with walscale: sets PG_STOCK17.
use_stock17() {
	say "the stock PostgreSQL 17 build: about 5 minutes on 2 idle cores when it is not cached"
	PG_MAJOR=17 "$repo/scripts/build-postgres.sh" --stock >&2
	PG_STOCK17=$(readlink -f "$repo/.pg/stock-pg17")
	install_extension_into "$PG_STOCK17"
}

# The tools $2 (comma-separated; "all" for $waltools_all) at configuration $1.
run_waltools() {
	local cfg=$1 tools=${2//,/ } tool settings=1 olddump='' olddump17=''
	use_test_flavor
	# isolationtester and regress.so (pg_upgrade's pg_regress run), when the
	# flavor's build has not made them yet
	make -s -C "$build/src/test/isolation" all >/dev/null
	make -s -C "$build/src/test/regress" all >/dev/null
	tools=" $tools "
	tools=${tools/ all / $waltools_all }
	dir=$(scratch_dir "waltools-${cfg//\//-}")
	# the tree's layout: pg_upgrade's 002 runs ../../../src/test/regress
	mkdir -p "$dir/perl" "$dir/src/test"
	ln -s "$build/src/test/regress" "$dir/src/test/regress"
	cp "$repo/scripts/perl/WalscalePreload.pm" "$dir/perl/"
	config_lines "$cfg" >"$dir/temp_config"
	say "WAL tools at $cfg:${tools% }"
	case $tools in *" pg_upgrade-from-stock "* | *" pg_upgrade-to-stock "*) olddump=$(waltools_olddump "$PG_STOCK") ;; esac
	case $tools in *" pg_upgrade-from-stock17 "*)
		use_stock17
		olddump17=$(waltools_olddump "$PG_STOCK17")
		;;
	esac
	for tool in $tools; do
		case " $waltools_all $waltools_cross " in
		*" $tool "*) ;;
		*) record "$tool" "$cfg" FAIL "not one of: $waltools_all $waltools_cross" 0; continue ;;
		esac
		# the settings test once per configuration, in the first TAP suite
		run_waltool "$tool" "$cfg" "$settings"
		[ "$tool" = pg_walinspect ] || settings=0
	done
}

# ---------------------------------------------------------------------------
# walscale's own suites through its Makefile (PGXS installcheck), from a copy
# of the repository, against server $1; the rest: make's arguments.
# ---------------------------------------------------------------------------
walscale_make() {
	local prefix=$1
	shift
	[ -f "$dir/Makefile" ] || {
		cp -a "$repo/Makefile" "$repo/walscale.conf" "$repo/sql" "$repo/expected" "$repo/t" "$repo/monitoring" \
			"$repo"/walscale*.c "$repo"/walscale*.h "$dir/"
		[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	}
	pg env PG_STOCK="$PG_STOCK" PG_PATCHED="$prefix" ${PG_OLDER_CORE:+PG_OLDER_CORE="$PG_OLDER_CORE"} \
		${PG_OLDER_CORE_VERSION:+PG_OLDER_CORE_VERSION="$PG_OLDER_CORE_VERSION"} \
		WALSCALE_CORE_VERSION="$(core_version_of_patches)" "${own_env[@]}" \
		make --no-print-directory -C "$dir" installcheck PG_CONFIG="$prefix/bin/pg_config" \
		PROVE_FLAGS="--timer ${PROVE_FLAGS:-}" "$@"
}
own_env=()

run_robustness() {
	dir=$(scratch_dir robustness)
	own_env=(WALSCALE_POSTMASTER_KILLS="${WALSCALE_POSTMASTER_KILLS:-25}"
		WALSCALE_BACKEND_KILLS="${WALSCALE_BACKEND_KILLS:-25}" WALSCALE_LOOP_SECONDS="${WALSCALE_LOOP_SECONDS:-90}"
		WALSCALE_LOAD_SECONDS="${WALSCALE_LOAD_SECONDS:-60}" WALSCALE_STORM_SECONDS="${WALSCALE_STORM_SECONDS:-30}"
		WALSCALE_STORM_CYCLES="${WALSCALE_STORM_CYCLES:-6}" WALSCALE_TEST_TIME_LIMIT="${WALSCALE_TEST_TIME_LIMIT:-3600}")
	say "walscale robustness tests t/1NN_*.pl, long settings: about 15 minutes"
	check "walscale t/1NN" long "$dir/prove.out" walscale_make "$PG_PATCHED" REGRESS= PROVE_TESTS='t/1*.pl'
}

# ---------------------------------------------------------------------------
# memcheck: the patched server and walscale built with ASan/UBSan.
# ---------------------------------------------------------------------------
asan_env() {
	echo "ASAN_OPTIONS=print_stacktrace=1:abort_on_error=1:detect_leaks=0:detect_stack_use_after_return=0:log_path=$dir/asan"
	echo "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$dir/ubsan"
}

# The sanitized flavor (as PostgreSQL's CI builds it), walscale in it, and
# both instrumented, or this would prove nothing.
use_sanitized() {
	PG_ASAN=$(build_instrumented_server asan --enable-debug --enable-cassert --without-icu \
		CFLAGS="-Og -ggdb -fno-omit-frame-pointer -fsanitize=address,undefined -fsanitize=alignment -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined")
	# the sanitized pg_config and the like leak on exit: not what this seeks
	export ASAN_OPTIONS=detect_leaks=0
	bin=$PG_ASAN/bin build=$PG_ASAN/build suite_tag=ASan/UBSan scratch_prefix=memcheck side_resize=0
	suite_env() { asan_env; }
}
run_memcheck_setup() {
	local so
	use_sanitized
	install_extension_into "$PG_ASAN"
	so="$("$bin/pg_config" --pkglibdir)/walscale.so"
	# (grep reads to the end: grep -q could fail the pipeline by SIGPIPE)
	if ldd "$bin/postgres" | grep libasan >/dev/null && nm -D "$so" | grep __asan_report >/dev/null &&
		nm -D "$so" | grep __ubsan_handle >/dev/null; then
		record instrumented - ok "postgres and walscale.so: ASan+UBSan" 0
	else
		record instrumented - FAIL "postgres or walscale.so lacks ASan/UBSan" 0
	fi
}

# No report file, and no report in the log $1.
sanitizer_verdict() {
	local cfg=$1 rc=0 f
	for f in "$dir"/asan.* "$dir"/ubsan.*; do
		[ -f "$f" ] || continue
		echo "==== $f"
		head -n 40 "$f"
		rc=1
	done
	grep -E 'ERROR: AddressSanitizer|runtime error:|TRAP:|terminated by signal' "$2" \
		>"$dir/sanitizer-lines" 2>/dev/null || true
	[ ! -s "$dir/sanitizer-lines" ] || { head -n 20 "$dir/sanitizer-lines"; rc=1; }
	record "ASan/UBSan reports" "$cfg" "$([ $rc = 0 ] && echo ok || echo FAIL)" "$([ $rc = 0 ] && echo none || echo "in $dir")" 0
}
run_memcheck_suites() {
	use_sanitized
	suites="regress isolation"
	run_suites "$1"
	sanitizer_verdict "$1" "$dir/server.log"
}
run_memcheck_own() {
	use_sanitized
	dir=$(scratch_dir memcheck-walscale)
	check "walscale sql" "$(walscale_conf_settings)" "$dir/regress.out" walscale_make "$PG_ASAN" TAP_TESTS=
	sanitizer_verdict "$(walscale_conf_settings)" "$dir/log/postmaster.log"
}

# valgrind: scripts/test-valgrind.sh, its result lines shown.
run_valgrind() {
	dir=$(scratch_dir valgrind-run)
	say "valgrind: walscale's pg_regress suite and a WAL load under valgrind's memcheck"
	check valgrind - "$dir/test-valgrind.out" "$repo/scripts/test-valgrind.sh"
	sed -n 's/^test-valgrind: result: /    /p' "$dir/test-valgrind.out"
}

# ---------------------------------------------------------------------------
# The EXEC_BACKEND flavor: built once, walscale and the test modules
# installed, then each suite (a subshell) on it.
# ---------------------------------------------------------------------------
use_execbackend() {
	ensure_execbackend_server >/dev/null
	bin=$PG_EXEC/bin build=$PG_EXEC/build suite_tag=EXEC_BACKEND scratch_prefix=execbackend
}
run_execbackend_setup() {
	local start=$SECONDS
	say "the EXEC_BACKEND build: about 5 minutes on 2 idle cores when it is not cached"
	use_execbackend
	install_extension_into "$PG_EXEC"
	install_test_modules_into "$PG_EXEC"
	record "build, install" - ok "$(basename "$PG_EXEC")" $((SECONDS - start))
}
run_execbackend_suites() {
	use_execbackend
	suites="regress isolation"
	run_suites "$1"
}
run_execbackend_own() {
	local tests=$execbackend_tests
	use_execbackend
	dir=$(scratch_dir execbackend-walscale)
	own_env=(WALSCALE_EXEC_BACKEND=required)
	say "walscale's pg_regress suite and TAP files on the EXEC_BACKEND build: about 12 minutes"
	check "walscale sql" "$(walscale_conf_settings)" "$dir/regress.out" walscale_make "$PG_EXEC" TAP_TESTS=
	[ "$tests" != all ] || tests=$(cd "$repo" && echo t/*.pl)
	check "walscale TAP" short "$dir/prove.out" walscale_make "$PG_EXEC" REGRESS= PROVE_TESTS="$tests"
}

say "mode $mode: $suites; expected duration $expected"
if has_suite regress || has_suite isolation; then
	for cfg in $suite_configs; do suite regress+isolation "$cfg" run_suites "$cfg"; done
fi
if has_suite recovery; then
	for cfg in $recovery_configs; do suite recovery "$cfg" run_recovery "$cfg"; done
fi
if has_suite waltools; then
	for run in $waltools_runs; do suite "WAL tools" "${run%%=*}" run_waltools "${run%%=*}" "${run#*=}"; done
fi
if has_suite robustness; then suite "walscale t/1NN" long run_robustness; fi
if has_suite memcheck; then
	suite "memcheck build" - run_memcheck_setup
	for cfg in ${WALSCALE_MEMCHECK_CONFIGS:-1024/3/1024 1/3/1}; do
		suite "regress+isolation (ASan/UBSan)" "$cfg" run_memcheck_suites "$cfg"
	done
	suite "walscale sql (ASan/UBSan)" - run_memcheck_own
fi
if has_suite valgrind; then suite valgrind - run_valgrind; fi
if has_suite execbackend; then
	suite "build, install (EXEC_BACKEND)" - run_execbackend_setup
	suite "regress (EXEC_BACKEND)" none run_execbackend_suites none
	for cfg in ${WALSCALE_EXECBACKEND_CONFIGS:-1024/3/1024}; do
		suite "regress+isolation (EXEC_BACKEND)" "$cfg" run_execbackend_suites "$cfg"
	done
	suite "walscale suites (EXEC_BACKEND)" - run_execbackend_own
fi
finished=1
