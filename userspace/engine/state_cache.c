// SPDX-License-Identifier: Apache-2.0
/*
 * The node state's cached aggregates (struct np_state_cache: exclusive
 * and LSE CPUs, memory and hugepages charged per node, devices taken,
 * Koordinator's exclusive-policy marks),
 * kept by admissions and releases (state_ops.c: a release subtracts what
 * the workload held) and rebuilt from the allocations; and what follows
 * from them: the pools, a workload's
 * exclusive CPUs, its degraded (offline) ones. Calls nothing of the
 * state's array.
 */
#include "admit_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* c's memory, hugepages and devices and, when exclusive, its CPUs into
 * the cached aggregates; a node charged by a second node group marks
 * the cache's parts shared. */
static void put(struct np_state_cache *k, const struct np_workload_alloc *a,
		const struct np_container_alloc *c)
{
	if (c->exclusive) {
		np_cpuset_or(&k->excl, &k->excl, c->cpus);
		/* LSR CPUs stay usable by BE; everything else that is
		 * exclusive (LSE, kubelet Guaranteed) does not. */
		if (a->qos_class != NP_QOS_LSR)
			np_cpuset_or(&k->lse, &k->lse, c->cpus);
	}
	for (int n = 0; c->charge && n < NP_MAX_NUMA; n++) {
		const struct np_mem_charge *ch = c->charge;
		bool any = ch->mem[n] > 0;
		k->mem[n] += ch->mem[n];
		for (int h = 0; h < NP_MAX_HUGEPAGE_SIZES; h++) {
			k->huge[h][n] += ch->huge[h][n];
			any |= ch->huge[h][n] > 0;
		}
		if (any) {
			if (k->nused[n] && k->group[n] != c->mems)
				k->shared_parts = true;
			k->nused[n]++;
			k->used[n] = true;
			k->group[n] = c->mems;
		}
	}
	for (int d = 0; k->dev_taken && d < c->ndev; d++)
		if (c->dev[d] >= 0 && c->dev[d] < k->ndevices)
			k->dev_taken[c->dev[d]] = true;
}

/* Device dev is one of a's first n containers'. */
static bool dev_held(const struct np_workload_alloc *a, int n, int dev)
{
	for (int j = 0; j < n; j++)
		for (int d = 0; d < a->c[j].ndev; d++)
			if (a->c[j].dev[d] == dev)
				return true;
	return false;
}

/* c (a's container n, or a's pod_rest when n is a->ncontainers) holds an
 * exclusive CPU or a device the cache has, and not from a's containers
 * before it or, for a container, from a's pod_rest (an admission puts
 * the rest in first): another workload's, so the parts are shared. A
 * workload's own containers share CPUs (an init container's reused, a
 * pod's shared rest) and devices (init containers'). */
static void mark_shared(struct np_state_cache *k,
			const struct np_workload_alloc *a,
			const struct np_container_alloc *c, int n)
{
	if (c->exclusive && np_cpuset_intersects(&k->excl, c->cpus)) {
		np_cpuset own, both;

		np_cpuset_zero(&own);
		for (int j = 0; j < n; j++)
			if (a->c[j].exclusive)
				np_cpuset_or(&own, &own, a->c[j].cpus);
		if (n < a->ncontainers && a->pod_rest)
			np_cpuset_or(&own, &own, a->pod_rest);
		np_cpuset_and(&both, &k->excl, c->cpus);
		if (!np_cpuset_subset(&both, &own))
			k->shared_parts = true;
	}
	for (int d = 0; k->dev_taken && d < c->ndev; d++)
		if (c->dev[d] >= 0 && c->dev[d] < k->ndevices &&
		    k->dev_taken[c->dev[d]] && !dev_held(a, n, c->dev[d]))
			k->shared_parts = true;
}

/* Add one container's allocation to the cached aggregates. */
void np_state_cache_add(struct np_node_state *st,
			const struct np_workload_alloc *a,
			const struct np_container_alloc *c)
{
	int n = a->ncontainers;

	/* its place among a's containers (an admission adds the last) */
	for (int j = 0; j < a->ncontainers; j++)
		if (&a->c[j] == c)
			n = j;
	mark_shared(&st->cache, a, c, n);
	put(&st->cache, a, c);
}

void np_state_cache_add_pod_rest(struct np_node_state *st,
				 const struct np_workload_alloc *a)
{
	struct np_container_alloc rest = {.exclusive = true};

	if (!a->pod_rest)
		return;
	rest.cpus = a->pod_rest;
	mark_shared(&st->cache, a, &rest, a->ncontainers);
	put(&st->cache, a, &rest);
}

void np_state_cache_mark(struct np_node_state *st,
			 const struct np_workload_alloc *a, int sign)
{
	struct np_state_cache *k = &st->cache;
	int m = a->excl == NP_EXCL_PCPU_LEVEL	     ? 0
		: a->excl == NP_EXCL_NUMA_NODE_LEVEL ? 1
						     : -1;

	if (m < 0)
		return;
	for (int c = 0; c < a->ncontainers; c++)
		NP_CPUSET_FOREACH (cpu, a->c[c].cpus) {
			uint32_t *n = &k->nmarked[m][cpu];

			if (sign > 0 && (*n)++ == 0)
				np_cpuset_set(&k->marked[m], cpu);
			else if (sign < 0 && *n && --*n == 0)
				np_cpuset_clear(&k->marked[m], cpu);
		}
}

