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
	};
	return cmocka_run_group_tests_name("hints", tests, NULL, NULL);
}
