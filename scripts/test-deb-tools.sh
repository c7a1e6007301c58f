#!/usr/bin/env bash
# Debian's own tools on the packages of make deb, each in a system unpacked
# from the debootstrap tarball that scripts/build-deb.sh caches, with
# Debian's archive and the server and postgresql-common packages of make
# deb (PG_MAJOR: 18, or 17 on trixie):
#
#   autopkgtest  debian/tests of postgresql-NN-walscale's source package
#                (walscale_*.dsc) in an autopkgtest-virt-unshare testbed,
#                once with each server: with the patched postgresql-NN,
#                installcheck (walscale's pg_regress suite through
#                pg_buildext) and load (walscale preloaded, the core patch
#                in effect) pass; with the stock one, load passes in observe
#                mode and installcheck passes the suite's observe-mode part;
#   piuparts     installs postgresql-NN-walscale with the patched server
#                (or the archive's newer postgresql-NN: it pins nothing),
#                removes and purges it and what it pulled in, and checks
#                that nothing is left behind.
#
# make test-deb keeps what these do not cover: the upgrade from the stock to
# the patched server under a running cluster, the way back, and the TAP
# suites, which need both servers side by side.
#
# The last line is "test-deb-tools: PASS", or "test-deb-tools: FAIL" with a
# non-zero exit; the tools' logs are in $WALSCALE_DEB_CACHE/scratch.
#
#   scripts/test-deb-tools.sh [autopkgtest | piuparts]...   (default: both)
set -euo pipefail

# shellcheck source-path=SCRIPTDIR source=lib-deb.sh
. "$(dirname "$0")/lib-deb.sh"

log() { echo "test-deb-tools: $*"; }
fail() {
	echo "test-deb-tools: FAILED: $*" >&2
	exit 1
}
trap 'if [ $? = 0 ]; then log PASS; else log FAIL; fi' EXIT

tools=()
for a in "$@"; do
	case "$a" in
		autopkgtest | piuparts) tools+=("$a") ;;
		*) echo "usage: $0 [autopkgtest | piuparts]..." >&2; exit 2 ;;
	esac
