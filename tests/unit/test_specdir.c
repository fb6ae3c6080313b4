// SPDX-License-Identifier: Apache-2.0
/*
 * The spec directory stage (userspace/daemon/collect/specdir.c), driven through
 * np_daemon_reconcile() with files written into the config's spec_dir, on a
 * fake enforcer (tests/support): what new, unchanged, changed, removed,
 * invalid, rejected and retired spec files lead to (the exact enforcer
 * calls, the counters, the state), what is logged how often, which file
 * names are ignored, and that the state file knows an admission before the
 * enforcer is asked to show it (and forgets a release before its cgroup
 * goes).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon/daemon_internal.h"
#include "fake_daemon.h"

struct fx {
	struct fake_daemon fd; /* dir, d, f */
	int saved_stderr; /* fd 2 while it is captured, else -1 */
};

/* The whole file (heap), or NULL when it does not exist. */
static char *read_file(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	if (n && fread(buf, 1, (size_t)n, fp) != (size_t)n)
		fail_msg("%s: short read", path);
	fclose(fp);
	return buf;
}

/* A daemon on the 2-node VM topology (CPUs 0-7, 0/4 1/5 2/6 3/7 are
 * siblings, node 0 = 0,1,4,5, reserved 0,4) with system.slice confined to
 * the shared pool, and an empty spec directory. */
static int setup(void **state)
{
	struct fx *x = fake_daemon_new(sizeof(*x), "specdir");
	x->saved_stderr = -1;
	*state = x;
	return 0;
}

/* Stop capturing fd 2; returns what was captured (heap). */
static char *capture_end(struct fx *x)
{
	char path[128];

	if (x->saved_stderr < 0)
		return NULL;
	assert_int_equal(dup2(x->saved_stderr, STDERR_FILENO), STDERR_FILENO);
	close(x->saved_stderr);
	x->saved_stderr = -1;
	snprintf(path, sizeof(path), "%s/stderr", x->fd.dir);
	return read_file(path);
}

static int teardown(void **state)
{
	struct fx *x = *state;
	char *rest = capture_end(x);

	if (rest) /* a failed assertion while captured: show the log */
		fputs(rest, stderr);
	free(rest);
	fake_daemon_stop(&x->fd);
	free(x);
	return 0;
}

/* The daemon logs with write(2) to fd 2: sent to a file until
 * capture_end(). */
static void capture_begin(struct fx *x)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/stderr", x->fd.dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	x->saved_stderr = dup(STDERR_FILENO);
	assert_true(x->saved_stderr >= 0);
	assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	close(fd);
}

/* Lines of text containing every one of the (NULL-terminated) words. */
static int count_lines(const char *text, ...)
{
	int n = 0;

	while (text && *text) {
		const char *end = strchr(text, '\n');
		size_t len = end ? (size_t)(end - text) : strlen(text);
		char *line = strndup(text, len);
		bool all = true;
		va_list ap;
		const char *w;

		assert_non_null(line);
		va_start(ap, text);
		while (all && (w = va_arg(ap, const char *)))
			all = strstr(line, w) != NULL;
		va_end(ap);
		n += all;
		free(line);
		text += len + (end ? 1 : 0);
	}
	return n;
}

static void spec_path(struct fx *x, const char *file, char *out, size_t n)
{
	snprintf(out, n, "%s/specs/%s", x->fd.dir, file);
}

static void put_spec(struct fx *x, const char *file, const char *text)
{
	char path[256];

	spec_path(x, file, path, sizeof(path));
	fake_write_file(path, text);
}

static void del_spec(struct fx *x, const char *file)
{
	char path[256];

	spec_path(x, file, path, sizeof(path));
	assert_int_equal(unlink(path), 0);
}

static void reconcile(struct fx *x)
{
	assert_int_equal(np_daemon_reconcile(&x->fd.d), 0);
}

static void assert_log(struct fx *x, const char *want)
{
	if (strcmp(fake_log(x->fd.f), want))
		fail_msg("enforcer calls:\n%s\nwanted:\n%s", fake_log(x->fd.f),
			 want);
}

/* The workload's CPUs (every container's set) as a list, or "" when it
 * is not admitted. */
