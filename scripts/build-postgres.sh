#!/usr/bin/env bash
# Build PostgreSQL 18 from source, with walscale's core patch (default) or
# without it (--stock), into a cache outside the clone, and link it into
# .pg/ of the clone.  Cached builds are keyed by PostgreSQL version and by the
# hash of the patches and of this script's configure options, so a changed
# patch or a new 18.x is rebuilt and an unchanged one is reused.  With
# PG_MAJOR=17, PostgreSQL 17 with patches/pg17 instead, linked with the
# suffix -pg17 (.pg/walscale-pg17, .pg/stock-pg17, .pg/walscale-NAME-pg17).
#
#   scripts/build-postgres.sh [--stock] [--print-prefix]
#   scripts/build-postgres.sh --flavor NAME [--patches N] [--print-prefix] -- CONFIGURE-ARG...
#
# A flavor is the patched server configured with CONFIGURE-ARG... instead of
# the usual options (the sanitizer and valgrind builds), linked as
# .pg/walscale-NAME.  With --patches N it has only the first N patches (an
# older core version).
#
# Environment:
#   PG_MAJOR        18 (the default) or 17; no other is fetchable here
#   PG_SOURCE       a PostgreSQL 18 (or PG_MAJOR) source tree or tarball to
#                   use instead of Debian's source package (downloaded with
#                   apt-get source)
#   WALSCALE_CACHE  where builds are cached (default /var/cache/walscale as
#                   root, ~/.cache/walscale otherwise)
#   JOBS            parallel make jobs (default: number of CPUs)
set -euo pipefail

main() {
repo=$(cd "$(dirname "$0")/.." && pwd)
variant=walscale
print_prefix=0
flavor_opts=0
npatches=
configure_opts=(--enable-tap-tests --enable-debug --without-icu)
usage="usage: $0 [--stock] [--print-prefix] | --flavor NAME [--patches N] [--print-prefix] -- CONFIGURE-ARG..."
while [ $# -gt 0 ]; do
	case "$1" in
		--stock) variant=stock ;;
		--print-prefix) print_prefix=1 ;;
		--flavor)
			[[ "${2:-}" =~ ^[a-z0-9]+$ ]] || { echo "$usage" >&2; exit 2; }
			variant=walscale-$2
			shift
			;;
		--patches)
			[[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || { echo "$usage" >&2; exit 2; }
			npatches=$2
			shift
			;;
		--)
			shift
			configure_opts=("$@")
			flavor_opts=1
			break
			;;
		*) echo "$usage" >&2; exit 2 ;;
	esac
	shift
done
# configure arguments come with a flavor, and only with one
case "$variant:$flavor_opts" in
	walscale-*:1 | walscale:0 | stock:0) ;;
	*) echo "$usage" >&2; exit 2 ;;
esac
# fewer patches only for a flavor
[ -z "$npatches" ] || [[ "$variant" == walscale-* ]] || { echo "$usage" >&2; exit 2; }

# The major version, and what its links in .pg/ end with: nothing for 18,
# so that every name of an 18 build is what it was before 17 was added.
pg_major=${PG_MAJOR:-18}
case "$pg_major" in
	18) link_suffix= ;;
	17) link_suffix=-pg17 ;;
	*)
		echo "build-postgres: PostgreSQL ${pg_major} is not fetchable here: PG_MAJOR must be 18 (the default) or 17, the versions patches/ has a series for" >&2
		exit 2
		;;
esac

if [ "$(id -u)" = 0 ]; then
	cache=${WALSCALE_CACHE:-/var/cache/walscale}
else
	cache=${WALSCALE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/walscale}
fi
jobs=${JOBS:-$(nproc)}
mkdir -p "$cache/src"
log() { [ "$print_prefix" = 1 ] || echo "build-postgres: $*"; }

# Build dependencies, installed only when missing.
ensure_deps() {
	local pkgs=(build-essential bison flex libreadline-dev zlib1g-dev
		libipc-run-perl perl pkg-config patch)
	local missing=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "build-postgres: missing packages: ${missing[*]} (install them as root)" >&2
		exit 1
	fi
	log "installing ${missing[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Debian's source package of PostgreSQL 18 (or PG_MAJOR), through the
# deb-src entry of scripts/deb-src.sh.
. "$(dirname "$0")/deb-src.sh"
fetch_debian_source() {
	local t m=$pg_major
	t=$(ls "$cache"/src/postgresql-"$m"_"$m".*.orig.tar.* 2>/dev/null | sort -V | tail -n 1 || true)
	if [ -n "$t" ]; then
		echo "$t"
		return
	fi
	ensure_postgresql_deb_src "$m" || {
		echo "build-postgres: no deb-src entry provides postgresql-$m; set PG_SOURCE or run as root" >&2
		exit 1
	}
	(cd "$cache/src" && apt-get source --download-only -qq "postgresql-$m" >&2 2>/dev/null) ||
		(cd "$cache/src" && apt-get source --download-only "postgresql-$m" >&2) ||
		{ [ "$m" = 17 ] && fetch_debian_pool_source "$cache/src" postgresql-17 >&2; } ||
		{ echo "build-postgres: set PG_SOURCE to a PostgreSQL $m source" >&2; exit 1; }
	ls "$cache"/src/postgresql-"$m"_"$m".*.orig.tar.* | sort -V | tail -n 1
}

source_version() {
	local src=$1 m=$pg_major
	if [ -d "$src" ]; then
		sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$src/configure"
	else
		basename "$src" | sed -n "s/^postgresql\(-$m\)\{0,1\}[-_]\($m\(\.[0-9]*\|beta[0-9]*\|rc[0-9]*\)\).*\.tar\..*$/\2/p"
	fi
}

if [ -n "${PG_SOURCE:-}" ]; then
	source=$(readlink -f "$PG_SOURCE")
	[ -e "$source" ] || { echo "build-postgres: PG_SOURCE=$PG_SOURCE does not exist" >&2; exit 1; }
else
	[ "$print_prefix" = 1 ] || ensure_deps
	source=$(fetch_debian_source)
fi
version=$(source_version "$source")
case "$version" in
	"$pg_major"*) ;;
	*) echo "build-postgres: $source is not PostgreSQL $pg_major (version '${version}')" >&2; exit 1 ;;
