// SPDX-License-Identifier: Apache-2.0
/*
 * JSON forms of admission results: Koordinator-style resource status, node
 * state (load and save), and the check of an "admit" result against its
 * expectation. Workload specs are in admit_spec_json.c; the planner's
 * "admit" is in plan.c.
 */
#include "engine/json_util.h"
#include "engine/plan_internal.h"
#include "numaplace/admit.h"
#include "numaplace/strmap.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Koordinator's cpuSharedPools: the shared pool split per NUMA node. */
static json_t *shared_pools_json(const struct np_node_state *st,
				 const np_cpuset *pool, np_nodemask only)
{
	const struct np_topology *t = st->topo;
	json_t *a = json_array();

	for (int i = 0; i < t->nnuma; i++) {
		np_cpuset in;
		if (only && !np_nodemask_test(only, t->numa[i].u.id))
			continue;
		np_cpuset_and(&in, pool, &t->numa[i].u.cpus);
		if (np_cpuset_empty(&in))
			continue;
		json_array_append_new(
		    a,
		    json_pack(
			"{s:i,s:i,s:o}", "socket",
			t->sockets[t->cpu[np_cpuset_first(&in)].socket].id,
			"node", t->numa[i].u.id, "cpuset", np_json_cpuset_str(&in)));
	}
	return a;
}

json_t *np_shared_pools_to_json(const struct np_node_state *st,
				const np_cpuset *pool)
{
	return shared_pools_json(st, pool, 0);
}

json_t *np_pools_to_json(const struct np_node_state *st)
{
	struct np_pools p;
	np_state_pools(st, &p);
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}", "reserved",
			 np_json_cpuset_str(&p.reserved), "shared",
			 np_json_cpuset_str(&p.shared), "exclusive",
			 np_json_cpuset_str(&p.exclusive), "be", np_json_cpuset_str(&p.be),
			 "allocatable", np_json_cpuset_str(&p.allocatable),
			 "cpuSharedPools", shared_pools_json(st, &p.shared, 0),
			 "beSharedPools", shared_pools_json(st, &p.be, 0));
}

/* The CPUs a container of this class actually runs on. */
static void effective_cpus(const struct np_node_state *st,
			   const struct np_pools *p,
			   const struct np_workload_alloc *a,
			   const struct np_container_alloc *c, np_cpuset *out)
{
	if (c->exclusive) {
		*out = *c->cpus;
		return;
	}
	*out = a->qos_class == NP_QOS_BE ? p->be : p->shared;
	if (!c->hint.any) {
		np_cpuset in;
		np_topology_cpus_of_nodes(st->topo, c->hint.mask, &in);
		np_cpuset_and(&in, &in, out);
		if (!np_cpuset_empty(&in))
			*out = in;
	}
}

json_t *np_workload_alloc_to_json(const struct np_node_state *st,
				  const struct np_workload_alloc *a)
{
	struct np_pools p;

	np_state_pools(st, &p);
	return np_workload_alloc_to_json_with(st, &p, a);
}

