/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topology hint providers (CPU, memory, devices) and the admission-time
 * search for the best NUMA affinity.
 *
 * A provider answers two questions about a node set: can it hold the
 * request now (feasible), and is it of the smallest size that could ever
 * hold it (preferred)? From those the kubelet's explicit hint lists follow
 * (every non-empty node subset, feasible ones listed), which is what we do
 * up to NP_HINTS_EXPLICIT_MAX_NODES nodes. Beyond that, 2^N subsets cannot
 * be listed, and np_hints_best() searches node sets by increasing width.
 */
#ifndef NUMAPLACE_HINTS_H
#define NUMAPLACE_HINTS_H

#include "numaplace/merge.h"
#include "numaplace/topology.h"

#define NP_HINTS_EXPLICIT_MAX_NODES 12

enum np_provider_kind {
	NP_PROV_NONE = 0, /* no preference (nil hints) */
	NP_PROV_CPU,
	NP_PROV_MEMORY,
	NP_PROV_DEVICE,
};

#define NP_PROV_MAX_RES (1 + NP_MAX_HUGEPAGE_SIZES)

struct np_provider {
	enum np_provider_kind kind;
	char resource[96]; /* "cpu", "memory", device name: for messages */
	/* Per resource and node (by OS node id). The Memory Manager judges
	 * memory and each hugepage size jointly, hence several resources. */
	int nres;
	uint64_t total[NP_PROV_MAX_RES][NP_MAX_NUMA]; /* capacity: min width */
	uint64_t avail[NP_PROV_MAX_RES][NP_MAX_NUMA]; /* free: feasibility */
	uint64_t request[NP_PROV_MAX_RES];
	np_nodemask nodes; /* nodes that count at all */
	/* Memory: node groups already in use (the Memory Manager's "cells"):
	 * a node in a multi-node group takes no single-node hint, and a
	 * multi-node set must match the group of every used node in it. */
	np_nodemask group[NP_MAX_NUMA];
	bool used[NP_MAX_NUMA];
	/* CPU/devices: what the request must include (reused resources). */
	np_nodemask must;
	/* Preferred = fewest sockets instead of fewest nodes (align-by-socket):
	 * socket_of_node[n] is the socket index of node n. */
	bool by_socket;
	int socket_of_node[NP_MAX_NUMA];
	int min_width; /* computed by np_provider_finish */
};

/* Compute min_width; returns 0, or -ENOSPC when no node set can ever hold
 * the request (the provider then offers no hint: [] in kubelet terms). */
int np_provider_finish(struct np_provider *p);
bool np_provider_feasible(const struct np_provider *p, np_nodemask m);
bool np_provider_preferred(const struct np_provider *p, np_nodemask m);

/* The kubelet's explicit hint list (every feasible subset). hints must hold
 * 2^popcount(nodes) entries; returns the count. */
int np_provider_hints(const struct np_provider *p, struct np_hint *hints);

struct np_hints_query {
	enum np_tm_policy policy;
	np_nodemask nodes;
	const uint16_t (*distance)[NP_MAX_NUMA];
	bool prefer_closest;
	int nprov;
	const struct np_provider *prov;
};

/*
 * Best merged hint over the providers: the kubelet's answer (explicit lists
 * + np_merge) up to NP_HINTS_EXPLICIT_MAX_NODES nodes; above that, a width
 * search that finds the kubelet's preferred answer whenever one exists and
 * otherwise the narrowest node set feasible for every provider (see docs/semantics.md,
 * "Beyond 8 NUMA nodes").
 */
int np_hints_best(const struct np_hints_query *q, struct np_merge_result *out);
/* Force the width search (tests compare it with the explicit path). */
int np_hints_best_search(const struct np_hints_query *q,
			 struct np_merge_result *out);

#endif
