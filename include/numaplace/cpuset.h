/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fixed-width CPU bitmap and NUMA node mask.
 *
 * Fixed width (NP_MAX_CPUS bits) so that the same layout can be copied into
 * BPF maps and checkpoints without allocation; 4096 CPUs covers every x86
 * server shipping today.
 */
#ifndef NUMAPLACE_CPUSET_H
#define NUMAPLACE_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NP_MAX_CPUS 4096
#define NP_CPUSET_WORDS (NP_MAX_CPUS / 64)
#define NP_MAX_NUMA 64

typedef struct np_cpuset {
	uint64_t w[NP_CPUSET_WORDS];
} np_cpuset;

/* The empty set, shared and read-only: what a pointer to a set that is
 * often empty points at when it is, so that it costs no heap (a set is
 * 512 bytes) and readers need no NULL check (np_cpuset_dup). */
extern const np_cpuset np_cpuset_empty_set;
/* *out = a heap copy of s (the caller's, freed by np_cpuset_drop), or
 * &np_cpuset_empty_set when s is empty (nothing allocated); -ENOMEM
 * (*out unchanged). */
int np_cpuset_dup(const np_cpuset **out, const np_cpuset *s);
/* Free a set from np_cpuset_dup: NULL and the empty set are not freed. */
void np_cpuset_drop(const np_cpuset *s);

/* Bit i set = NUMA node with OS id i. */
typedef uint64_t np_nodemask;

void np_cpuset_zero(np_cpuset *s);
void np_cpuset_set(np_cpuset *s, int cpu);
void np_cpuset_clear(np_cpuset *s, int cpu);
bool np_cpuset_test(const np_cpuset *s, int cpu);
int np_cpuset_count(const np_cpuset *s);
bool np_cpuset_empty(const np_cpuset *s);
bool np_cpuset_equal(const np_cpuset *a, const np_cpuset *b);
bool np_cpuset_subset(const np_cpuset *a, const np_cpuset *b); /* a ⊆ b */
bool np_cpuset_intersects(const np_cpuset *a, const np_cpuset *b);
/* dst may alias a or b. */
void np_cpuset_and(np_cpuset *dst, const np_cpuset *a, const np_cpuset *b);
void np_cpuset_or(np_cpuset *dst, const np_cpuset *a, const np_cpuset *b);
void np_cpuset_andnot(np_cpuset *dst, const np_cpuset *a, const np_cpuset *b);
int np_cpuset_count_and(const np_cpuset *a, const np_cpuset *b);
/* The same over the first nwords words only: for sets known to hold no
 * CPU past them (a topology's sets: np_cpuset_words(t->max_cpu)). */
int np_cpuset_count_and_n(const np_cpuset *a, const np_cpuset *b,
			  int nwords);
bool np_cpuset_intersects_n(const np_cpuset *a, const np_cpuset *b,
			    int nwords);
/* Lowest set CPU >= from, or -1. */
int np_cpuset_next(const np_cpuset *s, int from);
#define np_cpuset_first(s) np_cpuset_next((s), 0)
#define NP_CPUSET_FOREACH(cpu, s)                                              \
	for (int cpu = np_cpuset_next((s), 0); cpu >= 0;                       \
	     cpu = np_cpuset_next((s), cpu + 1))

/*
 * Parse a Linux cpu-list ("0-3,8,10-11", "" = empty; whitespace around the
 * whole string and a trailing newline are accepted, as sysfs prints them).
 * On error returns -EINVAL (-ERANGE for a CPU >= NP_MAX_CPUS) and, when err
 * is not NULL, writes a message naming the offending position.
 */
int np_cpuset_parse(np_cpuset *s, const char *list, char *err, size_t errlen);
/* Format as a cpu-list; returns the length, or -ENOSPC if buf is too small. */
int np_cpuset_format(const np_cpuset *s, char *buf, size_t len);
/* Convenience: malloc'd cpu-list string, NULL on ENOMEM. */
char *np_cpuset_str(const np_cpuset *s);
/*
 * A hex CPU mask as /proc and /sys print them (/proc/irq/default_smp_affinity,
 * /sys/devices/virtual/workqueue/cpumask): 32-bit groups of at most 8 hex
 * digits separated by commas, most significant first ("ff",
 * "00000001,00000000"); whitespace around it is accepted. -EINVAL (or
 * -ERANGE past NP_MAX_CPUS) with a message naming the position.
 */
int np_cpuset_parse_mask(np_cpuset *s, const char *mask, char *err,
			 size_t errlen);
/* Format as such a mask, nbits wide (widened to the highest set CPU), the
 * first group only as wide as it needs: 8 bits "ff", 40 bits
 * "00,ffffffff". Returns the length, or -ENOSPC. */
int np_cpuset_format_mask(const np_cpuset *s, int nbits, char *buf,
			  size_t len);

/*
 * Bits in a word. Without -mpopcnt, __builtin_popcountll is a call into
 * libgcc; this branch-free SWAR count is inlined.
 */
static inline int np_popcount64(uint64_t m)
{
#ifdef __POPCNT__
	return __builtin_popcountll(m);
#else
	m = m - ((m >> 1) & 0x5555555555555555ull);
	m = (m & 0x3333333333333333ull) + ((m >> 2) & 0x3333333333333333ull);
	m = (m + (m >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (int)((m * 0x0101010101010101ull) >> 56);
#endif
}

/* Words that hold CPUs below max_cpu: set operations on sets of a
 * topology's CPUs need look no further. */
static inline int np_cpuset_words(int max_cpu)
{
	int n = (max_cpu + 63) / 64;
	return n < 1 ? 1 : n > NP_CPUSET_WORDS ? NP_CPUSET_WORDS : n;
}

static inline int np_nodemask_count(np_nodemask m)
{
	return np_popcount64(m);
}
static inline bool np_nodemask_test(np_nodemask m, int node)
{
	return node >= 0 && node < NP_MAX_NUMA && (m >> node) & 1;
}
#define NP_NODEMASK_BIT(n) ((np_nodemask)1 << (n))
#define NP_NODEMASK_FOREACH(n, m)                                              \
	for (np_nodemask _m##n = (m); _m##n; _m##n &= _m##n - 1)               \
		for (int n = __builtin_ctzll(_m##n), _o##n = 1; _o##n;         \
		     _o##n = 0)
/* Node list "0-1,3"; returns length or -ENOSPC. */
int np_nodemask_format(np_nodemask m, char *buf, size_t len);
/* Parse a node list; node ids must be < 64. */
int np_nodemask_parse(np_nodemask *m, const char *list, char *err,
		      size_t errlen);

/*
 * Sets kept once each, found by content: where thousands of cgroups hold
 * or get the same few sets (a shared pool), a pointer each instead of a
 * 512-byte copy each.  Zero-initialise; the pointers np_cpuset_intern()
 * gives stay valid until np_cpuset_pool_free() (or, for the sets taken,
 * until they are freed).
 */
struct np_cpuset_pool {
	np_cpuset **sets; /* n of them, each on the heap */
	int n, alloc;
	int *ix, cap; /* open addressing over sets: index + 1, 0 free */
};
/* The pool's set equal to s (a copy of s added first if none): NULL
 * without memory. */
const np_cpuset *np_cpuset_intern(struct np_cpuset_pool *p,
				  const np_cpuset *s);
/* Hand the sets over (the caller frees each and the array; *n of them);
 * the pool is empty after. */
np_cpuset **np_cpuset_pool_take(struct np_cpuset_pool *p, int *n);
void np_cpuset_pool_free(struct np_cpuset_pool *p);

#endif
