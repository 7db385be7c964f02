#!/bin/bash
# The textfile metrics as node_exporter reads them: every writer (the
# periodic helper, zonesort status, the bandwidth check's metrics function)
# replaces its file whole, so a reader looping over the files while several
# writers of each kind run never sees half a file (a deliberately
# non-atomic writer shows that the reader would notice); concurrent
# helpers lose no count; promtool accepts every file; bad settings are
# refused with their names. The sorts go to the counting stand-in of the
# kernel interface (testbed/sortcount.sh): no module on this machine.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
source "$(dirname "$0")/../../testbed/sortcount.sh"
need promtool jq flock
need_file "$ZS_ZONESORT" "zonesort command"

work=$(mktemp -d /tmp/zs-obs-textfile.XXXXXX)
chmod 755 "$work"
prom=$work/prom
mkdir -p "$prom"
sortcount_start "$work"
trap 'sortcount_stop; rm -rf "$work"' EXIT

# reader FILE LAST-LINE-PREFIX RESULT: reads FILE until $work/stop exists;
# a read that does not start with a HELP line or whose last line is not the
# writer's last series is torn. Writes "reads torn" to RESULT.
reader() {
	local n=0 torn=0 text
	while [ ! -e "$work/stop" ]; do
		text=$(cat "$1" 2>/dev/null) || continue
		n=$((n + 1))
		[[ "$text" == "# HELP "* && "${text##*$'\n'}" == "$2"* ]] || torn=$((torn + 1))
	done
	echo "$n $torn" > "$3"
}

# --- the reader notices a file written in place ------------------------------
template=$(printf '# HELP x y\n# TYPE x gauge\nx{node="a"} 1\nzonesort_last 2')
( for i in $(seq 300); do { printf '%s' "${template:0:30}"; sleep 0.002; printf '%s\n' "${template:30}"; } > "$work/inplace.prom"; done ) &
writer=$!
reader "$work/inplace.prom" zonesort_last "$work/control" &
rpid=$!
wait "$writer"
touch "$work/stop"; wait "$rpid"; rm -f "$work/stop"
read -r n torn < "$work/control"
num_ok "control: the reader sees torn reads of a file written in place ($torn of $n)" "$torn > 0"

# --- every writer at once, three of each kind -----------------------------------
hist=$work/history.jsonl
for i in $(seq 20); do
	printf '{"epoch":%d,"node":"n1","job":"%d","triad_best_gbs":%d.5,"baseline_gbs":40.5,"verdict":"pass"}\n' \
		$((1700000000 + i)) "$i" $((30 + i % 10)) >> "$hist"
done
check_metrics() {
	bash -c 'log() { echo "$*" >&2; }; . "$1"; for i in $(seq 15); do zonesort_check_metrics "$2" "$3" n1 || exit 1; done' \
		_ "$ZS_NHC_DIR/zonesort_metrics.nhc" "$hist" "$prom"
}
POLICY="$SC_POLICY prometheus_dir=$prom"
sortcount_reset
"$ZS_ZONESORT" run --every 1 --count 1 $POLICY > /dev/null	# the first file
check_metrics > /dev/null 2>&1
"$ZS_ZONESORT" status --cache-size 16M --ways 1 --prometheus "$prom" $POLICY > /dev/null
reader "$prom/zonesort.prom" zonesort_last_sort_timestamp_seconds "$work/r1" &
r1=$!
reader "$prom/zonesort-health.prom" zonesort_health_check_last_timestamp_seconds "$work/r2" &
r2=$!
reader "$prom/zonesort-status.prom" zonesort_status_timestamp_seconds "$work/r3" &
r3=$!
pids=()
for i in 1 2 3; do
	"$ZS_ZONESORT" run --every 1 --count 3 $POLICY > "$work/helper.$i" 2>&1 &
	pids+=($!)
	check_metrics > "$work/check.$i" 2>&1 &
	pids+=($!)
	( for j in 1 2 3; do "$ZS_ZONESORT" status --cache-size 16M --ways 1 --prometheus "$prom" $POLICY || exit 1; done ) \
		> /dev/null 2> "$work/status.$i" &
	pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
is "$failed" 0 "three helpers, three check-metrics loops and three status loops ran without error"
touch "$work/stop"
wait "$r1" "$r2" "$r3"
for r in r1:zonesort.prom r2:zonesort-health.prom r3:zonesort-status.prom; do
	read -r n torn < "$work/${r%%:*}"
	num_ok "${r#*:}: $n reads during the writes, none torn ($torn)" "$n > 20 && $torn == 0"
done

sorted=$(sed -n 's/^zonesort_sorts_total{node="[^"]*",outcome="sorted"} //p' "$prom/zonesort.prom")
total=$(awk '/^zonesort_sorts_total\{/ { s += $2 } END { print s }' "$prom/zonesort.prom")
is "$total" 10 "every round of every helper is counted once (1 + 3 x 3 rounds)"
is "$sorted" "$(sortcount)" "sorted equals the writes the kernel interface received"
for f in zonesort.prom zonesort-health.prom zonesort-status.prom; do
	is "$(promtool check metrics < "$prom/$f" 2>&1)" "" "promtool check metrics: $f"
done
# Only .prom files: the health metrics keep their state next to their
# history, not in node_exporter's directory.
is "$(ls -A "$prom" | grep -Ev '\.prom$' | tr '\n' ' ')" "" \
	"nothing but .prom files (no temporary file left behind, no state)"
like "$(cat "$prom/zonesort-health.prom")" "zonesort_health_checks_total\{node=\"n1\",verdict=\"pass\"\} 20" \
	"the check's counts are the history's (20 passes)"
