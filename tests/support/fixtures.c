// SPDX-License-Identifier: Apache-2.0
#include "fixtures.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>
#include <jansson.h>

np_cpuset np_test_cpus(const char *list)
{
	np_cpuset s;
	char err[128];

	if (np_cpuset_parse(&s, list, err, sizeof(err)) < 0)
		fail_msg("bad cpu list \"%s\": %s", list, err);
	return s;
}

void np_test_assert_cpus(const np_cpuset *got, const char *want)
{
	np_cpuset w = np_test_cpus(want);

	if (!np_cpuset_equal(got, &w)) {
		char buf[512];
		np_cpuset_format(got, buf, sizeof(buf));
		fail_msg("got \"%s\", want \"%s\"", buf, want);
	}
}

void np_test_state_init(struct np_node_state *st, const struct np_topology *t,
			const char *policy_json)
{
	struct np_node_policy p;
	json_error_t jerr;
	json_t *j = json_loads(policy_json, 0, &jerr);
	char err[256];

	if (!j)
		fail_msg("bad test policy %s: %s", policy_json, jerr.text);
	if (np_policy_from_json(&p, j, "policy", err, sizeof(err)) ||
	    np_state_init(st, t, &p, err, sizeof(err)))
		fail_msg("policy %s: %s", policy_json, err);
	json_decref(j);
}

struct np_workload_req *np_test_workload(const char *name, enum np_qos q,
					 int cpus_milli)
{
	static struct np_container_req c[NP_MAX_CONTAINERS];
	static char cgroup[NP_PATH_MAX];
	static struct np_workload_req w;

	memset(&w, 0, sizeof(w));
	memset(c, 0, sizeof(c));
	w.c = c;
	w.cgroup = cgroup;
	snprintf(w.name, sizeof(w.name), "%s", name);
	snprintf(cgroup, sizeof(cgroup), "%s", name);
	w.qos = q;
	w.ncontainers = 1;
	w.c[0].name = "main";
	w.c[0].cpu_milli = cpus_milli;
	return &w;
}

void np_test_admit_json(struct np_node_state *st, const char *spec)
{
	struct np_workload_req w = {0};
	struct np_decision d;
	json_error_t jerr;
	json_t *j = json_loads(spec, 0, &jerr);
	char err[512];

	if (!j)
		fail_msg("bad test spec %s: %s", spec, jerr.text);
	if (np_workload_req_from_json(&w, j, "workload", err, sizeof(err)) ||
	    np_admit(st, &w, &d, err, sizeof(err)))
		fail_msg("%s: %s", spec, err);
	if (!d.admitted)
		fail_msg("%s rejected: %s", spec, d.reason);
	json_decref(j);
	np_workload_req_free(&w);
}

int np_test_spec(const char *json, struct np_workload_req *w, char *err,
		 size_t errlen)
{
	json_error_t je;
	json_t *j = json_loads(json, 0, &je);
	int r;

	if (!j)
		fail_msg("bad test spec %s: %s", json, je.text);
	r = np_workload_req_from_json(w, j, "spec", err, errlen);
	json_decref(j);
	return r;
}

void np_test_tmpdir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "/tmp/np-%s-XXXXXX", name);
	if (!mkdtemp(buf))
		fail_msg("mkdtemp %s: %s", buf, strerror(errno));
}

void np_test_rmtree(const char *dir)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

void np_test_put(const char *root, const char *rel, const char *text)
{
	char path[512], cmd[600];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
	if (!(fp = fopen(path, "w")))
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, fp);
	if (fclose(fp))
		fail_msg("%s: %s", path, strerror(errno));
}

const char *np_test_get(const char *root, const char *rel)
{
	static char buf[4096];
	char path[512];
	FILE *fp;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (!(fp = fopen(path, "r")))
		fail_msg("%s: %s", path, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, fp);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static uint64_t rng_state;

uint64_t np_test_seed(const char *env, uint64_t dflt)
{
	const char *s = getenv(env);

	return s && *s ? strtoull(s, NULL, 0) : dflt;
}

void np_test_rng_set(uint64_t seed)
{
	rng_state = seed;
}

uint64_t np_test_rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

int np_test_rndn(int n)
{
	return (int)(np_test_rnd() % (uint64_t)n);
}
