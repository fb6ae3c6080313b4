// SPDX-License-Identifier: Apache-2.0
/*
 * Topology Manager hint merge with the kubelet's semantics
 * (pkg/kubelet/cm/topologymanager/policy.go), without enumerating the cross
 * product of the hint lists. Written from the semantics only; the literal
 * enumeration lives in tests/support/merge_bruteforce.c and the unit tests
 * check that both agree.
 *
 * The kubelet folds every permutation (one hint per list) with a pairwise
 * compare. That compare is a total order on merged hints, so the result is
 * simply the maximum of that order over the set of merged hints that some
 * permutation produces:
 *
 *   1. every preferred hint beats every non-preferred one; among preferred
 *      hints the fitter wins (fewer nodes, then, with prefer_closest, the
 *      lower sum of distances over all ordered node pairs, then the lower
 *      mask value);
 *   2. among non-preferred hints, with B = bestNonPreferredAffinityCount:
 *      masks with exactly B nodes (fittest first), then masks with fewer
 *      than B nodes (more nodes first, then fittest), then masks with more
 *      than B nodes (fittest first).
 *
 * Step 1 (preferred). A permutation merges into a preferred hint only when
 * all its hints are preferred and all its non-nil masks are one mask M, so
 * the preferred results are exactly: each non-empty M such that every list
 * offers M as a preferred hint or offers a preferred nil, and at least one
 * list offers M; plus the default mask when every list offers a preferred
 * nil. One hash table over the masks of one list finds them in linear time.
 * If there is any, the fittest is the answer.
 *
 * Step 2 (non-preferred). Otherwise every permutation is non-preferred and
 * preferred flags no longer matter; a nil hint (or the all-nodes mask) is
 * the identity of AND. The set of reachable merged masks is
 * R = {AND of one mask per list} \ {0} and the answer is max(R) under
 * order 2 (or {default, non-preferred} when R is empty). Two exact ways to
 * get it:
 *
 *   - transform (few nodes): over the 2^n subsets of the n machine nodes,
 *     the superset-sum ("zeta") transform turns AND-convolution into a
 *     pointwise product: #{permutations whose AND is a superset of x} =
 *     prod over lists of #{masks in the list that contain x}. A Moebius
 *     inversion gives #{permutations whose AND is exactly x}; x is
 *     reachable iff that is non-zero. Counts are exact (64-bit, the
 *     running product is bounded, and re-normalised to 0/1 before it could
 *     overflow). Cost O(lists * n * 2^n), independent of the list sizes.
 *   - search (any number of nodes): list by list, the set of distinct
 *     partial ANDs, pruned only where it provably cannot produce anything
 *     better than a result already found (see merge_search()). Its worst
 *     case stays exponential in the number of lists (deciding whether some
 *     permutation reaches exactly B nodes is a hard problem in general),
 *     but kubelet-like lists prune down to about one pass over the hints.
 *
 * Up to 20 nodes the search runs with a work budget worth a fraction of
 * the transform and falls back to the transform when it runs out (tiny
 * transforms are used directly); above 20 nodes only the search is
 * available. Both strategies give the same answer; the unit tests force
 * each of them (np_merge_path()) against the reference.
 *
 * Conventions (identical in the reference implementation):
 * - nlists == 0: the kubelet's cross product has one empty permutation,
 *   which merges to {default mask, preferred}.
 * - bestNonPreferredAffinityCount ignores nil masks and empty masks.
 * - A nil result is {any = true, mask = 0}.
 * - Every hint is validated (mask within `nodes`), whatever the policy.
 */
#include "numaplace/merge.h"
#include "engine/merge_internal.h"
#include "numaplace/names.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MERGE_PATH_AUTO 0
#define MERGE_PATH_TRANSFORM 1
#define MERGE_PATH_SEARCH 2
/* Largest node count for the transform (two arrays of 2^n u64). */
#define MERGE_TRANSFORM_MAX_NODES 20

static const char *const tm_policy_names[] = {
    [NP_TM_NONE] = "none",
    [NP_TM_BEST_EFFORT] = "best-effort",
    [NP_TM_RESTRICTED] = "restricted",
    [NP_TM_SINGLE_NUMA_NODE] = "single-numa-node",
};

int np_tm_policy_parse(const char *s, enum np_tm_policy *out)
{
	int i = NP_NAME_FIND(tm_policy_names, s);

	if (i < 0 || !out)
		return -EINVAL;
	*out = (enum np_tm_policy)i;
	return 0;
}

const char *np_tm_policy_name(enum np_tm_policy p)
{
	return np_name_of(tm_policy_names, NP_NAMES_LEN(tm_policy_names),
			  (int)p, "unknown");
}

/* A hint list after filterProvidersHints (hints still filtered by use()). */
struct view {
	const struct np_hint *h;
	int n;
};

static const struct np_hint hint_no_pref = {0, true, true};
static const struct np_hint hint_impossible = {0, true, false};

