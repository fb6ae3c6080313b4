#!/bin/sh
# 64-verify-memory: a workload whose memory is on the remote node.
# mem (LSE) gets CPUs on node 1 and mems 1. With numaplaced stopped
# (SIGSTOP: the BPF programs keep counting, nothing repairs), its
# cpuset.mems is rewritten by hand to 0, and inside it:
#   - np-memtouch, on a node-1 CPU, allocates 48 MB (default policy: the
#     cpuset puts it on node 0) and keeps touching it: NUMA balancing
#     takes hinting faults on remote pages it may not migrate;
#   - 32 MB are written to a tmpfs file (page cache charged to mem's memory
#     cgroup, which a cpuset.mems change does not migrate).
# After SIGCONT, within one reconcile period: fault_pages_remote and
# fault_pages_outside_mems count, the daemon reports the remote faults and
# the residency outside mems (memory.numa_stat), and cpuset.mems is 1 again.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ -x /bin/np-memtouch ] || skip "np-memtouch is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"
[ -w /proc/sys/kernel/numa_balancing ] || skip "no kernel.numa_balancing (CONFIG_NUMA_BALANCING off)"

CGP=$CG/numaplace.slice
ETC=/tmp/np-v64
SOCK=/run/np-v64.sock
mkdir -p $ETC/specs
# reserved 0-3: the LSE workload lands on node 1
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-3",
                 "topology_policy": "restricted",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": 1, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state", "socket": "$SOCK",
 "verify": {"enabled": "on", "min_fault_pages": 16, "remote_fault_ratio": 0.5,
            "outside_mems_bytes": "16Mi"}}
JSON
nb0=$(cat /proc/sys/kernel/numa_balancing)
echo 1 >/proc/sys/kernel/numa_balancing
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
M=
cleanup() {
	kill -CONT "$DPID" 2>/dev/null
	kill $M 2>/dev/null
	rm -f /dev/shm/np-v64
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	echo "$nb0" >/proc/sys/kernel/numa_balancing
	sleep 0.3
	for c in "$CGP"/*/; do [ -d "$c" ] && rmdir "$c"; done
	rmdir "$CGP" 2>/dev/null
}
on_exit cleanup
try_for 10 test -S $SOCK || { cat $ETC/log; fail "numaplaced did not start"; }

printf '{"name":"mem","cgroup":"mem","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' >$ETC/specs/mem.json
try_for 10 sh -c "[ \"\$(cat $CGP/mem/cpuset.mems.effective 2>/dev/null)\" = 1 ]" ||
	{ cat $ETC/log; fail "mem was not placed on node 1: cpus $(eff mem), mems $(cat $CGP/mem/cpuset.mems.effective)"; }
CPUS=$(eff mem)
C=${CPUS%%-*}
[ -r $CGP/mem/memory.numa_stat ] ||
	{ cat $ETC/log; fail "no memory.numa_stat in mem: the daemon did not enable +memory"; }
sleep 1.5 # past the settle window

kill -STOP $DPID
echo 0 >$CGP/mem/cpuset.mems || fail "cannot write mem's cpuset.mems"
sh -c "echo \$\$ > $CGP/mem/cgroup.procs; exec np-memtouch --cpu $C --default --size 48Mi --seconds 12 --wait-signal" >$ETC/touch.json 2>$ETC/touch.err &
M=$!
sh -c "echo \$\$ > $CGP/mem/cgroup.procs; exec dd if=/dev/zero of=/dev/shm/np-v64 bs=1M count=32" 2>/dev/null ||
	fail "cannot write the tmpfs file from mem"
sleep 13
log "np-memtouch: $(cat $ETC/touch.err) (pid $M $(kill -0 $M 2>/dev/null && echo running || echo gone))"
grep -E '^(anon|file) ' $CGP/mem/memory.numa_stat | while read -r l; do log "while stopped: $l"; done
kill -CONT $DPID
try_for 5 grep -q "verify: mem: .* were remote this cycle" $ETC/log ||
	{ cat $ETC/log; fail "no remote-fault report within 5 s of SIGCONT (counters: remote $(vcount mem fault_pages_remote), local $(vcount mem fault_pages_local))"; }
try_for 5 grep -q "verify: mem has .* KiB resident outside its memory nodes 1" $ETC/log ||
	{ cat $ETC/log; fail "no memory.numa_stat residency report"; }
rp=$(vcount mem fault_pages_remote)
lp=$(vcount mem fault_pages_local)
op=$(vcount mem fault_pages_outside_mems)
[ "$rp" -gt 0 ] && [ "$op" -gt 0 ] || fail "fault counters: remote $rp, outside mems $op"
try_for 3 sh -c "[ \"\$(cat $CGP/mem/cpuset.mems)\" = 1 ]" ||
	fail "mem's cpuset.mems was not repaired: $(cat $CGP/mem/cpuset.mems)"
kill $M
wait $M 2>/dev/null
M=
log "np-memtouch: $(cat $ETC/touch.json)"
log "faults: remote $rp pages, local $lp, outside mems $op"
log "$(grep 'verify: mem: ' $ETC/log | head -n 1 | sed 's/.*warning: //')"
log "$(grep 'verify: mem has' $ETC/log | head -n 1 | sed 's/.*warning: //')"
pass "remote memory flagged: $rp remote hinting-fault pages ($op outside mems), memory.numa_stat residency reported, cpuset.mems repaired"
