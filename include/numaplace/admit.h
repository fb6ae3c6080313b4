/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Admission: node policy, node state (pools and allocations), workload
 * requests, and the decision "admitted with these CPUs / memory nodes /
 * devices, or rejected because ...". Pure computation, no I/O.
 */
#ifndef NUMAPLACE_ADMIT_H
#define NUMAPLACE_ADMIT_H

#include "numaplace/merge.h"
#include "numaplace/take.h"
#include "numaplace/topology.h"

#include <jansson.h>

#define NP_NAME_MAX 128
#define NP_PATH_MAX 512
#define NP_UNIT_NAME_MAX 256 /* a systemd unit name and its NUL */
#define NP_CONTAINER_ID_MAX 128 /* an OCI container id (podman: 64 hex) */
#define NP_MAX_CONTAINERS 32
#define NP_MAX_DEVICE_REQS 8

enum np_cpu_policy { NP_CPU_POLICY_NONE = 0, NP_CPU_POLICY_STATIC };
enum np_tm_scope { NP_TM_SCOPE_CONTAINER = 0, NP_TM_SCOPE_POD };

/* QoS: Koordinator's classes; the kubelet's map onto them (Guaranteed with
 * integer CPUs -> LSR-like exclusive, else LS; BestEffort -> BE). */
enum np_qos {
	NP_QOS_LSE = 0, /* exclusive, shared with nobody (not even BE) */
	NP_QOS_LSR,     /* exclusive, BE may use them */
	NP_QOS_LS,      /* shared pool */
	NP_QOS_BE,      /* BE pool */
	NP_QOS_GUARANTEED,
	NP_QOS_BURSTABLE,
	NP_QOS_BESTEFFORT,
};

struct np_cpu_options {
	bool full_pcpus_only;
	bool distribute_across_numa;
	bool align_by_socket;
	bool distribute_across_cores;
	bool strict_cpu_reservation;
	bool prefer_align_by_uncore;
};

struct np_node_policy {
	enum np_cpu_policy cpu_policy;
	struct np_cpu_options opt;
	bool reserved_explicit;  /* reserved_cpus given as a list */
	np_cpuset reserved_cpus; /* explicit list */
	int reserved_count;      /* or a count taken topology-aware */
	/* "reserved_cpus": 0 given: no reserved CPU, which only callers
	 * passing NP_STATE_ALLOW_NO_RESERVED accept (np_state_init_flags) */
	bool reserved_zero;
	enum np_tm_policy tm_policy;
	enum np_tm_scope tm_scope;
	bool prefer_closest;
	/* Koordinator defaults for LSE/LSR without a resourceSpec. */
	enum np_bind_policy default_bind;
	enum np_numa_strategy numa_strategy;
};

struct np_device_req {
	char resource[96];
	int count;
};

struct np_container_req {
	/* 1..NP_NAME_MAX-1 bytes: a heap string owned by the request (set
	 * through np_container_req_set_name; not an array: most names are
	 * short, and a request is copied into every allocation). NULL only
	 * in a request not made by np_workload_req_set_containers. */
	const char *name;
	/* Optional sub-path (< NP_PATH_MAX bytes): NULL when none, else a
	 * heap string owned by the request. */
	char *cgroup;
	int64_t cpu_milli;
	uint64_t memory; /* bytes */
	uint64_t huge_bytes[NP_MAX_HUGEPAGE_SIZES];
	uint64_t huge_size_kb[NP_MAX_HUGEPAGE_SIZES];
	int nhuge;
	int ndev; /* <= NP_MAX_DEVICE_REQS */
	struct np_device_req *dev; /* ndev entries on the heap, owned */
	/* An init container ("init_containers"; they come first in the
	 * workload's c[], in their order): admitted before the app
	 * containers, which reuse its exclusive CPUs (the kubelet's
	 * cpusToReuse). restartable: "restartPolicy": "Always" (a sidecar,
	 * running beside the app containers: nothing of it is reused). */
	bool init, restartable;
};

