// SPDX-License-Identifier: Apache-2.0
/* Topology model: building from CPU records, derived unit sets, queries. */
#include "numaplace/topology.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void np_topology_free(struct np_topology *t)
{
	if (!t)
		return;
	free(t->cpu);
	free(t->sockets);
	free(t->numa);
	free(t->cores);
	free(t->l3s);
	free(t->distance);
	free(t->devices);
	free(t);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Sorted distinct ids of one field over the records. */
static int distinct_ids(const struct np_cpu_desc *c, int n, size_t off,
			int **out)
{
	int *ids = malloc(sizeof(int) * (size_t)(n ? n : 1));
	int k = 0;

	if (!ids)
		return -ENOMEM;
	for (int i = 0; i < n; i++)
		ids[i] = *(const int *)((const char *)&c[i] + off);
	qsort(ids, (size_t)n, sizeof(int), cmp_int);
	for (int i = 0; i < n; i++)
		if (k == 0 || ids[k - 1] != ids[i])
			ids[k++] = ids[i];
	*out = ids;
	return k;
}

static int index_of(const int *ids, int n, int id)
{
	int lo = 0, hi = n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (ids[mid] == id)
			return mid;
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static struct np_unit *make_units(const int *ids, int n)
{
	struct np_unit *u = calloc((size_t)(n ? n : 1), sizeof(*u));
	if (!u)
		return NULL;
	for (int i = 0; i < n; i++)
		u[i].id = ids[i];
	return u;
}

/* The sorted distinct ids of sockets, NUMA nodes, cores and L3s. */
struct unit_ids {
	int *sid, *nid, *cid, *lid;
};

/* Range checks on the records (an unknown L3 (-1) becomes the socket's);
 * t->max_cpu. */
static int check_records(struct np_topology *t, struct np_cpu_desc *cc, int n,
			 char *err, size_t errlen)
{
	for (int i = 0; i < n; i++) {
		if (cc[i].cpu < 0 || cc[i].cpu >= NP_MAX_CPUS) {
			NP_ERR("cpus[%d].cpu: %d out of range 0..%d", i,
			       cc[i].cpu, NP_MAX_CPUS - 1);
			return -EINVAL;
		}
		if (cc[i].core < 0 || cc[i].socket < 0) {
			NP_ERR("cpus[%d] (cpu %d): negative core or socket id",
			       i, cc[i].cpu);
			return -EINVAL;
		}
		if (cc[i].numa < 0 || cc[i].numa >= NP_MAX_NUMA) {
			NP_ERR("cpus[%d].numa: %d out of range 0..%d", i,
			       cc[i].numa, NP_MAX_NUMA - 1);
			return -EINVAL;
		}
		if (cc[i].l3 < 0)
			cc[i].l3 = cc[i].socket;
		if (cc[i].cpu + 1 > t->max_cpu)
			t->max_cpu = cc[i].cpu + 1;
	}
	return 0;
}

/* The CPU and unit arrays, the NUMA index and mask, default distances. */
static int alloc_units(struct np_topology *t, const struct np_cpu_desc *cc,
		       int n, struct unit_ids *id)
{
	t->cpu = calloc((size_t)t->max_cpu, sizeof(*t->cpu));
	if (!t->cpu)
		return -ENOMEM;
	t->nsockets =
	    distinct_ids(cc, n, offsetof(struct np_cpu_desc, socket), &id->sid);
	t->nnuma =
	    distinct_ids(cc, n, offsetof(struct np_cpu_desc, numa), &id->nid);
	t->ncores =
	    distinct_ids(cc, n, offsetof(struct np_cpu_desc, core), &id->cid);
	t->nl3 =
	    distinct_ids(cc, n, offsetof(struct np_cpu_desc, l3), &id->lid);
	if (t->nsockets < 0 || t->nnuma < 0 || t->ncores < 0 || t->nl3 < 0)
		return -ENOMEM;
	t->sockets = make_units(id->sid, t->nsockets);
	t->cores = make_units(id->cid, t->ncores);
	t->l3s = make_units(id->lid, t->nl3);
	t->numa = calloc((size_t)t->nnuma, sizeof(*t->numa));
	t->distance =
	    calloc((size_t)t->nnuma * (size_t)t->nnuma, sizeof(uint32_t));
	if (!t->sockets || !t->cores || !t->l3s || !t->numa || !t->distance)
		return -ENOMEM;
	for (int i = 0; i < NP_MAX_NUMA; i++)
		t->numa_index[i] = -1;
	for (int i = 0; i < t->nnuma; i++) {
		t->numa[i].u.id = id->nid[i];
		t->numa_index[id->nid[i]] = i;
		t->numa_mask |= NP_NODEMASK_BIT(id->nid[i]);
		for (int j = 0; j < t->nnuma; j++)
			t->distance[i * t->nnuma + j] =
			    i == j ? NP_DEFAULT_LOCAL_DISTANCE
				   : NP_DEFAULT_REMOTE_DISTANCE;
	}
	return 0;
}

/* Every CPU's unit indexes, the online/offline sets and unit CPU sets. */
static int place_cpus(struct np_topology *t, const struct np_cpu_desc *cc,
		      int n, const struct unit_ids *id, char *err,
		      size_t errlen)
{
	for (int i = 0; i < n; i++) {
		struct np_cpu *p = &t->cpu[cc[i].cpu];
		if (p->present) {
			NP_ERR("cpus[%d]: cpu %d listed twice", i, cc[i].cpu);
			return -EINVAL;
		}
		p->present = true;
		p->online = cc[i].online;
		p->socket = index_of(id->sid, t->nsockets, cc[i].socket);
		p->numa = index_of(id->nid, t->nnuma, cc[i].numa);
		p->core = index_of(id->cid, t->ncores, cc[i].core);
		p->l3 = index_of(id->lid, t->nl3, cc[i].l3);
		if (!p->online) {
			np_cpuset_set(&t->offline, cc[i].cpu);
			continue;
		}
		np_cpuset_set(&t->online, cc[i].cpu);
		t->ncpus++;
		np_cpuset_set(&t->sockets[p->socket].cpus, cc[i].cpu);
		np_cpuset_set(&t->numa[p->numa].u.cpus, cc[i].cpu);
		np_cpuset_set(&t->cores[p->core].cpus, cc[i].cpu);
		np_cpuset_set(&t->l3s[p->l3].cpus, cc[i].cpu);
	}
	return 0;
}

/* A core must not straddle sockets or NUMA nodes; some CPU is online. */
static int check_cores(const struct np_topology *t,
		       const struct np_cpu_desc *cc, int n, char *err,
		       size_t errlen)
{
	for (int i = 0; i < n; i++) {
		const struct np_cpu *p = &t->cpu[cc[i].cpu];
		int first = np_cpuset_first(&t->cores[p->core].cpus);
		if (first < 0 || !p->online)
			continue;
		if (t->cpu[first].socket != p->socket ||
		    t->cpu[first].numa != p->numa) {
			NP_ERR("cpus[%d]: core %d spans cpu %d and cpu %d in "
			       "different sockets or NUMA nodes",
			       i, cc[i].core, first, cc[i].cpu);
			return -EINVAL;
		}
	}
	if (t->ncpus == 0) {
		NP_ERR("cpus: no CPU is online");
		return -EINVAL;
	}
	return 0;
}

/* Units' CPU counts and the kubelet's CPUs per core, socket and L3. */
static void count_units(struct np_topology *t)
{
	int nc = 0, ns = 0, nl = 0;

	for (int i = 0; i < t->nsockets; i++)
		t->sockets[i].ncpus = np_cpuset_count(&t->sockets[i].cpus);
	for (int i = 0; i < t->ncores; i++)
		t->cores[i].ncpus = np_cpuset_count(&t->cores[i].cpus);
	for (int i = 0; i < t->nl3; i++)
		t->l3s[i].ncpus = np_cpuset_count(&t->l3s[i].cpus);
	for (int i = 0; i < t->nnuma; i++)
		t->numa[i].u.ncpus = np_cpuset_count(&t->numa[i].u.cpus);
	/* The kubelet counts only what it sees: units with online CPUs. */
	for (int i = 0; i < t->ncores; i++)
		nc += t->cores[i].ncpus > 0;
	for (int i = 0; i < t->nsockets; i++)
		ns += t->sockets[i].ncpus > 0;
	for (int i = 0; i < t->nl3; i++)
		nl += t->l3s[i].ncpus > 0;
	t->cpus_per_core = t->ncpus / (nc ? nc : 1);
	t->cpus_per_socket = t->ncpus / (ns ? ns : 1);
	t->cpus_per_l3 = t->ncpus / (nl ? nl : 1);
	if (t->cpus_per_core < 1)
		t->cpus_per_core = 1;
}

int np_topology_build(struct np_topology **out, const struct np_cpu_desc *c,
		      int n, char *err, size_t errlen)
{
	struct np_topology *t = NULL;
	struct unit_ids id = {0};
	struct np_cpu_desc *cc = NULL;
	int r;

	if (n <= 0) {
		NP_ERR("cpus: no CPUs listed");
		return -EINVAL;
	}
	/* Copy so that an unknown L3 (-1) can default to the socket's. */
	cc = malloc(sizeof(*cc) * (size_t)n);
	t = calloc(1, sizeof(*t));
	if (!cc || !t) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(cc, c, sizeof(*cc) * (size_t)n);
	if ((r = check_records(t, cc, n, err, errlen)) ||
	    (r = alloc_units(t, cc, n, &id)) ||
	    (r = place_cpus(t, cc, n, &id, err, errlen)) ||
	    (r = check_cores(t, cc, n, err, errlen)))
		goto out;
	count_units(t);
	*out = t;
	t = NULL;
out:
	free(id.sid);
	free(id.nid);
	free(id.cid);
	free(id.lid);
	free(cc);
	np_topology_free(t);
	return r;
}

int np_topology_set_distances(struct np_topology *t, const uint32_t *d,
			      char *err, size_t errlen)
{
	int n = t->nnuma;

	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			uint32_t v = d[i * n + j];
			if (v < 1 || v > 255) {
				NP_ERR("distances[%d][%d]: %u out of range 1..255",
				    i, j, v);
				return -EINVAL;
			}
			if (i != j && v < d[i * n + i]) {
				NP_ERR("distances[%d][%d]: %u is below the local "
				    "distance %u",
				    i, j, v, d[i * n + i]);
				return -EINVAL;
			}
		}
	memcpy(t->distance, d, sizeof(uint32_t) * (size_t)n * (size_t)n);
	t->distances_known = true;
	return 0;
}

int np_topology_add_device(struct np_topology *t, const struct np_device *d)
{
	struct np_device *nd =
		realloc(t->devices, sizeof(*nd) * (size_t)(t->ndevices + 1));
	if (!nd)
		return -ENOMEM;
	t->devices = nd;
	t->devices[t->ndevices++] = *d;
	return 0;
}

static void *dup_mem(const void *p, size_t sz)
{
	void *q = malloc(sz ? sz : 1);
	if (q && sz)
		memcpy(q, p, sz);
	return q;
}

struct np_topology *np_topology_dup(const struct np_topology *t)
{
	struct np_topology *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	*c = *t;
	c->cpu = dup_mem(t->cpu, sizeof(*t->cpu) * (size_t)t->max_cpu);
	c->sockets = dup_mem(t->sockets, sizeof(*t->sockets) * (size_t)t->nsockets);
	c->numa = dup_mem(t->numa, sizeof(*t->numa) * (size_t)t->nnuma);
	c->cores = dup_mem(t->cores, sizeof(*t->cores) * (size_t)t->ncores);
	c->l3s = dup_mem(t->l3s, sizeof(*t->l3s) * (size_t)t->nl3);
	c->distance = dup_mem(t->distance, sizeof(uint32_t) * (size_t)t->nnuma *
						   (size_t)t->nnuma);
	c->devices = dup_mem(t->devices, sizeof(*t->devices) * (size_t)t->ndevices);
	if (!c->cpu || !c->sockets || !c->numa || !c->cores || !c->l3s ||
	    !c->distance || !c->devices) {
		np_topology_free(c);
		return NULL;
	}
	return c;
}

np_nodemask np_topology_nodes_of(const struct np_topology *t,
				 const np_cpuset *s)
{
	/* a node's CPUs are below max_cpu: no word past them can meet s */
	int nw = np_cpuset_words(t->max_cpu);
	np_nodemask m = 0;

	for (int i = 0; i < t->nnuma; i++)
		if (np_cpuset_intersects_n(&t->numa[i].u.cpus, s, nw))
			m |= NP_NODEMASK_BIT(t->numa[i].u.id);
	return m;
}

void np_topology_cpus_of_nodes(const struct np_topology *t, np_nodemask m,
			       np_cpuset *out)
{
	np_cpuset_zero(out);
	NP_NODEMASK_FOREACH(n, m)
	{
		int i = t->numa_index[n];
		if (i >= 0)
			np_cpuset_or(out, out, &t->numa[i].u.cpus);
	}
}

void np_topology_aligned_cpus(const struct np_topology *t, np_nodemask m,
			      bool by_socket, np_cpuset *out)
{
	np_cpuset sock;

	np_topology_cpus_of_nodes(t, m, out);
	if (!by_socket)
		return;
	np_cpuset_zero(&sock);
	NP_CPUSET_FOREACH(cpu, out)
	np_cpuset_or(&sock, &sock, &t->sockets[t->cpu[cpu].socket].cpus);
	*out = sock;
}

int np_topology_sockets_of_nodes(const struct np_topology *t, np_nodemask m)
{
	np_cpuset cpus;
	int n = 0;

	np_topology_cpus_of_nodes(t, m, &cpus);
	for (int i = 0; i < t->nsockets; i++)
		if (np_cpuset_intersects(&t->sockets[i].cpus, &cpus))
			n++;
	return n;
}

void np_topology_cores_of(const struct np_topology *t, const np_cpuset *s,
			  np_cpuset *out)
{
	np_cpuset r;
	np_cpuset_zero(&r);
	NP_CPUSET_FOREACH(cpu, s)
	{
		if (cpu < t->max_cpu && t->cpu[cpu].present && t->cpu[cpu].online)
			np_cpuset_or(&r, &r, &t->cores[t->cpu[cpu].core].cpus);
	}
	*out = r;
}

int np_topology_restore(const struct np_topology *t,
			const struct np_cpu_desc *fix, int nfix,
			struct np_topology **out, char *err, size_t errlen)
{
	struct np_cpu_desc *d = calloc((size_t)t->max_cpu + 1, sizeof(*d));
	struct np_topology *o = NULL;
	int n = 0, r;

	if (!d)
		return -ENOMEM;
	for (int c = 0; c < t->max_cpu; c++) {
		const struct np_cpu *p = &t->cpu[c];
		if (!p->present)
			continue;
		d[n] = (struct np_cpu_desc){c, t->cores[p->core].id,
					    t->sockets[p->socket].id,
					    t->numa[p->numa].u.id,
					    t->l3s[p->l3].id, p->online};
		for (int f = 0; f < nfix; f++)
			if (fix[f].cpu == c)
				d[n] = fix[f];
		n++;
	}
	r = np_topology_build(&o, d, n, err, errlen);
	free(d);
	if (r)
		return r;
	if (o->nnuma != t->nnuma) {
		NP_ERR("restored CPUs name %d NUMA node(s), the machine has %d",
		       o->nnuma, t->nnuma);
		np_topology_free(o);
		return -EINVAL;
	}
	for (int i = 0; i < t->nnuma; i++) {
		struct np_unit u = o->numa[i].u;
		if (u.id != t->numa[i].u.id) {
			NP_ERR("restored CPUs name NUMA node %d, which has no "
			       "CPU here",
			       u.id);
			np_topology_free(o);
			return -EINVAL;
		}
		o->numa[i] = t->numa[i];
		o->numa[i].u = u;
	}
	memcpy(o->distance, t->distance,
	       sizeof(uint32_t) * (size_t)t->nnuma * (size_t)t->nnuma);
	o->distances_known = t->distances_known;
	for (int i = 0; i < t->ndevices; i++)
		if ((r = np_topology_add_device(o, &t->devices[i]))) {
			np_topology_free(o);
			return r;
		}
	*out = o;
	return 0;
}
