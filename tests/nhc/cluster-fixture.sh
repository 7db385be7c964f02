# What both real-cluster tests of the health-check runner set up: a work
# directory T with the history file HIST, a RebootProgram stand-in that
# records its calls in T/reboot.calls (no reboot can happen here), the
# runner's options file (conf OPTIONS... rewrites it; the runner finds it
# through ZS_HEALTH_CHECK_CONF in slurmd's environment), and a cleanup that
# stops the cluster and keeps T only when a test failed.
#
#   nhc_cluster_fixture PREFIX
nhc_cluster_fixture() {
	T=$(mktemp -d "/tmp/$1.XXXXXX")
	chmod 755 "$T"
	HIST=$T/history.jsonl
	cat > "$T/reboot-program" <<REBOOT
#!/bin/sh
echo "\$(date +%s) rebooted" >> $T/reboot.calls
REBOOT
	chmod 755 "$T/reboot-program"
	export ZS_HEALTH_CHECK_CONF=$T/hc.conf
	conf -m 1GB/s
	trap nhc_cluster_cleanup EXIT
}

# A 512 MiB probe without confirmation keeps each check short on a loaded
# machine; -T 20 -L 60 let it finish there (the default -T 5 is for a quiet
# node: these tests are about drains, not the time limit).
conf() {
	printf '%s\n' "-P $ZS_STREAM_TRIAD -H $HIST -b $T/state/ -l $T/runner.log -k 0 -s 512MiB -T 20 -L 60" "$*" > "$T/hc.conf"
}

nhc_cluster_cleanup() {
	local cluster=$ZS_CLUSTER
	cluster_stop
	if [ "$tap_failed" -gt 0 ]; then
		diag "kept $T and $cluster"
		[ -f "$T/runner.log" ] && diag "runner.log:" "$(tail -15 "$T/runner.log")"
	else
		rm -rf "$T"
	fi
}

# nhc_node_back_after_reboot: the node returns to service after the
# RebootProgram stand-in (which cannot reboot). Slurm 22.05 with
# ReturnToService=2 brings it back after ResumeTimeout, its reason cleared.
# From 24.11 the reboot times out instead: the node answers again but stays
# drained with "reboot timed out" added to the reason, which is right when
# no reboot happened; the test resumes it, as an administrator would (Slurm
# then keeps the old reason on the idle node until it is next set).
nhc_node_back_after_reboot() {
	local release
	release=$(cluster_slurm_release)
	if [ "${release:-0}" -ge 2411 ]; then
		reboot_timed_out() { [[ "$(sinfo -h -N -n "$ZS_NODE" -o '%T %E' | head -1)" == drained*"reboot timed out"* ]]; }
		ok "Slurm $release: the reboot that never happened times out, the node stays drained" \
			wait_for 120 reboot_timed_out
		ok "resumed by hand" scontrol update nodename="$ZS_NODE" state=resume
		ok "the node comes back to service" wait_for 60 _node_is idle
		diag "its reason after the resume: $(sinfo -h -N -n "$ZS_NODE" -o '%E' | head -1)"
		return
	fi
	ok "with ReturnToService=2 the node comes back to service" wait_for 120 _node_is idle
	is "$(sinfo -h -N -n "$ZS_NODE" -o '%E' | head -1)" none "and no reason is left"
}
