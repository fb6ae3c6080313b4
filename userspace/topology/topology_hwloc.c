// SPDX-License-Identifier: Apache-2.0
/*
 * Topology discovery through hwloc: the live machine, an hwloc XML export
 * (lstopo --of xml) or an hwloc synthetic description.
 *
 * Mapping of hwloc objects onto the model (struct np_cpu_desc per PU):
 *
 *   cpu     the PU's OS index (the Linux CPU number).
 *   core    the Core ancestor's OS index when Core OS indexes are unique
 *           machine-wide (synthetic topologies), otherwise its logical
 *           index: Linux core_id repeats per socket, and the model needs
 *           machine-wide ids. Within a socket both orders agree with the
 *           kubelet's (which numbers a core by its lowest CPU id), so the
 *           kubelet tie-breaks that sort cores by id are unaffected.
 *   socket  the Package ancestor's OS index (logical index when the OS
 *           indexes are not unique or unknown).
 *   numa    the first NUMA node of the PU's nodeset (OS index, < 64).
 *   l3      the L3 cache ancestor's logical index; without L3 caches in the
 *           topology, the last-level (highest) cache present instead.
 *
 * Online: a CPU is online when it is in the topology cpuset (hwloc's "online
 * and described" set). CPUs only in the complete cpuset are offline; hwloc
 * has no object for them, so their location is taken from the deepest object
 * whose complete cpuset holds them (a NUMA node, package, core if known) and
 * otherwise from the nearest online CPU; such a CPU gets a core of its own
 * unless hwloc knows its core. The topology is loaded with
 * HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED: numaplace places workloads on the
 * whole machine, so CPUs and nodes outside the cgroup this process happens
 * to run in are kept (and count as online).
 *
 * An XML file is read once, checked (np_hwloc_xml_check, topology_xml.c:
 * libhwloc crashes on objects without their sets, so a file that is not
 * shaped like hwloc's own exports is refused before hwloc reads it) and
 * handed to hwloc as a buffer, so what hwloc parses is what was checked.
 *
 * Memory per NUMA node comes from the node's local memory and page types;
 * the base page size is not a hugepage size. Free memory and free hugepages
 * are read from /sys/devices/system/node on the live machine only; for XML
 * and synthetic topologies free == total. NUMA nodes without CPUs (CXL,
 * HBM, memory-only nodes) are not part of the model.
 *
 * Distances: the NUMA latency matrix hwloc reports (ACPI SLIT on Linux),
 * preferring one from the OS; bandwidth matrices are ignored. A matrix that
 * does not cover every node of the model or fails validation leaves the
 * defaults (10 local / 20 remote, distances_known = false).
 *
 * PCI devices (I/O discovery with HWLOC_TYPE_FILTER_KEEP_IMPORTANT): only
 * display controllers (class 0x03xx, NP_DEV_GPU), network controllers
 * (0x02xx, NP_DEV_NIC) and processing accelerators (0x12xx, NP_DEV_OTHER)
 * are kept; bridges, storage, audio and other functions are not placement
 * resources. The device's NUMA node is the node of its non-I/O ancestor when
 * that ancestor's nodeset has exactly one node with CPUs, else -1.
 *
 * Default resource names (a device plugin usually advertises these; a JSON
 * topology can name devices freely):
 *   GPU, vendor NVIDIA (10de)  "nvidia.com/gpu"
 *   GPU, vendor AMD (1002)     "amd.com/gpu"
 *   GPU, vendor Intel (8086)   "gpu.intel.com/i915"
 *   GPU, other vendors         "gpu"
 *   NICs and accelerators      "pci/VVVV:DDDD" (PCI vendor:device, hex)
 *
 * Synthetic topologies number PUs depth-first, so SMT siblings are adjacent
 * (core 0 = cpu 0,1 with pu:2). The Linux 0/N numbering of x86 servers
 * (siblings N/2 apart) can be described with the JSON form, or with an
 * hwloc XML file.
 */
