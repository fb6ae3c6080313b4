#!/bin/sh
# np-timeout: 600
# 20-crash: numaplaced is killed with SIGKILL at >= 50 random points of a
# stream of admissions, resizes and releases (spec files written, rewritten
# with another CPU count and removed while it runs, reconcile_period_s
# 0.2), and restarted each time. `make soak` runs it with 600 kills (about
# 1,050 operations). After every
# restart, read from the kernel (cpuset.*.effective, /proc/PID/status):
#   - no CPU is in two exclusive (LSE) workload cgroups, none has a
#     reserved CPU, and the shared workloads hold exactly the rest;
#   - every cgroup below the managed parent belongs to a spec file or an
#     acknowledged socket admission, every shared spec has its cgroup,
#     every LSE spec that fits in the free CPUs has its cgroup, every LSE
#     cgroup has the CPUs it asked for and the memory nodes of those CPUs;
#   - allocations never move: an LSE cgroup whose spec was not touched has
#     the cpuset it had when the daemon was killed (frozen with SIGSTOP just
#     before the SIGKILL), and a task pinned at the start never moves;
#   - the daemon loads the state file it left behind (the workload count
#     it had, less those whose spec was removed in that round);
#   - write-ahead: every LSE cpuset in the kernel at a kill is in the state
#     file;
#   - with the numaplace CLI: admissions and releases sent through the
#     control socket (in the background, the kill comes meanwhile) hold
#     after the restart once numaplaced acknowledged them.
# Then four restarts with a known history (the spec directory and the
# cgroups are the truth at start too):
#   R1 a spec removed while numaplaced is down is released;
#   R2 a spec changed while it is down is admitted again as changed;
#   R3 a released cgroup that still has a task stays off exclusive CPUs
#      after a restart;
#   R4 an allocation written to the cgroup but never saved (state
#      directory read-only, then SIGKILL) does not leave its CPUs in a cgroup
#      while someone else gets them;
#   R5 an admission through the socket while the state cannot be saved is
#      refused, or holds after a SIGKILL if it was acknowledged.
# Kill count: np.crash_kills (default 50); np.crash_down_adds=0 stops the
# random spec additions while the daemon is down. A failure of the random
# kills still runs R1-R5; the result lists every failure.
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

[ -x /bin/numaplaced ] || skip "numaplaced is not in the initramfs"
: "${NP_CPUS:?}" "${NP_NODECPUS:?}"
KILLS=$(np_param np.crash_kills 50)
DOWN_ADDS=$(np_param np.crash_down_adds 1)
HAVE_CLI=false
[ -x /bin/numaplace ] && HAVE_CLI=true
$HAVE_CLI || note "numaplace CLI not in the initramfs: socket admissions and R5 skipped"

CGP=$CG/numaplace.slice
ETC=/tmp/np-crash
SOCK=/run/np-crash.sock
RESERVED=" 0 1 "
rm -rf $ETC
mkdir -p $ETC/specs $ETC/snap $ETC/state
if [ -d "$CGP" ]; then # left by an earlier scenario
	note "removed a leftover $CGP ($(cd "$CGP" && echo */))"
	cg_destroy numaplace.slice || fail "cannot remove the leftover $CGP"
fi
# the state directory is a file system of its own, so that R4 can make it
# read-only
mount -t tmpfs -o size=4m,mode=0700 np-crash-state $ETC/state ||
	fail "cannot mount a tmpfs on $ETC/state"
# The live topology, read once: a JSON topology starts the daemon in half
# the time of an hwloc discovery under TCG.
TOPO=live
if $HAVE_CLI && numaplace topology --json >$ETC/topology.json 2>/dev/null; then
	TOPO=$ETC/topology.json
fi
cat >$ETC/numaplace.json <<JSON
{"node_policy": {"cpu_policy": "static", "reserved_cpus": "0-1",
                 "topology_policy": "best-effort",
                 "cpu_policy_options": {"full-pcpus-only": true}},
 "topology": "$TOPO",
 "reconcile_period_s": 0.2, "cgroup_parent": "numaplace.slice",
 "spec_dir": "$ETC/specs", "state_dir": "$ETC/state", "socket": "$SOCK"}
