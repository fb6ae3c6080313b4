// SPDX-License-Identifier: Apache-2.0
#include "fake_daemon.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

void fake_write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	if (!fp)
		fail_msg("%s: %s", path, strerror(errno));
	fputs(text, fp);
	fclose(fp);
}

static void host_cgroup(struct fake_enforcer *f, const char *name)
{
	struct fake_cgroup *c = fake_cg(f, 'h', name, true);

	assert_non_null(c);
	c->exists = true;
	np_cpuset_zero(&c->cpus);
	for (int cpu = 0; cpu < 8; cpu++)
		np_cpuset_set(&c->cpus, cpu);
	c->mems = 0x3;
}

void fake_daemon_start(struct fake_daemon *x, const char *name)
{
	char path[128], cfg[1024], err[512];

	memset(x, 0, sizeof(*x));
	snprintf(x->dir, sizeof(x->dir), "/tmp/np-%s-XXXXXX", name);
	assert_non_null(mkdtemp(x->dir));
	snprintf(path, sizeof(path), "%s/specs", x->dir);
	assert_int_equal(mkdir(path, 0700), 0);
	snprintf(cfg, sizeof(cfg),
		 "{\"node_policy\": {\"cpu_policy\": \"static\", "
		 "\"reserved_cpus\": \"0,4\", \"topology_policy\": "
		 "\"restricted\"},"
		 " \"topology\": \"tests/data/topology/vm-2node.json\","
		 " \"shared_cgroups\": [\"system.slice\"],"
		 " \"spec_dir\": \"%s/specs\", \"state_dir\": \"%s/state\","
		 " \"runtime_dir\": \"%s/run\","
		 " \"socket\": \"%s/np.sock\", \"verify\": {\"enabled\": "
		 "\"off\"}}",
		 x->dir, x->dir, x->dir, x->dir);
	snprintf(path, sizeof(path), "%s/np.json", x->dir);
	fake_write_file(path, cfg);
	x->f = fake_enforcer_new();
	assert_non_null(x->f);
	host_cgroup(x->f, "system.slice");
	host_cgroup(x->f, "numaplace.slice");
	if (np_daemon_init_with(&x->d, path, 0, &x->f->e, err, sizeof(err)))
		fail_msg("init: %s", err);
}

void fake_daemon_stop(struct fake_daemon *x)
{
	char cmd[128];

	np_daemon_fini(&x->d);
	assert_true(x->f->destroyed);
	free(x->f);
	x->f = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", x->dir);
	assert_int_equal(system(cmd), 0);
}

void *fake_daemon_new(size_t size, const char *name)
{
	struct fake_daemon *x;

	assert_true(size >= sizeof(*x));
	assert_non_null(x = calloc(1, size));
	fake_daemon_start(x, name);
	return x;
}

int fake_daemon_teardown(void **state)
{
	fake_daemon_stop(*state);
	free(*state);
	return 0;
}

json_t *fake_daemon_ask(struct fake_daemon *x, const char *text)
{
	json_error_t je;
	json_t *req = json_loads(text, 0, &je), *resp;

	if (!req)
		fail_msg("bad test request %s: %s", text, je.text);
	resp = fake_daemon_serve(&x->d, req);
	json_decref(req);
	assert_non_null(resp);
	return resp;
}

json_t *fake_daemon_ok(struct fake_daemon *x, const char *text)
{
	json_t *resp = fake_daemon_ask(x, text);

	if (!json_is_true(json_object_get(resp, "ok")))
		fail_msg("request %s failed: %s", text,
			 json_string_value(json_object_get(resp, "error")));
	return resp;
}

void fake_daemon_admit(struct fake_daemon *x, const char *spec)
{
	char buf[2048];

	snprintf(buf, sizeof(buf), "{\"op\": \"admit\", \"spec\": %s}", spec);
	json_decref(fake_daemon_ok(x, buf));
}

void fake_daemon_restart(struct fake_daemon *x)
{
	char path[128], err[512];

	np_daemon_fini(&x->d);
	assert_true(x->f->destroyed);
	x->f->destroyed = false;
	fake_log_clear(x->f);
	snprintf(path, sizeof(path), "%s/np.json", x->dir);
	if (np_daemon_init_with(&x->d, path, 0, &x->f->e, err, sizeof(err)))
		fail_msg("init: %s", err);
}

void fake_daemon_config_add(const struct fake_daemon *x, const char *members,
			    char *path, size_t pathlen, char *old,
			    size_t oldlen)
{
	char file[128], cfg[4096];
	char *brace;
	FILE *fp;
	size_t n;
	int len;

	snprintf(file, sizeof(file), "%s/np.json", x->dir);
	if (!(fp = fopen(file, "r")))
		fail_msg("%s: %s", file, strerror(errno));
	n = fread(cfg, 1, sizeof(cfg) - 1, fp);
	if (n == sizeof(cfg) - 1 && fgetc(fp) != EOF)
		fail_msg("%s: longer than %zu bytes", file, sizeof(cfg) - 1);
	fclose(fp);
	cfg[n] = '\0';
	if (old && (size_t)snprintf(old, oldlen, "%s", cfg) >= oldlen)
		fail_msg("%s: %zu bytes do not fit in old (%zu)", file, n,
			 oldlen);
	assert_non_null(brace = strrchr(cfg, '}'));
	len = snprintf(brace, sizeof(cfg) - (size_t)(brace - cfg), "%s}",
		       members);
	if ((size_t)len >= sizeof(cfg) - (size_t)(brace - cfg))
		fail_msg("%s: the members do not fit", file);
	fake_write_file(file, cfg);
	if (path)
		snprintf(path, pathlen, "%s", file);
}

json_t *fake_daemon_serve(struct np_daemon *d, const json_t *req)
{
	json_t *resp = np_daemon_handle(d, req);

	/* as the loop: its result is logged, not answered */
	if (d->cycle_due)
		(void)np_daemon_reconcile(d);
	if (d->answer_after_cycle)
		resp = np_daemon_answer(d, resp);
	return resp;
}
