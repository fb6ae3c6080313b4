// SPDX-License-Identifier: Apache-2.0
/*
 * numaplace export nrt: the node as the cluster reads it, a
 * NodeResourceTopology v1alpha2 object or (--format koordinator)
 * Koordinator's node annotations, in YAML or JSON. From numaplaced's
 * status (live, or a saved one with --input) or offline from a topology
 * and a state file. The objects are built by the library
 * (numaplace/export.h); this is the command line around them.
 */
#include "cli.h"
#include "yaml_emit.h"
#include "numaplace/config.h"
#include "numaplace/ctl.h"
#include "numaplace/export.h"
#include "numaplace/state_file.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static void export_usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: numaplace export nrt [--format nrt|koordinator] [--json]\n"
	    "                            [--node-name NAME] [SOURCE]\n"
	    "\n"
	    "Prints this node's NodeResourceTopology (topology.node.k8s.io/\n"
	    "v1alpha2: one zone per NUMA node with costs, cpu, memory,\n"
	    "hugepages and devices; the Topology Manager policy and scope)\n"
	    "or, with --format koordinator, Koordinator's node annotations\n"
	    "(cpu-topology, cpu-shared-pools, be-cpu-shared-pools,\n"
	    "pod-cpu-allocs). YAML by default.\n"
	    "\n"
	    "SOURCE, one of:\n"
	    "  (none)               numaplaced, through its control socket\n"
	    "                       (exact: its allocations, memory and\n"
	    "                       policy; the node name its config.export\n"
	    "                       gives, else the host name)\n"
	    "  -i, --input FILE     a saved `numaplace status --json` (- for\n"
	    "                       stdin): the policy it carries (else\n"
	    "                       --config's); memory charges are not in a\n"
	    "                       status: memory available = allocatable\n"
	    "  -t, --topology SRC   offline: a topology source (as in\n"
	    "                       `numaplace topology`; live is this machine)\n"
	    "  -S, --state FILE     offline: a numaplaced state file\n"
	    "                       (state.json): its allocations and node\n"
	    "                       policy, checked against the topology\n"
	    "\n"
	    "  -f, --format F       nrt (default) or koordinator\n"
	    "  -j, --json           JSON instead of YAML\n"
	    "  -n, --node-name NAME metadata.name (default: the host name,\n"
	    "                       lowercased, as the kubelet names the node)\n"
	    "  -c, --config CFG     numaplaced's configuration: its socket\n"
	    "                       (live), or its node_policy for a status\n"
	    "                       that carries none (--input)\n"
	    "  -s, --socket PATH    control socket (default: the config's, else\n"
	    "                       %s)\n"
	    "  -h, --help           this text\n"
	    "\n"
	    "Exit: 0 ok; 1 numaplaced failed or is not reachable; 2 bad usage\n"
	    "      or bad input (the message names the option, file or field).\n",
	    NP_CTL_DEFAULT_SOCKET);
}

struct export_opts {
	bool koordinator, json;
	const char *node_name, *topology, *state, *input, *config, *socket;
	char host[256];
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "numaplace export: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return NP_EXIT_USAGE;
}

