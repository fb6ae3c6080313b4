// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace topology: show the machine topology as numaplace sees it, in the
 * spirit of lstopo's text output but limited to what placement uses: NUMA
 * nodes with their sockets, memory and hugepages, L3 groups, cores and their
 * SMT siblings, devices, and the distance matrix. --json prints the JSON
 * form, which is valid planner input (and --topology input).
 */
#include "cli.h"
#include "numaplace/topology.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void topology_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace topology [--topology SRC] [--json]\n"
	    "\n"
	    "Shows the topology: NUMA nodes, their sockets, memory and\n"
	    "hugepages, L3 groups, cores with their SMT siblings, devices,\n"
	    "and the NUMA distances.\n"
	    "\n"
	    "  -t, --topology SRC  where to read it from (default: live)\n"
	    "                        live            this machine (hwloc)\n"
	    "                        xml:PATH, *.xml an hwloc XML export\n"
	    "                        synthetic:DESC  hwloc synthetic, e.g.\n"
	    "                          \"synthetic:pack:2 numa:2 l3:1 core:8 "
	    "pu:2\"\n"
	    "                        PATH, -         a JSON topology\n"
	    "  -j, --json          print the JSON form (planner input)\n"
	    "  -h, --help          this text\n"
	    "\n"
	    "Exit: 0 ok, 1 the topology could not be loaded, 2 bad usage.\n");
}

/* Byte count in binary units: "512 MiB", "4.8 GiB". */
static const char *human(uint64_t b, char *buf, size_t len)
{
	static const char *const unit[] = {"B",	  "KiB", "MiB",
					   "GiB", "TiB", "PiB"};
	double v = (double)b;
	int i = 0;

	while (v >= 1024 && i < 5) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%" PRIu64 " B", b);
	else if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%.0f %s", v, unit[i]);
	else
		snprintf(buf, len, "%.1f %s", v, unit[i]);
	return buf;
}

static const char *cpulist(const np_cpuset *s, char *buf, size_t len)
{
	if (np_cpuset_format(s, buf, len) < 0)
		snprintf(buf, len, "(%d CPUs)", np_cpuset_count(s));
	return buf;
}

static void print_device(const struct np_device *d)
{
	printf("    %-12s  %-5s  %s%s%s\n", d->id, np_device_class_name(d->cls),
	       d->resource, *d->name ? "  " : "", d->name);
}

/* " 0,4\n": SMT siblings read better as a plain list than as "0-1". */
static void print_commas(const np_cpuset *s)
{
	const char *sep = " ";

	NP_CPUSET_FOREACH (cpu, s) {
		printf("%s%d", sep, cpu);
		sep = ",";
	}
	printf("\n");
}

/* Comma list of the socket ids holding CPUs of node n. */
static void print_node_sockets(const struct np_topology *t, int n)
{
	int k = 0;

	for (int s = 0; s < t->nsockets; s++)
		if (np_cpuset_intersects(&t->sockets[s].cpus,
					 &t->numa[n].u.cpus))
			k++;
	printf("%s ", k > 1 ? "sockets" : "socket");
	k = 0;
	for (int s = 0; s < t->nsockets; s++)
		if (np_cpuset_intersects(&t->sockets[s].cpus,
					 &t->numa[n].u.cpus))
			printf("%s%d", k++ ? "," : "", t->sockets[s].id);
	if (!k)
		printf("-");
}

static void print_node(const struct np_topology *t, int n, const int *core_l3,
		       const int *core_numa, char *buf, size_t blen)
{
	const struct np_numa_node *nn = &t->numa[n];
	char m1[32], m2[32];
	np_cpuset s, off;
	bool any;

	printf("NUMA node %d: ", nn->u.id);
	print_node_sockets(t, n);
	printf(", cpus %s, ", cpulist(&nn->u.cpus, buf, blen));
	if (nn->mem_total)
		printf("memory %s (%s free)\n", human(nn->mem_total, m1, 32),
		       human(nn->mem_free, m2, 32));
	else
		printf("memory unknown\n");
	if (nn->nhuge) {
		printf("  hugepages:");
		for (int h = 0; h < nn->nhuge; h++)
			printf("%s %s x %" PRIu64 " (%" PRIu64 " free)",
			       h ? "," : "",
			       human(nn->huge[h].size_kb * 1024, m1, 32),
			       nn->huge[h].total, nn->huge[h].free);
		printf("\n");
	}
	for (int l = 0; l < t->nl3; l++) {
		bool header = false;

		for (int c = 0; c < t->ncores; c++) {
			if (core_numa[c] != n || core_l3[c] != l)
				continue;
			if (!header) {
				np_cpuset_and(&s, &t->l3s[l].cpus, &nn->u.cpus);
				printf("  L3 %d: cpus %s", t->l3s[l].id,
				       cpulist(&s, buf, blen));
				if (!np_cpuset_subset(&t->l3s[l].cpus,
						      &nn->u.cpus)) {
					np_nodemask m = np_topology_nodes_of(
					    t, &t->l3s[l].cpus);
					m &= ~NP_NODEMASK_BIT(nn->u.id);
					np_nodemask_format(m, m1, sizeof(m1));
					printf(" (shared with node%s %s)",
					       np_nodemask_count(m) > 1 ? "s"
									: "",
					       m1);
				}
				printf("\n");
				header = true;
			}
			printf("    core %d: cpu", t->cores[c].id);
			print_commas(&t->cores[c].cpus);
		}
	}
	np_cpuset_zero(&off);
	NP_CPUSET_FOREACH (cpu, &t->offline) {
		if (t->cpu[cpu].numa == n)
			np_cpuset_set(&off, cpu);
	}
	if (!np_cpuset_empty(&off))
		printf("  offline: cpu %s\n", cpulist(&off, buf, blen));
	any = false;
	for (int d = 0; d < t->ndevices; d++) {
		if (t->devices[d].numa != nn->u.id)
			continue;
		if (!any)
			printf("  devices:\n");
		any = true;
		print_device(&t->devices[d]);
	}
}

