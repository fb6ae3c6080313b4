// SPDX-License-Identifier: Apache-2.0
/*
 * State checkpoint: round trip, atomic writes (no temp file left, mode
 * 0600, stale temp files removed), corruption, policy and topology
 * changes, --reset-state, a crash in the middle of a save; and the import
 * of kubelet cpu_manager_state checkpoints (V2, V3, V4, refusals).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "numaplace/admit.h"
#include "numaplace/kubelet_import.h"
#include "numaplace/state_file.h"
#include "state/state_internal.h"
#include "topo_gen.h"
#include "fixtures.h"

#define GiB (1ULL << 30)
#define DATA "tests/data/state/"

#define POLICY_RESTRICTED                                                      \
	"{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","                \
	"\"topology_policy\":\"restricted\"}"

/* Reserved CPUs by count: the same policy fits every topology. */
#define POLICY_COUNT                                                           \
	"{\"cpu_policy\":\"static\",\"reserved_cpus\":2,"                      \
	"\"topology_policy\":\"restricted\"}"

/* ---- helpers ---- */

/* A 16-CPU two-node machine with a few kinds of workload on it. */
static void populated(struct np_node_state *st, const struct np_topology *t,
		      const char *policy)
{
	np_test_state_init(st, t, policy);
	np_test_admit_json(st, "{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":[{\"name\":"
		  "\"main\",\"cpu\":\"2\",\"memory\":\"1Gi\"}]}");
	np_test_admit_json(st, "{\"name\":\"db\",\"cgroup\":\"pods/db\",\"qos\":"
		  "\"Guaranteed\",\"containers\":[{\"name\":\"pg\",\"cpu\":4,"
		  "\"memory\":\"2Gi\"},{\"name\":\"log\",\"cpu\":\"500m\"}]}");
	np_test_admit_json(st,
	      "{\"name\":\"batch\",\"qos\":\"BE\",\"containers\":[{\"name\":"
	      "\"b\"}]}");
	np_test_admit_json(st,
	      "{\"name\":\"api\",\"qos\":\"LSR\",\"resourceSpec\":"
	      "{\"preferredCPUBindPolicy\":\"SpreadByPCPUs\"},\"containers\":"
	      "[{\"name\":\"a\",\"cpu\":2}]}");
}

static char *state_json(const struct np_node_state *st)
{
	json_t *j;
	char *s;
	assert_int_equal(np_state_to_json(st, &j), 0);
	s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(j);
	assert_non_null(s);
	return s;
}

static void assert_same_state(const struct np_node_state *a,
			      const struct np_node_state *b)
{
	char *x = state_json(a), *y = state_json(b);
	if (strcmp(x, y))
		fail_msg("states differ:\n%s\n%s", x, y);
	free(x);
	free(y);
}

static char *tmpdir(void)
{
	char *d = strdup("/tmp/np-state-test-XXXXXX");
	assert_non_null(d);
	assert_non_null(mkdtemp(d));
	return d;
}

static void rmdir_all(char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[512];
	assert_non_null(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		assert_int_equal(unlink(p), 0);
	}
	closedir(d);
	assert_int_equal(rmdir(dir), 0);
	free(dir);
}

static int count_prefix(const char *dir, const char *prefix, char *first,
			size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;
	assert_non_null(d);
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix))) {
			if (first && !n)
				snprintf(first, len, "%s/%s", dir, de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	if (len)
		*len = (size_t)n;
	return buf;
}

static void write_file(const char *dir, const char *name, const char *buf,
		       size_t len)
{
	char p[512];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static char *state_path(const char *dir)
{
	static char p[512];
	snprintf(p, sizeof(p), "%s/" NP_STATEFILE_NAME, dir);
	return p;
}

static void save(const char *dir, const struct np_node_state *st)
{
	char err[512];
	if (np_statefile_save(dir, st, err, sizeof(err)))
		fail_msg("save: %s", err);
}

/* Load into a fresh state; expect r, and a message containing needles. */
static void load_expect(const char *dir, const struct np_topology *t,
			const char *policy, int expect, ...)
{
	struct np_node_state st;
	char err[1024] = "";
	bool fresh = true;
	const char *needle;
	va_list ap;
	int r;

	np_test_state_init(&st, t, policy);
	r = np_statefile_load(dir, &st, &fresh, err, sizeof(err));
	if (r != expect)
		fail_msg("load: got %d (%s), expected %d", r, err, expect);
	assert_false(fresh);
	/* a refused load changes nothing */
	if (expect)
		assert_int_equal(st.nworkloads, 0);
	va_start(ap, expect);
	while ((needle = va_arg(ap, const char *)))
		if (!strstr(err, needle))
			fail_msg("message \"%s\" lacks \"%s\"", err, needle);
	va_end(ap);
	np_state_free(&st);
}

/* ---- state file ---- */

static void test_roundtrip(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a, b;
	char *dir = tmpdir(), err[512];
	bool fresh = false;
	json_t *doc;
	(void)state;

	/* nothing there yet: fresh */
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	assert_true(fresh);
	assert_int_equal(b.nworkloads, 0);

	populated(&a, t, POLICY_RESTRICTED);
	assert_int_equal(a.nworkloads, 4);
	save(dir, &a);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	assert_false(fresh);
	assert_int_equal(b.nworkloads, 4);
	assert_same_state(&a, &b);
	/* the caches were rebuilt: pools agree */
	{
		json_t *pa = np_pools_to_json(&a), *pb = np_pools_to_json(&b);
		assert_true(json_equal(pa, pb));
		json_decref(pa);
		json_decref(pb);
	}
	/* saving the loaded state gives the same file */
	{
		char *f1 = read_file(state_path(dir), NULL), *f2;
		save(dir, &b);
		f2 = read_file(state_path(dir), NULL);
		assert_string_equal(f1, f2);
		free(f1);
		free(f2);
	}
	/* the document carries policy, topology, fingerprints and pools */
	doc = json_load_file(state_path(dir), 0, NULL);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "version")),
			 1);
	assert_string_equal(json_string_value(json_object_get(doc, "format")),
			    NP_STATEFILE_FORMAT);
	assert_non_null(strstr(
	    json_string_value(json_object_get(doc, "checksum")), "fnv1a64:"));
	{
		json_t *body = json_object_get(doc, "body");
		assert_string_equal(
		    json_string_value(json_object_get(
			json_object_get(body, "policy"), "topology_policy")),
		    "restricted");
		assert_string_equal(
		    json_string_value(json_object_get(
			json_object_get(body, "topology"), "online")),
		    "0-15");
		assert_non_null(json_object_get(
		    json_object_get(body, "fingerprint"), "topology"));
		assert_non_null(json_object_get(json_object_get(body, "pools"),
						"exclusive"));
	}
	json_decref(doc);
	np_state_free(&a);
	np_state_free(&b);
	np_topology_free(t);
	rmdir_all(dir);
}

