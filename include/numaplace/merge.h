/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Topology Manager hint merge with the kubelet's semantics, without the
 * kubelet's enumeration of the cross product of every provider's hints.
 */
#ifndef NUMAPLACE_MERGE_H
#define NUMAPLACE_MERGE_H

#include "numaplace/cpuset.h"

#include <stdbool.h>
#include <stdint.h>

enum np_tm_policy {
	NP_TM_NONE = 0,
	NP_TM_BEST_EFFORT,
	NP_TM_RESTRICTED,
	NP_TM_SINGLE_NUMA_NODE,
};

/* A topology hint. any = the kubelet's nil mask ("any NUMA node"). */
struct np_hint {
	np_nodemask mask;
	bool any;
	bool preferred;
};

/*
 * The hints of one resource of one provider, after the kubelet's
 * filterProvidersHints: a provider with no preference at all, or a resource
 * whose hint list is nil, becomes kind NP_HL_NO_PREFERENCE ([{nil, true}]);
 * an empty (non-nil) list becomes NP_HL_IMPOSSIBLE ([{nil, false}]).
 */
enum np_hint_list_kind {
	NP_HL_LIST = 0,
	NP_HL_NO_PREFERENCE,
	NP_HL_IMPOSSIBLE,
};

/* The most hints a merge request (planner kind "merge") may give for one
 * resource of one provider: every node set of 16 NUMA nodes and a nil one
 * (the kubelet lists each node set once; bench_merge's 16-node stress case
 * is that). 3 x 300,000 hints ran for minutes in the CLI. */
#define NP_MERGE_MAX_HINTS 65536

/*
 * Where the merge can only search (more than 20 nodes) its work is bounded
 * all the same: random wide masks on several lists make the distinct
 * partial ANDs grow with the product of the list sizes (5 lists of 4,096
 * masks of 32 of 64 nodes ran over 120 s and 14 GiB). NP_MERGE_MAX_WORK
 * masks visited or NP_MERGE_MAX_STATES partial ANDs in one layer (32 MiB of them)
 * end it: np_merge returns -E2BIG.
 */
#define NP_MERGE_MAX_WORK (400ull * 1000 * 1000)
#define NP_MERGE_MAX_STATES ((size_t)1 << 22)

struct np_hint_list {
	enum np_hint_list_kind kind;
	int n;
	const struct np_hint *hints; /* n entries when kind == NP_HL_LIST */
};

struct np_merge_input {
	enum np_tm_policy policy;
	np_nodemask nodes; /* the machine's NUMA node ids (default affinity) */
	/* distance[i][j] for node ids i, j (row-major, NP_MAX_NUMA wide);
	 * may be NULL when prefer_closest is false. */
	const uint16_t (*distance)[NP_MAX_NUMA];
	bool prefer_closest;
	int nlists;
	const struct np_hint_list *lists;
};

struct np_merge_result {
	struct np_hint best; /* best.any = nil mask */
	bool admit;
};

/*
 * Same answer as the kubelet's cross-product enumeration (the reference
 * implementation lives in tests/support/merge_bruteforce.c), without
 * enumerating it. Returns 0 or -errno (-EINVAL for a hint mask outside
 * `nodes` or an empty `nodes`, -ENOMEM, -E2BIG for lists over more than
 * 20 nodes too many and too wide to merge within a bounded work).
 */
int np_merge(const struct np_merge_input *in, struct np_merge_result *out);

/* Parse/format policy names ("none", "best-effort", "restricted",
 * "single-numa-node"). */
int np_tm_policy_parse(const char *s, enum np_tm_policy *out);
const char *np_tm_policy_name(enum np_tm_policy p);

#endif
