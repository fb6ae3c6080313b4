#!/usr/bin/env bash
# Host-level daemon test, no root cgroup v2 needed: numaplaced on a fake
# cgroup tree (the test-only fake_cgroup_root mode), driven through spec
# files and the CLI over the control socket, under valgrind (errors and
# definite leaks fail the test). Prints "daemon-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-daemon-XXXXXX)
trap 'kill "$dpid" 2>/dev/null; [ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$(dirname "$0")/host-lib.sh"
cg=$tmp/cg
setup "$tmp"
valgrind_cmd
"${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" 2>"$tmp/log" &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/np.sock" ] && break; sleep 0.1; done
check "control socket up" test -S "$tmp/np.sock"

eff() { cat "$cg/numaplace.slice/$1/cpuset.cpus" 2>/dev/null; }
waitfor() { for _ in $(seq 50); do [ "$(eff "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }

# placement files: RUN_DIR/workloads/NAME.json (run_dir defaults to the
# socket's directory, here $tmp); pf NAME KEY prints one field
pf() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(str(v).lower() if isinstance(v,bool) else v)' "$tmp/workloads/$1.json" "$2" 2>/dev/null; }
pfwait() { for _ in $(seq 50); do [ "$(pf "$1" cpuset)" = "$2" ] && return 0; sleep 0.1; done; return 1; }
printf '{"name":"web","qos":"LS","containers":[{"name":"m","cpu":"1"}]}' >"$tmp/specs/web.json"
check "spec file admitted: shared web on the whole machine" waitfor web 0-7
check "web's placement file: cpuset 0-7 ($(pf web cpuset))" pfwait web 0-7
check "web's placement file: qos LS, not exclusive" \
	test "$(pf web qos) $(pf web exclusive)" = "LS false"
printf '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}' >"$tmp/db.json"
out=$("$build/numaplace" admit -f "$tmp/db.json" --socket "$tmp/np.sock")
check "CLI admit: db gets one whole core" test "$out" != "${out#admitted db: cpuset 1,5}"
check "shared web lost db's CPUs" waitfor web 0,2-4,6-7
# the same request again (a client retrying): its allocation, nothing saved
# what is saved: state.json and its journal, byte for byte
# the state as numaplaced loads it (state.json with the journal replayed)
statedoc() { "$build/numaplace" state "$tmp/state"; }
before=$(saved)
out=$("$build/numaplace" admit -f "$tmp/db.json" --socket "$tmp/np.sock")
check "CLI admit of db again: its allocation, said ($(tail -1 <<<"$out"))" \
	grep -q '^(admitted already with this request: nothing changed)$' <<<"$out"
check "  the answer names db's CPUs" test "$out" != "${out#admitted db: cpuset 1,5}"
check "  nothing saved" test "$(saved)" = "$before"
printf '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"4"}]}' >"$tmp/db4.json"
"$build/numaplace" admit -f "$tmp/db4.json" --socket "$tmp/np.sock" >"$tmp/db4.out" 2>&1
check "db with another request: refused (exit $?)" grep -q 'workload "db" is already admitted' "$tmp/db4.out"
check "db's placement file: cpuset 1,5 ($(pf db cpuset))" pfwait db 1,5
check "db's placement file: exclusive, mems $(pf db mems), cgroup $(pf db cgroup)" \
	test "$(pf db exclusive) $(pf db cgroup)" = "true db"
check "web's placement file follows its pool ($(pf web cpuset))" pfwait web 0,2-4,6-7
check "no temporary file is left in $tmp/workloads" \
	test "$(ls "$tmp/workloads")" = "$(printf 'db.json\nweb.json')"
# In-place resize through the CLI: the kept CPU never leaves; a resize
# that cannot be met (restricted: db's node 0 has no free CPU left) changes
# nothing and says why.
"$build/numaplace" resize db --cpus 4 --socket "$tmp/np.sock" >"$tmp/rs.out" 2>"$tmp/rs.err"
check "resize db to 4: refused with exit 1 ($?)" grep -q 'db not resized, it keeps cpuset 1,5: topology affinity error' "$tmp/rs.err"
check "  db keeps 1,5" test "$(eff db)" = 1,5
out=$("$build/numaplace" resize db --cpus 1 --socket "$tmp/np.sock")
check "resize db to 1: $out" test "$out" = "resized db: cpuset 1,5 -> 1"
check "  db narrows to 1" waitfor db 1
check "  web widens to 0,2-7" waitfor web 0,2-7
check "  db's placement file says 1 ($(pf db cpuset))" pfwait db 1
out=$("$build/numaplace" resize db --cpus 2 --socket "$tmp/np.sock")
check "resize db back to 2: $out" test "$out" = "resized db: cpuset 1 -> 1,5"
check "  db widens to 1,5" waitfor db 1,5
check "  web yields 5" waitfor web 0,2-4,6-7
check "  db's placement file follows (1,5)" pfwait db 1,5
printf '{"name":"bad","qos":"LSE","containers":[{"name":"m","cpu":"2","gpus":1}]}' >"$tmp/bad.json"
"$build/numaplace" admit -f "$tmp/bad.json" --socket "$tmp/np.sock" 2>"$tmp/bad.err"
check "bad spec refused with exit 2" test $? -eq 2
check "bad spec error names the field" grep -q 'spec.containers\[0\].gpus: unknown field' "$tmp/bad.err"
printf '{"name":"big","qos":"LSE","containers":[{"name":"m","cpu":"6"}]}' >"$tmp/big.json"
"$build/numaplace" admit -f "$tmp/big.json" --socket "$tmp/np.sock" >"$tmp/big.out"
check "unsatisfiable request rejected with exit 1" test $? -eq 1
check "  the answer names the kubelet's kind ($(cat "$tmp/big.out"))" \
	grep -q '(resource cpu, TopologyAffinityError)$' "$tmp/big.out"
st=$("$build/numaplace" status --json --socket "$tmp/np.sock")
check "status counts the rejection" grep -q '"rejected": 1' <<<"$st"
check "  and lists it with its error_kind" python3 -c '
import json, sys
r = json.loads(sys.argv[1])["rejections"][-1]
sys.exit(not (r["workload"] == "big" and r["error_kind"] == "TopologyAffinityError"))' "$st"
"$build/numaplace" status --socket "$tmp/np.sock" >"$tmp/status.txt"
check "status map marks db's CPUs" grep -q '1:A' "$tmp/status.txt"
# idle: cycles skip the managed cgroups (nothing changed since the last
# one that went through them); a hand write is still repaired at once
qc() { "$build/numaplace" status --json --socket "$tmp/np.sock" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["quiet_cycles"])'; }
q0=$(qc); sleep 1.2; q1=$(qc)
check "idle: cycles skip the managed cgroups (quiet_cycles $q0 -> $q1)" test "$q1" -gt "$q0"
echo 4-7 >"$cg/numaplace.slice/db/cpuset.cpus"
check "drift repaired" waitfor db 1,5
"$build/numaplace" release db --socket "$tmp/np.sock" >/dev/null
check "CLI release: web widens back" waitfor web 0-7
check "db's placement file is removed on release" test ! -e "$tmp/workloads/db.json"
check "web's placement file widens back ($(pf web cpuset))" pfwait web 0-7
# a fake tree's directories hold plain files, so rmdir fails as it would
# for a real cgroup with tasks: the cgroup must then sit on the shared pool
check "released, busy cgroup moved to the shared pool" waitfor db 0-7
# init containers (the kubelet's cpusToReuse): the app container reuses the
# init container's CPUs, so the pod costs 2 CPUs, not 4; its own cgroups
# (one per container) hold their sets, and the state keeps both
printf '{"name":"pod","qos":"Guaranteed","init_containers":[{"name":"i","cgroup":"i","cpu":"2"}],"containers":[{"name":"m","cgroup":"m","cpu":"2"}]}' >"$tmp/pod.json"
out=$("$build/numaplace" admit -f "$tmp/pod.json" --socket "$tmp/np.sock" 2>&1)
check "pod with an init container admitted on 2 CPUs ($(head -1 <<<"$out"))" \
	test "$out" != "${out#admitted pod: cpuset 1,5}"
check "  the pod's and the app container's cgroups hold 1,5" \
	sh -c "for _ in \$(seq 50); do [ \"\$(cat '$cg/numaplace.slice/pod/cpuset.cpus' 2>/dev/null) \$(cat '$cg/numaplace.slice/pod/m/cpuset.cpus' 2>/dev/null)\" = '1,5 1,5' ] && exit 0; sleep 0.1; done; exit 1"
check "  the init container's cgroup gets no set of its own (it runs on the pod's)" \
	test ! -s "$cg/numaplace.slice/pod/i/cpuset.cpus"
check "  the shared web loses only those 2 CPUs" waitfor web 0,2-4,6-7
check "  the state keeps the init container" \
	sh -c "\"$build/numaplace\" state \"$tmp/state\" | grep -q init_containers"
"$build/numaplace" release pod --socket "$tmp/np.sock" >/dev/null
check "  released: web widens back" waitfor web 0-7
# pod-level resources: 4 CPUs for the pod, a takes 2 of its own, s and t
# (no request) share the other 2 in their own cgroups
printf '{"name":"pod2","qos":"Guaranteed","resources":{"cpu":"4"},"containers":[{"name":"a","cgroup":"a","cpu":"2"},{"name":"s","cgroup":"s"},{"name":"t","cgroup":"t"}]}' >"$tmp/pod2.json"
out=$("$build/numaplace" admit -f "$tmp/pod2.json" --socket "$tmp/np.sock" 2>&1)
check "pod with pod-level resources admitted on 4 CPUs ($(head -1 <<<"$out"))" \
	test "$out" != "${out#admitted pod2: cpuset 2-3,6-7}"
pod2sets() { for f in "" /a /s /t; do printf '%s ' "$(cat "$cg/numaplace.slice/pod2$f/cpuset.cpus" 2>/dev/null)"; done; }
pod2wait() { for _ in $(seq 50); do [ "$(pod2sets)" = '2-3,6-7 2,6 3,7 3,7 ' ] && return 0; sleep 0.1; done; return 1; }
check "  a holds 2,6; s and t share 3,7; the pod's cgroup 2-3,6-7 ($(pod2sets))" pod2wait
check "  the shared web loses the pod's 4 CPUs" waitfor web 0-1,4-5
"$build/numaplace" release pod2 --socket "$tmp/np.sock" >/dev/null
check "  released: web widens back" waitfor web 0-7
# every container with its own request, the budget larger: the pod keeps
# the whole budget (the kubelet's TestStaticPolicyAllocatePod), the rest
# in the pod's cgroup only
printf '{"name":"pod3","qos":"Guaranteed","resources":{"cpu":"4"},"containers":[{"name":"a","cgroup":"a","cpu":"2"}]}' >"$tmp/pod3.json"
out=$("$build/numaplace" admit -f "$tmp/pod3.json" --socket "$tmp/np.sock" 2>&1)
check "pod with a budget above its container's request admitted on 4 CPUs ($(head -1 <<<"$out"))" \
	test "$out" != "${out#admitted pod3: cpuset 2-3,6-7}"
pod3sets() { for f in "" /a; do printf '%s ' "$(cat "$cg/numaplace.slice/pod3$f/cpuset.cpus" 2>/dev/null)"; done; }
pod3wait() { for _ in $(seq 50); do [ "$(pod3sets)" = '2-3,6-7 2,6 ' ] && return 0; sleep 0.1; done; return 1; }
check "  a holds 2,6; the pod's cgroup 2-3,6-7 ($(pod3sets))" pod3wait
check "  the shared web loses the pod's 4 CPUs" waitfor web 0-1,4-5
"$build/numaplace" release pod3 --socket "$tmp/np.sock" >/dev/null
check "  released: web widens back" waitfor web 0-7
# own requests take the whole budget while s has none: the kubelet's kind
printf '{"name":"pod4","qos":"Guaranteed","resources":{"cpu":"2"},"containers":[{"name":"a","cgroup":"a","cpu":"2"},{"name":"s","cgroup":"s"}]}' >"$tmp/pod4.json"
out=$("$build/numaplace" admit -f "$tmp/pod4.json" --socket "$tmp/np.sock" 2>&1)
check "pod whose shared pool would be empty: rejected, EmptyPodSharedPoolError ($(head -1 <<<"$out"))" \
	grep -q '(resource cpu, EmptyPodSharedPoolError)$' <<<"$out"
check "  status --json lists the rejection with its error_kind" \
	sh -c "'$build/numaplace' status --json --socket '$tmp/np.sock' | tr -d ' \n' | grep -q '\"error_kind\":\"EmptyPodSharedPoolError\"'"
kill -TERM "$dpid"
wait "$dpid"
check "daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
check "state file written" test -s "$tmp/state/state.json"

# Restart after a kill that fell between the state save and the creation of
# a cgroup (write-ahead): the failpoint makes numaplaced exit right there,
# while it admits api. The state lists api as pending: the restarted daemon
# creates its cgroup on the CPUs saved for it. web's cgroup is removed by
# hand while the daemon is down: web is released and its spec retired.
# Failpoints exist only in the test build (basic/failpoint.h).
check "numaplaced (release build) has no failpoints" \
	sh -c "! grep -q NUMAPLACED_FAILPOINT '$build/numaplaced'"
check "numaplaced-failpoints (test build) has them" \
	grep -q NUMAPLACED_FAILPOINT "$build/numaplaced-failpoints"
NUMAPLACED_FAILPOINT=admit-saved "$build/numaplaced-failpoints" -c "$tmp/np.json" 2>>"$tmp/log" &
dpid=$!
for _ in $(seq 100); do [ -S "$tmp/np.sock" ] && break; sleep 0.1; done
printf '{"name":"api","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}' >"$tmp/api.json"
"$build/numaplace" admit -f "$tmp/api.json" --socket "$tmp/np.sock" >/dev/null 2>&1
wait "$dpid"
check "failpoint: numaplaced exited after saving api (exit $?)" test $? -eq 86
check "api is in the saved state" sh -c "'$build/numaplace' state '$tmp/state' | grep -q '\"name\": \"api\"'"
check "api's cgroup was not created" test ! -e "$cg/numaplace.slice/api"
check "the state lists api as pending" \
	sh -c "'$build/numaplace' state '$tmp/state' | tr -d ' \n' | grep -q '\"pending\":\[\"api\"\]'"
# api's entry in the saved state (one line per workload)
api=$(statedoc | tr -d ' \n' | sed 's/{"class"/\n&/g' | grep '"name":"api"')
rm -rf "$cg/numaplace.slice/web"
# a placement file of a workload the state does not know (released while
# the daemon was down) goes at the start; a file of someone else stays
echo '{}' >"$tmp/workloads/ghost.json"
echo keep >"$tmp/workloads/README"
"${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" 2>>"$tmp/log" &
dpid=$!
apicpus() { cat "$cg/numaplace.slice/api/cpuset.cpus" 2>/dev/null; }
for _ in $(seq 100); do [ -n "$(apicpus)" ] && break; sleep 0.1; done
check "pending api: its cgroup is created at restart ($(apicpus))" test -n "$(apicpus)"
check "api was not released as 'cgroup removed'" sh -c "! grep -q 'released api' '$tmp/log'"
saved_has() { grep -q "\"cpus\":\"$1\"" <<<"$api"; }
check "api's cgroup got the CPUs saved for it ($(apicpus))" saved_has "$(apicpus)"
check "web, whose cgroup was removed while down, is released" \
	grep -q 'released web.*cgroup removed' "$tmp/log"
sleep 0.5
check "web's cgroup is not created again (its spec file is retired)" \
	test ! -e "$cg/numaplace.slice/web"
check "the state lists nothing as pending" \
	sh -c "'$build/numaplace' state '$tmp/state' | tr -d ' \n' | grep -q '\"pending\":\[\]'"
check "restart: the stale ghost.json is removed, README kept" \
	test ! -e "$tmp/workloads/ghost.json" -a -e "$tmp/workloads/README"
check "restart: api's placement file says what its cgroup has ($(pf api cpuset))" \
	test "$(pf api cpuset)" = "$(apicpus)"
check "restart: web (released while down) has no placement file" \
	test ! -e "$tmp/workloads/web.json"
# a cgroup removed by hand while the cycles are quiet: seen (inotify),
# released within a cycle or two
q0=$(qc); sleep 1.2; q1=$(qc)
check "restarted and idle: quiet cycles ($q0 -> $q1)" test "$q1" -gt "$q0"
rm -rf "$cg/numaplace.slice/api"
for _ in $(seq 30); do grep -q 'released api.*cgroup removed' "$tmp/log" && break; sleep 0.1; done
check "  api's cgroup removed by hand: released" \
	grep -q 'released api.*cgroup removed' "$tmp/log"
kill -TERM "$dpid"
wait "$dpid"
check "restarted daemon stops cleanly under valgrind (exit $?)" test $? -eq 0

# Many spec files (more than any fixed-size table): each is admitted once,
# and none is released as "removed" while its file is there.
many=$tmp/many
setup "$many"
for i in $(seq 300); do
	printf '{"name":"w%d","qos":"LS","containers":[{"name":"m","cpu":"100m"}]}' "$i" >"$many/specs/w$i.json"
done
"$build/numaplaced" -c "$many/np.json" 2>"$many/log" &
dpid=$!
# (admitted in directory order, 200 ms of admissions per cycle, each
# saved: on a loaded machine all 300 take a few seconds)
for _ in $(seq 300); do [ "$(grep -c 'admitted' "$many/log")" -ge 300 ] && break; sleep 0.1; done
check "300 spec files: all cgroups are there" \
	test "$(find "$many/cg/numaplace.slice" -mindepth 1 -maxdepth 1 -type d | wc -l)" = 300
sleep 1 # a few more cycles
nrel=$(grep -c 'released' "$many/log")
rm "$many/specs/w7.json"
for _ in $(seq 50); do grep -q 'released w7 (spec file removed)' "$many/log" && break; sleep 0.1; done
check "300 spec files: the removed w7 is released" grep -q 'released w7 (spec file removed)' "$many/log"
kill -TERM "$dpid"
wait "$dpid"
check "300 spec files: only w7 released" \
	test "$(grep -c 'released w[0-9]* (' "$many/log")" = 1
check "300 spec files: 300 admitted ($(grep -c 'admitted' "$many/log")), none released while present ($nrel)" \
	test "$(grep -c 'admitted' "$many/log")" = 300 -a "$nrel" = 0
# A topology file the configuration names that is missing or not valid is
# a configuration error: exit 2 (RestartPreventExitStatus=2 of the unit),
# not 1 (systemd would restart it again and again); the same source given
# to the CLI is bad input (2) too.
bt=$tmp/badtopo
setup "$bt"
python3 - "$bt/np.json" "$bt/none.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["topology"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"))
PY
"$build/numaplaced" -c "$bt/np.json" --once 2>"$bt/log"
check "numaplaced: a missing topology file exits 2 ($?)" test $? -eq 2
check "numaplaced: the message names the file" grep -q "$bt/none.json" "$bt/log"
echo '{bad' >"$bt/none.json"
"$build/numaplaced" -c "$bt/np.json" --once 2>"$bt/log"
check "numaplaced: an invalid topology file exits 2 ($?)" test $? -eq 2
"$build/numaplace" topology --topology "$bt/none.json" >/dev/null 2>&1
check "numaplace topology: an invalid source exits 2 ($?)" test $? -eq 2
"$build/numaplace" topology --topology "$bt/missing.json" >/dev/null 2>&1
check "numaplace topology: a missing source exits 2 ($?)" test $? -eq 2

