// SPDX-License-Identifier: Apache-2.0
/*
 * The cpuset write planner (pure, no I/O): orders cpuset.cpus/cpuset.mems
 * writes so that the hierarchy stays consistent (widen top-down, narrow
 * bottom-up, as Koordinator's applyCPUSetWithNonePolicy) and no CPU is ever
 * held by an exclusive cgroup and any other non-nested cgroup at once
 * (shared yield before an exclusive grant, exclusive release before shared
 * widening).  The phases are documented at np_cgroup_plan_build().
 */
#include "cgroup_plan_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const why_names[] = {
    [NP_STEP_MEMS_WIDEN] = "mems widen", [NP_STEP_CPUS_RELEASE] = "release",
    [NP_STEP_CPUS_YIELD] = "yield",	 [NP_STEP_CPUS_WIDEN] = "widen",
    [NP_STEP_CPUS_NARROW] = "narrow",	 [NP_STEP_MEMS_NARROW] = "mems narrow",
};

const char *np_cgroup_why_name(enum np_cgroup_why why)
{
	if ((unsigned int)why >= sizeof(why_names) / sizeof(*why_names))
		return "?";
	return why_names[why];
}

static struct np_cgroup_step *new_step(struct planner *pl, int i,
				       enum np_cgroup_file file,
				       enum np_cgroup_why why)
{
	struct np_cgroup_plan *plan = pl->plan;
	struct np_cgroup_step *s;

	if (plan->n == pl->cap) {
		int cap = pl->cap ? pl->cap * 2 : 16;
		struct np_cgroup_step *ns;

		ns = realloc(plan->steps, sizeof(*ns) * (size_t)cap);
		if (!ns)
			return NULL;
		plan->steps = ns;
		pl->cap = cap;
	}
	s = &plan->steps[plan->n++];
	memset(s, 0, sizeof(*s));
	s->change = i;
	s->file = file;
	s->why = why;
	return s;
}

