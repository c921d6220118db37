# shellcheck shell=bash
# The test cluster's node cgroups (sourced by up.sh and down.sh). Each node
# gets its own cgroup root (kubelet's cgroupRoot /NODE): under cgroup v1 a
# directory NODE in every hierarchy, under the unified hierarchy alone (cgroup
# v2, the default of Debian 11+ and Ubuntu 21.10+) the one directory
# /sys/fs/cgroup/NODE. CNIBENCH_KUBE_CGROUP_FS moves the cgroup mount for
# tests of these scripts on a fake tree.
CGROUP_FS=${CNIBENCH_KUBE_CGROUP_FS:-/sys/fs/cgroup}

# cgroup_v2: the unified hierarchy is mounted alone at $CGROUP_FS (its root
# has cgroup.controllers; under v1 or hybrid it is a tmpfs of hierarchies).
cgroup_v2() { [[ -f $CGROUP_FS/cgroup.controllers ]]; }

# node_cgroups NODE: the node's root cgroup in each hierarchy, one a line.
# Under v1 the directories under $CGROUP_FS are hierarchies; under v2 they
# are systemd's slices, which must not get a NODE each.
node_cgroups() {
	if cgroup_v2; then
		echo "$CGROUP_FS/$1"
		return
	fi
	local h
	for h in "$CGROUP_FS"/*/; do
		[[ -f $h/cgroup.procs && ! -L ${h%/} ]] && echo "${h%/}/$1"
	done
	return 0
}

# cgroup_pids NODE: every process in the node's cgroups, one pid a line.
cgroup_pids() {
	local d
	node_cgroups "$1" | while read -r d; do
		[[ -d $d ]] && find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
	done | sort -un
}

# The controllers kubelet checks its cgroup root for under v2 (cpu cpuset
# memory hugetlb pids, those the host has) and io, which it sets for pods.
CGROUP_V2_CONTROLLERS=(cpuset cpu io memory hugetlb pids)

# make_node_cgroups NODE: the node's cgroup root. Under v1 cpuset needs its
# cpus and mems copied from the parent. Under v2 the root's subtree_control
# must hand the controllers down (kubelet's Validate reads the node root's
# cgroup.controllers); runc enables them further down itself.
make_node_cgroups() {
	local d c
	if cgroup_v2; then
		for c in "${CGROUP_V2_CONTROLLERS[@]}"; do
			grep -qw "$c" "$CGROUP_FS/cgroup.controllers" || continue
			grep -qw "$c" "$CGROUP_FS/cgroup.subtree_control" && continue
			echo "+$c" >"$CGROUP_FS/cgroup.subtree_control" ||
				{ echo "cgroup: cannot enable the $c controller in $CGROUP_FS/cgroup.subtree_control" >&2; return 1; }
		done
		mkdir -p "$CGROUP_FS/$1"
		return
	fi
	node_cgroups "$1" | while read -r d; do
		mkdir -p "$d" || return 1
		if [[ -f ${d%/*}/cpuset.cpus ]]; then
			cat "${d%/*}/cpuset.cpus" >"$d/cpuset.cpus" || return 1
			cat "${d%/*}/cpuset.mems" >"$d/cpuset.mems" || return 1
		fi
	done
}
