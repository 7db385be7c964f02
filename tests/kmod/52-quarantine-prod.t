#!/bin/bash
# The quarantine on a node as production runs it, in QEMU (TCG) on
# Debian's 6.12 kernel and sid's 7.x (6.1 with ZS_PROD_SERIES): node 0 with a 256 MiB
# direct-mapped memory-side cache (ACPI HMAT), 2 GiB of boot memory, two
# DIMMs of 512 MiB (onlined to the kernel zone and to ZONE_MOVABLE), one
# of 1 GiB (kernel zone, for 1 GiB pages) and a virtio-mem device of
# 256 MiB (ZONE_MOVABLE). One guest per kernel runs
# guest-prod.sh; everything asserted here comes from the kernel's own
# views, computed bounds and the guest's clock, except where said:
#   - memory offline of blocks the sort took pages from, sorts looping
#     meanwhile: done or failed with the kernel's error line within 10 s,
#     or, for a kernel-zone block, stuck on nothing but the kernel's own
#     order-0 slab pages (7.x retries those until a signal);
#     every ZONE_MOVABLE block goes offline; virtio-mem unplug completes;
#   - held pages never above quarantine_max_permille of the cache's pages
#     (computed here), sampled during back-to-back sorts;
#   - KReclaimable (global and node 0) carries the held pages, MemFree
#     gets them back on release, MemAvailable counts them;
#   - nr_hugepages (1 GiB, 2 MiB) reaches with the quarantine full what
#     it reaches with it off (the 1 GiB page comes from a DIMM onlined for
#     it, where nothing is held: see guest-prod.sh);
#   - all-CPU operations per sort counted by kprobes on the kernel's
#     functions: a sort taking thousands of blocks needs no more than one
#     taking a few;
#   - lock_hold_entries_max, the module's own count (no view of the
#     kernel's shows how long a lock was held), at most the batch of 256.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need qemu-system-x86_64 busybox cpio gcc make perl modprobe
need_file "$ZS_ZONESORT" "the zonesort command"

SLOTS=65536	# 256 MiB / 4 KiB
BOUND_MAX_PERMILLE=20
BOUND_PAGES=$((SLOTS * BOUND_MAX_PERMILLE / 1000))
ZS_BATCH=256

# prod_boot SERIES: builds, packs and boots; sets LOG and HOSTOUT.
prod_boot() {
	local series=$1 kver ko initrd sock
	km_series_root "$series" || return 1
	KM_ROOT=$KM_SERIES_ROOT
	kver=$(km_kver "$series" "$KM_ROOT")
	if [ -z "$kver" ]; then
		_tap_result 1 "a Debian $series kernel image and headers in '${KM_ROOT:-/}'"
		return 1
	fi
	# The test build: the guest finds the blocks the sort took pages from
	# in the free-list dump, which only that build has.
	ko=$(km_build "$KM_ROOT" "$kver" "hooks-$kver" ZS_TEST_HOOKS=y)
	ok "$series: module (test build) builds for $kver" test -n "$ko" || return 1
	initrd=$KM_WORK/prod-$kver.cpio.gz
	LOG=$KM_WORK/prod-$kver.log
	HOSTOUT=$KM_WORK/prod-$kver.host
	sock=$KM_WORK/prod-$kver.qmp
	rm -f "$LOG" "$HOSTOUT" "$sock"
	KM_GUEST_BINS=zsblocks KM_KERNEL_MODS="virtio_pci virtio_mem" \
		ok "$series: initramfs packed (zsblocks, virtio_mem)" km_initramfs "$initrd" "$kver" "$ko" \
		"$ZS_SRCDIR/tests/kmod/guest-prod.sh" || return 1
	KM_MEM_OPTS=",slots=4,maxmem=8G"
	KM_QEMU_ARGS=(-object memory-backend-ram,id=dk,size=512M -device pc-dimm,id=dimmk,memdev=dk,node=0
		-object memory-backend-ram,id=dm,size=512M -device pc-dimm,id=dimmm,memdev=dm,node=0
		-object memory-backend-ram,id=dg,size=1G -device pc-dimm,id=dimmg,memdev=dg,node=0
		-object memory-backend-ram,id=vmm,size=512M
		-device virtio-mem-pci,id=vm0,memdev=vmm,node=0,requested-size=256M
		-qmp "unix:$sock,server=on,wait=off")
	km_unplug_when "$LOG" "$sock" vm0 "$HOSTOUT" &
	local watcher=$! t0=$SECONDS
	KM_APPEND="memhp_default_state=offline ZS_DIMM_MIB=512,512,1024 ZS_BOUND_MAX_PERMILLE=$BOUND_MAX_PERMILLE" \
		km_boot "$KM_ROOT" "$kver" "$initrd" "$LOG" 2G:256M 2 900
	wait "$watcher"
	unset KM_MEM_OPTS KM_QEMU_ARGS
	ok "$series: guest ran every step to its end marker ($((SECONDS - t0)) s, log $LOG)" \
		grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$LOG") || {
		tr -d '\r' < "$LOG" | grep -E '^ZSTEST_FAIL|Kernel panic|BUG' | sed 's/^/# /'
		tr -d '\r' < "$LOG" | tail -20 | sed 's/^/# /'
		return 1
	}
	is "$(km_failed_steps "$LOG")" "" "$series: every guest step exited 0 ($(km_steps "$LOG") steps)"
	return 0
}

