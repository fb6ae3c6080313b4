#!/usr/bin/env bash
# numaplace export nrt on the host, the real CLI: offline from test
# topologies (and a state file written by numaplaced), live from a
# numaplaced on a fake cgroup tree (root only; skipped otherwise), and from
# a saved status. The JSON is validated against the v1alpha2 schema
# (tests/data/nrt/), the YAML read back and compared with the JSON; then
# the error cases, their messages and exit codes.
# Prints "export: N passed, N failed".
set -uo pipefail
build=${1:-build}
np=$build/numaplace
schema=tests/data/nrt/noderesourcetopology-v1alpha2.schema.json
tmp=$(mktemp -d /tmp/np-export-XXXXXX)
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; [ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$(dirname "$0")/host-lib.sh"
topo=tests/data/topology

have_yaml=
python3 -c 'import yaml' 2>/dev/null && have_yaml=1

# valid FILE.json: the object against the schema
valid() {
	python3 - "$schema" "$1" <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.validators.validator_for(schema)(schema).validate(json.load(open(sys.argv[2])))
PY
}
# same FILE.yaml FILE.json: the YAML reads back as the JSON
same() {
	python3 - "$1" "$2" <<'PY'
import json, sys, yaml
y = yaml.safe_load(open(sys.argv[1]))
j = json.load(open(sys.argv[2]))
sys.exit(0 if y == j else 1)
PY
}
# py FILE EXPR: a Python expression over the JSON in FILE (as d)
py() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
# fails CODE NEEDLE CMD...: exit code CODE and NEEDLE in stderr
fails() {
	local code=$1 needle=$2; shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	[ "$rc" -eq "$code" ] && grep -qF -- "$needle" "$tmp/err" && [ ! -s "$tmp/out" ] ||
		{ echo "    exit $rc, stderr: $(head -3 "$tmp/err")"; return 1; }
}

# both NAME ARGS...: the YAML and the JSON form of one export; the JSON
# against the schema (NRT only) and the YAML read back
both() {
	local name=$1; shift
	"$np" export nrt "$@" >"$tmp/$name.yaml" 2>"$tmp/$name.err" &&
		"$np" export nrt "$@" --json >"$tmp/$name.json" 2>>"$tmp/$name.err"
	check "$name: export nrt $* (exit 0)" test $? -eq 0
	if [[ " $* " != *" koordinator "* ]]; then
		check "$name: the JSON is a valid v1alpha2 NodeResourceTopology" valid "$tmp/$name.json"
	fi
	if [ -n "$have_yaml" ]; then
		check "$name: the YAML reads back as the JSON" same "$tmp/$name.yaml" "$tmp/$name.json"
	else
		echo "skip $name: no python3 yaml module to read the YAML back"
	fi
}

# ---- offline ----
both k2s --topology $topo/kubelet-2socket.json --node-name worker-1
check "k2s: two zones node-0, node-1 of type Node" py "$tmp/k2s.json" \
	'[z["name"] for z in d["zones"]] == ["node-0","node-1"] and all(z["type"] == "Node" for z in d["zones"])'
check "k2s: costs are the distance matrix (10/21)" py "$tmp/k2s.json" \
	'[[c["value"] for c in z["costs"]] for z in d["zones"]] == [[10,21],[21,10]]'
check "k2s: cpu 8 and 7 (cpu 15 offline), memory 64 GiB on node-0" py "$tmp/k2s.json" \
	'd["zones"][0]["resources"][0] == {"name":"cpu","capacity":"8","allocatable":"8","available":"8"} and d["zones"][1]["resources"][0]["capacity"] == "7" and d["zones"][0]["resources"][1]["capacity"] == str(64<<30)'
check "k2s: hugepages-2Mi and hugepages-1Gi on node-0, the GPU on node-1" py "$tmp/k2s.json" \
	'[r["name"] for r in d["zones"][0]["resources"]] == ["cpu","memory","hugepages-2Mi","hugepages-1Gi"] and d["zones"][1]["resources"][-1]["name"] == "nvidia.com/gpu"'
check "k2s: default policy: none/container, topologyPolicies [None]" py "$tmp/k2s.json" \
	'd["attributes"] == [{"name":"topologyManagerPolicy","value":"none"},{"name":"topologyManagerScope","value":"container"}] and d["topologyPolicies"] == ["None"]'
both hwloc --topology $topo/hwloc-2socket-linux.xml --node-name worker-2
check "hwloc: SLIT costs 10/21 and 1Gi hugepages from the XML" py "$tmp/hwloc.json" \
	'd["zones"][0]["costs"][1]["value"] == 21 and "hugepages-1Gi" in [r["name"] for r in d["zones"][0]["resources"]]'
both koordtopo --topology $topo/koord-cpu-topology.json --node-name worker-3
check "koord-cpu-topology: no distances known, no costs; no memory known, no memory" py "$tmp/koordtopo.json" \
	'all("costs" not in z and [r["name"] for r in z["resources"]] == ["cpu"] for z in d["zones"])'
both kk --topology $topo/kubelet-2socket.json --format koordinator
check "koordinator: the four annotations, each a JSON text" py "$tmp/kk.json" \
	'sorted(d) == sorted("node.koordinator.sh/" + k for k in ["cpu-topology","cpu-shared-pools","be-cpu-shared-pools","pod-cpu-allocs"]) and len(json.loads(d["node.koordinator.sh/cpu-topology"])["detail"]) == 15'
"$np" export nrt --topology $topo/kubelet-2socket.json >"$tmp/host.yaml" 2>/dev/null
check "default metadata.name is the host name, lowercased" \
	grep -qx "  name: $(uname -n | tr 'A-Z' 'a-z')" "$tmp/host.yaml"

# ---- live numaplaced, and its state file offline ----
if [ "$(id -u)" -eq 0 ]; then
	setup "$tmp/d"
	# numaplaced keeps both exports written (config.export)
	python3 - "$tmp/d/np.json" "$tmp/d/out" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["export"] = {"node_name": "w1", "nrt_file": sys.argv[2] + "/nrt.json",
               "koordinator_file": sys.argv[2] + "/koord.json"}
json.dump(c, open(sys.argv[1], "w"))
PY
	mkdir -p "$tmp/d/out"
	"$build/numaplaced" -c "$tmp/d/np.json" 2>"$tmp/d/log" &
	dpid=$!
	for _ in $(seq 100); do [ -S "$tmp/d/np.sock" ] && break; sleep 0.1; done
	check "numaplaced up" test -S "$tmp/d/np.sock"
	for _ in $(seq 50); do [ -s "$tmp/d/out/nrt.json" ] && break; sleep 0.1; done
	check "numaplaced wrote config.export.nrt_file at start" valid "$tmp/d/out/nrt.json"
	check "... with no exclusive allocation yet (node-0 cpu available 2)" py "$tmp/d/out/nrt.json" \
		'd["metadata"]["name"] == "w1" and d["zones"][0]["resources"][0]["available"] == "2"'
	"$np" admit --socket "$tmp/d/np.sock" -f - >/dev/null <<'JSON'
{"name": "web", "cgroup": "kubepods.slice/kubepods-pod0b5f1c6e_8a7b_4c1d_9e2f_3a4b5c6d7e8f.slice",
 "qos": "LSE", "containers": [{"name": "main", "cpu": "2", "memory": "256Mi"}]}
JSON
	check "admitted web (LSE, 2 CPUs)" test $? -eq 0
	both live --socket "$tmp/d/np.sock" --node-name w1
	check "live: restricted/container from numaplaced, RestrictedContainerLevel" py "$tmp/live.json" \
		'd["attributes"][0]["value"] == "restricted" and d["topologyPolicies"] == ["RestrictedContainerLevel"]'
	check "live: node-0 cpu 4, allocatable 2 (0,4 reserved), available 0 (web holds 2)" py "$tmp/live.json" \
		'd["zones"][0]["resources"][0] == {"name":"cpu","capacity":"4","allocatable":"2","available":"0"}'
	check "live: memory available less web's 256 MiB" py "$tmp/live.json" \
		'd["zones"][0]["resources"][1]["available"] == str((1<<30) - (256<<20))'
	for _ in $(seq 50); do py "$tmp/d/out/nrt.json" 'd["zones"][0]["resources"][0]["available"] == "0"' && break; sleep 0.1; done
	check "the export file follows the admission: the same object as live" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
		"$tmp/d/out/nrt.json" "$tmp/live.json"
	both state --topology "$PWD/$topo/vm-2node.json" --state "$tmp/d/state/state.json" --node-name w1
	check "state file offline: the same object as live" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
		"$tmp/state.json" "$tmp/live.json"
	both livek --socket "$tmp/d/np.sock" --format koordinator
	check "koordinator live: pod-cpu-allocs has web with its pod UID" py "$tmp/livek.json" \
		'[(a["name"], a["uid"], a["managedByKubelet"]) for a in json.loads(d["node.koordinator.sh/pod-cpu-allocs"])] == [("web","0b5f1c6e-8a7b-4c1d-9e2f-3a4b5c6d7e8f",False)]'
	check "the koordinator file is the same as live" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1])) != json.load(open(sys.argv[2])))' \
		"$tmp/d/out/koord.json" "$tmp/livek.json"
	"$np" status --socket "$tmp/d/np.sock" --json >"$tmp/status.json"
	both saved --input "$tmp/status.json" --node-name w1
	check "saved status: its node_policy, the CPUs as live (no --config needed)" py "$tmp/saved.json" \
		"[z['resources'][0] for z in d['zones']] == [z['resources'][0] for z in json.load(open('$tmp/live.json'))['zones']] and d['attributes'] == json.load(open('$tmp/live.json'))['attributes']"
	check "saved status: memory available = allocatable (a status has no charges)" py "$tmp/saved.json" \
		'd["zones"][0]["resources"][1]["available"] == d["zones"][0]["resources"][1]["allocatable"]'
	check "status says where the exports are written" py "$tmp/status.json" \
		'd["export"]["nrt_file"]["writes"] >= 2 and "error" not in d["export"]["nrt_file"]'
	"$np" state "$tmp/d/state" >"$tmp/state-web.json" # with web, for a check below
	"$np" release web --socket "$tmp/d/np.sock" >/dev/null
	for _ in $(seq 50); do py "$tmp/d/out/nrt.json" 'd["zones"][0]["resources"][0]["available"] == "2"' && break; sleep 0.1; done
	check "after the release the export file shows node-0's 2 CPUs available again" py "$tmp/d/out/nrt.json" \
		'd["zones"][0]["resources"][0]["available"] == "2"'
	kill -TERM "$dpid"; wait "$dpid"; dpid=
	fails 1 "numaplaced is not running" "$np" export nrt --socket "$tmp/d/np.sock" --node-name w1
	check "no daemon: exit 1, 'numaplaced is not running'" test $? -eq 0
