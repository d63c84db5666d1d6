// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A client of rxdpd for tests/daemon/integration.sh: drives the control
 * socket through the client library and checks the result in the pinned
 * maps. Exit 0 when every check holds; each failed check prints a line.
 *
 *   ctl_client_test gids IFNAME             print the non-empty GIDs
 *   ctl_client_test port IFNAME             print ACTIVE or DOWN
 *   ctl_client_test qps IFNAME PEER_IPV4 DEAD_IPV4 [hold]
 *       RC, UC and UD QPs walked RESET->INIT->RTR->RTS against PEER, the
 *       contexts and PSNs checked in the maps, bad modifies refused with
 *       nothing changed, DEAD (no such host) refused with EHOSTUNREACH;
 *       with "hold": print the live QPNs and wait to be killed
 *   ctl_client_test resolve IFNAME DGID MAC  see cmd_resolve()
 *   ctl_client_test qpmac IFNAME QPN       print the QP's destination MAC
 *   ctl_client_test unreach IFNAME DGID    resolve must give EHOSTUNREACH
 *   ctl_client_test many IFNAME N          N QPs, listed across pages
 *   ctl_client_test events IFNAME SECONDS  print the device's events
 *   ctl_client_test hostile IFNAME          malformed requests; the daemon
 *                                           must answer each and survive
 *   ctl_client_test ctx IFNAME              see cmd_ctx()
 *   ctl_client_test rings IFNAME PEER_IPV4  see cmd_rings()
 *   ctl_client_test cmhostile IFNAME PEER_IPV4  see cmd_cmhostile()
 *   ctl_client_test takeover VERSION       ask rxdpd to hand over to us,
 *       reading state VERSION: print its answer; 0 if it refused (it
 *       then goes on), 1 if it accepted (then it is gone)
 */
#include <net/if.h>
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/if_xdp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <infiniband/verbs.h>
#include <libmnl/libmnl.h>

#include "common/pins.h"
#include "common/bpffs.h"
#include "common/ctl.h"
#include "common/ctl_client.h"
#include "common/ctl_cm.h"
#include "common/hca.h"
#include "rxdp/maps.h"
#include "rxdp/params.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif

static int failures;

/* ::ffff:a.b.c.d, an IPv4 address's RoCEv2 GID (all 12 prefix bytes:
 * a link-local GID can have 0xff at byte 11 and at byte 10) */
static int is_v4mapped(const __u8 *gid)
{
	static const __u8 p[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(gid, p, 12);
}

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (!(cond)) {                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fprintf(stderr, "\n");                               \
			failures++;                                          \
		}                                                            \
	} while (0)

static struct rxdp_ctl *conn(void)
{
	struct rxdp_ctl *c = rxdp_ctl_connect(NULL);

	if (!c) {
		fprintf(stderr, "cannot connect to rxdpd: %s\n",
			strerror(errno));
		exit(2);
	}
	return c;
}

static int cmd_gids(const char *ifname)
{
	struct rxdp_ctl *c = conn();
	int ifindex = if_nametoindex(ifname);
	struct rxdp_gid_entry g;
	static const __u8 zero[16];
	char s[INET6_ADDRSTRLEN];
	__u32 i;

	for (i = 0;; i++) {
		int ret = rxdp_ctl_query_gid(c, ifindex, i, &g);

		if (ret == -EINVAL)
			break; /* past the end of the table */
		if (ret) {
			fprintf(stderr, "query_gid: %s\n",
				rxdp_ctl_strerror(c));
			return 1;
		}
		if (memcmp(g.gid, zero, 16)) {
			inet_ntop(AF_INET6, g.gid, s, sizeof(s));
			printf("%u %s\n", i, s);
		}
	}
	rxdp_ctl_close(c);
	return i == RXDP_GID_TBL_LEN ? 0 : 1;
}

static int cmd_port(const char *ifname)
{
	struct rxdp_ctl *c = conn();
	struct rxdp_dev_info di;

	if (rxdp_ctl_query_device(c, if_nametoindex(ifname), &di)) {
		fprintf(stderr, "query_device: %s\n", rxdp_ctl_strerror(c));
		return 1;
	}
	printf("%s\n", di.port_state == IBV_PORT_ACTIVE ? "ACTIVE" : "DOWN");
	rxdp_ctl_close(c);
	return 0;
}

struct maps {
	int ctx, psn;
};

static int maps_open(const char *ifname, struct maps *m)
{
	char dir[512], p[600];

	rxdp_bpffs_enter();
	if (rxdp_bpffs_if_dir(ifname, dir, sizeof(dir)))
		return -1;
	snprintf(p, sizeof(p), "%s/%s", dir, RXDP_PIN(qp_ctx));
	m->ctx = bpf_obj_get(p);
	snprintf(p, sizeof(p), "%s/%s", dir, RXDP_PIN(qp_psn));
	m->psn = bpf_obj_get(p);
	return m->ctx < 0 || m->psn < 0 ? -1 : 0;
}

static int ctx_get(struct maps *m, __u32 qpn, struct rxdp_qp_ctx *ctx)
{
	return bpf_map_lookup_elem(m->ctx, &qpn, ctx);
}

static void psn_get(struct maps *m, __u32 qpn, struct rxdp_qp_psn *p)
{
	__u32 idx = qpn & RXDP_QP_INDEX_MASK;

	memset(p, 0xee, sizeof(*p));
	bpf_map_lookup_elem(m->psn, &idx, p);
}

/* The GID index holding ::ffff:ip4 */
static int gid_index_of(struct rxdp_ctl *c, int ifindex, const __u8 *ip4)
{
	struct rxdp_gid_entry g;
	__u32 i;

	for (i = 0; i < RXDP_GID_TBL_LEN; i++) {
		if (rxdp_ctl_query_gid(c, ifindex, i, &g))
			return -1;
		if (is_v4mapped(g.gid) && !memcmp(g.gid + 12, ip4, 4))
			return i;
	}
	return -1;
}

static void v4_gid(const __u8 *ip4, __u8 *gid)
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	memcpy(gid + 12, ip4, 4);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * QPs as a verbs program makes them: in the connection's verbs context
 * (opened at its first QP, with a PD and a CQ), through QP_CREATE; the
 * handle says which to destroy (QP_DESTROY)
 */
struct qp_conn {
	struct rxdp_ctl *c;
	__u32 pd, cq;
};

static struct qp_conn qp_conns[8];

static struct qp_conn *qp_conn_of(struct rxdp_ctl *c, int ifindex)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_ctx_fds f;
	struct qp_conn *q = NULL;
	int mem, fd = -1;

	for (int i = 0; i < 8; i++) {
		if (qp_conns[i].c == c)
			return &qp_conns[i];
		if (!q && !qp_conns[i].c)
			q = &qp_conns[i];
	}
	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	if (!q || rxdp_ctl_ctx_open(c, ifindex, mem, &f))
		return NULL;
	close(mem);
	if (rxdp_ctl_obj(c, RXDP_CTL_PD_ALLOC, &o, NULL, NULL))
		return NULL;
	q->pd = o.handle;
	memset(&o, 0, sizeof(o));
	o.cqe = 64;
	if (rxdp_ctl_obj(c, RXDP_CTL_CQ_CREATE, &o, NULL, &fd))
		return NULL;
	close(fd);
	q->cq = o.handle;
	q->c = c;
	return q;
}

