// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Writes the fuzz targets' seed corpora (committed in tests/fuzz/corpus/;
 * `make fuzz-corpus` runs this again):
 *
 *   gen_corpus engine DIR   the frames host a sends host b (fuzz_host.h)
 *                           while both run their requests over the
 *                           in-memory wire: requests of every RC opcode,
 *                           UC and UD sends, ACKs, RNR NAKs, read responses,
 *                           atomic ACKs. One file per frame, and one with
 *                           the whole exchange.
 *   gen_corpus ctl DIR      the control messages rxdp's client library
 *                           sends for each call (recorded by a stand-in
 *                           server), one file each, and one sequence that
 *                           walks a QP from creation to destruction; CM
 *                           MADs from the wire after a listener's making
 *                           (a REQ for it, again, SIDR, RTU, DREQ, REJ,
 *                           MRA); rtnetlink messages recorded from a real
 *                           kernel (tests/daemon/rtnl_recorded.h), and
 *                           ones that remove and readdress fz0.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_cma.h>

#include "common/ctl.h"
#include "common/ctl_client.h"
#include "common/ctl_cm.h"
#include "daemon/cm_mad.h"
#include "engine/pkt.h"
#include "fuzz_host.h"
#include "memwire.h"
#include "../daemon/rtnl_recorded.h"

#define MAX_SEEDS 256

struct seed {
	uint8_t *data;
	uint32_t len;
};

static struct seed seeds[MAX_SEEDS];
static int nseeds;

static void keep(const void *p, uint32_t len)
{
	if (nseeds == MAX_SEEDS)
		return;
	seeds[nseeds].data = malloc(len);
	memcpy(seeds[nseeds].data, p, len);
	seeds[nseeds++].len = len;
}

