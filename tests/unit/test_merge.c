// SPDX-License-Identifier: Apache-2.0
/*
 * Topology Manager merge: the kubelet's own test tables (merge.json), a
 * differential test of np_merge() against the literal cross-product
 * enumeration (tests/support/merge_bruteforce.c), and edge cases.
 *
 * Run from the repository root. NP_MERGE_SEED=<n> overrides the seed of the
 * random tests (the seed in use is printed).
 */
#include <errno.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "../support/merge_bruteforce.h"
#include "numaplace/merge.h"
#include "fixtures.h"

#define VECTORS "tests/data/vectors/merge.json"
#define DEFAULT_SEED 0x6e756d61706c6163ull /* "numaplac" */

/* ---- helpers ----------------------------------------------------------- */

/* An input with its own storage. */
struct tcase {
	struct np_merge_input in;
	uint16_t dist[NP_MAX_NUMA][NP_MAX_NUMA];
	struct np_hint_list lists[64];
	struct np_hint hints[64][64];
};

static void tcase_init(struct tcase *t, enum np_tm_policy p, np_nodemask nodes)
{
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < NP_MAX_NUMA; i++)
		for (int j = 0; j < NP_MAX_NUMA; j++)
			t->dist[i][j] = i == j ? 10 : 20;
	t->in.policy = p;
	t->in.nodes = nodes;
	t->in.distance = (const uint16_t(*)[NP_MAX_NUMA])t->dist;
	t->in.lists = t->lists;
}

static struct np_hint_list *tcase_list(struct tcase *t,
				       enum np_hint_list_kind kind)
{
	struct np_hint_list *l = &t->lists[t->in.nlists];

	l->kind = kind;
	l->n = 0;
	l->hints = t->hints[t->in.nlists];
	t->in.nlists++;
	return l;
}

static void tcase_hint(struct tcase *t, np_nodemask m, bool any, bool pref)
{
	struct np_hint_list *l = &t->lists[t->in.nlists - 1];

	t->hints[t->in.nlists - 1][l->n++] =
	    (struct np_hint){.mask = m, .any = any, .preferred = pref};
}

static void fmt_mask(char *buf, size_t len, np_nodemask m, bool any)
{
	if (any)
		snprintf(buf, len, "nil");
	else if (np_nodemask_format(m, buf, len) < 0)
		snprintf(buf, len, "0x%" PRIx64, m);
	if (!any && !m)
		snprintf(buf, len, "{}");
}

static void fmt_result(char *buf, size_t len, int rc,
		       const struct np_merge_result *r)
{
	char m[256];

	if (rc) {
		snprintf(buf, len, "error %d", rc);
		return;
	}
	fmt_mask(m, sizeof(m), r->best.mask, r->best.any);
	snprintf(buf, len, "{%s, %s} admit=%d", m,
		 r->best.preferred ? "preferred" : "non-preferred", r->admit);
}

static void dump_input(const struct np_merge_input *in)
{
	char b[256];

	fmt_mask(b, sizeof(b), in->nodes, false);
	printf("  policy=%s nodes=%s prefer_closest=%d nlists=%d\n",
	       np_tm_policy_name(in->policy), b, in->prefer_closest,
	       in->nlists);
	if (in->prefer_closest) {
		printf("  distances:");
		NP_NODEMASK_FOREACH (i, in->nodes) {
			printf("\n   ");
			NP_NODEMASK_FOREACH (j, in->nodes)
				printf(" %u", in->distance[i][j]);
		}
		printf("\n");
	}
	for (int i = 0; i < in->nlists; i++) {
		const struct np_hint_list *l = &in->lists[i];
		printf("  list %d: ", i);
		if (l->kind == NP_HL_NO_PREFERENCE) {
			printf("no-preference\n");
			continue;
		}
		if (l->kind == NP_HL_IMPOSSIBLE) {
			printf("impossible\n");
			continue;
		}
		for (int j = 0; j < l->n; j++) {
			fmt_mask(b, sizeof(b), l->hints[j].mask,
				 l->hints[j].any);
			printf("{%s,%s} ", b,
			       l->hints[j].preferred ? "T" : "F");
		}
		printf("\n");
	}
}

static bool same_result(int ra, const struct np_merge_result *a, int rb,
			const struct np_merge_result *b)
{
	if (ra || rb)
		return ra == rb;
	return a->best.any == b->best.any &&
	       (a->best.any || a->best.mask == b->best.mask) &&
	       a->best.preferred == b->best.preferred && a->admit == b->admit;
}

/*
 * np_merge (auto), both forced strategies and the bruteforce must agree.
 * Returns true if they do; prints the input otherwise.
 */
