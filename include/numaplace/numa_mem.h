/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Where a cgroup's memory is: cgroup v2 memory.numa_stat (in bytes, unlike
 * v1's pages), and moving it with migrate_pages(2). No logging; 0 or a
 * negative errno, err names the file and line.
 */
#ifndef NUMAPLACE_NUMA_MEM_H
#define NUMAPLACE_NUMA_MEM_H

#include "numaplace/cpuset.h"

#include <stddef.h>
#include <stdint.h>

struct np_numa_stat {
	/* bytes per node; "resident" = anon + file, what numastat counts as
	 * a cgroup's memory on a node (kernel stacks, page tables and slab
	 * are the kernel's, and cannot be moved anyway) */
	uint64_t anon[NP_MAX_NUMA];
	uint64_t file[NP_MAX_NUMA];
	uint64_t resident[NP_MAX_NUMA];
	np_nodemask nodes; /* nodes that appeared in the file */
};

/* Parse the text of memory.numa_stat. Unknown keys are skipped (newer
 * kernels add keys); a malformed line is an error naming it. */
int np_numa_stat_parse(const char *text, struct np_numa_stat *out, char *err,
		       size_t errlen);
/* Read memory.numa_stat of the cgroup open at dirfd. -ENOENT when the
 * memory controller is not enabled for it. */
int np_numa_stat_read(int cgroup_dirfd, struct np_numa_stat *out, char *err,
		      size_t errlen);
/* Resident bytes on nodes outside `allowed`. */
uint64_t np_numa_stat_outside(const struct np_numa_stat *s,
			      np_nodemask allowed);

struct np_migrate_result {
	int pids_done;            /* migrate_pages() returned >= 0 */
	int pids_gone;            /* exited meanwhile (ESRCH) */
	long pages_not_moved;     /* sum of positive returns */
	int first_error;          /* negative errno of the first failure */
};

/*
 * Migrate the pages of every process listed in the cgroup's cgroup.procs
 * (that cgroup only, not its children) from the nodes in `from` to the
 * nodes in `to`, with migrate_pages(2). Returns 0 when every process was
 * handled (gone counts as handled), else the first error.
 */
int np_numa_migrate_cgroup(int cgroup_dirfd, np_nodemask from, np_nodemask to,
			   struct np_migrate_result *res, char *err,
			   size_t errlen);

#endif
