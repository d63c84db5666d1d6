// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-ctl: what rxdpd knows, for people.
 *
 *   rxdp-ctl [--socket PATH] [devices|gids|qps|cm|stats|all]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "common/ctl.h"
#include "common/ctl_client.h"
#include "common/ctl_cm.h"
#include "rxdp/maps.h"

#define MAX_DEVS 64
#define MAX_QPS 16384

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

static void gid_str(const __u8 *gid, char *buf, size_t len)
{
	static const __u8 v4[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	char ip[INET6_ADDRSTRLEN] = "";

	inet_ntop(AF_INET6, gid, ip, sizeof(ip));
	if (!memcmp(gid, v4, 12)) {
		char ip4[INET_ADDRSTRLEN];

		inet_ntop(AF_INET, gid + 12, ip4, sizeof(ip4));
		snprintf(buf, len, "%-40s (IPv4 %s)", ip, ip4);
	} else {
		snprintf(buf, len, "%s", ip);
	}
}

static int show_devices(struct rxdp_ctl *c, struct rxdp_dev_info *d, int n)
{
	int i;

	printf("DEVICES (%d)\n", n);
	for (i = 0; i < n; i++) {
		const __u8 *g = (const __u8 *)&d[i].node_guid;

		printf("  %-20s if %s (ifindex %u) mac "
		       "%02x:%02x:%02x:%02x:%02x:%02x\n",
		       d[i].name, d[i].ifname, d[i].ifindex, d[i].mac[0],
		       d[i].mac[1], d[i].mac[2], d[i].mac[3], d[i].mac[4],
		       d[i].mac[5]);
		printf("    port 1: %s  active_mtu %u  max_mtu %u (if mtu %u)  "
		       "speed %u Mb/s\n",
		       port_state(d[i].port_state), 128U << d[i].active_mtu,
		       128U << d[i].max_mtu, d[i].if_mtu, d[i].speed_mbps);
		printf("    node_guid %02x%02x:%02x%02x:%02x%02x:%02x%02x  rx "
		       "queues %u  gid_tbl_len %u  max_qp %u\n",
		       g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7],
		       d[i].num_rx_queues, d[i].gid_tbl_len, d[i].max_qp);
	}
	(void)c;
	return 0;
}

static int show_gids(struct rxdp_ctl *c, struct rxdp_dev_info *d, int n)
{
	int i;
	__u32 k;

	for (i = 0; i < n; i++) {
		printf("GIDS of %s\n", d[i].name);
		for (k = 0; k < d[i].gid_tbl_len; k++) {
			struct rxdp_gid_entry g;
			static const __u8 zero[16];
			char s[128];
			int ret = rxdp_ctl_query_gid(c, d[i].ifindex, k, &g);

			if (ret) {
				fprintf(stderr, "rxdp-ctl: query_gid %u: %s\n",
					k, rxdp_ctl_strerror(c));
				return ret;
			}
			if (!memcmp(g.gid, zero, 16))
				continue;
			gid_str(g.gid, s, sizeof(s));
			printf("  %3u  %s  RoCEv2\n", k, s);
		}
	}
	return 0;
}

static int show_qps(struct rxdp_ctl *c, struct rxdp_dev_info *d, int nd)
{
	struct rxdp_qp_info *qi = calloc(MAX_QPS, sizeof(*qi));
	struct rxdp_ctl_qp_stats *st = calloc(MAX_QPS, sizeof(*st));
	int n, i, j;

	if (!qi || !st) {
		free(qi);
		free(st);
		return -ENOMEM;
	}
	n = rxdp_ctl_list_qps_stats(c, 0, qi, st, MAX_QPS);
	if (n < 0) {
		fprintf(stderr, "rxdp-ctl: list_qps: %s\n",
			rxdp_ctl_strerror(c));
		free(qi);
		free(st);
		return n;
	}
	printf("QPS (%d)\n", n);
	if (n)
		printf("  %-14s %-8s %-4s %-5s %7s %8s %5s %8s %8s %8s %10s "
		       "%10s %8s\n",
		       "device", "qpn", "type", "state", "pid", "dest_qp",
		       "mtu", "epsn", "una_psn", "next_psn", "rx_pkts",
		       "rx_bytes", "rx_drops");
	for (i = 0; i < n; i++) {
		const char *dev = "?";

		for (j = 0; j < nd; j++)
			if (d[j].ifindex == st[i].ifindex)
				dev = d[j].name;
		/* PSNs as the engine keeps them now (qp_psn), not as set */
		printf("  %-14s %#8x %-4s %-5s %7u %#8x %5u %#8x %#8x %#8x "
		       "%10llu %10llu %8llu\n",
		       dev, qi[i].qpn, qp_type(qi[i].qp_type),
		       qp_state(qi[i].attr.qp_state), qi[i].owner_pid,
		       qi[i].attr.dest_qp_num,
		       qi[i].attr.path_mtu ? 128U << qi[i].attr.path_mtu : 0,
		       st[i].epsn, st[i].una_psn, st[i].next_psn,
		       (unsigned long long)st[i].rx_packets,
		       (unsigned long long)st[i].rx_bytes,
		       (unsigned long long)st[i].rx_drops);
	}
	free(qi);
	free(st);
	return 0;
}

