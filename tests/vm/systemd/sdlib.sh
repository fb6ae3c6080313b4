# shellcheck shell=bash
# /sdtest/sdlib.sh: helpers for the systemd VM scenarios (bash), on top of
# /sdtest/lib.sh (tests/vm/lib.sh: results, assertions, cleanup).
#
#   . /sdtest/sdlib.sh
. /sdtest/lib.sh

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin
NPD=/usr/local/sbin/numaplaced
NPC=/usr/local/sbin/numaplace
# the OCI hook as runtimes run it (dist/oci): `numaplace oci-hook` alone
NPHOOK=/usr/local/sbin/numaplace-oci-hook
CONF=/etc/numaplace/numaplace.json
STATE=/var/lib/numaplace
SPECS=/etc/numaplace/workloads.d
SOCK=/run/numaplace/numaplace.sock
# runtime_dir: host-units.json and hostiso.json, the records of what
# numaplaced changed on the host (kept until a reboot)
RUNDIR=/run/numaplace

[ "$(cat /proc/1/comm)" = systemd ] || fail "PID 1 is $(cat /proc/1/comm), not systemd"

# The journal of a unit, shown when the scenario fails.
journal_on_fail() { # UNIT
	on_exit "journalctl -u $1 --no-pager -o short-monotonic -n 60 >/run/np/$NP_SCENARIO.$1.journal 2>&1"
	show_on_fail "/run/np/$NP_SCENARIO.$1.journal"
}

# write_config JSON-OBJECT-MEMBERS: /etc/numaplace/numaplace.json with the
# members given (a JSON fragment without braces) and the test's defaults.
write_config() {
	# each scenario starts from a drained node: no daemon, no state, no
	# workload scope (an earlier scenario stopped numaplaced cleanly, so
	# the host units have what they had before)
	systemctl stop numaplaced.service
	systemctl stop numaplace-workloads.scope 2>/dev/null
	rm -rf "$STATE" "$SPECS"
	rm -f "$RUNDIR/host-units.json" "$RUNDIR/hostiso.json"
	mkdir -p /etc/numaplace "$SPECS"
	printf '{\n  "spec_dir": "%s",\n  "state_dir": "%s",\n  "socket": "%s",\n  %s\n}\n' \
		"$SPECS" "$STATE" "$SOCK" "$1" >"$CONF"
}

# A unit's property as systemctl shows it.
prop() { systemctl show -P "$2" "$1"; }
# AllowedCPUs/AllowedMemoryNodes as a cpulist ("0-1 4-7" -> "0-1,4-7").
prop_cpus() { systemctl show -P "${2:-AllowedCPUs}" "$1" | tr ' ' ','; }
cg_file() { cat "/sys/fs/cgroup/$1" 2>/dev/null; }

# cpus_disjoint A B: no CPU in both lists.
cpus_disjoint() {
	local x y
	for x in $(cpulist_expand "$1"); do
		for y in $(cpulist_expand "$2"); do [ "$x" = "$y" ] && return 1; done
	done
	return 0
}
# cpus_minus A B: the CPUs of A not in B, space-separated.
cpus_minus() {
	local x y keep out=()
	for x in $(cpulist_expand "$1"); do
		keep=1
		for y in $(cpulist_expand "$2"); do [ "$x" = "$y" ] && keep=0; done
		((keep)) && out+=("$x")
	done
	echo "${out[*]}"
}
# cpus_same A B: the same set.
cpus_same() { [ "$(cpulist_expand "$1")" = "$(cpulist_expand "$2")" ]; }

# start_numaplaced: systemctl start and wait until its socket answers.
start_numaplaced() {
	systemctl start numaplaced.service || fail "systemctl start numaplaced: $(systemctl status numaplaced --no-pager 2>&1 | tail -n 5)"
	try_for 30 "$NPC" status --socket "$SOCK" >/dev/null 2>&1 || fail "numaplaced does not answer on $SOCK"
}

# counter NAME: numaplaced's status counter NAME (writes, bus_changes,
# bus_reads, drift_repaired, ...).
counter() { "$NPC" status --json --socket "$SOCK" | jq -r ".counters.$1"; }

# A long-running service of the test (a unit file in /run, started).
# make_service NAME SLICE CMD
make_service() {
	cat >/run/systemd/system/$1.service <<UNIT
[Service]
Slice=$2
ExecStart=/bin/bash -c '$3'
UNIT
	systemctl daemon-reload
	systemctl start $1.service || fail "systemctl start $1: $(systemctl status $1 --no-pager 2>&1 | tail -n 3)"
}

# main_cpu PID: the CPU it last ran on (field 39 of /proc/PID/stat).
last_cpu() { awk '{print $39}' "/proc/$1/stat"; }

# For try_for (which runs its command again each time; a $(...) in its
# arguments would be read once): a unit's property is VALUE / at least N /
# its AllowedCPUs the same set as LIST.
prop_is() { [ "$(prop "$1" "$2")" = "$3" ]; }
prop_ge() { [ "$(prop "$1" "$2")" -ge "$3" ]; }
prop_cpus_is() { cpus_same "$(prop_cpus "$1")" "$2"; }
prop_cpus_disjoint() { cpus_disjoint "$(prop_cpus "$1")" "$2"; }
