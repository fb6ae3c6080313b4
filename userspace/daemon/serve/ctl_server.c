// SPDX-License-Identifier: Apache-2.0
/*
 * Control socket server: see ctl_server.h.
 *
 * One epoll fd holds the listening socket, a timerfd and every connection.
 * A connection is a state machine driven by conn_run(): write what is
 * pending, take the next complete line from the input buffer and answer
 * it, or read more. Nothing blocks; what cannot be done now waits for the
 * next event. The timerfd fires at the earliest idle deadline, when a
 * connection still has buffered requests after its share of a dispatch
 * (NP_CTL_BATCH), or when accepting resumes after running out of fds.
 *
 * Bounds: the input buffer never exceeds lim.max_request (an unfinished
 * line that fills it is answered with an error and the connection closed);
 * the next request of a connection is handled only once the previous
 * response has been written out, so the output buffer holds at most one
 * response line, itself at most NP_CTL_MAX_LINE bytes. A held answer
 * (ctl_server.h) stops its connection (nothing read, no idle deadline)
 * until np_ctl_server_answer_held() queues it.
 */
#include "daemon/serve/ctl_server.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Requests one connection may have answered per dispatch before the
 * others get their turn. */
#define NP_CTL_BATCH 8
/* Accepts per dispatch. */
#define NP_CTL_ACCEPT_BATCH 16
/* Pause before accepting again after running out of file descriptors. */
#define NP_CTL_ACCEPT_PAUSE_MS 100
/* First size of an input buffer (it grows up to lim.max_request). */
#define NP_CTL_INBUF_MIN 4096

struct conn {
	struct conn *prev, *next;
	int fd;
	uint32_t events; /* what epoll watches for now */
	char *in;	 /* input: [inoff, inlen) not yet consumed */
	size_t incap, inoff, inlen;
	size_t scan; /* no '\n' in [inoff, scan) */
	char *out;   /* one response line, [outoff, outlen) unsent */
	size_t outoff, outlen;
	long long last_ms; /* last progress (accept, read or write) */
	bool rd_eof;	   /* the peer shut down its sending side */
	bool closing;	   /* close once the output is written */
	bool backlog;	   /* complete lines left after its batch */
	bool read_only;	   /* served for lim.read_gid: lim.read_ops only */
	json_t *held;	   /* an answer the handler held (not yet sent) */
};

struct np_ctl_server {
	int lfd, epfd, tfd;
	bool listening;		 /* lfd is in the epoll set */
	bool placed;		 /* path is ours: renamed into place */
	long long accept_resume; /* paused after EMFILE until then; 0: not */
	long long armed;	 /* the timerfd's deadline; 0: disarmed */
	struct conn *conns;
	int nconns;
	char path[108];
	struct np_ctl_limits lim;
	np_ctl_handler h;
	void *ctx;
};

json_t *np_ctl_error(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return json_pack("{s:b,s:s}", "ok", 0, "error", buf);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- epoll bookkeeping --------------------------------------------------- */

static void update_listen(struct np_ctl_server *s)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &s->lfd};
	bool want = s->nconns < s->lim.max_conns && !s->accept_resume;

	if (want == s->listening)
		return;
	if (epoll_ctl(s->epfd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, s->lfd,
		      &ev) == 0)
		s->listening = want;
	else
		np_log_errno(LOG_ERR, -errno, "control socket: epoll");
}

static void conn_watch(struct np_ctl_server *s, struct conn *c)
{
	struct epoll_event ev = {.data.ptr = c};

	if (c->held)
		ev.events = 0; /* until its answer is sent */
	else if (c->outoff < c->outlen)
		ev.events = EPOLLOUT;
	else if (!c->closing && !c->rd_eof)
		ev.events = EPOLLIN;
	if (ev.events == c->events)
		return;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->events = ev.events;
	else
		np_log_errno(LOG_ERR, -errno, "control connection: epoll");
}

/* Close c, dropping whatever it has not sent or not yet had answered. */
static void conn_free(struct np_ctl_server *s, struct conn *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	close(c->fd); /* also leaves the epoll set */
	json_decref(c->held);
	free(c->in);
	free(c->out);
	free(c);
	s->nconns--;
	update_listen(s);
}

