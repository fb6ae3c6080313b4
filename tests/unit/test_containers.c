// SPDX-License-Identifier: Apache-2.0
/*
 * Workloads that are OCI containers: the "container" key of a workload
 * spec (checked, exclusive with cgroup and unit, round trip and copy),
 * and cgroups named from the hierarchy root ("/np/ctr1") in the write
 * plan (ordered and checked like relative ones, never taken for
 * descendants of the managed parent) and read and written on a fake tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "numaplace/admit.h"
#include "numaplace/cgroup.h"
#include "fixtures.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define C1 "\"containers\":[{\"name\":\"m\",\"cpu\":\"2\"}]"

static void test_container_spec(void **state)
{
	static const struct {
		const char *json, *says;
	} bad[] = {
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1 ",\"container\":\"x\"}",
		 "spec.container: expected an object"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\"}}",
		 "spec.container.cgroup: required"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"cgroup\":\"/np/x\"}}",
		 "spec.container.id: required"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"/np/x\",\"pid\":1}}",
		 "spec.container.pid: unknown field"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"a b\",\"cgroup\":\"/np/x\"}}",
		 "spec.container.id: \"a b\" is not a container id"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"_a\",\"cgroup\":\"/np/x\"}}",
		 "spec.container.id: \"_a\" is not a container id"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"np/x\"}}",
		 "spec.container.cgroup: \"np/x\" must be a cgroup path from the "
		 "hierarchy root"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"/\"}}",
		 "spec.container.cgroup: \"/\" must be a cgroup path"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"//np\"}}",
		 "spec.container.cgroup: \"//np\" has an empty component"},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"/np/../x\"}}",
		 "must not contain \".\" or \"..\""},
		{"{\"name\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"/np/cpuset.cpus\"}}",
		 "a component may not look like a cgroup interface file"},
		{"{\"name\":\"a\",\"cgroup\":\"a\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"/np/x\"}}",
		 "spec.container: a container workload has no cgroup or unit"},
		{"{\"name\":\"a\",\"unit\":\"a.service\",\"qos\":\"LSE\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"/np/x\"}}",
		 "spec.container: a container workload has no cgroup or unit"},
		{"{\"name\":\"a\",\"qos\":\"LSE\",\"containers\":[{\"name\":\"m\","
		 "\"cpu\":\"2\",\"cgroup\":\"sub\"}],"
		 "\"container\":{\"id\":\"x\",\"cgroup\":\"/np/x\"}}",
		 "spec.container: the containers of a container workload have "
		 "no cgroups"},
		{"{\"name\":\"a\",\"qos\":\"LSE\",\"isolation\":\"partition\"," C1
		 ",\"container\":{\"id\":\"x\",\"cgroup\":\"/np/x\"}}",
		 "spec.isolation: a container workload cannot be a partition"},
	};
	struct np_workload_req w, copy;
	char err[512], *txt, id[NP_CONTAINER_ID_MAX + 2], big[400];
	json_t *j;
	(void)state;

	assert_int_equal(
	    np_test_spec("{\"name\":\"a\",\"qos\":\"LSE\"," C1 ",\"container\":"
		    "{\"id\":\"0123abc.x-y_z+1\",\"cgroup\":"
		    "\"/system.slice/np-c1.scope/container\"}}",
		    &w, err, sizeof(err)),
	    0);
	assert_string_equal(w.container_id, "0123abc.x-y_z+1");
	assert_string_equal(w.cgroup, "/system.slice/np-c1.scope/container");
	assert_null(w.unit);
	assert_int_equal(np_workload_req_copy(&copy, &w), 0);
	assert_string_equal(copy.container_id, "0123abc.x-y_z+1");
	assert_ptr_not_equal(copy.container_id, w.container_id);
	j = np_workload_req_to_json(&copy);
	txt = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
	assert_non_null(strstr(txt, "\"container\":{\"cgroup\":\"/system.slice/"
				    "np-c1.scope/container\",\"id\":"
				    "\"0123abc.x-y_z+1\"}"));
	assert_null(strstr(txt, "\"cgroup\":\"/system.slice/np-c1.scope/"
				"container\",\"containers\""));
	np_workload_req_free(&copy);
	/* what to_json wrote reads back the same */
	assert_int_equal(np_workload_req_from_json(&copy, j, "state", err,
						   sizeof(err)),
			 0);
	assert_string_equal(copy.container_id, w.container_id);
	assert_string_equal(copy.cgroup, w.cgroup);
	np_workload_req_free(&copy);
	free(txt);
	json_decref(j);
	np_workload_req_free(&w);

	/* the id's length: NP_CONTAINER_ID_MAX is in, one more is out */
	memset(id, 'a', NP_CONTAINER_ID_MAX);
	id[NP_CONTAINER_ID_MAX] = '\0';
	snprintf(big, sizeof(big),
		 "{\"name\":\"a\",\"qos\":\"LS\"," C1
		 ",\"container\":{\"id\":\"%s\",\"cgroup\":\"/c\"}}",
		 id);
	assert_int_equal(np_test_spec(big, &w, err, sizeof(err)), 0);
	np_workload_req_free(&w);
	strcat(id, "a");
	snprintf(big, sizeof(big),
		 "{\"name\":\"a\",\"qos\":\"LS\"," C1
		 ",\"container\":{\"id\":\"%s\",\"cgroup\":\"/c\"}}",
		 id);
	assert_int_not_equal(np_test_spec(big, &w, err, sizeof(err)), 0);
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

