#!/bin/bash
# "make dist" makes zonesort-VERSION.tar.gz with everything a site needs to
# build packages from it: the RPM spec (generated, so that
# "rpmbuild -ta" works), debian/, the kernel module sources for DKMS, the
# test suites and the scripts; no build products. The version is the same
# in configure, the spec, debian/changelog and kmod/dkms.conf.
set -u
source "$(dirname "$0")/../../testbed/tap.sh"
source "$(dirname "$0")/../../testbed/env.sh"
need tar make
need_file "$ZS_SRCDIR/configure" "configure script (scripts/build runs autoreconf)"

source "$(dirname "$0")/dist.sh"
work=$(mktemp -d /tmp/zs-pkg02.XXXXXX)
trap 'rm -rf "$work"' EXIT

make_dist "$work"
tarball=$TARBALL
ok "make dist makes zonesort-$VERSION.tar.gz" test -s "$tarball"
list=$(tar tzf "$tarball")
top=zonesort-$VERSION

has() {	# PATH-REGEX (below the top directory) DESCRIPTION
	grep -qxE -- "$top/$1" <<< "$list"
	_tap_result $? "$2" || diag "no file matching $top/$1 in the tarball"
}

has 'zonesort\.spec' "the generated RPM spec zonesort.spec"
has 'zonesort\.spec\.in' "the spec template zonesort.spec.in"
for f in control rules changelog copyright source/format zonesort.install \
	zonesort-nhc.install zonesort-dkms.install zonesort-dkms.dkms; do
	has "debian/${f//./\\.}" "debian/$f"
done
for f in Kbuild Makefile dkms.conf dkms.conf.in conftest-control.c conftest-prelude.h \
	zonesort_main.c zonesort_policy.c zonesort_policy.h; do
	has "kmod/${f//./\\.}" "kmod/$f (DKMS source)"
done
for d in unit cluster nhc stream kmod diag package observe node fuzz reports; do
	has "tests/$d/.+" "tests/$d/ is shipped"
done
has 'testbed/tap\.sh' "testbed/, the harness the tests source, is shipped"
has 'testbed/programs/zsbound\.c' "... with the programs its guests run"
has 'tests/package/02-dist\.t' "this test is shipped"
for f in build install-deps test-all debian-packages; do
	has "scripts/$f" "scripts/$f"
done
has 'configure' "a generated configure (no autotools needed to build)"
has 'nhc/zonesort-health-check\.8' "the health check's manual page"
hasnt() {	# PATH-REGEX DESCRIPTION
	local found
	found=$(grep -xE -- "$top/$1" <<< "$list" | head -5)
	is "$found" "" "$2"
}
hasnt '.*\.(o|lo|la|ko|so|mod\.c)|.*/\.libs/.*|.*/\.deps/.*|.*/config\.(status|log)' "no build products"
hasnt 'debian/(tmp|zonesort|zonesort-nhc|zonesort-dkms|files|.*\.substvars|.*\.debhelper\.log|debhelper-build-stamp)(/.*)?' \
	"no Debian build products under debian/"

tar xzf "$tarball" -C "$work"
src=$work/$top
ok "debian/rules is executable" test -x "$src/debian/rules"
spec_version=$(sed -n 's/^Version:[[:space:]]*//p' "$src/zonesort.spec")
is "$spec_version" "$VERSION" "spec Version is configure's version"
unlike "$(cat "$src/zonesort.spec")" '@[A-Za-z_]+@' "no unsubstituted @VARIABLES@ in zonesort.spec"
deb_version=$(sed -n '1s/^zonesort (\([^)]*\)).*/\1/p' "$src/debian/changelog")
is "${deb_version%-*}" "$VERSION" "debian/changelog's upstream version is configure's version"
dkms_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$src/kmod/dkms.conf")
is "$dkms_version" "$VERSION" "kmod/dkms.conf PACKAGE_VERSION is configure's version"
is "$(sed -n 's/^PACKAGE_NAME="\(.*\)"$/\1/p' "$src/kmod/dkms.conf")" zonesort "kmod/dkms.conf PACKAGE_NAME is zonesort"
is "$(sed -n 's/^NO_WEAK_MODULES="\(.*\)"$/\1/p' "$src/kmod/dkms.conf")" yes "kmod/dkms.conf keeps weak-modules away"
is "$(grep -c '^CLEAN=' "$src/kmod/dkms.conf")" 0 "kmod/dkms.conf has no CLEAN (DKMS 3.1.8 and later warn of it)"
done_testing