/*
 * What the runtime was given for an OCI container ("container": {"limits":
 * {"cpu", "memory", "hugepages-<size>"}, "requests": {"cpu"}}): its
 * config.json's linux.resources in the kubelet's encoding, as numaplace
 * oci-hook reads them. Not what the pod's annotations ask: what bounds it
 * (numaplace/oci_policy.h).
 */
struct np_container_res {
	int64_t cpu_limit;    /* millicores, -1: none */
	int64_t cpu_request;  /* millicores, -1: none */
	int64_t memory_limit; /* bytes, -1: none */
	int nhuge;            /* hugepage sizes with a limit */
	uint64_t huge_size_kb[NP_MAX_HUGEPAGE_SIZES];
	uint64_t huge_limit[NP_MAX_HUGEPAGE_SIZES]; /* bytes */
};

struct np_workload_req {
	char name[NP_NAME_MAX];
	/* Heap string owned by the request, < NP_PATH_MAX bytes (set by
	 * np_workload_req_from_json, copied by np_workload_req_copy). */
	char *cgroup;
	/* A systemd unit ("unit": NAME.service, .scope or .slice) whose
	 * AllowedCPUs numaplace sets, instead of a cgroup of its own (cgroup
	 * is "" then); heap, NULL when none. */
	char *unit;
	/* An OCI container ("container": {"id", "cgroup"}; numaplace
	 * oci-hook): its id (heap, NULL when none). cgroup is then the
	 * container's own cgroup from the hierarchy root ("/np/ctr1"), the
	 * runtime's: never created or removed by numaplace. */
	char *container_id;
	/* The container's Kubernetes namespace ("container.namespace", from
	 * io.kubernetes.pod.namespace) and what its runtime gave it
	 * ("container.limits", "container.requests"): heap, NULL when not
	 * given. */
	char *container_ns;
	struct np_container_res *container_res;
	enum np_qos qos;
	int ncontainers;
	/* ncontainers entries on the heap, owned by the request (or by the
	 * allocation that embeds it): see np_workload_req_free(). */
	struct np_container_req *c;
	bool has_bind;
	enum np_bind_policy bind;
	bool bind_required;
	enum np_exclusive_policy excl;
	bool partition; /* "isolation": "partition" */
	bool movable;   /* "movable": defrag may re-place it (numaplace/defrag.h) */
	/* "hint": a Topology Manager result given with the request (what the
	 * kubelet's CPU manager reads from the Topology Manager's store):
	 * every container is allocated for it, no hint is merged. */
	bool has_hint;
	struct np_hint hint;
	/* "resources": the pod-level budget (the kubelet's pod-level
	 * resources, requests equal to limits): 0 when not given. */
	bool has_pod_res;
	int64_t pod_cpu_milli;
	uint64_t pod_memory;
};

/* Memory and hugepages charged to a container, per node. */
struct np_mem_charge {
	uint64_t mem[NP_MAX_NUMA]; /* bytes */
	uint64_t huge[NP_MAX_HUGEPAGE_SIZES][NP_MAX_NUMA]; /* pages */
};

/* What one container got. */
struct np_container_alloc {
	/* Its name is its request's: the allocation's req.c[k].name for
	 * its c[k] (one copy per container). */
	bool exclusive;  /* cpus are its own */
	/* With pod-level resources: a container without its own whole-CPU
	 * request, on the pod's CPUs that no container took for itself
	 * (exclusive is true too: they are the pod's; pod_shared containers
	 * of one workload share them). */
	bool pod_shared;
	/* The exclusive set, empty for shared containers. Never NULL:
	 * &np_cpuset_empty_set when empty (no heap: most containers are
	 * shared, and a set is 512 bytes), else a heap set owned by the
	 * allocation. Written through np_container_set_cpus only. */
	const np_cpuset *cpus;
	/* The CPUs promised at admission (the kubelet's resize baseline):
	 * NULL until an in-place resize changes cpus (np_resize), then what
	 * a scale-down keeps first; saved as "baseline" when set.  Heap,
	 * owned by the allocation (a pointer: most containers never resize,
	 * and a set is 512 bytes). */
	np_cpuset *baseline;
	np_nodemask mems;
	struct np_hint hint;
	/* NULL when nothing is charged (shared containers charge nothing);
	 * else heap, owned by the allocation (np_workload_alloc_free). */
	struct np_mem_charge *charge;
	int ndev;
	int16_t dev[16]; /* indexes into topo->devices */
};

