#!/bin/bash
# j. The Debian package (make deb, issue 34) with its real maintainer
#    scripts under systemd as PID 1: dpkg -i installs it (its dependencies
#    are in dpkg's database of the image, mkroot.sh), enables numaplaced
#    and starts it (the configuration exists); the files are where dpkg -L
#    says, the unit runs /usr/sbin/numaplaced, numaplace status answers; an
#    LSE workload admitted takes its CPUs from system.slice and init.scope
#    (their cpuset.cpus.effective, journald's allowed CPUs). dpkg -r stops
#    numaplaced cleanly: the host units have what they had before (the
#    property, the full range where they had none; the kernel's effective
#    sets all CPUs), the unit is gone, the configuration and the state (with
#    the workload) stay. dpkg -P removes /etc/numaplace and
#    /var/lib/numaplace and the unit's enablement. The guest is left as it
#    was: the test's unit (/etc/systemd/system/numaplaced.service, which
#    would hide the package's) and /etc/numaplace come back.
#    The package comes as np.deb=PATH (run-all.sh gives BUILD/deb's on
#    4node); without it the scenario has nothing to install and skips.
# 210-234 s of its 300 at host load 1-3 (2026-11-29/30), over 300 at
# load 4-5 (the fresh-clone CI of 474c8f1): a hang still ends it, a loaded
# host does not.
# np-timeout: 600
. /sdtest/sdlib.sh
DEB=${NP_DEB:-}
DEB_UP=${NP_DEB_UP:-}
[ -n "$DEB" ] || skip "no package (np.deb=PATH; run-all.sh passes make deb's on 4node)"
[ -f "$DEB" ] || fail "np.deb=$DEB is not in the guest"
command -v dpkg >/dev/null || fail "no dpkg in the image (mkroot.sh)"
journal_on_fail numaplaced
VER=$(dpkg-deb -f "$DEB" Version)
[ -n "$VER" ] || fail "$DEB: no Version"
dpkg-query -W numaplace >/dev/null 2>&1 && fail "numaplace is already known to dpkg: $(dpkg-query -W numaplace 2>&1)"

# The test's daemon stopped, no state (write_config); the test's unit and
# /etc/numaplace kept aside, given back at the end.
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 1,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"}'
SAVE=/run/np/95-saved
rm -rf $SAVE && mkdir -p $SAVE
cp -a /etc/numaplace $SAVE/etc-numaplace
mv /etc/systemd/system/numaplaced.service $SAVE/
systemctl daemon-reload
on_exit "systemctl stop numaplaced; dpkg -P numaplace; systemctl stop numaplace-workloads.scope; rm -rf /etc/numaplace /var/lib/numaplace; cp -a $SAVE/etc-numaplace /etc/numaplace; mv $SAVE/numaplaced.service /etc/systemd/system/; systemctl daemon-reload"

ALL=$(cat /sys/fs/cgroup/cpuset.cpus.effective)
HOST="system.slice init.scope"
before=()
for u in $HOST; do before+=("$(prop $u AllowedCPUs)"); done
# the kernel's view of a host unit: a cgroup's effective CPUs (its cpuset
# file exists once the controller is on there), a host task's allowed ones
JPID=$(prop systemd-journald.service MainPID)
[ "$JPID" -gt 0 ] || fail "no journald MainPID"
host_cpus_are() { # LIST: every host unit's cgroup and journald's CPUs are LIST
	local u eff
	for u in $HOST; do
		eff=$(cg_file $u/cpuset.cpus.effective)
		[ -z "$eff" ] || cpus_same "$eff" "$1" || return 1
	done
	cpus_same "$(pid_cpus "$JPID")" "$1"
}
host_view() {
	local u
	for u in $HOST; do printf '%s AllowedCPUs=%s effective=%s; ' $u "$(prop_cpus $u)" "$(cg_file $u/cpuset.cpus.effective)"; done
	printf 'journald Cpus_allowed_list=%s' "$(pid_cpus "$JPID")"
}
host_cpus_are "$ALL" || fail "before the install: $(host_view), want $ALL"

