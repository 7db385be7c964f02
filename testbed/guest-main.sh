# Runs inside the QEMU guest (busybox sh) as /test.sh: the main kmod
# scenario, on a guest whose firmware (ACPI HMAT) describes a direct-mapped
# memory-side cache in front of node 0. Markers: see testbed/vm-guest-lib.sh.
# Knobs (kernel command line, reach /init's environment):
#   ZS_STRESS_S   seconds of stress (sorts, reads, hogs, hotplug,
#                 compaction); 0 (the tests' default) leaves it out
#   ZS_ROUNDS     aging rounds to run: a list of churn, frag, holes
. /guest-lib.sh

STRESS_S=${ZS_STRESS_S:-0}
ROUNDS=${ZS_ROUNDS:-churn frag holes}
C=/sys/devices/system/node/node0/memory_side_cache/index1

if [ ! -r $C/size ]; then
	M hmat_size=none
	exit 1
fi
SIZE=$(cat $C/size)
SLOTS=$((SIZE / 4096))
HALF=$((SIZE / 2))
M hmat_size=$SIZE hmat_indexing=$(cat $C/indexing) hmat_line=$(cat $C/line_size) \
	shuffle=$(cat /sys/module/page_alloc/parameters/shuffle 2> /dev/null || echo unknown)
M mem_free_kb=$(awk '/^MemFree/ { print $2 }' /proc/meminfo)
mount -t debugfs debugfs /sys/kernel/debug
# Huge pages only where asked for, and only from free blocks: a huge-page
# fault must not compact memory while an allocation is being measured.
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled
echo never > /sys/kernel/mm/transparent_hugepage/defrag

step fresh 120 zstest measure $HALF $SLOTS 1 --cpu 0
M fresh_half=$(kv fresh conflict)

# The project's command: hwloc must see the HMAT cache; loading the module
# through modprobe must pass it the cache geometry.
step status 60 zonesort status
cap status status
step sort_load 60 zonesort sort modprobe=zonesort
cap sort_load sort_load
M param_cache_size=$(cat $P/cache_size) param_ways=$(cat $P/ways)
step stats0 10 cat $Z/stats
cap stats0 stats0

# For the measurements, small per-CPU lists, as a site with a small
# memory-side cache would set them (see bench/REPORT-kmod-collisions.md).
echo 1000000 > /proc/sys/vm/percpu_pagelist_high_fraction
M pcp_high=$(awk '/^ *high:/ { print $2; exit }' /proc/zoneinfo)
M time_ns=$(stat sort_ns_last) free_pages=$(stat last_free_pages) hold_ns=$(stat lock_hold_ns_last)

# The rounds measure the sort against a bound computed from the free
# lists it left; the quarantine (on by default where the kernel has it)
# takes blocks out of those lists and is measured by guest-remedy.sh.
# Off for the rounds, on again for the stress and the rest.
[ ! -e $P/quarantine ] || step quarantine_off 10 sh -c "echo N > $P/quarantine"
movers off

# pcp_agree SORTED DUMPED: the sort's count of per-CPU pages and the
# dump's are 16 pages or a fifth of the dump's count apart at most (7.2's
# per-CPU batches are larger).
pcp_agree() {
	[ -n "$1" ] && [ -n "$2" ] || return 1
	_d=$(($1 - $2))
	[ $((_d * _d)) -le 256 ] || [ $((25 * _d * _d)) -le $(($2 * $2)) ]
}

# dumped_pcp NAME: the movable per-CPU pages in the free-list dump of
# measurement NAME (zsbound's pcp_movable).
dumped_pcp() { sed -n 's/.* pcp_movable=\([0-9]*\).*/\1/p' $OUT/${1}_bound; }

