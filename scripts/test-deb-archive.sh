#!/usr/bin/env bash
# make test-deb's last step where the suite's archive has a server of the
# major packaged (DEB_SUITE=trixie PG_MAJOR=17, see scripts/lib-deb.sh):
# what a DBA with Debian's own server meets who installs
# postgresql-NN-walscale from make deb.  In a fresh chroot of the suite,
# made from the debootstrap tarball that scripts/build-deb.sh caches, in a
# network namespace of its own:
#
#   1. the suite's own postgresql-NN from Debian's archive; a cluster made
#      with pg_createcluster starts;
#   2. postgresql-NN-walscale of make deb, walscale preloaded: the server
#      starts, logs that walscale is in observe mode, CREATE EXTENSION
#      works, walscale_setting_status says that no setting is in effect,
#      walscale.fastpath_groups for want of fast-path lock groups (on 17),
#      the wait sampler samples a pgbench run, walscale_advice gives a row
#      for each setting, and nothing but observing: walscale_stats raises
#      SQLSTATE 0A000;
#   3. debian/tests/load of the package's source package, as autopkgtest
#      would run it (the script alone, without the autopkgtest harness): a
#      throw-away pg_virtualenv cluster with walscale preloaded, in the mode
#      the installed server's version promises;
#   4. apt-get purge postgresql-NN-walscale: its files are gone, the server
#      with walscale still preloaded refuses to start, and starts once
#      walscale is out of shared_preload_libraries, with the data and
#      DROP EXTENSION walscale working.
#
# The last line is "test-deb-archive: PASS", or "test-deb-archive: FAIL"
# with a non-zero exit.  scripts/test-deb.sh runs it, holding the suite's
# test lock, with the directory of the package that make deb built:
#
#   DEB_SUITE=trixie PG_MAJOR=17 scripts/test-deb-archive.sh EXTENSION_DIR
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib-deb.sh
. "$(dirname "$0")/lib-deb.sh"