json_t *np_workload_alloc_to_json_with(const struct np_node_state *st,
				       const struct np_pools *pp,
				       const struct np_workload_alloc *a)
{
	json_t *o = json_object(), *cs = json_array();
	np_cpuset all, excl;
	np_nodemask mems = 0;

	np_cpuset_zero(&all);
	np_cpuset_zero(&excl);
	for (int i = 0; i < a->ncontainers; i++) {
		const struct np_container_alloc *c = &a->c[i];
		json_t *co, *dv = json_object();
		np_cpuset eff;
		effective_cpus(st, pp, a, c, &eff);
		np_cpuset_or(&all, &all, &eff);
		if (c->exclusive)
			np_cpuset_or(&excl, &excl, c->cpus);
		mems |= c->mems;
		for (int k = 0; k < c->ndev; k++) {
			const struct np_device *x =
			    &st->topo->devices[c->dev[k]];
			json_t *l = json_object_get(dv, x->resource);
			if (!l) {
				l = json_array();
				json_object_set_new(dv, x->resource, l);
			}
			json_array_append_new(l, json_string(x->id));
		}
		co = json_pack("{s:s,s:o,s:b,s:o,s:o,s:o}", "name",
			       np_container_name(a, i),
			       "cpuset", np_json_cpuset_str(&eff), "exclusive",
			       c->exclusive, "mems", np_json_nodemask(c->mems), "hint",
			       np_json_hint(&c->hint), "devices", dv);
		if (co && i < a->req.ncontainers && a->req.c[i].init)
			json_object_set_new(co, "init", json_true());
		if (co && c->pod_shared)
			json_object_set_new(co, "pod_shared", json_true());
		json_array_append_new(cs, co);
	}
	json_object_set_new(o, "name", json_string(a->req.name));
	json_object_set_new(o, "cgroup", json_string(a->req.cgroup));
	if (a->req.container_id) /* an OCI container's (from the root) */
		json_object_set_new(o, "container_id",
				    json_string(a->req.container_id));
	json_object_set_new(o, "qos", json_string(np_qos_name(a->req.qos)));
	json_object_set_new(o, "class", json_string(np_qos_name(a->qos_class)));
	/* the pod's CPUs that no container got are the pod's too */
	if (a->pod_rest) {
		np_cpuset_or(&all, &all, a->pod_rest);
		np_cpuset_or(&excl, &excl, a->pod_rest);
		json_object_set_new(o, "pod_rest",
				    np_json_cpuset_str(a->pod_rest));
	}
	json_object_set_new(o, "cpuset", np_json_cpuset_str(&all));
	json_object_set_new(o, "exclusive",
			    json_boolean(!np_cpuset_empty(&excl)));
	json_object_set_new(o, "mems", np_json_nodemask(mems));
	if (np_cpuset_empty(&excl))
		json_object_set_new(
		    o, "cpuSharedPools",
		    shared_pools_json(
			st, a->qos_class == NP_QOS_BE ? &pp->be : &pp->shared, 0));
	json_object_set_new(o, "containers", cs);
	return o;
}

json_t *np_decision_to_json(const struct np_node_state *st,
			    const struct np_decision *d)
{
	json_t *o;
	if (!d->admitted || !d->alloc) {
		o = json_pack("{s:b,s:s,s:s,s:s}", "admitted", 0, "workload",
			      d->workload, "resource", d->resource, "reason",
			      d->reason);
		if (o && d->error_kind[0])
			json_object_set_new(o, "error_kind",
					    json_string(d->error_kind));
		return o;
	}
	o = np_workload_alloc_to_json(st, d->alloc);
	json_object_set_new(o, "admitted", json_true());
	return o;
}

/* ---- node state (planner "state" and the daemon's checkpoint body) ---- */

/* A node id of this machine, checked before it is narrowed to an int
 * (a checkpoint's 2^32 would otherwise become node 0 or shift past 63). */
static bool node_ok(const struct np_topology *t, long long n)
{
	return n >= 0 && n < NP_MAX_NUMA && np_nodemask_test(t->numa_mask, (int)n);
}

/* "memory" (node -> bytes) and "hugepages" of a saved container. */
static int charges_from_json(const struct np_topology *t,
			     struct np_container_alloc *ca, const json_t *o,
			     const char *path, char *err, size_t errlen)
{
	const json_t *mem, *hp, *dv, *v;
	const char *key;
	size_t i;

	mem = json_object_get(o, "memory");
	hp = json_object_get(o, "hugepages");
	dv = json_object_get(o, "devices");
	if (mem && !json_is_object(mem))
		return np_json_fail(err, errlen, path, "memory",
				    "expected an object of NUMA node -> bytes");
	if ((hp && !json_is_array(hp)) || (dv && !json_is_array(dv)))
		return np_json_fail(err, errlen, path,
				    hp && !json_is_array(hp) ? "hugepages"
							     : "devices",
				    "expected an array");
	if (json_is_object(mem))
		json_object_foreach((json_t *)mem, key, v)
		{
			char *end;
			long long n;
			errno = 0;
			n = strtoll(key, &end, 10);
			if (!*key || *end || errno || !node_ok(t, n) ||
			    !json_is_integer(v) || json_integer_value(v) < 0)
				return np_json_fail(err, errlen, path, "memory",
						    "bad entry \"%s\"", key);
			if (!ca->charge &&
			    !(ca->charge = calloc(1, sizeof(*ca->charge))))
				return -ENOMEM;
			ca->charge->mem[n] = (uint64_t)json_integer_value(v);
		}
	if (json_is_array(hp))
		json_array_foreach(hp, i, v)
		{
			if (!json_is_integer(json_object_get(v, "size_index")) ||
			    !json_is_integer(json_object_get(v, "node")) ||
			    !json_is_integer(json_object_get(v, "pages")))
				return np_json_fail(err, errlen, path,
						    "hugepages",
						    "entry %zu: expected integers "
						    "size_index, node and pages",
						    i);
			long long si = json_integer_value(
			    json_object_get(v, "size_index"));
			long long n =
			    json_integer_value(json_object_get(v, "node"));
			long long pg =
			    json_integer_value(json_object_get(v, "pages"));
			if (si < 0 || si >= NP_MAX_HUGEPAGE_SIZES ||
			    !node_ok(t, n) || pg < 0)
				return np_json_fail(err, errlen, path,
						    "hugepages",
						    "bad entry %zu", i);
			if (!ca->charge &&
			    !(ca->charge = calloc(1, sizeof(*ca->charge))))
				return -ENOMEM;
			ca->charge->huge[si][n] = (uint64_t)pg;
		}
	return 0;
}

