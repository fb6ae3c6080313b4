/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A fake enforcer for tests: an in-memory cgroup tree that records every
 * call, one line each, in order. apply() orders its writes with the real
 * write planner (np_cgroup_plan_build) and records each step as
 * "write CGROUP cpuset.cpus=SET (why)", so a test can assert the exact
 * writes and their order.
 */
#ifndef NP_TEST_FAKE_ENFORCER_H
#define NP_TEST_FAKE_ENFORCER_H

#include "numaplace/enforcer.h"

#define FAKE_MAX_CGROUPS 64
#define FAKE_MAX_LOG 256

struct fake_cgroup {
	char path[256]; /* "m:" managed or "h:" host, then the path */
	bool exists;
	np_cpuset cpus;
	np_nodemask mems;
	enum np_cgroup_partition partition;
	bool busy; /* holds tasks: remove() fails with -EBUSY */
	char slice[64]; /* a unit's slice cgroup ("" = "numaplace.slice") */
};

struct fake_enforcer {
	struct np_enforcer e;
	struct fake_cgroup cg[FAKE_MAX_CGROUPS];
	int ncg;
	char log[FAKE_MAX_LOG][192];
	int nlog;
	int reads;        /* read() calls */
	int fail_apply;   /* next apply() returns this (negative errno) */
	int fail_release; /* release_unit() fails (-EIO) this many times */
	bool refuse_partition; /* host cgroups cannot become partition roots */
	int fail_member;       /* set_partition(member) fails this many times */
	/* recorded_unit() answers (NULL-ended); a unit given back (release
	 * that returns 0) leaves it */
	const char *recorded[4];
	/* units running right below the managed parent's slice, as
	 * slice_unit() lists them (NULL-ended; only those that exist) */
	const char *in_slice[4];
	bool destroyed;
};

/* A new fake (owned by whoever destroys it: the daemon, via the ops). */
struct fake_enforcer *fake_enforcer_new(void);
/* The cgroup (tree 'm' or 'h'), created when create; NULL if absent. */
struct fake_cgroup *fake_cg(struct fake_enforcer *f, char tree,
			    const char *path, bool create);
/* Give it the unit operations (workloads that are systemd units); units
 * are tree 'u' ("exists": loaded and running). */
void fake_enable_units(struct fake_enforcer *f);
/* Forget the log. */
void fake_log_clear(struct fake_enforcer *f);
/* The log lines joined with '\n' (a static buffer). */
const char *fake_log(const struct fake_enforcer *f);
/* Index of the first log line starting with prefix, or -1. */
int fake_log_find(const struct fake_enforcer *f, const char *prefix);

#endif
