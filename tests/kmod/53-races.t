#!/bin/bash
# Races between the quarantine and the kernel's page isolation, staged
# where they happen (test build: test_at pauses a thread at a named
# point once, test_take holds a chosen free block), in QEMU (TCG) on
# Debian's 6.12 (blocks held with movable operations) and sid's 7.x
# (balloon pages): guest-races.sh. Node 0 has a 256 MiB direct-mapped
# memory-side cache (HMAT), 1 GiB of boot memory, a 512 MiB DIMM in
# ZONE_MOVABLE and a 256 MiB virtio-mem device (ZONE_MOVABLE) the host shrinks in 2 MiB steps over
# QMP. Freed block descriptors are poisoned (slub_debug), so a read after
# free crashes the guest instead of passing unseen. What is asserted
# comes from the kernel's views (memory block state, kprobes on
# alloc_contig_range, /proc/meminfo, the kernel log) and the guest's
# clock, except the module's held-block counts, compared with its own
# list of held blocks:
#   - a build for another kernel release is refused (ENOEXEC, naming both
#     releases) even where the symbol checksums match;
#   - rmmod waits for an isolation callback that claimed a block;
#   - a partial virtio-mem unplug over a held 4 MiB block never fails an
#     alloc_contig_range();
#   - a block claimed by memory offline while a sort picks it: no read
#     after free, offline done, no "failed to isolate" dump;
#   - a block taken while its pageblock is isolated goes back without
#     skewing the held-block count;
#   - no per-CPU list drain isolates a pageblock of memory that could go
#     offline (offlining gives up on a pageblock isolated already);
#   - pages a migration puts back after their block was given back do
#     not keep rmmod waiting;
#   - on 7.x, pages put back on the list of a block the migration of
#     another of its pages gave back go back to the allocator unasked
#     (Balloon), and rmmod does not wait for them;
#   - reclaim entered from a thread holding isolated held pages returns;
#   - after release and rmmod nothing is held and Balloon is back.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need qemu-system-x86_64 busybox cpio gcc make perl modprobe

# The phases the guest runs (all by default; ZS_RACES_PHASES=a,b runs
# some, to see one race alone).
PHASES=${ZS_RACES_PHASES:-unload,partial,picking,taken,drain,late,putback,stop,shrink}
phase() { case ",$PHASES," in *",$1,"*) return 0 ;; esac; return 1; }
# ZS_RACES_POISON=0 leaves freed descriptors unpoisoned (a read after
# free then passes unseen: only to see what else such a race does).
POISON=1
[ "${ZS_RACES_POISON:-1}" = 1 ] || POISON=

