#!/bin/sh
# 30-refusals: what numaplaced must refuse, and that a refusal changes
# nothing in the kernel.
#   - Bad spec files dropped into spec_dir (unknown field, cgroup
#     "../escape", a negative CPU count, an unknown qos, an absolute cgroup
#     path) are each refused with a log line that names the field, once;
#     every cgroup's cpuset files are the same before and after, and no
#     cgroup directory appears.
#   - A cgroup path that leaves the managed parent through the file system:
#     cgroupfs refuses symlinks, so a bind mount of an outside cgroup into
#     the managed parent stands in for one; it is refused, and nothing is
#     written outside.
#   - The same specs through `numaplace admit` exit 2 naming the field.
#   - A non-root client (uid 65534, nobody) of the control socket is
#     refused: by the socket's mode (0600) and, when the socket is opened up
#     by mistake, by numaplaced itself (SO_PEERCRED), for status, admit and
#     release alike.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
HAVE_CLI=false
[ -x /bin/numaplace ] && HAVE_CLI=true

CGP=$CG/numaplace.slice
ETC=/tmp/np-refuse
SOCK=/run/np-refuse.sock
rm -rf $ETC
mkdir -p $ETC/specs $ETC/bad
if [ -d "$CGP" ]; then # left by an earlier scenario
	note "removed a leftover $CGP ($(cd "$CGP" && echo */))"
	cg_destroy numaplace.slice || fail "cannot remove the leftover $CGP"
fi
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "best-effort"},
 "reconcile_period_s": 0.3, "cgroup_parent": "numaplace.slice",
 "shared_cgroups": ["np-host.slice"],
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state", "socket": "$SOCK"}
JSON
spec() { # NAME QOS CPUS: a good spec
	printf '{"name":"%s","qos":"%s","containers":[{"name":"m","cpu":"%s"}]}\n' \
		"$1" "$2" "$3" >"$ETC/specs/.$1.tmp"
	mv "$ETC/specs/.$1.tmp" "$ETC/specs/$1.json"
}
eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
# shellcheck disable=SC2317 # called through wait_for
is_eff() { [ "$(eff "$1")" = "$2" ]; }
# every cgroup, with its cpuset files and controllers
snapshot() {
	find $CG -type d | sort | while read -r d; do
		printf '%s cpus=%s mems=%s part=%s ctl=%s\n' "${d#"$CG"}" \
			"$(cat "$d/cpuset.cpus" 2>/dev/null)" \
			"$(cat "$d/cpuset.mems" 2>/dev/null)" \
			"$(cat "$d/cpuset.cpus.partition" 2>/dev/null)" \
			"$(cat "$d/cgroup.subtree_control")"
	done
}
unchanged() { # WHAT: the tree is as in $ETC/before
	snapshot >$ETC/after
	if ! diff $ETC/before $ETC/after >$ETC/diff; then
		sed 's/^/  | /' $ETC/diff
		fail "$1 changed the cgroup tree"
	fi
}

# a host slice, so that a wrong write outside the managed parent shows too
cg_create np-host.slice cpuset
H=$(spawn_sleeper)
cg_move "$H" np-host.slice
DPID=
on_exit "cg_destroy np-host.slice"
on_exit "cg_destroy np-outside"
on_exit "cg_destroy numaplace.slice"
on_exit "umount $CGP/np-door"
# shellcheck disable=SC2016 # expanded at exit
on_exit 'kill $DPID $H $P 2>/dev/null; [ -n "$DPID" ] && wait $DPID'
numaplaced -c $ETC/numaplace.json 2>$ETC/log &
DPID=$!
show_on_fail $ETC/log
wait_for 10 test -S $SOCK

# --- a node with work on it ---------------------------------------------------
spec base LS 1
spec keep LSE 2
wait_for 10 is_eff keep 2-3
wait_for 10 sh -c "[ \"\$(cat $CG/np-host.slice/cpuset.cpus.effective)\" = \"\$(cat $CGP/base/cpuset.cpus.effective)\" ]"
P=$(spawn_sleeper)
cg_move "$P" numaplace.slice/keep
sleep 0.7 # a couple of quiet cycles
snapshot >$ETC/before
log "before: keep on $(eff keep), base and np-host.slice on $(eff base)"

