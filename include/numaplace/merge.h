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
 * `nodes` or an empty `nodes`, -ENOMEM).
 */
int np_merge(const struct np_merge_input *in, struct np_merge_result *out);

/* Parse/format policy names ("none", "best-effort", "restricted",
 * "single-numa-node"). */
int np_tm_policy_parse(const char *s, enum np_tm_policy *out);
const char *np_tm_policy_name(enum np_tm_policy p);

#endif
