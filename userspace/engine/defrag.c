// SPDX-License-Identifier: Apache-2.0
/*
 * Defragmentation search (numaplace/defrag.h): the fewest moves of movable
 * workloads that let a rejected request in, simulated on copies of the
 * node state with the engine's own admission. Pure: no I/O.
 */
#include "numaplace/defrag.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool exclusive_alloc(const struct np_workload_alloc *a)
{
	for (int c = 0; c < a->ncontainers; c++)
		if (a->c[c].exclusive)
			return true;
	return false;
}

/* A shared workload matters only when it holds something a move could
 * free: devices, or memory nodes narrower than the node's. */
static bool holds_placement(const struct np_node_state *st,
			    const struct np_workload_alloc *a)
{
	for (int c = 0; c < a->ncontainers; c++)
		if (a->c[c].ndev || a->c[c].charge ||
		    a->c[c].mems != st->topo->numa_mask)
			return true;
	return false;
}

const char *np_defrag_unmovable(const struct np_workload_alloc *a)
{
	if (a->req.partition)
		return "it is an isolated partition";
	if (exclusive_alloc(a) && !a->req.movable)
		return "its spec does not say \"movable\": true";
	return NULL;
}

static void free_moves(struct np_defrag_plan *p)
{
	for (int i = 0; i < p->nmoves; i++)
		np_workload_alloc_free(&p->moves[i].to);
	p->nmoves = 0;
}

void np_defrag_plan_free(struct np_defrag_plan *p)
{
	free_moves(p);
	free(p->kept);
	p->kept = NULL;
	p->nkept = 0;
}

/* Exclusive CPUs the request asks for, when it is an exclusive class. */
static int wanted_cpus(const struct np_node_state *st,
		       const struct np_workload_req *w)
{
	int n = 0;
	bool excl = w->qos == NP_QOS_LSE || w->qos == NP_QOS_LSR ||
		    (w->qos == NP_QOS_GUARANTEED &&
		     st->policy.cpu_policy == NP_CPU_POLICY_STATIC);

	for (int i = 0; excl && i < w->ncontainers; i++)
		if (w->c[i].cpu_milli > 0 && w->c[i].cpu_milli % 1000 == 0)
			n += (int)(w->c[i].cpu_milli / 1000);
	return n;
}

/* Put a copy of alloc in place of the workload of the same name (which
 * keeps its record: the workload is the same, moved). */
static int replace_alloc(struct np_node_state *st,
			 const struct np_workload_alloc *alloc)
{
	int i = np_state_find(st, alloc->req.name), r;
	struct np_workload_alloc old, cp;

	if (i < 0)
		return -ENOENT;
	if ((r = np_workload_alloc_copy(&cp, alloc)))
		return r;
	if ((r = np_release_keep(st, i, &old))) {
		np_workload_alloc_free(&cp);
		return r;
	}
	np_workload_rec_move(&cp, &old);
	if ((r = np_state_insert(st, i, &cp))) {
		np_workload_rec_move(&old, &cp);
		np_workload_alloc_free(&cp);
		if (np_state_insert(st, i, &old))
			np_workload_alloc_free(&old);
		return r;
	}
	np_workload_alloc_free(&old);
	return 0;
}

static void alloc_place(const struct np_workload_alloc *a, np_cpuset *cpus,
			np_nodemask *mems)
{
	np_workload_exclusive_cpus(a, cpus);
	*mems = 0;
	for (int c = 0; c < a->ncontainers; c++)
		*mems |= a->c[c].mems;
}

static bool same_alloc(const struct np_workload_alloc *a,
		       const struct np_workload_alloc *b)
{
	if (a->ncontainers != b->ncontainers)
		return false;
	for (int c = 0; c < a->ncontainers; c++)
		if (!np_cpuset_equal(a->c[c].cpus, b->c[c].cpus) ||
		    a->c[c].mems != b->c[c].mems || a->c[c].ndev != b->c[c].ndev ||
		    memcmp(a->c[c].dev, b->c[c].dev, sizeof(a->c[c].dev)))
			return false;
	return true;
}

/* One move set, released from a copy of st, the request admitted, the set
 * admitted again: 1 with the moves in *p when that works, 0 when not. */
struct sim {
	const struct np_node_state *st;
	const struct np_workload_req *w;
	struct np_node_state work;
	struct np_workload_alloc old[NP_DEFRAG_MAX_MOVES];
	int nold;
};

static void sim_reset(struct sim *s)
{
	for (int i = 0; i < s->nold; i++)
		np_workload_alloc_free(&s->old[i]);
	s->nold = 0;
	np_state_free(&s->work);
}

