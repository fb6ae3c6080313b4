// SPDX-License-Identifier: Apache-2.0
/*
 * The what-if planner: JSON request -> engine -> JSON result. Its core
 * (plan_internal.h: a request's node loaded, the workload it names, the
 * state and pools every result carries) and the kinds take, merge, admit
 * and release are here; resize (plan_resize.c) and be_suppress
 * (be_suppress_json.c) are kinds of their own files, one module behind
 * plan_internal.h.
 */
#include "numaplace/plan.h"
#include "numaplace/cleanup.h"
#include "engine/json_util.h"
#include "engine/plan_internal.h"
#include "numaplace/admit.h"
#include "numaplace/be_suppress.h"
#include "numaplace/merge.h"
#include "numaplace/names.h"
#include "numaplace/take.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *error_result(const char *msg)
{
	return json_pack("{s:s}", "error", msg);
}

static json_t *cpus_result(const np_cpuset *s)
{
	_cleanup_free_ char *str = np_cpuset_str(s);

	return str ? json_pack("{s:s}", "cpus", str) : NULL;
}

/* Optional fields: 0 (read, or absent and left as they were) or -EINVAL. */
static int opt_str(const json_t *obj, const char *key, const char **var,
		   char *err, size_t errlen)
{
	int r = np_json_str(obj, key, "", false, var, err, errlen);

	return r == -ENOENT ? 0 : r;
}

static int opt_bool(const json_t *obj, const char *key, bool *var, char *err,
		    size_t errlen)
{
	int r = np_json_bool(obj, key, "", false, var, err, errlen);

	return r == -ENOENT ? 0 : r;
}

/* "exclusive_marks": [{"cpus", "policy"}] into the marked sets of q. */
static int take_marks(const json_t *marks, struct np_take_req *q, char *err,
		      size_t errlen)
{
	const json_t *m;
	const char *s;
	size_t i;
	int r;

	if (!json_is_array(marks))
		return np_json_fail(err, errlen, "", "exclusive_marks",
				    "expected an array");
	json_array_foreach(marks, i, m)
	{
		char p[64];
		np_cpuset c;
		enum np_exclusive_policy ep;
		snprintf(p, sizeof(p), "exclusive_marks[%zu]", i);
		if ((r = np_json_cpuset(m, "cpus", p, true, &c, err, errlen)) ||
		    (r = np_json_str(m, "policy", p, true, &s, err, errlen)))
			return r;
		if (np_exclusive_policy_parse(s, &ep) < 0)
			return np_json_fail(err, errlen, p, "policy",
					    "\"%s\" is not PCPULevel or "
					    "NUMANodeLevel",
					    s);
		if (ep == NP_EXCL_PCPU_LEVEL)
			np_cpuset_or(&q->pcpu_marked, &q->pcpu_marked, &c);
		else if (ep == NP_EXCL_NUMA_NODE_LEVEL)
			np_cpuset_or(&q->numa_marked, &q->numa_marked, &c);
	}
	return 0;
}

/* The Koordinator fields of a take request (it has "bind_policy"). */
static int take_koord_fields(const json_t *req, struct np_take_req *q,
			     char *err, size_t errlen)
{
	const json_t *marks;
	const char *s = NULL;
	int r;

	q->koord = true;
	if ((r = opt_str(req, "bind_policy", &s, err, errlen)))
		return r;
	if (s && np_bind_policy_parse(s, &q->bind_policy) < 0)
		return np_json_fail(err, errlen, "", "bind_policy",
				    "\"%s\" is not Default, FullPCPUs or "
				    "SpreadByPCPUs",
				    s);
	if ((r = opt_bool(req, "required", &q->required, err, errlen)))
		return r;
	s = NULL;
	if ((r = opt_str(req, "exclusive_policy", &s, err, errlen)))
		return r;
	if (s && np_exclusive_policy_parse(s, &q->exclusive_policy) < 0)
		return np_json_fail(err, errlen, "", "exclusive_policy",
				    "\"%s\" is not None, PCPULevel or "
				    "NUMANodeLevel",
				    s);
	s = NULL;
	if ((r = opt_str(req, "numa_strategy", &s, err, errlen)))
		return r;
	if (s && np_numa_strategy_parse(s, &q->numa_strategy) < 0)
		return np_json_fail(err, errlen, "", "numa_strategy",
				    "\"%s\" is not MostAllocated, "
				    "LeastAllocated or DistributeEvenly",
				    s);
	r = np_json_cpuset(req, "preferred_cpus", "", false, &q->preferred, err,
			   errlen);
	if (r && r != -ENOENT)
		return r;
	q->has_preferred = r == 0;
	marks = json_object_get(req, "exclusive_marks");
	if (marks && !json_is_null(marks))
		return take_marks(marks, q, err, errlen);
	return 0;
}

