// SPDX-License-Identifier: Apache-2.0
/*
 * The kubelet's takeByTopologyNUMADistributed: the request split evenly
 * over the fewest NUMA nodes that balance best (see take_kubelet.c for the
 * accumulator and the resize conventions).
 */
#include "engine/take_kubelet_internal.h"
#include "numaplace/error.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Population standard deviation rounded to 3 decimals, mean rounded too:
 * the kubelet's balance score, reproduced so that ties break alike. */
static double balance_score(const int *xs, int n)
{
	double sum = 0, m, s = 0;
	for (int i = 0; i < n; i++)
		sum += xs[i];
	m = round(sum / n * 1000) / 1000;
	for (int i = 0; i < n; i++)
		s += (xs[i] - m) * (xs[i] - m);
	return round(sqrt(s / n) * 1000) / 1000;
}

/* Next k-combination of positions 0..n-1 in lexicographic order. */
static bool next_combo(int *c, int k, int n)
{
	int i = k - 1;
	while (i >= 0 && c[i] == n - k + i)
		i--;
	if (i < 0)
		return false;
	c[i]++;
	for (int j = i + 1; j < k; j++)
		c[j] = c[j - 1] + 1;
	return true;
}

struct dist_ctx {
	const struct acc *a;
	int nn;		  /* nodes with usable CPUs, in sorted order */
	int *node;	  /* node index per position */
	int *usable;	  /* available + already ours, per position */
	int *held;	  /* already ours, per position */
	np_nodemask must; /* positions that hold kept CPUs (as a bit set) */
	int navail;	  /* positions with available CPUs */
	int count, g;
};

/* A node's share: the distribution, or what it already holds rounded up to
 * whole groups when that is more. */
static int node_share(const struct dist_ctx *d, int p, int distribution)
{
	int held = (d->held[p] + d->g - 1) / d->g * d->g;
	return held > distribution ? held : distribution;
}

/*
 * Score one combination: every node gets `distribution` CPUs (kept CPUs
 * count towards it), the remainder goes round-robin in groups of g over the
 * best subset of the nodes that still have g CPUs. Returns the balance or
 * INFINITY when the combination cannot work; fills *rem_best (positions).
 */
static double score_combo(const struct dist_ctx *d, const int *combo, int k,
			  int *after, int *rem_best, int *nrem_best)
{
	int distribution = d->count / k / d->g * d->g;
	int remainder = d->count - distribution * k, total = 0, groups = 0;
	int rc[NP_MAX_NUMA], nrc = 0, sub[NP_MAX_NUMA], *tmp;
	double best = INFINITY;
	np_nodemask in = 0;

	for (int i = 0; i < k; i++) {
		int p = combo[i];
		in |= NP_NODEMASK_BIT(p);
		total += d->usable[p];
		groups += d->usable[p] / d->g;
		if (d->usable[p] < distribution)
			return INFINITY;
	}
	if ((d->must & ~in) || total < d->count || groups * d->g < d->count)
		return INFINITY;
	for (int p = 0; p < d->nn; p++)
		after[p] = d->usable[p] - ((in >> p) & 1 ? distribution : 0);
	/* A node that already holds more than its share keeps it: the
	 * excess comes out of the remainder first. */
	for (int i = 0; i < k; i++) {
		int p = combo[i],
		    excess = node_share(d, p, distribution) - distribution;
		/* Held CPUs rounded up to whole groups must fit the node. */
		if (excess > remainder ||
		    node_share(d, p, distribution) > d->usable[p])
			return INFINITY;
		remainder -= excess;
		after[p] -= excess;
	}
	if (remainder == 0) {
		*nrem_best = 0;
		return balance_score(after, d->nn);
	}
	for (int i = 0; i < k; i++)
		if (after[combo[i]] >= d->g)
			rc[nrc++] = combo[i];
	tmp = malloc(sizeof(int) * (size_t)d->nn);
	if (!tmp)
		return INFINITY;
	for (int sk = nrc; sk >= 1; sk--) {
		for (int i = 0; i < sk; i++)
			sub[i] = i;
		do {
			int left = remainder, sum = 0;
			bool progress = true;
			double b;
			for (int i = 0; i < sk; i++)
				sum += after[rc[sub[i]]];
			if (sum < remainder)
				continue;
			memcpy(tmp, after, sizeof(int) * (size_t)d->nn);
			while (left > 0 && progress) {
				progress = false;
				for (int i = 0; i < sk && left > 0; i++) {
					int p = rc[sub[i]];
					if (tmp[p] < d->g)
						continue;
					tmp[p] -= d->g;
					left -= d->g;
					progress = true;
				}
			}
			if (left > 0)
				continue;
			b = balance_score(tmp, d->nn);
			if (b < best) {
				best = b;
				*nrem_best = sk;
				for (int i = 0; i < sk; i++)
					rem_best[i] = rc[sub[i]];
			}
		} while (next_combo(sub, sk, nrc));
	}
	free(tmp);
	return best;
}

