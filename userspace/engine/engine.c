// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The core of the engine: the engine itself, its lock and progress (the
 * try-lock run-to-completion scheme and the progress thread), the pass that
 * goes through everything, its scheduling, and the group of engines of a
 * device with the handoff between them. The API's object calls (obj.c,
 * qp.c, cq.c) call into it; it calls the transport (recv.c, req.c, resp.c,
 * comp.c) and the services under it (drain.c, mem.c, inbox.c, ...), never
 * the API: the layers are README.md's and tests/layers.txt's, which `make
 * check` holds the objects to.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#include "common/log.h"
#include "engine/engine_int.h"

/* --- locking and progress ------------------------------------------------ */

/*
 * The engine lock is held by exactly one thread doing transport work. A
 * thread with work (a post, a poll, an fd that became readable) sets
 * e->work and then try-locks; the holder clears e->work before each pass and
 * re-checks it after unlocking, so work flagged during a pass is never left
 * behind (no lost wake-ups).
 */
static void eng_run_locked(struct rxdp_engine *e)
{
	uint64_t until;
	int n, passes = 0;

	/*
	 * bounded, so a caller's post or poll returns under a flood, and the
	 * control thread waits a pass at most (eng_lock)
	 */
	do {
		atomic_store(&e->work, 0);
		n = eng_pass(e);
	} while ((n > 0 || atomic_load(&e->work)) && ++passes < 32 &&
		 !atomic_load(&e->ctl_waiting));
	/* a timer this thread armed may be earlier than the sleeper's */
	until = atomic_load(&e->sleep_until);
	if (until && eng_next_deadline(e) < until) {
		uint64_t one = 1;

		if (write(e->evfd, &one, sizeof(one)) < 0) {
			/* the counter is already non-zero: it will wake */
		}
	}
}

/*
 * The control thread (object management) never waits more than a pass for
 * the lock: it says it waits (ctl_waiting), the data path ends its run of
 * passes there and leaves the lock alone until the control thread has it.
 * Without that, the SCHED_FIFO data-path thread, which releases the lock
 * between passes and takes it again at once, would keep the control thread
 * (and every client waiting for it) out for as long as traffic lasts.
 */
void eng_lock(struct rxdp_engine *e)
{
	atomic_fetch_add(&e->ctl_waiting, 1);
	pthread_mutex_lock(&e->lock);
	if (atomic_fetch_sub(&e->ctl_waiting, 1) == 1)
		syscall(SYS_futex, &e->ctl_waiting, FUTEX_WAKE_PRIVATE,
			INT32_MAX, NULL, NULL, 0);
}

/* Until no control thread waits for the lock (1 ms at most) */
static void eng_let_control_in(struct rxdp_engine *e)
{
	struct timespec ts = { 0, 1000000 };
	int v = atomic_load(&e->ctl_waiting);

	if (v)
		syscall(SYS_futex, &e->ctl_waiting, FUTEX_WAIT_PRIVATE, v, &ts,
			NULL, 0);
}

static void eng_unlock_run(struct rxdp_engine *e)
{
	for (;;) {
		eng_run_locked(e);
		pthread_mutex_unlock(&e->lock);
		if (!atomic_load(&e->work) || atomic_load(&e->ctl_waiting) ||
		    pthread_mutex_trylock(&e->lock))
			return;
	}
}

/*
 * With a progress thread, a slow-path call (create, modify, destroy) leaves
 * the transport work to that thread and only wakes it: the caller (rxdpd's
 * control thread) never runs a data-path pass itself.
 */
void eng_unlock(struct rxdp_engine *e)
{
	uint64_t one = 1;

	if (!e->thread_running) {
		eng_unlock_run(e);
		return;
	}
	atomic_store(&e->work, 1);
	pthread_mutex_unlock(&e->lock);
	if (atomic_load(&e->sleep_until) &&
	    write(e->evfd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: it will wake */
	}
}

void rxdp_engine_progress(struct rxdp_engine *e)
{
	atomic_store(&e->work, 1);
	/* the control thread goes first; its eng_unlock() sees e->work */
	if (atomic_load(&e->ctl_waiting) || pthread_mutex_trylock(&e->lock))
		return; /* the holder sees e->work */
	eng_unlock_run(e);
}

uint64_t eng_next_deadline(struct rxdp_engine *e)
{
	uint64_t d = UINT64_MAX;

	for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next) {
		uint64_t q = comp_deadline(qp);

		if (q < d)
			d = q;
		if (qp->cc_pace_wait && qp->cc_pace_at < d)
			d = qp->cc_pace_at;
	}
	if (e->tx_blocked && e->now + 50000 < d)
		d = e->now + 50000;
	return d;
}

/* Up to budget packets of the QP: responses first, then requests */
static int eng_qp_tx(struct rxdp_eqp *qp, int budget)
{
	int state = atomic_load(&qp->state);
	int sent = 0;

	if (state == IBV_QPS_RTR || state == IBV_QPS_RTS ||
	    state == IBV_QPS_SQD)
		sent += resp_tx(qp, budget);
	if (state == IBV_QPS_RTS && sent < budget)
		sent += req_tx(qp, budget - sent);
	return sent;
}

/*
 * A QP's flush, timers and TX, within budgets: ENG_TX_BUDGET packets a QP,
 * ENG_TX_OWNER an owner in each class, so no owner's QPs take a pass (or
 * the TX buffers) from the rest, and its class's bytes (none left: flush
 * and timers only)
 */
