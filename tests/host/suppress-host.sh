#!/usr/bin/env bash
# BE suppression in numaplaced (config.be_suppress), no root cgroup v2
# needed: numaplaced on a fake cgroup tree (as in daemon-host.sh) with
# proc_stat_file pointing at a file this test writes (under valgrind when
# it is installed), and each workload's
# cpu.stat written by the test too, so that every sample is known exactly.
# 8 CPUs (tests/data/topology/vm-2node.json), reserved 0,4, LSE db on 1,5:
# the BE pool is 2-3,6-7. At 65% the budget is 5200m - non-BE - system.
# Prints "suppress-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-suppress-XXXXXX)
dpid=
trap 'kill "$dpid" 2>/dev/null; [ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$(dirname "$0")/host-lib.sh"
setup "$tmp"
cg=$tmp/cg/numaplace.slice
sock=$tmp/np.sock
# config: suppress on (POLICY [MIN])
conf() { python3 - "$tmp/np.json" "$tmp/stat" "$@" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["proc_stat_file"] = sys.argv[2]
c["be_suppress"] = {"cpuSuppressPolicy": sys.argv[3],
                    "cpuSuppressThresholdPercent": 65}
if len(sys.argv) > 4:
    c["be_suppress"]["cpuSuppressMinCPUs"] = int(sys.argv[4])
    c["metrics"] = {"listen": "unix:" + sys.argv[1][:-len("np.json")] + "m.sock"}
json.dump(c, open(sys.argv[1], "w"))
PY
}
# stat BUSY IDLE: a /proc/stat of 8 CPUs whose totals are BUSY and IDLE
# ticks (user and idle columns), replaced atomically (the daemon samples
# when it changes)
stat() {
	{
		echo "cpu  $1 0 0 $2 0 0 0 0 0 0"
		for c in 0 1 2 3 4 5 6 7; do echo "cpu$c $(($1 / 8)) 0 0 $(($2 / 8)) 0 0 0 0 0 0"; done
		echo "intr 0"
	} >"$tmp/stat.new" && mv "$tmp/stat.new" "$tmp/stat"
}
usage() { printf 'usage_usec %s\nuser_usec 0\nsystem_usec 0\n' "$2" >"$cg/$1/cpu.stat"; }
eff() { cat "$cg/$1/cpuset.cpus" 2>/dev/null; }
# in_be_pool NAME: its cpuset is inside the BE pool 2-3,6-7 (never LSE db's
# 1,5 nor the reserved 0,4)
in_be_pool() { python3 -c '
import sys
s = set()
for r in sys.argv[1].split(","):
    a, _, b = r.partition("-"); s |= set(range(int(a), int(b or a) + 1))
sys.exit(not s or not s <= {2, 3, 6, 7})' "$(eff "$1")"; }
waitfor() { for _ in $(seq 50); do [ "$(eff "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }
waitlog() { for _ in $(seq 50); do grep -q -e "$1" "$tmp/log" && return 0; sleep 0.1; done; return 1; }
valgrind_cmd
start() {
	: >"$tmp/log"
	"${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" 2>>"$tmp/log" &
	dpid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
}
admit() { printf '%s' "$2" >"$tmp/$1.json"; "$build/numaplace" admit -f "$tmp/$1.json" --socket "$sock" >/dev/null; }

conf cpuset
start
check "daemon up with be_suppress cpuset and no $tmp/stat yet" test -S "$sock"
check "  an unreadable stat file is said" waitlog "BE suppress: $tmp/stat: No such file"
admit db '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}'
admit web '{"name":"web","qos":"LS","containers":[{"name":"m","cpu":"1"}]}'
admit batch '{"name":"batch","qos":"BE","containers":[{"name":"m"}]}'
check "before any sample: batch on the whole BE pool" waitfor batch 2-3,6-7
usage db 0; usage web 0; usage batch 0
# baseline: 8000 ticks = 10 s of 8 CPUs at 100 Hz
stat 1000 7000
check "first sample taken" waitlog "first sample of $tmp/stat taken"
# busy LS: 10 s more, 6000 busy ticks of 8000 = node 6000m; web 5.5 CPUs
# (55 s of CPU), batch 0.5: system = 6000 - 5500 - 500 = 0; budget =
# 5200 - 5500 = -300m: the floor, 2 CPUs = the SMT pair 2,6
usage web 55000000; usage batch 5000000
stat 7000 9000
check "busy LS: the BE pool shrinks at once to 2,6" waitfor batch 2,6
check "  the log says budget -300m, 2 CPUs" waitlog "budget -300m -> 2 CPUs"
check "  inside the BE pool" in_be_pool batch
check "  LSE db keeps 1,5" test "$(eff db)" = 1,5
check "  LS web keeps the shared pool" test "$(eff web)" = 0,2-4,6-7
"$build/numaplace" status --json --socket "$sock" >"$tmp/status.json"
check "  status shows batch on 2,6" python3 -c '
import json,sys
w=[w for w in json.load(open(sys.argv[1]))["workloads"] if w["name"]=="batch"][0]
sys.exit(w["cpuset"]!="2,6")' "$tmp/status.json"
# idle: 800 busy ticks of 8000 = node 800m, web 0.5 CPU, batch
# 0.2: system = 800 - 500 - 200 = 100; budget = 5200 - 500 - 100 = 4600m
# -> 5 CPUs, the pool has 4, growth 1 CPU a period (10% of 8, at least 1)
usage web 60000000; usage batch 7000000
stat 7800 16200
check "idle: grows by one CPU a period: 2-3,6" waitfor batch 2-3,6
check "  the log says budget 4600m, 3 CPUs, growth limited" \
	waitlog "budget 4600m -> 3 CPUs.*(growth limited)"
check "  inside the BE pool" in_be_pool batch
usage web 65000000; usage batch 9000000
stat 8600 23400
check "idle, next period: the whole BE pool 2-3,6-7" waitfor batch 2-3,6-7
check "  inside the BE pool" in_be_pool batch
kill -TERM "$dpid"; wait "$dpid"
check "daemon stops cleanly under valgrind (exit $?)" test $? -eq 0

# A minimum of 3 CPUs: the busy node leaves BE 3 CPUs, not 2.
conf cpuset 3
rm -f "$tmp/stat"
start
check "restarted with cpuSuppressMinCPUs 3" test -S "$sock"
check "  batch back on the whole BE pool" waitfor batch 2-3,6-7
usage web 0; usage batch 0
stat 1000 7000
check "  first sample taken" waitlog "first sample of $tmp/stat taken"
usage web 55000000; usage batch 5000000
stat 7000 9000
check "  busy LS: BE held at the minimum 3: 2-3,6" waitfor batch 2-3,6
# /metrics on a Unix socket: the gauges of the last sample
python3 - "$tmp/m.sock" >"$tmp/metrics.txt" <<'PY'
import http.client, socket, sys
class C(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(sys.argv[1])
c = C("localhost"); c.request("GET", "/metrics"); print(c.getresponse().read().decode())
PY
check "  /metrics: numaplace_be_suppress_cpus 3" grep -qx 'numaplace_be_suppress_cpus 3' "$tmp/metrics.txt"
check "  /metrics: budget -300" grep -qx 'numaplace_be_suppress_budget_millicpus -300' "$tmp/metrics.txt"
check "  /metrics: 2 samples" grep -qx 'numaplace_be_suppress_samples_total 2' "$tmp/metrics.txt"
kill -TERM "$dpid"; wait "$dpid"

# Policy cfsQuota: the cpusets stay the whole BE pool; each BE workload's
# cpu.max gets an equal share of the budget (quota per 100000 us period).
conf cfsQuota
rm -f "$tmp/stat"
start
check "restarted with cpuSuppressPolicy cfsQuota" test -S "$sock"
maxof() { cat "$cg/$1/cpu.max" 2>/dev/null; }
waitmax() { for _ in $(seq 50); do [ "$(maxof "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }
usage web 0; usage batch 0
stat 1000 7000
check "  first sample taken" waitlog "first sample of $tmp/stat taken"
usage web 55000000; usage batch 5000000
stat 7000 9000
check "  busy LS: batch's cpu.max is the floor, 2 CPUs: 200000 100000" waitmax batch "200000 100000"
check "  batch keeps the whole BE pool" test "$(eff batch)" = 2-3,6-7
admit batch2 '{"name":"batch2","qos":"BE","containers":[{"name":"m"}]}'
check "  a second BE workload: the quota split, 100000 each" waitmax batch2 "100000 100000"
check "  and batch follows" waitmax batch "100000 100000"
usage web 60000000; usage batch 7000000; usage batch2 0
stat 7800 16200
check "  idle: grows by 1 CPU of quota a period (300000: 150000 each)" waitmax batch "150000 100000"
kill -TERM "$dpid"; wait "$dpid"
check "  daemon stops cleanly (exit $?)" test $? -eq 0

# Refused at once: a bad be_suppress key.
python3 - "$tmp/np.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["be_suppress"]["cpuSuppressPolicy"] = "CPUSet"
json.dump(c, open(sys.argv[1], "w"))
PY
out=$("$build/numaplaced" --check-config -c "$tmp/np.json" 2>&1)
check "a bad cpuSuppressPolicy is refused, named ($out)" \
	grep -q 'config.be_suppress.cpuSuppressPolicy: "CPUSet"' <<<"$out"
echo "suppress-host: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
