// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-xskraw: the physical limit of rxdp's data path, with no transport
 * logic at all. One copy-mode AF_XDP socket on one queue of an interface,
 * its own XDP program (xskraw.bpf.c) steering one UDP port to it, busy
 * polling, batched TX. Four roles:
 *
 *   --pingpong-server              echo every frame back
 *   --pingpong-client --count N    N round trips of one small frame
 *   --stream-sink [--copy] [--crc] count what arrives (and copy each
 *                                  frame's payload out, into a 1 MiB
 *                                  buffer in turn, as a receiver that
 *                                  delivers the data must)
 *   --stream-source [--copy] [--crc]
 *                                  send frames as fast as possible (each
 *                                  payload copied in from a 1 MiB buffer
 *                                  in turn, as a sender of data must)
 *
 * --crc: the work a RoCE packet's ICRC costs at each end. The source puts
 * the CRC-32 of each frame from its IP header on (rxdp's ICRC code, the
 * same polynomial) into the frame's last 4 bytes, in the pass that copies
 * the payload in; the sink checks it before it copies the payload out, as
 * rxdp's receiver checks the ICRC before the payload reaches memory, and
 * counts the frames whose CRC is wrong. With --copy and --crc at both ends
 * the stream does the per-byte work of any transport that checks and moves
 * its data over these sockets: rxdp's work without its transport logic.
 *
 * Each role prints one line of key=value figures. Frames larger than one
 * 4096-byte UMEM frame (jumbo MTU) go as multi-buffer AF_XDP (XDP_USE_SG).
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/xsk.h>

#include "engine/crc32.h"
#include "xskraw.skel.h"

#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)
#endif

#define FRAME 4096u
#define NFRAMES 8192u
#define RING 2048u
#define NRX RING /* frames for the fill ring; the rest are TX buffers */
#define TX_BUF (2 * FRAME) /* a TX buffer: two frames, for jumbo frames */
#define NTX ((NFRAMES - NRX) * FRAME / TX_BUF)
#define BATCH 64

enum role {
	NONE,
	PP_SERVER,
	PP_CLIENT,
	SINK,
	SOURCE
};

static struct {
	enum role role;
	const char *ifname;
	uint32_t queue, count, size;
	double seconds;
	bool skb_mode, copy, crc;
	uint16_t port;
	uint8_t src_mac[6], dst_mac[6];
	bool have_dst_mac;
	struct in_addr src_ip, dst_ip;
} o = { .queue = 0, .count = 10000, .size = 2, .seconds = 3, .port = 4792 };

static volatile sig_atomic_t stop;
static struct xskraw_bpf *skel;
static int ifindex;
static uint32_t xdp_flags;

struct sock {
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod fill, tx;
	struct xsk_ring_cons comp, rx;
	uint8_t *area;
	uint64_t free[NTX];
	uint32_t nfree, kick_pending;
};

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void cleanup(void);

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "rxdp-xskraw: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cleanup(void)
{
	if (skel && ifindex) {
		bpf_xdp_detach(ifindex, xdp_flags, NULL);
		ifindex = 0;
	}
	xskraw_bpf__destroy(skel);
	skel = NULL;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: rxdp-xskraw --iface IF [--queue Q] [--mode native|skb] "
		"[--port UDP]\n"
		"         (--pingpong-server | --stream-sink [--seconds S] "
		"[--copy] [--crc] |\n"
		"          --pingpong-client [--count N] [--size B] PEER |\n"
		"          --stream-source [--seconds S] [--size B] [--copy] "
		"[--crc] PEER)\n"
		"  PEER: --src-ip A --dst-ip B --dst-mac MAC\n");
	exit(2);
}

static void parse_mac(const char *s, uint8_t *mac)
{
	if (sscanf(s, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		   &mac[2], &mac[3], &mac[4], &mac[5]) != 6) {
		fprintf(stderr, "rxdp-xskraw: bad MAC address '%s'\n", s);
		exit(2);
	}
}

