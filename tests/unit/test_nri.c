// SPDX-License-Identifier: Apache-2.0
/*
 * containerd's NRI v0.1 Request and Result (numaplace/nri.h): the request
 * as containerd 1.6.20's CRI plugin writes it (nri v0.1.0 types.Request,
 * shapes from ../shared/reference/containerd_nri_v01.md section 1.3) for
 * a container and a pause container under both cgroup drivers, its
 * resources read as config.json's, every field refused naming it, the
 * plugin's conf, the pause container's annotations, the Result.
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

#include "numaplace/nri.h"

#define CID "4b5e6c0a9d1f2e3a4b5c6d7e8f901234567890abcdef0123456789abcdef0123"
#define SID "9f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a0"

/* A Guaranteed 2-CPU container of a pod under the systemd driver, as the
 * CRI plugin sends it at StartContainer (keys in containerd's order). */
#define CREATE_SYSTEMD                                                         \
	"{\"version\":\"0.1\",\"state\":\"create\",\"id\":\"" CID "\","        \
	"\"sandboxID\":\"" SID "\",\"pid\":4242,\"spec\":{\"resources\":"      \
	"{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],\"memory\":"      \
	"{\"limit\":1073741824,\"swap\":1073741824},\"cpu\":{\"shares\":"      \
	"2048,\"quota\":200000,\"period\":100000}},\"namespaces\":{\"pid\":"  \
	"\"/proc/4200/ns/pid\",\"network\":\"/proc/4200/ns/net\",\"ipc\":"    \
	"\"/proc/4200/ns/ipc\",\"uts\":\"/proc/4200/ns/uts\",\"mount\":\"\","  \
	"\"cgroup\":\"\"},\"cgroupsPath\":\"kubepods-pod1234_abcd.slice:"     \
	"cri-containerd:" CID "\",\"annotations\":{\"io.kubernetes.cri."       \
	"container-type\":\"container\",\"io.kubernetes.cri.sandbox-"          \
	"namespace\":\"trading\",\"numaplace.io/qos\":\"LSE\"}},\"labels\":"   \
	"{\"app\":\"web\"}}"

static int parse_as_is(struct np_nri_request *rq, const char *s, char *err,
		       size_t errlen)
{
	return np_nri_request_parse(rq, s, strlen(s), err, errlen);
}

/* A request is read whole only when numaplace acts on it (np_nri_ours):
 * the cases below that give no conf get one that makes every container
 * and pause container numaplace's, so that each field is read and judged
 * (test_not_ours: what is read of the others). */
static int parse(struct np_nri_request *rq, const char *s, char *err,
		 size_t errlen)
{
	static char buf[16384];

	if (s[0] != '{' || strstr(s, "\"conf\""))
		return parse_as_is(rq, s, err, errlen);
	snprintf(buf, sizeof(buf),
		 "{\"conf\":{\"containers\":\"all\",\"pause\":\"shared\"}%s%s",
		 s[1] && s[1] != '}' ? "," : "", s + 1);
	return parse_as_is(rq, buf, err, errlen);
}

static void good(struct np_nri_request *rq, const char *s)
{
	char err[1024] = "";
	if (parse(rq, s, err, sizeof(err)))
		fail_msg("refused: %s\n  %s", err, s);
}

/* Refused with -EINVAL and a message that starts with the field. */
static void bad(const char *s, const char *field, const char *needle)
{
	struct np_nri_request rq;
	char err[1024] = "";
	int r = parse(&rq, s, err, sizeof(err));

	np_nri_request_free(&rq);
	if (r != -EINVAL)
		fail_msg("not refused (%d): %s", r, s);
	if (strncmp(err, field, strlen(field)) || !strstr(err, needle))
		fail_msg("\"%s\" does not start with \"%s\" or lacks \"%s\"",
			 err, field, needle);
}

/* A create request for pid 1 around SPEC (and EXTRA top-level keys). */
static char *req(const char *extra, const char *spec)
{
	static char buf[8192];
	snprintf(buf, sizeof(buf),
		 "{\"version\":\"0.1\",\"state\":\"create\",\"id\":\"c1\","
		 "\"sandboxID\":\"s1\",\"pid\":1%s%s,\"spec\":%s}",
		 *extra ? "," : "", extra, spec);
	return buf;
}

