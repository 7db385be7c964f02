#!/bin/bash
# Without a memory-side cache size (the firmware describes none and no
# cache_size= was given) the module refuses to sort rather than guess:
# the write fails with ENODEV and dmesg says why. A bad cache_size at load
# time is refused; a good one (also one that is not a power of two), given
# at load or run time, makes it sort. On a node short of memory a sort
# still works without waking the OOM killer (the tables were allocated at
# load), and a geometry whose tables do not fit is refused with ENOMEM.
# A walk of a free list that resumes from a block an older kernel moved
# to another list never moves that block back: the race is staged by the
# test build's hook (make ZS_TEST_HOOKS=y), which moves the block to
# another list without re-typing its pageblock as 6.1's own steal path
# does, since waiting for the kernel to do it at that instant is not
# possible. QEMU (TCG) on Debian's 6.1 kernel (it predates 6.10's
# one-list-per-pageblock-type rule), no HMAT, 512 MiB.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need qemu-system-x86_64 busybox cpio gcc make
need_file "$ZS_ZONESORT" "the zonesort command"

km_need_kernel 6.1
kver=$KM_KVER
ko=$(km_build "" "$kver")
ok "module builds for $kver" test -n "$ko" || { done_testing; exit 1; }
hooks=$(km_build "" "$kver" "hooks-$kver" ZS_TEST_HOOKS=y)
ok "test build with hooks builds for $kver" test -n "$hooks" || { done_testing; exit 1; }
initrd=$KM_WORK/nocache-$kver.cpio.gz
log=$KM_WORK/nocache-$kver.log
ok "initramfs packed" km_initramfs "$initrd" "$kver" "$ko" "$ZS_SRCDIR/tests/kmod/guest-nocache.sh" "$hooks"
km_boot "" "$kver" "$initrd" "$log" none 2 400
ok "guest ran to its end marker" grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
	tr -d '\r' < "$log" | tail -20 | sed 's/^/# /'
	done_testing
	exit 1
}
km_guest_ok "$log" 22
is "$(km_get "$log" memory_side_cache)" 0 "the guest has no memory-side cache"
like "$(km_lines "$log" status)" "none detected" "zonesort status says no cache was detected"
is "$(km_get "$log" nodeid_nocache)" ENODEV "a sort without a cache size fails with ENODEV"
is "$(km_get "$log" failed)" 1 "... counted as failed in stats"
like "$(km_lines "$log" dmesg_all)" "no memory-side cache size.*cache_size=" "dmesg says why and what to set"
like "$(km_lines "$log" dmesg_all)" "cache_size: 12345 is not" "insmod cache_size=12345 is refused, dmesg names the value"
is "$(km_get "$log" conflicts)" ENODEV "node0/conflicts_half_ppm without a cache size: ENODEV"
is "$(km_get "$log" set_size) $(km_get "$log" nodeid_set)" "ok ok" "cache_size set at run time: the sort works"
is "$(km_get "$log" sorts)" 1 "... and is counted"
is "$(km_get "$log" nodeid_96m) $(km_get "$log" slots_96m)" "ok 24576" \
	"cache_size=96 MiB (not a power of two) sorts, with 24576 slots"
is "$(km_get "$log" nodeid_param) $(km_get "$log" ways)" "ok 2" "loaded with cache_size= and ways=2 it sorts"

# Memory pressure.
diag "the memory holder took $(km_get "$log" pressed_pages) pages, leaving $(km_get "$log" pressed_headroom) above the min watermarks"
cmp_ok "$(km_get "$log" pressed_headroom)" -le 256 "memory was short: at most 256 pages left above the min watermarks"
is "$(km_get "$log" pressed_sort)" ok "a sort on a node short of memory works (its tables were allocated at load)"
is "$(km_get "$log" pressed_oom_kills)" 0 "... and woke no OOM killer (/proc/vmstat oom_kill)"
is "$(km_get "$log" pressed_param) $(km_get "$log" cache_size_after_grow)" "ENOMEM 268435456" \
	"cache_size=1 GiB needs bigger tables: refused with ENOMEM while memory is short, the old size kept"
like "$(km_lines "$log" dmesg_all)" "no memory for the sort's tables" "... dmesg says why"
is "$(km_get "$log" grow) $(km_get "$log" scratch_slots_grown)" "ok 262144" "... and accepted once memory is back"

# The walk that follows a moved block.
is "$(km_get "$log" hook_sort)" ok "sort with a block moved to another list mid-walk works"
diag "where the moved block was after each staged race: $(km_get "$log" hook_results)"
unlike "$(km_get "$log" hook_results)" "returned" "the moved block was never moved back to its old list"
is "$(km_get "$log" hook_result)" stayed "the moved block stayed on the list it was moved to (in one of at most four staged races)"
cmp_ok "$(km_get "$log" walks_cut)" -ge 1 "the walk saw it end at another list's head and left that list as it was"
is "$(km_dmesg_bad "$log")" "" "no WARNING, BUG, oops or corruption in dmesg"
done_testing
