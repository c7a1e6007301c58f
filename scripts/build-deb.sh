#!/usr/bin/env bash
# Build Debian packages of PostgreSQL NN (PG_MAJOR: 18, or 17 on trixie)
# with walscale's core patch, the same packages without it, and
# postgresql-NN-walscale, for bookworm or trixie (DEB_SUITE), in clean
# chroots of that suite made with debootstrap.  The server packages come
# from Debian's own postgresql-NN source package (its debian/ directory, its
# configure flags, all of contrib): unstable's for 18, trixie's for 17.  The
# patched one adds patches/pgNN/*.patch to debian/patches, which must apply
# without fuzz, and is versioned VERSION+walscaleN (N: the core patch's
# version) so that Debian's package of the same upstream version does not
# replace it.  On trixie every version gets the suffix +trixie1
# (scripts/lib-deb.sh).  postgresql-18 needs a newer postgresql-common-dev
# than bookworm has, so postgresql-common is built first from its newer
# source, for either suite and major.
#
#   scripts/build-deb.sh [--print-dirs | --then-print-dirs] [PART...]
#
# PART: common, server (the patched one), stock, extension; default all, in
# that order.  --print-dirs prints, without building, the cache directory
# of each part as PART=DIR on stdout; --then-print-dirs prints them once
# built (the build's messages go to stderr).
#
# Built packages are cached under $WALSCALE_DEB_CACHE/pkg/SUITE, keyed by
# the PostgreSQL source version and the hash of the patches (and of the
# extension's sources for postgresql-NN-walscale): a changed key rebuilds.
#
# Environment (see also scripts/lib-deb.sh):
#   JOBS   parallel make jobs in the server builds (default 2)
set -euo pipefail

main() {
. "$(dirname "$0")/lib-deb.sh"
. "$(dirname "$0")/deb-src.sh"
print_dirs=0
parts=()
for a in "$@"; do
	case "$a" in
		--print-dirs) print_dirs=1 ;;
		--then-print-dirs) print_dirs=2 ;;
		common | server | stock | extension) parts+=("$a") ;;
		*) echo "usage: $0 [--print-dirs | --then-print-dirs] [common|server|stock|extension]..." >&2; exit 2 ;;
	esac
done
[ ${#parts[@]} -gt 0 ] || parts=(common server stock extension)
jobs=${JOBS:-2}
log() { echo "build-deb: $*" >&2; }
trap chroot_umount_all EXIT
# one download of the sources at a time per cache; --print-dirs waits for
# no build (CI asks while one may be running)
exec 7>"$deb_cache/.lock-fetch"
flock 7
install_host_packages dpkg-dev debhelper quilt debootstrap zstd ca-certificates
fetch_sources
compute_keys
flock -u 7
print_part_dirs() {
	printf 'common=%s\nserver=%s\nextension=%s\nstock=%s\n' \
		"$common_dir" "$server_dir" "$ext_dir" "$stock_dir"
}
if [ "$print_dirs" = 1 ]; then
	print_part_dirs
	exit 0
fi
# one build at a time per cache
exec 8>"$deb_cache/.lock-build"
flock 8
summary=()
for part in "${parts[@]}"; do
	case "$part" in
		common) build_common ;;
		server) build_server walscale "$server_dir" ;;
		extension) build_extension ;;
		stock) build_server stock "$stock_dir" ;;
	esac
