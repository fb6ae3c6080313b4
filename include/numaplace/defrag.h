/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Defragmentation: an admission is rejected although enough CPUs are free,
 * because they are scattered over NUMA nodes and cores so that no aligned
 * set fits. Which workloads could be re-placed elsewhere, fewest first, so
 * that the request is admitted? Pure computation on a copy of the node
 * state (np_state_copy, np_release, np_admit), no I/O.
 *
 * Who may move: shared (LS, Burstable, BestEffort) and BE workloads that
 * hold something placed (devices, memory nodes narrower than the node) are
 * considered first; an exclusive workload (LSE, LSR, Guaranteed) only when
 * its spec says "movable": true, and never an isolated partition. A moved
 * workload is admitted again with its own request under the node policy,
 * so it keeps what it asked for.
 *
 * The search is exact for small counts: every set of 1 candidate, then of
 * 2, ... up to max_moves (in the candidate order), each simulated by
 * releasing the set, admitting the request, then re-admitting the set.
 * The plan is then checked as it will be carried out: the moves first,
 * then the admission.
 */
#ifndef NUMAPLACE_DEFRAG_H
#define NUMAPLACE_DEFRAG_H

#include "numaplace/admit.h"

#include <jansson.h>

#define NP_DEFRAG_MAX_MOVES 4
#define NP_DEFRAG_DEFAULT_MOVES 2
/* Move sets simulated at most (the search says when it stopped there). */
#define NP_DEFRAG_MAX_TRIES 20000

struct np_defrag_move {
	char workload[NP_NAME_MAX];
	enum np_qos qos_class;
	np_cpuset from_cpus, to_cpus; /* exclusive CPUs (none for shared) */
	np_nodemask from_mems, to_mems;
	/* The workload's allocation after the move (owned by the plan). */
	struct np_workload_alloc to;
};

/* A workload that stays where it is whatever happens, and why. */
struct np_defrag_kept {
	char workload[NP_NAME_MAX];
	char why[160];
};

struct np_defrag_plan {
	char workload[NP_NAME_MAX]; /* the request */
	int max_moves;
	bool needed;        /* false: admitted as things are, no move */
	char reason[512];   /* why it is rejected as things are */
	char resource[96];
	bool found;         /* the moves below make room */
	int nmoves;
	struct np_defrag_move moves[NP_DEFRAG_MAX_MOVES];
	np_cpuset cpus;     /* what the request gets after the moves */
	np_nodemask mems;
	char why[512];      /* not found: why */
	int ncandidates;    /* workloads that may move */
	long tried;         /* move sets simulated */
	int nkept;
	struct np_defrag_kept *kept; /* heap, owned */
};

/* May a defragmentation move this workload (why it may not, else NULL). */
const char *np_defrag_unmovable(const struct np_workload_alloc *a);

/*
 * Search the fewest moves (1..max_moves, at most NP_DEFRAG_MAX_MOVES) that
 * let st admit w. st is not changed. 0 with the answer in *out (found or
 * not, see out->why); a negative errno for an invalid request or max_moves
 * (err names it) or -ENOMEM. Free *out with np_defrag_plan_free().
 */
int np_defrag_search(const struct np_node_state *st,
		     const struct np_workload_req *w, int max_moves,
		     struct np_defrag_plan *out, char *err, size_t errlen);
void np_defrag_plan_free(struct np_defrag_plan *p);

/* Carry out a found plan's moves on st (each moved workload gets its new
 * allocation in its place; the request is not admitted here). st must be
 * the state the plan was searched on. On failure st is unchanged. */
int np_defrag_apply_moves(struct np_node_state *st,
			  const struct np_defrag_plan *p, char *err,
			  size_t errlen);

/* {"workload","max_moves","needed","rejected":{"reason","resource"},
 *  "found","moves":[{"workload","class","from":{"cpus","mems"},
 *  "to":{"cpus","mems"},"mems_change"}],"admits":{"cpus","mems"},"why",
 *  "candidates","tried","kept":[{"workload","why"}]} */
json_t *np_defrag_plan_to_json(const struct np_defrag_plan *p);

#endif
