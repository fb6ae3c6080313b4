/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: what the Topology Manager hint merge (merge.c) shares
 * with its two exact strategies for non-preferred results, the subset
 * transform (merge_transform.c) and the pruned search (merge_search.c),
 * and the hash set of merge_hset.c. See merge.c for the semantics.
 */
#ifndef NUMAPLACE_ENGINE_MERGE_INTERNAL_H
#define NUMAPLACE_ENGINE_MERGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/merge.h"

struct merge_query {
	np_nodemask nodes; /* default affinity */
	int nnodes;
	bool snn;
	bool closest;
	const uint16_t (*d)[NP_MAX_NUMA];
	int best_nonpref; /* bestNonPreferredAffinityCount (B below) */
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

/* Node count (np_popcount64: inlined, no libgcc call). */
static inline int popc(np_nodemask m)
{
	return np_popcount64(m);
}

static inline uint64_t dist_sum(const struct merge_query *c, np_nodemask m)
{
	uint64_t s = 0;

	for (np_nodemask a = m; a; a &= a - 1) {
		const uint16_t *row = c->d[__builtin_ctzll(a)];
		for (np_nodemask b = m; b; b &= b - 1)
			s += row[__builtin_ctzll(b)];
	}
	return s;
}

static inline uint64_t cand_dsum(const struct merge_query *c, struct cand *k)
{
	if (!k->dsum_ok) {
		k->dsum = dist_sum(c, k->m);
		k->dsum_ok = true;
	}
	return k->dsum;
}

static inline void cand_set(struct cand *k, np_nodemask m, int cnt,
			    bool dsum_ok, uint64_t dsum)
{
	k->have = true;
	k->m = m;
	k->cnt = cnt;
	k->dsum_ok = dsum_ok;
	k->dsum = dsum;
}

/* Same node count: is m (cnt nodes) strictly fitter than k? (Closest or
 * Narrowest.) *dsum receives m's distance sum when it was computed. */
static inline bool fitter_same_cnt(const struct merge_query *c, np_nodemask m,
				   struct cand *k, bool *dsum_ok,
				   uint64_t *dsum)
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
static inline bool better_np_ds(const struct merge_query *c, np_nodemask m,
				struct cand *k, bool *ok, uint64_t *ds)
{
	int a, b;

	if (!k->have)
		return true;
	a = np_score(popc(m), c->best_nonpref);
	b = np_score(k->cnt, c->best_nonpref);
	if (a != b)
		return a > b;
	return fitter_same_cnt(c, m, k, ok, ds);
}

static inline bool better_np(const struct merge_query *c, np_nodemask m,
			     struct cand *k)
{
	bool ok = false;
	uint64_t ds = 0;

	return better_np_ds(c, m, k, &ok, &ds);
}

/* Order 2: replace k by m if m is better. */
static inline void consider_np(const struct merge_query *c, struct cand *k,
			       np_nodemask m)
{
	bool ok = false;
	uint64_t ds = 0;

	if (better_np_ds(c, m, k, &ok, &ds))
		cand_set(k, m, popc(m), ok, ds);
}

/* ---- open-addressing hash of non-zero u64 keys (merge_hset.c) --------- */

struct hset {
	uint64_t *k;
	int32_t *v;
	size_t cap; /* power of two */
	size_t n;
	int shift;
	bool with_v;
};

int np_hset_init(struct hset *s, size_t want, bool with_v);
void np_hset_free(struct hset *s);
void np_hset_clear(struct hset *s);
/* Twice the slots, same keys (and values). */
int np_hset_grow(struct hset *s);

static inline size_t hslot(const struct hset *s, uint64_t key)
{
	return (size_t)((key * 0x9E3779B97F4A7C15ull) >> s->shift);
}

/* Slot of key, or of the empty slot where it would go. */
static inline size_t hset_probe(const struct hset *s, uint64_t key)
{
	size_t i = hslot(s, key), mask = s->cap - 1;

	while (s->k[i] && s->k[i] != key)
		i = (i + 1) & mask;
	return i;
}

/* Insert key; returns 1 if added, 0 if present, -ENOMEM. */
static inline int hset_add(struct hset *s, uint64_t key)
{
	size_t i;
	int r;

	if (2 * (s->n + 1) > s->cap && (r = np_hset_grow(s)))
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

/*
 * The best non-preferred result (order 2) over the lists L[0..nl-1], into
 * inc (empty on entry). Both return 0 or -ENOMEM; the search also -EAGAIN
 * when it visited more than `budget` masks, and -E2BIG past
 * NP_MERGE_MAX_STATES partial ANDs (inc is then meaningless).
 */
int np_merge_transform(const struct merge_query *c, const struct dlist *L, int nl,
		       struct cand *inc);
int np_merge_search(struct merge_query *c, struct dlist *L, int nl, struct cand *inc,
		    uint64_t budget);

#endif
