# Sourced by scripts/build-postgres.sh and scripts/build-deb.sh: the deb-src
# entry that provides Debian's postgresql-18 source package.  The suite that
# carries PostgreSQL 18 changes over time, so unstable and testing are both
# listed and no Debian revision is pinned: apt picks the newest 18.x.
#
# With argument 17, the entry that provides postgresql-17 instead: trixie
# (Debian 13), whose default PostgreSQL it is, in a file of its own.  And
# fetch_debian_pool_source, for a source version the index names and the
# mirror no longer serves.

# Returns 1, having changed nothing, when the entry is missing and this is
# not root.
ensure_postgresql_deb_src() {
	if [ "${1:-18}" = 17 ]; then
		ensure_postgresql_17_deb_src
		return
	fi
	apt-cache showsrc postgresql-18 2>/dev/null | grep -q '^Version: 18' && return 0
	[ "$(id -u)" = 0 ] || return 1
	cat > /etc/apt/sources.list.d/walscale-src.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: unstable testing
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get update -qq
}

ensure_postgresql_17_deb_src() {
	apt-cache showsrc postgresql-17 2>/dev/null | grep -q '^Version: 17' && return 0
	[ "$(id -u)" = 0 ] || return 1
	cat > /etc/apt/sources.list.d/walscale-src-17.sources <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie trixie-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	apt-get update -qq
}

# A Sources index may name a version whose files the mirror no longer serves
# (trixie's postgresql-17 17.12-0+deb13u1 when this was written: a 404).
# Then take, from the pool, the newest of the three minor versions before
# the one package $2 (postgresql-NN) names in the index, of the same Debian
# revision, whose .dsc arrives, and every file that .dsc names, each checked
# against it, into directory $1.  That .dsc is not in the signed index, so
# this checks the download, and not who made it.  Sets pool_source_version
# to the version fetched.
fetch_debian_pool_source() {
	local dir=$1 pkg=$2 indexed major minor rev m v dsc sum size f
	local pool=http://deb.debian.org/debian/pool/main/p/$pkg
	indexed=$(apt-cache showsrc "$pkg" | sed -n 's/^Version: //p' | sort -V | tail -n 1)
	major=${pkg#postgresql-}
	[[ "$indexed" =~ ^$major\.([0-9]+)-(.+)$ ]] || {
		echo "${0##*/}: the deb-src index names no $pkg $major.x (got '$indexed')" >&2
		return 1
	}
	minor=${BASH_REMATCH[1]} rev=${BASH_REMATCH[2]}
	for ((m = minor - 1; m >= 0 && m >= minor - 3; m--)); do
		v=$major.$m-$rev
		dsc=${pkg}_$v.dsc
		curl -fsS -o "$dir/$dsc.part" "$pool/$dsc" 2>/dev/null || continue
		echo "${0##*/}: $pkg $indexed is not served; taking $v from $pool" >&2
		while read -r sum size f; do
			[ -f "$dir/$f" ] && echo "$sum  $dir/$f" | sha256sum -c --quiet - 2>/dev/null && continue
			curl -fsS -o "$dir/$f.part" "$pool/$f" || return 1
			echo "$sum  $dir/$f.part" | sha256sum -c --quiet - ||
				{ echo "${0##*/}: $f does not match $dsc" >&2; return 1; }
			mv "$dir/$f.part" "$dir/$f"
		done < <(sed -n '/^Checksums-Sha256:/,/^[^ ]/s/^ \([0-9a-f]\{64\} [0-9]* [^ /]*\)$/\1/p' "$dir/$dsc.part")
		grep -q '\.orig\.tar\.' "$dir/$dsc.part" ||
			{ echo "${0##*/}: $dsc names no orig tarball" >&2; return 1; }
		mv "$dir/$dsc.part" "$dir/$dsc"
		pool_source_version=$v
		return 0
	done
	echo "${0##*/}: neither $pkg $indexed nor the three minor versions before it are served" >&2
	return 1
}