/* A QP of type on ifindex: 0 or -errno, its number and handle */
static int qp_new(struct rxdp_ctl *c, int ifindex, __u32 type, __u32 *qpn,
		  __u32 *handle)
{
	struct qp_conn *q = qp_conn_of(c, ifindex);
	struct rxdp_ctl_obj o = { 0 };
	int ret, fd = -1;

	if (!q)
		return -EIO;
	o.pd = q->pd;
	o.send_cq = o.recv_cq = q->cq;
	o.qp_type = type;
	o.max_send_wr = o.max_recv_wr = 4;
	o.max_send_sge = o.max_recv_sge = 1;
	ret = rxdp_ctl_obj(c, RXDP_CTL_QP_CREATE, &o, NULL, &fd);
	if (fd >= 0)
		close(fd);
	if (ret)
		return ret;
	*qpn = o.qpn;
	if (handle)
		*handle = o.handle;
	return 0;
}

static int qp_free(struct rxdp_ctl *c, __u32 handle)
{
	struct rxdp_ctl_obj o = { .handle = handle };

	return rxdp_ctl_obj(c, RXDP_CTL_QP_DESTROY, &o, NULL, NULL);
}

static __u32 walk_qp(struct rxdp_ctl *c, struct maps *m, int ifindex,
		     __u32 type, int sgid, const __u8 *peer_gid)
{
	struct rxdp_qp_attr a;
	struct rxdp_qp_info info;
	struct rxdp_qp_ctx ctx;
	struct rxdp_qp_psn psn;
	__u32 qpn = 0, mask;
	int ret;
	const char *tn = type == IBV_QPT_RC   ? "RC"
			 : type == IBV_QPT_UC ? "UC"
					      : "UD";

	ret = qp_new(c, ifindex, type, &qpn, NULL);
	CHECK(!ret, "%s create_qp: %s", tn, rxdp_ctl_strerror(c));
	if (ret)
		return 0;
	CHECK(qpn >= 2 && qpn <= 0xffffff, "%s QPN %#x out of range", tn, qpn);
	CHECK(!ctx_get(m, qpn, &ctx) && ctx.state == IBV_QPS_RESET &&
		      ctx.qp_type == type && ctx.owner_pid == (__u32)getpid(),
	      "%s QP %#x: no RESET context in qp_ctx", tn, qpn);
	psn_get(m, qpn, &psn);
	CHECK(psn.qpn == qpn, "%s qp_psn slot not claimed (%#x)", tn, psn.qpn);

	/* RESET -> INIT */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.pkey_index = 0;
	a.qkey = 0x11111111;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
	       (type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	/* first with one required attribute missing: refused, no change */
	ret = rxdp_ctl_modify_qp(c, ifindex, qpn, &a, mask & ~IBV_QP_PORT,
				 NULL);
	CHECK(ret == -EINVAL, "%s INIT without PORT: %d, want -EINVAL", tn,
	      ret);
	CHECK(strstr(rxdp_ctl_strerror(c), "IBV_QP_PORT"),
	      "%s: message does not name the missing attribute: %s", tn,
	      rxdp_ctl_strerror(c));
	CHECK(!ctx_get(m, qpn, &ctx) && ctx.state == IBV_QPS_RESET,
	      "%s refused modify changed the context", tn);
	/* an extra attribute: refused */
	ret = rxdp_ctl_modify_qp(c, ifindex, qpn, &a, mask | IBV_QP_SQ_PSN,
				 NULL);
	CHECK(ret == -EINVAL, "%s INIT with SQ_PSN: %d, want -EINVAL", tn, ret);
	/* an illegal transition: RESET -> RTS */
	a.qp_state = IBV_QPS_RTS;
	ret = rxdp_ctl_modify_qp(c, ifindex, qpn, &a, IBV_QP_STATE, NULL);
	CHECK(ret == -EINVAL, "%s RESET->RTS: %d, want -EINVAL", tn, ret);
	a.qp_state = IBV_QPS_INIT;
	ret = rxdp_ctl_modify_qp(c, ifindex, qpn, &a, mask, &info);
	CHECK(!ret, "%s INIT: %s", tn, rxdp_ctl_strerror(c));
	CHECK(!ctx_get(m, qpn, &ctx) && ctx.state == IBV_QPS_INIT,
	      "%s context not INIT", tn);
	if (type == IBV_QPT_UD)
		CHECK(ctx.qkey == 0x11111111, "%s qkey %#x", tn, ctx.qkey);

	/* INIT -> RTR */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 0x123456;
		a.rq_psn = 0xabcdef;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 12;
		memcpy(a.ah.dgid, peer_gid, 16);
		a.ah.sgid_index = sgid;
		a.ah.hop_limit = 64;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (type == IBV_QPT_RC)
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
	}
	ret = rxdp_ctl_modify_qp(c, ifindex, qpn, &a, mask, &info);
	CHECK(!ret, "%s RTR: %s", tn, rxdp_ctl_strerror(c));
	CHECK(!ctx_get(m, qpn, &ctx) && ctx.state == IBV_QPS_RTR,
	      "%s context not RTR", tn);
	psn_get(m, qpn, &psn);
	if (type != IBV_QPT_UD) {
		CHECK(ctx.dest_qpn == 0x123456, "%s dest_qpn %#x", tn,
		      ctx.dest_qpn);
		CHECK(ctx.path_mtu == IBV_MTU_1024, "%s path_mtu %u", tn,
		      ctx.path_mtu);
		CHECK(psn.epsn == 0xabcdef, "%s epsn %#x, want 0xabcdef", tn,
		      psn.epsn);
		CHECK(info.path.udp_sport >= 0xc000,
		      "%s udp_sport %#x outside 0xC000..0xFFFF", tn,
		      info.path.udp_sport);
		CHECK(!info.path.ipv6 &&
			      !memcmp(info.path.dip + 12, peer_gid + 12, 4),
		      "%s path dip wrong", tn);
		CHECK(memcmp(info.path.dmac, "\0\0\0\0\0\0", 6),
		      "%s no destination MAC", tn);
	}

	/* RTR -> RTS */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x1000001; /* bit 24 set: only 24 bits are kept */
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (type == IBV_QPT_RC)
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	ret = rxdp_ctl_modify_qp(c, ifindex, qpn, &a, mask, &info);
	CHECK(!ret, "%s RTS: %s", tn, rxdp_ctl_strerror(c));
	CHECK(!ctx_get(m, qpn, &ctx) && ctx.state == IBV_QPS_RTS,
	      "%s context not RTS", tn);
	psn_get(m, qpn, &psn);
	CHECK(psn.una_psn == 1 && psn.next_psn == 1,
	      "%s una/next %#x/%#x, want 1/1", tn, psn.una_psn, psn.next_psn);
	CHECK(!rxdp_ctl_query_qp(c, ifindex, qpn, &info) &&
		      info.attr.qp_state == IBV_QPS_RTS &&
		      info.owner_pid == (__u32)getpid(),
	      "%s query_qp disagrees", tn);
	return qpn;
}