static int eng_qp_pass(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;
	struct rxdp_emem *m = qp->pd->m;
	int work = qpstate_flush(qp) + comp_timers(qp), sent = 0;
	uint64_t bytes = qp->hwc[RXDP_HWC_SENT_BYTES];

	if (e->cls.deficit[qp->tc] > 0) {
		sent = eng_qp_tx(qp, m->tx_left < ENG_TX_BUDGET
					     ? (int)m->tx_left
					     : ENG_TX_BUDGET);
		if (sent)
			e->cls.active |= 1U << qp->tc;
	} else if (qp->req.sq_cur != atomic_load(&qp->sq_prod) ||
		   qp->resp.rjob_tail != qp->resp.rjob_head) {
		e->cls.active |= 1U << qp->tc;
		work++; /* held back by its class's debt: pass again soon */
	}
	m->tx_left -= (uint32_t)sent;
	e->cls.deficit[qp->tc] -= (int64_t)(qp->hwc[RXDP_HWC_SENT_BYTES] -
					    bytes + (uint64_t)sent);
	qpstate_publish(qp);
	return work + sent;
}

/*
 * Service classes (tc.h) in every pass: the strict classes first, in class
 * order, then the weighted ones. Each class sends at most its quantum of
 * bytes a pass (a packet's header counted as a byte): the weighted ones
 * share the quantum by weight among the classes that sent in the last pass
 * (a class alone has all of it), and what a class sent past its quantum (a
 * QP's last packets) comes off its next one: deficit round robin. A strict
 * class is served first, never without end: the rest get their quanta in
 * the same pass. Within a class the owners have ENG_TX_OWNER packets each
 * and the QPs round robin (each pass starts one QP further). With one class
 * (the default) a pass is what it was: every QP in turn.
 */
static void eng_tc_refill(struct rxdp_engine *e)
{
	uint32_t active = e->cls.active ? e->cls.active : ~0U;
	int64_t quantum = e->tcs.quantum ? e->tcs.quantum : ENG_TC_QUANTUM;
	unsigned int wmax = 1;

	e->cls.active = 0;
	if (e->tcs.n == 1) { /* nobody to share with */
		e->cls.deficit[0] = INT64_MAX;
		return;
	}
	for (unsigned int k = 0; k < e->tcs.n; k++)
		if (!e->tcs.tc[k].strict && (active & (1U << k)) &&
		    e->tcs.tc[k].weight > wmax)
			wmax = e->tcs.tc[k].weight;
	for (unsigned int k = 0; k < e->tcs.n; k++) {
		int64_t q = e->tcs.tc[k].strict
				    ? quantum
				    : quantum * e->tcs.tc[k].weight / wmax;

		/* a class that did not use its quantum keeps none of it */
		e->cls.deficit[k] =
			e->cls.deficit[k] < 0 ? e->cls.deficit[k] + q : q;
	}
}

static int eng_qps_pass(struct rxdp_engine *e)
{
	struct rxdp_eqp *start = e->tx_next ? e->tx_next : e->qps;
	int work = 0;

	eng_tc_refill(e);
	/* strict classes (in class order), then the weighted ones */
	for (int strict = 1; strict >= 0; strict--) {
		for (unsigned int k = 0; k < e->tcs.n; k++) {
			if (e->tcs.tc[k].strict != strict)
				continue;
			e->mem0.tx_left = ENG_TX_OWNER;
			for (struct rxdp_emem *m = e->mems; m; m = m->next)
				m->tx_left = ENG_TX_OWNER;
			for (struct rxdp_eqp *qp = start; qp; qp = qp->next)
				if (qp->tc == k)
					work += eng_qp_pass(qp);
			for (struct rxdp_eqp *qp = e->qps; qp && qp != start;
			     qp = qp->next)
				if (qp->tc == k)
					work += eng_qp_pass(qp);
		}
	}
	e->tx_next = start ? start->next : NULL;
	return work;
}

/* --- several engines on one device ------------------------------------ */

struct rxdp_engine_group *rxdp_engine_group_create(int n)
{
	struct rxdp_engine_group *g;

