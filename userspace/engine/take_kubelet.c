// SPDX-License-Identifier: Apache-2.0
/*
 * The kubelet static policy's CPU choice (takeByTopologyNUMAPacked,
 * takeByTopologyNUMADistributed and their in-place-resize variants),
 * reimplemented from its documented behaviour and its test tables.
 *
 * One accumulator serves both the fresh and the resize case. A fresh take
 * orders NUMA nodes, sockets, caches and cores by their free CPUs, fewest
 * first, recounted at each step, ties to the lower id; it gives no
 * preference to units it has already taken CPUs from. A resize starts with
 * `result` already holding the CPUs it must keep (current CPUs on
 * scale-up, baseline on scale-down) and sets held_first: units then count
 * as free when every CPU in them is available or already ours, units that
 * already hold our CPUs sort first, and "needs at least" compares with the
 * CPUs a unit would add.
 */
#include "engine/explain_internal.h"
#include "engine/take_kubelet_internal.h"
#include "numaplace/error.h"
#include "numaplace/take.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const np_cpuset *ucpus(const struct np_topology *t, enum utype ty, int i)
{
	switch (ty) {
	case U_NUMA:
		return &t->numa[i].u.cpus;
	case U_SOCKET:
		return &t->sockets[i].cpus;
	case U_CORE:
		return &t->cores[i].cpus;
	default:
		return &t->l3s[i].cpus;
	}
}

static int uid(const struct np_topology *t, enum utype ty, int i)
{
	switch (ty) {
	case U_NUMA:
		return t->numa[i].u.id;
	case U_SOCKET:
		return t->sockets[i].id;
	case U_CORE:
		return t->cores[i].id;
	default:
		return t->l3s[i].id;
	}
}

static int unit_of(const struct np_topology *t, enum utype ty, int cpu)
{
	switch (ty) {
	case U_NUMA:
		return t->cpu[cpu].numa;
	case U_SOCKET:
		return t->cpu[cpu].socket;
	case U_CORE:
		return t->cpu[cpu].core;
	default:
		return t->cpu[cpu].l3;
	}
}

static int nunits(const struct np_topology *t, enum utype ty)
{
	switch (ty) {
	case U_NUMA:
		return t->nnuma;
	case U_SOCKET:
		return t->nsockets;
	case U_CORE:
		return t->ncores;
	default:
		return t->nl3;
	}
}

/*
 * Unit CPUs (a unit's set: CPUs below max_cpu) against the accumulator's
 * sets, over the words that can hold them only: the 4096-bit sets are
 * mostly zero, and these run for every core in every step.
 */
static int ucount_and(const struct acc *a, const np_cpuset *u,
		      const np_cpuset *b)
{
	int n = 0, nw = np_cpuset_words(a->t->max_cpu);

	for (int i = 0; i < nw; i++)
		n += np_popcount64(u->w[i] & b->w[i]);
	return n;
}

static bool uintersects(const struct acc *a, const np_cpuset *u,
			const np_cpuset *b)
{
	int nw = np_cpuset_words(a->t->max_cpu);

	for (int i = 0; i < nw; i++)
		if (u->w[i] & b->w[i])
			return true;
	return false;
}

/* CPUs of u available, or (resize) available or already ours. */
static int ucount_usable(const struct acc *a, const np_cpuset *u)
{
	int n = 0, nw = np_cpuset_words(a->t->max_cpu);

	if (!a->held_first)
		return ucount_and(a, u, &a->details);
	for (int i = 0; i < nw; i++)
		n += np_popcount64(u->w[i] &
				   (a->details.w[i] | a->result.w[i]));
	return n;
}

/* Whether u sorts among the units already holding our CPUs (resize). */
static bool uheld(const struct acc *a, const np_cpuset *u)
{
	return a->held_first && uintersects(a, u, &a->result);
}

struct skey {
	int idx, owned, avail, id;
};

static int cmp_skey(const void *pa, const void *pb)
{
	const struct skey *x = pa, *y = pb;
	/* Units already holding our CPUs first (resize only: owned is 0 in a
	 * fresh take), then fewest available CPUs (pack into partly used
	 * units), then lowest id. */
	if (x->owned != y->owned)
		return y->owned - x->owned;
	if (x->avail != y->avail)
		return x->avail - y->avail;
	return (x->id > y->id) - (x->id < y->id);
}

