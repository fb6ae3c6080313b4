#!/bin/sh
# 15-partition: "isolation": "partition" makes the workload's CPUs a cgroup
# v2 isolated partition: no task outside it can run there, not even one in
# the root cgroup that asks with sched_setaffinity.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"
command -v taskset >/dev/null || skip "no taskset in this busybox"

CGP=$CG/numaplace.slice
ETC=/tmp/npp
mkdir -p $ETC/specs
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted"},
 "reconcile_period_s": 0.5, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "/run/numaplace-p.sock"}
JSON
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }
part_is() { [ "$(cat "$1/cpuset.cpus.partition" 2>/dev/null)" = "$2" ]; }

# Before: a task in the root cgroup may pin itself to CPU 2.
assert_true "taskset -c 2 from the root cgroup before isolation" taskset -c 2 true

numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
show_on_fail $ETC/log
cleanup() {
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	cat $ETC/log
	for c in "$CGP"/*/; do [ -d "$c" ] && rmdir "$c"; done
	echo member >"$CGP/cpuset.cpus.partition" 2>/dev/null
	rmdir "$CGP" 2>/dev/null
}
on_exit cleanup
wait_for 10 test -S /run/numaplace-p.sock

printf '{"name":"shared","qos":"LS","containers":[{"name":"m","cpu":"1"}]}' >$ETC/specs/shared.json
wait_for 10 is_eff shared 0-7
printf '{"name":"iso","qos":"LSE","isolation":"partition","containers":[{"name":"m","cpu":"2"}]}' >$ETC/specs/iso.json
wait_for 10 is_eff iso 2-3
wait_for 10 part_is "$CGP/iso" isolated
assert_eq "$(cat $CGP/cpuset.cpus.partition)" root "managed parent partition"
log "iso: cpuset.cpus.partition reads '$(cat $CGP/iso/cpuset.cpus.partition)', parent '$(cat $CGP/cpuset.cpus.partition)'"
# the shared workload keeps the rest of the parent's CPUs (reserved stay
# with the host)
wait_for 10 is_eff shared 4-7

# After: nobody outside the partition can run on its CPUs.
assert_false "taskset -c 2 from the root cgroup into the partition" taskset -c 2 true
P=$(spawn_sleeper)
cg_move "$P" numaplace.slice/shared
assert_false "taskset -p -c 2 of a task in the shared workload" taskset -p -c 2 "$P"
assert_eq "$(pid_cpus "$P")" 4-7 "shared task's Cpus_allowed_list"
Q=$(spawn_sleeper)
cg_move "$Q" numaplace.slice/iso
assert_eq "$(pid_cpus "$Q")" 2-3 "isolated task's Cpus_allowed_list"
kill "$P" "$Q"
wait_for 5 sh -c "[ ! -s $CGP/iso/cgroup.procs ] && [ ! -s $CGP/shared/cgroup.procs ]"
pass "isolated partition: CPUs 2-3 unreachable from outside"
