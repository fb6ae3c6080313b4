/* SPDX-License-Identifier: Apache-2.0 */
/*
 * BE suppression (Koordinator koordlet's CPU suppress, qosmanager plugin
 * cpusuppress): the best-effort pool is sized from the node's load each
 * period,
 *
 *   budget = capacity x threshold% - non-BE usage - host-app usage
 *            - system usage
 *   system = max(0, node usage - non-BE usage - BE usage - host-app usage)
 *
 * (all in milli-CPUs). Policy cpuset: BE runs on max(2, min, ceil(budget))
 * CPUs, growing by at most 10% of the node's CPUs per period and shrinking
 * at once; the CPUs come from the LSR and LS pools in proportion to their
 * sizes, spread over (NUMA node, socket) buckets, whole SMT pairs first.
 * Policy cfsQuota: the BE cgroups' cpu.max quota is the budget (same floor
 * and growth limit). Implemented from Koordinator's description, not its
 * code. Pure: no I/O.
 */
#ifndef NUMAPLACE_BE_SUPPRESS_H
#define NUMAPLACE_BE_SUPPRESS_H

#include "numaplace/admit.h"
#include "numaplace/topology.h"

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

enum np_suppress_policy {
	NP_SUPPRESS_NONE = 0, /* off: the BE pool is all it may use */
	NP_SUPPRESS_CPUSET,   /* narrow the BE cgroups' cpuset */
	NP_SUPPRESS_CFS_QUOTA, /* cap the BE cgroups' cpu.max */
};

/* Koordinator's default cpuSuppressThresholdPercent. */
#define NP_SUPPRESS_DEFAULT_THRESHOLD 65
/* BE never gets fewer CPUs (cpuset) or less quota (cfsQuota) than this. */
#define NP_SUPPRESS_FLOOR_CPUS 2
/* Growth per period: at most this percent of the node's CPUs (at least
 * one CPU). Shrinking is immediate. */
#define NP_SUPPRESS_GROWTH_PERCENT 10
/* The cpu.max period numaplace writes with a cfsQuota budget. */
#define NP_SUPPRESS_CFS_PERIOD_US 100000

/* "none", "cpuset", "cfsQuota" (Koordinator's names). -EINVAL else. */
int np_suppress_policy_parse(const char *s, enum np_suppress_policy *out);
const char *np_suppress_policy_name(enum np_suppress_policy p);

/* Usages over the last period, in milli-CPUs (1000 = one CPU busy). */
struct np_suppress_usage {
	int64_t node;      /* the whole node (/proc/stat: not idle/iowait) */
	int64_t non_be;    /* non-BE workloads (LSE, LSR, LS, ...) */
	int64_t be;        /* BE workloads */
	int64_t host_apps; /* host applications counted like LS */
};

struct np_suppress_in {
	int capacity;  /* CPUs of the node (online) */
	int pool;      /* CPUs BE may use at most (the BE pool's size) */
	int threshold; /* cpuSuppressThresholdPercent, 0..100 */
	int min_cpus;  /* cpuSuppressMinCPUs, 0..capacity (0: the floor) */
	/* The previous period's result: BE CPUs (cpuset) and quota in
	 * microseconds per NP_SUPPRESS_CFS_PERIOD_US (cfsQuota); <= 0: none
	 * (first period: no growth limit). */
	int prev_cpus;
	int64_t prev_quota_us;
	struct np_suppress_usage u;
};

struct np_suppress_out {
	int64_t system; /* milli-CPUs, >= 0 */
	int64_t budget; /* milli-CPUs; may be negative (usage above it) */
	int cpus;       /* cpuset policy: BE CPUs, 0..pool */
	int64_t quota_us; /* cfsQuota policy: cpu.max quota */
	bool growth_limited; /* the growth limit cut cpus or quota_us */
};

/* 0, or -EINVAL with a message naming the field (negative usage,
 * threshold out of 0..100, min_cpus out of 0..capacity, pool out of
 * 0..capacity, capacity < 1). */
int np_suppress_compute(const struct np_suppress_in *in,
			struct np_suppress_out *out, char *err, size_t errlen);

/*
 * The BE CPU set of n CPUs (n clamped to the pool): the BE pool of p
 * (p->be: all CPUs but LSE, reserved and offline ones) split into its LSR
 * part (p->be ∩ p->exclusive) and its LS part (the rest), n shared between
 * them in proportion to their sizes (the remainder of the division to the
 * LS part), each part's CPUs picked spread over (NUMA node, socket)
 * buckets, larger buckets first, whole SMT pairs first, then single CPUs.
 * Never an LSE, reserved or offline CPU. 0 or -ENOMEM.
 */
int np_suppress_pick(const struct np_topology *t, const struct np_pools *p,
		     int n, np_cpuset *out);

/* The configuration: numaplaced's "be_suppress" object and the planner's
 * "config", with Koordinator's key names. */
struct np_suppress_config {
	enum np_suppress_policy policy; /* cpuSuppressPolicy */
	int threshold;                  /* cpuSuppressThresholdPercent */
	int min_cpus;                   /* cpuSuppressMinCPUs */
};

/* policy (the caller's default: numaplaced's is none, the planner's
 * cpuset), threshold 65, min_cpus 0. */
void np_suppress_config_defaults(struct np_suppress_config *c,
				 enum np_suppress_policy policy);
/* The keys of j (an object, or absent/null: c unchanged) into c, each
 * checked: cpuSuppressThresholdPercent 0..100, cpuSuppressPolicy one of
 * "none", "cpuset", "cfsQuota", cpuSuppressMinCPUs 0..4096; unknown keys
 * refused. 0, or -EINVAL naming path.KEY, c unchanged. */
int np_suppress_config_from_json(struct np_suppress_config *c,
				 const json_t *j, const char *path, char *err,
				 size_t errlen);
json_t *np_suppress_config_to_json(const struct np_suppress_config *c);

/* Planner kind "be_suppress" (docs/planner.md, "kind be_suppress"), and its check of
 * a result against the request's "expect" (0 match, -1 mismatch). */
int np_plan_be_suppress(const json_t *req, json_t **result, char *err,
			size_t errlen);
int np_plan_be_suppress_check(const json_t *expect, const json_t *result,
			      char *why, size_t len);

#endif
