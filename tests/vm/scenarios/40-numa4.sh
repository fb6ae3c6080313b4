#!/bin/sh
# 40-numa4: the placement decision on the 4-node machine, whose distances
# are 10 local, 12 to the other node of the same socket, 20/22 across.
# Reserved CPUs 0-1 (node 0); LSE requests of 6 CPUs, which no node has.
#   A best-effort + prefer-closest-numa-nodes: the 6 CPUs span exactly two
#     nodes of one socket (distance 12) and the memory is those two nodes;
#     a task inside shows the same Cpus_allowed_list and Mems_allowed_list.
#     With node 1 taken by a 4-CPU workload, the only pair of one socket
#     that is left is {2,3}, and it is chosen over {0,2} and {0,3}.
#   B the same without prefer-closest-numa-nodes: the narrowest-then-lowest
#     mask {0,2} is chosen, across the sockets (the option is what made A).
#   C single-numa-node rejects the 6-CPU request (and admits 4 CPUs on one
#     node).
# Everything is read from cpuset.*.effective and /proc/PID/status.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 4node ] || skip "written for the 4node topology"
: "${NP_NODECPUS:?}" "${NP_DIST:?}"

CGP=$CG/numaplace.slice
ETC=/tmp/np-numa4
SOCK=/run/np-numa4.sock
rm -rf $ETC
if [ -d "$CGP" ]; then # left by an earlier scenario
	note "removed a leftover $CGP ($(cd "$CGP" && echo */))"
	cg_destroy numaplace.slice || fail "cannot remove the leftover $CGP"
fi
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
mems() { cat "$CGP/$1/cpuset.mems.effective" 2>/dev/null; }
# shellcheck disable=SC2317 # called through wait_for
wrote() { [ -n "$(cat "$CGP/$1/cpuset.cpus" 2>/dev/null)" ]; }
spec() { # NAME CPUS
	printf '{"name":"%s","qos":"LSE","containers":[{"name":"m","cpu":"%s"}]}\n' \
		"$1" "$2" >"$ETCN/specs/.$1.tmp"
	mv "$ETCN/specs/.$1.tmp" "$ETCN/specs/$1.json"
}
# the node of each CPU, as N_<cpu>
i=1
while [ "$i" -le "$NP_NODES" ]; do
	for c in $(cpulist_expand "$(np_field "$NP_NODECPUS" : "$i")"); do
		eval "N_$c=$((i - 1))"
	done
	i=$((i + 1))
done
nodes_of() { # CPULIST -> "2,3": the nodes of those CPUs
	for _c in $(cpulist_expand "$1"); do eval "echo \$N_$_c"; done |
		sort -un | tr '\n' ',' | sed 's/,$//'
}
dist() { # I J
	np_field "$(np_field "$NP_DIST" : $(($1 + 1)))" , $(($2 + 1))
}
canon_nodes() { # "2,3" -> "2-3" (the kernel's list form for two neighbours)
	case $1 in
	*,*)
		_a=${1%,*}
		_b=${1#*,}
		if [ $((_a + 1)) = "$_b" ]; then echo "$_a-$_b"; else echo "$1"; fi
		;;
	*) echo "$1" ;;
	esac
}

DPID=
on_exit "cg_destroy numaplace.slice"
# shellcheck disable=SC2016 # expanded at exit
on_exit 'kill $DPID $T 2>/dev/null; [ -n "$DPID" ] && wait $DPID'
start() { # NAME TOPOLOGY-POLICY OPTIONS-JSON
	ETCN=$ETC/$1
	mkdir -p "$ETCN/specs"
	cat >"$ETCN/numaplace.json" <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "$2", "topology_policy_options": $3},
 "reconcile_period_s": 0.3, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETCN/specs", "state_dir": "$ETCN/state", "socket": "$SOCK"}
