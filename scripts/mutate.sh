#!/usr/bin/env bash
# make mutate: mutation testing.  Each mutation (mutations/*.mutation, see
# mutations/README.md) changes a few lines of the patched PostgreSQL source or
# of walscale's own .c files; the server or the extension is rebuilt incrementally, the
# tests the mutation names are run against it, and the mutation is killed
# (a test failed), survived (all passed) or stale (it no longer applies or
# no longer builds).  The report goes to mutations/REPORT.md.
#
#   scripts/mutate.sh [MUTATION-FILE...]     (default: mutations/*.mutation)
#   make mutate [MUTATIONS="mutations/01-x.mutation ..."]
#
# The server is the injection-points flavor of the patched server
# (.pg/walscale-injection), or for a mutation whose "flavor:" line says so,
# the EXEC_BACKEND flavor (.pg/walscale-execbackend): code that only
# EXEC_BACKEND builds compile, or that only their children run, is mutated
# there.  A selection of both runs as one run per flavor (this script again,
# with MUTATE_FLAVOR), whose reports go one after the other into the report
# file.  A prefix and its build tree are never written:
# a copy of the build tree and of the installation is made once under
# $WALSCALE_CACHE/mutate/<prefix name>/ and reused while the prefix stays the
# same.  A mutation of a server file recompiles that file in the copy, relinks
# postgres and installs it into the copy's installation (DESTDIR); a mutation
# of one of walscale's .c files builds the extension from a scratch copy of the repository's
# files.  Before any mutation, the tests that the mutations name are run once
# on the unmutated server (the baseline); if one fails, nothing is mutated.
#
# Environment:
#   MUTATE_TIME_LIMIT   seconds for one mutation's tests, all together
#                       (default 600); past it the mutation is killed
#                       (timeout).  Each TAP file gets what is left as
#                       WALSCALE_TEST_TIME_LIMIT.
#   MUTATE_REPORT       where to write the report (default
#                       mutations/REPORT.md; empty: no report)
#   MUTATE_SKIP_BASELINE=1  skip the baseline run (for debugging this script
#                       only: a mutation run on a red suite proves nothing)
#   MUTATE_PREFIX       the server installation to mutate instead of the
#                       flavor's (it must have its build tree in
#                       PREFIX/build, as scripts/build-postgres.sh leaves it)
#   MUTATE_FLAVOR       injection or execbackend: run only the given
#                       mutations of that flavor (set by the run that
#                       splits a selection of both)
#   JOBS                parallel make jobs for the rebuilds (default 2)
#
# Exit status: 0 when every mutation was killed, 1 when one survived or is
# stale, 2 on a usage or setup error or a malformed mutation file, 3 when the
# baseline run failed.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

# make mutate runs this under make: the rebuilds below are top-level makes
unset MAKELEVEL MAKEFLAGS MFLAGS

jobs=${JOBS:-2}
time_limit=${MUTATE_TIME_LIMIT:-600}
report=${MUTATE_REPORT-$repo/mutations/REPORT.md}
[[ "$time_limit" =~ ^[1-9][0-9]*$ ]] || { echo "mutate: MUTATE_TIME_LIMIT must be a positive number of seconds" >&2; exit 2; }

log() { echo "mutate: $*" >&2; }
die() { echo "mutate: $*" >&2; exit 2; }

# The find/replace applier (modes and exit status in the file), shared with
# scripts/check-mutations.sh: make test's check reads and applies the
# mutations exactly as this run does.
applier() { perl "$repo/scripts/mutation-apply.pl" "$@"; }

# --- the mutations -----------------------------------------------------------