/* The kubelet fields of a take request. */
static int take_kubelet_fields(const json_t *req, struct np_take_req *q,
			       char *err, size_t errlen)
{
	static const char *const strategy_names[] = {
	    [NP_TAKE_PACKED] = "packed",
	    [NP_TAKE_SPREAD] = "spread",
	};
	const char *s = NULL;
	bool has_cur, has_base;
	long long v;
	int r, i;

	if ((r = opt_str(req, "strategy", &s, err, errlen)))
		return r;
	i = s ? NP_NAME_FIND(strategy_names, s) : NP_TAKE_PACKED;
	if (i < 0)
		return np_json_fail(err, errlen, "", "strategy",
				    "\"%s\" is not packed or spread", s);
	q->strategy = (enum np_take_strategy)i;
	if ((r = opt_bool(req, "distribute_across_numa",
			  &q->distribute_across_numa, err, errlen)) ||
	    (r = opt_bool(req, "prefer_uncore", &q->prefer_uncore, err,
			  errlen)) ||
	    (r = opt_bool(req, "align_by_socket", &q->align_by_socket, err,
			  errlen)))
		return r;
	r = np_json_int(req, "group_size", "", false, 1, 64, &v, err, errlen);
	if (r && r != -ENOENT)
		return r;
	q->group_size = r == 0 ? (int)v : 1;
	r = np_json_cpuset(req, "current", "", false, &q->current, err, errlen);
	if (r && r != -ENOENT)
		return r;
	has_cur = r == 0;
	r = np_json_cpuset(req, "baseline", "", false, &q->baseline, err,
			   errlen);
	if (r && r != -ENOENT)
		return r;
	has_base = r == 0;
	if (has_cur != has_base)
		return np_json_fail(err, errlen, "",
				    has_cur ? "baseline" : "current",
				    "a resize needs both \"current\" and "
				    "\"baseline\"");
	q->resize = has_cur;
	return 0;
}

/* "affinity": [NODE, ...], a NUMA affinity (a Topology Manager hint's
 * mask) for a kubelet take; absent or null: none. */
static int parse_affinity(const json_t *req, const struct np_take_req *q,
			  np_nodemask *m, bool *has, char *err, size_t errlen)
{
	const json_t *v = json_object_get(req, "affinity"), *e;
	size_t i;

	*m = 0;
	*has = v && !json_is_null(v);
	if (!*has)
		return 0;
	if (q->koord || q->resize)
		return np_json_fail(err, errlen, "", "affinity",
				    "only for a fresh kubelet take (not with "
				    "bind_policy, current or baseline)");
	if (!json_is_array(v) || !json_array_size(v))
		return np_json_fail(err, errlen, "", "affinity",
				    "expected a non-empty array of NUMA node "
				    "ids");
	json_array_foreach(v, i, e)
	{
		json_int_t id = json_is_integer(e) ? json_integer_value(e) : -1;
		if (id < 0 || id >= NP_MAX_NUMA || q->topo->numa_index[id] < 0)
			return np_json_fail(err, errlen, "", "affinity",
					    "element %zu is not a NUMA node of "
					    "the topology",
					    i);
		*m |= NP_NODEMASK_BIT(id);
	}
	return 0;
}

/* The kubelet's allocateCPUs with a NUMA affinity: as many CPUs as it can
 * from those aligned with the affinity (takeByTopology over them), then
 * the rest from everything else available. */
static int take_affine(const struct np_take_req *q, np_nodemask affinity,
		       np_cpuset *out, char *why, size_t len)
{
	struct np_take_req a = *q;
	np_cpuset got;
	int n, r;

	np_topology_aligned_cpus(q->topo, affinity, q->align_by_socket,
				 &a.available);
	np_cpuset_and(&a.available, &a.available, &q->available);
	n = np_cpuset_count(&a.available);
	a.count = n < q->count ? n : q->count;
	np_cpuset_zero(out);
	if (a.count > 0 && (r = np_take(&a, out, why, len)))
		return r;
	if (a.count == q->count)
		return 0;
	a = *q;
	np_cpuset_andnot(&a.available, &q->available, out);
	a.count = q->count - np_cpuset_count(out);
	if ((r = np_take(&a, &got, why, len)))
		return r;
	np_cpuset_or(out, out, &got);
	return 0;
}

