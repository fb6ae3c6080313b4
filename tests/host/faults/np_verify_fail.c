// SPDX-License-Identifier: Apache-2.0
/*
 * BPF verification that cannot be loaded, for tests/host/faults-host.sh:
 * starts the daemon's own verification module (np_verify_start, as
 * numaplaced's start does) on a directory that is not a fake cgroup tree,
 * so that the programs really are loaded, and prints what it returned
 * and the "verification" object numaplace status would show:
 *
 *   np-verify-fail auto|on PIN_PATH PARENT_DIR TOPOLOGY_JSON
 *
 * The caller makes the load fail (no privileges, a pin path that cannot
 * be a bpffs directory). Prints
 *   start R active yes|no
 *   status STATE
 * on stdout; the module's log goes to stderr. Exit 0 unless the setup
 * itself failed (2).
 */
#include "numaplace/config.h"
#include "numaplace/topology.h"
#include "numaplace/verify.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct np_config cfg;
	struct np_topology *topo = NULL;
	struct np_verify *v = NULL;
	struct np_verify_setup su;
	char err[512];
	json_t *st;
	int fd, r;

	if (argc != 5 || (strcmp(argv[1], "auto") && strcmp(argv[1], "on"))) {
		fprintf(stderr, "usage: np-verify-fail auto|on PIN_PATH "
				"PARENT_DIR TOPOLOGY_JSON\n");
		return 2;
	}
	if (np_topology_load(&topo, argv[4], err, sizeof(err))) {
		fprintf(stderr, "np-verify-fail: topology: %s\n", err);
		return 2;
	}
	if ((fd = open(argv[3], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		perror(argv[3]);
		return 2;
	}
	np_config_defaults(&cfg);
	cfg.verify.enabled = strcmp(argv[1], "on") ? NP_VERIFY_AUTO : NP_VERIFY_ON;
	su = (struct np_verify_setup){.cfg = &cfg.verify,
				      .pin_path = argv[2],
				      .parent_fd = fd,
				      .root_fd = -1,
				      .cgroup_parent = "numaplace.slice",
				      .fake = false,
				      .topo = topo};
	r = np_verify_start(&v, &su);
	printf("start %d active %s\n", r, v ? "yes" : "no");
	st = np_verify_status(v, &cfg.verify, argv[2]);
	printf("status %s\n",
	       json_string_value(json_object_get(st, "state")) ?: "?");
	json_decref(st);
	np_verify_stop(v);
	close(fd);
	np_topology_free(topo);
	return 0;
}
