// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace violations: the verification counters, read straight from the
 * pinned BPF maps (so it works while numaplaced is down), summed over CPUs.
 */
#include "cli.h"
#include "numaplace/bpf_load.h"
#include "numaplace/bpf_maps.h"
#include "numaplace/config.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TOP 5

static volatile sig_atomic_t stop;

static void on_sigint(int sig)
{
	(void)sig;
	stop = 1;
}

static void violations_usage(FILE *f)
{
	fprintf(f,
		"usage: numaplace violations [--json] [--watch [SECONDS]] "
		"[--pin-path DIR] [--config FILE] [WORKLOAD...]\n"
		"\n"
		"Per workload, from the pinned BPF maps (<bpf_pin_path>/%s):\n"
		"time and switches outside its CPUs, migrations (across L3,\n"
		"across NUMA nodes, to a disallowed CPU), intrusions on its\n"
		"exclusive CPUs by source with the top intruders, NUMA hinting\n"
		"faults (local, remote, outside its memory nodes), NUMA balancer\n"
		"moves. Works while numaplaced is stopped. Needs root.\n"
		"\n"
		"  -j, --json           one JSON object (per interval with --watch)\n"
		"  -w, --watch [S]      redraw every S seconds (default 2): deltas\n"
		"  -p, --pin-path DIR   bpf_pin_path (default: from the config, else\n"
		"                       /sys/fs/bpf/numaplace)\n"
		"  -c, --config FILE    numaplaced's config (default %s)\n"
		"  -h, --help           this text\n"
		"\n"
		"Exit: 0 read (violations or not); 1 the pins cannot be read or a\n"
		"      named workload has none; 2 bad usage.\n",
		NP_BPF_PIN_SUBDIR, NP_CONFIG_DEFAULT_PATH);
}

struct row {
	uint32_t slot;
	struct np_bpf_slot s;
	struct np_bpf_counters c;
};

/* A cgroup v2 id back to its path: open_by_handle_at on the cgroup2 mount
 * with a kernfs file handle (the id), then the fd's /proc link. */
static int cgroup2_mount(char *out, size_t len)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];
	int r = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[4096], *sep = strstr(line, " - cgroup2 ");
		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		snprintf(out, len, "%s", mnt);
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

static void cgroup_path(uint64_t id, char *out, size_t len)
{
	static char mnt[4096];
	static int mfd = -2;
	struct {
		struct file_handle fh;
		uint64_t id;
	} h;
	char link[64], target[4096];
	ssize_t n;
	int fd;

	out[0] = 0;
	if (id == 1) {
		snprintf(out, len, "/");
		return;
	}
	if (mfd == -2)
		mfd = cgroup2_mount(mnt, sizeof(mnt))
			      ? -1
			      : open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return;
	h.fh.handle_bytes = sizeof(uint64_t);
	h.fh.handle_type = 0xfe; /* FILEID_KERNFS */
	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	close(fd);
	if (n <= 0)
		return;
	target[n] = 0;
	if (!strncmp(target, mnt, strlen(mnt)))
		snprintf(out, len, "%s", target[strlen(mnt)] ? target + strlen(mnt) : "/");
	else
		snprintf(out, len, "%s", target);
}

static int read_rows(const struct np_bpf_maps *m, struct row **out, int *n)
{
	struct row *rows = calloc(m->nslots + 1, sizeof(*rows));
	int k = 0;

	if (!rows)
		return -ENOMEM;
	for (uint32_t s = 0; s < m->nslots; s++) {
		struct np_bpf_slot sl;
		if (bpf_map_lookup_elem(m->slots, &s, &sl) ||
		    !(sl.flags & NP_BPF_SLOT_USED))
			continue;
		rows[k].slot = s;
		rows[k].s = sl;
		if (np_bpf_counters_read(m, s, &rows[k].c))
			continue;
		k++;
	}
	*out = rows;
	*n = k;
	return 0;
}

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

static json_t *counters_json(const struct np_bpf_counters *c)
{
	json_t *o = json_object();
	const __u64 *v = (const __u64 *)c;
	for (size_t k = 0; k < NP_BPF_NCOUNTERS; k++)
		json_object_set_new(o, np_bpf_counter_names[k],
				    json_integer((json_int_t)v[k]));
	return o;
}

static json_t *intruders_json(const struct np_bpf_maps *m, uint32_t slot)
{
	struct np_bpf_intruder top[TOP];
	json_t *a = json_array();
	int n = np_bpf_intruders_top(m, slot, top, TOP);
	for (int i = 0; i < n; i++) {
		char comm[NP_BPF_COMM_LEN + 1], path[4096];
		memcpy(comm, top[i].key.comm, NP_BPF_COMM_LEN);
		comm[NP_BPF_COMM_LEN] = 0;
		cgroup_path(top[i].key.cgid, path, sizeof(path));
		json_array_append_new(
			a, json_pack("{s:s,s:s,s:I,s:s,s:I,s:i,s:i}", "comm", comm,
				     "kind", np_bpf_intruder_kind_name(top[i].key.kind),
				     "cgroup_id", (json_int_t)top[i].key.cgid,
				     "cgroup", path, "switches",
				     (json_int_t)top[i].val.switches, "last_pid",
				     (int)top[i].val.last_pid, "last_cpu",
				     (int)top[i].val.last_cpu));
	}
	return a;
}

