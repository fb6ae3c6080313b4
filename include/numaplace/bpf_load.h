/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Load and attach the verification programs (bpf/numaplace.bpf.c): probe
 * every optional hook, disable what this kernel refuses (not fatal) and say
 * why, pin the maps under <pin_path>/v<ABI> (mode 0600), reconcile pins of an
 * older layout. No logging: warnings are returned as text.
 */
#ifndef NUMAPLACE_BPF_LOAD_H
#define NUMAPLACE_BPF_LOAD_H

#include "numaplace/bpf_maps.h"

#include <jansson.h>

struct np_bpf_load_opts {
	const char *pin_path;  /* e.g. /sys/fs/bpf/numaplace */
	uint64_t parent_cgid;  /* the managed parent's cgroup id */
	uint32_t parent_level; /* its level (the cgroup2 root is 0) */
	unsigned nslots;       /* workloads the maps can hold */
	unsigned tick_hz;      /* cpu-clock sampler frequency, 0 = off */
	unsigned rate_burst;   /* samples per second per CPU per workload */
	unsigned grace_ms;     /* persistence before a violation counts */
	bool verbose;          /* libbpf debug output to stderr */
};

/* Signals, in the order of enum np_bpf_signal bits. */
#define NP_BPF_NSIGNALS 8
extern const char *const np_bpf_signal_names[NP_BPF_NSIGNALS];

struct np_bpf_loader;

/*
 * Load, pin and attach. On success *out is ready and maps are open; the
 * signals that could not be enabled are listed by np_bpf_signals_json()
 * with the reason. Fails only when the core (sched_switch) cannot load.
 */
int np_bpf_load(struct np_bpf_loader **out, const struct np_bpf_load_opts *o,
		char *err, size_t errlen);
void np_bpf_unload(struct np_bpf_loader *l);

const struct np_bpf_maps *np_bpf_loader_maps(const struct np_bpf_loader *l);
unsigned np_bpf_loader_signals(const struct np_bpf_loader *l);
const char *np_bpf_signal_why(const struct np_bpf_loader *l, int sig_index);
/* {"sched_switch": "active", "numa_fault": "off: ...", ...} */
json_t *np_bpf_signals_json(const struct np_bpf_loader *l);

/* Run the iter/task audit: cb for every task of a managed workload. */
typedef void (*np_bpf_audit_cb)(const struct np_bpf_audit_rec *rec, void *ctx);
int np_bpf_audit(struct np_bpf_loader *l, np_bpf_audit_cb cb, void *ctx);

/* Consume pending ring buffer samples. Returns how many. */
typedef void (*np_bpf_event_cb)(const struct np_bpf_event *e, void *ctx);
int np_bpf_poll_events(struct np_bpf_loader *l, np_bpf_event_cb cb, void *ctx);

/* run_time_ns / run_cnt of a program by its name ("np_sched_switch");
 * counted only while kernel.bpf_stats_enabled (or bpf_enable_stats()). */
int np_bpf_prog_stats(const struct np_bpf_loader *l, const char *name,
		      uint64_t *run_ns, uint64_t *run_cnt);

/* A loaded program by name and kernel id, with its run_time_ns / run_cnt
 * when listed: a copy another thread can read whatever happens to the
 * loader (reading them there by id would take CAP_SYS_ADMIN, which the
 * confined unit does not give). */
struct np_bpf_prog_ref {
	char name[64];
	uint32_t id;
	uint64_t run_ns, run_cnt;
};

/* The loaded programs, up to max, and their run stats now; their number. */
int np_bpf_prog_list(const struct np_bpf_loader *l, struct np_bpf_prog_ref *out,
		     int max);

/* Update np_info (signals, daemon pid, parent, times). */
int np_bpf_info_update(struct np_bpf_loader *l, uint32_t daemon_pid);

/*
 * The workloads whose cgroup is not below the managed parent (containers'
 * cgroups), as their levels: bit L for one at cgroup level L (the root 0),
 * bit 63 for 63 and deeper (np_bpf_level_bit). Call it after their
 * np_policy entries are written: it bumps the generation of the programs'
 * per-CPU cache of cgroups without a workload (np_miss) and clears it on
 * every CPU, so that a cgroup seen before its workload was registered is
 * recognized from now on. levels 0: no lookup outside the managed parent.
 */
int np_bpf_outside_set(struct np_bpf_loader *l, uint64_t levels);

#endif
