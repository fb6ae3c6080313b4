// SPDX-License-Identifier: Apache-2.0
/* The plan executor: one write per step, stop at the first failure, read
 * back the effective set after each file's final write. */
#include "cgroup_internal.h"

#include <stdio.h>

int np_cgroup_plan_apply(const struct np_cgroup_root *root,
			 const struct np_cgroup_plan *plan, int *failed_step,
			 char *err, size_t errlen)
{
	char msg[1024], desc[320];
	int partial = -1;

	if (failed_step)
		*failed_step = -1;
	for (int i = 0; i < plan->n; i++) {
		const struct np_cgroup_step *s = &plan->steps[i];
		int r;

		msg[0] = '\0';
		r = cg_write_set(root, plan->cgroups[s->change], s->file,
				 &s->cpus, s->mems, s->final, NULL, NULL, msg,
				 sizeof(msg));
		if (r == 0 || (r == NP_CGROUP_PARTIAL && partial >= 0))
			continue;
		np_cgroup_step_describe(plan, i, desc, sizeof(desc));
		np_errmsg(err, errlen, "step %d/%d (%s): %s", i + 1, plan->n, desc,
		       msg);
		if (failed_step)
			*failed_step = i;
		if (r < 0)
			return r;
		partial = i; /* keep going: the rest is still safe to apply */
	}
	if (partial >= 0 && failed_step)
		*failed_step = partial;
	return partial >= 0 ? NP_CGROUP_PARTIAL : 0;
}
