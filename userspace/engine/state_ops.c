// SPDX-License-Identifier: Apache-2.0
/*
 * The state's array of allocations: find, insert, release, copy and free,
 * and the name index that makes np_state_find a hash lookup, not a scan
 * of every workload (every admission's duplicate check, every release,
 * resize and spec event; at 10,000 workloads the scan was most of an
 * admission's time).
 *
 * The functions that change st->w keep the index: an admission or an
 * insert at the end adds one name, anything else that moves entries
 * (release, insert in the middle, load, copy) rebuilds it, with the cache
 * (np_state_refresh). The index answers only while it was made for this
 * very array (ix_w == w, ix_n == nworkloads); else, and when memory ran
 * out for it, np_state_find scans as before: slower, never wrong. A hit
 * is checked against the entry's name.
 */
#include "admit_internal.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/strmap.h"
#include "numaplace/take.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Positions in the index are those of the array when it was built, plus
 * one past the end for each name added since (q); the array has lost
 * the entries at the positions in gone since (sorted). An entry's place
 * now is q less the removed positions below it. A rebuild empties gone
 * when it grows past GONE_MAX: a release costs a sorted insert, and one
 * rebuild (all names hashed again) per GONE_MAX releases.
 */
#define GONE_MAX 256

struct np_state_ix {
	struct np_strmap map; /* name -> q */
	struct np_workload_alloc *const *w; /* the array it was made for */
	int n;				   /* and its length */
	int gone[GONE_MAX];
	int ngone;
};

static bool index_valid(const struct np_node_state *st)
{
	return st->ix && st->ix->w == st->w && st->ix->n == st->nworkloads;
}

static int scan(const struct np_node_state *st, const char *name)
{
	for (int i = 0; i < st->nworkloads; i++)
		if (!strcmp(st->w[i]->req.name, name))
			return i;
	return -1;
}

