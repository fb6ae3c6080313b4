// SPDX-License-Identifier: Apache-2.0
/*
 * config.metrics.listen: "HOST:PORT", "[V6]:PORT" or "unix:/PATH" (apart
 * from metrics.c so that reading a configuration needs no HTTP server).
 */
#include "daemon/serve/metrics.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

static int parse_port(const char *s, in_port_t *port)
{
	char *end;
	unsigned long v;

	if (!*s || strspn(s, "0123456789") != strlen(s))
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > 65535)
		return -EINVAL;
	*port = htons((in_port_t)v);
	return 0;
}

int np_metrics_addr_parse(const char *s, struct np_metrics_addr *a, char *why,
			  size_t whylen)
{
	const char *colon;
	char host[64];

	memset(a, 0, sizeof(*a));
	if (!strncmp(s, "unix:", 5)) {
		struct sockaddr_un *un = (struct sockaddr_un *)&a->sa;
		const char *p = s + 5;
		if (p[0] != '/') {
			snprintf(why, whylen, "a Unix socket needs an absolute "
					      "path (\"unix:/run/numaplace/"
					      "metrics.sock\")");
			return -EINVAL;
		}
		if (strlen(p) >= sizeof(un->sun_path)) {
			snprintf(why, whylen, "the path is longer than %zu "
					      "characters (a Unix socket path "
					      "limit)",
				 sizeof(un->sun_path) - 1);
			return -EINVAL;
		}
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path, p, strlen(p) + 1);
		a->len = sizeof(*un);
		a->unix_path = true;
		return 0;
	}
	colon = strrchr(s, ':');
	if (!colon || colon == s || (size_t)(colon - s) >= sizeof(host)) {
		snprintf(why, whylen, "expected \"HOST:PORT\" (an IPv4 address "
				      "or [IPv6]), \"unix:PATH\", or \"\" for "
				      "off");
		return -EINVAL;
	}
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (host[0] == '[') {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&a->sa;
		size_t n = strlen(host);
		if (n < 3 || host[n - 1] != ']') {
			snprintf(why, whylen, "an IPv6 address goes in "
					      "brackets: \"[::1]:9464\"");
			return -EINVAL;
		}
		host[n - 1] = '\0';
		in6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1) {
			snprintf(why, whylen, "'%s' is not an IPv6 address",
				 host + 1);
			return -EINVAL;
		}
		a->len = sizeof(*in6);
		if (parse_port(colon + 1, &in6->sin6_port))
			goto bad_port;
		return 0;
	}
	struct sockaddr_in *in = (struct sockaddr_in *)&a->sa;
	in->sin_family = AF_INET;
	if (inet_pton(AF_INET, host, &in->sin_addr) != 1) {
		snprintf(why, whylen, "'%s' is not an IPv4 address (names are "
				      "not resolved; IPv6 goes in brackets)",
			 host);
		return -EINVAL;
	}
	a->len = sizeof(*in);
	if (parse_port(colon + 1, &in->sin_port))
		goto bad_port;
	return 0;
bad_port:
	snprintf(why, whylen, "'%s' is not a port (0..65535)", colon + 1);
	return -EINVAL;
}
