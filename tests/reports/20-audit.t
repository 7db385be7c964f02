#!/bin/bash
# Every figure of the benchmark reports outside their marked tables is in
# their data, every bench command they show made some of that data, and
# no marked table lost its marker: bench/audit-reports finds nothing in
# the committed reports. It must find each of the four drifts a report
# can take past bench/recompute-reports, each made in a copy of a report:
# a prose figure changed, a figure put into an unmarked table, a marker
# deleted with the table under it edited, a command changed.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"
need python3
audit=$ZS_SRCDIR/bench/audit-reports

out=$("$audit" 2>&1)
rc=$?
is "$rc" 0 "every report passes the audit"
[ "$rc" -eq 0 ] || diag "$(head -40 <<< "$out")"

# The manifest lists exactly the markers the reports have.
listed=$(cut -f2- "$ZS_SRCDIR/bench/report-markers" | sort)
present=$(cat "$ZS_SRCDIR"/bench/REPORT-*.md "$ZS_SRCDIR/docs/measurements.md" | grep '^<!-- recompute: ' | sort)
is "$listed" "$present" "bench/report-markers lists every marker of the reports"
num_ok "markers listed: $(wc -l < "$ZS_SRCDIR/bench/report-markers")" "$(wc -l < "$ZS_SRCDIR/bench/report-markers") >= 20"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
decay=bench/REPORT-cachenode-decay.md
meas=docs/measurements.md

# drift MUTATED NAME WANT DESCRIPTION: the audit of the copy MUTATED (as
# the report NAME) fails and names WANT.
drift() {
	local out rc
	out=$("$audit" --as "$2" "$1" 2>&1)
	rc=$?
	is "$rc" 1 "$4: the audit fails"
	like "$out" "$3" "... naming it"
}
# mutate FROM TO REPORT COPY: COPY is REPORT with the first FROM made TO;
# a mutation that changes nothing is an error of the test.
mutate() {
	python3 - "$1" "$2" "$ZS_SRCDIR/$3" "$4" <<-'EOF'
	import sys
	frm, to, src, dst = sys.argv[1:]
	s = open(src).read()
	if frm not in s:
	    sys.exit(f"mutate: '{frm}' is not in {src}")
	open(dst, "w").write(s.replace(frm, to, 1))
	EOF
}

# 1. A prose figure changed.
ok "a copy with a prose figure changed" mutate "random placement of
the buffer is 39.35%" "random placement of
the buffer is 41.35%" "$decay" "$work/prose.md"
drift "$work/prose.md" "$decay" "figure '41.35 %'" "a prose figure not in the data"

# 2. A figure put into a table without a marker.
# (7777777 is in no data file the page names: a figure the audit must miss.)
ok "a copy with a figure in an unmarked table" mutate "the host's suites in every" \
	"the host's suites, 7777777 passed, in every" "$meas" "$work/unmarked.md"
fails "... a figure in none of its data files" grep -rqw 7777777 "$ZS_SRCDIR/bench/data"
drift "$work/unmarked.md" "$meas" "figure '7777777'" "an unmarked table's figure not in the data"

# 3. A marker deleted and the table under it edited: the table is no
# longer recomputed, so only the manifest sees the marker gone (and the
# edited figure is in no data).
python3 - "$ZS_SRCDIR/$decay" "$work/unmarked-decay.md" <<'EOF'
import sys
src, dst = sys.argv[1:]
lines = open(src).read().split("\n")
i = next(n for n, l in enumerate(lines) if l.startswith("<!-- recompute: decay-held "))
del lines[i]
lines[i + 2] = lines[i + 2].replace("| 10417 (40.7 MiB) |", "| 1041 (4.1 MiB) |")
open(dst, "w").write("\n".join(lines))
EOF
is "$?" 0 "a copy with the decay-held marker deleted and its table edited"
drift "$work/unmarked-decay.md" "$decay" "marker missing .*recompute: decay-held" \
	"a deleted marker"
out=$("$ZS_SRCDIR/bench/recompute-reports" "$work/unmarked-decay.md" 2>&1)
is "$?" 0 "... which bench/recompute-reports alone does not see"

# 4. A command its data was not made with.
ok "a copy naming another command" mutate '`bench/remedy 1 2 FILE`' '`bench/remedy 2 3 FILE`' "$meas" "$work/command.md"
drift "$work/command.md" "$meas" "command 'bench/remedy 2 3 FILE' made none of the report's data" \
	"a command the data was not made with"

# A marker the manifest does not list is a finding too (add it there).
{ cat "$ZS_SRCDIR/$decay"; printf '\n<!-- recompute: decay-huge bench/data/cachenode-decay/defaults-7.jsonl -->\n'; } > "$work/new.md"
drift "$work/new.md" "$decay" "marker not listed in bench/report-markers" "an unlisted marker"

# Bad use is named.
out=$("$audit" --bogus 2>&1)
is "$?" 2 "an unknown option is an error"
like "$out" "'--bogus' is not an option" "... naming it"
out=$("$audit" no/such.md 2>&1)
is "$?" 2 "a report that is not there is an error"
done_testing
