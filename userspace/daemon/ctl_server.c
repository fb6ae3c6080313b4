/* SPDX-License-Identifier: Apache-2.0 */
/* Control socket server: see ctl_server.h. */
#include "daemon/ctl_server.h"
#include "basic/fileio.h"
#include "basic/log.h"
#include "numaplace/error.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

struct np_ctl_server {
	int lfd, epfd;
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

/* Interim: one client at a time (replaced by the non-blocking server). */
static void serve_client(struct np_ctl_server *s, int fd)
{
	struct ucred cred;
	socklen_t cl = sizeof(cred);
	size_t max = s->lim.max_request;
	char *buf = malloc(max);
	size_t len = 0;
	json_t *resp = NULL, *req;
	json_error_t jerr;
	char *out;

	if (!buf)
		goto out;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cl) ||
	    cred.uid != s->lim.allow_uid) {
		resp = np_ctl_error("permission denied: numaplaced accepts "
				    "requests from root only");
		np_log(LOG_WARNING, "refused control request from uid %u pid %d",
		       (unsigned)cred.uid, (int)cred.pid);
		goto reply;
	}
	while (len < max - 1) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t k;
		if (poll(&p, 1, 5000) <= 0)
			break;
		k = read(fd, buf + len, max - 1 - len);
		if (k <= 0)
			break;
		len += (size_t)k;
		if (memchr(buf, '\n', len))
			break;
	}
	buf[len] = '\0';
	req = json_loads(buf, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES,
			 &jerr);
	if (!req)
		resp = np_ctl_error("request: invalid JSON at column %d: %s",
				    jerr.column, jerr.text);
	else
		resp = s->h(s->ctx, req);
	json_decref(req);
reply:
	out = json_dumps(resp, JSON_COMPACT);
	if (out) {
		size_t n = strlen(out), off = 0;
		while (off < n) {
			ssize_t k = send(fd, out + off, n - off, MSG_NOSIGNAL);
			if (k <= 0)
				break;
			off += (size_t)k;
		}
		(void)!send(fd, "\n", 1, MSG_NOSIGNAL);
	}
	free(out);
	json_decref(resp);
out:
	free(buf);
	close(fd);
}

int np_ctl_server_open(struct np_ctl_server **out, const char *path,
		       const struct np_ctl_limits *lim, np_ctl_handler h,
		       void *ctx, char *err, size_t errlen)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	struct epoll_event ev = {.events = EPOLLIN};
	struct np_ctl_server *s;
	char dir[sizeof(a.sun_path)], *slash;
	int r;

	*out = NULL;
	if (strlen(path) >= sizeof(a.sun_path))
		return np_errf(err, errlen, -ENAMETOOLONG,
			       "socket %.200s: path too long (at most %zu "
			       "bytes)",
			       path, sizeof(a.sun_path) - 1);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if ((r = np_mkdir_p(dir, 0700)))
			return np_errno(err, errlen, r, "socket directory %s",
					dir);
	}
	if (!(s = calloc(1, sizeof(*s))))
		return np_errf(err, errlen, -ENOMEM, "out of memory");
	s->lim = *lim;
	s->h = h;
	s->ctx = ctx;
	s->epfd = -1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	memcpy(a.sun_path, path, strlen(path) + 1);
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s->lfd < 0) {
		r = np_errno(err, errlen, -errno, "control socket");
		goto fail;
	}
	unlink(a.sun_path);
	if (bind(s->lfd, (struct sockaddr *)&a, sizeof(a)) ||
	    chmod(a.sun_path, 0600) || listen(s->lfd, 128)) {
		r = np_errno(err, errlen, -errno, "control socket %s", path);
		goto fail;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	ev.data.fd = s->lfd;
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev)) {
		r = np_errno(err, errlen, -errno, "control socket epoll");
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

int np_ctl_server_dispatch(struct np_ctl_server *s)
{
	struct epoll_event ev[8];
	int c;

	(void)epoll_wait(s->epfd, ev, 8, 0);
	while ((c = accept4(s->lfd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
		serve_client(s, c);
	return 0;
}

int np_ctl_server_nconns(const struct np_ctl_server *s)
{
	(void)s;
	return 0;
}

void np_ctl_server_close(struct np_ctl_server *s)
{
	if (!s)
		return;
	if (s->lfd >= 0) {
		close(s->lfd);
		unlink(s->path);
	}
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
}