/* Append the units of type ty that hold available CPUs inside `within`,
 * sorted. */
static int append_sorted(struct acc *a, enum utype ty, const np_cpuset *within,
			 struct ulist *out)
{
	const struct np_topology *t = a->t;
	struct skey *keys;
	char *seen;
	int n = 0, r = 0, nw = np_cpuset_words(t->max_cpu);

	seen = calloc((size_t)nunits(t, ty), 1);
	keys = malloc(sizeof(*keys) * (size_t)nunits(t, ty));
	if (!seen || !keys) {
		r = -ENOMEM;
		goto out;
	}
	/* The available CPUs inside `within` in increasing order (details
	 * holds online CPUs only: none past max_cpu). */
	for (int wi = 0; wi < nw; wi++) {
		uint64_t bits = a->details.w[wi] & within->w[wi];
		for (; bits; bits &= bits - 1) {
			int u = unit_of(t, ty, wi * 64 + __builtin_ctzll(bits));
			if (seen[u])
				continue;
			seen[u] = 1;
			keys[n].idx = u;
			keys[n].id = uid(t, ty, u);
			keys[n].avail =
			    ucount_and(a, ucpus(t, ty, u), &a->details);
			keys[n].owned = uheld(a, ucpus(t, ty, u));
			n++;
		}
	}
	qsort(keys, (size_t)n, sizeof(*keys), cmp_skey);
	for (int i = 0; i < n && !r; i++)
		r = ulist_push(out, keys[i].idx);
out:
	free(seen);
	free(keys);
	return r;
}

/* Sorted units of type ty nested under the sorted units of type parent. */
static int nested(struct acc *a, enum utype parent, enum utype ty,
		  struct ulist *out)
{
	struct ulist p = {0};
	int r = np_kubelet_sorted_units(a, parent, &p);

	for (int i = 0; i < p.n && !r; i++)
		r = append_sorted(a, ty, ucpus(a->t, parent, p.idx[i]), out);
	free(p.idx);
	return r;
}

/*
 * NUMA-first machines (sockets >= NUMA nodes) sort sockets inside NUMA nodes
 * and cores inside sockets; socket-first machines sort NUMA nodes inside
 * sockets and cores inside NUMA nodes. L3 groups sort inside NUMA nodes.
 */
int np_kubelet_sorted_units(struct acc *a, enum utype ty, struct ulist *out)
{
	switch (ty) {
	case U_NUMA:
		if (a->numa_first)
			return append_sorted(a, U_NUMA, &a->t->online, out);
		return nested(a, U_SOCKET, U_NUMA, out);
	case U_SOCKET:
		if (a->numa_first)
			return nested(a, U_NUMA, U_SOCKET, out);
		return append_sorted(a, U_SOCKET, &a->t->online, out);
	case U_CORE:
		return nested(a, a->numa_first ? U_SOCKET : U_NUMA, U_CORE,
			      out);
	default:
		return nested(a, U_NUMA, U_L3, out);
	}
}

/* Free = every CPU of the unit is available (resize: or already ours).
 * Sockets and cores compare with the kubelet's declared per-unit counts. */
static bool unit_free(const struct acc *a, enum utype ty, int u)
{
	int have = ucount_usable(a, ucpus(a->t, ty, u)), want;

	if (ty == U_SOCKET)
		want = a->t->cpus_per_socket;
	else if (ty == U_CORE)
		want = a->t->cpus_per_core;
	else
		want = np_cpuset_count(ucpus(a->t, ty, u));
	return have == want && uintersects(a, ucpus(a->t, ty, u), &a->details);
}

/* Number of CPUs unit u would add to the result. */
static int unit_new(const struct acc *a, enum utype ty, int u)
{
	return ucount_and(a, ucpus(a->t, ty, u), &a->details);
}

static const enum np_ex_unit ex_unit[] = {
	[U_NUMA] = NP_EXU_NUMA, [U_SOCKET] = NP_EXU_SOCKET,
	[U_CORE] = NP_EXU_CORE, [U_L3] = NP_EXU_L3};

