# Runs inside a QEMU guest (busybox sh) as /test.sh: everything that can
# happen to the quarantine at once, for ZS_TORTURE_S seconds, then checks
# that all of it went back. Shared by tests/kmod/54-torture.t (a short
# run on the stock kernels) and bench/kmod-torture (long runs on debug
# kernels). The guest (testbed/vm.sh km_torture_boot): node 0 with a
# 256 MiB direct-mapped memory-side cache (HMAT), 1 GiB of boot memory, a
# DIMM for ZONE_MOVABLE, a 1 GiB DIMM for the kernel zone (1 GiB huge
# pages come from there) and a virtio-mem device in ZONE_MOVABLE the
# host resizes when asked ("ZSTEST_HOST resize").
#
# Workers, each a loop with its own pseudo-random schedule drawn from
# the run's seed (ZS_SEED, recorded; the same seed gives the same
# schedules, though not the same interleaving):
#   sorter      sorts node 0, pausing 0-300 ms between sorts
#   timer       sort_interval on (1-3 s) and off
#   compactor   writes vm/compact_memory
#   hotplug     takes a memory block of the movable DIMM or the upper
#               boot memory offline and back online
#   vmem        asks the host for another virtio-mem size (2 MiB steps)
#   huge        2 MiB hugetlb pages (0-64), and a 1 GiB page now and then
#   pressure    takes most of the available memory for a moment
#               (reclaim, the quarantine's shrinker)
#   ager        faults in 64-192 MiB, frees it in random order but for
#               5%, keeps those 1-5 s: fresh colliding free blocks for
#               the sorts to hold (compaction and the pressure worker
#               leave mostly large blocks, which no sort needs to hold)
#   toggles     quarantine on/off, quarantine_max_permille, release
#               (every node's or node 0's), the overflow order (pile or
#               spread) between sorts
#   occupier    writes node 0's occupied bitmap (a random run of slots,
#               now and then one a byte too long, or a write where none
#               began) for the sorts to take
#   readers     reads every file of the module's sysfs and debugfs
# (ZS_TORTURE_WORKERS, comma-separated, runs some of them only), and in
# the foreground rmmod and insmod again every ZS_CYCLE_S seconds
# (each rmmod timed, with the pages it had to give back; an unload
# watcher dumps the blocked tasks' stacks should one take more than 60 s).
# ZS_TORTURE_MAX_PERMILLE (1-1000, unset by default) is a ceiling on
# quarantine_max_permille for the whole run: every load and every toggle
# stays at or below it, which bounds what an rmmod gives back.
# At the end: workers stopped, virtio-mem and huge pages back as they
# were, a final load, sorts, release, rmmod; MemFree, Balloon, offline
# pages (kpageflags) and KReclaimable against their values before that
# load; on debug kernels page_owner (pages the module still owns) and
# kmemleak. Markers: see testbed/vm-guest-lib.sh; the host checks.
. /guest-lib.sh

