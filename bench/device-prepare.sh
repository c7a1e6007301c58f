#!/usr/bin/env bash
# Prepare what bench/device-sweep.sh needs on a machine without network:
# a PostgreSQL 18 source tarball in .device/ (gitignored), carried to the
# device beside the working tree (which has patches/pg18 and bench/).
#
#   bench/device-prepare.sh
#
# Since PostgreSQL 17 a release tarball no longer contains the files bison,
# flex and perl generate (gram.c, scan.c, fmgroids.h, the catalog headers,
# ...), and an unknown machine may lack those tools.  The tarball written
# here is the upstream one plus exactly those generated files, taken from
# the local stock build tree, with their timestamps, so that make finds them
# up to date and never runs the tools.  None of them depends on the
# configure options or on the walscale patches.
#
# Then, on the device, from the repository root (as root):
#   bash bench/device-sweep.sh            # with the device tool: carry [".device"]
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" = 0 ]; then
	cache=${WALSCALE_CACHE:-/var/cache/walscale}
else
	cache=${WALSCALE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/walscale}
fi

src=${PG_SOURCE:-$(ls "$cache"/src/postgresql-18_18.*.orig.tar.* 2>/dev/null | sort -V | tail -n 1)}
[ -f "$src" ] || { echo "device-prepare: no PostgreSQL 18 tarball in $cache/src (run scripts/build-postgres.sh first, or set PG_SOURCE)" >&2; exit 1; }
stock=$("$repo/scripts/build-postgres.sh" --stock --print-prefix)
[ -f "$stock/.complete" ] || "$repo/scripts/build-postgres.sh" --stock
build="$stock/build"
[ -f "$build/src/backend/parser/gram.c" ] || { echo "device-prepare: $build has no generated files" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -xf "$src" -C "$tmp"
top=$(ls "$tmp")
version=${top#postgresql-}
tar -tf "$src" | sed "s|^$top/||" | sort > "$tmp/pristine.list"

# Regular files of the build tree that the tarball lacks, less what the
# compiler, the linker and configure made, and the stamps that stand for
# symbolic links (make must create those links on the device).
(cd "$build" && find . -type f | sed 's|^\./||' | sort) > "$tmp/build.list"
comm -13 "$tmp/pristine.list" "$tmp/build.list" |
	grep -v -E '(^|/)(tmp_install|tmp_check|log|results)/' |
	grep -v -E '^(doc|src/interfaces/ecpg/test|contrib)/' |
	awk '!/^src\/test\// || /\.[ch]$/' |
	grep -v -E '\.(o|so|so\.[0-9.]+|a|bc|pc|log|mo|dylib)$' |
	grep -v -E '(^|/)(objfiles\.txt|header-stamp|config\.status|GNUmakefile|Makefile\.global|Makefile\.port|pg_config\.h|pg_config_ext\.h|pg_config_os\.h|pg_config_paths\.h|ecpg_config\.h|stamp-h|stamp-ext-h|exports\.list|libpq-refs-stamp|regression\.(diffs|out))$' |
	while read -r f; do
		# no executables
		[ "$(head -c 4 "$build/$f" | od -An -c | tr -d ' ')" = "177ELF" ] && continue
		echo "$f"
	done > "$tmp/generated.list"
n=$(wc -l < "$tmp/generated.list")
for must in src/backend/parser/gram.c src/backend/parser/scan.c src/backend/utils/fmgroids.h \
	src/include/catalog/pg_proc_d.h src/include/catalog/postgres.bki; do
	grep -qx "$must" "$tmp/generated.list" || { echo "device-prepare: $must is missing from the generated files" >&2; exit 1; }
done
(cd "$build" && tar -cf - -T "$tmp/generated.list") | (cd "$tmp/$top" && tar -xpf -)

mkdir -p "$repo/.device"
rm -f "$repo"/.device/postgresql-*.tar.gz
out="$repo/.device/postgresql-$version-generated.tar.gz"
(cd "$tmp" && tar -czf "$out" "$top")
cp "$tmp/generated.list" "$repo/.device/generated-files.txt"

echo "device-prepare: $out ($(du -h "$out" | cut -f1)): PostgreSQL $version plus $n generated files"
echo "device-prepare: on the device, from the repository root: bash bench/device-sweep.sh  (carry .device)"
