#!/usr/bin/env bash
# Trust boundaries (issue 29) on a fake cgroup tree, numaplaced under
# valgrind, run with umask 077 as the shipped unit runs it:
#  1. hostile container requests, sent straight to numaplaced's socket (what
#     any client could send, the hook bypassed) and made by the OCI hook from
#     a pod's annotations: a count above the container's limit (stated, and
#     the kernel's cpu.max), no limit, memory without a limit, LSE from a
#     namespace that may not ask for it, a partition, the cap of exclusive
#     CPUs, the name of an existing workload, another workload's cgroup,
#     huge and negative values. Each refused naming the rule and the values,
#     the saved state and every cpuset file unchanged, the node's other
#     workloads untouched; a permissive hook configuration does not get past
#     numaplaced's own; fail-open admits what the resources give.
#  2. files numaplaced trusts: spec files, the spec directory, the
#     configuration (start, --check-config, reload, the hook) and the state,
#     refused when not root's or writable by group or others, naming the
#     file, nothing changed; placement files keep mode 0644 under umask 077.
#  3. the control socket: 0600 and root only; with socket_read_group, 0660
#     and that group's, whose members (primary or supplementary) may read
#     (status, events, export, explain) and nothing else.
#  4. the shipped unit's exposure (systemd-analyze security --offline) is at
#     most 4.0.
# Prints "trust-host: N passed, N failed".
set -uo pipefail
build=${1:-build}
tmp=$(mktemp -d /tmp/np-trust-XXXXXX)
dpid= spid= grp=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; [ -n "$spid" ] && kill "$spid" 2>/dev/null
	[ -n "$grp" ] && { wait "$spid" 2>/dev/null; rmdir "$grp"; }
	[ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"' EXIT
. "$(dirname "$0")/host-lib.sh"
cg=$tmp/cg
sock=$tmp/np.sock
np=$build/numaplace
setup "$tmp"
chmod 0755 "$tmp" # the read group's members reach the socket (part 3)
# host.slice is confined to the shared pool; the namespace "trading" may
# ask for LSE, at most 2 exclusive CPUs together; everything else has the
# built-in default (LS and BE, nothing without a limit)
jq '.shared_cgroups = ["host.slice"] | .oci_hook = {"policy": {"rules": [
	{"namespace": "trading", "qos": ["LSE", "LSR", "LS", "BE"], "max_exclusive_cpus": 2}]}}' \
	"$tmp/np.json" >"$tmp/np.json.new" && mv "$tmp/np.json.new" "$tmp/np.json"
chmod 0644 "$tmp/np.json"
valgrind_cmd

mkcg host.slice
for c in ok1 h1 h2 k1; do mkcg np/$c; done
# the kernel's limit of /np/k1: a tenth of a CPU
echo "10000 100000" >"$cg/np/k1/cpu.max"

status() { "$np" status --json --socket "$sock"; }
jqs() { jq -e "$@" >/dev/null; } # quiet: check's own "ok" line is on stdout
cpus() { cat "$cg/$1/cpuset.cpus" 2>/dev/null; }
waitfor() { for _ in $(seq 50); do [ "$(cpus "$1")" = "$2" ] && return 0; sleep 0.1; done; return 1; }
inlog() { for _ in $(seq 50); do grep -qF -- "$1" "$tmp/log" && return 0; sleep 0.1; done; return 1; }
# ctr NAME ID CGROUP QOS CPU [MORE-MAIN-FIELDS] [CONTAINER-FIELDS]: a
# container workload's spec, written to $tmp/NAME.json
ctr() {
	printf '{"name":"%s","qos":"%s","containers":[{"name":"main","cpu":"%s"%s}],"container":{"id":"%s","cgroup":"%s"%s}}' \
		"$1" "$4" "$5" "${6:+,$6}" "$2" "$3" "${7:+,$7}" >"$tmp/$1.json"
}
admit() { "$np" admit -f "$tmp/$1.json" --socket "$sock" >"$tmp/$1.out" 2>&1; }
# a raw request line to the socket (no local check by the CLI): the answer
raw() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())' "$sock" "$1"
}
# refused_sock CASE NAME ERE: admitted through the socket, NAME is
# refused (exit 1) with ERE in the answer, nothing changed
refused_sock() {
	local before rc
	before=$(settled)
	admit "$2"
	rc=$?
	check "socket, $1: refused (exit $rc)" test $rc -eq 1
	check "  saying: $3" grep -Eq -- "$3" "$tmp/$2.out"
	check "  the state and every cpuset unchanged" test "$(snap)" = "$before"
}