static const char *cpus_of(struct fx *x, const char *name)
{
	static char buf[256];
	int i = np_state_find(&x->fd.d.st, name);
	np_cpuset all;
	char *s;

	buf[0] = '\0';
	if (i < 0)
		return buf;
	np_cpuset_zero(&all);
	for (int c = 0; c < x->fd.d.st.w[i]->ncontainers; c++)
		np_cpuset_or(&all, &all, x->fd.d.st.w[i]->c[c].cpus);
	s = np_cpuset_str(&all);
	assert_non_null(s);
	snprintf(buf, sizeof(buf), "%s", s);
	free(s);
	return buf;
}

/* The state as loading sees it: state.json with the journal replayed. */
static char *state_text(struct fx *x)
{
	char path[128], err[512];
	json_t *doc;
	char *text;

	snprintf(path, sizeof(path), "%s/state", x->fd.dir);
	if (np_journal_document(path, &doc, err, sizeof(err)))
		return NULL;
	text = json_dumps(doc, JSON_SORT_KEYS | JSON_INDENT(1));
	json_decref(doc);
	return text;
}

/* The parsed state file (its "body"); fails when there is none. */
static json_t *state_body(struct fx *x)
{
	char path[128], err[512];
	json_t *doc, *body;

	snprintf(path, sizeof(path), "%s/state", x->fd.dir);
	if (np_journal_document(path, &doc, err, sizeof(err)))
		fail_msg("%s", err);
	assert_string_equal(json_string_value(json_object_get(doc, "format")),
			    "numaplace-state");
	body = json_incref(json_object_get(doc, "body"));
	json_decref(doc);
	assert_non_null(body);
	return body;
}

/* The workload of the state file whose spec has this key (name, cgroup)
 * set to value, or NULL (also when the file lists no workloads). */
static const json_t *state_wl_by(const json_t *body, const char *key,
				 const char *value)
{
	const json_t *ws = json_object_get(json_object_get(body, "state"),
					   "workloads"),
		     *w;
	size_t i;

	json_array_foreach(ws, i, w)
	{
		const char *v = json_string_value(
		    json_object_get(json_object_get(w, "spec"), key));
		if (v && !strcmp(v, value))
			return w;
	}
	return NULL;
}

#define WEB                                                                    \
	"{\"name\": \"web\", \"cgroup\": \"web\", \"qos\": \"LSE\", "          \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"2\"}]}"
/* The same spec, laid out differently and with its keys in another
 * order. */
#define WEB_REFORMATTED                                                        \
	"{\n  \"containers\": [ { \"cpu\": \"2\", \"name\": \"main\" } ],\n"   \
	"  \"qos\": \"LSE\",\n  \"cgroup\": \"web\",\n  \"name\": "            \
	"\"web\"\n}\n"
/* More CPUs and some memory: not only the CPU count changed, so it is
 * released and admitted again (a count alone is resized in place:
 * tests/unit/test_resize_daemon.c). */
#define WEB4                                                                   \
	"{\"name\": \"web\", \"cgroup\": \"web\", \"qos\": \"LSE\", "          \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"4\", "                 \
	"\"memory\": \"64Mi\"}]}"
#define API                                                                    \
	"{\"name\": \"api\", \"cgroup\": \"api\", \"qos\": \"LS\", "           \
	"\"containers\": [{\"name\": \"main\", \"cpu\": \"500m\"}]}"

/* What the admission of WEB alone asks the enforcer for. */
#define WEB_ADMITTED                                                           \
	"mkdir web\n"                                                          \
	"set host system.slice cpus=0,2-4,6-7\n"                               \
	"write web cpuset.mems=0 (mems widen)\n"                               \
	"write web cpuset.cpus=1,5 (widen)\n"

/* A new spec file: admitted, saved, its cgroup created and written. */
static void test_new_spec(void **state)
{
	struct fx *x = *state;
	struct np_wl_meta *m;
	char path[256];

	reconcile(x);
	assert_log(x, "");
	put_spec(x, "web.json", WEB);
	reconcile(x);
	assert_log(x, WEB_ADMITTED);
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_int_equal(x->fd.d.n.released, 0);
	assert_true(np_state_find(&x->fd.d.st, "web") >= 0);
	assert_string_equal(cpus_of(x, "web"), "1,5");
	m = np_daemon_meta_find(&x->fd.d, "web");
	assert_non_null(m);
	spec_path(x, "web.json", path, sizeof(path));
	assert_string_equal(m->spec_file, path);
	assert_true(m->established);
	assert_true(fake_cg(x->fd.f, 'm', "web", false) != NULL);
}