static int container_alloc_from_json(const struct np_node_state *st,
				     struct np_container_alloc *ca,
				     const char *name, const json_t *o,
				     const char *path, char *err,
				     size_t errlen)
{
	const struct np_topology *t = st->topo;
	const json_t *h, *dv, *v;
	np_cpuset base, cpus;
	const char *s;
	char perr[200];
	size_t i;
	int r;

	memset(ca, 0, sizeof(*ca));
	ca->cpus = &np_cpuset_empty_set;
	if ((r = np_json_str(o, "name", path, true, &s, err, errlen)))
		return r;
	/* one copy of the name, the request's: the two must agree */
	if (strcmp(s, name))
		return np_json_fail(err, errlen, path, "name",
				    "\"%s\" is not the name of the spec's "
				    "container at this place (\"%s\")",
				    s, name);
	if ((r = np_json_bool(o, "exclusive", path, true, &ca->exclusive, err,
			      errlen)) ||
	    (r = np_json_cpuset(o, "cpus", path, true, &cpus, err, errlen)))
		return r;
	if (!np_cpuset_subset(&cpus, &t->online))
		return np_json_fail(err, errlen, path, "cpus",
				    "names CPUs that are not online here");
	if ((r = np_container_set_cpus(ca, &cpus)))
		return r;
	r = np_json_bool(o, "pod_shared", path, false, &ca->pod_shared, err,
			 errlen);
	if ((r && r != -ENOENT) || (ca->pod_shared && !ca->exclusive))
		return r && r != -ENOENT
			   ? r
			   : np_json_fail(err, errlen, path, "pod_shared",
					  "a share of the pod's CPUs is "
					  "exclusive to the pod");
	/* An in-place resize's baseline: within the current CPUs. */
	np_cpuset_zero(&base);
	r = np_json_cpuset(o, "baseline", path, false, &base, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if (!np_cpuset_subset(&base, ca->cpus) ||
	    (r == 0 && (!ca->exclusive || np_cpuset_empty(&base))))
		return np_json_fail(err, errlen, path, "baseline",
				    "must be a non-empty subset of an "
				    "exclusive container's cpus");
	if (r == 0) {
		if (!(ca->baseline = malloc(sizeof(*ca->baseline))))
			return -ENOMEM;
		*ca->baseline = base;
	}
	if ((r = np_json_str(o, "mems", path, true, &s, err, errlen)))
		return r;
	if (np_nodemask_parse(&ca->mems, s, perr, sizeof(perr)) ||
	    (ca->mems & ~t->numa_mask))
		return np_json_fail(
		    err, errlen, path, "mems",
		    "\"%s\" is not a set of this machine's NUMA "
		    "nodes",
		    s);
	h = json_object_get(o, "hint");
	ca->hint.any = true;
	if (json_is_object(h)) {
		const json_t *m = json_object_get(h, "mask");
		ca->hint.preferred =
		    json_is_true(json_object_get(h, "preferred"));
		if (json_is_array(m)) {
			ca->hint.any = false;
			json_array_foreach(m, i, v)
			{
				if (!json_is_integer(v) ||
				    !node_ok(t, json_integer_value(v)))
					return np_json_fail(
					    err, errlen, path, "hint",
					    "mask names an unknown "
					    "NUMA node");
				ca->hint.mask |=
				    NP_NODEMASK_BIT(json_integer_value(v));
			}
		}
	}
	if ((r = charges_from_json(t, ca, o, path, err, errlen)))
		return r;
	dv = json_object_get(o, "devices");
	if (json_is_array(dv))
		json_array_foreach(dv, i, v)
		{
			const char *id =
			    json_string_value(json_object_get(v, "id"));
			int known = -1;
			if (!id || ca->ndev >= 16)
				return np_json_fail(err, errlen, path,
						    "devices", "bad entry %zu",
						    i);
			for (int k = 0; k < t->ndevices; k++)
				if (!strcmp(t->devices[k].id, id))
					known = k;
			if (known < 0)
				return np_json_fail(
				    err, errlen, path, "devices",
				    "device \"%s\" does not exist "
				    "here",
				    id);
			ca->dev[ca->ndev++] = (int16_t)known;
		}
	return 0;
}

/* "partitioned_by" of a saved workload (optional). */
static int partitioned_by_from_json(struct np_workload_alloc *a,
				    const json_t *wj, const char *wp,
				    char *err, size_t errlen)
{
	const char *s;
	int r = np_json_str(wj, "partitioned_by", wp, false, &s, err, errlen);

	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	if (strcmp(s, "verify"))
		return np_json_fail(err, errlen, wp, "partitioned_by",
				    "\"%s\": expected \"verify\"", s);
	if (!a->req.partition)
		return np_json_fail(err, errlen, wp, "partitioned_by",
				    "only with isolation \"partition\"");
	a->partition_by_verify = true;
	return 0;
}

/* The containers of a saved workload: exclusive sets are what the spec
 * asks, off the reserved CPUs, and overlap no other workload's (seen) nor,
 * between app containers, each other (an init container's CPUs are reused
 * by the containers after it). */
static int containers_from_json(const struct np_node_state *st,
				struct np_workload_alloc *a, const json_t *wj,
				const char *wp, np_cpuset *seen, char *err,
				size_t errlen)
{
	const json_t *cs = json_object_get(wj, "containers"), *cj;
	np_cpuset apps, all, podsh;
	char cp[192];
	size_t k;
	int r;

	np_cpuset_zero(&apps);
	np_cpuset_zero(&podsh);
	np_cpuset_zero(&all);
	if (!json_is_array(cs) ||
	    (int)json_array_size(cs) != a->req.ncontainers)
		return np_json_fail(err, errlen, wp, "containers",
				    "expected %d entries (one per container "
				    "of the spec)",
				    a->req.ncontainers);
	if (!(a->c = np_container_allocs_new(a->req.ncontainers)))
		return -ENOMEM;
	a->ncontainers = a->req.ncontainers;
	json_array_foreach(cs, k, cj)
	{
		const np_cpuset *c;

		snprintf(cp, sizeof(cp), "%s.containers[%zu]", wp, k);
		if ((r = container_alloc_from_json(st, &a->c[k],
						   a->req.c[k].name, cj, cp,
						   err, errlen)))
			return r;
		c = a->c[k].cpus;
		if (!a->c[k].exclusive)
			continue;
		if (!a->c[k].pod_shared &&
		    (long long)np_cpuset_count(c) * 1000 !=
			(long long)a->req.c[k].cpu_milli)
			return np_json_fail(err, errlen, cp, "cpus",
					    "holds %d CPU(s), its spec asks "
					    "for %lldm",
					    np_cpuset_count(c),
					    (long long)a->req.c[k].cpu_milli);
		/* pod_shared containers share the pod's rest: they may
		 * overlap each other, not the containers' own sets */
		if (np_cpuset_intersects(c, seen) ||
		    (!a->req.c[k].init && np_cpuset_intersects(c, &apps)) ||
		    (!a->c[k].pod_shared && !a->req.c[k].init &&
		     np_cpuset_intersects(c, &podsh)))
			return np_json_fail(err, errlen, cp, "cpus",
					    "overlaps another exclusive "
					    "allocation");
		if (np_cpuset_intersects(c, &st->reserved))
			return np_json_fail(err, errlen, cp, "cpus",
					    "includes reserved CPUs");
		if (a->c[k].pod_shared)
			np_cpuset_or(&podsh, &podsh, c);
		else if (!a->req.c[k].init)
			np_cpuset_or(&apps, &apps, c);
		np_cpuset_or(&all, &all, c);
	}
	np_cpuset_or(seen, seen, &all);
	return 0;
}

/* "pod_rest" of a saved workload (optional): the CPUs of a pod's budget
 * that none of its containers, each with its own request, got. They are
 * the budget less those requests, off the reserved CPUs, and overlap no
 * exclusive set seen (this workload's containers included). */
static int pod_rest_from_json(const struct np_node_state *st,
			      struct np_workload_alloc *a, const json_t *wj,
			      const char *wp, np_cpuset *seen, char *err,
			      size_t errlen)
{
	np_cpuset rest;
	long long own = 0;
	int r = np_json_cpuset(wj, "pod_rest", wp, false, &rest, err, errlen);

	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	for (int k = 0; k < a->ncontainers; k++) {
		if (!a->c[k].exclusive || a->c[k].pod_shared)
			return np_json_fail(err, errlen, wp, "pod_rest",
					    "only when every container has "
					    "its own exclusive CPUs");
		own += a->req.c[k].init ? 0 : a->req.c[k].cpu_milli;
	}
	if (!a->req.has_pod_res ||
	    (long long)np_cpuset_count(&rest) * 1000 + own !=
		(long long)a->req.pod_cpu_milli)
		return np_json_fail(err, errlen, wp, "pod_rest",
				    "holds %d CPU(s), not the pod's "
				    "resources.cpu less its containers' own",
				    np_cpuset_count(&rest));
	if (np_cpuset_intersects(&rest, seen))
		return np_json_fail(err, errlen, wp, "pod_rest",
				    "overlaps another exclusive allocation");
	if (np_cpuset_intersects(&rest, &st->reserved))
		return np_json_fail(err, errlen, wp, "pod_rest",
				    "includes reserved CPUs");
	if (!(a->pod_rest = malloc(sizeof(*a->pod_rest))))
		return -ENOMEM;
	*a->pod_rest = rest;
	np_cpuset_or(seen, seen, &rest);
	return 0;
}

/* A state's workloads taken one at a time (np_state_load_begin). */
struct np_state_loader {
	struct np_node_state *st;
	const char *path;
	/* n filled, cap slots: NULL past n but for the one being read at
	 * arr[n] (each its own heap allocation, the state's array once
	 * loaded) */
	struct np_workload_alloc **arr;
	size_t n, cap;
	struct np_strmap names, cgroups;
	np_cpuset seen; /* every exclusive set so far */
};

int np_state_load_begin(struct np_state_loader **out, struct np_node_state *st,
			const char *path, size_t hint)
{
	struct np_state_loader *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l || !(l->arr = calloc(hint + 1, sizeof(*l->arr)))) {
		free(l);
		return -ENOMEM;
	}
	l->st = st;
	l->path = path ? path : "state";
	l->cap = hint + 1;
	np_cpuset_zero(&l->seen);
	*out = l;
	return 0;
}