# ---- the node's own workloads -----------------------------------------------------
cat >"$tmp/specs/web.json" <<'JSON'
{"name": "web", "cgroup": "web", "qos": "LSE", "containers": [{"name": "m", "cpu": "2"}]}
JSON
chmod 0644 "$tmp/specs/web.json"
daemon_start "$tmp/np.json" 077
check "control socket up" test -S "$sock"
check "socket mode 0600, root's (no read group)" test "$(stat -c '%a %u' "$sock")" = "600 0"
# a spec file is the node's own: LSE allowed though no pod may ask for it
check "the spec file's LSE workload web is admitted" waitfor numaplace.slice/web 1,5
ctr ok1 ok1 /np/ok1 LSE 1 "" '"namespace":"trading","limits":{"cpu":"1"},"requests":{"cpu":"1"}'
admit ok1
check "a Guaranteed container of trading asks LSE 1: admitted ($(head -c 200 "$tmp/ok1.out"))" \
	grep -q '^admitted ok1: cpuset 2' "$tmp/ok1.out"
check "  its cgroup holds its CPU" waitfor np/ok1 2
check "placement files keep mode 0644 (directory 0755) under umask 077" \
	test "$(stat -c %a "$tmp/workloads/web.json") $(stat -c %a "$tmp/workloads")" = "644 755"
WEB0=$(cpus numaplace.slice/web) OK10=$(cpus np/ok1) HOST0=$(cpus host.slice)

# ---- 1. hostile requests through the socket ----------------------------------------
ctr s1 s1 /np/h1 LSE 6 "" '"namespace":"trading","limits":{"cpu":"100m"},"requests":{"cpu":"100m"}'
refused_sock "6 CPUs for a container limited to 0.1" s1 \
	'rejected s1: oci_hook\.policy\.rules\[0\] \(namespace "trading"\): cpu 6 is above the container.s CPU limit of 100m \(container\.limits\) \(resource policy\)'
ctr s2 s2 /np/k1 LSE 2 "" '"namespace":"trading","limits":{"cpu":"2"},"requests":{"cpu":"2"}'
refused_sock "2 CPUs stated, the cgroup's cpu.max gives 0.1" s2 \
	'cpu 2 is above the container.s CPU limit of 100m \(cpu\.max of /np/k1: 10000 100000\)'
ctr s3 s3 /np/h1 LS 2
refused_sock "CPUs for a container without a limit" s3 \
	'oci_hook\.policy\.default: cpu 2 is asked for a container without a CPU limit \(its request: none\), which this rule does not allow \(without_limit\)'
ctr s4 s4 /np/h1 LS 100m '"memory":"64Gi"' '"limits":{"cpu":"100m"},"requests":{"cpu":"100m"}'
refused_sock "64Gi for a container without a memory limit" s4 \
	'oci_hook\.policy\.default: memory 64Gi is asked for a container without a memory limit'
ctr s5 s5 /np/h1 LSE 2 "" '"limits":{"cpu":"2"},"requests":{"cpu":"2"}'
refused_sock "LSE from a namespace that may not ask it" s5 \
	'oci_hook\.policy\.default: qos LSE is not allowed for this container \(the rule allows LS, BE\)'
ctr s6 s6 /np/h1 LSE 2 "" '"namespace":"trading","limits":{"cpu":"2"},"requests":{"cpu":"2"}'
refused_sock "more exclusive CPUs than the namespace's cap" s6 \
	'2 exclusive CPU\(s\), with the 1 its containers hold already, is more than its max_exclusive_cpus 2'
ctr s7 s7 /np/h1 LSE 2 "" '"namespace":"trading","limits":{"cpu":"2"},"requests":{"cpu":"1"}'
refused_sock "LSE for a Burstable container" s7 \
	'qos LSE needs a Guaranteed container, a CPU limit equal to its request in whole CPUs; it has limit 2 \(container\.limits\), request 1'