/* The options and the operand "nrt": -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, struct export_opts *o)
{
	static const struct option opts[] = {
	    {"format", required_argument, NULL, 'f'},
	    {"json", no_argument, NULL, 'j'},
	    {"node-name", required_argument, NULL, 'n'},
	    {"topology", required_argument, NULL, 't'},
	    {"state", required_argument, NULL, 'S'},
	    {"input", required_argument, NULL, 'i'},
	    {"config", required_argument, NULL, 'c'},
	    {"socket", required_argument, NULL, 's'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	int c;

	while ((c = getopt_long(argc, argv, "f:jn:t:S:i:c:s:h", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "nrt") && strcmp(optarg, "koordinator"))
				return usage_error("--format: \"%s\" is not nrt "
						   "or koordinator",
						   optarg);
			o->koordinator = !strcmp(optarg, "koordinator");
			break;
		case 'j':
			o->json = true;
			break;
		case 'n':
			if (!np_export_node_name_ok(optarg))
				return usage_error(
				    "--node-name: \"%s\" is not a node name "
				    "(lowercase letters, digits, '-' and '.', "
				    "at most 253)",
				    optarg);
			o->node_name = optarg;
			break;
		case 't':
			o->topology = optarg;
			break;
		case 'S':
			o->state = optarg;
			break;
		case 'i':
			o->input = optarg;
			break;
		case 'c':
			o->config = optarg;
			break;
		case 's':
			o->socket = optarg;
			break;
		default:
			return cli_usage(export_usage, c);
		}
	}
	if (optind == argc || strcmp(argv[optind], "nrt")) {
		if (optind < argc)
			fprintf(stderr, "numaplace export: unknown object "
					"'%s' (export nrt)\n\n",
				argv[optind]);
		export_usage(stderr);
		return NP_EXIT_USAGE;
	}
	optind++;
	if (!cli_no_operands("export", argc, argv))
		return NP_EXIT_USAGE;
	if (o->input && (o->topology || o->state))
		return usage_error("%s (a saved status) and --topology or "
				   "--state (offline) are two sources: give one",
				   "--input");
	if (o->state && o->config)
		return usage_error("%s: the state file carries the node policy "
				   "it was written under; --config gives one "
				   "too",
				   "--state");
	if ((o->input || o->topology || o->state) && o->socket)
		return usage_error("%s: only for numaplaced (no --input, "
				   "--topology or --state)",
				   "--socket");
	return -1;
}

/* metadata.name: --node-name, else the host name lowercased. */
static int node_name(struct export_opts *o)
{
	struct utsname u;

	if (o->node_name)
		return -1;
	if (uname(&u) < 0) {
		perror("numaplace export: uname");
		return NP_EXIT_FAIL;
	}
	for (size_t i = 0; u.nodename[i] && i + 1 < sizeof(o->host); i++)
		o->host[i] = (char)tolower((unsigned char)u.nodename[i]);
	if (!np_export_node_name_ok(o->host))
		return usage_error("the host name \"%s\" is not a node name: "
				   "give --node-name",
				   o->host);
	o->node_name = o->host;
	return -1;
}

/* numaplaced's configuration at path: its node policy and socket. -1 to
 * go on, else the exit code. */
static int config_policy(const char *path, struct np_node_policy *p,
			 char *sock, size_t socklen)
{
	struct np_config cfg;
	char err[1024];

	if (np_config_load(&cfg, path, err, sizeof(err))) {
		fprintf(stderr, "numaplace export: --config: %s\n", err);
		return NP_EXIT_USAGE;
	}
	*p = cfg.policy;
	if (sock)
		snprintf(sock, socklen, "%s", cfg.socket_path);
	return -1;
}

static int print(const json_t *j, bool as_json)
{
	char err[256];

	if (!j) {
		fprintf(stderr, "numaplace export: out of memory\n");
		return NP_EXIT_FAIL;
	}
	if (as_json) {
		cli_print_json(j);
		if (fflush(stdout) == 0 && !ferror(stdout))
			return NP_EXIT_OK;
		snprintf(err, sizeof(err), "writing JSON failed");
	} else if (np_yaml_emit(j, stdout, err, sizeof(err)) == 0) {
		return NP_EXIT_OK;
	}
	fprintf(stderr, "numaplace export: %s\n", err);
	return NP_EXIT_FAIL;
}

/*
 * The node policy of a saved status: the one it carries (numaplaced puts
 * node_policy in its status), else --config's, else numaplace's default
 * with a note. -1 to go on, else the exit code.
 */
static int status_policy(struct export_opts *o, const json_t *status,
			 struct np_node_policy *p)
{
	const json_t *pj = json_object_get(status, "node_policy");
	char err[512];

	if (pj) {
		if (np_policy_from_json(p, pj, "status.node_policy", err,
					sizeof(err))) {
			fprintf(stderr, "numaplace export: --input %s: %s\n",
				o->input, err);
			return NP_EXIT_USAGE;
		}
		return -1;
	}
	if (o->config)
		return config_policy(o->config, p, NULL, 0);
	np_policy_from_json(p, NULL, NULL, NULL, 0);
	fprintf(stderr, "numaplace export: note: the status carries no node "
			"policy and no --config was given: "
			"topologyManagerPolicy none\n");
	return -1;
}

