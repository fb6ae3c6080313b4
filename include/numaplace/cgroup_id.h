/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup v2 id -> path. The BPF programs record cgroup ids (the kernfs
 * inode of the cgroup directory, bpf_get_current_cgroup_id()); readers
 * name them by opening the id as a file handle on the cgroup2 mount
 * (open_by_handle_at, handle type FILEID_KERNFS, the 8-byte id) and reading
 * the fd's /proc/self/fd link. Needs CAP_DAC_READ_SEARCH; 0 or a negative
 * errno, no logging.
 */
#ifndef NUMAPLACE_CGROUP_ID_H
#define NUMAPLACE_CGROUP_ID_H

#include <stddef.h>
#include <stdint.h>

/* The id of the root of a cgroup v2 hierarchy (kernfs root inode). */
#define NP_CGROUP_ROOT_ID 1

/*
 * Strip the mount point MNT from the link target TARGET: "/sys/fs/cgroup"
 * and "/sys/fs/cgroup/a/b" give "/a/b", the mount itself gives "/". A
 * target outside MNT (also "/sys/fs/cgroupX") is -EXDEV. -ENAMETOOLONG.
 */
int np_cgroup_path_strip(const char *mnt, const char *target, char *out,
			 size_t len);

/*
 * The path of cgroup ID relative to the cgroup2 root ("/a/b"), on the mount
 * MNT (NULL: found with np_cgroup2_mount_find, numaplace/cgroup.h). The root id is "/" without
 * a lookup. -ESTALE: no such cgroup (removed); -EPERM: not privileged.
 */
int np_cgroup_id_path(uint64_t id, const char *mnt, char *out, size_t len);

#endif
