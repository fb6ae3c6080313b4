/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The server side of the control socket (protocol: numaplace/ctl.h).
 *
 * One epoll file descriptor stands for the whole server: the daemon adds
 * np_ctl_server_fd() to its own loop and calls np_ctl_server_dispatch()
 * whenever it is readable. The server never blocks: accept, read and write
 * are non-blocking, each connection has its own buffers, and requests are
 * answered in order per connection. Limits bound what clients can take:
 * connections at once, the size of a request line, and idle time.
 *
 * The handler runs in the caller's thread, inside dispatch, one request at
 * a time; it returns the response object (a new reference). It may hold
 * that answer (*held = true): it is sent only when the caller says the
 * work it waits for is done (np_ctl_server_answer_held(), which may
 * complete it first); that connection's next request waits until then,
 * and others are served meanwhile.
 *
 * What clients get besides the handler's answers ({"ok":false,"error":..}):
 *   - a peer whose uid is not lim.allow_uid, nor in lim.read_gid (its
 *     group or one of its supplementary groups, when lim.read_group):
 *     "permission denied: numaplaced accepts requests from root only"
 *     (with a read group: "... and reads from group G"), then the
 *     connection is closed (nothing is read);
 *   - a peer served for lim.read_gid only, asking an op not in
 *     lim.read_ops: "permission denied: OP changes numaplaced; group G
 *     may only read (status, ...)" (the connection stays open);
 *   - a line that is not JSON: "request: invalid JSON at column N: TEXT";
 *   - max_request bytes without a newline: "request: longer than N bytes",
 *     then the connection is closed (nothing of that line is handled);
 *   - idle_ms without progress in the middle of a request: "request:
 *     incomplete, no newline within N ms" (if it can be sent at once),
 *     then the connection is closed; an idle connection between requests
 *     is just closed;
 *   - a response over NP_CTL_MAX_LINE: "response: longer than N bytes".
 * A request without its newline followed by EOF (shutdown(SHUT_WR)) is
 * still a request. Beyond max_conns the server stops accepting (the kernel
 * listen backlog, 128, holds further clients) until a connection closes.
 * A connection's next request is handled only after the previous answer
 * is written, so a client that does not read holds at most one answer
 * and max_request bytes of input; each connection has at most a few
 * requests answered per dispatch before the others get their turn.
 */
#ifndef NUMAPLACE_DAEMON_CTL_SERVER_H
#define NUMAPLACE_DAEMON_CTL_SERVER_H

#include "numaplace/ctl.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef json_t *(*np_ctl_handler)(void *ctx, const json_t *req, bool *held);
/* Completes a held answer (resp, consumed) when it is sent: the final
 * answer (a new reference). */
typedef json_t *(*np_ctl_complete)(void *ctx, json_t *resp);

struct np_ctl_limits {
	int max_conns;       /* connections served at once; more wait in the
				listen backlog (accepted as others close) */
	size_t max_request;  /* a request line, '\n' included */
	int idle_ms;         /* a connection with no progress this long is
				closed (a partial request is answered with
				an error first) */
	uid_t allow_uid;     /* the peer uid served (SO_PEERCRED) */
	/* Peers of this group (primary or supplementary: SO_PEERGROUPS)
	 * may ask the ops of read_ops (NULL-ended) only. The socket file
	 * is mode 0660 and of this group then, 0600 otherwise. */
	bool read_group;
	gid_t read_gid;
	const char *const *read_ops;
};

#define NP_CTL_SERVER_DEFAULT_LIMITS                                           \
	((struct np_ctl_limits){.max_conns = 64,                               \
				.max_request = NP_CTL_MAX_LINE,                \
				.idle_ms = 10000,                              \
				.allow_uid = 0})

struct np_ctl_server;

/* Bind path (creating its directory, mode 0700; 0755 with a read
 * group), the socket mode 0600 (0660 and lim->read_gid's with a read
 * group), listen. */
int np_ctl_server_open(struct np_ctl_server **out, const char *path,
		       const struct np_ctl_limits *lim, np_ctl_handler h,
		       void *ctx, char *err, size_t errlen);
/* The fd to poll for readability. */
int np_ctl_server_fd(const struct np_ctl_server *s);
/* Do all I/O that can be done now without blocking; 0 or -errno. */
int np_ctl_server_dispatch(struct np_ctl_server *s);
/* Send the held answers (each through complete, when not NULL, with the
 * handler's ctx); their connections' next requests are handled at the
 * next dispatch (the fd becomes readable). */
void np_ctl_server_answer_held(struct np_ctl_server *s,
			       np_ctl_complete complete);
/* Close every connection and the socket, unlink the path. */
void np_ctl_server_close(struct np_ctl_server *s);

/* Connections open now (for status and tests). */
int np_ctl_server_nconns(const struct np_ctl_server *s);

/* {"ok":false,"error":MESSAGE}: the failed-request response. */
json_t *np_ctl_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
