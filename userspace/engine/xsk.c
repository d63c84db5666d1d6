// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The AF_XDP port: the UMEM and the rings of the sockets bound on it (made
 * here by rxdp_xsk_port_open(), or bound elsewhere and handed to
 * rxdp_xsk_port_create()), mapped from the socket fds (XDP_MMAP_OFFSETS)
 * and driven with libxdp's inline ring helpers.
 *
 * Frames: the UMEM is cut into equal shares, one per queue's socket; half
 * of a share is posted to that socket's fill ring (RX), the other half is
 * the socket's TX pool. (A socket that shares another's fill ring on its
 * queue, struct xsk_fq below, has a smaller share, all of it TX, taken
 * from its queue's.) RX frames go back to the fill ring they came from
 * once the engine has processed them; TX frames come back through the
 * completion ring. TX is batched: descriptors are queued by tx_put() and
 * one sendto() kick per flush tells the kernel (always needed in copy
 * mode; in zero-copy mode only when the ring asks for a wake-up).
 *
 * RX stock: not all of a socket's RX frames go round at first. The fill
 * ring is a FIFO, so every frame in circulation is written once per round
 * and the stock is the receive path's working set in the caches: 8192
 * frames (32 MiB) in place of 2048 cost two hosts' 64 KiB ib_write_bw and
 * ib_read_bw at MTU 9000 7-11% on the 2-core VM. But the frames in
 * circulation are also how far the engine may fall behind before the
 * kernel drops (out_of_buffer), and on a loaded host its thread waits for
 * a CPU: in the bench's incast rig (17 rxdpds on the 2-core VM) the
 * receiver's thread waited 84% of the time, and 2048 frames overran on
 * 51 000-98 000 of ~330 000 a run. So a socket starts with
 * XSK_RX_STOCK frames in circulation and, when a burst finds
 * XSK_RX_GROW_PERMILLE of them waiting (the kernel about to run dry),
 * doubles them from the rest of its share (up to the ring's size), once
 * per burst, for good: a host that fell behind once will again.
 *
 * Multi-buffer (sockets bound with XDP_USE_SG): a frame larger than one
 * UMEM frame (a 4096-byte path MTU) spans several. A TX buffer is then two
 * adjacent UMEM frames, written as one and sent as one descriptor per frame
 * (XDP_PKT_CONTD on all but the last); only the first frame's address,
 * back from the completion ring, returns the buffer to the pool. An RX
 * packet in several descriptors is made one piece, because the engine
 * parses and checks the ICRC of a packet in one piece: where its frames are
 * adjacent in the UMEM (the fill ring is stocked in order and refilled in
 * the order frames come back, so a jumbo packet takes two frames in a row),
 * each later descriptor's data moves back over the headroom in front of it
 * to join the one before, in place (a 4096-byte Write's packet: 314 bytes
 * moved, not 4170 copied); else it is copied into one reassembly buffer
 * (one such packet per burst).
 *
 * Loopback: a frame addressed to its own source MAC (a QP of this device
 * talking to another QP of the same device, or to itself) would not come
 * back from the wire; tx_put() queues its buffer on the loop list instead,
 * and an rx_burst() hands it to the engine as a received frame, whose
 * rx_release() puts the buffer back in the TX pool. No copy. The loop and
 * the sockets take turns, burst by burst: a loopback stream keeps the loop
 * from ever emptying, and a wire frame must not wait for it to.
 *
 * Only the engine (under its lock) calls into a port, so no locking here
 * but a shared fill and completion ring's (struct xsk_fq); the one other
 * thread, a port's TX thread (below), only reads socket 0's TX ring
 * indexes and kicks its fd.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>

#include "common/ctl_client.h"
#include "common/log.h"
#include "engine/engine.h"
#include "engine/pkt.h"

#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif

#ifndef XDP_PACKET_HEADROOM
#define XDP_PACKET_HEADROOM 256 /* what the kernel keeps before a frame */
#endif
#define XSK_BUSY_RETRIES 50 /* x 10 ms: a closed socket's queue frees late */
#define XSK_RX_STOCK 2048 /* RX frames in circulation at first (above) */
#define XSK_RX_GROW_PERMILLE 750 /* of the RX stock waiting: double it */

/*
 * A queue's fill and completion rings and its RX frames. A socket bound
 * alone on its queue has its own. Sockets of several engines bound on one
 * queue (rxdpd --engines-per-queue: XDP_SHARED_UMEM with the same queue
 * id) share the first one's, as the kernel does: it fills
 * whichever of them the XDP program redirects to from that one fill ring
 * and completes all their TX in that one completion ring. Then their
 * engines take the rings under the lock; an RX frame goes back to the one
 * fill ring whichever socket received it; and a completed TX buffer goes
 * back to the pool of the socket that sent it (mem[]: another's waits in
 * its ret[] until that socket reaps).
 */
#define XSK_FQ_MEMBERS RXDP_CTL_MAX_XSKS

struct xsk_fq {
	struct xsk_ring_prod fill;
	struct xsk_ring_cons comp;
	void *map[2];
	size_t map_len[2];
	uint64_t *refill; /* RX frames the fill ring had no room for yet */
	uint32_t nrefill;
	uint32_t rx_frames; /* RX frames in circulation (fill + RX rings) */
	uint32_t rx_share; /* all its RX frames: those not yet in circulation
			      lie just below rx_top */
	uint64_t rx_top;
	bool shared; /* a second socket joined: take the lock */
	pthread_mutex_t lock;
	atomic_int refs;
	int nmem;
	struct {
		int fd; /* the member socket's */
		uint64_t base, end; /* its TX buffers */
		uint64_t *ret; /* completed, for it to take */
		uint32_t nret;
	} mem[XSK_FQ_MEMBERS];
};

struct xsk_sock {
	int fd;
	struct xsk_ring_cons rx;
	struct xsk_ring_prod tx;
	struct xsk_fq *fq; /* its queue's fill and completion rings */
	int fq_mem; /* its place in fq->mem[] */
	void *map[2];
	size_t map_len[2];
	uint64_t *free; /* TX buffers not in flight (a stack) */
	uint64_t tx_base; /* UMEM address of the first TX frame */
	uint32_t nfree;
	uint32_t tx_frames;
	uint32_t queued; /* TX descriptors reserved, not yet submitted */
	bool kick;
	uint8_t *area; /* its UMEM's: the port's, or own_umem's */
	struct rxdp_umem *own_umem; /* a socket added later has its own */
};

struct rxdp_xsk_port {
	struct rxdp_umem *umem;
	struct xsk_sock *s;
	int n;
	uint32_t ring_size;
	int rx_next; /* round robin over the sockets */
	int rx_sock; /* the socket of the last rx_burst() */
	uint32_t rx_permille; /* how full its RX frames were (rx_fill) */
	uint32_t rx_ndesc; /* descriptors the last rx_burst() consumed */
	uint64_t *rx_addrs; /* their addresses, for the fill ring */
	bool sg; /* multi-buffer */
	uint32_t tx_buf; /* bytes in a TX buffer: 1 frame, 2 with sg */
	uint8_t *rx_joined; /* reassembly of a multi-buffer RX packet */
	uint32_t rx_joined_size;
	uint64_t drops_rx_big; /* multi-buffer packets too large to join */
	uint64_t drops_tx_ring;
	bool bind_zerocopy; /* else copy mode: every TX needs a sendto() */
	uint32_t bind_flags;
	bool own_fds; /* made by rxdp_xsk_port_open(): closed with the port */
	uint64_t share; /* UMEM frames per socket */
	/* loopback: TX buffers (UMEM addresses, lengths) to receive */
	uint64_t *loop_addr;
	uint32_t *loop_len;
	uint32_t loop_head, loop_n, loop_cap;
	uint32_t rx_loop; /* the last rx_burst() took this many from the loop */
	bool loop_yield; /* ... and the sockets have the next turn */
	/* the TX thread (rxdp_xsk_port_tx_thread()) */
	bool txt_want; /* start one at the first large flush */
	bool txt_on; /* running */
	bool txt_cpus_set;
	cpu_set_t txt_cpus;
	pthread_t txt;
	_Atomic uint32_t txt_state; /* TXT_RUN, TXT_SLEEP or TXT_STOP */
	/* socket 0's fd and TX ring as the thread sees them: the ring's
	 * indexes are in its mapping, which stays, while s[] may be
	 * reallocated (rxdp_xsk_port_add()) */
	int txt_fd;
	struct xsk_ring_prod txt_tx;
};

int rxdp_umem_create(struct rxdp_umem *u, uint32_t nframes, uint32_t frame_size)
{
	memset(u, 0, sizeof(*u));
	if (!nframes || (frame_size != 2048 && frame_size != 4096))
		return -EINVAL;
	u->size = (uint64_t)nframes * frame_size;
	u->frame_size = frame_size;
	u->fd = memfd_create("rxdp-umem", MFD_CLOEXEC);
	if (u->fd < 0)
		return -errno;
	if (ftruncate(u->fd, u->size)) {
		int err = -errno;

		close(u->fd);
		return err;
	}
	u->area = mmap(NULL, u->size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, u->fd, 0);
	if (u->area == MAP_FAILED) {
		int err = -errno;

		close(u->fd);
		u->area = NULL;
		return err;
	}
	return 0;
}

void rxdp_umem_destroy(struct rxdp_umem *u)
{
	if (u->area)
		munmap(u->area, u->size);
	if (u->fd >= 0)
		close(u->fd);
	u->area = NULL;
	u->fd = -1;
}

int rxdp_umem_adopt(struct rxdp_umem *u, int fd, uint32_t frame_size)
{
	struct stat st;

	memset(u, 0, sizeof(*u));
	u->fd = -1;
	if (frame_size != 2048 && frame_size != 4096)
		return -EINVAL;
	if (fstat(fd, &st))
		return -errno;
	if (st.st_size <= 0 || st.st_size % frame_size)
		return -EINVAL;
	u->area = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, 0);
	if (u->area == MAP_FAILED) {
		u->area = NULL;
		return -errno;
	}
	u->fd = fd;
	u->size = (uint64_t)st.st_size;
	u->frame_size = frame_size;
	return 0;
}

