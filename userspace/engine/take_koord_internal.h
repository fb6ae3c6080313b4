/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Engine-internal: Koordinator's CPU accumulator (take_koord_acc.c) as used
 * by np_take_koord() (take_koord.c). See take_koord.c for the behaviour.
 */
#ifndef NUMAPLACE_ENGINE_TAKE_KOORD_INTERNAL_H
#define NUMAPLACE_ENGINE_TAKE_KOORD_INTERNAL_H

#include "numaplace/take.h"

/*
 * One accumulator run over avail for need CPUs with the resolved bind
 * policy (never Default): 0 with *out set, -ENOSPC when need CPUs could
 * not be taken (*out then holds what was), -ENOMEM.
 */
int np_koord_accumulate(const struct np_take_req *q, enum np_bind_policy bind,
			const np_cpuset *avail, int need, np_cpuset *out);
/* CPUs of the cores whose every online CPU is in s. */
void np_koord_whole_cores(const struct np_topology *t, const np_cpuset *s,
			  np_cpuset *out);
/* The lowest CPU of s in every core that has one in s. */
void np_koord_one_per_core(const struct np_topology *t, const np_cpuset *s,
			   np_cpuset *out);

#endif