void np_state_load_abort(struct np_state_loader *l)
{
	if (!l)
		return;
	np_strmap_free(&l->names);
	np_strmap_free(&l->cgroups);
	/* arr is NULL past the failing entry: free what was filled. */
	for (size_t x = 0; x < l->cap; x++)
		if (l->arr[x]) {
			np_workload_alloc_free(l->arr[x]);
			free(l->arr[x]);
		}
	free(l->arr);
	free(l);
}

/* Its name and cgroup are no other's so far. */
static int load_names(struct np_state_loader *l, struct np_workload_alloc *a,
		      const char *cp, char *err, size_t errlen)
{
	long other;
	int r;

	/* a map, not a pairwise check: 50,000 workloads took minutes */
	if (np_strmap_get(&l->names, a->req.name, NULL))
		return np_json_fail(err, errlen, cp, "name",
				    "duplicate workload \"%s\"", a->req.name);
	if ((r = np_strmap_put(&l->names, a->req.name, (long)l->n)))
		return r;
	/* one cgroup, one workload (the daemon refuses a second) */
	if (!a->req.cgroup || !a->req.cgroup[0])
		return 0;
	if (np_strmap_get(&l->cgroups, a->req.cgroup, &other))
		return np_json_fail(err, errlen, cp, "cgroup",
				    "\"%.200s\" is workload %s's already",
				    a->req.cgroup, l->arr[other]->req.name);
	return np_strmap_put(&l->cgroups, a->req.cgroup, (long)l->n);
}