/* The type of unit units of type ty are sorted inside
 * (np_kubelet_sorted_units), or -1 when they are sorted on their own. */
static int parent_type(const struct acc *a, enum utype ty)
{
	if (ty == U_NUMA)
		return a->numa_first ? -1 : U_SOCKET;
	if (ty == U_SOCKET)
		return a->numa_first ? U_NUMA : -1;
	if (ty == U_CORE)
		return a->numa_first ? U_SOCKET : U_NUMA;
	return U_NUMA;
}

/* The id of the unit of type p (-1: none) unit u lies in, or -1. */
static int parent_id(const struct acc *a, int p, enum utype ty, int u)
{
	int cpu = np_cpuset_first(ucpus(a->t, ty, u));

	if (cpu < 0 || p < 0)
		return -1;
	return uid(a->t, (enum utype)p, unit_of(a->t, (enum utype)p, cpu));
}

/*
 * Trace one step: the units of l (sorted with the result `before` and the
 * available CPUs `details`), keeping those that gave CPUs, those passed
 * over before the last of them and the first one after it.
 */
static void trace_step(struct acc *a, enum utype ty, int step,
		       const struct ulist *l, const np_cpuset *before,
		       const np_cpuset *details)
{
	np_cpuset got;
	struct np_ex_event *e;
	int last = -1;

	np_cpuset_andnot(&got, &a->result, before);
	for (int i = 0; i < l->n; i++)
		if (np_cpuset_intersects(ucpus(a->t, ty, l->idx[i]), &got))
			last = i;
	if (last < 0 || !(e = np_ex_order(a->trace, step, ex_unit[ty], 0)))
		return;
	e->cpus = got;
	e->code = parent_type(a, ty) < 0 ? -1 : (int)ex_unit[parent_type(a, ty)];
	for (int i = 0; i <= last + 1 && i < l->n; i++) {
		const np_cpuset *c = ucpus(a->t, ty, l->idx[i]);
		struct np_ex_entry *x;
		if (e->nent == NP_EX_ENTRIES) {
			e->truncated = true;
			break;
		}
		x = &e->ent[e->nent++];
		x->id = uid(a->t, ty, l->idx[i]);
		x->parent = parent_id(a, parent_type(a, ty), ty, l->idx[i]);
		x->key[0] = a->held_first && np_cpuset_intersects(c, before);
		x->key[1] = np_cpuset_count_and(c, details);
		x->key[2] = x->id;
		x->taken = np_cpuset_intersects(c, &got);
		x->cand = np_cpuset_count(c);
	}
}

/* Take every free unit of type ty (in sorted order) that still fits. */
static int take_full(struct acc *a, enum utype ty)
{
	struct ulist l = {0};
	np_cpuset before = a->result, details = a->details;
	int r = np_kubelet_sorted_units(a, ty, &l);

	for (int i = 0; i < l.n && !r; i++) {
		int u = l.idx[i];
		if (!unit_free(a, ty, u) || a->need < unit_new(a, ty, u))
			continue;
		acc_take(a, ucpus(a->t, ty, u));
	}
	if (a->trace && !r)
		trace_step(a, ty, NP_EXP_WHOLE, &l, &before, &details);
	free(l.idx);
	return r;
}

/* Single CPUs: packed = cores in sorted order, threads by id; spread =
 * socket by socket, CPUs by id (one thread per core comes first). */
static int take_remaining(struct acc *a, bool spread)
{
	struct ulist l = {0};
	enum utype ty = spread ? U_SOCKET : U_CORE;
	np_cpuset before = a->result, details = a->details;
	int r = np_kubelet_sorted_units(a, ty, &l);

	for (int i = 0; i < l.n && !r && a->need > 0; i++) {
		np_cpuset c;
		np_cpuset_and(&c, ucpus(a->t, ty, l.idx[i]), &a->details);
		NP_CPUSET_FOREACH (cpu, &c) {
			np_cpuset one;
			np_cpuset_zero(&one);
			np_cpuset_set(&one, cpu);
			acc_take(a, &one);
			if (a->need == 0)
				break;
		}
	}
	if (a->trace && !r)
		trace_step(a, ty, NP_EXP_SINGLE, &l, &before, &details);
	free(l.idx);
	return r;
}

