# Runs inside the QEMU guest (busybox sh) as /test.sh: below the sort's
# floor. Ages the node with long-lived pages scattered over memory, then
# measures fresh half-cache allocations (4 KiB pages and transparent huge
# pages) side by side: unsorted, sort alone, sort with
# the module's quarantine, compaction then sort, compaction then sort with
# quarantine. Huge-page jobs map their memory with MADV_HUGEPAGE (zstest
# measure --thp), THP defrag off. Then checks what the quarantine holds
# and that it gives it back: on demand, under memory pressure, on unload;
# that a sort takes what it needs up to the maximum.
#
# Markers: "ZSTEST key=value ..." values; "ZSTEST_FAIL why" and exit 1 when
# a step fails (the host test fails on it).
# Knobs (kernel command line, so /init's environment):
#   ZS_REMEDY_ROUNDS  aged states to measure (default 1)
#   ZS_REMEDY_MIB, ZS_REMEDY_AGE_ROUNDS, ZS_REMEDY_KEEP   zstest age's
#                     MIB ROUNDS KEEP_PERMILLE (default 400 2 2)
#   ZS_REMEDY_CHECKS  1: the give-back checks after the measurements (default 1)
#   ZS_REMEDY_PCP     small: per-CPU lists kept small as in the main scenario
#                     (default); kernel: the kernel's default size
#   ZS_REMEDY_MAX_PERMILLE  the quarantine's maximum (default: the module's)

ROUNDS=${ZS_REMEDY_ROUNDS:-1}
AGE="${ZS_REMEDY_MIB:-400} ${ZS_REMEDY_AGE_ROUNDS:-2} ${ZS_REMEDY_KEEP:-2}"
CHECKS=${ZS_REMEDY_CHECKS:-1}
C=/sys/devices/system/node/node0/memory_side_cache/index1
Z=/sys/kernel/zone_sort_free_pages
P=/sys/module/zonesort/parameters
Q=$Z/quarantine

M() { echo "ZSTEST $*"; }
fail() {
	echo "ZSTEST_FAIL $*" >&2
	exit 1
}
# put FILE TEXT: one write, failing the run when refused.
put() {
	r=$(zstest write "$1" "$2") || fail "zstest write $1 '$2' did not run"
	[ "$r" = ok ] || fail "write '$2' to $1: $r"
}
# qget KEY: a value of the quarantine: node 0's file quarantine_KEY, else
# the line KEY= of quarantine/stats.
qget() {
	if [ -e $Z/node0/quarantine_$1 ]; then cat $Z/node0/quarantine_$1; else sed -n "s/^$1=//p" $Q/stats; fi
}
memfree_kb() { awk '/^MemFree:/ { print $2 }' /proc/meminfo; }
meminfo_kb() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
node_kreclaimable_kb() { awk '$3 == "KReclaimable:" { print $4 }' /sys/devices/system/node/node0/meminfo; }
pgfree() { awk '$1 == "pgfree" { print $2 }' /proc/vmstat; }
# meas KIND [SORT]: the collision fraction zstest measures for a fresh
# half-cache allocation; KIND 4k or thp; SORT=sort sorts node 0 from the
# allocating process first. The whole output line goes to /tmp/meas.
meas() {
	_kind=$1
	set -- measure $HALF $SLOTS 1 ${2:+--sort $Z/nodeid}
	[ "$_kind" = 4k ] || set -- "$@" --thp
	zstest "$@" > /tmp/meas 2>&1 || fail "zstest $*: $(cat /tmp/meas)"
	tr ' ' '\n' < /tmp/meas | sed -n 's/^conflict=//p'
}
# The fraction of the last measured allocation in huge pages.
huge() { tr ' ' '\n' < /tmp/meas | sed -n 's/^huge=//p'; }
# The module's estimate for the allocation after its last sort, ppm.
est() { grep '^last_conflict_ppm_after=' $Z/stats | cut -d= -f2; }
# Pages compaction scanned for migration, kcompactd's excluded.
compact_scanned() {
	awk '$1 == "compact_migrate_scanned" { m = $2 } $1 == "compact_daemon_migrate_scanned" { d = $2 }
		END { print m - d }' /proc/vmstat
}
# Pages in the per-CPU lists now.
pcp_pages() { awk '$1 == "count:" { s += $2 } END { print s + 0 }' /proc/zoneinfo; }

