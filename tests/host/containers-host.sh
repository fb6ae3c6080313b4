#!/usr/bin/env bash
# Container workloads ("container": {"id", "cgroup"} in a spec, what
# `numaplace oci-hook` sends) on a fake cgroup tree, no root cgroup v2
# needed: the cgroup is the runtime's, outside the managed parent, named
# from the hierarchy root; numaplaced writes its cpuset but never creates
# or removes it, refuses what it cannot keep exclusive, releases by
# container id (a no-op for an unknown one) and when the runtime removed
# the cgroup, and keeps the workload across a restart. Under valgrind.
# Then the OCI hook as runtimes run it (numaplace-oci-hook, and
# `numaplace oci-hook`, which must answer the same): a createRuntime and
# poststop round trip and a fail-closed rejection, for a process in a
# cgroup v2 group that the fake tree mirrors (this shell's if it is in
# one; else, as root, a sleeper moved into a new group; else skipped).
# Prints "containers-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-containers-XXXXXX)
dpid=
spid= grp=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; [ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$grp" ] && { wait "$spid" 2>/dev/null; rmdir "$grp"; }
	[ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$(dirname "$0")/host-lib.sh"
cg=$tmp/cg
sock=$tmp/np.sock
setup "$tmp"
# what is saved: state.json and its journal, byte for byte
# host.slice is confined to the shared pool (as system.slice is on a node);
# this node lets its containers ask for any class (oci_hook.policy;
# tests/host/trust-host.sh has the hostile ones)
sed -i 's|"metrics": {"listen": ""}|"metrics": {"listen": ""}, "shared_cgroups": ["host.slice", "other.slice"], "oci_hook": {"policy": {"default": {"qos": ["LSE", "LSR", "LS", "BE"]}}}|' "$tmp/np.json"
valgrind_cmd

mkcg host.slice
mkcg other.slice
mkcg np/ctr1
mkcg np/ctr2
mkcg np/ctr3
mkcg host.slice/np-c4.scope/container
mkcg host.slice/np-c5.scope/container

spec() { # NAME ID CGROUP QOS CPU: a container given CPU (its limit and request)
	printf '{"name":"%s","qos":"%s","containers":[{"name":"main","cpu":"%s"}],"container":{"id":"%s","cgroup":"%s","limits":{"cpu":"%s"},"requests":{"cpu":"%s"}}}' \
		"$1" "$4" "$5" "$2" "$3" "$5" "$5" >"$tmp/$1.json"
}
admit() { "$build/numaplace" admit -f "$tmp/$1.json" --socket "$sock"; }
cpus() { cat "$cg/$1/cpuset.cpus" 2>/dev/null; }
waitfor() { for _ in $(seq 50); do [ "$(cpus "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }
status() { "$build/numaplace" status --json --socket "$sock"; }
jqs() { jq -e "$@" >/dev/null; } # quiet: check's own "ok" line is on stdout

daemon_start "$tmp/np.json"
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
	jqs '.workloads[] | select(.container_id == "ctr2" and .cgroup == "/np/ctr2")' <<<"$st"
spec c4 c4 /host.slice/np-c4.scope/container LS 500m
out=$(admit c4)
check "a shared container inside host.slice is admitted ($out)" test "$out" != "${out#admitted c4}"
check "it runs on the shared pool" waitfor host.slice/np-c4.scope/container 0,3-4,7

# refused, nothing changed
before=$(saved)
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
check "the state did not change for any of them" test "$(saved)" = "$before"

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

# the OCI hook: a process in a cgroup v2 group, mirrored in the fake tree
hookpid= hookcg=
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if [ -n "$own" ] && [ "$own" != / ]; then
	hookpid=$$ hookcg=$own
elif [ -n "$cg2" ] && [ "$(id -u)" = 0 ] && mkdir "$cg2/np-containers-$$" 2>/dev/null; then
	grp=$cg2/np-containers-$$
	sleep 3600 &
	spid=$!
	echo "$spid" >"$grp/cgroup.procs" && hookpid=$spid hookcg=/np-containers-$$
fi
if [ -z "$hookpid" ]; then
	echo "skip the OCI hook cases: this shell is in the root cgroup and cannot make a group"
else
	mkcg "${hookcg#/}"
	# a Guaranteed container of 2 CPUs (the kubelet's quota and shares),
	# and one of 7 (more than the node's unreserved CPUs)
	for n in 2 7; do
		mkdir -p "$tmp/bundle$n"
		printf '{"ociVersion":"1.0.2","linux":{"cgroupsPath":"%s","resources":{"cpu":{"quota":%d,"period":100000,"shares":%d}}}}' \
			"$hookcg" $((n * 100000)) $((n * 1024)) >"$tmp/bundle$n/config.json"
	done
	# the socket, cgroup root and policy from numaplaced's config, the
	# log in $tmp
	jq --arg log "$tmp/hook.log" '.oci_hook += {"timeout_ms": 20000, "log_file": $log}' \
		"$tmp/np.json" >"$tmp/hook.json"
	ocistate() { # ID ANNOTATIONS [CPUS]
		printf '{"ociVersion":"1.0.2","id":"%s","pid":%d,"bundle":"%s","status":"created","annotations":%s}' \
			"$1" "$hookpid" "$tmp/bundle${3:-2}" "$2"
	}
	lean=("$build/numaplace-oci-hook")
	cli=("$build/numaplace" oci-hook)
	for h in lean cli; do
		declare -n hk=$h
		id=oh-$h-0123
		ocistate "$id" '{"numaplace.io/qos":"LSE","numaplace.io/cpus":"2","numaplace.io/workload":"oh-'$h'"}' >"$tmp/st.json"
		"${hk[@]}" createRuntime -c "$tmp/hook.json" <"$tmp/st.json" >"$tmp/oh.out" 2>&1
		check "$h hook createRuntime: exit 0, nothing said (exit $?: $(head -c 300 "$tmp/oh.out"))" \
			test $? -eq 0 -a ! -s "$tmp/oh.out"
		check "  the container's cgroup holds its exclusive CPUs on return" test "$(cpus "${hookcg#/}")" = 1,5
		check "  numaplaced has it, by container id and cgroup" \
			jqs --arg id "$id" --arg cg "$hookcg" --arg n "oh-$h" \
			'.workloads[] | select(.name == $n and .container_id == $id and .cgroup == $cg)' <<<"$(status)"
		check "  the shared cgroup gave them up" waitfor host.slice 0,2-4,6-7
		printf '{"ociVersion":"1.0.2","id":"%s","pid":null,"bundle":"%s","status":"stopped"}' "$id" "$tmp/bundle2" >"$tmp/st.json"
		"${hk[@]}" poststop -c "$tmp/hook.json" <"$tmp/st.json" >"$tmp/oh.out" 2>&1
		check "$h hook poststop: exit 0, nothing said (exit $?: $(head -c 300 "$tmp/oh.out"))" \
			test $? -eq 0 -a ! -s "$tmp/oh.out"
		check "  numaplaced released it" \
			jqs --arg id "$id" 'all(.workloads[]; .container_id != $id)' <<<"$(status)"
		check "  its CPUs are back in the shared pool" waitfor host.slice 0-7
		unset -n hk
	done
	# fail-closed: rejected, exit 1, the reason said and logged, nothing changed
	before=$(saved) cpus0=$(cpus "${hookcg#/}")
	ocistate oh-closed '{"numaplace.io/qos":"LSE","numaplace.io/cpus":"7","numaplace.io/on-failure":"fail-closed"}' 7 >"$tmp/st.json"
	for h in lean cli; do
		declare -n hk=$h
		"${hk[@]}" createRuntime -c "$tmp/hook.json" <"$tmp/st.json" >"$tmp/oh-$h.out" 2>&1
		echo "exit $?" >>"$tmp/oh-$h.out"
		unset -n hk
	done
	check "lean hook fail-closed: exit 1 ($(tr '\n' ' ' <"$tmp/oh-lean.out" | head -c 300))" \
		test "$(tail -n 1 "$tmp/oh-lean.out")" = "exit 1"
	check "  saying so: numaplace oci-hook: oh-closed: fail-closed: oh-closed rejected (resource cpu)" \
		grep -q '^numaplace oci-hook: oh-closed: fail-closed: oh-closed rejected (resource cpu): ' "$tmp/oh-lean.out"
	check "  logged in the config's oci_hook.log_file" \
		grep -q ' createRuntime oh-closed fail-closed: oh-closed rejected (resource cpu): ' "$tmp/hook.log"
	check "  the same message and exit code as numaplace oci-hook" cmp -s "$tmp/oh-lean.out" "$tmp/oh-cli.out"
	check "  numaplaced's state and the cgroup unchanged" \
		test "$(saved)" = "$before" -a "$(cpus "${hookcg#/}")" = "$cpus0"
	# bad usage, and --help: the same from both
	for h in lean cli; do
		declare -n hk=$h
		{ "${hk[@]}" </dev/null; echo "exit $?"; "${hk[@]}" --bogus createRuntime; echo "exit $?"
		  "${hk[@]}" --help; echo "exit $?"; } >"$tmp/oh-$h.use" 2>&1
		unset -n hk
	done
	check "lean hook without a STAGE: exit 2, STAGE is required" \
		grep -qx 'numaplace oci-hook: STAGE is required (createRuntime, prestart or poststop; see .numaplace oci-hook --help.)' "$tmp/oh-lean.use"
	check "  bad usage and --help as numaplace oci-hook's" cmp -s "$tmp/oh-lean.use" "$tmp/oh-cli.use"
fi

# survives a restart
spec c3 ctr3 /np/ctr3 LSE 2
admit c3 >/dev/null
check "c3 admitted" waitfor np/ctr3 1,5
before=$(saved)
out=$(admit c3)
check "the same container and request again: its allocation ($out)" \
	test "$out" != "${out#admitted c3: cpuset 1,5}"
check "  nothing saved or changed" test "$(saved)" = "$before"
spec c3 ctr3 /np/ctr3 LSE 4
admit c3 >"$tmp/c3b.out" 2>&1
check "the same container with another request is not taken for it" \
	grep -q 'workload "c3" is already admitted' "$tmp/c3b.out"
daemon_stop
check "daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
check "the state keeps the container" sh -c "'$build/numaplace' state '$tmp/state' | grep -q '\"id\": \"ctr3\"'"
daemon_start "$tmp/np.json"
st=$(status)
check "after a restart c3 is still the container ctr3's" \
	jqs '.workloads[] | select(.name == "c3" and .container_id == "ctr3")' <<<"$st"
check "  on the same CPUs" waitfor np/ctr3 1,5
daemon_stop
check "restarted daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
echo "containers-host: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
