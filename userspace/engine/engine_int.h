/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The engine's internals: its records, limits and the calls between its files. */
#ifndef RXDP_ENGINE_INT_H
#define RXDP_ENGINE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "common/ctl_client.h"
#include "common/hw_counters.h"
#include "engine/engine.h"
#include "engine/keys.h"
#include "engine/pkt.h"
#include "rxdp/params.h"
#include "rxdp/psn.h"
#include "rxdp/rules.h"

#define ENG_MAX_SGE 32
#define ENG_MAX_INLINE 512
#define ENG_MAX_WR 16384
#define ENG_MAX_CQE (1 << 20)
#define ENG_MAX_RD_ATOMIC 16
#define ENG_RJOBS 64 /* responder: queued read/atomic responses */
#define ENG_ATOMIC_CACHE 16 /* responder: replayable atomic results */
#define ENG_HOLD_BYTES (32U << 20) /* responder: held requests, per engine */
#define ENG_WINDOW 256 /* requester: packets in flight per QP, at most */
/* a peer's window fits the hold and passes the XDP program */
_Static_assert(ENG_WINDOW <= RXDP_HOLD_WINDOW, "the hold covers a window");
#define ENG_ACKREQ_EVERY 64 /* requester: AckReq at least this often */
#define ENG_RX_BATCH 64
/*
 * The receiver as a congestion point: a burst that finds this much (1/1000)
 * of the receive path full (rx_fill) makes its ECT packets count as CE
 */
#define ENG_RX_CROWDED 500
#define ENG_TX_BATCH 32 /* packets per TX flush at most deferred */
#define ENG_TX_BUDGET 64 /* packets one QP sends per pass */
#define ENG_TX_OWNER 256 /* packets one owner's QPs send per pass */
#define ENG_FLUSH_BUDGET 64 /* WQEs of a queue flushed per pass */
/* requester loss recovery (comp.c) */
#define ENG_RTO_MIN_NS 500000ULL /* retransmission timeout floor */
#define ENG_RTO_INIT_NS 2000000ULL /* before the first RTT sample */
#define ENG_RTO_MAX_NS 1000000000ULL /* when the QP's timeout is infinite */
#define ENG_TLP_MIN_NS 50000ULL /* tail-loss probe timeout floor */
/* a paced QP asks for an ACK at least this often (req.c), under the above */
#define ENG_PACED_ACKREQ_NS 40000ULL
#define ENG_CWND_MIN 32 /* the window after losses, in packets */
#define ENG_CWND_LOW 2 /* ... at least, for a QP paced low (comp.c) */

/* A range of an owner's memory that this process maps too (mem.c) */
struct eng_win {
	uint64_t addr; /* the owner's */
	uint64_t len;
	uint8_t *local; /* the same bytes here */
};

struct eng_job;

/* RC QPs whose writes an owner's memory thread holds back (mem.c) */
#define ENG_MEM_FENCES 8

/*
 * An owner's memory (mem.c). Windows and the fields the engine uses under
 * its lock; the job lists under lock, shared with the owner's memory
 * thread, which holds a reference while it runs.
 */
struct rxdp_emem {
	struct rxdp_engine *e;
	struct rxdp_emem *next; /* the engine's list (not mem0) */
	int fd; /* its /proc/PID/mem; -1: this process (the engine's mem0) */
	struct eng_win *win; /* sorted by addr, disjoint */
	uint32_t nwin, cap;
	uint32_t hint; /* the window found last */
	/* the batched path (engine lock) */
	struct eng_job *open; /* the write batch this pass fills */
	uint64_t wseq; /* write batches made */
	uint64_t wdone; /* write batches done (all before too) */
	uint64_t bytes; /* in jobs and stages: ENG_MEM_BUDGET at most */
	uint32_t drain_left; /* WQEs it may still post this pass (drain.c) */
	uint32_t tx_left; /* packets its QPs may still send this pass */
	bool thread_up;
	/* the memory thread */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct eng_job *todo, *todo_tail; /* lock */
	struct eng_job *done, *done_tail; /* lock */
	bool stop; /* lock */
	int refs; /* lock: the engine's, the thread's */
	int io_fd, wake_fd; /* the thread's own: fd, the engine's evfd */
	_Atomic int pending; /* done has jobs */
	/* the thread's: RC QPs (qpn, epoch) a write of failed (mem.c) */
	struct eng_fence {
		uint32_t qpn, epoch;
	} fence[ENG_MEM_FENCES];
	uint32_t nfence;
};

/*
 * Bytes of an owner's memory staged for one packet source (the requester's
 * WQE, the responder's read response) while they are in no window (mem.c)
 */
#define ENG_STAGE_MAX (256U << 10)
enum eng_stage_state {
	STAGE_EMPTY,
	STAGE_PENDING,
	STAGE_READY,
	STAGE_FAILED,
};

struct eng_stage {
	struct rxdp_emem *m; /* NULL: unused */
	const void *who; /* what it serves, and its generation */
	uint32_t gen;
	enum eng_stage_state state;
	uint64_t addr; /* the owner's */
	uint32_t len;
	uint8_t *buf;
	struct eng_job *job; /* STAGE_PENDING */
};

/* An atomic the memory thread does for a request (mem.c) */
struct eng_aslot {
	struct eng_job *job; /* pending */
	bool done;
	int err;
	uint32_t psn;
	uint64_t addr;
	uint64_t orig;
};

/* What a queued write belongs to, for an error found later */
struct eng_wtag {
	uint32_t psn; /* the responder's request, or ~0 */
	uint32_t wqe; /* the completer's WQE (SQ index) */
};

struct rxdp_epd {
	struct rxdp_engine *e;
	struct rxdp_emem *m; /* its owner's memory */
	int refs; /* MRs, QPs, SRQs, AHs on it */
};

