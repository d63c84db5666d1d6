// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * CM MADs: decoding and encoding (cm_mad.h). Every field is named by where
 * IBTA's message tables put it: a byte offset into the message after the
 * common MAD header, a bit offset from that byte's most significant bit,
 * and a width; fields run big-endian across bytes.
 */
#include <errno.h>
#include <string.h>

#include "daemon/cm_mad.h"

/* byte, bit (from the MSB), width */
#define FLD(byte, bit, width) (byte), (bit), (width)

static __u64 get(const __u8 *d, unsigned int byte, unsigned int bit,
		 unsigned int width)
{
	unsigned int at = byte * 8 + bit;
	__u64 v = 0;

	for (unsigned int i = 0; i < width; i++, at++)
		v = v << 1 | ((d[at / 8] >> (7 - at % 8)) & 1);
	return v;
}

static void set(__u8 *d, unsigned int byte, unsigned int bit,
		unsigned int width, __u64 v)
{
	unsigned int at = byte * 8 + bit + width - 1;

	for (unsigned int i = 0; i < width; i++, at--, v >>= 1) {
		__u8 m = (__u8)(1U << (7 - at % 8));

		d[at / 8] = (v & 1) ? d[at / 8] | m : d[at / 8] & (__u8)~m;
	}
}

/* --- Table 106: REQ --------------------------------------------------- */
#define REQ_LOCAL_COMM_ID FLD(0, 0, 32)
#define REQ_VENDOR_ID FLD(5, 0, 24)
#define REQ_SERVICE_ID FLD(8, 0, 64)
#define REQ_LOCAL_CA_GUID FLD(16, 0, 64)
#define REQ_LOCAL_QKEY FLD(28, 0, 32)
#define REQ_LOCAL_QPN FLD(32, 0, 24)
#define REQ_RESPONDER_RESOURCES FLD(35, 0, 8)
#define REQ_LOCAL_EECN FLD(36, 0, 24)
#define REQ_INITIATOR_DEPTH FLD(39, 0, 8)
#define REQ_REMOTE_EECN FLD(40, 0, 24)
#define REQ_REMOTE_CM_RESP_TIMEOUT FLD(43, 0, 5)
#define REQ_TRANSPORT FLD(43, 5, 2)
#define REQ_FLOW_CONTROL FLD(43, 7, 1)
#define REQ_STARTING_PSN FLD(44, 0, 24)
#define REQ_LOCAL_CM_RESP_TIMEOUT FLD(47, 0, 5)
#define REQ_RETRY_COUNT FLD(47, 5, 3)
#define REQ_PKEY FLD(48, 0, 16)
#define REQ_PATH_MTU FLD(50, 0, 4)
#define REQ_RDC_EXISTS FLD(50, 4, 1)
#define REQ_RNR_RETRY_COUNT FLD(50, 5, 3)
#define REQ_MAX_CM_RETRIES FLD(51, 0, 4)
#define REQ_SRQ FLD(51, 4, 1)
#define REQ_EXT_TRANSPORT FLD(51, 5, 3)
#define REQ_PRIMARY 52
#define REQ_ALTERNATE 96
#define REQ_PRIVATE_DATA 140
/* a path, from its first byte */
#define PATH_LOCAL_LID(b) FLD((b), 0, 16)
#define PATH_REMOTE_LID(b) FLD((b) + 2, 0, 16)
#define PATH_LOCAL_GID 4
#define PATH_REMOTE_GID 20
#define PATH_FLOW_LABEL(b) FLD((b) + 36, 0, 20)
#define PATH_PACKET_RATE(b) FLD((b) + 39, 2, 6)
#define PATH_TRAFFIC_CLASS(b) FLD((b) + 40, 0, 8)
#define PATH_HOP_LIMIT(b) FLD((b) + 41, 0, 8)
#define PATH_SL(b) FLD((b) + 42, 0, 4)
#define PATH_SUBNET_LOCAL(b) FLD((b) + 42, 4, 1)
#define PATH_LOCAL_ACK_TIMEOUT(b) FLD((b) + 43, 0, 5)