static void parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "iface", 1, NULL, 'i' },
		{ "queue", 1, NULL, 'q' },
		{ "mode", 1, NULL, 'm' },
		{ "port", 1, NULL, 'p' },
		{ "count", 1, NULL, 'n' },
		{ "size", 1, NULL, 's' },
		{ "seconds", 1, NULL, 't' },
		{ "src-ip", 1, NULL, 'S' },
		{ "dst-ip", 1, NULL, 'D' },
		{ "dst-mac", 1, NULL, 'M' },
		{ "pingpong-server", 0, NULL, 1 },
		{ "pingpong-client", 0, NULL, 2 },
		{ "stream-sink", 0, NULL, 3 },
		{ "stream-source", 0, NULL, 4 },
		{ "copy", 0, NULL, 'c' },
		{ "crc", 0, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'i':
			o.ifname = optarg;
			break;
		case 'q':
			o.queue = strtoul(optarg, NULL, 0);
			break;
		case 'm':
			if (strcmp(optarg, "skb") && strcmp(optarg, "native")) {
				fprintf(stderr,
					"rxdp-xskraw: --mode native or skb\n");
				exit(2);
			}
			o.skb_mode = !strcmp(optarg, "skb");
			break;
		case 'p':
			o.port = strtoul(optarg, NULL, 0);
			break;
		case 'n':
			o.count = strtoul(optarg, NULL, 0);
			break;
		case 's':
			o.size = strtoul(optarg, NULL, 0);
			break;
		case 't':
			o.seconds = strtod(optarg, NULL);
			break;
		case 'S':
		case 'D':
			if (!inet_pton(AF_INET, optarg,
				       c == 'S' ? &o.src_ip : &o.dst_ip)) {
				fprintf(stderr,
					"rxdp-xskraw: bad IPv4 address '%s'\n",
					optarg);
				exit(2);
			}
			break;
		case 'c':
			o.copy = true;
			break;
		case 'C':
			o.crc = true;
			break;
		case 'M':
			parse_mac(optarg, o.dst_mac);
			o.have_dst_mac = true;
			break;
		case 1:
		case 2:
		case 3:
		case 4:
			o.role = c;
			break;
		default:
			usage();
		}
	}
	if (!o.ifname || o.role == NONE || optind != argc)
		usage();
	if ((o.role == PP_CLIENT || o.role == SOURCE) &&
	    (!o.have_dst_mac || !o.src_ip.s_addr || !o.dst_ip.s_addr)) {
		fprintf(stderr,
			"rxdp-xskraw: a sender needs --src-ip, --dst-ip "
			"and --dst-mac\n");
		exit(2);
	}
	if (o.crc && o.role == SOURCE && o.size < 4) {
		fprintf(stderr, "rxdp-xskraw: --crc needs --size 4 or more\n");
		exit(2);
	}
	if (o.size > TX_BUF - 42) {
		fprintf(stderr, "rxdp-xskraw: --size at most %u\n",
			TX_BUF - 42);
		exit(2);
	}
	if (!o.count || o.seconds <= 0) {
		fprintf(stderr,
			"rxdp-xskraw: --count and --seconds must be > 0\n");
		exit(2);
	}
}

/* --- the socket ------------------------------------------------------------ */