like "$(cat "$prom/zonesort-health.prom")" "zonesort_triad_bytes_per_second\{node=\"n1\"\} 30500000000" \
	"the last triad of the history, in bytes per second (30.5 GB/s)"

# --- bad settings ----------------------------------------------------------------
out=$("$ZS_ZONESORT" run --every 1 --count 1 $SC_POLICY prometheus_dir=metrics 2>&1); rc=$?
is "$rc" 2 "a relative prometheus_dir is refused"
like "$out" "prometheus_dir=metrics: expected an absolute path" "naming it"
out=$("$ZS_ZONESORT" run --every 1 --count 1 $SC_POLICY report_days=400 2>&1); rc=$?
is "$rc" 2 "report_days beyond a year is refused"
like "$out" "report_days.*400" "naming the value"
out=$("$ZS_ZONESORT" status --prometheus metrics 2>&1); rc=$?
is "$rc" 2 "status --prometheus with a relative directory is a usage error"
like "$out" "--prometheus metrics: expected the absolute path" "naming it"
mkdir -m 0777 "$work/open"
chmod 0777 "$work/open"
sortcount_reset	# the node was just sorted: min_period would skip this one
before=$(sortcount)
out=$("$ZS_ZONESORT" run --every 1 --count 1 $SC_POLICY prometheus_dir="$work/open"); rc=$?
is "$rc" 0 "a directory anyone may write does not stop the sorting"
like "$out" "error: prometheus_dir: refusing $work/open: mode 0777, owner uid 0: group or others may write it without the sticky bit" \
	"the helper says why no metrics were written"
is "$(ls -A "$work/open")" "" "and writes nothing there"
is "$(sortcount)" $((before + 1)) "the node was sorted all the same"

# --- a textfile directory of another user, as Debian's node_exporter has ------
# /var/lib/prometheus and its node-exporter directory belong to prometheus
# there; uid 65534 stands for it. zonesort check-dir and textfile-write
# are the walk and the write of prometheus_dir= for shell programs.
deb=$work/var/lib/prometheus/node-exporter
mkdir -p "$deb" && chown 65534 "$work/var/lib/prometheus" "$deb"
out=$("$ZS_ZONESORT" check-dir "$deb" 2>&1); rc=$?
is "$rc/$out" "0/" "check-dir: a directory of another user (mode 0755) may be written, silently"
sortcount_reset
out=$("$ZS_ZONESORT" run --every 1 --count 1 $SC_POLICY prometheus_dir="$deb" 2>&1)
unlike "$out" "error" "the periodic helper writes its metrics there without an error"
like "$(stat -c '%U %a' "$deb/zonesort.prom" 2>&1)" "^root 644$" "... zonesort.prom, root's, mode 0644"
printf 'precious\n' > "$work/victim"
ln -s "$work/victim" "$deb/planted.prom"
out=$(printf 'planted 1\n' | "$ZS_ZONESORT" textfile-write "$deb" planted.prom 2>&1); rc=$?
is "$rc/$out" "0/" "textfile-write over a link its owner planted"
is "$(cat "$work/victim")" precious "... leaves the link's target untouched"
is "$(stat -c %F "$deb/planted.prom")/$(cat "$deb/planted.prom")" "regular file/planted 1" \
	"... and puts a regular file with the new content in its place"
is "$(ls -A "$deb" | grep -c tmp)" 0 "... leaving no temporary file"
# A reader never sees half a file while textfile-write replaces it.
rm -f "$work/stop"
( for i in $(seq 150); do printf '%s\n' "$template" | "$ZS_ZONESORT" textfile-write "$deb" atomic.prom || exit 1; done ) &
writer=$!
reader "$deb/atomic.prom" zonesort_last "$work/atomic" &
rpid=$!
wait "$writer"; wrc=$?
touch "$work/stop"; wait "$rpid"; rm -f "$work/stop"
read -r n torn < "$work/atomic"
is "$wrc" 0 "150 textfile-writes succeed"
num_ok "... and $n reads see no torn file ($torn)" "$torn == 0 && $n > 0"
# Refused: a link on the way, a directory others may write without the
# sticky bit, a bad NAME; each says why and changes nothing.
ln -s "$work/var/lib/prometheus" "$work/promlink"
out=$(echo x 1 | "$ZS_ZONESORT" textfile-write "$work/promlink/node-exporter" l.prom 2>&1); rc=$?
is "$rc" 1 "textfile-write through a symbolic link on the way is refused"
like "$out" "refusing $work/promlink: a symbolic link \(to $work/var/lib/prometheus\), and no link is followed" "... naming it and why"
is "$(ls "$deb" | grep -c '^l.prom')" 0 "... and writes nothing"
out=$("$ZS_ZONESORT" check-dir "$work/promlink/node-exporter" 2>&1); rc=$?
is "$rc" 1 "check-dir refuses it too"
like "$out" "a symbolic link \(to " "... saying so"
chmod 0775 "$deb"
out=$(echo x 1 | "$ZS_ZONESORT" textfile-write "$deb" g.prom 2>&1); rc=$?
is "$rc" 1 "a group-writable textfile directory is refused"
like "$out" "refusing $deb: mode 0775, owner uid 65534: group or others may write it without the sticky bit" "... naming its mode, owner and why"
chmod 0755 "$deb"
out=$(echo x 1 | "$ZS_ZONESORT" textfile-write "$deb" ../escape.prom 2>&1); rc=$?
is "$rc" 2 "a NAME with a slash is a usage error"
like "$out" "NAME '../escape.prom': expected a file name without '/'" "... naming it"
out=$("$ZS_ZONESORT" check-dir relative 2>&1); rc=$?
is "$rc" 1 "check-dir: a relative path is refused"
like "$out" "relative is not an absolute path" "... saying so"
done_testing
