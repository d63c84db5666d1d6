/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What fake_rdmacore.c answers, for test_verbs_foreign to expect */
#ifndef RXDP_TEST_FAKE_RDMACORE_H
#define RXDP_TEST_FAKE_RDMACORE_H

#include <errno.h>

/* A number from a function's name (FNV-1a, 16 bits) */
static inline unsigned int fake_rdmacore_mark(const char *fn)
{
	unsigned int h = 2166136261u;

	while (*fn)
		h = (h ^ (unsigned char)*fn++) * 16777619u;
	return (h ^ (h >> 16)) & 0xffff;
}

/* Its value (an int, a pointer, a GUID alike) and its errno */
#define FAKE_RDMACORE_RET(m) (0x70000u + (m))
#define FAKE_RDMACORE_ERRNO(m) (1000u + (m))

/*
 * For the stand-ins: FN's value, its errno set. FAKE_RDMACORE(fn) defines
 * fn without a prototype: at the ABI level it takes whatever it is called
 * with and returns a long, which every caller reads as its return type.
 */
static inline long fake_rdmacore_answer(const char *fn)
{
	unsigned int m = fake_rdmacore_mark(fn);

	errno = (int)FAKE_RDMACORE_ERRNO(m);
	return (long)FAKE_RDMACORE_RET(m);
}

#define FAKE_RDMACORE(fn)                              \
	long fn()                                      \
	{                                              \
		return fake_rdmacore_answer(__func__); \
	}

#endif