# --- bad spec files -----------------------------------------------------------
# bad NAME FIELD-RE JSON: drop JSON in as NAME.json; the daemon must log a
# line naming the field, create nothing and write nothing
bad() {
	printf '%s\n' "$3" >"$ETC/bad/$1.json"
	printf '%s\n' "$2" >"$ETC/bad/$1.re"
	cp "$ETC/bad/$1.json" "$ETC/specs/.$1.tmp"
	mv "$ETC/specs/.$1.tmp" "$ETC/specs/$1.json"
	wait_for 10 grep -q "$1.json: .*$2" $ETC/log
	log "$1: $(grep "$1.json: " $ETC/log | tail -n 1)"
}
C='"containers":[{"name":"m","cpu":"2"}]'
bad unknown-field 'spec\.gpus: unknown field' \
	'{"name":"unknown-field","qos":"LSE",'"$C"',"gpus":1}'
bad unknown-cfield 'spec\.containers\[0\]\.gpu: unknown field' \
	'{"name":"unknown-cfield","qos":"LSE","containers":[{"name":"m","cpu":"2","gpu":1}]}'
bad escape 'spec\.cgroup: "\.\./escape"' \
	'{"name":"escape","cgroup":"../escape","qos":"LSE",'"$C"'}'
bad negative 'spec\.containers\[0\]\.cpu: ' \
	'{"name":"negative","qos":"LSE","containers":[{"name":"m","cpu":-2}]}'
bad negative-q 'spec\.containers\[0\]\.cpu: ' \
	'{"name":"negative-q","qos":"LSE","containers":[{"name":"m","cpu":"-1500m"}]}'
bad bad-qos 'spec\.qos: "Platinum"' \
	'{"name":"bad-qos","qos":"Platinum",'"$C"'}'
bad absolute 'spec\.cgroup: "/sys/fs/cgroup/evil"' \
	'{"name":"absolute","cgroup":"/sys/fs/cgroup/evil","qos":"LSE",'"$C"'}'
sleep 1 # several cycles with all of them in place
rep=
for n in unknown-field unknown-cfield escape negative negative-q bad-qos absolute; do
	[ -d "$CGP/$n" ] && fail "refused spec $n got a cgroup"
	c=$(grep -c "$n.json: " $ETC/log)
	[ "$c" -gt 1 ] && rep="$rep $n:${c}x"
done
[ -e "$CG/escape" ] && fail "a cgroup 'escape' appeared next to the managed parent"
[ -e "$CG/sys" ] && fail "the absolute cgroup path was created"
unchanged "the bad spec files"
[ -n "$rep" ] && fail "an unchanged bad spec is reported again every cycle (log lines after ~2 s:$rep)"

# --- a cgroup path that leaves the managed parent -------------------------------
# cgroupfs has no symlinks: the kernel refuses to create one, so no spec can
# point through one on a real cgroup2 mount.
mkdir -p $ETC/elsewhere
if ln -s $ETC/elsewhere "$CGP/np-link" 2>$ETC/ln.err; then
	bad symlink 'symlink' '{"name":"symlink","cgroup":"np-link","qos":"LSE",'"$C"'}'
	rm -f "$ETC"/bad/symlink.* $ETC/specs/symlink.json
	rm -f "$CGP/np-link"
	unchanged "a spec through a symlink"
	log "symlink in the managed parent refused"
else
	log "cgroupfs refuses symlinks ($(cat $ETC/ln.err)): nothing for a spec to follow"
