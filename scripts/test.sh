#!/usr/bin/env bash
# make test: build what is missing, then run the pg_regress and TAP suites
# against the patched server, as an unprivileged user.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

# t/011 scrapes walscale's queries file through the exporter DBAs run,
# Debian's prometheus-postgres-exporter: installed here when missing, as
# build-postgres.sh installs the build's packages, so that a fresh machine
# runs t/011 instead of skipping it.  Not root, or no archive: it skips, and
# the last line says so.
ensure_exporter() {
	dpkg-query -W -f='${Status}' prometheus-postgres-exporter 2>/dev/null |
		grep -q 'install ok installed' && return 0
	[ "$(id -u)" = 0 ] || return 0
	echo "walscale: installing prometheus-postgres-exporter for t/011"
	{ apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			prometheus-postgres-exporter >/dev/null; } ||
		echo "walscale: prometheus-postgres-exporter could not be installed; t/011 will skip" >&2
}

# Only what the suites that run need: the plain patched server serves
# PostgreSQL's suites alone, and the previous core version's serves t/015's
# older-core steps, which WALSCALE_TEST_OLDER_CORE=0 leaves out (CI does on
# PostgreSQL 17, scripts/ci-pg17.sh, to stay within its hour).
skip_postgres_suites=${WALSCALE_SKIP_POSTGRES_SUITES:-0}
test_older_core=${WALSCALE_TEST_OLDER_CORE:-1}
skipped=()
ensure_exporter
if [ "$skip_postgres_suites" = 1 ]; then
	ensure_stock_server
else
	ensure_servers
fi
ensure_injection_server
if [ "$test_older_core" = 1 ]; then
	ensure_older_core_server
else
	PG_OLDER_CORE='' PG_OLDER_CORE_VERSION=''
	skipped+=("t/015's steps on the previous core version's server (WALSCALE_TEST_OLDER_CORE=0)")
fi

status=0
# make mutate is too slow to run on every change: check here, in seconds,
# that its mutations still apply to the code as it is, so that none goes
# stale unseen.  A failure fails make test but the suites still run; first,
# so that the last lines stay walscale's summary.
"$repo/scripts/check-mutations.sh" "$PG_TESTED/build" || status=1

# one module file, built against the stock server's headers, for the stock
# server (t/004), the patched one (PostgreSQL's suites below) and the
# previous core version's (t/015); walscale's own suites run on the test
# flavor, built against its headers for its injection points
install_extension_into "$PG_STOCK"
[ "$skip_postgres_suites" = 1 ] || copy_extension_into "$PG_STOCK" "$PG_PATCHED"
[ -z "$PG_OLDER_CORE" ] || copy_extension_into "$PG_STOCK" "$PG_OLDER_CORE"
install_extension_into "$PG_TESTED"
install_test_modules_into "$PG_TESTED"
ensure_run_user
make_test_cgroups

run=$(scratch_dir "test$pg_link_suffix")
cp -a "$repo/Makefile" "$repo/walscale.conf" "$repo/sql" "$repo/expected" "$repo/t" "$repo/monitoring" "$run/"
# the unit tests (t/010) compile walscale's sources; t/024 runs make sweep's
# report; t/026 builds and runs make bench's spinlock hand-over
cp -a "$repo"/walscale*.c "$repo"/walscale*.h "$run/"
mkdir -p "$run/bench"
cp -a "$repo/bench/sweep_report.py" "$repo/bench/report.py" "$repo/bench/spinlock-handover.c" "$run/bench/"
[ "$(id -u)" = 0 ] && chown -R "$run_user" "$run"

# PostgreSQL's own suites first, so that the last lines are walscale's summary
if [ "$skip_postgres_suites" = 1 ]; then
	skipped+=("PostgreSQL's suites (WALSCALE_SKIP_POSTGRES_SUITES=1)")
elif [ ! -x "$repo/scripts/test-postgres.sh" ]; then
	skipped+=("PostgreSQL's suites (no scripts/test-postgres.sh)")
else
	"$repo/scripts/test-postgres.sh" ci || status=$?
fi

# walscale's own suites run on the flavor with assertions and injection
# points; PostgreSQL's suites above ran on the plain patched build.
# WALSCALE_TAP=0 runs the pg_regress suite alone.
tap_args=()
if [ "${WALSCALE_TAP:-1}" = 0 ]; then
	tap_args=(TAP_TESTS=)
	skipped+=("walscale's TAP suites (WALSCALE_TAP=0)")
elif [ -n "${PROVE_TESTS:-}" ]; then
	skipped+=("the TAP files not in PROVE_TESTS=$PROVE_TESTS")
fi
echo "walscale: testing against $PG_TESTED (stock baseline $PG_STOCK${PG_OLDER_CORE:+, core version $PG_OLDER_CORE_VERSION $PG_OLDER_CORE})"
as_run_user_with_test_cgroups env PG_STOCK="$PG_STOCK" PG_PATCHED="$PG_TESTED" WALSCALE_INJECTION_POINTS=required \
	PG_OLDER_CORE="$PG_OLDER_CORE" PG_OLDER_CORE_VERSION="$PG_OLDER_CORE_VERSION" WALSCALE_OLDER_CORE="${PG_OLDER_CORE:+required}" \
	WALSCALE_CORE_VERSION="$(core_version_of_patches)" \
	make --no-print-directory -C "$run" installcheck PG_CONFIG="$PG_TESTED/bin/pg_config" "${tap_args[@]}" \
	PROVE_FLAGS="--timer ${PROVE_FLAGS:-}" 2>&1 | tee "$run/installcheck.out" || status=1
if [ $status != 0 ]; then
	for f in "$run"/regression.diffs "$run"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] && { echo "==== $f"; tail -n 60 "$f"; }
	done
	echo "walscale: tests failed (outputs kept in $run)"
fi

# The last lines: every suite that did not run, and why (a TAP file that
# skips itself says why in prove's line for it), so that a skip is never
# read as a pass.
while IFS= read -r line; do
	skipped+=("$line")
done < <(sed -n 's/^.*\(t\/[0-9A-Za-z_]*\.pl\) \.* *skipped: \(.*\)$/\1 (\2)/p' "$run/installcheck.out")
if [ ${#skipped[@]} = 0 ]; then
	echo "walscale: no suite skipped"
else
	for s in "${skipped[@]}"; do echo "walscale: skipped: $s"; done
fi
exit $status
