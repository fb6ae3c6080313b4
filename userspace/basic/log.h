/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The daemon's log: one line on stderr per call, prefixed with the syslog
 * priority ("<4>numaplaced: warning: ..."), so that journald files it at
 * that priority. One write(2) a line: a kill mid-line never tears one.
 */
#ifndef NUMAPLACE_BASIC_LOG_H
#define NUMAPLACE_BASIC_LOG_H

#include <syslog.h>

void np_log(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Log "MESSAGE: strerror(-code)" at prio and return code (negative errno),
 * after systemd's log_error_errno. */
int np_log_errno(int prio, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
