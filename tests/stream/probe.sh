# What every stream-triad test sets up: the probe as $S, a clean OpenMP
# environment (the probe reads these; the tests set them where they mean to),
# a scratch directory $tmp, and $bg, a background process the exit trap
# stops if a test left one.
#
#   run COMMAND...   runs it and sets out (stdout), err (stderr) and rc
unset OMP_NUM_THREADS OMP_PROC_BIND OMP_PLACES GOMP_CPU_AFFINITY ZS_STREAM_CORRUPT
need_file "$ZS_STREAM_TRIAD" "stream-triad"
S=$ZS_STREAM_TRIAD
tmp=$(mktemp -d /tmp/zs-stream.XXXXXX)
bg=
trap '[ -n "$bg" ] && kill "$bg" 2>/dev/null; rm -rf "$tmp"' EXIT

run() { out=$("$@" 2>"$tmp/err"); rc=$?; err=$(cat "$tmp/err"); }
