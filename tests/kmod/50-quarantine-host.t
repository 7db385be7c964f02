#!/bin/bash
# Below the sort's floor, on the host. The simulated buddy allocator of
# tests/kmod/policysim.c ages 1 GiB with long-lived pages as the QEMU
# tests do; then the module's quarantine policy
# (kmod/zonesort_quarantine_policy.c) and ordering policy
# (kmod/zonesort_policy.c) work on it, and the next allocation of half
# the cache, in 4 KiB pages and in transparent huge pages, goes through
# the simulated allocator. Collisions are counted by the simulator, with
# no code of the module's. The simulator stands in for a node's free
# lists, which only a kernel has (51-quarantine-vm.t measures those).
# Then the sorter library's quarantine= switch, against a directory
# standing in for the module's sysfs files.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need gcc awk

km_policysim || { done_testing; exit 1; }
sim=$KM_WORK/policysim


slots=65536
budget_permille=125
# The quarantine's limit, computed here: 125 per mille of the cache's pages.
limit=$((slots * budget_permille / 1000))
# 2^18 pages (1 GiB), 2^16 slots (a 256 MiB cache), aged as in the guest:
# 400 MiB allocated page by page and freed in random order, twice, keeping
# 2 or 5 per mille of the pages.
for keep in 2 5; do
	out=$("$sim" remedy 18 16 102400 2 $keep $budget_permille $(seq 1 12)) ||
		{ ok "policysim remedy (keep $keep per mille) runs" false; continue; }
	mean=$(printf '%s\n' "$out" | grep '^mean ')
	diag "$mean"
	tag="keep $keep/1000"
	none=$(km_field "$mean" 4k_none)
	sort=$(km_field "$mean" 4k_sort)
	quar=$(km_field "$mean" 4k_quar)
	num_ok "$tag: long-lived pages leave sorting alone a floor ($sort >= 0.05)" "$sort >= 0.05"
	num_ok "$tag: sort alone beats unsorted ($sort < $none)" "$sort < $none"
	# Per seed: the quarantine never does worse than sorting alone, and
	# beats it wherever sorting alone collides.
	worse=$(printf '%s\n' "$out" | grep '^seed=' | while read -r l; do
		awk -v q="$(km_field "$l" 4k_quar)" -v s="$(km_field "$l" 4k_sort)" \
			'BEGIN { exit !(q > s || (s > 0 && q >= s)) }' && echo x
	done | wc -l)
	is "$worse" 0 "$tag: on every seed the quarantine collides less than sort alone (mean $quar vs $sort)"
	over=$(printf '%s\n' "$out" | grep '^seed=' | while read -r l; do
		[ "$(km_field "$l" quar_held)" -le "$limit" ] || echo x
	done | wc -l)
	is "$over" 0 "$tag: the quarantine holds at most $limit pages on every seed (mean $(km_field "$mean" quar_held))"
	diag "$tag: goal 2%: quarantine then sort $quar; compaction then sort $(km_field "$mean" 4k_compact_sort) (ideal compaction)"
	diag "$tag: one more aging round, then the quarantine: it takes $(km_field "$mean" compact_age1_quar_held) pages ($(km_field "$mean" compact_age1_quar_held_huge) in blocks of 512 or more) after a compaction, $(km_field "$mean" age1_quar_held) ($(km_field "$mean" age1_quar_held_huge)) after none"

	# Transparent huge pages take the lists of order 9 and up first. One
	# load through all orders (sortflat, the policy before it knew) makes
	# them collide far more than unsorted lists.
	tnone=$(km_field "$mean" thp_none)
	tflat=$(km_field "$mean" thp_sortflat)
	tsort=$(km_field "$mean" thp_sort)
	tquar=$(km_field "$mean" thp_quar)
	num_ok "$tag: huge pages collide no more sorted than unsorted ($tsort <= $tnone; one load for all orders: $tflat)" \
		"$tsort <= $tnone + 1e-9"
	num_ok "$tag: ... nor with the quarantine ($tquar <= $tsort)" "$tquar <= $tsort + 1e-9"
	# Ordering the huge lists among themselves costs 4 KiB allocations
	# nothing.
	for a in 4k 4kfull; do
		num_ok "$tag: $a allocations sorted as before ($(km_field "$mean" ${a}_sort) vs $(km_field "$mean" ${a}_sortflat))" \
			"$(km_field "$mean" ${a}_sort) <= $(km_field "$mean" ${a}_sortflat) + 0.005"
	done
done

# The sorter library: quarantine=no switches the module's quarantine off
# before it writes nodeid, quarantine=yes (the default) on; Intel's
# module (no interface_version, no quarantine directory) is left alone;
# a bad value names itself. A directory stands in for the module's files
# (kmod/zonesort_abi.h); the real ones are written in 51-quarantine-vm.t.
need_file "$ZS_ZONESORT" "the zonesort command"
d=$(mktemp -d "${TMPDIR:-/tmp}/zs-remedy.XXXXXX")
trap 'rm -rf "$d"' EXIT
mkdir -p "$d/sys/quarantine" "$d/node/node0" "$d/state"
: > "$d/sys/nodeid"
echo 3 > "$d/sys/interface_version"
: > "$d/sys/quarantine/stats"
: > "$d/sys/quarantine/enabled"
zs() { "$ZS_ZONESORT" sort nodes=0 sysfs="$d/sys" node_sysfs="$d/node" statedir="$d/state" cache_size=256MiB "$@"; }
ok "zonesort sort quarantine=no sorts" zs quarantine=no
is "$(cat "$d/sys/quarantine/enabled")" 0 "... after switching the module's quarantine off"
is "$(cat "$d/sys/nodeid")" 0 "... and writes the node to nodeid"
ok "zonesort sort (defaults: sorter=auto, quarantine=yes) sorts" zs
is "$(cat "$d/sys/quarantine/enabled")" 1 "... after switching the quarantine on"
rm -r "$d/sys/quarantine" "$d/sys/interface_version"
ok "zonesort sort quarantine=no sorts with a module that has no quarantine" zs quarantine=no
ok "... and creates none" test ! -e "$d/sys/quarantine"
out=$(zs quarantine=maybe 2>&1)
is "$?" 2 "quarantine=maybe is a usage error"
like "$out" "quarantine.*maybe" "... naming the key and the value ($out)"
done_testing
