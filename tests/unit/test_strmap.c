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

/* Keys of every length, iterated by slot; a map whose keys keep changing
 * (new names, a few live) keeps its key buffer bounded: the space of
 * deleted keys is taken back. */
static void test_keys_buffer(void **state)
{
	struct np_strmap m = {0};
	char key[200];
	size_t seen = 0, maxcap = 0;
	long v;
	(void)state;
	for (int i = 0; i < 150; i++) {
		memset(key, 'a' + i % 26, (size_t)i);
		key[i] = '\0';
		assert_int_equal(np_strmap_put(&m, key, i), 0);
	}
	for (size_t i = 0; i < m.cap; i++) {
		const char *k = np_strmap_key_at(&m, i);
		if (!k)
			continue;
		seen++;
		assert_int_equal((long)strlen(k), np_strmap_value_at(&m, i));
		assert_true(k[0] == '\0' ||
			    k[0] == 'a' + np_strmap_value_at(&m, i) % 26);
	}
	assert_int_equal(seen, 150);
	/* keys taken from the map's own buffer (the tail of a live key),
	 * while the buffer fills and moves */
	for (int round = 0; round < 400; round++) {
		const char *k = NULL;
		char want[200], full[200];
		for (size_t i = 0; !k && i < m.cap; i++) {
			const char *c = np_strmap_key_at(&m, i);
			if (c && strlen(c) > 1 && c[0] != 'x')
				k = c;
		}
		assert_non_null(k);
		snprintf(want, sizeof(want), "%s", k + 1);
		snprintf(full, sizeof(full), "%s", k);
		if (!np_strmap_get(&m, want, NULL)) {
			size_t n0 = m.n;
			assert_int_equal(np_strmap_put(&m, k + 1, 1000 + round), 0);
			assert_int_equal(m.n, n0 + 1);
			assert_true(np_strmap_get(&m, want, &v));
			assert_int_equal(v, 1000 + round);
		}
		/* k may have moved with the buffer: by value */
		np_strmap_del(&m, full);
		assert_false(np_strmap_get(&m, full, NULL));
		snprintf(key, sizeof(key), "x%d-%.150s", round, want);
		assert_int_equal(np_strmap_put(&m, key, round), 0);
	}
	np_strmap_free(&m);
	assert_null(m.keys);
	assert_int_equal(m.cap + m.n + m.klen + m.kcap, 0);

	/* churn: 200,000 distinct names, at most 64 live at a time */
	for (int i = 0; i < 200000; i++) {
		snprintf(key, sizeof(key), "cgroup-%d/with/a/longer/path", i);
		assert_int_equal(np_strmap_put(&m, key, i), 0);
		if (i >= 64) {
			snprintf(key, sizeof(key),
				 "cgroup-%d/with/a/longer/path", i - 64);
			np_strmap_del(&m, key);
			assert_false(np_strmap_get(&m, key, NULL));
		}
		if (m.kcap > maxcap)
			maxcap = m.kcap;
	}
	assert_int_equal(m.n, 64);
	for (int i = 200000 - 64; i < 200000; i++) {
		snprintf(key, sizeof(key), "cgroup-%d/with/a/longer/path", i);
		assert_true(np_strmap_get(&m, key, &v));
		assert_int_equal(v, i);
	}
	/* 64 live keys of about 36 bytes: a few KiB, not 7 MB */
	if (maxcap > 16384)
		fail_msg("key buffer grew to %zu bytes", maxcap);
	np_strmap_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_keys_buffer),
	};
	return cmocka_run_group_tests_name("strmap", tests, NULL, NULL);
}