selection="those given on the command line"
if [ $# = 0 ]; then
	set -- "$repo"/mutations/*.mutation
	[ -f "$1" ] || die "no mutations/*.mutation"
	selection="all of mutations/*.mutation"
fi
names=() files=() tests=() descs=() paths=() flavors=()
for m in "$@"; do
	[ -f "$m" ] || die "no mutation file $m"
	out=$(applier parse "$m") || exit 2
	mapfile -t fields <<<"$out"
	name=$(basename "$m" .mutation)
	for seen in "${names[@]}"; do
		[ "$seen" != "$name" ] || die "mutation $name is given twice"
	done
	names+=("$name")
	paths+=("$(readlink -f "$m")")
	files+=("${fields[0]}")
	tests+=("${fields[1]}")
	descs+=("${fields[2]:-}")
	flavors+=("${fields[3]}")
done
count=${#names[@]}

# --- one run per flavor --------------------------------------------------------

run_flavor=${MUTATE_FLAVOR:-}
mapfile -t selected_flavors < <(printf '%s\n' "${flavors[@]}" | sort -u)
if [ -z "$run_flavor" ] && [ -z "${MUTATE_PREFIX:-}" ] && [ ${#selected_flavors[@]} -gt 1 ]; then
	# injection first: the flavor make test builds anyway
	mapfile -t selected_flavors < <(printf '%s\n' "${selected_flavors[@]}" | sort -r)
	overall=0 killed=0 survived=0 stale=0 all=0
	parts=()
	for fl in "${selected_flavors[@]}"; do
		subset=()
		for i in "${!names[@]}"; do
			[ "${flavors[i]}" != "$fl" ] || subset+=("${paths[i]}")
		done
		part=$(mktemp)
		parts+=("$part")
		out=$(mktemp)
		rc=0
		# its own output as it comes, and kept for the total
		MUTATE_FLAVOR=$fl MUTATE_REPORT=${report:+$part} "$0" "${subset[@]}" | tee "$out" || rc=$?
		[ $rc -le $overall ] || overall=$rc
		if read -r k s t c < <(sed -n 's/^mutate: \([0-9]*\) killed, \([0-9]*\) survived, \([0-9]*\) stale of \([0-9]*\)$/\1 \2 \3 \4/p' "$out" | tail -n 1); then
			killed=$((killed + k)) survived=$((survived + s)) stale=$((stale + t)) all=$((all + c))
		fi
		rm -f "$out"
	done
	echo "mutate: ${selected_flavors[*]}: $killed killed, $survived survived, $stale stale of $all"
	if [ -n "$report" ]; then
		for part in "${parts[@]}"; do
			cat "$part"
			echo
		done >"$report.tmp"
		mv "$report.tmp" "$report"
	fi
	rm -f "${parts[@]}"
	exit $overall
fi
[ -n "$run_flavor" ] || run_flavor=${selected_flavors[0]}
# only this flavor's mutations (MUTATE_PREFIX: all, on that server)
if [ -z "${MUTATE_PREFIX:-}" ]; then
	for i in "${!names[@]}"; do
		[ "${flavors[i]}" = "$run_flavor" ] ||
			unset 'names[i]' 'paths[i]' 'files[i]' 'tests[i]' 'descs[i]' 'flavors[i]'
	done
	names=("${names[@]}") paths=("${paths[@]}") files=("${files[@]}")
	tests=("${tests[@]}") descs=("${descs[@]}") flavors=("${flavors[@]}")
	count=${#names[@]}
	[ "$count" -gt 0 ] || die "no mutation of flavor $run_flavor among those given"
fi
# the TAP files fail unless the server is the flavor they are told of
flavor_env=()
[ "$run_flavor" != execbackend ] || [ -n "${MUTATE_PREFIX:-}" ] ||
	flavor_env=(WALSCALE_EXEC_BACKEND=required)

# --- the server ----------------------------------------------------------------

if [ -n "${MUTATE_PREFIX:-}" ]; then
	prefix=$(readlink -f "$MUTATE_PREFIX")
else
	# lib.sh builds the flavor if it is missing and links it into .pg/
	case $run_flavor in
		injection) ensure_injection_server >&2 ;;
		execbackend) ensure_execbackend_server >&2 ;;
		*) die "unknown flavor $run_flavor" ;;
	esac
	[ -e "$repo/.pg/walscale-$run_flavor" ] ||
		die "no $run_flavor server at .pg/walscale-$run_flavor (scripts/build-postgres.sh --flavor $run_flavor -- ... builds it)"
	prefix=$(readlink -f "$repo/.pg/walscale-$run_flavor")
fi
[ -f "$prefix/.complete" ] || die "$prefix is not a complete build"
[ -f "$prefix/build/src/Makefile.global" ] || die "$prefix has no build tree in $prefix/build"

ensure_run_user
work="$cache/mutate/$(basename "$prefix")"
mkdir -p "$work"
exec 8>"$cache/mutate/.lock"
flock -n 8 || { log "another mutate run holds $cache/mutate/.lock; waiting"; flock 8; }

build="$work/build"           # the copy of the build tree
pristine="$work/pristine"     # the unmutated server files mutations touched
destdir="$work/install"       # the copy of the installation, as DESTDIR
pg="$destdir$prefix"          # ... and the server's prefix in it
logs="$work/logs"

# The copy is made once per build of the prefix: its .complete stamp says which.
stamp="$prefix $(stat -c %Y "$prefix/.complete")"
if [ "$(cat "$work/.ready" 2>/dev/null)" != "$stamp" ]; then
	log "copying the build tree and the installation of $prefix into $work (once)"
	rm -rf "$build" "$pristine" "$destdir" "$work/.ready"
	cp -a "$prefix/build" "$build"
	mkdir -p "$pg"
	# what the tests need besides the server; the injection_points test
	# module is built here if the flavor did not build it
	: >"$work/setup.log"
	for d in contrib/amcheck contrib/pg_walinspect src/test/modules/injection_points; do
		make -s -C "$build/$d" -j"$jobs" install DESTDIR="$destdir" >>"$work/setup.log" 2>&1 ||
			{ tail -n 30 "$work/setup.log" >&2; die "cannot install $d into $destdir"; }
	done
	echo "$stamp" >"$work/.ready"
fi
# What was installed into the flavor since (contrib modules the tests use):
# files newer there than here.  The server and walscale are installed below.
for d in bin include lib share; do
	[ ! -d "$prefix/$d" ] || cp -a -u "$prefix/$d" "$pg/"
done
# PostgreSQL finds its files relative to its binaries: the copy must say so
[ "$("$pg/bin/pg_config" --bindir)" = "$pg/bin" ] ||
	die "$pg/bin/pg_config reports bindir $("$pg/bin/pg_config" --bindir): the installation is not relocatable"
pg_version=$("$pg/bin/pg_config" --version)

older_env=()
# A copy of installation $1 at $2, made once per build of $1 (by the time
# its .complete was written), into which walscale is installed as built,
# mutated or not.
installation_copy() {
	local from=$1 to=$2 stamp d
	stamp="$from $(stat -c %Y "$from/.complete")"
	[ "$(cat "$to/.ready" 2>/dev/null)" = "$stamp" ] && return 0
	rm -rf "$to"
	mkdir -p "$to"
	for d in bin include lib share; do cp -a "$from/$d" "$to/"; done
	echo "$stamp" >"$to/.ready"
}

PG_STOCK=$(readlink -f "$repo/.pg/stock" 2>/dev/null || true)
if [ ! -f "$PG_STOCK/.complete" ] && [[ " ${tests[*]} " == *" t/004_"* || " ${tests[*]} " == *" t/015_"* ]]; then
	"$repo/scripts/build-postgres.sh" --stock >&2
	PG_STOCK=$(readlink -f "$repo/.pg/stock")
fi
# walscale built against the stock server's headers runs there (t/004)
if [ -f "$PG_STOCK/.complete" ]; then
	stock_copy="$work/stock"
	installation_copy "$PG_STOCK" "$stock_copy"
	PG_STOCK=$stock_copy
fi
# and on the older core version's server, as the same module file (t/015)
if [ -n "${stock_copy:-}" ] && [[ " ${tests[*]} " == *" t/015_"* ]]; then
	ensure_older_core_server >&2
	older_copy="$work/older"
	installation_copy "$PG_OLDER_CORE" "$older_copy"
	older_env=(PG_OLDER_CORE="$older_copy" PG_OLDER_CORE_VERSION="$PG_OLDER_CORE_VERSION"
		WALSCALE_OLDER_CORE=required)
fi
PG_PATCHED=$pg
export PG_STOCK PG_PATCHED
# the test modules of t/modules call the server's interface: built once
# per run against the copy (no mutation changes a header)
install_test_modules_into "$pg" || die "cannot build the test modules of t/modules against $pg"

# Put back every server file a mutation changed.  The copy gets a new mtime,
# so the next make recompiles the file (lazily: with the next mutation's).
restore_server_files() {
	local f rel
	[ -d "$pristine" ] || return 0
	while IFS= read -r -d '' f; do
		rel=${f#"$pristine"/}
		cmp -s "$f" "$build/$rel" || cp "$f" "$build/$rel"
	done < <(find "$pristine" -type f -print0)
}

# Rebuild the server in the copy and install it; the files make compiled go
# to $compiled.  $1: the log file.
rebuild_server() {
	local blog=$1
	make -C "$build/src/backend" -j"$jobs" >"$blog" 2>&1 || return 1
	compiled=$(sed -n 's/.* -c -o \([^ ]*\)\.o .*/\1.c/p' "$blog" | xargs -r -n1 basename | paste -sd' ')
	make -s -C "$build/src/backend" install DESTDIR="$destdir" >>"$blog" 2>&1
}