DUR=${ZS_TORTURE_S:-60}
CYCLE=${ZS_CYCLE_S:-20}
SEED=${ZS_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
KO=/zonesort.ko
D=/sys/kernel/debug/zonesort
Q=$Z/quarantine
CAP=${ZS_TORTURE_MAX_PERMILLE:-}
M seed=$SEED torture_s=$DUR cycle_s=$CYCLE kernel=$(uname -r) max_permille_cap=$CAP
mount -t debugfs debugfs /sys/kernel/debug
echo 1 > /proc/sys/kernel/sysrq
# A task blocked for 30 s is reported (the detector's default is 120 s).
echo 30 > /proc/sys/kernel/hung_task_timeout_secs 2> /dev/null

# rnd N: the next number in [0, N) of this shell's schedule (a linear
# congruential generator on S, seeded per worker).
rnd() {
	S=$(((S * 1103515245 + 12345) % 2147483648))
	R=$(((S / 65536) % $1))
}
# pm PERMILLE: PERMILLE, or the run's ceiling when that is lower.
pm() {
	if [ -n "$CAP" ] && [ "$1" -gt "$CAP" ]; then echo $CAP; else echo $1; fi
}
# What every load passes: the module's default (500), or the ceiling.
KOCAP=
[ -z "$CAP" ] || KOCAP=quarantine_max_permille=$(pm 500)
# nap MS_MIN MS_MAX: sleeps a random time in [MIN, MAX] milliseconds.
nap() {
	rnd $(($2 - $1 + 1))
	sleep $(((R + $1) / 1000)).$(printf '%03d' $(((R + $1) % 1000)))
}
# act NAME TEXT: logs a worker's action (replayable schedules).
act() { echo "$(cut -d' ' -f1 /proc/uptime) $*" >> /tmp/tlog/$W.log; }
mkdir -p /tmp/tlog
running() { [ ! -e /tmp/torture.stop ]; }
# worker NAME N: runs worker_NAME in the background, seeded with the
# run's seed and its number N.
worker() {
	(
		W=$1
		S=$(((SEED + $2 * 7919) % 2147483648))
		worker_$1
	) > /tmp/tlog/$1.err 2>&1 &
	echo $! >> /tmp/workers
}

# --- Memory: DIMMs offline from boot (memhp_default_state=offline), in
# address order: movable (ZS_DIMM_MOVABLE_MIB), then the 1 GiB kernel one.
ls -d $MEM/memory* | sed 's/.*memory//' | sort -n > /tmp/blocks.boot
for b in $(cat /tmp/blocks.boot); do
	[ "$(cat $MEM/memory$b/state)" = offline ] && echo $b
done > /tmp/dimm
BLOCK=$(printf '%d' 0x$(cat $MEM/block_size_bytes))
nm=$((${ZS_DIMM_MOVABLE_MIB:-512} * 1048576 / BLOCK))
head -n $nm /tmp/dimm > /tmp/movable_blocks
tail -n +$((nm + 1)) /tmp/dimm > /tmp/giant_blocks
online_blocks online_movable_dimm online_movable /tmp/movable_blocks
online_blocks online_giant_dimm online_kernel /tmp/giant_blocks
if [ -s /modules/order ]; then
	step kernel_mods 60 sh -c 'while read -r m; do insmod /modules/$m || exit 1; done < /modules/order'
fi
vmem_online online_vmem ${ZS_VMEM_MIB:-512}
# Blocks the hotplug worker cycles: the movable DIMM's, and the upper
# half of the boot memory (the lower half holds the kernel).
nboot=$(grep -cvxF -f /tmp/dimm /tmp/blocks.boot)
{ cat /tmp/movable_blocks; grep -vxF -f /tmp/dimm /tmp/blocks.boot | tail -n $((nboot / 2)); } > /tmp/hotplug_blocks
H1=/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages
H2=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
VMEM=$((${ZS_VMEM_MIB:-512}))
M memtotal_kb=$(mi MemTotal) hotplug_blocks=$(wc -l < /tmp/hotplug_blocks) vmem_blocks=$(wc -l < /tmp/vmem_blocks) \
	huge1g=$([ -e $H1 ] && echo 1 || echo 0) page_owner=$([ -r /sys/kernel/debug/page_owner ] && echo 1 || echo 0) \
	kmemleak=$([ -e /sys/kernel/debug/kmemleak ] && echo 1 || echo 0)

worker_sorter() {
	while running; do
		[ -e $Z/nodeid ] && act sort "$(zstest write $Z/nodeid 0)" \
			held=$(cat $Z/node0/quarantine_held_pages 2> /dev/null)
		nap 0 300
	done
}
worker_timer() {
	while running; do
		rnd 4
		[ -e $Z/sort_interval ] && echo $R > $Z/sort_interval && act interval $R
		nap 2000 8000
	done
}
worker_compactor() {
	while running; do
		act compact
		echo 1 > /proc/sys/vm/compact_memory
		nap 1000 5000
	done
}
worker_hotplug() {
	n=$(wc -l < /tmp/hotplug_blocks)
	while running; do
		rnd $n
		b=$(sed -n "$((R + 1))p" /tmp/hotplug_blocks)
		if timeout 10 sh -c "echo offline > $MEM/memory$b/state" 2> /dev/null; then
			act offline $b ok
			zone=online
			grep -qx $b /tmp/movable_blocks && zone=online_movable
			echo $zone > $MEM/memory$b/state || act online $b failed
		else
			act offline $b refused
		fi
		nap 1000 4000
	done
}
worker_vmem() {
	while running; do
		rnd $((VMEM / 2 + 1))
		act resize $((R * 2))
		echo "ZSTEST_HOST resize vm0 $((R * 2 * 1048576))" > /dev/console
		nap 2000 6000
	done
}
worker_huge() {
	while running; do
		rnd 65
		act huge2m $R
		echo $R > $H2
		rnd 4
		if [ $R = 0 ] && [ -e $H1 ]; then
			act huge1g
			timeout 60 sh -c "echo 1 > $H1; sleep 1; echo 0 > $H1"
		fi
		nap 1000 4000
	done
}
# The pressure worker and the ager take memory in turn (mkdir is atomic):
# a burst sized by MemAvailable while the ager faults in more would end
# in the OOM killer. Each waits for its turn and naps after giving it up.
memturn() {
	while running; do
		mkdir /tmp/memturn 2> /dev/null && return 0
		sleep 0.2
	done
	return 1
}
worker_pressure() {
	while memturn; do
		avail=$(mi MemAvailable)
		act pressure $((avail / 1024 - 96))
		[ $((avail / 1024)) -gt 160 ] && timeout 30 zstest burst $(((avail / 1024 - 96) * 1048576)) > /dev/null
		rmdir /tmp/memturn
		nap 3000 8000
	done
}
worker_ager() {
	while memturn; do
		rnd 129
		act age $((R + 64))
		rm -f /tmp/ager.ready
		zstest age $((R + 64)) 1 50 /tmp/ager.ready > /dev/null &
		_p=$!
		_i=0
		while [ ! -e /tmp/ager.ready ] && [ $_i -lt 600 ] && kill -0 $_p 2> /dev/null; do
			sleep 0.1
			_i=$((_i + 1))
		done
		nap 1000 5000
		kill $_p 2> /dev/null
		wait $_p
		rmdir /tmp/memturn
		nap 2000 6000
	done
}
worker_toggles() {
	while running; do
		rnd 7
		case $R in
		0) [ -e $Q/enabled ] && echo N > $Q/enabled && act quarantine off ;;
		1 | 2) [ -e $Q/enabled ] && echo Y > $Q/enabled && act quarantine on ;;
		3) rnd 4
			set -- 10 100 500 1000
			shift $R
			[ -e $Q/max_permille ] && echo $(pm $1) > $Q/max_permille && act max_permille $(pm $1) ;;
		4) [ -e $Q/release ] && echo 1 > $Q/release && act release ;;
		5) [ -e $Z/node0/quarantine_release ] && echo 1 > $Z/node0/quarantine_release && act release0 ;;
		6) rnd 2
			set -- pile spread
			shift $R
			[ -e /sys/module/zonesort/parameters/overflow ] &&
				echo $1 > /sys/module/zonesort/parameters/overflow && act overflow $1 ;;
		esac
		nap 2000 6000
	done
}
OCC_SLOTS=$(($(cat /sys/devices/system/node/node0/memory_side_cache/index1/size) / 4096))
worker_occupier() {
	while running; do
		rnd 8
		case $R in
		0) act occupied_long "$(zstest occupied $Z/node0/occupied $OCC_SLOTS 0 1 $((OCC_SLOTS / 8 + 1)) 2>&1)" ;;
		1) act occupied_gap "$(zstest pwrite $Z/node0/occupied 8 8 2>&1)" ;;
		*) rnd $OCC_SLOTS
			first=$R
			rnd $((OCC_SLOTS / 2))
			[ -e $Z/node0/occupied ] &&
				act occupied "$first+$R" "$(zstest occupied $Z/node0/occupied $OCC_SLOTS $first $R 2>&1)" ;;
		esac
		nap 200 2000
	done
}
worker_readers() {
	while running; do
		for f in $(find $Z /sys/module/zonesort/parameters $D -type f 2> /dev/null); do
			case $f in */nodeid | */release | */quarantine_release) continue ;; esac
			cat $f > /dev/null 2>&1
		done
		nap 100 500
	done
}

