// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced's control socket (protocol: numaplace/ctl.h): the input is
 * what a client sends, one request per line. Each line is taken as the
 * server takes it (userspace/daemon/serve/ctl_server.c, handle_line and
 * conn_run: the same size limit, JSON_DISABLE_EOF_CHECK and
 * JSON_REJECT_DUPLICATES, data after the value refused; a last line
 * without its newline is still a request) and its value handed to
 * np_daemon_handle of one daemon on the fake enforcer of the unit tests
 * (tests/support/fake_enforcer.h): the 2-node VM topology of
 * tests/data/topology/vm-2node.json (run from the repository root),
 * reserved 0,4, system.slice confined to the shared pool, its spec, state
 * directory and configuration in a directory of this process under /tmp.
 *
 * Every answer must be an object with a boolean "ok", a refusal must say
 * why ("error": a non-empty string), and it must serialize. The daemon is
 * started again (its state removed) every RESET inputs, and sooner when it
 * holds many workloads or cgroups, so that memory stays bounded; the
 * environment variable NP_FUZZ_CTL_RESET=N changes N (1: a new daemon for
 * each input, to replay a crash that needs no history).
 */
#include "fuzz.h"
#include "fake_enforcer.h"
#include "daemon/serve/ctl_server.h"
#include "numaplace/ctl.h"
#include "numaplace/daemon.h"
#include "numaplace/state_file.h"

#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RESET 64
/* Restart before the fake's fixed tables get full (FAKE_MAX_CGROUPS). */
#define MAX_WORKLOADS 12
#define MAX_FAKE_CGROUPS (FAKE_MAX_CGROUPS / 2)
/* Lines of one input handled (the server answers a few per turn). */
#define MAX_LINES 16

static char dir[64];
static struct np_daemon d;
static struct fake_enforcer *fake;
static bool running;
static int inputs, reset_every = RESET;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(path);
		abort();
	}
}

static void host_cgroup(const char *name)
{
	struct fake_cgroup *c = fake_cg(fake, 'h', name, true);

	if (!c)
		abort();
	c->exists = true;
	np_cpuset_zero(&c->cpus);
	for (int cpu = 0; cpu < 8; cpu++)
		np_cpuset_set(&c->cpus, cpu);
	c->mems = 0x3;
}

static void rm_state(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/state/" NP_STATEFILE_NAME, dir);
	unlink(p);
}

static void start(void)
{
	char path[128], err[1024];

	rm_state();
	fake = fake_enforcer_new();
	if (!fake)
		abort();
	host_cgroup("system.slice");
	host_cgroup("numaplace.slice");
	snprintf(path, sizeof(path), "%s/np.json", dir);
	if (np_daemon_init_with(&d, path, 0, &fake->e, err, sizeof(err))) {
		fprintf(stderr, "fuzz ctl: numaplaced init: %s\n", err);
		abort();
	}
	running = true;
}

static void stop(void)
{
	if (!running)
		return;
	np_daemon_fini(&d);
	free(fake);
	fake = NULL;
	running = false;
}

static void cleanup(void)
{
	char p[128];

	stop();
	rm_state();
	snprintf(p, sizeof(p), "%s/state", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/specs", dir);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/np.json", dir);
	unlink(p);
	rmdir(dir);
}

static void setup(void)
{
	char path[128], cfg[1024];
	const char *e = getenv("NP_FUZZ_CTL_RESET");

	if (e && atoi(e) > 0)
		reset_every = atoi(e);
	snprintf(dir, sizeof(dir), "/tmp/np-fuzz-ctl-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/specs", dir);
	if (mkdir(path, 0700)) {
		perror(path);
		abort();
	}
	snprintf(cfg, sizeof(cfg),
		 "{\"node_policy\": {\"cpu_policy\": \"static\", "
		 "\"reserved_cpus\": \"0,4\", \"topology_policy\": "
		 "\"restricted\"},"
		 " \"topology\": \"tests/data/topology/vm-2node.json\","
		 " \"shared_cgroups\": [\"system.slice\"],"
		 " \"spec_dir\": \"%s/specs\", \"state_dir\": \"%s/state\","
		 " \"socket\": \"%s/np.sock\", \"verify\": {\"enabled\": "
		 "\"off\"}}",
		 dir, dir, dir);
	snprintf(path, sizeof(path), "%s/np.json", dir);
	write_file(path, cfg);
}

/* The answer to one request line (line[0..len), without its '\n'), as
 * ctl_server.c's handle_line makes it. */
static json_t *answer(const char *line, size_t len)
{
	json_error_t jerr;
	json_t *req, *resp;
	size_t p;

	req = json_loadb(line, len,
			 JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
	if (!req)
		return np_ctl_error("request: invalid JSON at column %d: %s",
				     jerr.column, jerr.text);
	/* one value per line: anything after it but blanks is wrong */
	p = (size_t)jerr.position;
	while (p < len &&
	       (line[p] == ' ' || line[p] == '\t' || line[p] == '\r'))
		p++;
	if (p < len) {
		json_decref(req);
		return np_ctl_error("request: data after the JSON value at "
				     "byte %zu (one request per line)",
				     p + 1);
	}
	resp = np_daemon_handle(&d, req);
	json_decref(req);
	/* as the loop serves it: the cycle it asks for, then its answer */
	if (d.cycle_due)
		np_daemon_reconcile(&d);
	if (d.answer_after_cycle)
		resp = np_daemon_answer(&d, resp);
	return resp;
}

static void check(json_t *resp)
{
	const json_t *ok = json_object_get(resp, "ok");
	const char *e = json_string_value(json_object_get(resp, "error"));
	char *s;

	if (!resp)
		return; /* out of memory: the server closes the connection */
	if (!json_is_object(resp) || !json_is_boolean(ok)) {
		fprintf(stderr, "an answer without \"ok\"\n");
		abort();
	}
	if (json_is_false(ok) && (!e || !e[0])) {
		fprintf(stderr, "refused without a message\n");
		abort();
	}
	if ((s = json_dumps(resp, JSON_COMPACT)))
		free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data, *end = in + size;

	if (!dir[0])
		setup();
	if (running && (inputs % reset_every == 0 ||
			d.st.nworkloads >= MAX_WORKLOADS ||
			fake->ncg >= MAX_FAKE_CGROUPS))
		stop();
	if (!running)
		start();
	inputs++;
	for (int n = 0; in < end && n < MAX_LINES; n++) {
		const char *nl = memchr(in, '\n', (size_t)(end - in));
		size_t len = nl ? (size_t)(nl - in) : (size_t)(end - in);
		json_t *resp;

		/* max_request bytes without a newline: refused, and the
		 * connection closed */
		if (len + 1 > NP_CTL_MAX_LINE) {
			check(np_ctl_error("request: longer than %d bytes",
					    NP_CTL_MAX_LINE));
			break;
		}
		resp = answer(in, len);
		check(resp);
		json_decref(resp);
		in += len + (nl ? 1 : 0);
	}
	return 0;
}
