#!/usr/bin/env bash
# Check that walscale's core patch compiles where pg_atomic_uint64 is
# PostgreSQL's fallback: a spinlock-emulated, 16-byte struct instead of an
# 8-byte integer.  That is 32-bit ARM (armhf), whose arch-arm.h defines
# PG_DISABLE_64_BIT_ATOMICS; on x86-64 the define does not reach the
# fallback, so the patched server is cross-configured for
# arm-linux-gnueabihf and the backend files the patch touches are compiled
# (not linked).  A struct with several such counters may no longer fit in
# PG_CACHE_LINE_SIZE there, which the patch's StaticAssertDecl()s catch.
#
#   scripts/check-fallback-atomics.sh               Debian's 18.x tarball plus patches/pg18
#   scripts/check-fallback-atomics.sh --tree DIR    an already patched tree, as it is
#   scripts/check-fallback-atomics.sh DIR           the same
#
# Nothing is written to the clone or to DIR: the sources are mirrored into
# $WALSCALE_CACHE/run/fallback-atomics/src and configured out of tree in
# .../build.  The mirror keeps the modification time of unchanged files,
# the build is configured with --enable-depend and a configure cache, so a
# rerun recompiles only what changed: a second or so when nothing did, 10 to
# 20 when the patches did, under a minute the first time.
#
# Environment:
#   PG_SOURCE       a PostgreSQL 18 source tree or tarball to patch instead of
#                   Debian's (as for scripts/build-postgres.sh; a tree that
#                   has patches/pg18 applied already is checked as it is)
#   WALSCALE_CACHE  where the scratch trees go (default /var/cache/walscale
#                   as root, ~/.cache/walscale otherwise)
#   JOBS            parallel make jobs for the generated headers (default 1)
#
# Prints a line per file, OK or FAILED with the compiler's errors, a line
# that shows the fallback is in effect, and at the end
# "fallback-atomics: N of M files compiled"; exits 1 when a file or the
# proof did not compile.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage="usage: $0 [--tree DIR | DIR]"
tree=
while [ $# -gt 0 ]; do
	case "$1" in
		--tree)
			[ -n "${2:-}" ] || { echo "$usage" >&2; exit 2; }
			tree=$2
			shift
			;;
		-h | --help) echo "$usage"; exit 0 ;;
		-*) echo "$usage" >&2; exit 2 ;;
		*)
			[ -z "$tree" ] || { echo "$usage" >&2; exit 2; }
			tree=$1
			;;
	esac
	shift
done

host=arm-linux-gnueabihf
configure_opts=(--host="$host" --without-readline --without-zlib --without-icu
	--enable-depend)
# The backend files walscale's patches change or whose structs they size;
# any other backend .c file that patches/pg18 touches is added to these.
files=(
	src/backend/access/transam/xlog.c
	src/backend/storage/lmgr/lwlock.c
	src/backend/storage/lmgr/lock.c
	src/backend/storage/lmgr/proc.c
	src/backend/utils/init/postinit.c
)
jobs=${JOBS:-1}
work="$cache/run/fallback-atomics"
src="$work/src"
build="$work/build"
start=$(date +%s)
log() { echo "fallback-atomics: $*"; }
die() { echo "fallback-atomics: $*" >&2; exit 1; }

# The cross compiler and the build tools, installed only when missing.
ensure_deps() {
	local pkgs=(gcc-"$host" libc6-dev-armhf-cross make bison flex perl patch
		rsync bzip2 xz-utils)
	local missing=()
	for p in "${pkgs[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages: ${missing[*]} (install them as root)"
	log "installing ${missing[*]}"
	{
		apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
	} > "$work/apt.log" 2>&1 || { tail -n 20 "$work/apt.log" >&2; die "apt-get failed; see $work/apt.log"; }
}

# Copy a source tree's files, not its build outputs or .git, into $2 so that
# files whose content did not change keep their modification time and make
# rebuilds only what depends on changed ones.  Build outputs are what the
# tree's .gitignore files name, as git would skip them.
mirror() {
	mkdir -p "$2"
	rsync -r --links --checksum --delete --filter=':- .gitignore' \
		--exclude=/.git "$1/" "$2/"
}

mkdir -p "$work"
ensure_deps
exec 9>"$work.lock"
flock 9
# PostgreSQL's makefiles act differently under an outer make (MAKELEVEL)
unset MAKELEVEL MAKEFLAGS MFLAGS

