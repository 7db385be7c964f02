#!/bin/bash
# Bad input to zonesort conflicts and status: unknown and vanishing
# processes, a caller who is not root, cache sizes that are zero or not a
# whole number of pages, zero ways, a machine without a known cache. Every error
# starts with the program name and names the bad value; nothing crashes.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/diag-lib.sh"
need gcc jq runuser
need_file "$ZS_ZONESORT" "zonesort command"
[ "$(id -u)" = 0 ] || { ok "runs as root" false; done_testing; exit 1; }

T=$(mktemp -d /tmp/zs-diag03.XXXXXX)
chmod 755 "$T"
trap 'stop_alloc; rm -rf "$T"' EXIT
ST="statedir=$T/state"
Z=$ZS_ZONESORT
ok "alloc-touch builds" build_alloc "$T"

# run ARGS...: sets OUT (stdout), ERR (stderr), RC.
run() { OUT=$("$@" 2> "$T/err"); RC=$?; ERR=$(cat "$T/err"); }

# --- processes --------------------------------------------------------------------
pid=4194000
while kill -0 "$pid" 2>/dev/null; do pid=$((pid + 1)); done
run "$Z" conflicts "$pid" --cache-size 64M --ways 1 "$ST"
is "$RC" 1 "an unknown PID fails (exit 1)"
is "$ERR" "zonesort conflicts: no process $pid" "and says there is no such process"
run "$Z" conflicts --cache-size 64M --ways 1 "$ST"
is "$RC" 2 "no PID and no --job: usage error"
like "$ERR" "^zonesort conflicts: give process ids or --job JOBID" "and says what to give"
run "$Z" conflicts 12x --cache-size 64M --ways 1 "$ST"
is "$RC" 2 "a PID that is not a number: usage error"
like "$ERR" "PID: '12x'" "the error names the bad PID"
run "$Z" conflicts 0 --cache-size 64M --ways 1 "$ST"
is "$RC" 2 "PID 0 refused"

# A zombie has exited but is not reaped yet (its parent, python, sleeps):
# it has no pages left, and is reported as exited.
python3 -c 'import os, sys, time
pid = os.fork()
if pid == 0:
    os._exit(0)
print(pid, flush=True)
time.sleep(10)' > "$T/zombie" &
parent=$!
wait_for 5 test -s "$T/zombie"
zpid=$(cat "$T/zombie")
wait_for 5 sh -c "[ \"\$(ps -o stat= -p $zpid | tr -d ' ')\" = Z ]"
is "$(ps -o stat= -p "$zpid" | tr -d ' ')" Z "a zombie process exists for the test ($zpid)"
run "$Z" conflicts "$zpid" --cache-size 64M --ways 1 --json "$ST"
is "$RC" 1 "a zombie process alone: fails (exit 1)"
like "$ERR" "^zonesort conflicts: process $zpid exited before its pages were read" "and says it exited"
start_alloc 16
run "$Z" conflicts "$zpid" "$ALLOC_PID" --cache-size 64M --ways 1 --json "$ST"
is "$RC" 0 "a zombie beside a live process: the live one is measured"
is "$(jq -c '[.pids, .exited]' <<< "$OUT")" "[[$ALLOC_PID],[$zpid]]" "the JSON lists the exited process apart"
like "$ERR" "process $zpid exited before its pages were read; left out" "and stderr says it was left out"
stop_alloc
kill "$parent"; wait "$parent" 2>/dev/null

# A process killed while its pages are read: either it was read whole
# before it went, or it is reported as exited; never a crash.
outcomes=
for delay in 0 0.001 0.002 0.005 0.01 0.02 0.03 0.05; do
	start_alloc 512 || break
	( sleep "$delay"; kill -KILL "$ALLOC_PID" ) 2>/dev/null &
	killer=$!
	run "$Z" conflicts "$ALLOC_PID" --cache-size 64M --ways 1 --json "$ST"
	wait "$killer"
	stop_alloc
	case $RC in
	0) jq -e '.pages >= 0' <<< "$OUT" > /dev/null && outcomes+=" read" || outcomes+=" bad-json" ;;
	1) if [[ "$ERR" =~ (exited|no\ process) ]]; then outcomes+=" exited"; else outcomes+=" other:$ERR"; fi ;;
	*) outcomes+=" rc=$RC" ;;
	esac
