// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The user verbs of rxdpd's devices (what the kernel's uverbs is to an
 * HCA driver), and the data path under them: per device, the UMEM, every
 * AF_XDP socket and the transport engines (userspace/engine, --engines),
 * each with its own thread, serving the verbs objects of every client on
 * the host (a context is given whole to one engine).
 *
 * A client's verbs context (CTX_OPEN) gets three fds: its doorbell (an
 * eventfd of its own), the device page (read-only: whether the data-path
 * thread sleeps) and the read end of its async event pipe. Its objects
 * (PD, MR, MW, channel, CQ, SRQ, QP, AH, shared memory) are made here on
 * its requests, a function per request (server.c's table); CQ, SRQ and QP
 * queues live in memfds made, sized and sealed here (the client can
 * neither shrink nor grow them) and mapped by both sides (common/hca.h,
 * the ring format). Payload moves between the UMEM and the client's
 * memory with a memcpy where the library shared it (MEM_SHARE: memfds
 * mapped here), else through the /proc/self/mem the client opened and
 * handed over with CTX_OPEN, on a thread of the client's own
 * (engine/mem.c): the target of an RDMA Write or Read need not run, and
 * rxdpd's privileges never widen what a client reaches.
 *
 * Rules kept here:
 * - A client reaches only its own objects (handles are per context; AH
 *   handles are per device and checked for their owner), and the engine
 *   checks that MRs and AHs belong to the PD of the QP that uses them.
 * - Everything a client had goes when its connection does: QPs first, then
 *   SRQs, CQs, AHs, MRs, channels and PDs, each destroyed in the engine
 *   before its memory is unmapped.
 * - Engine callbacks (events, CQ notifications) run on the data-path thread
 *   with the engine lock held: they only write one record to a pipe that
 *   rxdpd owns (non-blocking; a full pipe drops the event, counted).
 * - The control thread takes the engine lock only for object management,
 *   and never runs a data-path pass itself (eng_unlock with a thread).
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_xdp.h>

#include <bpf/bpf.h>
#include <infiniband/verbs.h>

#include "common/hca.h"
#include "common/hw_counters.h"
#include "common/log.h"
#include "daemon/mtu.h"
#include "daemon/rxdpd.h"
#include "daemon/takeover.h"
#include "engine/engine.h"

#define HCA_FRAME 4096
#define HCA_FRAMES 16384 /* 64 MiB of UMEM per device */
/*
 * Descriptors per AF_XDP ring: room for a socket's RX stock to grow into
 * (2048 frames at first, doubled each time the engine falls behind:
 * engine/xsk.c), so that a data path that waits for a CPU on a loaded host
 * finds what came meanwhile still there. The socket's share of the UMEM
 * caps it (half RX, half TX: all 8192 with one queue, less with more).
 */
#define HCA_RING 8192
#define HCA_MAX_AH 65536 /* per device (RXDP_VERBS_MAX_AH) */

/*
 * One engine of a device: its thread serves the sockets of some of the
 * interface's queues (its port) and the contexts given to it, each whole
 * (objects of one context never span engines), with its own device page
 * (whether its thread sleeps, streams)
 */
struct uverbs_eng {
	struct rxdp_xsk_port *port;
	struct rxdp_engine *e;
	int page_fd;
	struct rxdp_hca_dev *page;
	cpu_set_t cpus; /* where its thread runs, with --cpus */
	int ctxs; /* contexts it serves */
};

struct uverbs_dev {
	struct rxdp_umem umem;
	struct rxdp_engine_group *group;
	int ne; /* engines running */
	int max_ne; /* engines it may run: more start as queues come */
	struct uverbs_eng eng[RXDP_CTL_MAX_XSKS];
	/* queues 0 .. nq - 1 have a socket: queue q engine q_eng[q]'s
	 * q_idx[q]-th */
	__u32 nq;
	__u8 q_eng[RXDP_MAX_QUEUES], q_idx[RXDP_MAX_QUEUES];
	/* engines beyond one per queue: nsets sockets on each of the first
	 * nq_open queues, engine k's on queue k % nq_open in XSK slot
	 * k / nq_open (uverbs_dev_get) */
	__u32 nsets, nq_open;
	__u32 nq_failed; /* a queue count it could not follow */
	/* what every engine is made with, but its port, page and CPUs */
	struct rxdp_engine_config cfg;
	/*
	 * AHs by handle - 1, device-wide: their objects (control thread) and
	 * engine AHs, which the data-path thread looks up (under the engine
	 * lock) by the handle a UD WQE names. Fixed arrays: never moved. An
	 * engine AH is published after it is made and unpublished before it
	 * is destroyed (which takes the engine lock: no lookup still holds it).
	 */
	struct uobj **ahs;
	struct rxdp_eah *_Atomic *ah_eah;
	int ifindex;
	struct mcast_join *joins; /* groups the interface joined (mcast.c) */
};

enum hobj_kind {
	HO_PD = 1,
	HO_MR,
	HO_CHANNEL,
	HO_CQ,
	HO_SRQ,
	HO_QP,
	HO_AH,
	HO_MW,
	HO_MEM, /* a range of the client's memory shared with rxdpd */
	HO_MCAST, /* no object: a QP's multicast attachments, counted per user */
};

struct uobj {
	enum hobj_kind kind;
	__u32 handle;
	__u64 cookie;
	struct uverbs_ctx *ctx;
	int refs; /* PD: objects on it; CQ: QPs; channel: CQs; SRQ: QPs */
	__u32 cq_flags; /* CQ: RXDP_CTL_CQ_F_* */
	struct uobj *pd;
	void *mem; /* the shared queues (HO_MEM: the memory), mapped here */
	size_t mem_len;
	__u64 charged; /* bytes of rxdpd's memory its user is charged */
	__u64 locked; /* MR: bytes counted against RLIMIT_MEMLOCK */
	_Atomic __u32 comp_events; /* sent (CQ notifications) */
	_Atomic __u32 async_events;
	union {
		struct rxdp_epd *epd;
		struct rxdp_emr *emr; /* a region, or a memory window (HO_MW) */
		int wfd; /* channel: write end of its pipe */
		struct {
			struct rxdp_ecq *ecq;
			struct uobj *ch;
		} cq;
		struct rxdp_esrq *esrq;
		struct {
			struct rxdp_eqp *eqp;
			struct qp_handle *cqp;
			struct uobj *scq, *rcq, *srq;
			__u32 mcast; /* groups attached (charged HO_MCAST) */
		} qp;
		struct rxdp_eah *eah;
		__u64 mem_addr; /* HO_MEM: where the client has it */
	};
	/* what a successor needs to make it again (a takeover) */
	int mem_fd; /* CQ, SRQ, QP, HO_MEM: its memfd; else -1 */
	union {
		struct {
			__u64 addr, len, iova;
			__u32 access;
		} mr;
		struct {
			struct ibv_qp_cap cap;
			__u32 type, sig_all;
		} qp;
		struct ibv_srq_attr srq; /* as granted, its limit 0 */
		struct rxdp_path ah;
		__u32 cq_size;
	} made;
};

struct uverbs_ctx {
	struct rxdp_client *c;
	int ifindex;
	struct uverbs_dev *hd;
	struct uverbs_eng *he; /* the engine that serves it */
	int mem_fd; /* the client's /proc/PID/mem, opened by the client */
	struct rxdp_emem *emem; /* its memory, for the engine */
	int doorbell; /* its own (an eventfd in the engine's epoll set) */
	int async_wfd;
	struct uobj **objs; /* by handle - 1 */
	__u32 nobjs;
	__u32 dropped; /* events lost: the client does not read them */
	__u64 locked; /* bytes of its MRs (RLIMIT_MEMLOCK) */
};

/* --- per-user limits --------------------------------------------------- */

/*
 * Root is not limited; every other user may hold this many of each kind
 * on all devices together, so that one user cannot take a device's whole
 * capacity (RXDP_MAX_QP QPs, the engine's 65536 MRs) from the others.
 */
static const __u32 user_limit[] = {
	[HO_PD] = 4096,
	[HO_MR] = 16384,
	[HO_CHANNEL] = 1024,
	[HO_CQ] = 4096,
	[HO_SRQ] = 1024,
	[HO_QP] = RXDP_MAX_QP / 4,
	[HO_AH] = 16384,
	[HO_MW] = 16384,
	[HO_MEM] = 16384,
	/* an eighth of a device's: a user cannot take every group */
	[HO_MCAST] = RXDP_MAX_TOTAL_MCAST_QP_ATTACH / 8,
};

struct uid_use {
	struct uid_use *next;
	uid_t uid;
	__u32 n[HO_MCAST + 1];
	__u64 bytes; /* of rxdpd's memory (--user-mem) */
};

static struct uid_use *uses;

static struct uid_use *use_of(uid_t uid)
{
	struct uid_use *u;

	for (u = uses; u; u = u->next)
		if (u->uid == uid)
			return u;
	u = calloc(1, sizeof(*u));
	if (u) {
		u->uid = uid;
		u->next = uses;
		uses = u;
	}
	return u;
}

static const char *const kind_name[] = {
	[HO_PD] = "PD",
	[HO_MR] = "MR",
	[HO_CHANNEL] = "channel",
	[HO_CQ] = "CQ",
	[HO_SRQ] = "SRQ",
	[HO_QP] = "QP",
	[HO_AH] = "AH",
	[HO_MW] = "MW",
	[HO_MEM] = "shared memory range",
	[HO_MCAST] = "multicast attachment",
};

static int user_charge(uid_t uid, enum hobj_kind k, char *msg, size_t msglen)
{
	struct uid_use *u = use_of(uid);

	if (!u)
		return -ENOMEM;
	if (uid && u->n[k] >= user_limit[k]) {
		snprintf(msg, msglen,
			 "user %u holds %u %ss already, the most one user may",
			 (unsigned int)uid, u->n[k], kind_name[k]);
		return -EDQUOT;
	}
	u->n[k]++;
	return 0;
}

static void user_uncharge(uid_t uid, enum hobj_kind k)
{
	struct uid_use *u = use_of(uid);

	if (u && u->n[k])
		u->n[k]--;
}

/*
 * Memory rxdpd allocates for a user's objects (the engine's records of a
 * queue, the rings it shares), counted in bytes against --user-mem: one
 * user cannot grow rxdpd, which every user needs, until the OOM killer
 * takes it. Root is not limited. The bytes go with the object.
 */
static int mem_charge(struct uverbs_ctx *x, struct uobj *o, __u64 bytes,
		      char *msg, size_t msglen)
{
	uid_t uid = x->c->uid;
	struct uid_use *u = use_of(uid);

	if (!u)
		return -ENOMEM;
	if (uid && u->bytes + bytes > rxdpd.user_mem) {
		snprintf(msg, msglen,
			 "user %u holds %llu bytes of rxdpd's memory; %llu "
			 "more would pass its %llu (rxdpd --user-mem)",
			 (unsigned int)uid, (unsigned long long)u->bytes,
			 (unsigned long long)bytes,
			 (unsigned long long)rxdpd.user_mem);
		return -ENOMEM;
	}
	u->bytes += bytes;
	o->charged += bytes;
	return 0;
}

/* bytes of what o was charged go back (all of it: o->charged) */
static void mem_uncharge(struct uverbs_ctx *x, struct uobj *o, __u64 bytes)
{
	struct uid_use *u = use_of(x->c->uid);

	if (bytes > o->charged)
		bytes = o->charged;
	if (u)
		u->bytes -= bytes < u->bytes ? bytes : u->bytes;
	o->charged -= bytes;
}

static int charge(struct uverbs_ctx *x, enum hobj_kind k, char *msg,
		  size_t msglen)
{
	return user_charge(x->c->uid, k, msg, msglen);
}

static void uncharge(struct uverbs_ctx *x, enum hobj_kind k)
{
	user_uncharge(x->c->uid, k);
}

/* --- shared memory ----------------------------------------------------- */

/*
 * A memfd of len bytes, mapped here, sealed against shrinking and growing
 * (a client could otherwise truncate it under rxdpd's mapping: SIGBUS).
 */
static int shm_create(const char *name, size_t len, void **map)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW)) {
		int err = -errno;

		close(fd);
		return err;
	}
	*map = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_POPULATE, fd, 0);
	if (*map == MAP_FAILED) {
		int err = -errno;

		close(fd);
		*map = NULL;
		return err;
	}
	return fd;
}

/*
 * An engine's page: rxdpd's alone to write (mode 0600), and a successor's
 * too (a takeover maps it again from its fd, sealed already: so no
 * F_SEAL_FUTURE_WRITE); clients get it opened read-only (page_fd_ro()).
 * 0 or -errno (what it made is freed with the engine).
 */