static void *ring_map(int fd, size_t len, off_t pgoff)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, fd, pgoff);

	return p == MAP_FAILED ? NULL : p;
}

#define RING_INIT(r, base, off, sz)                                        \
	do {                                                               \
		(r)->producer = (void *)((char *)(base) + (off).producer); \
		(r)->consumer = (void *)((char *)(base) + (off).consumer); \
		(r)->ring = (char *)(base) + (off).desc;                   \
		(r)->flags = (void *)((char *)(base) + (off).flags);       \
		(r)->mask = (sz)-1;                                        \
		(r)->size = (sz);                                          \
	} while (0)

static struct xsk_fq *fq_new(void)
{
	struct xsk_fq *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	pthread_mutex_init(&q->lock, NULL);
	atomic_init(&q->refs, 1);
	q->nmem = 1;
	return q;
}

static void fq_lock(struct xsk_fq *q)
{
	if (q->shared)
		pthread_mutex_lock(&q->lock);
}

static void fq_unlock(struct xsk_fq *q)
{
	if (q->shared)
		pthread_mutex_unlock(&q->lock);
}

/* Socket s takes the rings of q's queue as one more member; -1: full */
static int fq_join(struct xsk_sock *s, struct xsk_fq *q)
{
	if (q->nmem >= XSK_FQ_MEMBERS)
		return -1;
	s->fq = q;
	s->fq_mem = q->nmem++;
	atomic_fetch_add(&q->refs, 1);
	q->shared = true;
	return 0;
}

/* A socket lets go of its queue's rings: the last one unmaps them */
static void fq_put(struct xsk_fq *q, int mem)
{
	if (!q)
		return;
	if (mem && mem == q->nmem - 1) { /* the last to join */
		fq_lock(q);
		free(q->mem[mem].ret);
		memset(&q->mem[mem], 0, sizeof(q->mem[mem]));
		q->nmem--;
		fq_unlock(q);
	}
	if (atomic_fetch_sub(&q->refs, 1) != 1)
		return;
	for (int k = 0; k < 2; k++)
		if (q->map[k])
			munmap(q->map[k], q->map_len[k]);
	for (int m = 0; m < q->nmem; m++)
		free(q->mem[m].ret);
	free(q->refill);
	pthread_mutex_destroy(&q->lock);
	free(q);
}

/*
 * Map the socket's RX and TX rings, and the fill and completion rings
 * where they are its own (the first socket of its fq; a later one uses
 * the first one's)
 */
static int sock_map(struct xsk_sock *s, uint32_t size)
{
	struct xsk_fq *q = s->fq;
	struct xdp_mmap_offsets off;
	socklen_t optlen = sizeof(off);

	if (getsockopt(s->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &optlen))
		return -errno;
	s->map_len[0] = off.rx.desc + size * sizeof(struct xdp_desc);
	s->map_len[1] = off.tx.desc + size * sizeof(struct xdp_desc);
	s->map[0] = ring_map(s->fd, s->map_len[0], XDP_PGOFF_RX_RING);
	s->map[1] = ring_map(s->fd, s->map_len[1], XDP_PGOFF_TX_RING);
	if (!s->map[0] || !s->map[1])
		return -errno;
	RING_INIT(&s->rx, s->map[0], off.rx, size);
	RING_INIT(&s->tx, s->map[1], off.tx, size);
	s->rx.cached_prod = *s->rx.producer;
	s->rx.cached_cons = *s->rx.consumer;
	/* a producer's cached_cons runs one ring ahead (see xsk.h) */
	s->tx.cached_prod = *s->tx.producer;
	s->tx.cached_cons = *s->tx.consumer + size;
	if (s->fq_mem)
		return 0;
	q->map_len[0] = off.fr.desc + size * sizeof(__u64);
	q->map_len[1] = off.cr.desc + size * sizeof(__u64);
	q->map[0] = ring_map(s->fd, q->map_len[0], XDP_UMEM_PGOFF_FILL_RING);
	q->map[1] =
		ring_map(s->fd, q->map_len[1], XDP_UMEM_PGOFF_COMPLETION_RING);
	if (!q->map[0] || !q->map[1])
		return -errno;
	RING_INIT(&q->fill, q->map[0], off.fr, size);
	RING_INIT(&q->comp, q->map[1], off.cr, size);
	q->comp.cached_prod = *q->comp.producer;
	q->comp.cached_cons = *q->comp.consumer;
	q->fill.cached_prod = *q->fill.producer;
	q->fill.cached_cons = *q->fill.consumer + size;
	return 0;
}

