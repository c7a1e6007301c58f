#!/usr/bin/env bash
# Part of make test: check, in seconds and without building anything, that
# every mutation (mutations/*.mutation, see mutations/README.md) would still
# be planted by make mutate: the tests it names exist, and each find text
# occurs exactly once in its file, block after block.  make mutate takes far
# too long to run on every change, so without this a rewrite of the code a
# mutation finds would leave it stale, its bug no longer planted, until the
# next full run.  The check is make mutate's own (scripts/mutation-apply.pl
# check), so the two cannot disagree.
#
#   scripts/check-mutations.sh [TREE [MUTATION-FILE...]]
#
# TREE: the patched PostgreSQL source that the server mutations apply to,
# the build tree of the patched server (PREFIX/build, as
# scripts/build-postgres.sh leaves it); make test gives "$PG_TESTED/build",
# the tree make mutate copies.  Without it (or with ""), only the mutations
# of walscale's own files are checked.  MUTATION-FILE: default
# mutations/*.mutation.
#
# Output: a line per stale or malformed mutation, then
# "check-mutations: N passed, M failed", with how many are not for TREE's
# PostgreSQL major version (a "postgres:" line) and so not checked.  Exit
# status: 0, 1 when a mutation failed, 2 on a usage error.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$0")/lib.sh"

die() { echo "check-mutations: $*" >&2; exit 2; }
applier() { perl "$repo/scripts/mutation-apply.pl" "$@"; }

tree=${1:-}
[ $# = 0 ] || shift
# a wrong tree would fail every server mutation: say that once instead
if [ -n "$tree" ] && [ ! -d "$tree/src/backend" ]; then
	die "$tree is not a PostgreSQL source tree (no src/backend in it)"
fi
if [ $# = 0 ]; then
	set -- "$repo"/mutations/*.mutation
	[ -f "$1" ] || die "no mutations/*.mutation"
fi

passed=0 failed=0 unchecked=0 other_major=0
for m in "$@"; do
	[ -f "$m" ] || die "no mutation file $m"
	if [ -z "$tree" ]; then
		# which file it mutates decides whether it can be checked; a
		# malformed file fails here already
		if ! out=$(applier parse "$m" 2>&1); then
			echo "check-mutations: $out"
			failed=$((failed + 1))
			continue
		fi
		case ${out%%$'\n'*} in
		walscale*.c) ;;
		*) unchecked=$((unchecked + 1)); continue ;;
		esac
	fi
	rc=0
	out=$(applier check "$m" "$repo" "$tree" 2>&1) || rc=$?
	case $rc in
	0) passed=$((passed + 1)) ;;
	3) other_major=$((other_major + 1)) ;;
	*)
		echo "check-mutations: $out"
		failed=$((failed + 1))
		;;
	esac
done

[ $unchecked = 0 ] ||
	echo "check-mutations: $unchecked mutations of server files not checked (no PostgreSQL source tree given)"
if [ $other_major = 0 ]; then
	echo "check-mutations: $passed passed, $failed failed"
else
	echo "check-mutations: $passed passed, $failed failed, $other_major not for PostgreSQL $(sed -n 's/^#define PG_MAJORVERSION "\([0-9]*\)"/\1/p' "$tree/src/include/pg_config.h")"
fi
[ $failed = 0 ]