static int page_open(struct uverbs_eng *he)
{
	void *p;

	if (he->page_fd < 0) {
		he->page_fd = shm_create("rxdp-device", sizeof(*he->page),
					 (void **)&he->page);
		if (he->page_fd < 0)
			return he->page_fd;
		if (fchmod(he->page_fd, 0600) ||
		    fcntl(he->page_fd, F_ADD_SEALS, F_SEAL_SEAL))
			return -errno;
		return 0;
	}
	p = mmap(NULL, sizeof(*he->page), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_POPULATE, he->page_fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	he->page = p;
	return 0;
}

/*
 * A client's fd of the page: the memfd opened again read-only, so that it
 * maps it read-only (and, not its owner, cannot open it writable again)
 */
static int page_fd_ro(const struct uverbs_eng *he)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", he->page_fd);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* --- events (data-path thread, engine lock held) ------------------------ */

static bool pipe_put(int fd, const void *rec, size_t len)
{
	return fd >= 0 && write(fd, rec, len) == (ssize_t)len;
}

static void ctx_event(struct uverbs_ctx *x, __u32 type, __u32 port,
		      __u64 cookie, _Atomic __u32 *count)
{
	struct rxdp_hca_event ev = { .type = type,
				     .port = port,
				     .cookie = cookie };

	if (pipe_put(x->async_wfd, &ev, sizeof(ev))) {
		if (count)
			atomic_fetch_add(count, 1);
	} else {
		x->dropped++;
	}
}

static void on_event(void *arg, enum ibv_event_type ev, void *user)
{
	struct uobj *o = user;

	if (o)
		ctx_event(o->ctx, ev, 0, o->cookie, &o->async_events);
}

static void on_cq_notify(void *arg)
{
	struct uobj *o = arg;

	if (o->cq.ch && pipe_put(o->cq.ch->wfd, &o->cookie, sizeof(o->cookie)))
		atomic_fetch_add(&o->comp_events, 1);
}

/* A group got its first member on the device, or lost its last */
static void on_mcast(void *arg, const uint8_t *gid, bool member)
{
	struct uverbs_dev *hd = arg;

	if (member)
		mcast_join(&hd->joins, hd->ifindex, gid);
	else
		mcast_leave(&hd->joins, gid);
}

static struct rxdp_eah *on_ah_lookup(void *arg, uint32_t h)
{
	struct uverbs_dev *hd = arg;

	return h && h <= HCA_MAX_AH ? atomic_load(&hd->ah_eah[h - 1]) : NULL;
}

/* --- devices ------------------------------------------------------------ */

/* What an engine (stopped, or never started) had */
static void uverbs_eng_free(struct uverbs_eng *he)
{
	rxdp_xsk_port_destroy(he->port);
	if (he->page)
		munmap(he->page, sizeof(*he->page));
	if (he->page_fd >= 0)
		close(he->page_fd);
	he->port = NULL;
	he->page = NULL;
	he->page_fd = -1;
}

static void uverbs_dev_free(struct uverbs_dev *hd)
{
	if (!hd)
		return;
	for (int i = 0; i < hd->ne; i++)
		rxdp_engine_destroy(hd->eng[i].e);
	rxdp_engine_group_destroy(hd->group);
	for (int i = 0; i < hd->ne; i++)
		uverbs_eng_free(&hd->eng[i]);
	mcast_leave_all(&hd->joins);
	rxdp_umem_destroy(&hd->umem);
	free(hd->ahs);
	free(hd->ah_eah);
	free(hd);
}

/* The CPUs the data path may use: --cpus, else rxdpd's own */
static int uverbs_cpus(void)
{
	cpu_set_t set;

	if (rxdpd.ncpus_set)
		return CPU_COUNT(&rxdpd.cpus);
	return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set)
							    : 1;
}

/*
 * How many engines a device may run, one per queue at most: --engines N,
 * else (auto, the default) as many as the CPUs its threads may use
 * (--cpus, else every one)
 */
static int uverbs_max_engines(void)
{
	int n = rxdpd.engines ? rxdpd.engines : uverbs_cpus();

	if (n > RXDP_CTL_MAX_XSKS)
		n = RXDP_CTL_MAX_XSKS;
	return n < 1 ? 1 : n;
}

/*
 * --engines-per-queue auto: a device of one queue gets a second engine
 * on it where the engines may use two CPUs, so one user's stream does not
 * hold the thread another user's ping-pong waits for (README.md "Engines
 * on one queue"); never with --poll (a second spinning thread), nor with
 * several queues (their first engines already share the work, and an
 * extra socket shrinks every socket's frames)
 */
static __u32 uverbs_engines_per_queue(__u32 nq, int max_ne)
{
	if (rxdpd.engines_per_queue)
		return (__u32)rxdpd.engines_per_queue;
	return nq == 1 && max_ne >= 2 && !rxdpd.poll ? 2 : 1;
}

/* Whether engine k is one beyond the first on its queue (its XSK slot) */
static bool uverbs_eng_extra(const struct uverbs_dev *hd, int k)
{
	return (__u32)k >= hd->nq_open && (__u32)k < hd->nq_open * hd->nsets;
}

/* Engine k of n: the k-th CPU of --cpus (of every k-th if fewer), or any */
static const cpu_set_t *uverbs_engine_cpus(struct uverbs_eng *he, int k, int n)
{
	int cnt, seen = 0;

	if (!rxdpd.ncpus_set)
		return NULL;
	cnt = CPU_COUNT(&rxdpd.cpus);
	if (cnt < n) /* fewer CPUs than engines: they share all of them */
		return &rxdpd.cpus;
	CPU_ZERO(&he->cpus);
	for (int c = 0; c < CPU_SETSIZE && seen < cnt; c++) {
		if (!CPU_ISSET(c, &rxdpd.cpus))
			continue;
		/* engine k takes the CPUs k, k + n, ... of the list */
		if (seen % n == k)
			CPU_SET(c, &he->cpus);
		seen++;
	}
	return &he->cpus;
}

/* Engine k of hd, on its port (he->port): its page and its thread */
/* Whether name is in list (comma-separated; NULL: empty) */
static bool uverbs_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	while (list && *list) {
		size_t len = strcspn(list, ",");

		if (len == n && !strncmp(list, name, n))
			return true;
		list += len + (list[len] == ',');
	}
	return false;
}

/* The link's speed, where DCQCN's rates start (0: unknown) */
static uint32_t uverbs_link_mbps(const char *ifname)
{
	char path[64 + IF_NAMESIZE];
	long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &v) != 1 || v < 0)
		v = 0;
	fclose(f);
	return (uint32_t)v;
}

static int uverbs_eng_start(struct uverbs_dev *hd, int k, char *msg,
			    size_t msglen)
{
	struct rxdp_engine_config cfg = hd->cfg;
	struct uverbs_eng *he = &hd->eng[k];

	int err = page_open(he);

	if (err) {
		snprintf(msg, msglen, "cannot make the device page: %s",
			 strerror(-err));
		return -1;
	}
	cfg.port = he->port;
	cfg.sleep_word = &he->page->sleeping;
	cfg.stream_word = &he->page->streaming;
	cfg.cpus = uverbs_engine_cpus(he, k, hd->max_ne);
	cfg.group_index = k;
	cfg.xsk_slot = uverbs_eng_extra(hd, k)
			       ? (__u32)k / hd->nq_open
			       : 0; /* one started for a later queue too */
	he->e = rxdp_engine_create(&cfg);
	if (!he->e) {
		snprintf(msg, msglen, "cannot start the engine: %s",
			 strerror(errno));
		return -1;
	}
	return 0;
}

/* The device's data path, made at its first context */
static void uverbs_dev_note(struct rxdp_link *l);

/*
 * hd's engines started on their ports (its queues and engines counted):
 * TX threads where CPUs are spare, the group, the configuration; how
 * (what) said in the log. 0, or -1 with msg.
 */
static int uverbs_dev_start(struct rxdp_link *l, struct uverbs_dev *hd,
			    const char *what, bool held, char *msg,
			    size_t msglen)
{
	struct rxdp_engine_config *cfg = &hd->cfg;
	uint32_t flags = rxdp_xsk_port_bind_flags(hd->eng[0].port);
	bool want_tx, tx = false; /* the engines have TX threads */

	/*
	 * A TX thread per engine only where CPUs are spare: on two CPUs the
	 * threads compete with each other and the applications and lose
	 * (engine README, the TX thread)
	 */
	want_tx = rxdpd.tx_thread == RXDPD_TXT_ON ||
		  (rxdpd.tx_thread == RXDPD_TXT_AUTO &&
		   uverbs_cpus() >= RXDPD_TXT_CPUS_PER_ENGINE * hd->ne);
	for (int k = 0; k < hd->ne && want_tx; k++)
		tx = rxdp_xsk_port_tx_thread(
			hd->eng[k].port, rxdpd.ncpus_set ? &rxdpd.cpus : NULL);
	hd->group = hd->max_ne > 1 ? rxdp_engine_group_create(hd->max_ne)
				   : NULL;
	if (hd->max_ne > 1 && !hd->group) {
		snprintf(msg, msglen, "out of memory");
		return -1;
	}
	cfg->ops = &rxdp_xsk_port_ops;
	cfg->psn_table = l->dev->maps.psn;
	cfg->maps = &l->dev->emaps;
	cfg->progress_thread = 1;
	cfg->event_cb = on_event;
	cfg->event_arg = hd;
	cfg->ah_lookup = on_ah_lookup;
	cfg->ah_arg = hd;
	cfg->mcast_cb = on_mcast;
	cfg->mcast_arg = hd;
	hd->ifindex = l->ifindex;
	cfg->fifo_prio = rxdpd.fifo_prio;
	cfg->poll = rxdpd.poll;
	cfg->ecn_off = uverbs_listed(rxdpd.no_ecn, l->ifname);
	cfg->go_back_n = uverbs_listed(rxdpd.go_back_n, l->ifname);
	cfg->cc_algo = dev_cc_algo(l->ifname);
	cfg->tcs = dev_tcs(l->ifname);
	cfg->line_mbps = uverbs_link_mbps(l->ifname);
	cfg->cc = &rxdpd.cc;
	cfg->group = hd->group;
	cfg->held = held;
	if (flags & XDP_USE_SG)
		cfg->max_mtu = 4096;
	for (int k = 0; k < hd->ne; k++)
		if (uverbs_eng_start(hd, k, msg, msglen))
			return -1;
	l->dev->uv = hd;
	uverbs_dev_note(l);
	pr_info("rxdp_%s: data path %s: %u queue(s), %d engine(s), %s "
		"mode%s%s%s\n",
		l->ifname, what, hd->nq, hd->ne,
		flags & XDP_ZEROCOPY ? "zero-copy" : "copy",
		flags & XDP_USE_SG ? ", multi-buffer" : "",
		rxdpd.poll ? ", polling" : "", tx ? ", TX threads" : "");
	return 0;
}

/* hd without anything in it yet; NULL (out of memory) */
static struct uverbs_dev *uverbs_dev_new(void)
{
	struct uverbs_dev *hd = calloc(1, sizeof(*hd));

	if (!hd)
		return NULL;
	for (int i = 0; i < RXDP_CTL_MAX_XSKS; i++)
		hd->eng[i].page_fd = -1;
	hd->umem.fd = -1;
	hd->ahs = calloc(HCA_MAX_AH, sizeof(*hd->ahs));
	hd->ah_eah = calloc(HCA_MAX_AH, sizeof(*hd->ah_eah));
	if (!hd->ahs || !hd->ah_eah) {
		uverbs_dev_free(hd);
		return NULL;
	}
	return hd;
}

static struct uverbs_dev *uverbs_dev_adopt(struct rxdp_link *l);

static struct uverbs_dev *uverbs_dev_get(struct rxdp_link *l, char *msg,
					 size_t msglen)
{
	struct uverbs_dev *hd = l->dev->uv;
	struct rxdp_xsk_port *port;
	int fds[RXDP_CTL_MAX_XSKS], n, ret;
	const char *why = "";
	__u32 nq;

	if (hd)
		return hd;
	if (tko_state && (hd = uverbs_dev_adopt(l)))
		return hd;
	hd = uverbs_dev_new();
	if (!hd) {
		snprintf(msg, msglen, "out of memory");
		return NULL;
	}
	ret = rxdp_umem_create(&hd->umem, HCA_FRAMES, HCA_FRAME);
	if (ret) {
		snprintf(msg, msglen, "cannot allocate the UMEM: %s",
			 strerror(-ret));
		goto err;
	}
	nq = l->num_rx_queues ? l->num_rx_queues : 1;
	if (nq > RXDP_MAX_QUEUES)
		nq = RXDP_MAX_QUEUES;
	hd->max_ne = uverbs_max_engines();
	/*
	 * --engines-per-queue: that many engines on each queue, their
	 * sockets sharing its rings, as many as the engines the device may
	 * run allow (README.md "Engines on one queue")
	 */
	hd->nsets = uverbs_engines_per_queue(nq, hd->max_ne);
	if (nq * hd->nsets > (__u32)hd->max_ne)
		hd->nsets = (__u32)hd->max_ne / nq;
	if (!hd->nsets)
		hd->nsets = 1;
	for (int i = 0;; i++) {
		port = rxdp_xsk_port_open(
			&hd->umem, l->ifindex, nq, hd->nsets, HCA_RING,
			rxdp_roce_max_frame(rxdp_ib_mtu(l->mtu, rxdpd.mtu_cap)),
			rxdpd.xsk_mode, &why);
		/* a successor that could not take its predecessor's sockets
		 * (Linux before 6.4): the predecessor lets go of them as it
		 * hands over (uverbs_tko_let_go()) */
		if (port || errno != EBUSY || !tko_state || i == TKO_BIND_TRIES)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	}
	if (!port) {
		snprintf(msg, msglen,
			 "cannot bind AF_XDP sockets on %s: %s (%s)", l->ifname,
			 why, strerror(errno));
		goto err;
	}
	n = rxdp_xsk_port_fds(port, fds, RXDP_CTL_MAX_XSKS);
	hd->nq_open = (__u32)n / hd->nsets; /* the queues it has */
	for (int i = 0; i < n; i++) {
		/* socket set * queues + q: slot set, queue q */
		__u32 k = (__u32)i / hd->nq_open * RXDP_MAX_QUEUES +
			  (__u32)i % hd->nq_open;

		if (bpf_map_update_elem(l->dev->maps.xsks, &k, &fds[i],
					BPF_ANY)) {
			snprintf(msg, msglen,
				 "cannot put the AF_XDP socket in the XSK map: "
				 "%s",
				 strerror(errno));
			rxdp_xsk_port_destroy(port);
			goto err;
		}
	}
	/* queue q's socket goes to engine q % ne; set s's to engine s * nq + q */
	hd->ne = hd->max_ne < n ? hd->max_ne : n;
	hd->nq = hd->nq_open;
	for (int q = 0; q < (int)hd->nq; q++) {
		hd->q_eng[q] = (__u8)(q % hd->ne);
		hd->q_idx[q] = (__u8)(q / hd->ne);
	}
	for (int k = 0; k < hd->ne; k++) {
		hd->eng[k].port = rxdp_xsk_port_split(port, k, hd->ne);
		if (!hd->eng[k].port) {
			snprintf(msg, msglen, "cannot split the port: %s",
				 strerror(errno));
			rxdp_xsk_port_destroy(port);
			goto err;
		}
	}
	rxdp_xsk_port_destroy(port); /* what is left of it: nothing */
	/* under a takeover held too, until the contexts are made again */
	if (uverbs_dev_start(l, hd, "up", tko_state != NULL, msg, msglen))
		goto err;
	return hd;
err:
	for (__u32 q = 0; q < RXDP_XSK_SLOTS; q++)
		bpf_map_delete_elem(l->dev->maps.xsks, &q);
	uverbs_dev_free(hd);
	return NULL;
}