struct rxdp_eah {
	struct rxdp_epd *pd;
	struct pkt_path path;
};

/*
 * A memory region, or (mw_type set) a memory window (IBTA 10.6.7): both are
 * named by keys from the one table (keys.h: kind ENG_KEY_MR or ENG_KEY_MW;
 * a window's key byte is its consumer's). A window bound to a region reaches
 * [iova, iova + len) of it, at addr in the owner's memory, with the
 * window's own access rights (mw.c).
 */
struct rxdp_emr {
	struct rxdp_engine *e;
	struct rxdp_epd *pd;
	uint64_t addr; /* in the owner's memory */
	uint64_t iova;
	uint64_t len;
	struct eng_key k; /* lkey = rkey (keys.h) */
	unsigned int access;
	uint32_t nmw; /* a region: windows bound to it (no dereg meanwhile) */
	/* windows only */
	uint8_t mw_type; /* 0: a region; IBV_MW_TYPE_1 or IBV_MW_TYPE_2 */
	bool mw_valid; /* bound: remote accesses may use it */
	struct rxdp_emr *mw_mr; /* the region it is bound to, or NULL */
	struct rxdp_eqp *mw_qp; /* type 2: the QP it was bound through */
};

struct rxdp_ecq {
	struct rxdp_engine *e;
	void *user;
	/*
	 * The ring and its indices (common/hca.h): the engine produces under
	 * its lock; the consumer is the owner (shared) or pollers of this
	 * process (cq->lock). own: sh was allocated here.
	 */
	struct rxdp_hca_cq *sh;
	bool own;
	uint32_t size; /* power of two */
	bool overflow;
	bool ts; /* completion timestamps after the data slots (shared CQs) */
	int refs; /* QPs using it */
	void (*notify)(void *);
	void *notify_arg;
};

/* A send WQE as posted, plus the requester's progress on it */
struct swqe {
	uint64_t wr_id;
	enum ibv_wr_opcode opcode;
	unsigned int send_flags;
	uint32_t imm; /* network order */
	uint32_t length;
	uint64_t raddr;
	uint32_t rkey;
	uint64_t compare_add; /* Atomic Write: its 8 bytes, as given */
	uint64_t swap;
	uint8_t flush_type, flush_level; /* Flush (A19): FETH's PLT and SEL */
	int num_sge;
	struct ibv_sge *sge; /* this slot's share of the SGE pool */
	/* Send with Invalidate, Local Invalidate: the R_Key to invalidate */
	uint32_t inv_rkey;
	/* Bind MW: the window (by its key now), the region, the new key */
	uint32_t mw_key, mr_key, new_key;
	uint64_t bind_addr, bind_len;
	unsigned int bind_access;
	uint8_t *inl; /* inline data copied at post time, or NULL */
	bool gathered; /* inl holds what sge names (common/hca.h), checked */
	/* UD: where to (the AH's headers, copied), remote QPN and Q_Key */
	struct pkt_path ud_path;
	uint32_t ud_qpn;
	uint32_t ud_qkey;
	/* requester state, engine-only */
	bool started;
	bool done; /* every response arrived / acknowledged */
	enum ibv_wc_status status;
	uint32_t first_psn;
	uint32_t npkts;
	uint32_t resp_psn; /* read/atomic: next expected response PSN */
	uint32_t resp_off; /* read: bytes received */
	int nsg;
	struct pkt_sg *sg; /* resolved local buffers (the owner's addresses) */
	uint64_t mem_seq; /* the last write batch into its buffers (mem.c) */
};

struct rwqe {
	uint64_t wr_id;
	int num_sge;
	struct ibv_sge *sge;
};

/*
 * A receive queue, a QP's own or an SRQ's, one record for both (as
 * rdma-core's struct rxe_wq): its owner's ring (common/hca.h) and the
 * engine's records filled from it (drain.c)
 */
struct eng_rq {
	struct rxdp_hca_wq *sh; /* the ring's header (NULL: none shared) */
	void *ring; /* its slots */
	uint32_t stride; /* of its slots: the engine's copy */
	struct rwqe *rec; /* the records */
	struct ibv_sge *sge; /* their SGEs */
	uint32_t size; /* power of two */
	uint32_t max_sge;
	_Atomic uint32_t prod; /* records taken from the ring */
	_Atomic uint32_t cons; /* records consumed by receives */
};

struct rxdp_esrq {
	struct rxdp_engine *e;
	struct rxdp_esrq *next; /* engine's SRQ list */
	struct rxdp_epd *pd;
	struct eng_rq rq; /* its receive queue, shared by its QPs */
	void *own_ring; /* the engine's own, if none was given */
	void *user;
	uint32_t max_wr; /* as granted: posting more is ENOMEM */
	uint32_t limit; /* 0: the limit event is not armed */
	int refs;
	bool broken; /* its owner broke the rules: drained no more */
};

enum rjob_type {
	RJOB_READ,
	RJOB_ATOMIC,
	RJOB_PLACED, /* Atomic Write, Flush: a zero-length read response */
};

/* A queued response of the responder (IBTA 9.7.5.1: in PSN order) */
struct rjob {
	enum rjob_type type;
	uint32_t psn; /* of the next packet to send */
	uint32_t first_psn;
	uint32_t npkts;
	uint32_t sent; /* packets sent */
	uint64_t addr; /* read: source, in the owner's memory */
	uint32_t len;
	uint64_t orig; /* atomic: the original value */
	uint32_t msn;
	uint64_t mem_seq; /* sent once the writes before it are done */
};

struct atomic_cache {
	bool valid;
	uint32_t psn;
	uint64_t orig;
};