/* --- Table 107: MRA; 108: REJ ----------------------------------------- */
#define MSG_LOCAL_COMM_ID FLD(0, 0, 32)
#define MSG_REMOTE_COMM_ID FLD(4, 0, 32)
#define MRA_MSG_MRAED FLD(8, 0, 2)
#define MRA_SERVICE_TIMEOUT FLD(9, 0, 5)
#define MRA_PRIVATE_DATA 10
#define REJ_MSG_REJECTED FLD(8, 0, 2)
#define REJ_ARI_LENGTH FLD(9, 0, 7)
#define REJ_REASON FLD(10, 0, 16)
#define REJ_ARI 12
#define REJ_PRIVATE_DATA 84

/* --- Table 110: REP; 111: RTU; 112: DREQ; 113: DREP ------------------- */
#define REP_LOCAL_QKEY FLD(8, 0, 32)
#define REP_LOCAL_QPN FLD(12, 0, 24)
#define REP_VENDOR_ID_H FLD(15, 0, 8)
#define REP_LOCAL_EECN FLD(16, 0, 24)
#define REP_VENDOR_ID_M FLD(19, 0, 8)
#define REP_STARTING_PSN FLD(20, 0, 24)
#define REP_VENDOR_ID_L FLD(23, 0, 8)
#define REP_RESPONDER_RESOURCES FLD(24, 0, 8)
#define REP_INITIATOR_DEPTH FLD(25, 0, 8)
#define REP_TARGET_ACK_DELAY FLD(26, 0, 5)
#define REP_FAILOVER_ACCEPTED FLD(26, 5, 2)
#define REP_FLOW_CONTROL FLD(26, 7, 1)
#define REP_RNR_RETRY_COUNT FLD(27, 0, 3)
#define REP_SRQ FLD(27, 3, 1)
#define REP_LOCAL_CA_GUID FLD(28, 0, 64)
#define REP_PRIVATE_DATA 36
#define RTU_PRIVATE_DATA 8
#define DREQ_REMOTE_QPN FLD(8, 0, 24)
#define DREQ_PRIVATE_DATA 12

/* --- Table 119: SIDR_REQ; 120: SIDR_REP ------------------------------- */
#define SIDR_REQ_REQUEST_ID FLD(0, 0, 32)
#define SIDR_REQ_PKEY FLD(4, 0, 16)
#define SIDR_REQ_SERVICE_ID FLD(8, 0, 64)
#define SIDR_REQ_PRIVATE_DATA 16
#define SIDR_REP_REQUEST_ID FLD(0, 0, 32)
#define SIDR_REP_STATUS FLD(4, 0, 8)
#define SIDR_REP_INFO_LENGTH FLD(5, 0, 8)
#define SIDR_REP_VENDOR_ID_H FLD(6, 0, 16)
#define SIDR_REP_QPN FLD(8, 0, 24)
#define SIDR_REP_VENDOR_ID_L FLD(11, 0, 8)
#define SIDR_REP_SERVICE_ID FLD(12, 0, 64)
#define SIDR_REP_QKEY FLD(20, 0, 32)
#define SIDR_REP_INFO 24
#define SIDR_REP_PRIVATE_DATA 96

static void path_decode(const __u8 *d, unsigned int b, struct cm_path *p)
{
	p->local_lid = (__u16)get(d, PATH_LOCAL_LID(b));
	p->remote_lid = (__u16)get(d, PATH_REMOTE_LID(b));
	memcpy(p->local_gid, d + b + PATH_LOCAL_GID, 16);
	memcpy(p->remote_gid, d + b + PATH_REMOTE_GID, 16);
	p->flow_label = (__u32)get(d, PATH_FLOW_LABEL(b));
	p->packet_rate = (__u8)get(d, PATH_PACKET_RATE(b));
	p->traffic_class = (__u8)get(d, PATH_TRAFFIC_CLASS(b));
	p->hop_limit = (__u8)get(d, PATH_HOP_LIMIT(b));
	p->sl = (__u8)get(d, PATH_SL(b));
	p->subnet_local = (__u8)get(d, PATH_SUBNET_LOCAL(b));
	p->local_ack_timeout = (__u8)get(d, PATH_LOCAL_ACK_TIMEOUT(b));
}