ctr web s8 /np/h1 LS 100m "" '"limits":{"cpu":"100m"}'
refused_sock "the name of the spec file's workload" web 'name: workload "web" is already admitted'
ctr s9 s9 /numaplace.slice/web LS 100m "" '"limits":{"cpu":"100m"}'
refused_sock "the spec file's workload's cgroup" s9 "is inside numaplace's managed parent"
ctr s10 s10 /np/ok1 LS 100m "" '"limits":{"cpu":"100m"}'
refused_sock "another container's cgroup" s10 'cgroup /np/ok1 is workload ok1.s already'
before=$(settled)
ans=$(raw '{"op":"admit","spec":{"name":"s11","qos":"LS","containers":[{"name":"m","cpu":"99999999"}],"container":{"id":"s11","cgroup":"/np/h1"}}}')
check "socket, a huge count: refused naming the field ($ans)" grep -q 'spec.containers\[0\].cpu' <<<"$ans"
ans=$(raw '{"op":"admit","spec":{"name":"s12","qos":"LS","containers":[{"name":"m","cpu":"1"}],"container":{"id":"s12","cgroup":"/np/h1","limits":{"cpu":"-1"}}}}')
check "socket, a negative limit: refused naming the field ($ans)" grep -q 'spec.container.limits.cpu' <<<"$ans"
ans=$(raw '{"op":"admit","spec":{"name":"s13","qos":"LSE","isolation":"partition","containers":[{"name":"m","cpu":"1"}],"container":{"id":"s13","cgroup":"/np/h1","namespace":"trading","limits":{"cpu":"1"},"requests":{"cpu":"1"}}}}')
check "socket, a partition for a container: refused ($ans)" grep -q 'a container workload cannot be a partition' <<<"$ans"
check "  nothing changed by them" test "$(snap)" = "$before"
# a client may not resize a container past its resources either
out=$("$np" resize ok1 --cpus 2 --socket "$sock" 2>&1)
check "socket, resize ok1 to 2 CPUs (limit 1): refused ($out)" \
	grep -q 'cpu 2 is above the container.s CPU limit of 1' <<<"$out"
check "the node's other workloads untouched" \
	test "$(cpus numaplace.slice/web) $(cpus np/ok1) $(cpus host.slice)" = "$WEB0 $OK10 $HOST0"

