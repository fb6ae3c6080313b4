// SPDX-License-Identifier: Apache-2.0
/*
 * The cpuset write planner's checks of its change list (paths, kinds,
 * empty sets, overlapping targets) and the indexes its phases use:
 * ancestors among the changes, the exclusive ones, and what conflicting
 * cgroups are to get (claims).  Pure, no I/O.
 */
#include "cgroup_plan_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The ancestors of each change among the changes: each proper prefix of
 * its path (paths are checked: no empty components) looked up by name. */
static int find_ancestors(struct planner *pl, const struct np_strmap *ix)
{
	const struct np_cgroup_change *ch = pl->ch;
	int total = 0, k = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (int j = 0; j < pl->n; j++) {
			const char *p = ch[j].cgroup, *s;
			char prefix[NP_CGROUP_PATH_MAX];
			long i;

			if (pass)
				pl->anc_start[j] = k;
			for (s = strchr(p + (*p == '/'), '/'); s;
			     s = strchr(s + 1, '/')) {
				size_t len = (size_t)(s - p);
				if (len >= sizeof(prefix))
					break;
				memcpy(prefix, p, len);
				prefix[len] = '\0';
				if (!np_strmap_get(ix, prefix, &i))
					continue;
				if (pass)
					pl->anc_list[k++] = (int)i;
				else
					total++;
			}
		}
		if (!pass) {
			pl->anc_list = calloc((size_t)total + 1,
					      sizeof(*pl->anc_list));
			if (!pl->anc_list)
				return -ENOMEM;
		}
	}
	pl->anc_start[pl->n] = k;
	return 0;
}

/* ix: path -> index, filled here */
static int validate_ix(struct planner *pl, struct np_strmap *ix)
{
	const struct np_cgroup_change *ch = pl->ch;
	char a[160], pe[256];
	int r;

	for (int i = 0; i < pl->n; i++) {
		/* "/x": from the hierarchy root (see cg_open) */
		r = np_cgroup_path_check(ch[i].cgroup + (ch[i].cgroup[0] == '/'),
					 pe, sizeof(pe));
		if (r < 0) {
			np_errmsg(pl->err, pl->errlen, "change %d: %s", i, pe);
			return r;
		}
		if (!ch[i].old_cpus || !ch[i].new_cpus) {
			np_errmsg(pl->err, pl->errlen, "%s: %s cpus not given",
				  ch[i].cgroup, ch[i].old_cpus ? "new" : "old");
			return -EINVAL;
		}
		if (ch[i].kind != NP_CGROUP_SHARED &&
		    ch[i].kind != NP_CGROUP_EXCLUSIVE) {
			np_errmsg(pl->err, pl->errlen, "%s: invalid kind %d",
			       ch[i].cgroup, (int)ch[i].kind);
			return -EINVAL;
		}
		if ((ch[i].best_effort && ch[i].kind != NP_CGROUP_SHARED) ||
		    (ch[i].lends_to_be && ch[i].kind != NP_CGROUP_EXCLUSIVE)) {
			np_errmsg(pl->err, pl->errlen,
				  "%s: %s is for %s cgroups", ch[i].cgroup,
				  ch[i].best_effort ? "best_effort" : "lends_to_be",
				  ch[i].best_effort ? "shared" : "exclusive");
			return -EINVAL;
		}
		if (np_strmap_get(ix, ch[i].cgroup, NULL)) {
			np_errmsg(pl->err, pl->errlen,
			       "%s appears twice in the change list",
			       ch[i].cgroup);
			return -EINVAL;
		}
		if (np_strmap_put(ix, ch[i].cgroup, i)) {
			np_errmsg(pl->err, pl->errlen, "out of memory");
			return -ENOMEM;
		}
		pl->cm[i] = !np_cpuset_empty(ch[i].new_cpus);
		if (!pl->cm[i] && !np_cpuset_empty(ch[i].old_cpus)) {
			cg_fmt_cpus(ch[i].old_cpus, a, sizeof(a));
			np_errmsg(pl->err, pl->errlen,
			       "%s: new cpus empty (old %s): an empty "
			       "cpuset.cpus means 'inherit the parent's CPUs'; "
			       "remove the cgroup instead",
			       ch[i].cgroup, a);
			return -EINVAL;
		}
		pl->mm[i] = ch[i].new_mems != 0;
		if (!pl->mm[i] && ch[i].old_mems) {
			np_errmsg(pl->err, pl->errlen,
			       "%s: new mems empty: an empty cpuset.mems means "
			       "'inherit the parent's nodes'",
			       ch[i].cgroup);
			return -EINVAL;
		}
		pl->depth[i] = path_depth(ch[i].cgroup);
		pl->cur[i] = ch[i].old_cpus;
		pl->curm[i] = ch[i].old_mems;
	}
	if ((r = find_ancestors(pl, ix))) {
		np_errmsg(pl->err, pl->errlen, "out of memory");
		return r;
	}
	for (int i = 0; i < pl->n; i++) {
		pl->order_all[i] = i;
		pl->ver[i] = 1;
		if (ch[i].kind == NP_CGROUP_EXCLUSIVE)
			pl->excl[pl->nexcl++] = i;
	}
	return 0;
}