/* --- a takeover (takeover.c) ------------------------------------------- */

/* A device's data path in the state: then its ports' (TKO_PORTS) */
struct tko_dev {
	int32_t ifindex;
	char ifname[IF_NAMESIZE];
	int32_t umem_fd;
	uint32_t frame_size;
	int32_t ne, max_ne;
	uint32_t nsets, nq_open, nq, nq_failed;
	uint8_t q_eng[RXDP_MAX_QUEUES], q_idx[RXDP_MAX_QUEUES];
	int32_t page_fd[RXDP_CTL_MAX_XSKS];
	int32_t nport_fds, port_fds[2 * RXDP_CTL_MAX_XSKS];
	__u64 hwc[RXDP_CTL_MAX_XSKS][RXDP_HWC_MAX];
};

int uverbs_tko_refusal(char *msg, size_t msglen)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next) {
		if (l->dev && l->dev->uv && l->dev->uv->joins) {
			snprintf(msg, msglen,
				 "rxdp_%s has joined multicast groups: "
				 "handing those over is not built yet",
				 l->ifname);
			return -EBUSY;
		}
	}
	return 0;
}

void uverbs_tko_halt(void)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next)
		for (int k = 0; l->dev && l->dev->uv && k < l->dev->uv->ne; k++)
			rxdp_engine_halt(l->dev->uv->eng[k].e);
}

void uverbs_tko_let_go(void)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next)
		for (int k = 0; l->dev && l->dev->uv && k < l->dev->uv->ne;
		     k++) {
			rxdp_xsk_port_destroy(l->dev->uv->eng[k].port);
			l->dev->uv->eng[k].port = NULL;
		}
}

/* hd's data path into the state: false if its ports cannot be saved */
static bool uverbs_tko_dev(struct tko_out *o, const struct rxdp_link *l,
			   struct uverbs_dev *hd)
{
	struct rxdp_xsk_port *ports[RXDP_CTL_MAX_XSKS];
	int fds[2 * RXDP_CTL_MAX_XSKS];
	struct tko_dev *d = calloc(1, sizeof(*d));
	void *st = NULL;
	long n;

	for (int k = 0; k < hd->ne; k++)
		ports[k] = hd->eng[k].port;
	n = d ? rxdp_xsk_ports_save(ports, hd->ne, NULL, 0) : -ENOMEM;
	if (n > 0 && !(st = malloc((size_t)n)))
		n = -ENOMEM;
	if (n > 0)
		n = rxdp_xsk_ports_save(ports, hd->ne, st, (size_t)n);
	if (n < 0) {
		pr_warn("rxdp_%s: its AF_XDP sockets cannot be handed over "
			"(%s): the successor binds its own\n",
			l->ifname, strerror((int)-n));
		free(st);
		free(d);
		return false;
	}
	d->ifindex = l->ifindex;
	memcpy(d->ifname, l->ifname, sizeof(d->ifname));
	d->umem_fd = tko_fd(o, hd->umem.fd);
	d->frame_size = hd->umem.frame_size;
	d->ne = hd->ne;
	d->max_ne = hd->max_ne;
	d->nsets = hd->nsets;
	d->nq_open = hd->nq_open;
	d->nq = hd->nq;
	d->nq_failed = hd->nq_failed;
	memcpy(d->q_eng, hd->q_eng, sizeof(d->q_eng));
	memcpy(d->q_idx, hd->q_idx, sizeof(d->q_idx));
	for (int k = 0; k < hd->ne; k++) {
		d->page_fd[k] = tko_fd(o, hd->eng[k].page_fd);
		rxdp_engine_hw_counters(hd->eng[k].e, NULL, d->hwc[k]);
	}
	d->nport_fds = rxdp_xsk_ports_takeover_fds(ports, hd->ne, fds,
						   2 * RXDP_CTL_MAX_XSKS);
	for (int i = 0; i < d->nport_fds; i++)
		d->port_fds[i] = tko_fd(o, fds[i]);
	tko_add(o, TKO_DEV, d, sizeof(*d));
	tko_add(o, TKO_PORTS, st, (size_t)n);
	free(st);
	free(d);
	return true;
}

void uverbs_tko_save(struct tko_out *o)
{
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next)
		if (l->dev && l->dev->uv)
			uverbs_tko_dev(o, l, l->dev->uv);
}

/*
 * A predecessor's device page that no engine writes any more (its data
 * path made anew): it says "asleep" for good, so that the clients that
 * map it ring their doorbells on every post (fd closed)
 */
static void tko_page_asleep(int fd)
{
	struct rxdp_hca_dev *p;

	if (fd < 0)
		return;
	p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		atomic_store(&p->sleeping, 1);
		atomic_store(&p->streaming, 0);
		munmap(p, sizeof(*p));
	}
	close(fd);
}

/*
 * l's data path as the predecessor left it (tko_state): its UMEM, its
 * sockets with what they hold, its engines' pages and counters; NULL if
 * the state has none for it, or it cannot be taken (the fds closed: a
 * new data path is made then)
 */
static struct uverbs_dev *uverbs_dev_adopt(struct rxdp_link *l)
{
	struct tko_in it = *tko_state;
	struct rxdp_xsk_port *ports[RXDP_CTL_MAX_XSKS];
	int fds[2 * RXDP_CTL_MAX_XSKS], np = -EINVAL, nf = 0, umem_fd;
	const struct tko_dev *d = NULL;
	struct uverbs_dev *hd;
	const void *st = NULL;
	uint16_t type = 0;
	size_t len, stlen = 0;
	char why[200] = "a damaged state";
	const void *p;

	it.off = 0;
	while ((type = 0, p = tko_next(&it, &type, &len))) {
		if (type != TKO_DEV || len != sizeof(*d) ||
		    ((const struct tko_dev *)p)->ifindex != l->ifindex)
			continue;
		d = p;
		type = 0;
		st = tko_next(&it, &type, &stlen);
		if (type != TKO_PORTS)
			st = NULL;
		break;
	}
	if (!d)
		return NULL;
	hd = uverbs_dev_new();
	if (!hd)
		return NULL;
	if (d->nport_fds < 0 || d->nport_fds > 2 * RXDP_CTL_MAX_XSKS ||
	    d->ne < 1 || d->ne > RXDP_CTL_MAX_XSKS || d->max_ne < d->ne ||
	    d->max_ne > RXDP_CTL_MAX_XSKS || d->nq > RXDP_MAX_QUEUES)
		st = NULL;
	for (nf = 0; st && nf < d->nport_fds; nf++)
		fds[nf] = tko_take_fd(tko_state, d->port_fds[nf]);
	umem_fd = st ? tko_take_fd(tko_state, d->umem_fd) : -1;
	if (umem_fd >= 0 && rxdp_umem_adopt(&hd->umem, umem_fd, d->frame_size))
		close(umem_fd);
	else if (umem_fd >= 0)
		np = rxdp_xsk_ports_adopt(&hd->umem, fds, nf, st, stlen, ports,
					  RXDP_CTL_MAX_XSKS, why, sizeof(why));
	if (np != d->ne) {
		/* (Linux before 6.4 maps no ring of a bound socket: EBUSY) */
		pr_warn("rxdp_%s: the predecessor's data path cannot be "
			"taken (%s): a new one is made, what its sockets held "
			"lost\n",
			l->ifname, why);
		for (int i = 0; np < 0 && i < nf; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		for (int k = 0; k < np; k++)
			hd->eng[k].port = ports[k];
		hd->ne = np > 0 ? np : 0;
		uverbs_dev_free(hd);
		for (int k = 0; k < d->ne && k < RXDP_CTL_MAX_XSKS; k++)
			tko_page_asleep(tko_take_fd(tko_state, d->page_fd[k]));
		return NULL;
	}
	hd->ne = d->ne;
	hd->max_ne = d->max_ne;
	hd->nsets = d->nsets;
	hd->nq_open = d->nq_open;
	hd->nq = d->nq;
	hd->nq_failed = d->nq_failed;
	memcpy(hd->q_eng, d->q_eng, sizeof(hd->q_eng));
	memcpy(hd->q_idx, d->q_idx, sizeof(hd->q_idx));
	for (int k = 0; k < hd->ne; k++) {
		hd->eng[k].port = ports[k];
		hd->eng[k].page_fd = tko_take_fd(tko_state, d->page_fd[k]);
	}
	/* held until the contexts are made again (uverbs_tko_restore()) */
	if (uverbs_dev_start(l, hd, "taken over", true, why, sizeof(why))) {
		pr_warn("rxdp_%s: cannot start the taken data path: %s\n",
			l->ifname, why);
		uverbs_dev_free(hd);
		return NULL;
	}
	for (int k = 0; k < hd->ne; k++)
		rxdp_engine_hw_counters_set(hd->eng[k].e, d->hwc[k]);
	return hd;
}

/*
 * Queue q's socket, the next one: a new engine's first while the device
 * may run more, else on engine q mod ne, running. Its fd, or -errno.
 */
static int uverbs_queue_add(struct uverbs_dev *hd, __u32 q, char *msg,
			    size_t len)
{
	struct rxdp_xsk_queue_add a = { .ifindex = hd->ifindex, .queue = q };
	int k = hd->ne, fd, fds[RXDP_CTL_MAX_XSKS];
	struct uverbs_eng *he = &hd->eng[k];

	if (hd->ne < hd->max_ne) {
		he->port = rxdp_xsk_port_like(hd->eng[0].port);
		fd = he->port
			     ? rxdp_xsk_port_add(he->port, a.ifindex, q, &a.why)
			     : -ENOMEM;
		if (fd < 0)
			snprintf(msg, len, "%s: %s",
				 a.why ? a.why : "out of memory",
				 strerror(-fd));
		else if (uverbs_eng_start(hd, k, msg, len))
			fd = -EAGAIN;
		if (fd < 0) {
			uverbs_eng_free(he);
			return fd;
		}
		hd->ne++;
	} else {
		k = (int)(q % (__u32)hd->ne);
		he = &hd->eng[k];
		fd = rxdp_engine_port_call(he->e, rxdp_xsk_port_add_call, &a);
		if (fd < 0) {
			snprintf(msg, len, "%s: %s", a.why, strerror(-fd));
			return fd;
		}
	}
	hd->q_eng[q] = (__u8)k;
	hd->q_idx[q] =
		(__u8)(rxdp_xsk_port_fds(he->port, fds, RXDP_CTL_MAX_XSKS) - 1);
	return fd;
}

/*
 * The interface now has count RX queues (ethtool -L): the data path, if
 * up, binds a socket on each new one, on a new engine while the device may
 * run more (--engines), else on one running. Queues never go: the kernel
 * refuses to take one from under an AF_XDP socket.
 */
static void uverbs_queues_follow(struct rxdp_link *l, __u32 count)
{
	struct uverbs_dev *hd = l->dev ? l->dev->uv : NULL;
	char msg[200];

	if (!hd)
		return;
	if (count > RXDP_MAX_QUEUES)
		count = RXDP_MAX_QUEUES;
	if (count <= hd->nq || count == hd->nq_failed)
		return;
	while (hd->nq < count) {
		__u32 q = hd->nq;
		int fd = uverbs_queue_add(hd, q, msg, sizeof(msg));

		if (fd < 0) {
			/* tried again when the count changes (each try makes a
			 * UMEM) */
			pr_warn("rxdp_%s: cannot serve RX queue %u: %s (tried "
				"again when the interface's queues change)\n",
				l->ifname, q, msg);
			hd->nq_failed = count;
			break;
		}
		if (bpf_map_update_elem(l->dev->maps.xsks, &q, &fd, BPF_ANY))
			pr_warn("rxdp_%s: cannot put queue %u's AF_XDP socket "
				"in the XSK map: %s\n",
				l->ifname, q, strerror(errno));
		hd->nq++;
		pr_info("rxdp_%s: RX queue %u served by engine %d: %u "
			"queue(s), "
			"%d engine(s)\n",
			l->ifname, q, hd->q_eng[q], hd->nq, hd->ne);
	}
	uverbs_dev_note(l);
}

/*
 * What the device's users are told of its data path (struct rxdp_dev): the largest
 * path MTU it carries, rxdpd.mtu_cap, or 2048 once its sockets are bound
 * without multi-buffer (zero-copy on a driver that has no zero-copy
 * multi-buffer; every socket is bound alike: engine 0's say), and its
 * AF_XDP sockets' modes (XDP_ZEROCOPY or XDP_COPY, XDP_USE_SG), in queue
 * order
 */
static void uverbs_dev_note(struct rxdp_link *l)
{
	struct uverbs_dev *hd = l->dev->uv;
	__u16 m[RXDP_CTL_MAX_XSKS][RXDP_CTL_MAX_XSKS];
	__u32 n = 0;

	l->dev->mtu_cap = rxdpd.mtu_cap;
	if (hd && !(rxdp_xsk_port_bind_flags(hd->eng[0].port) & XDP_USE_SG))
		l->dev->mtu_cap = RXDP_MTU_CAP_NOSG;
	for (int k = 0; hd && k < hd->ne; k++)
		rxdp_xsk_port_modes(hd->eng[k].port, m[k], RXDP_CTL_MAX_XSKS);
	for (__u32 q = 0; hd && q < hd->nq && n < RXDP_CTL_MAX_XSKS; q++)
		l->dev->xsk_modes[n++] = m[hd->q_eng[q]][hd->q_idx[q]];
	l->dev->nxsks = n;
}

/* After the CM let QP1 go (DEV_EV_DOWN): every context on it goes */
static void uverbs_dev_release(struct rxdp_link *l)
{
	struct rxdp_client *c;

	if (!l->dev || !l->dev->uv)
		return;
	for (c = rxdpd.clients; c; c = c->next)
		if (c->ctx && c->ctx->ifindex == l->ifindex)
			uverbs_ctx_release(c);
	uverbs_dev_free(l->dev->uv);
	l->dev->uv = NULL;
	uverbs_dev_note(l);
}

/* --- contexts and their objects ----------------------------------------- */

static struct uverbs_ctx *ctx_of(struct rxdp_client *c, char *msg,
				 size_t msglen)
{
	if (!c->ctx)
		snprintf(
			msg, msglen,
			"no verbs context on this connection (CTX_OPEN first)");
	return c->ctx;
}

static struct uobj *obj_get(struct uverbs_ctx *x, __u32 h, enum hobj_kind k)
{
	struct uobj *o;

