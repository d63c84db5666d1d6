/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The maps of the XDP program, as BPF declares them (layouts and names:
 * include/rxdp/maps.h, include/rxdp/params.h). Kept apart so that a test
 * program standing in for the classifier declares exactly the same maps.
 */
#ifndef RXDP_BPF_MAPS_H
#define RXDP_BPF_MAPS_H

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

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RXDP_MAX_MCAST_GRP);
	__type(key, struct rxdp_mcast_key);
	__type(value, struct rxdp_mcast_grp);
} mcast SEC(".maps");

#endif /* RXDP_BPF_MAPS_H */