[ -r $C/size ] || fail "no memory-side cache in $C"
SIZE=$(cat $C/size)
SLOTS=$((SIZE / 4096))
HALF=$((SIZE / 2))
# Huge pages only where asked for (zstest measure --thp), and only from
# free blocks: a huge-page fault must not compact memory while an
# allocation is being measured (as guest-main.sh).
echo madvise > /sys/kernel/mm/transparent_hugepage/enabled || fail "THP enabled=madvise"
echo never > /sys/kernel/mm/transparent_hugepage/defrag || fail "THP defrag=never"
M size=$SIZE slots=$SLOTS thp_enabled="$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)" \
	thp_defrag="$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/defrag)"
# Per-CPU lists are handed out before any free list; keep them small as
# the main scenario does (see bench/REPORT-kmod-collisions.md), unless asked not to.
if [ "${ZS_REMEDY_PCP:-small}" = small ]; then
	echo 1000000 > /proc/sys/vm/percpu_pagelist_high_fraction || fail "percpu_pagelist_high_fraction"
fi
M pcp_high_fraction=$(cat /proc/sys/vm/percpu_pagelist_high_fraction)
insmod /zonesort.ko > /tmp/insmod 2>&1 || fail "insmod: $(cat /tmp/insmod)"
[ -r $Q ] || fail "the module has no $Q"
[ -z "${ZS_REMEDY_MAX_PERMILLE:-}" ] || put $P/quarantine_max_permille "$ZS_REMEDY_MAX_PERMILLE"
M max_permille=$(cat $P/quarantine_max_permille) enabled=$(cat $P/quarantine)

# age: zstest age in the background, holding the long-lived pages until
# killed (holder=pid, kept=pages), its output in a file, never a pipe.
age() {
	rm -f /tmp/aged
	zstest age $AGE /tmp/aged > /tmp/age 2>&1 &
	holder=$!
	n=0
	while [ ! -s /tmp/aged ]; do
		kill -0 $holder 2> /dev/null || fail "zstest age $AGE: $(cat /tmp/age)"
		n=$((n + 1))
		[ $n -lt 3000 ] || fail "zstest age $AGE: not done in 600 s"
		sleep 0.2
	done
	kept=$(sed -n 's/.*kept_pages=\([0-9]*\).*/\1/p' /tmp/aged)
}

i=0
while [ $i -lt "$ROUNDS" ]; do
	i=$((i + 1))
	age
	M r${i}_kept_pages=$kept r${i}_memfree_kb=$(memfree_kb)

	put $P/quarantine N
	put $Q/release 1
	u4=$(meas 4k) || exit 1
	ut=$(meas thp) || exit 1
	utk=$(huge)
	s4=$(meas 4k sort) || exit 1
	sest=$(grep '^last_conflict_ppm_after=' $Z/stats | cut -d= -f2)
	st=$(meas thp sort) || exit 1
	stk=$(huge)
	M r${i}_unsorted_4k=$u4 r${i}_unsorted_thp=$ut r${i}_unsorted_thp_huge=$utk
	M r${i}_sort_4k=$s4 r${i}_sort_thp=$st r${i}_sort_thp_huge=$stk r${i}_sort_est_ppm=$sest

	put $P/quarantine Y
	q4=$(meas 4k sort) || exit 1
	qest=$(grep '^last_conflict_ppm_after=' $Z/stats | cut -d= -f2)
	M r${i}_quar_taken_pages=$(qget last_taken_pages) r${i}_quar_allcpu=$(qget last_allcpu_ops) \
		r${i}_quar_gone=$(qget not_taken_gone) r${i}_quar_no_room=$(qget not_taken_no_room) \
		r${i}_quar_strays=$(qget last_stray_pages) \
		r${i}_quar_failed=$(qget last_take_failed) r${i}_quar_ns=$(qget last_take_ns) \
		r${i}_quar_held_pages=$(qget held_pages) r${i}_quar_sort_ns=$(grep '^sort_ns_last=' $Z/stats | cut -d= -f2)
	qt=$(meas thp sort) || exit 1
	qtk=$(huge)
	qth=$(qget last_taken_pages)
	M r${i}_quar_4k=$q4 r${i}_quar_thp=$qt r${i}_quar_thp_huge=$qtk r${i}_quar_est_ppm=$qest \
		r${i}_quar_thp_taken_pages=$qth r${i}_quar_thp_taken_huge_pages=$(qget last_taken_huge_pages)

	put $Q/release 1
	put $P/quarantine N
	echo 1 > /sys/devices/system/node/node0/compact || fail "compaction of node 0"
	M r${i}_compact_pcp_pages=$(pcp_pages) r${i}_compact_memfree_kb=$(memfree_kb)
	c4=$(meas 4k sort) || exit 1
	cest=$(est)
	ct=$(meas thp sort) || exit 1
	ctk=$(huge)
	put $P/quarantine Y
	cq4=$(meas 4k sort) || exit 1
	cqh=$(qget last_taken_pages) cqhh=$(qget last_taken_huge_pages)
	cqest=$(est)
	cqt=$(meas thp sort) || exit 1
	cqtk=$(huge)
	M r${i}_compact_4k=$c4 r${i}_compact_thp=$ct r${i}_compact_thp_huge=$ctk r${i}_compact_est_ppm=$cest
	M r${i}_compactquar_4k=$cq4 r${i}_compactquar_thp=$cqt r${i}_compactquar_thp_huge=$cqtk \
		r${i}_compactquar_taken_pages=$cqh r${i}_compactquar_taken_huge_pages=$cqhh r${i}_compactquar_est_ppm=$cqest
	put $Q/release 1
	kill "$holder" || fail "kill holder $holder"
	wait "$holder"
