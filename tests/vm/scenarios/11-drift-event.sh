#!/bin/sh
# 11-drift-event: a hand write to a managed cpuset file is seen as it
# happens (inotify IN_MODIFY on the cgroup's cpuset.cpus and cpuset.mems,
# which the kernel raises for a write(2) to a cgroupfs file), not at the
# reconcile period: with a 60 s period, the kernel's cpuset.cpus.effective
# and the task's Cpus_allowed_list are back within seconds. The daemon's
# own repair writes cost one more cycle and then it is quiet (no cycle
# feeds the next).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"

# 2node: cpus 0-3 on node 0, 4-7 on node 1; cores {0,1} {2,3} {4,5} {6,7}.
CGP=$CG/numaplace.slice
ETC=/tmp/np-drift
SOCK=/run/np-drift.sock
rm -rf $ETC
mkdir -p $ETC/specs
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": 60, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "$SOCK", "verify": {"enabled": "off"}, "metrics": {"listen": ""}}
JSON
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }
mems_is() { [ "$(cat "$CGP/$1/cpuset.mems.effective" 2>/dev/null)" = "$2" ]; }
cycles() { numaplace status --json --socket $SOCK 2>/dev/null | tr -d ' \n' | sed -n 's/.*"cycles":\([0-9]*\).*/\1/p'; }
# milliseconds since boot (busybox date has no %N; /proc/uptime: 10 ms steps)
ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
on_exit "kill \$DPID 2>/dev/null; wait \$DPID 2>/dev/null; for c in $CGP/dre/ $CGP/drs/; do [ -d \$c ] && rmdir \$c; done; rmdir $CGP 2>/dev/null"
show_on_fail $ETC/log
daemon_up $DPID $SOCK $ETC/log
grep -q "inotify" $ETC/log && fail "drift events are not available: $(grep inotify $ETC/log)"

printf '{"name":"dre","cgroup":"dre","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' >$ETC/dre.json
numaplace admit -f $ETC/dre.json --socket $SOCK >/dev/null || fail "dre was not admitted"
wait_for 10 is_eff dre 2-3
P=$(spawn_sleeper)
cg_move "$P" numaplace.slice/dre
wait_for 5 cpus_is "$P" 2-3

# cpuset.cpus written by hand: back long before the 60 s period
c0=$(cycles)
t0=$(ms)
echo 4-7 >"$CGP/dre/cpuset.cpus" || fail "cannot write dre's cpuset.cpus"
try_for 20 is_eff dre 2-3 || fail "cpuset.cpus not repaired within 20 s (period 60 s): $(cat $CGP/dre/cpuset.cpus)"
t1=$(ms)
wait_for 5 cpus_is "$P" 2-3
grep -q 'drift in dre: cpuset.cpus is "4-7"' $ETC/log || fail "the drift was not reported"
log "cpuset.cpus written by hand: repaired in $((t1 - t0)) ms (period 60 s; TCG)"

# cpuset.mems likewise
t0=$(ms)
echo 1 >"$CGP/dre/cpuset.mems" || fail "cannot write dre's cpuset.mems"
try_for 20 mems_is dre 0 || fail "cpuset.mems not repaired within 20 s: $(cat $CGP/dre/cpuset.mems)"
t1=$(ms)
log "cpuset.mems written by hand: repaired in $((t1 - t0)) ms"

# quiet afterwards: the repairs' own events do not start a cycle chain
sleep 2
c1=$(cycles)
sleep 3
c2=$(cycles)
assert_eq "$c2" "$c1" "cycles over 3 quiet seconds (no self-feeding)"
log "cycles: $c0 before the writes, $c1 after, $c2 three seconds later"
kill "$P"
pass "a hand-written cpuset is seen at once (inotify), repaired, then quiet"
