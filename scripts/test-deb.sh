#!/usr/bin/env bash
# Try the packages of make deb in a clean chroot of their suite (DEB_SUITE:
# bookworm or trixie; PG_MAJOR: 18, or 17 on trixie), made from a fresh copy
# of the debootstrap tarball that scripts/build-deb.sh caches:
#
#   1. install the stock postgresql-NN and postgresql-NN-walscale, make a
#      cluster with pg_createcluster (ssl = on, the snakeoil certificate),
#      preload walscale and pg_stat_statements, CREATE EXTENSION walscale,
#      run pgbench: walscale starts in observe mode, walscale_stats raises
#      SQLSTATE 0A000;
#   2. install the patched packages over them, restart once: the settings are
#      in effect, walscale_stats counts acquisitions, the data is intact;
#   3. back to the stock packages as the README says, with the patched
#      versions pinned out, restart: observe mode again, data intact; then
#      apt-get update and apt-get upgrade: no patched package comes back;
#   4. purge the packages: no PostgreSQL process is left, nothing of them
#      is left installed;
#   5. walscale's TAP suites (t/*.pl) against the packaged patched server,
#      its pg_config and the TAP modules Debian installs under its pgxs
#      directory (WALSCALE_DEB_TAP=0 skips them; PROVE_TESTS="t/001_x.pl ..."
#      runs some);
#   6. where the suite's archive has a server of that major (trixie's
#      postgresql-17), postgresql-NN-walscale on that server, in observe
#      mode (scripts/test-deb-archive.sh).
#
# The last line is "test-deb: PASS", or "test-deb: FAIL" with a non-zero exit.
#
#   scripts/test-deb.sh
set -euo pipefail

. "$(dirname "$0")/lib-deb.sh"

v=$deb_pg_major
log() { echo "test-deb: $*"; }
fail() {
	echo "test-deb: FAILED: $*" >&2
	if [ -n "${root:-}" ] && [ -f "$root/var/log/postgresql/postgresql-$v-main.log" ]; then
		echo "test-deb: the server log's last lines:" >&2
		tail -n 20 "$root/var/log/postgresql/postgresql-$v-main.log" >&2
	fi
	exit 1
}

