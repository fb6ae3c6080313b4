// SPDX-License-Identifier: Apache-2.0
/*
 * What the parts of admission share (admit_internal.h): a decision
 * rejected, the free CPUs an exclusive request may take, a hugepage
 * size's index on a node. admit.c, admit_take.c, admit_resources.c and
 * resize.c call it; it calls none of them.
 */
#include "engine/admit_internal.h"

#include <stdarg.h>
#include <stdio.h>

void np_admit_reject(struct np_decision *d, const char *kind,
		     const char *resource, const char *fmt, ...)
{
	va_list ap;
	d->admitted = false;
	snprintf(d->error_kind, sizeof(d->error_kind), "%s", kind);
	snprintf(d->resource, sizeof(d->resource), "%s", resource);
	va_start(ap, fmt);
	vsnprintf(d->reason, sizeof(d->reason), fmt, ap);
	va_end(ap);
}

int np_admit_huge_index(const struct np_numa_node *nn, uint64_t size_kb)
{
	for (int h = 0; h < nn->nhuge; h++)
		if (nn->huge[h].size_kb == size_kb)
			return h;
	return -1;
}

/* CPUs the exclusive request may come from (full-pcpus-only: whole free
 * cores only). */
void np_admit_exclusive_pool(const struct np_node_state *st, np_cpuset *out)
{
	struct np_pools p;
	np_state_pools(st, &p);
	*out = p.allocatable;
	if (st->policy.opt.full_pcpus_only) {
		const struct np_topology *t = st->topo;
		np_cpuset whole;
		np_cpuset_zero(&whole);
		for (int c = 0; c < t->ncores; c++)
			if (np_cpuset_subset(&t->cores[c].cpus, out))
				np_cpuset_or(&whole, &whole, &t->cores[c].cpus);
		*out = whole;
	}
}