static void sock_open(struct sock *s)
{
	struct xsk_umem_config ucfg = { .fill_size = RING,
					.comp_size = RING,
					.frame_size = FRAME };
	struct xsk_socket_config cfg = {
		.rx_size = RING,
		.tx_size = RING,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_COPY | XDP_USE_NEED_WAKEUP | XDP_USE_SG,
	};
	uint32_t idx;
	int err, fd;

	s->area = mmap(NULL, (size_t)NFRAMES * FRAME, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (s->area == MAP_FAILED)
		die("cannot map the UMEM: %s", strerror(errno));
	err = xsk_umem__create(&s->umem, s->area, (uint64_t)NFRAMES * FRAME,
			       &s->fill, &s->comp, &ucfg);
	if (err)
		die("xsk_umem__create: %s", strerror(-err));
	err = xsk_socket__create(&s->xsk, o.ifname, o.queue, s->umem, &s->rx,
				 &s->tx, &cfg);
	if (err)
		die("AF_XDP socket on %s queue %u: %s", o.ifname, o.queue,
		    strerror(-err));
	fd = xsk_socket__fd(s->xsk);
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.xsks), &o.queue, &fd, 0))
		die("cannot put the socket in the XSK map: %s",
		    strerror(errno));
	if (xsk_ring_prod__reserve(&s->fill, NRX, &idx) != NRX)
		die("cannot fill the fill ring");
	for (uint32_t k = 0; k < NRX; k++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + k) =
			(uint64_t)k * FRAME;
	xsk_ring_prod__submit(&s->fill, NRX);
	for (uint32_t k = 0; k < NTX; k++)
		s->free[k] = (uint64_t)NRX * FRAME + (uint64_t)k * TX_BUF;
	s->nfree = NTX;
}

static void reap(struct sock *s)
{
	uint32_t idx, n = xsk_ring_cons__peek(&s->comp, RING, &idx);

	for (uint32_t k = 0; k < n; k++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&s->comp, idx + k);

		if ((a - (uint64_t)NRX * FRAME) % TX_BUF == 0)
			s->free[s->nfree++] = a;
	}
	xsk_ring_cons__release(&s->comp, n);
}

static void kick(struct sock *s)
{
	/* copy mode sends in sendto(), a few dozen descriptors at a time */
	if (sendto(xsk_socket__fd(s->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) <
		    0 &&
	    errno != EAGAIN && errno != EBUSY && errno != ENOBUFS &&
	    errno != ENETDOWN)
		die("sendto: %s", strerror(errno));
}

/* Queue the frame of len bytes in TX buffer addr (one or two descriptors) */
static bool put(struct sock *s, uint64_t addr, uint32_t len)
{
	uint32_t n = len > FRAME ? 2 : 1, idx;

	if (xsk_ring_prod__reserve(&s->tx, n, &idx) != n)
		return false;
	for (uint32_t k = 0; k < n; k++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&s->tx, idx + k);

		d->addr = addr + k * FRAME;
		d->len = k + 1 < n ? FRAME : len - k * FRAME;
		d->options = k + 1 < n ? XDP_PKT_CONTD : 0;
	}
	xsk_ring_prod__submit(&s->tx, n);
	return true;
}

static void refill(struct sock *s, const uint64_t *addr, uint32_t n)
{
	uint32_t idx;

	while (xsk_ring_prod__reserve(&s->fill, n, &idx) != n)
		; /* the kernel publishes its consumer late: it comes */
	for (uint32_t k = 0; k < n; k++)
		*xsk_ring_prod__fill_addr(&s->fill, idx + k) =
			addr[k] & ~(uint64_t)(FRAME - 1);
	xsk_ring_prod__submit(&s->fill, n);
	if (xsk_ring_prod__needs_wakeup(&s->fill))
		recvfrom(xsk_socket__fd(s->xsk), NULL, 0, MSG_DONTWAIT, NULL,
			 NULL);
}

/* --- frames ------------------------------------------------------------------ */

