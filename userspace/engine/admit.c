// SPDX-License-Identifier: Apache-2.0
/*
 * Admission: hints from the CPU, memory and device providers, the Topology
 * Manager merge, then CPUs (kubelet or Koordinator semantics), memory nodes
 * and devices under the chosen affinity. Works on a copy of the state and
 * commits only when every container of the workload fits.
 */
#include "numaplace/admit.h"
#include "engine/admit_internal.h"
#include "engine/explain_internal.h"
#include "numaplace/error.h"
#include "numaplace/hints.h"

#include <errno.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* admit.c's short name for it */
#define reject np_admit_reject

/* Effective class: who gets exclusive CPUs and which pool the rest use. */
static bool wants_exclusive(const struct np_node_state *st,
			    const struct np_workload_req *w,
			    const struct np_container_req *c)
{
	if (c->cpu_milli <= 0 || c->cpu_milli % 1000)
		return false;
	switch (w->qos) {
	case NP_QOS_LSE:
	case NP_QOS_LSR:
		return true;
	case NP_QOS_GUARANTEED:
		return st->policy.cpu_policy == NP_CPU_POLICY_STATIC;
	default:
		return false;
	}
}

/* Pod-level resources whose CPUs are exclusive to the pod (whole CPUs
 * under an exclusive class). */
static bool pod_exclusive(const struct np_node_state *st,
			  const struct np_workload_req *w)
{
	struct np_container_req c = {.cpu_milli = w->pod_cpu_milli};

	return w->has_pod_res && wants_exclusive(st, w, &c);
}

static enum np_qos effective_class(const struct np_node_state *st,
				   const struct np_workload_req *w)
{
	switch (w->qos) {
	case NP_QOS_LSE:
	case NP_QOS_LSR:
	case NP_QOS_BE:
		return w->qos;
	case NP_QOS_GUARANTEED:
		if (pod_exclusive(st, w))
			return NP_QOS_LSE;
		for (int i = 0; i < w->ncontainers; i++)
			if (wants_exclusive(st, w, &w->c[i]))
				return NP_QOS_LSE;
		return NP_QOS_LS;
	default:
		/* LS, Burstable and BestEffort share the shared pool, as the
		 * kubelet's BestEffort pods run on its default CPU set. */
		return NP_QOS_LS;
	}
}

struct request {
	int cpus; /* exclusive CPUs, 0 = none */
	uint64_t memory;
	int nhuge;
	uint64_t huge_size_kb[NP_MAX_HUGEPAGE_SIZES];
	uint64_t huge_bytes[NP_MAX_HUGEPAGE_SIZES];
	int ndev;
	struct np_device_req dev[NP_MAX_DEVICE_REQS];
	const np_cpuset *reuse; /* init containers' CPUs, usable again */
};

static void request_add(struct request *r, const struct np_container_req *c,
			bool exclusive)
{
	if (exclusive)
		r->cpus += (int)(c->cpu_milli / 1000);
	r->memory += c->memory;
	for (int h = 0; h < c->nhuge; h++) {
		int k;
		for (k = 0; k < r->nhuge; k++)
			if (r->huge_size_kb[k] == c->huge_size_kb[h])
				break;
		if (k == r->nhuge && r->nhuge < NP_MAX_HUGEPAGE_SIZES)
			r->huge_size_kb[r->nhuge++] = c->huge_size_kb[h];
		if (k < r->nhuge)
			r->huge_bytes[k] += c->huge_bytes[h];
	}
	for (int i = 0; i < c->ndev; i++) {
		int k;
		for (k = 0; k < r->ndev; k++)
			if (!strcmp(r->dev[k].resource, c->dev[i].resource))
				break;
		if (k == r->ndev && r->ndev < NP_MAX_DEVICE_REQS)
			r->dev[r->ndev++] = c->dev[i];
		else if (k < r->ndev)
			r->dev[k].count += c->dev[i].count;
	}
}

/* The pod's request under the pod scope, as the kubelet sums it: the app
 * containers (sidecars included) added, each resource at least what the
 * largest init container asks (they run one at a time, before). */
