#!/usr/bin/env bash
# CI's run of walscale's suites on PostgreSQL 17: PG_MAJOR=17 make test
# with two of its four PostgreSQL 17 servers, the stock one and the
# patched one with injection points, on which walscale's suites run.  Left
# out, to keep CI from an empty cache within its hour: PostgreSQL's own
# suites (make test-postgres runs them on 17) and the plain patched server
# they run on, and the previous core version's server, so that t/015
# leaves out its steps on it; PG_MAJOR=17 make test runs all of them.
# WALSCALE_CI_PG17=0 skips the step; auto runs it only when the two servers
# are cached.
#
#   scripts/ci-pg17.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=lib.sh
PG_MAJOR=17 . scripts/lib.sh

mode=${WALSCALE_CI_PG17:-1}
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

# The prefix of each build the step needs, without building anything:
# the same options as scripts/lib.sh's ensure_* functions give.
cached() {
	local prefix
	prefix=$(PG_MAJOR=17 scripts/build-postgres.sh --print-prefix "$@") &&
		[ -f "$prefix/.complete" ]
}
if [ "$mode" = auto ] && ! { cached --stock &&
	cached --flavor injection -- "${injection_configure_opts[@]}"; }; then
	echo "ci-pg17: the PostgreSQL 17 servers of this source and core patch are not cached:"
	echo "ci-pg17: walscale's suites on 17 are skipped; WALSCALE_CI_PG17=1 builds them"
	exit 0
fi
start=$(date +%s)
status=0
PG_MAJOR=17 WALSCALE_SKIP_POSTGRES_SUITES=1 WALSCALE_TEST_OLDER_CORE=0 scripts/test.sh || status=$?
echo "ci-pg17: the two servers (when not cached) and walscale's suites on PostgreSQL 17 took $(($(date +%s) - start)) s"
exit $status
