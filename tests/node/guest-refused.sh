# Guest side of 40-module-refused.t. The guest kernel was booted with
# module.sig_enforce=1 or lockdown=integrity (ZS_REFUSED_MODE), what
# Secure Boot sets on a real node, and the project's module is unsigned:
# the kernel refuses it. zonesort status, zonesort sort, the plugin's
# summary line and the metrics must name the refusal while jobs run
# sorted by compaction. ZS_REFUSED_MODE=control: the same kernel and
# module without either setting, where the module loads.
. "$ZS_SRCDIR/testbed/node-guest-lib.sh"

# What systemd mounts on every node: where the kernel shows its lockdown.
mount -t securityfs securityfs /sys/kernel/security
M sig_enforce=$(cat /sys/module/module/parameters/sig_enforce) \
	lockdown=$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/security/lockdown)
gn_cap status_before zonesort status
gn_cap status_json zonesort status --json
gn_cap sort_modprobe zonesort sort modprobe=zonesort
gn_cap status_modprobe zonesort status modprobe=zonesort
M module_loaded_by_sort=$([ -d /sys/module/zonesort ] && echo yes || echo no)
if [ "$ZS_REFUSED_MODE" = control ]; then
	gn_cap dmesg_all dmesg
	exit 0
fi

mkdir -p "$GN_WORK/prom"
gn_step cluster 120 gn_cluster_start || exit 1
timeout --kill-after=5 300 srun -J refused --zonesort=on \
	sh -c 'echo "$SLURM_JOB_ID" > '"$GN_WORK/job.id" > /dev/null 2> "$GN_WORK/job.err"
M job_rc=$?
job=$(cat "$GN_WORK/job.id" 2>/dev/null)
cluster_wait_job_gone "$job" 120
gn_cap job_stderr cat "$GN_WORK/job.err"
echo "ZSTEST_BEGIN summary"
grep "zonesort: job $job[ :]" "$ZS_CLUSTER/log/slurmd.log" | sed 's/.*\] //'
echo "ZSTEST_DONE summary"
gn_cap metrics cat "$GN_WORK/prom/zonesort.prom"
M module_loaded=$([ -d /sys/module/zonesort ] && echo yes || echo no)
gn_step cluster_stop 120 cluster_stop
gn_cap dmesg_all dmesg
exit 0