struct outcome_stats {
	int error, none, preferred, nonpreferred, fallback, nil;
};

static void count_outcome(struct outcome_stats *st,
			  const struct np_merge_input *in, int rc,
			  const struct np_merge_result *r)
{
	if (rc)
		st->error++;
	else if (in->policy == NP_TM_NONE)
		st->none++;
	else if (r->best.any)
		st->nil++;
	else if (r->best.preferred)
		st->preferred++;
	else if (r->best.mask == in->nodes)
		st->fallback++;
	else
		st->nonpreferred++;
}

static void print_outcomes(const struct outcome_stats *st)
{
	printf("  outcomes: %d preferred, %d non-preferred mask, %d default "
	       "(non-preferred), %d nil (single-numa-node), %d policy none, "
	       "%d errors\n",
	       st->preferred, st->nonpreferred, st->fallback, st->nil, st->none,
	       st->error);
}

static struct outcome_stats *cur_stats;

static bool check_all(const struct np_merge_input *in, const char *what)
{
	struct np_merge_result ref, got[3];
	int rref, rgot[3];
	const char *names[3] = {"np_merge", "transform", "search"};
	bool ok = true;

	memset(&ref, 0, sizeof(ref));
	memset(got, 0, sizeof(got));
	rref = np_merge_bruteforce(in, &ref);
	if (cur_stats)
		count_outcome(cur_stats, in, rref, &ref);
	rgot[0] = np_merge(in, &got[0]);
	rgot[1] = np_merge_path(in, &got[1], NP_MERGE_PATH_TRANSFORM);
	rgot[2] = np_merge_path(in, &got[2], NP_MERGE_PATH_SEARCH);
	for (int k = 0; k < 3; k++) {
		if (!same_result(rref, &ref, rgot[k], &got[k])) {
			char a[300], b[300];
			fmt_result(a, sizeof(a), rref, &ref);
			fmt_result(b, sizeof(b), rgot[k], &got[k]);
			printf("MISMATCH %s: bruteforce %s, %s %s\n", what, a,
			       names[k], b);
			ok = false;
		}
	}
	if (!ok)
		dump_input(in);
	return ok;
}

/* ---- (a) the kubelet's tables ------------------------------------------ */

static int json_mask(const json_t *j, np_nodemask *m, bool *any)
{
	size_t i;
	const json_t *e;

	*m = 0;
	*any = json_is_null(j);
	if (*any)
		return 0;
	if (!json_is_array(j))
		return -EINVAL;
	json_array_foreach(j, i, e)
	{
		json_int_t v = json_is_integer(e) ? json_integer_value(e) : -1;
		if (v < 0 || v >= NP_MAX_NUMA)
			return -EINVAL;
		*m |= NP_NODEMASK_BIT(v);
	}
	return 0;
}

static int load_case(const json_t *c, struct tcase *t, struct np_hint *exp,
		     bool *admit)
{
	const json_t *nodes = json_object_get(c, "numa_nodes");
	const json_t *dist = json_object_get(c, "distances");
	const json_t *prov = json_object_get(c, "providers");
	const json_t *e, *x = json_object_get(c, "expect");
	const char *pol = json_string_value(json_object_get(c, "policy"));
	enum np_tm_policy p;
	int ids[NP_MAX_NUMA], nids = 0;
	size_t i;

	if (!pol || np_tm_policy_parse(pol, &p) || !json_is_array(nodes) ||
	    !json_is_array(prov) || !json_is_object(x))
		return -EINVAL;
	tcase_init(t, p, 0);
	json_array_foreach(nodes, i, e)
	{
		json_int_t v = json_integer_value(e);
		if (v < 0 || v >= NP_MAX_NUMA)
			return -EINVAL;
		t->in.nodes |= NP_NODEMASK_BIT(v);
		ids[nids++] = (int)v;
	}
	if (json_is_array(dist)) {
		for (int a = 0; a < nids; a++)
			for (int b = 0; b < nids; b++)
				t->dist[ids[a]][ids[b]] =
				    (uint16_t)json_integer_value(json_array_get(
					json_array_get(dist, (size_t)a),
					(size_t)b));
	}
	t->in.prefer_closest =
	    json_is_true(json_object_get(c, "prefer_closest"));
	json_array_foreach(prov, i, e)
	{
		const char *res;
		const json_t *hl;

		if (json_is_null(e) || json_object_size(e) == 0) {
			tcase_list(t, NP_HL_NO_PREFERENCE);
			continue;
		}
		json_object_foreach((json_t *)e, res, hl)
		{
			size_t j;
			const json_t *h;

			if (json_is_null(hl)) {
				tcase_list(t, NP_HL_NO_PREFERENCE);
				continue;
			}
			if (!json_is_array(hl))
				return -EINVAL;
			if (json_array_size(hl) == 0) {
				tcase_list(t, NP_HL_IMPOSSIBLE);
				continue;
			}
			tcase_list(t, NP_HL_LIST);
			json_array_foreach(hl, j, h)
			{
				np_nodemask m;
				bool any;
				if (json_mask(json_object_get(h, "mask"), &m,
					      &any))
					return -EINVAL;
				tcase_hint(t, m, any,
					   json_is_true(json_object_get(
					       h, "preferred")));
			}
		}
	}
	if (json_mask(json_object_get(x, "mask"), &exp->mask, &exp->any))
		return -EINVAL;
	exp->preferred = json_is_true(json_object_get(x, "preferred"));
	*admit = json_is_true(json_object_get(c, "admit"));
	return 0;
}