JSON

# Workloads: e0 (LSE) and s0 (LS) stay and hold a task each; the others
# come and go. More LSE CPUs are asked for than there are, so some specs
# are rejected and retried until others leave.
if [ "$NP_CPUS" -ge 16 ]; then
	TOGGLE="e1 e2 e3 e4 e5 e6 s1"
else
	TOGGLE="e1 e2 e3 s1"
fi
base_size() { # NAME -> CPUs it asks for when added
	case $1 in e3 | e5) echo 4 ;; e* | k*) echo 2 ;; *) echo 1 ;; esac
}
size_of() { # NAME -> CPUs its spec asks for now (a resize changes it)
	if [ -f "$ETC/specs/$1.json" ]; then
		sed -n 's/.*"cpu":"\([0-9]*\)".*/\1/p' "$ETC/specs/$1.json"
	else
		base_size "$1"
	fi
}
qos_of() { case $1 in e*) echo LSE ;; *) echo LS ;; esac; }
spec_write() { # NAME QOS CPUS
	printf '{"name":"%s","qos":"%s","containers":[{"name":"m","cpu":"%s"}]}\n' \
		"$1" "$2" "$3" >"$ETC/specs/.$1.tmp"
	mv "$ETC/specs/.$1.tmp" "$ETC/specs/$1.json"
}
spec_add() { spec_write "$1" "$(qos_of "$1")" "$(base_size "$1")"; }
spec_del() { rm -f "$ETC/specs/$1.json"; }
has_spec() { [ -f "$ETC/specs/$1.json" ]; }
toggle() { # NAME: add, resize or remove its spec; prints +NAME, ~NAME or -NAME
	if has_spec "$1"; then
		# a third of the changes to an LSE spec are resizes (2 <-> 4
		# CPUs: resized in place, or refused and kept)
		case $1 in e*) if [ "$(rnd 3)" = 0 ]; then
			if [ "$(size_of "$1")" = 2 ]; then spec_write "$1" LSE 4; else spec_write "$1" LSE 2; fi
			printf ' ~%s' "$1"
			return
		fi ;; esac
		spec_del "$1"
		printf ' -%s' "$1"
	else
		spec_add "$1"
		printf ' +%s' "$1"
	fi
}
NOPS=0
# k1, k2: LSE workloads admitted and released through the control socket
# (numaplace admit/release), in the background while the kill comes. What
# numaplaced acknowledged must hold after the restart. $ETC/k/NAME.want is
# "cpus LIST" (admitted on LIST), "absent", or "unknown" (no answer before
# the kill: the restarted daemon decides).
SOCKNAMES=
if $HAVE_CLI; then
	SOCKNAMES="k1 k2"
	mkdir -p $ETC/k
	for nm in $SOCKNAMES; do
		printf '{"name":"%s","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' \
			"$nm" >"$ETC/k/$nm.json"
		echo absent >"$ETC/k/$nm.want"
	done
