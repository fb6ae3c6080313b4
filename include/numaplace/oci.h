/* SPDX-License-Identifier: Apache-2.0 */
/*
 * OCI runtime hooks (numaplace oci-hook, tools/cmd_oci_hook.c): the pure
 * part. The OCI state a runtime gives a hook on stdin, the bundle's
 * config.json, the container's cgroup from linux.cgroupsPath and
 * /proc/PID/cgroup, the workload spec asked of numaplaced, and its
 * answer. No I/O here (userspace/engine/oci.c): the hook reads the files
 * and hands their bytes in. Every error names the field, annotation or
 * path ("state.pid: ...", "annotations.numaplace.io/cpus: ...").
 */
#ifndef NUMAPLACE_OCI_H
#define NUMAPLACE_OCI_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numaplace/admit.h"

/* Longest state on stdin, config.json, and value of an annotation read. */
#define NP_OCI_STATE_MAX (1024 * 1024)
#define NP_OCI_CONFIG_MAX (4 * 1024 * 1024)
#define NP_OCI_ANNOTATION_MAX 4096
/* An OCI container id: 1..128 of [A-Za-z0-9_.+-], the first a letter or
 * digit (what numaplaced accepts in "container.id"). */
#define NP_OCI_ID_MAX NP_CONTAINER_ID_MAX /* numaplace/admit.h */
/* The default workload name: the id's first characters. */
#define NP_OCI_NAME_FROM_ID 12

enum np_oci_stage { NP_OCI_CREATE_RUNTIME, NP_OCI_PRESTART, NP_OCI_POSTSTOP };
/* What a failure does: the container starts in the shared pool (open) or
 * the hook fails and the runtime aborts the start (closed). */
enum np_oci_failure { NP_OCI_FAIL_OPEN, NP_OCI_FAIL_CLOSED };

int np_oci_stage_parse(const char *s, enum np_oci_stage *out);
const char *np_oci_stage_name(enum np_oci_stage s);
int np_oci_failure_parse(const char *s, enum np_oci_failure *out);
const char *np_oci_failure_name(enum np_oci_failure f);

struct np_oci_state {
	char id[NP_OCI_ID_MAX + 1];
	int pid;                  /* 0 when null (poststop) */
	char bundle[NP_PATH_MAX]; /* "" when absent (poststop only) */
	char status[16];
	json_t *annotations; /* an object of strings, owned, never NULL */
};

/*
 * The state JSON ({"ociVersion", "id", "pid", "root", "bundle", "status",
 * "annotations"}) for a stage: createRuntime and prestart need a pid
 * 1..4194304 and an absolute bundle; poststop takes pid null or absent.
 * Unknown keys are allowed (the runtime spec may add some). 0 or -EINVAL
 * ("state.pid: ..."); free with np_oci_state_free either way.
 */
int np_oci_state_parse(struct np_oci_state *st, const char *buf, size_t len,
		       enum np_oci_stage stage, char *err, size_t errlen);
void np_oci_state_free(struct np_oci_state *st);

/* What the hook reads of config.json. */
struct np_oci_config {
	char cgroups_path[NP_PATH_MAX]; /* linux.cgroupsPath, "" if absent */
	int64_t limit_milli;   /* cpu.quota*1000/period (rounded up), -1 none */
	int64_t request_milli; /* from cpu.shares (kubelet encoding), -1 none */
	int64_t memory;        /* memory.limit in bytes, -1 none */
	/* hugepageLimits: the limit in bytes of each page size given */
	int nhuge;
	uint64_t huge_size_kb[NP_MAX_HUGEPAGE_SIZES];
	uint64_t huge_limit[NP_MAX_HUGEPAGE_SIZES];
	json_t *annotations;   /* an object of strings, owned, never NULL */
};

/*
 * config.json: linux.cgroupsPath, linux.resources.cpu {shares, quota,
 * period, cpus}, linux.resources.memory.limit, linux.resources.
 * hugepageLimits [{"pageSize": "2MB", "limit": BYTES}], annotations. A
 * quota <= 0 or a memory limit <= 0 is no limit; period defaults to
 * 100000 us.
 * Shares are the kubelet's encoding of the request (shares = milliCPU *
 * 1024 / 1000, at least 2): the request is ceil(shares * 1000 / 1024),
 * which inverts it exactly; shares <= 2 is no request (0). 0 or -EINVAL
 * ("config.json: linux.resources.cpu.quota: ...").
 */
int np_oci_config_parse(struct np_oci_config *c, const char *buf, size_t len,
			char *err, size_t errlen);
void np_oci_config_free(struct np_oci_config *c);

/* Where linux.cgroupsPath puts the container. */
struct np_oci_cgroup {
	char path[NP_PATH_MAX]; /* from the hierarchy root: "/np/ctr1" */
	bool systemd;           /* given as slice:prefix:name */
	bool relative;          /* a relative cgroupfs path */
};

/*
 * linux.cgroupsPath for both drivers:
 *  - cgroupfs: "/np/ctr1" as it is; a relative "np/ctr1" is "/np/ctr1"
 *    (crun: below the root; runc puts it below its own cgroup, which
 *    np_oci_cgroup_holds accepts too);
 *  - systemd "SLICE:PREFIX:NAME" (no '/', two ':'): the slice expanded as
 *    systemd does ("a-b.slice" -> "/a.slice/a-b.slice", "-.slice" -> the
 *    root, "" -> "system.slice" as runc and crun do for root) and the
 *    scope "PREFIX-NAME.scope" ("NAME.scope" when PREFIX is empty):
 *    "system.slice:np:ctr3" -> "/system.slice/np-ctr3.scope".
 * Refused: the root, empty, "." or ".." components, bytes outside
 * printable ASCII or a space, a component over 255 bytes, a NAME that is
 * a slice. 0 or -EINVAL naming linux.cgroupsPath.
 */
