// SPDX-License-Identifier: Apache-2.0
/* The small parsers of every surface: CPU lists and masks, NUMA node
 * lists, CPU and memory quantities, systemd unit names. The first byte
 * picks one; the rest is the text. */
#include "fuzz.h"
#include "numaplace/admit.h"
#include "numaplace/cpuset.h"
#include "numaplace/quantity.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s, err[512] = "";
	np_cpuset c;
	np_nodemask m;
	int64_t milli;
	uint64_t bytes;
	int r = 0;

	if (!size)
		return 0;
	if (!(s = malloc(size)))
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 6) {
	case 0:
		r = np_cpuset_parse(&c, s, err, sizeof(err));
		if (r >= 0) {
			/* what parses formats back to an equal set */
			char *back = np_cpuset_str(&c);
			np_cpuset again;
			if (back && (np_cpuset_parse(&again, back, NULL, 0) < 0 ||
				     !np_cpuset_equal(&again, &c)))
				abort();
			free(back);
		}
		break;
	case 1:
		r = np_cpuset_parse_mask(&c, s, err, sizeof(err));
		break;
	case 2:
		r = np_nodemask_parse(&m, s, err, sizeof(err));
		break;
	case 3:
		r = np_quantity_cpu_milli(s, &milli, err, sizeof(err));
		break;
	case 4:
		r = np_quantity_bytes(s, &bytes, err, sizeof(err));
		break;
	default:
		r = np_systemd_unit_check(s, err, sizeof(err));
	}
	FUZZ_NEEDS_MESSAGE(r, err);
	free(s);
	return 0;
}