static void path_encode(__u8 *d, unsigned int b, const struct cm_path *p)
{
	set(d, PATH_LOCAL_LID(b), p->local_lid);
	set(d, PATH_REMOTE_LID(b), p->remote_lid);
	memcpy(d + b + PATH_LOCAL_GID, p->local_gid, 16);
	memcpy(d + b + PATH_REMOTE_GID, p->remote_gid, 16);
	set(d, PATH_FLOW_LABEL(b), p->flow_label);
	set(d, PATH_PACKET_RATE(b), p->packet_rate);
	set(d, PATH_TRAFFIC_CLASS(b), p->traffic_class);
	set(d, PATH_HOP_LIMIT(b), p->hop_limit);
	set(d, PATH_SL(b), p->sl);
	set(d, PATH_SUBNET_LOCAL(b), p->subnet_local);
	set(d, PATH_LOCAL_ACK_TIMEOUT(b), p->local_ack_timeout);
}

static void req_decode(const __u8 *d, struct cm_req *r)
{
	r->local_comm_id = (__u32)get(d, REQ_LOCAL_COMM_ID);
	r->vendor_id = (__u32)get(d, REQ_VENDOR_ID);
	r->service_id = get(d, REQ_SERVICE_ID);
	r->local_ca_guid = get(d, REQ_LOCAL_CA_GUID);
	r->local_qkey = (__u32)get(d, REQ_LOCAL_QKEY);
	r->local_qpn = (__u32)get(d, REQ_LOCAL_QPN);
	r->responder_resources = (__u8)get(d, REQ_RESPONDER_RESOURCES);
	r->local_eecn = (__u32)get(d, REQ_LOCAL_EECN);
	r->initiator_depth = (__u8)get(d, REQ_INITIATOR_DEPTH);
	r->remote_eecn = (__u32)get(d, REQ_REMOTE_EECN);
	r->remote_cm_response_timeout =
		(__u8)get(d, REQ_REMOTE_CM_RESP_TIMEOUT);
	r->transport = (__u8)get(d, REQ_TRANSPORT);
	r->flow_control = (__u8)get(d, REQ_FLOW_CONTROL);
	r->starting_psn = (__u32)get(d, REQ_STARTING_PSN);
	r->local_cm_response_timeout = (__u8)get(d, REQ_LOCAL_CM_RESP_TIMEOUT);
	r->retry_count = (__u8)get(d, REQ_RETRY_COUNT);
	r->pkey = (__u16)get(d, REQ_PKEY);
	r->path_mtu = (__u8)get(d, REQ_PATH_MTU);
	r->rdc_exists = (__u8)get(d, REQ_RDC_EXISTS);
	r->rnr_retry_count = (__u8)get(d, REQ_RNR_RETRY_COUNT);
	r->max_cm_retries = (__u8)get(d, REQ_MAX_CM_RETRIES);
	r->srq = (__u8)get(d, REQ_SRQ);
	r->ext_transport = (__u8)get(d, REQ_EXT_TRANSPORT);
	path_decode(d, REQ_PRIMARY, &r->primary);
	path_decode(d, REQ_ALTERNATE, &r->alternate);
	memcpy(r->private_data, d + REQ_PRIVATE_DATA, CM_REQ_PDATA);
}

static void req_encode(__u8 *d, const struct cm_req *r)
{
	set(d, REQ_LOCAL_COMM_ID, r->local_comm_id);
	set(d, REQ_VENDOR_ID, r->vendor_id);
	set(d, REQ_SERVICE_ID, r->service_id);
	set(d, REQ_LOCAL_CA_GUID, r->local_ca_guid);
	set(d, REQ_LOCAL_QKEY, r->local_qkey);
	set(d, REQ_LOCAL_QPN, r->local_qpn);
	set(d, REQ_RESPONDER_RESOURCES, r->responder_resources);
	set(d, REQ_LOCAL_EECN, r->local_eecn);
	set(d, REQ_INITIATOR_DEPTH, r->initiator_depth);
	set(d, REQ_REMOTE_EECN, r->remote_eecn);
	set(d, REQ_REMOTE_CM_RESP_TIMEOUT, r->remote_cm_response_timeout);
	set(d, REQ_TRANSPORT, r->transport);
	set(d, REQ_FLOW_CONTROL, r->flow_control);
	set(d, REQ_STARTING_PSN, r->starting_psn);
	set(d, REQ_LOCAL_CM_RESP_TIMEOUT, r->local_cm_response_timeout);
	set(d, REQ_RETRY_COUNT, r->retry_count);
	set(d, REQ_PKEY, r->pkey);
	set(d, REQ_PATH_MTU, r->path_mtu);
	set(d, REQ_RDC_EXISTS, r->rdc_exists);
	set(d, REQ_RNR_RETRY_COUNT, r->rnr_retry_count);
	set(d, REQ_MAX_CM_RETRIES, r->max_cm_retries);
	set(d, REQ_SRQ, r->srq);
	set(d, REQ_EXT_TRANSPORT, r->ext_transport);
	path_encode(d, REQ_PRIMARY, &r->primary);
	path_encode(d, REQ_ALTERNATE, &r->alternate);
	memcpy(d + REQ_PRIVATE_DATA, r->private_data, CM_REQ_PDATA);
}