done
prune_old_packages
log "packages:"
for part in "${parts[@]}"; do
	d=$(part_dir "$part")
	log "  $part ($(cat "$d/build-time")): $d"
	for f in "$d"/*.deb; do log "    $(basename "$f")"; done
done
for s in "${summary[@]}"; do log "$s"; done
[ "$print_dirs" != 2 ] || print_part_dirs
}

part_dir() {
	case "$1" in
		common) echo "$common_dir" ;;
		server) echo "$server_dir" ;;
		extension) echo "$ext_dir" ;;
		stock) echo "$stock_dir" ;;
	esac
}


newest_source_version() {
	apt-cache showsrc "$1" 2>/dev/null | sed -n 's/^Version: //p' | sort -V | tail -n 1
}

# apt-get source --download-only, retried: the archive has been seen to
# answer 404 for a .dsc while its tarball is there.
download_source() {
	local pkg=$1 version=$2 try
	for try in 1 2 3; do
		(cd "$deb_cache/src" && apt-get source --download-only -qq "$pkg=$version" >/dev/null 2>&1) && return 0
		sleep 5
	done
	return 1
}

# Debian's postgresql-NN source package: the newest version the deb-src
# index names, or, when the mirror no longer serves that one, the newest
# before it that it serves (scripts/deb-src.sh).
fetch_sources() {
	ensure_postgresql_deb_src "$deb_pg_major" ||
		{ echo "build-deb: no deb-src entry provides $pg_pkg" >&2; exit 1; }
	pg_debver=$(newest_source_version "$pg_pkg")
	case "$pg_debver" in
		"$deb_pg_major".*) ;;
		*) echo "build-deb: no deb-src entry provides $pg_pkg $deb_pg_major.x (got '${pg_debver}')" >&2; exit 1 ;;
	esac
	if [ ! -f "$deb_cache/src/${pg_pkg}_${pg_debver#*:}.dsc" ]; then
		log "downloading $pg_pkg $pg_debver"
		if ! download_source "$pg_pkg" "$pg_debver"; then
			log "apt-get source $pg_pkg=$pg_debver failed"
			fetch_debian_pool_source "$deb_cache/src" "$pg_pkg" ||
				{ echo "build-deb: no $pg_pkg source could be fetched" >&2; exit 1; }
			pg_debver=$pool_source_version
		fi
	fi
	pg_upstream=${pg_debver%-*}
	pg_upstream=${pg_upstream#*:}
	pg_dsc="$deb_cache/src/${pg_pkg}_${pg_debver#*:}.dsc"
	pg_orig=$(ls "$deb_cache/src/${pg_pkg}_${pg_upstream}.orig.tar."* | head -n 1)
	pg_debian=$(ls "$deb_cache/src/${pg_pkg}_${pg_debver#*:}.debian.tar."* | head -n 1)

	common_ver=$(newest_source_version postgresql-common)
	[ -n "$common_ver" ] || { echo "build-deb: no deb-src entry provides postgresql-common" >&2; exit 1; }
	# a native package: one tarball, which is all the build needs
	common_tar=$(ls "$deb_cache/src/postgresql-common_${common_ver}.tar."* 2>/dev/null | head -n 1 || true)
	if [ -z "$common_tar" ]; then
		log "downloading postgresql-common $common_ver"
		download_source postgresql-common "$common_ver" ||
			log "apt-get source postgresql-common=$common_ver reported an error (a missing .dsc?); using its tarball"
		common_tar=$(ls "$deb_cache/src/postgresql-common_${common_ver}.tar."* 2>/dev/null | head -n 1 || true)
		[ -n "$common_tar" ] ||
			{ echo "build-deb: could not download postgresql-common $common_ver's source" >&2; exit 1; }
	fi
}

# What the patches change, not their commit messages (as build-postgres.sh).
patch_changes() {
	awk '/^diff --git/ { d = 1 } /^-- $/ { d = 0 } d && !/^index / { print }' "$1"
}

# The extension's sources, which postgresql-NN-walscale is built from.
ext_files() {
	(cd "$repo" && ls -d Makefile LICENSE README.md walscale.control walscale*.c walscale*.h \
		walscale--*.sql walscale.conf sql expected debian)
}

# The extension's version: ext_ver, debian/changelog's, which must be
# walscale.control's default_version with a Debian revision; ext_pkg_ver,
# the suite's package version (ext_ver with deb_version_suffix).
extension_versions() {
	local upstream
	upstream=$(sed -n "s/^default_version *= *'\(.*\)'.*/\1/p" "$repo/walscale.control")
	ext_ver=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
	case "$ext_ver" in
		"$upstream"-*) ;;
		*) echo "build-deb: debian/changelog is at $ext_ver, walscale.control at $upstream: add a changelog entry" >&2; exit 1 ;;
	esac
	ext_pkg_ver="$ext_ver$deb_version_suffix"
}

