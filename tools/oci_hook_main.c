// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace-oci-hook STAGE [OPTIONS]: `numaplace oci-hook` as a program of
 * its own (cmd_oci_hook.c: same options, messages and exit codes), for
 * runtimes that start it for every container. Also containerd's NRI v0.1
 * plugin, as /opt/nri/bin/numaplace (a link here): containerd runs it as
 * `TYPE invoke`, and the STAGE invoke picks that mode whatever argv[0]
 * is. It links jansson and libc only, not the CLI's hwloc, libbpf and
 * libsystemd, whose loading would cost the hook milliseconds at each start
 * (docs/performance.md).
 */
#include "cli.h"
#include "numaplace/version.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	char *none[] = {(char *)"oci-hook", NULL};

	if (argc < 1) /* no argv[0] at all: "STAGE is required" */
		return cmd_oci_hook(1, none);
	if (argc == 2 && !strcmp(argv[1], "--version")) {
		printf("numaplace-oci-hook %s\n", NP_VERSION);
		return NP_EXIT_OK;
	}
	/* as `numaplace oci-hook` passes it (getopt names argv[0]) */
	argv[0] = none[0];
	return cmd_oci_hook(argc, argv);
}
