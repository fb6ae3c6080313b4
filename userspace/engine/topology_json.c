// SPDX-License-Identifier: Apache-2.0
/* JSON topology form: parse (ours and Koordinator's) and emit. */
#include "numaplace/topology_json.h"
#include "engine/json_util.h"
#include "numaplace/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[] = {
    [NP_DEV_OTHER] = "other",
    [NP_DEV_GPU] = "gpu",
    [NP_DEV_NIC] = "nic",
};

const char *np_device_class_name(enum np_device_class c)
{
	return np_name_of(class_names, NP_NAMES_LEN(class_names), (int)c,
			  "other");
}

int np_device_class_parse(const char *s, enum np_device_class *out)
{
	int i = NP_NAME_FIND(class_names, s);

	if (i < 0)
		return -EINVAL;
	*out = (enum np_device_class)i;
	return 0;
}

/* One CPU record; koord = Koordinator's {"id","core","socket","node"}. */
static int parse_cpu(const json_t *o, const char *path, bool koord,
		     struct np_cpu_desc *d, char *err, size_t errlen)
{
	long long v;
	bool b = true;
	int r;

	static const char *const keys[] = {"cpu", "core", "socket", "numa",
					   "l3", "online", NULL};
	static const char *const kkeys[] = {"id", "core", "socket", "node",
					    "l3", "online", NULL};

	if (!json_is_object(o))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object");
	/* a misspelt "online" would count the CPU as online */
	if ((r = np_json_only_keys(o, koord ? kkeys : keys, path, err, errlen)))
		return r;
	if ((r = np_json_int(o, koord ? "id" : "cpu", path, true, 0,
			     NP_MAX_CPUS - 1, &v, err, errlen)))
		return r;
	d->cpu = (int)v;
	if ((r = np_json_int(o, "core", path, true, 0, 1 << 30, &v, err,
			     errlen)))
		return r;
	d->core = (int)v;
	if ((r = np_json_int(o, "socket", path, true, 0, 1 << 30, &v, err,
			     errlen)))
		return r;
	d->socket = (int)v;
	if ((r = np_json_int(o, koord ? "node" : "numa", path, true, 0,
			     NP_MAX_NUMA - 1, &v, err, errlen)))
		return r;
	d->numa = (int)v;
	d->l3 = -1;
	r = np_json_int(o, "l3", path, false, 0, 1 << 30, &v, err, errlen);
	if (r == 0)
		d->l3 = (int)v;
	else if (r != -ENOENT)
		return r;
	r = np_json_bool(o, "online", path, false, &b, err, errlen);
	if (r && r != -ENOENT)
		return r;
	d->online = b;
	return 0;
}

static int parse_distances(struct np_topology *t, const json_t *rows,
			   const char *path, char *err, size_t errlen)
{
	int n = t->nnuma;
	uint32_t *d;
	char p[128];
	int r;

	if (!json_is_array(rows) || (int)json_array_size(rows) != n)
		return np_json_fail(err, errlen, path, "distances",
				    "expected %d rows (one per NUMA node)", n);
	d = calloc((size_t)n * (size_t)n, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		const json_t *row = json_array_get(rows, (size_t)i);
		if (!json_is_array(row) || (int)json_array_size(row) != n) {
			snprintf(p, sizeof(p), "%s.distances[%d]", path, i);
			free(d);
			return np_json_fail(err, errlen, p, NULL,
					    "expected %d numbers", n);
		}
		for (int j = 0; j < n; j++) {
			const json_t *v = json_array_get(row, (size_t)j);
			if (!json_is_integer(v) || json_integer_value(v) < 1 ||
			    json_integer_value(v) > 255) {
				snprintf(p, sizeof(p), "%s.distances[%d][%d]",
					 path, i, j);
				free(d);
				return np_json_fail(err, errlen, p, NULL,
						    "expected an integer 1..255");
			}
			d[i * n + j] = (uint32_t)json_integer_value(v);
		}
	}
	r = np_topology_set_distances(t, d, err, errlen);
	free(d);
	return r;
}

typedef int (*parse_elem_fn)(struct np_topology *t, const json_t *o,
			     const char *p, char *err, size_t errlen);

/* Array field key of the topology: every element, with only the allowed
 * keys, to fn at path "PATH.KEY[i]". */
static int parse_each(struct np_topology *t, const json_t *arr,
		      const char *path, const char *key,
		      const char *const *keys, parse_elem_fn fn, char *err,
		      size_t errlen)
{
	char p[128];
	size_t i;
	json_t *o;
	int r;

	if (!json_is_array(arr))
		return np_json_fail(err, errlen, path, key,
				    "expected an array");
	json_array_foreach(arr, i, o)
	{
		snprintf(p, sizeof(p), "%s.%s[%zu]", path, key, i);
		if ((r = np_json_only_keys(o, keys, p, err, errlen)) ||
		    (r = fn(t, o, p, err, errlen)))
			return r;
	}
	return 0;
}

