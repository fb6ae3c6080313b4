// SPDX-License-Identifier: Apache-2.0
/*
 * Loading the verification programs (see include/numaplace/bpf_load.h).
 *
 * Optional hooks are enabled in order of preference and the first
 * combination the kernel accepts wins: the NUMA-fault hook as fentry, else
 * as a kprobe, else off; the balancer tracepoints only when the kernel has
 * them (CONFIG_NUMA_BALANCING); the cpu-clock sampler when perf events can
 * be opened. sched_switch is the core: without it there is nothing to
 * verify, and loading fails.
 */
#include "numaplace/bpf_load.h"
#include "basic/fileio.h"
#include "numaplace.skel.h"
#include "numaplace/cleanup.h"
#include "numaplace/error.h"
#include "numaplace/numa_mem.h"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

const char *const np_bpf_signal_names[NP_BPF_NSIGNALS] = {
    "sched_switch",  "sched_migrate_task", "cpu_clock_tick", "numa_fault",
    "numa_balancer", "task_audit",	   "numa_balancing",	"irq_time",
};

enum {
	SIG_SWITCH,
	SIG_MIGRATE,
	SIG_TICK,
	SIG_FAULT,
	SIG_BALANCER,
	SIG_AUDIT,
	SIG_NUMA_BALANCING,
	SIG_IRQ
};

struct np_bpf_loader {
	struct numaplace_bpf *skel;
	struct np_bpf_maps maps; /* fds owned by skel, not closed here */
	struct ring_buffer *rb;
	struct bpf_link **tick_links;
	int ntick;
	unsigned signals;
	unsigned tick_hz;
	uint64_t parent_cgid;
	uint64_t started_ns;
	char why[NP_BPF_NSIGNALS][200];
	np_bpf_event_cb ev_cb;
	void *ev_ctx;
};

/* libbpf's messages: kept (the last lines say why a load failed), and
 * printed with --verbose. */
static char last_libbpf[1024];
static bool libbpf_verbose;

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt,
			va_list ap)
{
	char line[512];
	va_list aq;

	va_copy(aq, ap);
	vsnprintf(line, sizeof(line), fmt, aq);
	va_end(aq);
	/* The first warning says why (e.g. "prog 'x': BPF program load
	 * failed: Operation not permitted"); the rest is consequence. */
	if (lvl <= LIBBPF_WARN && line[0] && !last_libbpf[0]) {
		size_t n = strlen(line);
		while (n && line[n - 1] == '\n')
			line[--n] = 0;
		snprintf(last_libbpf, sizeof(last_libbpf), "%s",
			 !strncmp(line, "libbpf: ", 8) ? line + 8 : line);
	}
	if (libbpf_verbose)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * libbpf reuses a pinned map only when type, sizes, max_entries and flags
 * all match, and otherwise fails the whole load. A pin that no longer
 * matches (max_workloads changed) is removed, so the load creates it anew;
 * its counters are lost, which `warn` says.
 */
static void drop_stale_pins(struct bpf_object *obj, char *warn, size_t wlen)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
	{
		const char *path = bpf_map__pin_path(map);
		struct bpf_map_info info;
		__u32 len = sizeof(info);
		int fd;

		if (!path || access(path, F_OK))
			continue;
		fd = bpf_obj_get(path);
		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == bpf_map__type(map) &&
		    info.key_size == bpf_map__key_size(map) &&
		    info.value_size == bpf_map__value_size(map) &&
		    info.max_entries == bpf_map__max_entries(map) &&
		    info.map_flags == bpf_map__map_flags(map)) {
			close(fd);
			continue;
		}
		if (fd >= 0)
			close(fd);
		if (!unlink(path) && warn && wlen) {
			size_t used = strlen(warn);
			snprintf(warn + used, wlen - used,
				 "%s%s: layout changed, pin recreated "
				 "(its counters start from zero)",
				 used ? "; " : "", path);
		}
	}
}

static bool btf_has(const struct btf *vm, const char *name, __u32 kind)
{
	return vm && btf__find_by_name_kind(vm, name, kind) >= 0;
}

static bool kprobes_available(void)
{
	return !access("/sys/bus/event_source/devices/kprobe/type", F_OK);
}

enum fault_mode { FAULT_FENTRY, FAULT_KPROBE, FAULT_OFF };