static int plan_take(const json_t *req, json_t **result, char *err,
		     size_t errlen)
{
	struct np_take_req q;
	struct np_topology *t = NULL;
	char why[512];
	long long v;
	np_cpuset out;
	np_nodemask affinity = 0;
	bool has_affinity = false;
	int r;

	memset(&q, 0, sizeof(q));
	if ((r = np_topology_from_json(&t, json_object_get(req, "topology"),
				       "topology", err, errlen)))
		goto out;
	q.topo = t;
	if ((r = np_json_cpuset(req, "available", "", true, &q.available, err,
				errlen)))
		goto out;
	if (!np_cpuset_subset(&q.available, &t->online)) {
		r = np_json_fail(err, errlen, "", "available",
				 "names CPUs that are not in the topology");
		goto out;
	}
	if ((r = np_json_int(req, "count", "", true, 0, NP_MAX_CPUS, &v, err,
			     errlen)))
		goto out;
	q.count = (int)v;
	if (json_object_get(req, "bind_policy"))
		r = take_koord_fields(req, &q, err, errlen);
	else
		r = take_kubelet_fields(req, &q, err, errlen);
	if (r)
		goto out;
	r = parse_affinity(req, &q, &affinity, &has_affinity, err, errlen);
	if (r)
		goto out;
	r = has_affinity ? take_affine(&q, affinity, &out, why, sizeof(why))
			 : np_take(&q, &out, why, sizeof(why));
	if (r == -EINVAL || r == -ENOSPC) {
		*result = error_result(why);
		r = 0;
	} else if (r == 0) {
		*result = cpus_result(&out);
	} else {
		snprintf(err, errlen, "%s", why);
	}
	if (r == 0 && !*result)
		r = -ENOMEM;
out:
	np_topology_free(t);
	return r;
}

/* Mask field: array of node ids or null (any). */
static int parse_mask(const json_t *v, const char *path, np_nodemask *m,
		      bool *any, char *err, size_t errlen)
{
	size_t i;
	const json_t *e;

	*m = 0;
	*any = false;
	if (!v || json_is_null(v)) {
		*any = true;
		return 0;
	}
	if (!json_is_array(v))
		return np_json_fail(
		    err, errlen, path, "mask",
		    "expected an array of NUMA node ids or null");
	json_array_foreach(v, i, e)
	{
		if (!json_is_integer(e) || json_integer_value(e) < 0 ||
		    json_integer_value(e) >= NP_MAX_NUMA)
			return np_json_fail(err, errlen, path, "mask",
					    "element %zu is not a NUMA node id "
					    "0..%d",
					    i, NP_MAX_NUMA - 1);
		*m |= NP_NODEMASK_BIT(json_integer_value(e));
	}
	return 0;
}

static json_t *mask_json(np_nodemask m, bool any)
{
	json_t *a;
	if (any)
		return json_null();
	a = json_array();
	NP_NODEMASK_FOREACH (n, m)
		json_array_append_new(a, json_integer(n));
	return a;
}

/* "policy" and "numa_nodes" into in; the node ids in order into ids. */
static int merge_nodes(const json_t *req, struct np_merge_input *in, int *ids,
		       int *nids, char *err, size_t errlen)
{
	const json_t *nodes, *e;
	const char *s;
	size_t i;
	int r;

	if ((r = np_json_str(req, "policy", "", true, &s, err, errlen)))
		return r;
	if (np_tm_policy_parse(s, &in->policy) < 0)
		return np_json_fail(err, errlen, "", "policy",
				    "\"%s\" is not none, best-effort, "
				    "restricted or single-numa-node",
				    s);
	nodes = json_object_get(req, "numa_nodes");
	if (!json_is_array(nodes) || json_array_size(nodes) == 0 ||
	    json_array_size(nodes) > NP_MAX_NUMA)
		return np_json_fail(err, errlen, "", "numa_nodes",
				    "expected an array of 1..%d NUMA node ids",
				    NP_MAX_NUMA);
	json_array_foreach(nodes, i, e)
	{
		long long id = json_is_integer(e) ? json_integer_value(e) : -1;
		if (id < 0 || id >= NP_MAX_NUMA ||
		    (in->nodes & NP_NODEMASK_BIT(id)))
			return np_json_fail(
			    err, errlen, "", "numa_nodes",
			    "element %zu is not a distinct node "
			    "id 0..%d",
			    i, NP_MAX_NUMA - 1);
		in->nodes |= NP_NODEMASK_BIT(id);
		ids[(*nids)++] = (int)id;
	}
	return 0;
}

