# Shared by the host-level daemon tests (daemon-host.sh, socket-host.sh):
# counters and checks, and setup DIR: a fake cgroup root in DIR/cg (8 CPUs,
# 2 nodes) and DIR/np.json with its spec directory, state directory and
# socket in DIR; /metrics off (tests/host/metrics-host.sh turns it on). Source it; it defines pass, fail, ok, bad, check, setup, valgrind_cmd, mkcg,
# daemon_start, daemon_stop, snap and settled.
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $*"; }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }

setup() {
	mkdir -p "$1/cg" "$1/specs"
	printf 'cpuset cpu memory\n' >"$1/cg/cgroup.controllers"
	: >"$1/cg/cgroup.subtree_control"
	: >"$1/cg/cgroup.procs"
	echo 0-7 >"$1/cg/cpuset.cpus.effective"
	echo 0-1 >"$1/cg/cpuset.mems.effective"
	cat >"$1/np.json" <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0,4",
                 "topology_policy": "restricted"},
 "topology": "$PWD/tests/data/topology/vm-2node.json",
 "reconcile_period_s": 0.2, "cgroup_root": "$1/cg", "fake_cgroup_root": true,
 "spec_dir": "$1/specs", "state_dir": "$1/state", "runtime_dir": "$1/run",
 "socket": "$1/np.sock",
 "metrics": {"listen": ""}}
JSON
}

# valgrind_cmd: VG, the command line numaplaced runs under (valgrind, a
# definite or indirect leak an error, exit 99), or empty without valgrind.
valgrind_cmd() {
	VG=()
	if command -v valgrind >/dev/null; then
		VG=(valgrind -q --leak-check=full
			--errors-for-leak-kinds=definite,indirect --error-exitcode=99)
	fi
}

# mkcg REL: a cgroup as a runtime leaves it in the fake tree $cg (made by
# someone else, with its files, all empty).
mkcg() {
	mkdir -p "$cg/$1"
	for f in cgroup.controllers cgroup.subtree_control cgroup.procs cpuset.cpus \
		cpuset.mems cpuset.cpus.effective cpuset.mems.effective; do
		: >"$cg/$1/$f"
	done
}

# daemon_start CONFIG [UMASK]: numaplaced (under $VG) with CONFIG in the
# background, its pid in dpid and its stderr added to $tmp/log; returns
# once $sock exists (10 s at the most).
daemon_start() {
	(
		[ -z "${2:-}" ] || umask "$2"
		exec "${VG[@]}" "$build/numaplaced" -c "$1" 2>>"$tmp/log"
	) &
	dpid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.1; done
}

# daemon_stop: SIGTERM to it; its exit status (valgrind's 99 on a leak).
daemon_stop() {
	kill -TERM "$dpid"
	wait "$dpid"
	local rc=$?
	dpid=
	return $rc
}

# snap: what is saved ($tmp/state) and every cpuset file of the fake tree
# $cg, as two checksums: "nothing changed" compares two of them.
saved() { cat "$tmp/state/state.json" "$tmp/state/journal" 2>/dev/null | md5sum; }
cgsnap() { (cd "$cg" && find . -name 'cpuset.*' -type f | LC_ALL=C sort | xargs cat | md5sum); }
snap() { echo "$(saved) $(cgsnap)"; }
# settled: the snapshot once two taken half a second apart agree (the
# daemon may still be saving what the last check saw it log); 10 s at most
settled() {
	local a b
	a=$(snap)
	for _ in $(seq 20); do
		sleep 0.5
		b=$(snap)
		[ "$a" = "$b" ] && { echo "$a"; return; }
		a=$b
	done
	echo "$a"
}
