// SPDX-License-Identifier: Apache-2.0
#include "basic/fileio.h"
#include "numaplace/cleanup.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int np_read_fd(int fd, size_t max, char **out, size_t *outlen)
{
	_cleanup_free_ char *buf = NULL;
	size_t cap = 4096, len = 0;
	struct stat sb;

	*out = NULL;
	/* The size is only a hint (cgroupfs and procfs say 0 or 4096). */
	if (fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > 0) {
		if ((uint64_t)sb.st_size > max)
			return -EFBIG;
		cap = (size_t)sb.st_size + 1;
	}
	/* Room for max + 1 bytes: one more than max says the file is larger. */
	if (cap > max + 2)
		cap = max + 2;
	if (!(buf = malloc(cap)))
		return -ENOMEM;
	for (;;) {
		ssize_t n;
		if (len + 1 >= cap) {
			char *nb;
			if (len > max)
				return -EFBIG;
			cap = cap > max / 2 ? max + 2 : cap * 2;
			if (!(nb = realloc(buf, cap)))
				return -ENOMEM;
			buf = nb;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (len > max)
		return -EFBIG;
	buf[len] = '\0';
	if (outlen)
		*outlen = len;
	*out = np_take_ptr(buf);
	return 0;
}

int np_read_at(int dirfd, const char *name, unsigned flags, size_t max,
	       char **out, size_t *outlen)
{
	_cleanup_close_ int fd = -1;
	struct stat sb;

	*out = NULL;
	fd = openat(dirfd, name,
		    O_RDONLY | O_CLOEXEC |
			    (flags & NP_READ_NOFOLLOW ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -errno;
	if (flags & NP_READ_REGULAR) {
		if (fstat(fd, &sb))
			return -errno;
		if (S_ISDIR(sb.st_mode))
			return -EISDIR;
		if (!S_ISREG(sb.st_mode))
			return -EINVAL;
	}
	return np_read_fd(fd, max, out, outlen);
}

int np_fopen_read(const char *path, FILE **out)
{
	struct stat sb;
	FILE *f = fopen(path, "re");

	*out = NULL;
	if (!f)
		return -errno;
	if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
		fclose(f);
		return -EISDIR;
	}
	*out = f;
	return 0;
}

int np_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int replace_at(int dirfd, const char *name, const void *data,
		      size_t len, mode_t mode, bool durable)
{
	char tmp[PATH_MAX];
	int fd, r;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", name) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
				       O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	/* the mode asked, whatever the umask (the unit's is 0077) */
	r = fchmod(fd, mode) ? -errno : np_write_all(fd, data, len);
	if (r == 0 && durable && fsync(fd))
		r = -errno;
	if (close(fd) && r == 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, name))
		r = -errno;
	if (r) {
		unlinkat(dirfd, tmp, 0);
		return r;
	}
	if (!durable)
		return 0;
	/* The rename itself is durable once the directory is synced. */
	fd = dirfd == AT_FDCWD ? open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
			       : dup(dirfd);
	if (fd < 0)
		return -errno;
	r = fsync(fd) ? -errno : 0;
	close(fd);
	return r;
}

int np_write_atomic_at(int dirfd, const char *name, const void *data,
		       size_t len, mode_t mode)
{
	return replace_at(dirfd, name, data, len, mode, true);
}

int np_replace_at(int dirfd, const char *name, const void *data, size_t len,
		  mode_t mode)
{
	return replace_at(dirfd, name, data, len, mode, false);
}

int np_read_moved_at(int dirfd, int olddirfd, const char *name,
		     unsigned flags, size_t max, char **out, size_t *outlen,
		     bool *old)
{
	int r = np_read_at(dirfd, name, flags, max, out, outlen);

	*old = false;
	if (r != -ENOENT || olddirfd < 0)
		return r;
	r = np_read_at(olddirfd, name, flags, max, out, outlen);
	*old = r != -ENOENT;
	return r;
}

int np_finish_move_at(int dirfd, int olddirfd, const char *name,
		      const void *data, size_t len, mode_t mode, bool old,
		      bool *removing)
{
	int r;

	*removing = false;
	if (old && (r = np_write_atomic_at(dirfd, name, data, len, mode)))
		return r;
	*removing = true;
	return np_unlink_durable_at(olddirfd, name);
}

int np_unlink_durable_at(int dirfd, const char *name)
{
	struct stat sb;

	if (dirfd < 0)
		return 0;
	/* unlinkat(2) on a read-only file system is -EROFS even for a name
	 * that is not there */
	if (fstatat(dirfd, name, &sb, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (unlinkat(dirfd, name, 0) && errno != ENOENT)
		return -errno;
	return fsync(dirfd) ? -errno : 0;
}

DIR *np_opendir_at(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir;

	if (fd < 0)
		return NULL;
	if (!(dir = fdopendir(fd))) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return dir;
}

int np_mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];
	struct stat sb;

	if (!path || !*path)
		return -EINVAL;
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (stat(tmp, &sb))
		return -errno;
	return S_ISDIR(sb.st_mode) ? 0 : -ENOTDIR;
}
