// SPDX-License-Identifier: Apache-2.0
/*
 * Hint merge, step 2b: the best non-preferred result by a pruned search
 * over the reachable partial ANDs (see merge.c).
 */
#include "engine/merge_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
	const struct merge_query *c;
	struct merge_query *cm;
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
		int e = np_hset_init(&l->idx, (size_t)l->n, false);
		for (int i = 0; !e && i < l->n; i++)
			e = hset_add(&l->idx, l->m[i]) < 0 ? -ENOMEM : 0;
		if (e) {
			np_hset_free(&l->idx);
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

static void build_nbr(struct merge_query *c)
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
	const struct merge_query *c = s->c;
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
	if (st->n == NP_MERGE_MAX_STATES)
		return -E2BIG; /* the request is too large to merge */
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
 * Sorts the lists (see above), fills s->urem, sorts every list's masks by
 * node count, descending, and allocates the scratch array (at least the
 * longest list plus one). 0 or -ENOMEM.
 */
static int search_prepare(struct search *s, np_nodemask **scratch,
			  size_t *scratch_n)
{
	struct dlist *L = s->L;
	int nl = s->nl;
	size_t maxl = 0;
	uint8_t key[NP_MAX_NUMA + 1];

	qsort(L, (size_t)nl, sizeof(*L), dlist_cmp);
	s->urem = malloc(((size_t)nl + 1) * sizeof(*s->urem));
	if (!s->urem)
		return -ENOMEM;
	s->urem[nl] = s->c->nnodes;
	for (int i = nl - 1; i >= 0; i--)
		s->urem[i] =
		    L[i].maxcnt < s->urem[i + 1] ? L[i].maxcnt : s->urem[i + 1];
	for (int i = 0; i < nl; i++)
		if ((size_t)L[i].n > maxl)
			maxl = (size_t)L[i].n;
	*scratch = malloc((maxl + 1) * sizeof(**scratch));
	if (!*scratch)
		return -ENOMEM;
	*scratch_n = maxl + 1;
	for (int k = 0; k <= NP_MAX_NUMA; k++)
		key[k] = (uint8_t)(NP_MAX_NUMA - k);
	for (int i = 0; i < nl; i++) {
		sort_by_key(L[i].m, (size_t)L[i].n, key, *scratch);
		memcpy(L[i].m, *scratch, (size_t)L[i].n * sizeof(**scratch));
	}
	return 0;
}

/*
 * The pruning rules (see above) for state rm before list li: true when rm
 * is settled (dropped, or offered to inc) and needs no expansion;
 * otherwise *minc is the fewest nodes a child must keep.
 */
static bool settled(struct search *s, int li, np_nodemask rm, int *minc)
{
	const struct merge_query *c = s->c;
	struct cand *inc = s->inc;
	int B = c->best_nonpref, U = s->urem[li];
	int cnt = popc(rm), u = cnt < U ? cnt : U;

	*minc = 1;
	if (inc->have && inc->cnt <= B) {
		int t = inc->cnt;
		if (u < t)
			return true;
		if (cnt == t) {
			/* only rm itself can still win */
			if (better_np(c, rm, inc) && survives(s, rm, cnt, li))
				consider_np(c, inc, rm);
			return true;
		}
		if ((u == t || t == B) && !can_beat(s, rm, t))
			return true;
		*minc = t;
	}
	if (cnt <= B && survives(s, rm, cnt, li)) {
		consider_np(c, inc, rm);
		return true;
	}
	return false;
}

/*
 * The children of state rm by list li with at least minc nodes: the next
 * layer's distinct states, or final results offered to inc after the last
 * list. 0 or -ENOMEM.
 */
static int expand(struct search *s, int li, np_nodemask rm, int minc,
		  struct hset *seen, struct states *next)
{
	const struct merge_query *c = s->c;
	const struct dlist *l = &s->L[li];
	int r;

	s->work += (uint64_t)l->n;
	if (li == 0) {
		/* rm is all nodes: the children are the list's masks,
		 * distinct unless the input repeats one (which only costs
		 * time) */
		if (l->keep && (r = states_push(next, rm)))
			return r;
		for (int j = 0; j < l->n; j++)
			if ((r = states_push(next, l->m[j])))
				return r;
		return 0;
	}
	if (li == s->nl - 1) {
		/* the children are final results */
		if (l->keep)
			consider_np(c, s->inc, rm);
		for (int j = 0; j < l->n; j++) {
			np_nodemask x = rm & l->m[j];
			if (popc(x) >= minc)
				consider_np(c, s->inc, x);
		}
		return 0;
	}
	if (l->keep) {
		if ((r = hset_add(seen, rm)) < 0)
			return r;
		if (r > 0 && (r = states_push(next, rm)))
			return r;
	}
	for (int j = 0; j < l->n; j++) {
		np_nodemask x = rm & l->m[j];
		if (popc(x) < minc)
			continue; /* also drops 0 */
		if ((r = hset_add(seen, x)) < 0)
			return r;
		if (r > 0 && (r = states_push(next, x)))
			return r;
	}
	return 0;
}

int np_merge_search(struct merge_query *cm, struct dlist *L, int nl, struct cand *inc,
		    uint64_t budget)
{
	const struct merge_query *c = cm;
	struct search s = {c, cm, L, nl, NULL, inc, 0, budget, 0};
	struct states cur = {0}, next = {0};
	np_nodemask *scratch = NULL;
	size_t scratch_n = 0;
	struct hset seen = {0};
	uint8_t key[NP_MAX_NUMA + 1];
	int B = c->best_nonpref, r;

	if ((r = search_prepare(&s, &scratch, &scratch_n)) ||
	    (r = np_hset_init(&seen, 64, false)) ||
	    (r = states_push(&cur, c->nodes)))
		goto out;

	for (int li = 0; li < nl; li++) {
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
		np_hset_clear(&seen);
		next.n = 0;
		for (size_t si = 0; si < cur.n; si++) {
			np_nodemask rm = scratch[si];
			int minc;

			if (s.err || s.work > s.budget) {
				r = s.err ? s.err : -EAGAIN;
				goto out;
			}
			if (settled(&s, li, rm, &minc))
				continue;
			if ((r = expand(&s, li, rm, minc, &seen, &next)))
				goto out;
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
		np_hset_free(&L[i].idx);
	free(s.urem);
	free(cur.v);
	free(next.v);
	free(scratch);
	np_hset_free(&seen);
	return r;
}
