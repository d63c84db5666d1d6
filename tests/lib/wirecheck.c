// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * wirecheck: the project's data checker for the wire. A stream of messages
 * between two verbs programs, every byte of every message checked at its
 * receiver, every message counted against what was sent.
 *
 *   wirecheck [-d DEV] [-g GIDX] [-p PORT]             the target (server)
 *   wirecheck [-d DEV] [-g GIDX] [-p PORT] [STREAM] ADDR  the initiator
 *
 * The initiator (the client) says what the stream is; the target only
 * listens, makes what the client asks for and checks what arrives. Built
 * against the system's <infiniband/verbs.h> and run on any libibverbs
 * (rxdp's, rdma-core's with Soft-RoCE), like every unmodified verbs program.
 *
 * STREAM (the client's options):
 *   -t rc|uc|ud       transport (rc)
 *   -o OPS            comma-separated: send, send_imm, write, write_imm,
 *                     read, or all (those the transport has); message i's
 *                     operation is drawn from them by (seed, i) (send)
 *   -s N | MIN-MAX    message sizes: message i's is drawn from the range by
 *                     (seed, i), the range's ends and the path MTU and its
 *                     neighbours often (1024)
 *   -n N              messages per QP (1000); -D SECS sends for SECS instead
 *   -q N              QPs, each a stream of its own (1)
 *   --sge N           each message gathered from and scattered to N pieces
 *                     with guard bytes between them (1)
 *   --depth N         WRs in flight per QP, at least 16 (64)
 *   --srq             the target's QPs receive from one shared SRQ
 *   --inline N        sends of at most N bytes posted inline (0)
 *   --seed N          the pattern's seed (1)
 *   -m MTU            path MTU, 256..4096 (the port's active MTU)
 *   -u N              RC ACK timeout, 4.096 us x 2^N (14)
 *   --lossy           UC and UD may lose, duplicate or reorder messages (a
 *                     lossy link): counted, not failed. RC promises every
 *                     message once and in order, lossy or not. (On a wire
 *                     that duplicates or reorders, UC and UD streams of
 *                     Sends only: a Write placed again, or late, lands in
 *                     a slot already given to the next one.)
 *   --settle MS       how long the target waits for the last messages of
 *                     UC and UD, and the client at a stalled window (2000)
 *   --sl N            both sides' address vectors at service level N, 0..15
 *                     (0): rxdpd --tc's classes
 * Both sides: -T SECS ends the run as failed after SECS (300); --spin polls
 * the CQs instead of sleeping on a completion channel; -i PORT (1).
 * --sabotage KIND:N makes the client wrong on purpose at QP 0's message N,
 * for the checker's own test (tests/lib/wirecheck.sh): corrupt (one bit of
 * it flipped), skip (never posted, counted as sent), repeat (posted twice),
 * short (a byte shorter), misplace (a Write or Read one byte off its place).
 *
 * What is checked. Byte o of message i of QP q is a function of (seed, q,
 * i, o): its first 4 bytes carry i (so a lost or reordered UC/UD message is
 * named), the rest a hash. Sends land in receive buffers scattered over
 * --sge pieces with guard bytes around each; RDMA Writes in slots of the
 * target's memory at an offset drawn per message, guard bytes around; Reads
 * fetch a span at an offset drawn per message from a region the target
 * filled. At the target each completion's status, opcode, QP, length,
 * immediate data (the message's number), UD source QP, every byte and every
 * guard byte are checked; a Write has no completion at the target, so the
 * next message with one (or a zero-length Send with immediate, the
 * "doorbell", posted after every few Writes and at the end) tells the target
 * that every Write before it was placed (IBTA 9.5 ordering), and it checks
 * them then. The client checks its own completions and every byte a Read
 * brought. Flow control is the test's own (over the TCP connection): the
 * client never has more messages in flight than the target has buffers and
 * Write slots, so nothing is lost to RNR, and a UC/UD message that never
 * comes is counted lost.
 *
 * Exit 0 when every check held and nothing was lost (or, with --lossy, only
 * UC/UD messages were); 1 on any wrong byte, wrong completion, or loss the
 * transport does not allow; 2 on a usage or setup error. Both ends print
 * one line "wirecheck: ..." with the counts, and a "summary:" line of
 * key=value pairs; the client's also has elapsed_ms, the run's time, and
 * max_gap_ms, the longest it waited with work outstanding and nothing
 * completing (a stall). An asynchronous event of the device (a QP's fatal
 * error, a port error, the device's end) fails either end too (async=).
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define WK_VERSION 2 /* 2: cfg.sl */
#define GUARD 64 /* guard bytes before and after a buffer */
#define GAP 16 /* guard bytes between two SGE pieces */
#define MARK 0xa5 /* what an untouched byte holds */
#define GRH_LEN 40 /* a UD receive's first bytes */
#define DOORBELL (1U << 31) /* immediate data of a doorbell */
#define QKEY 0x11111111
#define MAX_QPS 256
#define MAX_SGE 16
#define MAX_REPORTED 10 /* wrong messages printed in detail */

enum op {
	OP_SEND,
	OP_SEND_IMM,
	OP_WRITE,
	OP_WRITE_IMM,
	OP_READ,
	OP_N
};
static const char *const op_name[OP_N] = { "send", "send_imm", "write",
					   "write_imm", "read" };

/* What the client asks for (host order here, big-endian on the wire) */
struct cfg {
	uint32_t version, qp_type, nops, ops[OP_N];
	uint32_t min_size, max_size, nqps, sges, depth, seed, mtu;
	uint32_t lossy, srq, inline_max, settle_ms;
	uint32_t timeout;
	uint32_t sl;
};
#define CFG_WORDS (sizeof(struct cfg) / 4)

/* One QP's address, each way */
struct qp_info {
	uint32_t qpn, psn, lid, rkey;
	uint64_t wslots, rregion;
	uint8_t gid[16];
};

/* Control messages over TCP once the stream runs */
enum ctl_type {
	CTL_CREDIT = 1, /* target: qp, a = server-visible messages accounted */
	CTL_DONE, /* client: qp, a = messages sent */
	CTL_SKIP, /* client: qp, a = account every message below a */
	CTL_REPORT, /* target: qp, then the counters (struct counts) */
	CTL_ERROR, /* either: a line of text follows (a = its length) */
	CTL_READY, /* target: its QPs' infos follow */
};
struct ctl {
	uint32_t type, qp;
	uint64_t a, b;
};

struct counts {
	uint64_t delivered, bytes, lost, partial, corrupt, dup, late, bad_wc;
};
#define COUNT_WORDS (sizeof(struct counts) / 8)

static const char *prog = "wirecheck";
static int failed; /* a check failed: the exit code */
static unsigned reported;

static void die(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* A wrong message: counted by the caller, printed for the first few */
static void wrong(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void wrong(const char *fmt, ...)
{
	va_list ap;

	failed = 1;
	if (reported++ >= MAX_REPORTED) {
		if (reported == MAX_REPORTED + 1)
			fprintf(stderr,
				"%s: (further wrong messages not shown)\n",
				prog);
		return;
	}
	va_start(ap, fmt);
	fprintf(stderr, "%s: WRONG ", prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --- the pattern ----------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static struct cfg C; /* the stream, on both sides once agreed */

/* The hash of (seed, qp, message, what): what tells the draws apart */
static uint64_t draw(uint32_t qp, uint64_t id, uint64_t what)
{
	return mix64(mix64((uint64_t)C.seed * 0x9e3779b97f4a7c15ULL ^ qp) ^
		     mix64(id * 0xc2b2ae3d27d4eb4fULL + what));
}

enum {
	DRAW_KEY,
	DRAW_OP,
	DRAW_SIZE,
	DRAW_SIZE2,
	DRAW_SPLIT,
	DRAW_OFF
};

/*
 * A stream of bytes: message bytes carry the message's number in their
 * first 4 bytes (xored with a mask of the seed) and a hash of (key, offset
 * / 8) after; a Read region (id_bytes 0) only the hash
 */
struct pat {
	uint64_t key;
	uint8_t id[4];
	int id_bytes;
};

static uint32_t id_mask(uint32_t qp)
{
	return (uint32_t)draw(qp, ~0ULL, 0);
}

static struct pat pat_msg(uint32_t qp, uint64_t id)
{
	struct pat p = { .key = draw(qp, id, DRAW_KEY), .id_bytes = 4 };
	uint32_t v = htole32((uint32_t)id ^ id_mask(qp));

	memcpy(p.id, &v, 4);
	return p;
}

static struct pat pat_region(uint32_t qp)
{
	struct pat p = { .key = draw(qp, ~1ULL, DRAW_KEY) };

	return p;
}

/* Bytes [off, off + len) of the pattern into dst */
static void pat_fill(const struct pat *p, uint64_t off, uint64_t len,
		     uint8_t *dst)
{
	while (len) {
		uint64_t w = off >> 3, word;
		unsigned b = off & 7, k = 8 - b;

		if (off < (uint64_t)p->id_bytes) {
			*dst++ = p->id[off++];
			len--;
			continue;
		}
		word = htole64(mix64(p->key + w * 0x9e3779b97f4a7c15ULL));
		if (k > len)
			k = (unsigned)len;
		memcpy(dst, (uint8_t *)&word + b, k);
		dst += k;
		off += k;
		len -= k;
	}
}

/* The first offset in [0, len) where src differs from the pattern at off + that, or -1 */
static int64_t pat_cmp(const struct pat *p, uint64_t off, uint64_t len,
		       const uint8_t *src)
{
	uint8_t buf[4096];
	uint64_t done = 0;

	while (done < len) {
		uint64_t k = len - done < sizeof(buf) ? len - done
						      : sizeof(buf);

		pat_fill(p, off + done, k, buf);
		if (memcmp(buf, src + done, k))
			for (uint64_t i = 0; i < k; i++)
				if (buf[i] != src[done + i])
					return (int64_t)(done + i);
		done += k;
	}
	return -1;
}

static uint8_t pat_byte(const struct pat *p, uint64_t off)
{
	uint8_t b;

	pat_fill(p, off, 1, &b);
	return b;
}

/* The first offset in [0, len) not holding MARK, or -1 */
static int64_t unmarked(const uint8_t *p, uint64_t len)
{
	for (uint64_t i = 0; i < len; i++)
		if (p[i] != MARK)
			return (int64_t)i;
	return -1;
}

/* --- what each message is -------------------------------------------------- */

static enum op op_of(uint32_t qp, uint64_t id)
{
	return (enum op)C.ops[draw(qp, id, DRAW_OP) % C.nops];
}

/* The server sees these: it gets a completion, or Write slots to check */
static bool target_sees(enum op o)
{
	return o != OP_READ;
}

static uint32_t clamp(uint64_t v)
{
	return v < C.min_size	? C.min_size
	       : v > C.max_size ? C.max_size
				: (uint32_t)v;
}

static uint32_t size_of(uint32_t qp, uint64_t id)
{
	uint64_t h = draw(qp, id, DRAW_SIZE), h2 = draw(qp, id, DRAW_SIZE2);
	uint64_t span = (uint64_t)C.max_size - C.min_size + 1;
	unsigned bits;

	if (C.min_size == C.max_size)
		return C.min_size;
	switch (h % 8) {
	case 0:
		return C.min_size;
	case 1:
		return C.max_size;
	case 2:
		return clamp(C.mtu - 1);
	case 3:
		return clamp(C.mtu);
	case 4:
		return clamp((uint64_t)C.mtu + 1);
	case 5:
		/* small and large alike: uniform in the number of bits */
		bits = (unsigned)(h2 % 33);
		return clamp(C.min_size +
			     (bits ? (h2 >> 8) % (1ULL << bits) : 0));
	default:
		return (uint32_t)(C.min_size + h2 % span);
	}
}

/*
 * Piece lengths of len bytes in at most n SGEs (each at least one byte,
 * none when len is 0): returns the number of pieces
 */
static int split(uint64_t h, uint32_t len, int n, uint32_t *piece)
{
	uint32_t left = len;
	int k;

	if (n > (int)len)
		n = (int)len;
	for (k = 0; k < n - 1; k++) {
		uint32_t most = left - (uint32_t)(n - 1 - k);

		h = mix64(h + (uint64_t)k);
		piece[k] = 1 + (uint32_t)(h % most);
		/* keep the rest for the others more often than not */
		if (piece[k] > most / 2 + 1 && (h >> 40) % 2)
			piece[k] = most / 2 + 1;
		left -= piece[k];
	}
	if (n > 0)
		piece[n - 1] = left;
	return n;
}

/* Bytes of a buffer of n pieces of cap bytes in all, guards included */
static uint64_t sg_buf_len(uint64_t cap, int n)
{
	return 2 * GUARD + cap + (uint64_t)(n > 1 ? n - 1 : 0) * GAP;
}

/* The SGEs of pieces laid out at buf (GUARD, piece, GAP, piece, ..., GUARD) */
static void sg_lay(uint8_t *buf, uint32_t lkey, const uint32_t *piece, int n,
		   struct ibv_sge *sge)
{
	uint8_t *p = buf + GUARD;

	for (int k = 0; k < n; k++) {
		sge[k].addr = (uintptr_t)p;
		sge[k].length = piece[k];
		sge[k].lkey = lkey;
		p += piece[k] + GAP;
	}
}

/* --- verbs ------------------------------------------------------------------ */

struct qpst {
	uint32_t idx;
	struct ibv_qp *qp;
	struct ibv_ah *ah;
	struct qp_info me, peer;
	struct ibv_mr *mr;
	uint8_t *mem;
	struct counts n; /* the target's counts (the client: its report) */
	uint64_t total; /* messages to send (client), sent (target, from DONE) */
	/* the client */
	uint64_t next; /* the next message to post */
	uint64_t sv_posted; /* messages posted that the target sees */
	uint64_t credit; /* of those, how many the target accounted */
	uint64_t wr_seq, wr_done; /* WRs posted, completed */
	uint32_t writes_unsignalled; /* Writes since the last message with a completion there */
	uint64_t last_credit_ms;
	bool done_sent, reported;
	uint64_t bad_wc, rd_ok, rd_bytes, rd_bad;
	/* the target */
	uint64_t expect; /* the lowest message not yet accounted */
	uint64_t sv_seen; /* messages it sees, accounted */
	uint64_t credit_sent;
	uint64_t last_rx_ms;
	uint8_t *seen; /* delivered or not, for the last SEEN_BITS messages (UD's late ones) */
	bool finished;
	uint8_t *rbuf; /* its receive slots (without an SRQ) */
	/* UC: Sends lost since its last receive completion (what they left) */
	uint64_t lost_sends[8];
	unsigned nlost_sends;
};
#define SEEN_BITS (1U << 20)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *scq, *rcq;
static struct ibv_comp_channel *chan;
static struct ibv_srq *srq;
static struct qpst Q[MAX_QPS];
static int ib_port = 1, gid_index = -1, spin;
static union ibv_gid my_gid;
static uint16_t my_lid;
static uint32_t port_mtu, rd_atom, rd_atom_dest;
static uint32_t window, db_every, wslot_len, rregion_len;
static uint64_t cslot_len;
static uint64_t deadline_ms;
static int sock = -1;
static uint64_t elapsed_ms, max_gap_ms; /* the client's */

enum sabotage {
	SAB_NONE,
	SAB_CORRUPT,
	SAB_SKIP,
	SAB_REPEAT,
	SAB_SHORT,
	SAB_MISPLACE
};
static const char *const sab_name[] = { "none",	  "corrupt", "skip",
					"repeat", "short",   "misplace" };
static enum sabotage sab;
static uint64_t sab_id;

/* the target's receive slots: a ring per QP, or one for the SRQ */
static uint8_t *srq_buf;
static struct ibv_mr *srq_mr;
static uint32_t rslots; /* per QP, or the SRQ's */
static uint64_t rslot_len, rcap;
static uint64_t *rgen; /* how often each slot was posted (it draws its split) */

static int ipv4_gid(void)
{
	static const uint8_t v4[12] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid g;

	for (int i = 0; i < 256 && !ibv_query_gid(ctx, (uint8_t)ib_port, i, &g);
	     i++)
		if (!memcmp(g.raw, v4, sizeof(v4)))
			return i;
	die("no IPv4-mapped GID on port %d (-g)", ib_port);
}

static void open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_device_attr da;
	struct ibv_port_attr pa;

	if (!list || !list[0])
		die("no RDMA device");
	for (int i = 0; list[i] && !ctx; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		die("cannot open %s", name ? name : "an RDMA device");
	/* its asynchronous events are read, never waited for (async_events) */
	if (fcntl(ctx->async_fd, F_SETFL,
		  fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK))
		die("the async fd: %s", strerror(errno));
	if (ibv_query_port(ctx, (uint8_t)ib_port, &pa))
		die("ibv_query_port %d: %s", ib_port, strerror(errno));
	if (ibv_query_device(ctx, &da))
		die("ibv_query_device: %s", strerror(errno));
	my_lid = pa.lid;
	port_mtu = 128U << pa.active_mtu;
	rd_atom = da.max_qp_rd_atom < 16 ? (uint32_t)da.max_qp_rd_atom : 16;
	rd_atom_dest = da.max_qp_init_rd_atom < 16
			       ? (uint32_t)da.max_qp_init_rd_atom
			       : 16;
	if (gid_index < 0)
		gid_index = ipv4_gid();
	if (ibv_query_gid(ctx, (uint8_t)ib_port, gid_index, &my_gid))
		die("ibv_query_gid %d: %s", gid_index, strerror(errno));
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd: %s", strerror(errno));
}

static enum ibv_mtu mtu_enum(uint32_t mtu)
{
	switch (mtu) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	case 4096:
		return IBV_MTU_4096;
	}
	die("MTU %u: 256, 512, 1024, 2048 or 4096", mtu);
}

enum {
	T_RC,
	T_UC,
	T_UD
};

static const char *type_name(void)
{
	return C.qp_type == T_RC ? "rc" : C.qp_type == T_UC ? "uc" : "ud";
}

static void make_cqs(int entries)
{
	if (!spin) {
		chan = ibv_create_comp_channel(ctx);
		if (!chan)
			die("ibv_create_comp_channel: %s", strerror(errno));
		if (fcntl(chan->fd, F_SETFL,
			  fcntl(chan->fd, F_GETFL) | O_NONBLOCK))
			die("O_NONBLOCK on the channel: %s", strerror(errno));
	}
	scq = ibv_create_cq(ctx, entries, NULL, chan, 0);
	rcq = ibv_create_cq(ctx, entries, NULL, chan, 0);
	if (!scq || !rcq)
		die("ibv_create_cq (%d entries): %s", entries, strerror(errno));
}

static void make_qp(struct qpst *q, uint32_t send_wr, uint32_t recv_wr,
		    uint32_t inline_max)
{
	static const enum ibv_qp_type t[] = { IBV_QPT_RC, IBV_QPT_UC,
					      IBV_QPT_UD };
	struct ibv_qp_init_attr ia = {
		.send_cq = scq,
		.recv_cq = rcq,
		.srq = srq,
		.cap = { .max_send_wr = send_wr,
			 .max_recv_wr = srq ? 0 : recv_wr,
			 .max_send_sge = C.sges,
			 .max_recv_sge = C.sges,
			 .max_inline_data = inline_max },
		.qp_type = t[C.qp_type],
		.sq_sig_all = 1,
	};

	q->qp = ibv_create_qp(pd, &ia);
	if (!q->qp)
		die("ibv_create_qp (%s, %u send and %u receive WRs, %u SGEs, "
		    "%u "
		    "bytes inline): %s",
		    type_name(), send_wr, recv_wr, C.sges, inline_max,
		    strerror(errno));
	q->me.qpn = q->qp->qp_num;
	q->me.psn = (uint32_t)(draw(q->idx, 0, 99) & 0xffffff);
	q->me.lid = my_lid;
	memcpy(q->me.gid, my_gid.raw, 16);
}

static void qp_modify(struct ibv_qp *qp, struct ibv_qp_attr *a, int mask,
		      const char *state)
{
	if (ibv_modify_qp(qp, a, mask))
		die("ibv_modify_qp to %s: %s", state, strerror(errno));
}

static struct ibv_ah_attr ah_attr(const struct qp_info *peer)
{
	struct ibv_ah_attr ah = { .dlid = (uint16_t)peer->lid,
				  .sl = (uint8_t)C.sl,
				  .port_num = (uint8_t)ib_port,
				  .is_global = 1 };

	memcpy(ah.grh.dgid.raw, peer->gid, 16);
	ah.grh.sgid_index = (uint8_t)gid_index;
	ah.grh.hop_limit = 64;
	return ah;
}

/* INIT, RTR and RTS towards q->peer */
static void qp_connect(struct qpst *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = (uint8_t)ib_port };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (C.qp_type == T_UD) {
		a.qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE |
			(C.qp_type == T_RC ? IBV_ACCESS_REMOTE_READ : 0);
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	qp_modify(q->qp, &a, mask, "INIT");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (C.qp_type != T_UD) {
		a.path_mtu = mtu_enum(C.mtu);
		a.dest_qp_num = q->peer.qpn;
		a.rq_psn = q->peer.psn;
		a.ah_attr = ah_attr(&q->peer);
		mask |= IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_AV;
	}
	if (C.qp_type == T_RC) {
		a.max_dest_rd_atomic = (uint8_t)rd_atom_dest;
		a.min_rnr_timer = 1;
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	}
	qp_modify(q->qp, &a, mask, "RTR");

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = q->me.psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (C.qp_type == T_RC) {
		a.timeout = (uint8_t)C.timeout;
		a.retry_cnt = 7;
		a.rnr_retry = 7;
		a.max_rd_atomic = (uint8_t)rd_atom;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	qp_modify(q->qp, &a, mask, "RTS");
	if (C.qp_type == T_UD) {
		struct ibv_ah_attr ah = ah_attr(&q->peer);

		q->ah = ibv_create_ah(pd, &ah);
		if (!q->ah)
			die("ibv_create_ah: %s", strerror(errno));
	}
}

/* len bytes of MARK, registered */
static uint8_t *alloc_mr(uint64_t len, int access, struct ibv_mr **mr)
{
	uint8_t *p = aligned_alloc(4096, (len + 4095) & ~4095ULL);

	if (!p)
		die("%" PRIu64 " bytes: %s", len, strerror(errno));
	memset(p, MARK, len);
	*mr = ibv_reg_mr(pd, p, len, access);
	if (!*mr)
		die("ibv_reg_mr (%" PRIu64 " bytes): %s", len, strerror(errno));
	return p;
}

/*
 * Sleep until a completion event or a control message, ms at most (the
 * channel is non-blocking); with --spin only look at the socket. The CQs
 * were armed and found empty before.
 */
static void wait_event(int ms)
{
	struct pollfd pfd[2] = { { .fd = sock, .events = POLLIN },
				 { .fd = chan ? chan->fd : -1,
				   .events = POLLIN } };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(pfd, 2, spin ? 0 : ms) < 0 && errno != EINTR)
		die("poll: %s", strerror(errno));
	if (chan && (pfd[1].revents & POLLIN))
		while (!ibv_get_cq_event(chan, &cq, &cq_ctx))
			ibv_ack_cq_events(cq, 1);
}

static void arm(void)
{
	if (chan && (ibv_req_notify_cq(scq, 0) || ibv_req_notify_cq(rcq, 0)))
		die("ibv_req_notify_cq: %s", strerror(errno));
}

/*
 * A loop's pass found nothing to do: the first time arm the CQs (a
 * completion that came meanwhile is found by the next pass), the second
 * sleep
 */
static void idle(bool *armed)
{
	if (!*armed) {
		arm();
		*armed = true;
		return;
	}
	wait_event(50);
	*armed = false;
}

/* --- TCP ------------------------------------------------------------------- */

static void write_all(const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t r = write(sock, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			die("the peer's connection: %s",
			    r ? strerror(errno) : "closed");
		c += r;
		n -= (size_t)r;
	}
}

/* Control messages: read whole, nonblocking once the stream runs */
static uint8_t inbuf[4096];
static size_t inlen;

static void read_all(void *p, size_t n)
{
	char *c = p;
	size_t have = inlen < n ? inlen : n;

	/* what the buffer already holds comes first */
	memcpy(c, inbuf, have);
	memmove(inbuf, inbuf + have, inlen - have);
	inlen -= have;
	c += have;
	n -= have;
	while (n) {
		ssize_t r = read(sock, c, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("the peer's connection: %s", strerror(errno));
		if (r == 0)
			die("the peer closed the connection");
		c += r;
		n -= (size_t)r;
	}
}

static void send_words32(const uint32_t *w, size_t n)
{
	uint32_t b[64];

	for (size_t i = 0; i < n; i++)
		b[i] = htobe32(w[i]);
	write_all(b, n * 4);
}

static void recv_words32(uint32_t *w, size_t n)
{
	read_all(w, n * 4);
	for (size_t i = 0; i < n; i++)
		w[i] = be32toh(w[i]);
}

static void send_info(const struct qp_info *i)
{
	uint32_t w[8] = { i->qpn,
			  i->psn,
			  i->lid,
			  i->rkey,
			  (uint32_t)(i->wslots >> 32),
			  (uint32_t)i->wslots,
			  (uint32_t)(i->rregion >> 32),
			  (uint32_t)i->rregion };

	send_words32(w, 8);
	write_all(i->gid, 16);
}

static void recv_info(struct qp_info *i)
{
	uint32_t w[8];

	recv_words32(w, 8);
	*i = (struct qp_info){ .qpn = w[0],
			       .psn = w[1],
			       .lid = w[2],
			       .rkey = w[3],
			       .wslots = (uint64_t)w[4] << 32 | w[5],
			       .rregion = (uint64_t)w[6] << 32 | w[7] };
	read_all(i->gid, 16);
}

static void send_ctl(uint32_t type, uint32_t qp, uint64_t a, uint64_t b)
{
	struct ctl m = { htobe32(type), htobe32(qp), htobe64(a), htobe64(b) };

	write_all(&m, sizeof(m));
}

/* Tell the client why not (a CTL_ERROR and the line), then exit 2 */
static void refuse(const char *fmt, ...)
	__attribute__((noreturn, format(printf, 1, 2)));
static void refuse(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = n < 0 ? 0 : n >= (int)sizeof(line) ? (int)sizeof(line) - 1 : n;
	send_ctl(CTL_ERROR, 0, (uint64_t)n, 0);
	write_all(line, (size_t)n);
	die("%s", line);
}

/* Reads what the socket has; false when the peer has closed it */
static bool fill_input(void)
{
	ssize_t r;

	if (inlen == sizeof(inbuf))
		return true;
	r = recv(sock, inbuf + inlen, sizeof(inbuf) - inlen, MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	if (r < 0)
		die("the peer's connection: %s", strerror(errno));
	inlen += (size_t)r;
	return r > 0;
}

static bool next_ctl(struct ctl *m)
{
	if (inlen < sizeof(*m))
		return false;
	read_all(m, sizeof(*m));
	m->type = be32toh(m->type);
	m->qp = be32toh(m->qp);
	m->a = be64toh(m->a);
	m->b = be64toh(m->b);
	return true;
}

/* The line the target sent after its CTL_ERROR, printed; exit 2 */
static void peer_error(const struct ctl *m) __attribute__((noreturn));
static void peer_error(const struct ctl *m)
{
	char line[512] = "";

	read_all(line,
		 m->a < sizeof(line) - 1 ? (size_t)m->a : sizeof(line) - 1);
	die("the target: %s", line);
}

/*
 * A buffer of n pieces after a completion of len bytes: bytes [skip, len)
 * are pattern bytes base + 0, 1, ... (skip: a UD receive's GRH), MARK in
 * the rest of the pieces, in the gaps and the guards. 0, or -1 with what
 * is wrong in why.
 */
static int check_scattered(const uint8_t *buf, const uint32_t *piece, int n,
			   uint64_t skip, uint64_t len, const struct pat *pat,
			   uint64_t base, const struct pat *tail, char *why,
			   size_t wsz)
{
	const uint8_t *p = buf + GUARD;
	uint64_t pos = 0; /* bytes of the completion before this piece */
	bool in_tail = tail;
	int64_t bad;

	if ((bad = unmarked(buf, GUARD)) >= 0) {
		snprintf(why, wsz,
			 "the guard before the buffer written (byte %" PRId64
			 ")",
			 bad);
		return -1;
	}
	for (int k = 0; k < n; k++) {
		uint64_t have = pos >= len	       ? 0
				: len - pos < piece[k] ? len - pos
						       : piece[k];
		uint64_t from = pos >= skip	    ? 0
				: skip - pos < have ? skip - pos
						    : have;

		if (have > from) {
			uint64_t at =
				pos + from - skip; /* message byte of p[from] */

			bad = pat_cmp(pat, base + at, have - from, p + from);
			if (bad >= 0) {
				snprintf(why, wsz,
					 "byte %" PRIu64
					 " (SGE %d) is 0x%02x, expected 0x%02x",
					 at + (uint64_t)bad, k,
					 p[from + (uint64_t)bad],
					 pat_byte(pat,
						  base + at + (uint64_t)bad));
				return -1;
			}
		}
		if (in_tail && piece[k] > have) {
			/* what an earlier message left there, then MARK */
			bad = pat_cmp(tail, pos + have - skip, piece[k] - have,
				      p + have);
			if (bad >= 0) {
				in_tail = false;
				have += (uint64_t)bad;
			} else {
				have = piece[k];
			}
		}
		if ((bad = unmarked(p + have, piece[k] - have)) >= 0) {
			snprintf(why, wsz,
				 "SGE %d written past the message (its byte "
				 "%" PRIu64 ")",
				 k, have + (uint64_t)bad);
			return -2;
		}
		p += piece[k];
		pos += piece[k];
		if (k < n - 1) {
			if (unmarked(p, GAP) >= 0) {
				snprintf(why, wsz,
					 "the gap after SGE %d written", k);
				return -1;
			}
			p += GAP;
		}
	}
	if (pos < len) {
		snprintf(why, wsz,
			 "%" PRIu64 " bytes, more than the buffer's %" PRIu64,
			 len, pos);
		return -1;
	}
	if ((bad = unmarked(p, GUARD)) >= 0) {
		snprintf(why, wsz,
			 "the guard after the buffer written (byte %" PRId64
			 ")",
			 bad);
		return -1;
	}
	return 0;
}

/* --- the target ------------------------------------------------------------ */

static uint64_t rslot_index(const struct qpst *q, uint32_t slot)
{
	return srq ? slot : (uint64_t)q->idx * rslots + slot;
}

static uint8_t *rslot_mem(const struct qpst *q, uint32_t slot)
{
	return (srq ? srq_buf : q->rbuf) + (uint64_t)slot * rslot_len;
}

static int rslot_pieces(const struct qpst *q, uint32_t slot, uint32_t *piece)
{
	uint64_t i = rslot_index(q, slot);

	return split(mix64(i * 0x9e3779b97f4a7c15ULL ^ rgen[i] ^ C.seed),
		     (uint32_t)rcap, (int)C.sges, piece);
}

static void post_recv(struct qpst *q, uint32_t slot)
{
	struct ibv_sge sge[MAX_SGE];
	uint32_t piece[MAX_SGE];
	struct ibv_recv_wr wr = { .sg_list = sge }, *bad;
	int n = rslot_pieces(q, slot, piece);

	sg_lay(rslot_mem(q, slot), srq ? srq_mr->lkey : q->mr->lkey, piece, n,
	       sge);
	wr.num_sge = n;
	wr.wr_id = (uint64_t)(srq ? 0 : q->idx) << 32 | slot;
	/* the verbs post calls return the error; errno is not theirs */
	int err = srq ? ibv_post_srq_recv(srq, &wr, &bad)
		      : ibv_post_recv(q->qp, &wr, &bad);

	if (err)
		die("ibv_post_%srecv: %s", srq ? "srq_" : "", strerror(err));
}

/* Bytes [off, off + len) of a scattered buffer into out */
static void sg_read(const uint8_t *buf, const uint32_t *piece, int n,
		    uint64_t off, uint8_t *out, uint64_t len)
{
	const uint8_t *p = buf + GUARD;

	for (int k = 0; k < n && len; k++) {
		if (off < piece[k]) {
			uint64_t c = piece[k] - off < len ? piece[k] - off
							  : len;

			memcpy(out, p + off, c);
			out += c;
			len -= c;
			off = 0;
		} else {
			off -= piece[k];
		}
		p += piece[k] + GAP;
	}
}

/* The Write slot of the target's sv-th message it sees */
static uint8_t *wslot(const struct qpst *q, uint64_t sv)
{
	return q->mem + (sv % window) * wslot_len;
}

static uint32_t woff(uint32_t qp, uint64_t id)
{
	return GUARD + (uint32_t)(draw(qp, id, DRAW_OFF) % 16);
}

/* A loss the transport allows: UC and UD with --lossy */
static bool loss_allowed(void)
{
	return C.lossy && C.qp_type != T_RC;
}

/*
 * Write id had to be placed by now (or lost, on UC): check its slot, count,
 * clear it. full: its completion came (Write with immediate), so all of it
 * is there.
 */
/*
 * Where 8 stray bytes at p came from: the message near id (within a few
 * windows) and its offset whose bytes they are, into out; for a report
 */
static void whose(const struct qpst *q, uint64_t id, const uint8_t *p,
		  char *out, size_t osz)
{
	uint64_t lo = id > 2 * (uint64_t)window + 64 ? id - 2 * window - 64 : 0;
	uint8_t *buf = malloc((size_t)C.max_size + 8);

	snprintf(out, osz, "of no message near %" PRIu64, id);
	if (!buf || reported > MAX_REPORTED)
		goto out;
	for (uint64_t k = lo; k < id + window + 64; k++) {
		uint32_t len = size_of(q->idx, k);
		struct pat pat = pat_msg(q->idx, k);

		if (len < 8)
			continue;
		pat_fill(&pat, 0, len, buf);
		for (uint32_t o = 0; o + 8 <= len; o++)
			if (!memcmp(buf + o, p, 8)) {
				snprintf(out, osz,
					 "message %" PRIu64
					 "'s (%s, %u bytes) at its byte %u",
					 k, op_name[op_of(q->idx, k)], len, o);
				goto out;
			}
	}
out:
	free(buf);
}

/*
 * How a Write's slot is checked: a plain Write's whole or (UC) lost; one
 * with immediate whose completion came, whole; one whose completion never
 * came, lost (whole would be a completion missing)
 */
enum wcheck {
	W_PLAIN,
	W_COMPLETED,
	W_NO_COMPLETION
};

static void check_write(struct qpst *q, uint64_t id, uint64_t sv,
			enum wcheck how)
{
	uint8_t *s = wslot(q, sv);
	uint32_t len = size_of(q->idx, id), off = woff(q->idx, id);
	struct pat pat = pat_msg(q->idx, id);
	int64_t bad = pat_cmp(&pat, 0, len, s + off);
	bool guards = unmarked(s, off) < 0 &&
		      unmarked(s + off + len, wslot_len - off - len) < 0;

	if (!guards) {
		int64_t at = unmarked(s, off) >= 0
				     ? unmarked(s, off)
				     : (int64_t)(off + len) +
					       unmarked(s + off + len,
							wslot_len - off - len);
		char src[160] = "";

		if ((uint64_t)at + 8 <= wslot_len)
			whose(q, id, s + at, src, sizeof(src));
		q->n.corrupt++;
		wrong("qp %u message %" PRIu64
		      " (%s, %u bytes at slot offset %u): slot byte %" PRId64
		      " written, with bytes %s",
		      q->idx, id, op_name[op_of(q->idx, id)], len, off, at,
		      src);
	} else if (how == W_NO_COMPLETION && !len) {
		q->n.lost++; /* nothing of it to see */
		if (!loss_allowed())
			wrong("qp %u message %" PRIu64
			      " (write_imm, 0 bytes) never arrived",
			      q->idx, id);
	} else if (bad < 0 && how == W_NO_COMPLETION) {
		q->n.corrupt++;
		wrong("qp %u message %" PRIu64
		      " (write_imm, %u bytes): all of it placed, "
		      "no completion",
		      q->idx, id, len);
	} else if (bad < 0) {
		q->n.delivered++;
		q->n.bytes += len;
	} else if (how != W_COMPLETED &&
		   unmarked(s + off + bad, len - (uint64_t)bad) < 0) {
		/* nothing, or only its first packets, arrived: a loss */
		q->n.lost++;
		q->n.partial += bad > 0;
		if (!loss_allowed())
			wrong("qp %u message %" PRIu64 " (write, %u bytes): %s",
			      q->idx, id, len,
			      bad ? "only its first bytes arrived"
				  : "never arrived");
	} else {
		q->n.corrupt++;
		wrong("qp %u message %" PRIu64
		      " (%s, %u bytes at slot offset %u): byte %" PRId64
		      " is 0x%02x, expected 0x%02x",
		      q->idx, id, op_name[op_of(q->idx, id)], len, off, bad,
		      s[off + bad], pat_byte(&pat, (uint64_t)bad));
	}
	memset(s, MARK, wslot_len);
}

static void seen_put(struct qpst *q, uint64_t id, bool v)
{
	uint8_t bit = (uint8_t)(1U << (id % 8)),
		*b = &q->seen[(id % SEEN_BITS) / 8];

	*b = v ? *b | bit : *b & (uint8_t)~bit;
}

static bool seen_get(const struct qpst *q, uint64_t id)
{
	return q->seen[(id % SEEN_BITS) / 8] & (1U << (id % 8));
}

/*
 * Every message below `below` is accounted now: a Write is checked in its
 * slot (whatever told us so came after it), a message whose completion
 * never came is lost. Messages arrive in order, so none of [expect, below)
 * has come.
 */
static void account(struct qpst *q, uint64_t below)
{
	for (; q->expect < below; q->expect++) {
		uint64_t id = q->expect;
		enum op o = op_of(q->idx, id);

		seen_put(q, id, false);
		if (!target_sees(o))
			continue;
		if (o == OP_WRITE || o == OP_WRITE_IMM) {
			/* a lost Write with immediate may have left its first packets */
			check_write(q, id, q->sv_seen,
				    o == OP_WRITE ? W_PLAIN : W_NO_COMPLETION);
		} else {
			if (q->nlost_sends <
			    sizeof(q->lost_sends) / sizeof(q->lost_sends[0]))
				q->lost_sends[q->nlost_sends++] = id;
			q->n.lost++;
			if (!loss_allowed())
				wrong("qp %u message %" PRIu64
				      " (%s, %u bytes) never arrived",
				      q->idx, id, op_name[o],
				      size_of(q->idx, id));
		}
		q->sv_seen++;
	}
}

/* A message number with `bits` low bits known: the one nearest expect */
static uint64_t nearest(uint64_t expect, uint64_t low, unsigned bits)
{
	uint64_t span = 1ULL << bits, id = (expect & ~(span - 1)) | low;

	if (id + span / 2 < expect)
		id += span;
	else if (id > expect + span / 2 && id >= span)
		id -= span;
	return id;
}

/*
 * The first message from expect on that is a Send of len bytes (the first
 * Send, if none within the window; expect if no Send at all). Where
 * messages may be lost (UC, UD with --lossy), the first such Send whose
 * bytes are data's: the one the first would be may have been lost, and a
 * later one of the same length arrived (its bytes tell them apart).
 */
static uint64_t next_send(const struct qpst *q, uint32_t len,
			  const uint8_t *data)
{
	uint64_t sv = 0, first = UINT64_MAX, same = UINT64_MAX;

	for (uint64_t id = q->expect; sv <= window + 8; id++) {
		enum op o = op_of(q->idx, id);

		if (o == OP_SEND && size_of(q->idx, id) == len) {
			struct pat pat = pat_msg(q->idx, id);

			if (!loss_allowed() || pat_cmp(&pat, 0, len, data) < 0)
				return id;
			if (same == UINT64_MAX)
				same = id;
		}
		if (o == OP_SEND && first == UINT64_MAX)
			first = id;
		sv += target_sees(o);
	}
	if (same != UINT64_MAX)
		return same;
	return first != UINT64_MAX ? first : q->expect;
}

/*
 * The message number a receive completion carries: in its immediate data,
 * or its first 4 bytes; a Send of fewer names nobody and is taken to be the
 * next Send
 */
static uint64_t recv_id(const struct qpst *q, const struct ibv_wc *wc,
			const uint8_t *buf, const uint32_t *piece, int n)
{
	uint64_t skip = C.qp_type == T_UD ? GRH_LEN : 0;
	uint32_t v;

	if (wc->wc_flags & IBV_WC_WITH_IMM)
		return nearest(q->expect, be32toh(wc->imm_data) & 0x7fffffff,
			       31);
	if (wc->byte_len < skip)
		return q->expect;
	if (wc->byte_len < skip + 4) {
		uint8_t data[4];

		sg_read(buf, piece, n, skip, data,
			(uint32_t)(wc->byte_len - skip));
		return next_send(q, (uint32_t)(wc->byte_len - skip), data);
	}
	sg_read(buf, piece, n, skip, (uint8_t *)&v, 4);
	return nearest(q->expect, le32toh(v) ^ id_mask(q->idx), 32);
}

/* Could the client have sent id by now? (its window ahead of what we accounted) */
static bool plausible(const struct qpst *q, uint64_t id)
{
	uint64_t sv = 0;

	for (uint64_t k = q->expect; k < id; k++)
		if (target_sees(op_of(q->idx, k)) && ++sv > window + 8)
			return false;
	return true;
}

static struct qpst *qp_by_num(uint32_t qpn)
{
	for (uint32_t i = 0; i < C.nqps; i++)
		if (Q[i].me.qpn == qpn)
			return &Q[i];
	return NULL;
}

/*
 * Past the message in a UC receive buffer: a Send that lost its last
 * packets left its first ones in the buffer, which the next message takes
 * (IBTA 9.8.2: its WQE is not consumed), and so may several, each writing
 * a longer or shorter start of its own. So, packet by packet from the
 * message's end on, each packet of the buffer is a whole packet of one
 * such Send at its own offsets, then MARK to the end. The message's own
 * bytes, the gaps and the guards are checked as ever. 0 when it is so.
 */
/* Bytes [x, end) of lin are message id's at those offsets */
static bool is_packet_of(const struct qpst *q, uint64_t id, uint64_t x,
			 uint64_t end, const uint8_t *lin)
{
	struct pat t = pat_msg(q->idx, id);

	return size_of(q->idx, id) >= end &&
	       pat_cmp(&t, x, end - x, lin + x) < 0;
}

static int uc_leftovers(const struct qpst *q, const uint8_t *buf,
			const uint32_t *piece, int n, uint64_t got,
			const struct pat *pat)
{
	uint8_t *lin = malloc(rcap + 1);
	uint64_t lo = q->expect > window + 8 ? q->expect - window - 8 : 0;
	const uint8_t *p = buf + GUARD;
	int ret = -1;
	uint64_t x;

	if (!lin)
		goto out;
	/* gaps and guards, with what is in the pieces taken as it is */
	if (unmarked(buf, GUARD) >= 0)
		goto out;
	for (int k = 0; k < n; k++) {
		p += piece[k];
		if (k < n - 1 && unmarked(p, GAP) >= 0)
			goto out;
		p += k < n - 1 ? GAP : 0;
	}
	if (unmarked(p, GUARD) >= 0)
		goto out;
	sg_read(buf, piece, n, 0, lin, rcap);
	if (pat_cmp(pat, 0, got, lin) >= 0)
		goto out;
	for (x = got; x < rcap;) {
		uint64_t end = (x / C.mtu + 1) * C.mtu, k;
		int c;

		if (end > rcap)
			end = rcap;
		/*
		 * one packet's bytes come from one Send (a lost Send's packets
		 * are whole: its last one never came, or it would not be
		 * lost): one lost since the last completion, or, where the wire
		 * reorders, any near the stream's place
		 */
		for (c = (int)q->nlost_sends - 1; c >= 0; c--)
			if (is_packet_of(q, q->lost_sends[c], x, end, lin))
				break;
		if (c < 0) {
			for (k = lo; k < q->expect + window + 8; k++)
				if (op_of(q->idx, k) <= OP_SEND_IMM &&
				    is_packet_of(q, k, x, end, lin))
					break;
			if (k == q->expect + window + 8)
				break;
		}
		x = end;
	}
	ret = unmarked(lin + x, rcap - x) < 0 ? 0 : -1;
out:
	free(lin);
	return ret;
}

/* What is wrong with the completion of message id of op o (why stays empty if nothing) */
static void check_recv(const struct qpst *q, const struct ibv_wc *wc,
		       uint64_t id, enum op o, const uint8_t *buf,
		       const uint32_t *piece, int n, char *why, size_t wsz)
{
	uint64_t skip = C.qp_type == T_UD ? GRH_LEN : 0,
		 len = size_of(q->idx, id);
	struct pat pat = pat_msg(q->idx, id);
	bool imm = o != OP_SEND;

	if (o != OP_SEND && o != OP_SEND_IMM && o != OP_WRITE_IMM)
		snprintf(why, wsz,
			 "a receive completion for a message sent as %s",
			 op_name[o]);
	else if (wc->opcode != (o == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM
						  : IBV_WC_RECV) ||
		 !!(wc->wc_flags & IBV_WC_WITH_IMM) != imm)
		snprintf(why, wsz, "completion opcode %d%s", wc->opcode,
			 wc->wc_flags & IBV_WC_WITH_IMM ? " with immediate data"
							: "");
	else if (wc->byte_len != (o == OP_WRITE_IMM ? len : len + skip))
		snprintf(why, wsz, "byte_len %u", wc->byte_len);
	else if (C.qp_type == T_UD &&
		 (wc->src_qp != q->peer.qpn || !(wc->wc_flags & IBV_WC_GRH)))
		snprintf(why, wsz, "source QP %u%s", wc->src_qp,
			 wc->wc_flags & IBV_WC_GRH ? "" : ", no GRH");
	else {
		/* a Write's receive buffer stays untouched: its slot has it */
		uint64_t got = o == OP_WRITE_IMM ? 0 : len + skip;

		if (check_scattered(buf, piece, n, skip, got, &pat, 0, NULL,
				    why, wsz) != -2 ||
		    C.qp_type != T_UC)
			return;
		if (!uc_leftovers(q, buf, piece, n, got, &pat)) {
			why[0] = '\0';
			return;
		}
		{
			/* whose bytes they are, for the report */
			uint8_t *lin = malloc(rcap + 8);
			uint64_t at = got;
			char src[160] = "";

			if (!lin)
				return;
			memset(lin, MARK, rcap + 8);
			sg_read(buf, piece, n, 0, lin, rcap);
			while (at < rcap && lin[at] == MARK)
				at++;
			whose(q, id, lin + at, src, sizeof(src));
			snprintf(why + strlen(why), wsz - strlen(why),
				 ": its byte %" PRIu64
				 " on are %s (%u Sends lost "
				 "since the last completion)",
				 at, src, q->nlost_sends);
			free(lin);
		}
	}
}

static void target_recv(const struct ibv_wc *wc)
{
	uint32_t slot = (uint32_t)wc->wr_id, piece[MAX_SGE];
	struct qpst *q = srq ? qp_by_num(wc->qp_num) : &Q[wc->wr_id >> 32];
	uint32_t imm = be32toh(wc->imm_data);
	char why[200] = "";
	uint8_t *buf;
	uint64_t id;
	enum op o;
	bool late;
	int n;

	if (!q || q->me.qpn != wc->qp_num) {
		wrong("a receive completion for QP %u, not one of ours",
		      wc->qp_num);
		return;
	}
	q->last_rx_ms = now_ms();
	buf = rslot_mem(q, slot);
	n = rslot_pieces(q, slot, piece);
	if (wc->status != IBV_WC_SUCCESS) {
		q->n.bad_wc++;
		wrong("qp %u: receive completion %s (%d)", q->idx,
		      ibv_wc_status_str(wc->status), wc->status);
		return; /* the QP is in ERR: nothing more comes */
	}
	if (wc->opcode == IBV_WC_RECV && (wc->wc_flags & IBV_WC_WITH_IMM) &&
	    (imm & DOORBELL)) {
		/* every Write up to and including message imm was placed */
		id = nearest(q->expect, imm & 0x7fffffff, 31);
		if (wc->byte_len)
			snprintf(why, sizeof(why), "a doorbell of %u bytes",
				 wc->byte_len);
		else if (!plausible(q, id))
			snprintf(why, sizeof(why),
				 "a doorbell for message %" PRIu64, id);
		else
			account(q, id + 1);
		if (why[0]) {
			q->n.corrupt++;
			wrong("qp %u: %s", q->idx, why);
		}
		goto repost;
	}
	id = recv_id(q, wc, buf, piece, n);
	o = op_of(q->idx, id);
	late = id < q->expect;
	if (!late && !plausible(q, id)) {
		q->n.corrupt++;
		wrong("qp %u: a completion (%u bytes) names message %" PRIu64
		      ", the next is %" PRIu64,
		      q->idx, wc->byte_len, id, q->expect);
		goto repost;
	}
	/*
	 * Before expect: RC never delivers out of order or twice, so it came
	 * twice. UC and UD may, on a wire that duplicates or reorders: a UC
	 * responder starts a new message at any first or only packet, whatever
	 * its PSN (IBTA 9.8.3, rxe's check_psn), so an old one is taken again.
	 */
	if (late && (C.qp_type == T_RC || seen_get(q, id) ||
		     id + SEEN_BITS / 2 < q->expect)) {
		q->n.dup++;
		if (!loss_allowed())
			wrong("qp %u message %" PRIu64
			      " (%s) arrived again after %" PRIu64,
			      q->idx, id, op_name[o], q->expect - 1);
		goto repost;
	}
	if (!late)
		account(q, id);
	check_recv(q, wc, id, o, buf, piece, n, why, sizeof(why));
	if (why[0]) {
		q->n.corrupt++;
		wrong("qp %u message %" PRIu64 " (%s, %u bytes): %s", q->idx,
		      id, op_name[o], size_of(q->idx, id), why);
		if (o == OP_WRITE_IMM) /* its slot is the next one's */
			memset(wslot(q, q->sv_seen), MARK, wslot_len);
	} else if (o == OP_WRITE_IMM) {
		check_write(q, id, q->sv_seen, W_COMPLETED);
	} else {
		q->n.delivered++;
		q->n.bytes += size_of(q->idx, id);
	}
	seen_put(q, id, true);
	if (late) {
		/* UC or UD, counted lost when a later one came */
		q->n.late++;
		q->n.lost--;
		if (!C.lossy)
			wrong("qp %u message %" PRIu64
			      " arrived after %" PRIu64,
			      q->idx, id, q->expect - 1);
	} else {
		q->expect = id + 1;
		q->sv_seen++;
	}
	q->nlost_sends = 0; /* the WQE they wrote into is done */
repost:
	memset(buf, MARK, rslot_len);
	rgen[rslot_index(q, slot)]++;
	post_recv(q, slot);
}

static void validate_cfg(const struct ibv_device_attr *da)
{
	if (C.version != WK_VERSION)
		refuse("protocol version %u, this target speaks %u", C.version,
		       WK_VERSION);
	if (C.qp_type > T_UD || !C.nops || C.nops > OP_N || !C.nqps ||
	    C.nqps > MAX_QPS || !C.sges || C.sges > MAX_SGE || C.depth < 16 ||
	    C.depth > 4096 || C.min_size > C.max_size)
		refuse("a stream this target cannot make (type %u, %u ops, %u "
		       "QPs, "
		       "%u SGEs, depth %u, sizes %u-%u)",
		       C.qp_type, C.nops, C.nqps, C.sges, C.depth, C.min_size,
		       C.max_size);
	for (uint32_t i = 0; i < C.nops; i++)
		if (C.ops[i] >= OP_N ||
		    (C.qp_type == T_UD && C.ops[i] >= OP_WRITE) ||
		    (C.qp_type == T_UC && C.ops[i] == OP_READ))
			refuse("%s has no operation %u", type_name(), C.ops[i]);
	if (C.sl > 15)
		refuse("service level %u: 0..15", C.sl);
	if (C.mtu > port_mtu)
		refuse("path MTU %u: the target's port has %u", C.mtu,
		       port_mtu);
	if (C.qp_type == T_UD && C.max_size > C.mtu)
		refuse("a UD message of %u bytes: more than the MTU, %u",
		       C.max_size, C.mtu);
	if ((int)C.sges > da->max_sge)
		refuse("%u SGEs: the target's device has %d", C.sges,
		       da->max_sge);
	if (C.srq && !da->max_srq)
		refuse("the target's device has no SRQ");
}

static void target_setup(void)
{
	struct ibv_device_attr da;
	uint32_t rx_total;

	recv_words32((uint32_t *)&C, CFG_WORDS);
	if (ibv_query_device(ctx, &da))
		refuse("ibv_query_device: %s", strerror(errno));
	if (!C.mtu)
		C.mtu = port_mtu;
	validate_cfg(&da);
	window = C.depth - C.depth / 4 - 2;
	rslots = C.srq ? C.depth * C.nqps : C.depth;
	rx_total = C.srq ? rslots : rslots * C.nqps;
	rcap = C.max_size + (C.qp_type == T_UD ? GRH_LEN : 0);
	rslot_len = sg_buf_len(rcap, (int)C.sges);
	wslot_len = (uint32_t)(2 * GUARD + 16 + (uint64_t)C.max_size);
	rregion_len = C.max_size * 2 + 65536;
	rgen = calloc(rx_total, sizeof(*rgen));
	if (!rgen)
		die("out of memory");
	make_cqs((int)rx_total + 16);
	if (C.srq) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = rslots,
							  .max_sge = C.sges } };

		srq = ibv_create_srq(pd, &sa);
		if (!srq)
			refuse("ibv_create_srq (%u WRs): %s", rslots,
			       strerror(errno));
		srq_buf = alloc_mr(rslot_len * rslots, IBV_ACCESS_LOCAL_WRITE,
				   &srq_mr);
	}
	for (uint32_t i = 0; i < C.nqps; i++) {
		struct qpst *q = &Q[i];
		uint64_t wlen = (uint64_t)window * wslot_len;
		struct pat rp = pat_region(i);

		q->idx = i;
		recv_info(&q->peer);
		make_qp(q, 16, rslots, 0);
		q->mem = alloc_mr(
			wlen + rregion_len + (srq ? 0 : rslot_len * rslots),
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				(C.qp_type == T_RC ? IBV_ACCESS_REMOTE_READ
						   : 0),
			&q->mr);
		q->rbuf = srq ? NULL : q->mem + wlen + rregion_len;
		pat_fill(&rp, 0, rregion_len, q->mem + wlen);
		q->seen = calloc(SEEN_BITS / 8, 1);
		if (!q->seen)
			die("out of memory");
		q->me.rkey = q->mr->rkey;
		q->me.wslots = (uintptr_t)q->mem;
		q->me.rregion = (uintptr_t)(q->mem + wlen);
		q->total = UINT64_MAX;
		q->last_rx_ms = now_ms();
		qp_connect(q);
	}
	for (uint32_t i = 0; i < (srq ? 1 : C.nqps); i++)
		for (uint32_t s = 0; s < rslots; s++)
			post_recv(&Q[i], s);
	send_ctl(CTL_READY, 0, window, C.mtu);
	for (uint32_t i = 0; i < C.nqps; i++)
		send_info(&Q[i].me);
}

/* After the client's DONE: every message accounted, or (UC, UD) none for settle_ms */
static void target_try_finish(struct qpst *q, uint64_t now)
{
	uint64_t w[COUNT_WORDS];

	if (q->finished || q->total == UINT64_MAX)
		return;
	/* Reads never reach the target: the stream may end with some */
	while (q->expect < q->total && !target_sees(op_of(q->idx, q->expect)))
		account(q, q->expect + 1);
	if (q->expect < q->total) {
		/* RC: everything was acknowledged, so everything comes */
		/* (a completion after now was taken moved last_rx_ms past it) */
		if (C.qp_type == T_RC || now < q->last_rx_ms + C.settle_ms)
			return;
		account(q, q->total);
	}
	q->finished = true;
	memcpy(w, &q->n, sizeof(w));
	for (size_t i = 0; i < COUNT_WORDS; i++)
		w[i] = htobe64(w[i]);
	send_ctl(CTL_REPORT, q->idx, q->expect, 0);
	write_all(w, sizeof(w));
}

static void sum_counts(struct counts *t, const struct counts *c)
{
	uint64_t *a = (uint64_t *)t;
	const uint64_t *b = (const uint64_t *)c;

	for (size_t k = 0; k < COUNT_WORDS; k++)
		a[k] += b[k];
}

/*
 * The asynchronous events the device sent (none in a run that goes well:
 * no QP fatal, no port error, not the device's end), each one printed
 */
static unsigned async_events(void)
{
	struct ibv_async_event ev;
	unsigned n = 0;

	while (ctx && !ibv_get_async_event(ctx, &ev)) {
		fprintf(stderr, "%s: WRONG async event %s\n", prog,
			ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
		n++;
	}
	return n;
}

static void print_counts(const char *who, const struct counts *t, uint64_t sent,
			 uint64_t reads, uint64_t rbytes, uint64_t rbad)
{
	unsigned async = async_events();
	char ops[64] = "";

	for (uint32_t i = 0; i < C.nops; i++)
		snprintf(ops + strlen(ops), sizeof(ops) - strlen(ops), "%s%s",
			 i ? "," : "", op_name[C.ops[i]]);
	printf("%s: %s %s, %u QP(s), %" PRIu64
	       " messages of %u-%u bytes: %" PRIu64 " delivered (%" PRIu64
	       " bytes checked), %" PRIu64 " lost, %" PRIu64
	       " corrupt, %" PRIu64 " duplicated, %" PRIu64 " late, %" PRIu64
	       " error completions",
	       who, type_name(), ops, C.nqps, sent, C.min_size, C.max_size,
	       t->delivered, t->bytes, t->lost, t->corrupt, t->dup, t->late,
	       t->bad_wc);
	if (reads || rbad)
		printf("; %" PRIu64 " reads checked (%" PRIu64
		       " bytes), %" PRIu64 " wrong",
		       reads, rbytes, rbad);
	printf("\nsummary: sent=%" PRIu64 " delivered=%" PRIu64
	       " bytes=%" PRIu64 " lost=%" PRIu64 " partial=%" PRIu64
	       " corrupt=%" PRIu64 " dup=%" PRIu64 " late=%" PRIu64
	       " bad_wc=%" PRIu64 " reads=%" PRIu64 " read_bytes=%" PRIu64
	       " read_bad=%" PRIu64 " elapsed_ms=%" PRIu64
	       " max_gap_ms=%" PRIu64 " async=%u result=%s\n",
	       sent, t->delivered, t->bytes, t->lost, t->partial, t->corrupt,
	       t->dup, t->late, t->bad_wc, reads, rbytes, rbad, elapsed_ms,
	       max_gap_ms, async, failed || async ? "FAIL" : "ok");
	if (async)
		failed = 1;
}

static int run_target(void)
{
	struct ibv_wc wc[32];
	struct counts t = { 0 };
	uint64_t sent = 0;
	uint32_t finished = 0;
	bool armed = false;

	target_setup();
	while (finished < C.nqps) {
		uint64_t now = now_ms();
		struct ctl m;
		int n, got = 0;

		if (now > deadline_ms) {
			fprintf(stderr, "%s: out of time (-T)\n", prog);
			for (uint32_t i = 0; i < C.nqps; i++)
				if (!Q[i].finished)
					fprintf(stderr,
						"%s: qp %u: %" PRIu64
						" messages accounted, "
						"the client %s\n",
						prog, i, Q[i].expect,
						Q[i].total == UINT64_MAX
							? "not done"
							: "done");
			failed = 1;
			break;
		}
		while ((n = ibv_poll_cq(rcq, 32, wc)) > 0) {
			for (int i = 0; i < n; i++)
				target_recv(&wc[i]);
			got += n;
		}
		if (n < 0)
			die("ibv_poll_cq: %s", strerror(errno));
		while ((n = ibv_poll_cq(scq, 32, wc)) > 0)
			for (int i = 0; i < n; i++)
				wrong("a send completion at the target (status "
				      "%d)",
				      wc[i].status);
		for (uint32_t i = 0; i < C.nqps; i++) {
			struct qpst *q = &Q[i];

			if (q->sv_seen != q->credit_sent &&
			    (!got ||
			     q->sv_seen - q->credit_sent >= window / 4)) {
				send_ctl(CTL_CREDIT, i, q->sv_seen, 0);
				q->credit_sent = q->sv_seen;
			}
		}
		if (!fill_input())
			die("the client closed the connection before it was "
			    "done");
		while (next_ctl(&m)) {
			struct qpst *q = m.qp < C.nqps ? &Q[m.qp] : NULL;

			if (m.type == CTL_ERROR)
				peer_error(&m);
			if (!q)
				die("a control message for QP %u", m.qp);
			if (m.type == CTL_DONE)
				q->total = m.a;
			else if (m.type == CTL_SKIP && plausible(q, m.a))
				account(q, m.a);
			else
				die("control message %u (%" PRIu64 ")", m.type,
				    m.a);
			got++;
		}
		for (uint32_t i = 0; i < C.nqps; i++) {
			if (!Q[i].finished) {
				target_try_finish(&Q[i], now);
				finished += Q[i].finished;
			}
		}
		if (got)
			armed = false;
		else
			idle(&armed);
	}
	for (uint32_t i = 0; i < C.nqps; i++) {
		sum_counts(&t, &Q[i].n);
		sent += Q[i].total == UINT64_MAX ? Q[i].expect : Q[i].total;
	}
	print_counts(prog, &t, sent, 0, 0, 0);
	return failed;
}

/* --- the client ------------------------------------------------------------- */

/* What the client keeps of each WR until it completes */
struct wr_rec {
	uint64_t id;
	uint32_t len;
	enum op op;
	bool doorbell;
};
static struct wr_rec *recs; /* C.depth per QP */

static uint8_t *cslot(const struct qpst *q, uint64_t seq)
{
	return q->mem + (seq % C.depth) * cslot_len;
}

static uint64_t read_at(const struct qpst *q, uint64_t id, uint32_t len)
{
	return draw(q->idx, id, DRAW_OFF) % (rregion_len - len + 1);
}

static void client_post(struct qpst *q, uint64_t id, enum op o, bool doorbell)
{
	static const enum ibv_wr_opcode wr_op[OP_N] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
		IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ
	};
	uint64_t seq = q->wr_seq;
	uint32_t len = doorbell ? 0 : size_of(q->idx, id), piece[MAX_SGE];
	struct ibv_sge sge[MAX_SGE];
	struct ibv_send_wr wr = { .sg_list = sge, .opcode = wr_op[o] }, *bad;
	struct pat pat = pat_msg(q->idx, id);
	bool sabotaged = sab && !doorbell && q->idx == 0 && id == sab_id;
	int n, err;

	if (sabotaged && sab == SAB_SHORT && len)
		len--;
	n = split(draw(q->idx, id, DRAW_SPLIT), len, (int)C.sges, piece);

	recs[(uint64_t)q->idx * C.depth + seq % C.depth] = (struct wr_rec){
		.id = id, .len = len, .op = o, .doorbell = doorbell
	};
	sg_lay(cslot(q, seq), q->mr->lkey, piece, n, sge);
	wr.num_sge = n;
	wr.wr_id = (uint64_t)q->idx << 32 | (uint32_t)(seq % C.depth);
	if (o != OP_READ)
		/* a Read's pieces hold MARK until it fills them */
		for (int k = 0, done = 0; k < n; done += (int)piece[k], k++)
			pat_fill(&pat, (uint64_t)done, piece[k],
				 (uint8_t *)(uintptr_t)sge[k].addr);
	if (sabotaged && sab == SAB_CORRUPT && len)
		((uint8_t *)(uintptr_t)sge[n - 1].addr)[piece[n - 1] / 2] ^=
			0x08;
	if (o == OP_SEND_IMM || o == OP_WRITE_IMM)
		wr.imm_data = htobe32((uint32_t)id & 0x7fffffff);
	if (doorbell)
		wr.imm_data = htobe32(DOORBELL | ((uint32_t)id & 0x7fffffff));
	if (o == OP_WRITE || o == OP_WRITE_IMM) {
		wr.wr.rdma.remote_addr =
			q->peer.wslots + (q->sv_posted % window) * wslot_len +
			woff(q->idx, id) + (sabotaged && sab == SAB_MISPLACE);
		wr.wr.rdma.rkey = q->peer.rkey;
	} else if (o == OP_READ) {
		wr.wr.rdma.remote_addr = q->peer.rregion + read_at(q, id, len) +
					 (sabotaged && sab == SAB_MISPLACE);
		wr.wr.rdma.rkey = q->peer.rkey;
	}
	if (o != OP_READ && len && len <= C.inline_max)
		wr.send_flags |= IBV_SEND_INLINE;
	if (C.qp_type == T_UD) {
		wr.wr.ud.ah = q->ah;
		wr.wr.ud.remote_qpn = q->peer.qpn;
		wr.wr.ud.remote_qkey = QKEY;
	}
	err = ibv_post_send(q->qp, &wr, &bad);
	if (err) {
		failed = 1;
		die("qp %u message %" PRIu64
		    ": ibv_post_send (%s, %u bytes): %s",
		    q->idx, id, doorbell ? "doorbell" : op_name[o], len,
		    strerror(err));
	}
	q->wr_seq++;
}

static void client_complete(const struct ibv_wc *wc)
{
	static const enum ibv_wc_opcode wc_op[OP_N] = {
		IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ
	};
	struct qpst *q = &Q[wc->wr_id >> 32];
	uint32_t seq = (uint32_t)wc->wr_id;
	const struct wr_rec *r = &recs[(uint64_t)q->idx * C.depth + seq];
	uint8_t *buf = cslot(q, seq);
	char why[200] = "";

	if (seq != q->wr_done % C.depth)
		wrong("qp %u: completion of WR %u, expected %" PRIu64
		      " (out of order)",
		      q->idx, seq, q->wr_done % C.depth);
	q->wr_done++;
	if (wc->status != IBV_WC_SUCCESS) {
		q->bad_wc++;
		wrong("qp %u message %" PRIu64
		      " (%s, %u bytes): completion %s (%d), "
		      "vendor error 0x%x",
		      q->idx, r->id, r->doorbell ? "doorbell" : op_name[r->op],
		      r->len, ibv_wc_status_str(wc->status), wc->status,
		      wc->vendor_err);
		return;
	}
	if (r->op != OP_READ && r->len)
		/* what client_post() wrote: the slot holds MARK for the next WR */
		memset(buf + GUARD, MARK, r->len + (C.sges - 1) * GAP);
	if (wc->opcode != wc_op[r->op] || wc->qp_num != q->me.qpn)
		snprintf(why, sizeof(why), "completion opcode %d, QP %u",
			 wc->opcode, wc->qp_num);
	if (r->op == OP_READ && !why[0]) {
		uint32_t piece[MAX_SGE];
		int n = split(draw(q->idx, r->id, DRAW_SPLIT), r->len,
			      (int)C.sges, piece);
		struct pat rp = pat_region(q->idx);

		check_scattered(buf, piece, n, 0, r->len, &rp,
				read_at(q, r->id, r->len), NULL, why,
				sizeof(why));
		memset(buf, MARK, cslot_len);
		if (!why[0]) {
			q->rd_ok++;
			q->rd_bytes += r->len;
		}
	}
	if (why[0]) {
		q->rd_bad += r->op == OP_READ;
		q->bad_wc += r->op != OP_READ;
		wrong("qp %u message %" PRIu64 " (%s, %u bytes): %s", q->idx,
		      r->id, r->doorbell ? "doorbell" : op_name[r->op], r->len,
		      why);
	}
}

static bool client_can_post(const struct qpst *q, bool for_target)
{
	return q->wr_seq - q->wr_done < C.depth &&
	       (!for_target || q->sv_posted - q->credit < window);
}

static void doorbell(struct qpst *q)
{
	client_post(q, q->next - 1, OP_SEND_IMM, true);
	q->writes_unsignalled = 0;
}

/* Post what the windows allow; true if anything was posted */
static bool client_pump(struct qpst *q, uint64_t now, bool stop)
{
	bool any = false;

	if (stop && q->next < q->total)
		q->total = q->next;
	while (q->next < q->total) {
		enum op o = op_of(q->idx, q->next);
		bool sees = target_sees(o),
		     mine = sab && q->idx == 0 && q->next == sab_id;

		if (o == OP_WRITE && q->writes_unsignalled >= db_every) {
			/* the target learns of Writes from what comes after them */
			if (!client_can_post(q, false))
				break;
			doorbell(q);
		}
		if (!client_can_post(q, sees) ||
		    (mine && sab == SAB_REPEAT &&
		     q->wr_seq - q->wr_done + 2 > C.depth))
			break;
		if (!(mine && sab == SAB_SKIP))
			client_post(q, q->next, o, false);
		if (mine && sab == SAB_REPEAT)
			client_post(q, q->next, o, false);
		if (sees) {
			q->sv_posted++;
			q->writes_unsignalled =
				o == OP_WRITE ? q->writes_unsignalled + 1 : 0;
		}
		q->next++;
		any = true;
	}
	if (q->next == q->total && q->writes_unsignalled &&
	    client_can_post(q, false)) {
		doorbell(q); /* the last Writes' */
		any = true;
	}
	if (q->next == q->total && !q->writes_unsignalled &&
	    q->wr_done == q->wr_seq && !q->done_sent) {
		send_ctl(CTL_DONE, q->idx, q->total, 0);
		q->done_sent = true;
	}
	/*
	 * A UC/UD window that stays full: the target waits for messages that
	 * are not coming. It accounts everything sent so far, and on it goes.
	 */
	if (C.qp_type != T_RC && !q->done_sent &&
	    q->sv_posted - q->credit >= window && q->wr_done == q->wr_seq &&
	    now - q->last_credit_ms > C.settle_ms) {
		if (q->writes_unsignalled && client_can_post(q, false))
			doorbell(q);
		send_ctl(CTL_SKIP, q->idx, q->next, 0);
		q->last_credit_ms = now;
	}
	return any;
}

static void client_setup(void)
{
	struct ctl m;

	if (C.qp_type == T_UD && C.max_size > C.mtu)
		die("-s %u: a UD message is at most the MTU, %u", C.max_size,
		    C.mtu);
	cslot_len = sg_buf_len(C.max_size, (int)C.sges);
	make_cqs((int)(C.depth * C.nqps + 16));
	recs = calloc((size_t)C.depth * C.nqps, sizeof(*recs));
	if (!recs)
		die("out of memory");
	for (uint32_t i = 0; i < C.nqps; i++) {
		struct qpst *q = &Q[i];

		q->idx = i;
		make_qp(q, C.depth, 1, C.inline_max);
		q->mem = alloc_mr((uint64_t)C.depth * cslot_len,
				  IBV_ACCESS_LOCAL_WRITE, &q->mr);
	}
	send_words32((uint32_t *)&C, CFG_WORDS);
	for (uint32_t i = 0; i < C.nqps; i++)
		send_info(&Q[i].me);
	read_all(&m, sizeof(m));
	m.type = be32toh(m.type);
	m.a = be64toh(m.a);
	m.b = be64toh(m.b);
	if (m.type == CTL_ERROR)
		peer_error(&m);
	if (m.type != CTL_READY)
		die("the target answered %u", m.type);
	window = (uint32_t)m.a;
	C.mtu = (uint32_t)m.b;
	db_every = window / 4 ? window / 4 : 1;
	wslot_len = (uint32_t)(2 * GUARD + 16 + (uint64_t)C.max_size);
	rregion_len = C.max_size * 2 + 65536;
	for (uint32_t i = 0; i < C.nqps; i++) {
		recv_info(&Q[i].peer);
		qp_connect(&Q[i]);
	}
}

static int run_client(uint64_t count, unsigned seconds)
{
	struct ibv_wc wc[32];
	uint32_t reported_qps = 0;
	uint64_t start = now_ms(), sent = 0, reads = 0, rbytes = 0, rbad = 0;
	uint64_t last_progress = start;
	struct counts t = { 0 };
	bool armed = false;

	client_setup();
	for (uint32_t i = 0; i < C.nqps; i++) {
		Q[i].total = seconds ? UINT64_MAX : count;
		Q[i].last_credit_ms = start;
	}
	while (reported_qps < C.nqps) {
		uint64_t now = now_ms();
		bool stop = seconds && now - start >= (uint64_t)seconds * 1000;
		bool busy = false;
		struct ctl m;
		int n;

		if (now > deadline_ms) {
			fprintf(stderr, "%s: out of time (-T)\n", prog);
			for (uint32_t i = 0; i < C.nqps; i++)
				fprintf(stderr,
					"%s: qp %u: %" PRIu64
					" messages posted, %" PRIu64
					" of %" PRIu64 " WRs complete, %" PRIu64
					" accounted by "
					"the target\n",
					prog, i, Q[i].next, Q[i].wr_done,
					Q[i].wr_seq, Q[i].credit);
			failed = 1;
			break;
		}
		while ((n = ibv_poll_cq(scq, 32, wc)) > 0) {
			for (int i = 0; i < n; i++)
				client_complete(&wc[i]);
			busy = true;
		}
		if (n < 0)
			die("ibv_poll_cq: %s", strerror(errno));
		if (!fill_input())
			die("the target closed the connection");
		while (next_ctl(&m)) {
			struct qpst *q = m.qp < C.nqps ? &Q[m.qp] : NULL;
			uint64_t w[COUNT_WORDS];

			if (m.type == CTL_ERROR)
				peer_error(&m);
			if (!q)
				die("a control message for QP %u", m.qp);
			busy = true;
			if (m.type == CTL_CREDIT && m.a > q->credit) {
				q->credit = m.a;
				q->last_credit_ms = now;
			} else if (m.type == CTL_REPORT && !q->reported) {
				read_all(w, sizeof(w));
				for (size_t k = 0; k < COUNT_WORDS; k++)
					w[k] = be64toh(w[k]);
				memcpy(&q->n, w, sizeof(w));
				q->reported = true;
				reported_qps++;
			} else if (m.type != CTL_CREDIT) {
				die("control message %u", m.type);
			}
		}
		/* progress: a completion or a credit; a gap: none with work out */
		{
			bool waiting = false;

			for (uint32_t i = 0; i < C.nqps; i++)
				waiting |= Q[i].wr_seq != Q[i].wr_done ||
					   Q[i].sv_posted != Q[i].credit;
			if (busy && now - last_progress > max_gap_ms)
				max_gap_ms = now - last_progress;
			if (busy || !waiting)
				last_progress = now;
		}
		for (uint32_t i = 0; i < C.nqps; i++)
			busy |= client_pump(&Q[i], now, stop);
		if (busy)
			armed = false;
		else
			idle(&armed);
	}
	elapsed_ms = now_ms() - start;
	for (uint32_t i = 0; i < C.nqps; i++) {
		sum_counts(&t, &Q[i].n);
		t.bad_wc += Q[i].bad_wc;
		sent += Q[i].next;
		reads += Q[i].rd_ok;
		rbytes += Q[i].rd_bytes;
		rbad += Q[i].rd_bad;
	}
	/* the target's verdict, from its counts: what the transport allows passes */
	if (t.corrupt || t.bad_wc || rbad || (t.lost && !loss_allowed()) ||
	    ((t.dup || t.late) && !loss_allowed()))
		failed = 1;
	print_counts(prog, &t, sent, reads, rbytes, rbad);
	return failed;
}

/* --- main -------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr, "usage: wirecheck [-d DEV] [-i PORT] [-g GIDX] [-p "
			"TCPPORT] [-T SECS] [--spin]\n"
			"           the target: listens, checks what arrives\n"
			"       wirecheck [the same] [-t rc|uc|ud] [-o OPS] "
			"[-s N|MIN-MAX] [-n N | -D SECS]\n"
			"           [-q QPS] [--sge N] [--depth N] [--srq] "
			"[--inline N] [--seed N]\n"
			"           [-m MTU] [-u TIMEOUT] [--lossy] [--settle "
			"MS] [--sl N] ADDR\n"
			"           the client: sends the stream to the target "
			"at ADDR\n"
			"OPS: comma-separated send, send_imm, write, "
			"write_imm, read; or all\n");
	exit(2);
}

static unsigned long num(const char *opt, const char *s, unsigned long lo,
			 unsigned long hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		die("%s %s: a number from %lu to %lu", opt, s, lo, hi);
	return v;
}

static void parse_ops(const char *s)
{
	static const unsigned all[] = { [T_RC] = 5, [T_UC] = 4, [T_UD] = 2 };
	char buf[128], *save, *t;
	int i;

	C.nops = 0;
	if (!strcmp(s, "all")) {
		while (C.nops < all[C.qp_type])
			C.ops[C.nops] = C.nops, C.nops++;
		return;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	for (t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < OP_N && strcmp(t, op_name[i]); i++)
			;
		if (i == OP_N || C.nops == OP_N)
			die("-o %s: send, send_imm, write, write_imm, read or "
			    "all",
			    s);
		if ((unsigned)i >= all[C.qp_type])
			die("-o %s: %s has no %s", s, type_name(), t);
		C.ops[C.nops++] = (uint32_t)i;
	}
	if (!C.nops)
		die("-o: no operation");
}

static int listen_on(const char *port)
{
	struct addrinfo hints = { .ai_flags = AI_PASSIVE,
				  .ai_family = AF_INET6,
				  .ai_socktype = SOCK_STREAM },
			*ai;
	int one = 1, off = 0, s;

	if (getaddrinfo(NULL, port, &hints, &ai))
		die("-p %s: not a port", port);
	s = socket(ai->ai_family, SOCK_STREAM, 0);
	if (s < 0 ||
	    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off)) ||
	    bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1))
		die("listen on port %s: %s", port, strerror(errno));
	freeaddrinfo(ai);
	return s;
}

/* Connect to the target, which may not listen yet: try for 10 s */
static int connect_to(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai, *a;
	int s = -1;

	if (getaddrinfo(host, port, &hints, &ai))
		die("%s: no such host", host);
	for (int tries = 0; tries < 100 && s < 0; tries++) {
		if (tries)
			usleep(100000);
		for (a = ai; a && s < 0; a = a->ai_next) {
			s = socket(a->ai_family, SOCK_STREAM, 0);
			if (s >= 0 && connect(s, a->ai_addr, a->ai_addrlen)) {
				close(s);
				s = -1;
			}
		}
	}
	if (s < 0)
		die("connect to %s port %s: %s", host, port, strerror(errno));
	freeaddrinfo(ai);
	return s;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sge", 1, NULL, 1 },	    { "depth", 1, NULL, 2 },
		{ "srq", 0, NULL, 3 },	    { "inline", 1, NULL, 4 },
		{ "seed", 1, NULL, 5 },	    { "lossy", 0, NULL, 6 },
		{ "settle", 1, NULL, 7 },   { "spin", 0, NULL, 8 },
		{ "sabotage", 1, NULL, 9 }, { "sl", 1, NULL, 10 },
		{ "help", 0, NULL, 'h' },   { NULL, 0, NULL, 0 }
	};
	const char *dev = NULL, *port = "18515", *ops = "send";
	unsigned long count = 1000, seconds = 0, limit = 300;
	int c, one = 1;
	char *dash;

	C = (struct cfg){ .version = WK_VERSION,
			  .min_size = 1024,
			  .max_size = 1024,
			  .nqps = 1,
			  .sges = 1,
			  .depth = 64,
			  .seed = 1,
			  .settle_ms = 2000,
			  .timeout = 14 };
	while ((c = getopt_long(argc, argv, "d:i:g:p:t:o:s:n:D:q:m:u:T:h", lo,
				NULL)) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'i':
			ib_port = (int)num("-i", optarg, 1, 255);
			break;
		case 'g':
			gid_index = (int)num("-g", optarg, 0, 255);
			break;
		case 'p':
			port = optarg;
			break;
		case 't':
			if (!strcmp(optarg, "rc"))
				C.qp_type = T_RC;
			else if (!strcmp(optarg, "uc"))
				C.qp_type = T_UC;
			else if (!strcmp(optarg, "ud"))
				C.qp_type = T_UD;
			else
				die("-t %s: rc, uc or ud", optarg);
			break;
		case 'o':
			ops = optarg;
			break;
		case 's':
			dash = strchr(optarg, '-');
			if (dash)
				*dash = 0;
			C.min_size = (uint32_t)num("-s", optarg, 0, 1U << 30);
			C.max_size = dash ? (uint32_t)num("-s", dash + 1,
							  C.min_size, 1U << 30)
					  : C.min_size;
			break;
		case 'n':
			count = num("-n", optarg, 1, 1UL << 40);
			break;
		case 'D':
			seconds = num("-D", optarg, 1, 1UL << 20);
			break;
		case 'q':
			C.nqps = (uint32_t)num("-q", optarg, 1, MAX_QPS);
			break;
		case 'm':
			C.mtu = (uint32_t)num("-m", optarg, 256, 4096);
			mtu_enum(C.mtu);
			break;
		case 'u':
			C.timeout = (uint32_t)num("-u", optarg, 1, 31);
			break;
		case 'T':
			limit = num("-T", optarg, 1, 1UL << 20);
			break;
		case 1:
			C.sges = (uint32_t)num("--sge", optarg, 1, MAX_SGE);
			break;
		case 2:
			C.depth = (uint32_t)num("--depth", optarg, 16, 4096);
			break;
		case 3:
			C.srq = 1;
			break;
		case 4:
			C.inline_max =
				(uint32_t)num("--inline", optarg, 0, 4096);
			break;
		case 5:
			C.seed = (uint32_t)num("--seed", optarg, 0, UINT32_MAX);
			break;
		case 6:
			C.lossy = 1;
			break;
		case 7:
			C.settle_ms =
				(uint32_t)num("--settle", optarg, 1, 600000);
			break;
		case 8:
			spin = 1;
			break;
		case 10:
			C.sl = (uint32_t)num("--sl", optarg, 0, 15);
			break;
		case 9:
			dash = strchr(optarg, ':');
			if (dash)
				*dash = 0;
			for (sab = SAB_CORRUPT; sab <= SAB_MISPLACE &&
						strcmp(optarg, sab_name[sab]);
			     sab++)
				;
			if (!dash || sab > SAB_MISPLACE)
				die("--sabotage %s: corrupt, skip, repeat, "
				    "short or misplace, :N",
				    optarg);
			sab_id = num("--sabotage", dash + 1, 0, UINT32_MAX);
			break;
		default:
			usage();
		}
	}
	if (argc - optind > 1)
		usage();
	parse_ops(ops);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	deadline_ms = now_ms() + limit * 1000;

	if (optind == argc) {
		int lsn;

		/* the device first: a client that connects finds it open */
		prog = "wirecheck target";
		open_dev(dev);
		lsn = listen_on(port);
		sock = accept(lsn, NULL, NULL);
		if (sock < 0)
			die("accept: %s", strerror(errno));
		/* lsn stays open: what a test sees of our sockets stays put */
		setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		return run_target();
	}
	prog = "wirecheck client";
	open_dev(dev);
	if (!C.mtu)
		C.mtu = port_mtu;
	sock = connect_to(argv[optind], port);
	setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return run_client(count, (unsigned)seconds);
}
