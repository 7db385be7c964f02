# Runs inside the QEMU guest (busybox sh) as /test.sh: the main kmod
# scenario. Everything it finds is printed as serial-console markers:
#   ZSTEST key=value ...           values the host test asserts on
#   ZSTEST_BEGIN tag / ZSTEST_DONE tag   output of a command, then "rc=N"
# Knobs (environment of /init, defaults below): ZS_STRESS_S stress seconds.

STRESS_S=${ZS_STRESS_S:-60}
C=/sys/devices/system/node/node0/memory_side_cache/index1
Z=/sys/kernel/zone_sort_free_pages

M() { echo "ZSTEST $*"; }
cap() {
	tag=$1
	shift
	echo "ZSTEST_BEGIN $tag"
	"$@" 2>&1
	echo "rc=$?"
	echo "ZSTEST_DONE $tag"
}
stat() { grep "^$1=" $Z/stats | cut -d= -f2; }
# est FIELD: a field of the module's conflicts line for node 0.
est() { tr ' ' '\n' < $Z/conflicts | grep "^$1=" | cut -d= -f2; }
measure() { zstest measure "$1" "$SLOTS" | cut -d' ' -f1; }
# sorted_measure BYTES: sorts node 0 and allocates in the same process, so
# that no page freed by another process lands in front of the sorted lists.
sorted_measure() { zstest measure "$1" "$SLOTS" 1 $Z/nodeid | cut -d' ' -f1; }
sort0() {
	r=$(zstest write $Z/nodeid 0)
	[ "$r" = ok ] || M "sort_error=$r"
}

if [ ! -r $C/size ]; then
	M hmat_size=none
	exit 1
fi
SIZE=$(cat $C/size)
SLOTS=$((SIZE / 4096))
HALF=$((SIZE / 2))
M hmat_size=$SIZE hmat_indexing=$(cat $C/indexing) hmat_line=$(cat $C/line_size) \
	shuffle=$(cat /sys/module/page_alloc/parameters/shuffle 2>/dev/null || echo unknown)
M mem_free_kb=$(awk '/^MemFree/ { print $2 }' /proc/meminfo)

# Per-CPU page lists are handed out before any free list and cannot be
# sorted; by default they may hold tens of MiB here. Keep them small, as
# a site with a small memory-side cache would (see bench/REPORT-kmod.md).
echo 1000000 > /proc/sys/vm/percpu_pagelist_high_fraction
M pcp_high=$(awk '/^ *high:/ { print $2; exit }' /proc/zoneinfo)

M fresh_half=$(measure $HALF)

# The project's command: hwloc must see the HMAT cache; loading the module
# through modprobe must pass it the cache geometry.
cap status zonesort status
cap sort_load zonesort sort modprobe=zonesort
M param_cache_size=$(cat /sys/module/zonesort/parameters/cache_size) \
	param_ways=$(cat /sys/module/zonesort/parameters/ways)
cap stats0 cat $Z/stats
M time_ns=$(stat sort_ns_last) free_pages=$(stat last_free_pages) hold_ns=$(stat lock_hold_ns_last)

# round NAME MIB ROUNDS KEEP_PERMILLE: ages the lists, then measures fresh
# allocations of half and all of the cache before and after a sort.
round() {
	name=$1
	out=$(zstest age "$2" "$3" "$4")
	holder=$(echo "$out" | sed -n 's/.*holder=\([0-9]*\).*/\1/p')
	eb=$(est half_ppm)
	ebf=$(est full_ppm)
	bh=$(measure $HALF)
	bf=$(measure $SIZE)
	ah=$(sorted_measure $HALF)
	ea=$(stat last_conflict_ppm_after)
	fl=$(stat last_conflict_ppm_floor)
	pcp=$(stat last_pcp_pages)
	cap free_$name sed -n '/^Free pages count/,/^$/p' /proc/pagetypeinfo
	af=$(sorted_measure $SIZE)
	M ${name}_before_half=$bh ${name}_after_half=$ah ${name}_before_full=$bf \
		${name}_after_full=$af
	M ${name}_est_before_half_ppm=$eb ${name}_est_after_half_ppm=$ea \
		${name}_est_before_full_ppm=$ebf ${name}_floor_half_ppm=$fl
	M ${name}_time_ns=$(stat sort_ns_last) ${name}_free_pages=$(stat last_free_pages) \
		${name}_hold_ns=$(stat lock_hold_ns_last) ${name}_moved=$(stat blocks_moved) \
		${name}_pcp_pages=$pcp
	[ -n "$holder" ] && kill "$holder"
	sleep 1
}
# Jobs that come and go: memory freed in random order, no pages left behind.
round churn1 600 2 0
round churn2 600 2 0
# Long-lived pages scattered over memory (2 per mille of the pages touched).
round frag 600 2 2