	if (n < 1 || n > RXDP_CTL_MAX_XSKS) {
		errno = EINVAL;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->n = n;
	pthread_rwlock_init(&g->lock, NULL);
	pthread_mutex_init(&g->mc_lock, NULL);
	g->owner = calloc(RXDP_MAX_QP, sizeof(*g->owner));
	if (!g->owner) {
		free(g);
		errno = ENOMEM;
		return NULL;
	}
	return g;
}

void rxdp_engine_group_destroy(struct rxdp_engine_group *g)
{
	if (!g)
		return;
	pthread_rwlock_destroy(&g->lock);
	pthread_mutex_destroy(&g->mc_lock);
	free(g->mc);
	free(g->owner);
	free(g);
}

/* qp is e's from now (or, gone, nobody's): engine lock held */
void eng_group_own(struct rxdp_eqp *qp, bool mine)
{
	struct rxdp_engine_group *g = qp->e->cfg.group;

	uint8_t me = (uint8_t)(qp->e->cfg.group_index + 1);

	if (!g)
		return;
	if (mine)
		atomic_store(&g->owner[qp->qpn & RXDP_QP_INDEX_MASK], me);
	else /* unless a new QP of that index took it meanwhile */
		atomic_compare_exchange_strong(
			&g->owner[qp->qpn & RXDP_QP_INDEX_MASK], &me, 0);
}

/*
 * A frame looped back on the device, handed to engine number owner (two
 * QPs of one device talking, their contexts on two engines): this thread
 * runs that engine's passes itself where its lock is free. Else the
 * holder finds the work (e->work), but one that unlocks without a pass (a
 * reader of a QP's class) would leave a sleeping thread asleep: woken.
 * Woken for every frame instead, the other engine's thread slept and woke
 * on every round trip of such a pair, which then went at the speed of
 * wake-ups (4 KiB ib_write_bw -t 8 looped back across two engines, 2-core
 * VM: 2.4-3.0 Gbit/s; run so, 8.4-10.9; 19-27 on one engine). Nested at most
 * once per engine (a lock this thread holds fails its try); the group's
 * read lock keeps the engine from going meanwhile.
 */
static void eng_handoff_run(struct rxdp_engine *e, int owner,
			    const struct rxdp_frame *f)
{
	struct rxdp_engine_group *g = e->cfg.group;
	struct rxdp_engine *to;

	pthread_rwlock_rdlock(&g->lock);
	to = g->e[owner];
	if (!to) { /* going away with its QPs */
		e->stats.rx_drop_handoff++;
		pthread_rwlock_unlock(&g->lock);
		return;
	}
	/* what waits in its inbox runs, if not this frame */
	eng_inbox_put_to(e, to, f, true);
	atomic_store(&to->work, 1);
	if (!atomic_load(&to->ctl_waiting) &&
	    !pthread_mutex_trylock(&to->lock)) {
		eng_unlock_run(to);
		e->stats.handoff_runs++;
	} else {
		eng_wake(to);
	}
	pthread_rwlock_unlock(&g->lock);
}

/*
 * A packet for a QP of another engine of the group: copied into that
 * engine's inbox. False if it is this engine's to handle (its own QP's,
 * or nobody's: recv_pkt counts it). A multicast datagram is this engine's
 * for its own members, and a copy goes to each other engine with members
 * of its group (mcast.c).
 */
static bool eng_handoff(struct rxdp_engine *e, const struct pkt_info *pi,
			const struct rxdp_frame *f)
{
	struct rxdp_engine_group *g = e->cfg.group;
	uint32_t qpn = bth_qpn(pi->bth);
	int owner;

	if (!g)
		return false;
	if (qpn == ROCE_QPN_MASK) {
		eng_mcast_handoff(e, pi->dip, f);
		return false;
	}
	owner = atomic_load(&g->owner[qpn & RXDP_QP_INDEX_MASK]) - 1;
	if (owner < 0 || owner == e->cfg.group_index || owner >= g->n)
		return false;
	if (pi->loop)
		eng_handoff_run(e, owner, f);
	else
		eng_inbox_put(e, owner, f, false);
	return true;
}

/*
 * One received packet: to the transport, or (from the port, handoff set)
 * to the engine of its QP if another engine of the group has it, which
 * counts it then
 */
static void eng_rx_parsed(struct rxdp_engine *e, const struct rxdp_frame *f,
			  struct pkt_info *pi, int err, bool handoff)
{
	if (!err && handoff && eng_handoff(e, pi, f))
		return;
	e->stats.rx_packets++;
	if (err == -EILSEQ)
		e->stats.rx_drop_icrc++;
	else if (err)
		e->stats.rx_drop_malformed++;
	else
		recv_pkt(e, pi);
}

static void eng_rx_frame(struct rxdp_engine *e, const struct rxdp_frame *f,
			 bool handoff)
{
	struct pkt_info pi;

	eng_rx_parsed(e, f, &pi, pkt_parse(f->data, f->len, &pi), handoff);
}

/* Whether a packet is for a QP of this engine in a strict class */
static bool eng_rx_strict(const struct rxdp_engine *e,
			  const struct pkt_info *pi)
{
	uint32_t qpn = bth_qpn(pi->bth);
	const struct rxdp_eqp *qp = e->qp_tab[qpn & RXDP_QP_INDEX_MASK];

	return qp && qp->qpn == qpn && e->tcs.tc[qp->tc].strict;
}

/*
 * A burst from the port: while QPs of strict classes exist, their packets
 * first (their class is served first, tc.h), then the rest; each QP's in
 * the order they came
 */
_Static_assert(ENG_RX_BATCH <= 64, "a burst's frames fit a 64-bit mask");
static void eng_rx_burst(struct rxdp_engine *e, const struct rxdp_frame *f,
			 int n)
{
	struct pkt_info pi[ENG_RX_BATCH];
	int err[ENG_RX_BATCH];
	uint64_t first = 0;

	if (!e->cls.strict_qps) {
		for (int i = 0; i < n; i++)
			eng_rx_frame(e, &f[i], true);
		return;
	}
	for (int i = 0; i < n; i++) {
		err[i] = pkt_parse(f[i].data, f[i].len, &pi[i]);
		if (!err[i] && eng_rx_strict(e, &pi[i])) {
			first |= 1ULL << i;
			eng_rx_parsed(e, &f[i], &pi[i], 0, true);
		}
	}
	for (int i = 0; i < n; i++)
		if (!(first & (1ULL << i)))
			eng_rx_parsed(e, &f[i], &pi[i], err[i], true);
}

/* The packets other engines handed over, up to max: how many */
static int eng_inbox_pass(struct rxdp_engine *e, int max)
{
	struct eng_inbox *in = &e->inbox;
	uint32_t head, tail;
	int n = 0;

	if (!in->slot)
		return 0;
	head = atomic_load_explicit(&in->head, memory_order_relaxed);
	tail = atomic_load_explicit(&in->tail, memory_order_acquire);
	for (; head != tail && n < max; head++, n++) {
		struct eng_inbox_slot *s = &in->slot[head % ENG_INBOX_SLOTS];
		struct rxdp_frame f = { .data = s->data, .len = s->len };

		eng_rx_frame(e, &f, false);
	}
	atomic_store_explicit(&in->head, head, memory_order_release);
	return n;
}

int eng_pass(struct rxdp_engine *e)
{
	struct rxdp_frame f[ENG_RX_BATCH];
	int n, work = 0;

	/* halted: what comes is the successor's (work is cleared still);
	 * held: a successor restores its objects */
	if (e->halted || e->held)
		return 0;

	e->now = e->cfg.clock ? e->cfg.clock(e->cfg.clock_arg) : eng_now();
	e->tx_blocked = false;
	n = eng_mem_poll(e);
	if (n)
		recv_mem_done(e);
	work += n;
	work += eng_drain(e);
	n = e->cfg.ops->rx_burst(e->cfg.port, f, ENG_RX_BATCH);
	e->rx_crowded = n && e->cfg.ops->rx_fill &&
			e->cfg.ops->rx_fill(e->cfg.port) >= ENG_RX_CROWDED;
	eng_rx_burst(e, f, n);
	if (n)
		e->cfg.ops->rx_release(e->cfg.port, f, n);
	work += n;
	work += eng_inbox_pass(e, ENG_RX_BATCH);
	work += eng_qps_pass(e);
	for (struct rxdp_esrq *srq = e->srqs; srq; srq = srq->next)
		if (srq->rq.sh)
			atomic_store_explicit(&srq->rq.sh->done,
					      atomic_load(&srq->rq.cons),
					      memory_order_release);
	eng_mem_submit(e);
	/*
	 * Copy-mode AF_XDP sends in the sendto() of the flush, a syscall per
	 * flush: while a QP streams, packets queued behind its requests still
	 * unacknowledged wait for a batch (ENG_TX_BATCH) or for the pass the
	 * acknowledgement brings, so posting one WR at a time does not cost a
	 * syscall per packet. A deferred request's QP must still await an
	 * acknowledgement (an ACK may have acked them all this pass).
	 */
	if (e->tx_unflushed && !e->tx_urgent && e->tx_unflushed < ENG_TX_BATCH)
		for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next)
			if (qp->req.next_psn != qp->req.flushed_psn &&
			    !eng_ack_due(qp))
				e->tx_urgent = true;
	if (!e->tx_unflushed || e->tx_urgent ||
	    e->tx_unflushed >= ENG_TX_BATCH) {
		for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next) {
			qp->req.flushed_psn = qp->req.next_psn;
			qp->req.flushed_ackreq = qp->req.ackreq_end;
		}
		e->tx_unflushed = 0;
		e->tx_urgent = false;
		if (e->cfg.ops->tx_flush(e->cfg.port))
			e->tx_blocked = true;
	}
	if (work)
		atomic_fetch_add_explicit(&e->activity, work,
					  memory_order_relaxed);
	return work;
}

