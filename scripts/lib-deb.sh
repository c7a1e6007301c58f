# Sourced by scripts/build-deb.sh and scripts/test-deb.sh: the package cache
# and the chroots (bookworm, trixie) that the packages are built and tested in.
#
# Environment:
#   WALSCALE_DEB_CACHE  where sources, chroot tarballs and built packages are
#                       cached (default /var/cache/walscale/deb as root)
#   DEB_MIRROR          Debian mirror for debootstrap and the chroots' apt
#                       (default http://deb.debian.org/debian)
#   DEB_SUITE           the suite the packages are built for (default bookworm;
#                       make's DEB_SUITE sets it): bookworm or trixie
#   PG_MAJOR            the PostgreSQL major version packaged (default 18), as
#                       for make test: 18, or 17 on trixie

if [ "$(id -u)" != 0 ]; then
	echo "${0##*/}: must run as root (debootstrap and chroot need it)" >&2
	exit 1
fi

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
deb_cache=${WALSCALE_DEB_CACHE:-${WALSCALE_CACHE:-/var/cache/walscale}/deb}
deb_mirror=${DEB_MIRROR:-http://deb.debian.org/debian}
deb_suite=${DEB_SUITE:-bookworm}
# lib.sh's pg_major: PG_MAJOR, 18 by default
deb_pg_major=$pg_major
# The suites and majors packaged: each gets the patched and the stock
# server from Debian's own postgresql-NN source (bookworm, whose own
# PostgreSQL is 15, and trixie, whose own is 17, have no 18: unstable's
# source is built for them), and postgresql-NN-walscale.
case "$deb_suite/$deb_pg_major" in
	bookworm/18 | trixie/18 | trixie/17) ;;
	*)
		echo "${0##*/}: no packages are made for PostgreSQL $deb_pg_major on $deb_suite (DEB_SUITE/PG_MAJOR: bookworm/18, trixie/18 or trixie/17)" >&2
		exit 2
		;;
esac
pg_pkg=postgresql-$deb_pg_major
# The suite's archive carries a server of that major too (trixie's
# postgresql-17): make test-deb also installs the extension on it
# (scripts/test-deb-archive.sh).
deb_archive_server=no
[ "$deb_suite/$deb_pg_major" != trixie/17 ] || deb_archive_server=yes
# Built packages, apart for each suite: the same package and version may
# differ between suites, which prune_old_packages keeps apart.
deb_pkgs="$deb_cache/pkg/$deb_suite"
# What a suite other than bookworm appends to the Debian revision of every
# package it builds (18.6-3+trixie1, 1.5-1+trixie1), as Debian's own
# rebuilds for a suite do: a package name and version then names one file
# in a repository holding both suites, and the newer suite's is the newer
# version, so that an upgrade from bookworm to trixie replaces it.
deb_version_suffix=""
[ "$deb_suite" = bookworm ] || deb_version_suffix="+${deb_suite}1"
# every heavy command shares the CPUs politely
nice_cmd=(nice -n 19 ionice -c3)
mkdir -p "$deb_cache/src" "$deb_cache/chroot" "$deb_pkgs" "$deb_cache/scratch"

# Mount points of the chroots in use, unmounted on exit.
chroot_mounts=()

