// SPDX-License-Identifier: Apache-2.0
/* Daemon configuration: defaults, the shipped example, and every kind of
 * bad value refused with the key named. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "numaplace/config.h"

static void test_example(void **state)
{
	struct np_config c;
	char err[256];
	(void)state;
	if (np_config_load(&c, "dist/numaplace.example.json", err, sizeof(err)))
		fail_msg("example config: %s", err);
	assert_int_equal(c.reconcile_period_ms, 10000);
	assert_int_equal(c.policy.cpu_policy, NP_CPU_POLICY_STATIC);
	assert_true(c.policy.opt.full_pcpus_only);
	assert_int_equal(c.policy.tm_policy, NP_TM_RESTRICTED);
	assert_true(c.policy.prefer_closest);
	assert_int_equal(c.nshared, 4);
	assert_string_equal(c.shared_cgroups[0], "system.slice");
	assert_string_equal(c.shared_cgroups[2], "init.scope");
	assert_int_equal(c.driver, NP_DRIVER_AUTO);
	assert_int_equal(c.host_isolation, NP_HOSTISO_PARTITION);
	assert_int_equal(c.on_cpu_offline, NP_OFFLINE_REPORT);
	assert_string_equal(c.cpu_online_file, "/sys/devices/system/cpu/online");
	assert_string_equal(c.cgroup_root, "");
	assert_string_equal(c.socket_path, "/run/numaplace/numaplace.sock");
}

/* A topology file describes another machine: its hotplug is not this
 * one's unless the file is named; "" turns it off on a live topology. */
