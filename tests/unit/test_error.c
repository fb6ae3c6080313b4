// SPDX-License-Identifier: Apache-2.0
/*
 * np_echo (numaplace/error.h): how every message echoes a value the user
 * gave, whole up to NP_ECHO_MAX bytes, else cut with "...".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "numaplace/error.h"

static void test_short_kept(void **state)
{
	char exact[NP_ECHO_MAX + 1];
	const char *s = "web";

	(void)state;
	assert_ptr_equal(np_echo(s), s); /* not copied */
	assert_string_equal(np_echo(""), "");
	assert_string_equal(np_echo(NULL), "(null)");
	memset(exact, 'a', NP_ECHO_MAX);
	exact[NP_ECHO_MAX] = '\0';
	assert_string_equal(np_echo(exact), exact);
}

static void test_long_cut(void **state)
{
	static char big[10001];
	char want[NP_ECHO_SIZE];
	char msg[512];

	(void)state;
	memset(big, 'a', sizeof(big) - 1);
	memset(want, 'a', NP_ECHO_MAX);
	strcpy(want + NP_ECHO_MAX, "...");
	assert_string_equal(np_echo(big), want);
	/* two in one message, each its own buffer */
	snprintf(msg, sizeof(msg), "%s|%s", np_echo(big), np_echo("x"));
	assert_int_equal(strlen(msg), NP_ECHO_MAX + 3 + 2);
	assert_string_equal(msg + NP_ECHO_MAX + 3, "|x");
}

/* A cut never splits a UTF-8 character: "é" (2 bytes) across the limit
 * goes whole to the next side. */
static void test_utf8(void **state)
{
	char s[NP_ECHO_MAX + 16];
	const char *e;

	(void)state;
	memset(s, 'a', sizeof(s));
	memcpy(s + NP_ECHO_MAX - 1, "\xc3\xa9", 2); /* bytes 127, 128 */
	s[sizeof(s) - 1] = '\0';
	e = np_echo(s);
	assert_int_equal(strlen(e), NP_ECHO_MAX - 1 + 3);
	assert_string_equal(e + NP_ECHO_MAX - 1, "...");
	memcpy(s + NP_ECHO_MAX - 2, "\xe2\x82\xac", 3); /* 126..128: euro */
	e = np_echo(s);
	assert_int_equal(strlen(e), NP_ECHO_MAX - 2 + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_short_kept),
		cmocka_unit_test(test_long_cut),
		cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests_name("echo", tests, NULL, NULL);
}