# round NAME MIB ROUNDS KEEP_PERMILLE: ages the lists (zstest age keeps
# the kept pages while the round runs), then measures fresh allocations
# of half and all of the cache, base pages and huge pages, unsorted and
# sorted (each sorted one sorts in its own process right before).
round() {
	name=$1
	bg age_$name 900 zstest age "$2" "$3" "$4" /tmp/aged_$name
	holder=$BG
	ready age_$name /tmp/aged_$name $holder 400 || { stop $holder; return; }
	M ${name}_kept_pages=$(tr ' ' '\n' < /tmp/aged_$name | sed -n 's/^kept_pages=//p')
	measure ${name}_u4k $HALF $SLOTS 1 --conflicts $Z/node0/conflicts_half_ppm
	measure ${name}_ufull $SIZE $SLOTS 1
	measure ${name}_uthp $HALF $SLOTS 1 --thp
	measure ${name}_s4k $HALF $SLOTS 1 --sort $Z/nodeid
	M ${name}_est_after_half_ppm=$(stat last_conflict_ppm_after) ${name}_time_ns=$(stat sort_ns_last) \
		${name}_free_pages=$(stat last_free_pages) ${name}_hold_ns=$(stat lock_hold_ns_last) \
		${name}_pcp_pages=$(stat last_pcp_pages) ${name}_walks_cut=$(stat walks_cut)
	# The sort's count of movable per-CPU pages against the dump right
	# after it. A free on a CPU whose per-CPU list is past its high mark
	# moves a batch of pages of any type out of it, so the two can part
	# (134 counted, 5 in the dump, once in some hundred rounds): then a
	# sort and a dump are taken again (one page allocated), at most three
	# times; the host checks that one pair agrees.
	_sorted=$(stat last_pcp_pages) _dumped=$(dumped_pcp ${name}_s4k)
	_t=0
	while [ $_t -lt 3 ] && ! pcp_agree "$_sorted" "$_dumped"; do
		measure ${name}_pcpretry$_t 4096 $SLOTS 1 --sort $Z/nodeid
		_sorted=$(stat last_pcp_pages) _dumped=$(dumped_pcp ${name}_pcpretry$_t)
		M ${name}_pcpretry${_t}_sorted=$_sorted
		_t=$((_t + 1))
	done
	M ${name}_pcp_retries=$_t
	measure ${name}_sfull $SIZE $SLOTS 1 --sort $Z/nodeid
	measure ${name}_sthp $HALF $SLOTS 1 --thp --sort $Z/nodeid
	stop $holder
	sleep 1
}
for r in $ROUNDS; do
	case $r in
	# Jobs that come and go: memory freed in random order, nothing kept.
	churn) round churn 600 2 0 ;;
	# A few long-lived pages (2 per mille of those touched) scattered.
	frag) round frag 400 2 2 ;;
	# Many (1 per cent): free memory is no longer mostly 4 MiB blocks.
	holes) round holes 600 2 10 ;;
	esac
done

# The slots a running job occupies (node0/occupied): the sort that takes
# them puts blocks on other slots first, and its quarantine takes those
# that would land there. The first half of the slots marked, then half
# the cache allocated right after the sort, in one process: without the
# quarantine (still off here) the order alone, with it (as sites run) the
# allocation keeps out of the marked quarter; the controls without the
# bitmap cover all of it alike. Then what is refused or not taken: one byte
# too many, a write that does not go on where none began, a bitmap left
# unfinished, one older than 10 s (ZS_OCCUPIED_TTL_S), and the one taken,
# at the sort after.
OCC=$Z/node0/occupied
measure occ_control $HALF $SLOTS 1 --sort $Z/nodeid --range 0 $((SLOTS / 4))
measure occ_order $HALF $SLOTS 1 --occupied $OCC 0 $((SLOTS / 4)) --sort $Z/nodeid --range 0 $((SLOTS / 4))
if [ -e $P/quarantine ]; then
	step occ_quarantine_on 10 sh -c "echo Y > $P/quarantine"
	measure occ_qcontrol $HALF $SLOTS 1 --sort $Z/nodeid --range 0 $((SLOTS / 4))
	measure occ_marked $HALF $SLOTS 1 --occupied $OCC 0 $((SLOTS / 4)) --sort $Z/nodeid --range 0 $((SLOTS / 4))
	M occ_taken=$(stat last_occupied_slots) occ_held=$(cat $Z/node0/quarantine_held_pages)
	step occ_release 60 sh -c "echo 1 > $Z/quarantine/release && echo N > $P/quarantine"
fi
step occ_next 60 zstest write $Z/nodeid 0
M occ_next_taken=$(stat last_occupied_slots)
step occ_long 10 zstest occupied $OCC $SLOTS 0 1 $((SLOTS / 8 + 1))
step occ_long_sort 60 zstest write $Z/nodeid 0
M occ_long="$(out occ_long | tr ' ' '_')" occ_long_taken=$(stat last_occupied_slots)
step occ_gap 10 zstest pwrite $OCC 8 8
step occ_part 10 zstest occupied $OCC $SLOTS 0 1 $((SLOTS / 16))
step occ_part_sort 60 zstest write $Z/nodeid 0
M occ_gap=$(out occ_gap) occ_part="$(out occ_part | tr ' ' '_')" occ_part_taken=$(stat last_occupied_slots)
step occ_stale 10 zstest occupied $OCC $SLOTS 0 1
sleep 11
step occ_stale_sort 60 zstest write $Z/nodeid 0
M occ_stale="$(out occ_stale | tr ' ' '_')" occ_stale_taken=$(stat last_occupied_slots)