if [ "$deb_archive_server" != yes ] || [ $# != 1 ]; then
	echo "usage: DEB_SUITE=trixie PG_MAJOR=17 $0 EXTENSION_DIR (from scripts/test-deb.sh)" >&2
	exit 2
fi
extension=$1
v=$deb_pg_major
log() { echo "test-deb-archive: $*"; }
logfile=/var/log/postgresql/postgresql-$v-main.log
root=""
fail() {
	echo "test-deb-archive: FAILED: $*" >&2
	if [ -n "$root" ] && [ -f "$root$logfile" ]; then
		echo "test-deb-archive: the server log's last lines:" >&2
		tail -n 20 "$root$logfile" >&2
	fi
	exit 1
}

cleanup() {
	local rc=$? pid
	if [ -n "$root" ] && [ -n "${netns:-}" ] && [ -x "$root/usr/bin/pg_ctlcluster" ]; then
		in_chroot "$root" pg_ctlcluster "$v" main stop -m immediate >/dev/null 2>&1 || true
	fi
	# whatever the chroot still runs (a server a failed step left)
	if [ -n "$root" ] && [ -d "$root" ]; then
		for pid in $(ls /proc | grep -E '^[0-9]+$'); do
			[ "$(readlink "/proc/$pid/root" 2>/dev/null)" = "$(readlink -f "$root")" ] &&
				kill -9 "$pid" 2>/dev/null || true
		done
	fi
	chroot_umount_all
	[ -z "${netns:-}" ] || netns_drop "$netns"
	[ "$rc" = 0 ] && [ -n "$root" ] && rm -rf "$root"
	if [ "$rc" = 0 ]; then
		echo "test-deb-archive: PASS"
	else
		echo "test-deb-archive: FAIL"
	fi
}
trap cleanup EXIT

start_all=$(date +%s)
[ -f "$extension/.complete" ] || fail "no package in '$extension'"

install_host_packages iproute2 dpkg-dev
root="$deb_cache/scratch/test-archive-root-$deb_suite"
netns="$deb_cache/scratch/test-archive-netns-$deb_suite"
log "a fresh $deb_suite chroot in $root, with a network namespace of its own"
chroot_new "$root" "$(base_tarball)"
netns_new "$netns"
mkdir -p "$root/tmp/debs"
cp "$extension/postgresql-$v-walscale_"*.deb "$root/tmp/debs/"
ext_deb=$(cd "$root/tmp/debs" && echo postgresql-"$v"-walscale_*.deb)

# Commands in the chroot run in its own network namespace, apt's with the
# host's network, which reaches Debian's archive.
c() { chroot_netns=$netns in_chroot "$root" "$@"; }
c_net() { in_chroot "$root" "$@"; }
apt_() {
	c_net apt-get "$@" >>"$root/tmp/apt.log" 2>&1 || { tail -n 30 "$root/tmp/apt.log" >&2; fail "apt-get $*"; }
}
psql_() { c runuser -u postgres -- psql -X -At -v ON_ERROR_STOP=1 "$@"; }
log_mark() { wc -l <"$root$logfile"; }
log_since() { tail -n +$(($1 + 1)) "$root$logfile"; }
online() { c pg_lsclusters -h | grep -Eq "^$v +main +[0-9]+ +online "; }

# pg_ctlcluster $1 (start, restart); the server's log lines since, in
# start_log.  Returns non-zero when the server did not come up.
cluster() {
	local mark
	mark=$(log_mark)
	c pg_ctlcluster "$v" main "$1" >"$root/tmp/ctl.log" 2>&1 || true
	start_log=$(log_since "$mark")
	online
}

step_start=$(date +%s)
log "step 1: $deb_suite's own postgresql-$v from Debian's archive"
apt_ update -qq
apt_ install -y -qq "postgresql-$v"
server_ver=$(c dpkg-query -W -f='${Version}' "postgresql-$v")
case "$server_ver" in
	*+walscale*) fail "postgresql-$v $server_ver is a walscale build, not Debian's" ;;
esac
c apt-cache policy "postgresql-$v" | grep -A1 "^ \*\*\* $server_ver " | grep -q " $deb_mirror $deb_suite" ||
	fail "postgresql-$v $server_ver was not installed from $deb_mirror $deb_suite: $(c apt-cache policy "postgresql-$v")"
# a main cluster that the package made is dropped: the test makes its own
c pg_dropcluster --stop "$v" main >/dev/null 2>&1 || true
c pg_createcluster "$v" main >/dev/null || fail "pg_createcluster $v main"
cluster start || { cat "$root/tmp/ctl.log" >&2; fail "the new cluster did not start"; }
log "postgresql-$v $server_ver: $(psql_ -c 'SELECT version()')"
log "step 1 took $(elapsed "$step_start")"

step_start=$(date +%s)
log "step 2: $ext_deb, walscale preloaded"
apt_ install -y -qq "/tmp/debs/$ext_deb"
c dpkg-query -W -f='${Status}' "postgresql-$v-walscale" | grep -q 'install ok installed' ||
	fail "postgresql-$v-walscale is not installed"
cat >"$root/etc/postgresql/$v/main/conf.d/walscale.conf" <<'CONF'
shared_preload_libraries = 'walscale'
CONF
cluster restart || { cat "$root/tmp/ctl.log" >&2; fail "the server did not start with walscale preloaded"; }
[ "$(psql_ -c 'SHOW shared_preload_libraries')" = walscale ] || fail "walscale is not in shared_preload_libraries"
log "the server starts with shared_preload_libraries = walscale"
echo "$start_log" | grep -q 'WARNING:  walscale is in observe mode' ||
	fail "no 'walscale is in observe mode' WARNING in the server log at start"
