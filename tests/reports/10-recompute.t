#!/bin/bash
# Every table of the benchmark reports (bench/REPORT-*.md) and of
# docs/measurements.md that names its data is what that data gives:
# bench/recompute-reports recomputes each one from the committed files and
# must find no difference. It must also see one: a copy of a report with
# one figure changed, and a marker naming a file that is not there.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
need python3
rr=$ZS_SRCDIR/bench/recompute-reports

out=$("$rr" 2>&1)
rc=$?
is "$rc" 0 "every marked table agrees with its data"
[ "$rc" -eq 0 ] || diag "$(head -60 <<< "$out")"

marked=$(grep -l '^<!-- recompute: ' "$ZS_SRCDIR"/bench/REPORT-*.md "$ZS_SRCDIR/docs/measurements.md" | wc -l)
num_ok "reports with tables made from data: $marked (at least the decay report and docs/measurements.md)" "$marked >= 2"

# Each marker's data files are committed (not only present in this tree).
if git -C "$ZS_SRCDIR" rev-parse --git-dir > /dev/null 2>&1; then
	missing=
	# A summary names its files as KIND:FILE[,FILE...].
	for f in $(sed -n 's/^<!-- recompute: [a-z-]* \(.*\) -->$/\1/p' "$ZS_SRCDIR"/bench/REPORT-*.md "$ZS_SRCDIR/docs/measurements.md" "$ZS_SRCDIR/README.md" |
		tr ' ,' '\n\n' | sed 's/^[a-z-]*://' | sort -u); do
		git -C "$ZS_SRCDIR" ls-files --error-unmatch "$f" > /dev/null 2>&1 || missing="$missing $f"
	done
	is "$missing" "" "every data file a table names is committed"
fi

# A changed figure is found and named.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
report=$(grep -l '^<!-- recompute: decay ' "$ZS_SRCDIR"/bench/REPORT-*.md | head -1)
awk '/^<!-- recompute: decay / { m = 1; print; next }
	m && /^\| [^-]/ && ++row == 2 { sub(/\| [0-9]+ of /, "| 999 of "); m = 0 } { print }' "$report" > "$work/changed.md"
out=$("$rr" "$work/changed.md" 2>&1)
is "$?" 1 "a report whose table differs from its data fails"
like "$out" "999 of" "... and the difference is shown"
# A marker naming a file that is not there is an error naming it.
printf '<!-- recompute: decay bench/no-such-file.jsonl -->\n| x |\n' > "$work/missing.md"
out=$("$rr" "$work/missing.md" 2>&1)
is "$?" 2 "a marker naming a missing file is an error"
like "$out" "bench/no-such-file.jsonl" "... naming the file"
printf '<!-- recompute: nonsense x -->\n' > "$work/kind.md"
like "$("$rr" "$work/kind.md" 2>&1)" "unknown table kind" "an unknown table kind is an error"
# The torture runs' rmmod table: three rmmods on the line
# 2 s + 0.5 ms per held page give that line back, and the ceiling's pages
# are 125/1000 of the guest's 65536-page cache.
printf '%s\n' '{"kernel":"k","debug":true,"seed":7,"max_permille_cap":125,"rmmod_held_cs":[[0,200],[2000,300],[8000,600]]}' \
	'{"kernel":"old","debug":true,"seed":8,"rmmod_cs_max":1}' > "$work/torture.jsonl"
out=$("$rr" --table torture-rmmods "$work/torture.jsonl" 2>&1)
is "$?" 0 "the torture rmmod table is made"
like "$out" "\| k \(debug\) \| 7 \| 125 \(at most 8192 pages\) \| 3 \| 2000 / 8000 \| 3.00 / 6.00 \| 2.00 \| 2.00 s \+ 500 us x pages \| 0 \|" \
	"... with the held pages, the seconds and the line through them"
