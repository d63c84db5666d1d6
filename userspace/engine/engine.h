/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The rxdp transport engine: the InfiniBand transport (IBTA Vol 1 ch. 9:
 * RC, UC and UD queue pairs, SRQs) over RoCEv2.
 *
 * Who calls what
 * --------------
 * rxdpd (userspace/daemon/uverbs.c) runs one engine per device for every
 * process on the host, on a "port" (the I/O: the device's AF_XDP sockets
 * from rxdp_xsk_port_open(), or an in-memory wire in tests). Each process's
 * objects hang off a protection domain on that process's memory
 * (rxdp_engine_mem_create: the memory it shares with rxdpd, and its
 * /proc/PID/mem for the rest); its queues are rings in memory it shares
 * with rxdpd (common/hca.h), which the engine drains each pass. Tests drive
 * an engine directly: the default PD reaches this process's memory by
 * memcpy, and they post to and poll the same rings (rxdp_hca_post_send,
 * rxdp_hca_poll; rxdp_engine_qp_rings() says where the rings are).
 *
 * Conventions: create calls return NULL and set errno; everything else
 * returns 0 or -errno.
 *
 * Threads
 * -------
 * Every call is thread-safe. Transport work (RX, TX, timers) runs under one
 * engine lock that is only ever try-locked from the fast path: a thread
 * that wants progress (rxdp_engine_progress) does the pending work itself
 * if the lock is free, and otherwise leaves it to the holder, which
 * re-checks a "work pending" flag before it returns (no lost wake-ups). With cfg.progress_thread set, one
 * thread per engine also serves the passive side and the timers: it spins
 * briefly (adaptively) while there is traffic, then blocks on the port's
 * fds and eventfds (the doorbells of rxdp_engine_doorbell()), with the
 * nearest timer as the timeout.
 */
#ifndef RXDP_ENGINE_H
#define RXDP_ENGINE_H

#include <sched.h>
#include <stdint.h>
#include <stddef.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "common/hca.h"
#include "engine/cc.h"
#include "engine/tc.h"
#include "rxdp/maps.h"

/*
 * The control protocol's records the QP calls take (common/ctl_client.h:
 * rxdpd fills them from its clients' requests); the engine's API needs
 * only their names.
 */
struct rxdp_path;
struct rxdp_qp_attr;

struct rxdp_engine;
struct rxdp_eah;
struct rxdp_emr;
struct rxdp_ecq;
struct rxdp_eqp;
struct rxdp_epd;

/* --- memory: where an owner's buffers are (mem.c) ------------------------ */

/*
 * An owner's memory: the process whose buffers a PD's MRs name, by its own
 * virtual addresses. Every engine has one for this process (tests, rxdpd's
 * own QP1: addresses are pointers), used by PDs made with NULL. An access
 * to memory that is not there is an access error (local or remote), never
 * a crash.
 */
struct rxdp_emem;
/*
 * Another process's memory: fd is a /proc/PID/mem that the process opened
 * itself and handed over (the caller keeps it open while the memory is
 * used, and closes it); it reaches exactly the address space that process
 * had when it opened it. Destroy after the PDs on it.
 */
struct rxdp_emem *rxdp_engine_mem_create(struct rxdp_engine *e, int fd);
void rxdp_engine_mem_destroy(struct rxdp_emem *m);
/*
 * A window: [addr, addr+len) of the owner is mapped here at local too (the
 * same pages: a memfd both map). Payload there is a memcpy; elsewhere a
 * system call on the fd. -EEXIST if it overlaps another window. The
 * caller unmaps local only after rxdp_engine_mem_unmap() returned (the
 * engine no longer touches it then).
 */
int rxdp_engine_mem_map(struct rxdp_emem *m, uint64_t addr, uint64_t len,
			void *local);
int rxdp_engine_mem_unmap(struct rxdp_emem *m, uint64_t addr); /* -ENOENT */

/* --- the port: how the engine moves frames ---------------------------- */

/* One received frame; data stays valid until rx_release(). */
struct rxdp_frame {
	void *data;
	uint32_t len;
	uint64_t cookie; /* the port's own handle (e.g. the UMEM address) */
};

/*
 * The I/O under the engine. Called only with the engine lock held, so a
 * port needs no locking of its own against its engine.
 */
struct rxdp_port_ops {
	/* A TX buffer of *cap bytes to build one frame in, or NULL if none now */
	void *(*tx_get)(void *port, uint32_t *cap);
	/* Queue the frame built in a tx_get() buffer (len bytes) for sending */
	void (*tx_put)(void *port, void *buf, uint32_t len);
	/* Return a tx_get() buffer unused */
	void (*tx_abort)(void *port, void *buf);
	/*
	 * Send what was queued (one kick for the batch), recycle completions.
	 * Non-zero if frames are still waiting for the kernel: the engine
	 * flushes again soon rather than sleeping.
	 */
	int (*tx_flush)(void *port);
	/* Up to max received frames; 0 when none */
	int (*rx_burst)(void *port, struct rxdp_frame *f, int max);
	/* Give n frames from rx_burst() back */
	void (*rx_release)(void *port, struct rxdp_frame *f, int n);
	/*
	 * How full the receive path was at the last rx_burst(), in 1/1000 of
	 * the frames it can hold before the kernel drops (out_of_buffer).
	 * Optional (NULL: never full).
	 */
	uint32_t (*rx_fill)(void *port);
	/* File descriptors that become readable (POLLIN) when frames arrive */
	int (*poll_fds)(void *port, int *fds, int max);
};

