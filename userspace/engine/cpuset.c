// SPDX-License-Identifier: Apache-2.0
/* CPU bitmap and NUMA node mask: set algebra and Linux list format. */
#include "numaplace/cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const np_cpuset np_cpuset_empty_set;

int np_cpuset_dup(const np_cpuset **out, const np_cpuset *s)
{
	np_cpuset *p;

	if (np_cpuset_empty(s)) {
		*out = &np_cpuset_empty_set;
		return 0;
	}
	if (!(p = malloc(sizeof(*p))))
		return -ENOMEM;
	*p = *s;
	*out = p;
	return 0;
}

void np_cpuset_drop(const np_cpuset *s)
{
	if (s != &np_cpuset_empty_set)
		free((void *)s);
}

void np_cpuset_zero(np_cpuset *s)
{
	memset(s, 0, sizeof(*s));
}

void np_cpuset_set(np_cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < NP_MAX_CPUS)
		s->w[cpu / 64] |= (uint64_t)1 << (cpu % 64);
}

void np_cpuset_clear(np_cpuset *s, int cpu)
{
	if (cpu >= 0 && cpu < NP_MAX_CPUS)
		s->w[cpu / 64] &= ~((uint64_t)1 << (cpu % 64));
}

bool np_cpuset_test(const np_cpuset *s, int cpu)
{
	if (cpu < 0 || cpu >= NP_MAX_CPUS)
		return false;
	return (s->w[cpu / 64] >> (cpu % 64)) & 1;
}

/* Counting skips the zero words (those past a machine's CPUs): 64 SWAR
 * counts per 4096-bit set otherwise. */
int np_cpuset_count(const np_cpuset *s)
{
	int n = 0;
	for (int i = 0; i < NP_CPUSET_WORDS; i++)
		if (s->w[i])
			n += np_popcount64(s->w[i]);
	return n;
}

