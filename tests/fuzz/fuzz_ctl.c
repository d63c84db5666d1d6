// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: what reaches rxdpd's control plane from outside,
 * together: a client's control messages on its connection, CM MADs from
 * the wire, and rtnetlink messages from the kernel. rxdpd's own code
 * (server.c, qp.c, qp_sm.c, rtnl.c, cm.c, cm_mad.c, uverbs.c ...) runs
 * against one device "fz0" (ifindex 1, GIDs of 10.0.0.1), in a network
 * namespace of its own; its qp_ctx and qp_stats maps are real BPF maps
 * when the process may make them (root), else every map write fails as it
 * would on a vanished device. Objects of a verbs context are out of its
 * reach: a context needs the client's /proc/self/mem with the request, and
 * a device with a data path.
 *
 * Each input is one connection: records of a 16-bit little-endian header
 * and that many bytes. A header under 0x4000 is a control message of that
 * length, sent and answered, so sequences (create a QP, walk it through its
 * states, query it, destroy it; make a listener) are reachable; 0x8000 + n
 * is a CM MAD of n bytes that came to QP1 of fz0 from 10.0.0.2 (cm.c), so
 * a REQ meets the listener an earlier record made; 0x4000 + n is a
 * datagram of rtnetlink messages (rtnl.c), which may rename, remove or
 * readdress fz0 under the client. The connection then closes and the
 * client is released, as when a process exits; a resync with the (empty)
 * namespace's kernel takes every link away, fz0 too, which the next input
 * gets anew. The connection manager's channels and ids are numbered from
 * 1 for each input as for a fresh daemon; fz0 has no QP1 (no data path),
 * so nothing reaches the wire.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/ctl_client.h"
#include "common/log.h"
#include "daemon/cm.h"
#include "daemon/rxdpd.h"

static char sock_path[64];
/* fz0's maps, made once; each input's device has duplicates of them */
static int map_qp_ctx = -1, map_qp_stats = -1, map_stats = -1;

static int make_map(enum bpf_map_type type, __u32 vsize, __u32 n)
{
	int fd = bpf_map_create(type, NULL, sizeof(__u32), vsize, n, NULL);

	return fd < 0 ? -1 : fd;
}

static int dup_fd(int fd)
{
	return fd < 0 ? -1 : dup(fd);
}

static char sock_dir[sizeof("/tmp/rxdp-fuzz-ctl.XXXXXX")];

static void cleanup(void)
{
	server_close(); /* unlinks the socket */
	rmdir(sock_dir);
}

/* fz0, as rtnl.c and dev.c would have made it: freed by a resync */
static void fz0_add(void)
{
	static const __u8 mac[6] = { 2, 0, 0, 0, 0, 1 };
	struct rxdp_link *l = calloc(1, sizeof(*l));
	struct rxdp_addr *a = calloc(1, sizeof(*a));
	struct rxdp_dev *d = calloc(1, sizeof(*d));

	if (!l || !a || !d)
		abort();
	l->ifindex = 1;
	snprintf(l->ifname, sizeof(l->ifname), "fz0");
	memcpy(l->mac, mac, 6);
	l->flags = 0x1 | 0x40; /* IFF_UP | IFF_RUNNING */
	l->mtu = 1500;
	l->num_rx_queues = 1;
	l->mark = rxdpd.mark;
	/* GID 0 link-local, GID 1 ::ffff:10.0.0.1 */
	l->gids[0][0] = 0xfe;
	l->gids[0][1] = 0x80;
	l->gids[0][15] = 1;
	l->gid_used[0] = true;
	l->gids[1][10] = l->gids[1][11] = 0xff;
	l->gids[1][12] = 10;
	l->gids[1][15] = 1;
	l->gid_used[1] = true;
	a->family = 2; /* AF_INET */
	a->prefixlen = 24;
	a->ip[0] = 10;
	a->ip[3] = 1;
	a->gid_index = 1;
	a->mark = rxdpd.mark;
	l->addrs = a;
	d->maps.qp_ctx = dup_fd(map_qp_ctx);
	d->maps.qp_stats = dup_fd(map_qp_stats);
	d->maps.stats = dup_fd(map_stats);
	d->maps.qp_psn = d->maps.xsks = d->maps.mcast = -1;
	d->maps.psn_len = RXDP_MAX_QP * sizeof(*d->maps.psn);
	d->maps.psn = mmap(NULL, d->maps.psn_len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->maps.psn == MAP_FAILED)
		abort();
	l->dev = d;
	l->next = rxdpd.links;
	rxdpd.links = l;
}

