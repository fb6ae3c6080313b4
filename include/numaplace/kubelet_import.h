/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Adopting the kubelet's exclusive CPU allocations: read its CPU Manager
 * checkpoint (/var/lib/kubelet/cpu_manager_state) and turn every pod with
 * exclusive CPUs into a numaplace workload that keeps exactly those CPUs
 * (`numaplace import-kubelet-state FILE`).
 *
 * Checkpoint versions (see the kubelet's cpumanager/state/checkpoint.go):
 *   V1 {"policyName", "defaultCpuSet", "entries": {containerID: cpuset},
 *       "checksum"}
 *   V2 {"policyName", "defaultCpuSet",
 *       "entries": {podUID: {containerName: cpuset}}, "checksum"}
 *   V3 V2 + "podEntries": {podUID: cpuset} (PodLevelResourceManagers: the
 *       pod's whole exclusive set; the reference we follow does not spell
 *       the value out, so a cpuset string is the one form accepted)
 *   V4 V3 inline (for rollback) + "data": a JSON string holding
 *       {policyName, defaultCpuSet, entries, podEntries}, which is
 *       authoritative, + "dataChecksum"; the legacy "checksum" is 0.
 *
 * The kubelet's checksums are NOT verified: they are FNV-32a over Go's
 * dump.ForHash rendering of its structs (with the struct name substituted
 * for older kubelets), which we cannot reproduce exactly. The structure is
 * verified instead: types, CPU lists, no CPU held twice, no entry in
 * defaultCpuSet, every CPU online in this node's topology.
 *
 * Each pod becomes one workload:
 *   name     "kubelet-<first 8 characters of the pod UID>" (the whole UID
 *            if that name is taken)
 *   cgroup   "<cgroup_prefix>/kubepods-pod<UID with '-' as '_'>.slice":
 *            the kubelet's systemd cgroup driver layout for Guaranteed
 *            pods; cgroup_prefix defaults to "kubepods.slice"
 *            (NP_KUBELET_CGROUP_PREFIX), relative to numaplace's managed
 *            parent cgroup
 *   qos      Guaranteed, one container per entry with cpu = the size of
 *            its set, exclusive, cpus = the set, mems = the NUMA nodes of
 *            those CPUs, hint = those nodes (preferred when no fewer nodes
 *            could hold that many CPUs); memory is not adopted
 *   V3 pod-level CPUs that no container entry holds go to an extra
 *            exclusive container named "pod-pool" (NP_KUBELET_POD_POOL),
 *            so that they stay the pod's.
 * V1 checkpoints are parsed but cannot be adopted: they key CPU sets by
 * container ID, and nothing says which pod cgroup a container belongs to.
 */
#ifndef NUMAPLACE_KUBELET_IMPORT_H
#define NUMAPLACE_KUBELET_IMPORT_H

#include "numaplace/admit.h"

#include <jansson.h>
#include <stdint.h>

#define NP_KUBELET_CGROUP_PREFIX "kubepods.slice"
#define NP_KUBELET_POD_POOL "pod-pool"
#define NP_KUBELET_UID_MAX 64
#define NP_KUBELET_MAX_SIZE (16u << 20)

struct np_kubelet_entry {
	char pod_uid[NP_KUBELET_UID_MAX]; /* "" in V1 */
	char container[NP_NAME_MAX];	  /* name (V1: container ID) */
	np_cpuset cpus;
};

struct np_kubelet_pod_entry {
	char pod_uid[NP_KUBELET_UID_MAX];
	np_cpuset cpus;
};

struct np_kubelet_checkpoint {
	int version; /* 1..4, as detected */
	char policy[64];
	np_cpuset default_cpus;
	bool has_checksum;
	uint32_t checksum; /* legacy checksum, not verified */
	bool has_data_checksum;
	uint32_t data_checksum; /* V4, not verified */
	int nentries;
	struct np_kubelet_entry *entries; /* in file order */
	int npod_entries;
	struct np_kubelet_pod_entry *pod_entries;
};

/*
 * Parse a checkpoint document (structure only: the kubelet checksums are
 * not verified, see above). err names the field. 0 or -EINVAL / -ENOMEM.
 */
int np_kubelet_checkpoint_parse(struct np_kubelet_checkpoint *ck,
				const json_t *j, char *err, size_t errlen);
/* Read and parse a checkpoint file. 0 or -errno; err names the file. */
int np_kubelet_checkpoint_read(struct np_kubelet_checkpoint *ck,
			       const char *path, char *err, size_t errlen);
void np_kubelet_checkpoint_free(struct np_kubelet_checkpoint *ck);

/* "<prefix>/kubepods-pod<uid with - as _>.slice"; -ENAMETOOLONG. */
int np_kubelet_pod_cgroup(const char *prefix, const char *uid, char *buf,
			  size_t len);

/*
 * Add the checkpoint's pods to st as workloads (see above). All or
 * nothing: on any error st is unchanged. Refuses (err says why and what to
 * do):
 *   -ENODATA   policyName is not "static": nothing to adopt
 *   -ENOTSUP   a V1 checkpoint (no pod UIDs)
 *   -EINVAL    st's cpu_policy is not "static"; CPUs not online here;
 *              CPUs held by two entries; an entry inside defaultCpuSet;
 *              names that cannot be used
 *   -EEXIST    a pod is already adopted, or its CPUs are held by an
 *              existing workload or reserved by numaplace's policy
 * cgroup_prefix NULL means NP_KUBELET_CGROUP_PREFIX; "" means the pod
 * cgroups sit directly below the managed parent. On success *nadopted (may
 * be NULL) is the number of workloads added (pods without exclusive CPUs
 * are skipped).
 */
int np_kubelet_adopt(struct np_node_state *st,
		     const struct np_kubelet_checkpoint *ck,
		     const char *cgroup_prefix, int *nadopted, char *err,
		     size_t errlen);

/*
 * Read the checkpoint at path and adopt it into st (np_kubelet_checkpoint_read
 * + np_kubelet_adopt). The kubelet's checksum is not verified, only the
 * structure. 0 or a negative errno as above.
 */
int np_kubelet_import(const char *path, struct np_node_state *st,
		      const char *cgroup_prefix, char *err, size_t errlen);

/*
 * What np_kubelet_import() would adopt, without changing st:
 *   {"source": PATH,
 *    "kubelet": {"version": 2, "policyName": "static",
 *                "defaultCpuSet": "0,6", "checksum": N,
 *                ["dataChecksum": N,] "checksumVerified": false},
 *    "workloads": [{"podUID": "...", ...np_workload_alloc_to_json()...}],
 *    "state": np_state_to_json() of the result,
 *    "pools": np_pools_to_json() of the result}
 * 0 or the same errors as np_kubelet_import().
 */
int np_kubelet_import_json(const char *path, const struct np_node_state *st,
			   const char *cgroup_prefix, json_t **out, char *err,
			   size_t errlen);

#endif