/*
 * The caller's own record of a workload (numaplaced's: the spec file it
 * came from, whether its cgroup was written, ...), kept in the workload's
 * allocation so that the state is the one record of each workload: the
 * caller finds its part through np_state_find, not through an index of
 * its own beside the state, and it goes when the workload goes. The
 * caller embeds this first in its struct and sets free; the engine reads
 * nothing else of it. Counted: every copy of an allocation
 * (np_workload_alloc_copy, np_state_copy) holds the same record, and the
 * last one freed (np_workload_alloc_free, np_release, np_state_free)
 * frees it. An allocation the engine makes (np_admit, a load) has none;
 * one that takes a workload's place (np_defrag_apply_moves) takes its
 * record.
 */
struct np_workload_rec {
	void (*free)(struct np_workload_rec *r);
	unsigned refs; /* allocations holding it (np_workload_rec_set: 1) */
};

struct np_workload_alloc {
	struct np_workload_req req;
	enum np_qos qos_class; /* effective class (LSE/LSR/LS/BE) */
	enum np_exclusive_policy excl;
	/* req.partition was set by verification (verify.on_intrusion =
	 * "partition"), not by its spec: saved as "partitioned_by" */
	bool partition_by_verify;
	int ncontainers;
	/* ncontainers entries on the heap, owned by the allocation (as is
	 * req.c): np_workload_alloc_free() releases both. */
	struct np_container_alloc *c;
	/* Pod-level resources exclusive to the pod whose containers all have
	 * their own whole-CPU request: the pod keeps its whole budget, as
	 * the kubelet's pod entry does, and the CPUs no container got out of
	 * it are here (exclusive, the pod's, no container's). NULL when
	 * there are none (pod_shared containers hold the rest otherwise).
	 * Heap, owned by the allocation; saved as "pod_rest". */
	np_cpuset *pod_rest;
	/* The caller's record (above), NULL: none. */
	struct np_workload_rec *rec;
};

/* a holds r (its record until now, if any, let go; r NULL: none). */
void np_workload_rec_set(struct np_workload_alloc *a, struct np_workload_rec *r);
/* dst takes over src's record (the workload is the same, its allocation
 * new: a re-placement); src holds none, dst's own is let go. */
void np_workload_rec_move(struct np_workload_alloc *dst,
			  struct np_workload_alloc *src);

/* The name of a's container k (its request's). */
static inline const char *np_container_name(const struct np_workload_alloc *a,
					    int k)
{
	return k >= 0 && k < a->req.ncontainers ? a->req.c[k].name : "";
}

/*
 * Ownership. A request owns cgroup, c and each c[i].cgroup and .dev; an
 * allocation owns its request and c and each c[i].charge, .baseline and
 * .cpus (unless it is the shared empty set), and holds one count of its
 * record (rec). A state
 * owns its allocations: np_state_free() frees them, np_state_copy() copies
 * them deeply, np_release() frees the released one, np_state_insert() takes
 * over the arrays of the allocation it is given.
 */
/* Give w n zeroed containers, each named "" (replacing any it had;
 * cgroup is kept); -ENOMEM. */
int np_workload_req_set_containers(struct np_workload_req *w, int n);
/* c->name = a copy of name (the old one freed); -ENOMEM leaves c as it
 * was. */
int np_container_req_set_name(struct np_container_req *c, const char *name);
/* n zeroed containers (at least one slot), each cpus at the shared empty
 * set; NULL on ENOMEM. */
