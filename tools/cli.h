/* SPDX-License-Identifier: Apache-2.0 */
/* numaplace CLI: one file per subcommand (tools/cmd_*.c). */
#ifndef NUMAPLACE_CLI_H
#define NUMAPLACE_CLI_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Exit codes: 0 ok, 1 runtime failure, 2 bad usage or bad input. */
#define NP_EXIT_OK 0
#define NP_EXIT_FAIL 1
#define NP_EXIT_USAGE 2

/* Each gets argv[0] = subcommand name. */
int cmd_topology(int argc, char **argv);
int cmd_plan(int argc, char **argv);
/* Control socket clients of numaplaced (see numaplace/ctl.h). */
int cmd_admit(int argc, char **argv);
int cmd_release(int argc, char **argv);
/* In-place resize of a workload's exclusive CPUs. */
int cmd_resize(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_state(int argc, char **argv);
/* Verification: pinned maps (violations), daemon samples (events). */
int cmd_violations(int argc, char **argv);
int cmd_events(int argc, char **argv);
/* What the cluster reads: NodeResourceTopology, Koordinator annotations. */
int cmd_export(int argc, char **argv);
/* Make room for a rejected admission by moving movable workloads. */
int cmd_defrag(int argc, char **argv);
/* Why a workload got its CPUs (numaplace/explain.h). */
int cmd_explain(int argc, char **argv);
/* The OCI runtime hook: createRuntime/prestart admit, poststop releases;
 * also the whole of numaplace-oci-hook (oci_hook_main.c). */
int cmd_oci_hook(int argc, char **argv);

/* ---- shared by the subcommands (cli_args.c, cli_common.c) ---- */

/* For getopt's 'h' (usage on stdout, NP_EXIT_OK) and anything unknown
 * (usage on stderr, NP_EXIT_USAGE): the exit code. */
int cli_usage(void (*usage)(FILE *f), int c);
/* After getopt: true when no operand follows the options; else says
 * "numaplace CMD: unexpected argument 'X'" and is false. */
bool cli_no_operands(const char *cmd, int argc, char **argv);
/* --wait WHAT of admit and release: "enforced" or "durable" (the
 * request's "wait"); false after saying what is wrong. */
bool cli_wait_arg(const char *cmd, const char *what);
/* req with "wait": wait when wait is given; NULL (out of memory, req
 * freed) or req. */
json_t *cli_with_wait(json_t *req, const char *wait);
/*
 * One request to numaplaced at sock: 0 with *resp set when it answered
 * "ok":true. Otherwise -1, *resp NULL, and the message printed:
 * "numaplace CMD: ..." when there is no answer (req NULL: out of memory),
 * "numaplaced: ..." when it refused.
 */
int cli_ctl_request(const char *cmd, const char *sock, const json_t *req,
		    json_t **resp);
/* j as indented JSON, keys in order, and a newline, on stdout. */
void cli_print_json(const json_t *j);
/*
 * --topology SRC (NULL = live) into *t: NP_EXIT_OK, or the exit code with
 * "numaplace CMD: MESSAGE" printed: NP_EXIT_USAGE for a source given that
 * is missing or not valid, NP_EXIT_FAIL otherwise (live hwloc failing).
 */
struct np_topology;
int cli_load_topology(const char *cmd, const char *src, struct np_topology **t);
/* A JSON file ("-" = stdin), duplicate keys refused; NULL with
 * "numaplace CMD: FILE: TEXT (line L, column C)" printed. */
json_t *cli_load_json(const char *cmd, const char *path);
/* path opened for reading into *f; false, said ("numaplace CMD: PATH: is
 * a directory, not a file", or why it cannot be opened), when not. */
bool cli_open_file(const char *cmd, const char *path, FILE **f);

#endif
