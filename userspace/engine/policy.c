// SPDX-License-Identifier: Apache-2.0
/*
 * Node policy (CPU Manager, Topology Manager, Koordinator defaults):
 * parsing, validation against a topology, reserved CPUs, and the pools that
 * follow from a node state.
 */
#include "admit_internal.h"
#include "numaplace/error.h"
#include "numaplace/names.h"
#include "engine/json_util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const qos_names[] = {
    [NP_QOS_LSE] = "LSE",
    [NP_QOS_LSR] = "LSR",
    [NP_QOS_LS] = "LS",
    [NP_QOS_BE] = "BE",
    [NP_QOS_GUARANTEED] = "Guaranteed",
    [NP_QOS_BURSTABLE] = "Burstable",
    [NP_QOS_BESTEFFORT] = "BestEffort",
};

static const char *const cpu_policy_names[] = {
    [NP_CPU_POLICY_NONE] = "none",
    [NP_CPU_POLICY_STATIC] = "static",
};

static const char *const tm_scope_names[] = {
    [NP_TM_SCOPE_CONTAINER] = "container",
    [NP_TM_SCOPE_POD] = "pod",
};

int np_qos_parse(const char *s, enum np_qos *out)
{
	int i = NP_NAME_FIND(qos_names, s);

	if (i < 0)
		return -EINVAL;
	*out = (enum np_qos)i;
	return 0;
}

const char *np_qos_name(enum np_qos q)
{
	return NP_NAME_OF(qos_names, q);
}

int np_cpu_policy_parse(const char *s, enum np_cpu_policy *out)
{
	int i = NP_NAME_FIND(cpu_policy_names, s);

	if (i < 0)
		return -EINVAL;
	*out = (enum np_cpu_policy)i;
	return 0;
}

int np_tm_scope_parse(const char *s, enum np_tm_scope *out)
{
	int i = NP_NAME_FIND(tm_scope_names, s);

	if (i < 0)
		return -EINVAL;
	*out = (enum np_tm_scope)i;
	return 0;
}

const char *np_tm_scope_name(enum np_tm_scope s)
{
	return NP_NAME_OF(tm_scope_names, s);
}

/* Option values: JSON booleans, or the strings strconv.ParseBool accepts
 * (the kubelet's --cpu-manager-policy-options are strings). */
static int parse_boolish(const json_t *v, bool *out)
{
	static const char *const t[] = {"1", "t", "T", "TRUE", "true", "True"};
	static const char *const f[] = {"0", "f", "F", "FALSE", "false", "False"};
	const char *s;

	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	if (!json_is_string(v))
		return -EINVAL;
	s = json_string_value(v);
	if (NP_NAME_FIND(t, s) >= 0)
		*out = true;
	else if (NP_NAME_FIND(f, s) >= 0)
		*out = false;
	else
		return -EINVAL;
	return 0;
}

static const struct {
	const char *name;
	size_t off;
} cpu_opts[] = {
	{"full-pcpus-only", offsetof(struct np_cpu_options, full_pcpus_only)},
	{"distribute-cpus-across-numa",
	 offsetof(struct np_cpu_options, distribute_across_numa)},
	{"align-by-socket", offsetof(struct np_cpu_options, align_by_socket)},
	{"distribute-cpus-across-cores",
	 offsetof(struct np_cpu_options, distribute_across_cores)},
	{"strict-cpu-reservation",
	 offsetof(struct np_cpu_options, strict_cpu_reservation)},
	{"prefer-align-cpus-by-uncorecache",
	 offsetof(struct np_cpu_options, prefer_align_by_uncore)},
};

/* "cpu_policy_options": {option: true|false} (path: the policy's). */
static int cpu_options_from_json(struct np_cpu_options *opt, const json_t *o,
				 const char *path, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	char sub[160];

	np_json_path(sub, sizeof(sub), path, "cpu_policy_options", 0);
	if (!json_is_object(o))
		return np_json_fail(err, errlen, sub, NULL,
				    "expected an object of option: "
				    "true|false");
	json_object_foreach((json_t *)o, key, v)
	{
		unsigned i;
		for (i = 0; i < sizeof(cpu_opts) / sizeof(cpu_opts[0]); i++)
			if (!strcmp(key, cpu_opts[i].name))
				break;
		if (i == sizeof(cpu_opts) / sizeof(cpu_opts[0]))
			return np_json_fail(err, errlen, sub, key,
					    "unknown CPU policy option");
		if (parse_boolish(v, (bool *)((char *)opt + cpu_opts[i].off)) <
		    0)
			return np_json_fail(err, errlen, sub, key,
					    "expected true or false");
	}
	return 0;
}