static void test_vectors(void **state)
{
	json_error_t jerr;
	json_t *root, *c;
	struct tcase *t = malloc(sizeof(*t));
	int failed = 0, ncases = 0;
	size_t i;

	(void)state;
	assert_non_null(t);
	root = json_load_file(VECTORS, 0, &jerr);
	if (!root)
		fail_msg("cannot load %s: %s (run from the repo root)", VECTORS,
			 jerr.text);
	assert_true(json_is_array(root));
	json_array_foreach(root, i, c)
	{
		const char *id = json_string_value(json_object_get(c, "id"));
		const char *kind =
		    json_string_value(json_object_get(c, "kind"));
		struct np_hint exp;
		struct np_merge_result res[2];
		bool admit;
		int rc[2];

		if (kind && strcmp(kind, "merge"))
			continue;
		ncases++;
		if (load_case(c, t, &exp, &admit)) {
			printf("FAIL %s: cannot parse the case\n", id);
			failed++;
			continue;
		}
		rc[0] = np_merge(&t->in, &res[0]);
		rc[1] = np_merge_bruteforce(&t->in, &res[1]);
		for (int k = 0; k < 2; k++) {
			const struct np_hint *g = &res[k].best;
			if (!rc[k] && g->any == exp.any &&
			    (exp.any || g->mask == exp.mask) &&
			    g->preferred == exp.preferred &&
			    res[k].admit == admit)
				continue;
			char want[300], got[300], m[200];
			fmt_mask(m, sizeof(m), exp.mask, exp.any);
			snprintf(want, sizeof(want), "{%s, %s} admit=%d", m,
				 exp.preferred ? "preferred" : "non-preferred",
				 admit);
			fmt_result(got, sizeof(got), rc[k], &res[k]);
			printf("FAIL %s (%s): expected %s, got %s\n", id,
			       k ? "bruteforce" : "np_merge", want, got);
			failed++;
		}
		if (!check_all(&t->in, id))
			failed++;
	}
	printf("merge vectors: %d cases, %d failures\n", ncases, failed);
	json_decref(root);
	free(t);
	assert_int_equal(ncases, 81);
	assert_int_equal(failed, 0);
}

/* ---- (b) differential test against the bruteforce ---------------------- */

static const uint16_t dist_values[] = {11, 12, 12, 15, 20, 21, 21, 30, 32};

static void random_distances(struct tcase *t)
{
	bool symmetric = np_test_rndn(4) != 0;

	for (int i = 0; i < NP_MAX_NUMA; i++) {
		t->dist[i][i] = np_test_rndn(5) ? 10 : (uint16_t)(10 + np_test_rndn(3));
		for (int j = 0; j < i; j++) {
			uint16_t v = dist_values[np_test_rndn(sizeof(dist_values) /
						      sizeof(dist_values[0]))];
			t->dist[i][j] = v;
			t->dist[j][i] =
			    symmetric
				? v
				: dist_values[np_test_rndn(sizeof(dist_values) /
						   sizeof(dist_values[0]))];
		}
	}
}

/* A random subset of nodes (each node with probability pct%). */
static np_nodemask random_subset(np_nodemask nodes, int pct)
{
	np_nodemask m = 0;

	NP_NODEMASK_FOREACH (n, nodes)
		if (np_test_rndn(100) < pct)
			m |= NP_NODEMASK_BIT(n);
	return m;
}