/* Release set[0..k) and admit the request then the set again, on s->work. */
static int sim_place(struct sim *s, const int *set, int k, char *err,
		     size_t errlen)
{
	struct np_decision d;
	int r;

	if ((r = np_state_copy(&s->work, s->st)))
		return r;
	for (int i = 0; i < k; i++) {
		int at = np_state_find(&s->work, s->st->w[set[i]]->req.name);
		if ((r = np_release_keep(&s->work, at, &s->old[s->nold])))
			return r;
		s->nold++;
	}
	if ((r = np_admit(&s->work, s->w, &d, err, errlen)))
		return r;
	if (!d.admitted)
		return 0;
	for (int i = 0; i < k; i++) {
		int at;
		if ((r = np_admit(&s->work, &s->old[i].req, &d, err, errlen)))
			return r;
		if (!d.admitted)
			return 0;
		at = np_state_find(&s->work, s->old[i].req.name);
		s->work.w[at]->partition_by_verify = s->old[i].partition_by_verify;
	}
	return 1;
}

/* Check a simulated set as it will be carried out (moves, then the
 * admission) and record it in p: 1 found, 0 not. */
static int sim_check(struct sim *s, int k, struct np_defrag_plan *p,
		     char *err, size_t errlen)
{
	struct np_node_state chk;
	struct np_decision d;
	int r, n = 0;

	if ((r = np_state_copy(&chk, s->st)))
		return r;
	for (int i = 0; i < k; i++) {
		const struct np_workload_alloc *to =
			s->work.w[np_state_find(&s->work, s->old[i].req.name)];
		if (same_alloc(to, &s->old[i]))
			continue; /* put back where it was: not a move */
		if ((r = replace_alloc(&chk, to)))
			goto out;
		struct np_defrag_move *m = &p->moves[n];
		memset(m, 0, sizeof(*m));
		snprintf(m->workload, sizeof(m->workload), "%s", to->req.name);
		m->qos_class = to->qos_class;
		alloc_place(&s->old[i], &m->from_cpus, &m->from_mems);
		alloc_place(to, &m->to_cpus, &m->to_mems);
		if ((r = np_workload_alloc_copy(&m->to, to)))
			goto out;
		p->nmoves = ++n;
	}
	if ((r = np_admit(&chk, s->w, &d, err, errlen)))
		goto out;
	if (!d.admitted || !n) {
		r = 0;
		goto out;
	}
	alloc_place(d.alloc, &p->cpus, &p->mems);
	p->found = true;
	r = 1;
out:
	if (r != 1)
		free_moves(p);
	np_state_free(&chk);
	return r;
}

/* One set: simulated, then checked. 1 found (in p), 0 not. */
static int try_set(const struct np_node_state *st,
		   const struct np_workload_req *w, const int *set, int k,
		   struct np_defrag_plan *p, char *err, size_t errlen)
{
	struct sim s = {.st = st, .w = w};
	int r = sim_place(&s, set, k, err, errlen);

	if (r == 1)
		r = sim_check(&s, k, p, err, errlen);
	sim_reset(&s);
	p->tried++;
	return r;
}

/* The candidates, in the order the search tries them (shared and BE that
 * hold a placement first, then movable exclusive workloads); the others
 * that hold exclusive CPUs go to p->kept. */
static int candidates(const struct np_node_state *st,
		      struct np_defrag_plan *p, int *cand)
{
	int n = 0;

	p->kept = calloc((size_t)st->nworkloads + 1, sizeof(*p->kept));
	if (!p->kept)
		return -ENOMEM;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < st->nworkloads; i++) {
			const struct np_workload_alloc *a = st->w[i];
			const char *why = np_defrag_unmovable(a);
			bool excl = exclusive_alloc(a);
			if ((pass == 0) == excl)
				continue;
			if (why && excl) {
				struct np_defrag_kept *k = &p->kept[p->nkept++];
				snprintf(k->workload, sizeof(k->workload), "%s",
					 a->req.name);
				snprintf(k->why, sizeof(k->why), "%s", why);
			} else if (!why && (excl || holds_placement(st, a))) {
				cand[n++] = i;
			}
		}
	return n;
}

/* Every set of k of the n candidates, in lexicographic order; 1 when one
 * makes room (in p), 0 when none does, -E2BIG when the budget ran out. */
