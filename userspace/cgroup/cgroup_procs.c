// SPDX-License-Identifier: Apache-2.0
/* Moving a process into a cgroup below the managed parent (cgroup.procs). */
#include "cgroup_internal.h"
#include "numaplace/error.h"

#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

int np_cgroup_move_pid(const struct np_cgroup_root *root, const char *cgroup,
		       pid_t pid, bool create, char *err, size_t errlen)
{
	char disp[NP_CGROUP_PATH_MAX], val[32];
	int fd, r;

	if (strchr(cgroup, '/') || !cgroup[0] || !strcmp(cgroup, ".") ||
	    !strcmp(cgroup, ".."))
		return np_errf(err, errlen, -EINVAL,
			       "\"%s\": a direct child of the managed parent "
			       "is expected",
			       cgroup);
	cg_display(root, cgroup, disp, sizeof(disp));
	if (create && mkdirat(root->parent_fd, cgroup, 0755) && errno != EEXIST)
		return np_errno(err, errlen, -errno, "mkdir %s", disp);
	fd = openat(root->parent_fd, cgroup,
		    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return np_errno(err, errlen, -errno, "cgroup %s", disp);
	snprintf(val, sizeof(val), "%d", (int)pid);
	r = cg_write(root, fd, cgroup, disp, "cgroup.procs", val, err, errlen);
	close(fd);
	return r;
}
