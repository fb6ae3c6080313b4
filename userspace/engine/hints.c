// SPDX-License-Identifier: Apache-2.0
/* Hint providers and the search for the best NUMA affinity. */
#include "numaplace/hints.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool sums_reach(const uint64_t (*v)[NP_MAX_NUMA], int nres,
		       const uint64_t *req, np_nodemask m)
{
	for (int r = 0; r < nres; r++) {
		uint64_t s = 0;
		NP_NODEMASK_FOREACH(n, m)
		s += v[r][n];
		if (s < req[r])
			return false;
	}
	return true;
}

static int sockets_of(const struct np_provider *p, np_nodemask m)
{
	uint64_t seen[4] = {0}; /* socket indexes < 256 */
	int k = 0;
	NP_NODEMASK_FOREACH(n, m)
	{
		int s = p->socket_of_node[n] & 255;
		if (!(seen[s / 64] >> (s % 64) & 1)) {
			seen[s / 64] |= (uint64_t)1 << (s % 64);
			k++;
		}
	}
	return k;
}

/*
 * The fewest nodes of p whose figures v[node id] add up to req: the
 * largest first. *enough is false when all the nodes together fall short
 * (the count is then all of them).
 */
static int largest_first(const struct np_provider *p, const uint64_t *v,
			 uint64_t req, bool *enough)
{
	uint64_t a[NP_MAX_NUMA], sum = 0;
	int k = 0, n = 0;

	NP_NODEMASK_FOREACH (x, p->nodes)
		a[n++] = v[x];
	/* selection of the largest first, n <= 64 */
	while (sum < req && k < n) {
		int best = k;
		for (int j = k + 1; j < n; j++)
			if (a[j] > a[best])
				best = j;
		uint64_t t = a[k];
		a[k] = a[best];
		a[best] = t;
		sum += a[k++];
	}
	*enough = sum >= req;
	return k;
}

/* Sockets exhaustively up to this many (2^N socket sets), beyond it the
 * largest first per resource. */
#define FEWEST_SOCKETS_EXACT_MAX 12

static int cmp_u64_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x < y) - (x > y);
}

/*
 * Width in sockets (align-by-socket): the fewest sockets whose nodes hold
 * the request. Adding nodes only adds capacity, so the best node set for a
 * set of sockets is all their nodes: the search is over socket sets (a
 * search over node sets is 2^64 steps at 64 nodes). Exact up to
 * FEWEST_SOCKETS_EXACT_MAX sockets; beyond, per resource the largest
 * sockets first and the widest of those (exact for one resource, a lower
 * bound for several). The request fits all nodes (checked before).
 */
static int fewest_sockets(const struct np_provider *p)
{
	np_nodemask of[NP_MAX_NUMA] = {0}; /* nodes of the i-th socket */
	int idx[256], ns = 0, best = 0;

	memset(idx, -1, sizeof(idx));
	NP_NODEMASK_FOREACH(n, p->nodes)
	{
		int sk = p->socket_of_node[n] & 255;
		if (idx[sk] < 0)
			idx[sk] = ns++;
		of[idx[sk]] |= NP_NODEMASK_BIT(n);
	}
	if (ns <= FEWEST_SOCKETS_EXACT_MAX) {
		best = ns;
		for (uint32_t t = 1; t < (1u << ns); t++) {
			np_nodemask m = 0;
			int k = __builtin_popcount(t);
			if (k >= best)
				continue;
			for (int i = 0; i < ns; i++)
				if (t >> i & 1)
					m |= of[i];
			if (sums_reach(p->total, p->nres, p->request, m))
				best = k;
		}
		return best;
	}
	for (int r = 0; r < p->nres; r++) {
		uint64_t cap[NP_MAX_NUMA] = {0}, sum = 0;
		int k = 0;
		for (int i = 0; i < ns; i++) {
			NP_NODEMASK_FOREACH(n, of[i])
			{
				cap[i] += p->total[r][n];
			}
		}
		qsort(cap, (size_t)ns, sizeof(cap[0]), cmp_u64_desc);
		while (k < ns && sum < p->request[r])
			sum += cap[k++];
		if (k > best)
			best = k;
	}
	return best ? best : 1;
}