static uint64_t eng_activity(struct rxdp_engine *e)
{
	return atomic_load_explicit(&e->activity, memory_order_relaxed);
}

/*
 * The progress thread: serves a passive side and fires timers.
 *
 * It asks the scheduler for a short slice (EEVDF's sched_runtime; 6.6+
 * kernels, no privilege needed): a woken task with a shorter slice than the
 * running one preempts it at once, so a packet for a QP whose application
 * spins on memory (ib_write_lat's target) is handled within microseconds
 * rather than after the spinner's whole slice (milliseconds).
 *
 * Between packets it spins (yielding the core) for spin_ns after the last
 * one, then sleeps (eng_sleep) until a frame, a doorbell or the nearest
 * timer. Spinning only pays when the core is otherwise free: a spinning
 * thread is never woken, so it never preempts, and waits for the slices of
 * the threads it competes with. When the spin was preempted (involuntary
 * context switches: another thread wanted this core), the thread blocks
 * without spinning for the next ENG_SPIN_BACKOFF sleeps (eng_spin_backoff).
 * Without SCHED_FIFO, where the thread spins between any two packets, each
 * time again four times as many, up to ENG_SPIN_BACKOFF_MAX, until a spin
 * keeps its core: on a core it shares with an application that spins (an
 * ib_write_lat on each of the 2-core VM's CPUs), a spin's yield hands that
 * application the rest of its slice (EEVDF moves the yielding thread's
 * deadline past it), milliseconds while the packet waits, and each return
 * to spinning costs that again (2-byte ib_write_lat without FIFO there:
 * 650-1000 us on average with 256 sleeps each time, 70-90 us never
 * spinning again, 70-150 us now). The spin adapts too: it grows when a
 * sleep was cut short by traffic soon after it began, and shrinks when
 * sleeps run long.
 */
#define ENG_SLICE_NS 100000 /* the shortest slice the kernel accepts */

void eng_spin_backoff(bool fifo, bool spun, bool preempted, uint32_t *backoff,
		      uint32_t *next)
{
	if (spun && preempted) {
		*backoff = *next;
		if (!fifo && *next < ENG_SPIN_BACKOFF_MAX)
			*next *= 4;
	} else if (*backoff) {
		(*backoff)--;
	} else if (spun) {
		*next = ENG_SPIN_BACKOFF; /* it kept its core */
	}
}

struct eng_sched_attr { /* the kernel's struct sched_attr, first version */
	uint32_t size;
	uint32_t policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime;
	uint64_t deadline;
	uint64_t period;
};

/* SCHED_OTHER with the short slice; keeps the nice value */
static void eng_sched_other(void)
{
	struct eng_sched_attr a = { .size = sizeof(a),
				    .policy = SCHED_OTHER,
				    .runtime = ENG_SLICE_NS };

	a.nice = getpriority(PRIO_PROCESS, 0);
	/* kernels without custom slices refuse it: then a plain one */
	if (syscall(SYS_sched_setattr, 0, &a, 0)) {
		struct sched_param sp = { 0 };

		pr_debug("engine: no short slice for the progress thread: %s\n",
			 strerror(errno));
		pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
	}
}

static bool eng_sched_fifo(struct rxdp_engine *e)
{
	struct sched_param sp = { .sched_priority = e->cfg.fifo_prio };

	return !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
}

static void eng_thread_sched(struct rxdp_engine *e)
{
	if (e->cfg.cpus &&
	    pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
				   e->cfg.cpus))
		pr_warn("engine: cannot pin the progress thread\n");
	/* timers (retransmission, RNR) to the microsecond, not 50 us late */
	prctl(PR_SET_TIMERSLACK, 1000UL);
	/* a FIFO thread that never sleeps would own its CPU: not in poll mode */
	if (e->cfg.fifo_prio > 0 && !e->cfg.poll) {
		if (eng_sched_fifo(e)) {
			e->sched.fifo = true;
			return;
		}
		pr_warn("engine: no SCHED_FIFO for the progress thread; "
			"a short slice instead\n");
	}
	eng_sched_other();
}