static int cmd_qps(const char *ifname, const char *peer, const char *dead,
		   int hold)
{
	struct rxdp_ctl *c = conn();
	int ifindex = if_nametoindex(ifname), sgid;
	__u8 peer4[4], dead4[4], pgid[16], dgid[16], my4[4];
	struct rxdp_dev_info di;
	struct maps m;
	__u32 rc, uc, ud, extra, extra_h = 0;
	struct rxdp_qp_ctx ctx;
	struct rxdp_qp_psn psn;
	struct rxdp_path path;
	struct rxdp_ah ah;
	struct rxdp_gid_entry g;
	double t0;
	int ret, i;

	if (inet_pton(AF_INET, peer, peer4) != 1 ||
	    inet_pton(AF_INET, dead, dead4) != 1 || maps_open(ifname, &m)) {
		fprintf(stderr, "bad arguments or no pinned maps for %s\n",
			ifname);
		return 2;
	}
	CHECK(!rxdp_ctl_query_device(c, ifindex, &di), "query_device: %s",
	      rxdp_ctl_strerror(c));
	/* our IPv4 GID: the first IPv4-mapped one */
	sgid = -1;
	for (i = 0; i < RXDP_GID_TBL_LEN && sgid < 0; i++) {
		if (!rxdp_ctl_query_gid(c, ifindex, i, &g) &&
		    is_v4mapped(g.gid)) {
			sgid = i;
			memcpy(my4, g.gid + 12, 4);
		}
	}
	CHECK(sgid > 0, "no IPv4 GID on %s", ifname);
	CHECK(gid_index_of(c, ifindex, my4) == sgid, "GID lookup");
	v4_gid(peer4, pgid);
	v4_gid(dead4, dgid);

	rc = walk_qp(c, &m, ifindex, IBV_QPT_RC, sgid, pgid);
	uc = walk_qp(c, &m, ifindex, IBV_QPT_UC, sgid, pgid);
	ud = walk_qp(c, &m, ifindex, IBV_QPT_UD, sgid, pgid);
	CHECK(rc && uc && ud && rc != uc && uc != ud && rc != ud,
	      "QPNs not distinct");

	/* resolve (ibv_create_ah) to the peer: its MAC */
	memset(&ah, 0, sizeof(ah));
	memcpy(ah.dgid, pgid, 16);
	ah.sgid_index = sgid;
	ret = rxdp_ctl_resolve(c, ifindex, &ah, &path);
	CHECK(!ret, "resolve peer: %s", rxdp_ctl_strerror(c));
	CHECK(!memcmp(path.smac, di.mac, 6), "resolve: smac is not ours");
	CHECK(!memcmp(path.sip + 12, my4, 4), "resolve: sip is not ours");

	/* an unreachable destination: EHOSTUNREACH, bounded, nothing changed */
	ret = qp_new(c, ifindex, IBV_QPT_RC, &extra, &extra_h);
	CHECK(!ret, "create_qp: %s", rxdp_ctl_strerror(c));
	{
		struct rxdp_qp_attr a;

		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		ret = rxdp_ctl_modify_qp(c, ifindex, extra, &a,
					 IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						 IBV_QP_PORT |
						 IBV_QP_ACCESS_FLAGS,
					 NULL);
		CHECK(!ret, "INIT: %s", rxdp_ctl_strerror(c));
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 77;
		memcpy(a.ah.dgid, dgid, 16);
		a.ah.sgid_index = sgid;
		t0 = now_s();
		ret = rxdp_ctl_modify_qp(
			c, ifindex, extra, &a,
			IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER,
			NULL);
		CHECK(ret == -EHOSTUNREACH, "RTR to %s: %d, want -EHOSTUNREACH",
		      dead, ret);
		printf("unreachable: \"%s\" after %.1f s\n",
		       rxdp_ctl_strerror(c), now_s() - t0);
		CHECK(!ctx_get(&m, extra, &ctx) && ctx.state == IBV_QPS_INIT,
		      "failed RTR changed the context");
		/* path_mtu above the port's: EINVAL */
		a.path_mtu = IBV_MTU_4096;
		memcpy(a.ah.dgid, pgid, 16);
		ret = rxdp_ctl_modify_qp(
			c, ifindex, extra, &a,
			IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER,
			NULL);
		CHECK(ret == -EINVAL, "path_mtu 4096: %d, want -EINVAL", ret);
		/* to ERR from INIT, then RESET: PSN slot cleared, QP kept */
		a.qp_state = IBV_QPS_ERR;
		CHECK(!rxdp_ctl_modify_qp(c, ifindex, extra, &a, IBV_QP_STATE,
					  NULL),
		      "to ERR: %s", rxdp_ctl_strerror(c));
		CHECK(!ctx_get(&m, extra, &ctx) && ctx.state == IBV_QPS_ERR,
		      "context not ERR");
		a.qp_state = IBV_QPS_RESET;
		CHECK(!rxdp_ctl_modify_qp(c, ifindex, extra, &a, IBV_QP_STATE,
					  NULL),
		      "to RESET: %s", rxdp_ctl_strerror(c));
	}
	/* destroy: context gone, PSN slot free */
	CHECK(!qp_free(c, extra_h), "destroy: %s", rxdp_ctl_strerror(c));
	CHECK(ctx_get(&m, extra, &ctx) && errno == ENOENT,
	      "destroyed QP still in qp_ctx");
	psn_get(&m, extra, &psn);
	CHECK(psn.qpn == 0, "destroyed QP's PSN slot still claimed");
	CHECK(qp_free(c, extra_h) == -EINVAL, "double destroy not EINVAL");
	/* someone else's QP: EPERM from another connection */
	{
		struct rxdp_ctl *c2 = conn();
		struct rxdp_qp_attr a = { .qp_state = IBV_QPS_ERR };

		CHECK(rxdp_ctl_modify_qp(c2, ifindex, rc, &a, IBV_QP_STATE,
					 NULL) == -EPERM,
		      "foreign modify not EPERM");
		rxdp_ctl_close(c2);
	}
	/* the list shows ours with our pid */
	{
		struct rxdp_qp_info qi[64];
		int n = rxdp_ctl_list_qps(c, ifindex, qi, 64), mine = 0;

		for (i = 0; i < n; i++)
			mine += qi[i].owner_pid == (__u32)getpid();
		CHECK(mine == 3, "list_qps shows %d of our QPs, want 3", mine);
	}

	if (hold) {
		printf("%u %u %u\n", rc, uc, ud);
		fflush(stdout);
		pause();
	}
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
}

/*
 * ctl_client_test resolve IFNAME DGID MAC: rxdp_ctl_resolve (ibv_create_ah)
 * of DGID (IPv6 text; ::ffff:a.b.c.d for IPv4) from the first GID of the
 * same IP version; the path's destination MAC must be MAC.
 */
