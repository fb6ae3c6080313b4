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

/* Workload "w<i>" (cgroup the same) of one container "main". */
static void one_container(struct np_workload_req *w,
			  struct np_container_req *wc, char *cgroup,
			  size_t cglen, int i, enum np_qos qos, int64_t milli)
{
	memset(w, 0, sizeof(*w));
	memset(wc, 0, sizeof(*wc));
	w->c = wc;
	w->cgroup = cgroup;
	snprintf(w->name, sizeof(w->name), "w%d", i);
	snprintf(cgroup, cglen, "w%d", i);
	w->qos = qos;
	w->ncontainers = 1;
	wc->name = "main";
	wc->cpu_milli = milli;
}

/*
 * One pass of the churn from seed 42: N admissions, each timed (lat[i]),
 * on a fresh state. The sequence is the same in every pass.
 */
enum { N_ADMIT = 4000 };

static void run_pass(const char *label, struct np_topology *t, const char *tm,
		     int max_cpus, double *lat, int *admitted, int *rejected)
{
	struct np_node_policy p;
	struct np_node_state st;
	struct np_workload_req w;
	struct np_container_req wc;
	char cgroup[32];
	struct np_decision d;
	json_t *pj;
	char err[256];
	unsigned seed = 42;

	pj = json_pack("{s:s,s:i,s:s}", "cpu_policy", "static", "reserved_cpus",
		       2, "topology_policy", tm);
	if (np_policy_from_json(&p, pj, "policy", err, sizeof(err)) ||
	    np_state_init(&st, t, &p, err, sizeof(err))) {
		fprintf(stderr, "%s: %s\n", label, err);
		exit(1);
	}
	json_decref(pj);
	*admitted = *rejected = 0;
	for (int i = 0; i < N_ADMIT; i++) {
		double t0;
		int r;
		one_container(&w, &wc, cgroup, sizeof(cgroup), i,
			      i % 3 == 0 ? NP_QOS_LSE : NP_QOS_GUARANTEED,
			      1000 * (1 + (int)(rand_r(&seed) % max_cpus)));
		w.c[0].memory = (1ULL << 30) * (1 + rand_r(&seed) % 4);
		/* Keep the node about two-thirds full: release at random. */
		while (st.nworkloads && st.nworkloads * max_cpus / 2 >
						t->ncpus * 2 / 3)
			np_release(&st,
				   st.w[rand_r(&seed) % st.nworkloads]->req.name);
		t0 = now_us();
		r = np_admit(&st, &w, &d, err, sizeof(err));
		lat[i] = now_us() - t0;
		if (r) {
			fprintf(stderr, "%s: %s\n", label, err);
			exit(1);
		}
		d.admitted ? (*admitted)++ : (*rejected)++;
	}
	np_state_free(&st);
}

/*
 * The admission figure is the first pass's p99 (one pass, wall time, as
 * ever). Beside it, each admission's best of PASSES passes of the same
 * sequence: on a shared 2-CPU machine the slowest 1 % of one pass are
 * not the same admissions from one run to the next (of the 40 slowest, 0
 * to 8 were in two runs of 2026-11-29, and the thread's own CPU time
 * (CLOCK_THREAD_CPUTIME_ID) had the same tail as the wall time: the
 * machine's, cache and steal, not preemption), while an admission whose
 * work is slow is slow in every pass. That line is the code's own tail.
 */
enum { PASSES = 3 };

static void run(const char *label, struct np_topology *t, const char *tm,
		int max_cpus)
{
	static double lat[PASSES][N_ADMIT], best[N_ADMIT];
	int admitted = 0, rejected = 0, n = N_ADMIT;
	char name[200];

	for (int k = 0; k < PASSES; k++)
		run_pass(label, t, tm, max_cpus, lat[k], &admitted, &rejected);
	for (int i = 0; i < n; i++) {
		best[i] = lat[0][i];
		for (int k = 1; k < PASSES; k++)
			if (lat[k][i] < best[i])
				best[i] = lat[k][i];
	}
	qsort(lat[0], (size_t)n, sizeof(double), cmp_d);
	qsort(best, (size_t)n, sizeof(double), cmp_d);
	printf("%-44s %5d cpus %3d nodes  p50 %8.1f us  p99 %8.1f us  max "
	       "%8.1f us  (%d admitted, %d rejected); each admission's best "
	       "of %d passes: p50 %.1f us, p99 %.1f us\n",
	       label, t->ncpus, t->nnuma, lat[0][n / 2], lat[0][n * 99 / 100],
	       lat[0][n - 1], admitted, rejected, PASSES, best[n / 2],
	       best[n * 99 / 100]);
	snprintf(name, sizeof(name), "admission p99 (bench_admit), %s", label);
	bench_figure(name, lat[0][n * 99 / 100], "us",
		     t->nnuma >= 64 ? 200 : 30);
	snprintf(name, sizeof(name),
		 "admission p99 (bench_admit), %s, each admission's best of "
		 "%d passes",
		 label, PASSES);
	bench_figure(name, best[n * 99 / 100], "us", t->nnuma >= 64 ? 200 : 30);
}

/*
 * At scale, the exclusive ones: ROUNDS times an LSE workload of the node's
 * (at random, wherever it is in the array) released, then a new LSE
 * workload of 2 CPUs admitted in its room, both timed; then, untimed, the
 * new one released and the first put back where it was, so that every
 * round sees the same state. A release's floor is the admission's p99 of
 * the same run (issue 32: release <= 2 x admission).
 */
