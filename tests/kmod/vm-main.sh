# The main QEMU test for one kernel series, shared by 20-vm-6.1.t and
# 21-vm-6.12.t: builds the module, boots the guest with a 256 MiB
# direct-mapped memory-side cache in HMAT, runs guest-main.sh there and
# asserts on its markers. Source after tap.sh, env.sh and vm.sh; call
# km_main_test SERIES.

km_main_test() {
	local series=$1 kver ko initrd log v
	need qemu-system-x86_64 busybox cpio gcc make
	need_file "$ZS_ZONESORT" "the zonesort command"
	kver=$(km_kver "$series")
	if [ -z "$kver" ]; then
		_tap_result 1 "a Debian $series kernel with headers is installed (/boot/vmlinuz-$series.*, linux-headers; scripts/debian-packages.kmod)"
		return
	fi
	diag "kernel $kver"
	ko=$(km_build "$kver")
	ok "module builds for $kver" test -n "$ko" || return
	initrd=$KM_WORK/main-$kver.cpio.gz
	log=$KM_WORK/main-$kver.log
	ok "initramfs with module, zstest and zonesort packed" km_initramfs "$initrd" "$kver" "$ko" \
		"$ZS_SRCDIR/tests/kmod/guest-main.sh" || return
	local t0=$SECONDS
	KM_APPEND="ZS_STRESS_S=${ZS_KMOD_STRESS_S:-60}" km_boot "$kver" "$initrd" "$log" 256M 1G 2 900
	ok "guest ran the scenario to its end marker ($((SECONDS - t0)) s, log $log)" \
		grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
		tr -d '\r' < "$log" | tail -30 | sed 's/^/# /'
		return
	}
	is "$(km_get "$log" hmat_size)" 268435456 "guest kernel shows the HMAT cache in node0/memory_side_cache/index1/size"
	is "$(km_get "$log" hmat_indexing)" 0 "... as direct-mapped (indexing 0)"
	diag "fresh-boot half-cache allocation collisions: $(km_get "$log" fresh_half); page_alloc.shuffle=$(km_get "$log" shuffle)"

	# The project's command in the guest.
	v=$(km_lines "$log" status)
	like "$v" "node 0: 256 MiB, direct-mapped" "zonesort status shows the memory-side cache (hwloc reads the kernel's sysfs)"
	v=$(km_lines "$log" sort_load)
	like "$v" "node 0: sorted in .*\(kernel\)" "zonesort sort modprobe=zonesort loads the module and sorts with the kernel backend"
	like "$v" "rc=0" "... and exits 0"
	is "$(km_get "$log" param_cache_size)" 268435456 "modprobe passed cache_size from hwloc to the module"
	is "$(km_get "$log" param_ways)" 1 "modprobe passed ways=1"

	# Collisions of fresh allocations, unsorted and sorted.
	local r bh ah bf af eb ea fl best=1
	for r in churn1 churn2 frag; do
		bh=$(km_get "$log" "${r}_before_half")
		ah=$(km_get "$log" "${r}_after_half")
		bf=$(km_get "$log" "${r}_before_full")
		af=$(km_get "$log" "${r}_after_full")
		eb=$(km_get "$log" "${r}_est_before_half_ppm")
		ea=$(km_get "$log" "${r}_est_after_half_ppm")
		fl=$(km_get "$log" "${r}_floor_half_ppm")
		diag "$r: half of the cache: before $bh after $ah; all of it: before $bf after $af; module estimate before ${eb} ppm after ${ea} ppm, floor ${fl} ppm"
		# What no order of the lists can avoid (the module's floor, see
		# kmod/zonesort_policy.h) is allowed on top of the 1% goal.
		num_ok "$r: half-cache allocation collisions after sort <= 1% above the floor ($ah, floor ${fl} ppm)" \
			"$fl != \"\" && $ah <= 0.01 + $fl / 1e6"
		num_ok "$r: the sort's own estimate matches the measurement within 1 point (${ea} ppm vs $ah)" \
			"($ea / 1e6 - $ah) < 0.01 && ($ah - $ea / 1e6) < 0.01"
		num_ok "$r: full-cache allocation collisions after sort well below before ($af vs $bf)" "$af <= $bf / 2"
		awk -v a="$ah" -v b="$best" 'BEGIN { exit !(a < b) }' && best=$ah
		num_ok "$r: full-cache allocation collisions before sort >= 20% ($bf)" "$bf >= 0.20"
		num_ok "$r: sorting lowers the half-cache collisions ($bh -> $ah)" "$ah < $bh || $bh == 0"
		num_ok "$r: module's estimate before the sort is within 5 points of the measurement ($eb ppm vs $bh)" \
			"($eb / 1e6 - $bh) < 0.05 && ($bh - $eb / 1e6) < 0.05"
	done
	# The 1% goal is reported, not asserted: what the sort can reach is
	# bounded by the floor each aged state leaves (0 on 6.1 so far, 0-10%
	# seen on 6.12), and the assertions above hold the sort to that floor.
	diag "best aged state after the sort: $best of a half-cache allocation collides (goal 1%)"
	for r in churn1 churn2; do
		bh=$(km_get "$log" "${r}_before_half")
		# How much aging fragments the lists varies from boot to boot
		# (12.5-52% seen); 5% is enough to show the problem is there.
		num_ok "$r: aging left unsorted half-cache allocations with >= 5% collisions ($bh)" "$bh >= 0.05"
	done
	local tns fp hold
	tns=$(km_get "$log" churn1_time_ns)
	fp=$(km_get "$log" churn1_free_pages)
	hold=$(km_get "$log" churn1_hold_ns)
	diag "sort of $fp free pages took $tns ns, longest lock hold $hold ns (TCG)"
	num_ok "a sort of ~1 GiB took under 2 s even under TCG ($tns ns)" "$tns > 0 && $tns < 2e9"

	# Errors the command and the files give.
	is "$(km_get "$log" nodeid_5)" EINVAL "writing node 5 (absent) to nodeid gives EINVAL"
	like "$(km_lines "$log" sort_node5)" "'5' is not a valid NUMA node" "zonesort sort --nodes 5 names the bad node"
	v=$(tr -d '\r' < "$log" | grep '^ZSTEST_VAL ')
	local bad
	bad=$(printf '%s\n' "$v" | grep -v " EINVAL$" | grep -v "^ZSTEST_VAL nodeid '0\\\\n' ok$" |
		grep -v "^ZSTEST_VAL [a-z_]* '' ok$")
	is "$bad" "" "every garbage, negative, huge or non-power-of-two value is refused with EINVAL"
	cmp_ok "$(printf '%s\n' "$v" | grep -c ' EINVAL$')" -ge 24 "... (24 values tried)"
	like "$v" "nodeid '0\\\\n' ok" "a node id with a trailing newline is accepted"
	is "$(km_get "$log" cache_size_after_bad) $(km_get "$log" ways_after_bad)" "268435456 1" \
		"refused parameter writes leave cache_size and ways unchanged"
	is "$(km_get "$log" nodeid_ways3)" EINVAL "ways=3 (no power-of-two slot count) makes the sort refuse with EINVAL"
	is "$(km_get "$log" nodeid_after_set)" ok "setting cache_size at run time works"

	# The interval timer.
	is "$(km_get "$log" interval_set)" ok "sort_interval=1 accepted"
	is "$(km_get "$log" nodeid_timer)" EBUSY "nodeid writes give EBUSY while the timer is on"
	like "$(km_lines "$log" sort_timer)" "node 0: busy" "zonesort sort reports busy while the timer is on"
	cmp_ok "$(km_get "$log" timer_sorts)" -ge 2 "the timer sorted on its own ($(km_get "$log" timer_sorts) sorts in 4 s)"
	is "$(km_get "$log" interval_off) $(km_get "$log" nodeid_after_timer)" "ok ok" "timer off: writes sort again"

	# Stress and kernel health.
	cmp_ok "$(km_get "$log" stress_ok)" -ge 20 "stress: $(km_get "$log" stress_ok) sorts (and $(km_get "$log" stress_busy) EBUSY during the timer) while two processes allocated and freed"
	is "$(km_get "$log" stress_other)" 0 "stress: no write failed otherwise"
	hold=$(km_get "$log" hold_max_ns)
	diag "longest lock hold over the whole run: $hold ns"
	is "$(km_get "$log" rmmod) $(km_get "$log" reload) $(km_get "$log" reload_sort) $(km_get "$log" rmmod2)" \
		"ok ok ok ok" "module unloads, reloads (firmware cache size) and sorts, unloads"
	like "$(km_lines "$log" dmesg_all)" "zonesort: version" "the guest's kernel log was captured"
	is "$(km_dmesg_bad "$log")" "" "no WARNING, BUG, oops, list corruption, lockup or stall in dmesg"
	v=$(km_get "$log" tainted)
	num_ok "taint only from loading an unsigned out-of-tree module (O=4096, E=8192): $v" \
		"$v != \"\" && ($v == 0 || $v == 4096 || $v == 8192 || $v == 12288)"
}