fi
CLI=
sock_op() { # NAME: admit or release it through the socket, in the background
	read -r _want _x <"$ETC/k/$1.want"
	if [ "$_want" = cpus ]; then
		echo - >"$ETC/k/$1.op"
		numaplace release "$1" --socket $SOCK >"$ETC/k/$1.out" 2>&1 &
	else
		echo + >"$ETC/k/$1.op"
		numaplace admit -f "$ETC/k/$1.json" --socket $SOCK >"$ETC/k/$1.out" 2>&1 &
	fi
	CLI="$CLI $!"
}
sock_answer() { # NAME: what the answer to this round's request means
	read -r _op <"$ETC/k/$1.op"
	if [ "$_op" = + ] && _l=$(grep "^admitted $1: cpuset " "$ETC/k/$1.out"); then
		_l=${_l#*cpuset }
		echo "cpus ${_l%% *}" >"$ETC/k/$1.want"
		nack=$((nack + 1))
	elif [ "$_op" = + ] && grep -q "^rejected $1: " "$ETC/k/$1.out"; then
		echo absent >"$ETC/k/$1.want"
	elif [ "$_op" = - ] && grep -q "^released $1\$" "$ETC/k/$1.out"; then
		echo absent >"$ETC/k/$1.want"
		nack=$((nack + 1))
	else
		echo unknown >"$ETC/k/$1.want"
		nunk=$((nunk + 1))
	fi
}
wanted() { # NAME: a socket workload that should be there
	[ -f "$ETC/k/$1.want" ] && read -r _w _x <"$ETC/k/$1.want" && [ "$_w" = cpus ]
}

rnd() { # N -> 0..N-1
	echo $(($(od -An -N2 -tu2 /dev/urandom) % $1))
}
pick() { # WORDS... -> one of them
	shift "$(rnd $#)"
	echo "$1"
}

# ---- CPU lists without forks (TCG makes every fork cost milliseconds) ------
# xp LIST: R = " a b c " (blank-padded words), e.g. xp 0-2,8 -> " 0 1 2 8 "
xp() {
	R=" "
	_ifs=$IFS
	IFS=,
	# shellcheck disable=SC2086 # split on commas
	set -- $1
	IFS=$_ifs
	for _r; do
		_a=${_r%-*}
		_b=${_r#*-}
		while [ "$_a" -le "$_b" ]; do
			R="$R$_a "
			_a=$((_a + 1))
		done
	done
}
# common " A " " B ": R = words in both
common() {
	_r=" "
	for _x in $1; do
		case $2 in *" $_x "*) _r="$_r$_x " ;; esac
	done
	R=$_r
}
rd() { # FILE: V = first line ("" when unreadable)
	V=
	{ read -r V <"$1"; } 2>/dev/null || :
}
ALL=" " # every CPU, and each CPU's node as N_<cpu>
n=0
_ifs=$IFS
IFS=:
for l in $NP_NODECPUS; do
	IFS=$_ifs
	xp "$l"
	for c in $R; do
		ALL="$ALL$c "
		eval "N_$c=$n"
	done
	n=$((n + 1))
done
IFS=$_ifs
ALL=$(for c in $ALL; do echo "$c"; done | sort -n | tr '\n' ' ')
ALL=" $ALL"

eff() { cat "$CGP/$1/cpuset.cpus.effective" 2>/dev/null; }
cgroups() { # workload cgroups below the managed parent
	for _d in "$CGP"/*/; do
		[ -d "$_d" ] && basename "$_d"
	done
}
dump() { # what the kernel and the daemon say, for a failure message
	echo "# cgroups below $CGP:"
	for _c in $(cgroups); do
		echo "#   $_c: cpus=$(cat "$CGP/$_c/cpuset.cpus") effective=$(eff "$_c") mems=$(cat "$CGP/$_c/cpuset.mems.effective") tasks=$(tr '\n' ' ' <"$CGP/$_c/cgroup.procs")"
	done
	echo "# specs: $(cd $ETC/specs && echo ./*.json)"
	echo "# daemon log (tail):"
	tail -n 25 $ETC/log | sed 's/^/#   /'
}
bad() {
	dump
	fail "$*"
}

# ---- daemon --------------------------------------------------------------
DPID=
on_exit "umount $ETC/state"
on_exit 'cg_destroy numaplace.slice'
# shellcheck disable=SC2016 # expanded at exit, with the last pid
on_exit 'kill $DPID $P0 $S0 $Q 2>/dev/null; [ -n "$DPID" ] && wait $DPID'
start() {
	rm -f $SOCK
	# (a line the killed daemon left half-written ends here)
	printf '\n=== start %s\n' "$1" >>$ETC/log
	numaplaced -c $ETC/numaplace.json 2>>$ETC/log &
	DPID=$!
	show_on_fail $ETC/log
	# Answering a request means the first reconcile cycle is over: the
	# spec directory was scanned and the cgroups were written.
	if $HAVE_CLI; then
		wait_for 30 numaplace status --socket $SOCK
	else
		wait_for 30 test -S $SOCK
		sleep 1
	fi
	kill -0 "$DPID" 2>/dev/null || bad "numaplaced died at start $1"
}
stop() { # [SIGNAL]
	kill "-${1:-TERM}" "$DPID"
	wait "$DPID" 2>/dev/null
	_rc=$?
	[ "${1:-TERM}" != TERM ] || [ "$_rc" = 0 ] || bad "numaplaced exited $_rc on SIGTERM"
	DPID=
}

# ---- the checks after each (re)start ------------------------------------
# settle N: a pending LSE spec that fits in the free CPUs (all requests are
# whole cores, and best-effort may span nodes) must get its cgroup; a
# rejected spec is retried every cycle, so give it up to 3 s.
settle() {
	_id=$1
	_n=30
	while :; do
		_used=0
		for _c in $(cgroups); do
			case $_c in e* | k*) ;; *) continue ;; esac
			rd "$CGP/$_c/cpuset.cpus.effective"
			xp "$V"
			# shellcheck disable=SC2086 # count the words
			set -- $R
			_used=$((_used + $#))
		done
		_free=$((NP_CPUS - 2 - _used))
		_miss=
		for _s in e0 $TOGGLE; do
			case $_s in e*) ;; *) continue ;; esac
			if has_spec "$_s" && [ ! -d "$CGP/$_s" ] && [ "$(size_of "$_s")" -le "$_free" ]; then
				_miss="$_miss $_s"
			fi
		done
		[ -z "$_miss" ] && return 0
		_n=$((_n - 1))
		[ "$_n" -gt 0 ] || bad "restart $_id: spec(s)$_miss fit in the $_free free CPUs, but got no cgroup"
		sleep 0.1
	done
}
# ksync N: acknowledged socket admissions and releases held across the
# kill; unanswered ones are settled by what the restarted daemon has (its
# first cycle has removed the cgroups of no workload that were empty).
ksync() {
	for _k in $SOCKNAMES; do
		read -r _want _x <"$ETC/k/$_k.want"
		rd "$CGP/$_k/cpuset.cpus.effective"
		case $_want in
		cpus)
			if [ ! -d "$CGP/$_k" ] || [ "$V" != "$_x" ]; then
				bad "restart $1: numaplaced acknowledged $_k on $_x, after the restart it has '$V'"
			fi
			;;
		absent)
			[ ! -d "$CGP/$_k" ] ||
				bad "restart $1: numaplaced acknowledged that $_k is released or rejected, after the restart it has '$V'"
			;;
		*)
			if [ -d "$CGP/$_k" ]; then
				echo "cpus $V" >"$ETC/k/$_k.want"
			else
				echo absent >"$ETC/k/$_k.want"
			fi
			;;
		esac
	done
}
# check N: the kernel's state must be consistent; $ETC/snap/frozen ("name
# cpus" lines, written at the kill) must be kept for the LSE
# cgroups whose spec was not touched since ($TOUCHED).
check() {
	_id=$1
	_excl=" "
	for _c in $(cgroups); do
		has_spec "$_c" || wanted "$_c" ||
			bad "restart $_id: cgroup $_c has no spec file and no admission (leftover)"
	done
	for _n in s0 s1; do
		if has_spec $_n && [ ! -d "$CGP/$_n" ]; then
			bad "restart $_id: shared workload $_n has no cgroup"
		fi
	done
	for _c in $(cgroups); do
		case $_c in e* | k*) ;; *) continue ;; esac
		rd "$CGP/$_c/cpuset.cpus.effective"
		_e=$V
		xp "$_e"
		_w=$R
		# shellcheck disable=SC2086 # count the words
		set -- $_w
		# a resize that cannot be met keeps the old CPUs (said in the
		# log, the latest word on $_c)
		[ $# = "$(size_of "$_c")" ] ||
			grep -E "resized $_c in place|resize of $_c not done|admitted $_c\$" $ETC/log |
			tail -n 1 | grep -q "not done" ||
			bad "restart $_id: $_c has '$_e', asked for $(size_of "$_c") CPUs"
		common "$_w" "$RESERVED"
		[ "$R" = " " ] || bad "restart $_id: exclusive $_c ($_e) has reserved CPUs"
		common "$_w" "$_excl"
		[ "$R" = " " ] || bad "restart $_id: CPU(s)$R of $_c ($_e) are in another exclusive cgroup"
		_excl="$_excl${_w# }"
		rd "$CGP/$_c/cpuset.mems.effective"
		xp "$V"
		for _x in $_w; do
			_node=
			eval "_node=\$N_$_x"
			case $R in *" $_node "*) ;;
			*) bad "restart $_id: $_c has CPU $_x (node $_node) but mems '$V'" ;;
			esac
		done
	done
	_shared=" "
	for _x in $ALL; do
		case $_excl in *" $_x "*) ;; *) _shared="$_shared$_x " ;; esac
	done
	for _c in s0 s1; do
		[ -d "$CGP/$_c" ] || continue
		rd "$CGP/$_c/cpuset.cpus.effective"
		xp "$V"
		[ "$R" = "$_shared" ] ||
			bad "restart $_id: shared $_c has '$V', want the rest:$_shared"
	done
	# allocations never move; one whose spec asked for more CPUs than
	# were free in an earlier round (a resize not done: it kept its
	# CPUs) may grow in place at this start, keeping every CPU it had,
	# and so may one whose grow was acknowledged (saved) in the round
	# of the kill but not yet written to its cgroup then
	case $_id in
	*[!0-9]* | 0) _from=$_id ;;
	*) _from=$((_id - 1)) ;;
	esac
	while read -r _c _cpus; do
		case " $TOUCHED " in *" $_c "*) continue ;; esac
		rd "$CGP/$_c/cpuset.cpus.effective"
		[ "$V" = "$_cpus" ] && continue
		if sed -n '/^=== start '"$_from"'$/,$p' $ETC/log |
			grep -q "resized $_c in place"; then
			xp "$V"
			_now=$R
			xp "$_cpus"
			_kept=1
			for _x in $R; do
				case $_now in *" $_x "*) ;; *) _kept= ;; esac
			done
			[ -n "$_kept" ] && continue
		fi
		bad "restart $_id: $_c had $_cpus at the kill, has '$V' now"
	done <$ETC/snap/frozen
	[ "$(pid_cpus "$P0")" = "$E0" ] ||
		bad "restart $_id: the task in e0 moved from $E0 to $(pid_cpus "$P0")"
	rd "$CGP/s0/cpuset.cpus.effective"
	[ "$(pid_cpus "$S0")" = "$V" ] ||
		bad "restart $_id: the task in s0 has $(pid_cpus "$S0"), s0 has $V"
}

FAILED=
# ---- random kills ------------------------------------------------------------
# Runs in a subshell: a failure ends only this part, the restarts below
# still run, and the daemon and the tasks started here go with it.
random_kills() {
	# shellcheck disable=SC2016 # expanded at exit, with the last pid
	trap 'kill -9 $DPID $P0 $S0 $CLI 2>/dev/null; wait' EXIT
	t_start=$(cut -d' ' -f1 /proc/uptime)
	spec_add e0
	spec_add s0
	start 0
	wait_for 10 test -d "$CGP/e0"
	wait_for 10 test -d "$CGP/s0"
	E0=$(eff e0)
	P0=$(spawn_sleeper 86400)
	cg_move "$P0" numaplace.slice/e0
	S0=$(spawn_sleeper 86400)
	cg_move "$S0" numaplace.slice/s0
	assert_eq "$(pid_cpus "$P0")" "$E0" "task in e0"
	log "topology $TOPO; e0 (LSE, holds a task) on $E0; s0 (LS, holds a task) on $(eff s0)"
	: >$ETC/snap/frozen
	TOUCHED=
	settle 0
	check 0

	empty=0 down_ops=0 nack=0 nunk=0 i=1
	while [ "$i" -le "$KILLS" ]; do
		# 1-3 changes while the daemon runs, then a SIGKILL
		TOUCHED=
		added=
		ops=
		CLI=
		k=$(($(rnd 3) + 1))
		while [ "$k" -gt 0 ]; do
			# shellcheck disable=SC2086 # split on purpose
			nm=$(pick $TOGGLE $SOCKNAMES)
			case " $TOUCHED " in *" $nm "*) ;; *)
				case $nm in
				k*)
					sock_op "$nm"
					NOPS=$((NOPS + 1))
					ops="$ops $(cat "$ETC/k/$nm.op")$nm(socket)"
					;;
				*)
					op=$(toggle "$nm")
					NOPS=$((NOPS + 1))
					ops="$ops$op"
					case $op in " +e"*) added=$nm ;; esac
					;;
				esac
				TOUCHED="$TOUCHED $nm"
				;;
			esac
			k=$((k - 1))
		done
		# A third of the kills come as soon as the cgroup of an added LSE
		# workload appears (inside its admission cycle), a third within
		# 50 ms of the changes, a third anywhere in half a second.
		mode=$(rnd 3)
		if [ "$mode" = 0 ] && [ -n "$added" ]; then
			n=0
			while [ ! -d "$CGP/$added" ] && [ "$n" -lt 20000 ]; do
				n=$((n + 1))
			done
			when="when $added's cgroup appeared"
		else
			if [ "$mode" = 1 ]; then ms=$(rnd 50); else ms=$(rnd 500); fi
			usleep $((ms * 1000))
			when="after $ms ms"
		fi
		# freeze the daemon, record what the kernel has and what the state
		# file says, then kill it
		kill -STOP "$DPID"
		# (state.json with the journal replayed, as a restart loads it)
		if $HAVE_CLI && [ -e $ETC/state/state.json ]; then
			rm -rf $ETC/snap/raw
			mkdir -p $ETC/snap/raw
			cp $ETC/state/state.json $ETC/state/journal $ETC/snap/raw/ 2>/dev/null
			numaplace state $ETC/snap/raw >$ETC/snap/state.json 2>$ETC/snap/state.err ||
				bad "kill $i: numaplace state on the state left behind: $(cat $ETC/snap/state.err)"
		else
			cp $ETC/state/state.json $ETC/snap/state.json 2>/dev/null || : >$ETC/snap/state.json
		fi
		: >$ETC/snap/frozen
		fz=
		for c in $(cgroups); do
			case $c in e* | k*) ;; *) continue ;; esac
			rd "$CGP/$c/cpuset.cpus"
			cpus=$V
			if [ -z "$cpus" ]; then # created, cpuset not written yet
				fz="$fz $c=(not written)"
				empty=$((empty + 1))
				continue
			fi
			# write-ahead: a cpuset in the kernel is in the state file
			# (except one released in this round: the release is saved
			# before its cgroup is removed, and a restart puts such a
			# leftover on the shared pool; a resize is saved before
			# its cpuset is written, the same way)
			case "$ops " in *" -$c "* | *" ~$c "* | *" -$c(socket) "*)
				if grep -q "\"name\": \"$c\"" $ETC/snap/state.json; then
					fz="$fz $c=$cpus"
				else
					fz="$fz $c=$cpus(released)"
				fi
				continue
				;;
			esac
			grep -q "\"name\": \"$c\"" $ETC/snap/state.json ||
				bad "kill $i: $c has cpuset.cpus $cpus in the kernel, but the state file does not list it (the cgroup was written before the state); this round:$ops, SIGKILL $when"
			echo "$c $cpus" >>$ETC/snap/frozen
			fz="$fz $c=$cpus"
		done
		kill -KILL "$DPID"
		wait "$DPID" 2>/dev/null
		DPID=
		# the socket clients of this round end with the daemon
		answers=
		for p in $CLI; do wait "$p"; done
		for nm in $SOCKNAMES; do
			case " $TOUCHED " in *" $nm "*) ;; *) continue ;; esac
			sock_answer "$nm"
			answers="$answers $nm=$(tr ' ' = <"$ETC/k/$nm.want")"
		done
		nstate=$(grep -c '"spec": {' $ETC/snap/state.json)
		# sometimes a spec file appears while the daemon is down
		down=
		absent=
		for nm in $TOGGLE; do has_spec "$nm" || absent="$absent $nm"; done
		if [ "$DOWN_ADDS" = 1 ] && [ -n "$absent" ] && [ "$(rnd 4)" = 0 ]; then
			# shellcheck disable=SC2086 # split on purpose
			nm=$(pick $absent)
			spec_add "$nm"
			down=", +$nm while down"
			TOUCHED="$TOUCHED $nm"
			down_ops=$((down_ops + 1))
		fi
		log "kill $i: ops$ops, SIGKILL $when; kernel:${fz:- no LSE cgroup}; state file: $nstate workload(s)$down${answers:+; answers:$answers}"
		start "$i"
		line=$(sed -n '/^=== start '"$i"'$/,$p' $ETC/log | grep -m1 'state with')
		# the state left behind is loaded; workloads whose spec was
		# removed in this round may be released right at the start
		if [ -s $ETC/snap/state.json ]; then
			case $line in *"loaded state with "*) ;;
			*) bad "restart $i: no 'loaded state with N workload(s)' line, got '$line'" ;;
			esac
			nl=$(echo "$line" | sed 's/.*loaded state with \([0-9]*\) .*/\1/')
			nrm=$(echo "$ops" | tr ' ' '\n' | grep -c '^-')
			if [ "$nl" -gt "$nstate" ] || [ "$nl" -lt $((nstate - nrm)) ]; then
				bad "restart $i: loaded $nl workload(s), the state file had $nstate ($nrm removed in this round)"
			fi
		else
			case $line in *"fresh state with 0 workload"*) ;;
			*) bad "restart $i: no 'fresh state with 0 workload(s)' line, got '$line'" ;;
			esac
		fi
		settle "$i"
		ksync "$i"
		check "$i"
		i=$((i + 1))
	done
	t_end=$(cut -d' ' -f1 /proc/uptime)
	log "after $KILLS kills: $(for c in $(cgroups); do printf '%s=%s ' "$c" "$(eff "$c")"; done)"
	log "$(grep -c 'admitted' $ETC/log) admissions, $(grep -c 'released' $ETC/log) releases, $(grep -c 'rejected' $ETC/log) rejections logged"
	summary="$NOPS operations and $KILLS kills in $(awk -v a="$t_start" -v b="$t_end" 'BEGIN{printf "%.0f", b-a}') s ($empty inside an admission, $down_ops spec(s) added while down, $nack socket answers kept, $nunk unanswered)"
	log "$summary"
	echo "$summary" >$ETC/summary
	stop TERM
}
if ( random_kills ); then
	summary=$(cat $ETC/summary)
