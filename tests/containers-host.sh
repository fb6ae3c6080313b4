#!/usr/bin/env bash
# Container workloads ("container": {"id", "cgroup"} in a spec, what
# `numaplace oci-hook` sends) on a fake cgroup tree, no root cgroup v2
# needed: the cgroup is the runtime's, outside the managed parent, named
# from the hierarchy root; numaplaced writes its cpuset but never creates
# or removes it, refuses what it cannot keep exclusive, releases by
# container id (a no-op for an unknown one) and when the runtime removed
# the cgroup, and keeps the workload across a restart. Under valgrind.
# Prints "containers-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-containers-XXXXXX)
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; [ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$(dirname "$0")/host-lib.sh"
cg=$tmp/cg
sock=$tmp/np.sock
setup "$tmp"
# host.slice is confined to the shared pool (as system.slice is on a node)
sed -i 's|"metrics": {"listen": ""}|"metrics": {"listen": ""}, "shared_cgroups": ["host.slice", "other.slice"]|' "$tmp/np.json"
VG=()
command -v valgrind >/dev/null && VG=(valgrind -q --leak-check=full
	--errors-for-leak-kinds=definite,indirect --error-exitcode=99)

# A cgroup as a runtime leaves it: made by someone else, with the files.
mkcg() {
	mkdir -p "$cg/$1"
	for f in cgroup.controllers cgroup.subtree_control cgroup.procs cpuset.cpus \
		cpuset.mems cpuset.cpus.effective cpuset.mems.effective; do
		: >"$cg/$1/$f"
	done
}
mkcg host.slice
mkcg other.slice
mkcg np/ctr1
mkcg np/ctr2
mkcg np/ctr3
mkcg host.slice/np-c4.scope/container
mkcg host.slice/np-c5.scope/container

start() {
	"${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" 2>>"$tmp/log" &
	dpid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
}
stop() {
	kill -TERM "$dpid"
	wait "$dpid"
	local rc=$?
	dpid=
	return $rc
}
spec() { # NAME ID CGROUP QOS CPU
	printf '{"name":"%s","qos":"%s","containers":[{"name":"main","cpu":"%s"}],"container":{"id":"%s","cgroup":"%s"}}' \
		"$1" "$4" "$5" "$2" "$3" >"$tmp/$1.json"
}
admit() { "$build/numaplace" admit -f "$tmp/$1.json" --socket "$sock"; }
cpus() { cat "$cg/$1/cpuset.cpus" 2>/dev/null; }
waitfor() { for _ in $(seq 50); do [ "$(cpus "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }
status() { "$build/numaplace" status --json --socket "$sock"; }

start
check "control socket up" test -S "$sock"

spec c1 ctr1-0123456789abcdef /np/ctr1 LSE 2
out=$(admit c1)
check "container c1 admitted ($out)" test "$out" != "${out#admitted c1: cpuset 1,5}"
check "its cgroup /np/ctr1 holds its exclusive CPUs" waitfor np/ctr1 1,5
check "numaplaced did not create a cgroup for it below its parent" \
	test ! -e "$cg/numaplace.slice/c1"
check "the shared cgroup host.slice gave c1's CPUs up" waitfor host.slice 0,2-4,6-7
spec c2 ctr2 /np/ctr2 LSE 2
out=$(admit c2)
check "a second LSE container gets other CPUs ($out)" test "$out" != "${out#admitted c2: cpuset 2,6}"
check "its cgroup holds them" waitfor np/ctr2 2,6
st=$(status)
check "status shows the container id and cgroup" \
	jq -e '.workloads[] | select(.container_id == "ctr2" and .cgroup == "/np/ctr2")' <<<"$st" >/dev/null
spec c4 c4 /host.slice/np-c4.scope/container LS 500m
out=$(admit c4)
check "a shared container inside host.slice is admitted ($out)" test "$out" != "${out#admitted c4}"
check "it runs on the shared pool" waitfor host.slice/np-c4.scope/container 0,3-4,7

# refused, nothing changed
before=$(md5sum <"$tmp/state/state.json")
spec c5 c5 /host.slice/np-c5.scope/container LSE 1
admit c5 >"$tmp/c5.out"
check "an LSE container inside host.slice is rejected (exit 1)" test $? -eq 1
check "  saying the parent is confined and what to do" \
	grep -q 'inside /host.slice, which is confined to the shared pool.*--cgroup-parent numaplace.slice' "$tmp/c5.out"
check "  and its cgroup is untouched" test -z "$(cpus host.slice/np-c5.scope/container)"
spec c6 c6 /numaplace.slice/x LSE 1
admit c6 >"$tmp/c6.out"
check "a container inside the managed parent is rejected" \
	grep -q "is inside numaplace's managed parent /numaplace.slice" "$tmp/c6.out"
spec c7 c7 /np/missing LSE 1
admit c7 >"$tmp/c7.out"
check "a container whose cgroup does not exist is rejected" grep -q '/np/missing: does not exist' "$tmp/c7.out"
spec c8 ctr2 /np/ctr3 LSE 1
admit c8 >"$tmp/c8.out"
check "a container id held by another workload is rejected" grep -q 'container ctr2 is workload c2.s already' "$tmp/c8.out"
spec c9 c9 /other.slice LS 1
admit c9 >"$tmp/c9.out"
check "a container cgroup that is a shared cgroup is rejected" grep -q 'holds the shared cgroup /other.slice' "$tmp/c9.out"
check "the state did not change for any of them" test "$(md5sum <"$tmp/state/state.json")" = "$before"

# bad specs: exit 2, the field named, the daemon not asked
printf '{"name":"b1","qos":"LSE","containers":[{"name":"m","cpu":"1"}],"container":{"id":"-x","cgroup":"/np/ctr3"}}' >"$tmp/b1.json"
"$build/numaplace" admit -f "$tmp/b1.json" --socket "$sock" 2>"$tmp/b1.err"
check "a bad container id: exit 2" test $? -eq 2
check "  naming spec.container.id" grep -q 'spec.container.id: "-x" is not a container id' "$tmp/b1.err"
printf '{"name":"b2","qos":"LSE","containers":[{"name":"m","cpu":"1"}],"container":{"id":"b2","cgroup":"np/ctr3"}}' >"$tmp/b2.json"
"$build/numaplace" admit -f "$tmp/b2.json" --socket "$sock" 2>"$tmp/b2.err"
check "a relative container cgroup: exit 2 naming spec.container.cgroup" \
	grep -q 'spec.container.cgroup: "np/ctr3" must be a cgroup path from the hierarchy root' "$tmp/b2.err"
printf '{"name":"b3","qos":"LSE","containers":[{"name":"m","cpu":"1"}],"container":{"id":"b3","cgroup":"/np/../x"}}' >"$tmp/b3.json"
"$build/numaplace" admit -f "$tmp/b3.json" --socket "$sock" 2>"$tmp/b3.err"
check "a container cgroup with .. is refused" grep -q 'spec.container.cgroup: .*must not contain' "$tmp/b3.err"
printf '{"name":"b4","cgroup":"b4","qos":"LSE","containers":[{"name":"m","cpu":"1"}],"container":{"id":"b4","cgroup":"/np/ctr3"}}' >"$tmp/b4.json"
"$build/numaplace" admit -f "$tmp/b4.json" --socket "$sock" 2>"$tmp/b4.err"
check "a container workload with a cgroup of its own is refused" \
	grep -q 'spec.container: a container workload has no cgroup or unit of its own' "$tmp/b4.err"
printf '{"name":"b5","qos":"LSE","isolation":"partition","containers":[{"name":"m","cpu":"1"}],"container":{"id":"b5","cgroup":"/np/ctr3"}}' >"$tmp/b5.json"
"$build/numaplace" admit -f "$tmp/b5.json" --socket "$sock" 2>"$tmp/b5.err"
check "a container workload cannot be a partition" grep -q 'spec.isolation: a container workload cannot be a partition' "$tmp/b5.err"

# drift in a container's cgroup is repaired like any other
echo 0-7 >"$cg/np/ctr1/cpuset.cpus"
check "a hand write to the container's cpuset is repaired" waitfor np/ctr1 1,5

# release by container id (the hook's poststop), twice
out=$("$build/numaplace" release --container ctr1-0123456789abcdef --socket "$sock")
check "release --container: released c1 ($out)" test "$out" = "released c1 (container ctr1-0123456789abcdef)"
check "  the runtime's cgroup is left where it is" test -d "$cg/np/ctr1"
check "  the shared cgroup gets c1's CPUs back" waitfor host.slice 0-1,3-5,7
out=$("$build/numaplace" release --container ctr1-0123456789abcdef --socket "$sock")
check "release --container again: ok, nothing to release (exit $?)" \
	test "$out" = "container ctr1-0123456789abcdef: nothing to release"
"$build/numaplace" release --container ctr1 c1 --socket "$sock" 2>/dev/null
check "release --container with a NAME too: exit 2" test $? -eq 2

# the runtime removed the cgroup without a poststop (killed): released
rm -rf "$cg/np/ctr2"
for _ in $(seq 50); do grep -q 'released c2 (cgroup removed)' "$tmp/log" && break; sleep 0.1; done
check "a container whose cgroup vanished is released" grep -q 'released c2 (cgroup removed)' "$tmp/log"
check "  its CPUs are back in the shared pool" waitfor host.slice 0-7
check "  and no cgroup was made again for it" test ! -e "$cg/np/ctr2"

# survives a restart
spec c3 ctr3 /np/ctr3 LSE 2
admit c3 >/dev/null
check "c3 admitted" waitfor np/ctr3 1,5
before=$(md5sum <"$tmp/state/state.json")
out=$(admit c3)
check "the same container and request again: its allocation ($out)" \
	test "$out" != "${out#admitted c3: cpuset 1,5}"
check "  nothing saved or changed" test "$(md5sum <"$tmp/state/state.json")" = "$before"
spec c3 ctr3 /np/ctr3 LSE 4
admit c3 >"$tmp/c3b.out" 2>&1
check "the same container with another request is not taken for it" \
	grep -q 'workload "c3" is already admitted' "$tmp/c3b.out"
stop
check "daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
check "the state keeps the container" grep -q '"id": "ctr3"' "$tmp/state/state.json"
start
st=$(status)
check "after a restart c3 is still the container ctr3's" \
	jq -e '.workloads[] | select(.name == "c3" and .container_id == "ctr3")' <<<"$st" >/dev/null
check "  on the same CPUs" waitfor np/ctr3 1,5
stop
check "restarted daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
echo "containers-host: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
