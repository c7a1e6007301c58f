# Sourced by walscale's scripts: where the servers are, and how to run
# PostgreSQL as an unprivileged user when the caller is root.

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
run_user=${WALSCALE_USER:-walscale}

if [ "$(id -u)" = 0 ]; then
	cache=${WALSCALE_CACHE:-/var/cache/walscale}
else
	cache=${WALSCALE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/walscale}
fi
export WALSCALE_CACHE=$cache

# Build what is missing of the patched and the stock server.
ensure_servers() {
	"$repo/scripts/build-postgres.sh"
	"$repo/scripts/build-postgres.sh" --stock
	PG_PATCHED=$(readlink -f "$repo/.pg/walscale")
	PG_STOCK=$(readlink -f "$repo/.pg/stock")
	export PG_PATCHED PG_STOCK
}

# Build walscale against the patched server and install it there.
install_extension() {
	make -s -C "$repo" install PG_CONFIG="$PG_PATCHED/bin/pg_config" >/dev/null
}

# PostgreSQL refuses to run as root: as root, run clusters as $run_user.
ensure_run_user() {
	[ "$(id -u)" = 0 ] || return 0
	id "$run_user" >/dev/null 2>&1 ||
		useradd --system --create-home --home-dir "/var/lib/$run_user" \
			--shell /bin/bash "$run_user"
}

as_run_user() {
	if [ "$(id -u)" = 0 ]; then
		runuser -u "$run_user" -- "$@"
	else
		"$@"
	fi
}

# A fresh directory under the cache that the run user owns.
scratch_dir() {
	local d="$cache/run/$1"
	rm -rf "$d"
	mkdir -p "$d"
	[ "$(id -u)" = 0 ] && chown "$run_user" "$d"
	echo "$d"
}

# A TCP port nothing listens on.
free_port() {
	local p
	for p in $(seq "${1:-55432}" 65000); do
		(echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}
