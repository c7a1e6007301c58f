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

# The PostgreSQL major version built and tested: 18, unless PG_MAJOR says
# 17 (scripts/build-postgres.sh refuses any other).  An 18 build's links in
# .pg/ are named as they always were; a 17 build's end in -pg17.
pg_major=${PG_MAJOR:-18}
pg_link_suffix=
[ "$pg_major" = 18 ] || pg_link_suffix=-pg$pg_major

# Build what is missing of the stock server; set PG_STOCK to it.
ensure_stock_server() {
	"$repo/scripts/build-postgres.sh" --stock
	PG_STOCK=$(readlink -f "$repo/.pg/stock$pg_link_suffix")
	export PG_STOCK
}

# Build what is missing of the patched and the stock server.
ensure_servers() {
	"$repo/scripts/build-postgres.sh"
	PG_PATCHED=$(readlink -f "$repo/.pg/walscale$pg_link_suffix")
	export PG_PATCHED
	ensure_stock_server
}

# The flavor of the patched server that walscale's own suites and make
# mutate run on: assertions on, and injection points compiled in, so that a
# test can pause a backend exactly where a race is.  make demo and make bench
# keep the plain build, where the injection points compile to nothing.
injection_configure_opts=(--enable-tap-tests --enable-debug --without-icu
	--enable-cassert --enable-injection-points)

# Build (once, cached) the injection-point flavor; set PG_TESTED to it.
ensure_injection_server() {
	"$repo/scripts/build-postgres.sh" --flavor injection -- "${injection_configure_opts[@]}"
	PG_TESTED=$(readlink -f "$repo/.pg/walscale-injection$pg_link_suffix")
	export PG_TESTED
}

# The flavor of the patched server built with EXEC_BACKEND, as on Windows:
# every child of the postmaster is a new process image that loads
# shared_preload_libraries and attaches to shared memory again, instead of
# inheriting both through fork().  No injection points: walscale's suites
# that need them skip themselves there.
execbackend_configure_opts=(--enable-tap-tests --enable-debug --without-icu
	CPPFLAGS=-DEXEC_BACKEND)

# Build (once, cached) the EXEC_BACKEND flavor; set PG_EXEC to it.
ensure_execbackend_server() {
	"$repo/scripts/build-postgres.sh" --flavor execbackend -- "${execbackend_configure_opts[@]}"
	PG_EXEC=$(readlink -f "$repo/.pg/walscale-execbackend$pg_link_suffix")
	export PG_EXEC
}

# Build (once, cached) the patched server of the core version before this
# one: the patches up to, not including, the last that sets
# WALSCALE_CORE_VERSION.  walscale must start there in observe mode, as after
# the server packages of an older walscale are put back (t/015).  Sets
# PG_OLDER_CORE and PG_OLDER_CORE_VERSION.
ensure_older_core_server() {
	local n=0 i=0 p
	for p in "$repo"/patches/pg"$pg_major"/*.patch; do
		i=$((i + 1))
		grep -q '^+#define[[:space:]]*WALSCALE_CORE_VERSION' "$p" && n=$((i - 1))
	done
	[ "$n" -ge 1 ] || { echo "walscale: no patch sets an older core version" >&2; return 1; }
	"$repo/scripts/build-postgres.sh" --flavor older --patches "$n" -- \
		--enable-tap-tests --enable-debug --without-icu
	PG_OLDER_CORE=$(readlink -f "$repo/.pg/walscale-older$pg_link_suffix")
	PG_OLDER_CORE_VERSION=$(sed -n 's/^#define[[:space:]]*WALSCALE_CORE_VERSION[[:space:]]*\([0-9][0-9]*\).*/\1/p' \
		"$("$PG_OLDER_CORE/bin/pg_config" --includedir-server)/access/xlog.h")
	export PG_OLDER_CORE PG_OLDER_CORE_VERSION
}

# The core version the patches give the patched server.
core_version_of_patches() {
	cat "$repo"/patches/pg"$pg_major"/*.patch |
		sed -n 's/^+#define[[:space:]]*WALSCALE_CORE_VERSION[[:space:]]*\([0-9][0-9]*\).*/\1/p' | tail -n 1
}

