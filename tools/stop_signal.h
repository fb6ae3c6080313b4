/* SPDX-License-Identifier: Apache-2.0 */
/*
 * SIGINT and SIGTERM end a loop: stop_on_signals() makes them set `stop`
 * (without SA_RESTART, so that a sleep in progress ends). Header only:
 * np-memtouch links none of the CLI's objects.
 */
#ifndef NUMAPLACE_TOOLS_STOP_SIGNAL_H
#define NUMAPLACE_TOOLS_STOP_SIGNAL_H

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t stop;

static inline void on_stop_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static inline void stop_on_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
}

#endif