/* Nodes: n ids, either 0..n-1 or scattered over 0..63. */
static np_nodemask random_nodes(int n)
{
	np_nodemask m = 0;

	if (np_test_rndn(3)) {
		if (n == 64)
			return ~0ull;
		return (NP_NODEMASK_BIT(n) - 1)
		       << (np_test_rndn(3) ? 0 : np_test_rndn(64 - n + 1));
	}
	while (np_nodemask_count(m) < n)
		m |= NP_NODEMASK_BIT(np_test_rndn(64));
	return m;
}

/*
 * Random input: 1-4 providers, 1-2 resources each, 0-max_hints hints per
 * list mixing nil, masks (sometimes copied from an earlier list, so that
 * equal masks meet), preferred flags; random policy and prefer_closest.
 * Keeps the cross product at most max_perm permutations.
 */
static void random_case(struct tcase *t, int nnodes, int max_hints,
			double max_perm)
{
	static const enum np_tm_policy pols[] = {
	    NP_TM_BEST_EFFORT, NP_TM_BEST_EFFORT,      NP_TM_RESTRICTED,
	    NP_TM_RESTRICTED,  NP_TM_SINGLE_NUMA_NODE, NP_TM_SINGLE_NUMA_NODE,
	    NP_TM_NONE,
	};
	np_nodemask pool[64];
	int npool = 0, nprov = 1 + np_test_rndn(4);
	double perms = 1;

	tcase_init(t, pols[np_test_rndn(sizeof(pols) / sizeof(pols[0]))],
		   random_nodes(nnodes));
	random_distances(t);
	t->in.prefer_closest = np_test_rndn(2);
	for (int p = 0; p < nprov; p++) {
		int nres = 1 + np_test_rndn(2);
		if (!np_test_rndn(10)) {
			tcase_list(t, NP_HL_NO_PREFERENCE); /* null provider */
			continue;
		}
		for (int r = 0; r < nres; r++) {
			int kind = np_test_rndn(20), n, pct = 20 + np_test_rndn(70);
			int pref_pct = np_test_rndn(100);
			struct np_hint_list *l;

			if (kind == 0) {
				tcase_list(t, NP_HL_NO_PREFERENCE);
				continue;
			}
			if (kind == 1) {
				tcase_list(t, NP_HL_IMPOSSIBLE);
				continue;
			}
			l = tcase_list(t, NP_HL_LIST);
			n = np_test_rndn(max_hints + 1);
			while (n > 1 && perms * n > max_perm)
				n--;
			perms *= n ? n : 1;
			for (int j = 0; j < n; j++) {
				int what = np_test_rndn(100);
				np_nodemask m;
				bool pref = np_test_rndn(100) < pref_pct;

				if (what < 15) {
					tcase_hint(t, 0, true, pref);
					continue;
				}
				if (what < 45 && npool) {
					m = pool[np_test_rndn(npool)];
				} else if (what < 50) {
					m = 0; /* empty non-nil mask */
				} else if (what < 60) {
					m = NP_NODEMASK_BIT(__builtin_ctzll(
					    random_subset(t->in.nodes, 60) |
					    NP_NODEMASK_BIT(
						63 -
						__builtin_clzll(t->in.nodes))));
				} else if (what < 65) {
					m = t->in.nodes;
				} else {
					m = random_subset(t->in.nodes, pct);
				}
				if (m && npool < 64)
					pool[npool++] = m;
				tcase_hint(t, m, false, pref);
			}
			(void)l;
		}
	}
}

static void test_differential(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	uint64_t seed = np_test_seed("NP_MERGE_SEED", DEFAULT_SEED);
	int n = 12000, failed = 0;
	struct outcome_stats st = {0};

	(void)state;
	assert_non_null(t);
	printf("differential (2-8 nodes): seed 0x%" PRIx64 ", %d inputs\n",
	       seed, n);
	np_test_rng_set(seed);
	cur_stats = &st;
	for (int i = 0; i < n && failed < 5; i++) {
		char what[64];
		random_case(t, 2 + np_test_rndn(7), 6, 200000);
		snprintf(what, sizeof(what), "seed 0x%" PRIx64 " input #%d",
			 seed, i);
		if (!check_all(&t->in, what))
			failed++;
	}
	cur_stats = NULL;
	printf("differential (2-8 nodes): %d mismatches\n", failed);
	print_outcomes(&st);
	free(t);
	assert_int_equal(failed, 0);
}