#include "numaplace/topology.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "basic/fileio.h"
#include "topology_internal.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <hwloc.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* How ids of one object type are assigned. */
struct id_map {
	hwloc_obj_type_t type;
	bool use_os;  /* OS indexes are known and unique */
	int fresh;    /* first id beyond every assigned id */
	bool present; /* the topology has objects of this type */
	/* The type sits at several depths (an asymmetric machine: a core
	 * whose sibling thread is offline has no L1/L2 of its own above the
	 * PU, so hwloc puts it deeper): logical indexes are per depth, so
	 * without unique OS indexes an object's id is its rank among all of
	 * them by first CPU (objs, sorted). */
	hwloc_obj_t *objs;
	int nobjs;
};

/* Every object of type, at every depth; -ENOMEM. */
static int objs_of_type(hwloc_topology_t topo, hwloc_obj_type_t type,
			hwloc_obj_t **out)
{
	int depth = hwloc_topology_get_depth(topo), n = 0;
	hwloc_obj_t *v;

	for (int dp = 0; dp < depth; dp++)
		if (hwloc_get_depth_type(topo, dp) == type)
			n += (int)hwloc_get_nbobjs_by_depth(topo, dp);
	if (!(v = calloc((size_t)n + 1, sizeof(*v))))
		return -ENOMEM;
	n = 0;
	for (int dp = 0; dp < depth; dp++)
		if (hwloc_get_depth_type(topo, dp) == type)
			for (unsigned i = 0;
			     i < hwloc_get_nbobjs_by_depth(topo, dp); i++)
				v[n++] = hwloc_get_obj_by_depth(topo, dp, i);
	*out = v;
	return n;
}

static int cmp_first_cpu(const void *a, const void *b)
{
	int x = hwloc_bitmap_first((*(const hwloc_obj_t *)a)->complete_cpuset),
	    y = hwloc_bitmap_first((*(const hwloc_obj_t *)b)->complete_cpuset);
	return (x > y) - (x < y);
}

struct conv {
	hwloc_topology_t topo;
	const char *what; /* source, for error messages */
	struct id_map core, pkg, llc;
};

static int cmp_uint(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return (x > y) - (x < y);
}

static int id_map_init(struct conv *c, struct id_map *m, hwloc_obj_type_t type)
{
	int n = hwloc_get_nbobjs_by_type(c->topo, type);
	hwloc_obj_t *objs = NULL;
	unsigned *os, max = 0;

	m->type = type;
	m->use_os = true;
	if (hwloc_get_type_depth(c->topo, type) == HWLOC_TYPE_DEPTH_MULTIPLE) {
		if ((n = objs_of_type(c->topo, type, &objs)) < 0)
			return n;
		qsort(objs, (size_t)n, sizeof(*objs), cmp_first_cpu);
		m->objs = objs;
		m->nobjs = n;
	}
	m->present = n > 0;
	m->fresh = n;
	if (n <= 0)
		return 0;
	if (type != HWLOC_OBJ_CORE && type != HWLOC_OBJ_PACKAGE) {
		m->use_os = false; /* caches have no OS index */
		return 0;
	}
	os = malloc(sizeof(*os) * (size_t)n);
	if (!os)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		os[i] = (objs ? objs[i]
			      : hwloc_get_obj_by_type(c->topo, type, (unsigned)i))
			    ->os_index;
		if (os[i] == HWLOC_UNKNOWN_INDEX || os[i] > (1u << 30))
			m->use_os = false;
		else if (os[i] > max)
			max = os[i];
	}
	qsort(os, (size_t)n, sizeof(*os), cmp_uint);
	for (int i = 1; i < n; i++)
		if (os[i] == os[i - 1])
			m->use_os = false;
	free(os);
	if (m->use_os)
		m->fresh = (int)max + 1;
	return 0;
}

/* Object of the map's type at or above o, or NULL. */
static hwloc_obj_t ancestor(const struct conv *c, const struct id_map *m,
			    hwloc_obj_t o)
{
	if (!m->present)
		return NULL;
	if (o->type == m->type)
		return o;
	return hwloc_get_ancestor_obj_by_type(c->topo, m->type, o);
}

static int obj_id(const struct id_map *m, hwloc_obj_t o)
{
	if (m->use_os)
		return (int)o->os_index;
	if (m->objs) {
		hwloc_obj_t *hit = bsearch(&o, m->objs, (size_t)m->nobjs,
					   sizeof(*m->objs), cmp_first_cpu);
		if (hit)
			return (int)(hit - m->objs);
	}
	return (int)o->logical_index;
}