static int write_file(const char *dir, const char *name, const void *p,
		      size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* A record of the engine target's input format (fuzz_host.h) */
static size_t put_record(uint8_t *out, const struct seed *s)
{
	out[0] = FUZZ_REC_FIX_ICRC | FUZZ_REC_KEY;
	out[1] = s->len & 0xff;
	out[2] = s->len >> 8;
	memcpy(out + 3, s->data, s->len);
	return 3 + s->len;
}

/* --- engine frames ----------------------------------------------------- */

/* Every frame to b, but no more than two alike (RNR NAKs repeat) */
static int record_frame(void *arg, uint8_t *frame, uint32_t len)
{
	static uint8_t seen[1 << 16];
	uint8_t copy[4200];
	struct pkt_info pi;
	uint32_t kind;

	memcpy(copy, frame, len);
	if (pkt_parse(copy, len, &pi))
		return 1;
	kind = (bth_qpn(pi.bth) & 0xf) << 12 | pi.opcode << 4 |
	       (pi.aeth ? aeth_syndrome(pi.aeth) >> 5 : 0);
	if (seen[kind & 0xffff] < 2) {
		seen[kind & 0xffff]++;
		keep(frame, len);
	}
	return 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int gen_engine(const char *dir)
{
	static struct fuzz_host h[2];
	struct memwire *w = memwire_create();
	uint8_t *all = malloc(MAX_SEEDS * 4200);
	size_t all_len = 0;
	double t0;
	int i;

	if (!w || !all)
		return 1;
	for (i = 0; i < 2; i++)
		if (fuzz_host_init(&h[i], i, &memwire_ops, memwire_port(w, i)))
			return 1;
	memwire_set_filter(w, 1, record_frame, NULL);
	if (fuzz_host_post(&h[0], 0, rxdp_emr_rkey(h[1].mr)) ||
	    fuzz_host_post(&h[1], 1, rxdp_emr_rkey(h[0].mr)))
		return 1;
	t0 = now_s();
	for (int posted = 0; now_s() - t0 < 1.0;) {
		rxdp_engine_progress(h[0].e);
		rxdp_engine_progress(h[1].e);
		fuzz_host_drain(&h[0]);
		fuzz_host_drain(&h[1]);
		/* after a's RNR NAKs, the receive b's last send needs */
		if (!posted && now_s() - t0 > 0.1) {
			if (fuzz_host_post_recvs(&h[0]))
				return 1;
			posted = 1;
		}
	}
	for (i = 0; i < nseeds; i++) {
		struct seed *s = &seeds[i];
		struct pkt_info pi;
		char name[64];
		uint8_t rec[4200];
		size_t n;

		/* b's R_Key becomes 0: the target puts its own b's there */
		fuzz_rkey_xor(s->data, s->len, rxdp_emr_rkey(h[1].mr));
		if (pkt_parse(s->data, s->len, &pi)) {
			fprintf(stderr, "frame %d does not parse\n", i);
			return 1;
		}
		n = put_record(rec, s);
		snprintf(name, sizeof(name), "frame-%03d-qp%02x-op%02x", i,
			 bth_qpn(pi.bth), pi.opcode);
		if (write_file(dir, name, rec, n))
			return 1;
		if (i < 32)
			all_len += put_record(all + all_len, s);
	}
	if (write_file(dir, "exchange", all, all_len))
		return 1;
	printf("%d frames from a to b\n", nseeds);
	for (i = 0; i < 2; i++)
		fuzz_host_fini(&h[i]);
	memwire_destroy(w);
	free(all);
	return nseeds < 20;
}

/* --- control messages --------------------------------------------------- */

static int srv_fd = -1;

/* Record each request; answer EINVAL */
static void *recorder(void *arg)
{
	static __u64 buf[RXDP_CTL_MSG_MAX / 8];
	static __u64 out[1024];
	int fd;

	while ((fd = accept(srv_fd, NULL, NULL)) >= 0) {
		ssize_t n;

		while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
			const struct nlmsghdr *in = (const void *)buf;
			struct nlmsghdr *nlh;

			keep(buf, n);
			nlh = rxdp_ctl_msg_start(out, in->nlmsg_type,
						 RXDP_CTL_F_REPLY,
						 in->nlmsg_seq, -EINVAL);
			mnl_attr_put_strz(nlh, RXDP_CTL_A_MSG, "no");
			if (rxdp_ctl_sendmsg(fd, nlh, NULL, 0))
				break;
		}
		close(fd);
	}
	return NULL;
}

/* The QP walk of a verbs program, as the daemon would see it */
static void walk_qp(struct rxdp_ctl *c, __u32 ifindex)
{
	struct rxdp_ctl_obj o = { .pd = 1,
				  .send_cq = 1,
				  .recv_cq = 1,
				  .qp_type = IBV_QPT_RC,
				  .max_send_wr = 4,
				  .max_recv_wr = 4,
				  .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct rxdp_qp_attr a;
	struct rxdp_qp_info info;
	int fd = -1;

	rxdp_ctl_obj(c, RXDP_CTL_QP_CREATE, &o, NULL, &fd);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE;
	rxdp_ctl_modify_qp(c, ifindex, 0x4000, &a,
			   IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				   IBV_QP_ACCESS_FLAGS,
			   &info);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x4001;
	a.rq_psn = 0x123456;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	/* to one of the host's own addresses: no neighbour to wait for */
	a.ah.dgid[10] = a.ah.dgid[11] = 0xff;
	a.ah.dgid[12] = 10;
	a.ah.dgid[15] = 1;
	a.ah.sgid_index = 1;
	a.ah.hop_limit = 64;
	rxdp_ctl_modify_qp(c, ifindex, 0x4000, &a,
			   IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				   IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				   IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER,
			   &info);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x654321;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	rxdp_ctl_modify_qp(c, ifindex, 0x4000, &a,
			   IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC,
			   &info);
	rxdp_ctl_query_qp(c, ifindex, 0x4000, &info);
	o.handle = 1;
	rxdp_ctl_obj(c, RXDP_CTL_QP_DESTROY, &o, NULL, NULL);
}

/* An RDMA-CM application's requests (librdmacm's): channel 1, ids 1 and 2;
 * 16 of them, as many as the fuzz target reads from one input */
/* A record of fuzz_ctl's input: header hdr (a kind, fuzz_ctl.c) + n bytes */
static size_t put_rec(uint8_t *out, unsigned hdr, const void *p, size_t n)
{
	hdr |= (unsigned)n;
	out[0] = hdr & 0xff;
	out[1] = hdr >> 8;
	memcpy(out + 2, p, n);
	return n + 2;
}

/*
 * The listener's making (lst: its records), then CM MADs from 10.0.0.2
 * (fuzz_ctl's peer): each kind alone after it, and a REQ, the same REQ
 * again (a duplicate: an MRA), and a SIDR REQ together
 */
static int gen_mads(const char *dir, const uint8_t *lst, size_t lst_len)
{
	static const __u16 attrs[] = { CM_ATTR_REQ, CM_ATTR_SIDR_REQ,
				       CM_ATTR_RTU, CM_ATTR_DREQ,
				       CM_ATTR_REJ, CM_ATTR_MRA,
				       CM_ATTR_LAP, CM_ATTR_REP };
	static uint8_t out[64 * 1024], seq[64 * 1024];
	struct cm_ip_hdr h = { .ip_version = 4, .src_port = 40000 };
	uint8_t mad[CM_MAD_LEN];
	size_t all = lst_len, one;
	char name[64];

	h.src_ip[10] = h.src_ip[11] = h.dst_ip[10] = h.dst_ip[11] = 0xff;
	h.src_ip[12] = h.dst_ip[12] = 10;
	h.src_ip[15] = 2;
	h.dst_ip[15] = 1;
	memcpy(out, lst, lst_len);
	memcpy(seq, lst, lst_len);
	for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
		struct cm_msg m = { .method = CM_METHOD_SEND,
				    .attr_id = attrs[a],
				    .tid = 0x1000 + a };

		switch (attrs[a]) {
		case CM_ATTR_REQ:
			m.req.local_comm_id = 0x11223344;
			m.req.service_id = cm_ip_service_id(0x0106, 7471);
			m.req.local_ca_guid = 0x0200000000000002ULL;
			m.req.local_qpn = 0x123;
			m.req.starting_psn = 0x4567;
			m.req.path_mtu = 3;
			m.req.retry_count = 7;
			m.req.rnr_retry_count = 7;
			m.req.max_cm_retries = 15;
			m.req.pkey = 0xffff;
			m.req.remote_cm_response_timeout = 20;
			m.req.local_cm_response_timeout = 20;
			cm_ip_hdr_encode(&h, m.req.private_data);
			break;
		case CM_ATTR_SIDR_REQ:
			m.sidr_req.request_id = 7;
			m.sidr_req.pkey = 0xffff;
			m.sidr_req.service_id = cm_ip_service_id(0x0111, 7471);
			cm_ip_hdr_encode(&h, m.sidr_req.private_data);
			break;
		default: /* the ids of what the REQ would have made */
			m.rtu.local_comm_id = 0x11223344;
			m.rtu.remote_comm_id = 1;
			break;
		}
		cm_mad_encode(&m, mad);
		one = lst_len +
		      put_rec(out + lst_len, 0x8000, mad, sizeof(mad));
		snprintf(name, sizeof(name), "mad-%s", cm_attr_name(attrs[a]));
		if (write_file(dir, name, out, one))
			return -1;
		if (attrs[a] == CM_ATTR_REQ || attrs[a] == CM_ATTR_SIDR_REQ) {
			memcpy(seq + all, out + lst_len, one - lst_len);
			all += one - lst_len;
			if (attrs[a] == CM_ATTR_REQ) { /* and again */
				memcpy(seq + all, out + lst_len, one - lst_len);
				all += one - lst_len;
			}
		}
	}
	return write_file(dir, "mad-req-dup-sidr", seq, all);
}

/* rtnetlink: what a real kernel sent, and fz0 (ifindex 1) changed */
static int gen_netlink(const char *dir)
{
	static const struct {
		const unsigned char *p;
		size_t len;
		const char *name;
	} msgs[] = {
#define NL(x) { x, sizeof(x), #x }
		NL(link_0),  NL(link_1),  NL(link_2),  NL(addr_0),
		NL(addr_1),  NL(addr_2),  NL(addr_3),  NL(neigh_0),
		NL(neigh_1), NL(neigh_2), NL(neigh_3), NL(neigh_4),
#undef NL
	};
	static uint8_t out[64 * 1024], m[4096];
	size_t all = 0;
	char name[64];

	for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
		size_t n = put_rec(out + all, 0x4000, msgs[i].p, msgs[i].len);

		snprintf(name, sizeof(name), "nl-%s", msgs[i].name);
		if (write_file(dir, name, out + all, n))
			return -1;
		all += n;
	}
	if (write_file(dir, "nl-dump", out, all))
		return -1;
	/* fz0 renamed (a link message for ifindex 1), then removed */
	memcpy(m, link_1, sizeof(link_1));
	m[20] = 1; /* ifi_index */
	m[21] = m[22] = m[23] = 0;
	all = put_rec(out, 0x4000, m, sizeof(link_1));
	m[4] = RTM_DELLINK;
	all += put_rec(out + all, 0x4000, m, sizeof(link_1));
	if (write_file(dir, "nl-fz0-renamed-removed", out, all))
		return -1;
	/* an address of fz0 removed */
	memcpy(m, addr_0, sizeof(addr_0));
	m[4] = RTM_DELADDR;
	m[20] = 1; /* ifa_index */
	m[21] = m[22] = m[23] = 0;
	all = put_rec(out, 0x4000, m, sizeof(addr_0));
	return write_file(dir, "nl-fz0-addr-removed", out, all);
}

