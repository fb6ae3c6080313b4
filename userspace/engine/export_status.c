// SPDX-License-Identifier: Apache-2.0
/*
 * The node state a numaplaced status object describes, for the exporters
 * (numaplace/export.h): the live daemon and a saved `status --json` give
 * this object, not the state file. Pure; every field is validated.
 */
#include "engine/json_util.h"
#include "numaplace/export.h"
#include "numaplace/error.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "devices": {"resource": ["id", ...]} of a status container. */
static int devices_from_status(const struct np_topology *t,
			       struct np_container_alloc *ca, const json_t *o,
			       const char *path, char *err, size_t errlen)
{
	const json_t *dv = json_object_get(o, "devices"), *ids, *v;
	const char *res;
	size_t i;

	if (!dv)
		return 0;
	if (!json_is_object(dv))
		return np_json_fail(err, errlen, path, "devices",
				    "expected an object of resource -> ids");
	json_object_foreach((json_t *)dv, res, ids)
	{
		if (!json_is_array(ids))
			return np_json_fail(err, errlen, path, "devices",
					    "\"%s\": expected an array of ids",
					    res);
		json_array_foreach(ids, i, v)
		{
			const char *id = json_string_value(v);
			int known = -1;

			for (int k = 0; id && k < t->ndevices; k++)
				if (!strcmp(t->devices[k].id, id) &&
				    !strcmp(t->devices[k].resource, res))
					known = k;
			if (known < 0 || ca->ndev >= 16)
				return np_json_fail(
				    err, errlen, path, "devices",
				    "\"%s\"[%zu]: %s", res, i,
				    known < 0 ? "not a device of that resource "
						"in status.topology"
					      : "more than 16 devices");
			ca->dev[ca->ndev++] = (int16_t)known;
		}
	}
	return 0;
}

/* A workload's or container's "name" at path: 1..NP_NAME_MAX-1 bytes. */
static int name_fits(const char *s, const char *path, char *err,
		     size_t errlen)
{
	if (!*s || strlen(s) >= NP_NAME_MAX)
		return np_json_fail(err, errlen, path, "name",
				    "empty or longer than %d bytes",
				    NP_NAME_MAX - 1);
	return 0;
}

/* One container: name, exclusive, cpuset (its own CPUs when exclusive),
 * mems, devices. */
static int container_from_status(const struct np_node_state *st,
				 struct np_workload_alloc *a, int k,
				 const json_t *o, const char *path,
				 np_cpuset *seen, char *err, size_t errlen)
{
	struct np_container_alloc *ca = &a->c[k];
	const char *s;
	np_cpuset cpus;
	int r;

	if (!json_is_object(o))
		return np_json_fail(err, errlen, path, NULL, "expected an object");
	if ((r = np_json_str(o, "name", path, true, &s, err, errlen)) ||
	    (r = np_json_bool(o, "exclusive", path, true, &ca->exclusive, err,
			      errlen)) ||
	    (r = np_json_cpuset(o, "cpuset", path, true, &cpus, err, errlen)))
		return r;
	if ((r = name_fits(s, path, err, errlen)) ||
	    (r = np_container_req_set_name(&a->req.c[k], s)))
		return r;
	if ((r = np_json_str(o, "mems", path, true, &s, err, errlen)))
		return r;
	if (np_nodemask_parse(&ca->mems, s, NULL, 0) ||
	    (ca->mems & ~st->topo->numa_mask))
		return np_json_fail(err, errlen, path, "mems",
				    "\"%s\" is not a set of status.topology's "
				    "NUMA nodes",
				    s);
	ca->hint.any = true;
	/* an init container's CPUs are the next containers' again: checked
	 * against the reserved CPUs only */
	a->req.c[k].init = json_is_true(json_object_get(o, "init"));
	if (ca->exclusive) {
		if (!np_cpuset_subset(&cpus, &st->topo->online))
			return np_json_fail(err, errlen, path, "cpuset",
					    "names CPUs status.topology does "
					    "not have");
		if ((!a->req.c[k].init && np_cpuset_intersects(&cpus, seen)) ||
		    np_cpuset_intersects(&cpus, &st->reserved))
			return np_json_fail(err, errlen, path, "cpuset",
					    "overlaps another exclusive set "
					    "or the reserved CPUs");
		if ((r = np_container_set_cpus(ca, &cpus)))
			return r;
		if (!a->req.c[k].init)
			np_cpuset_or(seen, seen, &cpus);
		a->req.c[k].cpu_milli = 1000LL * np_cpuset_count(&cpus);
	}
	return devices_from_status(st->topo, ca, o, path, err, errlen);
}