static void rep_decode(const __u8 *d, struct cm_rep *r)
{
	r->local_comm_id = (__u32)get(d, MSG_LOCAL_COMM_ID);
	r->remote_comm_id = (__u32)get(d, MSG_REMOTE_COMM_ID);
	r->local_qkey = (__u32)get(d, REP_LOCAL_QKEY);
	r->local_qpn = (__u32)get(d, REP_LOCAL_QPN);
	r->vendor_id =
		(__u32)(get(d, REP_VENDOR_ID_H) << 16 |
			get(d, REP_VENDOR_ID_M) << 8 | get(d, REP_VENDOR_ID_L));
	r->local_eecn = (__u32)get(d, REP_LOCAL_EECN);
	r->starting_psn = (__u32)get(d, REP_STARTING_PSN);
	r->responder_resources = (__u8)get(d, REP_RESPONDER_RESOURCES);
	r->initiator_depth = (__u8)get(d, REP_INITIATOR_DEPTH);
	r->target_ack_delay = (__u8)get(d, REP_TARGET_ACK_DELAY);
	r->failover_accepted = (__u8)get(d, REP_FAILOVER_ACCEPTED);
	r->flow_control = (__u8)get(d, REP_FLOW_CONTROL);
	r->rnr_retry_count = (__u8)get(d, REP_RNR_RETRY_COUNT);
	r->srq = (__u8)get(d, REP_SRQ);
	r->local_ca_guid = get(d, REP_LOCAL_CA_GUID);
	memcpy(r->private_data, d + REP_PRIVATE_DATA, CM_REP_PDATA);
}

static void rep_encode(__u8 *d, const struct cm_rep *r)
{
	set(d, MSG_LOCAL_COMM_ID, r->local_comm_id);
	set(d, MSG_REMOTE_COMM_ID, r->remote_comm_id);
	set(d, REP_LOCAL_QKEY, r->local_qkey);
	set(d, REP_LOCAL_QPN, r->local_qpn);
	set(d, REP_VENDOR_ID_H, r->vendor_id >> 16 & 0xff);
	set(d, REP_VENDOR_ID_M, r->vendor_id >> 8 & 0xff);
	set(d, REP_VENDOR_ID_L, r->vendor_id & 0xff);
	set(d, REP_LOCAL_EECN, r->local_eecn);
	set(d, REP_STARTING_PSN, r->starting_psn);
	set(d, REP_RESPONDER_RESOURCES, r->responder_resources);
	set(d, REP_INITIATOR_DEPTH, r->initiator_depth);
	set(d, REP_TARGET_ACK_DELAY, r->target_ack_delay);
	set(d, REP_FAILOVER_ACCEPTED, r->failover_accepted);
	set(d, REP_FLOW_CONTROL, r->flow_control);
	set(d, REP_RNR_RETRY_COUNT, r->rnr_retry_count);
	set(d, REP_SRQ, r->srq);
	set(d, REP_LOCAL_CA_GUID, r->local_ca_guid);
	memcpy(d + REP_PRIVATE_DATA, r->private_data, CM_REP_PDATA);
}

