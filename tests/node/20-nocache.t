#!/bin/bash
# A node without a memory-side cache (QEMU guest, no HMAT, Debian's 6.1
# kernel) configured as a cache node would be: "required zonesort.so
# sorter=auto modprobe=zonesort sample_conflicts=yes". Jobs run and exit
# 0 without error lines from sorting, the plugin falls back to compaction
# instead of loading a module that cannot sort without a cache size, and
# "zonesort status" says there is no cache and which sorter works.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/env.sh"
. "$(dirname "$0")/../kmod/vm.sh"
. "$(dirname "$0")/node.sh"
need qemu-system-x86_64 busybox cpio gcc make depmod modprobe xz

nd_setup 6.1
kver=$ND_KVER
nodejob=$(nd_nodejob)
log=$ND_WORK/nocache-$kver.log
nd_boot "$kver" "$log" none 1G 2 "${ZS_NODE_LIMIT_S:-600}" "$ND_DIR/guest-nocache.sh" \
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
like "$v" "sorter: compact" "... and names the sorter that works here"

is "$(km_get "$log" job_on) $(km_get "$log" job_period) $(km_get "$log" job_off)" "0 0 0" \
	"jobs with --zonesort=on, a period and off exit 0"
is "$(km_lines "$log" stderr_on)" "" "the on job's stderr is clean"
for t in on period; do
	s=$(km_lines "$log" summary_$t)
	like "$s" "prolog on zsnode1: zonesort=[a-z0-9 ]+, 1 sort, 0 skipped \(recent\), 0 busy, 0 failed, [0-9.]+ s, backend compact" \
		"$t job: the prolog sorted by compaction, nothing failed"
	unlike "$s" "failed: |No such device" "$t job: no sort failure logged"
done
like "$(km_lines "$log" stderr_period)" "conflict sampling: no memory-side cache found" \
	"sample_conflicts=yes without a cache: the periodic job is told once why there is no sample"
unlike "$(km_lines "$log" stderr_period)" "No such device|write of node" "... and nothing else"
like "$(km_lines "$log" summary_off)" "step 0 on zsnode1: zonesort=off, no sort" "the off job ran unsorted"
is "$(km_get "$log" module_loaded)" no "no module was loaded for a cache that is not there"
v=$(km_lines "$log" status_after)
like "$v" "memory-side caches: none detected" "zonesort status after the jobs: still no cache"
like "$v" "sorter: compact" "... and compaction as the sorter"
is "$(km_dmesg_bad "$log")" "" "no WARNING, BUG, oops or corruption in dmesg"
done_testing