# SIGHUP: what needs a restart is refused as a whole and said; what can
# change is reloaded.
rl=$tmp/reload
setup "$rl"
"$build/numaplaced" -c "$rl/np.json" 2>"$rl/log" &
dpid=$!
for _ in $(seq 100); do [ -S "$rl/np.sock" ] && break; sleep 0.1; done
python3 - "$rl/np.json" "$rl/specs2" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["spec_dir"] = sys.argv[2]
json.dump(c, open(sys.argv[1], "w"))
PY
kill -HUP "$dpid"
for _ in $(seq 50); do grep -q 'reload:' "$rl/log" && break; sleep 0.1; done
check "SIGHUP: a new spec_dir needs a restart, said" grep -q 'reload: .*spec_dir.*need a restart' "$rl/log"
check "SIGHUP: not reported as reloaded" sh -c "! grep -q 'configuration reloaded' '$rl/log'"
python3 - "$rl/np.json" "$rl/specs" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["spec_dir"] = sys.argv[2]; c["reconcile_period_s"] = 0.5
json.dump(c, open(sys.argv[1], "w"))
PY
kill -HUP "$dpid"
for _ in $(seq 50); do grep -q 'configuration reloaded' "$rl/log" && break; sleep 0.1; done
check "SIGHUP: a new reconcile period is reloaded" grep -q 'configuration reloaded' "$rl/log"
kill -TERM "$dpid"
wait "$dpid"