int np_state_load_add(struct np_state_loader *l, const json_t *wj, char *err,
		      size_t errlen)
{
	struct np_workload_alloc *a;
	const char *s;
	char wp[128], cp[192];
	int r;

	if (l->n + 1 >= l->cap) { /* one NULL slot past the filled ones */
		size_t cap = 2 * l->cap;
		struct np_workload_alloc **g =
		    realloc(l->arr, cap * sizeof(*g));
		if (!g)
			return -ENOMEM;
		memset(g + l->cap, 0, (cap - l->cap) * sizeof(*g));
		l->arr = g;
		l->cap = cap;
	}
	if (!l->arr[l->n] && !(l->arr[l->n] = calloc(1, sizeof(**l->arr))))
		return -ENOMEM;
	a = l->arr[l->n];
	snprintf(wp, sizeof(wp), "%s.workloads[%zu]", l->path, l->n);
	snprintf(cp, sizeof(cp), "%s.spec", wp);
	if ((r = np_workload_req_from_json(&a->req, json_object_get(wj, "spec"),
					   cp, err, errlen)) ||
	    (r = load_names(l, a, cp, err, errlen)) ||
	    (r = np_json_str(wj, "class", wp, true, &s, err, errlen)))
		return r;
	if (np_qos_parse(s, &a->qos_class) < 0)
		return np_json_fail(err, errlen, wp, "class",
				    "unknown class \"%s\"", s);
	a->excl = a->req.excl;
	if ((r = partitioned_by_from_json(a, wj, wp, err, errlen)) ||
	    (r = containers_from_json(l->st, a, wj, wp, &l->seen, err,
				      errlen)) ||
	    (r = pod_rest_from_json(l->st, a, wj, wp, &l->seen, err, errlen)))
		return r;
	l->n++;
	return 0;
}

