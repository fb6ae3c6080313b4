/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Choosing CPUs out of an available set: the kubelet's static-policy
 * takeByTopology family and Koordinator's CPU accumulator.
 */
#ifndef NUMAPLACE_TAKE_H
#define NUMAPLACE_TAKE_H

#include "numaplace/topology.h"

enum np_take_strategy {
	NP_TAKE_PACKED = 0, /* kubelet default */
	NP_TAKE_SPREAD,     /* distribute-cpus-across-cores */
};

enum np_bind_policy {
	NP_BIND_DEFAULT = 0,
	NP_BIND_FULL_PCPUS,
	NP_BIND_SPREAD_BY_PCPUS,
};

enum np_exclusive_policy {
	NP_EXCL_NONE = 0,
	NP_EXCL_PCPU_LEVEL,
	NP_EXCL_NUMA_NODE_LEVEL,
};

enum np_numa_strategy {
	NP_NUMA_MOST_ALLOCATED = 0,
	NP_NUMA_LEAST_ALLOCATED,
	/* Koordinator declares it and treats it as LeastAllocated; numaplace
	 * splits evenly over the nodes of the chosen hint (see admit.c). In a
	 * single take it behaves like LeastAllocated. */
	NP_NUMA_DISTRIBUTE_EVENLY,
};

struct np_explain; /* numaplace/explain.h */

struct np_take_req {
	const struct np_topology *topo;
	np_cpuset available;
	int count;

	/* kubelet semantics (koord == false) */
	enum np_take_strategy strategy;
	bool distribute_across_numa; /* distribute-cpus-across-numa */
	int group_size;              /* CPUs that stay together; 0 = 1 */
	bool prefer_uncore;          /* prefer-align-cpus-by-uncorecache */
	/* align-by-socket: a resize stays inside the sockets of the CPUs it
	 * keeps and, when an even split fails there, fills the NUMA nodes of
	 * those sockets as evenly as their free CPUs allow. (Admission aligns
	 * fresh allocations with the hint's sockets; see admit.c.) */
	bool align_by_socket;
	bool resize;                 /* current/baseline are set */
	np_cpuset current;           /* in-place resize: current allocation */
	np_cpuset baseline;          /* in-place resize: promised CPUs */

	/* Koordinator semantics (koord == true) */
	bool koord;
	enum np_bind_policy bind_policy;
	bool required;
	enum np_exclusive_policy exclusive_policy;
	np_cpuset pcpu_marked; /* CPUs allocated with PCPULevel exclusivity */
	np_cpuset numa_marked; /* CPUs allocated with NUMANodeLevel */
	enum np_numa_strategy numa_strategy;
	bool has_preferred;
	np_cpuset preferred; /* taken first (intersected with available) */

	/* NULL, or a trace the take appends the orders it used to. */
	struct np_explain *trace;
};

/*
 * Choose req->count CPUs. Returns 0 with *out set, or a negative errno with
 * err describing why the request cannot be met (-ENOSPC: not enough CPUs;
 * -EINVAL: inconsistent request, e.g. baseline not within current).
 */
int np_take(const struct np_take_req *req, np_cpuset *out, char *err,
	    size_t errlen);
int np_take_kubelet(const struct np_take_req *req, np_cpuset *out, char *err,
		    size_t errlen);
int np_take_koord(const struct np_take_req *req, np_cpuset *out, char *err,
		  size_t errlen);

int np_bind_policy_parse(const char *s, enum np_bind_policy *out);
int np_exclusive_policy_parse(const char *s, enum np_exclusive_policy *out);
int np_numa_strategy_parse(const char *s, enum np_numa_strategy *out);
const char *np_bind_policy_name(enum np_bind_policy p);
const char *np_exclusive_policy_name(enum np_exclusive_policy p);
const char *np_numa_strategy_name(enum np_numa_strategy s);

#endif