/* --- the engine --------------------------------------------------------- */

/*
 * Several engines of one device (rxdpd --engines): each runs on its own
 * port (the sockets of some of the interface's queues, on one UMEM), with
 * its own thread, lock, QPs, CQs, MRs and timers; nothing of the fast path
 * is shared but this: which engine has which QPN, and each engine's inbox.
 * A packet that the NIC put on a queue of another engine than its QP's is
 * copied into that engine's inbox (stat rx_handoffs; a full inbox drops
 * it, stat rx_drop_handoff, and the transport recovers as from a loss).
 */
struct rxdp_engine_group;
struct rxdp_engine_group *rxdp_engine_group_create(int n);
/* After every engine of the group was destroyed */
void rxdp_engine_group_destroy(struct rxdp_engine_group *g);

struct rxdp_engine_config {
	const struct rxdp_port_ops *ops;
	void *port;
	/*
	 * The mmapped qp_psn map (RXDP_MAX_QP entries, index qpn &
	 * RXDP_QP_INDEX_MASK) the XDP program reads, or NULL (tests). The
	 * engine keeps epsn/una_psn/next_psn of its own QPs current there.
	 */
	struct rxdp_qp_psn *psn_table;
	/*
	 * The device's other pinned maps, or NULL (tests): the engine writes
	 * each QP's context and zeroes its counters (qpmap.c)
	 */
	const struct rxdp_engine_maps *maps;
	int progress_thread; /* 1: start the per-engine progress thread */
	bool held; /* made held (rxdp_engine_hold()): no pass before release */
	/*
	 * Async events, from whichever thread notices them: IBV_EVENT_QP_FATAL
	 * (the engine took a QP to ERR), IBV_EVENT_QP_LAST_WQE_REACHED (a QP
	 * on an SRQ went to ERR), IBV_EVENT_CQ_ERR (overflow),
	 * IBV_EVENT_SRQ_LIMIT_REACHED. user is the pointer given when that
	 * QP, CQ or SRQ was created (the verbs object, typically). Called with
	 * the engine lock held: queue the event, do not call back in.
	 */
	void (*event_cb)(void *arg, enum ibv_event_type ev, void *user);
	void *event_arg;
	/*
	 * Largest IB path MTU the frames can carry, in bytes (256..4096); 0:
	 * derived from the port's TX buffer size.
	 */
	uint32_t max_mtu;
	/*
	 * UD: the engine AH a send WQE names by its handle (common/hca.h),
	 * looked up when the WQE is taken from the ring. NULL (or returning
	 * NULL, or an AH of another PD): the WQE is refused.
	 */
	struct rxdp_eah *(*ah_lookup)(void *arg, uint32_t handle);
	void *ah_arg;
	/*
	 * The device page's "sleeping" word (common/hca.h), or NULL: the
	 * progress thread sets it before it blocks, so that a process that
	 * posts to a shared queue knows to ring the doorbell
	 * (rxdp_engine_doorbell()).
	 */
	_Atomic __u32 *sleep_word;
	/*
	 * The device page's "streaming" word, or NULL: 1 while the progress
	 * thread has left SCHED_FIFO to spin through a stream, when an
	 * application polling a CQ on its CPU should let it run.
	 */
	_Atomic __u32 *stream_word;
	/* SCHED_FIFO priority for the progress thread (0: a short EEVDF slice) */
	int fifo_prio;
	/*
	 * Poll mode: the progress thread never sleeps (nor yields, nor runs
	 * SCHED_FIFO): it spins on its port and the owners' rings, for hosts
	 * that give it a core of its own (cpus). The sleeping word stays 0,
	 * so posters never ring the doorbell.
	 */
	int poll;
	/* CPUs the progress thread may run on (NULL: any) */
	const cpu_set_t *cpus;
	/* the group of engines of its device, and its place there, or NULL */
	struct rxdp_engine_group *group;
	int group_index;
	/*
	 * The owner slot of its sockets in the XSK map (include/rxdp/maps.h):
	 * where the XDP program sends its QPs' packets. 0 but for the engines
	 * beyond one per queue (rxdp_xsk_port_open()'s sets)
	 */
	uint32_t xsk_slot;
	/*
	 * The transport's clock (ns, monotonic), read once per pass; NULL:
	 * CLOCK_MONOTONIC. Tests without a progress thread (which sleeps by
	 * the real clock) drive the timers with a clock of their own.
	 */
	uint64_t (*clock)(void *arg);
	void *clock_arg;
	/*
	 * A multicast group got its first member (member true) or lost its
	 * last (false), gid its 16-byte GID: the owner makes the interface
	 * join or leave it (IGMP/MLD). Engine lock held: do not call back in.
	 * NULL: nobody is told.
	 */
	void (*mcast_cb)(void *arg, const uint8_t *gid, bool member);
	void *mcast_arg;
	/*
	 * Congestion (README.md, "Congestion"): ecn_off: packets carry the
	 * traffic class as the AH gives it, not ECT(0); cc_algo: what moves a
	 * QP's rate (ENG_CC_OFF: nothing, and no CNPs sent nor taken); cc: the
	 * algorithms' parameters (NULL: the defaults, mlx5's for DCQCN);
	 * line_mbps: the port's speed, where a QP's rate starts (0: unknown)
	 */
	int ecn_off;
	enum eng_cc_algo cc_algo;
	const struct eng_cc_params *cc;
	uint32_t line_mbps;
	/*
	 * Service classes (tc.h, README.md "Service classes"): which SL is
	 * in which, and how each is served; NULL: one class, every SL
	 */
	const struct eng_tcs *tcs;
	/*
	 * Loss recovery (README.md, "Loss"): 0, selective retransmission
	 * with rxdp peers (the responder holds what comes past a gap and its
	 * NAK says so; the requester then resends the lost packet alone);
	 * 1: go-back-N only, both ways, as with every other peer
	 */
	int go_back_n;
};

