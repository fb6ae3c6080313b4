#!/bin/bash
# Benchmark (make bench-systemd; nothing asserted but that it ran):
# admission and release latency through numaplaced with the systemd
# driver, from request to durable acknowledgement with the placement
# applied (host units' AllowedCPUs changed over the bus, the workload's
# cgroup written below the delegated scope): 200 LSE admissions of one CPU
# and their releases; and the bus calls each made. The cgroupfs driver
# (writing the cgroup files itself, what one must not do under systemd) for
# comparison.
# np-timeout: 900
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "systemctl stop numaplaced"
N=${NP_BENCH_N:-200}
for drv in systemd cgroupfs; do
	write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 10,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "off"}, "host_isolation": "off",
  "cgroup_driver": "'$drv'"'
	start_numaplaced
	c0=$(counter bus_changes) r0=$(counter bus_reads)
	out=$(np-ctl-latency $SOCK $N LSE 1) || fail "np-ctl-latency: $out"
	c1=$(counter bus_changes) r1=$(counter bus_reads)
	echo "$out" | while read -r l; do log "$drv $l"; done
	log "$drv bus calls per admit+release: changes $(((c1 - c0) * 100 / N))/100, reads $(((r1 - r0) * 100 / N))/100"
	systemctl stop numaplaced
done
# what the cgroupfs driver wrote into system.slice by hand stays there
systemctl set-property --runtime system.slice AllowedCPUs=0-$((NP_CPUS - 1))
pass