/*
 * The smallest width of a node set whose capacity holds the request: the
 * k nodes with the largest capacity are the best k nodes for one resource;
 * for several resources the per-resource widths give a lower bound, which
 * is then checked upward against capacity on small machines exactly.
 */
int np_provider_finish(struct np_provider *p)
{
	int n = np_nodemask_count(p->nodes), w = 0;

	if (p->kind == NP_PROV_NONE)
		return 0;
	for (int r = 0; r < p->nres; r++) {
		bool enough;
		int k = largest_first(p, p->total[r], p->request[r], &enough);
		if (!enough)
			return -ENOSPC;
		if (k > w)
			w = k;
	}
	if (w == 0)
		w = 1;
	if (p->nres > 1 && n <= NP_HINTS_EXPLICIT_MAX_NODES) {
		/* exact joint width on small machines */
		for (;; w++) {
			bool found = false;
			for (np_nodemask m = p->nodes; m && !found;
			     m = (m - 1) & p->nodes)
				found = np_nodemask_count(m) == w &&
					sums_reach(p->total, p->nres,
						   p->request, m);
			if (found || w >= n)
				break;
		}
	}
	if (p->by_socket)
		w = fewest_sockets(p);
	p->min_width = w;
	return 0;
}

/* Every rule of np_provider_feasible() but the sums. */
static bool rules_allow(const struct np_provider *p, np_nodemask m)
{
	if (!m || (m & ~p->nodes) || (p->must & ~m))
		return false;
	if (p->kind == NP_PROV_MEMORY) {
		int width = np_nodemask_count(m);

		NP_NODEMASK_FOREACH(n, m)
		{
			if (!p->used[n])
				continue;
			if (width == 1 && np_nodemask_count(p->group[n]) > 1)
				return false;
			if (width > 1 && p->group[n] != m)
				return false;
		}
	}
	return true;
}

bool np_provider_feasible(const struct np_provider *p, np_nodemask m)
{
	if (p->kind == NP_PROV_NONE)
		return true;
	return rules_allow(p, m) && sums_reach(p->avail, p->nres, p->request, m);
}

bool np_provider_preferred(const struct np_provider *p, np_nodemask m)
{
	if (p->by_socket)
		return sockets_of(p, m) == p->min_width;
	return np_nodemask_count(m) == p->min_width;
}

static int hints_one_by_one(const struct np_provider *p, struct np_hint *hints)
{
	int k = 0;

	for (np_nodemask m = p->nodes; m; m = (m - 1) & p->nodes) {
		if (!np_provider_feasible(p, m))
			continue;
		hints[k].mask = m;
		hints[k].any = false;
		hints[k].preferred = np_provider_preferred(p, m);
		k++;
	}
	return k;
}

/*
 * Submasks in decreasing numeric order; order does not matter to the
 * merge, which is a total order.  Each submask's free amounts come from a
 * table filled once, a submask's sum being that of the submask without its
 * lowest node plus that node's (instead of a sum over its nodes for each).
 * Subset index i stands for the mask of nodes ids[j] for the bits j of i:
 * ids ascending, so i and its mask have the same order.
 */