/* Removed positions below q. */
static int gone_below(const struct np_state_ix *x, int q)
{
	int lo = 0, hi = x->ngone;

	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (x->gone[mid] < q)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The q of the entry now at p. */
static int q_of(const struct np_state_ix *x, int p)
{
	int q = p;

	for (int k = 0; k < x->ngone && x->gone[k] <= q; k++)
		q++;
	return q;
}

bool np_state_indexed(const struct np_node_state *st)
{
	return index_valid(st);
}

/* The index's place for name (in use), or -1. */
static int lookup(const struct np_state_ix *x, const char *name)
{
	long q;

	if (!np_strmap_get(&x->map, name, &q))
		return -1;
	return (int)q - gone_below(x, (int)q);
}

int np_state_index_lookup(const struct np_node_state *st, const char *name)
{
	return index_valid(st) ? lookup(st->ix, name) : -1;
}

/*
 * A name not in a usable index is not admitted: no scan then. This holds
 * because nothing renames an entry in place or puts another array of the
 * same length at the same address behind the index's back: whatever
 * changes entries otherwise ends in np_state_refresh, which rebuilds it
 * (test_state_ops checks the functions here against a scan).
 */
int np_state_find(const struct np_node_state *st, const char *name)
{
	int p;

	if (!index_valid(st))
		return scan(st, name);
	p = lookup(st->ix, name);
	if (p < 0)
		return -1;
	if (p < st->nworkloads && !strcmp(st->w[p]->req.name, name))
		return p;
	return scan(st, name);
}

void np_state_index_free(struct np_node_state *st)
{
	if (st->ix)
		np_strmap_free(&st->ix->map);
	free(st->ix);
	st->ix = NULL;
}

void np_state_index_build(struct np_node_state *st)
{
	struct np_state_ix *x = st->ix;

	if (!x && !(x = calloc(1, sizeof(*x))))
		return; /* np_state_find scans */
	np_strmap_free(&x->map);
	x->ngone = 0;
	x->w = NULL;
	st->ix = x;
	/* last to first: of two entries of one name (never in a checked
	 * state) the first is kept, as the scan finds it */
	for (int i = st->nworkloads - 1; i >= 0; i--)
		if (np_strmap_put(&x->map, st->w[i]->req.name, i)) {
			np_state_index_free(st);
			return;
		}
	x->w = st->w;
	x->n = st->nworkloads;
}

void np_state_index_appended(struct np_node_state *st, bool indexed)
{
	struct np_state_ix *x = st->ix;
	int i = st->nworkloads - 1;

	if (!x || !indexed || x->n != i) {
		np_state_index_build(st);
		return;
	}
	if (!np_strmap_get(&x->map, st->w[i]->req.name, NULL) &&
	    np_strmap_put(&x->map, st->w[i]->req.name, i + x->ngone)) {
		np_state_index_free(st);
		return;
	}
	x->w = st->w;
	x->n = st->nworkloads;
}

void np_state_index_moved(struct np_node_state *st, bool indexed)
{
	if (st->ix && indexed)
		st->ix->w = st->w;
}

/* The entry that was at p, named name, left the array (the ones after
 * it moved down one). */
static void index_removed(struct np_node_state *st, int p, const char *name)
{
	struct np_state_ix *x = st->ix;
	int q, k;

	if (!x || x->w != st->w || x->n != st->nworkloads + 1 ||
	    x->ngone == GONE_MAX) {
		np_state_index_build(st);
		return;
	}
	q = q_of(x, p);
	np_strmap_del(&x->map, name);
	k = gone_below(x, q);
	memmove(&x->gone[k + 1], &x->gone[k],
		sizeof(*x->gone) * (size_t)(x->ngone - k));
	x->gone[k] = q;
	x->ngone++;
	x->n = st->nworkloads;
}

void np_state_free(struct np_node_state *st)
{
	for (int i = 0; i < st->nworkloads; i++) {
		np_workload_alloc_free(st->w[i]);
		free(st->w[i]);
	}
	free(st->w);
	free(st->cache.dev_taken);
	np_state_index_free(st);
	st->w = NULL;
	st->cache.dev_taken = NULL;
	st->nworkloads = st->cap = 0;
}

int np_state_copy(struct np_node_state *dst, const struct np_node_state *src)
{
	/* on a failure dst is an empty state (np_state_free is safe on it) */
	*dst = *src;
	dst->w = NULL;
	dst->nworkloads = dst->cap = 0;
	dst->ix = NULL; /* src's, not to be shared */
	dst->cache.dev_taken =
		calloc((size_t)src->cache.ndevices + 1, sizeof(bool));
	if (!dst->cache.dev_taken)
		return -ENOMEM;
	memcpy(dst->cache.dev_taken, src->cache.dev_taken,
	       sizeof(bool) * (size_t)src->cache.ndevices);
	if (src->nworkloads) {
		dst->w = malloc(sizeof(*dst->w) * (size_t)src->nworkloads);
		if (!dst->w) {
			np_state_free(dst);
			return -ENOMEM;
		}
		dst->cap = src->nworkloads;
		for (int i = 0; i < src->nworkloads; i++) {
			int r = -ENOMEM;

			if (!(dst->w[i] = malloc(sizeof(*dst->w[i]))) ||
			    (r = np_workload_alloc_copy(dst->w[i], src->w[i]))) {
				/* a failed copy leaves nothing of its own */
				free(dst->w[i]);
				dst->nworkloads = i;
				np_state_free(dst);
				return r;
			}
		}
	}
	dst->nworkloads = src->nworkloads;
	np_state_index_build(dst);
	return 0;
}

/* a's containers add nothing to the state's cache (np_state_cache_add:
 * no exclusive CPUs, no memory charged, no device): a shared workload's */
static bool adds_to_cache(const struct np_workload_alloc *a)
{
	for (int k = 0; k < a->ncontainers; k++)
		if (a->c[k].exclusive || a->c[k].charge || a->c[k].ndev)
			return true;
	return a->pod_rest != NULL;
}

int np_release_keep(struct np_node_state *st, int i,
		    struct np_workload_alloc *out)
{
	if (i < 0 || i >= st->nworkloads)
		return -ENOENT;
	/* The cache's update below fails only for want of dev_taken (when
	 * it recomputes): have it before anything is moved, so that a
	 * failure changes nothing. */
	if (!st->cache.dev_taken &&
	    !(st->cache.dev_taken =
		  calloc((size_t)st->topo->ndevices + 1, sizeof(bool))))
		return -ENOMEM;
	*out = *st->w[i];
	free(st->w[i]);
	memmove(&st->w[i], &st->w[i + 1],
		sizeof(*st->w) * (size_t)(st->nworkloads - i - 1));
	st->nworkloads--;
	index_removed(st, i, out->req.name);
	np_state_cache_mark(st, out, -1);
	/* the cache is the same without a workload that added nothing to
	 * it; else it loses what the workload held (O(its containers) where
	 * a refresh is O(workloads)) */
	return adds_to_cache(out) ? np_state_cache_sub(st, out) : 0;
}

int np_release(struct np_node_state *st, const char *name)
{
	struct np_workload_alloc a;
	int r = np_release_keep(st, np_state_find(st, name), &a);

	if (r == -ENOENT)
		return r;
	np_workload_alloc_free(&a);
	return r;
}

int np_state_insert(struct np_node_state *st, int i,
		    const struct np_workload_alloc *a)
{
	bool indexed = index_valid(st);
	struct np_workload_alloc *p;

	if (i < 0 || i > st->nworkloads)
		return -EINVAL;
	if (st->nworkloads == st->cap) {
		int cap = st->cap ? 2 * st->cap : 8;
		struct np_workload_alloc **g =
			realloc(st->w, sizeof(*g) * (size_t)cap);
		if (!g)
			return -ENOMEM;
		st->w = g;
		st->cap = cap;
	}
	if (!(p = malloc(sizeof(*p))))
		return -ENOMEM;
	*p = *a;
	memmove(&st->w[i + 1], &st->w[i],
		sizeof(*st->w) * (size_t)(st->nworkloads - i));
	st->w[i] = p;
	st->nworkloads++;
	if (i == st->nworkloads - 1)
		np_state_index_appended(st, indexed);
	else
		np_state_index_build(st); /* the ones after i moved */
	np_state_cache_add_workload(st, st->w[i]);
	return 0;
}

/* ---- a state made, its allocation records ---- */

int np_state_init(struct np_node_state *st, const struct np_topology *t,
		  const struct np_node_policy *p, char *err, size_t errlen)
{
	return np_state_init_flags(st, t, p, 0, err, errlen);
}

int np_state_init_flags(struct np_node_state *st, const struct np_topology *t,
			const struct np_node_policy *p, unsigned flags,
			char *err, size_t errlen)
{
	int r;

	memset(st, 0, sizeof(*st));
	if ((r = np_policy_validate(t, p, err, errlen)))
		return r;
	st->topo = t;
	st->policy = *p;
	if (p->reserved_explicit) {
		if (!np_cpuset_subset(&p->reserved_cpus, &t->online)) {
			_cleanup_free_ char *s = NULL;
			np_cpuset bad;

			np_cpuset_andnot(&bad, &p->reserved_cpus, &t->online);
			s = np_cpuset_str(&bad);
			NP_ERR("policy.reserved_cpus: CPUs %s do not exist or "
			       "are offline",
			       s ? s : "?");
			return -EINVAL;
		}
		st->reserved = p->reserved_cpus;
	} else if (p->reserved_count > 0) {
		struct np_take_req q = {.topo = t, .count = p->reserved_count};
		char why[256];
		q.available = t->online;
		q.strategy = p->opt.distribute_across_cores ? NP_TAKE_SPREAD
							    : NP_TAKE_PACKED;
		q.distribute_across_numa = p->opt.distribute_across_numa;
		q.group_size = p->opt.full_pcpus_only ? t->cpus_per_core : 1;
		if (np_take_kubelet(&q, &st->reserved, why, sizeof(why)) < 0) {
			NP_ERR("policy.reserved_cpus: cannot reserve %d CPUs: %s",
			    p->reserved_count, why);
			return -EINVAL;
		}
	}
	/* The kubelet's static policy takes 0 reserved CPUs; its manager
	 * (and numaplaced) refuse them. */
	if (p->cpu_policy == NP_CPU_POLICY_STATIC &&
	    np_cpuset_empty(&st->reserved) &&
	    !(p->reserved_zero && (flags & NP_STATE_ALLOW_NO_RESERVED))) {
		NP_ERR("policy.reserved_cpus: the static CPU policy needs at least "
		    "one reserved CPU (a list or a count)");
		return -EINVAL;
	}
	if (np_cpuset_equal(&st->reserved, &t->online) &&
	    p->cpu_policy == NP_CPU_POLICY_STATIC) {
		NP_ERR("policy.reserved_cpus: reserving every CPU leaves nothing to "
		    "allocate");
		return -EINVAL;
	}
	return np_state_refresh(st);
}

int np_state_refresh(struct np_node_state *st)
{
	int r = np_state_cache_refresh(st);

	if (!r)
		np_state_index_build(st);
	return r;
}

struct np_container_alloc *np_container_allocs_new(int n)
{
	int k = n > 0 ? n : 1;
	struct np_container_alloc *c = calloc((size_t)k, sizeof(*c));

	for (int i = 0; c && i < k; i++)
		c[i].cpus = &np_cpuset_empty_set;
	return c;
}

int np_container_set_cpus(struct np_container_alloc *c, const np_cpuset *s)
{
	const np_cpuset *n;
	int r;

	if (!np_cpuset_empty(s) && c->cpus && c->cpus != &np_cpuset_empty_set) {
		/* c's own heap set (never shared): written in place */
		*(np_cpuset *)c->cpus = *s;
		return 0;
	}
	/* the shared empty set, or a new heap copy (s may be c->cpus) */
	if ((r = np_cpuset_dup(&n, s)))
		return r;
	np_cpuset_drop(c->cpus);
	c->cpus = n;
	return 0;
}

static void rec_drop(struct np_workload_rec *r)
{
	if (r && !--r->refs)
		r->free(r);
}

void np_workload_rec_set(struct np_workload_alloc *a, struct np_workload_rec *r)
{
	if (r)
		r->refs = 1;
	rec_drop(a->rec);
	a->rec = r;
}

void np_workload_rec_move(struct np_workload_alloc *dst,
			  struct np_workload_alloc *src)
{
	struct np_workload_rec *r = src->rec;

	src->rec = NULL;
	if (r == dst->rec) { /* a copy of the same workload */
		rec_drop(r);
		return;
	}
	rec_drop(dst->rec);
	dst->rec = r;
}

void np_workload_alloc_free(struct np_workload_alloc *a)
{
	rec_drop(a->rec);
	a->rec = NULL;
	np_workload_req_free(&a->req);
	for (int i = 0; a->c && i < a->ncontainers; i++) {
		free(a->c[i].charge);
		free(a->c[i].baseline);
		np_cpuset_drop(a->c[i].cpus);
	}
	free(a->c);
	a->c = NULL;
	a->ncontainers = 0;
	free(a->pod_rest);
	a->pod_rest = NULL;
}

int np_workload_alloc_copy(struct np_workload_alloc *dst,
			   const struct np_workload_alloc *src)
{
	int r;

	*dst = *src;
	dst->c = NULL;
	dst->pod_rest = NULL;
	dst->rec = NULL; /* counted once the copy is whole */
	if (src->pod_rest &&
	    !(dst->pod_rest = malloc(sizeof(*dst->pod_rest))))
		return -ENOMEM;
	if (src->pod_rest)
		*dst->pod_rest = *src->pod_rest;
	if ((r = np_workload_req_copy(&dst->req, &src->req))) {
		free(dst->pod_rest);
		dst->pod_rest = NULL;
		return r;
	}
	if (src->ncontainers > 0) {
		dst->c = malloc(sizeof(*dst->c) * (size_t)src->ncontainers);
		if (!dst->c) {
			np_workload_req_free(&dst->req);
			free(dst->pod_rest);
			dst->pod_rest = NULL;
			return -ENOMEM;
		}
		memcpy(dst->c, src->c,
		       sizeof(*dst->c) * (size_t)src->ncontainers);
		for (int i = 0; i < src->ncontainers; i++) {
			struct np_container_alloc *c = &dst->c[i];

			c->charge = NULL;
			c->baseline = NULL;
			c->cpus = &np_cpuset_empty_set;
			if ((src->c[i].charge &&
			     !(c->charge = malloc(sizeof(*c->charge)))) ||
			    (src->c[i].baseline &&
			     !(c->baseline = malloc(sizeof(*c->baseline)))) ||
			    np_cpuset_dup(&c->cpus, src->c[i].cpus)) {
				for (; i >= 0; i--) {
					free(dst->c[i].charge);
					free(dst->c[i].baseline);
					np_cpuset_drop(dst->c[i].cpus);
				}
				free(dst->c);
				dst->c = NULL;
				np_workload_req_free(&dst->req);
				free(dst->pod_rest);
				dst->pod_rest = NULL;
				return -ENOMEM;
			}
			if (c->charge)
				*c->charge = *src->c[i].charge;
			if (c->baseline)
				*c->baseline = *src->c[i].baseline;
		}
	}
	if ((dst->rec = src->rec))
		dst->rec->refs++;
	return 0;
}