/* The maps an engine writes its QPs' images in (include/rxdp/maps.h) */
struct rxdp_engine_maps {
	int qp_ctx; /* fd of the qp_ctx hash */
	int qp_stats; /* fd of the qp_stats per-CPU array */
	int mcast; /* fd of the mcast hash (groups with members); 0: none */
	int ncpus; /* possible CPUs (per-CPU values) */
};

/*
 * What a previous user of the maps left (contexts, PSN slots): removed,
 * before an engine starts on them. How many contexts.
 */
unsigned int rxdp_engine_maps_clean(const struct rxdp_engine_maps *maps,
				    struct rxdp_qp_psn *psn);

struct rxdp_engine *rxdp_engine_create(const struct rxdp_engine_config *cfg);
/* Stops the progress thread; every QP/CQ/MR must be destroyed first. */
void rxdp_engine_destroy(struct rxdp_engine *e);
/*
 * The engine stops where it is, at the end of a pass, for good: its thread
 * ends and no call runs a pass again (nothing sent, taken or completed), so
 * that its QPs' state can be saved for a successor (rxdp_engine_qp_save)
 * and stays what was saved. Objects can still be destroyed.
 */
void rxdp_engine_halt(struct rxdp_engine *e);
/*
 * Held, the engine runs no pass (its thread sleeps on), until released: a
 * successor restores the objects of its predecessor (engine.c's halt's
 * other half) before anything moves. Any thread.
 */
void rxdp_engine_hold(struct rxdp_engine *e, bool held);
/* Do pending work now (RX, TX, timers) if no other thread is doing it. */
void rxdp_engine_progress(struct rxdp_engine *e);
/*
 * A doorbell for one owner: an eventfd whose write wakes the progress
 * thread (one each, so an owner that reads its own can only lose its own
 * wake-ups). The fd or -errno; closed with rxdp_engine_doorbell_close().
 */
int rxdp_engine_doorbell(struct rxdp_engine *e);
/* A predecessor's doorbell fd watched the same way (the fd or -errno) */
int rxdp_engine_doorbell_adopt(struct rxdp_engine *e, int fd);
void rxdp_engine_doorbell_close(struct rxdp_engine *e, int fd);
/*
 * fn(port, arg) with the engine's lock held, so its thread leaves the port
 * alone meanwhile (a port that gains a socket: rxdp_xsk_port_add()); the
 * thread then waits on every fd the port has. fn's return value.
 */
int rxdp_engine_port_call(struct rxdp_engine *e,
			  int (*fn)(void *port, void *arg), void *arg);

/* Counters, for tools and tests */
struct rxdp_engine_stats {
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t rx_drop_malformed; /* headers that do not parse */
	uint64_t rx_drop_icrc; /* bad ICRC */
	uint64_t rx_drop_no_qp; /* no QP of this engine with that QPN */
	uint64_t rx_drop_state; /* QP in a state that takes no packets */
	uint64_t rx_drop_psn; /* out-of-sequence / stale, after NAKing */
	uint64_t rx_duplicates; /* duplicate requests re-acknowledged */
	/* out-of-sequence requests held past a gap (selective retransmission) */
	uint64_t rx_held;
	uint64_t sr_resends; /* packets resent alone for a NAK that held */
	uint64_t retransmits; /* packets sent again */
	/* expiries of a QP's own timeout attribute: they count against retry_cnt */
	uint64_t timeouts;
	uint64_t rnr_naks_sent;
	uint64_t seq_naks_sent;
	uint64_t cq_overflows;
	uint64_t tx_no_buf; /* TX held back: no buffer from the port */
	uint64_t rx_drop_ud; /* UD: bad Q_Key or no receive WQE */
	uint64_t mem_faults; /* an owner's memory was not there (EFAULT) */
	uint64_t bad_wqes; /* shared-queue WQEs that broke the rules */
	uint64_t rx_scattered; /* small receives left to the owner's poll */
	uint64_t rx_drop_source; /* RC/UC: not from the QP's peer */
	/* loss recovery (see comp.c) */
	uint64_t rto_expiries; /* adaptive timer expiries before the timeout */
	uint64_t tlp_probes; /* tail-loss probes sent */
	uint64_t go_backs; /* resends from an earlier PSN (go-back-N) */
	uint64_t naks_ignored; /* sequence NAKs repeated during their resend */
	uint64_t rjobs_cancelled; /* read/atomic responses a go-back replaced */
	/* times the progress thread left SCHED_FIFO to spin through a stream */
	uint64_t streams;
	/* sleeps on a timer while a stream came in (coalescing) */
	uint64_t rx_coalesced;
	/* the progress thread's sleeps waiting for work (never in poll mode) */
	uint64_t sleeps;
	uint64_t rx_mcast; /* datagrams to a group with members here */
	/* packets for another engine's QP, copied to its inbox / dropped */
	uint64_t rx_handoffs;
	uint64_t rx_drop_handoff;
	/* runs of another engine's passes for a looped-back packet handed to it */
	uint64_t handoff_runs;
	/* per service class (cfg.tcs): packets and payload bytes each way */
	struct rxdp_engine_tc_stats {
		uint64_t tx_packets, tx_bytes, rx_packets, rx_bytes;
	} tc[ENG_TC_MAX];
};
void rxdp_engine_get_stats(struct rxdp_engine *e, struct rxdp_engine_stats *s);
/*
 * The transport's counters (common/hw_counters.h, RXDP_HWC_MAX of them) of
 * one QP, or (qp NULL) of the whole engine, every QP it ever had included
 */