int np_state_load_end(struct np_state_loader *l, const json_t *j, char *err,
		      size_t errlen)
{
	struct np_node_state *st = l->st;
	int r;

	np_strmap_free(&l->names);
	np_strmap_free(&l->cgroups);
	if ((r = np_state_check_default(st, l->arr, (int)l->n, j, l->path,
					err, errlen))) {
		np_state_load_abort(l);
		return r;
	}
	/* a slot read but not taken (a failed add) is not the state's */
	if (l->arr[l->n]) {
		np_workload_alloc_free(l->arr[l->n]);
		free(l->arr[l->n]);
		l->arr[l->n] = NULL;
	}
	/* no more room than np_state_load_json's n + 1 (grown by
	 * doubling when streamed: given back) */
	if (l->cap > l->n + 1) {
		struct np_workload_alloc **g =
		    realloc(l->arr, (l->n + 1) * sizeof(*g));
		if (g) {
			l->arr = g;
			l->cap = l->n + 1;
		}
	}
	for (int x = 0; x < st->nworkloads; x++) {
		np_workload_alloc_free(st->w[x]);
		free(st->w[x]);
	}
	free(st->w);
	st->w = l->arr;
	st->nworkloads = (int)l->n;
	st->cap = (int)l->cap;
	free(l);
	return np_state_refresh(st);
}

int np_state_load_json(struct np_node_state *st, const json_t *j,
		       const char *path, char *err, size_t errlen)
{
	struct np_state_loader *l;
	const json_t *ws, *wj;
	size_t i;
	int r;

	if (!path)
		path = "state";
	if (!j || json_is_null(j))
		return 0;
	ws = json_object_get(j, "workloads");
	if (!json_is_array(ws))
		return np_json_fail(err, errlen, path, "workloads",
				    "expected an array");
	if ((r = np_state_load_begin(&l, st, path, json_array_size(ws))))
		return r;
	json_array_foreach(ws, i, wj)
	{
		if ((r = np_state_load_add(l, wj, err, errlen))) {
			np_state_load_abort(l);
			return r;
		}
	}
	return np_state_load_end(l, j, err, errlen);
}