# Drift seen as it happens (inotify on the managed cpuset files): with a
# 60 s period only the write's own event can bring the repair; then the
# daemon is quiet (its repair's event costs one cycle, not a chain).
ev=$tmp/ev
setup "$ev"
sed -i 's/"reconcile_period_s": 0.2/"reconcile_period_s": 60/' "$ev/np.json"
"$build/numaplaced" -c "$ev/np.json" 2>"$ev/log" &
dpid=$!
for _ in $(seq 100); do [ -S "$ev/np.sock" ] && break; sleep 0.1; done
printf '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}' |
	"$build/numaplace" admit -f - --socket "$ev/np.sock" >/dev/null
evcycles() { "$build/numaplace" status --json --socket "$ev/np.sock" | sed -n 's/^ *"cycles": \([0-9]*\),*$/\1/p'; }
printf '4-7\n' | dd of="$ev/cg/numaplace.slice/db/cpuset.cpus" conv=notrunc status=none
evcpus() { cat "$ev/cg/numaplace.slice/db/cpuset.cpus"; }
for _ in $(seq 50); do [ "$(evcpus)" = 1,5 ] && break; sleep 0.1; done
check "period 60 s: a hand write is repaired at once, by its inotify event ($(evcpus))" \
	test "$(evcpus)" = 1,5
