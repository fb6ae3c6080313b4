// SPDX-License-Identifier: Apache-2.0
/* Regular topologies for tests and benchmarks. */
#include "topo_gen.h"

#include <stdlib.h>

struct np_topology *np_test_topology(int sockets, int numa_per_socket,
				     int cores_per_numa, int threads,
				     bool linux_numbering,
				     uint64_t mem_per_node)
{
	int sock_per_numa = numa_per_socket < 0 ? -numa_per_socket : 1;
	int nps = numa_per_socket < 0 ? 1 : numa_per_socket;
	int nnuma = numa_per_socket < 0 ? sockets / sock_per_numa
					: sockets * nps;
	int cores_per_socket = numa_per_socket < 0
				       ? cores_per_numa / sock_per_numa
				       : cores_per_numa * nps;
	int ncores = sockets * cores_per_socket, n = ncores * threads;
	struct np_cpu_desc *d = calloc((size_t)n, sizeof(*d));
	struct np_topology *t = NULL;
	uint32_t *dist;
	char err[256];

	if (!d)
		return NULL;
	for (int core = 0; core < ncores; core++) {
		int sock = core / cores_per_socket;
		int numa = numa_per_socket < 0
				   ? sock / sock_per_numa
				   : sock * nps +
					     (core % cores_per_socket) /
						     cores_per_numa;
		for (int th = 0; th < threads; th++) {
			int cpu = linux_numbering ? th * ncores + core
						  : core * threads + th;
			d[cpu] = (struct np_cpu_desc){.cpu = cpu,
						      .core = core,
						      .socket = sock,
						      .numa = numa,
						      .l3 = numa,
						      .online = true};
		}
	}
	if (np_topology_build(&t, d, n, err, sizeof(err)) < 0) {
		free(d);
		return NULL;
	}
	free(d);
	dist = calloc((size_t)nnuma * (size_t)nnuma, sizeof(*dist));
	for (int i = 0; dist && i < nnuma; i++)
		for (int j = 0; j < nnuma; j++) {
			int si = t->cpu[np_cpuset_first(&t->numa[i].u.cpus)].socket;
			int sj = t->cpu[np_cpuset_first(&t->numa[j].u.cpus)].socket;
			dist[i * nnuma + j] = i == j ? 10 : si == sj ? 12 : 20;
		}
	if (dist)
		np_topology_set_distances(t, dist, err, sizeof(err));
	free(dist);
	for (int i = 0; i < t->nnuma; i++)
		t->numa[i].mem_total = t->numa[i].mem_free = mem_per_node;
	return t;
}
