#!/usr/bin/env bash
# CI's run of walscale's suites on PostgreSQL 17: PG_MAJOR=17 make test
# without PostgreSQL's own suites (make test-postgres runs those on 17),
# whenever the four PostgreSQL 17 servers it needs (patched, stock,
# injection points, previous core version) are in the build cache.  They
# take about 20 minutes from nothing on two cores and the suites about 20
# more, which on a fresh machine would take CI from the hour it must stay
# under; there CI says that it skipped them and how to run them.
# WALSCALE_CI_PG17=1 builds them anyway, WALSCALE_CI_PG17=0 skips the step.
#
#   scripts/ci-pg17.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib.sh
PG_MAJOR=17 . scripts/lib.sh

mode=${WALSCALE_CI_PG17:-auto}
case "$mode" in
	0)
		echo "ci-pg17: skipped (WALSCALE_CI_PG17=0)"
		exit 0
		;;
	1 | auto) ;;
	*)
		echo "ci-pg17: WALSCALE_CI_PG17 must be 0, 1 or auto, not '$mode'" >&2
		exit 2
		;;
esac

# The prefix of each build make test needs, without building anything:
# the same options as scripts/lib.sh's ensure_* functions give.
cached() {
	local prefix
	prefix=$(PG_MAJOR=17 scripts/build-postgres.sh --print-prefix "$@") &&
		[ -f "$prefix/.complete" ]
}
older_patches=$(grep -l '^+#define[[:space:]]*WALSCALE_CORE_VERSION' patches/pg17/*.patch | tail -n 1)
older_patches=$(($(find patches/pg17 -name '*.patch' | sort | grep -n -F -x "$older_patches" | cut -d: -f1) - 1))
if [ "$mode" = auto ] && ! { cached && cached --stock &&
	cached --flavor injection -- "${injection_configure_opts[@]}" &&
	cached --flavor older --patches "$older_patches" -- --enable-tap-tests --enable-debug --without-icu; }; then
	echo "ci-pg17: the PostgreSQL 17 servers of this source and core patch are not all cached"
	echo "ci-pg17: (they take about 20 minutes from nothing): walscale's suites on 17 are skipped;"
	echo "ci-pg17: PG_MAJOR=17 make test runs them, WALSCALE_CI_PG17=1 makes CI build them"
	exit 0
fi
start=$(date +%s)
status=0
PG_MAJOR=17 WALSCALE_SKIP_POSTGRES_SUITES=1 scripts/test.sh || status=$?
echo "ci-pg17: walscale's suites on PostgreSQL 17 took $(($(date +%s) - start)) s"
exit $status
