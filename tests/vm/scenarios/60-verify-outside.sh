#!/bin/sh
# 60-verify-outside: the eBPF verifier sees a managed task run outside its
# CPUs and the daemon repairs it. An LSE workload gets CPUs 2-3 and a busy
# task; nothing is counted while the placement holds. Then its cpuset.cpus
# is rewritten by hand to CPU 6 while numaplaced is stopped: the
# sched_switch / cpu-clock programs count the task outside its set, and once
# the daemon runs again it logs the task and CPU, and cpuset.cpus.effective
# and the task's Cpus_allowed_list are 2-3 again.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"

CGP=$CG/numaplace.slice
ETC=/tmp/np-v60
SOCK=/run/np-v60.sock
mkdir -p $ETC/specs
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": 1, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state", "socket": "$SOCK",
 "verify": {"enabled": "on", "settle_ms": 1000}}
JSON
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
# pins left by an earlier daemon (the maps outlive it) would be reused:
# start from none, and remove ours at exit
rm -rf /sys/fs/bpf/numaplace
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
show_on_fail $ETC/log
cleanup() {
	kill $B 2>/dev/null
	kill "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	rm -rf /sys/fs/bpf/numaplace
	sleep 0.2
	for c in "$CGP"/*/; do [ -d "$c" ] && rmdir "$c"; done
	rmdir "$CGP" 2>/dev/null
}
B=
on_exit cleanup
daemon_up "$DPID" $SOCK $ETC/log
grep -q "verify: maps pinned" $ETC/log || { cat $ETC/log; fail "verification is not active"; }

printf '{"name":"web","cgroup":"web","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' >$ETC/specs/web.json
try_for 10 sh -c "[ \"\$(cat $CGP/web/cpuset.cpus.effective 2>/dev/null)\" = 2-3 ]" ||
	fail "web was not placed on 2-3: $(eff web)"
B=$(busy_in $CGP/web np-web)
sleep 3 # past the settle window of web's new placement
ro=$(vcount web run_outside)
rt=$(vcount web run_outside_ticks)
assert_eq "$ro/$rt" 0/0 "web's ran-outside switches/ticks while its placement holds"
log "placement holds: web on $(eff web), task $B on $(pid_cpus $B), nothing counted"

# The hand write is made while numaplaced is stopped (SIGSTOP): running,
# it sees the write at once (inotify on the cgroup's cpuset files) and
# repairs it within milliseconds, before the task has been outside for
# verify.grace_ms. The BPF programs count in the kernel meanwhile; after
# SIGCONT the daemon's next cycle repairs the cpuset and reports what they
# counted.
nd=$(grep -c 'drift in web: cpuset.cpus is "6"' $ETC/log)
kill -STOP "$DPID"
echo 6 >$CGP/web/cpuset.cpus || { kill -CONT "$DPID"; fail "cannot write web's cpuset.cpus"; }
t0=$(date +%s)
sleep 2
kill -CONT "$DPID"
if ! try_for 10 grep -q "verify: web ran outside its CPUs" $ETC/log; then
	cat $ETC/log
	fail "no ran-outside report within 10 s of SIGCONT"
fi
[ "$(grep -c 'drift in web: cpuset.cpus is "6"' $ETC/log)" -gt "$nd" ] ||
	fail "the hand write was not reported as drift"
t1=$(date +%s)
ro=$(vcount web run_outside)
rt=$(vcount web run_outside_ticks)
[ $((ro + rt)) -gt 0 ] || fail "the log reported, but the counters are $ro/$rt"
line=$(grep "verify: web ran outside" $ETC/log | head -n 1)
# Only switches in on a wrong CPU produce a sample (with the task's name);
# the tick sampler counts without one (bpf/numaplace.bpf.c np_outside). A
# busy task moved to idle CPU 6 switches in there once, inside the grace
# window, and then often never again: a tick-only report cannot name it.
# Then say so; a named report must name the right task and CPU.
sw=$(echo "$line" | sed -n 's/.*ran outside its CPUs: \([0-9]*\) switch.*/\1/p')
case $line in
*"(last: '"*) assert_match "$line" "np-web' on CPU 6" "the report names the task and the CPU" ;;
*) [ "${sw:-0}" -eq 0 ] || fail "$sw switch(es) outside, but the report names no task: $line"
	note "tick-only report (0 switches in that cycle; counters $ro/$rt): it does not name the task" ;;
esac
try_for 3 sh -c "[ \"\$(cat $CGP/web/cpuset.cpus.effective)\" = 2-3 ]" ||
	fail "web's cpuset was not repaired: $(eff web)"
try_for 3 sh -c "[ \"\$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/$B/status)\" = 2-3 ]" ||
	fail "the task's Cpus_allowed_list is $(pid_cpus $B)"
log "after the hand write: ${ro} switch(es) and ${rt} tick(s) outside (transition $(vcount web transition)), reported in $((t1 - t0)) s: ${line#*warning: }"
log "status: $(numaplace status --socket $SOCK | grep 'VIOLATION web' | cut -c1-160)"
# The same counters on /metrics (the default listen address, 127.0.0.1:9464)
m=$(wget -q -O - http://127.0.0.1:9464/metrics) || fail "GET /metrics failed"
mv() { printf '%s\n' "$m" | sed -n "s/^$1 //p"; }
mo=$(mv 'numaplace_workload_outside_switches_total{workload="web"}')
ms=$(mv 'numaplace_workload_outside_seconds_total{workload="web"}')
[ "${mo:-x}" -ge "$ro" ] 2>/dev/null ||
	fail "/metrics says '${mo}' switches outside for web, numaplace violations said $ro"
[ "$rt" -eq 0 ] || case $ms in "" | 0) fail "/metrics says '$ms' s outside for web, but $rt tick(s) were counted" ;; esac
assert_eq "$(mv numaplace_verification_enabled)" 1 "numaplace_verification_enabled"
printf '%s\n' "$m" | grep -q '^numaplace_bpf_program_runs_total{program="np_sched_switch"} [0-9]' ||
	fail "no run count of np_sched_switch on /metrics"
assert_eq "$(mv 'numaplace_workloads{qos="LSE"}')" 1 "LSE workloads on /metrics"
log "/metrics: web ran outside in $mo switch(es), $ms s"
pass "ran outside detected ($ro switches, $rt ticks) and repaired within one period"
