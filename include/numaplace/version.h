/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The version numaplace reports (--version of the three programs, the
 * numaplace_build_info metric, the state file's "numaplace_version"):
 * NP_VERSION, defined in the build's generated np_version.h
 * (BUILD/gen/np_version.h, made by tools/version.sh from git, or from the
 * VERSION file of a tarball).
 */
#ifndef NUMAPLACE_VERSION_H
#define NUMAPLACE_VERSION_H

#include "np_version.h"

#endif