static void test_atomic_files(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a, b;
	char *dir = tmpdir(), err[512], own[64];
	struct stat sb;
	int removed = -1;
	bool fresh = true;
	(void)state;

	populated(&a, t, POLICY_RESTRICTED);
	save(dir, &a);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 0);
	assert_int_equal(stat(state_path(dir), &sb), 0);
	assert_true(S_ISREG(sb.st_mode));
	assert_int_equal(sb.st_mode & 07777, 0600);

	/* a temp file with our own pid (an earlier crashed process) does not
	 * block the next save */
	snprintf(own, sizeof(own), NP_STATEFILE_TMP_PREFIX "%ld",
		 (long)getpid());
	write_file(dir, own, "{", 1);
	save(dir, &a);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 0);

	/* leftovers are removed at load, and the state still loads */
	write_file(dir, NP_STATEFILE_TMP_PREFIX "4194999", "{\"body\":", 8);
	write_file(dir, NP_STATEFILE_TMP_PREFIX "1", "", 0);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 2);
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	assert_false(fresh);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 0);
	assert_same_state(&a, &b);

	/* the explicit cleaner counts */
	write_file(dir, NP_STATEFILE_TMP_PREFIX "7", "x", 1);
	assert_int_equal(
	    np_statefile_clean_tmp(dir, &removed, err, sizeof(err)), 0);
	assert_int_equal(removed, 1);

	/* a missing directory is an error that names it, not a fresh start */
	assert_int_equal(np_statefile_load("/nonexistent/np-state", &b, &fresh,
					   err, sizeof(err)),
			 -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/np-state"));
	assert_int_equal(
	    np_statefile_save("/nonexistent/np-state", &a, err, sizeof(err)),
	    -ENOENT);

	np_state_free(&a);
	np_state_free(&b);
	np_topology_free(t);
	rmdir_all(dir);
}

/* The daemon's part (body.daemon) goes in the same write, under the same
 * checksum, and comes back as it was; one that is not an object is
 * corruption. */
static void test_daemon_part(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a, b;
	char *dir = tmpdir(), err[512], *good, *bad, *p;
	json_t *part = json_pack("{s:{s:s},s:[s]}", "spec_files", "web",
				 "/etc/numaplace/specs/web.json", "pending",
				 "db"),
	       *back = NULL;
	bool fresh = true;
	size_t len;
	(void)state;

	assert_non_null(part);
	populated(&a, t, POLICY_RESTRICTED);
	assert_int_equal(
	    np_statefile_save_with(dir, &a, part, err, sizeof(err)), 0);
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	if (np_statefile_load_with(dir, &b, &fresh, &back, err, sizeof(err)))
		fail_msg("load: %s", err);
	assert_false(fresh);
	assert_non_null(back);
	assert_true(json_equal(part, back));
	assert_same_state(&a, &b);
	json_decref(back);
	np_state_free(&b);

	/* without one: NULL, and the plain load still reads the file */
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	np_state_free(&b);
	save(dir, &a);
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	{
		json_t *sentinel = json_object();
		back = sentinel; /* must be overwritten */
		assert_int_equal(np_statefile_load_with(dir, &b, &fresh, &back,
							err, sizeof(err)),
				 0);
		assert_null(back);
		json_decref(sentinel);
	}
	np_state_free(&b);

	/* the checksum covers it: "db" -> "dx" is a mismatch */
	assert_int_equal(
	    np_statefile_save_with(dir, &a, part, err, sizeof(err)), 0);
	good = read_file(state_path(dir), &len);
	bad = strdup(good);
	assert_non_null(bad);
	p = strstr(bad, "\"db\"");
	assert_non_null(p);
	p[2] = 'x';
	write_file(dir, NP_STATEFILE_NAME, bad, len);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "checksum mismatch", NULL);
	write_file(dir, NP_STATEFILE_NAME, good, len);

	/* refused: a part that is not an object, and nothing is written */
	{
		json_t *arr = json_array();
		char *now;
		assert_int_equal(
		    np_statefile_save_with(dir, &a, arr, err, sizeof(err)),
		    -EINVAL);
		assert_non_null(strstr(err, "not an object"));
		now = read_file(state_path(dir), NULL);
		assert_string_equal(now, good);
		free(now);
		json_decref(arr);
	}
	free(good);
	free(bad);
	json_decref(part);
	np_state_free(&a);
	np_topology_free(t);
	rmdir_all(dir);
}

static void test_corrupt(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a;
	char *dir = tmpdir(), *good, *bad, *p;
	size_t len;
	(void)state;

	populated(&a, t, POLICY_RESTRICTED);
	save(dir, &a);
	good = read_file(state_path(dir), &len);

	/* not JSON at all */
	write_file(dir, NP_STATEFILE_NAME, "hello, world\n", 13);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    state_path(dir), "is corrupt", "not valid JSON",
		    "--reset-state", "existing cgroup cpusets are left", NULL);

	/* one byte flipped inside the body: still JSON, checksum fails */
	bad = strdup(good);
	assert_non_null(bad);
	p = strstr(bad, "\"name\": \"web\"");
	assert_non_null(p);
	p[strlen("\"name\": \"w")] = 'x'; /* "web" -> "wxb" */
	write_file(dir, NP_STATEFILE_NAME, bad, len);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "is corrupt (checksum mismatch); inspect it, then start "
		    "numaplaced with --reset-state to discard it (existing "
		    "cgroup cpusets are left as they are)",
		    NULL);
	/* a flipped CPU digit as well */
	strcpy(bad, good);
	p = strstr(bad, "\"online\": \"0-15\"");
	assert_non_null(p);
	p[strlen("\"online\": \"0-1")] = '4';
	write_file(dir, NP_STATEFILE_NAME, bad, len);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "checksum mismatch", "--reset-state", NULL);

	/* truncated (as by a non-atomic writer), and empty */
	write_file(dir, NP_STATEFILE_NAME, good, len / 2);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "is corrupt", "--reset-state", NULL);
	write_file(dir, NP_STATEFILE_NAME, good, len - 3);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "is corrupt", "--reset-state", NULL);
	write_file(dir, NP_STATEFILE_NAME, "", 0);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "empty file", "--reset-state", NULL);

	/* JSON, but not ours */
	write_file(dir, NP_STATEFILE_NAME, "{\"a\": 1}", 8);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "not a numaplace state file", "--reset-state", NULL);

	/* the intact file still loads */
	write_file(dir, NP_STATEFILE_NAME, good, len);
	load_expect(dir, t, POLICY_RESTRICTED, 0, NULL);

	free(good);
	free(bad);
	np_state_free(&a);
	np_topology_free(t);
	rmdir_all(dir);
}

/* Rewrite the file with a modified body and a checksum that matches. */
static void write_doc(const char *dir, json_t *doc)
{
	json_t *body = json_object_get(doc, "body");
	char buf[32], *s;
	snprintf(buf, sizeof(buf), "fnv1a64:%016llx",
		 (unsigned long long)np_json_fnv1a64(body));
	json_object_set_new(doc, "checksum", json_string(buf));
	s = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	assert_non_null(s);
	write_file(dir, NP_STATEFILE_NAME, s, strlen(s));
	free(s);
}