static np_cpuset cpus_of(const char *list)
{
	np_cpuset s;
	assert_int_equal(np_cpuset_parse(&s, list, NULL, 0), 0);
	return s;
}

/* cpus_of(list), kept for a change to point to (reachable to the end) */
static const np_cpuset *set_of(const char *list)
{
	static struct np_cpuset_pool kept;
	np_cpuset s = cpus_of(list);
	const np_cpuset *k = np_cpuset_intern(&kept, &s);

	assert_non_null(k);
	return k;
}

/* A container ("/np/c1", exclusive) takes CPUs from a shared cgroup of
 * the managed tree ("web"): the shared one yields first. "/np" (a shared
 * cgroup from the root) is c1's ancestor; the managed "np" is not. */
static void test_plan_from_root(void **state)
{
	struct np_cgroup_change ch[4] = {
	    {.cgroup = "/np/c1", .old_cpus = set_of("2"),
	     .new_cpus = set_of("2-3"), .old_mems = 1, .new_mems = 1,
	     .kind = NP_CGROUP_EXCLUSIVE},
	    {.cgroup = "web", .old_cpus = set_of("0-7"),
	     .new_cpus = set_of("0-1,4-7"), .old_mems = 1, .new_mems = 1,
	     .kind = NP_CGROUP_SHARED},
	    {.cgroup = "/np", .old_cpus = set_of("0-7"),
	     .new_cpus = set_of("0-7"), .old_mems = 1, .new_mems = 1,
	     .kind = NP_CGROUP_SHARED},
	    {.cgroup = "np", .old_cpus = set_of("0-7"),
	     .new_cpus = set_of("0-1,4-7"), .old_mems = 1, .new_mems = 1,
	     .kind = NP_CGROUP_SHARED},
	};
	struct np_cgroup_plan plan = {0};
	char err[512], buf[256];
	int yield_web = -1, yield_np = -1, c1 = -1;
	(void)state;

	assert_int_equal(np_cgroup_plan_build(&plan, ch, 4, err, sizeof(err)),
			 0);
	for (int i = 0; i < plan.n; i++) {
		const struct np_cgroup_step *s = &plan.steps[i];
		np_cgroup_step_describe(&plan, i, buf, sizeof(buf));
		if (s->file != NP_CGROUP_CPUS)
			continue;
		if (s->change == 1)
			yield_web = i;
		else if (s->change == 3)
			yield_np = i;
		else if (s->change == 0 && c1 < 0)
			c1 = i;
		/* "/np" keeps every CPU: it holds c1 */
		assert_int_not_equal(s->change, 2);
	}
	assert_true(yield_web >= 0 && yield_np >= 0 && c1 >= 0);
	assert_true(yield_web < c1);
	/* the managed "np" is no ancestor of "/np/c1": it yields too */
	assert_true(yield_np < c1);
	np_cgroup_plan_free(&plan);

	/* a bad path from the root is refused like a relative one */
	ch[0].cgroup = "/np/../c1";
	assert_int_not_equal(np_cgroup_plan_build(&plan, ch, 1, err, sizeof(err)),
			     0);
	assert_non_null(strstr(err, "change 0"));
	np_cgroup_plan_free(&plan);
}

