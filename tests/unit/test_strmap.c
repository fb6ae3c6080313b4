// SPDX-License-Identifier: Apache-2.0
/*
 * The string map used as an index by the daemon and the cgroup file cache:
 * random puts and deletes agree with a plain array, across growth and
 * backward-shift deletion.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "numaplace/strmap.h"

static void test_basic(void **state)
{
	struct np_strmap m = {0};
	long v = 0;
	(void)state;
	assert_false(np_strmap_get(&m, "a", &v));
	np_strmap_del(&m, "a"); /* empty map */
	assert_int_equal(np_strmap_put(&m, "a", 1), 0);
	assert_int_equal(np_strmap_put(&m, "", 2), 0);
	assert_int_equal(np_strmap_put(&m, "a", 3), 0);
	assert_int_equal(m.n, 2);
	assert_true(np_strmap_get(&m, "a", &v));
	assert_int_equal(v, 3);
	assert_true(np_strmap_get(&m, "", &v));
	assert_int_equal(v, 2);
	np_strmap_del(&m, "a");
	assert_false(np_strmap_get(&m, "a", NULL));
	assert_true(np_strmap_get(&m, "", NULL));
	np_strmap_free(&m);
	assert_false(np_strmap_get(&m, "", NULL));
}

static void test_random(void **state)
{
	enum { N = 3000 };
	static long ref[N]; /* -1: absent */
	struct np_strmap m = {0};
	unsigned seed = 7;
	(void)state;
	for (int i = 0; i < N; i++)
		ref[i] = -1;
	for (int round = 0; round < 60000; round++) {
		int k = (int)(rand_r(&seed) % N), op = (int)(rand_r(&seed) % 3);
		char key[32];
		long v;
		snprintf(key, sizeof(key), "w%d", k);
		if (op < 2) {
			assert_int_equal(np_strmap_put(&m, key, round), 0);
			ref[k] = round;
		} else {
			np_strmap_del(&m, key);
			ref[k] = -1;
		}
		if (round % 1000 == 0) {
			size_t n = 0;
			for (int i = 0; i < N; i++) {
				snprintf(key, sizeof(key), "w%d", i);
				if (ref[i] < 0) {
					assert_false(np_strmap_get(&m, key, &v));
					continue;
				}
				n++;
				assert_true(np_strmap_get(&m, key, &v));
				assert_int_equal(v, ref[i]);
			}
			assert_int_equal(m.n, n);
		}
	}
	np_strmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_random),
	};
	return cmocka_run_group_tests_name("strmap", tests, NULL, NULL);
}
