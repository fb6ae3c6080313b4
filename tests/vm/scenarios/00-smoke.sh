#!/bin/sh
# 00-smoke: the VM has the topology run.sh asked for, and cgroup v2 cpusets
# work.  Asserts only on the kernel's own files (plus `numaplace topology
# --json` when the binary is in the initramfs).
# shellcheck source-path=SCRIPTDIR/.. source=lib.sh
. /scenarios/lib.sh

: "${NP_TOPO:?np.topo missing from the kernel command line}"
: "${NP_NODES:?}" "${NP_CPUS:?}" "${NP_SMT:?}"
log "topology $NP_TOPO: $NP_NODES nodes, $NP_CPUS cpus, $NP_SMT threads/core"

# --- NUMA nodes and CPUs ----------------------------------------------------
S=/sys/devices/system
n=$(find $S/node -maxdepth 1 -name 'node[0-9]*' | wc -l)
assert_eq "$n" "$NP_NODES" "NUMA nodes under $S/node"
assert_file_eq $S/node/online "0-$((NP_NODES - 1))"
assert_file_eq $S/cpu/online "0-$((NP_CPUS - 1))"
assert_eq "$(nproc)" "$NP_CPUS" "nproc"

i=0
while [ "$i" -lt "$NP_NODES" ]; do
	if [ -n "${NP_NODECPUS:-}" ]; then
		assert_file_eq $S/node/node$i/cpulist "$(np_field "$NP_NODECPUS" : $((i + 1)))"
	fi
	if [ -n "${NP_DIST:-}" ]; then
		assert_file_eq $S/node/node$i/distance \
			"$(np_field "$NP_DIST" : $((i + 1)) | tr ',' ' ')"
	fi
	# every node got memory
	mem=$(sed -n 's/.*MemTotal: *\([0-9]*\) kB/\1/p' $S/node/node$i/meminfo)
	[ "${mem:-0}" -gt 0 ] || fail "node$i has no memory"
	log "node$i: cpus $(cat $S/node/node$i/cpulist), distance $(cat $S/node/node$i/distance), ${mem} kB"
	i=$((i + 1))
done

# --- SMT siblings -------------------------------------------------------------
sib=$(cat $S/cpu/cpu0/topology/thread_siblings_list)
assert_eq "$(cpulist_count "$sib")" "$NP_SMT" "cpu0 thread_siblings_list ($sib) size"
log "cpu0 siblings: $sib, core_cpus: $(cat $S/cpu/cpu0/topology/core_cpus_list 2>/dev/null)"

# --- cgroup v2 cpuset --------------------------------------------------------
assert_eq "$(mount_type /sys/fs/cgroup)" cgroup2 "/sys/fs/cgroup fs type"
assert_word_in cpuset "$(cat "$CG/cgroup.controllers")" "$CG/cgroup.controllers"
assert_file_exists /sys/kernel/btf/vmlinux
assert_eq "$(mount_type /sys/fs/bpf)" bpf "/sys/fs/bpf fs type"

cgname=np-smoke.$$
on_exit "cg_destroy $cgname"
cg_create "$cgname" cpuset
cg_write "$cgname" cpuset.cpus 1
cg_write "$cgname" cpuset.mems 0
assert_file_eq "$CG/$cgname/cpuset.cpus.effective" 1
assert_file_eq "$CG/$cgname/cpuset.mems.effective" 0

pid=$(spawn_sleeper)
on_exit "kill $pid"
cg_move "$pid" "$cgname"
assert_eq "$(pid_cgroup "$pid")" "/$cgname" "/proc/$pid/cgroup"
assert_eq "$(pid_cpus "$pid")" 1 "Cpus_allowed_list of pid $pid"
assert_eq "$(pid_mems "$pid")" 0 "Mems_allowed_list of pid $pid"

# Widening the cpuset is visible in the task too.
last=$((NP_CPUS - 1))
cg_write "$cgname" cpuset.cpus "1,$last"
assert_eq "$(pid_cpus "$pid")" "1,$last" "Cpus_allowed_list after widening"

# --- numaplace, if it was put into the initramfs ----------------------------
if [ -x /bin/numaplace ]; then
	if out=$(numaplace topology --json 2>&1); then
		printf '%s\n' "$out" | head -n 15 | sed 's/^/  | /'
		log "numaplace topology --json: exit 0, $(printf '%s\n' "$out" | wc -l) lines"
	else
		fail "numaplace topology --json exited $?: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
	fi
else
	note "numaplace not in initramfs: topology check skipped"
fi
pass
