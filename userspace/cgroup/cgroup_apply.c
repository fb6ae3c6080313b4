// SPDX-License-Identifier: Apache-2.0
/*
 * The plan executor: one write per step, read back the effective set after
 * each file's final write. A failed write leaves its cgroup holding what it
 * held: its later steps are skipped, and so is any step that would give
 * another cgroup one of those CPUs (no CPU in two sets that must not share
 * it); the rest is applied, so one stuck cgroup does not stop the others.
 */
#include "cgroup_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int np_cgroup_plan_apply(const struct np_cgroup_root *root,
			 const struct np_cgroup_plan *plan, int *failed_step,
			 char *err, size_t errlen)
{
	char msg[1024], desc[320];
	int partial = -1, first = 0, held_back = 0;
	size_t nc = (size_t)(plan->ncgroups > 0 ? plan->ncgroups : 1);
	static const np_cpuset none; /* a plan without held: nothing known */
	/* what each cgroup holds: one of plan->sets */
	const np_cpuset **held = calloc(nc, sizeof(*held));
	np_cpuset stuck;
	bool *failed = calloc(nc, sizeof(*failed));
	/* the last set written, formatted once: steps that write the same
	 * set share it (a shared pool's change: one set, thousands of
	 * cgroups) */
	const np_cpuset *shown = NULL;
	char *text = NULL;

	if (failed_step)
		*failed_step = -1;
	if (!held || !failed) {
		free(held);
		free(failed);
		np_errmsg(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < plan->ncgroups; i++)
		held[i] = plan->held ? plan->held[i] : &none;
	np_cpuset_zero(&stuck);
	for (int i = 0; i < plan->n; i++) {
		const struct np_cgroup_step *s = &plan->steps[i];
		bool cpus = s->file == NP_CGROUP_CPUS;
		int r;

		if (failed[s->change])
			continue;
		if (cpus && plan->held) {
			np_cpuset add;
			np_cpuset_andnot(&add, s->cpus, held[s->change]);
			if (np_cpuset_intersects(&add, &stuck)) {
				failed[s->change] = true;
				np_cpuset_or(&stuck, &stuck, held[s->change]);
				held_back++;
				continue;
			}
		}
		msg[0] = '\0';
		if (cpus && s->cpus != shown) {
			free(text);
			/* NULL without memory: cg_write_set says so */
			text = np_cpuset_empty(s->cpus) ? NULL
							: np_cpuset_str(s->cpus);
			shown = text ? s->cpus : NULL;
		}
		r = cg_write_set(root, plan->cgroups[s->change], s->file,
				 s->cpus, cpus ? text : NULL, s->mems, s->final,
				 NULL, NULL, msg, sizeof(msg));
		if (r == 0 || r == NP_CGROUP_PARTIAL) {
			if (cpus)
				held[s->change] = s->cpus; /* the file holds it */
			if (r == 0 || partial >= 0)
				continue;
		}
		if (r < 0) {
			failed[s->change] = true;
			np_cpuset_or(&stuck, &stuck, held[s->change]);
			if (first)
				continue;
			first = r;
		} else {
			partial = i; /* keep going: the rest is still safe */
			if (first)
				continue;
		}
		np_cgroup_step_describe(plan, i, desc, sizeof(desc));
		np_errmsg(err, errlen, "step %d/%d (%s): %s", i + 1, plan->n, desc,
			  msg);
		if (failed_step)
			*failed_step = i;
	}
	free(held);
	free(failed);
	free(text);
	if (first && held_back) {
		size_t l = strlen(err);
		if (l < errlen)
			snprintf(err + l, errlen - l,
				 "; %d later write(s) held back: they would give "
				 "CPUs a failed cgroup still holds",
				 held_back);
	}
	if (first)
		return first;
	if (partial >= 0 && failed_step)
		*failed_step = partial;
	return partial >= 0 ? NP_CGROUP_PARTIAL : 0;
}
