// SPDX-License-Identifier: Apache-2.0
/* numaplaced's configuration file (numaplace/config.h). */
#include "fuzz.h"
#include "numaplace/config.h"

#include <jansson.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *j = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES,
			       NULL);
	struct np_config c;
	char err[1024] = "";
	int r;

	if (!j)
		return 0;
	r = np_config_from_json(&c, j, err, sizeof(err));
	FUZZ_NEEDS_MESSAGE(r, err);
	if (!r)
		json_decref(np_config_to_json(&c));
	json_decref(j);
	return 0;
}