static void sock_fini(struct xsk_sock *s, bool close_fd)
{
	for (int k = 0; k < 2; k++)
		if (s->map[k])
			munmap(s->map[k], s->map_len[k]);
	free(s->free);
	fq_put(s->fq, s->fq_mem);
	if (close_fd && s->fd >= 0)
		close(s->fd);
	if (s->own_umem) {
		rxdp_umem_destroy(s->own_umem);
		free(s->own_umem);
	}
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static void txt_stop(struct rxdp_xsk_port *p);

void rxdp_xsk_port_destroy(struct rxdp_xsk_port *p)
{
	if (!p)
		return;
	txt_stop(p);
	for (int i = 0; i < p->n; i++) /* an added socket is the port's */
		sock_fini(&p->s[i], p->own_fds || p->s[i].own_umem);
	free(p->s);
	free(p->rx_addrs);
	free(p->rx_joined);
	free(p->loop_addr);
	free(p->loop_len);
	free(p);
}

/* The port without sockets yet: room for nfds of them */
static struct rxdp_xsk_port *port_alloc(struct rxdp_umem *umem, int nfds,
					uint32_t ring_size, uint32_t bind_flags)
{
	struct rxdp_xsk_port *p;

	if (nfds < 1 || nfds > RXDP_CTL_MAX_XSKS || !ring_size ||
	    (ring_size & (ring_size - 1)) ||
	    umem->size / umem->frame_size / nfds < 4) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->s = calloc(nfds, sizeof(*p->s));
	p->umem = umem;
	p->ring_size = ring_size;
	p->sg = !!(bind_flags & XDP_USE_SG);
	p->bind_flags = bind_flags;
	p->tx_buf = umem->frame_size * (p->sg ? 2 : 1);
	p->share = umem->size / umem->frame_size / nfds;
	p->rx_addrs = calloc(ring_size, sizeof(*p->rx_addrs));
	p->rx_joined_size = 4 * umem->frame_size;
	p->rx_joined = malloc(p->rx_joined_size);
	if (!p->s || !p->rx_addrs || !p->rx_joined) {
		rxdp_xsk_port_destroy(p);
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

/* Socket i's TX pool: ntx buffers from its tx_base on, all free */
static int sock_tx_pool(struct rxdp_xsk_port *p, int i, uint32_t ntx)
{
	struct xsk_sock *s = &p->s[i];
	struct xsk_fq *q = s->fq;

	s->free = calloc(ntx, sizeof(*s->free));
	q->mem[s->fq_mem].ret = calloc(ntx, sizeof(*s->free));
	if (!s->free || !q->mem[s->fq_mem].ret)
		return -ENOMEM;
	for (uint32_t k = 0; k < ntx; k++)
		s->free[k] = s->tx_base + (uint64_t)k * p->tx_buf;
	s->nfree = s->tx_frames = ntx;
	q->mem[s->fq_mem].fd = s->fd;
	q->mem[s->fq_mem].base = s->tx_base;
	q->mem[s->fq_mem].end = s->tx_base + (uint64_t)ntx * p->tx_buf;
	if (i == 0) {
		/* loopback holds socket 0's TX buffers: room for all of them */
		p->loop_addr = calloc(ntx, sizeof(*p->loop_addr));
		p->loop_len = calloc(ntx, sizeof(*p->loop_len));
		if (!p->loop_addr || !p->loop_len)
			return -ENOMEM;
		p->loop_cap = ntx;
	}
	return 0;
}

/*
 * Map socket i's rings, stock its fill ring from its share of the UMEM's
 * first half (the rest of that half its spare RX frames), and make the
 * other half its TX pool. Its share: the UMEM's frames first .. first +
 * share - 1 (a socket with a UMEM of its own has all of it, from its
 * start). join: the rings of the queue's first socket, which this one
 * shares (its RX frames are that one's: its share is all TX), or NULL.
 */
static int sock_init(struct rxdp_xsk_port *p, int i, uint64_t first,
		     uint64_t share, struct xsk_fq *join)
{
	struct xsk_sock *s = &p->s[i];
	struct rxdp_umem *umem = s->own_umem ? s->own_umem : p->umem;
	uint64_t base = s->own_umem ? 0 : first * umem->frame_size;
	uint32_t nrx = join ? 0 : share / 2, ntx = share - nrx, idx, stock;
	struct xsk_fq *q;
	int err;

	s->area = umem->area;
	if (join) {
		if (fq_join(s, join))
			return -ENOSPC;
	} else {
		s->fq = fq_new();
		if (!s->fq)
			return -ENOMEM;
	}
	q = s->fq;

	/* no more in flight than a ring holds */
	if (nrx > p->ring_size)
		nrx = p->ring_size;
	if (ntx > p->ring_size)
		ntx = p->ring_size;
	err = sock_map(s, p->ring_size);
	if (err) {
		pr_warn("engine: cannot map the rings of AF_XDP socket %d: "
			"%s\n",
			s->fd, strerror(-err));
		return err;
	}
	s->tx_base = base + (uint64_t)nrx * umem->frame_size;
	if (!join) {
		stock = nrx < XSK_RX_STOCK ? nrx : XSK_RX_STOCK;
		if (xsk_ring_prod__reserve(&q->fill, stock, &idx) != stock)
			return -ENOSPC;
		for (uint32_t k = 0; k < stock; k++)
			*xsk_ring_prod__fill_addr(&q->fill, idx + k) =
				base + (uint64_t)k * umem->frame_size;
		xsk_ring_prod__submit(&q->fill, stock);
		q->rx_frames = stock;
		q->rx_share = nrx;
		q->rx_top = s->tx_base;
		q->refill = calloc(nrx, sizeof(*q->refill));
		if (!q->refill)
			return -ENOMEM;
	}
	return sock_tx_pool(p, i, ntx / (p->tx_buf / umem->frame_size));
}

struct rxdp_xsk_port *rxdp_xsk_port_create(struct rxdp_umem *umem,
					   const int *xsk_fds, int nfds,
					   uint32_t ring_size,
					   uint32_t bind_flags)
{
	struct rxdp_xsk_port *p = port_alloc(umem, nfds, ring_size, bind_flags);
	uint64_t share = umem->size / umem->frame_size / nfds;
	struct xdp_options opt = { 0 };
	socklen_t olen = sizeof(opt);
	int err;

	if (!p)
		return NULL;
	for (int i = 0; i < nfds; i++) {
		p->s[i].fd = xsk_fds[i];
		p->n = i + 1;
		err = sock_init(p, i, i * share, share, NULL);
		if (err) {
			rxdp_xsk_port_destroy(p);
			errno = -err;
			return NULL;
		}
	}
	if (!getsockopt(p->s[0].fd, SOL_XDP, XDP_OPTIONS, &opt, &olen))
		p->bind_zerocopy = !!(opt.flags & XDP_OPTIONS_ZEROCOPY);
	return p;
}

/*
 * A socket with its rings sized, not yet mapped or bound; reg: the UMEM it
 * registers (its first socket), or NULL for one that will share another's;
 * same_queue: it will share the fill and completion rings of a socket on
 * its queue too (the kernel refuses a socket of its own then)
 */
static int sock_new(struct rxdp_xsk_port *p, const struct rxdp_umem *reg,
		    bool same_queue)
{
	int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
	int ring = (int)p->ring_size;

	if (fd < 0)
		return -errno;
	if (reg) {
		struct xdp_umem_reg mr = {
			.addr = (__u64)(uintptr_t)reg->area,
			.len = reg->size,
			.chunk_size = reg->frame_size,
		};

		if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &mr, sizeof(mr)))
			goto err;
	}
	if (!same_queue &&
	    (setsockopt(fd, SOL_XDP, XDP_UMEM_FILL_RING, &ring, sizeof(ring)) ||
	     setsockopt(fd, SOL_XDP, XDP_UMEM_COMPLETION_RING, &ring,
			sizeof(ring))))
		goto err;
	if (setsockopt(fd, SOL_XDP, XDP_RX_RING, &ring, sizeof(ring)) ||
	    setsockopt(fd, SOL_XDP, XDP_TX_RING, &ring, sizeof(ring)))
		goto err;
	return fd;
err : {
	int e = -errno;

	close(fd);
	return e;
}
}

static int sock_bind(int fd, int ifindex, uint32_t queue, uint16_t flags,
		     int shared_fd)
{
	struct sockaddr_xdp sxdp = {
		.sxdp_family = AF_XDP,
		.sxdp_ifindex = (uint32_t)ifindex,
		.sxdp_queue_id = queue,
		.sxdp_flags = flags,
		.sxdp_shared_umem_fd = shared_fd >= 0 ? (uint32_t)shared_fd : 0,
	};

	return bind(fd, (struct sockaddr *)&sxdp, sizeof(sxdp)) ? -errno : 0;
}

/*
 * The modes queue 0 tries, best first; the count. Zero-copy spares the
 * kernel a copy of every frame (the driver receives into the UMEM and
 * sends from it); multi-buffer (XDP_USE_SG) carries a frame larger than a
 * UMEM frame in several. A driver with zero-copy but not zero-copy
 * multi-buffer (xdp_zc_max_segs 1: virtio-net, ...) refuses the pair, and
 * then the largest frame the port receives decides: where one UMEM frame
 * holds it, zero-copy alone; else copy mode with multi-buffer (Linux 6.6),
 * zero-copy alone only where the kernel has no multi-buffer.
 */
static int bind_modes(const struct rxdp_xsk_port *p, uint32_t max_frame,
		      uint16_t want, uint16_t *modes)
{
	bool one_frame = max_frame <= p->umem->frame_size - XDP_PACKET_HEADROOM;
	const uint16_t all[4] = {
		XDP_ZEROCOPY | XDP_USE_SG,
		one_frame ? XDP_ZEROCOPY : XDP_COPY | XDP_USE_SG,
		one_frame ? XDP_COPY | XDP_USE_SG : XDP_ZEROCOPY,
		XDP_COPY,
	};
	int n = 0;

	/* want: XDP_COPY or XDP_ZEROCOPY keeps those modes alone */
	for (int i = 0; i < 4; i++)
		if (!want || (all[i] & want))
			modes[n++] = all[i];
	return n;
}

/*
 * Socket q, bound: its rings are mapped and its fill ring stocked first
 * (kernels before 6.4 refuse to map a bound socket's fill and completion
 * rings). Queue 0 tries the modes of bind_modes() in turn; the others share
 * its UMEM (and its mode). A failed bind starts over with a new socket.
 */
static int sock_open(struct rxdp_xsk_port *p, int ifindex, uint32_t q,
		     uint64_t share, uint32_t max_frame, uint16_t want,
		     const char **why)
{
	uint16_t modes[4];
	int nmodes = q ? 1 : bind_modes(p, max_frame, want, modes);
	int err = -EINVAL;

	for (int m = 0; m < nmodes; m++) {
		uint16_t flags = q ? XDP_SHARED_UMEM
				   : modes[m] | XDP_USE_NEED_WAKEUP;

		for (int tries = 0; tries <= XSK_BUSY_RETRIES; tries++) {
			int fd = sock_new(p, q == 0 ? p->umem : NULL, false);

			if (fd < 0) {
				*why = "cannot create the AF_XDP socket";
				return fd;
			}
			p->s[q].fd = fd;
			p->sg = q ? p->sg : !!(modes[m] & XDP_USE_SG);
			p->tx_buf = p->umem->frame_size * (p->sg ? 2 : 1);
			err = sock_init(p, (int)q, q * share, share, NULL);
			if (!err)
				err = sock_bind(fd, ifindex, q, flags,
						q ? p->s[0].fd : -1);
			if (!err) {
				if (!q) {
					p->bind_flags = modes[m];
					p->bind_zerocopy =
						!!(modes[m] & XDP_ZEROCOPY);
				}
				return 0;
			}
			sock_fini(&p->s[q], true);
			if (q == 0) {
				free(p->loop_addr);
				free(p->loop_len);
				p->loop_addr = NULL;
				p->loop_len = NULL;
			}
			/* the last owner's socket is still going away */
			if (err != -EBUSY)
				break;
			usleep(10000);
		}
	}
	*why = err == -EBUSY ? "the queue is in use (another AF_XDP program?)"
	       : q	     ? "no such RX queue"
	       : want == XDP_ZEROCOPY ? "the driver refuses zero-copy AF_XDP"
				      : "the driver refuses AF_XDP";
	return err;
}

/*
 * Socket i, another on queue q: bound sharing the UMEM and the fill and
 * completion rings of socket q (the queue's first), in its mode; its TX
 * frames are first .. first + share - 1
 */
static int sock_join(struct rxdp_xsk_port *p, int ifindex, uint32_t q, int i,
		     uint64_t first, uint64_t share, const char **why)
{
	int fd = sock_new(p, NULL, true), err;

	*why = "cannot create the AF_XDP socket";
	if (fd < 0)
		return fd;
	p->s[i].fd = fd;
	err = sock_init(p, i, first, share, p->s[q].fq);
	if (!err)
		err = sock_bind(fd, ifindex, q, XDP_SHARED_UMEM, p->s[q].fd);
	if (err) {
		*why = "cannot bind a second AF_XDP socket on the queue";
		sock_fini(&p->s[i], true);
	}
	return err;
}

struct rxdp_xsk_port *rxdp_xsk_port_open(struct rxdp_umem *umem, int ifindex,
					 uint32_t nqueues, uint32_t nsets,
					 uint32_t ring_size, uint32_t max_frame,
					 uint16_t want, const char **why)
{
	struct rxdp_xsk_port *p;
	uint64_t share, join_share;
	int err, nq;

	*why = "bad arguments";
	if (!nqueues || !nsets || nqueues * nsets > RXDP_CTL_MAX_XSKS) {
		errno = EINVAL;
		return NULL;
	}
	p = port_alloc(umem, (int)(nqueues * nsets), ring_size, 0);
	if (!p)
		return NULL;
	p->own_fds = true;
	/*
	 * A queue's frames: each socket that joins its first takes 1 / (2 *
	 * nsets) of them, TX only (it sends what one engine sends; RX frames
	 * come from the first's), and the first keeps the rest, at least
	 * half, for RX and TX as when alone
	 */
	share = umem->size / umem->frame_size / nqueues;
	join_share = share / (2 * nsets);
	share -= join_share * (nsets - 1);
	p->share = share;
	for (uint32_t q = 0; q < nqueues; q++) {
		p->s[q].fd = -1;
		err = sock_open(p, ifindex, q, share, max_frame, want, why);
		if (err && q > 0 && err == -EINVAL) {
			/*
			 * The count was an upper bound (a veth made without
			 * numrxqueues reports one per possible CPU but has
			 * one): the queues end here.
			 */
			break;
		}
		if (err) {
			rxdp_xsk_port_destroy(p);
			errno = -err;
			return NULL;
		}
		p->n = (int)q + 1;
	}
	/* the sets after the first: socket set * nq + q on queue q */
	nq = p->n;
	for (uint32_t set = 1; set < nsets; set++) {
		for (int q = 0; q < nq; q++) {
			p->s[p->n].fd = -1;
			err = sock_join(p, ifindex, (uint32_t)q, p->n,
					nqueues * share +
						(uint64_t)(p->n - nq) *
							join_share,
					join_share, why);
			if (err) {
				rxdp_xsk_port_destroy(p);
				errno = -err;
				return NULL;
			}
			p->n++;
		}
	}
	return p;
}

struct rxdp_xsk_port *rxdp_xsk_port_split(struct rxdp_xsk_port *p, int k, int n)
{
	struct rxdp_xsk_port *q;
	int cnt = 0, j = 0;

	for (int i = k; i < p->n; i += n)
		cnt++;
	if (n < 1 || k < 0 || k >= n || !cnt) {
		errno = EINVAL;
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	*q = *p;
	q->s = calloc(cnt, sizeof(*q->s));
	q->rx_addrs = calloc(p->ring_size, sizeof(*q->rx_addrs));
	q->rx_joined = malloc(p->rx_joined_size);
	q->loop_addr = NULL;
	q->loop_len = NULL;
	q->loop_head = q->loop_n = q->rx_loop = 0;
	q->rx_next = q->rx_sock = 0;
	q->rx_ndesc = 0;
	q->n = 0;
	if (q->s) {
		/* loopback holds the first socket's TX buffers (tx_put) */
		q->loop_cap = p->s[k].tx_frames;
		q->loop_addr = calloc(q->loop_cap, sizeof(*q->loop_addr));
		q->loop_len = calloc(q->loop_cap, sizeof(*q->loop_len));
	}
	if (!q->s || !q->rx_addrs || !q->rx_joined || !q->loop_addr ||
	    !q->loop_len) {
		q->own_fds = false;
		rxdp_xsk_port_destroy(q);
		errno = ENOMEM;
		return NULL;
	}
	for (int i = k; i < p->n; i += n) {
		q->s[j++] = p->s[i];
		memset(&p->s[i], 0, sizeof(p->s[i]));
		p->s[i].fd = -1;
	}
	q->n = cnt;
	return q;
}

int rxdp_xsk_port_add(struct rxdp_xsk_port *p, int ifindex, uint32_t queue,
		      const char **why)
{
	uint64_t frames = p->share < 2 * (uint64_t)p->ring_size
				  ? p->share
				  : 2 * (uint64_t)p->ring_size;
	uint16_t flags = (uint16_t)rxdp_xsk_port_bind_flags(p) |
			 XDP_USE_NEED_WAKEUP;
	struct xsk_sock *s, *ns;
	int err, fd;

	*why = "cannot allocate the socket's UMEM";
	if (p->n >= RXDP_CTL_MAX_XSKS || frames < 4)
		return -EINVAL;
	ns = realloc(p->s, (p->n + 1) * sizeof(*p->s));
	if (!ns)
		return -ENOMEM;
	p->s = ns;
	s = &p->s[p->n];
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->own_umem = calloc(1, sizeof(*s->own_umem));
	if (!s->own_umem)
		return -ENOMEM;
	err = rxdp_umem_create(s->own_umem, (uint32_t)frames,
			       p->umem->frame_size);
	if (err) {
		free(s->own_umem);
		s->own_umem = NULL;
		return err;
	}
	fd = sock_new(p, s->own_umem, false);
	if (fd < 0) {
		*why = "cannot create the AF_XDP socket";
		sock_fini(s, true);
		return fd;
	}
	s->fd = fd;
	err = sock_init(p, p->n, 0, frames, NULL);
	if (!err)
		err = sock_bind(fd, ifindex, queue, flags, -1);
	if (err) {
		*why = err == -EBUSY ? "the queue is in use"
				     : "cannot bind the AF_XDP socket";
		if (p->n == 0) {
			free(p->loop_addr);
			free(p->loop_len);
			p->loop_addr = NULL;
			p->loop_len = NULL;
		}
		sock_fini(s, true);
		return err;
	}
	p->n++;
	return fd;
}

int rxdp_xsk_port_add_call(void *port, void *arg)
{
	struct rxdp_xsk_queue_add *a = arg;

	return rxdp_xsk_port_add(port, a->ifindex, a->queue, &a->why);
}

struct rxdp_xsk_port *rxdp_xsk_port_like(const struct rxdp_xsk_port *p)
{
	struct rxdp_xsk_port *q =
		port_alloc(p->umem, 1, p->ring_size, p->bind_flags);

	if (q) {
		q->share = p->share;
		q->bind_zerocopy = p->bind_zerocopy;
		q->own_fds = true;
		q->txt_want = p->txt_want;
		q->txt_cpus_set = p->txt_cpus_set;
		q->txt_cpus = p->txt_cpus;
	}
	return q;
}

uint32_t rxdp_xsk_port_bind_flags(struct rxdp_xsk_port *p)
{
	return p->bind_flags | (p->bind_zerocopy ? XDP_ZEROCOPY : XDP_COPY);
}

int rxdp_xsk_port_fds(struct rxdp_xsk_port *p, int *fds, int max)
{
	int n = 0;

	for (int i = 0; i < p->n && n < max; i++)
		fds[n++] = p->s[i].fd;
	return n;
}

int rxdp_xsk_port_modes(struct rxdp_xsk_port *p, uint16_t *modes, int max)
{
	int n = 0;

	for (int i = 0; i < p->n && n < max; i++) {
		struct xdp_options opt = { 0 };
		socklen_t len = sizeof(opt);
		uint16_t m = XDP_COPY;

		if (!getsockopt(p->s[i].fd, SOL_XDP, XDP_OPTIONS, &opt, &len) &&
		    (opt.flags & XDP_OPTIONS_ZEROCOPY))
			m = XDP_ZEROCOPY;
		modes[n++] = m | (p->sg ? XDP_USE_SG : 0);
	}
	return n;
}

/*
 * Frames the kernel dropped before the engine saw them. In copy mode a
 * frame that finds the fill ring empty counts twice, in rx_dropped and in
 * rx_fill_ring_empty_descs (a receiver stopped while 4 480 came, 2 048
 * frames in circulation: 4 608 counted); in zero-copy mode the driver's
 * empty fill ring counts only in the latter, and rx_dropped only frames
 * too big for a frame. So the larger of the two, with the full RX rings.
 * The fill ring's count is its own, and sockets that share one (engines
 * on one queue) each report it: so a queue's first socket counts for all
 * of them (the larger of their rx_dropped summed and the fill ring's
 * count), the others for nothing.
 */
uint64_t rxdp_xsk_port_rx_lost(struct rxdp_xsk_port *p)
{
	uint64_t n = 0;

	for (int i = 0; i < p->n; i++) {
		struct xsk_fq *q = p->s[i].fq;
		uint64_t dropped = 0, empty = 0;

		if (p->s[i].fq_mem)
			continue;
		fq_lock(q);
		for (int m = 0; m < q->nmem; m++) {
			struct xdp_statistics st;
			socklen_t len = sizeof(st);

			memset(&st, 0, sizeof(st));
			if (getsockopt(q->mem[m].fd, SOL_XDP, XDP_STATISTICS,
				       &st, &len))
				continue;
			n += st.rx_ring_full;
			dropped += st.rx_dropped;
			if (!m)
				empty = st.rx_fill_ring_empty_descs;
		}
		fq_unlock(q);
		n += dropped > empty ? dropped : empty;
	}
	return n;
}

/*
 * Completed TX buffers back to their pools (by their first frame): s's,
 * or, on a shared completion ring, another socket's ret[]; then what the
 * others put in s's ret[]
 */
static void sock_reap(struct rxdp_xsk_port *p, struct xsk_sock *s)
{
	struct xsk_fq *q = s->fq;
	uint32_t idx, n;

	fq_lock(q);
	n = xsk_ring_cons__peek(&q->comp, p->ring_size, &idx);
	for (uint32_t k = 0; k < n; k++) {
		uint64_t a = *xsk_ring_cons__comp_addr(&q->comp, idx + k);

		for (int m = 0; m < q->nmem; m++) {
			if (a < q->mem[m].base || a >= q->mem[m].end)
				continue;
			if ((a - q->mem[m].base) % p->tx_buf)
				break; /* a later frame of a buffer */
			if (m == s->fq_mem)
				s->free[s->nfree++] = a;
			else
				q->mem[m].ret[q->mem[m].nret++] = a;
			break;
		}
	}
	if (n)
		xsk_ring_cons__release(&q->comp, n);
	if (q->mem[s->fq_mem].nret) {
		uint32_t r = q->mem[s->fq_mem].nret;

		memcpy(s->free + s->nfree, q->mem[s->fq_mem].ret,
		       r * sizeof(*s->free));
		s->nfree += r;
		q->mem[s->fq_mem].nret = 0;
	}
	fq_unlock(q);
}

/*
 * TX goes out on socket 0: the peer's XDP program steers by the QPN, and on
 * veth the receiving queue is our TX queue (notes/netns-and-bpffs.md).
 */
static void *xp_tx_get(void *port, uint32_t *cap)
{
	struct rxdp_xsk_port *p = port;
	struct xsk_sock *s = &p->s[0];

	if (!s->nfree)
		sock_reap(p, s);
	if (!s->nfree)
		return NULL;
	*cap = p->tx_buf;
	return s->area + s->free[--s->nfree];
}

static void xp_tx_abort(void *port, void *buf)
{
	struct rxdp_xsk_port *p = port;
	struct xsk_sock *s = &p->s[0];

	s->free[s->nfree++] = (uint8_t *)buf - s->area;
}

static void xp_tx_put(void *port, void *buf, uint32_t len)
{
	struct rxdp_xsk_port *p = port;
	struct xsk_sock *s = &p->s[0];
	uint64_t addr = (uint8_t *)buf - s->area;
	uint32_t fs = p->umem->frame_size, n = (len + fs - 1) / fs, idx;

	if (pkt_looped(buf, len)) {
		/* to our own MAC: loop it back (cannot overflow: one slot
		 * per TX buffer) */
		uint32_t t = (p->loop_head + p->loop_n) % p->loop_cap;

		p->loop_addr[t] = addr;
		p->loop_len[t] = len;
		p->loop_n++;
		return;
	}
	if (!n)
		n = 1;
	if (xsk_ring_prod__reserve(&s->tx, n, &idx) != n) {
		/* cannot happen: no more frames than ring entries */
		p->drops_tx_ring++;
		xp_tx_abort(port, buf);
		return;
	}
	for (uint32_t k = 0; k < n; k++) {
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&s->tx, idx + k);

		d->addr = addr + (uint64_t)k * fs;
		d->len = k + 1 < n ? fs : len - k * fs;
		d->options = k + 1 < n ? XDP_PKT_CONTD : 0;
	}
	s->queued += n;
}

/*
 * The TX thread. In copy mode the kernel sends a socket's frames in the
 * sendto() that kicks it (copy, skb, the driver; on a veth the peer's XDP
 * program and AF_XDP copy too), which costs more than building the frames:
 * with CPUs to spare, one pair's sending engine is bound by that system call
 * (notes/many-core.md). This thread makes those calls for socket 0 while its
 * engine builds the next frames. It is the TX ring's second consumer-side
 * party only through the kernel: the engine alone produces into the ring
 * and reaps the completion ring, so neither ring gains a second user-space
 * writer. It spins (yielding) for TXT_SPIN_NS after the ring empties, then
 * sleeps on txt_state until a flush of TXT_BATCH frames or more wakes it; a
 * flush of fewer, with the thread asleep, kicks the socket itself (a
 * ping-pong's packet is not delayed by a wake-up).
 */
#define TXT_SPIN_NS 50000
#define TXT_BATCH 8
#define TXT_BACKOFF_NS 200000 /* after an error other than EAGAIN */

enum {
	TXT_RUN,
	TXT_SLEEP,
	TXT_STOP
};

static bool txt_pending(const struct xsk_ring_prod *tx)
{
	return __atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE) !=
	       __atomic_load_n(tx->producer, __ATOMIC_ACQUIRE);
}