static void print_block(const struct np_bpf_maps *m, const struct row *r,
			const struct np_bpf_counters *c, unsigned tick_hz,
			bool delta)
{
	struct np_bpf_intruder top[TOP];
	int n;

	printf("%s  cgroup %s (id %llu)  slot %u  gen %u  %u CPU(s)%s\n",
	       r->s.name, r->s.cgroup, (unsigned long long)r->s.cgid, r->slot,
	       r->s.gen, r->s.ncpus,
	       np_bpf_counters_any_violation(c) ? "  VIOLATION" : "");
	printf("  ran outside   %llu switch(es), %llu tick(s)",
	       (unsigned long long)c->run_outside,
	       (unsigned long long)c->run_outside_ticks);
	if (tick_hz && c->run_outside_ticks)
		printf(" (~%.2f s)", (double)c->run_outside_ticks / tick_hz);
	printf("; transition %llu\n", (unsigned long long)c->transition);
	printf("  migrations    %llu (x-L3 %llu, x-NUMA %llu, disallowed %llu)\n",
	       (unsigned long long)c->migrations,
	       (unsigned long long)c->migrate_xl3,
	       (unsigned long long)c->migrate_xnuma,
	       (unsigned long long)c->migrate_disallowed);
	printf("  intrusions    workload %llu, cgroup %llu, kthread %llu "
	       "switch(es); intruder ticks %llu\n",
	       (unsigned long long)c->intrude_workload,
	       (unsigned long long)c->intrude_cgroup,
	       (unsigned long long)c->intrude_kthread,
	       (unsigned long long)c->intrude_ticks);
	n = delta ? 0 : np_bpf_intruders_top(m, r->slot, top, TOP);
	for (int i = 0; i < n; i++) {
		char path[4096];
		cgroup_path(top[i].key.cgid, path, sizeof(path));
		printf("    %-8s '%.16s' cgroup %s (id %llu): %llu switch(es), "
		       "last pid %u on CPU %u\n",
		       np_bpf_intruder_kind_name(top[i].key.kind), top[i].key.comm,
		       path[0] ? path : "?",
		       (unsigned long long)top[i].key.cgid,
		       (unsigned long long)top[i].val.switches,
		       top[i].val.last_pid, top[i].val.last_cpu);
	}
	printf("  NUMA faults   %llu (pages: local %llu, remote %llu, ratio "
	       "%.2f; outside its mems %llu)\n",
	       (unsigned long long)c->faults,
	       (unsigned long long)c->fault_pages_local,
	       (unsigned long long)c->fault_pages_remote, ratio(c),
	       (unsigned long long)c->fault_pages_outside_mems);
	printf("  balancer      moves %llu, swaps %llu, sticks %llu\n",
	       (unsigned long long)c->numa_move,
	       (unsigned long long)c->numa_swap,
	       (unsigned long long)c->numa_stick);
	printf("  samples       %llu sent, %llu dropped\n",
	       (unsigned long long)c->samples,
	       (unsigned long long)c->samples_dropped);
}

static int pin_path_from_config(const char *cfg, char *out, size_t len)
{
	struct np_config c;
	char err[512];
	if (access(cfg, R_OK) || np_config_load(&c, cfg, err, sizeof(err)))
		return -ENOENT;
	snprintf(out, len, "%s", c.bpf_pin_path);
	return 0;
}