# Build walscale from the repository's files in a scratch directory, after
# applying $2 (a mutation file) to its file $3 (walscale.c, walscale_auto.c,
# ...) if given, and install it into the mutation server.  $1: the log file.
install_walscale() {
	local blog=$1 mutation=${2:-} file=${3:-walscale.c} dir="$work/walscale"
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a "$repo/Makefile" "$repo"/walscale*.c "$repo"/walscale*.h "$repo/walscale.control" "$repo"/walscale--*.sql "$dir/"
	if [ -n "$mutation" ]; then
		applier apply "$mutation" "$file" "$dir/$file" "$dir/$file" 2>>"$blog" || return 1
	fi
	make -C "$dir" install PG_CONFIG="$pg/bin/pg_config" >>"$blog" 2>&1 || return 1
	if [ -n "${stock_copy:-}" ]; then
		rm -rf "$dir-stock"
		cp -a "$dir" "$dir-stock"
		make -C "$dir-stock" clean PG_CONFIG="$stock_copy/bin/pg_config" >>"$blog" 2>&1
		make -C "$dir-stock" install PG_CONFIG="$stock_copy/bin/pg_config" >>"$blog" 2>&1
		[ -z "${older_copy:-}" ] || copy_extension_into "$stock_copy" "$older_copy"
	fi
}

