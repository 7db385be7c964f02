# Runs inside the QEMU guest (busybox sh) as /test.sh: races between the
# quarantine and the kernel's page isolation, each staged at a chosen
# place with the test build's test points (test_at, test_take; see
# kmod/zonesort_testhooks.c), so that it happens every run, not one run
# in twenty. Node 0: 1 GiB of boot memory behind a 256 MiB direct-mapped
# memory-side cache (HMAT), a 512 MiB DIMM onlined to ZONE_MOVABLE (aged,
# so that it has small free blocks) and a virtio-mem device onlined to ZONE_MOVABLE that the host shrinks in
# 2 MiB steps when asked ("ZSTEST_HOST resize"). The kernel command line
# poisons freed block descriptors (slub_debug=FZP,zonesort_held_block),
# so that a read after free crashes instead of reading stale values.
#   other     a build of the module for another kernel release with this
#             kernel's symbol checksums (what weak-modules links) is
#             refused
#   unload    rmmod while an isolation callback is paused on a block it
#             claimed (virtio-mem unplugging the block's subblock)
#   partial   a partial virtio-mem unplug over a held 4 MiB block
#   picking   memory offline claims a block a sort is picking, and the
#             sort settles it meanwhile
#   taken     memory offline of a block a sort has just taken
#   drain     where the sort's per-CPU list drains isolate a pageblock
#             when free memory is all over the boot memory: memory no
#             offline could take anyway
#   late      pages a migration isolated, put back after their block
#             was given back
#   putback   the same where the migration that claimed the block gave
#             it back itself and the others failed (balloon pages, 7.x)
#   shrink    reclaim entered from a thread that isolated held pages
#             (the shrinker run at the callback's test point)
# Markers: see testbed/vm-guest-lib.sh; the host asserts (53-races.t).
# Knob (kernel command line): ZS_RACES_PHASES, the phases after "other"
# to run, comma-separated (default all, in the order above).
. /guest-lib.sh

D=/sys/kernel/debug/zonesort
T=/sys/kernel/tracing
Q=$Z/quarantine
C=/sys/devices/system/node/node0/memory_side_cache/index1

[ -r $C/size ] || { M hmat_size=none; exit 1; }
BLOCK=$(printf '%d' 0x$(cat $MEM/block_size_bytes))
BP=$((BLOCK / 4096))	# pages per memory block
M hmat_size=$(cat $C/size) block_bytes=$BLOCK kernel=$(uname -r)
mount -t debugfs debugfs /sys/kernel/debug
mount -t tracefs tracefs $T 2> /dev/null || T=/sys/kernel/debug/tracing
echo 'file memory_hotplug.c +p' > /sys/kernel/debug/dynamic_debug/control

