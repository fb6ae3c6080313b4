// SPDX-License-Identifier: Apache-2.0
/*
 * Topology Manager merge: np_merge() against the kubelet's cross-product
 * enumeration (tests/support/merge_bruteforce.c) for 2..64 NUMA nodes and
 * three hint providers with kubelet-like hint lists. Prints a table;
 * asserts nothing.
 *
 * Hint lists, as the kubelet's CPU / memory / device managers generate
 * them for a request that needs k NUMA nodes: every node set of >= k nodes,
 * preferred iff it has exactly k nodes. Where 2^N is too large, the
 * scalable equivalents are used (named in the output):
 *   all>=k    every non-empty node set with >= k nodes (the kubelet's lists)
 *   k..k+1    every node set with exactly k or k+1 nodes
 *   win+c     distance-ordered windows: for each node, its w closest nodes
 *             (itself first, ties by id) for w = k..k+c, deduplicated
 * Distances: 10 local, 12 within a group of 4 nodes, 21 within a socket of
 * 8 nodes, 32 across sockets.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "figure.h"
#include "../tests/support/merge_bruteforce.h"
#include "numaplace/merge.h"

enum gen { GEN_ALL, GEN_KK1, GEN_WIN };

struct scenario {
	int N;
	int k[3];
	enum gen gen;
	int cap; /* GEN_WIN: widths k..k+cap */
	bool closest;
	const char *note;
};

static const struct scenario scenarios[] = {
    {2, {1, 1, 1}, GEN_ALL, 0, true, "agree"},
    {2, {1, 2, 2}, GEN_ALL, 0, true, "disagree"},
    {4, {1, 1, 1}, GEN_ALL, 0, true, "agree"},
    {4, {1, 2, 3}, GEN_ALL, 0, true, "disagree"},
    {8, {1, 1, 1}, GEN_ALL, 0, false, "WORST: every node set"},
    {8, {1, 1, 1}, GEN_ALL, 0, true, "WORST: every node set"},
    {8, {1, 2, 3}, GEN_ALL, 0, false, "disagree"},
    {8, {1, 2, 3}, GEN_ALL, 0, true, "disagree"},
    {8, {2, 2, 2}, GEN_ALL, 0, true, "agree"},
    {16, {2, 2, 2}, GEN_KK1, 0, true, "agree"},
    {16, {1, 2, 3}, GEN_KK1, 0, true, "disagree"},
    {16, {1, 2, 3}, GEN_ALL, 0, true, "disagree (stress)"},
    {16, {2, 2, 2}, GEN_WIN, 3, true, "agree"},
    {16, {1, 2, 3}, GEN_WIN, 3, true, "disagree"},
    {32, {1, 1, 1}, GEN_KK1, 0, true, "agree"},
    {32, {1, 2, 2}, GEN_KK1, 0, true, "disagree"},
    {32, {2, 2, 2}, GEN_WIN, 4, true, "agree"},
    {32, {1, 2, 3}, GEN_WIN, 4, true, "disagree"},
    {64, {1, 1, 1}, GEN_KK1, 0, true, "agree"},
    {64, {1, 1, 2}, GEN_KK1, 0, true, "disagree"},
    {64, {2, 2, 2}, GEN_WIN, 6, true, "agree"},
    {64, {1, 2, 3}, GEN_WIN, 6, false, "disagree"},
    {64, {1, 2, 3}, GEN_WIN, 6, true, "disagree"},
    {64, {2, 4, 8}, GEN_WIN, 8, true, "disagree"},
};

/* Bruteforce only where the cross product is at most this many. */
#define BRUTE_MAX_PERMS 40e6

static uint16_t dist[NP_MAX_NUMA][NP_MAX_NUMA];

static void make_distances(void)
{
	for (int i = 0; i < NP_MAX_NUMA; i++)
		for (int j = 0; j < NP_MAX_NUMA; j++)
			dist[i][j] = i == j	      ? 10
				     : i / 4 == j / 4 ? 12
				     : i / 8 == j / 8 ? 21
						      : 32;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct hbuf {
	struct np_hint *h;
	int n, cap;
};

static void hbuf_add(struct hbuf *b, np_nodemask m, bool pref, bool dedup)
{
	for (int i = 0; dedup && i < b->n; i++)
		if (b->h[i].mask == m)
			return;
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 256;
		b->h = realloc(b->h, (size_t)b->cap * sizeof(*b->h));
		if (!b->h) {
			perror("realloc");
			exit(1);
		}
	}
	b->h[b->n++] = (struct np_hint){.mask = m, .preferred = pref};
}

/* Next larger integer with the same popcount (Gosper), 0 past 64 bits. */
static uint64_t next_comb(uint64_t x)
{
	uint64_t c = x & (~x + 1), r = x + c;

	if (!r)
		return 0;
	return (((r ^ x) >> 2) / c) | r;
}

