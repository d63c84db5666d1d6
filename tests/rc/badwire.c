// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * badwire: a two-port forwarder that behaves like a bad link for RoCEv2,
 * for the fault tests: this kernel has no netem (CONFIG_NET_SCH_NETEM is
 * off) and AF_XDP transmits around the hosts' qdiscs anyway, so the faults
 * are made on a hop between the hosts instead.
 *
 *   badwire [-l LOSS%] [-d DUP%] [-r REORDER%] [-s SEED] [-a] IF1 IF2
 *
 * Every frame that arrives on one interface leaves on the other (AF_PACKET,
 * both ports in promiscuous mode). RoCEv2 frames (IPv4/IPv6 UDP to 4791)
 * are dropped, sent twice, or held back and released after three later
 * frames of the same direction (or 2 ms), with the given percentages; the
 * rest pass untouched. -a: RC ACKs are spared too. On SIGTERM/SIGINT it
 * prints what it did:
 *
 *   badwire: forwarded N, dropped N, duplicated N, reordered N, errors N
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define FRAME_MAX 65536
#define HOLD_AFTER 3 /* a held frame goes out after this many later ones */
#define HOLD_NS 2000000ULL

struct port {
	int fd;
	const char *name;
	/* the frame held back on its way out of this port */
	uint8_t held[FRAME_MAX];
	ssize_t held_len;
	int held_after;
	uint64_t held_at;
};

static struct port ports[2];
static volatile sig_atomic_t stop;
static int spare_acks;
static unsigned long long n_fwd, n_drop, n_dup, n_reorder, n_err;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static void on_signal(int sig)
{
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* 0..9999, xorshift64* */
static unsigned int roll(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (unsigned int)((rng * 0x2545f4914f6cdd1dULL) >> 33) % 10000;
}

static int open_port(struct port *p, const char *ifname)
{
	struct sockaddr_ll sa = { .sll_family = AF_PACKET,
				  .sll_protocol = htons(ETH_P_ALL) };
	struct packet_mreq mr = { .mr_type = PACKET_MR_PROMISC };
	int one = 1, buf = 8 << 20;

	p->name = ifname;
	sa.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sa.sll_ifindex) {
		fprintf(stderr, "badwire: no interface %s\n", ifname);
		return -1;
	}
	mr.mr_ifindex = sa.sll_ifindex;
	p->fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (p->fd < 0 || bind(p->fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    setsockopt(p->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr,
		       sizeof(mr)) ||
	    setsockopt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
		       sizeof(one)) ||
	    setsockopt(p->fd, SOL_PACKET, PACKET_AUXDATA, &one, sizeof(one))) {
		fprintf(stderr, "badwire: %s: %s\n", ifname, strerror(errno));
		return -1;
	}
	setsockopt(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf));
	setsockopt(p->fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf));
	return 0;
}

/* IPv4 or IPv6 (optionally VLAN-tagged) UDP to the RoCEv2 port */
/* The offset of the BTH of a RoCEv2 frame, 0 if f is something else */
static size_t roce_bth(const uint8_t *f, ssize_t len)
{
	size_t off = 12;
	uint16_t type;

	if (len < 14)
		return 0;
	type = (uint16_t)(f[off] << 8 | f[off + 1]);
	if (type == 0x8100 && len >= 18) {
		off += 4;
		type = (uint16_t)(f[off] << 8 | f[off + 1]);
	}
	off += 2;
	if (type == 0x0800 && len >= (ssize_t)off + 28) {
		size_t ihl = (size_t)(f[off] & 0xf) * 4;

		if (f[off + 9] == 17 && len > (ssize_t)(off + ihl + 8) &&
		    (f[off + ihl + 2] << 8 | f[off + ihl + 3]) == 4791)
			return off + ihl + 8;
		return 0;
	}
	if (type == 0x86dd && len > (ssize_t)off + 48 && f[off + 6] == 17 &&
	    (f[off + 42] << 8 | f[off + 43]) == 4791)
		return off + 48;
	return 0;
}

static uint32_t sum16(const uint8_t *p, size_t len, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (uint32_t)(p[len - 1] << 8);
	return sum;
}

/*
 * A frame a local stack sent with checksum offload (veth) still has a
 * partial TCP/UDP checksum (TP_STATUS_CSUMNOTREADY): put the whole one in
 * before it leaves on a real wire. IPv4 only: the tests run IPv4.
 */
