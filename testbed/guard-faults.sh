# Fault injection at the Slurm client boundary for the drain guard of
# check_hw_stream_triad, on a cluster of testbed/cluster.sh (8 nodes or
# more, the runner as Epilog). Each node's sinfo, scontrol and squeue are
# a wrapper, bind-mounted over the real binaries in that node's mount
# namespace only (the runner sets its own PATH, so nothing else would
# reach it), that follows the node's schedule call by call and then execs
# a copy of the real binary: "ok", "fail" (refused, never sent), "delay S"
# (sent S seconds late), "late S" (done, answered S seconds late), "lost"
# (done, reported failed), "hang" (no answer: the caller's timeout ends
# it). scontrol listpids asks the local slurmd, not slurmctld: never
# faulted. A wave fails the check on every node at once, in one of three
# ways a site meets: a low figure (a probe stand-in: the guard is what is
# tested, not the measurement), a missing probe, a bad option; through the
# runner as the Epilog of one job on some nodes and through
# the LBNL NHC stand-in (testbed/lbnl-nhc) on the others, while an
# administrator drains nodes before and during it. Schedules come from a
# seed, so a failure replays.
#
#   gf_setup DIR LIMIT      wrappers and options in every node; the check's
#                           history goes to DIR/history.jsonl
#   gf_schedule SEED        draws a wave into DIR/wave (its fault rate,
#                           each node's way in, start offset and faults,
#                           administrators' drains)
#   gf_wave                 runs the drawn wave and waits until every node
#                           recorded a verdict and every background release
#                           and NHC run has ended; sets GF_START
#   gf_judge                prints one line per violation (none: empty):
#                           more than LIMIT nodes drained for the check
#                           (fewer than LIMIT when no call met a fault), a
#                           node in service without a recorded hold (in its
#                           history and its metrics), an administrator's
#                           drain changed, an Epilog error
#   gf_summary              one JSON object for the wave just judged
#
# An administrator's drain that overlaps a node's own change of its state
# (the guard's drain or release, NHC's mark) made on a listing taken before
# it races that change: Slurm has no compare-and-set, so the last writer
# of the reason wins. Such a drain is named in DIR/races and not judged
# as the administrator's; every other one must survive the wave.
#   gf_reset                every node back in service, faults cleared
#
# The probe stand-in and the NHC stand-in come from testbed/; the cluster
# from testbed/cluster.sh (the caller starts it with
# "Epilog=$ZS_NHC_DIR/zonesort-health-check").

GF_TOOLS=(sinfo scontrol squeue)

