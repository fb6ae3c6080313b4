#!/usr/bin/env bash
# containerd's NRI v0.1 plugin (`numaplace-oci-hook invoke`, installed as
# /opt/nri/bin/numaplace) driven as containerd 1.6's CRI plugin drives it:
# `TYPE invoke`, one Request JSON on stdin (the shapes of containerd
# 1.6.20's nri v0.1.0 types.Request), one Result JSON expected on stdout.
# Against numaplaced (under valgrind) on a fake cgroup tree that mirrors
# real cgroup v2 groups holding real processes, one per container, named as
# runc names them under each driver: systemd `SLICE:cri-containerd:ID`
# (/S.slice/cri-containerd-ID.scope) and cgroupfs `/POD/ID`. Checked: a
# Guaranteed container placed on exclusive CPUs before `invoke` returns,
# the same request again, delete releasing (twice, and for one never
# admitted), a Burstable one on the shared pool, the pause container
# ignored or admitted to the shared pool as the plugin's conf says,
# containers without numaplace's annotations left alone unless conf says
# all, every malformed field refused naming it with nothing changed,
# hostile annotations refused by the trust rules (docs/trust-model.md)
# under fail-open and fail-closed, a cgroupsPath that does not hold the
# pid, numaplaced down under both modes, and the CLI's `numaplace oci-hook
# invoke` answering the same. Needs root and a cgroup2 mount for the
# processes (skipped, and said, otherwise).
# Prints "nri-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-nri-XXXXXX)
dpid= pids=() grps=()
cleanup() {
	[ -n "$dpid" ] && kill "$dpid" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for ((i = ${#grps[@]} - 1; i >= 0; i--)); do rmdir "${grps[$i]}" 2>/dev/null; done
	[ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "$0")/host-lib.sh"
cg=$tmp/cg
sock=$tmp/np.sock
nri=("$build/numaplace-oci-hook" invoke)
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
if [ -z "$cg2" ] || [ "$(id -u)" != 0 ] || ! mkdir "$cg2/npnri$$.slice" 2>/dev/null; then
	echo "nri-host: skipped (needs root and a cgroup2 mount to put processes in containers' cgroups)"
	echo "nri-host: 0 passed, 0 failed"
	exit 0
fi
grps+=("$cg2/npnri$$.slice")
setup "$tmp"
# host.slice is the node's shared pool; the namespace "trading" may ask
# for LSE (2 exclusive CPUs at most), the rest has the built-in rule (LS
# and BE, nothing above the resources)
jq '.shared_cgroups = ["host.slice"] | .oci_hook = {"timeout_ms": 20000, "log_file": "'"$tmp"'/hook.log",
	"policy": {"rules": [{"namespace": "trading", "qos": ["LSE", "LSR", "LS", "BE"], "max_exclusive_cpus": 2}]}}' \
	"$tmp/np.json" >"$tmp/np.json.new" && mv "$tmp/np.json.new" "$tmp/np.json"
# the plugin reads numaplaced's configuration from its conf (as
# /etc/nri/conf.json's "conf" gives it)
valgrind_cmd

mkcg host.slice
# A container as runc leaves it after `runc create`: a process in its
# cgroup (REL, from the root), mirrored in the fake tree; its pid in $cpid.
container() {
	local rel=$1 d=$cg2 part
	cpid=
	for part in ${rel//\// }; do
		d=$d/$part
		[ -d "$d" ] || { mkdir "$d" || return 1; grps+=("$d"); }
	done
	sleep 3600 >/dev/null 2>&1 &
	pids+=($!)
	echo $! >"$d/cgroup.procs" || return 1
	mkcg "${rel#/}"
	cpid=$!
}
cid() { printf '%s%02d%056d' "$1" "$2" 0; } # a 64-character id, its first 12 unique
S=npnri$$.slice # the pod's slice (systemd driver)
P=/npnri$$/podb # the pod's cgroup (cgroupfs driver)
CG1=$(cid c0ffee 1) CB=$(cid c0ffee 2) SB=$(cid feed00 1) CG3=$(cid c0ffee 3) CX=$(cid c0ffee 4)
CH=$(cid c0ffee 5) CU=$(cid c0ffee 6)
container "/$S/cri-containerd-$CG1.scope" && pid1=$cpid &&
	container "$P/$CB" && pidb=$cpid && container "$P/$SB" && pidp=$cpid &&
	container "$P/$CG3" && pid3=$cpid && container "$P/$CH" && pidh=$cpid &&
	container "$P/$CU" && pidu=$cpid ||
	{ echo "nri-host: could not make the containers' cgroups"; exit 1; }

status() { "$build/numaplace" status --json --socket "$sock"; }
cpus() { cat "$cg/${1#/}/cpuset.cpus" 2>/dev/null; }
waitfor() { for _ in $(seq 50); do [ "$(cpus "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }
jqs() { jq -e "$@" >/dev/null; }

# REQ STATE ID SANDBOX PID CGROUPSPATH RESOURCES ANNOTATIONS [CONF]: a
# Request as containerd 1.6 writes it (no trailing newline; pid omitted
# when 0, cgroupsPath when empty, as Go's omitempty does)
req() {
	jq -cj -n --arg st "$1" --arg id "$2" --arg sb "$3" --argjson pid "$4" --arg cp "$5" \
		--argjson res "$6" --argjson an "$7" --argjson conf "${8:-null}" --arg cfg "$tmp/np.json" '
		{conf: ({config: $cfg} + ($conf // {})), version: "0.1", state: $st, id: $id, sandboxID: $sb}
		+ (if $pid != 0 then {pid: $pid} else {} end)
		+ {spec: ({resources: $res, namespaces: {pid: "/proc/1/ns/pid", mount: ""}}
			+ (if $cp != "" then {cgroupsPath: $cp} else {} end)
			+ (if $an != {} then {annotations: $an} else {} end))}
		+ (if $st == "create" then {labels: {"io.kubernetes.pod.name": "p"}} else {} end)'
}
# the kubelet's resources: CPUS as quota and shares (0: BestEffort-like
# shares 2), MEM bytes
res() { # CPUS_MILLI [QUOTA_MILLI]
	local s=$(($1 * 1024 / 1000)) q=${2:-$1}
	[ "$s" -lt 2 ] && s=2
	if [ "$q" -gt 0 ]; then
		printf '{"cpu":{"shares":%d,"quota":%d,"period":100000}}' "$s" $((q * 100))
	else
		printf '{"cpu":{"shares":%d}}' "$s"
	fi
}
ann() { # namespace, then KEY=VALUE...
	local a
	a=$(jq -cn --arg ns "$1" '{"io.kubernetes.cri.container-type": "container", "io.kubernetes.cri.sandbox-namespace": $ns}')
	shift
	for kv in "$@"; do a=$(jq -c --arg k "${kv%%=*}" --arg v "${kv#*=}" '. + {($k): $v}' <<<"$a"); done
	echo "$a"
}
# invoke REQUEST [CMD...]: runs the plugin; $out its stdout, $err its
# stderr, $rc its exit code
invoke() {
	local r=$1
	shift
	local cmd=("${@:-${nri[@]}}")
	printf '%s' "$r" >"$tmp/req.json"
	"${cmd[@]}" <"$tmp/req.json" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out") err=$(cat "$tmp/err")
}
# stdout is one JSON object (all containerd decodes), with no error
one_ok() { jq -se 'length == 1 and (.[0] | type == "object" and (.error // "") == "" and .plugin == "numaplace")' "$tmp/out" >/dev/null; }
# ... with an error starting with $1
one_err() { jq -se --arg p "$1" 'length == 1 and (.[0].error | startswith($p))' "$tmp/out" >/dev/null; }
# exit code and Result: ok (0, no error), or RC with an error starting with $2
res_ok() { [ "$rc" = 0 ] && one_ok; }
res_err() { [ "$rc" = "$1" ] && one_err "$2"; }
said() { printf '%s' "$out | rc $rc | $err" | head -c 400; }

daemon_start "$tmp/np.json"
check "numaplaced up" test -S "$sock"

# 1. a Guaranteed 2-CPU container whose cgroupsPath has runc's systemd
# form (slice:prefix:name). numaplaced runs its cgroupfs backend here, so
# this checks the plugin's reading of that form down to the scope's
# cgroup, not a real node: with systemd as PID 1 (what runc's systemd
# driver needs) numaplaced's systemd backend does not place such a scope
# yet (docs/containers.md, "runc's systemd driver")
G1=$(req create "$CG1" "$SB" "$pid1" "$S:cri-containerd:$CG1" "$(res 2000)" \
	"$(ann trading numaplace.io/qos=LSE numaplace.io/workload=web)")
invoke "$G1"
check "create, systemd form read, cgroupfs backend: one Result, no error, exit 0 ($(said))" res_ok
check "  its metadata names the workload and the CPUs" jqs '.metadata == {"workload": "web", "cpuset": "1,5"}' "$tmp/out"
check "  the scope cri-containerd-ID.scope holds them when invoke returns" test "$(cpus "/$S/cri-containerd-$CG1.scope")" = 1,5
check "  numaplaced has it by container id and the pid's cgroup" \
	jqs --arg id "$CG1" --arg c "/$S/cri-containerd-$CG1.scope" \
	'.workloads[] | select(.name == "web" and .container_id == $id and .cgroup == $c)' <<<"$(status)"
check "  the shared pool gave them up" waitfor host.slice 0,2-4,6-7
check "  nothing said on stderr" test -z "$err"
before=$(settled)
invoke "$G1"
check "the same create again (a retried start): its allocation ($(said))" \
	jqs '.metadata.cpuset == "1,5"' "$tmp/out"
check "  exit 0, nothing changed" test "$rc" = 0 -a "$(settled)" = "$before"

# 2. a Burstable container, cgroupfs driver: the shared pool
invoke "$(req create "$CB" "$SB" "$pidb" "$P/$CB" "$(res 500 0)" "$(ann default numaplace.io/workload=burst)")"
check "create, cgroupfs driver, Burstable: placed ($(said))" res_ok
check "  on the shared pool" test "$(cpus "$P/$CB")" = 0,2-4,6-7
check "  as Burstable with its request" \
	jqs '.workloads[] | select(.name == "burst" and .qos == "Burstable")' <<<"$(status)"

# 3. the pause container (id == sandboxID), the pod's annotations on it
PA=$(ann trading numaplace.io/qos=LSE numaplace.io/cpus=2 numaplace.io/workload=web)
PA=$(jq -c '."io.kubernetes.cri.container-type" = "sandbox"' <<<"$PA")
before=$(settled)
invoke "$(req create "$SB" "$SB" "$pidp" "$P/$SB" '{"cpu":{"shares":2}}' "$PA")"
check "pause container, conf pause ignore (the default): {} ($(said))" res_ok
check "  nothing admitted or changed" test "$(settled)" = "$before" -a -z "$(grep "${SB:0:12}" "$tmp/log")"
invoke "$(req create "$SB" "$SB" "$pidp" "$P/$SB" '{"cpu":{"shares":2}}' "$PA" '{"pause": "shared"}')"
check "pause container, conf pause shared: placed ($(said))" res_ok
check "  on the shared pool, asking nothing of the pod's annotations" \
	jqs --arg id "$SB" '.workloads[] | select(.container_id == $id and .qos == "BestEffort" and (.name | startswith("feed00")))' <<<"$(status)"
check "  its cgroup holds the shared pool" waitfor "$P/$SB" 0,2-4,6-7
invoke "$(req delete "$SB" "$SB" 0 "$P/$SB" '{"cpu":{"shares":2}}' "$PA" '{"pause": "shared"}')"
check "  delete of the pause releases it ($(said))" res_ok
check "  numaplaced no longer has it" jqs --arg id "$SB" 'all(.workloads[]; .container_id != $id)' <<<"$(status)"

# 4. without numaplace's annotations: left alone, unless conf says all
before=$(settled)
U=$(req create "$CU" "$SB" "$pidu" "$P/$CU" "$(res 1000)" "$(ann default)")
invoke "$U"
check "a container without numaplace's annotations: {} ($(said))" res_ok
check "  nothing admitted or changed, numaplaced not asked" \
	test "$(settled)" = "$before" -a -z "$(grep "${CU:0:12}" "$tmp/log")"
invoke "$(req create "$CU" "$SB" "$pidu" "$P/$CU" "$(res 1000)" "$(ann default)" '{"containers": "all"}')"
check "  with conf containers all: admitted on its resources ($(said))" \
	jqs --arg id "$CU" '.workloads[] | select(.container_id == $id and .qos == "Guaranteed")' <<<"$(status)"
invoke "$(req delete "$CU" "$SB" 0 "$P/$CU" "$(res 1000)" "$(ann default)" '{"containers": "all"}')"

# 5. delete: releases, idempotent
invoke "$(req delete "$CG1" "$SB" "$pid1" "$S:cri-containerd:$CG1" "$(res 2000)" "$(ann trading numaplace.io/qos=LSE)")"
check "delete: one Result, no error, exit 0 ($(said))" res_ok
check "  numaplaced released it" jqs --arg id "$CG1" 'all(.workloads[]; .container_id != $id)' <<<"$(status)"
check "  its CPUs are back in the shared pool" waitfor host.slice 0-7
before=$(settled)
invoke "$(req delete "$CG1" "$SB" 0 "$S:cri-containerd:$CG1" "$(res 2000)" "$(ann trading numaplace.io/qos=LSE)")"
check "delete again: {} exit 0 ($(said))" res_ok
check "  nothing changed" test "$(settled)" = "$before"
invoke "$(req delete "$CX" "$SB" 0 "$P/$CX" null "$(ann trading numaplace.io/qos=LSE)")"
check "delete of a container never admitted: {} exit 0 ($(said))" res_ok
invoke "$(req update "$CG1" "$SB" "$pid1" "" null "$(ann trading numaplace.io/qos=LSE)")"
check "update (defined, never sent by 1.6): {} exit 0" res_ok

# 6. malformed requests: the field named, exit 2, nothing changed
before=$(settled)
malformed=0
while IFS='|' read -r field request; do
	invoke "$request"
	if [ "$rc" = 2 ] && one_err "$field" && grep -q "^numaplace nri: .*$field" "$tmp/err"; then :; else
		malformed=$((malformed + 1)); echo "  not refused naming $field: $(said)"
	fi
done <<EOF
request: empty input|
request: invalid JSON|{"state": "create", "id":
pid: |$(req create "$CG3" "$SB" 0 "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)")
state: "start"|$(req start "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)")
id: |$(req create "-bad" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)")
sandboxID: |$(req create "$CG3" "s/b" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)")
spec.cgroupsPath: |$(req create "$CG3" "$SB" "$pid3" "$P/../$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)")
spec.cgroupsPath: |$(req create "$CG3" "$SB" "$pid3" "pod-.slice:cri-containerd:$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)")
spec.resources.cpu.quota: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" '{"cpu":{"quota":"2"}}' "$(ann trading numaplace.io/qos=LSE)")
spec.resources.memory.limit: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" '{"memory":{"limit":[]}}' "$(ann trading numaplace.io/qos=LSE)")
spec.annotations.numaplace.io/cpus: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" '{"numaplace.io/cpus": 2}')
conf.pause: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)" '{"pause": "keep"}')
conf.config: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)" '{"config": "numaplace.json"}')
labels: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)" | jq -c '.labels = ["x"]')
annotations.numaplace.io/cpus: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE numaplace.io/cpus=-1)")
annotations.numaplace.io/colour: unknown annotation|$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/colour=red numaplace.io/on-failure=fail-open)")
annotations.numaplace.io/on-failure: |$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/on-failure=maybe)")
EOF
check "17 malformed requests: each exit 2, one Result whose error names the field, said on stderr ($malformed not)" \
	test "$malformed" = 0
check "  nothing admitted or changed" test "$(settled)" = "$before"

# 6b. the annotations are the pod's: an LSE pod's container of 1.5 CPUs
# (a sidecar, an init container) cannot be LSE; that is the failure mode's
# to decide, not bad input
invoke "$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1500)" "$(ann trading numaplace.io/qos=LSE)")"
check "an LSE pod's 1.5-CPU container, fail-open: {} exit 0 ($(said))" res_ok
check "  the reason said on stderr" grep -q "fail-open: spec.resources.cpu: LSE needs whole CPUs" "$tmp/err"
invoke "$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1500)" "$(ann trading numaplace.io/qos=LSE numaplace.io/on-failure=fail-closed)")"
check "  fail-closed: the start fails, exit 1 ($(said))" res_err 1 "fail-closed: spec.resources.cpu: LSE needs whole CPUs"
check "  nothing admitted or changed" test "$(settled)" = "$before"

# 7. hostile annotations (docs/trust-model.md), both failure modes
H() { # ON-FAILURE NAMESPACE CPUS_ASKED QOS RESOURCES_MILLI
	req create "$CH" "$SB" "$pidh" "$P/$CH" "$(res "$5")" \
		"$(ann "$2" numaplace.io/qos="$4" numaplace.io/cpus="$3" numaplace.io/on-failure="$1" numaplace.io/workload=hostile)"
}
before=$(settled)
invoke "$(H fail-closed trading 6 LS 100)"
check "6 CPUs asked by a container of 0.1, fail-closed: the start fails ($(said))" \
	res_err 1 "fail-closed: hostile rejected (resource policy): "
check "  the Result names the rule, the values and spec.resources" \
	jqs '.error | test("cpu 6 is above the container.s CPU limit of 100m \\(spec.resources\\)")' "$tmp/out"
check "  said on stderr as the journal shows it" grep -q "^numaplace nri: $CH: fail-closed: hostile rejected (resource policy)" "$tmp/err"
check "  logged in oci_hook.log_file" grep -q " nri-create $CH fail-closed: hostile rejected" "$tmp/hook.log"
check "  nothing admitted or changed" test "$(settled)" = "$before"
invoke "$(H fail-closed tenant 2 LSE 2000)"
check "LSE from a namespace whose rule does not allow it: refused ($(said))" \
	res_err 1 "fail-closed: hostile rejected (resource policy): "
check "  naming the qos rule" jqs '.error | test("LSE")' "$tmp/out"
HC=$(H fail-closed tenant 2 LSE 2000 | jq -c '.spec.annotations["io.kubernetes.pod.namespace"] = "trading"')
invoke "$HC"
check "a pod of tenant claiming io.kubernetes.pod.namespace trading: still tenant's rule ($(said))" \
	res_err 1 "fail-closed: hostile rejected (resource policy): oci_hook.policy.default: qos LSE is not allowed"
invoke "$(H fail-open trading 6 LS 100)"
check "6 CPUs asked by a container of 0.1, fail-open: the start goes on ($(said))" res_ok
check "  admitted as LS on what its resources give (100m, the shared pool)" \
	jqs '.workloads[] | select(.name == "hostile" and .qos == "LS")' <<<"$(status)"
check "  said on stderr" grep -q "^numaplace nri: $CH: fail-open: hostile rejected (resource policy): .*admitted as LS" "$tmp/err"
invoke "$(req delete "$CH" "$SB" 0 "$P/$CH" null "$(ann trading numaplace.io/qos=LS)")"

# 8. a cgroupsPath that does not hold the pid (the pid of another container)
invoke "$(req create "$CG3" "$SB" "$pidb" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE numaplace.io/on-failure=fail-closed)")"
check "the pid not in spec.cgroupsPath, fail-closed: refused ($(said))" \
	res_err 1 "fail-closed: pid $pidb: the process is in $P/$CB, not in $P/$CG3 (from spec.cgroupsPath)"

