// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace oci-hook's parsing (numaplace/oci.h): the OCI state, the
 * bundle's config.json and the kubelet's encoding of CPU requests in it,
 * cgroupsPath for the cgroupfs and systemd drivers, /proc/PID/cgroup, the
 * workload spec from numaplace.io/ and Koordinator annotations, and
 * numaplaced's answer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numaplace/oci.h"

#define CRUN_STATE                                                             \
	"{\"ociVersion\":\"1.0\",\"id\":\"ctr1\",\"pid\":225,\"root\":"        \
	"\"rootfs\",\"bundle\":\"/tmp/b1\",\"status\":\"created\","            \
	"\"annotations\":{\"np.io/test\":\"1\",\"numaplace.io/cpus\":\"3\"}}"

/* ---- helpers ----------------------------------------------------------- */

static int state(struct np_oci_state *st, const char *s, enum np_oci_stage g,
		 char *err, size_t errlen)
{
	return np_oci_state_parse(st, s, strlen(s), g, err, errlen);
}

/* The state is refused at createRuntime with a message holding needle. */
static void bad_state(const char *s, const char *needle)
{
	struct np_oci_state st;
	char err[512] = "";

	if (state(&st, s, NP_OCI_CREATE_RUNTIME, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted: %s", s);
	if (!strstr(err, needle))
		fail_msg("\"%s\" lacks \"%s\"", err, needle);
	np_oci_state_free(&st);
}

static void config(struct np_oci_config *c, const char *s)
{
	char err[512];
	if (np_oci_config_parse(c, s, strlen(s), err, sizeof(err)))
		fail_msg("config.json %s: %s", s, err);
}

static void bad_config(const char *s, const char *needle)
{
	struct np_oci_config c;
	char err[512] = "";

	if (np_oci_config_parse(&c, s, strlen(s), err, sizeof(err)) != -EINVAL)
		fail_msg("accepted: %s", s);
	if (!strstr(err, needle))
		fail_msg("\"%s\" lacks \"%s\"", err, needle);
	np_oci_config_free(&c);
}

/* The spec built from a state's annotations and a config.json; NULL
 * with err set when refused. */
static json_t *spec_of(const char *annotations, const char *cfg, char *err,
		       size_t errlen)
{
	struct np_oci_state st;
	struct np_oci_config c;
	struct np_oci_request rq;
	char s[12000];
	json_t *out = NULL;

	snprintf(s, sizeof(s),
		 "{\"ociVersion\":\"1.0.2\",\"id\":\"0123456789abcdef0123\","
		 "\"pid\":42,\"bundle\":\"/b\",\"status\":\"created\","
		 "\"annotations\":%s}",
		 annotations);
	if (state(&st, s, NP_OCI_CREATE_RUNTIME, err, errlen))
		fail_msg("state: %s", err);
	config(&c, cfg);
	if (!np_oci_request_build(&rq, &st, &c, "/np/c", err, errlen))
		out = json_incref(rq.spec);
	np_oci_request_free(&rq);
	np_oci_config_free(&c);
	np_oci_state_free(&st);
	return out;
}

/* np_oci_request_build's return for a state's annotations and a
 * config.json. */
static int build_rc(const char *annotations, const char *cfg)
{
	struct np_oci_state st;
	struct np_oci_config c;
	struct np_oci_request rq;
	char s[12000], err[512];
	int r;

	snprintf(s, sizeof(s),
		 "{\"ociVersion\":\"1.0.2\",\"id\":\"0123456789abcdef0123\","
		 "\"pid\":42,\"bundle\":\"/b\",\"status\":\"created\","
		 "\"annotations\":%s}",
		 annotations);
	if (state(&st, s, NP_OCI_CREATE_RUNTIME, err, sizeof(err)))
		fail_msg("state: %s", err);
	config(&c, cfg);
	r = np_oci_request_build(&rq, &st, &c, "/np/c", err, sizeof(err));
	np_oci_request_free(&rq);
	np_oci_config_free(&c);
	np_oci_state_free(&st);
	return r;
}

/* -EDOM (the container's resources cannot take well-formed annotations:
 * under NRI, where annotations are pod-wide, that follows the failure
 * mode) against -EINVAL (a bad annotation: bad input everywhere). */
static void test_request_edom(void **unused)
{
	(void)unused;
	assert_int_equal(build_rc("{\"numaplace.io/qos\":\"LSE\"}", "{}"),
			 -EDOM);
	assert_int_equal(build_rc("{\"numaplace.io/qos\":\"LSE\"}",
				  "{\"linux\":{\"resources\":{\"cpu\":{"
				  "\"quota\":150000,\"period\":100000}}}}"),
			 -EDOM);
	assert_int_equal(build_rc("{\"numaplace.io/qos\":\"LSE\","
				  "\"numaplace.io/cpus\":\"1500m\"}",
				  "{}"),
			 -EINVAL);
	assert_int_equal(build_rc("{\"numaplace.io/cpus\":\"-2\"}", "{}"),
			 -EINVAL);
	assert_int_equal(build_rc("{\"numaplace.io/qos\":\"LSE\"}",
				  "{\"linux\":{\"resources\":{\"cpu\":{"
				  "\"quota\":200000,\"period\":100000}}}}"),
			 0);
}

static json_t *spec_ok(const char *annotations, const char *cfg)
{
	char err[512];
	json_t *j = spec_of(annotations, cfg, err, sizeof(err));
	if (!j)
		fail_msg("refused: %s", err);
	return j;
}

static void bad_spec(const char *annotations, const char *cfg,
		     const char *needle)
{
	char err[512] = "";
	json_t *j = spec_of(annotations, cfg, err, sizeof(err));
	if (j)
		fail_msg("accepted %s", annotations);
	if (!strstr(err, needle))
		fail_msg("\"%s\" lacks \"%s\"", err, needle);
}

static const char *str(const json_t *j, const char *key)
{
	const char *s = json_string_value(json_object_get(j, key));
	return s ? s : "(none)";
}

static const json_t *ctr0(const json_t *spec)
{
	return json_array_get(json_object_get(spec, "containers"), 0);
}

/* {"linux":{"resources":{"cpu":{...}}}} */
static const char *cpu_cfg(char *buf, size_t len, const char *cpu)
{
	snprintf(buf, len, "{\"linux\":{\"resources\":{\"cpu\":%s}}}", cpu);
	return buf;
}

/* ---- state ------------------------------------------------------------- */

static void test_state_good(void **unused)
{
	struct np_oci_state st;
	char err[256];
	(void)unused;

	assert_int_equal(state(&st, CRUN_STATE, NP_OCI_CREATE_RUNTIME, err,
			       sizeof(err)),
			 0);
	assert_string_equal(st.id, "ctr1");
	assert_int_equal(st.pid, 225);
	assert_string_equal(st.bundle, "/tmp/b1");
	assert_string_equal(st.status, "created");
	assert_string_equal(json_string_value(json_object_get(
				st.annotations, "numaplace.io/cpus")),
			    "3");
	np_oci_state_free(&st);
	/* poststop: pid null, or absent, or 0 (runc) */
	assert_int_equal(
	    state(&st,
		  "{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":null,"
		  "\"status\":\"stopped\",\"bundle\":\"/b\",\"future\":[1]}",
		  NP_OCI_POSTSTOP, err, sizeof(err)),
	    0);
	assert_int_equal(st.pid, 0);
	assert_int_equal(json_object_size(st.annotations), 0);
	np_oci_state_free(&st);
	assert_int_equal(state(&st,
			       "{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":0,"
			       "\"status\":\"stopped\"}",
			       NP_OCI_POSTSTOP, err, sizeof(err)),
			 0);
	np_oci_state_free(&st);
}

static void test_state_bad(void **unused)
{
	(void)unused;
	bad_state("", "state: empty input");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"ctr1\",\"pid\":2",
		  "state: invalid JSON");
	bad_state("[1]", "state: expected a JSON object");
	bad_state("{\"ociVersion\":\"1.0\",\"pid\":2,\"bundle\":\"/b\","
		  "\"status\":\"created\"}",
		  "state.id: ");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":7,\"pid\":2,\"bundle\":\"/b\","
		  "\"status\":\"created\"}",
		  "state.id: ");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"a/b\",\"pid\":2,"
		  "\"bundle\":\"/b\",\"status\":\"created\"}",
		  "state.id: \"a/b\" is not a container id");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":0,\"bundle\":"
		  "\"/b\",\"status\":\"created\"}",
		  "state.pid: 0 is not a process id");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":-5,\"bundle\":"
		  "\"/b\",\"status\":\"created\"}",
		  "state.pid: -5 is not a process id");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":\"5\","
		  "\"bundle\":\"/b\",\"status\":\"created\"}",
		  "state.pid: expected the container's process id");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":null,"
		  "\"bundle\":\"/b\",\"status\":\"created\"}",
		  "state.pid: expected");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":3,"
		  "\"status\":\"created\"}",
		  "state.bundle: ");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":3,\"bundle\":"
		  "\"b1\",\"status\":\"created\"}",
		  "state.bundle: \"b1\" is not an absolute path");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":3,\"bundle\":"
		  "\"/tmp/../etc\",\"status\":\"created\"}",
		  "state.bundle: \"/tmp/../etc\" has a \".\" or \"..\"");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":3,\"bundle\":"
		  "\"/b\",\"status\":\"sleeping\"}",
		  "state.status: \"sleeping\" is not creating");
	bad_state("{\"id\":\"c\",\"pid\":3,\"bundle\":\"/b\",\"status\":"
		  "\"created\"}",
		  "state.ociVersion: ");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":3,\"bundle\":"
		  "\"/b\",\"status\":\"created\",\"annotations\":[]}",
		  "state.annotations: expected an object of strings");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"pid\":3,\"bundle\":"
		  "\"/b\",\"status\":\"created\",\"annotations\":"
		  "{\"numaplace.io/cpus\":2}}",
		  "state.annotations.numaplace.io/cpus: expected a string");
	bad_state("{\"ociVersion\":\"1.0\",\"id\":\"c\",\"id\":\"d\",\"pid\":3,"
		  "\"bundle\":\"/b\",\"status\":\"created\"}",
		  "duplicate");
}