/*
 * What makes the overlap check and the claims O(n) when few cgroups nest:
 * a cgroup with no ancestor and no descendant among the changes ("solo")
 * conflicts with every other managed exclusive cgroup (and, exclusive
 * itself, with every other managed one), so unions over all of them
 * answer for it.
 */
struct solo_ix {
	bool *solo;
	np_cpuset u_excl; /* new CPUs of the managed exclusive cgroups */
	np_cpuset u_all;  /* new CPUs of every managed cgroup */
	np_cpuset multi;  /* new CPUs of two managed cgroups or more */
};

static int solo_index(const struct planner *pl, struct solo_ix *x)
{
	const struct np_cgroup_change *ch = pl->ch;

	x->solo = malloc(sizeof(*x->solo) * (size_t)(pl->n ? pl->n : 1));
	if (!x->solo)
		return -ENOMEM;
	for (int j = 0; j < pl->n; j++)
		x->solo[j] = pl->anc_start[j] == pl->anc_start[j + 1];
	for (int j = 0; j < pl->n; j++)
		for (int k = pl->anc_start[j]; k < pl->anc_start[j + 1]; k++)
			x->solo[pl->anc_list[k]] = false;
	np_cpuset_zero(&x->u_excl);
	np_cpuset_zero(&x->u_all);
	np_cpuset_zero(&x->multi);
	for (int j = 0; j < pl->n; j++) {
		np_cpuset both;

		if (!pl->cm[j])
			continue;
		np_cpuset_and(&both, &x->u_all, ch[j].new_cpus);
		np_cpuset_or(&x->multi, &x->multi, &both);
		np_cpuset_or(&x->u_all, &x->u_all, ch[j].new_cpus);
		if (ch[j].kind == NP_CGROUP_EXCLUSIVE)
			np_cpuset_or(&x->u_excl, &x->u_excl, ch[j].new_cpus);
	}
	return 0;
}

/* Solo i's target overlaps no conflicting cgroup's: nothing to check. */
static bool solo_clear(const struct planner *pl, const struct solo_ix *x,
		       int i)
{
	const np_cpuset *t = pl->ch[i].new_cpus;

	if (!x->solo[i] || !pl->cm[i])
		return false;
	if (pl->ch[i].kind == NP_CGROUP_SHARED)
		return !np_cpuset_intersects(t, &x->u_excl);
	return !np_cpuset_intersects(t, &x->multi);
}

