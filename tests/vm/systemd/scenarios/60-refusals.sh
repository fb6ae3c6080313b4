#!/bin/bash
# g. Bad input under systemd, each refused with a message naming the field
#    and nothing written (no unit property changed, no scope started, no
#    state):
#    - cgroup_driver "systemd" with no bus reachable (systemd's private
#      socket and the system bus hidden in a mount namespace);
#    - a unit name with "/" or "..", through the CLI (checked before the
#      socket) and through a spec file (checked by the daemon);
#    - "unit" and "cgroup" in one spec.
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "systemctl stop numaplaced"
nothing_changed() { # WHEN
	assert_eq "$(prop_cpus system.slice)" "$S0" "$1: system.slice AllowedCPUs"
	assert_eq "$(prop_cpus init.scope)" "$I0" "$1: init.scope AllowedCPUs"
	assert_eq "$(scope_state)" "$SC0" "$1: numaplace-workloads.scope"
}

# 1. no bus
rm -rf /tmp/g-state
write_config '"cgroup_parent": "numaplace.slice", "cgroup_driver": "systemd"'
sed -i 's|"state_dir": "[^"]*"|"state_dir": "/tmp/g-state"|' $CONF
S0=$(prop_cpus system.slice) I0=$(prop_cpus init.scope)
# the workloads' scope outlives numaplaced (its holder keeps it up): an
# earlier scenario may have left it; whatever it is, it stays so
scope_state() { echo "$(prop numaplace-workloads.scope LoadState)/$(prop numaplace-workloads.scope ActiveState)/$(prop numaplace-workloads.scope InvocationID)"; }
SC0=$(scope_state)
# /run/systemd hidden: no sign of systemd at all; only the sockets hidden
# (PID 1 is systemd, neither /run/systemd/private nor the system bus
# answers)
hide_all='mount -t tmpfs none /run/systemd && mount -t tmpfs none /run/dbus &&'
hide_bus='mount --bind /dev/null /run/systemd/private && mount -t tmpfs none /run/dbus &&'
for hide in "$hide_all" "$hide_bus"; do
	for cmd in "--check-config" ""; do
		out=$(unshare -m --propagation private bash -c "$hide exec $NPD $cmd --config $CONF" 2>&1)
		rc=$?
		assert_eq "$rc" 2 "numaplaced $cmd with no bus: exit status"
		assert_match "$out" 'cgroup_driver' "numaplaced $cmd with no bus: message"
		log "no bus ($cmd): $(echo "$out" | grep -m1 cgroup_driver)"
	done
done
[ ! -e /tmp/g-state/state.json ] || fail "a state file was written with no bus"
nothing_changed "no bus"

# 2. bad unit names
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 1,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"}'
start_numaplaced
S0=$(prop_cpus system.slice) I0=$(prop_cpus init.scope)
for u in "../x.service" "a/b.service" "..service" "x.timer" ""; do
	printf '{"name":"bad","unit":"%s","qos":"LSE","containers":[{"name":"m","cpu":"1"}]}\n' "$u" >/tmp/bad.json
	out=$($NPC admit -f /tmp/bad.json 2>&1)
	rc=$?
	assert_eq "$rc" 2 "admit unit '$u': exit status"
	assert_match "$out" 'unit' "admit unit '$u': message"
	log "unit '$u': $out"
done
# numaplace's own units are no workloads (the daemon says so)
for u in system.slice init.scope numaplace.slice numaplace-workloads.scope -.slice; do
	printf '{"name":"own","unit":"%s","qos":"LSE","containers":[{"name":"m","cpu":"1"}]}\n' "$u" >/tmp/own.json
	out=$($NPC admit -f /tmp/own.json 2>&1)
	assert_eq "$?" 1 "admit unit $u: exit status (rejected)"
	assert_match "$out" 'numaplace manages it itself|root slice' "admit unit $u: message"
done
log "own unit: $out"
printf '{"name":"both","unit":"x.service","cgroup":"x","qos":"LSE","containers":[{"name":"m","cpu":"1"}]}\n' >/tmp/both.json
out=$($NPC admit -f /tmp/both.json 2>&1)
assert_eq "$?" 2 "unit and cgroup: exit status"
assert_match "$out" 'unit' "unit and cgroup: message"
# the daemon checks too: a spec file the CLI never saw
printf '{"name":"sneaky","unit":"../../etc.service","qos":"LSE","containers":[{"name":"m","cpu":"1"}]}\n' >$SPECS/sneaky.json
try_for 10 sh -c "journalctl -u numaplaced --no-pager | grep -q 'sneaky.*unit'" || fail "no error for the spec file with unit ../../etc.service"
log "spec file: $(journalctl -u numaplaced --no-pager | grep -m1 'sneaky.*unit' | sed 's/.*numaplaced: //')"
assert_eq "$($NPC status --json --socket $SOCK | jq '[.workloads[] | select(.name == "sneaky")] | length')" 0 "sneaky admitted"
rm -f $SPECS/sneaky.json
assert_eq "$(prop_cpus system.slice)" "$S0" "system.slice AllowedCPUs after the refusals"
assert_eq "$(prop_cpus init.scope)" "$I0" "init.scope AllowedCPUs after the refusals"
pass
