#!/usr/bin/env bash
# Real cgroups for t/019_cgroup_cpus.pl, which runs as the unprivileged run
# user: made as root before the TAP suites (make test, make mutate), removed
# after them.
#
#   test-cgroups.sh create NAME USER   make the trees, print NAME=VALUE lines
#   test-cgroups.sh remove NAME        remove them
#
# In each cgroup version that is mounted (the v1 hierarchy of the cpu
# controller, and v2), under its mount point, walscale-test-NAME/ holds:
#
#   nested/       a quota of 1 CPU     nested/leaf/  none
#   bind/         none                 bind/leaf/    a quota of 1 CPU
#   ns/           a quota of 1 CPU
#
# (a quota is written only where the cpu controller is: v1's, or v2's when
# the controller is bound to v2); the run user may move its processes into
# nested/leaf, bind/leaf and ns.  In v2, a process may move only between
# cgroups below one whose cgroup.procs it may write: the run user is given
# walscale-test-NAME's, and its runner/ cgroup, where the TAP suites are
# started (lib.sh as_run_user_with_test_cgroups).  Printed:
#
#   WALSCALE_TEST_CGROUP_V1=DIR      the v1 tree, where the cpu controller is v1's
#   WALSCALE_TEST_CGROUP_V2=DIR      the v2 tree
#   WALSCALE_TEST_CGROUP_V2_CPU=1    the v2 tree has the cpu controller
#   WALSCALE_TEST_CGROUPS_WHY=TEXT   what could not be made, and why
#
# Trees of runs whose process is gone are removed first.  Nothing here
# moves a controller from one hierarchy to the other: a host whose cpu
# controller is v1's (this hybrid VM's) tests v1 quotas, and v2's tree
# there, without the controller, only where the server looks for them.
set -uo pipefail

cmd=${1:-}
name=${2:-}
[ -n "$name" ] || { echo "usage: $0 create NAME USER | remove NAME" >&2; exit 2; }
prefix=walscale-test-

# The mount point of the whole hierarchy (root "/") of version $1, from
# mountinfo: fields 4 (root) and 5 (mount point), then after "-" the type
# and the super options.
mount_point() {
	awk -v version="$1" '{
		for (i = 7; i <= NF && $i != "-"; i++) {}
		if (i + 3 > NF) next
		type = $(i + 1); n = split($(i + 3), opts, ",")
		cpu = 0
		for (j = 1; j <= n; j++) if (opts[j] == "cpu") cpu = 1
		if ($4 == "/" && ((version == 1 && type == "cgroup" && cpu) ||
						  (version == 2 && type == "cgroup2"))) { print $5; exit }
	}' /proc/self/mountinfo
}

# Remove the tree $1: first move what still runs in it (a server a killed
# test left) to the hierarchy's root $2, then the cgroups, deepest first.
remove_tree() {
	local tree=$1 top=$2 procs pid
	[ -d "$tree" ] || return 0
	while IFS= read -r procs; do
		while read -r pid; do
			echo "$pid" >"$top/cgroup.procs" 2>/dev/null || true
		done <"$procs"
	done < <(find "$tree" -name cgroup.procs)
	find "$tree" -depth -type d -exec rmdir {} \; 2>/dev/null
	[ ! -d "$tree" ] || echo "test-cgroups: could not remove $tree" >&2
}

# Write $2 into the file $1, or say why not.
put() {
	echo "$2" >"$1" 2>/dev/null || { why+=("could not write \"$2\" into $1"); return 1; }
}

v1=$(mount_point 1)
v2=$(mount_point 2)

case $cmd in
remove)
	for top in $v1 $v2; do
		remove_tree "$top/$prefix$name" "$top"
	done
	exit 0
	;;
create) ;;
*) echo "usage: $0 create NAME USER | remove NAME" >&2; exit 2 ;;
esac

user=${3:?usage: $0 create NAME USER}
why=()
if [ "$(id -u)" != 0 ]; then
	echo "WALSCALE_TEST_CGROUPS_WHY=not run as root, no cgroup was made"
	exit 0
fi

# trees of earlier runs whose process (NAME is its pid) is gone
for top in $v1 $v2; do
	for tree in "$top/$prefix"*; do
		[ -d "$tree" ] || continue
		pid=${tree##*/"$prefix"}
		[[ $pid =~ ^[0-9]+$ ]] && [ -d "/proc/$pid" ] || remove_tree "$tree" "$top"
	done
done

# Make the tree of version $1 under $2; $3: whether the cpu controller is
# there.  Prints the tree's variable.
make_tree() {
	local version=$1 top=$2 cpu=$3 tree="$2/$prefix$name" d f one
	if ! mkdir "$tree" 2>/dev/null; then
		why+=("could not create $tree")
		return 1
	fi
	if [ "$version" = 2 ]; then
		one="100000 100000"
		mkdir "$tree/runner"
		# a quota below a cgroup needs the controller enabled in it
		[ "$cpu" = 1 ] && { put "$tree/cgroup.subtree_control" +cpu || cpu=0; }
	fi
	mkdir -p "$tree/nested/leaf" "$tree/bind/leaf" "$tree/ns"
	if [ "$cpu" = 1 ]; then
		[ "$version" = 1 ] && one=100000
		[ "$version" = 2 ] && { put "$tree/nested/cgroup.subtree_control" +cpu &&
			put "$tree/bind/cgroup.subtree_control" +cpu || cpu=0; }
		for d in nested bind/leaf ns; do
			if [ "$version" = 1 ]; then
				put "$tree/$d/cpu.cfs_period_us" 100000 && put "$tree/$d/cpu.cfs_quota_us" "$one" || cpu=0
			else
				put "$tree/$d/cpu.max" "$one" || cpu=0
			fi
		done
	fi
	for d in nested/leaf bind/leaf ns; do
		for f in cgroup.procs tasks; do
			[ -e "$tree/$d/$f" ] && chown "$user" "$tree/$d/$f"
		done
	done
	[ "$version" = 2 ] && chown "$user" "$tree/cgroup.procs" "$tree/runner/cgroup.procs"
	echo "WALSCALE_TEST_CGROUP_V$version=$tree"
	[ "$version" = 2 ] && [ "$cpu" = 1 ] && echo "WALSCALE_TEST_CGROUP_V2_CPU=1"
	return 0
}

if [ -z "$v1" ]; then
	why+=("the cpu controller has no cgroup v1 hierarchy mounted")
else
	make_tree 1 "$v1" 1
fi
if [ -z "$v2" ]; then
	why+=("cgroup v2 is not mounted")
else
	# the controller must be enabled at v2's root already: enabling it there
	# would change every cgroup of the host
	v2cpu=0
	if grep -qw cpu "$v2/cgroup.subtree_control" 2>/dev/null; then
		v2cpu=1
	elif grep -qw cpu "$v2/cgroup.controllers" 2>/dev/null; then
		why+=("the cpu controller is not enabled in cgroup v2's root ($v2/cgroup.subtree_control)")
	else
		why+=("the cpu controller is not available in cgroup v2 (it is bound to v1)")
	fi
	make_tree 2 "$v2" "$v2cpu"
fi
[ ${#why[@]} = 0 ] || echo "WALSCALE_TEST_CGROUPS_WHY=$(IFS=';'; echo "${why[*]}" | sed 's/;/; /g')"
exit 0
