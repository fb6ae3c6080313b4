// SPDX-License-Identifier: Apache-2.0
/*
 * Validated field access on JSON objects (userspace/engine/json_util.h),
 * which every parser of outside input (config, specs, requests, state)
 * goes through: a present field of the right type and range is read; an
 * absent optional one is -ENOENT with the output untouched; a wrong type,
 * a value out of range, a missing required field or an unknown key is
 * -EINVAL with a message naming its JSON path, and the output untouched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "engine/json_util.h"

static json_t *obj(const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);

	if (!j)
		fail_msg("bad test JSON %s: %s", text, je.text);
	return j;
}

#define assert_says(err, want)                                                 \
	do {                                                                   \
		if (strcmp((err), (want)))                                     \
			fail_msg("said \"%s\", want \"%s\"", (err), (want));   \
	} while (0)

static void test_int(void **state)
{
	json_t *j = obj("{\"n\": 7, \"r\": 3.0, \"f\": 2.5, \"s\": \"7\","
			" \"big\": 1e30, \"z\": null, \"neg\": -4}");
	char err[256];
	long long v = 99;

	(void)state;
	assert_int_equal(
	    np_json_int(j, "n", "cfg", true, 0, 10, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 7);
	/* a real holding an integer is that integer */
	assert_int_equal(
	    np_json_int(j, "r", "cfg", true, 0, 10, &v, err, sizeof(err)), 0);
	assert_int_equal(v, 3);

	v = 99;
	assert_int_equal(
	    np_json_int(j, "absent", "cfg", false, 0, 10, &v, err, sizeof(err)),
	    -ENOENT);
	assert_int_equal(
	    np_json_int(j, "z", "cfg", false, 0, 10, &v, err, sizeof(err)),
	    -ENOENT);
	assert_int_equal(v, 99);

	assert_int_equal(
	    np_json_int(j, "absent", "cfg", true, 0, 10, &v, err, sizeof(err)),
	    -EINVAL);
	assert_says(err, "cfg.absent: required field is missing");
	assert_int_equal(
	    np_json_int(j, "n", "cfg", true, 0, 5, &v, err, sizeof(err)),
	    -EINVAL);
	assert_says(err, "cfg.n: 7 is out of range 0..5");
	assert_int_equal(
	    np_json_int(j, "neg", "a.b[2]", true, 0, 5, &v, err, sizeof(err)),
	    -EINVAL);
	assert_says(err, "a.b[2].neg: -4 is out of range 0..5");
	assert_int_equal(
	    np_json_int(j, "f", "cfg", true, 0, 10, &v, err, sizeof(err)),
	    -EINVAL);
	assert_says(err, "cfg.f: expected an integer, got 2.5");
	assert_int_equal(
	    np_json_int(j, "s", "cfg", true, 0, 10, &v, err, sizeof(err)),
	    -EINVAL);
	assert_says(err, "cfg.s: expected an integer");
	/* outside long long: refused before any cast */
	assert_int_equal(
	    np_json_int(j, "big", "cfg", true, 0, 10, &v, err, sizeof(err)),
	    -EINVAL);
	assert_says(err, "cfg.big: 1e+30 is out of range 0..10");
	assert_int_equal(v, 99);
	json_decref(j);
}

static void test_bool_str_cpuset(void **state)
{
	json_t *j = obj("{\"b\": true, \"i\": 1, \"s\": \"web\","
			" \"cpus\": \"0-3,8\", \"bad\": \"3-1\"}");
	char err[256];
	bool b = false;
	const char *s = NULL;
	np_cpuset cs, want;

	(void)state;
	assert_int_equal(np_json_bool(j, "b", "", true, &b, err, sizeof(err)),
			 0);
	assert_true(b);
	assert_int_equal(np_json_bool(j, "i", "", true, &b, err, sizeof(err)),
			 -EINVAL);
	/* no path: the key alone */
	assert_says(err, "i: expected true or false");
	assert_int_equal(
	    np_json_str(j, "s", "spec", true, &s, err, sizeof(err)), 0);
	assert_string_equal(s, "web");
	s = NULL;
	assert_int_equal(
	    np_json_str(j, "b", "spec", true, &s, err, sizeof(err)), -EINVAL);
	assert_says(err, "spec.b: expected a string");
	assert_null(s);

	assert_int_equal(
	    np_json_cpuset(j, "cpus", "spec", true, &cs, err, sizeof(err)), 0);
	assert_int_equal(np_cpuset_parse(&want, "0,1,2,3,8", err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cs, &want));
	assert_int_equal(
	    np_json_cpuset(j, "bad", "spec", true, &cs, err, sizeof(err)),
	    -EINVAL);
	if (strncmp(err, "spec.bad: invalid cpu list: ", 28))
		fail_msg("said \"%s\"", err);
	json_decref(j);
}