struct np_container_alloc *np_container_allocs_new(int n);
/* c->cpus = a copy of s: the shared empty set when s is empty (c's heap
 * set freed), else c's own heap set (reused when it has one). s may be
 * c->cpus. -ENOMEM leaves c unchanged. */
int np_container_set_cpus(struct np_container_alloc *c, const np_cpuset *s);
/* Free w->c (NULL afterwards); safe on a zeroed request. */
void np_workload_req_free(struct np_workload_req *w);
/* Deep copy; dst is overwritten (not freed). */
int np_workload_req_copy(struct np_workload_req *dst,
			 const struct np_workload_req *src);
void np_workload_alloc_free(struct np_workload_alloc *a);
int np_workload_alloc_copy(struct np_workload_alloc *dst,
			   const struct np_workload_alloc *src);

/* Aggregates over all allocations, kept up to date by admit/release/load
 * so that the admission path never rescans the state. */
struct np_state_cache {
	np_cpuset excl; /* every exclusive set */
	np_cpuset lse;  /* exclusive sets BE may not use (all but LSR) */
	uint64_t mem[NP_MAX_NUMA]; /* bytes charged per node */
	uint64_t huge[NP_MAX_HUGEPAGE_SIZES][NP_MAX_NUMA]; /* pages */
	bool used[NP_MAX_NUMA];            /* node holds charged memory */
	np_nodemask group[NP_MAX_NUMA];    /* node group of that memory */
	int nused[NP_MAX_NUMA]; /* containers charging the node */
	int ndevices;
	bool *dev_taken; /* per topo device */
	/* Two workloads hold one exclusive CPU or one device, or a node is
	 * charged by two node groups (never in a state the engine made):
	 * the aggregates cannot lose one workload's share by subtraction,
	 * so a release recomputes them (np_state_cache_refresh). */
	bool shared_parts;
	/* Koordinator's exclusive-policy marks (np_admit_koord_opts): the
	 * CPUs of every container of the workloads in the state whose
	 * policy is PCPULevel ([0]) or NUMANodeLevel ([1]), and per CPU how
	 * many such containers hold it, so that a release takes its own
	 * out (O(its CPUs), where a scan of every workload was O(n)). An
	 * admission's workload is marked once admitted, not while placed. */
	np_cpuset marked[2];
	uint32_t nmarked[2][NP_MAX_CPUS];
};

struct np_state_ix;

/* Node state: allocations plus what follows from them. */
struct np_node_state {
	const struct np_topology *topo;
	struct np_node_policy policy;
	np_cpuset reserved;
	/* CPUs of topo->online that are offline now (hotplug, set by the
	 * caller): in no pool, so nothing new is placed on them; exclusive
	 * sets that hold one keep it (np_state_degraded). Not saved. */
	np_cpuset offline;
	int nworkloads, cap;
	/* nworkloads entries, each on the heap and owned by the state: an
	 * insert or a release shifts pointers, not allocations */
	struct np_workload_alloc **w;
	struct np_state_cache cache;
	/* Workload name -> index in w, for np_state_find (state_ops.c);
	 * kept by the engine's functions that change w, used only while made
	 * for this array, else (and while NULL) np_state_find scans. */
	struct np_state_ix *ix;
};

/* Pools derived from a state (Koordinator's arithmetic, per NUMA node too). */
struct np_pools {
	np_cpuset reserved;
	np_cpuset exclusive;     /* all exclusive sets */
	np_cpuset lse;           /* exclusive sets of LSE workloads */
	np_cpuset shared;        /* LS / Burstable pool (kubelet defaultCpuSet) */
	np_cpuset be;            /* BE pool: all - LSE - reserved */
	np_cpuset allocatable;   /* shared - reserved: exclusive CPUs come here */
};

