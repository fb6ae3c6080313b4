/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The cpuset write planner's state, shared by cgroup_plan.c (the phases)
 * and cgroup_plan_check.c (the change list's checks and indexes).
 */
#ifndef NUMAPLACE_CGROUP_PLAN_INTERNAL_H
#define NUMAPLACE_CGROUP_PLAN_INTERNAL_H

#include "cgroup_internal.h"

struct planner {
	const struct np_cgroup_change *ch;
	int n;
	int *depth;
	/* Ancestors of j in the list: anc_list[anc_start[j] .. anc_start[j+1]) */
	int *anc_start, *anc_list;
	/* CPUs conflicting cgroups are to get: u_excl for a shared cgroup
	 * with no ancestor or descendant among the changes, none for an
	 * unmanaged one, else one of claim_own */
	const np_cpuset **claim;
	np_cpuset *claim_own, u_excl, none;
	bool *cm, *mm; /* cpus / mems managed by this change */
	/* simulated cpuset.cpus: the change's old_cpus, then one of
	 * plan->sets (each write's) */
	const np_cpuset **cur;
	/* Predicates on cur[i], remembered until cur[i] changes (ver[i]):
	 * the phase-2 loop asks them of every cgroup at every step. */
	unsigned *ver;
	struct memo {
		unsigned ver; /* 0: not known */
		bool val;
	} *m_yield, *m_inside, *m_full;
	int *excl, nexcl; /* exclusive changes managing cpus, in order */
	/* What every exclusive change holds now (the union of their cur),
	 * for a solo shared cgroup (claim == &u_excl), which conflicts with
	 * all of them: valid while excl_held_ver == excl_ver, which each
	 * cpus write of an exclusive change moves on. */
	np_cpuset excl_held;
	unsigned excl_ver, excl_held_ver;
	np_nodemask *curm;  /* simulated cpuset.mems */
	int *order;	    /* scratch */
	int *order_all;	    /* 0 .. n-1 */
	struct np_cgroup_plan *plan;
	int cap;
	/* the sets the plan keeps (plan->sets once built) */
	struct np_cpuset_pool pool;
	char *err;
	size_t errlen;
};

/* Components in a path. */
static inline int path_depth(const char *p)
{
	int d = 1;

	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* i is an ancestor of j (both in the change list) */
static inline bool anc(const struct planner *pl, int i, int j)
{
	for (int k = pl->anc_start[j]; k < pl->anc_start[j + 1]; k++)
		if (pl->anc_list[k] == i)
			return true;
	return false;
}

/* i lends its CPUs to j: j holds the BE pool and i is an LSR workload's. */
static inline bool lends(const struct planner *pl, int i, int j)
{
	return pl->ch[i].lends_to_be && pl->ch[j].best_effort;
}

/* i and j may not hold the same CPU at the same time. */
static inline bool conflict(const struct planner *pl, int i, int j)
{
	return i != j && pl->cm[i] && pl->cm[j] &&
	       (pl->ch[i].kind == NP_CGROUP_EXCLUSIVE ||
		pl->ch[j].kind == NP_CGROUP_EXCLUSIVE) &&
	       !lends(pl, i, j) && !lends(pl, j, i) && !anc(pl, i, j) &&
	       !anc(pl, j, i);
}

/* The cgroups that may conflict with i: only exclusive ones for a shared
 * i (conflict() still decides). n_out entries. */
static inline const int *
conflict_candidates(const struct planner *pl, int i, int *n_out)
{
	if (pl->ch[i].kind == NP_CGROUP_SHARED) {
		*n_out = pl->nexcl;
		return pl->excl;
	}
	*n_out = pl->n;
	return pl->order_all;
}

static inline const char *kind_name(enum np_cgroup_kind k)
{
	return k == NP_CGROUP_EXCLUSIVE ? "exclusive" : "shared";
}

/* Check the change list and fill the planner's indexes (depth, ancestors,
 * exclusive list, claims, simulated sets): 0, or < 0 with pl->err. */
int cg_plan_validate(struct planner *pl);
/* set as one of the plan's sets: NULL without memory. */
static inline const np_cpuset *cg_plan_intern(struct planner *pl,
					      const np_cpuset *set)
{
	return np_cpuset_intern(&pl->pool, set);
}

#endif