/* Wider machines (9-64 nodes): exercises the search strategy's pruning. */
static void test_differential_wide(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	uint64_t seed = np_test_seed("NP_MERGE_SEED", DEFAULT_SEED) ^ 0x77696465ull;
	int n = 4000, failed = 0;
	struct outcome_stats st = {0};

	(void)state;
	assert_non_null(t);
	printf("differential (9-64 nodes): seed 0x%" PRIx64 ", %d inputs\n",
	       seed, n);
	np_test_rng_set(seed);
	cur_stats = &st;
	for (int i = 0; i < n && failed < 5; i++) {
		char what[64];
		random_case(t, 9 + np_test_rndn(56), 8, 200000);
		snprintf(what, sizeof(what),
			 "wide seed 0x%" PRIx64 " input #%d", seed, i);
		if (!check_all(&t->in, what))
			failed++;
	}
	cur_stats = NULL;
	printf("differential (9-64 nodes): %d mismatches\n", failed);
	print_outcomes(&st);
	free(t);
	assert_int_equal(failed, 0);
}

/*
 * Large, kubelet-like lists (every subset of k..k+1 nodes, preferred iff
 * k), too big for the bruteforce: both fast strategies must agree.
 */
static void test_transform_vs_search(void **state)
{
	static struct np_hint big[3][4096];
	struct np_hint_list lists[3];
	struct np_merge_input in = {0};
	static uint16_t dist[NP_MAX_NUMA][NP_MAX_NUMA];
	uint64_t seed = np_test_seed("NP_MERGE_SEED", DEFAULT_SEED) ^ 0x6c617267ull;
	int cases = 0, failed = 0;

	(void)state;
	np_test_rng_set(seed);
	printf("transform vs search (9-14 nodes): seed 0x%" PRIx64 "\n", seed);
	for (int it = 0; it < 120 && failed < 3; it++) {
		int nn = 9 + np_test_rndn(6);
		np_nodemask nodes = (NP_NODEMASK_BIT(nn) - 1);

		for (int i = 0; i < NP_MAX_NUMA; i++)
			for (int j = 0; j < NP_MAX_NUMA; j++)
				dist[i][j] = i == j
						 ? 10
						 : (uint16_t)(11 + (i ^ j) % 7 +
							      np_test_rndn(2));
		for (int l = 0; l < 3; l++) {
			int k = 1 + np_test_rndn(3), n = 0, drop = np_test_rndn(60);
			for (uint64_t m = 1; m < (1ull << nn) && n < 4096;
			     m++) {
				int c = __builtin_popcountll(m);
				if (c < k || c > k + 1 || np_test_rndn(100) < drop)
					continue;
				big[l][n++] = (struct np_hint){
				    .mask = m,
				    .preferred = c == k && np_test_rndn(4),
				};
			}
			lists[l] = (struct np_hint_list){NP_HL_LIST, n, big[l]};
		}
		in.policy = np_test_rndn(2) ? NP_TM_BEST_EFFORT : NP_TM_RESTRICTED;
		in.nodes = nodes;
		in.distance = (const uint16_t(*)[NP_MAX_NUMA])dist;
		in.prefer_closest = np_test_rndn(2);
		in.nlists = 3;
		in.lists = lists;

		struct np_merge_result a, b, c;
		int ra = np_merge_path(&in, &a, NP_MERGE_PATH_TRANSFORM);
		int rb = np_merge_path(&in, &b, NP_MERGE_PATH_SEARCH);
		int rc = np_merge(&in, &c);
		cases++;
		if (!same_result(ra, &a, rb, &b) ||
		    !same_result(ra, &a, rc, &c)) {
			char x[300], y[300];
			fmt_result(x, sizeof(x), ra, &a);
			fmt_result(y, sizeof(y), rb, &b);
			printf("MISMATCH #%d (%d nodes): transform %s, search "
			       "%s\n",
			       it, nn, x, y);
			failed++;
		}
	}
	/* Many dense lists: the transform's counts would pass 2^64 without
	 * its renormalisation. */
	for (int it = 0; it < 40 && failed < 3; it++) {
		static struct np_hint_list many[16];
		static struct np_hint dense[16][256];
		int nn = 5 + np_test_rndn(4), nlists = 9 + np_test_rndn(8);

		for (int l = 0; l < nlists; l++) {
			int n = 0, pct = 40 + np_test_rndn(60);
			for (uint64_t m = 1; m < (1ull << nn); m++)
				if (np_test_rndn(100) < pct)
					dense[l][n++] = (struct np_hint){
					    .mask = m,
					    .preferred = !np_test_rndn(8),
					};
			many[l] =
			    (struct np_hint_list){NP_HL_LIST, n, dense[l]};
			if (!n)
				many[l].kind = NP_HL_NO_PREFERENCE;
		}
		in.policy = NP_TM_BEST_EFFORT;
		in.nodes = NP_NODEMASK_BIT(nn) - 1;
		in.prefer_closest = np_test_rndn(2);
		in.nlists = nlists;
		in.lists = many;

		struct np_merge_result a, b;
		int ra = np_merge_path(&in, &a, NP_MERGE_PATH_TRANSFORM);
		int rb = np_merge_path(&in, &b, NP_MERGE_PATH_SEARCH);
		cases++;
		if (!same_result(ra, &a, rb, &b)) {
			char x[300], y[300];
			fmt_result(x, sizeof(x), ra, &a);
			fmt_result(y, sizeof(y), rb, &b);
			printf("MISMATCH many #%d: transform %s, search %s\n",
			       it, x, y);
			failed++;
		}
	}
	printf("transform vs search: %d cases, %d mismatches\n", cases, failed);
	assert_int_equal(failed, 0);
}

