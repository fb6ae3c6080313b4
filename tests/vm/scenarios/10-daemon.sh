#!/bin/sh
# 10-daemon: numaplaced owns cpusets on a real cgroup v2 tree. Every check
# reads the kernel's own files (cpuset.cpus.effective, /proc/PID/status).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"

# 2node: cpus 0-3 on node 0, 4-7 on node 1; qemu numbers SMT siblings
# adjacently, so the cores are {0,1} {2,3} {4,5} {6,7}.
CGP=$CG/numaplace.slice
ETC=/tmp/np
mkdir -p $ETC/specs
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": 0.5,
 "cgroup_parent": "numaplace.slice",
 "shared_cgroups": ["hostd.slice"],
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "/run/numaplace.sock", "bpf_pin_path": "/sys/fs/bpf/numaplace"}
JSON
spec() { # NAME QOS CPUS
	printf '{"name":"%s","cgroup":"%s","qos":"%s","containers":[{"name":"main","cpu":"%s"}]}\n' \
		"$1" "$1" "$2" "$3" >"$ETC/specs/$1.json.tmp"
	mv "$ETC/specs/$1.json.tmp" "$ETC/specs/$1.json"
}
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }

# a host slice outside the managed parent, with a daemon in it
cg_create hostd.slice cpuset
cg_write hostd.slice cpuset.cpus 0-7
H=$(spawn_sleeper)
cg_move "$H" hostd.slice

numaplaced --check-config -c $ETC/numaplace.json >/dev/null ||
	fail "--check-config refused the configuration"
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
on_exit "kill $DPID $H 2>/dev/null"
show_on_fail $ETC/log
wait_for 10 test -S /run/numaplace.sock

# --- a shared workload and an LSE workload ---------------------------------
spec shared LS 1
wait_for 10 is_eff shared 0-7
spec web LSE 2
wait_for 10 is_eff web 2-3
assert_eq "$(cat $CGP/web/cpuset.mems.effective)" 0 "web mems"
wait_for 10 is_eff shared 0-1,4-7
log "LSE web got 2-3 (one core, node 0); shared lost exactly 2-3"
# what each got, for the workload to read (run_dir: the socket's directory)
wait_for 10 grep -q '"cpuset": "2-3"' /run/workloads/web.json
wait_for 10 grep -q '"cpuset": "0-1,4-7"' /run/workloads/shared.json
log "placement files: web.json says 2-3, shared.json 0-1,4-7"

P=$(spawn_sleeper)
cg_move "$P" numaplace.slice/web
assert_eq "$(pid_cpus "$P")" 2-3 "Cpus_allowed_list of a task in web"
assert_eq "$(pid_mems "$P")" 0 "Mems_allowed_list of a task in web"
# the host slice lost web's CPUs too: host daemons stay off exclusive CPUs
wait_for 10 sh -c "[ \"\$(cat $CG/hostd.slice/cpuset.cpus.effective)\" = 0-1,4-7 ]"
assert_eq "$(pid_cpus "$H")" 0-1,4-7 "Cpus_allowed_list of a host daemon"

# --- fill the node; the next exclusive request is rejected ------------------
spec db LSE 4
wait_for 10 is_eff db 4-7
wait_for 10 is_eff shared 0-1
spec late LSE 2
sleep 1.5
[ -d "$CGP/late" ] && fail "rejected workload late got a cgroup"
grep -q "rejected late" $ETC/log || fail "no rejection logged for late"
log "late rejected: $(grep 'rejected late' $ETC/log | tail -1)"
rm -f $ETC/specs/late.json

# --- drift: a wrong cpuset written by hand is restored -----------------------
echo 4-7 >"$CGP/web/cpuset.cpus" 2>/dev/null || true
wait_for 10 is_eff web 2-3
grep -q "drift in web" $ETC/log || fail "drift was not reported"
log "drift repaired"

# --- release: CPUs return, shared widens --------------------------------------
rm -f $ETC/specs/db.json
wait_for 10 is_eff shared 0-1,4-7
wait_for 10 test ! -e /run/workloads/db.json
wait_for 10 grep -q '"cpuset": "0-1,4-7"' /run/workloads/shared.json

# --- a workload cgroup removed by hand releases its allocation ---------------
kill "$P"
wait_for 5 sh -c "[ ! -s $CGP/web/cgroup.procs ]"
rmdir "$CGP/web"
wait_for 10 grep -q "released web (cgroup removed)" $ETC/log
wait_for 10 is_eff shared 0-7
sleep 1
[ -d "$CGP/web" ] && fail "web was re-admitted although its spec did not change"
# the spec file still asks for web: it would come back after a restart
rm -f $ETC/specs/web.json

# --- restart: state survives, allocations do not move -------------------------
spec keep LSE 2
wait_for 10 is_eff keep 2-3
kill -9 $DPID
wait $DPID 2>/dev/null
numaplaced -c $ETC/numaplace.json 2>>$ETC/log &
DPID=$!
on_exit "kill $DPID 2>/dev/null"
wait_for 10 test -S /run/numaplace.sock
sleep 1
assert_eq "$(eff keep)" 2-3 "keep after restart"
assert_eq "$(eff shared)" 0-1,4-7 "shared after restart"

# --- corrupt state: clear refusal, --reset-state recovers ---------------------
kill $DPID
wait $DPID 2>/dev/null
printf 'garbage' >>$ETC/state/state.json
if numaplaced -c $ETC/numaplace.json --once 2>$ETC/corrupt.log; then
	fail "numaplaced started on a corrupt state file"
fi
grep -q -- "--reset-state" $ETC/corrupt.log ||
	fail "refusal does not say how to recover: $(cat $ETC/corrupt.log)"
numaplaced -c $ETC/numaplace.json --reset-state --once 2>>$ETC/log ||
	fail "--reset-state did not recover"
ls $ETC/state/state.json.bak.* >/dev/null 2>&1 || fail "old state not kept"
# leave no cgroups behind for the next scenario
for c in "$CGP"/*/; do [ -d "$c" ] && rmdir "$c"; done
rmdir "$CGP"
kill "$H" 2>/dev/null
wait_for 5 sh -c "[ ! -s $CG/hostd.slice/cgroup.procs ]"
rmdir "$CG/hostd.slice"
pass "daemon: admit, reject, drift, release, vanish, restart, reset"