static void pod_request(const struct np_node_state *st,
			const struct np_workload_req *w, struct request *rq)
{
	memset(rq, 0, sizeof(*rq));
	for (int i = 0; i < w->ncontainers; i++)
		if (!w->c[i].init || w->c[i].restartable)
			request_add(rq, &w->c[i],
				    wants_exclusive(st, w, &w->c[i]));
	for (int i = 0; i < w->ncontainers; i++) {
		struct request one = {0};
		if (!w->c[i].init || w->c[i].restartable)
			continue;
		request_add(&one, &w->c[i], wants_exclusive(st, w, &w->c[i]));
		if (one.cpus > rq->cpus)
			rq->cpus = one.cpus;
		if (one.memory > rq->memory)
			rq->memory = one.memory;
		for (int h = 0; h < one.nhuge; h++) {
			int k = 0;
			while (k < rq->nhuge &&
			       rq->huge_size_kb[k] != one.huge_size_kb[h])
				k++;
			if (k == rq->nhuge && k == NP_MAX_HUGEPAGE_SIZES)
				continue;
			if (k == rq->nhuge)
				rq->huge_size_kb[rq->nhuge++] = one.huge_size_kb[h];
			if (one.huge_bytes[h] > rq->huge_bytes[k])
				rq->huge_bytes[k] = one.huge_bytes[h];
		}
		for (int e = 0; e < one.ndev; e++) {
			int k = 0;
			while (k < rq->ndev &&
			       strcmp(rq->dev[k].resource, one.dev[e].resource))
				k++;
			if (k == rq->ndev && k == NP_MAX_DEVICE_REQS)
				continue;
			if (k == rq->ndev)
				rq->dev[rq->ndev++] = one.dev[e];
			else if (one.dev[e].count > rq->dev[k].count)
				rq->dev[k].count = one.dev[e].count;
		}
	}
	/* pod-level resources: the budget is what the pod asks */
	if (pod_exclusive(st, w))
		rq->cpus = (int)(w->pod_cpu_milli / 1000);
	if (w->has_pod_res && w->pod_memory)
		rq->memory = w->pod_memory;
}