static bool hint_used(const struct merge_query *c, const struct np_hint *h)
{
	return !c->snn || (h->preferred && (h->any || popc(h->mask) == 1));
}

/* Order 1: replace k by m if m is fitter. */
static void consider_fitter(const struct merge_query *c, struct cand *k, np_nodemask m)
{
	int cnt = popc(m);
	bool ok = false;
	uint64_t ds = 0;

	if (!k->have || cnt < k->cnt ||
	    (cnt == k->cnt && fitter_same_cnt(c, m, k, &ok, &ds)))
		cand_set(k, m, cnt, ok, ds);
}

/* ---- step 1: the fittest preferred merge ------------------------------ */

static int merge_preferred(const struct merge_query *c, const struct view *v, int nv,
			   struct cand *best)
{
	struct hset t;
	int first = -1, K = 0, r;

	/* K = lists without a preferred nil; the first of them seeds. */
	for (int i = 0; i < nv; i++) {
		bool pnil = false;
		for (int j = 0; j < v[i].n && !pnil; j++) {
			const struct np_hint *h = &v[i].h[j];
			pnil = h->any && h->preferred && hint_used(c, h);
		}
		if (!pnil) {
			if (first < 0)
				first = i;
			K++;
		}
	}
	if (K == 0) {
		/* all lists can be nil: any preferred mask, or the default */
		consider_fitter(c, best, c->nodes);
		for (int i = 0; i < nv; i++)
			for (int j = 0; j < v[i].n; j++) {
				const struct np_hint *h = &v[i].h[j];
				if (!h->any && h->preferred && h->mask &&
				    hint_used(c, h))
					consider_fitter(c, best, h->mask);
			}
		return 0;
	}

	if ((r = np_hset_init(&t, (size_t)v[first].n, true)))
		return r;
	/* t.v[M] = how many of the lists without a preferred nil, in order,
	 * offer M as a preferred hint (M must be offered by all K) */
	for (int j = 0; j < v[first].n; j++) {
		const struct np_hint *h = &v[first].h[j];
		if (h->any || !h->preferred || !h->mask || !hint_used(c, h))
			continue;
		if ((r = hset_add(&t, h->mask)) < 0)
			goto out;
		t.v[hset_probe(&t, h->mask)] = 1;
	}
	int seen = 1;
	for (int i = first + 1; i < nv && t.n; i++) {
		bool pnil = false, hit = false;
		for (int j = 0; j < v[i].n && !pnil; j++) {
			const struct np_hint *h = &v[i].h[j];
			pnil = h->any && h->preferred && hint_used(c, h);
		}
		if (pnil)
			continue;
		for (int j = 0; j < v[i].n; j++) {
			const struct np_hint *h = &v[i].h[j];
			size_t s;
			if (h->any || !h->preferred || !h->mask ||
			    !hint_used(c, h))
				continue;
			s = hset_probe(&t, h->mask);
			if (t.k[s] && t.v[s] == seen) {
				t.v[s] = seen + 1;
				hit = true;
			}
		}
		seen++;
		if (!hit)
			break;
	}
	if (seen == K)
		for (size_t s = 0; s < t.cap; s++)
			if (t.k[s] && t.v[s] == K)
				consider_fitter(c, best, t.k[s]);
	r = 0;
out:
	np_hset_free(&t);
	return r;
}

/* ---- driver ------------------------------------------------------------ */

