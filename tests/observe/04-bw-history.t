#!/bin/bash
# zonesort-bw-history over many nodes: a directory of per-node history
# files (as on a shared file system) or several -H files; the summary puts
# the slowest nodes first with their trend in GB/s per day; the plot has one
# line per node, the check's limit, labelled axes with units, a legend.
# The histories are made here, with known slopes, so the expected trend is
# computed from the data, not by the tool.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need jq gnuplot awk file
BWH=$ZS_NHC_DIR/zonesort-bw-history
need_file "$BWH" "zonesort-bw-history"

T=$(mktemp -d /tmp/zs-obs-bwh.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/shared"
# node n<k>: 20 runs 2 hours apart; n03 loses 3 GB/s per run (36 GB/s a
# day), n07 1 GB/s per run, the others are flat with +-1 GB/s.
t0=1795000000
for k in $(seq 1 14); do
	node=$(printf 'n%02d' "$k")
	for i in $(seq 0 19); do
		case $node in
		n03) v=$((350 - 3 * i)) ;;
		n07) v=$((350 - i)) ;;
		*) v=$((349 + (i + k) % 3)) ;;
		esac
		verdict=pass
		[ "$v" -lt 300 ] && verdict=fail
		printf '{"time":"t%d","epoch":%d,"node":"%s","job":"%d","triad_best_gbs":%d,"triad_median_gbs":%d,"baseline_gbs":350,"min_gbs":300,"verdict":"%s"}\n' \
			"$i" $((t0 + i * 7200 + k)) "$node" $((100 * k + i)) "$v" "$v" "$verdict"
	done | head -c -1 > "$T/shared/$node.jsonl"	# the last line without its newline
done

out=$("$BWH" -D "$T/shared"); rc=$?
is "$rc" 0 "-D DIR: every per-node file is read"
is "$(printf '%s\n' "$out" | tail -n +2 | wc -l)" 14 "14 nodes, one line each"
like "$out" "^NODE +RUNS +PASS +FAIL +ERROR +SKIP +HELD +LAST +MIN +MEDIAN +MAX +BOOT% +TREND/d" "header with HELD, BOOT% and TREND/d"
is "$(printf '%s\n' "$out" | sed -n '2p;3p' | awk '{ print $1 }' | tr '\n' ' ')" "n03 n07 " "the slowest nodes come first"
like "$(printf '%s\n' "$out" | sed -n 2p)" "^n03 +20 +17 +3 +0 +0 +0 +293\.0 +293\.0 +321\.5 +350\.0 +84 +-36\.00 " \
	"n03: runs, verdicts, last/min/median/max, 84% of the baseline, -36 GB/s a day"
like "$(printf '%s\n' "$out" | sed -n 3p)" "^n07 .* -12\.00 " "n07: -12 GB/s a day"
like "$(printf '%s\n' "$out" | grep '^n01 ')" " [+-]0\.[0-9]{2} " "a flat node trends near 0"
ok "the last line of a file without a newline is read (20 runs of n14)" \
	test "$(printf '%s\n' "$out" | awk '$1 == "n14" { print $2 }')" = 20

out=$("$BWH" -H "$T/shared/n01.jsonl" -H "$T/shared/n03.jsonl" -w 1)
is "$(printf '%s\n' "$out" | tail -n +2 | awk '{ print $1 }')" n03 "-H twice and -w 1: the slowest of the two"
out=$("$BWH" -D "$T/shared" n07 -n 3)
is "$(printf '%s\n' "$out" | tail -n +2 | awk '{ print $3 }' | tr '\n' ' ')" "333.0 332.0 331.0 " "one node's last runs from the directory"

out=$("$BWH" -D "$T/shared" -p "$T/all.png" 2>&1); rc=$?
is "$rc" 0 "-p FILE.png over 14 nodes"
like "$(file -b "$T/all.png")" "^PNG image data, 1100 x 620" "a 1100x620 PNG"
"$BWH" -D "$T/shared" -p "$T/all.svg" > /dev/null 2>&1
svg=$(cat "$T/all.svg")
like "$svg" "memory bandwidth per node: the 12 slowest of 14 nodes" "the title says which nodes are drawn"
for want in "STREAM triad bandwidth \(GB/s\)" "time of the check after each job" "limit 300 GB/s" "failed check" ">n03<" ">n07<"; do
	like "$svg" "$want" "the plot has \"$want\""
done
nodes_drawn() { grep -o '<title>n[0-9][0-9]</title>' "$1" | sort -u | wc -l; }
is "$(nodes_drawn "$T/all.svg")" 12 "one line per node drawn, 12 of them"
# Last triads: n03 293, n07 331, five nodes at 349, three at 350, then
# n01, n04, n10, n13 at 351: the last two are left out.
unlike "$svg" ">n1[03]<" "the nodes beyond the 12 slowest are left out"
"$BWH" -D "$T/shared" -w 3 -p "$T/three.svg" > /dev/null 2>&1
is "$(nodes_drawn "$T/three.svg")" 3 "-w 3: three lines"

