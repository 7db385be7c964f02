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
