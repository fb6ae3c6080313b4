// SPDX-License-Identifier: Apache-2.0
/* Files numaplaced trusts (basic/trust.h). */
#include "basic/trust.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define TRUST_RULE                                                             \
	"numaplaced reads only files that root owns and only root can write"

int np_trust_stat(const struct stat *sb, const char *what, const char *path,
		  char *err, size_t errlen)
{
	unsigned mode = (unsigned)sb->st_mode & 07777;
	const char *sp = what && *what ? " " : "";

	what = what ? what : "";
	if (sb->st_uid != 0 && sb->st_uid != geteuid())
		return np_errf(err, errlen, -EPERM,
			       "%s%s%s: owned by uid %u, not root: %s "
			       "(chown root %s)",
			       what, sp, np_echo(path), (unsigned)sb->st_uid,
			       TRUST_RULE, np_echo(path));
	if (mode & S_IWOTH)
		return np_errf(err, errlen, -EPERM,
			       "%s%s%s: mode %04o lets anyone write it: "
			       "%s (chmod go-w %s)",
			       what, sp, np_echo(path), mode, TRUST_RULE,
			       np_echo(path));
	if (mode & S_IWGRP)
		return np_errf(err, errlen, -EPERM,
			       "%s%s%s: mode %04o lets its group (gid %u) "
			       "write it: %s (chmod go-w %s)",
			       what, sp, np_echo(path), mode,
			       (unsigned)sb->st_gid, TRUST_RULE, np_echo(path));
	return 0;
}

int np_trust_fd(int fd, const char *what, const char *path, char *err,
		size_t errlen)
{
	struct stat sb;

	if (fstat(fd, &sb))
		return np_errno(err, errlen, -errno, "%s%s%s",
				what ? what : "", what && *what ? " " : "",
				np_echo(path));
	return np_trust_stat(&sb, what, path, err, errlen);
}

int np_trust_path(const char *what, const char *path, char *err,
		  size_t errlen)
{
	struct stat sb;

	if (stat(path, &sb))
		return np_errno(err, errlen, -errno, "%s%s%s",
				what ? what : "", what && *what ? " " : "",
				np_echo(path));
	return np_trust_stat(&sb, what, path, err, errlen);
}

int np_trust_read(const char *what, const char *path, size_t max, char **out,
		  size_t *outlen, char *err, size_t errlen)
{
	const char *sp = what && *what ? " " : "";
	_cleanup_close_ int fd = -1;
	struct stat sb;
	int r;

	what = what ? what : "";
	*out = NULL;
	/* O_NONBLOCK: a FIFO put there must not hold the caller in open() */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)) < 0)
		return np_errno(err, errlen, -errno, "%s%s%s", what, sp,
				np_echo(path));
	if (fstat(fd, &sb))
		return np_errno(err, errlen, -errno, "%s%s%s", what, sp,
				np_echo(path));
	if (S_ISDIR(sb.st_mode))
		return np_errf(err, errlen, -EISDIR,
			       "%s%s%s: is a directory, not a file", what, sp,
			       np_echo(path));
	if (!S_ISREG(sb.st_mode))
		return np_errf(err, errlen, -EINVAL,
			       "%s%s%s: not a regular file", what, sp,
			       np_echo(path));
	if ((r = np_trust_stat(&sb, what, path, err, errlen)))
		return r;
	if ((r = np_read_fd(fd, max, out, outlen)) < 0)
		return r == -EFBIG ? np_errf(err, errlen, r,
					     "%s%s%s: longer than %zu bytes",
					     what, sp, np_echo(path), max)
				   : np_errno(err, errlen, r, "%s%s%s", what,
					      sp, np_echo(path));
	return 0;
}