static void test_container_systemd(void **state)
{
	struct np_nri_request rq;
	(void)state;

	/* annotated: read whole with the plugin's default conf */
	char err[1024] = "";
	if (parse_as_is(&rq, CREATE_SYSTEMD, err, sizeof(err)))
		fail_msg("refused: %s", err);
	assert_true(np_nri_ours(&rq));
	assert_int_equal(rq.state, NP_NRI_CREATE);
	assert_string_equal(rq.version, "0.1");
	assert_string_equal(rq.st.id, CID);
	assert_string_equal(rq.sandbox_id, SID);
	assert_false(rq.sandbox);
	assert_int_equal(rq.st.pid, 4242);
	assert_string_equal(rq.st.status, "created");
	/* the kubelet's encoding read back: 2 CPUs limit and request */
	assert_int_equal(rq.oc.limit_milli, 2000);
	assert_int_equal(rq.oc.request_milli, 2000);
	assert_int_equal(rq.oc.memory, 1073741824);
	/* runc's systemd form, expanded as systemd does */
	assert_true(rq.cgroup.systemd);
	assert_string_equal(rq.cgroup.path,
			    "/kubepods.slice/kubepods-pod1234_abcd.slice/"
			    "cri-containerd-" CID ".scope");
	assert_string_equal(
	    json_string_value(json_object_get(rq.st.annotations,
					      "numaplace.io/qos")),
	    "LSE");
	assert_string_equal(np_oci_namespace(&rq.st, &rq.oc), "trading");
	assert_true(np_nri_annotated(&rq));
	/* the plugin's defaults */
	assert_int_equal(rq.conf.pause, NP_NRI_PAUSE_IGNORE);
	assert_int_equal(rq.conf.containers, NP_NRI_MATCH_ANNOTATED);
	assert_string_equal(rq.conf.config, "");
	np_nri_request_free(&rq);
}

/* A pod annotation claiming CRI-O's namespace key does not choose the
 * policy rule: containerd's own key does. */
static void test_namespace_claim(void **state)
{
	struct np_nri_request rq;
	(void)state;

	good(&rq, req("", "{\"annotations\":{\"io.kubernetes.pod.namespace\":"
			  "\"trading\",\"io.kubernetes.cri.sandbox-namespace\":"
			  "\"tenant\",\"numaplace.io/qos\":\"LSE\"}}"));
	assert_null(json_object_get(rq.st.annotations,
				    "io.kubernetes.pod.namespace"));
	assert_string_equal(np_oci_namespace(&rq.st, &rq.oc), "tenant");
	np_nri_request_free(&rq);
	good(&rq, req("", "{\"annotations\":{\"io.kubernetes.pod.namespace\":"
			  "\"trading\"}}"));
	assert_null(np_oci_namespace(&rq.st, &rq.oc));
	np_nri_request_free(&rq);
}

static void test_container_cgroupfs(void **state)
{
	struct np_nri_request rq;
	(void)state;

	good(&rq, req("", "{\"resources\":{\"cpu\":{\"shares\":512}},"
			  "\"cgroupsPath\":\"/kubepods/burstable/pod12-ab/c1\"}"));
	assert_false(rq.cgroup.systemd);
	assert_false(rq.cgroup.relative);
	assert_string_equal(rq.cgroup.path, "/kubepods/burstable/pod12-ab/c1");
	assert_int_equal(rq.oc.limit_milli, -1);
	assert_int_equal(rq.oc.request_milli, 500);
	assert_false(np_nri_annotated(&rq));
	np_nri_request_free(&rq);
	/* no cgroup_parent: no cgroupsPath, the pid's cgroup alone */
	good(&rq, req("", "{\"resources\":null}"));
	assert_string_equal(rq.oc.cgroups_path, "");
	assert_int_equal(rq.oc.limit_milli, -1);
	assert_int_equal(rq.oc.memory, -1);
	assert_int_equal(json_object_size(rq.st.annotations), 0);
	np_nri_request_free(&rq);
}