/* ---- (c) edge semantics ------------------------------------------------ */

static void run(struct tcase *t, struct np_merge_result *r)
{
	assert_true(check_all(&t->in, "edge case"));
	assert_int_equal(np_merge(&t->in, r), 0);
}

static void test_snn_default_becomes_nil(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	struct np_merge_result r;

	(void)state;
	assert_non_null(t);
	/* Single-node machine: the preferred {0} is the default: nil. */
	tcase_init(t, NP_TM_SINGLE_NUMA_NODE, 0x1);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x1, false, true);
	tcase_list(t, NP_HL_NO_PREFERENCE);
	run(t, &r);
	assert_true(r.best.any);
	assert_int_equal(r.best.mask, 0);
	assert_true(r.best.preferred);
	assert_true(r.admit);

	/* No preference at all: default, preferred, then nil. */
	tcase_init(t, NP_TM_SINGLE_NUMA_NODE, 0xf);
	tcase_list(t, NP_HL_NO_PREFERENCE);
	tcase_list(t, NP_HL_NO_PREFERENCE);
	run(t, &r);
	assert_true(r.best.any && r.best.preferred && r.admit);

	/* Only a 2-node hint: filtered away, nothing merges: nil, reject. */
	tcase_init(t, NP_TM_SINGLE_NUMA_NODE, 0xf);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x3, false, true);
	run(t, &r);
	assert_true(r.best.any && !r.best.preferred && !r.admit);

	/* best-effort keeps the default as a mask. */
	tcase_init(t, NP_TM_BEST_EFFORT, 0xf);
	tcase_list(t, NP_HL_IMPOSSIBLE);
	run(t, &r);
	assert_false(r.best.any);
	assert_int_equal(r.best.mask, 0xf);
	assert_false(r.best.preferred);
	assert_true(r.admit);

	/* single-numa-node with a single-node preferred match. */
	tcase_init(t, NP_TM_SINGLE_NUMA_NODE, 0xf);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x4, false, true);
	tcase_hint(t, 0x6, false, true);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0, true, true);
	run(t, &r);
	assert_false(r.best.any);
	assert_int_equal(r.best.mask, 0x4);
	assert_true(r.best.preferred && r.admit);
	free(t);
}

static void test_zero_lists_and_none(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	struct np_merge_result r;

	(void)state;
	assert_non_null(t);
	/* No lists: one empty permutation = {default, preferred}. */
	tcase_init(t, NP_TM_RESTRICTED, 0x33);
	run(t, &r);
	assert_false(r.best.any);
	assert_int_equal(r.best.mask, 0x33);
	assert_true(r.best.preferred && r.admit);
	t->in.policy = NP_TM_SINGLE_NUMA_NODE;
	run(t, &r);
	assert_true(r.best.any && r.best.preferred && r.admit);

	/* none: no merge at all. */
	tcase_init(t, NP_TM_NONE, 0x3);
	tcase_list(t, NP_HL_IMPOSSIBLE);
	run(t, &r);
	assert_true(r.best.any && !r.best.preferred && r.admit);
	free(t);
}

/*
 * Above 20 nodes only the search merges, and its work is bounded: 5 lists
 * of 4,096 random masks of about 32 of 64 nodes, none preferred, make more
 * distinct partial ANDs than NP_MERGE_MAX_STATES. np_merge says so
 * (-E2BIG) in about a second, where it ran for minutes and took 14 GiB.
 */