movers on
[ ! -e $P/quarantine ] || step quarantine_on 10 sh -c "echo Y > $P/quarantine"

# Per-CPU lists can hold thousands of pages (here with the largest size
# the kernel allows): free 128 MiB so that a list is long, then sort. Each
# lock hold covers at most lock_batch entries.
echo 8 > /proc/sys/vm/percpu_pagelist_high_fraction
step pcp_fill 120 taskset 1 zstest burst 16777216
M pcp_count_max=$(awk '/^Node 0, zone/ { z = $4 } z == "DMA32" && /count:/ && $2 > m { m = $2 }
	END { print m + 0 }' /proc/zoneinfo)
step pcp_sort 60 zstest write $Z/nodeid 0
M pcp_sort=$(out pcp_sort) pcp_hold_entries_max=$(stat pcp_hold_entries_max) \
	lock_batch=$(stat lock_batch) last_pcp_pages=$(stat last_pcp_pages)

# A conflicts read only delays a sort, never fails it.
bg reads 60 zstest readloop $Z/node0/conflicts_half_ppm 10
rpid=$BG
sleep 1
step sorts_during_reads 60 zstest writes $Z/nodeid 0 40
wait $rpid
echo "ZSTEST_STEP reads rc=$?"
M sorts_during_reads="$(out sorts_during_reads | tr ' ' ',')" reads="$(out reads | tr ' ' ',')"

# Errors: a node that does not exist, through the file and the command.
step nodeid_5 10 zstest write $Z/nodeid 5
M nodeid_5=$(out nodeid_5)
refuse sort_node5 30 zonesort sort --nodes 5
cap sort_node5 sort_node5

# Input validation of the module's files and parameters.
# val FILE VALUE [LABEL]: one write; "ZSTEST_VAL file 'LABEL' result".
val() {
	step val 10 zstest write "$1" "$2"
	echo "ZSTEST_VAL $(basename "$1") '${3-$2}' $(out val)"
}
for v in abc -1 99999999999999999999 "" "0x0" "1.5" "0 0" "+" 4294967296; do
	val $Z/nodeid "$v"
done
val $Z/nodeid "0
" '0\n'
val $Z/sort_interval "7 sec
" '7 sec\n'
val $Z/sort_interval 0
for v in abc -5 86401 4294967296 99999999999999999999 "1 2" "" "5 secs" "5sec" " 5"; do
	val $Z/sort_interval "$v"
done
for v in 12345 1000 abc -4096 "" 18446744073709551616 70368744177665 140737488355328; do
	val $P/cache_size "$v"
done
for v in abc -1 65 3x; do
	val $P/ways "$v"
done
M cache_size_after_bad=$(cat $P/cache_size) ways_after_bad=$(cat $P/ways)
# overflow: pile (the default) or spread, one name and at most a newline.
M overflow_default=$(cat $P/overflow)
dmesg_mark
for v in abc Pile spreads "pile spread" 1; do
	val $P/overflow "$v"
done
val $P/overflow "pile

" 'pile\n\n'
M overflow_after_bad=$(cat $P/overflow) \
	overflow_named=$(dmesg | tail -n +$(($(cat /tmp/dmesg.mark) + 1)) | grep -c "overflow: 'spreads' is not pile or spread")
val $P/overflow "spread
" 'spread\n'
M overflow_set=$(cat $P/overflow)
step nodeid_spread 60 zstest write $Z/nodeid 0
M nodeid_spread=$(out nodeid_spread)
val $P/overflow pile
# ways=3: 256 MiB is no whole number of 3-way page-sized slots.
step ways3 10 zstest write $P/ways 3
step nodeid_ways3 60 zstest write $Z/nodeid 0
M ways3=$(out ways3) nodeid_ways3=$(out nodeid_ways3)
step ways1 10 zstest write $P/ways 1
step cache_size_set 10 zstest write $P/cache_size $SIZE
step nodeid_after_set 60 zstest write $Z/nodeid 0
M nodeid_after_set=$(out nodeid_after_set)

# The interval timer, with Intel's "N sec" format: writes get EBUSY, the
# command reports busy, the timer sorts on its own, on an unbound worker.
before=$(stat sorts)
step interval_set 10 zstest write $Z/sort_interval "1 sec"
M interval_set=$(out interval_set) interval_read="$(cat $Z/sort_interval | tr ' ' '_')"
step nodeid_timer 10 zstest write $Z/nodeid 0
M nodeid_timer=$(out nodeid_timer)
step sort_timer 30 zonesort sort
cap sort_timer sort_timer
sleep 4
M timer_sorts=$(($(stat sorts) - before)) timer_sorter=$(stat last_sorter)
step interval_off 10 zstest write $Z/sort_interval 0
step nodeid_after_timer 60 zstest write $Z/nodeid 0
M interval_off=$(out interval_off) nodeid_after_timer=$(out nodeid_after_timer) \
	interval_read_off="$(cat $Z/sort_interval | tr ' ' '_')"

# Stress: sorts in a loop while two processes allocate and free, conflicts
# is read, memory blocks go offline and online and memory is compacted;
# the timer on for a stretch as well. ZS_STRESS_S=0 leaves it out: the
# torture test (54-torture.t) does all of it, and more, at once.
if [ "$STRESS_S" -gt 0 ]; then
	bg hog1 $((STRESS_S + 60)) zstest hog $STRESS_S 150 1
	h1=$BG
	bg hog2 $((STRESS_S + 60)) zstest hog $STRESS_S 150 2
	h2=$BG
	bg stress_reads $((STRESS_S + 60)) zstest readloop $Z/node0/conflicts_half_ppm $STRESS_S
	h3=$BG
	bg hotplug $((STRESS_S + 90)) sh /guest-lib.sh hotplug $STRESS_S
	h4=$BG
	start=$(date +%s)
	ok=0
	busy=0
	other=0
	timer=0
	while [ "$(date +%s)" -lt $((start + STRESS_S)) ]; do
		step stress_sorts 60 zstest writes $Z/nodeid 0 5 || break
		ok=$((ok + $(kv stress_sorts ok)))
		busy=$((busy + $(kv stress_sorts EBUSY)))
		other=$((other + $(kv stress_sorts other)))
		now=$(date +%s)
		if [ $timer -eq 0 ] && [ $((now - start)) -ge $((STRESS_S / 2)) ]; then
			echo 1 > $Z/sort_interval
			timer=1
		elif [ $timer -eq 1 ] && [ $((now - start)) -ge $((STRESS_S * 3 / 4)) ]; then
			echo 0 > $Z/sort_interval
			timer=2
		fi
	done
	echo 0 > $Z/sort_interval
	for p in $h1 $h2 $h3 $h4; do
		wait $p
		echo "ZSTEST_STEP stress_helper rc=$?"
	done
	offline_now=$(grep -l offline /sys/devices/system/memory/memory*/state | wc -l)
	M stress_ok=$ok stress_busy=$busy stress_other=$other stress_hogs="$(cat $OUT/hog1 $OUT/hog2 | tr ' \n' '_,')"
	M stress_reads="$(out stress_reads | tr ' ' ',')" stress_$(out hotplug | sed 's/ / stress_/g') \
		blocks_offline_after=$offline_now
fi
step stats_end 10 cat $Z/stats
cap stats_end stats_end
M hold_max_ns=$(stat lock_hold_ns_max) vanished=$(stat blocks_vanished) walks_cut=$(stat walks_cut)
# Unloading waits for the kernel to finish with the quarantine's pages.
# Should it never end, the kernel's warnings and the blocked tasks'
# stacks reach the console before the host gives up on the guest.
bg unload_watch 300 sh -c 'sleep 60; echo 7 > /proc/sys/kernel/printk; echo 1 > /proc/sys/kernel/sysrq;
	echo w > /proc/sysrq-trigger; echo l > /proc/sysrq-trigger; dmesg | tail -40 > /dev/console'
watch=$BG
step rmmod 30 rmmod zonesort
step reload 30 insmod /zonesort.ko
step reload_sort 60 zstest write $Z/nodeid 0
M reload_sort=$(out reload_sort)
step rmmod2 30 rmmod zonesort
stop $watch

M tainted=$(cat /proc/sys/kernel/tainted)
# The whole kernel log; the host test looks for warnings in it.
echo ZSTEST_BEGIN dmesg_all
dmesg
echo ZSTEST_DONE dmesg_all
exit 0
