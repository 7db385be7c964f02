# The main QEMU test for one kernel series, shared by tests/kmod/20-vm-6.1.t,
# 21-vm-6.12.t and 22-vm-7.t: builds the module, boots the guest (1 GiB,
# a 256 MiB direct-mapped memory-side cache in HMAT), runs guest-main.sh
# there and asserts on its markers. Source after tap.sh, env.sh and vm.sh;
# call km_main_test SERIES.
#
# The pass mark of a sorted allocation is an independent lower bound
# (zsbound, from the free lists dumped right before the allocation): no
# order of the lists gives fewer collisions. The sort must come within
# one point of it, or for the whole cache, which must overfill slots,
# within the allowance km_sorted_tail_ok explains. Unsorted lists and
# random placement are reported beside it.

# km_round_report LOG ROUND: asserts on one aging round.
km_round_report() {
	local log=$1 r=$2 m
	local -A what=([u4k]="half, base pages, unsorted" [ufull]="all, base pages, unsorted"
		[uthp]="half, huge pages, unsorted" [s4k]="half, base pages, sorted"
		[sfull]="all, base pages, sorted" [sthp]="half, huge pages, sorted")
	diag "$r: $(km_get "$log" "${r}_kept_pages") pages kept by the aging process; free movable pages in 4 MiB blocks: $(km_get "$log" "${r}_u4k_order_top_share")"
	for m in u4k ufull uthp s4k sfull sthp; do
		km_measurement "$log" "${r}_$m" "${what[$m]}"
	done
	km_sorted_ok "$log" "${r}_s4k"
	km_sorted_ok "$log" "${r}_sthp"
	km_sorted_tail_ok "$log" "${r}_sfull"
	# The lists move between the sort and the dump: the guest takes the
	# pair again, up to three times, while they are more than 16 pages or
	# a fifth of the dump's count apart (pcp_agree in guest-main.sh); the
	# same bound is checked here on the last pair.
	local tries sorted dumped pairs t
	tries=$(km_get "$log" "${r}_pcp_retries")
	sorted=$(km_get "$log" "${r}_pcp_pages") dumped=$(km_get "$log" "${r}_s4k_pcp_movable")
	pairs="$sorted vs $dumped"
	for ((t = 0; t < ${tries:-0}; t++)); do
		sorted=$(km_get "$log" "${r}_pcpretry${t}_sorted") dumped=$(km_get "$log" "${r}_pcpretry${t}_pcp_movable")
		pairs+=", then $sorted vs $dumped"
	done
	num_ok "$r: the sort counted only movable pages of the per-CPU lists ($pairs in the dump right after it)" \
		"\"$sorted\" != \"\" && \"$dumped\" != \"\" && (($sorted - $dumped)^2 <= 256 || ($sorted - $dumped)^2 <= (0.2 * $dumped)^2)"
	num_ok "$r: the module's estimate of the sorted half-cache allocation is within 1 point of the measurement ($(km_get "$log" "${r}_est_after_half_ppm") ppm vs $(km_get "$log" "${r}_s4k_conflict"))" \
		"($(km_get "$log" "${r}_est_after_half_ppm") / 1e6 - $(km_get "$log" "${r}_s4k_conflict"))^2 < 1e-4"
	num_ok "$r: the module's conflicts estimate of the unsorted one is within 5 points ($(km_get "$log" "${r}_u4k_est_half_ppm") ppm vs $(km_get "$log" "${r}_u4k_conflict"))" \
		"($(km_get "$log" "${r}_u4k_est_half_ppm") / 1e6 - $(km_get "$log" "${r}_u4k_conflict"))^2 < 25e-4"
}