gf_setup() {
	local node run tool
	GF=$1 GF_LIMIT=$2
	mkdir -p "$GF/real" "$GF/state"
	chmod 755 "$GF" "$GF/real"
	for tool in "${GF_TOOLS[@]}"; do
		cp "$(command -v "$tool")" "$GF/real/$tool" || return 1
	done
	cat > "$GF/wrap" <<EOF
#!/bin/bash
# A Slurm client with faults (testbed/guard-faults.sh): the node's
# schedule, one line a call, in /run/zs-faults/schedule. Each call that
# reaches the real client is logged in /run/zs-faults/calls: when the
# real client started and ended (slurmctld saw the call in between), the
# fault, the arguments.
name=\${0##*/} dir=/run/zs-faults action=ok
real=$GF/real/\$name
if [ "\$name" = scontrol ] && [ "\${1:-}" = listpids ]; then
	exec "\$real" "\$@"
fi
exec 8>> "\$dir/lock" && flock 8
n=\$(cat "\$dir/count" 2> /dev/null || echo 0)
echo \$((n + 1)) > "\$dir/count"
action=\$(sed -n "\$((n + 1))p" "\$dir/schedule" 2> /dev/null)
action=\${action:-ok}
exec 8>&-
# run_real: the real client, its start and end logged.
run_real() {
	local t0 rc
	t0=\$(date +%s.%N)
	"\$real" "\$@"
	rc=\$?
	printf '%s %s %s %s %s\n' "\$t0" "\$(date +%s.%N)" "\$name" "\${action// /:}" "\$*" >> "\$dir/calls"
	return \$rc
}
# never_sent: a call that never reached slurmctld, logged as such.
never_sent() {
	local t
	t=\$(date +%s.%N)
	printf '%s %s %s %s %s\n' "\$t" "\$t" "\$name" "\$action" "\$*" >> "\$dir/calls"
}
case \$action in
ok) run_real "\$@" ;;
fail) never_sent "\$@"; echo "\$name: error: Unable to contact slurm controller (connect failure)" >&2; exit 1 ;;
delay\ *) sleep "\${action#* }"; run_real "\$@" ;;
late\ *) run_real "\$@"; rc=\$?; sleep "\${action#* }"; exit \$rc ;;
lost) run_real "\$@" > /dev/null 2>&1; echo "\$name: error: Socket timed out on send/recv operation" >&2; exit 1 ;;
hang) never_sent "\$@"; exec sleep 600 ;;
*) echo "\$name: unknown fault '\$action'" >&2; exit 2 ;;
esac
EOF
	chmod 755 "$GF/wrap"
	printf '#!/bin/sh\nST_BEST=10 exec %s/testbed/stand-in-stream-triad "$@"\n' "$ZS_SRCDIR" > "$GF/probe"
	chmod 755 "$GF/probe"
	for node in "${ZS_NODE_NAMES[@]}"; do
		run=$(cluster_node_run "$node")
		mkdir -p "$run/zs-faults" "$GF/state/$node" "$GF/nhc/$node"
		for tool in "${GF_TOOLS[@]}"; do
			cluster_on_node "$node" mount --bind "$GF/wrap" "$(command -v "$tool")" || return 1
		done
	done
	cp "$ZS_NHC_DIR"/stream_triad*.nhc "$ZS_NHC_DIR"/zonesort_metrics.nhc "$GF/nhc/"
	: > "$GF/history.jsonl"
}

# _gf_options KIND: every node's options, for the runner and for NHC, so
# that the check fails as KIND says: low, missing-probe or bad-option.
# Each node writes its metrics to its own /run/prom.
_gf_options() {
	local node run opts probe=$GF/probe extra=
	case $1 in
	missing-probe) probe=/nonexistent/stream-triad ;;
	bad-option) extra=" -Z" ;;
	esac
	opts="-m 100 -k 0 -P $probe -H $GF/history.jsonl -T 1 -G $GF_LIMIT -M /run/prom"
	for node in "${ZS_NODE_NAMES[@]}"; do
		run=$(cluster_node_run "$node")
		printf '%s\n' "$opts -b $GF/state/$node/ -l $GF/runner.log$extra" > "$run/zs-hc.conf"
		printf '* || check_hw_stream_triad %s\n' "$opts -b $GF/state/$node/$extra" > "$GF/nhc/$node/nhc.conf"
	done
}

# _gf_pick N: a number from 0 to N-1 from the seeded generator, in PICK;
# _gf_seconds: 0.5 to 3.0 s in tenths, in SECS. Both in this shell: bash
# reseeds RANDOM in a subshell, and the parent's sequence does not move.
_gf_pick() { PICK=$((RANDOM % $1)); }
_gf_seconds() { local t=$((RANDOM % 26 + 5)); SECS=$((t / 10)).$((t % 10)); }