static void print_distances(const struct np_topology *t)
{
	printf("\nNUMA distances%s:\n",
	       t->distances_known ? "" : " (defaults; none reported)");
	printf("  node ");
	for (int j = 0; j < t->nnuma; j++)
		printf(" %5d", t->numa[j].u.id);
	printf("\n");
	for (int i = 0; i < t->nnuma; i++) {
		printf("  %4d ", t->numa[i].u.id);
		for (int j = 0; j < t->nnuma; j++)
			printf(" %5u", np_topology_distance(t, i, j));
		printf("\n");
	}
}

static int print_text(const struct np_topology *t, const char *src)
{
	int *core_l3 = malloc(sizeof(int) * (size_t)t->ncores);
	int *core_numa = malloc(sizeof(int) * (size_t)t->ncores);
	size_t blen = 8 * NP_MAX_CPUS;
	char *buf = malloc(blen);
	int smt_min = 0, smt_max = 0, noff = np_cpuset_count(&t->offline);
	bool any;

	if (!core_l3 || !core_numa || !buf) {
		free(core_l3);
		free(core_numa);
		free(buf);
		fprintf(stderr, "numaplace topology: out of memory\n");
		return NP_EXIT_FAIL;
	}
	for (int c = 0; c < t->ncores; c++) {
		int first = np_cpuset_first(&t->cores[c].cpus);
		int w = t->cores[c].ncpus;

		core_l3[c] = first >= 0 ? t->cpu[first].l3 : -1;
		core_numa[c] = first >= 0 ? t->cpu[first].numa : -1;
		if (first < 0)
			continue;
		if (!smt_min || w < smt_min)
			smt_min = w;
		if (w > smt_max)
			smt_max = w;
	}
	printf("%d CPUs online (%d offline), %d socket%s, %d NUMA node%s, ",
	       t->ncpus, noff, t->nsockets, t->nsockets == 1 ? "" : "s",
	       t->nnuma, t->nnuma == 1 ? "" : "s");
	if (smt_min == smt_max)
		printf("SMT %d", smt_max);
	else
		printf("SMT %d-%d", smt_min, smt_max);
	printf(", %d L3 group%s\n", t->nl3, t->nl3 == 1 ? "" : "s");
	printf("source: %s\n", src ? src : "live");
	for (int n = 0; n < t->nnuma; n++) {
		printf("\n");
		print_node(t, n, core_l3, core_numa, buf, blen);
	}
	any = false;
	for (int d = 0; d < t->ndevices; d++) {
		if (t->devices[d].numa >= 0)
			continue;
		if (!any)
			printf("\ndevices without NUMA information:\n");
		any = true;
		print_device(&t->devices[d]);
	}
	print_distances(t);
	free(core_l3);
	free(core_numa);
	free(buf);
	return NP_EXIT_OK;
}

static int print_json(const struct np_topology *t)
{
	json_t *j = np_topology_to_json(t);
	int r;

	if (!j) {
		fprintf(stderr, "numaplace topology: out of memory\n");
		return NP_EXIT_FAIL;
	}
	r = json_dumpf(j, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	fputc('\n', stdout);
	json_decref(j);
	if (r < 0 || fflush(stdout) == EOF) {
		fprintf(stderr, "numaplace topology: write error\n");
		return NP_EXIT_FAIL;
	}
	return NP_EXIT_OK;
}

int cmd_topology(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"topology", required_argument, NULL, 't'},
	    {"json", no_argument, NULL, 'j'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *src = NULL;
	struct np_topology *t;
	bool json = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, "t:jh", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			src = optarg;
			break;
		case 'j':
			json = true;
			break;
		default:
			return cli_usage(topology_usage, c);
		}
	}
	if (optind != argc) {
		fprintf(stderr,
			"numaplace topology: unexpected argument '%s'\n\n",
			argv[optind]);
		topology_usage(stderr);
		return NP_EXIT_USAGE;
	}
	if ((rc = cli_load_topology("topology", src, &t)))
		return rc;
	rc = json ? print_json(t) : print_text(t, src);
	np_topology_free(t);
	return rc;
}