static int cmd_resolve(const char *ifname, const char *dgid, const char *mac)
{
	static const __u8 zero[16];
	struct rxdp_ctl *c = conn();
	int ifindex = if_nametoindex(ifname), v4, i, ret;
	struct rxdp_gid_entry g;
	struct rxdp_path path;
	struct rxdp_ah ah;
	unsigned int m[6];

	memset(&ah, 0, sizeof(ah));
	if (inet_pton(AF_INET6, dgid, ah.dgid) != 1 ||
	    sscanf(mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4],
		   &m[5]) != 6)
		return 2;
	v4 = is_v4mapped(ah.dgid);
	for (i = 0; i < RXDP_GID_TBL_LEN; i++) {
		if (rxdp_ctl_query_gid(c, ifindex, i, &g))
			return 1;
		if (is_v4mapped(g.gid) == v4 && memcmp(g.gid, zero, 16))
			break;
	}
	ah.sgid_index = i;
	ret = rxdp_ctl_resolve(c, ifindex, &ah, &path);
	CHECK(!ret, "resolve %s: %s", dgid, rxdp_ctl_strerror(c));
	if (ret)
		return 1;
	for (i = 0; i < 6; i++)
		CHECK(path.dmac[i] == m[i], "dmac byte %d: %02x, want %02x", i,
		      path.dmac[i], m[i]);
	CHECK(path.ipv6 == !v4, "path.ipv6 %u", path.ipv6);
	CHECK(!memcmp(path.dip, ah.dgid, 16) || v4, "dip differs");
	CHECK(path.udp_sport >= 0xc000, "udp_sport %#x", path.udp_sport);
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
}

/* ctl_client_test unreach IFNAME DGID: rxdp_ctl_resolve must fail with
 * EHOSTUNREACH (DGID: a GID nobody answers for) */
static int cmd_unreach(const char *ifname, const char *dgid)
{
	struct rxdp_ctl *c = conn();
	int ifindex = if_nametoindex(ifname), i, ret;
	struct rxdp_gid_entry g;
	struct rxdp_path path;
	struct rxdp_ah ah;

	memset(&ah, 0, sizeof(ah));
	if (inet_pton(AF_INET6, dgid, ah.dgid) != 1)
		return 2;
	for (i = 1; i < RXDP_GID_TBL_LEN; i++)
		if (!rxdp_ctl_query_gid(c, ifindex, i, &g) &&
		    is_v4mapped(g.gid))
			break;
	ah.sgid_index = i;
	ret = rxdp_ctl_resolve(c, ifindex, &ah, &path);
	CHECK(ret == -EHOSTUNREACH, "resolve %s: %d, want -EHOSTUNREACH", dgid,
	      ret);
	printf("%s\n", rxdp_ctl_strerror(c));
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
}

/* ctl_client_test many IFNAME N: N QPs, all listed (the list is paged),
 * all distinct; released by disconnecting */
static int cmd_many(const char *ifname, int n)
{
	struct rxdp_ctl *c = conn();
	int ifindex = if_nametoindex(ifname), i, k, listed, mine = 0;
	__u32 *qpns = calloc(n, sizeof(*qpns));
	struct rxdp_qp_info *qi = calloc(n + 64, sizeof(*qi));
	__u8 *seen = calloc(1 << 24, 1);

	if (!qpns || !qi || !seen)
		return 2;
	for (i = 0; i < n; i++) {
		if (qp_new(c, ifindex, IBV_QPT_UD, &qpns[i], NULL)) {
			CHECK(0, "create %d: %s", i, rxdp_ctl_strerror(c));
			return 1;
		}
		CHECK(!seen[qpns[i]], "QPN %#x handed out twice", qpns[i]);
		seen[qpns[i]] = 1;
	}
	listed = rxdp_ctl_list_qps(c, ifindex, qi, n + 64);
	for (k = 0; k < listed; k++)
		if (qi[k].owner_pid == (__u32)getpid() &&
		    seen[qi[k].qpn] == 1) {
			seen[qi[k].qpn] = 2;
			mine++;
		}
	CHECK(mine == n, "list_qps returned %d of our %d QPs (%d in all)", mine,
	      n, listed);
	printf("%d QPs created and listed\n", mine);
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
}

/*
 * ctl_client_test events IFNAME SECONDS: subscribe, then for SECONDS print
 * each event as "event NAME" (line-buffered). A query every 100 ms makes
 * events also arrive while a call waits for its reply (the queued path).
 */
static int cmd_events(const char *ifname, int seconds)
{
	struct rxdp_ctl *c = conn();
	int ifindex = if_nametoindex(ifname), ret;
	struct rxdp_ctl_event ev;
	struct rxdp_dev_info di;
	double t0 = now_s();

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (rxdp_ctl_subscribe(c, ifindex)) {
		fprintf(stderr, "subscribe: %s\n", rxdp_ctl_strerror(c));
		return 1;
	}
	CHECK(rxdp_ctl_subscribe(c, 999999) == -ENODEV,
	      "subscribing to no device is not ENODEV");
	printf("subscribed\n");
	while (now_s() - t0 < seconds) {
		struct pollfd pfd = { .fd = rxdp_ctl_fd(c), .events = POLLIN };

		poll(&pfd, 1, 100);
		/* a call: events arriving meanwhile are queued, not lost */
		if (rxdp_ctl_query_device(c, ifindex, &di) == -ECONNRESET)
			break;
		while ((ret = rxdp_ctl_get_event(c, &ev)) == 1) {
			CHECK(ev.ifindex == (__u32)ifindex,
			      "event for ifindex %u", ev.ifindex);
			printf("event %s%s\n",
			       ev.event_type == IBV_EVENT_PORT_ACTIVE
				       ? "PORT_ACTIVE"
			       : ev.event_type == IBV_EVENT_PORT_ERR
				       ? "PORT_ERR"
			       : ev.event_type == IBV_EVENT_GID_CHANGE
				       ? "GID_CHANGE"
			       : ev.event_type == IBV_EVENT_DEVICE_FATAL
				       ? "DEVICE_FATAL"
				       : "?",
			       ev.dropped ? " (after drops)" : "");
		}
		if (ret < 0)
			break;
	}
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
}

/* ctl_client_test qpmac IFNAME QPN: the QP's destination MAC */
static int cmd_qpmac(const char *ifname, const char *qpn)
{
	struct rxdp_ctl *c = conn();
	struct rxdp_qp_info info;
	const __u8 *m = info.path.dmac;

	if (rxdp_ctl_query_qp(c, if_nametoindex(ifname), strtoul(qpn, NULL, 0),
			      &info)) {
		fprintf(stderr, "query_qp: %s\n", rxdp_ctl_strerror(c));
		return 1;
	}
	printf("%02x:%02x:%02x:%02x:%02x:%02x\n", m[0], m[1], m[2], m[3], m[4],
	       m[5]);
	rxdp_ctl_close(c);
	return 0;
}

/* Send raw bytes, expect a reply (any) */
static int raw_roundtrip(int fd, const void *p, size_t len, __s32 *err)
{
	static __u64 rb[RXDP_CTL_MSG_MAX / 8];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct rxdp_ctl_msg m;
	ssize_t n;

	if (send(fd, p, len, MSG_NOSIGNAL) != (ssize_t)len)
		return -errno;
	if (poll(&pfd, 1, 5000) != 1)
		return -ETIMEDOUT;
	n = recv(fd, rb, sizeof(rb), 0);
	if (n <= 0)
		return -ECONNRESET;
	if (rxdp_ctl_decode(rb, n, &m, 1))
		return -EPROTO;
	*err = m.hdr->error;
	return 0;
}