static void txt_futex(_Atomic uint32_t *w, int op, uint32_t v)
{
	syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static void *txt_main(void *arg)
{
	struct rxdp_xsk_port *p = arg;
	const struct xsk_ring_prod *tx = &p->txt_tx;
	uint64_t idle = 0;

	for (;;) {
		uint32_t st = atomic_load(&p->txt_state);

		if (st == TXT_STOP)
			break;
		if (txt_pending(tx)) {
			uint32_t c =
				__atomic_load_n(tx->consumer, __ATOMIC_ACQUIRE);
			ssize_t r;

			if (st == TXT_SLEEP) /* woken without a waker */
				atomic_compare_exchange_strong(&p->txt_state,
							       &st, TXT_RUN);
			idle = 0;
			r = sendto(p->txt_fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
			if (r < 0 && errno != EAGAIN) {
				struct timespec ts = { 0, TXT_BACKOFF_NS };

				nanosleep(&ts, NULL); /* link down, no memory */
			} else if (c == __atomic_load_n(tx->consumer,
							__ATOMIC_ACQUIRE)) {
				sched_yield(); /* the engine must reap first */
			}
			continue;
		}
		if (!idle)
			idle = eng_now();
		if (eng_now() - idle < TXT_SPIN_NS) {
			sched_yield();
			continue;
		}
		/* asleep, unless a flush came between the look and now */
		atomic_store(&p->txt_state, TXT_SLEEP);
		atomic_thread_fence(memory_order_seq_cst);
		if (!txt_pending(tx))
			txt_futex(&p->txt_state, FUTEX_WAIT_PRIVATE, TXT_SLEEP);
		idle = 0;
	}
	return NULL;
}

static void txt_stop(struct rxdp_xsk_port *p)
{
	if (!p->txt_on)
		return;
	atomic_store(&p->txt_state, TXT_STOP);
	txt_futex(&p->txt_state, FUTEX_WAKE_PRIVATE, 1);
	pthread_join(p->txt, NULL);
	p->txt_on = false;
}

/*
 * SCHED_OTHER, whatever the engine's policy: a thread that spins may not
 * be SCHED_FIFO (it would own its CPU), and the engine that starts it is
 * FIFO outside streams. 0 or an error number.
 */
static int txt_create(struct rxdp_xsk_port *p)
{
	struct sched_param sp = { 0 };
	pthread_attr_t a;
	int err = pthread_attr_init(&a);

	if (err)
		return err;
	err = pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED);
	if (!err)
		err = pthread_attr_setschedpolicy(&a, SCHED_OTHER);
	if (!err)
		err = pthread_attr_setschedparam(&a, &sp);
	if (!err)
		err = pthread_create(&p->txt, &a, txt_main, p);
	pthread_attr_destroy(&a);
	return err;
}

/*
 * Whether the TX thread sends what a flush of n frames submitted (woken if
 * asleep and n is worth it; started at the first such flush)
 */
static bool txt_take(struct rxdp_xsk_port *p, uint32_t n)
{
	uint32_t st = TXT_SLEEP;
	int err;

	if (!p->txt_want)
		return false;
	if (!p->txt_on) {
		if (n < TXT_BATCH)
			return false;
		atomic_store(&p->txt_state, TXT_RUN);
		p->txt_fd = p->s[0].fd;
		p->txt_tx = p->s[0].tx;
		err = txt_create(p);
		if (err) {
			pr_warn("engine: cannot start a TX thread: %s; the "
				"engine sends itself\n",
				strerror(err));
			p->txt_want = false; /* the engine kicks, as before */
			return false;
		}
		pthread_setname_np(p->txt, "rxdp-tx");
		if (p->txt_cpus_set)
			pthread_setaffinity_np(p->txt, sizeof(p->txt_cpus),
					       &p->txt_cpus);
		p->txt_on = true;
		return true;
	}
	/* the submit before, the thread's look at the ring after */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&p->txt_state) == TXT_RUN)
		return true;
	if (n < TXT_BATCH ||
	    !atomic_compare_exchange_strong(&p->txt_state, &st, TXT_RUN))
		return false;
	txt_futex(&p->txt_state, FUTEX_WAKE_PRIVATE, 1);
	return true;
}

