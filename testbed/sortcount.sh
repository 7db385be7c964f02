# A stand-in for the kernel zonesort interface that counts sorts, one per
# node: the plugin is pointed (sysfs=) at a directory under /run whose
# nodeid is a FIFO, and a reader appends every write to a file. Each node
# of the test cluster has its own /run, so each has its own FIFO, its own
# count and its own plugin state (statedir= under /run too). There is no
# memory-side cache on this machine, so this is the only way to see what
# the plugin asks for; the real compaction backend and the real module are
# tested elsewhere. A node without a cache has nothing to sort, so the
# policy configures one ($SC_CACHE: cache_size=64MiB ways=1), as a site
# does for a cache hwloc cannot see: a stand-in too, the node has none.
#
#   sortcount_cluster PREFIX [PLUGSTACK-ARGS...]
#                            a work directory $work (mode 755), a cluster
#                            ($ZS_NODES nodes) loading the plugin with
#                            $SC_POLICY and these arguments, a counting
#                            interface on every node, and a trap that undoes it
#   sortcount_start DIR      without a cluster, or for one whose nodes all
#                            share it: one counting interface and statedir
#                            under DIR (a host path), counted as node "shared"
#   sortcount_node NODE      sorts recorded on NODE so far
#   sortcount_times NODE     the time of each sort on NODE, one per line
#   sortcount                sorts recorded on all nodes together
#   sortcount_each           the count of every node, e.g. "1 1 1 1"
#   each VALUE               VALUE once per node, to compare with sortcount_each
#   sortcount_reset          forget the recorded sorts and the plugin's
#                            last-sort times (and free memory after them)
#                            on every node
#   sortcount_remove NODE    take NODE's interface away (no sorter there)
#   summaries_like JOBID WHERE REGEX DESCRIPTION
#                            every node logged one summary line for "prolog",
#                            "step 0", "batch step" ... of the job, each matching
#   summary JOBID WHERE [NODE]
#                            the summary line of one node (the first by default)
#
# $SC_RUN is the per-node directory under /run (unique to the test run),
# $SC_STATE the plugin's statedir there, $SC_SYSFS its kernel interface.

# The configured stand-in cache (see above).
SC_CACHE="cache_size=64MiB ways=1"
# The churn watch is off in $SC_POLICY: it sorts again when the node's
# page counters show memory freed and not allocated again, and on a shared
# host other processes move enough memory to make counts of sorts depend
# on them. tests/cluster/25-churn-watch.t turns it on and churns on purpose.
SC_NO_CHURN_WATCH="churn_watch=0"
# Likewise min_interval alone decides in $SC_POLICY: with recent_freed=sort
# a node sorted less than min_interval ago is sorted again once its free
# memory grew by 1/16 of the stand-in cache (4 MiB) since, which this
# host's other processes do within a second often enough. The test of that
# rule (tests/cluster/26-recent-freed.t) turns it on.
SC_RECENT_ONLY="recent_freed=skip"