done
diag "outcomes by delay:$outcomes"
unlike "$outcomes" "bad-json|other|rc=" "a process that exits during the read: a full result or a clear error, never a crash"

# --- not root ------------------------------------------------------------------------
mkdir -m 777 "$T/nobody"
run runuser -u nobody -- "$Z" conflicts $$ --cache-size 64M --ways 1 "statedir=$T/nobody"
is "$RC" 1 "not root: conflicts fails"
like "$ERR" "^zonesort conflicts: root is needed: /proc/PID/pagemap shows page frame numbers only to root" \
	"and says root is needed, and why"

# --- cache sizes and ways ----------------------------------------------------------------
for bad in 0 0B 100 12345 4097; do
	run "$Z" conflicts $$ --cache-size "$bad" --ways 1 "$ST"
	is "$RC" 2 "--cache-size $bad: usage error"
	like "$ERR" "^zonesort conflicts: --cache-size .*'$bad'" "--cache-size $bad: the error names the value"
done
like "$(run "$Z" conflicts $$ --cache-size 12345 --ways 1 "$ST"; echo "$ERR")" "not a whole number of 4096-byte pages" \
	"a size that is not a whole number of pages is called that"
like "$(run "$Z" conflicts $$ --cache-size 0 --ways 1 "$ST"; echo "$ERR")" "must be a positive multiple of the page size" \
	"a zero size says what is accepted"
run "$Z" conflicts $$ --cache-size lots --ways 1 "$ST"
is "$RC" 2 "--cache-size lots: usage error"
like "$ERR" "lots" "and names the value"
for bad in 0 65 x -1; do
	run "$Z" conflicts $$ --cache-size 64M --ways "$bad" "$ST"
	is "$RC" 2 "--ways $bad: usage error"
	like "$ERR" "^zonesort conflicts: --ways" "--ways $bad: the error names --ways"
done
run "$Z" conflicts $$ --cache-size 64M --ways 3 "$ST"
is "$RC" 2 "--ways 3 with 64 MiB: usage error (no whole page slots)"
like "$ERR" "--ways 3" "and names the ways"
run "$Z" conflicts $$ "$ST" cache_size=12345 ways=1
is "$RC" 2 "cache_size=12345 as a policy word: usage error"
like "$ERR" "cache_size=12345" "and names the word"

for opt in "--cache-size 0" "--ways 0" "--fraction 0" "--fraction 150%x" "--fraction 17"; do
	run "$Z" status $opt "$ST"
	is "$RC" 2 "status $opt: usage error"
	like "$ERR" "^zonesort status: ${opt%% *}" "status $opt: the error names the option"
done

# --- no cache known, nothing given ----------------------------------------------------------
run "$Z" conflicts $$ "$ST"
is "$RC" 1 "no memory-side cache and no size: fails"
like "$ERR" "no memory-side cache found \(hwloc\) and no cache size given: give --cache-size SIZE and --ways N" \
	"and says what is missing"
run "$Z" conflicts $$ --cache-size 64M "$ST"
is "$RC" 1 "a size but no ways, and no cache to ask: fails"
like "$ERR" "associativity .* unknown: give --ways N" "and says --ways is missing"
o=$("$Z" status --cache-size 64M --json "$ST")
like "$(jq -r .nodes[0].free_slots.error <<< "$o")" "give --ways N" "status: a size without ways says --ways is missing"

# --- jobs ---------------------------------------------------------------------------------
run "$Z" conflicts --job 'x;y' --cache-size 64M --ways 1 "$ST"
is "$RC" 1 "--job with a bad id fails"
like "$ERR" "job 'x;y': expected a job id" "and names it"
done_testing
