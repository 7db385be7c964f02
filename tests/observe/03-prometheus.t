#!/bin/bash
# The metrics reach Prometheus: a real cluster (slurmctld + slurmd) with the
# plugin (prometheus_dir=) and the bandwidth check as Epilog (-M DIR),
# Debian's node_exporter reading the textfile directory and Prometheus
# scraping it every second with the example alert rules. Prometheus' HTTP
# API must return what the test saw by itself: the sorts the counting
# stand-in of the kernel interface received (testbed/sortcount.sh; no
# module here), the triad the probe stand-in was told to report (no
# memory-side cache here to slow a node down), the verdicts; the bandwidth
# alert fires on the node the check drained; the sorter alert goes pending
# when the sorter is gone, with the degraded alert; the job end the plugin
# records precedes the check's run, so the stale-check alert stays silent;
# every query of the Grafana dashboard works. The textfile directory
# belongs to another user (uid 65534), as Debian's belongs to prometheus.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
source "$(dirname "$0")/prom.sh"
need srun sinfo scontrol jq curl promtool prometheus prometheus-node-exporter flock
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"
RULES=$ZS_SRCDIR/etc/prometheus-rules.zonesort.yml
DASHBOARD=$ZS_SRCDIR/etc/grafana-dashboard.zonesort.json

work=$(mktemp -d /tmp/zs-obs-prom.XXXXXX)
chmod 755 "$work"
textfile=$work/textfile
mkdir -p "$textfile"
chown 65534 "$textfile"
sortcount_start "$work"
trap 'prom_stop; cluster_stop; sortcount_stop; [ "$tap_failed" -gt 0 ] && diag "kept $work" || rm -rf "$work"' EXIT

# The probe the Epilog runs reports the triad written to $work/triad.
cat > "$work/probe" <<PROBE
#!/bin/sh
ST_BEST=\$(cat $work/triad) ST_MEDIAN=\$(cat $work/triad) exec $ZS_SRCDIR/testbed/stand-in-stream-triad "\$@"
PROBE
chmod 755 "$work/probe"
echo 40 > "$work/triad"
export ZS_HEALTH_CHECK_CONF=$work/hc.conf
echo "-P $work/probe -H $work/history.jsonl -b $work/baseline/ -l $work/hc.log -m 1GB/s -p 80 -M $textfile" > "$ZS_HEALTH_CHECK_CONF"

POLICY="$SC_POLICY min_period=1 prometheus_dir=$textfile"
ZS_PLUGSTACK_ARGS=$POLICY cluster_start_or_bail "Epilog=$ZS_NHC_DIR/zonesort-health-check"
ok "node_exporter and Prometheus start on loopback ports" prom_start "$textfile" "$RULES"
N="node=\"$ZS_NODE\""

quietly() { "$@" > /dev/null; }
hist_of() { [ -f "$work/history.jsonl" ] && jq -c --arg j "$1" 'select(.job == $j)' "$work/history.jsonl" | tail -1; }
has_hist() { [ -n "$(hist_of "$1")" ]; }
run_job() {	# ARGS...: a job; prints its id once its Epilog wrote the history
	local job
	job=$(srun "$@" sh -c 'echo $SLURM_JOB_ID; sleep 2.5' | head -1)
	wait_for 60 has_hist "$job" && echo "$job"
}

# --- a job at the post-boot bandwidth -----------------------------------
sortcount_reset
job=$(run_job --zonesort=1)
like "$job" '^[0-9]+$' "a job with --zonesort=1 ran and its Epilog checked the node ($job)"
cluster_wait_job_gone "$job" 30
sorts=$(sortcount)
is "$(jq -r .verdict <<< "$(hist_of "$job")")" pass "the check passed at 40 GB/s"
ok "Prometheus has the sorts the kernel interface received ($sorts)" \
	prom_wait "zonesort_sorts_total{$N,outcome=\"sorted\"}" "v == $sorts"
is "$(prom_value "sum(zonesort_sorts_total{$N})")" \
	"$(summary "$job" prolog | sed -n 's/.* \([0-9]*\) sorts\{0,1\}, \([0-9]*\) skipped.*, \([0-9]*\) busy, \([0-9]*\) failed.*/\1 \2 \3 \4/p' |
	   awk -v s="$(summary "$job" 'step 0' | sed -n 's/.* \([0-9]*\) sorts\{0,1\}, \([0-9]*\) skipped.*, \([0-9]*\) busy, \([0-9]*\) failed.*/\1 \2 \3 \4/p')" \
	   '{ split(s, t, " "); print $1 + $2 + $3 + $4 + t[1] + t[2] + t[3] + t[4] }')" \
	"every outcome the slurmd log's summaries count is counted"