/* An unchanged file does nothing, also when it is rewritten with the same
 * content laid out differently. */
static void test_unchanged(void **state)
{
	struct fx *x = *state;
	char *before, *after;

	put_spec(x, "web.json", WEB);
	reconcile(x);
	before = state_text(x);
	assert_non_null(before);
	fake_log_clear(x->fd.f);
	reconcile(x);
	reconcile(x);
	put_spec(x, "web.json", WEB_REFORMATTED);
	reconcile(x);
	assert_log(x, "");
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_int_equal(x->fd.d.n.released, 0);
	assert_int_equal(x->fd.d.n.cycles, 4);
	after = state_text(x);
	assert_string_equal(before, after);
	free(before);
	free(after);
}

/* A changed file: the workload is released (its cgroup removed) and
 * admitted again with what the file says now. */
static void test_changed(void **state)
{
	struct fx *x = *state;
	const char *now;

	put_spec(x, "web.json", WEB);
	reconcile(x);
	assert_string_equal(cpus_of(x, "web"), "1,5");
	fake_log_clear(x->fd.f);
	put_spec(x, "web.json", WEB4);
	reconcile(x);
	assert_int_equal(x->fd.d.n.released, 1);
	assert_int_equal(x->fd.d.n.admitted, 2);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	now = cpus_of(x, "web");
	/* four CPUs of one node (restricted): node 1, the only one with
	 * four unreserved CPUs */
	assert_string_equal(now, "2-3,6-7");
	assert_int_equal(fake_log_find(x->fd.f, "rmdir web"), 0);
	assert_int_equal(fake_log_find(x->fd.f, "mkdir web"), 1);
	assert_true(fake_log_find(x->fd.f, "write web cpuset.cpus=2-3,6-7") > 1);
	assert_true(fake_log_find(x->fd.f, "set host system.slice cpus=0-1,4-5") >
		    1);
	/* and then it is steady */
	fake_log_clear(x->fd.f);
	reconcile(x);
	assert_log(x, "");
	assert_int_equal(x->fd.d.n.admitted, 2);
}

/* A second spec file naming the same workload is refused while the first
 * exists (the two took turns at releasing and admitting it every period);
 * once the first is gone, the second is the workload's spec. */
static void test_same_name_two_files(void **state)
{
	struct fx *x = *state;

	put_spec(x, "a.json", WEB);
	reconcile(x);
	put_spec(x, "b.json", WEB4);
	reconcile(x);
	reconcile(x);
	reconcile(x);
	assert_int_equal(x->fd.d.n.released, 0);
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_string_equal(cpus_of(x, "web"), "1,5");
	del_spec(x, "a.json");
	reconcile(x);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	assert_string_equal(cpus_of(x, "web"), "2-3,6-7");
}

/* A removed file releases its workload: its cgroup is removed and its
 * CPUs go back to the shared pool. */
static void test_removed(void **state)
{
	struct fx *x = *state;
	json_t *body;

	put_spec(x, "web.json", WEB);
	put_spec(x, "api.json", API);
	reconcile(x);
	assert_int_equal(x->fd.d.n.admitted, 2);
	fake_log_clear(x->fd.f);
	del_spec(x, "web.json");
	reconcile(x);
	assert_log(x, "rmdir web\n"
		      "write api cpuset.cpus=0-7 (widen)\n"
		      "set host system.slice cpus=0-7\n");
	assert_int_equal(x->fd.d.n.released, 1);
	assert_int_equal(np_state_find(&x->fd.d.st, "web"), -1);
	assert_true(np_state_find(&x->fd.d.st, "api") >= 0);
	assert_null(np_daemon_meta_find(&x->fd.d, "web"));
	assert_null(fake_cg(x->fd.f, 'm', "web", false));
	body = state_body(x);
	assert_null(state_wl_by(body, "name", "web"));
	assert_non_null(state_wl_by(body, "name", "api"));
	json_decref(body);
	/* released once */
	fake_log_clear(x->fd.f);
	reconcile(x);
	assert_log(x, "");
	assert_int_equal(x->fd.d.n.released, 1);
}