enum resp_seq {
	RSEQ_NONE = 0, /* between messages */
	RSEQ_SEND, /* inside a multi-packet Send */
	RSEQ_WRITE, /* inside a multi-packet RDMA Write */
	RSEQ_DROP, /* UC: dropping the rest of a failed message */
};

/* The requester's state (req.c): where it is in the send queue and its PSNs */
struct eng_req {
	uint32_t sq_cur; /* the WQE being (re)transmitted */
	uint32_t send_psn; /* PSN of the next packet to (re)transmit */
	uint32_t next_psn; /* PSN after the last one ever assigned */
	uint32_t flushed_psn; /* next_psn at the last TX flush */
	uint32_t ackreq_end; /* PSN after the newest one sent with AckReq */
	uint32_t flushed_ackreq; /* ackreq_end at the last TX flush */
	uint32_t tx_hw; /* PSN after the highest ever sent (stats) */
	uint32_t rd_outstanding; /* reads/atomics started, not done */
	uint32_t since_ackreq;
	uint64_t ackreq_at; /* ns: the newest packet with AckReq went */
	bool ackreq_next; /* AckReq on the next packet sent */
	/* a packet to resend alone first (selective retransmission, comp.c) */
	bool resend;
	uint32_t resend_psn;
	uint32_t resend_wqe; /* the SQ index of its WQE */
};

/* The completer's state (comp.c): acknowledgements, timers, retries, the window */
struct eng_comp {
	uint32_t una; /* oldest unacknowledged PSN */
	uint8_t retry_left;
	uint8_t rnr_left;
	uint64_t timer_at; /* retransmission deadline, 0: off */
	uint64_t retry_epoch; /* last progress or counted timeout */
	uint8_t backoff; /* timer expiries since the last RTT sample */
	uint64_t rnr_at; /* RNR wait ends, 0: not waiting */
	uint32_t rnr_psn;
	uint32_t read_rewind_psn; /* avoid rewinding twice for one gap */
	bool read_rewound;
	uint32_t seq_nak_psn; /* the last sequence NAK acted on */
	bool seq_nak_seen;
	bool probing; /* after a timeout: one packet out until an answer */
	/* round-trip time, from the ACK of one timed packet at a time */
	bool rtt_known;
	uint64_t srtt, rttvar; /* ns */
	uint64_t rtt_min; /* ns, the least sample: the path without queues */
	bool rtt_timing; /* rtt_psn went out at rtt_at */
	uint64_t rtt_at;
	uint32_t rtt_psn;
	uint64_t tlp_at; /* tail-loss probe deadline, 0: off */
	bool tlp_sent; /* one probe per tail, until progress */
	/* packets in flight at most (ENG_CWND_MIN..ENG_WINDOW, comp.c) */
	uint32_t cwnd;
	uint32_t cwnd_acked; /* acknowledged towards the next increase */
	uint32_t cwnd_una; /* una when they were counted */
	bool cwr; /* the window was cut for a loss, until una passes cwr_psn */
	uint32_t cwr_psn;
	/*
	 * a gap repaired by a packet resent alone: the window counts from
	 * sr_recovery_psn (tx_hw at the NAK) until una passes it (req.c)
	 */
	bool sr_recovery;
	uint32_t sr_recovery_psn;
};

/* A request held past a gap (hold.c): a copy from its IP header on */
struct eng_held {
	uint32_t psn;
	uint32_t size; /* bytes allocated, this header included */
	struct pkt_info pi; /* pointing into data */
	uint8_t data[];
};

struct eng_hold {
	uint32_t n; /* slots in use */
	uint32_t end; /* PSN after the highest held (while n) */
	struct eng_held *slot[RXDP_HOLD_WINDOW]; /* by PSN; NULL: free */
};

/* The responder's state (resp.c): the receive WQE in use, the PSNs it expects, queued responses */
struct eng_resp {
	/*
	 * The receive WQE in use: taken off the RQ or SRQ by the first packet
	 * of a Send (or a Write with immediate's last), completed by the last
	 */
	bool cur_valid;
	uint64_t cur_wr_id;
	int cur_nsge;
	struct ibv_sge cur_sge[ENG_MAX_SGE];
	uint32_t epsn;
	uint32_t msn;
	bool nak_sent; /* a PSN sequence NAK for epsn is out */
	/*
	 * Selective retransmission (resp.c): what came past the gap at epsn,
	 * held (NULL until a first gap); lost: requests before lost_end past
	 * the gap went unheld, so the next NAK has the requester go back
	 */
	struct eng_hold *hold;
	bool lost;
	uint32_t lost_end;
	/*
	 * whether the requester resends alone (resp_sr_learn): after a NAK
	 * that said held, watched up to the packet after watch_psn's resend
	 * (watch_end: the PSN after the highest held then); sr_seen: it did
	 * once; misses: it resent what was held, so many gaps in a row;
	 * goes_back: nothing is held any more
	 */
	bool watch, watch_seen, sr_seen, goes_back;
	uint8_t misses;
	uint32_t watch_psn, watch_end;
	enum resp_seq rseq;
	uint32_t recv_off; /* bytes of the current Send received */
	uint32_t recv_len; /* room in the current receive WQE */
	uint64_t wr_addr; /* current RDMA Write: next byte (owner's) */
	uint32_t wr_left;
	uint32_t wr_len; /* its DMA length (for Write with immediate) */
	struct rjob rjobs[ENG_RJOBS];
	uint32_t rjob_head, rjob_tail; /* free-running */
	struct atomic_cache acache[ENG_ATOMIC_CACHE];
	uint32_t acache_next;
	/* the PSN of the last read/atomic response sent */
	bool resp_sent;
	uint32_t resp_sent_psn;
	/* one coalesced ACK/NAK, sent after the queued responses */
	bool ack_pending;
	uint8_t ack_syndrome;
	uint32_t ack_psn;
};

