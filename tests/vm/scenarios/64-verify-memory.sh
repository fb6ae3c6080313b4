#!/bin/sh
# np-timeout: 420
# 64-verify-memory: a workload whose memory is on the remote node.
# mem (LSE) gets CPUs on node 1 and mems 1. With numaplaced stopped
# (SIGSTOP: the BPF programs keep counting, nothing repairs), its
# cpuset.mems is rewritten by hand to 0, and inside it:
#   - np-memtouch, on a node-1 CPU, allocates 48 MB (default policy: the
#     cpuset puts it on node 0) and keeps touching it: NUMA balancing
#     takes hinting faults on remote pages it may not migrate (polled on
#     the pinned counters until they show);
#   - 32 MB are written to a tmpfs file (page cache charged to mem's memory
#     cgroup, which a cpuset.mems change does not migrate).
# After SIGCONT, within one reconcile period: fault_pages_remote and
# fault_pages_outside_mems count, the daemon reports the remote faults and
# the residency outside mems (memory.numa_stat), and cpuset.mems is 1 again
# (the kernel then moves the tasks' anon pages back to node 1).
# B: the same drift with verify.on_remote_memory = "migrate" (SIGHUP), with
# A's toucher still running (the mems rewrite moves its pages to node 0):
# the daemon logs that it migrated mem's pages.
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
# numa KIND NODE: bytes of KIND (anon, file, ...) of mem on NODE
numa() { sed -n "s/^$1 .*N$2=\([0-9]*\).*/\1/p" $CGP/mem/memory.numa_stat; }
# faulted_since N: the BPF counters (read from the pins: the daemon is
# stopped) show 30000 remote hinting-fault pages more than N (about 2.5
# scans of the 12288 pages), and np-memtouch's 48 MiB are all there. Under
# TCG how long that takes varies (5 s to over 10 s), so poll. Why so many:
# the cycle that repairs cpuset.mems reads the counters after the repair,
# and the local faults taken meanwhile count in its ratio (10846 local
# against 12284 remote in one run, when it waited for 1000). B asks for
# 20000: its toucher is A's, whose NUMA scan period has grown by then
# (24580 in 60 s in one run).
# what the toucher is doing (for failure messages)
touchinfo() { # PID
	echo "remote $(vcount mem fault_pages_remote) pages, anon N0=$(numa anon 0) N1=$(numa anon 1)," \
		"pid $1 $(cut -d' ' -f3,14,15,39 /proc/$1/stat 2>/dev/null || echo gone) (state utime stime cpu)," \
		"wchan $(cat /proc/$1/wchan 2>/dev/null)," \
		"stack $(head -n 6 /proc/$1/stack 2>/dev/null | sed 's/^\[<[0-9a-f]*>\] //; s/+0x[0-9a-f/x]*//' | tr '\n' ' ')," \
		"thp $(grep -h thp_fault /proc/vmstat | tr '\n' ' ')," \
		"$(grep -h nonvoluntary_ctxt /proc/$1/status 2>/dev/null | tr -s ' \t' ' ')," \
		"mems $(cat $CGP/mem/cpuset.mems), numa_balancing $(cat /proc/sys/kernel/numa_balancing)," \
		"$(grep -h MemFree /sys/devices/system/node/node*/meminfo | tr -s ' ' | tr '\n' ' ')"
}
faulted_since() { # N [AMOUNT, default 30000]
	[ "$(vcount mem fault_pages_remote)" -ge $(($1 + ${2:-30000})) ] &&
		[ "$(numa anon 0)" -ge $((48 << 20)) ]
}
# pins left by an earlier daemon (the maps outlive it) would be reused:
# start from none, and remove ours at exit
rm -rf /sys/fs/bpf/numaplace
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
show_on_fail $ETC/log
M=
cleanup() {
	kill -CONT "$DPID" 2>/dev/null
	kill $M 2>/dev/null
	rm -f /dev/shm/np-v64
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	rm -rf /sys/fs/bpf/numaplace
	echo "$nb0" >/proc/sys/kernel/numa_balancing
	sleep 0.3
	for c in "$CGP"/*/; do [ -d "$c" ] && rmdir "$c"; done
	rmdir "$CGP" 2>/dev/null
}
on_exit cleanup
daemon_up "$DPID" $SOCK $ETC/log

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
# (it keeps touching through B: B needs no new allocation)
sh -c "echo \$\$ > $CGP/mem/cgroup.procs; exec np-memtouch --cpu $C --default --size 48Mi --seconds 600 --wait-signal" >$ETC/touch.json 2>$ETC/touch.err &
M=$!
t0=$(date +%s)
sh -c "echo \$\$ > $CGP/mem/cgroup.procs; exec dd if=/dev/zero of=/dev/shm/np-v64 bs=1M count=32" 2>/dev/null ||
	fail "cannot write the tmpfs file from mem"
poll_secs 60 faulted_since 0 ||
	fail "A: too few remote hinting faults in 60 s: $(touchinfo $M)"
sleep 1
log "A: remote hinting faults after $(($(date +%s) - t0)) s"
log "np-memtouch: $(cat $ETC/touch.err) (pid $M $(kill -0 $M 2>/dev/null && echo running || echo gone))"
grep -E '^(anon|file) ' $CGP/mem/memory.numa_stat | while read -r l; do log "while stopped: $l"; done
a0=$(numa anon 0)
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
# cgroup v2 moves the tasks' pages when cpuset.mems changes (the tmpfs
# file is not mapped by any task: it stays)
anon_moved() { [ "$(numa anon 0)" -lt $((a0 / 2)) ]; }
try_for 5 anon_moved ||
	fail "mem's anon memory on node 0 did not drop after the repair: $a0 -> $(numa anon 0) bytes"
grep -E '^(anon|file) ' $CGP/mem/memory.numa_stat | while read -r l; do log "after the repair: $l"; done
log "A: faults: remote $rp pages, local $lp, outside mems $op; anon on node 0 $a0 -> $(numa anon 0) bytes"
log "$(grep 'verify: mem: ' $ETC/log | head -n 1 | sed 's/.*warning: //')"
log "$(grep 'verify: mem has' $ETC/log | head -n 1 | sed 's/.*warning: //')"
resA="$rp remote hinting-fault pages ($op outside mems), numa_stat residency reported, cpuset.mems repaired, anon on node 0 $((a0 >> 20)) -> $(($(numa anon 0) >> 20)) MiB"

# --- B: verify.on_remote_memory = "migrate" (SIGHUP applies it) -------------
# The tmpfs file would keep mem flagged (and migrated) at once: drop it.
rm -f /dev/shm/np-v64
sed -i 's/"outside_mems_bytes": "16Mi"}/"outside_mems_bytes": "16Mi", "on_remote_memory": "migrate", "migrate_interval_s": 1}/' $ETC/numaplace.json
grep -q '"migrate"' $ETC/numaplace.json || fail "could not edit the configuration"
kill -HUP $DPID
try_for 5 sh -c "[ \$(grep -c 'configuration reloaded' $ETC/log) -ge 1 ]" || fail "SIGHUP did not reload"
sleep 2
grep -q "verify: migrated" $ETC/log && fail "migrated before any remote memory: $(grep 'verify: migrated' $ETC/log)"
# The same toucher, still running: the hand-written cpuset.mems moves its
# pages back to node 0 (cgroup v2 migrates them), and its accesses from
# the node-1 CPU are remote again.
kill -STOP $DPID
echo 0 >$CGP/mem/cpuset.mems || fail "cannot write mem's cpuset.mems"
t0=$(date +%s)
rp0=$(vcount mem fault_pages_remote)
if ! poll_secs 90 faulted_since "$rp0" 20000; then
	# The precondition of B, not what it checks. In full 2node runs a
	# second, new toucher often stalled in the kernel allocating its
	# pages (stime ~62 s, utime under 20 ticks, 16-39 MiB touched in
	# 60 s; a sysrq-l backtrace showed it in clear_page_erms under
	# vma_alloc_folio), with THP and with 4 KiB pages alike, while B
	# passed alone in 10-12 s. B now reuses A's toucher. If the
	# precondition still fails, B is not run, loudly, with what the task
	# was doing; A has already passed.
	note "B not run: too few new remote hinting faults in 90 s (before: $rp0): $(touchinfo $M)"
	# where the CPUs are (the toucher's kernel stack is not readable while
	# it runs): backtraces of all active CPUs, from the kernel log
	if [ -w /proc/sysrq-trigger ]; then
		# one round: each prints every CPU's backtrace on the serial
		# console, slow under TCG (three took the scenario past its
		# limit in a CI run, 2026-11-26)
		for _s in 1; do
			dmesg -c >/dev/null 2>&1
			echo l >/proc/sysrq-trigger
			sleep 2
			dmesg 2>/dev/null | grep -A 24 'Comm: np-memtouch' |
				grep -E '^\[|RIP' | grep -vE ' (R[A-Z0-9]{2}|RSP|FS|CS|CR2|Code):' |
				sed "s/^/# sysrq-l $_s: /"
		done
	fi
	kill -CONT $DPID
	pass "A: $resA; B (on_remote_memory=migrate) not run: the toucher made too few remote faults in 90 s (see the note)"
fi
sleep 1
log "B: new remote hinting faults after $(($(date +%s) - t0)) s"
a0=$(numa anon 0)
log "B: while stopped: anon N0=$a0 N1=$(numa anon 1)"
kill -CONT $DPID
# The first cycle after SIGCONT repairs the hand-written cpuset.mems before
# it checks verification; that write migrates the 48 MiB back in the
# kernel, synchronously, and once took over 5 s under TCG (a fresh-clone
# CI run, 2026-11-24: the migration was logged, too late). 20 s.
try_for 20 grep -q "verify: migrated mem's pages" $ETC/log ||
	{ cat $ETC/log; fail "no migration within 20 s of SIGCONT (remote fault pages $(vcount mem fault_pages_remote))"; }
line=$(grep "verify: migrated mem's pages" $ETC/log | head -n 1)
try_for 3 sh -c "[ \"\$(cat $CGP/mem/cpuset.mems)\" = 1 ]" ||
	fail "mem's cpuset.mems was not repaired: $(cat $CGP/mem/cpuset.mems)"
try_for 5 anon_moved ||
	fail "mem's anon memory on node 0 did not drop: $a0 -> $(numa anon 0) bytes"
kill $M
wait $M 2>/dev/null
M=
log "np-memtouch: $(cat $ETC/touch.json)"
log "B: ${line#*warning: }; anon on node 0 $a0 -> $(numa anon 0) bytes, remote fault pages now $(vcount mem fault_pages_remote)"
log "B: status actions: $(numaplace status --json --socket $SOCK 2>/dev/null | tr -d ' \n' | grep -o '"actions":{[^}]*}')"
pass "A: $resA; B: on_remote_memory=migrate migrated mem's pages"
