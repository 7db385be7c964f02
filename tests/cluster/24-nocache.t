#!/bin/bash
# One job on two nodes with the site defaults (sorter=auto nodes=auto): the
# node with a memory-side cache is sorted, before the job and every second
# during it; the node without one is left alone (no sort, no compaction,
# no periodic helper) and says "no memory-side cache: nothing to sort" in
# its summary lines, zonesort report and zonesort status. A cache given by
# cache_size= counts as one: the node without the module is then degraded,
# compacted in the prolog only (compact_fallback=prolog, the default), says
# why in its summary lines and shows zonesort_sorter_degraded 1; with
# compact_fallback=periodic it is compacted during the step too.
# nocache=compact compacts the node without a cache.
# cache_size= and ways= are given per node class (NODES:VALUE entries), as
# a mixed cluster does: each entry reaches the nodes it names, in the job
# prolog, before the step and in the periodic helper, and no other node.
#
# Stand-ins, each because the real thing is not on this machine:
# - zsnode1's cache: hwloc reads this machine's topology from an XML file
#   with a 64 MiB direct-mapped MemCache in front of NUMA node 0
#   (testbed/standin-memcache-xml); zonesort status run there with
#   HWLOC_XMLFILE writes the node's per-boot copy of the cache layout,
#   which the plugin reads as it would hwloc's answer. zsnode2 has this
#   machine's own topology: no memory-side cache.
# - the kernel interface: the counting FIFO of testbed/sortcount.sh, on
#   zsnode1 only (an ordinary node has no module).
# - compaction: node_sysfs= points at a directory whose node0/compact is
#   a FIFO that a reader drains, one recorded line per compaction (the
#   real compaction is tested in 02-counts.t).
# The nodes are namespaces of one host (testbed/cluster.sh), each with
# its own /run and so its own state directory and cache layout.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
ZS_NODES=2
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun scontrol pgrep lstopo-no-graphics python3
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t24 min_period=1
cache_node=${ZS_NODE_NAMES[0]} plain_node=${ZS_NODE_NAMES[1]}
sortcount_remove "$plain_node"
NODES=$SC_RUN/nodes
SITE="sysfs=$SC_SYSFS node_sysfs=$NODES statedir=$SC_STATE helper=$ZS_ZONESORT min_period=1"
# compact_fifo NODE: NODE's node0/compact, each write recorded in
# $work/compact.NODE (opened read-write: the FIFO never sees EOF).
compact_fifo() {
	local dir fd
	dir=$(_sortcount_path "$1" "$NODES")/node0
	mkdir -p "$dir" && mkfifo -m 600 "$dir/compact" || return 1
	: > "$work/compact.$1"
	exec {fd}<>"$dir/compact"
	while IFS= read -r line; do echo "$line"; done <&"$fd" >> "$work/compact.$1" &
	SC_PIDS="$SC_PIDS $!"
	exec {fd}<&-
}
for node in "$cache_node" "$plain_node"; do
	ok "$node: a counting node0/compact" compact_fifo "$node"
done
xml=$work/standin-memcache.xml
ok "stand-in topology: this machine with a 64 MiB memory-side cache before node 0" \
	eval '"$ZS_SRCDIR/testbed/standin-memcache-xml" 67108864 0 > "$xml"'
chmod 644 "$xml"
status_on() {	# NODE [ENV=VALUE...]: zonesort status with the site's words
	local node=$1; shift
	cluster_on_node "$node" env "$@" "$ZS_ZONESORT" status $SITE
}
out=$(status_on "$cache_node" HWLOC_XMLFILE="$xml" HWLOC_THISSYSTEM=1 2>&1)
like "$out" "node 0: 64 MiB, direct-mapped, 64 B lines \(hwloc\)" "$cache_node: hwloc finds the stand-in cache"
like "$out" "sorter: kernel" "$cache_node: the kernel interface would sort it"
out=$(status_on "$plain_node" 2>&1)
like "$out" "memory-side caches: none detected" "$plain_node: no memory-side cache"
like "$out" "sorter: none \(no memory-side cache: nothing to sort; nocache=compact" \
	"$plain_node: zonesort status says there is nothing to sort, and how to compact anyway"
