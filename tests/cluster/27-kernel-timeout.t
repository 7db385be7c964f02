#!/bin/bash
# A write to the kernel that does not end is stopped at kernel_timeout=:
# the step starts after the bound instead of never, exits 0, the sort
# counts as failed and stopped in the summary lines and the slurmd log
# says why, and nothing of the writer is left, neither a process under
# slurmstepd (running or a zombie) nor one still waiting in the kernel.
#
# Stand-ins, because the real kernel cannot be made slow here: a FIFO
# without a reader in place of the module's nodeid (a sort of a node that
# does not end), then of node0/compact (a compaction that does not end).
# The writer's open of such a FIFO blocks until a reader comes, as the
# kernel's store would block until its work is done, and like the module's
# sort and compaction it ends at SIGKILL. Without the bound the prolog and
# the step would wait for as long as no reader comes: forever.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun pgrep ps
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

BOUND=2
sortcount_cluster zs-t27 min_period=1 "kernel_timeout=$BOUND"
NODES=$SC_RUN/nodes

# hanging FILE: FILE (a host path) becomes a FIFO without a reader.
hanging() {
	mkdir -p "${1%/*}" && rm -f "$1" && mkfifo -m 600 "$1"
}
# no_writer_waiting FILE: a reader opened now gets nothing within a
# second: no writer is still blocked on the FIFO (it would write its text
# as soon as a reader comes).
no_writer_waiting() {
	local fd line rc=0
	exec {fd}<>"$1"
	read -r -t 1 -u "$fd" line && rc=1
	exec {fd}<&-
	return "$rc"
}
# stepd_leftovers JOB: the processes under the step's slurmstepd that are
# not its task: a zombie, or a copy of slurmstepd itself (the writer is a
# fork of it that never executes anything), with the step's name.
stepd_leftovers() {
	local pids stepd
	pids=$(pgrep -f "^slurmstepd: \[$1\.0\]")
	for stepd in $pids; do
		# The writer's parent is slurmstepd: only one without one counts.
		[[ " $pids " == *" $(ps -o ppid= -p "$stepd" | tr -d ' ') "* ]] && continue
		ps -o pid=,stat=,args= --ppid "$stepd" | awk '$2 ~ /^Z/ || $3 ~ /^slurmstepd/'
	done
}
# stepds JOB: how many processes carry the step's slurmstepd name.
stepds() { pgrep -fc "^slurmstepd: \[$1\.0\]"; }

# run_step DESCRIPTION: srun --zonesort=on with a step that waits for
# $work/go; checks what is left under its slurmstepd while it runs, then
# lets it end. Sets JOB, ELAPSED (seconds until the step's task ran) and RC.
run_step() {
	local t0 srun_pid
	rm -f "$work/go" "$work/job"
	t0=$(date +%s.%N)
	srun --zonesort=on sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; while [ ! -e '"$work"'/go ]; do sleep 0.1; done' \
		> "$work/out" 2>&1 &
	srun_pid=$!
	ok "$1: the step's task runs (within 30 s)" wait_for 30 test -s "$work/job"
	ELAPSED=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	JOB=$(cat "$work/job" 2>/dev/null)
	is "$(stepds "$JOB")" 1 "$1: one slurmstepd for the step, no copy of it (a writer) beside it"
	is "$(stepd_leftovers "$JOB")" "" "$1: no zombie and no writer under the step's slurmstepd"
	touch "$work/go"
	wait "$srun_pid"
	RC=$?
	cluster_wait_job_gone "$JOB" 30
}

# --- the module's sort does not end ------------------------------------------
nodeid=$(_sortcount_path "$ZS_NODE" "$SC_SYSFS")/nodeid
ok "nodeid: a FIFO without a reader" hanging "$nodeid"
run_step "nodeid hangs"
is "$RC" 0 "nodeid hangs: srun --zonesort=on exits 0"
# The prolog's sort and the step's (the prolog's did not count) each wait
# for the bound: a few seconds, not forever.
num_ok "nodeid hangs: the task ran after the bound, twice, and far sooner than never ($ELAPSED s)" \
	"$ELAPSED >= $BOUND && $ELAPSED < 30"
stopped="0 sorts, 0 skipped \(recent\), 0 busy, 1 failed \(1 stopped after kernel_timeout\), [0-9.]+ s, backend kernel"
like "$(summary "$JOB" 'step 0')" "zonesort=on, $stopped\$" \
	"the step's summary line counts the sort as failed, stopped after the bound"
like "$(summary "$JOB" prolog)" "zonesort=on, $stopped\$" "so does the prolog's"
log=$(grep "zonesort: job $JOB: node 0 failed:" "$(cluster_slurmd_log "$ZS_NODE")")
is "$(grep -c "$SC_SYSFS/nodeid: node 0 sort did not end within $BOUND s (kernel_timeout): stopped\$" <<< "$log")" 2 \
	"the slurmd log says twice (prolog, step) that the sort was stopped after $BOUND s"
ok "no writer is still waiting on the stand-in nodeid" no_writer_waiting "$nodeid"

# --- a compaction does not end -----------------------------------------------
compact=$(_sortcount_path "$ZS_NODE" "$NODES")/node0/compact
ok "node0/compact: a FIFO without a reader" hanging "$compact"
cluster_plugstack "$SC_POLICY min_period=1 kernel_timeout=$BOUND sorter=compact node_sysfs=$NODES"
run_step "compaction hangs"
is "$RC" 0 "compaction hangs: srun --zonesort=on exits 0"
num_ok "compaction hangs: the task ran after the bound, far sooner than never ($ELAPSED s)" \
	"$ELAPSED >= $BOUND && $ELAPSED < 30"
like "$(summary "$JOB" 'step 0')" \
	"zonesort=on, 0 sorts, 0 skipped \(recent\), 0 busy, 1 failed \(1 stopped after kernel_timeout\), [0-9.]+ s, backend compact\$" \
	"the step's summary line counts the compaction as failed, stopped after the bound"
log=$(grep "zonesort: job $JOB: node 0 failed:" "$(cluster_slurmd_log "$ZS_NODE")")
like "$log" "$NODES/node0/compact: compaction did not end within $BOUND s \(kernel_timeout\): stopped" \
	"the slurmd log says the compaction was stopped"
ok "no writer is still waiting on the stand-in node0/compact" no_writer_waiting "$compact"
done_testing