static void sidr_rep_decode(const __u8 *d, struct cm_sidr_rep *r)
{
	r->request_id = (__u32)get(d, SIDR_REP_REQUEST_ID);
	r->status = (__u8)get(d, SIDR_REP_STATUS);
	r->info_length = (__u8)get(d, SIDR_REP_INFO_LENGTH);
	r->vendor_id = (__u32)(get(d, SIDR_REP_VENDOR_ID_H) << 8 |
			       get(d, SIDR_REP_VENDOR_ID_L));
	r->qpn = (__u32)get(d, SIDR_REP_QPN);
	r->service_id = get(d, SIDR_REP_SERVICE_ID);
	r->qkey = (__u32)get(d, SIDR_REP_QKEY);
	memcpy(r->info, d + SIDR_REP_INFO, CM_SIDR_REP_INFO);
	memcpy(r->private_data, d + SIDR_REP_PRIVATE_DATA, CM_SIDR_REP_PDATA);
}

static void sidr_rep_encode(__u8 *d, const struct cm_sidr_rep *r)
{
	set(d, SIDR_REP_REQUEST_ID, r->request_id);
	set(d, SIDR_REP_STATUS, r->status);
	set(d, SIDR_REP_INFO_LENGTH, r->info_length);
	set(d, SIDR_REP_VENDOR_ID_H, r->vendor_id >> 8 & 0xffff);
	set(d, SIDR_REP_QPN, r->qpn);
	set(d, SIDR_REP_VENDOR_ID_L, r->vendor_id & 0xff);
	set(d, SIDR_REP_SERVICE_ID, r->service_id);
	set(d, SIDR_REP_QKEY, r->qkey);
	memcpy(d + SIDR_REP_INFO, r->info, CM_SIDR_REP_INFO);
	memcpy(d + SIDR_REP_PRIVATE_DATA, r->private_data, CM_SIDR_REP_PDATA);
}

int cm_mad_decode(const void *buf, size_t len, struct cm_msg *m)
{
	const __u8 *h = buf, *d = h + CM_MAD_HDR_LEN;

	memset(m, 0, sizeof(*m));
	if (len < CM_MAD_LEN || h[0] != MAD_BASE_VERSION ||
	    h[1] != CM_MGMT_CLASS)
		return -EBADMSG;
	if (h[2] != CM_CLASS_VERSION)
		return -EPROTONOSUPPORT;
	m->method = h[3];
	m->status = (__u16)get(h, 4, 0, 16);
	m->tid = get(h, 8, 0, 64);
	m->attr_id = (__u16)get(h, 16, 0, 16);
	m->attr_mod = (__u32)get(h, 20, 0, 32);
	if (m->method != CM_METHOD_SEND)
		return -EOPNOTSUPP;
	switch (m->attr_id) {
	case CM_ATTR_REQ:
		req_decode(d, &m->req);
		return 0;
	case CM_ATTR_MRA:
		m->mra.local_comm_id = (__u32)get(d, MSG_LOCAL_COMM_ID);
		m->mra.remote_comm_id = (__u32)get(d, MSG_REMOTE_COMM_ID);
		m->mra.msg_mraed = (__u8)get(d, MRA_MSG_MRAED);
		m->mra.service_timeout = (__u8)get(d, MRA_SERVICE_TIMEOUT);
		memcpy(m->mra.private_data, d + MRA_PRIVATE_DATA, CM_MRA_PDATA);
		return 0;
	case CM_ATTR_REJ:
		m->rej.local_comm_id = (__u32)get(d, MSG_LOCAL_COMM_ID);
		m->rej.remote_comm_id = (__u32)get(d, MSG_REMOTE_COMM_ID);
		m->rej.msg_rejected = (__u8)get(d, REJ_MSG_REJECTED);
		m->rej.ari_length = (__u8)get(d, REJ_ARI_LENGTH);
		m->rej.reason = (__u16)get(d, REJ_REASON);
		memcpy(m->rej.ari, d + REJ_ARI, CM_REJ_ARI);
		memcpy(m->rej.private_data, d + REJ_PRIVATE_DATA, CM_REJ_PDATA);
		return 0;
	case CM_ATTR_REP:
		rep_decode(d, &m->rep);
		return 0;
	case CM_ATTR_RTU:
	case CM_ATTR_DREP:
		m->rtu.local_comm_id = (__u32)get(d, MSG_LOCAL_COMM_ID);
		m->rtu.remote_comm_id = (__u32)get(d, MSG_REMOTE_COMM_ID);
		memcpy(m->rtu.private_data, d + RTU_PRIVATE_DATA, CM_RTU_PDATA);
		return 0;
	case CM_ATTR_DREQ:
		m->dreq.local_comm_id = (__u32)get(d, MSG_LOCAL_COMM_ID);
		m->dreq.remote_comm_id = (__u32)get(d, MSG_REMOTE_COMM_ID);
		m->dreq.remote_qpn = (__u32)get(d, DREQ_REMOTE_QPN);
		memcpy(m->dreq.private_data, d + DREQ_PRIVATE_DATA,
		       CM_DREQ_PDATA);
		return 0;
	case CM_ATTR_SIDR_REQ:
		m->sidr_req.request_id = (__u32)get(d, SIDR_REQ_REQUEST_ID);
		m->sidr_req.pkey = (__u16)get(d, SIDR_REQ_PKEY);
		m->sidr_req.service_id = get(d, SIDR_REQ_SERVICE_ID);
		memcpy(m->sidr_req.private_data, d + SIDR_REQ_PRIVATE_DATA,
		       CM_SIDR_REQ_PDATA);
		return 0;
	case CM_ATTR_SIDR_REP:
		sidr_rep_decode(d, &m->sidr_rep);
		return 0;
	}
	return -EOPNOTSUPP;
}