static int pu_desc(struct conv *c, hwloc_obj_t pu, struct np_cpu_desc *d,
		   char *err, size_t errlen)
{
	hwloc_obj_t a;
	int node;

	d->cpu = (int)pu->os_index;
	if (pu->os_index >= NP_MAX_CPUS) {
		NP_ERR("%s: CPU %u exceeds the limit of %d CPUs", c->what,
		    pu->os_index, NP_MAX_CPUS);
		return -ERANGE;
	}
	d->online = true;
	a = ancestor(c, &c->pkg, pu);
	d->socket = a ? obj_id(&c->pkg, a) : c->pkg.fresh;
	a = ancestor(c, &c->core, pu);
	/* A PU without a Core is a core of its own. */
	d->core =
	    a ? obj_id(&c->core, a) : c->core.fresh + (int)pu->logical_index;
	a = ancestor(c, &c->llc, pu);
	d->l3 = a ? obj_id(&c->llc, a) : c->llc.fresh + d->socket;
	node = pu->nodeset ? hwloc_bitmap_first(pu->nodeset) : -1;
	if (node < 0) {
		NP_ERR("%s: CPU %d has no NUMA node", c->what, d->cpu);
		return -EINVAL;
	}
	if (node >= NP_MAX_NUMA) {
		NP_ERR("%s: CPU %d is in NUMA node %d; node ids must be below %d",
		    c->what, d->cpu, node, NP_MAX_NUMA);
		return -ERANGE;
	}
	d->numa = node;
	return 0;
}

/*
 * An offline CPU: hwloc has no PU object for it. Start from the nearest
 * online CPU inside the deepest object whose complete cpuset holds it, then
 * take what the complete cpusets tell (package, core, cache, NUMA node).
 */
static int offline_desc(struct conv *c, int cpu, int nth, struct np_cpu_desc *d,
			char *err, size_t errlen)
{
	hwloc_obj_t root = hwloc_get_root_obj(c->topo), o = root, a, pu, n;
	hwloc_const_cpuset_t near;
	bool deeper = true;
	int r;

	for (n = hwloc_get_next_obj_by_type(c->topo, HWLOC_OBJ_NUMANODE, NULL);
	     n; n = hwloc_get_next_obj_by_type(c->topo, HWLOC_OBJ_NUMANODE, n))
		if (n->complete_cpuset && n->os_index < NP_MAX_NUMA &&
		    hwloc_bitmap_isset(n->complete_cpuset, (unsigned)cpu))
			break;
	while (deeper && o->arity) {
		deeper = false;
		for (unsigned i = 0; i < o->arity; i++)
			if (o->children[i]->complete_cpuset &&
			    hwloc_bitmap_isset(o->children[i]->complete_cpuset,
					       (unsigned)cpu)) {
				o = o->children[i];
				deeper = true;
				break;
			}
	}
	near = o != root || !n ? o->cpuset : n->cpuset;
	pu = hwloc_get_next_obj_inside_cpuset_by_type(c->topo, near,
						      HWLOC_OBJ_PU, NULL);
	if (!pu)
		pu = hwloc_get_obj_by_type(c->topo, HWLOC_OBJ_PU, 0);
	if (!pu) {
		NP_ERR("%s: no online CPU", c->what);
		return -EINVAL;
	}
	if ((r = pu_desc(c, pu, d, err, errlen)))
		return r;
	d->cpu = cpu;
	d->online = false;
	if ((a = ancestor(c, &c->pkg, o)))
		d->socket = obj_id(&c->pkg, a);
	if ((a = ancestor(c, &c->llc, o)))
		d->l3 = obj_id(&c->llc, a);
	if (n)
		d->numa = (int)n->os_index;
	a = ancestor(c, &c->core, o);
	/* Unknown core: one of its own, past every other core id. */
	d->core = a ? obj_id(&c->core, a)
		    : c->core.fresh +
			  hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_PU) + nth;
	return 0;
}