static int build_providers(const struct np_node_state *st,
			   const struct request *rq, struct np_provider *prov,
			   int *nprov, struct np_decision *d)
{
	const struct np_topology *t = st->topo;
	const struct np_state_cache *mv = &st->cache;
	np_cpuset pool;
	int n = 0, nw;

	if (rq->cpus > 0) {
		struct np_provider *p = &prov[n++];
		memset(p, 0, sizeof(*p));
		p->kind = NP_PROV_CPU;
		snprintf(p->resource, sizeof(p->resource), "cpu");
		p->nres = 1;
		p->request[0] = (uint64_t)rq->cpus;
		p->nodes = t->numa_mask;
		np_admit_exclusive_pool(st, &pool);
		/* generateCPUTopologyHints: a mask is disregarded unless it
		 * holds every reusable CPU's node */
		if (rq->reuse) {
			np_cpuset_or(&pool, &pool, rq->reuse);
			p->must = np_topology_nodes_of(t, rq->reuse);
		}
		nw = np_cpuset_words(t->max_cpu);
		for (int i = 0; i < t->nnuma; i++) {
			int id = t->numa[i].u.id;
			p->total[0][id] = (uint64_t)t->numa[i].u.ncpus;
			p->avail[0][id] = (uint64_t)np_cpuset_count_and_n(
				&t->numa[i].u.cpus, &pool, nw);
			p->socket_of_node[id] =
				t->cpu[np_cpuset_first(&t->numa[i].u.cpus)].socket;
		}
		p->by_socket = st->policy.opt.align_by_socket;
	}
	if (rq->cpus > 0 && (rq->memory || rq->nhuge)) {
		struct np_provider *p = &prov[n];
		bool known = false;
		memset(p, 0, sizeof(*p));
		p->kind = NP_PROV_MEMORY;
		snprintf(p->resource, sizeof(p->resource), "memory");
		p->nodes = t->numa_mask;
		if (rq->memory) {
			p->request[p->nres] = rq->memory;
			for (int i = 0; i < t->nnuma; i++) {
				int id = t->numa[i].u.id;
				uint64_t tot = t->numa[i].mem_total;
				known |= tot > 0;
				p->total[p->nres][id] = tot;
				p->avail[p->nres][id] =
					tot > mv->mem[id] ? tot - mv->mem[id] : 0;
			}
			p->nres++;
		}
		for (int h = 0; h < rq->nhuge; h++) {
			p->request[p->nres] = rq->huge_bytes[h];
			for (int i = 0; i < t->nnuma; i++) {
				const struct np_numa_node *nn = &t->numa[i];
				int k = np_admit_huge_index(nn, rq->huge_size_kb[h]);
				uint64_t pages = k < 0 ? 0 : nn->huge[k].total;
				uint64_t used = k < 0 ? 0 : mv->huge[k][nn->u.id];
				p->total[p->nres][nn->u.id] =
					pages * rq->huge_size_kb[h] * 1024;
				p->avail[p->nres][nn->u.id] =
					(pages > used ? pages - used : 0) *
					rq->huge_size_kb[h] * 1024;
			}
			known = true;
			p->nres++;
		}
		memcpy(p->used, mv->used, sizeof(p->used));
		memcpy(p->group, mv->group, sizeof(p->group));
		/* A topology without memory figures cannot judge memory. */
		if (known)
			n++;
	}
	for (int i = 0; i < rq->ndev; i++) {
		struct np_provider *p = &prov[n];
		int total = 0, free_any = 0;
		bool topo = false;
		memset(p, 0, sizeof(*p));
		p->kind = NP_PROV_DEVICE;
		snprintf(p->resource, sizeof(p->resource), "%s",
			 rq->dev[i].resource);
		p->nres = 1;
		p->request[0] = (uint64_t)rq->dev[i].count;
		p->nodes = t->numa_mask;
		for (int k = 0; k < t->ndevices; k++) {
			const struct np_device *dv = &t->devices[k];
			if (strcmp(dv->resource, rq->dev[i].resource))
				continue;
			total++;
			if (!np_admit_device_taken(st, k))
				free_any++;
			if (dv->numa < 0)
				continue;
			topo = true;
			p->total[0][dv->numa]++;
			if (!np_admit_device_taken(st, k))
				p->avail[0][dv->numa]++;
		}
		if (free_any < rq->dev[i].count) {
			reject(d, UNEXPECTED, rq->dev[i].resource,
			       "%s: requested %d, %d free of %d on this node",
			       rq->dev[i].resource, rq->dev[i].count, free_any,
			       total);
			return -ENOSPC;
		}
		/* Devices without NUMA information: no preference. */
		if (!topo)
			p->kind = NP_PROV_NONE;
		n++;
	}
	*nprov = n;
	return 0;
}

/* Could this provider alone get a preferred placement under the policy? */
static bool provider_alone_ok(const struct np_hints_query *q,
			      const struct np_provider *p0)
{
	struct np_provider p = *p0;
	struct np_hints_query one = *q;
	struct np_merge_result alone;

	if (np_provider_finish(&p) < 0)
		return false;
	if (np_nodemask_count(p.nodes) <= NP_HINTS_EXPLICIT_MAX_NODES) {
		for (np_nodemask m = p.nodes; m; m = (m - 1) & p.nodes)
			if (np_provider_feasible(&p, m) &&
			    np_provider_preferred(&p, m) &&
			    (q->policy != NP_TM_SINGLE_NUMA_NODE ||
			     np_nodemask_count(m) == 1))
				return true;
		return false;
	}
	one.nprov = 1;
	one.prov = p0;
	return np_hints_best_search(&one, &alone) == 0 && alone.best.preferred;
}

/* Decide the NUMA affinity for one request; 0 or -ENOSPC (rejected). */
static int affinity(const struct np_node_state *st, const struct request *rq,
		    struct np_hint *hint, struct np_decision *d,
		    struct np_explain *ex)
{
	const struct np_topology *t = st->topo;
	struct np_provider prov[2 + NP_MAX_DEVICE_REQS];
	struct np_merge_result res;
	uint16_t(*dist)[NP_MAX_NUMA];
	struct np_hints_query q = {0};
	int nprov = 0, r;

