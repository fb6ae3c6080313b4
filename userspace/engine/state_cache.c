// SPDX-License-Identifier: Apache-2.0
/*
 * The node state's cached aggregates (struct np_state_cache: exclusive
 * and LSE CPUs, memory and hugepages charged per node, devices taken),
 * kept by admissions and releases (state_ops.c) and rebuilt from the
 * allocations; and what follows from them: the pools, a workload's
 * exclusive CPUs, its degraded (offline) ones. Calls nothing of the
 * state's array.
 */
#include "admit_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Add one container's allocation to the cached aggregates. */
void np_state_cache_add(struct np_node_state *st,
			const struct np_workload_alloc *a,
			const struct np_container_alloc *c)
{
	struct np_state_cache *k = &st->cache;
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
			k->used[n] = true;
			k->group[n] = c->mems;
		}
	}
	for (int d = 0; d < c->ndev; d++)
		if (c->dev[d] >= 0 && c->dev[d] < k->ndevices)
			k->dev_taken[c->dev[d]] = true;
}

void np_state_cache_add_pod_rest(struct np_node_state *st,
				 const struct np_workload_alloc *a)
{
	struct np_container_alloc rest = {.exclusive = true};

	if (!a->pod_rest)
		return;
	rest.cpus = a->pod_rest;
	np_state_cache_add(st, a, &rest);
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
	for (int i = 0; i < st->nworkloads; i++) {
		for (int c = 0; c < st->w[i].ncontainers; c++)
			np_state_cache_add(st, &st->w[i], &st->w[i].c[c]);
		np_state_cache_add_pod_rest(st, &st->w[i]);
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
	np_workload_exclusive_cpus(&st->w[i], out);
	np_cpuset_and(out, out, &st->offline);
	return !np_cpuset_empty(out);
}
