#!/bin/bash
# min_interval is the least time between two sorts of a node, whoever
# sorts: two steps' periodic helpers with a period of 3 s and
# min_interval=2 never sort the node less than 2 s apart, although half
# their period is 1.5 s and min_period=1 would let users ask for 1 s.
set -u
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/env.sh"
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/sortcount.sh"
need srun sbatch scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t21 min_period=1 min_interval=2
sortcount_reset
# One job, two steps started 1.2 s apart, each sorting every 3 s for 8 s.
job=$(sbatch --parsable -o /dev/null --zonesort=on --wrap "
	srun --zonesort=3 --overlap -n1 sleep 8 &
	sleep 1.2
	srun --zonesort=3 --overlap -n1 sleep 8 &
	wait")
like "$job" '^[0-9]+' "the job is submitted ($job)"
cluster_wait_job_gone "$job" 60
sleep 0.3
sortcount_times "$ZS_NODE" > "$work/times"
n=$(grep -c . "$work/times")
cmp_ok "$n" -ge 3 "the node was sorted several times ($n)"
gaps=$(awk 'NR > 1 { printf "%.2f ", $1 - prev } { prev = $1 }' "$work/times")
diag "seconds between sorts: $gaps"
min=$(awk 'NR > 1 { g = $1 - prev; if (m == "" || g < m) m = g } { prev = $1 } END { print m + 0 }' "$work/times")
num_ok "no two sorts closer than min_interval=2 s (closest $min s)" "$min >= 1.95"
done_testing