static void good_offline(void)
{
	struct np_config c;
	char err[256];
	json_t *j = json_loads("{\"topology\": \"/t.json\"}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_string_equal(c.cpu_online_file, "");
	json_decref(j);
	j = json_loads("{\"cpu_online_file\": \"\", \"on_cpu_offline\": "
		       "\"replace\"}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_string_equal(c.cpu_online_file, "");
	assert_int_equal(c.on_cpu_offline, NP_OFFLINE_REPLACE);
	json_decref(j);
}

static void test_defaults(void **state)
{
	struct np_config c;
	json_t *j = json_object();
	char err[256];
	(void)state;
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_int_equal(c.reconcile_period_ms, 10000);
	assert_string_equal(c.topology, "live");
	/* hotplug followed on this machine's topology only */
	assert_string_equal(c.cpu_online_file, "/sys/devices/system/cpu/online");
	assert_string_equal(c.cgroup_parent, "numaplace.slice");
	assert_string_equal(c.state_dir, "/var/lib/numaplace");
	assert_string_equal(c.runtime_dir, "/run/numaplace");
	assert_int_equal(c.policy.cpu_policy, NP_CPU_POLICY_NONE);
	assert_true(c.create_cgroups);
	assert_false(c.fake_cgroup_root);
	assert_int_equal(c.host_isolation, NP_HOSTISO_PARTITION);
	assert_string_equal(c.metrics_listen, "127.0.0.1:9464");
	json_decref(j);
	/* metrics: off, a Unix socket, and back out in the JSON form */
	j = json_loads("{\"metrics\": {\"listen\": \"\"}}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_string_equal(c.metrics_listen, "");
	json_decref(j);
	j = json_loads("{\"metrics\": {\"listen\": \"unix:/run/m.sock\"}}", 0,
		       NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	json_decref(j);
	j = np_config_to_json(&c);
	assert_string_equal(json_string_value(json_object_get(
				    json_object_get(j, "metrics"), "listen")),
			    "unix:/run/m.sock");
	json_decref(j);
}

/* host_isolation: each value, and back out in the JSON form. */
static void test_host_isolation(void **state)
{
	static const char *const names[] = {"partition", "exclusive", "off"};
	struct np_config c;
	char err[256], text[64];
	(void)state;
	for (int i = 0; i < 3; i++) {
		json_t *j, *out;
		snprintf(text, sizeof(text), "{\"host_isolation\": \"%s\"}",
			 names[i]);
		j = json_loads(text, 0, NULL);
		assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
		assert_int_equal(c.host_isolation, i);
		out = np_config_to_json(&c);
		assert_string_equal(json_string_value(json_object_get(
					    out, "host_isolation")),
				    names[i]);
		json_decref(out);
		json_decref(j);
	}
}

static void test_verify(void **state)
{
	struct np_config c;
	json_error_t jerr;
	json_t *j = json_loads(
		"{\"verify\": {\"enabled\": \"on\", \"max_workloads\": 10000, "
		"\"tick_hz\": 0, \"settle_ms\": 250, \"on_intrusion\": "
		"\"partition\", \"on_remote_memory\": \"migrate\", "
		"\"remote_fault_ratio\": 0.25, \"outside_mems_bytes\": \"1Gi\", "
		"\"min_fault_pages\": 0}}",
		0, &jerr);
	char err[256];
	json_t *back;
	(void)state;
	assert_non_null(j);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_int_equal(c.verify.enabled, NP_VERIFY_ON);
	assert_int_equal(c.verify.max_workloads, 10000);
	assert_int_equal(c.verify.tick_hz, 0);
	assert_int_equal(c.verify.settle_ms, 250);
	assert_int_equal(c.verify.on_intrusion, NP_ACT_PARTITION);
	assert_int_equal(c.verify.on_remote_memory, NP_ACT_MIGRATE);
	assert_true(c.verify.remote_fault_ratio > 0.24 &&
		    c.verify.remote_fault_ratio < 0.26);
	assert_int_equal(c.verify.outside_mems_bytes, 1ULL << 30);
	assert_int_equal(c.verify.min_fault_pages, 0);
	assert_int_equal(c.verify.migrate_interval_s, 60); /* default kept */
	/* what the daemon reports is what it parsed */
	back = np_config_to_json(&c);
	assert_string_equal(
		json_string_value(json_object_get(json_object_get(back, "verify"),
						  "on_remote_memory")),
		"migrate");
	json_decref(back);
	json_decref(j);
	/* the defaults */
	j = json_object();
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_int_equal(c.verify.enabled, NP_VERIFY_AUTO);
	assert_int_equal(c.verify.tick_hz, 99);
	assert_int_equal(c.verify.on_intrusion, NP_ACT_REPORT);
	json_decref(j);
}

static void bad(const char *json, const char *needle)
{
	struct np_config c;
	json_error_t jerr;
	json_t *j = json_loads(json, 0, &jerr);
	char err[256] = "";
	assert_non_null(j);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), -EINVAL);
	if (!strstr(err, needle))
		fail_msg("config %s: error \"%s\" lacks \"%s\"", json, err, needle);
	json_decref(j);
}

static void test_errors(void **state)
{
	bad("{\"verify\": 1}", "config.verify: expected an object");
	bad("{\"verify\": {\"tick\": 1}}", "config.verify");
	bad("{\"verify\": {\"enabled\": \"yes\"}}",
	    "config.verify.enabled: \"yes\" is not one of \"auto\", \"on\", \"off\"");
	bad("{\"verify\": {\"on_intrusion\": \"migrate\"}}",
	    "config.verify.on_intrusion");
	bad("{\"verify\": {\"on_remote_memory\": \"partition\"}}",
	    "config.verify.on_remote_memory");
	bad("{\"verify\": {\"max_workloads\": 0}}", "config.verify.max_workloads");
	/* an over-long value is not echoed before the reason */
	{
		char big[1400];
		int n = snprintf(big, sizeof(big), "{\"cgroup_parent\": \"");
		for (int k = 0; k < 600; k++)
			big[n++] = k % 2 ? '/' : 'a';
		snprintf(big + n, sizeof(big) - (size_t)n, "a\"}");
		bad(big, "config.cgroup_parent: longer than 511 characters");
	}
	/* places that must stay apart (issue 16) */
	bad("{\"spec_dir\": \"/var/lib/np\", \"state_dir\": \"/var/lib/np\"}",
	    "config.state_dir: \"/var/lib/np\" and spec_dir \"/var/lib/np\" must be apart");
	bad("{\"spec_dir\": \"/var/lib/np/specs\", \"state_dir\": \"/var/lib/np/\"}",
	    "must be apart (neither in the other)");
	/* runtime_dir: the records of what numaplaced changed on the host;
	 * in state_dir they would be taken for an older release's and
	 * moved, in spec_dir read as specs */
	bad("{\"runtime_dir\": \"/var/lib/numaplace\"}",
	    "config.runtime_dir: \"/var/lib/numaplace\" must be apart from "
	    "state_dir \"/var/lib/numaplace\" and spec_dir "
	    "\"/etc/numaplace/workloads.d\" (neither in the other)");
	bad("{\"runtime_dir\": \"/var/lib/numaplace/run\"}",
	    "config.runtime_dir: \"/var/lib/numaplace/run\" must be apart");
	bad("{\"runtime_dir\": \"/etc/numaplace\"}",
	    "config.runtime_dir: \"/etc/numaplace\" must be apart");
	bad("{\"runtime_dir\": \"run\"}",
	    "config.runtime_dir: \"run\" must be an absolute path");
	bad("{\"runtime_dir\": \"/run/../var\"}", "must not contain \"..\"");
	bad("{\"runtime_dir\": 3}", "config.runtime_dir");
	bad("{\"cgroup_parent\": \"np\", \"shared_cgroups\": [\"hostd\", \"np/web\"]}",
	    "config.shared_cgroups[1]: \"np/web\" is, holds or is inside "
	    "cgroup_parent \"np\"");
	bad("{\"cgroup_parent\": \"a/np\", \"shared_cgroups\": [\"a\"]}",
	    "config.shared_cgroups[0]: \"a\" is, holds or is inside");
	/* a real past long long is refused before any cast (undefined) */
	bad("{\"verify\": {\"settle_ms\": 1e300}}",
	    "config.verify.settle_ms: 1e+300 is out of range 0..60000");
	bad("{\"verify\": {\"settle_ms\": -1e19}}",
	    "config.verify.settle_ms: -1e+19 is out of range 0..60000");
	bad("{\"verify\": {\"settle_ms\": 1.5}}",
	    "config.verify.settle_ms: expected an integer, got 1.5");
	bad("{\"verify\": {\"remote_fault_ratio\": 1.5}}",
	    "config.verify.remote_fault_ratio");
	bad("{\"verify\": {\"outside_mems_bytes\": \"lots\"}}",
	    "config.verify.outside_mems_bytes");
	bad("{\"verify\": {\"tick_hz\": \"99\"}}", "config.verify.tick_hz");
	(void)state;
	bad("{\"reconcile_period\":10}", "config.reconcile_period: unknown field");
	bad("{\"reconcile_period_s\":0}", "config.reconcile_period_s");
	bad("{\"reconcile_period_s\":\"10\"}", "config.reconcile_period_s");
	bad("{\"state_dir\":\"var/lib\"}", "config.state_dir: \"var/lib\" must be an absolute path");
	bad("{\"state_dir\":\"/var/../etc\"}", "must not contain \"..\"");
	bad("{\"cgroup_parent\":\"/numaplace\"}", "config.cgroup_parent");
	bad("{\"cgroup_parent\":\"a/../b\"}", "config.cgroup_parent");
	bad("{\"shared_cgroups\":[\"system.slice\",3]}", "config.shared_cgroups[1]: expected a string");
	bad("{\"shared_cgroups\":\"system.slice\"}", "config.shared_cgroups");
	bad("{\"create_cgroups\":\"yes\"}", "config.create_cgroups: expected true or false");
	bad("{\"fake_cgroup_root\":true}", "config.fake_cgroup_root: needs an explicit cgroup_root");
	bad("{\"socket\":\"/run/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa.sock\"}",
	    "config.socket: longer than 107");
	bad("{\"node_policy\":{\"cpu_policy\":\"fast\"}}", "config.node_policy.cpu_policy");
	bad("{\"node_policy\":{\"topology_policy\":\"restricted\",\"extra\":1}}",
	    "config.node_policy.extra: unknown field");
	bad("{\"topology\":\"\"}", "config.topology");
	bad("{\"host_isolation\":\"all\"}",
	    "config.host_isolation: \"all\": expected one of \"partition\", "
	    "\"exclusive\", \"off\"");
	bad("{\"on_cpu_offline\":\"move\"}",
	    "config.on_cpu_offline: \"move\": expected one of \"report\", "
	    "\"replace\"");
	good_offline();
	bad("{\"cpu_online_file\":\"online\"}",
	    "config.cpu_online_file: \"online\" must be an absolute path");
	bad("{\"host_isolation\":true}",
	    "config.host_isolation: expected a string");
	bad("{\"metrics\":\"127.0.0.1:9464\"}",
	    "config.metrics: expected an object");
	bad("{\"metrics\":{\"port\":9464}}", "config.metrics.port");
	bad("{\"metrics\":{\"listen\":9464}}", "config.metrics.listen");
	bad("{\"metrics\":{\"listen\":\"localhost:9464\"}}",
	    "config.metrics.listen: 'localhost' is not an IPv4 address");
	bad("{\"export\":[]}", "config.export: expected an object");
	bad("{\"export\":{\"file\":\"/x\"}}", "config.export.file");
	bad("{\"export\":{\"node_name\":\"Node_1\"}}",
	    "config.export.node_name: \"Node_1\" is not a node name");
	bad("{\"export\":{\"nrt_file\":\"nrt.json\"}}",
	    "config.export.nrt_file: \"nrt.json\" must be an absolute path");
	bad("{\"export\":{\"nrt_file\":\"/etc/numaplace/workloads.d/n.json\"}}",
	    "config.export.nrt_file: \"/etc/numaplace/workloads.d/n.json\" is "
	    "inside spec_dir or state_dir");
	bad("{\"export\":{\"nrt_file\":\"/run/n.json\",\"koordinator_file\":"
	    "\"/run/n.json\"}}",
	    "config.export.koordinator_file: \"/run/n.json\" is inside spec_dir "
	    "or state_dir, or both files are one");
}

/* "oci_hook": defaults, the example's values, and each key refused by name. */
static void test_oci_hook(void **state)
{
	struct np_config c;
	char err[256];
	json_t *j = json_object(), *out;
	(void)state;
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_int_equal(c.oci_hook.timeout_ms, 2000);
	assert_int_equal(c.oci_hook.on_failure, NP_OCI_FAIL_OPEN);
	assert_string_equal(c.oci_hook.log_file, "/run/numaplace/oci-hook.log");
	json_decref(j);
	j = json_loads("{\"oci_hook\": {\"timeout_ms\": 100, \"on_failure\": "
		       "\"fail-closed\", \"log_file\": \"\"}}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_int_equal(c.oci_hook.timeout_ms, 100);
	assert_int_equal(c.oci_hook.on_failure, NP_OCI_FAIL_CLOSED);
	assert_string_equal(c.oci_hook.log_file, "");
	out = np_config_to_json(&c);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(out, "oci_hook"), "on_failure")),
			    "fail-closed");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(out, "oci_hook"), "timeout_ms")),
			 100);
	json_decref(out);
	json_decref(j);
	if (np_config_load(&c, "dist/numaplace.example.json", err, sizeof(err)))
		fail_msg("example config: %s", err);
	assert_int_equal(c.oci_hook.timeout_ms, 2000);
	assert_int_equal(c.oci_hook.on_failure, NP_OCI_FAIL_OPEN);
	bad("{\"oci_hook\": 2000}", "config.oci_hook: expected an object");
	bad("{\"oci_hook\": {\"timeout_ms\": 99}}",
	    "config.oci_hook.timeout_ms: expected an integer 100..60000");
	bad("{\"oci_hook\": {\"timeout_ms\": 60001}}",
	    "config.oci_hook.timeout_ms: expected an integer 100..60000");
	bad("{\"oci_hook\": {\"timeout_ms\": \"2s\"}}",
	    "config.oci_hook.timeout_ms: expected an integer 100..60000");
	bad("{\"oci_hook\": {\"on_failure\": \"open\"}}",
	    "config.oci_hook.on_failure: \"open\" is not fail-open or "
	    "fail-closed");
	bad("{\"oci_hook\": {\"on_failure\": true}}",
	    "config.oci_hook.on_failure");
	bad("{\"oci_hook\": {\"log_file\": \"run/x.log\"}}",
	    "config.oci_hook.log_file: \"run/x.log\" must be an absolute path");
	bad("{\"oci_hook\": {\"timeout\": 5}}",
	    "config.oci_hook.timeout: unknown field");
}