/* The target state itself must respect exclusivity. */
static int check_overlap(struct planner *pl, const struct solo_ix *x)
{
	const struct np_cgroup_change *ch = pl->ch;
	char a[160], b[160], c[160];

	for (int i = 0; i < pl->n; i++) {
		int nc, k = 0;
		const int *cand;

		if (solo_clear(pl, x, i))
			continue;
		cand = conflict_candidates(pl, i, &nc);
		/* the same pairs (i, j > i) in the same order as all j */
		while (k < nc && cand[k] <= i)
			k++;
		for (; k < nc; k++) {
			int j = cand[k];
			np_cpuset both;

			if (!conflict(pl, i, j) ||
			    !np_cpuset_intersects(ch[i].new_cpus,
						  ch[j].new_cpus))
				continue;
			np_cpuset_and(&both, ch[i].new_cpus, ch[j].new_cpus);
			cg_fmt_cpus(ch[i].new_cpus, a, sizeof(a));
			cg_fmt_cpus(ch[j].new_cpus, b, sizeof(b));
			cg_fmt_cpus(&both, c, sizeof(c));
			np_errmsg(pl->err, pl->errlen,
			       "target sets overlap: %s %s (%s) and %s %s (%s) "
			       "share CPUs %s",
			       kind_name(ch[i].kind), ch[i].cgroup, a,
			       kind_name(ch[j].kind), ch[j].cgroup, b, c);
			return -EINVAL;
		}
	}
	return 0;
}

/*
 * What the cgroups conflicting with i are to get: fixed.  For a solo i,
 * the union over all of them: every exclusive one's for a shared i; every
 * other one's for an exclusive i, which (targets checked) is the union of
 * all but its own.  Not for the pairs that lend and borrow (LSR and the
 * BE pool): those go through conflict() one by one.
 */
static bool solo_union(const struct planner *pl, const struct solo_ix *x,
		       int i, enum np_cgroup_kind kind)
{
	const struct np_cgroup_change *ch = &pl->ch[i];

	return x->solo[i] && ch->kind == kind && !ch->best_effort &&
	       !ch->lends_to_be;
}

static int fill_claims(struct planner *pl, const struct solo_ix *x)
{
	const struct np_cgroup_change *ch = pl->ch;
	int own = 0, k = 0;

	pl->u_excl = x->u_excl;
	np_cpuset_zero(&pl->none);
	for (int i = 0; i < pl->n; i++)
		own += pl->cm[i] && !solo_union(pl, x, i, NP_CGROUP_SHARED);
	pl->claim_own = calloc((size_t)(own ? own : 1), sizeof(np_cpuset));
	if (!pl->claim_own) {
		np_errmsg(pl->err, pl->errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < pl->n; i++) {
		np_cpuset *c;
		const int *cand;
		int nc;

		if (!pl->cm[i]) {
			pl->claim[i] = &pl->none; /* conflicts with nobody */
			continue;
		}
		if (solo_union(pl, x, i, NP_CGROUP_SHARED)) {
			pl->claim[i] = &pl->u_excl;
			continue;
		}
		c = &pl->claim_own[k++];
		pl->claim[i] = c;
		if (solo_union(pl, x, i, NP_CGROUP_EXCLUSIVE)) {
			np_cpuset_andnot(c, &x->u_all, ch[i].new_cpus);
			continue;
		}
		cand = conflict_candidates(pl, i, &nc);
		for (int j = 0; j < nc; j++)
			if (conflict(pl, i, cand[j]))
				np_cpuset_or(c, c, ch[cand[j]].new_cpus);
	}
	return 0;
}

int cg_plan_validate(struct planner *pl)
{
	struct np_strmap ix = {0};
	struct solo_ix x = {0};
	int r = validate_ix(pl, &ix);

	np_strmap_free(&ix);
	if (!r && (r = solo_index(pl, &x)))
		np_errmsg(pl->err, pl->errlen, "out of memory");
	if (!r && !(r = check_overlap(pl, &x)))
		r = fill_claims(pl, &x);
	free(x.solo);
	return r;
}