struct ckey {
	int idx, owned, id;
};

static int cmp_ckey(const void *pa, const void *pb)
{
	const struct ckey *x = pa, *y = pb;
	if (x->owned != y->owned)
		return y->owned - x->owned;
	return (x->id > y->id) - (x->id < y->id);
}

/*
 * Partial L3: the first cores of the cache with available CPUs, by id
 * (resize: cores with CPUs already ours first, counting what we hold
 * there towards the request); trim surplus threads of the last core;
 * claim only an exact fit.
 */
static void take_partial_uncore(struct acc *a, int l3)
{
	const struct np_topology *t = a->t;
	int cpc = t->cpus_per_core;
	np_cpuset usable, in, pick;
	struct ckey *keys;
	char *seen;
	int n = 0, held, want;

	usable = a->details;
	if (a->held_first)
		np_cpuset_or(&usable, &usable, &a->result);
	np_cpuset_and(&in, &usable, &t->l3s[l3].cpus);
	held = a->held_first
		   ? np_cpuset_count_and(&a->result, &t->l3s[l3].cpus)
		   : 0;
	want = (a->need + held + cpc - 1) / cpc;
	seen = calloc((size_t)t->ncores, 1);
	keys = malloc(sizeof(*keys) * (size_t)t->ncores);
	if (!seen || !keys)
		goto out;
	NP_CPUSET_FOREACH (cpu, &in) {
		int c = t->cpu[cpu].core;
		if (seen[c])
			continue;
		seen[c] = 1;
		keys[n].idx = c;
		keys[n].id = t->cores[c].id;
		keys[n].owned = uheld(a, &t->cores[c].cpus);
		n++;
	}
	qsort(keys, (size_t)n, sizeof(*keys), cmp_ckey);
	np_cpuset_zero(&pick);
	for (int i = 0; i < n && i < want; i++)
		np_cpuset_or(&pick, &pick, &t->cores[keys[i].idx].cpus);
	np_cpuset_and(&pick, &pick, &a->details);
	/* An odd remainder on SMT: drop the surplus threads, highest first. */
	while (cpc > 1 && np_cpuset_count(&pick) > a->need &&
	       np_cpuset_count(&pick) - a->need < cpc) {
		int last = -1;
		NP_CPUSET_FOREACH (cpu, &pick)
			last = cpu;
		np_cpuset_clear(&pick, last);
	}
	if (np_cpuset_count(&pick) == a->need)
		acc_take(a, &pick);
out:
	free(seen);
	free(keys);
}

static int take_uncore(struct acc *a)
{
	struct ulist l = {0};
	int r = np_kubelet_sorted_units(a, U_L3, &l);

	for (int i = 0; i < l.n && !r; i++) {
		if (a->need >= a->t->cpus_per_l3)
			r = take_full(a, U_L3);
		if (r || a->need == 0)
			break;
		take_partial_uncore(a, l.idx[i]);
		if (a->need == 0)
			break;
	}
	free(l.idx);
	return r;
}

void np_kubelet_acc_init(struct acc *a, const struct np_topology *t,
			 const np_cpuset *avail, const np_cpuset *keep,
			 int count)
{
	memset(a, 0, sizeof(*a));
	a->t = t;
	np_cpuset_and(&a->details, avail, &t->online);
	a->held_first = keep != NULL;
	if (keep) {
		np_cpuset_and(&a->result, keep, &t->online);
		np_cpuset_andnot(&a->details, &a->details, &a->result);
	}
	a->need = count - np_cpuset_count(&a->result);
	/* A topology that declares as many sockets as NUMA nodes or more
	 * takes whole NUMA nodes before sockets. */
	a->numa_first = t->nsockets >= t->nnuma;
}

int np_kubelet_take_packed(const struct np_topology *t, const np_cpuset *avail,
			   const np_cpuset *keep, int count, bool spread,
			   bool uncore, np_cpuset *out, char *err,
			   size_t errlen)
{
	return np_kubelet_take_packed_trace(t, avail, keep, count, spread,
					    uncore, NULL, out, err, errlen);
}

