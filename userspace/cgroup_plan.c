// SPDX-License-Identifier: Apache-2.0
/*
 * The cpuset write planner (pure, no I/O): orders cpuset.cpus/cpuset.mems
 * writes so that the hierarchy stays consistent (widen top-down, narrow
 * bottom-up, as Koordinator's applyCPUSetWithNonePolicy) and no CPU is ever
 * held by an exclusive cgroup and any other non-nested cgroup at once
 * (shared yield before an exclusive grant, exclusive release before shared
 * widening).  The phases are documented at np_cgroup_plan_build().
 */
#include "cgroup_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct planner {
	const struct np_cgroup_change *ch;
	int n;
	int *depth;
	unsigned char *nested; /* n*n: one is an ancestor of the other */
	bool *cm, *mm;         /* cpus / mems managed by this change */
	np_cpuset *cur;        /* simulated cpuset.cpus */
	np_nodemask *curm;     /* simulated cpuset.mems */
	int *order;            /* scratch */
	struct np_cgroup_plan *plan;
	int cap;
	char *err;
	size_t errlen;
};

static const char *const why_names[] = {
	[NP_STEP_MEMS_WIDEN] = "mems widen",
	[NP_STEP_CPUS_RELEASE] = "release",
	[NP_STEP_CPUS_YIELD] = "yield",
	[NP_STEP_CPUS_WIDEN] = "widen",
	[NP_STEP_CPUS_NARROW] = "narrow",
	[NP_STEP_MEMS_NARROW] = "mems narrow",
};

const char *np_cgroup_why_name(enum np_cgroup_why why)
{
	if ((unsigned int)why >= sizeof(why_names) / sizeof(*why_names))
		return "?";
	return why_names[why];
}

static const char *kind_name(enum np_cgroup_kind k)
{
	return k == NP_CGROUP_EXCLUSIVE ? "exclusive" : "shared";
}

/* a is a proper ancestor of b (by path components). */
static bool is_ancestor(const char *a, const char *b)
{
	size_t la = strlen(a);

	return strlen(b) > la && !strncmp(a, b, la) && b[la] == '/';
}

