// SPDX-License-Identifier: Apache-2.0
/*
 * The kubelet take's unit order (np_take_kubelet), against a small
 * reference written here from the rules as the kubelet notes state them
 * (/work/shared/reference/kubelet.md, "takeByTopologyNUMAPacked" and "In-place
 * resize"; issue 13 item 0), over random topologies and free sets:
 *
 *  1. A fresh take (packed, spread, uncore) orders NUMA nodes, sockets,
 *     caches and cores by their free CPUs, fewest first, recounted at each
 *     step, ties to the lower id, with no preference for units the same
 *     call has already taken CPUs from.
 *  2. The NUMA-distributed resize takes the remainder on each node with the
 *     packed resize rule, the CPUs already held on the node passed as
 *     current and baseline: a core that held plus free CPUs cover counts as
 *     full and cores holding CPUs sort first.
 *
 * The reference works on 64-bit masks and CPU records, not on the engine's
 * sets and sorted unit lists. NP_TAKE_SEED=<n> overrides the seed (printed).
 * Run from the repository root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/take.h"
#include "fixtures.h"

#define DEFAULT_SEED 0x7461b3e0c0de13ull
#define MAXC 64

enum { T_NUMA, T_SOCK, T_CORE, T_L3, T_N };

/* ---- the machine: CPU records, unit ids dense from 0 ------------------ */

struct rtopo {
	int n;              /* CPUs 0..n-1 */
	int unit[T_N][MAXC]; /* unit id of each CPU, per type */
	int nunits[T_N];
	uint64_t mask[T_N][MAXC]; /* CPUs of each unit */
};

static void rtopo_masks(struct rtopo *r)
{
	memset(r->mask, 0, sizeof(r->mask));
	memset(r->nunits, 0, sizeof(r->nunits));
	for (int ty = 0; ty < T_N; ty++)
		for (int c = 0; c < r->n; c++) {
			r->mask[ty][r->unit[ty][c]] |= 1ull << c;
			if (r->unit[ty][c] + 1 > r->nunits[ty])
				r->nunits[ty] = r->unit[ty][c] + 1;
		}
}

/*
 * A random regular machine of at most 64 CPUs: NUMA nodes inside sockets
 * (socket-first when there are several per socket) or sockets inside NUMA
 * nodes, 1-2 threads (Linux or adjacent numbering), 1-2 L3 caches per NUMA
 * node.
 */
static void rtopo_random(struct rtopo *r, int min_numa)
{
	int sock, numa_per_sock, sock_per_numa, cpn, thr, nnuma, ncores;

	do {
		sock = 1 + np_test_rndn(4);
		numa_per_sock = 1 + np_test_rndn(3);
		sock_per_numa = 1;
		if (sock > 1 && np_test_rndn(3) == 0) { /* sockets inside NUMA nodes */
			numa_per_sock = 1;
			sock_per_numa = sock % 2 == 0 ? 2 : sock;
		}
		nnuma = sock * numa_per_sock / sock_per_numa;
		cpn = 1 + np_test_rndn(4);
		thr = 1 + np_test_rndn(2);
		ncores = nnuma * cpn;
	} while (ncores * thr > MAXC || nnuma < min_numa ||
		 ncores % sock != 0);
	r->n = ncores * thr;
	bool linux_num = np_test_rndn(2);
	int l3split = 1 + np_test_rndn(2);
	for (int core = 0; core < ncores; core++) {
		int numa = core / cpn, s;
		int l3 = numa * l3split + (core % cpn) * l3split / cpn;
		s = sock_per_numa > 1 ? numa * sock_per_numa +
					    (core % cpn) * sock_per_numa / cpn
				      : numa / numa_per_sock;
		for (int th = 0; th < thr; th++) {
			int c = linux_num ? th * ncores + core : core * thr + th;
			r->unit[T_NUMA][c] = numa;
			r->unit[T_SOCK][c] = s;
			r->unit[T_CORE][c] = core;
			r->unit[T_L3][c] = l3;
		}
	}
	rtopo_masks(r);
	/* l3 ids may skip (a cache of a node with 1 core split in 2). */
	for (int u = 0, k = 0; u < r->nunits[T_L3]; u++)
		if (r->mask[T_L3][u]) {
			for (int c = 0; c < r->n; c++)
				if (r->unit[T_L3][c] == u)
					r->unit[T_L3][c] = k;
			k++;
		}
	rtopo_masks(r);
}

