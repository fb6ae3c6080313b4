// SPDX-License-Identifier: Apache-2.0
/* Hint providers: the width in sockets under align-by-socket, against its
 * definition over every node set, and in bounded time at 64 nodes (it was
 * a walk over 2^64 node sets). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "numaplace/hints.h"

/* The definition: the fewest sockets touched by a node set whose
 * capacity holds every resource's request. */
static int brute_sockets(const struct np_provider *p)
{
	int best = 1 << 30;

	for (np_nodemask m = p->nodes; m; m = (m - 1) & p->nodes) {
		bool ok = true;
		uint64_t seen = 0;
		for (int r = 0; r < p->nres && ok; r++) {
			uint64_t s = 0;
			NP_NODEMASK_FOREACH(n, m)
			{
				s += p->total[r][n];
			}
			ok = s >= p->request[r];
		}
		if (!ok)
			continue;
		NP_NODEMASK_FOREACH(n, m)
		{
			seen |= (uint64_t)1 << p->socket_of_node[n];
		}
		if (__builtin_popcountll(seen) < best)
			best = __builtin_popcountll(seen);
	}
	return best;
}

static void random_provider(struct np_provider *p, unsigned *seed, int nodes,
			    int sockets)
{
	memset(p, 0, sizeof(*p));
	p->kind = NP_PROV_MEMORY;
	p->by_socket = true;
	p->nres = 1 + (int)(rand_r(seed) % 3);
	for (int i = 0; i < nodes; i++) {
		p->nodes |= NP_NODEMASK_BIT(i);
		p->socket_of_node[i] = (int)(rand_r(seed) % (unsigned)sockets);
		for (int r = 0; r < p->nres; r++)
			p->total[r][i] = p->avail[r][i] = rand_r(seed) % 9;
	}
	for (int r = 0; r < p->nres; r++)
		p->request[r] = 1 + rand_r(seed) % 20;
}

/* Random providers of up to 12 nodes on up to 12 sockets: the width the
 * provider computes is the definition's. */
static void test_sockets_match_definition(void **state)
{
	unsigned seed = 2026;
	int compared = 0;
	(void)state;
	for (int iter = 0; iter < 4000; iter++) {
		struct np_provider p;
		int nodes = 1 + (int)(rand_r(&seed) % 12);
		random_provider(&p, &seed, nodes, 1 + (int)(rand_r(&seed) % 12));
		if (np_provider_finish(&p))
			continue; /* the request fits no node set */
		if (p.min_width != brute_sockets(&p))
			fail_msg("iteration %d: %d sockets, the definition says "
				 "%d",
				 iter, p.min_width, brute_sockets(&p));
		compared++;
	}
	assert_true(compared > 1000);
}

/*
 * The explicit hint list against its definition: every node set, in
 * decreasing numeric order, that np_provider_feasible() accepts, with
 * np_provider_preferred()'s flag.  Random providers of each kind, on
 * scattered node ids, with memory groups in use and required nodes.
 */
static void test_hints_match_definition(void **state)
{
	static struct np_hint got[1 << 12], want[1 << 12];
	unsigned seed = 1127;
	int lists = 0, hints = 0;

	(void)state;
	for (int iter = 0; iter < 3000; iter++) {
		struct np_provider p;
		int nodes = 1 + (int)(rand_r(&seed) % 12), ng = 0, nw = 0;
		np_nodemask ids = 0;

		random_provider(&p, &seed, nodes, 1 + (int)(rand_r(&seed) % 4));
		p.kind = (enum np_provider_kind)(1 + rand_r(&seed) % 3);
		p.by_socket = rand_r(&seed) % 2;
		/* node ids spread over 0..63 instead of 0..nodes-1 */
		for (int i = 0; i < nodes; i++) {
			int id;
			do
				id = (int)(rand_r(&seed) % 64);
			while (ids & NP_NODEMASK_BIT(id));
			ids |= NP_NODEMASK_BIT(id);
		}
		{
			struct np_provider q = p;
			int i = 0;

			memset(q.avail, 0, sizeof(q.avail));
			memset(q.total, 0, sizeof(q.total));
			NP_NODEMASK_FOREACH(id, ids)
			{
				for (int r = 0; r < p.nres; r++) {
					q.avail[r][id] = p.avail[r][i];
					q.total[r][id] = p.total[r][i];
				}
				q.socket_of_node[id] = p.socket_of_node[i];
				i++;
			}
			q.nodes = ids;
			p = q;
		}
		if (rand_r(&seed) % 4 == 0)
			p.must = ids & (np_nodemask)rand_r(&seed) &
				 ((np_nodemask)rand_r(&seed) << 32 |
				  (np_nodemask)rand_r(&seed));
		if (p.kind == NP_PROV_MEMORY)
			NP_NODEMASK_FOREACH(id, ids)
			if (rand_r(&seed) % 3 == 0) {
				p.used[id] = true;
				p.group[id] = rand_r(&seed) % 2
						  ? NP_NODEMASK_BIT(id)
						  : ids & ~(np_nodemask)rand_r(
							      &seed);
			}
		if (np_provider_finish(&p))
			continue;
		ng = np_provider_hints(&p, got);
		for (np_nodemask m = p.nodes; m; m = (m - 1) & p.nodes)
			if (np_provider_feasible(&p, m)) {
				want[nw].mask = m;
				want[nw].preferred =
				    np_provider_preferred(&p, m);
				nw++;
			}
		if (ng != nw)
			fail_msg("iteration %d: %d hints, the definition "
				 "gives %d",
				 iter, ng, nw);
		for (int k = 0; k < nw; k++)
			if (got[k].mask != want[k].mask ||
			    got[k].preferred != want[k].preferred ||
			    got[k].any)
				fail_msg("iteration %d, hint %d: 0x%llx%s, the "
					 "definition gives 0x%llx%s",
					 iter, k,
					 (unsigned long long)got[k].mask,
					 got[k].preferred ? " preferred" : "",
					 (unsigned long long)want[k].mask,
					 want[k].preferred ? " preferred" : "");
		lists++;
		hints += nw;
	}
	print_message("  %d hint lists, %d hints compared\n", lists, hints);
	assert_true(lists > 1000 && hints > 10000);
}

/* 64 nodes on 8 sockets (8 nodes each, 4 units per node): a request of
 * 70 units needs 3 sockets (32 per socket); at once, not after 2^64
 * node sets. */
static void test_sockets_64_nodes(void **state)
{
	struct np_provider p;
	struct timespec t0, t1;
	double ms;
	(void)state;
	memset(&p, 0, sizeof(p));
	p.kind = NP_PROV_CPU;
	p.by_socket = true;
	p.nres = 1;
	p.request[0] = 70;
	for (int i = 0; i < 64; i++) {
		p.nodes |= NP_NODEMASK_BIT(i);
		p.socket_of_node[i] = i / 8;
		p.total[0][i] = p.avail[0][i] = 4;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(np_provider_finish(&p), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
	     (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_int_equal(p.min_width, 3);
	/* not a timing test: a walk over node sets would never end */
	assert_true(ms < 10000);
	/* 16 sockets of 4 nodes: beyond the exhaustive search, the largest
	 * sockets first (16 units each): 70 units, 5 sockets */
	for (int i = 0; i < 64; i++)
		p.socket_of_node[i] = i / 4;
	assert_int_equal(np_provider_finish(&p), 0);
	assert_int_equal(p.min_width, 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sockets_match_definition),
		cmocka_unit_test(test_sockets_64_nodes),
		cmocka_unit_test(test_hints_match_definition),
	};
	return cmocka_run_group_tests_name("hints", tests, NULL, NULL);
}
