// SPDX-License-Identifier: Apache-2.0
/*
 * cgroup v2 id -> path (see include/numaplace/cgroup_id.h).
 */
#include "numaplace/cgroup_id.h"
#include "numaplace/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FILEID_KERNFS 0xfe

int np_cgroup_path_strip(const char *mnt, const char *target, char *out,
			 size_t len)
{
	size_t m = strlen(mnt);
	const char *rest;
	int n;

	while (m > 1 && mnt[m - 1] == '/')
		m--;
	if (m == 1 && mnt[0] == '/')
		m = 0; /* cgroup2 mounted on "/": every target is inside */
	if (strncmp(target, mnt, m) || (target[m] && target[m] != '/'))
		return -EXDEV;
	rest = target[m] ? target + m : "/";
	n = snprintf(out, len, "%s", rest);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int np_cgroup_id_path(uint64_t id, const char *mnt, char *out, size_t len)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	char found[4096], link[64], target[4096];
	ssize_t n;
	int mfd, fd, r;

	if (id == NP_CGROUP_ROOT_ID) {
		r = snprintf(out, len, "/");
		return r < 0 || (size_t)r >= len ? -ENAMETOOLONG : 0;
	}
	if (!mnt) {
		r = np_cgroup2_mount_find(NULL, found, sizeof(found));
		if (r < 0)
			return r;
		mnt = found;
	}
	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return -errno;
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = sizeof(uint64_t);
	h.fh.handle_type = FILEID_KERNFS;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
	r = fd < 0 ? -errno : 0;
	close(mfd);
	if (r < 0)
		return r;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	if (n == 0 || (size_t)n >= sizeof(target) - 1)
		return -ENAMETOOLONG;
	target[n] = 0;
	/* a removed cgroup: its kernfs node may still resolve for a moment */
	if (strstr(target, " (deleted)"))
		return -ESTALE;
	return np_cgroup_path_strip(mnt, target, out, len);
}