gf_schedule() {
	local node i calls faults rate kind PICK SECS
	GF_SEED=$1
	RANDOM=$GF_SEED
	# How the check fails, and how unkind Slurm is in this wave: 0 to 60%
	# of the calls meet a fault.
	_gf_pick 4
	case $PICK in 0) kind=missing-probe ;; 1) kind=bad-option ;; *) kind=low ;; esac
	_gf_pick 7
	rate=$((PICK * 10))
	printf 'kind %s\nrate %s\n' "$kind" "$rate" > "$GF/wave"
	for node in "${ZS_NODE_NAMES[@]}"; do
		# One node in three through NHC, the others through the Epilog.
		_gf_pick 3
		if [ "$PICK" = 0 ]; then _gf_seconds; echo "mode $node nhc $SECS"; else echo "mode $node epilog"; fi
		faults=
		_gf_pick 6
		calls=$((PICK + 3))
		for ((i = 0; i < calls; i++)); do
			_gf_pick 100
			if ((PICK >= rate)); then faults+="ok,"; continue; fi
			_gf_pick 100
			_gf_seconds
			if ((PICK < 25)); then faults+="fail,"
			elif ((PICK < 45)); then faults+="delay $SECS,"
			elif ((PICK < 65)); then faults+="late $SECS,"
			elif ((PICK < 85)); then faults+="lost,"
			else faults+="hang,"
			fi
		done
		echo "faults $node ${faults%,}"
	done >> "$GF/wave"
	# An administrator's drain before the wave, and one during it.
	_gf_pick 10
	if ((PICK < 4)); then
		_gf_pick ${#ZS_NODE_NAMES[@]}
		echo "admin-before ${ZS_NODE_NAMES[PICK]} 0 admin: DIMM replaced, ticket $GF_SEED" >> "$GF/wave"
	fi
	_gf_pick 10
	if ((PICK < 4)); then
		_gf_pick ${#ZS_NODE_NAMES[@]}
		_gf_seconds
		echo "admin-during ${ZS_NODE_NAMES[PICK]} $SECS admin: maintenance, ticket $GF_SEED" >> "$GF/wave"
	fi
	return 0
}

# _gf_field WORD NODE: the rest of the wave's line "WORD NODE ...".
_gf_field() { awk -v w="$1" -v n="$2" '$1 == w && $2 == n { $1 = $2 = ""; sub(/^ +/, ""); print; exit }' "$GF/wave"; }

_gf_admin_drain() {	# NODE DELAY REASON: logged in DIR/admin with its start and end
	local t0
	sleep "$2"
	t0=$(date +%s.%N)
	scontrol update nodename="$1" state=drain reason="$3"
	echo "$t0 $(date +%s.%N) $1" >> "$GF/admin"
}

# _gf_raced NODE: true when the administrator's drain of NODE overlapped a
# state change of NODE made on a listing taken before it (from the real
# sinfo's start to the change's end): Slurm has no compare-and-set, so two
# writers of one node's reason race, and the last one wins. The guard's
# changes (drain, cancel_reboot, resume) and NHC's marks all follow a
# listing; a drain outside those windows must never be undone.
_gf_raced() {
	local a0 a1
	read -r a0 a1 _ <<< "$(grep " $1\$" "$GF/admin" | tail -1)"
	[ -n "$a1" ] || return 1
	awk -v a0="$a0" -v a1="$a1" '
		$3 == "sinfo" { listed = $1; next }
		$4 == "fail" || $4 == "hang" { next }
		$3 == "scontrol" && $5 ~ /^(update|reboot|cancel_reboot)$/ && listed != "" {
			if (a0 <= $2 && a1 >= listed) found = 1 }
		END { exit !found }' "$(cluster_node_run "$1")/zs-faults/calls" 2> /dev/null
}

# _gf_job_started JOB: the job runs, or ran.
_gf_job_started() {
	case $(squeue -h -j "$1" -o %T 2> /dev/null) in PENDING | CONFIGURING) return 1 ;; esac
	return 0
}
# _gf_recorded: every node has a history line from this wave.
_gf_recorded() {
	[ "$(jq -r --argjson s "$GF_START" 'select(.epoch >= $s) | .node' "$GF/history.jsonl" 2>/dev/null | sort -u | wc -l)" -ge "${#ZS_NODE_NAMES[@]}" ]
}
# _gf_quiet: no background release, no NHC run and no Epilog left.
_gf_quiet() {
	! pgrep -f zonesort-guard-release > /dev/null && ! pgrep -f "$ZS_SRCDIR/testbed/lbnl-nhc" > /dev/null &&
		! pgrep -f zonesort-health-check > /dev/null
}