/*
 * Streams. SCHED_FIFO serves a ping-pong best (a woken packet preempts the
 * application spinning on the same CPU) and a stream worst: a FIFO thread
 * may not spin (it would starve the applications on its CPU), so every
 * lull is a sleep and the next packet a wake-up, an inter-processor
 * interrupt the sender's CPU pays for (64 KiB ib_write_bw on the 2-core
 * VM: 5.4 Gbit/s under FIFO, 9-10 spinning). What makes a stream is depth:
 * request messages one after another the same way, several in flight (a
 * ping-pong's, of any size and however slow, alternate: one sent, one
 * received). So over windows of ENG_STREAM_WINDOW_NS the engine notes
 * whether ENG_STREAM_RUN request messages went (or came) in a row, and the
 * packets with payload each way: a deep window with ENG_STREAM_MIN of them
 * one way takes the thread out of FIFO to spin as a SCHED_OTHER thread
 * does; two windows in a row without, or a window that lasted two and held
 * a sleep, bring it back (a run of busy passes alone may last that long: a
 * pass's flush sends its packets in its own sendto() calls, copy mode).
 * (Reads and atomics count: their requests go in a row, whose responses
 * carry the payload.)
 *
 * Packets looped back on the device (a QP talking to another of the same
 * device) count for nothing: no other host's sender pays for a wake-up,
 * the thread itself takes them in its next pass, and a loopback stream
 * that took the thread out of FIFO starved it beside the applications
 * that spin (two hosts on the 2-core VM, another user's 4 KiB loopback
 * ib_write_bw -t 8: 18.5 Gbit/s alone, 0.42 beside a 64 B ping-pong, whose
 * iterations took 2 900 us; under FIFO 23.1 and 21.4 Gbit/s, 219 us).
 *
 * A stream of RDMA Writes that only comes in, deep enough that its
 * requester asks for an answer on fewer than one in ENG_STREAM_DEEP
 * (sends are left out: their receiver refills its receive queue, and 4 KiB
 * ib_send_bw coalesced ran into RNR NAKs at half the rate; rxdp asks on
 * every 64th packet, on the one that fills its window and where its send
 * queue runs dry), is coalesced, as a NIC moderates its interrupts:
 * between passes the thread sleeps on a timer of ENG_RX_COALESCE_NS, not
 * on its sockets and not spinning. Its spin had it runnable all the time,
 * so the scheduler put it beside the sender's client or engine as often as
 * not; woken by its sockets instead, every frame would cost the sender's
 * CPU a wake-up. Not after a request that asked (its requester waits for
 * the answer: the pass that took it answers, and the thread spins or sleeps
 * on its sockets as before), and never as long as a tail-loss probe's
 * floor (ENG_TLP_MIN_NS), so that an answer is never late enough to be
 * probed for. (2-core VM, two rxdpds, 24 runs or more of each tree
 * alternating, with the placement below: 64 B ib_write_bw median 0.51 ->
 * 0.58 Mpps, 64 KiB 1250 -> 1320 MB/s; 4 KiB with 16, 32 or 64 in flight
 * within the noise.)
 */
#define ENG_RX_COALESCE_NS 20000ULL
#define ENG_STREAM_WINDOW_NS 1000000ULL
#define ENG_STREAM_MIN 32
#define ENG_STREAM_DEEP 32
_Static_assert(ENG_RX_COALESCE_NS * 2 <= ENG_TLP_MIN_NS,
	       "a coalesced answer is never late enough to be probed for");

static void eng_stream_set(struct rxdp_engine *e, bool on)
{
	e->sched.stream = on;
	e->sched.stream_misses = 0;
	if (e->cfg.stream_word)
		atomic_store(e->cfg.stream_word, on);
	if (on) {
		e->stats.streams++;
		eng_sched_other();
	} else if (!eng_sched_fifo(e))
		e->sched.fifo = false;
}

bool eng_stream_in(uint64_t rx, uint64_t tx, uint64_t reqs, uint64_t asks)
{
	return tx * 16 < rx && reqs >= ENG_STREAM_MIN &&
	       asks * ENG_STREAM_DEEP < reqs;
}

static void eng_stream_check(struct rxdp_engine *e, uint64_t now)
{
	uint64_t rx, tx, reqs, asks;
	bool idle, stream;

	if (!e->sched.fifo)
		return;
	if (now - e->sched.win_start < ENG_STREAM_WINDOW_NS)
		return;
	/*
	 * a window that ended long ago held a sleep: the stream is over (one
	 * that only lasted long did not: a run of busy passes, each sending
	 * its packets in its own flush, can take longer)
	 */
	idle = now - e->sched.win_start >= 2 * ENG_STREAM_WINDOW_NS &&
	       e->sched.win_slept;
	e->sched.win_slept = false;
	rx = e->sched.rx_data - e->sched.win_rx;
	tx = e->sched.tx_data - e->sched.win_tx;
	reqs = e->sched.rx_reqs - e->sched.win_reqs;
	asks = e->sched.rx_asks - e->sched.win_asks;
	stream = !idle && e->sched.win_deep &&
		 (rx >= ENG_STREAM_MIN || tx >= ENG_STREAM_MIN);
	e->sched.stream_in = stream && eng_stream_in(rx, tx, reqs, asks);
	e->sched.win_deep = false;
	e->sched.win_start = now;
	e->sched.win_rx = e->sched.rx_data;
	e->sched.win_tx = e->sched.tx_data;
	e->sched.win_reqs = e->sched.rx_reqs;
	e->sched.win_asks = e->sched.rx_asks;
	if (stream && !e->sched.stream)
		eng_stream_set(e, true);
	else if (stream)
		e->sched.stream_misses = 0;
	else if (e->sched.stream && (idle || ++e->sched.stream_misses >= 2))
		eng_stream_set(e, false);
}

