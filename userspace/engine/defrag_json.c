// SPDX-License-Identifier: Apache-2.0
/* The JSON form of a defragmentation plan (numaplace/defrag.h). */
#include "numaplace/defrag.h"
#include "numaplace/cleanup.h"

#include <stdlib.h>

static json_t *place_json(const np_cpuset *cpus, np_nodemask mems)
{
	_cleanup_free_ char *c = np_cpuset_str(cpus);
	char m[256];

	np_nodemask_format(mems, m, sizeof(m));
	return json_pack("{s:s,s:s}", "cpus", c ? c : "", "mems", m);
}

static json_t *moves_json(const struct np_defrag_plan *p)
{
	json_t *a = json_array();

	for (int i = 0; a && i < p->nmoves; i++) {
		const struct np_defrag_move *m = &p->moves[i];
		json_array_append_new(
			a, json_pack("{s:s,s:s,s:o,s:o,s:b}", "workload",
				     m->workload, "class",
				     np_qos_name(m->qos_class), "from",
				     place_json(&m->from_cpus, m->from_mems),
				     "to", place_json(&m->to_cpus, m->to_mems),
				     "mems_change", m->from_mems != m->to_mems));
	}
	return a;
}

json_t *np_defrag_plan_to_json(const struct np_defrag_plan *p)
{
	json_t *kept = json_array(), *o;

	for (int i = 0; kept && i < p->nkept; i++)
		json_array_append_new(kept, json_pack("{s:s,s:s}", "workload",
						      p->kept[i].workload, "why",
						      p->kept[i].why));
	o = json_pack("{s:s,s:i,s:b,s:b,s:o,s:i,s:I,s:o}", "workload",
		      p->workload, "max_moves", p->max_moves, "needed",
		      p->needed, "found", p->found, "moves", moves_json(p),
		      "candidates", p->ncandidates, "tried",
		      (json_int_t)p->tried, "kept", kept);
	if (!o)
		return NULL;
	if (p->needed)
		json_object_set_new(o, "rejected",
				    json_pack("{s:s,s:s}", "reason", p->reason,
					      "resource", p->resource));
	if (!p->needed || p->found)
		json_object_set_new(o, "admits", place_json(&p->cpus, p->mems));
	else
		json_object_set_new(o, "why", json_string(p->why));
	return o;
}