/* The last-level cache type to use as the "L3" group. */
static hwloc_obj_type_t llc_type(hwloc_topology_t topo)
{
	static const hwloc_obj_type_t order[] = {
	    HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (hwloc_get_nbobjs_by_type(topo, order[i]) > 0 ||
		    hwloc_get_type_depth(topo, order[i]) ==
			    HWLOC_TYPE_DEPTH_MULTIPLE)
			return order[i];
	return HWLOC_OBJ_L3CACHE;
}

static int read_cpus(struct conv *c, struct np_cpu_desc **out, int *nout,
		     char *err, size_t errlen)
{
	hwloc_const_cpuset_t all = hwloc_topology_get_complete_cpuset(c->topo);
	hwloc_const_cpuset_t online =
	    hwloc_topology_get_topology_cpuset(c->topo);
	int npu = hwloc_get_nbobjs_by_type(c->topo, HWLOC_OBJ_PU);
	int nall = hwloc_bitmap_weight(all), n = 0, noff = 0, r;
	struct np_cpu_desc *d;
	unsigned cpu;
	hwloc_obj_t pu;

	if (npu <= 0) {
		NP_ERR("%s: no CPUs", c->what);
		return -EINVAL;
	}
	if (nall < npu)
		nall = npu;
	d = calloc((size_t)nall, sizeof(*d));
	if (!d)
		return -ENOMEM;
	for (pu = hwloc_get_next_obj_by_type(c->topo, HWLOC_OBJ_PU, NULL); pu;
	     pu = hwloc_get_next_obj_by_type(c->topo, HWLOC_OBJ_PU, pu))
		if ((r = pu_desc(c, pu, &d[n++], err, errlen)))
			goto fail;
	hwloc_bitmap_foreach_begin(cpu, all)
	{
		if (hwloc_bitmap_isset(online, cpu) ||
		    hwloc_get_pu_obj_by_os_index(c->topo, cpu))
			continue;
		if (cpu >= NP_MAX_CPUS) {
			NP_ERR("%s: offline CPU %u exceeds the limit of %d CPUs",
			    c->what, cpu, NP_MAX_CPUS);
			r = -ERANGE;
			goto fail;
		}
		if (n == nall) /* cannot happen: all holds every PU */
			break;
		if ((r = offline_desc(c, (int)cpu, noff++, &d[n++], err,
				      errlen)))
			goto fail;
	}
	hwloc_bitmap_foreach_end();
	*out = d;
	*nout = n;
	return 0;
fail:
	free(d);
	return r;
}

/* A small sysfs file, NUL-terminated, in *buf. */
static int read_sysfs(const char *path, char **buf)
{
	return np_read_at(AT_FDCWD, path, 0, 1u << 20, buf, NULL);
}

/* "Node N MemFree: X kB" from the node's meminfo; 0 if unavailable. */
static int sysfs_node_memfree(int node, uint64_t *out)
{
	_cleanup_free_ char *buf = NULL;
	unsigned long long kb;
	char path[96], *save;
	int nn, r;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo",
		 node);
	if ((r = read_sysfs(path, &buf)))
		return r;
	for (char *line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, "Node %d MemFree: %llu kB", &nn, &kb) == 2) {
			*out = (uint64_t)kb * 1024;
			return 0;
		}
	return -ENOENT;
}

static int sysfs_node_hugefree(int node, uint64_t size_kb, uint64_t *out)
{
	_cleanup_free_ char *buf = NULL;
	unsigned long long v;
	char path[128];
	int r;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%d/hugepages/hugepages-%" PRIu64
		 "kB/free_hugepages",
		 node, size_kb);
	if ((r = read_sysfs(path, &buf)))
		return r;
	if (sscanf(buf, "%llu", &v) != 1)
		return -ENOENT;
	*out = v;
	return 0;
}