# slab_stuck FLAGS: true when the block's kpageflags words ("FLAGS(hex)
# PAGES FIRST-PFN", one per distinct word) show at least one page and
# every page either free (KPF_BUDDY) or an order-0 slab page (KPF_SLAB
# without KPF_COMPOUND_HEAD or _TAIL).
slab_stuck() {
	local f n rest slab=0 other=0
	while read -r f n rest; do
		[ -n "$n" ] || continue
		[[ $f =~ ^[0-9a-f]+$ && $n =~ ^[0-9]+$ ]] || return 1
		f=$((16#$f))
		if [ $f = $((0x400)) ]; then
			continue
		elif [ $f = $((0x80)) ]; then
			slab=$((slab + n))
		else
			other=$((other + n))
		fi
	done <<< "$1"
	[ $slab -gt 0 ] && [ $other = 0 ]
}

# offline_ok SERIES TAG WHAT MUST: one timed offline: within 10 s on the
# guest's clock; MUST=yes: it went offline, no attempt failed and no page
# the kernel failed to isolate was the module's; else done, or refused
# with the kernel's reason.
offline_ok() {
	local s=$1 t=$2 what=$3 must=$4 rc cs lines flags
	rc=$(km_get "$LOG" "${t}_rc") cs=$(km_get "$LOG" "${t}_cs")
	lines=$(km_lines "$LOG" "${t}_dmesg") flags=$(km_lines "$LOG" "${t}_flags")
	diag "$s $what: rc $rc in $cs cs; kernel log: $(printf '%s\n' "$lines" | grep -c 'memory offlining') offlining lines, $(printf '%s\n' "$lines" | grep -c 'failed to isolate pfn') 'failed to isolate pfn'"
	printf '%s\n' "$lines" | grep -E 'offlining|isolate' | head -3 | sed 's/^/#   /'
	if [ -n "$(km_get "$LOG" "${t}_paused_cs")" ]; then
		diag "$s $what: still running after 12 s with $(km_get "$LOG" "${t}_stuck_held") pages held and $(km_get "$LOG" "${t}_stuck_sorts") sorts so far; the sort loop paused at $(km_get "$LOG" "${t}_paused_cs") cs; the block's kpageflags words (flags pages first-pfn):"
		printf '%s\n' "$flags" | head -12 | sed 's/^/#   /'
	fi
	# A kernel-zone block can hold the kernel's own order-0 slab pages.
	# Since 7.x slab allocates frozen pages (reference count 0), which
	# isolation takes for free ones and offlining, finding nothing to
	# migrate, retries until a signal. An offline of such a block still
	# running after 10 s is the kernel's own when its kpageflags, read
	# while it was stuck, show nothing but free pages and those.
	if [ "$must" != yes ] && [ "${cs:-0}" -gt 1000 ] && [ -n "$flags" ]; then
		ok "$s: $what, still retrying after 10 s, had nothing in the block but free pages and the kernel's own order-0 slab pages" \
			slab_stuck "$flags"
		like "$lines" 'memory offlining .* failed due to signal backoff' "$s: ... and the time-out's signal ended the kernel's retries"
		return
	fi
	cmp_ok "${cs:-99999}" -le 1000 "$s: $what finished within 10 s (${cs:-none} cs on the guest's clock)"
	if [ "$must" = yes ]; then
		is "$rc/$(km_get "$LOG" "${t}_state")" 0/offline "$s: ... and went offline"
		unlike "$lines" 'memory offlining .* failed' "$s: ... without a failed attempt"
		# The kernel retries a page it failed to isolate; the module's
		# must never be one. Of the pages dumped "because: isolation
		# failed", the module's 6.x heads have a mapping that is no file's
		# (their movable operations: no aops line), its 7.x pages are
		# balloon pages (offline type). Any other page (a process's page
		# being freed as it exits) is the kernel's own retry.
		local held_failed
		held_failed=$(printf '%s\n' "$lines" | awk '
			/ page: refcount:/ { page = $0; mapped = $0 !~ / mapping:0+ /; file = 0; offline = 0 }
			/ aops:/ { file = 1 }
			/ page_type: .*(offline|balloon)/ { offline = 1 }
			/ page dumped because: isolation failed/ && page != "" && ((mapped && !file) || offline) { print page }')
		is "$held_failed" "" "$s: ... and no page the kernel failed to isolate ($(printf '%s\n' "$lines" | grep -c 'failed to isolate pfn')) was one the module holds"
	elif [ "$rc" != 0 ]; then
		like "$rc" '^E[A-Z]+$' "$s: ... refused with an error ($rc)"
		like "$lines" 'memory offlining \[mem .*\] failed' "$s: ... and the kernel's 'memory offlining ... failed' line"
	else
		ok "$s: ... and went offline" true
	fi
}

prod_test() {
	local s=$1 g
	prod_boot "$s" || return
	g() { km_get "$LOG" "$1"; }
	diag "$s memory: $(g memtotal_kb) kB; zones $(g zones); blocks of $(g block_bytes) bytes: $(g kernel_blocks) kernel-zone DIMM, $(g movable_blocks) movable DIMM, $(g vmem_blocks) virtio-mem; aging took $(g age_cs) cs"

	# Bound.
	diag "$s bound: maximum $BOUND_MAX_PERMILLE per mille; $(g bound_sorts_ok) sorts in $(g bound_sorts_cs) cs, $(g bound_samples) samples, most held sampled $(g bound_sampled_max), module's peak $(g bound_peak), max $(g bound_max_pages)"
	is "$(g max_permille_param)" 500 "$s: quarantine_max_permille is a parameter, 500 by default"
	cmp_ok "$(g bound_held)" -gt 0 "$s: the sorts held pages ($(g bound_held))"
	cmp_ok "$(g bound_samples)" -ge 10 "$s: the held pages were sampled during the sorts ($(g bound_samples) samples)"
	cmp_ok "$(g bound_sampled_max)" -le $BOUND_PAGES "$s: ... never above $BOUND_PAGES ($BOUND_MAX_PERMILLE per mille of $SLOTS pages): $(g bound_sampled_max)"
	cmp_ok "$(g bound_peak)" -le $BOUND_PAGES "$s: ... nor the peak the module saw ($(g bound_peak))"

	# Accounting, the quarantine at its largest.
	local h kr nkr fr av low
	h=$(g full_held) kr=$(($(g full_kr1) - $(g full_kr2))) nkr=$(($(g full_nkr1) - $(g full_nkr2)))
	fr=$(($(g full_free2) - $(g full_free1))) av=$(($(g full_avail2) - $(g full_avail1))) low=$(g low_kb)
	diag "$s full: $h pages held ($((h * 4)) kB); on release KReclaimable -$kr kB, node 0 -$nkr kB, MemFree +$fr kB, MemAvailable +$av kB; low watermarks $low kB"
	cmp_ok "$h" -ge 1000 "$s: the full quarantine holds pages enough to see ($h)"
	num_ok "$s: /proc/meminfo KReclaimable carried them (fell by $kr kB on release, $((h * 4)) kB held)" \
		"$kr >= 0.95 * $h * 4 - 256 && $kr <= 1.05 * $h * 4 + 256"
	num_ok "$s: node 0's KReclaimable too ($nkr kB)" "$nkr >= 0.95 * $h * 4 - 256 && $nkr <= 1.05 * $h * 4 + 256"
	num_ok "$s: ... MemFree got them back ($fr kB)" "$fr >= 0.95 * $h * 4 - 256"
	# Counted as reclaimable, they raise MemAvailable on release by at most
	# min(half of them, the low watermarks); uncounted, by all of them.
	# A quarter of them more covers what else the guest frees meanwhile.
	num_ok "$s: MemAvailable counted them: it rose by at most min(half of them, the low watermarks), plus a quarter, on release ($av kB)" \
		"$av <= ($h * 2 < $low ? $h * 2 : $low) + $h"
	is "$(g full_held2)" 0 "$s: release left nothing held"

	# Offline and unplug.
	local b kt=0 mt=0
	diag "$s offline: $(g off_held) pages held; sorts during the race: $(g race_ok) done, $(g race_busy) busy"
	cmp_ok "$(g race_ok)" -gt 0 "$s: sorts ran during the offlines ($(g race_ok))"
	for b in $(g off_kernel | tr , ' '); do
		kt=$((kt + $(g "blk_${b}_taken")))
		offline_ok "$s" "off_$b" "offline of kernel-zone block $b (the sort took $(g "blk_${b}_taken") free pages out of it)" no
	done
	for b in $(g off_movable | tr , ' '); do
		mt=$((mt + $(g "blk_${b}_taken")))
		offline_ok "$s" "off_$b" "offline of movable block $b (the sort took $(g "blk_${b}_taken") free pages out of it)" yes
	done
	cmp_ok "$kt" -gt 0 "$s: the sort took pages out of the kernel-zone DIMM ($kt)"
	cmp_ok "$mt" -gt 0 "$s: ... and out of the movable DIMM ($mt)"
	local host
	host=$(cat "$HOSTOUT" 2> /dev/null)
	diag "$s unplug: $(g unplug_held) pages held; MemTotal fell $(g unplug_drop_kb) of $(g unplug_want_kb) kB in $(g unplug_cs) cs; host: ${host:-nothing}"
	cmp_ok "$(g unplug_held)" -gt 0 "$s: the quarantine held pages when virtio-mem was unplugged ($(g unplug_held))"
	cmp_ok "$(g unplug_drop_kb)" -ge "$(g unplug_want_kb)" "$s: virtio-mem unplug completed: MemTotal fell by all it had plugged"
	cmp_ok "$(g unplug_cs)" -le 3000 "$s: ... within 30 s ($(g unplug_cs) cs; virtio-mem retries a failed unplug after 50 s)"
	like "$host" 'host_size=0( |$)' "$s: ... and QEMU reports the device's plugged size 0"

	# All-CPU operations.
	local fh mh f2h fb mb
	fh=$(g few_hits) mh=$(g many_hits) f2h=$(g few2_hits) fb=$(g few_blocks) mb=$(g many_blocks)
	diag "$s all-CPU operations (kprobes on $(g probes)): $fh for a sort taking $fb blocks, $mh for $mb blocks, $f2h for $(g few2_blocks); IPIs (CAL+TLB+RES) $(g few_ipis), $(g many_ipis), $(g few2_ipis); module's own count $(g few_module_ops), $(g many_module_ops)"
	like "$(g probes)" 'drain_all_pages' "$s: a kprobe on drain_all_pages counts per-CPU list drains"
	cmp_ok "$fb" -gt 0 "$s: the small sort took blocks ($fb)"
	cmp_ok "$mb" -ge $((10 * fb)) "$s: the large sort took ten times as many or more ($mb)"
	cmp_ok "$mh" -le $(((fh > f2h ? fh : f2h) + 16)) \
		"$s: ... with about as many all-CPU operations ($mh against $fh and $f2h; 16 more allowed for zones the small sorts did not reach)"

	# Lock holds (the module's own count).
	diag "$s lock holds: most entries in one hold $(g lock_entries_max), longest $(g lock_ns_max) ns; the dump's longest list $(g lock_longest) entries, $(g lock_free_blocks) free blocks; $(g full_blocks) blocks were held at once"
	cmp_ok "$(g lock_longest)" -gt $ZS_BATCH "$s: a free list longer than one hold's batch ($(g lock_longest) entries)"
	cmp_ok "$(g full_blocks)" -gt $ZS_BATCH "$s: more blocks held than one hold's batch ($(g full_blocks))"
	like "$(g lock_entries_max)" '^[0-9]+$' "$s: the stats give lock_hold_entries_max"
	cmp_ok "$(g lock_entries_max)" -le $ZS_BATCH "$s: ... at most $ZS_BATCH entries in one hold ($(g lock_entries_max))"

	# Huge pages.
	diag "$s 1 GiB pages: $(g huge_q1_got) with $(g huge_q1_held) pages held ($(g huge_giant_taken) taken from the 1 GiB DIMM's block $(g huge_giant_block)), $(g huge_o1_got) with the quarantine off"
	diag "$s 2 MiB pages: $(g huge_q2_got) more than a pool of $(g huge_pool) with $(g huge_q2_held) pages held ($(($(g huge_q2_held) / 512)) huge pages' worth; $(g huge_memfree_kb) kB free), $(g huge_o2_got) off"
	is "$(g huge_1g_present)" 1 "$s: the kernel offers 1 GiB pages"
	cmp_ok "$(g huge_o1_got)" -ge 1 "$s: the guest can get a 1 GiB page with the quarantine off"
	cmp_ok "$(g huge_q1_held)" -gt 0 "$s: the quarantine held pages before asking for 1 GiB pages"
	cmp_ok "$(g huge_q1_got)" -ge "$(g huge_o1_got)" "$s: ... and nr_hugepages reached as many ($(g huge_q1_got))"
	# On 6.x nothing larger than a pageblock is held, and what the pool
	# leaves free is mostly whole 4 MiB blocks: there the sort holds a
	# few hundred pages (156 seen on 6.12), on 7.x tens of thousands.
	# 128 pages are at least a few blocks inside pageblocks the 2 MiB
	# pages asked for next must get back.
	held=$(g huge_q2_held) got=$(g huge_q2_got)
	[ "$(g huge_q2b_held)" -gt "$held" ] 2> /dev/null && held=$(g huge_q2b_held)
	[ "$(g huge_q2b_got)" -gt "$got" ] 2> /dev/null && got=$(g huge_q2b_got)
	cmp_ok "$held" -ge 128 "$s: the quarantine held pages inside 2 MiB blocks before asking for them ($(g huge_q2_held), then $(g huge_q2b_held))"
	# The attempts on, before and after the one off, against it: the
	# better of the two (a later attempt finds memory compacted by the
	# earlier ones, 209 before against 264 after once on 6.12).
	cmp_ok "$got" -ge $(($(g huge_o2_got) - 2)) \
		"$s: ... and nr_hugepages reached what it reaches off, within 2 ($(g huge_q2_got) and $(g huge_q2b_got) vs $(g huge_o2_got))"
	is "$(g huge_q2_held_after)/$(g huge_q2b_held_after)" 0/0 "$s: ... and nothing was left held when they were asked for"

	is "$(km_dmesg_bad "$LOG")" "" "$s: no WARNING, BUG, oops, list corruption, lockup or stall in dmesg"
}

# One kernel per way of holding a block: 6.12 (movable operations, as
# 6.1) and 7.x (balloon pages); ZS_PROD_SERIES="6.1 6.12 7" runs all.
for series in ${ZS_PROD_SERIES:-6.12 7}; do
	prod_test "$series"
done
done_testing
