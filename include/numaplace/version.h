/* SPDX-License-Identifier: Apache-2.0 */
/* The version numaplace reports (numaplace_build_info, --version). */
#ifndef NUMAPLACE_VERSION_H
#define NUMAPLACE_VERSION_H

#define NP_VERSION "0.6.0-dev"

#endif