	if ((r = build_providers(st, rq, prov, &nprov, d)))
		return r;
	dist = calloc(NP_MAX_NUMA, sizeof(*dist));
	if (!dist)
		return -ENOMEM;
	/* The node ids first: reading them from the node records in the
	 * inner loop (640 bytes apart) was most of this loop's time. */
	int ids[NP_MAX_NUMA];
	for (int i = 0; i < t->nnuma; i++)
		ids[i] = t->numa[i].u.id;
	for (int i = 0; i < t->nnuma; i++) {
		uint16_t *row = dist[ids[i]];
		for (int j = 0; j < t->nnuma; j++)
			row[ids[j]] = (uint16_t)np_topology_distance(t, i, j);
	}
	q.policy = st->policy.tm_policy;
	q.nodes = t->numa_mask;
	q.distance = (const uint16_t(*)[NP_MAX_NUMA])dist;
	q.prefer_closest = st->policy.prefer_closest;
	q.nprov = nprov;
	q.prov = prov;
	r = np_hints_best(&q, &res);
	if (r)
		goto out;
	*hint = res.best;
	if (ex)
		np_ex_merge(ex, &q, &res);
	if (!res.admit) {
		char names[256] = "";
		/* Name the providers that cannot be satisfied alone. */
		for (int i = 0; i < nprov; i++) {
			if (prov[i].kind == NP_PROV_NONE ||
			    provider_alone_ok(&q, &prov[i]))
				continue;
			snprintf(names + strlen(names),
				 sizeof(names) - strlen(names), "%s%s",
				 *names ? "," : "", prov[i].resource);
		}
		if (!*names)
			for (int i = 0; i < nprov; i++)
				if (prov[i].kind != NP_PROV_NONE)
					snprintf(names + strlen(names),
						 sizeof(names) - strlen(names),
						 "%s%s", *names ? "," : "",
						 prov[i].resource);
		reject(d, TOPOLOGY_AFFINITY, names,
		       "topology affinity error: policy %s found no preferred "
		       "NUMA placement for %s (cpu=%d)%s",
		       np_tm_policy_name(q.policy), names, rq->cpus,
		       *names && strchr(names, ',')
			       ? ": each fits, but not on the same NUMA nodes"
			       : "");
		r = -ENOSPC;
	}
out:
	free(dist);
	return r;
}

/*
 * Container i of w: its hint, CPUs, memory and devices into wa->c[i], then
 * its share into the cache (wa->ncontainers = i + 1). pod_hint is the pod's
 * affinity under the pod scope. reuse: the CPUs of the init containers
 * placed so far that the next containers may take again (the kubelet's
 * cpusToReuse): an init container that is not a sidecar adds its CPUs,
 * any other container removes what it took. An init container's memory
 * and devices are checked to fit, not kept: it ends before the app
 * containers start. 0, -ENOSPC (rejected, reason in d) or an error.
 */
static int place_container(struct np_node_state *st,
			   const struct np_workload_req *w, int i,
			   const struct np_hint *pod_hint, np_cpuset *reuse,
			   struct np_workload_alloc *wa, struct np_decision *d,
			   struct np_explain *ex)
{
	bool ends = w->c[i].init && !w->c[i].restartable;
	const struct np_container_req *c = &w->c[i];
	struct np_container_alloc *a = &wa->c[i];
	bool excl = wants_exclusive(st, w, c);
	struct np_hint hint = {.any = true};
	int r;

