// SPDX-License-Identifier: Apache-2.0
/*
 * The systemd driver's pure parts: unit names numaplace accepts, slice
 * paths, AllowedCPUs masks as systemd sends them ("ay", bit b of byte k is
 * CPU 8k+b, as read back from systemd 252 in ../shared/reference), and the
 * configuration keys (cgroup_driver and what it needs).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "enforce/systemd_bus.h"
#include "numaplace/config.h"
#include "numaplace/enforcer.h"
#include "fixtures.h"

static void test_unit_names(void **state)
{
	static const char *const good[] = {"system.slice", "init.scope",
					   "getty@tty1.service",
					   "a-b_c:d.service", "x\\x2dy.scope"};
	static const struct {
		const char *name, *says;
	} bad[] = {
		{"", "empty"},
		{"system", "not a slice, scope or service"},
		{"foo.socket", "not a slice, scope or service"},
		{"../x.service", "must not contain"},
		{"a/b.service", "must not contain"},
		{"a..b.service", "must not contain"},
		{"a b.service", "character ' '"},
		{".service", "not a slice, scope or service"},
	};
	char err[512];
	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		if (np_systemd_unit_check(good[i], err, sizeof(err)))
			fail_msg("%s refused: %s", good[i], err);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(np_systemd_unit_check(bad[i].name, err,
						       sizeof(err)),
				 -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("\"%s\": \"%s\" does not say \"%s\"",
				 bad[i].name, err, bad[i].says);
	}
}

static void test_unit_of_cgroup(void **state)
{
	char unit[256], err[512];
	(void)state;
	assert_int_equal(np_systemd_unit_of_cgroup("system.slice", unit,
						   sizeof(unit), err,
						   sizeof(err)),
			 0);
	assert_string_equal(unit, "system.slice");
	assert_int_equal(np_systemd_unit_of_cgroup("system.slice/cron.service",
						   unit, sizeof(unit), err,
						   sizeof(err)),
			 0);
	assert_string_equal(unit, "cron.service");
	assert_int_equal(np_systemd_unit_of_cgroup("np/w1", unit, sizeof(unit),
						   err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "\"np/w1\" is not a systemd unit's cgroup"));
	/* where systemd puts the unit, or refused naming where that is */
	assert_int_equal(np_systemd_unit_of_cgroup("init.scope", unit,
						   sizeof(unit), err,
						   sizeof(err)),
			 0);
	assert_int_equal(np_systemd_unit_of_cgroup(
			     "system.slice/system-getty.slice/getty@tty1.service",
			     unit, sizeof(unit), err, sizeof(err)),
			 0);
	assert_string_equal(unit, "getty@tty1.service");
	assert_int_equal(np_systemd_unit_of_cgroup("system.slice/x.slice", unit,
						   sizeof(unit), err,
						   sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "cgroup \"system.slice/x.slice\" is not where "
				 "systemd puts x.slice (x.slice)");
	assert_int_equal(np_systemd_unit_of_cgroup("user.slice/cron.service/sub.service",
						   unit, sizeof(unit), err,
						   sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "sub.service is not in a slice"));
	assert_int_equal(np_systemd_unit_of_cgroup("a.slice/cron.service", unit,
						   sizeof(unit), err,
						   sizeof(err)),
			 0);
	assert_int_equal(np_systemd_unit_of_cgroup("b.slice/a-b.slice/x.scope",
						   unit, sizeof(unit), err,
						   sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "cgroup \"b.slice/a-b.slice/x.scope\" is not "
				 "where systemd puts x.scope "
				 "(a.slice/a-b.slice/x.scope)");
}

static void test_slice_path(void **state)
{
	char p[256], err[512];
	(void)state;
	assert_int_equal(np_systemd_slice_path("numaplace.slice", p, sizeof(p), err,
					  sizeof(err)),
			 0);
	assert_string_equal(p, "numaplace.slice");
	assert_int_equal(np_systemd_slice_path("a-b-c.slice", p, sizeof(p), err,
					  sizeof(err)),
			 0);
	assert_string_equal(p, "a.slice/a-b.slice/a-b-c.slice");
	assert_int_equal(np_systemd_slice_path("-.slice", p, sizeof(p), err,
					  sizeof(err)),
			 0);
	assert_string_equal(p, "");
	assert_int_equal(np_systemd_slice_path("a--b.slice", p, sizeof(p), err,
					  sizeof(err)),
			 -EINVAL);
	assert_int_equal(np_systemd_slice_path("x.service", p, sizeof(p), err,
					  sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "not a slice"));
}

static void test_masks(void **state)
{
	uint8_t m[16];
	np_cpuset s, back;
	(void)state;
	/* the reference's readings: 4-7 is "1 240", 4-5 "1 48", 8-9 "2 0 3" */
	assert_int_equal(np_cpuset_parse(&s, "4-7", NULL, 0), 0);
	assert_int_equal(np_systemd_bus_mask_from_cpuset(&s, m, sizeof(m)), 1);
	assert_int_equal(m[0], 240);
	assert_int_equal(np_cpuset_parse(&s, "4-5", NULL, 0), 0);
	assert_int_equal(np_systemd_bus_mask_from_cpuset(&s, m, sizeof(m)), 1);
	assert_int_equal(m[0], 48);
	assert_int_equal(np_cpuset_parse(&s, "8-9", NULL, 0), 0);
	assert_int_equal(np_systemd_bus_mask_from_cpuset(&s, m, sizeof(m)), 2);
	assert_int_equal(m[0], 0);
	assert_int_equal(m[1], 3);
	/* systemd pads to 8 bytes */
	{
		const uint8_t padded[8] = {240, 0, 0, 0, 0, 0, 0, 0};
		np_systemd_bus_mask_to_cpuset(padded, sizeof(padded), &back);
		assert_int_equal(np_cpuset_parse(&s, "4-7", NULL, 0), 0);
		assert_true(np_cpuset_equal(&s, &back));
	}
	assert_int_equal(np_cpuset_parse(&s, "0,63,64,127", NULL, 0), 0);
	np_systemd_bus_mask_to_cpuset(m, np_systemd_bus_mask_from_cpuset(&s, m, sizeof(m)), &back);
	assert_true(np_cpuset_equal(&s, &back));
	np_cpuset_zero(&s);
	assert_int_equal(np_systemd_bus_mask_from_cpuset(&s, m, sizeof(m)), 0);
}

static int config_of(const char *txt, struct np_config *c, char *err,
		     size_t errlen)
{
	json_error_t je;
	json_t *j = json_loads(txt, 0, &je);
	int r;
	assert_non_null(j);
	r = np_config_from_json(c, j, err, errlen);
	json_decref(j);
	return r;
}

static void test_config(void **state)
{
	static const struct {
		const char *json, *says;
	} bad[] = {
		{"{\"cgroup_driver\":\"sd\"}", "config.cgroup_driver: \"sd\""},
		{"{\"cgroup_driver\":1}", "config.cgroup_driver"},
		{"{\"cgroup_driver\":\"systemd\",\"cgroup_parent\":\"np/x\"}",
		 "config.cgroup_parent: under cgroup_driver \"systemd\""},
		{"{\"cgroup_driver\":\"systemd\",\"cgroup_parent\":\"np.scope\"}",
		 "config.cgroup_parent"},
		{"{\"cgroup_driver\":\"systemd\",\"shared_cgroups\":[\"np/w\"]}",
		 "config.shared_cgroups[0]: cgroup \"np/w\" is not a systemd"},
		{"{\"cgroup_driver\":\"systemd\",\"cgroup_root\":\"/tmp\","
		 "\"fake_cgroup_root\":true}",
		 "config.cgroup_driver: \"systemd\" cannot use a fake"},
	};
	struct np_config c;
	char err[512];
	(void)state;
	assert_int_equal(config_of("{}", &c, err, sizeof(err)), 0);
	assert_int_equal(c.driver, NP_DRIVER_AUTO);
	assert_false(c.shared_set);
	np_config_systemd_defaults(&c);
	assert_int_equal(c.nshared, 4);
	assert_string_equal(c.shared_cgroups[0], "system.slice");
	assert_string_equal(c.shared_cgroups[2], "init.scope");
	assert_int_equal(config_of("{\"cgroup_driver\":\"systemd\","
				   "\"shared_cgroups\":[\"init.scope\"]}",
				   &c, err, sizeof(err)),
			 0);
	assert_int_equal(c.driver, NP_DRIVER_SYSTEMD);
	np_config_systemd_defaults(&c); /* given: kept */
	assert_int_equal(c.nshared, 1);
	assert_int_equal(config_of("{\"cgroup_driver\":\"cgroupfs\"}", &c, err,
				   sizeof(err)),
			 0);
	assert_string_equal(np_cgroup_driver_name(c.driver), "cgroupfs");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_not_equal(config_of(bad[i].json, &c, err, sizeof(err)),
				     0);
		if (!strstr(err, bad[i].says))
			fail_msg("%s: \"%s\" does not say \"%s\"", bad[i].json,
				 err, bad[i].says);
	}
}