static void setup(void)
{
	/*
	 * A network namespace of its own (with a user namespace if need be):
	 * the neighbour requests rxdpd sends for unknown destinations reach
	 * an empty one, never the host's, and a resync finds nothing there
	 */
	if (unshare(CLONE_NEWNET) && unshare(CLONE_NEWUSER | CLONE_NEWNET)) {
		perror("fuzz_ctl: unshare");
		abort();
	}
	/* the loop's epoll set is never waited on: fds come and go in it */
	if (loop_open() || rtnl_open() || cm_init())
		abort();
	/* the listeners of the devices' events, as rxdpd's main() adds them */
	dev_init();
	qp_init();
	uverbs_init();
	/* RXDP_FUZZ_VERBOSE=1: what rxdpd logs, for a reproducer */
	if (getenv("RXDP_FUZZ_VERBOSE"))
		rxdp_log_set_level(RXDP_LOG_DEBUG);
	/* per-CPU map values come in this many: as rxdpd counts them */
	rxdpd.ncpus = libbpf_num_possible_cpus();
	if (rxdpd.ncpus < 1)
		abort();
	rxdpd.mtu_cap = 4096;
	map_qp_ctx = make_map(BPF_MAP_TYPE_HASH, sizeof(struct rxdp_qp_ctx),
			      RXDP_MAX_QP);
	map_qp_stats = make_map(BPF_MAP_TYPE_PERCPU_ARRAY,
				sizeof(struct rxdp_qp_stats), RXDP_MAX_QP);
	map_stats =
		make_map(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u64), RXDP_V_MAX);
	strcpy(sock_dir, "/tmp/rxdp-fuzz-ctl.XXXXXX");
	if (!mkdtemp(sock_dir))
		abort();
	snprintf(sock_path, sizeof(sock_path), "%s/s", sock_dir);
	if (server_open(sock_path))
		abort();
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static __u64 rbuf[RXDP_CTL_MSG_MAX / 8];
	/* the peer a MAD comes from: 10.0.0.2's QP1 */
	static const struct gsi_peer peer = {
		.gid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 },
		.local_gid = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 },
		.qpn = 1,
		.hop_limit = 64,
	};
	static int ready;
	struct rxdp_client *c;
	struct rxdp_ctl *cl;
	int fd, n = 0;

	if (!ready) {
		setup();
		ready = 1;
	}
	/* a fresh fz0: its QPNs as a fresh daemon hands them out */
	fz0_add();
	/* and CM channels and ids from 1 */
	cm_fini();
	if (cm_init())
		abort();
	cl = rxdp_ctl_connect(sock_path);
	if (!cl)
		abort();
	fd = rxdp_ctl_fd(cl);
	server_accept();
	c = rxdpd.clients;
	if (!c)
		abort();
	while (size >= 2 && n++ < 16) {
		size_t hdr = data[0] | (size_t)data[1] << 8, len = hdr;

		if (hdr & 0xc000)
			len &= 0x3fff;
		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		if (hdr & 0x8000) {
			cm_mad_recv(1, &peer, data, len);
		} else if (hdr & 0x4000) {
			/* as a socket's buffer is: aligned */
			static __u64 nl[RXDP_CTL_MSG_MAX / 8 + 0x4000 / 8];

			memcpy(nl, data, len);
			rtnl_feed(nl, len);
		} else {
			/* a parked request stops the reading: never block */
			if (send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT) <
			    0)
				break;
			client_event(c, EPOLLIN);
		}
		data += len;
		size -= len;
		if (c->dead)
			break;
		while (recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT) > 0)
			;
	}
	rxdp_ctl_close(cl);
	client_release(c);
	clients_reap();
	/* what the kernel of this namespace has: no link of ours, no fz0 */
	rtnl_resync();
	return 0;
}
