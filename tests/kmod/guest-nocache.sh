# Runs inside a QEMU guest whose firmware describes no memory-side cache
# (/test.sh of 30-nocache.t): the module must refuse to sort, say why,
# and sort once a cache size is given at run time.
Z=/sys/kernel/zone_sort_free_pages
P=/sys/module/zonesort/parameters
M() { echo "ZSTEST $*"; }
M memory_side_cache=$(ls /sys/devices/system/node/node0/memory_side_cache 2>/dev/null | grep -c index)
echo ZSTEST_BEGIN status
zonesort status 2>&1
echo ZSTEST_DONE status
M insmod_bad=$(insmod /zonesort.ko cache_size=12345 > /dev/null 2>&1 && echo ok || echo refused)
M insmod=$(insmod /zonesort.ko 2>&1 && echo ok)
M nodeid_nocache=$(zstest write $Z/nodeid 0)
M failed=$(grep '^failed=' $Z/stats | cut -d= -f2)
echo ZSTEST_BEGIN dmesg
dmesg | grep zonesort
echo ZSTEST_DONE dmesg
echo ZSTEST_BEGIN conflicts
cat $Z/conflicts
echo ZSTEST_DONE conflicts
M set_size=$(zstest write $P/cache_size 67108864)
M nodeid_set=$(zstest write $Z/nodeid 0)
M sorts=$(grep '^sorts=' $Z/stats | cut -d= -f2)
M rmmod=$(rmmod zonesort 2>&1 && echo ok)
M insmod_param=$(insmod /zonesort.ko cache_size=134217728 ways=2 2>&1 && echo ok) \
	nodeid_param=$(zstest write $Z/nodeid 0) ways=$(cat $P/ways)
echo ZSTEST_BEGIN dmesg_all
dmesg
echo ZSTEST_DONE dmesg_all
exit 0