bool np_cpuset_empty(const np_cpuset *s)
{
	for (int i = 0; i < NP_CPUSET_WORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

bool np_cpuset_equal(const np_cpuset *a, const np_cpuset *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

bool np_cpuset_subset(const np_cpuset *a, const np_cpuset *b)
{
	for (int i = 0; i < NP_CPUSET_WORDS; i++)
		if (a->w[i] & ~b->w[i])
			return false;
	return true;
}

bool np_cpuset_intersects(const np_cpuset *a, const np_cpuset *b)
{
	for (int i = 0; i < NP_CPUSET_WORDS; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

void np_cpuset_and(np_cpuset *dst, const np_cpuset *a, const np_cpuset *b)
{
	for (int i = 0; i < NP_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void np_cpuset_or(np_cpuset *dst, const np_cpuset *a, const np_cpuset *b)
{
	for (int i = 0; i < NP_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

void np_cpuset_andnot(np_cpuset *dst, const np_cpuset *a, const np_cpuset *b)
{
	for (int i = 0; i < NP_CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

int np_cpuset_count_and(const np_cpuset *a, const np_cpuset *b)
{
	int n = 0;
	for (int i = 0; i < NP_CPUSET_WORDS; i++) {
		uint64_t w = a->w[i] & b->w[i];
		if (w)
			n += np_popcount64(w);
	}
	return n;
}

int np_cpuset_count_and_n(const np_cpuset *a, const np_cpuset *b,
			  int nwords)
{
	int n = 0;
	if (nwords > NP_CPUSET_WORDS)
		nwords = NP_CPUSET_WORDS;
	for (int i = 0; i < nwords; i++)
		n += np_popcount64(a->w[i] & b->w[i]);
	return n;
}

bool np_cpuset_intersects_n(const np_cpuset *a, const np_cpuset *b,
			    int nwords)
{
	if (nwords > NP_CPUSET_WORDS)
		nwords = NP_CPUSET_WORDS;
	for (int i = 0; i < nwords; i++)
		if (a->w[i] & b->w[i])
			return true;
	return false;
}

int np_cpuset_next(const np_cpuset *s, int from)
{
	if (from < 0)
		from = 0;
	for (int i = from / 64; i < NP_CPUSET_WORDS; i++) {
		uint64_t w = s->w[i];
		if (i == from / 64)
			w &= ~(uint64_t)0 << (from % 64);
		if (w)
			return i * 64 + __builtin_ctzll(w);
	}
	return -1;
}

static void seterr(char *err, size_t errlen, const char *list, size_t pos,
		   const char *what)
{
	if (!err || !errlen)
		return;
	if (list[pos])
		snprintf(err, errlen, "%s at position %zu ('%c') in \"%s\"",
			 what, pos + 1, list[pos], list);
	else
		snprintf(err, errlen, "%s at end of \"%s\"", what, list);
}

/* Parse one decimal id at *pos; strict: digits only, no sign, no overflow. */
static int parse_id(const char *list, size_t *pos, long limit, long *out,
		    char *err, size_t errlen)
{
	size_t p = *pos;
	long v = 0;

	if (!isdigit((unsigned char)list[p])) {
		seterr(err, errlen, list, p, "expected a number");
		return -EINVAL;
	}
	while (isdigit((unsigned char)list[p])) {
		v = v * 10 + (list[p] - '0');
		if (v >= limit) {
			seterr(err, errlen, list, *pos, "id out of range");
			if (err && errlen) {
				size_t l = strlen(err);
				snprintf(err + l, errlen - l, " (maximum %ld)",
					 limit - 1);
			}
			return -ERANGE;
		}
		p++;
	}
	*pos = p;
	*out = v;
	return 0;
}

/* Shared list grammar: item (',' item)*, item = N | N '-' M with N <= M. */
static int parse_list(const char *list, long limit,
		      void (*add)(void *ctx, long a, long b), void *ctx,
		      char *err, size_t errlen)
{
	size_t pos = 0, end;
	int r;

	if (!list) {
		seterr(err, errlen, "", 0, "missing list");
		return -EINVAL;
	}
	while (isspace((unsigned char)list[pos]))
		pos++;
	end = strlen(list);
	while (end > pos && isspace((unsigned char)list[end - 1]))
		end--;
	if (pos == end)
		return 0;
	for (;;) {
		long a, b;
		r = parse_id(list, &pos, limit, &a, err, errlen);
		if (r)
			return r;
		b = a;
		if (list[pos] == '-') {
			size_t start = ++pos;
			r = parse_id(list, &pos, limit, &b, err, errlen);
			if (r)
				return r;
			if (b < a) {
				seterr(err, errlen, list, start,
				       "range end below range start");
				return -EINVAL;
			}
		}
		add(ctx, a, b);
		if (pos == end)
			return 0;
		if (list[pos] != ',') {
			seterr(err, errlen, list, pos,
			       "unexpected character (expected ',' or '-')");
			return -EINVAL;
		}
		pos++;
	}
}

/* ids a..b (checked below the limit), a word at a time */
static void add_cpu(void *ctx, long a, long b)
{
	np_cpuset *s = ctx;

	while (a <= b) {
		long w = a / 64, hi = w * 64 + 63 < b ? w * 64 + 63 : b;
		unsigned n = (unsigned)(hi - a + 1);
		uint64_t bits = n == 64 ? ~(uint64_t)0 : (((uint64_t)1 << n) - 1);
		s->w[w] |= bits << (a % 64);
		a = hi + 1;
	}
}

int np_cpuset_parse(np_cpuset *s, const char *list, char *err, size_t errlen)
{
	np_cpuset tmp;
	int r;

	np_cpuset_zero(&tmp);
	r = parse_list(list, NP_MAX_CPUS, add_cpu, &tmp, err, errlen);
	if (r == 0)
		*s = tmp;
	return r;
}

static void add_node(void *ctx, long a, long b)
{
	for (long id = a; id <= b; id++)
		*(np_nodemask *)ctx |= NP_NODEMASK_BIT(id);
}

int np_nodemask_parse(np_nodemask *m, const char *list, char *err,
		      size_t errlen)
{
	np_nodemask tmp = 0;
	int r = parse_list(list, NP_MAX_NUMA, add_node, &tmp, err, errlen);

	if (r == 0)
		*m = tmp;
	return r;
}

/* Emit ranges of consecutive ids returned by next(); shared by both types. */
static int format_ranges(int (*next)(const void *, int), const void *set,
			 char *buf, size_t len)
{
	size_t off = 0;
	int a = next(set, 0);

	if (len == 0)
		return -ENOSPC;
	buf[0] = '\0';
	while (a >= 0) {
		int b = a, n;
		while (next(set, b + 1) == b + 1)
			b++;
		if (b == a)
			n = snprintf(buf + off, len - off, "%s%d",
				     off ? "," : "", a);
		else
			n = snprintf(buf + off, len - off, "%s%d-%d",
				     off ? "," : "", a, b);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
		a = next(set, b + 1);
	}
	return (int)off;
}

static int next_cpu(const void *set, int from)
{
	return np_cpuset_next(set, from);
}

static int next_node(const void *set, int from)
{
	np_nodemask m = *(const np_nodemask *)set;
	if (from >= NP_MAX_NUMA)
		return -1;
	m &= ~(np_nodemask)0 << from;
	return m ? __builtin_ctzll(m) : -1;
}

int np_cpuset_format(const np_cpuset *s, char *buf, size_t len)
{
	return format_ranges(next_cpu, s, buf, len);
}

int np_nodemask_format(np_nodemask m, char *buf, size_t len)
{
	return format_ranges(next_node, &m, buf, len);
}

char *np_cpuset_str(const np_cpuset *s)
{
	/* Worst case "0,2,4,...": 2048 ids of up to 4 digits + commas. */
	size_t len = 12 * 1024;
	char *buf = malloc(len);

	if (buf && np_cpuset_format(s, buf, len) < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

int np_cpuset_parse_mask(np_cpuset *s, const char *mask, char *err,
			 size_t errlen)
{
	size_t pos = 0, end, ngroups = 1;
	np_cpuset tmp;
	int group;

	if (!mask) {
		seterr(err, errlen, "", 0, "missing mask");
		return -EINVAL;
	}
	while (isspace((unsigned char)mask[pos]))
		pos++;
	end = strlen(mask);
	while (end > pos && isspace((unsigned char)mask[end - 1]))
		end--;
	if (pos == end) {
		seterr(err, errlen, mask, pos, "empty mask");
		return -EINVAL;
	}
	for (size_t i = pos; i < end; i++)
		ngroups += mask[i] == ',';
	np_cpuset_zero(&tmp);
	group = (int)ngroups - 1; /* the first group is the highest */
	while (pos < end) {
		size_t start = pos;
		uint32_t v = 0;
		while (pos < end && isxdigit((unsigned char)mask[pos])) {
			int c = tolower((unsigned char)mask[pos]);
			v = v << 4 | (uint32_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
			pos++;
		}
		if (pos == start || pos - start > 8 ||
		    (pos < end && mask[pos] != ',') ||
		    (mask[pos] == ',' && pos + 1 == end)) {
			seterr(err, errlen, mask, pos - start > 8 ? start + 8 : pos,
			       "expected groups of 1 to 8 hex digits separated "
			       "by ','");
			return -EINVAL;
		}
		for (int b = 0; b < 32; b++) {
			if (!(v >> b & 1))
				continue;
			if (group * 32 + b >= NP_MAX_CPUS) {
				seterr(err, errlen, mask, start, "CPU out of range");
				return -ERANGE;
			}
			np_cpuset_set(&tmp, group * 32 + b);
		}
		group--;
		pos += pos < end; /* the ',' */
	}
	*s = tmp;
	return 0;
}

int np_cpuset_format_mask(const np_cpuset *s, int nbits, char *buf,
			  size_t len)
{
	size_t off = 0;
	int hi = -1, groups;

	for (int cpu = np_cpuset_first(s); cpu >= 0; cpu = np_cpuset_next(s, cpu + 1))
		hi = cpu;
	if (nbits < hi + 1)
		nbits = hi + 1;
	if (nbits < 1)
		nbits = 1;
	groups = (nbits + 31) / 32;
	for (int g = groups - 1; g >= 0; g--) {
		uint32_t v = (uint32_t)(s->w[g / 2] >> (g % 2 * 32));
		int digits = 8, n;
		if (g == groups - 1 && nbits - g * 32 < 32)
			digits = (nbits - g * 32 + 3) / 4;
		n = snprintf(buf + off, len - off, "%s%0*x",
			     g == groups - 1 ? "" : ",", digits, v);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
	}
	return (int)off;
}

/* ---- np_cpuset_pool ---- */

/* FNV-1a over the words up to the last one with a CPU. */
static uint64_t set_hash(const np_cpuset *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	int n = NP_CPUSET_WORDS;

	while (n > 0 && !s->w[n - 1])
		n--;
	for (int k = 0; k < n; k++) {
		h ^= s->w[k];
		h *= 0x100000001b3ULL;
	}
	return h ^ (h >> 29);
}

/* Room for one more set: the array, and the index at most half full. */
static int pool_grow(struct np_cpuset_pool *p)
{
	if (p->n == p->alloc) {
		int cap = p->alloc ? p->alloc * 2 : 16;
		np_cpuset **ns = realloc(p->sets, sizeof(*ns) * (size_t)cap);

		if (!ns)
			return -ENOMEM;
		p->sets = ns;
		p->alloc = cap;
	}
	if (2 * (p->n + 1) > p->cap) {
		int cap = p->cap ? p->cap * 2 : 64;
		int *ix = calloc((size_t)cap, sizeof(*ix));

		if (!ix)
			return -ENOMEM;
		for (int k = 0; k < p->n; k++) {
			size_t at = set_hash(p->sets[k]) & (size_t)(cap - 1);

			while (ix[at])
				at = (at + 1) & (size_t)(cap - 1);
			ix[at] = k + 1;
		}
		free(p->ix);
		p->ix = ix;
		p->cap = cap;
	}
	return 0;
}

const np_cpuset *np_cpuset_intern(struct np_cpuset_pool *p,
				  const np_cpuset *s)
{
	np_cpuset *copy;
	size_t at;

	if (pool_grow(p))
		return NULL;
	at = set_hash(s) & (size_t)(p->cap - 1);
	for (; p->ix[at]; at = (at + 1) & (size_t)(p->cap - 1))
		if (np_cpuset_equal(p->sets[p->ix[at] - 1], s))
			return p->sets[p->ix[at] - 1];
	if (!(copy = malloc(sizeof(*copy))))
		return NULL;
	*copy = *s;
	p->sets[p->n++] = copy;
	p->ix[at] = p->n;
	return copy;
}

np_cpuset **np_cpuset_pool_take(struct np_cpuset_pool *p, int *n)
{
	np_cpuset **sets = p->sets;

	*n = p->n;
	free(p->ix);
	memset(p, 0, sizeof(*p));
	return sets;
}

void np_cpuset_pool_free(struct np_cpuset_pool *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->sets[i]);
	free(p->sets);
	free(p->ix);
	memset(p, 0, sizeof(*p));
}