/* Live: numaplaced builds it from what it holds (op "export"). */
static int live(struct export_opts *o)
{
	struct np_node_policy p;
	char sock[NP_PATH_MAX];
	json_t *req, *resp = NULL;
	int rc;

	snprintf(sock, sizeof(sock), "%s",
		 o->socket ? o->socket : NP_CTL_DEFAULT_SOCKET);
	if (o->config && !o->socket &&
	    (rc = config_policy(o->config, &p, sock, sizeof(sock))) >= 0)
		return rc;
	req = json_pack("{s:s,s:s}", "op", "export", "format",
			o->koordinator ? "koordinator" : "nrt");
	if (req && o->node_name)
		json_object_set_new(req, "node_name", json_string(o->node_name));
	rc = cli_ctl_request("export", sock, req, &resp);
	json_decref(req);
	if (rc)
		return NP_EXIT_FAIL;
	rc = print(json_object_get(resp, "export"), o->json);
	json_decref(resp);
	return rc;
}

/* The status object from numaplaced or --input, as a node state. */
static int from_status(struct export_opts *o, struct np_topology **t,
		       struct np_node_state *st)
{
	struct np_node_policy p;
	json_t *resp = NULL;
	const json_t *status;
	char err[1024];
	int rc;

	if (!(resp = cli_load_json("export", o->input)))
		return NP_EXIT_USAGE;
	/* A whole answer {"ok":true,"status":{...}} or the object. */
	status = json_object_get(resp, "status");
	if (!status)
		status = resp;
	if ((rc = status_policy(o, status, &p)) >= 0) {
		json_decref(resp);
		return rc;
	}
	rc = np_export_state_from_status(status, &p, t, st, err, sizeof(err));
	if (rc)
		fprintf(stderr, "numaplace export: --input %s: %s\n", o->input,
			err);
	json_decref(resp);
	if (rc)
		return rc == -ENOMEM ? NP_EXIT_FAIL : NP_EXIT_USAGE;
	return -1;
}

/* --topology and --state (or the default policy) as a node state. */
static int offline(struct export_opts *o, struct np_topology **t,
		   struct np_node_state *st)
{
	struct np_node_policy p;
	char err[1024];
	int rc, r;

	if ((rc = cli_load_topology("export", o->topology, t)))
		return rc;
	if (o->state) {
		r = np_statefile_read(o->state, *t, st, err, sizeof(err));
		if (!r)
			return -1;
		fprintf(stderr, "numaplace export: --state: %s\n", err);
		return r == -ENOMEM ? NP_EXIT_FAIL : NP_EXIT_USAGE;
	}
	np_policy_from_json(&p, NULL, NULL, NULL, 0);
	if (o->config && (rc = config_policy(o->config, &p, NULL, 0)) >= 0)
		return rc;
	if (np_state_init(st, *t, &p, err, sizeof(err))) {
		fprintf(stderr, "numaplace export: %s%s\n",
			o->config ? "--config: " : "", err);
		return NP_EXIT_USAGE;
	}
	return -1;
}

int cmd_export(int argc, char **argv)
{
	struct export_opts o = {0};
	struct np_topology *t = NULL;
	struct np_node_state st = {0};
	json_t *out;
	int rc;

	if ((rc = parse_args(argc, argv, &o)) >= 0)
		return rc;
	if (!o.input && !o.topology && !o.state)
		return live(&o);
	if (!o.koordinator && (rc = node_name(&o)) >= 0)
		return rc;
	if (o.topology || o.state)
		rc = offline(&o, &t, &st);
	else
		rc = from_status(&o, &t, &st);
	if (rc < 0) {
		out = o.koordinator ? np_export_koordinator(&st)
				    : np_export_nrt(&st, o.node_name);
		rc = print(out, o.json);
		json_decref(out);
	}
	np_state_free(&st);
	np_topology_free(t);
	return rc;
}
