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
	/* Resize only (a keep set was given): units already holding CPUs of
	 * the result sort first, and CPUs already ours count towards a free
	 * unit. A fresh take sorts by free CPUs and id alone. */
	bool held_first;
	struct np_explain *trace; /* NULL, or where steps are traced */
};

struct ulist {
	int n, cap;
	int *idx;
};

/* Move the available CPUs of cpus into the result. details and result
 * hold online CPUs only (np_kubelet_acc_init), so the words past max_cpu
 * stay zero and are left alone. */
static inline void acc_take(struct acc *a, const np_cpuset *cpus)
{
	int nw = np_cpuset_words(a->t->max_cpu), n = 0;

	for (int i = 0; i < nw; i++) {
		uint64_t add = cpus->w[i] & a->details.w[i];
		a->result.w[i] |= add;
		a->details.w[i] &= ~add;
		n += np_popcount64(add);
	}
	a->need -= n;
}

/* Append v (the array grows by doubling); 0 or -ENOMEM. */
static inline int ulist_push(struct ulist *l, int v)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		int *n = realloc(l->idx, sizeof(int) * (size_t)cap);
		if (!n)
			return -ENOMEM;
		l->idx = n;
		l->cap = cap;
	}
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