patches=("$repo"/patches/pg18/*.patch)
if [ -n "$tree" ]; then
	tree=$(readlink -f "$tree")
	if [ ! -f "$tree/configure" ] || [ ! -d "$tree/src/backend" ]; then
		die "$tree is not a PostgreSQL source tree"
	fi
	log "checking the tree $tree as it is"
	mirror "$tree" "$src"
	echo "tree $tree" > "$work/src.key"
else
	if [ -n "${PG_SOURCE:-}" ]; then
		source=$(readlink -f "$PG_SOURCE")
		[ -e "$source" ] || die "PG_SOURCE=$PG_SOURCE does not exist"
	else
		source=$(ls "$cache"/src/postgresql-18_18.*.orig.tar.* 2>/dev/null | sort -V | tail -n 1 || true)
		[ -n "$source" ] ||
			die "no Debian source in $cache/src: run scripts/build-postgres.sh once, or set PG_SOURCE"
	fi
	# a tarball with the same patches gives the same tree: reuse the mirror
	if [ -f "$source" ]; then
		key=$( { echo "$source"; stat -c '%s %Y' "$source"; cat "${patches[@]}"; } |
			sha256sum | cut -c1-16)
	else
		key=
	fi
	if [ -n "$key" ] && [ -d "$src" ] && [ "$(cat "$work/src.key" 2>/dev/null)" = "patches $key" ]; then
		log "sources unchanged since the last run: $(basename "$source") plus ${#patches[@]} patches"
	else
		rm -f "$work/src.key"
		stage="$work/stage"
		rm -rf "$stage"
		trap 'rm -rf "$stage"' EXIT
		mkdir -p "$stage"
		if [ -d "$source" ]; then
			mirror "$source" "$stage"
		else
			tar -xf "$source" -C "$stage" --strip-components=1
		fi
		# A tree that has the patches already (all of them) is checked as it
		# is: they come off in reverse order and go on again.
		applied=0
		if ! why=$(patch -d "$stage" -p1 --forward --batch --dry-run < "${patches[0]}" 2>&1); then
			for ((i = ${#patches[@]} - 1; i >= 0; i--)); do
				patch -d "$stage" -p1 -R --batch --quiet --no-backup-if-mismatch \
					< "${patches[i]}" >/dev/null 2>&1 || {
					echo "$why" >&2
					die "patch $(basename "${patches[0]}") does not apply to $source"
				}
			done
			applied=1
			log "patches/pg18 is already applied in $source"
		fi
		for p in "${patches[@]}"; do
			patch -d "$stage" -p1 --forward --batch --quiet --no-backup-if-mismatch < "$p" ||
				die "patch $(basename "$p") does not apply to $source"
			[ "$applied" = 1 ] || log "applied $(basename "$p") to $(basename "$source")"
		done
		mirror "$stage" "$src"
		rm -rf "$stage"
		[ -z "$key" ] || echo "patches $key" > "$work/src.key"
	fi
	# and whatever else the patches compile in the backend
	for f in $(sed -n 's|^+++ b/\(src/backend/.*\.c\)$|\1|p' "${patches[@]}" | sort -u); do
		[[ " ${files[*]} " == *" $f "* ]] || files+=("$f")
	done
fi
version=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$src/configure")
case "$version" in
	18*) ;;
	*) die "the source is not PostgreSQL 18 (version '${version}')" ;;
esac

# Configure out of tree, again only when configure or what it fills in
# changed.  The cache file outlives the build directory.
compiler=$("$host-gcc" --version | head -n 1)
cache_key=$(echo "${configure_opts[*]} $compiler" | sha256sum | cut -c1-16)
build_key=$( { echo "$cache_key"; cat "$src/configure" "$src/src/Makefile.global.in" \
	"$src/src/include/pg_config.h.in"; } | sha256sum | cut -c1-16)
if [ -f "$build/config.status" ] && [ "$(cat "$build/.walscale-key" 2>/dev/null)" = "$build_key" ]; then
	log "cross-configured build for $host is current: $build"
else
	[ "$(cat "$work/config.cache.key" 2>/dev/null)" = "$cache_key" ] || rm -f "$work/config.cache"
	rm -rf "$build"
	mkdir -p "$build"
	log "configuring PostgreSQL $version for $host in $build"
	run_configure() {
		(cd "$build" && "$src/configure" --cache-file="$work/config.cache" "${configure_opts[@]}") \
			> "$work/configure.log" 2>&1
	}
	if ! run_configure; then
		# a stale cache can fail a newer configure: once more without it
		rm -f "$work/config.cache"
		run_configure || { tail -n 30 "$work/configure.log" >&2; die "configure failed; see $work/configure.log and $build/config.log"; }
	fi
	echo "$cache_key" > "$work/config.cache.key"
	echo "$build_key" > "$build/.walscale-key"
fi

log "generating headers"
make -s -j"$jobs" -C "$build/src/backend" generated-headers > "$work/generated-headers.log" 2>&1 ||
	{ tail -n 30 "$work/generated-headers.log" >&2; die "make generated-headers failed; see $work/generated-headers.log"; }

# Paths in the compiler's messages, relative to the source tree.
tidy() { sed -e "s|$src/||g" -e "s|\.\./[./]*/src/src/|src/|g"; }

# Compile one file with the build's own rules and flags; a file whose object
# is up to date is not compiled again and its last messages are shown.
# Prints the compiler's output to stdout; fails when the file did not compile.
compile() {
	local dir=$1 obj=$2 out=$3
	if [ -f "$out" ] && make -q -C "$build/$dir" "$obj" >/dev/null 2>&1; then
		cat "$out"
		return 0
	fi
	rm -f "$out"
	if make -s -j1 -C "$build/$dir" "$obj" > "$out.tmp" 2>&1; then
		mv "$out.tmp" "$out"
		cat "$out"
	else
		cat "$out.tmp"
		rm -f "$out.tmp"
		return 1
	fi
}

# The proof: this compiles only against the spinlock-emulated, 16-byte
# pg_atomic_uint64, with the same flags as the files checked.
proof_dir=src/backend/access/transam
cat > "$work/proof.c.new" <<'PROOF'
/* check-fallback-atomics.sh: compiles only with the fallback atomics */
#include "postgres.h"
#include "port/atomics.h"

#ifndef PG_DISABLE_64_BIT_ATOMICS
#error "PG_DISABLE_64_BIT_ATOMICS is not defined"
#endif
#ifndef PG_HAVE_ATOMIC_U64_SIMULATION
#error "pg_atomic_uint64 is not the spinlock-emulated fallback"
#endif
StaticAssertDecl(sizeof(pg_atomic_uint64) == 16,
				 "pg_atomic_uint64 is not 16 bytes");
StaticAssertDecl(PG_CACHE_LINE_SIZE == 128,
				 "PG_CACHE_LINE_SIZE is not 128");
PROOF
# in the build directory, found before the source directory on make's VPATH
cmp -s "$work/proof.c.new" "$build/$proof_dir/walscale_fallback_proof.c" ||
	cp "$work/proof.c.new" "$build/$proof_dir/walscale_fallback_proof.c"
rm -f "$work/proof.c.new"
mkdir -p "$work/logs"
proof_ok=0
if proof_out=$(compile "$proof_dir" walscale_fallback_proof.o "$work/logs/proof.log"); then
	proof_ok=1
	log "fallback in effect: $host defines PG_DISABLE_64_BIT_ATOMICS and PG_HAVE_ATOMIC_U64_SIMULATION, sizeof(pg_atomic_uint64) == 16, PG_CACHE_LINE_SIZE == 128"
else
	log "fallback NOT in effect, the check proves nothing:"
	echo "$proof_out" | tidy | grep -E -A1 '(error|warning):|note: in expansion of macro' |
		grep -v '^--$' | head -n 20 | sed 's/^/    /'
fi

ok=0
for f in "${files[@]}"; do
	if [ ! -f "$src/$f" ]; then
		log "$f: FAILED, no such file"
		continue
	fi
	dir=${f%/*}
	obj=$(basename "${f%.c}").o
	out="$work/logs/${f//\//_}.log"
	if msgs=$(compile "$dir" "$obj" "$out"); then
		ok=$((ok + 1))
		rm -f "$out.failed"
		nwarn=$(echo "$msgs" | grep -c 'warning:' || true)
		if [ "$nwarn" = 0 ]; then
			log "$f: OK"
		else
			log "$f: OK, $nwarn warnings:"
			echo "$msgs" | tidy | grep 'warning:' | head -n 20 | sed 's/^/    /'
		fi
	else
		log "$f: FAILED:"
		# each message with its source line, and where a macro (as
		# StaticAssertDecl) was used
		echo "$msgs" | tidy | grep -E -A1 '(error|warning):|note: in expansion of macro' |
			grep -v '^--$' | head -n 30 | sed 's/^/    /'
		echo "    (all of it: $out.failed)"
		echo "$msgs" > "$out.failed"
	fi
done

log "$(( $(date +%s) - start )) s; logs in $work/logs"
log "$ok of ${#files[@]} files compiled"
[ "$ok" = "${#files[@]}" ] && [ "$proof_ok" = 1 ]
