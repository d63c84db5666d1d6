/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The InfiniBand connection manager on the wire (IBTA Vol 1 chapter 12,
 * management class 0x07, class version 2): the MADs rxdpd sends and
 * receives on QP1, decoded into host-order structs and encoded back. Pure
 * code (no daemon state), so that the unit tests and a fuzzer reach all of
 * it. Field offsets are those of IBTA Tables 106-120, counted from the end
 * of the 24-byte common MAD header.
 *
 * Also the RDMA IP CM service of Annex A11: the service ID made from a port
 * space and a port, and the 36-byte header an IP-addressed REQ or SIDR_REQ
 * carries at the head of its private data.
 */
#ifndef RXDP_DAEMON_CM_MAD_H
#define RXDP_DAEMON_CM_MAD_H

#include <linux/types.h>
#include <stddef.h>

#define CM_MAD_LEN 256
#define CM_MAD_HDR_LEN 24
#define MAD_BASE_VERSION 1
#define CM_MGMT_CLASS 0x07
#define CM_CLASS_VERSION 2
#define CM_METHOD_GET 0x01
#define CM_METHOD_SEND 0x03 /* ComMgtSend: every CM message */
#define CM_METHOD_GET_RESP 0x81

/* Attribute IDs (IBTA Table 104) */
enum cm_attr {
	CM_ATTR_CLASS_PORT_INFO = 0x0001,
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
	CM_ATTR_LAP = 0x0019,
	CM_ATTR_APR = 0x001a,
};

/* Private data each message carries (bytes) */
#define CM_REQ_PDATA 92
#define CM_MRA_PDATA 222
#define CM_REJ_PDATA 148
#define CM_REJ_ARI 72
#define CM_REP_PDATA 196
#define CM_RTU_PDATA 224
#define CM_DREQ_PDATA 220
#define CM_DREP_PDATA 224
#define CM_SIDR_REQ_PDATA 216
#define CM_SIDR_REP_PDATA 136
#define CM_SIDR_REP_INFO 72

/* Which message an MRA or a REJ is about (MessageMRAed, MessageRejected) */
enum cm_msg_ref {
	CM_MSG_REQ = 0,
	CM_MSG_REP = 1,
	CM_MSG_OTHER = 2,
};

/* REJ reasons (IBTA Table 109) the CM uses */
enum cm_rej_reason {
	CM_REJ_NO_QP = 1,
	CM_REJ_NO_RESOURCES = 3,
	CM_REJ_TIMEOUT = 4,
	CM_REJ_UNSUPPORTED = 5,
	CM_REJ_INVALID_COMM_ID = 6,
	CM_REJ_INVALID_SERVICE_ID = 8,
	CM_REJ_INVALID_TRANSPORT_TYPE = 9,
	CM_REJ_STALE_CONN = 10,
	CM_REJ_INVALID_GID = 12,
	CM_REJ_INVALID_MTU = 26,
	CM_REJ_CONSUMER_DEFINED = 28,
	CM_REJ_INVALID_CLASS_VERSION = 31,
	CM_REJ_VENDOR_OPTION_NOT_SUPPORTED = 35,
};

/* SIDR_REP status (IBTA Table 121) */
enum cm_sidr_status {
	CM_SIDR_SUCCESS = 0,
	CM_SIDR_UNSUPPORTED = 1, /* service ID not supported */
	CM_SIDR_REJECT = 2,
	CM_SIDR_NO_QP = 3,
	CM_SIDR_REDIRECT = 4,
	CM_SIDR_UNSUPPORTED_VERSION = 5,
};

/* Transport service types of a REQ */
enum cm_transport {
	CM_TRANSPORT_RC = 0,
	CM_TRANSPORT_UC = 1,
	CM_TRANSPORT_RD = 2,
};

/* A path as a REQ carries it (Table 106, primary and alternate) */
struct cm_path {
	__u16 local_lid;
	__u16 remote_lid;
	__u8 local_gid[16];
	__u8 remote_gid[16];
	__u32 flow_label; /* 20 bits */
	__u8 packet_rate; /* 6 bits */
	__u8 traffic_class;
	__u8 hop_limit;
	__u8 sl; /* 4 bits */
	__u8 subnet_local; /* 1 bit */
	__u8 local_ack_timeout; /* 5 bits */
};

struct cm_req {
	__u32 local_comm_id;
	__u32 vendor_id; /* 24 bits */
	__u64 service_id;
	__u64 local_ca_guid;
	__u32 local_qkey;
	__u32 local_qpn; /* 24 bits */
	__u8 responder_resources;
	__u32 local_eecn;
	__u8 initiator_depth;
	__u32 remote_eecn;
	__u8 remote_cm_response_timeout; /* 5 bits */
	__u8 transport; /* enum cm_transport, 2 bits */
	__u8 flow_control; /* 1 bit */
	__u32 starting_psn; /* 24 bits */
	__u8 local_cm_response_timeout; /* 5 bits */
	__u8 retry_count; /* 3 bits */
	__u16 pkey;
	__u8 path_mtu; /* enum ibv_mtu, 4 bits */
	__u8 rdc_exists;
	__u8 rnr_retry_count; /* 3 bits */
	__u8 max_cm_retries; /* 4 bits */
	__u8 srq;
	__u8 ext_transport; /* 3 bits */
	struct cm_path primary;
	struct cm_path alternate;
	__u8 private_data[CM_REQ_PDATA];
};

