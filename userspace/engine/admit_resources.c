// SPDX-License-Identifier: Apache-2.0
/*
 * Admission, after the CPUs: memory and hugepages charged on the
 * container's memory nodes, and devices picked aligned with them first
 * (the kubelet's memory and device managers under the chosen affinity).
 */
#include "engine/admit_internal.h"
#include "numaplace/admit.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Charge memory and hugepages greedily over the nodes in id order, as the
 * Memory Manager drains its nodes. */
int np_admit_charge_memory(const struct np_node_state *st,
			   const struct np_container_req *c,
			   struct np_container_alloc *a, struct np_decision *d)
{
	const struct np_topology *t = st->topo;
	const struct np_state_cache *mv = &st->cache;
	uint64_t left = c->memory;
	char nodes[256];

	np_nodemask_format(a->mems, nodes, sizeof(nodes));
	if (left && t->numa[0].mem_total == 0)
		left = 0; /* topology without memory figures */
	NP_NODEMASK_FOREACH(n, a->mems)
	{
		int i = t->numa_index[n];
		uint64_t tot = t->numa[i].mem_total;
		uint64_t fr = tot > mv->mem[n] ? tot - mv->mem[n] : 0;
		uint64_t take = fr < left ? fr : left;
		if (take && !a->charge && !(a->charge = calloc(1, sizeof(*a->charge))))
			return -ENOMEM;
		if (a->charge)
			a->charge->mem[n] = take;
		left -= take;
	}
	if (left) {
		np_admit_reject(d, UNEXPECTED, "memory",
		       "memory: %llu bytes requested, %llu short on NUMA "
		       "node(s) %s",
		       (unsigned long long)c->memory, (unsigned long long)left,
		       nodes);
		return -ENOSPC;
	}
	for (int h = 0; h < c->nhuge; h++) {
		uint64_t pages = c->huge_bytes[h] / (c->huge_size_kb[h] * 1024);
		NP_NODEMASK_FOREACH(n, a->mems)
		{
			const struct np_numa_node *nn = &t->numa[t->numa_index[n]];
			int k = np_admit_huge_index(nn, c->huge_size_kb[h]);
			uint64_t fr, take;
			if (k < 0)
				continue;
			fr = nn->huge[k].total > mv->huge[k][n]
				     ? nn->huge[k].total - mv->huge[k][n]
				     : 0;
			take = fr < pages ? fr : pages;
			if (take && !a->charge &&
			    !(a->charge = calloc(1, sizeof(*a->charge))))
				return -ENOMEM;
			if (take)
				a->charge->huge[k][n] += take;
			pages -= take;
		}
		if (pages) {
			np_admit_reject(d, UNEXPECTED, "hugepages",
			       "hugepages-%llukB: %llu pages short on NUMA "
			       "node(s) %s",
			       (unsigned long long)c->huge_size_kb[h],
			       (unsigned long long)pages, nodes);
			return -ENOSPC;
		}
	}
	return 0;
}

/* Devices: aligned with the memory nodes first, then others, then those
 * without NUMA information; by device id within each group. */
int np_admit_pick_devices(const struct np_node_state *st,
			  const struct np_container_req *c,
			  struct np_container_alloc *a, struct np_decision *d)
{
	const struct np_topology *t = st->topo;

	for (int i = 0; i < c->ndev; i++) {
		int want = c->dev[i].count;
		for (int pass = 0; pass < 3 && want > 0; pass++)
			for (int k = 0; k < t->ndevices && want > 0; k++) {
				const struct np_device *dv = &t->devices[k];
				bool aligned = dv->numa >= 0 &&
					       np_nodemask_test(a->mems, dv->numa);
				int group = aligned ? 0 : dv->numa >= 0 ? 1 : 2;
				bool mine = false;
				if (group != pass ||
				    strcmp(dv->resource, c->dev[i].resource) ||
				    np_admit_device_taken(st, k))
					continue;
				for (int j = 0; j < a->ndev; j++)
					mine |= a->dev[j] == k;
				if (mine || a->ndev >= 16)
					continue;
				a->dev[a->ndev++] = (int16_t)k;
				want--;
			}
		if (want > 0) {
			np_admit_reject(d, UNEXPECTED, c->dev[i].resource,
			       "%s: %d more device(s) needed, none free",
			       c->dev[i].resource, want);
			return -ENOSPC;
		}
	}
	return 0;
}
