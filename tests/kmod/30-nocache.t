#!/bin/bash
# Without a memory-side cache size (the firmware describes none and no
# cache_size= was given) the module refuses to sort rather than guess:
# the write fails with ENODEV and dmesg says why. A bad cache_size at load
# time is refused; a good one, given at load or run time, makes it sort.
# QEMU (TCG) on Debian's 6.1 kernel, machine without HMAT.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/env.sh"
. "$(dirname "$0")/vm.sh"
need qemu-system-x86_64 busybox cpio gcc make
need_file "$ZS_ZONESORT" "the zonesort command"

kver=$(km_kver 6.1)
if [ -z "$kver" ]; then
	_tap_result 1 "a Debian 6.1 kernel with headers is installed (scripts/debian-packages.kmod)"
	done_testing
	exit 1
fi
ko=$(km_build "$kver")
ok "module builds for $kver" test -n "$ko" || { done_testing; exit 1; }
initrd=$KM_WORK/nocache-$kver.cpio.gz
log=$KM_WORK/nocache-$kver.log
ok "initramfs packed" km_initramfs "$initrd" "$kver" "$ko" "$ZS_SRCDIR/tests/kmod/guest-nocache.sh"
km_boot "$kver" "$initrd" "$log" none 512M 1 300
ok "guest ran to its end marker" grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
	tr -d '\r' < "$log" | tail -20 | sed 's/^/# /'
	done_testing
	exit 1
}
is "$(km_get "$log" memory_side_cache)" 0 "the guest has no memory-side cache"
like "$(km_lines "$log" status)" "none detected" "zonesort status says no cache was detected"
is "$(km_get "$log" insmod_bad)" refused "insmod with cache_size=12345 (not a power of two) is refused"
is "$(km_get "$log" insmod)" ok "insmod without parameters works"
is "$(km_get "$log" nodeid_nocache)" ENODEV "a sort without a cache size fails with ENODEV"
is "$(km_get "$log" failed)" 1 "... counted as failed in stats"
like "$(km_lines "$log" dmesg)" "no memory-side cache size.*cache_size=" "dmesg says why and what to set"
like "$(km_lines "$log" dmesg)" "cache_size: 12345 is not" "dmesg names the refused parameter value"
like "$(km_lines "$log" conflicts)" "node=0 cache_size=0" "conflicts reports no cache size"
is "$(km_get "$log" set_size) $(km_get "$log" nodeid_set)" "ok ok" "cache_size set at run time: the sort works"
is "$(km_get "$log" sorts)" 1 "... and is counted"
is "$(km_get "$log" rmmod)" ok "module unloads"
is "$(km_get "$log" insmod_param) $(km_get "$log" nodeid_param) $(km_get "$log" ways)" "ok ok 2" \
	"loaded with cache_size= and ways=2 it sorts"
like "$(km_lines "$log" dmesg_all)" "zonesort: version" "the guest's kernel log was captured"
is "$(km_dmesg_bad "$log")" "" "no WARNING, BUG, oops or corruption in dmesg"
done_testing
