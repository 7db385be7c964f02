#!/bin/bash
# The periodic helper is held by a pidfd: a helper that cannot be started
# is reported in the step's summary, and one that exits early (and is
# reaped by slurmstepd's wait3) is never signalled by a pid that another
# process holds by then.
#
# Pid reuse is made deterministic in a pid namespace of our own: slurmd
# runs in it, so only this cluster's processes take pids there, and the
# victim is given the helper's old pid through ns_last_pid. The helper is
# a stand-in that records its pid and exits at once, as a helper that
# fails early does.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun scontrol unshare nsenter pgrep
need_file "$ZS_PLUGIN" "SPANK plugin"

work=$(mktemp -d /tmp/zs-t20.XXXXXX)
chmod 755 "$work"
sortcount_start "$work"
victim=
trap '[ -n "$victim" ] && kill -9 "$victim" 2>/dev/null; cluster_stop; sortcount_stop; rm -rf "$work"' EXIT

cat > "$work/early-helper" <<HELPER
#!/bin/sh
echo \$\$ > $work/helper.pid
exit 0
HELPER
cat > "$work/ns-wrap" <<'WRAP'
#!/bin/sh
# slurmd in a new pid namespace under a shell that reaps orphans.
exec unshare --pid --fork --mount-proc sh -c '"$@" & wait' sh "$@"
WRAP
chmod 755 "$work/early-helper" "$work/ns-wrap"

ZS_SLURMD_WRAP=$work/ns-wrap ZS_PLUGSTACK_ARGS="$SC_POLICY min_period=1 helper=/nonexistent/zonesort" \
	cluster_start_or_bail
slurmd_host_pid=$(pgrep -f "^slurmd -D -N $ZS_NODE -f $SLURM_CONF" | head -1)
like "$slurmd_host_pid" '^[0-9]+$' "slurmd runs in its own pid namespace (host pid $slurmd_host_pid)"
in_ns() { nsenter -t "$slurmd_host_pid" -p -m "$@"; }

# 1. A helper that cannot be executed.
out=$(srun --zonesort=5 sh -c 'echo $SLURM_JOB_ID' 2>&1); rc=$?
is "$rc" 0 "a step whose helper cannot be executed still runs"
job=$(printf '%s\n' "$out" | tail -1)
line=$(summary "$job" 'step 0')
like "$line" 'zonesort=every 5 s but periodic sorting did not run \(periodic helper: cannot execute /nonexistent/zonesort: No such file or directory\)' \
	"the summary says periodic sorting did not run, and why"
unlike "$(grep "job $job" "$ZS_CLUSTER/log/slurmd.log")" 'did not exit' "no false 'did not exit' message"

# 2. A helper that exits early; its pid goes to a victim.
cluster_plugstack "$SC_POLICY min_period=1 helper=$work/early-helper"
rm -f "$work/go" "$work/helper.pid" "$work/victim.log"
srun --zonesort=5 sh -c 'echo $SLURM_JOB_ID > '"$work"'/job; while [ ! -e '"$work"'/go ]; do sleep 0.1; done' &
srun_pid=$!
wait_for 20 test -s "$work/helper.pid"
helper=$(cat "$work/helper.pid" 2>/dev/null)
like "$helper" '^[0-9]+$' "the stand-in helper ran (pid $helper in the namespace)"
gone_in_ns() { ! in_ns test -e "/proc/$helper"; }
ok "slurmstepd reaped the exited helper" wait_for 10 gone_in_ns
# The victim unblocks every signal (nsenter's child inherits a blocked mask)
# and records a SIGTERM.
cat > "$work/victim.py" <<VICTIM
import os, signal, time
signal.pthread_sigmask(signal.SIG_SETMASK, [])
def term(*_):
    open("$work/victim.log", "a").write("TERM\\n")
    os._exit(0)
signal.signal(signal.SIGTERM, term)
open("$work/victim.pid", "w").write(str(os.getpid()))
while True:
    time.sleep(0.2)
VICTIM
in_ns sh -c "echo $((helper - 1)) > /proc/sys/kernel/ns_last_pid; python3 $work/victim.py </dev/null >/dev/null 2>&1 &"
wait_for 10 test -s "$work/victim.pid"
is "$(cat "$work/victim.pid" 2>/dev/null)" "$helper" "a victim process now holds the helper's old pid"
victim=$(pgrep -f "python3 $work/victim.py" | head -1)
touch "$work/go"
wait "$srun_pid"
is "$?" 0 "the step ends normally"
job=$(cat "$work/job")
cluster_wait_job_gone "$job" 30
line=$(summary "$job" 'step 0')
like "$line" 'periodic sorting did not run \(the periodic helper exited early( with status 0)?\)' \
	"the summary says the helper exited early"
ok "the victim holding the recycled pid got no SIGTERM" test ! -e "$work/victim.log"
ok "and still runs" kill -0 "$victim"
done_testing