# held: the blocks the module holds (debugfs, test builds), one a line.
held() { cat $D/held; }
# is_held PFN: PFN heads a held block.
is_held() { grep -q " pfn=$(printf '%#x' $1)\$" $D/held; }
# held_order PFN: the order of the held block at PFN.
held_order() { sed -n "s/.* order=\([0-9]*\) pfn=$(printf '%#x' $1)\$/\1/p" $D/held; }
# fired: how many test points have fired.
fired() { sed -n 's/.* n=\([0-9]*\)$/\1/p' $P/test_fired; }
# wait_fired N SECS: until N test points fired, at most SECS seconds.
wait_fired() {
	_i=0
	while [ "$(fired)" -lt "$1" ] && [ $_i -lt $(($2 * 10)) ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
	[ "$(fired)" -ge "$1" ]
}
# sortstep NAME: sorts node 0 as a step.
sortstep() {
	step $1 120 zstest write $Z/nodeid 0 && [ "$(out $1)" = ok ] || _mark $1 "write-$(out $1)"
}
# stage NAME PFN...: the next sort holds these free blocks besides its
# picks; sorts.
stage() {
	_n=$1
	shift
	echo "$*" | tr ' ' , > $P/test_take
	sortstep $_n
}
# free_blocks MINORDER MAXORDER FIRST LAST N: first pfns of up to N free
# movable blocks of MINORDER to MAXORDER in memory blocks FIRST to LAST,
# lowest first, from a fresh copy of the free-list dump.
free_blocks() {
	cp $D/freelists /tmp/fl
	awk -v o1=$1 -v o2=$2 -v lo=$(($3 * BP)) -v hi=$((($4 + 1) * BP)) '$1 == "F" && $4 == 1 && $5 >= o1 && $5 <= o2 {
		for (i = 7; i <= NF; i++) { p = ("0x" $i) + 0; if (p >= lo && p < hi) print p } }' /tmp/fl | sort -n | head -n $5
}
# refreshed_mi KEY: a meminfo value after the CPUs' pending counter
# changes are folded in (vm.stat_refresh).
refreshed_mi() { echo 1 > /proc/sys/vm/stat_refresh; mi $1; }
# blk PFN: the memory block of PFN.
blk() { echo $(($1 / BP)); }
# offline_bg TAG BLOCK: starts taking BLOCK offline (30 s at most); the
# pid in $BG; offline_done TAG BLOCK ZONE: waits for it, records the
# result and brings the block back online in ZONE.
offline_bg() {
	dmesg_mark
	bg $1 30 zstest write $MEM/memory$2/state offline
}
offline_done() {
	wait $BG
	M $1_rc=$(out $1) $1_state=$(cat $MEM/memory$2/state)
	dmesg_since $1_dmesg
	[ "$(cat $MEM/memory$2/state)" = online ] || step $1_back 60 sh -c "echo $3 > $MEM/memory$2/state"
}
# contig_trace: alloc_contig_range() calls and results from here on
# (kprobes; its name has a _noprof suffix from 6.10).
contig_on() {
	echo > $T/trace
	for _f in alloc_contig_range_noprof alloc_contig_range; do
		if echo "p:zsacs $_f start=%di:u64" >> $T/kprobe_events 2> /dev/null; then
			echo "r:zsacr $_f ret=\$retval:s32" >> $T/kprobe_events
			echo 1 > $T/events/kprobes/zsacs/enable
			echo 1 > $T/events/kprobes/zsacr/enable
			echo $_f
			return 0
		fi
	done
	return 1
}
contig_failed() { grep -c 'zsacr:.* ret=-' $T/trace; }
contig_calls() { grep -c 'zsacr:' $T/trace; }
contig_starts() { sed -n 's/.*zsacs:.* start=\([0-9]*\).*/\1/p' $T/trace; }

# --- Memory. The DIMM is offline from boot (memhp_default_state=offline)
# and goes to ZONE_MOVABLE. Aging with only the DIMM in ZONE_MOVABLE
# leaves its long-lived pages in its first three memory blocks: one for
# the phase that compacts (DM0, where ZONE_MOVABLE starts), one for each
# phase that takes a block offline (DM1, DM2), since memory that comes
# back online has only whole free blocks.
ls -d $MEM/memory* | sed 's/.*memory//' | sort -n > /tmp/blocks.boot
for b in $(cat /tmp/blocks.boot); do
	[ "$(cat $MEM/memory$b/state)" = offline ] && echo $b
done > /tmp/dimm
cp /tmp/dimm /tmp/movable_blocks
online_blocks online_movable_dimm online_movable /tmp/movable_blocks
bg age 3000 zstest age ${ZS_AGE_MIB:-400} 1 20 /tmp/age.ready
AGER=$BG
ready age_ready /tmp/age.ready $AGER 600
step kernel_mods 60 sh -c 'while read -r m; do insmod /modules/$m || exit 1; done < /modules/order'
# virtio-mem adds its memory blocks one at a time: wait for all of them
# (ZS_VMEM_MIB, what the device plugs at boot).
vmem_online online_vmem ${ZS_VMEM_MIB:-256}
VTOP=$((($(tail -1 /tmp/vmem_blocks) + 1) * BP))	# first pfn past virtio-mem
DM0=$(sed -n 1p /tmp/movable_blocks) DM1=$(sed -n 2p /tmp/movable_blocks) DM2=$(sed -n 3p /tmp/movable_blocks)
M movable_blocks=$(wc -l < /tmp/movable_blocks) \
	vmem_blocks=$(wc -l < /tmp/vmem_blocks) vtop=$VTOP memtotal_kb=$(mi MemTotal) \
	balloon0_kb=$(refreshed_mi Balloon) kreclaimable0_kb=$(mi KReclaimable)