/* Arm the timerfd for the earliest thing due (nothing: disarm). */
static void arm_timer(struct np_ctl_server *s)
{
	struct itimerspec its = {0};
	long long due = s->accept_resume;

	for (struct conn *c = s->conns; c; c = c->next) {
		long long d = c->backlog ? 1 : 0;
		if (!d && s->lim.idle_ms > 0 && !c->held)
			d = c->last_ms + s->lim.idle_ms;
		if (d && (!due || d < due))
			due = d;
	}
	if (due == s->armed)
		return;
	its.it_value.tv_sec = due / 1000;
	its.it_value.tv_nsec = (due % 1000) * 1000000L;
	if (timerfd_settime(s->tfd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		s->armed = due;
	else
		np_log_errno(LOG_ERR, -errno, "control socket: timerfd");
}

/* ---- one connection ------------------------------------------------------ */

/* Make resp (consumed) the pending output line. -ENOMEM if it cannot be
 * encoded. */
static int queue_response(struct conn *c, json_t *resp)
{
	char *line = resp ? json_dumps(resp, JSON_COMPACT) : NULL;
	size_t n = line ? strlen(line) : 0;
	char *nl;

	json_decref(resp);
	if (line && n + 1 > NP_CTL_MAX_LINE) {
		free(line);
		resp = np_ctl_error("response: longer than %d bytes",
				    NP_CTL_MAX_LINE);
		line = resp ? json_dumps(resp, JSON_COMPACT) : NULL;
		json_decref(resp);
		n = line ? strlen(line) : 0;
	}
	if (!line || !(nl = realloc(line, n + 1))) {
		free(line);
		return -ENOMEM;
	}
	nl[n] = '\n'; /* replaces the NUL: sent by length */
	free(c->out);
	c->out = nl;
	c->outoff = 0;
	c->outlen = n + 1;
	return 0;
}

/* May a read-only peer ask req (an op of lim.read_ops)? */
static bool read_op(const struct np_ctl_server *s, const json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));

	for (int i = 0; op && s->lim.read_ops && s->lim.read_ops[i]; i++)
		if (!strcmp(op, s->lim.read_ops[i]))
			return true;
	return false;
}

static json_t *read_only_error(const struct np_ctl_server *s,
			       const json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	char ops[256] = "";

	for (int i = 0; s->lim.read_ops && s->lim.read_ops[i]; i++)
		snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s",
			 i ? ", " : "", s->lim.read_ops[i]);
	return np_ctl_error("permission denied: %s%.64s%s is not a read; "
			    "group %u may only read (%s)",
			    op ? "\"" : "", op ? op : "a request without op",
			    op ? "\"" : "", (unsigned)s->lim.read_gid, ops);
}

/* Is the peer of fd (primary group gid) in lim.read_gid? */
static bool in_read_group(const struct np_ctl_server *s, int fd, gid_t gid)
{
	gid_t groups[1024];
	socklen_t len = sizeof(groups);

	if (!s->lim.read_group)
		return false;
	if (gid == s->lim.read_gid)
		return true;
	/* more than 1024 groups: ERANGE, not in it */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len))
		return false;
	for (size_t i = 0; i < len / sizeof(gid_t); i++)
		if (groups[i] == s->lim.read_gid)
			return true;
	return false;
}