/*
 * A listener on port 7471 of every address (the fuzz target's namespace
 * has no 10.0.0.1 to bind to: fz0 is rxdpd's alone), for the MADs
 */
static void walk_listen(struct rxdp_ctl *c)
{
	struct rxdp_ctl_cm cm;
	int fd;

	memset(&cm, 0, sizeof(cm));
	cm.op = RXDP_CM_CHANNEL_CREATE;
	rxdp_ctl_cm(c, &cm, &fd);
	memset(&cm, 0, sizeof(cm));
	cm.op = RXDP_CM_CREATE_ID;
	cm.channel = 1;
	cm.ps = RDMA_PS_TCP;
	cm.qp_type = IBV_QPT_RC;
	rxdp_ctl_cm(c, &cm, &fd);
	memset(&cm, 0, sizeof(cm));
	cm.op = RXDP_CM_BIND;
	cm.id = 1;
	cm.src.family = AF_INET;
	cm.src.port = htons(7471);
	rxdp_ctl_cm(c, &cm, &fd);
	memset(&cm, 0, sizeof(cm));
	cm.op = RXDP_CM_LISTEN;
	cm.id = 1;
	cm.backlog = 8;
	rxdp_ctl_cm(c, &cm, &fd);
}

static void walk_cm(struct rxdp_ctl *c)
{
	static const __u8 ip[4] = { 10, 0, 0, 1 };
	struct rxdp_ctl_cm cm;
	int fd;

#define CM(...)                             \
	do {                                \
		memset(&cm, 0, sizeof(cm)); \
		__VA_ARGS__;                \
		rxdp_ctl_cm(c, &cm, &fd);   \
	} while (0)
	CM(cm.op = RXDP_CM_CHANNEL_CREATE);
	/* a listener on 10.0.0.1:7471 */
	CM(cm.op = RXDP_CM_CREATE_ID; cm.channel = 1; cm.ps = RDMA_PS_TCP;
	   cm.qp_type = IBV_QPT_RC);
	CM(cm.op = RXDP_CM_SET_OPTION; cm.id = 1; cm.level = RDMA_OPTION_ID;
	   cm.optname = RDMA_OPTION_ID_REUSEADDR; cm.value = 1);
	CM(cm.op = RXDP_CM_BIND; cm.id = 1; cm.src.family = AF_INET;
	   cm.src.port = htons(7471); memcpy(cm.src.addr, ip, 4));
	CM(cm.op = RXDP_CM_LISTEN; cm.id = 1; cm.backlog = 8);
	/* a client of it: addresses, route, connect */
	CM(cm.op = RXDP_CM_CREATE_ID; cm.channel = 1; cm.ps = RDMA_PS_TCP;
	   cm.qp_type = IBV_QPT_RC);
	CM(cm.op = RXDP_CM_RESOLVE_ADDR; cm.id = 2; cm.dst.family = AF_INET;
	   cm.dst.port = htons(7471); memcpy(cm.dst.addr, ip, 4);
	   cm.timeout_ms = 2000);
	CM(cm.op = RXDP_CM_RESOLVE_ROUTE; cm.id = 2; cm.timeout_ms = 2000);
	CM(cm.op = RXDP_CM_INIT_QP_ATTR; cm.id = 2; cm.value = IBV_QPS_INIT);
	CM(cm.op = RXDP_CM_CONNECT; cm.id = 2; cm.conn.qp_num = 0x4000;
	   cm.conn.responder_resources = 1; cm.conn.initiator_depth = 1;
	   cm.conn.retry_count = 7; cm.conn.rnr_retry_count = 7;
	   cm.conn.private_data_len = 4; memcpy(cm.private_data, "ping", 4));
	CM(cm.op = RXDP_CM_REJECT; cm.id = 1; cm.conn.private_data_len = 2);
	CM(cm.op = RXDP_CM_ACCEPT; cm.id = 2; cm.conn.qp_num = 0x4001);
	CM(cm.op = RXDP_CM_DISCONNECT; cm.id = 2);
	CM(cm.op = RXDP_CM_MIGRATE_ID; cm.id = 2; cm.channel = 1);
	CM(cm.op = RXDP_CM_REPOST; cm.channel = 1; cm.event.id = 2;
	   cm.event.event = RDMA_CM_EVENT_ADDR_RESOLVED);
	CM(cm.op = RXDP_CM_NEXT);
#undef CM
}