int cmd_violations(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"watch", optional_argument, NULL, 'w'},
		{"pin-path", required_argument, NULL, 'p'},
		{"config", required_argument, NULL, 'c'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *cfg = NP_CONFIG_DEFAULT_PATH, *pin = NULL;
	char pin_buf[4096], dir[4200], err[1024];
	bool json = false;
	double watch = 0;
	struct np_bpf_maps m;
	struct row *prev = NULL;
	int nprev = 0, c, rc = NP_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "jw::p:c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'w': {
			const char *a = optarg;
			char *end;
			/* "--watch 5" as well as "--watch=5" */
			if (!a && optind < argc && argv[optind][0] >= '0' &&
			    argv[optind][0] <= '9')
				a = argv[optind++];
			watch = a ? strtod(a, &end) : 2;
			if (a && (*end || watch < 0.1 || watch > 3600)) {
				fprintf(stderr, "numaplace violations: --watch: "
					"expected seconds 0.1..3600, got \"%s\"\n", a);
				return NP_EXIT_USAGE;
			}
			break;
		}
		case 'p':
			pin = optarg;
			break;
		case 'c':
			cfg = optarg;
			break;
		case 'h':
			violations_usage(stdout);
			return NP_EXIT_OK;
		default:
			violations_usage(stderr);
			return NP_EXIT_USAGE;
		}
	}
	if (!pin) {
		if (pin_path_from_config(cfg, pin_buf, sizeof(pin_buf)))
			snprintf(pin_buf, sizeof(pin_buf), "/sys/fs/bpf/numaplace");
		pin = pin_buf;
	}
	if (pin[0] != '/' || np_bpf_pin_dir(dir, sizeof(dir), pin)) {
		fprintf(stderr, "numaplace violations: --pin-path: \"%s\" must "
			"be an absolute path\n", pin);
		return NP_EXIT_USAGE;
	}
	if (np_bpf_maps_open_pinned(&m, dir, err, sizeof(err))) {
		fprintf(stderr, "numaplace violations: %s\n", err);
		return NP_EXIT_FAIL;
	}
	signal(SIGINT, on_sigint);
	signal(SIGTERM, on_sigint);
	for (;;) {
		struct np_bpf_info info = {0};
		struct row *rows = NULL;
		__u32 zero = 0;
		bool running;
		int n = 0, shown = 0;
		json_t *o = NULL, *ws = NULL, *sg;

		bpf_map_lookup_elem(m.info, &zero, &info);
		running = info.daemon_pid && !kill((pid_t)info.daemon_pid, 0);
		if (read_rows(&m, &rows, &n)) {
			fprintf(stderr, "numaplace violations: out of memory\n");
			break;
		}
		for (int a = optind; a < argc; a++) {
			bool found = false;
			for (int i = 0; i < n; i++)
				found |= !strcmp(rows[i].s.name, argv[a]);
			if (!found) {
				fprintf(stderr, "numaplace violations: no workload "
					"named \"%s\" in %s\n", argv[a], dir);
				free(rows);
				goto out;
			}
		}
		sg = json_array();
		for (int i = 0; i < NP_BPF_NSIGNALS; i++)
			if (info.signals & (1u << i))
				json_array_append_new(sg,
						      json_string(np_bpf_signal_names[i]));
		if (json) {
			ws = json_array();
			o = json_pack("{s:s,s:i,s:b,s:o,s:i,s:o}", "pin_dir", dir,
				      "daemon_pid", (int)info.daemon_pid,
				      "daemon_running", running, "signals", sg,
				      "tick_hz", (int)info.tick_hz, "workloads", ws);
		} else {
			printf("%s%s: numaplaced %s; signals:", watch ? "\033[H\033[2J" : "",
			       dir, running ? "running" : "not running (counts since its last start)");
			for (size_t i = 0; i < json_array_size(sg); i++)
				printf(" %s", json_string_value(json_array_get(sg, i)));
			printf("\n\n");
			json_decref(sg);
		}
		for (int i = 0; i < n; i++) {
			struct np_bpf_counters d = rows[i].c;
			bool have_prev = false;
			if (!wanted(rows[i].s.name, argv + optind, argc - optind))
				continue;
			for (int k = 0; k < nprev; k++)
				if (prev[k].slot == rows[i].slot &&
				    prev[k].s.cgid == rows[i].s.cgid) {
					np_bpf_counters_delta(&d, &rows[i].c, &prev[k].c);
					have_prev = true;
				}
			shown++;
			if (json) {
				json_t *w = json_pack(
					"{s:s,s:s,s:I,s:i,s:i,s:i,s:o,s:f,s:b,s:o}",
					"name", rows[i].s.name, "cgroup", rows[i].s.cgroup,
					"cgroup_id", (json_int_t)rows[i].s.cgid, "slot",
					(int)rows[i].slot, "gen", (int)rows[i].s.gen,
					"cpus", (int)rows[i].s.ncpus, "counters",
					counters_json(&rows[i].c), "remote_fault_ratio",
					ratio(&rows[i].c), "violation",
					np_bpf_counters_any_violation(&rows[i].c),
					"top_intruders", intruders_json(&m, rows[i].slot));
				if (watch)
					json_object_set_new(w, "delta",
							    have_prev ? counters_json(&d)
								      : json_null());
				json_array_append_new(ws, w);
			} else {
				if (watch && have_prev) {
					printf("[last %.1f s]\n", watch);
					print_block(&m, &rows[i], &d, info.tick_hz, true);
					printf("[total]\n");
				}
				print_block(&m, &rows[i], &rows[i].c, info.tick_hz, false);
				printf("\n");
			}
		}
		if (json) {
			char *s = json_dumps(o, watch ? JSON_COMPACT : JSON_INDENT(2));
			printf("%s\n", s ? s : "{}");
			free(s);
			json_decref(o);
		} else if (!shown) {
			printf("no workloads are being verified\n");
		}
		fflush(stdout);
		free(prev);
		prev = rows;
		nprev = n;
		if (!watch)
			break;
		for (double t = 0; t < watch && !stop; t += 0.1)
			usleep(100000);
		if (stop)
			break;
	}
	rc = NP_EXIT_OK;
out:
	free(prev);
	np_bpf_maps_close(&m);
	return rc;
}
