// SPDX-License-Identifier: Apache-2.0
/*
 * Control socket stress client for tests/host/socket-host.sh.
 *
 *   np-ctl-stress run SOCKET EXPECT_FILE [CLIENTS [ROUNDS]]
 *     CLIENTS threads (64) each open ROUNDS connections (6) one after the
 *     other and send a few requests pipelined on each (admit of a shared LS
 *     workload, status, release of one of their own, release of a name
 *     nobody has; a few LSE admits; some connections end their last request
 *     with shutdown(SHUT_WR) instead of a newline), then check every answer
 *     in order. Meanwhile one client holds a connection open and silent
 *     the whole time (and sends a status request on it at the end), and
 *     another sends 10 MiB of garbage without a newline. Prints
 *       requests N ok N rejected N bad N
 *       latency max_ms N wall_ms N
 *       garbage sent N answer "..." closed yes|no
 *       idle held_ms N answered yes|closed|no
 *     and writes the names it left admitted to EXPECT_FILE, one a line,
 *     sorted. Exit 0 when every answer was as expected.
 *
 *   np-ctl-stress verify SOCKET STATE_JSON EXPECT_FILE
 *     Compares the workloads numaplaced reports (status), those in its
 *     state file (body.state.workloads[].spec.name, with the journal
 *     beside it replayed) and EXPECT_FILE
 *     (SOCKET "-": the state file and EXPECT_FILE only). Prints
 *       verify status N state N expected N equal yes|no
 *     and exits 0 when the three sets are equal.
 */
#include "numaplace/ctl.h"
#include "numaplace/state_journal.h"

#include <errno.h>
#include <jansson.h>
#include <libgen.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define GARBAGE_BYTES (10u << 20)
#define IO_TIMEOUT_S 30
#define MAX_NAMES 4096

static const char *sock_path;
static int nrounds = 6;

enum kind { ADMIT, ADMIT_LSE, STATUS, RELEASE_OWN, RELEASE_NONE };

struct req {
	enum kind kind;
	char name[64];
};

