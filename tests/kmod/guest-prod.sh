# Runs inside the QEMU guest (busybox sh) as /test.sh: the quarantine on
# a node as production runs it. Node 0 has a direct-mapped memory-side
# cache (HMAT), boot memory, and hotpluggable memory: two DIMMs (the first
# onlined to the kernel zone, the second to ZONE_MOVABLE) and a virtio-mem
# device (onlined movable). After aging the node:
#   bound      a small maximum, back-to-back sorts: the held pages sampled
#              during the sorts and the module's peak (the host compares
#              them with the bound it computes)
#   full       the quarantine at its largest: meminfo and per-node meminfo
#              before and after "release" (KReclaimable, MemFree,
#              MemAvailable)
#   offline    sorts looping in the background while memory blocks that
#              held quarantined pages go offline, timed here; then every
#              ZONE_MOVABLE block; the kernel log's offline lines
#   unplug     the host unplugs the virtio-mem device (QMP) when the guest
#              prints "ZSTEST_HOST unplug"; the guest times MemTotal's fall
#   allcpu     all-CPU operations (kprobes on the kernel's drain and
#              expedited-RCU functions, IPIs from /proc/interrupts) of a
#              sort taking few blocks against one taking many
#   lockhold   the module's lock_hold_entries_max after those sorts and a
#              read of the free-list dump
#   huge       1 GiB then 2 MiB hugetlb pages with the quarantine full,
#              then with it off and empty
# Markers: see testbed/vm-guest-lib.sh; the host asserts. Knobs (kernel command line):
#   ZS_AGE_MIB       MiB each of the two agings touches (default 300)
#   ZS_AGE_KEEP      per mille of them kept (default 20: enough colliding
#                    blocks that a full quarantine holds thousands)
#   ZS_BOUND_MAX_PERMILLE   the maximum of the bound phase
#   ZS_HUGE_FREE_MIB free memory left for the 2 MiB pages (default 640)
. /guest-lib.sh

C=/sys/devices/system/node/node0/memory_side_cache/index1
Q=$Z/quarantine
T=/sys/kernel/tracing

NMI=/sys/devices/system/node/node0/meminfo
# q KEY: a value of node 0's quarantine line, or a key=value line.
q() {
	if [ -e $Z/node0/quarantine_$1 ]; then cat $Z/node0/quarantine_$1; else sed -n "s/^$1=//p" $Q/stats; fi
}
# setp NAME VALUE: a module parameter, a failing step when refused.
setp() { step "param_$1_$2" 10 sh -c "echo $2 > $P/$1"; }
# sortstep NAME: sorts node 0 as a step (a refused write fails it).
sortstep() {
	step $1 300 zstest write $Z/nodeid 0 && [ "$(out $1)" = ok ] || _mark $1 "write-$(out $1)"
}

[ -r $C/size ] || { M hmat_size=none; exit 1; }
SIZE=$(cat $C/size)
BLOCK=$(printf '%d' 0x$(cat $MEM/block_size_bytes))
M hmat_size=$SIZE block_bytes=$BLOCK cpus=$(grep -c ^processor /proc/cpuinfo)
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs $T 2> /dev/null || T=/sys/kernel/debug/tracing
echo 1000000 > /proc/sys/vm/percpu_pagelist_high_fraction

# Hotplugged memory. The DIMMs (sizes in MiB in ZS_DIMM_MIB, in address
# order) are there from boot, offline (memhp_default_state=offline):
# the first goes to the kernel zone, the second to ZONE_MOVABLE, the third
# (1 GiB, aligned) to the kernel zone right before the 1 GiB pages are
# asked for. virtio-mem's blocks appear when its driver loads and go to
# ZONE_MOVABLE. Aging happens in two parts, so that both zones get
# long-lived pages scattered over them (allocations fill the highest zone
# first): one with the kernel zone's DIMM online, one after the movable
# memory came.
ls -d $MEM/memory* | sed 's/.*memory//' | sort > /tmp/blocks.boot
for b in $(sort -n /tmp/blocks.boot); do
	[ "$(cat $MEM/memory$b/state)" = offline ] && echo $b
