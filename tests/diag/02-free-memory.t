#!/bin/bash
# zonesort status: free memory over cache slots from /proc/kpageflags. The
# free blocks it reconstructs must match /proc/buddyinfo order by order.
#
# Free memory changes all the time (other processes, other tests), so the
# comparison is made on a quiet moment: buddyinfo is read just before and
# just after status; when both reads are equal, nothing in the buddy lists
# changed in between, or changed and changed back (a huge page allocated
# and freed during the scan, seen in a CI run), so a quiet moment whose
# scan differs is tried again: status must match exactly at the last quiet
# moment of up to 15 tries. If no moment is quiet, each order must lie
# within the change seen between the two reads plus 2% (and 4 blocks),
# which still catches a wrong decoding (orders off by one move thousands
# of blocks) but tolerates churn. There is no memory-side cache on this
# machine: --cache-size/--ways assume one, as an administrator would.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq runuser awk
need_file "$ZS_ZONESORT" "zonesort command"
[ "$(id -u)" = 0 ] || { ok "runs as root (kpageflags is root only)" false; done_testing; exit 1; }

T=$(mktemp -d /tmp/zs-diag02.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
ST="statedir=$T/state"
Z=$ZS_ZONESORT

# bi_json: buddyinfo as {"Normal":[...],...} for node 0.
bi_json() {
	awk '$1 == "Node" && $2 == "0," { printf "%s\"%s\":[", (n++ ? "," : "{"), $4;
		for (i = 5; i <= NF; i++) printf "%s%s", (i > 5 ? "," : ""), $i; printf "]" }
		END { print "}" }' /proc/buddyinfo
}
st_json() { jq -c '[.nodes[] | select(.node == 0) | .free_slots.zones[] | {(.zone): .orders}] | add' <<< "$1"; }

quiet=0
for try in $(seq 15); do
	before=$(bi_json)
	out=$("$Z" status --cache-size 64M --ways 1 --json "$ST")
	after=$(bi_json)
	if [ "$before" = "$after" ]; then
		quiet=1 quiet_before=$before quiet_out=$out
		[ "$(st_json "$out")" = "$before" ] && break
	fi
done
if [ "$quiet" = 1 ]; then
	before=$quiet_before after=$quiet_before out=$quiet_out