/* A checksum-valid file whose state does not validate is corrupt too. */
static void test_validation_failure(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a;
	char *dir = tmpdir();
	json_t *doc, *ws, *c0, *c1;
	(void)state;

	populated(&a, t, POLICY_RESTRICTED);
	doc = np_statefile_document(&a);
	assert_non_null(doc);
	/* give "api" the CPUs of "web" */
	ws = json_object_get(
	    json_object_get(json_object_get(doc, "body"), "state"),
	    "workloads");
	c0 = json_array_get(
	    json_object_get(json_array_get(ws, 0), "containers"), 0);
	c1 = json_array_get(
	    json_object_get(json_array_get(ws, 3), "containers"), 0);
	json_object_set(c1, "cpus", json_object_get(c0, "cpus"));
	write_doc(dir, doc);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "is corrupt", "overlaps another exclusive allocation",
		    "--reset-state", NULL);

	/* two workloads with one cgroup: db (index 1) takes web's */
	json_decref(doc);
	doc = np_statefile_document(&a);
	ws = json_object_get(
	    json_object_get(json_object_get(doc, "body"), "state"),
	    "workloads");
	json_object_set_new(json_object_get(json_array_get(ws, 1), "spec"),
			    "cgroup", json_string("web"));
	write_doc(dir, doc);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "workloads[1].spec.cgroup: \"web\" is workload web's already",
		    NULL);
	/* charges of the wrong type are refused, not dropped */
	json_decref(doc);
	doc = np_statefile_document(&a);
	ws = json_object_get(
	    json_object_get(json_object_get(doc, "body"), "state"),
	    "workloads");
	c0 = json_array_get(
	    json_object_get(json_array_get(ws, 0), "containers"), 0);
	json_object_set_new(c0, "memory", json_string("1Gi"));
	write_doc(dir, doc);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "containers[0].memory: expected an object", NULL);

	/* "partitioned_by" only as "verify", and only on a partition */
	json_decref(doc);
	doc = np_statefile_document(&a);
	ws = json_object_get(
	    json_object_get(json_object_get(doc, "body"), "state"),
	    "workloads");
	json_object_set_new(json_array_get(ws, 0), "partitioned_by",
			    json_string("verify"));
	write_doc(dir, doc);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "workloads[0].partitioned_by: only with isolation "
		    "\"partition\"",
		    NULL);

	/* node ids past an int (2^32 would narrow to node 0, or shift past
	 * bit 63) are refused, whatever field they are in */
	{
		static const char *const bad_nodes[][2] = {
		    {"{\"hint\": {\"mask\": [4294967296]}}",
		     "hint: mask names an unknown NUMA node"},
		    {"{\"hugepages\": [{\"size_index\": 0, \"node\": "
		     "4294967296, \"pages\": 1}]}",
		     "hugepages: bad entry 0"},
		    {"{\"memory\": {\"4294967296\": 1}}",
		     "memory: bad entry \"4294967296\""},
		    {"{\"memory\": {\"0x1\": 1}}", "memory: bad entry \"0x1\""},
		    /* not a node id: a container's name is kept once, the
		     * spec's, so the two must agree */
		    {"{\"name\": \"other\"}",
		     "containers[0].name: \"other\" is not the name of the "
		     "spec's container at this place"},
		};
		for (size_t k = 0; k < sizeof(bad_nodes) / sizeof(bad_nodes[0]);
		     k++) {
			json_t *patch = json_loads(bad_nodes[k][0], 0, NULL);
			json_decref(doc);
			doc = np_statefile_document(&a);
			ws = json_object_get(
			    json_object_get(json_object_get(doc, "body"),
					    "state"),
			    "workloads");
			assert_non_null(patch);
			json_object_update(
			    json_array_get(json_object_get(json_array_get(ws, 0),
							   "containers"),
					   0),
			    patch);
			json_decref(patch);
			write_doc(dir, doc);
			load_expect(dir, t, POLICY_RESTRICTED,
				    NP_STATEFILE_ECORRUPT, bad_nodes[k][1], NULL);
		}
	}

	/* a newer format version is its own outcome */
	json_decref(doc);
	doc = np_statefile_document(&a);
	json_object_set_new(doc, "version", json_integer(2));
	write_doc(dir, doc);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_EVERSION,
		    "format version 2", "--reset-state", NULL);

	/* a fingerprint that does not match its policy */
	json_decref(doc);
	doc = np_statefile_document(&a);
	json_object_set_new(
	    json_object_get(json_object_get(doc, "body"), "policy"),
	    "topology_policy", json_string("none"));
	write_doc(dir, doc);
	load_expect(dir, t, POLICY_RESTRICTED, NP_STATEFILE_ECORRUPT,
		    "policy fingerprint", NULL);

	json_decref(doc);
	np_state_free(&a);
	np_topology_free(t);
	rmdir_all(dir);
}

static void test_policy_changed(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a;
	char *dir = tmpdir();
	(void)state;

	populated(&a, t, POLICY_RESTRICTED);
	save(dir, &a);
	load_expect(dir, t,
		    "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
		    "\"topology_policy\":\"best-effort\"}",
		    NP_STATEFILE_EPOLICY,
		    "node policy changed since the state was written "
		    "(topology_policy: restricted -> best-effort); allocations "
		    "would move: drain the node's workloads and start with "
		    "--reset-state",
		    NULL);
	/* a nested option, and the reserved CPUs */
	load_expect(dir, t,
		    "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
		    "\"topology_policy\":\"restricted\",\"cpu_policy_options\":"
		    "{\"full-pcpus-only\":true}}",
		    NP_STATEFILE_EPOLICY,
		    "(cpu_policy_options.full-pcpus-only: (unset) -> true)",
		    NULL);
	load_expect(dir, t,
		    "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0-1\","
		    "\"topology_policy\":\"restricted\"}",
		    NP_STATEFILE_EPOLICY, "(reserved_cpus: 0,8 -> 0-1)", NULL);
	/* the unchanged policy still loads */
	load_expect(dir, t, POLICY_RESTRICTED, 0, NULL);
	/* drained (no workload): a new policy applies, nothing could move */
	np_state_free(&a);
	populated(&a, t, POLICY_RESTRICTED);
	while (a.nworkloads)
		assert_int_equal(np_release(&a, a.w[0]->req.name), 0);
	save(dir, &a);
	load_expect(dir, t,
		    "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0-1\","
		    "\"topology_policy\":\"best-effort\"}",
		    0, NULL);
	np_state_free(&a);
	np_topology_free(t);
	rmdir_all(dir);
}

static void test_topology_changed(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	/* fewer CPUs */
	struct np_topology *small = np_test_topology(1, 1, 4, 2, true, 8 * GiB);
	/* same 16 CPUs, four NUMA nodes */
	struct np_topology *split = np_test_topology(2, 2, 2, 2, true, 8 * GiB);
	/* same shape, SMT siblings numbered differently */
	struct np_topology *renum =
	    np_test_topology(2, 1, 4, 2, false, 8 * GiB);
	/* more memory: not part of the fingerprint */
	struct np_topology *mem = np_test_topology(2, 1, 4, 2, true, 16 * GiB);
	struct np_node_state a;
	char *dir = tmpdir();
	(void)state;

	populated(&a, t, POLICY_COUNT);
	save(dir, &a);
	load_expect(dir, small, POLICY_COUNT, NP_STATEFILE_ETOPOLOGY,
		    "CPU topology changed since the state was written "
		    "(online: 0-15 -> 0-7)",
		    "--reset-state", NULL);
	load_expect(dir, split, POLICY_COUNT, NP_STATEFILE_ETOPOLOGY,
		    "(numa.0: 0-3,8-11 -> 0-1,8-9)", "--reset-state", NULL);
	load_expect(dir, renum, POLICY_COUNT, NP_STATEFILE_ETOPOLOGY,
		    "CPU topology changed", NULL);
	load_expect(dir, mem, POLICY_COUNT, 0, NULL);
	/* both changed: the policy is named, the topology mentioned */
	load_expect(dir, small,
		    "{\"cpu_policy\":\"static\",\"reserved_cpus\":"
		    "2,\"topology_policy\":\"single-numa-node\"}",
		    NP_STATEFILE_EPOLICY,
		    "(topology_policy: restricted -> single-numa-node)",
		    "the CPU topology changed too (online: 0-15 -> 0-7)", NULL);
	np_state_free(&a);
	np_topology_free(t);
	np_topology_free(small);
	np_topology_free(split);
	np_topology_free(renum);
	np_topology_free(mem);
	rmdir_all(dir);
}

