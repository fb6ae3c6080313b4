// SPDX-License-Identifier: Apache-2.0
/*
 * BE suppression as JSON: the configuration keys (Koordinator's names) and
 * the planner kind "be_suppress".
 */
#include "engine/json_util.h"
#include "numaplace/cleanup.h"
#include "engine/plan_internal.h"
#include "numaplace/be_suppress.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_suppress_config_defaults(struct np_suppress_config *c,
				 enum np_suppress_policy policy)
{
	c->policy = policy;
	c->threshold = NP_SUPPRESS_DEFAULT_THRESHOLD;
	c->min_cpus = 0;
}

int np_suppress_config_from_json(struct np_suppress_config *c,
				 const json_t *j, const char *path, char *err,
				 size_t errlen)
{
	static const char *const keys[] = {"cpuSuppressThresholdPercent",
					   "cpuSuppressPolicy",
					   "cpuSuppressMinCPUs", NULL};
	struct np_suppress_config n = *c;
	const char *s = NULL;
	long long v;
	int r;

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object");
	if ((r = np_json_only_keys(j, keys, path, err, errlen)))
		return r;
	r = np_json_int(j, "cpuSuppressThresholdPercent", path, false, 0, 100,
			&v, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if (!r)
		n.threshold = (int)v;
	r = np_json_int(j, "cpuSuppressMinCPUs", path, false, 0, NP_MAX_CPUS,
			&v, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if (!r)
		n.min_cpus = (int)v;
	r = np_json_str(j, "cpuSuppressPolicy", path, false, &s, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if (!r && np_suppress_policy_parse(s, &n.policy) < 0)
		return np_json_fail(err, errlen, path, "cpuSuppressPolicy",
				    "\"%s\": expected \"none\", \"cpuset\" or "
				    "\"cfsQuota\"",
				    s);
	*c = n;
	return 0;
}

json_t *np_suppress_config_to_json(const struct np_suppress_config *c)
{
	return json_pack("{s:s,s:i,s:i}", "cpuSuppressPolicy",
			 np_suppress_policy_name(c->policy),
			 "cpuSuppressThresholdPercent", c->threshold,
			 "cpuSuppressMinCPUs", c->min_cpus);
}

/* "usage": {"node_millicpus", "non_be_millicpus", "be_millicpus",
 * "host_apps_millicpus"}: the first three required. */
static int usage_from_json(const json_t *u, struct np_suppress_usage *out,
			   char *err, size_t errlen)
{
	static const char *const keys[] = {"node_millicpus", "non_be_millicpus",
					   "be_millicpus",
					   "host_apps_millicpus", NULL};
	int64_t *dst[] = {&out->node, &out->non_be, &out->be, &out->host_apps};
	long long v;
	int r;

	if (!json_is_object(u))
		return np_json_fail(err, errlen, "", "usage",
				    "expected an object of milli-CPU usages");
	if ((r = np_json_only_keys(u, keys, "usage", err, errlen)))
		return r;
	for (int i = 0; i < 4; i++) {
		r = np_json_int(u, keys[i], "usage", i < 3, 0,
				(long long)NP_MAX_CPUS * 1000 * 4, &v, err,
				errlen);
		if (r && r != -ENOENT)
			return r;
		*dst[i] = r ? 0 : v;
	}
	return 0;
}

/* "previous": {"cpus", "quota_us"} (optional: the first period). */
static int previous_from_json(const json_t *p, struct np_suppress_in *in,
			      char *err, size_t errlen)
{
	static const char *const keys[] = {"cpus", "quota_us", NULL};
	long long v;
	int r;

	if (!p || json_is_null(p))
		return 0;
	if (!json_is_object(p))
		return np_json_fail(err, errlen, "", "previous",
				    "expected an object {\"cpus\", "
				    "\"quota_us\"}");
	if ((r = np_json_only_keys(p, keys, "previous", err, errlen)))
		return r;
	r = np_json_int(p, "cpus", "previous", false, 0, NP_MAX_CPUS, &v, err,
			errlen);
	if (r && r != -ENOENT)
		return r;
	in->prev_cpus = r ? 0 : (int)v;
	r = np_json_int(p, "quota_us", "previous", false, 0,
			(long long)NP_MAX_CPUS * NP_SUPPRESS_CFS_PERIOD_US, &v,
			err, errlen);
	if (r && r != -ENOENT)
		return r;
	in->prev_quota_us = r ? 0 : v;
	return 0;
}

static json_t *result_json(const struct np_suppress_config *c,
			   const struct np_pools *p,
			   const struct np_suppress_out *o, const np_cpuset *be)
{
	_cleanup_free_ char *pool = np_cpuset_str(&p->be);
	_cleanup_free_ char *cpus = np_cpuset_str(be);
	json_t *r = NULL;

	if (pool && cpus)
		r = json_pack("{s:s,s:I,s:I,s:i,s:s,s:s,s:I,s:i,s:b}", "policy",
			      np_suppress_policy_name(c->policy), "system",
			      (json_int_t)o->system, "budget",
			      (json_int_t)o->budget, "cpus", o->cpus, "cpuset",
			      cpus, "be_pool", pool, "quota_us",
			      (json_int_t)o->quota_us, "period_us",
			      NP_SUPPRESS_CFS_PERIOD_US, "growth_limited",
			      o->growth_limited);
	return r;
}

int np_plan_be_suppress(const json_t *req, json_t **result, char *err,
			size_t errlen)
{
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	struct np_suppress_config c;
	struct np_suppress_in in = {0};
	struct np_suppress_out o;
	struct np_pools p;
	np_cpuset be;
	int r;

	np_suppress_config_defaults(&c, NP_SUPPRESS_CPUSET);
	if ((r = np_plan_load(req, &t, &st, err, errlen)) ||
	    (r = np_suppress_config_from_json(&c, json_object_get(req, "config"),
					      "config", err, errlen)) ||
	    (r = usage_from_json(json_object_get(req, "usage"), &in.u, err,
				 errlen)) ||
	    (r = previous_from_json(json_object_get(req, "previous"), &in, err,
				    errlen)))
		goto out;
	np_state_pools(&st, &p);
	in.capacity = np_cpuset_count(&t->online);
	in.pool = np_cpuset_count(&p.be);
	in.threshold = c.threshold;
	in.min_cpus = c.min_cpus;
	if (c.min_cpus > in.capacity) {
		r = np_json_fail(err, errlen, "config", "cpuSuppressMinCPUs",
				 "%d is above the node's %d CPUs", c.min_cpus,
				 in.capacity);
		goto out;
	}
	if ((r = np_suppress_compute(&in, &o, err, errlen)))
		goto out;
	/* policy none or cfsQuota: BE keeps its whole pool */
	be = p.be;
	if (c.policy == NP_SUPPRESS_CPUSET &&
	    (r = np_suppress_pick(t, &p, o.cpus, &be)))
		goto out;
	if (!(*result = result_json(&c, &p, &o, &be)))
		r = -ENOMEM;
out:
	np_state_free(&st);
	np_topology_free(t);
	return r;
}

/* expect's integer key k against the result's. */
static int check_int(const json_t *expect, const json_t *res, const char *k,
		     char *why, size_t len)
{
	const json_t *e = json_object_get(expect, k), *g;

	if (!e)
		return 0;
	g = json_object_get(res, k);
	if (json_is_integer(e) && json_is_integer(g) &&
	    json_integer_value(e) == json_integer_value(g))
		return 0;
	snprintf(why, len, "%s: got %lld, expected %lld", k,
		 g ? (long long)json_integer_value(g) : -1LL,
		 (long long)json_integer_value(e));
	return -1;
}

int np_plan_be_suppress_check(const json_t *expect, const json_t *result,
			      char *why, size_t len)
{
	static const char *const ints[] = {"system", "budget", "cpus",
					   "quota_us"};
	static const char *const sets[] = {"cpuset", "be_pool"};
	const json_t *e;

	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (check_int(expect, result, ints[i], why, len))
			return -1;
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		const char *g =
		    json_string_value(json_object_get(result, sets[i]));
		np_cpuset a, b;
		if (!(e = json_object_get(expect, sets[i])))
			continue;
		if (!g || !json_is_string(e) || np_cpuset_parse(&a, g, NULL, 0) ||
		    np_cpuset_parse(&b, json_string_value(e), NULL, 0) ||
		    !np_cpuset_equal(&a, &b)) {
			snprintf(why, len, "%s: got \"%s\", expected \"%s\"",
				 sets[i], g ? g : "",
				 json_is_string(e) ? json_string_value(e)
						   : "?");
			return -1;
		}
	}
	e = json_object_get(expect, "growth_limited");
	if (e && json_is_true(e) !=
		     json_is_true(json_object_get(result, "growth_limited"))) {
		snprintf(why, len, "growth_limited: got %s",
			 json_is_true(e) ? "false" : "true");
		return -1;
	}
	return 0;
}