static struct np_topology *rtopo_build(const struct rtopo *r)
{
	struct np_cpu_desc d[MAXC];
	struct np_topology *t = NULL;
	char err[256];

	for (int c = 0; c < r->n; c++)
		d[c] = (struct np_cpu_desc){.cpu = c,
					    .core = r->unit[T_CORE][c],
					    .socket = r->unit[T_SOCK][c],
					    .numa = r->unit[T_NUMA][c],
					    .l3 = r->unit[T_L3][c],
					    .online = true};
	if (np_topology_build(&t, d, r->n, err, sizeof(err)))
		fail_msg("topology: %s", err);
	return t;
}

static np_cpuset to_set(uint64_t m)
{
	np_cpuset s;

	np_cpuset_zero(&s);
	for (int c = 0; c < MAXC; c++)
		if (m >> c & 1)
			np_cpuset_set(&s, c);
	return s;
}

static uint64_t from_set(const np_cpuset *s)
{
	uint64_t m = 0;

	NP_CPUSET_FOREACH (c, s)
		m |= 1ull << c;
	return m;
}

/* ---- the reference accumulator ----------------------------------------- */

struct ref {
	const struct rtopo *r;
	uint64_t avail, result;
	int need;
	bool resize; /* held-first order, held CPUs count towards "free" */
};

static int pc(uint64_t m)
{
	return __builtin_popcountll(m);
}

/* The kubelet's declared size of a unit (CPUsPerSocket = NumCPUs /
 * NumSockets, CPUsPerCore = NumCPUs / NumCores), else its CPUs. */
static int declared(const struct ref *a, int ty, int u)
{
	if (ty == T_SOCK)
		return a->r->n / a->r->nunits[T_SOCK];
	if (ty == T_CORE)
		return a->r->n / a->r->nunits[T_CORE];
	return pc(a->r->mask[ty][u]);
}

/* Sort key: (held first on resize), free CPUs ascending, id ascending. */
static bool before(const struct ref *a, int ty, int x, int y)
{
	uint64_t mx = a->r->mask[ty][x], my = a->r->mask[ty][y];
	int hx = a->resize && (mx & a->result), hy = a->resize && (my & a->result);

	if (hx != hy)
		return hx;
	if (pc(mx & a->avail) != pc(my & a->avail))
		return pc(mx & a->avail) < pc(my & a->avail);
	return x < y;
}