struct np_decision {
	bool admitted;
	char workload[NP_NAME_MAX];
	char reason[512];
	char resource[96]; /* which resource failed ("cpu", "memory", ...) */
	/* The kubelet's admission error kind of a rejection, where it has
	 * one ("SMTAlignmentError", "TopologyAffinityError",
	 * "UnexpectedAdmissionError"), else "". */
	char error_kind[32];
	/* The recorded allocation when admitted (points into the state:
	 * valid until the state next changes), else NULL. */
	const struct np_workload_alloc *alloc;
};

/*
 * A unit name numaplace may touch: NAME.slice, NAME.scope or NAME.service,
 * at most 255 bytes, characters [A-Za-z0-9:_.\-@\\], no '/' and no "..".
 * Pure. -EINVAL with a message naming what is wrong.
 */
int np_systemd_unit_check(const char *unit, char *err, size_t errlen);
/* An OCI container id numaplace takes (the spec's container.id, the OCI
 * hook's state.id): 1..NP_CONTAINER_ID_MAX of [A-Za-z0-9_.+-], starting
 * with a letter or digit. Pure. */
bool np_container_id_ok(const char *s);

int np_qos_parse(const char *s, enum np_qos *out);
const char *np_qos_name(enum np_qos q);
int np_cpu_policy_parse(const char *s, enum np_cpu_policy *out);
int np_tm_scope_parse(const char *s, enum np_tm_scope *out);
/* "container" or "pod" (the kubelet's topologyManagerScope). */
const char *np_tm_scope_name(enum np_tm_scope s);

/* Validate a policy against a topology (reserved CPUs exist, option
 * compatibility, static needs reserved CPUs, ...) and initialise an empty
 * state. err names the offending option. */
int np_state_init(struct np_node_state *st, const struct np_topology *t,
		  const struct np_node_policy *p, char *err, size_t errlen);
/* np_state_init with flags. NP_STATE_ALLOW_NO_RESERVED: the static policy
 * may reserve no CPU when the policy says "reserved_cpus": 0 (the kubelet's
 * static policy accepts it, its CPU manager does not; the planner passes
 * it, numaplaced does not). np_state_init passes no flag. */
#define NP_STATE_ALLOW_NO_RESERVED 0x1u
int np_state_init_flags(struct np_node_state *st, const struct np_topology *t,
			const struct np_node_policy *p, unsigned flags,
			char *err, size_t errlen);
void np_state_free(struct np_node_state *st);
int np_state_copy(struct np_node_state *dst, const struct np_node_state *src);
void np_state_pools(const struct np_node_state *st, struct np_pools *out);
/* The CPUs of a's exclusive containers (shared ones hold none) and of
 * its pod_rest. */
void np_workload_exclusive_cpus(const struct np_workload_alloc *a,
				np_cpuset *out);
/* The CPUs of workload i's exclusive sets that are offline now; false
 * when none is. */
bool np_state_degraded(const struct np_node_state *st, int i, np_cpuset *out);
/* The workload's index, or -1. */
int np_state_find(const struct np_node_state *st, const char *name);
/* For tests: np_state_find answers from the name index (made for st's
 * array now), not by a scan; and the index's own answer (-1: not in it,
 * or not in use), unchecked. */
bool np_state_indexed(const struct np_node_state *st);
int np_state_index_lookup(const struct np_node_state *st, const char *name);
/* Recompute the cache from the allocations (after loading). */
int np_state_refresh(struct np_node_state *st);
void np_state_cache_add(struct np_node_state *st,
			const struct np_workload_alloc *a,
			const struct np_container_alloc *c);
/* a->pod_rest (if any) into the cached aggregates, as an exclusive set. */
void np_state_cache_add_pod_rest(struct np_node_state *st,
				 const struct np_workload_alloc *a);
/* The whole of a (its containers, then its pod_rest) into the cached
 * aggregates. */
void np_state_cache_add_workload(struct np_node_state *st,
				 const struct np_workload_alloc *a);
