// SPDX-License-Identifier: Apache-2.0
/*
 * Where CPUs that are offline now sat when the state was saved: Linux
 * removes an offline CPU's topology directory, so hwloc cannot say which
 * core, package or node it belongs to, and the topology a restart sees
 * differs from the saved one. The saved "topology" object says it.
 */
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/state_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

/* The id of the unit in map ({"id": "cpulist"}) whose CPUs hold cpu;
 * -1 when none does. */
static int unit_of(const json_t *map, int cpu)
{
	const char *key;
	const json_t *v;

	json_object_foreach((json_t *)map, key, v)
	{
		np_cpuset s;
		char *end;
		long id = strtol(key, &end, 10);
		if (*end || id < 0 || id > 1 << 30 || !json_is_string(v) ||
		    np_cpuset_parse(&s, json_string_value(v), NULL, 0))
			continue;
		if (np_cpuset_test(&s, cpu))
			return (int)id;
	}
	return -1;
}

/* The L3 of an online CPU of t in the same core (ids from the saved
 * map), else in the same socket; -1: unknown (the socket's). */
static int l3_of(const struct np_topology *t, const json_t *cores, int core,
		 int socket)
{
	for (int c = 0; c < t->max_cpu; c++)
		if (t->cpu[c].online && unit_of(cores, c) == core)
			return t->l3s[t->cpu[c].l3].id;
	for (int c = 0; c < t->max_cpu; c++)
		if (t->cpu[c].online && t->sockets[t->cpu[c].socket].id == socket)
			return t->l3s[t->cpu[c].l3].id;
	return -1;
}

int np_statefile_offline_places(const char *dir, const struct np_topology *t,
				struct np_cpu_desc **fix, int *nfix)
{
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_json_ json_t *doc = NULL;
	const json_t *topo, *cores, *sockets, *numa;
	np_cpuset saved_online;
	struct np_cpu_desc *f;
	int n = 0;

	*fix = NULL;
	*nfix = 0;
	if (np_cpuset_empty(&t->offline))
		return 0;
	if (asprintf(&path, "%s/" NP_STATEFILE_NAME, dir) < 0) {
		path = NULL;
		return -ENOMEM;
	}
	if (np_read_at(AT_FDCWD, path, NP_READ_NOFOLLOW | NP_READ_REGULAR,
		       NP_STATEFILE_MAX_SIZE, &buf, NULL) ||
	    !(doc = json_loads(buf, 0, NULL)))
		return 0;
	topo = json_object_get(json_object_get(doc, "body"), "topology");
	cores = json_object_get(topo, "cores");
	sockets = json_object_get(topo, "sockets");
	numa = json_object_get(topo, "numa");
	if (!json_is_object(cores) || !json_is_object(sockets) ||
	    !json_is_object(numa) ||
	    !json_is_string(json_object_get(topo, "online")) ||
	    np_cpuset_parse(&saved_online,
			    json_string_value(json_object_get(topo, "online")),
			    NULL, 0))
		return 0;
	if (!(f = calloc((size_t)np_cpuset_count(&t->offline), sizeof(*f))))
		return -ENOMEM;
	NP_CPUSET_FOREACH(cpu, &t->offline)
	{
		struct np_cpu_desc d = {.cpu = cpu, .online = true};
		if (!np_cpuset_test(&saved_online, cpu))
			continue;
		d.core = unit_of(cores, cpu);
		d.socket = unit_of(sockets, cpu);
		d.numa = unit_of(numa, cpu);
		if (d.core < 0 || d.socket < 0 || d.numa < 0)
			continue;
		d.l3 = l3_of(t, cores, d.core, d.socket);
		f[n++] = d;
	}
	if (!n) {
		free(f);
		return 0;
	}
	*fix = f;
	*nfix = n;
	return 0;
}