static int open_and_load(struct np_bpf_loader *l,
			 const struct np_bpf_load_opts *o, const char *pin_dir,
			 enum fault_mode fm, bool balancer, char *warn,
			 size_t wlen)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	struct numaplace_bpf *s;
	int r;

	s = numaplace_bpf__open_opts(&oo);
	if (!s)
		return -errno;
	s->rodata->np_parent_cgid = o->parent_cgid;
	s->rodata->np_parent_level = o->parent_level;
	if (o->rate_burst)
		s->rodata->np_rate_burst = o->rate_burst;
	r = libbpf_num_possible_cpus();
	if (r > 0)
		s->rodata->np_nr_cpus = (__u32)r;
	s->rodata->np_grace_ns = (__u64)o->grace_ms * 1000000ULL;
	bpf_map__set_max_entries(s->maps.np_policy, o->nslots);
	bpf_map__set_max_entries(s->maps.np_counters, o->nslots);
	bpf_map__set_max_entries(s->maps.np_slots, o->nslots);
	bpf_map__set_max_entries(s->maps.np_rate, o->nslots);
	bpf_program__set_autoload(s->progs.np_numa_fault_fentry,
				  fm == FAULT_FENTRY);
	bpf_program__set_autoload(s->progs.np_numa_fault_kprobe,
				  fm == FAULT_KPROBE);
	bpf_program__set_autoload(s->progs.np_sched_move_numa, balancer);
	bpf_program__set_autoload(s->progs.np_sched_swap_numa, balancer);
	bpf_program__set_autoload(s->progs.np_sched_stick_numa, balancer);
	drop_stale_pins(s->obj, warn, wlen);
	r = numaplace_bpf__load(s);
	if (r) {
		numaplace_bpf__destroy(s);
		return r < 0 ? r : -EINVAL;
	}
	l->skel = s;
	return 0;
}

static void attach_ticks(struct np_bpf_loader *l, unsigned hz)
{
	int ncpu = libbpf_num_possible_cpus(), ok = 0, first_err = 0;

	if (!hz) {
		snprintf(l->why[SIG_TICK], sizeof(l->why[0]),
			 "off: verify.tick_hz is 0");
		return;
	}
	if (ncpu <= 0)
		return;
	l->tick_links = calloc((size_t)ncpu, sizeof(*l->tick_links));
	if (!l->tick_links)
		return;
	l->ntick = ncpu;
	for (int c = 0; c < ncpu; c++) {
		struct perf_event_attr a = {
		    .type = PERF_TYPE_SOFTWARE,
		    .size = sizeof(a),
		    .config = PERF_COUNT_SW_CPU_CLOCK,
		    .sample_freq = hz,
		    .freq = 1,
		};
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, c, -1,
				      PERF_FLAG_FD_CLOEXEC);
		struct bpf_link *lk;
		if (fd < 0) {
			if (errno != ENODEV && !first_err)
				first_err = -errno; /* ENODEV: CPU offline */
			continue;
		}
		lk = bpf_program__attach_perf_event(l->skel->progs.np_tick, fd);
		if (!lk) {
			if (!first_err)
				first_err = -errno;
			close(fd);
			continue;
		}
		l->tick_links[c] = lk; /* the link owns fd */
		ok++;
	}
	if (ok) {
		l->signals |= NP_BPF_SIG_TICK;
		snprintf(l->why[SIG_TICK], sizeof(l->why[0]),
			 "active: %u Hz on %d CPUs", hz, ok);
	} else {
		snprintf(l->why[SIG_TICK], sizeof(l->why[0]),
			 "off: perf_event_open(cpu-clock): %s",
			 strerror(first_err ? -first_err : ENODEV));
	}
}

static int chmod_pins(const char *dir)
{
	static const char *const names[] = {
	    NP_BPF_MAP_POLICY,	 NP_BPF_MAP_CPU_OWNER, NP_BPF_MAP_CPU_TOPO,
	    NP_BPF_MAP_COUNTERS, NP_BPF_MAP_SLOTS,     NP_BPF_MAP_INTRUDERS,
	    NP_BPF_MAP_INFO,	 NP_BPF_MAP_EVENTS,    NP_BPF_MAP_RATE,
	    NP_BPF_MAP_EPISODES, NP_BPF_MAP_CPU_INTRUDE,
	};
	char p[4096];
	int r = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		int n = snprintf(p, sizeof(p), "%s/%s", dir, names[i]);

		if (n < 0 || (size_t)n >= sizeof(p)) {
			if (!r)
				r = -ENAMETOOLONG;
			continue;
		}
		if (chmod(p, 0600) && !r)
			r = -errno;
	}
	if (chmod(dir, 0700) && !r)
		r = -errno;
	return r;
}

#define WHY(l, sig, ...)                                                       \
	snprintf((l)->why[sig], sizeof((l)->why[0]), __VA_ARGS__)

