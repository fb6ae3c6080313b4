/* SPDX-License-Identifier: Apache-2.0 */
/* Kubernetes resource quantities: "2", "1500m", "0.5", "2Gi", "100M". */
#ifndef NUMAPLACE_QUANTITY_H
#define NUMAPLACE_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

/* CPU quantity in millicores ("2" = 2000, "1500m" = 1500, "0.5" = 500). */
int np_quantity_cpu_milli(const char *s, int64_t *out, char *err,
			  size_t errlen);
/* Byte quantity ("2Gi", "512Mi", "1G", "1000"); fractions of a byte and
 * the milli suffix are rejected. */
int np_quantity_bytes(const char *s, uint64_t *out, char *err, size_t errlen);
/* "2Gi"-style rendering (exact binary suffix when possible). */
void np_quantity_format_bytes(uint64_t v, char *buf, size_t len);

#endif