/* 8 CPUs, two sockets = nodes, cores {c, c+4}; cpu off is offline with
 * the place hwloc guesses for a CPU whose sysfs topology is gone (a core
 * of its own, id 99). */
static struct np_topology *eight(int off)
{
	struct np_cpu_desc d[8];
	struct np_topology *t;
	char err[256];

	for (int c = 0; c < 8; c++) {
		int core = c % 4, sock = core / 2;
		d[c] = (struct np_cpu_desc){c, core, sock, sock, -1, c != off};
		if (c == off)
			d[c].core = 99;
	}
	if (np_topology_build(&t, d, 8, err, sizeof(err)))
		fail_msg("topology: %s", err);
	return t;
}

/* A restart while a CPU is offline: the saved topology gives it its
 * place back, and the state loads (without it the load is refused). */
static void test_offline_restart(void **state)
{
	struct np_topology *all = eight(-1), *now = eight(5), *fixed = NULL;
	struct np_cpu_desc *fix = NULL;
	struct np_node_state a;
	char *dir = tmpdir(), err[512];
	int nfix = -1;
	(void)state;

	np_test_state_init(&a, all, POLICY_COUNT);
	np_test_admit_json(&a, "{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":[{"
		  "\"name\":\"m\",\"cpu\":\"4\"}]}");
	save(dir, &a);
	/* nothing offline: nothing to restore, even without a state */
	assert_int_equal(np_statefile_offline_places(dir, all, &fix, &nfix), 0);
	assert_null(fix);
	assert_int_equal(nfix, 0);
	load_expect(dir, now, POLICY_COUNT, NP_STATEFILE_ETOPOLOGY,
		    "CPU topology changed", NULL);
	assert_int_equal(np_statefile_offline_places(dir, now, &fix, &nfix), 0);
	assert_int_equal(nfix, 1);
	assert_int_equal(fix[0].cpu, 5);
	assert_int_equal(fix[0].core, 1);
	assert_int_equal(fix[0].socket, 0);
	assert_int_equal(fix[0].numa, 0);
	assert_true(fix[0].online);
	if (np_topology_restore(now, fix, nfix, &fixed, err, sizeof(err)))
		fail_msg("restore: %s", err);
	assert_true(np_cpuset_equal(&fixed->online, &all->online));
	assert_int_equal(fixed->ncores, all->ncores);
	load_expect(dir, fixed, POLICY_COUNT, 0, NULL);
	/* a place naming a node the machine does not have is refused */
	fix[0].numa = 7;
	{
		struct np_topology *bad = NULL;
		assert_int_equal(np_topology_restore(now, fix, nfix, &bad, err,
						     sizeof(err)),
				 -EINVAL);
		assert_null(bad);
		if (!strstr(err, "NUMA node"))
			fail_msg("message: %s", err);
	}
	free(fix);
	np_state_free(&a);
	np_topology_free(all);
	np_topology_free(now);
	np_topology_free(fixed);
	rmdir_all(dir);
}

static void test_reset(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a, b;
	char *dir = tmpdir(), err[512], bak[512], bak2[512], *old, *moved;
	bool fresh = false;
	(void)state;

	populated(&a, t, POLICY_RESTRICTED);
	save(dir, &a);
	old = read_file(state_path(dir), NULL);
	write_file(dir, NP_STATEFILE_TMP_PREFIX "99", "{", 1);
	assert_int_equal(
	    np_statefile_move_aside(dir, bak, sizeof(bak), err, sizeof(err)),
	    0);
	assert_non_null(strstr(bak, "/" NP_STATEFILE_BAK_PREFIX));
	assert_int_equal(access(state_path(dir), F_OK), -1);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 0);
	moved = read_file(bak, NULL);
	assert_string_equal(old, moved);
	free(moved);

	/* now fresh */
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	assert_true(fresh);
	assert_int_equal(b.nworkloads, 0);

	/* nothing to move: fine */
	assert_int_equal(
	    np_statefile_move_aside(dir, bak2, sizeof(bak2), err, sizeof(err)),
	    0);
	assert_string_equal(bak2, "");

	/* a second reset in the same second never overwrites the first */
	save(dir, &b);
	assert_int_equal(
	    np_statefile_move_aside(dir, bak2, sizeof(bak2), err, sizeof(err)),
	    0);
	assert_string_not_equal(bak, bak2);
	moved = read_file(bak, NULL);
	assert_string_equal(old, moved);
	free(moved);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_BAK_PREFIX, NULL, 0),
			 2);

	/* the short form used by numaplaced --reset-state */
	save(dir, &a);
	assert_int_equal(np_statefile_reset(dir, err, sizeof(err)), 0);
	assert_int_equal(access(state_path(dir), F_OK), -1);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_BAK_PREFIX, NULL, 0),
			 3);

	free(old);
	np_state_free(&a);
	np_state_free(&b);
	np_topology_free(t);
	rmdir_all(dir);
}

/* A crash in the middle of a save: the temp file is partial and the
 * rename never happened. The old state.json is intact and loads. */
static void test_crash_during_save(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_node_state a, b;
	char *dir = tmpdir(), err[512], *text, *before, *after;
	json_t *doc;
	bool fresh = true;
	(void)state;

	populated(&a, t, POLICY_RESTRICTED);
	save(dir, &a);
	before = read_file(state_path(dir), NULL);

	/* the next state, half written by a process that then died */
	assert_int_equal(np_release(&a, "web"), 0);
	doc = np_statefile_document(&a);
	text = json_dumps(doc, JSON_INDENT(1) | JSON_SORT_KEYS);
	assert_non_null(text);
	write_file(dir, NP_STATEFILE_TMP_PREFIX "31337", text,
		   strlen(text) / 3);
	/* and one fully written but not renamed */
	write_file(dir, NP_STATEFILE_TMP_PREFIX "31338", text, strlen(text));

	after = read_file(state_path(dir), NULL);
	assert_string_equal(before, after);
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	assert_false(fresh);
	assert_int_equal(b.nworkloads, 4);
	assert_true(np_state_find(&b, "web") >= 0);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 0);

	/* a crash before the first state.json ever existed: fresh */
	np_state_free(&b);
	assert_int_equal(unlink(state_path(dir)), 0);
	write_file(dir, NP_STATEFILE_TMP_PREFIX "31339", text,
		   strlen(text) / 2);
	np_test_state_init(&b, t, POLICY_RESTRICTED);
	assert_int_equal(np_statefile_load(dir, &b, &fresh, err, sizeof(err)),
			 0);
	assert_true(fresh);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 0);

	free(text);
	free(before);
	free(after);
	json_decref(doc);
	np_state_free(&a);
	np_state_free(&b);
	np_topology_free(t);
	rmdir_all(dir);
}

/* ---- the streamed save ---- */

/*
 * np_statefile_compact() writes the file one workload at a time; it must
 * be what the document form says: it parses, its checksum is the one of
 * its body, the whole document json_equal()s np_statefile_document_seq()
 * (body included), the text is that document dumped whole (indented,
 * sorted, a newline), *bytes is its size, and it loads back.
 */