JSON
	rm -f $SOCK
	numaplaced -c "$ETCN/numaplace.json" 2>"$ETCN/log" &
	DPID=$!
	show_on_fail "$ETCN/log"
	wait_for 20 test -S $SOCK
}
stop() {
	kill "$DPID"
	wait "$DPID"
	_rc=$?
	DPID=
	[ "$_rc" = 0 ] || fail "numaplaced exited $_rc on SIGTERM: $(tail -n 3 "$ETCN/log")"
	cg_destroy numaplace.slice || fail "cannot remove $CGP"
}
# spans2 NAME WHAT: NAME's CPUs span exactly two nodes, at distance $3
# (12: one socket), its memory is those nodes, and a task inside agrees.
# Sets NODES.
spans2() {
	_e=$(eff "$1")
	assert_eq "$(cpulist_count "$_e")" 6 "$2: CPU count of $_e"
	NODES=$(nodes_of "$_e")
	case $NODES in
	*,*,*) fail "$2: $_e spans nodes $NODES, more than two" ;;
	*,*) ;;
	*) fail "$2: $_e is on node $NODES only (no node has 6 CPUs free)" ;;
	esac
	_d=$(dist "${NODES%,*}" "${NODES#*,}")
	assert_eq "$(mems "$1")" "$(canon_nodes "$NODES")" "$2: cpuset.mems.effective of $1"
	T=$(spawn_sleeper)
	cg_move "$T" "numaplace.slice/$1"
	assert_eq "$(pid_cpus "$T")" "$_e" "$2: Cpus_allowed_list of a task in $1"
	assert_eq "$(pid_mems "$T")" "$(canon_nodes "$NODES")" "$2: Mems_allowed_list of a task in $1"
	kill "$T"
	wait_for 5 sh -c "[ ! -s $CGP/$1/cgroup.procs ]"
	log "$2: $1 on $_e = nodes $NODES (distance $_d), mems $(mems "$1"), a task inside agrees"
	DIST=$_d
}

# ---- A: best-effort + prefer-closest-numa-nodes --------------------------------
start A best-effort '{"prefer-closest-numa-nodes": true}'
spec big 6
wait_for 10 wrote big
spans2 big "A, empty node"
assert_eq "$DIST" 12 "A, empty node: distance between the nodes of big ($NODES)"
rm "$ETCN/specs/big.json"
wait_for 10 test ! -d "$CGP/big"
# node 1 taken whole: {0,1} has 2 CPUs free, {0,2} {0,3} {2,3} have 6 or 8
spec pad 4
wait_for 10 wrote pad
assert_eq "$(nodes_of "$(eff pad)")" 1 "A: node of pad ($(eff pad))"
spec big 6
wait_for 10 wrote big
spans2 big "A, node 1 taken"
assert_eq "$NODES" "2,3" "A, node 1 taken: nodes of big"
assert_eq "$DIST" 12 "A, node 1 taken: distance"
stop

# ---- B: best-effort alone ----------------------------------------------------------
start B best-effort '{}'
spec pad 4
wait_for 10 wrote pad
assert_eq "$(nodes_of "$(eff pad)")" 1 "B: node of pad ($(eff pad))"
spec big 6
wait_for 10 wrote big
spans2 big "B, node 1 taken, no prefer-closest"
assert_eq "$NODES" "0,2" "B: nodes of big without prefer-closest-numa-nodes"
stop

# ---- C: single-numa-node -------------------------------------------------------------
start C single-numa-node '{}'
spec big 6
wait_for 10 grep -q "rejected big: " "$ETCN/log"
log "C: $(grep 'rejected big: ' "$ETCN/log" | tail -n 1)"
assert_file_contains "$ETCN/log" "rejected big: .*(topology affinity|single-numa-node|NUMA)"
sleep 1
[ -d "$CGP/big" ] && fail "C: single-numa-node gave big a cgroup"
spec four 4
wait_for 10 wrote four
n4=$(nodes_of "$(eff four)")
case $n4 in *,*) fail "C: four ($(eff four)) spans nodes $n4 under single-numa-node" ;; esac
assert_eq "$(mems four)" "$n4" "C: mems of four"
log "C: big (6) rejected; four (4) admitted on $(eff four), node $n4"
stop
pass "6 CPUs: nodes of one socket with prefer-closest, {0,2} without, rejected by single-numa-node"
