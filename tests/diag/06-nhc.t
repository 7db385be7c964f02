#!/bin/bash
# check_hw_zonesort_potential (nhc/zonesort_potential.nhc) in LBNL NHC's
# own style: the .nhc file is sourced with die/log/dbg replaced and NHC's
# shell settings on; "zonesort status --json" is a stand-in that prints the
# JSON a test gives it (a node with a memory-side cache cannot be had here).
# Last, the check against the real zonesort with an assumed cache.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
need jq timeout awk
need_file "$ZS_NHC_DIR/zonesort_potential.nhc" "the NHC check"

T=$(mktemp -d /tmp/zs-nhc-potential.XXXXXX)
trap 'rm -rf "$T"' EXIT
STANDIN=$ZS_SRCDIR/tests/diag/stand-in-zonesort
export ZP_LOG=$T/calls

die() { DIE_RC=$1; DIE_MSG="${*:2}"; return "$DIE_RC"; }
log() { LOG_MSG+="$*"$'\n'; }
dbg() { DBG_MSG+="$*"$'\n'; }
syslog() { :; }
set -f
shopt -s extglob

is "$(PATH=/nonexistent; . "$ZS_NHC_DIR/zonesort_potential.nhc" 2>&1; echo "rc=$?")" "rc=0" \
	"sourcing runs no command and prints nothing"
. "$ZS_NHC_DIR/zonesort_potential.nhc"
is "$(type -t check_hw_zonesort_potential)" function "check_hw_zonesort_potential() loaded"
ZONESORT_POTENTIAL_ZONESORT=$STANDIN

# node_json NODE POTENTIAL RANDOM: one node entry with a free_slots object.
node_json() {
	printf '{"node":%s,"memory":1,"free":1,"cache_size":67108864,"target":true,"works":true,"detail":"","free_slots":{"cache_size":67108864,"ways":1,"slots":16384,"free_pages":1000,"conflict_potential":%s,"random_fraction":%s}}' "$1" "$2" "$3"
}
status_json() { printf '{"version":"0.1.0","memory_side_caches":[],"sorter":"none","why":"","targets":"0","nodes":[%s]}' "$(IFS=,; echo "$*")"; }

run() {
	DIE_RC='' DIE_MSG='' LOG_MSG='' DBG_MSG=''
	: > "$ZP_LOG"
	check_hw_zonesort_potential "$@"
	RC=$?
}

# --- pass and fail -----------------------------------------------------------------
export ZP_JSON=$(status_json "$(node_json 0 0.032 0.393442)")
run -m 5%
is "$RC" 0 "3.2% passes -m 5%"
is "$DIE_RC" "" "a pass does not call die"
is "$ZONESORT_POTENTIAL_VERDICT" pass "verdict pass"
is "$ZONESORT_POTENTIAL_WORST" 0.032 "the worst potential is kept"
like "$DBG_MSG" "node 0: conflict potential 3.2% within 5.0%" "dbg says so"
is "$(cat "$ZP_LOG")" "status --json" "zonesort status --json is what runs"

run -m 0.03
is "$RC" 1 "3.2% fails -m 0.03"
is "$DIE_RC" 1 "die 1"
is "$DIE_MSG" "check_hw_zonesort_potential:  free-memory conflict potential above 3.0%: node 0 3.2% (random placement 39.3%)" \
	"the message names the node, the potential, the limit and random placement"
is "$ZONESORT_POTENTIAL_VERDICT" fail "verdict fail"
run -m 0.032
is "$RC" 0 "exactly at the limit passes"
run -m 1
is "$RC" 0 "-m 1 (100%) passes"
run -m 0
is "$RC" 1 "-m 0 fails anything above 0"

# Several nodes: every node over the limit is named; nodes without a cache
# (free_slots null) are left out.
export ZP_JSON=$(status_json "$(node_json 0 0.02 0.39)" '{"node":1,"memory":1,"free":1,"cache_size":0,"target":false,"works":false,"detail":"","free_slots":null}' "$(node_json 2 0.25 0.39)" "$(node_json 3 0.41 0.39)")
run -m 10%
is "$RC" 1 "two of three cached nodes over 10%: fails"
like "$DIE_MSG" "above 10.0%: node 2 25.0% \(random placement 39.0%\); node 3 41.0% \(random placement 39.0%\)$" \
	"both nodes over the limit are named, the good one is not"
is "$ZONESORT_POTENTIAL_WORST_NODE" 3 "the worst node is kept"
run -m 50%
is "$RC" 0 "all under 50%: passes"

# --- options reach zonesort ------------------------------------------------------------
export ZP_JSON=$(status_json "$(node_json 0 0.01 0.39)")
run -m 5% -c 16GiB -w 2 -a 25%
is "$RC" 0 "with -c, -w and -a"
is "$(cat "$ZP_LOG")" "status --json --cache-size 16GiB --ways 2 --fraction 0.25" \
	"-c, -w and -a become --cache-size, --ways and --fraction"