/* "reserved_cpus": a cpu list string or a count. */
static int reserved_from_json(struct np_node_policy *n, const json_t *j,
			      const char *path, char *err, size_t errlen)
{
	const json_t *v = json_object_get(j, "reserved_cpus");

	if (json_is_string(v)) {
		char perr[200];
		if (np_cpuset_parse(&n->reserved_cpus, json_string_value(v),
				    perr, sizeof(perr)) < 0)
			return np_json_fail(err, errlen, path, "reserved_cpus",
					    "invalid cpu list: %s", perr);
		n->reserved_explicit = true;
		n->reserved_count = np_cpuset_count(&n->reserved_cpus);
	} else if (v && !json_is_null(v)) {
		long long c;
		if (np_json_int(j, "reserved_cpus", path, true, 0, NP_MAX_CPUS,
				&c, err, errlen))
			return np_json_fail(err, errlen, path, "reserved_cpus",
					    "expected a cpu list string or a "
					    "count");
		n->reserved_count = (int)c;
		n->reserved_zero = c == 0;
	}
	return 0;
}

/* "topology_policy_options" (path: the policy's). */
static int tm_options_from_json(struct np_node_policy *n, const json_t *o,
				const char *path, char *err, size_t errlen)
{
	const char *key;
	json_t *v;
	char sub[160];

	np_json_path(sub, sizeof(sub), path, "topology_policy_options", 0);
	if (!json_is_object(o))
		return np_json_fail(err, errlen, sub, NULL,
				    "expected an object");
	json_object_foreach((json_t *)o, key, v)
	{
		if (!strcmp(key, "prefer-closest-numa-nodes")) {
			if (parse_boolish(v, &n->prefer_closest) < 0)
				return np_json_fail(err, errlen, sub, key,
						    "expected true or false");
		} else if (!strcmp(key, "max-allowable-numa-nodes")) {
			/* accepted for kubelet compatibility: we have no
			 * such limit */
			if (!json_is_integer(v) && !json_is_string(v))
				return np_json_fail(err, errlen, sub, key,
						    "expected a number");
		} else {
			return np_json_fail(err, errlen, sub, key,
					    "unknown topology policy option");
		}
	}
	return 0;
}

int np_policy_from_json(struct np_node_policy *p, const json_t *j,
			const char *path, char *err, size_t errlen)
{
	static const char *const keys[] = {
		"cpu_policy",		  "cpu_policy_options",
		"reserved_cpus",	  "topology_policy",
		"topology_scope",	  "topology_policy_options",
		"default_cpu_bind_policy", "numa_allocate_strategy",
		NULL};
	struct np_node_policy n = {0};
	const json_t *o;
	const char *s;
	int r;

	if (!path)
		path = "policy";
	n.default_bind = NP_BIND_FULL_PCPUS;
	if (!j || json_is_null(j)) {
		*p = n;
		return 0;
	}
	if ((r = np_json_only_keys(j, keys, path, err, errlen)))
		return r;
	r = np_json_str(j, "cpu_policy", path, false, &s, err, errlen);
	if (r == 0 && np_cpu_policy_parse(s, &n.cpu_policy) < 0)
		return np_json_fail(err, errlen, path, "cpu_policy",
				    "\"%s\" is not none or static", s);
	if (r && r != -ENOENT)
		return r;
	o = json_object_get(j, "cpu_policy_options");
	if (o && !json_is_null(o) &&
	    (r = cpu_options_from_json(&n.opt, o, path, err, errlen)))
		return r;
	if ((r = reserved_from_json(&n, j, path, err, errlen)))
		return r;
	r = np_json_str(j, "topology_policy", path, false, &s, err, errlen);
	if (r == 0 && np_tm_policy_parse(s, &n.tm_policy) < 0)
		return np_json_fail(err, errlen, path, "topology_policy",
				    "\"%s\" is not none, best-effort, "
				    "restricted or single-numa-node",
				    s);
	if (r && r != -ENOENT)
		return r;
	r = np_json_str(j, "topology_scope", path, false, &s, err, errlen);
	if (r == 0 && np_tm_scope_parse(s, &n.tm_scope) < 0)
		return np_json_fail(err, errlen, path, "topology_scope",
				    "\"%s\" is not container or pod", s);
	if (r && r != -ENOENT)
		return r;
	o = json_object_get(j, "topology_policy_options");
	if (o && !json_is_null(o) &&
	    (r = tm_options_from_json(&n, o, path, err, errlen)))
		return r;
	r = np_json_str(j, "default_cpu_bind_policy", path, false, &s, err,
			errlen);
	if (r == 0 && (np_bind_policy_parse(s, &n.default_bind) < 0 ||
		       n.default_bind == NP_BIND_DEFAULT))
		return np_json_fail(
		    err, errlen, path, "default_cpu_bind_policy",
		    "\"%s\" is not FullPCPUs or SpreadByPCPUs", s);
	if (r && r != -ENOENT)
		return r;
	r = np_json_str(j, "numa_allocate_strategy", path, false, &s, err,
			errlen);
	if (r == 0 && np_numa_strategy_parse(s, &n.numa_strategy) < 0)
		return np_json_fail(err, errlen, path, "numa_allocate_strategy",
				    "\"%s\" is not MostAllocated, "
				    "LeastAllocated or DistributeEvenly",
				    s);
	if (r && r != -ENOENT)
		return r;
	*p = n;
	return 0;
}