like "$out" "target nodes: none" "... no target"
like "$out" "node 0: .*cache none, not a target: nothing to sort" "... node 0 is not a target"

compacted() { grep -c . "$work/compact.$1"; }
periodic_sorted() { [ "$(sortcount_node "$cache_node")" -ge 2 ]; }
# job PLUGSTACK-WORDS: one job on both nodes with --zonesort=1 that runs
# until $cache_node was sorted once more after its prolog (a sort waits
# for quiet memory, up to 10 s on a busy machine), and until $WAIT_ALSO
# holds when set, at most 30 s; the helpers are seen then. Sets JOB and
# HELPER_NODES.
job() {
	local node srun_pid pid pids
	cluster_plugstack "$SITE $*"
	sortcount_reset
	rm -f "$work/stop"
	for node in "$cache_node" "$plain_node"; do : > "$work/compact.$node"; done
	srun -N 2 --zonesort=1 sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; while [ ! -e '"$work"'/stop ]; do sleep 0.2; done' &
	srun_pid=$!
	wait_for 30 periodic_sorted
	[ -n "${WAIT_ALSO:-}" ] && wait_for 30 "$WAIT_ALSO"
	pids=$(pgrep -f "$ZS_ZONESORT run --every 1 .*statedir=$SC_STATE")
	HELPER_NODES=$(for pid in $pids; do cluster_node_of_pid "$pid"; done | sort | tr '\n' ' ')
	touch "$work/stop"
	wait "$srun_pid"
	JOB=$(cat "$work/job")
	cluster_wait_job_gone "$JOB" 30
}

# --- the defaults -----------------------------------------------------------
# The churn watch is on by default: other processes on this shared host
# can move enough memory to make one of the step's sorts a churn sort.
SORTS='[1-9][0-9]* sorts?( \([1-9][0-9]* after memory churn\))?,'
job
like "$JOB" '^[0-9]+$' "one job on both nodes ran ($JOB)"
is "$HELPER_NODES" "$cache_node " "a periodic helper ran on $cache_node only"
sorts=$(sortcount_node "$cache_node")
num_ok "$cache_node: sorted by the kernel interface in the prolog and during the step ($sorts sorts)" "$sorts >= 2"
like "$(summary "$JOB" prolog "$cache_node")" "zonesort=every 1 s, 1 sort, .*backend kernel" "$cache_node: prolog summary"
like "$(summary "$JOB" 'step 0' "$cache_node")" "zonesort=every 1 s, $SORTS .*0 failed.*backend kernel" \
	"$cache_node: step summary counts the periodic sorts"
is "$(compacted "$plain_node")" 0 "$plain_node: not compacted"
for where in prolog 'step 0'; do
	like "$(summary "$JOB" "$where" "$plain_node")" \
		"zonesort: job $JOB $where on $plain_node: zonesort=every 1 s, no memory-side cache: nothing to sort\$" \
		"$plain_node: the $where summary says there is nothing to sort"
done
unlike "$(grep "zonesort: job $JOB" "$(cluster_slurmd_log "$plain_node")")" "error|failed:|unavailable" \
	"$plain_node: no error, failure or 'unavailable' in its log"
report=$(cluster_on_node "$plain_node" "$ZS_ZONESORT" report --job "$JOB" statedir="$SC_STATE" 2>&1)
like "$report" "prolog +on $plain_node: zonesort=every 1 s, no memory-side cache: nothing to sort" \
	"$plain_node: zonesort report says so for the prolog"
like "$report" "step 0 +on $plain_node: zonesort=every 1 s, no memory-side cache: nothing to sort" "... and the step"
like "$(cluster_on_node "$cache_node" "$ZS_ZONESORT" report --job "$JOB" statedir="$SC_STATE" 2>&1)" \
	"step 0 +on $cache_node: zonesort=every 1 s, $SORTS .*backend kernel" \
	"$cache_node: zonesort report counts its sorts"

