#!/bin/bash
# Benchmark (make bench-systemd; nothing asserted but that it ran):
# admission and release latency through numaplaced with the systemd
# driver, from request to durable acknowledgement with the placement
# applied (host units' AllowedCPUs changed over the bus, the workload's
# cgroup written below the delegated scope): 200 LSE admissions of one CPU
# and their releases; and the bus calls each made.
# np-timeout: 900
. /sdtest/sdlib.sh
journal_on_fail numaplaced
on_exit "systemctl stop numaplaced"
N=${NP_BENCH_N:-200}
write_config '"cgroup_parent": "numaplace.slice", "reconcile_period_s": 10,
  "node_policy": {"cpu_policy": "static", "reserved_cpus": "0"},
  "verify": {"enabled": "off"}, "host_isolation": "off"'
start_numaplaced
for drv in systemd; do
	c0=$(counter bus_changes) r0=$(counter bus_reads)
	out=$(np-ctl-latency $SOCK $N LSE 1) || fail "np-ctl-latency: $out"
	c1=$(counter bus_changes) r1=$(counter bus_reads)
	echo "$out" | while read -r l; do log "$drv $l"; done
	log "$drv bus calls per admit+release: changes $(((c1 - c0) * 100 / N))/100, reads $(((r1 - r0) * 100 / N))/100"
done
pass