static bool eng_coalesce(const struct rxdp_engine *e)
{
	return e->sched.stream_in && !e->sched.rx_ackreq;
}

static long eng_preempted(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

/*
 * Placement: the progress thread keeps off the CPUs its clients post from,
 * where another CPU it may use exists. A SCHED_FIFO thread woken by the
 * doorbell of a client on its own CPU preempts that client at once, and the
 * two take turns a WQE at a time (64-byte ib_write_bw on the 2-core VM:
 * 0.05 Mpps); on another CPU the client goes on posting while the thread
 * works (0.21 Mpps). The hints are the clients' (common/hca.h): a wrong one
 * only moves this thread. Looked at every ENG_PLACE_NS, from the posts of
 * the last two periods; the affinity changes only when the answer does.
 *
 * While a stream comes in (coalesced, above) it keeps off the CPUs that
 * run the interface's receive work for its RC QPs too, where a CPU free of
 * both exists (the XDP program notes the CPU in each QP's PSN slot): that
 * work (driver, program, the copy into the UMEM) costs as much per frame
 * as the thread's own, and the two on one CPU halve each other, as
 * AF_XDP's guides warn of the interrupt's CPU. On a veth it is the
 * sender's CPU: two rxdpds on one machine, one streaming to the other, sat
 * on one CPU while the sender's client spun alone on the other. Only then:
 * apart, each wake-up of a ping-pong crosses CPUs, and a shallow stream's
 * receiver beside a spinning client answers late (4 KiB ib_write_bw with
 * 16 in flight: 1000 -> 300-400 MB/s while it applied to every stream).
 */
#define ENG_PLACE_NS 10000000ULL

static void eng_place_init(struct rxdp_engine *e)
{
	if (e->cfg.cpus)
		e->sched.allowed = *e->cfg.cpus;
	else if (sched_getaffinity(0, sizeof(e->sched.allowed),
				   &e->sched.allowed))
		CPU_ZERO(&e->sched.allowed);
	e->sched.placed = e->sched.allowed;
}

void eng_place_choose(const cpu_set_t *allowed, const cpu_set_t *busy,
		      const cpu_set_t *rx, cpu_set_t *want)
{
	cpu_set_t off;

	CPU_AND(&off, busy, allowed);
	CPU_XOR(want, allowed, &off);
	CPU_AND(&off, rx, want);
	if (CPU_COUNT(&off) < CPU_COUNT(want))
		CPU_XOR(want, want, &off);
	if (!CPU_COUNT(want))
		*want = *allowed;
}

/* Engine lock held */
static void eng_place(struct rxdp_engine *e, uint64_t now)
{
	cpu_set_t busy, rx, want;

	if (now - e->sched.place_ns < ENG_PLACE_NS ||
	    !CPU_COUNT(&e->sched.allowed))
		return;
	e->sched.place_ns = now;
	CPU_ZERO(&busy);
	CPU_ZERO(&rx);
	for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next) {
		uint64_t rcvd = qp->hwc[RXDP_HWC_RCVD_PKTS];
		uint32_t cpu =
			__atomic_load_n(&qp->psn->rx_cpu, __ATOMIC_RELAXED);

		if (qp->sh && now - qp->post_ns < 2 * ENG_PLACE_NS &&
		    qp->post_cpu < CPU_SETSIZE)
			CPU_SET(qp->post_cpu, &busy);
		/* the CPU of its receive work, if it received since */
		if (e->sched.stream_in && rcvd != qp->place_rcvd && cpu &&
		    cpu <= CPU_SETSIZE)
			CPU_SET(cpu - 1, &rx);
		qp->place_rcvd = rcvd;
	}
	eng_place_choose(&e->sched.allowed, &busy, &rx, &want);
	if (CPU_EQUAL(&want, &e->sched.placed))
		return;
	if (pthread_setaffinity_np(pthread_self(), sizeof(want), &want))
		pr_debug("engine: cannot move the progress thread\n");
	else
		e->sched.placed = want;
}

/*
 * The thread sleeps in ppoll() on the port's sockets and on one epoll set
 * holding the engine's own eventfd and the doorbells handed out with
 * rxdp_engine_doorbell(), one per owner, so that no owner can drain
 * another's wake-up. The sockets are polled only while the thread sleeps,
 * never kept in the epoll set: a socket in an epoll set calls into it for
 * every frame it receives and every TX frame the kernel frees (its wait
 * queue is never empty), with interrupts off, on the CPU that sends them
 * (64-byte writes on the 2-core VM: a tenth of the sender's time). Eventfds
 * are edge-triggered: every write() queues an event, so they are never
 * read (a system call less per wake-up); their counters grow by one a ring
 * and would take 2^64 rings to fill (an owner that fills its own by hand
 * only stops its own doorbell).
 */
static int eng_epoll_add(struct rxdp_engine *e, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = fd };

	return epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int rxdp_engine_doorbell(struct rxdp_engine *e)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = eng_epoll_add(e, fd);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int rxdp_engine_doorbell_adopt(struct rxdp_engine *e, int fd)
{
	int err = eng_epoll_add(e, fd);

	return err ? err : fd;
}