bool rxdp_xsk_port_tx_thread(struct rxdp_xsk_port *p, const cpu_set_t *cpus)
{
	p->txt_want = !p->bind_zerocopy;
	p->txt_cpus_set = cpus != NULL;
	if (cpus)
		p->txt_cpus = *cpus;
	return p->txt_want;
}

static int xp_tx_flush(void *port)
{
	struct rxdp_xsk_port *p = port;
	struct xsk_sock *s = &p->s[0];
	uint32_t n = s->queued;

	if (s->queued) {
		xsk_ring_prod__submit(&s->tx, s->queued);
		s->queued = 0;
		s->kick = true;
	}
	if (s->kick && txt_take(p, n))
		s->kick = false;
	/*
	 * Copy mode sends at most a small batch (32 descriptors in 6.x) per
	 * sendto() and says EAGAIN when it left some, or when the completion
	 * ring is full: kick until the kernel has taken every descriptor, a
	 * bounded number of times, reaping completions in between; what is
	 * left goes with the next flush (s->kick stays). EBUSY and ENOBUFS
	 * (the device or the kernel's memory is short) wait for it too. In
	 * zero-copy mode only a ring that asks for a wake-up gets one.
	 */
	for (int i = 0; i < 16 && s->kick; i++) {
		if (__atomic_load_n(s->tx.consumer, __ATOMIC_ACQUIRE) ==
		    *s->tx.producer) {
			s->kick = false;
			break;
		}
		if (!xsk_ring_prod__needs_wakeup(&s->tx) && p->bind_zerocopy)
			break;
		if (sendto(s->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0) {
			if (errno != EAGAIN && errno != ENETDOWN)
				break;
			sock_reap(p, s);
		}
	}
	sock_reap(p, s);
	/* while the TX thread sends, come back soon for the completions */
	return s->kick || p->loop_n || (p->txt_on && txt_pending(&s->tx));
}

/*
 * RX frames back to the fill ring (its lock held where shared). The ring
 * has room for every RX frame, but the kernel may publish its consumer
 * index late (it takes fill entries ahead, in batches): what does not fit
 * now waits in refill.
 */
static void fq_refill(struct xsk_fq *q, int fd, const uint64_t *addr,
		      uint32_t n)
{
	uint32_t idx, room;

	if (n)
		memcpy(q->refill + q->nrefill, addr, n * sizeof(*addr));
	q->nrefill += n;
	room = xsk_prod_nb_free(&q->fill, q->nrefill);
	if (room > q->nrefill)
		room = q->nrefill;
	if (!room || xsk_ring_prod__reserve(&q->fill, room, &idx) != room)
		return;
	for (uint32_t k = 0; k < room; k++)
		*xsk_ring_prod__fill_addr(&q->fill, idx + k) = q->refill[k];
	xsk_ring_prod__submit(&q->fill, room);
	q->nrefill -= room;
	memmove(q->refill, q->refill + room, q->nrefill * sizeof(*q->refill));
	if (xsk_ring_prod__needs_wakeup(&q->fill))
		recvfrom(fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

static void sock_refill(struct xsk_sock *s, const uint64_t *addr, uint32_t n)
{
	fq_lock(s->fq);
	fq_refill(s->fq, s->fd, addr, n);
	fq_unlock(s->fq);
}

/*
 * The queue of socket s fell behind (its lock held where shared): its RX
 * stock doubles from its spare frames (all that are left where fewer),
 * lowest address first, so that they go round in order as the first ones
 * do (a jumbo packet's frames stay adjacent)
 */
static void fq_grow(const struct rxdp_xsk_port *p, struct xsk_sock *s)
{
	struct xsk_fq *q = s->fq;
	uint64_t fs = (s->own_umem ? s->own_umem : p->umem)->frame_size;
	uint32_t spare = q->rx_share - q->rx_frames;
	uint32_t k = spare < q->rx_frames ? spare : q->rx_frames;
	uint64_t first = q->rx_top - (uint64_t)spare * fs;

	for (uint32_t j = 0; j < k; j++)
		q->refill[q->nrefill + j] = first + (uint64_t)j * fs;
	q->nrefill += k;
	q->rx_frames += k;
	fq_refill(q, s->fd, NULL, 0);
	pr_info("engine: AF_XDP socket %d fell behind: %u RX frames in "
		"circulation now\n",
		s->fd, q->rx_frames);
}

/* The frames of the last rx_burst() (all its descriptors) back to fill */
static void xp_rx_release(void *port, struct rxdp_frame *f, int n)
{
	struct rxdp_xsk_port *p = port;
	struct xsk_sock *s = &p->s[p->rx_sock];
	uint64_t mask = ~((uint64_t)p->umem->frame_size - 1);
	uint32_t nd = p->rx_ndesc;

	(void)f;
	(void)n;
	if (p->rx_loop) {
		/* looped-back TX buffers go back to the TX pool */
		for (uint32_t k = 0; k < p->rx_loop; k++) {
			p->s[0].free[p->s[0].nfree++] =
				p->loop_addr[p->loop_head];
			p->loop_head = (p->loop_head + 1) % p->loop_cap;
		}
		p->loop_n -= p->rx_loop;
		p->rx_loop = 0;
		return;
	}
	if (!nd)
		return;
	p->rx_ndesc = 0;
	xsk_ring_cons__release(&s->rx, nd);
	for (uint32_t k = 0; k < nd; k++)
		p->rx_addrs[k] &= mask;
	sock_refill(s, p->rx_addrs, nd);
}

/*
 * Join the descriptors [d, e] of one multi-buffer packet in place, where
 * they lie in UMEM frames one after the other: each one's data moves back
 * to follow the previous one's, never past its own start (those frames are
 * the packet's, the engine's until rx_release()). False where they do not.
 */
static bool rx_join_in_place(struct rxdp_xsk_port *p, struct xsk_sock *s,
			     uint32_t idx, uint32_t d, uint32_t e,
			     struct rxdp_frame *f)
{
	uint64_t fs = p->umem->frame_size;
	const struct xdp_desc *x = xsk_ring_cons__rx_desc(&s->rx, idx + d);
	uint64_t first = x->addr, frame = first & ~(fs - 1),
		 end = first + x->len;

	for (uint32_t k = d + 1; k <= e; k++) {
		x = xsk_ring_cons__rx_desc(&s->rx, idx + k);
		frame += fs;
		if ((x->addr & ~(fs - 1)) != frame)
			return false;
	}
	for (uint32_t k = d + 1; k <= e; k++) {
		x = xsk_ring_cons__rx_desc(&s->rx, idx + k);
		memmove(xsk_umem__get_data(s->area, end),
			xsk_umem__get_data(s->area, x->addr), x->len);
		end += x->len;
	}
	f->data = xsk_umem__get_data(s->area, first);
	f->len = (uint32_t)(end - first);
	return true;
}

/*
 * Join the descriptors [d, e] of one multi-buffer packet into rx_joined;
 * false if it does not fit (the packet is dropped, its frames recycled).
 */
static bool rx_join(struct rxdp_xsk_port *p, struct xsk_sock *s, uint32_t idx,
		    uint32_t d, uint32_t e, struct rxdp_frame *f)
{
	uint32_t len = 0;

	for (uint32_t k = d; k <= e; k++) {
		const struct xdp_desc *x =
			xsk_ring_cons__rx_desc(&s->rx, idx + k);

		if (x->len > p->rx_joined_size - len) {
			p->drops_rx_big++;
			return false;
		}
		memcpy(p->rx_joined + len, xsk_umem__get_data(s->area, x->addr),
		       x->len);
		len += x->len;
	}
	f->data = p->rx_joined;
	f->len = len;
	return true;
}

/*
 * How many of socket s's RX frames are not in its fill ring (waiting in its
 * RX ring, the first at idx, or for room to go back), in 1/1000 of them
 * all: when none is left in the fill ring, the kernel drops. (Where the
 * fill ring is shared, the frames waiting in the other sockets' RX rings
 * are not seen.)
 */
static uint32_t rx_permille(const struct xsk_sock *s, uint32_t idx)
{
	const struct xsk_fq *q = s->fq;
	uint32_t waiting = __atomic_load_n(s->rx.producer, __ATOMIC_ACQUIRE) -
			   idx + q->nrefill;

	if (!q->rx_frames || waiting >= q->rx_frames)
		return 1000;
	return (uint32_t)((uint64_t)waiting * 1000 / q->rx_frames);
}

/*
 * Before a burst of n descriptors from socket s's RX ring (the first at
 * idx): RX frames still waiting for room go back to the fill ring, and
 * the RX stock doubles when the burst finds it running dry. A shared fill
 * ring is looked at only with a burst (under its lock).
 */
static void sock_rx_stock(struct rxdp_xsk_port *p, struct xsk_sock *s,
			  uint32_t n, uint32_t idx)
{
	struct xsk_fq *q = s->fq;

	if (!n && (q->shared || !q->nrefill))
		return;
	fq_lock(q);
	if (q->nrefill)
		fq_refill(q, s->fd, NULL, 0);
	if (n) {
		p->rx_permille = rx_permille(s, idx);
		if (p->rx_permille >= XSK_RX_GROW_PERMILLE &&
		    q->rx_frames < q->rx_share)
			fq_grow(p, s);
	}
	fq_unlock(q);
}

static uint32_t xp_rx_fill(void *port)
{
	const struct rxdp_xsk_port *p = port;

	return p->rx_permille;
}

/*
 * Up to max packets from the next socket with any. The descriptors taken
 * are remembered for rx_release(), which must come before the next burst.
 */
/* A burst of looped-back frames; the sockets have the next turn */
static int xp_rx_loop(struct rxdp_xsk_port *p, struct rxdp_frame *f, int max)
{
	uint32_t k, n = p->loop_n < (uint32_t)max ? p->loop_n : (uint32_t)max;

	for (k = 0; k < n; k++) {
		uint32_t i = (p->loop_head + k) % p->loop_cap;

		f[k].data = p->s[0].area + p->loop_addr[i];
		f[k].len = p->loop_len[i];
		f[k].cookie = p->loop_addr[i];
	}
	p->rx_loop = n;
	p->rx_permille = 0; /* its own frames: no receive ring */
	p->loop_yield = true;
	return (int)n;
}

static int xp_rx_burst(void *port, struct rxdp_frame *f, int max)
{
	struct rxdp_xsk_port *p = port;

	if (p->loop_n && !p->loop_yield)
		return xp_rx_loop(p, f, max);
	p->loop_yield = false;

	for (int tries = 0; tries < p->n; tries++) {
		int i = p->rx_next;
		struct xsk_sock *s = &p->s[i];
		uint32_t idx, n, d = 0;
		bool joined = false;
		int got = 0;

		p->rx_next = (p->rx_next + 1) % p->n;
		n = xsk_ring_cons__peek(&s->rx, max, &idx);
		sock_rx_stock(p, s, n, idx);
		while (d < n && got < max) {
			const struct xdp_desc *x =
				xsk_ring_cons__rx_desc(&s->rx, idx + d);
			uint32_t e = d;

			if (x->options & XDP_PKT_CONTD) {
				/* one packet in descriptors d..e */
				while (e < n &&
				       (xsk_ring_cons__rx_desc(&s->rx, idx + e)
						->options &
					XDP_PKT_CONTD))
					e++;
				if (e == n)
					break; /* the next burst takes it */
				if (rx_join_in_place(p, s, idx, d, e,
						     &f[got])) {
					got++;
				} else {
					if (joined)
						break; /* rx_joined is taken */
					joined = true;
					if (rx_join(p, s, idx, d, e, &f[got]))
						got++;
				}
			} else {
				f[got].data =
					xsk_umem__get_data(s->area, x->addr);
				f[got].len = x->len;
				got++;
			}
			for (; d <= e; d++)
				p->rx_addrs[d] =
					xsk_ring_cons__rx_desc(&s->rx, idx + d)
						->addr;
		}
		if (d < n)
			xsk_ring_cons__cancel(&s->rx, n - d);
		if (!d)
			continue;
		p->rx_sock = i;
		p->rx_ndesc = d;
		if (!got) /* only a packet too large to join: recycle it */
			xp_rx_release(p, f, 0);
		return got;
	}
	/* the sockets had nothing: the loop's turn after all */
	return p->loop_n ? xp_rx_loop(p, f, max) : 0;
}

static int xp_poll_fds(void *port, int *fds, int max)
{
	struct rxdp_xsk_port *p = port;
	int n = 0;

	for (int i = 0; i < p->n && n < max; i++)
		fds[n++] = p->s[i].fd;
	return n;
}

/*
 * The ports handed to a successor (engine.h; README.md, "Takeover"): a
 * device's, one per engine, at once, as engines on one queue share its
 * fill and completion rings across their ports. What the kernel holds
 * stays where it is: the fill ring's frames, the RX ring's (received
 * meanwhile too: the successor takes them), the rings' indexes in their
 * mappings. What only this process knows goes into the state: each
 * socket's port, its queue's rings (its own, or those of a socket before
 * it), its frames (its TX pool; its RX share and how many of those go
 * round) and the RX frames the fill ring had no room for yet. TX is
 * drained first, so that every TX buffer is free at the handover (the
 * kernel's copies in flight cannot be named): frames queued are sent, the
 * completions waited for; looped-back frames not yet received are lost,
 * as on a wire.
 */
#define XT_MAGIC 0x50585852U /* "RXXP" */
#define XT_VERSION 1U
#define XT_DRAIN_US 1000000 /* the kernel's TX completions, at most */
#define XT_OWN (-1) /* a socket with its own fill and completion rings */

struct xt_sock {
	uint64_t tx_base, rx_top;
	uint64_t own_umem; /* the size of its own UMEM, 0: the ports' */
	uint32_t tx_frames, rx_share, rx_frames, nrefill;
	uint32_t port; /* the port (engine) it is in, in order */
	int32_t fq; /* XT_OWN, or the socket whose rings it shares */
};

struct xt_head {
	uint32_t magic, version, size, n; /* n sockets */
	uint32_t nports, ring_size, bind_flags, frame_size;
	uint64_t umem_size, share;
	uint32_t zerocopy, txt_want;
	struct xt_sock s[];
	/* then each socket's nrefill addresses, in socket order */
};

/* The i-th socket of the ports, in their order */
static struct xsk_sock *xt_sock(struct rxdp_xsk_port *const *ps, int np, int i,
				int *port)
{
	for (int k = 0; k < np; i -= ps[k]->n, k++)
		if (i < ps[k]->n) {
			*port = k;
			return &ps[k]->s[i];
		}
	return NULL;
}

static int xt_nsocks(struct rxdp_xsk_port *const *ps, int np)
{
	int n = 0;

	for (int k = 0; k < np; k++)
		n += ps[k]->n;
	return n;
}

/* Port p: loopback dropped, its queued TX sent, its TX thread stopped */
static int xt_quiesce_port(struct rxdp_xsk_port *p)
{
	struct xsk_sock *s0 = &p->s[0];
	bool txt_want = p->txt_want;

	if (p->rx_ndesc)
		return -EBUSY; /* in a burst: not at the end of a pass */
	txt_stop(p);
	while (p->loop_n) {
		s0->free[s0->nfree++] = p->loop_addr[p->loop_head];
		p->loop_head = (p->loop_head + 1) % p->loop_cap;
		p->loop_n--;
	}
	p->rx_loop = 0;
	p->txt_want = false; /* the flush starts no thread */
	xp_tx_flush(p);
	p->txt_want = txt_want;
	return 0;
}

/* Every TX buffer of every socket back, the refill pushed where it fits */
static int xt_quiesce(struct rxdp_xsk_port *const *ps, int np)
{
	uint64_t end = eng_now() + XT_DRAIN_US * 1000ULL;
	bool busy = true;
	int err;

	for (int k = 0; k < np; k++)
		if ((err = xt_quiesce_port(ps[k])))
			return err;
	while (busy && eng_now() < end) {
		busy = false;
		for (int k = 0; k < np; k++)
			for (int i = 0; i < ps[k]->n; i++) {
				struct xsk_sock *s = &ps[k]->s[i];

				if (__atomic_load_n(s->tx.consumer,
						    __ATOMIC_ACQUIRE) !=
				    *s->tx.producer)
					sendto(s->fd, NULL, 0, MSG_DONTWAIT,
					       NULL, 0);
				sock_reap(ps[k], s);
				busy |= s->nfree != s->tx_frames;
			}
		if (busy)
			usleep(100);
	}
	for (int k = 0; k < np; k++)
		for (int i = 0; i < ps[k]->n; i++)
			if (!ps[k]->s[i].fq_mem)
				sock_refill(&ps[k]->s[i], NULL, 0);
	return busy ? -EBUSY : 0;
}

/* The index of the socket that owns s's queue's rings */
static int xt_fq_owner(struct rxdp_xsk_port *const *ps, int np,
		       const struct xsk_sock *s)
{
	int n = xt_nsocks(ps, np), k;

	for (int i = 0; i < n; i++) {
		const struct xsk_sock *o = xt_sock(ps, np, i, &k);

		if (o->fq == s->fq && !o->fq_mem)
			return i;
	}
	return -1;
}

long rxdp_xsk_ports_save(struct rxdp_xsk_port *const *ps, int np, void *buf,
			 size_t len)
{
	const struct rxdp_xsk_port *p0 = ps[0];
	struct xt_head *t = buf;
	int n = xt_nsocks(ps, np), err, k;
	uint64_t *refill;
	size_t need;

	if (np < 1 || n > RXDP_CTL_MAX_XSKS)
		return -EINVAL;
	err = xt_quiesce(ps, np);
	if (err)
		return err;
	need = sizeof(*t) + (size_t)n * sizeof(t->s[0]);
	for (int i = 0; i < n; i++) {
		const struct xsk_sock *s = xt_sock(ps, np, i, &k);

		if (!s->fq_mem)
			need += s->fq->nrefill * sizeof(uint64_t);
	}
	if (len < need)
		return (long)need;
	memset(t, 0, need);
	*t = (struct xt_head){ .magic = XT_MAGIC,
			       .version = XT_VERSION,
			       .size = (uint32_t)need,
			       .n = (uint32_t)n,
			       .nports = (uint32_t)np,
			       .ring_size = p0->ring_size,
			       .bind_flags = p0->bind_flags,
			       .frame_size = p0->umem->frame_size,
			       .umem_size = p0->umem->size,
			       .share = p0->share,
			       .zerocopy = p0->bind_zerocopy,
			       .txt_want = p0->txt_want };
	refill = (uint64_t *)&t->s[n];
	for (int i = 0; i < n; i++) {
		const struct xsk_sock *s = xt_sock(ps, np, i, &k);
		const struct xsk_fq *q = s->fq;
		struct xt_sock *x = &t->s[i];

		x->port = (uint32_t)k;
		x->tx_base = s->tx_base;
		x->tx_frames = s->tx_frames;
		x->own_umem = s->own_umem ? s->own_umem->size : 0;
		x->fq = s->fq_mem ? xt_fq_owner(ps, np, s) : XT_OWN;
		if (s->fq_mem)
			continue;
		x->rx_top = q->rx_top;
		x->rx_share = q->rx_share;
		x->rx_frames = q->rx_frames;
		x->nrefill = q->nrefill;
		memcpy(refill, q->refill, q->nrefill * sizeof(*refill));
		refill += q->nrefill;
	}
	return (long)need;
}

int rxdp_xsk_ports_takeover_fds(struct rxdp_xsk_port *const *ps, int np,
				int *fds, int max)
{
	int n = 0;

	for (int k = 0; k < np; k++)
		n += rxdp_xsk_port_fds(ps[k], fds + n, max - n);
	for (int k = 0; k < np; k++)
		for (int i = 0; i < ps[k]->n && n < max; i++)
			if (ps[k]->s[i].own_umem)
				fds[n++] = ps[k]->s[i].own_umem->fd;
	return n;
}

/* A frame address of umem, of a frame's start */
static bool xt_addr_ok(const struct rxdp_umem *u, uint64_t a)
{
	return a < u->size && !(a % u->frame_size);
}

/*
 * Socket i of p from its saved record: its rings mapped as the kernel has
 * them; join: the rings of the socket whose queue it shares, or NULL
 */
static int xt_sock_adopt(struct rxdp_xsk_port *p, int i,
			 const struct xt_sock *x, const uint64_t *refill,
			 struct xsk_fq *join)
{
	struct xsk_sock *s = &p->s[i];
	const struct rxdp_umem *u = s->own_umem ? s->own_umem : p->umem;
	uint64_t tx_end = x->tx_base + (uint64_t)x->tx_frames * p->tx_buf;
	struct xsk_fq *q;
	int err;

	if (!x->tx_frames || !xt_addr_ok(u, x->tx_base) || tx_end > u->size)
		return -EINVAL;
	s->area = u->area;
	if (join) {
		if (fq_join(s, join))
			return -EINVAL;
	} else {
		if (x->rx_frames > x->rx_share || x->nrefill > x->rx_share ||
		    x->rx_top > u->size || x->rx_top % u->frame_size ||
		    (uint64_t)x->rx_share * u->frame_size > x->rx_top)
			return -EINVAL;
		for (uint32_t k = 0; k < x->nrefill; k++)
			if (!xt_addr_ok(u, refill[k]))
				return -EINVAL;
		s->fq = fq_new();
		if (!s->fq)
			return -ENOMEM;
	}
	q = s->fq;
	err = sock_map(s, p->ring_size);
	if (err)
		return err;
	if (!join) {
		q->rx_top = x->rx_top;
		q->rx_share = x->rx_share;
		q->rx_frames = x->rx_frames;
		q->refill = calloc(x->rx_share ? x->rx_share : 1,
				   sizeof(*q->refill));
		if (!q->refill)
			return -ENOMEM;
		memcpy(q->refill, refill, x->nrefill * sizeof(*refill));
		q->nrefill = x->nrefill;
	}
	s->tx_base = x->tx_base;
	return sock_tx_pool(p, i, x->tx_frames);
}

/* Ports adopt gave up on: their fds stay the caller's */
static void xt_abandon(struct rxdp_xsk_port **ps, int np)
{
	for (int k = 0; k < np; k++) {
		for (int i = 0; ps[k] && i < ps[k]->n; i++) {
			ps[k]->s[i].fd = -1;
			if (ps[k]->s[i].own_umem)
				ps[k]->s[i].own_umem->fd = -1;
		}
		rxdp_xsk_port_destroy(ps[k]);
		ps[k] = NULL;
	}
}

static int xt_refuse(char *why, size_t whylen, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int xt_refuse(char *why, size_t whylen, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return -err;
}

/* The saved state is one this file reads, whole; its UMEMs counted */
static int xt_check(const struct xt_head *t, size_t len, int *nown, char *why,
		    size_t whylen)
{
	size_t need;

	if (len < sizeof(*t) || t->magic != XT_MAGIC)
		return xt_refuse(why, whylen, EINVAL,
				 "not an AF_XDP port's state");
	if (t->version != XT_VERSION)
		return xt_refuse(why, whylen, EINVAL,
				 "AF_XDP port state version %u (this rxdpd "
				 "reads %u)",
				 t->version, XT_VERSION);
	if (t->n < 1 || t->n > RXDP_CTL_MAX_XSKS || t->nports < 1 ||
	    t->nports > t->n || t->size != len)
		return xt_refuse(why, whylen, EINVAL,
				 "a damaged AF_XDP port state");
	need = sizeof(*t) + t->n * sizeof(t->s[0]);
	*nown = 0;
	for (uint32_t i = 0; i < t->n && need <= len; i++) {
		const struct xt_sock *x = &t->s[i];

		need += x->nrefill * sizeof(uint64_t);
		*nown += !!x->own_umem;
		/* in port order; sharing the rings of an earlier socket of
		 * the port's UMEM, which has its own */
		if (x->port >= t->nports ||
		    (i && x->port < t[0].s[i - 1].port) ||
		    (x->fq != XT_OWN &&
		     (x->fq < 0 || (uint32_t)x->fq >= i ||
		      t->s[x->fq].fq != XT_OWN || x->own_umem ||
		      t->s[x->fq].own_umem || x->nrefill)))
			return xt_refuse(why, whylen, EINVAL,
					 "a damaged AF_XDP port state");
	}
	if (need != len)
		return xt_refuse(why, whylen, EINVAL,
				 "a damaged AF_XDP port state");
	return 0;
}

int rxdp_xsk_ports_adopt(struct rxdp_umem *umem, const int *fds, int nfds,
			 const void *buf, size_t len, struct rxdp_xsk_port **ps,
			 int maxp, char *why, size_t whylen)
{
	const struct xt_head *t = buf;
	struct xsk_sock *sock[RXDP_CTL_MAX_XSKS];
	const uint64_t *refill;
	int nown = 0, err, first = 0;

	err = xt_check(t, len, &nown, why, whylen);
	if (err)
		return err;
	if (nfds != (int)t->n + nown || (int)t->nports > maxp)
		return xt_refuse(why, whylen, EINVAL,
				 "%d descriptors and %d ports for %u sockets "
				 "and %d UMEMs in %u ports",
				 nfds, maxp, t->n, nown, t->nports);
	if (t->umem_size != umem->size || t->frame_size != umem->frame_size)
		return xt_refuse(why, whylen, EINVAL,
				 "the UMEM is not the one the state is about");
	memset(ps, 0, t->nports * sizeof(*ps));
	refill = (const uint64_t *)&t->s[t->n];
	nown = 0;
	for (uint32_t k = 0; k < t->nports; k++) {
		int cnt = 0;
		struct rxdp_xsk_port *p;

		while (first + cnt < (int)t->n && t->s[first + cnt].port == k)
			cnt++;
		p = ps[k] = port_alloc(umem, cnt ? cnt : 1, t->ring_size,
				       t->bind_flags);
		if (!p || !cnt) {
			err = p ? EINVAL : errno;
			goto fail;
		}
		p->own_fds = true;
		p->share = t->share;
		p->bind_zerocopy = !!t->zerocopy;
		p->txt_want = !!t->txt_want;
		for (int j = 0; j < cnt; j++) {
			const struct xt_sock *x = &t->s[first + j];
			struct xsk_sock *s = &p->s[j];

			s->fd = fds[first + j];
			p->n = j + 1;
			err = 0;
			if (x->own_umem) {
				s->own_umem = calloc(1, sizeof(*s->own_umem));
				err = s->own_umem ? -rxdp_umem_adopt(
							    s->own_umem,
							    fds[t->n + nown],
							    umem->frame_size)
						  : ENOMEM;
				if (!err && s->own_umem->size != x->own_umem)
					err = EINVAL;
				nown++;
			}
			if (!err)
				err = -xt_sock_adopt(p, j, x, refill,
						     x->fq == XT_OWN
							     ? NULL
							     : sock[x->fq]->fq);
			if (err) {
				snprintf(why, whylen, "AF_XDP socket %d: %s",
					 first + j, strerror(err));
				goto fail_why;
			}
			sock[first + j] = s;
			refill += x->nrefill;
		}
		first += cnt;
	}
	return (int)t->nports;
fail:
	snprintf(why, whylen, "AF_XDP port: %s", strerror(err));
fail_why:
	xt_abandon(ps, (int)t->nports);
	return -err;
}

const struct rxdp_port_ops rxdp_xsk_port_ops = {
	.tx_get = xp_tx_get,
	.tx_put = xp_tx_put,
	.tx_abort = xp_tx_abort,
	.tx_flush = xp_tx_flush,
	.rx_burst = xp_rx_burst,
	.rx_release = xp_rx_release,
	.rx_fill = xp_rx_fill,
	.poll_fds = xp_poll_fds,
};