sortcount_cluster() {
	local prefix=$1 node; shift
	work=$(mktemp -d "/tmp/$prefix.XXXXXX")
	chmod 755 "$work"
	SC_RUN=/run/${work##*/}
	SC_STATE=$SC_RUN/state
	SC_SYSFS=$SC_RUN/sysfs
	SC_POLICY="sorter=kernel sysfs=$SC_SYSFS statedir=$SC_STATE nodes=0 helper=$ZS_ZONESORT $SC_CACHE $SC_NO_CHURN_WATCH $SC_RECENT_ONLY"
	SC_PIDS=
	trap 'cluster_stop; sortcount_stop; rm -rf "$work"' EXIT
	SC_NODES=()
	ZS_PLUGSTACK_ARGS="$SC_POLICY $*" cluster_start_or_bail
	# The plugin reads these paths only when a job runs, so the interfaces
	# may appear after slurmd started.
	SC_NODES=("${ZS_NODE_NAMES[@]}")
	for node in "${SC_NODES[@]}"; do
		_sortcount_start_node "$node"
	done
}

sortcount_start() {
	SC_RUN=$1
	SC_STATE=$SC_RUN/state
	SC_SYSFS=$SC_RUN/sysfs
	SC_POLICY="sorter=kernel sysfs=$SC_SYSFS statedir=$SC_STATE nodes=0 helper=$ZS_ZONESORT $SC_CACHE $SC_NO_CHURN_WATCH $SC_RECENT_ONLY"
	SC_PIDS=
	SC_NODES=(shared)
	_sortcount_start_node shared
}

# The host path of PATH (under /run) as NODE sees it.
_sortcount_path() {
	if [ "$1" = shared ]; then
		echo "$2"
	else
		echo "$(cluster_node_run "$1")${2#/run}"
	fi
}

_sortcount_start_node() {
	local node=$1 sysfs fd
	sysfs=$(_sortcount_path "$node" "$SC_SYSFS")
	mkdir -p "$sysfs" "$(_sortcount_path "$node" "$SC_STATE")"
	rm -f "$sysfs/nodeid"
	mkfifo -m 600 "$sysfs/nodeid"
	: > "$work/writes.$node"
	# Opened read-write, the FIFO always has a reader and never sees EOF.
	# Each write is recorded with the time it arrived.
	exec {fd}<>"$sysfs/nodeid"
	while IFS= read -r line; do echo "$EPOCHREALTIME $line"; done <&"$fd" >> "$work/writes.$node" &
	SC_PIDS="$SC_PIDS $!"
	exec {fd}<&-
}

sortcount_remove() {
	rm -f "$(_sortcount_path "$1" "$SC_SYSFS")/nodeid"
}

sortcount_node() {
	grep -c . "$work/writes.$1"
}

sortcount_times() {
	cut -d' ' -f1 "$work/writes.$1"
}

sortcount() {
	local node total=0
	sleep 0.05
	for node in "${SC_NODES[@]}"; do
		total=$((total + $(sortcount_node "$node")))
	done
	echo "$total"
}

sortcount_each() {
	local node out=
	sleep 0.05
	for node in "${SC_NODES[@]}"; do
		out="$out${out:+ }$(sortcount_node "$node")"
	done
	echo "$out"
}

each() {
	local node out=
	for node in "${SC_NODES[@]}"; do
		out="$out${out:+ }$1"
	done
	echo "$out"
}

sortcount_reset() {
	local node
	for node in "${SC_NODES[@]}"; do
		rm -f "$(_sortcount_path "$node" "$SC_STATE")"/node*.last \
			"$(_sortcount_path "$node" "$SC_STATE")"/node*.free
		: > "$work/writes.$node"
	done
}

sortcount_stop() {
	local pid
	for pid in ${SC_PIDS:-}; do
		kill "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	SC_PIDS=
}

# _summary_lines JOBID WHERE NODE: NODE's summary lines for WHERE.
_summary_lines() {
	grep -E "zonesort: job $1 $2 on $3:" "$(cluster_slurmd_log "$3")" 2>/dev/null
}

summary() {
	local line i node=${3:-$ZS_NODE}
	for i in $(seq 50); do
		line=$(_summary_lines "$1" "$2" "$node" | tail -1)
		[ -n "$line" ] && break
		sleep 0.1
	done
	printf '%s' "$line"
}

summaries_like() {
	local job=$1 where=$2 regex=$3 desc=$4 node lines bad=
	for node in "${ZS_NODE_NAMES[@]}"; do
		summary "$job" "$where" "$node" > /dev/null	# waits for the line
		lines=$(_summary_lines "$job" "$where" "$node")
		if [ "$(printf '%s' "$lines" | grep -c .)" -ne 1 ]; then
			bad="$bad$node: $(printf '%s' "$lines" | grep -c .) lines; "
		elif ! printf '%s' "$lines" | grep -Eq -- "$regex"; then
			bad="$bad$node: '$lines'; "
		fi
	done
	if [ -z "$bad" ]; then
		_tap_result 0 "$desc (on each of ${#ZS_NODE_NAMES[@]} node(s))"
	else
		_tap_result 1 "$desc (on each of ${#ZS_NODE_NAMES[@]} node(s))"
		diag "want one line matching: $regex" "got: $bad"
		return 1
	fi
}

# next_jobid: submits and cancels a held job and prints its id; two calls
# around an action show whether the action created a job.
next_jobid() {
	local id
	id=$(sbatch --parsable --hold -o /dev/null --wrap true 2>/dev/null) || return 1
	scancel "$id" 2>/dev/null
	echo "${id%%;*}"
}
