/* SPDX-License-Identifier: Apache-2.0 */
/* Host isolation (numaplace/hostiso.h): the handle, shared between
 * hostiso.c (the tree: plan, apply, restore) and hostiso_save.c (the
 * originals in hostiso.json). */
#ifndef NUMAPLACE_HOSTISO_INTERNAL_H
#define NUMAPLACE_HOSTISO_INTERNAL_H

#include "numaplace/hostiso.h"

#include <stddef.h>

/* An IRQ or a kernel thread and the text its affinity held first. */
struct hi_item {
	int id;                  /* IRQ number or pid */
	unsigned long long start; /* thread: start time (stat field 22) */
	char comm[32];           /* thread: its name, for the log */
	char *orig;              /* cpu list as read (heap) */
};

struct hi_list {
	int n, cap;
	struct hi_item *v;
};

struct np_hostiso {
	int rootfd;  /* "/" or the test root */
	int dirfd;   /* runtime_dir: hostiso.json */
	int oldfd;   /* state_dir (an older release's place), -1: none */
	bool fake;   /* a test root */
	char dir[512], old_dir[512];
	int (*set_affinity)(void *ctx, int pid, const np_cpuset *cpus);
	void *ctx;
	bool loaded; /* hostiso.json read (or found absent) */
	bool saved;  /* originals on disk */
	/* originals of the masks (heap), NULL: not changed */
	char *def_orig, *wq_orig;
	struct hi_list irqs, kts;
	/* the IRQs of /proc/irq at the first apply (saved as
	 * "irqs_present"); unknown in a file of an older numaplaced */
	int *present, npresent;
	bool present_known;
	np_cpuset isolated; /* last applied, recorded for the reader */
};

struct hi_item *hi_find(struct hi_list *l, int id);
/* Append (orig copied); NULL on ENOMEM. */
struct hi_item *hi_add(struct hi_list *l, int id, const char *orig);
/* Drop entries from n on. */
void hi_truncate(struct hi_list *l, int n);
/* Forget every original (memory only). */
void hi_forget(struct np_hostiso *h);

/* hostiso_save.c: write the originals (atomic, durable), remove the file */
int hi_save(struct np_hostiso *h, char *err, size_t errlen);
int hi_unlink(struct np_hostiso *h, char *err, size_t errlen);

#endif
