/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Placement verification (userspace/observe/verify*.c): keeps the BPF
 * policy maps equal to the desired placement, reads the counters, the
 * audit and memory.numa_stat once per cycle, and returns what it found.
 * It writes no cgroup and changes no allocation: the daemon's reconcile
 * stage decides what a finding leads to (a rewrite, a partition, a page
 * migration) and asks the enforcer.
 */
#ifndef NUMAPLACE_VERIFY_H
#define NUMAPLACE_VERIFY_H

#include "numaplace/bpf_abi.h"
#include "numaplace/admit.h"
#include "numaplace/verify_config.h"
#include "numaplace/topology.h"

#include <jansson.h>
#include <stdint.h>

/* One workload as verification sees it (pushed by np_verify_sync). */
struct np_verify_wl {
	int wl; /* the caller's index of the workload, returned in findings */
	char name[NP_NAME_MAX];
	char cgroup[2 * NP_PATH_MAX]; /* relative to the managed parent */
	np_cpuset cpus;               /* where its tasks may run */
	np_cpuset owned;              /* CPUs it holds exclusively (owners) */
	np_nodemask mems;
	uint32_t flags;               /* NP_BPF_POL_* (numaplace/bpf_abi.h) */
};

enum np_finding_kind {
	NP_FIND_RAN_OUTSIDE,   /* ran on / migrated to a CPU outside its set */
	NP_FIND_AUDIT_OUTSIDE, /* a task's allowed mask is not its set */
	NP_FIND_INTRUSION,     /* others ran on its exclusive CPUs */
	NP_FIND_NUMA_BALANCER, /* the balancer moved/swapped its tasks */
	NP_FIND_OUTSIDE_MEMS,  /* memory resident outside its mems */
	NP_FIND_REMOTE_FAULTS, /* remote NUMA hinting faults over the ratio */
};

/* What verification saw, with its evidence. */
struct np_finding {
	enum np_finding_kind kind;
	int wl; /* np_verify_wl.wl */
	char workload[NP_NAME_MAX];
	char cgroup[2 * NP_PATH_MAX];
	/* Where it should be (its desired placement). */
	np_cpuset cpus;
	np_nodemask mems;
	/* A task that shows it (pid 0: none sampled). */
	uint32_t pid, cpu;
	char comm[16];
	/* Counts of this cycle, by kind:
	 *   RAN_OUTSIDE   switches, ticks, migrations to a disallowed CPU
	 *   AUDIT_OUTSIDE tasks outside
	 *   INTRUSION     switches from other workloads, from other cgroups,
	 *                 intruder ticks
	 *   NUMA_BALANCER moves, swaps, sticks
	 *   OUTSIDE_MEMS  bytes resident outside its mems
	 *   REMOTE_FAULTS remote pages, all pages, pages outside its mems */
	uint64_t n[3];
	double ratio; /* REMOTE_FAULTS: remote / all */
	/* INTRUSION, by kind of intruder (enum np_bpf_intrude_kind: user,
	 * kthread, hardirq, softirq), this cycle: switches in or handlers
	 * run, and time (cpu-clock ticks for tasks, ns for IRQs). The finding
	 * is made for user tasks only (a cpuset that is wrong somewhere, which
	 * the daemon may act on); kernel threads and IRQs are evidence here,
	 * never a cause: no cpuset keeps them off a CPU. */
	uint64_t kind_count[NP_BPF_IK_N];
	uint64_t kind_time[NP_BPF_IK_N];
	/* INTRUSION: np_bpf_intruder_kind of the named task (pid, comm) */
	uint32_t intruder_kind;
	/* The whole finding as one sentence (the daemon logs it). */
	char what[900];
};

struct np_findings {
	struct np_finding *f;
	int n, cap;
};

void np_findings_free(struct np_findings *fs);

/* What verification needs from its caller; pointers must outlive it. */
struct np_verify_setup {
	const struct np_verify_config *cfg; /* read each cycle (reload) */
	const char *pin_path;               /* bpffs directory */
	int parent_fd;             /* the managed parent, read only; -1 */
	int root_fd; /* the hierarchy root (cgroups named "/x"); -1 */
	const char *cgroup_parent; /* relative to the hierarchy root */
	bool fake;                 /* not a kernel cgroup tree */
	const struct np_topology *topo;
};

struct np_verify;

/* Load the programs per cfg->enabled (logging what is active and why the
 * rest is not). *out stays NULL when verification is off or could not be
 * loaded in "auto" mode; an error only when it was required ("on"). */
int np_verify_start(struct np_verify **out, const struct np_verify_setup *s);
void np_verify_stop(struct np_verify *v);
/* Push the desired placement to the policy maps before any cgroup is
 * written (stamping a generation and a settle window). */
void np_verify_sync(struct np_verify *v, const struct np_verify_wl *w, int n);
/* The cgroups of the last sync are written: the settle window of what that
 * sync changed restarts now, so a slow apply (a loaded machine, bus calls
 * under the systemd driver) is not taken for a violation. */
void np_verify_applied(struct np_verify *v);
/* Read counters, audit and memory once; append what was found. */
int np_verify_check(struct np_verify *v, struct np_findings *out);

/* What the daemon did about findings (shown in status). */
enum np_verify_action_kind {
	NP_VERIFY_REWRITE,
	NP_VERIFY_PARTITIONED,
	NP_VERIFY_MIGRATION,
};
void np_verify_count_action(struct np_verify *v, enum np_verify_action_kind k);

json_t *np_verify_status(struct np_verify *v,
			 const struct np_verify_config *cfg,
			 const char *pin_path);
json_t *np_verify_events(struct np_verify *v, int limit);
/* The programs verification loaded (numaplace/bpf_load.h), up to max;
 * 0 when it is off. */
struct np_bpf_prog_ref;
int np_verify_progs(const struct np_verify *v, struct np_bpf_prog_ref *out,
		    int max);
/* Samples the BPF side dropped (rate limiter, full ring) since start. */
uint64_t np_verify_samples_dropped(const struct np_verify *v);

#endif
