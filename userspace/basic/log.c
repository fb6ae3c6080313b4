// SPDX-License-Identifier: Apache-2.0
#include "basic/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void vlog(int prio, int code, const char *fmt, va_list ap)
{
	static const char *const names[] = {"emerg", "alert", "crit", "error",
					    "warning", "notice", "info",
					    "debug"};
	char line[2048], eb[64];
	int n, k;

	n = snprintf(line, sizeof(line), "<%d>numaplaced: %s: ", prio & 7,
		     names[prio & 7]);
	k = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	if (k < 0)
		k = 0;
	n += k;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2; /* truncated, still one line */
	if (code) {
		k = snprintf(line + n, sizeof(line) - (size_t)n - 1, ": %s",
			     strerror_r(code < 0 ? -code : code, eb,
					sizeof(eb)));
		n += k > 0 ? k : 0;
		if (n > (int)sizeof(line) - 2)
			n = (int)sizeof(line) - 2;
	}
	line[n++] = '\n';
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return; /* nowhere left to report it */
}

void np_log(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, 0, fmt, ap);
	va_end(ap);
}

int np_log_errno(int prio, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(prio, code, fmt, ap);
	va_end(ap);
	return code;
}