run -m 5% -a 0.1
is "$(cat "$ZP_LOG")" "status --json --fraction 0.1" "-a as a fraction"
ZONESORT_POTENTIAL_ZONESORT=/nonexistent/zonesort
run -m 5% -z "$STANDIN"
is "$RC" 0 "-z names the zonesort command"
ZONESORT_POTENTIAL_ZONESORT=$STANDIN

# --- what zonesort says goes through ------------------------------------------------------
ZP_EXIT=1 ZP_STDERR="zonesort status: cannot open /proc/kpageflags" run -m 5%
is "$RC" 1 "zonesort failing fails the check"
is "$DIE_MSG" "check_hw_zonesort_potential:  $STANDIN status failed (exit 1): zonesort status: cannot open /proc/kpageflags" \
	"with zonesort's own message"
ZP_EXIT=2 ZP_STDERR="zonesort status: --cache-size 3M: not a power of two" run -m 5% -c 3M
like "$DIE_MSG" "failed \(exit 2\): zonesort status: --cache-size 3M" "a size zonesort refuses: its message"
ZONESORT_POTENTIAL_ZONESORT=/nonexistent/zonesort run -m 5%
like "$DIE_MSG" "cannot run /nonexistent/zonesort \(exit 127\)" "a missing zonesort is named"
ZP_SLEEP=3 run -m 5% -T 1
like "$DIE_MSG" "took longer than 1 s" "-T limits zonesort's time"
ZP_JSON='not json' run -m 5%
like "$DIE_MSG" "gave no usable JSON: not json" "output that is not JSON"
ZP_JSON=$(status_json '{"node":0,"free_slots":null}') run -m 5%
is "$RC/$DIE_MSG/$ZONESORT_POTENTIAL_VERDICT" "0//skip" "no cache anywhere: nothing to check, the node passes (one nhc.conf line for a mixed cluster)"
like "$LOG_MSG" "no NUMA node has a memory-side cache: nothing to check \(-C makes that a failure\)" "and the log says so"
ZP_JSON=$(status_json '{"node":0,"free_slots":null}') run -m 5% -C
is "$DIE_MSG" "check_hw_zonesort_potential:  no NUMA node has a memory-side cache to check (-C); give its size and ways (-c SIZE -w N)" \
	"-C: a node of the cache class without one fails, saying -c and -w are needed"
ZP_JSON=$(status_json '{"node":0,"free_slots":{"error":"cannot open /proc/kpageflags: Permission denied (root is needed to read page flags)"}}') run -m 5%
is "$DIE_MSG" "check_hw_zonesort_potential:  node 0: free memory over cache slots unknown: cannot open /proc/kpageflags: Permission denied (root is needed to read page flags)" \
	"a node zonesort could not read: its reason"

# --- bad options ----------------------------------------------------------------------------
for bad in "-m 5" "-m abc" "-m 150%" "-m -1" "-m ''"; do
	eval "run $bad"
	is "$RC/$DIE_RC" "1/1" "'$bad' refused"
	like "$DIE_MSG" "^check_hw_zonesort_potential:  -m: .* expected a fraction from 0 to 1 \(e.g. 0.1\) or a percentage" \
		"'$bad': the message names -m and the accepted forms"
done
run
like "$DIE_MSG" "no limit given; expected -m MAX" "no -m: says -m is needed"
run -m 5% -w 0
like "$DIE_MSG" "-w: '0' is not a number of ways" "-w 0 refused"
run -m 5% -w 65
like "$DIE_MSG" "-w: '65'" "-w 65 refused"
run -m 5% -a 0
like "$DIE_MSG" "-a: '0' is not an allocation" "-a 0 refused"
run -m 5% -c 'lots of'
like "$DIE_MSG" "-c: 'lots of' is not a cache size" "-c with text refused"
run -m 5% -x
like "$DIE_MSG" "unknown option -x" "unknown option"
run -m 5% extra
like "$DIE_MSG" "unexpected argument 'extra'" "stray argument"
run -m
like "$DIE_MSG" "option -m needs a value" "-m without a value"

# --- the real zonesort ------------------------------------------------------------------------
if [ "$(id -u)" = 0 ] && [ -x "$ZS_ZONESORT" ]; then
	ZONESORT_POTENTIAL_ZONESORT=$ZS_ZONESORT
	run -m 100% -c 64M -w 1
	is "$RC" 0 "real zonesort, 64 MiB direct-mapped assumed: passes a 100% limit"
	like "$ZONESORT_POTENTIAL_WORST" "^0?\.[0-9]+$|^[01]$" "and records the node's potential ($ZONESORT_POTENTIAL_WORST)"
	run -m 0% -c 64M -w 1
	is "$RC" 1 "and fails a 0% limit (free memory is never perfectly spread here)"
	like "$DIE_MSG" "node 0 [0-9.]+% \(random placement 39.3%\)" "naming node 0 and random placement"
	run -m 10% -C
	like "$DIE_MSG" "no NUMA node has a memory-side cache" "without -c/-w on this machine: no cache to check (-C)"
else
	ok "root and the built zonesort for the real run (build first; run as root)" false
fi
done_testing
