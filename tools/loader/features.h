/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What the running kernel offers that rxdp's XDP program needs, probed by
 * loading tiny programs (the kernel's answer, not a guess from uname: a
 * distribution kernel may carry a feature back to an older release).
 *
 *   BPF atomics  (Linux 5.12)  compare-and-exchange, fetch-and-or, and:
 *                              the PSN filter's updates. Needed.
 *   xdp.frags    (Linux 5.18)  multi-buffer XDP and bpf_xdp_get_buff_len():
 *                              the program variant for frames larger than
 *                              a page. Without it rxdp_xdp_linear is loaded.
 */
#ifndef RXDP_LOADER_FEATURES_H
#define RXDP_LOADER_FEATURES_H

#include <stdbool.h>

#define RXDP_KERNEL_MIN "5.15" /* the oldest release rxdp supports */

struct rxdp_kernel_features {
	bool atomics; /* BPF_ATOMIC: BPF_CMPXCHG, BPF_OR | BPF_FETCH, BPF_AND */
	bool frags; /* BPF_F_XDP_HAS_FRAGS and bpf_xdp_get_buff_len() */
};

/* Probe them. 0, or -errno where the kernel would not answer (-EPERM). */
int rxdp_kernel_probe(struct rxdp_kernel_features *f);

#endif /* RXDP_LOADER_FEATURES_H */