struct rxdp_eqp {
	struct rxdp_engine *e;
	struct rxdp_eqp *next; /* engine's QP list */
	struct rxdp_epd *pd;
	/* the owner's rings (common/hca.h): shared, or the engine's own */
	struct rxdp_hca_qp *sh;
	void *sh_sq;
	uint32_t sq_stride; /* the engine's copy */
	void *own_rings;
	bool broken; /* its owner broke the rules: drained no more */
	uint32_t post_cpu; /* shared SQ: the CPU its owner last posted from */
	uint64_t post_ns; /* ... when the engine last took a post from it */
	uint64_t place_rcvd; /* its rcvd_pkts at the last placement */
	uint32_t qpn;
	enum ibv_qp_type type;
	uint8_t tc; /* its service class: its path's SL's (UD: SL 0's) */
	uint32_t mcast_n; /* UD: multicast groups it is attached to (mcast.c) */
	_Atomic int state; /* enum ibv_qp_state */
	struct rxdp_ecq *scq, *rcq;
	bool sq_sig_all;
	struct ibv_qp_cap cap;

	/* attributes */
	uint32_t dest_qpn;
	uint32_t qkey; /* UD */
	uint32_t mtu; /* effective payload bytes per packet */
	uint16_t pkey;
	uint8_t timeout; /* 4.096 us * 2^timeout, 0: infinite */
	uint8_t retry_cnt;
	uint8_t rnr_retry;
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	unsigned int access; /* remote access granted */
	struct pkt_path path;
	/* what has been set (ibv_query_qp), the path as resolved (qpmap.c) */
	struct rxdp_qp_attr attr;
	struct rxdp_path rpath;
	uint32_t port_mtu; /* the port's path MTU at the last modify */
	uint32_t owner_pid;
	struct rxdp_qp_psn *psn; /* the XDP program's view of this QP */
	struct rxdp_qp_psn psn_local; /* when the engine has no psn table */

	/* send queue records, filled from the ring (drain.c) */
	struct swqe *sq;
	uint32_t sq_size;
	_Atomic uint32_t sq_prod; /* records taken from the ring */
	_Atomic uint32_t sq_cons; /* oldest not yet completed */
	struct ibv_sge *sq_sge;
	uint8_t *sq_inl;
	struct pkt_sg *sq_sg;

	struct eng_req req;
	struct eng_comp comp;
	struct eng_resp resp;

	void *user;
	struct rxdp_esrq *srq;

	/* its own receive queue (unused on an SRQ) */
	struct eng_rq rq_own;
	/* where its receives come from: rq_own, or its SRQ's */
	struct eng_rq *rq;

	/* set when the QP went to ERR: flush what is posted */
	bool flushing;
	uint32_t nmw; /* type 2 windows bound through this QP */
	uint64_t hwc[RXDP_HWC_MAX]; /* counters (common/hw_counters.h) */

	/* congestion (cc.c): DCQCN's reaction point, pacing, the CNPs out */
	struct eng_cc_rp cc;
	uint64_t cc_pace_at; /* ns: the next request packet's earliest time */
	bool cc_pace_wait; /* one waits for it (eng_next_deadline) */
	uint64_t cc_cnp_next; /* ns: the next CNP's earliest time */

	/* the batched path of its owner's memory (mem.c) */
	uint64_t mem_seq; /* the last write batch it queued */
	uint32_t mem_epoch; /* new at each reset: its writes' incarnation */
	bool mem_wait; /* something waits for a write batch */
	uint64_t ack_seq; /* the ACK/NAK pending waits for this batch */
	struct eng_stage stage_req, stage_resp;
	struct pkt_mem mem_req, mem_resp; /* their readers, for pkt_build */
	struct eng_aslot aslot;
	/* receive completions waiting for their bytes to be written */
	struct eng_rcqe *rcqe;
	uint32_t rcqe_head, rcqe_tail, rcqe_size; /* free-running, pow2 */
};

/* A receive completion that waits for its bytes (cqe.c) */
struct eng_rcqe {
	struct ibv_wc wc;
	bool solicited;
	bool has_data;
	struct rxdp_hca_cqd d;
	uint64_t seq;
};

#define ENG_MCAST_BUCKETS 256
struct eng_mcast_grp;
/*
 * An engine's inbox: packets other engines of its group received for its
 * QPs (engine.c). Producers hold lock; the one consumer (the engine's
 * pass) reads [head, tail) without it and then moves head.
 */
#define ENG_INBOX_SLOTS 1024 /* a few QPs' windows (ENG_WINDOW) */
#define ENG_INBOX_FRAME 4480 /* a 4096-byte path MTU's largest packet */
struct eng_inbox_slot {
	uint32_t len;
	uint8_t data[ENG_INBOX_FRAME];
};

struct eng_inbox {
	pthread_mutex_t lock;
	_Atomic uint32_t head, tail;
	struct eng_inbox_slot *slot;
};

struct rxdp_engine_group {
	int n;
	/* e[]: written (engines joining, leaving) under the write lock */
	pthread_rwlock_t lock;
	struct rxdp_engine *e[RXDP_CTL_MAX_XSKS];
	/* by qpn & RXDP_QP_INDEX_MASK: the owning engine's index + 1, 0 none */
	_Atomic uint8_t *owner;
	/* the multicast groups with members, by engine (mcast.c); a leaf lock */
	pthread_mutex_t mc_lock;
	struct eng_group_mc *mc;
	uint32_t nmc;
};

/*
 * The progress thread's scheduling (engine.c: spinning, streams,
 * coalescing, placement), a record of its own: the transport only counts
 * into it (eng_sched_*() below), the core decides from the counts.
 */