void rxdp_engine_doorbell_close(struct rxdp_engine *e, int fd)
{
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

/* The port's fds, for the thread's sleep. Engine lock held */
static void eng_watch_port(struct rxdp_engine *e)
{
	e->nport_fds = e->cfg.ops->poll_fds
			       ? e->cfg.ops->poll_fds(e->cfg.port, e->port_fds,
						      RXDP_CTL_MAX_XSKS)
			       : 0;
	if (e->nport_fds < 0)
		e->nport_fds = 0;
}

/*
 * Until a frame, a doorbell or the deadline (tsp NULL: none). pfd[1..n]
 * hold the port's fds, copied under the lock (a socket added later rings
 * evfd, which ends this sleep); pfd[0] becomes the epoll set.
 */
static void eng_sleep(struct rxdp_engine *e, struct pollfd *pfd, int n,
		      const struct timespec *tsp)
{
	struct epoll_event evs[16];

	pfd[0].fd = e->epfd;
	for (int i = 0; i <= n; i++)
		pfd[i].events = POLLIN;
	/*
	 * The edge-triggered events it saw are taken once (or the set stays
	 * readable); more than 16 end the next sleep at once. Never in a
	 * loop: owners ringing without end would hold the thread in it.
	 */
	e->stats.sleeps++;
	if (ppoll(pfd, (nfds_t)n + 1, tsp, NULL) > 0 && pfd[0].revents)
		epoll_wait(e->epfd, evs, 16, 0);
}

int rxdp_engine_port_call(struct rxdp_engine *e,
			  int (*fn)(void *port, void *arg), void *arg)
{
	int ret;

	eng_lock(e);
	ret = fn(e->cfg.port, arg);
	eng_watch_port(e);
	eng_unlock(e);
	return ret;
}

/*
 * Poll mode (cfg.poll): nothing but passes, for a thread with a CPU of its
 * own. No wake-up is ever needed: the sleeping word stays 0, so posters
 * never ring; the port's rings, the owners' rings and the timers are all
 * looked at every pass.
 */
static void eng_poll_loop(struct rxdp_engine *e)
{
	uint64_t act = eng_activity(e);

	while (!atomic_load(&e->stop)) {
		uint64_t a;

		eng_let_control_in(e);
		rxdp_engine_progress(e);
		a = eng_activity(e);
		if (a == act)
			sched_yield();
		act = a;
	}
}

static void *eng_thread(void *arg)
{
	struct rxdp_engine *e = arg;

	pthread_mutex_lock(&e->lock);
	eng_watch_port(e);
	pthread_mutex_unlock(&e->lock);

	/* what top -H and /proc/PID/task/TID/comm show */
	pthread_setname_np(pthread_self(), "rxdp-datapath");
	eng_thread_sched(e);
	if (e->cfg.poll) {
		eng_poll_loop(e);
		return NULL;
	}
	eng_place_init(e);
	while (!atomic_load(&e->stop)) {
		/*
		 * A SCHED_FIFO thread is never preempted by the applications it
		 * serves, so spinning would starve them on a machine with no
		 * core to spare: it does not spin (on the 2-core VM even 5 us
		 * after each burst made ib_send_lat and ib_write_lat slower);
		 * its wake-ups preempt instead. In a stream it is not FIFO.
		 */
		uint64_t spin = (e->sched.fifo && !e->sched.stream) ||
						e->sched.spin_backoff
					? 0
					: e->sched.spin_ns;
		uint64_t now = eng_now(), spin_end = now + spin;
		uint64_t act = eng_activity(e), deadline, slept;
		struct timespec ts, *tsp = NULL;
		struct pollfd pfd[1 + RXDP_CTL_MAX_XSKS];
		int npfd;
		long nivcsw = spin ? eng_preempted() : 0;

		for (;;) {
			uint64_t a;

			eng_let_control_in(e);
			rxdp_engine_progress(e);
			now = eng_now();
			eng_stream_check(e, now);
			a = eng_activity(e);
			if (a != act) {
				act = a;
				spin_end = now + spin;
			}
			if (now >= spin_end || atomic_load(&e->stop) ||
			    eng_coalesce(e))
				break;
			sched_yield();
		}
		eng_spin_backoff(e->sched.fifo, spin,
				 spin && eng_preempted() != nivcsw,
				 &e->sched.spin_backoff,
				 &e->sched.spin_backoff_next);
		if (atomic_load(&e->stop))
			break;
		eng_let_control_in(e);
		pthread_mutex_lock(&e->lock);
		e->now = now;
		deadline = eng_next_deadline(e);
		eng_place(e, now);
		npfd = e->nport_fds;
		/* held (a successor restores its objects): neither what comes
		 * nor a timer is its to look at until rxdp_engine_hold()
		 * rings evfd; a FIFO thread woken by them, its passes doing
		 * nothing, would own its CPU and slow the restore it waits for */
		if (e->held) {
			deadline = UINT64_MAX;
			npfd = 0;
		}
		for (int i = 0; i < npfd; i++)
			pfd[1 + i].fd = e->port_fds[i];
		pthread_mutex_unlock(&e->lock);
		if (deadline <= now)
			continue;
		if (eng_coalesce(e)) {
			/* the sockets wake it no more: its timer does */
			npfd = 0;
			if (deadline > now + ENG_RX_COALESCE_NS)
				deadline = now + ENG_RX_COALESCE_NS;
			e->stats.rx_coalesced++;
		}
		if (deadline != UINT64_MAX) {
			uint64_t d = deadline - now;

			ts.tv_sec = d / 1000000000ULL;
			ts.tv_nsec = d % 1000000000ULL;
			tsp = &ts;
		}
		atomic_store(&e->sleep_until, deadline);
		/* work flagged before sleep_until was visible must not wait */
		if (atomic_load(&e->work)) {
			atomic_store(&e->sleep_until, 0);
			continue;
		}
		if (e->cfg.sleep_word) {
			/*
			 * Posters ring the doorbell only when they see this
			 * word set (after their post, seq_cst both sides): a
			 * post made before it was visible is found by one
			 * more pass.
			 */
			atomic_store(e->cfg.sleep_word, 1);
			rxdp_engine_progress(e);
			if (eng_activity(e) != act) {
				atomic_store(e->cfg.sleep_word, 0);
				atomic_store(&e->sleep_until, 0);
				continue;
			}
		}
		eng_sleep(e, pfd, npfd, tsp);
		if (e->cfg.sleep_word)
			atomic_store(e->cfg.sleep_word, 0);
		atomic_store(&e->sleep_until, 0);
		slept = eng_now() - now;
		e->sched.win_slept = true;
		eng_stream_check(e, eng_now());
		if (slept < 200000 && e->sched.spin_ns < 100000)
			e->sched.spin_ns *= 2;
		else if (slept > 2000000 && e->sched.spin_ns > 5000)
			e->sched.spin_ns /= 2;
	}
	return NULL;
}

struct rxdp_engine *rxdp_engine_create(const struct rxdp_engine_config *cfg)
{
	struct rxdp_engine *e;
	uint32_t cap = 0;
	void *b;

	if (!cfg || !cfg->ops || !cfg->ops->tx_get || !cfg->ops->rx_burst) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->cfg = *cfg;
	e->held = cfg->held;
	if (cfg->cc)
		e->cc = *cfg->cc;
	else
		eng_cc_params_default(&e->cc);
	e->cfg.cc = &e->cc; /* the caller's may go */
	if (cfg->tcs && cfg->tcs->n)
		e->tcs = *cfg->tcs;
	else
		eng_tcs_default(&e->tcs);
	e->cfg.tcs = &e->tcs;
	pthread_mutex_init(&e->lock, NULL);
	if (cfg->group) {
		if (cfg->group_index < 0 || cfg->group_index >= cfg->group->n ||
		    cfg->group->e[cfg->group_index]) {
			free(e);
			errno = EINVAL;
			return NULL;
		}
		pthread_mutex_init(&e->inbox.lock, NULL);
		e->inbox.slot = calloc(ENG_INBOX_SLOTS, sizeof(*e->inbox.slot));
		if (!e->inbox.slot) {
			free(e);
			errno = ENOMEM;
			return NULL;
		}
	}
	e->qp_tab = calloc(RXDP_MAX_QP, sizeof(*e->qp_tab));
	e->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	e->pd0 = calloc(1, sizeof(*e->pd0));
	if (!e->qp_tab || eng_keytab_init(&e->keys) || e->evfd < 0 ||
	    e->epfd < 0 || !e->pd0 || eng_epoll_add(e, e->evfd))
		goto err;
	e->mem0.e = e;
	e->mem0.fd = -1;
	e->pd0->e = e;
	e->pd0->m = &e->mem0;
	e->max_mtu = cfg->max_mtu;
	if (!e->max_mtu) {
		struct pkt_path pp = { .l2_len = PKT_ETH_LEN + PKT_VLAN_LEN,
				       .ipv6 = 1 };

		b = cfg->ops->tx_get(cfg->port, &cap);
		if (b)
			cfg->ops->tx_abort(cfg->port, b);
		e->max_mtu = 4096;
		while (e->max_mtu > 256 &&
		       pkt_max_payload(&pp, cap) < e->max_mtu)
			e->max_mtu >>= 1;
	}
	e->sched.spin_ns = 20000;
	e->sched.spin_backoff_next = ENG_SPIN_BACKOFF;
	if (cfg->progress_thread) {
		if (pthread_create(&e->thread, NULL, eng_thread, e)) {
			errno = EAGAIN;
			goto err;
		}
		e->thread_running = true;
	}
	if (cfg->group) {
		pthread_rwlock_wrlock(&cfg->group->lock);
		cfg->group->e[cfg->group_index] = e;
		pthread_rwlock_unlock(&cfg->group->lock);
	}
	return e;
err:
	free(e->inbox.slot);
	if (e->evfd >= 0)
		close(e->evfd);
	if (e->epfd >= 0)
		close(e->epfd);
	free(e->qp_tab);
	eng_keytab_free(&e->keys);
	free(e->pd0);
	free(e);
	return NULL;
}

/* The progress thread, if it runs, ended */
static void eng_thread_stop(struct rxdp_engine *e)
{
	uint64_t one = 1;

	if (!e->thread_running)
		return;
	atomic_store(&e->stop, true);
	if (write(e->evfd, &one, sizeof(one)) < 0) {
		/* already signalled */
	}
	pthread_join(e->thread, NULL);
	e->thread_running = false;
}

void rxdp_engine_halt(struct rxdp_engine *e)
{
	eng_thread_stop(e);
	pthread_mutex_lock(&e->lock);
	e->halted = true;
	pthread_mutex_unlock(&e->lock);
}

void rxdp_engine_hold(struct rxdp_engine *e, bool held)
{
	uint64_t one = 1;

	pthread_mutex_lock(&e->lock);
	e->held = held;
	pthread_mutex_unlock(&e->lock);
	/* released: the thread looks at everything that came meanwhile */
	if (!held && write(e->evfd, &one, sizeof(one)) < 0) {
		/* already signalled */
	}
}

void rxdp_engine_destroy(struct rxdp_engine *e)
{
	if (!e)
		return;
	if (e->cfg.group) {
		pthread_rwlock_wrlock(&e->cfg.group->lock);
		e->cfg.group->e[e->cfg.group_index] = NULL;
		pthread_rwlock_unlock(&e->cfg.group->lock);
	}
	eng_thread_stop(e);
	close(e->evfd);
	close(e->epfd);
	free(e->qp_tab);
	free(e->mem_faults);
	eng_keytab_free(&e->keys);
	free(e->pd0);
	free(e->inbox.slot);
	free(e);
}

void rxdp_engine_get_stats(struct rxdp_engine *e, struct rxdp_engine_stats *s)
{
	eng_lock(e);
	*s = e->stats;
	pthread_mutex_unlock(&e->lock);
}

void rxdp_engine_hw_counters(struct rxdp_engine *e, struct rxdp_eqp *qp,
			     __u64 *out)
{
	eng_lock(e);
	memcpy(out, qp ? qp->hwc : e->hwc, sizeof(e->hwc));
	pthread_mutex_unlock(&e->lock);
}
