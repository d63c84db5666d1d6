// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-ecnmark's tc program: ECN marking as a datacenter switch does it for
 * RoCE (the K_min/K_max/P_max rule DCQCN is tuned for), on the egress of a
 * port whose queue is a TBF (this kernel has no RED). It runs before the
 * qdisc, so it cannot see the TBF's queue: it keeps a virtual one, the
 * bytes offered to the port less what the port drains at rate_bps since
 * the last packet, and decides on the queue ahead of each packet:
 *
 *   below kmin             no mark
 *   kmin to kmax           CE with probability pmax * (q - kmin) / (kmax - kmin)
 *   kmax and above         CE on every ECT packet
 *
 * Only ECT(0) and ECT(1) packets are marked (RFC 3168); a packet that is
 * not ECT is never changed, and is counted where it would have been marked.
 * A packet that would overflow limit bytes is left out of the virtual
 * queue, as the TBF drops it. The verdict is always TC_ACT_OK: dropping is
 * the TBF's.
 */
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "ecnmark.h"

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define ETH_HLEN 14
#define TC_ACT_OK 0
#define ECN_MASK 3
#define ECN_CE 3
#define NS_PER_S 1000000000ULL

const volatile __u64 rate_bps = 0; /* 0: the queue never drains (tests) */
const volatile __u64 kmin = 0;
const volatile __u64 kmax = 0;
const volatile __u64 limit = 0; /* 0: no limit */
const volatile __u32 pmax = 0; /* probability at kmax, in 2^-32 */

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ecnmark_vq);
} vq SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ECNMARK_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 what, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &what);

	if (v)
		*v += n;
}

/* The queue ahead of a packet of len bytes, which then joins it */
static __always_inline __u64 vq_enqueue(__u32 len)
{
	__u32 zero = 0;
	struct ecnmark_vq *q = bpf_map_lookup_elem(&vq, &zero);
	__u64 now = bpf_ktime_get_ns(), dt, drained, ahead;

	if (!q)
		return 0;
	bpf_spin_lock(&q->lock);
	dt = now - q->t_ns;
	if (now < q->t_ns)
		dt = 0;
	if (dt > NS_PER_S) /* a second drains 1.25 GB at 10 Gbit/s: enough */
		dt = NS_PER_S;
	drained = dt * (rate_bps / 8) / NS_PER_S;
	q->bytes = q->bytes > drained ? q->bytes - drained : 0;
	q->t_ns = now;
	ahead = q->bytes;
	if (limit && ahead + len > limit)
		q->dropped++;
	else
		q->bytes += len;
	if (q->bytes > q->max_bytes)
		q->max_bytes = q->bytes;
	bpf_spin_unlock(&q->lock);
	return ahead;
}

static __always_inline bool congested(__u64 ahead)
{
	__u64 p;

	if (ahead < kmin)
		return false;
	if (ahead >= kmax)
		return true;
	/* (ahead - kmin) < (kmax - kmin) <= 2^32 for any sane buffer */
	p = (__u64)pmax * (ahead - kmin) / (kmax - kmin);
	return bpf_get_prandom_u32() < p;
}

/* CE into an ECT packet's header: 1 marked (or CE already), 0 not ECT,
 * -1 the packet could not be read or written */
static __always_inline int mark_v4(struct __sk_buff *skb)
{
	__be16 oldw, neww; /* the word of version/IHL and TOS */
	__u8 tos;

	if (bpf_skb_load_bytes(skb, ETH_HLEN, &oldw, 2))
		return -1;
	tos = bpf_ntohs(oldw) & 0xff;
	if (!(tos & ECN_MASK))
		return 0;
	if ((tos & ECN_MASK) == ECN_CE)
		return 1;
	neww = oldw | bpf_htons(ECN_CE);
	if (bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check),
				oldw, neww, 2))
		return -1;
	tos |= ECN_CE;
	return bpf_skb_store_bytes(skb, ETH_HLEN + 1, &tos, 1, 0) ? -1 : 1;
}

static __always_inline int mark_v6(struct __sk_buff *skb)
{
	__u8 b1; /* the traffic class's low nibble, then the flow label's */

	if (bpf_skb_load_bytes(skb, ETH_HLEN + 1, &b1, 1))
		return -1;
	if (!((b1 >> 4) & ECN_MASK))
		return 0;
	if (((b1 >> 4) & ECN_MASK) == ECN_CE)
		return 1;
	b1 |= ECN_CE << 4;
	return bpf_skb_store_bytes(skb, ETH_HLEN + 1, &b1, 1, 0) ? -1 : 1;
}

static __always_inline bool is_ect(struct __sk_buff *skb, __u16 proto)
{
	__u8 b[2];

	if (bpf_skb_load_bytes(skb, ETH_HLEN, b, 2))
		return false;
	if (proto == ETH_P_IP)
		return b[1] & ECN_MASK;
	return (b[1] >> 4) & ECN_MASK;
}

SEC("tc")
int ecnmark(struct __sk_buff *skb)
{
	__u16 proto = bpf_ntohs(skb->protocol);
	__u64 ahead;

	count(ECNMARK_PKTS, 1);
	count(ECNMARK_BYTES, skb->len);
	ahead = vq_enqueue(skb->len);
	if (proto != ETH_P_IP && proto != ETH_P_IPV6)
		return TC_ACT_OK;
	if (is_ect(skb, proto))
		count(ECNMARK_ECT, 1);
	if (!congested(ahead))
		return TC_ACT_OK;
	switch (proto == ETH_P_IP ? mark_v4(skb) : mark_v6(skb)) {
	case 1:
		count(ECNMARK_MARKED, 1);
		break;
	case 0:
		count(ECNMARK_NOT_ECT, 1);
		break;
	default:
		count(ECNMARK_ERRORS, 1);
	}
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