unlike "$out" "\| old " "... and without the runs that did not record each rmmod"
# The buffer-size table: jobs keyed by their run line's overflow= and
# buffer; 0.9, 0.8 and 0.7 of a 2x buffer colliding leave 10%, 20% and
# 30% of its pages alone, median 20%; a second run line starts a new key.
{
	echo '{"run":{"command":"c","overflow":"pile","buffer":2}}'
	for f in 0.9 0.7 0.8; do
		echo "{\"job\":{\"run\":1,\"kernel\":\"6.12.1\",\"mode\":\"on\",\"level\":0,\"job\":{\"buffer_fraction\":$f,\"buffer_pages\":32766,\"random\":0.8647}}}"
	done
	echo '{"run":{"command":"c","overflow":"spread","buffer":2}}'
	echo '{"job":{"run":1,"kernel":"7.2.13","mode":"on","level":0,"job":{"buffer_fraction":0.5,"buffer_pages":32766,"random":0.8647}}}'
} > "$work/buffer.jsonl"
out=$("$rr" --table churn-buffer "$work/buffer.jsonl" 2>&1)
is "$?" 0 "the buffer-size churn table is made"
like "$out" "\| 6.12 \| pile \| on \| 2x \| 0x \| 3 \| 32766 \| 80.0% \(70.0-90.0\) \| 20.0% \(10.0-30.0\) \| 86.5% \|" \
	"... with the median and range of the pages colliding and alone"
like "$out" "\| 7.x \| spread \| on \| 2x \| 0x \| 1 \| 32766 \| 50.0% \| 50.0% \| 86.5% \|" "... one row per run line's overflow="
printf '%s\n' '{"job":{"mode":"on"}}' > "$work/nojob.jsonl"
like "$("$rr" --table churn-buffer "$work/nojob.jsonl" 2>&1)" "a job line before any run line" \
	"... and a job line without its run line is an error"
# Decay runs pooled per kernel: two runs of a 128M cache (an eighth is
# 4096 pages), cycle 0 left out; one aged cycle of six above 2%, in the
# run with seed 2; held pages 1000..6000, lower median 3000 (the reports'
# medians are statistics.median_low: a value the data has).
# One miss in six: the exact one-sided 95% bound p solves
# (1-p)^6 + 6p(1-p)^5 = 0.05, p = 0.5818.
for s in 1 2; do
	{
		echo "{\"run\":{\"command\":\"c\",\"commit\":\"abc\",\"kernel\":\"6.1.0-1\",\"cache\":\"128M\",\"period\":10,\"delay_seed\":$s}}"
		echo '{"mode":"periodic","cycle":0,"fraction":0.5,"fraction_all":0.5,"held_pages":9000}'
		for c in 1 2 3; do
			f=0.001
			[ "$s$c" = 22 ] && f=0.03
			echo "{\"mode\":\"periodic\",\"cycle\":$c,\"fraction\":$f,\"fraction_all\":0.04,\"held_pages\":$(( (s - 1) * 3000 + c * 1000 ))}"
		done
	} > "$work/decay-$s.jsonl"
done
out=$("$rr" --table decay-pooled "$work/decay-1.jsonl" "$work/decay-2.jsonl" 2>&1)
is "$?" 0 "the pooled decay table is made"
like "$out" "\| 6.1.0-1 \| \`--zonesort=10\` \| 2 \| abc \| 1, 2 \| 5 of 6 \| 58.18% \| 2 of 3 \| 0.10% \| 4.00% \| 3000 of 4096 \|" \
	"... pooling the aged cycles of both runs, with the weakest run and the held median"
# Runs of one series on two point releases pool into one row naming both.
for k in 1 2; do
	sed "s/\"kernel\":\"6.1.0-1\"/\"kernel\":\"6.12.$k\",\"series\":\"6.12\"/" "$work/decay-$k.jsonl" > "$work/point-$k.jsonl"