static uint16_t ip_csum(const void *hdr)
{
	const uint16_t *w = hdr;
	uint32_t sum = 0;

	for (int i = 0; i < 10; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return ~sum;
}

/* An Ethernet/IPv4/UDP frame with size bytes of payload; its length */
static uint32_t build(uint8_t *f, uint32_t size)
{
	struct ethhdr *eth = (void *)f;
	struct iphdr *ip = (void *)(eth + 1);
	struct udphdr *udp = (void *)(ip + 1);
	uint32_t len = sizeof(*eth) + sizeof(*ip) + sizeof(*udp) + size;

	memcpy(eth->h_dest, o.dst_mac, 6);
	memcpy(eth->h_source, o.src_mac, 6);
	eth->h_proto = htons(ETH_P_IP);
	memset(ip, 0, sizeof(*ip));
	ip->version = 4;
	ip->ihl = 5;
	ip->tot_len = htons(sizeof(*ip) + sizeof(*udp) + size);
	ip->frag_off = htons(0x4000);
	ip->ttl = 64;
	ip->protocol = IPPROTO_UDP;
	ip->saddr = o.src_ip.s_addr;
	ip->daddr = o.dst_ip.s_addr;
	ip->check = ip_csum(ip);
	udp->source = udp->dest = htons(o.port);
	udp->len = htons(sizeof(*udp) + size);
	udp->check = 0;
	for (uint32_t i = 0; i < size; i++)
		((uint8_t *)(udp + 1))[i] = (uint8_t)i;
	return len < 60 ? 60 : len;
}

/* --- roles ----------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void pingpong_client(struct sock *s)
{
	const uint32_t warm = 1000;
	double *rtt = calloc(o.count, sizeof(*rtt));
	uint64_t buf;
	uint32_t len;

	if (!rtt)
		die("out of memory");
	buf = s->free[--s->nfree];
	len = build(s->area + buf, o.size);
	for (uint32_t i = 0; i < warm + o.count && !stop; i++) {
		double t0 = now_s(), deadline = t0 + 1;
		uint32_t idx, n = 0;
		uint64_t addr;

		while (!put(s, buf, len))
			reap(s);
		kick(s);
		while (!stop && !(n = xsk_ring_cons__peek(&s->rx, 1, &idx)))
			if (now_s() > deadline)
				die("no echo for 1 s (round trip %u)", i);
		if (!n)
			break;
		if (i >= warm)
			rtt[i - warm] = (now_s() - t0) * 1e6;
		addr = xsk_ring_cons__rx_desc(&s->rx, idx)->addr;
		xsk_ring_cons__release(&s->rx, 1);
		refill(s, &addr, 1);
		/* the echo means our frame went out: drain the completions
		 * (only buf was ever sent; the pool is not used here) */
		reap(s);
		s->nfree = 0;
	}
	if (stop)
		die("interrupted");
	qsort(rtt, o.count, sizeof(*rtt), cmp_double);
	printf("pingpong size=%u count=%u rtt_median_us=%.2f rtt_p99_us=%.2f "
	       "rtt_p999_us=%.2f half_rtt_median_us=%.2f\n",
	       o.size, o.count, rtt[o.count / 2], rtt[o.count * 99 / 100],
	       rtt[o.count * 999 / 1000], rtt[o.count / 2] / 2);
	free(rtt);
}

static void pingpong_server(struct sock *s)
{
	double last = 0, start = now_s();
	uint64_t echoed = 0;

	while (!stop) {
		uint32_t idx, n = xsk_ring_cons__peek(&s->rx, BATCH, &idx);
		uint64_t addrs[BATCH];
		double t = now_s();

		if (!n) {
			/* done: 2 s of silence after the client, or 60 s of none */
			if ((last && t - last > 2) || (!last && t - start > 60))
				break;
			continue;
		}
		last = t;
		reap(s);
		for (uint32_t k = 0; k < n; k++) {
			const struct xdp_desc *d =
				xsk_ring_cons__rx_desc(&s->rx, idx + k);
			uint8_t *in = xsk_umem__get_data(s->area, d->addr),
				*out;
			struct ethhdr *eth;
			struct iphdr *ip;
			struct udphdr *udp;
			uint32_t a;
			uint16_t p;

			addrs[k] = d->addr;
			if ((d->options & XDP_PKT_CONTD) || !s->nfree ||
			    d->len < 42)
				continue; /* ping-pong frames are small */
			out = s->area + s->free[--s->nfree];
			memcpy(out, in, d->len);
			eth = (void *)out;
			ip = (void *)(eth + 1);
			udp = (void *)(ip + 1);
			memcpy(eth->h_dest, eth->h_source, 6);
			memcpy(eth->h_source, o.src_mac, 6);
			a = ip->saddr, ip->saddr = ip->daddr, ip->daddr = a;
			p = udp->source, udp->source = udp->dest, udp->dest = p;
			if (!put(s, out - s->area, d->len))
				s->free[s->nfree++] = out - s->area;
			else
				echoed++;
		}
		xsk_ring_cons__release(&s->rx, n);
		refill(s, addrs, n);
		kick(s);
	}
	printf("pingpong-server echoed=%llu\n", (unsigned long long)echoed);
}