/* Read and write "/np/c1" on a fake tree whose managed parent is
 * "numaplace.slice": the files written are the ones below the root. */
static void test_fake_tree_from_root(void **state)
{
	char dir[] = "/tmp/np-ctr-XXXXXX", p[512], err[512], buf[64];
	static const char *const files[] = {
	    "cgroup.controllers", "cgroup.subtree_control", "cgroup.procs",
	    "cpuset.cpus",	  "cpuset.mems",	    "cpuset.cpus.effective",
	    "cpuset.mems.effective"};
	struct np_cgroup_opts o = {.allow_fake = true,
				   .parent = "numaplace.slice",
				   .create_parent = true};
	struct np_cgroup_root root;
	struct np_cgroup_cache cache = {0};
	np_cpuset cpus, want = cpus_of("2-3"), four = cpus_of("4");
	np_nodemask mems;
	FILE *f;
	(void)state;

	assert_non_null(mkdtemp(dir));
	o.root = dir;
	snprintf(p, sizeof(p), "%s/np", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/np/c1", dir);
	assert_int_equal(mkdir(p, 0755), 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		f = fopen(p, "w");
		assert_non_null(f);
		fputs(i == 0 ? "cpuset\n" : i == 5 ? "0-7\n" : i == 6 ? "0\n" : "",
		      f);
		fclose(f);
		snprintf(p, sizeof(p), "%s/np/c1/%s", dir, files[i]);
		f = fopen(p, "w");
		assert_non_null(f);
		fclose(f);
	}
	assert_int_equal(np_cgroup_open(&root, &o, err, sizeof(err)), 0);
	assert_int_equal(np_cgroup_write_cpus(&root, "/np/c1", &want, NULL, err,
					      sizeof(err)),
			 0);
	snprintf(p, sizeof(p), "%s/np/c1/cpuset.cpus", dir);
	f = fopen(p, "r");
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	assert_string_equal(buf, "2-3");
	assert_int_equal(np_cgroup_read_cpuset(&cache, &root, "/np/c1", &cpus,
					       &mems, err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cpus, &want));
	/* never cached: a change is seen by the next read at once */
	f = fopen(p, "w");
	assert_non_null(f);
	fputs("4\n", f);
	fclose(f);
	assert_int_equal(np_cgroup_read_cpuset(&cache, &root, "/np/c1", &cpus,
					       &mems, err, sizeof(err)),
			 0);
	assert_true(np_cpuset_equal(&cpus, &four));
	assert_int_equal(np_cgroup_read_cpuset(&cache, &root, "/np/gone", &cpus,
					       &mems, err, sizeof(err)),
			 -ENOENT);
	/* not created from the root, and ".." is refused */
	assert_int_not_equal(np_cgroup_prepare(&root, "/np/new", NP_CGROUP_CREATE,
					       err, sizeof(err)),
			     0);
	snprintf(p, sizeof(p), "%s/np/new", dir);
	assert_int_not_equal(access(p, F_OK), 0);
	assert_int_not_equal(np_cgroup_write_cpus(&root, "/np/../np/c1", &want,
						  NULL, err, sizeof(err)),
			     0);
	np_cgroup_cache_free(&cache);
	np_cgroup_close(&root);
	{
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_container_spec),
	    cmocka_unit_test(test_plan_from_root),
	    cmocka_unit_test(test_fake_tree_from_root),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
