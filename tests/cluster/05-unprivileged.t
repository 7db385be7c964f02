#!/bin/bash
# A job of an unprivileged user gets its sorts (the plugin acts as root in
# the prolog and slurmstepd) and cannot change what root runs. Runs on
# $ZS_NODES nodes (4N-05-unprivileged.t: four).
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun runuser scontrol pgrep
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t05 min_period=1

# What a user might try: a helper of their own on PATH and in variables,
# and forged plugin option variables.
evil=$work/evil
mkdir -p "$evil"
printf '#!/bin/sh\ntouch %s/pwned\n' "$evil" > "$evil/zonesort"
chmod 755 "$evil" "$evil/zonesort"
cp "$evil/zonesort" "$evil/modprobe"

as_nobody() {
	(cd / && runuser -u nobody -- env PATH="$evil:$PATH" ZONESORT_HELPER="$evil/zonesort" \
		SLURM_SPANK_zonesort_helper="$evil/zonesort" "$@")
}

sortcount_reset
# Each task lasts until its node's interface recorded the prolog's sort
# and one periodic sort, at most 20 s: a due sort waits while the node's
# memory is busy (at most 10 s past its time, tools/cmd_run.c), and on
# this shared host other processes move memory, so a fixed length would
# make the count depend on them. The tasks' output only: slurmstepd's
# messages to the user (stderr) are shown, not parsed.
task='echo "$(id -un) $SLURM_JOB_ID"; i=0
while [ "$(grep -c . '"$work"'/writes.$SLURMD_NODENAME)" -lt 2 ] && [ $i -lt 80 ]; do sleep 0.25; i=$((i + 1)); done'
out=$(as_nobody srun -N "$ZS_NODES" --zonesort=1 sh -c "$task" 2> "$work/srun.err")
rc=$?
[ ! -s "$work/srun.err" ] || diag "srun's stderr:" "$(cat "$work/srun.err")"
is "$rc" 0 "srun of nobody's job exited 0"
is "$(printf '%s\n' "$out" | awk '{ print $1 }' | sort | uniq -c | awk '{ print $1, $2 }')" "$ZS_NODES nobody" \
	"the job ran as nobody on every node"
JOB=$(printf '%s\n' "$out" | awk '{ print $2 }' | sort -u | head -1)
cluster_wait_job_gone "$JOB" 30
for node in "${ZS_NODE_NAMES[@]}"; do
	sorts=$(sortcount_node "$node")
	num_ok "$node: nobody's job was sorted in the prolog and periodically (got $sorts)" "$sorts >= 2"
done
summaries_like "$JOB" prolog 'zonesort=every 1 s, 1 sort' "prolog sorted as root"
# That they ran at all is what matters here.
summaries_like "$JOB" 'step 0' 'zonesort=every 1 s, [1-9][0-9]* sorts?,' "periodic sorts ran"
ok "the user's helper was never run" test ! -e "$evil/pwned"

# Forged option values in the environment are validated like the option.
out=$(as_nobody env SLURM_SPANK__SLURM_SPANK_OPTION_zonesort_zonesort="1 helper=$evil/zonesort" srun -N "$ZS_NODES" true 2>&1); rc=$?
cmp_ok "$rc" -ne 0 "a forged option value in the environment is refused"
like "$out" "invalid --zonesort value" "with the usual message"
ok "the user's helper was still never run" test ! -e "$evil/pwned"

# Users cannot override site policy through the option.
out=$(as_nobody srun --zonesort="sorter=none" true 2>&1); rc=$?
cmp_ok "$rc" -ne 0 "policy words are not accepted as an option value"
done_testing