/* --copy: where the payloads come from or go, in turn (a 1 MiB buffer) */
#define APP_BUF (1u << 20)

static uint8_t *app_buf(void)
{
	uint8_t *buf = o.copy ? malloc(APP_BUF) : NULL;

	if (o.copy && !buf)
		die("no memory");
	if (buf)
		memset(buf, 0x5a, APP_BUF);
	return buf;
}

/* The Ethernet header is not covered, as the ICRC does not cover it */
#define CRC_FROM sizeof(struct ethhdr)

/*
 * A source's work on the frame of len bytes at f before it goes: the
 * payload copied in from app at *at, the CRC into the last 4 bytes
 */
static void source_frame(uint8_t *f, uint32_t len, const uint8_t *app,
			 uint32_t *at)
{
	uint32_t hdrs = 42, plen = len - hdrs - (o.crc ? 4 : 0), crc;

	if (app && *at + plen > APP_BUF)
		*at = 0;
	if (!o.crc) {
		memcpy(f + hdrs, app + *at, plen);
	} else {
		crc = rxdp_crc32(0, f + CRC_FROM, hdrs - CRC_FROM);
		crc = app ? rxdp_crc32_copy(crc, f + hdrs, app + *at, plen)
			  : rxdp_crc32(crc, f + hdrs, plen);
		memcpy(f + len - 4, &crc, 4);
	}
	if (app)
		*at += plen;
}

static void stream_source(struct sock *s)
{
	uint32_t len = build(s->area + s->free[0], o.size), at = 0;
	uint8_t *app = app_buf();
	uint64_t sent = 0;
	double t0 = now_s(), t;

	/* every TX buffer holds the same headers (and, alone, payload) */
	for (uint32_t k = 1; k < s->nfree; k++)
		memcpy(s->area + s->free[k], s->area + s->free[0], len);
	while (!stop && (t = now_s()) - t0 < o.seconds) {
		uint32_t n = 0;

		reap(s);
		while (n < BATCH && s->nfree) {
			uint64_t a = s->free[s->nfree - 1];

			if (o.copy || o.crc)
				source_frame(s->area + a, len, app, &at);
			if (!put(s, a, len))
				break;
			s->nfree--;
			n++;
		}
		sent += n;
		kick(s);
	}
	printf("stream-source frames=%llu bytes=%llu seconds=%.3f\n",
	       (unsigned long long)sent, (unsigned long long)sent * len,
	       now_s() - t0);
	free(app);
}

/*
 * --crc at the sink: the CRC of a frame's part p of n bytes, its first
 * unless *mid (the frame's bytes before it), its last if !contd; false for
 * the last part of a frame whose CRC is not what its last 4 bytes say
 */
static bool sink_crc(uint32_t *crc, bool *mid, const uint8_t *p, uint32_t n,
		     bool contd)
{
	uint32_t from = *mid ? 0 : CRC_FROM, to = contd ? n : n - 4, want;

	if (!*mid)
		*crc = 0;
	*mid = contd;
	if (!contd && (n < 4 || n - 4 < from))
		return false;
	if (to > from)
		*crc = rxdp_crc32(*crc, p + from, to - from);
	if (contd)
		return true;
	memcpy(&want, p + n - 4, 4);
	return *crc == want;
}