# ---- 1. hostile annotations through the OCI hook -------------------------------------
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
cg2=$(awk '$9 == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
hookpid= hookcg=
if [ -n "$own" ] && [ "$own" != / ]; then
	hookpid=$$ hookcg=$own
elif [ -n "$cg2" ] && [ "$(id -u)" = 0 ] && mkdir "$cg2/np-trust-$$" 2>/dev/null; then
	grp=$cg2/np-trust-$$
	sleep 3600 &
	spid=$!
	echo "$spid" >"$grp/cgroup.procs" && hookpid=$spid hookcg=/np-trust-$$
fi
if [ -z "$hookpid" ]; then
	echo "skip the OCI hook cases: this shell is in the root cgroup and cannot make a group"
else
	mkcg "${hookcg#/}"
	bundle() { # NAME RESOURCES-JSON
		mkdir -p "$tmp/b-$1"
		printf '{"ociVersion":"1.0.2","linux":{"cgroupsPath":"%s","resources":%s}}' \
			"$hookcg" "$2" >"$tmp/b-$1/config.json"
	}
	bundle tenth '{"cpu":{"quota":10000,"period":100000,"shares":102}}'
	bundle none '{}'
	bundle one '{"cpu":{"quota":100000,"period":100000,"shares":1024}}'
	jq --arg log "$tmp/hook.log" '.oci_hook += {"timeout_ms": 20000, "log_file": $log}' \
		"$tmp/np.json" >"$tmp/hook.json"
	# a hook whose configuration lets everything through: numaplaced's holds
	jq --arg log "$tmp/hook.log" '.oci_hook = {"timeout_ms": 20000, "log_file": $log,
		"policy": {"default": {"qos": ["LSE", "LSR", "LS", "BE"], "without_limit": true}}}' \
		"$tmp/np.json" >"$tmp/hook-open.json"
	chmod 0644 "$tmp/hook.json" "$tmp/hook-open.json"
	hook() { # ID BUNDLE ANNOTATIONS [CONFIG]: the exit code, its words in $tmp/ID.hook
		printf '{"ociVersion":"1.0.2","id":"%s","pid":%d,"bundle":"%s","status":"created","annotations":%s}' \
			"$1" "$hookpid" "$tmp/b-$2" "$3" |
			"$build/numaplace-oci-hook" createRuntime -c "${4:-$tmp/hook.json}" >"$tmp/$1.hook" 2>&1
	}
	closed='"numaplace.io/on-failure":"fail-closed","io.kubernetes.pod.namespace":"trading"'
	# refused_hook CASE ID BUNDLE ANNOTATIONS ERE [CONFIG]
	refused_hook() {
		local before rc
		before=$(settled)
		hook "$2" "$3" "$4" "${6:-}"
		rc=$?
		check "hook, $1: refused, fail-closed (exit $rc)" test $rc -eq 1
		check "  saying: $5" grep -Eq -- "$5" "$tmp/$2.hook"
		check "  the state and every cpuset unchanged" test "$(snap)" = "$before"
	}
	nrej=$(grep -c 'rejected' "$tmp/log")
	refused_hook "the issue's LSE 6 for a tenth of a CPU" h-six tenth \
		'{"numaplace.io/qos":"LSE","numaplace.io/cpus":"6",'"$closed"'}' \
		'h-six: fail-closed: h-six rejected \(resource policy\): oci_hook\.policy\.rules\[0\] \(namespace "trading"\): cpu 6 is above the container.s CPU limit of 100m \(config\.json linux\.resources\)'
	check "  refused by the hook itself: numaplaced was not asked" \
		test "$(grep -c 'rejected' "$tmp/log")" = "$nrej"
	# the hook's configuration lets LSE from any namespace, and CPUs without
	# a limit, through; numaplaced's does not
	refused_hook "LSE from the default namespace, through a hook configured to let it pass" \
		h-pass one '{"numaplace.io/qos":"LSE","numaplace.io/cpus":"1","numaplace.io/on-failure":"fail-closed"}' \
		'h-pass rejected \(resource policy\): oci_hook\.policy\.default: qos LSE is not allowed for this container' \
		"$tmp/hook-open.json"
	check "  refused by numaplaced (its log says so)" inlog 'rejected h-pass: oci_hook.policy.default: qos LSE'
	refused_hook "CPUs without a limit, through a hook configured to let them pass" \
		h-pass2 none '{"numaplace.io/qos":"LS","numaplace.io/cpus":"3",'"$closed"'}' \
		'h-pass2 rejected \(resource policy\): oci_hook\.policy\.rules\[0\] \(namespace "trading"\): cpu 3 is asked for a container without a CPU limit' \
		"$tmp/hook-open.json"
	check "  refused by numaplaced (its log says so)" inlog 'rejected h-pass2: oci_hook.policy.rules[0]'
	refused_hook "64Gi without a memory limit" h-mem none \
		'{"numaplace.io/memory":"64Gi",'"$closed"'}' \
		'oci_hook\.policy\.rules\[0\] \(namespace "trading"\): memory 64Gi is asked for a container without a memory limit'
	refused_hook "CPUs without a CPU limit" h-nolim none \
		'{"numaplace.io/qos":"LS","numaplace.io/cpus":"2",'"$closed"'}' \
		'cpu 2 is asked for a container without a CPU limit \(its request: none\)'
	refused_hook "LSE from the default namespace" h-def one \
		'{"numaplace.io/qos":"LSE","numaplace.io/cpus":"1","numaplace.io/on-failure":"fail-closed"}' \
		'oci_hook\.policy\.default: qos LSE is not allowed for this container \(the rule allows LS, BE\)'
	refused_hook "a partition from a pod" h-part one \
		'{"numaplace.io/qos":"LSE","numaplace.io/cpus":"1","numaplace.io/isolation":"partition",'"$closed"'}' \
		'h-part rejected \(resource policy\): oci_hook\.policy\.rules\[0\] \(namespace "trading"\): isolation "partition" is not allowed for this container \(numaplace\.io/isolation\)'
	refused_hook "the name of an existing workload" h-name one \
		'{"numaplace.io/workload":"web","numaplace.io/qos":"LS",'"$closed"'}' \
		'numaplaced refused web: name: workload "web" is already admitted'
	for v in -2 99999999 1e400; do
		before=$(settled)
		hook h-bad one '{"numaplace.io/qos":"LS","numaplace.io/cpus":"'$v'",'"$closed"'}'
		rc=$?
		check "hook, cpus \"$v\": refused, exit 2 ($rc), naming the annotation" \
			grep -q 'annotations.numaplace.io/cpus' "$tmp/h-bad.hook"
		check "  nothing changed" test "$(snap)" = "$before" -a $rc -eq 2
	done
	check "the node's other workloads untouched by the hook's requests" \
		test "$(cpus numaplace.slice/web) $(cpus np/ok1) $(cpus host.slice)" = "$WEB0 $OK10 $HOST0"
	# fail-open: what the resources give (LS, the request 100m), not the 6
	hook h-open tenth '{"numaplace.io/qos":"LSE","numaplace.io/cpus":"6","io.kubernetes.pod.namespace":"trading"}'
	rc=$?
	check "hook, fail-open: exit 0 ($rc), admitted as LS on what the resources give ($(head -c 300 "$tmp/h-open.hook"))" \
		grep -q 'fail-open: h-open rejected (resource policy): .*admitted as LS' "$tmp/h-open.hook"
	check "  numaplaced has it as LS with 100m" \
		jqs '.workloads[] | select(.name == "h-open" and .qos == "LS")' <<<"$(status)"
	check "  the spec it holds asks 100m" grep -q '"cpu": "100m"' <<<"$("$np" state "$tmp/state")"
	printf '{"ociVersion":"1.0.2","id":"h-open","pid":null,"bundle":"%s","status":"stopped"}' "$tmp/b-tenth" |
		"$build/numaplace-oci-hook" poststop -c "$tmp/hook.json" >/dev/null 2>&1