static void gen_list(const struct scenario *s, int k, struct hbuf *b)
{
	int N = s->N;

	b->n = 0;
	if (k > N)
		k = N;
	if (s->gen == GEN_ALL) {
		for (uint64_t m = 1; m < (1ull << N); m++) {
			int c = __builtin_popcountll(m);
			if (c >= k)
				hbuf_add(b, m, c == k, false);
		}
		return;
	}
	if (s->gen == GEN_KK1) {
		for (int w = k; w <= k + 1 && w <= N; w++) {
			uint64_t lim = N == 64 ? 0 : 1ull << N;
			for (uint64_t m = (w == 64 ? ~0ull : (1ull << w) - 1);
			     m; m = next_comb(m)) {
				if (lim && m >= lim)
					break;
				hbuf_add(b, m, w == k, false);
				if (w == 64)
					break;
			}
		}
		return;
	}
	/* windows */
	for (int i = 0; i < N; i++) {
		int order[NP_MAX_NUMA], n = 0;
		for (int j = 0; j < N; j++) {
			int p = n++;
			for (; p > 0 && (dist[i][order[p - 1]] > dist[i][j]);
			     p--)
				order[p] = order[p - 1];
			order[p] = j;
		}
		for (int w = k; w <= k + s->cap && w <= N; w++) {
			np_nodemask m = 0;
			for (int t = 0; t < w; t++)
				m |= 1ull << order[t];
			hbuf_add(b, m, w == k, true);
		}
	}
}

static const char *gen_name(const struct scenario *s, char *buf, size_t len)
{
	if (s->gen == GEN_ALL)
		snprintf(buf, len, "all>=k");
	else if (s->gen == GEN_KK1)
		snprintf(buf, len, "k..k+1");
	else
		snprintf(buf, len, "win+%d", s->cap);
	return buf;
}

/* Median ns per call of fn over samples of batched calls. */
static double time_call(const struct np_merge_input *in, int path,
			double budget_ns)
{
	struct np_merge_result r;
	double t0, one, samples[31];
	int batch, ns = 0;

	t0 = now_ns();
	if (np_merge_path(in, &r, path))
		return -1;
	one = now_ns() - t0;
	batch = one > 0 ? (int)(200e3 / one) : 1000;
	if (batch < 1)
		batch = 1;
	if (batch > 100000)
		batch = 100000;
	t0 = now_ns();
	while (ns < 31) {
		double s0 = now_ns();
		for (int i = 0; i < batch; i++)
			np_merge_path(in, &r, path);
		samples[ns++] = (now_ns() - s0) / batch;
		if (ns >= 5 && now_ns() - t0 > budget_ns)
			break;
	}
	qsort(samples, (size_t)ns, sizeof(double), cmp_double);
	return samples[ns / 2];
}

static double time_brute(const struct np_merge_input *in,
			 struct np_merge_result *r)
{
	double samples[5], t0;
	int ns = 0;

	while (ns < 5) {
		t0 = now_ns();
		np_merge_bruteforce(in, r);
		samples[ns++] = now_ns() - t0;
		if (samples[ns - 1] > 1.5e9 || (ns >= 3 && samples[0] > 3e8))
			break;
	}
	qsort(samples, (size_t)ns, sizeof(double), cmp_double);
	return samples[ns / 2];
}

static void fmt_time(char *buf, size_t len, double ns)
{
	if (ns < 0)
		snprintf(buf, len, "-");
	else if (ns < 1e3)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else if (ns < 1e9)
		snprintf(buf, len, "%.1f ms", ns / 1e6);
	else
		snprintf(buf, len, "%.2f s", ns / 1e9);
}

