#!/bin/bash
# Every manual page the packages install renders without a warning:
# mandoc -T lint at WARNING level and man --warnings (groff's warnings).
# The pages are the *.1 ... *.8 files of the source tree's component
# directories; each must be installed by both the Debian and the RPM
# packaging, and each page those install must exist.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need mandoc man

mapfile -t pages < <(cd "$ZS_SRCDIR" && find . -mindepth 2 -maxdepth 2 -name '*.[1-8]' \
	-not -path './build*' -not -path './autom4te.cache/*' -not -path './debian/*' \
	-not -path './tests/*' | sed 's|^\./||' | sort)
cmp_ok "${#pages[@]}" -ge 4 "manual pages found in the source tree (${pages[*]})"

installed_by_deb=$(cat "$ZS_SRCDIR"/debian/*.install "$ZS_SRCDIR"/debian/*.manpages 2>/dev/null)
spec=$(cat "$ZS_SRCDIR/zonesort.spec.in")
for p in "${pages[@]}"; do
	f=$ZS_SRCDIR/$p
	name=$(basename "$p")
	like "$(head -20 "$f")" '^\.(TH|Dd)|
\.(TH|Dd)' "$p is a manual page"
	out=$(mandoc -T lint -W warning "$f" 2>&1)
	is "$out" "" "$p: mandoc -T lint -W warning reports nothing"
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$f" 2>&1 > /dev/null)
	is "$out" "" "$p: man --warnings -l reports nothing"
	sec=${name##*.}
	like "$installed_by_deb" "man$sec/${name//./\\.}" "$p is installed by the Debian packaging"
	like "$spec" "%\\{_mandir\\}/man$sec/${name//./\\.}" "$p is listed in the RPM spec"
done

# Every page the packaging installs comes from the tree.
for m in $(grep -ohE 'man[1-8]/[A-Za-z0-9_.-]+\.[1-8]' "$ZS_SRCDIR"/debian/*.install "$ZS_SRCDIR/zonesort.spec.in" | sort -u); do
	name=${m#*/}
	found=$(printf '%s\n' "${pages[@]}" | grep -c "/${name//./\\.}\$")
	# zonesort-bw-history.8 is a link to the health check's page.
	[ "$name" = zonesort-bw-history.8 ] && found=1
	cmp_ok "$found" -eq 1 "$m installed by the packaging has its source in the tree"
done
done_testing
