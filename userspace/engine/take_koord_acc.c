// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's CPU accumulator: the stages of FullPCPUs and SpreadByPCPUs
 * and the fallback order (described in take_koord.c).
 */
#include "engine/explain_internal.h"
#include "engine/take_koord_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- accumulator ----------------------------------------------------- */

#define NKEYS 6

/* A sort key: lexicographic on k[], then v (the payload) ascending. */
struct skey {
	int k[NKEYS];
	int v;
};

static int cmp_skey(const void *pa, const void *pb)
{
	const struct skey *x = pa, *y = pb;

	for (int i = 0; i < NKEYS; i++)
		if (x->k[i] != y->k[i])
			return x->k[i] < y->k[i] ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

struct kacc {
	const struct np_topology *t;
	np_cpuset free;	  /* available CPUs not taken yet */
	np_cpuset result; /* CPUs taken */
	int need;
	int dir;	 /* +1 MostAllocated (fewest free first), -1 others */
	np_cpuset avoid; /* CPUs the exclusive policy steers away from */
	bool whole;	 /* take whole cores only (required FullPCPUs) */
	struct np_explain *trace; /* NULL, or where stages are traced */

	/* scratch */
	int *list, *list2; /* max_cpu entries */
	int *gid;	   /* ncores entries: core -> group */
	int *gsize, *goff; /* max_cpu + 1 entries */
	int *grouped;	   /* max_cpu entries */
	int *order;	   /* max(nnuma, nsockets) entries */
	struct skey *keys; /* max(max_cpu, nnuma, nsockets) entries */
};

static void acc_free(struct kacc *a)
{
	free(a->list);
	free(a->list2);
	free(a->gid);
	free(a->gsize);
	free(a->goff);
	free(a->grouped);
	free(a->order);
	free(a->keys);
}

static int acc_init(struct kacc *a, const struct np_topology *t,
		    const np_cpuset *avail, int need,
		    const struct np_take_req *q)
{
	size_t ncpu = (size_t)t->max_cpu + 1, nunit, nk;

	memset(a, 0, sizeof(*a));
	a->t = t;
	a->free = *avail;
	a->need = need;
	a->dir = q->numa_strategy == NP_NUMA_MOST_ALLOCATED ? 1 : -1;
	a->trace = q->trace;

	nunit = (size_t)(t->nnuma > t->nsockets ? t->nnuma : t->nsockets) + 1;
	nk = ncpu > nunit ? ncpu : nunit;
	a->list = malloc(sizeof(int) * ncpu);
	a->list2 = malloc(sizeof(int) * ncpu);
	a->gid = malloc(sizeof(int) * ((size_t)t->ncores + 1));
	a->gsize = malloc(sizeof(int) * ncpu);
	a->goff = malloc(sizeof(int) * ncpu);
	a->grouped = malloc(sizeof(int) * ncpu);
	a->order = malloc(sizeof(int) * nunit);
	a->keys = malloc(sizeof(*a->keys) * nk);
	if (!a->list || !a->list2 || !a->gid || !a->gsize || !a->goff ||
	    !a->grouped || !a->order || !a->keys) {
		acc_free(a);
		return -ENOMEM;
	}

	/* PCPULevel avoids the physical cores of CPUs allocated with
	 * PCPULevel; NUMANodeLevel the nodes of CPUs allocated with
	 * NUMANodeLevel. Marks made under the other policy do not matter. */
	if (q->exclusive_policy == NP_EXCL_PCPU_LEVEL) {
		NP_CPUSET_FOREACH (cpu, &q->pcpu_marked) {
			if (cpu >= t->max_cpu || !t->cpu[cpu].present)
				continue;
			np_cpuset_or(&a->avoid, &a->avoid,
				     &t->cores[t->cpu[cpu].core].cpus);
		}
	} else if (q->exclusive_policy == NP_EXCL_NUMA_NODE_LEVEL) {
		NP_CPUSET_FOREACH (cpu, &q->numa_marked) {
			if (cpu >= t->max_cpu || !t->cpu[cpu].present)
				continue;
			np_cpuset_or(&a->avoid, &a->avoid,
				     &t->numa[t->cpu[cpu].numa].u.cpus);
		}
	}
	return 0;
}

static void acc_take_cpu(struct kacc *a, int cpu)
{
	if (a->need <= 0 || !np_cpuset_test(&a->free, cpu))
		return;
	np_cpuset_clear(&a->free, cpu);
	np_cpuset_set(&a->result, cpu);
	a->need--;
}

/*
 * Take cpus[] in order until satisfied. In whole-core mode (required
 * FullPCPUs) cpus[] lists cores contiguously and a core is taken only when
 * all of its listed CPUs fit in what is needed; that matters only when
 * cores differ in size (hybrid CPUs, offline threads).
 */
static void acc_take_list(struct kacc *a, const int *cpus, int n)
{
	const struct np_topology *t = a->t;

	if (!a->whole) {
		for (int i = 0; i < n && a->need > 0; i++)
			acc_take_cpu(a, cpus[i]);
		return;
	}
	for (int i = 0, j; i < n && a->need > 0; i = j) {
		int core = t->cpu[cpus[i]].core;

		for (j = i + 1; j < n && t->cpu[cpus[j]].core == core; j++)
			;
		if (j - i > a->need)
			continue;
		for (int k = i; k < j; k++)
			acc_take_cpu(a, cpus[k]);
	}
}

/* CPUs of the cores whose every online CPU is in s. */
void np_koord_whole_cores(const struct np_topology *t, const np_cpuset *s,
			  np_cpuset *out)
{
	np_cpuset r;

	np_cpuset_zero(&r);
	for (int i = 0; i < t->ncores; i++) {
		const struct np_unit *c = &t->cores[i];
		if (c->ncpus > 0 && np_cpuset_subset(&c->cpus, s))
			np_cpuset_or(&r, &r, &c->cpus);
	}
	*out = r;
}

/* The lowest CPU of s in every core that has one in s. */
void np_koord_one_per_core(const struct np_topology *t, const np_cpuset *s,
			   np_cpuset *out)
{
	np_cpuset r;

	np_cpuset_zero(&r);
	for (int i = 0; i < t->ncores; i++) {
		np_cpuset in;
		int first;

		np_cpuset_and(&in, &t->cores[i].cpus, s);
		first = np_cpuset_first(&in);
		if (first >= 0)
			np_cpuset_set(&r, first);
	}
	*out = r;
}

/*
 * s as a list, core by core: cores in the order of their lowest CPU in s,
 * the threads of a core by id. Nothing here assumes how SMT siblings are
 * numbered. Returns the length.
 */
static int list_by_core(const struct np_topology *t, const np_cpuset *s,
			int *out)
{
	np_cpuset left = *s;
	int n = 0;

	NP_CPUSET_FOREACH (cpu, s) {
		np_cpuset sib;

		if (!np_cpuset_test(&left, cpu))
			continue;
		np_cpuset_and(&sib, &t->cores[t->cpu[cpu].core].cpus, &left);
		NP_CPUSET_FOREACH (c, &sib) {
			out[n++] = c;
		}
		np_cpuset_andnot(&left, &left, &sib);
	}
	return n;
}

/*
 * Round-robin in[] over cores: the first listed thread of every core
 * (cores in order of first appearance), then the second, and so on.
 * out must not alias in.
 */
static void spread_list(struct kacc *a, const int *in, int n, int *out)
{
	const struct np_topology *t = a->t;
	int ng = 0, o = 0, maxsz = 0;

	for (int i = 0; i < t->ncores; i++)
		a->gid[i] = -1;
	for (int i = 0; i < n; i++) {
		int c = t->cpu[in[i]].core;
		if (a->gid[c] < 0) {
			a->gid[c] = ng;
			a->gsize[ng++] = 0;
		}
		a->gsize[a->gid[c]]++;
	}
	for (int g = 0, off = 0; g < ng; g++) {
		a->goff[g] = off;
		off += a->gsize[g];
		if (a->gsize[g] > maxsz)
			maxsz = a->gsize[g];
		a->gsize[g] = 0; /* refilled below */
	}
	for (int i = 0; i < n; i++) {
		int g = a->gid[t->cpu[in[i]].core];
		a->grouped[a->goff[g] + a->gsize[g]++] = in[i];
	}
	for (int r = 0; r < maxsz; r++)
		for (int g = 0; g < ng; g++)
			if (a->gsize[g] > r)
				out[o++] = a->grouped[a->goff[g] + r];
}

/* Socket index of a NUMA node (of its lowest online CPU), -1 if none. */
static int node_socket(const struct np_topology *t, int node)
{
	int first = np_cpuset_first(&t->numa[node].u.cpus);

	return first < 0 ? -1 : t->cpu[first].socket;
}

/* Sort a->keys[0..n-1]; their payloads in that order into a->order. */
static int order_by_keys(struct kacc *a, int n)
{
	qsort(a->keys, (size_t)n, sizeof(*a->keys), cmp_skey);
	for (int i = 0; i < n; i++)
		a->order[i] = a->keys[i].v;
	return n;
}

/* a->keys[n] = (k0, the socket's id) for socket index s. */
static void socket_key(struct kacc *a, int n, int k0, int s)
{
	struct skey *k = &a->keys[n];

	memset(k, 0, sizeof(*k));
	k->k[0] = k0;
	k->k[1] = a->t->sockets[s].id;
	k->v = s;
}

/*
 * NUMA node indexes in strategy order: free CPUs (MostAllocated fewest
 * first, otherwise most first), then the socket's free CPUs the same way,
 * then the node id. Nodes without free CPUs are left out.
 */
static int sorted_nodes(struct kacc *a)
{
	const struct np_topology *t = a->t;
	int n = 0;

	for (int i = 0; i < t->nnuma; i++) {
		int nfree = np_cpuset_count_and(&t->numa[i].u.cpus, &a->free);
		int s = node_socket(t, i);
		struct skey *k = &a->keys[n];

		if (!nfree)
			continue;
		memset(k, 0, sizeof(*k));
		k->k[0] = a->dir * nfree;
		k->k[1] = s < 0 ? 0
				: a->dir * np_cpuset_count_and(
					       &t->sockets[s].cpus, &a->free);
		k->k[2] = t->numa[i].u.id;
		k->v = i;
		n++;
	}
	return order_by_keys(a, n);
}

/* Socket indexes in strategy order (free CPUs, then id). */
static int sorted_sockets(struct kacc *a)
{
	const struct np_topology *t = a->t;
	int n = 0;

	for (int i = 0; i < t->nsockets; i++) {
		int sfree = np_cpuset_count_and(&t->sockets[i].cpus, &a->free);

		if (sfree)
			socket_key(a, n++, a->dir * sfree, i);
	}
	return order_by_keys(a, n);
}

/*
 * If unit ∩ cand holds at least `need` CPUs, take the first `need` of them
 * (core by core, or round-robin over cores when spread); true when that
 * satisfied the request.
 */
static bool take_if_fits(struct kacc *a, const np_cpuset *unit,
			 const np_cpuset *cand, bool spread)
{
	np_cpuset c;
	int n;

	np_cpuset_and(&c, unit, cand);
	if (np_cpuset_count(&c) < a->need)
		return false;
	n = list_by_core(a->t, &c, a->list);
	if (spread) {
		spread_list(a, a->list, n, a->list2);
		acc_take_list(a, a->list2, n);
	} else {
		acc_take_list(a, a->list, n);
	}
	return a->need == 0;
}

/*
 * Last resort: every free CPU, ordered by (CPUs the exclusive policy
 * avoids last; sockets this result already uses first; socket free CPUs
 * and node free CPUs in strategy order; cores with fewer free threads
 * first; CPU id), handed out round-robin over cores (the CPUs the policy
 * allows, then the others).
 */
static void take_fallback(struct kacc *a)
{
	const struct np_topology *t = a->t;
	int n = 0, nok = 0;

	NP_CPUSET_FOREACH (cpu, &a->free) {
		const struct np_cpu *c = &t->cpu[cpu];
		struct skey *k = &a->keys[n++];

		k->k[0] = np_cpuset_test(&a->avoid, cpu);
		k->k[1] = !np_cpuset_intersects(&t->sockets[c->socket].cpus,
						&a->result);
		k->k[2] = a->dir * np_cpuset_count_and(
				       &t->sockets[c->socket].cpus, &a->free);
		k->k[3] = a->dir * np_cpuset_count_and(&t->numa[c->numa].u.cpus,
						       &a->free);
		k->k[4] =
		    np_cpuset_count_and(&t->cores[c->core].cpus, &a->free);
		k->k[5] = cpu;
		k->v = cpu;
	}
	qsort(a->keys, (size_t)n, sizeof(*a->keys), cmp_skey);
	for (int i = 0; i < n; i++) {
		a->list[i] = a->keys[i].v;
		if (!a->keys[i].k[0])
			nok = i + 1;
	}
	/* Round-robin the CPUs the policy allows first, on their own: a
	 * second thread of our own core beats sharing a marked core. */
	spread_list(a, a->list, nok, a->list2);
	spread_list(a, a->list + nok, n - nok, a->list2 + nok);
	acc_take_list(a, a->list2, n);
}

/* Whole free cores of a socket: CPUs and number of cores. */
static int socket_whole(const struct kacc *a, int s, const np_cpuset *wc,
			np_cpuset *out)
{
	const struct np_topology *t = a->t;
	int ncores = 0;

	np_cpuset_and(out, &t->sockets[s].cpus, wc);
	/* A core inside out has its lowest CPU in out: look only at the
	 * cores of out's CPUs, each once (at its lowest CPU), rather than
	 * at every core of the machine. */
	NP_CPUSET_FOREACH (cpu, out) {
		const struct np_unit *c = &t->cores[t->cpu[cpu].core];
		if (c->ncpus > 0 && np_cpuset_first(&c->cpus) == cpu &&
		    np_cpuset_subset(&c->cpus, out))
			ncores++;
	}
	return ncores;
}

/*
 * Socket indexes with whole free cores in wc: most such CPUs first
 * (most_cpus), or fewest such cores first; then the id.
 */
static int sockets_by_whole(struct kacc *a, const np_cpuset *wc, bool most_cpus)
{
	int n = 0;

	for (int s = 0; s < a->t->nsockets; s++) {
		np_cpuset in;
		int cores = socket_whole(a, s, wc, &in);
		int k0 = most_cpus ? -np_cpuset_count(&in) : cores;

		if (k0)
			socket_key(a, n++, k0, s);
	}
	return order_by_keys(a, n);
}

/*
 * Trace a stage that took from one unit: the units sorted before the one
 * at position `at` (which did not hold enough candidates), it, and the
 * next one, with their keys (free CPUs, the socket's free CPUs, id).
 */
static void trace_fit(struct kacc *a, int step, bool numa, int at, int n,
		      const np_cpuset *cand, const np_cpuset *before)
{
	const struct np_topology *t = a->t;
	struct np_ex_event *e = np_ex_order(
		a->trace, step, numa ? NP_EXU_NUMA : NP_EXU_SOCKET, 0);

	if (!e)
		return;
	e->code = a->dir;
	np_cpuset_andnot(&e->cpus, &a->result, before);
	for (int i = 0; i < n && i <= at + 1; i++) {
		const np_cpuset *u = numa ? &t->numa[a->order[i]].u.cpus
					  : &t->sockets[a->order[i]].cpus;
		struct np_ex_entry *x;
		if (e->nent == NP_EX_ENTRIES) {
			e->truncated = true;
			break;
		}
		x = &e->ent[e->nent++];
		x->id = numa ? t->numa[a->order[i]].u.id
			     : t->sockets[a->order[i]].id;
		x->parent = -1;
		for (int k = 0; k < 3; k++)
			x->key[k] = a->keys[i].k[k];
		x->key[0] *= a->dir;
		if (numa)
			x->key[1] *= a->dir;
		x->cand = np_cpuset_count_and(u, cand);
		x->taken = i == at;
	}
}

/* The first of the n sorted nodes (numa) or sockets whose candidates
 * satisfy the request, taken (and traced as step). */
static bool fits_first(struct kacc *a, int step, bool numa, int n,
		       const np_cpuset *cand, bool spread)
{
	const struct np_topology *t = a->t;
	np_cpuset before = a->result;

	for (int i = 0; i < n; i++) {
		const np_cpuset *u = numa ? &t->numa[a->order[i]].u.cpus
					  : &t->sockets[a->order[i]].cpus;
		if (take_if_fits(a, u, cand, spread)) {
			if (a->trace)
				trace_fit(a, step, numa, i, n, cand, &before);
			return true;
		}
	}
	return false;
}

/* Trace a stage that took from several units (no order kept). */
static void trace_bulk(struct kacc *a, int step, const np_cpuset *before)
{
	struct np_ex_event *e;

	if (!a->trace || !(e = np_ex_order(a->trace, step, NP_EXU_CPU, 0)))
		return;
	e->code = a->dir;
	np_cpuset_andnot(&e->cpus, &a->result, before);
	if (np_cpuset_empty(&e->cpus))
		a->trace->n--; /* nothing taken at this stage */
}

static void take_full_pcpus(struct kacc *a)
{
	const struct np_topology *t = a->t;
	np_cpuset wc, filtered, before;
	int n;

	np_koord_whole_cores(t, &a->free, &wc);
	np_cpuset_andnot(&filtered, &wc, &a->avoid);

	/* 1. One NUMA node, first avoiding marked nodes/cores. */
	n = sorted_nodes(a);
	for (int pass = 0; pass < 2; pass++) {
		const np_cpuset *cand = pass ? &wc : &filtered;

		if (pass && np_cpuset_empty(&a->avoid))
			break;
		if (fits_first(a, NP_EXP_KOORD_NODE, true, n, cand, false))
			return;
	}

	/* 2. One socket. */
	n = sorted_sockets(a);
	if (fits_first(a, NP_EXP_KOORD_SOCKET, false, n, &wc, false))
		return;
	before = a->result;

	/* 3. The whole free cores of entire sockets, largest first (the
	 *    strategy plays no part), while they fit in what is needed. */
	n = sockets_by_whole(a, &wc, true);
	for (int i = 0; i < n && a->need > 0; i++) {
		np_cpuset in;
		int m;

		socket_whole(a, a->order[i], &wc, &in);
		np_cpuset_and(&in, &in, &a->free);
		if (np_cpuset_count(&in) > a->need)
			continue;
		m = list_by_core(t, &in, a->list);
		acc_take_list(a, a->list, m);
	}
	if (a->need == 0)
		return;

	/* 4. Whole cores from the sockets with the fewest free cores. */
	np_koord_whole_cores(t, &a->free, &wc);
	n = sockets_by_whole(a, &wc, false);
	for (int i = 0; i < n && a->need > 0; i++) {
		np_cpuset in;
		int m;

		socket_whole(a, a->order[i], &wc, &in);
		m = list_by_core(t, &in, a->list);
		acc_take_list(a, a->list, m);
	}
	trace_bulk(a, NP_EXP_KOORD_SOCKETS, &before);
	if (a->need == 0)
		return;

	/* 5. Whatever is left; never for required FullPCPUs, which would
	 *    split a core here (the request then fails). */
	before = a->result;
	if (!a->whole)
		take_fallback(a);
	trace_bulk(a, NP_EXP_KOORD_FALLBACK, &before);
}

static void take_spread_by_pcpus(struct kacc *a)
{
	const struct np_topology *t = a->t;
	np_cpuset before;

	/* Pass 0: one thread per core, avoiding marked cores/nodes.
	 * Pass 1: every free CPU, threads round-robin over cores. */
	for (int pass = 0; pass < 2; pass++) {
		np_cpuset cand;
		int n;

		if (pass) {
			cand = a->free;
		} else {
			np_cpuset_andnot(&cand, &a->free, &a->avoid);
			np_koord_one_per_core(t, &cand, &cand);
		}
		n = sorted_nodes(a);
		if (fits_first(a, NP_EXP_KOORD_NODE, true, n, &cand, true))
			return;
		n = sorted_sockets(a);
		if (fits_first(a, NP_EXP_KOORD_SOCKET, false, n, &cand, true))
			return;
	}
	before = a->result;
	take_fallback(a);
	trace_bulk(a, NP_EXP_KOORD_FALLBACK, &before);
}

/* One accumulator run over avail for need CPUs. */
int np_koord_accumulate(const struct np_take_req *q, enum np_bind_policy bind,
			const np_cpuset *avail, int need, np_cpuset *out)
{
	struct kacc a;
	int r;

	if ((r = acc_init(&a, q->topo, avail, need, q)))
		return r;
	a.whole = q->required && bind == NP_BIND_FULL_PCPUS;
	if (bind == NP_BIND_FULL_PCPUS || q->topo->cpus_per_core == 1)
		take_full_pcpus(&a);
	else
		take_spread_by_pcpus(&a);
	r = a.need ? -ENOSPC : 0;
	*out = a.result;
	acc_free(&a);
	return r;
}