/* a's share (what np_state_cache_add_workload added, or an admission's
 * containers so far) out of the cached aggregates: subtracted, or the
 * cache recomputed from st's entries (a no longer among them) when parts
 * are shared (shared_parts) or the device array is missing. The same
 * cache as np_state_cache_refresh's either way; -ENOMEM only from a
 * recompute. */
int np_state_cache_sub(struct np_node_state *st,
		       const struct np_workload_alloc *a);
/* a's containers into (sign 1) or out of (-1) the exclusive-policy
 * marks, by its policy (nothing for None). */
void np_state_cache_mark(struct np_node_state *st,
			 const struct np_workload_alloc *a, int sign);

/*
 * Decide and, when admitted, record the allocation in st. A rejection
 * leaves st unchanged. Returns 0 (see d->admitted) or a negative errno for
 * an invalid request (err names the field).
 */
int np_admit(struct np_node_state *st, const struct np_workload_req *w,
	     struct np_decision *d, char *err, size_t errlen);
/*
 * In-place resize of an exclusive container to cpus CPUs (container NULL:
 * the workload's only exclusive container). Scale-up keeps every current
 * CPU and adds with the kubelet's resize take (Koordinator classes: their
 * accumulator with the current CPUs preferred); scale-down keeps a subset
 * of the current CPUs, the baseline (the CPUs promised at admission)
 * first. Returns 0 with d->admitted (true: recorded in st, d->alloc set;
 * false: cannot be met, d->reason says why and st is unchanged), or a
 * negative errno (err names the field): -ENOENT for an unknown workload
 * or container, -EINVAL for a shared container or a count out of range.
 */
int np_resize(struct np_node_state *st, const char *name,
	      const char *container, int cpus, struct np_decision *d,
	      char *err, size_t errlen);
/* Release a workload (its allocation is freed); -ENOENT if unknown. */
int np_release(struct np_node_state *st, const char *name);
/* Release the workload at index i into *out instead of freeing it: the
 * caller owns out's arrays (np_workload_alloc_free or np_state_insert).
 * -ENOENT (no such index) or -ENOMEM: nothing changed, *out untouched. */
int np_release_keep(struct np_node_state *st, int i,
		    struct np_workload_alloc *out);
/* Put a released allocation back at index i (undo of np_release_keep when
 * the release could not be made durable). The state takes over a's heap
 * arrays (a's contents are copied by value): on success the caller must not
 * free them; on failure they are still the caller's. */
int np_state_insert(struct np_node_state *st, int i,
		    const struct np_workload_alloc *a);

/* JSON forms (spec and status; see numaplace-workload(5)).
 * np_workload_req_from_json() initialises w (whatever it held is not
 * freed) and gives it its containers array, also on failure: free it
 * with np_workload_req_free(). */
int np_workload_req_from_json(struct np_workload_req *w, const json_t *j,
			      const char *path, char *err, size_t errlen);
int np_policy_from_json(struct np_node_policy *p, const json_t *j,
			const char *path, char *err, size_t errlen);
json_t *np_policy_to_json(const struct np_node_policy *p);
/* The canonical spec of a request (what np_workload_req_from_json reads). */
/* "PATH.init_containers[J]" or "PATH.containers[J]" for w->c[k], into buf. */
void np_workload_req_container_path(const struct np_workload_req *w, int k,
				    const char *path, char *buf, size_t len);
json_t *np_workload_req_to_json(const struct np_workload_req *w);
json_t *np_workload_alloc_to_json(const struct np_node_state *st,
				  const struct np_workload_alloc *a);
/* The same with the pools of st given (np_state_pools), for callers that
 * render many workloads of one state: O(1) each instead of O(workloads). */
json_t *np_workload_alloc_to_json_with(const struct np_node_state *st,
				       const struct np_pools *p,
				       const struct np_workload_alloc *a);
json_t *np_decision_to_json(const struct np_node_state *st,
			    const struct np_decision *d);
json_t *np_pools_to_json(const struct np_node_state *st);
/* Koordinator's shared pool form of pool: [{"socket","node","cpuset"}],
 * one entry per NUMA node holding CPUs of it. */
