# Where the tests find what they test. Defaults point into the build tree
# made by scripts/test-all; the variables let the same tests run against
# installed files (a package) instead.
: "${ZS_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${ZS_BUILDDIR:=$ZS_SRCDIR/build}"
: "${ZS_PLUGIN:=$ZS_BUILDDIR/spank/.libs/zonesort.so}"
: "${ZS_ZONESORT:=$ZS_BUILDDIR/tools/zonesort}"
: "${ZS_STREAM_TRIAD:=$ZS_BUILDDIR/stream/stream-triad}"
: "${ZS_NHC_DIR:=$ZS_SRCDIR/nhc}"
# The NHC check's metrics writer runs "zonesort textfile-write": this one
# (slurmd passes it on to the runner it starts as Epilog).
: "${ZONESORT_METRICS_ZONESORT:=$ZS_ZONESORT}"
export ZS_SRCDIR ZS_BUILDDIR ZS_PLUGIN ZS_ZONESORT ZS_STREAM_TRIAD ZS_NHC_DIR ZONESORT_METRICS_ZONESORT

# need_file PATH WHAT: fails the test file when a built artifact is missing.
need_file() {
	if [ ! -e "$1" ]; then
		_tap_result 1 "$2 present at $1 (build first: scripts/test-all builds it)"
		done_testing
		exit 1
	fi
}