	a->mems = st->topo->numa_mask;
	if (ex)
		np_ex_request(ex, i, &wa->req.c[i], excl);
	if (excl || c->ndev) {
		struct request rq = {.reuse = reuse};
		request_add(&rq, c, excl);
		if (st->policy.tm_scope == NP_TM_SCOPE_POD || w->has_hint) {
			hint = *pod_hint;
			if (ex)
				np_ex_pod_hint(ex, &hint);
		} else if (st->policy.tm_policy != NP_TM_NONE &&
			   (r = affinity(st, &rq, &hint, d, ex))) {
			return r;
		}
	}
	a->hint = hint;
	if (excl) {
		np_cpuset got;

		if ((r = np_admit_take_cpus(st, w, (int)(c->cpu_milli / 1000), &hint,
				   reuse, &got, d, ex)) ||
		    (r = np_container_set_cpus(a, &got)))
			return r;
		a->exclusive = true;
		a->mems = hint.any ? np_topology_nodes_of(st->topo, a->cpus)
				   : hint.mask;
		if ((r = np_admit_charge_memory(st, c, a, d)))
			return r;
	} else if (!hint.any) {
		a->mems = hint.mask;
	}
	if ((r = np_admit_pick_devices(st, c, a, d)))
		return r;
	if (ends) {
		np_cpuset_or(reuse, reuse, a->cpus);
		free(a->charge);
		a->charge = NULL;
		a->ndev = 0;
	} else {
		np_cpuset_andnot(reuse, reuse, a->cpus);
	}
	wa->ncontainers = i + 1;
	np_state_cache_add(st, wa, a);
	if (ex)
		np_ex_result(ex, wa->req.c[i].name, a);
	return 0;
}

/*
 * A workload with pod-level resources exclusive to it (the kubelet's
 * pod-level resource managers): the pod's CPUs are taken once under its
 * hint; a container with its own whole-CPU request gets its CPUs out of
 * them; the containers without one (or with a fraction) share the rest
 * (pod_shared). When every container has its own, the pod keeps the
 * whole budget all the same, as the kubelet's TestStaticPolicyAllocatePod
 * expects: the CPUs no container got are the pod's (wa->pod_rest). Own
 * requests that take the whole budget while a container has none leave
 * the pod shared pool empty: EmptyPodSharedPoolError, before any take.
 * Memory: each container's own, and the budget's rest on the first
 * pod_shared container.
 */
static int place_pod(struct np_node_state *st, const struct np_workload_req *w,
		     const struct np_hint *hint, struct np_workload_alloc *wa,
		     struct np_decision *d, struct np_explain *ex)
{
	int own = 0, nshared = 0, first = -1, r;
	uint64_t mem = 0;
	np_cpuset pod, left, none;

	for (int i = 0; i < w->ncontainers; i++) {
		if (wants_exclusive(st, w, &w->c[i])) {
			own += (int)(w->c[i].cpu_milli / 1000);
		} else {
			if (first < 0)
				first = i;
			nshared++;
		}
		mem += w->c[i].memory;
	}
	if (nshared && own * 1000 >= w->pod_cpu_milli) {
		reject(d, EMPTY_POD_SHARED_POOL, "cpu",
		       "resources.cpu: the containers' own requests take all "
		       "%d CPUs of the pod, none is left for the %d "
		       "container(s) without one (the pod shared pool would "
		       "be empty)",
		       own, nshared);
		return -ENOSPC;
	}
	np_cpuset_zero(&none);
	if ((r = np_admit_take_cpus(st, w, (int)(w->pod_cpu_milli / 1000),
				    hint, &none, &pod, d, ex)))
		return r;
	left = pod;
	for (int i = 0; i < w->ncontainers; i++) {
		struct np_container_alloc *a = &wa->c[i];
		np_cpuset got;

		a->exclusive = true;
		a->hint = *hint;
		a->mems = hint->any ? np_topology_nodes_of(st->topo, &pod)
				    : hint->mask;
		if (ex)
			np_ex_request(ex, i, &wa->req.c[i], true);
		np_cpuset_zero(&got);
		if (!wants_exclusive(st, w, &w->c[i]))
			a->pod_shared = true;
		else if ((r = np_admit_take_from(
			      st, w, &left, (int)(w->c[i].cpu_milli / 1000),
			      &got, d, ex)) ||
			 (r = np_container_set_cpus(a, &got)))
			return r;
		np_cpuset_andnot(&left, &left, a->cpus);
	}
	/* no container shares the rest: it stays the pod's */
	if (!nshared && !np_cpuset_empty(&left)) {
		if (!(wa->pod_rest = malloc(sizeof(*wa->pod_rest))))
			return -ENOMEM;
		*wa->pod_rest = left;
		np_state_cache_add_pod_rest(st, wa);
	}
	for (int i = 0; i < w->ncontainers; i++) {
		struct np_container_alloc *a = &wa->c[i];
		struct np_container_req c = w->c[i];
		if (a->pod_shared && (r = np_container_set_cpus(a, &left)))
			return r;
		if (i == first && w->pod_memory > mem)
			c.memory += w->pod_memory - mem;
		if ((r = np_admit_charge_memory(st, &c, a, d)) ||
		    (r = np_admit_pick_devices(st, &w->c[i], a, d)))
			return r;
		wa->ncontainers = i + 1;
		np_state_cache_add(st, wa, a);
		if (ex)
			np_ex_result(ex, wa->req.c[i].name, a);
	}
	return 0;
}

