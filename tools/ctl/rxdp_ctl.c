// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-ctl: what rxdpd knows, for people and (--json) for monitoring.
 *
 *   rxdp-ctl [--socket PATH] [--json]
 *            [devices|gids|qps|cm|stats|counters|all|metrics|links]
 *
 * cm is the connection manager's ids (listeners and connections), under
 * the same rule as QPs: a user's own, or all for root.
 *
 * metrics are all the counters, in Prometheus' text format.
 *
 * counters are the transport's, named as Soft-RoCE's hw_counters
 * (common/hw_counters.h): per device, and per QP (a QP's only for its user
 * or root; rxdpd does not say whether another's exists).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <linux/if_xdp.h>

#include "common/ctl.h"
#include "common/ctl_client.h"
#include "common/ctl_cm.h"
#include "common/hw_counters.h"
#include "common/opts.h"
#include "rxdp/maps.h"

#define MAX_DEVS 64
#define MAX_QPS 16384
#define MAX_CM_IDS 16384

/* What was asked for */
enum {
	W_DEVICES = 1 << 0,
	W_GIDS = 1 << 1,
	W_QPS = 1 << 2,
	W_STATS = 1 << 3,
	W_COUNTERS = 1 << 4,
	W_CM = 1 << 5,
	W_ALL = (1 << 6) - 1,
	/* not in all: another format */
	W_METRICS = 1 << 6,
	W_LINKS = 1 << 7, /* rdma link's form of the devices */
	W_METRICS_FETCH = W_DEVICES | W_QPS | W_STATS | W_COUNTERS,
};

/* Everything fetched, then printed as text or JSON */
struct snapshot {
	struct rxdp_dev_info devs[MAX_DEVS];
	int ndevs;
	struct rxdp_gid_entry gids[MAX_DEVS][RXDP_GID_TBL_LEN];
	__u64 verdicts[MAX_DEVS][RXDP_CTL_MAX_COUNTERS];
	int nverdicts[MAX_DEVS];
	__u64 hwc[MAX_DEVS][RXDP_HWC_MAX];
	struct rxdp_qp_info *qi;
	struct rxdp_ctl_qp_stats *qs;
	__u64 (*qhwc)[RXDP_HWC_MAX];
	bool *qhwc_ok; /* the QP's counters were ours to read */
	int nqps;
	struct cm_entry *cm;
	int ncm;
	/* what keeps rxdpd from serving (a line each), as it says it */
	char problems[512];
};

/* One id of the connection manager, as RXDP_CM_NEXT tells of it */
struct cm_entry {
	__u32 id;
	__u32 ps;
	__u64 pid; /* 0: closing, no owner */
	char state[24];
	struct rxdp_cm_info info;
};

static const char *port_state(__u32 s)
{
	switch (s) {
	case IBV_PORT_ACTIVE:
		return "ACTIVE";
	case IBV_PORT_DOWN:
		return "DOWN";
	case IBV_PORT_INIT:
		return "INIT";
	case IBV_PORT_ARMED:
		return "ARMED";
	default:
		return "?";
	}
}

static const char *qp_state(__u32 s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS",
					 "SQD",	  "SQE",  "ERR" };

	return s < 7 ? n[s] : "?";
}

static const char *qp_type(__u32 t)
{
	return t == IBV_QPT_RC	 ? "RC"
	       : t == IBV_QPT_UC ? "UC"
	       : t == IBV_QPT_UD ? "UD"
				 : "?";
}

/* The name of process pid as /proc shows it, or "-" (gone, or another pid
 * namespace's) */
static const char *proc_name(__u32 pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(buf, len, "-");
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	f = pid ? fopen(path, "r") : NULL;
	if (!f)
		return buf;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
	return buf;
}

static bool gid_empty(const __u8 *gid)
{
	static const __u8 zero[16];

	return !memcmp(gid, zero, 16);
}

/* The GID as an IPv6 address; *ip4 the IPv4 address of a mapped one */
static void gid_ip(const __u8 *gid, char *ip, size_t len, char *ip4,
		   size_t len4)
{
	static const __u8 v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	inet_ntop(AF_INET6, gid, ip, len);
	ip4[0] = '\0';
	if (!memcmp(gid, v4, 12))
		inet_ntop(AF_INET, gid + 12, ip4, len4);
}

/* A connected QP's peer: its destination GID as an address, or "-" */
static const char *qp_peer(const struct rxdp_qp_info *q, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN], ip4[INET_ADDRSTRLEN];

	if (q->qp_type == IBV_QPT_UD || q->attr.qp_state < IBV_QPS_RTR ||
	    gid_empty(q->attr.ah.dgid)) {
		snprintf(buf, len, "-");
		return buf;
	}
	gid_ip(q->attr.ah.dgid, ip, sizeof(ip), ip4, sizeof(ip4));
	snprintf(buf, len, "%s", ip4[0] ? ip4 : ip);
	return buf;
}

static const char *dev_of(const struct snapshot *s, __u32 ifindex)
{
	for (int j = 0; j < s->ndevs; j++)
		if (s->devs[j].ifindex == ifindex)
			return s->devs[j].name;
	return "?";
}

static const char *port_space(__u32 ps)
{
	switch (ps) {
	case 0x0106:
		return "TCP";
	case 0x0111:
		return "UDP";
	case 0x013f:
		return "IB";
	}
	return "?";
}

