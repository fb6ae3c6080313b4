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

struct mctx {
	np_nodemask nodes; /* default affinity */
	int nnodes;
	bool snn;
	bool closest;
	const uint16_t (*d)[NP_MAX_NUMA];
	int B; /* bestNonPreferredAffinityCount */
	/* search, prefer_closest (built lazily): per node, the other nodes by
	 * ascending distance, and pre[i][k] = d[i][i] + the k smallest
	 * d[i][j], j != i (a lower bound for row i of any k+1-node set) */
	bool nbr_ok;
	uint8_t nbr[NP_MAX_NUMA][NP_MAX_NUMA];
	uint32_t pre[NP_MAX_NUMA][NP_MAX_NUMA];
};

/* A result candidate; dsum is cached once computed. */
struct cand {
	bool have;
	np_nodemask m;
	int cnt;
	bool dsum_ok;
	uint64_t dsum;
};

/* A hint list after filterProvidersHints (hints still filtered by use()). */
struct view {
	const struct np_hint *h;
	int n;
};

static const struct np_hint hint_no_pref = {0, true, true};
static const struct np_hint hint_impossible = {0, true, false};

/*
 * Node count. Without -mpopcnt, __builtin_popcountll is a libgcc call,
 * which dominated profiles; the branch-free SWAR count is inlined.
 */