int np_provider_hints(const struct np_provider *p, struct np_hint *hints)
{
	int ids[NP_MAX_NUMA], w = 0, nr = p->nres, k = 0;
	np_nodemask *mask;
	uint64_t *sum;
	size_t n;

	NP_NODEMASK_FOREACH(id, p->nodes)
	ids[w++] = id;
	if (p->kind == NP_PROV_NONE || w > NP_HINTS_EXPLICIT_MAX_NODES ||
	    nr < 1 || nr > NP_PROV_MAX_RES)
		return hints_one_by_one(p, hints);
	n = (size_t)1 << w;
	mask = malloc(sizeof(*mask) * n);
	sum = malloc(sizeof(*sum) * n * (size_t)nr);
	if (!mask || !sum) {
		free(mask);
		free(sum);
		return hints_one_by_one(p, hints);
	}
	mask[0] = 0;
	for (int r = 0; r < nr; r++)
		sum[r] = 0;
	for (size_t i = 1; i < n; i++) {
		size_t prev = i & (i - 1);
		int node = ids[__builtin_ctzll((unsigned long long)i)];

		mask[i] = mask[prev] | ((np_nodemask)1 << node);
		for (int r = 0; r < nr; r++)
			sum[i * (size_t)nr + (size_t)r] =
			    sum[prev * (size_t)nr + (size_t)r] +
			    p->avail[r][node];
	}
	for (size_t i = n - 1; i > 0; i--) {
		const uint64_t *s = &sum[i * (size_t)nr];
		bool reach = true;

		for (int r = 0; r < nr && reach; r++)
			reach = s[r] >= p->request[r];
		if (!reach || !rules_allow(p, mask[i]))
			continue;
		hints[k].mask = mask[i];
		hints[k].any = false;
		hints[k].preferred = np_provider_preferred(p, mask[i]);
		k++;
	}
	free(mask);
	free(sum);
	return k;
}

static int explicit_best(const struct np_hints_query *q,
			 struct np_merge_result *out)
{
	struct np_hint_list *lists = calloc((size_t)q->nprov + 1, sizeof(*lists));
	struct np_hint **bufs = calloc((size_t)q->nprov + 1, sizeof(*bufs));
	size_t cap = (size_t)1 << np_nodemask_count(q->nodes);
	struct np_merge_input in = {
		.policy = q->policy,
		.nodes = q->nodes,
		.distance = q->distance,
		.prefer_closest = q->prefer_closest,
		.nlists = q->nprov,
	};
	int r = 0;

	if (!lists || !bufs) {
		r = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < q->nprov; i++) {
		struct np_provider p = q->prov[i];
		if (p.kind == NP_PROV_NONE) {
			lists[i].kind = NP_HL_NO_PREFERENCE;
			continue;
		}
		if (np_provider_finish(&p) < 0) {
			lists[i].kind = NP_HL_IMPOSSIBLE;
			continue;
		}
		bufs[i] = malloc(sizeof(struct np_hint) * cap);
		if (!bufs[i]) {
			r = -ENOMEM;
			goto out;
		}
		lists[i].n = np_provider_hints(&p, bufs[i]);
		lists[i].hints = bufs[i];
		lists[i].kind = lists[i].n ? NP_HL_LIST : NP_HL_IMPOSSIBLE;
	}
	in.lists = lists;
	r = np_merge(&in, out);
out:
	for (int i = 0; bufs && i < q->nprov; i++)
		free(bufs[i]);
	free(bufs);
	free(lists);
	return r;
}

/* Sum of distances over ordered pairs (incl. i == j): the kubelet's average
 * distance times count^2, exact for comparing equal widths. */
static uint64_t dist_sum(const struct np_hints_query *q, np_nodemask m)
{
	uint64_t s = 0;
	if (!q->distance)
		return 0;
	NP_NODEMASK_FOREACH(i, m)
	{
		NP_NODEMASK_FOREACH(j, m)
		s += q->distance[i][j];
	}
	return s;
}

static bool all_ok(const struct np_hints_query *q, np_nodemask m,
		   bool preferred)
{
	for (int i = 0; i < q->nprov; i++) {
		const struct np_provider *p = &q->prov[i];
		if (p->kind == NP_PROV_NONE)
			continue;
		if (!np_provider_feasible(p, m))
			return false;
		if (preferred && !np_provider_preferred(p, m))
			return false;
	}
	return true;
}

/* Budget of node sets examined per width in the search. */
#define SEARCH_BUDGET 20000
/* Sums checked to skip node sets that cannot be feasible (at most). */
#define WALK_SUMS 8
/* Block sizes saturate here (above SEARCH_BUDGET, far below overflow). */
#define WALK_SAT ((uint64_t)1 << 32)