static int path_depth(const char *p)
{
	int d = 1;

	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* i and j may not hold the same CPU at the same time. */
static bool conflict(const struct planner *pl, int i, int j)
{
	return i != j && pl->cm[i] && pl->cm[j] && !pl->nested[i * pl->n + j] &&
	       (pl->ch[i].kind == NP_CGROUP_EXCLUSIVE ||
		pl->ch[j].kind == NP_CGROUP_EXCLUSIVE);
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
	struct np_cgroup_step *s = new_step(pl, i, NP_CGROUP_CPUS, why);

	if (!s) {
		cg_err(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	s->cpus = *set;
	pl->cur[i] = *set;
	return 0;
}

static int emit_mems(struct planner *pl, int i, enum np_cgroup_why why,
		     np_nodemask m)
{
	struct np_cgroup_step *s = new_step(pl, i, NP_CGROUP_MEMS, why);

	if (!s) {
		cg_err(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	s->mems = m;
	pl->curm[i] = m;
	return 0;
}

/* pl->order = 0..n-1 by depth (ascending when top_down), then index;
 * insertion sort: stable, and n is small. */
static void sort_by_depth(struct planner *pl, bool top_down)
{
	for (int i = 0; i < pl->n; i++) {
		int k = i, x = i;

		while (k > 0) {
			int y = pl->order[k - 1];
			bool before = top_down ? pl->depth[x] < pl->depth[y]
					       : pl->depth[x] > pl->depth[y];
			if (!before)
				break;
			pl->order[k] = y;
			k--;
		}
		pl->order[k] = x;
	}
}

static int validate(struct planner *pl)
{
	const struct np_cgroup_change *ch = pl->ch;
	char a[160], b[160], c[160], pe[256];
	int r;

	for (int i = 0; i < pl->n; i++) {
		r = np_cgroup_path_check(ch[i].cgroup, pe, sizeof(pe));
		if (r < 0) {
			cg_err(pl->err, pl->errlen, "change %d: %s", i, pe);
			return r;
		}
		if (ch[i].kind != NP_CGROUP_SHARED &&
		    ch[i].kind != NP_CGROUP_EXCLUSIVE) {
			cg_err(pl->err, pl->errlen, "%s: invalid kind %d",
			       ch[i].cgroup, (int)ch[i].kind);
			return -EINVAL;
		}
		for (int j = 0; j < i; j++)
			if (!strcmp(ch[i].cgroup, ch[j].cgroup)) {
				cg_err(pl->err, pl->errlen,
				       "%s appears twice in the change list",
				       ch[i].cgroup);
				return -EINVAL;
			}
		pl->cm[i] = !np_cpuset_empty(&ch[i].new_cpus);
		if (!pl->cm[i] && !np_cpuset_empty(&ch[i].old_cpus)) {
			cg_fmt_cpus(&ch[i].old_cpus, a, sizeof(a));
			cg_err(pl->err, pl->errlen,
			       "%s: new cpus empty (old %s): an empty "
			       "cpuset.cpus means 'inherit the parent's CPUs'; "
			       "remove the cgroup instead",
			       ch[i].cgroup, a);
			return -EINVAL;
		}
		pl->mm[i] = ch[i].new_mems != 0;
		if (!pl->mm[i] && ch[i].old_mems) {
			cg_err(pl->err, pl->errlen,
			       "%s: new mems empty: an empty cpuset.mems means "
			       "'inherit the parent's nodes'",
			       ch[i].cgroup);
			return -EINVAL;
		}
		pl->depth[i] = path_depth(ch[i].cgroup);
		pl->cur[i] = ch[i].old_cpus;
		pl->curm[i] = ch[i].old_mems;
	}
	for (int i = 0; i < pl->n; i++)
		for (int j = 0; j < pl->n; j++)
			pl->nested[i * pl->n + j] =
				is_ancestor(ch[i].cgroup, ch[j].cgroup) ||
				is_ancestor(ch[j].cgroup, ch[i].cgroup);
	/* The target state itself must respect exclusivity. */
	for (int i = 0; i < pl->n; i++)
		for (int j = i + 1; j < pl->n; j++) {
			np_cpuset both;

			if (!conflict(pl, i, j) ||
			    !np_cpuset_intersects(&ch[i].new_cpus,
						  &ch[j].new_cpus))
				continue;
			np_cpuset_and(&both, &ch[i].new_cpus, &ch[j].new_cpus);
			cg_fmt_cpus(&ch[i].new_cpus, a, sizeof(a));
			cg_fmt_cpus(&ch[j].new_cpus, b, sizeof(b));
			cg_fmt_cpus(&both, c, sizeof(c));
			cg_err(pl->err, pl->errlen,
			       "target sets overlap: %s %s (%s) and %s %s (%s) "
			       "share CPUs %s",
			       kind_name(ch[i].kind), ch[i].cgroup, a,
			       kind_name(ch[j].kind), ch[j].cgroup, b, c);
			return -EINVAL;
		}
	return 0;
}

/* Phase 2, bottom-up: exclusive cgroups release what they lose, shared
 * ones yield what any non-nested exclusive one holds or will hold. */
static int release_and_yield(struct planner *pl)
{
	const struct np_cgroup_change *ch = pl->ch;
	np_cpuset t, claim;
	int r;

	sort_by_depth(pl, false);
	for (int k = 0; k < pl->n; k++) {
		int i = pl->order[k];

		if (!pl->cm[i])
			continue;
		if (ch[i].kind == NP_CGROUP_EXCLUSIVE) {
			np_cpuset_and(&t, &pl->cur[i], &ch[i].new_cpus);
			/* an empty intersection (a full move) is handled by
			 * widen-then-narrow in phase 3 */
			if (np_cpuset_empty(&t) || np_cpuset_equal(&t, &pl->cur[i]))
				continue;
			r = emit_cpus(pl, i, NP_STEP_CPUS_RELEASE, &t);
			if (r < 0)
				return r;
			continue;
		}
		np_cpuset_zero(&claim);
		for (int j = 0; j < pl->n; j++) {
			if (!conflict(pl, i, j))
				continue;
			np_cpuset_or(&claim, &claim, &ch[j].old_cpus);
			np_cpuset_or(&claim, &claim, &ch[j].new_cpus);
		}
		np_cpuset_andnot(&t, &pl->cur[i], &claim);
		if (np_cpuset_equal(&t, &pl->cur[i]))
			continue;
		if (np_cpuset_empty(&t)) {
			/* Never leave it empty: take its unclaimed new CPUs
			 * now (no exclusive cgroup holds them), as far as
			 * its ancestors in the list already hold them. */
			np_cpuset_andnot(&t, &ch[i].new_cpus, &claim);
			for (int j = 0; j < pl->n; j++)
				if (pl->cm[j] && !np_cpuset_empty(&pl->cur[j]) &&
				    is_ancestor(ch[j].cgroup, ch[i].cgroup))
					np_cpuset_and(&t, &t, &pl->cur[j]);
		}
		if (np_cpuset_empty(&t)) {
			char a[160];

			cg_fmt_cpus(&pl->cur[i], a, sizeof(a));
			cg_err(pl->err, pl->errlen,
			       "no safe order: shared %s would be left without "
			       "CPUs: its CPUs %s go to exclusive cgroups and "
			       "none of its new CPUs is free yet (held by an "
			       "exclusive cgroup, or not yet in its ancestors); "
			       "plan the change in two rounds",
			       ch[i].cgroup, a);
			return -EDEADLK;
		}
		r = emit_cpus(pl, i, NP_STEP_CPUS_YIELD, &t);
		if (r < 0)
			return r;
	}
	return 0;
}

/* i's widen adds no CPU that a conflicting cgroup holds now; else *blocker
 * is one that does. */
static bool widen_ready(const struct planner *pl, int i, int *blocker)
{
	np_cpuset w;

	np_cpuset_or(&w, &pl->cur[i], &pl->ch[i].new_cpus);
	for (int j = 0; j < pl->n; j++)
		if (conflict(pl, i, j) && np_cpuset_intersects(&w, &pl->cur[j])) {
			*blocker = j;
			return false;
		}
	return true;
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

static int deadlock(struct planner *pl, const bool *pending)
{
	const struct np_cgroup_change *ch = pl->ch;
	int first = -1, blocker = -1;
	char a[160];
	np_cpuset w;

	for (int i = 0; i < pl->n; i++) {
		bool waits_for_ancestor = false;

		if (!pending[i])
			continue;
		for (int j = 0; j < pl->n; j++)
			if (pending[j] && is_ancestor(ch[j].cgroup, ch[i].cgroup))
				waits_for_ancestor = true;
		if (!waits_for_ancestor &&
		    (first < 0 || widen_before(pl, i, first)))
			first = i;
	}
	if (first >= 0)
		widen_ready(pl, first, &blocker);
	if (first < 0 || blocker < 0) {
		cg_err(pl->err, pl->errlen, "no safe order for the widen phase");
		return -EDEADLK;
	}
	np_cpuset_or(&w, &pl->cur[first], &ch[first].new_cpus);
	np_cpuset_and(&w, &w, &pl->cur[blocker]);
	cg_fmt_cpus(&w, a, sizeof(a));
	cg_err(pl->err, pl->errlen,
	       "no safe order: %s %s needs CPUs %s still held by %s %s, which "
	       "waits in turn; plan the change in two rounds",
	       kind_name(ch[first].kind), ch[first].cgroup, a,
	       kind_name(ch[blocker].kind), ch[blocker].cgroup);
	return -EDEADLK;
}

static bool has_managed_descendant(const struct planner *pl, int i)
{
	for (int j = 0; j < pl->n; j++)
		if (pl->cm[j] && is_ancestor(pl->ch[i].cgroup, pl->ch[j].cgroup))
			return true;
	return false;
}

/* Phase 3: widen (current ∪ new) top-down, each write once it is safe. */
static int widen(struct planner *pl)
{
	const struct np_cgroup_change *ch = pl->ch;
	bool *pending;
	int left = 0, r = 0;

	pending = calloc((size_t)(pl->n > 0 ? pl->n : 1), sizeof(*pending));
	if (!pending) {
		cg_err(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < pl->n; i++) {
		pending[i] = pl->cm[i] &&
			     !np_cpuset_subset(&ch[i].new_cpus, &pl->cur[i]);
		left += pending[i];
	}
	while (left > 0) {
		int best = -1, blocker;
		np_cpuset w;

		for (int i = 0; i < pl->n; i++) {
			bool ok = pending[i];

			for (int j = 0; ok && j < pl->n; j++)
				if (pending[j] &&
				    is_ancestor(ch[j].cgroup, ch[i].cgroup))
					ok = false;
			if (ok && widen_ready(pl, i, &blocker) &&
			    (best < 0 || widen_before(pl, i, best)))
				best = i;
		}
		if (best < 0) {
			r = deadlock(pl, pending);
			goto cleanup;
		}
		np_cpuset_or(&w, &pl->cur[best], &ch[best].new_cpus);
		r = emit_cpus(pl, best, NP_STEP_CPUS_WIDEN, &w);
		if (r < 0)
			goto cleanup;
		pending[best] = false;
		left--;
		/* An exclusive full move (old ∩ new = ∅) still holds its old
		 * CPUs, which others may be waiting for: narrow at once,
		 * unless descendants must narrow first (phase 4 then). */
		if (ch[best].kind == NP_CGROUP_EXCLUSIVE &&
		    !np_cpuset_equal(&pl->cur[best], &ch[best].new_cpus) &&
		    !has_managed_descendant(pl, best)) {
			r = emit_cpus(pl, best, NP_STEP_CPUS_NARROW,
				      &ch[best].new_cpus);
			if (r < 0)
				goto cleanup;
		}
	}
cleanup:
	free(pending);
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
	free(plan->steps);
	memset(plan, 0, sizeof(*plan));
}

int np_cgroup_plan_build(struct np_cgroup_plan *plan,
			 const struct np_cgroup_change *changes, int n,
			 char *err, size_t errlen)
{
	struct planner pl = {
		.ch = changes, .n = n, .plan = plan, .err = err, .errlen = errlen
	};
	size_t un = (size_t)(n > 0 ? n : 1);
	int r;

	memset(plan, 0, sizeof(*plan));
	if (n < 0 || (n > 0 && !changes)) {
		cg_err(err, errlen, "invalid change list");
		return -EINVAL;
	}
	pl.depth = calloc(un, sizeof(*pl.depth));
	pl.order = calloc(un, sizeof(*pl.order));
	pl.nested = calloc(un * un, 1);
	pl.cm = calloc(un, sizeof(*pl.cm));
	pl.mm = calloc(un, sizeof(*pl.mm));
	pl.cur = calloc(un, sizeof(*pl.cur));
	pl.curm = calloc(un, sizeof(*pl.curm));
	plan->cgroups = calloc(un, sizeof(*plan->cgroups));
	if (!pl.depth || !pl.order || !pl.nested || !pl.cm || !pl.mm ||
	    !pl.cur || !pl.curm || !plan->cgroups) {
		cg_err(err, errlen, "out of memory");
		r = -ENOMEM;
		goto cleanup;
	}
	r = validate(&pl);
	if (r < 0)
		goto cleanup;
	for (int i = 0; i < n; i++) {
		plan->cgroups[i] = strdup(changes[i].cgroup);
		if (!plan->cgroups[i]) {
			cg_err(err, errlen, "out of memory");
			r = -ENOMEM;
			goto cleanup;
		}
		plan->ncgroups++;
	}

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
	/* 2. release / yield, bottom-up */
	r = release_and_yield(&pl);
	if (r < 0)
		goto cleanup;
	/* 3. widen, top-down, when safe */
	r = widen(&pl);
	if (r < 0)
		goto cleanup;
	/* 4. cpus narrow, bottom-up */
	sort_by_depth(&pl, false);
	for (int k = 0; k < n; k++) {
		int i = pl.order[k];

		if (pl.cm[i] && !np_cpuset_equal(&pl.cur[i], &changes[i].new_cpus)) {
			r = emit_cpus(&pl, i, NP_STEP_CPUS_NARROW,
				      &changes[i].new_cpus);
			if (r < 0)
				goto cleanup;
		}
	}
	/* 5. mems narrow, bottom-up */
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
	free(pl.depth);
	free(pl.order);
	free(pl.nested);
	free(pl.cm);
	free(pl.mm);
	free(pl.cur);
	free(pl.curm);
	if (r < 0)
		np_cgroup_plan_free(plan);
	return r;
}

int np_cgroup_step_describe(const struct np_cgroup_plan *plan, int i,
			    char *buf, size_t len)
{
	const struct np_cgroup_step *s;
	char set[256];
	int n;

	if (i < 0 || i >= plan->n)
		return snprintf(buf, len, "step %d out of range", i);
	s = &plan->steps[i];
	if (s->file == NP_CGROUP_CPUS)
		cg_fmt_cpus(&s->cpus, set, sizeof(set));
	else
		cg_fmt_mems(s->mems, set, sizeof(set));
	n = snprintf(buf, len, "%s %s=%s (%s)", plan->cgroups[s->change],
		     s->file == NP_CGROUP_CPUS ? "cpuset.cpus" : "cpuset.mems",
		     set, np_cgroup_why_name(s->why));
	if (n > 0 && len && (size_t)n >= len)
		n = (int)len - 1;
	return n;
}
