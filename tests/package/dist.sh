# make_dist WORK: builds the release tarball in WORK/build, a build
# directory of its own (make dist there cannot race other builds), and sets
# VERSION and TARBALL. On failure it reports, ends the test file and exits.
make_dist() {
	VERSION=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'$/\1/p" "$ZS_SRCDIR/configure")
	mkdir -p "$1/build"
	if ! (cd "$1/build" && "$ZS_SRCDIR/configure" -q && make -s dist) > "$1/dist.log" 2>&1; then
		ok "make dist succeeds" false
		diag "$(tail -20 "$1/dist.log")"
		done_testing
		exit 1
	fi
	TARBALL=$1/build/zonesort-$VERSION.tar.gz
}

# The package builds run as an unprivileged account, as on a build service
# (mock, koji, copr, sbuild) or for a site that follows the README: made
# here when missing and kept (a CI machine's build account).
PKG_USER=zs-pkgbuild

# pkg_user_ready: the account exists. On failure it reports, ends the test
# file and exits.
pkg_user_ready() {
	id -u "$PKG_USER" > /dev/null 2>&1 && return 0
	if ! useradd --system --create-home --home-dir "/var/lib/$PKG_USER" --shell /bin/bash "$PKG_USER"; then
		ok "an unprivileged build account $PKG_USER (useradd)" false
		done_testing
		exit 1
	fi
}

# as_pkg_user DIR CMD...: runs CMD in DIR as the build account, with a
# clean environment (DEB_BUILD_OPTIONS passed on).
as_pkg_user() {
	local dir=$1
	shift
	runuser -u "$PKG_USER" -- env -i HOME="/var/lib/$PKG_USER" PATH=/usr/local/bin:/usr/bin:/bin \
		LANG=C.UTF-8 ${DEB_BUILD_OPTIONS:+DEB_BUILD_OPTIONS="$DEB_BUILD_OPTIONS"} \
		sh -c 'cd "$1" && shift && exec "$@"' as_pkg_user "$dir" "$@"
}

# unit_tests_ran LOG: the build's make check ran the unit tests as that
# account: passes, and SKIP (with the reason) only for the tests that need
# root; no failure.
unit_tests_ran() {
	local log=$1
	grep -q '^PASS: unit/' "$log"
	_tap_result $? "the build ran the unit tests (make check)"
	is "$(grep -E '^(FAIL|ERROR|XPASS): unit/' "$log")" "" "... none failed as $PKG_USER"
	like "$(grep -E '^SKIP: unit/' "$log")" "SKIP: unit/test_pagemap .*root is needed" \
		"... those that need root reported SKIP with the reason"
	is "$(grep -E '^SKIP: unit/' "$log" | grep -vE 'root is needed|needs root|Linux 5\.4')" "" \
		"... and no other test skipped"
}