struct eng_sched {
	uint32_t spin_ns;
	bool fifo; /* the progress thread may run SCHED_FIFO (--fifo) */
	bool stream; /* ... and left it while it works more than it sleeps */
	bool stream_in; /* a stream that only comes in: it coalesces */
	bool rx_ackreq; /* the newest request taken asked for an answer */
	uint64_t rx_reqs, rx_asks; /* RDMA Writes taken, those that asked */
	uint64_t win_reqs, win_asks; /* ... at this window's start */
	uint64_t rx_data, tx_data; /* packets with payload, in and out */
	uint64_t win_start, win_rx, win_tx; /* ... at this window's start */
	uint32_t stream_misses; /* windows in a row that were no stream */
	uint8_t run_dir; /* request messages in a row: 1 in, 2 out */
	uint32_t run_len;
	bool win_deep; /* ENG_STREAM_RUN of them in this window */
	bool win_slept; /* the thread slept in this window */
	uint32_t spin_backoff; /* sleeps left without spinning (contended) */
	uint32_t spin_backoff_next; /* the next one's length */
	cpu_set_t allowed; /* where the progress thread may run at all */
	cpu_set_t placed; /* where it runs now (eng_place) */
	uint64_t place_ns; /* when placement was last looked at */
};

/* A multicast group with members on this engine (mcast.c) */
struct eng_mcast_grp {
	struct eng_mcast_grp *next; /* in its bucket */
	uint8_t gid[16];
	uint32_t n;
	struct rxdp_eqp *qp[RXDP_MAX_MCAST_QP_ATTACH];
};

/* A write of the batched path that failed, for the transport (mem.c) */
struct eng_mem_fault {
	uint32_t qpn;
	uint32_t psn; /* responder: the request's; completer: ~0 */
	uint32_t wqe; /* completer: the SQ index of the WQE */
	uint64_t seq; /* the write batch's */
};

/* How the pass serves the service classes (engine.c, eng_qps_pass) */
struct eng_classes {
	int64_t deficit[ENG_TC_MAX]; /* bytes each class may still send */
	uint32_t active; /* the classes that sent (or would have) */
	uint32_t strict_qps; /* QPs in strict classes: their packets first */
};

struct rxdp_engine {
	struct rxdp_engine_config cfg;
	uint32_t mem_epochs; /* QP incarnations made (qp->mem_epoch) */
	struct eng_inbox inbox; /* with cfg.group */
	pthread_mutex_t lock; /* all transport state */
	_Atomic int work; /* set by anyone with work for the lock holder */
	struct rxdp_eqp *qps; /* list */
	struct rxdp_esrq *srqs; /* list */
	struct rxdp_epd *pd0; /* the default PD: this process's memory */
	struct rxdp_emem mem0; /* this process's memory */
	struct rxdp_emem *mems; /* the other owners' */
	/* writes the memory threads failed (eng_mem_poll, recv_mem_done) */
	struct eng_mem_fault *mem_faults;
	uint32_t nmem_faults, mem_faults_cap;
	struct rxdp_eqp *drain_next; /* where the next drain starts */
	struct rxdp_eqp *tx_next; /* where the next pass's TX starts */
	/* the control thread waits for the lock: the data path lets it in */
	_Atomic int ctl_waiting;
	struct rxdp_eqp **qp_tab; /* by qpn & RXDP_QP_INDEX_MASK */
	struct eng_keytab keys; /* MRs (and MWs) by key */
	uint32_t max_mtu;
	struct rxdp_engine_stats stats;
	uint64_t hwc[RXDP_HWC_MAX]; /* every QP's counters, summed */
	bool tx_blocked; /* the port had no TX buffer: try again soon */
	bool rx_crowded; /* this pass's burst: ENG_RX_CROWDED full or more */
	uint64_t now; /* ns, refreshed per pass */
	uint64_t held_bytes; /* requests held past gaps (hold.c) */
	struct eng_cc_params cc; /* DCQCN's parameters (cfg.cc or defaults) */
	struct eng_tcs tcs; /* service classes (cfg.tcs or the default) */
	struct eng_classes cls; /* engine.c's serving of them */

	/* progress thread */
	pthread_t thread;
	bool thread_running;
	_Atomic bool stop;
	bool halted; /* no pass ever again (rxdp_engine_halt): lock */
	bool held; /* no pass until released (rxdp_engine_hold): lock */
	int evfd; /* wakes the progress thread (slow paths) */
	int epfd; /* the doorbells and evfd, for the progress thread's sleep */
	int port_fds[RXDP_CTL_MAX_XSKS]; /* the port's sockets (eng_sleep) */
	int nport_fds;
	_Atomic uint64_t sleep_until; /* 0: not sleeping; else its deadline */
	struct eng_sched sched; /* engine.c's; the transport feeds its counts */
	uint32_t tx_unflushed; /* packets queued since the last TX flush */
	bool tx_urgent; /* one of them may not wait (see eng_pass) */
	_Atomic uint64_t activity; /* packets moved: the spinner watches it */
	/* multicast groups with members, by GID (mcast.c) */
	struct eng_mcast_grp *mcast[ENG_MCAST_BUCKETS];
	uint32_t mcast_ngrp, mcast_nattach;
};

/* The access flags the engine knows; others are accepted and ignored */
#define ENG_ACCESS_KNOWN                                     \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_MW_BIND | RXDP_ACCESS_FLUSH)
/*
 * An MR's: and on-demand paging (its memory is the owner's as mapped at
 * each access; cqe_scatter_prep leaves it to rxdpd)
 */
#define ENG_MR_ACCESS_KNOWN (ENG_ACCESS_KNOWN | IBV_ACCESS_ON_DEMAND)

