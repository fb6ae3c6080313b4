// SPDX-License-Identifier: Apache-2.0
/*
 * systemd's D-Bus API, the calls the systemd enforcer backend makes
 * (see systemd_bus.h). Property types as systemd 252 sends them:
 * AllowedCPUs and AllowedMemoryNodes are "ay" bit masks, padded to 8 bytes.
 * Then the backend's calls through it (systemd_internal.h), which connect
 * again once when systemd dropped the connection.
 */
#include "systemd_internal.h"
#include "numaplace/enforcer.h"
#include "numaplace/error.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_UNIT "org.freedesktop.systemd1.Unit"

/* "what: message (name)" from a bus error, return r. */
static int bus_fail(char *err, size_t errlen, int r, const sd_bus_error *e,
		    const char *what)
{
	if (e && sd_bus_error_is_set(e))
		return np_errf(err, errlen, r < 0 ? r : -EIO, "%s: %s (%s)",
			       what, e->message ? e->message : "", e->name);
	return np_errno(err, errlen, r < 0 ? r : -EIO, "%s", what);
}

static int try_connect(sd_bus **out, const char *address)
{
	sd_bus *b = NULL;
	int r;

	if ((r = sd_bus_new(&b)) < 0)
		return r;
	if ((r = sd_bus_set_address(b, address)) >= 0 &&
	    (r = sd_bus_start(b)) >= 0) {
		*out = b;
		return 0;
	}
	sd_bus_unref(b);
	return r;
}

static int ping(sd_bus *b, char *err, size_t errlen)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_call_method(b, SD_DEST, SD_PATH, "org.freedesktop.DBus.Peer",
				   "Ping", &e, NULL, "");
	if (r < 0)
		bus_fail(err, errlen, r, &e, "Ping of systemd's manager");
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

int np_systemd_bus_connect(sd_bus **out, const char *address, const char **via,
		  char *err, size_t errlen)
{
	char e1[256] = "", e2[256] = "";
	sd_bus *b = NULL;
	int r;

	*out = NULL;
	if (address) {
		*via = address;
		if ((r = try_connect(&b, address)) < 0)
			return np_errno(err, errlen, r, "bus %s", address);
	} else {
		*via = "/run/systemd/private";
		r = try_connect(&b, NP_SYSTEMD_PRIVATE);
		if (r >= 0 && (r = ping(b, e1, sizeof(e1))) < 0) {
			sd_bus_unref(b);
			b = NULL;
		} else if (r < 0) {
			np_errno(e1, sizeof(e1), r, "connect");
		}
		if (!b) {
			*via = "system bus";
			if ((r = sd_bus_open_system(&b)) < 0) {
				np_errno(e2, sizeof(e2), r, "connect");
				return np_errf(err, errlen, r,
					       "systemd does not answer: "
					       "/run/systemd/private: %s; "
					       "system bus: %s",
					       e1, e2);
			}
		}
	}
	if ((r = ping(b, err, errlen)) < 0) {
		sd_bus_unref(b);
		return r;
	}
	*out = b;
	return 0;
}

size_t np_systemd_bus_mask_from_cpuset(const np_cpuset *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	memset(out, 0, cap);
	NP_CPUSET_FOREACH(cpu, s)
	{
		if ((size_t)cpu / 8 >= cap)
			break;
		out[cpu / 8] |= (uint8_t)(1u << (cpu % 8));
		n = (size_t)cpu / 8 + 1;
	}
	return n;
}

void np_systemd_bus_mask_to_cpuset(const uint8_t *m, size_t n, np_cpuset *s)
{
	np_cpuset_zero(s);
	for (size_t k = 0; k < n; k++)
		for (int b = 0; b < 8; b++)
			if ((m[k] >> b) & 1 && k * 8 + (size_t)b < NP_MAX_CPUS)
				np_cpuset_set(s, (int)(k * 8) + b);
}

static const char *unit_iface(const char *unit)
{
	const char *dot = strrchr(unit, '.');
	if (dot && !strcmp(dot, ".slice"))
		return "org.freedesktop.systemd1.Slice";
	if (dot && !strcmp(dot, ".scope"))
		return "org.freedesktop.systemd1.Scope";
	return "org.freedesktop.systemd1.Service";
}

static int get_mask(sd_bus *bus, const char *path, const char *iface,
		    const char *prop, bool *has, np_cpuset *s,
		    sd_bus_error *e)
{
	sd_bus_message *reply = NULL;
	const void *p = NULL;
	size_t n = 0;
	int r = sd_bus_get_property(bus, SD_DEST, path, iface, prop, e, &reply,
				    "ay");
	if (r >= 0)
		r = sd_bus_message_read_array(reply, 'y', &p, &n);
	if (r >= 0) {
		np_systemd_bus_mask_to_cpuset(p, n, s);
		*has = !np_cpuset_empty(s);
	}
	sd_bus_message_unref(reply);
	return r;
}

