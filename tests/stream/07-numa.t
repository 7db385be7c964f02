#!/bin/bash
# --numa measures each NUMA node with memory on its own, with the arrays
# bound to the node (seen in /proc/PID/numa_maps) and the threads on the
# node's CPUs (--numa-cpus=local, the default) or on all allowed CPUs.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq taskset
source "$(dirname "$0")/probe.sh"
jv() { printf '%s' "$out" | jq -c "$1"; }
expand() { tr ',' '\n' <<<"$1" | awk -F- 'NF { for (i = $1; i <= ($2 == "" ? $1 : $2); i++) print i }' | sort -n | tr '\n' ' '; }
json_list() { printf '[%s]' "$(tr -s ' ' ',' <<<"$1" | sed 's/^,//; s/,$//')"; }

nodes=$(expand "$(cat /sys/devices/system/node/has_memory)")
nnodes=$(wc -w <<<"$nodes")
allowed=$(expand "$(awk '/^Cpus_allowed_list:/ { print $2 }' /proc/self/status)")
diag "NUMA nodes with memory: $nodes"

run "$S" --json --numa --size 96M --repeats 3
is "$rc" 0 "--numa: exit 0"
is "$(jv '.numa | length')" "$nnodes" "--numa: one entry per node with memory ($nnodes)"
is "$(jv '[.numa[].node]')" "$(json_list "$nodes")" "--numa: the entries name the nodes"
for n in $nodes; do
	e=".numa[] | select(.node == $n)"
	local_cpus=$(expand "$(cat /sys/devices/system/node/node$n/cpulist)")
	mine=$(for c in $local_cpus; do [[ " $allowed " == *" $c "* ]] && echo "$c"; done | tr '\n' ' ')
	[ -z "$mine" ] && mine=$allowed
	is "$(jv "$e | .cpus")" "$(json_list "$mine")" "node $n: threads on its own allowed CPUs"
	is "$(jv "$e | .threads")" "$(wc -w <<<"$mine")" "node $n: one thread per CPU (no SMT here)"
	is "$(jv "$e | .size_bytes")" "$(jv .size_bytes)" "node $n: same footprint"
	num_ok "node $n: a triad bandwidth" "$(jv "$e | .kernels.triad.best_gbs") > 0"
	is "$(jv "$e | .kernels.triad | keys")" '["best_gbs","best_s","median_gbs","min_gbs"]' "node $n: best, median, min"
	is "$(jv "$e | .validation")" '"passed"' "node $n: validation passed"
done
num_ok "the whole-node result is still there" "$(jv .kernels.triad.best_gbs) > 0"
run "$S" --numa --size 96M --repeats 3
like "$out" "NUMA node $(awk '{ print $1 }' <<<"$nodes"): " "the table shows each node"

run "$S" --json --numa --numa-cpus all --size 96M --repeats 3 --kernels all
is "$rc" 0 "--numa-cpus all: exit 0"
is "$(jv '[.numa[].cpus] | unique')" "[$(json_list "$allowed")]" "--numa-cpus all: every node measured from every allowed CPU"
is "$(jv '[.numa[].kernels | keys | length] | unique')" "[4]" "--kernels all applies to each node"

last=$(awk '{ print $NF }' <<<"$allowed")
run taskset -c "$last" "$S" --json --numa --size 96M --repeats 3
is "$(jv '[.numa[].cpus] | unique')" "[[$last]]" "taskset -c $last --numa: the node's threads stay on CPU $last"

# The arrays of a per-node run are bound to the node (MPOL_BIND).
first=$(awk '{ print $1 }' <<<"$nodes")
"$S" --json --numa --size 128M --repeats 2000 > /dev/null 2>&1 &
bg=$!
bound() { grep -q " bind:$first .*N$first=" "/proc/$bg/numa_maps" 2>/dev/null; }
wait_for 60 bound
ok "node $first's arrays are bound to it (numa_maps: bind:$first)" bound
kill "$bg"; wait "$bg" 2>/dev/null; bg=

run "$S" --json --size 96M --repeats 2
is "$(jv .numa)" "[]" "without --numa the list is empty"
done_testing
