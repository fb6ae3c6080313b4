// SPDX-License-Identifier: Apache-2.0
/*
 * Planner kind "resize": an in-place resize of an admitted workload's
 * exclusive container (np_resize) against a given state. Pure: no I/O.
 */
#include "engine/json_util.h"
#include "numaplace/admit.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static json_t *cpuset_json(const np_cpuset *s)
{
	char *str = np_cpuset_str(s);
	json_t *j = json_string(str ? str : "");
	free(str);
	return j;
}

/* The container's CPUs (named, or the only exclusive one), else empty. */
static np_cpuset container_cpus(const struct np_node_state *st,
				const char *name, const char *ctr)
{
	np_cpuset none;
	int i = np_state_find(st, name);

	np_cpuset_zero(&none);
	for (int k = 0; i >= 0 && k < st->w[i].ncontainers; k++)
		if (ctr ? !strcmp(st->w[i].c[k].name, ctr)
			: st->w[i].c[k].exclusive)
			return st->w[i].c[k].cpus;
	return none;
}

/* Resize in st and describe it into *res. */
static int do_resize(struct np_node_state *st, const char *name,
		     const char *ctr, int cpus, json_t **res)
{
	struct np_decision d;
	char why[512];
	np_cpuset before = container_cpus(st, name, ctr), after;
	int r = np_resize(st, name, ctr, cpus, &d, why, sizeof(why));

	if (r == -ENOENT || r == -EINVAL) {
		/* Valid JSON the state cannot take: an answer, not exit 2. */
		*res = json_pack("{s:s}", "error", why);
		return *res ? 0 : -ENOMEM;
	}
	if (r)
		return r;
	*res = np_decision_to_json(st, &d);
	if (!*res)
		return -ENOMEM;
	after = container_cpus(st, name, ctr);
	json_object_set_new(*res, "resized", json_boolean(d.admitted));
	json_object_set_new(*res, "previous", cpuset_json(&before));
	if (d.admitted)
		json_object_set_new(*res, "cpus", cpuset_json(&after));
	if (!d.admitted && d.error_kind[0])
		json_object_set_new(*res, "error_kind",
				    json_string(d.error_kind));
	return 0;
}

int np_plan_resize(const json_t *req, json_t **result, char *err, size_t errlen)
{
	struct np_topology *t = NULL;
	struct np_node_policy pol;
	struct np_node_state st = {0};
	const char *name, *ctr = NULL;
	long long cpus;
	int r;

	if ((r = np_json_str(req, "workload", "", true, &name, err, errlen)))
		return r;
	if (!*name || strlen(name) >= NP_NAME_MAX)
		return np_json_fail(err, errlen, "", "workload",
				    "expected a workload name of 1..%d bytes",
				    NP_NAME_MAX - 1);
	r = np_json_str(req, "container", "", false, &ctr, err, errlen);
	if (r && r != -ENOENT)
		return r;
	if (ctr && (!*ctr || strlen(ctr) >= NP_NAME_MAX))
		return np_json_fail(err, errlen, "", "container",
				    "expected a container name of 1..%d bytes",
				    NP_NAME_MAX - 1);
	if ((r = np_json_int(req, "cpus", "", true, 1, NP_MAX_CPUS, &cpus, err,
			     errlen)))
		return r;
	if ((r = np_topology_from_json(&t, json_object_get(req, "topology"),
				       "topology", err, errlen)) ||
	    (r = np_policy_from_json(&pol, json_object_get(req, "policy"),
				     "policy", err, errlen)) ||
	    (r = np_state_init_flags(&st, t, &pol, NP_STATE_ALLOW_NO_RESERVED,
				     err, errlen)) ||
	    (r = np_state_load_json(&st, json_object_get(req, "state"), "state",
				    err, errlen)))
		goto out;
	if ((r = do_resize(&st, name, ctr, (int)cpus, result)))
		goto out;
	if (!json_object_get(*result, "error") &&
	    (r = np_plan_finish(&st, *result))) {
		json_decref(*result);
		*result = NULL;
	}
out:
	np_state_free(&st);
	np_topology_free(t);
	return r;
}