	if (k == HO_AH) {
		struct uverbs_dev *hd = x->hd;

		o = h && h <= HCA_MAX_AH ? hd->ahs[h - 1] : NULL;
		return o && o->ctx == x ? o : NULL;
	}
	o = h && h <= x->nobjs ? x->objs[h - 1] : NULL;
	return o && o->kind == k ? o : NULL;
}

/* obj_get, or NULL with "no <kind> <handle>" in msg */
static struct uobj *obj_need(struct uverbs_ctx *x, __u32 h, enum hobj_kind k,
			     char *msg, size_t msglen)
{
	struct uobj *o = obj_get(x, h, k);

	if (!o)
		snprintf(msg, msglen, "no %s %u", kind_name[k], h);
	return o;
}

/* A handle for o in table *tab of *n slots (grown as needed); 0: none */
static __u32 slot_take(struct uobj ***tab, __u32 *n, struct uobj *o)
{
	struct uobj **t;
	__u32 i;

	for (i = 0; i < *n; i++)
		if (!(*tab)[i])
			break;
	if (i == *n) {
		__u32 nn = *n ? *n * 2 : 16;

		t = realloc(*tab, nn * sizeof(*t));
		if (!t)
			return 0;
		memset(t + *n, 0, (nn - *n) * sizeof(*t));
		*tab = t;
		*n = nn;
	}
	(*tab)[i] = o;
	return i + 1;
}

static __u32 ah_slot_take(struct uverbs_dev *hd, struct uobj *o)
{
	for (__u32 i = 0; i < HCA_MAX_AH; i++) {
		if (!hd->ahs[i]) {
			hd->ahs[i] = o;
			return i + 1;
		}
	}
	return 0;
}

static struct uobj *obj_new(struct uverbs_ctx *x, enum hobj_kind k,
			    __u64 cookie, char *msg, size_t msglen, int *err)
{
	struct uobj *o;

	*err = charge(x, k, msg, msglen);
	if (*err)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (o) {
		o->kind = k;
		o->ctx = x;
		o->cookie = cookie;
		o->mem_fd = -1;
		o->handle = k == HO_AH ? ah_slot_take(x->hd, o)
				       : slot_take(&x->objs, &x->nobjs, o);
	}
	if (!o || !o->handle) {
		free(o);
		uncharge(x, k);
		*err = -ENOMEM;
		return NULL;
	}
	return o;
}

static void obj_free(struct uobj *o)
{
	struct uverbs_ctx *x = o->ctx;

	if (o->kind == HO_AH)
		x->hd->ahs[o->handle - 1] = NULL;
	else
		x->objs[o->handle - 1] = NULL;
	if (o->mem)
		munmap(o->mem, o->mem_len);
	if (o->mem_fd >= 0)
		close(o->mem_fd);
	if (o->pd)
		o->pd->refs--;
	uncharge(x, o->kind);
	mem_uncharge(x, o, o->charged);
	x->locked -= o->locked;
	free(o);
}

/*
 * Is fd a /proc/PID/mem? rxdpd reaches a client's memory only through the
 * one the client opened itself: exactly the address space the client
 * could reach (an execve() after that leaves it reading nothing; a pid
 * recycled cannot redirect it), never one rxdpd's own privileges would.
 */
static bool is_proc_mem(int fd)
{
	char link[64], path[PATH_MAX];
	struct statfs sf;
	ssize_t n;

	if (fd < 0 || fstatfs(fd, &sf) || sf.f_type != PROC_SUPER_MAGIC)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 5)
		return false;
	path[n] = '\0';
	return !strcmp(path + n - 4, "/mem") &&
	       (fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR;
}

/* Whether engine a suits a new context better than engine b (below) */
static bool uverbs_eng_better(const struct uverbs_dev *hd, const int *others,
			      int a, int b)
{
	if (others[a] != others[b])
		return others[a] < others[b];
	if (uverbs_eng_extra(hd, a) != uverbs_eng_extra(hd, b))
		return !uverbs_eng_extra(hd, a);
	return hd->eng[a].ctxs < hd->eng[b].ctxs;
}

/*
 * The engine that serves a new context of user uid, whole: the one serving
 * the fewest contexts of other users, then one of the first engine on each
 * queue, then the fewest contexts. Users sit apart where the device has an
 * engine for each (one user's stream then never holds the thread another
 * user's ping-pong waits for: 2-core VM, 2 queues, a 64 KiB ib_write_bw
 * beside a 64 B ping-pong of another user, docs/performance.md
 * "Sharing"), a user's contexts go together beside other users, and one
 * user's alone spread as before over the queues' first engines; the
 * engines beyond one per queue (--engines-per-queue) are for other users
 * (a user's own contexts on two engines hand each packet they exchange
 * over, and more engines on one queue add no queue to spread over).
 */
static struct uverbs_eng *uverbs_eng_for(struct uverbs_dev *hd, uid_t uid)
{
	int others[RXDP_CTL_MAX_XSKS] = { 0 }, best = 0;

