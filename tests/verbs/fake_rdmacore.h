/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What fake_rdmacore.c answers, for test_verbs_foreign to expect */
#ifndef RXDP_TEST_FAKE_RDMACORE_H
#define RXDP_TEST_FAKE_RDMACORE_H

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

#endif
