#!/bin/bash
# The ordering policy of zonesort.ko (kmod/zonesort_policy.c, compiled
# here in user space) against other orderings, on a simulated buddy
# allocator aged into fragmented states (tests/kmod/policysim.c). For each
# state the next allocation of half and of all of the cache's pages goes
# through the allocator and we count the pages sharing a cache slot with
# another page of it. The simulator stands in for a real node's free lists,
# which only a kernel has (the QEMU tests measure those).
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
. "$(dirname "$0")/../../testbed/vm.sh"
need gcc awk

km_policysim || { done_testing; exit 1; }
sim=$KM_WORK/policysim


seeds=$(seq 1 12)
# pages_log2 slots ways holes_permille: 1 GiB of 4 KiB pages; caches of 64
# and 256 MiB (slots as log2); 384 MiB (98304 slots: three times a power
# of two, as Optane's 96, 192 and 384 GiB) and 96 MiB 4-way (6144 slots);
# an odd number of slots (65537: blocks start anywhere in slot space);
# direct-mapped and 4-way; from no long-lived pages left behind to 10% of
# them.
for cfg in "18 14 1 0" "18 16 1 0" "18 14 1 3" "18 16 1 3" "18 14 1 100" "18 16 1 100" "18 14 4 10" \
	"18 98304 1 0" "18 98304 1 3" "18 6144 4 10" "18 65537 1 3"; do
	set -- $cfg
	out=$("$sim" "$@" $seeds) || { ok "policysim $cfg runs" false; continue; }
	for alloc in half full; do
		mean=$(printf '%s\n' "$out" | grep "^mean .* alloc=$alloc ")
		ours=$(km_field "$mean" ours)
		bound=$(km_field "$mean" bound)
		best_other=$(for p in none address random buckets4; do km_field "$mean" $p; done | sort -g | head -1)
		diag "$mean"
		slots=$2
		[ "$slots" -lt 64 ] && slots=2^$slots
		tag="slots=$slots ways=$3 holes=$4/1000 $alloc-cache"
		num_ok "$tag: ours ($ours) beats or ties every other ordering (best $best_other)" \
			"$ours <= $best_other + 1e-9"
		num_ok "$tag: ours ($ours) within 5 points of the lower bound ($bound)" "$ours <= $bound + 0.05"
		# Per seed: never worse than the four-bucket scheme or address order.
		worse=$(printf '%s\n' "$out" | grep "^seed=.* alloc=$alloc " | while read -r l; do
			o=$(km_field "$l" ours); b=$(km_field "$l" buckets4); a=$(km_field "$l" address)
			awk -v o="$o" -v b="$b" -v a="$a" 'BEGIN { exit !(o > b + 0.005 || o > a + 0.005) }' && echo x
		done | wc -l)
		is "$worse" 0 "$tag: no seed where ours is worse than buckets4 or address order by 0.5 points"
		if [ "$alloc" = half ]; then
			none=$(km_field "$mean" none)
			# A 4-way cache absorbs most random overlaps; direct-mapped ones do not.
			min=0.2
			[ "$3" -gt 1 ] && min=0.05
			num_ok "$tag: aging leaves unsorted lists far from ideal (none $none >= $min)" "$none >= $min"
			zero=$(printf '%s\n' "$out" | grep "^seed=.* alloc=half " | awk '{
				for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
				if (v["bound"] == 0 && v["ours"] > 0.01) bad++ } END { print bad + 0 }')
			is "$zero" 0 "$tag: wherever a collision-free half-cache allocation exists, ours is <= 1%"
		fi
	done
done

# The random-placement expectation for comparison: n pages into S slots,
# a page collides with probability 1 - (1 - 1/S)^(n-1).
exp_half=$(awk 'BEGIN { S = 65536; n = S / 2; printf "%.4f", 1 - exp((n - 1) * log(1 - 1 / S)) }')
out=$("$sim" 18 16 1 100 $seeds | grep '^mean .* alloc=half ')
num_ok "shuffled lists collide like random placement ($(km_field "$out" random) vs $exp_half expected)" \
	"$(km_field "$out" random) > $exp_half - 0.1 && $(km_field "$out" random) < $exp_half + 0.05"
done_testing