km_main_test() {
	local series=$1 root kver ko initrd log v r stress=${ZS_KMOD_STRESS_S:-0}
	need qemu-system-x86_64 busybox cpio gcc make unshare
	need_file "$ZS_ZONESORT" "the zonesort command"
	km_need_kernel "$series"
	root=$KM_ROOT
	kver=$KM_KVER
	diag "kernel $kver${root:+ (from $root)}"
	# The test build: the free-list dump zsbound's bound is computed from
	# exists only there; the sort is the production module's.
	ko=$(km_build "$root" "$kver" "hooks-$kver" ZS_TEST_HOOKS=y)
	ok "module (test build) builds for $kver" test -n "$ko" || return
	initrd=$KM_WORK/main-$kver.cpio.gz
	log=$KM_WORK/main-$kver.log
	ok "initramfs with module, zstest, zsbound and zonesort packed" km_initramfs "$initrd" "$kver" "$ko" \
		"$ZS_SRCDIR/testbed/guest-main.sh" || return
	local t0=$SECONDS
	KM_APPEND="ZS_STRESS_S=$stress ${ZS_KMOD_ROUNDS:+ZS_ROUNDS=$ZS_KMOD_ROUNDS}" \
		km_boot "$root" "$kver" "$initrd" "$log" 1G:256M 2 900
	ok "guest ran the scenario to its end marker ($((SECONDS - t0)) s, log $log)" \
		grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
		tr -d '\r' < "$log" | tail -30 | sed 's/^/# /'
		return
	}
	km_guest_ok "$log" 60
	is "$(km_get "$log" hmat_size)" 268435456 "guest kernel shows the HMAT cache in node0/memory_side_cache/index1/size"
	is "$(km_get "$log" hmat_indexing)" 0 "... as direct-mapped (indexing 0)"
	diag "fresh-boot half-cache allocation collisions: $(km_get "$log" fresh_half); page_alloc.shuffle=$(km_get "$log" shuffle)"

	# The project's command in the guest.
	v=$(km_lines "$log" status)
	like "$v" "node 0: 256 MiB, direct-mapped" "zonesort status shows the memory-side cache (hwloc reads the kernel's sysfs)"
	like "$(km_lines "$log" sort_load)" "node 0: sorted in .*\(kernel\)" "zonesort sort modprobe=zonesort loads the module and sorts with the kernel backend"
	is "$(km_get "$log" param_cache_size)" 268435456 "modprobe passed cache_size from hwloc to the module"
	is "$(km_get "$log" param_ways)" 1 "modprobe passed ways=1"

	# Per-CPU lists: the lock of a list is held for at most lock_batch
	# entries, also when the list is longer.
	cmp_ok "$(km_get "$log" pcp_count_max)" -gt 256 "a per-CPU list held more than 256 pages before the sort ($(km_get "$log" pcp_count_max), /proc/zoneinfo)"
	is "$(km_get "$log" pcp_sort)" ok "... the sort worked"
	cmp_ok "$(km_get "$log" pcp_hold_entries_max)" -le "$(km_get "$log" lock_batch)" \
		"... and held a per-CPU list's lock for at most $(km_get "$log" lock_batch) entries ($(km_get "$log" pcp_hold_entries_max))"

	for r in ${ZS_KMOD_ROUNDS:-churn frag holes}; do
		km_round_report "$log" "$r"
	done
	# The slots a running job occupies (a quarter of them here), given
	# to the next sort: an allocation right after it keeps out of them
	# (the controls, without them, cover all slots alike). The order
	# alone never adds collisions; with the quarantine the allocation
	# keeps out.
	local half_pages c
	# Without the bitmap which slots the allocation takes is chance: in
	# 4 MiB blocks, 32 of the cache's 64 block positions, of which the
	# marked quarter holds 16, so blocks in it follow a hypergeometric
	# law (mean 8). At least 2 of them (1/16 of the pages) fails by
	# chance once in 26000 runs (P(X <= 1) = 3.8e-5; at most 4, below
	# 15%, 2.1%), and the marked run's 5% (at most one block) is as
	# unlikely without the bitmap.
	half_pages=$(km_get "$log" occ_marked_pages)
	for c in occ_control occ_qcontrol; do
		num_ok "occupied: without a bitmap a half-cache allocation has some of its pages in the first quarter of the slots, as chance gives ($c: $(km_get "$log" ${c}_in_range) of $(km_get "$log" ${c}_pages))" \
			"$(km_get "$log" ${c}_in_range) >= $(km_get "$log" ${c}_pages) / 16"
	done
	# Without the quarantine the occupied slots only break ties (their
	# cost, none, is shown on the simulator: tests/kmod/13-occupied.t);
	# two allocations a moment apart differ here by more than that.
	diag "occupied, no quarantine: $(km_get "$log" occ_order_in_range) pages in the marked quarter against $(km_get "$log" occ_control_in_range) without the bitmap; collisions $(km_get "$log" occ_order_conflict) against $(km_get "$log" occ_control_conflict)"
	num_ok "occupied, with the quarantine: at most 5% of the pages land in the marked quarter ($(km_get "$log" occ_marked_in_range) of $half_pages; $(km_get "$log" occ_held) pages held)" \
		"\"$half_pages\" != \"\" && $(km_get "$log" occ_marked_in_range) <= 0.05 * $half_pages"
	num_ok "... and at most 5% collide ($(km_get "$log" occ_marked_conflict))" "$(km_get "$log" occ_marked_conflict) <= 0.05"
	is "$(km_get "$log" occ_taken)" $((268435456 / 4096 / 4)) "... the sort took the bitmap: last_occupied_slots counts the slots written"
	is "$(km_get "$log" occ_next_taken)" 0 "... and the sort after it starts without it"
	is "$(km_get "$log" occ_long) $(km_get "$log" occ_long_taken)" "EINVAL_at=8192 0" \
		"occupied: a byte past the bitmap is refused (EINVAL after the 8192 bytes of 65536 slots) and ends that bitmap"
	is "$(km_get "$log" occ_gap)" EINVAL "occupied: a write at offset 8 where no bitmap began is refused"
	is "$(km_get "$log" occ_part) $(km_get "$log" occ_part_taken)" "ok_bytes=4096 0" \
		"occupied: a bitmap left half written is not taken"
	is "$(km_get "$log" occ_stale) $(km_get "$log" occ_stale_taken)" "ok_bytes=8192 0" \
		"occupied: a bitmap older than 10 s is not taken"
	cmp_ok "$(km_get "$log" frag_kept_pages)" -ge 100 "frag: the aging process kept pages ($(km_get "$log" frag_kept_pages)), so there are holes"
	num_ok "holes: free memory is not mostly 4 MiB blocks ($(km_get "$log" holes_u4k_order_top_share) of it)" \
		"$(km_get "$log" holes_u4k_order_top_share) < 0.5"
	for r in churn frag holes; do
		num_ok "$r: aging left unsorted half-cache allocations with >= 5% collisions ($(km_get "$log" "${r}_u4k_conflict"))" \
			"$(km_get "$log" "${r}_u4k_conflict") >= 0.05"
	done
	local tns fp hold
	tns=$(km_get "$log" churn_time_ns)
	fp=$(km_get "$log" churn_free_pages)
	hold=$(km_get "$log" churn_hold_ns)
	diag "sort of $fp free pages took $tns ns, longest lock hold $hold ns (TCG)"
	num_ok "a sort of ~1 GiB took under 2 s even under TCG ($tns ns)" "$tns > 0 && $tns < 2e9"

	# A conflicts read never costs a sort.
	like "$(km_get "$log" sorts_during_reads)" "^ok=40,EBUSY=0,other=0$" \
		"40 sorts while conflicts is read in a loop: all sorted, none EBUSY ($(km_get "$log" sorts_during_reads); $(km_get "$log" reads))"
	like "$(km_get "$log" reads)" "^reads=[1-9][0-9]*,errors=0$" "... the reads all worked"

	# Errors the command and the files give.
	is "$(km_get "$log" nodeid_5)" EINVAL "writing node 5 (absent) to nodeid gives EINVAL"
	like "$(km_lines "$log" sort_node5)" "nodes=5: NUMA node 5 does not exist on this host" "zonesort sort --nodes 5 names the bad node"
	v=$(tr -d '\r' < "$log" | grep '^ZSTEST_VAL ')
	local bad
	# Accepted: a node id with a newline, Intel's "N sec" form, overflow's
	# two names, and empty writes (write(2) of 0 bytes never reaches the
	# module).
	bad=$(printf '%s\n' "$v" | grep -v " EINVAL$" | grep -v -e "^ZSTEST_VAL nodeid '0\\\\n' ok$" \
		-e "^ZSTEST_VAL sort_interval '7 sec\\\\n' ok$" -e "^ZSTEST_VAL sort_interval '0' ok$" \
		-e "^ZSTEST_VAL overflow 'spread\\\\n' ok$" -e "^ZSTEST_VAL overflow 'pile' ok$" \
		-e "^ZSTEST_VAL [a-z_]* '' ok$")
	is "$bad" "" "every garbage, negative, huge or malformed value is refused with EINVAL"
	cmp_ok "$(printf '%s\n' "$v" | grep -c ' EINVAL$')" -ge 34 "... (34 values tried)"
	like "$v" "nodeid '0\\\\n' ok" "a node id with a trailing newline is accepted"
	like "$v" "sort_interval '7 sec\\\\n' ok" "sort_interval takes Intel's 'N sec' with a newline"
	is "$(km_get "$log" cache_size_after_bad) $(km_get "$log" ways_after_bad)" "268435456 1" \
		"refused parameter writes leave cache_size and ways unchanged"
	is "$(km_get "$log" ways3) $(km_get "$log" nodeid_ways3)" "ok EDOM" \
		"ways=3 is accepted, but 256 MiB has no whole number of 3-way slots: the sort fails with EDOM, not EINVAL"
	is "$(km_get "$log" nodeid_after_set)" ok "setting cache_size at run time works"
	is "$(km_get "$log" overflow_default) $(km_get "$log" overflow_after_bad)" "pile pile" \
		"overflow is pile by default and refused writes leave it so"
	cmp_ok "$(km_get "$log" overflow_named)" -ge 1 "a refused overflow is named in the kernel log with what is accepted"
	is "$(km_get "$log" overflow_set) $(km_get "$log" nodeid_spread)" "spread ok" \
		"overflow=spread is taken with a newline and a sort runs with it"

	# The interval timer.
	is "$(km_get "$log" interval_set) $(km_get "$log" interval_read)" "ok 1_sec" \
		"sort_interval accepts '1 sec' and reads back '1 sec', as Intel's module"
	is "$(km_get "$log" nodeid_timer)" EBUSY "nodeid writes give EBUSY while the timer is on"
	like "$(km_lines "$log" sort_timer)" "node 0: busy" "zonesort sort reports busy while the timer is on"
	cmp_ok "$(km_get "$log" timer_sorts)" -ge 2 "the timer sorted on its own ($(km_get "$log" timer_sorts) sorts in 4 s)"
	like "$(km_get "$log" timer_sorter)" "^kworker/u" "... on an unbound workqueue's worker ($(km_get "$log" timer_sorter))"
	is "$(km_get "$log" interval_off) $(km_get "$log" nodeid_after_timer) $(km_get "$log" interval_read_off)" \
		"ok ok 0_sec" "timer off: writes sort again"

	# Stress (ZS_KMOD_STRESS_S seconds; none by default: the torture test
	# runs sorts, readers, hotplug and compaction at once) and kernel
	# health.
	if [ "$stress" -gt 0 ]; then
		cmp_ok "$(km_get "$log" stress_ok)" -ge 20 "stress: $(km_get "$log" stress_ok) sorts (and $(km_get "$log" stress_busy) EBUSY during the timer) while two processes allocated and freed"
		is "$(km_get "$log" stress_other)" 0 "stress: no write failed otherwise"
		like "$(km_get "$log" stress_reads)" "^reads=[1-9][0-9]*,errors=0$" "stress: conflicts read meanwhile ($(km_get "$log" stress_reads))"
		cmp_ok "$(km_get "$log" stress_offlined)" -ge 1 "stress: memory blocks went offline and online meanwhile ($(km_get "$log" stress_offlined) offline, $(km_get "$log" stress_onlined) online)"
		is "$(km_get "$log" stress_online_failed) $(km_get "$log" blocks_offline_after)" "0 0" "stress: every block offlined came back online"
	fi
	diag "longest lock hold over the whole run: $(km_get "$log" hold_max_ns) ns; blocks skipped as changed: $(km_get "$log" vanished); walks cut: $(km_get "$log" walks_cut)"
	is "$(km_get "$log" reload_sort)" ok "module unloads, reloads (firmware cache size) and sorts, unloads"
	like "$(km_lines "$log" dmesg_all)" "zonesort: version" "the guest's kernel log was captured"
	is "$(km_dmesg_bad "$log")" "" "no WARNING, BUG, oops, list corruption, lockup or stall in dmesg"
	v=$(km_get "$log" tainted)
	num_ok "taint only from loading an unsigned out-of-tree module (O=4096, E=8192): $v" \
		"$v != \"\" && ($v == 0 || $v == 4096 || $v == 8192 || $v == 12288)"
}