log "the log says: $(echo "$start_log" | grep -m1 -o 'WARNING:  walscale is in observe mode.*')"
psql_ -c 'CREATE EXTENSION walscale' >/dev/null || fail "CREATE EXTENSION walscale"
log "CREATE EXTENSION walscale: $(psql_ -c "SELECT extversion FROM pg_extension WHERE extname = 'walscale'")"
status=$(psql_ -F ' | ' -c 'SELECT setting, in_effect, reason FROM walscale_setting_status ORDER BY setting')
echo "$status" | sed 's/^/test-deb-archive:   /'
[ "$(psql_ -c 'SELECT count(*) > 0 AND NOT bool_or(in_effect) FROM walscale_setting_status')" = t ] ||
	fail "walscale_setting_status says a setting is in effect on Debian's server"
[ "$(psql_ -c "SELECT count(*) FROM walscale_setting_status WHERE setting LIKE 'walscale.insert_lock%' AND reason LIKE '%without walscale''s core patch.'")" = 2 ] ||
	fail "walscale_setting_status: the insertion lock settings are not said to lack the core patch"
log "walscale_setting_status: no setting in effect, the insertion lock settings for want of the core patch"
if [ "$v" = 17 ]; then
	[ "$(psql_ -c "SELECT NOT in_effect AND effective IS NULL AND reason LIKE 'PostgreSQL 17 has 16 fixed fast-path slots per backend and no fast-path lock groups%' FROM walscale_setting_status WHERE setting = 'walscale.fastpath_groups'")" = t ] ||
		fail "walscale_setting_status: the walscale.fastpath_groups row does not say that PostgreSQL 17 has no fast-path lock groups"
	log "walscale_setting_status: walscale.fastpath_groups not in effect, PostgreSQL 17 having no fast-path lock groups"
fi
err=$(psql_ -c '\set VERBOSITY sqlstate' -c 'SELECT count(*) FROM walscale_stats' 2>&1 >/dev/null || true)
[ "$err" = "ERROR:  0A000" ] || fail "walscale_stats on Debian's server: expected SQLSTATE 0A000, got '$err'"
log "walscale_stats raises SQLSTATE 0A000 (it needs the core patch)"
# the wait sampler, walscale's part that runs on any server, samples a load
psql_ -c 'SELECT walscale_reset()' >/dev/null
c runuser -u postgres -- "/usr/lib/postgresql/$v/bin/pgbench" -q -i -s 1 postgres >/dev/null 2>&1 ||
	fail "pgbench -i -s 1"
c runuser -u postgres -- "/usr/lib/postgresql/$v/bin/pgbench" -n -c 4 -T 5 postgres >"$root/tmp/pgbench.log" 2>&1 ||
	{ cat "$root/tmp/pgbench.log" >&2; fail "pgbench"; }
advice=$(psql_ -F ' | ' -c 'SELECT setting, coalesce(recommended_value, '"'-'"'), evidence, reason FROM walscale_advice ORDER BY setting')
echo "$advice" | sed 's/^/test-deb-archive:   /'
[ "$(psql_ -c "SELECT count(*) FROM walscale_advice WHERE setting IN ('walscale.insert_locks', 'walscale.insert_lock_attempts', 'walscale.fastpath_groups')")" = 3 ] ||
	fail "walscale_advice gives no row for each of the three settings"
# the number of samples in the row shown above (the sampler runs on)
samples=$(echo "$advice" | sed -n 's/^walscale\.fastpath_groups | [^|]* | \([0-9][0-9]*\) samples of backends holding fast-path locks.*/\1/p')
[ -n "$samples" ] && [ "$samples" -gt 0 ] ||
	fail "the wait sampler sampled no backend holding fast-path locks under pgbench (walscale_advice's evidence: '$samples')"
