/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The few calls of systemd's D-Bus API that the systemd enforcer backend
 * makes (org.freedesktop.systemd1, through sd-bus), and unit names.
 * Every function returns 0 or a negative errno with the message in err.
 */
#ifndef NUMAPLACE_ENFORCE_SYSTEMD_BUS_H
#define NUMAPLACE_ENFORCE_SYSTEMD_BUS_H

#include "numaplace/cpuset.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

/* systemd's private socket: answers root without the bus daemon. */
#define NP_SYSTEMD_PRIVATE "unix:path=/run/systemd/private"

/*
 * Connect: to address when given, else the private socket, then the system
 * bus. *via says which ("/run/systemd/private" or "system bus"). The
 * connection is checked with a Ping of PID 1's manager object.
 */
int np_systemd_bus_connect(sd_bus **out, const char *address, const char **via,
		  char *err, size_t errlen);

/* The cgroup path of a slice: "a-b.slice" -> "a.slice/a-b.slice";
 * "-.slice" -> "". */
int np_systemd_slice_path(const char *slice, char *out, size_t len, char *err,
		     size_t errlen);

/* CPUs or nodes as systemd's AllowedCPUs/AllowedMemoryNodes "ay": bit b
 * of byte k is CPU 8k+b. Returns the length (0 for an empty set). */
size_t np_systemd_bus_mask_from_cpuset(const np_cpuset *s, uint8_t *out, size_t cap);
void np_systemd_bus_mask_to_cpuset(const uint8_t *m, size_t n, np_cpuset *s);

enum np_systemd_load { NP_SYSTEMD_LOADED, NP_SYSTEMD_NOT_FOUND, NP_SYSTEMD_OTHER };

struct np_systemd_unit_props {
	enum np_systemd_load load;
	char active[32];      /* ActiveState: active, inactive, ... */
	bool has_cpus;        /* AllowedCPUs is set (non-empty) */
	np_cpuset cpus;       /* AllowedCPUs */
	bool has_mems;
	np_cpuset mems;       /* AllowedMemoryNodes, as node numbers */
	char cgroup[1024];    /* ControlGroup without the leading '/'; ""
				 while it has none */
	char slice[256];      /* Slice: the unit's slice ("" for none) */
};

/* GetUnit (NP_SYSTEMD_NOT_FOUND when systemd has not loaded it; load_it:
 * LoadUnit, which loads a unit that has a file), then LoadState, ActiveState, AllowedCPUs,
 * AllowedMemoryNodes and ControlGroup of the unit. */
int np_systemd_bus_unit_info(sd_bus *bus, const char *unit, bool load_it,
		    struct np_systemd_unit_props *ui, char *err, size_t errlen);

/*
 * SetUnitProperties(unit, runtime=true, AllowedCPUs [, AllowedMemoryNodes]):
 * mems NULL leaves the memory nodes alone. An empty cpus is refused: it
 * does not give CPUs back (the cgroup keeps its old set).
 */
int np_systemd_bus_set_allowed(sd_bus *bus, const char *unit, const np_cpuset *cpus,
		      const np_cpuset *mems, char *err, size_t errlen);

/*
 * StartTransientUnit of a scope in slice with Delegate=yes, the given
 * CPUs and memory nodes, and pid as its first process; waits (up to
 * timeout_ms) for the start job to finish.
 */
/* ResetFailedUnit: a failed unit's name can be started again. */
int np_systemd_bus_reset_failed(sd_bus *bus, const char *unit, char *err, size_t errlen);
int np_systemd_bus_start_scope(sd_bus *bus, const char *scope, const char *slice,
		      pid_t pid, const np_cpuset *cpus, const np_cpuset *mems,
		      const char *description, int timeout_ms, char *err,
		      size_t errlen);

/*
 * The unit systemd counts `pid` in (unit: its Id) and the type of the job
 * it runs on that unit now (type: systemd's JobType, "restart", "stop",
 * ...; "" when none): GetUnitByPID, then the unit's Id and Job, then the
 * job's JobType, each call waiting at most usec (0: sd-bus's default).
 */
int np_systemd_bus_job_of_pid(sd_bus *bus, pid_t pid, uint64_t usec,
			      char *unit, size_t unitlen, char *type,
			      size_t typelen, char *err, size_t errlen);

#endif