static int get_str(sd_bus *bus, const char *path, const char *iface,
		   const char *prop, char *out, size_t len, sd_bus_error *e)
{
	char *s = NULL;
	int r = sd_bus_get_property_string(bus, SD_DEST, path, iface, prop, e,
					   &s);
	if (r >= 0)
		snprintf(out, len, "%s", s);
	free(s);
	return r;
}

int np_systemd_bus_unit_info(sd_bus *bus, const char *unit, bool load_it,
		    struct np_systemd_unit_props *ui, char *err, size_t errlen)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *path = NULL;
	char load[32] = "", what[320];
	int r;

	memset(ui, 0, sizeof(*ui));
	/* GetUnit unless asked to load: asking about a unit that is not
	 * there must not make systemd load (and announce, and drop) a
	 * stub every time. */
	snprintf(what, sizeof(what), "%s(%s)", load_it ? "LoadUnit" : "GetUnit",
		 unit);
	r = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER,
			       load_it ? "LoadUnit" : "GetUnit", &e, &reply,
			       "s", unit);
	if (r < 0 && sd_bus_error_has_name(&e, "org.freedesktop.systemd1.NoSuchUnit")) {
		ui->load = NP_SYSTEMD_NOT_FOUND;
		snprintf(ui->active, sizeof(ui->active), "inactive");
		sd_bus_error_free(&e);
		return 0;
	}
	if (r >= 0 && (r = sd_bus_message_read(reply, "o", &path)) >= 0 &&
	    (r = get_str(bus, path, SD_UNIT, "LoadState", load, sizeof(load),
			 &e)) >= 0 &&
	    (r = get_str(bus, path, SD_UNIT, "ActiveState", ui->active,
			 sizeof(ui->active), &e)) >= 0) {
		ui->load = !strcmp(load, "loaded")	? NP_SYSTEMD_LOADED
			   : !strcmp(load, "not-found") ? NP_SYSTEMD_NOT_FOUND
							: NP_SYSTEMD_OTHER;
		snprintf(what, sizeof(what), "AllowedCPUs of %s", unit);
		if (ui->load == NP_SYSTEMD_LOADED &&
		    (r = get_mask(bus, path, unit_iface(unit), "AllowedCPUs",
				  &ui->has_cpus, &ui->cpus, &e)) >= 0)
			r = get_mask(bus, path, unit_iface(unit),
				     "AllowedMemoryNodes", &ui->has_mems,
				     &ui->mems, &e);
		if (r >= 0 && ui->load == NP_SYSTEMD_LOADED) {
			char cg[sizeof(ui->cgroup) + 1] = "";
			r = get_str(bus, path, unit_iface(unit), "ControlGroup",
				    cg, sizeof(cg), &e);
			snprintf(ui->cgroup, sizeof(ui->cgroup), "%.*s",
				 (int)sizeof(ui->cgroup) - 1,
				 cg[0] == '/' ? cg + 1 : cg);
		}
		/* slices and scopes/services have it; others may not */
		if (r >= 0 && ui->load == NP_SYSTEMD_LOADED &&
		    get_str(bus, path, unit_iface(unit), "Slice", ui->slice,
			    sizeof(ui->slice), &e) < 0) {
			ui->slice[0] = '\0';
			sd_bus_error_free(&e);
		}
	}
	if (r < 0)
		bus_fail(err, errlen, r, &e, what);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

static int append_mask(sd_bus_message *m, const char *name,
		       const np_cpuset *s)
{
	uint8_t mask[NP_MAX_CPUS / 8];
	size_t n = np_systemd_bus_mask_from_cpuset(s, mask, sizeof(mask));
	int r;

	if ((r = sd_bus_message_open_container(m, 'r', "sv")) < 0 ||
	    (r = sd_bus_message_append(m, "s", name)) < 0 ||
	    (r = sd_bus_message_open_container(m, 'v', "ay")) < 0 ||
	    (r = sd_bus_message_append_array(m, 'y', mask, n)) < 0 ||
	    (r = sd_bus_message_close_container(m)) < 0)
		return r;
	return sd_bus_message_close_container(m);
}

static int call(sd_bus *bus, sd_bus_message *m, const char *what, char *err,
		size_t errlen, sd_bus_message **reply)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	int r = sd_bus_call(bus, m, 0, &e, reply);
	if (r < 0)
		bus_fail(err, errlen, r, &e, what);
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

