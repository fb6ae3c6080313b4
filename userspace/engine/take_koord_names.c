// SPDX-License-Identifier: Apache-2.0
/*
 * Koordinator's policy names (numaplace/take.h): the bind policy, the
 * exclusive policy and the NUMA strategy of a request, parsed and named.
 * Apart from the accumulator (take_koord.c), which explain_trace.c's
 * trace calls, so that naming a policy does not call back into it.
 */
#include "numaplace/error.h"
#include "numaplace/names.h"
#include "numaplace/take.h"

#include <errno.h>
#include <string.h>

static const char *const bind_names[] = {
    [NP_BIND_DEFAULT] = "Default",
    [NP_BIND_FULL_PCPUS] = "FullPCPUs",
    [NP_BIND_SPREAD_BY_PCPUS] = "SpreadByPCPUs",
};

static const char *const excl_names[] = {
    [NP_EXCL_NONE] = "None",
    [NP_EXCL_PCPU_LEVEL] = "PCPULevel",
    [NP_EXCL_NUMA_NODE_LEVEL] = "NUMANodeLevel",
};

static const char *const strategy_names[] = {
    [NP_NUMA_MOST_ALLOCATED] = "MostAllocated",
    [NP_NUMA_LEAST_ALLOCATED] = "LeastAllocated",
    [NP_NUMA_DISTRIBUTE_EVENLY] = "DistributeEvenly",
};

/*
 * A name of names[] (or the empty string, which means empty_means) as its
 * index; -EINVAL when unknown.
 */
static int koord_name_find(const char *const *names, int n, const char *s,
			   int empty_means)
{
	int i;

	if (s && !*s)
		return empty_means;
	i = np_name_find(names, n, s);
	return i < 0 ? -EINVAL : i;
}

#define KOORD_NAME_FIND(tab, s, empty)                                         \
	koord_name_find((tab), NP_NAMES_LEN(tab), (s), (empty))
#define KOORD_NAME_OF(tab, v)                                                  \
	np_name_of((tab), NP_NAMES_LEN(tab), (int)(v), "unknown")

int np_bind_policy_parse(const char *s, enum np_bind_policy *out)
{
	/* An empty policy is Default, as in the pod annotation. */
	int i = KOORD_NAME_FIND(bind_names, s, NP_BIND_DEFAULT);

	if (i < 0)
		return i;
	*out = (enum np_bind_policy)i;
	return 0;
}

int np_exclusive_policy_parse(const char *s, enum np_exclusive_policy *out)
{
	/* "" and the proposal's "Default" mean no exclusivity. */
	int i = s && !strcmp(s, "Default")
		    ? NP_EXCL_NONE
		    : KOORD_NAME_FIND(excl_names, s, NP_EXCL_NONE);

	if (i < 0)
		return i;
	*out = (enum np_exclusive_policy)i;
	return 0;
}

int np_numa_strategy_parse(const char *s, enum np_numa_strategy *out)
{
	/* Koordinator's default strategy is MostAllocated. */
	int i = KOORD_NAME_FIND(strategy_names, s, NP_NUMA_MOST_ALLOCATED);

	if (i < 0)
		return i;
	*out = (enum np_numa_strategy)i;
	return 0;
}

const char *np_bind_policy_name(enum np_bind_policy p)
{
	return KOORD_NAME_OF(bind_names, p);
}

const char *np_exclusive_policy_name(enum np_exclusive_policy p)
{
	return KOORD_NAME_OF(excl_names, p);
}

const char *np_numa_strategy_name(enum np_numa_strategy s)
{
	return KOORD_NAME_OF(strategy_names, s);
}
