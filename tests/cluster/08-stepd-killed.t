#!/bin/bash
# If slurmstepd dies (killed, crashed) while the periodic helper runs, the
# helper notices and exits on its own.
set -u
source "$(dirname "$0")/../lib/tap.sh"
source "$(dirname "$0")/../lib/env.sh"
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/sortcount.sh"
need srun scontrol pgrep
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t08 min_period=1

srun --zonesort=1 sleep 60 >/dev/null 2>&1 &
srun_pid=$!
helper=
wait_for 10 pgrep -f "$ZS_ZONESORT run --every 1 .*statedir=$work/state" >/dev/null &&
	helper=$(pgrep -f "$ZS_ZONESORT run --every 1 .*statedir=$work/state" | head -1)
like "$helper" '^[0-9]+$' "the periodic helper runs"
stepd=$(ps -o ppid= -p "$helper" | tr -d ' ')
like "$(ps -o args= -p "$stepd")" '^slurmstepd' "its parent is slurmstepd ($stepd)"
kill -9 "$stepd"
gone() { ! kill -0 "$helper" 2>/dev/null; }
t0=$(date +%s.%N)
ok "the helper exits by itself after slurmstepd is killed" wait_for 5 gone
diag "it exited $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s after the kill"
kill "$srun_pid" 2>/dev/null
scancel -u root 2>/dev/null
wait "$srun_pid" 2>/dev/null
done_testing