/*
 * Take CPUs in NUMA node index node until we hold want there. A resize
 * takes with the packed resize rule, the CPUs we already hold on the node
 * passed as current and baseline (a core they and the free CPUs cover
 * counts as full, cores holding them sort first); a fresh take is a plain
 * packed take over the node's available CPUs.
 */
static int take_in_node(struct acc *a, int node, int want, bool spread,
			char *err, size_t errlen)
{
	const np_cpuset *cpus = &a->t->numa[node].u.cpus;
	np_cpuset nodeset, kept, got;
	int r;

	np_cpuset_and(&nodeset, &a->details, cpus);
	np_cpuset_and(&kept, &a->result, cpus);
	if (a->held_first)
		np_cpuset_or(&nodeset, &nodeset, &kept);
	else
		want -= np_cpuset_count(&kept);
	r = np_kubelet_take_packed(a->t, &nodeset,
				   a->held_first ? &kept : NULL, want, spread,
				   false, &got, err, errlen);
	if (r)
		return r;
	acc_take(a, &got);
	return 0;
}

/*
 * Split count over the listed nodes as evenly as their free CPUs allow
 * (water-filling in groups of g): a node that cannot take its fair share
 * gives all it has and the others share the rest; ties go to the nodes in
 * sorted order.
 */
static int take_waterfill(struct acc *a, const struct dist_ctx *d, bool spread,
			  char *err, size_t errlen)
{
	int share[NP_MAX_NUMA], left = d->count / d->g, nactive = d->nn;
	bool fixed[NP_MAX_NUMA] = {0}, changed = true;

	if (d->count % d->g || d->nn > NP_MAX_NUMA)
		return -ENOSPC;
	while (changed && nactive > 0) {
		changed = false;
		for (int p = 0; p < d->nn; p++) {
			int cap = d->usable[p] / d->g;
			if (fixed[p] || cap >= left / nactive)
				continue;
			share[p] = cap;
			fixed[p] = true;
			left -= cap;
			nactive--;
			changed = true;
		}
	}
	for (int p = 0, extra = nactive ? left % nactive : 0; p < d->nn; p++)
		if (!fixed[p]) {
			share[p] = left / nactive + (extra > 0);
			extra -= extra > 0;
		}
	for (int p = 0; p < d->nn; p++) {
		int r, want = share[p] * d->g;
		if (want < d->held[p] || want > d->usable[p])
			return -ENOSPC;
		if ((r = take_in_node(a, d->node[p], want, spread, err,
				      errlen)))
			return r;
	}
	return a->need == 0 ? 0 : -ENOSPC;
}

/*
 * The nodes of a split: the sorted nodes with available CPUs, then those
 * that only hold kept CPUs, with their counts; *after gets room for
 * score_combo(). 0 or -ENOMEM (d->node is set either way).
 */
static int dist_init(struct dist_ctx *d, struct acc *a, int count, int g,
		     int **after)
{
	const struct np_topology *t = a->t;
	struct ulist l = {0};
	int r = np_kubelet_sorted_units(a, U_NUMA, &l);

	/* Nodes that only hold kept CPUs still take part in the split. */
	for (int i = 0; !r && i < t->nnuma; i++) {
		bool listed = false;
		for (int j = 0; j < l.n; j++)
			listed |= l.idx[j] == i;
		if (!listed &&
		    np_cpuset_intersects(&t->numa[i].u.cpus, &a->result))
			r = ulist_push(&l, i);
	}
	d->a = a;
	d->nn = l.n;
	d->node = l.idx;
	d->count = count;
	d->g = g;
	if (r)
		return r;
	d->usable = calloc((size_t)l.n + 1, sizeof(int));
	d->held = calloc((size_t)l.n + 1, sizeof(int));
	*after = calloc((size_t)l.n + 1, sizeof(int));
	if (!d->usable || !d->held || !*after)
		return -ENOMEM;
	for (int p = 0; p < l.n; p++) {
		const np_cpuset *nc = &t->numa[l.idx[p]].u.cpus;
		d->held[p] = np_cpuset_count_and(nc, &a->result);
		d->usable[p] =
		    np_cpuset_count_and(nc, &a->details) + d->held[p];
		if (d->held[p])
			d->must |= NP_NODEMASK_BIT(p);
		if (np_cpuset_count_and(nc, &a->details))
			d->navail++;
	}
	return 0;
}

/* The numbers of nodes a split may use, as the kubelet bounds them (and at
 * least every node that holds kept CPUs). */
