/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Small file I/O helpers (after systemd's src/basic/fileio.c): read a whole
 * file with a size limit, write a file atomically and durably, mkdir -p.
 * Each returns 0 (or a length) or a negative errno; the caller, which knows
 * what the file is, builds the message (see numaplace/error.h).
 */
#ifndef NUMAPLACE_BASIC_FILEIO_H
#define NUMAPLACE_BASIC_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <dirent.h>
#include <stdio.h>
#include <sys/types.h>

/* Flags for np_read_at. */
#define NP_READ_NOFOLLOW 0x1 /* refuse a symbolic link (-ELOOP) */
#define NP_READ_REGULAR 0x2  /* refuse anything but a regular file (-EINVAL) */

/*
 * Read fd to EOF into a malloc'd, NUL-terminated buffer (*out; *outlen
 * without the NUL, outlen may be NULL). Works on files whose size is not
 * known in advance (cgroupfs, procfs). More than max bytes: -EFBIG.
 */
int np_read_fd(int fd, size_t max, char **out, size_t *outlen);
/* The same for name relative to dirfd (AT_FDCWD, or an absolute name). */
int np_read_at(int dirfd, const char *name, unsigned flags, size_t max,
	       char **out, size_t *outlen);

/*
 * fopen(path, "re") for a file to be read whole (a JSON document): a
 * directory is -EISDIR, where fopen opens it and the first read fails, so
 * that the caller says "is a directory", not that the content is wrong.
 * 0 with *out open, or a negative errno.
 */
int np_fopen_read(const char *path, FILE **out);

/* Write all of buf to fd (retrying short writes and EINTR). */
int np_write_all(int fd, const void *buf, size_t len);

/*
 * Replace name in dirfd with data atomically: write "name.tmp", fsync it,
 * rename it over name, fsync the directory. After 0 the new content is
 * durable; on an error the old file is untouched (and no .tmp is left).
 * The file has mode exactly, whatever the umask.
 */
int np_write_atomic_at(int dirfd, const char *name, const void *data,
		       size_t len, mode_t mode);

/* The same without the fsyncs: atomic (a reader sees the old or the new
 * content, never a part) but not durable, for files that are made again
 * after a crash (e.g. in /run). */
int np_replace_at(int dirfd, const char *name, const void *data, size_t len,
		  mode_t mode);

/*
 * A file that moved from olddirfd to dirfd (a record an older release
 * kept elsewhere): name is read from dirfd (np_read_at, flags and max
 * alike) and, when it is not there, from olddirfd (-1: none): *old is
 * then true, and what was read, or the error, is olddirfd's. -ENOENT when
 * it is in neither.
 */
int np_read_moved_at(int dirfd, int olddirfd, const char *name,
		     unsigned flags, size_t max, char **out, size_t *outlen,
		     bool *old);

/*
 * The move's end, once what np_read_moved_at read is found good: read
 * from olddirfd (old), data is written to dirfd (np_write_atomic_at,
 * mode), then name removed from olddirfd; read from dirfd, a copy left in
 * olddirfd (stale) is removed. 0, or -errno with *removing saying which
 * step failed (a failed removal leaves dirfd's written: the next call
 * finds it there).
 */
int np_finish_move_at(int dirfd, int olddirfd, const char *name,
		      const void *data, size_t len, mode_t mode, bool old,
		      bool *removing);

/* Remove name from dirfd durably (the directory synced after). One that
 * is not there, or dirfd -1, is 0 and nothing is written: a read-only
 * file system without it is no error. */
int np_unlink_durable_at(int dirfd, const char *name);

/* The directory path names relative to dirfd ("." for dirfd itself), open
 * for readdir with its own position; NULL with errno set. */
DIR *np_opendir_at(int dirfd, const char *path);

/* mkdir -p: parents get 0755, the last component mode. An existing
 * directory is fine; an existing non-directory is -ENOTDIR. */
int np_mkdir_p(const char *path, mode_t mode);

#endif