void rxdp_engine_hw_counters(struct rxdp_engine *e, struct rxdp_eqp *qp,
			     __u64 *out);

/* --- protection domains ---------------------------------------------- */

/*
 * A PD of one owner: its MRs, QPs, SRQs and AHs reach the memory m (NULL:
 * this process's). MRs and AHs are used only by QPs of the same PD (IBTA
 * 10.6.3.2). Every engine has a default PD on this process's memory, used
 * when a call takes no PD (or NULL).
 */
struct rxdp_epd *rxdp_engine_alloc_pd(struct rxdp_engine *e,
				      struct rxdp_emem *m);
int rxdp_engine_dealloc_pd(struct rxdp_epd *pd); /* -EBUSY while used */

/* --- memory regions ---------------------------------------------------- */

/*
 * Register [addr, addr+len) for access through [iova, iova+len) (plain
 * ibv_reg_mr: iova = addr); local SGEs and remote accesses both address it
 * by iova, as ibv_reg_mr_iova(3) says. access: enum ibv_access_flags; unknown bits
 * that libibverbs defines as optional (IBV_ACCESS_RELAXED_ORDERING, ...)
 * are accepted and ignored. Remote write/atomic need local write, as in
 * libibverbs (EINVAL otherwise). IBV_ACCESS_FLUSH_GLOBAL (IBTA 1.5) lets
 * remote Flushes through; IBV_ACCESS_FLUSH_PERSISTENT is EINVAL: no memory
 * rxdp reaches is persistent (Soft-RoCE's answer for memory that is not
 * pmem). NULL + errno.
 */
struct rxdp_emr *rxdp_engine_reg_mr(struct rxdp_engine *e, void *addr,
				    size_t len, uint64_t iova,
				    unsigned int access);
/* The same on a PD: addr is the owner's address */
struct rxdp_emr *rxdp_engine_reg_mr_pd(struct rxdp_epd *pd, uint64_t addr,
				       size_t len, uint64_t iova,
				       unsigned int access);
/*
 * A new translation, PD (NULL: the default one) or access for an MR. If
 * the translation or the PD changes, or a right is taken away, the MR gets
 * a new key and the old one matches nothing from then on (a key someone
 * was given never reaches other memory, another PD's QPs or a right taken
 * from it); a change that only adds rights keeps the key (as mlx5 and
 * Soft-RoCE do, and rdma-core's test_mr_rereg_access expects). 0 or
 * -EINVAL; -errno if no new key could be drawn (the MR is unchanged).
 */
int rxdp_engine_rereg_mr(struct rxdp_emr *mr, struct rxdp_epd *pd,
			 uint64_t addr, size_t len, uint64_t iova,
			 unsigned int access);
/* -EBUSY while memory windows are bound to it (and for rereg too) */
int rxdp_engine_dereg_mr(struct rxdp_emr *mr);
uint32_t rxdp_emr_lkey(const struct rxdp_emr *mr);
uint32_t rxdp_emr_rkey(const struct rxdp_emr *mr);

/* --- memory windows (IBTA 10.6.7, engine/mw.c) --------------------------- */

/*
 * A memory window of type IBV_MW_TYPE_1 or IBV_MW_TYPE_2 on pd (NULL: the
 * default PD): a key from
 * the regions' key table (rxdp_emr_rkey() gives its R_Key as it is now),
 * bound by IBV_WR_BIND_MW WRs (type 1 too: ibv_bind_mw() posts one), freed
 * by IBV_WR_LOCAL_INV or a peer's Send with Invalidate (type 2). NULL +
 * errno (EINVAL: another type).
 */
struct rxdp_emr *rxdp_engine_alloc_mw(struct rxdp_engine *e,
				      struct rxdp_epd *pd,
				      enum ibv_mw_type type);
int rxdp_engine_dealloc_mw(struct rxdp_emr *mw);

/* --- completion queues -------------------------------------------------- */

/*
 * A CQ of at least cqe entries (*actual gets the real size if not NULL).
 * If the engine has a completion to add to a full CQ, the CQ is in
 * overflow: the completion is lost, IBV_EVENT_CQ_ERR is raised and
 * poll returns -EOVERFLOW from then on.
 */