/*
 * The request's own hint (w->has_hint), as the kubelet's CPU manager takes
 * the Topology Manager's result from its store: the nodes must be in the
 * topology (-EINVAL), and a policy that admits only preferred hints
 * (restricted, single-numa-node) rejects one that is not (-ENOSPC), as its
 * Admit would have.
 */
static int given_hint(const struct np_node_state *st,
		      const struct np_workload_req *w, struct np_hint *out,
		      struct np_decision *d, char *err, size_t errlen)
{
	np_nodemask extra = w->hint.mask & ~st->topo->numa_mask;

	if (extra) {
		NP_ERR("hint.mask: node %d is not in the topology",
		       __builtin_ctzll(extra));
		return -EINVAL;
	}
	if (!w->hint.preferred && (st->policy.tm_policy == NP_TM_RESTRICTED ||
				   st->policy.tm_policy ==
					   NP_TM_SINGLE_NUMA_NODE)) {
		reject(d, TOPOLOGY_AFFINITY, "cpu",
		       "topology affinity error: the given hint is not "
		       "preferred and policy %s admits only preferred ones",
		       st->policy.tm_policy == NP_TM_RESTRICTED
			   ? "restricted"
			   : "single-numa-node");
		return -ENOSPC;
	}
	*out = w->hint;
	out->any = false;
	return 0;
}

int np_admit(struct np_node_state *st, const struct np_workload_req *w,
	     struct np_decision *d, char *err, size_t errlen)
{
	return np_admit_explain(st, w, d, NULL, err, errlen);
}

/*
 * A new allocation of w (its request copied, its containers made) at
 * st->w[st->nworkloads], the slot past the end (room made for it), not
 * counted: the state's only once np_admit_explain counts it, freed by it
 * on a rejection. -ENOMEM leaves the state as it was.
 */
static int new_slot(struct np_node_state *st, const struct np_workload_req *w,
		    struct np_workload_alloc **out)
{
	bool indexed = np_state_indexed(st);
	struct np_workload_alloc *wa;
	int r;

	if (st->nworkloads == st->cap) {
		int cap = st->cap ? st->cap * 2 : 16;
		struct np_workload_alloc **g =
			realloc(st->w, sizeof(*st->w) * (size_t)cap);
		if (!g)
			return -ENOMEM;
		st->w = g;
		st->cap = cap;
		np_state_index_moved(st, indexed); /* the same entries */
	}
	if (!(wa = calloc(1, sizeof(*wa))))
		return -ENOMEM;
	if ((r = np_workload_req_copy(&wa->req, w))) {
		free(wa);
		return r;
	}
	if (!(wa->c = np_container_allocs_new(w->ncontainers))) {
		np_workload_req_free(&wa->req);
		free(wa);
		return -ENOMEM;
	}
	st->w[st->nworkloads] = wa;
	*out = wa;
	return 0;
}