done > /tmp/dimm
set -- $(echo ${ZS_DIMM_MIB:-512,512,1024} | tr , " ")
nk=$(($1 * 1048576 / BLOCK)) nm=$(($2 * 1048576 / BLOCK))
head -n $nk /tmp/dimm > /tmp/kernel_blocks
head -n $((nk + nm)) /tmp/dimm | tail -n $nm > /tmp/movable_blocks
tail -n +$((nk + nm + 1)) /tmp/dimm > /tmp/giant_blocks
online_blocks online_kernel_dimm online_kernel /tmp/kernel_blocks
# age NAME MIB: zstest age in the background, holding its long-lived
# pages; the pid in $BG.
age() {
	bg $1 3000 zstest age $2 1 ${ZS_AGE_KEEP:-20} /tmp/$1.ready
	_ager=$BG
	_t0=$(now_cs)
	ready $1_ready /tmp/$1.ready $_ager 600
	M $1_cs=$(($(now_cs) - _t0)) $1_$(cat /tmp/$1.ready | tr ' ' '\n' | grep kept_pages)
	BG=$_ager
}
age age_kernel ${ZS_AGE_MIB:-300}
AGER1=$BG
online_blocks online_movable_dimm online_movable /tmp/movable_blocks
if [ -s /modules/order ]; then
	step kernel_mods 60 sh -c 'while read -r m; do insmod /modules/$m || exit 1; done < /modules/order'
fi
_i=0
while [ $_i -lt 100 ]; do
	ls -d $MEM/memory* | sed 's/.*memory//' | sort > /tmp/blocks.now
	grep -qvxF -f /tmp/blocks.boot /tmp/blocks.now && break
	sleep 0.1
	_i=$((_i + 1))
done
grep -vxF -f /tmp/blocks.boot /tmp/blocks.now | sort -n > /tmp/vmem_blocks
online_blocks online_vmem online_movable /tmp/vmem_blocks
age age_movable ${ZS_AGE_MIB:-300}
AGER2=$BG
M kernel_blocks=$(wc -l < /tmp/kernel_blocks) movable_blocks=$(wc -l < /tmp/movable_blocks) \
	giant_blocks=$(wc -l < /tmp/giant_blocks) vmem_blocks=$(wc -l < /tmp/vmem_blocks) \
	memtotal_kb=$(mi MemTotal) memfree_aged_kb=$(mi MemFree)
step zoneinfo 10 cat /proc/zoneinfo
M zones="$(awk '/^Node 0, zone/ { z = $4 } $1 == "present" && $2 > 0 { printf "%s:%d,", z, $2 }' $OUT/zoneinfo)"

step insmod 30 insmod /zonesort.ko
M slots=$((SIZE / 4096)) max_permille_param=$(cat $P/quarantine_max_permille 2> /dev/null || echo none)
# The kernel's own lines when an offline fails (pr_debug).
echo 'file memory_hotplug.c +p' > /sys/kernel/debug/dynamic_debug/control

# --- bound: a small maximum, back-to-back sorts, sampled meanwhile.
setp quarantine_max_permille ${ZS_BOUND_MAX_PERMILLE:-20}
step release_bound 30 sh -c "echo 1 > $Q/release"
rm -f /tmp/sample.stop
bg sample 300 sh -c "while [ ! -e /tmp/sample.stop ]; do
	echo \"held_pages=\$(cat $Z/node0/quarantine_held_pages) kr=\$(awk '\$3 == \"KReclaimable:\" { print \$4 }' $NMI)\"; done"
SAMPLER=$BG
t0=$(now_cs)
step bound_sorts 300 zstest writes $Z/nodeid 0 6
touch /tmp/sample.stop
stop $SAMPLER
M bound_sorts_cs=$(($(now_cs) - t0)) bound_sorts_ok=$(kv bound_sorts ok) bound_samples=$(wc -l < $OUT/sample) \
	bound_sampled_max=$(tr ' ' '\n' < $OUT/sample | sed -n 's/^held_pages=//p' | sort -n | tail -1) \
	bound_peak=$(q peak_pages) bound_held=$(q held_pages) \
	bound_max_pages=$(q max_pages)