void cm_mad_encode(const struct cm_msg *m, void *buf)
{
	__u8 *h = buf, *d = h + CM_MAD_HDR_LEN;

	memset(buf, 0, CM_MAD_LEN);
	h[0] = MAD_BASE_VERSION;
	h[1] = CM_MGMT_CLASS;
	h[2] = CM_CLASS_VERSION;
	h[3] = m->method ? m->method : CM_METHOD_SEND;
	set(h, 4, 0, 16, m->status);
	set(h, 8, 0, 64, m->tid);
	set(h, 16, 0, 16, m->attr_id);
	set(h, 20, 0, 32, m->attr_mod);
	switch (m->attr_id) {
	case CM_ATTR_REQ:
		req_encode(d, &m->req);
		break;
	case CM_ATTR_MRA:
		set(d, MSG_LOCAL_COMM_ID, m->mra.local_comm_id);
		set(d, MSG_REMOTE_COMM_ID, m->mra.remote_comm_id);
		set(d, MRA_MSG_MRAED, m->mra.msg_mraed);
		set(d, MRA_SERVICE_TIMEOUT, m->mra.service_timeout);
		memcpy(d + MRA_PRIVATE_DATA, m->mra.private_data, CM_MRA_PDATA);
		break;
	case CM_ATTR_REJ:
		set(d, MSG_LOCAL_COMM_ID, m->rej.local_comm_id);
		set(d, MSG_REMOTE_COMM_ID, m->rej.remote_comm_id);
		set(d, REJ_MSG_REJECTED, m->rej.msg_rejected);
		set(d, REJ_ARI_LENGTH, m->rej.ari_length);
		set(d, REJ_REASON, m->rej.reason);
		memcpy(d + REJ_ARI, m->rej.ari, CM_REJ_ARI);
		memcpy(d + REJ_PRIVATE_DATA, m->rej.private_data, CM_REJ_PDATA);
		break;
	case CM_ATTR_REP:
		rep_encode(d, &m->rep);
		break;
	case CM_ATTR_RTU:
	case CM_ATTR_DREP:
		set(d, MSG_LOCAL_COMM_ID, m->rtu.local_comm_id);
		set(d, MSG_REMOTE_COMM_ID, m->rtu.remote_comm_id);
		memcpy(d + RTU_PRIVATE_DATA, m->rtu.private_data, CM_RTU_PDATA);
		break;
	case CM_ATTR_DREQ:
		set(d, MSG_LOCAL_COMM_ID, m->dreq.local_comm_id);
		set(d, MSG_REMOTE_COMM_ID, m->dreq.remote_comm_id);
		set(d, DREQ_REMOTE_QPN, m->dreq.remote_qpn);
		memcpy(d + DREQ_PRIVATE_DATA, m->dreq.private_data,
		       CM_DREQ_PDATA);
		break;
	case CM_ATTR_SIDR_REQ:
		set(d, SIDR_REQ_REQUEST_ID, m->sidr_req.request_id);
		set(d, SIDR_REQ_PKEY, m->sidr_req.pkey);
		set(d, SIDR_REQ_SERVICE_ID, m->sidr_req.service_id);
		memcpy(d + SIDR_REQ_PRIVATE_DATA, m->sidr_req.private_data,
		       CM_SIDR_REQ_PDATA);
		break;
	case CM_ATTR_SIDR_REP:
		sidr_rep_encode(d, &m->sidr_rep);
		break;
	}
}