/* ---- config.json -------------------------------------------------------- */

static void test_config_resources(void **unused)
{
	struct np_oci_config c;
	char b[256];
	(void)unused;

	config(&c, "{\"linux\":{\"cgroupsPath\":\"/np/ctr1\",\"resources\":"
		   "{\"cpu\":{\"shares\":2048,\"quota\":200000,\"period\":"
		   "100000,\"cpus\":\"1\"},\"memory\":{\"limit\":1073741824}}},"
		   "\"annotations\":{\"a\":\"b\"}}");
	assert_string_equal(c.cgroups_path, "/np/ctr1");
	assert_int_equal(c.limit_milli, 2000);
	assert_int_equal(c.request_milli, 2000);
	assert_int_equal(c.memory, 1073741824);
	assert_string_equal(str(c.annotations, "a"), "b");
	np_oci_config_free(&c);
	/* nothing: no limit, no request, no memory */
	config(&c, "{}");
	assert_int_equal(c.limit_milli, -1);
	assert_int_equal(c.request_milli, -1);
	assert_int_equal(c.memory, -1);
	assert_string_equal(c.cgroups_path, "");
	np_oci_config_free(&c);
	/* quota -1 and memory -1 are unlimited; period defaults to 100 ms */
	config(&c, "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":-1},"
		   "\"memory\":{\"limit\":-1}}}}");
	assert_int_equal(c.limit_milli, -1);
	assert_int_equal(c.memory, -1);
	np_oci_config_free(&c);
	config(&c, cpu_cfg(b, sizeof(b), "{\"quota\":150000}"));
	assert_int_equal(c.limit_milli, 1500);
	np_oci_config_free(&c);
	/* a quota that is no whole millicore rounds up */
	config(&c, cpu_cfg(b, sizeof(b),
			   "{\"quota\":33333,\"period\":100000}"));
	assert_int_equal(c.limit_milli, 334);
	np_oci_config_free(&c);
	/* shares at the minimum: no request */
	config(&c, cpu_cfg(b, sizeof(b), "{\"shares\":2}"));
	assert_int_equal(c.request_milli, 0);
	np_oci_config_free(&c);
}