# --- full: the quarantine at its largest; what meminfo shows of it.
setp quarantine_max_permille 500
sortstep sort_full
M full_held=$(q held_pages) full_blocks=$(q held_blocks)
# One copy of each meminfo file per side of the release, so the values
# compared come from the same moment.
cat /proc/meminfo > $OUT/mi1 && cat $NMI > $OUT/nmi1
M full_kr1=$(mi KReclaimable $OUT/mi1) full_nkr1=$(mi KReclaimable $OUT/nmi1) \
	full_free1=$(mi MemFree $OUT/mi1) full_avail1=$(mi MemAvailable $OUT/mi1) \
	full_nfree1=$(mi MemFree $OUT/nmi1)
step release_full 30 sh -c "echo 1 > $Q/release"
cat /proc/meminfo > $OUT/mi2 && cat $NMI > $OUT/nmi2
M full_kr2=$(mi KReclaimable $OUT/mi2) full_nkr2=$(mi KReclaimable $OUT/nmi2) \
	full_free2=$(mi MemFree $OUT/mi2) full_avail2=$(mi MemAvailable $OUT/mi2) \
	full_nfree2=$(mi MemFree $OUT/nmi2) full_held2=$(q held_pages)
M low_kb=$(awk '$1 == "low" && NF == 2 { s += $2 } END { print s * 4 }' /proc/zoneinfo)

# --- offline: which hotplugged blocks the sort takes pages out of (free
# pages per block in the free-list dump before and after it).
step dump_before 60 cp /sys/kernel/debug/zonesort/freelists /tmp/fl0
sortstep sort_offline
step dump_after 60 cp /sys/kernel/debug/zonesort/freelists /tmp/fl1
step blocks_before 60 zsblocks /tmp/fl0 $BLOCK
step blocks_after 60 zsblocks /tmp/fl1 $BLOCK
# taken BLOCKLIST: "block pages" of the listed block that lost the most
# free pages to the sort.
taken() {
	awk 'FNR == 1 { f++ } f == 1 { want[$1] = 1; next }
		{ split($1, a, "="); split($2, b, "="); if (f == 2) before[a[2]] = b[2]; else after[a[2]] = b[2] }
		END { best = -1; for (k in want) { d = before[k] - after[k]; if (d > bestd || best < 0) { best = k; bestd = d } }
			print best, bestd + 0 }' "$1" $OUT/blocks_before $OUT/blocks_after
}
# taken_each FILE: the pages the sort took out of each listed block.
taken_each() {
	for _b in $(cat $1); do
		echo "$_b $(sed -n "s/^block=$_b free=//p" $OUT/blocks_before) $(sed -n "s/^block=$_b free=//p" $OUT/blocks_after)"
	done | awk '{ printf "blk_%s_taken=%d ", $1, $2 - $3 }'
}
M off_held=$(q held_pages) $(taken_each /tmp/kernel_blocks) $(taken_each /tmp/movable_blocks)
rm -f /tmp/fl0 /tmp/fl1

# offline_timed TAG BLOCK: offlines a block with the guest's own clock
# running (a 30 s time-out only stops a hang); TAG_rc (0, the errno's
# name the write got, or 124 for the time-out), TAG_cs, the kernel
# log meanwhile; puts it back online in its zone when it went.
# An offline still running after 12 s is looked at: the block's page
# flags (what keeps it from going), the module's held pages, and whether
# it finishes once the sort loop pauses (TAG_paused_cs: when it paused).
offline_timed() {
	dmesg_mark
	_t0=$(now_cs)
	rm -f /tmp/race.pause
	timeout 30 zstest write $MEM/memory$2/state offline > $OUT/$1 2>&1 &
	_w=$!
	_i=0
	while [ $_i -lt 120 ] && kill -0 $_w 2> /dev/null; do
		sleep 0.1
		_i=$((_i + 1))
	done
	if kill -0 $_w 2> /dev/null; then
		zstest flags $(($2 * BLOCK / 4096)) $((BLOCK / 4096)) > $OUT/$1_flags 2>&1
		cap $1_flags $1_flags
		M $1_stuck_held=$(q held_pages) $1_stuck_sorts=$(sed -n 's/^sorts=//p' $Z/stats)
		touch /tmp/race.pause
		M $1_paused_cs=$(($(now_cs) - _t0))
	fi
	wait $_w
	_rc=$?
	_t1=$(now_cs)
	rm -f /tmp/race.pause
	[ $_rc = 0 ] && _rc=$(cat $OUT/$1)
	[ "$_rc" = ok ] && _rc=0
	M $1_rc=$_rc $1_cs=$((_t1 - _t0)) $1_state=$(cat $MEM/memory$2/state) \
		$1_sorts=$(sed -n 's/^sorts=//p' $Z/stats)
	cap $1_out $1
	dmesg_since $1_dmesg
	if [ "$(cat $MEM/memory$2/state)" = offline ]; then
		_zone=online_kernel
		grep -qx "$2" /tmp/movable_blocks /tmp/vmem_blocks && _zone=online_movable
		step $1_back 60 sh -c "echo $_zone > $MEM/memory$2/state"
	fi
}
rm -f /tmp/race.stop
bg race 600 sh -c "while [ ! -e /tmp/race.stop ]; do
	if [ -e /tmp/race.pause ]; then sleep 0.1; else zstest write $Z/nodeid 0; fi; done"