static void exclusive_churn(struct np_node_state *st)
{
	enum { ROUNDS = 1000 };
	static double adm[ROUNDS], rel[ROUNDS];
	struct np_workload_req w;
	struct np_container_req wc;
	struct np_decision d;
	char cgroup[32], err[256], name[NP_NAME_MAX];
	unsigned seed = 11;
	int n = 0, admitted = 0;

	for (int k = 0; k < 1000000 && n < ROUNDS; k++) {
		int i = (int)(rand_r(&seed) % (unsigned)st->nworkloads);
		struct np_workload_alloc keep;
		double t0;

		if (st->w[i]->qos_class != NP_QOS_LSE)
			continue;
		if (np_workload_alloc_copy(&keep, st->w[i]))
			exit(1);
		snprintf(name, sizeof(name), "%s", st->w[i]->req.name);
		t0 = now_us();
		np_release(st, name);
		rel[n] = now_us() - t0;
		one_container(&w, &wc, cgroup, sizeof(cgroup), 1000000 + n,
			      NP_QOS_LSE, 2000);
		t0 = now_us();
		if (np_admit(st, &w, &d, err, sizeof(err))) {
			fprintf(stderr, "scale: %s\n", err);
			exit(1);
		}
		adm[n++] = now_us() - t0;
		admitted += d.admitted;
		if (d.admitted)
			np_release(st, w.name);
		if (np_state_insert(st, i, &keep))
			exit(1);
	}
	qsort(adm, (size_t)n, sizeof(double), cmp_d);
	qsort(rel, (size_t)n, sizeof(double), cmp_d);
	printf("%-44s %5d workloads  release p50 %6.1f us  p99 %6.1f us; "
	       "admission p50 %6.1f us  p99 %6.1f us  (%d rounds, %d "
	       "admitted)\n",
	       "10,000 workloads, exclusive (LSE) churn", st->nworkloads,
	       rel[n / 2], rel[n * 99 / 100], adm[n / 2], adm[n * 99 / 100], n,
	       admitted);
	bench_ratio("exclusive release p99 at 10,000 workloads "
		    "(bench_admit), 8 NUMA",
		    rel[n * 99 / 100], "us",
		    "an exclusive admission's p99, same state", adm[n * 99 / 100],
		    2);
}

/*
 * Admission at scale: 10,000 workloads admitted one after another (a
 * shared LS one of 500m, every 50th an LSE one of 2 CPUs, as
 * bench_reconcile's), the latency of the last 1,000; then the exclusive
 * churn (exclusive_churn); then 1,000 releases of random workloads. What a
 * full node pays per admission and release.
 */
static void run_scale(struct np_topology *t)
{
	enum { N = 10000, TAIL = 1000 };
	static double lat[TAIL], rel[TAIL];
	struct np_node_policy p;
	struct np_node_state st;
	struct np_workload_req w;
	struct np_container_req wc;
	struct np_decision d;
	char cgroup[32], err[256];
	unsigned seed = 7;
	int admitted = 0;
	json_t *pj;

	pj = json_pack("{s:s,s:i,s:s}", "cpu_policy", "static", "reserved_cpus",
		       2, "topology_policy", "best-effort");
	if (np_policy_from_json(&p, pj, "policy", err, sizeof(err)) ||
	    np_state_init(&st, t, &p, err, sizeof(err))) {
		fprintf(stderr, "scale: %s\n", err);
		exit(1);
	}
	json_decref(pj);
	for (int i = 0; i < N; i++) {
		double t0;
		one_container(&w, &wc, cgroup, sizeof(cgroup), i,
			      i % 50 == 0 ? NP_QOS_LSE : NP_QOS_LS,
			      i % 50 == 0 ? 2000 : 500);
		t0 = now_us();
		if (np_admit(&st, &w, &d, err, sizeof(err))) {
			fprintf(stderr, "scale: %s\n", err);
			exit(1);
		}
		if (i >= N - TAIL)
			lat[i - (N - TAIL)] = now_us() - t0;
		admitted += d.admitted;
	}
	exclusive_churn(&st);
	for (int i = 0; i < TAIL && st.nworkloads; i++) {
		char name[NP_NAME_MAX];
		double t0;
		snprintf(name, sizeof(name), "%s",
			 st.w[rand_r(&seed) % st.nworkloads]->req.name);
		t0 = now_us();
		np_release(&st, name);
		rel[i] = now_us() - t0;
	}
	qsort(lat, TAIL, sizeof(double), cmp_d);
	qsort(rel, TAIL, sizeof(double), cmp_d);
	printf("%-44s %5d cpus %3d nodes  p50 %8.1f us  p99 %8.1f us  (last "
	       "%d of %d admissions, %d admitted); release p50 %.1f us, p99 "
	       "%.1f us\n",
	       "10,000 workloads, admission", t->ncpus, t->nnuma,
	       lat[TAIL / 2], lat[TAIL * 99 / 100], TAIL, N, admitted,
	       rel[TAIL / 2], rel[TAIL * 99 / 100]);
	bench_figure("admission p99 at 10,000 admitted workloads "
		     "(bench_admit), 8 NUMA",
		     lat[TAIL * 99 / 100], "us", 30);
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
	run_scale(a);
	printf("targets (issue 14): p99 < 30 us at 8 and 16 nodes, < 200 us "
	       "at 64 nodes\n");
	np_topology_free(a);
	np_topology_free(b);
	np_topology_free(c);
	return 0;
}
