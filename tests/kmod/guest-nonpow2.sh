# Runs inside the QEMU guest of 40-nonpow2.t (busybox sh): node 0 has a
# 384 MiB direct-mapped memory-side cache (three times a power of two, as
# Optane Memory Mode's 96, 192 and 384 GiB), node 1 (no CPUs) a cache
# whose HMAT indexing is "complex". The module takes both from the
# firmware: it sorts node 0 with slot = pfn mod 98304, and refuses node 1
# until ways= says how that cache is indexed. Markers: see testbed/vm-guest-lib.sh.
. /guest-lib.sh

C0=/sys/devices/system/node/node0/memory_side_cache/index1
C1=/sys/devices/system/node/node1/memory_side_cache/index1
mount -t debugfs debugfs /sys/kernel/debug
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
echo never > /sys/kernel/mm/transparent_hugepage/defrag
echo 1000000 > /proc/sys/vm/percpu_pagelist_high_fraction
movers off
M n0_size=$(cat $C0/size 2> /dev/null) n0_indexing=$(cat $C0/indexing 2> /dev/null) \
	n1_size=$(cat $C1/size 2> /dev/null) n1_indexing=$(cat $C1/indexing 2> /dev/null)
SIZE=$(cat $C0/size)
SLOTS=$((SIZE / 4096))
HALF=$((SIZE / 2))

step insmod 30 insmod /zonesort.ko
step n1_sort 60 zstest write $Z/nodeid 1
M n1_sort=$(out n1_sort)
step conflicts0 60 zstest read $Z/node0/conflicts_half_ppm
step conflicts1 60 zstest read $Z/node1/conflicts_half_ppm
M conflicts0=$(out conflicts0) conflicts1=$(out conflicts1)

bg age 600 zstest age 400 2 2 /tmp/aged
holder=$BG
ready age /tmp/aged $holder 300
measure u4k $HALF $SLOTS 1
measure uthp $HALF $SLOTS 1 --thp
measure s4k $HALF $SLOTS 1 --sort $Z/nodeid
M slots=$(stat scratch_slots) est_after_half_ppm=$(stat last_conflict_ppm_after)
measure sthp $HALF $SLOTS 1 --thp --sort $Z/nodeid
stop $holder

step ways1 10 zstest write $P/ways 1
step n1_sort_ways 60 zstest write $Z/nodeid 1
M n1_sort_ways=$(out n1_sort_ways)
step conflicts_ways 60 zstest read $Z/node1/conflicts_half_ppm
M conflicts_ways=$(out conflicts_ways)
step rmmod 30 rmmod zonesort
echo ZSTEST_BEGIN dmesg_all
dmesg
echo ZSTEST_DONE dmesg_all
exit 0