	for (struct rxdp_client *o = rxdpd.clients; o; o = o->next)
		if (o->ctx && o->ctx->hd == hd && o->uid != uid)
			others[o->ctx->he - hd->eng]++;
	for (int i = 1; i < hd->ne; i++)
		if (uverbs_eng_better(hd, others, i, best))
			best = i;
	return &hd->eng[best];
}

int uverbs_ctx_open(struct rxdp_client *c, struct rxdp_link *l, int mem_fd,
		    int *fds, char *msg, size_t msglen)
{
	struct uverbs_dev *hd;
	struct uverbs_ctx *x;
	int p[2];

	if (c->ctx) {
		snprintf(msg, msglen, "this connection has a context already");
		return -EBUSY;
	}
	if (!is_proc_mem(mem_fd)) {
		snprintf(msg, msglen,
			 "a context needs the client's /proc/self/mem, opened "
			 "read-write, with the request");
		return -EINVAL;
	}
	if (!c->allowed) {
		snprintf(msg, msglen,
			 "user %u is not in the group rxdpd serves (--group)",
			 (unsigned int)c->uid);
		return -EACCES;
	}
	hd = uverbs_dev_get(l, msg, msglen);
	if (!hd)
		return -ENODEV;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -ENOMEM;
	x->mem_fd = fcntl(mem_fd, F_DUPFD_CLOEXEC, 0);
	if (x->mem_fd < 0 || pipe2(p, O_CLOEXEC)) {
		int err = -errno;

		if (x->mem_fd >= 0)
			close(x->mem_fd);
		free(x);
		return err;
	}
	/* rxdpd never blocks on a client that does not read its events */
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	x->he = uverbs_eng_for(hd, c->uid);
	x->emem = rxdp_engine_mem_create(x->he->e, x->mem_fd);
	if (!x->emem) {
		close(p[0]);
		close(p[1]);
		close(x->mem_fd);
		free(x);
		return -ENOMEM;
	}
	x->c = c;
	x->ifindex = l->ifindex;
	x->hd = hd;
	x->async_wfd = p[1];
	x->doorbell = rxdp_engine_doorbell(x->he->e);
	fds[0] = x->doorbell < 0 ? -1 : dup(x->doorbell);
	fds[1] = page_fd_ro(x->he);
	fds[2] = p[0];
	if (fds[0] < 0 || fds[1] < 0) {
		for (int i = 0; i < 3; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		close(p[1]);
		rxdp_engine_mem_destroy(x->emem);
		close(x->mem_fd);
		if (x->doorbell >= 0)
			rxdp_engine_doorbell_close(x->he->e, x->doorbell);
		free(x);
		return -EMFILE;
	}
	x->he->ctxs++;
	c->ctx = x;
	pr_debug("pid %d: context on rxdp_%s\n", (int)c->pid, l->ifname);
	return 0;
}

static void qp_obj_destroy(struct uobj *o);

/* Unpublished first: no UD post can find it once it is destroyed */
static void ah_destroy(struct uobj *o)
{
	atomic_store(&o->ctx->hd->ah_eah[o->handle - 1], NULL);
	rxdp_engine_destroy_ah(o->eah);
	obj_free(o);
}

/* Everything of the client's context, in the order objects depend */
void uverbs_ctx_release(struct rxdp_client *c)
{
	/* windows before the regions they may be bound to */
	static const enum hobj_kind order[] = { HO_QP,	    HO_SRQ, HO_CQ,
						HO_MW,	    HO_MR,  HO_MEM,
						HO_CHANNEL, HO_PD };
	struct uverbs_ctx *x = c->ctx;

	if (!x)
		return;
	for (__u32 i = 0; i < HCA_MAX_AH; i++) {
		struct uobj *o = x->hd->ahs[i];

		if (o && o->ctx == x)
			ah_destroy(o);
	}
	for (size_t k = 0; k < sizeof(order) / sizeof(order[0]); k++) {
		for (__u32 i = 0; i < x->nobjs; i++) {
			struct uobj *o = x->objs[i];

			if (!o || o->kind != order[k])
				continue;
			switch (o->kind) {
			case HO_QP:
				qp_obj_destroy(o);
				continue;
			case HO_SRQ:
				rxdp_engine_destroy_srq(o->esrq);
				break;
			case HO_CQ:
				rxdp_engine_destroy_cq(o->cq.ecq);
				break;
			case HO_MR:
				rxdp_engine_dereg_mr(o->emr);
				break;
			case HO_MW:
				rxdp_engine_dealloc_mw(o->emr);
				break;
			case HO_MEM:
				rxdp_engine_mem_unmap(x->emem, o->mem_addr);
				break;
			case HO_CHANNEL:
				close(o->wfd);
				break;
			case HO_PD:
				rxdp_engine_dealloc_pd(o->epd);
				break;
			default:
				break;
			}
			obj_free(o);
		}
	}
	if (x->dropped)
		pr_info("pid %d did not read %u event(s)\n", (int)c->pid,
			x->dropped);
	close(x->async_wfd);
	rxdp_engine_mem_destroy(x->emem);
	close(x->mem_fd);
	rxdp_engine_doorbell_close(x->he->e, x->doorbell);
	x->he->ctxs--;
	free(x->objs);
	free(x);
	c->ctx = NULL;
}

int uverbs_counters(struct rxdp_client *c, struct rxdp_link *l, __u32 qpn,
		    __u64 *out, char *msg, size_t msglen)
{
	struct uverbs_dev *hd = l->dev->uv;
	struct qp_handle *qp = NULL;

	memset(out, 0, RXDP_HWC_MAX * sizeof(*out));
	if (qpn) {
		qp = qp_lookup(l, qpn);
		if (!qp || (qp->uid != c->uid && c->uid)) {
			/* the same answer for another's QP as for none */
			snprintf(msg, msglen, "no QP %#x of yours on rxdp_%s",
				 qpn, l->ifname);
			return -ENOENT;
		}
		if (qp->eqp)
			rxdp_engine_hw_counters(qp->e, qp->eqp, out);
		return 0;
	}
	for (int i = 0; hd && i < hd->ne; i++) {
		struct rxdp_engine_stats st;
		__u64 v[RXDP_HWC_MAX];

		rxdp_engine_hw_counters(hd->eng[i].e, NULL, v);
		rxdp_engine_get_stats(hd->eng[i].e, &st);
		v[RXDP_HWC_RX_HANDOFFS] = st.rx_handoffs;
		v[RXDP_HWC_RX_HANDOFF_RUNS] = st.handoff_runs;
		v[RXDP_HWC_RX_COALESCED] = st.rx_coalesced;
		v[RXDP_HWC_DATAPATH_SLEEPS] = st.sleeps;
		v[RXDP_HWC_RETRANSMITTED] = st.retransmits;
		v[RXDP_HWC_HELD_REQUESTS] = st.rx_held;
		v[RXDP_HWC_SR_RESENT] = st.sr_resends;
		v[RXDP_HWC_OUT_OF_BUFFER] = st.rx_drop_handoff;
		for (int k = 0; k < RXDP_HWC_MAX; k++)
			out[k] += v[k];
		out[RXDP_HWC_OUT_OF_BUFFER] +=
			rxdp_xsk_port_rx_lost(hd->eng[i].port);
	}
	out[RXDP_HWC_LINK_DOWNED] = l->dev->link_downed;
	return 0;
}

void uverbs_tc_counters(const struct rxdp_link *l, struct rxdp_dev_info *di)
{
	const struct uverbs_dev *hd = l->dev ? l->dev->uv : NULL;

	for (int i = 0; hd && i < hd->ne; i++) {
		struct rxdp_engine_stats st;

		rxdp_engine_get_stats(hd->eng[i].e, &st);
		for (unsigned int k = 0; k < di->ntcs && k < RXDP_CTL_MAX_TCS;
		     k++) {
			di->tcs[k].tx_packets += st.tc[k].tx_packets;
			di->tcs[k].tx_bytes += st.tc[k].tx_bytes;
			di->tcs[k].rx_packets += st.tc[k].rx_packets;
			di->tcs[k].rx_bytes += st.tc[k].rx_bytes;
		}
	}
}

/* A port/GID/device event to every context on ifindex */
static void uverbs_port_event(int ifindex, __u32 type, __u32 port)
{
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next)
		if (c->ctx && c->ctx->ifindex == ifindex)
			ctx_event(c->ctx, type, port, 0, NULL);
}

static void uverbs_on_dev(const struct dev_event *ev)
{
	switch (ev->type) {
	case DEV_EV_GONE:
		uverbs_dev_release(ev->l);
		break;
	case DEV_EV_QUEUES:
		uverbs_queues_follow(ev->l, ev->count);
		break;
	case DEV_EV_PORT:
		uverbs_port_event(ev->ifindex, ev->ibv_event, ev->port);
		break;
	default:
		break;
	}
}

void uverbs_init(void)
{
	static struct dev_listener li = {
		.fn = uverbs_on_dev,
		.types = 1U << DEV_EV_GONE | 1U << DEV_EV_QUEUES |
			 1U << DEV_EV_PORT,
	};

	dev_listen(&li);
}

/*
 * MEM_SHARE: the client's library re-backed [addr, addr+length) of its
 * memory with the memfd fd (userspace/verbs/regmem.c); mapped here, the
 * engine moves payload there with a memcpy. What rxdpd maps must never
 * fault it or make it wait on anything the client controls: a memfd
 * (shmem: no file system that answers faults, no hugetlb pool that can
 * run dry), opened read-write, sealed against shrinking (sealed here if
 * the client did not), at least as long as the range. A client that lies
 * about where it maps the memfd misleads only its own QPs: the range
 * stands for its memory in its own PDs and nowhere else.
 */
int uverbs_mem_share(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_ctl_obj *o = r->o;
	int fd = r->in_fd;
	long page = sysconf(_SC_PAGESIZE);
	struct statfs sf;
	struct stat st;
	struct uobj *h;
	void *map;
	int seals, err;

	if (fd < 0 || !o->length || (o->addr | o->length) & (page - 1) ||
	    o->addr + o->length < o->addr) {
		snprintf(r->msg, r->msglen,
			 "a shared range needs its memfd and a page-aligned "
			 "address and length");
		return -EINVAL;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (fstatfs(fd, &sf) || sf.f_type != TMPFS_MAGIC || fstat(fd, &st) ||
	    !S_ISREG(st.st_mode) || seals < 0 ||
	    (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR ||
	    (!(seals & F_SEAL_SHRINK) &&
	     fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK)) ||
	    fstat(fd, &st) || (__u64)st.st_size < o->length) {
		snprintf(r->msg, r->msglen,
			 "a shared range must be a read-write memfd, sealable "
			 "against shrinking, of at least %llu bytes",
			 (unsigned long long)o->length);
		return -EINVAL;
	}
	h = obj_new(x, HO_MEM, o->cookie, r->msg, r->msglen, &err);
	if (!h)
		return err;
	map = mmap(NULL, o->length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		snprintf(r->msg, r->msglen, "cannot map the shared range: %s",
			 strerror(errno));
		obj_free(h);
		return err;
	}
	h->mem = map;
	h->mem_len = o->length;
	h->mem_addr = o->addr;
	h->mem_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	err = rxdp_engine_mem_map(x->emem, o->addr, o->length, map);
	if (err) {
		snprintf(r->msg, r->msglen,
			 "[%#llx, +%llu) overlaps a shared range",
			 (unsigned long long)o->addr,
			 (unsigned long long)o->length);
		obj_free(h);
		return err;
	}
	o->handle = h->handle;
	return 0;
}

/*
 * What a client may have registered, as the kernel's RDMA core counts
 * pinned memory: its RLIMIT_MEMLOCK, unless it has CAP_IPC_LOCK (then
 * UINT64_MAX). Read from the process (SO_PEERCRED's pid), never from what
 * it says; 8 MiB, the kernel's default, if that cannot be read.
 */
static __u64 memlock_limit(pid_t pid)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3,
					      pid };
	struct __user_cap_data_struct d[2];
	struct rlimit rl;

	if (!syscall(SYS_capget, &h, d) &&
	    (d[CAP_IPC_LOCK / 32].effective & (1U << (CAP_IPC_LOCK % 32))))
		return UINT64_MAX;
	if (prlimit(pid, RLIMIT_MEMLOCK, NULL, &rl))
		return 8ULL << 20;
	return rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : rl.rlim_cur;
}

/* The bytes of the pages [addr, addr+len) touches */
static __u64 mr_pages_bytes(__u64 addr, __u64 len)
{
	__u64 page = (__u64)sysconf(_SC_PAGESIZE);

	if (!len)
		return 0;
	return ((addr + len + page - 1) & ~(page - 1)) - (addr & ~(page - 1));
}

/*
 * MR bytes against the client's RLIMIT_MEMLOCK (ibv_reg_mr fails with
 * ENOMEM past it, as on an HCA); mr: the region being registered again
 * (its bytes counted already), or NULL
 */
static int memlock_charge(struct uverbs_ctx *x, struct uobj *mr, __u64 bytes,
			  char *msg, size_t msglen)
{
	__u64 had = mr ? mr->locked : 0, limit;

	if (bytes <= had)
		return 0;
	limit = memlock_limit(x->c->pid);
	if (limit != UINT64_MAX && x->locked - had + bytes > limit) {
		snprintf(msg, msglen,
			 "pid %d would have %llu bytes registered, over its "
			 "RLIMIT_MEMLOCK of %llu (ulimit -l)",
			 (int)x->c->pid,
			 (unsigned long long)(x->locked - had + bytes),
			 (unsigned long long)limit);
		return -ENOMEM;
	}
	return 0;
}

int uverbs_mr(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_ctl_obj *o = r->o;
	/* an ODP region pins nothing: the kernel charges it nothing either */
	__u64 bytes = o->access & IBV_ACCESS_ON_DEMAND
			      ? 0
			      : mr_pages_bytes(o->addr, o->length);
	struct uobj *m = NULL, *pd;
	struct rxdp_emr *emr;
	int err;

	if (r->type != RXDP_CTL_MR_REG) {
		m = obj_need(x, o->handle, HO_MR, r->msg, r->msglen);
		if (!m)
			return -EINVAL;
	}
	if (r->type == RXDP_CTL_MR_DEREG) {
		err = rxdp_engine_dereg_mr(m->emr);
		if (err) {
			snprintf(r->msg, r->msglen,
				 "MR %u has memory windows bound to it",
				 o->handle);
			return err;
		}
		obj_free(m);
		return 0;
	}
	pd = obj_need(x, o->pd, HO_PD, r->msg, r->msglen);
	if (!pd)
		return -EINVAL;
	err = memlock_charge(x, m, bytes, r->msg, r->msglen);
	if (err)
		return err;
	if (r->type == RXDP_CTL_MR_REREG) {
		/* the reply carries the keys: new ones if it moved, changed
		 * PD or lost a right (rxdp_engine_rereg_mr) */
		err = rxdp_engine_rereg_mr(m->emr, pd->epd, o->addr, o->length,
					   o->iova, o->access);
		if (err == -EBUSY)
			snprintf(r->msg, r->msglen,
				 "MR %u has memory windows bound to it",
				 o->handle);
		if (err)
			return err;
		emr = m->emr;
		m->pd->refs--;
	} else {
		emr = rxdp_engine_reg_mr_pd(pd->epd, o->addr, o->length,
					    o->iova, o->access);
		if (!emr)
			return -errno;
		m = obj_new(x, HO_MR, o->cookie, r->msg, r->msglen, &err);
		if (!m) {
			rxdp_engine_dereg_mr(emr);
			return err;
		}
	}
	m->emr = emr;
	m->pd = pd;
	m->made.mr.addr = o->addr;
	m->made.mr.len = o->length;
	m->made.mr.iova = o->iova;
	m->made.mr.access = o->access;
	pd->refs++;
	x->locked += bytes - m->locked;
	m->locked = bytes;
	o->handle = m->handle;
	o->lkey = rxdp_emr_lkey(emr);
	o->rkey = rxdp_emr_rkey(emr);
	return 0;
}

/* The memfd of a CQ of size entries: its ring, and the timestamps */
static size_t cq_bytes(__u32 flags, __u32 size)
{
	return flags & RXDP_CTL_CQ_F_TIMESTAMP ? rxdp_hca_cq_ts_bytes(size)
					       : rxdp_hca_cq_bytes(size);
}

/*
 * Memory windows (IBTA 10.6.7): allocated on a PD, bound and invalidated
 * by WRs on the data path (engine/mw.c). Deallocating a bound window
 * unbinds it.
 */
int uverbs_mw(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_ctl_obj *o = r->o;
	struct uobj *w, *pd;
	struct rxdp_emr *emw;
	int err;

	if (r->type == RXDP_CTL_MW_DEALLOC) {
		w = obj_need(x, o->handle, HO_MW, r->msg, r->msglen);
		if (!w)
			return -EINVAL;
		rxdp_engine_dealloc_mw(w->emr);
		obj_free(w);
		return 0;
	}
	pd = obj_need(x, o->pd, HO_PD, r->msg, r->msglen);
	if (!pd)
		return -EINVAL;
	emw = rxdp_engine_alloc_mw(x->he->e, pd->epd,
				   (enum ibv_mw_type)o->mw_type);
	if (!emw) {
		err = -errno;
		if (err == -EINVAL)
			snprintf(r->msg, r->msglen,
				 "no memory window of type %u", o->mw_type);
		return err;
	}
	w = obj_new(x, HO_MW, o->cookie, r->msg, r->msglen, &err);
	if (!w) {
		rxdp_engine_dealloc_mw(emw);
		return err;
	}
	w->emr = emw;
	w->pd = pd;
	pd->refs++;
	o->handle = w->handle;
	o->rkey = rxdp_emr_rkey(emw);
	return 0;
}

/* A creation failed: the fd made for the reply and the object go */
static int obj_undo(struct uverbs_req *r, struct uobj *q, int err)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	obj_free(q);
	return err;
}