log "walscale_advice: a row for each setting; the sampler saw $samples backends holding fast-path locks under pgbench"
if [ "$v" = 17 ]; then
	[ "$(psql_ -c "SELECT recommended_value IS NULL AND reason LIKE '%PostgreSQL 17 has 16 fixed fast-path slots%\"walscale.fastpath_groups\" is not in effect.%' FROM walscale_advice WHERE setting = 'walscale.fastpath_groups'")" = t ] ||
		fail "walscale_advice: the walscale.fastpath_groups row does not say that it is not in effect on PostgreSQL 17"
	log "walscale_advice: walscale.fastpath_groups recommends nothing, not in effect on PostgreSQL 17"
fi
sum=$(psql_ -c 'SELECT count(*) || '"' '"' || sum(abalance) FROM pgbench_accounts')
log "step 2 took $(elapsed "$step_start")"

step_start=$(date +%s)
log "step 3: debian/tests/load of $(basename "$extension"/walscale_*.dsc), as autopkgtest runs it"
rm -rf "$root/tmp/src"
dpkg-source -x "$extension"/walscale_*.dsc "$root/tmp/src" >/dev/null 2>&1 ||
	fail "dpkg-source -x $(basename "$extension"/walscale_*.dsc)"
# autopkgtest runs a test from the source tree, as root where the testbed
# gives root, with the package's dependencies (postgresql-common's
# pg_virtualenv) installed
c sh -c 'cd /tmp/src && debian/tests/load' >"$root/tmp/load.log" 2>&1 ||
	{ tail -n 30 "$root/tmp/load.log" >&2; fail "debian/tests/load"; }
grep -q "^postgresql-$v $server_ver: walscale is in observe mode$" "$root/tmp/load.log" ||
	{ cat "$root/tmp/load.log" >&2; fail "debian/tests/load did not report observe mode on postgresql-$v $server_ver"; }
log "debian/tests/load: postgresql-$v $server_ver: walscale is in observe mode"
log "step 3 took $(elapsed "$step_start")"

step_start=$(date +%s)
log "step 4: apt-get purge postgresql-$v-walscale under the running server"
files=$(c dpkg-query -L "postgresql-$v-walscale")
apt_ purge -y -qq "postgresql-$v-walscale"
st=$(c dpkg-query -W -f='${db:Status-Status}' "postgresql-$v-walscale" 2>/dev/null || true)
case "$st" in
	"" | not-installed) ;;
	*) fail "postgresql-$v-walscale is $st after the purge" ;;
esac
while read -r f; do
	# the directories it shares with other packages stay
	if [ -n "$f" ] && [ ! -d "$root$f" ] && [ -e "$root$f" ]; then
		fail "$f is left after the purge"
	fi
done <<<"$files"
[ ! -e "$root/usr/lib/postgresql/$v/lib/walscale.so" ] || fail "walscale.so is left after the purge"
log "purged: none of its $(echo "$files" | wc -l) paths but shared directories is left"
# the running server keeps the module it loaded; a start needs it
if cluster restart; then
	fail "the server started with walscale preloaded and its package purged"
fi
echo "$start_log" | grep -q 'could not access file "walscale"' ||
	fail "the server did not start for another reason than the purged module: $start_log"
log "with walscale still in shared_preload_libraries the server does not start: $(echo "$start_log" | grep -m1 -o 'could not access file "walscale".*')"
rm "$root/etc/postgresql/$v/main/conf.d/walscale.conf"
cluster start || { cat "$root/tmp/ctl.log" >&2; fail "the server did not start without walscale after the purge"; }
[ "$(psql_ -c 'SELECT count(*) || '"' '"' || sum(abalance) FROM pgbench_accounts')" = "$sum" ] ||
	fail "pgbench_accounts changed across the purge"
psql_ -c 'DROP EXTENSION walscale' >/dev/null || fail "DROP EXTENSION walscale after the purge"
log "without walscale in shared_preload_libraries the server starts, the data is intact, DROP EXTENSION walscale works"
c pg_dropcluster --stop "$v" main || fail "pg_dropcluster $v main"
log "step 4 took $(elapsed "$step_start")"

log "all steps took $(elapsed "$start_all")"