RACER=$BG
M race_sorts0=$(sed -n 's/^sorts=//p' $Z/stats)
# Every block of the DIMMs, the race still on (virtio-mem's go with the
# unplug).
for b in $(cat /tmp/kernel_blocks /tmp/movable_blocks); do
	offline_timed off_$b $b
done
# The loop ends after the sort it is in: a sort still running would make
# the next one busy.
touch /tmp/race.stop
wait $RACER
M off_kernel=$(tr '\n' , < /tmp/kernel_blocks) off_movable=$(tr '\n' , < /tmp/movable_blocks) \
	race_ok=$(grep -c '^ok' $OUT/race) race_busy=$(grep -c EBUSY $OUT/race)

# --- unplug: the quarantine full again; the host sets the virtio-mem
# device's requested size to 0 and the guest waits for MemTotal to fall
# by what the device had plugged (60 s at most).
sortstep sort_unplug
M unplug_held=$(q held_pages) unplug_memtotal0_kb=$(mi MemTotal)
m0=$(mi MemTotal)
want_kb=$(($(wc -l < /tmp/vmem_blocks) * BLOCK / 1024))
dmesg_mark
echo "ZSTEST_HOST unplug"
t0=$(now_cs)
while [ $(($(now_cs) - t0)) -lt 6000 ] && [ $((m0 - $(mi MemTotal))) -lt $want_kb ]; do
	sleep 0.1
done
M unplug_cs=$(($(now_cs) - t0)) unplug_want_kb=$want_kb unplug_drop_kb=$((m0 - $(mi MemTotal)))
dmesg_since unplug_dmesg

# --- allcpu: kprobes on the kernel's all-CPU operations count their
# calls (kprobe_profile), /proc/interrupts the IPIs; a sort taking few
# blocks, then one taking many.
for f in drain_all_pages lru_add_drain_all __lru_add_drain_all lru_cache_disable synchronize_rcu_expedited; do
	echo "p:zsac_$f $f" >> $T/kprobe_events 2> /dev/null && echo 1 > $T/events/kprobes/zsac_$f/enable && echo $f
done > /tmp/probes
M probes="$(tr '\n' ',' < /tmp/probes)"
hits() { awk '$1 ~ /^zsac_/ { s += $2 } END { print s + 0 }' $T/kprobe_profile; }
ipis() { awk '$1 == "CAL:" || $1 == "TLB:" || $1 == "RES:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i } END { print s + 0 }' /proc/interrupts; }
# allcpu TAG MAX_PERMILLE: one sort from empty with that maximum.
allcpu() {
	step release_$1 30 sh -c "echo 1 > $Q/release"
	setp quarantine_max_permille $2
	_h0=$(hits)
	_i0=$(ipis)
	sortstep sort_$1
	M $1_hits=$(($(hits) - _h0)) $1_ipis=$(($(ipis) - _i0)) $1_blocks=$(q held_blocks) $1_held=$(q held_pages) \
		$1_module_ops=$(q last_allcpu_ops)
	cp $T/kprobe_profile $OUT/profile_$1
	cap $1_profile profile_$1
}
allcpu few 2
allcpu many 500
allcpu few2 2