/* ip:port, [ip6]:port, or "-" for none */
static const char *cm_addr(const struct rxdp_cm_addr *a, char *buf, size_t len)
{
	char ip[INET6_ADDRSTRLEN] = "*";

	if (!a->family)
		return "-";
	inet_ntop(a->family, a->addr, ip, sizeof(ip));
	snprintf(buf, len, a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip,
		 ntohs(a->port));
	return buf;
}

/* --- fetching --------------------------------------------------------- */

static int fail(struct rxdp_ctl *c, const char *what, int ret)
{
	fprintf(stderr, "rxdp-ctl: %s: %s\n", what, rxdp_ctl_strerror(c));
	return ret;
}

/* The connection manager's ids, one request each */
static int fetch_cm(struct rxdp_ctl *c, struct snapshot *s)
{
	struct rxdp_ctl_cm cm = { .op = RXDP_CM_NEXT };
	int ret = 0;

	s->cm = calloc(MAX_CM_IDS, sizeof(*s->cm));
	if (!s->cm)
		return -ENOMEM;
	while (s->ncm < MAX_CM_IDS && !(ret = rxdp_ctl_cm(c, &cm, NULL))) {
		struct cm_entry *e = &s->cm[s->ncm++];

		e->id = cm.id;
		e->ps = cm.ps;
		e->pid = cm.value;
		e->info = cm.info;
		snprintf(e->state, sizeof(e->state), "%.*s",
			 (int)sizeof(e->state) - 1, (char *)cm.private_data);
		cm.op = RXDP_CM_NEXT; /* from this id on */
	}
	if (s->ncm < MAX_CM_IDS && ret != -ENOENT)
		return fail(c, "cm", ret);
	return 0;
}

static int fetch(struct rxdp_ctl *c, struct snapshot *s, unsigned int what)
{
	int ret;

	s->ndevs = rxdp_ctl_list_devices(c, s->devs, MAX_DEVS);
	if (s->ndevs < 0)
		return fail(c, "devices", s->ndevs);
	snprintf(s->problems, sizeof(s->problems), "%s", rxdp_ctl_strerror(c));
	for (int i = 0; i < s->ndevs; i++) {
		__u32 ifindex = s->devs[i].ifindex;

		for (__u32 k = 0;
		     (what & W_GIDS) && k < s->devs[i].gid_tbl_len &&
		     k < RXDP_GID_TBL_LEN;
		     k++) {
			ret = rxdp_ctl_query_gid(c, ifindex, k, &s->gids[i][k]);
			if (ret)
				return fail(c, "query_gid", ret);
		}
		if (what & W_STATS) {
			ret = rxdp_ctl_query_stats(c, ifindex, s->verdicts[i],
						   RXDP_CTL_MAX_COUNTERS);
			if (ret < 0)
				return fail(c, "stats", ret);
			s->nverdicts[i] = ret < RXDP_V_MAX ? ret : RXDP_V_MAX;
		}
		if (what & W_COUNTERS) {
			ret = rxdp_ctl_query_counters(c, ifindex, 0, s->hwc[i],
						      RXDP_HWC_MAX);
			if (ret < 0)
				return fail(c, "counters", ret);
		}
	}
	if ((what & W_CM) && (ret = fetch_cm(c, s)))
		return ret;
	if (!(what & (W_QPS | W_COUNTERS)))
		return 0;
	s->qi = calloc(MAX_QPS, sizeof(*s->qi));
	s->qs = calloc(MAX_QPS, sizeof(*s->qs));
	s->qhwc = calloc(MAX_QPS, sizeof(*s->qhwc));
	s->qhwc_ok = calloc(MAX_QPS, sizeof(*s->qhwc_ok));
	if (!s->qi || !s->qs || !s->qhwc || !s->qhwc_ok)
		return -ENOMEM;
	s->nqps = rxdp_ctl_list_qps_stats(c, 0, s->qi, s->qs, MAX_QPS);
	if (s->nqps < 0)
		return fail(c, "list_qps", s->nqps);
	for (int i = 0; (what & W_COUNTERS) && i < s->nqps; i++)
		s->qhwc_ok[i] = rxdp_ctl_query_counters(c, s->qs[i].ifindex,
							s->qi[i].qpn,
							s->qhwc[i],
							RXDP_HWC_MAX) >= 0;
	return 0;
}

/* --- text ------------------------------------------------------------- */

/* rxdpd's problems first, whatever was asked: no silent broken state */
static void text_problems(const struct snapshot *s)
{
	const char *p = s->problems, *nl;

	if (!p[0])
		return;
	printf("PROBLEMS (rxdpd)\n");
	for (; (nl = strchr(p, '\n')); p = nl + 1)
		printf("  %.*s\n", (int)(nl - p), p);
	printf("  %s\n", p);
}

/* An AF_XDP socket's mode (struct rxdp_dev_info's xsk_modes) */
static const char *xsk_mode(__u16 m)
{
	return m & XDP_ZEROCOPY ? "zero-copy" : "copy";
}