# 9. the CLI answers the same
R=$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1500)" "$(ann trading numaplace.io/qos=LSE)")
invoke "$R"
cp "$tmp/out" "$tmp/lean.out"
invoke "$R" "$build/numaplace" oci-hook invoke
check "numaplace oci-hook invoke: the same Result as numaplace-oci-hook invoke" cmp -s "$tmp/out" "$tmp/lean.out"

daemon_stop
check "numaplaced stops cleanly under valgrind (exit $?)" test $? -eq 0

# 10. numaplaced down
D=$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE)")
invoke "$D"
check "numaplaced down, fail-open (the default): {} exit 0 ($(said))" res_ok
check "  said on stderr: the container runs in the shared pool" \
	grep -q "^numaplace nri: $CG3: fail-open: numaplaced: .*; the container runs in the shared pool" "$tmp/err"
invoke "$(req create "$CG3" "$SB" "$pid3" "$P/$CG3" "$(res 1000)" "$(ann trading numaplace.io/qos=LSE numaplace.io/on-failure=fail-closed)")"
check "numaplaced down, fail-closed: the start fails, the reason in the Result ($(said))" \
	res_err 1 "fail-closed: numaplaced: "
invoke "$(req delete "$CG3" "$SB" 0 "$P/$CG3" null "$(ann trading numaplace.io/qos=LSE)")"
check "numaplaced down, delete: {} exit 0 (the vanished-cgroup release covers it)" res_ok

echo "nri-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "nri-host $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
