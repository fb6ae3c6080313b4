# shellcheck shell=sh
# /scenarios/lib.sh: helpers for numaplace VM scenarios (busybox ash).
#
#   . /scenarios/lib.sh
#
# Results: a scenario PASSes when it exits 0, SKIPs with exit 77, FAILs
# otherwise.  fail/skip/pass end the scenario with a message that init
# reports on the NP-RESULT line; note adds to that message and goes on.
# Assertions take the thing under test first: assert_eq ACTUAL EXPECTED.
#
# Topology facts from the kernel command line (set by run.sh):
#   NP_TOPO      2node | 4node
#   NP_NODES     number of NUMA nodes       NP_CPUS   number of CPUs
#   NP_SMT       threads per core
#   NP_NODECPUS  cpulist of each node, ':'-separated (e.g. 0-3:4-7)
#   NP_DIST      distance rows, ':'-separated, values ',' (e.g. 10,20:20,10)

NP_SCENARIO=${NP_SCENARIO:-$(basename "$0" .sh)}
NP_DETAIL_FILE=${NP_DETAIL_FILE:-/dev/null}
CG=/sys/fs/cgroup

# ---- reporting -----------------------------------------------------------

log() { echo "# $*"; }
note() {
	echo "# note: $*"
	echo "$*" >>"$NP_DETAIL_FILE"
}
fail() {
	echo "FAIL: $*" >&2
	echo "$*" >>"$NP_DETAIL_FILE"
	exit 1
}
skip() {
	echo "SKIP: $*"
	echo "$*" >>"$NP_DETAIL_FILE"
	exit 77
}
# shellcheck disable=SC2120 # optional argument
pass() {
	[ $# -gt 0 ] && echo "$*" >>"$NP_DETAIL_FILE"
	exit 0
}

# Cleanup: on_exit CMD registers CMD (run in reverse order at exit, also
# when the scenario times out and receives SIGTERM).
# show_on_fail FILE: when the scenario fails, the last lines of FILE (e.g.
# the daemon's log) are printed after the cleanup, so that the console and
# the runner's failure digest say what the daemon saw.
_np_cleanup=
_np_show=
on_exit() { _np_cleanup="$1; $_np_cleanup"; }
show_on_fail() {
	case " $_np_show " in
	*" $1 "*) ;;
	*) _np_show="$_np_show $1" ;;
	esac
}
_np_exit() {
	_rc=$?
	trap - EXIT
	set +e
	[ -n "$_np_cleanup" ] && eval "$_np_cleanup" >/dev/null 2>&1
	if [ "$_rc" != 0 ] && [ "$_rc" != 77 ]; then
		for _f in $_np_show; do
			[ -f "$_f" ] || continue
			echo "--- last lines of $_f:" >&2
			tail -n 25 "$_f" >&2
		done
	fi
	exit "$_rc"
}
trap _np_exit EXIT
trap 'exit 143' TERM INT

# ---- assertions ----------------------------------------------------------

assert_eq() { # ACTUAL EXPECTED [WHAT]
	[ "$1" = "$2" ] || fail "${3:-value}: got '$1', expected '$2'"
}
assert_ne() { # ACTUAL UNEXPECTED [WHAT]
	[ "$1" != "$2" ] || fail "${3:-value}: got '$1', expected something else"
}
assert_match() { # ACTUAL ERE [WHAT]
	printf '%s\n' "$1" | grep -Eq -- "$2" || fail "${3:-value}: '$1' does not match /$2/"
}
assert_file_exists() { # PATH
	[ -e "$1" ] || fail "$1 does not exist"
}
assert_file_eq() { # FILE EXPECTED  (whole content, trailing newline ignored)
	[ -r "$1" ] || fail "$1: not readable"
	_v=$(cat "$1") || fail "$1: read failed"
	[ "$_v" = "$2" ] || fail "$1: got '$_v', expected '$2'"
}
assert_file_contains() { # FILE ERE
	[ -r "$1" ] || fail "$1: not readable"
	grep -Eq -- "$2" "$1" || fail "$1: no line matches /$2/"
}
assert_word_in() { # WORD LIST [WHAT]
	case " $2 " in *" $1 "*) ;; *) fail "${3:-list}: '$1' not in '$2'" ;; esac
}
assert_true() { # WHAT CMD...   (CMD must succeed)
	_w=$1
	shift
	"$@" || fail "$_w: '$*' failed (exit $?)"
}
assert_false() { # WHAT CMD...  (CMD must fail)
	_w=$1
	shift
	if "$@"; then fail "$_w: '$*' unexpectedly succeeded"; fi
}