static int show_stats(struct rxdp_ctl *c, struct rxdp_dev_info *d, int n)
{
	__u64 v[RXDP_CTL_MAX_COUNTERS];
	int i, k, cnt;

	for (i = 0; i < n; i++) {
		cnt = rxdp_ctl_query_stats(c, d[i].ifindex, v,
					   RXDP_CTL_MAX_COUNTERS);
		if (cnt < 0) {
			fprintf(stderr, "rxdp-ctl: stats of %s: %s\n",
				d[i].name, rxdp_ctl_strerror(c));
			return cnt;
		}
		printf("XDP VERDICTS of %s\n", d[i].name);
		for (k = 0; k < cnt && k < RXDP_V_MAX; k++)
			printf("  %-22s %llu\n", rxdp_verdict_names[k],
			       (unsigned long long)v[k]);
	}
	return 0;
}

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

/* The connection manager's ids: listeners and connections */
static int show_cm(struct rxdp_ctl *c, struct rxdp_dev_info *d, int nd)
{
	struct rxdp_ctl_cm cm = { .op = RXDP_CM_NEXT };
	int ret;

	printf("CM IDS\n  %-8s %7s %-3s %-14s %-14s %-24s %-24s\n", "id", "pid",
	       "ps", "state", "device", "local", "remote");
	while (!(ret = rxdp_ctl_cm(c, &cm, NULL))) {
		char l[64], r[64];
		const char *dev = "*";

		for (int j = 0; j < nd; j++)
			if (d[j].ifindex == cm.info.ifindex)
				dev = d[j].name;
		cm.private_data[sizeof(cm.private_data) - 1] = 0;
		printf("  %-8u %7llu %-3s %-14s %-14s %-24s %-24s\n", cm.id,
		       (unsigned long long)cm.value, port_space(cm.ps),
		       (char *)cm.private_data, dev,
		       cm_addr(&cm.info.src, l, sizeof(l)),
		       cm_addr(&cm.info.dst, r, sizeof(r)));
		cm.op = RXDP_CM_NEXT;
	}
	if (ret != -ENOENT) {
		fprintf(stderr, "rxdp-ctl: cm: %s\n", rxdp_ctl_strerror(c));
		return ret;
	}
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: rxdp-ctl [--socket PATH] "
		   "[devices|gids|qps|cm|stats|all]\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	struct rxdp_dev_info devs[MAX_DEVS];
	const char *path = NULL, *what = "all";
	struct rxdp_ctl *c;
	int opt, n, ret = 0, all;

	while ((opt = getopt_long(argc, argv, "s:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		what = argv[optind++];
	if (optind != argc ||
	    (strcmp(what, "devices") && strcmp(what, "gids") &&
	     strcmp(what, "qps") && strcmp(what, "cm") &&
	     strcmp(what, "stats") && strcmp(what, "all"))) {
		usage(stderr);
		return 2;
	}
	all = !strcmp(what, "all");
	c = rxdp_ctl_connect(path);
	if (!c) {
		fprintf(stderr,
			"rxdp-ctl: cannot reach rxdpd (%s): is it running in "
			"this network namespace?\n",
			strerror(errno));
		return 1;
	}
	n = rxdp_ctl_list_devices(c, devs, MAX_DEVS);
	if (n < 0) {
		fprintf(stderr, "rxdp-ctl: %s\n", rxdp_ctl_strerror(c));
		rxdp_ctl_close(c);
		return 1;
	}
	if (all || !strcmp(what, "devices"))
		ret = ret ?: show_devices(c, devs, n);
	if (all || !strcmp(what, "gids"))
		ret = ret ?: show_gids(c, devs, n);
	if (all || !strcmp(what, "qps"))
		ret = ret ?: show_qps(c, devs, n);
	if (all || !strcmp(what, "cm"))
		ret = ret ?: show_cm(c, devs, n);
	if (all || !strcmp(what, "stats"))
		ret = ret ?: show_stats(c, devs, n);
	rxdp_ctl_close(c);
	return ret ? 1 : 0;
}