# Put a debian/changelog entry for the suite at the top of changelog $1:
# source package $2 at version $3, dated $4, its lines the rest.
prepend_changelog_entry() {
	local file=$1 pkg=$2 version=$3 date=$4 line
	shift 4
	{
		echo "$pkg ($version) $deb_suite; urgency=medium"
		echo
		for line in "$@"; do echo "$line"; done
		echo
		echo " -- walscale packaging <walscale@localhost>  $date"
		echo
		cat "$file"
	} >"$file.new"
	mv "$file.new" "$file"
}

# The date of debian/changelog's newest entry: a suite's entry for the
# extension takes it, so that its source package depends on its inputs alone.
newest_changelog_date() {
	dpkg-parsechangelog -l "$repo/debian/changelog" -S Date
}

compute_keys() {
	local recipe p
	patches=("$repo"/patches/pg"$deb_pg_major"/*.patch)
	[ -e "${patches[0]}" ] || { echo "build-deb: no patches in patches/pg$deb_pg_major" >&2; exit 1; }
	core_ver=$(core_version_of_patches)
	[ -n "$core_ver" ] || { echo "build-deb: the patches define no WALSCALE_CORE_VERSION" >&2; exit 1; }
	server_ver="${pg_debver}+walscale${core_ver}${deb_version_suffix}"
	stock_ver="${pg_debver}${deb_version_suffix}"
	recipe="nocheck nodoc-arch-only noddebs $deb_suite"
	common_dir="$deb_pkgs/postgresql-common_${common_ver}-$(echo "$recipe" | sha256sum | cut -c1-12)"
	key=$( { echo "$recipe $pg_debver $core_ver"; for p in "${patches[@]}"; do patch_changes "$p"; done; } |
		sha256sum | cut -c1-12)
	server_dir="$deb_pkgs/${pg_pkg}_${server_ver}-$key"
	stock_dir="$deb_pkgs/${pg_pkg}_${stock_ver}-$(echo "$recipe $pg_debver stock" | sha256sum | cut -c1-12)"
	extension_versions
	# for another major than 18, also how debian/ is made for it
	key=$( { echo "$recipe source+binary $stock_dir";
		[ "$deb_pg_major" = 18 ] || declare -f debian_dir_for_major; cd "$repo" && ext_files | sort |
		xargs -I{} find {} -type f | sort | xargs sha256sum; } | sha256sum | cut -c1-12)
	ext_dir="$deb_pkgs/$pg_pkg-walscale_${ext_pkg_ver}-$key"
}

# Packages a later part installs: fail clearly when its part was not built.
need_part() {
	[ -f "$(part_dir "$1")/.complete" ] ||
		{ echo "build-deb: the $1 packages are not built yet (scripts/build-deb.sh $1)" >&2; exit 1; }
}

build_common() {
	local work start
	if [ -f "$common_dir/.complete" ]; then
		log "postgresql-common $common_ver is built: $common_dir"
		return
	fi
	start=$(date +%s)
	log "building postgresql-common $common_ver"
	install_host_packages debhelper dpkg-dev
	work="$deb_cache/scratch/postgresql-common"
	rm -rf "$work" "$common_dir.tmp"
	mkdir -p "$work/src" "$common_dir.tmp"
	tar -xf "$common_tar" -C "$work/src" --strip-components=1
	# architecture-independent scripts only: the host's debhelper builds them
	if ! (cd "$work/src" && "${nice_cmd[@]}" dpkg-buildpackage -b -uc -us -d) >"$work/build.log" 2>&1; then
		tail -n 30 "$work/build.log" >&2
		echo "build-deb: postgresql-common failed to build, log in $work/build.log" >&2
		exit 1
	fi
	mv "$work"/*.deb "$common_dir.tmp/"
	finish_part "$common_dir" "$start" "postgresql-common $common_ver"
	rm -rf "$work"
}

finish_part() {
	local dir=$1 start=$2 what=$3
	elapsed "$start" >"$dir.tmp/build-time"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	touch "$dir/.complete"
	log "built $what in $(cat "$dir/build-time")"
	summary+=("built $what in $(cat "$dir/build-time")")
}

# A chroot build in work failed: the last lines of its log, and where the
# rest is.
build_failed() {
	local work=$1 lines=$2 what=$3
	tail -n "$lines" "$work/build.log" >&2
	echo "build-deb: $what failed to build, log in $work/build.log" >&2
	exit 1
}

# A chroot build in work succeeded: keep its packages and log in dir.
keep_build() {
	local root=$1 work=$2 dir=$3 start=$4 what=$5
	cp "$root"/build/*.deb "$root"/build/*.buildinfo "$dir.tmp/"
	cp "$work/build.log" "$dir.tmp/"
	chroot_umount_all
	finish_part "$dir" "$start" "$what"
	rm -rf "$work"
}

# The chroot the server and the extension are built in: the suite's base with
# postgresql-NN's Build-Depends (nocheck profile) and postgresql-common-dev.
build_chroot_tarball() {
	local base key tarball root start
	base=$(base_tarball)
	key=$( { basename "$base"; grep -A40 '^Build-Depends' "$pg_dsc" | sed '/^[A-Z][^:]*: /{/^Build-Depends/!q}';
		echo "$common_dir"; } | sha256sum | cut -c1-12)
	tarball="$deb_cache/chroot/$deb_suite-build-$key.tar.zst"
	if [ ! -f "$tarball" ]; then
		start=$(date +%s)
		log "making the build chroot ($pg_pkg's Build-Depends)"
		root="$deb_cache/scratch/build-chroot"
		chroot_new "$root" "$base"
		mkdir -p "$root/tmp/debs"
		cp "$common_dir/postgresql-common-dev_"*.deb "$root/tmp/debs/"
		cp "$pg_dsc" "$root/tmp/"
		{
			in_chroot "$root" apt-get update -qq &&
			in_chroot "$root" apt-get install -y -qq build-essential fakeroot ccache \
				"/tmp/debs/$(basename "$common_dir"/postgresql-common-dev_*.deb)" &&
			in_chroot "$root" apt-get build-dep -y -qq -P nocheck "/tmp/$(basename "$pg_dsc")" &&
			in_chroot "$root" apt-get clean
		} >"$deb_cache/scratch/build-chroot.log" 2>&1 || {
			tail -n 30 "$deb_cache/scratch/build-chroot.log" >&2
			echo "build-deb: installing $pg_pkg's build dependencies in the chroot failed" >&2
			exit 1
		}
		rm -rf "$root/tmp/debs" "$root/tmp/$(basename "$pg_dsc")"
		chroot_umount_all
		tar -C "$root" -I 'zstd -T2' -cf "$tarball.tmp" .
		mv "$tarball.tmp" "$tarball"
		rm -rf "$root"
		log "build chroot made in $(elapsed "$start")"
	fi
	echo "$tarball"
}

# Build postgresql-NN's architecture-dependent packages, patched (walscale)
# or not (stock), into $2.
build_server() {
	local variant=$1 dir=$2 work src root tarball start version p out lines
	version=$stock_ver
	[ "$variant" = walscale ] && version=$server_ver
	if [ -f "$dir/.complete" ]; then
		log "$pg_pkg $version is built: $dir"
		return
	fi
	need_part common
	install_host_packages quilt zstd
	tarball=$(build_chroot_tarball)
	start=$(date +%s)
	log "building $pg_pkg $version ($variant) for $deb_suite with -j$jobs; this takes a while"
	work="$deb_cache/scratch/server-$variant"
	chroot_umount_under "$work"
	rm -rf "$work" "$dir.tmp"
	src="$work/$pg_pkg"
	mkdir -p "$src" "$dir.tmp"
	tar -xf "$pg_orig" -C "$src" --strip-components=1
	tar -xf "$pg_debian" -C "$src"
	if [ "$variant" = walscale ]; then
		mkdir -p "$src/debian/patches/walscale"
		for p in "${patches[@]}"; do
			cp "$p" "$src/debian/patches/walscale/"
			echo "walscale/$(basename "$p")" >>"$src/debian/patches/series"
		done
	fi
	if [ "$version" != "$pg_debver" ]; then
		lines=()
		if [ "$variant" = walscale ]; then
			lines+=("  * walscale's core patch, core version $core_ver, in debian/patches/walscale:")
			for p in "${patches[@]}"; do lines+=("    - $(basename "$p")"); done
		fi
		[ -z "$deb_version_suffix" ] || lines+=("  * Built for $deb_suite.")
		prepend_changelog_entry "$src/debian/changelog" "$pg_pkg" "$version" "$(LC_ALL=C date -R)" "${lines[@]}"
	fi
	# quilt, as dpkg-source, refuses fuzz: every patch must apply exactly
	if ! out=$(cd "$src" && QUILT_PATCHES=debian/patches QUILT_PC=.pc \
			quilt --quiltrc - push -a --fuzz=0 2>&1); then
		echo "$out" | tail -n 20 >&2
		echo "build-deb: a patch does not apply without fuzz to $pg_pkg $pg_debver (above): rebase patches/pg$deb_pg_major" >&2
		exit 1
	fi
	if echo "$out" | grep -q 'with fuzz'; then
		echo "$out" | grep -B3 'with fuzz' >&2
		echo "build-deb: a patch needs fuzz" >&2
		exit 1
	fi
	root="$work/root"
	chroot_new "$root" "$tarball"
	mkdir -p "$root/build" "$deb_cache/ccache"
	mv "$src" "$root/build/$pg_pkg"
	# the stock and the patched build share most objects
	chroot_bind "$root" "$deb_cache/ccache" ccache
	if ! in_chroot "$root" env PATH=/usr/lib/ccache:/usr/sbin:/usr/bin:/sbin:/bin \
			CCACHE_DIR=/ccache CCACHE_MAXSIZE=5G \
			DEB_BUILD_OPTIONS="nocheck noddebs parallel=$jobs" DEB_BUILD_PROFILES=nocheck \
			sh -c "cd /build/$pg_pkg && dpkg-buildpackage -B -uc -us" >"$work/build.log" 2>&1; then
		build_failed "$work" 60 "$pg_pkg $version"
	fi
	keep_build "$root" "$work" "$dir" "$start" "$pg_pkg $version ($variant) for $deb_suite"
}

# postgresql-NN-walscale, with pg_buildext, against the stock server's
# postgresql-server-dev-NN: the module needs none of the patched headers
# (walscale_core.h), loads into either server, and the version it names in
# observe mode's message is then the stock one's.  The source package
# (walscale_VERSION.dsc, an orig tarball of the sources and debian/) is
# built beside it: autopkgtest runs debian/tests from it.
build_extension() {
	local work root tarball start f upstream=${ext_ver%-*} lines=() supported
	if [ -f "$ext_dir/.complete" ]; then
		log "$pg_pkg-walscale $ext_pkg_ver is built: $ext_dir"
		return
	fi
	need_part common
	need_part stock
	tarball=$(build_chroot_tarball)
	start=$(date +%s)
	log "building $pg_pkg-walscale $ext_pkg_ver for $deb_suite"
	work="$deb_cache/scratch/extension"
	chroot_umount_under "$work"
	rm -rf "$work" "$ext_dir.tmp"
	mkdir -p "$ext_dir.tmp"
	root="$work/root"
	chroot_new "$root" "$tarball"
	mkdir -p "$root/build/walscale" "$root/tmp/debs"
	(cd "$repo" && ext_files | xargs cp -a -t "$root/build/walscale/")
	[ -z "$deb_version_suffix" ] || lines+=("  * Built for $deb_suite.")
	# pg_buildext builds for the majors postgresql-common supports; the one
	# built here (unstable's) supports 18 alone, so another is named
	supported=()
	if [ "$deb_pg_major" != 18 ]; then
		debian_dir_for_major "$root/build/walscale"
		supported=("PG_SUPPORTED_VERSIONS=$deb_pg_major")
		lines+=("  * $pg_pkg-walscale, for PostgreSQL $deb_pg_major.")
	fi
	[ ${#lines[@]} = 0 ] ||
		prepend_changelog_entry "$root/build/walscale/debian/changelog" walscale "$ext_pkg_ver" \
			"$(newest_changelog_date)" "${lines[@]}"
	for f in "postgresql-server-dev-$deb_pg_major" libpq-dev libpq5 "postgresql-client-$deb_pg_major"; do
		cp "$stock_dir/${f}_"*.deb "$root/tmp/debs/"
	done
	cp "$common_dir"/postgresql-common_*.deb "$common_dir"/postgresql-client-common_*.deb "$root/tmp/debs/"
	if ! {
		in_chroot "$root" sh -c 'apt-get update -qq && apt-get install -y -qq /tmp/debs/*.deb' &&
		in_chroot "$root" tar -C /build --exclude=walscale/debian -czf "/build/walscale_$upstream.orig.tar.gz" walscale &&
		{ [ ${#supported[@]} = 0 ] ||
			in_chroot "$root" env "${supported[@]}" sh -c 'cd /build/walscale && pg_buildext updatecontrol'; } &&
		in_chroot "$root" env "${supported[@]}" DEB_BUILD_OPTIONS="nocheck noddebs" \
			sh -c 'cd /build/walscale && dpkg-buildpackage -uc -us'
	} >"$work/build.log" 2>&1; then
		build_failed "$work" 40 "$pg_pkg-walscale"
	fi
	[ -f "$root/build/$pg_pkg-walscale_${ext_pkg_ver}_$(dpkg --print-architecture).deb" ] || {
		ls "$root/build" >&2
		echo "build-deb: the build made no $pg_pkg-walscale $ext_pkg_ver package (above)" >&2
		exit 1
	}
	cp "$root"/build/walscale_*.dsc "$root"/build/walscale_*.tar.* "$ext_dir.tmp/"
	keep_build "$root" "$work" "$ext_dir" "$start" "$pg_pkg-walscale $ext_pkg_ver for $deb_suite"
}

# The repository's debian/ is PostgreSQL 18's: for another major, the
# build's copy of it in $1 names that major (debian/pgversions, which the
# autopkgtest tests read, and their dependencies), and pg_buildext
# updatecontrol, as Debian's extension packages do, then writes
# debian/control from debian/control.in.  18's package and its key do not
# change.
debian_dir_for_major() {
	local src=$1 left
	echo "$deb_pg_major" >"$src/debian/pgversions"
	sed -i "s/postgresql-18/$pg_pkg/g" "$src/debian/tests/control"
	# postgresql-server-dev-all of the postgresql-common built here
	# depends on postgresql-server-dev-18
	sed -i "s/postgresql-server-dev-all/postgresql-server-dev-$deb_pg_major, postgresql-common-dev/" \
		"$src/debian/tests/control"
	if left=$(grep -n 'postgresql-18\|-v 18 ' "$src/debian/tests/load" "$src/debian/tests/control"); then
		echo "$left" >&2
		echo "build-deb: debian/tests still names PostgreSQL 18 for $pg_pkg (above)" >&2
		exit 1
	fi
}

# Keep the newest WALSCALE_CACHE_KEEP (default 2) builds of each package,
# and always the ones this run uses.
prune_old_packages() {
	local keep=${WALSCALE_CACHE_KEEP:-2} kind old
	[[ "$keep" =~ ^[1-9][0-9]*$ ]] || { echo "build-deb: WALSCALE_CACHE_KEEP must be a positive integer" >&2; return 1; }
	for kind in common server stock extension; do
		while read -r old; do
			[ -n "$old" ] || continue
			case "$old" in "$common_dir" | "$server_dir" | "$stock_dir" | "$ext_dir") continue ;; esac
			log "pruning the older build $old"
			rm -rf "$old"
		done < <(find "$deb_pkgs" -mindepth 1 -maxdepth 1 -type d ! -name '*.tmp' -printf '%T@ %p\n' |
			while read -r t d; do
				case "$(basename "$d")" in
					postgresql-common_*) [ "$kind" = common ] ;;
					"$pg_pkg"-walscale_*) [ "$kind" = extension ] ;;
					"$pg_pkg"_*+walscale*) [ "$kind" = server ] ;;
					"$pg_pkg"_*) [ "$kind" = stock ] ;;
					*) false ;;
				esac && echo "$t $d"
			done | sort -rn | tail -n +$((keep + 1)) | cut -d' ' -f2-)
	done
}

main "$@"
exit