/* "hugepages" of one NUMA node (at path p). */
static int parse_hugepages(struct np_numa_node *nn, const json_t *hp,
			   const char *p, char *err, size_t errlen)
{
	static const char *const hkeys[] = {"size_kb", "total", "free", NULL};
	long long v;
	json_t *h;
	size_t k;
	int r;

	if (!json_is_array(hp) || json_array_size(hp) > NP_MAX_HUGEPAGE_SIZES)
		return np_json_fail(err, errlen, p, "hugepages",
				    "expected an array of at most %d "
				    "page sizes",
				    NP_MAX_HUGEPAGE_SIZES);
	nn->nhuge = 0;
	json_array_foreach(hp, k, h)
	{
		char hpth[160];
		struct np_hugepages *g = &nn->huge[nn->nhuge];
		snprintf(hpth, sizeof(hpth), "%s.hugepages[%zu]", p, k);
		if ((r = np_json_only_keys(h, hkeys, hpth, err, errlen)))
			return r;
		if ((r = np_json_int(h, "size_kb", hpth, true, 4, 16LL << 20,
				     &v, err, errlen)))
			return r;
		g->size_kb = (uint64_t)v;
		if ((r = np_json_int(h, "total", hpth, true, 0, 1LL << 40, &v,
				     err, errlen)))
			return r;
		g->total = g->free = (uint64_t)v;
		r = np_json_int(h, "free", hpth, false, 0, (long long)g->total,
				&v, err, errlen);
		if (r == 0)
			g->free = (uint64_t)v;
		else if (r != -ENOENT)
			return r;
		nn->nhuge++;
	}
	return 0;
}

/* One element of "numa_nodes" (at path p). */
static int parse_numa_node(struct np_topology *t, const json_t *o,
			   const char *p, char *err, size_t errlen)
{
	struct np_numa_node *nn;
	const json_t *hp;
	long long v;
	int r;

	if ((r = np_json_int(o, "id", p, true, 0, NP_MAX_NUMA - 1, &v, err,
			     errlen)))
		return r;
	if (t->numa_index[v] < 0)
		return np_json_fail(err, errlen, p, "id",
				    "NUMA node %lld has no CPUs in \"cpus\"",
				    v);
	nn = &t->numa[t->numa_index[v]];
	r = np_json_int(o, "memory", p, false, 0, INT64_MAX, &v, err, errlen);
	if (r == 0)
		nn->mem_total = nn->mem_free = (uint64_t)v;
	else if (r != -ENOENT)
		return r;
	r = np_json_int(o, "memory_free", p, false, 0, INT64_MAX, &v, err,
			errlen);
	if (r == 0) {
		if ((uint64_t)v > nn->mem_total)
			return np_json_fail(err, errlen, p, "memory_free",
					    "exceeds \"memory\"");
		nn->mem_free = (uint64_t)v;
	} else if (r != -ENOENT) {
		return r;
	}
	hp = json_object_get(o, "hugepages");
	return hp ? parse_hugepages(nn, hp, p, err, errlen) : 0;
}

/* "devices": one element (at path p). */
static int parse_device(struct np_topology *t, const json_t *o, const char *p,
			char *err, size_t errlen)
{
	struct np_device d = {.numa = -1};
	const char *s;
	long long v;
	int r;

	if ((r = np_json_str(o, "id", p, true, &s, err, errlen)))
		return r;
	if (!*s || strlen(s) >= sizeof(d.id))
		return np_json_fail(err, errlen, p, "id",
				    "must be 1..%zu characters",
				    sizeof(d.id) - 1);
	strcpy(d.id, s);
	if ((r = np_json_str(o, "resource", p, true, &s, err, errlen)))
		return r;
	if (!*s || strlen(s) >= sizeof(d.resource))
		return np_json_fail(err, errlen, p, "resource",
				    "must be 1..%zu characters",
				    sizeof(d.resource) - 1);
	strcpy(d.resource, s);
	r = np_json_str(o, "name", p, false, &s, err, errlen);
	if (r == 0)
		snprintf(d.name, sizeof(d.name), "%s", s);
	else if (r != -ENOENT)
		return r;
	r = np_json_str(o, "class", p, false, &s, err, errlen);
	if (r == 0 && np_device_class_parse(s, &d.cls) < 0)
		return np_json_fail(err, errlen, p, "class",
				    "\"%s\" is not gpu, nic or other", s);
	if (r && r != -ENOENT)
		return r;
	r = np_json_int(o, "numa", p, false, 0, NP_MAX_NUMA - 1, &v, err,
			errlen);
	if (r == 0) {
		if (t->numa_index[v] < 0)
			return np_json_fail(err, errlen, p, "numa",
					    "NUMA node %lld does not "
					    "exist",
					    v);
		d.numa = (int)v;
	} else if (r != -ENOENT) {
		return r;
	}
	for (int k = 0; k < t->ndevices; k++)
		if (strcmp(t->devices[k].id, d.id) == 0)
			return np_json_fail(err, errlen, p, "id",
					    "duplicate device id \"%s\"", d.id);
	return np_topology_add_device(t, &d);
}