json_t *np_shared_pools_to_json(const struct np_node_state *st,
				const np_cpuset *pool);
/* The saved form of a state: {"reserved", "workloads": [one
 * np_workload_state_json() each]}; re-loaded (validated against the
 * topology) by np_state_load_json. 0 or -ENOMEM. */
int np_state_to_json(const struct np_node_state *st, json_t **out);
/* Its parts other than "workloads" ({"reserved"}); NULL on ENOMEM. */
json_t *np_state_head_json(const struct np_node_state *st);
/* One workload's entry of it: {"spec", "class", "containers", ...}; NULL
 * on ENOMEM. */
json_t *np_workload_state_json(const struct np_node_state *st,
			       const struct np_workload_alloc *a);
/*
 * A 64-bit fingerprint of what an allocation holds and its saved form
 * shows: its fields, its request's, and their heap parts (strings,
 * containers, devices, charges), read field by field. A change to any of
 * them changes the fingerprint (but for a 2^-64 chance), so a writer
 * redoes only the workloads whose fingerprint moved. Pure. A field added
 * to these structs must be added to it (state_json.c).
 */
uint64_t np_workload_alloc_fp(const struct np_workload_alloc *a);
int np_state_load_json(struct np_node_state *st, const json_t *j,
		       const char *path, char *err, size_t errlen);
/*
 * The same, one workload at a time (a state streamed from a file, never
 * whole): begin (hint: the workloads expected, 0 if unknown), add each
 * saved workload in order (its errors name PATH.workloads[N] as
 * np_state_load_json's do; the loader stays usable only for abort after
 * one), then end with the state object's other members (j:
 * "default_cpuset" and the like; its "workloads" is not read), which
 * replaces st's workloads with the loaded ones, or abort, which changes
 * nothing. end frees the loader whatever it returns, abort always.
 */
struct np_state_loader;
int np_state_load_begin(struct np_state_loader **l, struct np_node_state *st,
			const char *path, size_t hint);
int np_state_load_add(struct np_state_loader *l, const json_t *wj, char *err,
		      size_t errlen);
int np_state_load_end(struct np_state_loader *l, const json_t *j, char *err,
		      size_t errlen);
void np_state_load_abort(struct np_state_loader *l);

/* Planner kind "admit". */
int np_plan_admit(const json_t *req, json_t **result, char *err,
		  size_t errlen);
/* Planner kind "release": the kubelet's RemoveContainer. */
int np_plan_release(const json_t *req, json_t **result, char *err,
		    size_t errlen);
/* Planner kind "resize": np_resize on the given state ("workload",
 * optional "container", "cpus"). */
int np_plan_resize(const json_t *req, json_t **result, char *err,
		   size_t errlen);
/* Add "state" (with the kubelet checkpoint's "default_cpuset": the shared
 * pool) and "pools" to a planner result; -ENOMEM (also for result NULL). */
int np_plan_finish(const struct np_node_state *st, json_t *result);
/* Release container k of workload i (its CPUs back to the shared pool, its
 * memory and devices freed); the whole workload when it is the last one.
 * -ENOENT when there is no such container. */
int np_release_container(struct np_node_state *st, int i, int k);
/* A checkpoint's "default_cpuset" (optional, in j at path) against the
 * allocations w[0..n) with the kubelet's validateState rules: empty only
 * when nothing is assigned, reserved CPUs inside it (outside under
 * strict-cpu-reservation), disjoint from every assignment, and with them
 * all CPUs. 0, or -EINVAL with a message naming the rule and the field. */
int np_state_check_default(const struct np_node_state *st,
			   struct np_workload_alloc *const *w, int n,
			   const json_t *j, const char *path, char *err,
			   size_t errlen);
/* Two requests are the same (their canonical specs are equal). */
bool np_workload_req_same(const struct np_workload_req *a,
			  const struct np_workload_req *b);
int np_admit_check(const json_t *expect, const json_t *result, char *why,
		   size_t len);

#endif
