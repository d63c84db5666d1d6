// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp's XDP program: classify RoCEv2 packets and steer them to the AF_XDP
 * socket of the owning engine. (Skeleton: maps only; the classifier follows.)
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

#include "rxdp/params.h"
#include "rxdp/maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXDP_MAX_QP);
	__type(key, __u32);
	__type(value, struct rxdp_qp_ctx);
} qp_ctx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RXDP_MAX_QP);
	__type(key, __u32);
	__type(value, struct rxdp_qp_psn);
} qp_psn SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RXDP_MAX_QP);
	__type(key, __u32);
	__type(value, struct rxdp_qp_stats);
} qp_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, RXDP_V_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_XSKMAP);
	__uint(max_entries, RXDP_XSK_SLOTS);
	__type(key, __u32);
	__type(value, __u32);
} xsks SEC(".maps");

SEC("xdp")
int rxdp_xdp(struct xdp_md *ctx)
{
	return XDP_PASS;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