# --- other: a module built for another release, same symbols.
phase_other() {
	dmesg_mark
	refuse other_load 30 insmod /zonesort-other.ko
	cap other_load_out other_load
	dmesg_since other_load_dmesg
	[ ! -d /sys/module/zonesort ] || step other_unload 30 rmmod zonesort
	M other_loaded_after=$([ -d /sys/module/zonesort ] && echo yes || echo no)
}

# resize NAME MIB: asks the host to set virtio-mem's requested size and
# waits up to 30 s for MemTotal to follow; NAME_cs the time it took.
# virtio-mem unplugs the highest plugged 2 MiB subblock first: TOPP is
# the first pfn past the plugged ones, as long as that holds.
PLUGGED=$(($(wc -l < /tmp/vmem_blocks) * BLOCK / 1048576))
TOPP=$VTOP
resize() {
	_m0=$(mi MemTotal)
	_want=$(((PLUGGED - $2) * 1024))
	TOPP=$((TOPP - (PLUGGED - $2) * 256))
	PLUGGED=$2
	_t0=$(now_cs)
	echo "ZSTEST_HOST resize vm0 $(($2 * 1048576))"
	while [ $(($(now_cs) - _t0)) -lt 3000 ] && [ $((_m0 - $(mi MemTotal))) -lt $_want ]; do
		sleep 0.1
	done
	M $1_cs=$(($(now_cs) - _t0)) $1_want_kb=$_want $1_drop_kb=$((_m0 - $(mi MemTotal)))
}

# --- unload: the top subblock goes first (nothing held there); then the
# block right below it, a free 2 MiB block, is held, and the host asks
# for it: virtio-mem's contiguous allocation isolates it and the
# callback that claims it pauses 3 s; rmmod meanwhile must wait for it.
phase_unload() {
	resize unplug1 $((PLUGGED - 2))
	U=$((TOPP - 512))
	stage unload_stage $U
	M unload_held=$(is_held $U && echo yes || echo no) unload_order=$(held_order $U)
	echo "claimed@$U:pause:3000" > $P/test_at
	n0=$(fired)
	dmesg_mark
	echo "ZSTEST_HOST resize vm0 $(((PLUGGED - 2) * 1048576))"
	PLUGGED=$((PLUGGED - 2))
	TOPP=$((TOPP - 512))
	M unload_fired=$(wait_fired $((n0 + 1)) 30 && echo yes || echo no)
	unload unload_rmmod
	M unload_loaded=$([ -d /sys/module/zonesort ] && echo yes || echo no)
	sleep 4
	dmesg_since unload_dmesg
	step unload_insmod 30 insmod /zonesort.ko
}

# --- partial: a free 4 MiB block at the top is held; the next 2 MiB
# the host takes are its upper half, which virtio-mem allocates alone.
phase_partial() {
	[ $((TOPP % 1024)) = 0 ] || resize partial_align $((PLUGGED - 2))
	P4=$((TOPP - 1024))
	stage partial_stage $P4
	M partial_held=$(is_held $P4 && echo yes || echo no) partial_order=$(held_order $P4) \
		partial_big=$(awk -v pb=$(sed -n 's/.*pageblock_order \([0-9]*\).*/\1/p' $D/freelists | head -1) \
			'{ sub(/.*order=/, ""); sub(/ .*/, ""); if ($1 + 0 > pb) n++ } END { print n + 0 }' $D/held)
	echo > $T/trace
	dmesg_mark
	resize partial $((PLUGGED - 2))
	M partial_contig_calls=$(contig_calls) partial_contig_failed=$(contig_failed)
	dmesg_since partial_dmesg
	step partial_release 30 sh -c "echo 1 > $Q/release"
}

# stage_held NAME MINORDER MAXORDER BLOCK N [LAST]: holds up to N free
# blocks of those orders in memory blocks BLOCK to LAST (default BLOCK)
# (test_take with a sort), trying
# up to three times (a sort's own give-backs merge free blocks); prints
# the held ones' first pfns.
stage_held() {
	_t=0
	while [ $_t -lt 3 ]; do
		_c=$(free_blocks $2 $3 $4 ${6:-$4} $5)
		[ -n "$_c" ] && stage $1 $_c > /dev/console
		_h=$(for _p in $_c; do is_held $_p && echo $_p; done)
		[ -n "$_h" ] && break
		_t=$((_t + 1))
	done
	echo $_h
}

