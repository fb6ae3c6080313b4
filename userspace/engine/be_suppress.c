// SPDX-License-Identifier: Apache-2.0
/*
 * BE suppression (see numaplace/be_suppress.h): the budget of the BE pool
 * from the node's usages, and the CPUs of that size. Implemented from the
 * description of Koordinator's koordlet cpusuppress plugin (budget formula,
 * floor of 2 CPUs, growth limit of 10% of the CPUs per round, LSR/LS split
 * in proportion, (NUMA, socket) buckets with SMT pairs first).
 */
#include "numaplace/be_suppress.h"
#include "numaplace/error.h"
#include "numaplace/names.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const policy_names[] = {
    [NP_SUPPRESS_NONE] = "none",
    [NP_SUPPRESS_CPUSET] = "cpuset",
    [NP_SUPPRESS_CFS_QUOTA] = "cfsQuota",
};

int np_suppress_policy_parse(const char *s, enum np_suppress_policy *out)
{
	int i = NP_NAME_FIND(policy_names, s);

	if (i < 0)
		return -EINVAL;
	*out = (enum np_suppress_policy)i;
	return 0;
}

const char *np_suppress_policy_name(enum np_suppress_policy p)
{
	return NP_NAME_OF(policy_names, p);
}

static int fail(char *err, size_t errlen, const char *field, const char *msg)
{
	if (err && errlen)
		snprintf(err, errlen, "%s: %s", field, msg);
	return -EINVAL;
}

static int check_in(const struct np_suppress_in *in, char *err, size_t errlen)
{
	if (in->capacity < 1 || in->capacity > NP_MAX_CPUS)
		return fail(err, errlen, "capacity", "expected 1..4096 CPUs");
	if (in->pool < 0 || in->pool > in->capacity)
		return fail(err, errlen, "pool", "expected 0..capacity CPUs");
	if (in->threshold < 0 || in->threshold > 100)
		return fail(err, errlen, "cpuSuppressThresholdPercent",
			    "expected a percent 0..100");
	if (in->min_cpus < 0 || in->min_cpus > in->capacity)
		return fail(err, errlen, "cpuSuppressMinCPUs",
			    "expected 0..capacity CPUs");
	if (in->u.node < 0 || in->u.non_be < 0 || in->u.be < 0 ||
	    in->u.host_apps < 0)
		return fail(err, errlen, "usage", "a usage is negative");
	/* a period's usage cannot exceed a few times the node's CPUs
	 * (rounding); beyond that it is garbage, and it keeps the sums
	 * below from overflowing */
	if (in->u.node > (int64_t)in->capacity * 1000 * 4 ||
	    in->u.non_be > (int64_t)in->capacity * 1000 * 4 ||
	    in->u.be > (int64_t)in->capacity * 1000 * 4 ||
	    in->u.host_apps > (int64_t)in->capacity * 1000 * 4)
		return fail(err, errlen, "usage",
			    "a usage is above 4 x capacity (garbage)");
	return 0;
}

int np_suppress_compute(const struct np_suppress_in *in,
			struct np_suppress_out *out, char *err, size_t errlen)
{
	const struct np_suppress_usage *u = &in->u;
	int64_t step, floor_m, want;
	int r;

	memset(out, 0, sizeof(*out));
	if ((r = check_in(in, err, errlen)))
		return r;
	out->system = u->node - u->non_be - u->be - u->host_apps;
	if (out->system < 0)
		out->system = 0;
	out->budget = (int64_t)in->capacity * 1000 * in->threshold / 100 -
		      u->non_be - u->host_apps - out->system;
	/* growth per period: 10% of the CPUs, at least one */
	step = (int64_t)in->capacity * NP_SUPPRESS_GROWTH_PERCENT / 100;
	if (step < 1)
		step = 1;
	floor_m = (int64_t)(in->min_cpus > NP_SUPPRESS_FLOOR_CPUS
				? in->min_cpus
				: NP_SUPPRESS_FLOOR_CPUS) *
		  1000;
	/* cpuset: whole CPUs, rounded up */
	want = out->budget > floor_m ? out->budget : floor_m;
	want = (want + 999) / 1000;
	if (in->prev_cpus > 0 && want > in->prev_cpus + step) {
		want = in->prev_cpus + step;
		out->growth_limited = true;
	}
	out->cpus = want < in->pool ? (int)want : in->pool;
	/* cfsQuota: the budget as quota, between the floor and the pool */
	want = out->budget > floor_m ? out->budget : floor_m;
	if (want > (int64_t)in->pool * 1000)
		want = (int64_t)in->pool * 1000;
	want = want * NP_SUPPRESS_CFS_PERIOD_US / 1000;
	if (in->prev_quota_us > 0 &&
	    want > in->prev_quota_us + step * NP_SUPPRESS_CFS_PERIOD_US) {
		want = in->prev_quota_us + step * NP_SUPPRESS_CFS_PERIOD_US;
		out->growth_limited = true;
	}
	/* cpu.max takes at least 1000 us */
	out->quota_us = want < 1000 ? 1000 : want;
	return 0;
}

