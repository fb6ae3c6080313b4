// SPDX-License-Identifier: Apache-2.0
/*
 * The trace of one admission: events appended by the hooks in admit.c and
 * the takes (explain_internal.h). Only runs when a trace was asked for.
 */
#include "engine/explain_internal.h"
#include "numaplace/take.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_explain_init(struct np_explain *ex)
{
	memset(ex, 0, sizeof(*ex));
}

void np_explain_free(struct np_explain *ex)
{
	free(ex->ev);
	free(ex->hints);
	memset(ex, 0, sizeof(*ex));
}

struct np_ex_event *np_explain_add(struct np_explain *ex, enum np_ex_kind kind)
{
	struct np_ex_event *e;

	if (ex->n == ex->cap) {
		int cap = ex->cap ? ex->cap * 2 : 16;
		struct np_ex_event *g =
			realloc(ex->ev, sizeof(*g) * (size_t)cap);
		if (!g) {
			ex->oom = true;
			return NULL;
		}
		ex->ev = g;
		ex->cap = cap;
	}
	e = &ex->ev[ex->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->container = ex->container;
	return e;
}

int np_explain_add_hints(struct np_explain *ex, const struct np_hint *h, int n)
{
	int first = ex->nhints;

	if (n <= 0)
		return first; /* nothing to copy (h may be NULL) */
	if (ex->nhints + n > ex->hcap) {
		int cap = ex->hcap ? ex->hcap : 64;
		struct np_hint *g;
		while (cap < ex->nhints + n)
			cap *= 2;
		if (!(g = realloc(ex->hints, sizeof(*g) * (size_t)cap))) {
			ex->oom = true;
			return -ENOMEM;
		}
		ex->hints = g;
		ex->hcap = cap;
	}
	memcpy(ex->hints + ex->nhints, h, sizeof(*h) * (size_t)n);
	ex->nhints += n;
	return first;
}

void np_ex_request(struct np_explain *ex, int i,
		   const struct np_container_req *c, bool exclusive)
{
	struct np_ex_event *e;

	ex->container = i;
	if (!(e = np_explain_add(ex, NP_EX_REQUEST)))
		return;
	snprintf(e->name, sizeof(e->name), "%s", c->name);
	e->code = exclusive;
	e->count = exclusive ? (int)(c->cpu_milli / 1000) : 0;
	e->value[0] = c->cpu_milli;
	e->request = c->memory;
}

/* The hints one provider offers (the kubelet's explicit list). */
static void provider_event(struct np_explain *ex, const struct np_provider *p0)
{
	struct np_provider p = *p0;
	struct np_ex_event *e = np_explain_add(ex, NP_EX_PROVIDER);
	int nn = np_nodemask_count(p.nodes);

	if (!e)
		return;
	snprintf(e->name, sizeof(e->name), "%s", p.resource);
	e->code = p.kind;
	e->request = p.request[0];
	NP_NODEMASK_FOREACH(node, p.nodes)
	{
		struct np_ex_entry *x;
		if (e->nent == NP_EX_ENTRIES) {
			e->truncated = true;
			break;
		}
		x = &e->ent[e->nent++];
		x->id = node;
		x->key[0] = (int64_t)p.avail[0][node];
		x->key[1] = (int64_t)p.total[0][node];
	}
	if (p.kind == NP_PROV_NONE || nn > NP_HINTS_EXPLICIT_MAX_NODES)
		return;
	e->count = -1; /* no hint can ever fit */
	if (np_provider_finish(&p) == 0) {
		struct np_hint *h = malloc(sizeof(*h) << nn);
		if (!h) {
			ex->oom = true;
			return;
		}
		e->count = np_provider_hints(&p, h);
		e->nhint = e->count > 64 ? 64 : e->count;
		e->truncated |= e->nhint < e->count;
		e->hfirst = np_explain_add_hints(ex, h, e->nhint);
		if (e->hfirst < 0)
			e->nhint = 0;
		free(h);
	}
}

/* Mean distance over the ordered pairs of m (i == j included), x1000. */
static int64_t avg_distance(const struct np_hints_query *q, np_nodemask m)
{
	int64_t sum = 0, n = 0;

	if (!q->distance)
		return 0;
	NP_NODEMASK_FOREACH(i, m)
	NP_NODEMASK_FOREACH(j, m)
	{
		sum += q->distance[i][j];
		n++;
	}
	return n ? sum * 1000 / n : 0;
}

/* Preferred by every provider (finished copies in p). */
static bool all_prefer(const struct np_hints_query *q,
		       const struct np_provider *p, np_nodemask m)
{
	if (q->policy == NP_TM_SINGLE_NUMA_NODE && np_nodemask_count(m) != 1)
		return false;
	for (int i = 0; i < q->nprov; i++)
		if (p[i].kind != NP_PROV_NONE &&
		    (!np_provider_feasible(&p[i], m) ||
		     !np_provider_preferred(&p[i], m)))
			return false;
	return true;
}

/* Why best won among the preferred sets of its width. */
static void merge_why(const struct np_hints_query *q, struct np_ex_event *e)
{
	struct np_provider p[2 + 8];
	np_nodemask best = e->hint.mask, other = 0;
	int width = np_nodemask_count(best);
	bool found = false;

	if (q->nprov > (int)(sizeof(p) / sizeof(p[0])) ||
	    np_nodemask_count(q->nodes) > NP_HINTS_EXPLICIT_MAX_NODES)
		return;
	for (int i = 0; i < q->nprov; i++) {
		p[i] = q->prov[i];
		if (p[i].kind != NP_PROV_NONE && np_provider_finish(&p[i]))
			return;
	}
	e->code = NP_EXM_ONLY;
	for (np_nodemask m = q->nodes; m; m = (m - 1) & q->nodes) {
		if (m == best || np_nodemask_count(m) != width ||
		    !all_prefer(q, p, m))
			continue;
		if (!found || (q->prefer_closest &&
			       avg_distance(q, m) < avg_distance(q, other)) ||
		    ((!q->prefer_closest ||
		      avg_distance(q, m) == avg_distance(q, other)) &&
		     m < other))
			other = m;
		found = true;
	}
	if (!found)
		return;
	e->mask = other;
	e->value[0] = avg_distance(q, best);
	e->value[1] = avg_distance(q, other);
	e->code = q->prefer_closest && e->value[0] != e->value[1]
			  ? NP_EXM_CLOSER
			  : NP_EXM_LOWER_MASK;
}

void np_ex_merge(struct np_explain *ex, const struct np_hints_query *q,
		 const struct np_merge_result *res)
{
	struct np_ex_event *e;
	bool any = false;

	for (int i = 0; i < q->nprov; i++) {
		provider_event(ex, &q->prov[i]);
		any |= q->prov[i].kind != NP_PROV_NONE;
	}
	if (!(e = np_explain_add(ex, NP_EX_MERGE)))
		return;
	e->hint = res->best;
	e->count = res->admit;
	e->unit = q->policy;
	if (!any || res->best.any)
		e->code = NP_EXM_NO_ALIGNMENT;
	else if (!res->best.preferred)
		e->code = NP_EXM_NOT_PREFERRED;
	else
		merge_why(q, e);
}

void np_ex_pod_hint(struct np_explain *ex, const struct np_hint *h)
{
	struct np_ex_event *e = np_explain_add(ex, NP_EX_MERGE);

	if (!e)
		return;
	e->hint = *h;
	e->count = 1;
	e->code = NP_EXM_POD;
}

void np_ex_strategy(struct np_explain *ex, const struct np_take_req *q,
		    const np_cpuset *avail)
{
	struct np_ex_event *e = np_explain_add(ex, NP_EX_STRATEGY);

	if (!e)
		return;
	e->count = q->count;
	e->cpus = *avail;
	if (q->koord) {
		enum np_bind_policy b = q->bind_policy == NP_BIND_DEFAULT
						? NP_BIND_FULL_PCPUS
						: q->bind_policy;
		e->code = NP_EXT_KOORD;
		snprintf(e->name, sizeof(e->name), "%s%s, %s, exclusive %s",
			 np_bind_policy_name(b), q->required ? " (required)" : "",
			 np_numa_strategy_name(q->numa_strategy),
			 np_exclusive_policy_name(q->exclusive_policy));
		return;
	}
	e->code = q->distribute_across_numa	 ? NP_EXT_KUBELET_DISTRIBUTED
		  : q->strategy == NP_TAKE_SPREAD ? NP_EXT_KUBELET_SPREAD
						  : NP_EXT_KUBELET_PACKED;
	snprintf(e->name, sizeof(e->name), "%s%s",
		 q->group_size > 1 ? "full-pcpus-only" : "",
		 q->prefer_uncore ? (q->group_size > 1
					     ? ", prefer-align-cpus-by-uncorecache"
					     : "prefer-align-cpus-by-uncorecache")
				  : "");
}

struct np_ex_event *np_ex_order(struct np_explain *ex, int step, int unit,
				int n)
{
	struct np_ex_event *e = np_explain_add(ex, NP_EX_ORDER);

	if (!e)
		return NULL;
	e->step = step;
	e->unit = unit;
	e->nent = n;
	return e;
}

/* The skip event of (why, name) among those from `from` on, added. */
static struct np_ex_event *skip_event(struct np_explain *ex, int from, int why,
				      const char *name)
{
	struct np_ex_event *e;

	for (int i = from; i < ex->n; i++)
		if (ex->ev[i].kind == NP_EX_SKIP && ex->ev[i].code == why &&
		    !strcmp(ex->ev[i].name, name))
			return &ex->ev[i];
	if (!(e = np_explain_add(ex, NP_EX_SKIP)))
		return NULL;
	e->code = why;
	snprintf(e->name, sizeof(e->name), "%s", name);
	return e;
}

/* Why cpu (not taken) was not: NP_EXS_*, and the holder's name. */
static int skip_why(const struct np_node_state *st, const np_cpuset *pool,
		    const np_cpuset *aligned, int cpu, const char **holder)
{
	const struct np_workload_alloc *self = st->w[st->nworkloads];

	*holder = "";
	if (!np_cpuset_test(&st->topo->online, cpu) ||
	    np_cpuset_test(&st->offline, cpu))
		return NP_EXS_OFFLINE;
	if (np_cpuset_test(&st->reserved, cpu))
		return NP_EXS_RESERVED;
	for (int i = 0; i < st->nworkloads; i++)
		for (int c = 0; c < st->w[i]->ncontainers; c++)
			if (np_cpuset_test(st->w[i]->c[c].cpus, cpu)) {
				*holder = st->w[i]->req.name;
				return NP_EXS_HELD;
			}
	for (int c = 0; c < self->ncontainers; c++)
		if (np_cpuset_test(self->c[c].cpus, cpu)) {
			*holder = np_container_name(self, c);
			return NP_EXS_SIBLING;
		}
	if (!np_cpuset_test(pool, cpu))
		return st->policy.opt.full_pcpus_only ? NP_EXS_SPLIT_CORE
						      : NP_EXS_NOT_ALLOCATABLE;
	if (!np_cpuset_test(aligned, cpu))
		return NP_EXS_OUTSIDE_HINT;
	return NP_EXS_LATER;
}

void np_ex_skips(struct np_explain *ex, const struct np_node_state *st,
		 const np_cpuset *pool, const np_cpuset *aligned,
		 const np_cpuset *got)
{
	const struct np_topology *t = st->topo;
	int from = ex->n;

	for (int cpu = 0; cpu < t->max_cpu; cpu++) {
		struct np_ex_event *e;
		const char *holder;
		int why;

		if (!t->cpu[cpu].present || np_cpuset_test(got, cpu))
			continue;
		why = skip_why(st, pool, aligned, cpu, &holder);
		if ((e = skip_event(ex, from, why, holder)))
			np_cpuset_set(&e->cpus, cpu);
	}
}

void np_ex_result(struct np_explain *ex, const char *name,
		  const struct np_container_alloc *a)
{
	struct np_ex_event *e = np_explain_add(ex, NP_EX_RESULT);

	if (!e)
		return;
	snprintf(e->name, sizeof(e->name), "%s", name);
	e->code = a->exclusive;
	e->cpus = *a->cpus;
	e->hint = a->hint;
	e->mask = a->mems;
	e->count = a->ndev;
}

void np_ex_reject(struct np_explain *ex, const char *resource,
		  const char *reason)
{
	struct np_ex_event *e = np_explain_add(ex, NP_EX_REJECT);

	snprintf(ex->reason, sizeof(ex->reason), "%s", reason);
	if (e)
		snprintf(e->name, sizeof(e->name), "%s", resource);
}

bool np_explain_result(const struct np_explain *ex, int c, np_cpuset *out)
{
	for (int i = 0; i < ex->n; i++)
		if (ex->ev[i].kind == NP_EX_RESULT && ex->ev[i].container == c) {
			*out = ex->ev[i].cpus;
			return true;
		}
	return false;
}
