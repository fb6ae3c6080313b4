/* SPDX-License-Identifier: Apache-2.0 */
/*
 * What the cluster reads about a node, built from the model (pure: no I/O):
 *
 * - a NodeResourceTopology object, topology.node.k8s.io/v1alpha2 (the
 *   k8stopologyawareschedwg/noderesourcetopology-api types): one zone per
 *   NUMA node ("node-N", type "Node") with costs from the distance matrix
 *   and the resources cpu, memory, hugepages-<size> and the devices, each
 *   with capacity, allocatable (capacity minus reserved) and available
 *   (allocatable minus what exclusive allocations hold); the Topology
 *   Manager policy and scope as attributes and as the old
 *   topologyPolicies enum;
 * - Koordinator's node annotations node.koordinator.sh/cpu-topology,
 *   cpu-shared-pools, be-cpu-shared-pools and pod-cpu-allocs, each value
 *   the JSON text koordlet writes.
 *
 * Quantities are strings in Kubernetes' form ("16", "1073741824"): CPUs
 * as counts, memory and hugepages in bytes, devices as counts.
 */
#ifndef NUMAPLACE_EXPORT_H
#define NUMAPLACE_EXPORT_H

#include "numaplace/admit.h"

#include <jansson.h>

#define NP_NRT_API_VERSION "topology.node.k8s.io/v1alpha2"
#define NP_NRT_KIND "NodeResourceTopology"

#define NP_KOORD_CPU_TOPOLOGY "node.koordinator.sh/cpu-topology"
#define NP_KOORD_CPU_SHARED_POOLS "node.koordinator.sh/cpu-shared-pools"
#define NP_KOORD_BE_CPU_SHARED_POOLS "node.koordinator.sh/be-cpu-shared-pools"
#define NP_KOORD_POD_CPU_ALLOCS "node.koordinator.sh/pod-cpu-allocs"

/* The deprecated topologyPolicies value for a policy and scope, as NFD's
 * topology-updater derives it: "None", "BestEffortContainerLevel",
 * "BestEffortPodLevel", "RestrictedContainerLevel", "RestrictedPodLevel",
 * "SingleNUMANodeContainerLevel", "SingleNUMANodePodLevel". */
const char *np_export_tm_policies(enum np_tm_policy p, enum np_tm_scope s);

/* A Kubernetes object name (RFC 1123 subdomain): at most 253 of
 * [a-z0-9.-], alphanumeric at both ends. */
bool np_export_node_name_ok(const char *s);

/* The NodeResourceTopology object of the node in st, metadata.name =
 * node_name. NULL on ENOMEM. */
json_t *np_export_nrt(const struct np_node_state *st, const char *node_name);

/* {"node.koordinator.sh/cpu-topology": "<JSON text>", ...}: the four
 * annotations. NULL on ENOMEM. */
json_t *np_export_koordinator(const struct np_node_state *st);

/*
 * The pod UID in a workload's cgroup path, when it names a kubelet pod
 * cgroup ("kubepods-pod<uid>.slice", "kubepods-burstable-pod<uid>.slice"
 * with '_' for '-', or cgroupfs "pod<uid>"): true and the UID in uid.
 */
bool np_export_pod_uid(const char *cgroup, char *uid, size_t len);

/*
 * The node state a numaplaced status object describes (numaplace/ctl.h,
 * op "status", or a saved `numaplace status --json`): *topo from
 * status.topology, reserved CPUs from status.pools.reserved, offline CPUs
 * from status.offline_cpus, and the workloads with their containers' CPUs,
 * memory nodes and devices. The status does not carry the node policy
 * (policy supplies it; its reserved CPUs are replaced by the status') nor
 * the memory and hugepages charged: the state has no charges. Every field
 * is validated (err names it: "status.workloads[2].containers[0].cpuset:
 * ..."). On success free st with np_state_free() and *topo with
 * np_topology_free(), in that order. -EINVAL or -ENOMEM.
 */
int np_export_state_from_status(const json_t *status,
				const struct np_node_policy *policy,
				struct np_topology **topo,
				struct np_node_state *st, char *err,
				size_t errlen);

#endif
