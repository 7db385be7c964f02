#!/bin/bash
# The drain guard against a wave: a real cluster of eight slurmd nodes (each
# in its own mount and UTS namespace), the runner as Epilog on every node,
# and one job on all eight, so that their Epilogs run the check at the same
# moment and all fail: first with a limit no node can meet (the real
# stream-triad probe measures), then with a probe that is missing, then
# with a bad option in the nodes' options file. With
# -G 2 exactly two nodes end drained, the first two in slurmctld's order;
# the six others are held in service, and their history, metrics and the
# runner's log say so.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
ZS_NODES=8
. "$(dirname "$0")/../../testbed/cluster.sh"
need slurmctld slurmd munged scontrol sinfo sbatch jq timeout flock nsenter
: "${ZS_HEALTH_CHECK:=$ZS_NHC_DIR/zonesort-health-check}"
need_file "$ZS_HEALTH_CHECK" "the runner zonesort-health-check"
need_file "$ZS_STREAM_TRIAD" "the real stream-triad probe (build it: scripts/build)"

. "$(dirname "$0")/cluster-fixture.sh"
nhc_cluster_fixture zs-nhc-wave
export ZS_HEALTH_CHECK_CONF=/run/zs-hc.conf
# all_conf OPTIONS...: every node's options file (its own /run); each node
# writes its metrics to its own /run/prom.
all_conf() {
	local node
	for node in "${ZS_NODE_NAMES[@]}"; do
		printf '%s\n' "-P $ZS_STREAM_TRIAD -H $HIST -b $T/state/$node/ -l $T/runner.log -M /run/prom -t 1 -s 32MiB -T 20 -L 60 -G 2" "$*" \
			> "$ZS_CLUSTER/nodes/$node/run/zs-hc.conf"
	done
}
ok "a cluster of eight nodes starts with the runner as Epilog" cluster_start "Epilog=$ZS_HEALTH_CHECK"
for node in "${ZS_NODE_NAMES[@]}"; do mkdir -p "$T/state/$node"; done

ours() { sinfo -h -N -o '%N|%t|%E' | awk -F'|' 'index($3, "zonesort: check_hw_stream_triad") == 1 && $2 ~ /^(drain|drng|down)/ { print $1 }' | sort; }
of_job() { [ -f "$HIST" ] && jq -c --arg j "$1" 'select(.job == $j)' "$HIST"; }
all_in() { [ "$(of_job "$1" | wc -l)" -eq 8 ]; }

# idle_nodes: how many nodes are idle. idle_is N: true when N are.
idle_nodes() { sinfo -h -N -o '%N %T' | awk '$2 == "idle" { n++ } END { print n + 0 }'; }
idle_is() { [ "$(idle_nodes)" = "$1" ]; }

# wave NAME VERDICTS OPTIONS...: one job on all eight nodes whose Epilogs all fail;
# checks that two are drained and six held. Sets JOB and DRAINED.
wave() {
	local name=$1 want=$2 n line held
	shift 2
	all_conf "$@"
	: > "$T/runner.log"
	JOB=$(sbatch --parsable -N8 -o /dev/null -e /dev/null --wrap true)
	ok "$name: job $JOB runs on all eight nodes" test -n "$JOB"
	ok "$name: all eight Epilogs recorded a verdict" wait_for 180 all_in "$JOB"
	cluster_wait_job_gone "$JOB" 120
	is "$(of_job "$JOB" | jq -r .verdict | sort | uniq -c | awk '{ printf "%s %s,", $2, $1 }')" "$want" \
		"$name: the verdicts"
	DRAINED=$(ours | tr '\n' ' ')
	is "$(ours | wc -l)" 2 "$name: exactly two nodes are drained for the check ($DRAINED)"
	is "$(of_job "$JOB" | jq -r 'select(.verdict != "held") | .node' | sort | tr '\n' ' ')" "$DRAINED" \
		"$name: they are the two whose checks did not hold"
	is "$(of_job "$JOB" | jq -r 'select(.verdict != "held") | .guard_drained' | sort | tr '\n' ' ')" "0 1 " \
		"$name: the first two in slurmctld's order (0 and 1 drained before them)"
	is "$(of_job "$JOB" | jq -c 'select(.verdict == "held") | [.guard_drained >= 2, .guard_limit, .guard_hold, (.guard_release // "done")]' | sort -u)" \
		'[true,2,"limit","done"]' "$name: each held node saw two or more ahead of it, limit 2, and drained nothing or released its own drain"
	# A held node resumes its own drain after the job is gone; slurmctld
	# shows it idle once it has handled that.
	wait_for 30 idle_is 6
	is "$(idle_nodes)" 6 "$name: the six held nodes are in service (idle, no 'Epilog error')"
	is "$(grep -c 'HELD, not drained' "$T/runner.log")" 6 "$name: the runner logs HELD on each of the six"
	held=0
	for n in "${ZS_NODE_NAMES[@]}"; do
		[[ " $DRAINED " == *" $n "* ]] && continue
		line=$(cat "$(cluster_node_run "$n")/prom/zonesort-health.prom" 2>/dev/null)
		[[ "$line" == *"zonesort_health_check_last_verdict{node=\"$n\",verdict=\"held\"} 1"* ]] && held=$((held + 1))
	done
	is "$held" 6 "$name: the metrics of each held node say held"
}

wave "a low figure" "fail 2,held 6," -m 100000GB/s -k 0
like "$(of_job "$JOB" | jq -r 'select(.verdict == "held") | .reason' | head -1)" \
	"^triad [0-9.]+ GB/s < 100000 GB/s .*; held, not drained: [2-7] of 8 nodes \(cluster\) already drained or rebooting for check_hw_stream_triad, limit -G 2$" \
	"a low figure: the held reason"
for n in $DRAINED; do like "$(sinfo -h -N -n "$n" -o '%E')" "^zonesort: check_hw_stream_triad:  triad " "$n drained for the low figure"; done

ok "the two drained nodes resumed" scontrol update nodename="$(echo $DRAINED | tr ' ' ,)" state=resume
ok "every node is idle again" cluster_wait_idle 30
wave "a missing probe" "error 2,held 6," -m 1GB/s -k 1 -w 1 -P /nonexistent/stream-triad
like "$(of_job "$JOB" | jq -r 'select(.verdict == "held") | .reason' | head -1)" \
	"^error: probe /nonexistent/stream-triad not found \(on all 2 runs\); held, not drained: " \
	"a missing probe: retried once, then held, the reason says error"
for n in $DRAINED; do
	like "$(sinfo -h -N -n "$n" -o '%E')" "^zonesort: check_hw_stream_triad:  error: probe /nonexistent/stream-triad not found" \
		"$n drained with a reason that says error"
done

ok "the two drained nodes resumed again" scontrol update nodename="$(echo $DRAINED | tr ' ' ,)" state=resume
ok "every node is idle again" cluster_wait_idle 30
wave "a bad option in the options file" "error 2,held 6," -m 1GB/s -Z
like "$(of_job "$JOB" | jq -r 'select(.verdict == "held") | .reason' | head -1)" \
	"^error: zonesort-health-check: unknown option -Z \(/run/zs-hc.conf line 2\); see zonesort-health-check -h; held, not drained: " \
	"a bad option: held, the reason names it"

done_testing