gf_wave() {
	local node run epilog=() nhc=() line pids=() delay
	_gf_options "$(awk '$1 == "kind" { print $2 }' "$GF/wave")"
	GF_START=$(date +%s)
	: > "$GF/admin"
	for node in "${ZS_NODE_NAMES[@]}"; do
		run=$(cluster_node_run "$node")
		_gf_field faults "$node" | tr ',' '\n' > "$run/zs-faults/schedule"
		rm -f "$run/zs-faults/count" "$run/zs-faults/calls"
		line=$(_gf_field mode "$node")
		# No job starts on a drained node; NHC runs there all the same.
		grep -q "^admin-before $node " "$GF/wave" && line="nhc 0.0"
		case $line in nhc*) nhc+=("$node") ;; *) epilog+=("$node") ;; esac
	done
	while read -r _ node delay line; do
		_gf_admin_drain "$node" 0 "$line"
	done < <(grep '^admin-before ' "$GF/wave")
	GF_JOB=
	if [ ${#epilog[@]} -gt 0 ]; then
		GF_JOB=$(sbatch --parsable -N ${#epilog[@]} -w "$(IFS=,; echo "${epilog[*]}")" -o /dev/null -e /dev/null --wrap 'sleep 1')
		# Offsets count from the job's start: a node drained before it
		# starts would keep it pending.
		wait_for 30 _gf_job_started "$GF_JOB"
	fi
	while read -r _ node delay line; do
		_gf_admin_drain "$node" "$delay" "$line" &
		pids+=($!)
	done < <(grep '^admin-during ' "$GF/wave")
	for node in "${nhc[@]}"; do
		delay=$(_gf_field mode "$node"); delay=${delay#nhc }
		[ "$delay" = epilog ] && delay=0
		( sleep "$delay"; cluster_on_node "$node" setsid -w env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin SLURM_CONF="$SLURM_CONF" \
			ZONESORT_METRICS_ZONESORT="$ZONESORT_METRICS_ZONESORT" \
			bash "$ZS_SRCDIR/testbed/lbnl-nhc" CONFFILE="$GF/nhc/$node/nhc.conf" INCDIR="$GF/nhc" NHC_RM=slurm TIMEOUT=20 \
			>> "$GF/nhc/$node/out" 2>&1 ) &
		pids+=($!)
	done
	wait_for 180 _gf_recorded
	[ -n "$GF_JOB" ] && cluster_wait_job_gone "$GF_JOB" 120
	# (wait with no pid would wait for the cluster's daemons too)
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}" 2> /dev/null
	wait_for 900 _gf_quiet
}

gf_judge() {
	local node state reason verdict why ours=0 listing line
	: > "$GF/races"
	listing=$(SLURM_TIME_FORMAT=%s sinfo -h -N -o '%N|%t|%H|%E')
	for node in "${ZS_NODE_NAMES[@]}"; do
		IFS='|' read -r _ state _ reason <<< "$(grep "^$node|" <<< "$listing" | head -1)"
		verdict=$(jq -r --argjson s "$GF_START" --arg n "$node" 'select(.epoch >= $s and .node == $n) | .verdict' "$GF/history.jsonl" | tail -1)
		why=$(jq -r --argjson s "$GF_START" --arg n "$node" 'select(.epoch >= $s and .node == $n) | .reason // ""' "$GF/history.jsonl" | tail -1)
		case $reason in *"Epilog error"* | *"Prolog error"*) echo "$node: Slurm drained it for a failed Epilog ($state, $reason)" ;; esac
		line=$(grep -E "^admin-(before|during) $node " "$GF/wave" | tail -1)
		if [ -n "$line" ] && _gf_raced "$node"; then
			# Judged as any other node: the administrator's drain may
			# have been overwritten, and then undone with the guard's.
			echo "$node" >> "$GF/races"
		elif [ -n "$line" ]; then
			line=$(awk '{ $1 = $2 = $3 = ""; sub(/^ +/, ""); print }' <<< "$line")
			case $state in drain* | drng*) ;; *) echo "$node: the administrator's drain was undone ($state, $reason)" ;; esac
			[ "$reason" = "$line" ] || echo "$node: the administrator's reason was changed to '$reason'"
			continue
		fi
		case $state in
		drain* | drng* | *@*)
			if [[ "$reason" =~ ^(NHC|zonesort):\ check_hw_stream_triad: ]]; then
				ours=$((ours + 1))
				[ "$verdict" = held ] && echo "$node: held ($why) but left drained"
			fi ;;
		*)
			case $verdict in
			held | skip) [ -n "$why" ] || echo "$node: $verdict without a reason" ;;
			*) echo "$node: in service ($state) after verdict '${verdict:-none}'" ;;
			esac
			[ "$verdict" != held ] || grep -qF "zonesort_health_check_last_verdict{node=\"$node\",verdict=\"held\"} 1" \
				"$(cluster_node_run "$node")/prom/zonesort-health.prom" 2> /dev/null ||
				echo "$node: held, but its metrics do not say so" ;;
		esac
	done
	[ "$ours" -le "$GF_LIMIT" ] || echo "$ours nodes drained for the check, limit $GF_LIMIT"
	# With Slurm answering every call and no administrator about, the guard
	# has no reason to hold a node it could drain: exactly LIMIT are.
	if grep -qx 'rate 0' "$GF/wave" && ! grep -q '^admin-' "$GF/wave" && [ "$ours" -ne "$GF_LIMIT" ]; then
		echo "$ours nodes drained for the check with Slurm answering every call; expected the limit, $GF_LIMIT"
	fi
	echo "$ours" > "$GF/drained"
}