static void read_memory(struct conv *c, struct np_topology *t, bool live)
{
	uint64_t base = 4096, page = (uint64_t)sysconf(_SC_PAGESIZE);

	for (int i = 0; i < t->nnuma; i++) {
		struct np_numa_node *nn = &t->numa[i];
		hwloc_obj_t o = hwloc_get_numanode_obj_by_os_index(
		    c->topo, (unsigned)nn->u.id);
		uint64_t v = 0;

		if (!o)
			continue;
		nn->mem_total = nn->mem_free = o->attr->numanode.local_memory;
		if (live && sysfs_node_memfree(nn->u.id, &v) == 0 &&
		    v <= nn->mem_total)
			nn->mem_free = v;
		nn->nhuge = 0;
		for (unsigned k = 0; k < o->attr->numanode.page_types_len;
		     k++) {
			const struct hwloc_memory_page_type_s *pt =
			    &o->attr->numanode.page_types[k];
			struct np_hugepages *h;

			if (pt->size == base || (live && pt->size == page) ||
			    pt->size < 1024)
				continue;
			if (nn->nhuge == NP_MAX_HUGEPAGE_SIZES)
				break;
			h = &nn->huge[nn->nhuge++];
			h->size_kb = pt->size / 1024;
			h->total = h->free = pt->count;
			if (live &&
			    sysfs_node_hugefree(nn->u.id, h->size_kb, &v) ==
				0 &&
			    v <= h->total)
				h->free = v;
		}
	}
}

/* Rank of a distance matrix: higher is better, 0 = unusable. */
static int dist_rank(const struct hwloc_distances_s *d)
{
	if (d->kind & HWLOC_DISTANCES_KIND_MEANS_BANDWIDTH)
		return 0;
	if (d->kind & HWLOC_DISTANCES_KIND_HETEROGENEOUS_TYPES)
		return 0;
	return 1 + !!(d->kind & HWLOC_DISTANCES_KIND_MEANS_LATENCY) * 2 +
	       !!(d->kind & HWLOC_DISTANCES_KIND_FROM_OS);
}

static int read_distances(struct conv *c, struct np_topology *t)
{
	struct hwloc_distances_s *dm[16];
	unsigned nr = sizeof(dm) / sizeof(dm[0]);
	int n = t->nnuma, best_rank = 0, r = 0;
	uint32_t *out = NULL, *cand;
	int *map;

	if (hwloc_distances_get_by_type(c->topo, HWLOC_OBJ_NUMANODE, &nr, dm, 0,
					0) < 0)
		return 0;
	if (nr > sizeof(dm) / sizeof(dm[0]))
		nr = sizeof(dm) / sizeof(dm[0]);
	map = malloc(sizeof(*map) * (size_t)n);
	cand = malloc(sizeof(*cand) * (size_t)n * (size_t)n);
	out = malloc(sizeof(*out) * (size_t)n * (size_t)n);
	if (!map || !cand || !out) {
		r = -ENOMEM;
		goto done;
	}
	for (unsigned k = 0; k < nr; k++) {
		const struct hwloc_distances_s *d = dm[k];
		int rank = dist_rank(d);
		bool ok = true;

		if (rank <= best_rank)
			continue;
		for (int i = 0; i < n && ok; i++) {
			map[i] = -1;
			for (unsigned j = 0; j < d->nbobjs; j++)
				if (d->objs[j] &&
				    d->objs[j]->type == HWLOC_OBJ_NUMANODE &&
				    (int)d->objs[j]->os_index ==
					t->numa[i].u.id)
					map[i] = (int)j;
			ok = map[i] >= 0;
		}
		for (int i = 0; i < n && ok; i++)
			for (int j = 0; j < n && ok; j++) {
				hwloc_uint64_t v =
				    d->values[(unsigned)map[i] * d->nbobjs +
					      (unsigned)map[j]];
				ok = v >= 1 && v <= 255;
				cand[i * n + j] = (uint32_t)v;
			}
		if (!ok)
			continue;
		memcpy(out, cand, sizeof(*out) * (size_t)n * (size_t)n);
		best_rank = rank;
	}
	/* An invalid matrix (e.g. remote below local) keeps the defaults. */
	if (best_rank > 0)
		np_topology_set_distances(t, out, NULL, 0);
done:
	for (unsigned k = 0; k < nr; k++)
		hwloc_distances_release(c->topo, dm[k]);
	free(map);
	free(cand);
	free(out);
	return r;
}

static void device_resource(struct np_device *d, unsigned vendor,
			    unsigned device)
{
	const char *gpu = "gpu";

	if (d->cls == NP_DEV_GPU) {
		if (vendor == 0x10de)
			gpu = "nvidia.com/gpu";
		else if (vendor == 0x1002)
			gpu = "amd.com/gpu";
		else if (vendor == 0x8086)
			gpu = "gpu.intel.com/i915";
		snprintf(d->resource, sizeof(d->resource), "%s", gpu);
		return;
	}
	snprintf(d->resource, sizeof(d->resource), "pci/%04x:%04x", vendor,
		 device);
}