# ---- install -----------------------------------------------------------------------
t0=$SECONDS
run_ok dpkg -i "$DEB"
log "dpkg -i $(basename "$DEB"): $((SECONDS - t0)) s"
assert_eq "$(dpkg-query -W -f '${Status} ${Version}' numaplace)" "install ok installed $VER" "dpkg's status of numaplace"
assert_eq "$(systemctl is-enabled numaplaced.service)" enabled "systemctl is-enabled numaplaced"
try_for 20 prop_is numaplaced.service ActiveState active ||
	fail "numaplaced not active after dpkg -i: $(systemctl is-active numaplaced.service)"
assert_eq "$(systemctl is-active numaplaced.service)" active "systemctl is-active numaplaced"
frag=$(prop numaplaced.service FragmentPath)
[ "$(readlink -f "$frag")" = /usr/lib/systemd/system/numaplaced.service ] || fail "numaplaced's unit is $frag, not the package's"
pid=$(prop numaplaced.service MainPID)
[ "$pid" -gt 0 ] || fail "numaplaced has no MainPID"
assert_eq "$(readlink -f /proc/$pid/exe)" /usr/sbin/numaplaced "numaplaced's executable"
want_link=/etc/systemd/system/multi-user.target.wants/numaplaced.service
[ -L $want_link ] || fail "no $want_link (deb-systemd-helper enable)"

# The files: every path dpkg -L lists is there, the ones that matter among them.
dpkg -L numaplace >/tmp/95-files || fail "dpkg -L numaplace failed"
n=0
while read -r f; do
	[ -e "$f" ] || fail "dpkg -L lists $f, which is not there"
	n=$((n + 1))
done </tmp/95-files
for f in /usr/sbin/numaplaced /usr/bin/numaplace /usr/bin/numaplace-oci-hook \
	/lib/systemd/system/numaplaced.service /usr/share/man/man8/numaplaced.8.gz \
	/usr/share/man/man5/numaplace.json.5.gz /usr/share/containers/oci/hooks.d/numaplace-createRuntime.json \
	/usr/share/doc/numaplace/examples/numaplace.example.json /etc/numaplace/workloads.d; do
	grep -qx "$f" /tmp/95-files || fail "dpkg -L numaplace does not list $f"
done
[ -x /usr/bin/numaplace ] && [ -x /usr/sbin/numaplaced ] || fail "the programs are not executable"
v=$(/usr/bin/numaplace --version 2>&1) || fail "numaplace --version: $v"
assert_match "$v" "${VER//./\\.}" "numaplace --version against the package's Version"
log "dpkg -L: $n paths, all there; $v; unit $frag"
NPC=/usr/bin/numaplace
try_for 20 $NPC status --socket $SOCK >/dev/null 2>&1 || fail "numaplace status does not answer on $SOCK"
$NPC status --socket $SOCK | head -n 3 | sed 's/^/  | /'

# ---- a workload: the host units give up its CPUs (the kernel's view) -------------
cat >/tmp/95-web.json <<'JSON'
{"name": "web", "cgroup": "web", "qos": "LSE",
 "containers": [{"name": "main", "cpu": "2", "memory": "64Mi"}]}
JSON
run_ok $NPC admit -f /tmp/95-web.json
SCOPE=/sys/fs/cgroup/numaplace.slice/numaplace-workloads.scope
W=$(cat $SCOPE/web/cpuset.cpus)
assert_eq "$(cpulist_count "$W")" 2 "web's cpuset.cpus ($W)"
want=$(cpus_minus "$ALL" "$W" | tr ' ' ',')
for u in $HOST; do
	try_for 10 prop_cpus_is $u "$want" || fail "$u AllowedCPUs=$(prop_cpus $u) with web on $W, want $want"
	[ -n "$(cg_file $u/cpuset.cpus.effective)" ] || fail "$u has no cpuset.cpus.effective with AllowedCPUs set"
done
try_for 10 host_cpus_are "$want" || fail "with web on $W: $(host_view), want $want"
log "web on $W; $(host_view)"

