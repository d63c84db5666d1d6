// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A program the verifier refuses, under the name of rxdp's, for
 * tests/e2e/loader.sh (RXDP_XDP_OBJECT): it reads the packet without
 * checking its length. rxdp-loader must show the verifier's log.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("xdp")
int rxdp_xdp(struct xdp_md *ctx)
{
	unsigned char *data = (void *)(long)ctx->data;

	return data[12] == 0x08 ? XDP_PASS : XDP_DROP;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