/*
 * The walk over the w-subsets of q->nodes in colex order (increasing mask
 * value), the first `limit` of them. A subset is feasible only if, for
 * every provider and resource, its nodes' free amounts add up to the
 * request (np_provider_feasible); those sums are checked on whole blocks
 * of subsets (those sharing their highest indexes) before any subset of
 * the block is: a block that cannot reach a request is skipped, but still
 * counted against the limit, so the subsets examined, and the answer, are
 * those of the one-by-one walk.
 */
struct walk {
	const struct np_hints_query *q;
	bool preferred;
	int n, w, nsum;
	int ids[NP_MAX_NUMA];
	uint64_t limit, rank; /* subsets examined so far (skipped included) */
	uint64_t req[WALK_SUMS];
	const uint64_t *val[WALK_SUMS]; /* free amount by node id */
	/* tops[(k * (n + 1) + i) * w + j]: sum of the j largest val[k] of
	 * the nodes with index < i */
	uint64_t *tops;
	np_nodemask best;
	uint64_t bestd;
};

/* The sums to check and their bounds (none without memory for them: the
 * walk is then one by one). */
static void walk_init(struct walk *k)
{
	const struct np_hints_query *q = k->q;
	int n = k->n, w = k->w;

	for (int i = 0; i < q->nprov; i++) {
		const struct np_provider *p = &q->prov[i];
		if (p->kind == NP_PROV_NONE)
			continue;
		for (int r = 0; r < p->nres && k->nsum < WALK_SUMS; r++) {
			if (!p->request[r])
				continue;
			k->req[k->nsum] = p->request[r];
			k->val[k->nsum++] = p->avail[r];
		}
	}
	if (!k->nsum)
		return;
	k->tops = malloc(sizeof(*k->tops) * (size_t)(k->nsum * (n + 1) * w));
	if (!k->tops) {
		k->nsum = 0;
		return;
	}
	for (int s = 0; s < k->nsum; s++) {
		uint64_t big[NP_MAX_NUMA]; /* the w - 1 largest so far, desc. */
		int nb = 0;
		for (int i = 0; i <= n; i++) {
			uint64_t *t = &k->tops[((size_t)s * (n + 1) + i) * w];
			t[0] = 0;
			for (int j = 1; j < w; j++)
				t[j] = t[j - 1] + (j <= nb ? big[j - 1] : 0);
			if (i == n || w < 2)
				continue;
			uint64_t x = k->val[s][k->ids[i]];
			int p = nb < w - 1 ? nb++ : nb;
			if (p == w - 1 && (p == 0 || big[p - 1] >= x))
				continue;
			for (p = p == w - 1 ? p - 1 : p; p > 0 && big[p - 1] < x;
			     p--)
				big[p] = big[p - 1];
			big[p] = x;
		}
	}
}

/* Examine one subset; true when the walk can stop (first hit wins). */
static bool walk_visit(struct walk *k, np_nodemask m)
{
	const struct np_hints_query *q = k->q;

	k->rank++;
	if (!all_ok(q, m, k->preferred))
		return false;
	uint64_t d = q->prefer_closest ? dist_sum(q, m) : 0;
	if (!k->best || d < k->bestd) {
		k->best = m;
		k->bestd = d;
	}
	return !q->prefer_closest;
}

/*
 * The subsets whose indexes above position p are fixed (nodes m, sums s):
 * index p takes p..hi-1 in turn, each value a block of C(v, p) subsets.
 * True when the walk is over.
 */