fi
recon=$(st_json "$out")
# Zones whose buddyinfo line did not change between the reads must match
# exactly even on a busy machine (DMA and DMA32 rarely change).
same=$(jq -n -c --argjson r "$recon" --argjson b "$before" --argjson a "$after" '
	[$b | keys[] | select($b[.] == $a[.]) | select($r[.] != $b[.])]')
quiet_zones=$(jq -n -r --argjson b "$before" --argjson a "$after" '[$b | keys[] | select($b[.] == $a[.])] | join(" ")')
is "$same" "[]" "zones unchanged during the scan match buddyinfo exactly (${quiet_zones:-none})"
if [ "$quiet" = 1 ]; then
	diag "quiet moment found on try $try"
	is "$recon" "$before" "free blocks per zone and order match /proc/buddyinfo exactly"
else
	diag "no quiet moment in 15 tries; comparing within the churn"
	within=$(jq -n --argjson r "$recon" --argjson b "$before" --argjson a "$after" '
		[$r | keys[] as $z | range($r[$z] | length) as $o |
		 ($b[$z][$o]) as $x | ($a[$z][$o]) as $y | ($r[$z][$o]) as $v |
		 ([$x, $y] | min) as $lo | ([$x, $y] | max) as $hi |
		 ($v >= $lo - 0.02 * $hi - 4 and $v <= $hi + 0.02 * $hi + 4)] | all')
	is "$within" true "free blocks per zone and order lie within buddyinfo's churn"
	diag "status:    $recon" "before:    $before" "after:     $after"
fi
# status reads buddyinfo once during its scan: equal to ours at a quiet
# moment, else within the churn seen around it.
status_bi=$(jq -c '[.nodes[0].free_slots.zones[] | {key: .zone, value: .buddyinfo}] | from_entries' <<< "$out")
if [ "$quiet" = 1 ]; then
	is "$status_bi" "$(jq -c --argjson s "$status_bi" 'with_entries(select(.key as $k | $s | has($k)))' <<< "$before")" \
		"status also shows buddyinfo's counts beside its own"
else
	within=$(jq -n --argjson r "$status_bi" --argjson b "$before" --argjson a "$after" '
		[$r | keys[] as $z | range($r[$z] | length) as $o |
		 ($b[$z][$o]) as $x | ($a[$z][$o]) as $y | ($r[$z][$o]) as $v |
		 ([$x, $y] | min) as $lo | ([$x, $y] | max) as $hi |
		 ($v >= $lo - 0.02 * $hi - 4 and $v <= $hi + 0.02 * $hi + 4)] | all')
	is "$within" true "status also shows buddyinfo's counts beside its own (within the churn)"
fi
fs=$(jq -c '.nodes[0].free_slots' <<< "$out")
is "$(jq .flagged <<< "$fs")" '"every page"' "this kernel flags every page of a free block (KPF_BUDDY)"
free=$(jq .free_pages <<< "$fs")
is "$free" "$(jq '[.zones[].free_pages] | add' <<< "$fs")" "free pages = the sum over zones"
is "$(jq '[.zones[] | .orders | to_entries[] | .value * pow(2; .key)] | add' <<< "$fs")" "$free" \
	"free pages = the blocks times their sizes"
num_ok "free pages near MemFree's share of node 0 (status $free pages)" \
	"$free * 4 > $(awk '/MemFree/ { print $4 }' /sys/devices/system/node/node0/meminfo) * 0.8"

# --- the slot balance and the conflict potential ------------------------------------
is "$(jq -c '[.cache_size, .ways, .slots, .page_size, .source]' <<< "$fs")" '[67108864,1,16384,4096,"option"]' \
	"geometry: 64 MiB direct-mapped = 16384 slots of 4 KiB, from the options"
num_ok "mean free pages per slot = free pages / slots" \
	"($(jq .per_slot.mean <<< "$fs") - $free / 16384)^2 < 0.01"
is "$(jq '.per_slot.min <= .per_slot.mean and .per_slot.mean <= .per_slot.max' <<< "$fs")" true "min <= mean <= max"
is "$(jq -c '[.allocation_fraction, .allocation_pages, .modelled_pages]' <<< "$fs")" '[0.5,8192,8192]' \
	"default allocation: 50% of the cache's 16384 pages"
is "$(jq '.conflict_potential >= 0 and .conflict_potential <= 1' <<< "$fs")" true "the conflict potential is a fraction"
num_ok "random placement of 8192 pages over 16384 slots: 1 - (1 - 1/16384)^8191 ($(jq .random_fraction <<< "$fs"))" \
	"($(jq .random_fraction <<< "$fs") - (1 - exp(8191 * log(1 - 1/16384))))^2 < 1e-12"
is "$(jq .draws <<< "$fs")" 16 "blocks of the partly used list are drawn at random, 16 times"
# Unsorted free lists: the buddy model lands near random placement or worse,
# never at 0 unless the lists happen to be perfectly spread.
diag "conflict potential $(jq .conflict_potential <<< "$fs"), random $(jq .random_fraction <<< "$fs")"

for f in 25% 0.1 2; do
	o=$("$Z" status --cache-size 64M --ways 1 --fraction "$f" --json "$ST")
	is "$(jq .nodes[0].free_slots.allocation_pages <<< "$o")" \
	   "$(awk -v f="$f" 'BEGIN { p = (f ~ /%$/) ? substr(f, 1, length(f) - 1) / 100 : f; printf "%.0f", p * 16384 }')" \
	   "--fraction $f sets the pages modelled"
done

# --- policy words instead of options ------------------------------------------------
o=$("$Z" status --json "$ST" cache_size=64M ways=1)
is "$(jq -c '.nodes[0].free_slots | [.slots, .ways, .source]' <<< "$o")" '[16384,1,"policy"]' \
	"cache_size= and ways= policy words work as the options do"

# --- histogram ------------------------------------------------------------------------
o=$("$Z" status --cache-size 64M --ways 1 --histogram --json "$ST")
is "$(jq '.nodes[0].free_slots.histogram.free_pages | length' <<< "$o")" 32 "--histogram: 32 bins"
is "$(jq '.nodes[0].free_slots.histogram.slots_per_bin' <<< "$o")" 512 "of 512 slots each"
is "$(jq '.nodes[0].free_slots | (.histogram.free_pages | add) == .free_pages' <<< "$o")" true \
	"the bins add up to the free pages"
h=$("$Z" status --cache-size 64M --ways 1 --histogram "$ST")
like "$h" "free pages per slot, 32 bins of 512 slots" "human histogram header"
is "$(grep -cE '^    [0-9]+-[0-9]+ +[0-9.]+ #*$' <<< "$h")" 32 "32 histogram rows"
like "$h" "  free memory over cache slots: cache 64 MiB direct-mapped \(option\), 16384 slots of 1 page; [0-9.]+ [GM]iB free" \
	"human: the cache and the free memory"
like "$h" "  conflict potential: [0-9.]+% of the next 8192 pages \(50% of the cache\) would share a slot beyond its ways; random placement 39.3%" \
	"human: the conflict potential line"
like "$h" "  free blocks by order \(kpageflags\): .*Normal [0-9,]+;" "human: blocks by order"
nohist=$("$Z" status --cache-size 64M --ways 1 "$ST")
unlike "$nohist" "bins of" "no histogram unless asked"

# --- what status showed before stays as it was ------------------------------------------
plain=$("$Z" status --json "$ST")
is "$(jq -c 'keys' <<< "$plain")" '["degraded","memory_side_caches","module","nodes","sorter","targets","version","why"]' \
	"top-level JSON keys: the old ones plus degraded"
is "$(jq -c '.nodes[0] | keys' <<< "$plain")" \
	'["cache_size","detail","free","free_slots","memory","node","quarantine","target","works"]' \
	"node keys: the old ones plus free_slots and quarantine"
is "$(jq -c '.nodes[0].free_slots' <<< "$plain")" null \
	"no cache here and none assumed: free_slots is null"
human=$("$Z" status "$ST")
like "$human" "^memory-side caches: none detected" "human status still starts with the caches"
like "$human" "node 0: [0-9.]+ GiB memory, [0-9.]+ GiB free, cache none, " "the node line is unchanged"
unlike "$human" "free memory over cache slots" "no slot section without a cache"

# --- not root --------------------------------------------------------------------------------
# A state directory nobody may trust: its own (one others can write is refused).
mkdir -m 755 "$T/nobody" && chown nobody "$T/nobody"
o=$(runuser -u nobody -- "$Z" status --cache-size 64M --ways 1 --json "statedir=$T/nobody" 2>&1)
like "$(jq -r '.nodes[0].free_slots.error' <<< "$o")" "kpageflags.*root is needed" \
	"as nobody: free_slots says root is needed to read page flags"
o=$(runuser -u nobody -- "$Z" status --cache-size 64M --ways 1 "statedir=$T/nobody" 2>&1)
like "$o" "free memory over cache slots: unknown: cannot open /proc/kpageflags.*root is needed" \
	"as nobody, human: the same reason"

# --- speed ------------------------------------------------------------------------------------
t0=$(date +%s.%N)
"$Z" status --cache-size 64M --ways 1 "$ST" > /dev/null
t1=$(date +%s.%N)
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
diag "zonesort status --cache-size 64M --ways 1: $secs s over $(awk '/spanned/ { s += $2 } END { print s }' /proc/zoneinfo) pfns"
num_ok "status with the slot section takes under 1.5 s here ($secs s; goal 1 s, the machine is shared)" "$secs < 1.5"
done_testing
