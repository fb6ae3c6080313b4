/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The verification maps from userspace: open the pinned maps, turn
 * allocations into policies, assign per-workload slots, read and sum the
 * per-CPU counters. Used by the daemon (which also loads the programs, see
 * bpf_load.h) and by `numaplace violations`, which works from the pins
 * alone while the daemon is down. No logging; 0 or a negative errno.
 */
#ifndef NUMAPLACE_BPF_MAPS_H
#define NUMAPLACE_BPF_MAPS_H

#include "numaplace/bpf_abi.h"
#include "numaplace/cpuset.h"

#include <stddef.h>
#include <stdint.h>

struct np_bpf_maps {
	int policy, cpu_owner, cpu_topo, counters, slots, intruders, info,
		events, rate, cpu_intrude;
	int ncpus;         /* possible CPUs: per-CPU values per entry */
	unsigned nslots;   /* max_entries of the per-workload maps */
};

/* All fds -1. */
void np_bpf_maps_init(struct np_bpf_maps *m);
/* Open the maps pinned in DIR (e.g. /sys/fs/bpf/numaplace/v2). err names
 * the missing pin and says what to do. */
int np_bpf_maps_open_pinned(struct np_bpf_maps *m, const char *dir, char *err,
			    size_t errlen);
void np_bpf_maps_close(struct np_bpf_maps *m);

/* <pin_path>/v<ABI>. */
int np_bpf_pin_dir(char *out, size_t len, const char *pin_path);

/* The policy of a workload. */
void np_bpf_policy_make(struct np_bpf_policy *out, const np_cpuset *cpus,
			np_nodemask mems, uint32_t slot, uint32_t gen,
			uint32_t flags, uint64_t settle_until_ns);

/* The np_outside_levels bit of a cgroup level (np_bpf_outside_set). */
uint64_t np_bpf_level_bit(int level);
/* The cgroup level (the hierarchy root 0) of a workload's cgroup when it is
 * not below the managed parent: `cgroup` named from the hierarchy root
 * ("/np/c1": 2) and not below `parent` (the managed parent, relative to the
 * root). -1 for a cgroup named relative to the parent (below it) or one
 * below it named from the root. Empty components ("//", a trailing "/")
 * are not levels. */
int np_bpf_outside_level(const char *cgroup, const char *parent);

/* Sum per-CPU counter values as the kernel lays them out for a lookup of
 * a per-CPU map: ncpus values, each `stride` bytes apart (the value size
 * rounded up to 8). */
void np_bpf_counters_sum(struct np_bpf_counters *sum, const void *percpu,
			 int ncpus, size_t stride);
/* out = now - prev, field by field; a field that went backwards (the
 * slot was reset) counts from zero: out = now. */
void np_bpf_counters_delta(struct np_bpf_counters *out,
			   const struct np_bpf_counters *now,
			   const struct np_bpf_counters *prev);
bool np_bpf_counters_any_violation(const struct np_bpf_counters *c);
/* Field names in struct order (NP_BPF_NCOUNTERS of them). */
extern const char *const np_bpf_counter_names[];

/* Read one slot's counters, summed over CPUs. */
int np_bpf_counters_read(const struct np_bpf_maps *m, uint32_t slot,
			 struct np_bpf_counters *sum);
/* The used slots with their counters, in slot order (what `numaplace
 * violations` and /metrics report). */
struct np_bpf_slot_row {
	uint32_t slot;
	struct np_bpf_slot s; /* name and cgroup NUL-terminated */
	struct np_bpf_counters c;
};
/* *out (heap, free()) gets the rows; their number or a negative errno. */
int np_bpf_slots_read(const struct np_bpf_maps *m, struct np_bpf_slot_row **out);
/* Zero one slot's counters and rate state, and the np_cpu_intrude entries
 * counted for it (a slot handed to a new workload starts from zero). */
int np_bpf_slot_reset(const struct np_bpf_maps *m, uint32_t slot);

/*
 * Slot assignment. `table` mirrors np_slots (nslots entries). A wanted
 * workload keeps the slot that has its name and cgroup id (its counters go
 * on across daemon restarts); otherwise it gets a free slot. Slots no
 * longer wanted are freed. out_slot[i] is the slot of want[i], or -1 when
 * the table is full. fresh[s] is set for a slot newly handed out (its
 * counters must be reset). Returns the number of workloads without a slot.
 */
struct np_bpf_want {
	char name[NP_BPF_NAME_LEN];
	char cgroup[128];
	uint64_t cgid;
	np_cpuset cpus;
	np_nodemask mems;
	uint32_t flags; /* np_bpf_policy_flags */
};

int np_bpf_slots_assign(struct np_bpf_slot *table, unsigned nslots,
			const struct np_bpf_want *want, int n, int *out_slot,
			bool *fresh);

/* Top intruders of one owner slot: tasks before kernel threads, then most
 * switches first. */
struct np_bpf_intruder {
	struct np_bpf_intruder_key key;
	struct np_bpf_intruder_val val;
};

int np_bpf_intruders_top(const struct np_bpf_maps *m, uint32_t slot,
			 struct np_bpf_intruder *out, int max);

const char *np_bpf_intruder_kind_name(uint32_t kind);

/*
 * Intrusions by kind (enum np_bpf_intrude_kind: user, kthread, hardirq,
 * softirq). count: switches in (user, kthread) or handlers/vectors run
 * (hardirq, softirq); ticks: cpu-clock samples (user, kthread; 0 for
 * IRQs); ns: time in the handlers (hardirq, softirq), and for one CPU's
 * entry the run time of user tasks and kernel threads there (every run,
 * np_bpf_cpu_intrude.user_ns/kthread_ns; 0 in a workload's totals).
 */
struct np_bpf_kinds {
	uint64_t count[NP_BPF_IK_N];
	uint64_t ticks[NP_BPF_IK_N];
	uint64_t ns[NP_BPF_IK_N];
};

/* A workload's totals by kind (user = other workloads + other cgroups). */
void np_bpf_kinds_of_counters(struct np_bpf_kinds *out,
			      const struct np_bpf_counters *c);
/* One CPU's entry of np_cpu_intrude by kind. */
void np_bpf_kinds_of_cpu(struct np_bpf_kinds *out,
			 const struct np_bpf_cpu_intrude *ci);
bool np_bpf_kinds_any(const struct np_bpf_kinds *k);
/* "user", "kthread", "hardirq", "softirq" ("unknown" past them). */
const char *np_bpf_intrude_kind_name(uint32_t kind);
/* What a kind suggests, as a short phrase. */
const char *np_bpf_intrude_kind_hint(uint32_t kind);

/* The np_cpu_intrude entries counted for one owner slot, by CPU. owned:
 * np_cpu_owner still gives the CPU to that slot (else the entry keeps what
 * was counted while it did). */
struct np_bpf_cpu_row {
	uint32_t cpu;
	bool owned;
	struct np_bpf_cpu_intrude v;
};

/* Up to max rows, CPUs in order; the number found or a negative errno. */
int np_bpf_cpu_intrude_read(const struct np_bpf_maps *m, uint32_t slot,
			    struct np_bpf_cpu_row *out, int max);
const char *np_bpf_event_kind_name(uint32_t kind);

#endif