/* Answer one request line (without its '\n'). */
static void handle_line(struct np_ctl_server *s, struct conn *c,
			const char *line, size_t len)
{
	json_error_t jerr;
	_cleanup_json_ json_t *req = NULL;
	json_t *resp;
	bool held = false;

	req = json_loadb(
	    line, len, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
	if (req) {
		/* one value per line: anything after it but blanks is wrong */
		size_t p = (size_t)jerr.position;
		while (p < len && (line[p] == ' ' || line[p] == '\t' ||
				   line[p] == '\r'))
			p++;
		if (p < len) {
			json_decref(req);
			req = NULL;
			resp = np_ctl_error("request: data after the JSON value "
					    "at byte %zu (one request per line)",
					    p + 1);
			goto answer;
		}
	}
	if (!req)
		resp = np_ctl_error("request: invalid JSON at column %d: %s",
				    jerr.column, jerr.text);
	else if (c->read_only && !read_op(s, req))
		resp = read_only_error(s, req);
	else
		resp = s->h(s->ctx, req, &held);
	if (held && resp) {
		c->held = resp; /* sent by np_ctl_server_answer_held() */
		return;
	}
answer:
	if (queue_response(c, resp)) {
		np_log(LOG_ERR, "control connection: out of memory for an "
				"answer; closing it");
		c->closing = true;
	}
}

/* Answer with an error and close (after it is sent). */
static void conn_fail(struct conn *c, json_t *resp)
{
	queue_response(c, resp); /* on ENOMEM it just closes */
	c->closing = true;
}

/* Write pending output: 0 when all is written, -EAGAIN, or -errno. */
static int conn_flush(struct conn *c)
{
	while (c->outoff < c->outlen) {
		ssize_t k =
		    send(c->fd, c->out + c->outoff, c->outlen - c->outoff,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return errno == EWOULDBLOCK ? -EAGAIN : -errno;
		c->outoff += (size_t)k;
		c->last_ms = now_ms();
	}
	free(c->out);
	c->out = NULL;
	c->outoff = c->outlen = 0;
	return 0;
}

/* Read what is there into the input buffer: >0 bytes, 0 at EOF, -EAGAIN,
 * or -errno. The caller makes sure the unconsumed part is shorter than
 * max_request, so there is always room. */
static int conn_read(struct np_ctl_server *s, struct conn *c)
{
	ssize_t k;

	if (c->inoff) {
		memmove(c->in, c->in + c->inoff, c->inlen - c->inoff);
		c->inlen -= c->inoff;
		c->scan -= c->inoff;
		c->inoff = 0;
	}
	if (c->inlen == c->incap) {
		size_t cap = c->incap ? c->incap * 2 : NP_CTL_INBUF_MIN;
		char *nb;
		if (cap > s->lim.max_request)
			cap = s->lim.max_request;
		if (!(nb = realloc(c->in, cap)))
			return -ENOMEM;
		c->in = nb;
		c->incap = cap;
	}
	do
		k = recv(c->fd, c->in + c->inlen, c->incap - c->inlen,
			 MSG_DONTWAIT);
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (k == 0) {
		c->rd_eof = true;
		return 0;
	}
	c->inlen += (size_t)k;
	c->last_ms = now_ms();
	return (int)k;
}

/* The next complete line in the input, consumed; false if there is none. */
static bool next_line(struct conn *c, const char **line, size_t *len)
{
	char *nl = c->inlen > c->scan
		       ? memchr(c->in + c->scan, '\n', c->inlen - c->scan)
		       : NULL;

	if (!nl) {
		c->scan = c->inlen;
		return false;
	}
	*line = c->in + c->inoff;
	*len = (size_t)(nl - *line);
	c->inoff = c->scan = (size_t)(nl - c->in) + 1;
	return true;
}

/*
 * Take c as far as it goes without blocking. Returns false when c was
 * closed (and freed).
 */
static bool conn_run(struct np_ctl_server *s, struct conn *c)
{
	int budget = NP_CTL_BATCH, r;
	const char *line;
	size_t len;

	c->backlog = false;
	for (;;) {
		if (c->held)
			break; /* nothing more until its answer is sent */
		if ((r = conn_flush(c)) == -EAGAIN)
			break;
		if (r < 0 || c->closing)
			goto close;
		if (next_line(c, &line, &len)) {
			if (budget-- == 0) {
				c->inoff = c->scan = c->inoff - len - 1;
				c->backlog = true; /* the line is put back */
				break;
			}
			handle_line(s, c, line, len);
			continue;
		}
		if (c->inlen - c->inoff >= s->lim.max_request) {
			np_log(LOG_WARNING,
			       "control connection: request "
			       "longer than %zu bytes; closing it",
			       s->lim.max_request);
			conn_fail(c, np_ctl_error("request: longer than %zu "
						  "bytes",
						  s->lim.max_request));
			continue;
		}
		if (c->rd_eof) {
			/* A last request without its newline. */
			if (c->inlen == c->inoff)
				goto close;
			line = c->in + c->inoff;
			len = c->inlen - c->inoff;
			c->inoff = c->scan = c->inlen;
			handle_line(s, c, line, len);
			c->closing = true;
			continue;
		}
		if ((r = conn_read(s, c)) == -EAGAIN)
			break;
		if (r < 0)
			goto close;
	}
	conn_watch(s, c);
	return true;
close:
	conn_free(s, c);
	return false;
}

/* An idle connection: a partial request gets an error (if it can be sent
 * at once), then the connection is closed. */
static void conn_expire(struct np_ctl_server *s, struct conn *c)
{
	bool partial = c->inlen > c->inoff && c->outoff == c->outlen;

	np_log(LOG_NOTICE, "control connection: idle for %d ms%s; closing it",
	       s->lim.idle_ms, partial ? " in the middle of a request" : "");
	if (partial &&
	    !queue_response(c, np_ctl_error("request: incomplete, no newline "
					    "within %d ms",
					    s->lim.idle_ms)))
		(void)conn_flush(c);
	conn_free(s, c);
}

/* ---- the server ---------------------------------------------------------- */

/* A new connection: the peer's uid is checked before anything is read. */
static void conn_add(struct np_ctl_server *s, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct ucred cred = {0};
	socklen_t cl = sizeof(cred);
	struct conn *c = calloc(1, sizeof(*c));

	if (!c) {
		np_log(LOG_ERR, "control connection: out of memory");
		close(fd);
		return;
	}
	ev.data.ptr = c;
	if (epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		np_log_errno(LOG_ERR, -errno, "control connection: epoll");
		close(fd);
		free(c);
		return;
	}
	c->fd = fd;
	c->events = EPOLLIN;
	c->last_ms = now_ms();
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	update_listen(s);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl)) {
		cred.uid = (uid_t)-1;
	} else if (cred.uid != s->lim.allow_uid &&
		   in_read_group(s, fd, cred.gid)) {
		c->read_only = true;
	} else if (cred.uid != s->lim.allow_uid) {
		np_log(LOG_WARNING,
		       "refused control request from uid %u pid %d",
		       (unsigned)cred.uid, (int)cred.pid);
		if (s->lim.read_group)
			conn_fail(c, np_ctl_error(
					 "permission denied: numaplaced accepts "
					 "requests from root only, and reads "
					 "from group %u",
					 (unsigned)s->lim.read_gid));
		else
			conn_fail(c, np_ctl_error("permission denied: numaplaced "
						  "accepts requests from root "
						  "only"));
	}
	if (cred.uid == (uid_t)-1)
		conn_fail(c, np_ctl_error("permission denied: the peer's "
					  "credentials cannot be read"));
	conn_run(s, c);
}