/* One (NUMA node, socket) bucket: its CPUs of the part, sorted by core id
 * then CPU id; used[] marks those taken. */
struct bucket {
	int n, first;
	int *cpu;
	bool *used;
};

static int by_core(const void *a, const void *b, void *topo)
{
	const struct np_topology *t = topo;
	int x = *(const int *)a, y = *(const int *)b;
	int cx = t->cores[t->cpu[x].core].id;
	int cy = t->cores[t->cpu[y].core].id;

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int by_size(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The first core of b with two CPUs not taken: their index j (j, j+1), or
 * -1. */
static int free_pair(const struct bucket *b, const struct np_topology *t)
{
	for (int j = 0; j + 1 < b->n; j++)
		if (!b->used[j] && !b->used[j + 1] &&
		    t->cpu[b->cpu[j]].core == t->cpu[b->cpu[j + 1]].core)
			return j;
	return -1;
}

static int free_one(const struct bucket *b)
{
	for (int j = 0; j < b->n; j++)
		if (!b->used[j])
			return j;
	return -1;
}

/* Round robin over the buckets: pairs while two or more are needed, then
 * single CPUs; a round that takes nothing ends a phase. */
static void spread(const struct np_topology *t, struct bucket *bk, int nb,
		   int need, np_cpuset *out)
{
	int i = 0;

	for (int phase = 0; phase < 2; phase++) {
		int taken_in_round = 0, start = i;
		while (need >= (phase ? 1 : 2)) {
			int j = phase ? free_one(&bk[i]) : free_pair(&bk[i], t);
			if (j >= 0) {
				for (int k = 0; k < (phase ? 1 : 2); k++) {
					bk[i].used[j + k] = true;
					np_cpuset_set(out, bk[i].cpu[j + k]);
				}
				need -= phase ? 1 : 2;
				taken_in_round = 1;
			}
			i = (i + 1) % nb;
			if (i == start) {
				if (!taken_in_round)
					break;
				taken_in_round = 0;
			}
		}
	}
}

/* n CPUs of part into out (as spread). 0 or -ENOMEM. */
static int pick_part(const struct np_topology *t, const np_cpuset *part,
		      int n, np_cpuset *out)
{
	int nb = t->nnuma * t->nsockets, total = np_cpuset_count(part), used = 0;
	struct bucket *bk = calloc((size_t)nb, sizeof(*bk));
	int *cpus = malloc(sizeof(int) * (size_t)(total ? total : 1));
	bool *flags = calloc((size_t)(total ? total : 1), sizeof(bool));
	int k = 0, r = 0;

	if (!bk || !cpus || !flags) {
		r = -ENOMEM;
		goto out;
	}
	if (n <= 0)
		goto out;
	/* bucket sizes, then their slices of cpus[] */
	NP_CPUSET_FOREACH (c, part)
		bk[t->cpu[c].numa * t->nsockets + t->cpu[c].socket].n++;
	for (int b = 0; b < nb; b++) {
		bk[b].cpu = cpus + used;
		bk[b].used = flags + used;
		used += bk[b].n;
		bk[b].n = 0;
		bk[b].first = -1;
	}
	NP_CPUSET_FOREACH (c, part) {
		struct bucket *b =
		    &bk[t->cpu[c].numa * t->nsockets + t->cpu[c].socket];
		if (b->first < 0)
			b->first = c;
		b->cpu[b->n++] = c;
	}
	for (int b = 0; b < nb; b++)
		qsort_r(bk[b].cpu, (size_t)bk[b].n, sizeof(int), by_core,
			(void *)t);
	qsort(bk, (size_t)nb, sizeof(*bk), by_size);
	while (k < nb && bk[k].n)
		k++;
	if (k)
		spread(t, bk, k, n, out);
out:
	free(bk);
	free(cpus);
	free(flags);
	return r;
}

int np_suppress_pick(const struct np_topology *t, const struct np_pools *p,
		     int n, np_cpuset *out)
{
	np_cpuset lsr, ls;
	int nlsr, nls, from_lsr, r;

	np_cpuset_zero(out);
	np_cpuset_and(&lsr, &p->be, &p->exclusive);
	np_cpuset_andnot(&ls, &p->be, &p->exclusive);
	nlsr = np_cpuset_count(&lsr);
	nls = np_cpuset_count(&ls);
	if (n > nlsr + nls)
		n = nlsr + nls;
	if (n <= 0)
		return 0;
	from_lsr = (int)((int64_t)n * nlsr / (nlsr + nls));
	if (n - from_lsr > nls)
		from_lsr = n - nls;
	if ((r = pick_part(t, &ls, n - from_lsr, out)))
		return r;
	return pick_part(t, &lsr, from_lsr, out);
}