int np_kubelet_take_packed_trace(const struct np_topology *t,
				 const np_cpuset *avail, const np_cpuset *keep,
				 int count, bool spread, bool uncore,
				 struct np_explain *trace, np_cpuset *out,
				 char *err, size_t errlen)
{
	struct acc a;
	int r;

	np_kubelet_acc_init(&a, t, avail, keep, count);
	a.trace = trace;
	if (a.need <= 0) {
		*out = a.result;
		return 0;
	}
	if (a.need > np_cpuset_count(&a.details)) {
		np_cpuset all;
		np_cpuset_or(&all, &a.details, &a.result);
		NP_ERR("not enough cpus available to satisfy request: "
		       "requested=%d, available=%d",
		       count, np_cpuset_count(&all));
		return -ENOSPC;
	}
	if ((r = take_full(&a, a.numa_first ? U_NUMA : U_SOCKET)) ||
	    a.need == 0)
		goto done;
	if ((r = take_full(&a, a.numa_first ? U_SOCKET : U_NUMA)) ||
	    a.need == 0)
		goto done;
	if (uncore && ((r = take_uncore(&a)) || a.need == 0))
		goto done;
	if (!spread && ((r = take_full(&a, U_CORE)) || a.need == 0))
		goto done;
	r = take_remaining(&a, spread);
done:
	if (r)
		return r;
	if (a.need != 0) {
		NP_ERR("failed to allocate cpus");
		return -ENOSPC;
	}
	*out = a.result;
	return 0;
}

int np_take_kubelet(const struct np_take_req *q, np_cpuset *out, char *err,
		    size_t errlen)
{
	const np_cpuset *keep = NULL;
	np_cpuset avail;
	bool spread = q->strategy == NP_TAKE_SPREAD;

	if (q->count < 0) {
		NP_ERR("count: %d is negative", q->count);
		return -EINVAL;
	}
	np_cpuset_and(&avail, &q->available, &q->topo->online);
	if (q->resize) {
		if (!np_cpuset_subset(&q->baseline, &q->current)) {
			NP_ERR(
			    "baseline CPUs are not a subset of the allocated "
			    "(current) CPUs");
			return -EINVAL;
		}
		/* The contract: available includes the current CPUs. */
		np_cpuset_or(&avail, &avail, &q->current);
		if (q->count >= np_cpuset_count(&q->current)) {
			keep = &q->current;
		} else {
			if (q->count < np_cpuset_count(&q->baseline)) {
				NP_ERR("cannot shrink to %d cpus: below the %d "
				       "baseline (promised) cpus",
				       q->count, np_cpuset_count(&q->baseline));
				return -EINVAL;
			}
			keep = &q->baseline;
		}
	}
	if (keep && q->align_by_socket) {
		/* Stay in the sockets of the CPUs we keep, if they suffice. */
		np_cpuset sock, in;
		np_cpuset_zero(&sock);
		NP_CPUSET_FOREACH (cpu, keep) {
			if (cpu < q->topo->max_cpu && q->topo->cpu[cpu].present)
				np_cpuset_or(
				    &sock, &sock,
				    &q->topo->sockets[q->topo->cpu[cpu].socket]
					 .cpus);
		}
		np_cpuset_and(&in, &avail, &sock);
		if (np_cpuset_count(&in) >= q->count)
			avail = in;
	}
	if (q->distribute_across_numa)
		return np_kubelet_take_distributed(
		    q->topo, &avail, keep, q->count, q->group_size, spread,
		    keep && q->align_by_socket, out, err, errlen);
	return np_kubelet_take_packed_trace(q->topo, &avail, keep, q->count,
					    spread, q->prefer_uncore, q->trace,
					    out, err, errlen);
}

int np_take(const struct np_take_req *q, np_cpuset *out, char *err,
	    size_t errlen)
{
	if (!q->topo) {
		NP_ERR("no topology");
		return -EINVAL;
	}
	return q->koord ? np_take_koord(q, out, err, errlen)
			: np_take_kubelet(q, out, err, errlen);
}