chroot_umount_all() {
	local i
	for ((i = ${#chroot_mounts[@]} - 1; i >= 0; i--)); do
		umount "${chroot_mounts[i]}" 2>/dev/null || umount -l "${chroot_mounts[i]}" 2>/dev/null || true
	done
	chroot_mounts=()
}

# The minimal system of the suite every chroot starts from, as a tarball made
# once with debootstrap from Debian's archive.
base_tarball() {
	local include=ca-certificates key tarball tmp
	key=$(echo "$deb_suite $deb_mirror minbase $include" | sha256sum | cut -c1-12)
	tarball="$deb_cache/chroot/$deb_suite-base-$key.tar.zst"
	if [ ! -f "$tarball" ]; then
		command -v debootstrap >/dev/null || install_host_packages debootstrap
		command -v zstd >/dev/null || install_host_packages zstd
		tmp="$deb_cache/scratch/debootstrap-$key"
		rm -rf "$tmp"
		echo "${0##*/}: debootstrap $deb_suite from $deb_mirror" >&2
		if ! "${nice_cmd[@]}" debootstrap --variant=minbase --include="$include" \
				"$deb_suite" "$tmp" "$deb_mirror" >"$tmp.log" 2>&1; then
			tail -n 20 "$tmp.log" >&2
			echo "${0##*/}: debootstrap failed, log in $tmp.log" >&2
			exit 1
		fi
		tar -C "$tmp" -I 'zstd -T2' -cf "$tarball.tmp" .
		mv "$tarball.tmp" "$tarball"
		rm -rf "$tmp" "$tmp.log"
	fi
	echo "$tarball"
}

# apt on the host, on an index of $deb_suite's binary packages kept in the
# cache apart from the host's own (which it never touches): the versions the
# archive offers the chroots now, known without making one.  Its suites are
# those chroot_new gives the chroots.
suite_apt_dir="$deb_cache/apt/$deb_suite"
suite_apt() {
	local cmd=$1
	shift
	"$cmd" -o Dir::Etc::SourceList="$suite_apt_dir/sources.list" \
		-o Dir::Etc::SourceParts="$suite_apt_dir/empty" \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts="$suite_apt_dir/empty" \
		-o Dir::State="$suite_apt_dir/state" -o Dir::State::status="$suite_apt_dir/status" \
		-o Dir::Cache="$suite_apt_dir/cache" "$@"
}

# Refresh that index (a few seconds once it exists); when the archive cannot
# be reached, an index made before still serves, with a warning.
suite_index_update() {
	mkdir -p "$suite_apt_dir/empty" "$suite_apt_dir/state/lists/partial" \
		"$suite_apt_dir/cache/archives/partial"
	touch "$suite_apt_dir/status"
	cat >"$suite_apt_dir/sources.list" <<SRC
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $deb_mirror $deb_suite main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $deb_mirror $deb_suite-updates main
SRC
	if ! suite_apt apt-get update -qq >"$suite_apt_dir/update.log" 2>&1; then
		if [ -f "$suite_apt_dir/.complete" ]; then
			echo "${0##*/}: could not refresh the $deb_suite index (log: $suite_apt_dir/update.log); using the one of $(date -r "$suite_apt_dir/.complete" -R)" >&2
			return 0
		fi
		cat "$suite_apt_dir/update.log" >&2
		echo "${0##*/}: could not read $deb_suite's package index from $deb_mirror" >&2
		exit 1
	fi
	touch "$suite_apt_dir/.complete"
}

# The version of package $1 that a $deb_suite chroot would install now.
suite_candidate() {
	local v
	v=$(suite_apt apt-cache policy "$1" 2>/dev/null | sed -n 's/^  Candidate: //p')
	case "$v" in
		"" | "(none)") echo "${0##*/}: $deb_suite has no package $1" >&2; exit 1 ;;
	esac
	echo "$v"
}

# Host tools the scripts need (never a PostgreSQL package).
install_host_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	echo "${0##*/}: installing ${missing[*]} on the host" >&2
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive "${nice_cmd[@]}" apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

# Make a fresh chroot in $1 from tarball $2, with its special file systems
# mounted, services kept from starting, and apt pointed at $deb_suite.
chroot_new() {
	local root=$1 tarball=$2
	chroot_umount_under "$root"
	rm -rf "$root"
	mkdir -p "$root"
	tar -C "$root" -I zstd -xf "$tarball"
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	cat >"$root/etc/apt/sources.list" <<SRC
deb $deb_mirror $deb_suite main
deb $deb_mirror $deb_suite-updates main
SRC
	# no service starts by itself inside the chroot
	printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
	chmod 755 "$root/usr/sbin/policy-rc.d"
	echo 'APT::Install-Recommends "false";' >"$root/etc/apt/apt.conf.d/90walscale"
	mkdir -p "$root/proc" "$root/dev/shm" "$root/dev/pts"
	mount -t proc proc "$root/proc"
	chroot_mounts+=("$root/proc")
	mount -t tmpfs -o mode=1777,size=2g tmpfs "$root/dev/shm"
	chroot_mounts+=("$root/dev/shm")
	mount -t devpts -o newinstance,ptmxmode=0666 devpts "$root/dev/pts"
	chroot_mounts+=("$root/dev/pts")
}

# Unmount whatever is still mounted under $1 (a chroot a killed run left).
chroot_umount_under() {
	local m
	[ -d "$1" ] || return 0
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done < <(awk -v r="$(readlink -f "$1")/" 'index($2, r) == 1 { print $2 }' /proc/mounts | sort -r)
}

# A network namespace of its own, bound at $1, with only a loopback
# interface: a server in the chroot then listens on a 127.0.0.1:5432 of its
# own, and no server of the host sees it.
netns_new() {
	netns_drop "$1"
	touch "$1"
	unshare --net="$1" true
	nsenter --net="$1" ip link set lo up
}

netns_drop() {
	umount "$1" 2>/dev/null || true
	rm -f "$1"
}

# Bind-mount host directory $2 at $1/$3.
chroot_bind() {
	mkdir -p "$1/$3"
	mount --bind "$2" "$1/$3"
	chroot_mounts+=("$1/$3")
}

# Run a command inside chroot $1, niced, with a clean environment; in the
# network namespace bound at $chroot_netns when that is set.
chroot_netns=""
in_chroot() {
	local root=$1 ns=()
	shift
	[ -z "$chroot_netns" ] || ns=(nsenter --net="$chroot_netns")
	"${ns[@]}" "${nice_cmd[@]}" chroot "$root" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive TERM=dumb \
		"$@"
}

# Seconds since $1, as "Ns (M min)".
elapsed() {
	local s=$(($(date +%s) - $1))
	echo "${s}s ($((s / 60)) min $((s % 60)) s)"
}