static size_t expect_streamed(const struct np_node_state *st,
			      const json_t *daemon, uint64_t seq)
{
	char *dir = tmpdir(), err[512], want[32], *text, *ref_text;
	json_t *doc, *ref, *back = NULL;
	struct np_node_state b;
	json_error_t jerr;
	uint64_t s = seq;
	size_t bytes = 0, len = 0;
	bool fresh = true;

	if (np_statefile_compact(dir, st, daemon, &s, &bytes, err, sizeof(err)))
		fail_msg("compact: %s", err);
	assert_int_equal(s, seq); /* the journal was empty */
	text = read_file(state_path(dir), &len);
	assert_int_equal(bytes, len);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		fail_msg("the streamed file does not parse: %s at line %d "
			 "column %d",
			 jerr.text, jerr.line, jerr.column);
	snprintf(want, sizeof(want), "fnv1a64:%016" PRIx64,
		 np_json_fnv1a64(json_object_get(doc, "body")));
	assert_string_equal(json_string_value(json_object_get(doc, "checksum")),
			    want);
	ref = np_statefile_document_seq(st, daemon, seq);
	assert_non_null(ref);
	assert_true(json_equal(json_object_get(doc, "body"),
			       json_object_get(ref, "body")));
	assert_true(json_equal(doc, ref));
	ref_text = json_dumps(ref, JSON_INDENT(1) | JSON_SORT_KEYS);
	assert_non_null(ref_text);
	assert_int_equal(len, strlen(ref_text) + 1);
	assert_memory_equal(text, ref_text, len - 1);
	assert_int_equal(text[len - 1], '\n');
	/* and it loads as it was */
	if (np_state_init(&b, st->topo, &st->policy, err, sizeof(err)))
		fail_msg("init: %s", err);
	if (np_statefile_load_with(dir, &b, &fresh, &back, err, sizeof(err)))
		fail_msg("load: %s", err);
	assert_false(fresh);
	assert_int_equal(b.nworkloads, st->nworkloads);
	assert_same_state(st, &b);
	assert_true(daemon ? json_equal(back, (json_t *)daemon) : !back);
	json_decref(back);
	np_state_free(&b);
	free(ref_text);
	json_decref(ref);
	json_decref(doc);
	free(text);
	rmdir_all(dir);
	return len;
}

/* A write that fails (ENOSPC) is reported as one, whole or streamed. */
static void expect_stream_enospc(const struct np_node_state *st)
{
	int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
	size_t bytes = 0;
	bool io = false;

	if (fd < 0)
		return; /* no /dev/full here */
	assert_int_equal(np_statefile_stream(fd, st, NULL, 0, &bytes, &io),
			 -ENOSPC);
	assert_true(io);
	close(fd);
}

/*
 * A compaction whose write fails half way (RLIMIT_FSIZE: EFBIG after the
 * first buffers of text) names the temp file, leaves state.json as it
 * was and no temp file behind.
 */
static void expect_compact_efbig(const struct np_node_state *st)
{
	char *dir = tmpdir(), err[512] = "", *before, *after;
	struct rlimit old, small;
	void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
	uint64_t seq = 0;
	int r;

	save(dir, st);
	before = read_file(state_path(dir), NULL);
	assert_true(strlen(before) > 2 * (64u << 10));
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	small = old;
	small.rlim_cur = 100u << 10;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
	r = np_statefile_compact(dir, st, NULL, &seq, NULL, err, sizeof(err));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, was);
	assert_int_equal(r, -EFBIG);
	if (!strstr(err, "writing ") || !strstr(err, NP_STATEFILE_TMP_PREFIX) ||
	    !strstr(err, "is unchanged"))
		fail_msg("message: %s", err);
	after = read_file(state_path(dir), NULL);
	assert_string_equal(before, after);
	assert_int_equal(count_prefix(dir, NP_STATEFILE_TMP_PREFIX, NULL, 0),
			 0);
	free(before);
	free(after);
	rmdir_all(dir);
}