static bool walk_rec(struct walk *k, int p, int hi, np_nodemask m,
		     const uint64_t *s)
{
	uint64_t size = 1; /* C(v, p), saturated */

	for (int v = p; v < hi; v++) {
		uint64_t s2[WALK_SUMS];
		bool fits = true;

		if (v > p) {
			size = size * (uint64_t)v / (uint64_t)(v - p);
			if (size > WALK_SAT)
				size = WALK_SAT;
		}
		if (k->rank >= k->limit)
			return true;
		for (int j = 0; j < k->nsum; j++) {
			const uint64_t *t =
			    &k->tops[((size_t)j * (k->n + 1) + v) * k->w];
			s2[j] = s[j] + k->val[j][k->ids[v]];
			fits &= s2[j] + t[p] >= k->req[j];
		}
		if (!fits) {
			k->rank += size;
			continue;
		}
		m |= NP_NODEMASK_BIT(k->ids[v]);
		if (p == 0 ? walk_visit(k, m) : walk_rec(k, p - 1, v, m, s2))
			return true;
		m &= ~NP_NODEMASK_BIT(k->ids[v]);
	}
	return false;
}

/*
 * Fittest w-subset of q->nodes accepted by all_ok(): lowest distance sum
 * when prefer_closest, then lowest mask value, among the first
 * SEARCH_BUDGET subsets in colex order (increasing mask value), so without
 * prefer_closest the first hit wins. 0 when none.
 */
static np_nodemask fittest(const struct np_hints_query *q, int w,
			   bool preferred)
{
	struct walk k = {.q = q, .preferred = preferred, .w = w};
	uint64_t zero[WALK_SUMS] = {0}, all = 1;

	NP_NODEMASK_FOREACH(x, q->nodes)
	k.ids[k.n++] = x;
	if (w < 1 || w > k.n)
		return 0;
	for (int i = 1; i <= w && all < WALK_SAT; i++)
		all = all * (uint64_t)(k.n - w + i) / (uint64_t)i;
	k.limit = all < SEARCH_BUDGET ? all : SEARCH_BUDGET;
	walk_init(&k);
	walk_rec(&k, w - 1, k.n, 0, zero);
	free(k.tops);
	return k.best;
}

/* Providers whose sums greedy_cover keeps from step to step (the others
 * are summed at each candidate). */
#define GREEDY_KEEP 16

/* What provider p still misses on resource r when the set holds `have`,
 * and how much of it node x would cover. */
static uint64_t greedy_gain(const struct np_provider *p, int r, uint64_t have,
			    int x)
{
	uint64_t miss;

	if (have >= p->request[r])
		return 0;
	miss = p->request[r] - have;
	return p->avail[r][x] < miss ? p->avail[r][x] : miss;
}

/*
 * Fallback when the bounded search finds nothing: grow a node set from the
 * node with the most free capacity, adding the node that covers most of
 * what is still missing (closest first on ties) until every provider is
 * satisfied. Not the kubelet's exhaustive answer, but a near-narrowest one
 * in O(N^2) instead of O(2^N). The set's sums per provider and resource,
 * and each node's distance to the set, are kept as the set grows (a set
 * the memory groups never accept grows to every node).
 */
static np_nodemask greedy_cover(const struct np_hints_query *q)
{
	np_nodemask m = 0;
	uint64_t have[GREEDY_KEEP][NP_PROV_MAX_RES] = {{0}};
	uint64_t dist[NP_MAX_NUMA] = {0}; /* d(x, m) by node id */

	while (!all_ok(q, m, false) && m != q->nodes) {
		uint64_t best_gain = 0, best_d = UINT64_MAX;
		int best = -1;
		NP_NODEMASK_FOREACH(x, q->nodes & ~m)
		{
			uint64_t gain = 0;
			for (int i = 0; i < q->nprov; i++) {
				const struct np_provider *p = &q->prov[i];
				if (p->kind == NP_PROV_NONE)
					continue;
				for (int r = 0; r < p->nres; r++) {
					uint64_t h = 0;
					if (i < GREEDY_KEEP)
						h = have[i][r];
					else
						NP_NODEMASK_FOREACH(y, m)
					h += p->avail[r][y];
					gain += greedy_gain(p, r, h, x);
				}
			}
			if (best < 0 || gain > best_gain ||
			    (gain == best_gain && dist[x] < best_d)) {
				best = x;
				best_gain = gain;
				best_d = dist[x];
			}
		}
		if (best < 0)
			break;
		m |= NP_NODEMASK_BIT(best);
		for (int i = 0; i < q->nprov && i < GREEDY_KEEP; i++)
			for (int r = 0; r < q->prov[i].nres; r++)
				have[i][r] += q->prov[i].avail[r][best];
		if (q->distance)
			NP_NODEMASK_FOREACH(x, q->nodes)
		dist[x] += q->distance[x][best];
	}
	return all_ok(q, m, false) ? m : 0;
}