static void test_search_bound(void **state)
{
	enum { NL = 5, NH = 4096 };
	struct np_hint *h = calloc(NL * NH, sizeof(*h));
	struct np_hint_list lists[NL];
	struct np_merge_input in = {.policy = NP_TM_BEST_EFFORT,
				    .nodes = ~0ull,
				    .nlists = NL,
				    .lists = lists};
	struct np_merge_result r;
	uint64_t x = 35;

	(void)state;
	assert_non_null(h);
	for (int i = 0; i < NL * NH; i++) {
		x ^= x << 13; /* xorshift64: the same masks every run */
		x ^= x >> 7;
		x ^= x << 17;
		h[i].mask = x;
	}
	for (int l = 0; l < NL; l++)
		lists[l] = (struct np_hint_list){NP_HL_LIST, NH, &h[l * NH]};
	assert_int_equal(np_merge(&in, &r), -E2BIG);
	/* two of them merge within the bound */
	in.nlists = 2;
	assert_int_equal(np_merge(&in, &r), 0);
	assert_false(r.best.any);
	free(h);
}

static void test_64_nodes(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	struct np_merge_result r;
	const np_nodemask all = ~0ull, hi = 1ull << 63;

	(void)state;
	assert_non_null(t);
	/* Nothing merges: the default is all 64 nodes. */
	tcase_init(t, NP_TM_BEST_EFFORT, all);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, hi, false, true);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 1, false, true);
	run(t, &r);
	assert_int_equal(r.best.mask, all);
	assert_false(r.best.preferred);

	/* Node 63 in preferred and non-preferred merges. */
	tcase_init(t, NP_TM_RESTRICTED, all);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, hi | 1, false, true);
	tcase_hint(t, hi, false, false);
	tcase_hint(t, 0, true, false);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, hi | 1, false, true);
	tcase_hint(t, hi | 2, false, true);
	run(t, &r);
	assert_int_equal(r.best.mask, hi | 1);
	assert_true(r.best.preferred && r.admit);

	/* All-nodes masks and nil: preferred default; snn makes it nil. */
	tcase_init(t, NP_TM_BEST_EFFORT, all);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, all, false, true);
	tcase_list(t, NP_HL_NO_PREFERENCE);
	run(t, &r);
	assert_int_equal(r.best.mask, all);
	assert_true(r.best.preferred);
	t->in.policy = NP_TM_SINGLE_NUMA_NODE;
	run(t, &r);
	assert_true(r.best.any && !r.best.preferred && !r.admit);

	/* Non-preferred: B = 2 (the first list's narrowest), the only
	 * 2-node intersection is {62,63}. */
	tcase_init(t, NP_TM_BEST_EFFORT, all);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 3ull << 62, false, false);
	tcase_hint(t, 7ull << 61, false, false);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 1ull << 63, false, false);
	tcase_hint(t, all, false, false);
	tcase_hint(t, (7ull << 61) | 1, false, false);
	run(t, &r);
	assert_int_equal(r.best.mask, 3ull << 62);
	assert_false(r.best.preferred);

	/* prefer_closest at 64 nodes: {0,63} is closer than {0,1}. */
	tcase_init(t, NP_TM_BEST_EFFORT, all);
	t->in.prefer_closest = true;
	t->dist[0][63] = t->dist[63][0] = 11;
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x3, false, true);
	tcase_hint(t, hi | 1, false, true);
	tcase_list(t, NP_HL_NO_PREFERENCE);
	run(t, &r);
	assert_int_equal(r.best.mask, hi | 1);
	t->in.prefer_closest = false;
	run(t, &r);
	assert_int_equal(r.best.mask, 0x3);
	free(t);
}

static void test_closest_ties(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	struct np_merge_result r;

	(void)state;
	assert_non_null(t);
	/* Equal average distance: lower mask value wins. */
	tcase_init(t, NP_TM_BEST_EFFORT, 0xf);
	t->in.prefer_closest = true;
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0xc, false, true);
	tcase_hint(t, 0x5, false, true);
	run(t, &r);
	assert_int_equal(r.best.mask, 0x5);
	/* Make {2,3} closer. */
	t->dist[2][3] = t->dist[3][2] = 11;
	run(t, &r);
	assert_int_equal(r.best.mask, 0xc);
	/* Diagonal counts: a larger local distance on node 0 loses. */
	tcase_init(t, NP_TM_BEST_EFFORT, 0xf);
	t->in.prefer_closest = true;
	t->dist[0][0] = 12;
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x1, false, true);
	tcase_hint(t, 0x2, false, true);
	run(t, &r);
	assert_int_equal(r.best.mask, 0x2);
	free(t);
}

