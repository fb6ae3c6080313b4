/* SPDX-License-Identifier: Apache-2.0 */
/*
 * /metrics: numaplaced in the Prometheus text format (0.0.4), served by
 * libmicrohttpd on its own thread so that a scrape never waits for the
 * reconcile loop nor the loop for a scrape.
 *
 * The loop publishes a snapshot after each cycle and each batch of
 * control requests (np_metrics_publish: the daemon's families rendered to
 * text, the BPF program ids, where the maps are pinned). A scrape copies
 * that snapshot under a mutex and adds what the BPF side counts, reading
 * each map once: the per-workload counters from the pinned maps (named by
 * np_slots, as `numaplace violations` reads them) and the programs' run
 * counts by id.
 */
#ifndef NUMAPLACE_DAEMON_METRICS_H
#define NUMAPLACE_DAEMON_METRICS_H

#include "numaplace/bpf_load.h"
#include "numaplace/daemon.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

/* "HOST:PORT" (an IPv4 address, or an IPv6 one in brackets) or
 * "unix:/ABSOLUTE/PATH"; "" = off. why says what is wrong. */
struct np_metrics_addr {
	struct sockaddr_storage sa;
	socklen_t len;
	bool unix_path;
};
int np_metrics_addr_parse(const char *s, struct np_metrics_addr *a, char *why,
			  size_t whylen);

extern const double np_hist_admission_le[NP_HIST_BUCKETS];
extern const double np_hist_reconcile_le[NP_HIST_BUCKETS];
void np_hist_add(struct np_hist *h, const double *le, double seconds);

/* Counted under "other" once NP_REJ_RESOURCES names are in use. */
void np_rej_count_add(struct np_rej_count *t, const char *resource);

/* The daemon's families (everything but what BPF counts), as text; NULL
 * on ENOMEM. */
char *np_metrics_render_daemon(const struct np_daemon *d, size_t *len);
/* What the BPF side counts: per-workload counters from the maps pinned
 * in pin_dir (nothing when not pinned), the programs by id. tick_hz
 * turns cpu-clock samples into seconds. */
void np_metrics_render_bpf(FILE *f, const char *pin_dir, unsigned tick_hz,
			   const struct np_bpf_prog_ref *progs, int nprogs);

struct np_metrics;

/* Listen on addr (already parsed); err says why not. */
int np_metrics_start(struct np_metrics **out, const char *listen, char *err,
		     size_t errlen);
void np_metrics_stop(struct np_metrics *m);
/* Replace the snapshot; text is taken over (freed by the server). */
void np_metrics_publish(struct np_metrics *m, char *text, size_t len,
			const char *pin_dir, unsigned tick_hz,
			const struct np_bpf_prog_ref *progs, int nprogs);
/* The port bound (TCP; 0 for a Unix socket), for tests that listen on
 * port 0. */
unsigned np_metrics_port(const struct np_metrics *m);
/* Scrapes served so far. */
uint64_t np_metrics_scrapes(const struct np_metrics *m);

#endif
