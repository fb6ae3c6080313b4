/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Why a workload got its CPUs: an optional trace of one admission.
 *
 * np_admit_explain() is np_admit() with a sink: when it is not NULL the
 * providers' hints, the merge, the take strategy, the orders the take
 * sorted units in, the CPUs skipped (and why) and the result are appended
 * to it as structured events. np_admit() passes NULL; every hook is then a
 * pointer test. The renderers turn events into JSON and sentences. Pure:
 * no I/O.
 */
#ifndef NUMAPLACE_EXPLAIN_H
#define NUMAPLACE_EXPLAIN_H

#include "numaplace/cpuset.h"
#include "numaplace/merge.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

enum np_ex_kind {
	NP_EX_REQUEST = 0, /* a container's (or the pod's) request */
	NP_EX_PROVIDER,	   /* one hint provider and its hints */
	NP_EX_MERGE,	   /* the merged hint and why it won */
	NP_EX_STRATEGY,	   /* the take strategy and where it takes from */
	NP_EX_ORDER,	   /* units in the order a take step sorted them */
	NP_EX_SKIP,	   /* CPUs not taken, one reason */
	NP_EX_RESULT,	   /* what the container got */
	NP_EX_REJECT,	   /* the admission failed here */
};

enum np_ex_unit {
	NP_EXU_NUMA = 0,
	NP_EXU_SOCKET,
	NP_EXU_CORE,
	NP_EXU_L3,
	NP_EXU_CPU,
};

/* NP_EX_MERGE codes: why the merged hint won. */
enum np_ex_merge_why {
	NP_EXM_NO_ALIGNMENT = 0, /* policy none, or nothing to align */
	NP_EXM_ONLY,		 /* the only preferred hint of its width */
	NP_EXM_NARROWER,	 /* preferred, narrower than any other */
	NP_EXM_LOWER_MASK,	 /* same width: numerically lower mask */
	NP_EXM_CLOSER,		 /* same width: lower average distance */
	NP_EXM_NOT_PREFERRED,	 /* no preferred hint: best non-preferred */
	NP_EXM_POD,		 /* the pod's hint (pod scope) */
};

/* NP_EX_SKIP codes. */
enum np_ex_skip_why {
	NP_EXS_OFFLINE = 0,
	NP_EXS_RESERVED,
	NP_EXS_HELD,	      /* held by the workload in name */
	NP_EXS_SPLIT_CORE,    /* full-pcpus-only: its core is not whole */
	NP_EXS_OUTSIDE_HINT,  /* free, outside the hint's NUMA nodes */
	NP_EXS_LATER,	      /* free and eligible, later in the order */
	NP_EXS_SIBLING,	      /* taken by an earlier container of it */
	NP_EXS_NOT_ALLOCATABLE, /* in no pool exclusive CPUs come from */
};

/* NP_EX_STRATEGY codes. */
enum np_ex_take {
	NP_EXT_KUBELET_PACKED = 0,
	NP_EXT_KUBELET_SPREAD,
	NP_EXT_KUBELET_DISTRIBUTED,
	NP_EXT_KOORD,
};

#define NP_EX_ENTRIES 16

/* One unit of an order (key[] as the sort compared them), one node of a
 * provider ({id, avail, total, request}), or a runner-up of a merge. */
struct np_ex_entry {
	int id;
	int parent; /* order: id of the unit it was sorted inside, -1 */
	int64_t key[3];
	int cand; /* order: its CPUs (kubelet), candidates (Koordinator) */
	bool taken; /* order: got CPUs in this step */
};

struct np_ex_event {
	enum np_ex_kind kind;
	int container; /* index; -1 = the pod */
	int code;      /* per kind (see the enums above); kubelet order:
			* the np_ex_unit units are sorted inside, -1 */
	int unit;      /* enum np_ex_unit */
	int count;     /* CPUs asked (take), hint count (provider) */
	int step;      /* order: the step (see np_ex_step_name) */
	int nent;      /* entries used */
	int hfirst, nhint; /* provider: slice of np_explain.hints */
	bool truncated;	   /* more entries/hints than kept */
	struct np_hint hint; /* merge / strategy / result */
	np_nodemask mask;    /* runner-up mask (merge) */
	int64_t value[2];    /* merge: avg distances x1000 (best, other) */
	uint64_t request;
	char name[128]; /* resource, holder, bind policy ... */
	np_cpuset cpus;
	struct np_ex_entry ent[NP_EX_ENTRIES];
};

struct np_explain {
	int n, cap;
	struct np_ex_event *ev;
	int nhints, hcap;
	struct np_hint *hints;
	int container; /* current container (-1 pod), set by admit */
	bool oom;      /* an append failed: the trace is incomplete */
	char reason[512]; /* a rejection's reason */
};

/* Take steps (NP_EX_ORDER.step). */
enum np_ex_step {
	NP_EXP_WHOLE = 0,   /* kubelet: whole free units of this type */
	NP_EXP_SINGLE,	    /* kubelet: single CPUs, in unit order */
	NP_EXP_KOORD_NODE,  /* Koordinator: one NUMA node holds it */
	NP_EXP_KOORD_SOCKET, /* Koordinator: one socket holds it */
	NP_EXP_KOORD_SOCKETS, /* Koordinator: whole cores of several sockets */
	NP_EXP_KOORD_FALLBACK, /* Koordinator: any free CPU */
};

void np_explain_init(struct np_explain *ex);
void np_explain_free(struct np_explain *ex);
/* A zeroed event of this kind for the current container, or NULL (the
 * trace is then marked incomplete). */
struct np_ex_event *np_explain_add(struct np_explain *ex,
				   enum np_ex_kind kind);
/* Append hints; the index of the first. */
int np_explain_add_hints(struct np_explain *ex, const struct np_hint *h,
			 int n);
const char *np_ex_unit_name(int unit);

/* The events as JSON: {"events": [...]} plus a summary. */
json_t *np_explain_to_json(const struct np_explain *ex);
/* The events as sentences: a JSON array of strings (one per line). */
json_t *np_explain_sentences(const struct np_explain *ex);

struct np_node_state;
struct np_workload_req;
struct np_decision;

/* np_admit() (numaplace/admit.h) with a trace; ex may be NULL. */
int np_admit_explain(struct np_node_state *st, const struct np_workload_req *w,
		     struct np_decision *d, struct np_explain *ex, char *err,
		     size_t errlen);

/*
 * Explain workload `name` of st: its admission re-run, with a trace, on a
 * copy of st without it. *out: {"workload", "admitted", "cpuset", "held"
 * (what it holds in st), "same" (the re-run got what it holds), "reason",
 * "sentences": [...], "events": [...]}. -ENOENT (err: "no workload named
 * X") when st has no such workload.
 */
int np_explain_workload(const struct np_node_state *st, const char *name,
			json_t **out, char *err, size_t errlen);
/* Explain the admission a planner request of kind "admit" makes (same
 * shape, without "held"); err names the field of a bad request. */
int np_explain_plan(const json_t *req, json_t **out, char *err,
		    size_t errlen);

/* The CPUs the trace says container c got (NP_EX_RESULT), false if none. */
bool np_explain_result(const struct np_explain *ex, int c, np_cpuset *out);

#endif