# --- a cache given by cache_size=, as a site does for one hwloc misses -------
# $plain_node has no module: a cache node without its kernel sorter is
# degraded. Compaction stands in for it in the job prolog only. The cache
# is given to its node class only (a Slurm host list naming it).
PROM=$SC_RUN/prom
job "cache_size=${plain_node%[0-9]}[2-3]:64MiB,other*:16GiB" "ways=${plain_node%[0-9]}[2-3]:1" prometheus_dir=$PROM
is "$(compacted "$plain_node")" 1 "cache_size=: degraded $plain_node (no module there) is compacted once, in the prolog"
degraded_why="degraded: no kernel zonesort interface \($SC_SYSFS/nodeid\); compaction in its place in the job prolog only \(compact_fallback=prolog\)\$"
like "$(summary "$JOB" prolog "$plain_node")" \
	"zonesort=every 1 s, 0 sorts, 1 compacted in place of a sort, 0 left unsorted, .*backend compact, $degraded_why" \
	"... its prolog summary says it compacted in place of a sort, degraded, and why"
like "$(summary "$JOB" 'step 0' "$plain_node")" \
	"zonesort=every 1 s, 0 sorts, 0 compacted in place of a sort, 1 left unsorted, .*backend none, $degraded_why" \
	"... its step summary: left unsorted, and why"
is "$HELPER_NODES" "$cache_node " "... no periodic helper compacts it during the step"
prom=$(cat "$(_sortcount_path "$plain_node" "$PROM")/zonesort.prom" 2>&1)
like "$prom" "zonesort_sorter_degraded\{node=\"$plain_node\"\} 1" "... its metrics: zonesort_sorter_degraded 1"
like "$prom" "zonesort_sorts_total\{node=\"$plain_node\",outcome=\"fallback\"\} 1" "... outcome fallback: 1"
like "$prom" "zonesort_sorts_total\{node=\"$plain_node\",outcome=\"degraded\"\} 1" "... outcome degraded: 1 (the step)"
like "$prom" "zonesort_sorts_total\{node=\"$plain_node\",outcome=\"sorted\"\} 0" "... and no sort"
like "$(cat "$(_sortcount_path "$cache_node" "$PROM")/zonesort.prom" 2>&1)" \
	"zonesort_sorter_degraded\{node=\"$cache_node\"\} 0" "$cache_node, sorted by its module: zonesort_sorter_degraded 0"
like "$(cluster_on_node "$plain_node" "$ZS_ZONESORT" status $SITE cache_size=64MiB ways=1 2>&1)" \
	"sorter: compact \(degraded: no kernel zonesort interface" "zonesort status on $plain_node says it is degraded"

# The site opts in to compaction during steps. The periodic helper, started
# with a clean environment, applies the class entry naming its node (a glob).
plain_compacted_again() { [ "$(compacted "$plain_node")" -ge 2 ]; }
WAIT_ALSO=plain_compacted_again job "cache_size=$plain_node*:64MiB" ways=1 compact_fallback=periodic
n=$(compacted "$plain_node")
num_ok "compact_fallback=periodic: $plain_node is compacted in the prolog and during the step ($n)" "$n >= 2"
is "$HELPER_NODES" "$cache_node $plain_node " "... by a periodic helper on both nodes"
unlike "$(grep "zonesort: job $JOB" "$(cluster_slurmd_log "$plain_node")")" "error|helper:" \
	"... whose class values are the node's own (no error from it)"

# --- compaction asked for on nodes without a cache ----------------------------
# A cache_size= whose entries name other nodes leaves $plain_node without a
# cache: it is compacted as nocache=compact says, not degraded.
job nocache=compact "cache_size=$cache_node:64MiB,other[1-9]:16GiB"
n=$(compacted "$plain_node")
num_ok "nocache=compact: $plain_node is compacted ($n times: the prolog, the periodic helper)" "$n >= 1"
like "$(summary "$JOB" prolog "$plain_node")" "zonesort=every 1 s, 1 sort, .*backend compact\$" \
	"... its prolog summary says so, not degraded: no cache_size= entry names it"
cmp_ok "$(sortcount_node "$cache_node")" -ge 2 "... and $cache_node is still sorted by the kernel interface"
is "$(compacted "$cache_node")" 0 "... not compacted"
done_testing