int main(void)
{
	struct hbuf bufs[3] = {0};
	double worst8 = -1, worst8_ratio = -1, max64 = 0, min8_ratio = -1;

	make_distances();
	printf("Topology Manager merge: np_merge vs the kubelet's cross "
	       "product (bruteforce)\n");
	printf("3 providers (k = NUMA nodes each request needs), hint lists "
	       "as described in bench/bench_merge.c:\n"
	       "  all>=k = every node set with >= k nodes, preferred iff k "
	       "nodes (the kubelet's own lists)\n"
	       "  k..k+1 = every node set of k or k+1 nodes; win+c = "
	       "distance-ordered windows of k..k+c nodes\n"
	       "times are medians; 'auto' is np_merge(), 'transform'/'search' "
	       "force one strategy\n\n");
	printf("%3s %-8s %-7s %-17s %-3s %-22s %-10s %10s %10s %10s %10s "
	       "%10s %6s %s\n",
	       "N", "k", "lists", "hints/provider", "cl", "result", "perms",
	       "auto", "transform", "search", "bruteforce", "speedup", "same",
	       "note");
	for (size_t si = 0; si < sizeof(scenarios) / sizeof(scenarios[0]);
	     si++) {
		const struct scenario *s = &scenarios[si];
		struct np_hint_list lists[3];
		struct np_merge_input in = {0};
		struct np_merge_result r, rb;
		char gname[16], kbuf[16], hbuf_s[32], res[64], m[48];
		char ta[16], tt[16], ts[16], tb[16], ratio[16], perm_s[16];
		double perms = 1, t_auto, t_tr = -1, t_se, t_br = -1;
		const char *same = "-";

		for (int p = 0; p < 3; p++) {
			gen_list(s, s->k[p], &bufs[p]);
			lists[p] = (struct np_hint_list){NP_HL_LIST, bufs[p].n,
							 bufs[p].h};
			perms *= bufs[p].n;
		}
		in.policy = NP_TM_BEST_EFFORT;
		in.nodes = s->N == 64 ? ~0ull : (1ull << s->N) - 1;
		in.distance = (const uint16_t(*)[NP_MAX_NUMA])dist;
		in.prefer_closest = s->closest;
		in.nlists = 3;
		in.lists = lists;

		if (np_merge(&in, &r)) {
			printf("N=%d: np_merge failed\n", s->N);
			continue;
		}
		t_auto = time_call(&in, NP_MERGE_PATH_AUTO, 3e8);
		if (s->N <= 20)
			t_tr = time_call(&in, NP_MERGE_PATH_TRANSFORM, 3e8);
		t_se = time_call(&in, NP_MERGE_PATH_SEARCH, 3e8);
		if (perms <= BRUTE_MAX_PERMS) {
			t_br = time_brute(&in, &rb);
			same = rb.best.mask == r.best.mask &&
				       rb.best.preferred == r.best.preferred &&
				       rb.best.any == r.best.any
				   ? "yes"
				   : "NO";
		}

		snprintf(kbuf, sizeof(kbuf), "%d,%d,%d", s->k[0], s->k[1],
			 s->k[2]);
		snprintf(hbuf_s, sizeof(hbuf_s), "%d/%d/%d", bufs[0].n,
			 bufs[1].n, bufs[2].n);
		if (np_nodemask_format(r.best.mask, m, sizeof(m)) < 0)
			snprintf(m, sizeof(m), "...");
		snprintf(res, sizeof(res), "{%s}%s", m,
			 r.best.preferred ? " pref" : " non-pref");
		snprintf(perm_s, sizeof(perm_s), "%.3g", perms);
		fmt_time(ta, sizeof(ta), t_auto);
		fmt_time(tt, sizeof(tt), t_tr);
		fmt_time(ts, sizeof(ts), t_se);
		fmt_time(tb, sizeof(tb), t_br);
		if (t_br > 0)
			snprintf(ratio, sizeof(ratio), "%.0fx", t_br / t_auto);
		else
			snprintf(ratio, sizeof(ratio), "-");
		printf("%3d %-8s %-7s %-17s %-3s %-22s %-10s %10s %10s %10s "
		       "%10s %10s %6s %s\n",
		       s->N, kbuf, gen_name(s, gname, sizeof(gname)), hbuf_s,
		       s->closest ? "y" : "n", res, perm_s, ta, tt, ts, tb,
		       ratio, same, s->note);
		fflush(stdout);

		if (s->N == 8 && s->gen == GEN_ALL && s->k[0] == 1 &&
		    s->k[1] == 1 && s->k[2] == 1 && t_auto > worst8) {
			worst8 = t_auto;
			worst8_ratio = t_br > 0 ? t_br / t_auto : -1;
		}
		if (s->N == 8 && t_br > 0 &&
		    (min8_ratio < 0 || t_br / t_auto < min8_ratio))
			min8_ratio = t_br / t_auto;
		if (s->N == 64 && t_auto > max64)
			max64 = t_auto;
	}
	printf("\ntargets (reported, not asserted):\n");
	printf("  8 nodes, every node set, 3 providers: %.1f us (< 50 us: "
	       "%s), %.0fx the cross product\n",
	       worst8 / 1e3, worst8 < 50e3 ? "met" : "MISSED", worst8_ratio);
	printf("  8 nodes, smallest speedup over the cross product: %.0fx "
	       "(>= 100x: %s)\n",
	       min8_ratio, min8_ratio >= 100 ? "met" : "MISSED");
	printf("  64 nodes, slowest merge: %.1f us (< 1 ms: %s)\n", max64 / 1e3,
	       max64 < 1e6 ? "met" : "MISSED");
	bench_figure("merge, 8 NUMA nodes, every node set, 3 providers",
		     worst8 / 1e3, "us", 50);
	bench_figure("merge, 64 NUMA nodes, slowest case", max64 / 1e3, "us",
		     1000);
	for (int p = 0; p < 3; p++)
		free(bufs[p].h);
	return 0;
}