void np_state_cache_add_workload(struct np_node_state *st,
				 const struct np_workload_alloc *a)
{
	struct np_state_cache *k = &st->cache;
	struct np_container_alloc rest = {.exclusive = true};
	np_cpuset u;

	/* the whole workload against the others' parts at once */
	np_workload_exclusive_cpus(a, &u);
	if (np_cpuset_intersects(&k->excl, &u))
		k->shared_parts = true;
	for (int c = 0; k->dev_taken && c < a->ncontainers; c++)
		for (int d = 0; d < a->c[c].ndev; d++)
			if (a->c[c].dev[d] >= 0 &&
			    a->c[c].dev[d] < k->ndevices &&
			    k->dev_taken[a->c[c].dev[d]])
				k->shared_parts = true;
	for (int c = 0; c < a->ncontainers; c++)
		put(k, a, &a->c[c]);
	if (a->pod_rest) {
		rest.cpus = a->pod_rest;
		put(k, a, &rest);
	}
	np_state_cache_mark(st, a, 1);
}

int np_state_cache_refresh(struct np_node_state *st)
{
	bool *taken = st->cache.dev_taken;
	int nd = st->topo->ndevices;

	if (!taken) {
		taken = calloc((size_t)nd + 1, sizeof(bool));
		if (!taken)
			return -ENOMEM;
	}
	memset(&st->cache, 0, sizeof(st->cache));
	memset(taken, 0, sizeof(bool) * (size_t)nd);
	st->cache.dev_taken = taken;
	st->cache.ndevices = nd;
	for (int i = 0; i < st->nworkloads; i++)
		np_state_cache_add_workload(st, st->w[i]);
	return 0;
}

/*
 * Without shared parts every exclusive CPU and device of a is a's alone
 * and every node a charges has one group: the cache less a's share is
 * what a refresh without a makes (test_state_ops compares the two after
 * random admissions, rejections, releases, moves and copies).
 */
int np_state_cache_sub(struct np_node_state *st,
		       const struct np_workload_alloc *a)
{
	struct np_state_cache *k = &st->cache;
	np_cpuset u;

	if (k->shared_parts || !k->dev_taken)
		return np_state_cache_refresh(st);
	np_workload_exclusive_cpus(a, &u);
	np_cpuset_andnot(&k->excl, &k->excl, &u);
	np_cpuset_andnot(&k->lse, &k->lse, &u);
	for (int c = 0; c < a->ncontainers; c++) {
		const struct np_mem_charge *ch = a->c[c].charge;

		for (int n = 0; ch && n < NP_MAX_NUMA; n++) {
			bool any = ch->mem[n] > 0;
			k->mem[n] -= ch->mem[n];
			for (int h = 0; h < NP_MAX_HUGEPAGE_SIZES; h++) {
				k->huge[h][n] -= ch->huge[h][n];
				any |= ch->huge[h][n] > 0;
			}
			if (any && --k->nused[n] == 0) {
				k->used[n] = false;
				k->group[n] = 0;
			}
		}
		for (int d = 0; d < a->c[c].ndev; d++)
			if (a->c[c].dev[d] >= 0 && a->c[c].dev[d] < k->ndevices)
				k->dev_taken[a->c[c].dev[d]] = false;
	}
	return 0;
}

void np_state_pools(const struct np_node_state *st, struct np_pools *out)
{
	const struct np_topology *t = st->topo;

	out->reserved = st->reserved;
	out->exclusive = st->cache.excl;
	out->lse = st->cache.lse;
	np_cpuset_andnot(&out->shared, &t->online, &out->exclusive);
	np_cpuset_andnot(&out->shared, &out->shared, &st->offline);
	np_cpuset_andnot(&out->allocatable, &out->shared, &out->reserved);
	if (st->policy.opt.strict_cpu_reservation)
		out->shared = out->allocatable;
	np_cpuset_andnot(&out->be, &t->online, &out->lse);
	np_cpuset_andnot(&out->be, &out->be, &out->reserved);
	np_cpuset_andnot(&out->be, &out->be, &st->offline);
}

void np_workload_exclusive_cpus(const struct np_workload_alloc *a,
				np_cpuset *out)
{
	np_cpuset_zero(out);
	for (int c = 0; c < a->ncontainers; c++)
		if (a->c[c].exclusive)
			np_cpuset_or(out, out, a->c[c].cpus);
	if (a->pod_rest)
		np_cpuset_or(out, out, a->pod_rest);
}

bool np_state_degraded(const struct np_node_state *st, int i, np_cpuset *out)
{
	np_workload_exclusive_cpus(st->w[i], out);
	np_cpuset_and(out, out, &st->offline);
	return !np_cpuset_empty(out);
}