# Hostile history lines (the files may be written by many nodes): a limit
# that tries gnuplot's system, a node name with backquotes, quotes and a
# macro; neither may run anything, and only numbers and escaped names
# reach gnuplot. A line that is no record is named with its file and line.
mkdir -p "$T/hostile"
cd "$T/hostile" || exit 1
{
	printf '{"epoch":%d,"node":"evil","triad_best_gbs":300,"min_gbs":"1 title \\"x\\"; system \\"touch owned\\"; #","verdict":"pass"}\n' "$t0"
	printf '{"epoch":%d,"node":"evil","triad_best_gbs":301,"min_gbs":"`touch owned2`","verdict":"pass"}\n' $((t0 + 60))
	printf '{"epoch":%d,"node":"x`touch owned3`\x27y\\"@z","triad_best_gbs":250,"min_gbs":200,"verdict":"pass"}\n' "$t0"
	printf '{"epoch":%d,"node":"good","triad_best_gbs":310,"min_gbs":300,"verdict":"pass"}\n' "$t0"
	printf 'not json at all\n'
	printf '{"epoch":%d,"node":"good","triad_best_gbs":"311; system \\"touch owned4\\"","verdict":"pass"}\n' $((t0 + 60))
} > "$T/hostile.jsonl"
out=$("$BWH" -H "$T/hostile.jsonl" -p "$T/hostile.svg" 2> "$T/hostile.err"); rc=$?
is "$rc" 1 "hostile lines: the plot is made, exit 1 for the line that is no record"
is "$(cat "$T/hostile.err")" "zonesort-bw-history: $T/hostile.jsonl line 5: not a history record" \
	"the bad line is named with its file and line number"
is "$(ls "$T/hostile")" "" "nothing ran: no file touched by system or backquotes"
ok "the plot exists" test -s "$T/hostile.svg"
like "$(grep -o '<title>x[^<]*</title>' "$T/hostile.svg" | head -1)" "^<title>x\`touch owned3\`'y\"@z</title>$" "the hostile node name is drawn as text"
unlike "$(cat "$T/hostile.svg")" "system" "the hostile limit is not in the plot"
"$BWH" -H "$T/hostile.jsonl" evil -p "$T/evil.png" > /dev/null 2>&1
is "$(ls "$T/hostile")" "" "one node's plot runs nothing either"
cd "$T" || exit 1

# TREND/d: only over at least 3 runs spanning at least 6 hours, per probe
# shape (threads, size).
trend_of() { "$BWH" -H "$1" | awk -v n="$2" '$1 == n { print $13 }'; }
printf '{"epoch":%d,"node":"fast","triad_best_gbs":%s,"threads":2,"size_bytes":100,"verdict":"pass"}\n' \
	"$t0" 40 $((t0 + 5)) 45 > "$T/two.jsonl"
is "$(trend_of "$T/two.jsonl" fast)" "-" "two runs 5 s apart: no trend (was +77760 GB/s a day)"
printf '{"epoch":%d,"node":"fast","triad_best_gbs":%s,"threads":2,"size_bytes":100,"verdict":"pass"}\n' \
	"$t0" 40 $((t0 + 3600)) 41 $((t0 + 7200)) 42 > "$T/short.jsonl"
is "$(trend_of "$T/short.jsonl" fast)" "-" "three runs over 2 hours: no trend"
printf '{"epoch":%d,"node":"fast","triad_best_gbs":%s,"threads":2,"size_bytes":100,"verdict":"pass"}\n' \
	"$t0" 40 $((t0 + 10800)) 39 $((t0 + 21600)) 38 > "$T/six.jsonl"
is "$(trend_of "$T/six.jsonl" fast)" "-8.00" "three runs over 6 hours losing 1 GB/s each 3 hours: -8 GB/s a day"
printf '{"epoch":%d,"node":"fast","triad_best_gbs":%s,"threads":%d,"size_bytes":100,"verdict":"pass"}\n' \
	"$t0" 40 2 $((t0 + 10800)) 20 1 $((t0 + 21600)) 38 2 $((t0 + 32400)) 21 1 $((t0 + 43200)) 36 2 > "$T/mixed.jsonl"
is "$(trend_of "$T/mixed.jsonl" fast)" "-8.00" "1- and 2-thread runs mixed: the slope of the last run's shape (2 threads) only"

bad() {	# description pattern args...
	local desc=$1 pat=$2; shift 2
	"$BWH" "$@" > "$T/out" 2>&1
	local rc=$?
	if [ "$rc" = 2 ] && grep -Eq -- "$pat" "$T/out"; then
		_tap_result 0 "refused: $desc"
	else
		_tap_result 1 "refused: $desc"
		diag "rc=$rc out: $(cat "$T/out")" "want /$pat/"
	fi
}
mkdir -p "$T/empty"
bad "-D of a missing directory" "-D: '$T/none' is not a readable directory" -D "$T/none"
bad "-D of an empty directory" "-D: no history file in $T/empty" -D "$T/empty"
bad "-w 0" "-w: '0' is not a count" -D "$T/shared" -w 0
done_testing
