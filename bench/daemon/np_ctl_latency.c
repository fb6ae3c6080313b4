// SPDX-License-Identifier: Apache-2.0
/*
 * Admission and release latency through a running numaplaced, as a client
 * sees it: request sent on the control socket -> answer read (the daemon
 * saves the state durably and applies the placement before it answers).
 *
 *   np-ctl-latency SOCKET N [QOS [CPU]]
 *
 * Admits "lat-bench" (QOS, default LSE; CPU, default "1") and releases it,
 * N times, one connection per request, and prints
 *   admit   n N p50_us X p99_us Y max_us Z
 *   release n N p50_us X p99_us Y max_us Z
 * Exit 0 when every request was answered "ok".
 */
#include "numaplace/ctl.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp);
	int i99 = (int)(0.99 * (n - 1) + 0.5);
	printf("%-7s n %d p50_us %.0f p99_us %.0f max_us %.0f\n", what, n,
	       v[n / 2], v[i99], v[n - 1]);
}

static int call(const char *sock, json_t *req, double *us)
{
	char err[512];
	json_t *resp = NULL;
	double t0 = now_us();
	int r = np_ctl_call(sock, req, &resp, err, sizeof(err));
	*us = now_us() - t0;
	if (r == 0 && (r = np_ctl_check(resp, err, sizeof(err))) == 0) {
		json_t *d = json_object_get(resp, "decision");
		json_t *a = d ? json_object_get(d, "admitted") : NULL;
		if (a && !json_is_true(a)) {
			snprintf(err, sizeof(err), "rejected: %s",
				 json_string_value(json_object_get(d, "reason")));
			r = -1;
		}
	}
	if (r)
		fprintf(stderr, "np-ctl-latency: %s\n", err);
	json_decref(resp);
	return r;
}

int main(int argc, char **argv)
{
	if (argc < 3 || atoi(argv[2]) <= 0) {
		fprintf(stderr, "usage: np-ctl-latency SOCKET N [QOS [CPU]]\n");
		return 2;
	}
	const char *sock = argv[1], *qos = argc > 3 ? argv[3] : "LSE",
		   *cpu = argc > 4 ? argv[4] : "1";
	int n = atoi(argv[2]);
	double *adm = calloc((size_t)n, sizeof(double)),
	       *rel = calloc((size_t)n, sizeof(double));
	json_t *a = json_pack("{s:s,s:{s:s,s:s,s:s,s:[{s:s,s:s}]}}", "op",
			      "admit", "spec", "name", "lat-bench", "cgroup",
			      "lat-bench", "qos", qos, "containers", "name",
			      "m", "cpu", cpu);
	json_t *r = json_pack("{s:s,s:s}", "op", "release", "name",
			      "lat-bench");
	int rc = 0;

	if (!adm || !rel || !a || !r)
		return 1;
	for (int i = 0; i < n && !rc; i++)
		rc = call(sock, a, &adm[i]) || call(sock, r, &rel[i]);
	if (!rc) {
		report("admit", adm, n);
		report("release", rel, n);
	}
	json_decref(a);
	json_decref(r);
	free(adm);
	free(rel);
	return rc ? 1 : 0;
}
