// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's fine-grained CPU choice (the koord-scheduler
 * NodeNUMAResource "CPU accumulator"), reimplemented in C from its
 * documented behaviour and its unit-test tables (tests/data/vectors).
 *
 * Bind policies:
 *
 *  - FullPCPUs packs whole free physical cores. The search runs in stages
 *    and stops at the first that satisfies the request:
 *      1. one NUMA node holding enough CPUs in whole free cores (first
 *         skipping nodes/cores marked by the request's exclusive policy,
 *         then without that filter);
 *      2. one socket holding enough CPUs in whole free cores;
 *      3. the whole free cores of entire sockets, largest share first
 *         (the strategy plays no part), while a socket's share fits in
 *         what is still needed;
 *      4. whole free cores from the sockets with the fewest of them;
 *      5. any free CPU, in the fallback order (below).
 *    Nodes and sockets in stages 1-2 are ordered by the NUMA strategy on
 *    their free CPU count (all free CPUs; ties: the socket's free count,
 *    then the id). A unit's CPUs are taken core by core (cores in order
 *    of their lowest CPU id, never assuming how siblings are numbered), so
 *    a request that is not a multiple of the core size splits its last
 *    core unless the policy is required. Without SMT (CPUsPerCore == 1)
 *    every request takes this path.
 *
 *  - SpreadByPCPUs: pass 0 looks for one NUMA node, then one socket,
 *    whose candidates (the lowest free thread of every core the exclusive
 *    policy does not avoid) are enough; pass 1 does the same with every
 *    free CPU, threads round-robin over cores (so staying in one node
 *    beats one thread per core across sockets, as upstream's
 *    "overlapped-cores" case expects); then the fallback order.
 *
 *  - Default resolves to FullPCPUs: koord-scheduler substitutes its
 *    configured default bind policy (NodeNUMAResourceArgs
 *    .DefaultCPUBindPolicy, FullPCPUs unless configured otherwise) before
 *    it runs the accumulator.
 *
 * The fallback order sorts the free CPUs by: sockets already used by this
 * result first, then the socket's and the node's free CPU count in the
 * strategy's direction, cores with fewer free threads first, the CPU id;
 * threads are then handed out round-robin over cores. CPUs the exclusive
 * policy avoids come after all the others and are round-robined on their
 * own: a numaplace refinement (upstream drops the filter at this stage and
 * may share a marked core before doubling up on its own cores).
 *
 * NUMA strategies: MostAllocated sorts fewest free first (bin-pack),
 * LeastAllocated most free first. DistributeEvenly has no effect in
 * Koordinator's accumulator and behaves as LeastAllocated here too; the
 * even split over a multi-node hint happens in the admission layer.
 *
 * Required policies (node label cpu-bind-policy=FullPCPUsOnly or
 * SpreadByPCPUs) first restrict the available CPUs to whole free cores,
 * resp. the lowest free thread of each core, and are -EINVAL when they
 * cannot be met. A required FullPCPUs count must be a multiple of
 * CPUsPerCore; it takes only whole cores, and when cores differ in size
 * (hybrid CPUs, offline threads) and the stages find no exact fit, a
 * subset-sum search over the whole free cores decides.
 *
 * Preferred CPUs (reservations, preemption) are intersected with the
 * available CPUs and taken first (min(count, |preferred|) of them, chosen
 * by the same policy), then the rest as usual from the other CPUs.
 */
#include "numaplace/take.h"
#include "numaplace/error.h"
#include "numaplace/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- policy names ---------------------------------------------------- */

static const char *const bind_names[] = {
    [NP_BIND_DEFAULT] = "Default",
    [NP_BIND_FULL_PCPUS] = "FullPCPUs",
    [NP_BIND_SPREAD_BY_PCPUS] = "SpreadByPCPUs",
};

static const char *const excl_names[] = {
    [NP_EXCL_NONE] = "None",
    [NP_EXCL_PCPU_LEVEL] = "PCPULevel",
    [NP_EXCL_NUMA_NODE_LEVEL] = "NUMANodeLevel",
};

