#!/bin/bash
# a. numaplaced.service from tools/ starts under systemd, reports ready,
#    picks the systemd driver by itself, and the watchdog works: pinged
#    while the loop turns, and a stopped loop gets restarted.
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "systemctl stop numaplaced; rm -rf /run/systemd/system/numaplaced.service.d; systemctl daemon-reload"

# The shipped example (dist/numaplace.example.json) is valid here, with
# user.slice and machine.slice not there (pending, not an error).
out=$($NPD --check-config --config /etc/numaplace/example.json 2>&1) || fail "example config: $out"
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 30'
# --check-config says which driver it will use and that the file is good.
out=$($NPD --check-config --config $CONF 2>&1) || fail "--check-config: $out"
echo "$out" | grep -i driver || fail "--check-config does not name the cgroup driver"
# A short watchdog (the unit's is 60 s) and a reconcile period longer than
# it: the pings must not depend on the period.
mkdir -p /run/systemd/system/numaplaced.service.d
printf '[Service]\nWatchdogSec=4\n' >/run/systemd/system/numaplaced.service.d/wd.conf
systemctl daemon-reload
start_numaplaced
assert_eq "$(prop numaplaced.service WatchdogUSec)" 4s "WatchdogUSec from the drop-in"
assert_eq "$(prop numaplaced.service ActiveState)/$(prop numaplaced.service SubState)" active/running "numaplaced state"
assert_eq "$(prop numaplaced.service Type)" notify "unit type"
# READY=1 came through: a notify unit is active only after it.
pid=$(prop numaplaced.service MainPID)
[ "$pid" -gt 0 ] || fail "no MainPID"
# The confined unit is in force (dist/numaplaced.service), in the
# kernel's own view of the process: CAP_CHOWN (0), CAP_SYS_PTRACE (19),
# CAP_SYS_NICE (23), CAP_PERFMON (38), CAP_BPF (39) and no other, a
# system call filter, no new privileges, umask 0077.
st=$(cat /proc/$pid/status)
capv() { awk -v k="$1:" '$1 == k {print $2}' <<<"$st"; }
assert_eq "$(capv CapEff)" 000000c000880001 "numaplaced's effective capabilities"
assert_eq "$(capv CapBnd)" 000000c000880001 "numaplaced's bounding set"
assert_eq "$(capv Seccomp)" 2 "numaplaced's seccomp mode (a filter)"
assert_eq "$(capv NoNewPrivs)" 1 "numaplaced's no_new_privs"
assert_eq "$(capv Umask)" 0077 "numaplaced's umask"
log "confined: CapEff $(capv CapEff), Seccomp $(capv Seccomp), Umask $(capv Umask); $(prop numaplaced.service IPAddressAllow | head -c 80)"

# The systemd driver: the workloads' scope is a transient unit with
# Delegate=yes in numaplace.slice, numaplaced did not mkdir it.
try_for 10 prop_is numaplace-workloads.scope ActiveState active ||
	fail "numaplace-workloads.scope: $(prop numaplace-workloads.scope ActiveState)"
assert_eq "$(prop numaplace-workloads.scope Delegate)" yes "scope Delegate"
assert_eq "$(prop numaplace-workloads.scope Slice)" numaplace.slice "scope slice"
cg=$(prop numaplace-workloads.scope ControlGroup)
assert_eq "$cg" /numaplace.slice/numaplace-workloads.scope "scope cgroup"
# The holder that keeps the empty scope up sits in a leaf, so that the
# scope itself holds no process and can have children with cpusets.
[ -z "$(cat /sys/fs/cgroup$cg/cgroup.procs)" ] || fail "processes in the scope's own cgroup: $(cat /sys/fs/cgroup$cg/cgroup.procs)"
[ -n "$(cat "/sys/fs/cgroup$cg/.np+holder/cgroup.procs")" ] || fail "no holder in $cg/.np+holder"
journalctl -u numaplaced --no-pager | grep -q 'cgroup driver auto: systemd' ||
	fail "the log does not say the driver auto picked"

# Watchdog: 12 s at WatchdogSec=4 with a 30 s period, still the same pid.
t1=$(prop numaplaced.service WatchdogTimestampMonotonic)
sleep 12
assert_eq "$(prop numaplaced.service MainPID)" "$pid" "MainPID after 12 s"
assert_eq "$(prop numaplaced.service NRestarts)" 0 "restarts while pinging"
t2=$(prop numaplaced.service WatchdogTimestampMonotonic)
[ "$t2" -gt "$t1" ] || fail "no watchdog ping in 12 s ($t1 -> $t2)"
# A loop that stops turning: SIGSTOP, the watchdog fires, Restart=on-failure.
kill -STOP "$pid"
sleep 8
log "after SIGSTOP: $(systemctl show -p Result -p ActiveState -p SubState -p NRestarts -p WatchdogTimestampMonotonic numaplaced.service | tr '\n' ' ') now $(cut -d' ' -f1 /proc/uptime)"
try_for 30 prop_ge numaplaced.service NRestarts 1 || fail "no restart 30 s after SIGSTOP"
try_for 30 prop_is numaplaced.service ActiveState active || fail "not active again after the watchdog restart"
npid=$(prop numaplaced.service MainPID)
[ "$npid" != "$pid" ] || fail "same pid after the watchdog restart"
journalctl -u numaplaced --no-pager | grep -qi 'watchdog' || fail "journal does not mention the watchdog"
log "watchdog restart: pid $pid -> $npid"
pass
