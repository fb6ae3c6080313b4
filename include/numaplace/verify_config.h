/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What verification is configured with ("verify" in numaplaced's
 * configuration file, numaplace/config.h): verification's own type
 * (userspace/observe/), so that numaplace/verify.h does not depend on the
 * daemon's configuration.
 */
#ifndef NUMAPLACE_VERIFY_CONFIG_H
#define NUMAPLACE_VERIFY_CONFIG_H

#include <stdint.h>

/* Placement verification with eBPF ("verify" in the config file). */
enum np_verify_mode { NP_VERIFY_AUTO, NP_VERIFY_ON, NP_VERIFY_OFF };
enum np_verify_action { NP_ACT_REPORT, NP_ACT_PARTITION, NP_ACT_MIGRATE };

struct np_verify_config {
	enum np_verify_mode enabled; /* auto: load if the kernel lets us */
	unsigned max_workloads;      /* slots in the BPF maps */
	unsigned tick_hz;            /* cpu-clock sampler, 0 = off */
	unsigned settle_ms;          /* after a policy change: "transition" */
	unsigned grace_ms;           /* a task must stay outside this long */
	unsigned sample_burst;       /* ring buffer samples/s/CPU/workload */
	enum np_verify_action on_intrusion;     /* report | partition */
	enum np_verify_action on_remote_memory; /* report | migrate */
	double remote_fault_ratio;   /* remote / all hinting-fault pages */
	uint64_t min_fault_pages;    /* per cycle, before the ratio counts */
	uint64_t outside_mems_bytes; /* memory.numa_stat outside cpuset.mems */
	unsigned migrate_interval_s; /* at most one page migration per period */
};

#endif