int uverbs_cq(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_ctl_obj *o = r->o;
	struct uobj *q, *ch = NULL;
	__u32 size;
	int err;

	if (r->type == RXDP_CTL_CQ_DESTROY) {
		q = obj_need(x, o->handle, HO_CQ, r->msg, r->msglen);
		if (!q)
			return -EINVAL;
		if (q->refs || rxdp_engine_destroy_cq(q->cq.ecq)) {
			snprintf(r->msg, r->msglen, "CQ %u is used by a QP",
				 o->handle);
			return -EBUSY;
		}
		if (q->cq.ch)
			q->cq.ch->refs--;
		o->comp_events = atomic_load(&q->comp_events);
		o->async_events = atomic_load(&q->async_events);
		obj_free(q);
		return 0;
	}
	if (!o->cqe || o->cqe > RXDP_HCA_MAX_CQE) {
		snprintf(r->msg, r->msglen, "cqe %u: 1..%u", o->cqe,
			 RXDP_HCA_MAX_CQE);
		return -EINVAL;
	}
	if (r->type == RXDP_CTL_CQ_RESIZE) {
		void *mem;
		size_t len;

		q = obj_need(x, o->handle, HO_CQ, r->msg, r->msglen);
		if (!q)
			return -EINVAL;
		size = rxdp_hca_pow2(o->cqe);
		len = cq_bytes(q->cq_flags, size);
		/* charged for both rings while they change over */
		err = mem_charge(x, q, len, r->msg, r->msglen);
		if (err)
			return err;
		r->fd = shm_create("rxdp-cq", len, &mem);
		if (r->fd < 0) {
			mem_uncharge(x, q, len);
			return r->fd;
		}
		err = rxdp_engine_resize_cq_shared(q->cq.ecq, mem, size);
		if (err) {
			snprintf(r->msg, r->msglen,
				 "more completions wait than %u entries hold",
				 size);
			munmap(mem, len);
			close(r->fd);
			r->fd = -1;
			mem_uncharge(x, q, len);
			return err;
		}
		mem_uncharge(x, q, q->mem_len);
		munmap(q->mem, q->mem_len);
		q->mem = mem;
		q->mem_len = len;
		if (q->mem_fd >= 0)
			close(q->mem_fd);
		q->mem_fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
		q->made.cq_size = size;
		o->cqe = size;
		o->mem_size = len;
		return 0;
	}
	if (o->channel && !(ch = obj_get(x, o->channel, HO_CHANNEL))) {
		snprintf(r->msg, r->msglen, "no channel %u", o->channel);
		return -EINVAL;
	}
	if (o->cq_flags & ~RXDP_CTL_CQ_F_TIMESTAMP) {
		snprintf(r->msg, r->msglen, "unknown CQ flags %#x",
			 o->cq_flags);
		return -EOPNOTSUPP;
	}
	q = obj_new(x, HO_CQ, o->cookie, r->msg, r->msglen, &err);
	if (!q)
		return err;
	q->cq_flags = o->cq_flags;
	size = rxdp_hca_pow2(o->cqe);
	q->mem_len = cq_bytes(q->cq_flags, size);
	err = mem_charge(x, q, q->mem_len, r->msg, r->msglen);
	if (err)
		goto err;
	r->fd = shm_create("rxdp-cq", q->mem_len, &q->mem);
	if (r->fd < 0) {
		err = r->fd;
		goto err;
	}
	q->mem_fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
	q->made.cq_size = size;
	q->cq.ecq = rxdp_engine_create_cq_shared(x->he->e, q->mem, size, q);
	if (!q->cq.ecq) {
		err = -errno;
		goto err;
	}
	rxdp_engine_cq_set_notify(q->cq.ecq, on_cq_notify, q);
	if (q->cq_flags & RXDP_CTL_CQ_F_TIMESTAMP)
		rxdp_engine_cq_timestamps(q->cq.ecq);
	q->cq.ch = ch;
	if (ch)
		ch->refs++;
	o->handle = q->handle;
	o->cqe = size;
	o->mem_size = q->mem_len;
	return 0;
err:
	return obj_undo(r, q, err);
}

int uverbs_srq(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_ctl_obj *o = r->o;
	struct ibv_srq_attr a = { .max_wr = o->max_recv_wr,
				  .max_sge = o->max_recv_sge,
				  .srq_limit = o->srq_limit };
	struct rxdp_hca_wq *wq;
	struct uobj *s, *pd;
	int err;

	if (r->type != RXDP_CTL_SRQ_CREATE) {
		s = obj_need(x, o->handle, HO_SRQ, r->msg, r->msglen);
		if (!s)
			return -EINVAL;
		if (r->type == RXDP_CTL_SRQ_MODIFY) {
			err = rxdp_engine_modify_srq(s->esrq, &a, o->attr_mask);
			rxdp_engine_query_srq(s->esrq, &a);
			o->max_recv_wr = a.max_wr;
			o->max_recv_sge = a.max_sge;
			o->srq_limit = a.srq_limit;
			return err;
		}
		if (s->refs || rxdp_engine_destroy_srq(s->esrq)) {
			snprintf(r->msg, r->msglen, "SRQ %u is used by a QP",
				 o->handle);
			return -EBUSY;
		}
		o->async_events = atomic_load(&s->async_events);
		obj_free(s);
		return 0;
	}
	pd = obj_need(x, o->pd, HO_PD, r->msg, r->msglen);
	if (!pd)
		return -EINVAL;
	if (rxdp_engine_srq_caps(&a)) {
		snprintf(r->msg, r->msglen,
			 "SRQ of %u WQEs of %u SGEs, limit %u: too "
			 "large",
			 o->max_recv_wr, o->max_recv_sge, o->srq_limit);
		return -EINVAL;
	}
	s = obj_new(x, HO_SRQ, o->cookie, r->msg, r->msglen, &err);
	if (!s)
		return err;
	o->rq_stride = rxdp_hca_rwqe_stride(a.max_sge);
	o->rq_off = sizeof(struct rxdp_hca_wq);
	s->mem_len = o->rq_off + (size_t)a.max_wr * o->rq_stride;
	err = mem_charge(x, s, s->mem_len + rxdp_engine_srq_bytes(&a), r->msg,
			 r->msglen);
	if (err)
		goto err;
	r->fd = shm_create("rxdp-srq", s->mem_len, &s->mem);
	if (r->fd < 0) {
		err = r->fd;
		goto err;
	}
	s->mem_fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
	wq = s->mem;
	wq->size = a.max_wr;
	wq->stride = o->rq_stride;
	s->esrq = rxdp_engine_create_srq(x->he->e, pd->epd, &a, wq,
					 (char *)s->mem + o->rq_off, s);
	if (!s->esrq) {
		err = -errno;
		goto err;
	}
	s->pd = pd;
	pd->refs++;
	s->made.srq = a;
	s->made.srq.srq_limit = 0;
	o->handle = s->handle;
	o->max_recv_wr = a.max_wr;
	o->max_recv_sge = a.max_sge;
	o->mem_size = s->mem_len;
	return 0;
err:
	return obj_undo(r, s, err);
}

static void qp_obj_destroy(struct uobj *o)
{
	struct rxdp_link *l = link_by_index(o->ctx->ifindex);

	/* the engine detaches it from its groups */
	rxdp_engine_destroy_qp(o->qp.eqp);
	for (; o->qp.mcast; o->qp.mcast--)
		user_uncharge(o->ctx->c->uid, HO_MCAST);
	o->qp.scq->refs--;
	o->qp.rcq->refs--;
	if (o->qp.srq)
		o->qp.srq->refs--;
	if (o->qp.cqp) {
		o->qp.cqp->eqp = NULL;
		o->qp.cqp->e = NULL;
		if (l && l->dev)
			qp_destroy(l, o->qp.cqp);
	}
	obj_free(o);
}

/*
 * q's engine QP on the rings of its memfd (laid out as lay), numbered qpn
 * (its handle in qp.c made already), as q->made has it, on its PD, CQs
 * and SRQ: the handle given its engine QP, the references taken. 0, or
 * -errno with the handle destroyed.
 */
static int qp_engine_make(struct uverbs_ctx *x, struct rxdp_link *l,
			  struct uobj *q, __u32 qpn,
			  const struct rxdp_hca_qp_layout *lay,
			  struct uobj *scq, struct uobj *rcq, struct uobj *srq)
{
	struct rxdp_eqp_init init = {
		.pd = q->pd->epd,
		.sh = q->mem,
		.sh_sq = (char *)q->mem + lay->sq_off,
		.sh_rq = (char *)q->mem + lay->rq_off,
		.qpn = qpn,
		.qp_type = q->made.qp.type,
		.send_cq = scq->cq.ecq,
		.recv_cq = rcq->cq.ecq,
		.srq = srq ? srq->esrq : NULL,
		.cap = q->made.qp.cap,
		.sq_sig_all = q->made.qp.sig_all,
		.user = q,
		.owner_pid = (uint32_t)x->c->pid,
	};

	q->qp.cqp = qp_lookup(l, qpn);
	q->qp.eqp = rxdp_engine_create_qp(x->he->e, &init);
	if (!q->qp.eqp) {
		int err = -errno;

		qp_destroy(l, q->qp.cqp);
		q->qp.cqp = NULL;
		return err;
	}
	q->qp.cqp->e = x->he->e;
	q->qp.cqp->eqp = q->qp.eqp;
	q->qp.scq = scq;
	q->qp.rcq = rcq;
	q->qp.srq = srq;
	scq->refs++;
	rcq->refs++;
	if (srq)
		srq->refs++;
	return 0;
}

int uverbs_qp(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_ctl_obj *o = r->o;
	struct rxdp_link *l = link_by_index(x->ifindex);
	struct ibv_qp_cap cap = { .max_send_wr = o->max_send_wr,
				  .max_recv_wr = o->max_recv_wr,
				  .max_send_sge = o->max_send_sge,
				  .max_recv_sge = o->max_recv_sge,
				  .max_inline_data = o->max_inline_data };
	struct rxdp_hca_qp_layout lay;
	struct uobj *q, *pd, *scq, *rcq, *srq = NULL;
	struct rxdp_hca_qp *sh;
	__u32 qpn;
	int err;

	if (!l || !l->dev) {
		snprintf(r->msg, r->msglen, "the device is gone");
		return -ENODEV;
	}
	if (r->type == RXDP_CTL_QP_DESTROY) {
		q = obj_need(x, o->handle, HO_QP, r->msg, r->msglen);
		if (!q)
			return -EINVAL;
		o->async_events = atomic_load(&q->async_events);
		qp_obj_destroy(q);
		return 0;
	}
	pd = obj_get(x, o->pd, HO_PD);
	scq = obj_get(x, o->send_cq, HO_CQ);
	rcq = obj_get(x, o->recv_cq, HO_CQ);
	if (o->srq)
		srq = obj_get(x, o->srq, HO_SRQ);
	if (!pd || !scq || !rcq || (o->srq && !srq)) {
		snprintf(r->msg, r->msglen, "no such PD, CQ or SRQ");
		return -EINVAL;
	}
	if (srq && srq->pd != pd) {
		snprintf(r->msg, r->msglen, "the SRQ is of another PD");
		return -EINVAL;
	}
	if (rxdp_engine_qp_caps(&cap)) {
		snprintf(r->msg, r->msglen, "QP caps too large");
		return -EINVAL;
	}
	q = obj_new(x, HO_QP, o->cookie, r->msg, r->msglen, &err);
	if (!q)
		return err;
	o->sq_stride =
		rxdp_hca_swqe_stride(cap.max_send_sge, cap.max_inline_data);
	o->rq_stride = rxdp_hca_rwqe_stride(cap.max_recv_sge);
	rxdp_hca_qp_layout(cap.max_send_wr, o->sq_stride, cap.max_recv_wr,
			   o->rq_stride, &lay);
	q->mem_len = lay.bytes;
	err = mem_charge(x, q, q->mem_len + rxdp_engine_qp_bytes(&cap), r->msg,
			 r->msglen);
	if (err)
		goto err;
	r->fd = shm_create("rxdp-qp", q->mem_len, &q->mem);
	if (r->fd < 0) {
		err = r->fd;
		goto err;
	}
	q->mem_fd = fcntl(r->fd, F_DUPFD_CLOEXEC, 3);
	sh = q->mem;
	sh->sq.size = cap.max_send_wr;
	sh->sq.stride = o->sq_stride;
	sh->rq.size = cap.max_recv_wr;
	sh->rq.stride = o->rq_stride;
	err = qp_create(l, x->c, o->qp_type, &qpn, r->msg, r->msglen);
	if (err)
		goto err;
	q->pd = pd;
	pd->refs++;
	q->made.qp.cap = cap;
	q->made.qp.type = o->qp_type;
	q->made.qp.sig_all = o->sq_sig_all;
	err = qp_engine_make(x, l, q, qpn, &lay, scq, rcq, srq);
	if (err) {
		snprintf(r->msg, r->msglen, "the engine refused the QP: %s",
			 strerror(-err));
		goto err;
	}
	o->handle = q->handle;
	o->qpn = qpn;
	o->max_send_wr = cap.max_send_wr;
	o->max_recv_wr = cap.max_recv_wr;
	o->max_send_sge = cap.max_send_sge;
	o->max_recv_sge = cap.max_recv_sge;
	o->max_inline_data = cap.max_inline_data;
	o->mem_size = lay.bytes;
	o->sq_off = lay.sq_off;
	o->rq_off = lay.rq_off;
	return 0;
err:
	return obj_undo(r, q, err);
}

/*
 * ibv_attach_mcast / ibv_detach_mcast of one of the client's QPs: the
 * engine keeps the groups (and says when the interface must join or leave
 * one: on_mcast); the user is charged an attachment, as for an object.
 * Errnos as the kernel's ib_attach_mcast() and Soft-RoCE give them:
 * EINVAL for a QP that is not UD, a GID that is not multicast, a detach
 * of a group the QP is not in; ENOMEM past a device's caps.
 */