/* shares = milliCPU * 1024 / 1000 (kubelet MilliCPUToShares, at least 2):
 * every request of 3m or more comes back exactly. */
static void test_config_kubelet_shares(void **unused)
{
	char b[256], o[64];
	(void)unused;

	for (int64_t m = 1; m <= 64000; m += (m < 3000 ? 1 : 7)) {
		struct np_oci_config c;
		int64_t shares = m * 1024 / 1000;
		if (shares < 2)
			shares = 2;
		snprintf(o, sizeof(o), "{\"shares\":%lld}", (long long)shares);
		config(&c, cpu_cfg(b, sizeof(b), o));
		if (c.request_milli != (m < 3 ? 0 : m))
			fail_msg("%lldm -> shares %lld -> %lldm", (long long)m,
				 (long long)shares, (long long)c.request_milli);
		np_oci_config_free(&c);
	}
}

static void test_config_bad(void **unused)
{
	(void)unused;
	bad_config("", "config.json: empty input");
	bad_config("{\"linux\":", "config.json: invalid JSON");
	bad_config("{\"linux\":[]}", "config.json.linux: expected an object");
	bad_config("{\"linux\":{\"cgroupsPath\":5}}",
		   "config.json: linux.cgroupsPath: ");
	bad_config("{\"linux\":{\"resources\":{\"cpu\":{\"period\":0}}}}",
		   "config.json: linux.resources.cpu.period: expected an "
		   "integer >= 1");
	bad_config("{\"linux\":{\"resources\":{\"cpu\":{\"shares\":\"2\"}}}}",
		   "config.json: linux.resources.cpu.shares: expected an "
		   "integer >= 0");
	bad_config("{\"linux\":{\"resources\":{\"cpu\":{\"quota\":-2}}}}",
		   "config.json: linux.resources.cpu.quota: expected an "
		   "integer >= -1");
	bad_config("{\"linux\":{\"resources\":{\"cpu\":{\"cpus\":\"x\"}}}}",
		   "config.json: linux.resources.cpu.cpus: \"x\" is not a CPU "
		   "list");
	bad_config("{\"linux\":{\"resources\":{\"memory\":{\"limit\":1.5}}}}",
		   "config.json: linux.resources.memory.limit: ");
	bad_config("{\"annotations\":{\"x\":[]}}",
		   "config.json.annotations.x: expected a string");
}

/* ---- the spec from the resources (no annotations) ---------------------- */

