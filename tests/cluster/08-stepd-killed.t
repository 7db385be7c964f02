#!/bin/bash
# If slurmstepd dies (killed, crashed) while the periodic helper runs, the
# helper notices and exits on its own. Runs on $ZS_NODES nodes
# (4N-08-stepd-killed.t: four): the step's slurmstepd is killed on the last
# node only, and the helpers of the other nodes go on sorting.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun scontrol pgrep
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t08 min_period=1

helpers() { pgrep -f "$ZS_ZONESORT run --every 1 .*statedir=$SC_STATE"; }
# helper_on NODE: the pid of the helper running on NODE.
helper_on() {
	local pid
	for pid in $(helpers); do
		[ "$(cluster_node_of_pid "$pid")" = "$1" ] && { echo "$pid"; return 0; }
	done
	return 1
}
all_helpers_up() { [ "$(helpers | wc -l)" -eq "$ZS_NODES" ]; }

victim=${ZS_NODE_NAMES[-1]}
srun -N "$ZS_NODES" --zonesort=1 sleep 60 >/dev/null 2>&1 &
srun_pid=$!
ok "a periodic helper runs on each of the $ZS_NODES node(s)" wait_for 15 all_helpers_up
helper=$(helper_on "$victim")
like "$helper" '^[0-9]+$' "the helper on $victim runs"
stepd=$(ps -o ppid= -p "$helper" | tr -d ' ')
like "$(ps -o args= -p "$stepd")" '^slurmstepd' "its parent is slurmstepd ($stepd)"
is "$(cluster_node_of_pid "$stepd")" "$victim" "that slurmstepd is $victim's"
declare -A others=( )
for node in "${ZS_NODE_NAMES[@]}"; do
	[ "$node" = "$victim" ] || others[$node]=$(helper_on "$node")
done
kill -9 "$stepd"
gone() { ! kill -0 "$helper" 2>/dev/null; }
t0=$(date +%s.%N)
ok "the helper on $victim exits by itself after its slurmstepd is killed" wait_for 5 gone
diag "it exited $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s after the kill"
fails "no helper is left on $victim" helper_on "$victim"
if [ "$ZS_NODES" -gt 1 ]; then
	before=$(sortcount_each)
	# grown_nodes: the nodes other than the victim sorted since "before".
	# A helper holds a due sort back while the host allocates fast (up to
	# 10 s here), so the other helpers get 12 s to sort once more.
	grown_nodes() {
		local n=0 node b a out= after
		after=$(sortcount_each)
		for node in "${ZS_NODE_NAMES[@]}"; do
			n=$((n + 1))
			b=$(echo "$before" | cut -d' ' -f$n) a=$(echo "$after" | cut -d' ' -f$n)
			[ "$node" != "$victim" ] && [ "$a" -gt "$b" ] && out="$out $node"
		done
		echo $out
	}
	want_grown=$(printf '%s\n' "${!others[@]}" | sort | tr '\n' ' ' | sed 's/ $//')
	all_grown() { [ "$(grown_nodes)" = "$want_grown" ]; }
	wait_for 12 all_grown
	unaffected=
	for node in "${!others[@]}"; do
		kill -0 "${others[$node]}" 2>/dev/null && [ "$(helper_on "$node")" = "${others[$node]}" ] &&
			unaffected="$unaffected $node"
	done
	is "$(echo $unaffected | tr ' ' '\n' | sort | tr '\n' ' ')" "$(printf '%s\n' "${!others[@]}" | sort | tr '\n' ' ')" \
		"the helpers of the other nodes still run, the same processes"
	is "$(grown_nodes)" "$want_grown" \
		"and go on sorting (sorts per node $before -> $(sortcount_each))"
fi
kill "$srun_pid" 2>/dev/null
scancel -u root 2>/dev/null
wait "$srun_pid" 2>/dev/null
no_helpers() { [ -z "$(helpers)" ]; }
ok "once the job is cancelled no helper is left on any node" wait_for 30 no_helpers
done_testing
