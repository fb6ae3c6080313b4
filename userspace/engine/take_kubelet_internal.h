/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: the kubelet CPU accumulator (take_kubelet.c) shared with
 * the distribution over NUMA nodes (take_kubelet_dist.c).
 */
#ifndef NUMAPLACE_ENGINE_TAKE_KUBELET_INTERNAL_H
#define NUMAPLACE_ENGINE_TAKE_KUBELET_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "numaplace/take.h"

enum utype { U_NUMA, U_SOCKET, U_CORE, U_L3 };

struct acc {
	const struct np_topology *t;
	np_cpuset details; /* available CPUs not taken yet */
	np_cpuset result;
	int need;
	bool numa_first;
	struct np_explain *trace; /* NULL, or where steps are traced */
};

struct ulist {
	int n;
	int *idx;
};

/* Move the available CPUs of cpus into the result. */
static inline void acc_take(struct acc *a, const np_cpuset *cpus)
{
	np_cpuset add;
	np_cpuset_and(&add, cpus, &a->details);
	np_cpuset_or(&a->result, &a->result, &add);
	np_cpuset_andnot(&a->details, &a->details, &add);
	a->need -= np_cpuset_count(&add);
}

/* Append v; 0 or -ENOMEM. */
static inline int ulist_push(struct ulist *l, int v)
{
	int *n = realloc(l->idx, sizeof(int) * (size_t)(l->n + 1));
	if (!n)
		return -ENOMEM;
	l->idx = n;
	l->idx[l->n++] = v;
	return 0;
}

/* Start: avail (online) to take from, keep (may be NULL) already ours. */
void np_kubelet_acc_init(struct acc *a, const struct np_topology *t,
			 const np_cpuset *avail, const np_cpuset *keep,
			 int count);
/* Indexes of the units of type ty holding available CPUs, in the order the
 * kubelet considers them (appended to out). 0 or -ENOMEM. */
int np_kubelet_sorted_units(struct acc *a, enum utype ty, struct ulist *out);
/* takeByTopologyNUMAPacked (and its resize form) over avail. */
int np_kubelet_take_packed(const struct np_topology *t, const np_cpuset *avail,
			   const np_cpuset *keep, int count, bool spread,
			   bool uncore, np_cpuset *out, char *err,
			   size_t errlen);
/* The same with a trace (NULL: none) of the orders it takes in. */
int np_kubelet_take_packed_trace(const struct np_topology *t,
				 const np_cpuset *avail, const np_cpuset *keep,
				 int count, bool spread, bool uncore,
				 struct np_explain *trace, np_cpuset *out,
				 char *err, size_t errlen);
/* takeByTopologyNUMADistributed (and its resize form), groups of g. */
int np_kubelet_take_distributed(const struct np_topology *t,
				const np_cpuset *avail, const np_cpuset *keep,
				int count, int g, bool spread, bool waterfill,
				np_cpuset *out, char *err, size_t errlen);

#endif