# Long-lived pages scattered over memory for the whole run: colliding
# free blocks the sorts hold and everything else takes back (the pressure
# worker's bursts alone leave most memory in large blocks a sort never
# needs to hold).
bg torture_age 3000 zstest age ${ZS_TORTURE_AGE_MIB:-300} 1 20 /tmp/torture_age.ready
ready torture_age_ready /tmp/torture_age.ready $BG 300
step insmod0 30 insmod $KO $KOCAP
rm -rf /tmp/torture.stop /tmp/workers /tmp/memturn /tmp/rmmod_cs /tmp/rmmod_held_cs
n=0
for w in $(echo ${ZS_TORTURE_WORKERS:-sorter,timer,compactor,hotplug,vmem,huge,pressure,ager,toggles,occupier,readers} | tr , " "); do
	n=$((n + 1))
	worker $w $n
done
START=$(date +%s)
S=$SEED
cycles=0
# The pages the quarantine took, over the module's loads (its own count,
# which an unload resets: read before each): whether the torture held
# anything at all, which the sorter's samples can miss.
taken_pages() { sed -n 's/^taken_pages_total=//p' $Q/stats 2> /dev/null | grep . || echo 0; }
TAKEN=0
# At least two unloads under load, however slow the guest: the check
# wants rmmod to have met the load more than once.
under_way() { [ $cycles -lt 2 ] || [ $(($(date +%s) - START)) -lt $DUR ]; }
while under_way; do
	nap $((CYCLE * 500)) $((CYCLE * 1500))
	under_way || break
	# What the unload has to give back (0 with the quarantine off).
	held=$(cat $Z/node*/quarantine_held_pages 2> /dev/null | awk '{ n += $1 } END { print n + 0 }')
	M cycle_held_pages=$held
	TAKEN=$((TAKEN + $(taken_pages)))
	unload cycle_rmmod
	unloaded=$?
	echo "$held:$(tail -1 /tmp/rmmod_cs)" >> /tmp/rmmod_held_cs
	[ $unloaded = 0 ] || break
	rnd 3
	case $R in
	0) step cycle_insmod 30 insmod $KO $KOCAP ;;
	1) step cycle_insmod 30 insmod $KO quarantine_max_permille=$(pm 100) ;;
	2) step cycle_insmod 30 insmod $KO quarantine=N $KOCAP ;;
	esac
	cycles=$((cycles + 1))
