#!/bin/sh
# The narrated demo (make demo): a 2-socket, 2-NUMA-node VM with SMT, a real
# cgroup v2 tree, numaplaced owning the cpusets.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

say() { printf '\n=== %s\n' "$*"; }
CGP=$CG/numaplace.slice
ETC=/tmp/np
mkdir -p $ETC/specs
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "restricted"},
 "reconcile_period_s": 1, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "/run/numaplace.sock"}
JSON
status() {
	if numaplace status --socket /run/numaplace.sock 2>/dev/null; then :; else
		for c in "$CGP"/*/; do
			[ -f "$c/cpuset.cpus.effective" ] &&
				echo "  $(basename "$c"): cpus $(cat "$c/cpuset.cpus.effective") mems $(cat "$c/cpuset.mems.effective")"
		done
	fi
}
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }

say "The machine (hwloc, as numaplace sees it)"
numaplace topology

say "Start numaplaced: static CPU policy, CPUs 0-1 reserved, restricted topology policy"
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
on_exit "kill $DPID 2>/dev/null; sed -n 1,40p $ETC/log"
wait_for 10 test -S /run/numaplace.sock

say "Admit: a shared web tier (LS), a latency-critical cache (LSE, 2 CPUs), a database (Guaranteed, 2 CPUs)"
printf '{"name":"web","qos":"LS","containers":[{"name":"nginx","cpu":"1"}]}' >$ETC/specs/web.json
wait_for 10 is_eff web 0-7
printf '{"name":"cache","qos":"LSE","containers":[{"name":"redis","cpu":"2","memory":"128Mi"}]}' >$ETC/specs/cache.json
wait_for 10 is_eff cache 2-3
printf '{"name":"db","qos":"Guaranteed","containers":[{"name":"pg","cpu":"2","memory":"256Mi"}]}' >$ETC/specs/db.json
wait_for 10 is_eff db 4-5
wait_for 10 is_eff web 0-1,6-7
status

say "Why these CPUs? numaplace explain cache"
numaplace explain cache --socket /run/numaplace.sock

say "A process in the cache cgroup runs only on its CPUs and memory node"
P=$(spawn_sleeper)
cg_move "$P" numaplace.slice/cache
grep -E 'Cpus_allowed_list|Mems_allowed_list' /proc/"$P"/status

say "Ask for 4 more exclusive CPUs: no NUMA node has them free, restricted says no"
printf '{"name":"batch","qos":"LSE","containers":[{"name":"job","cpu":"4"}]}' >$ETC/specs/batch.json
sleep 2
grep "rejected batch" $ETC/log | tail -1
# withdrawn: it would take node 1 as soon as the database leaves
rm $ETC/specs/batch.json

say "Drift: someone writes cache's cpuset.cpus by hand"
echo 0-7 >"$CGP/cache/cpuset.cpus"
echo "  cache is now $(eff cache)"
wait_for 10 is_eff cache 2-3
echo "  ...and numaplaced restored it within one period: $(eff cache)"
grep "drift in cache" $ETC/log | tail -1

say "What Prometheus sees: GET http://127.0.0.1:9464/metrics (an excerpt)"
wget -q -O - http://127.0.0.1:9464/metrics |
	grep -E '^numaplace_(cpus\{pool="(reserved|exclusive)"|workloads|admissions_total|rejections_total|drift_repairs_total|admission_duration_seconds_count)'

say "Release the database: its CPUs return to the shared pool"
rm $ETC/specs/db.json
wait_for 10 is_eff web 0-1,4-7
status
kill "$P"
pass "demo finished"
