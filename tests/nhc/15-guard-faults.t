#!/bin/bash
# The drain guard when the world is unkind: a real cluster of eight slurmd
# nodes (each in its own mount and UTS namespace), every node's check
# failing at once, through the runner as Epilog on some nodes and through
# NHC on the others (the LBNL NHC stand-in: NHC is not packaged here),
# while each node's sinfo, scontrol and squeue are delayed, refused, made
# to time out, or done and then reported failed, on a random schedule
# (testbed/guard-faults.sh), and an administrator drains nodes before and
# during the wave. After each wave: at most the guard's limit of nodes is
# drained for the check, every node in service has a recorded hold saying
# why (history and metrics), no administrator's drain is undone, no Epilog
# failed. (An administrator's drain made while a node's own listing and
# state change are in flight races it, as any two writers of one Slurm
# reason do; testbed/guard-faults.sh names such a drain and judges the
# node like the others.)
#
# ZS_GUARD_WAVES waves (default 20), seeds from ZS_GUARD_SEED (default: a
# new one, printed; a failure names the seed that replays it:
# ZS_GUARD_SEED=<seed> ZS_GUARD_WAVES=1). bench/guard-faults runs many.
# needs: a quiet host (its eight slurmd nodes start and answer within set times)
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
ZS_NODES=8
. "$(dirname "$0")/../../testbed/cluster.sh"
. "$(dirname "$0")/../../testbed/guard-faults.sh"
need slurmctld slurmd munged scontrol sinfo squeue sbatch jq timeout flock nsenter setsid pgrep
: "${ZS_HEALTH_CHECK:=$ZS_NHC_DIR/zonesort-health-check}"
need_file "$ZS_HEALTH_CHECK" "the runner zonesort-health-check"

waves=${ZS_GUARD_WAVES:-20}
seed=${ZS_GUARD_SEED:-$(( $(date +%s) % 100000 * 100 ))}
limit=2
T=$(mktemp -d /tmp/zs-guard-faults.XXXXXX)
chmod 755 "$T"
cleanup() {
	local c=$ZS_CLUSTER
	cluster_stop
	if [ "$tap_failed" -gt 0 ]; then diag "kept $T and $c"; else rm -rf "$T"; fi
}
trap cleanup EXIT
export ZS_HEALTH_CHECK_CONF=/run/zs-hc.conf
ok "a cluster of eight nodes starts with the runner as Epilog" cluster_start "Epilog=$ZS_HEALTH_CHECK"
ok "Slurm's clients are wrapped with faults in every node's namespace" gf_setup "$T" "$limit"
wrapped() { cluster_on_node zsnode3 sh -c 'echo fail > /run/zs-faults/schedule; rm -f /run/zs-faults/count; sinfo -h 2>&1; rm /run/zs-faults/schedule'; }
like "$(wrapped)" "Unable to contact slurm controller \(connect failure\)" "a node's sinfo follows its schedule"
like "$(sinfo -h -o %D)" "^[0-9]+$" "the test's own sinfo is the real one"
diag "seeds $seed to $((seed + waves - 1))"

for ((i = 0; i < waves; i++)); do
	gf_schedule $((seed + i))
	gf_wave
	v=$(gf_judge)
	is "$v" "" "wave $((seed + i)): $(cat "$T/drained") of 8 drained (limit $limit), $(jq -r --argjson s "$GF_START" 'select(.epoch >= $s) | .verdict' "$T/history.jsonl" | sort | uniq -c | awk '{ printf "%s%s %s", (n++ ? ", " : ""), $1, $2 }')$([ -s "$T/races" ] && echo "; an administrator's drain raced a state change of $(tr '
' ' ' < "$T/races")")"
	if [ -n "$v" ]; then
		diag "the wave ($(wc -l < "$T/wave") lines):" "$(cat "$T/wave")" "replay: ZS_GUARD_SEED=$((seed + i)) ZS_GUARD_WAVES=1 bash $0"
	fi
	gf_reset
done

done_testing
