# Shared by the tests/diag suite: a small program that allocates and
# touches memory (testbed/programs, built here with gcc), and the independent computation of
# cache-slot collisions (slots-of.py).
DIAG_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SLOTS_OF=$DIAG_DIR/slots-of.py

# build_alloc DIR: compiles alloc-touch into DIR; sets ALLOC.
build_alloc() {
	ALLOC=$1/alloc-touch
	gcc -O2 -Wall -o "$ALLOC" "$DIAG_DIR/../../testbed/programs/alloc-touch.c"
}

# start_alloc MIB [thp] [fork]: starts alloc-touch in the background and
# waits until it has touched its memory; sets ALLOC_PID.
start_alloc() {
	local out
	out=$(mktemp /tmp/zs-alloc.XXXXXX)
	"$ALLOC" "$@" > "$out" &
	ALLOC_PID=$!
	wait_for 60 grep -q ready "$out"
	local rc=$?
	rm -f "$out"
	return $rc
}

# stop_alloc: kills the last alloc-touch (and a forked child), reaps it.
stop_alloc() {
	[ -n "${ALLOC_PID:-}" ] || return 0
	pkill -KILL -P "$ALLOC_PID" 2>/dev/null
	kill -KILL "$ALLOC_PID" 2>/dev/null
	{ wait "$ALLOC_PID"; } 2>/dev/null
	ALLOC_PID=
}

# children PID: the child processes of PID.
children() { pgrep -P "$1" | tr '\n' ' '; }

# same_json A B KEYS...: compares the listed keys of two JSON texts.
json_keys() {	# json keys...
	local j=$1; shift
	local k
	for k in "$@"; do
		printf '%s=%s ' "$k" "$(jq -S -c ".$k" <<< "$j")"
	done
}
