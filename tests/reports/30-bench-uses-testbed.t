#!/bin/bash
# bench/ shares its scaffolding with the tests through testbed/ only: no
# bench script runs, sources or compiles a file under tests/ (a test may
# change without notice; testbed/ is the shared contract). Comments may
# name a test that runs a short version of a bench.
. "$(dirname "$0")/../../testbed/tap.sh"
. "$(dirname "$0")/../../testbed/env.sh"

cd "$ZS_SRCDIR/bench" || { ok "bench/ found under $ZS_SRCDIR" false; done_testing; exit; }
n=0
for f in *; do
	[ -f "$f" ] || continue
	case $f in REPORT-*.md | report-markers) continue ;; esac
	n=$((n + 1))
	# code lines that name a path under tests/ (comment lines skipped)
	hits=$(grep -nE '(^|[^#]*[^#A-Za-z0-9_])tests/[A-Za-z0-9_.-]+/' "$f" | grep -vE '^[0-9]+:[[:space:]]*(#|//|/?\*)' || true)
	is "$hits" "" "bench/$f names no file under tests/ outside comments"
done
num_ok "bench scripts checked ($n)" "$n >= 10"
done_testing