static void test_spec_from_resources(void **unused)
{
	char b[256];
	json_t *j;
	(void)unused;

	/* an integer limit equal to the request: Guaranteed, whole CPUs
	 * (exclusive under the static policy) */
	j = spec_ok("{}", cpu_cfg(b, sizeof(b),
				   "{\"shares\":2048,\"quota\":200000,"
				   "\"period\":100000}"));
	assert_string_equal(str(j, "qos"), "Guaranteed");
	assert_string_equal(str(ctr0(j), "cpu"), "2");
	assert_string_equal(str(j, "name"), "0123456789ab");
	assert_string_equal(str(json_object_get(j, "container"), "id"),
			    "0123456789abcdef0123");
	assert_string_equal(str(json_object_get(j, "container"), "cgroup"),
			    "/np/c");
	assert_null(json_object_get(j, "cgroup"));
	json_decref(j);
	/* a fractional limit equal to the request: Guaranteed, shared */
	j = spec_ok("{}", cpu_cfg(b, sizeof(b),
				   "{\"shares\":1536,\"quota\":150000}"));
	assert_string_equal(str(j, "qos"), "Guaranteed");
	assert_string_equal(str(ctr0(j), "cpu"), "1500m");
	json_decref(j);
	/* request below the limit: Burstable with the request */
	j = spec_ok("{}", cpu_cfg(b, sizeof(b),
				   "{\"shares\":1024,\"quota\":200000}"));
	assert_string_equal(str(j, "qos"), "Burstable");
	assert_string_equal(str(ctr0(j), "cpu"), "1");
	json_decref(j);
	/* shares alone */
	j = spec_ok("{}", cpu_cfg(b, sizeof(b), "{\"shares\":102}"));
	assert_string_equal(str(j, "qos"), "Burstable");
	assert_string_equal(str(ctr0(j), "cpu"), "100m");
	json_decref(j);
	/* a limit alone requests the limit */
	j = spec_ok("{}", cpu_cfg(b, sizeof(b), "{\"quota\":400000}"));
	assert_string_equal(str(j, "qos"), "Guaranteed");
	assert_string_equal(str(ctr0(j), "cpu"), "4");
	json_decref(j);
	/* a limit with minimum shares: Burstable, no CPU requested */
	j = spec_ok("{}", cpu_cfg(b, sizeof(b),
				   "{\"shares\":2,\"quota\":100000}"));
	assert_string_equal(str(j, "qos"), "Burstable");
	assert_null(json_object_get(ctr0(j), "cpu"));
	json_decref(j);
	/* nothing: BestEffort */
	j = spec_ok("{}", "{\"linux\":{\"resources\":{\"memory\":{\"limit\":"
			  "67108864}}}}");
	assert_string_equal(str(j, "qos"), "BestEffort");
	assert_null(json_object_get(ctr0(j), "cpu"));
	assert_int_equal(json_integer_value(json_object_get(ctr0(j), "memory")),
			 67108864);
	json_decref(j);
}

/* ---- the spec from annotations ----------------------------------------- */

static void test_spec_annotations(void **unused)
{
	char b[256];
	json_t *j;
	(void)unused;

	j = spec_ok("{\"numaplace.io/qos\":\"LSE\",\"numaplace.io/cpus\":\"2\","
		    "\"numaplace.io/memory\":\"1Gi\",\"numaplace.io/workload\":"
		    "\"web\",\"np.io/other\":\"x\"}",
		    cpu_cfg(b, sizeof(b), "{\"shares\":1024}"));
	assert_string_equal(str(j, "name"), "web");
	assert_string_equal(str(j, "qos"), "LSE");
	assert_string_equal(str(ctr0(j), "cpu"), "2");
	assert_string_equal(str(ctr0(j), "name"), "main");
	assert_int_equal(json_integer_value(json_object_get(ctr0(j), "memory")),
			 1ll << 30);
	json_decref(j);
	/* LSE without cpus: the limit */
	j = spec_ok("{\"numaplace.io/qos\":\"LSR\"}",
		    cpu_cfg(b, sizeof(b), "{\"shares\":1024,\"quota\":300000}"));
	assert_string_equal(str(j, "qos"), "LSR");
	assert_string_equal(str(ctr0(j), "cpu"), "3");
	json_decref(j);
	/* LS: the request; millicores */
	j = spec_ok("{\"numaplace.io/qos\":\"LS\",\"numaplace.io/cpus\":"
		    "\"1500m\",\"numaplace.io/isolation\":\"none\"}",
		    "{}");
	assert_string_equal(str(j, "qos"), "LS");
	assert_string_equal(str(ctr0(j), "cpu"), "1500m");
	assert_string_equal(str(j, "isolation"), "none");
	json_decref(j);
	/* the state's annotation wins over config.json's */
	j = spec_ok("{\"numaplace.io/cpus\":\"4\",\"numaplace.io/qos\":\"LSE\"}",
		    "{\"annotations\":{\"numaplace.io/cpus\":\"1\","
		    "\"numaplace.io/workload\":\"fromcfg\"}}");
	assert_string_equal(str(ctr0(j), "cpu"), "4");
	assert_string_equal(str(j, "name"), "fromcfg");
	json_decref(j);
}