/* admit, or false if the node has no room for it */
static bool try_admit(struct np_node_state *st, const char *spec)
{
	struct np_workload_req w = {0};
	struct np_decision d;
	json_t *j = json_loads(spec, 0, NULL);
	char err[512];
	bool ok;

	assert_non_null(j);
	if (np_workload_req_from_json(&w, j, "workload", err, sizeof(err)) ||
	    np_admit(st, &w, &d, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	ok = d.admitted;
	json_decref(j);
	np_workload_req_free(&w);
	return ok;
}

/* n random workloads (seeded): every class, one to three containers,
 * CPUs whole or in millis, with or without memory. */
static void random_state(struct np_node_state *st, int n, unsigned seed)
{
	static const char *const qos[] = {
	    "LS", "LS", "LS", "BE", "LSR", "LSE", "Guaranteed", "Burstable"};
	char spec[1024];

	for (int i = 0, tries = 0; st->nworkloads < n && tries < 4 * n;
	     tries++, i++) {
		const char *q = qos[rand_r(&seed) % 8];
		int nc = 1 + (int)(rand_r(&seed) % 3), off;
		bool whole = !strcmp(q, "LSE") || !strcmp(q, "LSR") ||
			     !strcmp(q, "Guaranteed");

		off = snprintf(spec, sizeof(spec),
			       "{\"name\":\"w%d\",\"cgroup\":\"pods/w%d\","
			       "\"qos\":\"%s\",\"containers\":[",
			       i, i, q);
		for (int c = 0; c < nc; c++) {
			unsigned mem = rand_r(&seed) % 4;
			off += snprintf(spec + off, sizeof(spec) - (size_t)off,
					"%s{\"name\":\"c%d\"", c ? "," : "", c);
			if (strcmp(q, "BE") && whole)
				off += snprintf(
				    spec + off, sizeof(spec) - (size_t)off,
				    ",\"cpu\":%u", 1 + rand_r(&seed) % 2);
			else if (strcmp(q, "BE"))
				off += snprintf(spec + off,
						sizeof(spec) - (size_t)off,
						",\"cpu\":\"%um\"",
						50 + rand_r(&seed) % 400);
			if (mem && strcmp(q, "BE"))
				off += snprintf(
				    spec + off, sizeof(spec) - (size_t)off,
				    ",\"memory\":\"%uMi\"", mem * 64);
			off += snprintf(spec + off, sizeof(spec) - (size_t)off,
					"}");
		}
		snprintf(spec + off, sizeof(spec) - (size_t)off, "]}");
		try_admit(st, spec);
	}
}

static void test_streamed_save(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 4, 2, true, 8 * GiB);
	struct np_topology *big = np_test_topology(2, 2, 16, 2, true, 64 * GiB);
	struct np_topology *kt = NULL;
	struct np_node_state a;
	json_t *part =
	    json_pack("{s:{s:s},s:[s]}", "spec_files", "web",
		      "/etc/numaplace/specs/web.json", "pending", "db");
	char err[512];
	(void)state;

	assert_non_null(part);
	/* empty */
	np_test_state_init(&a, t, POLICY_RESTRICTED);
	expect_streamed(&a, NULL, 0);
	expect_streamed(&a, part, 3);
	expect_stream_enospc(&a);
	np_state_free(&a);

	/* a few workloads, several containers each */
	populated(&a, t, POLICY_RESTRICTED);
	expect_streamed(&a, NULL, 0);
	expect_streamed(&a, part, 12);
	np_state_free(&a);

	/* memory and hugepage charges, a device */
	if (np_topology_load(&kt, "tests/data/topology/kubelet-2socket.json",
			     err, sizeof(err)))
		fail_msg("topology: %s", err);
	np_test_state_init(&a, kt,
	     "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,8\","
	     "\"topology_policy\":\"single-numa-node\",\"topology_scope\":"
	     "\"container\"}");
	np_test_admit_json(&a, "{\"name\":\"web\",\"cgroup\":\"pods/web\",\"qos\":\"LSE\","
		  "\"containers\":[{\"name\":\"main\",\"cpu\":\"4\","
		  "\"memory\":\"2Gi\",\"hugepages-2Mi\":\"512Mi\"},{\"name\":"
		  "\"side\",\"cpu\":1,\"memory\":\"64Mi\"}]}");
	np_test_admit_json(&a, "{\"name\":\"api\",\"cgroup\":\"pods/api\",\"qos\":\"LSR\","
		  "\"containers\":[{\"name\":\"a\",\"cpu\":2,\"memory\":"
		  "\"1Gi\",\"devices\":{\"nvidia.com/gpu\":1}}]}");
	np_test_admit_json(&a, "{\"name\":\"batch\",\"cgroup\":\"pods/batch\",\"qos\":"
		  "\"BE\",\"containers\":[{\"name\":\"b\"}]}");
	assert_int_equal(a.nworkloads, 3);
	{
		json_t *doc = np_statefile_document(&a);
		char *text = json_dumps(doc, JSON_COMPACT);
		assert_non_null(text);
		assert_non_null(
		    strstr(text, "\"resource\":\"nvidia.com/gpu\""));
		assert_non_null(strstr(text, "\"pages\":256"));
		free(text);
		json_decref(doc);
	}
	expect_streamed(&a, part, 5);
	np_state_free(&a);

	/* random, ~200 workloads: more than one buffer of text */
	np_test_state_init(&a, big, POLICY_COUNT);
	random_state(&a, 200, 20261127);
	assert_true(a.nworkloads >= 150);
	assert_true(expect_streamed(&a, part, 99) > 2 * (64u << 10));
	expect_stream_enospc(&a);
	expect_compact_efbig(&a);
	np_state_free(&a);

	json_decref(part);
	np_topology_free(kt);
	np_topology_free(big);
	np_topology_free(t);
}

/* ---- kubelet import ---- */

/* The kubelet's dual-socket HT fixture: core c = {c, c+6}; node 0 =
 * 0-2,6-8, node 1 = 3-5,9-11; the kubelet reserved 0,6. */
#define KPOLICY "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0,6\"}"

static const struct np_workload_alloc *wl(const struct np_node_state *st,
					  const char *name)
{
	int i = np_state_find(st, name);
	if (i < 0)
		fail_msg("no workload %s", name);
	return st->w[i];
}

static void expect_container(const struct np_workload_alloc *a, int i,
			     const char *name, const char *cpus,
			     const char *mems)
{
	char buf[128];
	assert_true(i < a->ncontainers);
	assert_string_equal(a->req.c[i].name, name);
	assert_true(a->c[i].exclusive);
	np_cpuset_format(a->c[i].cpus, buf, sizeof(buf));
	assert_string_equal(buf, cpus);
	np_nodemask_format(a->c[i].mems, buf, sizeof(buf));
	assert_string_equal(buf, mems);
	assert_int_equal(a->req.c[i].cpu_milli,
			 (int64_t)np_cpuset_count(a->c[i].cpus) * 1000);
	assert_false(a->c[i].hint.any);
	assert_int_equal(a->c[i].hint.mask, a->c[i].mems);
}

static void test_kubelet_v2(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 3, 2, true, 8 * GiB);
	struct np_node_state st, back;
	struct np_kubelet_checkpoint ck;
	const struct np_workload_alloc *a;
	struct np_pools p;
	char err[1024], buf[64], *dir = tmpdir();
	bool fresh;
	(void)state;

	assert_int_equal(np_kubelet_checkpoint_read(&ck, DATA "kubelet-v2.json",
						    err, sizeof(err)),
			 0);
	assert_int_equal(ck.version, 2);
	assert_string_equal(ck.policy, "static");
	assert_int_equal(ck.nentries, 3);
	assert_true(ck.has_checksum);
	assert_int_equal(ck.checksum, 3145962718u);
	np_kubelet_checkpoint_free(&ck);

	np_test_state_init(&st, t, KPOLICY);
	if (np_kubelet_import(DATA "kubelet-v2.json", &st, NULL, err,
			      sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(st.nworkloads, 2);
	a = wl(&st, "kubelet-6f1a2b3c");
	assert_string_equal(
	    a->req.cgroup, "kubepods.slice/kubepods-pod6f1a2b3c_4d5e_4f60_8a7b_"
			   "9c0d1e2f3a4b.slice");
	assert_int_equal(a->req.qos, NP_QOS_GUARANTEED);
	assert_int_equal(a->qos_class, NP_QOS_LSE);
	assert_int_equal(a->ncontainers, 1);
	expect_container(a, 0, "nginx", "1-2,7-8", "0");
	assert_true(a->c[0].hint.preferred);
	a = wl(&st, "kubelet-b8e4d2f1");
	assert_int_equal(a->ncontainers, 2);
	expect_container(a, 0, "db", "3-4,9-10", "1");
	expect_container(a, 1, "metrics", "5", "1");
	np_state_pools(&st, &p);
	np_cpuset_format(&p.exclusive, buf, sizeof(buf));
	assert_string_equal(buf, "1-5,7-10");
	np_cpuset_format(&p.shared, buf, sizeof(buf));
	assert_string_equal(buf, "0,6,11"); /* the kubelet's defaultCpuSet */

	/* importing twice is refused, and changes nothing */
	assert_int_equal(np_kubelet_import(DATA "kubelet-v2.json", &st, NULL,
					   err, sizeof(err)),
			 -EEXIST);
	assert_non_null(strstr(err, "already adopted"));
	assert_int_equal(st.nworkloads, 2);

	/* numaplace's admission works around the adopted CPUs */
	np_test_admit_json(&st,
	      "{\"name\":\"late\",\"qos\":\"LSE\",\"containers\":[{\"name\":"
	      "\"m\",\"cpu\":1}]}");
	np_cpuset_format(wl(&st, "late")->c[0].cpus, buf, sizeof(buf));
	assert_string_equal(buf, "11");

	/* and the adopted state survives the checkpoint */
	save(dir, &st);
	np_test_state_init(&back, t, KPOLICY);
	if (np_statefile_load(dir, &back, &fresh, err, sizeof(err)))
		fail_msg("%s", err);
	assert_same_state(&st, &back);

	np_state_free(&back);
	np_state_free(&st);
	np_topology_free(t);
	rmdir_all(dir);
}

static void test_kubelet_v4(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 3, 2, true, 8 * GiB);
	struct np_node_state st;
	struct np_kubelet_checkpoint ck;
	char err[1024], *dir = tmpdir(), *s;
	json_t *out, *ws, *doc, *data;
	(void)state;

	assert_int_equal(np_kubelet_checkpoint_read(&ck, DATA "kubelet-v4.json",
						    err, sizeof(err)),
			 0);
	assert_int_equal(ck.version, 4);
	assert_true(ck.has_data_checksum);
	assert_int_equal(ck.data_checksum, 2718281828u);
	assert_int_equal(ck.checksum, 0);
	np_kubelet_checkpoint_free(&ck);

	np_test_state_init(&st, t, KPOLICY);
	/* the dry run renders what would be adopted and leaves st alone */
	if (np_kubelet_import_json(DATA "kubelet-v4.json", &st, NULL, &out, err,
				   sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(st.nworkloads, 0);
	assert_int_equal(json_integer_value(json_object_get(
			     json_object_get(out, "kubelet"), "version")),
			 4);
	assert_true(json_is_false(json_object_get(
	    json_object_get(out, "kubelet"), "checksumVerified")));
	ws = json_object_get(out, "workloads");
	assert_int_equal(json_array_size(ws), 2);
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(ws, 0), "podUID")),
	    "0c9d8e7f-6a5b-4c3d-9e2f-1a0b9c8d7e6f");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(ws, 0), "cpuset")),
	    "1,7");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(ws, 1), "cpuset")),
	    "4-5,10-11");
	assert_string_equal(
	    json_string_value(json_object_get(json_array_get(ws, 1), "name")),
	    "kubelet-f2e1d0c9");
	assert_non_null(json_object_get(out, "state"));
	assert_non_null(json_object_get(out, "pools"));
	json_decref(out);

	if (np_kubelet_import(DATA "kubelet-v4.json", &st, NULL, err,
			      sizeof(err)))
		fail_msg("%s", err);
	assert_int_equal(st.nworkloads, 2);
	expect_container(wl(&st, "kubelet-0c9d8e7f"), 0, "app", "1,7", "0");
	expect_container(wl(&st, "kubelet-f2e1d0c9"), 0, "worker", "4-5,10-11",
			 "1");
	np_state_free(&st);

	/* "data" is authoritative: inline fields that disagree are ignored */
	doc = json_load_file(DATA "kubelet-v4.json", 0, NULL);
	assert_non_null(doc);
	json_object_set_new(doc, "entries", json_object());
	json_object_set_new(doc, "policyName", json_string("none"));
	s = json_dumps(doc, JSON_COMPACT);
	write_file(dir, "v4-inline-differs", s, strlen(s));
	free(s);
	{
		char p[512];
		snprintf(p, sizeof(p), "%s/v4-inline-differs", dir);
		np_test_state_init(&st, t, KPOLICY);
		if (np_kubelet_import(p, &st, NULL, err, sizeof(err)))
			fail_msg("%s", err);
		assert_int_equal(st.nworkloads, 2);
		np_state_free(&st);

		/* data that is not JSON, and a missing dataChecksum */
		json_object_set_new(doc, "data",
				    json_string("{\"policyName\":"));
		s = json_dumps(doc, JSON_COMPACT);
		write_file(dir, "v4-inline-differs", s, strlen(s));
		free(s);
		np_test_state_init(&st, t, KPOLICY);
		assert_int_equal(
		    np_kubelet_import(p, &st, NULL, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "data: not valid JSON"));
		data = json_string("{}");
		json_object_set_new(doc, "data", data);
		json_object_del(doc, "dataChecksum");
		s = json_dumps(doc, JSON_COMPACT);
		write_file(dir, "v4-inline-differs", s, strlen(s));
		free(s);
		assert_int_equal(
		    np_kubelet_import(p, &st, NULL, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, "dataChecksum"));
		assert_int_equal(st.nworkloads, 0);
		np_state_free(&st);
	}
	json_decref(doc);
	np_topology_free(t);
	rmdir_all(dir);
}