/* What the kernel's BTF says: balancer tracepoints, task_numa_fault. */
static int probe_btf(bool *balancer, bool *has_fault, char *err, size_t errlen)
{
	struct btf *vm = btf__load_vmlinux_btf();
	int r;

	if (!vm) {
		r = -errno;
		NP_ERR(
		    "kernel BTF (/sys/kernel/btf/vmlinux): %s; numaplace's BPF "
		    "programs need CONFIG_DEBUG_INFO_BTF=y",
		    strerror(-r));
		return r;
	}
	*balancer = btf_has(vm, "btf_trace_sched_move_numa", BTF_KIND_TYPEDEF);
	*has_fault = btf_has(vm, "task_numa_fault", BTF_KIND_FUNC);
	btf__free(vm);
	return 0;
}

/*
 * Load with the NUMA-fault hook as fentry, else as a kprobe, else off: the
 * first the kernel accepts. fail[m] says why mode m was not taken. Returns
 * the mode loaded, or a negative errno (err says why the last one failed).
 */
static int load_first(struct np_bpf_loader *l, const struct np_bpf_load_opts *o,
		      const char *pin_dir, bool balancer, bool has_fault,
		      char *warn, size_t wlen, char fail[3][300], char *err,
		      size_t errlen)
{
	int r = -EINVAL;

	for (int m = FAULT_FENTRY; m <= FAULT_OFF; m++) {
		if (m != FAULT_OFF && !has_fault) {
			snprintf(fail[m], sizeof(fail[0]),
				 "task_numa_fault not in kernel BTF "
				 "(CONFIG_NUMA_BALANCING off?)");
			continue;
		}
		if (m == FAULT_KPROBE && !kprobes_available()) {
			snprintf(fail[m], sizeof(fail[0]),
				 "kprobes not available (CONFIG_KPROBES off)");
			continue;
		}
		last_libbpf[0] = 0;
		r = open_and_load(l, o, pin_dir, m, balancer, warn, wlen);
		if (!r)
			return m;
		/* Bounded: the kernel's reason is kept, the tail of a long
		 * libbpf line is not needed in a status line. */
		snprintf(fail[m], sizeof(fail[0]), "%s%s%.200s", strerror(-r),
			 last_libbpf[0] ? ": " : "", last_libbpf);
	}
	NP_ERR("loading the BPF programs failed: %s", fail[FAULT_OFF]);
	return r;
}

static void describe_fault(struct np_bpf_loader *l, enum fault_mode m,
			   char fail[3][300])
{
	if (m == FAULT_FENTRY)
		WHY(l, SIG_FAULT, "active: fentry/task_numa_fault");
	else if (m == FAULT_KPROBE)
		WHY(l, SIG_FAULT,
		    "active: kprobe/task_numa_fault (fentry refused: %.150s)",
		    fail[FAULT_FENTRY]);
	else
		WHY(l, SIG_FAULT, "off: fentry refused (%.80s); kprobe: %.80s",
		    fail[FAULT_FENTRY], fail[FAULT_KPROBE]);
	if (m != FAULT_OFF)
		l->signals |= NP_BPF_SIG_FAULT;
}

/* The signals that come with an attached skeleton, and the kernel's NUMA
 * balancing mode (no hinting faults without it). */
static void describe_attached(struct np_bpf_loader *l, bool balancer)
{
	int nb;

	l->signals |= NP_BPF_SIG_SWITCH | NP_BPF_SIG_MIGRATE |
		      NP_BPF_SIG_AUDIT | NP_BPF_SIG_IRQ;
	WHY(l, SIG_SWITCH, "active: tp_btf/sched_switch");
	WHY(l, SIG_IRQ,
	    "active: tp_btf/irq_handler_{entry,exit}, "
	    "tp_btf/softirq_{entry,exit}");
	WHY(l, SIG_MIGRATE, "active: tp_btf/sched_migrate_task");
	WHY(l, SIG_AUDIT, "active: iter/task");
	if (balancer) {
		l->signals |= NP_BPF_SIG_BALANCER;
		WHY(l, SIG_BALANCER,
		    "active: tp_btf/sched_{move,swap,stick}_numa");
	} else {
		WHY(l, SIG_BALANCER,
		    "off: the kernel has no sched_move_numa tracepoint "
		    "(CONFIG_NUMA_BALANCING off)");
	}
	nb = np_numa_balancing_mode();
	if (nb > 0) {
		l->signals |= NP_BPF_SIG_NUMA_BALANCING;
		WHY(l, SIG_NUMA_BALANCING, "on (kernel.numa_balancing=%d)", nb);
	} else {
		WHY(l, SIG_NUMA_BALANCING,
		    "off: kernel.numa_balancing=%d, so no hinting faults "
		    "are taken and numa_fault counts nothing (sysctl -w "
		    "kernel.numa_balancing=1 to measure)",
		    nb < 0 ? -1 : nb);
	}
}