struct rxdp_ecq *rxdp_engine_create_cq(struct rxdp_engine *e, int cqe,
				       int *actual, void *user);
/*
 * A CQ whose header and ring (size entries, a power of two) are in memory
 * shared with its owner, who polls and arms it there (common/hca.h).
 */
struct rxdp_ecq *rxdp_engine_create_cq_shared(struct rxdp_engine *e,
					      struct rxdp_hca_cq *sh,
					      uint32_t size, void *user);
/*
 * A shared CQ moves to a new ring of size entries, its waiting completions
 * with it; -EINVAL if more wait than it holds. The owner must not poll
 * meanwhile (the verbs library holds its CQ lock).
 */
int rxdp_engine_resize_cq_shared(struct rxdp_ecq *cq, struct rxdp_hca_cq *sh,
				 uint32_t size);
/*
 * Completion timestamps (ibv_create_cq_ex, IBV_WC_EX_WITH_COMPLETION_
 * TIMESTAMP): a shared CQ made with this keeps, for each entry, the
 * CLOCK_MONOTONIC nanosecond it was written at, in the array after its
 * ring and data slots (rxdp_hca_cq_ts()); on resize too. Call before it
 * is used.
 */
void rxdp_engine_cq_timestamps(struct rxdp_ecq *cq);
int rxdp_engine_destroy_cq(struct rxdp_ecq *cq); /* -EBUSY while QPs use it */
/*
 * Where the CQ's ring is (common/hca.h), for its poller: rxdp_hca_poll(),
 * rxdp_engine_progress() (of the engine returned) between polls where no
 * thread drives the engine. Arming: the ring's armed word.
 */
struct rxdp_engine *rxdp_engine_cq_ring(struct rxdp_ecq *cq,
					struct rxdp_hca_cq **sh,
					uint32_t *size);
/* true once a completion was lost (the CQ overflowed) */
bool rxdp_engine_cq_overflow(struct rxdp_ecq *cq);
void rxdp_engine_cq_set_notify(struct rxdp_ecq *cq, void (*notify)(void *),
			       void *arg);

/* --- queue pairs ---------------------------------------------------------- */

struct rxdp_esrq;

struct rxdp_eqp_init {
	struct rxdp_epd *pd; /* NULL: the engine's default PD */
	/*
	 * The rings its owner posts to (common/hca.h), sized by the caller
	 * for the caps as granted (rxdp_engine_qp_caps()); NULL: the engine
	 * makes rings of its own (rxdp_engine_qp_rings() says where). The
	 * engine drains them.
	 */
	struct rxdp_hca_qp *sh;
	void *sh_sq, *sh_rq;
	uint32_t qpn; /* allocated by the daemon */
	enum ibv_qp_type qp_type; /* IBV_QPT_RC, UC or UD */
	struct rxdp_ecq *send_cq;
	struct rxdp_ecq *recv_cq;
	struct rxdp_esrq *srq; /* receives come from it; NULL: the QP's RQ */
	struct ibv_qp_cap cap; /* updated to what was granted */
	int sq_sig_all;
	void *user; /* handed to event_cb */
	uint32_t owner_pid; /* shown in its context (qp_ctx) */
};

struct rxdp_eqp *rxdp_engine_create_qp(struct rxdp_engine *e,
				       struct rxdp_eqp_init *init);
/* The caps a QP created with *cap would get (sizes are powers of two) */
int rxdp_engine_qp_caps(struct ibv_qp_cap *cap);
/*
 * The engine's own memory for a QP or SRQ of these caps as granted: what
 * rxdpd charges its owner for (its rings aside)
 */
size_t rxdp_engine_qp_bytes(const struct ibv_qp_cap *cap);
size_t rxdp_engine_srq_bytes(const struct ibv_srq_attr *attr);
/*
 * ibv_modify_qp: attr/mask as the verbs call has them (struct rxdp_qp_attr,
 * enum ibv_qp_attr_mask), checked whole before anything changes: the IBTA
 * state machine (qp_sm.c: legal transitions, required and allowed
 * attributes; no IBV_QP_STATE: an attribute-only modify) and the values
 * (port 1, P_Key index 0, path MTU at most port_mtu, an enum ibv_mtu, the
 * counters' ranges, a 24-bit QPN). path: RC/UC, the resolved addressing of
 * attr->ah, required with IBV_QP_AV (else NULL); with mask 0, a new path
 * alone (the neighbour's MAC changed). The path MTU the engine uses is
 * capped to what the port's frames carry. To ERR: every outstanding WR
 * completes with IBV_WC_WR_FLUSH_ERR. To RESET: the queues are emptied, no
 * completions, and the QP is as it was made. The QP's context in the maps
 * follows. 0, or -EINVAL with why (a sentence naming what is wrong).
 */
int rxdp_engine_qp_modify(struct rxdp_eqp *qp, const struct rxdp_qp_attr *attr,
			  uint32_t mask, const struct rxdp_path *path,
			  uint32_t port_mtu, char *why, size_t whylen);
/*
 * Everything set so far, as ibv_query_qp gives it (the state as the engine
 * has it: the transport may have taken the QP to ERR), and the resolved
 * path; either may be NULL
 */
