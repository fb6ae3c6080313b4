#!/usr/bin/env bash
# numaplaced's /metrics, no root cgroup v2 needed: numaplaced on a fake
# cgroup tree (as in daemon-host.sh), under valgrind, serving metrics on a
# free local port. Checks the scrape against what the daemon wrote to the
# cgroup files, lints it with promtool, has a real Prometheus server (Debian's
# prometheus package) scrape it and answers a PromQL query, then moves the
# endpoint to a Unix socket by a reload and checks a port already taken.
# Prints "metrics-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-metrics-XXXXXX)
dpid= ppid= d2pid= hold=
trap 'for p in $dpid $ppid $d2pid $hold; do kill "$p" 2>/dev/null; done; [ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$(dirname "$0")/host-lib.sh"
setup "$tmp"
cg=$tmp/cg/numaplace.slice
sock=$tmp/np.sock
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
port=$(free_port)
# config: metrics on that port (host-lib's setup turns it off)
set_listen() { python3 - "$1" "$2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["metrics"] = {"listen": sys.argv[2]}
json.dump(c, open(sys.argv[1], "w"))
PY
}
set_listen "$tmp/np.json" "127.0.0.1:$port"
# GET URL [UNIX_SOCKET] -> body on stdout, "HTTP STATUS" on fd 3
get() { python3 - "$@" <<'PY'
import http.client, socket, sys
url, unix = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None
method = "GET"
if url.startswith("POST "):
    method, url = "POST", url[5:]
host, _, path = url.partition("/")
class UnixConn(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(unix)
c = UnixConn("localhost", timeout=10) if unix else http.client.HTTPConnection(host, timeout=10)
c.request(method, "/" + path)
r = c.getresponse()
sys.stdout.write(r.read().decode())
sys.stderr.write("%d %s\n" % (r.status, r.getheader("Content-Type")))
PY
}
valgrind_cmd
"${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" 2>"$tmp/log" &
dpid=$!
for _ in $(seq 150); do [ -S "$sock" ] && break; sleep 0.1; done
check "control socket up" test -S "$sock"
for _ in $(seq 100); do grep -q "metrics: http://127.0.0.1:$port/metrics" "$tmp/log" && break; sleep 0.1; done
check "numaplaced says where the metrics are" grep -q "metrics: http://127.0.0.1:$port/metrics" "$tmp/log"

# three workloads, one rejection for cpu
printf '{"name":"web","qos":"LS","containers":[{"name":"m","cpu":"1"}]}' >"$tmp/web.json"
printf '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}' >"$tmp/db.json"
printf '{"name":"api","qos":"LSR","containers":[{"name":"m","cpu":"2"}]}' >"$tmp/api.json"
printf '{"name":"big","qos":"LSE","containers":[{"name":"m","cpu":"6"}]}' >"$tmp/big.json"
for w in web db api big; do
	"$build/numaplace" admit -f "$tmp/$w.json" --socket "$sock" >/dev/null 2>&1
done
for _ in $(seq 50); do [ -s "$cg/api/cpuset.cpus" ] && break; sleep 0.1; done
get "127.0.0.1:$port/metrics" >"$tmp/scrape" 2>"$tmp/hdr"
cp "$tmp/scrape" "$tmp/scrape-first" # kept with NP_KEEP=1
check "GET /metrics: 200, text format 0.0.4 ($(cat "$tmp/hdr"))" \
	grep -q '^200 text/plain; version=0.0.4' "$tmp/hdr"
promtool check metrics <"$tmp/scrape" >"$tmp/promtool" 2>&1
rc=$?
check "promtool check metrics: clean (exit $rc$(head -c 300 "$tmp/promtool" | tr '\n' ' '))" \
	test "$rc" -eq 0 -a ! -s "$tmp/promtool"
val() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/scrape"; }
check "workloads by QoS: LSE 1, LSR 1, LS 1, BE 0" test \
	"$(val 'numaplace_workloads{qos="LSE"}') $(val 'numaplace_workloads{qos="LSR"}') $(val 'numaplace_workloads{qos="LS"}') $(val 'numaplace_workloads{qos="BE"}')" = "1 1 1 0"
check "admissions: 3 admitted, 1 rejected; the rejection counted under cpu" test \
	"$(val 'numaplace_admissions_total{result="admitted"}') $(val 'numaplace_admissions_total{result="rejected"}') $(val 'numaplace_rejections_total{resource="cpu"}')" = "3 1 1"
check "admission histogram counts the 4 decisions" \
	test "$(val numaplace_admission_duration_seconds_count)" = 4 -a \
	"$(val 'numaplace_admission_duration_seconds_bucket{le="+Inf"}')" = 4
check "reconcile histogram counts cycles" \
	test "$(val numaplace_reconcile_duration_seconds_count)" -ge 1
# exclusive CPUs per node, from the cpusets numaplaced wrote
cpus_of() { python3 -c '
import sys
n = 0
for part in open(sys.argv[1]).read().strip().split(","):
    if part:
        a, _, b = part.partition("-"); n += int(b or a) - int(a) + 1
print(n)' "$1"; }
nexcl=$(( $(cpus_of "$cg/db/cpuset.cpus") + $(cpus_of "$cg/api/cpuset.cpus") ))
mexcl=$(awk '$1 ~ /^numaplace_cpus\{pool="exclusive"/ { s += $2 } END { print s }' "$tmp/scrape")
check "exclusive CPUs: $mexcl in metrics = $nexcl in db's and api's cpuset.cpus" \
	test "$mexcl" = "$nexcl" -a "$nexcl" = 4
per_node_sum=$(awk '$1 ~ /^numaplace_cpus\{pool="(reserved|shared|exclusive)"/ { s += $2 } END { print s }' "$tmp/scrape")
check "reserved + shared + exclusive = 8 online CPUs" test "$per_node_sum" = 8
check "build info" grep -q '^numaplace_build_info{version="[^"]*",bpf_abi="[0-9]*"} 1$' "$tmp/scrape"
get "127.0.0.1:$port/nope" >/dev/null 2>"$tmp/hdr"
check "unknown path: 404" grep -q '^404 ' "$tmp/hdr"
get "POST 127.0.0.1:$port/metrics" >/dev/null 2>"$tmp/hdr"
check "POST: 405" grep -q '^405 ' "$tmp/hdr"

# silent HTTP clients do not stop the loop (nor other scrapes)
python3 - "$port" <<'PY' &
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(8)]
time.sleep(8)
PY
hold=$!
sleep 0.5
t0=$(date +%s%N)
"$build/numaplace" status --json --socket "$sock" >"$tmp/status.json"
t1=$(date +%s%N)
check "status answered in $(( (t1 - t0) / 1000000 )) ms while 8 HTTP clients sit silent" \
	test $(( (t1 - t0) / 1000000 )) -lt 2000
get "127.0.0.1:$port/metrics" >/dev/null 2>"$tmp/hdr"
check "and a scrape is answered meanwhile" grep -q '^200 ' "$tmp/hdr"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["metrics"]; sys.exit(0 if m["serving"] and m["scrapes"] >= 1 else 1)' "$tmp/status.json"
check "status: metrics serving, scrapes counted" test $? -eq 0
kill "$hold" 2>/dev/null; hold=

# a real Prometheus scrapes it; PromQL returns the allocation count
pport=$(free_port)
cat >"$tmp/prom.yml" <<YML
global: {scrape_interval: 1s, evaluation_interval: 1s}
scrape_configs:
- job_name: numaplace
  static_configs: [{targets: ['127.0.0.1:$port']}]
YML
prometheus --config.file="$tmp/prom.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$tmp/prom.log" 2>&1 &
ppid=$!
query() { python3 - "$pport" "$1" <<'PY'
import json, sys, urllib.parse, urllib.request
u = "http://127.0.0.1:%s/api/v1/query?query=%s" % (sys.argv[1], urllib.parse.quote(sys.argv[2]))
try:
    r = json.load(urllib.request.urlopen(u, timeout=5))
    v = r["data"]["result"]
    print(v[0]["value"][1] if v else "")
except Exception as e:
    print("")
PY
}
got=
for _ in $(seq 60); do
	got=$(query 'sum(numaplace_workloads{qos=~"LSE|LSR"})')
	[ -n "$got" ] && break
	sleep 0.5
done
check "Prometheus: sum(numaplace_workloads{qos=~\"LSE|LSR\"}) = 2 exclusive allocations (got '$got')" test "$got" = 2
got=$(query 'sum(numaplace_cpus{pool="exclusive"})')
check "Prometheus: sum(numaplace_cpus{pool=\"exclusive\"}) = 4 (got '$got')" test "$got" = 4
got=$(query 'up{job="numaplace"}')
check "Prometheus: target up (got '$got')" test "$got" = 1
kill "$ppid" 2>/dev/null; wait "$ppid" 2>/dev/null; ppid=

# a release shows at the next scrape
"$build/numaplace" release db --socket "$sock" >/dev/null
get "127.0.0.1:$port/metrics" >"$tmp/scrape" 2>/dev/null
check "after releasing db: LSE 0, releases 1" test \
	"$(val 'numaplace_workloads{qos="LSE"}') $(val numaplace_releases_total)" = "0 1"

# a second daemon on the same port: said, keeps running without metrics
mkdir -p "$tmp/two" && setup "$tmp/two"
set_listen "$tmp/two/np.json" "127.0.0.1:$port"
"$build/numaplaced" -c "$tmp/two/np.json" 2>"$tmp/two/log" &
d2pid=$!
for _ in $(seq 100); do [ -S "$tmp/two/np.sock" ] && break; sleep 0.1; done
check "second daemon: port taken is said, naming metrics.listen" \
	grep -q "metrics.listen 127.0.0.1:$port: cannot listen: Address already in use (not serving metrics" "$tmp/two/log"
"$build/numaplace" status --json --socket "$tmp/two/np.sock" >"$tmp/two/status.json"
check "second daemon: still places (status answers, metrics.error set)" \
	grep -q '"error": "metrics.listen' "$tmp/two/status.json"
kill "$d2pid"; wait "$d2pid" 2>/dev/null; d2pid=

# bad addresses are refused by --check-config, naming the field
for bad in "localhost:9464" "127.0.0.1" "127.0.0.1:99999" "unix:rel/path" "[::1:9464"; do
	set_listen "$tmp/two/np.json" "$bad"
	out=$("$build/numaplaced" -c "$tmp/two/np.json" --check-config 2>&1)
	rc=$?
	check "metrics.listen '$bad' refused (exit $rc): ${out:0:120}" \
		sh -c "test $rc -eq 2 && echo '$out' | grep -q 'config.metrics.listen'"
done

# a Unix path that holds something else than a socket is not replaced;
# a socket left by an earlier run is, through a temporary name
echo keep >"$tmp/two/m.sock"
set_listen "$tmp/two/np.json" "unix:$tmp/two/m.sock"
"$build/numaplaced" -c "$tmp/two/np.json" 2>"$tmp/two/log2" &
d2pid=$!
for _ in $(seq 100); do grep -q "metrics.listen unix" "$tmp/two/log2" && break; sleep 0.1; done
check "a regular file at the metrics path is refused, naming metrics.listen" \
	grep -q "metrics.listen unix:$tmp/two/m.sock: exists and is not a socket" "$tmp/two/log2"
check "and is left as it was" test "$(cat "$tmp/two/m.sock")" = keep
kill "$d2pid"; wait "$d2pid" 2>/dev/null; d2pid=
rm -f "$tmp/two/m.sock"
python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$tmp/two/m.sock"
"$build/numaplaced" -c "$tmp/two/np.json" 2>"$tmp/two/log3" &
d2pid=$!
for _ in $(seq 100); do get "localhost/metrics" "$tmp/two/m.sock" >/dev/null 2>"$tmp/hdr" && grep -q '^200 ' "$tmp/hdr" && break; sleep 0.1; done
check "a stale socket at the metrics path is replaced and served" grep -q '^200 ' "$tmp/hdr"
check "no temporary name is left beside it" sh -c "! ls '$tmp/two/' | grep -q '~\$'"
kill "$d2pid"; wait "$d2pid" 2>/dev/null; d2pid=

# a reload moves it to a Unix socket; the port is closed
set_listen "$tmp/np.json" "unix:$tmp/metrics.sock"
kill -HUP "$dpid"
for _ in $(seq 100); do [ -S "$tmp/metrics.sock" ] && break; sleep 0.1; done
get "localhost/metrics" "$tmp/metrics.sock" >"$tmp/scrape" 2>"$tmp/hdr"
check "after a reload: served on unix:$tmp/metrics.sock" grep -q '^200 ' "$tmp/hdr"
check "and says the workloads" grep -q '^numaplace_workloads{qos="LS"} 1$' "$tmp/scrape"
get "127.0.0.1:$port/metrics" >/dev/null 2>"$tmp/hdr"
check "the old port is closed" sh -c "! grep -q '^200 ' '$tmp/hdr'"
kill -TERM "$dpid"
wait "$dpid"
rc=$?
dpid=
check "numaplaced stops cleanly${VG:+ under valgrind} (exit $rc)" test "$rc" -eq 0
check "the metrics socket is removed" test ! -e "$tmp/metrics.sock"
echo "metrics-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "metrics $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ] || { tail -30 "$tmp/log"; exit 1; }