/*
 * A file the daemon cannot use changes nothing: no enforcer call, the
 * state file byte for byte as it was, no admission, no rejection. It is
 * retried every cycle (admitted once it is fixed). Returns how many lines
 * of the captured log over three cycles name it with the expected words.
 */
static int unusable(struct fx *x, const char *text, const char *what)
{
	char *before, *after, *log, path[256];
	int n;

	put_spec(x, "web.json", WEB);
	reconcile(x);
	before = state_text(x);
	assert_non_null(before);
	fake_log_clear(x->fd.f);
	put_spec(x, "bad.json", text);
	capture_begin(x);
	for (int i = 0; i < 3; i++)
		reconcile(x);
	log = capture_end(x);
	assert_log(x, "");
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_int_equal(x->fd.d.n.rejected, 0);
	assert_int_equal(x->fd.d.n.released, 0);
	after = state_text(x);
	assert_string_equal(before, after);
	spec_path(x, "bad.json", path, sizeof(path));
	n = count_lines(log, path, what, NULL);
	if (!n)
		fail_msg("nothing logged about %s (\"%s\"):\n%s", path, what,
			 log);
	free(before);
	free(after);
	free(log);
	/* fixed: admitted on the next cycle */
	put_spec(x, "bad.json", API);
	reconcile(x);
	assert_int_equal(x->fd.d.n.admitted, 2);
	assert_true(np_state_find(&x->fd.d.st, "api") >= 0);
	assert_true(fake_log_find(x->fd.f, "mkdir api") >= 0);
	return n;
}

/* Logged once per content and reason: anything else floods the log at
 * every cycle (every 10 s by default). */
static void assert_said_once(int n, const char *what)
{
	if (n != 1)
		fail_msg("%s logged %d times over 3 cycles", what, n);
}

static void test_invalid_json(void **state)
{
	struct fx *x = *state;
	int n = unusable(x, "{\"name\": \"api\", ", "line 1");

	assert_said_once(n, "invalid JSON");
}

static void test_no_name(void **state)
{
	struct fx *x = *state;
	int n = unusable(x,
			 "{\"cgroup\": \"api\", \"qos\": \"LS\", "
			 "\"containers\": [{\"name\": \"main\", \"cpu\": "
			 "\"1\"}]}",
			 "name: required field is missing");

	assert_said_once(n, "a spec without \"name\"");
}

/* A spec that names a workload but does not validate is said once per
 * content (specdir.c note_invalid). */
static void test_invalid_field(void **state)
{
	struct fx *x = *state;
	int n = unusable(x,
			 "{\"name\": \"api\", \"cgroup\": \"api\", \"qos\": "
			 "\"fast\", \"containers\": [{\"name\": \"main\", "
			 "\"cpu\": \"1\"}]}",
			 "qos");

	assert_int_equal(n, 1);
}

/* A rejected spec (more exclusive CPUs than the node has unreserved) is
 * counted, listed and logged once while its content stays the same, and
 * retried: admitted once it fits. */
static void test_rejected(void **state)
{
	struct fx *x = *state;
	char *log;

	put_spec(x, "big.json",
		 "{\"name\": \"big\", \"cgroup\": \"big\", \"qos\": \"LSE\", "
		 "\"containers\": [{\"name\": \"main\", \"cpu\": \"7\"}]}");
	capture_begin(x);
	for (int i = 0; i < 3; i++)
		reconcile(x);
	log = capture_end(x);
	assert_int_equal(x->fd.d.n.rejected, 1);
	assert_int_equal(x->fd.d.nrej, 1);
	assert_string_equal(x->fd.d.rej[0].workload, "big");
	assert_true(x->fd.d.rej[0].reason[0] != '\0');
	assert_int_equal(count_lines(log, "rejected big", NULL), 1);
	assert_int_equal(x->fd.d.n.admitted, 0);
	assert_int_equal(x->fd.d.st.nworkloads, 0);
	assert_log(x, "");
	free(log);
	/* it fits now */
	put_spec(x, "big.json",
		 "{\"name\": \"big\", \"cgroup\": \"big\", \"qos\": \"LSE\", "
		 "\"containers\": [{\"name\": \"main\", \"cpu\": \"4\"}]}");
	reconcile(x);
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_int_equal(x->fd.d.n.rejected, 1);
	assert_string_equal(cpus_of(x, "big"), "2-3,6-7");
}