void rxdp_engine_qp_query(struct rxdp_eqp *qp, struct rxdp_qp_attr *attr,
			  struct rxdp_path *path);
/*
 * DCQCN's reaction point of a QP (README.md, "Congestion"), as of the
 * engine's last pass: its current and target rate (kbit/s), alpha (1/1024),
 * whether it is paced (only after a CNP, below the line rate)
 */
struct rxdp_engine_qp_cc {
	uint64_t rate_kbps, target_kbps;
	uint32_t alpha;
	bool paced;
	uint64_t srtt_ns; /* the requester's smoothed RTT; 0: no sample yet */
	uint32_t cwnd; /* the loss window, packets */
};
void rxdp_engine_qp_cc(struct rxdp_eqp *qp, struct rxdp_engine_qp_cc *cc);
enum ibv_qp_state rxdp_engine_qp_state(struct rxdp_eqp *qp);
uint32_t rxdp_engine_qp_num(struct rxdp_eqp *qp);
enum ibv_qp_type rxdp_engine_qp_type(struct rxdp_eqp *qp);
/* Its service class (cfg.tcs): its path's SL's */
unsigned int rxdp_engine_qp_class(struct rxdp_eqp *qp);
/* Its engine's place in the device's group (0 without a group) */
int rxdp_engine_qp_engine(const struct rxdp_eqp *qp);
int rxdp_engine_destroy_qp(struct rxdp_eqp *qp);

/*
 * ibv_attach_mcast / ibv_detach_mcast (IBTA 10.5.2.4, 11.2.6): a UD QP
 * receives the datagrams to QPN 0xFFFFFF sent to the group gid (a RoCE v2
 * multicast GID: IPv6 ff00::/8 or IPv4-mapped 224.0.0.0/4), each its own
 * completion. Attach: 1 if the group got its first member here, 0,
 * -EALREADY (attached already: nothing changed; the verb's success),
 * -EINVAL (not UD, not a multicast GID), -ENOMEM
 * (a cap of params.h). Detach: 0, or -EINVAL (not attached, not UD, not a
 * multicast GID). Destroying the QP detaches it from all. why: a sentence.
 */
int rxdp_engine_mcast_attach(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
			     size_t whylen);
int rxdp_engine_mcast_detach(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
			     size_t whylen);
bool rxdp_gid_is_multicast(const uint8_t *gid);

/*
 * Where its rings are, and what a poster must know (rxdp_hca_post_send/
 * recv): the caller serialises posters of each ring, as ibv_post_send(3)
 * requires, and has the engine make progress after posting where no
 * thread does (rxdp_engine_progress).
 */
struct rxdp_eqp_rings {
	struct rxdp_engine *e;
	struct rxdp_hca_qp *sh;
	struct rxdp_hca_ring sq, rq;
	struct rxdp_hca_qp_caps caps;
	uint32_t max_recv_sge;
	bool srq; /* receives come from an SRQ: no RQ */
};
void rxdp_engine_qp_rings(struct rxdp_eqp *qp, struct rxdp_eqp_rings *r);

/* --- a QP handed to a successor (takeover.c) ---------------------------- */

/*
 * A QP's transport state, for an engine of another process to go on where
 * this one stopped (README.md, "Takeover"): its PSNs, the completer's
 * window, round trip and retries, the responder's place in a message and
 * its atomic replay cache, congestion control, its counters, and the
 * progress of every WQE taken from its send ring and not yet completed.
 * Opaque bytes in a versioned format. Left out, for the transport to
 * recover as it recovers a loss: requests held past a gap, queued read
 * responses, staged reads, a coalesced ACK.
 *
 * rxdp_engine_qp_save(), the engine halted (rxdp_engine_halt(), else
 * -EAGAIN): the bytes written; with len less than a full send queue's
 * state, nothing written and that size returned; -EBUSY while the owner's
 * memory thread has work of the QP's.
 *
 * rxdp_engine_qp_restore(): into a QP made on the same rings (init.sh) with
 * the same QPN and type, and taken to the saved state with the same
 * attributes; its CQs on their rings (rxdp_engine_create_cq_shared() keeps
 * their indices), its MRs with their keys (rxdp_engine_mr_set_key()). The
 * records are taken again from the rings (every WQE the owner has not seen
 * complete is still in its slot), the progress laid over them, and its
 * timers start from now (what the handover lost is recovered as a loss).
 * 0; -EINVAL (another format or version, another QP, state or type: the
 * QP is as the modify left it) or -ESTALE (the rings do not hold what the
 * state says: the QP is to be destroyed), with why.
 */
long rxdp_engine_qp_save(struct rxdp_eqp *qp, void *buf, size_t len);
int rxdp_engine_qp_restore(struct rxdp_eqp *qp, const void *buf, size_t len,
			   char *why, size_t whylen);
/*
 * An SRQ's state the same way: where its QPs' receives took it, its limit
 * event (armed or not). Save: the engine halted (else -EAGAIN); the bytes,
 * or with len short the size needed. Restore: into an SRQ made on the same
 * ring with the same max_wr, before its QPs are restored (each QP carries
 * the receive it was filling); 0, -EINVAL or -ESTALE with why.
 */
long rxdp_engine_srq_save(struct rxdp_esrq *srq, void *buf, size_t len);
int rxdp_engine_srq_restore(struct rxdp_esrq *srq, const void *buf, size_t len,
			    char *why, size_t whylen);
