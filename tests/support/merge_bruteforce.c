// SPDX-License-Identifier: Apache-2.0
/*
 * Reference Topology Manager merge: the kubelet's semantics
 * (pkg/kubelet/cm/topologymanager/policy.go) implemented the kubelet's way,
 * by visiting every permutation of the cross product of the hint lists and
 * folding them with the pairwise compare. Written from the semantics, not
 * from the Go source. Deliberately naive: it is the oracle np_merge() is
 * checked against, so it favours being obviously right over being fast.
 *
 * Conventions shared with np_merge():
 * - nlists == 0: the cross product has exactly one (empty) permutation; it
 *   merges to {default mask, preferred} (vacuously all preferred).
 * - bestNonPreferredAffinityCount ignores nil masks and empty (0) masks.
 * - A nil result is reported as {any = true, mask = 0}.
 */
#include "merge_bruteforce.h"

#include <errno.h>
#include <stdlib.h>

struct bf_list {
	struct np_hint *h;
	int n;
};

struct bf_ctx {
	np_nodemask nodes;
	bool closest;
	const uint16_t (*d)[NP_MAX_NUMA];
	int best_np_count;
};

static uint64_t bf_dist_sum(const struct bf_ctx *c, np_nodemask m)
{
	uint64_t s = 0;

	for (int i = 0; i < NP_MAX_NUMA; i++) {
		if (!np_nodemask_test(m, i))
			continue;
		for (int j = 0; j < NP_MAX_NUMA; j++)
			if (np_nodemask_test(m, j))
				s += c->d[i][j];
	}
	return s;
}

/* NUMAInfo.Narrowest / NUMAInfo.Closest: is a a better fit than b? */
static bool bf_fitter(const struct bf_ctx *c, np_nodemask a, np_nodemask b)
{
	int ca = np_nodemask_count(a), cb = np_nodemask_count(b);

	if (ca != cb)
		return ca < cb;
	if (c->closest) {
		/* Equal counts: comparing sums == comparing sum / count^2. */
		uint64_t sa = bf_dist_sum(c, a), sb = bf_dist_sum(c, b);
		if (sa != sb)
			return sa < sb;
	}
	return a < b;
}

/* HintMerger.compare: returns the better of *cur (if have) and cand. */
static void bf_compare(const struct bf_ctx *c, bool *have, struct np_hint *cur,
		       const struct np_hint *cand)
{
	int best = c->best_np_count;
	int cc, nc;

	if (np_nodemask_count(cand->mask) == 0)
		return;
	if (!*have) {
		*have = true;
		*cur = *cand;
		return;
	}
	if (cand->preferred && !cur->preferred) {
		*cur = *cand;
		return;
	}
	if (cur->preferred && !cand->preferred)
		return;
	if (cur->preferred && cand->preferred) {
		if (bf_fitter(c, cand->mask, cur->mask))
			*cur = *cand;
		return;
	}
	/* Both non-preferred. */
	cc = np_nodemask_count(cur->mask);
	nc = np_nodemask_count(cand->mask);
	if (cc > best) {
		if (bf_fitter(c, cand->mask, cur->mask))
			*cur = *cand;
		return;
	}
	if (cc == best) {
		if (nc == best && bf_fitter(c, cand->mask, cur->mask))
			*cur = *cand;
		return;
	}
	/* cc < best */
	if (nc > best)
		return;
	if (nc == best) {
		*cur = *cand;
		return;
	}
	if (nc > cc) {
		*cur = *cand;
		return;
	}
	if (nc < cc)
		return;
	if (bf_fitter(c, cand->mask, cur->mask))
		*cur = *cand;
}

/* mergePermutation */
static struct np_hint bf_merge_perm(const struct bf_ctx *c,
				    const struct bf_list *lists, int nlists,
				    const int *idx)
{
	struct np_hint r = {.mask = c->nodes, .any = false, .preferred = true};
	bool have_first = false;
	np_nodemask first = 0;

	for (int i = 0; i < nlists; i++) {
		const struct np_hint *h = &lists[i].h[idx[i]];
		if (!h->any) {
			if (!have_first) {
				have_first = true;
				first = h->mask;
			} else if (h->mask != first) {
				r.preferred = false;
			}
			r.mask &= h->mask;
		}
		if (!h->preferred)
			r.preferred = false;
	}
	return r;
}