/*
 * A workload whose cgroup was removed by hand is released; its unchanged
 * spec file is retired (not admitted again, its cgroup not re-created),
 * also when it is rewritten with the same content, until it changes.
 */
static void test_retired(void **state)
{
	struct fx *x = *state;
	struct fake_cgroup *web;

	put_spec(x, "web.json", WEB);
	reconcile(x);
	web = fake_cg(x->fd.f, 'm', "web", false);
	assert_non_null(web);
	/* rmdir by hand: gone, and a new one would start empty */
	web->exists = false;
	np_cpuset_zero(&web->cpus);
	web->mems = 0;
	fake_log_clear(x->fd.f);
	reconcile(x);
	assert_int_equal(x->fd.d.n.vanished, 1);
	assert_int_equal(x->fd.d.n.released, 1);
	assert_int_equal(np_state_find(&x->fd.d.st, "web"), -1);
	assert_log(x, "set host system.slice cpus=0-7\n");
	fake_log_clear(x->fd.f);
	reconcile(x);
	reconcile(x);
	put_spec(x, "web.json", WEB_REFORMATTED);
	reconcile(x);
	assert_log(x, "");
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_int_equal(np_state_find(&x->fd.d.st, "web"), -1);
	assert_null(fake_cg(x->fd.f, 'm', "web", false));
	/* changed: admitted again */
	put_spec(x, "web.json", WEB4);
	reconcile(x);
	assert_int_equal(x->fd.d.n.admitted, 2);
	assert_string_equal(cpus_of(x, "web"), "2-3,6-7");
	assert_int_equal(fake_log_find(x->fd.f, "mkdir web"), 0);
	assert_true(fake_log_find(x->fd.f, "write web cpuset.cpus=2-3,6-7") > 0);
}

/* Only NAME.json files that are not dotfiles are specs. */
static void test_ignored_names(void **state)
{
	static const char *const ignored[] = {
	    "a.txt", ".b.json",	   "c.json~", "d.json.swp", "e.JSON",
	    "json",  "f.json.bak", ".json",   "gjson",
	};
	struct fx *x = *state;
	char spec[512];

	for (size_t i = 0; i < sizeof(ignored) / sizeof(*ignored); i++) {
		snprintf(spec, sizeof(spec),
			 "{\"name\": \"w%zu\", \"cgroup\": \"w%zu\", "
			 "\"qos\": \"LS\", \"containers\": [{\"name\": "
			 "\"main\", \"cpu\": \"100m\"}]}",
			 i, i);
		put_spec(x, ignored[i], spec);
	}
	/* the shortest name that is one */
	put_spec(x, "z.json", API);
	reconcile(x);
	assert_int_equal(x->fd.d.st.nworkloads, 1);
	assert_true(np_state_find(&x->fd.d.st, "api") >= 0);
	assert_int_equal(x->fd.d.n.admitted, 1);
	assert_int_equal(x->fd.d.n.rejected, 0);
	assert_int_equal(fake_log_find(x->fd.f, "mkdir w"), -1);
}

/* ---- durability: the state file before the enforcer ---- */

static const struct np_enforcer_ops *real_ops;
static struct np_enforcer_ops spy_ops;
static struct fx *spy_fx;
static int spy_checks;
static char spy_bad[1024];

/* The state file must (or must not) list a workload with this cgroup now,
 * and say whether its cgroup is still pending. */
static void spy_expect(const char *call, const char *cgroup, bool listed,
		       int pending)
{
	char path[128];
	json_t *doc, *body;
	const json_t *w, *pend, *v;
	const char *name;
	bool is_pending = false;
	size_t i;

	/* not state_body(): no assertion may jump out of the daemon */
	snprintf(path, sizeof(path), "%s/state", spy_fx->fd.dir);
	if (np_journal_document(path, &doc, spy_bad, sizeof(spy_bad)))
		doc = NULL;
	body = json_object_get(doc, "body");
	if (!body) {
		if (!spy_bad[0])
			snprintf(spy_bad, sizeof(spy_bad),
				 "%s %s: no state file", call, cgroup);
		json_decref(doc);
		return;
	}
	w = state_wl_by(body, "cgroup", cgroup);
	pend = json_object_get(json_object_get(body, "daemon"), "pending");
	name = json_string_value(
	    json_object_get(json_object_get(w, "spec"), "name"));
	json_array_foreach(pend, i, v) is_pending |=
	    name && json_is_string(v) && !strcmp(json_string_value(v), name);
	spy_checks++;
	if ((w != NULL) != listed && !spy_bad[0])
		snprintf(spy_bad, sizeof(spy_bad),
			 "%s %s: the state file %s it", call, cgroup,
			 listed ? "does not list" : "still lists");
	if (listed && pending >= 0 && is_pending != (pending > 0) &&
	    !spy_bad[0])
		snprintf(spy_bad, sizeof(spy_bad),
			 "%s %s: the state file says it is %spending", call,
			 cgroup, is_pending ? "" : "not ");
	json_decref(doc);
}