static int gen_ctl(const char *dir)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char path[256], name[64];
	struct rxdp_ctl *c;
	struct rxdp_dev_info di;
	struct rxdp_gid_entry g;
	struct rxdp_qp_info qi[4];
	struct rxdp_ctx_fds fds;
	struct rxdp_ctl_obj o;
	bool with_ah;
	struct rxdp_path path_out;
	struct rxdp_ah ah = { .dgid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
			      .sgid_index = 1,
			      .hop_limit = 64 };
	__u64 counters[RXDP_CTL_MAX_COUNTERS];
	const __u32 ifindex = 1;
	pthread_t th;
	__u16 pkey;
	int i, first_walk, first_cm, first_listen;
	uint8_t *all = malloc(64 * 1024);
	size_t all_len = 0;

	snprintf(path, sizeof(path), "/tmp/rxdp-gen-corpus.%d", (int)getpid());
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	srv_fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	unlink(path);
	if (!all || srv_fd < 0 ||
	    bind(srv_fd, (struct sockaddr *)&sun, sizeof(sun)) ||
	    listen(srv_fd, 4) || pthread_create(&th, NULL, recorder, NULL)) {
		perror("recording server");
		return 1;
	}
	c = rxdp_ctl_connect(path);
	if (!c) {
		perror("connect");
		return 1;
	}
	rxdp_ctl_list_devices(c, &di, 1);
	rxdp_ctl_query_device(c, ifindex, &di);
	rxdp_ctl_query_gid(c, ifindex, 1, &g);
	rxdp_ctl_query_pkey(c, ifindex, 0, &pkey);
	rxdp_ctl_resolve(c, ifindex, &ah, &path_out);
	rxdp_ctl_list_qps(c, 0, qi, 4);
	rxdp_ctl_query_stats(c, ifindex, counters, RXDP_CTL_MAX_COUNTERS);
	rxdp_ctl_query_counters(c, ifindex, 0, counters, RXDP_CTL_MAX_COUNTERS);
	rxdp_ctl_subscribe(c, ifindex);
	rxdp_ctl_ctx_open(c, ifindex, -1, &fds);
	for (int t = RXDP_CTL_PD_ALLOC; t < RXDP_CTL_TYPE_MAX; t++) {
		if (t == RXDP_CTL_CM) /* not an object: walk_cm's */
			continue;
		memset(&o, 0, sizeof(o));
		o.handle = 1;
		o.pd = 1;
		o.addr = 0x7f0000001000ULL;
		o.length = o.iova = 4096;
		o.access = IBV_ACCESS_LOCAL_WRITE;
		o.cqe = 16;
		o.qp_type = IBV_QPT_RC;
		o.send_cq = o.recv_cq = 2;
		o.max_send_wr = o.max_recv_wr = 16;
		o.max_send_sge = o.max_recv_sge = 1;
		o.mw_type = IBV_MW_TYPE_2;
		/* AH_CREATE's address; MCAST_*'s group */
		with_ah = t == RXDP_CTL_AH_CREATE ||
			  t == RXDP_CTL_MCAST_ATTACH ||
			  t == RXDP_CTL_MCAST_DETACH;
		rxdp_ctl_obj(c, t, &o, with_ah ? &ah : NULL, NULL);
	}
	first_walk = nseeds;
	walk_qp(c, ifindex);
	first_cm = nseeds;
	walk_cm(c);
	first_listen = nseeds;
	walk_listen(c);
	rxdp_ctl_close(c);
	shutdown(srv_fd, SHUT_RDWR);
	close(srv_fd);
	unlink(path);
	pthread_join(th, NULL);

	/* the fuzz target's input: records of a 16-bit length and a message */
	for (i = 0; i < nseeds; i++) {
		const struct nlmsghdr *nlh = (const void *)seeds[i].data;
		uint8_t rec[RXDP_CTL_MSG_MAX + 2];

		rec[0] = seeds[i].len & 0xff;
		rec[1] = seeds[i].len >> 8;
		memcpy(rec + 2, seeds[i].data, seeds[i].len);
		snprintf(name, sizeof(name), "msg-%02d-%s", i,
			 rxdp_ctl_type_name(nlh->nlmsg_type));
		if (write_file(dir, name, rec, seeds[i].len + 2))
			return 1;
		if (i >= first_walk && i < first_cm) {
			memcpy(all + all_len, rec, seeds[i].len + 2);
			all_len += seeds[i].len + 2;
		}
	}
	if (write_file(dir, "qp-walk", all, all_len))
		return 1;
	/* the CM walk as one connection's input (the fuzz target numbers
	 * channels and ids from 1 for each input, as walk_cm names them) */
	all_len = 0;
	for (i = first_cm; i < first_listen; i++) {
		all[all_len++] = seeds[i].len & 0xff;
		all[all_len++] = seeds[i].len >> 8;
		memcpy(all + all_len, seeds[i].data, seeds[i].len);
		all_len += seeds[i].len;
	}
	if (write_file(dir, "cm-walk", all, all_len))
		return 1;
	/* the listener the MADs find (walk_listen) */
	all_len = 0;
	for (i = first_listen; i < nseeds; i++) {
		all[all_len++] = seeds[i].len & 0xff;
		all[all_len++] = seeds[i].len >> 8;
		memcpy(all + all_len, seeds[i].data, seeds[i].len);
		all_len += seeds[i].len;
	}
	if (gen_mads(dir, all, all_len) || gen_netlink(dir))
		return 1;
	printf("%d control messages\n", nseeds);
	free(all);
	return nseeds < 20;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "engine"))
		return gen_engine(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "ctl"))
		return gen_ctl(argv[2]);
	fprintf(stderr, "usage: gen_corpus engine|ctl DIR\n");
	return 2;
}