static const char *const strategy_names[] = {
    [NP_NUMA_MOST_ALLOCATED] = "MostAllocated",
    [NP_NUMA_LEAST_ALLOCATED] = "LeastAllocated",
    [NP_NUMA_DISTRIBUTE_EVENLY] = "DistributeEvenly",
};

/*
 * A name of names[] (or the empty string, which means empty_means) as its
 * index; -EINVAL when unknown.
 */
static int koord_name_find(const char *const *names, int n, const char *s,
			   int empty_means)
{
	int i;

	if (s && !*s)
		return empty_means;
	i = np_name_find(names, n, s);
	return i < 0 ? -EINVAL : i;
}

#define KOORD_NAME_FIND(tab, s, empty)                                         \
	koord_name_find((tab), NP_NAMES_LEN(tab), (s), (empty))
#define KOORD_NAME_OF(tab, v)                                                  \
	np_name_of((tab), NP_NAMES_LEN(tab), (int)(v), "unknown")

int np_bind_policy_parse(const char *s, enum np_bind_policy *out)
{
	/* An empty policy is Default, as in the pod annotation. */
	int i = KOORD_NAME_FIND(bind_names, s, NP_BIND_DEFAULT);

	if (i < 0)
		return i;
	*out = (enum np_bind_policy)i;
	return 0;
}

int np_exclusive_policy_parse(const char *s, enum np_exclusive_policy *out)
{
	/* "" and the proposal's "Default" mean no exclusivity. */
	int i = s && !strcmp(s, "Default")
			? NP_EXCL_NONE
			: KOORD_NAME_FIND(excl_names, s, NP_EXCL_NONE);

	if (i < 0)
		return i;
	*out = (enum np_exclusive_policy)i;
	return 0;
}

int np_numa_strategy_parse(const char *s, enum np_numa_strategy *out)
{
	/* Koordinator's default strategy is MostAllocated. */
	int i = KOORD_NAME_FIND(strategy_names, s, NP_NUMA_MOST_ALLOCATED);

	if (i < 0)
		return i;
	*out = (enum np_numa_strategy)i;
	return 0;
}

const char *np_bind_policy_name(enum np_bind_policy p)
{
	return KOORD_NAME_OF(bind_names, p);
}

const char *np_exclusive_policy_name(enum np_exclusive_policy p)
{
	return KOORD_NAME_OF(excl_names, p);
}

