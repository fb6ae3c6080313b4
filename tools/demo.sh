#!/usr/bin/env bash
# make demo: the planner on sample topologies, then numaplaced on a real
# cgroup v2 tree in a 2-NUMA-node qemu VM (tests/vm/demo/50-demo.sh).
set -euo pipefail
build=${1:-build}
bin=$build/numaplace
topo=tests/data/topology/vm-2node.json

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Planner: admissions on the VM's topology (2 sockets x 2 cores x 2 threads, 2 GPUs)"
"$bin" plan --compact <tests/data/plan/admit.json |
	python3 -c '
import json, sys
cases = json.load(open("tests/data/plan/admit.json"))
for c, r in zip(cases, json.load(sys.stdin)):
    w = c["workload"]
    req = ", ".join(f"{k}={v}" for k, v in w["containers"][0].items() if k != "name")
    pol = c["policy"].get("topology_policy", "none")
    if r.get("admitted"):
        out = "admitted: cpuset %s mems %s" % (r["cpuset"], r["mems"])
    else:
        out = "rejected (%s): %s" % (r.get("resource"), r.get("reason", r.get("error")))
    print("- %s\n    %s %s [%s] -> %s" % (c["id"], w["qos"], req, pol, out))
'

say "Every upstream vector, through the CLI"
"$bin" plan --check <tests/data/vectors/take.json
"$bin" plan --check <tests/data/vectors/merge.json

say "numaplaced in a VM (qemu, Debian 6.1 kernel, cgroup v2)"
tests/vm/run.sh --topology 2node --scenarios tests/vm/demo \
	--bin "$build/numaplace" --bin "$build/numaplaced"