/*
 * An MR (or MW) given the key it had in a predecessor's engine: 0, -EEXIST
 * (an object of this engine has the key's index), -EINVAL
 */
int rxdp_engine_mr_set_key(struct rxdp_emr *mr, uint32_t key);
/*
 * The device's counters going on from a predecessor's (what
 * rxdp_engine_hw_counters(e, NULL, ...) gave there), before its QPs are
 * restored
 */
void rxdp_engine_hw_counters_set(struct rxdp_engine *e, const __u64 *in);

/* --- address handles (UD) ---------------------------------------------- */

/*
 * The headers towards one destination, as rxdp_ctl_resolve() gave them
 * (ibv_create_ah). A UD WQE names it by a handle; cfg.ah_lookup maps the
 * handle to this. The path is copied into the record when the WQE is taken
 * from the ring. NULL + errno.
 */
struct rxdp_eah *rxdp_engine_create_ah(struct rxdp_engine *e,
				       struct rxdp_epd *pd,
				       const struct rxdp_path *path);
int rxdp_engine_destroy_ah(struct rxdp_eah *ah);

/* --- shared receive queues ------------------------------------------- */

/*
 * An SRQ of attr->max_wr WQEs of attr->max_sge SGEs (attr updated to what
 * was granted); attr->srq_limit arms the limit event (0: not armed). sh,
 * ring: its ring (common/hca.h), sized as attr was granted; NULL: the
 * engine's own (rxdp_engine_srq_ring()). NULL + errno.
 */
struct rxdp_esrq *rxdp_engine_create_srq(struct rxdp_engine *e,
					 struct rxdp_epd *pd,
					 struct ibv_srq_attr *attr,
					 struct rxdp_hca_wq *sh, void *ring,
					 void *user);
/* The attributes an SRQ created with *attr would get; -EINVAL if refused */
int rxdp_engine_srq_caps(struct ibv_srq_attr *attr);
/* Where its ring is, for the poster (rxdp_hca_post_recv); its engine */
struct rxdp_engine *rxdp_engine_srq_ring(struct rxdp_esrq *srq,
					 struct rxdp_hca_ring *r);
/* IBV_SRQ_LIMIT re-arms; IBV_SRQ_MAX_WR (resizing) is -EOPNOTSUPP */
int rxdp_engine_modify_srq(struct rxdp_esrq *srq, struct ibv_srq_attr *attr,
			   int mask);
int rxdp_engine_query_srq(struct rxdp_esrq *srq, struct ibv_srq_attr *attr);
int rxdp_engine_destroy_srq(struct rxdp_esrq *srq); /* -EBUSY while used */

/* --- AF_XDP port (xsk.c) ---------------------------------------------- */

/* The UMEM: frame_size 4096 (or 2048), aligned mode, in a memfd */
struct rxdp_umem {
	int fd;
	void *area;
	uint64_t size;
	uint32_t frame_size;
};
int rxdp_umem_create(struct rxdp_umem *u, uint32_t nframes,
		     uint32_t frame_size);
/* The UMEM of a predecessor's memfd fd (kept: closed with the UMEM) */
int rxdp_umem_adopt(struct rxdp_umem *u, int fd, uint32_t frame_size);
void rxdp_umem_destroy(struct rxdp_umem *u);

/* CLOCK_MONOTONIC in ns: the engine's clock, and its port's TX thread's */
static inline uint64_t eng_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct rxdp_xsk_port;
/*
 * A port over already-bound AF_XDP sockets (one per RX queue, all on umem;
 * ring_size entries in each ring). The UMEM's frames are split between the
 * sockets: half of each share is for RX (2048 of them on the fill ring at
 * first, more when the engine falls behind, up to ring_size), half for TX.
 * bind_flags: as the sockets were bound (XDP_USE_SG: multi-buffer, TX
 * buffers of two frames). The port does not close these fds (it does those
 * of sockets rxdp_xsk_port_add() gives it). Mapping the
 * rings of a bound socket needs Linux 6.4 or later. NULL + errno.
 */
struct rxdp_xsk_port *rxdp_xsk_port_create(struct rxdp_umem *umem,
					   const int *xsk_fds, int nfds,
					   uint32_t ring_size,
					   uint32_t bind_flags);
/*
 * The sockets made here: one per RX queue of ifindex (up to nqueues; fewer
 * if the device has fewer), nsets times over (socket set * queues + q on
 * queue q; a set after the first shares the first's fill and completion
 * rings on each queue: sockets for more engines than queues), on umem,
 * each with its rings mapped and its fill ring stocked before bind()
 * (what kernels before 6.4 require). Binds
 * zero-copy if the driver can, else copy mode; multi-buffer (XDP_USE_SG)
 * if the kernel and the mode can, else not. max_frame: the largest frame
 * (Ethernet header to ICRC) the sockets must receive; where one UMEM frame
 * holds it, zero-copy is worth more than multi-buffer, else the reverse
 * (xsk.c, bind_modes()); want XDP_COPY or XDP_ZEROCOPY binds that mode or
 * fails, 0 takes the best the driver has. Frames whose destination MAC is
 * the source's (a QP of this device talking to one of the same device)
 * never reach the wire: they come back as received frames. The port closes
 * its sockets.
 * NULL + errno; *why gets a short reason.
 */