/* expect's key k (a CPU list) against the result's at got: 0 or -1. */
static int check_cpus(const json_t *expect, const char *k, const json_t *got,
		      char *why, size_t len)
{
	const json_t *e = json_object_get(expect, k);
	const char *g = json_string_value(got);
	np_cpuset a, b;

	if (!e)
		return 0;
	if (g && json_is_string(e) && !np_cpuset_parse(&a, g, NULL, 0) &&
	    !np_cpuset_parse(&b, json_string_value(e), NULL, 0) &&
	    np_cpuset_equal(&a, &b))
		return 0;
	snprintf(why, len, "%s: got \"%s\", expected \"%s\"", k, g ? g : "",
		 json_is_string(e) ? json_string_value(e) : "?");
	return -1;
}

/* expect's key k (a string): equal, or a substring when sub. */
static int check_str(const json_t *expect, const char *k, const json_t *res,
		     bool sub, char *why, size_t len)
{
	const json_t *e = json_object_get(expect, k);
	const char *g = json_string_value(json_object_get(res, k));
	const char *x = json_string_value(e);

	if (!e || (x && !*x && !g)) /* "": the result has none */
		return 0;
	if (g && x && (sub ? strstr(g, x) != NULL : !strcmp(g, x)))
		return 0;
	snprintf(why, len, "%s: got \"%s\", expected %s\"%s\"", k, g ? g : "",
		 sub ? "a substring " : "", x ? x : "?");
	return -1;
}

/* expect's key k (a boolean; absent in the result is false). */
static int check_bool(const json_t *expect, const char *k, const json_t *res,
		      char *why, size_t len)
{
	const json_t *e = json_object_get(expect, k);
	bool g = json_is_true(json_object_get(res, k));

	if (!e || json_is_true(e) == g)
		return 0;
	snprintf(why, len, "%s: got %s, expected %s", k, g ? "true" : "false",
		 json_is_true(e) ? "true" : "false");
	return -1;
}

/* expect: any subset of {"admitted", "cpuset", "mems", "resource",
 * "again", "error_kind", "released", "workload_released", "cpus",
 * "resized", "previous" (a resize's CPUs before),
 * "shared", "note", "workloads"}; compared field by field ("resource" and
 * "note" are substrings, "" a string the result does not have, "shared"
 * is pools.shared, "workloads" the number of workloads in the result's
 * state). */
int np_admit_check(const json_t *expect, const json_t *result, char *why,
		   size_t len)
{
	const json_t *e;
	if ((e = json_object_get(expect, "admitted")) &&
	    json_is_true(e) !=
		json_is_true(json_object_get(result, "admitted"))) {
		const char *reason =
		    json_string_value(json_object_get(result, "reason"));
		snprintf(why, len, "admitted: expected %s%s%s",
			 json_is_true(e) ? "true" : "false",
			 reason ? ", rejected: " : "", reason ? reason : "");
		return -1;
	}
	if (check_cpus(expect, "cpuset", json_object_get(result, "cpuset"),
		       why, len) ||
	    check_cpus(expect, "cpus", json_object_get(result, "cpus"), why,
		       len) ||
	    check_cpus(expect, "shared",
		       json_object_get(json_object_get(result, "pools"),
				       "shared"),
		       why, len) ||
	    check_str(expect, "mems", result, false, why, len) ||
	    check_str(expect, "resource", result, true, why, len) ||
	    check_str(expect, "error_kind", result, false, why, len) ||
	    check_str(expect, "note", result, true, why, len) ||
	    check_bool(expect, "again", result, why, len) ||
	    check_bool(expect, "released", result, why, len) ||
	    check_bool(expect, "workload_released", result, why, len) ||
	    check_bool(expect, "resized", result, why, len) ||
	    check_cpus(expect, "previous", json_object_get(result, "previous"),
		       why, len))
		return -1;
	if ((e = json_object_get(expect, "workloads"))) {
		const json_t *ws = json_object_get(
		    json_object_get(result, "state"), "workloads");
		if (!json_is_integer(e) ||
		    json_integer_value(e) != (json_int_t)json_array_size(ws)) {
			snprintf(why, len,
				 "workloads: got %zu in the state, expected "
				 "%lld",
				 json_array_size(ws),
				 (long long)json_integer_value(e));
			return -1;
		}
	}
	return 0;
}
