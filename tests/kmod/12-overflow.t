#!/bin/bash
# The overflow orders of kmod/zonesort_policy.c (the module's parameter
# overflow=pile|spread), compiled in user space: where pages beyond the
# cache's capacity go. Small cases worked out by hand (policysim order),
# then a job's start-up churn on a simulated buddy allocator (policysim
# churn): the sort, chunks of 1-512 pages taken up to LEVEL x the cache,
# a random half of them freed, a buffer of half the cache taken. The
# simulator stands in for a node's free lists (bench/churn-effect measures
# real ones in QEMU).
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need gcc awk

km_policysim || { done_testing; exit 1; }
sim=$KM_WORK/policysim

# order CASE COLORS WAYS ORDER PFNS PILE SPREAD: both orders of one list.
order() {
	local what=$1 colors=$2 ways=$3 ord=$4 pfns=$5
	is "$("$sim" order "$colors" "$ways" pile "$ord" $pfns)" "$6" "$what: pile"
	is "$("$sim" order "$colors" "$ways" spread "$ord" $pfns)" "$7" "$what: spread"
}
# 4 slots, direct-mapped: one lap 0 1 2 3, then slot 0 has three more
# pages and slot 1 one. Pile stacks slot 0's (each adds one conflicting
# page, where a new slot adds two); spread alternates, least load first.
order "4 slots, 1 way, order 0" 4 1 0 "0 1 2 3 4 8 12 5" "0 1 2 3 4 8 12 5" "0 1 2 3 4 5 8 12"
# 2 slots, 2 ways: both slots filled to 2 first, the same in both orders.
order "2 slots, 2 ways, order 0" 2 2 0 "6 4 2 0 7 5 3 1" "6 7 4 5 2 0 3 1" "6 7 4 5 2 3 0 1"
# Order-1 blocks over 4 slots: blocks 0, 4, 8, 12 cover slots 0-1, blocks
# 2 and 6 slots 2-3.
order "4 slots, 1 way, order 1" 4 1 1 "0 2 4 6 8 12" "0 2 4 8 12 6" "0 2 4 6 8 12"
# Within capacity nothing differs: one lap of 8 slots, each slot's load
# 0, the lower slot first among equals.
order "8 slots, one lap" 8 1 0 "5 2 7 0 3 6 1 4" "0 1 2 3 4 5 6 7" "0 1 2 3 4 5 6 7"
fails "a name other than pile or spread is refused" "$sim" order 4 1 piles 0 1 2
# Slots a running job occupies (--occupied) only break ties: in one lap
# the unoccupied slots first; beyond it, between two blocks that add as
# many conflicts, the one on an unoccupied slot first.
order "4 slots, slots 0 and 1 occupied" 4 1 0 "0 1 2 3 --occupied 0,1" "2 3 0 1" "2 3 0 1"
order "4 slots, slot 0 occupied, a second lap" 4 1 0 "0 1 2 3 4 5 --occupied 0" "1 2 3 0 5 4" "1 2 3 0 5 4"
order "... the same without it" 4 1 0 "0 1 2 3 4 5" "0 1 2 3 4 5" "0 1 2 3 4 5"
fails "an occupied slot past the last is refused" "$sim" order 4 1 pile 0 0 1 --occupied 4

# churn LEVEL HOLES: the mean line of 12 seeds, 1 GiB of 4 KiB pages and
# a 64 MiB cache.
declare -A mean
for cfg in "1000 3" "1000 100" "4000 3" "4000 100"; do
	set -- $cfg
	out=$("$sim" churn 18 14 "$1" "$2" $(seq 1 12))
	ok "policysim churn $cfg runs" test $? -eq 0
	mean[$cfg]=$(grep '^mean ' <<< "$out")
	diag "${mean[$cfg]}"
done
# f CFG ORDER FIELD: one figure of a mean line.
f() { printf '%s\n' "${mean[$1]}" | tr ' ' '\n' | sed -n "s/^$2://p" | tr ',' '\n' | sed -n "s/^$3=//p"; }
for cfg in "1000 3" "1000 100" "4000 3" "4000 100"; do
	set -- $cfg
	tag="churn $(awk -v l="$1" 'BEGIN { print l / 1000 }')x the cache, $(awk -v h="$2" 'BEGIN { print h / 10 }')% long-lived pages"
	# Pile hands out pages of few slots in a row beyond the first lap;
	# spread does not.
	num_ok "$tag: spread's churn chunks collide within themselves less than pile's ($(f "$cfg" spread chunkself) < $(f "$cfg" pile chunkself))" \
		"$(f "$cfg" spread chunkself) < $(f "$cfg" pile chunkself)"
	num_ok "$tag: spread's chunks collide within themselves no more than unsorted ones ($(f "$cfg" spread chunkself) <= $(f "$cfg" none chunkself))" \
		"$(f "$cfg" spread chunkself) <= $(f "$cfg" none chunkself)"
	# After the churn: spread no worse than unsorted lists by more than
	# the seeds' spread; after 1x, better than pile.
	num_ok "$tag: spread's buffer within 2 points of unsorted or below ($(f "$cfg" spread buffer) vs $(f "$cfg" none buffer))" \
		"$(f "$cfg" spread buffer) <= $(f "$cfg" none buffer) + 0.02"
	[ "$1" = 1000 ] && num_ok "$tag: spread's buffer below pile's ($(f "$cfg" spread buffer) < $(f "$cfg" pile buffer))" \
		"$(f "$cfg" spread buffer) < $(f "$cfg" pile buffer)"
done
# The price of spread: a job of twice the cache right after the sort.
for cfg in "1000 3" "1000 100"; do
	tag="a job of twice the cache, $(awk -v h="${cfg#* }" 'BEGIN { print h / 10 }')% long-lived pages"
	num_ok "$tag: pile keeps more of its pages alone in their slot than unsorted lists ($(f "$cfg" pile big2x_alone) > $(f "$cfg" none big2x_alone) + 0.05)" \
		"$(f "$cfg" pile big2x_alone) > $(f "$cfg" none big2x_alone) + 0.05"
	num_ok "$tag: spread keeps fewer alone than pile ($(f "$cfg" spread big2x_alone) < $(f "$cfg" pile big2x_alone))" \
		"$(f "$cfg" spread big2x_alone) < $(f "$cfg" pile big2x_alone)"
done
done_testing