struct rxdp_xsk_port *rxdp_xsk_port_open(struct rxdp_umem *umem, int ifindex,
					 uint32_t nqueues, uint32_t nsets,
					 uint32_t ring_size, uint32_t max_frame,
					 uint16_t want, const char **why);
/* As bound: XDP_COPY or XDP_ZEROCOPY, XDP_USE_SG; sockets (queues) */
/*
 * Several engines on one port: a new port with the sockets k, k + n,
 * k + 2n, ... of p (moved: p keeps the rest, and its UMEM is shared), its
 * own loopback and RX state; frames it sends go out on its first socket's
 * queue. NULL + errno.
 */
struct rxdp_xsk_port *rxdp_xsk_port_split(struct rxdp_xsk_port *p, int k,
					  int n);
/*
 * A queue the interface gained (ethtool -L) while p runs: a socket bound
 * on it in p's mode, on a UMEM of its own (p's is all handed out), with
 * as many frames as each of p's sockets; the frames it receives and its
 * fd are p's from now. Only with p's engine stopped or its lock held
 * (rxdp_engine_port_call()). The socket's fd, or -errno with *why.
 */
int rxdp_xsk_port_add(struct rxdp_xsk_port *p, int ifindex, uint32_t queue,
		      const char **why);
/* rxdp_xsk_port_add() as rxdp_engine_port_call() calls it: arg is this */
struct rxdp_xsk_queue_add {
	int ifindex;
	uint32_t queue;
	const char *why; /* set when it fails */
};
int rxdp_xsk_port_add_call(void *port, void *arg);
/* A port with no socket yet, on p's UMEM and in p's mode: for an engine
 * started for a new queue (rxdp_xsk_port_add() gives it its sockets) */
struct rxdp_xsk_port *rxdp_xsk_port_like(const struct rxdp_xsk_port *p);
uint32_t rxdp_xsk_port_bind_flags(struct rxdp_xsk_port *p);
int rxdp_xsk_port_fds(struct rxdp_xsk_port *p, int *fds, int max);
/*
 * Each socket's mode as the kernel has it (XDP_OPTIONS): XDP_ZEROCOPY or
 * XDP_COPY, with XDP_USE_SG where bound multi-buffer; in queue order, up
 * to max; the count. Any thread.
 */
int rxdp_xsk_port_modes(struct rxdp_xsk_port *p, uint16_t *modes, int max);
/*
 * Frames the kernel received for the port's sockets and dropped because
 * a socket had no room (its RX ring full, its fill ring empty) or for
 * another reason of its own (XDP_STATISTICS, each frame once): what
 * overruns the data path, which no transport counter sees. Any thread.
 */
uint64_t rxdp_xsk_port_rx_lost(struct rxdp_xsk_port *p);
/*
 * Copy mode: a thread of the port's own makes the sendto() calls that send
 * large flushes (xsk.c, the TX thread), started at the first, on cpus (NULL:
 * any). For a host with CPUs to spare: the engine builds frames meanwhile.
 * Before the engine runs, or under its lock (rxdp_engine_port_call());
 * ports made later by rxdp_xsk_port_like() inherit it. Whether the port
 * takes it: not in zero-copy mode.
 */
bool rxdp_xsk_port_tx_thread(struct rxdp_xsk_port *p, const cpu_set_t *cpus);
/*
 * A device's ports (one per engine: ps[0..np-1]) handed to a successor
 * (README.md, "Takeover"), their engines halted (rxdp_engine_halt()) or
 * stopped, all at once: engines on one queue share its fill and completion
 * rings across their ports. rxdp_xsk_ports_save() drains TX first (every
 * TX buffer back from the kernel, up to a second; frames looped back and
 * not yet received are lost) and writes the ports' state in a versioned
 * format: the bytes written, or with len too short nothing written and
 * the size needed; -EBUSY (TX not drained, a port in a burst). The ports
 * work on if the handover is called off. rxdp_xsk_ports_takeover_fds():
 * the descriptors the successor needs, in order: the sockets' (port by
 * port), then those of the UMEMs of sockets added for new queues; the
 * count.
 *
 * rxdp_xsk_ports_adopt(): the successor's ports (into ps, room for maxp)
 * over those descriptors (as received: they are the ports' from then on,
 * closed with them) on umem (the predecessor's, rxdp_umem_adopt()); the
 * frames the sockets received meanwhile are in their RX rings. The number
 * of ports, or -errno with why (a version it does not read, a damaged
 * state, descriptors that do not match); the fds are still the caller's
 * then.
 */
long rxdp_xsk_ports_save(struct rxdp_xsk_port *const *ps, int np, void *buf,
			 size_t len);
int rxdp_xsk_ports_takeover_fds(struct rxdp_xsk_port *const *ps, int np,
				int *fds, int max);
int rxdp_xsk_ports_adopt(struct rxdp_umem *umem, const int *fds, int nfds,
			 const void *buf, size_t len, struct rxdp_xsk_port **ps,
			 int maxp, char *why, size_t whylen);
void rxdp_xsk_port_destroy(struct rxdp_xsk_port *p);
extern const struct rxdp_port_ops rxdp_xsk_port_ops;

#endif /* RXDP_ENGINE_H */