/* Bytes per SQ record of inline data: inline WRs or gathered small sends */
static inline size_t eng_inl_stride(const struct rxdp_eqp *qp)
{
	uint32_t n = qp->cap.max_inline_data;

	return (n > RXDP_HCA_GATHER_MAX ? n : RXDP_HCA_GATHER_MAX) + 1;
}

/* A path as this engine sends along it: ECT(0) unless cfg.ecn_off */
static inline void eng_path_init(const struct rxdp_engine *e,
				 struct pkt_path *pp,
				 const struct rxdp_path *path)
{
	pkt_path_init(pp, path);
	if (!e->cfg.ecn_off)
		pkt_path_ect(pp);
}

/*
 * qp's service class from now: its SL's (cls.strict_qps counts the QPs
 * of strict classes); tc ENG_TC_MAX: none, a QP leaving the engine
 */
static inline void eng_qp_tc(struct rxdp_eqp *qp, unsigned int tc)
{
	struct rxdp_engine *e = qp->e;

	e->cls.strict_qps -= e->tcs.tc[qp->tc].strict;
	if (tc >= ENG_TC_MAX)
		return;
	qp->tc = (uint8_t)tc;
	e->cls.strict_qps += e->tcs.tc[qp->tc].strict;
}

static inline struct rxdp_epd *eng_pd_or_default(struct rxdp_engine *e,
						 struct rxdp_epd *pd)
{
	return pd ? pd : e->pd0;
}

/*
 * The engine's layers, top first (README.md, "Layers"; tests/layers.txt):
 * each calls only the ones below it.
 */

/* --- the core (engine.c), for the API above it ---------------------------- */
void eng_group_own(struct rxdp_eqp *qp, bool mine);
/* Called with the lock held: one pass of everything. Returns work done. */
int eng_pass(struct rxdp_engine *e);
uint64_t eng_next_deadline(struct rxdp_engine *e);
/* Take the lock (blocking, slow paths) / drop it and do what was left */
void eng_lock(struct rxdp_engine *e);
void eng_unlock(struct rxdp_engine *e);

/* --- the transport, for the core; engine lock held throughout -------------- */
/* recv.c: a received packet to its QP's responder or completer */
void recv_pkt(struct rxdp_engine *e, struct pkt_info *pi);
/* recv.c: what the owners' memory threads finished (eng_mem_poll) */
void recv_mem_done(struct rxdp_engine *e);
/* recv.c: a frame this device sends to a group, to its own members too */
void recv_mcast_loop(struct rxdp_engine *e, const struct pkt_path *pp,
		     void *frame, uint32_t len);
/* req.c: the requester; up to budget packets, how many sent */
int req_tx(struct rxdp_eqp *qp, int budget);
bool req_resolve(struct rxdp_eqp *qp, struct swqe *w);
/* resp.c: the responder */
void resp_rx(struct rxdp_eqp *qp, struct pkt_info *pi);
int resp_tx(struct rxdp_eqp *qp, int budget);
/* comp.c: the completer, and the requester's timers */
void req_arm_timer(struct rxdp_eqp *qp);
void req_sent(struct rxdp_eqp *qp, uint32_t psn, bool retx, bool ackreq);
void req_retire(struct rxdp_eqp *qp);
void req_resume(struct rxdp_eqp *qp);
void req_rx(struct rxdp_eqp *qp, struct pkt_info *pi);
int comp_timers(struct rxdp_eqp *qp);
uint64_t comp_deadline(struct rxdp_eqp *qp);

/* --- the services under the transport: they call nothing above them ------- */
/* send.c: one packet along pp (d->dqpn set) / to the connected peer */
void *send_build(struct rxdp_eqp *qp, struct pkt_desc *d,
		 const struct pkt_path *pp, int *len);
void send_queue(struct rxdp_eqp *qp, const struct pkt_desc *d, void *buf,
		int n);
int send_pkt_path(struct rxdp_eqp *qp, struct pkt_desc *d,
		  const struct pkt_path *pp);
int send_pkt(struct rxdp_eqp *qp, struct pkt_desc *d);
/* sge.c: scatter into / slice of the owner's buffers; keys and bounds */
int sge_copy_to(struct rxdp_eqp *qp, const struct pkt_sg *sg, int nsg,
		uint32_t off, const uint8_t *src, uint32_t len,
		const struct eng_wtag *tag);
int sge_slice(const struct pkt_sg *sg, int nsg, uint32_t off, uint32_t len,
	      struct pkt_sg *out);
int sge_resolve(struct rxdp_epd *pd, const struct ibv_sge *sge, int num,
		unsigned int need, struct pkt_sg *out, uint32_t *total);
bool sge_rkey_check(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
		    uint64_t len, unsigned int need, uint64_t *addr);
bool sge_flush_check(struct rxdp_eqp *qp, uint32_t rkey, uint64_t va,
		     uint32_t len, uint32_t sel, unsigned int need);
/* drain.c: what the owners posted, taken into the engine's records */
int eng_drain(struct rxdp_engine *e);
bool eng_drain_qp_all(struct rxdp_eqp *qp);
bool eng_drain_srq_all(struct rxdp_esrq *srq);
bool eng_drain_recv(struct rxdp_eqp *qp);
bool eng_rq_take(struct rxdp_eqp *qp);
/* qpstate.c: the QP's state, its freed slots, ERR and flush, RESET */
void qpstate_publish(struct rxdp_eqp *qp);
void qpstate_set(struct rxdp_eqp *qp, int state);
void qpstate_sq_free(struct rxdp_eqp *qp, uint32_t cons);
void qpstate_rq_free(struct eng_rq *q, uint32_t cons);
int qpstate_flush(struct rxdp_eqp *qp);
void qpstate_to_err(struct rxdp_eqp *qp, bool event);
void qpstate_reset(struct rxdp_eqp *qp);
/* cqe.c: completions and events, what the owner is told */
void eng_cq_add(struct rxdp_ecq *cq, const struct ibv_wc *wc, bool solicited);
void eng_cq_add_data(struct rxdp_ecq *cq, const struct ibv_wc *wc,
		     bool solicited, const struct rxdp_hca_cqd *d);