# Stop what a killed test left running: the postmasters whose postmaster.pid
# lies in the test's directory, and every process running in it.
stop_leftovers() {
	local pidfile p cwd
	while IFS= read -r -d '' pidfile; do
		as_run_user "$pg/bin/pg_ctl" stop -D "$(dirname "$pidfile")" -m immediate >/dev/null 2>&1 || true
	done < <(find "$1" -name postmaster.pid -print0 2>/dev/null)
	# and the children that outlived their postmaster, in its data
	# directory: on the EXEC_BACKEND build, those that wait for a lock that
	# a crashed child held are still there when pg_regress has killed the
	# postmaster it waited for (174)
	for p in /proc/[0-9]*; do
		cwd=$(readlink "$p/cwd" 2>/dev/null) || continue
		case $cwd in "$1"/*) kill -9 "${p#/proc/}" 2>/dev/null || true ;; esac
	done
}

# Run one test ("regress" or t/NNN_name.pl) against the mutation server as
# the run user, in a fresh directory, in at most $3 seconds.  Its output goes
# to $2.log; on failure its logs are kept in $2.d/.  Returns 0 (passed),
# 1 (failed) or 124 (ran past the limit); $detail says why it failed.
run_test() {
	local test=$1 out=$2 limit=$3 dir rc=0
	local args=()
	dir=$(scratch_dir mutate)
	cp -a "$repo/Makefile" "$repo/walscale.conf" "$repo/sql" "$repo/expected" "$repo/t" "$repo/monitoring" "$dir/"
	# the sources as built and installed, mutated or not: the unit tests
	# (t/010) compile them
	cp -a "$work/walscale"/walscale*.c "$work/walscale"/walscale*.h "$dir/"
	# make sweep's report, which t/024 runs, as scripts/test.sh copies it
	mkdir -p "$dir/bench"
	cp -a "$repo/bench/sweep_report.py" "$repo/bench/report.py" "$dir/bench/"
	[ "$(id -u)" = 0 ] && chown -R "$run_user" "$dir"
	if [ "$test" = regress ]; then
		args=(TAP_TESTS=)
	else
		args=(REGRESS= PROVE_TESTS="$test" PROVE_FLAGS=--timer)
	fi
	# timeout signals its whole process group: make, prove and the test,
	# whose END blocks stop the servers it started.  Not with fd 8, this
	# run's lock: a server left behind would hold it for every later run.
	as_run_user_with_test_cgroups env PG_STOCK="$PG_STOCK" PG_PATCHED="$PG_PATCHED" \
		"${older_env[@]}" "${flavor_env[@]}" \
		WALSCALE_CORE_VERSION="$(core_version_of_patches)" WALSCALE_TEST_TIME_LIMIT="$limit" \
		WALSCALE_PG_BUILD="$build" \
		timeout --kill-after=30 $((limit + 60)) \
		make --no-print-directory -C "$dir" installcheck PG_CONFIG="$pg/bin/pg_config" "${args[@]}" \
		>"$out.log" 2>&1 8>&- || rc=$?
	detail=
	[ $rc = 0 ] && return 0
	stop_leftovers "$dir"
	rm -rf "$out.d"
	mkdir -p "$out.d"
	[ -f "$dir/regression.diffs" ] && cp "$dir/regression.diffs" "$out.d/"
	[ -d "$dir/tmp_check/log" ] && cp -a "$dir/tmp_check/log" "$out.d/"
	if [ $rc = 124 ] || [ $rc = 137 ] || grep -qs "time limit of [0-9]* s reached" "$out.log" "$out.d"/log/regress_log_* ; then
		detail="time limit reached"
		return 124
	fi
	# the first failed check: the first changed lines of pg_regress's diffs,
	# or the first "Failed test" of a TAP file's diagnostics
	if [ -f "$out.d/regression.diffs" ]; then
		detail=$(awk '/^(---|\+\+\+) / { next }
			/^[-+]/ { printf "%s%s", (n++ ? " / " : ""), $0; if (n == 2) exit }' \
			"$out.d/regression.diffs")
	else
		detail=$(grep -m1 -E '^not ok|Failed test|Bail out|BAIL OUT|Dubious|No such file' "$out.log" |
			sed 's/^#* *//' || true)
	fi
	detail=$(echo "$detail" | tr -s ' \t' ' ' | cut -c1-120)
	return 1
}