static int cmd_hostile(const char *ifname)
{
	struct sockaddr_un sun;
	unsigned int sunlen, seed = 99, i, j;
	static __u64 b[RXDP_CTL_MSG_MAX / 8 + 1024];
	struct nlmsghdr *nlh;
	struct rxdp_ctl *good = conn();
	struct rxdp_dev_info di;
	__s32 err;
	int fd, ret;

	rxdp_ctl_sockaddr(getenv(RXDP_CTL_ENV), &sun, &sunlen);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (connect(fd, (struct sockaddr *)&sun, sunlen))
		return 2;
	/* wrong version */
	nlh = rxdp_ctl_msg_start(b, RXDP_CTL_LIST_DEVICES, 0, 1, 0);
	((struct rxdp_ctl_hdr *)mnl_nlmsg_get_payload(nlh))->version = 99;
	ret = raw_roundtrip(fd, nlh, nlh->nlmsg_len, &err);
	CHECK(!ret && err == -EPROTO, "wrong version: ret %d err %d", ret, err);
	/* unknown type */
	nlh = rxdp_ctl_msg_start(b, 0x7777, 0, 2, 0);
	ret = raw_roundtrip(fd, nlh, nlh->nlmsg_len, &err);
	CHECK(!ret && err == -EOPNOTSUPP, "unknown type: %d/%d", ret, err);
	/* missing attributes */
	nlh = rxdp_ctl_msg_start(b, RXDP_CTL_MODIFY_QP, 0, 3, 0);
	ret = raw_roundtrip(fd, nlh, nlh->nlmsg_len, &err);
	CHECK(!ret && err == -EINVAL, "empty modify: %d/%d", ret, err);
	/* a lying attribute length */
	nlh = rxdp_ctl_msg_start(b, RXDP_CTL_QUERY_QP, 0, 4, 0);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_QPN, 5);
	((struct nlattr *)((char *)nlh + 24))->nla_len = 200;
	ret = raw_roundtrip(fd, nlh, nlh->nlmsg_len, &err);
	CHECK(!ret && err == -EBADMSG, "lying attr: %d/%d", ret, err);
	/* tiny and empty-ish messages */
	ret = raw_roundtrip(fd, "x", 1, &err);
	CHECK(!ret && err == -EBADMSG, "1 byte: %d/%d", ret, err);
	/* oversized: larger than the daemon's buffer */
	memset(b, 0x41, sizeof(b));
	ret = raw_roundtrip(fd, b, RXDP_CTL_MSG_MAX + 4096, &err);
	CHECK(ret == 0 && err == -EMSGSIZE, "oversized: %d/%d", ret, err);
	/* random garbage */
	for (i = 0; i < 2000; i++) {
		size_t len = 1 + rand_r(&seed) % 300;

		for (j = 0; j < len; j++)
			((__u8 *)b)[j] = rand_r(&seed);
		if (i & 1) {
			__u32 l32 = len;
			__u16 ver = RXDP_CTL_VERSION;

			memcpy(b, &l32, 4);
			memcpy((char *)b + 16, &ver, 2);
		}
		ret = raw_roundtrip(fd, b, len, &err);
		if (ret) {
			CHECK(0, "garbage %u: no reply (%d)", i, ret);
			break;
		}
	}
	/* fds with a request that takes none: refused, closed by the daemon */
	{
		static __u64 rb[RXDP_CTL_MSG_MAX / 8];
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct rxdp_ctl_msg m;
		int p[2];
		ssize_t n;

		if (pipe(p) == 0) {
			nlh = rxdp_ctl_msg_start(b, RXDP_CTL_LIST_DEVICES, 0, 5,
						 0);
			CHECK(!rxdp_ctl_sendmsg(fd, nlh, p, 2), "sendmsg fds");
			n = poll(&pfd, 1, 5000) == 1
				    ? recv(fd, rb, sizeof(rb), 0)
				    : -1;
			CHECK(n > 0 && !rxdp_ctl_decode(rb, n, &m, 1) &&
				      m.hdr->error == -EMSGSIZE,
			      "two fds with list_devices not refused");
			close(p[0]);
			close(p[1]);
		}
	}
	close(fd);
	/* a client that hangs up mid-way does no harm; the first still works */
	CHECK(!rxdp_ctl_query_device(good, if_nametoindex(ifname), &di),
	      "daemon unusable after hostile input: %s",
	      rxdp_ctl_strerror(good));
	rxdp_ctl_close(good);
	return failures ? 1 : 0;
}

/* ---- contexts: what a client gets, and what it may reach -------------- */

/* The file an fd is, as /proc/self/fd shows it */
static void fd_kind(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, len - 1);
	buf[n < 0 ? 0 : n] = '\0';
}

/* An eventfd's id (fdinfo), to tell two eventfds apart; -1 if none */
static long eventfd_id(int fd)
{
	char path[64], line[128];
	long id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "eventfd-id: %ld", &id) == 1)
			break;
	fclose(f);
	return id;
}

/*
 * MEM_SHARE (a range of the client's memory re-backed by a memfd, which
 * rxdpd maps): only a read-write memfd, sealed against shrinking (rxdpd
 * seals it if the client did not, so it can never be truncated under
 * rxdpd's mapping), at least as long as the range, page-aligned, not
 * overlapping another; a pipe, a read-only fd, a memfd that cannot be
 * sealed or is too short are refused. at: an address for the ranges.
 */
