// SPDX-License-Identifier: Apache-2.0
/*
 * memory.numa_stat and page migration (see include/numaplace/numa_mem.h).
 */
#include "numaplace/numa_mem.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "basic/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* 64 nodes x ~40 keys x "N63=18446744073709551615 " is ~70 KB; 1 MiB is
 * far beyond any real memory.numa_stat. cgroup.procs: at most PID_MAX_LIMIT
 * (4194304) pids of up to 7 digits + newline. */
#define NUMA_STAT_MAX (1u << 20)
#define PROCS_MAX (40u << 20)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Decimal digits only (strtoull would take "-1", " 5" and "+5"). */
static int parse_u64(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;

	if (p == end || !is_digit(*p))
		return -EINVAL;
	for (; p < end && is_digit(*p); p++) {
		if (x > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -ERANGE;
		x = x * 10 + (uint64_t)(*p - '0');
	}
	*pp = p;
	*v = x;
	return 0;
}

/* Which arrays a key feeds: keys may feed a field and `kernel`. */
static void key_targets(struct np_numa_stat *out, const char *key, size_t klen,
			uint64_t **dst, uint64_t **kern)
{
	static const char *const kernel_keys[] = {
	    "kernel_stack",	"pagetables",	      "sec_pagetables",
	    "slab_reclaimable", "slab_unreclaimable",
	};
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
	    {"anon", offsetof(struct np_numa_stat, anon)},
	    {"file", offsetof(struct np_numa_stat, file)},
	    {"shmem", offsetof(struct np_numa_stat, shmem)},
	    {"anon_thp", offsetof(struct np_numa_stat, anon_thp)},
	};

	*dst = *kern = NULL;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strlen(fields[i].name) == klen &&
		    !memcmp(fields[i].name, key, klen))
			*dst = (uint64_t *)((char *)out + fields[i].off);
	for (size_t i = 0; i < sizeof(kernel_keys) / sizeof(kernel_keys[0]);
	     i++)
		if (strlen(kernel_keys[i]) == klen &&
		    !memcmp(kernel_keys[i], key, klen))
			*kern = out->kernel;
}

/* One line, [line, end): "anon N0=40960 N1=20480". */
static int parse_line(const char *line, const char *end, int lineno,
		      struct np_numa_stat *out, char *err, size_t errlen)
{
	const char *p = line, *key = line;
	uint64_t *dst, *kern;
	np_nodemask seen = 0;
	int klen, r;

	while (p < end && (is_digit(*p) || (*p >= 'a' && *p <= 'z') ||
			   (*p >= 'A' && *p <= 'Z') || *p == '_'))
		p++;
	klen = (int)(p - key);
	if (klen == 0 || klen > 64 || (p < end && !is_blank(*p))) {
		NP_ERR("memory.numa_stat line %d: expected \"KEY N0=BYTES ...\", "
		    "got \"%.*s\"",
		    lineno, (int)(end - line > 60 ? 60 : end - line), line);
		return -EINVAL;
	}
	key_targets(out, key, (size_t)klen, &dst, &kern);
	for (;;) {
		const char *f;
		uint64_t node, v;

		while (p < end && is_blank(*p))
			p++;
		if (p == end)
			break;
		f = p;
		if (*p != 'N') {
			NP_ERR("memory.numa_stat line %d (%.*s): expected "
			    "N<node>=, "
			    "got \"%.*s\"",
			    lineno, klen, key,
			    (int)(end - p > 20 ? 20 : end - p), p);
			return -EINVAL;
		}
		p++;
		r = parse_u64(&p, end, &node);
		if (r == 0 && node >= NP_MAX_NUMA) {
			NP_ERR("memory.numa_stat line %d (%.*s): node %llu is "
			    "beyond "
			    "the %d supported",
			    lineno, klen, key, (unsigned long long)node,
			    NP_MAX_NUMA);
			return -ERANGE;
		}
		if (r || p == end || *p != '=') {
			NP_ERR("memory.numa_stat line %d (%.*s): malformed node "
			    "in "
			    "\"%.*s\"",
			    lineno, klen, key,
			    (int)(end - f > 20 ? 20 : end - f), f);
			return r == -ERANGE ? -ERANGE : -EINVAL;
		}
		p++;
		r = parse_u64(&p, end, &v);
		if (r || (p < end && !is_blank(*p))) {
			NP_ERR("memory.numa_stat line %d (%.*s): %s value for "
			    "N%llu",
			    lineno, klen, key,
			    r == -ERANGE ? "out-of-range" : "malformed",
			    (unsigned long long)node);
			return r == -ERANGE ? -ERANGE : -EINVAL;
		}
		if (seen & NP_NODEMASK_BIT(node)) {
			NP_ERR("memory.numa_stat line %d (%.*s): N%llu appears "
			    "twice",
			    lineno, klen, key, (unsigned long long)node);
			return -EINVAL;
		}
		seen |= NP_NODEMASK_BIT(node);
		if (dst)
			dst[node] = v;
		if (kern)
			kern[node] = add_sat(kern[node], v);
	}
	if (!seen) {
		NP_ERR("memory.numa_stat line %d (%.*s): no N<node>=BYTES fields",
		    lineno, klen, key);
		return -EINVAL;
	}
	out->nodes |= seen;
	return 0;
}

