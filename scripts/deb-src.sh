# Sourced by scripts/build-postgres.sh and scripts/build-deb.sh: the deb-src
# entry that provides Debian's postgresql-18 source package.  The suite that
# carries PostgreSQL 18 changes over time, so unstable and testing are both
# listed and no Debian revision is pinned: apt picks the newest 18.x.
#
# With argument 17, the entry that provides postgresql-17 instead: trixie
# (Debian 13), whose default PostgreSQL it is, in a file of its own.

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
