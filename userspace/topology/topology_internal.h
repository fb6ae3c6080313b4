/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the files of userspace/topology/. */
#ifndef NUMAPLACE_TOPOLOGY_INTERNAL_H
#define NUMAPLACE_TOPOLOGY_INTERNAL_H

#include <stddef.h>

/* Largest hwloc XML file read (a 4096-CPU export is a few MiB). */
#define XML_MAX_SIZE (64u << 20)

/*
 * topology_xml.c: an hwloc XML text checked before libhwloc reads it
 * (libhwloc 2.9 crashes on objects without their sets, and on some
 * malformed bitmaps). 0, or -EINVAL with err naming what (the source),
 * the line and what is missing.
 */
int np_hwloc_xml_check(const char *buf, size_t len, const char *what,
		       char *err, size_t errlen);

#endif
