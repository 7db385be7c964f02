#!/bin/bash
# One version everywhere a release names it: configure's (AC_INIT, which
# the RPM spec and dkms.conf take), the kernel module's MODULE_VERSION and
# stats file (kmod/zonesort_main.c, built by DKMS without configure), the
# Debian changelog's newest entry and the manual pages' headers.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"

v=$(sed -n 's/^AC_INIT(\[zonesort\], \[\([^]]*\)\].*/\1/p' "$ZS_SRCDIR/configure.ac")
like "$v" '^[0-9]+\.[0-9]+\.[0-9]+$' "configure.ac gives the version ($v)"
is "$(sed -n 's/^#define ZS_VERSION "\(.*\)"$/\1/p' "$ZS_SRCDIR/kmod/zonesort_main.c")" "$v" \
	"kmod/zonesort_main.c's ZS_VERSION is the same"
is "$(sed -n '1s/^zonesort (\([^-)]*\)-[^)]*).*/\1/p' "$ZS_SRCDIR/debian/changelog")" "$v" \
	"debian/changelog's newest entry is the same"
grep -q '^PACKAGE_VERSION="@PACKAGE_VERSION@"$' "$ZS_SRCDIR/kmod/dkms.conf.in"
ok "kmod/dkms.conf.in takes configure's" test $? -eq 0
while IFS= read -r page; do
	th=$(grep -m1 '^\.TH ' "$ZS_SRCDIR/$page")
	like "$th" "\"zonesort $v\"" "$page's header names zonesort $v"
done < <(cd "$ZS_SRCDIR" && find . -mindepth 2 -maxdepth 2 -name '*.[1-8]' -not -path './build*' \
	-not -path './debian/*' -not -path './tests/*' -not -path './autom4te.cache/*' | sed 's|^\./||' | sort)
done_testing