/* "unit" in a workload spec: checked, exclusive with cgroup, round trip. */
static void test_unit_spec(void **state)
{
	static const struct {
		const char *json, *says;
	} bad[] = {
		{"{\"name\":\"a\",\"unit\":\"a/b.service\",\"qos\":\"LS\","
		 "\"containers\":[{\"name\":\"m\",\"cpu\":\"1\"}]}",
		 "spec.unit: unit name \"a/b.service\" must not contain"},
		{"{\"name\":\"a\",\"unit\":\"x.mount\",\"qos\":\"LS\","
		 "\"containers\":[{\"name\":\"m\",\"cpu\":\"1\"}]}",
		 "spec.unit: \"x.mount\" is not a slice, scope or service"},
		{"{\"name\":\"a\",\"unit\":\"x.service\",\"cgroup\":\"a\","
		 "\"qos\":\"LS\",\"containers\":[{\"name\":\"m\",\"cpu\":\"1\"}]}",
		 "spec.unit: a workload has a unit or a cgroup, not both"},
		{"{\"name\":\"a\",\"unit\":\"x.service\",\"qos\":\"LS\","
		 "\"containers\":[{\"name\":\"m\",\"cpu\":\"1\",\"cgroup\":\"c\"}]}",
		 "spec.unit: the containers of a unit workload have no cgroups"},
	};
	struct np_workload_req w, copy;
	char err[512], *txt;
	json_t *j;
	(void)state;
	assert_int_equal(np_test_spec("{\"name\":\"a\",\"unit\":\"busy.service\","
				 "\"qos\":\"LSE\",\"containers\":[{\"name\":"
				 "\"m\",\"cpu\":\"2\"}]}",
				 &w, err, sizeof(err)),
			 0);
	assert_string_equal(w.unit, "busy.service");
	assert_string_equal(w.cgroup, "");
	assert_int_equal(np_workload_req_copy(&copy, &w), 0);
	assert_string_equal(copy.unit, "busy.service");
	j = np_workload_req_to_json(&copy);
	txt = json_dumps(j, JSON_SORT_KEYS);
	assert_non_null(strstr(txt, "\"unit\": \"busy.service\""));
	assert_null(strstr(txt, "\"cgroup\""));
	free(txt);
	json_decref(j);
	np_workload_req_free(&copy);
	np_workload_req_free(&w);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_not_equal(np_test_spec(bad[i].json, &w, err, sizeof(err)),
				     0);
		np_workload_req_free(&w);
		if (!strstr(err, bad[i].says))
			fail_msg("%s: \"%s\" does not say \"%s\"", bad[i].json,
				 err, bad[i].says);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unit_names),
		cmocka_unit_test(test_unit_of_cgroup),
		cmocka_unit_test(test_slice_path),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_config),
		cmocka_unit_test(test_unit_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