static void fix_csum(uint8_t *f, ssize_t len)
{
	size_t ihl, l4, csum_at;
	uint32_t sum;
	uint16_t l4len;

	if (len < 34 || f[12] != 0x08 || f[13] != 0x00)
		return;
	ihl = (size_t)(f[14] & 0xf) * 4;
	l4 = 14 + ihl;
	l4len = (uint16_t)((f[16] << 8 | f[17]) - ihl);
	if ((ssize_t)(l4 + l4len) > len)
		return;
	if (f[23] == 6 && l4len >= 20)
		csum_at = l4 + 16;
	else if (f[23] == 17 && l4len >= 8)
		csum_at = l4 + 6;
	else
		return;
	f[csum_at] = f[csum_at + 1] = 0;
	sum = sum16(f + 26, 8, 0); /* pseudo-header: addresses, proto, len */
	sum += f[23];
	sum += l4len;
	sum = sum16(f + l4, l4len, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	if (f[23] == 17 && !sum)
		sum = 0xffff;
	f[csum_at] = (uint8_t)(sum >> 8);
	f[csum_at + 1] = (uint8_t)sum;
}

static void xmit(struct port *out, const uint8_t *f, ssize_t len)
{
	int tries;

	for (tries = 0; tries < 100; tries++) {
		if (send(out->fd, f, (size_t)len, 0) == len) {
			n_fwd++;
			return;
		}
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			break;
		usleep(50);
	}
	n_err++;
}

static void release_held(struct port *out)
{
	if (out->held_len) {
		xmit(out, out->held, out->held_len);
		out->held_len = 0;
	}
}

static void forward(struct port *out, const uint8_t *f, ssize_t len,
		    unsigned int loss, unsigned int dup, unsigned int reorder)
{
	unsigned int r;

	size_t bth = roce_bth(f, len);

	/* -a: an RC ACKNOWLEDGE (opcode 0x11) passes untouched */
	if (!bth || (spare_acks && f[bth] == 0x11)) {
		xmit(out, f, len);
		return;
	}
	r = roll();
	if (r < loss) {
		n_drop++;
		return;
	}
	if (r < loss + dup) {
		n_dup++;
		xmit(out, f, len);
		xmit(out, f, len);
	} else if (r < loss + dup + reorder && !out->held_len) {
		n_reorder++;
		memcpy(out->held, f, (size_t)len);
		out->held_len = len;
		out->held_after = 0;
		out->held_at = now_ns();
		return;
	} else {
		xmit(out, f, len);
	}
	if (out->held_len && ++out->held_after >= HOLD_AFTER)
		release_held(out);
}

/* "1.5" -> 150 (hundredths of a percent) */
static unsigned int pct(const char *s)
{
	return (unsigned int)(strtod(s, NULL) * 100 + 0.5);
}

int main(int argc, char **argv)
{
	static uint8_t frame[FRAME_MAX];
	unsigned int loss = 0, dup = 0, reorder = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	int opt, i;

	while ((opt = getopt(argc, argv, "l:d:r:s:a")) != -1) {
		switch (opt) {
		case 'a':
			spare_acks = 1;
			break;
		case 'l':
			loss = pct(optarg);
			break;
		case 'd':
			dup = pct(optarg);
			break;
		case 'r':
			reorder = pct(optarg);
			break;
		case 's':
			rng ^= strtoull(optarg, NULL, 0) *
			       0xbf58476d1ce4e5b9ULL;
			if (!rng)
				rng = 1;
			break;
		default:
			goto usage;
		}
	}
	if (optind + 2 != argc || loss + dup + reorder > 10000)
		goto usage;
	if (open_port(&ports[0], argv[optind]) ||
	    open_port(&ports[1], argv[optind + 1]))
		return 1;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	printf("badwire: %s <-> %s, loss %.2f%%, duplication %.2f%%, "
	       "reordering %.2f%%\n",
	       ports[0].name, ports[1].name, loss / 100.0, dup / 100.0,
	       reorder / 100.0);
	fflush(stdout);
	while (!stop) {
		struct pollfd pfd[2] = {
			{ .fd = ports[0].fd, .events = POLLIN },
			{ .fd = ports[1].fd, .events = POLLIN }
		};
		uint64_t now;

		if (poll(pfd, 2, 1) < 0 && errno != EINTR)
			break;
		for (i = 0; i < 2; i++) {
			int burst;

			if (!(pfd[i].revents & POLLIN))
				continue;
			for (burst = 0; burst < 64; burst++) {
				union {
					struct cmsghdr h;
					char buf[CMSG_SPACE(sizeof(
						struct tpacket_auxdata))];
				} ctl;
				struct iovec iov = { frame, sizeof(frame) };
				struct msghdr mh = { .msg_iov = &iov,
						     .msg_iovlen = 1,
						     .msg_control = &ctl,
						     .msg_controllen =
							     sizeof(ctl) };
				struct cmsghdr *c;
				ssize_t len =
					recvmsg(ports[i].fd, &mh, MSG_DONTWAIT);

				if (len <= 0)
					break;
				for (c = CMSG_FIRSTHDR(&mh); c;
				     c = CMSG_NXTHDR(&mh, c)) {
					struct tpacket_auxdata aux;

					if (c->cmsg_level != SOL_PACKET ||
					    c->cmsg_type != PACKET_AUXDATA)
						continue;
					memcpy(&aux, CMSG_DATA(c), sizeof(aux));
					if (aux.tp_status &
					    TP_STATUS_CSUMNOTREADY)
						fix_csum(frame, len);
				}
				forward(&ports[!i], frame, len, loss, dup,
					reorder);
			}
		}
		now = now_ns();
		for (i = 0; i < 2; i++)
			if (ports[i].held_len &&
			    now - ports[i].held_at > HOLD_NS)
				release_held(&ports[i]);
	}
	for (i = 0; i < 2; i++)
		release_held(&ports[i]);
	printf("badwire: forwarded %llu, dropped %llu, duplicated %llu, "
	       "reordered %llu, errors %llu\n",
	       n_fwd, n_drop, n_dup, n_reorder, n_err);
	return 0;
usage:
	fprintf(stderr,
		"usage: badwire [-l LOSS%%] [-d DUP%%] [-r REORDER%%] [-a] "
		"[-s SEED] IF1 IF2\n");
	return 2;
}
