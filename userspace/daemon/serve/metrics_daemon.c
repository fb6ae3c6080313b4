// SPDX-License-Identifier: Apache-2.0
/*
 * The daemon's /metrics: listening per config.metrics_listen (retried),
 * the snapshot rendered (metrics_render.c) and published to the server
 * (metrics.c) after each cycle and batch of requests, its status.
 */
#include "daemon/daemon_internal.h"
#include "daemon/serve/metrics.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NP_METRICS_RETRY_US (30u * 1000000u)

/* Listen on cfg.metrics_listen unless already; a failure is said once per
 * reason and tried again every 30 s (the port may be freed). */
static void metrics_listen(struct np_daemon *d)
{
	char err[512];
	int r;

	if (d->metrics && !strcmp(d->metrics_listen, d->cfg.metrics_listen))
		return;
	if (d->metrics) { /* changed by a reload */
		np_metrics_stop(d->metrics);
		d->metrics = NULL;
		np_log(LOG_INFO, "metrics: no longer on %s", d->metrics_listen);
		d->metrics_error[0] = '\0';
		d->metrics_retry_us = 0;
	}
	snprintf(d->metrics_listen, sizeof(d->metrics_listen), "%s",
		 d->cfg.metrics_listen);
	if (!d->cfg.metrics_listen[0]) {
		d->metrics_error[0] = '\0';
		return;
	}
	if (d->metrics_retry_us && np_daemon_now_us() < d->metrics_retry_us)
		return;
	r = np_metrics_start(&d->metrics, d->cfg.metrics_listen, err,
			     sizeof(err));
	if (r) {
		if (strcmp(err, d->metrics_error))
			np_log(LOG_ERR, "%s (not serving metrics; tried again "
					"every 30 s)",
			       err);
		snprintf(d->metrics_error, sizeof(d->metrics_error), "%s", err);
		d->metrics_retry_us = np_daemon_now_us() + NP_METRICS_RETRY_US;
		return;
	}
	d->metrics_error[0] = '\0';
	d->metrics_retry_us = 0;
	if (!strncmp(d->cfg.metrics_listen, "unix:", 5))
		np_log(LOG_INFO, "metrics: GET /metrics on %s",
		       d->cfg.metrics_listen);
	else
		np_log(LOG_INFO, "metrics: http://%s/metrics",
		       d->cfg.metrics_listen);
}

void np_daemon_metrics(struct np_daemon *d)
{
	struct np_bpf_prog_ref progs[32];
	char pin_dir[NP_PATH_MAX + 16] = "";
	size_t len = 0;
	char *text;
	int n;

	metrics_listen(d);
	if (!d->metrics)
		return;
	text = np_metrics_render_daemon(d, &len);
	n = np_verify_progs(d->verify, progs, 32);
	if (d->verify)
		np_bpf_pin_dir(pin_dir, sizeof(pin_dir), d->cfg.bpf_pin_path);
	np_metrics_publish(d->metrics, text, len, pin_dir,
			   d->cfg.verify.tick_hz, progs, n);
}

void np_daemon_metrics_stop(struct np_daemon *d)
{
	np_metrics_stop(d->metrics);
	d->metrics = NULL;
}

json_t *np_daemon_metrics_status(const struct np_daemon *d)
{
	json_t *o = json_pack("{s:s,s:b}", "listen", d->cfg.metrics_listen,
			      "serving", d->metrics != NULL);

	if (!o)
		return NULL;
	if (d->metrics) {
		json_object_set_new(o, "port",
				    json_integer(np_metrics_port(d->metrics)));
		json_object_set_new(
			o, "scrapes",
			json_integer((json_int_t)np_metrics_scrapes(d->metrics)));
	}
	if (d->metrics_error[0])
		json_object_set_new(o, "error", json_string(d->metrics_error));
	return o;
}
