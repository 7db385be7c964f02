# TAP helpers for the shell test suites. Source it, call the assertions,
# end with done_testing. Every assertion prints "ok N - what" or
# "not ok N - what" plus "# " diagnostics; the runner counts those lines.
# There is no skip: a test that lacks something it needs fails and says what.

tap_n=0
tap_failed=0

_tap_result() {	# status description
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		echo "not ok $tap_n - $2"
		tap_failed=$((tap_failed + 1))
	fi
	return "$1"
}

diag() { printf '%s\n' "$@" | sed 's/^/# /'; }

# ok DESCRIPTION COMMAND...: passes when COMMAND succeeds.
ok() {
	local desc=$1; shift
	"$@"
	_tap_result $? "$desc"
}

# not_ok DESCRIPTION COMMAND...: passes when COMMAND fails.
fails() {
	local desc=$1; shift
	! "$@"
	_tap_result $? "$desc"
}

is() {	# got want description
	if [ "$1" = "$2" ]; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		diag "got:  '$1'" "want: '$2'"
		return 1
	fi
}

like() {	# got extended-regex description
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		_tap_result 0 "$3"
	else
		_tap_result 1 "$3"
		diag "got: '$(printf '%s' "$1" | head -c 2000)'" "want match: $2"
		return 1
	fi
}

unlike() {	# got extended-regex description
	if printf '%s' "$1" | grep -Eq -- "$2"; then
		_tap_result 1 "$3"
		diag "got: '$(printf '%s' "$1" | head -c 2000)'" "want no match: $2"
		return 1
	fi
	_tap_result 0 "$3"
}

cmp_ok() {	# a op b description; op is a test(1) integer operator such as -eq or -le
	if [ "$1" "$2" "$3" ] 2>/dev/null; then
		_tap_result 0 "$4"
	else
		_tap_result 1 "$4"
		diag "failed: $1 $2 $3"
		return 1
	fi
}

# num_ok DESCRIPTION AWK-EXPRESSION: floating-point comparisons, e.g.
# num_ok "fast enough" "$t < 0.5"
num_ok() {
	if awk "BEGIN { exit !($2) }"; then
		_tap_result 0 "$1"
	else
		_tap_result 1 "$1"
		diag "false: $2"
		return 1
	fi
}

# need COMMAND...: fails the whole test file when a tool it needs is missing.
need() {
	local c missing=
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
	done
	if [ -n "$missing" ]; then
		_tap_result 1 "required commands present (missing:$missing; run scripts/install-deps)"
		done_testing
		exit 1
	fi
}

done_testing() {
	echo "1..$tap_n"
	[ "$tap_failed" -eq 0 ]
}

# wait_for TIMEOUT_S COMMAND...: polls COMMAND every 0.1 s until it succeeds.
wait_for() {
	local limit=$1 start; shift
	start=$(date +%s.%N)
	until "$@"; do
		if awk -v s="$start" -v l="$limit" -v n="$(date +%s.%N)" 'BEGIN { exit !(n - s > l) }'; then
			return 1
		fi
		sleep 0.1
	done
}