static void accept_conns(struct np_ctl_server *s)
{
	for (int i = 0; i < NP_CTL_ACCEPT_BATCH && s->listening; i++) {
		int fd =
		    accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd >= 0) {
			conn_add(s, fd);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		/* EMFILE, ENFILE, ENOBUFS, ENOMEM: the listening socket stays
		 * readable, so stop watching it for a while. */
		np_log_errno(LOG_WARNING, -errno,
			     "control socket: accept (pausing %d ms)",
			     NP_CTL_ACCEPT_PAUSE_MS);
		s->accept_resume = now_ms() + NP_CTL_ACCEPT_PAUSE_MS;
		update_listen(s);
		return;
	}
}

static bool idle(const struct np_ctl_server *s, const struct conn *c,
		 long long now)
{
	return !c->held && s->lim.idle_ms > 0 &&
	       now - c->last_ms >= s->lim.idle_ms;
}

/* The timer: connections with buffered requests get their next turn, idle
 * ones are closed, a paused accept resumes. A connection is idle only if
 * it makes no progress now either: one that waited for its turn while the
 * handler was busy with others is not the client's fault. */
static void sweep(struct np_ctl_server *s)
{
	long long now = now_ms();
	uint64_t x;
	struct conn *next;

	(void)!read(s->tfd, &x, sizeof(x));
	s->armed = 0; /* a one-shot timer that fired */
	if (s->accept_resume && now >= s->accept_resume) {
		s->accept_resume = 0;
		update_listen(s);
	}
	for (struct conn *c = s->conns; c; c = next) {
		next = c->next;
		if (c->backlog || idle(s, c, now)) {
			if (conn_run(s, c) && idle(s, c, now_ms()))
				conn_expire(s, c);
		}
	}
}