int np_systemd_bus_set_allowed(sd_bus *bus, const char *unit, const np_cpuset *cpus,
		      const np_cpuset *mems, char *err, size_t errlen)
{
	sd_bus_message *m = NULL;
	char what[320];
	int r;

	snprintf(what, sizeof(what), "SetUnitProperties(%s)", unit);
	if (np_cpuset_empty(cpus) || (mems && np_cpuset_empty(mems)))
		return np_errf(err, errlen, -EINVAL,
			       "%s: an empty set does not give CPUs back; "
			       "refused",
			       what);
	if ((r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH,
						 SD_MANAGER,
						 "SetUnitProperties")) < 0 ||
	    (r = sd_bus_message_append(m, "sb", unit, 1)) < 0 ||
	    (r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
	    (r = append_mask(m, "AllowedCPUs", cpus)) < 0 ||
	    (mems && (r = append_mask(m, "AllowedMemoryNodes", mems)) < 0) ||
	    (r = sd_bus_message_close_container(m)) < 0) {
		sd_bus_message_unref(m);
		return np_errno(err, errlen, r, "%s: building the message",
				what);
	}
	r = call(bus, m, what, err, errlen, NULL);
	sd_bus_message_unref(m);
	return r;
}

static int append_scope_props(sd_bus_message *m, const char *slice, pid_t pid,
			      const np_cpuset *cpus, const np_cpuset *mems,
			      const char *description)
{
	int r;

	if ((r = sd_bus_message_open_container(m, 'a', "(sv)")) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Slice", "s", slice)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Delegate", "b", 1)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "Description", "s",
				       description)) < 0 ||
	    (r = sd_bus_message_append(m, "(sv)", "PIDs", "au", 1,
				       (uint32_t)pid)) < 0 ||
	    (r = append_mask(m, "AllowedCPUs", cpus)) < 0 ||
	    (r = append_mask(m, "AllowedMemoryNodes", mems)) < 0 ||
	    (r = sd_bus_message_close_container(m)) < 0)
		return r;
	/* no auxiliary units */
	if ((r = sd_bus_message_open_container(m, 'a', "(sa(sv))")) < 0)
		return r;
	return sd_bus_message_close_container(m);
}

int np_systemd_bus_reset_failed(sd_bus *bus, const char *unit, char *err, size_t errlen)
{
	sd_bus_message *m = NULL;
	char what[320];
	int r;

	snprintf(what, sizeof(what), "ResetFailedUnit(%s)", unit);
	if ((r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH,
						 SD_MANAGER,
						 "ResetFailedUnit")) < 0 ||
	    (r = sd_bus_message_append(m, "s", unit)) < 0) {
		sd_bus_message_unref(m);
		return np_errno(err, errlen, r, "%s: building the message",
				what);
	}
	r = call(bus, m, what, err, errlen, NULL);
	sd_bus_message_unref(m);
	return r;
}

int np_systemd_bus_start_scope(sd_bus *bus, const char *scope, const char *slice,
		      pid_t pid, const np_cpuset *cpus, const np_cpuset *mems,
		      const char *description, int timeout_ms, char *err,
		      size_t errlen)
{
	struct np_systemd_unit_props ui;
	sd_bus_message *m = NULL;
	char what[320];
	int r;

	snprintf(what, sizeof(what), "StartTransientUnit(%s)", scope);
	if ((r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH,
						 SD_MANAGER,
						 "StartTransientUnit")) < 0 ||
	    (r = sd_bus_message_append(m, "ss", scope, "fail")) < 0 ||
	    (r = append_scope_props(m, slice, pid, cpus, mems,
				    description)) < 0) {
		sd_bus_message_unref(m);
		return np_errno(err, errlen, r, "%s: building the message",
				what);
	}
	r = call(bus, m, what, err, errlen, NULL);
	sd_bus_message_unref(m);
	if (r < 0)
		return r;
	/* The start job of a scope is quick: wait for its outcome. */
	for (int waited = 0;; waited += 20) {
		if ((r = np_systemd_bus_unit_info(bus, scope, false, &ui, err, errlen)) <
		    0)
			return r;
		if (!strcmp(ui.active, "active"))
			return 0;
		if (!strcmp(ui.active, "failed") || waited >= timeout_ms)
			return np_errf(err, errlen, -ETIMEDOUT,
				       "%s: the scope is %s after %d ms", what,
				       ui.active, waited);
		nanosleep(&(struct timespec){0, 20 * 1000000L}, NULL);
	}
}

/* Properties.Get(iface, prop) of path, waiting at most usec; the reply is
 * positioned on the variant. */
static int get_prop_within(sd_bus *bus, const char *path, const char *iface,
			   const char *prop, uint64_t usec, sd_bus_message **reply,
			   sd_bus_error *e)
{
	sd_bus_message *m = NULL;
	int r;

	if ((r = sd_bus_message_new_method_call(bus, &m, SD_DEST, path,
						 "org.freedesktop.DBus.Properties",
						 "Get")) >= 0 &&
	    (r = sd_bus_message_append(m, "ss", iface, prop)) >= 0)
		r = sd_bus_call(bus, m, usec, e, reply);
	sd_bus_message_unref(m);
	return r;
}