int np_topology_from_json(struct np_topology **out, const json_t *j,
			  const char *path, char *err, size_t errlen)
{
	static const char *const node_keys[] = {"id", "memory", "memory_free",
						"hugepages", NULL};
	static const char *const device_keys[] = {"id",	   "resource", "name",
						  "class", "numa",     NULL};
	struct np_topology *t = NULL;
	struct np_cpu_desc *d = NULL;
	const json_t *arr, *o;
	bool koord = false;
	char p[128];
	size_t i, n;
	int r;

	if (!path)
		path = "topology";
	if (!json_is_object(j))
		return np_json_fail(err, errlen, path, NULL,
				    "expected an object");
	arr = json_object_get(j, "cpus");
	if (!arr) {
		arr = json_object_get(j, "detail");
		koord = true;
	}
	if (!json_is_array(arr) || json_array_size(arr) == 0)
		return np_json_fail(err, errlen, path, koord ? "detail" : "cpus",
				    "expected a non-empty array of CPUs");
	n = json_array_size(arr);
	if (n > NP_MAX_CPUS)
		return np_json_fail(err, errlen, path, "cpus",
				    "%zu CPUs exceed the limit of %d", n,
				    NP_MAX_CPUS);
	d = calloc(n, sizeof(*d));
	if (!d)
		return -ENOMEM;
	json_array_foreach(arr, i, o)
	{
		snprintf(p, sizeof(p), "%s.%s[%zu]", path,
			 koord ? "detail" : "cpus", i);
		if ((r = parse_cpu(o, p, koord, &d[i], err, errlen)))
			goto out;
	}
	if ((r = np_topology_build(&t, d, (int)n, err, errlen))) {
		if (err && errlen && r == -EINVAL) {
			char tmp[512];
			snprintf(tmp, sizeof(tmp), "%s", err);
			snprintf(err, errlen, "%s.%s", path, tmp);
		}
		goto out;
	}
	if ((o = json_object_get(j, "distances")) && !json_is_null(o) &&
	    (r = parse_distances(t, o, path, err, errlen)))
		goto out;
	if ((o = json_object_get(j, "numa_nodes")) &&
	    (r = parse_each(t, o, path, "numa_nodes", node_keys,
			    parse_numa_node, err, errlen)))
		goto out;
	if ((o = json_object_get(j, "devices")) &&
	    (r = parse_each(t, o, path, "devices", device_keys, parse_device,
			    err, errlen)))
		goto out;
	*out = t;
	t = NULL;
out:
	np_topology_free(t);
	free(d);
	return r;
}

json_t *np_topology_to_json(const struct np_topology *t)
{
	json_t *root = json_object(), *cpus = json_array(), *dist = json_array(),
	       *nodes = json_array(), *devs = json_array();

	if (!root || !cpus || !dist || !nodes || !devs)
		goto fail;
	for (int c = 0; c < t->max_cpu; c++) {
		const struct np_cpu *p = &t->cpu[c];
		if (!p->present)
			continue;
		json_array_append_new(
			cpus, json_pack("{s:i,s:i,s:i,s:i,s:i,s:b}", "cpu", c,
					"core", t->cores[p->core].id, "socket",
					t->sockets[p->socket].id, "numa",
					t->numa[p->numa].u.id, "l3",
					t->l3s[p->l3].id, "online", p->online));
	}
	for (int i = 0; i < t->nnuma; i++) {
		json_t *row = json_array(), *hp = json_array();
		const struct np_numa_node *nn = &t->numa[i];
		for (int k = 0; k < t->nnuma; k++)
			json_array_append_new(
				row, json_integer(np_topology_distance(t, i, k)));
		json_array_append_new(dist, row);
		for (int h = 0; h < nn->nhuge; h++)
			json_array_append_new(
				hp, json_pack("{s:I,s:I,s:I}", "size_kb",
					      (json_int_t)nn->huge[h].size_kb,
					      "total",
					      (json_int_t)nn->huge[h].total,
					      "free",
					      (json_int_t)nn->huge[h].free));
		json_array_append_new(
			nodes, json_pack("{s:i,s:I,s:I,s:o}", "id", nn->u.id,
					 "memory", (json_int_t)nn->mem_total,
					 "memory_free",
					 (json_int_t)nn->mem_free, "hugepages",
					 hp));
	}
	for (int i = 0; i < t->ndevices; i++) {
		const struct np_device *d = &t->devices[i];
		json_t *o = json_pack("{s:s,s:s,s:s,s:s}", "id", d->id,
				      "resource", d->resource, "name", d->name,
				      "class", np_device_class_name(d->cls));
		json_object_set_new(o, "numa",
				    d->numa >= 0 ? json_integer(d->numa)
						 : json_null());
		json_array_append_new(devs, o);
	}
	json_object_set_new(root, "cpus", cpus);
	if (t->distances_known) {
		json_object_set_new(root, "distances", dist);
	} else {
		json_decref(dist);
		json_object_set_new(root, "distances", json_null());
	}
	json_object_set_new(root, "numa_nodes", nodes);
	json_object_set_new(root, "devices", devs);
	return root;
fail:
	json_decref(root);
	json_decref(cpus);
	json_decref(dist);
	json_decref(nodes);
	json_decref(devs);
	return NULL;
}