int np_admit_explain(struct np_node_state *st, const struct np_workload_req *w,
		     struct np_decision *d, struct np_explain *ex, char *err,
		     size_t errlen)
{
	struct np_workload_alloc *wa;
	bool indexed;
	struct np_hint pod_hint = {.any = true};
	np_cpuset reuse;
	bool pod_scope = st->policy.tm_scope == NP_TM_SCOPE_POD;
	int r = 0;

	memset(d, 0, sizeof(*d));
	snprintf(d->workload, sizeof(d->workload), "%s", w->name);
	if (!w->name[0] || w->ncontainers < 1 ||
	    w->ncontainers > NP_MAX_CONTAINERS) {
		NP_ERR("workload: needs a name and 1..%d containers",
		    NP_MAX_CONTAINERS);
		return -EINVAL;
	}
	if (np_state_find(st, w->name) >= 0) {
		NP_ERR("name: workload \"%s\" is already admitted", w->name);
		return -EEXIST;
	}
	for (int i = 0; i < w->ncontainers; i++)
		if ((w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR) &&
		    (w->c[i].cpu_milli % 1000 ||
		     (w->c[i].cpu_milli <= 0 && !w->has_pod_res))) {
			/* 0 would be no exclusive CPU at all: the shared pool,
			 * reserved CPUs included, under an exclusive class */
			char cp[160];
			np_workload_req_container_path(w, i, "workload", cp,
						       sizeof(cp));
			NP_ERR("%s.cpu: %s needs whole CPUs, at least 1, got "
			       "%lldm",
			       cp, np_qos_name(w->qos),
			       (long long)w->c[i].cpu_milli);
			return -EINVAL;
		}
	if ((w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR) &&
	    st->policy.cpu_policy != NP_CPU_POLICY_STATIC) {
		reject(d, "", "cpu",
		       "%s needs exclusive CPUs, but cpu_policy is \"none\"",
		       np_qos_name(w->qos));
		if (ex)
			np_ex_reject(ex, d->resource, d->reason);
		return 0;
	}
	/*
	 * Build the allocation in place, one slot past the end; each
	 * container's share goes into the cache as soon as it is chosen, so
	 * the next container sees it. A rejection drops the slot and takes
	 * its share out of the cache: the state is as before.
	 */
	if ((r = new_slot(st, w, &wa)))
		return r;
	wa->qos_class = effective_class(st, w);
	wa->excl = w->excl;
	if (w->has_hint) {
		if ((r = given_hint(st, w, &pod_hint, d, err, errlen)))
			goto out;
	} else if ((pod_scope || pod_exclusive(st, w)) &&
		   st->policy.tm_policy != NP_TM_NONE) {
		struct request rq;
		pod_request(st, w, &rq);
		if (ex)
			ex->container = -1;
		if (rq.cpus || rq.ndev)
			if ((r = affinity(st, &rq, &pod_hint, d, ex)))
				goto out;
	}
	np_cpuset_zero(&reuse);
	if (pod_exclusive(st, w) && (r = place_pod(st, w, &pod_hint, wa, d,
						   ex)))
		goto out;
	for (int i = 0; !pod_exclusive(st, w) && i < w->ncontainers; i++)
		if ((r = place_container(st, w, i, &pod_hint, &reuse, wa, d,
					 ex)))
			goto out;
	indexed = np_state_indexed(st);
	st->nworkloads++;
	np_state_index_appended(st, indexed);
	np_state_cache_mark(st, wa, 1);
	d->admitted = true;
	d->alloc = wa;
	return 0;
out:
	/* The slot past the end is not part of the state; drop its share
	 * (a pod's rest is in the cache before its first container). */
	if (wa->ncontainers || wa->pod_rest) {
		int rr = np_state_cache_sub(st, wa);
		if (rr) {
			wa->ncontainers = w->ncontainers;
			np_workload_alloc_free(wa);
			free(wa);
			return rr;
		}
	}
	/* Free every container's charge, the failing one's too. */
	wa->ncontainers = w->ncontainers;
	np_workload_alloc_free(wa);
	free(wa);
	st->w[st->nworkloads] = NULL;
	if (ex && r == -ENOSPC)
		np_ex_reject(ex, d->resource, d->reason);
	return r == -ENOSPC ? 0 : r; /* a rejection: reason in d */
}