int np_systemd_bus_job_of_pid(sd_bus *bus, pid_t pid, uint64_t usec,
			      char *unit, size_t unitlen, char *type,
			      size_t typelen, char *err, size_t errlen)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	const char *path = NULL, *s = NULL, *jpath = NULL;
	char upath[512] = "", what[96];
	uint32_t job = 0;
	int r;

	unit[0] = type[0] = '\0';
	snprintf(what, sizeof(what), "GetUnitByPID(%ld)", (long)pid);
	if ((r = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH,
						 SD_MANAGER, "GetUnitByPID")) >= 0 &&
	    (r = sd_bus_message_append(m, "u", (uint32_t)pid)) >= 0 &&
	    (r = sd_bus_call(bus, m, usec, &e, &reply)) >= 0 &&
	    (r = sd_bus_message_read(reply, "o", &path)) >= 0) {
		snprintf(upath, sizeof(upath), "%s", path);
		reply = sd_bus_message_unref(reply);
		snprintf(what, sizeof(what), "the Id and Job of %ld's unit",
			 (long)pid);
		if ((r = get_prop_within(bus, upath, SD_UNIT, "Id", usec, &reply,
					 &e)) >= 0 &&
		    (r = sd_bus_message_read(reply, "v", "s", &s)) >= 0) {
			snprintf(unit, unitlen, "%s", s);
			reply = sd_bus_message_unref(reply);
			if ((r = get_prop_within(bus, upath, SD_UNIT, "Job", usec,
						 &reply, &e)) >= 0)
				r = sd_bus_message_read(reply, "v", "(uo)", &job,
							&jpath);
		}
	}
	if (r >= 0 && job) {
		char jp[512];
		snprintf(jp, sizeof(jp), "%s", jpath);
		reply = sd_bus_message_unref(reply);
		snprintf(what, sizeof(what), "JobType of job %u", job);
		if ((r = get_prop_within(bus, jp, "org.freedesktop.systemd1.Job",
					 "JobType", usec, &reply, &e)) >= 0 &&
		    (r = sd_bus_message_read(reply, "v", "s", &s)) >= 0)
			snprintf(type, typelen, "%s", s);
	}
	if (r < 0)
		bus_fail(err, errlen, r, &e, what);
	sd_bus_message_unref(m);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return r < 0 ? r : 0;
}

/* ---- bus calls, reconnecting once when systemd dropped the connection -- */

static bool bus_lost(int r)
{
	return r == -ENOTCONN || r == -ECONNRESET || r == -EPIPE ||
	       r == -ESHUTDOWN;
}

int np_systemd_reconnect(struct systemd_backend *s, char *err, size_t errlen)
{
	const char *via;

	int r;

	s->bus = sd_bus_flush_close_unref(s->bus);
	s->e.bus_gen++; /* a new connection (or none): watch its fd anew */
	r = np_systemd_bus_connect(&s->bus, s->address[0] ? s->address : NULL, &via,
			  err, errlen);
	if (r >= 0) {
		/* what happened while we were away: look again */
		for (int i = 0; i < s->nunits; i++)
			s->units[i].dirty = true;
		s->events = true;
		r = np_systemd_watch(s, err, errlen);
	}
	return r;
}

int np_systemd_set_allowed(struct systemd_backend *s, const char *unit,
		       const np_cpuset *cpus, const np_cpuset *mems, char *err,
		       size_t errlen)
{
	int r;

	if (!s->bus && (r = np_systemd_reconnect(s, err, errlen)) < 0)
		return r;
	r = np_systemd_bus_set_allowed(s->bus, unit, cpus, mems, err, errlen);
	s->e.bus_changes++;
	if (bus_lost(r) && !np_systemd_reconnect(s, err, errlen)) {
		r = np_systemd_bus_set_allowed(s->bus, unit, cpus, mems, err, errlen);
		s->e.bus_changes++;
	}
	return r;
}

int np_systemd_unit_info(struct systemd_backend *s, const char *unit, bool load_it,
		       struct np_systemd_unit_props *ui, char *err, size_t errlen)
{
	int r;

	if (!s->bus && (r = np_systemd_reconnect(s, err, errlen)) < 0)
		return r;
	r = np_systemd_bus_unit_info(s->bus, unit, load_it, ui, err, errlen);
	s->e.bus_reads++;
	if (bus_lost(r) && !np_systemd_reconnect(s, err, errlen)) {
		r = np_systemd_bus_unit_info(s->bus, unit, load_it, ui, err, errlen);
		s->e.bus_reads++;
	}
	return r;
}