static void test_kubelet_v3_prefix(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 3, 2, true, 8 * GiB);
	struct np_node_state st;
	const struct np_workload_alloc *a;
	char err[1024];
	(void)state;

	np_test_state_init(&st, t, KPOLICY);
	if (np_kubelet_import(DATA "kubelet-v3.json", &st,
			      "/kubepods.slice/kubepods-guaranteed.slice/", err,
			      sizeof(err)))
		fail_msg("%s", err);
	a = wl(&st, "kubelet-3d9f8a7b");
	assert_string_equal(
	    a->req.cgroup,
	    "kubepods.slice/kubepods-guaranteed.slice/"
	    "kubepods-pod3d9f8a7b_2c1e_4f0d_b9a8_7c6d5e4f3a2b.slice");
	assert_int_equal(a->ncontainers, 2);
	expect_container(a, 0, "main", "1-2,7-8", "0");
	expect_container(a, 1, NP_KUBELET_POD_POOL, "3,9", "1");
	np_state_free(&st);

	/* an empty prefix: pod cgroups directly below the managed parent */
	np_test_state_init(&st, t, KPOLICY);
	if (np_kubelet_import(DATA "kubelet-v2.json", &st, "", err,
			      sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(wl(&st, "kubelet-6f1a2b3c")->req.cgroup,
			    "kubepods-pod6f1a2b3c_4d5e_4f60_8a7b_9c0d1e2f3a4b."
			    "slice");
	np_state_free(&st);

	/* a prefix that escapes the managed parent is refused */
	np_test_state_init(&st, t, KPOLICY);
	assert_int_equal(np_kubelet_import(DATA "kubelet-v2.json", &st, "../x",
					   err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "cgroup"));
	assert_int_equal(st.nworkloads, 0);
	np_state_free(&st);
	np_topology_free(t);
}

/* Import a checkpoint given inline; expect r and a message part. */
static void import_expect(const struct np_topology *t, const char *policy,
			  const char *spec_first, const char *json, int expect,
			  const char *needle)
{
	char *dir = tmpdir(), p[512], err[1024] = "";
	struct np_node_state st;
	int r, before;

	np_test_state_init(&st, t, policy);
	if (spec_first)
		np_test_admit_json(&st, spec_first);
	before = st.nworkloads;
	write_file(dir, "cpu_manager_state", json, strlen(json));
	snprintf(p, sizeof(p), "%s/cpu_manager_state", dir);
	r = np_kubelet_import(p, &st, NULL, err, sizeof(err));
	if (r != expect)
		fail_msg("%s: got %d (%s), expected %d", json, r, err, expect);
	if (needle && !strstr(err, needle))
		fail_msg("message \"%s\" lacks \"%s\"", err, needle);
	if (r)
		assert_int_equal(st.nworkloads, before);
	np_state_free(&st);
	rmdir_all(dir);
}

#define POD_A "\"6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b\""
#define POD_B "\"b8e4d2f1-0a9c-4b7e-8d6f-5e4c3b2a1908\""

/* 100,000 pods in a checkpoint (entries without CPUs but one): grouped
 * and checked in linear time (it was quadratic: minutes), and the one pod
 * with exclusive CPUs is adopted. */
static void test_kubelet_many_pods(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 3, 2, true, 8 * GiB);
	char *dir = tmpdir(), p[512], err[1024] = "", *json;
	struct np_node_state st;
	size_t len = 0, cap = 100000 * 40 + 256;
	(void)state;

	json = malloc(cap);
	assert_non_null(json);
	len += (size_t)snprintf(json, cap,
				"{\"policyName\":\"static\",\"defaultCpuSet\":"
				"\"0,6\",\"entries\":{" POD_A ":{\"a\":\"1-2\"}");
	for (int i = 0; i < 100000; i++)
		len += (size_t)snprintf(json + len, cap - len,
					",\"pod-%06d\":{\"c\":\"\"}", i);
	snprintf(json + len, cap - len, "},\"checksum\":1}");
	write_file(dir, "cpu_manager_state", json, strlen(json));
	snprintf(p, sizeof(p), "%s/cpu_manager_state", dir);
	np_test_state_init(&st, t, KPOLICY);
	if (np_kubelet_import(p, &st, NULL, err, sizeof(err)))
		fail_msg("import: %s", err);
	assert_int_equal(st.nworkloads, 1);
	{
		char got[64];
		np_cpuset_format(st.w[0]->c[0].cpus, got, sizeof(got));
		assert_string_equal(got, "1-2");
	}
	np_state_free(&st);
	free(json);
	rmdir_all(dir);
	np_topology_free(t);
}

