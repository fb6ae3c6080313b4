/* SPDX-License-Identifier: Apache-2.0 */
/* Verification internals shared by verify.c (maps, events, status) and
 * verify_check.c (counters -> findings). */
#ifndef NUMAPLACE_OBSERVE_VERIFY_INTERNAL_H
#define NUMAPLACE_OBSERVE_VERIFY_INTERNAL_H

#include "numaplace/bpf_load.h"
#include "numaplace/verify.h"

#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define NP_VERIFY_EVENTS 256
/* A sync's settle window lasts until the cgroups are written (then
 * settle_ms more); this long at most if that is never said. */
#define NP_VERIFY_APPLY_BOUND_NS (30ULL * 1000000000ULL)

struct np_verify_event {
	double time; /* unix seconds */
	struct np_bpf_event e;
	char workload[NP_BPF_NAME_LEN];
};

/* Per slot: what the daemon last pushed and saw. */
struct slot_state {
	struct np_bpf_counters prev;  /* counter sums at the last check */
	struct np_bpf_counters total; /* violations since the slot was taken */
	uint64_t outside_mems_bytes;  /* memory.numa_stat, last check */
	double remote_ratio;          /* last cycle with enough faults */
	bool numa_stat_missing_said;
	uint64_t settle_until_ns;
	bool pushed; /* policy written */
	np_cpuset cpus;
	int want; /* index into wants, -1 */
};

struct np_verify {
	struct np_bpf_loader *l;
	const struct np_bpf_maps *m;
	unsigned nslots;
	struct np_bpf_slot *table;
	struct slot_state *ss;
	bool *fresh;
	int *slot_of; /* per want */
	struct np_verify_wl *wants;
	const struct np_verify_config *cfg;
	const struct np_topology *topo;
	int parent_fd; /* the managed parent (read only) */
	int root_fd;   /* the hierarchy root (cgroups named "/x"), or -1 */
	const char *cgroup_parent; /* the managed parent, from the root */
	/* np_outside_levels as last set, and whether a workload outside the
	 * managed parent got its np_policy entry since (np_miss to clear) */
	uint64_t outside_levels;
	bool outside_new;
	int nwants;
	struct np_bpf_owner *owner; /* shadow of np_cpu_owner */
	/* the settle time stamped by the last sync; in flight until
	 * np_verify_applied restamps it */
	uint64_t last_settle;
	bool in_flight;
	int ncpu;
	struct np_verify_event ev[NP_VERIFY_EVENTS];
	int nev, evhead;
	uint64_t ev_dropped;
	struct {
		uint64_t rewrites, partitioned, migrations, reports;
	} act;
	char state[512];
	/* audit results of this cycle, per slot */
	uint32_t *audit_bad;
	struct np_bpf_audit_rec *audit_first;
};

uint64_t np_verify_mono_ns(void);
void np_verify_on_event(const struct np_bpf_event *e, void *ctx);
const struct np_verify_event *np_verify_last_event(const struct np_verify *v,
						   uint32_t slot,
						   uint32_t kind);

/* A workload's cgroup directory: relative to the managed parent, or
 * from the hierarchy root when named "/x" (a container's). */
static inline int np_verify_open_cgroup(const struct np_verify *v,
					const char *cgroup)
{
	int dfd = *cgroup == '/' ? v->root_fd : v->parent_fd;

	if (dfd < 0)
		return -1;
	return openat(dfd, cgroup + (*cgroup == '/'),
		      O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

static inline int np_verify_stat_cgroup(const struct np_verify *v,
					const char *cgroup, struct stat *st)
{
	int fd = np_verify_open_cgroup(v, cgroup), r;

	if (fd < 0)
		return -1;
	r = fstat(fd, st);
	close(fd);
	return r;
}

#endif
