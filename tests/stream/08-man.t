#!/bin/bash
# The manual page: clean for mandoc's linter (style notes aside) and for
# man --warnings, and in step with the program: every option of --help,
# every JSON member and every exit status is documented.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need mandoc man jq
need_file "$ZS_STREAM_TRIAD" "stream-triad"
page=$ZS_SRCDIR/stream/stream-triad.1
need_file "$page" "the manual page"

lint=$(mandoc -T lint -W warning "$page" 2>&1)
is "$lint" "" "mandoc -T lint: no warning or error"
warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
is "$warn" "" "man --warnings -l: no warning"
text=$(LC_ALL=C.UTF-8 MANWIDTH=200 man -l "$page" 2>/dev/null | col -b)

help=$("$ZS_STREAM_TRIAD" --help)
opts=$(grep -oE -- '--[a-z][a-z-]+' <<<"$help" | sort -u)
cmp_ok "$(wc -l <<<"$opts")" -ge 10 "--help lists the options"
for o in $opts; do
	like "$text" "(^|[^a-z-])$o([^a-z-]|$)" "the manual documents $o"
done
for o in $(grep -oE -- '(^|[ ,])--[a-z][a-z-]+' <<<"$text" | tr -d ' ,' | sort -u); do
	like "$help" "(^|[^a-z-])$o([^a-z-]|$)" "--help lists $o, which the manual documents"
done

out=$("$ZS_STREAM_TRIAD" --json --numa --size 96M --repeats 2)
for k in $(jq -r 'keys[]' <<<"$out") $(jq -r '.numa[0] | keys[]' <<<"$out") \
	$(jq -r '.kernels.triad | keys[]' <<<"$out"); do
	like "$text" "(^|[^a-z_])$k([^a-z_]|$)" "the manual documents the JSON member $k"
done
for s in 0 1 2 3 4; do
	like "$(sed -n '/^EXIT STATUS/,/^ENVIRONMENT/p' <<<"$text")" "^ +$s +[a-z]" "the manual documents exit status $s"
done
like "$text" ZS_STREAM_CORRUPT "the manual documents the validation test hook"
done_testing
