#!/bin/sh
# 13-resize: in-place resize on a real cgroup v2 tree. An LSE workload
# grows 2 -> 4 -> 2 CPUs (numaplace resize) while a busy task pinned to
# one of its CPUs runs inside it: sampled all along, that task never
# leaves its CPU (/proc/PID/stat field 39, the CPU it last ran on; its
# Cpus_allowed_list always holds it), an unpinned busy task keeps both old
# CPUs in its
# Cpus_allowed_list, and the kernel's cpuset.cpus.effective of the
# workload always holds them. The shared workload gives CPUs up on the
# grow and gets them back on the shrink; a resize that cannot be met
# changes nothing and says why.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
[ "$NP_TOPO" = 2node ] || skip "written for the 2node topology"

# 2node: cpus 0-3 on node 0, 4-7 on node 1; cores {0,1} {2,3} {4,5} {6,7}.
# best-effort: a grow past node 0 may take CPUs of node 1.
CGP=$CG/numaplace.slice
ETC=/tmp/np-resize
SOCK=/run/np-resize.sock
rm -rf $ETC
mkdir -p $ETC/specs
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "best-effort",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "reconcile_period_s": 1, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state",
 "socket": "$SOCK", "verify": {"enabled": "off"}, "metrics": {"listen": ""}}
JSON
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
is_eff() { [ "$(eff "$1")" = "$2" ]; }
count_is() { [ "$(cpulist_count "$(eff "$1")")" = "$2" ]; }
# more_samples N: wait until the sampler has taken N more samples (a
# sample takes a good fraction of a second under TCG)
more_samples() {
	_want=$(($(wc -l <$ETC/mon.n) + $1))
	wait_for 60 sh -c "[ \$(wc -l <$ETC/mon.n) -ge $_want ]"
}
has_cpus() { # LIST CPU... : every CPU is in LIST
	_l=" $(cpulist_expand "$1") "
	shift
	for _c in "$@"; do
		case $_l in *" $_c "*) ;; *) return 1 ;; esac
	done
}

numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
on_exit "touch $ETC/stop; kill \$DPID \$B \$U \$M 2>/dev/null; wait \$DPID 2>/dev/null; for c in $CGP/web/ $CGP/sh/; do [ -d \$c ] && rmdir \$c; done; rmdir $CGP 2>/dev/null"
show_on_fail $ETC/log
daemon_up $DPID $SOCK $ETC/log

printf '{"name":"sh","cgroup":"sh","qos":"LS","containers":[{"name":"m","cpu":"1"}]}\n' >$ETC/sh.json
printf '{"name":"web","cgroup":"web","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' >$ETC/web.json
numaplace admit -f $ETC/sh.json --socket $SOCK >/dev/null || fail "sh was not admitted"
numaplace admit -f $ETC/web.json --socket $SOCK >/dev/null || fail "web was not admitted"
wait_for 10 is_eff web 2-3
wait_for 10 is_eff sh 0-1,4-7
log "web (LSE, 2 CPUs) on 2-3, shared sh on 0-1,4-7"

B=$(busy_in $CGP/web npbusy 2)
U=$(busy_in $CGP/web npfree)
wait_for 5 cpus_is "$B" 2
wait_for 5 cpus_is "$U" 2-3

# the sampler: any sample where the pinned task ran last elsewhere than on
# CPU 2 or may not run there, or the unpinned one or the cgroup lacks 2 or
# 3, is written to mon.bad. (Linux 6.1 resets a task's own affinity to its
# cpuset's CPUs on every cpuset.cpus write, 6.2 keeps the task's mask: the
# pinned task's Cpus_allowed_list may widen with the grow; it must never
# lose CPU 2. While its mask is CPU 2 alone it must have run last on 2;
# once widened, on a CPU of its mask, read before or after the CPU.)
(
	while [ ! -e $ETC/stop ]; do
		a0=$(pid_cpus "$B")
		c=$(awk '{ print $39 }' "/proc/$B/stat" 2>/dev/null)
		a=$(pid_cpus "$B")
		u=$(pid_cpus "$U")
		e=$(eff web)
		if [ "$a0" = 2 ] && [ "$a" = 2 ]; then
			[ "$c" = 2 ]
		else
			has_cpus "$a" 2 && [ -n "$c" ] &&
				{ has_cpus "$a0" "$c" || has_cpus "$a" "$c"; }
		fi ||
			echo "pinned task on cpu '$c', Cpus_allowed_list '$a0' then '$a'" >>$ETC/mon.bad
		has_cpus "$u" 2 3 || echo "unpinned task Cpus_allowed_list '$u'" >>$ETC/mon.bad
		has_cpus "$e" 2 3 || echo "web cpuset.cpus.effective '$e'" >>$ETC/mon.bad
		echo . >>$ETC/mon.n
		sleep 0.02
	done
) &
M=$!
wait_for 10 test -s $ETC/mon.n
more_samples 3

# --- grow 2 -> 4: the kept CPUs stay, shared yields two more -------------------
out=$(numaplace resize web --cpus 4 --socket $SOCK) || fail "resize to 4 failed: $out"
log "$out"
wait_for 10 count_is web 4
W4=$(eff web)
has_cpus "$W4" 2 3 || fail "web grew to '$W4' without its CPUs 2-3"
case "$out" in "resized web: cpuset 2-3 -> $W4") ;; *) fail "answer '$out' is not web's cpuset $W4" ;; esac
# shared holds no CPU of web now
wait_for 10 count_is sh 4
S4=$(eff sh)
for c in $(cpulist_expand "$W4"); do
	has_cpus "$S4" "$c" && fail "CPU $c is in web ($W4) and in shared sh ($S4)"
done
wait_for 5 cpus_is "$U" "$W4"
log "grown: web $W4, shared $S4; the unpinned task may use $(pid_cpus "$U")"
more_samples 3

# --- a resize that cannot be met: nothing changes ---------------------------
if numaplace resize web --cpus 8 --socket $SOCK >$ETC/r8.out 2>&1; then
	fail "a resize to 8 CPUs (2 reserved) was done: $(cat $ETC/r8.out)"
fi
grep -q "web not resized, it keeps cpuset $W4" $ETC/r8.out ||
	fail "the refusal does not say so: $(cat $ETC/r8.out)"
assert_eq "$(eff web)" "$W4" "web after a refused resize"
log "refused: $(cat $ETC/r8.out)"

# --- shrink 4 -> 2: back to the CPUs of the admission, shared widens ----------
out=$(numaplace resize web --cpus 2 --socket $SOCK) || fail "resize to 2 failed: $out"
log "$out"
assert_eq "$out" "resized web: cpuset $W4 -> 2-3" "the shrink's answer"
wait_for 10 is_eff web 2-3
wait_for 10 is_eff sh 0-1,4-7
wait_for 5 cpus_is "$U" 2-3
more_samples 3

touch $ETC/stop
wait $M 2>/dev/null
n=$(wc -l <$ETC/mon.n)
[ -s $ETC/mon.bad ] && fail "a task left its CPUs during the resize ($n samples): $(head -3 $ETC/mon.bad)"
[ "$n" -ge 10 ] || fail "only $n samples were taken"
log "$n samples: the pinned task stayed on CPU 2, the unpinned one kept 2-3"
grep -q "resized web in place" $ETC/log || fail "the daemon did not log the resize"
grep -q "released web" $ETC/log && fail "web was released during the resize"
pass "resize: LSE 2 -> 4 -> 2 in place, a busy task never left its CPUs"