# Errors: a node that does not exist, through the file and the command.
M nodeid_5=$(zstest write $Z/nodeid 5)
cap sort_node5 zonesort sort --nodes 5
cap sort_node5_policy zonesort sort nodes=5

# Input validation of the module's files and parameters.
for v in abc -1 99999999999999999999 "" "0x0" "1.5" "0 0" "+" 4294967296; do
	echo "ZSTEST_VAL nodeid '$v' $(zstest write $Z/nodeid "$v")"
done
echo "ZSTEST_VAL nodeid '0\\n' $(zstest write $Z/nodeid "0
")"
for v in abc -5 86401 4294967296 99999999999999999999 "1 2" ""; do
	echo "ZSTEST_VAL sort_interval '$v' $(zstest write $Z/sort_interval "$v")"
done
P=/sys/module/zonesort/parameters
for v in 12345 1000 0x3000 abc -4096 "" 18446744073709551616; do
	echo "ZSTEST_VAL cache_size '$v' $(zstest write $P/cache_size "$v")"
done
for v in abc -1 65 3x; do
	echo "ZSTEST_VAL ways '$v' $(zstest write $P/ways "$v")"
done
M cache_size_after_bad=$(cat $P/cache_size) ways_after_bad=$(cat $P/ways)
# ways=3 is a valid parameter but gives no power-of-two number of slots.
zstest write $P/ways 3 > /dev/null
M nodeid_ways3=$(zstest write $Z/nodeid 0)
zstest write $P/ways 1 > /dev/null
M cache_size_set=$(zstest write $P/cache_size $SIZE) nodeid_after_set=$(zstest write $Z/nodeid 0)

# The interval timer: writes get EBUSY, the command reports busy, the
# timer sorts on its own.
before=$(stat sorts)
M interval_set=$(zstest write $Z/sort_interval 1)
M nodeid_timer=$(zstest write $Z/nodeid 0)
cap sort_timer zonesort sort
sleep 4
M timer_sorts=$(($(stat sorts) - before))
M interval_off=$(zstest write $Z/sort_interval 0)
M nodeid_after_timer=$(zstest write $Z/nodeid 0)

# Stress: sorts in a loop while other processes allocate and free; a
# stretch with the timer on as well.
zstest hog "$STRESS_S" 150 1 > /tmp/hog1 &
h1=$!
zstest hog "$STRESS_S" 150 2 > /tmp/hog2 &
h2=$!
start=$(date +%s)
end=$((start + STRESS_S))
ok=0
busy=0
other=0
i=0
timer=0
while [ "$(date +%s)" -lt "$end" ]; do
	i=$((i + 1))
	r=$(zstest write $Z/nodeid 0)
	case $r in
	ok) ok=$((ok + 1)) ;;
	EBUSY) busy=$((busy + 1)) ;;
	*) other=$((other + 1)); M stress_unexpected=$r ;;
	esac
	[ $((i % 4)) -eq 0 ] && cat $Z/conflicts > /dev/null 2>&1
	now=$(date +%s)
	if [ $timer -eq 0 ] && [ $((now - start)) -ge $((STRESS_S / 2)) ]; then
		echo 1 > $Z/sort_interval
		timer=1
	elif [ $timer -eq 1 ] && [ $((now - start)) -ge $((STRESS_S * 3 / 4)) ]; then
		echo 0 > $Z/sort_interval
		timer=2
	fi
done
wait $h1 $h2
echo 0 > $Z/sort_interval
M stress_ok=$ok stress_busy=$busy stress_other=$other stress_hogs="$(cat /tmp/hog1 /tmp/hog2 | tr ' \n' '_,')"
cap stats_end cat $Z/stats
M hold_max_ns=$(stat lock_hold_ns_max)
M rmmod=$(rmmod zonesort 2>&1 && echo ok)
M reload=$(insmod /zonesort.ko 2>&1 && echo ok) reload_sort=$(zstest write $Z/nodeid 0)
M rmmod2=$(rmmod zonesort 2>&1 && echo ok)

M tainted=$(cat /proc/sys/kernel/tainted)
# The whole kernel log; the host test looks for warnings in it.
cap dmesg_all dmesg
exit 0
