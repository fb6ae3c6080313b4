#!/usr/bin/env bash
# Host-level daemon test, no root cgroup v2 needed: numaplaced on a fake
# cgroup tree (the test-only fake_cgroup_root mode), driven through spec
# files and the CLI over the control socket, under valgrind (errors and
# definite leaks fail the test). Prints "daemon-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-daemon-XXXXXX)
trap 'kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

cg=$tmp/cg
mkdir -p "$cg" "$tmp/specs"
printf 'cpuset cpu memory\n' >"$cg/cgroup.controllers"
: >"$cg/cgroup.subtree_control"
: >"$cg/cgroup.procs"
echo 0-7 >"$cg/cpuset.cpus.effective"
echo 0-1 >"$cg/cpuset.mems.effective"
cat >"$tmp/np.json" <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0,4",
                 "topology_policy": "restricted"},
 "topology": "$PWD/tests/data/topology/vm-2node.json",
 "reconcile_period_s": 0.2, "cgroup_root": "$cg", "fake_cgroup_root": true,
 "spec_dir": "$tmp/specs", "state_dir": "$tmp/state", "socket": "$tmp/np.sock"}
JSON
VG=()
command -v valgrind >/dev/null && VG=(valgrind -q --leak-check=full
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99)
"${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" 2>"$tmp/log" &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/np.sock" ] && break; sleep 0.1; done
check "control socket up" test -S "$tmp/np.sock"

eff() { cat "$cg/numaplace.slice/$1/cpuset.cpus" 2>/dev/null; }
waitfor() { for _ in $(seq 50); do [ "$(eff "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }

printf '{"name":"web","qos":"LS","containers":[{"name":"m","cpu":"1"}]}' >"$tmp/specs/web.json"
check "spec file admitted: shared web on the whole machine" waitfor web 0-7
printf '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}' >"$tmp/db.json"
out=$("$build/numaplace" admit -f "$tmp/db.json" --socket "$tmp/np.sock")
check "CLI admit: db gets one whole core" test "$out" != "${out#admitted db: cpuset 1,5}"
check "shared web lost db's CPUs" waitfor web 0,2-4,6-7
printf '{"name":"bad","qos":"LSE","containers":[{"name":"m","cpu":"2","gpus":1}]}' >"$tmp/bad.json"
"$build/numaplace" admit -f "$tmp/bad.json" --socket "$tmp/np.sock" 2>"$tmp/bad.err"
check "bad spec refused with exit 2" test $? -eq 2
check "bad spec error names the field" grep -q 'spec.containers\[0\].gpus: unknown field' "$tmp/bad.err"
printf '{"name":"big","qos":"LSE","containers":[{"name":"m","cpu":"6"}]}' >"$tmp/big.json"
"$build/numaplace" admit -f "$tmp/big.json" --socket "$tmp/np.sock" >"$tmp/big.out"
check "unsatisfiable request rejected with exit 1" test $? -eq 1
st=$("$build/numaplace" status --json --socket "$tmp/np.sock")
check "status counts the rejection" grep -q '"rejected": 1' <<<"$st"
"$build/numaplace" status --socket "$tmp/np.sock" >"$tmp/status.txt"
check "status map marks db's CPUs" grep -q '1:A' "$tmp/status.txt"
echo 4-7 >"$cg/numaplace.slice/db/cpuset.cpus"
check "drift repaired" waitfor db 1,5
"$build/numaplace" release db --socket "$tmp/np.sock" >/dev/null
check "CLI release: web widens back" waitfor web 0-7
# a fake tree's directories hold plain files, so rmdir fails as it would
# for a real cgroup with tasks: the cgroup must then sit on the shared pool
check "released, busy cgroup moved to the shared pool" waitfor db 0-7
printf '{"name":"api","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}' >"$tmp/api.json"
out=$("$build/numaplace" admit -f "$tmp/api.json" --socket "$tmp/np.sock")
api=${out#admitted api: cpuset }
api=${api%% *}
check "CLI admit: api gets a whole core ($api)" test "$out" != "${out#admitted api: cpuset }"
check "api's cgroup written" waitfor api "$api"
kill -TERM "$dpid"
wait "$dpid"
check "daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
check "state file written" test -s "$tmp/state/state.json"
check "origins.json: no workload pending" grep -q '"pending": \[\]' "$tmp/state/origins.json"

# Restart after a kill that fell between the state save and the creation
# of a cgroup (write-ahead): origins.json lists api as pending and its
# cgroup does not exist. It is created again on the same CPUs. web's
# cgroup was removed by hand while the daemon was down: web is released.
rm -rf "$cg/numaplace.slice/api" "$cg/numaplace.slice/web"
sed -i 's/"pending": \[\]/"pending": ["api"]/' "$tmp/state/origins.json"
check "origins.json edited to list api as pending" grep -q '"pending": \["api"\]' "$tmp/state/origins.json"
"${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" 2>>"$tmp/log" &
dpid=$!
check "pending api: its cgroup is created again, on the same CPUs" waitfor api "$api"
check "web, whose cgroup was removed while down, is released" \
	grep -q 'released web.*cgroup removed' "$tmp/log"
sleep 0.5
check "web's cgroup is not created again (its spec file is retired)" \
	test ! -e "$cg/numaplace.slice/web"
check "origins.json: api no longer pending" grep -q '"pending": \[\]' "$tmp/state/origins.json"
kill -TERM "$dpid"
wait "$dpid"
check "restarted daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
echo "daemon-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "daemon $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ] || { cat "$tmp/log"; exit 1; }