# ---- the upgrade: the same package, a higher version, over it while workloads run --
# (np.deb_up: make deb's package with Version VERSION+up1, deb.sh; the same
# files and maintainer scripts). Recorded before, from the kernel's files
# and systemd's: the workloads' CPUs, their tasks, the daemon's invocation;
# sampled during dpkg -i: the workloads' cpusets and their task's CPUs.
[ -n "$DEB_UP" ] || fail "no np.deb_up (the package with a higher version: deb.sh's second line)"
[ -f "$DEB_UP" ] || fail "np.deb_up=$DEB_UP is not in the guest"
VER_UP=$(dpkg-deb -f "$DEB_UP" Version)
dpkg --compare-versions "$VER_UP" gt "$VER" || fail "np.deb_up's version $VER_UP is not above $VER"
# a second workload, a running service given by a spec file (the
# operator's file in the package's /etc/numaplace/workloads.d)
make_service np-up numaplace.slice 'while :; do sleep 1; done'
on_exit "systemctl stop np-up.service; rm -f /run/systemd/system/np-up.service"
cat >$SPECS/up.json <<'JSON'
{"name": "up", "unit": "np-up.service", "qos": "LSE",
 "containers": [{"name": "main", "cpu": "2"}]}
JSON
up_cpus() { $NPC status --json --socket $SOCK | jq -r '.workloads[] | select(.name == "up") | .containers[0].cpuset'; }
up_admitted() { [ "$(cpulist_count "$(up_cpus)")" = 2 ]; }
try_for 20 up_admitted || fail "up (spec file) not admitted with 2 CPUs: '$(up_cpus)'"
U=$(up_cpus)
try_for 10 prop_cpus_is np-up.service "$U" || fail "np-up AllowedCPUs=$(prop_cpus np-up.service), want $U"
UPID=$(prop np-up.service MainPID)
UCG=$(prop np-up.service ControlGroup)
try_for 5 cpus_is "$UPID" "$U" || fail "np-up's task Cpus_allowed_list $(pid_cpus "$UPID"), want $U"
want=$(cpus_minus "$ALL" "$W,$U" | tr ' ' ',')
try_for 10 host_cpus_are "$want" || fail "with web on $W and up on $U: $(host_view), want $want"
# KV: the workloads in the kernel's files, one line, read with builtins only
# (sampled every half second during the upgrade: no fork to slow the guest)
kview() {
	local a b c d t k v
	read -r a <$SCOPE/web/cpuset.cpus
	read -r b <$SCOPE/web/cpuset.cpus.effective
	read -r c </sys/fs/cgroup$UCG/cpuset.cpus
	read -r d </sys/fs/cgroup$UCG/cpuset.cpus.effective
	while read -r k v; do [ "$k" = Cpus_allowed_list: ] && t=$v; done </proc/$UPID/status
	KV="web $a $b up $c $d task $t"
}
# the daemon's workloads (status) and the saved ones (state.json's)
wl_status() { $NPC status --json --socket $SOCK | jq -cS '[.workloads[] | {name, cpus: [.containers[].cpuset]}] | sort_by(.name)'; }
kview
K0=$KV
set -- $K0
cpus_same "$2" "$W" && cpus_same "$3" "$W" && cpus_same "$5" "$U" && cpus_same "$6" "$U" && cpus_same "$8" "$U" || fail "the workloads' cpusets and up's task: $K0, want web $W, up $U"
S0=$(wl_status)
A0=$(prop_cpus np-up.service)
H0=$(for u in $HOST; do prop_cpus $u; done | tr '\n' ' ')
NPID=$(prop numaplaced.service MainPID)
INV0=$(prop numaplaced.service InvocationID)
NR0=$(prop numaplaced.service NRestarts)
SINV0=$(prop numaplace-workloads.scope InvocationID)
EXE0=$(stat -L -c %i /proc/$NPID/exe)
log "before the upgrade: $K0; numaplaced pid $NPID invocation $INV0 NRestarts $NR0; $(host_view)"