races_test() {
	local s=$1 kver ko other rel kdir initrd sock log hostout g v
	km_series_root "$s" || return
	KM_ROOT=$KM_SERIES_ROOT
	kver=$(km_kver "$s" "$KM_ROOT")
	if [ -z "$kver" ]; then
		_tap_result 1 "a Debian $s kernel image and headers in '${KM_ROOT:-/}'"
		return
	fi
	ko=$(km_build "$KM_ROOT" "$kver" "hooks-$kver" ZS_TEST_HOOKS=y)
	ok "$s: module (test build) builds for $kver" test -n "$ko" || return
	# The same kernel's tree calling itself another release: its symbol
	# checksums are this kernel's, so only the module's own check can
	# tell.
	rel=${kver%-*}-zsother
	kdir=$(km_other_release "$KM_ROOT" "$kver" "$rel")
	other=$(KM_KDIR=$kdir km_build "$KM_ROOT" "$kver" "other-$kver")
	ok "$s: module builds against a copy of the tree that calls itself $rel" test -n "$other" || return
	is "$(modinfo -F vermagic "$other" | cut -d' ' -f1)" "$rel" "$s: ... its vermagic names $rel"
	initrd=$KM_WORK/races-$kver.cpio.gz
	log=$KM_WORK/races-$kver.log
	hostout=$KM_WORK/races-$kver.host
	sock=$KM_WORK/races-$kver.qmp
	rm -f "$log" "$hostout" "$sock"
	KM_GUEST_FILES="$other:zonesort-other.ko" KM_KERNEL_MODS="virtio_pci virtio_mem" \
		ok "$s: initramfs packed" km_initramfs "$initrd" "$kver" "$ko" \
		"$ZS_SRCDIR/tests/kmod/guest-races.sh" || return
	KM_MEM_OPTS=",slots=4,maxmem=8G"
	KM_QEMU_ARGS=(-object memory-backend-ram,id=dm,size=512M -device pc-dimm,id=dimmm,memdev=dm,node=0
		-object memory-backend-ram,id=vmm,size=256M
		-device virtio-mem-pci,id=vm0,memdev=vmm,node=0,requested-size=256M
		-qmp "unix:$sock,server=on,wait=off")
	km_host_requests "$log" "$sock" "$hostout" &
	local watcher=$! t0=$SECONDS
	KM_APPEND="memhp_default_state=offline ${POISON:+slub_debug=FZP,zonesort_held_block} ZS_RACES_PHASES=$PHASES" \
		km_boot "$KM_ROOT" "$kver" "$initrd" "$log" 1G:256M 2 600
	wait "$watcher"
	unset KM_MEM_OPTS KM_QEMU_ARGS
	ok "$s: guest ran every phase to its end marker ($((SECONDS - t0)) s, log $log)" \
		grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$log") || {
		tr -d '\r' < "$log" | grep -E '^ZSTEST_FAIL|Kernel panic|BUG|Oops|general protection' | head -20 | sed 's/^/# /'
		tr -d '\r' < "$log" | tail -20 | sed 's/^/# /'
		return
	}
	g() { km_get "$log" "$1"; }
	is "$(km_failed_steps "$log")" "" "$s: every guest step exited 0 ($(km_steps "$log") steps)"
	diag "$s: $(g movable_blocks) movable DIMM blocks, $(g vmem_blocks) virtio-mem blocks; alloc_contig_range traced as $(g contig_fn)"

	# A build for another release. With symbol checksums (modversions)
	# the kernel ignores the release in a module's version magic, so the
	# module's own check must refuse it; without them (sid's 7.x) the
	# kernel refuses it first.
	if grep -q '^CONFIG_MODVERSIONS=y' "$KM_ROOT/boot/config-$kver"; then
		like "$(km_lines "$log" other_load_out)" "invalid module format|Exec format error" \
			"$s: insmod of the build for $rel fails with ENOEXEC (the kernel checks symbol checksums only)"
		like "$(km_lines "$log" other_load_dmesg)" "built for Linux $(km_ere "$rel"), but this kernel is $(km_ere "$kver")" \
			"$s: ... and the module's message names both releases"
	else
		like "$(km_lines "$log" other_load_out)" "invalid module format|Exec format error" \
			"$s: insmod of the build for $rel is refused (no symbol checksums: the kernel compares the release)"
		like "$(km_lines "$log" other_load_dmesg)" "$(km_ere "$rel").*should be.*$(km_ere "$kver")" \
			"$s: ... and the kernel log names both releases"
	fi
	is "$(g other_loaded_after)" no "$s: ... and nothing of it stays loaded"

	# rmmod while a callback works on a block it claimed.
	if phase unload; then
		is "$(g unload_held) $(g unload_fired)" "yes yes" \
			"$s: a held 2 MiB block's subblock was unplugged and the callback that claimed it paused"
		is "$(g unload_rmmod_rc)" 0 "$s: rmmod during the callback's pause succeeded"
		num_ok "$s: rmmod waited for that callback (3 s pause; rmmod took $(g unload_rmmod_cs) cs) and no more than 10 s" \
			"$(g unload_rmmod_cs) >= 150 && $(g unload_rmmod_cs) <= 1000"
		is "$(km_lines "$log" unload_dmesg | grep -E 'BUG|Oops|general protection|unable to handle|Objects remaining')" "" \
			"$s: ... and the kernel log after it shows no crash and no descriptor left in the cache"
	fi

	# rmmod while a sort walks a list: the sort stops between two lock
	# holds (eight 1.5 s pauses armed at its next resumptions).
	if phase stop; then
		is "$(g stop_paused)" yes "$s: a sort's list walk paused between two lock holds"
		is "$(g stop_rmmod_rc)" 0 "$s: rmmod during that walk succeeded"
		num_ok "$s: ... and stopped the walk at its next resumption: rmmod took $(g stop_rmmod_cs) cs, within one pause and a second, not the seven pauses left" \
			"$(g stop_rmmod_cs) <= 250"
		cmp_ok "$(g stop_sort_rc)" -ne 124 "$s: ... and the sort's writer returned ($(g stop_sort))"
	fi

	# Partial unplug over a held 4 MiB block.
	if phase partial; then
		diag "$s partial: 4 MiB block held: $(g partial_held) (order $(g partial_order)), blocks held above pageblock order: $(g partial_big); unplug $(g partial_drop_kb) of $(g partial_want_kb) kB in $(g partial_cs) cs, $(g partial_contig_calls) alloc_contig_range() calls"
		is "$(g partial_contig_failed)" 0 "$s: unplugging the upper 2 MiB of a held 4 MiB block: no alloc_contig_range() failed ($(g partial_contig_calls) calls)"
		cmp_ok "$(g partial_drop_kb)" -ge "$(g partial_want_kb)" "$s: ... and MemTotal fell by the 2 MiB within $(g partial_cs) cs"
	fi

	# A block claimed by memory offline while a sort picks it.
	if phase picking; then
		cmp_ok "$(g picking_held)" -ge 1 "$s: blocks of the DIMM held for the sort to pick ($(g picking_held))"
		is "$(g picking_fired) $(g picking_sort)" "yes ok" "$s: ... paused 2 s there, then finished"
		is "$(g picking_off_rc)/$(g picking_off_state)" ok/offline \
			"$s: memory block $(g picking_block) went offline, claiming the block the sort held in its pick"
		is "$(g picking_failed_ours)" 0 "$s: ... and no page of a block the module held was one it failed to isolate"
	fi

	# A block taken while its pageblock is isolated.
	if phase taken; then
		like "$(g taken_pfn)" '^[0-9]+$' "$s: a free block of the DIMM to take ($(g taken_pfn), try $(g taken_tries))"
		is "$(g taken_fired) $(g taken_sort) $(g taken_off_rc)" "yes ok ok" \
			"$s: the sort paused 2 s after taking it, memory offline isolated it meanwhile, both finished"
		is "$(g taken_blocks_file)" "$(g taken_blocks_listed)" \
			"$s: ... quarantine_held_blocks equals the blocks the module lists ($(g taken_blocks_listed))"
		is "$(g taken_blocks_after)/$(g taken_pages_after)" 0/0 "$s: ... and is 0 after a release, as are its pages"
	fi

	# Per-CPU list drains and offlining.
	if phase drain; then
		diag "$s drain: $(g drain_contig_calls) alloc_contig_range() calls in memory blocks $(g drain_blocks)"
		cmp_ok "$(g drain_contig_calls)" -ge 1 "$s: the sorts drained per-CPU lists through alloc_contig_range()"
		is "$(g drain_offlinable)" "" "$s: ... never isolating a pageblock in a memory block that could go offline"
	fi

	# Pages put back after their block was given back.
	if phase late; then
		diag "$s late: block $(g late_pfn) of order $(g late_order) held ($(g late_others) others); sort paused: $(g late_picking), compaction paused: $(g late_callback) at $(g late_callback_pfn); offline: $(g late_off), block $(g late_state)"
		is "$(g late_rmmod_rc)" 0 "$s: rmmod after pages of a given-back block came back from a migration"
		num_ok "$s: ... within 10 s ($(g late_rmmod_cs) cs)" "$(g late_rmmod_cs) <= 1000"
	fi

	# Pages put back on a block given back by its own migration.
	if phase putback; then
		diag "$s putback: block $(g putback_pfn) of order $(g putback_order) held as $(g putback_kind); claimed: $(g putback_claimed), $(g putback_refused) migration callbacks refused; Balloon $(g putback_balloon_kb) kB after release, $(g putback_balloon_unloaded_kb) kB after rmmod"
		cmp_ok "$(g putback_held)" -ge 1 "$s: a block held at the start of ZONE_MOVABLE"
		if [ "$s" = 6.12 ]; then
			is "$(g putback_kind)" movable "$s: ... as one movable head page: a claim frees it whole, no page can be put back later"
		else
			is "$(g putback_kind)" balloon "$s: ... as balloon pages"
			is "$(g putback_fired)/$(g putback_claimed)" yes/yes "$s: ... compaction's migration claimed it"
			cmp_ok "$(g putback_refused)" -ge 1 "$s: ... and the migrations of its other isolated pages failed, so compaction put them back"
			is "$(g putback_balloon_kb)" "$(g balloon0_kb)" "$s: ... those pages went back to the allocator unasked: Balloon after a release is its value before the module ($(g balloon0_kb) kB)"
		fi
		is "$(g putback_rmmod_rc)" 0 "$s: rmmod after it"
		num_ok "$s: ... within 10 s ($(g putback_rmmod_cs) cs)" "$(g putback_rmmod_cs) <= 1000"
	fi

	# Reclaim from a thread holding isolated held pages.
	if phase shrink; then
		cmp_ok "$(g shrink_held)" -ge 1 "$s: blocks held at the start of ZONE_MOVABLE ($(g shrink_held))"
		cmp_ok "$(g shrink_fired)" -ge 1 "$s: compaction's callback ran the shrinker"
		num_ok "$s: ... and compaction finished ($(g shrink_compact_cs) cs)" "$(g shrink_compact_cs) < 6000"
		unlike "$(km_lines "$log" shrink_dmesg)" "waiting for" "$s: ... no release waited for pages a migration isolated"
	fi

	# Everything back.
	is "$(g end_held_pages)/$(g end_held_blocks)" 0/0 "$s: release leaves nothing held"
	is "$(g rmmod_end_rc)" 0 "$s: the last rmmod succeeded"
	num_ok "$s: ... within 10 s ($(g rmmod_end_cs) cs)" "$(g rmmod_end_cs) <= 1000"
	if [ -n "$(g balloon0_kb)" ]; then
		is "$(g balloon_end_kb)" "$(g balloon0_kb)" "$s: /proc/meminfo Balloon is back to its value before the module ($(g balloon0_kb) kB)"
	fi
	is "$(km_dmesg_bad "$log")" "" "$s: no WARNING, BUG, oops, list corruption, lockup or stall in dmesg"
	is "$(km_lines "$log" dmesg_all | grep -E 'BUG zonesort|Poison overwritten|Redzone|Objects remaining')" "" \
		"$s: no slab debugging report on the block descriptors"
}

for series in ${ZS_RACES_SERIES:-6.12 7}; do
	races_test "$series"
done
done_testing
