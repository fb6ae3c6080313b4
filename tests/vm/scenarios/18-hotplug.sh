#!/bin/sh
# 18-hotplug: CPUs going offline and coming back under numaplaced
# (on_cpu_offline "report", then "replace"), and a restart while a CPU is
# offline. The kernel's own cpuset behaviour on offline is checked, not
# assumed: cpuset.cpus keeps what was written, cpuset.cpus.effective loses
# the offline CPU and gets it back when it returns (cgroup v2).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"
[ -w /sys/devices/system/cpu/cpu3/online ] || skip "CPU 3 cannot be taken offline"

# 2node: cpus 0-3 on node 0, 4-7 on node 1; cores {0,1} {2,3} {4,5} {6,7}.
CGP=$CG/numaplace.slice
# its own directories and names: earlier scenarios leave theirs behind
ETC=/tmp/np-hotplug
SOCK=/run/np-hotplug.sock
rm -rf $ETC
mkdir -p $ETC/specs
config() { # ON_CPU_OFFLINE
	cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": 0.5, "on_cpu_offline": "$1",
 "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "$SOCK", "verify": {"enabled": "off"}}
JSON
}
spec() { # NAME QOS CPUS
	printf '{"name":"%s","cgroup":"%s","qos":"%s","containers":[{"name":"main","cpu":"%s"}]}\n' \
		"$1" "$1" "$2" "$3" >"$ETC/specs/$1.json.tmp"
	mv "$ETC/specs/$1.json.tmp" "$ETC/specs/$1.json"
}
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }
cpu_online() { echo "$2" >/sys/devices/system/cpu/cpu$1/online; }
# one line of status JSON, whitespace removed
status() { numaplace status --json --socket $SOCK 2>/dev/null | tr -d ' \n'; }
# status.degraded: {"workload": "its offline exclusive CPUs", ...}
degraded() { status | grep -o '"degraded":{[^}]*}'; }
deg_is() { degraded | grep -q "\"$1\":\"$2\""; }
offline_is() { status | grep -q "\"offline_cpus\":\"$1\""; }
cpuset_is() { numaplace status --json --socket $SOCK | tr -d ' \n' | grep -q "\"name\":\"$1\",\"cgroup\":\"$1\",\"qos\":\"LSE\",\"class\":\"LSE\",\"cpuset\":\"$2\""; }
start() {
	numaplaced -c $ETC/numaplace.json 2>>$ETC/log &
	DPID=$!
	daemon_up $DPID $SOCK $ETC/log
}
stop() { kill -TERM $DPID; wait $DPID; }

on_exit "kill \$DPID 2>/dev/null; for c in 3 5; do echo 1 >/sys/devices/system/cpu/cpu\$c/online; done"
show_on_fail $ETC/log
config report
start

spec hps LS 1
wait_for 10 is_eff hps 0-7
spec hpw LSE 2
wait_for 10 is_eff hpw 2-3
wait_for 10 is_eff hps 0-1,4-7

# --- an exclusive CPU goes offline (report) -------------------------------
cpu_online 3 0
assert_eq "$(cat /sys/devices/system/cpu/online)" 0-2,4-7 "online CPUs"
wait_for 5 is_eff hpw 2
assert_eq "$(cat $CGP/hpw/cpuset.cpus)" 2-3 "web cpuset.cpus (kernel keeps it)"
log "kernel: web's effective set lost CPU 3, its cpuset.cpus kept 2-3"
# one period is 0.5 s: noticed within a second
poll_secs 2 deg_is hpw 3 || fail "web not reported degraded: $(degraded)"
assert_true "status lists CPU 3 offline" offline_is 3
assert_file_contains $ETC/log 'hpw is degraded: its exclusive CPU\(s\) 3 are offline; it keeps them'
assert_eq "$(cat $CGP/hpw/cpuset.cpus)" 2-3 "web cpuset.cpus after the daemon saw it"

# --- a shared CPU goes offline: only the pool shrinks ---------------------
cpu_online 5 0
wait_for 5 is_eff hps 0-1,4,6-7
poll_secs 2 sh -c "cat $CGP/hps/cpuset.cpus | grep -qx 0-1,4,6-7" ||
	fail "shared cpuset.cpus not resized: $(cat $CGP/hps/cpuset.cpus)"
assert_eq "$(cat $CGP/hpw/cpuset.cpus)" 2-3 "web untouched"
# a new grant never gets an offline CPU (nor the core with one)
spec hpd LSE 2
wait_for 10 is_eff hpd 6-7
log "db got 6-7: not 3, not the core of offline 5"

# --- restart while 3 and 5 are offline: the state is adopted --------------
stop
start
assert_file_contains $ETC/log 'CPU\(s\) 3,5 are offline: their core, socket and NUMA node come from the saved state'
assert_true "web adopted and degraded" deg_is hpw 3
assert_true "db adopted" cpuset_is hpd 6-7
assert_true "status lists 3,5 offline" offline_is 3,5
is_eff hpw 2 || fail "web after restart: $(eff hpw)"

# --- the CPUs come back ---------------------------------------------------
cpu_online 3 1
wait_for 5 is_eff hpw 2-3
poll_secs 2 offline_is 5 || fail "status after CPU 3 came back: $(status | grep -o '"offline_cpus":"[^"]*"' | head -1)"
assert_eq "$(degraded)" '"degraded":{}' "degraded after CPU 3 returned"
assert_file_contains $ETC/log 'hpw has all its CPUs online again'
cpu_online 5 1
wait_for 5 is_eff hps 0-1,4-5
log "CPUs back: web 2-3 again, shared 0-1,4-5"

# --- replace: web is moved off an offline CPU -----------------------------
stop
config replace
start
cpu_online 3 0
wait_for 5 is_eff hpw 4-5
assert_eq "$(cat $CGP/hpw/cpuset.cpus)" 4-5 "web cpuset.cpus after re-placing"
assert_eq "$(degraded)" '"degraded":{}' "degraded once web is re-placed"
assert_true "status: web on 4-5" cpuset_is hpw 4-5
assert_file_contains $ETC/log 're-placed hpw off offline CPUs: cpuset 4-5 \(was 2-3\)'
wait_for 5 is_eff hps 0-2
cpu_online 3 1
wait_for 5 is_eff hps 0-3
assert_eq "$(eff hpw)" 4-5 "web stays where it was re-placed"
stop
pass "offline exclusive CPU kept (report) and moved (replace), shared pool resized, restart adopted while offline"
