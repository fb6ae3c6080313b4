// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace violations: the verification counters, read straight from the
 * pinned BPF maps (so it works while numaplaced is down), summed over CPUs.
 */
#include "cli.h"
#include "numaplace/error.h"
#include "numaplace/bpf_load.h"
#include "numaplace/bpf_maps.h"
#include "numaplace/cgroup.h"
#include "numaplace/cgroup_id.h"
#include "numaplace/config.h"
#include "stop_signal.h"
#include "violations_kinds.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOP 5
#define DEFAULT_PIN_PATH "/sys/fs/bpf/numaplace"

static void violations_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace violations [--json] [--watch [SECONDS]] "
	    "[--pin-path DIR] [--all]\n"
	    "                            [--per-cpu] [--config FILE] "
	    "[WORKLOAD...]\n"
	    "\n"
	    "Per workload (every one, or the named ones), from the pinned BPF\n"
	    "maps in <bpf_pin_path>/%s, summed over CPUs: switches and time\n"
	    "outside its CPUs, transitions (settle window, not violations),\n"
	    "migrations (across L3, across NUMA nodes, to a disallowed CPU),\n"
	    "intrusions on its exclusive CPUs by source with the top\n"
	    "intruders and by kind (user task, kernel thread, hardirq,\n"
	    "softirq: what each suggests), NUMA hinting fault pages (local,\n"
	    "remote, outside its memory nodes), NUMA balancer moves,\n"
	    "samples. \"-\" is zero; a line with nothing to show is left\n"
	    "out. Works while numaplaced is stopped. Needs root.\n"
	    "\n"
	    "  -j, --json           one JSON object (one line per interval "
	    "with\n"
	    "                       --watch, with \"delta\" objects)\n"
	    "  -w, --watch [S]      redraw every S seconds (default 2, "
	    "0.1..3600):\n"
	    "                       totals and (+deltas) since the last "
	    "screen\n"
	    "  -p, --pin-path DIR   bpf_pin_path (default: from the config, "
	    "else\n"
	    "                       %s)\n"
	    "  -a, --all            every line, also all-zero ones, and every\n"
	    "                       intruder instead of the top %d\n"
	    "  -C, --per-cpu        intrusions by kind per exclusive CPU too\n"
	    "                       (always in --json: \"cpus\")\n"
	    "  -c, --config FILE    numaplaced's config, for bpf_pin_path\n"
	    "                       (default %s)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Exit: 0 read (violations or not; --watch: until SIGINT); 1 the "
	    "pins\n"
	    "      cannot be read or a named workload is not there; 2 bad "
	    "usage.\n",
	    NP_BPF_PIN_SUBDIR, DEFAULT_PIN_PATH, TOP, NP_CONFIG_DEFAULT_PATH);
}

struct view {
	const struct np_bpf_maps *m;
	const char *mnt; /* cgroup2 mount, NULL when there is none */
	unsigned tick_hz;
	bool all, watch, per_cpu;
};