static void test_pause_and_delete(void **state)
{
	struct np_nri_request rq;
	char s[4096];
	(void)state;

	/* RunPodSandbox: id == sandboxID, the pod's annotations on it */
	snprintf(s, sizeof(s),
		 "{\"version\":\"0.1\",\"state\":\"create\",\"id\":\"%s\","
		 "\"sandboxID\":\"%s\",\"pid\":77,\"spec\":{\"resources\":"
		 "{\"cpu\":{\"shares\":2}},\"cgroupsPath\":\"/kubepods/pod1/%s\","
		 "\"annotations\":{\"io.kubernetes.cri.container-type\":"
		 "\"sandbox\",\"numaplace.io/qos\":\"LSE\",\"numaplace.io/cpus\":"
		 "\"2\",\"numaplace.io/workload\":\"web\",\"numaplace.io/"
		 "on-failure\":\"fail-closed\",\"koordinator.sh/qosClass\":"
		 "\"LSR\"}},\"labels\":{\"a\":\"b\"}}",
		 SID, SID, SID);
	good(&rq, s);
	assert_true(rq.sandbox);
	assert_int_equal(rq.oc.request_milli, 0); /* shares 2: no request */
	assert_int_equal(np_nri_pause_only(&rq), 0);
	/* it asks nothing of its own; its failure mode is kept */
	assert_int_equal(json_object_size(rq.st.annotations), 2);
	assert_non_null(json_object_get(rq.st.annotations,
					"numaplace.io/on-failure"));
	assert_non_null(json_object_get(rq.st.annotations,
					"io.kubernetes.cri.container-type"));
	assert_null(json_object_get(rq.st.annotations, "numaplace.io/qos"));
	assert_null(json_object_get(rq.st.annotations,
				    "koordinator.sh/qosClass"));
	np_nri_request_free(&rq);

	/* delete: no pid (omitted when 0) or a stale one, no labels */
	good(&rq, "{\"version\":\"0.1\",\"state\":\"delete\",\"id\":\"c1\","
		  "\"sandboxID\":\"s1\",\"spec\":{\"cgroupsPath\":\"/k/c1\"}}");
	assert_int_equal(rq.state, NP_NRI_DELETE);
	assert_int_equal(rq.st.pid, 0);
	np_nri_request_free(&rq);
	good(&rq, "{\"version\":\"\",\"state\":\"delete\",\"id\":\"c1\","
		  "\"pid\":31,\"spec\":null}");
	assert_int_equal(rq.st.pid, 31);
	assert_false(rq.sandbox); /* no sandboxID */
	assert_string_equal(rq.version, "");
	np_nri_request_free(&rq);
	/* the states 1.6 defines but never sends */
	good(&rq, "{\"state\":\"update\",\"id\":\"c1\",\"pid\":0}");
	assert_int_equal(rq.state, NP_NRI_UPDATE);
	np_nri_request_free(&rq);
	assert_string_equal(np_nri_state_name(NP_NRI_RESUME), "resume");
}

static void test_conf(void **state)
{
	struct np_nri_request rq;
	(void)state;

	good(&rq, req("\"conf\":{\"pause\":\"shared\",\"containers\":\"all\","
		      "\"config\":\"/etc/np/a.json\",\"socket\":\"/run/x.sock\"}",
		      "{}"));
	assert_int_equal(rq.conf.pause, NP_NRI_PAUSE_SHARED);
	assert_int_equal(rq.conf.containers, NP_NRI_MATCH_ALL);
	assert_string_equal(rq.conf.config, "/etc/np/a.json");
	assert_string_equal(rq.conf.socket, "/run/x.sock");
	np_nri_request_free(&rq);
	good(&rq, req("\"conf\":null", "{}"));
	assert_int_equal(rq.conf.pause, NP_NRI_PAUSE_IGNORE);
	np_nri_request_free(&rq);
	bad(req("\"conf\":[]", "{}"), "conf: ", "expected an object");
	bad(req("\"conf\":{\"pause\":\"drop\"}", "{}"), "conf.pause: ",
	    "\"drop\" is not ignore or shared");
	bad(req("\"conf\":{\"containers\":\"some\"}", "{}"),
	    "conf.containers: ", "is not annotated or all");
	bad(req("\"conf\":{\"config\":\"etc/a.json\"}", "{}"), "conf.config: ",
	    "is not an absolute path");
	bad(req("\"conf\":{\"socket\":\"/run/\\u0001\"}", "{}"),
	    "conf.socket: ", "not printable ASCII");
	bad(req("\"conf\":{\"pause\":\"shared\",\"mode\":1}", "{}"),
	    "conf", "mode");
}

