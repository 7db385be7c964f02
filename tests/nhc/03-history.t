#!/bin/bash
# zonesort-bw-history: the per-node summary, one node's trend as a table,
# filters, and plots (PNG and SVG through gnuplot), on a history written by
# the check itself (stand-in probe).
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
need jq gnuplot awk file
: "${ZS_BW_HISTORY:=$ZS_NHC_DIR/zonesort-bw-history}"
need_file "$ZS_BW_HISTORY" "zonesort-bw-history"
need_file "$ZS_NHC_DIR/stream_triad.nhc" "the NHC check"

T=$(mktemp -d /tmp/zs-nhc-hist.XXXXXX)
trap 'rm -rf "$T"' EXIT
H=$T/history.jsonl

# Write a history the way the check does: node a has a bad run, a probe
# failure and a run the drain guard held (Slurm could not answer), node b
# is skipped once.
(
	die() { :; }; log() { :; }; dbg() { :; }; syslog() { :; }
	set -f
	for f in stream_triad stream_triad_probe stream_triad_state stream_triad_slurm stream_triad_guard; do . "$ZS_NHC_DIR/$f.nhc"; done
	STREAM_TRIAD_PROBE=$ZS_SRCDIR/testbed/stand-in-stream-triad
	STREAM_TRIAD_HISTORY=$H STREAM_TRIAD_BASELINE=$T/state/ STREAM_TRIAD_SQUEUE=/bin/true STREAM_TRIAD_GUARD=off
	one() { nhc_stream_triad_reset; STREAM_TRIAD_NODE=$1; shift; "$@"; }
	i=100
	for b in 45 44 46 20 44; do
		i=$((i + 1))
		SLURM_JOB_ID=$i ST_BEST=$b one node-a check_hw_stream_triad -m 35 -p 70
	done
	SLURM_JOB_ID=200 ST_EXIT=3 one node-a check_hw_stream_triad -m 35
	SLURM_JOB_ID=201 ST_BEST=30 STREAM_TRIAD_GUARD=1 STREAM_TRIAD_SINFO=/bin/false one node-a check_hw_stream_triad -m 35
	for b in 50 52 51; do SLURM_JOB_ID=3$b ST_BEST=$b one node-b check_hw_stream_triad -m 35; done
	STREAM_TRIAD_SQUEUE=$T/sq
	printf '#!/bin/sh\necho 999\n' > "$T/sq"; chmod +x "$T/sq"
	one node-b check_hw_stream_triad -m 35
)
echo '{"node":"node-a", "torn' >> "$H"
is "$(wc -l < "$H")" 12 "history written by the check (11 runs and a torn line)"

out=$("$ZS_BW_HISTORY" -H "$H" 2> "$T/err")
is "$?" 1 "summary: exit 1, for the torn line"
is "$(cat "$T/err")" "zonesort-bw-history: $H line 12: not a history record" "which is named with its file and line, and skipped"
like "$out" "^NODE +RUNS +PASS +FAIL +ERROR +SKIP +HELD +LAST +MIN +MEDIAN +MAX" "summary header"
like "$out" $'\n''node-a +7 +4 +1 +1 +0 +1 +30\.0 +20\.0 +44\.0 +46\.0 ' "node-a: 7 runs, 4 pass, 1 fail, 1 error, 1 held; last, min, median, max"
like "$out" $'\n''node-b +4 +3 +0 +0 +1 +0 +51\.0 +50\.0 +51\.0 +52\.0 ' "node-b: 4 runs, 1 skipped"

out=$("$ZS_BW_HISTORY" -H "$H" node-a)
like "$out" "^TIME +JOB +BEST +MEDIAN +BOOT% +THR +SIZE +VERDICT +REASON" "node table header"
is "$(printf '%s\n' "$out" | tail -n +2 | wc -l)" 7 "one row per run of node-a"
like "$out" " 104 +20\.0 +39\.8 +44 +2 +768 MiB +fail triad 20 GB/s < 35 GB/s" "a failed run: value, % of the boot's baseline, reason"
like "$out" " 101 +45\.0 +39\.8 +100 +2 " "the first run is the baseline (100%)"
like "$out" " 200 +- +- +- +- +- +error .*could not measure \(exit 3\)" "a probe failure shows as error with its reason"
like "$out" " 201 +30\.0 .* +held triad 30 GB/s < 35 GB/s .*guard unavailable: sinfo failed" "a held run: its figure, verdict held and why"
out=$("$ZS_BW_HISTORY" node-b -H "$H")
like "$out" "skip other jobs run on node-b: 999" "options may follow the node; skips show their reason"

out=$("$ZS_BW_HISTORY" -H "$H" -n 2 node-a)
is "$(printf '%s\n' "$out" | tail -n +2 | awk '{ print $2 }' | tr '\n' ' ')" "200 201 " "-n 2: the last two runs"
out=$("$ZS_BW_HISTORY" -H "$H" -S "1 hour ago")
like "$out" "node-a +7 " "-S: runs since a time"
"$ZS_BW_HISTORY" -H "$H" -S "2099-01-01" > "$T/out" 2>&1
is "$?" 2 "-S in the future: nothing to show, exit 2"
like "$(cat "$T/out")" "^zonesort-bw-history: no runs in " "and says so"

"$ZS_BW_HISTORY" -H "$H" node-a -p "$T/a.png" > "$T/out" 2>&1
is "$?" 1 "-p FILE.png: exit 1 (the torn line), the plot made all the same"
like "$(file -b "$T/a.png")" "^PNG image data" "a PNG plot of node-a"
like "$(cat "$T/out")" "plot written to $T/a.png" "says where"
"$ZS_BW_HISTORY" -H "$H" -p "$T/all.svg" > /dev/null 2>&1
like "$(head -c 400 "$T/all.svg")" "<svg" "-p FILE.svg: an SVG plot of every node"
ok "the SVG names both nodes" grep -q "node-b" "$T/all.svg"

bad() {	# description pattern args...
	local desc=$1 pat=$2
	shift 2
	"$ZS_BW_HISTORY" "$@" > "$T/out" 2>&1
	local rc=$?
	if [ "$rc" = 2 ] && grep -Eq -- "$pat" "$T/out"; then
		_tap_result 0 "refused: $desc"
	else
		_tap_result 1 "refused: $desc"
		diag "rc=$rc out: $(cat "$T/out")" "want /$pat/"
	fi
}
bad "-p FILE.jpg" "-p: '$T/x.jpg' is not a \.png or \.svg file name" -H "$H" -p "$T/x.jpg"
bad "-n 0" "-n: '0' is not a count" -H "$H" -n 0
bad "-n x" "-n: 'x' is not a count" -H "$H" -n x
bad "-S garbage" "-S: 'not a date' is not a time" -H "$H" -S "not a date"
bad "a missing file" "cannot read the history file $T/none" -H "$T/none"
bad "an unknown node" "no runs of node node-z" -H "$H" node-z
bad "two nodes" "more than one node given \('node-a' 'node-b'\)" -H "$H" node-a node-b
bad "an unknown option" "unknown option -x" -H "$H" -x
"$ZS_BW_HISTORY" -h > "$T/out"
like "$(cat "$T/out")" "^Usage: zonesort-bw-history" "-h prints the usage"

done_testing