else
	echo "skip live numaplaced and its state file: not root"
fi

# ---- errors ----
k2s=$topo/kubelet-2socket.json
fails 2 '--format: "yaml" is not nrt or koordinator' "$np" export nrt --format yaml --topology $k2s
check "bad --format: exit 2, names the option" test $? -eq 0
fails 2 "unknown object 'crd'" "$np" export crd --topology $k2s
check "unknown object: exit 2" test $? -eq 0
fails 2 "usage: numaplace export nrt" "$np" export
check "no object: exit 2 with the usage" test $? -eq 0
fails 2 '--node-name: "Bad_Name" is not a node name' "$np" export nrt --node-name Bad_Name --topology $k2s
check "bad --node-name: exit 2" test $? -eq 0
fails 2 "$tmp/missing.json" "$np" export nrt --topology "$tmp/missing.json" --node-name n
check "missing topology file: exit 2, names the file" test $? -eq 0
echo '{"cpus": [{"cpu": 0, "core": 0, "socket": 0, "numa": 99}]}' >"$tmp/badtopo.json"
fails 2 "numa" "$np" export nrt --topology "$tmp/badtopo.json" --node-name n
check "bad topology file: exit 2, names the field" test $? -eq 0
fails 2 "--state: reading state file $tmp/missing-state.json" "$np" export nrt --topology $k2s --state "$tmp/missing-state.json" --node-name n
check "missing state file: exit 2, names it" test $? -eq 0
echo '{"format": "numaplace-state", "version": 1, "body": {}, "checksum": "x"}' >"$tmp/bad-state.json"
fails 2 "state file $tmp/bad-state.json is corrupt" "$np" export nrt --topology $k2s --state "$tmp/bad-state.json" --node-name n
check "corrupt state file: exit 2, 'is corrupt'" test $? -eq 0
if [ -s "$tmp/state-web.json" ]; then
	fails 2 "CPU topology changed" "$np" export nrt --topology $k2s --state "$tmp/state-web.json" --node-name n
	check "state file of another topology: exit 2" test $? -eq 0