static inline int popc(np_nodemask m)
{
#ifdef __POPCNT__
	return __builtin_popcountll(m);
#else
	m = m - ((m >> 1) & 0x5555555555555555ull);
	m = (m & 0x3333333333333333ull) + ((m >> 2) & 0x3333333333333333ull);
	m = (m + (m >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (int)((m * 0x0101010101010101ull) >> 56);
#endif
}

static bool hint_used(const struct mctx *c, const struct np_hint *h)
{
	return !c->snn || (h->preferred && (h->any || popc(h->mask) == 1));
}

static uint64_t dist_sum(const struct mctx *c, np_nodemask m)
{
	uint64_t s = 0;

	for (np_nodemask a = m; a; a &= a - 1) {
		const uint16_t *row = c->d[__builtin_ctzll(a)];
		for (np_nodemask b = m; b; b &= b - 1)
			s += row[__builtin_ctzll(b)];
	}
	return s;
}

static uint64_t cand_dsum(const struct mctx *c, struct cand *k)
{
	if (!k->dsum_ok) {
		k->dsum = dist_sum(c, k->m);
		k->dsum_ok = true;
	}
	return k->dsum;
}

static void cand_set(struct cand *k, np_nodemask m, int cnt, bool dsum_ok,
		     uint64_t dsum)
{
	k->have = true;
	k->m = m;
	k->cnt = cnt;
	k->dsum_ok = dsum_ok;
	k->dsum = dsum;
}

/* Same node count: is m (cnt nodes) strictly fitter than k? (Closest or
 * Narrowest.) *dsum receives m's distance sum when it was computed. */
static bool fitter_same_cnt(const struct mctx *c, np_nodemask m, struct cand *k,
			    bool *dsum_ok, uint64_t *dsum)
{
	if (c->closest) {
		uint64_t a = dist_sum(c, m), b = cand_dsum(c, k);
		*dsum_ok = true;
		*dsum = a;
		if (a != b)
			return a < b;
	}
	return m < k->m;
}

/* Order 1: replace k by m if m is fitter. */
static void consider_fitter(const struct mctx *c, struct cand *k, np_nodemask m)
{
	int cnt = popc(m);
	bool ok = false;
	uint64_t ds = 0;

	if (!k->have || cnt < k->cnt ||
	    (cnt == k->cnt && fitter_same_cnt(c, m, k, &ok, &ds)))
		cand_set(k, m, cnt, ok, ds);
}

/* Rank of a non-preferred mask's node count (higher is better). */
static inline int np_score(int cnt, int B)
{
	if (cnt == B)
		return 200;
	if (cnt < B)
		return 100 + cnt;
	return 100 - cnt;
}

/* Order 2: is m better than k? (*dsum: m's distance sum if computed) */
static bool better_np_ds(const struct mctx *c, np_nodemask m, struct cand *k,
			 bool *ok, uint64_t *ds)
{
	int a, b;

	if (!k->have)
		return true;
	a = np_score(popc(m), c->B);
	b = np_score(k->cnt, c->B);
	if (a != b)
		return a > b;
	return fitter_same_cnt(c, m, k, ok, ds);
}

static bool better_np(const struct mctx *c, np_nodemask m, struct cand *k)
{
	bool ok = false;
	uint64_t ds = 0;

	return better_np_ds(c, m, k, &ok, &ds);
}

/* Order 2: replace k by m if m is better. */
static void consider_np(const struct mctx *c, struct cand *k, np_nodemask m)
{
	bool ok = false;
	uint64_t ds = 0;

	if (better_np_ds(c, m, k, &ok, &ds))
		cand_set(k, m, popc(m), ok, ds);
}

/* ---- open-addressing hash of non-zero u64 keys ------------------------ */

struct hset {
	uint64_t *k;
	int32_t *v;
	size_t cap; /* power of two */
	size_t n;
	int shift;
	bool with_v;
};

static inline size_t hslot(const struct hset *s, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> s->shift);
}

static int hset_init(struct hset *s, size_t want, bool with_v)
{
	size_t cap = 16;
	int bits = 4;

	while (cap < 2 * want) {
		cap <<= 1;
		bits++;
	}
	memset(s, 0, sizeof(*s));
	s->k = calloc(cap, sizeof(*s->k));
	if (with_v)
		s->v = calloc(cap, sizeof(*s->v));
	if (!s->k || (with_v && !s->v)) {
		free(s->k);
		free(s->v);
		s->k = NULL;
		s->v = NULL;
		return -ENOMEM;
	}
	s->cap = cap;
	s->shift = 64 - bits;
	s->with_v = with_v;
	return 0;
}

static void hset_free(struct hset *s)
{
	free(s->k);
	free(s->v);
	s->k = NULL;
	s->v = NULL;
}

static void hset_clear(struct hset *s)
{
	memset(s->k, 0, s->cap * sizeof(*s->k));
	s->n = 0;
}

/* Slot of key, or of the empty slot where it would go. */
static inline size_t hset_probe(const struct hset *s, uint64_t key)
{
	size_t i = hslot(s, key), mask = s->cap - 1;

	while (s->k[i] && s->k[i] != key)
		i = (i + 1) & mask;
	return i;
}

static int hset_grow(struct hset *s)
{
	struct hset t;
	int r;

	if ((r = hset_init(&t, s->cap, s->with_v)))
		return r;
	for (size_t i = 0; i < s->cap; i++) {
		if (!s->k[i])
			continue;
		size_t j = hset_probe(&t, s->k[i]);
		t.k[j] = s->k[i];
		if (s->with_v)
			t.v[j] = s->v[i];
	}
	t.n = s->n;
	hset_free(s);
	*s = t;
	return 0;
}

/* Insert key; returns 1 if added, 0 if present, -ENOMEM. */
static int hset_add(struct hset *s, uint64_t key)
{
	size_t i;
	int r;

	if (2 * (s->n + 1) > s->cap && (r = hset_grow(s)))
		return r;
	i = hset_probe(s, key);
	if (s->k[i])
		return 0;
	s->k[i] = key;
	if (s->with_v)
		s->v[i] = 0;
	s->n++;
	return 1;
}

/* A hint list for step 2: non-empty masks, nil as `keep`. */
struct dlist {
	np_nodemask *m;
	int n;
	bool keep;  /* has a nil or all-nodes hint: AND leaves a mask as is */
	int mincnt; /* fewest nodes of a non-nil, non-empty mask */
	int maxcnt; /* most nodes of a mask, all nodes if keep */
	struct hset idx;  /* search: the masks, built when scans get costly */
	uint64_t scanned; /* search: masks visited by scans of this list */
};

/* ---- step 1: the fittest preferred merge ------------------------------ */

static int merge_preferred(const struct mctx *c, const struct view *v, int nv,
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

	if ((r = hset_init(&t, (size_t)v[first].n, true)))
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
	hset_free(&t);
	return r;
}

/* ---- step 2a: subset-lattice transform -------------------------------- */

static void zeta_sup(uint64_t *a, int n)
{
	size_t size = (size_t)1 << n;

	for (size_t bit = 1; bit < size; bit <<= 1)
		for (size_t hi = 0; hi < size; hi += 2 * bit)
			for (size_t lo = hi; lo < hi + bit; lo++)
				a[lo] += a[lo + bit];
}

static void moebius_sup(uint64_t *a, int n)
{
	size_t size = (size_t)1 << n;

	for (size_t bit = 1; bit < size; bit <<= 1)
		for (size_t hi = 0; hi < size; hi += 2 * bit)
			for (size_t lo = hi; lo < hi + bit; lo++)
				a[lo] -= a[lo + bit];
}

/* Maps between node masks and dense n-bit subset indices. */
struct compress {
	np_nodemask nodes;
	int shift; /* >= 0: nodes is one contiguous run from bit shift */
	uint8_t rank[NP_MAX_NUMA]; /* node id -> dense bit */
	uint8_t id[NP_MAX_NUMA];   /* dense bit -> node id */
};

static void compress_init(struct compress *z, np_nodemask nodes)
{
	int k = 0, lo = __builtin_ctzll(nodes);
	np_nodemask run = nodes >> lo;

	z->nodes = nodes;
	z->shift = (run & (run + 1)) == 0 ? lo : -1;
	for (np_nodemask a = nodes; a; a &= a - 1) {
		int b = __builtin_ctzll(a);
		z->rank[b] = (uint8_t)k;
		z->id[k++] = (uint8_t)b;
	}
}

static inline size_t compress_mask(const struct compress *z, np_nodemask m)
{
	size_t x = 0;

	if (z->shift >= 0)
		return (size_t)(m >> z->shift);
	for (; m; m &= m - 1)
		x |= (size_t)1 << z->rank[__builtin_ctzll(m)];
	return x;
}

static inline np_nodemask expand_mask(const struct compress *z, size_t x)
{
	np_nodemask m = 0;

	if (z->shift >= 0)
		return (np_nodemask)x << z->shift;
	for (; x; x &= x - 1)
		m |= NP_NODEMASK_BIT(z->id[__builtin_ctzll(x)]);
	return m;
}

static int merge_transform(const struct mctx *c, const struct dlist *L, int nl,
			   struct cand *inc)
{
	int n = c->nnodes;
	size_t size = (size_t)1 << n, full = size - 1;
	uint64_t *acc, *z, bound = 1;
	struct compress cz;
	size_t first_of[NP_MAX_NUMA + 1];
	int best_score = -1, best_cnt = 0;

	acc = malloc(size * sizeof(*acc));
	z = malloc(size * sizeof(*z));
	if (!acc || !z) {
		free(acc);
		free(z);
		return -ENOMEM;
	}
	compress_init(&cz, c->nodes);
	for (int i = 0; i < nl; i++) {
		uint64_t *dst = i ? z : acc, distinct = 0;

		memset(dst, 0, size * sizeof(*dst));
		if (L[i].keep) {
			dst[full] = 1;
			distinct++;
		}
		for (int j = 0; j < L[i].n; j++) {
			size_t x = compress_mask(&cz, L[i].m[j]);
			if (!dst[x]) {
				dst[x] = 1;
				distinct++;
			}
		}
		zeta_sup(dst, n);
		if (!i) {
			bound = distinct;
			continue;
		}
		if (bound > UINT64_MAX / distinct) {
			/* Back to 0/1 (reachable or not) before overflowing. */
			moebius_sup(acc, n);
			bound = 0;
			for (size_t x = 0; x < size; x++) {
				acc[x] = acc[x] != 0;
				bound += acc[x];
			}
			zeta_sup(acc, n);
			if (!bound)
				bound = 1;
		}
		for (size_t x = 0; x < size; x++)
			acc[x] *= z[x];
		bound *= distinct;
	}
	moebius_sup(acc, n);

	/* Best node count first, then the fittest mask with that count. */
	for (int k = 0; k <= n; k++)
		first_of[k] = 0;
	for (size_t x = 1; x < size; x++) {
		int k;
		if (!acc[x])
			continue;
		k = popc(x);
		if (!first_of[k])
			first_of[k] = x;
	}
	for (int k = 1; k <= n; k++) {
		int s = np_score(k, c->B);
		if (first_of[k] && s > best_score) {
			best_score = s;
			best_cnt = k;
		}
	}
	if (best_score >= 0) {
		/* Dense order preserves mask order: the first is the lowest. */
		np_nodemask m = expand_mask(&cz, first_of[best_cnt]);
		cand_set(inc, m, best_cnt, false, 0);
		if (c->closest)
			for (size_t x = first_of[best_cnt] + 1; x < size; x++)
				if (acc[x] && popc(x) == best_cnt)
					consider_np(c, inc,
						    expand_mask(&cz, x));
	}
	free(acc);
	free(z);
	return 0;
}

/* ---- step 2b: pruned search over reachable partial ANDs --------------- */

/*
 * Lists are processed one by one; a state r is the AND of the masks chosen
 * so far (the set of distinct states is kept). Every final result reachable
 * from r is a subset of r, and has at most u(r) = min(cnt(r), U) nodes where
 * U is the smallest "largest mask" of the lists still to process. `inc` is
 * the best final result found so far (a real reachable result), and a state
 * is dropped only when no final result below it can beat inc. With
 * t = cnt(inc) <= B:
 *
 *  - u(r) < t: every final below r has fewer nodes than inc, all <= B: lose.
 *  - cnt(r) == t: r itself is the only final below it that is not smaller;
 *    it is checked as a final (if it beats inc) and dropped.
 *  - u(r) == t, or t == B: a final below r beats inc only if it has exactly
 *    t nodes (more than t would be > u(r), or > B, which ranks below B;
 *    fewer loses) and is fitter than inc; dropped when a lower bound over
 *    all t-subsets of r (lowest t bits; with prefer_closest a per-row
 *    distance bound, then the lowest t bits) shows none is.
 *  - new partial ANDs with fewer than t nodes are not kept.
 *
 * And whatever inc is: when cnt(r) <= B and every remaining list has a nil
 * hint or a superset of r, r itself is a final result, and it beats every
 * other final below r (those are proper subsets: fewer nodes, all <= B).
 * It is offered to inc and not expanded.
 *
 * Everything else is expanded; the children from the last list are final
 * results and are offered to inc directly. Order only affects speed: lists
 * with the smallest largest mask first (the states fall to <= U nodes at
 * once), and within a layer the states nearest to min(B, U) first, so that
 * a good inc is found early.
 */

struct search {
	const struct mctx *c;
	struct mctx *cm;
	struct dlist *L;
	int nl;
	int *urem; /* urem[i] = min over lists j >= i of maxcnt; [nl] = n */
	struct cand *inc;
	uint64_t work, budget; /* masks visited; give up beyond budget */
	int err;
};

/* Lists at least this long get a hash index for exact-match lookups once
 * linear scans of them have cost about as much as building it. */
#define MERGE_INDEX_MIN 32

/* Does list l have a nil hint or a mask containing r (cnt nodes)? */
static bool list_covers(struct search *s, struct dlist *l, np_nodemask r,
			int cnt)
{
	int j;

	if (l->keep)
		return true;
	if (cnt > l->maxcnt)
		return false;
	if (l->idx.k && l->idx.k[hset_probe(&l->idx, r)])
		return true;
	/* masks sorted by node count, descending */
	for (j = 0; j < l->n; j++) {
		if (popc(l->m[j]) < cnt)
			break;
		if ((l->m[j] & r) == r)
			break;
	}
	s->work += (uint64_t)j + 1;
	l->scanned += (uint64_t)j + 1;
	if (!l->idx.k && l->n >= MERGE_INDEX_MIN &&
	    l->scanned > (uint64_t)l->n * 2) {
		int e = hset_init(&l->idx, (size_t)l->n, false);
		for (int i = 0; !e && i < l->n; i++)
			e = hset_add(&l->idx, l->m[i]) < 0 ? -ENOMEM : 0;
		if (e) {
			hset_free(&l->idx);
			s->err = e;
		}
	}
	return j < l->n && (l->m[j] & r) == r;
}

static bool survives(struct search *s, np_nodemask r, int cnt, int from)
{
	if (cnt > s->urem[from])
		return false;
	for (int i = from; i < s->nl; i++)
		if (!list_covers(s, &s->L[i], r, cnt))
			return false;
	return true;
}

static void build_nbr(struct mctx *c)
{
	for (np_nodemask a = c->nodes; a; a &= a - 1) {
		int i = __builtin_ctzll(a), k = 0;
		uint8_t *o = c->nbr[i];

		for (np_nodemask b = c->nodes; b; b &= b - 1) {
			int j = __builtin_ctzll(b), p;
			if (j == i)
				continue;
			/* insertion sort by (distance, id) */
			for (p = k; p > 0 && c->d[i][o[p - 1]] > c->d[i][j];
			     p--)
				o[p] = o[p - 1];
			o[p] = (uint8_t)j;
			k++;
		}
		c->pre[i][0] = c->d[i][i];
		for (int q = 0; q < k; q++)
			c->pre[i][q + 1] = c->pre[i][q] + c->d[i][o[q]];
	}
	c->nbr_ok = true;
}

/* Sum of the t smallest of v[0..n-1] (t <= n <= NP_MAX_NUMA). */
static uint64_t sum_smallest(uint64_t *v, int n, int t)
{
	uint64_t sum = 0;

	for (int i = 1; i < n; i++) {
		uint64_t x = v[i];
		int p = i;
		for (; p > 0 && v[p - 1] > x; p--)
			v[p] = v[p - 1];
		v[p] = x;
	}
	for (int k = 0; k < t; k++)
		sum += v[k];
	return sum;
}

/* Can some t-node subset of r be strictly fitter than inc (t nodes)? */
static bool can_beat(struct search *s, np_nodemask r, int t)
{
	const struct mctx *c = s->c;
	np_nodemask low = 0, rest = r;
	uint64_t lb[NP_MAX_NUMA], sum, target;
	int nlb = 0;

	/* the lowest mask value of a t-subset of r */
	for (int k = 0; k < t; k++) {
		low |= rest & (~rest + 1);
		rest &= rest - 1;
	}
	if (!c->closest)
		return low < s->inc->m;
	if (!c->nbr_ok)
		build_nbr(s->cm);
	/*
	 * A t-subset S has distance sum = sum over i in S of (d[i][i] + the
	 * d[i][j], j in S \ i) >= sum over i in S of lb[i] for any lb[i]
	 * below row i's share, so >= the t smallest lb[i], i in r. A subset
	 * reaching exactly the bound still needs a lower mask value than inc.
	 * First lb[i] = pre[i][t-1] (closest t-1 nodes of the machine), then,
	 * if that does not settle it, the closest t-1 nodes within r.
	 */
	target = cand_dsum(c, s->inc);
	for (np_nodemask a = r; a; a &= a - 1)
		lb[nlb++] = c->pre[__builtin_ctzll(a)][t - 1];
	s->work++;
	sum = sum_smallest(lb, nlb, t);
	if (sum > target || (sum == target && low >= s->inc->m))
		return false;
	nlb = 0;
	for (np_nodemask a = r; a; a &= a - 1) {
		int i = __builtin_ctzll(a), need = t - 1, k;
		uint64_t v = c->d[i][i];
		for (k = 0; need > 0 && k < c->nnodes - 1; k++) {
			int j = c->nbr[i][k];
			if (np_nodemask_test(r, j)) {
				v += c->d[i][j];
				need--;
			}
		}
		s->work += (uint64_t)k / 4;
		lb[nlb++] = v;
	}
	sum = sum_smallest(lb, nlb, t);
	if (sum != target)
		return sum < target;
	return low < s->inc->m;
}

struct states {
	np_nodemask *v;
	size_t n, cap;
};

static int states_push(struct states *st, np_nodemask m)
{
	if (st->n == st->cap) {
		size_t cap = st->cap ? 2 * st->cap : 64;
		np_nodemask *v = realloc(st->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		st->v = v;
		st->cap = cap;
	}
	st->v[st->n++] = m;
	return 0;
}

/* Stable counting sort by key[node count] (0..NP_MAX_NUMA) into out. */
static void sort_by_key(const np_nodemask *in, size_t n, const uint8_t *key,
			np_nodemask *out)
{
	size_t start[NP_MAX_NUMA + 2] = {0};

	for (size_t i = 0; i < n; i++)
		start[key[popc(in[i])] + 1]++;
	for (int k = 1; k <= NP_MAX_NUMA + 1; k++)
		start[k] += start[k - 1];
	for (size_t i = 0; i < n; i++)
		out[start[key[popc(in[i])]]++] = in[i];
}

static int dlist_cmp(const void *a, const void *b)
{
	const struct dlist *x = a, *y = b;

	if (x->maxcnt != y->maxcnt)
		return x->maxcnt < y->maxcnt ? -1 : 1;
	if (x->mincnt != y->mincnt)
		return x->mincnt > y->mincnt ? -1 : 1;
	return (x->n > y->n) - (x->n < y->n);
}

/*
 * Returns 0, -ENOMEM, or -EAGAIN when more than `budget` masks were visited
 * (inc is then meaningless).
 */
static int merge_search(struct mctx *cm, struct dlist *L, int nl,
			struct cand *inc, uint64_t budget)
{
	const struct mctx *c = cm;
	struct search s = {c, cm, L, nl, NULL, inc, 0, budget, 0};
	struct states cur = {0}, next = {0};
	np_nodemask *scratch = NULL;
	size_t scratch_n = 0, maxl = 0;
	struct hset seen = {0};
	uint8_t key[NP_MAX_NUMA + 1];
	int B = c->B, r;

	qsort(L, (size_t)nl, sizeof(*L), dlist_cmp);
	s.urem = malloc(((size_t)nl + 1) * sizeof(*s.urem));
	if (!s.urem) {
		r = -ENOMEM;
		goto out;
	}
	s.urem[nl] = c->nnodes;
	for (int i = nl - 1; i >= 0; i--)
		s.urem[i] =
		    L[i].maxcnt < s.urem[i + 1] ? L[i].maxcnt : s.urem[i + 1];
	for (int i = 0; i < nl; i++)
		if ((size_t)L[i].n > maxl)
			maxl = (size_t)L[i].n;
	scratch = malloc((maxl + 1) * sizeof(*scratch));
	if (!scratch) {
		r = -ENOMEM;
		goto out;
	}
	scratch_n = maxl + 1;
	for (int k = 0; k <= NP_MAX_NUMA; k++)
		key[k] = (uint8_t)(NP_MAX_NUMA - k);
	for (int i = 0; i < nl; i++) {
		sort_by_key(L[i].m, (size_t)L[i].n, key, scratch);
		memcpy(L[i].m, scratch, (size_t)L[i].n * sizeof(*scratch));
	}
	if ((r = hset_init(&seen, 64, false)) ||
	    (r = states_push(&cur, c->nodes)))
		goto out;

	for (int li = 0; li < nl; li++) {
		const struct dlist *l = &L[li];
		int U = s.urem[li], Bt = B < U ? B : U;

		if (scratch_n < cur.n) {
			np_nodemask *t = realloc(scratch, cur.n * sizeof(*t));
			if (!t) {
				r = -ENOMEM;
				goto out;
			}
			scratch = t;
			scratch_n = cur.n;
		}
		/* min(B, U) nodes first, then fewer (descending), then more */
		for (int k = 0; k <= NP_MAX_NUMA; k++)
			key[k] = (uint8_t)(k <= Bt ? Bt - k : k);
		sort_by_key(cur.v, cur.n, key, scratch);
		hset_clear(&seen);
		next.n = 0;
		for (size_t si = 0; si < cur.n; si++) {
			np_nodemask rm = scratch[si];
			int cnt = popc(rm), u = cnt < U ? cnt : U, minc = 1;

			if (s.err || s.work > s.budget) {
				r = s.err ? s.err : -EAGAIN;
				goto out;
			}
			if (inc->have && inc->cnt <= B) {
				int t = inc->cnt;
				if (u < t)
					continue;
				if (cnt == t) {
					/* only rm itself can still win */
					if (better_np(c, rm, inc) &&
					    survives(&s, rm, cnt, li))
						consider_np(c, inc, rm);
					continue;
				}
				if ((u == t || t == B) && !can_beat(&s, rm, t))
					continue;
				minc = t;
			}
			if (cnt <= B && survives(&s, rm, cnt, li)) {
				consider_np(c, inc, rm);
				continue;
			}
			s.work += (uint64_t)l->n;
			if (li == 0) {
				/* rm is all nodes: the children are the list's
				 * masks, distinct unless the input repeats one
				 * (which only costs time) */
				if (l->keep && (r = states_push(&next, rm)))
					goto out;
				for (int j = 0; j < l->n; j++)
					if ((r = states_push(&next, l->m[j])))
						goto out;
				continue;
			}
			if (li == nl - 1) {
				/* the children are final results */
				if (l->keep)
					consider_np(c, inc, rm);
				for (int j = 0; j < l->n; j++) {
					np_nodemask x = rm & l->m[j];
					if (popc(x) >= minc)
						consider_np(c, inc, x);
				}
				continue;
			}
			if (l->keep) {
				if ((r = hset_add(&seen, rm)) < 0)
					goto out;
				if (r > 0 && (r = states_push(&next, rm)))
					goto out;
			}
			for (int j = 0; j < l->n; j++) {
				np_nodemask x = rm & l->m[j];
				if (popc(x) < minc)
					continue; /* also drops 0 */
				if ((r = hset_add(&seen, x)) < 0)
					goto out;
				if (r > 0 && (r = states_push(&next, x)))
					goto out;
			}
		}
		struct states tmp = cur;
		cur = next;
		next = tmp;
	}
	for (size_t si = 0; si < cur.n; si++)
		consider_np(c, inc, cur.v[si]);
	r = s.err;
out:
	for (int i = 0; i < nl; i++)
		hset_free(&L[i].idx);
	free(s.urem);
	free(cur.v);
	free(next.v);
	free(scratch);
	hset_free(&seen);
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

static double transform_cost(const struct mctx *c, int nl)
{
	double size = (double)((uint64_t)1 << c->nnodes);

	return (double)(nl + 1) * c->nnodes * size / 2 + 2.0 * nl * size;
}

static bool tiny_transform_wins(const struct mctx *c, const struct dlist *L,
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

static int merge_nonpreferred(struct mctx *c, const struct view *v, int nv,
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
	c->B = 0;
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
		if (d.mincnt > c->B)
			c->B = d.mincnt;
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
		r = merge_search(c, L, nl, inc, UINT64_MAX);
		goto out;
	}
	if (path == MERGE_PATH_AUTO) {
		double tr = transform_cost(c, nl);
		if (tr > MERGE_TRANSFORM_TINY ||
		    !tiny_transform_wins(c, L, nl, tr)) {
			r = merge_search(c, L, nl, inc,
					 (uint64_t)(tr / 8) + 64);
			if (r != -EAGAIN)
				goto out;
			*inc = (struct cand){0};
		}
	}
	r = merge_transform(c, L, nl, inc);
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
	struct mctx *c;
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
	c->B = 0;
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