static void test_spec_annotations_bad(void **unused)
{
	char big[11000], a[11100];
	(void)unused;

	bad_spec("{\"numaplace.io/qos\":\"Gold\"}", "{}",
		 "annotations.numaplace.io/qos: \"Gold\" is not LSE, LSR, LS "
		 "or BE");
	bad_spec("{\"numaplace.io/qos\":\"LSE\",\"numaplace.io/cpus\":\"-2\"}",
		 "{}", "annotations.numaplace.io/cpus: ");
	bad_spec("{\"numaplace.io/cpus\":\"0\"}", "{}",
		 "annotations.numaplace.io/cpus: \"0\" is not 1m..");
	bad_spec("{\"numaplace.io/cpus\":\"2 cores\"}", "{}",
		 "annotations.numaplace.io/cpus: ");
	bad_spec("{\"numaplace.io/qos\":\"LSE\",\"numaplace.io/cpus\":"
		 "\"1500m\"}",
		 "{}",
		 "annotations.numaplace.io/cpus: LSE needs whole CPUs, at "
		 "least 1 (got 1500m)");
	bad_spec("{\"numaplace.io/qos\":\"LSE\"}", "{}",
		 "config.json: linux.resources.cpu: LSE needs whole CPUs, at "
		 "least 1 (got no CPU limit or request)");
	bad_spec("{\"numaplace.io/memory\":\"2Gb\"}", "{}",
		 "annotations.numaplace.io/memory: ");
	bad_spec("{\"numaplace.io/isolation\":\"full\"}", "{}",
		 "annotations.numaplace.io/isolation: \"full\" is not "
		 "partition or none");
	bad_spec("{\"numaplace.io/workload\":\"my web\"}", "{}",
		 "annotations.numaplace.io/workload: \"my web\" is not a "
		 "workload name");
	bad_spec("{\"numaplace.io/cpu\":\"2\"}", "{}",
		 "annotations.numaplace.io/cpu: unknown annotation");
	bad_spec("{\"numaplace.io/qos\":\"\"}", "{}",
		 "annotations.numaplace.io/qos: the value is empty");
	bad_spec("{}", "{\"annotations\":{\"numaplace.io/qos\":\"XL\"}}",
		 "annotations.numaplace.io/qos: \"XL\" is not");
	/* a 10 kB value */
	memset(big, 'a', 10000);
	big[10000] = '\0';
	snprintf(a, sizeof(a), "{\"numaplace.io/workload\":\"%s\"}", big);
	bad_spec(a, "{}",
		 "annotations.numaplace.io/workload: the value is 10000 bytes, "
		 "more than 4096");
	/* a 10 kB annotation that is not ours is not read */
	snprintf(a, sizeof(a), "{\"io.podman.x\":\"%s\"}", big);
	json_decref(spec_ok(a, "{}"));
	/* a partition of a container is the engine's refusal, named */
	bad_spec("{\"numaplace.io/qos\":\"LSE\",\"numaplace.io/cpus\":\"2\","
		 "\"numaplace.io/isolation\":\"partition\"}",
		 "{}", "spec.isolation: ");
}

static void test_spec_koordinator(void **unused)
{
	char b[256];
	json_t *j;
	(void)unused;

	j = spec_ok("{\"koordinator.sh/qosClass\":\"LSR\","
		    "\"scheduling.koordinator.sh/resource-spec\":"
		    "\"{\\\"preferredCPUBindPolicy\\\":\\\"SpreadByPCPUs\\\","
		    "\\\"preferredCPUExclusivePolicy\\\":\\\"PCPULevel\\\"}\"}",
		    cpu_cfg(b, sizeof(b), "{\"shares\":4096,\"quota\":400000}"));
	assert_string_equal(str(j, "qos"), "LSR");
	assert_string_equal(str(ctr0(j), "cpu"), "4");
	assert_string_equal(str(json_object_get(j, "resourceSpec"),
				"preferredCPUBindPolicy"),
			    "SpreadByPCPUs");
	assert_string_equal(str(json_object_get(j, "resourceSpec"),
				"preferredCPUExclusivePolicy"),
			    "PCPULevel");
	json_decref(j);
	/* numaplace.io/qos wins; SYSTEM is the shared pool */
	j = spec_ok("{\"koordinator.sh/qosClass\":\"LSR\",\"numaplace.io/qos\":"
		    "\"LS\"}",
		    "{}");
	assert_string_equal(str(j, "qos"), "LS");
	json_decref(j);
	j = spec_ok("{\"koordinator.sh/qosClass\":\"SYSTEM\"}",
		    cpu_cfg(b, sizeof(b), "{\"shares\":512}"));
	assert_string_equal(str(j, "qos"), "LS");
	assert_string_equal(str(ctr0(j), "cpu"), "500m");
	json_decref(j);
	bad_spec("{\"koordinator.sh/qosClass\":\"Gold\"}", "{}",
		 "annotations.koordinator.sh/qosClass: \"Gold\" is not");
	bad_spec("{\"scheduling.koordinator.sh/resource-spec\":\"{bad\"}", "{}",
		 "annotations.scheduling.koordinator.sh/resource-spec: "
		 "expected a JSON object");
	bad_spec("{\"scheduling.koordinator.sh/resource-spec\":"
		 "\"{\\\"cpuBind\\\":\\\"x\\\"}\"}",
		 "{}",
		 "annotations.scheduling.koordinator.sh/resource-spec.cpuBind: "
		 "unknown field");
	bad_spec("{\"numaplace.io/qos\":\"LSE\",\"numaplace.io/cpus\":\"2\","
		 "\"scheduling.koordinator.sh/resource-spec\":"
		 "\"{\\\"preferredCPUBindPolicy\\\":\\\"Tight\\\"}\"}",
		 "{}", "spec.resourceSpec.preferredCPUBindPolicy: \"Tight\"");
}

