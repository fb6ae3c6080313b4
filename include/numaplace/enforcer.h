/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The enforcer: the one way numaplaced changes the system ("make these
 * cgroups hold these cpus/mems, in a safe order; read back what the kernel
 * holds"). The reconcile stage decides; an enforcer backend applies.
 *
 * Backends: cgroupfs (userspace/enforce/cgroupfs.c; the daemon writes the
 * cgroup files below its managed parent and the host cgroups it was given)
 * and, in tests, a fake that records every call. A systemd backend (unit
 * properties over the bus) plugs in here: nothing above this interface
 * changes when it does.
 *
 * Two trees: NP_ENF_MANAGED, the managed parent (workload cgroups are named
 * relative to it), and NP_ENF_HOST, the hierarchy root (host cgroups such
 * as "system.slice", and the managed parent itself, named from the root).
 *
 * Every call returns 0 or a negative errno with a message in err (where it
 * takes one); apply and set_partition may return a positive value: done,
 * with a warning in err (the kernel granted less than asked, or refused a
 * partition and the cgroup stayed a member).
 */
#ifndef NUMAPLACE_ENFORCER_H
#define NUMAPLACE_ENFORCER_H

#include "numaplace/cgroup.h"
#include "numaplace/numa_mem.h"

#include <stdbool.h>
#include <stddef.h>

enum np_enf_tree { NP_ENF_MANAGED, NP_ENF_HOST };

struct np_enforcer;

struct np_enforcer_ops {
	const char *name;
	/* A new reconcile cycle: what read() cached is stale. */
	void (*cycle)(struct np_enforcer *e);
	/* cpuset.cpus and cpuset.mems of a managed cgroup, read at most once
	 * per cycle; -ENOENT when the cgroup does not exist. */
	int (*read)(struct np_enforcer *e, const char *cgroup, np_cpuset *cpus,
		    np_nodemask *mems, char *err, size_t errlen);
	/* Everything the kernel says about a cgroup, read now. */
	int (*inspect)(struct np_enforcer *e, enum np_enf_tree t,
		       const char *cgroup, struct np_cgroup_state *st,
		       char *err, size_t errlen);
	/* The cgroup exists (create: make it and its missing parents). */
	int (*prepare)(struct np_enforcer *e, enum np_enf_tree t,
		       const char *cgroup, bool create, char *err,
		       size_t errlen);
	/* Change managed cgroups from old to new sets in a safe order: mems
	 * widened first, shared sets give CPUs up before an exclusive set
	 * gets them, narrowing bottom-up (numaplace/cgroup.h, write plan). */
	int (*apply)(struct np_enforcer *e, const struct np_cgroup_change *ch,
		     int n, int *writes, char *err, size_t errlen);
	/* One cgroup's cpuset (cpus, and mems when mems is non-NULL). */
	int (*set_cpuset)(struct np_enforcer *e, enum np_enf_tree t,
			  const char *cgroup, const np_cpuset *cpus,
			  const np_nodemask *mems, char *err, size_t errlen);
	int (*set_partition)(struct np_enforcer *e, enum np_enf_tree t,
			     const char *cgroup, enum np_cgroup_partition p,
			     char *err, size_t errlen);
	/* Remove an empty managed cgroup: 0, -ENOENT (gone already), or
	 * -EBUSY and the like while it holds tasks or children. */
	int (*remove)(struct np_enforcer *e, const char *cgroup);
	/* Stop tracking a managed cgroup (released). */
	void (*forget)(struct np_enforcer *e, const char *cgroup);
	/* Enable a controller ("memory") from the hierarchy root down to the
	 * managed parent. */
	int (*enable_controller)(struct np_enforcer *e, const char *controller,
				 char *err, size_t errlen);
	/* Move the pages of a managed cgroup's tasks from nodes `from` to
	 * nodes `to`. */
	int (*migrate_memory)(struct np_enforcer *e, const char *cgroup,
			      np_nodemask from, np_nodemask to,
			      struct np_migrate_result *res, char *err,
			      size_t errlen);
	/* The managed parent's directory, read only (cgroup ids, listing,
	 * memory.numa_stat): -1 when the backend has none. */
	int (*parent_fd)(struct np_enforcer *e);
	/* The managed tree is not a real cgroup2 hierarchy (tests). */
	bool (*fake)(struct np_enforcer *e);
	void (*destroy)(struct np_enforcer *e);
};

struct np_enforcer {
	const struct np_enforcer_ops *ops;
};

/*
 * The cgroupfs backend: opens the hierarchy (o->root, discovered when
 * NULL), the managed parent o->parent (created when o->create_parent) and
 * checks that each of host[0..nhost) exists in the hierarchy.
 */
int np_enforcer_cgroupfs_open(struct np_enforcer **out,
			      const struct np_cgroup_opts *o,
			      const char *const *host, int nhost, char *err,
			      size_t errlen);

static inline void np_enf_destroy(struct np_enforcer *e)
{
	if (e)
		e->ops->destroy(e);
}

#endif