int uverbs_mcast(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_ctl_obj *o = r->o;
	const struct rxdp_ah *ah = r->ah;
	struct uobj *q = obj_need(x, o->handle, HO_QP, r->msg, r->msglen);
	uid_t uid = x->c->uid;
	int err;

	if (!q || !ah) {
		if (q)
			snprintf(r->msg, r->msglen, "no group GID");
		return -EINVAL;
	}
	if (r->type == RXDP_CTL_MCAST_DETACH) {
		err = rxdp_engine_mcast_detach(q->qp.eqp, ah->dgid, r->msg,
					       r->msglen);
		if (!err && q->qp.mcast) {
			q->qp.mcast--;
			user_uncharge(uid, HO_MCAST);
		}
		return err;
	}
	if (!rxdp_gid_is_multicast(ah->dgid) ||
	    rxdp_engine_qp_type(q->qp.eqp) != IBV_QPT_UD)
		return rxdp_engine_mcast_attach(q->qp.eqp, ah->dgid, r->msg,
						r->msglen); /* -EINVAL, why */
	err = user_charge(uid, HO_MCAST, r->msg, r->msglen);
	if (err)
		return err == -EDQUOT ? -ENOMEM : err;
	err = rxdp_engine_mcast_attach(q->qp.eqp, ah->dgid, r->msg, r->msglen);
	if (err < 0) {
		user_uncharge(uid, HO_MCAST);
		return err == -EALREADY ? 0 : err;
	}
	q->qp.mcast++;
	return 0;
}

int uverbs_obj(struct rxdp_client *c, uverbs_obj_fn fn, struct uverbs_req *r)
{
	struct uverbs_ctx *x = ctx_of(c, r->msg, r->msglen);

	r->fd = -1;
	if (!x)
		return -EINVAL;
	return fn(x, r);
}

int uverbs_pd_alloc(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct uobj *h;
	int err;

	h = obj_new(x, HO_PD, r->o->cookie, r->msg, r->msglen, &err);
	if (!h)
		return err;
	h->epd = rxdp_engine_alloc_pd(x->he->e, x->emem);
	if (!h->epd) {
		obj_free(h);
		return -ENOMEM;
	}
	r->o->handle = h->handle;
	return 0;
}

int uverbs_pd_free(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct uobj *h = obj_need(x, r->o->handle, HO_PD, r->msg, r->msglen);

	if (!h)
		return -EINVAL;
	if (h->refs || rxdp_engine_dealloc_pd(h->epd)) {
		snprintf(r->msg, r->msglen, "PD %u is in use", r->o->handle);
		return -EBUSY;
	}
	obj_free(h);
	return 0;
}

int uverbs_mem_unshare(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct uobj *h = obj_need(x, r->o->handle, HO_MEM, r->msg, r->msglen);

	if (!h)
		return -EINVAL;
	rxdp_engine_mem_unmap(x->emem, h->mem_addr);
	obj_free(h);
	return 0;
}

int uverbs_channel_create(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct uobj *h;
	int p[2], err;

	h = obj_new(x, HO_CHANNEL, r->o->cookie, r->msg, r->msglen, &err);
	if (!h)
		return err;
	if (pipe2(p, O_CLOEXEC)) {
		err = -errno;
		obj_free(h);
		return err;
	}
	fcntl(p[1], F_SETFL, O_NONBLOCK);
	h->wfd = p[1];
	r->fd = p[0];
	r->o->handle = h->handle;
	return 0;
}

int uverbs_channel_destroy(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct uobj *h =
		obj_need(x, r->o->handle, HO_CHANNEL, r->msg, r->msglen);

	if (!h)
		return -EINVAL;
	if (h->refs) {
		snprintf(r->msg, r->msglen, "channel %u is used by a CQ",
			 r->o->handle);
		return -EBUSY;
	}
	close(h->wfd);
	obj_free(h);
	return 0;
}

/* -EINPROGRESS: waits for a neighbour, call again */
int uverbs_ah_create(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct rxdp_link *l = link_by_index(x->ifindex);
	struct rxdp_ctl_obj *o = r->o;
	struct uobj *pd = obj_get(x, o->pd, HO_PD), *h;
	struct rxdp_path path;
	int err;

	if (!pd || !r->ah || !l || !l->dev) {
		snprintf(r->msg, r->msglen, "no PD %u or no address", o->pd);
		return -EINVAL;
	}
	err = path_resolve(l, r->ah, 0, 0, &path, r->deadline, r->msg,
			   r->msglen);
	if (err)
		return err;
	h = obj_new(x, HO_AH, o->cookie, r->msg, r->msglen, &err);
	if (!h)
		return err;
	h->eah = rxdp_engine_create_ah(x->he->e, pd->epd, &path);
	if (!h->eah) {
		obj_free(h);
		return -ENOMEM;
	}
	atomic_store(&x->hd->ah_eah[h->handle - 1], h->eah);
	h->pd = pd;
	h->made.ah = path;
	pd->refs++;
	o->handle = h->handle;
	return 0;
}

int uverbs_ah_destroy(struct uverbs_ctx *x, struct uverbs_req *r)
{
	struct uobj *h = obj_need(x, r->o->handle, HO_AH, r->msg, r->msglen);

	if (!h)
		return -EINVAL;
	ah_destroy(h);
	return 0;
}

/* --- objects rxdpd holds itself (QP1, cm.c and gsi.c) -------------------- */

/* The device's engine, its data path started if it was not */
struct rxdp_engine *uverbs_dev_engine(struct rxdp_link *l, char *msg,
				      size_t msglen)
{
	struct uverbs_dev *hd = uverbs_dev_get(l, msg, msglen);

	return hd ? hd->eng[0].e : NULL;
}

/*
 * An AH of rxdpd's own in the device's table, so that a UD WQE of QP1 can
 * name it by handle like a client's: the slot holds a shared placeholder
 * object that belongs to no context. 0: the table is full.
 */
__u32 uverbs_sys_ah_add(struct rxdp_link *l, struct rxdp_eah *eah)
{
	static struct uobj sys_ah = { .kind = HO_AH };
	struct uverbs_dev *hd = l->dev ? l->dev->uv : NULL;
	__u32 h;

	if (!hd)
		return 0;
	h = ah_slot_take(hd, &sys_ah);
	if (h)
		atomic_store(&hd->ah_eah[h - 1], eah);
	return h;
}

/* Unpublished before the caller destroys the engine AH */
void uverbs_sys_ah_del(struct rxdp_link *l, __u32 handle)
{
	struct uverbs_dev *hd = l->dev ? l->dev->uv : NULL;

	if (!hd || !handle || handle > HCA_MAX_AH)
		return;
	atomic_store(&hd->ah_eah[handle - 1], NULL);
	hd->ahs[handle - 1] = NULL;
}

/* --- a takeover: the clients' contexts and objects (takeover.c) -------- */

struct tko_ctx {
	uint64_t client; /* its connection's tag (struct tko_client) */
	int32_t ifindex, eng;
	int32_t mem_fd, doorbell, async_wfd;
	uint32_t dropped, pad;
};

struct tko_obj {
	uint32_t kind, handle;
	uint64_t cookie;
	uint32_t pd, ch, scq, rcq, srq; /* the handles of what it is on */
	int32_t fd; /* CQ, SRQ, QP, MEM: its memfd; channel: its pipe */
	uint32_t comp_events, async_events, cq_flags, qpn;
	uint64_t mem_addr, mem_len; /* HO_MEM */
	__u32 lkey, rkey; /* MR */
	struct rxdp_qp_attr attr; /* QP: as set so far */
	struct rxdp_path path;
	uint8_t made[sizeof(((struct uobj *)0)->made)];
};

/*
 * The kinds in the order they are made again: what each is on first, and
 * AHs before QPs (a UD QP's WQEs taken again from its ring name them)
 */
static const enum hobj_kind tko_order[] = { HO_PD, HO_MEM, HO_MR, HO_CHANNEL,
					    HO_CQ, HO_SRQ, HO_AH, HO_QP };

static __u32 tko_handle(const struct uobj *o)
{
	return o ? o->handle : 0;
}

/* What keeps a context from being handed over: 0, or -EBUSY with msg */
static int tko_ctx_refusal(const struct uverbs_ctx *x, char *msg, size_t msglen)
{
	for (__u32 i = 0; i < x->nobjs; i++) {
		const struct uobj *o = x->objs[i];
		enum ibv_qp_state st;

		if (!o)
			continue;
		if (o->kind == HO_MW) {
			snprintf(msg, msglen,
				 "pid %d has memory windows: handing those "
				 "over is not built yet",
				 (int)x->c->pid);
			return -EBUSY;
		}
		if (o->kind != HO_QP)
			continue;
		st = rxdp_engine_qp_state(o->qp.eqp);
		if (o->qp.mcast || (st != IBV_QPS_RESET && st != IBV_QPS_INIT &&
				    st != IBV_QPS_RTR && st != IBV_QPS_RTS)) {
			snprintf(msg, msglen,
				 "pid %d's QP %#x is %s: try again once it is "
				 "%s",
				 (int)x->c->pid, rxdp_engine_qp_num(o->qp.eqp),
				 o->qp.mcast ? "attached to multicast groups"
					     : "in an error or drain state",
				 o->qp.mcast ? "detached" : "destroyed");
			return -EBUSY;
		}
	}
	return 0;
}

int uverbs_tko_ctx_refusal(char *msg, size_t msglen)
{
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next) {
		int err = c->ctx && !c->dead
				  ? tko_ctx_refusal(c->ctx, msg, msglen)
				  : 0;

		if (err)
			return err;
	}
	return 0;
}

/* o into the state, then its engine state where it has one */
static bool tko_obj_save(struct tko_out *o, struct uobj *h)
{
	struct tko_obj t = { .kind = h->kind,
			     .handle = h->handle,
			     .cookie = h->cookie,
			     .pd = tko_handle(h->pd),
			     .fd = -1,
			     .comp_events = atomic_load(&h->comp_events),
			     .async_events = atomic_load(&h->async_events),
			     .cq_flags = h->cq_flags };
	uint8_t st[64], *qst = NULL;
	long n = 0;

	memcpy(t.made, &h->made, sizeof(t.made));
	if (h->mem_fd >= 0)
		t.fd = tko_fd(o, h->mem_fd);
	switch (h->kind) {
	case HO_MEM:
		t.mem_addr = h->mem_addr;
		t.mem_len = h->mem_len;
		break;
	case HO_MR:
		t.lkey = rxdp_emr_lkey(h->emr);
		t.rkey = rxdp_emr_rkey(h->emr);
		break;
	case HO_CHANNEL:
		t.fd = tko_fd(o, h->wfd);
		break;
	case HO_CQ:
		t.ch = tko_handle(h->cq.ch);
		break;
	case HO_SRQ:
		n = rxdp_engine_srq_save(h->esrq, st, sizeof(st));
		break;
	case HO_QP:
		t.scq = tko_handle(h->qp.scq);
		t.rcq = tko_handle(h->qp.rcq);
		t.srq = tko_handle(h->qp.srq);
		t.qpn = rxdp_engine_qp_num(h->qp.eqp);
		rxdp_engine_qp_query(h->qp.eqp, &t.attr, &t.path);
		n = rxdp_engine_qp_save(h->qp.eqp, NULL, 0);
		if (n > 0 && !(qst = malloc((size_t)n)))
			n = -ENOMEM;
		if (n > 0)
			n = rxdp_engine_qp_save(h->qp.eqp, qst, (size_t)n);
		break;
	default:
		break;
	}
	if (n < 0) {
		pr_err("pid %d's object %u cannot be handed over: %s\n",
		       (int)h->ctx->c->pid, h->handle, strerror((int)-n));
		free(qst);
		return false;
	}
	tko_add(o, TKO_OBJ, &t, sizeof(t));
	if (n > 0)
		tko_add(o, TKO_BLOB, qst ? qst : st, (size_t)n);
	free(qst);
	return true;
}

/* x's objects of kind k (AHs are in the device's table) */
static bool tko_kind_save(struct tko_out *o, struct uverbs_ctx *x,
			  enum hobj_kind k)
{
	struct uobj **tab = k == HO_AH ? x->hd->ahs : x->objs;
	__u32 n = k == HO_AH ? HCA_MAX_AH : x->nobjs;

	for (__u32 i = 0; i < n; i++)
		if (tab[i] && tab[i]->ctx == x && tab[i]->kind == k &&
		    !tko_obj_save(o, tab[i]))
			return false;
	return true;
}

/* Every context, its objects in the order they are made again */
bool uverbs_tko_save_ctxs(struct tko_out *o)
{
	for (struct rxdp_client *c = rxdpd.clients; c; c = c->next) {
		struct uverbs_ctx *x = c->ctx;
		struct tko_ctx t;

		if (!x || c->dead)
			continue;
		t = (struct tko_ctx){ .client = (uintptr_t)c,
				      .ifindex = x->ifindex,
				      .eng = (int32_t)(x->he - x->hd->eng),
				      .mem_fd = tko_fd(o, x->mem_fd),
				      .doorbell = tko_fd(o, x->doorbell),
				      .async_wfd = tko_fd(o, x->async_wfd),
				      .dropped = x->dropped };
		tko_add(o, TKO_CTX, &t, sizeof(t));
		for (size_t k = 0; k < sizeof(tko_order) / sizeof(tko_order[0]);
		     k++)
			if (!tko_kind_save(o, x, tko_order[k]))
				return false;
	}
	return true;
}