json_t *np_policy_to_json(const struct np_node_policy *p)
{
	json_t *o = json_object(), *opts = json_object();
	char buf[4096];

	json_object_set_new(o, "cpu_policy",
			    json_string(p->cpu_policy == NP_CPU_POLICY_STATIC
						? "static"
						: "none"));
	for (unsigned i = 0; i < sizeof(cpu_opts) / sizeof(cpu_opts[0]); i++)
		if (*(const bool *)((const char *)&p->opt + cpu_opts[i].off))
			json_object_set_new(opts, cpu_opts[i].name, json_true());
	json_object_set_new(o, "cpu_policy_options", opts);
	if (p->reserved_explicit &&
	    np_cpuset_format(&p->reserved_cpus, buf, sizeof(buf)) >= 0)
		json_object_set_new(o, "reserved_cpus", json_string(buf));
	else
		json_object_set_new(o, "reserved_cpus",
				    json_integer(p->reserved_count));
	json_object_set_new(o, "topology_policy",
			    json_string(np_tm_policy_name(p->tm_policy)));
	json_object_set_new(o, "topology_scope",
			    json_string(np_tm_scope_name(p->tm_scope)));
	json_object_set_new(o, "topology_policy_options",
			    json_pack("{s:b}", "prefer-closest-numa-nodes",
				      p->prefer_closest));
	json_object_set_new(o, "default_cpu_bind_policy",
			    json_string(np_bind_policy_name(p->default_bind)));
	json_object_set_new(o, "numa_allocate_strategy",
			    json_string(np_numa_strategy_name(p->numa_strategy)));
	return o;
}