static int spy_prepare(struct np_enforcer *e, enum np_enf_tree t,
		       const char *cgroup, bool create, char *err,
		       size_t errlen)
{
	if (t == NP_ENF_MANAGED)
		spy_expect("prepare", cgroup, true, 1);
	return real_ops->prepare(e, t, cgroup, create, err, errlen);
}

static int spy_apply(struct np_enforcer *e, const struct np_cgroup_change *ch,
		     int n, int *writes, char *err, size_t errlen)
{
	for (int i = 0; i < n; i++)
		spy_expect("apply", ch[i].cgroup, true, -1);
	return real_ops->apply(e, ch, n, writes, err, errlen);
}

static int spy_remove(struct np_enforcer *e, const char *cgroup)
{
	spy_expect("remove", cgroup, false, -1);
	return real_ops->remove(e, cgroup);
}

static void spy_install(struct fx *x)
{
	real_ops = x->fd.f->e.ops;
	spy_ops = *real_ops;
	spy_ops.prepare = spy_prepare;
	spy_ops.apply = spy_apply;
	spy_ops.remove = spy_remove;
	spy_fx = x;
	spy_checks = 0;
	spy_bad[0] = '\0';
	x->fd.f->e.ops = &spy_ops;
}

/*
 * Admissions are in the state file (pending) before their cgroup is
 * created or written, releases are out of it before their cgroup is
 * removed; after the cycle the state file lists the admitted workloads
 * with their spec files and nothing pending.
 */
static void test_state_first(void **state)
{
	struct fx *x = *state;
	char web[256], api[256];
	const json_t *files, *pend;
	json_t *body;

	spy_install(x);
	put_spec(x, "web.json", WEB);
	put_spec(x, "api.json", API);
	reconcile(x);
	assert_int_equal(x->fd.d.n.admitted, 2);
	/* two prepares and one apply of two cgroups, at least */
	assert_true(spy_checks >= 4);
	if (spy_bad[0])
		fail_msg("%s", spy_bad);
	body = state_body(x);
	assert_non_null(state_wl_by(body, "name", "web"));
	assert_non_null(state_wl_by(body, "name", "api"));
	assert_int_equal(json_array_size(json_object_get(
			     json_object_get(body, "state"), "workloads")),
			 2);
	files = json_object_get(json_object_get(body, "daemon"), "spec_files");
	spec_path(x, "web.json", web, sizeof(web));
	spec_path(x, "api.json", api, sizeof(api));
	assert_string_equal(json_string_value(json_object_get(files, "web")),
			    web);
	assert_string_equal(json_string_value(json_object_get(files, "api")),
			    api);
	pend = json_object_get(json_object_get(body, "daemon"), "pending");
	assert_true(json_is_array(pend));
	assert_int_equal(json_array_size(pend), 0);
	/* the CPUs the state file records are those written */
	assert_string_equal(
	    json_string_value(json_object_get(
		json_array_get(json_object_get(state_wl_by(body, "name", "web"),
					       "containers"),
			       0),
		"cpus")),
	    "1,5");
	json_decref(body);
	/* a release: out of the state file before its cgroup goes */
	spy_checks = 0;
	del_spec(x, "web.json");
	reconcile(x);
	assert_int_equal(x->fd.d.n.released, 1);
	assert_true(spy_checks >= 1);
	if (spy_bad[0])
		fail_msg("%s", spy_bad);
	body = state_body(x);
	assert_null(state_wl_by(body, "name", "web"));
	assert_non_null(state_wl_by(body, "name", "api"));
	json_decref(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_new_spec, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unchanged, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_changed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_same_name_two_files, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_removed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_json, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_no_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_invalid_field, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_rejected, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_retired, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ignored_names, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_state_first, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