struct cm_mra {
	__u32 local_comm_id;
	__u32 remote_comm_id;
	__u8 msg_mraed; /* enum cm_msg_ref */
	__u8 service_timeout; /* 5 bits */
	__u8 private_data[CM_MRA_PDATA];
};

struct cm_rej {
	__u32 local_comm_id;
	__u32 remote_comm_id;
	__u8 msg_rejected; /* enum cm_msg_ref */
	__u8 ari_length; /* 7 bits */
	__u16 reason;
	__u8 ari[CM_REJ_ARI];
	__u8 private_data[CM_REJ_PDATA];
};

struct cm_rep {
	__u32 local_comm_id;
	__u32 remote_comm_id;
	__u32 local_qkey;
	__u32 local_qpn; /* 24 bits */
	__u32 vendor_id; /* 24 bits, in three bytes of the message */
	__u32 local_eecn;
	__u32 starting_psn; /* 24 bits */
	__u8 responder_resources;
	__u8 initiator_depth;
	__u8 target_ack_delay; /* 5 bits */
	__u8 failover_accepted; /* 2 bits */
	__u8 flow_control;
	__u8 rnr_retry_count; /* 3 bits */
	__u8 srq;
	__u64 local_ca_guid;
	__u8 private_data[CM_REP_PDATA];
};

/* RTU and DREP: comm IDs and private data */
struct cm_rtu {
	__u32 local_comm_id;
	__u32 remote_comm_id;
	__u8 private_data[CM_RTU_PDATA];
};

struct cm_dreq {
	__u32 local_comm_id;
	__u32 remote_comm_id;
	__u32 remote_qpn; /* 24 bits */
	__u8 private_data[CM_DREQ_PDATA];
};

struct cm_sidr_req {
	__u32 request_id;
	__u16 pkey;
	__u64 service_id;
	__u8 private_data[CM_SIDR_REQ_PDATA];
};

struct cm_sidr_rep {
	__u32 request_id;
	__u8 status; /* enum cm_sidr_status */
	__u8 info_length;
	__u32 vendor_id; /* 24 bits */
	__u32 qpn; /* 24 bits */
	__u64 service_id;
	__u32 qkey;
	__u8 info[CM_SIDR_REP_INFO];
	__u8 private_data[CM_SIDR_REP_PDATA];
};

/* One CM MAD: the common header's fields that vary, and the message */
struct cm_msg {
	__u8 method;
	__u16 status;
	__u64 tid;
	__u16 attr_id; /* enum cm_attr */
	__u32 attr_mod; /* ECE options travel here (REQ, REP) */
	union {
		struct cm_req req;
		struct cm_mra mra;
		struct cm_rej rej;
		struct cm_rep rep;
		struct cm_rtu rtu; /* also DREP */
		struct cm_dreq dreq;
		struct cm_sidr_req sidr_req;
		struct cm_sidr_rep sidr_rep;
	};
};

/*
 * Decode a CM MAD of len bytes (at least CM_MAD_LEN). 0, or -EBADMSG (too
 * short, not base version 1 / class 0x07), -EPROTONOSUPPORT (class
 * version not 2), -EOPNOTSUPP (an attribute or method the CM does not
 * take). Reads nothing past buf[CM_MAD_LEN).
 */
int cm_mad_decode(const void *buf, size_t len, struct cm_msg *m);
/* Encode m into buf (CM_MAD_LEN bytes); reserved fields are zero */
void cm_mad_encode(const struct cm_msg *m, void *buf);
const char *cm_attr_name(__u16 attr_id);

/* --- RDMA IP CM service (Annex A11) ---------------------------------- */

#define CM_IP_HDR_LEN 36
#define CM_IP_SID_PREFIX 0x0000000001000000ULL
#define CM_IP_SID_MASK 0xffffffffff000000ULL

/* The service ID of (port space, port) and back; -EINVAL if not an IP one */
__u64 cm_ip_service_id(__u16 ps, __u16 port);
int cm_ip_service_parse(__u64 sid, __u16 *ps, __u16 *port);

/*
 * The header at the head of an IP-addressed REQ's private data: version
 * 0.0, the IP version, the source port, source and destination addresses.
 * Addresses are kept as 16 bytes, an IPv4 one in the last four (the others
 * zero, as Linux sends them; an IPv4-mapped form is accepted too).
 */
struct cm_ip_hdr {
	__u8 ip_version; /* 4 or 6 */
	__u16 src_port;
	__u8 src_ip[16];
	__u8 dst_ip[16];
};

void cm_ip_hdr_encode(const struct cm_ip_hdr *h, __u8 *pd);
/* 0, or -EBADMSG for another version or an IP version not 4 or 6 */
int cm_ip_hdr_decode(const __u8 *pd, struct cm_ip_hdr *h);

/* 4.096 us * 2^t, in milliseconds (at least 1), t a 5-bit IBTA time */
unsigned long cm_time_ms(unsigned int t);

#endif /* RXDP_DAEMON_CM_MAD_H */
