// SPDX-License-Identifier: Apache-2.0
/*
 * Fault injection for tests/host/faults-host.sh: an LD_PRELOAD library that
 * makes write(2) fail with a chosen errno for chosen files, the way the
 * kernel's cpuset code answers (EBUSY, EINVAL) and a fake cgroup tree
 * cannot. The daemon is not changed: its own write() call gets the errno.
 *
 *   cc -shared -fPIC -o np-fault-write.so \
 *      tests/host/faults/np_fault_write.c -ldl
 *   NP_FAULT_RULES=FILE [NP_FAULT_LOG=FILE] LD_PRELOAD=./np-fault-write.so numaplaced ...
 *
 * FILE is read at every write to a file descriptor above 2 (so the rules
 * can change while the process runs); each line is "ERRNO SUFFIX": a
 * write to a descriptor whose path (/proc/self/fd/N) ends with SUFFIX
 * fails with ERRNO (a name: EBUSY, EINVAL, ENOSPC, EIO, ERANGE, EACCES,
 * EROFS, ENODEV, or a number). An empty or missing FILE: no fault. Each
 * injected fault is appended to NP_FAULT_LOG as "ERRNO PATH".
 *
 * A kernel that refuses a cgroup write leaves the file as it was; a fake
 * tree's plain file is truncated at open (numaplaced opens it with
 * O_TRUNC there). So openat(2) of a file a rule names drops O_TRUNC: the
 * failed write leaves the old content, as the kernel would.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const struct {
	const char *name;
	int e;
} names[] = {
	{"EBUSY", EBUSY},   {"EINVAL", EINVAL}, {"ENOSPC", ENOSPC},
	{"EIO", EIO},       {"ERANGE", ERANGE}, {"EACCES", EACCES},
	{"EROFS", EROFS},   {"ENODEV", ENODEV}, {"EPERM", EPERM},
};

static ssize_t raw_write(int fd, const void *buf, size_t n)
{
	return syscall(SYS_write, fd, buf, n);
}

static int errno_of(const char *s)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i].name))
			return names[i].e;
	return atoi(s);
}

/* The errno the rules give for path, 0 for none; *name its name. */
static int rule_for(const char *path, char *name, size_t nlen)
{
	const char *rules = getenv("NP_FAULT_RULES");
	char buf[4096], *line, *save = NULL;
	size_t pl = strlen(path);
	ssize_t n;
	int rfd, e = 0;

	if (!rules)
		return 0;
	rfd = (int)syscall(SYS_openat, AT_FDCWD, rules, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return 0;
	n = syscall(SYS_read, rfd, buf, sizeof(buf) - 1);
	syscall(SYS_close, rfd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line && !e;
	     line = strtok_r(NULL, "\n", &save)) {
		char en[32], suffix[1024];
		size_t sl;
		if (sscanf(line, "%31s %1023s", en, suffix) != 2)
			continue;
		sl = strlen(suffix);
		if (sl <= pl && !strcmp(path + pl - sl, suffix)) {
			e = errno_of(en);
			snprintf(name, nlen, "%s", en);
		}
	}
	return e;
}

/* The errno to inject for a write to fd, 0 for none; path and *name. */
static int fault_for(int fd, char *path, size_t plen, char *name, size_t nlen)
{
	char link[64];
	ssize_t n;

	if (fd <= 2 || !getenv("NP_FAULT_RULES"))
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, plen - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return rule_for(path, name, nlen);
}

int openat(int dirfd, const char *file, int flags, ...)
{
	mode_t mode = 0;
	char path[4096], name[32];

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if ((flags & O_TRUNC) && getenv("NP_FAULT_RULES")) {
		char link[64];
		ssize_t n = 0;
		if (file[0] == '/') {
			snprintf(path, sizeof(path), "%s", file);
		} else {
			if (dirfd == AT_FDCWD)
				snprintf(link, sizeof(link), "/proc/self/cwd");
			else
				snprintf(link, sizeof(link), "/proc/self/fd/%d",
					 dirfd);
			n = readlink(link, path, sizeof(path) - 1);
			path[n > 0 ? n : 0] = '\0';
			snprintf(path + strlen(path), sizeof(path) - strlen(path),
				 "/%s", file);
		}
		if (rule_for(path, name, sizeof(name)))
			flags &= ~O_TRUNC;
	}
	return (int)syscall(SYS_openat, dirfd, file, flags, mode);
}

ssize_t write(int fd, const void *buf, size_t n)
{
	char path[4096], name[32], msg[4200];
	int e = fault_for(fd, path, sizeof(path), name, sizeof(name));
	const char *log = getenv("NP_FAULT_LOG");

	if (!e)
		return raw_write(fd, buf, n);
	if (log) {
		int lfd = (int)syscall(SYS_openat, AT_FDCWD, log,
				       O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
				       0644);
		if (lfd >= 0) {
			int k = snprintf(msg, sizeof(msg), "%s %s\n", name, path);
			if (k > 0)
				raw_write(lfd, msg, (size_t)k);
			syscall(SYS_close, lfd);
		}
	}
	errno = e;
	return -1;
}