# --- the run -------------------------------------------------------------------

mkdir -p "$logs"
make_test_cgroups
run_start=$(date +%s)
log "server: $pg_version, $prefix (copy in $work)"

# Mutations that do not apply to the unmutated files are stale from the start.
status=() why=()
for i in "${!names[@]}"; do
	status[i]=
	# the check make test runs (scripts/check-mutations.sh), on this tree
	why[i]=$(applier check "${paths[i]}" "$repo" "$prefix/build" 2>&1) || status[i]=stale
done

# The unmutated server, and the baseline: every test a live mutation names.
restore_server_files
baseline_log="$logs/baseline"
rm -rf "$baseline_log"
mkdir -p "$baseline_log"
t0=$(date +%s)
compiled=
rebuild_server "$baseline_log/build.log" || { tail -n 30 "$baseline_log/build.log" >&2; die "the unmutated server does not build, see $baseline_log/build.log"; }
install_walscale "$baseline_log/build.log" || { tail -n 30 "$baseline_log/build.log" >&2; die "walscale does not build, see $baseline_log/build.log"; }
log "unmutated server built and installed in $(( $(date +%s) - t0 ))s${compiled:+ (compiled: $compiled)}"
union=()
for i in "${!names[@]}"; do
	[ -z "${status[i]}" ] || continue
	for t in ${tests[i]}; do
		[[ " ${union[*]} " == *" $t "* ]] || union+=("$t")
	done