cur=$(journalctl -n 1 -q --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
[ -n "$cur" ] || fail "no journal cursor"
rm -f /tmp/95-samples /tmp/95-stop
( while [ ! -e /tmp/95-stop ]; do
	read -r h </sys/fs/cgroup/system.slice/cpuset.cpus.effective
	kview
	echo "$KV | host $h"
	sleep 0.5
done >/tmp/95-samples ) &
SAMPLER=$!
t0=$SECONDS
run_ok dpkg -i "$DEB_UP"
dt=$((SECONDS - t0))
touch /tmp/95-stop
wait $SAMPLER
log "dpkg -i $(basename "$DEB_UP") over $VER: $dt s"
assert_eq "$(dpkg-query -W -f '${Status} ${Version}' numaplace)" "install ok installed $VER_UP" "dpkg's status after the upgrade"
try_for 20 prop_is numaplaced.service ActiveState active || fail "numaplaced not active after the upgrade: $(systemctl is-active numaplaced.service)"
pid=$(prop numaplaced.service MainPID)
INV1=$(prop numaplaced.service InvocationID)
[ "$pid" -gt 0 ] && [ "$pid" != "$NPID" ] || fail "numaplaced's MainPID after the upgrade: $pid (before: $NPID)"
[ -d /proc/$NPID ] && fail "the old numaplaced (pid $NPID) still runs"
assert_ne "$INV1" "$INV0" "numaplaced's InvocationID after the upgrade (a new start)"
assert_eq "$(prop numaplaced.service NRestarts)" "$NR0" "NRestarts (no automatic restart: no failure)"
# the new daemon runs the file dpkg unpacked (a new inode), not the old one
EXE1=$(stat -c %i /usr/sbin/numaplaced)
assert_ne "$EXE1" "$EXE0" "the inode of /usr/sbin/numaplaced (dpkg replaced it)"
assert_eq "$(stat -L -c %i /proc/$pid/exe)" "$EXE1" "the new numaplaced's executable"
# once: systemd's own record of the unit since dpkg -i began (PID 1's lines;
# systemd 252 logs no "Stopping" for a restart job): one clean exit, one
# start, no failure
sd_log=$(journalctl --after-cursor "$cur" --no-pager -o cat _PID=1 UNIT=numaplaced.service)
count() { printf '%s\n' "$sd_log" | grep -c "$1" || true; }
[ "$(count 'Deactivated successfully')" = 1 ] && [ "$(count '^Stopped numaplace')" = 1 ] &&
	[ "$(count '^Starting numaplace')" = 1 ] && [ "$(count '^Started numaplace')" = 1 ] &&
	[ "$(count 'Failed\|status=[1-9]\|Watchdog\|restart')" = 0 ] ||
	fail "numaplaced during the upgrade, systemd's lines: $(printf '%s' "$sd_log" | tr '\n' ';')"
assert_eq "$(prop numaplace-workloads.scope InvocationID)" "$SINV0" "the workloads' scope's InvocationID (not restarted)"
assert_eq "$(prop np-up.service MainPID)" "$UPID" "np-up's MainPID (the workload not restarted)"
# nothing moved: every sample during dpkg -i, and after it
ns=$(wc -l </tmp/95-samples)
[ "$ns" -ge 5 ] || fail "only $ns samples during the upgrade"
moved=$(cut -d'|' -f1 /tmp/95-samples | sed 's/ *$//' | sort -u)
assert_eq "$moved" "$K0" "the workloads' cpusets and up's task CPUs in all $ns samples during dpkg -i"
kview
assert_eq "$KV" "$K0" "the workloads after the upgrade"
assert_eq "$(prop_cpus np-up.service)" "$A0" "np-up's AllowedCPUs after the upgrade"
try_for 20 $NPC status --socket $SOCK >/dev/null 2>&1 || fail "numaplace status does not answer after the upgrade"
assert_eq "$(wl_status)" "$S0" "the daemon's workloads after the upgrade"
try_for 10 host_cpus_are "$want" || fail "after the upgrade: $(host_view), want $want"
assert_eq "$(for u in $HOST; do prop_cpus $u; done | tr '\n' ' ')" "$H0" "the host units' AllowedCPUs after the upgrade"
# the state on disk (compacted at the old daemon's stop, read by the new one)
for n in web up; do
	jq -e --arg n $n '.. | objects | select(.name? == $n)' $STATE/state.json >/dev/null ||
		fail "state.json after the upgrade does not hold $n"
done
# the host (system.slice) never had the workloads' CPUs: the old daemon saw
# systemd's restart job on its unit and gave nothing back (numaplaced(8)), as
# after a crash; the new one took over (before, a clean stop gave the host
# units every CPU for 2.5-3.5 s of the upgrade)
nh=0
while read -r h; do cpus_same "$h" "$want" || nh=$((nh + 1)); done < <(sed 's/.*| host //' /tmp/95-samples)
np_log=$(journalctl --after-cursor "$cur" --no-pager -o cat _SYSTEMD_UNIT=numaplaced.service)
printf '%s\n' "$np_log" | grep -q "stopping for a restart (systemd's job on numaplaced.service: restart)" ||
	fail "the old numaplaced did not say it stopped for a restart: $(printf '%s' "$np_log" | grep -i 'stop' | tr '\n' ';')"
[ "$nh" = 0 ] || fail "system.slice's effective set was not $want in $nh of $ns samples during the upgrade: $(sed 's/.*| host //' /tmp/95-samples | sort | uniq -c | tr '\n' ';')"
log "after the upgrade: numaplaced pid $pid invocation $INV1, $(printf '%s' "$sd_log" | grep -c .) systemd lines (1 Stopped, 1 Started); $ns samples, the workloads' CPUs in all as before ($K0); system.slice's effective set $want in all of them (0.5 s apart)"

# ---- dpkg -r: stopped cleanly, host units given back, config and state kept -------
cur=$(journalctl -n 1 -q --show-cursor --no-pager | sed -n 's/^-- cursor: //p')
[ -n "$cur" ] || fail "no journal cursor"
t0=$SECONDS
run_ok dpkg -r numaplace
log "dpkg -r: $((SECONDS - t0)) s"
assert_eq "$(dpkg-query -W -f '${Status}' numaplace)" "deinstall ok config-files" "dpkg's status after remove"
[ -d /proc/$pid ] && fail "numaplaced (pid $pid) still runs after dpkg -r"
assert_ne "$(systemctl is-active numaplaced.service)" active "numaplaced after dpkg -r"
# a clean stop (SIGTERM, exit 0), in systemd's record of it since dpkg -r
stop_log=$(journalctl -u numaplaced --after-cursor "$cur" --no-pager -o cat)
printf '%s\n' "$stop_log" | grep -q 'numaplaced.service: Deactivated successfully' &&
	! printf '%s\n' "$stop_log" | grep -q 'Failed with result\|status=[1-9]' ||
	fail "numaplaced did not stop cleanly under dpkg -r: $(printf '%s' "$stop_log" | tail -n 4 | tr '\n' ';')"
printf '%s\n' "$stop_log" | grep -q "a stop (systemd's job on numaplaced.service: stop): host units and IRQs get back" ||
	fail "numaplaced did not take dpkg -r's stop for a stop: $(printf '%s' "$stop_log" | grep -i 'stop' | tr '\n' ';')"
for f in /usr/sbin/numaplaced /usr/bin/numaplace /lib/systemd/system/numaplaced.service; do
	[ -e $f ] && fail "$f still there after dpkg -r"
done
# what each had, or the explicit full range where it had none
# (numaplaced(8): an empty AllowedCPUs= gives nothing back)
i=0
for u in $HOST; do
	if [ -n "${before[$i]}" ]; then
		assert_eq "$(prop $u AllowedCPUs)" "${before[$i]}" "$u AllowedCPUs after dpkg -r"
	else
		prop_cpus_is $u "$ALL" || fail "$u AllowedCPUs after dpkg -r: '$(prop $u AllowedCPUs)', want $ALL (it had none)"
	fi
	i=$((i + 1))
done
host_cpus_are "$ALL" || fail "after dpkg -r: $(host_view), want $ALL"
[ -f $CONF ] || fail "dpkg -r removed $CONF"
[ -f $STATE/state.json ] || fail "dpkg -r removed $STATE/state.json"
jq -e '.. | objects | select(.name? == "web")' $STATE/state.json >/dev/null ||
	fail "the state after dpkg -r does not hold web: $(head -c 300 $STATE/state.json)"
log "after dpkg -r: $(host_view); $CONF and $STATE/state.json kept"

# ---- dpkg -P: configuration and state gone --------------------------------------
run_ok dpkg -P numaplace
st=$(dpkg-query -W -f '${Status}' numaplace 2>/dev/null || true)
case $st in "" | "unknown ok not-installed" | "purge ok not-installed") ;; *) fail "dpkg's status after purge: $st" ;; esac
for d in /etc/numaplace /var/lib/numaplace $want_link /var/lib/systemd/deb-systemd-helper-enabled/numaplaced.service; do
	[ -e $d ] && fail "$d is still there after dpkg -P"
done
log "after dpkg -P: /etc/numaplace, /var/lib/numaplace and the enablement gone"
pass