static void mem_share_checks(struct rxdp_ctl *c, uintptr_t at)
{
	struct rxdp_ctl_obj o = { 0 }, o2;
	int fd, rd, p[2];
	char path[64];

	at = (at + 0xfffff) & ~(uintptr_t)0xfffff;
	o.addr = at;
	o.length = 2 * 4096;
	CHECK(rxdp_ctl_obj(c, RXDP_CTL_MEM_SHARE, &o, NULL, NULL) == -EINVAL,
	      "mem_share without a memfd");
	fd = memfd_create("t", MFD_CLOEXEC); /* sealing not allowed */
	CHECK(fd >= 0 && !ftruncate(fd, 2 * 4096), "memfd");
	CHECK(rxdp_ctl_obj_fd(c, RXDP_CTL_MEM_SHARE, &o, fd) == -EINVAL,
	      "mem_share of a memfd that cannot be sealed");
	close(fd);
	CHECK(!pipe(p), "pipe");
	CHECK(rxdp_ctl_obj_fd(c, RXDP_CTL_MEM_SHARE, &o, p[0]) == -EINVAL,
	      "mem_share of a pipe");
	close(p[0]);
	close(p[1]);
	fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	CHECK(fd >= 0 && !ftruncate(fd, 4096), "memfd");
	CHECK(rxdp_ctl_obj_fd(c, RXDP_CTL_MEM_SHARE, &o, fd) == -EINVAL,
	      "mem_share of a memfd shorter than the range");
	CHECK(!ftruncate(fd, 2 * 4096), "ftruncate");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	rd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(rxdp_ctl_obj_fd(c, RXDP_CTL_MEM_SHARE, &o, rd) == -EINVAL,
	      "mem_share of a read-only fd");
	close(rd);
	o2 = o;
	o2.addr = at + 100;
	CHECK(rxdp_ctl_obj_fd(c, RXDP_CTL_MEM_SHARE, &o2, fd) == -EINVAL,
	      "mem_share of an unaligned range");
	CHECK(!rxdp_ctl_obj_fd(c, RXDP_CTL_MEM_SHARE, &o, fd), "mem_share: %s",
	      rxdp_ctl_strerror(c));
	/* sealed by rxdpd: the client cannot shrink it any more */
	CHECK(ftruncate(fd, 0) && errno == EPERM,
	      "a shared memfd could be truncated under rxdpd's mapping");
	CHECK(fcntl(fd, F_GET_SEALS) & F_SEAL_SHRINK, "not sealed");
	o2 = o;
	o2.addr = at + 4096;
	CHECK(rxdp_ctl_obj_fd(c, RXDP_CTL_MEM_SHARE, &o2, fd) == -EEXIST,
	      "mem_share of an overlapping range");
	/* holes punched by the client read as zeros; nothing faults */
	CHECK(!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0,
			 2 * 4096),
	      "punch a hole");
	CHECK(!rxdp_ctl_obj(c, RXDP_CTL_MEM_UNSHARE, &o, NULL, NULL),
	      "mem_unshare: %s", rxdp_ctl_strerror(c));
	CHECK(rxdp_ctl_obj(c, RXDP_CTL_MEM_UNSHARE, &o, NULL, NULL) == -EINVAL,
	      "mem_unshare twice");
	close(fd);
}

/*
 * ctl_client_test ctx IFNAME
 *   open a verbs context: its fds are an eventfd (the doorbell), a memfd
 *   (the device page, which cannot be mapped writable) and a pipe (async
 *   events), no AF_XDP socket and no BPF object; each context has a
 *   doorbell of its own; objects of another connection's context are out
 *   of reach (no such handle); a PD in use
 *   cannot be freed; rxdpd maps only what it can trust of the memory a
 *   client shares (mem_share_checks).
 */
static int cmd_ctx(const char *ifname)
{
	int ifindex = if_nametoindex(ifname), ret, fd;
	struct rxdp_ctl *c = conn(), *c2 = conn();
	struct rxdp_ctl_obj pd = { 0 }, mr = { 0 }, o;
	struct rxdp_ctx_fds f, f2;
	static char buf[8192];
	char kind[256];
	void *p;

	int mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	int notmem = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

	CHECK(rxdp_ctl_ctx_open(c, ifindex, notmem, &f) == -EINVAL,
	      "a context on an fd that is not the client's /proc/self/mem");
	ret = rxdp_ctl_ctx_open(c, ifindex, mem, &f);
	CHECK(!ret, "ctx_open: %s", rxdp_ctl_strerror(c));
	if (ret)
		return 1;
	fd_kind(f.doorbell, kind, sizeof(kind));
	CHECK(strstr(kind, "eventfd"), "doorbell is %s", kind);
	fd_kind(f.dev_page, kind, sizeof(kind));
	CHECK(strstr(kind, "memfd:"), "device page is %s", kind);
	fd_kind(f.async, kind, sizeof(kind));
	CHECK(strstr(kind, "pipe:"), "async fd is %s", kind);
	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, f.dev_page, 0);
	CHECK(p == MAP_FAILED, "the device page maps writable");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f.dev_page, 0);
	CHECK(p != MAP_FAILED, "the device page does not map read-only");
	/* nor, not its owner, can it open the page again writable */
	snprintf(kind, sizeof(kind), "/proc/self/fd/%d", f.dev_page);
	fd = open(kind, O_RDWR | O_CLOEXEC);
	CHECK(!geteuid() || fd < 0,
	      "the device page opens writable through /proc/self/fd");
	if (fd >= 0)
		close(fd);
	CHECK(rxdp_ctl_ctx_open(c, ifindex, mem, &f2) == -EBUSY,
	      "a second context on one connection");

	ret = rxdp_ctl_obj(c, RXDP_CTL_PD_ALLOC, &pd, NULL, NULL);
	CHECK(!ret && pd.handle, "pd_alloc: %s", rxdp_ctl_strerror(c));
	mr.pd = pd.handle;
	mr.addr = (uintptr_t)buf;
	mr.length = sizeof(buf);
	mr.iova = mr.addr;
	mr.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	ret = rxdp_ctl_obj(c, RXDP_CTL_MR_REG, &mr, NULL, NULL);
	CHECK(!ret && mr.lkey, "mr_reg: %s", rxdp_ctl_strerror(c));
	/*
	 * rxdpd never reads a client's /proc/PID/maps (the client can make
	 * that wait: its mmap lock); the verbs library refuses what is not
	 * mapped itself (memrules), and anything else is the client's own
	 * access error later
	 */
	o = mr;
	o.addr = 4096; /* nothing is mapped there */
	CHECK(!rxdp_ctl_obj(c, RXDP_CTL_MR_REG, &o, NULL, NULL),
	      "an MR over unmapped memory: %s", rxdp_ctl_strerror(c));
	CHECK(!rxdp_ctl_obj(c, RXDP_CTL_MR_DEREG, &o, NULL, NULL),
	      "mr_dereg: %s", rxdp_ctl_strerror(c));
	mem_share_checks(c, (uintptr_t)buf);
	o = pd;
	CHECK(rxdp_ctl_obj(c, RXDP_CTL_PD_FREE, &o, NULL, NULL) == -EBUSY,
	      "a PD with an MR freed");

	/* another client: none of the first one's handles are its own */
	ret = rxdp_ctl_ctx_open(c2, ifindex, mem, &f2);
	CHECK(!ret, "second client's ctx_open: %s", rxdp_ctl_strerror(c2));
	CHECK(eventfd_id(f.doorbell) >= 0 &&
		      eventfd_id(f.doorbell) != eventfd_id(f2.doorbell),
	      "two contexts share a doorbell (%ld, %ld)",
	      eventfd_id(f.doorbell), eventfd_id(f2.doorbell));
	o = mr;
	CHECK(rxdp_ctl_obj(c2, RXDP_CTL_MR_DEREG, &o, NULL, NULL) == -EINVAL,
	      "another client deregistered the MR");
	o = pd;
	CHECK(rxdp_ctl_obj(c2, RXDP_CTL_PD_FREE, &o, NULL, NULL) == -EINVAL,
	      "another client freed the PD");
	memset(&o, 0, sizeof(o));
	o.pd = pd.handle;
	o.send_cq = o.recv_cq = 1;
	o.qp_type = IBV_QPT_RC;
	CHECK(rxdp_ctl_obj(c2, RXDP_CTL_QP_CREATE, &o, NULL, &fd) == -EINVAL,
	      "another client made a QP on the first one's PD");

	o = mr;
	CHECK(!rxdp_ctl_obj(c, RXDP_CTL_MR_DEREG, &o, NULL, NULL),
	      "mr_dereg: %s", rxdp_ctl_strerror(c));
	o = pd;
	CHECK(!rxdp_ctl_obj(c, RXDP_CTL_PD_FREE, &o, NULL, NULL), "pd_free: %s",
	      rxdp_ctl_strerror(c));
	rxdp_ctl_close(c2);
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
}