static int emit_cpus(struct planner *pl, int i, enum np_cgroup_why why,
		     const np_cpuset *set)
{
	const np_cpuset *shared = cg_plan_intern(pl, set);
	struct np_cgroup_step *s =
	    shared ? new_step(pl, i, NP_CGROUP_CPUS, why) : NULL;

	if (!s) {
		np_errmsg(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	s->cpus = shared;
	pl->cur[i] = shared;
	pl->ver[i]++;
	if (pl->ch[i].kind == NP_CGROUP_EXCLUSIVE)
		pl->excl_ver++;
	return 0;
}

static int emit_mems(struct planner *pl, int i, enum np_cgroup_why why,
		     np_nodemask m)
{
	struct np_cgroup_step *s = new_step(pl, i, NP_CGROUP_MEMS, why);

	if (!s) {
		np_errmsg(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	s->mems = m;
	pl->curm[i] = m;
	return 0;
}

/* (depth ascending, then index): qsort_r's comparator for sort_by_depth */
static int by_depth_up(const void *a, const void *b, void *arg)
{
	const struct planner *pl = arg;
	int x = *(const int *)a, y = *(const int *)b;

	if (pl->depth[x] != pl->depth[y])
		return pl->depth[x] < pl->depth[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/* (depth descending, then index) */
static int by_depth_down(const void *a, const void *b, void *arg)
{
	const struct planner *pl = arg;
	int x = *(const int *)a, y = *(const int *)b;

	if (pl->depth[x] != pl->depth[y])
		return pl->depth[x] > pl->depth[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/* pl->order = 0..n-1 by depth (ascending when top_down), then index. */
static void sort_by_depth(struct planner *pl, bool top_down)
{
	for (int i = 0; i < pl->n; i++)
		pl->order[i] = i;
	qsort_r(pl->order, (size_t)pl->n, sizeof(*pl->order),
		top_down ? by_depth_up : by_depth_down, pl);
}

/* Limit t to what i's ancestors in the list hold now (when the target
 * state nests i in them), so a child never gets ahead of its parent. */
static void within_ancestors(const struct planner *pl, int i, np_cpuset *t)
{
	const struct np_cgroup_change *ch = pl->ch;

	for (int k = pl->anc_start[i]; k < pl->anc_start[i + 1]; k++) {
		int j = pl->anc_list[k];
		if (pl->cm[j] && !np_cpuset_empty(pl->cur[j]) &&
		    np_cpuset_subset(ch[i].new_cpus, ch[j].new_cpus))
			np_cpuset_and(t, t, pl->cur[j]);
	}
}

/* Keep in t whatever i's descendants in the list still hold of cur[i],
 * so a parent never drops CPUs before its children did. */
static void keep_for_descendants(const struct planner *pl, int i, np_cpuset *t)
{
	np_cpuset d;

	for (int j = 0; j < pl->n; j++)
		if (pl->cm[j] && anc(pl, i, j)) {
			np_cpuset_and(&d, pl->cur[i], pl->cur[j]);
			np_cpuset_or(t, t, &d);
		}
}

/*
 * Exclusive i gives up CPUs outside its target: down to cur ∩ new, or, for
 * a move with nothing in common yet, the CPUs other cgroups are waiting
 * for (it keeps the rest until it holds some of its new ones).
 */
static bool remember(const struct planner *pl, struct memo *m, int i,
		     bool (*f)(const struct planner *, int))
{
	if (m[i].ver != pl->ver[i]) {
		m[i].val = f(pl, i);
		m[i].ver = pl->ver[i];
	}
	return m[i].val;
}

static bool cur_inside_new(const struct planner *pl, int i)
{
	return np_cpuset_subset(pl->cur[i], pl->ch[i].new_cpus);
}

static bool cur_holds_new(const struct planner *pl, int i)
{
	return np_cpuset_subset(pl->ch[i].new_cpus, pl->cur[i]);
}

static bool release_target(const struct planner *pl, int i, np_cpuset *t)
{
	if (remember(pl, pl->m_inside, i, cur_inside_new))
		return false;
	np_cpuset_and(t, pl->cur[i], pl->ch[i].new_cpus);
	if (np_cpuset_empty(t)) {
		np_cpuset_andnot(t, pl->cur[i], pl->claim[i]);
		if (np_cpuset_empty(t))
			return false;
	}
	keep_for_descendants(pl, i, t);
	return !np_cpuset_equal(t, pl->cur[i]);
}

static bool holds_claimed(const struct planner *pl, int i)
{
	return np_cpuset_intersects(pl->cur[i], pl->claim[i]);
}

/*
 * Take from t what the cgroups conflicting with shared i hold now.  A solo
 * shared i (no ancestor or descendant among the changes) conflicts with
 * every exclusive change: their union, kept until one of them is written,
 * answers in one pass instead of one per exclusive cgroup (10,000 shared
 * by 200 exclusive in a first cycle).
 */
static void minus_conflicting(struct planner *pl, int i, np_cpuset *t)
{
	const np_cpuset *last = NULL;
	const int *cand;
	int nc;

	if (pl->claim[i] == &pl->u_excl) {
		if (pl->excl_held_ver != pl->excl_ver) {
			np_cpuset_zero(&pl->excl_held);
			for (int k = 0; k < pl->nexcl; k++)
				np_cpuset_or(&pl->excl_held, &pl->excl_held,
					     pl->cur[pl->excl[k]]);
			pl->excl_held_ver = pl->excl_ver;
		}
		np_cpuset_andnot(t, t, &pl->excl_held);
		return;
	}
	/* Many hold the same set (the shared pool, interned once): a set
	 * taken already takes nothing more (an exclusive i against 10,000
	 * shared cgroups in a first cycle: one pass over 512 bytes, not
	 * 10,000). */
	cand = conflict_candidates(pl, i, &nc);
	for (int k = 0; k < nc; k++)
		if (pl->cur[cand[k]] != last && conflict(pl, i, cand[k])) {
			last = pl->cur[cand[k]];
			np_cpuset_andnot(t, t, last);
		}
}

/* Shared i still holds CPUs an exclusive cgroup is to get. */
static bool must_yield(const struct planner *pl, int i)
{
	if (!pl->cm[i] || pl->ch[i].kind != NP_CGROUP_SHARED)
		return false;
	return remember(pl, pl->m_yield, i, holds_claimed);
}


/*
 * What shared i can yield to now: its current set minus every CPU a
 * conflicting (exclusive) cgroup is to get.  When that leaves nothing, its
 * new CPUs that are free now instead (never empty).  Waits for descendants
 * that must yield first (they hold some of the CPUs).
 */
static bool yield_target(struct planner *pl, int i, np_cpuset *t)
{
	for (int j = 0; j < pl->n; j++)
		if (anc(pl, i, j) && must_yield(pl, j))
			return false;
	np_cpuset_andnot(t, pl->cur[i], pl->claim[i]);
	if (!np_cpuset_empty(t))
		return true;
	*t = *pl->ch[i].new_cpus;
	minus_conflicting(pl, i, t);
	within_ancestors(pl, i, t);
	return !np_cpuset_empty(t);
}

/* CPUs of i's target it lacks and no conflicting cgroup holds now. */
static void addable(struct planner *pl, int i, np_cpuset *add)
{
	np_cpuset_andnot(add, pl->ch[i].new_cpus, pl->cur[i]);
	minus_conflicting(pl, i, add);
	within_ancestors(pl, i, add);
}

/* (depth, shared before exclusive, index) */
static bool widen_before(const struct planner *pl, int a, int b)
{
	if (pl->depth[a] != pl->depth[b])
		return pl->depth[a] < pl->depth[b];
	if (pl->ch[a].kind != pl->ch[b].kind)
		return pl->ch[a].kind == NP_CGROUP_SHARED;
	return a < b;
}

/* Nothing can move: name the first stuck cgroup and who holds its CPUs. */
static int deadlock(struct planner *pl)
{
	const struct np_cgroup_change *ch = pl->ch;
	int first = -1, blocker = -1;
	np_cpuset miss, held;
	char a[160];

	for (int i = 0; i < pl->n; i++)
		if (pl->cm[i] &&
		    !np_cpuset_subset(ch[i].new_cpus, pl->cur[i]) &&
		    (first < 0 || widen_before(pl, i, first)))
			first = i;
	if (first < 0) {
		np_errmsg(pl->err, pl->errlen,
		       "no safe order: shared cgroups cannot yield CPUs to "
		       "exclusive ones without being left empty; plan the "
		       "change in two rounds");
		return -EDEADLK;
	}
	np_cpuset_andnot(&miss, ch[first].new_cpus, pl->cur[first]);
	for (int j = 0; j < pl->n && blocker < 0; j++)
		if (conflict(pl, first, j) &&
		    np_cpuset_intersects(&miss, pl->cur[j]))
			blocker = j;
	if (blocker < 0) {
		cg_fmt_cpus(&miss, a, sizeof(a));
		np_errmsg(pl->err, pl->errlen,
		       "no safe order: %s %s needs CPUs %s that its ancestors "
		       "cannot get yet; plan the change in two rounds",
		       kind_name(ch[first].kind), ch[first].cgroup, a);
		return -EDEADLK;
	}
	np_cpuset_and(&held, &miss, pl->cur[blocker]);
	cg_fmt_cpus(&held, a, sizeof(a));
	np_errmsg(pl->err, pl->errlen,
	       "no safe order: %s %s needs CPUs %s still held by %s %s, which "
	       "waits in turn; plan the change in two rounds",
	       kind_name(ch[first].kind), ch[first].cgroup, a,
	       kind_name(ch[blocker].kind), ch[blocker].cgroup);
	return -EDEADLK;
}

/* widen_before() as a qsort_r comparator */
static int by_widen(const void *a, const void *b, void *arg)
{
	int x = *(const int *)a, y = *(const int *)b;

	if (x == y)
		return 0;
	return widen_before(arg, x, y) ? -1 : 1;
}

/*
 * One bottom-up pass of releases (exclusive) and yields (shared): 1 when
 * some write was emitted, 0 when none, < 0 on error.  *blocked: some
 * cgroup still has CPUs to release or yield but cannot yet.
 */
static int release_pass(struct planner *pl, bool *blocked)
{
	const struct np_cgroup_change *ch = pl->ch;
	bool progress = false;
	np_cpuset t;
	int r;

	*blocked = false;
	/* pl->order is bottom-up (set by the caller) */
	for (int k = 0; k < pl->n; k++) {
		int i = pl->order[k];

		if (!pl->cm[i])
			continue;
		if (ch[i].kind == NP_CGROUP_EXCLUSIVE) {
			if (!release_target(pl, i, &t)) {
				if (!remember(pl, pl->m_inside, i,
					      cur_inside_new))
					*blocked = true;
				continue;
			}
			r = emit_cpus(pl, i, NP_STEP_CPUS_RELEASE, &t);
		} else {
			if (!must_yield(pl, i))
				continue;
			if (!yield_target(pl, i, &t)) {
				*blocked = true;
				continue;
			}
			r = emit_cpus(pl, i, NP_STEP_CPUS_YIELD, &t);
		}
		if (r < 0)
			return r;
		progress = true;
	}
	return progress;
}

/*
 * Phase 2: until every cgroup holds (at least) its new set, repeatedly
 *  - bottom-up, let exclusive cgroups release CPUs outside their targets
 *    and shared ones yield the CPUs exclusive ones are to get; else
 *  - add to one cgroup the CPUs of its target that no conflicting cgroup
 *    holds now (ancestors first, then shallower, shared before exclusive).
 * Every write either removes CPUs outside the cgroup's target or adds CPUs
 * of its target, so the loop ends; no write adds a CPU a conflicting
 * cgroup holds.
 *
 * In O(n log n) for the common case (a first cycle: every cgroup only
 * widens): a widen only adds CPUs to one cgroup, so
 *  - it cannot make a cgroup earlier in the widen order able to widen (an
 *    earlier one is no descendant of it, and more CPUs held only block
 *    more): the next search resumes at the widened cgroup;
 *  - a shared widen adds no CPU an exclusive cgroup is to get (targets do
 *    not overlap), so it makes no release or yield possible unless one was
 *    already waiting: the release pass is skipped until an exclusive
 *    widen or a waiting release/yield.
 * Any release or yield restarts both from the beginning.
 */
static int exchange(struct planner *pl)
{
	int *wo, r = 0, start = 0;
	bool pass = true, blocked = false, pend_before = false;

	/* widen candidates in preference order */
	wo = malloc(sizeof(*wo) * (size_t)(pl->n > 0 ? pl->n : 1));
	if (!wo) {
		np_errmsg(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < pl->n; i++)
		wo[i] = i;
	qsort_r(wo, (size_t)pl->n, sizeof(*wo), by_widen, pl);
	for (;;) {
		bool pending = pend_before, waiting = false;
		int best = -1, bestk = -1;
		np_cpuset t;

		if (pass) {
			r = release_pass(pl, &blocked);
			if (r < 0)
				goto cleanup;
			if (r > 0) {
				start = 0;
				pend_before = false;
				continue;
			}
		}
		for (int k = start; k < pl->n && best < 0; k++) {
			int i = wo[k];

			if (!pl->cm[i] ||
			    remember(pl, pl->m_full, i, cur_holds_new))
				continue;
			pending = true;
			addable(pl, i, &t);
			if (!np_cpuset_empty(&t)) {
				best = i;
				bestk = k;
			} else {
				waiting = true;
			}
		}
		if (!pending) {
			for (int i = 0; i < pl->n; i++)
				if (must_yield(pl, i)) {
					r = deadlock(pl);
					goto cleanup;
				}
			r = 0;
			goto cleanup;
		}
		if (best < 0) {
			r = deadlock(pl);
			goto cleanup;
		}
		np_cpuset_or(&t, &t, pl->cur[best]);
		r = emit_cpus(pl, best, NP_STEP_CPUS_WIDEN, &t);
		if (r < 0)
			goto cleanup;
		start = bestk;
		pend_before = pend_before || waiting;
		pass = blocked || pl->ch[best].kind == NP_CGROUP_EXCLUSIVE;
	}
cleanup:
	free(wo);
	return r;
}

static void mark_final(struct np_cgroup_plan *plan, int n)
{
	unsigned char *seen = calloc((size_t)n ? (size_t)n : 1, 1);

	/* without memory, mark every step final: read-back stays correct,
	 * only slower */
	for (int k = plan->n - 1; k >= 0; k--) {
		struct np_cgroup_step *s = &plan->steps[k];
		unsigned char bit = s->file == NP_CGROUP_CPUS ? 1 : 2;

		if (!seen) {
			s->final = true;
			continue;
		}
		s->final = !(seen[s->change] & bit);
		seen[s->change] |= bit;
	}
	free(seen);
}

void np_cgroup_plan_free(struct np_cgroup_plan *plan)
{
	if (!plan)
		return;
	for (int i = 0; i < plan->ncgroups; i++)
		free(plan->cgroups[i]);
	free(plan->cgroups);
	free(plan->held);
	free(plan->steps);
	for (int i = 0; i < plan->nsets; i++)
		free(plan->sets[i]);
	free(plan->sets);
	memset(plan, 0, sizeof(*plan));
}

/* The planner's arrays and the plan's per-cgroup ones: 0 or -ENOMEM. */
static int planner_alloc(struct planner *pl, size_t un)
{
	struct np_cgroup_plan *plan = pl->plan;

	pl->depth = calloc(un, sizeof(*pl->depth));
	pl->order = calloc(un, sizeof(*pl->order));
	pl->anc_start = calloc(un + 1, sizeof(*pl->anc_start));
	pl->ver = calloc(un, sizeof(*pl->ver));
	pl->m_yield = calloc(un, sizeof(*pl->m_yield));
	pl->m_inside = calloc(un, sizeof(*pl->m_inside));
	pl->m_full = calloc(un, sizeof(*pl->m_full));
	pl->excl = calloc(un, sizeof(*pl->excl));
	pl->order_all = calloc(un, sizeof(*pl->order_all));
	pl->claim = calloc(un, sizeof(*pl->claim));
	pl->cm = calloc(un, sizeof(*pl->cm));
	pl->mm = calloc(un, sizeof(*pl->mm));
	pl->cur = calloc(un, sizeof(*pl->cur));
	pl->curm = calloc(un, sizeof(*pl->curm));
	plan->cgroups = calloc(un, sizeof(*plan->cgroups));
	plan->held = calloc(un, sizeof(*plan->held));
	if (!plan->held || !pl->depth || !pl->order || !pl->anc_start ||
	    !pl->ver || !pl->m_yield || !pl->m_inside || !pl->m_full ||
	    !pl->excl || !pl->order_all || !pl->claim || !pl->cm || !pl->mm ||
	    !pl->cur || !pl->curm || !plan->cgroups) {
		np_errmsg(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}

static void planner_free(struct planner *pl)
{
	free(pl->depth);
	free(pl->order);
	free(pl->anc_start);
	free(pl->anc_list);
	free(pl->ver);
	free(pl->m_yield);
	free(pl->m_inside);
	free(pl->m_full);
	free(pl->excl);
	free(pl->order_all);
	free(pl->claim);
	free(pl->claim_own);
	free(pl->cm);
	free(pl->mm);
	free(pl->cur);
	free(pl->curm);
	np_cpuset_pool_free(&pl->pool);
}

/* The plan's copy of each cgroup path, and what each holds before it. */
static int plan_cgroups(struct planner *pl)
{
	const struct np_cgroup_change *changes = pl->ch;
	struct np_cgroup_plan *plan = pl->plan;
	np_cpuset every; /* what an empty cpuset.cpus holds: every CPU */

	memset(&every, 0xff, sizeof(every));
	for (int i = 0; i < pl->n; i++) {
		plan->cgroups[i] = strdup(changes[i].cgroup);
		if (!plan->cgroups[i])
			goto oom;
		plan->ncgroups++;
		plan->held[i] = cg_plan_intern(
		    pl, np_cpuset_empty(changes[i].old_cpus)
			    ? &every
			    : changes[i].old_cpus);
		if (!plan->held[i])
			goto oom;
	}
	return 0;
oom:
	np_errmsg(pl->err, pl->errlen, "out of memory");
	return -ENOMEM;
}

int np_cgroup_plan_build(struct np_cgroup_plan *plan,
			 const struct np_cgroup_change *changes, int n,
			 char *err, size_t errlen)
{
	struct planner pl = {.ch = changes,
			     .n = n,
			     .plan = plan,
			     .err = err,
			     .errlen = errlen,
			     .excl_ver = 1};
	int r;

	memset(plan, 0, sizeof(*plan));
	if (n < 0 || (n > 0 && !changes)) {
		np_errmsg(err, errlen, "invalid change list");
		return -EINVAL;
	}
	if ((r = planner_alloc(&pl, (size_t)(n > 0 ? n : 1))) ||
	    (r = cg_plan_validate(&pl)) || (r = plan_cgroups(&pl)))
		goto cleanup;

	/* 1. mems widen, top-down */
	sort_by_depth(&pl, true);
	for (int k = 0; k < n; k++) {
		int i = pl.order[k];

		if (pl.mm[i] && (changes[i].new_mems & ~pl.curm[i])) {
			r = emit_mems(&pl, i, NP_STEP_MEMS_WIDEN,
				      pl.curm[i] | changes[i].new_mems);
			if (r < 0)
				goto cleanup;
		}
	}
	/* 2. release / yield / widen, each write once it is safe */
	sort_by_depth(&pl, false);
	r = exchange(&pl);
	if (r < 0)
		goto cleanup;
	/* 3. cpus narrow, bottom-up */
	for (int k = 0; k < n; k++) {
		int i = pl.order[k];

		if (pl.cm[i] &&
		    !np_cpuset_equal(pl.cur[i], changes[i].new_cpus)) {
			r = emit_cpus(&pl, i, NP_STEP_CPUS_NARROW,
				      changes[i].new_cpus);
			if (r < 0)
				goto cleanup;
		}
	}
	/* 4. mems narrow, bottom-up */
	for (int k = 0; k < n; k++) {
		int i = pl.order[k];

		if (pl.mm[i] && pl.curm[i] != changes[i].new_mems) {
			r = emit_mems(&pl, i, NP_STEP_MEMS_NARROW,
				      changes[i].new_mems);
			if (r < 0)
				goto cleanup;
		}
	}
	mark_final(plan, n);
cleanup:
	plan->sets = np_cpuset_pool_take(&pl.pool, &plan->nsets);
	planner_free(&pl);
	if (r < 0)
		np_cgroup_plan_free(plan);
	return r;
}

int np_cgroup_step_describe(const struct np_cgroup_plan *plan, int i, char *buf,
			    size_t len)
{
	const struct np_cgroup_step *s;
	char set[256];
	int n;

	if (i < 0 || i >= plan->n)
		return snprintf(buf, len, "step %d out of range", i);
	s = &plan->steps[i];
	if (s->file == NP_CGROUP_CPUS)
		cg_fmt_cpus(s->cpus, set, sizeof(set));
	else
		cg_fmt_mems(s->mems, set, sizeof(set));
	n = snprintf(buf, len, "%s %s=%s (%s)", plan->cgroups[s->change],
		     s->file == NP_CGROUP_CPUS ? "cpuset.cpus" : "cpuset.mems",
		     set, np_cgroup_why_name(s->why));
	if (n > 0 && len && (size_t)n >= len)
		n = (int)len - 1;
	return n;
}