static int read_devices(struct conv *c, struct np_topology *t)
{
	hwloc_obj_t o = NULL;
	int r;

	while ((o = hwloc_get_next_pcidev(c->topo, o))) {
		const struct hwloc_pcidev_attr_s *p = &o->attr->pcidev;
		struct np_device d = {.numa = -1};
		const char *vn, *dn;
		hwloc_obj_t anc;

		switch (p->class_id >> 8) {
		case 0x03:
			d.cls = NP_DEV_GPU;
			break;
		case 0x02:
			d.cls = NP_DEV_NIC;
			break;
		case 0x12:
			d.cls = NP_DEV_OTHER;
			break;
		default:
			continue;
		}
		snprintf(d.id, sizeof(d.id), "%04x:%02x:%02x.%01x",
			 (unsigned)p->domain, (unsigned)p->bus,
			 (unsigned)p->dev, (unsigned)p->func);
		device_resource(&d, p->vendor_id, p->device_id);
		vn = hwloc_obj_get_info_by_name(o, "PCIVendor");
		dn = hwloc_obj_get_info_by_name(o, "PCIDevice");
		snprintf(d.name, sizeof(d.name), "%s%s%s", vn ? vn : "",
			 vn && dn ? " " : "", dn ? dn : "");
		anc = hwloc_get_non_io_ancestor_obj(c->topo, o);
		if (anc && anc->nodeset &&
		    hwloc_bitmap_weight(anc->nodeset) == 1) {
			int node = hwloc_bitmap_first(anc->nodeset);
			if (node < NP_MAX_NUMA && t->numa_index[node] >= 0)
				d.numa = node;
		}
		if ((r = np_topology_add_device(t, &d)))
			return r;
	}
	return 0;
}

/* Convert a loaded hwloc topology; live = read free memory from sysfs. */
static int convert(hwloc_topology_t topo, const char *what, bool live,
		   struct np_topology **out, char *err, size_t errlen)
{
	struct conv c = {.topo = topo, .what = what};
	struct np_topology *t = NULL;
	struct np_cpu_desc *d = NULL;
	char berr[256];
	int n = 0, r;

	if ((r = id_map_init(&c, &c.core, HWLOC_OBJ_CORE)) ||
	    (r = id_map_init(&c, &c.pkg, HWLOC_OBJ_PACKAGE)) ||
	    (r = id_map_init(&c, &c.llc, llc_type(topo))) ||
	    (r = read_cpus(&c, &d, &n, err, errlen))) {
		free(c.core.objs);
		free(c.pkg.objs);
		free(c.llc.objs);
		return r;
	}
	free(c.core.objs);
	free(c.pkg.objs);
	free(c.llc.objs);
	r = np_topology_build(&t, d, n, berr, sizeof(berr));
	free(d);
	if (r) {
		NP_ERR("%s: %s", what, berr);
		return r;
	}
	read_memory(&c, t, live && hwloc_topology_is_thissystem(topo));
	if ((r = read_distances(&c, t)) || (r = read_devices(&c, t))) {
		NP_ERR("%s: %s", what, strerror(-r));
		np_topology_free(t);
		return r;
	}
	*out = t;
	return 0;
}

enum src_kind { SRC_LIVE, SRC_XML, SRC_SYNTHETIC };