done
baseline="not run (every mutation is stale)"
if [ ${#union[@]} -gt 0 ]; then
	if [ "${MUTATE_SKIP_BASELINE:-0}" = 1 ]; then
		baseline="skipped (MUTATE_SKIP_BASELINE=1)"
		log "baseline skipped: the results below prove nothing unless these pass: ${union[*]}"
	else
		t0=$(date +%s)
		log "baseline: ${union[*]} on the unmutated server"
		for t in "${union[@]}"; do
			rc=0
			run_test "$t" "$baseline_log/$(basename "$t" .pl)" "$time_limit" || rc=$?
			if [ $rc != 0 ]; then
				log "baseline: $t fails on the unmutated server${detail:+ ($detail)}; output in $baseline_log"
				log "no mutation is run on a red suite"
				exit 3
			fi
		done
		baseline="passed: ${union[*]} in $(( $(date +%s) - t0 ))s"
		log "baseline $baseline"
	fi
fi

killed=0 survived=0 stale=0
ran=() first=() details=() secs=() builds=() compiledl=()
for i in "${!names[@]}"; do
	name=${names[i]} f=${files[i]}
	ran[i]='' first[i]='' details[i]='' secs[i]=0 builds[i]='' compiledl[i]=''
	mlog="$logs/$name"
	rm -rf "$mlog"
	mkdir -p "$mlog"
	start=$(date +%s)
	if [ "${status[i]}" != stale ]; then
		restore_server_files
		compiled=
		ok=1
		if [[ $f == walscale*.c ]]; then
			# the server as it was, then the mutated extension
			rebuild_server "$mlog/build.log" || die "the unmutated server does not build, see $mlog/build.log"
			install_walscale "$mlog/build.log" "${paths[i]}" "$f" || ok=0
			compiled="$f${compiled:+ $compiled}"
		else
			if [ ! -f "$pristine/$f" ]; then
				mkdir -p "$(dirname "$pristine/$f")"
				cp -p "$prefix/build/$f" "$pristine/$f"
			fi
			if applier apply "${paths[i]}" "$f" "$pristine/$f" "$build/$f" 2>"$mlog/apply.log"; then
				if ! rebuild_server "$mlog/build.log" || ! install_walscale "$mlog/build.log"; then
					ok=0
				elif [[ " $compiled " != *" $(basename "$f") "* ]]; then
					# a file postgres is not built from: the mutation would
					# change nothing
					ok=0
					why[i]="the rebuild of src/backend did not compile $f"
				fi
			else
				ok=0
				why[i]=$(cat "$mlog/apply.log")
			fi
		fi
		builds[i]=$(( $(date +%s) - start ))
		compiledl[i]=$compiled
		if [ $ok = 0 ]; then
			status[i]=stale
			[ -n "${why[i]}" ] || why[i]="does not build, see $mlog/build.log"
		fi
	fi
	if [ "${status[i]}" = stale ]; then
		stale=$((stale + 1))
		secs[i]=$(( $(date +%s) - start ))
		echo "mutate: $name stale (${why[i]}) ${secs[i]}s"
		continue
	fi
	log "$name: ${f} mutated and built in ${builds[i]}s (compiled: ${compiled:-nothing}); testing ${tests[i]}"
	result=survived
	for t in ${tests[i]}; do
		left=$(( time_limit - ($(date +%s) - start - builds[i]) ))
		if [ $left -le 0 ]; then
			result="killed (timeout)"
			first[i]=$t
			details[i]="no time left for it"
			break
		fi
		ran[i]="${ran[i]:+${ran[i]} }$t"
		rc=0
		run_test "$t" "$mlog/$(basename "$t" .pl)" "$left" || rc=$?
		if [ $rc != 0 ]; then
			result=killed
			[ $rc = 124 ] && result="killed (timeout)"
			first[i]=$t
			details[i]=$detail
			break
		fi
	done
	status[i]=$result
	secs[i]=$(( $(date +%s) - start ))
	if [ "$result" = survived ]; then
		survived=$((survived + 1))
		echo "mutate: $name survived ${secs[i]}s"
	else
		killed=$((killed + 1))
		echo "mutate: $name $result (first failing: ${first[i]}) ${secs[i]}s"
	fi
done
# leave the sources unmutated; the next run rebuilds them
restore_server_files
summary="$killed killed, $survived survived, $stale stale of $count"
echo "mutate: $summary"

# --- the report ----------------------------------------------------------------

if [ -n "$report" ]; then
	commit=$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo unknown)
	git -C "$repo" diff --quiet HEAD -- . ':!mutations/REPORT.md' 2>/dev/null ||
		commit="$commit with uncommitted changes"
	cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
	mem=$(awk '/^MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)
	{
		echo "# Mutation testing report"
		echo
		echo "Written by \`scripts/mutate.sh\` (\`make mutate\`); see README.md here."
		echo
		echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC') (run took $(( $(date +%s) - run_start ))s)"
		echo "- commit: $commit"
		echo "- machine: $(uname -srm), $(nproc) CPUs ($cpu), $mem"
		echo "- server: $pg_version, $(basename "$prefix") (copy in \`$work\`)"
		echo "- mutations: $count, $selection"
		echo "- time limit per mutation: ${time_limit}s"
		echo "- baseline: $baseline"
		echo "- result: $summary"
		echo
		echo "| mutation | file | tests run | result | first failing | seconds (build) |"
		echo "|---|---|---|---|---|---|"
		for i in "${!names[@]}"; do
			if [ "${status[i]}" = stale ]; then
				res="stale: ${why[i]}"
			else
				res=${status[i]}
			fi
			ff=${first[i]:--}
			[ -n "${details[i]}" ] && ff="$ff: \`${details[i]//|/\\|}\`"
			echo "| ${names[i]} | ${files[i]} | ${ran[i]:--} | ${res//|/\\|} | $ff | ${secs[i]} (${builds[i]:--}) |"
		done
		echo
		echo "What each mutation does:"
		echo
		for i in "${!names[@]}"; do
			echo "- ${names[i]}: ${descs[i]}${compiledl[i]:+ (compiled: ${compiledl[i]})}"
		done
	} >"$report.tmp"
	mv "$report.tmp" "$report"
	log "report written to $report; logs in $logs"
fi

[ $survived = 0 ] && [ $stale = 0 ]