static void text_devices(const struct snapshot *s)
{
	printf("DEVICES (%d)\n", s->ndevs);
	for (int i = 0; i < s->ndevs; i++) {
		const struct rxdp_dev_info *d = &s->devs[i];
		const __u8 *g = (const __u8 *)&d->node_guid;

		printf("  %-20s if %s (ifindex %u) mac "
		       "%02x:%02x:%02x:%02x:%02x:%02x\n",
		       d->name, d->ifname, d->ifindex, d->mac[0], d->mac[1],
		       d->mac[2], d->mac[3], d->mac[4], d->mac[5]);
		printf("    port 1: %s  active_mtu %u  max_mtu %u (if mtu %u)  "
		       "speed %u Mb/s\n",
		       port_state(d->port_state), 128U << d->active_mtu,
		       128U << d->max_mtu, d->if_mtu, d->speed_mbps);
		printf("    node_guid %02x%02x:%02x%02x:%02x%02x:%02x%02x  rx "
		       "queues %u  gid_tbl_len %u  max_qp %u\n",
		       g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7],
		       d->num_rx_queues, d->gid_tbl_len, d->max_qp);
		printf("    node /dev/infiniband/%s\n",
		       d->dev_node[0] ? d->dev_node : "(none)");
		printf("    congestion control %.*s\n", (int)sizeof(d->cc_algo),
		       d->cc_algo);
		for (__u32 k = 0; k < d->ntcs && k < RXDP_CTL_MAX_TCS; k++) {
			const struct rxdp_ctl_tc *t = &d->tcs[k];
			char how[16];

			snprintf(how, sizeof(how), "weight %u", t->weight);
			printf("    class %u: SL %.*s, %s: sent %llu packets "
			       "(%llu bytes), received %llu (%llu bytes)\n",
			       k, (int)sizeof(t->sls), t->sls,
			       t->strict ? "strict" : how,
			       (unsigned long long)t->tx_packets,
			       (unsigned long long)t->tx_bytes,
			       (unsigned long long)t->rx_packets,
			       (unsigned long long)t->rx_bytes);
		}
		if (!d->nxsks)
			printf("    AF_XDP sockets: none yet (rxdpd binds them "
			       "at the first verbs context)\n");
		for (__u32 q = 0; q < d->nxsks && q < RXDP_CTL_MAX_XSKS; q++)
			printf("    AF_XDP socket of queue %u: %s mode%s\n", q,
			       xsk_mode(d->xsk_modes[q]),
			       d->xsk_modes[q] & XDP_USE_SG ? ", multi-buffer"
							    : "");
	}
}

/*
 * The GIDs in show_gids' columns (rdma-core's script, which reads sysfs,
 * where rxdp is not): every one is RoCE v2, on the device's netdev
 */
static void text_gids(const struct snapshot *s)
{
	printf("%-15s %-4s %-5s %-39s %-15s %-3s %s\n", "DEV", "PORT", "INDEX",
	       "GID", "IPv4", "VER", "DEV");
	for (int i = 0; i < s->ndevs; i++) {
		for (__u32 k = 0;
		     k < s->devs[i].gid_tbl_len && k < RXDP_GID_TBL_LEN; k++) {
			const __u8 *g = s->gids[i][k].gid;
			char ip[INET6_ADDRSTRLEN], ip4[INET_ADDRSTRLEN];

			if (gid_empty(g))
				continue;
			gid_ip(g, ip, sizeof(ip), ip4, sizeof(ip4));
			printf("%-15s %-4u %-5u ", s->devs[i].name, 1U, k);
			for (int w = 0; w < 16; w += 2)
				printf("%02x%02x%s", g[w], g[w + 1],
				       w < 14 ? ":" : "");
			printf(" %-15s %-3s %s\n", ip4[0] ? ip4 : "", "v2",
			       s->devs[i].ifname);
		}
	}
}

/* The netdev's carrier, as rdma link's physical_state says it */
static const char *phys_state(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret;

	if (fd < 0)
		return "?";
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCGIFFLAGS, &ifr);
	close(fd);
	if (ret)
		return "?";
	return ifr.ifr_flags & IFF_RUNNING ? "LINK_UP" : "DISABLED";
}

/* One line a port, as rdma link prints the kernel's */
static void text_links(const struct snapshot *s)
{
	for (int i = 0; i < s->ndevs; i++) {
		const struct rxdp_dev_info *d = &s->devs[i];

		printf("link %s/1 state %s physical_state %s netdev %s "
		       "active_mtu %u\n",
		       d->name, port_state(d->port_state),
		       phys_state(d->ifname), d->ifname, 128U << d->active_mtu);
	}
}

static void text_qps(const struct snapshot *s)
{
	printf("QPS (%d)\n", s->nqps);
	if (s->nqps)
		printf("  %-14s %-8s %-4s %-5s %7s %-15s %-15s %8s %5s %8s "
		       "%8s %8s %10s %10s %8s %9s %5s %8s %5s %6s\n",
		       "device", "qpn", "type", "state", "pid", "comm", "peer",
		       "dest_qp", "mtu", "epsn", "una_psn", "next_psn",
		       "rx_pkts", "rx_bytes", "rx_drops", "rate_mbps", "alpha",
		       "srtt_us", "class", "engine");
	for (int i = 0; i < s->nqps; i++) {
		const struct rxdp_qp_info *q = &s->qi[i];
		const struct rxdp_ctl_qp_stats *st = &s->qs[i];
		char comm[32], peer[INET6_ADDRSTRLEN];

		/* PSNs as the engine keeps them now (qp_psn), not as set */
		printf("  %-14s %#8x %-4s %-5s %7u %-15s %-15s %#8x %5u %#8x "
		       "%#8x %#8x %10llu %10llu %8llu %9llu %5u %8u %5u %6u\n",
		       dev_of(s, st->ifindex), q->qpn, qp_type(q->qp_type),
		       qp_state(q->attr.qp_state), q->owner_pid,
		       proc_name(q->owner_pid, comm, sizeof(comm)),
		       qp_peer(q, peer, sizeof(peer)), q->attr.dest_qp_num,
		       q->attr.path_mtu ? 128U << q->attr.path_mtu : 0,
		       st->epsn, st->una_psn, st->next_psn,
		       (unsigned long long)st->rx_packets,
		       (unsigned long long)st->rx_bytes,
		       (unsigned long long)st->rx_drops,
		       (unsigned long long)st->cc_rate_kbps / 1000,
		       st->cc_alpha, st->srtt_us, st->tc, st->engine);
	}
}