static void test_spec_name_and_shared(void **unused)
{
	struct np_oci_state st;
	struct np_oci_config c;
	struct np_oci_request rq;
	char err[512];
	json_t *ls;
	(void)unused;

	assert_int_equal(state(&st,
			       "{\"ociVersion\":\"1.0\",\"id\":\"a+b\",\"pid\":"
			       "9,\"bundle\":\"/b\",\"status\":\"created\"}",
			       NP_OCI_CREATE_RUNTIME, err, sizeof(err)),
			 0);
	config(&c, "{}");
	assert_int_equal(np_oci_request_build(&rq, &st, &c, NULL, err,
					      sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "state.id: \"a+b\" is not a workload name"));
	assert_non_null(strstr(err, "set numaplace.io/workload"));
	np_oci_request_free(&rq);
	np_oci_state_free(&st);
	assert_int_equal(state(&st,
			       "{\"ociVersion\":\"1.0\",\"id\":\"ctr1\",\"pid\":"
			       "9,\"bundle\":\"/b\",\"status\":\"created\","
			       "\"annotations\":{\"numaplace.io/qos\":\"LSE\","
			       "\"numaplace.io/cpus\":\"2\"}}",
			       NP_OCI_CREATE_RUNTIME, err, sizeof(err)),
			 0);
	assert_int_equal(
	    np_oci_request_build(&rq, &st, &c, NULL, err, sizeof(err)), 0);
	assert_string_equal(rq.name, "ctr1");
	assert_string_equal(str(json_object_get(rq.spec, "container"), "cgroup"),
			    "/ctr1");
	assert_int_equal(np_oci_request_set_cgroup(&rq, "/np/ctr1/container"),
			 0);
	assert_string_equal(str(json_object_get(rq.spec, "container"), "cgroup"),
			    "/np/ctr1/container");
	ls = np_oci_shared_spec(rq.spec);
	assert_string_equal(str(ls, "qos"), "LS");
	/* the annotation's 2 CPUs are not what the resources give (none) */
	assert_string_equal(str(ctr0(ls), "cpu"), "(none)");
	assert_string_equal(str(json_object_get(ls, "container"), "id"), "ctr1");
	assert_string_equal(str(rq.spec, "qos"), "LSE");
	json_decref(ls);
	np_oci_request_free(&rq);
	np_oci_config_free(&c);
	np_oci_state_free(&st);
}

/* "container" carries what bounds the annotations: the resources as
 * limits and requests, the pod's namespace; the fail-open spec asks what
 * the resources give, not what the annotations asked. */
static void test_spec_container_resources(void **unused)
{
	const char *ann = "{\"numaplace.io/qos\":\"LSE\",\"numaplace.io/cpus\":"
			  "\"6\",\"numaplace.io/memory\":\"64Gi\","
			  "\"io.kubernetes.pod.namespace\":\"team-a\"}";
	json_t *j, *ctr, *ls;
	(void)unused;

	/* 0.1 CPU (quota 10000 / period 100000, shares 102), 1Gi, 2Mi pages:
	 * the example */
	j = spec_ok(ann, "{\"linux\":{\"resources\":{\"cpu\":{\"quota\":10000,"
			 "\"period\":100000,\"shares\":102},\"memory\":{"
			 "\"limit\":1073741824},\"hugepageLimits\":[{"
			 "\"pageSize\":\"2MB\",\"limit\":4194304},{"
			 "\"pageSize\":\"1GB\",\"limit\":0}]}}}");
	ctr = json_object_get(j, "container");
	assert_string_equal(str(ctr, "namespace"), "team-a");
	assert_string_equal(str(json_object_get(ctr, "limits"), "cpu"), "100m");
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(ctr, "limits"), "memory")),
			 1073741824);
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(ctr, "limits"), "hugepages-2Mi")),
			 4194304);
	/* a size the kubelet did not grant: a limit of 0, kept */
	assert_non_null(json_object_get(json_object_get(ctr, "limits"),
					"hugepages-1Gi"));
	assert_string_equal(str(json_object_get(ctr, "requests"), "cpu"),
			    "100m");
	/* what the annotations asked is in the spec (numaplaced bounds it) */
	assert_string_equal(str(ctr0(j), "cpu"), "6");
	ls = np_oci_shared_spec(j);
	assert_string_equal(str(ctr0(ls), "cpu"), "100m");
	assert_int_equal(json_integer_value(json_object_get(ctr0(ls), "memory")),
			 1073741824);
	json_decref(ls);
	json_decref(j);
	/* no resources, containerd's namespace annotation */
	j = spec_ok("{\"io.kubernetes.cri.sandbox-namespace\":\"kube-system\"}",
		    "{}");
	ctr = json_object_get(j, "container");
	assert_string_equal(str(ctr, "namespace"), "kube-system");
	assert_int_equal(json_object_size(json_object_get(ctr, "limits")), 0);
	assert_int_equal(json_object_size(json_object_get(ctr, "requests")), 0);
	json_decref(j);
	/* a namespace that is not one is refused, naming the field */
	bad_spec("{\"io.kubernetes.pod.namespace\":\"Team_A\"}", "{}",
		 "spec.container.namespace: \"Team_A\" is not a Kubernetes "
		 "namespace");
	bad_config("{\"linux\":{\"resources\":{\"hugepageLimits\":[{"
		   "\"pageSize\":\"2XB\",\"limit\":1}]}}}",
		   "config.json: linux.resources.hugepageLimits[0]: expected");
}