/* The map fds (owned by the skeleton) for np_bpf_loader_maps(). */
static void fill_maps(struct np_bpf_loader *l, const struct np_bpf_load_opts *o)
{
	np_bpf_maps_init(&l->maps);
	l->maps.policy = bpf_map__fd(l->skel->maps.np_policy);
	l->maps.cpu_owner = bpf_map__fd(l->skel->maps.np_cpu_owner);
	l->maps.cpu_topo = bpf_map__fd(l->skel->maps.np_cpu_topo);
	l->maps.counters = bpf_map__fd(l->skel->maps.np_counters);
	l->maps.slots = bpf_map__fd(l->skel->maps.np_slots);
	l->maps.intruders = bpf_map__fd(l->skel->maps.np_intruders);
	l->maps.info = bpf_map__fd(l->skel->maps.np_info);
	l->maps.events = bpf_map__fd(l->skel->maps.np_events);
	l->maps.rate = bpf_map__fd(l->skel->maps.np_rate);
	l->maps.cpu_intrude = bpf_map__fd(l->skel->maps.np_cpu_intrude);
	l->maps.ncpus = libbpf_num_possible_cpus();
	l->maps.nslots = o->nslots;
}

int np_bpf_load(struct np_bpf_loader **out, const struct np_bpf_load_opts *o,
		char *err, size_t errlen)
{
	_cleanup_free_ struct np_bpf_loader *l = calloc(1, sizeof(*l));
	char pin_dir[4096], warn[1024] = "", fail[3][300] = {"", "", ""};
	bool balancer = false, has_fault = false;
	int r, mode;

	if (!l)
		return -ENOMEM;
	libbpf_verbose = o->verbose;
	libbpf_set_print(libbpf_print);
	if (!o->nslots || o->nslots > 1u << 20) {
		NP_ERR("verify.max_workloads: %u is out of range 1..1048576",
		       o->nslots);
		return -EINVAL;
	}
	if ((r = np_bpf_pin_dir(pin_dir, sizeof(pin_dir), o->pin_path)) ||
	    (r = np_mkdir_p(pin_dir, 0700))) {
		NP_ERR("bpf_pin_path %s: %s (is bpffs mounted at /sys/fs/bpf?)",
		       pin_dir, strerror(-r));
		return r;
	}
	if ((r = probe_btf(&balancer, &has_fault, err, errlen)))
		return r;
	mode = load_first(l, o, pin_dir, balancer, has_fault, warn,
			  sizeof(warn), fail, err, errlen);
	if (mode < 0)
		return mode;
	describe_fault(l, mode, fail);
	r = numaplace_bpf__attach(l->skel);
	if (r) {
		NP_ERR("attaching the BPF programs failed: %s%s%s",
		       strerror(-r), last_libbpf[0] ? ": " : "", last_libbpf);
		np_bpf_unload(np_take_ptr(l));
		return r;
	}
	describe_attached(l, balancer);
	attach_ticks(l, o->tick_hz);
	l->tick_hz = o->tick_hz;
	if (warn[0])
		NP_ERR("%s", warn); /* not an error: the caller logs it */
	else if (err && errlen)
		err[0] = 0;
	(void)chmod_pins(pin_dir);
	fill_maps(l, o);
	l->parent_cgid = o->parent_cgid;
	l->started_ns = realtime_ns();
	*out = np_take_ptr(l);
	return 0;
}

void np_bpf_unload(struct np_bpf_loader *l)
{
	if (!l)
		return;
	ring_buffer__free(l->rb);
	for (int c = 0; c < l->ntick; c++)
		bpf_link__destroy(l->tick_links[c]);
	free(l->tick_links);
	/* Programs detach; pinned maps stay for `numaplace violations`. */
	numaplace_bpf__destroy(l->skel);
	free(l);
}

const struct np_bpf_maps *np_bpf_loader_maps(const struct np_bpf_loader *l)
{
	return &l->maps;
}

unsigned np_bpf_loader_signals(const struct np_bpf_loader *l)
{
	return l->signals;
}

const char *np_bpf_signal_why(const struct np_bpf_loader *l, int i)
{
	return i >= 0 && i < NP_BPF_NSIGNALS ? l->why[i] : "";
}

