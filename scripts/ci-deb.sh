#!/usr/bin/env bash
# CI's test of the Debian packages: make test-deb without walscale's TAP
# suites (make test runs those against the source builds), whenever the two
# server builds (patched and stock) are in the package cache.  Whatever else
# is missing (postgresql-common, the chroots, postgresql-18-walscale) is
# built: a minute or two.  The two servers take about 50 minutes from
# nothing on two cores, which would take a fresh machine's CI from about 30
# minutes to about 80, past the 60 it must stay under, so there CI says
# that it skipped them and how to run them; WALSCALE_CI_DEB=1 builds them
# anyway, WALSCALE_CI_DEB=0 skips the step.
#
#   scripts/ci-deb.sh
set -euo pipefail
cd "$(dirname "$0")/.."

mode=${WALSCALE_CI_DEB:-auto}
case "$mode" in
	0)
		echo "ci-deb: skipped (WALSCALE_CI_DEB=0)"
		exit 0
		;;
	1 | auto) ;;
	*)
		echo "ci-deb: WALSCALE_CI_DEB must be 0, 1 or auto, not '$mode'" >&2
		exit 2
		;;
esac

# the cache directories of the current keys, without building anything
dirs=$(scripts/build-deb.sh --print-dirs)
eval "$dirs"
if [ "$mode" = auto ] && { [ ! -f "$server/.complete" ] || [ ! -f "$stock/.complete" ]; }; then
	echo "ci-deb: the server packages of this PostgreSQL source and core patch are not cached"
	echo "ci-deb: (they take about 50 minutes from nothing): the package test is skipped;"
	echo "ci-deb: make deb && make test-deb runs it, WALSCALE_CI_DEB=1 makes CI build them"
	exit 0
fi
start=$(date +%s)
WALSCALE_DEB_TAP=0 scripts/test-deb.sh
echo "ci-deb: make deb and make test-deb (WALSCALE_DEB_TAP=0) took $(($(date +%s) - start)) s"
