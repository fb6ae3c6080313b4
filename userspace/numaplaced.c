// SPDX-License-Identifier: Apache-2.0
/*
 * numaplaced: the node daemon. In this version it validates a
 * configuration (node policy + topology source), computes the pools and
 * prints them; enforcement arrives with the controller (see README).
 */
#include "numaplace/admit.h"
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
	const char *path = "/etc/numaplace/numaplace.json", *src = NULL;
	struct np_topology *t = NULL;
	struct np_node_policy pol;
	struct np_node_state st;
	json_error_t jerr;
	json_t *cfg, *pools;
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
	cfg = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
	if (!cfg) {
		fprintf(stderr, "numaplaced: %s: line %d column %d: %s\n", path,
			jerr.line, jerr.column, jerr.text);
		return 2;
	}
	if (json_is_string(json_object_get(cfg, "topology")))
		src = json_string_value(json_object_get(cfg, "topology"));
	if (np_topology_load(&t, src, err, sizeof(err)) < 0) {
		fprintf(stderr, "numaplaced: topology: %s\n", err);
		goto out;
	}
	if (np_policy_from_json(&pol, json_object_get(cfg, "node_policy"),
				"node_policy", err, sizeof(err)) < 0 ||
	    np_state_init(&st, t, &pol, err, sizeof(err)) < 0) {
		fprintf(stderr, "numaplaced: %s: %s\n", path, err);
		rc = 2;
		goto out;
	}
	pools = np_pools_to_json(&st);
	if (check)
		printf("%s: configuration is valid\n", path);
	json_dumpf(pools, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(pools);
	np_state_free(&st);
	rc = 0;
out:
	np_topology_free(t);
	json_decref(cfg);
	return rc;
}
