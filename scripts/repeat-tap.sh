#!/usr/bin/env bash
# Run TAP files of make test N times in a row, each run as make test runs
# it (scripts/test.sh, walscale's suites only), and write one line per run:
# its exit status, seconds, the load average before and after, and prove's
# summary; then how many passed.  For a test whose outcome depends on
# timing, the rate of failure on the machine as it is loaded at the time:
# what docs/testing.md means by a test that must not fail one run in
# twenty.
#
#   scripts/repeat-tap.sh N OUT t/NNN_name.pl...
#
# Each run's whole output stays in OUT.runK.log.  The environment passes
# through to scripts/test.sh (WALSCALE_CACHE, PG_MAJOR, ...).
set -uo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 3 ] || ! [[ "$1" =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: scripts/repeat-tap.sh N OUT t/NNN_name.pl..." >&2
	exit 2
fi
n=$1 out=$2
shift 2
dirty=$(git status --porcelain --untracked-files=no | grep -q . && echo ", with uncommitted changes")
echo "$* x$n at $(git rev-parse --short HEAD)$dirty $(date -u +%FT%TZ) nproc=$(nproc)" > "$out"
passed=0
for i in $(seq 1 "$n"); do
	s=$(date +%s) l1=$(cut -d' ' -f1 /proc/loadavg)
	WALSCALE_SKIP_POSTGRES_SUITES=1 WALSCALE_TEST_OLDER_CORE=0 PROVE_TESTS="$*" \
		scripts/test.sh > "$out.run$i.log" 2>&1
	rc=$?
	e=$(date +%s) l2=$(cut -d' ' -f1 /proc/loadavg)
	[ $rc = 0 ] && passed=$((passed + 1))
	echo "run $i rc=$rc secs=$((e - s)) load_start=$l1 load_end=$l2 $(grep -E '^Result|Files=' "$out.run$i.log" | tr '\n' ' ')" >> "$out"
done
echo "$passed of $n runs passed" >> "$out"
[ "$passed" = "$n" ]
