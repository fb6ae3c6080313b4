// SPDX-License-Identifier: Apache-2.0
/*
 * Admission latency (hints + merge + take + state update) on large
 * topologies: p50 / p99 over a churn of admissions and releases. Prints
 * figures; asserts nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "figure.h"
#include "numaplace/admit.h"
#include "topo_gen.h"

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void run(const char *label, struct np_topology *t, const char *tm,
		int max_cpus)
{
	struct np_node_policy p;
	struct np_node_state st;
	struct np_workload_req w;
	struct np_container_req wc;
	char cgroup[32];
	struct np_decision d;
	json_t *pj;
	char err[256];
	enum { N = 4000 };
	static double lat[N];
	unsigned seed = 42;
	int admitted = 0, rejected = 0, n = 0;

	pj = json_pack("{s:s,s:i,s:s}", "cpu_policy", "static", "reserved_cpus",
		       2, "topology_policy", tm);
	if (np_policy_from_json(&p, pj, "policy", err, sizeof(err)) ||
	    np_state_init(&st, t, &p, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", label, err);
		exit(1);
	}
	json_decref(pj);
	for (int i = 0; i < N; i++) {
		double t0;
		int r;
		memset(&w, 0, sizeof(w));
		memset(&wc, 0, sizeof(wc));
		w.c = &wc;
		w.cgroup = cgroup;
		snprintf(w.name, sizeof(w.name), "w%d", i);
		snprintf(cgroup, sizeof(cgroup), "w%d", i);
		w.qos = i % 3 == 0 ? NP_QOS_LSE : NP_QOS_GUARANTEED;
		w.ncontainers = 1;
		w.c[0].name = "main";
		w.c[0].cpu_milli = 1000 * (1 + (int)(rand_r(&seed) % max_cpus));
		w.c[0].memory = (1ULL << 30) * (1 + rand_r(&seed) % 4);
		/* Keep the node about two-thirds full: release at random. */
		while (st.nworkloads && st.nworkloads * max_cpus / 2 >
						t->ncpus * 2 / 3)
			np_release(&st,
				   st.w[rand_r(&seed) % st.nworkloads].req.name);
		t0 = now_us();
		r = np_admit(&st, &w, &d, err, sizeof(err));
		lat[n++] = now_us() - t0;
		if (r) {
			fprintf(stderr, "%s: %s\n", label, err);
			exit(1);
		}
		d.admitted ? admitted++ : rejected++;
	}
	qsort(lat, (size_t)n, sizeof(double), cmp_d);
	printf("%-44s %5d cpus %3d nodes  p50 %8.1f us  p99 %8.1f us  max "
	       "%8.1f us  (%d admitted, %d rejected)\n",
	       label, t->ncpus, t->nnuma, lat[n / 2], lat[n * 99 / 100],
	       lat[n - 1], admitted, rejected);
	{
		char name[160];
		snprintf(name, sizeof(name), "admission p99 (bench_admit), %s",
			 label);
		bench_figure(name, lat[n * 99 / 100], "us",
			     t->nnuma >= 64 ? 200 : 30);
	}
	np_state_free(&st);
}

int main(void)
{
	struct np_topology *a = np_test_topology(2, 4, 16, 2, true, 64ULL << 30);
	struct np_topology *b = np_test_topology(4, 4, 14, 2, true, 64ULL << 30);
	struct np_topology *c = np_test_topology(8, 8, 8, 2, true, 16ULL << 30);

	printf("admission latency: np_admit() = hints + merge + take + state "
	       "update; 4000 admissions each, random 1..N CPUs + memory, "
	       "releases keep the node ~2/3 full\n");
	run("2 sockets, 8 NUMA, 256 threads, restricted", a, "restricted", 16);
	run("2 sockets, 8 NUMA, 256 threads, best-effort", a, "best-effort", 40);
	run("4 sockets, 16 NUMA, 448 threads, restricted", b, "restricted", 16);
	run("4 sockets, 16 NUMA, 448 threads, best-effort", b, "best-effort",
	    40);
	run("8 sockets, 64 NUMA, 1024 threads, restricted", c, "restricted", 16);
	run("8 sockets, 64 NUMA, 1024 threads, best-effort", c, "best-effort",
	    40);
	printf("targets (issue 14): p99 < 30 us at 8 and 16 nodes, < 200 us "
	       "at 64 nodes\n");
	np_topology_free(a);
	np_topology_free(b);
	np_topology_free(c);
	return 0;
}