int np_numa_stat_parse(const char *text, struct np_numa_stat *out, char *err,
		       size_t errlen)
{
	int lineno = 0, r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!text) {
		NP_ERR("memory.numa_stat: no text");
		return -EINVAL;
	}
	while (*text) {
		const char *nl = strchr(text, '\n');
		const char *end = nl ? nl : text + strlen(text);
		lineno++;
		if (end > text &&
		    (r = parse_line(text, end, lineno, out, err, errlen))) {
			memset(out, 0, sizeof(*out));
			return r;
		}
		text = nl ? nl + 1 : end;
	}
	for (int n = 0; n < NP_MAX_NUMA; n++)
		out->resident[n] = add_sat(out->anon[n], out->file[n]);
	return 0;
}

/*
 * The whole of a (cgroupfs) file, NUL-terminated, in a malloc'd buffer.
 * Sizes are unknown in advance (cgroupfs reports 0): np_read_at grows.
 */
static int read_all(int dirfd, const char *name, size_t max, char **out,
		    char *err, size_t errlen)
{
	size_t len;
	int r;

	*out = NULL;
	if (dirfd < 0) {
		NP_ERR("%s: no cgroup directory (fd %d)", name, dirfd);
		return -EBADF;
	}
	r = np_read_at(dirfd, name, 0, max, out, &len);
	if (r == -ENOENT && !strcmp(name, "memory.numa_stat"))
		NP_ERR("memory.numa_stat: not present (memory controller "
		       "not enabled for this cgroup: +memory in the "
		       "parent's cgroup.subtree_control)");
	else if (r == -EFBIG)
		NP_ERR("%s: larger than %zu bytes", name, max);
	else if (r == -ENOMEM)
		NP_ERR("%s: out of memory", name);
	else if (r)
		NP_ERR("%s: %s", name, strerror(-r));
	if (r)
		return r;
	if (strlen(*out) != len) {
		free(*out);
		*out = NULL;
		NP_ERR("%s: contains a NUL byte", name);
		return -EINVAL;
	}
	return 0;
}

int np_numa_stat_read(int dirfd, struct np_numa_stat *out, char *err,
		      size_t errlen)
{
	char *text;
	int r;

	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	r = read_all(dirfd, "memory.numa_stat", NUMA_STAT_MAX, &text, err,
		     errlen);
	if (r)
		return r;
	r = np_numa_stat_parse(text, out, err, errlen);
	free(text);
	return r;
}

uint64_t np_numa_stat_outside(const struct np_numa_stat *s, np_nodemask allowed)
{
	uint64_t sum = 0;
	for (int n = 0; n < NP_MAX_NUMA; n++)
		if (!np_nodemask_test(allowed, n))
			sum = add_sat(sum, s->resident[n]);
	return sum;
}

int np_numa_stat_format(const struct np_numa_stat *s, np_nodemask nodes,
			char *buf, size_t len)
{
	size_t at = 0;

	if (!buf || !len)
		return -ENOSPC;
	buf[0] = 0;
	NP_NODEMASK_FOREACH (n, nodes) {
		uint64_t kib =
		    s->resident[n] / 1024 + !!(s->resident[n] % 1024);
		int w;
		if (!s->resident[n])
			continue;
		w = snprintf(buf + at, len - at, "%sN%d=%llu KiB",
			     at ? ", " : "", n, (unsigned long long)kib);
		if (w < 0 || (size_t)w >= len - at) {
			buf[0] = 0;
			return -ENOSPC;
		}
		at += (size_t)w;
	}
	return (int)at;
}

