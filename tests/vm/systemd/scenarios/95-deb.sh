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
. /sdtest/sdlib.sh
DEB=${NP_DEB:-}
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