json_t *np_bpf_signals_json(const struct np_bpf_loader *l)
{
	json_t *o = json_object();
	for (int i = 0; i < NP_BPF_NSIGNALS; i++)
		json_object_set_new(
		    o, np_bpf_signal_names[i],
		    json_string(l->why[i][0] ? l->why[i] : "off"));
	return o;
}

int np_bpf_audit(struct np_bpf_loader *l, np_bpf_audit_cb cb, void *ctx)
{
	struct bpf_link *link = l->skel->links.np_audit;
	struct np_bpf_audit_rec rec;
	size_t have = 0;
	int fd, r = 0;
	ssize_t n;

	if (!link)
		return -ENOENT;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	/* Records may be split across reads. */
	for (;;) {
		n = read(fd, (char *)&rec + have, sizeof(rec) - have);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have == sizeof(rec)) {
			cb(&rec, ctx);
			have = 0;
		}
	}
	close(fd);
	return r;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct np_bpf_loader *l = ctx;
	if (size >= sizeof(struct np_bpf_event) && l->ev_cb)
		l->ev_cb(data, l->ev_ctx);
	return 0;
}

int np_bpf_poll_events(struct np_bpf_loader *l, np_bpf_event_cb cb, void *ctx)
{
	if (!l->rb) {
		l->rb = ring_buffer__new(l->maps.events, on_event, l, NULL);
		if (!l->rb)
			return -errno;
	}
	l->ev_cb = cb;
	l->ev_ctx = ctx;
	return ring_buffer__consume(l->rb);
}

int np_bpf_info_update(struct np_bpf_loader *l, uint32_t daemon_pid)
{
	struct np_bpf_info info = {
	    .abi = NP_BPF_ABI_VERSION,
	    .nslots = l->maps.nslots,
	    .signals = l->signals,
	    .daemon_pid = daemon_pid,
	    .parent_cgid = l->parent_cgid,
	    .started_ns = l->started_ns,
	    .updated_ns = realtime_ns(),
	    .tick_hz = (l->signals & NP_BPF_SIG_TICK) ? l->tick_hz : 0,
	};
	__u32 k = 0;

	return bpf_map_update_elem(l->maps.info, &k, &info, BPF_ANY) ? -errno
								     : 0;
}

int np_bpf_outside_set(struct np_bpf_loader *l, uint64_t levels)
{
	struct bpf_map *map = l->skel->maps.np_miss;
	size_t stride = (bpf_map__value_size(map) + 7) & ~(size_t)7;
	int ncpu = libbpf_num_possible_cpus();
	_cleanup_free_ void *zeros = NULL;
	__u32 key = 0;

	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	zeros = calloc((size_t)ncpu, stride);
	if (!zeros)
		return -ENOMEM;
	/* The np_policy entries are written (the caller's syscalls came
	 * first); the levels, then the generation, each one store: a verdict
	 * reached before the bump is not cached, and what is cached is gone
	 * after the clear. */
	__atomic_store_n(&l->skel->bss->np_outside_levels, levels,
			 __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&l->skel->bss->np_miss_gen, 1, __ATOMIC_SEQ_CST);
	if (bpf_map_update_elem(bpf_map__fd(map), &key, zeros, BPF_ANY))
		return -errno;
	return 0;
}

int np_bpf_prog_stats(const struct np_bpf_loader *l, const char *name,
		      uint64_t *run_ns, uint64_t *run_cnt)
{
	struct bpf_program *p =
	    bpf_object__find_program_by_name(l->skel->obj, name);
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd;

	if (!p)
		return -ENOENT;
	fd = bpf_program__fd(p);
	if (fd < 0)
		return -ENOENT; /* not loaded (disabled on this kernel) */
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*run_ns = info.run_time_ns;
	*run_cnt = info.run_cnt;
	return 0;
}

int np_bpf_prog_list(const struct np_bpf_loader *l, struct np_bpf_prog_ref *out,
		     int max)
{
	struct bpf_program *p;
	int n = 0;

	if (!l)
		return 0;
	bpf_object__for_each_program(p, l->skel->obj) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(p);

		if (n == max)
			break;
		if (fd < 0)
			continue; /* not loaded on this kernel */
		memset(&info, 0, sizeof(info));
		if (bpf_obj_get_info_by_fd(fd, &info, &len))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s",
			 bpf_program__name(p));
		out[n].run_ns = info.run_time_ns;
		out[n].run_cnt = info.run_cnt;
		out[n++].id = info.id;
	}
	return n;
}