int np_ctl_server_dispatch(struct np_ctl_server *s)
{
	struct epoll_event ev[32];
	bool timer = false, listen = false;
	int n;

	do
		n = epoll_wait(s->epfd, ev, 32, 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	/* Connections first: the timer may close some, whose events would
	 * otherwise come after in this batch. */
	for (int i = 0; i < n; i++) {
		if (ev[i].data.ptr == &s->tfd)
			timer = true;
		else if (ev[i].data.ptr == &s->lfd)
			listen = true;
		else
			conn_run(s, ev[i].data.ptr);
	}
	if (timer)
		sweep(s);
	if (listen)
		accept_conns(s);
	arm_timer(s);
	return 0;
}

void np_ctl_server_answer_held(struct np_ctl_server *s,
			       np_ctl_complete complete)
{
	struct conn *next;
	bool any = false;
	int r;

	for (struct conn *c = s->conns; c; c = next) {
		json_t *resp = c->held;

		next = c->next;
		if (!resp)
			continue;
		c->held = NULL;
		any = true;
		if (complete)
			resp = complete(s->ctx, resp);
		if (queue_response(c, resp)) {
			np_log(LOG_ERR, "control connection: out of memory for "
					"an answer; closing it");
			c->closing = true;
		}
		/* sent now, as an answer not held is; what the client
		 * sent meanwhile is read at the next dispatch */
		if (((r = conn_flush(c)) < 0 && r != -EAGAIN) ||
		    (!r && c->closing)) {
			conn_free(s, c);
			continue;
		}
		c->backlog = c->inlen > c->inoff || c->rd_eof;
		conn_watch(s, c);
	}
	if (any)
		arm_timer(s);
}

int np_ctl_server_open(struct np_ctl_server **out, const char *path,
		       const struct np_ctl_limits *lim, np_ctl_handler h,
		       void *ctx, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct epoll_event ev = {.events = EPOLLIN};
	struct np_ctl_server *s;
	char dir[sizeof(a.sun_path)], *slash;
	int r, sfx;

	*out = NULL;
	/* the socket is bound as PATH.PID~ first (below): that name must fit */
	sfx = snprintf(NULL, 0, ".%d~", (int)getpid());
	if (strlen(path) + (size_t)sfx >= sizeof(a.sun_path))
		return np_errf(err, errlen, -ENAMETOOLONG,
			       "socket %.200s: path too long (at most %zu "
			       "bytes, with room for its temporary name)",
			       path, sizeof(a.sun_path) - 1 - (size_t)sfx);
	if (lim->max_conns < 1 || lim->max_request < 2)
		return np_errf(err, errlen, -EINVAL,
			       "control socket: max_conns must be at least 1 "
			       "and max_request at least 2");
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if ((r = np_mkdir_p(dir, lim->read_group ? 0755 : 0700)))
			return np_errno(err, errlen, r, "socket directory %s",
					dir);
	}
	if (!(s = calloc(1, sizeof(*s))))
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	s->lim = *lim;
	s->h = h;
	s->ctx = ctx;
	s->epfd = s->tfd = -1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	/* bound, owned and listening under a temporary name, then renamed into
	 * place: a client that sees the path can connect (never ECONNREFUSED
	 * between bind() and listen()), and never with the umask's mode */
	snprintf(a.sun_path, sizeof(a.sun_path), "%s.%d~", path, (int)getpid());
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0) {
		r = np_errno(err, errlen, -errno, "control socket");
		goto fail;
	}
	unlink(a.sun_path);
	if (bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    (lim->read_group && chown(a.sun_path, (uid_t)-1, lim->read_gid)) ||
	    chmod(a.sun_path, lim->read_group ? 0660 : 0600) ||
	    listen(s->lfd, 128) || rename(a.sun_path, path)) {
		r = np_errno(err, errlen, -errno, "control socket %s", path);
		unlink(a.sun_path);
		goto fail;
	}
	s->placed = true;
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ev.data.ptr = &s->tfd;
	if (s->epfd < 0 || s->tfd < 0 ||
	    epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->tfd, &ev)) {
		r = np_errno(err, errlen, -errno, "control socket epoll");
		goto fail;
	}
	update_listen(s);
	if (!s->listening) {
		r = np_errf(err, errlen, -EIO, "control socket epoll failed");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	np_ctl_server_close(s);
	return r;
}

int np_ctl_server_fd(const struct np_ctl_server *s)
{
	return s->epfd;
}

int np_ctl_server_nconns(const struct np_ctl_server *s)
{
	return s->nconns;
}

void np_ctl_server_close(struct np_ctl_server *s)
{
	if (!s)
		return;
	s->lim.max_conns = 0; /* conn_free must not start listening again */
	while (s->conns)
		conn_free(s, s->conns);
	if (s->lfd >= 0) {
		close(s->lfd);
		if (s->placed)
			unlink(s->path);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->tfd >= 0)
		close(s->tfd);
	free(s);
}