static void test_only_keys(void **state)
{
	static const char *const allowed[] = {"name", "cpus", NULL};
	json_t *ok = obj("{\"name\": 1, \"cpus\": 2}");
	json_t *extra = obj("{\"name\": 1, \"cpu\": 2}");
	json_t *arr = obj("[1]");
	char err[256];

	(void)state;
	assert_int_equal(
	    np_json_only_keys(ok, allowed, "spec", err, sizeof(err)), 0);
	assert_int_equal(
	    np_json_only_keys(extra, allowed, "spec", err, sizeof(err)),
	    -EINVAL);
	assert_says(err, "spec.cpu: unknown field");
	assert_int_equal(
	    np_json_only_keys(arr, allowed, "spec", err, sizeof(err)), -EINVAL);
	assert_says(err, "spec: expected an object");
	assert_int_equal(
	    np_json_only_keys(arr, allowed, NULL, err, sizeof(err)), -EINVAL);
	assert_says(err, "input: expected an object");
	json_decref(ok);
	json_decref(extra);
	json_decref(arr);
}

/* An unknown key is the user's text: echoed at most NP_ECHO_MAX bytes. */
static void test_unknown_key_echo(void **state)
{
	static const char *const allowed[] = {"name", NULL};
	char key[600], err[1024];
	json_t *j = json_object();

	(void)state;
	memset(key, 'k', sizeof(key) - 1);
	key[sizeof(key) - 1] = '\0';
	json_object_set_new(j, key, json_true());
	assert_int_equal(
	    np_json_only_keys(j, allowed, "spec", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "...: unknown field"));
	assert_true(strlen(err) < 300);
	json_decref(j);
}

static void test_paths_and_builders(void **state)
{
	char buf[64];
	np_cpuset cs;
	struct np_hint h = {0};
	json_t *j;
	char *text;

	(void)state;
	assert_string_equal(np_json_path(buf, sizeof(buf), "a", "b", 0), "a.b");
	assert_string_equal(np_json_path(buf, sizeof(buf), "a", NULL, 3),
			    "a[3]");
	assert_string_equal(np_json_path(buf, sizeof(buf), "", "b", 0), "b");
	assert_string_equal(np_json_path(buf, sizeof(buf), NULL, NULL, 0),
			    "[0]");

	assert_int_equal(np_cpuset_parse(&cs, "8,0,1,2,3", buf, sizeof(buf)),
			 0);
	j = np_json_cpuset_str(&cs);
	assert_string_equal(json_string_value(j), "0-3,8");
	json_decref(j);

	h.mask = 0x5; /* nodes 0 and 2 */
	h.preferred = true;
	j = np_json_hint(&h);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"mask\":[0,2],\"preferred\":true}");
	free(text);
	json_decref(j);
	h.any = true;
	h.preferred = false;
	j = np_json_hint(&h);
	text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text, "{\"mask\":null,\"preferred\":false}");
	free(text);
	json_decref(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_int),
	    cmocka_unit_test(test_bool_str_cpuset),
	    cmocka_unit_test(test_only_keys),
	    cmocka_unit_test(test_unknown_key_echo),
	    cmocka_unit_test(test_paths_and_builders),
	};
	return cmocka_run_group_tests_name("json_util", tests, NULL, NULL);
}
