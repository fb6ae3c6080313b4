// SPDX-License-Identifier: Apache-2.0
/* CPU set type: cpu-list parsing (incl. malformed input), formatting, set
 * algebra, iteration, NUMA node masks. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "numaplace/cpuset.h"

static void roundtrip(const char *in, const char *want)
{
	np_cpuset s;
	char buf[512], err[256];
	assert_int_equal(np_cpuset_parse(&s, in, err, sizeof(err)), 0);
	assert_true(np_cpuset_format(&s, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, want);
}

static void test_parse_format(void **state)
{
	(void)state;
	roundtrip("", "");
	roundtrip("0", "0");
	roundtrip("0-3,8,10-11", "0-3,8,10-11");
	roundtrip("3,2,1,0", "0-3");
	roundtrip("0-1,1-2", "0-2");
	roundtrip("5-5", "5");
	roundtrip("  0-2\n", "0-2"); /* as sysfs prints it */
	roundtrip("4095", "4095");
	roundtrip("0,2,4,6", "0,2,4,6");
}

static void expect_error(const char *in, int want_rc, const char *needle)
{
	np_cpuset s;
	char err[256] = "";
	np_cpuset_zero(&s);
	np_cpuset_set(&s, 7);
	assert_int_equal(np_cpuset_parse(&s, in, err, sizeof(err)), want_rc);
	if (!strstr(err, needle))
		fail_msg("error for \"%s\" was \"%s\", expected to contain "
			 "\"%s\"",
			 in, err, needle);
	/* a failed parse leaves the destination untouched */
	assert_true(np_cpuset_test(&s, 7));
	assert_int_equal(np_cpuset_count(&s), 1);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error("0-3,x", -EINVAL, "position 5 ('x')");
	expect_error("1,", -EINVAL, "expected a number at end");
	expect_error(",1", -EINVAL, "position 1 (',')");
	expect_error("3-1", -EINVAL, "range end below range start");
	expect_error("0--2", -EINVAL, "position 3 ('-')");
	expect_error("1 2", -EINVAL, "position 2 (' ')");
	expect_error("-1", -EINVAL, "position 1 ('-')");
	expect_error("4096", -ERANGE, "maximum 4095");
	expect_error("0-99999999999999999999", -ERANGE, "out of range");
	expect_error("0x10", -EINVAL, "position 2 ('x')");
}

static void test_algebra(void **state)
{
	np_cpuset a, b, c;
	(void)state;
	assert_int_equal(np_cpuset_parse(&a, "0-7", NULL, 0), 0);
	assert_int_equal(np_cpuset_parse(&b, "4-11", NULL, 0), 0);
	np_cpuset_and(&c, &a, &b);
	assert_int_equal(np_cpuset_count(&c), 4);
	assert_int_equal(np_cpuset_first(&c), 4);
	np_cpuset_or(&c, &a, &b);
	assert_int_equal(np_cpuset_count(&c), 12);
	np_cpuset_andnot(&c, &a, &b);
	assert_int_equal(np_cpuset_count(&c), 4);
	assert_false(np_cpuset_test(&c, 4));
	assert_true(np_cpuset_subset(&c, &a));
	assert_false(np_cpuset_subset(&a, &c));
	assert_true(np_cpuset_intersects(&a, &b));
	assert_false(np_cpuset_intersects(&c, &b));
	assert_int_equal(np_cpuset_count_and(&a, &b), 4);
	/* aliasing dst with an operand */
	np_cpuset_and(&a, &a, &b);
	assert_int_equal(np_cpuset_count(&a), 4);
	np_cpuset_zero(&c);
	assert_true(np_cpuset_empty(&c));
	assert_int_equal(np_cpuset_first(&c), -1);
	/* out-of-range ids are ignored, not memory errors */
	np_cpuset_set(&c, -1);
	np_cpuset_set(&c, NP_MAX_CPUS);
	assert_true(np_cpuset_empty(&c));
	assert_false(np_cpuset_test(&c, NP_MAX_CPUS + 5));
}

static void test_iteration(void **state)
{
	np_cpuset s;
	int seen[8], n = 0;
	(void)state;
	assert_int_equal(np_cpuset_parse(&s, "0,63,64,127,128,4095", NULL, 0),
			 0);
	NP_CPUSET_FOREACH(cpu, &s)
	{
		assert_true(n < 8);
		seen[n++] = cpu;
	}
	assert_int_equal(n, 6);
	assert_int_equal(seen[1], 63);
	assert_int_equal(seen[2], 64);
	assert_int_equal(seen[5], 4095);
	assert_int_equal(np_cpuset_next(&s, 65), 127);
	assert_int_equal(np_cpuset_next(&s, 4096), -1);
}

static void test_format_limits(void **state)
{
	np_cpuset s;
	char small[4];
	char *str;
	(void)state;
	np_cpuset_zero(&s);
	for (int i = 0; i < NP_MAX_CPUS; i += 2)
		np_cpuset_set(&s, i);
	assert_int_equal(np_cpuset_format(&s, small, sizeof(small)), -ENOSPC);
	str = np_cpuset_str(&s); /* the worst case fits */
	assert_non_null(str);
	assert_int_equal(strncmp(str, "0,2,4,", 6), 0);
	free(str);
}