# run_ok CMD...: run CMD, echo its output; fail with the output if it fails.
run_ok() {
	_out=$("$@" 2>&1)
	_rc=$?
	[ -n "$_out" ] && printf '%s\n' "$_out" | sed 's/^/  | /'
	[ "$_rc" = 0 ] || fail "'$*' exited $_rc: $(printf '%s' "$_out" | tail -n 3 | tr '\n' ' ')"
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
wait_for() {
	_n=$(($1 * 10))
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	fail "timed out waiting for: $*"
}

# ---- kernel parameters, cpu lists ----------------------------------------

# np_param NAME [DEFAULT]: value of NAME=... on the kernel command line.
np_param() {
	# shellcheck disable=SC2013 # words, not lines
	for _w in $(cat /proc/cmdline); do
		case $_w in "$1="*)
			echo "${_w#*=}"
			return 0
			;;
		esac
	done
	echo "${2:-}"
}

# cpulist_expand "0-3,8" -> "0 1 2 3 8"
cpulist_expand() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r _a _b; do
		[ -n "$_a" ] || continue
		seq "$_a" "${_b:-$_a}"
	done | tr '\n' ' ' | sed 's/ $//'
}
# cpulist_count "0-3,8" -> 5
cpulist_count() {
	# shellcheck disable=SC2046 # split on purpose
	set -- $(cpulist_expand "$1")
	echo $#
}
# field N of a SEP-separated string (1-based)
np_field() { # STRING SEP N
	echo "$1" | cut -d"$2" -f"$3"
}

# ---- processes -----------------------------------------------------------

pid_status() { # PID FIELD   e.g. pid_status 42 Cpus_allowed_list
	sed -n "s/^$2:[[:space:]]*//p" "/proc/$1/status"
}
pid_cpus() { pid_status "$1" Cpus_allowed_list; }
pid_mems() { pid_status "$1" Mems_allowed_list; }
pid_cgroup() { sed -n 's/^0:://p' "/proc/$1/cgroup"; }

# mount_type PATH: filesystem type mounted at PATH (from /proc/mounts)
mount_type() { awk -v m="$1" '$2 == m {t = $3} END {print t}' /proc/mounts; }

# spawn_sleeper [SECONDS]: start a background sleep, print its pid; it is
# killed when the scenario exits.
# shellcheck disable=SC2120 # optional argument
spawn_sleeper() {
	sleep "${1:-3600}" >/dev/null 2>&1 &
	echo $!
}

# ---- cgroup v2 -----------------------------------------------------------

# cg_enable CONTROLLER... in the root's subtree_control (e.g. cpuset memory)
cg_enable() {
	for _c in "$@"; do
		grep -qw "$_c" "$CG/cgroup.subtree_control" && continue
		echo "+$_c" >"$CG/cgroup.subtree_control" ||
			fail "cannot enable +$_c in $CG/cgroup.subtree_control"
	done
}
# cg_create REL [CONTROLLER...]: mkdir $CG/REL (parents too); enable the
# controllers in each parent's subtree_control on the way down.
cg_create() {
	_rel=$1
	shift
	_p=$CG
	for _part in $(echo "$_rel" | tr '/' ' '); do
		for _c in "$@"; do
			grep -qw "$_c" "$_p/cgroup.subtree_control" ||
				echo "+$_c" >"$_p/cgroup.subtree_control" ||
				fail "cannot enable +$_c in $_p/cgroup.subtree_control"
		done
		_p=$_p/$_part
		[ -d "$_p" ] || mkdir "$_p" || fail "mkdir $_p failed"
	done
}
cg_write() { # REL FILE VALUE
	echo "$3" >"$CG/$1/$2" || fail "write '$3' to $CG/$1/$2 failed"
}
cg_read() { # REL FILE
	cat "$CG/$1/$2"
}
cg_move() { # PID REL
	echo "$1" >"$CG/$2/cgroup.procs" || fail "moving pid $1 to $2 failed"
}
# cg_destroy REL: move remaining processes to the root, remove the subtree.
cg_destroy() {
	[ -d "$CG/$1" ] || return 0
	find "$CG/$1" -depth -type d | while read -r _d; do
		while read -r _pid; do
			echo "$_pid" >"$CG/cgroup.procs" 2>/dev/null
		done <"$_d/cgroup.procs"
		rmdir "$_d" 2>/dev/null
	done
	[ ! -d "$CG/$1" ]
}