static void text_stats(const struct snapshot *s)
{
	for (int i = 0; i < s->ndevs; i++) {
		printf("XDP VERDICTS of %s\n", s->devs[i].name);
		for (int k = 0; k < s->nverdicts[i]; k++)
			printf("  %-22s %llu\n", rxdp_verdict_names[k],
			       (unsigned long long)s->verdicts[i][k]);
	}
}

static void text_counters(const struct snapshot *s)
{
	for (int i = 0; i < s->ndevs; i++) {
		printf("COUNTERS of %s\n", s->devs[i].name);
		for (int k = 0; k < RXDP_HWC_MAX; k++)
			printf("  %-22s %llu\n", rxdp_hwc_names[k],
			       (unsigned long long)s->hwc[i][k]);
	}
	/* per QP: the counters that moved */
	for (int i = 0; i < s->nqps; i++) {
		if (!s->qhwc_ok[i])
			continue;
		printf("COUNTERS of QP %#x on %s:", s->qi[i].qpn,
		       dev_of(s, s->qs[i].ifindex));
		for (int k = 0; k < RXDP_HWC_MAX; k++)
			if (s->qhwc[i][k])
				printf(" %s=%llu", rxdp_hwc_names[k],
				       (unsigned long long)s->qhwc[i][k]);
		putchar('\n');
	}
}

/* --- JSON ------------------------------------------------------------- */