fi
# The nearest real thing: a directory of the managed parent that is a bind
# mount of a cgroup outside it. numaplaced must not write outside.
cg_create np-outside cpuset
mkdir "$CGP/np-door"
mount --bind "$CG/np-outside" "$CGP/np-door" || fail "bind mount failed"
snapshot >$ETC/before
bad door 'mount point' '{"name":"door","cgroup":"np-door","qos":"LSE",'"$C"'}'
rm -f "$ETC"/bad/door.* # valid for the CLI: not one of the bad specs below
sleep 0.7
door_cpus=$(cat "$CG/np-outside/cpuset.cpus")
[ -z "$door_cpus" ] ||
	fail "numaplaced followed a bind mount ($CGP/np-door -> $CG/np-outside) and wrote cpuset.cpus '$door_cpus' outside the managed parent"
grep -q 'admitted door' $ETC/log && fail "door was admitted through a bind mount"
unchanged "a spec through a bind mount"
rm -f $ETC/specs/door.json
umount "$CGP/np-door"
rmdir "$CGP/np-door" 2>/dev/null
cg_destroy np-outside
wait_for 10 is_eff keep 2-3
sleep 0.7
snapshot >$ETC/before

# --- the same specs through the CLI ---------------------------------------------
if $HAVE_CLI; then
	nb=0
	for f in "$ETC"/bad/*.json; do
		n=$(basename "$f" .json)
		nb=$((nb + 1))
		out=$(numaplace admit -f "$f" --socket $SOCK 2>&1)
		rc=$?
		[ "$rc" = 2 ] || fail "numaplace admit -f $n.json exited $rc (want 2): $out"
		f_re=$(cat "$ETC/bad/$n.re")
		printf '%s\n' "$out" | grep -q "$f_re" ||
			fail "numaplace admit -f $n.json: '$out' does not name the field /$f_re/"
	done
	log "numaplace admit: $nb bad specs exit 2, naming the field: $out"
	unchanged "the bad specs through the CLI"
else
	note "numaplace CLI not in the initramfs: control socket checks skipped"
fi

# --- a non-root client -------------------------------------------------------------
if $HAVE_CLI; then
	grep -q '^nobody:' /etc/passwd || skip "no user nobody in /etc/passwd"
	as_nobody() { su -s /bin/sh nobody -c "$*" 2>&1; }
	printf '{"name":"intruder","qos":"LSE",%s}\n' "$C" >$ETC/intruder.json
	chmod 0644 $ETC/intruder.json
	chmod 0755 $ETC
	out=$(as_nobody "id -u; numaplace status --socket $SOCK")
	rc=$?
	assert_match "$out" '^65534' "uid of the non-root client"
	[ "$rc" != 0 ] || fail "uid 65534 got a status through a 0600 socket: $out"
	assert_match "$out" 'permission denied' "non-root status on the 0600 socket"
	log "0600 socket, uid 65534: $(printf '%s' "$out" | tail -n 1)"
	# opened up by mistake: numaplaced itself must refuse
	chmod 0666 $SOCK
	for req in "status" "admit -f $ETC/intruder.json" "release keep"; do
		out=$(as_nobody "numaplace $req --socket $SOCK")
		rc=$?
		[ "$rc" != 0 ] || fail "uid 65534 'numaplace $req' succeeded: $out"
		assert_match "$out" 'accepts requests from root only' "non-root 'numaplace $req' on a 0666 socket"
	done
	log "0666 socket, uid 65534: $(printf '%s' "$out" | tail -n 1)"
	grep -q "refused control request from uid 65534" $ETC/log ||
		fail "numaplaced did not log the refused requests"
	log "numaplaced: $(grep -c 'refused control request from uid 65534' $ETC/log) refusals logged"
	[ -d "$CGP/intruder" ] && fail "a non-root admit created a cgroup"
	sleep 0.7
	unchanged "non-root requests"
	assert_eq "$(pid_cpus "$P")" 2-3 "task in keep after the refused release"
	# root still gets through
	numaplace status --socket $SOCK >/dev/null || fail "root's status failed after the refusals"
fi

kill "$DPID"
wait "$DPID"
rc=$?
DPID=
[ "$rc" = 0 ] || fail "numaplaced exited $rc on SIGTERM"
pass "bad specs, a bind mount and non-root requests refused, cgroup tree unchanged"
