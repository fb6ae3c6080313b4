/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Files numaplaced trusts. What it reads from a spec file or its
 * configuration decides which workload gets which CPUs, and its state is
 * taken as its own record; so, as sudo does with sudoers and systemd with
 * its unit files, such a file is refused unless it is owned by root (or by
 * the user numaplaced runs as: an unprivileged test run) and writable by
 * nobody else, neither its group nor others. The same holds for the
 * directory that holds them: whoever may write it may put a file of their
 * own in place of one. A symbolic link is judged by the file it leads to
 * (what is read); the checks are made on the open file where there is one,
 * so that what is checked is what is read.
 */
#ifndef NUMAPLACE_BASIC_TRUST_H
#define NUMAPLACE_BASIC_TRUST_H

#include <stddef.h>
#include <sys/stat.h>

/*
 * 0 when sb (of path, a "what": "config", "spec file", "state file",
 * "spec directory", ...) is owned by root or by this process's user and
 * not writable by its group or others; else -EPERM with err saying which
 * and what to do, e.g.
 *   spec file /etc/numaplace/workloads.d/a.json: mode 0664 lets its group
 *   (gid 100) write it: numaplaced reads only files that root owns and
 *   only root can write (chmod go-w /etc/numaplace/workloads.d/a.json)
 */
int np_trust_stat(const struct stat *sb, const char *what, const char *path,
		  char *err, size_t errlen);
/* The same for an open file (fstat); -errno of fstat with err too. */
int np_trust_fd(int fd, const char *what, const char *path, char *err,
		size_t errlen);
/* The same for a path (stat: a symbolic link's target); -errno of stat
 * with err too (-ENOENT when it does not exist). */
int np_trust_path(const char *what, const char *path, char *err,
		  size_t errlen);

/* Read the regular file path (at most max bytes; into a malloc'd,
 * NUL-terminated *out, *outlen without the NUL, which may be NULL) once it
 * is trusted, checked on the open file. -errno with err "WHAT PATH: ...":
 * it cannot be opened, it is not a regular file (-EINVAL), it is not
 * trusted (-EPERM), it is longer than max (-EFBIG). */
int np_trust_read(const char *what, const char *path, size_t max, char **out,
		  size_t *outlen, char *err, size_t errlen);

#endif