gf_summary() {
	local v calls node
	v=$(gf_judge)
	GF_DRAINED=$(cat "$GF/drained")
	# The calls by the fault they met (ok included): "delay:1.2" is a delay.
	calls=$(for node in "${ZS_NODE_NAMES[@]}"; do cat "$(cluster_node_run "$node")/zs-faults/calls" 2> /dev/null; done |
		awk '{ sub(/:.*/, "", $4); n[$4]++ } END { for (k in n) printf "%s%s:%d", (c++ ? "," : ""), k, n[k] }')
	jq -c -n --argjson seed "$GF_SEED" --argjson limit "$GF_LIMIT" --argjson drained "${GF_DRAINED:-0}" \
		--arg wave "$(cat "$GF/wave")" --arg calls "$calls" --arg violations "$v" \
		--argjson verdicts "$(jq -s -c --argjson s "$GF_START" 'map(select(.epoch >= $s)) | group_by(.verdict) | map({ (.[0].verdict): length }) | add // {}' "$GF/history.jsonl")" \
		--argjson seconds $(( $(date +%s) - GF_START )) --arg races "$(cat "$GF/races")" \
		'{ seed: $seed, limit: $limit, drained: $drained, verdicts: $verdicts, seconds: $seconds,
		   calls_by_fault: ($calls | split(",") | map(select(. != "") | split(":") | { (.[0]): (.[1] | tonumber) }) | add // {}),
		   wave: ($wave | split("\n")), violations: ($violations | split("\n") | map(select(. != ""))),
		   admin_races: ($races | split("\n") | map(select(. != ""))) }'
}

gf_reset() {
	local node
	for node in "${ZS_NODE_NAMES[@]}"; do
		rm -f "$(cluster_node_run "$node")/zs-faults/schedule"
	done
	scontrol update nodename="$(IFS=,; echo "${ZS_NODE_NAMES[*]}")" state=resume 2> /dev/null
	cluster_wait_idle 60
}