int np_oci_cgroups_path(const char *s, struct np_oci_cgroup *out, char *err,
			size_t errlen);

/* The cgroup2 path of /proc/PID/cgroup's text (its "0::" line) into out:
 * 0, or -ENOENT (no cgroup2 line) / -EINVAL (a bad path) with err set. */
int np_oci_proc_cgroup(const char *text, size_t len, char *out, size_t outlen,
		       char *err, size_t errlen);

/* 0 when actual (the pid's cgroup) is exp's cgroup or below it (the
 * runtime's sub-cgroup such as "container"); else -ESRCH saying where the
 * pid is. A relative exp also matches below any cgroup (runc's way). */
int np_oci_cgroup_holds(const struct np_oci_cgroup *exp, const char *actual,
			char *err, size_t errlen);

/* The numaplace.io/on-failure annotation (state first, then config.json):
 * 0 with *out set, -ENOENT when absent, -EINVAL when not fail-open or
 * fail-closed. */
int np_oci_failure_annotation(const struct np_oci_state *st,
			      const struct np_oci_config *c,
			      enum np_oci_failure *out, char *err,
			      size_t errlen);

/* An annotation's value (the state's, else config.json's), NULL when
 * absent; the pod's namespace: io.kubernetes.pod.namespace (CRI-O), else
 * io.kubernetes.cri.sandbox-namespace (containerd), as the runtime set
 * them. */
const char *np_oci_annotation(const struct np_oci_state *st,
			      const struct np_oci_config *c, const char *key);
const char *np_oci_namespace(const struct np_oci_state *st,
			     const struct np_oci_config *c);

struct np_oci_request {
	json_t *spec; /* the workload spec, "container" included */
	char name[NP_NAME_MAX];
};

/*
 * The workload spec for the container, from the annotations (those of the
 * state take precedence over config.json's) and the resources:
 *   {"name", "qos", "containers": [{"name": "main", "cpu", "memory"}],
 *    "isolation"?, "resourceSpec"?, "container": {"id", "cgroup"}}
 * - numaplace.io/qos (LSE, LSR, LS, BE), else koordinator.sh/qosClass
 *   (LSE, LSR, LS, BE; SYSTEM is LS), else the kubelet's rule: a CPU
 *   limit equal to the request is Guaranteed (whole CPUs are exclusive
 *   under the static policy), a request or a limit otherwise Burstable
 *   (with the request), neither BestEffort. A limit without shares
 *   requests the limit (Kubernetes defaults a request to the limit).
 * - numaplace.io/cpus (> 0), else the limit for LSE and LSR (whole CPUs
 *   needed), the request otherwise; numaplace.io/memory, else the memory
 *   limit; numaplace.io/isolation (partition, none);
 *   numaplace.io/workload (the name), else the id's first 12 characters;
 *   scheduling.koordinator.sh/resource-spec (a JSON object of
 *   preferredCPUBindPolicy, requiredCPUBindPolicy,
 *   preferredCPUExclusivePolicy) becomes resourceSpec.
 * - "container" gets the resources as "limits" (cpu, memory,
 *   hugepages-<size>) and "requests" (cpu), and the pod's namespace
 *   (io.kubernetes.pod.namespace, else containerd's
 *   io.kubernetes.cri.sandbox-namespace) as "namespace": what bounds the
 *   annotations (numaplace/oci_policy.h, checked by the hook and again
 *   by numaplaced).
 * An unknown numaplace.io/ key, a value over NP_OCI_ANNOTATION_MAX
 * bytes, or a bad value is refused naming the annotation. cgroup (the
 * container's, from the root) may be NULL: the spec is checked with
 * "/ID" then, and np_oci_request_set_cgroup sets the real one. The spec
 * is checked as numaplaced will (np_workload_req_from_json). 0,
 * -EDOM when the annotations are well formed but the container's own
 * resources cannot take them (LSE/LSR on a fractional or absent CPU
 * limit), or -EINVAL/-ENOMEM; free with np_oci_request_free either way.
 */
int np_oci_request_build(struct np_oci_request *rq,
			 const struct np_oci_state *st,
			 const struct np_oci_config *c, const char *cgroup,
			 char *err, size_t errlen);
int np_oci_request_set_cgroup(struct np_oci_request *rq, const char *cgroup);
void np_oci_request_free(struct np_oci_request *rq);

/* The same workload as LS on what its resources give (the shared pool;
 * the CPU request and memory limit of its "container", nothing an
 * annotation chose; no isolation or resourceSpec): what fail-open asks
 * after a rejection. */
json_t *np_oci_shared_spec(const json_t *spec);

struct np_oci_decision {
	bool admitted;
	char cpuset[1024];  /* admitted: the workload's CPUs */
	char mems[256];
	char resource[64];  /* rejected: what ran short, and why */
	char reason[512];
};

/* The "decision" of an admit answer ({"ok": true, "decision": {...}}). */
int np_oci_decision_parse(const json_t *resp, struct np_oci_decision *d,
			  char *err, size_t errlen);

/* *equal: the text of cpuset.cpus.effective is the CPU list want. 0, or
 * -EINVAL when either is not a CPU list. */
int np_oci_cpuset_in_force(const char *effective, const char *want,
			   bool *equal, char *err, size_t errlen);

#endif
