#!/bin/bash
# --zonesort is listed by srun, sbatch and salloc, and bad values are refused
# at submit time, before a job exists, with a message naming the value.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/cluster.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need srun sbatch salloc scontrol
need_file "$ZS_PLUGIN" "SPANK plugin"
need_file "$ZS_ZONESORT" "zonesort command"

sortcount_cluster zs-t01 min_period=10

for cmd in srun sbatch salloc; do
	help=$($cmd --help 2>&1)
	like "$help" '--zonesort=off\|on\|SECONDS' "$cmd --help lists --zonesort"
	like "$(printf "%s" "$help" | tr -s " \n" "  ")" "period in seconds \\(10-86400\\)" "$cmd --help states the site's period range"
done

before=$(next_jobid)
for v in '' abc -5 0 1e3 99999999999999999999 5 86401 ' 30' 30s; do
	out=$(srun --zonesort="$v" true 2>&1); rc=$?
	cmp_ok "$rc" -ne 0 "srun --zonesort='$v' exits non-zero"
	like "$out" "zonesort: invalid --zonesort value '$v': expected off, on, or a period in whole seconds from 10 to 86400" \
		"srun --zonesort='$v' names the value and the accepted forms"
done
for v in abc 0 5; do
	out=$(sbatch --zonesort="$v" --wrap true 2>&1); rc=$?
	cmp_ok "$rc" -ne 0 "sbatch --zonesort='$v' exits non-zero"
	like "$out" "invalid --zonesort value '$v'" "sbatch names '$v'"
	out=$(salloc --zonesort="$v" true 2>&1); rc=$?
	cmp_ok "$rc" -ne 0 "salloc --zonesort='$v' exits non-zero"
	like "$out" "invalid --zonesort value '$v'" "salloc names '$v'"
done
after=$(next_jobid)
is "$after" "$((before + 1))" "no job was created by any refused submission"

# A site that forbids off.
cluster_plugstack "$SC_POLICY min_period=10 allow_off=no"
before=$(next_jobid)
for cmd in srun sbatch; do
	if [ $cmd = srun ]; then out=$(srun --zonesort=off true 2>&1); else out=$(sbatch --zonesort=off --wrap true 2>&1); fi
	cmp_ok $? -ne 0 "$cmd --zonesort=off refused when allow_off=no"
	like "$out" 'zonesort: --zonesort=off is not allowed on this system; expected on or a period in seconds from 10 to 86400' \
		"$cmd explains that off is not allowed"
done
after=$(next_jobid)
is "$after" "$((before + 1))" "no job was created"
like "$(srun --help 2>&1 | tr -s " \n" "  ")" "off \\(not allowed here\\)" "--help says off is not allowed here"
like "$(srun --help 2>&1 | tr -s " \n" "  ")" "Default: on\\." "--help names the default, on"
cluster_plugstack "$SC_POLICY min_period=10 default=60"
like "$(srun --help 2>&1 | tr -s " \n" "  ")" "Default: 60 \\(every 60 s\\)\\." "--help names a periodic default with its period"

# Good values are accepted.
for v in off on 10 86400; do
	cluster_plugstack "$SC_POLICY min_period=10"
	out=$(srun -Q --zonesort=$v echo fine 2>&1)
	is "$out" "fine" "srun --zonesort=$v runs"
done
done_testing