/* Narrowest width at which the provider alone is feasible: the k nodes with
 * the most free capacity are the best k for one resource. */
static int narrowest_feasible(const struct np_provider *p)
{
	int w = 0;
	if (p->kind == NP_PROV_NONE)
		return 0;
	for (int r = 0; r < p->nres; r++) {
		bool enough;
		int k = largest_first(p, p->avail[r], p->request[r], &enough);
		if (k > w)
			w = k;
	}
	return w;
}

int np_hints_best_search(const struct np_hints_query *q,
			 struct np_merge_result *out)
{
	struct np_hints_query qq = *q;
	struct np_provider *prov;
	int n = np_nodemask_count(q->nodes), target = 0, wmin = 1 << 30;
	bool any_active = false, impossible = false;
	np_nodemask m = 0;

	memset(out, 0, sizeof(*out));
	if (q->policy == NP_TM_NONE) {
		out->best.any = true;
		out->admit = true;
		return 0;
	}
	prov = malloc(sizeof(*prov) * (size_t)(q->nprov + 1));
	if (!prov)
		return -ENOMEM;
	memcpy(prov, q->prov, sizeof(*prov) * (size_t)q->nprov);
	qq.prov = prov;
	for (int i = 0; i < q->nprov; i++) {
		if (prov[i].kind == NP_PROV_NONE)
			continue;
		any_active = true;
		if (np_provider_finish(&prov[i]) < 0) {
			impossible = true;
			continue;
		}
		if (!prov[i].by_socket && prov[i].min_width < wmin)
			wmin = prov[i].min_width;
	}
	if (!any_active) {
		out->best.mask = q->nodes;
		out->best.preferred = true;
	} else if (!impossible) {
		/* Preferred: every provider preferred on one node set. Width
		 * providers fix the width; socket providers leave it open. */
		int lo = wmin == 1 << 30 ? 1 : wmin, hi = wmin == 1 << 30 ? n : wmin;
		if (q->policy == NP_TM_SINGLE_NUMA_NODE)
			hi = lo == 1 ? 1 : 0;
		for (int w = lo; w <= hi && !m; w++)
			m = fittest(&qq, w, true);
		if (m) {
			out->best.mask = m;
			out->best.preferred = true;
		} else if (q->policy == NP_TM_BEST_EFFORT) {
			/* Non-preferred (only best-effort admits it): aim for
			 * the widest of the providers' narrowest feasible
			 * widths, then wider. */
			for (int i = 0; i < q->nprov; i++) {
				int w = narrowest_feasible(&prov[i]);
				if (w > target)
					target = w;
			}
			for (int w = target ? target : 1;
			     w <= n && w <= (target ? target : 1) + 1 && !m; w++)
				m = fittest(&qq, w, false);
			if (!m)
				m = greedy_cover(&qq);
			out->best.mask = m ? m : q->nodes;
		} else {
			out->best.mask = q->nodes;
		}
	} else {
		out->best.mask = q->nodes;
	}
	if (q->policy == NP_TM_SINGLE_NUMA_NODE && out->best.mask == q->nodes) {
		out->best.any = true;
		out->best.mask = 0;
	}
	out->admit = q->policy == NP_TM_BEST_EFFORT || out->best.preferred;
	free(prov);
	return 0;
}

int np_hints_best(const struct np_hints_query *q, struct np_merge_result *out)
{
	if (np_nodemask_count(q->nodes) <= NP_HINTS_EXPLICIT_MAX_NODES)
		return explicit_best(q, out);
	return np_hints_best_search(q, out);
}
