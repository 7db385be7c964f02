#!/bin/bash
# A node without a memory-side cache (QEMU guest, no HMAT, Debian's 6.1
# kernel) configured as a cache node would be: "required zonesort.so
# sorter=auto modprobe=zonesort sample_conflicts=yes". Jobs run and exit
# 0 without error lines from sorting; the plugin leaves the node alone (no
# module loaded, no compaction: the kernel's compaction counters do not
# move, no periodic helper) and says "no memory-side cache: nothing to
# sort", as "zonesort status" does. With nocache=compact added the same
# node is compacted, which moves the counters: they would show one.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
. "$(dirname "$0")/../../testbed/node.sh"
need qemu-system-x86_64 busybox cpio gcc make depmod modprobe xz

nd_setup 6.1
kver=$ND_KVER
nodejob=$(nd_nodejob)
log=$ND_WORK/nocache-$kver.log
nd_boot "$kver" "$log" none 1G 2 "${ZS_NODE_LIMIT_S:-600}" "$ZS_SRCDIR/tests/node/guest-nocache.sh" \
	ZS_NODEJOB="$nodejob" ZS_PERIOD=2 \
	"ZS_PLUGSTACK=sorter=auto modprobe=zonesort sample_conflicts=yes min_period=1"
ok "guest ran to its end marker (log $log)" grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
	tr -d '\r' < "$log" | grep -v 'pmix\|MPI' | tail -30 | sed 's/^/# /'
	done_testing
	exit 1
}
is "$(tr -d '\r' < "$log" | grep -o 'ZSTEST step_[a-z_0-9]*=[0-9]*' | grep -v '=0$')" "" "every guest step exited 0"
is "$(km_get "$log" memory_side_cache)" 0 "the guest has no memory-side cache"
v=$(km_lines "$log" status_before)
like "$v" "memory-side caches: none detected" "zonesort status says no cache was found"
like "$v" "sorter: none \(no memory-side cache: nothing to sort" "... and that there is nothing to sort"

is "$(km_get "$log" job_on) $(km_get "$log" job_period) $(km_get "$log" job_off) $(km_get "$log" job_compact)" \
	"0 0 0 0" "jobs with --zonesort=on, a period, off, and on with nocache=compact exit 0"
for t in on period; do
	is "$(km_lines "$log" stderr_$t)" "" "the $t job's stderr is clean"
	s=$(km_lines "$log" summary_$t)
	for where in prolog "step 0"; do
		like "$s" "$where on zsnode1: zonesort=(on|every [0-9]+ s), no memory-side cache: nothing to sort" \
			"$t job: the $where summary says there is nothing to sort"
	done
	unlike "$s" "sort,|sorts,|failed|unavailable" "$t job: no sort, failure or 'unavailable' logged"
done
like "$(km_lines "$log" summary_off)" "step 0 on zsnode1: zonesort=off, no sort" "the off job ran unsorted"
is "$(km_get "$log" module_loaded)" no "no module was loaded for a cache that is not there"
for c in compact_migrate_scanned compact_daemon_migrate_scanned compact_stall; do
	before=$(km_get "$log" before_$c) after=$(km_get "$log" after_$c)
	if [[ "$before $after" =~ ^[0-9]+\ [0-9]+$ ]]; then
		is "$((after - before))" 0 "no compaction during the jobs: $c $before -> $after"
	else
		_tap_result 1 "the guest reported $c before and after the jobs (got '$before' and '$after')"
	fi
done
v=$(km_lines "$log" status_after)
like "$v" "memory-side caches: none detected" "zonesort status after the jobs: still no cache"
like "$v" "target nodes: none" "... and no target"
like "$(km_lines "$log" summary_compact)" "prolog on zsnode1: zonesort=on, 1 sort, .*backend compact" \
	"nocache=compact: the prolog compacted the node"
cmp_ok "$(km_get "$log" compact_compact_migrate_scanned)" -gt "$(km_get "$log" after_compact_migrate_scanned)" \
	"... and compact_migrate_scanned moved ($(km_get "$log" after_compact_migrate_scanned) -> $(km_get "$log" compact_compact_migrate_scanned))"
is "$(km_dmesg_bad "$log")" "" "no WARNING, BUG, oops or corruption in dmesg"
done_testing