/* A client's context as the state has it, on its device's adopted engine */
static struct rxdp_client *(*tko_client_of)(uint64_t tag);
static void (*tko_release)(struct rxdp_client *c);

static struct uverbs_ctx *tko_ctx_make(const struct tko_ctx *t)
{
	struct rxdp_client *c = tko_client_of(t->client);
	struct rxdp_link *l = link_by_index(t->ifindex);
	struct uverbs_dev *hd = l && l->dev ? l->dev->uv : NULL;
	int mem_fd = tko_take_fd(tko_state, t->mem_fd);
	int bell = tko_take_fd(tko_state, t->doorbell);
	int async = tko_take_fd(tko_state, t->async_wfd);
	struct uverbs_ctx *x = NULL;

	if (c && hd && !c->ctx && t->eng >= 0 && t->eng < hd->ne &&
	    mem_fd >= 0 && bell >= 0 && async >= 0)
		x = calloc(1, sizeof(*x));
	if (x) {
		x->he = &hd->eng[t->eng];
		x->emem = rxdp_engine_mem_create(x->he->e, mem_fd);
		x->doorbell = rxdp_engine_doorbell_adopt(x->he->e, bell);
	}
	if (!x || !x->emem || x->doorbell < 0) {
		if (x && x->emem)
			rxdp_engine_mem_destroy(x->emem);
		free(x);
		for (int fd = 0, f[3] = { mem_fd, bell, async }; fd < 3; fd++)
			if (f[fd] >= 0)
				close(f[fd]);
		if (c)
			tko_release(c);
		return NULL;
	}
	x->c = c;
	x->ifindex = t->ifindex;
	x->hd = hd;
	x->mem_fd = mem_fd;
	x->async_wfd = async;
	x->dropped = t->dropped;
	x->he->ctxs++;
	c->ctx = x;
	return x;
}

/* An object of x at the handle it had (charged to its user as then) */
static struct uobj *tko_obj_at(struct uverbs_ctx *x, const struct tko_obj *t)
{
	struct uobj *o, ***tab = &x->objs;
	char msg[200];
	__u32 h = t->handle;

	if (!h || t->kind < HO_PD || t->kind > HO_MEM ||
	    charge(x, (enum hobj_kind)t->kind, msg, sizeof(msg)))
		return NULL;
	if (t->kind == HO_AH) {
		if (h > HCA_MAX_AH || x->hd->ahs[h - 1])
			goto err;
	} else {
		while (h > x->nobjs) {
			__u32 nn = x->nobjs ? x->nobjs * 2 : 16;
			struct uobj **nt = realloc(*tab, nn * sizeof(*nt));

			if (!nt || nn > 1U << 24)
				goto err;
			memset(nt + x->nobjs, 0, (nn - x->nobjs) * sizeof(*nt));
			*tab = nt;
			x->nobjs = nn;
		}
		if (x->objs[h - 1])
			goto err;
	}
	o = calloc(1, sizeof(*o));
	if (!o)
		goto err;
	o->kind = (enum hobj_kind)t->kind;
	o->handle = h;
	o->cookie = t->cookie;
	o->ctx = x;
	o->mem_fd = -1;
	atomic_store(&o->comp_events, t->comp_events);
	atomic_store(&o->async_events, t->async_events);
	memcpy(&o->made, t->made, sizeof(o->made));
	if (o->kind == HO_CHANNEL)
		o->wfd = -1;
	if (o->kind == HO_AH)
		x->hd->ahs[h - 1] = o;
	else
		x->objs[h - 1] = o;
	return o;
err:
	uncharge(x, (enum hobj_kind)t->kind);
	return NULL;
}

/* o's memfd (the state's fd) mapped, len bytes: 0 or -errno */
static int tko_map(struct uobj *o, const struct tko_obj *t, size_t len)
{
	int fd = tko_take_fd(tko_state, t->fd);
	void *m;

	if (fd < 0)
		return -EBADF;
	o->mem_fd = fd;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
		 fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	o->mem = m;
	o->mem_len = len;
	return 0;
}

/* QP o taken to the state it had, through the states before it */
static int tko_qp_modify(struct rxdp_link *l, struct uobj *o,
			 const struct tko_obj *t, char *why, size_t whylen)
{
	static const __u32 rc[] = {
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS,
		IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			IBV_QP_MIN_RNR_TIMER,
		IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC,
	};
	static const __u32 uc[] = {
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			IBV_QP_ACCESS_FLAGS,
		IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN,
		IBV_QP_STATE | IBV_QP_SQ_PSN,
	};
	static const __u32 ud[] = {
		IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY,
		IBV_QP_STATE,
		IBV_QP_STATE | IBV_QP_SQ_PSN,
	};
	const __u32 *m = o->made.qp.type == IBV_QPT_RC	 ? rc
			 : o->made.qp.type == IBV_QPT_UC ? uc
							 : ud;

	for (int s = IBV_QPS_INIT; s <= (int)t->attr.qp_state; s++) {
		struct rxdp_qp_attr a = t->attr;
		int err;

		a.qp_state = (__u32)s;
		err = rxdp_engine_qp_modify(
			o->qp.eqp, &a, m[s - IBV_QPS_INIT],
			(m[s - IBV_QPS_INIT] & IBV_QP_AV) ? &t->path : NULL,
			rxdp_ib_mtu(l->mtu, dev_mtu_cap(l)), why, whylen);
		if (err)
			return err;
	}
	return 0;
}

/* QP o made again on its memfd, at its QPN, in its state */
static int tko_qp_make(struct uverbs_ctx *x, struct uobj *o,
		       const struct tko_obj *t, const void *st, size_t stlen,
		       char *why, size_t whylen)
{
	struct rxdp_link *l = link_by_index(x->ifindex);
	struct ibv_qp_cap cap = o->made.qp.cap;
	struct uobj *scq = obj_get(x, t->scq, HO_CQ);
	struct uobj *rcq = obj_get(x, t->rcq, HO_CQ);
	struct uobj *srq = t->srq ? obj_get(x, t->srq, HO_SRQ) : NULL;
	struct rxdp_hca_qp_layout lay;
	int err;

	if (!l || !l->dev || !o->pd || !scq || !rcq || (t->srq && !srq) ||
	    !st || t->attr.qp_state > IBV_QPS_RTS)
		return -EINVAL;
	rxdp_hca_qp_layout(
		cap.max_send_wr,
		rxdp_hca_swqe_stride(cap.max_send_sge, cap.max_inline_data),
		cap.max_recv_wr, rxdp_hca_rwqe_stride(cap.max_recv_sge), &lay);
	err = tko_map(o, t, lay.bytes);
	if (!err)
		err = qp_adopt(l, x->c, o->made.qp.type, t->qpn);
	if (!err)
		err = qp_engine_make(x, l, o, t->qpn, &lay, scq, rcq, srq);
	if (err)
		return err;
	mem_charge(x, o, lay.bytes + rxdp_engine_qp_bytes(&cap), why, whylen);
	err = tko_qp_modify(l, o, t, why, whylen);
	if (!err && t->attr.qp_state != IBV_QPS_RESET)
		err = rxdp_engine_qp_restore(o->qp.eqp, st, stlen, why, whylen);
	return err;
}

/*
 * One object of x as the state has it (st: its engine state); 0, or
 * -errno with *made the object as far as it was made (or NULL)
 */
static int tko_obj_make(struct uverbs_ctx *x, const struct tko_obj *t,
			const void *st, size_t stlen, struct uobj **made,
			char *why, size_t whylen)
{
	struct rxdp_engine *e = x->he->e;
	struct uobj *o = tko_obj_at(x, t), *ch;
	size_t len;
	int err = 0;

	*made = o;
	if (!o)
		return -EEXIST;
	if (t->pd) {
		o->pd = obj_get(x, t->pd, HO_PD);
		if (!o->pd)
			return -EINVAL;
		o->pd->refs++;
	}
	switch (o->kind) {
	case HO_PD:
		o->epd = rxdp_engine_alloc_pd(e, x->emem);
		return o->epd ? 0 : -ENOMEM;
	case HO_MEM:
		err = tko_map(o, t, t->mem_len);
		o->mem_addr = t->mem_addr;
		return err ? err
			   : rxdp_engine_mem_map(x->emem, t->mem_addr,
						 t->mem_len, o->mem);
	case HO_MR:
		o->emr = rxdp_engine_reg_mr_pd(o->pd->epd, o->made.mr.addr,
					       o->made.mr.len, o->made.mr.iova,
					       o->made.mr.access);
		if (!o->emr)
			return -errno;
		o->locked = o->made.mr.access & IBV_ACCESS_ON_DEMAND
				    ? 0
				    : mr_pages_bytes(o->made.mr.addr,
						     o->made.mr.len);
		x->locked += o->locked;
		err = rxdp_engine_mr_set_key(o->emr, t->lkey);
		return err				  ? err
		       : rxdp_emr_rkey(o->emr) == t->rkey ? 0
							  : -EINVAL;
	case HO_CHANNEL:
		o->wfd = tko_take_fd(tko_state, t->fd);
		return o->wfd < 0 ? -EBADF : 0;
	case HO_CQ:
		o->cq_flags = t->cq_flags;
		len = cq_bytes(t->cq_flags, o->made.cq_size);
		err = tko_map(o, t, len);
		if (err)
			return err;
		mem_charge(x, o, len, why, whylen);
		o->cq.ecq = rxdp_engine_create_cq_shared(e, o->mem,
							 o->made.cq_size, o);
		if (!o->cq.ecq)
			return -errno;
		rxdp_engine_cq_set_notify(o->cq.ecq, on_cq_notify, o);
		if (o->cq_flags & RXDP_CTL_CQ_F_TIMESTAMP)
			rxdp_engine_cq_timestamps(o->cq.ecq);
		if (t->ch && (ch = obj_get(x, t->ch, HO_CHANNEL))) {
			o->cq.ch = ch;
			ch->refs++;
		}
		return 0;
	case HO_SRQ:
		len = sizeof(struct rxdp_hca_wq) +
		      (size_t)o->made.srq.max_wr *
			      rxdp_hca_rwqe_stride(o->made.srq.max_sge);
		err = tko_map(o, t, len);
		if (err || !st)
			return err ? err : -EINVAL;
		mem_charge(x, o, len + rxdp_engine_srq_bytes(&o->made.srq), why,
			   whylen);
		o->esrq = rxdp_engine_create_srq(
			e, o->pd->epd, &o->made.srq, o->mem,
			(char *)o->mem + sizeof(struct rxdp_hca_wq), o);
		if (!o->esrq)
			return -errno;
		return rxdp_engine_srq_restore(o->esrq, st, stlen, why, whylen);
	case HO_QP:
		return tko_qp_make(x, o, t, st, stlen, why, whylen);
	case HO_AH:
		o->eah = rxdp_engine_create_ah(e, o->pd->epd, &o->made.ah);
		if (!o->eah)
			return -ENOMEM;
		atomic_store(&x->hd->ah_eah[o->handle - 1], o->eah);
		return 0;
	default:
		return -EINVAL;
	}
}

void uverbs_tko_restore(struct rxdp_client *(*client_of)(uint64_t tag),
			void (*release)(struct rxdp_client *c))
{
	struct tko_in it = *tko_state;
	struct uverbs_ctx *x = NULL;
	struct uobj *o;
	const void *p;
	uint16_t type;
	size_t len;

	tko_client_of = client_of;
	tko_release = release;
	it.off = 0;
	while ((type = 0, p = tko_next(&it, &type, &len))) {
		const void *st = NULL;
		size_t stlen = 0, at;
		char why[200] = "";
		int err;

		if (type == TKO_CTX && len == sizeof(struct tko_ctx)) {
			x = tko_ctx_make(p);
			continue;
		}
		if (type != TKO_OBJ || len != sizeof(struct tko_obj) || !x)
			continue;
		at = it.off; /* its engine state, if it has one, follows */
		type = 0;
		st = tko_next(&it, &type, &stlen);
		if (type != TKO_BLOB) {
			st = NULL;
			it.off = at;
		}
		err = tko_obj_make(x, p, st, stlen, &o, why, sizeof(why));
		if (err) {
			/* what has no engine object yet goes here; the rest
			 * with the context */
			if (o && (o->kind == HO_CHANNEL ? o->wfd < 0
				  : o->kind == HO_MEM	? !o->mem
							: !o->epd))
				obj_free(o);
			/* the client learns as from a restart: its connection
			 * ends, and what it had goes */
			pr_err("pid %d: object %u not taken over (%s%s%s): "
			       "ending its connection\n",
			       (int)x->c->pid,
			       ((const struct tko_obj *)p)->handle,
			       strerror(-err), why[0] ? ": " : "", why);
			tko_release(x->c);
			x = NULL;
		}
	}
	for (struct rxdp_link *l = rxdpd.links; l; l = l->next)
		for (int k = 0; l->dev && l->dev->uv && k < l->dev->uv->ne; k++)
			rxdp_engine_hold(l->dev->uv->eng[k].e, false);
}