root=""
cleanup() {
	local rc=$?
	if [ -n "$root" ] && [ -n "${netns:-}" ] && [ -x "$root/usr/bin/pg_ctlcluster" ]; then
		in_chroot "$root" pg_ctlcluster "$v" main stop -m immediate >/dev/null 2>&1 || true
	fi
	# whatever the chroot still runs (a server a failed step left)
	if [ -n "$root" ] && [ -d "$root" ]; then
		local pid
		for pid in $(ls /proc | grep -E '^[0-9]+$'); do
			[ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$(readlink -f "$root")" ] &&
				kill -9 "$pid" 2>/dev/null || true
		done
	fi
	chroot_umount_all
	[ -z "${netns:-}" ] || netns_drop "$netns"
	[ "$rc" = 0 ] && [ -n "$root" ] && rm -rf "$root"
	if [ "$rc" = 0 ]; then
		echo "test-deb: PASS"
	else
		echo "test-deb: FAIL"
	fi
}
trap cleanup EXIT

start_all=$(date +%s)
# one run at a time in the suite's test chroot
exec 9>"$deb_cache/.lock-test-$deb_suite"
flock 9
# The packages of make deb: built now if they are not in its cache.
dirs=$("$repo/scripts/build-deb.sh" --then-print-dirs) || fail "scripts/build-deb.sh failed"
eval "$dirs"
for d in "$common" "$server" "$extension" "$stock"; do
	[ -f "$d/.complete" ] || fail "no packages in $d: run make deb first"
done

install_host_packages iproute2
root="$deb_cache/scratch/test-root-$deb_suite"
netns="$deb_cache/scratch/test-netns-$deb_suite"
log "a fresh $deb_suite chroot in $root, with a network namespace of its own"
chroot_new "$root" "$(base_tarball)"
netns_new "$netns"
mkdir -p "$root/tmp/debs/patched" "$root/tmp/debs/stock" "$root/tmp/debs/common" "$root/tmp/debs/ext"
server_pkgs=("$pg_pkg" "postgresql-client-$v" libpq5)
# 18 builds JIT as a package of its own; 17's is in postgresql-17
[ ! -f "$(echo "$server/$pg_pkg-jit_"*.deb)" ] || server_pkgs+=("$pg_pkg-jit")
for p in "${server_pkgs[@]}"; do
	cp "$server/${p}_"*.deb "$root/tmp/debs/patched/"
	cp "$stock/${p}_"*.deb "$root/tmp/debs/stock/"
done
cp "$common"/postgresql-common_*.deb "$common"/postgresql-client-common_*.deb "$root/tmp/debs/common/"
cp "$extension/$pg_pkg"-walscale_*.deb "$root/tmp/debs/ext/"
patched_ver=$(dpkg-deb -f "$root/tmp/debs/patched/$pg_pkg"_*.deb Version)
stock_ver=$(dpkg-deb -f "$root/tmp/debs/stock/$pg_pkg"_*.deb Version)

# Commands in the chroot run in its own network namespace, apt's with the
# host's network, which reaches Debian's archive.
c() { chroot_netns=$netns in_chroot "$root" "$@"; }
c_net() { in_chroot "$root" "$@"; }
# the .deb files of /tmp/debs/$1 ... inside the chroot, as the chroot sees them
debs() {
	local k f
	for k in "$@"; do
		for f in "$root/tmp/debs/$k"/*.deb; do
			[ -f "$f" ] || fail "no packages in /tmp/debs/$k"
			echo "${f#"$root"}"
		done
	done
}
apt_install() {
	c_net apt-get install -y -qq --allow-downgrades -o Dpkg::Options::=--force-confold "$@" \
		>>"$root/tmp/apt.log" 2>&1 || { tail -n 30 "$root/tmp/apt.log" >&2; fail "apt-get install $*"; }
}
psql_() { c runuser -u postgres -- psql -X -At -v ON_ERROR_STOP=1 "$@"; }
logfile="$root/var/log/postgresql/postgresql-$v-main.log"
log_mark() { wc -l <"$logfile"; }
log_since() { tail -n +$(($1 + 1)) "$logfile"; }

restart() {
	local mark
	mark=$(log_mark)
	c pg_ctlcluster "$v" main restart || fail "the cluster did not restart on $1"
	c pg_lsclusters | grep -q ' online ' || fail "the cluster is not online on $1"
	restart_log=$(log_since "$mark")
}

# The server version it runs, and whether walscale says it is in observe mode.
check_observe() {
	local what=$1 err
	echo "$restart_log" | grep -q 'WARNING:  walscale is in observe mode' ||
		fail "no 'walscale is in observe mode' WARNING on $what"
	err=$(psql_ -c '\set VERBOSITY sqlstate' -c 'SELECT count(*) FROM walscale_stats' 2>&1 >/dev/null || true)
	[ "$err" = "ERROR:  0A000" ] || fail "walscale_stats on $what: expected SQLSTATE 0A000, got '$err'"
	[ "$(psql_ -c 'SELECT core_version IS NULL FROM walscale_settings')" = t ] ||
		fail "walscale_settings shows a core version on $what"
	log "$what: walscale in observe mode (the WARNING is logged, walscale_stats raises 0A000)"
}

check_patched() {
	local row
	echo "$restart_log" | grep -q 'walscale is in observe mode' &&
		fail "walscale is in observe mode on the patched server"
	row=$(psql_ -c "SELECT core_version || '/' || insert_locks || '/' || insert_locks_allocated FROM walscale_settings")
	case "$row" in
		"$(core_version_of_patches)"/32/*) ;;
		*) fail "walscale_settings on the patched server: core_version/insert_locks/allocated = $row, expected $(core_version_of_patches)/32/..." ;;
	esac
	[ "$(psql_ -c "SELECT bool_and(in_effect) FROM walscale_setting_status WHERE setting LIKE '%insert_locks'")" = t ] ||
		fail "walscale.insert_locks is not in effect on the patched server"
	log "patched: walscale_settings core_version/insert_locks/allocated = $row, insert_locks in effect"
}

pgbench_run() {
	c runuser -u postgres -- /usr/lib/postgresql/$v/bin/pgbench -n -c 4 -T 10 postgres \
		>"$root/tmp/pgbench.log" 2>&1 || { cat "$root/tmp/pgbench.log" >&2; fail "pgbench on $1"; }
	log "$1: pgbench -c 4 -T 10: $(grep -o 'tps = [0-9.]*' "$root/tmp/pgbench.log" | head -n 1)"
}

checksum_sql="SELECT count(*) || ' ' || sum(abalance) || ' ' || md5(string_agg(aid || ':' || abalance, ',' ORDER BY aid)) FROM pgbench_accounts"
check_data() {
	local now
	now=$(psql_ -c "$checksum_sql")
	[ "$now" = "$1" ] || fail "the data changed on $2: '$now', expected '$1'"
	log "$2: data intact (pgbench_accounts: $(echo "$now" | cut -d' ' -f1) rows, checksum ${now##* })"
}

# walscale's TAP suites, as make test runs them, against the packaged
# patched server (PG_PATCHED, its pg_config, the TAP modules and pg_regress
# under its pgxs directory) and the packaged stock server (PG_STOCK, its
# files unpacked beside it, since one system holds one postgresql-NN).
run_tap_suites() {
	local d=/tmp/walscale-tap stock_prefix=/opt/walscale-stock m status=0
	cp "$server/postgresql-server-dev-$v"_*.deb "$server"/libpq-dev_*.deb "$root/tmp/debs/patched/"
	# t/010 links a unit test with pg_config --libs, as a developer's machine
	# would: the libraries' -dev packages, and Debian's libpgcommon.a and
	# libpgport.a, which are in the pkglibdir
	apt_install build-essential libipc-run-perl prometheus-postgres-exporter \
		libselinux1-dev libzstd-dev liblz4-dev libxslt1-dev libxml2-dev libpam0g-dev libssl-dev \
		libkrb5-dev zlib1g-dev libreadline-dev libnuma-dev $(debs common patched ext)
	c pg_dropcluster --stop "$v" main >/dev/null 2>&1 || true
	for m in "$root/tmp/debs/stock/$pg_pkg"_*.deb "$root/tmp/debs/stock/postgresql-client-$v"_*.deb \
			"$root/tmp/debs/ext/$pg_pkg"-walscale_*.deb; do
		c dpkg-deb -x "${m#"$root"}" "$stock_prefix"
	done
	c id walscale >/dev/null 2>&1 || c useradd --create-home --shell /bin/bash walscale
	mkdir -p "$root$d"
	cp -a "$repo/Makefile" "$repo/walscale.conf" "$repo/sql" "$repo/expected" "$repo/t" "$repo/monitoring" \
		"$repo"/walscale*.c "$repo"/walscale*.h "$root$d/"
	# t/024 runs make sweep's report
	mkdir -p "$root$d/bench"
	cp -a "$repo/bench/sweep_report.py" "$repo/bench/report.py" "$root$d/bench/"
	# the test modules of t/modules, never shipped, built against the packaged server
	for m in "$repo"/t/modules/*/; do
		mkdir -p "$root/tmp/modules/$(basename "$m")"
		cp -a "$m". "$root/tmp/modules/$(basename "$m")/"
		c make -s -C "/tmp/modules/$(basename "$m")" install PG_CONFIG=/usr/lib/postgresql/$v/bin/pg_config \
			>/dev/null || fail "building the test module $(basename "$m")"
	done
	c chown -R walscale "$d"
	c runuser -u walscale -- env PG_STOCK="$stock_prefix/usr/lib/postgresql/$v" PG_PATCHED=/usr/lib/postgresql/$v \
		LIBRARY_PATH=/usr/lib/postgresql/$v/lib WALSCALE_CORE_VERSION="$(core_version_of_patches)" \
		make --no-print-directory -C "$d" installcheck PG_CONFIG=/usr/lib/postgresql/$v/bin/pg_config \
		PROVE_FLAGS="--timer" ${PROVE_TESTS:+PROVE_TESTS="$PROVE_TESTS"} >"$root/tmp/tap.log" 2>&1 || status=1
	grep -E 't/[0-9].*\.pl|^Files=|^Result:|^All tests|^# All [0-9]+ tests|^(not )?ok [0-9]+ +- ' "$root/tmp/tap.log" | tail -n 60
	if [ $status != 0 ]; then
		failed=$(sed -n 's/^\(t\/[^ ]*\.pl\) *(Wstat.*Failed: \([0-9]*\)).*/\1 (\2 failed)/p' "$root/tmp/tap.log" | paste -sd, -)
		[ -f "$root$d/regression.diffs" ] && { echo "==== regression.diffs"; tail -n 40 "$root$d/regression.diffs"; failed="pg_regress, $failed"; }
		for m in $(sed -n 's/^t\/\([^ ]*\)\.pl *(Wstat.*/\1/p' "$root/tmp/tap.log"); do
			grep -B2 -A8 'Failed test' "$root$d/tmp_check/log/regress_log_$m" | head -n 40
		done
		fail "walscale's suites failed against the packaged server: ${failed:-see the log} (log: $root/tmp/tap.log)"
	fi
	log "walscale's pg_regress and TAP suites pass against the packaged server"
}

step_start=$(date +%s)
log "step 1: stock $stock_ver"
c_net apt-get update -qq >/dev/null
apt_install ssl-cert $(debs common stock ext)
# a main cluster that the package made would be dropped: the test makes its own
c pg_dropcluster --stop "$v" main >/dev/null 2>&1 || true
c pg_createcluster "$v" main --start >/dev/null || fail "pg_createcluster $v main --start"
conf=/etc/postgresql/$v/main/postgresql.conf
grep -q "^ssl = on" "$root$conf" || fail "pg_createcluster wrote no 'ssl = on'"
grep -q "^ssl_cert_file = '/etc/ssl/certs/ssl-cert-snakeoil.pem'" "$root$conf" ||
	fail "pg_createcluster configured no snakeoil certificate"
cat >"$root/etc/postgresql/$v/main/conf.d/walscale.conf" <<'CONF'
shared_preload_libraries = 'walscale,pg_stat_statements'
walscale.insert_locks = 32
CONF
restart stock
[ "$(psql_ -c 'SHOW ssl')" = on ] || fail "ssl is not on"
log "stock: $(psql_ -c 'SELECT version()')"
psql_ -c 'CREATE EXTENSION walscale' -c 'CREATE EXTENSION pg_stat_statements' >/dev/null
check_observe "stock $stock_ver"
c runuser -u postgres -- /usr/lib/postgresql/$v/bin/pgbench -q -i -s 1 postgres >/dev/null 2>&1 ||
	fail "pgbench -i -s 1"
pgbench_run "stock"
# an SSL connection over TCP, as the cluster's clients make them
psql_ -c "ALTER ROLE postgres PASSWORD 'test-deb'" >/dev/null
[ "$(c env PGPASSWORD=test-deb runuser -u postgres -- psql -X -At \
	"host=localhost sslmode=require dbname=postgres" \
	-c 'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()')" = t ] ||
	fail "no SSL connection to the cluster over TCP"
log "stock: ssl = on, an sslmode=require connection over TCP works"
sum=$(psql_ -c "$checksum_sql")
log "stock: pgbench_accounts: $(echo "$sum" | cut -d' ' -f1) rows, checksum ${sum##* }"
[ "$(psql_ -c 'SELECT count(*) > 0 FROM pg_stat_statements')" = t ] || fail "pg_stat_statements is empty"
log "step 1 took $(elapsed "$step_start")"

step_start=$(date +%s)
log "step 2: patched $patched_ver over the running cluster from a local repository, pinned as the README says, one restart"
# a local repository with both sets, and the README's pin
apt_install apt-utils
mkdir -p "$root/srv/walscale"
cp -n "$root"/tmp/debs/*/*.deb "$root/srv/walscale/"
c sh -c 'cd /srv/walscale && apt-ftparchive packages . > Packages' 2>/dev/null || fail "apt-ftparchive"
echo 'deb [trusted=yes] file:/srv/walscale ./' >"$root/etc/apt/sources.list.d/walscale.list"
# (the README's names 18's packages, and says to put 17 for 17)
sed -n '/^    # \/etc\/apt\/preferences.d\/walscale$/,/^    Pin-Priority/{s/^    //;/^#/d;p}' "$repo/README.md" |
	sed "s/\(postgresql-[a-z0-9-]*\)18/\1$v/g" >"$root/etc/apt/preferences.d/walscale"
grep -q '^Pin-Priority: 1001' "$root/etc/apt/preferences.d/walscale" || fail "no pin example in README.md"
c_net apt-get update -qq >/dev/null
apt_install "${server_pkgs[@]}"
policy=$(c apt-cache policy "$pg_pkg")
echo "$policy" | grep -q "^ \*\*\* $patched_ver 1001$" || fail "the pin does not apply: $policy"
log "patched: apt-get install ${server_pkgs[*]} chose $(c dpkg-query -W -f='${Version}' "$pg_pkg"), pinned at 1001"
[ "$(c dpkg-query -W -f='${Version}' "$pg_pkg")" = "$patched_ver" ] || fail "$pg_pkg $patched_ver is not installed"
restart "patched $patched_ver"
check_patched
check_data "$sum" "patched"
pgbench_run "patched"
row=$(psql_ -c "SELECT count(*) || ' locks, acquisitions ' || sum(acquisitions) || ', first try ' || sum(first_try) || ', blocking waits ' || sum(blocking_waits) FROM walscale_stats")
[ "$(psql_ -c 'SELECT sum(acquisitions) > 0 FROM walscale_stats')" = t ] ||
	fail "walscale_stats counts no acquisitions on the patched server: $row"
log "patched: walscale_stats: $row"
sum=$(psql_ -c "$checksum_sql")
log "step 2 took $(elapsed "$step_start")"

step_start=$(date +%s)
log "step 3: back to stock $stock_ver as the README says, the patched versions pinned out, one restart, then apt-get upgrade"
# The README's back-to-stock pin replaces the install pin: the patched
# versions sort above the stock ones, so without it the next upgrade would
# install them again.
sed -n '/^    # \/etc\/apt\/preferences.d\/walscale: back to stock$/,/^    Pin-Priority/{s/^    //;/^#/d;p}' "$repo/README.md" |
	sed "s/\(postgresql-[a-z0-9-]*\)18/\1$v/g" >"$root/etc/apt/preferences.d/walscale"
grep -q '^Pin-Priority: -1$' "$root/etc/apt/preferences.d/walscale" || fail "no back-to-stock pin in README.md"
c_net apt-get update -qq >/dev/null
apt_install "${server_pkgs[@]/%/=$stock_ver}"
[ "$(c dpkg-query -W -f='${Version}' "$pg_pkg")" = "$stock_ver" ] || fail "$pg_pkg $stock_ver is not installed"
restart "stock $stock_ver"
check_observe "stock $stock_ver again"
check_data "$sum" "stock again"
pgbench_run "stock again"
# the data as the upgrade must leave it
sum=$(psql_ -c "$checksum_sql")
policy=$(c apt-cache policy "$pg_pkg")
echo "$policy" | grep -q "^     $patched_ver -1$" || fail "the back-to-stock pin does not apply: $policy"
# what a DBA runs next: nothing patched may come back.  A newer stock
# server from the suite's archive (trixie's postgresql-17) may replace
# the stock packages of make deb, and is a stock server too.
c_net apt-get update -qq >/dev/null
c_net apt-get upgrade -y -qq -o Dpkg::Options::=--force-confold >>"$root/tmp/apt.log" 2>&1 ||
	{ tail -n 30 "$root/tmp/apt.log" >&2; fail "apt-get upgrade"; }
for p in "${server_pkgs[@]}"; do
	ver=$(c dpkg-query -W -f='${Version}' "$p")
	case "$ver" in
		*+walscale*) fail "apt-get upgrade installed the patched $p $ver again" ;;
	esac
done
upgraded=$(c dpkg-query -W -f='${Version}' "$pg_pkg")
log "stock again: apt-get upgrade kept a stock $pg_pkg ($upgraded), the patched versions pinned at -1"
restart "stock $upgraded after apt-get upgrade"
check_observe "stock $upgraded after apt-get upgrade"
check_data "$sum" "stock after apt-get upgrade"
log "step 3 took $(elapsed "$step_start")"

step_start=$(date +%s)
log "step 4: apt-get purge"
c pg_ctlcluster "$v" main stop || fail "pg_ctlcluster $v main stop"
# the cluster goes first, as a DBA drops it: a purge keeps clusters' data
rm -f "$root/etc/postgresql/$v/main/conf.d/walscale.conf"
c pg_dropcluster "$v" main || fail "pg_dropcluster $v main"
c_net apt-get purge -y -qq "$pg_pkg-walscale" "${server_pkgs[@]}" \
	postgresql-common postgresql-client-common >>"$root/tmp/apt.log" 2>&1 ||
	{ tail -n 30 "$root/tmp/apt.log" >&2; fail "apt-get purge"; }
left=$(c dpkg-query -W -f='${Package} ${Status}\n' 2>/dev/null | grep -E '^(postgresql|libpq)' | grep -v 'not-installed' || true)
[ -z "$left" ] || fail "left installed after the purge: $left"
for pid in $(ls /proc | grep -E '^[0-9]+$'); do
	[ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$(readlink -f "$root")" ] || continue
	fail "a process is left running in the chroot: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
done
for d in "/etc/postgresql/$v" "/var/lib/postgresql/$v" "/usr/lib/postgresql/$v/bin"; do
	[ ! -e "$root$d" ] || fail "$d is left after the purge"
done
log "purged: no postgresql package installed, no process left, no /etc/postgresql/$v, /var/lib/postgresql/$v or /usr/lib/postgresql/$v/bin"
log "step 4 took $(elapsed "$step_start")"

if [ "${WALSCALE_DEB_TAP:-1}" = 1 ]; then
	step_start=$(date +%s)
	log "step 5: walscale's TAP suites against the packaged patched server"
	run_tap_suites
	log "step 5 took $(elapsed "$step_start")"
fi

if [ "$deb_archive_server" = yes ]; then
	step_start=$(date +%s)
	log "step 6: $pg_pkg-walscale on $deb_suite's own $pg_pkg from Debian's archive"
	"$repo/scripts/test-deb-archive.sh" "$extension" || fail "scripts/test-deb-archive.sh"
	log "step 6 took $(elapsed "$step_start")"
fi

log "all steps took $(elapsed "$start_all")"
