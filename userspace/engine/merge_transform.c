// SPDX-License-Identifier: Apache-2.0
/*
 * Hint merge, step 2a: the best non-preferred result by the superset-sum
 * transform over the 2^n subsets of the machine's nodes (see merge.c).
 */
#include "engine/merge_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

int np_merge_transform(const struct merge_query *c, const struct dlist *L, int nl,
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
		int s = np_score(k, c->best_nonpref);
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