static int workload_from_status(const struct np_node_state *st,
				struct np_workload_alloc *a, const json_t *wj,
				const char *wp, np_cpuset *seen, char *err,
				size_t errlen)
{
	const json_t *cs, *cj;
	const char *s;
	char cp[192];
	size_t k;
	int r;

	if (!json_is_object(wj))
		return np_json_fail(err, errlen, wp, NULL, "expected an object");
	if ((r = np_json_str(wj, "name", wp, true, &s, err, errlen)))
		return r;
	if ((r = name_fits(s, wp, err, errlen)))
		return r;
	snprintf(a->req.name, sizeof(a->req.name), "%s", s);
	r = np_json_str(wj, "cgroup", wp, false, &s, err, errlen);
	if (r == 0 && strlen(s) >= NP_PATH_MAX)
		return np_json_fail(err, errlen, wp, "cgroup", "too long");
	if (r == 0 && !(a->req.cgroup = strdup(s)))
		return -ENOMEM;
	if (r && r != -ENOENT)
		return r;
	if ((r = np_json_str(wj, "qos", wp, true, &s, err, errlen)))
		return r;
	if (np_qos_parse(s, &a->req.qos))
		return np_json_fail(err, errlen, wp, "qos", "unknown \"%s\"", s);
	if ((r = np_json_str(wj, "class", wp, true, &s, err, errlen)))
		return r;
	if (np_qos_parse(s, &a->qos_class))
		return np_json_fail(err, errlen, wp, "class", "unknown \"%s\"",
				    s);
	cs = json_object_get(wj, "containers");
	if (!json_is_array(cs) || json_array_size(cs) > NP_MAX_CONTAINERS)
		return np_json_fail(err, errlen, wp, "containers",
				    "expected an array of at most %d",
				    NP_MAX_CONTAINERS);
	if ((r = np_workload_req_set_containers(&a->req,
						(int)json_array_size(cs))))
		return r;
	if (!(a->c = np_container_allocs_new((int)json_array_size(cs) + 1)))
		return -ENOMEM;
	a->ncontainers = (int)json_array_size(cs);
	json_array_foreach(cs, k, cj)
	{
		snprintf(cp, sizeof(cp), "%s.containers[%zu]", wp, k);
		if ((r = container_from_status(st, a, (int)k, cj, cp, seen, err,
					       errlen)))
			return r;
	}
	return 0;
}

/* status.workloads into st (whose reserved CPUs are set). */
static int workloads_from_status(struct np_node_state *st, const json_t *ws,
				 char *err, size_t errlen)
{
	struct np_workload_alloc **arr;
	const json_t *wj;
	np_cpuset seen;
	size_t i, n = json_array_size(ws);
	int r = 0;

	if (!json_is_array(ws))
		return np_json_fail(err, errlen, "status", "workloads",
				    "expected an array");
	if (!(arr = calloc(n + 1, sizeof(*arr))))
		return -ENOMEM;
	np_cpuset_zero(&seen);
	json_array_foreach(ws, i, wj)
	{
		char wp[64];

		snprintf(wp, sizeof(wp), "status.workloads[%zu]", i);
		if (!(arr[i] = calloc(1, sizeof(*arr[i])))) {
			r = -ENOMEM;
			break;
		}
		if ((r = workload_from_status(st, arr[i], wj, wp, &seen, err,
					      errlen)))
			break;
		for (size_t j = 0; j < i && !r; j++)
			if (!strcmp(arr[j]->req.name, arr[i]->req.name))
				r = np_json_fail(err, errlen, wp, "name",
						 "duplicate workload \"%s\"",
						 arr[i]->req.name);
		if (r)
			break;
	}
	if (r) {
		for (size_t x = 0; x < n; x++)
			if (arr[x]) {
				np_workload_alloc_free(arr[x]);
				free(arr[x]);
			}
		free(arr);
		return r;
	}
	st->w = arr;
	st->nworkloads = (int)n;
	st->cap = (int)n + 1;
	return np_state_refresh(st);
}

int np_export_state_from_status(const json_t *status,
				const struct np_node_policy *policy,
				struct np_topology **topo,
				struct np_node_state *st, char *err,
				size_t errlen)
{
	struct np_node_policy p = *policy;
	const json_t *pools;
	int r;

	*topo = NULL;
	memset(st, 0, sizeof(*st));
	if (!json_is_object(status))
		return np_errf(err, errlen, -EINVAL,
			       "status: expected an object");
	if ((r = np_topology_from_json(topo, json_object_get(status, "topology"),
				       "status.topology", err, errlen)))
		return r;
	pools = json_object_get(status, "pools");
	if (!json_is_object(pools)) {
		r = np_json_fail(err, errlen, "status", "pools",
				 "expected an object");
		goto fail;
	}
	p.reserved_explicit = true;
	p.reserved_count = 0;
	if ((r = np_json_cpuset(pools, "reserved", "status.pools", true,
				&p.reserved_cpus, err, errlen)) ||
	    (r = np_state_init(st, *topo, &p, err, errlen)))
		goto fail;
	r = np_json_cpuset(status, "offline_cpus", "status", false,
			   &st->offline, err, errlen);
	if (r && r != -ENOENT)
		goto fail;
	if (!np_cpuset_subset(&st->offline, &(*topo)->online)) {
		r = np_json_fail(err, errlen, "status", "offline_cpus",
				 "names CPUs status.topology does not have");
		goto fail;
	}
	if ((r = workloads_from_status(st, json_object_get(status, "workloads"),
				       err, errlen)))
		goto fail;
	return 0;
fail:
	np_state_free(st);
	np_topology_free(*topo);
	*topo = NULL;
	return r;
}
