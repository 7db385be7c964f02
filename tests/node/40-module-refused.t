#!/bin/bash
# A cache node whose kernel refuses the project's module for its
# signature: Debian's 6.1 kernel in a QEMU guest (TCG) with a 256 MiB
# direct-mapped memory-side cache in HMAT, booted once with
# module.sig_enforce=1 (the kernel answers an unsigned module with
# EKEYREJECTED, "Key was rejected by service", as RHEL's kernels do under
# Secure Boot) and once with lockdown=integrity (EPERM, as Debian's do
# under Secure Boot). The module built here is unsigned, as a DKMS build
# without an enrolled key is. The refusals are the kernel's own; what
# cannot be had here is Secure Boot itself (UEFI firmware, shim and an
# enrolled MOK), which only changes how these settings get switched on.
#
# With "sorter=auto modprobe=zonesort prometheus_dir=..." jobs run, the
# node is degraded and compacted in the job prolog in place of a sort,
# and zonesort status, zonesort sort, the plugin's summary line and the
# metrics name the refusal and the degraded state; the kernel's
# log (its own words) confirms it, and the module is not loaded. A third
# boot without either setting is the control: the same module file
# loads on the same kernel.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
. "$(dirname "$0")/../../testbed/node.sh"
need qemu-system-x86_64 busybox cpio gcc make depmod modprobe modinfo xz

nd_setup 6.1
kver=$ND_KVER
is "$(modinfo -F signer "$ND_KO")" "" "the module under test is unsigned (as DKMS builds it without a key)"

# boot MODE APPEND: one guest; LOG is its serial console.
boot() {
	LOG=$ND_WORK/refused-$1-$kver.log
	ND_APPEND=$2 nd_boot "$kver" "$LOG" 256M 1G 2 "${ZS_NODE_LIMIT_S:-600}" "$ZS_SRCDIR/tests/node/guest-refused.sh" \
		ZS_REFUSED_MODE="$1" \
		"ZS_PLUGSTACK=sorter=auto modprobe=zonesort prometheus_dir=/tmp/node/prom min_period=1"
	ok "$1 guest ran to its end marker (log $LOG)" grep -q '^ZSTEST_END rc=0' <(tr -d '\r' < "$LOG") || {
		tr -d '\r' < "$LOG" | tail -30 | sed 's/^/# /'
		return 1
	}
	is "$(tr -d '\r' < "$LOG" | grep -o 'ZSTEST step_[a-z_0-9]*=[0-9]*' | grep -v '=0$')" "" "$1: every guest step exited 0"
}

# refused MODE APPEND SETTING REASON MODPROBE_SAYS KERNEL_LOG_SAYS: one guest
# whose kernel refuses the module, and every place that must name it.
refused() {
	local mode=$1 setting=$3 reason=$4 says=$5 v
	boot "$mode" "$2" || return
	is "$(km_get "$LOG" "${setting%%=*}")" "${setting#*=}" "$mode: the guest kernel runs with $setting"
	v=$(km_lines "$LOG" status_before)
	like "$v" "module zonesort: /[^ ]*/zonesort\\.ko, unsigned; kernel: .*signatures enforced" \
		"$mode: zonesort status names the module file, unsigned, and the enforcement"
	like "$v" "a load would be refused: $reason: modprobe zonesort refused by the kernel: $reason" \
		"$mode: ... and the refusal a load will meet, by name, before any load"
	like "$v" "mokutil --import.*zonesort\\(8\\)" "$mode: ... with what to do"
	is "$(km_lines "$LOG" status_json | grep -v '^rc=' | jq -r '.module.would_be_refused + " " + (.module.signatures_enforced | tostring)')" \
		"$reason true" "$mode: zonesort status --json: module.would_be_refused $reason, signatures enforced"
	v=$(km_lines "$LOG" sort_modprobe)
	like "$v" "zonesort sort: degraded: modprobe zonesort refused by the kernel: $reason .*sorting with compact instead" \
		"$mode: zonesort sort modprobe=zonesort says the node is degraded, why, and that it compacts instead"
	like "$v" "backend compact" "$mode: ... and sorts"
	like "$v" "rc=0" "$mode: ... exit 0"
	like "$(km_lines "$LOG" status_modprobe)" \
		"sorter: compact \\(degraded: modprobe zonesort refused by the kernel: $reason \\($says" \
		"$mode: zonesort status modprobe=zonesort: the sorter line names the refusal and the kernel's words"
	is "$(km_get "$LOG" job_rc)" 0 "$mode: a job with --zonesort=on runs and exits 0"
	is "$(km_lines "$LOG" job_stderr | grep -v '^rc=')" "" "$mode: ... with a clean stderr"
	v=$(km_lines "$LOG" summary)
	like "$v" "prolog on [^ ]*: zonesort=on, 0 sorts, 1 compacted in place of a sort, 0 left unsorted, .* 0 failed, [0-9.]+ s, backend compact \\(module refused by the kernel: $reason\\), degraded: modprobe zonesort refused by the kernel: $reason" \
		"$mode: the plugin's summary line: compacted in place of a sort, module refused by name, degraded"
	like "$(km_lines "$LOG" metrics)" "zonesort_module_refused\\{node=\"[^\"]+\",reason=\"$reason\"\\} 1" \
		"$mode: the metrics: zonesort_module_refused{reason=\"$reason\"} 1"
	like "$(km_lines "$LOG" metrics)" "zonesort_sorter_up\\{node=\"[^\"]+\",backend=\"compact\"\\} 1" \
		"$mode: ... next to the sorter used instead"
	like "$(km_lines "$LOG" metrics)" "zonesort_sorter_degraded\\{node=\"[^\"]+\"\\} 1" \
		"$mode: ... and zonesort_sorter_degraded 1"
	like "$(km_lines "$LOG" metrics)" "zonesort_sorts_total\\{node=\"[^\"]+\",outcome=\"sorted\"\\} 0" \
		"$mode: ... with no compaction counted as a sort"
	is "$(km_get "$LOG" module_loaded_by_sort) $(km_get "$LOG" module_loaded)" "no no" "$mode: the module is not loaded"
	like "$(km_lines "$LOG" dmesg_all)" "$6" "$mode: the kernel's log has its own refusal"
	is "$(km_dmesg_bad "$LOG")" "" "$mode: no WARNING, BUG, oops or corruption in dmesg"
}

refused sig_enforce module.sig_enforce=1 sig_enforce=Y signature "Key was rejected by service" \
	"Loading of unsigned module is rejected"
refused lockdown lockdown=integrity lockdown=integrity lockdown "Operation not permitted" \
	"Lockdown: modprobe: unsigned module loading is restricted"

# Control: neither setting; the same module loads on the same kernel.
if boot control ""; then
	is "$(km_get "$LOG" sig_enforce) $(km_get "$LOG" lockdown)" "N none" "control: no enforcement, no lockdown"
	like "$(km_lines "$LOG" status_before)" "module zonesort: .*unsigned; kernel: .*signatures not enforced" \
		"control: zonesort status: unsigned, not enforced"
	unlike "$(km_lines "$LOG" status_before)" "would be refused" "control: ... and no refusal foretold"
	like "$(km_lines "$LOG" sort_modprobe)" "backend kernel" "control: zonesort sort modprobe=zonesort loads it and sorts with it"
	unlike "$(km_lines "$LOG" sort_modprobe)" "refused" "control: ... naming no refusal"
	is "$(km_get "$LOG" module_loaded_by_sort)" yes "control: the module is loaded"
	like "$(km_lines "$LOG" status_modprobe)" "sorter: kernel" "control: zonesort status: sorter kernel"
fi
done_testing