fi
echo '{"topology": {"cpus": []}}' >"$tmp/bad-status.json"
fails 2 "--input $tmp/bad-status.json: status.topology" "$np" export nrt --input "$tmp/bad-status.json" --node-name n
check "bad saved status: exit 2, names the field" test $? -eq 0
# a container name past NP_NAME_MAX-1 bytes in a saved status is refused
# (names are kept once, on the heap, at most 127 bytes)
if python3 - "$tmp/status.json" "$tmp/longname.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
w = [w for w in d["workloads"] if w.get("containers")][0]
w["containers"][0]["name"] = "a" * 128
json.dump(d, open(sys.argv[2], "w"))
PY
then
	fails 2 "name: empty or longer than 127 bytes" "$np" export nrt --input "$tmp/longname.json" --node-name n
	check "saved status with a 128-byte container name: exit 2, names the field" test $? -eq 0
else
	check "saved status with a 128-byte container name: made" false
fi
echo '{' >"$tmp/notjson.json"
fails 2 "numaplace export: $tmp/notjson.json:" "$np" export nrt --input "$tmp/notjson.json" --node-name n
check "--input not JSON: exit 2" test $? -eq 0
fails 2 "two sources" "$np" export nrt --input "$tmp/status.json" --topology $k2s
check "--input with --topology: exit 2" test $? -eq 0
fails 2 "--config: $tmp/nocfg.json" "$np" export nrt --config "$tmp/nocfg.json" --topology $k2s --node-name n
check "missing --config: exit 2, names the file" test $? -eq 0
fails 2 "unexpected argument 'extra'" "$np" export nrt extra --topology $k2s
check "extra operand: exit 2" test $? -eq 0

echo "export: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "export $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