static void test_kubelet_refusals(void **state)
{
	struct np_topology *t = np_test_topology(2, 1, 3, 2, true, 8 * GiB);
	struct np_node_state st;
	char err[1024];
	(void)state;

	/* policy none: nothing to adopt */
	np_test_state_init(&st, t, KPOLICY);
	assert_int_equal(np_kubelet_import(DATA "kubelet-none.json", &st, NULL,
					   err, sizeof(err)),
			 -ENODATA);
	assert_non_null(strstr(err, "kubelet-none.json"));
	assert_non_null(strstr(err, "policy is \"none\""));
	assert_non_null(strstr(err, "nothing to adopt"));
	/* V1 has no pod UIDs */
	assert_int_equal(np_kubelet_import(DATA "kubelet-v1.json", &st, NULL,
					   err, sizeof(err)),
			 -ENOTSUP);
	assert_non_null(strstr(err, "V1"));
	assert_int_equal(st.nworkloads, 0);
	np_state_free(&st);
	/* a missing file */
	np_test_state_init(&st, t, KPOLICY);
	assert_int_equal(
	    np_kubelet_import(DATA "no-such-file", &st, NULL, err, sizeof(err)),
	    -ENOENT);
	np_state_free(&st);

	/* overlapping entries: across pods, and within one pod */
	import_expect(
	    t, KPOLICY, NULL,
	    "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
	    "\"entries\":{" POD_A ":{\"a\":\"1-3\"}," POD_B
	    ":{\"b\":\"3-4\"}},\"checksum\":1}",
	    -EINVAL,
	    "entries overlap: CPU 3 is held by pod "
	    "6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b container \"a\" and "
	    "by pod b8e4d2f1-0a9c-4b7e-8d6f-5e4c3b2a1908 container "
	    "\"b\"");
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{" POD_A
		      ":{\"init\":\"1-2\",\"app\":\"1-2\"}},"
		      "\"checksum\":1}",
		      -EINVAL, "init-container CPU reuse?");
	/* a CPU that this node does not have */
	import_expect(
	    t, KPOLICY, NULL,
	    "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
	    "\"entries\":{" POD_A ":{\"a\":\"10-13\"}},\"checksum\":1}",
	    -EINVAL,
	    "entries[\"6f1a2b3c-4d5e-4f60-8a7b-9c0d1e2f3a4b\"][\"a\"]: "
	    "CPUs 12-13 are not online CPUs of this node (online: "
	    "0-11)");
	/* an entry inside the default set */
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-2,6\","
		      "\"entries\":{" POD_A ":{\"a\":\"2-3\"}},\"checksum\":1}",
		      -EINVAL, "also in defaultCpuSet");
	/* structure */
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{" POD_A ":{\"a\":\"3-x\"}},\"checksum\":1}",
		      -EINVAL, "is not a CPU list");
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{" POD_A ":{\"a\":\"3\"}},\"checksum\":-1}",
		      -EINVAL, "checksum: expected an unsigned 32-bit integer");
	import_expect(
	    t, KPOLICY, NULL,
	    "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
	    "\"entries\":{\"../../etc\":{\"a\":\"3\"}},\"checksum\":1}",
	    -EINVAL, "not a pod UID");
	import_expect(
	    t, KPOLICY, NULL,
	    "{\"policyName\":\"static\",\"entries\":{},\"checksum\":1}",
	    -EINVAL, "defaultCpuSet: required field is missing");
	import_expect(t, KPOLICY, NULL, "{\"policyName\":\"static\",", -EINVAL,
		      "not a kubelet CPU manager checkpoint");
	/* a pod-level set over another pod's CPUs, in either order */
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{\"pod-b\":{\"b\":\"3\"}," POD_A
		      ":{\"a\":\"1\"}},\"podEntries\":{" POD_A
		      ":\"1-3\"},\"checksum\":1}",
		      -EINVAL, "podEntries[" POD_A "] shares CPUs with pod pod-b");
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{" POD_A ":{\"a\":\"1\"},\"pod-b\":{"
		      "\"b\":\"3\"}},\"podEntries\":{" POD_A
		      ":\"1-3\"},\"checksum\":1}",
		      -EINVAL, "podEntries[" POD_A "] shares CPUs with pod pod-b");
	/* V3 pod set that does not contain its containers */
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{" POD_A
		      ":{\"a\":\"1-2\"}},\"podEntries\":{" POD_A
		      ":\"1\"},\"checksum\":1}",
		      -EINVAL, "lacks CPUs 2");

	/* conflicts with numaplace's own allocations and reservation */
	import_expect(
	    t, KPOLICY,
	    "{\"name\":\"web\",\"qos\":\"LSE\",\"containers\":[{\"name\":"
	    "\"m\",\"cpu\":2}]}",
	    "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
	    "\"entries\":{" POD_A ":{\"a\":\"1-2\"}},\"checksum\":1}",
	    -EEXIST, "conflict with numaplace workload \"web\"");
	import_expect(
	    t, "{\"cpu_policy\":\"static\",\"reserved_cpus\":\"0-1\"}", NULL,
	    "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
	    "\"entries\":{" POD_A ":{\"a\":\"1-2\"}},\"checksum\":1}",
	    -EEXIST, "holds CPUs 1 that numaplace reserves");
	import_expect(t, "{\"cpu_policy\":\"none\"}", NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{" POD_A ":{\"a\":\"1-2\"}},\"checksum\":1}",
		      -EINVAL, "needs cpu_policy \"static\"");
	/* the short name is taken by an unrelated workload: the full UID */
	import_expect(t, KPOLICY,
		      "{\"name\":\"kubelet-6f1a2b3c\",\"qos\":\"LS\","
		      "\"containers\":[{\"name\":\"m\",\"cpu\":\"500m\"}]}",
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0,6\","
		      "\"entries\":{" POD_A ":{\"a\":\"1-2\"}},\"checksum\":1}",
		      0, NULL);
	/* pods without exclusive CPUs are skipped; an empty static file
	 * adopts nothing */
	import_expect(t, KPOLICY, NULL,
		      "{\"policyName\":\"static\",\"defaultCpuSet\":\"0-11\","
		      "\"checksum\":0}",
		      0, NULL);
	np_topology_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_daemon_part),
	    cmocka_unit_test(test_atomic_files),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_validation_failure),
	    cmocka_unit_test(test_policy_changed),
	    cmocka_unit_test(test_topology_changed),
	    cmocka_unit_test(test_offline_restart),
	    cmocka_unit_test(test_reset),
	    cmocka_unit_test(test_crash_during_save),
	    cmocka_unit_test(test_streamed_save),
	    cmocka_unit_test(test_kubelet_v2),
	    cmocka_unit_test(test_kubelet_v4),
	    cmocka_unit_test(test_kubelet_v3_prefix),
	    cmocka_unit_test(test_kubelet_many_pods),
	    cmocka_unit_test(test_kubelet_refusals),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
