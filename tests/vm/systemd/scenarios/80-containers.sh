#!/bin/bash
# h. Containers placed before they start: `numaplace oci-hook` as the
#    createRuntime and poststop hooks of Debian's crun 1.8 and podman 4.3,
#    numaplaced under the systemd driver. In the kernel's files
#    (/proc/PID/status, cpuset.cpus.effective) and in `numaplace status`:
#    1. crun, cgroupfs driver (/np/ctrN) and --systemd-cgroup
#       (numaplace.slice:np:ctr3): a container whose program's first action
#       prints Cpus_allowed_list prints exactly its exclusive set; two LSE
#       containers never share a CPU; no annotations and a fractional quota
#       get the shared pool; exit releases (CPUs back in the shared pool);
#    2. podman with the hooks.d files of dist/oci: the same check;
#    3. kill -9 of the runtime and of the container (no poststop): released
#       within one reconcile period, nothing left (status, cgroups);
#    4. malformed annotations and hook input (truncated state, missing
#       bundle): a clear error, numaplaced's state and the cgroups unchanged;
#    5. numaplaced stopped: fail-open starts the container and says so,
#       fail-closed refuses the start with the reason in crun's output;
#    6. who may ask for what (oci_hook.policy, issue 29): LSE for a
#       container given a tenth of a CPU is refused by the hook naming
#       both values; a request sent straight to the socket that states 6
#       CPUs for a cgroup whose cpu.max gives 0.1 is refused by numaplaced
#       naming the kernel's file; nothing changed.
#    The containers are Guaranteed (quota and shares as the kubelet sets
#    them) and their parents' rule lets them ask for LSE.
#    The root is the initramfs: crun runs with --no-pivot (systemd_vm.md 5).
# np-timeout: 600
. /sdtest/sdlib.sh
. /sdtest/ocilib.sh
journal_on_fail numaplaced
W=/run/np/80
mkdir -p $W
# the containers left by a failure: kill and delete them (no hooks then:
# the daemon is stopped first)
on_exit "systemctl stop numaplaced; for c in \$(crun list -q 2>/dev/null); do crun kill \$c KILL; crun delete -f \$c; done; podman rm -f -a -t 0; rm -f /etc/containers/oci/hooks.d/*numaplace*"

[ -x "$NPHOOK" ] || fail "no $NPHOOK in the image (run.sh --bin BUILD/numaplace-oci-hook)"
command -v crun >/dev/null || fail "crun is not in the image"
command -v podman >/dev/null || fail "podman is not in the image"

PERIOD=1
conf() { # ON_FAILURE
	write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": '$PERIOD',
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "off"},
  "oci_hook": {"on_failure": "'$1'", "policy": {"rules": [
    {"cgroup_parent": "np", "qos": ["LSE", "LSR", "LS", "BE"]},
    {"cgroup_parent": "numaplace.slice", "qos": ["LSE", "LSR", "LS", "BE"]}]}}'
}
conf fail-closed
start_numaplaced
ALL=$(cat /sys/fs/cgroup/cpuset.cpus.effective)
T0=$SECONDS