/* "distances" (rows in the order of ids, or absent/null: the defaults). */
static int merge_distances(const json_t *drows, const int *ids, int nids,
			   uint16_t (*dist)[NP_MAX_NUMA], char *err,
			   size_t errlen)
{
	for (int a = 0; a < NP_MAX_NUMA; a++)
		for (int b = 0; b < NP_MAX_NUMA; b++)
			dist[a][b] = a == b ? NP_DEFAULT_LOCAL_DISTANCE
					    : NP_DEFAULT_REMOTE_DISTANCE;
	if (!drows || json_is_null(drows))
		return 0;
	if (!json_is_array(drows) || (int)json_array_size(drows) != nids)
		return np_json_fail(err, errlen, "", "distances",
				    "expected %d rows (numa_nodes order)",
				    nids);
	for (int a = 0; a < nids; a++) {
		const json_t *row = json_array_get(drows, (size_t)a);
		if (!json_is_array(row) || (int)json_array_size(row) != nids)
			return np_json_fail(err, errlen, "", "distances",
					    "row %d: expected %d numbers", a,
					    nids);
		for (int b = 0; b < nids; b++) {
			const json_t *x = json_array_get(row, (size_t)b);
			if (!json_is_integer(x) || json_integer_value(x) < 1 ||
			    json_integer_value(x) > 65535)
				return np_json_fail(err, errlen, "",
						    "distances",
						    "[%d][%d]: expected an "
						    "integer 1..65535",
						    a, b);
			dist[ids[a]][ids[b]] = (uint16_t)json_integer_value(x);
		}
	}
	return 0;
}

/* How many hint lists and hints "providers" holds. */
static int count_lists(const json_t *providers, size_t *nl, size_t *nh,
		       char *err, size_t errlen)
{
	const json_t *p;
	size_t i;

	if (!json_is_array(providers))
		return np_json_fail(err, errlen, "", "providers",
				    "expected an array");
	json_array_foreach(providers, i, p)
	{
		const char *res;
		const json_t *hl;
		if (json_is_null(p) ||
		    (json_is_object(p) && !json_object_size(p))) {
			(*nl)++;
			continue;
		}
		if (!json_is_object(p)) {
			char path[32];
			snprintf(path, sizeof(path), "providers[%zu]", i);
			return np_json_fail(err, errlen, path, NULL,
					    "expected null or an object of "
					    "resource: hints");
		}
		json_object_foreach((json_t *)p, res, hl)
		{
			char path[32];
			(*nl)++;
			if (!json_is_array(hl))
				continue;
			*nh += json_array_size(hl);
			if (json_array_size(hl) <= NP_MERGE_MAX_HINTS)
				continue;
			snprintf(path, sizeof(path), "providers[%zu]", i);
			return np_json_fail(err, errlen, path, res,
					    "%zu hints, more than the %d a "
					    "resource may give",
					    json_array_size(hl),
					    NP_MERGE_MAX_HINTS);
		}
	}
	return 0;
}

/* One hint {"mask", "preferred"} at path hp; its mask within nodes. */
static int parse_hint(const json_t *e, const char *hp, np_nodemask nodes,
		      struct np_hint *h, char *err, size_t errlen)
{
	int r;

	if (!json_is_object(e))
		return np_json_fail(err, errlen, hp, NULL,
				    "expected an object");
	if ((r = parse_mask(json_object_get(e, "mask"), hp, &h->mask, &h->any,
			    err, errlen)))
		return r;
	if (!h->any && (h->mask & ~nodes))
		return np_json_fail(err, errlen, hp, "mask",
				    "names a node not in numa_nodes");
	return np_json_bool(e, "preferred", hp, true, &h->preferred, err,
			    errlen);
}

/* The hint lists of "providers" into lists[] and hints[] (sized by
 * count_lists()); *nl = the number of lists. */
