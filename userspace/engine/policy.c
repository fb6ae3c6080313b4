// SPDX-License-Identifier: Apache-2.0
/*
 * Node policy (CPU Manager, Topology Manager, Koordinator defaults):
 * parsing, validation against a topology, and a workload request's
 * containers. The node state built on it is state_ops.c; its cached
 * aggregates and the pools that follow from them, state_cache.c.
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
int np_policy_validate(const struct np_topology *t,
		       const struct np_node_policy *p, char *err, size_t errlen)
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
