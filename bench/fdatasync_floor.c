// SPDX-License-Identifier: Apache-2.0
/*
 * np-fdatasync-floor DIR N: the OCI hook's floor on this machine (issue
 * 32): N times a small record (100 bytes, as a journal record of one
 * workload is about) appended to a file in DIR and fdatasync'ed, as
 * numaplaced's acknowledged admission does once; one line per call, its
 * microseconds. bench/hook_latency.sh runs it between the hook's starts,
 * on the state's disk, and holds the hook's p99 to this p99.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	char path[4096], rec[101];
	int n, fd;

	if (argc != 3 || (n = atoi(argv[2])) <= 0) {
		fprintf(stderr, "usage: np-fdatasync-floor DIR N\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/np-fdatasync-floor", argv[1]);
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "np-fdatasync-floor: %s: %s\n", path,
			strerror(errno));
		return 1;
	}
	memset(rec, 'x', sizeof(rec) - 1);
	rec[sizeof(rec) - 1] = '\n';
	for (int i = 0; i < n; i++) {
		double t0 = now_us();

		if (write(fd, rec, sizeof(rec)) != (ssize_t)sizeof(rec) ||
		    fdatasync(fd)) {
			fprintf(stderr, "np-fdatasync-floor: %s: %s\n", path,
				strerror(errno));
			return 1;
		}
		printf("%.0f\n", now_us() - t0);
	}
	close(fd);
	unlink(path);
	return 0;
}
