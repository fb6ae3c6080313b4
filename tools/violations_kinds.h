/* SPDX-License-Identifier: Apache-2.0 */
/* numaplace violations: intrusions by kind (user, kthread, hardirq,
 * softirq), per workload and per exclusive CPU (np_cpu_intrude). */
#ifndef NUMAPLACE_VIOLATIONS_KINDS_H
#define NUMAPLACE_VIOLATIONS_KINDS_H

#include "numaplace/bpf_maps.h"

#include <jansson.h>
#include <stdbool.h>

/* {"user": {"switches", "ticks"}, "kthread": {"switches", "ticks"},
 *  "hardirq": {"count", "ns"}, "softirq": {"count", "ns"}}; with run_ns
 * (one CPU's entry) user and kthread have "ns" too: their run time. */
json_t *vk_kinds_json(const struct np_bpf_kinds *k, bool run_ns);
/* [{"cpu", "owned", "since_ns", "kinds": {...}}] for one owner slot. */
json_t *vk_cpus_json(const struct np_bpf_maps *m, uint32_t slot);
/* One line per kind with anything counted (every kind with all): count,
 * time, (+delta) with watch, and what it suggests. True when it printed. */
bool vk_print(const struct np_bpf_kinds *tot, const struct np_bpf_kinds *d,
	      bool all, bool watch, unsigned tick_hz);
/* One line per CPU counted for the slot. */
void vk_print_cpus(const struct np_bpf_maps *m, uint32_t slot,
		   unsigned tick_hz);

#endif