static int search_k(const struct np_node_state *st,
		    const struct np_workload_req *w, const int *cand, int n,
		    int k, struct np_defrag_plan *p, char *err, size_t errlen)
{
	int ix[NP_DEFRAG_MAX_MOVES], set[NP_DEFRAG_MAX_MOVES], r;

	for (int i = 0; i < k; i++)
		ix[i] = i;
	while (1) {
		if (p->tried >= NP_DEFRAG_MAX_TRIES)
			return -E2BIG;
		for (int i = 0; i < k; i++)
			set[i] = cand[ix[i]];
		if ((r = try_set(st, w, set, k, p, err, errlen)))
			return r;
		int i = k - 1;
		while (i >= 0 && ix[i] == n - k + i)
			i--;
		if (i < 0)
			return 0;
		ix[i]++;
		for (int j = i + 1; j < k; j++)
			ix[j] = ix[j - 1] + 1;
	}
}

/* As things are: admitted (no move needed), or why not. */
static int as_is(const struct np_node_state *st,
		 const struct np_workload_req *w, struct np_defrag_plan *p,
		 char *err, size_t errlen)
{
	struct np_node_state cp;
	struct np_decision d;
	int r;

	if ((r = np_state_copy(&cp, st)))
		return r;
	r = np_admit(&cp, w, &d, err, errlen);
	if (!r && d.admitted)
		alloc_place(d.alloc, &p->cpus, &p->mems);
	np_state_free(&cp);
	if (r)
		return r;
	p->needed = !d.admitted;
	snprintf(p->reason, sizeof(p->reason), "%s", d.reason);
	snprintf(p->resource, sizeof(p->resource), "%s", d.resource);
	return 0;
}

static void no_plan(const struct np_node_state *st, struct np_defrag_plan *p,
		    int n, int r)
{
	if (!n)
		snprintf(p->why, sizeof(p->why),
			 "no workload may move (%d exclusive workload(s) are "
			 "not movable)",
			 p->nkept);
	else if (r == -E2BIG)
		snprintf(p->why, sizeof(p->why),
			 "no plan found within %d simulated move sets (%d "
			 "movable workload(s), up to %d moves)",
			 NP_DEFRAG_MAX_TRIES, n, p->max_moves);
	else
		snprintf(p->why, sizeof(p->why),
			 "no plan of up to %d move(s) among the %d movable "
			 "workload(s) makes room (%d of %d workloads may "
			 "move)",
			 p->max_moves, n, n, st->nworkloads);
}

int np_defrag_search(const struct np_node_state *st,
		     const struct np_workload_req *w, int max_moves,
		     struct np_defrag_plan *p, char *err, size_t errlen)
{
	_Static_assert(NP_DEFRAG_MAX_MOVES <= 8, "small exact search");
	struct np_pools pools;
	int *cand = NULL, n, r = 0, want, free_cpus;

	memset(p, 0, sizeof(*p));
	snprintf(p->workload, sizeof(p->workload), "%s", w->name);
	p->max_moves = max_moves;
	if (max_moves < 1 || max_moves > NP_DEFRAG_MAX_MOVES) {
		NP_ERR("max_moves: expected 1..%d, got %d", NP_DEFRAG_MAX_MOVES,
		       max_moves);
		return -EINVAL;
	}
	if ((r = as_is(st, w, p, err, errlen)) || !p->needed)
		return r;
	if (!(cand = calloc((size_t)st->nworkloads + 1, sizeof(*cand))))
		return -ENOMEM;
	if ((n = candidates(st, p, cand)) < 0) {
		free(cand);
		return n;
	}
	p->ncandidates = n;
	np_state_pools(st, &pools);
	want = wanted_cpus(st, w);
	free_cpus = np_cpuset_count(&pools.allocatable);
	if (want > free_cpus) {
		snprintf(p->why, sizeof(p->why),
			 "%d exclusive CPU(s) requested, only %d free: moves "
			 "free no CPU",
			 want, free_cpus);
		free(cand);
		return 0;
	}
	r = 0;
	for (int k = 1; k <= max_moves && k <= n && r == 0; k++)
		r = search_k(st, w, cand, n, k, p, err, errlen);
	free(cand);
	if (r == 1)
		return 0;
	if (r < 0 && r != -E2BIG) {
		np_defrag_plan_free(p);
		return r;
	}
	no_plan(st, p, n, r);
	return 0;
}

int np_defrag_apply_moves(struct np_node_state *st,
			  const struct np_defrag_plan *p, char *err,
			  size_t errlen)
{
	struct np_node_state cp;
	int r;

	if (!p->found || !p->nmoves) {
		NP_ERR("defrag: no plan to carry out");
		return -EINVAL;
	}
	if ((r = np_state_copy(&cp, st)))
		return r;
	for (int i = 0; i < p->nmoves; i++)
		if ((r = replace_alloc(&cp, &p->moves[i].to))) {
			NP_ERR("defrag: %s is no longer admitted",
			       p->moves[i].workload);
			np_state_free(&cp);
			return r;
		}
	np_state_free(st);
	*st = cp;
	return 0;
}