static void test_nodemask(void **state)
{
	np_nodemask m;
	char buf[128], err[128];
	(void)state;
	assert_int_equal(np_nodemask_parse(&m, "0-1,63", err, sizeof(err)), 0);
	assert_int_equal(np_nodemask_count(m), 3);
	assert_true(np_nodemask_test(m, 63));
	assert_false(np_nodemask_test(m, 64));
	assert_false(np_nodemask_test(m, -1));
	assert_true(np_nodemask_format(m, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "0-1,63");
	assert_int_equal(np_nodemask_parse(&m, "64", err, sizeof(err)), -ERANGE);
	assert_non_null(strstr(err, "maximum 63"));
	m = ~(np_nodemask)0;
	assert_true(np_nodemask_format(m, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, "0-63");
	int n = 0;
	NP_NODEMASK_FOREACH(node, m)
	n += node >= 0;
	assert_int_equal(n, 64);
}

/* Hex masks as /proc/irq/default_smp_affinity and the workqueue cpumask
 * print them: parsed into lists, formatted back the kernel's way. */
static void mask_roundtrip(const char *in, const char *list, int nbits,
			   const char *out)
{
	np_cpuset s;
	char buf[512], err[256];

	assert_int_equal(np_cpuset_parse_mask(&s, in, err, sizeof(err)), 0);
	assert_true(np_cpuset_format(&s, buf, sizeof(buf)) >= 0);
	assert_string_equal(buf, list);
	assert_true(np_cpuset_format_mask(&s, nbits, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, out);
}

static void test_mask(void **state)
{
	np_cpuset s;
	char err[256], buf[8];

	(void)state;
	mask_roundtrip("ff\n", "0-7", 8, "ff");
	mask_roundtrip("ee", "1-3,5-7", 8, "ee");
	mask_roundtrip("0", "", 8, "00");
	mask_roundtrip("00000001,00000000", "32", 40, "01,00000000");
	mask_roundtrip("f,0000000f", "0-3,32-35", 64, "0000000f,0000000f");
	mask_roundtrip("1", "0", 2, "1");
	mask_roundtrip("80", "7", 1, "80"); /* widened to the highest CPU */
	assert_int_equal(np_cpuset_parse_mask(&s, "", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(np_cpuset_parse_mask(&s, "fg", err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "position 2"));
	assert_int_equal(np_cpuset_parse_mask(&s, "123456789", err,
					      sizeof(err)), -EINVAL);
	assert_int_equal(np_cpuset_parse_mask(&s, "f,", err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(np_cpuset_parse_mask(&s, ",f", err, sizeof(err)),
			 -EINVAL);
	np_cpuset_zero(&s);
	np_cpuset_set(&s, 40);
	assert_int_equal(np_cpuset_format_mask(&s, 8, buf, sizeof(buf)),
			 -ENOSPC);
}

/* The pool keeps each set once: equal sets give the same pointer, and
 * every pointer keeps its content while the pool grows (2,000 distinct
 * sets, each looked up again after all were added). */
static void test_pool(void **state)
{
	struct np_cpuset_pool p = {0};
	const np_cpuset *first[2000];
	np_cpuset **taken;
	int n;

	(void)state;
	for (int i = 0; i < 2000; i++) {
		np_cpuset s;

		np_cpuset_zero(&s);
		np_cpuset_set(&s, i % NP_MAX_CPUS);
		np_cpuset_set(&s, (i * 7 + 1) % NP_MAX_CPUS);
		if (i >= 1000)
			np_cpuset_set(&s, NP_MAX_CPUS - 1); /* the last word */
		first[i] = np_cpuset_intern(&p, &s);
		assert_non_null(first[i]);
		assert_true(np_cpuset_equal(first[i], &s));
		assert_ptr_equal(np_cpuset_intern(&p, &s), first[i]);
	}
	assert_int_equal(p.n, 2000);
	for (int i = 0; i < 2000; i++) {
		np_cpuset s = *first[i];

		assert_ptr_equal(np_cpuset_intern(&p, &s), first[i]);
		for (int j = i + 1; j < 2000; j += 97)
			assert_ptr_not_equal(first[i], first[j]);
	}
	{
		np_cpuset e;
		const np_cpuset *k;

		np_cpuset_zero(&e);
		k = np_cpuset_intern(&p, &e);
		assert_true(k && np_cpuset_empty(k));
		assert_int_equal(p.n, 2001);
	}
	taken = np_cpuset_pool_take(&p, &n);
	assert_int_equal(n, 2001);
	assert_int_equal(p.n, 0);
	assert_ptr_equal(taken[5], first[5]); /* still valid, now ours */
	for (int i = 0; i < n; i++)
		free(taken[i]);
	free(taken);
	/* the emptied pool takes sets again; freed with them */
	assert_non_null(np_cpuset_intern(&p, &(np_cpuset){{1}}));
	np_cpuset_pool_free(&p);
	assert_null(p.sets);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_format),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_algebra),
		cmocka_unit_test(test_iteration),
		cmocka_unit_test(test_format_limits),
		cmocka_unit_test(test_nodemask),
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_pool),
	};
	return cmocka_run_group_tests_name("cpuset", tests, NULL, NULL);
}
