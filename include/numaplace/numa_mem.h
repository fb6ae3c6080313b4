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

/*
 * Bytes per node (index = OS node id), from memory.numa_stat.
 *
 * "resident" = anon + file. That is the cgroup's user memory: the pages its
 * cpuset.mems governs and that migrate_pages(2) or a cpuset.mems change can
 * move. The other keys either are parts of these two (shmem, file_mapped,
 * file_dirty, file_writeback, file_thp, shmem_thp are in file; anon_thp is
 * in anon; the LRU lists split anon + file again) or are the kernel's own
 * memory (kernel_stack, pagetables, sec_pagetables, slab_*), which no
 * userspace policy moves; adding them would count pages twice or flag
 * memory nobody can fix. swapcached is left out too: it overlaps anon
 * (swap-cache pages still mapped are in anon). Kernel memory is kept apart
 * in `kernel` for reporting.
 */
struct np_numa_stat {
	uint64_t anon[NP_MAX_NUMA];  /* anonymous memory (incl. anon_thp) */
	uint64_t file[NP_MAX_NUMA];  /* page cache (incl. shmem/tmpfs) */
	uint64_t shmem[NP_MAX_NUMA]; /* tmpfs and shared anonymous; in file */
	uint64_t anon_thp[NP_MAX_NUMA]; /* transparent huge pages; in anon */
	/* kernel_stack + pagetables + sec_pagetables + slab_reclaimable +
	 * slab_unreclaimable (keys a kernel does not print count as 0) */
	uint64_t kernel[NP_MAX_NUMA];
	uint64_t resident[NP_MAX_NUMA]; /* anon + file (saturating) */
	np_nodemask nodes; /* nodes that appeared in the file, under any key */
};

/*
 * Parse the text of memory.numa_stat: lines "KEY N<node>=<bytes> ...".
 * Unknown keys are skipped (newer kernels add keys), but their fields must
 * still be well-formed. Empty text, empty lines and a missing final newline
 * are accepted. A malformed line (no N<node>= fields, a value that is not
 * a decimal number, a node written twice on one line) is -EINVAL, a node id
 * >= NP_MAX_NUMA or a value beyond 64 bits -ERANGE; err then names the line
 * number and key, and *out is all zero.
 */
int np_numa_stat_parse(const char *text, struct np_numa_stat *out, char *err,
		       size_t errlen);
/* Read memory.numa_stat of the cgroup open at cgroup_dirfd (a directory
 * fd). -ENOENT when the memory controller is not enabled for it (err says
 * so); -EFBIG beyond 1 MiB. */
int np_numa_stat_read(int cgroup_dirfd, struct np_numa_stat *out, char *err,
		      size_t errlen);
/* Resident bytes on nodes outside `allowed` (saturating). */
uint64_t np_numa_stat_outside(const struct np_numa_stat *s,
			      np_nodemask allowed);
/*
 * Per-node breakdown for reports: the resident bytes of each node in
 * `nodes` that has any, as "N1=28 KiB, N3=4096 KiB" (KiB rounded up, so
 * that a non-zero amount never prints as 0). Nothing resident gives "".
 * Returns the length, or -ENOSPC when buf is too small (buf then holds "").
 */
int np_numa_stat_format(const struct np_numa_stat *s, np_nodemask nodes,
			char *buf, size_t len);

struct np_migrate_result {
	int pids_done;	      /* migrate_pages() returned >= 0 */
	int pids_gone;	      /* exited meanwhile (ESRCH) */
	long pages_not_moved; /* sum of positive returns */
	int first_error;      /* negative errno of the first failure */
};

/*
 * Migrate the pages of every process listed in the cgroup's cgroup.procs
 * (that cgroup only, not its children: a caller wanting a subtree walks it)
 * from the nodes in `from` to the nodes in `to`, with migrate_pages(2).
 * cgroup.procs is read and validated whole before anything moves. A process
 * that fails does not stop the others. Returns 0 when every process was
 * handled (gone counts as handled), else the first error (also in
 * res->first_error, with err naming the pid). `to` must not be empty.
 * Moving another user's process needs CAP_SYS_NICE.
 */
int np_numa_migrate_cgroup(int cgroup_dirfd, np_nodemask from, np_nodemask to,
			   struct np_migrate_result *res, char *err,
			   size_t errlen);

/*
 * kernel.numa_balancing: 0 off, 1 normal (hinting faults, task and page
 * placement), 2 memory tiering, 3 both (the kernel's bit values). Returns
 * the mode, or a negative errno when /proc/sys/kernel/numa_balancing
 * cannot be read (-ENOENT: kernel without CONFIG_NUMA_BALANCING) or holds
 * something else (-EINVAL).
 */
int np_numa_balancing_mode(void);
/* The same from the file's text ("1\n"); for tests and callers that read
 * the file themselves. */
int np_numa_balancing_parse(const char *text);

#endif