# --- picking: blocks of order 3 in the second DIMM block held; a sort
# pulls them for its pick and pauses 2 s once it has pulled one of them;
# memory offline of that block claims it meanwhile and pauses 3 s after
# the claim, so that the sort settles the block first.
phase_picking() {
	set -- $(stage_held picking_stage 3 3 $DM1 4)
	M picking_held=$#
	X=${1:-0}
	n0=$(fired)
	echo "picking@$X:pause:2000" > $P/test_at
	bg picking_sort 120 zstest write $Z/nodeid 0
	SORTER=$BG
	M picking_fired=$(wait_fired $((n0 + 1)) 60 && echo yes || echo no)
	echo "claimed@$X:pause:3000" > $P/test_at
	cp $D/held /tmp/held_before
	offline_bg picking_off $(blk $X)
	OFFLINER=$BG
	wait $SORTER
	M picking_sort=$(out picking_sort) picking_block=$(blk $X)
	BG=$OFFLINER
	offline_done picking_off $(blk $X) online_movable
	echo none > $P/test_at
	# Pages offlining failed to isolate that were the module's (the
	# kernel retries others, a process's pages being freed, on its own).
	M picking_failed_ours=$(dmesg | awk 'FNR == NR { split($3, o, "="); split($4, p, "="); sz = 1; for (k = 0; k < o[2]; k++) sz *= 2; f[++n] = (p[2] + 0) " " (p[2] + sz); next }
		/failed to isolate pfn/ { q = ("0x" $NF) + 0; for (i = 1; i <= n; i++) { split(f[i], r, " "); if (q >= r[1] && q < r[2]) c++ } }
		END { print c + 0 }' /tmp/held_before -)
}

# --- taken: a sort takes a block of the third DIMM block and pauses 2 s
# before it checks the block's pageblock; memory offline isolates it
# meanwhile, so the block goes straight back. A block that is no longer
# free by the end of the sort is not taken: another one is tried.
phase_taken() {
	step release_taken 30 sh -c "echo 1 > $Q/release"
	_t=0
	while [ $_t -lt 3 ]; do
		Y=$(free_blocks 2 4 $DM2 $DM2 1)
		n0=$(fired)
		echo "taken@$Y:pause:2000" > $P/test_at
		echo "$Y" > $P/test_take
		bg taken_sort 120 zstest write $Z/nodeid 0
		SORTER=$BG
		wait_fired $((n0 + 1)) 60 && break
		wait $SORTER
		_t=$((_t + 1))
	done
	M taken_pfn=${Y:-none} taken_tries=$((_t + 1)) taken_fired=$([ $_t -lt 3 ] && echo yes || echo no)
	offline_bg taken_off $(blk $Y)
	OFFLINER=$BG
	wait $SORTER
	BG=$OFFLINER
	offline_done taken_off $(blk $Y) online_movable
	echo none > $P/test_at
	M taken_sort=$(out taken_sort) taken_blocks_file=$(cat $Z/node0/quarantine_held_blocks) \
		taken_blocks_listed=$(held | wc -l) taken_pages_file=$(cat $Z/node0/quarantine_held_pages)
	step release_taken2 30 sh -c "echo 1 > $Q/release"
	M taken_blocks_after=$(cat $Z/node0/quarantine_held_blocks) taken_pages_after=$(cat $Z/node0/quarantine_held_pages)
}

# --- drain: sorts, every alloc_contig_range() start recorded (the
# sort's per-CPU list drains); then each memory block a drain isolated a
# pageblock in is taken offline: an offline that succeeds there is one a
# drain running at that moment would have failed (a pageblock isolated
# already makes offlining give up).
phase_drain() {
	echo > $T/trace
	# Memory taken past ZONE_MOVABLE into the boot memory and freed
	# again before each few sorts: the free lists the drains choose from
	# start with those pages, all over the boot memory.
	for _i in 1 2 3 4; do
		step drain_burst 120 zstest burst $((${ZS_DRAIN_BURST_MIB:-700} * 1048576))
		step drain_sorts 300 zstest writes $Z/nodeid 0 3
	done
	contig_starts > $OUT/drain_starts
	_blocks=$(while read -r _p; do blk $_p; done < $OUT/drain_starts | sort -un)
	_offlinable=
	for _b in $_blocks; do
		if timeout 20 sh -c "echo offline > $MEM/memory$_b/state" 2> /dev/null; then
			_offlinable="$_offlinable,$_b"
			step drain_back_$_b 60 sh -c "echo online > $MEM/memory$_b/state"
		fi
	done
	M drain_contig_calls=$(wc -l < $OUT/drain_starts) drain_blocks=$(echo $_blocks | tr ' ' ,) \
		drain_offlinable=${_offlinable#,}
}

# --- late: pages a migration isolated and puts back after their block
# was given back. The lowest free block of 64 to 512 pages of
# ZONE_MOVABLE is held: compaction begins there; a sort pulls it for its
# pick and pauses 6 s;
# compaction isolates its first pages (at most 32) and pauses 10 s in the
# first migration callback; memory offline of its memory block claims
# the block through its other pages meanwhile, then gives up after 3 s
# (a signal), the pages compaction holds being busy; the sort settles
# the block; compaction then finds the pageblock no longer isolated and
# puts its pages back. rmmod must not wait for them for ever.
phase_late() {
	step release_late 30 sh -c "echo 1 > $Q/release"
	set -- $(stage_held late_stage 6 9 $DM0 1)
	B=${1:-0}
	M late_held=$# late_pfn=$B late_order=$(held_order $B) late_others=$(held | grep -vc " pfn=$(printf '%#x' $B)\$")
	[ $# -ge 1 ] || return 0
	n0=$(fired)
	echo "picking@$B:pause:6000" > $P/test_at
	bg late_sort 120 zstest write $Z/nodeid 0
	SORTER=$BG
	M late_picking=$(wait_fired $((n0 + 1)) 60 && echo yes || echo no)
	echo "callback:pause:10000" > $P/test_at
	bg late_compact 120 sh -c 'echo 1 > /proc/sys/vm/compact_memory'
	COMPACTOR=$BG
	M late_callback=$(wait_fired $((n0 + 2)) 30 && echo yes || echo no) \
		late_callback_pfn=$(sed -n 's/.* pfn=\(0x[0-9a-f]*\).*/\1/p' $P/test_fired)
	dmesg_mark
	timeout 3 zstest write $MEM/memory$DM0/state offline > $OUT/late_off 2>&1
	M late_off=$(out late_off | tr ' ' _) late_state=$(cat $MEM/memory$DM0/state)
	wait $SORTER
	wait $COMPACTOR
	[ "$(cat $MEM/memory$DM0/state)" = online ] || step late_back 60 sh -c "echo online_movable > $MEM/memory$DM0/state"
	echo none > $P/test_at
	unload late_rmmod
	dmesg_since late_dmesg
	step late_insmod 30 insmod /zonesort.ko
}

# --- putback: compaction isolates the first pages (at most 32) of a held
# block of 64 to 1024 pages at the start of ZONE_MOVABLE and migrates
# them one by one. The first migration callback claims the block and
# gives back what is on its list; from that claim on, for 2 s, every
# migration callback fails as one without a target page does (test_at
# claimed:refuse), so compaction puts the other pages back on the list of
# a block already given back. Nobody asks for them again: the module
# must free them itself (Balloon back to its value before the module
# once everything is released) and rmmod must not wait for them. Only
# where blocks are held as balloon pages (7.x); on 6.x the claim frees
# the whole block at once, so no page can come back: putback_kind says
# which.
phase_putback() {
	step release_putback 30 sh -c "echo 1 > $Q/release"
	_b0=$(refreshed_mi Balloon)
	# After the late phase's offline or compaction the block can have
	# whole 4 MiB blocks only, which 7.x holds too, 6.x not: then the
	# rest of the DIMM.
	set -- $(stage_held putback_stage 6 9 $DM0 1)
	[ $# -ge 1 ] || set -- $(stage_held putback_stage 6 10 $DM0 1)
	[ $# -ge 1 ] || set -- $(stage_held putback_stage 6 9 $DM0 1 $(tail -1 /tmp/movable_blocks))
	B=${1:-0}
	_b1=$(refreshed_mi Balloon)
	M putback_held=$# putback_pfn=$B putback_order=$(held_order $B) \
		putback_kind=$([ "${_b1:-0}" -gt "${_b0:-0}" ] && echo balloon || echo movable)
	[ $# -ge 1 ] || return 0
	n0=$(fired)
	r0=$(cat $P/test_refused)
	echo "claimed@$B:refuse:2000" > $P/test_at
	step putback_compact 90 sh -c 'echo 1 > /proc/sys/vm/compact_memory'
	M putback_fired=$(wait_fired $((n0 + 1)) 5 && echo yes || echo no)
	sleep 3
	echo none > $P/test_at
	M putback_refused=$(($(cat $P/test_refused) - r0)) putback_claimed=$(is_held $B && echo no || echo yes)
	step putback_release 30 sh -c "echo 1 > $Q/release"
	sleep 1
	M putback_balloon_kb=$(refreshed_mi Balloon) putback_held_pages=$(cat $Z/node0/quarantine_held_pages)
	unload putback_rmmod
	M putback_balloon_unloaded_kb=$(refreshed_mi Balloon)
	step putback_insmod 30 insmod /zonesort.ko
}

# --- stop: rmmod while a sort walks a free list. With test_batch=1 the
# walk drops zone->lock after every entry; eight arms pause it 1.5 s at
# each of its next eight resumptions. Unloading must stop the sort at the
# next resumption, not at the end of the list: rmmod returns within about
# one pause, where finishing the list would take the other seven.
phase_stop() {
	step stop_batch 10 sh -c "echo 1 > $P/test_batch"
	n0=$(fired)
	echo "$(for _i in 1 2 3 4 5 6 7 8; do printf 'resumed:pause:1500,'; done | sed 's/,$//')" > $P/test_at
	bg stop_sort 120 zstest write $Z/nodeid 0
	SORTER=$BG
	M stop_paused=$(wait_fired $((n0 + 1)) 60 && echo yes || echo no)
	unload stop_rmmod
	wait $SORTER
	M stop_sort_rc=$? stop_sort=$(out stop_sort | tr ' ' _)
	step stop_insmod 30 insmod /zonesort.ko
}

# --- shrink: held blocks at the start of ZONE_MOVABLE, where compaction
# begins; the first isolation or migration callback runs the shrinker
# over everything held, as reclaim entered from that thread would.
phase_shrink() {
	step release_shrink 30 sh -c "echo 1 > $Q/release"
	# Pageblocks and smaller first (on 6.x nothing larger is held); an
	# offline the late phase gave up on leaves the first block mostly in
	# 4 MiB blocks, so the second counts too, then 4 MiB blocks (7.x);
	# on 6.x, where those are not held, the rest of the DIMM.
	set -- $(stage_held shrink_stage 2 9 $DM0 8 $DM1)
	[ $# -ge 1 ] || set -- $(stage_held shrink_stage 2 10 $DM0 8)
	[ $# -ge 1 ] || set -- $(stage_held shrink_stage 2 9 $DM0 8 $(tail -1 /tmp/movable_blocks))
	M shrink_held=$#
	n0=$(fired)
	echo "callback:shrink" > $P/test_at
	dmesg_mark
	t0=$(now_cs)
	step shrink_compact 90 sh -c 'echo 1 > /proc/sys/vm/compact_memory'
	M shrink_compact_cs=$(($(now_cs) - t0)) shrink_fired=$(($(fired) - n0))
	dmesg_since shrink_dmesg
	echo none > $P/test_at
}

phase_other
step insmod 30 insmod /zonesort.ko
M contig_fn=$(contig_on)
for phase in $(echo ${ZS_RACES_PHASES:-unload,partial,picking,taken,drain,late,putback,stop,shrink} | tr , " "); do
	phase_$phase
done

# --- the end: everything back.
stop $AGER
step release_end 30 sh -c "echo 1 > $Q/release"
M end_held_pages=$(cat $Z/node0/quarantine_held_pages) end_held_blocks=$(cat $Z/node0/quarantine_held_blocks)
unload rmmod_end
M balloon_end_kb=$(refreshed_mi Balloon) kreclaimable_end_kb=$(mi KReclaimable)
M tainted=$(cat /proc/sys/kernel/tainted)
echo "ZSTEST_BEGIN dmesg_all"
dmesg
echo "ZSTEST_DONE dmesg_all"
exit 0
