// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced: the node daemon. In this version it validates a
 * configuration (node policy + topology source), computes the pools and
 * prints them; enforcement arrives with the controller (see README).
 */
#include "numaplace/admit.h"
#include "numaplace/config.h"
#include "numaplace/topology_json.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: numaplaced [--config FILE] [--check-config]\n"
		   "\n"
		   "  -c, --config FILE   configuration (default "
		   "/etc/numaplace/numaplace.json)\n"
		   "      --check-config  validate the configuration and exit\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"check-config", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *path = NP_CONFIG_DEFAULT_PATH;
	struct np_topology *t = NULL;
	struct np_config cfg;
	struct np_node_state st;
	json_t *out;
	char err[512];
	bool check = false;
	int c, rc = 1;

	while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'C':
			check = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (np_config_load(&cfg, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "numaplaced: %s\n", err);
		return 2;
	}
	if (np_topology_load(&t, cfg.topology, err, sizeof(err)) < 0) {
		fprintf(stderr, "numaplaced: topology: %s\n", err);
		return 1;
	}
	if (np_state_init(&st, t, &cfg.policy, err, sizeof(err)) < 0) {
		/* np_state_init names keys as "policy.X" */
		fprintf(stderr, "numaplaced: %s: config.node_%s\n", path, err);
		rc = 2;
		goto out;
	}
	if (check)
		printf("%s: configuration is valid\n", path);
	out = json_pack("{s:o,s:o}", "config", np_config_to_json(&cfg), "pools",
			np_pools_to_json(&st));
	json_dumpf(out, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(out);
	np_state_free(&st);
	rc = 0;
out:
	np_topology_free(t);
	return rc;
}