/*
 * ctl_client_test rings IFNAME PEER_IPV4
 *   a hostile client: an RC QP with a data path, at RTS towards PEER, whose
 *   shared rings it then fills with garbage (random WQEs, producer indices
 *   far beyond the ring, the ring geometry in the header overwritten, the
 *   CQ's consumer index too), and rings the doorbell; several rounds. rxdpd
 *   must survive every one and take the QP to ERR (a bad WQE completes in
 *   error), and serve the next request.
 */
static int cmd_rings(const char *ifname, const char *peer)
{
	int ifindex = if_nametoindex(ifname), mem, ret, cqfd = -1, qpfd = -1;
	struct rxdp_ctl_obj pd = { 0 }, cq = { 0 }, qp = { 0 };
	struct rxdp_ctl *c = conn();
	struct rxdp_qp_info info;
	struct rxdp_qp_attr a;
	struct rxdp_ctx_fds f;
	struct rxdp_dev_info di;
	__u8 peer4[4], pgid[16];
	unsigned int seed = 42;
	uint8_t *qm, *cm;
	int sgid = -1;

	if (inet_pton(AF_INET, peer, peer4) != 1)
		return 2;
	mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	ret = rxdp_ctl_ctx_open(c, ifindex, mem, &f);
	CHECK(!ret, "ctx_open: %s", rxdp_ctl_strerror(c));
	if (ret)
		return 1;
	for (int i = 0; i < RXDP_GID_TBL_LEN && sgid < 0; i++) {
		struct rxdp_gid_entry g;

		if (!rxdp_ctl_query_gid(c, ifindex, i, &g) &&
		    is_v4mapped(g.gid))
			sgid = i;
	}
	v4_gid(peer4, pgid);
	cq.cqe = 16;
	qp.qp_type = IBV_QPT_RC;
	qp.max_send_wr = qp.max_recv_wr = 8;
	qp.max_send_sge = qp.max_recv_sge = 2;
	qp.max_inline_data = 64;
	if (rxdp_ctl_obj(c, RXDP_CTL_PD_ALLOC, &pd, NULL, NULL) ||
	    rxdp_ctl_obj(c, RXDP_CTL_CQ_CREATE, &cq, NULL, &cqfd) ||
	    (qp.pd = pd.handle, qp.send_cq = qp.recv_cq = cq.handle,
	     rxdp_ctl_obj(c, RXDP_CTL_QP_CREATE, &qp, NULL, &qpfd))) {
		CHECK(0, "objects: %s", rxdp_ctl_strerror(c));
		return 1;
	}
	cm = mmap(NULL, cq.mem_size, PROT_READ | PROT_WRITE, MAP_SHARED, cqfd,
		  0);
	qm = mmap(NULL, qp.mem_size, PROT_READ | PROT_WRITE, MAP_SHARED, qpfd,
		  0);
	CHECK(cm != MAP_FAILED && qm != MAP_FAILED, "mapping the queues");
	if (cm == MAP_FAILED || qm == MAP_FAILED)
		return 1;
	for (int round = 0; round < 8; round++) {
		struct rxdp_hca_qp *sh = (struct rxdp_hca_qp *)qm;
		uint64_t one = 1;

		/* RESET -> INIT -> RTR -> RTS */
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RESET;
		rxdp_ctl_modify_qp(c, ifindex, qp.qpn, &a, IBV_QP_STATE, NULL);
		a.qp_state = IBV_QPS_INIT;
		a.port_num = 1;
		ret = rxdp_ctl_modify_qp(c, ifindex, qp.qpn, &a,
					 IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						 IBV_QP_PORT |
						 IBV_QP_ACCESS_FLAGS,
					 NULL);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = 77;
		memcpy(a.ah.dgid, pgid, 16);
		a.ah.sgid_index = (__u8)sgid;
		ret = ret
			      ?: rxdp_ctl_modify_qp(
					 c, ifindex, qp.qpn, &a,
					 IBV_QP_STATE | IBV_QP_AV |
						 IBV_QP_PATH_MTU |
						 IBV_QP_DEST_QPN |
						 IBV_QP_RQ_PSN |
						 IBV_QP_MAX_DEST_RD_ATOMIC |
						 IBV_QP_MIN_RNR_TIMER,
					 NULL);
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTS;
		a.timeout = 1;
		ret = ret
			      ?: rxdp_ctl_modify_qp(
					 c, ifindex, qp.qpn, &a,
					 IBV_QP_STATE | IBV_QP_TIMEOUT |
						 IBV_QP_RETRY_CNT |
						 IBV_QP_RNR_RETRY |
						 IBV_QP_SQ_PSN |
						 IBV_QP_MAX_QP_RD_ATOMIC,
					 NULL);
		CHECK(!ret, "round %d: to RTS: %s", round,
		      rxdp_ctl_strerror(c));
		/* garbage everywhere a client can write */
		for (size_t k = sizeof(*sh); k < qp.mem_size; k++)
			qm[k] = (uint8_t)rand_r(&seed);
		sh->sq.size = (__u32)rand_r(&seed);
		sh->sq.stride = (__u32)rand_r(&seed);
		sh->rq.stride = 0;
		atomic_store(&sh->rq.prod, (__u32)rand_r(&seed));
		atomic_store(&sh->sq.prod,
			     round & 1 ? 3 : (__u32)rand_r(&seed));
		atomic_store(&((struct rxdp_hca_cq *)cm)->cons,
			     (__u32)rand_r(&seed));
		if (write(f.doorbell, &one, sizeof(one)) != sizeof(one))
			CHECK(0, "doorbell");
		/* up to 5 s: the data-path thread may wait for a loaded CPU */
		for (int t = 0; t < 100; t++) {
			usleep(50000);
			ret = rxdp_ctl_query_qp(c, ifindex, qp.qpn, &info);
			if (ret || info.attr.qp_state == IBV_QPS_ERR)
				break;
		}
		CHECK(!ret, "round %d: rxdpd does not answer: %s", round,
		      rxdp_ctl_strerror(c));
		CHECK(info.attr.qp_state == IBV_QPS_ERR,
		      "round %d: QP in state %u after garbage, expected ERR",
		      round, info.attr.qp_state);
	}
	CHECK(!rxdp_ctl_query_device(c, ifindex, &di), "rxdpd gone: %s",
	      rxdp_ctl_strerror(c));
	rxdp_ctl_close(c);
	return failures ? 1 : 0;
}

/*
 * ctl_client_test cmhostile IFNAME PEER_IPV4
 *   CM requests with random ops, handles, addresses, lengths and values,
 *   on a connection that owns channels and ids in every state it can reach
 *   (bound, listening, resolving PEER, connecting to it) and on one that
 *   owns none: another connection's ids and channels are out of reach
 *   (ENOENT), the daemon answers every request and serves afterwards.
 */
