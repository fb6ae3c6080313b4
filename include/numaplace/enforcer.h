/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The enforcer: the one way numaplaced changes the system ("make these
 * cgroups hold these cpus/mems, in a safe order; read back what the kernel
 * holds"). The reconcile stage decides; an enforcer backend applies.
 *
 * Backends: cgroupfs (userspace/enforce/cgroupfs.c; the daemon writes the
 * cgroup files below its managed parent and the host cgroups it was given),
 * systemd (userspace/enforce/systemd.c; host units and the delegated scope
 * that is the managed parent get their CPUs as unit properties over the
 * bus, cgroup files are written only below the delegation point) and, in
 * tests, a fake that records every call.
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

#include "numaplace/admit.h"
#include "numaplace/cgroup.h"
#include "numaplace/numa_mem.h"

#include <stdbool.h>
#include <stddef.h>

enum np_enf_tree { NP_ENF_MANAGED, NP_ENF_HOST };

struct np_enforcer;

enum { NP_ENF_QUIET_READ, NP_ENF_QUIET_SINCE };

struct np_enforcer_ops {
	const char *name;
	/* It can make the managed parent a partition root (the chain of
	 * partitions from the hierarchy root that isolation "partition"
	 * needs). */
	bool partitions;
	/* A new reconcile cycle: what read() cached is stale. */
	void (*cycle)(struct np_enforcer *e);
	/*
	 * For a cycle that may skip the managed cgroups (the last cycle found
	 * nothing to do). NP_ENF_QUIET_READ, after a cycle's reads: every
	 * cgroup it read is watched, so that a change to any of them would
	 * be an event. NP_ENF_QUIET_SINCE, after cycle(): no event since the
	 * last such question (which this one consumes) and no full reading
	 * due. NULL: never quiet.
	 */
	bool (*quiet)(struct np_enforcer *e, int what);
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
	/* cpu.max of a managed cgroup (quota_us < 0: "max"); NULL in
	 * backends without it. */
	int (*set_cpu_max)(struct np_enforcer *e, const char *cgroup,
			   int64_t quota_us, int64_t period_us, char *err,
			   size_t errlen);
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
	/* The hierarchy root's directory, read only (containers' cgroups
	 * are named from it: "/np/ctr1"); -1 when the backend has none. */
	int (*root_fd)(struct np_enforcer *e);
	/* The managed tree is not a real cgroup2 hierarchy (tests). */
	bool (*fake)(struct np_enforcer *e);
	/* Workloads that are systemd units ("unit" in the spec); NULL in
	 * backends that have none. The unit gets cpus and the memory nodes
	 * mems as AllowedCPUs/AllowedMemoryNodes: 1 done, 0 already so (no
	 * call made unless force); -ENOENT while the unit does not exist
	 * (pending). */
	int (*set_unit)(struct np_enforcer *e, const char *unit,
			const np_cpuset *cpus, np_nodemask mems, bool force,
			char *err, size_t errlen);
	/* What the unit's cgroup holds: -ENOENT while it has none (not
	 * running). slice gets the cgroup of the unit's slice (e.g.
	 * "system.slice") whenever the unit is loaded, "" otherwise. */
	int (*read_unit)(struct np_enforcer *e, const char *unit,
			 char *slice, size_t slicelen, np_cpuset *cpus,
			 char *err, size_t errlen);
	/* Released: the unit gets back what it had before (0), unless it
	 * still runs right below the managed parent's slice (slice_unit):
	 * then it keeps its record and what it has (1), to be confined
	 * (confine_unit) while it runs there; or unless it is stopped:
	 * then nothing is set on it (systemd 252 makes the cgroup of a
	 * stopped unit again, empty, when a property is set) and it keeps
	 * its record (2), given back when a release finds it running
	 * elsewhere, confined when it runs in the slice again. */
	int (*release_unit)(struct np_enforcer *e, const char *unit, char *err,
			    size_t errlen);
	/* The i-th unit whose original settings the backend keeps for a
	 * workload or a unit it confined (to be given back at release): 1
	 * with its name in unit, 0 past the last. NULL in backends without
	 * units. */
	int (*recorded_unit)(struct np_enforcer *e, int i, char *unit,
			     size_t len);
	/* The i-th service or scope running right below the managed
	 * parent's slice (numaplace.slice; its cgroup holds processes),
	 * numaplace's scope aside: 1 with
	 * its name in unit, 0 past the last, negative on an error; the
	 * slice's directory is read once a cycle (cycle()). None when the
	 * managed parent is the root slice (units there are host units).
	 * NULL in backends without units. */
	int (*slice_unit)(struct np_enforcer *e, int i, char *unit,
			  size_t len);
	/* Such a unit that is no workload confined to cpus (AllowedCPUs),
	 * its memory nodes what they were before it was first changed
	 * (every node where it had none): what it had is recorded first, and
	 * given back by release_unit once it runs elsewhere, or by
	 * shutdown while it runs. 1 done, 0 already so (no call unless
	 * force) or stopped (nothing is set on a stopped unit). cpus NULL:
	 * what it had given back now (a unit that came to hold a container
	 * workload's cgroup): 1, or 0 when it is a stopped service (its
	 * record kept); a stopped scope is forgotten (1). */
	int (*confine_unit)(struct np_enforcer *e, const char *unit,
			    const np_cpuset *cpus, bool force, char *err,
			    size_t errlen);
	/* A descriptor to poll for the backend's events (-1: none), and
	 * what to do when it is readable: true when a unit the daemon
	 * watches started, stopped or changed (worth a cycle now). */
	int (*event_fd)(struct np_enforcer *e);
	bool (*process_events)(struct np_enforcer *e);
	/* A clean shutdown: give the host cgroups, and the units confined
	 * by confine_unit that still run, their CPUs back (NULL: nothing to
	 * do); a confined unit that is stopped keeps its record. */
	int (*shutdown)(struct np_enforcer *e, char *err, size_t errlen);
	/* Is this stop one half of a restart of the daemon's own unit (the
	 * job the service manager runs on it is a restart)? why: what was
	 * found, or why it could not be told (then false: a stop). NULL:
	 * a stop is always a stop. */
	bool (*restarting)(struct np_enforcer *e, char *why, size_t whylen);
	void (*destroy)(struct np_enforcer *e);
};

struct np_enforcer {
	const struct np_enforcer_ops *ops;
	/* Bus method calls made so far (systemd backend): ones that read a
	 * unit, ones that change one. numaplaced shows them in its status. */
	unsigned long long bus_reads, bus_changes;
	/* Bumped when the backend's event_fd() is a new descriptor (even
	 * with the same number: a reconnect closes the old one first). */
	unsigned bus_gen;
	/* Why changes made by others are not all seen as they happen (the
	 * daemon says it once; NULL: they are). */
	const char *events_lost;
	/* Why isolation "partition" cannot be had with this backend as it
	 * was opened (NULL: it can, when ops->partitions). */
	const char *no_partitions;
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

/*
 * The systemd backend. Workload cgroups live below a transient scope with
 * Delegate=yes (o->scope in o->slice), started if it is not running, with
 * a small holder process so that it stays up while empty; its path
 * relative to the hierarchy root goes into managed[]. Host cgroups
 * (host[0..nhost), each the cgroup of a unit: NAME.slice, NAME.scope,
 * NAME.service) get AllowedCPUs through SetUnitProperties(runtime); what
 * they had before is kept in o->runtime_dir/host-units.json (moved there
 * at open from o->state_dir, an older release's place) and given back
 * at shutdown (an explicit full range where they had none: an empty
 * AllowedCPUs= does not give CPUs back).
 */
struct np_enforcer_systemd_opts {
	const char *root;	 /* the cgroup2 mount; NULL: discovered */
	const char *slice;	 /* "numaplace.slice" */
	const char *scope;	 /* "numaplace-workloads.scope" */
	const char *bus_address; /* NULL: systemd's private socket, then
				    the system bus */
	const char *runtime_dir; /* host-units.json */
	const char *state_dir;	 /* where an older release kept it; NULL:
				    none */
	const char *const *holder_argv; /* the scope's first process */
	np_cpuset online;	 /* the scope's CPUs; host units' full range */
	np_cpuset nodes;	 /* every memory node (as numbers) */
	unsigned full_scan_ms;	 /* np_cgroup_opts.full_scan_ms */
};

int np_enforcer_systemd_open(struct np_enforcer **out,
			     const struct np_enforcer_systemd_opts *o,
			     const char *const *host, int nhost, char *managed,
			     size_t managed_len, char *err, size_t errlen);

/*
 * The unit whose cgroup is path (relative to the hierarchy root): its last
 * component, which must be a unit name (np_systemd_unit_check) whose suffix
 * matches; "a.slice/a-b.slice" and "system.slice/x.service" are units,
 * "np/w1" is not (-EINVAL).
 */
int np_systemd_unit_of_cgroup(const char *path, char *unit, size_t len, char *err,
			 size_t errlen);

/* PID 1 is systemd (sd_booted()) and its bus answers; *why says what was
 * tried when not. */
bool np_systemd_usable(const char *bus_address, char *why, size_t len);

static inline void np_enf_destroy(struct np_enforcer *e)
{
	if (e)
		e->ops->destroy(e);
}

#endif