static void test_failure_mode(void **unused)
{
	struct np_oci_state st;
	struct np_oci_config c;
	enum np_oci_failure f = NP_OCI_FAIL_OPEN;
	char err[256];
	(void)unused;

	assert_int_equal(state(&st, CRUN_STATE, NP_OCI_CREATE_RUNTIME, err,
			       sizeof(err)),
			 0);
	config(&c, "{\"annotations\":{\"numaplace.io/on-failure\":"
		   "\"fail-closed\"}}");
	assert_int_equal(np_oci_failure_annotation(&st, &c, &f, err,
						   sizeof(err)),
			 0);
	assert_int_equal(f, NP_OCI_FAIL_CLOSED);
	np_oci_config_free(&c);
	config(&c, "{}");
	assert_int_equal(np_oci_failure_annotation(&st, &c, &f, err,
						   sizeof(err)),
			 -ENOENT);
	np_oci_config_free(&c);
	config(&c, "{\"annotations\":{\"numaplace.io/on-failure\":\"open\"}}");
	assert_int_equal(np_oci_failure_annotation(&st, &c, &f, err,
						   sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "annotations.numaplace.io/on-failure: "
				    "\"open\" is not fail-open or "
				    "fail-closed"));
	np_oci_config_free(&c);
	np_oci_state_free(&st);
}

/* ---- cgroups ------------------------------------------------------------ */

static void cg_ok(const char *in, const char *path, bool systemd,
		  bool relative)
{
	struct np_oci_cgroup g;
	char err[512];

	if (np_oci_cgroups_path(in, &g, err, sizeof(err)))
		fail_msg("%s: %s", in, err);
	assert_string_equal(g.path, path);
	assert_int_equal(g.systemd, systemd);
	assert_int_equal(g.relative, relative);
}

static void cg_bad(const char *in, const char *needle)
{
	struct np_oci_cgroup g;
	char err[512] = "";

	if (np_oci_cgroups_path(in, &g, err, sizeof(err)) != -EINVAL)
		fail_msg("accepted %s", in);
	if (!strstr(err, needle) ||
	    !strstr(err, "config.json: linux.cgroupsPath: "))
		fail_msg("\"%s\" lacks \"%s\"", err, needle);
}

static void test_cgroups_path(void **unused)
{
	char longc[400];
	(void)unused;

	cg_ok("/np/ctr1", "/np/ctr1", false, false);
	cg_ok("np/ctr1", "/np/ctr1", false, true);
	cg_ok("/kubepods/pod1:x", "/kubepods/pod1:x", false, false);
	cg_ok("system.slice:np:ctr3", "/system.slice/np-ctr3.scope", true,
	      false);
	cg_ok("machine.slice:libpod:0123abcd",
	      "/machine.slice/libpod-0123abcd.scope", true, false);
	cg_ok("kubepods-burstable-pod1.slice:crio:abc",
	      "/kubepods.slice/kubepods-burstable.slice/"
	      "kubepods-burstable-pod1.slice/crio-abc.scope",
	      true, false);
	cg_ok("-.slice:p:n", "/p-n.scope", true, false);
	cg_ok(":np:x", "/system.slice/np-x.scope", true, false);
	cg_ok("numaplace.slice::x", "/numaplace.slice/x.scope", true, false);
	cg_bad("", "names the root cgroup");
	cg_bad("/", "names the root cgroup");
	cg_bad("/np/../x", "has an empty, \".\" or \"..\" component");
	cg_bad("/np//x", "has an empty");
	cg_bad("/np/x/", "has an empty");
	cg_bad("/np/./x", "has an empty");
	cg_bad("/np/a b", "not printable ASCII or a space");
	cg_bad("/np/\x01", "not printable");
	cg_bad("a--b.slice:p:n", "slice \"a--b.slice\" has an empty component");
	cg_bad("-a.slice:p:n", "has an empty component");
	cg_bad("foo:p:n", "\"foo\" is not a slice");
	cg_bad("system.slice:p:", "has no NAME");
	cg_bad("system.slice:p:n.slice", "a slice as the container's unit");
	cg_bad("sys*.slice:p:n", "is not allowed in a unit name");
	cg_bad("system.slice:p:a/../b", "\"..\" component");
	memset(longc, 'a', 300);
	longc[0] = '/';
	longc[300] = '\0';
	cg_bad(longc, "longer than 255");
}

static void test_proc_cgroup(void **unused)
{
	const char *v = "9:name=systemd:/\n4:memory:/x\n0::/np/ctr1/container\n";
	char out[512], err[256];
	(void)unused;

	assert_int_equal(np_oci_proc_cgroup(v, strlen(v), out, sizeof(out), err,
					    sizeof(err)),
			 0);
	assert_string_equal(out, "/np/ctr1/container");
	assert_int_equal(np_oci_proc_cgroup("0::/a", 5, out, sizeof(out), err,
					    sizeof(err)),
			 0);
	assert_string_equal(out, "/a");
	assert_int_equal(np_oci_proc_cgroup("1:cpu:/a\n", 9, out, sizeof(out),
					    err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "no cgroup2 line"));
	assert_int_equal(np_oci_proc_cgroup("0::/\n", 5, out, sizeof(out), err,
					    sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "root cgroup"));
	assert_int_equal(np_oci_proc_cgroup("0::x\n", 5, out, sizeof(out), err,
					    sizeof(err)),
			 -EINVAL);
	assert_int_equal(np_oci_proc_cgroup("0::/a/../b\n", 11, out,
					    sizeof(out), err, sizeof(err)),
			 -EINVAL);
}

