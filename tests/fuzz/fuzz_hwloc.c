// SPDX-License-Identifier: Apache-2.0
/* An hwloc XML topology (`--topology xml:FILE`, numaplaced's "topology"):
 * written to a file of its own and loaded with np_topology_from_hwloc_xml,
 * that is the check before libhwloc sees it, libhwloc, and the conversion
 * to the model (numaplace/topology.h). */
#include "fuzz.h"
#include "numaplace/topology.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static char path[64];

/*
 * libhwloc 2.9 leaks the object it was reading when its XML parser gives
 * up on a broken tag (640 bytes; `valgrind lstopo-no-graphics -i FILE`
 * shows the same): not ours to fix, and numaplace loads a topology once
 * per start. libhwloc has no frame pointers, so the report cannot be
 * narrowed to its XML import: every leak from inside libhwloc is
 * ignored, ours are still reported.
 */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libhwloc.so\n";
}

static void cleanup(void)
{
	unlink(path);
}

static void setup(void)
{
	int fd;

	/* hwloc's PCI plugin unloads libpciaccess with its state still
	 * allocated (a "leak" in an unknown module): keep it resident, as
	 * tests/unit/test_topology.c does */
	(void)dlopen("libpciaccess.so.0", RTLD_NOW | RTLD_NODELETE);
	/* hwloc's own complaints about bad files: one line per input */
	setenv("HWLOC_HIDE_ERRORS", "1", 0);
	snprintf(path, sizeof(path), "/tmp/np-fuzz-hwloc-XXXXXX");
	if ((fd = mkstemp(path)) < 0) {
		perror("mkstemp");
		abort();
	}
	close(fd);
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct np_topology *t = NULL;
	char err[1024] = "";
	int fd, r;

	if (!path[0])
		setup();
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
		perror(path);
		abort();
	}
	close(fd);
	r = np_topology_from_hwloc_xml(&t, path, err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	if (!r) {
		/* what loads is a topology the rest can use */
		if (!t || t->ncpus < 1 || t->nnuma < 1 ||
		    np_cpuset_count(&t->online) != t->ncpus)
			abort();
		np_topology_free(t);
	} else if (t) {
		abort();
	}
	return 0;
}