const char *np_numa_strategy_name(enum np_numa_strategy s)
{
	return KOORD_NAME_OF(strategy_names, s);
}

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
static void whole_cores(const struct np_topology *t, const np_cpuset *s,
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
static void one_per_core(const struct np_topology *t, const np_cpuset *s,
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
	qsort(a->keys, (size_t)n, sizeof(*a->keys), cmp_skey);
	for (int i = 0; i < n; i++)
		a->order[i] = a->keys[i].v;
	return n;
}

/* Socket indexes in strategy order (free CPUs, then id). */
static int sorted_sockets(struct kacc *a)
{
	const struct np_topology *t = a->t;
	int n = 0;

	for (int i = 0; i < t->nsockets; i++) {
		int sfree = np_cpuset_count_and(&t->sockets[i].cpus, &a->free);
		struct skey *k = &a->keys[n];

		if (!sfree)
			continue;
		memset(k, 0, sizeof(*k));
		k->k[0] = a->dir * sfree;
		k->k[1] = t->sockets[i].id;
		k->v = i;
		n++;
	}
	qsort(a->keys, (size_t)n, sizeof(*a->keys), cmp_skey);
	for (int i = 0; i < n; i++)
		a->order[i] = a->keys[i].v;
	return n;
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
	for (int i = 0; i < t->ncores; i++)
		if (t->cores[i].ncpus > 0 &&
		    np_cpuset_subset(&t->cores[i].cpus, out))
			ncores++;
	return ncores;
}

static void take_full_pcpus(struct kacc *a)
{
	const struct np_topology *t = a->t;
	np_cpuset wc, filtered;
	int n;

	whole_cores(t, &a->free, &wc);
	np_cpuset_andnot(&filtered, &wc, &a->avoid);

	/* 1. One NUMA node, first avoiding marked nodes/cores. */
	n = sorted_nodes(a);
	for (int pass = 0; pass < 2; pass++) {
		const np_cpuset *cand = pass ? &wc : &filtered;

		if (pass && np_cpuset_empty(&a->avoid))
			break;
		for (int i = 0; i < n; i++)
			if (take_if_fits(a, &t->numa[a->order[i]].u.cpus, cand,
					 false))
				return;
	}

	/* 2. One socket. */
	n = sorted_sockets(a);
	for (int i = 0; i < n; i++)
		if (take_if_fits(a, &t->sockets[a->order[i]].cpus, &wc, false))
			return;

	/* 3. The whole free cores of entire sockets, largest first (the
	 *    strategy plays no part), while they fit in what is needed. */
	n = 0;
	for (int s = 0; s < t->nsockets; s++) {
		np_cpuset in;
		int cnt;

		socket_whole(a, s, &wc, &in);
		cnt = np_cpuset_count(&in);
		if (!cnt)
			continue;
		memset(&a->keys[n], 0, sizeof(a->keys[n]));
		a->keys[n].k[0] = -cnt;
		a->keys[n].k[1] = t->sockets[s].id;
		a->keys[n++].v = s;
	}
	qsort(a->keys, (size_t)n, sizeof(*a->keys), cmp_skey);
	for (int i = 0; i < n; i++)
		a->order[i] = a->keys[i].v;
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
	whole_cores(t, &a->free, &wc);
	n = 0;
	for (int s = 0; s < t->nsockets; s++) {
		np_cpuset in;
		int cores = socket_whole(a, s, &wc, &in);

		if (!cores)
			continue;
		memset(&a->keys[n], 0, sizeof(a->keys[n]));
		a->keys[n].k[0] = cores;
		a->keys[n].k[1] = t->sockets[s].id;
		a->keys[n++].v = s;
	}
	qsort(a->keys, (size_t)n, sizeof(*a->keys), cmp_skey);
	for (int i = 0; i < n; i++)
		a->order[i] = a->keys[i].v;
	for (int i = 0; i < n && a->need > 0; i++) {
		np_cpuset in;
		int m;

		socket_whole(a, a->order[i], &wc, &in);
		m = list_by_core(t, &in, a->list);
		acc_take_list(a, a->list, m);
	}
	if (a->need == 0)
		return;

	/* 5. Whatever is left; never for required FullPCPUs, which would
	 *    split a core here (the request then fails). */
	if (!a->whole)
		take_fallback(a);
}

static void take_spread_by_pcpus(struct kacc *a)
{
	const struct np_topology *t = a->t;

	/* Pass 0: one thread per core, avoiding marked cores/nodes.
	 * Pass 1: every free CPU, threads round-robin over cores. */
	for (int pass = 0; pass < 2; pass++) {
		np_cpuset cand;
		int n;

		if (pass) {
			cand = a->free;
		} else {
			np_cpuset_andnot(&cand, &a->free, &a->avoid);
			one_per_core(t, &cand, &cand);
		}
		n = sorted_nodes(a);
		for (int i = 0; i < n; i++)
			if (take_if_fits(a, &t->numa[a->order[i]].u.cpus, &cand,
					 true))
				return;
		n = sorted_sockets(a);
		for (int i = 0; i < n; i++)
			if (take_if_fits(a, &t->sockets[a->order[i]].cpus,
					 &cand, true))
				return;
	}
	take_fallback(a);
}

/* One accumulator run over avail for need CPUs. */
static int accumulate(const struct np_take_req *q, enum np_bind_policy bind,
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

/*
 * Last resort of a required FullPCPUs when cores differ in size (hybrid
 * CPUs, offline threads) and the stages above found no exact fit: any set
 * of whole cores of avail with exactly n CPUs (subset sum), preferring the
 * cores of pref, then lower CPU ids. Returns 0 or -ENOSPC / -ENOMEM.
 */
static int exact_whole_cores(const struct np_topology *t,
			     const np_cpuset *avail, const np_cpuset *pref,
			     int n, np_cpuset *out)
{
	size_t words = (size_t)n / 64 + 1;
	int *core = malloc(sizeof(int) * ((size_t)t->ncores + 1));
	uint64_t *can = NULL;
	int m = 0, r = -ENOSPC;

	if (!core)
		return -ENOMEM;
	/* Whole cores of avail: preferred ones first, each by lowest CPU. */
	for (int p = 0; p < 2; p++)
		for (int i = 0; i < t->ncores; i++) {
			const struct np_unit *c = &t->cores[i];
			if (!c->ncpus || !np_cpuset_subset(&c->cpus, avail) ||
			    np_cpuset_subset(&c->cpus, pref) != !p)
				continue;
			core[m++] = i;
		}
	/* can[i] = sums reachable with cores i..m-1, as a bitmap. */
	can = calloc(((size_t)m + 1) * words, sizeof(uint64_t));
	if (!can) {
		free(core);
		return -ENOMEM;
	}
	can[(size_t)m * words] = 1;
	for (int i = m - 1; i >= 0; i--) {
		uint64_t *dst = can + (size_t)i * words;
		const uint64_t *src = dst + words;
		int sz = t->cores[core[i]].ncpus;

		memcpy(dst, src, words * sizeof(uint64_t));
		for (int v = sz; v <= n; v++)
			if (src[(v - sz) / 64] >> ((v - sz) % 64) & 1)
				dst[v / 64] |= (uint64_t)1 << (v % 64);
	}
	if (can[n / 64] >> (n % 64) & 1) {
		np_cpuset_zero(out);
		for (int i = 0, v = n; i < m && v > 0; i++) {
			const uint64_t *rest = can + (size_t)(i + 1) * words;
			int sz = t->cores[core[i]].ncpus, w = v - sz;

			if (w >= 0 && (rest[w / 64] >> (w % 64) & 1)) {
				np_cpuset_or(out, out, &t->cores[core[i]].cpus);
				v = w;
			}
		}
		r = 0;
	}
	free(can);
	free(core);
	return r;
}

/* Preferred CPUs first, then the rest; -ENOSPC when no exact result. */
static int take_all(const struct np_take_req *q, enum np_bind_policy bind,
		    const np_cpuset *usable, np_cpuset *res)
{
	bool full_required = q->required && bind == NP_BIND_FULL_PCPUS;
	np_cpuset avail = *usable, got;
	int need = q->count, r;

	np_cpuset_zero(res);
	if (q->has_preferred) {
		np_cpuset pref;
		int k;

		np_cpuset_and(&pref, &q->preferred, &avail);
		/* Required FullPCPUs: only preferred CPUs forming whole cores,
		 * so that neither part splits a core. */
		if (full_required)
			whole_cores(q->topo, &pref, &pref);
		k = np_cpuset_count(&pref);
		if (k > need)
			k = need;
		if (k > 0) {
			if ((r = accumulate(q, bind, &pref, k, &got)))
				return r;
			np_cpuset_or(res, res, &got);
			np_cpuset_andnot(&avail, &avail, &got);
			need -= k;
		}
	}
	if (need > 0) {
		if ((r = accumulate(q, bind, &avail, need, &got)))
			return r;
		np_cpuset_or(res, res, &got);
	}
	if (np_cpuset_count(res) != q->count)
		return -ENOSPC;
	if (full_required) {
		whole_cores(q->topo, res, &got);
		if (!np_cpuset_equal(&got, res))
			return -ENOSPC;
	}
	return 0;
}

int np_take_koord(const struct np_take_req *q, np_cpuset *out, char *err,
		  size_t errlen)
{
	const struct np_topology *t;
	enum np_bind_policy bind;
	np_cpuset avail, res;
	bool full_required;
	int navail, r;

	if (!q || !q->topo) {
		NP_ERR("no topology");
		return -EINVAL;
	}
	t = q->topo;
	if (q->count < 0) {
		NP_ERR("count: %d is negative", q->count);
		return -EINVAL;
	}
	if ((int)q->bind_policy < 0 ||
	    (int)q->bind_policy >= NP_NAMES_LEN(bind_names) ||
	    (int)q->exclusive_policy < 0 ||
	    (int)q->exclusive_policy >= NP_NAMES_LEN(excl_names) ||
	    (int)q->numa_strategy < 0 ||
	    (int)q->numa_strategy >= NP_NAMES_LEN(strategy_names)) {
		NP_ERR("invalid bind policy, exclusive policy or NUMA strategy");
		return -EINVAL;
	}
	/* koord-scheduler replaces Default with its configured default bind
	 * policy, FullPCPUs. */
	bind = q->bind_policy == NP_BIND_DEFAULT ? NP_BIND_FULL_PCPUS
						 : q->bind_policy;
	full_required = q->required && bind == NP_BIND_FULL_PCPUS;

	np_cpuset_zero(&res);
	np_cpuset_and(&avail, &q->available, &t->online);
	navail = np_cpuset_count(&avail);
	if (q->count == 0) {
		*out = res;
		return 0;
	}
	if (q->count > navail) {
		NP_ERR("not enough cpus available to satisfy request: "
		    "requested=%d, available=%d",
		    q->count, navail);
		return -ENOSPC;
	}

	if (full_required) {
		int nwhole;

		if (q->count % t->cpus_per_core) {
			NP_ERR("required bind policy FullPCPUs cannot be met: "
			    "requested=%d cpus is not a multiple of the %d "
			    "cpus per physical core",
			    q->count, t->cpus_per_core);
			return -EINVAL;
		}
		whole_cores(t, &avail, &avail);
		nwhole = np_cpuset_count(&avail);
		if (q->count > nwhole) {
			NP_ERR("required bind policy FullPCPUs cannot be met: "
			    "requested=%d cpus, only %d cpus in whole free "
			    "physical cores (available=%d)",
			    q->count, nwhole, navail);
			return -EINVAL;
		}
	} else if (q->required && bind == NP_BIND_SPREAD_BY_PCPUS) {
		int ncores;

		one_per_core(t, &avail, &avail);
		ncores = np_cpuset_count(&avail);
		if (q->count > ncores) {
			NP_ERR("required bind policy SpreadByPCPUs cannot be met: "
			    "requested=%d cpus, only %d physical cores have a "
			    "free cpu (available=%d)",
			    q->count, ncores, navail);
			return -EINVAL;
		}
	}

	r = take_all(q, bind, &avail, &res);
	if (r == -ENOSPC && full_required) {
		/* Only with cores of different sizes: the stages found no
		 * exact fit of whole cores; look for any. */
		np_cpuset pref;

		np_cpuset_zero(&pref);
		if (q->has_preferred)
			np_cpuset_and(&pref, &q->preferred, &avail);
		r = exact_whole_cores(t, &avail, &pref, q->count, &res);
		if (r == -ENOSPC) {
			NP_ERR("required bind policy FullPCPUs cannot be met: "
			    "no set of whole free physical cores has exactly "
			    "%d cpus",
			    q->count);
			return -EINVAL;
		}
	}
	if (r == -ENOMEM) {
		NP_ERR("out of memory");
		return r;
	}
	if (r) {
		NP_ERR("not enough cpus available to satisfy request: "
		    "requested=%d, available=%d",
		    q->count, navail);
		return r;
	}
	*out = res;
	return 0;
}
