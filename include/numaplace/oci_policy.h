/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Who may ask for what: the rules an OCI container's workload is admitted
 * under (config "oci_hook.policy"), and the bound its resources put on its
 * request. Pure; no I/O.
 *
 * A pod's annotations are written by whoever may create the pod, while the
 * scheduler and the kubelet account only its resources. So what a
 * container workload ("container" in its spec, what numaplace oci-hook
 * sends) asks is checked here against
 *  - its resources (what the runtime was given, np_container_res, and
 *    what its cgroup's files enforce): no more CPU, memory or hugepages
 *    than its limits; without a limit, no more than its request unless
 *    its rule allows it ("without_limit"); an exclusive class (LSE, LSR)
 *    or Guaranteed only with a CPU limit equal to its request, whole CPUs
 *    for LSE and LSR (Koordinator's rule);
 *  - the first rule that matches its Kubernetes namespace and cgroup (the
 *    default otherwise): which of LSE, LSR, LS, BE it may ask (the
 *    kubelet's classes, Guaranteed, Burstable and BestEffort, are what
 *    its resources say and are not restricted by the list), whether it
 *    may ask for an isolated partition, whether config.host_isolation
 *    applies to its CPUs, and how many exclusive CPUs the containers the
 *    rule matches may hold together.
 * numaplace oci-hook checks a request before sending it (an early,
 * friendlier refusal, without the CPUs held); numaplaced checks every
 * container admission it receives (the authority). A spec file's workload
 * and a workload that is not a container are the node's own: not checked.
 */
#ifndef NUMAPLACE_OCI_POLICY_H
#define NUMAPLACE_OCI_POLICY_H

#include "numaplace/admit.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define NP_OCI_POLICY_MAX_RULES 16
#define NP_K8S_NAMESPACE_MAX 63

struct np_oci_rule {
	char ns[NP_K8S_NAMESPACE_MAX + 1]; /* "namespace"; "" = any */
	/* "cgroup_parent": the container's cgroup at or below it, from the
	 * hierarchy root ("/kubepods.slice"); "" = any */
	char cgroup_parent[NP_PATH_MAX];
	unsigned qos;        /* 1u << NP_QOS_LSE ...: the classes it may ask */
	bool partition;      /* "isolation": "partition" may be asked */
	bool host_isolation; /* config.host_isolation applies to its CPUs */
	bool without_limit;  /* CPU, memory, hugepages asked without a limit */
	int max_exclusive_cpus; /* held by its containers together; -1: any */
};

struct np_oci_policy {
	int nrules;
	struct np_oci_rule rule[NP_OCI_POLICY_MAX_RULES];
	struct np_oci_rule def; /* "default": no rule matched */
};

/* The built-in policy: no rules; the default allows LS and BE, no
 * partition, no host isolation, nothing without a limit, no cap. */
void np_oci_policy_defaults(struct np_oci_policy *p);
/*
 * "oci_hook.policy": {"default": RULE, "rules": [RULE, ...]}, a RULE
 * {"namespace", "cgroup_parent", "qos": ["LSE", ...], "partition",
 * "host_isolation", "without_limit", "max_exclusive_cpus"}; a key a rule
 * leaves out is the built-in default's. A rule needs a namespace or a
 * cgroup_parent (the default has neither). NULL: the built-in policy.
 * Errors name the key ("config.oci_hook.policy.rules[1].qos: ...").
 */
int np_oci_policy_from_json(struct np_oci_policy *p, const json_t *j,
			    const char *path, char *err, size_t errlen);
json_t *np_oci_policy_to_json(const struct np_oci_policy *p);

/* The index of the first rule matching ns (NULL: none) and cgroup (from
 * the hierarchy root), -1 for the default. */
int np_oci_policy_match(const struct np_oci_policy *p, const char *ns,
			const char *cgroup);
const struct np_oci_rule *np_oci_policy_rule(const struct np_oci_policy *p,
					     int i);
/* "oci_hook.policy.rules[1] (namespace \"web\")", "oci_hook.policy.default" */
void np_oci_rule_name(const struct np_oci_policy *p, int i, char *buf,
		      size_t len);

/* What bounds a container: its limits (-1: none) and request, and where
 * each limit was found (for the messages: "linux.resources.cpu",
 * "cpu.max of /np/ctr1"). */
struct np_oci_bounds {
	int64_t cpu_limit, cpu_request; /* millicores */
	int64_t memory_limit;           /* bytes */
	int nhuge;
	uint64_t huge_size_kb[NP_MAX_HUGEPAGE_SIZES];
	int64_t huge_limit[NP_MAX_HUGEPAGE_SIZES]; /* bytes */
	char cpu_from[160], memory_from[160], huge_from[160];
};

/* The bounds stated in w->container_res (none without), "from" naming
 * where they were stated. */
void np_oci_bounds_of(struct np_oci_bounds *b, const struct np_workload_req *w,
		      const char *from);
/* b narrowed by the limits of k (the kernel's), the tighter of each kept
 * with its source. */
void np_oci_bounds_narrow(struct np_oci_bounds *b,
			  const struct np_oci_bounds *k);

/* The exclusive CPUs w asks for (LSE, LSR; Guaranteed with whole CPUs
 * under the static policy; the pod's budget when it has one). */
int np_oci_exclusive_cpus(const struct np_workload_req *w, bool static_policy);

/*
 * Can w (a container workload) be admitted under rule i of p, bounded by
 * b, while the containers that rule matches hold `held` exclusive CPUs?
 * 0, or -EPERM with why: "RULE: REASON", naming both values where a value
 * is above a bound ("oci_hook.policy.default: cpu 6 is above the
 * container's CPU limit of 100m (linux.resources.cpu)").
 */
int np_oci_policy_check(const struct np_oci_policy *p, int i,
			const struct np_workload_req *w,
			const struct np_oci_bounds *b, bool static_policy,
			int held, char *why, size_t len);

#endif