# Build walscale against the stock server's headers, install it there, and
# install the same module file into the patched server, as the
# postgresql-18-walscale package ships one file for both (walscale_core.h
# carries the declarations of the core patch): make demo, make bench and
# PostgreSQL's suites under make test run it on the patched server.
install_extension() {
	install_extension_into "$PG_STOCK"
	copy_extension_into "$PG_STOCK" "$PG_PATCHED"
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

# Real cgroups for t/019_cgroup_cpus.pl (scripts/test-cgroups.sh), made
# when root and removed when the calling script exits (an EXIT trap): what
# the test is told goes to test_cgroups_env, and the v2 cgroup the suites
# must start in, if any, to test_cgroup_runner.
make_test_cgroups() {
	local line
	test_cgroups_env=() test_cgroup_runner=
	while IFS= read -r line; do
		test_cgroups_env+=("$line")
		case $line in
		WALSCALE_TEST_CGROUP_V2=*) test_cgroup_runner=${line#*=}/runner/cgroup.procs ;;
		esac
	done < <("$repo/scripts/test-cgroups.sh" create "$$" "$run_user")
	[ "$(id -u)" != 0 ] || trap '"$repo/scripts/test-cgroups.sh" remove "$$"' EXIT
}

# as_run_user "$@" with the test cgroups' environment and, where there is a
# v2 tree, from its runner cgroup: in v2 the run user may move a process
# only between cgroups below one it was given (the tree).  Without the cpu
# controller in that tree (a hybrid host) this changes no scheduling; with
# it, the suites share one cgroup of the default weight.
as_run_user_with_test_cgroups() {
	(
		[ -z "${test_cgroup_runner:-}" ] || echo "$BASHPID" >"$test_cgroup_runner" || true
		as_run_user env "${test_cgroups_env[@]}" "$@"
	)
}

# A fresh directory under the cache that the run user owns.
scratch_dir() {
	# per clone: two clones testing at once must not share a directory
	local d
	d="$cache/run/$(printf %s "$repo" | sha256sum | cut -c1-8)/$1"
	rm -rf "$d"
	mkdir -p "$d"
	# the run user must exist before it is given one: on a fresh machine a
	# scratch directory is the first thing a script asks for
	ensure_run_user >&2
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

# Build (once, cached) a flavor of the patched server for the memory-error
# runs, through build-postgres.sh, and print its prefix.  $1: the flavor's
# name; the rest: configure's arguments besides --prefix.
build_instrumented_server() {
	local flavor=$1
	shift
	"$repo/scripts/build-postgres.sh" --flavor "$flavor" -- "$@" >&2 &&
		readlink -f "$repo/.pg/walscale-$flavor$pg_link_suffix"
}

# Build walscale against another server (an instrumented build) and install
# it there, from a copy, so that the clone's own build of it is left alone.
install_extension_into() {
	local prefix=$1 src
	src=$(scratch_dir "walscale-build-$(basename "$prefix")")
	cp -a "$repo/Makefile" "$repo"/walscale*.c "$repo"/walscale*.h "$repo/walscale.control" "$repo"/walscale--*.sql "$src/"
	make -s -C "$src" install PG_CONFIG="$prefix/bin/pg_config" >/dev/null
}

# Install the module that install_extension_into built for server $1 into
# server $2 too: one module file, built against stock headers, serves every
# server, as the postgresql-18-walscale package does.  A new file, not the
# old one rewritten (as install(1) does): a server of another clone that
# runs from the shared cache has the old one mapped, and would die of
# SIGBUS.
copy_extension_into() {
	local from=$1 to=$2 from_share to_share
	from_share=$("$from/bin/pg_config" --sharedir)
	to_share=$("$to/bin/pg_config" --sharedir)
	cp --remove-destination "$("$from/bin/pg_config" --pkglibdir)/walscale.so" "$("$to/bin/pg_config" --pkglibdir)/"
	cp "$from_share"/extension/walscale[.-]* "$to_share/extension/"
}

# Build the test modules of t/modules (never shipped) against a server and
# install them there, from a copy.
install_test_modules_into() {
	local prefix=$1 m src
	for m in "$repo"/t/modules/*/; do
		src=$(scratch_dir "test-module-$(basename "$m")-$(basename "$prefix")")
		cp -a "$m". "$src/"
		make -s -C "$src" install PG_CONFIG="$prefix/bin/pg_config" >/dev/null
	done
}

# walscale.conf's settings, for which expected/ is written, as
# LOCKS/ATTEMPTS/GROUPS.
walscale_conf_settings() {
	sed -n 's/^walscale\.\([a-z_]*\) *= *\([0-9]*\).*/\2/p' "$repo/walscale.conf" | paste -sd/
}

# postgresql.conf lines that preload walscale with one configuration,
# LOCKS/ATTEMPTS/GROUPS.
config_lines() {
	local locks attempts groups
	IFS=/ read -r locks attempts groups <<<"$1"
	cat <<CONF
shared_preload_libraries = 'walscale'
walscale.insert_locks = $locks
walscale.insert_lock_attempts = $attempts
walscale.fastpath_groups = $groups
CONF
}