static void test_invalid(void **state)
{
	struct tcase *t = malloc(sizeof(*t));
	struct np_merge_result r;

	(void)state;
	assert_non_null(t);
	/* Mask outside nodes. */
	tcase_init(t, NP_TM_BEST_EFFORT, 0x3);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x4, false, true);
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge_bruteforce(&t->in, &r), -EINVAL);
	/* ... whatever the policy (validated before filtering). */
	t->in.policy = NP_TM_NONE;
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	t->in.policy = NP_TM_SINGLE_NUMA_NODE;
	t->hints[0][0].mask = 0x6;
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge_bruteforce(&t->in, &r), -EINVAL);
	/* A nil hint's mask field is ignored. */
	t->hints[0][0].any = true;
	assert_int_equal(np_merge(&t->in, &r), 0);
	/* Bit 63 on a 63-node machine. */
	tcase_init(t, NP_TM_RESTRICTED, ~0ull >> 1);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 1ull << 63, false, true);
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge_bruteforce(&t->in, &r), -EINVAL);
	/* No nodes. */
	tcase_init(t, NP_TM_BEST_EFFORT, 0);
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge_bruteforce(&t->in, &r), -EINVAL);
	/* Bad policy, kind, counts, pointers. */
	tcase_init(t, (enum np_tm_policy)7, 0x3);
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge_bruteforce(&t->in, &r), -EINVAL);
	tcase_init(t, NP_TM_BEST_EFFORT, 0x3);
	tcase_list(t, (enum np_hint_list_kind)9);
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge_bruteforce(&t->in, &r), -EINVAL);
	tcase_init(t, NP_TM_BEST_EFFORT, 0x3);
	tcase_list(t, NP_HL_LIST)->n = -1;
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	tcase_init(t, NP_TM_BEST_EFFORT, 0x3);
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x1, false, true);
	t->lists[0].hints = NULL;
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	tcase_init(t, NP_TM_BEST_EFFORT, 0x3);
	t->in.nlists = -1;
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	tcase_init(t, NP_TM_BEST_EFFORT, 0x3);
	t->in.prefer_closest = true;
	t->in.distance = NULL;
	assert_int_equal(np_merge(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge_bruteforce(&t->in, &r), -EINVAL);
	assert_int_equal(np_merge(NULL, &r), -EINVAL);
	tcase_init(t, NP_TM_BEST_EFFORT, 0x3);
	assert_int_equal(np_merge(&t->in, NULL), -EINVAL);
	/* distance may be NULL without prefer_closest. */
	t->in.distance = NULL;
	tcase_list(t, NP_HL_LIST);
	tcase_hint(t, 0x1, false, false);
	tcase_hint(t, 0x2, false, false);
	assert_int_equal(np_merge(&t->in, &r), 0);
	assert_int_equal(r.best.mask, 0x1);
	/* A LIST with no hints is an impossible list. */
	tcase_init(t, NP_TM_RESTRICTED, 0x3);
	tcase_list(t, NP_HL_LIST);
	t->lists[0].hints = NULL;
	assert_int_equal(np_merge(&t->in, &r), 0);
	assert_int_equal(r.best.mask, 0x3);
	assert_false(r.best.preferred || r.admit);
	free(t);
}

static void test_policy_names(void **state)
{
	enum np_tm_policy p;
	static const struct {
		const char *s;
		enum np_tm_policy p;
	} ok[] = {
	    {"none", NP_TM_NONE},
	    {"best-effort", NP_TM_BEST_EFFORT},
	    {"restricted", NP_TM_RESTRICTED},
	    {"single-numa-node", NP_TM_SINGLE_NUMA_NODE},
	};
	static const char *const bad[] = {
	    "",
	    "None",
	    "best_effort",
	    "besteffort",
	    "single-numa-node ",
	    "single-numa",
	    "restricted\n",
	    "static",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		p = (enum np_tm_policy)99;
		assert_int_equal(np_tm_policy_parse(ok[i].s, &p), 0);
		assert_int_equal(p, ok[i].p);
		assert_string_equal(np_tm_policy_name(ok[i].p), ok[i].s);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(np_tm_policy_parse(bad[i], &p), -EINVAL);
	assert_int_equal(np_tm_policy_parse(NULL, &p), -EINVAL);
	assert_int_equal(np_tm_policy_parse("none", NULL), -EINVAL);
	assert_string_equal(np_tm_policy_name((enum np_tm_policy)42),
			    "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),
	    cmocka_unit_test(test_differential),
	    cmocka_unit_test(test_differential_wide),
	    cmocka_unit_test(test_transform_vs_search),
	    cmocka_unit_test(test_snn_default_becomes_nil),
	    cmocka_unit_test(test_zero_lists_and_none),
	    cmocka_unit_test(test_64_nodes),
	    cmocka_unit_test(test_search_bound),
	    cmocka_unit_test(test_closest_ties),
	    cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_policy_names),
	};

	setvbuf(stdout, NULL, _IOLBF, 0);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
