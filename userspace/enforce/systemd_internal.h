/* SPDX-License-Identifier: Apache-2.0 */
/* The systemd enforcer backend's parts, one module (prefix np_systemd_):
 * systemd.c: operations and opening; systemd_units.c: what units had
 * before, workloads that are units; systemd_bus.c: systemd's D-Bus API
 * (np_systemd_bus_*, systemd_bus.h) and the backend's calls through it,
 * which reconnect once; systemd_names.c: unit names. */
#ifndef NUMAPLACE_ENFORCE_SYSTEMD_INTERNAL_H
#define NUMAPLACE_ENFORCE_SYSTEMD_INTERNAL_H

#include "systemd_bus.h"
#include "numaplace/enforcer.h"

#define HOLDER ".np+holder"
#define ORIGINALS "host-units.json"
#define ORIGINALS_MAX (1 << 20)

struct host_unit {
	char cgroup[NP_CGROUP_PATH_MAX];
	char unit[256];
	bool recorded;	/* its original AllowedCPUs are in the file */
	bool orig_cpus_set;
	np_cpuset orig_cpus;
	bool orig_mems_set;
	np_cpuset orig_mems;
	bool host;	/* named in shared_cgroups */
	/* a workload's unit: what numaplace last set, and whether a bus
	 * signal said it changed (started, stopped, reloaded) since */
	bool known;
	np_cpuset last_cpus, last_mems;
	bool dirty;
	bool queried; /* asked systemd about it since the last signal */
	bool pending; /* not loaded when last asked */
	/* right below the managed parent's slice and no workload: confined
	 * to the shared pool (confine_unit) while it runs there; given back
	 * when it runs elsewhere, or at a clean stop while it runs; nothing
	 * is set while it is stopped (np_systemd_release_unit) */
	bool stray;
	char slice_path[NP_CGROUP_PATH_MAX]; /* its slice's cgroup, when known */
};

struct systemd_backend {
	struct np_enforcer e;
	struct np_enforcer *fs; /* cgroupfs, rooted at the delegated scope */
	struct np_cgroup_root host; /* the hierarchy root, read only */
	bool host_open;
	sd_bus *bus;
	char address[256]; /* "" = default */
	char managed[NP_CGROUP_PATH_MAX];
	char slice[256], scope[256];
	char no_partitions[512]; /* why isolation "partition" cannot be */
	char runtime_dir[NP_CGROUP_PATH_MAX]; /* host-units.json */
	char state_dir[NP_CGROUP_PATH_MAX];   /* where it was before */
	np_cpuset online, nodes;
	np_cpuset full; /* possible CPUs: given back where a unit had none */
	int nunits;
	struct host_unit *units; /* host cgroups, then units met later */
	bool events;		 /* a watched unit changed (bus signal) */
	/* the services and scopes right below the managed parent's slice,
	 * as read this cycle (slice_unit; listed_now: read since cycle()) */
	char (*listed)[256];
	int nlisted, listed_cap;
	bool listed_now;
};

#define SD(e) ((struct systemd_backend *)(e))

/* systemd_bus.c: bus calls that reconnect once when the bus went away */
int np_systemd_reconnect(struct systemd_backend *s, char *err, size_t errlen);
int np_systemd_set_allowed(struct systemd_backend *s, const char *unit,
			 const np_cpuset *cpus, const np_cpuset *mems,
			 char *err, size_t errlen);
int np_systemd_unit_info(struct systemd_backend *s, const char *unit, bool load_it,
		       struct np_systemd_unit_props *ui, char *err, size_t errlen);

/* systemd_units.c */
struct host_unit *np_systemd_unit_find(struct systemd_backend *s, const char *unit);
struct host_unit *np_systemd_unit_add(struct systemd_backend *s, const char *unit,
				    const char *cgroup);
int np_systemd_save_originals(struct systemd_backend *s, char *err, size_t errlen);
int np_systemd_load_originals(struct systemd_backend *s, char *err, size_t errlen);
/* Write-ahead: what the unit has now is on disk before it is changed;
 * -ENOENT while the unit is not loaded. */
int np_systemd_record(struct systemd_backend *s, struct host_unit *u, char *err,
		    size_t errlen);

/* Subscribe to the manager's signals about units (again after a
 * reconnect). */
int np_systemd_watch(struct systemd_backend *s, char *err, size_t errlen);
int np_systemd_set_unit(struct np_enforcer *e, const char *unit,
		      const np_cpuset *cpus, np_nodemask mems, bool force,
		      char *err, size_t errlen);
int np_systemd_read_unit(struct np_enforcer *e, const char *unit,
		       char *slice, size_t slicelen,
		       np_cpuset *cpus, char *err, size_t errlen);
int np_systemd_recorded_unit(struct np_enforcer *e, int i, char *unit,
			   size_t len);
int np_systemd_release_unit(struct np_enforcer *e, const char *unit, char *err,
			  size_t errlen);
/* The unit's cgroup is right below the managed parent's slice (not the
 * root slice) and holds processes: it runs there. */
bool np_systemd_runs_in_slice(const struct systemd_backend *s,
			      const char *unit);
/* Does the unit run (its cgroup holds processes)? 1, 0 not (stopped, or
 * not loaded: its properties come back with it), a negative errno on a
 * bus error. */
int np_systemd_unit_runs(struct systemd_backend *s, struct host_unit *u,
			 char *err, size_t errlen);
int np_systemd_slice_unit(struct np_enforcer *e, int i, char *unit, size_t len);
int np_systemd_confine_unit(struct np_enforcer *e, const char *unit,
			    const np_cpuset *cpus, bool force, char *err,
			    size_t errlen);
int np_systemd_event_fd(struct np_enforcer *e);
bool np_systemd_process_events(struct np_enforcer *e);

#endif
