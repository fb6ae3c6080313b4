// SPDX-License-Identifier: Apache-2.0
/*
 * Planner kind "resize": an in-place resize of an admitted workload's
 * exclusive container (np_resize) against a given state. Pure: no I/O.
 */
#include "engine/json_util.h"
#include "engine/plan_internal.h"
#include "numaplace/admit.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The container's CPUs (named, or the only exclusive one), else empty. */
static np_cpuset container_cpus(const struct np_node_state *st,
				const char *name, const char *ctr)
{
	np_cpuset none;
	int i = np_state_find(st, name);

	np_cpuset_zero(&none);
	for (int k = 0; i >= 0 && k < st->w[i]->ncontainers; k++)
		if (ctr ? !strcmp(st->w[i]->req.c[k].name, ctr)
			: st->w[i]->c[k].exclusive)
			return *st->w[i]->c[k].cpus;
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
	json_object_set_new(*res, "previous", np_json_cpuset_str(&before));
	if (d.admitted)
		json_object_set_new(*res, "cpus", np_json_cpuset_str(&after));
	if (!d.admitted && d.error_kind[0])
		json_object_set_new(*res, "error_kind",
				    json_string(d.error_kind));
	return 0;
}

int np_plan_resize(const json_t *req, json_t **result, char *err, size_t errlen)
{
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	const char *name, *ctr;
	long long cpus;
	int r;

	if ((r = np_plan_target(req, &name, &ctr, err, errlen)) ||
	    (r = np_json_int(req, "cpus", "", true, 1, NP_MAX_CPUS, &cpus, err,
			     errlen)))
		return r;
	if ((r = np_plan_load(req, &t, &st, err, errlen)))
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