static int bf_validate(const struct np_merge_input *in)
{
	if (!in || in->policy < NP_TM_NONE ||
	    in->policy > NP_TM_SINGLE_NUMA_NODE || !in->nodes ||
	    in->nlists < 0 || (in->nlists > 0 && !in->lists) ||
	    (in->prefer_closest && !in->distance))
		return -EINVAL;
	for (int i = 0; i < in->nlists; i++) {
		const struct np_hint_list *l = &in->lists[i];
		if (l->kind == NP_HL_NO_PREFERENCE ||
		    l->kind == NP_HL_IMPOSSIBLE)
			continue;
		if (l->kind != NP_HL_LIST || l->n < 0 ||
		    (l->n > 0 && !l->hints))
			return -EINVAL;
		for (int j = 0; j < l->n; j++)
			if (!l->hints[j].any && (l->hints[j].mask & ~in->nodes))
				return -EINVAL;
	}
	return 0;
}

int np_merge_bruteforce(const struct np_merge_input *in,
			struct np_merge_result *out)
{
	struct bf_ctx c;
	struct bf_list *lists = NULL;
	struct np_hint *store = NULL;
	struct np_hint best = {0};
	bool have = false, snn, empty = false;
	int *idx = NULL;
	size_t total = 0;
	int r;

	if (!out || (r = bf_validate(in)))
		return -EINVAL;
	if (in->policy == NP_TM_NONE) {
		out->best = (struct np_hint){
		    .mask = 0, .any = true, .preferred = false};
		out->admit = true;
		return 0;
	}
	snn = in->policy == NP_TM_SINGLE_NUMA_NODE;
	c.nodes = in->nodes;
	c.closest = in->prefer_closest;
	c.d = in->distance;

	for (int i = 0; i < in->nlists; i++) {
		const struct np_hint_list *l = &in->lists[i];
		total += l->kind == NP_HL_LIST && l->n > 0 ? (size_t)l->n : 1;
	}
	lists = calloc((size_t)in->nlists + 1, sizeof(*lists));
	store = calloc(total + 1, sizeof(*store));
	idx = calloc((size_t)in->nlists + 1, sizeof(*idx));
	if (!lists || !store || !idx) {
		r = -ENOMEM;
		goto out;
	}

	/* filterProvidersHints, then single-numa-node's filter. */
	total = 0;
	for (int i = 0; i < in->nlists; i++) {
		const struct np_hint_list *l = &in->lists[i];
		struct np_hint tmp;
		const struct np_hint *src;
		int n;

		if (l->kind == NP_HL_NO_PREFERENCE) {
			tmp = (struct np_hint){0, true, true};
			src = &tmp;
			n = 1;
		} else if (l->kind == NP_HL_IMPOSSIBLE || l->n == 0) {
			tmp = (struct np_hint){0, true, false};
			src = &tmp;
			n = 1;
		} else {
			src = l->hints;
			n = l->n;
		}
		lists[i].h = &store[total];
		for (int j = 0; j < n; j++) {
			struct np_hint h = src[j];
			if (h.any)
				h.mask = 0;
			if (snn && !(h.preferred &&
				     (h.any || np_nodemask_count(h.mask) == 1)))
				continue;
			store[total++] = h;
			lists[i].n++;
		}
		if (!lists[i].n)
			empty = true;
	}

	/* bestNonPreferredAffinityCount = maxOfMinAffinityCounts */
	c.best_np_count = 0;
	for (int i = 0; i < in->nlists; i++) {
		int min = 0;
		for (int j = 0; j < lists[i].n; j++) {
			int k = np_nodemask_count(lists[i].h[j].mask);
			if (lists[i].h[j].any || k == 0)
				continue;
			if (min == 0 || k < min)
				min = k;
		}
		if (min > c.best_np_count)
			c.best_np_count = min;
	}

	/* Odometer over the cross product (one empty permutation if no list).
	 */
	while (!empty) {
		struct np_hint m = bf_merge_perm(&c, lists, in->nlists, idx);
		int i;

		bf_compare(&c, &have, &best, &m);
		for (i = in->nlists - 1; i >= 0; i--) {
			if (++idx[i] < lists[i].n)
				break;
			idx[i] = 0;
		}
		if (i < 0)
			break;
	}
	if (!have)
		best = (struct np_hint){
		    .mask = in->nodes, .any = false, .preferred = false};
	if (snn && !best.any && best.mask == in->nodes) {
		best.mask = 0;
		best.any = true;
	}
	out->best = best;
	out->admit = in->policy == NP_TM_BEST_EFFORT || best.preferred;
	r = 0;
out:
	free(lists);
	free(store);
	free(idx);
	return r;
}