void eng_event(struct rxdp_engine *e, enum ibv_event_type ev, void *user);
bool cqe_send_wc(struct rxdp_eqp *qp, const struct swqe *w, struct ibv_wc *wc);
/* pi: the message's last packet (immediate data, IETH, SE), or NULL */
void cqe_recv(struct rxdp_eqp *qp, enum ibv_wc_status status,
	      enum ibv_wc_opcode op, uint32_t len, const struct pkt_info *pi);
/* ... and the CQE's data for a scatter to CQE (cqe_scatter_prep), or NULL */
void cqe_recv_data(struct rxdp_eqp *qp, enum ibv_wc_status status,
		   enum ibv_wc_opcode op, uint32_t len,
		   const struct pkt_info *pi, const struct rxdp_hca_cqd *d);
bool cqe_scatter_prep(struct rxdp_eqp *qp, const struct pkt_sg *sg, int nsg,
		      uint32_t len, struct rxdp_hca_cqd *d);
void cqe_recv_add(struct rxdp_eqp *qp, const struct ibv_wc *wc, bool solicited,
		  const struct rxdp_hca_cqd *d);
/* mcast.c: multicast groups (engine lock held) */
int eng_mcast_join(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
		   size_t whylen);
int eng_mcast_leave(struct rxdp_eqp *qp, const uint8_t *gid, char *why,
		    size_t whylen);
struct eng_mcast_grp *eng_mcast_find(struct rxdp_engine *e, const uint8_t *gid,
				     struct eng_mcast_grp ***link);
void eng_mcast_qp_gone(struct rxdp_eqp *qp);
void eng_mcast_handoff(struct rxdp_engine *e, const uint8_t *gid,
		       const struct rxdp_frame *f);
/* inbox.c: work for engine e, its thread woken if it sleeps */
void eng_wake(struct rxdp_engine *e);
/*
 * inbox.c: a copy of a frame into another engine's inbox, that engine
 * woken. looped: a frame looped back on the device, which makes no stream
 * (engine.c, "Streams"), and whose engine the caller runs or wakes itself
 * (eng_handoff).
 */
void eng_inbox_put(struct rxdp_engine *e, int owner, const struct rxdp_frame *f,
		   bool looped);
/* the same into engine to, the group's read lock held */
void eng_inbox_put_to(struct rxdp_engine *e, struct rxdp_engine *to,
		      const struct rxdp_frame *f, bool looped);
/* mw.c: memory windows (IBTA 10.6.7) */
enum ibv_wc_status mw_bind(struct rxdp_eqp *qp, const struct swqe *w);
/* Local Invalidate and Send with Invalidate: 0 or -EINVAL */
int mw_invalidate(struct rxdp_eqp *qp, uint32_t rkey);
/*
 * A remote access of [va, va+len) with the rights in need through window
 * mw (already known to be of qp's PD): true and *addr (the owner's
 * address) if the window allows it (sge_rkey_check() for regions)
 */
bool mw_access(const struct rxdp_eqp *qp, const struct rxdp_emr *mw,
	       uint64_t va, uint64_t len, unsigned int need, uint64_t *addr);
/* A window bound to nothing any more */
void mw_unbind(struct rxdp_emr *mw);
/* A QP goes away: the type 2 windows bound through it are invalidated */
void mw_qp_gone(struct rxdp_eqp *qp);
/* mem.c: the owners' memory, engine lock held but where said */
int eng_mem_write(struct rxdp_eqp *qp, uint64_t addr, const void *src,
		  size_t len, const struct eng_wtag *tag);
int eng_mem_atomic(struct rxdp_eqp *qp, uint32_t psn, uint64_t addr, bool cas,
		   uint64_t compare, uint64_t swap_add, uint64_t *orig);
int eng_mem_store64(struct rxdp_eqp *qp, uint64_t addr, uint64_t v,
		    const struct eng_wtag *tag);
bool eng_mem_direct(struct rxdp_epd *pd, uint64_t addr, uint64_t len);
void eng_stage_use(struct eng_stage *s, struct rxdp_epd *pd, const void *who,
		   uint32_t gen);
void eng_stage_release(struct eng_stage *s);
int eng_stage_read(void *arg, void *dst, uint64_t addr, size_t len,
		   uint64_t span, uint32_t *crc);
int eng_mem_poll(struct rxdp_engine *e);
void eng_mem_submit(struct rxdp_engine *e);
bool eng_mem_written(struct rxdp_eqp *qp, uint64_t seq);
void eng_mem_qp_gone(struct rxdp_eqp *qp);
struct rxdp_emem *eng_mem_new(struct rxdp_engine *e, int fd);
void eng_mem_close(struct rxdp_emem *m);
void eng_mem_stop(struct rxdp_emem *m); /* engine lock not held */
int eng_mem_win_add(struct rxdp_emem *m, uint64_t addr, uint64_t len,
		    void *local);