done
out=$("$rr" --table decay-pooled "$work/point-1.jsonl" "$work/point-2.jsonl" 2>&1)
like "$out" "\| 6.12.1; 6.12.2 \| \`--zonesort=10\` \| 2 \| abc \| 1, 2 \| 5 of 6 \|" \
	"... and runs of one series on two point releases into one row naming both"

# Rounds by where they stand to the sorter's compactions: it compacted in
# cycle 2 (compact_scanned above 0; cycle 0 is left out even though it
# compacted too); cycles 3-7 are the five after it, 1 and 8 the others.
# Above 2%: cycles 2, 4 and 8; short of room: cycle 3 and cycle 1. Held:
# 100 x the cycle, so the round after the compaction holds 300 and the
# lower median of cycles 1-8 is 400. Huge blocks were taken (4096 pages)
# between the starts of cycles 2 and 3 only: the round after the
# compaction took that, the median of all rounds with one before is 0.
{
	echo '{"run":{"command":"c","commit":"abc","kernel":"6.1.0-1","cache":"128M","period":10}}'
	echo '{"mode":"periodic","cycle":0,"fraction":0.5,"held_pages":0,"compact_scanned":9}'
	for c in 1 2 3 4 5 6 7 8; do
		f=0.001 short=0 scanned=0
		case $c in 2 | 4 | 8) f=0.05 ;; esac
		case $c in 1 | 3) short=512 ;; esac
		[ "$c" = 2 ] && scanned=70000
		echo "{\"mode\":\"periodic\",\"cycle\":$c,\"fraction\":$f,\"held_pages\":$((c * 100)),\"short_pages\":$short,\"compact_scanned\":$scanned,\"taken_huge_total_at_go\":$(( c >= 3 ? 4096 : 0 ))}"
	done
} > "$work/compaction.jsonl"
out=$("$rr" --table decay-compaction "$work/compaction.jsonl" 2>&1)
is "$?" 0 "the decay table by compaction is made"
like "$out" "\| 1: 1 above 2%, 0 short of room \| 5: 1 above 2%, 1 short of room \| 2: 1 above 2%, 1 short of room \| 300 \| 400 \| 4096 / 0 \|" \
	"... splitting the aged rounds at the sorter's compaction and the five rounds after it"

# A huge-page buffer against random huge-page placement: a 12M cache gives
# a buffer of 1536 base pages, three huge pages over six ranges. Two or
# more share a range unless all three land apart: 1 - 6*5*4/6^3 = 44.44%;
# a given one shares with another with chance 1 - (5/6)^2 = 30.56%. Only
# the round above 2% wholly in huge pages is a row.
{
	echo '{"run":{"command":"c","commit":"abc","kernel":"6.12.0-1","cache":"12M","period":10,"thp":"always"}}'
	echo '{"mode":"periodic","cycle":1,"fraction":0.666667,"fraction_all":0.6,"huge_pages":1536}'
	echo '{"mode":"periodic","cycle":2,"fraction":0.01,"fraction_all":0.01,"huge_pages":1536}'
	echo '{"mode":"periodic","cycle":3,"fraction":0.5,"fraction_all":0.5,"huge_pages":1024}'
} > "$work/huge.jsonl"
out=$("$rr" --table decay-huge-chance "$work/huge.jsonl" 2>&1)
is "$?" 0 "the huge-page chance table is made"
like "$out" "\| 1 \| 66.67% \| 2 of 3 \| 6 \| 30.56% \| 44.44% \|" \
	"... with the exact chance of random huge-page placement"
is "$(grep -c '^| 6.12' <<< "$out")" 1 "... and no row for a round at 2% or one partly in base pages"

# Command-line mistakes are named, with what is accepted.
out=$("$rr" --bogus 2>&1)
is "$?" 2 "an unknown option is an error"
like "$out" "'--bogus' is not an option" "... naming it"
like "$out" "usage: recompute-reports" "... with the usage"
out=$("$rr" no/such/report.md 2>&1)
is "$?" 2 "a report that is not there is an error"
like "$out" "'no/such/report.md': no such report" "... naming it"
done_testing