/* cgroup.procs: one decimal pid per line. */
static int parse_pids(const char *text, int **pids, int *npids, char *err,
		      size_t errlen)
{
	size_t cap = 1;
	int n = 0;

	for (const char *p = text; *p; p++)
		cap += *p == '\n';
	*pids = malloc(cap * sizeof(**pids));
	if (!*pids) {
		NP_ERR("cgroup.procs: out of memory");
		return -ENOMEM;
	}
	for (const char *p = text; *p;) {
		const char *eol = strchr(p, '\n');
		const char *end = eol ? eol : p + strlen(p), *q = p;
		uint64_t v;
		if (end > p && (parse_u64(&q, end, &v) || q != end || v == 0 ||
				v > INT_MAX)) {
			NP_ERR("cgroup.procs: not a pid: \"%.*s\"",
			    (int)(end - p > 20 ? 20 : end - p), p);
			free(*pids);
			*pids = NULL;
			return -EINVAL;
		}
		if (end > p)
			(*pids)[n++] = (int)v;
		p = eol ? eol + 1 : end;
	}
	*npids = n;
	return 0;
}

#define LONG_BITS (8 * sizeof(unsigned long))
#define MASK_LONGS ((NP_MAX_NUMA + LONG_BITS - 1) / LONG_BITS)

static void to_kernel_mask(np_nodemask m, unsigned long *k)
{
	memset(k, 0, MASK_LONGS * sizeof(*k));
	NP_NODEMASK_FOREACH (n, m) {
		k[(size_t)n / LONG_BITS] |= 1UL << ((size_t)n % LONG_BITS);
	}
}

int np_numa_migrate_cgroup(int dirfd, np_nodemask from, np_nodemask to,
			   struct np_migrate_result *res, char *err,
			   size_t errlen)
{
	/*
	 * maxnode: the kernel's get_nodes() starts with --maxnode and then
	 * reads that many bits, so passing the bit count itself would drop
	 * the highest node (libnuma passes size + 1 for the same reason).
	 * NP_MAX_NUMA + 1 reads exactly our MASK_LONGS words. Kernels built
	 * with fewer nodes (MAX_NUMNODES < 64) check that the bits beyond
	 * are zero: they are, unless a caller names a node such a kernel
	 * cannot have (-EINVAL, rightly).
	 */
	unsigned long old_nodes[MASK_LONGS], new_nodes[MASK_LONGS];
	const unsigned long maxnode = NP_MAX_NUMA + 1;
	char *text;
	int *pids, npids, r;

	if (!res)
		return -EINVAL;
	memset(res, 0, sizeof(*res));
	if (!to) {
		NP_ERR("migrate: no target node");
		return -EINVAL;
	}
	r = read_all(dirfd, "cgroup.procs", PROCS_MAX, &text, err, errlen);
	if (r)
		return r;
	r = parse_pids(text, &pids, &npids, err, errlen);
	free(text);
	if (r)
		return r;
	to_kernel_mask(from, old_nodes);
	to_kernel_mask(to, new_nodes);
	for (int i = 0; i < npids; i++) {
		long ret = syscall(SYS_migrate_pages, pids[i], maxnode,
				   old_nodes, new_nodes);
		if (ret >= 0) {
			res->pids_done++;
			res->pages_not_moved += ret;
		} else if (errno == ESRCH) {
			res->pids_gone++;
		} else if (!res->first_error) {
			res->first_error = -errno;
			NP_ERR("migrate_pages(pid %d): %s", pids[i],
			    strerror(errno));
		}
	}
	free(pids);
	return res->first_error;
}

int np_numa_balancing_parse(const char *text)
{
	const char *p = text, *end;
	uint64_t v;

	if (!text)
		return -EINVAL;
	end = text + strlen(text);
	if (parse_u64(&p, end, &v) || v > INT_MAX)
		return -EINVAL;
	if (*p == '\n')
		p++;
	return *p ? -EINVAL : (int)v;
}

int np_numa_balancing_mode(void)
{
	_cleanup_free_ char *buf = NULL;
	int r;

	r = np_read_at(AT_FDCWD, "/proc/sys/kernel/numa_balancing", 0, 31,
		       &buf, NULL);
	return r ? r : np_numa_balancing_parse(buf);
}
