#!/bin/bash
# Unit tests of zonesort-health-check, the runner for Slurm's Epilog= and
# HealthCheckProgram=, with stand-ins for stream-triad, squeue, sinfo and
# scontrol (the real ones are in 10-cluster-epilog.t and
# 11-cluster-healthcheck.t).
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
need jq timeout flock awk
: "${ZS_HEALTH_CHECK:=$ZS_NHC_DIR/zonesort-health-check}"
need_file "$ZS_HEALTH_CHECK" "the runner zonesort-health-check"

T=$(mktemp -d /tmp/zs-nhc-runner.XXXXXX)
trap 'rm -rf "$T"' EXIT
PROBE=$ZS_SRCDIR/testbed/stand-in-stream-triad

# scontrol listpids asks the local slurmd (no Slurm call to count): the
# stand-in lists steps of $SQ_JOBS and records nothing.
cat > "$T/squeue" <<'EOF'
#!/bin/bash
for j in ${SQ_JOBS:-}; do echo "$j"; done
EOF
# sinfo: the drain guard's list ($SI_NODES, with n1's line as the stand-in
# scontrol last set it; times as SLURM_TIME_FORMAT asks, as sinfo does),
# n1's own line for the guard's release, or the runner's own question
# ($SI_STATE).
cat > "$T/sinfo" <<'EOF'
#!/bin/bash
echo "sinfo $*" >> "${0%/*}/calls"
state=${0%/*}/n1.state
nodes() {
	printf '%s\n' "${SI_NODES:-n1|debug*|idle|Unknown|none}" |
		if [ -s "$state" ]; then awk -F'|' -v s="$(cat "$state")" '$1 == "n1" { print s; next } { print }'; else cat; fi |
		while IFS='|' read -r n p st t r; do
			[ "$t" = Unknown ] || [ "${SLURM_TIME_FORMAT:-standard}" = standard ] || t=$(date -d "$t" "+$SLURM_TIME_FORMAT")
			echo "$n|$p|$st|$t|$r"
		done
}
case "$*" in
*%P*) nodes ;;
*'%t|%H|%E'*) nodes | awk -F'|' '$1 == "n1" { print $3 "|" $4 "|" substr($0, length($1 $2 $3 $4) + 5) }' ;;
*%b*) echo "${SI_FEATURES:-}" ;;
*) echo "${SI_STATE:-idle|none}" ;;
esac
EOF
cat > "$T/scontrol" <<'EOF'
#!/bin/bash
if [ "$1" = listpids ]; then
	[ -n "${SQ_JOBS:-}" ] || { echo "No job steps exist on this node." >&2; exit 1; }
	echo "PID      JOBID    STEPID   LOCALID GLOBALID"
	for j in $SQ_JOBS; do echo "4242     $j       batch    0       0"; done
	exit 0
fi
if [ "$1 $2" = "show hostnames" ]; then
	# Slurm's host list expansion, for lists of one range: pfx[AA-BB].
	[[ "$3" =~ ^([a-z]+)\[([0-9]+)-([0-9]+)\]$ ]] || { echo "scontrol: error: bad host list $3" >&2; exit 1; }
	for i in $(seq -w "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"); do echo "${BASH_REMATCH[1]}$i"; done
	exit 0
fi
echo "scontrol $*" >> "${0%/*}/calls"
echo "SLURM_CONF=${SLURM_CONF:-unset}" >> "${0%/*}/calls"
[ "${SC_EXIT:-0}" = 0 ] || exit "$SC_EXIT"
case "$1 $2 $3" in
"update nodename=n1 state=drain") echo "n1|debug*|drain|$(date +%Y-%m-%dT%H:%M:%S)|${4#reason=}" > "${0%/*}/n1.state" ;;
"update nodename=n1 state=resume") echo "n1|debug*|idle|Unknown|none" > "${0%/*}/n1.state" ;;
esac
exit 0
EOF
chmod +x "$T/squeue" "$T/sinfo" "$T/scontrol"
export STREAM_TRIAD_SQUEUE=$T/squeue STREAM_TRIAD_SINFO=$T/sinfo STREAM_TRIAD_SCONTROL=$T/scontrol
export STREAM_TRIAD_HISTORY=$T/history.jsonl STREAM_TRIAD_BASELINE=$T/state/
export STREAM_TRIAD_PROBE=$PROBE
# Confirmation and the drain guard have tests of their own below.
export STREAM_TRIAD_CONFIRM=0 STREAM_TRIAD_GUARD=off STREAM_TRIAD_SETTLE=0.2
# No options file unless a test gives one.
export ZS_HEALTH_CHECK_CONF=/dev/null

# hc ARGS...: runs the runner; OUT, ERR and RC; CALLS: the Slurm calls it made.
hc() {
	rm -f "$T/calls" "$T/n1.state"
	"$ZS_HEALTH_CHECK" "$@" > "$T/out" 2> "$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
	CALLS=$(cat "$T/calls" 2>/dev/null)
}

hc -h
is "$RC" 0 "-h exits 0"
like "$OUT" "^Usage: zonesort-health-check" "-h prints the usage"
like "$OUT" "-m MIN" "the usage lists the check options"
hc --help
is "$RC" 0 "--help too"

hc -N n1 -m 30
is "$RC" 0 "healthy: exit 0"
is "$CALLS" "" "healthy: no sinfo or scontrol call"
like "$ERR" "zonesort-health-check: healthy: triad 40.5 GB/s \(2 threads, 768 MiB\)" "says it is healthy"
is "$(tail -1 "$STREAM_TRIAD_HISTORY" | jq -r '[.node, .verdict] | join(" ")')" "n1 pass" "history line for node n1"

ST_BEST=20 hc -N n1 -m 30
is "$RC" 0 "unhealthy and drained: still exit 0 (an Epilog must not fail)"
like "$CALLS" "scontrol update nodename=n1 state=drain reason=zonesort: check_hw_stream_triad:  triad 20 GB/s < 30 GB/s \(2 threads, 768 MiB\)" \
	"drains itself with a zonesort: reason naming value and limit (only NHC's own drains say NHC:, the ones its node-mark-online resumes)"
like "$ERR" "drained n1: zonesort: check_hw_stream_triad:  triad 20 GB/s < 30 GB/s" "and logs it"

ST_BEST=20 SC_EXIT=1 hc -N n1 -m 30
is "$RC" 1 "guard off, drain failing: exit 1 (an Epilog exiting 1 makes Slurm drain the node)"
like "$ERR" "could not drain n1" "says it could not drain"

ST_BEST=20 hc -N n1 -m 30 -d
is "$RC" 1 "dry run: exit 1 on failure"
is "$CALLS" "" "dry run: no Slurm call"
like "$ERR" "dry run: n1 would be drained: zonesort: check_hw_stream_triad:  triad 20 GB/s < 30 GB/s" "dry run says what it would do"

ST_BEST=20 hc -N n1 -m 30 -r yes
is "$RC" 0 "reboot requested: exit 0"
like "$CALLS" "scontrol reboot ASAP nextstate=RESUME reason=zonesort: check_hw_stream_triad:  triad 20 GB/s < 30 GB/s \(2 threads, 768 MiB\) n1" \
	"asks Slurm for a reboot"
unlike "$CALLS" "state=drain" "and does not drain on top of it"

ST_BEST=20 SC_EXIT=1 hc -N n1 -m 30 -r yes
like "$CALLS" "state=drain" "reboot refused: falls back to draining"

ST_BEST=20 SI_STATE='drng@|NHC: check_hw_stream_triad: earlier' hc -N n1 -m 30
unlike "$CALLS" "state=drain" "a pending reboot (drng@) is left alone"
ST_BEST=20 SI_STATE='drain|maintenance window' hc -N n1 -m 30
unlike "$CALLS" "state=drain" "an administrator's drain reason is kept"
like "$ERR" "n1 is already drain \(maintenance window\); leaving it" "and that is logged"
ST_BEST=20 SI_STATE='drain|NHC: check_fs_mount: /scratch not mounted' hc -N n1 -m 30
unlike "$CALLS" "state=drain" "an NHC drain is kept too (NHC's node-mark-online resumes it when its check passes)"

# Malformed options drain the node with a reason that names them.
hc -N n1 -m abc
is "$RC" 0 "a malformed check option: exit 0 after draining"
like "$CALLS" "reason=zonesort: check_hw_stream_triad:  error: -m: \`abc\` is not a bandwidth" "the reason says error and names the option and value"
hc -N n1 -m 30 -Q
like "$CALLS" "reason=zonesort: check_hw_stream_triad:  error: zonesort-health-check: unknown option -Q \(command line\)" "an unknown option drains, naming it"
hc -N n1 -m 30 stray
like "$CALLS" "unexpected argument \`stray\`" "a stray argument drains, naming it"
hc -N n1
like "$CALLS" "reason=zonesort: check_hw_stream_triad:  error: no limit given" "no limit at all drains (never a silent pass)"
hc -N n1 -C "$T/missing.conf"
like "$CALLS" "options file $T/missing.conf \(from -C\) cannot be read" "a missing -C file drains, naming it"
# A part of the check that is not installed: a broken installation is the
# same on every node, so the node is held, loudly, the part named (never a
# pass on what is left, never a drain).
for part in stream_triad_state.nhc stream_triad_guard.nhc stream_triad.nhc; do
	rm -rf "$T/partial"; mkdir "$T/partial"
	cp "$ZS_HEALTH_CHECK" "$ZS_NHC_DIR"/*.nhc "$T/partial/" && rm "$T/partial/$part"
	ok "a copy of the runner beside the check without $part" test -x "$T/partial/zonesort-health-check"
	rm -f "$T/partial.log"
	ST_BEST=20 ZS_HEALTH_CHECK=$T/partial/zonesort-health-check hc -N n1 -m 30 -l "$T/partial.log"
	is "$RC/$CALLS" 3/ "without $part: held (exit 3), no Slurm call"
	like "$(cat "$T/partial.log")" "HELD, not drained: n1: .*$part" "the log names the missing file"
	SLURM_SCRIPT_CONTEXT=epilog_slurmd ST_BEST=20 ZS_HEALTH_CHECK=$T/partial/zonesort-health-check hc -N n1 -m 30
	is "$RC" 0 "as Slurm's Epilog: exit 0"
done

# Options from a file (Slurm starts the runner without arguments).
cat > "$T/hc.conf" <<EOF
# zonesort-health-check options
-m 30GB/s   # absolute
-t 3 -H $T/conf-history.jsonl
EOF
ZS_HEALTH_CHECK_CONF=$T/hc.conf ST_LOG=$T/probe.log hc -N n1
is "$RC" 0 "options from \$ZS_HEALTH_CHECK_CONF"
like "$(cat "$T/probe.log")" "threads=3" "the file's -t reached the probe"
is "$(jq -r .min_gbs "$T/conf-history.jsonl")" 30 "the file's -m and -H were used"
ST_BEST=35 hc -N n1 -C "$T/hc.conf" -m 36
like "$CALLS" "triad 35 GB/s < 36 GB/s" "-C FILE; command-line options come after the file's and win"
printf -- '-m 30 -Z\n' > "$T/bad.conf"
hc -N n1 -C "$T/bad.conf"
like "$CALLS" "unknown option -Z \($T/bad.conf line 1\)" "a bad option in the file names file and line"

# The environment Slurm gives: HealthCheckProgram gets only SLURMD_NODENAME.
printf -- '-m 30 -f -P %s -H %s -b %s/\n' "$PROBE" "$T/bare.jsonl" "$T/bare" > "$T/bare.conf"
env -i SLURMD_NODENAME=cn17 "$ZS_HEALTH_CHECK" -C "$T/bare.conf" -d > "$T/out" 2>&1
is "$?" 0 "runs with an empty environment (sets PATH itself)"
is "$(jq -r .node "$T/bare.jsonl")" cn17 "node name from \$SLURMD_NODENAME"
ST_BEST=20 SLURM_CONF=/etc/x/slurm.conf hc -N n1 -m 30
like "$CALLS" "SLURM_CONF=/etc/x/slurm.conf" "\$SLURM_CONF reaches scontrol"
ST_BEST=20 hc -N n1 -m 30 -c /etc/y/slurm.conf
like "$CALLS" "SLURM_CONF=/etc/y/slurm.conf" "-c FILE sets SLURM_CONF for scontrol"

# The Epilog's own job does not count as another job.
SLURM_JOB_ID=77 SQ_JOBS=77 hc -N n1 -m 30
like "$ERR" "healthy" "in the Epilog of job 77, job 77 is not another job"
is "$(tail -1 "$STREAM_TRIAD_HISTORY" | jq -r .job)" 77 "the history line has the job id"
SLURM_JOB_ID=77 SQ_JOBS="77 78" hc -N n1 -m 30
is "$RC" 0 "another job running: exit 0"
is "$CALLS" "" "another job running: no drain"
like "$ERR" "skipped: other jobs run on n1: 78" "another job running: skipped with a log line"

# Confirmation, baseline and guard options pass through to the check.
hc -N n1 -m 30 -k 11
like "$CALLS" "reason=zonesort: check_hw_stream_triad:  error: -k: \`11\` is not a number of confirmations; expected an integer from 0" \
	"a bad -k drains, naming the value and what is accepted"
hc -N n1 -m 30 -G lots
like "$CALLS" "-G: \`lots\` is not a drain limit; expected a node count" "a bad -G too"
printf '%s\n' 20 35 > "$T/seq"
ST_BEST_SEQ=$T/seq hc -N n1 -m 30 -k 1 -w 0
is "$RC/$CALLS" "0/" "-k 1: 20 then 35 GB/s is healthy: no drain, no Slurm call"
TWO="n1|debug*|idle|Unknown|none
n2|debug*|drain|2020-01-01T00:00:00|NHC: check_hw_stream_triad:  triad 9 GB/s < 30 GB/s"
SI_NODES=$TWO ST_BEST=20 hc -N n1 -m 30 -G 1
is "$RC" 3 "held by the guard: exit 3"
is "$(grep -o '^\(sinfo\|scontrol update nodename=n1 state=[a-z]*\)' <<< "$CALLS" | tr '\n' ,)" "sinfo," \
	"the guard counted n2 (drained through NHC) and held n1 without draining it"
like "$ERR" "HELD, not drained: n1: triad 20 GB/s < 30 GB/s .*1 of 2 nodes \(cluster\) already drained" "says it held the node and why"
is "$(tail -1 "$STREAM_TRIAD_HISTORY" | jq -r .verdict)" held "history verdict held"
SLURM_SCRIPT_CONTEXT=epilog_slurmd SI_NODES=$TWO ST_BEST=20 hc -N n1 -m 30 -G 1
is "$RC" 0 "held as Slurm's Epilog: exit 0 (a failing Epilog would drain the node)"
SI_NODES=$TWO ST_BEST=20 hc -N n1 -m 30 -G 1 -d
is "$RC/$(grep -c '^scontrol' <<< "$CALLS")" 3/0 "a dry run counts but drains and releases nothing"
SI_NODES=$TWO ST_BEST=20 hc -N n1 -m 30 -G 2
is "$(grep -c 'state=drain' <<< "$CALLS")/$RC" 1/0 "under the limit: drained once, by the guard (the runner does not drain again)"
like "$ERR" "n1 is drained by the check: zonesort: check_hw_stream_triad:  triad 20" "and says so"
SI_NODES="n1|debug*|drng@|2020-01-01T00:00:00|NHC: check_hw_stream_triad: earlier" ST_BEST=20 hc -N n1 -m 30 -G 1
unlike "$CALLS" "state=drain" "a pending reboot seen by the guard is left alone"
SI_NODES=$TWO hc -N n1 -m 30 -G 1 -Q
is "$RC/$(tail -1 "$STREAM_TRIAD_HISTORY" | jq -r .verdict)" 3/held "an unknown option beyond the guard's limit: held, not drained"

# Node classes in one options file: "SELECTOR || OPTIONS" lines, later
# lines winning.
cat > "$T/classes.conf" <<EOF
-m 1
knl* || -m 30
cpu[01-04] || -m 25 -t 3
EOF
ST_BEST=28 hc -N knl7 -C "$T/classes.conf"
like "$CALLS" "reason=zonesort: check_hw_stream_triad:  triad 28 GB/s < 30 GB/s" "knl*: the class's limit applies"
ST_BEST=28 ST_LOG=$T/cls.log hc -N cpu03 -C "$T/classes.conf"
is "$RC/$CALLS" "0/" "cpu[01-04] (a Slurm host list, expanded locally): its 25 GB/s applies: healthy, no call to slurmctld"
like "$(cat "$T/cls.log")" "threads=3" "and its -t"
ST_BEST=28 hc -N cpu05 -C "$T/classes.conf"
is "$RC/$CALLS" "0/" "a node in no class gets the common -m 1"
printf '%s\n' "-m 1" "feature=hbm || -m 35" > "$T/feat.conf"
SI_FEATURES=hbm,cache ST_BEST=30 hc -N n1 -C "$T/feat.conf"
like "$CALLS" "sinfo -h -N -n n1 -o %b" "feature=NAME asks Slurm for the node's features"
like "$CALLS" "triad 30 GB/s < 35 GB/s" "and the class's limit applies"
SI_FEATURES=cache ST_BEST=30 hc -N n1 -C "$T/feat.conf"
unlike "$CALLS" "state=drain" "a node without the feature does not get it"
printf '%s\n' "-m 1" "knl(*) || -m 35" > "$T/badsel.conf"
hc -N n1 -C "$T/badsel.conf"
like "$CALLS" "error: zonesort-health-check: $T/badsel.conf line 2: .knl\(\*\). is not a node selector; expected" "a selector that is none is an error, named"

hc -N n1 -m 30 -l "$T/runner.log"
like "$(cat "$T/runner.log")" "zonesort-health-check: healthy" "-l FILE gets the log lines"

done_testing
