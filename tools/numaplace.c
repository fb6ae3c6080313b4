// SPDX-License-Identifier: Apache-2.0
/* numaplace: command-line front end of libnumaplace and the daemon. */
#include "cli.h"
#include "numaplace/version.h"

#include <stdio.h>
#include <string.h>

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
} commands[] = {
	{"topology", cmd_topology,
	 "show the machine topology (--topology SRC, --json)"},
	{"plan", cmd_plan,
	 "what-if planner: JSON requests on stdin or --input FILE"},
	{"admit", cmd_admit,
	 "ask numaplaced to admit a workload spec (-f FILE)"},
	{"release", cmd_release,
	 "ask numaplaced to release a workload (NAME)"},
	{"resize", cmd_resize,
	 "resize a workload's exclusive CPUs in place (NAME --cpus N)"},
	{"status", cmd_status,
	 "what numaplaced manages: CPU map, pools, workloads (--json)"},
	{"violations", cmd_violations,
	 "placement violations from the pinned BPF maps (--json, --watch)"},
	{"events", cmd_events,
	 "latest violation samples from numaplaced (--json, --limit N)"},
	{"defrag", cmd_defrag,
	 "the fewest moves that make room for a rejected admission"},
	{"export", cmd_export,
	 "NodeResourceTopology or Koordinator annotations (export nrt)"},
	{"explain", cmd_explain, "why a workload got its CPUs (NAME, --json)"},
	{"oci-hook", cmd_oci_hook,
	 "OCI runtime hook: place a container before it starts (STAGE)"},
	{"state", cmd_state,
	 "the state numaplaced keeps in a state directory (DIR), as JSON"},
	{"import-kubelet-state", cmd_import,
	 "adopt a kubelet cpu_manager_state's exclusive CPUs (FILE)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: numaplace COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-21s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\n'numaplace COMMAND --help' shows the options of one "
		   "command; --version the version. See numaplace(1).\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return NP_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return NP_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("numaplace %s\n", NP_VERSION);
		return NP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "numaplace: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return NP_EXIT_USAGE;
}