static void split_range(const struct dist_ctx *d, const struct np_topology *t,
			int *kmin, int *kmax)
{
	int groups_total = (t->ncpus - 1) / d->g + 1;
	int per_numa = (groups_total - 1) / t->nnuma + 1;
	int needed = (d->count - 1) / d->g + 1;
	int must = np_nodemask_count(d->must);

	*kmin = (needed - 1) / per_numa + 1;
	if (*kmin < must)
		*kmin = must;
	*kmax = needed < d->navail ? needed : d->navail;
	if (*kmax < must)
		*kmax = must;
	if (*kmax > d->nn)
		*kmax = d->nn;
}

/*
 * The best split over k nodes (lowest balance score, the first such in
 * combination order): its positions in best[0..k-1], the positions that
 * take the remainder in rem[0..*nrem-1]. False when no k nodes can take it.
 */
static bool best_split(const struct dist_ctx *d, int k, int *after, int *best,
		       int *rem, int *nrem)
{
	int combo[NP_MAX_NUMA], r[NP_MAX_NUMA], nr = 0;
	double score = INFINITY;
	bool found = false;

	for (int i = 0; i < k; i++)
		combo[i] = i;
	do {
		double b;
		if (score == 0)
			break;
		b = score_combo(d, combo, k, after, r, &nr);
		if (b < score) {
			score = b;
			found = true;
			memcpy(best, combo, sizeof(int) * (size_t)k);
			memcpy(rem, r, sizeof(int) * (size_t)nr);
			*nrem = nr;
		}
	} while (next_combo(combo, k, d->nn));
	return found;
}

/* Take a split: every node of combo its share, then the remainder in
 * groups of g round-robin over the nodes of rem. */
static int take_split(struct acc *a, const struct dist_ctx *d, const int *combo,
		      int k, const int *rem, int nrem, bool spread, char *err,
		      size_t errlen)
{
	const struct np_topology *t = a->t;
	int distribution = d->count / k / d->g * d->g, r;

	for (int i = 0; i < k; i++) {
		int p = combo[i];
		if ((r = take_in_node(a, d->node[p],
				      node_share(d, p, distribution), spread,
				      err, errlen)))
			return r;
	}
	for (int left = a->need; left > 0;) {
		bool progress = false;
		for (int i = 0; i < nrem && left > 0; i++) {
			const np_cpuset *nc = &t->numa[d->node[rem[i]]].u.cpus;
			if (np_cpuset_count_and(&a->details, nc) < d->g)
				continue;
			/* g more CPUs on the node: a resize completes the
			 * cores of the CPUs it holds there first. */
			r = take_in_node(a, d->node[rem[i]],
					 np_cpuset_count_and(&a->result, nc) +
					     d->g,
					 spread, err, errlen);
			if (r)
				return r;
			left -= d->g;
			progress = true;
		}
		if (!progress)
			break;
	}
	if (a->need != 0) {
		NP_ERR("accounting error: %d cpus left to allocate", a->need);
		return -EIO;
	}
	return 0;
}

int np_kubelet_take_distributed(const struct np_topology *t,
				const np_cpuset *avail, const np_cpuset *keep,
				int count, int g, bool spread, bool waterfill,
				np_cpuset *out, char *err, size_t errlen)
{
	struct acc a;
	struct dist_ctx d = {0};
	int combo[NP_MAX_NUMA], rem[NP_MAX_NUMA], nrem = 0, *after = NULL;
	int r, kmin, kmax;

	if (g < 1)
		g = 1;
	if (count % g != 0)
		return np_kubelet_take_packed(t, avail, keep, count, spread,
					      false, out, err, errlen);
	np_kubelet_acc_init(&a, t, avail, keep, count);
	if (a.need <= 0) {
		*out = a.result;
		return 0;
	}
	if (a.need > np_cpuset_count(&a.details))
		return np_kubelet_take_packed(t, avail, keep, count, spread,
					      false, out, err, errlen);
	if ((r = dist_init(&d, &a, count, g, &after)))
		goto out;
	split_range(&d, t, &kmin, &kmax);
	for (int k = kmin; k <= kmax; k++) {
		if (!best_split(&d, k, after, combo, rem, &nrem))
			continue;
		r = take_split(&a, &d, combo, k, rem, nrem, spread, err,
			       errlen);
		if (r == 0)
			*out = a.result;
		goto out;
	}
	/* No even split possible: fill the aligned nodes, or pack. */
	if (waterfill) {
		struct acc saved = a;
		if (take_waterfill(&a, &d, spread, err, errlen) == 0) {
			*out = a.result;
			r = 0;
			goto out;
		}
		a = saved;
	}
	r = np_kubelet_take_packed(t, avail, keep, count, spread, false, out,
				   err, errlen);
out:
	free(d.node);
	free(d.usable);
	free(d.held);
	free(after);
	return r;
}
