#!/bin/bash
# The slots a running job occupies (kmod/zonesort_policy.c, zsp_set_seed)
# on the simulated buddy allocator, without the quarantine: 12 aged states
# of 1 GiB with a 64 MiB cache, 0.3% or 10% long-lived pages, 2% or 25%
# of the slots the job's. The occupied slots only break ties: the
# half-cache allocation right after the sort collides as much as without
# them, and lands on them no more often; where the allocation ends in a
# list it takes part of (many small blocks), far less often. The module
# in QEMU (testbed/guest-main.sh) adds the quarantine, which takes what
# would land there.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need gcc awk

km_policysim || { done_testing; exit 1; }
sim=$KM_WORK/policysim

fails "a share of the slots above 1000 per mille is refused" "$sim" occupied 18 14 3 1001 1
# f LINE KIND FIELD: one figure of a mean line.
f() { printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2://p" | tr ',' '\n' | sed -n "s/^$3=//p"; }
for cfg in "3 20" "3 250" "100 20" "100 250"; do
	set -- $cfg
	out=$("$sim" occupied 18 14 "$1" "$2" $(seq 1 12))
	ok "policysim occupied $cfg runs" test $? -eq 0
	mean=$(grep '^mean ' <<< "$out")
	diag "$mean"
	tag="$(awk -v h="$1" 'BEGIN { print h / 10 }')% long-lived pages, $(awk -v o="$2" 'BEGIN { print o / 10 }')% of the slots occupied"
	num_ok "$tag: the allocation collides as much as without them, within half a point ($(f "$mean" seeded conflict) vs $(f "$mean" plain conflict))" \
		"$(f "$mean" seeded conflict) <= $(f "$mean" plain conflict) + 0.005"
	num_ok "$tag: ... and lands on them no more often ($(f "$mean" seeded on_occupied) vs $(f "$mean" plain on_occupied))" \
		"$(f "$mean" seeded on_occupied) <= $(f "$mean" plain on_occupied)"
	[ "$1" = 100 ] && num_ok "$tag: ... a quarter as often at most, its lists many small blocks ($(f "$mean" seeded on_occupied) vs $(f "$mean" plain on_occupied))" \
		"$(f "$mean" seeded on_occupied) <= $(f "$mean" plain on_occupied) / 4"
done
done_testing