static bool wanted(const char *name, char **names, int nnames)
{
	if (!nnames)
		return true;
	for (int i = 0; i < nnames; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

static double ratio(const struct np_bpf_counters *c)
{
	uint64_t all = c->fault_pages_local + c->fault_pages_remote;
	return all ? (double)c->fault_pages_remote / (double)all : 0;
}

static void intruder_cgroup(const struct view *v, uint64_t id, char *out,
			    size_t len)
{
	if (!v->mnt && id != NP_CGROUP_ROOT_ID) {
		out[0] = 0;
		return;
	}
	if (np_cgroup_id_path(id, v->mnt, out, len))
		out[0] = 0;
}

static json_t *counters_json(const struct np_bpf_counters *c)
{
	json_t *o = json_object();
	const __u64 *x = (const __u64 *)c;
	for (size_t k = 0; k < NP_BPF_NCOUNTERS; k++)
		json_object_set_new(o, np_bpf_counter_names[k],
				    json_integer((json_int_t)x[k]));
	return o;
}

/* Top intruders (or every one with --all): *out is allocated. */
static int intruders(const struct view *v, uint32_t slot,
		     struct np_bpf_intruder **out)
{
	int max = v->all ? NP_BPF_INTRUDER_ENTRIES : TOP;
	int n;

	*out = calloc((size_t)max, sizeof(**out));
	if (!*out)
		return -ENOMEM;
	n = np_bpf_intruders_top(v->m, slot, *out, max);
	return n;
}

static json_t *intruders_json(const struct view *v, uint32_t slot)
{
	struct np_bpf_intruder *top;
	json_t *a = json_array();
	int n = intruders(v, slot, &top);

	for (int i = 0; i < n; i++) {
		char comm[NP_BPF_COMM_LEN + 1], path[4096];
		memcpy(comm, top[i].key.comm, NP_BPF_COMM_LEN);
		comm[NP_BPF_COMM_LEN] = 0;
		intruder_cgroup(v, top[i].key.cgid, path, sizeof(path));
		uint32_t ik = top[i].key.kind == NP_BPF_INTRUDER_KTHREAD
				  ? NP_BPF_IK_KTHREAD
				  : NP_BPF_IK_USER;
		json_array_append_new(
		    a, json_pack(
			   "{s:s,s:s,s:s,s:I,s:o,s:I,s:I,s:i,s:i}", "comm", comm,
			   "kind", np_bpf_intruder_kind_name(top[i].key.kind),
			   "intrude_kind", np_bpf_intrude_kind_name(ik),
			   "cgroup_id", (json_int_t)top[i].key.cgid, "cgroup",
			   path[0] ? json_string(path) : json_null(),
			   "switches", (json_int_t)top[i].val.switches, "ticks",
			   (json_int_t)top[i].val.ticks, "last_pid",
			   (int)top[i].val.last_pid, "last_cpu",
			   (int)top[i].val.last_cpu));
	}
	free(top);
	return a;
}

/* ---- plain output -------------------------------------------------------- */

/* One "label value" pair: "-" for zero, "(+d)" for a change in --watch. */
static void put(const char *label, uint64_t total, uint64_t delta, bool watch)
{
	printf("  %s ", label);
	if (total)
		printf("%llu", (unsigned long long)total);
	else
		printf("-");
	if (watch && delta)
		printf(" (+%llu)", (unsigned long long)delta);
}

struct field {
	const char *label;
	size_t off;
};

#define F(label, member)                                                       \
	{                                                                      \
		label, offsetof(struct np_bpf_counters, member)                \
	}

static uint64_t get(const struct np_bpf_counters *c, size_t off)
{
	return *(const uint64_t *)((const char *)c + off);
}

/* A line of fields, left out when all are zero (unless --all). */
static bool line(const struct view *v, const char *title, const struct field *f,
		 size_t nf, const struct np_bpf_counters *c,
		 const struct np_bpf_counters *d)
{
	bool any = v->all;

	for (size_t i = 0; i < nf; i++)
		any |= get(c, f[i].off) != 0;
	if (!any)
		return false;
	printf("  %-12s", title);
	for (size_t i = 0; i < nf; i++)
		put(f[i].label, get(c, f[i].off), get(d, f[i].off), v->watch);
	return true;
}

static void seconds(const struct view *v, uint64_t ticks)
{
	if (v->tick_hz && ticks)
		printf(" (~%.2f s)", (double)ticks / v->tick_hz);
}

static void print_block(const struct view *v, const struct np_bpf_slot_row *r,
			const struct np_bpf_counters *d)
{
	static const struct field outside[] = {F("switches", run_outside),
					       F("ticks", run_outside_ticks)};
	static const struct field trans[] = {F("events", transition)};
	static const struct field migr[] = {
	    F("all", migrations), F("x-L3", migrate_xl3),
	    F("x-NUMA", migrate_xnuma), F("disallowed", migrate_disallowed)};
	static const struct field intr[] = {
	    F("workload", intrude_workload), F("cgroup", intrude_cgroup),
	    F("kthread", intrude_kthread), F("intruder-ticks", intrude_ticks)};
	static const struct field faults[] = {
	    F("faults", faults), F("pages local", fault_pages_local),
	    F("remote", fault_pages_remote),
	    F("outside-mems", fault_pages_outside_mems)};
	static const struct field bal[] = {F("moves", numa_move),
					   F("swaps", numa_swap),
					   F("sticks", numa_stick)};
	static const struct field smp[] = {F("sent", samples),
					   F("dropped", samples_dropped)};
	const struct np_bpf_counters *c = &r->c;
	struct np_bpf_kinds kt, kd;
	struct np_bpf_intruder *top;
	bool shown = false;
	int n;

	printf("%s  cgroup %s (id %llu)  slot %u  gen %u  %u CPU(s)%s\n",
	       r->s.name, r->s.cgroup, (unsigned long long)r->s.cgid, r->slot,
	       r->s.gen, r->s.ncpus,
	       np_bpf_counters_any_violation(c) ? "  VIOLATION" : "");
	if (line(v, "ran outside", outside, 2, c, d)) {
		seconds(v, c->run_outside_ticks);
		printf("\n");
		shown = true;
	}
	if (line(v, "transition", trans, 1, c, d)) {
		printf("  (settle window: not violations)\n");
		shown = true;
	}
	if (line(v, "migrations", migr, 4, c, d)) {
		printf("\n");
		shown = true;
	}
	if (line(v, "intrusions", intr, 4, c, d)) {
		seconds(v, c->intrude_ticks);
		printf("\n");
		shown = true;
	}
	n = intruders(v, r->slot, &top);
	for (int i = 0; i < n; i++) {
		char path[4096];
		intruder_cgroup(v, top[i].key.cgid, path, sizeof(path));
		printf("    %-8s '%.16s' cgroup %s (id %llu): %llu switch(es), "
		       "%llu tick(s), "
		       "last pid %u on CPU %u\n",
		       np_bpf_intruder_kind_name(top[i].key.kind),
		       top[i].key.comm, path[0] ? path : "?",
		       (unsigned long long)top[i].key.cgid,
		       (unsigned long long)top[i].val.switches,
		       (unsigned long long)top[i].val.ticks,
		       top[i].val.last_pid, top[i].val.last_cpu);
		shown = true;
	}
	free(top);
	np_bpf_kinds_of_counters(&kt, c);
	np_bpf_kinds_of_counters(&kd, d);
	shown |= vk_print(&kt, &kd, v->all, v->watch, v->tick_hz);
	if (v->per_cpu) {
		vk_print_cpus(v->m, r->slot, v->tick_hz);
		shown = true;
	}
	if (line(v, "NUMA faults", faults, 4, c, d)) {
		if (c->fault_pages_local + c->fault_pages_remote)
			printf("  remote-ratio %.2f", ratio(c));
		else
			printf("  remote-ratio -");
		printf("\n");
		shown = true;
	}
	if (line(v, "balancer", bal, 3, c, d)) {
		printf("\n");
		shown = true;
	}
	if (line(v, "samples", smp, 2, c, d)) {
		printf("\n");
		shown = true;
	}
	if (!shown)
		printf("  nothing counted\n");
}

/* ---- the command --------------------------------------------------------- */

static int pin_path_from_config(const char *cfg, bool explicit, char *out,
				size_t len)
{
	struct np_config c;
	char err[1024];

	if (!explicit && access(cfg, F_OK))
		return -ENOENT; /* no config: the default pin path */
	if (np_config_load(&c, cfg, err, sizeof(err))) {
		if (explicit) {
			fprintf(stderr,
				"numaplace violations: --config %s: %s\n", cfg,
				err);
			return -EINVAL;
		}
		fprintf(stderr,
			"numaplace violations: warning: %s: %s; using "
			"%s (--pin-path to choose)\n",
			cfg, err, DEFAULT_PIN_PATH);
		return -ENOENT;
	}
	snprintf(out, len, "%s", c.bpf_pin_path);
	return 0;
}

static void open_error(int r, const char *err)
{
	/* err names the pin and, for ENOENT and EPERM/EACCES, the cause
	 * (BPF programs not loaded; needs root) */
	fprintf(stderr, "numaplace violations: %s\n", err);
	if (r == -ENOENT)
		fprintf(
		    stderr,
		    "  Is numaplaced running with verify.enabled on? Does the "
		    "kernel have BTF\n  (/sys/kernel/btf/vmlinux)? Is bpffs "
		    "mounted on /sys/fs/bpf? `numaplace status`\n  shows the "
		    "verification state, its log says why it is off.\n");
}

/* np_info keeps the pid of a daemon that was killed (no clean stop clears
 * it), and pids are reused: the process must also be a numaplaced. */
static bool daemon_running(uint32_t pid)
{
	char path[64], comm[32] = "";
	FILE *f;
	bool ok;

	if (!pid)
		return false;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(comm, sizeof(comm), f) && !strcmp(comm, "numaplaced\n");
	fclose(f);
	return ok;
}

struct args {
	const char *cfg, *pin;
	bool json, cfg_given;
	double watch; /* seconds, 0: once */
	char **names; /* the WORKLOAD operands */
	int nnames;
};

/* A word that is meant as a number: a digit or a point first, or after
 * one sign ("-1" is a bad --watch value, not an option -1). */
static bool numeric_word(const char *w)
{
	if (*w == '-' || *w == '+')
		w++;
	return (*w >= '0' && *w <= '9') || *w == '.';
}

/* --watch [S]: "--watch 5" as well as "--watch=5" (and "--watch -1", an
 * error naming --watch); 0 or an exit code. */
static int parse_watch(struct args *a, int argc, char **argv)
{
	const char *s = optarg;
	char *end;

	if (!s && optind < argc && numeric_word(argv[optind]))
		s = argv[optind++];
	a->watch = s ? strtod(s, &end) : 2;
	if (s && (end == s || *end || !(a->watch >= 0.1) || a->watch > 3600)) {
		fprintf(stderr,
			"numaplace violations: --watch: "
			"expected seconds 0.1..3600, got \"%s\"\n",
			s);
		return NP_EXIT_USAGE;
	}
	return 0;
}

/* The options and operands: -1 to go on, else the exit code. */
static int parse_args(struct args *a, struct view *v, int argc, char **argv)
{
	static const struct option opts[] = {
	    {"json", no_argument, NULL, 'j'},
	    {"watch", optional_argument, NULL, 'w'},
	    {"pin-path", required_argument, NULL, 'p'},
	    {"all", no_argument, NULL, 'a'},
	    {"per-cpu", no_argument, NULL, 'C'},
	    {"config", required_argument, NULL, 'c'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "jw::p:aCc:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			a->json = true;
			break;
		case 'w':
			if (parse_watch(a, argc, argv))
				return NP_EXIT_USAGE;
			break;
		case 'p':
			a->pin = optarg;
			break;
		case 'a':
			v->all = true;
			break;
		case 'C':
			v->per_cpu = true;
			break;
		case 'c':
			a->cfg = optarg;
			a->cfg_given = true;
			break;
		default:
			return cli_usage(violations_usage, c);
		}
	}
	a->names = argv + optind;
	a->nnames = argc - optind;
	for (int i = 0; i < a->nnames; i++)
		if (!a->names[i][0] || strlen(a->names[i]) >= NP_BPF_NAME_LEN) {
			fprintf(stderr,
				"numaplace violations: WORKLOAD: \"%s\" is "
				"not a workload name (1..%d bytes)\n",
				np_echo(a->names[i]), NP_BPF_NAME_LEN - 1);
			return NP_EXIT_USAGE;
		}
	return -1;
}

/* The pin directory (dir) from --pin-path, the config or the default:
 * -1 to go on, else the exit code. */
static int pin_dir(const struct args *a, char *dir, size_t len)
{
	const char *pin = a->pin;
	char pin_buf[4096];
	int r;

	if (!pin) {
		r = pin_path_from_config(a->cfg, a->cfg_given, pin_buf,
					 sizeof(pin_buf));
		if (r == -EINVAL)
			return NP_EXIT_FAIL;
		if (r)
			snprintf(pin_buf, sizeof(pin_buf), "%s",
				 DEFAULT_PIN_PATH);
		pin = pin_buf;
	}
	if (pin[0] != '/') {
		fprintf(stderr,
			"numaplace violations: --pin-path: \"%s\" must "
			"be an absolute path\n",
			np_echo(pin));
		return NP_EXIT_USAGE;
	}
	if (np_bpf_pin_dir(dir, len, pin)) {
		fprintf(stderr,
			"numaplace violations: --pin-path: \"%s\" is too "
			"long\n",
			np_echo(pin));
		return NP_EXIT_USAGE;
	}
	return -1;
}

/* Every named workload is in rows (checked at the start only: later one
 * may be released while watching). */
static bool names_present(const struct args *a, const struct np_bpf_slot_row *rows, int n,
			  const char *dir)
{
	for (int k = 0; k < a->nnames; k++) {
		bool found = false;
		for (int i = 0; i < n; i++)
			found |= !strcmp(rows[i].s.name, a->names[k]);
		if (!found) {
			fprintf(stderr,
				"numaplace violations: no workload "
				"named \"%s\" in %s/%s\n",
				a->names[k], dir, NP_BPF_MAP_SLOTS);
			return false;
		}
	}
	return true;
}

/* "DIR: numaplaced running (pid N); signals: ..." and, with --watch, the
 * time of this screen. */
static void print_header(const struct view *v, const struct args *a,
			 const char *dir, const struct np_bpf_info *info,
			 bool running, const json_t *sg, bool first)
{
	if (v->watch && isatty(STDOUT_FILENO))
		printf("\033[H\033[2J");
	else if (v->watch && !first)
		printf("----\n");
	printf("%s: numaplaced ", dir);
	if (running)
		printf("running (pid %u)", info->daemon_pid);
	else
		printf("not running (counts up to its last stop)");
	printf(running ? "; signals:" : "; signals when it ran:");
	for (size_t i = 0; i < json_array_size(sg); i++)
		printf(" %s", json_string_value(json_array_get(sg, i)));
	if (!json_array_size(sg))
		printf(" none");
	if (v->watch) {
		char tb[16];
		time_t now = time(NULL);
		struct tm tm;
		localtime_r(&now, &tm);
		strftime(tb, sizeof(tb), "%H:%M:%S", &tm);
		printf("\n%s, every %g s; (+N): since the %s", tb, a->watch,
		       first ? "start" : "last screen");
	}
	printf("\n\n");
}

/* What row r counted since the last screen (all of it when it is new). */
static void row_delta(const struct np_bpf_slot_row *r, const struct np_bpf_slot_row *prev, int nprev,
		      bool first, struct np_bpf_counters *d)
{
	bool have_prev = false;

	memset(d, 0, sizeof(*d));
	for (int k = 0; k < nprev; k++)
		if (prev[k].slot == r->slot && prev[k].s.cgid == r->s.cgid &&
		    !strcmp(prev[k].s.name, r->s.name)) {
			np_bpf_counters_delta(d, &r->c, &prev[k].c);
			have_prev = true;
		}
	/* a workload that appeared since the last screen: everything it has
	 * is new */
	if (!have_prev && !first)
		*d = r->c;
}

static json_t *row_json(const struct view *v, const struct np_bpf_slot_row *r,
			const struct np_bpf_counters *d, bool first)
{
	json_t *w = json_pack(
	    "{s:s,s:s,s:I,s:i,s:i,s:i,s:o,s:f,s:b,s:o}", "name", r->s.name,
	    "cgroup", r->s.cgroup, "cgroup_id", (json_int_t)r->s.cgid, "slot",
	    (int)r->slot, "gen", (int)r->s.gen, "cpus", (int)r->s.ncpus,
	    "counters", counters_json(&r->c), "remote_fault_ratio",
	    ratio(&r->c), "violation", np_bpf_counters_any_violation(&r->c),
	    "top_intruders", intruders_json(v, r->slot));

	struct np_bpf_kinds k;

	np_bpf_kinds_of_counters(&k, &r->c);
	json_object_set_new(w, "intrusions_by_kind", vk_kinds_json(&k, false));
	json_object_set_new(w, "cpus", vk_cpus_json(v->m, r->slot));
	if (v->watch)
		json_object_set_new(w, "delta",
				    first ? json_null() : counters_json(d));
	return w;
}

/* One screen (or JSON object) from the maps. rows (*prev on return) are
 * what the next screen's deltas are counted from. 0, or an exit code. */
static int show(struct view *v, const struct args *a, const char *dir,
		bool first, struct np_bpf_slot_row **prev, int *nprev)
{
	struct np_bpf_info info = {0};
	struct np_bpf_slot_row *rows = NULL;
	json_t *o = NULL, *ws = NULL, *sg;
	int n = 0, shown = 0;
	__u32 zero = 0;
	bool running;

	if (bpf_map_lookup_elem(v->m->info, &zero, &info))
		memset(&info, 0, sizeof(info));
	running = daemon_running(info.daemon_pid);
	v->tick_hz = info.tick_hz;
	if ((n = np_bpf_slots_read(v->m, &rows)) < 0) {
		fprintf(stderr, "numaplace violations: out of memory\n");
		return NP_EXIT_FAIL;
	}
	if (first && !names_present(a, rows, n, dir)) {
		free(rows);
		return NP_EXIT_FAIL;
	}
	sg = json_array();
	for (int i = 0; i < NP_BPF_NSIGNALS; i++)
		if (info.signals & (1u << i))
			json_array_append_new(
			    sg, json_string(np_bpf_signal_names[i]));
	if (a->json) {
		ws = json_array();
		o = json_pack("{s:s,s:i,s:b,s:o,s:i,s:o}", "pin_dir", dir,
			      "daemon_pid", (int)info.daemon_pid,
			      "daemon_running", running, "signals", sg,
			      "tick_hz", (int)info.tick_hz, "workloads", ws);
		if (v->watch)
			json_object_set_new(o, "time",
					    json_real((double)time(NULL)));
	} else {
		print_header(v, a, dir, &info, running, sg, first);
		json_decref(sg);
	}
	for (int i = 0; i < n; i++) {
		struct np_bpf_counters d;
		if (!wanted(rows[i].s.name, a->names, a->nnames))
			continue;
		row_delta(&rows[i], *prev, *nprev, first, &d);
		shown++;
		if (a->json) {
			json_array_append_new(ws,
					      row_json(v, &rows[i], &d, first));
		} else {
			print_block(v, &rows[i], &d);
			printf("\n");
		}
	}
	if (a->json) {
		char *s =
		    json_dumps(o, v->watch ? JSON_COMPACT : JSON_INDENT(2));
		printf("%s\n", s ? s : "{}");
		free(s);
		json_decref(o);
	} else if (!shown) {
		printf("no workloads are being verified%s\n",
		       a->nnames ? " by those names" : "");
	}
	fflush(stdout);
	free(*prev);
	*prev = rows;
	*nprev = n;
	return 0;
}

/* Sleep for seconds, or until SIGINT/SIGTERM. */
static void pause_for(double seconds)
{
	struct timespec ts = {
	    (time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};

	while (!stop && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

int cmd_violations(int argc, char **argv)
{
	struct args a = {.cfg = NP_CONFIG_DEFAULT_PATH};
	char dir[4200], err[1024], mnt[4096];
	struct np_bpf_maps m;
	struct view v = {0};
	struct np_bpf_slot_row *prev = NULL;
	int nprev = 0, r, rc = NP_EXIT_OK;

	if ((r = parse_args(&a, &v, argc, argv)) >= 0 ||
	    (r = pin_dir(&a, dir, sizeof(dir))) >= 0)
		return r;
	r = np_bpf_maps_open_pinned(&m, dir, err, sizeof(err));
	if (r) {
		open_error(r, err);
		return NP_EXIT_FAIL;
	}
	v.m = &m;
	v.mnt = np_cgroup2_mount_find(NULL, mnt, sizeof(mnt)) ? NULL : mnt;
	v.watch = a.watch > 0;
	stop_on_signals();
	for (bool first = true;; first = false) {
		if ((rc = show(&v, &a, dir, first, &prev, &nprev)))
			break;
		if (!v.watch || stop)
			break;
		pause_for(a.watch);
		if (stop)
			break;
	}
	free(prev);
	np_bpf_maps_close(&m);
	return rc;
}
