#!/bin/bash
# --zonesort=<n>: the periodic helper sorts every n seconds during the step,
# is gone when the step ends, and does not stretch the step. Runs on
# $ZS_NODES nodes (4N-03-periodic.t: four): one helper on every node.
# needs: a quiet host (it times the helper's sorts, which wait for the node's memory to be quiet)
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun scontrol pgrep
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t03 min_period=1

helpers() { pgrep -f "$ZS_ZONESORT run --every .* statedir=$SC_STATE" | tr '\n' ' '; }
# nodes_of PID...: the nodes these processes run on, sorted, one line.
nodes_of() { local p; for p in "$@"; do cluster_node_of_pid "$p"; done | sort | tr '\n' ' '; }
wall() { local t0=$(date +%s.%N); "$@" >/dev/null; awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }'; }

# 2-second period over a 7-second step: periodic sorts at 2, 4 and 6 s.
sortcount_reset
srun -N "$ZS_NODES" --zonesort=2 sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; sleep 7' &
srun_pid=$!
sleep 3
running=$(helpers)
like "$running" '[0-9]' "a periodic helper runs during the step (pid $running)"
is "$(nodes_of $running)" "$(printf '%s ' "${ZS_NODE_NAMES[@]}")" "one helper on every node"
helper_pid=${running%% *}
if [ -n "$helper_pid" ]; then
	is "$(ps -o user= -p "$helper_pid" | tr -d ' ')" root "the helper runs as root"
	env_of_helper=$(tr '\0' '\n' < /proc/"$helper_pid"/environ)
	is "$(printf '%s\n' "$env_of_helper" | sort | tr '\n' ' ')" "LC_ALL=C PATH=/usr/sbin:/usr/bin:/sbin:/bin " \
		"the helper's environment is the fixed minimal one"
	# What its descriptors point to: stdin (/dev/null), its report pipe,
	# its pidfd, the checked state directory, and for a moment (twice a
	# second) /proc/vmstat and its step's statm. Anything else is a leak.
	kinds=$(for fd in /proc/"$helper_pid"/fd/*; do readlink "$fd"; done |
		sed -E "s#^/dev/null\$#null#; s#^pipe:.*#pipe#; s#^anon_inode:\\[pidfd\\]\$#pidfd#;
			s#^$SC_STATE\$#state#; s#^/proc/vmstat\$#vmstat#; s#^/proc/[0-9]+/statm\$#statm#" |
		sort -u | tr '\n' ' ')
	like "$kinds" '^(null )?pidfd pipe (state )?((statm|vmstat) )*$' \
		"the helper holds only stdin, its report pipe, its pidfd and the checked state directory ($kinds)"
fi
wait $srun_pid
JOB=$(cat "$work/job")
cluster_wait_job_gone "$JOB" 30
# prolog 1 + periodic 3 (the step start is recent).
for node in "${ZS_NODE_NAMES[@]}"; do
	sorts=$(sortcount_node "$node")
	num_ok "$node: prolog + 3 periodic sorts, within one (got $sorts)" "$sorts >= 3 && $sorts <= 5"
done
summaries_like "$JOB" 'step 0' 'zonesort=every 2 s, [2-4] sorts, 1 skipped \(recent\), 0 busy, 0 failed' \
	"step summary counts the periodic sorts"
is "$(helpers)" "" "no helper is left after the step on any node"

# Wall time: a periodic step against an on step, interleaved.
on_times=() periodic_times=()
for i in 1 2 3; do
	on_times+=("$(wall srun -N "$ZS_NODES" --zonesort=on sleep 3)")
	periodic_times+=("$(wall srun -N "$ZS_NODES" --zonesort=1 sleep 3)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n 2p; }
on=$(median "${on_times[@]}"); per=$(median "${periodic_times[@]}")
diag "srun sleep 3 wall, median of 3: on $on s, every 1 s $per s"
num_ok "the periodic helper stretches the step by less than 0.5 s ($on -> $per s)" "$per - $on < 0.5"
is "$(helpers)" "" "no helper left after the timing runs"
done_testing
