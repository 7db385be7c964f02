#!/bin/bash
# Unit tests of check_hw_stream_triad in LBNL NHC's own style: the .nhc file
# is sourced into this shell with die/log/dbg/syslog replaced, NHC's shell
# settings on (no globbing, extended globs), and the commands the check runs
# (stream-triad, squeue, scontrol) replaced by stand-ins.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
need jq timeout flock awk
need_file "$ZS_NHC_DIR/stream_triad.nhc" "the NHC check"

# jq_true ARGS...: jq -e, quiet; true when the filter yields true.
jq_true() { jq -e "$@" >/dev/null; }

T=$(mktemp -d /tmp/zs-nhc-check.XXXXXX)
trap 'rm -rf "$T"' EXIT
PROBE=$ZS_SRCDIR/testbed/stand-in-stream-triad
export ST_LOG=$T/probe.log

# squeue stand-in: prints $SQ_JOBS, exits $SQ_EXIT; scontrol stand-in:
# "listpids" lists steps of the jobs in $LP_JOBS (local slurmd state; calls
# in listpids.calls) or fails with $LP_ERROR; anything else is recorded in
# scontrol.calls and exits $SC_EXIT, and a drain, a reboot request, its
# cancellation or a resume of node7 changes node7's state (in node7.state),
# the way slurmctld would. sinfo stand-in: prints $SI_NODES (lines of
# node|partition|state|reason time|reason, the time in slurmctld's
# standard format) with node7's line from node7.state when there is one,
# each time in the format SLURM_TIME_FORMAT asks for, as sinfo does; calls
# in sinfo.calls. Faults: each scontrol (not listpids) and sinfo call takes
# the first line of sc.schedule or si.schedule when there is one: "fail"
# (refused, no effect), "commit-fail" (the change is made, then the call
# fails), "sleep N" (the change is made, the answer comes N s later),
# "sleep-first N" (waits N s before the change), "admin" (sinfo only: an
# administrator has just drained node7 with a reason of their own), "ok"
# or nothing. Once node7 is drained, sinfo adds $SI_NODES_AFTER_DRAIN
# (other nodes' drains it sees only from then on). Times: scontrol writes
# when it answered to sc.answered, sinfo when it was asked to si.asked.
cat > "$T/fault" <<'EOF'
# fault SCHEDULE: the next fault of SCHEDULE into FAULT and FAULT_ARG.
fault() {
	FAULT=ok FAULT_ARG=
	[ -s "$1" ] || return 0
	read -r FAULT FAULT_ARG < "$1"
	sed -i 1d "$1"
}
EOF
cat > "$T/squeue" <<'EOF'
#!/bin/bash
echo "$*" >> "${0%/*}/squeue.calls"
[ "${SQ_EXIT:-0}" = 0 ] || { echo "squeue: error: Unable to contact slurm controller" >&2; exit "$SQ_EXIT"; }
for j in ${SQ_JOBS:-}; do echo "$j"; done
EOF
cat > "$T/scontrol" <<'EOF'
#!/bin/bash
if [ "$1" = listpids ]; then
	echo "$*" >> "${0%/*}/listpids.calls"
	[ -z "${LP_ERROR:-}" ] || { echo "$LP_ERROR" >&2; exit 1; }
	[ -n "${LP_JOBS:-}" ] || { echo "No job steps exist on this node." >&2; echo "PID      JOBID    STEPID   LOCALID GLOBALID"; exit 1; }
	echo "PID      JOBID    STEPID   LOCALID GLOBALID"
	pid=100
	for j in $LP_JOBS; do echo "$((pid += 1))    $j        batch    0       0"; echo "$((pid += 1))    $j        0        -       -"; done
	exit 0