int eng_mem_win_del(struct rxdp_emem *m, uint64_t addr);
/* hold.c: requests held past a gap, for the responder to take in order */
bool hold_put(struct rxdp_eqp *qp, const struct pkt_info *pi, uint32_t psn);
struct pkt_info *hold_peek(struct rxdp_eqp *qp, uint32_t psn);
void hold_drop(struct rxdp_eqp *qp, uint32_t psn);
void hold_drop_before(struct rxdp_eqp *qp, uint32_t psn);
uint32_t hold_count(const struct rxdp_eqp *qp);
void hold_flush(struct rxdp_eqp *qp);
void hold_free(struct rxdp_eqp *qp);
/* qpmap.c: the QP's images in the maps the XDP program reads */
void qpmap_una(struct rxdp_eqp *qp);
void qpmap_cc(struct rxdp_eqp *qp);
void qpmap_next(struct rxdp_eqp *qp);
void qpmap_psn_sync(struct rxdp_eqp *qp);
void qpmap_seed_epsn(struct rxdp_eqp *qp);
void qpmap_hold(struct rxdp_eqp *qp, bool hold);
void qpmap_epsn(struct rxdp_eqp *qp);
int qpmap_ctx(struct rxdp_eqp *qp);
int qpmap_create(struct rxdp_eqp *qp);
void qpmap_destroy(struct rxdp_eqp *qp);
void qpmap_mcast(struct rxdp_engine *e, const uint8_t *gid, bool member);

/* --- small helpers of every layer ----------------------------------------- */

/* The MR or MW with this key (whose PD the callers check, IBTA 10.6.3.2) */
static inline struct rxdp_emr *eng_key_lookup(struct rxdp_engine *e,
					      uint32_t key)
{
	struct eng_key *k = eng_key_find(&e->keys, key);

	return k ? (struct rxdp_emr *)((char *)k - offsetof(struct rxdp_emr, k))
		 : NULL;
}

/* The MR with this key: an L_Key never names a window (IBTA 10.6.7) */
static inline struct rxdp_emr *eng_mr_lookup(struct rxdp_engine *e,
					     uint32_t key)
{
	struct rxdp_emr *mr = eng_key_lookup(e, key);

	return mr && mr->k.kind == ENG_KEY_MR ? mr : NULL;
}

/*
 * A window by its key's index part alone (keys.h): its key byte is what
 * its last bind gave it
 */
static inline struct rxdp_emr *eng_mw_by_index(struct rxdp_engine *e,
					       uint32_t key)
{
	struct eng_key *k = eng_key_find_index(&e->keys, key);

	return k && k->kind == ENG_KEY_MW
		       ? (struct rxdp_emr *)((char *)k -
					     offsetof(struct rxdp_emr, k))
		       : NULL;
}

/* The opcode of a send WQE's completion (rxdp_wr_opcode_info[]) */
static inline enum ibv_wc_opcode eng_wc_opcode(enum ibv_wr_opcode op)
{
	const struct rxdp_wr_opcode_info *i = rxdp_wr_info(op);

	return i ? (enum ibv_wc_opcode)i->wc_opcode : IBV_WC_SEND;
}

/* request messages in a row, one way, that make a window deep (engine.c) */
#define ENG_STREAM_RUN 3

/*
 * What the transport counts into the scheduling's record (engine.c reads
 * it): a packet with payload in or out, and a request message's last
 * packet in (rx) or out, in order, which makes a run one way
 */
static inline void eng_sched_data(struct eng_sched *s, bool rx, bool data)
{
	if (rx)
		s->rx_data += data;
	else
		s->tx_data += data;
}

static inline void eng_sched_msg(struct eng_sched *s, bool rx)
{
	uint8_t dir = rx ? 1 : 2;

	if (s->run_dir != dir) {
		s->run_dir = dir;
		s->run_len = 0;
	}
	if (++s->run_len >= ENG_STREAM_RUN)
		s->win_deep = true;
}

/*
 * A request taken by the responder: whether it asked for an answer, and
 * whether it is an RDMA Write (how deep a stream of them comes in)
 */
static inline void eng_sched_req(struct eng_sched *s, bool ackreq, bool write)
{
	s->rx_ackreq = ackreq;
	if (write) {
		s->rx_reqs++;
		s->rx_asks += ackreq;
	}
}

/* Count an event of a QP, on the QP and on its device */
static inline void eng_hwc_add(struct rxdp_eqp *qp, enum rxdp_hwc c, uint64_t n)
{
	qp->hwc[c] += n;
	qp->e->hwc[c] += n;
}

static inline void eng_hwc(struct rxdp_eqp *qp, enum rxdp_hwc c)
{
	eng_hwc_add(qp, c, 1);
}

/*
 * Whether an acknowledgement is sure to come (and bring a pass): a packet
 * with AckReq went out in a flush and is not acknowledged yet. A request
 * queued behind it may wait for that pass (eng_pass); after a go-back,
 * ackreq_end falls back with the packets sent again, so this errs on the
 * side of a flush.
 */
static inline bool eng_ack_due(const struct rxdp_eqp *qp)
{
	return psn_before(qp->comp.una, qp->req.flushed_ackreq);
}

/*
 * Whether a window of a stream (engine.c, streams) with rx packets of
 * payload in and tx out, reqs RDMA Write packets taken of which asks asked
 * for an answer, is a deep stream that only comes in: it coalesces
 */
bool eng_stream_in(uint64_t rx, uint64_t tx, uint64_t reqs, uint64_t asks);
/*
 * Where the progress thread may run (engine.c, placement): the allowed
 * CPUs but those its clients post from (busy), and but those that run its
 * receive work (rx) where that leaves one; all the allowed ones where
 * nothing is left
 */
void eng_place_choose(const cpu_set_t *allowed, const cpu_set_t *busy,
		      const cpu_set_t *rx, cpu_set_t *want);
/*
 * The spin's backoff (engine.c, the progress thread), after a sleep: spun,
 * the thread spun before it; preempted, another thread took the core in
 * that spin; backoff, the sleeps left without a spin; next, the backoff a
 * spin preempted again starts
 */
#define ENG_SPIN_BACKOFF 256
#define ENG_SPIN_BACKOFF_MAX 65536
void eng_spin_backoff(bool fifo, bool spun, bool preempted, uint32_t *backoff,
		      uint32_t *next);

#endif /* RXDP_ENGINE_INT_H */