static int fill_lists(const json_t *providers, np_nodemask nodes,
		      struct np_hint_list *lists, struct np_hint *hints,
		      size_t *nl, char *err, size_t errlen)
{
	const json_t *p, *e;
	size_t i, j, nh = 0;
	int r;

	json_array_foreach(providers, i, p)
	{
		const char *res;
		const json_t *hl;
		if (json_is_null(p) || !json_object_size(p)) {
			lists[(*nl)++].kind = NP_HL_NO_PREFERENCE;
			continue;
		}
		json_object_foreach((json_t *)p, res, hl)
		{
			char path[160];
			struct np_hint_list *L = &lists[(*nl)++];
			snprintf(path, sizeof(path), "providers[%zu].%s", i,
				 res);
			if (json_is_null(hl)) {
				L->kind = NP_HL_NO_PREFERENCE;
				continue;
			}
			if (!json_is_array(hl))
				return np_json_fail(err, errlen, path, NULL,
						    "expected null or an array "
						    "of hints");
			L->kind =
			    json_array_size(hl) ? NP_HL_LIST : NP_HL_IMPOSSIBLE;
			L->hints = &hints[nh];
			json_array_foreach(hl, j, e)
			{
				char hp[200];
				snprintf(hp, sizeof(hp), "%s[%zu]", path, j);
				if ((r = parse_hint(e, hp, nodes, &hints[nh++],
						    err, errlen)))
					return r;
				L->n++;
			}
		}
	}
	return 0;
}

static int plan_merge(const json_t *req, json_t **result, char *err,
		      size_t errlen)
{
	struct np_merge_input in = {0};
	struct np_merge_result mres;
	struct np_hint_list *lists = NULL;
	struct np_hint *hints = NULL;
	uint16_t(*dist)[NP_MAX_NUMA] = NULL;
	const json_t *providers;
	size_t nh = 0, nl = 0;
	int ids[NP_MAX_NUMA], nids = 0, r;

	if ((r = merge_nodes(req, &in, ids, &nids, err, errlen)) ||
	    (r = opt_bool(req, "prefer_closest", &in.prefer_closest, err,
			  errlen)))
		goto out;
	dist = calloc(NP_MAX_NUMA, sizeof(*dist));
	if (!dist) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = merge_distances(json_object_get(req, "distances"), ids, nids,
				 dist, err, errlen)))
		goto out;
	in.distance = (const uint16_t(*)[NP_MAX_NUMA])dist;
	providers = json_object_get(req, "providers");
	/* Count lists and hints first, then fill: one allocation each. */
	if ((r = count_lists(providers, &nl, &nh, err, errlen)))
		goto out;
	lists = calloc(nl + 1, sizeof(*lists));
	hints = calloc(nh + 1, sizeof(*hints));
	if (!lists || !hints) {
		r = -ENOMEM;
		goto out;
	}
	nl = 0;
	if ((r = fill_lists(providers, in.nodes, lists, hints, &nl, err,
			    errlen)))
		goto out;
	in.nlists = (int)nl;
	in.lists = lists;
	if ((r = np_merge(&in, &mres))) {
		if (r == -EINVAL)
			np_json_fail(err, errlen, "", "providers",
				     "rejected by the merge");
		if (r == -E2BIG) /* bad input, as an over-long list */
			r = np_json_fail(err, errlen, "", "providers",
					 "too many wide hints to merge on %d "
					 "nodes (more than %llu masks to visit "
					 "or %zu partial node sets); give "
					 "fewer or narrower hints",
					 nids,
					 (unsigned long long)NP_MERGE_MAX_WORK,
					 NP_MERGE_MAX_STATES);
		goto out;
	}
	*result = json_pack(
	    "{s:o,s:b,s:b}", "mask", mask_json(mres.best.mask, mres.best.any),
	    "preferred", mres.best.preferred, "admit", mres.admit);
	if (!*result)
		r = -ENOMEM;
out:
	free(lists);
	free(hints);
	free(dist);
	return r;
}

/* ---- the planner's core: a request's node, the state every result
 * carries, the workload it names ---- */

int np_plan_finish(const struct np_node_state *st, json_t *result)
{
	struct np_pools p;
	json_t *sj = NULL;
	int r;

	if (!result)
		return -ENOMEM;
	if ((r = np_state_to_json(st, &sj)))
		return r;
	/* the kubelet checkpoint's defaultCpuSet: the shared pool */
	np_state_pools(st, &p);
	json_object_set_new(sj, "default_cpuset", np_json_cpuset_str(&p.shared));
	json_object_set_new(result, "state", sj);
	json_object_set_new(result, "pools", np_pools_to_json(st));
	return 0;
}