# ---- verification (numaplace violations) ---------------------------------

# vcount WORKLOAD COUNTER [PIN_PATH]: one counter of `numaplace violations
# --json WORKLOAD` (0 when the workload or the pins are not there). The
# counter names are unique within one workload's JSON.
vcount() {
	numaplace violations --json --pin-path "${3:-/sys/fs/bpf/numaplace}" "$1" 2>/dev/null |
		sed -n "s/^ *\"$2\": \([0-9][0-9]*\),\{0,1\}$/\1/p" | head -n 1 |
		grep . || echo 0
}
# vfield WORKLOAD KEY [PIN_PATH]: the first string value of KEY.
vfield() {
	numaplace violations --json --pin-path "${3:-/sys/fs/bpf/numaplace}" "$1" 2>/dev/null |
		sed -n "s/^ *\"$2\": \"\([^\"]*\)\",\{0,1\}$/\1/p" | head -n 1
}
# busy_in CGROUP_DIR [COMM] [CPU]: a busy shell loop in that cgroup (named
# COMM through /proc/PID/comm, pinned to CPU with taskset -p); its pid.
busy_in() {
	sh -c "${2:+printf %s $2 > /proc/\$\$/comm}
		echo \$\$ > $1/cgroup.procs || exit 1
		${3:+taskset -p -c $3 \$\$ >/dev/null || exit 1}
		while :; do :; done" >/dev/null 2>&1 &
	echo $!
}
# cpus_is PID LIST: the task's Cpus_allowed_list is LIST (for wait_for).
cpus_is() { [ "$(pid_cpus "$1")" = "$2" ]; }
# try_for SECONDS CMD...: like wait_for, but returns 1 on timeout (so the
# caller can show the daemon's log before failing).
try_for() {
	_n=$(($1 * 10))
	shift
	while [ "$_n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		_n=$((_n - 1))
	done
	return 1
}
# chatty_in CGROUP_DIR [COMM]: a task that wakes 20 times a second and
# forks each time (many switches, wakeups and migrations, little CPU).
chatty_in() {
	sh -c "${2:+printf %s $2 > /proc/\$\$/comm}
		echo \$\$ > $1/cgroup.procs || exit 1
		while :; do sleep 0.05; done" >/dev/null 2>&1 &
	echo $!
}
# poll_secs SECONDS CMD...: like try_for, but bounded by the clock: try_for
# counts 0.1 s sleeps, so a CMD that itself takes a second (numaplace under
# TCG) would stretch it tenfold. Returns 1 on timeout.
poll_secs() {
	_end=$(($(date +%s) + $1))
	shift
	while :; do
		"$@" >/dev/null 2>&1 && return 0
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.2
	done
}
# daemon_up PID SOCKET LOG [SECS]: numaplaced (PID) answers on SOCKET within
# SECS (default 60) by the clock (loading the BPF programs takes long under
# TCG); fails at once, with its exit status and LOG, if it died instead.
daemon_up() {
	_secs=${4:-60}
	_end=$(($(date +%s) + _secs))
	while [ ! -S "$2" ]; do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			_st=$?
			cat "$3"
			fail "numaplaced exited with status $_st before its socket was up"
		fi
		[ "$(date +%s)" -lt "$_end" ] || { cat "$3"; fail "numaplaced (pid $1, running) has no socket after $_secs s"; }
		sleep 0.2
	done
}
# vcounts WORKLOAD KEY...: "KEY VALUE" lines (0 when absent) from a single
# `numaplace violations --json WORKLOAD` (one read, consistent values);
# fails when the workload is not there.
vcounts() {
	_w=$1
	shift
	_j=$(numaplace violations --json --pin-path /sys/fs/bpf/numaplace "$_w" 2>/dev/null) || return 1
	for _k in "$@"; do
		_v=$(printf '%s\n' "$_j" | sed -n "s/^ *\"$_k\": \([0-9][0-9]*\),\{0,1\}$/\1/p" | head -n 1)
		echo "$_k ${_v:-0}"
	done
}
