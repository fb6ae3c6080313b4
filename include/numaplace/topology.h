/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Machine topology: CPUs with their core / socket / NUMA node / L3 (uncore
 * cache), NUMA distances, memory and hugepages per node, PCI devices.
 *
 * Units (sockets, NUMA nodes, cores, L3 groups) are stored densely; each unit
 * keeps the id the source gave it, because the kubelet's tie-breaks sort by
 * those ids. Only online CPUs take part in allocation; offline CPUs are kept
 * for display.
 */
#ifndef NUMAPLACE_TOPOLOGY_H
#define NUMAPLACE_TOPOLOGY_H

#include "numaplace/cpuset.h"

#include <stdint.h>

#define NP_MAX_HUGEPAGE_SIZES 4
#define NP_DEFAULT_LOCAL_DISTANCE 10
#define NP_DEFAULT_REMOTE_DISTANCE 20

struct np_unit {
	int id;         /* id as given by the source (core id, socket id, ...) */
	int ncpus;      /* online CPUs in the unit */
	np_cpuset cpus; /* online CPUs in the unit */
};

struct np_hugepages {
	uint64_t size_kb; /* page size, e.g. 2048 or 1048576 */
	uint64_t total;   /* pages */
	uint64_t free;    /* pages */
};

struct np_numa_node {
	struct np_unit u; /* u.id = OS node id, < NP_MAX_NUMA */
	uint64_t mem_total; /* bytes */
	uint64_t mem_free;  /* bytes; == mem_total when unknown */
	int nhuge;
	struct np_hugepages huge[NP_MAX_HUGEPAGE_SIZES];
};

enum np_device_class {
	NP_DEV_OTHER = 0,
	NP_DEV_GPU,
	NP_DEV_NIC,
};

struct np_device {
	char id[64];       /* PCI address "0000:3b:00.0" or an opaque device id */
	char resource[96]; /* resource name, e.g. "vendor.com/gpu" */
	char name[96];     /* human-readable, may be empty */
	enum np_device_class cls;
	int numa; /* OS node id, -1 = no NUMA information */
};

struct np_cpu {
	int socket; /* index into topo->sockets */
	int numa;   /* index into topo->numa */
	int core;   /* index into topo->cores */
	int l3;     /* index into topo->l3s */
	bool online;
	bool present; /* the id exists in the topology at all */
};

struct np_topology {
	int max_cpu;        /* highest present CPU id + 1 */
	struct np_cpu *cpu; /* indexed by CPU id, max_cpu entries */
	np_cpuset online;   /* CPUs that can be allocated */
	np_cpuset offline;  /* present but offline */

	int nsockets, nnuma, ncores, nl3;
	struct np_unit *sockets;    /* sorted by id */
	struct np_numa_node *numa;  /* sorted by id */
	struct np_unit *cores;      /* sorted by id */
	struct np_unit *l3s;        /* sorted by id */
	int numa_index[NP_MAX_NUMA]; /* OS node id -> index, -1 if absent */
	np_nodemask numa_mask;        /* all node ids */
	/* distance[i * nnuma + j] between node indexes i and j */
	uint32_t *distance;
	bool distances_known;

	int ndevices;
	struct np_device *devices;

	/*
	 * The kubelet's declared counters: CPUsPerCore = NumCPUs / NumCores,
	 * CPUsPerSocket = NumCPUs / NumSockets (integer division over online
	 * CPUs), used to decide what counts as a "whole" unit.
	 */
	int ncpus; /* online CPUs */
	int cpus_per_core;
	int cpus_per_socket;
	int cpus_per_l3;
};

/* One CPU record of a topology description (JSON form and builders). */
struct np_cpu_desc {
	int cpu, core, socket, numa, l3; /* l3 = -1: unknown (uses socket) */
	bool online;
};

/*
 * Build a topology from CPU records. Validates: ids non-negative, CPU ids
 * unique and < NP_MAX_CPUS, NUMA ids < NP_MAX_NUMA, a core in one socket and
 * one NUMA node. err gets a message naming the offending record.
 * Returns 0 or -EINVAL / -ENOMEM.
 */
int np_topology_build(struct np_topology **out, const struct np_cpu_desc *cpus,
		      int n, char *err, size_t errlen);
/* Distances in node-index order (nnuma x nnuma); validates symmetry-free
 * basics: diagonal smallest in its row, values 1..255. */
int np_topology_set_distances(struct np_topology *t, const uint32_t *d,
			      char *err, size_t errlen);
int np_topology_add_device(struct np_topology *t, const struct np_device *d);
void np_topology_free(struct np_topology *t);
/*
 * t with the records of fix (CPUs present in t) in place of its own: at
 * start, CPUs offline now get back the place a saved state knows for them.
 * Memory, hugepages, distances and devices are carried over; the NUMA
 * nodes must stay the same. -EINVAL (err says why) or -ENOMEM.
 */
int np_topology_restore(const struct np_topology *t,
			const struct np_cpu_desc *fix, int nfix,
			struct np_topology **out, char *err, size_t errlen);
struct np_topology *np_topology_dup(const struct np_topology *t);

static inline uint32_t np_topology_distance(const struct np_topology *t,
					    int ni, int nj)
{
	return t->distance[ni * t->nnuma + nj];
}
/* NUMA node mask of the nodes holding any CPU of s. */
np_nodemask np_topology_nodes_of(const struct np_topology *t,
				 const np_cpuset *s);
/* Online CPUs of the nodes in m. */
void np_topology_cpus_of_nodes(const struct np_topology *t, np_nodemask m,
			       np_cpuset *out);
/* The CPUs aligned with a NUMA affinity m, as the kubelet's
 * getAlignedCPUs: those of the nodes in m, or with align-by-socket
 * (by_socket) those of every socket holding one of them. */
void np_topology_aligned_cpus(const struct np_topology *t, np_nodemask m,
			      bool by_socket, np_cpuset *out);
/* Number of distinct sockets touched by the nodes in m. */
int np_topology_sockets_of_nodes(const struct np_topology *t, np_nodemask m);
/* SMT siblings of every CPU in s (whole cores). */
void np_topology_cores_of(const struct np_topology *t, const np_cpuset *s,
			  np_cpuset *out);

/* Sources. src: NULL or "live" = this machine (hwloc); "xml:PATH" or a path
 * ending in .xml = hwloc XML; "synthetic:DESC" = hwloc synthetic; anything
 * else = a JSON topology file (see np_topology_from_json). */
int np_topology_load(struct np_topology **out, const char *src, char *err,
		     size_t errlen);
int np_topology_from_hwloc_live(struct np_topology **out, char *err,
				size_t errlen);
int np_topology_from_hwloc_xml(struct np_topology **out, const char *path,
			       char *err, size_t errlen);
int np_topology_from_hwloc_synthetic(struct np_topology **out,
				     const char *desc, char *err,
				     size_t errlen);
int np_topology_from_json_file(struct np_topology **out, const char *path,
			       char *err, size_t errlen);

#endif