/* run_dir: the socket's directory unless given; placement_files on. */
static void test_run_dir(void **state)
{
	struct np_config c;
	char err[256];
	json_t *j = json_object();
	(void)state;
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_string_equal(c.run_dir, "/run/numaplace");
	assert_true(c.placement_files);
	json_decref(j);
	j = json_loads("{\"socket\": \"/tmp/np/x.sock\"}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_string_equal(c.run_dir, "/tmp/np");
	json_decref(j);
	j = json_loads("{\"socket\": \"/x.sock\"}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_string_equal(c.run_dir, "/");
	json_decref(j);
	j = json_loads("{\"run_dir\": \"/var/run/np\", \"placement_files\": "
		       "false}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_string_equal(c.run_dir, "/var/run/np");
	assert_false(c.placement_files);
	json_decref(j);
	j = json_loads("{\"run_dir\": \"np\"}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "config.run_dir: \"np\" must be an absolute path");
	json_decref(j);
}

/* be_suppress: off by default (threshold 65, Koordinator's default), the
 * Koordinator keys read and checked, printed back. */
static void test_be_suppress(void **state)
{
	struct np_config c;
	char err[256];
	json_t *j = json_object(), *out;
	(void)state;
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_int_equal(c.be_suppress.policy, NP_SUPPRESS_NONE);
	assert_int_equal(c.be_suppress.threshold, 65);
	assert_int_equal(c.be_suppress.min_cpus, 0);
	json_decref(j);
	j = json_loads("{\"be_suppress\": {\"cpuSuppressPolicy\": \"cpuset\", "
		       "\"cpuSuppressThresholdPercent\": 50, "
		       "\"cpuSuppressMinCPUs\": 4}}", 0, NULL);
	assert_int_equal(np_config_from_json(&c, j, err, sizeof(err)), 0);
	assert_int_equal(c.be_suppress.policy, NP_SUPPRESS_CPUSET);
	assert_int_equal(c.be_suppress.threshold, 50);
	assert_int_equal(c.be_suppress.min_cpus, 4);
	out = np_config_to_json(&c);
	assert_string_equal(json_string_value(json_object_get(
				json_object_get(out, "be_suppress"),
				"cpuSuppressPolicy")),
			    "cpuset");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(out, "be_suppress"),
			     "cpuSuppressThresholdPercent")),
			 50);
	json_decref(out);
	json_decref(j);
	bad("{\"be_suppress\": 65}", "config.be_suppress: expected an object");
	bad("{\"be_suppress\": {\"cpuSuppressThresholdPercent\": 101}}",
	    "config.be_suppress.cpuSuppressThresholdPercent: 101 is out of "
	    "range 0..100");
	bad("{\"be_suppress\": {\"cpuSuppressThresholdPercent\": 6.5}}",
	    "config.be_suppress.cpuSuppressThresholdPercent");
	bad("{\"be_suppress\": {\"cpuSuppressPolicy\": \"cfsquota\"}}",
	    "config.be_suppress.cpuSuppressPolicy: \"cfsquota\": expected "
	    "\"none\", \"cpuset\" or \"cfsQuota\"");
	bad("{\"be_suppress\": {\"cpuSuppressMinCPUs\": -2}}",
	    "config.be_suppress.cpuSuppressMinCPUs");
	bad("{\"be_suppress\": {\"cpuSuppressMinPercent\": 2}}",
	    "config.be_suppress.cpuSuppressMinPercent: unknown field");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_example),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_verify),
		cmocka_unit_test(test_host_isolation),
		cmocka_unit_test(test_oci_hook),
		cmocka_unit_test(test_run_dir),
		cmocka_unit_test(test_be_suppress),
	};
	return cmocka_run_group_tests_name("config", tests, NULL, NULL);
}