static void container_freed(const struct np_workload_alloc *a, int k,
			    np_cpuset *out)
{
	np_cpuset_zero(out);
	if (!a->c[k].exclusive)
		return;
	*out = *a->c[k].cpus;
	for (int c = 0; c < a->ncontainers; c++)
		if (c != k && a->c[c].exclusive)
			np_cpuset_andnot(out, out, a->c[c].cpus);
}

static int do_release(struct np_node_state *st, const char *name,
		      const char *ctr, json_t **res)
{
	char note[512];
	np_cpuset freed;
	int i = np_state_find(st, name), k = -1, r;
	bool whole;

	*res = NULL;
	if (i < 0) {
		snprintf(note, sizeof(note),
			 "workload \"%.128s\" is not admitted: nothing to "
			 "release (not an error, as the kubelet's "
			 "RemoveContainer)",
			 name);
		*res = json_pack("{s:b,s:s,s:s}", "released", 0, "workload",
				 name, "note", note);
		return *res ? 0 : -ENOMEM;
	}
	for (int c = 0; ctr && c < st->w[i]->ncontainers; c++)
		if (!strcmp(st->w[i]->req.c[c].name, ctr))
			k = c;
	if (ctr && k < 0) {
		snprintf(note, sizeof(note),
			 "workload \"%.128s\" has no container \"%.128s\": "
			 "nothing to release (not an error, as the kubelet's "
			 "RemoveContainer)",
			 name, ctr);
		*res = json_pack("{s:b,s:s,s:s,s:s}", "released", 0,
				 "workload", name, "container", ctr, "note",
				 note);
		return *res ? 0 : -ENOMEM;
	}
	whole = k < 0 || st->w[i]->ncontainers == 1;
	if (whole)
		np_workload_exclusive_cpus(st->w[i], &freed);
	else
		container_freed(st->w[i], k, &freed);
	*res = json_pack("{s:b,s:s,s:o,s:b}", "released", 1, "workload", name,
			 "cpus", np_json_cpuset_str(&freed), "workload_released",
			 whole);
	if (!*res)
		return -ENOMEM;
	if (ctr)
		json_object_set_new(*res, "container", json_string(ctr));
	r = whole ? np_release(st, name) : np_release_container(st, i, k);
	if (r) {
		json_decref(*res);
		*res = NULL;
	}
	return r;
}

int np_plan_load(const json_t *req, struct np_topology **t,
		 struct np_node_state *st, char *err, size_t errlen)
{
	struct np_node_policy pol;
	int r;

	if ((r = np_topology_from_json(t, json_object_get(req, "topology"),
				       "topology", err, errlen)) ||
	    (r = np_policy_from_json(&pol, json_object_get(req, "policy"),
				     "policy", err, errlen)) ||
	    (r = np_state_init_flags(st, *t, &pol, NP_STATE_ALLOW_NO_RESERVED,
				     err, errlen)))
		return r;
	return np_state_load_json(st, json_object_get(req, "state"), "state",
				  err, errlen);
}

