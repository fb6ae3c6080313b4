/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Fuzz harnesses (tests/fuzz/fuzz_*.c): each defines LLVMFuzzerTestOneInput
 * for one parser of outside input. Built two ways (Makefile):
 *   - with libFuzzer (`make fuzz`: clang -fsanitize=fuzzer,address,undefined),
 *     coverage-guided runs from tests/fuzz/corpus/NAME;
 *   - with replay.c as main, in every test build (ASan/UBSan in check-asan):
 *     each seed and each kept crash input (tests/fuzz/regress/NAME) runs
 *     once, so a fixed crash stays fixed.
 * A harness asserts only what must hold for any input: no crash, no leak,
 * no undefined behaviour, and an error message for every refusal.
 */
#ifndef NP_FUZZ_H
#define NP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Optional, called by replay.c after the inputs: what the harness saw
 * (printed); nonzero fails the replay (the seeds no longer reach a path
 * they must). */
int fuzz_report(void) __attribute__((weak));

/* A refusal without a message is a defect too. */
#define FUZZ_NEEDS_MESSAGE(r, err)                                             \
	do {                                                                   \
		if ((r) < 0 && (r) != -12 /* ENOMEM */ && !(err)[0]) {          \
			fprintf(stderr, "refused (%d) without a message\n",    \
				(int)(r));                                     \
			abort();                                               \
		}                                                              \
	} while (0)

#endif