static int validate(const struct np_merge_input *in)
{
	if (in->policy < NP_TM_NONE || in->policy > NP_TM_SINGLE_NUMA_NODE ||
	    !in->nodes || in->nlists < 0 || (in->nlists > 0 && !in->lists) ||
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

/*
 * Strategy. The transform costs about (lists + 1) * n * 2^(n-1) + 2 * lists
 * * 2^n additions whatever the lists; the pruned search is usually far
 * cheaper but has no useful a-priori bound. Tiny transforms are used when
 * even the unpruned search would cost more; otherwise the search runs with
 * a budget worth a fraction of the transform and falls back to it when the
 * budget runs out, so auto costs at most about twice the transform.
 */
#define MERGE_TRANSFORM_TINY 16384.0

static double transform_cost(const struct merge_query *c, int nl)
{
	double size = (double)((uint64_t)1 << c->nnodes);

	return (double)(nl + 1) * c->nnodes * size / 2 + 2.0 * nl * size;
}

static bool tiny_transform_wins(const struct merge_query *c, const struct dlist *L,
				int nl, double tr)
{
	double size = (double)((uint64_t)1 << c->nnodes), states = 1, dp = 0;

	for (int i = 0; i < nl; i++) {
		double w = (double)L[i].n + L[i].keep;
		dp += states * w;
		states *= w;
		if (states > size)
			states = size;
	}
	/* a hash insert costs several transform additions */
	return tr < 4 * dp;
}

static int merge_nonpreferred(struct merge_query *c, const struct view *v, int nv,
			      int path, struct cand *inc)
{
	struct dlist *L;
	np_nodemask *store;
	size_t total = 0;
	int nl = 0, r = 0;

	for (int i = 0; i < nv; i++)
		total += (size_t)v[i].n;
	L = calloc((size_t)nv + 1, sizeof(*L));
	store = malloc((total + 1) * sizeof(*store));
	if (!L || !store) {
		r = -ENOMEM;
		goto out;
	}
	total = 0;
	c->best_nonpref = 0;
	for (int i = 0; i < nv; i++) {
		struct dlist d = {.m = &store[total]};
		bool any_hint = false;

		for (int j = 0; j < v[i].n; j++) {
			const struct np_hint *h = &v[i].h[j];
			int k;
			if (!hint_used(c, h))
				continue;
			any_hint = true;
			if (h->any) {
				d.keep = true;
				continue;
			}
			k = popc(h->mask);
			if (!k)
				continue; /* merges to nothing; not counted */
			if (!d.mincnt || k < d.mincnt)
				d.mincnt = k;
			if (k > d.maxcnt)
				d.maxcnt = k;
			if (h->mask == c->nodes)
				d.keep = true;
			else
				d.m[d.n++] = h->mask;
		}
		if (d.mincnt > c->best_nonpref)
			c->best_nonpref = d.mincnt;
		if (!any_hint || (!d.keep && !d.n)) {
			/* No permutation merges to a non-empty mask. */
			goto out;
		}
		if (!d.n)
			continue; /* nil only: the identity */
		if (d.keep)
			d.maxcnt = c->nnodes;
		total += (size_t)d.n;
		L[nl++] = d;
	}
	if (!nl) {
		cand_set(inc, c->nodes, c->nnodes, false, 0);
		goto out;
	}
	if (c->nnodes > MERGE_TRANSFORM_MAX_NODES ||
	    path == MERGE_PATH_SEARCH) {
		/* no transform to fall back on: a bound, then -E2BIG */
		r = np_merge_search(c, L, nl, inc, NP_MERGE_MAX_WORK);
		if (r == -EAGAIN)
			r = -E2BIG;
		goto out;
	}
	if (path == MERGE_PATH_AUTO) {
		double tr = transform_cost(c, nl);
		if (tr > MERGE_TRANSFORM_TINY ||
		    !tiny_transform_wins(c, L, nl, tr)) {
			r = np_merge_search(c, L, nl, inc,
					    (uint64_t)(tr / 8) + 64);
			if (r != -EAGAIN && r != -E2BIG)
				goto out;
			*inc = (struct cand){0};
		}
	}
	r = np_merge_transform(c, L, nl, inc);
out:
	free(L);
	free(store);
	return r;
}

int np_merge_path(const struct np_merge_input *in, struct np_merge_result *out,
		  int path);

int np_merge_path(const struct np_merge_input *in, struct np_merge_result *out,
		  int path)
{
	struct merge_query *c;
	struct view *v = NULL;
	struct cand best = {0};
	int r;

	if (!in || !out || (r = validate(in)))
		return -EINVAL;
	if (in->policy == NP_TM_NONE) {
		out->best = (struct np_hint){
		    .mask = 0, .any = true, .preferred = false};
		out->admit = true;
		return 0;
	}
	c = malloc(sizeof(*c));
	v = calloc((size_t)in->nlists + 1, sizeof(*v));
	if (!c || !v) {
		r = -ENOMEM;
		goto out;
	}
	c->nodes = in->nodes;
	c->nnodes = popc(in->nodes);
	c->snn = in->policy == NP_TM_SINGLE_NUMA_NODE;
	c->closest = in->prefer_closest;
	c->d = in->distance;
	c->best_nonpref = 0;
	c->nbr_ok = false;
	for (int i = 0; i < in->nlists; i++) {
		const struct np_hint_list *l = &in->lists[i];
		if (l->kind == NP_HL_NO_PREFERENCE) {
			v[i] = (struct view){&hint_no_pref, 1};
		} else if (l->kind == NP_HL_IMPOSSIBLE || l->n == 0) {
			v[i] = (struct view){&hint_impossible, 1};
		} else {
			v[i] = (struct view){l->hints, l->n};
		}
	}

	if ((r = merge_preferred(c, v, in->nlists, &best)))
		goto out;
	if (best.have) {
		out->best = (struct np_hint){
		    .mask = best.m, .any = false, .preferred = true};
	} else {
		if ((r = merge_nonpreferred(c, v, in->nlists, path, &best)))
			goto out;
		out->best = (struct np_hint){
		    .mask = best.have ? best.m : in->nodes,
		    .any = false,
		    .preferred = false,
		};
	}
	if (c->snn && out->best.mask == in->nodes) {
		out->best.mask = 0;
		out->best.any = true;
	}
	out->admit = in->policy == NP_TM_BEST_EFFORT || out->best.preferred;
	r = 0;
out:
	free(c);
	free(v);
	return r;
}

int np_merge(const struct np_merge_input *in, struct np_merge_result *out)
{
	return np_merge_path(in, out, MERGE_PATH_AUTO);
}
