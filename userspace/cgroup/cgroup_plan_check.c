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
	char a[160], b[160], c[160], pe[256];
	int r;

	for (int i = 0; i < pl->n; i++) {
		/* "/x": from the hierarchy root (see cg_open) */
		r = np_cgroup_path_check(ch[i].cgroup + (ch[i].cgroup[0] == '/'),
					 pe, sizeof(pe));
		if (r < 0) {
			np_errmsg(pl->err, pl->errlen, "change %d: %s", i, pe);
			return r;
		}
		if (ch[i].kind != NP_CGROUP_SHARED &&
		    ch[i].kind != NP_CGROUP_EXCLUSIVE) {
			np_errmsg(pl->err, pl->errlen, "%s: invalid kind %d",
			       ch[i].cgroup, (int)ch[i].kind);
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
		pl->cm[i] = !np_cpuset_empty(&ch[i].new_cpus);
		if (!pl->cm[i] && !np_cpuset_empty(&ch[i].old_cpus)) {
			cg_fmt_cpus(&ch[i].old_cpus, a, sizeof(a));
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
	/* The target state itself must respect exclusivity. */
	for (int i = 0; i < pl->n; i++) {
		int nc, k = 0;
		const int *cand = conflict_candidates(pl, i, &nc);

		/* the same pairs (i, j > i) in the same order as all j */
		while (k < nc && cand[k] <= i)
			k++;
		for (; k < nc; k++) {
			int j = cand[k];
			np_cpuset both;

			if (!conflict(pl, i, j) ||
			    !np_cpuset_intersects(&ch[i].new_cpus,
						  &ch[j].new_cpus))
				continue;
			np_cpuset_and(&both, &ch[i].new_cpus, &ch[j].new_cpus);
			cg_fmt_cpus(&ch[i].new_cpus, a, sizeof(a));
			cg_fmt_cpus(&ch[j].new_cpus, b, sizeof(b));
			cg_fmt_cpus(&both, c, sizeof(c));
			np_errmsg(pl->err, pl->errlen,
			       "target sets overlap: %s %s (%s) and %s %s (%s) "
			       "share CPUs %s",
			       kind_name(ch[i].kind), ch[i].cgroup, a,
			       kind_name(ch[j].kind), ch[j].cgroup, b, c);
			return -EINVAL;
		}
	}
	/* What the cgroups conflicting with i are to get: fixed. */
	for (int i = 0; i < pl->n; i++) {
		int nc;
		const int *cand = conflict_candidates(pl, i, &nc);
		np_cpuset_zero(&pl->claim[i]);
		for (int k = 0; k < nc; k++)
			if (conflict(pl, i, cand[k]))
				np_cpuset_or(&pl->claim[i], &pl->claim[i],
					     &ch[cand[k]].new_cpus);
	}
	return 0;
}

int cg_plan_validate(struct planner *pl)
{
	struct np_strmap ix = {0};
	int r = validate_ix(pl, &ix);

	np_strmap_free(&ix);
	return r;
}
