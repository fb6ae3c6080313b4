// SPDX-License-Identifier: Apache-2.0
/*
 * Kubernetes resource quantities (numaplace/quantity.h): CPU in millicores
 * and bytes, with the suffixes of k8s.io/apimachinery's resource.Quantity
 * (decimal k M G T P E, binary Ki Mi Gi Ti Pi Ei, "m" for CPU only),
 * refused when not a whole unit, unknown or too large (the message echoes
 * the quantity), and the byte rendering read back to the same value.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "numaplace/quantity.h"

static void cpu_is(const char *s, int64_t want)
{
	char err[256] = "";
	int64_t got = -1;

	if (np_quantity_cpu_milli(s, &got, err, sizeof(err)))
		fail_msg("cpu \"%s\" refused: %s", s, err);
	if (got != want)
		fail_msg("cpu \"%s\" = %lld millicores, want %lld", s,
			 (long long)got, (long long)want);
}

static void cpu_refused(const char *s, int code, const char *says)
{
	char err[256] = "";
	int64_t got = 12345;
	int r = np_quantity_cpu_milli(s, &got, err, sizeof(err));

	if (r != code)
		fail_msg("cpu \"%s\": %d (%s), want %d", s, r, err, code);
	assert_int_equal(got, 12345); /* untouched */
	if (!strstr(err, says))
		fail_msg("cpu \"%s\": \"%s\" does not say \"%s\"", s, err,
			 says);
}

static void bytes_is(const char *s, uint64_t want)
{
	char err[256] = "";
	uint64_t got = 0;

	if (np_quantity_bytes(s, &got, err, sizeof(err)))
		fail_msg("bytes \"%s\" refused: %s", s, err);
	if (got != want)
		fail_msg("bytes \"%s\" = %llu, want %llu", s,
			 (unsigned long long)got, (unsigned long long)want);
}

static void bytes_refused(const char *s, int code, const char *says)
{
	char err[256] = "";
	uint64_t got = 777;
	int r = np_quantity_bytes(s, &got, err, sizeof(err));

	if (r != code)
		fail_msg("bytes \"%s\": %d (%s), want %d", s, r, err, code);
	assert_int_equal(got, 777);
	if (!strstr(err, says))
		fail_msg("bytes \"%s\": \"%s\" does not say \"%s\"", s, err,
			 says);
}

static void test_cpu(void **state)
{
	(void)state;
	cpu_is("2", 2000);
	cpu_is("0", 0);
	cpu_is("1500m", 1500);
	cpu_is("0.5", 500);
	cpu_is("2.25", 2250);
	cpu_is(".5", 500);
	cpu_is("1.", 1000);
	cpu_is("1k", 1000000);
	cpu_is("1Ki", 1024000);
	cpu_is("0.001", 1);
	cpu_is("9223372036854775", 9223372036854775000LL);

	cpu_refused("", -EINVAL, "empty quantity");
	cpu_refused("m", -EINVAL, "does not start with a number");
	cpu_refused("-1", -EINVAL, "does not start with a number");
	cpu_refused("2 ", -EINVAL, "unknown suffix \" \"");
	cpu_refused("2x", -EINVAL, "unknown suffix \"x\"");
	cpu_refused("2mm", -EINVAL, "unknown suffix \"mm\"");
	/* less than a millicore, and a fraction of one */
	cpu_refused("0.0001", -EINVAL, "not a whole number of millicores");
	cpu_refused("1.5m", -EINVAL, "not a whole number of millicores");
	/* past INT64_MAX millicores, and past 2^64 before any suffix */
	cpu_refused("9223372036854776", -ERANGE, "too large");
	cpu_refused("99999999999999999999999", -ERANGE, "too large");
	cpu_refused("1E", -ERANGE, "\"1E\" is too large");
}

static void test_bytes(void **state)
{
	(void)state;
	bytes_is("1000", 1000);
	bytes_is("2Gi", 2ULL << 30);
	bytes_is("512Mi", 512ULL << 20);
	bytes_is("1G", 1000000000ULL);
	bytes_is("1.5Ki", 1536);
	bytes_is("0.5Gi", 1ULL << 29);
	bytes_is("7Ei", 7ULL << 60);
	bytes_is("1E", 1000000000000000000ULL);

	bytes_refused("1m", -EINVAL, "unknown suffix \"m\"");
	bytes_refused("1.5", -EINVAL, "not a whole number of bytes");
	bytes_refused("0.3Ki", -EINVAL, "not a whole number of bytes");
	bytes_refused("8Ei", -ERANGE, "too large"); /* 2^63 > INT64_MAX */
	bytes_refused("Gi", -EINVAL, "does not start with a number");
	bytes_refused("1gi", -EINVAL, "unknown suffix \"gi\"");
}

/* The rendering uses the largest binary suffix that divides the value and
 * reads back to the same number of bytes. */
static void test_format_round_trip(void **state)
{
	static const struct {
		uint64_t v;
		const char *s;
	} cases[] = {
	    {0, "0"},
	    {1000, "1000"},
	    {1024, "1Ki"},
	    {1536, "1536"},
	    {3ULL << 20, "3Mi"},
	    {(1ULL << 30) + (1ULL << 20), "1025Mi"},
	    {5ULL << 60, "5Ei"},
	    {12ULL << 60, "12Ei"}, /* no suffix past Ei */
	};
	char buf[64];
	uint64_t x = 0x243F6A8885A308D3ULL;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		np_quantity_format_bytes(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].s);
	}
	for (int i = 0; i < 2000; i++) {
		uint64_t v, back = 0;
		char err[128];

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		/* up to 2^62, a random number of trailing zero bits */
		v = (x >> 2) & ~((1ULL << (x % 48)) - 1);
		np_quantity_format_bytes(v, buf, sizeof(buf));
		if (np_quantity_bytes(buf, &back, err, sizeof(err)))
			fail_msg("%llu rendered \"%s\": %s",
				 (unsigned long long)v, buf, err);
		if (back != v)
			fail_msg("%llu rendered \"%s\", read back %llu",
				 (unsigned long long)v, buf,
				 (unsigned long long)back);
	}
}

/* What the user gave is echoed, cut at NP_ECHO_MAX bytes. */
static void test_echo_bounded(void **state)
{
	char big[1000], err[512];
	int64_t v;

	(void)state;
	memset(big, '9', sizeof(big) - 2);
	big[sizeof(big) - 2] = 'x';
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(np_quantity_cpu_milli(big, &v, err, sizeof(err)),
			 -ERANGE);
	assert_non_null(strstr(err, "..."));
	assert_true(strlen(err) < 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cpu),
	    cmocka_unit_test(test_bytes),
	    cmocka_unit_test(test_format_round_trip),
	    cmocka_unit_test(test_echo_bounded),
	};
	return cmocka_run_group_tests_name("quantity", tests, NULL, NULL);
}
