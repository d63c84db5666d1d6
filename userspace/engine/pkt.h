/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * RoCEv2 packets: building and parsing Ethernet (+VLAN) / IPv4 or IPv6 /
 * UDP 4791 / BTH / extended headers / payload / pad / ICRC, and the ICRC.
 */
#ifndef RXDP_ENGINE_PKT_H
#define RXDP_ENGINE_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <string.h>

#include "common/ctl_client.h"
#include "rxdp/roce.h"
#include "rxdp/opcodes.h"

#define PKT_ETH_LEN 14
#define PKT_VLAN_LEN 4
#define PKT_IP4_LEN 20
#define PKT_IP6_LEN 40
#define PKT_UDP_LEN 8
/*
 * Largest header stack: Eth+VLAN, IPv6, UDP, BTH, RETH+ImmDt or AtomicETH
 * (FETH+RETH is less)
 */
#define PKT_MAX_HDRS \
	(PKT_ETH_LEN + PKT_VLAN_LEN + PKT_IP6_LEN + PKT_UDP_LEN + 12 + 28 + 8)

/*
 * A frame to its own source MAC: from a QP of the device to another of the
 * same device (or itself), which the port loops back instead of sending
 */
static inline bool pkt_looped(const void *frame, uint32_t len)
{
	return len >= 12 && !memcmp(frame, (const uint8_t *)frame + 6, 6);
}

/* The per-path headers below the BTH, precomputed once per QP (RTR). */
struct pkt_path {
	uint8_t l2[PKT_ETH_LEN + PKT_VLAN_LEN];
	uint8_t l2_len;
	uint8_t ipv6;
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;
	uint8_t sip[16];
	uint8_t dip[16];
	uint16_t sport;
};

void pkt_path_init(struct pkt_path *pp, const struct rxdp_path *path);

/* The IP header's ECN field (RFC 3168), the traffic class's low 2 bits */
#define PKT_ECN_MASK 0x03
#define PKT_ECN_ECT0 0x02
#define PKT_ECN_CE 0x03
/*
 * ECT(0) in the path's traffic class, its DSCP kept: as a RoCE NIC with ECN
 * on sends. The ICRC masks the traffic class, so it is unaffected.
 */
void pkt_path_ect(struct pkt_path *pp);

/* One gather element of payload: an address in some owner's memory */
struct pkt_sg {
	uint64_t addr;
	uint32_t len;
	uint32_t span; /* bytes of its buffer from addr on (>= len) */
};

/*
 * Reads the owner's memory (span: how far its buffer goes on, for a reader
 * that reads ahead) and, where crc is not NULL, carries *crc (the ICRC so
 * far) over the bytes read (rxdp_crc32_copy()): 0, -EAGAIN (not yet: the
 * packet is built again later) or -EFAULT. NULL: pkt_sg addresses are this
 * process's.
 */
struct pkt_mem {
	int (*read)(void *arg, void *dst, uint64_t addr, size_t len,
		    uint64_t span, uint32_t *crc);
	void *arg;
};

/* What goes above UDP. Fields for headers the opcode lacks are ignored. */
struct pkt_desc {
	uint8_t opcode;
	uint8_t se;
	uint8_t ackreq;
	uint8_t becn;
	uint8_t held; /* a sequence NAK's ROCE_BTH_RXDP_HELD */
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	/* FETH: placement type, selectivity level */
	uint8_t flush_type;
	uint8_t flush_level;
	/* RETH / AtomicETH */
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
	uint64_t swap_add;
	uint64_t compare;
	/* AETH */
	uint8_t syndrome;
	uint32_t msn;
	/* AtomicAckETH */
	uint64_t orig;
	/* ImmDt (network order, opaque) / IETH */
	uint32_t imm;
	uint32_t ieth_rkey;
	/* DETH */
	uint32_t qkey;
	uint32_t sqp;
	/* payload */
	const struct pkt_sg *sg;
	int nsg;
	uint32_t paylen;
	const struct pkt_mem *mem; /* where sg points; NULL: here */
};

/* Bytes a packet of this opcode and payload takes on the wire */
uint32_t pkt_len(const struct pkt_path *pp, uint8_t opcode, uint32_t paylen);
/* Largest payload per packet that fits in frames of frame_len bytes */
uint32_t pkt_max_payload(const struct pkt_path *pp, uint32_t frame_len);

/*
 * Build the whole frame into buf (cap bytes), ICRC included. Length, or
 * -ENOSPC if it does not fit, -EINVAL for an unknown opcode, -EFAULT if
 * the payload could not be read, -EAGAIN if not yet.
 */
int pkt_build(void *buf, uint32_t cap, const struct pkt_path *pp,
	      const struct pkt_desc *d);

/* A parsed packet: pointers into the frame */
struct pkt_info {
	uint8_t *l3;
	uint8_t ipv6;
	uint8_t opcode;
	uint32_t flags; /* roce_opcode_flags(opcode) */
	struct roce_bth *bth;
	struct roce_feth *feth;
	struct roce_reth *reth;
	struct roce_aeth *aeth;
	struct roce_atomiceth *atomiceth;
	struct roce_atomicacketh *atomicacketh;
	struct roce_immdt *immdt;
	struct roce_ieth *ieth;
	struct roce_deth *deth;
	uint8_t *payload;
	uint32_t paylen;
	uint8_t smac[6];
	uint8_t sip[16]; /* IPv4: the last 4 bytes, ::ffff: mapped */
	uint8_t dip[16]; /* the same */
	uint16_t sport;
	uint16_t vlan;
	uint8_t ecn; /* the IP header's ECN field: PKT_ECN_CE marked */
	bool loop; /* to its own source MAC: looped back on the device */
};

/*
 * Parse and check a received frame. 0; -EPROTONOSUPPORT if it is not
 * RoCEv2 at all; -EBADMSG if the headers are inconsistent; -EILSEQ on an
 * ICRC mismatch.
 */
int pkt_parse(void *frame, uint32_t len, struct pkt_info *pi);

/*
 * pi's pointers into a copy of its packet: from points where to does, in a
 * copy that starts at or before pi->l3 and ends at or after the payload's
 */
void pkt_info_rebase(struct pkt_info *pi, const uint8_t *from, uint8_t *to);

/*
 * ICRC (RoCEv2 A17.3.3) of the packet whose IP header starts at l3 and whose
 * ICRC starts at l3 + len (the invariant fields masked to 1s as the annex
 * says). The value to store in the 4 ICRC bytes, as a host-order integer to
 * be written little-endian: the CRC-32 of Ethernet, reflected, as zlib's
 * crc32().
 */
uint32_t pkt_icrc(const uint8_t *l3, uint32_t len, int ipv6);

#endif /* RXDP_ENGINE_PKT_H */
