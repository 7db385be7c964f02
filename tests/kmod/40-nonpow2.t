#!/bin/bash
# Memory-side caches whose size is not a power of two, and HMAT indexing
# the module must not guess. QEMU (TCG) on Debian 12's 6.12 kernel with
# two NUMA nodes: node 0 (1 GiB, the CPUs) behind a 384 MiB direct-mapped
# cache (98304 slots of 4 KiB, three times a power of two, as Optane's
# 96/192/384 GiB), node 1 (256 MiB) behind a 128 MiB cache HMAT calls
# "complex". The module sorts node 0 with slot = pfn mod 98304 (aged lists,
# base and huge pages, against the independent bound); it refuses node 1
# with ENODEV until ways= is given.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need qemu-system-x86_64 busybox cpio gcc make

km_need_kernel 6.12
kver=$KM_KVER
# The test build: the measurements' bound comes from its free-list dump.
ko=$(km_build "" "$kver" "hooks-$kver" ZS_TEST_HOOKS=y)
ok "module (test build) builds for $kver" test -n "$ko" || { done_testing; exit 1; }
initrd=$KM_WORK/nonpow2-$kver.cpio.gz
log=$KM_WORK/nonpow2-$kver.log
ok "initramfs packed" km_initramfs "$initrd" "$kver" "$ko" "$ZS_SRCDIR/tests/kmod/guest-nonpow2.sh"
t0=$SECONDS
km_boot "" "$kver" "$initrd" "$log" "1G:384M 256M:128M:complex" 2 600
ok "guest ran to its end marker ($((SECONDS - t0)) s, log $log)" grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
	tr -d '\r' < "$log" | tail -20 | sed 's/^/# /'
	done_testing
	exit 1
}
km_guest_ok "$log" 15
is "$(km_get "$log" n0_size) $(km_get "$log" n0_indexing)" "402653184 0" "node 0: the guest kernel shows a 384 MiB direct-mapped cache"
is "$(km_get "$log" n1_size) $(km_get "$log" n1_indexing)" "134217728 1" "node 1: a 128 MiB cache with complex indexing (the kernel shows indexing 1, \"indexed\")"
like "$(km_lines "$log" dmesg_all)" "node 0: firmware memory-side cache 402653184 bytes, direct-mapped" "the module reads node 0's cache from HMAT"
like "$(km_lines "$log" dmesg_all)" "node 1: firmware memory-side cache 134217728 bytes, not direct-mapped" "... and node 1's, not direct-mapped"
is "$(km_get "$log" n1_sort)" ENODEV "node 1 (complex indexing, no ways=) is not sorted: ENODEV"
like "$(km_lines "$log" dmesg_all)" "node 1: the firmware's memory-side cache is not direct-mapped and gives no associativity: give ways=" \
	"... dmesg says why and what to give"
like "$(km_get "$log" conflicts0)" '^[0-9]+$' "node0/conflicts_half_ppm gives node 0's estimate ($(km_get "$log" conflicts0) ppm)"
is "$(km_get "$log" conflicts1)" ENODEV "... node1/conflicts_half_ppm, without a usable cache, ENODEV"
is "$(km_get "$log" slots)" 98304 "the module tracks 98304 slots (384 MiB / 4 KiB)"
km_measurement "$log" u4k "half, base pages, unsorted"
km_measurement "$log" uthp "half, huge pages, unsorted"
km_measurement "$log" s4k "half, base pages, sorted"
km_measurement "$log" sthp "half, huge pages, sorted"
km_sorted_ok "$log" s4k
km_sorted_ok "$log" sthp
num_ok "sorting lowers the half-cache collisions ($(km_get "$log" u4k_conflict) -> $(km_get "$log" s4k_conflict))" \
	"$(km_get "$log" s4k_conflict) < $(km_get "$log" u4k_conflict)"
num_ok "the module's estimate matches the measurement within 1 point ($(km_get "$log" est_after_half_ppm) ppm vs $(km_get "$log" s4k_conflict))" \
	"($(km_get "$log" est_after_half_ppm) / 1e6 - $(km_get "$log" s4k_conflict))^2 < 1e-4"
is "$(km_get "$log" n1_sort_ways)" ok "with ways=1 node 1 sorts"
like "$(km_get "$log" conflicts_ways)" '^[0-9]+$' "... and node1/conflicts_half_ppm gives its estimate ($(km_get "$log" conflicts_ways) ppm)"
is "$(km_dmesg_bad "$log")" "" "no WARNING, BUG, oops or corruption in dmesg"
done_testing