struct worker {
	pthread_t t;
	int id;
	char (*mine)[64]; /* admitted and not released */
	int nmine;
	long requests, ok, rejected, bad;
	long long max_ms;
};

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int dial(void)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct timeval tv = {.tv_sec = IO_TIMEOUT_S};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "connect %s: %s\n", sock_path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t k = send(fd, s, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -errno;
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* A line reader over one connection. */
struct rd {
	int fd;
	char *buf;
	size_t len, cap;
};

/* The next line (malloc'd, no '\n'); NULL at EOF or on error/timeout. */
static char *read_line(struct rd *r)
{
	for (;;) {
		char *nl = r->len ? memchr(r->buf, '\n', r->len) : NULL;
		ssize_t k;
		if (nl) {
			size_t n = (size_t)(nl - r->buf);
			char *line = strndup(r->buf, n);
			memmove(r->buf, nl + 1, r->len - n - 1);
			r->len -= n + 1;
			return line;
		}
		if (r->cap - r->len < 65536) {
			r->cap = r->cap * 2 + 65536;
			if (!(r->buf = realloc(r->buf, r->cap)))
				return NULL;
		}
		k = recv(r->fd, r->buf + r->len, r->cap - r->len, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return NULL;
		r->len += (size_t)k;
	}
}

/* EOF next (nothing more than what was read). */
static bool at_eof(struct rd *r)
{
	char c;
	ssize_t k;

	if (r->len)
		return false;
	do
		k = recv(r->fd, &c, 1, 0);
	while (k < 0 && errno == EINTR);
	return k == 0 || (k < 0 && errno == ECONNRESET);
}

static char *request_text(struct worker *w, const struct req *q)
{
	json_t *j = NULL;
	char *s;

	switch (q->kind) {
	case ADMIT:
	case ADMIT_LSE:
		j = json_pack("{s:s,s:{s:s,s:s,s:[{s:s,s:s}]}}", "op", "admit",
			      "spec", "name", q->name, "qos",
			      q->kind == ADMIT ? "LS" : "LSE", "containers",
			      "name", "m", "cpu",
			      q->kind == ADMIT ? "10m" : "2");
		break;
	case STATUS:
		j = json_pack("{s:s}", "op", "status");
		break;
	case RELEASE_OWN:
	case RELEASE_NONE:
		j = json_pack("{s:s,s:s}", "op", "release", "name", q->name);
		break;
	}
	(void)w;
	s = json_dumps(j, JSON_COMPACT);
	json_decref(j);
	return s;
}

static void forget(struct worker *w, const char *name)
{
	for (int i = 0; i < w->nmine; i++)
		if (!strcmp(w->mine[i], name)) {
			memmove(w->mine[i], w->mine[i + 1],
				(size_t)(w->nmine - i - 1) *
				    sizeof(w->mine[0]));
			w->nmine--;
			return;
		}
}

/* Check one answer; false if it is not what q should get. */
static bool check_answer(struct worker *w, const struct req *q, json_t *a)
{
	json_t *ok = json_object_get(a, "ok");
	const char *e = json_string_value(json_object_get(a, "error"));
	json_t *d = json_object_get(a, "decision");
	char want[160];

	if (!json_is_boolean(ok))
		return false;
	switch (q->kind) {
	case ADMIT:
	case ADMIT_LSE:
		if (!json_is_true(ok) ||
		    !json_is_boolean(json_object_get(d, "admitted")))
			return false;
		if (json_is_false(json_object_get(d, "admitted"))) {
			w->rejected++;
			return json_is_string(json_object_get(d, "reason"));
		}
		if (strcmp(json_string_value(json_object_get(d, "name")) ?: "",
			   q->name))
			return false;
		snprintf(w->mine[w->nmine++], sizeof(w->mine[0]), "%s",
			 q->name);
		return true;
	case STATUS:
		return json_is_true(ok) &&
		       json_is_array(json_object_get(
			   json_object_get(a, "status"), "workloads"));
	case RELEASE_OWN:
		if (!json_is_true(ok))
			return false;
		forget(w, q->name);
		return true;
	case RELEASE_NONE:
		snprintf(want, sizeof(want),
			 "release: no workload named \"%s\"", q->name);
		return json_is_false(ok) && e && !strcmp(e, want);
	}
	return false;
}

/* The requests of round r: an admit, then some of status and releases. */
static int plan_round(struct worker *w, int r, struct req *q)
{
	int n = 0;

	q[n].kind = (w->id % 16 == 0 && r == 0) ? ADMIT_LSE : ADMIT;
	snprintf(q[n++].name, sizeof(q[0].name), "%s%02d-%d",
		 q[0].kind == ADMIT_LSE ? "x" : "c", w->id, r);
	if ((w->id + r) % 3 == 0)
		q[n++].kind = STATUS;
	/* LS workloads only: the LSE ones are held to the end, so that of
	 * the four LSE admissions (2 CPUs each, 6 free) one is always
	 * rejected, however the clients interleave (a fast daemon let an
	 * LSE release come before the fourth admission) */
	for (int k = 0; r % 2 == 1 && k < w->nmine; k++)
		if (w->mine[k][0] != 'x') {
			q[n].kind = RELEASE_OWN;
			snprintf(q[n++].name, sizeof(q[0].name), "%s",
				 w->mine[k]);
			break;
		}
	if ((w->id + r) % 4 == 1) {
		q[n].kind = RELEASE_NONE;
		snprintf(q[n++].name, sizeof(q[0].name), "nobody%02d-%d", w->id,
			 r);
	}
	return n;
}

/* One connection: send q[0..n) pipelined, check the answers in order. */
static void run_round(struct worker *w, int r)
{
	struct req q[4];
	int n = plan_round(w, r, q), fd;
	bool half_close = (w->id + r) % 5 == 0; /* last one without '\n' */
	struct rd rd = {0};
	char *text = NULL;
	size_t len = 0;
	long long t0 = now_ms(), dt;

	for (int i = 0; i < n; i++) {
		char *s = request_text(w, &q[i]);
		size_t k = strlen(s);
		text = realloc(text, len + k + 2);
		memcpy(text + len, s, k);
		len += k;
		if (i < n - 1 || !half_close)
			text[len++] = '\n';
		free(s);
	}
	w->requests += n;
	if ((fd = dial()) < 0 || send_all(fd, text, len) ||
	    (half_close && shutdown(fd, SHUT_WR))) {
		w->bad += n;
		goto out;
	}
	rd.fd = fd;
	for (int i = 0; i < n; i++) {
		char *line = read_line(&rd);
		json_t *a = line ? json_loads(line, 0, NULL) : NULL;
		if (a && check_answer(w, &q[i], a)) {
			w->ok++;
		} else {
			w->bad++;
			fprintf(stderr, "client %d round %d request %d: %s\n",
				w->id, r, i, line ? line : "(no answer)");
		}
		json_decref(a);
		free(line);
	}
	if (half_close && !at_eof(&rd)) {
		w->bad++;
		fprintf(stderr, "client %d round %d: not closed after EOF\n",
			w->id, r);
	}
out:
	dt = now_ms() - t0;
	if (dt > w->max_ms)
		w->max_ms = dt;
	if (fd >= 0)
		close(fd);
	free(rd.buf);
	free(text);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (int r = 0; r < nrounds; r++)
		run_round(w, r);
	return NULL;
}

/* ---- the garbage client and the idle client ------------------------------ */

struct garbage {
	pthread_t t;
	size_t sent;
	char answer[256];
	bool closed;
};

static void *garbage_main(void *arg)
{
	struct garbage *g = arg;
	static char chunk[65536];
	struct rd rd = {0};
	char *line;
	int fd = dial();

	if (fd < 0)
		return NULL;
	memset(chunk, 'g', sizeof(chunk));
	while (g->sent < GARBAGE_BYTES) {
		ssize_t k = send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break; /* EPIPE/ECONNRESET: the server closed */
		g->sent += (size_t)k;
	}
	rd.fd = fd;
	line = read_line(&rd);
	snprintf(g->answer, sizeof(g->answer), "%s", line ? line : "");
	free(line);
	g->closed = at_eof(&rd);
	free(rd.buf);
	close(fd);
	return NULL;
}

struct idle {
	pthread_t t;
	int fd;
	long long t0;
};

static void *idle_main(void *arg)
{
	struct idle *c = arg;

	c->t0 = now_ms();
	c->fd = dial();
	return NULL;
}

/* At the end: the held connection still serves a request ("yes"), or
 * numaplaced closed it ("closed": its idle timeout passed), or "no". */
static const char *idle_finish(struct idle *c, long long *held)
{
	static const char req[] = "{\"op\":\"status\"}\n";
	struct rd rd = {.fd = c->fd};
	const char *res = "no";
	char *line;
	json_t *a;
	int r;

	*held = now_ms() - c->t0;
	if (c->fd < 0)
		return res;
	r = send_all(c->fd, req, sizeof(req) - 1);
	line = read_line(&rd);
	a = line ? json_loads(line, 0, NULL) : NULL;
	if (a && json_is_true(json_object_get(a, "ok")))
		res = "yes";
	else if (!line && (r == -EPIPE || at_eof(&rd)))
		res = "closed";
	json_decref(a);
	free(line);
	free(rd.buf);
	close(c->fd);
	return res;
}

/* ---- main ---------------------------------------------------------------- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int write_expect(const char *path, struct worker *w, int n)
{
	const char *names[MAX_NAMES];
	int k = 0;
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < w[i].nmine && k < MAX_NAMES; j++)
			names[k++] = w[i].mine[j];
	qsort(names, (size_t)k, sizeof(names[0]), cmp_str);
	for (int i = 0; i < k; i++)
		fprintf(f, "%s\n", names[i]);
	return fclose(f);
}

static int run(const char *expect, int nclients)
{
	struct worker *w = calloc((size_t)nclients, sizeof(*w));
	struct garbage g = {0};
	struct idle idle = {.fd = -1};
	long requests = 0, ok = 0, rejected = 0, bad = 0;
	long long t0, wall, max_ms = 0, held;
	const char *idle_res;

	pthread_create(&idle.t, NULL, idle_main, &idle);
	pthread_join(idle.t, NULL); /* connected before the others start */
	usleep(100000); /* and accepted: it holds one of max_conns */
	t0 = now_ms();
	pthread_create(&g.t, NULL, garbage_main, &g);
	for (int i = 0; i < nclients; i++) {
		w[i].id = i;
		w[i].mine = calloc((size_t)nrounds, sizeof(w[i].mine[0]));
		pthread_create(&w[i].t, NULL, worker_main, &w[i]);
	}
	for (int i = 0; i < nclients; i++) {
		pthread_join(w[i].t, NULL);
		requests += w[i].requests;
		ok += w[i].ok;
		rejected += w[i].rejected;
		bad += w[i].bad;
		if (w[i].max_ms > max_ms)
			max_ms = w[i].max_ms;
	}
	wall = now_ms() - t0;
	pthread_join(g.t, NULL);
	idle_res = idle_finish(&idle, &held);
	printf("requests %ld ok %ld rejected %ld bad %ld\n", requests, ok,
	       rejected, bad);
	printf("latency max_ms %lld wall_ms %lld\n", max_ms, wall);
	printf("garbage sent %zu answer %s closed %s\n", g.sent, g.answer,
	       g.closed ? "yes" : "no");
	printf("idle held_ms %lld answered %s\n", held, idle_res);
	if (write_expect(expect, w, nclients))
		bad++;
	for (int i = 0; i < nclients; i++)
		free(w[i].mine);
	free(w);
	return bad || !strcmp(idle_res, "no") || !g.closed ? 1 : 0;
}

/* Sorted names; returns the count or -1. */
static int names_of(json_t *arr, const char *key1, const char *key2,
		    const char **out)
{
	size_t i;
	json_t *v;
	int n = 0;

	if (!json_is_array(arr))
		return -1;
	json_array_foreach(arr, i, v)
	{
		json_t *o = key2 ? json_object_get(v, key1) : v;
		const char *s =
		    json_string_value(json_object_get(o, key2 ? key2 : key1));
		if (!s || n == MAX_NAMES)
			return -1;
		out[n++] = s;
	}
	qsort(out, (size_t)n, sizeof(out[0]), cmp_str);
	return n;
}

static bool same(const char **a, int na, const char **b, int nb)
{
	if (na != nb || na < 0)
		return false;
	for (int i = 0; i < na; i++)
		if (strcmp(a[i], b[i]))
			return false;
	return true;
}

static int verify(const char *state_path, const char *expect)
{
	static const char *st[MAX_NAMES], *sf[MAX_NAMES], *ex[MAX_NAMES];
	static char lines[MAX_NAMES][64];
	json_t *req = json_pack("{s:s}", "op", "status"), *resp = NULL, *file;
	char err[512];
	int nst, nsf, nex = 0;
	bool eq;
	FILE *f = fopen(expect, "r");
	bool live = strcmp(sock_path, "-") != 0;

	if (!f ||
	    (live && np_ctl_call(sock_path, req, &resp, err, sizeof(err)))) {
		fprintf(stderr, "verify: %s\n", f ? err : "no expect file");
		return 1;
	}
	while (nex < MAX_NAMES && fgets(lines[nex], sizeof(lines[0]), f)) {
		lines[nex][strcspn(lines[nex], "\n")] = '\0';
		ex[nex] = lines[nex];
		nex++;
	}
	fclose(f);
	/* state.json with its journal replayed, as numaplaced loads it */
	{
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", state_path);
		if (np_journal_document(dirname(dir), &file, err, sizeof(err)))
			file = NULL;
	}
	nst = names_of(
	    json_object_get(json_object_get(resp, "status"), "workloads"),
	    "name", NULL, st);
	nsf = names_of(
	    json_object_get(
		json_object_get(json_object_get(file, "body"), "state"),
		"workloads"),
	    "spec", "name", sf);
	qsort(ex, (size_t)nex, sizeof(ex[0]), cmp_str);
	if (!live) { /* the daemon is gone: the file against the list */
		memcpy(st, ex, sizeof(ex));
		nst = nex;
	}
	eq = same(st, nst, sf, nsf) && same(st, nst, ex, nex);
	printf("verify status %d state %d expected %d equal %s\n", nst, nsf,
	       nex, eq ? "yes" : "no");
	json_decref(file);
	json_decref(resp);
	json_decref(req);
	return eq ? 0 : 1;
}

int main(int argc, char **argv)
{
	json_object_seed(0); /* before any thread */
	if (argc >= 4 && !strcmp(argv[1], "run")) {
		int clients = argc > 4 ? atoi(argv[4]) : 64;
		sock_path = argv[2];
		if (argc > 5)
			nrounds = atoi(argv[5]);
		if (clients < 1 || clients > 512 || nrounds < 1 || nrounds > 64)
			return 2;
		return run(argv[3], clients);
	}
	if (argc == 5 && !strcmp(argv[1], "verify")) {
		sock_path = argv[2];
		return verify(argv[3], argv[4]);
	}
	fprintf(stderr, "usage: np-ctl-stress run SOCKET EXPECT_FILE "
			"[CLIENTS [ROUNDS]]\n"
			"       np-ctl-stress verify SOCKET STATE_JSON "
			"EXPECT_FILE\n");
	return 2;
}