fi
. "${0%/*}/fault"
fault "${0%/*}/sc.schedule"
printf '%s\n' "$*" >> "${0%/*}/scontrol.calls"
[ "${SC_EXIT:-0}" = 0 ] || { echo "scontrol: error: RebootProgram isn't defined" >&2; exit "$SC_EXIT"; }
[ "$FAULT" = fail ] && { echo "scontrol: error: Unable to contact slurm controller" >&2; exit 1; }
[ "$FAULT" = sleep-first ] && sleep "$FAULT_ARG"
state=${0%/*}/node7.state now=$(date +%Y-%m-%dT%H:%M:%S)
case "$1 $3 $4" in
"update state=drain reason="*) [ "$2" = nodename=node7 ] && echo "node7|debug*|drain|$now|${4#reason=}" > "$state" ;;
"update state=resume ") [ "$2" = nodename=node7 ] && echo "node7|debug*|idle|Unknown|none" > "$state" ;;
"reboot nextstate=RESUME reason="*) [ "$5" = node7 ] && echo "node7|debug*|drng@|$now|${4#reason=}" > "$state" ;;
"cancel_reboot  ") [ "$2" = node7 ] && sed -i 's/@//' "$state" ;;
esac
[ "$FAULT" = sleep ] && sleep "$FAULT_ARG"
date +%s.%N > "${0%/*}/sc.answered"
[ "$FAULT" = commit-fail ] && { echo "scontrol: error: Socket timed out on send/recv operation" >&2; exit 1; }
exit 0
EOF
cat > "$T/sinfo" <<'EOF'
#!/bin/bash
. "${0%/*}/fault"
fault "${0%/*}/si.schedule"
echo "$*" >> "${0%/*}/sinfo.calls"
date +%s.%N >> "${0%/*}/si.asked"
[ "${SI_EXIT:-0}" = 0 ] || { echo "sinfo: error: Unable to contact slurm controller" >&2; exit "$SI_EXIT"; }
[ "$FAULT" = fail ] && { echo "sinfo: error: Socket timed out on send/recv operation" >&2; exit 1; }
[ "$FAULT" = sleep-first ] && sleep "$FAULT_ARG"
state=${0%/*}/node7.state
[ "$FAULT" = admin ] && echo "node7|debug*|drain|$(date +%Y-%m-%dT%H:%M:%S)|bad DIMM, ticket 42" > "$state"
# -n NODE: that node only; -o: the fields asked for.
only= fmt=
while [ $# -gt 0 ]; do case $1 in -n) only=$2; shift ;; -o) fmt=$2; shift ;; esac; shift; done
{ printf '%s\n' "${SI_NODES:-node7|debug*|idle|Unknown|none}"
  [ -s "$state" ] && [ -n "${SI_NODES_AFTER_DRAIN:-}" ] && printf '%s\n' "$SI_NODES_AFTER_DRAIN"; } |
	if [ -s "$state" ]; then awk -F'|' -v s="$(cat "$state")" '$1 == "node7" { print s; next } { print }'; else cat; fi |
	while IFS='|' read -r n p st t r; do
		[ -z "$only" ] || [ "$n" = "$only" ] || continue
		if [ "$t" != Unknown ]; then
			case ${SLURM_TIME_FORMAT:-standard} in
			standard) ;;
			relative) t=$(date -d "$t" '+%b %d %H:%M') ;;
			*) t=$(date -d "$t" "+$SLURM_TIME_FORMAT") ;;
			esac
		fi
		case $fmt in
		'%N|%P|%t|%H|%E') echo "$n|$p|$st|$t|$r" ;;
		'%t|%H|%E') echo "$st|$t|$r" ;;
		'%t|%E') echo "$st|$r" ;;
		*) echo "sinfo stand-in: unexpected -o '$fmt'" >&2; exit 2 ;;
		esac
	done
[ "$FAULT" = sleep ] && sleep "$FAULT_ARG"
exit 0
EOF
chmod +x "$T/squeue" "$T/scontrol" "$T/sinfo"
echo "11111111-2222-3333-4444-555555555555" > "$T/boot_id"

# What NHC provides, replaced the way NHC's test driver does.
die() { DIE_RC=$1; DIE_MSG="${*:2}"; return "$DIE_RC"; }
log() { LOG_MSG+="$*"$'\n'; }
dbg() { :; }
syslog() { :; }
set -f
shopt -s extglob
HOSTNAME=node7.example.org
HOSTNAME_S=node7
unset SLURMD_NODENAME SLURM_JOB_ID SLURM_JOBID

# NHC sources every .nhc file on each run: sourcing must only define things.
parts=(stream_triad.nhc stream_triad_probe.nhc stream_triad_state.nhc stream_triad_slurm.nhc stream_triad_guard.nhc)
for f in "${parts[@]}"; do
	is "$(PATH=/nonexistent; . "$ZS_NHC_DIR/$f" 2>&1; echo "rc=$?")" "rc=0" \
		"sourcing $f runs no command and prints nothing"
done
for f in "${parts[@]}"; do . "$ZS_NHC_DIR/$f"; done
is "$(type -t check_hw_stream_triad)" function "check_hw_stream_triad() loaded"
is "$(type -t nhc_stream_triad_reset)" function "nhc_stream_triad_reset() loaded"

STREAM_TRIAD_PROBE=$PROBE
STREAM_TRIAD_HISTORY=$T/history.jsonl
STREAM_TRIAD_BASELINE=$T/state/
STREAM_TRIAD_SQUEUE=$T/squeue
STREAM_TRIAD_SCONTROL=$T/scontrol
STREAM_TRIAD_SINFO=$T/sinfo
STREAM_TRIAD_BOOT_ID_FILE=$T/boot_id
# The sections below test one thing each; confirmation, the multi-run
# baseline and the drain guard have sections of their own.
STREAM_TRIAD_CONFIRM=0 STREAM_TRIAD_BASELINE_RUNS=1 STREAM_TRIAD_GUARD=off
# The time budget has a section of its own; the drain guard's settling
# pause is short here, where the stand-in slurmctld answers at once.
STREAM_TRIAD_BUDGET=3600 STREAM_TRIAD_SETTLE=0.2

# run ARGS...: one fresh check (no cached measurement), node7 in service.
run() {
	nhc_stream_triad_reset
	rm -f "$T/node7.state"
	DIE_RC='' DIE_MSG='' LOG_MSG=''
	check_hw_stream_triad "$@"
	RC=$?
}
probe_runs() { if [ -f "$ST_LOG" ]; then wc -l < "$ST_LOG"; else echo 0; fi; }
hist_lines() { if [ -f "$STREAM_TRIAD_HISTORY" ]; then wc -l < "$STREAM_TRIAD_HISTORY"; else echo 0; fi; }
last_hist() { tail -1 "$STREAM_TRIAD_HISTORY"; }

# --- pass and fail against an absolute minimum -------------------------------
run -m 30
is "$RC" 0 "passes: triad 40.5 GB/s against -m 30"
is "$DIE_RC" "" "a pass does not call die"
is "$STREAM_TRIAD_VERDICT" pass "verdict pass"
is "$(probe_runs)" 1 "the probe ran once"

ST_BEST=251.4 ST_THREADS=64 ST_SIZE_BYTES=12884901888 run -m 300GB/s
is "$RC" 1 "fails: triad 251.4 GB/s against -m 300GB/s"
is "$DIE_RC" 1 "die 1 on failure"
is "$DIE_MSG" "check_hw_stream_triad:  triad 251.4 GB/s < 300 GB/s (64 threads, 12 GiB)" \
	"the reason names the measured value, the limit, threads and size"
is "$STREAM_TRIAD_VERDICT" fail "verdict fail"

for m in 300 300GB/s 300gb/s 300000MB/s 0.3TB/s; do
	ST_BEST=299.9 run -m "$m"
	is "$RC" 1 "-m $m: 299.9 GB/s is below 300 GB/s"
	ST_BEST=300 run -m "$m"
	is "$RC" 0 "-m $m: exactly 300 GB/s passes"
done
ST_BEST=300 run -m 280GiB/s
like "$DIE_MSG" "triad 300 GB/s < 300\.6 GB/s" "-m 280GiB/s is 300.6 GB/s (binary unit)"
ST_BEST=0.5 run -m 600MB/s
like "$DIE_MSG" "triad 0\.5 GB/s < 0\.6 GB/s" "-m 600MB/s is 0.6 GB/s"

# --- relative to the post-boot baseline ---------------------------------------
BFILE=$T/state/stream-triad-baseline.node7.json
rm -f "$BFILE"
ST_BEST=40 run -p 80
is "$RC" 0 "first measurement after boot passes -p 80"
ok "baseline file written per node" test -s "$BFILE"
is "$(jq -r .boot_id "$BFILE")" "$(cat "$T/boot_id")" "baseline records the boot id"
is "$(jq -r '.entries[].triad_best_gbs' "$BFILE")" 40 "baseline records the triad of the first run"
like "$LOG_MSG" "post-boot baseline of node7: triad 40 GB/s" "logs that it recorded the baseline"
is "$(last_hist | jq -r .baseline_recorded)" true "history says the baseline was recorded"

ST_BEST=31.9 run -p 80
is "$RC" 1 "31.9 GB/s is below 80% of the 40 GB/s baseline"
is "$DIE_MSG" "check_hw_stream_triad:  triad 31.9 GB/s < 80% of post-boot 40 GB/s (2 threads, 768 MiB)" \
	"the reason names the value, the percentage and the baseline"
ST_BEST=32 run -p 80%
is "$RC" 0 "32 GB/s is 80% of the baseline: passes (-p 80%)"
is "$(jq -r '.entries[].triad_best_gbs' "$BFILE")" 40 "the baseline stays the first measurement of the boot"
ST_BEST=35 run -m 30 -p 90
is "$RC" 1 "both limits: 35 GB/s passes -m 30 but not 90% of 40"
like "$DIE_MSG" "< 90% of post-boot 40 GB/s" "the relative limit is named"
ST_BEST=25 run -m 30 -p 50
like "$DIE_MSG" "triad 25 GB/s < 30 GB/s" "both limits: the absolute one is reported first"

# A new boot id starts a new baseline.
echo "99999999-2222-3333-4444-555555555555" > "$T/boot_id"
ST_BEST=30 run -p 80
is "$RC" 0 "after a reboot the first measurement passes again"
is "$(jq -r .boot_id "$BFILE")" 99999999-2222-3333-4444-555555555555 "the baseline belongs to the new boot"
is "$(jq -r '.entries[].triad_best_gbs' "$BFILE")" 30 "the new boot's baseline is its first measurement"
ST_BEST=23.9 run -p 80
is "$RC" 1 "23.9 GB/s fails against 80% of the new baseline 30"
is "$(last_hist | jq -r .baseline_gbs)" 30 "history records the baseline compared against"

# One baseline per probe setting: a 1-thread run does not compare with 2 threads.
ST_BEST=12 ST_THREADS=1 run -p 80 -t 1
is "$RC" 0 "a 1-thread run gets a baseline of its own"
is "$(jq -r '.entries | length' "$BFILE")" 2 "two baselines in the file, one per setting"

# A measurement below the absolute minimum never becomes the baseline.
echo "aaaaaaaa-2222-3333-4444-555555555555" > "$T/boot_id"
ST_BEST=10 run -m 20 -p 80
is "$RC" 1 "first run of a boot below -m fails"
is "$(jq -r .boot_id "$BFILE")" 99999999-2222-3333-4444-555555555555 "and is not recorded as the baseline"
ST_BEST=30 run -m 20 -p 80
is "$(jq -r '[.boot_id, (.entries[].triad_best_gbs)] | join(" ")' "$BFILE")" \
	"aaaaaaaa-2222-3333-4444-555555555555 30" "the first good run of the boot is the baseline"

# -b as a file, and a baseline that cannot be written.
ST_BEST=30 run -p 80 -b "$T/one-baseline.json"
ok "-b FILE: the baseline goes to that file" test -s "$T/one-baseline.json"
mkdir -p "$T/ro" && echo x > "$T/ro/blocker"
ST_BEST=30 run -p 80 -b "$T/ro/blocker/base.json"
is "$RC" 1 "-p without a writable baseline fails (no silent pass)"
like "$DIE_MSG" "cannot record the post-boot baseline in $T/ro/blocker/base.json" "and says where"
ST_BEST=30 run -m 20 -b "$T/ro/blocker/base.json"
is "$RC" 0 "-m alone does not need the baseline"
: > "$T/no-boot-id"
STREAM_TRIAD_BOOT_ID_FILE=$T/no-boot-id
ST_BEST=30 run -p 80
like "$DIE_MSG" "cannot read the boot id" "-p without a boot id fails and says so"
STREAM_TRIAD_BOOT_ID_FILE=$T/boot_id

# --- NUMA mode ------------------------------------------------------------------
: > "$ST_LOG"
ST_NUMA="0:40 1:40" run -n -p 80
is "$RC" 0 "-n: first run records a baseline per NUMA node"
like "$(cat "$ST_LOG")" "numa=1" "-n passes --numa to the probe"
is "$(last_hist | jq -c '[.numa[].node]')" "[0,1]" "history lists the NUMA nodes"
ST_NUMA="0:40 1:31" run -n -p 80
is "$RC" 1 "-n: NUMA node 1 below 80% of its own baseline fails"
like "$DIE_MSG" "triad on NUMA node 1 31 GB/s < 80% of its post-boot 40 GB/s" "the reason names the NUMA node"
ST_NUMA="0:40 1:25" run -n -m 30
like "$DIE_MSG" "triad on NUMA node 1 25 GB/s < 30 GB/s" "-n -m: each NUMA node must reach the minimum"
ST_OUTPUT='{"threads":2,"size_bytes":1000,"kernels":{"triad":{"best_gbs":40,"median_gbs":39}},"numa":[],"validation":"passed"}' run -n -m 30
like "$DIE_MSG" "reported no NUMA node" "-n with an empty numa list fails"

# --- what the probe is given ------------------------------------------------------
: > "$ST_LOG"
run -m 1 -t 4 -s 12GiB
like "$(cat "$ST_LOG")" "size=12GiB numa=0 threads=4" "-t sets OMP_NUM_THREADS, -s passes --size"
like "$STREAM_TRIAD_REASON" "4 threads" "the reason uses the threads the probe reports"

# --- malformed arguments: each fails, names itself, and runs no probe -------------
# A die message carries no quote (NHC evals it inside single quotes,
# scontrol drops a double quote that ends a reason): the check's 'value'
# comes out as `value`.
bad() {	# description pattern args...
	local desc=$1 pat=${2//\'/\`} before
	shift 2
	before=$(probe_runs)
	run "$@"
	if [ "$RC" = 1 ] && [ "$DIE_RC" = 1 ] && printf '%s' "$DIE_MSG" | grep -Eq -- "$pat" &&
	   [ "$(probe_runs)" = "$before" ]; then
		_tap_result 0 "malformed: $desc"
	else
		_tap_result 1 "malformed: $desc"
		diag "rc=$RC die=$DIE_RC msg='$DIE_MSG' want /$pat/"
	fi
}
bad "-m abc" "-m: 'abc' is not a bandwidth" -m abc
bad "-m 0" "-m: '0' is not a bandwidth.*positive" -m 0
bad "-m -5" "-m: '-5' is not a bandwidth" -m -5
bad "-m 300GB (no /s)" "-m: '300GB' is not a bandwidth" -m 300GB
bad "-m '300 GB/s' (blank)" "-m: '300 GB/s' is not a bandwidth" -m "300 GB/s"
bad "-m ''" "-m: '' is not a bandwidth" -m ""
bad "-m ." "-m: '\.' is not a bandwidth" -m .
bad "-p 0" "-p: '0' is not a percentage" -p 0
bad "-p 101" "-p: '101' is not a percentage" -p 101
bad "-p abc" "-p: 'abc' is not a percentage" -p abc
bad "-p 80%%" "-p: '80%%' is not a percentage" -p 80%%
bad "-t 0" "-t: '0' is not a thread count" -m 1 -t 0
bad "-t 1.5" "-t: '1\.5' is not a thread count" -m 1 -t 1.5
bad "-t x" "-t: 'x' is not a thread count" -m 1 -t x
bad "-s 12XB" "-s: '12XB' is not a size" -m 1 -s 12XB
bad "-s 1.5 (fraction needs a unit)" "-s: '1\.5' is not a size" -m 1 -s 1.5
bad "-s 0" "-s: '0' is not a size" -m 1 -s 0
bad "-r maybe" "-r: 'maybe' is not a yes/no value" -m 1 -r maybe
bad "-r YES (case matters, as in zonesort)" "-r: 'YES' is not a yes/no value" -m 1 -r YES
bad "-T 0" "-T: '0' is not a time limit" -m 1 -T 0
bad "-T abc" "-T: 'abc' is not a time limit" -m 1 -T abc
bad "-T 90000" "-T: '90000' is not a time limit" -m 1 -T 90000
bad "-P ''" "-P: empty probe path" -m 1 -P ""
bad "-H ''" "-H: '' is not a file name" -m 1 -H ""
bad "-H dir/" "-H: '$T/' is not a file name" -m 1 -H "$T/"
bad "-b ''" "-b: empty baseline path" -m 1 -b ""
bad "unknown -x" "unknown option -x" -m 1 -x
bad "-m without a value" "option -m needs a value" -m
bad "a stray argument" "unexpected argument 'foo'" -m 1 foo
bad "no limit at all" "no limit given" -t 2
like "$DIE_MSG" "^check_hw_stream_triad:  " "messages start with the check's name"

# --- never a false pass: every way the probe can fail --------------------------
failing() {	# description pattern [VAR=value...] -- args...
	local desc=$1 pat=${2//[\'\"]/\`}
	shift 2
	local -a envs=( )
	while [ "$1" != -- ]; do envs+=( "$1" ); shift; done
	shift
	nhc_stream_triad_reset
	DIE_RC='' DIE_MSG=''
	env_run() { local e; for e in "${envs[@]}"; do export "${e?}"; done; check_hw_stream_triad "$@"; }
	( env_run "$@"; echo "rc=$? die=$DIE_RC msg=$DIE_MSG verdict=$STREAM_TRIAD_VERDICT" ) > "$T/out"
	like "$(cat "$T/out")" "^rc=1 die=1 msg=check_hw_stream_triad:  .*$pat.* verdict=error" "fails: $desc"
}
failing "probe missing" "probe $T/nope not found" -- -m 1 -P "$T/nope"
: > "$T/not-exec"
failing "probe not executable" "probe $T/not-exec is not an executable file" -- -m 1 -P "$T/not-exec"
failing "probe not in PATH" "probe no-such-stream-triad not found in PATH" -- -m 1 -P no-such-stream-triad
failing "garbage output" "output is not the expected JSON.*'garbage here'" "ST_OUTPUT=garbage here" -- -m 1
failing "empty output" "output is not the expected JSON \(not one JSON object\)" "ST_OUTPUT=" -- -m 1
failing "two JSON objects" "not one JSON object" 'ST_OUTPUT={"a":1} {"b":2}' -- -m 1
failing "no triad in the JSON" "kernels.triad.best_gbs is not a bandwidth" \
	'ST_OUTPUT={"threads":2,"size_bytes":1,"kernels":{"copy":{"best_gbs":1}},"numa":[],"validation":"passed"}' -- -m 1
failing "a negative bandwidth" "kernels.triad.best_gbs is not a bandwidth" "ST_BEST=-3" -- -m 1
failing "a bandwidth that is a string" "kernels.triad.best_gbs is not a bandwidth" 'ST_BEST="40"' -- -m 1
failing "a zero bandwidth" "reports a triad bandwidth of 0" "ST_BEST=0" -- -m 0.001
failing "validation failed in the JSON, exit 0" 'reports validation "failed", not "passed"' "ST_VALIDATION=failed" -- -m 1
failing "exit 1" "exited 1 .*: stream-triad: too slow" "ST_EXIT=1" "ST_STDERR=too slow" -- -m 1
failing "exit 2 (usage)" "rejected its arguments \(exit 2\): stream-triad: --size: 'x' is not a size" \
	"ST_EXIT=2" "ST_STDERR=--size: 'x' is not a size" -- -m 1
failing "exit 3 (cannot measure)" "could not measure \(exit 3\): stream-triad: cannot allocate 3 GiB" \
	"ST_EXIT=3" "ST_STDERR=cannot allocate 3 GiB" -- -m 1
failing "exit 4 (validation)" "validation failed \(exit 4\): stream-triad: triad result wrong" \
	"ST_EXIT=4" "ST_STDERR=triad result wrong" -- -m 1
failing "a crash (exit 139)" "died of signal 11" "ST_EXIT=139" -- -m 1
failing "an unknown exit code" "failed with exit 9" "ST_EXIT=9" -- -m 1
start=$(date +%s.%N)
failing "timeout" "stand-in-stream-triad timed out after 1 s" "ST_SLEEP=6" -- -m 1 -T 1
num_ok "the timeout stops the probe within a second or two" "$(date +%s.%N) - $start < 4"
failing "no jq" "jq-missing not found" "STREAM_TRIAD_JQ=jq-missing" -- -m 1
ST_EXIT=3 ST_STDERR="cannot allocate" run -m 1 -r yes
[ -f "$T/scontrol.calls" ] && calls=$(cat "$T/scontrol.calls") || calls=''
is "$calls" "" "a probe failure asks for no reboot (a reboot would not help)"

# --- history: one well-formed JSON line per run -----------------------------------
n0=$(hist_lines)
SLURM_JOB_ID=4242 ST_BEST=41.25 ST_MEDIAN=40.5 run -m 30
is "$(hist_lines)" $((n0 + 1)) "a run appends one line"
line=$(last_hist)
ok "the line is one JSON object" jq_true 'type == "object"' <<< "$line"
is "$(jq -r '[.node, .job, .verdict] | join(" ")' <<< "$line")" "node7 4242 pass" "node, job id (SLURM_JOB_ID) and verdict"
is "$(jq -r '[.triad_best_gbs, .triad_median_gbs, .threads, .size_bytes, .min_gbs] | map(type) | unique | join(" ")' <<< "$line")" number \
	"triad best and median, threads, size and limit are numbers"
is "$(jq -r '[.triad_best_gbs, .triad_median_gbs] | join(" ")' <<< "$line")" "41.25 40.5" "the probe's values"
is "$(jq -r .boot_id <<< "$line")" "$(cat "$T/boot_id")" "the boot id"
like "$(jq -r .time <<< "$line")" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}[+-][0-9]{4}$' "an ISO 8601 time"
num_ok "an epoch time of now" "$(jq -r .epoch <<< "$line") >= $(date +%s) - 60"
ST_BEST=10 run -m 30
is "$(last_hist | jq -r '[.verdict, .reason] | join(": ")')" "fail: triad 10 GB/s < 30 GB/s (2 threads, 768 MiB)" "a failure's line has its reason"
ST_EXIT=3 run -m 30
is "$(last_hist | jq -r .verdict)" error "a probe failure's line says error"
ok "every history line is valid JSON with a verdict" \
	jq_true -s 'length > 20 and all(.[]; (.verdict | IN("pass", "fail", "error", "skip", "held")) and (.node | type) == "string")' "$STREAM_TRIAD_HISTORY"
n0=$(hist_lines)
run -m 30 -H none
is "$(hist_lines)" "$n0" "-H none writes no history"
run -m 30 -H "$T/other/h.jsonl"
is "$(jq -r .verdict "$T/other/h.jsonl")" pass "-H FILE writes there (creating the directory)"

# --- other jobs on the node -----------------------------------------------------------
: > "$ST_LOG"
: > "$T/squeue.calls"
: > "$T/listpids.calls"
LP_JOBS="12 13" run -m 30
is "$RC" 0 "other jobs running: the check skips (no failure)"
is "$STREAM_TRIAD_VERDICT" skip "verdict skip"
is "$(probe_runs)" 0 "the probe did not run"
like "$LOG_MSG" "skipped: other jobs run on node7: 12 13" "a log line says why"
is "$(last_hist | jq -r '[.verdict, .reason] | join(": ")')" "skip: other jobs run on node7: 12 13" "history records the skip"
is "$(cat "$T/listpids.calls")" "listpids" "asks the local slurmd's job steps (scontrol listpids)"
is "$(cat "$T/squeue.calls")" "" "and not slurmctld (no squeue)"
SLURM_JOB_ID=12 LP_JOBS=12 run -m 30
is "$STREAM_TRIAD_VERDICT" pass "the job whose Epilog this is does not count"
SLURM_JOB_ID=12 LP_JOBS="12 14" run -m 30
like "$LOG_MSG" "other jobs run on node7: 14;" "but any other job does"
LP_JOBS="12 13" run -m 30 -f
is "$STREAM_TRIAD_VERDICT" pass "-f measures anyway"
run -m 30
is "$STREAM_TRIAD_VERDICT" pass "no job steps on the node: measures"
is "$(cat "$T/squeue.calls")" "" "without asking slurmctld"
LP_ERROR="scontrol: error: unexpected" SQ_JOBS="21" run -m 30
is "$(head -1 "$T/squeue.calls")" "-h -w node7 -t R -o %A" "listpids failing otherwise: asks slurmctld (squeue) instead"
like "$LOG_MSG" "other jobs run on node7: 21" "and skips for the jobs it names"
LP_ERROR="scontrol: error: unexpected" SQ_EXIT=1 run -m 30
is "$STREAM_TRIAD_VERDICT" skip "both failing: skip (contention cannot be ruled out)"
like "$LOG_MSG" "cannot ask Slurm which jobs run on node7 \(squeue: error: Unable to contact" "with squeue's message"
SLURMD_NODENAME=nid00042 LP_JOBS=1 run -m 30
like "$LOG_MSG" "other jobs run on nid00042" "the node name is \$SLURMD_NODENAME when set"
STREAM_TRIAD_NODE=cn5 LP_JOBS=1 run -m 30
like "$LOG_MSG" "other jobs run on cn5" "STREAM_TRIAD_NODE overrides it"

# Another check holding the lock (say the Epilog and HealthCheckProgram at once).
mkdir -p "$T/state"
flock "$T/state/.stream-triad.lock" sleep 3 &
sleep 0.3
run -m 30
is "$STREAM_TRIAD_VERDICT" skip "a second check at the same time skips"
like "$LOG_MSG" "another stream-triad check is running" "and says so"
wait

# --- reboot request ----------------------------------------------------------------------
: > "$T/scontrol.calls"
ST_BEST=10 run -m 30 -r no
is "$(cat "$T/scontrol.calls")" "" "-r no: no scontrol call (NHC marks the node offline)"
is "$DIE_RC" 1 "-r no: die"
ST_BEST=10 run -m 30 -r yes
is "$(cat "$T/scontrol.calls")" \
	"reboot ASAP nextstate=RESUME reason=NHC: check_hw_stream_triad:  triad 10 GB/s < 30 GB/s (2 threads, 768 MiB) node7" \
	"-r yes: scontrol reboot ASAP nextstate=RESUME with an NHC: reason naming value and limit"
is "$STREAM_TRIAD_REBOOT_REQUESTED" 1 "the check remembers it asked for a reboot"
is "$DIE_RC" 1 "and still fails (die) so NHC logs it"
is "$(last_hist | jq -r .reboot)" requested "history records the reboot request"
: > "$T/scontrol.calls"
SC_EXIT=1 ST_BEST=10 run -m 30 -r on
is "$STREAM_TRIAD_REBOOT_REQUESTED" 0 "scontrol refusing: no reboot requested"
like "$LOG_MSG" "scontrol reboot node7 failed \(scontrol: error: RebootProgram" "logged with scontrol's words"
is "$DIE_RC" 1 "the node is still marked offline (die)"

# --- several check lines share one measurement ------------------------------------------
: > "$ST_LOG"
nhc_stream_triad_reset
check_hw_stream_triad -m 30
check_hw_stream_triad -m 20 -p 50
is "$(probe_runs)" 1 "two check lines with the same probe settings run the probe once"
is "$(last_hist | jq -r .cached)" true "the second line is marked cached in the history"
check_hw_stream_triad -m 30 -t 1
is "$(probe_runs)" 2 "other probe settings measure again"

# Figures in reasons: one decimal, none when it rounds to a whole number.
is "$(nhc_stream_triad_fmt_gbs 300) $(nhc_stream_triad_fmt_gbs 251.43) $(nhc_stream_triad_fmt_gbs 44.969) $(nhc_stream_triad_fmt_gbs 0.04)" \
	"300 251.4 45 0" "bandwidths in reasons: 300, 251.4, 45 (from 44.969), 0"
# --- options of confirmation, baseline and guard: bad values named -----------------------
for bad in "-k x" "-k 11" "-k -1" "-w abc" "-w 601" "-B 0" "-B 21" "-G 0" "-G 0%" "-G 101%" "-G many" "-g rack" "-L 0" "-L x" "-R 12XB" "-R 0d"; do
	set -- $bad
	: > "$ST_LOG"
	run -m 30 "$1" "$2"
	is "$RC/$DIE_RC/$(probe_runs)" "1/1/0" "$bad: rejected before measuring"
	like "$DIE_MSG" "$1: \`$2\` is not a .*; expected " "$bad: the message names the value and what is accepted"
done

# --- confirmation: a low measurement is measured again before the node fails ---------------
SEQ=$T/best.seq
printf '%s\n' 10 35 > "$SEQ"
: > "$ST_LOG"
ST_BEST_SEQ=$SEQ run -m 30 -k 2 -w 0 -T 20
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "10 GB/s, then 35 on the first confirmation: passes"
is "$(probe_runs)" 2 "the probe ran twice (no second confirmation needed)"
is "$(sed -n 2p "$ST_LOG")" "args size= numa=0 threads=unset repeats=40" \
	"the confirmation runs 4 times the first run's repetitions (10)"
is "$(last_hist | jq -c '[.verdict, .triad_best_gbs, .confirm_gbs, .confirm_repeats]')" '["pass",10,[35],40]' \
	"the history keeps the first figure and the confirmation's"
like "$LOG_MSG" "not confirmed: triad 10 GB/s < 30 GB/s .*then triad 35 GB/s on confirmation 1 of 2" "the log says the failure was not confirmed"

printf '%s\n' 10 12 11 > "$SEQ"
: > "$ST_LOG"
ST_BEST_SEQ=$SEQ run -m 30 -k 2 -w 0
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT" "1/1/fail" "10, 12, 11 GB/s: the failure is confirmed"
is "$(probe_runs)" 3 "one run and two confirmations"
is "$DIE_MSG" "check_hw_stream_triad:  triad 10 GB/s < 30 GB/s (2 threads, 768 MiB), confirmed: 12, 11 GB/s" \
	"the reason names the first figure and the confirmations"
is "$(last_hist | jq -c .confirm_gbs)" "[12,11]" "the history records both confirmations"

printf '%s\n' 10 35 > "$SEQ"
: > "$ST_LOG"
ST_BEST_SEQ=$SEQ run -m 30 -k 0
is "$RC/$(probe_runs)" "1/1" "-k 0: no confirmation, fails on the first run"

printf '%s\n' 10 12 > "$SEQ"
t0=$EPOCHREALTIME
ST_BEST_SEQ=$SEQ run -m 30 -k 1 -w 1.5
num_ok "-w 1.5: the confirmation waits 1.5 s first ($(awk -v a="${t0/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { print b - a }') s)" \
	"$(awk -v a="${t0/,/.}" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { print b - a }') >= 1.5"

# The confirmation's repetitions stay within half the time -T leaves:
# 768 MiB at 10 GB/s is 0.08 s a repetition; -T 1 leaves about 0.5 s: 6 more.
printf '%s\n' 10 12 > "$SEQ"
: > "$ST_LOG"
ST_BEST_SEQ=$SEQ run -m 30 -k 1 -w 0 -T 1
like "$(sed -n 2p "$ST_LOG")" "repeats=1[0-6]$" "-T 1: the confirmation adds only what fits ($(sed -n 2p "$ST_LOG"))"

# Relative limit: confirmed against the same baseline.
echo "cccccccc-2222-3333-4444-555555555555" > "$T/boot_id"
ST_BEST=40 run -p 80
printf '%s\n' 25 38 > "$SEQ"
ST_BEST_SEQ=$SEQ run -p 80 -k 1 -w 0
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "-p 80: 25 then 38 GB/s against the baseline 40 passes"
ST_BEST=25 run -p 80 -k 1 -w 0
like "$DIE_MSG" "triad 25 GB/s < 80% of post-boot 40 GB/s \(2 threads, 768 MiB\), confirmed: 25 GB/s" "25 twice fails"

# A second check line shares the first one's measurement; a figure that
# fails its own, higher limit is confirmed by runs of its own.
nhc_stream_triad_reset
: > "$ST_LOG"
printf '%s\n' 35 45 > "$SEQ"
DIE_RC=''
ST_BEST_SEQ=$SEQ check_hw_stream_triad -m 30 -k 1 -w 0
ST_BEST_SEQ=$SEQ check_hw_stream_triad -m 40 -k 1 -w 0
is "$?/$DIE_RC/$(probe_runs)" "0//2" "35 GB/s passes -m 30; against -m 40 it is confirmed first (45 GB/s): passes"
is "$(last_hist | jq -c '[.cached, .confirm_gbs]')" "[true,[45]]" "the history shows the shared figure and its confirmation"

# --- post-boot baseline: the median of the first -B good runs ------------------------------
echo "dddddddd-2222-3333-4444-555555555555" > "$T/boot_id"
for b in 17 40 41 60; do ST_BEST=$b run -p 50 -B 3; done
is "$(jq -c '.entries[] | [.runs, .triad_best_gbs, (.samples | map(.triad_best_gbs))]' "$BFILE")" '[3,40,[17,40,41]]' \
	"-B 3: runs of 17, 40, 41 (then 60): the baseline is their median, 40 (one disturbed run does not set it)"
is "$(last_hist | jq -c '[.baseline_gbs, .baseline_runs]')" "[40,3]" "the history says which baseline and of how many runs"
echo "eeeeeeee-2222-3333-4444-555555555555" > "$T/boot_id"
ST_BEST=40 run -p 80 -B 3
is "$(jq -r '.entries[].triad_best_gbs' "$BFILE")" 40 "first run of a boot: the baseline is it, for now"
ST_BEST=20 run -p 80 -B 3
is "$RC" 1 "a run below -p of the baseline so far fails"
is "$(jq -c '.entries[] | [.runs, .triad_best_gbs]' "$BFILE")" "[1,40]" "and does not become a sample"
ST_BEST=44 run -p 80 -B 3
is "$(jq -c '.entries[] | [.runs, .triad_best_gbs]' "$BFILE")" "[2,42]" "two samples: their mean"
like "$LOG_MSG" "post-boot baseline of node7: triad 42 GB/s \(2 threads, 768 MiB\), median of 2 of 3 runs" "logged with how many runs"
ST_NUMA="0:40 1:30" run -n -p 80 -B 2
ST_NUMA="0:44 1:34" run -n -p 80 -B 2
is "$(jq -c '.entries["threads=2,size=805306368,numa=1"].numa | map([.node, .triad_best_gbs])' "$BFILE")" "[[0,42],[1,32]]" \
	"-n: a median per NUMA node"
# A file written before samples were kept: its one figure counts as one run.
jq -c '.entries |= map_values(del(.samples, .runs))' "$BFILE" > "$BFILE.old" && mv "$BFILE.old" "$BFILE"
ST_BEST=42 run -p 80 -B 3
is "$(jq -c '.entries["threads=2,size=805306368,numa=0"] | [.runs, .triad_best_gbs]' "$BFILE")" "[2,42]" \
	"an older baseline without samples counts as one run"

# --- drain guard: count, drain, count again in slurmctld's order, release beyond the limit ----
reason="NHC: check_hw_stream_triad:  triad 10 GB/s < 30 GB/s"
NODES4="node7|debug*|idle|Unknown|none
n1|debug*|drain|2020-01-01T00:00:00|$reason
n2|debug*|drng@|2020-01-02T00:00:00|zonesort: check_hw_stream_triad:  triad 9 GB/s < 30 GB/s
n3|debug*|drain|2020-01-01T00:00:00|maintenance by admin"
node7() { if [ -s "$T/node7.state" ]; then cut -d'|' -f3 "$T/node7.state"; else echo idle; fi; }
node7_reason() { if [ -s "$T/node7.state" ]; then cut -d'|' -f5 "$T/node7.state"; else echo none; fi; }
# guard_run ARGS...: a check with fresh call logs and fault schedules.
guard_run() {
	: > "$T/sinfo.calls"; : > "$T/scontrol.calls"; : > "$T/si.asked"
	rm -f "$T/sc.schedule" "$T/si.schedule" "$T/sc.answered"
	[ -n "${SC_FAULTS:-}" ] && printf '%s\n' $SC_FAULTS | sed 's/_/ /' > "$T/sc.schedule"
	[ -n "${SI_FAULTS:-}" ] && printf '%s\n' $SI_FAULTS | sed 's/_/ /' > "$T/si.schedule"
	run "$@"
}
sc_calls() { tr '\n' ';' < "$T/scontrol.calls"; }
drain7="update nodename=node7 state=drain reason=NHC: check_hw_stream_triad:  triad 10 GB/s < 30 GB/s (2 threads, 768 MiB)"

guard_run -m 30 -G 1
is "$(cat "$T/sinfo.calls")$(cat "$T/scontrol.calls")" "" "a passing check asks slurmctld nothing"
SI_NODES=$NODES4 ST_BEST=10 guard_run -m 30 -G 3
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT" "1/1/fail" "-G 3: n1 and n2 drained for this check (through NHC and the runner), the admin's n3 not: fails"
is "$(cat "$T/scontrol.calls")" "$drain7" "the guard drains the node itself, with the check's reason"
is "$(node7)/$STREAM_TRIAD_DRAINED" "drain/1" "node7 stays drained, and the runner is told not to drain again"
is "$(head -1 "$T/sinfo.calls")" "-h -N -o %N|%P|%t|%H|%E" "sinfo lists each node's state, reason time and reason"
is "$(wc -l < "$T/sinfo.calls")" 2 "once before the drain, once after it"
is "$(last_hist | jq -c '[.verdict, .guard_drained, .guard_nodes, .guard_limit]')" '["fail",2,4,3]' "the history has the counts"
is "$DIE_MSG" "${drain7#*reason=NHC: }" "the check dies with the reason it drained with (NHC marks the same, its stamp stays)"

SI_NODES=$NODES4 ST_BEST=10 guard_run -m 30 -G 2 -r yes
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT" "0//held" "two nodes drained before it, -G 2: held (no die, NHC marks nothing)"
is "$(sc_calls)" "" "beyond the limit already: neither a drain nor a reboot request"
like "$LOG_MSG" "HELD: triad 10 GB/s < 30 GB/s \(2 threads, 768 MiB\); held, not drained: 2 of 4 nodes \(cluster\) already drained or rebooting for check_hw_stream_triad, limit -G 2" \
	"logged loudly with the counts and the limit"
is "$(last_hist | jq -c '[.verdict, .guard_drained, .guard_nodes, .guard_limit, .guard_hold]')" '["held",2,4,2,"limit"]' \
	"the history says held, with the counts and the cause"
SI_NODES=$NODES4 ST_BEST=10 guard_run -m 30 -G 50%
is "$STREAM_TRIAD_VERDICT/$(node7)" held/idle "-G 50%: 2 of 4 nodes is the limit: held"
SI_NODES=$NODES4 ST_BEST=10 guard_run -m 30 -G 75%
is "$STREAM_TRIAD_VERDICT/$(node7)" fail/drain "-G 75%: the limit is 3 nodes: fails, drained"

# Another node drained in the same second, seen only after the drain: it
# comes first (same stamp, name n0 < node7), and node7 releases itself.
now=$(date +%Y-%m-%dT%H:%M:%S)
SI_NODES="node7|debug*|idle|Unknown|none
n1|debug*|drain|2020-01-01T00:00:00|$reason" SI_NODES_AFTER_DRAIN="n0|debug*|drain|$now|$reason" \
	ST_BEST=10 guard_run -m 30 -G 2 -r yes
is "$STREAM_TRIAD_VERDICT/$(node7)" held/idle "a node stamped in the same second, first by name, comes to light after the settling pause: held"
is "$(sc_calls)" "reboot ASAP nextstate=RESUME reason=NHC: check_hw_stream_triad:  triad 10 GB/s < 30 GB/s (2 threads, 768 MiB) node7;cancel_reboot node7;update nodename=node7 state=resume;" \
	"-r yes: the reboot request was the drain; beyond the limit it is cancelled and the node resumed"
is "$STREAM_TRIAD_REBOOT_REQUESTED/$STREAM_TRIAD_DRAINED" "0/0" "no reboot pending, nothing drained"
is "$(last_hist | jq -c '[.verdict, .guard_drained, .guard_limit, .guard_hold, .guard_release]')" '["held",2,2,"limit","done"]' \
	"the history says held, and that the release is done"

# The order is slurmctld's time, whatever the caller's SLURM_TIME_FORMAT:
# "relative" times ("Oct 01 ..." after "Nov 28 ...") do not compare as text.
SI_NODES="node7|debug*|idle|Unknown|none
n1|debug*|drain|2020-02-01T00:00:00|$reason
n2|debug*|drain|2020-10-01T00:00:00|$reason" SI_NODES_AFTER_DRAIN='' SLURM_TIME_FORMAT=relative ST_BEST=10 guard_run -m 30 -G 2
is "$STREAM_TRIAD_VERDICT/$(last_hist | jq -r .guard_drained)" held/2 "SLURM_TIME_FORMAT=relative in the environment: both earlier drains still count before node7"

# The settling pause runs from slurmctld's answer to the drain, however long
# that answer took (a drain committed late must not list too early).
SI_NODES=$NODES4 SC_FAULTS="sleep_1.5" ST_BEST=10 STREAM_TRIAD_SETTLE=1 guard_run -m 30 -G 3
gap=$(awk -v a="$(cat "$T/sc.answered")" -v b="$(tail -1 "$T/si.asked")" 'BEGIN { printf "%.2f", b - a }')
num_ok "a drain answered 1.5 s late: the second listing comes $gap s after the answer (settle 1 s)" "$gap >= 1"

# A node already out of service: one drained earlier by this check keeps
# its place and fails again with its old reason; anything else is left.
SI_NODES="node7|debug*|drain|2020-01-03T00:00:00|$reason (2 threads, 768 MiB)
n1|debug*|drain|2020-01-04T00:00:00|$reason" ST_BEST=12 guard_run -m 30 -G 1
is "$STREAM_TRIAD_VERDICT/$STREAM_TRIAD_DRAINED" fail/1 "the node itself, drained earlier by this check, keeps its place"
is "$(sc_calls)" "" "and is not drained again"
is "$DIE_MSG" "check_hw_stream_triad:  triad 10 GB/s < 30 GB/s (2 threads, 768 MiB)" \
	"it fails with its old reason (12 GB/s now): NHC re-marks the same text, and slurmctld keeps the stamp"
is "$(last_hist | jq -r .reason)" "triad 12 GB/s < 30 GB/s (2 threads, 768 MiB)" "the history has today's figure"
SI_NODES="node7|p1|idle|Unknown|none
n1|p1|idle|Unknown|none
n2|p2|drain|2020-01-01T00:00:00|$reason
n3|p2|drain|2020-01-01T00:00:00|$reason" ST_BEST=10 guard_run -m 30 -G 1 -g partition
is "$STREAM_TRIAD_VERDICT" fail "-g partition: drained nodes of another partition do not count"
SI_NODES="node7|p1|idle|Unknown|none
n1|p1|idle|Unknown|none
n2|p2|drain|2020-01-01T00:00:00|$reason
n3|p2|drain|2020-01-01T00:00:00|$reason" ST_BEST=10 guard_run -m 30 -G 1 -g cluster
is "$STREAM_TRIAD_VERDICT" held "-g cluster: they do"
SI_NODES=$NODES4 ST_BEST=10 guard_run -m 30 -G off
is "$STREAM_TRIAD_VERDICT/$(node7)/$(sc_calls)" fail/idle/ "-G off: no guard (NHC or the runner drains)"

# --- the guard fails closed: when Slurm cannot answer, nothing is drained ---------------
STREAM_TRIAD_SLURM_TIMEOUT=1
SI_EXIT=1 ST_BEST=10 guard_run -m 30 -G 1
is "$STREAM_TRIAD_VERDICT/$(sc_calls)" held/ "sinfo failing: held, no drain"
like "$STREAM_TRIAD_REASON" "held, not drained: guard unavailable: sinfo failed \(sinfo: error: Unable to contact slurm controller\)" \
	"the reason names what failed"
is "$(last_hist | jq -r .guard_hold)" unavailable "the history says the guard was unavailable"
SI_NODES=$NODES4 SI_FAULTS="sleep-first_3" ST_BEST=10 guard_run -m 30 -G 3
is "$STREAM_TRIAD_VERDICT/$(sc_calls)" held/ "sinfo not answering within its time limit: held, no drain"
like "$STREAM_TRIAD_REASON" "guard unavailable: sinfo failed \(no answer within 1 s\)" "said so"
SI_NODES="n1|debug*|idle|Unknown|none" ST_BEST=10 guard_run -m 30 -G 3
like "$STREAM_TRIAD_VERDICT/$STREAM_TRIAD_REASON" "^held/.*guard unavailable: sinfo does not list node7" "a node sinfo does not know: held"
SI_NODES=$NODES4 SC_FAULTS="fail" ST_BEST=10 guard_run -m 30 -G 3
is "$STREAM_TRIAD_VERDICT/$(node7)" held/idle "the drain refused: held, in service"
like "$STREAM_TRIAD_REASON" "guard unavailable: scontrol update failed \(scontrol: error: Unable to contact" "naming the refusal"
is "$(sc_calls)" "$drain7;" "nothing to undo: the drain was never made"
SI_NODES=$NODES4 SC_FAULTS="commit-fail" ST_BEST=10 guard_run -m 30 -G 3
is "$STREAM_TRIAD_VERDICT/$(node7)" held/idle "a drain made but reported failed: held, and the drain undone"
is "$(sc_calls)" "$drain7;update nodename=node7 state=resume;" "by a resume"
is "$(last_hist | jq -c '[.guard_hold, .guard_release]')" '["unavailable","done"]' "the history says so"
SI_NODES=$NODES4 SC_FAULTS="sleep-first_3" ST_BEST=10 guard_run -m 30 -G 3
is "$STREAM_TRIAD_VERDICT/$(node7)" held/idle "a drain that does not answer within its time limit: held, in service"
SI_NODES=$NODES4 SI_FAULTS="ok fail" ST_BEST=10 guard_run -m 30 -G 3
is "$STREAM_TRIAD_VERDICT/$(node7)" held/idle "the second listing failing: the drain is undone, held"
like "$STREAM_TRIAD_REASON" "guard unavailable: sinfo failed after the drain" "said so"

# A release Slurm refuses goes on in the background until it is done.
guard_bg() { pgrep -f zonesort-guard-release > /dev/null; }
node7_idle() { [ "$(node7)" = idle ]; }
SI_NODES="node7|debug*|idle|Unknown|none
n1|debug*|drain|2020-01-01T00:00:00|$reason" SI_NODES_AFTER_DRAIN="n0|debug*|drain|$now|$reason" \
	SC_FAULTS="ok fail" ST_BEST=10 guard_run -m 30 -G 2
is "$STREAM_TRIAD_VERDICT/$(last_hist | jq -r .guard_release)" held/pending "the resume refused: held, the release pending"
like "$STREAM_TRIAD_REASON" "release pending" "the reason says so"
ok "the background release resumes node7" wait_for 20 node7_idle
no_guard_bg() { ! guard_bg; }
ok "and ends" wait_for 20 no_guard_bg
# ... but never undoes what someone else did meanwhile.
SI_NODES="node7|debug*|idle|Unknown|none
n1|debug*|drain|2020-01-01T00:00:00|$reason" SI_NODES_AFTER_DRAIN="n0|debug*|drain|$now|$reason" \
	SC_FAULTS="ok fail fail fail" ST_BEST=10 guard_run -m 30 -G 2
is "$(last_hist | jq -r .guard_release)" pending "the resume refused again"
printf '%s\n' "node7|debug*|drain|$(date +%Y-%m-%dT%H:%M:%S)|bad DIMM, ticket 42" > "$T/node7.state"
sleep 4
ok "the background release ends on a node an administrator drained meanwhile" wait_for 20 no_guard_bg
is "$(node7)/$(node7_reason)" "drain/bad DIMM, ticket 42" "and leaves it drained with the administrator's reason"
rm -f "$T/node7.state"
SI_NODES=$NODES4 SI_FAULTS="ok admin" ST_BEST=10 guard_run -m 30 -G 3
is "$(node7)/$(node7_reason)" "drain/bad DIMM, ticket 42" "an administrator's drain made during the guard's pause is left as it is"
is "$(sc_calls)" "$drain7;" "no release was tried"
like "$STREAM_TRIAD_VERDICT/$STREAM_TRIAD_REASON" "^held/.*node7 changed while the guard ran \(drain, bad DIMM, ticket 42\); left as it is" "the check says so"
STREAM_TRIAD_SLURM_TIMEOUT=2

# --- dry runs: NHC's MARK_OFFLINE=0 and the runner's -d count, never drain -----------------
SI_NODES=$NODES4 ST_BEST=10 STREAM_TRIAD_DRY_RUN=1 guard_run -m 30 -G 2
is "$STREAM_TRIAD_VERDICT/$(sc_calls)" held/ "a dry run counts as if drained last, and drains nothing"
SI_NODES=$NODES4 ST_BEST=10 STREAM_TRIAD_DRY_RUN=1 guard_run -m 30 -G 3 -r yes
is "$STREAM_TRIAD_VERDICT/$(sc_calls)" fail/ "under the limit it fails (would drain) and still asks nothing of slurmctld"
SI_NODES=$NODES4 ST_BEST=10 NHC_PID=$$ MARK_OFFLINE=0 guard_run -m 30 -G 3 -r yes
is "$STREAM_TRIAD_VERDICT/$(sc_calls)" fail/ "under NHC with MARK_OFFLINE=0: no drain, no reboot request"
SI_NODES=$NODES4 ST_BEST=10 NHC_PID=$$ MARK_OFFLINE=0 guard_run -m 30 -G off -r yes
is "$(sc_calls)" "" "not even without the guard"
SI_NODES=$NODES4 ST_BEST=10 NHC_PID=$$ NHC_RM=pbs guard_run -m 30 -G 3
like "$STREAM_TRIAD_VERDICT/$STREAM_TRIAD_REASON" "^held/.*guard unavailable: NHC_RM is \"pbs\"" "NHC for another resource manager: the guard cannot count, held"

# The order: the time slurmctld stamped on the reason, then the node name.
NODE=node7 GUARD=3 GUARD_SCOPE=cluster
order=$(printf '%s\n' "node7|d|drain|1900000005|$reason" "a1|d|drain|1900000005|$reason" \
	"z9|d|drng|1900000005|$reason" "b2|d|drain@|1900000004|zonesort: check_hw_stream_triad:  x" \
	"c3|d|drain|1900000006|$reason" "d4|d|idle|1900000001|$reason" \
	"e5|d|drain|1900000001|maintenance" "f6|d|drain|999999999|$reason" | nhc_stream_triad_guard_rank)
is "${order%%|*}" "3 8 3 drain" "ahead of node7: f6 (a digit fewer, earlier), b2 (a second earlier, the runner's), a1 (same second, name first); not z9, c3, the idle d4, the admin's e5"

# Errors go through the guard too, with "error" in the reason.
SI_NODES=$NODES4 ST_EXIT=3 ST_STDERR="cannot allocate" guard_run -m 30 -G 3
is "$RC/$STREAM_TRIAD_VERDICT/$(node7)" "1/error/drain" "a failure to measure under the limit: error, drained"
is "$(sc_calls)" "update nodename=node7 state=drain reason=NHC: check_hw_stream_triad:  error: stand-in-stream-triad could not measure (exit 3): stream-triad: cannot allocate;" \
	"the drain reason says error"
SI_NODES=$NODES4 ST_EXIT=3 guard_run -m 30 -G 2 -r yes
is "$STREAM_TRIAD_VERDICT/$(node7)" "held/idle" "a failure to measure beyond the limit is held"
like "$STREAM_TRIAD_REASON" "^error: stand-in-stream-triad could not measure \(exit 3\); held, not drained: 2 of 4" "its reason says error and held"
unlike "$(sc_calls)" "reboot" "an error asks for no reboot"
SI_NODES=$NODES4 guard_run -m 30 -P "$T/nope" -G 2
is "$STREAM_TRIAD_VERDICT/$(node7)" "held/idle" "a missing probe beyond the limit is held"
SI_NODES=$NODES4 guard_run -m abc -G 2
is "$STREAM_TRIAD_VERDICT/$(node7)" "held/idle" "a bad option beyond the limit is held"
like "$STREAM_TRIAD_REASON" "^error: -m: 'abc' is not a bandwidth" "naming the option"
SI_NODES=$NODES4 STREAM_TRIAD_GUARD=5% guard_run -m abc -G x
is "$STREAM_TRIAD_VERDICT/$(last_hist | jq -r .guard_limit)" "held/1" "a bad -G itself: the guard's default (5%: 1 of 4 nodes) holds"
SI_NODES=$NODES4 STREAM_TRIAD_CONFIG_ERROR="zonesort-health-check: unknown option -x" guard_run -m 30 -G 3
is "$STREAM_TRIAD_VERDICT/$(node7)" "error/drain" "an error of the runner's options file is the check's error"
is "$DIE_MSG" "check_hw_stream_triad:  error: zonesort-health-check: unknown option -x" "named as such"

# A probe's message in single quotes: NHC marks the node offline through
# eval $OFFLINE_NODE "'$HOSTNAME'" "'$*'", which a single quote breaks.
ST_EXIT=3 ST_STDERR="'Segmentation fault' (core dumped)" guard_run -m 30 -G off
unlike "$DIE_MSG" "['\"]" "a die message carries no quote"
like "$DIE_MSG" '`Segmentation fault` \(core dumped\)' "the probe's words are kept, in backquotes"
is "$(eval echo "'node7'" "'$DIE_MSG'" 2>&1)" "node7 $DIE_MSG" "NHC's eval of it gives the message back"

# A check whose parts are not all loaded holds the node: it can judge
# nothing, and a broken installation is the same on every node.
unset -f nhc_stream_triad_guard
SI_NODES=$NODES4 ST_BEST=10 guard_run -m 30 -G 3
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT/$(sc_calls)" "0//held/" "without stream_triad_guard.nhc: held, nothing drained"
like "$STREAM_TRIAD_REASON" "parts of the check are not loaded \(stream_triad_guard.nhc, beside stream_triad.nhc\)" "naming the file"
like "$LOG_MSG" "HELD: " "loudly"
. "$ZS_NHC_DIR/stream_triad_guard.nhc"

# --- errors and confirmations: retried like a low figure -------------------------------------
cat > "$T/flaky" <<EOF
#!/bin/bash
# Fails (exit 3) while $T/fails holds lines, one per run, then measures.
if [ -s "$T/fails" ]; then sed -i 1d "$T/fails"; echo "stream-triad: cannot allocate" >&2; exit 3; fi
exec "$PROBE" "\$@"
EOF
chmod +x "$T/flaky"
printf '%s\n' x > "$T/fails"
ST_BEST=35 run -m 30 -k 1 -w 0 -P "$T/flaky"
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "a crash, then 35 GB/s on the confirmation: passes"
is "$(last_hist | jq -c '[.verdict, .triad_best_gbs, .confirm_errors]')" '["pass",35,0]' "the history has the measured figure"
printf '%s\n' x x > "$T/fails"
run -m 30 -k 1 -w 0 -P "$T/flaky"
is "$RC/$STREAM_TRIAD_VERDICT" "1/error" "a crash twice: error"
is "$DIE_MSG" "check_hw_stream_triad:  error: flaky could not measure (exit 3): stream-triad: cannot allocate (on all 2 runs)" "saying it happened on every run"
cat > "$T/flaky2" <<EOF
#!/bin/bash
# Measures once, then fails.
if [ -e "$T/ran" ]; then echo "stream-triad: cannot allocate" >&2; exit 3; fi
touch "$T/ran"; exec "$PROBE" "\$@"
EOF
chmod +x "$T/flaky2"
rm -f "$T/ran"
ST_BEST=10 run -m 30 -k 1 -w 0 -P "$T/flaky2"
is "$RC/$STREAM_TRIAD_VERDICT" "1/error" "10 GB/s, then the confirmation cannot measure: not confirmed, an error (never fail)"
like "$DIE_MSG" "error: triad 10 GB/s < 30 GB/s .*, not confirmed: 1 of 2 runs could not measure \(flaky2 could not measure" "naming both"
is "$(last_hist | jq -c '[.verdict, .confirm_gbs, .confirm_errors]')" '["error",[],1]' "confirm_gbs holds only figures that were measured"

# --- observe only (-O): recorded and exported as enforcing would, never drained -----------
SI_NODES=$NODES4 ST_BEST=10 guard_run -m 30 -G 3 -r yes -O
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT/$(sc_calls)$(cat "$T/sinfo.calls")" "0//fail/" \
	"-O: a low figure is verdict fail, and nothing is asked of Slurm: no drain, no reboot, no die"
like "$LOG_MSG" "OBSERVED \(not enforced, -O\): would have failed: triad 10 GB/s < 30 GB/s" "said so"
is "$(last_hist | jq -c '[.verdict, .observe, .reason]')" '["fail",true,"triad 10 GB/s < 30 GB/s (2 threads, 768 MiB)"]' \
	"the history has the would-be failure, marked observe"
ST_BEST=10 guard_run -O
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "-O without a limit: measures and records (baselines for a rollout)"
is "$(last_hist | jq -c '[.triad_best_gbs, .observe]')" "[10,true]" "with the figure"
ST_EXIT=3 guard_run -m 30 -O
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT" "0//error" "-O: a failure to measure is verdict error, no die"
guard_run -m abc -O
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT" "0//error" "-O: even a bad option only records the error"
run
like "$DIE_MSG" "no limit given; expected -m MIN .* or -O to observe only" "without -O a limit is still required"

# --- the time budget: the worst case fits, or the options are refused --------------------
STREAM_TRIAD_BUDGET=30 STREAM_TRIAD_SETTLE=2
: > "$ST_LOG"
run -m 30 -T 20 -k 2 -w 3
is "$RC/$STREAM_TRIAD_VERDICT/$(probe_runs)" "1/error/0" "-T 20 -k 2 -w 3 against the runner's default budget of 30 s: refused before measuring"
is "$DIE_MSG" "check_hw_stream_triad:  error: the check can take 81 s ((k+1)*(T+1) + k*W + 12 with -k 2 -T 20 -w 3), over its time budget of 30 s (-L): lower -T, -k or -w, or raise -L" \
	"naming the worst case, the formula and what to change"
run -m 30 -k 1 -w 1 -T 5
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "the defaults fit 30 s"
is "$(CONFIRM=1 TLIMIT=5 PAUSE=1 nhc_stream_triad_worst_case)" 25 \
	"the defaults take at most 25 s: 2 runs of 5+1 s, a 1 s pause, 12 s for Slurm"
run -m 30 -T 20 -k 2 -w 3 -L 85
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "-L 85 raises the runner's budget"
TIMEOUT=90 run -m 30 -T 20 -k 2 -w 3
is "$STREAM_TRIAD_VERDICT" error "outside NHC a TIMEOUT variable means nothing"

# Under NHC the budget is its watchdog's time, less a tenth (at least 3 s)
# for the checks after this one: NHC starts the watchdog (a "sleep
# TIMEOUT" under WATCHDOG_PID) before it reads nhc.conf, so a TIMEOUT set
# there (90 here) never reaches it.
watchdog() { bash -c "sleep $1 & wait" & WD=$!; wait_for 5 pgrep -P "$WD" -x sleep; }
unwatch() { kill "$WD" 2>/dev/null; wait "$WD" 2>/dev/null; }
ok "a 40 s watchdog runs" watchdog 40
NHC_PID=$$ WATCHDOG_PID=$WD TIMEOUT=90 run -m 30 -k 1 -w 1 -T 5
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "under a 40 s watchdog the defaults fit (25 s of the 36 it gives a check)"
: > "$ST_LOG"
NHC_PID=$$ WATCHDOG_PID=$WD TIMEOUT=90 run -m 30 -k 1 -w 1 -T 15
is "$RC/$STREAM_TRIAD_VERDICT/$(probe_runs)" "1/error/0" "-T 15 (45 s) is refused under a 40 s watchdog, whatever nhc.conf's TIMEOUT says"
like "$DIE_MSG" "the check can take 45 s .*, over the 36 s it may take under the NHC watchdog: lower -T, -k or -w, or raise the TIMEOUT of the watchdog in the NHC sysconfig file \(/etc/sysconfig/nhc, /etc/default/nhc on Debian\) or with nhc -t SECONDS \(TIMEOUT set in nhc.conf does not reach the watchdog\)" \
	"naming where NHC's TIMEOUT really comes from"
NHC_PID=$$ WATCHDOG_PID=$WD run -m 30 -L 60
like "$DIE_MSG" "-L 60 is more than the 36 s the NHC watchdog gives this check" "-L cannot go past the watchdog"
unwatch
ok "a fresh 40 s watchdog runs" watchdog 40
NHC_PID=$$ WATCHDOG_PID=$WD run -m 30 -L 20
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "-L within it is taken"
unwatch
ok "a 100 s watchdog runs" watchdog 100
NHC_PID=$$ WATCHDOG_PID=$WD run -m 30 -k 4 -w 10
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "-k 4 -w 10 (82 s, the admin guide's advice for busy nodes) fits TIMEOUT=100"
unwatch
# Options that fit the watchdog, but not what the checks before this one
# left (no watchdog's sleep to read here: NHC's TIMEOUT less its elapsed
# time is the estimate): skipped, not an error of this node's.
: > "$ST_LOG"
NHC_PID=$$ WATCHDOG_PID=$$ TIMEOUT=30 NHC_START_TS=$((SECONDS - 20)) run -m 30 -k 1 -w 1 -T 5
is "$RC/$DIE_RC/$STREAM_TRIAD_VERDICT/$(probe_runs)" "0//skip/0" "20 s of NHC's 30 gone: the 25 s check is skipped, not run"
like "$STREAM_TRIAD_REASON" "the checks before this one left it [0-9]+ s of the NHC watchdog.s time; it may take 25 s" "saying why"
NHC_PID=$$ WATCHDOG_PID=$$ TIMEOUT=30 NHC_START_TS=$((SECONDS - 1)) run -m 30 -k 1 -w 1 -T 5
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "1 s gone: it runs"
STREAM_TRIAD_BUDGET=3600 STREAM_TRIAD_SETTLE=0.2

# --- a corrupt baseline is an error naming the file, never replaced -------------------------
echo "ffffffff-2222-3333-4444-555555555555" > "$T/boot_id"
echo '{"boot_id": "x", "entries": {"k": {"triad_best_gbs": 40}}} trailing' > "$T/corrupt.json"
cp "$T/corrupt.json" "$T/corrupt.orig"
ST_BEST=5 run -p 80 -b "$T/corrupt.json"
is "$RC/$STREAM_TRIAD_VERDICT" "1/error" "a corrupt baseline file: error (a degraded node must not set itself a low baseline)"
like "$DIE_MSG" "error: the baseline file $T/corrupt.json is corrupt \(.*\); fix or remove it" "naming the file"
ok "the file is left as it was" cmp -s "$T/corrupt.json" "$T/corrupt.orig"

# --- history rotation (-R) ----------------------------------------------------------------
H=$T/rot/h.jsonl
mkdir -p "$T/rot"
for i in 1 2 3; do run -m 30 -H "$H" -R 1K; done
lines=$(wc -l < "$H")

yes "$(head -1 "$H")" | head -5 >> "$H"
run -m 30 -H "$H" -R 1K
is "$(wc -l < "$H")/$(wc -l < "$H.1")" "1/$((lines + 5))" "-R 1K: at 1 KiB the history moves to FILE.1 and a new one starts"
like "$LOG_MSG" "rotated the history $H to $H.1 \(-R 1K\)" "and the log says so"
printf '{"epoch":%d,"node":"node7","verdict":"pass"}\n' $(( $(date +%s) - 3 * 86400 )) > "$H"
run -m 30 -H "$H" -R 2d
is "$(wc -l < "$H")/$(jq -r .epoch "$H.1" | head -1 | awk -v now="$(date +%s)" '{ print (now - $1 > 2 * 86400) }')" "1/1" \
	"-R 2d: a history whose first line is 3 days old is rotated"
run -m 30 -H "$H" -R off
is "$(wc -l < "$H")" 2 "-R off: never"

# --- metrics: counts kept in a state file, not re-read from the history -------------------
. "$ZS_NHC_DIR/zonesort_metrics.nhc"
MH=$T/metrics/h.jsonl
mkdir -p "$T/metrics"
for v in 40 40 10; do ST_BEST=$v run -m 30 -H "$MH" -M "$T/mprom"; done
prom=$(cat "$T/mprom/zonesort-health.prom")
like "$prom" 'zonesort_health_checks_total\{node="node7",verdict="pass"\} 2' "two passes counted"
like "$prom" 'zonesort_health_checks_total\{node="node7",verdict="fail"\} 1' "one failure counted"
MSTATE=$T/metrics/zonesort-health.node7.metrics-state
is "$(jq -c .counts "$MSTATE")" '{"pass":2,"fail":1,"error":0,"skip":0,"held":0}' "the counts are in a state file next to the history"
is "$(ls -A "$T/mprom")" zonesort-health.prom "node_exporter's directory gets the .prom file only"
: > "$MH"
run -m 30 -H "$MH" -M "$T/mprom"
like "$(cat "$T/mprom/zonesort-health.prom")" 'verdict="pass"\} 3' \
	"a check adds its own line to the state: the history is not read again (emptied here, the count goes on)"
echo garbage > "$MSTATE"
run -m 30 -H "$MH" -M "$T/mprom"
like "$LOG_MSG" "the metrics state $MSTATE cannot be read .*; rebuilt from $MH" "a corrupt state is rebuilt from the history, saying so"
like "$(cat "$T/mprom/zonesort-health.prom")" 'verdict="pass"\} 2' "from the history's two lines"

# The verdict held in the Prometheus metrics.
SI_NODES=$NODES4 ST_BEST=10 run -m 30 -G 1 -M "$T/prom"
like "$(cat "$T/prom/zonesort-health.prom")" 'zonesort_health_check_last_verdict\{node="node7",verdict="held"\} 1' \
	"the metrics say the last check was held"
like "$(cat "$T/prom/zonesort-health.prom")" 'zonesort_health_checks_total\{node="node7",verdict="held"\} [1-9]' \
	"and count held checks"
SI_EXIT=1 ST_BEST=10 run -m 30 -G 1 -M "$T/prom"
like "$(cat "$T/prom/zonesort-health.prom")" 'zonesort_health_guard_holds_total\{node="node7",cause="limit"\} 1' \
	"holds by cause: one at the limit"
like "$(cat "$T/prom/zonesort-health.prom")" 'zonesort_health_guard_holds_total\{node="node7",cause="unavailable"\} 1' \
	"and one with Slurm unavailable"
printf '%s\n' '{"node":"node7","verdict":"pass","epoch":1}' 'torn {' '{"no":"node"}' > "$T/corrupt.jsonl"
rm -f "$T/zonesort-health.node7.metrics-state"
run -m 30 -H "$T/corrupt.jsonl" -M "$T/cprom"
like "$LOG_MSG" "2 lines of $T/corrupt.jsonl are not history records \(no node or verdict\); skipped" \
	"a rebuild from the history says how many lines it skipped"
# node_exporter's directory may belong to its own user (Debian's
# /var/lib/prometheus/node-exporter): written there without following a link.
mkdir -p "$T/nx" && chown 65534:65534 "$T/nx" && chmod 755 "$T/nx"
ln -s /etc/nologin-by-metrics "$T/nx/zonesort-health.prom"
run -m 30 -H "$MH" -M "$T/nx"
ok "a directory owned by another user is written" test -f "$T/nx/zonesort-health.prom"
ok "a link planted under the file's name is replaced, not followed" test ! -e /etc/nologin-by-metrics
like "$(cat "$T/nx/zonesort-health.prom")" 'zonesort_health_checks_total\{node="node7",verdict="pass"\}' "with the metrics"
ln -s "$T/nx" "$T/nx-link"
run -m 30 -H "$MH" -M "$T/nx-link"
like "$LOG_MSG" "cannot write $T/nx-link/zonesort-health.prom: .*link" "a link on the way to the directory is refused, naming it"
mkdir -p "$T/open" && chmod 777 "$T/open"
run -m 30 -H "$MH" -M "$T/open"
like "$LOG_MSG" "cannot write $T/open/zonesort-health.prom: .*(writable|sticky)" "so is a directory anyone may write without the sticky bit"
is "$RC/$STREAM_TRIAD_VERDICT" "0/pass" "the check itself still passes: metrics are a report, not the verdict"
if command -v promtool >/dev/null; then
	ok "promtool accepts the metrics" promtool check metrics < "$T/prom/zonesort-health.prom"
else
	ok "promtool (package prometheus) is needed to check the metrics" false
fi

done_testing