done
touch /tmp/torture.stop
for p in $(cat /tmp/workers); do
	wait $p
done
M torture_taken_pages=$((TAKEN + $(taken_pages)))
M sort_held_max=$(sed -n 's/.* held=\([0-9][0-9]*\).*/\1/p' /tmp/tlog/sorter.log | sort -n | tail -1)
# What each sort returned (ok, or the errno's name), counted, and how
# many left pages held: sort_results=ok:N,EBUSY:N,... sorts_holding=N.
M sort_results=$(awk '$2 == "sort" { n[$3 == "" || $3 ~ /=/ ? "none" : $3]++ }
	END { for (k in n) printf "%s%s:%d", c++ ? "," : "", k, n[k] }' /tmp/tlog/sorter.log) \
	sorts_holding=$(grep -c ' held=[1-9]' /tmp/tlog/sorter.log)
# Each cycle's rmmod as HELD_PAGES:CENTISECONDS, comma-separated.
M cycles=$cycles rmmod_cs_max=$(sort -n /tmp/rmmod_cs | tail -1) rmmods=$(wc -l < /tmp/rmmod_cs) \
	rmmod_held_cs=$(cat /tmp/rmmod_held_cs 2> /dev/null | tr '\n' , | sed 's/,$//') \
	actions=$(cat /tmp/tlog/*.log | wc -l)
for f in /tmp/tlog/*.log; do
	M actions_$(basename $f .log)=$(wc -l < $f)
done
# The switches, in order (uptime and action), for a run whose sorts held
# nothing.
cp /tmp/tlog/toggles.log $OUT/toggles 2> /dev/null || : > $OUT/toggles
cap toggles toggles
# What the workers printed (errors of the commands they ran).
cat /tmp/tlog/*.err > $OUT/worker_err
cap worker_err worker_err

# --- Back as it was: the quiet end.
[ -d /sys/module/zonesort ] || step end_insmod 30 insmod $KO $KOCAP
echo 0 > $Z/sort_interval
echo "ZSTEST_HOST resize vm0 $((VMEM * 1048576))"
echo 0 > $H2
[ ! -e $H1 ] || echo 0 > $H1
for b in $(cat /tmp/hotplug_blocks); do
	if [ "$(cat $MEM/memory$b/state)" = offline ]; then
		zone=online
		grep -qx $b /tmp/movable_blocks && zone=online_movable
		echo $zone > $MEM/memory$b/state
	fi
done
sleep 5
unload end_rmmod0
# kpageflags bit 23: PageOffline (balloon pages on 7.x, virtio-mem's
# unplugged memory).
offline_pages() { zstest kpageflags 23; }
# free_kb: MemFree and the pages waiting in the per-CPU lists, which
# MemFree leaves out (a sort's drain moves them into the free lists).
free_kb() {
	echo $(($(mi MemFree) + 4 * $(awk '$1 == "count:" { s += $2 } END { print s + 0 }' /proc/zoneinfo)))
}
# Long-lived pages scattered over memory: colliding free blocks for the
# final sorts to hold, in place until the end.
bg end_age 3000 zstest age 300 2 20 /tmp/end_age.ready
ready end_age_ready /tmp/end_age.ready $BG 300
echo 1 > /proc/sys/vm/stat_refresh
M base_memfree_kb=$(free_kb) base_balloon_kb=$(mi Balloon) base_kreclaimable_kb=$(mi KReclaimable) \
	base_offline_pages=$(offline_pages) base_memtotal_kb=$(mi MemTotal)
step end_insmod 30 insmod $KO $KOCAP
# The occupied slots reach a sort after the torture too: a quarter of them.
step end_occupied 30 zstest occupied $Z/node0/occupied $OCC_SLOTS 0 $((OCC_SLOTS / 4))
step end_occupied_sort 120 zstest write $Z/nodeid 0
M end_occupied="$(out end_occupied | tr ' ' '_')" end_occupied_slots=$(stat last_occupied_slots)
step end_sorts 300 zstest writes $Z/nodeid 0 3
M end_held_pages=$(cat $Z/node0/quarantine_held_pages) end_memfree_held_kb=$(free_kb) \
	end_enabled=$(cat $Q/enabled) $(sed 's/\([A-Za-z]*\)=/end_sorts_\1=/g' $OUT/end_sorts)
cat $Z/stats > $OUT/end_stats 2>&1
cap end_stats end_stats
step end_release 60 sh -c "echo 1 > $Q/release"
M end_released_pages=$(cat $Z/node0/quarantine_held_pages) end_released_blocks=$(cat $Z/node0/quarantine_held_blocks)
# kmemleak (debug kernels): objects nothing references any more; those the
# module allocated name it in their backtrace while it is loaded, and
# after rmmod have an address in the range it was loaded at.
kmemleak_scan() {
	echo scan > /sys/kernel/debug/kmemleak
	sleep 2
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > $OUT/$1
}
set -- $(awk '$1 == "zonesort" { print $2, $6 }' /proc/modules)
MOD_SIZE=$1 MOD_BASE=$2
[ -e /sys/kernel/debug/kmemleak ] && kmemleak_scan kmemleak_loaded
unload end_rmmod
sleep 2
echo 1 > /proc/sys/vm/stat_refresh
M after_memfree_kb=$(free_kb) after_balloon_kb=$(mi Balloon) after_kreclaimable_kb=$(mi KReclaimable) \
	after_offline_pages=$(offline_pages) after_memtotal_kb=$(mi MemTotal)
if [ -r /sys/kernel/debug/page_owner ]; then
	# Pages still allocated whose allocation stack went through the
	# module: after rmmod its frames have no names, only addresses in
	# the range it was loaded at. One record per allocation, blank-line
	# separated ("Page allocated via order N, ..." then the stack); the
	# first three are shown. Left out: KASAN's shadow of the module's
	# vmalloc'd buffers (kasan_populate_vmalloc), which the kernel frees
	# when it purges the freed areas, lazily, not when the module frees
	# them; and slab pages (allocate_slab, or new_slab where the kernel
	# inlines allocate_slab into it, as 6.12 does): a slab page is
	# shared by every object of its cache and stays when the module's
	# objects in it are freed (kmemleak below judges objects).
	step page_owner 900 sh -c "cat /sys/kernel/debug/page_owner > /tmp/page_owner"
	awk -v base=$MOD_BASE -v size=$MOD_SIZE 'BEGIN { RS = ""; lo = ("0x" substr(base, 3)) + 0; hi = lo + size }
		/kasan_populate_vmalloc|allocate_slab|new_slab/ { next }
		{ ours = /\[zonesort\]/; rest = $0
		  while (!ours && match(rest, /0x[0-9a-f]+/)) { a = substr(rest, RSTART, RLENGTH) + 0; ours = a >= lo && a < hi; rest = substr(rest, RSTART + RLENGTH) } }
		ours { n++; p = 1; if (match($0, /order [0-9]+/)) for (o = substr($0, RSTART + 6, RLENGTH - 6); o > 0; o--) p *= 2; pages += p
		  if (n <= 3) print > "/tmp/page_owner_ours" }
		END { print n + 0, pages + 0 }' /tmp/page_owner > $OUT/page_owner_count
	set -- $(cat $OUT/page_owner_count)
	M page_owner_zonesort=$2 page_owner_records=$1
	[ -s /tmp/page_owner_ours ] && cp /tmp/page_owner_ours $OUT/page_owner_ours && cap page_owner_ours page_owner_ours
	rm -f /tmp/page_owner /tmp/page_owner_ours
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
	kmemleak_scan kmemleak_unloaded
	# Reports naming the module, or with a backtrace address in its range.
	ours() {
		awk -v base=$MOD_BASE -v size=$MOD_SIZE 'BEGIN { lo = ("0x" substr(base, 3)) + 0; hi = lo + size }
			/unreferenced object/ { if (z) n++; z = 0; next }
			/\[zonesort\]/ { z = 1 }
			{ if (match($0, /\[<[0-9a-f]+>\]/)) { a = ("0x" substr($0, RSTART + 2, RLENGTH - 4)) + 0; if (a >= lo && a < hi) z = 1 } }
			END { if (z) n++; print n + 0 }' $1
	}
	M kmemleak_reports=$(cat $OUT/kmemleak_loaded $OUT/kmemleak_unloaded | grep -c 'unreferenced object') \
		kmemleak_zonesort=$(($(ours $OUT/kmemleak_loaded) + $(ours $OUT/kmemleak_unloaded)))
	cat $OUT/kmemleak_loaded $OUT/kmemleak_unloaded > $OUT/kmemleak
	cap kmemleak kmemleak
fi
M tainted=$(cat /proc/sys/kernel/tainted)
echo "ZSTEST_BEGIN dmesg_all"
dmesg
echo "ZSTEST_DONE dmesg_all"
exit 0
