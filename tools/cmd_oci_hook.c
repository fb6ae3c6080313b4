// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace oci-hook STAGE: an OCI runtime hook (crun, runc, podman,
 * CRI-O). createRuntime/prestart asks numaplaced to admit the container
 * for its own cgroup and returns once the cpuset is in force; poststop
 * releases it. STAGE invoke is containerd's NRI v0.1 plugin instead
 * (oci_hook_nri.c). The parsing is numaplace/oci.h, the admission
 * oci_hook.c; here is the OCI input: the state on stdin and the bundle's
 * config.json.
 */
#include "cli.h"
#include "oci_hook.h"
#include "basic/fileio.h"
#include "numaplace/cleanup.h"
#include "numaplace/config.h"
#include "numaplace/error.h"
#include "numaplace/oci.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CMD "numaplace oci-hook"

static void oci_usage(FILE *f)
{
	fprintf(f,
		"usage: numaplace oci-hook STAGE [--config PATH] [--socket PATH]"
		" [--state FILE]\n"
		"       numaplace oci-hook invoke [--config PATH] [--socket PATH]\n"
		"\n"
		"An OCI runtime hook. STAGE is createRuntime (or prestart for\n"
		"older runtimes): the OCI state on stdin, the bundle's\n"
		"config.json and the numaplace.io/ annotations make a workload\n"
		"that numaplaced admits for the container's cgroup; the hook\n"
		"returns once its cpuset is in force. poststop releases it.\n"
		"invoke is containerd's NRI v0.1 plugin (/opt/nri/bin/numaplace):\n"
		"the Request on stdin, the Result on stdout; create admits as\n"
		"createRuntime does, delete releases.\n"
		"\n"
		"  -c, --config PATH    numaplaced's configuration (default %s;\n"
		"                       oci_hook, socket and cgroup_root are read)\n"
		"  -s, --socket PATH    control socket (default: the config's)\n"
		"      --state FILE     the OCI state from FILE, not stdin\n"
		"  -h, --help           this text\n"
		"\n"
		"Failures (numaplaced unreachable, too slow, a rejection, the\n"
		"cpuset not in force) follow numaplace.io/on-failure, else the\n"
		"config's oci_hook.on_failure: fail-open (exit 0, the container\n"
		"runs in the shared pool) or fail-closed (exit 1).\n"
		"Exit: 0 placed (or fail-open); 1 fail-closed; 2 bad usage or\n"
		"      bad input (state, bundle, annotations).\n",
		NP_CONFIG_DEFAULT_PATH);
}

/* path ("-" = stdin) into *buf: 0, or NP_EXIT_USAGE with the message. */
static int read_input(const char *id, const char *what, const char *path,
		      size_t max, char **buf, size_t *len)
{
	int r = strcmp(path, "-")
		    ? np_read_at(AT_FDCWD, path, NP_READ_REGULAR, max, buf, len)
		    : np_read_fd(STDIN_FILENO, max, buf, len);

	if (r >= 0)
		return 0;
	if (r == -EFBIG)
		fprintf(stderr, CMD ": %s%s%s: longer than %zu bytes\n", id,
			*id ? ": " : "", what, max);
	else if (r == -EINVAL)
		fprintf(stderr, CMD ": %s%s%s: not a regular file\n", id,
			*id ? ": " : "", what);
	else
		fprintf(stderr, CMD ": %s%s%s: %s\n", id, *id ? ": " : "",
			what, strerror(-r));
	return NP_EXIT_USAGE;
}

/* createRuntime / prestart after the state is read. */
static int place(struct hook *h)
{
	_cleanup_free_ char *buf = NULL;
	struct np_oci_cgroup exp;
	char path[NP_PATH_MAX + 16], err[1024];
	size_t len;
	int r, rc;

	snprintf(path, sizeof(path), "%s/config.json", h->st.bundle);
	if ((rc = read_input(h->st.id, path, path, NP_OCI_CONFIG_MAX, &buf,
			     &len)))
		return rc;
	if (np_oci_config_parse(&h->oc, buf, len, err, sizeof(err)))
		return hook_bad(h, "%s: %s", path, err);
	r = np_oci_failure_annotation(&h->st, &h->oc, &h->mode, err,
				      sizeof(err));
	if (r == -ENOENT)
		h->mode = h->cfg.oci_hook.on_failure;
	if ((r && r != -ENOENT) ||
	    (h->oc.cgroups_path[0] &&
	     np_oci_cgroups_path(h->oc.cgroups_path, &exp, err, sizeof(err))))
		return hook_bad(h, "%s", err);
	return hook_place(h, h->oc.cgroups_path[0] ? &exp : NULL);
}

static int parse_args(struct hook *h, int argc, char **argv,
		      const char **state_path, bool *nri)
{
	static const struct option opts[] = {
	    {"config", required_argument, NULL, 'c'},
	    {"socket", required_argument, NULL, 's'},
	    {"state", required_argument, NULL, 'S'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	const char *config = NP_CONFIG_DEFAULT_PATH, *sock = NULL;
	enum np_oci_stage stage;
	bool config_given = false;
	int c, rc;

	while ((c = getopt_long(argc, argv, "c:s:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			config = optarg;
			config_given = true;
			break;
		case 's':
			sock = optarg;
			break;
		case 'S':
			*state_path = optarg;
			break;
		default:
			return cli_usage(oci_usage, c) ? NP_EXIT_USAGE : -1;
		}
	}
	*nri = argc - optind == 1 && !strcmp(argv[optind], "invoke");
	if (*nri) /* the configuration is read after the request */
		return hook_nri_invoke(h, config_given ? config : NULL, sock);
	if (argc - optind != 1 ||
	    np_oci_stage_parse(argv[optind], &stage) < 0) {
		fprintf(stderr,
			CMD ": %s (createRuntime, prestart or poststop; see "
			    "'numaplace oci-hook --help')\n",
			argc - optind == 1   ? "unknown STAGE"
			: argc - optind == 0 ? "STAGE is required"
					     : "give one STAGE");
		return NP_EXIT_USAGE;
	}
	h->stage = np_oci_stage_name(stage);
	if ((rc = hook_load_config(h, config, config_given)))
		return rc;
	h->sock = sock ? sock : h->cfg.socket_path;
	return 0;
}

int cmd_oci_hook(int argc, char **argv)
{
	static struct hook h; /* large: the configuration */
	_cleanup_free_ char *buf = NULL;
	const char *state_path = "-";
	char err[1024];
	enum np_oci_stage stage;
	size_t len;
	bool nri = false;
	int rc;

	memset(&h, 0, sizeof(h));
	h.cmd = CMD;
	h.res_label = "config.json linux.resources";
	clock_gettime(CLOCK_MONOTONIC, &h.t0);
	rc = parse_args(&h, argc, argv, &state_path, &nri);
	if (nri || rc)
		return rc < 0 ? NP_EXIT_OK : rc;
	if ((rc = read_input("", strcmp(state_path, "-") ? state_path : "state",
			     state_path, NP_OCI_STATE_MAX, &buf,
			     &len)))
		return rc;
	np_oci_stage_parse(h.stage, &stage); /* parse_args checked it */
	if (np_oci_state_parse(&h.st, buf, len, stage, err, sizeof(err))) {
		fprintf(stderr, CMD ": %s: %s\n", h.stage, err);
		np_oci_state_free(&h.st);
		return NP_EXIT_USAGE;
	}
	rc = stage == NP_OCI_POSTSTOP ? hook_release(&h) : place(&h);
	np_oci_state_free(&h.st);
	np_oci_config_free(&h.oc);
	return rc;
}
