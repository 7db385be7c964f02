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

# A 512 MiB probe without confirmation keeps each check short on a loaded machine.
conf() {
	printf '%s\n' "-P $ZS_STREAM_TRIAD -H $HIST -b $T/state/ -l $T/runner.log -k 0 -s 512MiB" "$*" > "$T/hc.conf"
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
