/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * 24-bit packet sequence number arithmetic (IBTA 9.7.1): PSNs wrap at 2^24,
 * and "before/after" is decided on the half-space, as Soft-RoCE does.
 */
#ifndef RXDP_PSN_H
#define RXDP_PSN_H

#ifdef __bpf__
#include "vmlinux.h"
#else
#include <linux/types.h>
#endif

#define ROCE_PSN_BITS 24
#define ROCE_PSN_MOD (1U << ROCE_PSN_BITS)
#define ROCE_PSN_HALF (1U << (ROCE_PSN_BITS - 1))

static inline __u32 psn_add(__u32 psn, __u32 n)
{
	return (psn + n) & (ROCE_PSN_MOD - 1);
}

/*
 * Signed distance a - b in the 24-bit ring, in [-2^23, 2^23): positive when
 * a comes after b.
 */
static inline __s32 psn_diff(__u32 a, __u32 b)
{
	return (__s32)((a - b) << (32 - ROCE_PSN_BITS)) >> (32 - ROCE_PSN_BITS);
}

static inline int psn_before(__u32 a, __u32 b)
{
	return psn_diff(a, b) < 0;
}

static inline int psn_after(__u32 a, __u32 b)
{
	return psn_diff(a, b) > 0;
}

/* Is psn in the half-open window [start, end) of the ring? */
static inline int psn_in_window(__u32 psn, __u32 start, __u32 end)
{
	__u32 span = (end - start) & (ROCE_PSN_MOD - 1);

	return ((psn - start) & (ROCE_PSN_MOD - 1)) < span;
}

#endif /* RXDP_PSN_H */
