// SPDX-License-Identifier: Apache-2.0
/*
 * memory.numa_stat and page migration (see include/numaplace/numa_mem.h).
 */
#include "numaplace/numa_mem.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ERR(...)                                                               \
	do {                                                                   \
		if (err && errlen)                                             \
			snprintf(err, errlen, __VA_ARGS__);                    \
	} while (0)

/* "anon N0=40960 N1=20480" */
static int parse_line(const char *line, size_t len, int lineno,
		      struct np_numa_stat *out, char *err, size_t errlen)
{
	char key[64], buf[4096];
	const char *p;
	uint64_t *dst = NULL;
	size_t klen;

	if (len >= sizeof(buf)) {
		ERR("memory.numa_stat line %d: longer than %zu bytes", lineno,
		    sizeof(buf) - 1);
		return -EINVAL;
	}
	memcpy(buf, line, len);
	buf[len] = 0;
	klen = strcspn(buf, " ");
	if (klen == 0 || klen >= sizeof(key) || buf[klen] != ' ') {
		ERR("memory.numa_stat line %d: expected \"KEY N0=BYTES ...\", "
		    "got \"%.60s\"",
		    lineno, buf);
		return -EINVAL;
	}
	memcpy(key, buf, klen);
	key[klen] = 0;
	if (!strcmp(key, "anon"))
		dst = out->anon;
	else if (!strcmp(key, "file"))
		dst = out->file;
	for (p = buf + klen; *p;) {
		char *end;
		unsigned long node;
		unsigned long long v;
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		if (*p != 'N') {
			ERR("memory.numa_stat line %d (%s): expected N<node>=, "
			    "got \"%.20s\"",
			    lineno, key, p);
			return -EINVAL;
		}
		errno = 0;
		node = strtoul(p + 1, &end, 10);
		if (end == p + 1 || *end != '=' || errno) {
			ERR("memory.numa_stat line %d (%s): malformed node in "
			    "\"%.20s\"",
			    lineno, key, p);
			return -EINVAL;
		}
		if (node >= NP_MAX_NUMA) {
			ERR("memory.numa_stat line %d (%s): node %lu is beyond "
			    "the %d supported",
			    lineno, key, node, NP_MAX_NUMA);
			return -ERANGE;
		}
		p = end + 1;
		errno = 0;
		v = strtoull(p, &end, 10);
		if (end == p || errno || (*end && *end != ' ')) {
			ERR("memory.numa_stat line %d (%s): malformed value for "
			    "N%lu",
			    lineno, key, node);
			return -EINVAL;
		}
		p = end;
		out->nodes |= NP_NODEMASK_BIT(node);
		if (dst)
			dst[node] = v;
	}
	return 0;
}

int np_numa_stat_parse(const char *text, struct np_numa_stat *out, char *err,
		       size_t errlen)
{
	int lineno = 0, r;

	memset(out, 0, sizeof(*out));
	while (*text) {
		size_t len = strcspn(text, "\n");
		lineno++;
		if (len && (r = parse_line(text, len, lineno, out, err, errlen))) {
			memset(out, 0, sizeof(*out));
			return r;
		}
		text += len;
		if (*text == '\n')
			text++;
	}
	for (int n = 0; n < NP_MAX_NUMA; n++)
		out->resident[n] = out->anon[n] + out->file[n];
	return 0;
}

int np_numa_stat_read(int dirfd, struct np_numa_stat *out, char *err,
		      size_t errlen)
{
	char buf[16384];
	size_t have = 0;
	ssize_t n;
	int fd = openat(dirfd, "memory.numa_stat", O_RDONLY | O_CLOEXEC), r;

	if (fd < 0) {
		r = -errno;
		if (r == -ENOENT)
			ERR("memory.numa_stat: not present (memory controller "
			    "not enabled for this cgroup: +memory in the "
			    "parents' cgroup.subtree_control)");
		else
			ERR("memory.numa_stat: %s", strerror(-r));
		return r;
	}
	while (have < sizeof(buf) - 1 &&
	       (n = read(fd, buf + have, sizeof(buf) - 1 - have)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			close(fd);
			ERR("memory.numa_stat: %s", strerror(-r));
			return r;
		}
		have += (size_t)n;
	}
	close(fd);
	buf[have] = 0;
	return np_numa_stat_parse(buf, out, err, errlen);
}

uint64_t np_numa_stat_outside(const struct np_numa_stat *s,
			      np_nodemask allowed)
{
	uint64_t sum = 0;
	for (int n = 0; n < NP_MAX_NUMA; n++)
		if (!np_nodemask_test(allowed, n))
			sum += s->resident[n];
	return sum;
}

int np_numa_migrate_cgroup(int dirfd, np_nodemask from, np_nodemask to,
			   struct np_migrate_result *res, char *err,
			   size_t errlen)
{
	/* migrate_pages(2) reads maxnode - 1 bits (the kernel's
	 * get_nodes() decrements maxnode): pass one more than the mask. */
	unsigned long old_nodes = (unsigned long)from,
		      new_nodes = (unsigned long)to;
	const unsigned long maxnode = 8 * sizeof(unsigned long) + 1;
	char buf[65536];
	ssize_t n;
	size_t have = 0;
	int fd, r = 0;

	_Static_assert(sizeof(unsigned long) * 8 >= NP_MAX_NUMA,
		       "a node mask fits in one unsigned long");
	memset(res, 0, sizeof(*res));
	if (!to) {
		ERR("migrate: no target node");
		return -EINVAL;
	}
	fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		r = -errno;
		ERR("cgroup.procs: %s", strerror(-r));
		return r;
	}
	while (have < sizeof(buf) - 1 &&
	       (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0)
		have += (size_t)n;
	close(fd);
	buf[have] = 0;
	for (char *p = buf, *end; *p; p = end) {
		long pid, ret;
		while (*p == '\n')
			p++;
		if (!*p)
			break;
		errno = 0;
		pid = strtol(p, &end, 10);
		if (end == p || pid <= 0 || errno || (*end && *end != '\n')) {
			ERR("cgroup.procs: not a pid: \"%.20s\"", p);
			return -EINVAL;
		}
		ret = syscall(SYS_migrate_pages, (int)pid, maxnode, &old_nodes,
			      &new_nodes);
		if (ret >= 0) {
			res->pids_done++;
			res->pages_not_moved += ret;
		} else if (errno == ESRCH) {
			res->pids_gone++;
		} else if (!res->first_error) {
			res->first_error = -errno;
			ERR("migrate_pages(pid %ld): %s", pid, strerror(errno));
		}
	}
	return res->first_error;
}
