// SPDX-License-Identifier: Apache-2.0
/*
 * What the daemon counts for /metrics (daemon/serve/metrics.h): the buckets of
 * its histograms and an observation added to one, and rejections counted
 * by the resource that was short. Rendered by metrics_render.c.
 */
#include "daemon/serve/metrics.h"

#include <stdio.h>
#include <string.h>

const double np_hist_admission_le[NP_HIST_BUCKETS] = {
	0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025,
	0.005,	 0.01,	   0.025,   0.05,   0.1,     0.25,   0.5,   1};
const double np_hist_reconcile_le[NP_HIST_BUCKETS] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
	0.05,	0.1,	 0.25,	 0.5,	1,     2.5,   5,    10};

void np_hist_add(struct np_hist *h, const double *le, double seconds)
{
	int i = 0;

	while (i < NP_HIST_BUCKETS && seconds > le[i])
		i++;
	if (i < NP_HIST_BUCKETS)
		h->bucket[i]++;
	else
		h->inf++;
	h->count++;
	h->sum += seconds;
}

static struct np_rej_count *rej_find(struct np_rej_count *t, const char *r)
{
	for (int i = 0; i < NP_REJ_RESOURCES && t[i].resource[0]; i++)
		if (!strcmp(t[i].resource, r))
			return &t[i];
	return NULL;
}

void np_rej_count_add(struct np_rej_count *t, const char *resource)
{
	struct np_rej_count *e;
	int used = 0;

	if (!resource || !*resource)
		resource = "other";
	while (used < NP_REJ_RESOURCES && t[used].resource[0])
		used++;
	e = rej_find(t, resource);
	/* a new name while one entry is left: it goes to "other" */
	if (!e && used >= NP_REJ_RESOURCES - 1) {
		resource = "other";
		e = rej_find(t, resource);
	}
	if (!e) {
		e = &t[used];
		snprintf(e->resource, sizeof(e->resource), "%s", resource);
	}
	e->n++;
}