esac

patches=()
if [ "$variant" != stock ]; then
	patches=("$repo"/patches/pg"$pg_major"/*.patch)
	if [ -n "$npatches" ]; then
		[ "$npatches" -le ${#patches[@]} ] ||
			{ echo "build-postgres: --patches $npatches, but there are ${#patches[@]} patches" >&2; exit 2; }
		patches=("${patches[@]:0:$npatches}")
	fi
fi
# The key covers what the patches change, not their commit messages, blob
# ids or git version signature, so rewording a message does not rebuild.
patch_changes() {
	awk '/^diff --git/ { d = 1 } /^-- $/ { d = 0 } d && !/^index / { print }' "$1"
}
key=$( { echo "${configure_opts[*]}"; for p in "${patches[@]}"; do patch_changes "$p"; done; } |
	sha256sum | cut -c1-12)
prefix="$cache/pg-$version-$variant-$key"

if [ "$print_prefix" = 1 ]; then
	echo "$prefix"
	exit 0
fi

link_into_clone() {
	mkdir -p "$repo/.pg"
	ln -sfn "$prefix" "$repo/.pg/$variant$link_suffix"
}

if [ -f "$prefix/.complete" ]; then
	log "$variant $version is built: $prefix"
	link_into_clone
	exit 0
fi

ensure_deps
exec 9>"$cache/.lock-$variant$link_suffix"
flock 9
# another run may have built it while this one waited for the lock
if [ -f "$prefix/.complete" ]; then
	log "$variant $version is built: $prefix"
	link_into_clone
	exit 0
fi
build="$prefix/build"
rm -rf "$prefix"
mkdir -p "$build"
log "building $variant PostgreSQL $version from $source into $prefix"
start=$(date +%s)
if [ -d "$source" ]; then
	cp -a "$source/." "$build/"
else
	tar -xf "$source" -C "$build" --strip-components=1
fi
for p in "${patches[@]}"; do
	if ! patch -d "$build" -p1 --forward --batch --quiet < "$p"; then
		echo "build-postgres: patch $(basename "$p") does not apply to PostgreSQL $version" >&2
		exit 1
	fi
	log "applied $(basename "$p")"
done
(
	cd "$build"
	# PostgreSQL generates its headers only in a top-level make (MAKELEVEL
	# 0): under make demo or make test the build would fail without them
	unset MAKELEVEL MAKEFLAGS MFLAGS
	./configure --prefix="$prefix" "${configure_opts[@]}" > configure.log 2>&1 ||
		{ tail -n 30 configure.log >&2; exit 1; }
	make -s -j"$jobs" > make.log 2>&1 || { tail -n 40 make.log >&2; exit 1; }
	make -s install >> make.log 2>&1
	for m in amcheck pg_walinspect; do
		make -s -C "contrib/$m" -j"$jobs" install >> make.log 2>&1
	done
	# the module that drives injection points, where they are compiled in
	if grep -q '^#define USE_INJECTION_POINTS 1' src/include/pg_config.h; then
		make -s -C src/test/modules/injection_points -j"$jobs" install >> make.log 2>&1
	fi
) || { echo "build-postgres: build failed, logs in $build" >&2; exit 1; }
touch "$prefix/.complete"
log "built $variant PostgreSQL $version in $(( $(date +%s) - start ))s"
link_into_clone
prune_old_builds
}

# Each patch change leaves a build of about 1 GB behind: keep the newest
# WALSCALE_CACHE_KEEP (default 3) of this variant, by completion time, and
# drop make mutate's copies of the builds that go.  Another clone whose .pg
# link pointed at a pruned build rebuilds it when next used.
prune_old_builds() {
	local keep=${WALSCALE_CACHE_KEEP:-3} old
	[[ "$keep" =~ ^[1-9][0-9]*$ ]] || { echo "build-postgres: WALSCALE_CACHE_KEEP must be a positive integer" >&2; return 1; }
	while read -r old; do
		[ -n "$old" ] && [ "$old" != "$prefix" ] || continue
		log "pruning the older build $old"
		rm -rf "$old" "$cache/mutate/$(basename "$old")"
	done < <(find "$cache" -maxdepth 1 -type d -regextype posix-extended \
			-regex ".*/pg-$pg_major\.[0-9]+-$variant-[0-9a-f]{12}" -printf '%p\n' |
		while read -r d; do
			printf '%s %s\n' "$(stat -c %Y "$d/.complete" 2>/dev/null || echo 0)" "$d"
		done | sort -rn | tail -n +$((keep + 1)) | cut -d' ' -f2-)
}

main "$@"
exit