# --- lockhold: after those sorts and a read of the free-list dump.
step dump_lock 60 cp /sys/kernel/debug/zonesort/freelists /tmp/fl2
step blocks_lock 60 zsblocks /tmp/fl2 $BLOCK
rm -f /tmp/fl2
M lock_longest=$(kv blocks_lock longest) lock_free_blocks=$(kv blocks_lock blocks) \
	lock_entries_max=$(stat lock_hold_entries_max) lock_ns_max=$(stat lock_hold_ns_max) lock_batch=$(stat lock_batch)

# --- huge: 1 GiB pages from the third DIMM, onlined to the kernel zone
# right before they are asked for: 1 GiB pages are never movable, and the
# kernel zone's other memory has unmovable pages all over it (an aging in
# the new DIMM brought some there too: the fallback of unmovable
# allocations takes the largest free blocks). A freshly onlined range has
# nothing the quarantine takes, so this shows that a full quarantine
# elsewhere does not stop 1 GiB pages; held pages in a range being taken
# are the virtio-mem unplug's case (alloc_contig_range per subblock).
# Then 2 MiB pages asked for on top of a pool that leaves
# ZS_HUGE_FREE_MIB free, the held pages among what is left. The
# quarantine full first, then off and empty.
H1=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
H2=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
# huge TAG FILE COUNT: what nr_hugepages reaches when COUNT is asked; then
# back to what it was.
huge() {
	_was=$(cat $2)
	step $1 600 sh -c "echo $3 > $2"
	M $1_got=$(($(cat $2) - _was)) $1_held_after=$(q held_pages)
	step $1_back 300 sh -c "echo $_was > $2"
}
M huge_1g_present=$([ -e $H1 ] && echo 1 || echo 0)
setp quarantine_max_permille 500
online_blocks online_giant online_kernel /tmp/giant_blocks
step dump_giant0 60 cp /sys/kernel/debug/zonesort/freelists /tmp/fl0
step release_huge1 30 sh -c "echo 1 > $Q/release"
sortstep sort_huge1
step dump_giant1 60 cp /sys/kernel/debug/zonesort/freelists /tmp/fl1
step giant_before 60 zsblocks /tmp/fl0 $BLOCK
step giant_after 60 zsblocks /tmp/fl1 $BLOCK
rm -f /tmp/fl0 /tmp/fl1
set -- $(taken /tmp/giant_blocks)
M huge_q1_held=$(q held_pages) huge_giant_block=$1 huge_giant_taken=$2 \
	huge_giant_free_pages=$(for b in $(cat /tmp/giant_blocks); do sed -n "s/^block=$b free=//p" $OUT/giant_before; done | awk '{ s += $1 } END { print s + 0 }')
huge huge_q1 $H1 2
step release_huge1b 30 sh -c "echo 1 > $Q/release"
setp quarantine N
huge huge_o1 $H1 2
setp quarantine Y
pool=$(( ($(mi MemFree) - ${ZS_HUGE_FREE_MIB:-640} * 1024) / 2048 ))
step pool 600 sh -c "echo $pool > $H2"
M huge_pool=$(cat $H2) huge_memfree_kb=$(mi MemFree)
sortstep sort_huge2
M huge_q2_held=$(q held_pages)
huge huge_q2 $H2 100000
step release_huge2 30 sh -c "echo 1 > $Q/release"
setp quarantine N
huge huge_o2 $H2 100000
setp quarantine Y
# Once more with the quarantine, after the attempt without it: each
# attempt's compaction leaves memory better arranged for the next, so the
# attempt made second reaches more; one attempt on each side of it.
sortstep sort_huge2b
M huge_q2b_held=$(q held_pages)
huge huge_q2b $H2 100000
step release_huge2b 30 sh -c "echo 1 > $Q/release"
step pool_free 300 sh -c "echo 0 > $H2"
M tainted=$(cat /proc/sys/kernel/tainted)
echo "ZSTEST_BEGIN dmesg_all"
dmesg
echo "ZSTEST_DONE dmesg_all"
exit 0
