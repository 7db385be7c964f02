#!/bin/bash
# A short torture of the module on the stock kernels (Debian's 6.1 and
# sid's 7.x, one per way of holding a block; 53-races.t stages the races
# on 6.12 and 7.x; module as shipped), in QEMU (TCG): everything at once
# for ZS_TORTURE_S seconds (default 30) with rmmod and insmod every 10 s or
# so under it -- sorts, the interval timer, compaction, memory offline and
# online, virtio-mem resized by the host, 2 MiB and 1 GiB hugetlb pages,
# memory pressure driving the shrinker, quarantine switches and releases,
# readers of every sysfs file (testbed/guest-torture.sh; the long runs on
# debug kernels are bench/kmod-torture). The seed is random and printed
# (ZS_TORTURE_SEED replays a schedule). Pass criteria
# (km_torture_check): the kernel log has no report, every rmmod returns
# within 10 s, and after a final release and rmmod MemFree, Balloon and
# offline pages are back where they were before the load.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need qemu-system-x86_64 busybox cpio gcc make perl modprobe

for series in ${ZS_TORTURE_SERIES:-6.1 7}; do
	km_series_root "$series" || continue
	root=$KM_SERIES_ROOT
	kver=$(km_kver "$series" "$root")
	if [ -z "$kver" ]; then
		_tap_result 1 "a Debian $series kernel image and headers in '${root:-/}'"
		continue
	fi
	ko=$(km_build "$root" "$kver")
	ok "$series: module builds for $kver" test -n "$ko" || continue
	seed=${ZS_TORTURE_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	log=$KM_WORK/torture-$kver.log
	t0=$SECONDS
	km_torture "$root" "$kver" "$ko" "$log" "${ZS_TORTURE_S:-30}" "$seed" 10
	diag "$series: torture seed $seed, guest $((SECONDS - t0)) s, log $log"
	km_torture_check "$series" "$log"
done
done_testing
