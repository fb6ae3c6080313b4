#!/usr/bin/env bash
# The bad-input corpus (tests/badinput/, see its README.md), replayed surface
# by surface: every case is fed to the program that parses it, and its exit
# code and message (grep -F, naming the field or path) are checked. A crash,
# a sanitizer report, or a run over 5 s fails the case whatever it printed.
# The daemon cases (spec files, control-socket lines, and CLI calls that
# reach numaplaced) run against a numaplaced on a fake cgroup tree holding
# two workloads, and also check that the state file and every cgroup are
# byte-for-byte unchanged and that the daemon is still alive; state and
# config cases start numaplaced with the bad file and check the same of the
# tree they were given. Prints "badinput: N passed, N failed".
#
#   tests/host/badinput.sh BUILD_DIR [SURFACE...]
#
# NP_VERBOSE=1 shows the output of passing cases too; NP_KEEP=1 keeps the
# scratch directory.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
build=$(cd "${1:-build}" && pwd) || exit 2
shift
surfaces=("$@")
[ ${#surfaces[@]} -gt 0 ] || surfaces=(cli plan lists topology status kubelet spec socket state config oci)
corpus=$PWD/tests/badinput
np=$build/numaplace
npd=$build/numaplaced
tmp=$(mktemp -d /tmp/np-badinput-XXXXXX)
bgpids=()
cleanup() {
	local p
	for p in "${bgpids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -n "${NP_KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
. tests/host/host-lib.sh
T0=$SECONDS

# ---- helpers ----

# subst STRING: the placeholders replaced (the same as in case files),
# into REPLY (no subshell: this runs for every line of every case).
subst() {
	local s=$1
	s=${s//@SOCK@/${sock:-}}
	s=${s//@TMP@/$tmp}
	s=${s//@DATA@/$PWD/tests/data}
	s=${s//@DIR@/${rundir:-${dd:-}}}
	s=${s//@FILE@/${casefile:-}}
	s=${s//@CASES@/$corpus}
	s=${s//@PAD@/${pad:-}}
	REPLY=$s
}

# materialize CASE OUT: the case file with its placeholders replaced, byte
# for byte otherwise (NUL bytes and invalid UTF-8 are kept).
materialize() {
	NP_SOCK=${sock:-} NP_TMP=$tmp NP_DATA=$PWD/tests/data NP_DIR=${rundir:-${dd:-}} \
		NP_CASES=$corpus NP_PADN=${padn:-0} perl -0777 -pe '
		s/\@(SOCK|TMP|DATA|DIR|CASES)\@/$ENV{"NP_$1"}/g;
		s/\@PAD\@/"a" x $ENV{NP_PADN}/ge' "$1" >"$2"
}

# snap DIR...: every path with its type, and every file's content hash (the
# daemon may rewrite a file with the same bytes: content, not mtimes).
snap() {
	{
		find "$@" -printf '%y %p\n'
		find "$@" -type f -exec sha256sum {} +
	} 2>/dev/null | LC_ALL=C sort
}

# run_cmd OUTFILE STDIN CMD...: at most 5 s; sets rc (124: it hung).
run_cmd() {
	local out=$1 in=$2
	shift 2
	timeout -k 1 5 "$@" <"$in" >"$out" 2>&1
	rc=$?
}

# judge OUTFILE RC EXPECTED_EXIT MESSAGE...: appends what is wrong to $why.
judge() {
	local out=$1 got=$2 want=$3 m
	shift 3
	if [ "$got" = 124 ] || [ "$got" = 137 ]; then
		why+=" hung (killed after 5 s);"
	elif [ "$got" -ge 128 ] 2>/dev/null; then
		why+=" crashed (signal $((got - 128)));"
	elif [ "$got" != "$want" ]; then
		why+=" exit $got, want $want;"
	fi
	if LC_ALL=C grep -qaE 'AddressSanitizer|LeakSanitizer|runtime error:' "$out"; then
		why+=" sanitizer report;"
	fi
	for m in "$@"; do
		LC_ALL=C grep -qaF -- "$m" "$out" || why+=" no message \"$m\";"
	done
}

# verdict SURFACE/NAME: ok, or FAIL with the reasons and the output (also
# after ok with NP_VERBOSE=1: what to write in a new expectation).
verdict() {
	if [ -z "$why" ]; then
		ok "$1"
	else
		bad "$1:$why${known[${1%% *}]:+ [KNOWN_FAILING]}"
	fi
	if { [ -n "$why" ] || [ -n "${NP_VERBOSE:-}" ]; } && [ -s "$work/out" ]; then
		head -c 1500 "$work/out" | LC_ALL=C tr -c '\n[:print:]' '?' | sed 's/^/     | /'
		echo
	fi
}

# KNOWN_FAILING's cases (they run like any other: the mark only says the
# fix is pending).
declare -A known=()
while read -r k _; do
	case $k in '' | '#'*) continue ;; esac
	known[$k]=1
done <"$corpus/KNOWN_FAILING"

# messages KEY: the case's message: (or log:) lines, placeholders
# replaced, into the array msgs.
messages() {
	local -n lines=exp_$1
	local l
	msgs=()
	for l in "${lines[@]}"; do
		subst "$l"
		msgs+=("$REPLY")
	done
}

# case_start EXPECT: reads the expectation of a case ("KEY: value" lines)
# into want (exit:), padn (pad:), exp_args (args:), exp_symlink
# (symlink:) and the arrays
# exp_message and exp_log; why is cleared and pad made.
case_start() {
	local line
	why='' want='' padn='' pad='' exp_args='' exp_symlink=''
	exp_message=() exp_log=()
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		'exit: '*) want=${line#*: } ;;
		'pad: '*) padn=${line#*: } ;;
		'args: '*) exp_args=${line#*: } ;;
		'symlink: '*) exp_symlink=${line#*: } ;;
		'message: '*) exp_message+=("${line#*: }") ;;
		'log: '*) exp_log+=("${line#*: }") ;;
		esac
	done <"$1"
	# (tr, not ${pad// /a}: bash substitutes in O(n^2), and pads reach 1 MiB)
	[ -z "$padn" ] || pad=$(head -c "$padn" /dev/zero | tr '\0' a)
	[ -n "$want" ] || why+=" no 'exit:' in ${1##*/};"
}

# ---- the running daemon (spec, socket and CLI cases) ----

# dd (the daemon's directory: tree, config, log, socket) and sock are set
# by each stream that runs a daemon.
cycles() {
	local st
	st=$("$np" status --json --socket "$sock" 2>/dev/null)
	[[ $st =~ \"cycles\":\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}"
}
# wait_cycles N: until the daemon has run N more reconcile cycles (3 s max;
# a file dropped in spec_dir starts one at once, then one per period of
# 0.1 s: N-1 periods are slept first, then the count is polled).
wait_cycles() {
	local c0 c
	c0=$(cycles)
	sleep "0.$(($1 - 1))"
	for _ in $(seq 100); do
		c=$(cycles)
		[ -n "$c" ] && [ -n "$c0" ] && [ "$c" -ge $((c0 + $1)) ] && return 0
		sleep 0.03
	done
	return 1
}
cpus_of() { cat "$dd/cg/numaplace.slice/$1/cpuset.cpus" 2>/dev/null; }

# daemon_start: a fresh tree and numaplaced with two workloads: web (LS,
# from a spec file) and db (LSE, 2 CPUs, from the control socket).
daemon_start() {
	[ -n "$dpid" ] && { kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null; }
	rm -rf "$dd"
	mkdir -p "$dd"
	setup "$dd"
	# the shortest period: the spec_dir cases wait for cycles
	sed -i 's/"reconcile_period_s": 0.2/"reconcile_period_s": 0.1/' "$dd/np.json"
	"$npd" -c "$dd/np.json" 2>"$dd/log" &
	dpid=$!
	for _ in $(seq 100); do [ -S "$sock" ] && break; sleep 0.05; done
	printf '{"name":"web","qos":"LS","containers":[{"name":"m","cpu":"1"}]}\n' >"$dd/specs/web.json"
	printf '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"2","memory":"64Mi"}]}\n' >"$dd/db.json"
	"$np" admit -f "$dd/db.json" --socket "$sock" >/dev/null 2>&1
	for _ in $(seq 60); do
		[ "$(cpus_of db)" = 1,5 ] && [ "$(cpus_of web)" = 0,2-4,6-7 ] && break
		sleep 0.05
	done
	wait_cycles 2
	[ "$(cpus_of db)" = 1,5 ] && [ "$(cpus_of web)" = 0,2-4,6-7 ]
}
daemon_snap() { snap "$dd/cg" "$dd/state"; }

# daemon_after: the tree and state as before the case ($before), the daemon
# alive; otherwise the reasons go to why and the daemon starts afresh (also
# when a spec_dir case saw a change midway, mid_changed), so that the next
# case finds web and db as they were.
daemon_after() {
	local after damaged=
	after=$(daemon_snap)
	if [ "$after" != "$before" ]; then
		why+=" state or cgroups changed:$(diff <(echo "$before") <(echo "$after") |
			sed -n 's/^[<>] [^ ]* *//p' | sort -u | head -5 | tr '\n' ' ');"
		damaged=1
	fi
	kill -0 "$dpid" 2>/dev/null || { why+=" numaplaced died;"; damaged=1; }
	if [ -n "$damaged${mid_changed:-}" ]; then
		daemon_start || echo "warning: the daemon fixture did not come up again"
	fi
}

# ---- the stopped-daemon fixture (state, config, kubelet cases) ----

# A tree and state.json left by numaplaced after admitting web (LS) and db
# (LSE, 2 CPUs) through the socket, then stopped: the state files in
# tests/badinput/state/ were derived from such a state (same policy and
# topology, hence the same fingerprints).
sfx=$tmp/sfx
fixture_make() {
	local pid
	setup "$sfx"
	"$npd" -c "$sfx/np.json" 2>"$sfx/log" &
	pid=$!
	for _ in $(seq 100); do [ -S "$sfx/np.sock" ] && break; sleep 0.05; done
	printf '{"name":"web","qos":"LS","containers":[{"name":"m","cpu":"1"}]}\n' >"$sfx/web.json"
	printf '{"name":"db","qos":"LSE","containers":[{"name":"m","cpu":"2","memory":"64Mi"}]}\n' >"$sfx/db.json"
	"$np" admit -f "$sfx/web.json" --socket "$sfx/np.sock" >/dev/null 2>&1
	"$np" admit -f "$sfx/db.json" --socket "$sfx/np.sock" >/dev/null 2>&1
	kill -TERM "$pid"
	wait "$pid"
	rm -f "$sfx/web.json" "$sfx/db.json" "$sfx/log"
	test -s "$sfx/state/state.json" -a -d "$sfx/cg/numaplace.slice/db"
}

# fixture_copy DIR: a copy of the fixture whose np.json names DIR.
fixture_copy() {
	rm -rf "$1"
	cp -a "$sfx" "$1"
	sed -i "s|$sfx|$1|g" "$1/np.json"
}

# alive PID: the process runs (a zombie has exited).
alive() {
	local st
	read -r _ _ st _ 2>/dev/null <"/proc/$1/stat" && [ "$st" != Z ]
}

# daemon_once CONFIG OUT: numaplaced started with CONFIG; a bad config or
# state makes it exit at once. Still running after 2 s means it accepted
# them: it is stopped (SIGTERM) and rc is "running". While it runs, the
# tree is compared with $before every 250 ms (a cgroup two workloads fight
# over flips back and forth); a difference sets changed.
daemon_once() {
	local pid i
	changed=
	"$npd" -c "$1" >"$2" 2>&1 </dev/null &
	pid=$!
	for i in $(seq 40); do
		alive "$pid" || break
		sleep 0.05
		[ $((i % 5)) = 0 ] || continue
		[ "$(snap "$rundir/cg" "$rundir/state")" = "$before" ] || changed=1
	done
	if alive "$pid"; then
		kill -TERM "$pid"
		wait "$pid"
		rc=running
		return
	fi
	wait "$pid"
	rc=$?
}

# ---- the surfaces ----

# Files given to a CLI command: plan, lists, topology, status, kubelet.
# args: in the expectation overrides the command (words split on blanks).
default_args() {
	case $1 in
	plan | lists) echo "plan --input @FILE@" ;;
	topology) echo "topology --topology @FILE@" ;;
	status) echo "status --input @FILE@" ;;
	kubelet) echo "import-kubelet-state @FILE@ --config @DIR@/np.json --apply" ;;
	oci) echo "oci-hook createRuntime --config @CASES@/oci/np-open.json" ;;
	esac
}

# lists: the case file holds one string (its last newline dropped, @PAD@
# expanded), put between the quotes of a template request; field: names
# which one. All the requests are made at once: lists_prepare OUTDIR.
lists_prepare() {
	local topo=$PWD/tests/data/topology/vm-2node.json
	python3 - "$corpus/lists" "$1" "$topo" <<'PY'
import glob, json, os, sys
cases, outdir, topo = sys.argv[1:]
t = json.dumps(json.load(open(topo)), separators=(",", ":"))
pol = '{"cpu_policy":"static","reserved_cpus":"0,4","topology_policy":"restricted"}'
def admit(policy, workload):
    return '{"kind":"admit","topology":%s,"policy":%s,"workload":%s}' % (t, policy, workload)
ctr = lambda extra: admit(pol, '{"name":"w","qos":"LS","containers":[{"name":"m",%s}]}' % extra)
tmpl = {
    "policy.reserved_cpus": admit('{"cpu_policy":"static","reserved_cpus":"@S@"}',
                                  '{"name":"w","qos":"LS","containers":[{"name":"m","cpu":"1"}]}'),
    "workload.containers[0].cpu": ctr('"cpu":"@S@"'),
    "workload.containers[0].memory": ctr('"cpu":"1","memory":"@S@"'),
    "workload.containers[0].hugepages-2Mi": ctr('"cpu":"1","hugepages-2Mi":"@S@"'),
    "workload.unit": admit(pol, '{"name":"w","unit":"@S@","qos":"LS","containers":[{"name":"m","cpu":"1"}]}'),
    "workload.cgroup": admit(pol, '{"name":"w","cgroup":"@S@","qos":"LS","containers":[{"name":"m","cpu":"1"}]}'),
    "available": '{"kind":"take","topology":%s,"available":"@S@","count":1}' % t,
    "state.workloads[0].containers[0].mems": admit(pol, '{"name":"w","qos":"LS","containers":[{"name":"m","cpu":"1"}]}')[:-1]
        + ',"state":{"workloads":[{"spec":{"name":"x","qos":"LS","containers":[{"name":"m","cpu":"1"}]},'
          '"class":"LS","containers":[{"name":"m","exclusive":false,"cpus":"","mems":"@S@"}]}]}}',
}
os.makedirs(outdir, exist_ok=True)
for e in glob.glob(cases + "/*.expect"):
    keys = dict(l.split(": ", 1) for l in open(e).read().splitlines() if ": " in l)
    base = e[:-len(".expect")]
    src = [f for f in glob.glob(glob.escape(base) + ".*") if f != e]
    field = keys.get("field", "")
    if len(src) != 1 or field not in tmpl:
        continue  # no request: the case fails with "no request made"
    s = open(src[0], "rb").read()
    if s.endswith(b"\n"):
        s = s[:-1]
    s = s.replace(b"@PAD@", b"a" * int(keys.get("pad", "0")))
    with open(os.path.join(outdir, os.path.basename(src[0])), "wb") as f:
        f.write(tmpl[field].encode().replace(b"@S@", s))
PY
}

# One case given to a CLI command as a file (and on stdin).
file_case() {
	local surface=$1 c=$2 e=${2%.*}.expect name args a words=()
	name=$surface/$(basename "$c")
	case_start "$e"
	casefile=$work/case/$(basename "$c")
	rm -rf "$work/case" && mkdir -p "$work/case"
	rundir=
	if [ "$surface" = kubelet ]; then
		rundir=$work/imp
		fixture_copy "$rundir"
	fi
	if [ "$surface" = lists ]; then
		casefile=$work/lists/$(basename "$c")
		[ -f "$casefile" ] || why+=" no request made (field: missing or unknown);"
	else
		materialize "$c" "$casefile"
	fi
	args=$exp_args
	[ -n "$args" ] || args=$(default_args "$surface")
	for a in $args; do
		subst "$a"
		words+=("$REPLY")
	done
	[ -n "$rundir" ] && before=$(snap "$rundir/cg" "$rundir/state")
	run_cmd "$work/out" "$casefile" "$np" "${words[@]}"
	messages message
	judge "$work/out" "$rc" "$want" "${msgs[@]}"
	if [ -n "$rundir" ] && [ "$(snap "$rundir/cg" "$rundir/state")" != "$before" ]; then
		why+=" numaplace's state or cgroups changed;"
	fi
	verdict "$name"
}

# cli: NAME.args holds the argument vector, one argument per line, the
# program (numaplace or numaplaced) first. It runs while the daemon runs.
cli_case() {
	local c=$1 e=${1%.args}.expect prog l argv=()
	case_start "$e"
	casefile=
	{
		IFS= read -r prog
		while IFS= read -r l; do
			subst "$l"
			argv+=("$REPLY")
		done
	} <"$c"
	case $prog in numaplace | numaplaced) ;; *) why+=" unknown program '$prog';" ;; esac
	before=$(daemon_snap)
	run_cmd "$work/out" /dev/null "$build/$prog" "${argv[@]}"
	messages message
	judge "$work/out" "$rc" "$want" "${msgs[@]}"
	daemon_after
	verdict "cli/$(basename "$c")"
}

# spec: through `numaplace admit -f` (exit and message:), and as a file in
# spec_dir (spec_dir_case): the daemon log must hold the log: lines, or else
# the message: lines and "spec FILE: " (the file named). Nothing may change
# either way, also once the file is removed again.
spec_case() {
	local c=$1 e=${1%.json}.expect
	case_start "$e"
	casefile=$work/case/$(basename "$c")
	rm -rf "$work/case" && mkdir -p "$work/case"
	materialize "$c" "$casefile"
	before=$(daemon_snap)
	run_cmd "$work/out" /dev/null "$np" admit -f "$casefile" --socket "$sock"
	messages message
	judge "$work/out" "$rc" "$want" "${msgs[@]}"
	daemon_after
	verdict "spec/$(basename "$c") (admit -f)"
}
spec_dir_case() {
	local c=$1 e=${1%.json}.expect drop n0 mid_changed=
	case_start "$e"
	drop=$dd/specs/badinput-$(basename "$c")
	casefile=$drop
	n0=$(wc -l <"$dd/log")
	before=$(daemon_snap)
	materialize "$c" "$drop.tmp" && mv "$drop.tmp" "$drop"
	wait_cycles 3 || why+=" no reconcile cycles;"
	# also while the file is there (a cgroup fought over may flip back)
	mid_changed=
	[ "$(daemon_snap)" = "$before" ] ||
		{ why+=" state or cgroups changed while the file was there;"; mid_changed=1; }
	tail -n +$((n0 + 1)) "$dd/log" >"$work/out"
	messages log
	[ ${#msgs[@]} -gt 0 ] || { messages message; msgs+=("spec $drop: "); }
	judge "$work/out" 0 0 "${msgs[@]}"
	rm -f "$drop"
	wait_cycles 2
	tail -n +$((n0 + 1)) "$dd/log" >"$work/out"
	daemon_after
	verdict "spec/$(basename "$c") (spec_dir)"
}

# socket: the case file is sent as it is on one connection; the answer
# line decides the exit: 0 {"ok":true}, 1 {"ok":false}, 2 {"ok":true} with
# a decision that is not admitted, 3 closed without an answer, 4 no answer
# within 5 s.
cat >"$tmp/sock_send.pl" <<'PL'
use strict;
use warnings;
use IO::Select;
use IO::Socket::UNIX;
use JSON::PP;
my ($path, $file) = @ARGV;
$SIG{PIPE} = 'IGNORE';
my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $path)
    or do { print "connect $path: $!\n"; exit 3 };
open(my $f, '<:raw', $file) or die "$file: $!";
my $data = do { local $/; <$f> };
for (my $off = 0; $off < length $data;) {
	my $n = syswrite($s, $data, 65536, $off);
	# a server that refuses a long line closes early: read its answer
	if (!defined $n) { print "send: $!\n"; last }
	$off += $n;
}
my ($buf, $sel, $end) = ('', IO::Select->new($s), time + 5);
while ($buf !~ /\n/) {
	my $left = $end - time;
	if ($left <= 0 || !$sel->can_read($left)) { print "no answer within 5 s\n"; exit 4 }
	my $n = sysread($s, $buf, 65536, length $buf);
	last if !$n;
}
my ($line) = split /\n/, $buf, 2;
$line //= '';
print "$line\n";
exit 3 if $line eq '';
my $a = JSON::PP->new->decode($line);
my $d = ref $a->{decision} eq 'HASH' ? $a->{decision} : {};
# the error or the rejection reason once more, unescaped, for the grep
print(($a->{error} // $d->{reason} // ''), "\n");
exit 1 if !$a->{ok};
exit(defined $d->{admitted} && !$d->{admitted} ? 2 : 0);
PL
socket_case() {
	local c=$1 e=${1%.*}.expect
	case_start "$e"
	casefile=$work/case/$(basename "$c")
	rm -rf "$work/case" && mkdir -p "$work/case"
	materialize "$c" "$casefile"
	before=$(daemon_snap)
	run_cmd "$work/out" /dev/null perl "$tmp/sock_send.pl" "$sock" "$casefile"
	messages message
	judge "$work/out" "$rc" "$want" "${msgs[@]}"
	daemon_after
	verdict "socket/$(basename "$c")"
}

# state: numaplaced starts on a copy of the fixture whose state.json is the
# case; config: numaplaced --check-config, then numaplaced started, with the
# case as its configuration (@DIR@ is the copy). Either way nothing in the
# copy's tree or state may change.
stopped_case() {
	local surface=$1 c=$2 e=${2%.*}.expect name cfg w0
	name=$surface/$(basename "$c")
	case_start "$e"
	rundir=$work/run
	fixture_copy "$rundir"
	cfg=$rundir/np.json
	casefile=$rundir/state/state.json
	if [ "$surface" = config ]; then
		casefile=$rundir/case-$(basename "$c")
		cfg=$casefile
	fi
	materialize "$c" "$casefile"
	# symlink: NAME: the file the program reads is a symbolic link to
	# the case, which is the file NAME beside the state directory
	if [ -n "$exp_symlink" ]; then
		mv "$casefile" "$rundir/$exp_symlink"
		ln -s "$rundir/$exp_symlink" "$casefile"
	fi
	before=$(snap "$rundir/cg" "$rundir/state")
	messages message
	: >"$work/out"
	if [ "$surface" = config ]; then
		run_cmd "$work/out" /dev/null "$npd" --check-config -c "$cfg"
		judge "$work/out" "$rc" "$want" "${msgs[@]}"
		[ -z "$why" ] || why=" --check-config:$why"
	fi
	daemon_once "$cfg" "$work/out.start"
	w0=$why
	why=
	judge "$work/out.start" "$rc" "$want" "${msgs[@]}"
	[ -z "$why" ] || why=" start:$why"
	why=$w0$why
	[ -z "$changed" ] && [ "$(snap "$rundir/cg" "$rundir/state")" = "$before" ] ||
		why+=" the state or a cgroup changed;"
	cat "$work/out.start" >>"$work/out"
	verdict "$name"
}

# ---- run ----

# run_surfaces SURFACE...: every case of each, in order; spec_dir is the
# spec surface again, each case dropped in the daemon's spec_dir.
run_surfaces() {
	local s c d
	mkdir -p "$work"
	for s in "$@"; do
		d=${s/spec_dir/spec}
		[ -d "$corpus/$d" ] || { bad "$s: no such surface in $corpus"; continue; }
		[ "$s" = lists ] && lists_prepare "$work/lists"
		for c in "$corpus/$d"/*; do
			# a case is a file with NAME.expect beside it (others are helpers)
			case $c in *.expect) continue ;; esac
			[ -f "${c%.*}.expect" ] || continue
			case $s in
			cli) cli_case "$c" ;;
			spec) spec_case "$c" ;;
			spec_dir) spec_dir_case "$c" ;;
			socket) socket_case "$c" ;;
			state | config) stopped_case "$s" "$c" ;;
			*) file_case "$s" "$c" ;;
			esac
		done
	done
}

# stream NAME SURFACE...: in the background, in a work directory of its
# own, with a daemon of its own when a surface needs one; its lines and
# counts are kept for the end.
stream() {
	local name=$1
	shift
	(
		trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null' EXIT
		trap 'exit 1' TERM
		pass=0 fail=0 work=$tmp/$name dd=$tmp/$name/d dpid=
		sock=$dd/np.sock
		case " $* " in *" cli "* | *" spec"* | *" socket "*)
			check "$name: numaplaced up with web (spec file) and db (socket)" daemon_start ;;
		esac
		run_surfaces "$@"
		if [ -n "$dpid" ]; then
			kill -TERM "$dpid"
			wait "$dpid"
			check "$name: numaplaced stops cleanly after the corpus (exit $?)" test $? -eq 0
			dpid=
		fi
		echo "$pass $fail" >"$tmp/$name.count"
	) >"$tmp/$name.log" 2>&1 &
	bgpids+=($!)
	streams+=("$name")
}

for f in "$np" "$npd"; do
	[ -x "$f" ] || { echo "badinput: $f missing (make BUILD=... all)"; exit 2; }
done

# Every KNOWN_FAILING line names a case that exists.
while read -r k _; do
	case $k in '' | '#'*) continue ;; esac
	[ -f "$corpus/$k" ] || bad "KNOWN_FAILING names $k, which is not a case"
done <"$corpus/KNOWN_FAILING"

# Three streams side by side (the daemon's cases mostly wait for its
# reconcile cycles): the CLI, socket and admit -f cases against one
# numaplaced; the spec_dir cases against another; the rest, which need no
# running daemon. Their lines are printed stream by stream.
a=() b=() c=()
for s in "${surfaces[@]}"; do
	case $s in
	cli | socket) a+=("$s") ;;
	spec) a+=(spec) b+=(spec_dir) ;;
	*) c+=("$s") ;;
	esac
done
bgpids=() streams=()
if [ ${#c[@]} -gt 0 ]; then
	check "fixture: a stopped daemon's tree and state" fixture_make
	stream files "${c[@]}"
fi
[ ${#b[@]} -gt 0 ] && stream specdir "${b[@]}"
[ ${#a[@]} -gt 0 ] && stream daemon "${a[@]}"
for i in "${!bgpids[@]}"; do
	wait "${bgpids[$i]}"
	cat "$tmp/${streams[$i]}.log"
	read -r p f <"$tmp/${streams[$i]}.count" ||
		{ p=0 f=1; echo "FAIL stream ${streams[$i]} did not finish"; }
	pass=$((pass + p)) fail=$((fail + f))
done
bgpids=()

echo "badinput: $((SECONDS - T0)) s"
echo "badinput: $pass passed, $fail failed"
[ -n "${NP_SUMMARY_FILE:-}" ] && echo "badinput $pass $fail" >>"$NP_SUMMARY_FILE"
[ "$fail" -eq 0 ]
