/* SPDX-License-Identifier: Apache-2.0 */
/* Test/bench helper: regular topologies built from a few numbers. */
#ifndef NUMAPLACE_TOPO_GEN_H
#define NUMAPLACE_TOPO_GEN_H

#include "numaplace/topology.h"

/*
 * sockets x numa_per_socket x cores_per_numa x threads; linux_numbering puts
 * SMT siblings N/threads apart (0 and N/2 on SMT2), else adjacent. Each NUMA
 * node gets mem_per_node bytes; distances 10 local, 12 same socket, 20 else.
 * numa_per_socket may be negative: -k = k sockets per NUMA node.
 */
struct np_topology *np_test_topology(int sockets, int numa_per_socket,
				     int cores_per_numa, int threads,
				     bool linux_numbering,
				     uint64_t mem_per_node);

#endif
