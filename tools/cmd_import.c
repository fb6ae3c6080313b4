// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace import-kubelet-state: adopt the exclusive CPU allocations of a
 * kubelet cpu_manager_state into numaplace's state (the takeover path of
 * Koordinator's proposal: both managers must agree during a migration).
 */
#include "cli.h"
#include "numaplace/config.h"
#include "numaplace/kubelet_import.h"
#include "numaplace/state_file.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void import_usage(FILE *f)
{
	fprintf(f,
		"usage: numaplace import-kubelet-state FILE [--config CFG]\n"
		"                                     [--cgroup-prefix P] [--apply]\n"
		"\n"
		"Reads a kubelet cpu_manager_state (V2, V3 or V4) and shows which\n"
		"exclusive allocations numaplace would adopt (one Guaranteed\n"
		"workload per pod, cgroup P/kubepods-pod<uid>.slice). With --apply\n"
		"they are written into numaplace's state file; numaplaced must be\n"
		"stopped. The kubelet's checksum is not verified (its Go hashing\n"
		"cannot be reproduced); the structure is.\n"
		"\n"
		"  -c, --config CFG      numaplaced configuration (default %s)\n"
		"  -p, --cgroup-prefix P pod cgroup parent, relative to numaplace's\n"
		"                        managed parent (default kubepods.slice)\n"
		"      --apply           adopt and save (default: dry run)\n",
		NP_CONFIG_DEFAULT_PATH);
}

/* Is a daemon answering on the socket? */
static bool daemon_running(const char *path)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool up;

	if (fd < 0 || strlen(path) >= sizeof(a.sun_path)) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	memcpy(a.sun_path, path, strlen(path) + 1);
	up = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	close(fd);
	return up;
}

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"cgroup-prefix", required_argument, NULL, 'p'},
		{"apply", no_argument, NULL, 'A'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *cfgpath = NP_CONFIG_DEFAULT_PATH, *prefix = "kubepods.slice";
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	struct np_config cfg;
	bool apply = false, fresh;
	json_t *out = NULL, *dpart = NULL;
	char err[1024];
	int c, r, rc = NP_EXIT_FAIL;

	while ((c = getopt_long(argc, argv, "c:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			cfgpath = optarg;
			break;
		case 'p':
			prefix = optarg;
			break;
		case 'A':
			apply = true;
			break;
		default:
			return cli_usage(import_usage, c);
		}
	}
	if (optind < argc - 1) {
		fprintf(stderr,
			"numaplace import-kubelet-state: unexpected argument "
			"'%.200s'\n\n",
			argv[optind + 1]);
		import_usage(stderr);
		return NP_EXIT_USAGE;
	}
	if (optind != argc - 1) {
		import_usage(stderr);
		return NP_EXIT_USAGE;
	}
	if (np_config_load(&cfg, cfgpath, err, sizeof(err)) ||
	    np_topology_load(&t, cfg.topology, err, sizeof(err)) ||
	    np_state_init(&st, t, &cfg.policy, err, sizeof(err))) {
		fprintf(stderr, "numaplace import-kubelet-state: %s\n", err);
		rc = NP_EXIT_USAGE;
		goto out;
	}
	/* numaplaced's own part of the state (where each workload came from)
	 * is kept as it is. */
	r = np_statefile_load_with(cfg.state_dir, &st, &fresh, &dpart, err,
				   sizeof(err));
	if (r) {
		fprintf(stderr, "numaplace import-kubelet-state: %s\n", err);
		goto out;
	}
	r = np_kubelet_import_json(argv[optind], &st, prefix, &out, err,
				   sizeof(err));
	if (r) {
		fprintf(stderr, "numaplace import-kubelet-state: %s\n", err);
		/* a checkpoint that is missing or not valid is bad input */
		rc = r == -EINVAL || r == -ENODATA || r == -ENOENT ||
				     r == -ENOTDIR || r == -EISDIR ||
				     r == -ENAMETOOLONG || r == -EFBIG
			     ? NP_EXIT_USAGE
			     : NP_EXIT_FAIL;
		goto out;
	}
	cli_print_json(out);
	if (!apply) {
		fprintf(stderr, "dry run: nothing written (use --apply)\n");
		rc = NP_EXIT_OK;
		goto out;
	}
	if (daemon_running(cfg.socket_path)) {
		fprintf(stderr, "numaplace import-kubelet-state: numaplaced is "
				"running (%s answers): stop it first, then "
				"apply\n",
			cfg.socket_path);
		goto out;
	}
	if ((r = np_kubelet_import(argv[optind], &st, prefix, err, sizeof(err))) ||
	    (r = np_statefile_save_with(cfg.state_dir, &st, dpart, err,
					sizeof(err)))) {
		fprintf(stderr, "numaplace import-kubelet-state: %s\n", err);
		goto out;
	}
	printf("adopted; state saved in %s/%s\n", cfg.state_dir,
	       NP_STATEFILE_NAME);
	rc = NP_EXIT_OK;
out:
	json_decref(out);
	json_decref(dpart);
	np_state_free(&st);
	np_topology_free(t);
	return rc;
}