fi

# ---- 2. files numaplaced trusts ----------------------------------------------------------
cp "$tmp/specs/web.json" "$tmp/web2.json"
sed -i 's/"web"/"web2"/g; s/"2"/"1"/' "$tmp/web2.json"
chmod 0664 "$tmp/web2.json"
mv "$tmp/web2.json" "$tmp/specs/web2.json"
check "a group-writable spec file is refused, naming it" \
	inlog "spec $tmp/specs/web2.json: mode 0664 lets its group (gid $(id -g)) write it: numaplaced reads only files that root owns"
sleep 0.5
check "  and not admitted" test -z "$(jq -r '.workloads[] | select(.name == "web2") | .name' <<<"$(status)")"
chmod 0644 "$tmp/specs/web2.json"
check "  made 0644, it is admitted" inlog 'admitted web2'
rm "$tmp/specs/web2.json"
check "  removed, released" inlog 'released web2 (spec file removed)'
if [ "$(id -u)" = 0 ]; then
	cp "$tmp/specs/web.json" "$tmp/specs/web3.json"
	sed -i 's/"web"/"web3"/g' "$tmp/specs/web3.json"
	chown 65534 "$tmp/specs/web3.json"
	check "a spec file of another user is refused" \
		inlog "spec $tmp/specs/web3.json: owned by uid 65534, not root"
	rm "$tmp/specs/web3.json"
fi
before=$(settled)
chmod 0666 "$tmp/specs/web.json"
check "an admitted spec file made writable by anyone: refused" \
	inlog "spec $tmp/specs/web.json: mode 0666 lets anyone write it"
sleep 1
check "  its workload kept as it was (not released, cgroup unchanged)" \
	test "$(snap)" = "$before" -a "$(cpus numaplace.slice/web)" = "$WEB0"
chmod 0644 "$tmp/specs/web.json"
chmod 0775 "$tmp/specs"
check "a group-writable spec directory: no spec file is read" \
	inlog "spec directory $tmp/specs: mode 0775 lets its group"
sleep 1
check "  nothing released or changed" test "$(snap)" = "$before"
chmod 0755 "$tmp/specs"
# the configuration: at a reload, and for the hook
chmod 0666 "$tmp/np.json"
kill -HUP "$dpid"
check "a reload of a configuration anyone may write: refused, the running one kept" \
	inlog "reload: $tmp/np.json: mode 0666 lets anyone write it"
out=$("$build/numaplace-oci-hook" createRuntime -c "$tmp/np.json" </dev/null 2>&1)
check "the hook refuses it too, exit 2 ($out)" grep -q "$tmp/np.json: mode 0666 lets anyone write it" <<<"$out"
out=$("$build/numaplaced" --check-config -c "$tmp/np.json" 2>&1)
rc=$?
check "numaplaced --check-config refuses it, exit 2 ($rc)" test $rc -eq 2
check "  naming the file and what to do" \
	grep -q "numaplaced: $tmp/np.json: mode 0666 lets anyone write it: numaplaced reads only files that root owns and only root can write (chmod go-w $tmp/np.json)" <<<"$out"