static int from_hwloc(struct np_topology **out, enum src_kind kind,
		      const char *arg, char *err, size_t errlen)
{
	_cleanup_free_ char *xml = NULL;
	size_t xmllen = 0;
	char what[320];
	hwloc_topology_t topo;
	int r;

	switch (kind) {
	case SRC_LIVE:
		snprintf(what, sizeof(what), "live topology (hwloc)");
		break;
	case SRC_XML:
		snprintf(what, sizeof(what), "hwloc XML %s", arg);
		break;
	case SRC_SYNTHETIC:
		snprintf(what, sizeof(what), "hwloc synthetic topology \"%s\"",
			 arg);
		break;
	}
	if (kind == SRC_XML && access(arg, R_OK) < 0) {
		r = -errno;
		NP_ERR("%s: %s", what, strerror(errno));
		return r;
	}
	/* Read once and checked: hwloc gets these very bytes. */
	if (kind == SRC_XML) {
		if ((r = np_read_at(AT_FDCWD, arg, 0, XML_MAX_SIZE, &xml,
				    &xmllen))) {
			if (r == -EFBIG)
				NP_ERR("%s: larger than %u MiB", what,
				       XML_MAX_SIZE >> 20);
			else
				NP_ERR("%s: %s", what, strerror(-r));
			return r;
		}
		if ((r = np_hwloc_xml_check(xml, xmllen, what, err, errlen)))
			return r;
	}
	if (hwloc_topology_init(&topo) < 0) {
		NP_ERR("%s: hwloc_topology_init failed", what);
		return -ENOMEM;
	}
	if (hwloc_topology_set_flags(
		topo, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) < 0 ||
	    hwloc_topology_set_io_types_filter(
		topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) < 0) {
		r = errno ? -errno : -EINVAL;
		NP_ERR("%s: cannot configure hwloc: %s", what, strerror(-r));
		goto out;
	}
	if (kind == SRC_XML &&
	    hwloc_topology_set_xmlbuffer(topo, xml, (int)xmllen + 1) < 0) {
		r = errno ? -errno : -EINVAL;
		NP_ERR("%s: hwloc cannot use the file: %s", what, strerror(-r));
		goto out;
	}
	if (kind == SRC_SYNTHETIC &&
	    hwloc_topology_set_synthetic(topo, arg) < 0) {
		r = -EINVAL;
		NP_ERR("%s: invalid description (expected e.g. \"pack:2 numa:2 "
		    "l3:1 core:8 pu:2\")",
		    what);
		goto out;
	}
	errno = 0;
	if (hwloc_topology_load(topo) < 0) {
		/* for a file, errno says nothing about it (ENOENT for one
		 * without a usable NUMA node) */
		r = kind == SRC_XML || !errno ? -EINVAL : -errno;
		if (kind == SRC_XML)
			NP_ERR("%s: hwloc cannot read it as a topology "
			       "(HWLOC_XML_VERBOSE=1 makes hwloc say why)",
			       what);
		else
			NP_ERR("%s: hwloc failed to load it: %s", what,
			       strerror(-r));
		goto out;
	}
	r = convert(topo, what, kind == SRC_LIVE, out, err, errlen);
out:
	hwloc_topology_destroy(topo);
	return r;
}

int np_topology_from_hwloc_live(struct np_topology **out, char *err,
				size_t errlen)
{
	return from_hwloc(out, SRC_LIVE, NULL, err, errlen);
}

int np_topology_from_hwloc_xml(struct np_topology **out, const char *path,
			       char *err, size_t errlen)
{
	if (!path || !*path) {
		NP_ERR("hwloc XML: no file name");
		return -EINVAL;
	}
	return from_hwloc(out, SRC_XML, path, err, errlen);
}

/* PUs a synthetic description would make: the product of its levels'
 * arities ("pack:2 core:4 pu:2" -> 16), counted before hwloc builds them
 * (10^6 PUs took hwloc far too long to be told apart from a hang). Levels
 * whose arity is not a plain number are left to hwloc. */
static unsigned long long synthetic_pus(const char *desc)
{
	unsigned long long n = 1;

	for (const char *p = desc; (p = strchr(p, ':')); p++) {
		char *end;
		unsigned long long a = strtoull(p + 1, &end, 10);
		if (end == p + 1)
			continue;
		n = a && n > ULLONG_MAX / a ? ULLONG_MAX : n * a;
	}
	return n;
}

int np_topology_from_hwloc_synthetic(struct np_topology **out, const char *desc,
				     char *err, size_t errlen)
{
	unsigned long long pus;

	if (!desc || !*desc) {
		NP_ERR("hwloc synthetic topology: empty description");
		return -EINVAL;
	}
	if ((pus = synthetic_pus(desc)) > NP_MAX_CPUS) {
		NP_ERR("hwloc synthetic topology \"%.200s\": %llu CPUs, more "
		       "than %d",
		       desc, pus, NP_MAX_CPUS);
		return -E2BIG;
	}
	return from_hwloc(out, SRC_SYNTHETIC, desc, err, errlen);
}