static int cmd_cmhostile(const char *ifname, const char *peer)
{
	struct rxdp_ctl *a = conn(), *b = conn();
	struct rxdp_ctl_cm cm;
	struct rxdp_dev_info di;
	__u32 ids[8], chan, seed = 7;
	int fd, ret;

	memset(&cm, 0, sizeof(cm));
	cm.op = RXDP_CM_CHANNEL_CREATE;
	CHECK(!rxdp_ctl_cm(a, &cm, &fd) && fd >= 0, "channel: %s",
	      rxdp_ctl_strerror(a));
	chan = cm.channel;
	for (int i = 0; i < 8; i++) {
		memset(&cm, 0, sizeof(cm));
		cm.op = RXDP_CM_CREATE_ID;
		cm.channel = chan;
		cm.ps = i & 1 ? 0x0111 : 0x0106;
		cm.qp_type = i & 1 ? IBV_QPT_UD : IBV_QPT_RC;
		CHECK(!rxdp_ctl_cm(a, &cm, NULL), "create_id: %s",
		      rxdp_ctl_strerror(a));
		ids[i] = cm.id;
		/* some bound, listening, resolving towards the peer */
		memset(&cm, 0, sizeof(cm));
		cm.id = ids[i];
		cm.op = i < 3 ? RXDP_CM_LISTEN : RXDP_CM_RESOLVE_ADDR;
		cm.dst.family = AF_INET;
		cm.dst.port = htons(7000 + i);
		inet_pton(AF_INET, peer, cm.dst.addr);
		rxdp_ctl_cm(a, &cm, NULL);
	}
	/* another connection may not touch them */
	for (int i = 0; i < 8; i++) {
		memset(&cm, 0, sizeof(cm));
		cm.op = RXDP_CM_DESTROY_ID;
		cm.id = ids[i];
		ret = rxdp_ctl_cm(b, &cm, NULL);
		CHECK(ret == -ENOENT, "another connection destroyed id %u (%d)",
		      ids[i], ret);
	}
	memset(&cm, 0, sizeof(cm));
	cm.op = RXDP_CM_CHANNEL_DESTROY;
	cm.channel = chan;
	CHECK(rxdp_ctl_cm(b, &cm, NULL) == -ENOENT,
	      "another connection destroyed the channel");
	/* random requests, on both; every one answered */
	for (int i = 0; i < 20000; i++) {
		struct rxdp_ctl *c = i & 1 ? a : b;
		__u8 *raw = (__u8 *)&cm;

		for (size_t k = 0; k < sizeof(cm); k++)
			raw[k] = (__u8)rand_r(&seed);
		cm.op = rand_r(&seed) % (RXDP_CM_OP_MAX + 2);
		if (cm.op == RXDP_CM_CHANNEL_CREATE ||
		    cm.op == RXDP_CM_CHANNEL_DESTROY)
			cm.op = RXDP_CM_QUERY;
		if (rand_r(&seed) & 1)
			cm.id = ids[rand_r(&seed) % 8];
		if (rand_r(&seed) & 1)
			cm.channel = chan;
		if (rand_r(&seed) & 1) {
			cm.src.family = AF_INET;
			cm.dst.family = rand_r(&seed) & 1 ? AF_INET : AF_INET6;
		}
		ret = rxdp_ctl_cm(c, &cm, NULL);
		if (ret == -ECONNRESET || ret == -EPIPE) {
			CHECK(0, "request %d: the daemon hung up (%d)", i, ret);
			break;
		}
	}
	close(fd);
	rxdp_ctl_close(a);
	CHECK(!rxdp_ctl_query_device(b, if_nametoindex(ifname), &di),
	      "daemon unusable after hostile CM requests: %s",
	      rxdp_ctl_strerror(b));
	rxdp_ctl_close(b);
	return failures ? 1 : 0;
}

static int cmd_takeover(unsigned int version)
{
	static __u64 buf[RXDP_CTL_MSG_MAX / 8];
	struct rxdp_ctl_msg m;
	struct sockaddr_un sun;
	struct nlmsghdr *nlh;
	unsigned int sunlen;
	int fd, nfds = 0;
	ssize_t n;

	if (rxdp_ctl_sockaddr(NULL, &sun, &sunlen))
		return 2;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, sunlen)) {
		fprintf(stderr, "cannot connect to rxdpd: %s\n",
			strerror(errno));
		return 2;
	}
	nlh = rxdp_ctl_msg_start(buf, RXDP_CTL_TAKEOVER, 0, 1, 0);
	mnl_attr_put_u32(nlh, RXDP_CTL_A_INDEX, version);
	n = rxdp_ctl_sendmsg(fd, nlh, NULL, 0);
	if (!n)
		n = rxdp_ctl_recvmsg(fd, buf, sizeof(buf), NULL, &nfds, 0);
	if (n <= 0 || rxdp_ctl_decode(buf, (size_t)n, &m, 0)) {
		fprintf(stderr, "no answer\n");
		return 2;
	}
	close(fd);
	if (!m.hdr->error) {
		printf("accepted\n");
		return 1;
	}
	printf("refused (%s): %s\n", strerror(-m.hdr->error),
	       m.tb[RXDP_CTL_A_MSG] ? mnl_attr_get_str(m.tb[RXDP_CTL_A_MSG])
				    : "");
	return 0;
}

int main(int argc, char **argv)
{
	int ret = 2;

	if (argc == 3 && !strcmp(argv[1], "gids"))
		ret = cmd_gids(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "port"))
		ret = cmd_port(argv[2]);
	else if ((argc == 5 || argc == 6) && !strcmp(argv[1], "qps"))
		ret = cmd_qps(argv[2], argv[3], argv[4], argc == 6);
	else if (argc == 4 && !strcmp(argv[1], "events"))
		ret = cmd_events(argv[2], atoi(argv[3]));
	else if (argc == 4 && !strcmp(argv[1], "many"))
		ret = cmd_many(argv[2], atoi(argv[3]));
	else if (argc == 4 && !strcmp(argv[1], "unreach"))
		ret = cmd_unreach(argv[2], argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "qpmac"))
		ret = cmd_qpmac(argv[2], argv[3]);
	else if (argc == 5 && !strcmp(argv[1], "resolve"))
		ret = cmd_resolve(argv[2], argv[3], argv[4]);
	else if (argc == 3 && !strcmp(argv[1], "hostile"))
		ret = cmd_hostile(argv[2]);
	else if (argc == 3 && !strcmp(argv[1], "ctx"))
		ret = cmd_ctx(argv[2]);
	else if (argc == 4 && !strcmp(argv[1], "rings"))
		ret = cmd_rings(argv[2], argv[3]);
	else if (argc == 4 && !strcmp(argv[1], "cmhostile"))
		ret = cmd_cmhostile(argv[2], argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "takeover"))
		ret = cmd_takeover((unsigned int)strtoul(argv[2], NULL, 0));
	else
		fprintf(stderr, "usage: see the header of %s\n", __FILE__);
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return ret ? ret : (failures ? 1 : 0);
}