const char *cm_attr_name(__u16 attr_id)
{
	static const char *const names[] = {
		[CM_ATTR_REQ - CM_ATTR_REQ] = "REQ",
		[CM_ATTR_MRA - CM_ATTR_REQ] = "MRA",
		[CM_ATTR_REJ - CM_ATTR_REQ] = "REJ",
		[CM_ATTR_REP - CM_ATTR_REQ] = "REP",
		[CM_ATTR_RTU - CM_ATTR_REQ] = "RTU",
		[CM_ATTR_DREQ - CM_ATTR_REQ] = "DREQ",
		[CM_ATTR_DREP - CM_ATTR_REQ] = "DREP",
		[CM_ATTR_SIDR_REQ - CM_ATTR_REQ] = "SIDR_REQ",
		[CM_ATTR_SIDR_REP - CM_ATTR_REQ] = "SIDR_REP",
		[CM_ATTR_LAP - CM_ATTR_REQ] = "LAP",
		[CM_ATTR_APR - CM_ATTR_REQ] = "APR",
	};

	if (attr_id < CM_ATTR_REQ || attr_id > CM_ATTR_APR)
		return "?";
	return names[attr_id - CM_ATTR_REQ];
}

/* --- Annex A11 -------------------------------------------------------- */

__u64 cm_ip_service_id(__u16 ps, __u16 port)
{
	return CM_IP_SID_PREFIX | (__u64)(ps & 0xff) << 16 | port;
}

int cm_ip_service_parse(__u64 sid, __u16 *ps, __u16 *port)
{
	if ((sid & CM_IP_SID_MASK) != CM_IP_SID_PREFIX)
		return -EINVAL;
	*ps = (__u16)(0x0100 | (sid >> 16 & 0xff));
	*port = (__u16)(sid & 0xffff);
	return 0;
}

#define IPH_VERSION 0 /* MajV, MinV: 0.0 */
#define IPH_IPV FLD(1, 0, 4)
#define IPH_SRC_PORT FLD(2, 0, 16)
#define IPH_SRC_IP 4
#define IPH_DST_IP 20

void cm_ip_hdr_encode(const struct cm_ip_hdr *h, __u8 *pd)
{
	memset(pd, 0, CM_IP_HDR_LEN);
	pd[IPH_VERSION] = 0;
	set(pd, IPH_IPV, h->ip_version);
	set(pd, IPH_SRC_PORT, h->src_port);
	memcpy(pd + IPH_SRC_IP, h->src_ip, 16);
	memcpy(pd + IPH_DST_IP, h->dst_ip, 16);
	if (h->ip_version == 4) {
		/* Linux sends the IPv4 address alone, zero-padded */
		memset(pd + IPH_SRC_IP, 0, 12);
		memset(pd + IPH_DST_IP, 0, 12);
	}
}

int cm_ip_hdr_decode(const __u8 *pd, struct cm_ip_hdr *h)
{
	memset(h, 0, sizeof(*h));
	if (pd[IPH_VERSION] != 0)
		return -EBADMSG;
	h->ip_version = (__u8)get(pd, IPH_IPV);
	if (h->ip_version != 4 && h->ip_version != 6)
		return -EBADMSG;
	h->src_port = (__u16)get(pd, IPH_SRC_PORT);
	memcpy(h->src_ip, pd + IPH_SRC_IP, 16);
	memcpy(h->dst_ip, pd + IPH_DST_IP, 16);
	if (h->ip_version == 4) {
		memset(h->src_ip, 0, 12);
		memset(h->dst_ip, 0, 12);
	}
	return 0;
}

unsigned long cm_time_ms(unsigned int t)
{
	unsigned long long us;

	t &= 31;
	us = 4096ULL << t; /* in ns: 4096 ns * 2^t */
	us /= 1000;
	return us >= 1000 ? (unsigned long)(us / 1000) : 1;
}