is "$(prom_value "zonesort_sorter_up{$N,backend=\"kernel\"}")" 1 "the sorter is up, backend kernel"
num_ok "time spent sorting is counted" "$(prom_value "zonesort_sort_seconds_total{$N}") > 0"
ok "the triad the probe reported, in bytes per second" prom_wait "zonesort_triad_bytes_per_second{$N}" "v == 40e9"
is "$(prom_value "zonesort_triad_baseline_bytes_per_second{$N}")" 40000000000 "the first measurement is the baseline"
is "$(prom_value "zonesort_triad_baseline_ratio{$N}")" 1 "ratio 1"
is "$(prom_value "zonesort_health_checks_total{$N,verdict=\"pass\"}")" 1 "one passed check"
is "$(prom_value "zonesort_triad_min_baseline_ratio{$N}")" 0.8 "the check's -p 80 as 0.8"
epoch=$(jq -r .epoch <<< "$(hist_of "$job")")
is "$(prom_value "zonesort_health_check_last_timestamp_seconds{$N}")" "$epoch" "the time of the check ($epoch)"
ok "the plugin's job epilog recorded the job's end" prom_wait "zonesort_last_job_end_timestamp_seconds{$N}" "v > 0"
end=$(prom_value "zonesort_last_job_end_timestamp_seconds{$N}")
num_ok "... before the check ran ($end, the check's whole second $epoch)" "$end < $epoch + 1"
is "$(prom_value "zonesort_sorter_degraded{$N}")" 0 "a node sorted by its kernel interface is not degraded"

# --- the node slows down to half: drained, and the alert fires ----------
echo 20 > "$work/triad"
before=$(prom_value "zonesort_sorts_total{$N,outcome=\"sorted\"}")
job2=$(run_job --zonesort=on)
like "$job2" '^[0-9]+$' "a second job ran and was checked ($job2)"
is "$(jq -r .verdict <<< "$(hist_of "$job2")")" fail "the check failed at 20 GB/s (50% of the baseline)"
cluster_wait_job_gone "$job2" 30
ok "the node is drained" wait_for 30 _node_is drained
ok "Prometheus has the new triad" prom_wait "zonesort_triad_bytes_per_second{$N}" "v == 20e9"
is "$(prom_value "zonesort_triad_baseline_ratio{$N}")" 0.5 "at half the baseline"
is "$(prom_value "zonesort_health_checks_total{$N,verdict=\"fail\"}")" 1 "one failed check"
is "$(prom_value "zonesort_health_check_last_verdict{$N,verdict=\"fail\"}")" 1 "the last verdict is fail"
ok "the counters kept counting across jobs" prom_wait "zonesort_sorts_total{$N,outcome=\"sorted\"}" "v == $before + 1"
ok "ZonesortBandwidthBelowBaseline fires for the drained node" wait_for 20 _prom_alert_is ZonesortBandwidthBelowBaseline "$ZS_NODE" firing
is "$(prom_alert ZonesortBandwidthBelowLimit "$ZS_NODE")" "" "the absolute limit (1 GB/s) does not"

# --- back to speed: the alert resolves ------------------------------------
scontrol update nodename="$ZS_NODE" state=resume
cluster_wait_idle 30
echo 40 > "$work/triad"
job3=$(run_job --zonesort=on)
like "$job3" '^[0-9]+$' "after a resume, a job at full speed ($job3)"
cluster_wait_job_gone "$job3" 30
ok "the alert resolves" wait_for 20 _prom_alert_is ZonesortBandwidthBelowBaseline "$ZS_NODE" ""

# --- the module disappears: degraded, its alert pending (for: 5m) --------
cluster_plugstack "sorter=kernel sysfs=$work/gone statedir=$work/state nodes=0 min_period=1 prometheus_dir=$textfile $SC_CACHE"
job4=$(run_job --zonesort=on)
cluster_wait_job_gone "$job4" 30
ok "a cache node without its module is degraded" prom_wait "zonesort_sorter_degraded{$N}" "v == 1"
ok "ZonesortSorterDegraded is pending (for: 5m)" wait_for 20 _prom_alert_is ZonesortSorterDegraded "$ZS_NODE" pending
is "$(prom_alert ZonesortSorterDown "$ZS_NODE")" "" "... and not ZonesortSorterDown as well (nothing ran that could fail)"
is "$(prom_value "zonesort_sorts_total{$N,outcome=\"degraded\"}")" 2 "the prolog and the step were left unsorted (outcome degraded)"
is "$(prom_alert ZonesortHealthCheckStale "$ZS_NODE")" "" "the check ran after every job: no stale-check alert"