sleep 1
c1=$(evcycles)
sleep 2
check "then quiet: no cycle in 2 s ($c1 -> $(evcycles))" test "$(evcycles)" = "$c1"
# "wait": "durable": answered once saved; with a 60 s period only the
# cycle the daemon runs right after its answer writes the cgroup.
wcpus=$(printf '{"name":"web","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}' |
	"$build/numaplace" admit -f - --wait durable --json --socket "$ev/np.sock" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["cpuset"])')
webcpus() { cat "$ev/cg/numaplace.slice/web/cpuset.cpus" 2>/dev/null; }
for _ in $(seq 30); do [ -n "$wcpus" ] && [ "$(webcpus)" = "$wcpus" ] && break; sleep 0.1; done
check "wait durable: admitted ($wcpus), and the cycle after the answer wrote web's cgroup ($(webcpus))" \
	test -n "$wcpus" -a "$(webcpus)" = "$wcpus"
check "wait durable: the saved state has web" sh -c "cat '$ev/state/state.json' '$ev/state/journal' 2>/dev/null | grep -q '\"web\"'"
"$build/numaplace" release --wait durable --socket "$ev/np.sock" web >/dev/null
# a fake tree's cgroup cannot be removed (plain files in it): the cycle
# right after the answer moves it to the shared pool
for _ in $(seq 30); do [ "$(webcpus)" != "$wcpus" ] && break; sleep 0.1; done
check "wait durable: a release is in force right after the answer (web $wcpus -> $(webcpus))" \
	test -n "$(webcpus)" -a "$(webcpus)" != "$wcpus"
kill -TERM "$dpid"
wait "$dpid"

echo "daemon-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "daemon $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ] || { cat "$tmp/log"; exit 1; }