done

if [ "$CHECKS" = 1 ]; then
	# A fresh aged state for the give-back checks.
	age
	put $P/quarantine Y

	# A bad maximum is refused and changes nothing.
	for v in -1 1001 abc; do
		echo "ZSTEST_VAL quarantine_max_permille '$v' $(zstest write $P/quarantine_max_permille "$v")"
	done
	for v in 0 2 x release; do
		echo "ZSTEST_VAL quarantine/release '$v' $(zstest write $Q/release "$v")"
		echo "ZSTEST_VAL node0/quarantine_release '$v' $(zstest write $Z/node0/quarantine_release "$v")"
	done
	M max_permille_after_bad=$(cat $P/quarantine_max_permille)

	# The sorter library switches the quarantine as the site says
	# (plugstack.conf quarantine=yes|no, the zonesort command's too).
	zonesort sort quarantine=no > /tmp/zs 2>&1 || fail "zonesort sort quarantine=no: $(cat /tmp/zs)"
	M lib_off_enabled=$(cat $P/quarantine) lib_off_held=$(qget held_pages) lib_off_taken=$(qget last_taken_pages)
	zonesort sort > /tmp/zs 2>&1 || fail "zonesort sort: $(cat /tmp/zs)"
	M lib_on_enabled=$(cat $P/quarantine) lib_on_held=$(qget held_pages)
	zonesort sort quarantine=maybe > /tmp/zs 2>&1
	M lib_bad_rc=$?
	echo "ZSTEST_BEGIN lib_bad"
	cat /tmp/zs
	echo "ZSTEST_DONE lib_bad"

	# The maximum holds: quarantine_max_permille=10, two sorts; peak_pages
	# counts from the release.
	put $P/quarantine_max_permille 10
	put $Q/release 1
	put $Z/nodeid 0
	put $Z/nodeid 0
	M small_max_pages=$(qget max_pages) \
		small_held_pages=$(qget held_pages) small_peak_pages=$(qget peak_pages)
	put $P/quarantine_max_permille 500

	# Given back per node.
	put $Z/nodeid 0
	h=$(qget held_pages)
	put $Z/node0/quarantine_release 1
	M node_release_before=$h node_release_after=$(qget held_pages)

	# A sort takes what it needs up to the maximum, from the first sort
	# on: under a maximum of 40 per mille (the aged node has far more to
	# take), four sorts after a release, what each leaves held.
	put $P/quarantine_max_permille 40
	put $Q/release 1
	n=0
	helds=
	while [ $n -lt 4 ]; do
		put $Z/nodeid 0
		helds="$helds$(qget held_pages),"
		n=$((n + 1))
	done
	M upto_held=${helds%,} upto_short=$(qget last_short_pages) upto_peak=$(qget peak_pages)
	put $P/quarantine_max_permille 500

	# Held; a second sort right after keeps what still collides: the
	# node's page frees during it (/proc/vmstat pgfree) stay below what
	# is held, where giving everything back first frees all of it.
	put $Z/nodeid 0
	h=$(qget held_pages)
	p0=$(pgfree)
	put $Z/nodeid 0
	p1=$(pgfree)
	M resort_held_before=$h resort_held_after=$(qget held_pages) resort_pgfree=$((p1 - p0)) \
		resort_kept=$(qget last_kept_pages) resort_settle_taken=$(qget last_settle_taken_pages)
	# A sort that gives blocks back (here: those over a lowered maximum)
	# walks the lists once more, as they are after the give-back.
	s0=$(awk -F= '$1 == "sorts_settled" { print $2 }' $Z/stats)
	put $P/quarantine_max_permille 20
	put $Z/nodeid 0
	M resort_lowered_held=$(qget held_pages) resort_lowered_given_back=$(qget last_given_back_pages) \
		resort_settled=$(($(awk -F= '$1 == "sorts_settled" { print $2 }' $Z/stats) - s0)) \
		resort_settle_taken=$(qget last_settle_taken_pages)
	put $P/quarantine_max_permille 500

	# Given back on demand; held pages are counted in KReclaimable, the
	# system's and node 0's, and so in MemAvailable.
	h=$(qget held_pages)
	f0=$(memfree_kb) k0=$(meminfo_kb KReclaimable) n0=$(node_kreclaimable_kb)
	put $Q/release 1
	f1=$(memfree_kb) k1=$(meminfo_kb KReclaimable) n1=$(node_kreclaimable_kb)
	M demand_held_before=$h demand_held_after=$(qget held_pages) demand_memfree_gain_kb=$((f1 - f0)) \
		demand_kreclaimable_drop_kb=$((k0 - k1)) demand_node_kreclaimable_drop_kb=$((n0 - n1))

	# Under memory pressure: a process takes free memory down between the
	# zones' min and low watermarks, so kswapd runs; the shrinker must
	# give held pages back, and nothing is killed.
	put $Z/nodeid 0
	h=$(qget held_pages)
	r0=$(qget released_by_pressure_pages)
	# Watermarks in pages, summed over node 0's zones.
	minp=$(awk '$1 == "min" && NF == 2 { s += $2 } END { print s + 0 }' /proc/zoneinfo)
	lowp=$(awk '$1 == "low" && NF == 2 { s += $2 } END { print s + 0 }' /proc/zoneinfo)
	f0=$(memfree_kb)
	# The allocation's own page tables and pagemap buffer: 2/512 of it.
	want_kb=$(( (f0 - (minp + lowp) * 2 - 2048) * 512 / 514 ))
	zstest measure $((want_kb / 4 * 4096)) $SLOTS 1 > /tmp/pressure 2>&1
	prc=$?
	M pressure_held_before=$h pressure_alloc_kb=$want_kb pressure_memfree_kb=$f0 pressure_min_pages=$minp \
		pressure_low_pages=$lowp pressure_rc=$prc \
		pressure_released=$(($(qget released_by_pressure_pages) - r0)) pressure_held_after=$(qget held_pages)
	[ $prc -eq 0 ] || echo "ZSTEST_NOTE pressure allocation: $(cat /tmp/pressure)"

	# Held, then given back on unload.
	put $Z/nodeid 0
	h=$(qget held_pages)
	f0=$(memfree_kb)
	rmmod zonesort > /tmp/rmmod 2>&1 || fail "rmmod: $(cat /tmp/rmmod)"
	f1=$(memfree_kb)
	M unload_held_before=$h unload_memfree_gain_kb=$((f1 - f0))

	# Last, since compaction undoes the aging: loaded again, a full
	# quarantine (1 per mille) that leaves the sort colliding: with
	# compact_full=no the library sorts and nothing more; by default it
	# gives node 0's blocks back, compacts the node and sorts again, and
	# not again within 300 s. Compactions seen in the kernel's counters
	# (pages scanned for migration, kcompactd's own excluded).
	insmod /zonesort.ko > /tmp/insmod 2>&1 || fail "insmod again: $(cat /tmp/insmod)"
	put $P/quarantine_max_permille 1
	for step in off on again; do
		c0=$(compact_scanned)
		case $step in
		off) zonesort sort compact_full=no > /tmp/zs 2>&1 ;;
		*) zonesort sort > /tmp/zs 2>&1 ;;
		esac || fail "zonesort sort ($step): $(cat /tmp/zs)"
		M full_${step}_scanned=$(($(compact_scanned) - c0)) full_${step}_est=$(est) \
			full_${step}_held=$(qget held_pages) full_${step}_max=$(qget max_pages) \
			full_${step}_short=$(qget last_short_pages)
		echo "ZSTEST_BEGIN full_$step"
		cat /tmp/zs
		echo "ZSTEST_DONE full_$step"
	done
	zonesort sort compact_full=maybe > /tmp/zs 2>&1
	M full_bad_rc=$?
	kill "$holder"
	wait "$holder"
fi

M tainted=$(cat /proc/sys/kernel/tainted)
echo "ZSTEST_BEGIN dmesg_all"
dmesg
echo "ZSTEST_DONE dmesg_all"
exit 0