static void test_cgroup_holds(void **unused)
{
	struct np_oci_cgroup g;
	char err[512];
	(void)unused;

	assert_int_equal(np_oci_cgroups_path("/np/ctr1", &g, err, sizeof(err)),
			 0);
	assert_int_equal(np_oci_cgroup_holds(&g, "/np/ctr1", err, sizeof(err)),
			 0);
	assert_int_equal(np_oci_cgroup_holds(&g, "/np/ctr1/container", err,
					     sizeof(err)),
			 0);
	assert_int_equal(np_oci_cgroup_holds(&g, "/np/ctr10", err, sizeof(err)),
			 -ESRCH);
	assert_non_null(strstr(err, "the process is in /np/ctr10, not in "
				    "/np/ctr1"));
	assert_int_equal(np_oci_cgroup_holds(&g, "/np", err, sizeof(err)),
			 -ESRCH);
	/* relative: below the root (crun) or below the runtime's (runc) */
	assert_int_equal(np_oci_cgroups_path("np/ctr1", &g, err, sizeof(err)),
			 0);
	assert_int_equal(np_oci_cgroup_holds(&g, "/user.slice/np/ctr1", err,
					     sizeof(err)),
			 0);
	assert_int_equal(np_oci_cgroup_holds(&g, "/user.slice/xnp/ctr1", err,
					     sizeof(err)),
			 -ESRCH);
	assert_int_equal(np_oci_cgroups_path("system.slice:np:c3", &g, err,
					     sizeof(err)),
			 0);
	assert_int_equal(np_oci_cgroup_holds(&g,
					     "/system.slice/np-c3.scope/"
					     "container",
					     err, sizeof(err)),
			 0);
}

/* ---- numaplaced's answer ------------------------------------------------ */

static void test_decision(void **unused)
{
	struct np_oci_decision d;
	char err[256];
	json_t *j;
	bool eq;
	(void)unused;

	j = json_loads("{\"ok\":true,\"decision\":{\"admitted\":true,"
		       "\"cpuset\":\"2-3\",\"mems\":\"0\"}}", 0, NULL);
	assert_int_equal(np_oci_decision_parse(j, &d, err, sizeof(err)), 0);
	assert_true(d.admitted);
	assert_string_equal(d.cpuset, "2-3");
	assert_string_equal(d.mems, "0");
	json_decref(j);
	j = json_loads("{\"ok\":true,\"decision\":{\"admitted\":false,"
		       "\"resource\":\"cpu\",\"reason\":\"not enough\"}}",
		       0, NULL);
	assert_int_equal(np_oci_decision_parse(j, &d, err, sizeof(err)), 0);
	assert_false(d.admitted);
	assert_string_equal(d.resource, "cpu");
	assert_string_equal(d.reason, "not enough");
	json_decref(j);
	j = json_loads("{\"ok\":true}", 0, NULL);
	assert_int_equal(np_oci_decision_parse(j, &d, err, sizeof(err)),
			 -EPROTO);
	json_decref(j);
	j = json_loads("{\"ok\":true,\"decision\":{\"admitted\":true}}", 0,
		       NULL);
	assert_int_equal(np_oci_decision_parse(j, &d, err, sizeof(err)),
			 -EPROTO);
	assert_non_null(strstr(err, "decision.cpuset"));
	json_decref(j);

	assert_int_equal(np_oci_cpuset_in_force("2-3\n", "2,3", &eq, err,
						sizeof(err)),
			 0);
	assert_true(eq);
	assert_int_equal(np_oci_cpuset_in_force("0-7\n", "2-3", &eq, err,
						sizeof(err)),
			 0);
	assert_false(eq);
	assert_int_equal(np_oci_cpuset_in_force("zz", "2-3", &eq, err,
						sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "cpuset.cpus.effective"));
}

static void test_names(void **unused)
{
	enum np_oci_stage s;
	enum np_oci_failure f;
	(void)unused;

	assert_int_equal(np_oci_stage_parse("createRuntime", &s), 0);
	assert_int_equal(s, NP_OCI_CREATE_RUNTIME);
	assert_int_equal(np_oci_stage_parse("poststop", &s), 0);
	assert_int_equal(s, NP_OCI_POSTSTOP);
	assert_int_equal(np_oci_stage_parse("poststart", &s), -EINVAL);
	assert_string_equal(np_oci_stage_name(NP_OCI_PRESTART), "prestart");
	assert_int_equal(np_oci_failure_parse("fail-closed", &f), 0);
	assert_int_equal(f, NP_OCI_FAIL_CLOSED);
	assert_int_equal(np_oci_failure_parse("closed", &f), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_good),
		cmocka_unit_test(test_state_bad),
		cmocka_unit_test(test_config_resources),
		cmocka_unit_test(test_config_kubelet_shares),
		cmocka_unit_test(test_config_bad),
		cmocka_unit_test(test_spec_from_resources),
		cmocka_unit_test(test_spec_annotations),
		cmocka_unit_test(test_spec_annotations_bad),
		cmocka_unit_test(test_spec_koordinator),
		cmocka_unit_test(test_spec_name_and_shared),
		cmocka_unit_test(test_spec_container_resources),
		cmocka_unit_test(test_failure_mode),
		cmocka_unit_test(test_cgroups_path),
		cmocka_unit_test(test_proc_cgroup),
		cmocka_unit_test(test_cgroup_holds),
		cmocka_unit_test(test_decision),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_request_edom),
	};
	return cmocka_run_group_tests_name("oci", tests, NULL, NULL);
}