static void test_bad_top(void **state)
{
	(void)state;

	bad("", "request: ", "empty input");
	bad("{\"state\":", "request: ", "invalid JSON");
	bad("[1]", "request: ", "expected a JSON object");
	bad("{\"state\":\"create\",\"state\":\"create\"}", "request: ",
	    "invalid JSON");
	bad("{\"id\":\"c1\",\"pid\":1,\"spec\":{}}", "state: ", "missing");
	bad("{\"state\":\"start\",\"id\":\"c1\"}", "state: ",
	    "\"start\" is not create, delete");
	bad("{\"state\":7,\"id\":\"c1\"}", "state: ", "");
	bad("{\"version\":3,\"state\":\"create\"}", "version: ", "");
	bad("{\"version\":\"0.1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0\","
	    "\"state\":\"create\"}",
	    "version: ", "longer than 32 bytes");
	bad("{\"state\":\"create\",\"pid\":1,\"spec\":{}}", "id: ", "missing");
	bad("{\"state\":\"create\",\"id\":\"-c\",\"pid\":1,\"spec\":{}}",
	    "id: ", "\"-c\" is not a container id");
	bad("{\"state\":\"create\",\"id\":\"c/1\",\"pid\":1,\"spec\":{}}",
	    "id: ", "is not a container id");
	bad("{\"state\":\"create\",\"id\":\"c1\",\"sandboxID\":\"s 1\","
	    "\"pid\":1,\"spec\":{}}",
	    "sandboxID: ", "is not a container id");
	bad("{\"state\":\"create\",\"id\":\"c1\",\"spec\":{}}", "pid: ",
	    "expected the task's process id");
	bad("{\"state\":\"create\",\"id\":\"c1\",\"pid\":0,\"spec\":{}}",
	    "pid: ", "0 is not a process id");
	bad("{\"state\":\"create\",\"id\":\"c1\",\"pid\":4194305,"
	    "\"spec\":{}}",
	    "pid: ", "4194305 is not a process id");
	bad("{\"state\":\"delete\",\"id\":\"c1\",\"pid\":-1}", "pid: ",
	    "-1 is not a process id");
	bad("{\"state\":\"create\",\"id\":\"c1\",\"pid\":\"1\",\"spec\":{}}",
	    "pid: ", "");
	bad("{\"state\":\"create\",\"id\":\"c1\",\"pid\":1}", "spec: ",
	    "expected an object");
	bad(req("\"labels\":{\"a\":1}", "{}"), "labels.a: ",
	    "expected a string");
	bad(req("\"labels\":[]", "{}"), "labels: ", "expected an object");
	bad(req("\"results\":{}", "{}"), "results: ", "expected an array");
	bad(req("\"results\":[{},3]", "{}"), "results[1]: ",
	    "expected a Result object");
}

static void test_bad_spec(void **state)
{
	(void)state;

	bad(req("", "[]"), "spec: ", "expected an object");
	bad(req("", "{\"annotations\":{\"numaplace.io/qos\":1}}"),
	    "spec.annotations.numaplace.io/qos: ", "expected a string");
	bad(req("", "{\"annotations\":\"x\"}"), "spec.annotations: ",
	    "expected an object");
	bad(req("", "{\"namespaces\":{\"pid\":null}}"), "spec.namespaces.pid: ",
	    "expected a string");
	bad(req("", "{\"cgroupsPath\":7}"), "spec.cgroupsPath: ",
	    "expected a string");
	bad(req("", "{\"cgroupsPath\":\"/\"}"), "spec.cgroupsPath: ",
	    "names the root cgroup");
	bad(req("", "{\"cgroupsPath\":\"/kubepods/../x\"}"),
	    "spec.cgroupsPath: ", "\"..\" component");
	bad(req("", "{\"cgroupsPath\":\"kube-.slice:cri-containerd:c1\"}"),
	    "spec.cgroupsPath: ", "empty component");
	bad(req("", "{\"cgroupsPath\":\"pod.slice:cri:\"}"),
	    "spec.cgroupsPath: ", "has no NAME");
	bad(req("", "{\"resources\":[]}"), "spec.resources: ",
	    "expected an object");
	bad(req("", "{\"resources\":{\"cpu\":{\"quota\":\"x\"}}}"),
	    "spec.resources.cpu.quota: ", "expected an integer");
	bad(req("", "{\"resources\":{\"cpu\":{\"period\":2000000}}}"),
	    "spec.resources.cpu.period: ", "over 1000000");
	bad(req("", "{\"resources\":{\"cpu\":{\"shares\":-4}}}"),
	    "spec.resources.cpu.shares: ", "");
	bad(req("", "{\"resources\":{\"cpu\":{\"cpus\":\"0-x\"}}}"),
	    "spec.resources.cpu.cpus: ", "not a CPU list");
	bad(req("", "{\"resources\":{\"memory\":{\"limit\":true}}}"),
	    "spec.resources.memory.limit: ", "expected an integer");
	bad(req("", "{\"resources\":{\"hugepageLimits\":[{\"pageSize\":"
		    "\"3XB\",\"limit\":1}]}}"),
	    "spec.resources.hugepageLimits[0]: ", "pageSize");
}