# --- the sorter fails: sorter_up 0, the alert pending (for: 15m) ---------
mkdir -p "$work/broken"
ln -s /dev/full "$work/broken/nodeid"
cluster_plugstack "sorter=kernel sysfs=$work/broken statedir=$work/state nodes=0 min_period=1 prometheus_dir=$textfile $SC_CACHE"
job5=$(run_job --zonesort=on)
cluster_wait_job_gone "$job5" 30
ok "a kernel interface whose writes fail: the sorter is down, backend kernel" prom_wait "zonesort_sorter_up{$N,backend=\"kernel\"}" "v == 0"
ok "ZonesortSorterDown is pending" wait_for 20 _prom_alert_is ZonesortSorterDown "$ZS_NODE" pending
is "$(prom_value "zonesort_sorter_degraded{$N}")" 0 "... a sorter that fails is not a missing one: not degraded"

# --- zonesort status --prometheus ------------------------------------------
status=$("$ZS_ZONESORT" status --json --cache-size 64M --ways 1 --prometheus "$textfile" statedir="$work/state" "sorter=kernel" "sysfs=$work/sysfs")
pot=$(jq '.nodes[] | select(.node == 0) | .free_slots.conflict_potential' <<< "$status")
rnd=$(jq '.nodes[] | select(.node == 0) | .free_slots.random_fraction' <<< "$status")
ok "the free-memory conflict potential of NUMA node 0 reaches Prometheus ($pot)" \
	prom_wait "zonesort_free_conflict_potential_ratio{$N,numa_node=\"0\"}" "v - $pot < 1e-6 && $pot - v < 1e-6"
num_ok "with its random reference ($rnd)" "$(prom_value "zonesort_free_conflict_random_ratio{$N,numa_node=\"0\"}") - $rnd < 1e-6"
is "$(prom_value "zonesort_memory_side_cache_bytes{$N,numa_node=\"0\"}")" 67108864 "the cache it assumed, in bytes"
is "$(prom_value "zonesort_sorter_usable{$N,numa_node=\"0\",backend=\"kernel\"}")" 1 "the sorter it would use can sort node 0"

# --- the files themselves, the rules and the dashboard -----------------------
for f in zonesort.prom zonesort-health.prom zonesort-status.prom; do
	out=$(promtool check metrics < "$textfile/$f" 2>&1)
	is "$out" "" "promtool check metrics: $f has no problem"
done
is "$(prom_value 'sum(node_textfile_scrape_error)')" 0 "node_exporter reads every file without error"
ok "promtool check rules accepts the example rules" quietly promtool check rules "$RULES"
ok "promtool test rules: the alerts fire as the rule tests say" sh -c "cd '$ZS_SRCDIR/tests/observe' && promtool test rules rules-test.yml > /dev/null"
ok "the dashboard is JSON" quietly jq -e '.panels | length > 0' "$DASHBOARD"
is "$(jq -c '.__inputs // [] | map(.name)' "$DASHBOARD")" "[]" "the dashboard declares no input (its data source is the template variable)"
titles=$(jq -r '.panels[].title' "$DASHBOARD")
for want in "Memory bandwidth per node" "relative to the post-boot baseline" "Slowest nodes" "Sorts per node" \
	"Sampled conflicts" "conflict potential" "Sorter up" "degraded"; do
	like "$titles" "$want" "the dashboard has a panel \"$want\""
done
while IFS= read -r expr; do
	q=${expr//\$node/.*}
	q=${q//\$__rate_interval/1m}
	res=$(prom_query "$q") || res=error
	like "$res" '^\[' "dashboard query runs: $expr"
done < <(jq -r '.panels[].targets[].expr' "$DASHBOARD")
like "$(prom_query "zonesort_triad_bytes_per_second{node=~\".*\"}")" "\"node\":\"$ZS_NODE\"" \
	"the bandwidth panel's query returns this node"
done_testing