int np_plan_target(const json_t *req, const char **name, const char **ctr,
		   char *err, size_t errlen)
{
	int r;

	*ctr = NULL;
	if ((r = np_json_str(req, "workload", "", true, name, err, errlen)))
		return r;
	if (!**name || strlen(*name) >= NP_NAME_MAX)
		return np_json_fail(err, errlen, "", "workload",
				    "expected a workload name of 1..%d bytes",
				    NP_NAME_MAX - 1);
	r = np_json_str(req, "container", "", false, ctr, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if (*ctr && (!**ctr || strlen(*ctr) >= NP_NAME_MAX))
		return np_json_fail(err, errlen, "", "container",
				    "expected a container name of 1..%d bytes",
				    NP_NAME_MAX - 1);
	return 0;
}

int np_plan_release(const json_t *req, json_t **result, char *err,
		    size_t errlen)
{
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	const char *name, *ctr;
	int r;

	if ((r = np_plan_target(req, &name, &ctr, err, errlen)))
		return r;
	if ((r = np_plan_load(req, &t, &st, err, errlen)))
		goto out;
	if ((r = do_release(&st, name, ctr, result)))
		goto out;
	if ((r = np_plan_finish(&st, *result))) {
		json_decref(*result);
		*result = NULL;
	}
out:
	np_state_free(&st);
	np_topology_free(t);
	return r;
}

/* ---- kind "admit" ---- */

/* The workload is admitted already: with the same request, its allocation
 * ("again": true, as the kubelet's Allocate for a container it holds);
 * another request would be a resize, which plan does not do. */
static int admit_again(const struct np_node_state *st, int i,
		       const struct np_workload_req *w, json_t **result)
{
	char msg[512];

	if (!np_workload_req_same(w, &st->w[i]->req)) {
		snprintf(msg, sizeof(msg),
			 "workload \"%.128s\" is already admitted with another "
			 "request: changing it would be a resize, which plan "
			 "does not do (release it first)",
			 w->name);
		*result = json_pack("{s:s}", "error", msg);
		return *result ? 0 : -ENOMEM;
	}
	*result = np_workload_alloc_to_json(st, st->w[i]);
	if (!*result)
		return -ENOMEM;
	json_object_set_new(*result, "admitted", json_true());
	json_object_set_new(*result, "again", json_true());
	return np_plan_finish(st, *result);
}

int np_plan_admit(const json_t *req, json_t **result, char *err, size_t errlen)
{
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	struct np_workload_req *w = NULL;
	struct np_decision *d = NULL;
	int r, i;

	w = calloc(1, sizeof(*w));
	d = calloc(1, sizeof(*d));
	if (!w || !d) {
		r = -ENOMEM;
		goto out;
	}
	if ((r = np_plan_load(req, &t, &st, err, errlen)) ||
	    (r = np_workload_req_from_json(w, json_object_get(req, "workload"),
					   "workload", err, errlen)))
		goto out;
	if ((i = np_state_find(&st, w->name)) >= 0) {
		r = admit_again(&st, i, w, result);
		goto out;
	}
	if ((r = np_admit(&st, w, d, err, errlen)))
		goto out;
	*result = np_decision_to_json(&st, d);
	r = np_plan_finish(&st, *result);
out:
	if (r && *result) {
		json_decref(*result);
		*result = NULL;
	}
	np_state_free(&st);
	np_topology_free(t);
	if (w)
		np_workload_req_free(w);
	free(w);
	free(d);
	return r;
}

int np_plan(const json_t *req, json_t **result, char *err, size_t errlen)
{
	const char *kind;
	int r;

	*result = NULL;
	if (!json_is_object(req))
		return np_json_fail(err, errlen, "request", NULL,
				    "expected a JSON object");
	if ((r = np_json_str(req, "kind", "", true, &kind, err, errlen)))
		return r;
	/* Every kind's keys, so that a misspelt one is refused instead of
	 * planning with a default; "id", "origin" and "comment" are for
	 * people (vector files carry them). */
	if (!strcmp(kind, "take")) {
		static const char *const keys[] = {
			"kind", "id", "origin", "comment", "expect",
			"expect_error", "topology", "strategy", "count",
			"available", "baseline", "current", "required",
			"preferred_cpus", "align_by_socket",
			"distribute_across_numa", "group_size", "prefer_uncore",
			"bind_policy", "exclusive_policy", "exclusive_marks",
			"numa_strategy", "affinity", NULL};
		if ((r = np_json_only_keys(req, keys, "", err, errlen)))
			return r;
		return plan_take(req, result, err, errlen);
	}
	if (!strcmp(kind, "merge")) {
		static const char *const keys[] = {
			"kind", "id", "origin", "comment", "expect",
			"expect_error", "admit", "policy", "numa_nodes",
			"distances", "prefer_closest", "providers", NULL};
		if ((r = np_json_only_keys(req, keys, "", err, errlen)))
			return r;
		return plan_merge(req, result, err, errlen);
	}
	if (!strcmp(kind, "admit")) {
		static const char *const keys[] = {
			"kind", "id", "origin", "comment", "expect",
			"expect_error", "topology", "policy", "state",
			"workload", NULL};
		if ((r = np_json_only_keys(req, keys, "", err, errlen)))
			return r;
		return np_plan_admit(req, result, err, errlen);
	}
	if (!strcmp(kind, "release")) {
		static const char *const keys[] = {
			"kind", "id", "origin", "comment", "expect",
			"expect_error", "topology", "policy", "state",
			"workload", "container", NULL};
		if ((r = np_json_only_keys(req, keys, "", err, errlen)))
			return r;
		return np_plan_release(req, result, err, errlen);
	}
	if (!strcmp(kind, "be_suppress")) {
		static const char *const keys[] = {
			"kind", "id", "origin", "comment", "expect",
			"expect_error", "topology", "policy", "state",
			"usage", "config", "previous", NULL};
		if ((r = np_json_only_keys(req, keys, "", err, errlen)))
			return r;
		return np_plan_be_suppress(req, result, err, errlen);
	}
	if (!strcmp(kind, "resize")) {
		static const char *const keys[] = {
			"kind", "id", "origin", "comment", "expect",
			"expect_error", "topology", "policy", "state",
			"workload", "container", "cpus", NULL};
		if ((r = np_json_only_keys(req, keys, "", err, errlen)))
			return r;
		return np_plan_resize(req, result, err, errlen);
	}
	return np_json_fail(err, errlen, "", "kind",
			    "\"%s\" is not take, merge, admit, release, "
			    "be_suppress or resize",
			    kind);
}

static bool mask_equal(const json_t *a, const json_t *b)
{
	np_nodemask ma, mb;
	bool anya, anyb;
	if (parse_mask(a, "", &ma, &anya, NULL, 0) ||
	    parse_mask(b, "", &mb, &anyb, NULL, 0))
		return false;
	return anya == anyb && ma == mb;
}

int np_plan_check(const json_t *req, const json_t *result, char *why,
		  size_t len)
{
	const json_t *expect = json_object_get(req, "expect");
	const json_t *experr = json_object_get(req, "expect_error");
	const json_t *admit = json_object_get(req, "admit");
	const json_t *gerr = json_object_get(result, "error");
	const char *kind = json_string_value(json_object_get(req, "kind"));
	bool checked = false;

	if (json_is_true(experr) || json_is_string(experr)) {
		const char *x = json_string_value(experr);
		if (!gerr) {
			snprintf(why, len, "expected an error, got a result");
			return -1;
		}
		/* a string: the error must hold it */
		if (x && !strstr(json_string_value(gerr), x)) {
			snprintf(why, len, "error \"%s\" does not hold \"%s\"",
				 json_string_value(gerr), x);
			return -1;
		}
		return 0;
	}
	if (expect && !json_is_null(expect) && gerr) {
		snprintf(why, len, "unexpected error: %s",
			 json_string_value(gerr));
		return -1;
	}
	if (kind && !strcmp(kind, "take") && json_is_string(expect)) {
		np_cpuset a, b;
		const char *got =
		    json_string_value(json_object_get(result, "cpus"));
		if (!got || np_cpuset_parse(&a, got, NULL, 0) ||
		    np_cpuset_parse(&b, json_string_value(expect), NULL, 0) ||
		    !np_cpuset_equal(&a, &b)) {
			snprintf(why, len, "cpus: got \"%s\", expected \"%s\"",
				 got ? got : "(none)",
				 json_string_value(expect));
			return -1;
		}
		checked = true;
	}
	if (kind && !strcmp(kind, "merge") && json_is_object(expect)) {
		const json_t *gm = json_object_get(result, "mask");
		bool gp = json_is_true(json_object_get(result, "preferred"));
		bool ep = json_is_true(json_object_get(expect, "preferred"));
		if (!mask_equal(gm, json_object_get(expect, "mask")) ||
		    gp != ep) {
			char *g = json_dumps(result, JSON_COMPACT);
			char *x = json_dumps(expect, JSON_COMPACT);
			snprintf(why, len, "got %s, expected %s", g ? g : "?",
				 x ? x : "?");
			free(g);
			free(x);
			return -1;
		}
		checked = true;
	}
	if (kind &&
	    (!strcmp(kind, "admit") || !strcmp(kind, "release") ||
	     !strcmp(kind, "resize")) &&
	    json_is_object(expect))
		return np_admit_check(expect, result, why, len);
	if (kind && !strcmp(kind, "be_suppress") && json_is_object(expect))
		return np_plan_be_suppress_check(expect, result, why, len);
	if (json_is_boolean(admit) && json_object_get(result, "admit")) {
		if (json_is_true(admit) !=
		    json_is_true(json_object_get(result, "admit"))) {
			snprintf(why, len, "admit: got %s, expected %s",
				 json_is_true(json_object_get(result, "admit"))
				     ? "true"
				     : "false",
				 json_is_true(admit) ? "true" : "false");
			return -1;
		}
		checked = true;
	}
	return checked ? 0 : 1;
}