# ---- helpers ----------------------------------------------------------------------
# CPU lists in bash itself (sdlib's helpers run a pipeline per CPU: seconds
# per check under TCG): _ex LIST sets _E to " 0 1 2 5 "
_ex() {
	local r a b IFS=,
	_E=" "
	for r in $1; do
		[ -n "$r" ] || continue
		a=${r%-*} b=${r#*-}
		while ((a <= b)); do _E+="$a " a=$((a + 1)); done
	done
}
same() { _ex "$1"; local x=$_E; _ex "$2"; [ "$x" = "$_E" ]; }
disj() {
	local x y
	_ex "$1"; x=$_E; _ex "$2"
	for y in $_E; do [[ $x == *" $y "* ]] && return 1; done
	return 0
}
ncpus() { _ex "$1"; set -- $_E; echo $#; }
# LIST A inside LIST B
within() { _ex "$2"; local b=$_E y; _ex "$1"; for y in $_E; do [[ $b == *" $y "* ]] || return 1; done; return 0; }
sj() { "$NPC" status --json --socket "$SOCK"; }
wl_cpus() { sj | jq -r --arg n "$1" '.workloads[] | select(.name == $n) | .containers[0].cpuset'; }
wl_there() { sj | jq -e --arg n "$1" 'any(.workloads[]; .name == $n)' >/dev/null; }
wl_gone() { ! wl_there "$1"; }
shared() { sj | jq -r '.pools.shared'; }
# the daemon's view that must not change on a refused request
snapshot() { sj | jq -S '{w: [.workloads[] | {name, c: [.containers[].cpuset]}], p: .pools}'; }
# the cgroups a container could leave behind
cgtree() {
	find /sys/fs/cgroup/np /sys/fs/cgroup/numaplace.slice -type d 2>/dev/null | LC_ALL=C sort
}

# A bundle in $W/b-ID (ocilib.sh): static busybox as the rootfs, the
# hooks of the snippet, annotations ANN, cgroupsPath CG, RES merged into
# linux.resources. The program: print Cpus_allowed_list (its first
# action), then wait for /stop in its rootfs.
PROG='grep Cpus_allowed_list /proc/self/status; while [ ! -e /stop ]; do sleep 0.1; done'
oci_hooks
assert_eq "$(jq -r '.hooks | keys | sort | join(",")' $OCI_SNIP)" "createRuntime,poststop" "stages of $OCI_SNIP"
mkbundle() { # ID CG ANN [RES] [PROG]
	rm -rf "$W/b-$1"
	oci_rootfs "$W/b-$1/rootfs"
	oci_bundle "$W/b-$1" "$2" "$3" "${4:-}" "${5:-$PROG}"
}
# crun run in the foreground (crun stays the parent and runs poststop at
# the exit), in the background of this shell; output to $W/ID.out.
run_bg() { # ID [CRUN-GLOBAL-OPTION]
	: >"$W/$1.out"
	crun $2 run --no-pivot -b "$W/b-$1" "$1" >>"$W/$1.out" 2>&1 &
	echo $! >"$W/$1.crunpid"
}
printed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "$W/$1.out"; }
has_printed() { [ -n "$(printed "$1")" ]; }
ctr_pid() { crun state "$1" 2>/dev/null | jq -r .pid; }
stop_ctr() { touch "$W/b-$1/rootfs/stop"; }
# started ID: the program printed its CPUs; fails with crun's output if
# not, or as soon as crun is gone without it
printed_or_gone() { has_printed "$1" || ! kill -0 "$(cat "$W/$1.crunpid")" 2>/dev/null; }
started() {
	poll_secs 60 printed_or_gone "$1"
	has_printed "$1" || fail "$1 printed no Cpus_allowed_list: $(tr '\n' ' ' <"$W/$1.out")"
}
# check_exclusive ID NAME CGDIR N: printed = status = cgroup effective =
# /proc/PID/status, N CPUs, not the reserved CPU 0
check_exclusive() {
	local p s e pid
	p=$(printed "$1")
	s=$(wl_cpus "$2")
	e=$(cat "$3/cpuset.cpus.effective" 2>/dev/null)
	pid=$(ctr_pid "$1")
	[ -n "$s" ] || fail "$1: no workload $2 in numaplace status: $(sj | jq -c '[.workloads[].name]')"
	same "$p" "$s" || fail "$1: the program printed Cpus_allowed_list $p, status says $2 has $s"
	same "$e" "$s" || fail "$1: $3/cpuset.cpus.effective is '$e', status says $s"
	same "$(pid_cpus "$pid")" "$s" || fail "$1: /proc/$pid/status Cpus_allowed_list $(pid_cpus "$pid"), want $s"
	assert_eq "$(ncpus "$p")" "$4" "$1: number of CPUs printed ($p)"
	disj "$p" 0 || fail "$1 runs on the reserved CPU 0 ($p)"
	disj "$(prop_cpus system.slice)" "$p" || fail "$1: system.slice AllowedCPUs $(prop_cpus system.slice) holds $p"
	log "$1: printed $p = status $2 $s = $3 effective $e = /proc/$pid"
}
# released NAME CPUS: the workload is gone and its CPUs are in the shared pool
back_in_shared() { wl_gone "$1" && within "$2" "$(shared)"; }
# released NAME CPUS: seen released by a look that began within two
# periods (+2 s: a status call takes up to a second or two under TCG); DT
# the seconds from the call to the start of that look
released() {
	local t=$SECONDS t1
	while :; do
		t1=$SECONDS
		back_in_shared "$1" "$2" && break
		((SECONDS - t <= PERIOD * 2 + 2)) ||
			fail "$1 not released after $((SECONDS - t)) s: status $(sj | jq -c '[.workloads[] | {name, c: .containers[0].cpuset}]'), shared $(shared), want $2 in it"
		sleep 0.2
	done
	DT=$((t1 - t))
}

# ---- 1. crun, cgroupfs driver: two LSE containers and a shared one -----------------
mkbundle ctr1 /np/ctr1 "$(lse ctr1 2)" "$(guar 2)"
mkbundle ctr2 /np/ctr2 "$(lse ctr2 2)" "$(guar 2)"
run_bg ctr1
started ctr1
check_exclusive ctr1 ctr1 /sys/fs/cgroup/np/ctr1 2
run_bg ctr2
started ctr2
check_exclusive ctr2 ctr2 /sys/fs/cgroup/np/ctr2 2
C1=$(printed ctr1) C2=$(printed ctr2)
disj "$C1" "$C2" || fail "ctr1 ($C1) and ctr2 ($C2) share a CPU"
disj "$(cat /sys/fs/cgroup/np/ctr1/cpuset.cpus.effective)" "$(cat /sys/fs/cgroup/np/ctr2/cpuset.cpus.effective)" ||
	fail "the cgroups of ctr1 and ctr2 share a CPU"
disj "$(shared)" "$C1,$C2" || fail "the shared pool $(shared) holds exclusive CPUs ($C1,$C2)"

# no annotations, a quota of half a CPU: the shared pool; the workload is
# named after the first 12 characters of the container id
mkbundle ctr4sharedabcdef /np/ctr4 '{}' '{"cpu": {"quota": 50000, "period": 100000, "shares": 512}}'
SH0=$(shared)
run_bg ctr4sharedabcdef
started ctr4sharedabcdef
P4=$(printed ctr4sharedabcdef)
same "$P4" "$SH0" || fail "ctr4 (no annotations, 0.5 CPU) printed $P4, the shared pool is $SH0"
same "$(cat /sys/fs/cgroup/np/ctr4/cpuset.cpus.effective)" "$SH0" ||
	fail "ctr4's cpuset.cpus.effective $(cat /sys/fs/cgroup/np/ctr4/cpuset.cpus.effective), the shared pool is $SH0"
disj "$P4" "$C1,$C2" || fail "ctr4 ($P4) runs on exclusive CPUs ($C1,$C2)"
wl_there ctr4sharedab || fail "no workload ctr4sharedab (first 12 characters of the id): $(sj | jq -c '[.workloads[].name]')"
log "ctr4 (no annotations, quota 0.5): printed $P4 = shared pool; workload ctr4sharedab"

# crun --systemd-cgroup: the scope numaplace.slice/np-ctr3.scope, the
# container's cgroup its sub-cgroup "container"
mkbundle ctr3 numaplace.slice:np:ctr3 "$(lse ctr3 1)" "$(guar 1)"
run_bg ctr3 --systemd-cgroup
started ctr3
check_exclusive ctr3 ctr3 /sys/fs/cgroup/numaplace.slice/np-ctr3.scope/container 1
C3=$(printed ctr3)
disj "$C3" "$C1,$C2" || fail "ctr3 ($C3) shares a CPU with ctr1/ctr2 ($C1,$C2)"
try_for 10 cpus_is "$(ctr_pid ctr4sharedabcdef)" "$(shared)" ||
	fail "ctr4's task is on $(pid_cpus "$(ctr_pid ctr4sharedabcdef)") after ctr3's admission, shared pool $(shared)"

# exit (the program ends; crun runs poststop): released
for c in ctr1 ctr2 ctr4sharedabcdef ctr3; do stop_ctr $c; done
for c in ctr1 ctr2 ctr4sharedabcdef ctr3; do
	wait "$(cat $W/$c.crunpid)" || fail "crun run $c exited $?: $(tr '\n' ' ' <$W/$c.out)"
done
released ctr1 "$C1"
dt1=$DT
released ctr2 "$C2"
dt2=$DT
released ctr3 "$C3"
dt3=$DT
wl_gone ctr4sharedab || fail "ctr4sharedab still in status after its exit"
[ ! -d /sys/fs/cgroup/np/ctr1 ] && [ ! -d /sys/fs/cgroup/numaplace.slice/np-ctr3.scope ] ||
	fail "container cgroups left: $(cgtree | tr '\n' ' ')"
try_for 10 prop_cpus_is system.slice "$ALL" || fail "system.slice AllowedCPUs $(prop_cpus system.slice) after the exits, want $ALL"
log "exit released ctr1/ctr2/ctr3 (${dt1}/${dt2}/${dt3} s after crun returned); shared pool $(shared); system.slice $(prop_cpus system.slice)"
log "part 1 (crun) took $((SECONDS - T0)) s"

# ---- 2. podman with the hooks.d files of dist/oci -----------------------------------
T1=$SECONDS
oci_hooksd
log "podman hooks.d: $(cat /etc/containers/oci/hooks.d/50-numaplace-* | jq -c '{s: .stages, a: .hook.args, w: .when}' | tr '\n' ' ')"
mkbundle pod1 x '{}'
rm -f $W/pod1.out
podman run --rm --name pod1 --network none --cgroup-parent numaplace.slice \
	--cpus 2 --cpu-shares 2048 \
	--annotation numaplace.io/qos=LSE --annotation numaplace.io/cpus=2 \
	--annotation numaplace.io/workload=pod1 \
	--rootfs $W/b-pod1/rootfs /bin/sh -c "$PROG" >$W/pod1.out 2>&1 &
PODPID=$!
poll_secs 120 has_printed pod1 || fail "podman run printed no Cpus_allowed_list in 120 s: $(tr '\n' ' ' <$W/pod1.out); the hook's log: $(tail -n 3 /run/numaplace/oci-hook.log 2>/dev/null | tr '\n' ' ')"
P=$(printed pod1)
S=$(wl_cpus pod1)
cg=$(ls -d /sys/fs/cgroup/numaplace.slice/libpod-*.scope/container 2>/dev/null | head -n 1)
[ -n "$cg" ] || fail "no libpod-*.scope/container below numaplace.slice: $(cgtree | tr '\n' ' ')"
same "$P" "$S" || fail "podman: the program printed $P, status says pod1 has '$S'"
same "$(cat $cg/cpuset.cpus.effective)" "$S" || fail "podman: $cg effective $(cat $cg/cpuset.cpus.effective), status $S"
assert_eq "$(ncpus "$P")" 2 "podman: CPUs printed ($P)"
log "podman: printed $P = status pod1 = $cg effective"
stop_ctr pod1
wait $PODPID || fail "podman run exited $?: $(tr '\n' ' ' <$W/pod1.out)"
released pod1 "$P"
dtp=$DT
log "podman: released ${dtp} s after podman returned; part 2 took $((SECONDS - T1)) s"

# ---- 3. kill -9 of the runtime and of the container: no poststop -----------------------
T2=$SECONDS
# systemd driver: the scope empties and systemd removes it
mkbundle ctr5 numaplace.slice:np:ctr5 "$(lse ctr5 2)" "$(guar 2)"
run_bg ctr5 --systemd-cgroup
started ctr5
C5=$(printed ctr5)
cp5=$(ctr_pid ctr5)
kill -9 "$(cat $W/ctr5.crunpid)"
kill -9 "$cp5"
{ wait "$(cat $W/ctr5.crunpid)"; } 2>/dev/null
t=$SECONDS
poll_secs 30 test ! -d /sys/fs/cgroup/numaplace.slice/np-ctr5.scope || fail "np-ctr5.scope still there 30 s after kill -9"
dcg=$((SECONDS - t))
released ctr5 "$C5"
dt5=$DT
rm -rf /run/crun/ctr5 # crun's state (no delete: it would run poststop)
log "ctr5 (systemd): crun and the container killed; scope gone after ${dcg} s, released ${dt5} s later (period $PERIOD s)"
# cgroupfs: the runtime's cgroup is removed by hand (what a runtime's
# garbage collection does), crun's state too, no poststop
mkbundle ctr6 /np/ctr6 "$(lse ctr6 2)" "$(guar 2)"
run_bg ctr6
started ctr6
C6=$(printed ctr6)
cp6=$(ctr_pid ctr6)
kill -9 "$(cat $W/ctr6.crunpid)"
kill -9 "$cp6"
{ wait "$(cat $W/ctr6.crunpid)"; } 2>/dev/null
poll_secs 10 test ! -e /proc/$cp6 || fail "ctr6's pid $cp6 survives kill -9"
wl_there ctr6 || fail "ctr6 released while its cgroup still exists"
rmdir /sys/fs/cgroup/np/ctr6 || fail "rmdir /sys/fs/cgroup/np/ctr6: $(cat /sys/fs/cgroup/np/ctr6/cgroup.procs)"
rm -rf /run/crun/ctr6
released ctr6 "$C6"
dt6=$DT
log "ctr6 (cgroupfs): killed, cgroup removed by hand: released after ${dt6} s (period $PERIOD s)"
left=$(cgtree | grep -v -e '^/sys/fs/cgroup/np$' -e '^/sys/fs/cgroup/numaplace.slice$' \
	-e '/numaplace-workloads.scope' || true)
[ -z "$left" ] || fail "cgroups left after the kills: $left"
assert_eq "$(sj | jq -r '[.workloads[].name] | join(",")')" "" "workloads in status after the kills"
same "$(shared)" "$ALL" || fail "shared pool after the kills: $(shared), want $ALL"
log "part 3 took $((SECONDS - T2)) s"

# ---- 4. malformed input: a clear error, nothing changed ----------------------------------
T3=$SECONDS
before=$(snapshot)
tree0=$(cgtree)
BIG=$(head -c 10240 /dev/zero | tr '\0' 7)
bad_run() { # ID ANNOTATIONS ERE-EXPECTED-IN-OUTPUT [RES]
	mkbundle "$1" "/np/$1" "$2" "${4:-}"
	: >"$W/$1.out"
	crun run --no-pivot -b "$W/b-$1" "$1" >>"$W/$1.out" 2>&1 && fail "$1: crun run succeeded with $3 (fail-closed): $(tr '\n' ' ' <$W/$1.out)"
	! has_printed "$1" || fail "$1: the program ran: $(cat $W/$1.out)"
	grep -Eq -- "$3" "$W/$1.out" || fail "$1: crun's output does not name the error (/$3/): $(tr '\n' ' ' <$W/$1.out | head -c 600)"
	log "$1: refused: $(grep -E -- "$3" "$W/$1.out" | head -n 1 | head -c 300)"
	crun delete -f "$1" >/dev/null 2>&1
	rmdir /sys/fs/cgroup/np/$1 2>/dev/null
}
bad_run bad1 "$(lse bad1 -2)" 'numaplace\.io/cpus'
bad_run bad2 '{"numaplace.io/qos": "GOLD", "numaplace.io/cpus": "1"}' 'numaplace\.io/qos'
bad_run bad3 '{"numaplace.io/qos": "LSE", "numaplace.io/cpus": "'$BIG'"}' 'numaplace\.io/cpus'
bad_run bad4 '{"numaplace.io/qos": "LSE", "numaplace.io/cpus": "1", "numaplace.io/workload": "'$BIG'"}' 'numaplace\.io/workload'
# the issue's tenant: six exclusive CPUs for a container given a tenth of
# one (quota 10000 / period 100000, shares 102)
bad_run bad5 "$(lse bad5 6)" 'bad5 rejected \(resource policy\): oci_hook\.policy\.rules\[0\] \(cgroup_parent /np\): cpu 6 is above the container.s CPU limit of 100m' \
	'{"cpu": {"quota": 10000, "period": 100000, "shares": 102}}'
# the hook by hand: a truncated state, a bundle that does not exist
mkbundle hand /np/hand "$(lse hand 1)" "$(guar 1)"
st='{"ociVersion":"1.0.2","id":"hand","pid":'$$',"root":"rootfs","bundle":"'$W/b-hand'","status":"created","annotations":{"numaplace.io/qos":"LSE"'
hand() { # WHAT STDIN ERE
	local rc=0
	printf '%s' "$2" | "$NPHOOK" createRuntime >$W/hand.out 2>&1 || rc=$?
	[ $rc != 0 ] || fail "oci-hook createRuntime with $1 exited 0 (fail-closed): $(cat $W/hand.out)"
	grep -Eiq -- "$3" $W/hand.out || fail "oci-hook with $1: the message does not say it (/$3/): $(cat $W/hand.out)"
	log "oci-hook with $1: exit $rc: $(head -n 1 $W/hand.out | head -c 300)"
}
hand "a truncated state" "$st" 'state|json|stdin'
hand "an empty stdin" "" 'state|json|stdin'
hand "a missing bundle" '{"ociVersion":"1.0.2","id":"hand","pid":'$$',"bundle":"/nonexistent/b","status":"created","annotations":{}}' '/nonexistent/b'
# the same sent straight to the socket, as a client that bypasses the hook
# would, stating 6 CPUs for a cgroup whose cpu.max gives 0.1: numaplaced
# refuses, naming the kernel's file
echo +cpu >/sys/fs/cgroup/np/cgroup.subtree_control 2>/dev/null
mkdir /sys/fs/cgroup/np/hostile || fail "mkdir /sys/fs/cgroup/np/hostile"
echo "10000 100000" >/sys/fs/cgroup/np/hostile/cpu.max ||
	fail "cpu.max of /np/hostile (np's subtree_control: $(cat /sys/fs/cgroup/np/cgroup.subtree_control))"
printf '{"name":"hostile","qos":"LSE","containers":[{"name":"main","cpu":"6"}],"container":{"id":"hostile","cgroup":"/np/hostile","limits":{"cpu":"6"},"requests":{"cpu":"6"}}}' >$W/hostile.json
out=$("$NPC" admit -f $W/hostile.json --socket "$SOCK" 2>&1) && fail "a request stating 6 CPUs for a cgroup of 0.1 was admitted: $out"
grep -q 'cpu 6 is above the container.s CPU limit of 100m (cpu.max of /np/hostile: 10000 100000)' <<<"$out" ||
	fail "the socket's refusal does not name the kernel's limit: $out"
log "socket, stated 6 CPUs, cpu.max 0.1: $out"
rmdir /sys/fs/cgroup/np/hostile
after=$(snapshot)
[ "$before" = "$after" ] || fail "numaplaced's state changed by refused requests: before $before, after $after"
[ "$tree0" = "$(cgtree)" ] || fail "cgroups changed by refused requests: before $tree0, after $(cgtree)"
try_for 5 prop_cpus_is system.slice "$ALL" || fail "system.slice AllowedCPUs $(prop_cpus system.slice) after refused requests"
log "part 4 took $((SECONDS - T3)) s"

# ---- 5. numaplaced stopped: fail-open and fail-closed -----------------------------------
T4=$SECONDS
systemctl stop numaplaced
open_run() { # ID ANNOTATIONS
	mkbundle "$1" "/np/$1" "$2" "$(guar 1)" 'grep Cpus_allowed_list /proc/self/status'
	: >"$W/$1.out"
	crun run --no-pivot -b "$W/b-$1" "$1" >>"$W/$1.out" 2>&1 || fail "$1: crun run failed under fail-open: $(tr '\n' ' ' <$W/$1.out)"
	has_printed "$1" || fail "$1: the program did not run: $(cat $W/$1.out)"
	grep -Eiq 'fail-open' "$W/$1.out" || fail "$1: fail-open not said in crun's output: $(tr '\n' ' ' <$W/$1.out)"
	log "$1: started in $(printed "$1") (fail-open): $(grep -Ei 'fail-open' "$W/$1.out" | head -n 1 | head -c 300)"
}
closed_run() { # ID ANNOTATIONS
	mkbundle "$1" "/np/$1" "$2" "$(guar 1)" 'grep Cpus_allowed_list /proc/self/status'
	: >"$W/$1.out"
	crun run --no-pivot -b "$W/b-$1" "$1" >>"$W/$1.out" 2>&1 && fail "$1: crun run succeeded under fail-closed: $(tr '\n' ' ' <$W/$1.out)"
	! has_printed "$1" || fail "$1: the program ran under fail-closed: $(cat $W/$1.out)"
	# the hook's own words (crun's "error executing hook" names the path)
	grep -Eiq 'fail-closed|numaplaced' "$W/$1.out" || fail "$1: crun's output does not say why: $(tr '\n' ' ' <$W/$1.out)"
	log "$1: refused (fail-closed): $(grep -Ei 'fail-closed|numaplaced' "$W/$1.out" | head -n 1 | head -c 300)"
	crun delete -f "$1" >/dev/null 2>&1
	[ -d /sys/fs/cgroup/np/$1 ] && note "$1: crun left /sys/fs/cgroup/np/$1 after the refused start" && rmdir /sys/fs/cgroup/np/$1
}
# node config fail-closed: the annotation fail-open wins; none: refused
open_run open1 "$(lse open1 1 '"numaplace.io/on-failure": "fail-open"')"
closed_run closed1 "$(lse closed1 1)"
# node config fail-open: none: started; the annotation fail-closed wins
sed -i 's/"on_failure": "fail-closed"/"on_failure": "fail-open"/' $CONF
open_run open2 "$(lse open2 1)"
closed_run closed2 "$(lse closed2 1 '"numaplace.io/on-failure": "fail-closed"')"
log "part 5 took $((SECONDS - T4)) s; the scenario $((SECONDS - T0)) s after numaplaced started"
pass