static void stream_sink(struct sock *s)
{
	uint64_t frames = 0, bytes = 0, bad = 0;
	double start = now_s(), first = 0, last = 0, t;
	uint8_t *buf = app_buf();
	uint32_t at = 0, crc = 0;
	bool mid = false;

	while (!stop) {
		uint32_t idx, n = xsk_ring_cons__peek(&s->rx, BATCH, &idx);
		uint64_t addrs[BATCH];

		t = now_s();
		if (!n) {
			if ((last && t - last > 1) || (!last && t - start > 30))
				break;
			continue;
		}
		if (!first)
			first = t;
		last = t;
		for (uint32_t k = 0; k < n; k++) {
			const struct xdp_desc *d =
				xsk_ring_cons__rx_desc(&s->rx, idx + k);
			const uint8_t *p = xsk_umem__get_data(s->area, d->addr);
			bool contd = d->options & XDP_PKT_CONTD;

			addrs[k] = d->addr;
			bytes += d->len;
			if (o.crc && !sink_crc(&crc, &mid, p, d->len, contd))
				bad++;
			if (buf) {
				if (at + d->len > APP_BUF)
					at = 0;
				memcpy(buf + at, p, d->len);
				at += d->len;
			}
			if (!(d->options & XDP_PKT_CONTD))
				frames++;
		}
		xsk_ring_cons__release(&s->rx, n);
		refill(s, addrs, n);
		if (t - first >= o.seconds)
			break;
	}
	if (!frames || last <= first)
		die("nothing received");
	printf("stream frames=%llu bytes=%llu seconds=%.3f pps=%.0f "
	       "gbits=%.3f",
	       (unsigned long long)frames, (unsigned long long)bytes,
	       last - first, frames / (last - first),
	       bytes * 8 / (last - first) / 1e9);
	if (o.crc)
		printf(" bad_crc=%llu", (unsigned long long)bad);
	putchar('\n');
	free(buf);
}

int main(int argc, char **argv)
{
	struct sock *s;
	struct ifreq ifr = { 0 };
	int fd, err;

	parse_args(argc, argv);
	ifindex = 0;
	int idx = if_nametoindex(o.ifname);
	if (!idx) {
		fprintf(stderr, "rxdp-xskraw: no interface %s\n", o.ifname);
		return 2;
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", o.ifname);
	if (fd < 0 || ioctl(fd, SIOCGIFHWADDR, &ifr))
		die("cannot read the MAC address of %s: %s", o.ifname,
		    strerror(errno));
	close(fd);
	memcpy(o.src_mac, ifr.ifr_hwaddr.sa_data, 6);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	skel = xskraw_bpf__open();
	if (!skel)
		die("cannot open the XDP program: %s", strerror(errno));
	skel->rodata->udp_port = o.port;
	err = xskraw_bpf__load(skel);
	if (err)
		die("cannot load the XDP program: %s", strerror(-err));
	xdp_flags = XDP_FLAGS_UPDATE_IF_NOEXIST |
		    (o.skb_mode ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE);
	err = bpf_xdp_attach(idx, bpf_program__fd(skel->progs.xskraw),
			     xdp_flags, NULL);
	if (err)
		die("cannot attach to %s: %s%s", o.ifname, strerror(-err),
		    err == -EBUSY || err == -EEXIST
			    ? " (another XDP program is attached)"
			    : "");
	ifindex = idx;
	s = calloc(1, sizeof(*s));
	if (!s)
		die("out of memory");
	sock_open(s);
	/* for whoever starts the other end: the socket takes frames now */
	fprintf(stderr, "rxdp-xskraw: ready\n");
	switch (o.role) {
	case PP_SERVER:
		pingpong_server(s);
		break;
	case PP_CLIENT:
		pingpong_client(s);
		break;
	case SINK:
		stream_sink(s);
		break;
	case SOURCE:
		stream_source(s);
		break;
	default:
		break;
	}
	xsk_socket__delete(s->xsk);
	xsk_umem__delete(s->umem);
	cleanup();
	return 0;
}