/* The kubelet's option checks, with its reasons. */
static int validate_options(const struct np_topology *t,
			    const struct np_node_policy *p, char *err,
			    size_t errlen)
{
	const struct np_cpu_options *o = &p->opt;
	static const struct np_cpu_options none;

	if (p->cpu_policy != NP_CPU_POLICY_STATIC &&
	    memcmp(o, &none, sizeof(none))) {
		NP_ERR("policy.cpu_policy_options: options need cpu_policy "
		    "\"static\"");
		return -EINVAL;
	}
	if (o->full_pcpus_only && o->distribute_across_cores) {
		NP_ERR("policy.cpu_policy_options: full-pcpus-only and "
		    "distribute-cpus-across-cores cannot be used together");
		return -EINVAL;
	}
	if (o->distribute_across_numa && o->distribute_across_cores) {
		NP_ERR("policy.cpu_policy_options: distribute-cpus-across-numa "
		    "and distribute-cpus-across-cores cannot be used together");
		return -EINVAL;
	}
	if (o->prefer_align_by_uncore && o->distribute_across_cores) {
		NP_ERR("policy.cpu_policy_options: "
		    "prefer-align-cpus-by-uncorecache and "
		    "distribute-cpus-across-cores cannot be used together");
		return -EINVAL;
	}
	if (o->prefer_align_by_uncore && o->distribute_across_numa) {
		NP_ERR("policy.cpu_policy_options: "
		    "prefer-align-cpus-by-uncorecache and "
		    "distribute-cpus-across-numa cannot be used together");
		return -EINVAL;
	}
	if (o->align_by_socket && p->tm_policy == NP_TM_SINGLE_NUMA_NODE) {
		NP_ERR("policy.cpu_policy_options: align-by-socket is not "
		    "compatible with topology_policy single-numa-node");
		return -EINVAL;
	}
	if (o->align_by_socket && t->nsockets > t->nnuma) {
		NP_ERR("policy.cpu_policy_options: align-by-socket needs at least "
		    "as many NUMA nodes as sockets (%d sockets, %d NUMA nodes)",
		    t->nsockets, t->nnuma);
		return -EINVAL;
	}
	return 0;
}

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
	if ((r = validate_options(t, p, err, errlen)))
		return r;
	st->topo = t;
	st->policy = *p;
	if (p->reserved_explicit) {
		if (!np_cpuset_subset(&p->reserved_cpus, &t->online)) {
			np_cpuset bad;
			char *s;
			np_cpuset_andnot(&bad, &p->reserved_cpus, &t->online);
			s = np_cpuset_str(&bad);
			NP_ERR("policy.reserved_cpus: CPUs %s do not exist or are "
			    "offline",
			    s ? s : "?");
			free(s);
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

static void free_containers(struct np_workload_req *w)
{
	for (int i = 0; w->c && i < w->ncontainers; i++) {
		free((char *)w->c[i].name);
		free(w->c[i].cgroup);
		free(w->c[i].dev);
	}
	free(w->c);
	w->c = NULL;
	w->ncontainers = 0;
}

int np_workload_req_set_containers(struct np_workload_req *w, int n)
{
	struct np_container_req *c = NULL;

	if (n < 0)
		return -EINVAL;
	if (n && !(c = calloc((size_t)n, sizeof(*c))))
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		if (!(c[i].name = strdup(""))) {
			while (i--)
				free((char *)c[i].name);
			free(c);
			return -ENOMEM;
		}
	free_containers(w);
	w->c = c;
	w->ncontainers = n;
	return 0;
}

int np_container_req_set_name(struct np_container_req *c, const char *name)
{
	char *s = strdup(name);

	if (!s)
		return -ENOMEM;
	free((char *)c->name);
	c->name = s;
	return 0;
}

void np_workload_req_free(struct np_workload_req *w)
{
	free_containers(w);
	free(w->cgroup);
	w->cgroup = NULL;
	free(w->unit);
	w->unit = NULL;
	free(w->container_id);
	w->container_id = NULL;
	free(w->container_ns);
	w->container_ns = NULL;
	free(w->container_res);
	w->container_res = NULL;
}

int np_workload_req_copy(struct np_workload_req *dst,
			 const struct np_workload_req *src)
{
	*dst = *src;
	dst->c = NULL;
	dst->ncontainers = 0;
	dst->unit = NULL;
	dst->container_id = NULL;
	dst->container_ns = NULL;
	dst->container_res = NULL;
	if (!(dst->cgroup = strdup(src->cgroup ? src->cgroup : "")) ||
	    (src->unit && !(dst->unit = strdup(src->unit))) ||
	    (src->container_id &&
	     !(dst->container_id = strdup(src->container_id))) ||
	    (src->container_ns &&
	     !(dst->container_ns = strdup(src->container_ns))) ||
	    (src->container_res &&
	     !(dst->container_res = malloc(sizeof(*dst->container_res))))) {
		np_workload_req_free(dst);
		return -ENOMEM;
	}
	if (src->container_res)
		*dst->container_res = *src->container_res;
	if (src->ncontainers <= 0)
		return 0;
	dst->c = calloc((size_t)src->ncontainers, sizeof(*dst->c));
	if (!dst->c) {
		np_workload_req_free(dst);
		return -ENOMEM;
	}
	dst->ncontainers = src->ncontainers;
	for (int i = 0; i < src->ncontainers; i++) {
		const struct np_container_req *s = &src->c[i];
		struct np_container_req *c = &dst->c[i];
		*c = *s;
		c->cgroup = NULL;
		c->dev = NULL;
		if (!(c->name = strdup(s->name ? s->name : "")) ||
		    (s->cgroup && !(c->cgroup = strdup(s->cgroup))) ||
		    (s->ndev > 0 &&
		     !(c->dev = malloc(sizeof(*c->dev) * (size_t)s->ndev)))) {
			dst->ncontainers = i + 1;
			np_workload_req_free(dst);
			return -ENOMEM;
		}
		if (s->ndev > 0)
			memcpy(c->dev, s->dev, sizeof(*c->dev) * (size_t)s->ndev);
	}
	return 0;
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

void np_workload_alloc_free(struct np_workload_alloc *a)
{
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
	return 0;
}

/* Add one container's allocation to the cached aggregates. */
void np_state_cache_add(struct np_node_state *st,
			const struct np_workload_alloc *a,
			const struct np_container_alloc *c)
{
	struct np_state_cache *k = &st->cache;
	if (c->exclusive) {
		np_cpuset_or(&k->excl, &k->excl, c->cpus);
		/* LSR CPUs stay usable by BE; everything else that is
		 * exclusive (LSE, kubelet Guaranteed) does not. */
		if (a->qos_class != NP_QOS_LSR)
			np_cpuset_or(&k->lse, &k->lse, c->cpus);
	}
	for (int n = 0; c->charge && n < NP_MAX_NUMA; n++) {
		const struct np_mem_charge *ch = c->charge;
		bool any = ch->mem[n] > 0;
		k->mem[n] += ch->mem[n];
		for (int h = 0; h < NP_MAX_HUGEPAGE_SIZES; h++) {
			k->huge[h][n] += ch->huge[h][n];
			any |= ch->huge[h][n] > 0;
		}
		if (any) {
			k->used[n] = true;
			k->group[n] = c->mems;
		}
	}
	for (int d = 0; d < c->ndev; d++)
		if (c->dev[d] >= 0 && c->dev[d] < k->ndevices)
			k->dev_taken[c->dev[d]] = true;
}

void np_state_cache_add_pod_rest(struct np_node_state *st,
				 const struct np_workload_alloc *a)
{
	struct np_container_alloc rest = {.exclusive = true};

	if (!a->pod_rest)
		return;
	rest.cpus = a->pod_rest;
	np_state_cache_add(st, a, &rest);
}

int np_state_refresh(struct np_node_state *st)
{
	int r = np_state_cache_refresh(st);

	if (!r)
		np_state_index_build(st);
	return r;
}

int np_state_cache_refresh(struct np_node_state *st)
{
	bool *taken = st->cache.dev_taken;
	int nd = st->topo->ndevices;

	if (!taken) {
		taken = calloc((size_t)nd + 1, sizeof(bool));
		if (!taken)
			return -ENOMEM;
	}
	memset(&st->cache, 0, sizeof(st->cache));
	memset(taken, 0, sizeof(bool) * (size_t)nd);
	st->cache.dev_taken = taken;
	st->cache.ndevices = nd;
	for (int i = 0; i < st->nworkloads; i++) {
		for (int c = 0; c < st->w[i].ncontainers; c++)
			np_state_cache_add(st, &st->w[i], &st->w[i].c[c]);
		np_state_cache_add_pod_rest(st, &st->w[i]);
	}
	return 0;
}

void np_state_pools(const struct np_node_state *st, struct np_pools *out)
{
	const struct np_topology *t = st->topo;

	out->reserved = st->reserved;
	out->exclusive = st->cache.excl;
	out->lse = st->cache.lse;
	np_cpuset_andnot(&out->shared, &t->online, &out->exclusive);
	np_cpuset_andnot(&out->shared, &out->shared, &st->offline);
	np_cpuset_andnot(&out->allocatable, &out->shared, &out->reserved);
	if (st->policy.opt.strict_cpu_reservation)
		out->shared = out->allocatable;
	np_cpuset_andnot(&out->be, &t->online, &out->lse);
	np_cpuset_andnot(&out->be, &out->be, &out->reserved);
	np_cpuset_andnot(&out->be, &out->be, &st->offline);
}

void np_workload_exclusive_cpus(const struct np_workload_alloc *a,
				np_cpuset *out)
{
	np_cpuset_zero(out);
	for (int c = 0; c < a->ncontainers; c++)
		if (a->c[c].exclusive)
			np_cpuset_or(out, out, a->c[c].cpus);
	if (a->pod_rest)
		np_cpuset_or(out, out, a->pod_rest);
}

bool np_state_degraded(const struct np_node_state *st, int i, np_cpuset *out)
{
	np_workload_exclusive_cpus(&st->w[i], out);
	np_cpuset_and(out, out, &st->offline);
	return !np_cpuset_empty(out);
}