done
[ ${#tools[@]} -gt 0 ] || tools=(autopkgtest piuparts)

# The packages of make deb: built now if they are not in its cache.
common="" server="" extension="" stock=""
dirs=$("$repo/scripts/build-deb.sh" --then-print-dirs) || fail "scripts/build-deb.sh failed"
eval "$dirs"
for d in "$common" "$server" "$extension" "$stock"; do
	[ -f "$d/.complete" ] || fail "no packages in $d: run make deb first"
done
tarball=$(base_tarball)
updates="deb $deb_mirror $deb_suite-updates main"

# autopkgtest-virt-unshare maps the testbed's users into root's subordinate
# ids (unshare --map-auto), which a fresh Debian system does not give root:
# give it 65536 of each, after every range already given.
ensure_root_subids() {
	local f start
	for f in /etc/subuid /etc/subgid; do
		grep -q '^root:' "$f" 2>/dev/null && continue
		start=$(awk -F: '$2 + $3 > m { m = $2 + $3 } END { print (m > 100000 ? m : 100000) }' "$f" 2>/dev/null || echo 100000)
		log "giving root the subordinate ids $start to $((start + 65535)) in $f, for autopkgtest-virt-unshare"
		echo "root:$start:65536" >>"$f"
	done
}

# autopkgtest with the server of $1 (patched or stock), whose tests must
# report $2: a line "test RESULT" for each.
run_autopkgtest() {
	local variant=$1 expect=$2 pkgdir out start rc=0 got dscs
	case "$variant" in
		patched) pkgdir=$server ;;
		stock) pkgdir=$stock ;;
	esac
	dscs=("$extension"/walscale_*.dsc)
	[ -f "${dscs[0]}" ] || fail "no source package in $extension: run make deb again"
	out="$deb_cache/scratch/autopkgtest-$variant"
	rm -rf "$out" "$out.summary"
	start=$(date +%s)
	log "autopkgtest, $variant: $(basename "${dscs[0]}") with $pg_pkg $(dpkg-deb -f "$pkgdir/$pg_pkg"_*.deb Version)"
	# every package of the server and of postgresql-common is offered, apt
	# installs those the tests depend on; the suite's -updates, as in the
	# chroot the server was built in
	"${nice_cmd[@]}" autopkgtest --output-dir "$out" --summary-file "$out.summary" \
		--add-apt-source "$updates" \
		"${dscs[0]}" "$extension"/*.deb "$pkgdir"/*.deb "$common"/*.deb \
		-- unshare --tarball "$tarball" >"$out.log" 2>&1 || rc=$?
	got=$(awk '{ print $1, $2 }' "$out.summary" 2>/dev/null || true)
	sed 's/^/  /' "$out.summary" 2>/dev/null || true
	log "autopkgtest, $variant: exit status $rc after $(elapsed "$start"); log: $out.log"
	# autopkgtest exits 0 when every test passed, 2 when one was skipped
	if [ "$got" != "$expect" ] || { [ "$rc" != 0 ] && [ "$rc" != 2 ]; }; then
		tail -n 40 "$out.log" >&2
		fail "autopkgtest, $variant: expected '$(echo "$expect" | paste -sd, -)', got '$(echo "$got" | paste -sd, -)'"
	fi
}

# piuparts on postgresql-NN-walscale, the patched server and
# postgresql-common in a local repository that the chroot sees at the same
# path (--bindmount); its base system is the debootstrap tarball, which
# piuparts wants gzip-compressed.  trixie's debconf leaves its own
# directory /var/cache/debconf/tmp.ci/ behind, which bookworm's piuparts
# does not know to ignore.
run_piuparts() {
	local tgz=${tarball%.tar.zst}.tgz local_repo="$deb_cache/scratch/piuparts-repo" out start rc=0
	install_host_packages piuparts apt-utils
	if [ ! -f "$tgz" ]; then
		zstd -dc "$tarball" | "${nice_cmd[@]}" gzip -1 >"$tgz.tmp"
		mv "$tgz.tmp" "$tgz"
	fi
	rm -rf "$local_repo"
	mkdir -p "$local_repo"
	cp "$server"/*.deb "$common"/*.deb "$local_repo/"
	(cd "$local_repo" && apt-ftparchive packages . >Packages 2>/dev/null) || fail "apt-ftparchive packages"
	out="$deb_cache/scratch/piuparts.log"
	start=$(date +%s)
	log "piuparts: $(basename "$extension/$pg_pkg"-walscale_*.deb), the patched $pg_pkg $(dpkg-deb -f "$server/$pg_pkg"_*.deb Version) offered"
	"${nice_cmd[@]}" piuparts --basetgz "$tgz" --distribution "$deb_suite" --mirror "$deb_mirror" \
		--extra-repo "$updates" --extra-repo "deb [trusted=yes] file://$local_repo ./" \
		--bindmount "$local_repo" --no-upgrade-test \
		--ignore=/var/cache/debconf/tmp.ci/ \
		"$extension/$pg_pkg"-walscale_*.deb >"$out" 2>&1 || rc=$?
	grep -E '^[0-9.ms]+ (INFO: (PASS|FAIL)|ERROR|FAIL)' "$out" | cut -d' ' -f2- | sed 's/^/  /' | tail -n 20 || true
	# piuparts pins nothing: where the suite's archive has a newer
	# postgresql-NN (trixie's 17), apt installs that one
	log "piuparts: it installed $pg_pkg $(sed -n "s/.*Unpacking $pg_pkg (\([^)]*\)).*/\1/p" "$out" | head -n 1)"
	log "piuparts: exit status $rc after $(elapsed "$start"); log: $out"
	if [ "$rc" != 0 ] || ! tail -n 5 "$out" | grep -q 'PASS: All tests'; then
		tail -n 40 "$out" >&2
		fail "piuparts: no 'PASS: All tests' (exit status $rc)"
	fi
}

for tool in "${tools[@]}"; do
	case "$tool" in
		autopkgtest)
			install_host_packages autopkgtest uidmap
			ensure_root_subids
			run_autopkgtest patched "installcheck PASS
load PASS"
			run_autopkgtest stock "installcheck PASS
load PASS"
			;;
		piuparts) run_piuparts ;;
	esac
done