/* Units of ty with free CPUs inside `within`, sorted, appended at out+n. */
static int sorted_in(const struct ref *a, int ty, uint64_t within, int *out,
		     int n)
{
	int start = n;

	for (int u = 0; u < a->r->nunits[ty]; u++)
		if (a->r->mask[ty][u] & a->avail & within)
			out[n++] = u;
	for (int i = start + 1; i < n; i++) /* insertion sort */
		for (int j = i; j > start && before(a, ty, out[j], out[j - 1]);
		     j--) {
			int tmp = out[j];
			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	return n;
}

/* The order the kubelet walks units of ty in (nested as in the notes). */
static int order(const struct ref *a, int ty, int *out)
{
	bool numa_first = a->r->nunits[T_SOCK] >= a->r->nunits[T_NUMA];
	int parent, p[MAXC], np, n = 0;

	if (ty == T_NUMA && numa_first)
		return sorted_in(a, T_NUMA, ~0ull, out, 0);
	if (ty == T_SOCK && !numa_first)
		return sorted_in(a, T_SOCK, ~0ull, out, 0);
	if (ty == T_NUMA)
		parent = T_SOCK;
	else if (ty == T_SOCK || ty == T_L3)
		parent = T_NUMA;
	else
		parent = numa_first ? T_SOCK : T_NUMA;
	np = order(a, parent, p);
	for (int i = 0; i < np; i++)
		n = sorted_in(a, ty, a->r->mask[parent][p[i]], out, n);
	return n;
}

static void take(struct ref *a, uint64_t m)
{
	m &= a->avail;
	a->avail &= ~m;
	a->result |= m;
	a->need -= pc(m);
}

static bool is_free(const struct ref *a, int ty, int u)
{
	uint64_t m = a->r->mask[ty][u];
	uint64_t usable = a->avail | (a->resize ? a->result : 0);

	return pc(m & usable) == declared(a, ty, u) && (m & a->avail);
}

static void take_full(struct ref *a, int ty)
{
	int l[MAXC], n = order(a, ty, l);

	for (int i = 0; i < n; i++)
		if (is_free(a, ty, l[i]) &&
		    a->need >= pc(a->r->mask[ty][l[i]] & a->avail))
			take(a, a->r->mask[ty][l[i]]);
}

/* Fresh partial cache: the first ceil(need / CPUsPerCore) cores with free
 * CPUs in the cache, by id; one surplus thread dropped (the highest);
 * taken only when exactly need CPUs result. */
static void take_partial_l3(struct ref *a, int l3)
{
	int cpc = declared(a, T_CORE, 0), want = (a->need + cpc - 1) / cpc;
	uint64_t pick = 0;

	for (int core = 0; core < a->r->nunits[T_CORE] && want > 0; core++) {
		uint64_t m = a->r->mask[T_CORE][core];
		if (!(m & a->r->mask[T_L3][l3] & a->avail))
			continue;
		pick |= m & a->avail;
		want--;
	}
	while (cpc > 1 && pc(pick) > a->need && pc(pick) - a->need < cpc)
		pick &= ~(1ull << (63 - __builtin_clzll(pick)));
	if (pc(pick) == a->need)
		take(a, pick);
}

static void take_l3(struct ref *a)
{
	int l[MAXC], n = order(a, T_L3, l);
	int per = a->r->n / a->r->nunits[T_L3];

	for (int i = 0; i < n && a->need > 0; i++) {
		if (a->need >= per)
			take_full(a, T_L3);
		if (a->need > 0)
			take_partial_l3(a, l[i]);
	}
}

static void take_single(struct ref *a, bool spread)
{
	int l[MAXC], n = order(a, spread ? T_SOCK : T_CORE, l);

	for (int i = 0; i < n; i++)
		for (int c = 0; c < MAXC && a->need > 0; c++)
			if (a->r->mask[spread ? T_SOCK : T_CORE][l[i]] &
			    a->avail & (1ull << c))
				take(a, 1ull << c);
}

/* The packed take (resize form when keep is given): -1 if it fails. */
static int ref_take(const struct rtopo *r, uint64_t avail, const uint64_t *keep,
		    int count, bool spread, bool uncore, uint64_t *out)
{
	struct ref a = {.r = r, .avail = avail, .need = count};
	bool numa_first = r->nunits[T_SOCK] >= r->nunits[T_NUMA];

	if (keep) {
		a.resize = true;
		a.result = *keep;
		a.avail &= ~*keep;
		a.need -= pc(*keep);
	}
	if (a.need > pc(a.avail))
		return -1;
	if (a.need > 0)
		take_full(&a, numa_first ? T_NUMA : T_SOCK);
	if (a.need > 0)
		take_full(&a, numa_first ? T_SOCK : T_NUMA);
	if (a.need > 0 && uncore)
		take_l3(&a);
	if (a.need > 0 && !spread)
		take_full(&a, T_CORE);
	if (a.need > 0)
		take_single(&a, spread);
	*out = a.result;
	return a.need == 0 ? 0 : -1;
}

/* The machine, one CPU a line: cpu core socket numa l3. */
static void rtopo_print(const struct rtopo *r)
{
	for (int c = 0; c < r->n; c++)
		print_message("  cpu %d core %d socket %d numa %d l3 %d\n", c,
			      r->unit[T_CORE][c], r->unit[T_SOCK][c],
			      r->unit[T_NUMA][c], r->unit[T_L3][c]);
}

static void fail_case(const char *what, uint64_t seed, int i, uint64_t avail,
		      uint64_t keep, int count, uint64_t got, uint64_t want)
{
	fail_msg("%s: seed 0x%" PRIx64 " case %d: available 0x%" PRIx64
		 " current 0x%" PRIx64 " count %d: got 0x%" PRIx64
		 ", reference 0x%" PRIx64,
		 what, seed, i, avail, keep, count, got, want);
}

/* A random set: each CPU of m with probability pct/100. */
static uint64_t rnd_subset(uint64_t m, int pct)
{
	uint64_t s = 0;

	for (int c = 0; c < MAXC; c++)
		if ((m >> c & 1) && np_test_rndn(100) < pct)
			s |= 1ull << c;
	return s;
}

static uint64_t all_cpus(const struct rtopo *r)
{
	return r->n == 64 ? ~0ull : (1ull << r->n) - 1;
}

/* Rule 1: fresh packed / spread / uncore takes equal the reference. */
static void test_fresh_order_random(void **state)
{
	uint64_t seed = np_test_seed("NP_TAKE_SEED", DEFAULT_SEED);
	int checked = 0, n = 4000;

	(void)state;
	np_test_rng_set(seed);
	print_message("fresh take: seed 0x%" PRIx64 ", %d inputs\n", seed, n);
	for (int i = 0; i < n; i++) {
		struct rtopo r;
		struct np_topology *t;
		struct np_take_req q = {0};
		np_cpuset got;
		uint64_t avail, want;
		char err[256];
		int rc;

		rtopo_random(&r, 1);
		avail = rnd_subset(all_cpus(&r), 20 + np_test_rndn(81));
		if (!avail)
			continue;
		t = rtopo_build(&r);
		q.topo = t;
		q.available = to_set(avail);
		q.count = 1 + np_test_rndn(pc(avail));
		q.strategy = np_test_rndn(3) == 0 ? NP_TAKE_SPREAD : NP_TAKE_PACKED;
		q.prefer_uncore = q.strategy == NP_TAKE_PACKED && np_test_rndn(2);
		rc = np_take(&q, &got, err, sizeof(err));
		if (ref_take(&r, avail, NULL, q.count,
			     q.strategy == NP_TAKE_SPREAD, q.prefer_uncore,
			     &want) != 0) {
			if (rc == 0)
				fail_case("fresh: reference fails", seed, i,
					  avail, 0, q.count, from_set(&got), 0);
		} else {
			if (rc != 0)
				fail_msg("fresh: seed 0x%" PRIx64
					 " case %d: take fails: %s",
					 seed, i, err);
			if (from_set(&got) != want) {
				rtopo_print(&r);
				fail_case(q.strategy == NP_TAKE_SPREAD
					      ? "fresh spread"
					  : q.prefer_uncore ? "fresh uncore"
							    : "fresh packed",
					  seed, i, avail, 0, q.count,
					  from_set(&got), want);
			}
			checked++;
		}
		np_topology_free(t);
	}
	print_message("fresh take: %d takes equal the reference\n", checked);
	assert_true(checked > n / 2);
}

/*
 * Replay one node of a distributed take: `share` CPUs (the held ones
 * count), then g more at a time until the node holds what the take gave
 * it; each step with the reference packed take (resize form, held CPUs as
 * current and baseline, when resize). False if the node's count does not
 * fit that shape.
 */
static int chunks_replayed[2]; /* remainder steps replayed: fresh, resize */

static bool replay_node(const struct rtopo *r, uint64_t avail, uint64_t held,
			int share, int g, bool resize, uint64_t got,
			uint64_t *out)
{
	uint64_t s = held, part;
	int extra = pc(got) - share;

	if (extra < 0 || extra % g)
		return false;
	if (resize) {
		if (ref_take(r, (avail & ~held) | held, &held, share, false,
			     false, &s))
			return false;
	} else if (ref_take(r, avail, NULL, share, false, false, &s)) {
		return false;
	}
	for (; extra > 0; extra -= g) {
		uint64_t left = avail & ~s;
		if (resize ? ref_take(r, left | s, &s, pc(s) + g, false, false,
				      &part)
			   : ref_take(r, left, NULL, g, false, false, &part))
			return false;
		s |= part;
		chunks_replayed[resize]++;
	}
	*out = s;
	return true;
}

/* One random distributed take (resize: current = baseline, scale-up);
 * 1 when it was replayed and agreed, 0 when it equals the packed take
 * (the fallback when no split works) or does not have a split's shape,
 * fails the test otherwise. */
static int one_distributed(uint64_t seed, int i, bool resize)
{
	struct rtopo r;
	struct np_topology *t;
	struct np_take_req q = {0};
	np_cpuset got;
	uint64_t avail, cur = 0, res, s0;
	int g = 1, cpc, k = 0, dist, ok = 1;
	char err[256];

	rtopo_random(&r, 2);
	cpc = r.n / r.nunits[T_CORE];
	if (cpc > 1 && np_test_rndn(2))
		g = cpc;
	if (resize)
		cur = rnd_subset(all_cpus(&r), 5 + np_test_rndn(20));
	avail = rnd_subset(all_cpus(&r) & ~cur, 30 + np_test_rndn(71));
	if (pc(avail) < g)
		return 0;
	q.count = pc(cur) + 1 + np_test_rndn(pc(avail));
	q.count -= q.count % g;
	if (q.count <= pc(cur))
		return 0;
	t = rtopo_build(&r);
	q.topo = t;
	q.available = to_set(avail | cur);
	q.distribute_across_numa = true;
	q.group_size = g;
	q.resize = resize;
	q.current = q.baseline = to_set(cur);
	if (np_take(&q, &got, err, sizeof(err))) {
		rtopo_print(&r);
		fail_msg("distributed: seed 0x%" PRIx64 " case %d: available "
			 "0x%" PRIx64 " current 0x%" PRIx64 " count %d g %d: %s",
			 seed, i, avail | cur, cur, q.count, g, err);
	}
	res = from_set(&got);
	/* No even split: the kubelet packs (its resize form on a resize). */
	if (ref_take(&r, avail | cur, resize ? &cur : NULL, q.count, false,
		     false, &s0) == 0 &&
	    s0 == res) {
		np_topology_free(t);
		return 0;
	}
	for (int u = 0; u < r.nunits[T_NUMA]; u++)
		k += (res & r.mask[T_NUMA][u]) != 0;
	dist = q.count / k / g * g;
	for (int u = 0; u < r.nunits[T_NUMA] && ok; u++) {
		uint64_t nm = r.mask[T_NUMA][u], held = cur & nm, s;
		int share = (pc(held) + g - 1) / g * g;
		if (!(res & nm))
			continue;
		if (share < dist)
			share = dist;
		if (!replay_node(&r, avail & nm, held, share, g, resize,
				 res & nm, &s)) {
			ok = 0;
			break;
		}
		if (s != (res & nm)) {
			rtopo_print(&r);
			fail_case(resize ? "distributed resize, node"
					 : "distributed, node",
				  seed, i, avail | cur, cur, q.count, res & nm,
				  s);
		}
	}
	np_topology_free(t);
	return ok;
}

/* Rule 2 (and rule 1 inside the distributed take): every node of a
 * distributed take equals the reference replay of its steps. */
static void test_distributed_remainder_random(void **state)
{
	uint64_t seed = np_test_seed("NP_TAKE_SEED", DEFAULT_SEED) ^ 0x64697374ull;
	int checked[2] = {0}, n = 3000;

	(void)state;
	np_test_rng_set(seed);
	print_message("distributed take: seed 0x%" PRIx64 ", %d inputs\n",
		      seed, 2 * n);
	for (int i = 0; i < n; i++) {
		checked[0] += one_distributed(seed, i, false);
		checked[1] += one_distributed(seed, n + i, true);
	}
	print_message("distributed take: %d fresh, %d resize takes equal the "
		      "reference replay (%d, %d remainder steps)\n",
		      checked[0], checked[1], chunks_replayed[0],
		      chunks_replayed[1]);
	assert_true(checked[0] > n / 3 && checked[1] > n / 3);
	assert_true(chunks_replayed[0] > n / 10 && chunks_replayed[1] > n / 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fresh_order_random),
	    cmocka_unit_test(test_distributed_remainder_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
