#!/usr/bin/env bash
# The narrated demo: topology, then admissions planned on the VM's topology
# (2 sockets x 2 cores x 2 threads, 2 NUMA nodes, 2 GPUs).
set -euo pipefail
bin=${1:-build}/numaplace
topo=tests/data/topology/vm-2node.json

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "This machine, as hwloc sees it"
"$bin" topology || true

say "The topology we plan on: $topo"
"$bin" topology --topology "$topo"

say "Admissions under static + restricted (reserved CPUs 0,4)"
"$bin" plan --compact < tests/data/plan/admit.json |
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
    print(f"- {c[\"id\"]}\n    {w[\"qos\"]} {req} [{pol}] -> {out}")
'

say "Every upstream vector, through the CLI"
"$bin" plan --check < tests/data/vectors/take.json
"$bin" plan --check < tests/data/vectors/merge.json
