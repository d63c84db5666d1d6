/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The transport's counters, per device and per QP, named as Soft-RoCE's
 * hw_counters (drivers/infiniband/sw/rxe/rxe_hw_counters.c) so that
 * monitoring written for rxe reads rxdp's the same way. The engine keeps
 * them (userspace/engine), rxdpd answers RXDP_CTL_QUERY_COUNTERS with them
 * in this order, rxdp-ctl prints them (and as JSON).
 *
 * What each counts here (rxe's meaning where the transports agree):
 *   sent_pkts              packets put on the wire (requests, responses, ACKs)
 *   rcvd_pkts              RoCEv2 packets delivered to a QP
 *   duplicate_request      responder: requests with a PSN already executed
 *   out_of_seq_request     responder: requests past the expected PSN (a gap)
 *   rcvd_rnr_err           requester: RNR NAKs received
 *   send_rnr_err           responder: RNR NAKs sent (no receive WQE)
 *   rcvd_seq_err           requester: PSN sequence error NAKs received
 *   ack_deferred           responder: ACK/NAKs replaced by a later one
 *                          before they went out (coalesced)
 *   retry_exceeded_err     requester: WQEs failed, transport retries exhausted
 *   retry_rnr_exceeded_err requester: WQEs failed, RNR retries exhausted
 *   completer_retry_err    requester: go-back-N restarts (timeout or NAK)
 *   send_err               packets that could not be built (the owner's
 *                          memory was gone)
 *   link_downed            the port went down (rxdpd counts, per device)
 *   rdma_sends             requester: messages completed
 *   rdma_recvs             responder: receive WQEs completed successfully
 *   sent_bytes, rcvd_bytes RoCEv2 payload bytes, as sent_pkts/rcvd_pkts
 *   payload_syscalls       device only (rxdp's own): system calls that
 *                          moved payload to or from a client's memory
 *                          (memory it did not share with rxdpd)
 *   payload_syscall_bytes  device only: the bytes they moved
 *   payload_direct_bytes   device only: payload bytes copied straight
 *                          into or out of memory shared with rxdpd
 *   out_of_buffer          device only (mlx5's name): frames for the device
 *                          that the kernel dropped before rxdpd saw them,
 *                          its AF_XDP sockets' RX rings full or fill rings
 *                          empty (XDP_STATISTICS): the data path overrun;
 *                          and packets one engine could not hand to
 *                          another, its inbox full
 *   rx_handoffs            device only: packets one of the device's
 *                          engines received (on one of its queues) for a
 *                          QP of another engine, and copied to it (a
 *                          multicast datagram: a copy for each other
 *                          engine with members of its group, received or
 *                          sent)
 *   rx_coalesced           device only: sleeps of a data-path thread on
 *                          its coalescing timer, a deep stream coming in
 *                          (userspace/engine/README.md)
 *   datapath_sleeps        device only: times a data-path thread slept
 *                          waiting for work (none with rxdpd --poll)
 *   retransmitted_pkts     device only: request packets sent again (a
 *                          go-back-N resend, a tail-loss probe)
 *   np_ecn_marked_roce_packets  (mlx5's names from here on) RC/UC packets
 *                          that arrived marked CE (congestion notification
 *                          point, userspace/engine/README.md "Congestion")
 *   np_cnp_sent            CNPs sent for them (one per QP per
 *                          np_min_time_between_cnps)
 *   rp_cnp_handled         CNPs from a QP's peer that DCQCN took (reaction
 *                          point)
 *   rp_cnp_ignored         CNPs not taken: from another source, for a UD
 *                          QP, or with congestion control off
 *   np_rx_congested_packets  (rxdp's own) ECN-capable RC/UC packets that
 *                          arrived unmarked while the engine's receive path
 *                          was at least half full, and counted as CE: the
 *                          receiver as a congestion point (np_cnp_sent
 *                          counts the CNPs for them too)
 *   held_requests          (rxdp's own) device only: RC request packets
 *                          that arrived past a gap and were held, to be
 *                          taken in order once it was filled (selective
 *                          retransmission, userspace/engine/README.md
 *                          "Loss recovery")
 *   sr_resent_pkts         device only: request packets resent alone for
 *                          a NAK that said its responder held what
 *                          followed (also in retransmitted_pkts)
 *   rx_handoff_runs        device only: times an engine ran another
 *                          engine's passes itself, having handed it a
 *                          packet looped back on the device (two of its
 *                          contexts on two engines talking), rather than
 *                          waking its thread
 */
#ifndef RXDP_COMMON_HW_COUNTERS_H
#define RXDP_COMMON_HW_COUNTERS_H

enum rxdp_hwc {
	RXDP_HWC_SENT_PKTS,
	RXDP_HWC_RCVD_PKTS,
	RXDP_HWC_DUP_REQ,
	RXDP_HWC_OUT_OF_SEQ_REQ,
	RXDP_HWC_RCVD_RNR,
	RXDP_HWC_SEND_RNR,
	RXDP_HWC_RCVD_SEQ_ERR,
	RXDP_HWC_ACK_DEFERRED,
	RXDP_HWC_RETRY_EXCEEDED,
	RXDP_HWC_RNR_RETRY_EXCEEDED,
	RXDP_HWC_COMP_RETRY,
	RXDP_HWC_SEND_ERR,
	RXDP_HWC_LINK_DOWNED,
	RXDP_HWC_RDMA_SENDS,
	RXDP_HWC_RDMA_RECVS,
	RXDP_HWC_SENT_BYTES,
	RXDP_HWC_RCVD_BYTES,
	RXDP_HWC_PAYLOAD_SYSCALLS,
	RXDP_HWC_PAYLOAD_SYSCALL_BYTES,
	RXDP_HWC_PAYLOAD_DIRECT_BYTES,
	RXDP_HWC_OUT_OF_BUFFER,
	RXDP_HWC_RX_HANDOFFS,
	RXDP_HWC_RX_COALESCED,
	RXDP_HWC_DATAPATH_SLEEPS,
	RXDP_HWC_RETRANSMITTED,
	RXDP_HWC_NP_ECN_MARKED,
	RXDP_HWC_NP_CNP_SENT,
	RXDP_HWC_RP_CNP_HANDLED,
	RXDP_HWC_RP_CNP_IGNORED,
	RXDP_HWC_NP_RX_CONGESTED,
	RXDP_HWC_HELD_REQUESTS,
	RXDP_HWC_SR_RESENT,
	RXDP_HWC_RX_HANDOFF_RUNS,
	RXDP_HWC_MAX,
};

static const char *const rxdp_hwc_names[RXDP_HWC_MAX] = {
	[RXDP_HWC_SENT_PKTS] = "sent_pkts",
	[RXDP_HWC_RCVD_PKTS] = "rcvd_pkts",
	[RXDP_HWC_DUP_REQ] = "duplicate_request",
	[RXDP_HWC_OUT_OF_SEQ_REQ] = "out_of_seq_request",
	[RXDP_HWC_RCVD_RNR] = "rcvd_rnr_err",
	[RXDP_HWC_SEND_RNR] = "send_rnr_err",
	[RXDP_HWC_RCVD_SEQ_ERR] = "rcvd_seq_err",
	[RXDP_HWC_ACK_DEFERRED] = "ack_deferred",
	[RXDP_HWC_RETRY_EXCEEDED] = "retry_exceeded_err",
	[RXDP_HWC_RNR_RETRY_EXCEEDED] = "retry_rnr_exceeded_err",
	[RXDP_HWC_COMP_RETRY] = "completer_retry_err",
	[RXDP_HWC_SEND_ERR] = "send_err",
	[RXDP_HWC_LINK_DOWNED] = "link_downed",
	[RXDP_HWC_RDMA_SENDS] = "rdma_sends",
	[RXDP_HWC_RDMA_RECVS] = "rdma_recvs",
	[RXDP_HWC_SENT_BYTES] = "sent_bytes",
	[RXDP_HWC_RCVD_BYTES] = "rcvd_bytes",
	[RXDP_HWC_PAYLOAD_SYSCALLS] = "payload_syscalls",
	[RXDP_HWC_PAYLOAD_SYSCALL_BYTES] = "payload_syscall_bytes",
	[RXDP_HWC_PAYLOAD_DIRECT_BYTES] = "payload_direct_bytes",
	[RXDP_HWC_OUT_OF_BUFFER] = "out_of_buffer",
	[RXDP_HWC_RX_HANDOFFS] = "rx_handoffs",
	[RXDP_HWC_RX_COALESCED] = "rx_coalesced",
	[RXDP_HWC_DATAPATH_SLEEPS] = "datapath_sleeps",
	[RXDP_HWC_RETRANSMITTED] = "retransmitted_pkts",
	[RXDP_HWC_NP_ECN_MARKED] = "np_ecn_marked_roce_packets",
	[RXDP_HWC_NP_CNP_SENT] = "np_cnp_sent",
	[RXDP_HWC_RP_CNP_HANDLED] = "rp_cnp_handled",
	[RXDP_HWC_RP_CNP_IGNORED] = "rp_cnp_ignored",
	[RXDP_HWC_NP_RX_CONGESTED] = "np_rx_congested_packets",
	[RXDP_HWC_HELD_REQUESTS] = "held_requests",
	[RXDP_HWC_SR_RESENT] = "sr_resent_pkts",
	[RXDP_HWC_RX_HANDOFF_RUNS] = "rx_handoff_runs",
};

#endif /* RXDP_COMMON_HW_COUNTERS_H */
