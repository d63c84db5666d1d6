// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: rxdpd's handling of control messages, as a client's
 * connection delivers them. rxdpd's own code (server.c, qp.c, qp_sm.c,
 * rtnl.c, hca.c ...) runs against one device "fz0" (ifindex 1, GIDs of
 * 10.0.0.1), in a network namespace of its own; its qp_ctx and qp_stats
 * maps are real BPF maps when the process may make them (root), else
 * every map write fails as it would on a vanished device. Objects of a
 * verbs context are out of its reach: a context needs the client's
 * /proc/self/mem with the request, and a device with a data path. Each input is one connection: records of a 16-bit
 * little-endian length and that many bytes, each sent as one message and
 * answered, so sequences (create a QP, walk it through its states, query
 * it, destroy it) are reachable. The connection then closes and the
 * client is released, as when a process exits.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/ctl_client.h"
#include "common/log.h"
#include "daemon/rxdpd.h"

struct rxdpd rxdpd;

int ep_add(int fd, struct ep_tag *tag)
{
	return 0;
}

int ep_mod(int fd, struct ep_tag *tag, __u32 events)
{
	return 0;
}

void ep_del(int fd)
{
}

static struct rxdp_link fz_link;
static struct rxdp_dev dev;
static struct rxdp_addr addr4;
static char sock_path[64];

static int make_map(enum bpf_map_type type, __u32 vsize, __u32 n)
{
	int fd = bpf_map_create(type, NULL, sizeof(__u32), vsize, n, NULL);

	return fd < 0 ? -1 : fd;
}

static char sock_dir[sizeof("/tmp/rxdp-fuzz-ctl.XXXXXX")];

static void cleanup(void)
{
	server_close(); /* unlinks the socket */
	rmdir(sock_dir);
}

static void setup(void)
{
	static const __u8 mac[6] = { 2, 0, 0, 0, 0, 1 };

	/*
	 * A network namespace of its own (with a user namespace if need be):
	 * the neighbour requests rxdpd sends for unknown destinations reach
	 * an empty one, never the host's
	 */
	if (unshare(CLONE_NEWNET) && unshare(CLONE_NEWUSER | CLONE_NEWNET)) {
		perror("fuzz_ctl: unshare");
		abort();
	}
	if (rtnl_open())
		abort();
	/* RXDP_FUZZ_VERBOSE=1: what rxdpd logs, for a reproducer */
	if (getenv("RXDP_FUZZ_VERBOSE"))
		rxdp_log_set_level(RXDP_LOG_DEBUG);
	/* per-CPU map values come in this many: as rxdpd counts them */
	rxdpd.ncpus = libbpf_num_possible_cpus();
	if (rxdpd.ncpus < 1)
		abort();
	rxdpd.mtu_cap = 4096;
	rxdpd.epfd = -1;
	fz_link.ifindex = 1;
	snprintf(fz_link.ifname, sizeof(fz_link.ifname), "fz0");
	memcpy(fz_link.mac, mac, 6);
	fz_link.flags = 0x1 | 0x40; /* IFF_UP | IFF_RUNNING */
	fz_link.mtu = 1500;
	fz_link.num_rx_queues = 1;
	/* GID 0 link-local, GID 1 ::ffff:10.0.0.1 */
	fz_link.gids[0][0] = 0xfe;
	fz_link.gids[0][1] = 0x80;
	fz_link.gids[0][15] = 1;
	fz_link.gid_used[0] = true;
	fz_link.gids[1][10] = fz_link.gids[1][11] = 0xff;
	fz_link.gids[1][12] = 10;
	fz_link.gids[1][15] = 1;
	fz_link.gid_used[1] = true;
	addr4.family = 2; /* AF_INET */
	addr4.prefixlen = 24;
	addr4.ip[0] = 10;
	addr4.ip[3] = 1;
	addr4.gid_index = 1;
	fz_link.addrs = &addr4;
	dev.maps.qp_ctx = make_map(BPF_MAP_TYPE_HASH,
				   sizeof(struct rxdp_qp_ctx), RXDP_MAX_QP);
	dev.maps.qp_stats = make_map(BPF_MAP_TYPE_PERCPU_ARRAY,
				     sizeof(struct rxdp_qp_stats), RXDP_MAX_QP);
	dev.maps.stats =
		make_map(BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u64), RXDP_V_MAX);
	dev.maps.qp_psn = dev.maps.xsks = -1;
	dev.maps.psn = calloc(RXDP_MAX_QP, sizeof(*dev.maps.psn));
	fz_link.dev = &dev;
	rxdpd.links = &fz_link;
	strcpy(sock_dir, "/tmp/rxdp-fuzz-ctl.XXXXXX");
	if (!dev.maps.psn || !mkdtemp(sock_dir))
		abort();
	snprintf(sock_path, sizeof(sock_path), "%s/s", sock_dir);
	if (server_open(sock_path))
		abort();
	atexit(cleanup);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static __u64 rbuf[RXDP_CTL_MSG_MAX / 8];
	static int ready;
	struct rxdp_client *c;
	struct rxdp_ctl *cl;
	int fd, n = 0;

	if (!ready) {
		setup();
		ready = 1;
	}
	/* QPNs as a fresh daemon hands them out: the inputs can name them */
	dev.qp_next = 0;
	memset(dev.qp_gen, 0, sizeof(dev.qp_gen));
	cl = rxdp_ctl_connect(sock_path);
	if (!cl)
		abort();
	fd = rxdp_ctl_fd(cl);
	server_accept();
	c = rxdpd.clients;
	if (!c)
		abort();
	while (size >= 2 && n++ < 16) {
		size_t len = data[0] | (size_t)data[1] << 8;

		data += 2;
		size -= 2;
		if (len > size)
			len = size;
		/* a parked request stops the reading: never block on that */
		if (send(fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			break;
		data += len;
		size -= len;
		client_event(c, EPOLLIN);
		if (c->dead)
			break;
		while (recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT) > 0)
			;
	}
	rxdp_ctl_close(cl);
	client_release(c);
	clients_reap();
	return 0;
}