else
	summary="random kills FAILED"
	FAILED=" random kills failed (first message);"
fi

# ---- restarts with a known history -------------------------------------------
# reset: no daemon, no workload cgroup, no spec, no state
reset() {
	[ -n "$DPID" ] && stop KILL
	for _p in $P0 $S0 $Q; do kill "$_p"; done 2>/dev/null
	P0='' S0='' Q=
	cg_destroy numaplace.slice
	rm -f $ETC/specs/*.json $ETC/state/*
	: >$ETC/snap/frozen
}
# no CPU of an exclusive cgroup (one without the reserved CPU 0) is in any
# other cgroup below the parent
disjoint() { # WHAT
	for _ca in $(cgroups); do
		rd "$CGP/$_ca/cpuset.cpus.effective"
		_xv=$V
		xp "$_xv"
		_xw=$R
		case $_xw in *" 0 "*) continue ;; esac
		for _cb in $(cgroups); do
			[ "$_ca" = "$_cb" ] && continue
			rd "$CGP/$_cb/cpuset.cpus.effective"
			xp "$V"
			common "$_xw" "$R"
			[ "$R" = " " ] || {
				dump
				FAILED="$FAILED $1: exclusive $_ca ($_xv) shares CPU(s)$R with $_cb ($V);"
				return 1
			}
		done
	done
}
# shellcheck disable=SC2317 # called through wait_for
wrote() { # CGROUP: its cpuset.cpus was written
	rd "$CGP/$1/cpuset.cpus"
	[ -n "$V" ]
}
reset

# R1: a spec removed while numaplaced is down
spec_write a LSE 2
start R1
wait_for 10 wrote a
stop TERM
spec_del a
start R1b
sleep 1
if [ -d "$CGP/a" ]; then
	dump
	FAILED="$FAILED R1: a's spec was removed while numaplaced was down, a still holds $(eff a) after the start;"
fi
reset

# R2: a spec changed while numaplaced is down (LS -> LSE with 2 CPUs)
spec_write b LS 1
start R2
wait_for 10 test -d "$CGP/b"
stop TERM
spec_write b LSE 2
start R2b
sleep 1
xp "$(eff b)"
# shellcheck disable=SC2086 # count the words
set -- $R
if [ $# != 2 ]; then
	dump
	FAILED="$FAILED R2: b's spec was changed to LSE 2 CPUs while numaplaced was down, b has $(eff b);"
fi
reset

# R3: a released cgroup that still has a task, across a restart
spec_write c LSE 2
start R3
wait_for 10 wrote c
Q=$(spawn_sleeper)
cg_move "$Q" numaplace.slice/c
spec_del c
wait_for 10 grep -q "released c, but its cgroup c is busy" $ETC/log
stop TERM
start R3b
spec_write d LSE 2
spec_write e LSE 2
wait_for 10 wrote d
wait_for 10 wrote e
sleep 0.5
disjoint "R3 (a released cgroup c with a task, then a restart, then d and e admitted)" &&
	log "R3: the task left in c runs on $(pid_cpus "$Q"), d has $(eff d), e $(eff e)"
reset

# R4: an admission that cannot be saved (read-only state directory) is not
# written to any cgroup; SIGKILL; a new spec while down. Fill the node up to
# one core first.
spec_write f LSE $((NP_CPUS - 4))
start R4
wait_for 10 wrote f
mount -o remount,ro $ETC/state || fail "cannot make $ETC/state read-only"
spec_write g LSE 2
wait_for 10 grep -q "saving state" $ETC/log
sleep 0.5
if [ -n "$(cat "$CGP/g/cpuset.cpus" 2>/dev/null)" ]; then
	dump
	FAILED="$FAILED R4: g was written ($(cat "$CGP/g/cpuset.cpus")) although its admission could not be saved;"
fi
stop KILL
mount -o remount,rw $ETC/state
spec_write h LSE 2
start R4b
sleep 1
disjoint "R4 (g not saved, SIGKILL, h added while down)" &&
	log "R4: g has '$(eff g)', h has '$(eff h)' ($(grep -E 'rejected (g|h)' $ETC/log | tail -n 1))"
reset

# R5: an admission through the socket while the state cannot be saved is
# either refused or, if acknowledged, still there after a SIGKILL.
if $HAVE_CLI; then
	start R5
	mount -o remount,ro $ETC/state || fail "cannot make $ETC/state read-only"
	printf '{"name":"k","qos":"LSE","containers":[{"name":"m","cpu":"2"}]}\n' >$ETC/k.json
	out=$(numaplace admit -f $ETC/k.json --socket $SOCK 2>&1)
	stop KILL
	mount -o remount,rw $ETC/state
	start R5b
	case $out in
	"admitted k: cpuset "*)
		x=${out#admitted k: cpuset }
		x=${x%% *}
		if [ "$(eff k)" != "$x" ]; then
			dump
			FAILED="$FAILED R5: numaplaced acknowledged k on $x although it could not save its state ($(grep 'saving state' $ETC/log | tail -n 1)); after a SIGKILL k has '$(eff k)'$([ -d "$CGP/k" ] || echo ', no cgroup');"
		fi
		;;
	*) log "R5: admission refused while the state cannot be saved: $out" ;;
	esac
	reset
fi

[ -z "$FAILED" ] || fail "$summary;$FAILED"
pass "$summary, R1-R5 restarts kept the specs and cgroups consistent"