chmod 0644 "$tmp/np.json"
daemon_stop
check "daemon stops cleanly under valgrind (exit $?)" test $? -eq 0
# the state: a start refuses it, and changes nothing
before=$(saved)
chmod 0606 "$tmp/state/state.json"
# (timeout: a numaplaced that accepts it would run on)
timeout 60 "${VG[@]}" "$build/numaplaced" -c "$tmp/np.json" >"$tmp/start.out" 2>&1
rc=$?
check "a state file others may write: numaplaced refuses to start, exit 2 ($rc)" test $rc -eq 2
check "  naming it" grep -q "state file $tmp/state/state.json: mode 0606 lets anyone write it" "$tmp/start.out"
check "  nothing changed" test "$(saved)" = "$before" -a "$(cpus numaplace.slice/web)" = "$WEB0"
chmod 0600 "$tmp/state/state.json"
chmod 0770 "$tmp/state"
timeout 20 "$build/numaplaced" -c "$tmp/np.json" >"$tmp/start.out" 2>&1
check "a state directory its group may write: refused, exit $?" \
	grep -q "state directory $tmp/state: mode 0770 lets its group" "$tmp/start.out"
chmod 0700 "$tmp/state"
# the records of host changes (runtime_dir): trusted as the state is
mkdir -p "$tmp/run"
echo '{"version": 1, "units": {}}' >"$tmp/run/host-units.json"
chmod 0666 "$tmp/run/host-units.json"
timeout 20 "$build/numaplaced" -c "$tmp/np.json" >"$tmp/start.out" 2>&1
rc=$?
check "a record of host changes anyone may write: numaplaced refuses to start, exit 2 ($rc)" test $rc -eq 2
check "  naming it" grep -q "state file $tmp/run/host-units.json: mode 0666 lets anyone write it" "$tmp/start.out"
rm -f "$tmp/run/host-units.json"
chmod 0777 "$tmp/run"
timeout 20 "$build/numaplaced" -c "$tmp/np.json" >"$tmp/start.out" 2>&1
check "a runtime directory anyone may write: refused, exit $?" \
	grep -q "runtime directory $tmp/run: mode 0777 lets anyone" "$tmp/start.out"
chmod 0755 "$tmp/run"

# ---- 3. the control socket: socket_read_group ------------------------------------------
G=4242
jq --arg g "$G" '.socket_read_group = $g' "$tmp/np.json" >"$tmp/np-read.json"
chmod 0644 "$tmp/np-read.json"
daemon_start "$tmp/np-read.json" 077
check "with socket_read_group $G: the socket is 0660 and of group $G" \
	test "$(stat -c '%a %u %g' "$sock")" = "660 0 $G"
as() { setpriv --reuid=65534 "$@"; }
out=$(as --regid=$G --clear-groups "$np" status --socket "$sock" 2>&1)
check "a member (primary group) reads the status" grep -q 'legend:' <<<"$out"
out=$(as --regid=65534 --groups=$G "$np" export nrt --socket "$sock" 2>&1)
check "a member (supplementary group) reads the export" grep -q 'NodeResourceTopology' <<<"$out"
out=$(as --regid=$G --clear-groups "$np" release web --socket "$sock" 2>&1)
check "a member may not release ($out)" \
	grep -q 'permission denied: "release" is not a read; group 4242 may only read (status, events, export, explain)' <<<"$out"
out=$(as --regid=$G --clear-groups "$np" admit -f "$tmp/ok1.json" --socket "$sock" 2>&1)
check "  nor admit" grep -q 'permission denied: "admit" is not a read' <<<"$out"
check "  web still admitted" jqs '.workloads[] | select(.name == "web")' <<<"$(status)"
out=$(as --regid=4243 --clear-groups "$np" status --socket "$sock" 2>&1)
check "a user outside the group cannot connect ($out)" grep -qi 'permission denied' <<<"$out"
daemon_stop
check "daemon stops cleanly under valgrind (exit $?)" test $? -eq 0

# ---- 4. the shipped unit's exposure --------------------------------------------------------
unit=$(dirname "$0")/../../dist/numaplaced.service
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	out=$(systemd-analyze security --offline=true "$unit" 2>&1)
	fig=$(sed -n 's/.*Overall exposure level for numaplaced.service: \([0-9.]*\).*/\1/p' <<<"$out")
	echo "info exposure of dist/numaplaced.service: $fig"
	check "systemd-analyze security --offline: exposure $fig is at most 4.0" \
		awk -v f="$fig" 'BEGIN { exit !(f != "" && f + 0 <= 4.0) }'
	for k in CapabilityBoundingSet SystemCallFilter RestrictAddressFamilies LockPersonality \
		MemoryDenyWriteExecute RestrictRealtime RestrictNamespaces ProtectKernelModules \
		ProtectClock ProtectHostname UMask IPAddressAllow; do
		check "  the unit sets $k" grep -q "^$k=" "$unit"
	done
else
	echo "skip the exposure check: systemd-analyze has no --offline here"
fi
echo "trust-host: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "trust $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