static void test_field_names(void **state)
{
	char m[256];
	(void)state;

	snprintf(m, sizeof(m), "config.json: linux.resources.cpu: LSE needs "
			       "whole CPUs; state.id: x; state.pid: y");
	np_nri_field_names(m, sizeof(m));
	assert_string_equal(m, "spec.resources.cpu: LSE needs whole CPUs; "
			       "id: x; pid: y");
	snprintf(m, sizeof(m), "cpu 6 is above the limit of 100m (config.json "
			       "linux.resources); not in /a (from "
			       "linux.cgroupsPath)");
	np_nri_field_names(m, sizeof(m));
	assert_string_equal(m, "cpu 6 is above the limit of 100m "
			       "(spec.resources); not in /a (from "
			       "spec.cgroupsPath)");
	snprintf(m, sizeof(m), "annotations.numaplace.io/cpus: \"x\"");
	np_nri_field_names(m, sizeof(m));
	assert_string_equal(m, "annotations.numaplace.io/cpus: \"x\"");
}

static void test_result(void **state)
{
	json_t *r;
	char *s;
	(void)state;

	r = np_nri_result("0.1", NULL, NULL, NULL);
	s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"plugin\":\"numaplace\",\"version\":\"0.1\"}");
	free(s);
	json_decref(r);
	r = np_nri_result("0.1", NULL, "web", "1,5");
	s = json_dumps(r, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(s, "{\"metadata\":{\"cpuset\":\"1,5\",\"workload\":"
			       "\"web\"},\"plugin\":\"numaplace\",\"version\":"
			       "\"0.1\"}");
	free(s);
	json_decref(r);
	/* a tenant's bytes quoted in the error stay valid JSON */
	r = np_nri_result("", "fail-closed: \"\xff\x01\" refused", "w", "1");
	assert_non_null(r);
	assert_string_equal(json_string_value(json_object_get(r, "error")),
			    "fail-closed: \"??\" refused");
	assert_null(json_object_get(r, "metadata"));
	json_decref(r);
}

/* A create Request of container ID with REST (pid, spec, ...) and EXTRA
 * top-level members ("" for none), into s. */
static void create_of(char *s, size_t len, const char *id, const char *rest,
		      const char *extra)
{
	snprintf(s, len,
		 "{\"version\":\"0.1\",\"state\":\"create\",\"id\":\"%s\","
		 "\"sandboxID\":\"s1\",%s%s}",
		 id, rest, extra);
}

/* A request numaplace does not act on is read only as far as deciding so:
 * a field it would refuse does not fail the start of a container it does
 * not manage (the plugin answers {} at once). */
static void test_not_ours(void **state)
{
	static const char *const rest[] = {
	    "\"pid\":0,\"spec\":{}",
	    "\"pid\":1,\"labels\":[],\"spec\":{}",
	    "\"pid\":1,\"results\":{},\"spec\":{}",
	    "\"pid\":1,\"spec\":{\"cgroupsPath\":\"/kubepods/../x\"}",
	    "\"pid\":1,\"spec\":{\"resources\":{\"cpu\":{\"quota\":\"x\"}}}",
	    "\"pid\":1,\"spec\":{\"namespaces\":{\"pid\":null}}",
	};
	struct np_nri_request rq;
	char s[1024], err[1024];
	size_t i;
	(void)state;

	for (i = 0; i < sizeof(rest) / sizeof(rest[0]); i++) {
		/* a container without numaplace's annotations, and a pause
		 * container (id == sandboxID), ignored by default: accepted,
		 * not numaplace's */
		create_of(s, sizeof(s), "c1", rest[i], "");
		assert_int_equal(parse_as_is(&rq, s, err, sizeof(err)), 0);
		assert_false(np_nri_ours(&rq));
		np_nri_request_free(&rq);
		create_of(s, sizeof(s), "s1", rest[i], "");
		assert_int_equal(parse_as_is(&rq, s, err, sizeof(err)), 0);
		assert_false(np_nri_ours(&rq));
		np_nri_request_free(&rq);
		/* the same made numaplace's (conf containers all): read, and
		 * refused */
		create_of(s, sizeof(s), "c1", rest[i],
			  ",\"conf\":{\"containers\":\"all\"}");
		assert_int_equal(parse_as_is(&rq, s, err, sizeof(err)), -EINVAL);
		np_nri_request_free(&rq);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_systemd),
		cmocka_unit_test(test_container_cgroupfs),
		cmocka_unit_test(test_namespace_claim),
		cmocka_unit_test(test_pause_and_delete),
		cmocka_unit_test(test_conf),
		cmocka_unit_test(test_bad_top),
		cmocka_unit_test(test_bad_spec),
		cmocka_unit_test(test_field_names),
		cmocka_unit_test(test_result),
		cmocka_unit_test(test_not_ours),
	};
	return cmocka_run_group_tests_name("nri", tests, NULL, NULL);
}