static void json_str(const char *p)
{
	putchar('"');
	for (; *p; p++) {
		unsigned char ch = (unsigned char)*p;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

/* "key": */
static void json_key(const char *key)
{
	json_str(key);
	putchar(':');
}

static void json_names(const char *const *names, const __u64 *v, int n)
{
	putchar('{');
	for (int k = 0; k < n; k++) {
		printf(k ? "," : "");
		json_key(names[k]);
		printf("%llu", (unsigned long long)v[k]);
	}
	putchar('}');
}

static void json_device(const struct snapshot *s, int i, unsigned int what)
{
	const struct rxdp_dev_info *d = &s->devs[i];
	const __u8 *g = (const __u8 *)&d->node_guid;
	char buf[64];

	putchar('{');
	json_key("name");
	json_str(d->name);
	printf(",");
	json_key("ifname");
	json_str(d->ifname);
	printf(",\"ifindex\":%u,", d->ifindex);
	snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x", d->mac[0],
		 d->mac[1], d->mac[2], d->mac[3], d->mac[4], d->mac[5]);
	json_key("mac");
	json_str(buf);
	snprintf(buf, sizeof(buf), "%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0],
		 g[1], g[2], g[3], g[4], g[5], g[6], g[7]);
	printf(",");
	json_key("node_guid");
	json_str(buf);
	printf(",\"port_state\":\"%s\",\"active_mtu\":%u,\"max_mtu\":%u,"
	       "\"if_mtu\":%u,\"speed_mbps\":%u,\"rx_queues\":%u,"
	       "\"gid_tbl_len\":%u,\"max_qp\":%u,",
	       port_state(d->port_state), 128U << d->active_mtu,
	       128U << d->max_mtu, d->if_mtu, d->speed_mbps, d->num_rx_queues,
	       d->gid_tbl_len, d->max_qp);
	json_key("dev_node");
	json_str(d->dev_node);
	putchar(',');
	json_key("cc_algo");
	snprintf(buf, sizeof(buf), "%.*s", (int)sizeof(d->cc_algo), d->cc_algo);
	json_str(buf);
	printf(",\"classes\":[");
	for (__u32 k = 0; k < d->ntcs && k < RXDP_CTL_MAX_TCS; k++) {
		const struct rxdp_ctl_tc *t = &d->tcs[k];

		printf("%s{", k ? "," : "");
		json_key("sls");
		snprintf(buf, sizeof(buf), "%.*s", (int)sizeof(t->sls), t->sls);
		json_str(buf);
		printf(",\"strict\":%s,\"weight\":%u,\"tx_packets\":%llu,"
		       "\"tx_bytes\":%llu,\"rx_packets\":%llu,"
		       "\"rx_bytes\":%llu}",
		       t->strict ? "true" : "false", t->weight,
		       (unsigned long long)t->tx_packets,
		       (unsigned long long)t->tx_bytes,
		       (unsigned long long)t->rx_packets,
		       (unsigned long long)t->rx_bytes);
	}
	putchar(']');
	printf(",\"xsks\":[");
	for (__u32 q = 0; q < d->nxsks && q < RXDP_CTL_MAX_XSKS; q++)
		printf("%s{\"queue\":%u,\"mode\":\"%s\",\"multi_buffer\":%s}",
		       q ? "," : "", q, xsk_mode(d->xsk_modes[q]),
		       d->xsk_modes[q] & XDP_USE_SG ? "true" : "false");
	putchar(']');
	if (what & W_GIDS) {
		int n = 0;

		printf(",\"gids\":[");
		for (__u32 k = 0; k < d->gid_tbl_len && k < RXDP_GID_TBL_LEN;
		     k++) {
			char ip[INET6_ADDRSTRLEN], ip4[INET_ADDRSTRLEN];

			if (gid_empty(s->gids[i][k].gid))
				continue;
			gid_ip(s->gids[i][k].gid, ip, sizeof(ip), ip4,
			       sizeof(ip4));
			printf("%s{\"index\":%u,\"gid\":\"%s\",\"ipv4\":",
			       n++ ? "," : "", k, ip);
			if (ip4[0])
				json_str(ip4);
			else
				printf("null");
			printf(",\"type\":\"RoCE v2\"}");
		}
		putchar(']');
	}
	if (what & W_STATS) {
		printf(",\"xdp_verdicts\":");
		json_names(rxdp_verdict_names, s->verdicts[i], s->nverdicts[i]);
	}
	if (what & W_COUNTERS) {
		printf(",\"counters\":");
		json_names(rxdp_hwc_names, s->hwc[i], RXDP_HWC_MAX);
	}
	putchar('}');
}

static void json_qp(const struct snapshot *s, int i, unsigned int what)
{
	const struct rxdp_qp_info *q = &s->qi[i];
	const struct rxdp_ctl_qp_stats *st = &s->qs[i];
	char buf[INET6_ADDRSTRLEN];

	putchar('{');
	json_key("device");
	json_str(dev_of(s, st->ifindex));
	printf(",");
	json_key("comm");
	json_str(proc_name(q->owner_pid, buf, sizeof(buf)));
	printf(",");
	json_key("peer");
	json_str(qp_peer(q, buf, sizeof(buf)));
	printf(",\"qpn\":%u,\"type\":\"%s\",\"state\":\"%s\",\"pid\":%u,"
	       "\"dest_qp\":%u,\"mtu\":%u,\"epsn\":%u,\"una_psn\":%u,"
	       "\"next_psn\":%u,\"rx_packets\":%llu,\"rx_bytes\":%llu,"
	       "\"rx_drops\":%llu",
	       q->qpn, qp_type(q->qp_type), qp_state(q->attr.qp_state),
	       q->owner_pid, q->attr.dest_qp_num,
	       q->attr.path_mtu ? 128U << q->attr.path_mtu : 0, st->epsn,
	       st->una_psn, st->next_psn, (unsigned long long)st->rx_packets,
	       (unsigned long long)st->rx_bytes,
	       (unsigned long long)st->rx_drops);
	printf(",\"rate_kbps\":%llu,\"alpha\":%u,\"srtt_us\":%u,\"class\":%u,"
	       "\"engine\":%u",
	       (unsigned long long)st->cc_rate_kbps, st->cc_alpha, st->srtt_us,
	       st->tc, st->engine);
	if (what & W_COUNTERS) {
		printf(",\"counters\":");
		if (s->qhwc_ok[i])
			json_names(rxdp_hwc_names, s->qhwc[i], RXDP_HWC_MAX);
		else
			printf("null");
	}
	putchar('}');
}

/* --- Prometheus ------------------------------------------------------- */

/*
 * The Prometheus text exposition format (0.0.4): a family's HELP and TYPE
 * once, then its samples; counters end in _total; label values escaped.
 * Per device: labels device and ifname; per QP: device, qpn (hex, as
 * rxdp-ctl shows it) and type. The transport's counters keep Soft-RoCE's
 * hw_counters names (rxdp_sent_pkts_total, rxdp_qp_sent_pkts_total).
 */
static void prom_family(const char *name, const char *type, const char *help)
{
	printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void prom_value(const char *v)
{
	putchar('"');
	for (; *v; v++) {
		if (*v == '\\' || *v == '"')
			printf("\\%c", *v);
		else if (*v == '\n')
			printf("\\n");
		else
			putchar(*v);
	}
	putchar('"');
}

static void prom_dev_labels(const struct rxdp_dev_info *d)
{
	printf("{device=");
	prom_value(d->name);
	printf(",ifname=");
	prom_value(d->ifname);
}

static void prom_qp_labels(const struct snapshot *s, int i)
{
	printf("{device=");
	prom_value(dev_of(s, s->qs[i].ifindex));
	printf(",qpn=\"%#x\",type=\"%s\"", s->qi[i].qpn,
	       qp_type(s->qi[i].qp_type));
}

static void metrics_problems(const struct snapshot *s)
{
	char line[512];
	const char *p = s->problems, *nl;
	int n = p[0] ? 1 : 0;

	for (const char *q = p; (q = strchr(q, '\n')); q++)
		n++;
	prom_family("rxdp_problems", "gauge",
		    "What keeps rxdpd from serving: one per problem "
		    "(rxdp-ctl's PROBLEMS)");
	printf("rxdp_problems %d\n", n);
	prom_family("rxdp_problem_info", "gauge",
		    "Each problem rxdpd reports, as a label (value 1)");
	while (p[0]) {
		nl = strchr(p, '\n');
		snprintf(line, sizeof(line), "%.*s",
			 nl ? (int)(nl - p) : (int)strlen(p), p);
		printf("rxdp_problem_info{problem=");
		prom_value(line);
		printf("} 1\n");
		if (!nl)
			break;
		p = nl + 1;
	}
}

/* 1: rxdpd answered (what follows is its), 0: it did not (nothing follows) */
static void metrics_up(int up)
{
	prom_family("rxdp_up", "gauge",
		    "1 when rxdp-ctl reached rxdpd, 0 when it could not (no "
		    "other sample then)");
	printf("rxdp_up %d\n", up);
}

/* Each device's service classes (rxdpd --tc): what each moved */
static void metrics_classes(const struct snapshot *s)
{
	static const char *const fam[][2] = {
		{ "rxdp_class_sent_packets_total",
		  "Packets the QPs of the service class sent" },
		{ "rxdp_class_sent_bytes_total",
		  "Payload bytes the QPs of the service class sent" },
		{ "rxdp_class_received_packets_total",
		  "Packets the QPs of the service class received" },
		{ "rxdp_class_received_bytes_total",
		  "Payload bytes the QPs of the service class received" },
	};

	for (int f = 0; f < 4; f++) {
		prom_family(fam[f][0], "counter", fam[f][1]);
		for (int i = 0; i < s->ndevs; i++) {
			const struct rxdp_dev_info *d = &s->devs[i];

			for (__u32 k = 0; k < d->ntcs && k < RXDP_CTL_MAX_TCS;
			     k++) {
				const struct rxdp_ctl_tc *t = &d->tcs[k];
				const __u64 v[] = { t->tx_packets, t->tx_bytes,
						    t->rx_packets,
						    t->rx_bytes };
				char sls[sizeof(t->sls) + 1];

				snprintf(sls, sizeof(sls), "%.*s",
					 (int)sizeof(t->sls), t->sls);
				printf("%s", fam[f][0]);
				prom_dev_labels(d);
				printf(",class=\"%u\",sls=", k);
				prom_value(sls);
				printf("} %llu\n", (unsigned long long)v[f]);
			}
		}
	}
}

static void metrics_all(const struct snapshot *s)
{
	char name[96], help[160];

	metrics_up(1);
	prom_family("rxdp_info", "gauge",
		    "rxdp's version, as rxdp-ctl reports it (value 1)");
	printf("rxdp_info{version=");
	prom_value(rxdp_version());
	printf("} 1\n");
	metrics_problems(s);

	prom_family("rxdp_devices", "gauge", "The verbs devices rxdpd serves");
	printf("rxdp_devices %d\n", s->ndevs);
	prom_family("rxdp_port_active", "gauge",
		    "1 while the device's port is ACTIVE, 0 while it is DOWN");
	for (int i = 0; i < s->ndevs; i++) {
		printf("rxdp_port_active");
		prom_dev_labels(&s->devs[i]);
		printf("} %d\n", s->devs[i].port_state == IBV_PORT_ACTIVE);
	}
	prom_family("rxdp_port_active_mtu_bytes", "gauge",
		    "The port's active path MTU");
	for (int i = 0; i < s->ndevs; i++) {
		printf("rxdp_port_active_mtu_bytes");
		prom_dev_labels(&s->devs[i]);
		printf("} %u\n", 128U << s->devs[i].active_mtu);
	}

	prom_family("rxdp_xdp_packets_total", "counter",
		    "Packets the XDP program gave each verdict (pass_not_roce, "
		    "redirect, drop_*)");
	for (int i = 0; i < s->ndevs; i++)
		for (int k = 0; k < s->nverdicts[i]; k++) {
			printf("rxdp_xdp_packets_total");
			prom_dev_labels(&s->devs[i]);
			printf(",verdict=\"%s\"} %llu\n", rxdp_verdict_names[k],
			       (unsigned long long)s->verdicts[i][k]);
		}

	for (int k = 0; k < RXDP_HWC_MAX; k++) {
		snprintf(name, sizeof(name), "rxdp_%s_total",
			 rxdp_hwc_names[k]);
		snprintf(help, sizeof(help),
			 "The transport's %s of the device (Soft-RoCE's "
			 "hw_counters name)",
			 rxdp_hwc_names[k]);
		prom_family(name, "counter", help);
		for (int i = 0; i < s->ndevs; i++) {
			printf("%s", name);
			prom_dev_labels(&s->devs[i]);
			printf("} %llu\n", (unsigned long long)s->hwc[i][k]);
		}
	}

	metrics_classes(s);

	prom_family("rxdp_qp_info", "gauge",
		    "Each QP the caller may see (its uid's; root: all), its "
		    "state and owner as labels (value 1)");
	for (int i = 0; i < s->nqps; i++) {
		printf("rxdp_qp_info");
		prom_qp_labels(s, i);
		printf(",state=\"%s\",pid=\"%u\"} 1\n",
		       qp_state(s->qi[i].attr.qp_state), s->qi[i].owner_pid);
	}
	{
		static const char *const xdp[][2] = {
			{ "rxdp_qp_xdp_rx_packets_total",
			  "Packets the XDP program passed to the QP" },
			{ "rxdp_qp_xdp_rx_bytes_total",
			  "Bytes the XDP program passed to the QP" },
			{ "rxdp_qp_xdp_rx_drops_total",
			  "Packets for the QP the XDP program dropped" },
		};

		for (int k = 0; k < 3; k++) {
			prom_family(xdp[k][0], "counter", xdp[k][1]);
			for (int i = 0; i < s->nqps; i++) {
				const struct rxdp_ctl_qp_stats *st = &s->qs[i];
				__u64 v = k == 0   ? st->rx_packets
					  : k == 1 ? st->rx_bytes
						   : st->rx_drops;

				printf("%s", xdp[k][0]);
				prom_qp_labels(s, i);
				printf("} %llu\n", (unsigned long long)v);
			}
		}
	}
	prom_family("rxdp_qp_dcqcn_rate_bits_per_second", "gauge",
		    "The QP's current rate by its device's congestion "
		    "control (the line rate until it is cut)");
	for (int i = 0; i < s->nqps; i++) {
		printf("rxdp_qp_dcqcn_rate_bits_per_second");
		prom_qp_labels(s, i);
		printf("} %llu\n",
		       (unsigned long long)s->qs[i].cc_rate_kbps * 1000);
	}
	prom_family("rxdp_qp_dcqcn_alpha", "gauge",
		    "DCQCN's alpha of the QP, 0..1 (how much a cut takes)");
	for (int i = 0; i < s->nqps; i++) {
		printf("rxdp_qp_dcqcn_alpha");
		prom_qp_labels(s, i);
		printf("} %.4f\n", s->qs[i].cc_alpha / 1024.0);
	}
	prom_family("rxdp_qp_rtt_seconds", "gauge",
		    "The requester's smoothed round-trip time (0 before the "
		    "first sample)");
	for (int i = 0; i < s->nqps; i++) {
		printf("rxdp_qp_rtt_seconds");
		prom_qp_labels(s, i);
		printf("} %.6f\n", s->qs[i].srtt_us / 1e6);
	}
	for (int k = 0; k < RXDP_HWC_MAX; k++) {
		snprintf(name, sizeof(name), "rxdp_qp_%s_total",
			 rxdp_hwc_names[k]);
		snprintf(help, sizeof(help),
			 "The transport's %s of the QP (Soft-RoCE's "
			 "hw_counters name)",
			 rxdp_hwc_names[k]);
		prom_family(name, "counter", help);
		for (int i = 0; i < s->nqps; i++) {
			if (!s->qhwc_ok[i])
				continue;
			printf("%s", name);
			prom_qp_labels(s, i);
			printf("} %llu\n", (unsigned long long)s->qhwc[i][k]);
		}
	}
}

/* --- the connection manager's ids -------------------------------------- */

static void text_cm(const struct snapshot *s)
{
	printf("CM IDS\n  %-8s %7s %-15s %-3s %-14s %-14s %-24s %-24s\n", "id",
	       "pid", "comm", "ps", "state", "device", "local", "remote");
	for (int i = 0; i < s->ncm; i++) {
		const struct cm_entry *e = &s->cm[i];
		char l[64], r[64], comm[32];

		printf("  %-8u %7llu %-15s %-3s %-14s %-14s %-24s %-24s\n",
		       e->id, (unsigned long long)e->pid,
		       proc_name((__u32)e->pid, comm, sizeof(comm)),
		       port_space(e->ps), e->state,
		       e->info.ifindex ? dev_of(s, e->info.ifindex) : "*",
		       cm_addr(&e->info.src, l, sizeof(l)),
		       cm_addr(&e->info.dst, r, sizeof(r)));
	}
}

static void json_cm(const struct snapshot *s)
{
	printf(",\"cm_ids\":[");
	for (int i = 0; i < s->ncm; i++) {
		const struct cm_entry *e = &s->cm[i];
		char l[64], r[64], comm[32];

		printf("%s{\"id\":%u,\"pid\":%llu,\"ps\":\"%s\",", i ? "," : "",
		       e->id, (unsigned long long)e->pid, port_space(e->ps));
		json_key("comm");
		json_str(proc_name((__u32)e->pid, comm, sizeof(comm)));
		printf(",");
		json_key("state");
		json_str(e->state);
		printf(",");
		json_key("device");
		if (e->info.ifindex)
			json_str(dev_of(s, e->info.ifindex));
		else
			printf("null");
		printf(",");
		json_key("local");
		json_str(cm_addr(&e->info.src, l, sizeof(l)));
		printf(",");
		json_key("remote");
		json_str(cm_addr(&e->info.dst, r, sizeof(r)));
		putchar('}');
	}
	putchar(']');
}

static void json_problems(const struct snapshot *s)
{
	char line[512];
	const char *p = s->problems, *nl;
	int n = 0;

	printf(",\"problems\":[");
	while (p[0]) {
		nl = strchr(p, '\n');
		snprintf(line, sizeof(line), "%.*s",
			 nl ? (int)(nl - p) : (int)strlen(p), p);
		printf(n++ ? "," : "");
		json_str(line);
		if (!nl)
			break;
		p = nl + 1;
	}
	putchar(']');
}

static void json_all(const struct snapshot *s, unsigned int what)
{
	printf("{\"devices\":[");
	for (int i = 0; i < s->ndevs; i++) {
		printf(i ? "," : "");
		json_device(s, i, what);
	}
	putchar(']');
	if (what & (W_QPS | W_COUNTERS)) {
		printf(",\"qps\":[");
		for (int i = 0; i < s->nqps; i++) {
			printf(i ? "," : "");
			json_qp(s, i, what);
		}
		putchar(']');
	}
	if (what & W_CM)
		json_cm(s);
	json_problems(s);
	printf("}\n");
}

/* The problems first, then each view asked for, in this order */
static void text_all(const struct snapshot *s, unsigned int what)
{
	static const struct {
		unsigned int bit;
		void (*show)(const struct snapshot *s);
	} views[] = {
		{ W_LINKS, text_links },
		{ W_DEVICES, text_devices },
		{ W_GIDS, text_gids },
		{ W_QPS, text_qps },
		{ W_CM, text_cm },
		{ W_STATS, text_stats },
		{ W_COUNTERS, text_counters },
	};

	text_problems(s);
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (what & views[i].bit)
			views[i].show(s);
}

/* --- main ------------------------------------------------------------- */

static const struct rxdp_opt ctl_opts[] = {
	{ "socket", 's', "PATH",
	  "rxdpd's control socket (default: $RXDP_SOCKET, else\n"
	  "the abstract @" RXDP_CTL_ABSTRACT_NAME ")" },
	{ "json", 'j', NULL, "one JSON object, for monitoring" },
	{},
};

struct ctl_cfg {
	const char *path;
	bool json;
};

static int ctl_set(int key, const char *arg, void *ctx)
{
	struct ctl_cfg *cfg = ctx;

	switch (key) {
	case 's':
		cfg->path = arg;
		return 0;
	case 'j':
		cfg->json = true;
		return 0;
	}
	return -1;
}

static const struct rxdp_cmdline ctl_cmdline = {
	.prog = "rxdp-ctl",
	.usage = "[--socket PATH] [--json] [WHAT]",
	.doc = "Show what rxdpd, the daemon of this network namespace, "
	       "knows. WHAT is one of:\n"
	       "  devices   the verbs devices (rxdp_IFNAME), their port "
	       "state, MTU, GUID,\n"
	       "            and the mode of each AF_XDP socket (zero-copy "
	       "or copy)\n"
	       "  gids      each device's GID table, in show_gids' columns\n"
	       "  qps       the QPs: owner pid and name, peer, state, PSNs, "
	       "receive counters,\n"
	       "            rate, class and engine\n"
	       "  cm        the connection manager's ids\n"
	       "  stats     the XDP program's verdicts per device\n"
	       "  counters  the transport's counters per device and per QP "
	       "(Soft-RoCE's\n"
	       "            hw_counters names)\n"
	       "  all       all of the above (the default)\n"
	       "  metrics   every counter, the ports and the problems in "
	       "Prometheus' text\n"
	       "            format (for node_exporter's textfile collector)\n"
	       "  links     one line a port, as rdma link shows the kernel's "
	       "devices\n"
	       "A user sees the QPs and CM ids of its own uid; root sees "
	       "all.\n",
	.opts = ctl_opts,
	.footer = "Exit status: 0 done, 1 failed (rxdpd not reached, a request "
		  "refused) or\n"
		  "PROBLEMS listed (not for metrics: rxdp_problems), 2 bad "
		  "usage. See rxdp-ctl(1).\n",
	.set = ctl_set,
};

static unsigned int parse_what(const char *w)
{
	static const struct {
		const char *name;
		unsigned int bits;
	} t[] = {
		{ "devices", W_DEVICES },   { "gids", W_GIDS },
		{ "qps", W_QPS },	    { "stats", W_STATS },
		{ "counters", W_COUNTERS }, { "cm", W_CM },
		{ "all", W_ALL },	    { "metrics", W_METRICS },
		{ "links", W_LINKS },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (!strcmp(w, t[i].name))
			return t[i].bits;
	return 0;
}

int main(int argc, char **argv)
{
	static struct snapshot s;
	struct ctl_cfg cfg = { 0 };
	unsigned int what = W_ALL;
	struct rxdp_ctl *c;
	int first, ret;

	first = rxdp_opts_parse(&ctl_cmdline, argc, argv, &cfg);
	if (first < 0)
		return 2;
	if (first < argc) {
		what = parse_what(argv[first]);
		if (!what) {
			fprintf(stderr,
				"rxdp-ctl: unknown '%s' (devices, gids, qps, "
				"cm, stats, counters, all, metrics or links; "
				"see --help)\n",
				argv[first]);
			return 2;
		}
		first++;
	}
	if (first != argc) {
		fprintf(stderr, "rxdp-ctl: one WHAT at most (see --help)\n");
		return 2;
	}
	if (what == W_METRICS && cfg.json) {
		fprintf(stderr,
			"rxdp-ctl: metrics are Prometheus' text format, "
			"not JSON\n");
		return 2;
	}
	c = rxdp_ctl_connect(cfg.path);
	if (!c) {
		fprintf(stderr,
			"rxdp-ctl: cannot reach rxdpd (%s): is it running in "
			"this network namespace?\n",
			strerror(errno));
		/* a textfile collector's file must say so, not stay as it was */
		if (what == W_METRICS)
			metrics_up(0);
		return 1;
	}
	ret = fetch(c, &s, what == W_METRICS ? W_METRICS_FETCH : what);
	rxdp_ctl_close(c);
	if (ret) {
		if (what == W_METRICS)
			metrics_up(0);
		return 1;
	}
	/* metrics carry the problems as samples (rxdp_problems): a collector
	 * keeps its file; the views exit 1 so that a script sees them */
	if (what == W_METRICS) {
		metrics_all(&s);
		return 0;
	}
	if (cfg.json)
		json_all(&s, what);
	else
		text_all(&s, what);
	return s.problems[0] ? 1 : 0;
}
