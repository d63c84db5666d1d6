// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The engine's objects (MR, CQ, QP), the verbs-facing calls, and progress:
 * the try-lock run-to-completion scheme and the progress thread.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "common/log.h"
#include "engine/engine_int.h"

uint64_t eng_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

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

	/* bounded, so a caller's post or poll returns under a flood */
	do {
		atomic_store(&e->work, 0);
		n = eng_pass(e);
	} while ((n > 0 || atomic_load(&e->work)) && ++passes < 32);
	/* a timer this thread armed may be earlier than the sleeper's */
	until = atomic_load(&e->sleep_until);
	if (until && eng_next_deadline(e) < until) {
		uint64_t one = 1;

		if (write(e->evfd, &one, sizeof(one)) < 0) {
			/* the counter is already non-zero: it will wake */
		}
	}
}

void eng_lock(struct rxdp_engine *e)
{
	pthread_mutex_lock(&e->lock);
}

void eng_unlock(struct rxdp_engine *e)
{
	for (;;) {
		eng_run_locked(e);
		pthread_mutex_unlock(&e->lock);
		if (!atomic_load(&e->work) || pthread_mutex_trylock(&e->lock))
			return;
	}
}

void rxdp_engine_progress(struct rxdp_engine *e)
{
	atomic_store(&e->work, 1);
	if (pthread_mutex_trylock(&e->lock))
		return; /* the holder sees e->work */
	eng_unlock(e);
}

uint64_t eng_next_deadline(struct rxdp_engine *e)
{
	uint64_t d = UINT64_MAX;

	for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next) {
		uint64_t q = rc_deadline(qp);

		if (q < d)
			d = q;
	}
	if (e->tx_blocked && e->now + 50000 < d)
		d = e->now + 50000;
	return d;
}

int eng_pass(struct rxdp_engine *e)
{
	struct rxdp_frame f[ENG_RX_BATCH];
	struct pkt_info pi;
	int n, work = 0;

	e->now = eng_now();
	e->tx_blocked = false;
	n = e->cfg.ops->rx_burst(e->cfg.port, f, ENG_RX_BATCH);
	for (int i = 0; i < n; i++) {
		int err = pkt_parse(f[i].data, f[i].len, &pi);

		e->stats.rx_packets++;
		if (err == -EILSEQ)
			e->stats.rx_drop_icrc++;
		else if (err)
			e->stats.rx_drop_malformed++;
		else
			rc_rx(e, &pi);
	}
	if (n)
		e->cfg.ops->rx_release(e->cfg.port, f, n);
	work += n;
	for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next) {
		work += rc_flush(qp);
		work += rc_timers(qp);
		work += rc_tx(qp);
	}
	/*
	 * Copy-mode AF_XDP sends in the sendto() of the flush, a syscall per
	 * flush: while a QP streams, packets queued behind its requests still
	 * unacknowledged wait for a batch (ENG_TX_BATCH) or for the pass the
	 * acknowledgement brings, so posting one WR at a time does not cost a
	 * syscall per packet. A deferred request's QP must still have
	 * requests on the wire (an ACK may have acked them all this pass).
	 */
	if (e->tx_unflushed && !e->tx_urgent && e->tx_unflushed < ENG_TX_BATCH)
		for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next)
			if (qp->next_psn != qp->flushed_psn &&
			    qp->una == qp->flushed_psn)
				e->tx_urgent = true;
	if (!e->tx_unflushed || e->tx_urgent ||
	    e->tx_unflushed >= ENG_TX_BATCH) {
		for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next)
			qp->flushed_psn = qp->next_psn;
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
 * one, then blocks in ppoll() on the port's fds, the eventfd and the nearest
 * timer. Spinning only pays when the core is otherwise free: a spinning
 * thread is never woken, so it never preempts, and waits for the slices of
 * the threads it competes with. When the spin was preempted (involuntary
 * context switches: another thread wanted this core), the thread blocks
 * without spinning for the next ENG_SPIN_BACKOFF sleeps. The spin adapts
 * too: it grows when a sleep was cut short by traffic soon after it began,
 * and shrinks when sleeps run long.
 */
#define ENG_SLICE_NS 100000 /* the shortest slice the kernel accepts */
#define ENG_SPIN_BACKOFF 256

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

static void eng_thread_sched(void)
{
	struct eng_sched_attr a = { .size = sizeof(a),
				    .policy = SCHED_OTHER,
				    .runtime = ENG_SLICE_NS };

	/* keeps the nice value; kernels without custom slices refuse it */
	a.nice = getpriority(PRIO_PROCESS, 0);
	if (syscall(SYS_sched_setattr, 0, &a, 0))
		pr_debug("engine: no short slice for the progress thread: %s\n",
			 strerror(errno));
	/* timers (retransmission, RNR) to the microsecond, not 50 us late */
	prctl(PR_SET_TIMERSLACK, 1000UL);
}

static long eng_preempted(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_THREAD, &ru) ? 0 : ru.ru_nivcsw;
}

static void *eng_thread(void *arg)
{
	struct rxdp_engine *e = arg;
	struct pollfd pfd[RXDP_CTL_MAX_XSKS + 1];
	int fds[RXDP_CTL_MAX_XSKS];
	int nfds = 0;

	if (e->cfg.ops->poll_fds)
		nfds = e->cfg.ops->poll_fds(e->cfg.port, fds,
					    RXDP_CTL_MAX_XSKS);
	for (int i = 0; i < nfds; i++)
		pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
	pfd[nfds] = (struct pollfd){ .fd = e->evfd, .events = POLLIN };

	eng_thread_sched();
	while (!atomic_load(&e->stop)) {
		uint64_t spin = e->spin_backoff ? 0 : e->spin_ns;
		uint64_t now = eng_now(), spin_end = now + spin;
		uint64_t act = eng_activity(e), deadline, slept;
		struct timespec ts, *tsp = NULL;
		long nivcsw = spin ? eng_preempted() : 0;

		for (;;) {
			uint64_t a;

			rxdp_engine_progress(e);
			now = eng_now();
			a = eng_activity(e);
			if (a != act) {
				act = a;
				spin_end = now + spin;
			}
			if (now >= spin_end || atomic_load(&e->stop))
				break;
			sched_yield();
		}
		if (spin && eng_preempted() != nivcsw)
			e->spin_backoff = ENG_SPIN_BACKOFF;
		else if (e->spin_backoff)
			e->spin_backoff--;
		if (atomic_load(&e->stop))
			break;
		pthread_mutex_lock(&e->lock);
		e->now = now;
		deadline = eng_next_deadline(e);
		pthread_mutex_unlock(&e->lock);
		if (deadline <= now)
			continue;
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
		if (ppoll(pfd, nfds + 1, tsp, NULL) > 0 &&
		    (pfd[nfds].revents & POLLIN)) {
			uint64_t v;

			if (read(e->evfd, &v, sizeof(v)) < 0) {
				/* nothing to drain */
			}
		}
		atomic_store(&e->sleep_until, 0);
		slept = eng_now() - now;
		if (slept < 200000 && e->spin_ns < 100000)
			e->spin_ns *= 2;
		else if (slept > 2000000 && e->spin_ns > 5000)
			e->spin_ns /= 2;
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
	pthread_mutex_init(&e->lock, NULL);
	e->qp_tab = calloc(RXDP_MAX_QP, sizeof(*e->qp_tab));
	e->mrs = calloc(ENG_MAX_MR, sizeof(*e->mrs));
	e->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (!e->qp_tab || !e->mrs || e->evfd < 0)
		goto err;
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
	e->spin_ns = 20000;
	if (cfg->progress_thread) {
		if (pthread_create(&e->thread, NULL, eng_thread, e)) {
			errno = EAGAIN;
			goto err;
		}
		e->thread_running = true;
	}
	return e;
err:
	if (e->evfd >= 0)
		close(e->evfd);
	free(e->qp_tab);
	free(e->mrs);
	free(e);
	return NULL;
}

void rxdp_engine_destroy(struct rxdp_engine *e)
{
	uint64_t one = 1;

	if (!e)
		return;
	if (e->thread_running) {
		atomic_store(&e->stop, true);
		if (write(e->evfd, &one, sizeof(one)) < 0) {
			/* already signalled */
		}
		pthread_join(e->thread, NULL);
	}
	close(e->evfd);
	free(e->qp_tab);
	free(e->mrs);
	free(e);
}

void rxdp_engine_get_stats(struct rxdp_engine *e, struct rxdp_engine_stats *s)
{
	eng_lock(e);
	*s = e->stats;
	eng_unlock(e);
}

void eng_event(struct rxdp_engine *e, enum ibv_event_type ev, void *user)
{
	if (e->cfg.event_cb)
		e->cfg.event_cb(e->cfg.event_arg, ev, user);
}

/* --- memory regions ------------------------------------------------------ */

#define ACCESS_KNOWN                                        \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

struct rxdp_emr *rxdp_engine_reg_mr(struct rxdp_engine *e, void *addr,
				    size_t len, uint64_t iova,
				    unsigned int access)
{
	struct rxdp_emr *mr;
	uint32_t slot;

	/* IBTA 10.6.3.1 / ibv_reg_mr(3): remote write/atomic need local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	if (!addr && len) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	mr->e = e;
	mr->addr = addr;
	mr->len = len;
	mr->iova = iova;
	mr->access = access & ACCESS_KNOWN;
	eng_lock(e);
	for (slot = 1; slot < ENG_MAX_MR && e->mrs[slot]; slot++)
		;
	if (slot == ENG_MAX_MR) {
		eng_unlock(e);
		free(mr);
		errno = ENOMEM;
		return NULL;
	}
	/* a tag in the low byte so a stale key does not match a new MR */
	e->mr_tag = (e->mr_tag + 1) & 0xff;
	mr->key = slot << 8 | e->mr_tag;
	e->mrs[slot] = mr;
	eng_unlock(e);
	return mr;
}

int rxdp_engine_dereg_mr(struct rxdp_emr *mr)
{
	struct rxdp_engine *e = mr->e;

	eng_lock(e);
	e->mrs[mr->key >> 8] = NULL;
	eng_unlock(e);
	free(mr);
	return 0;
}

uint32_t rxdp_emr_lkey(const struct rxdp_emr *mr)
{
	return mr->key;
}

uint32_t rxdp_emr_rkey(const struct rxdp_emr *mr)
{
	return mr->key;
}

struct rxdp_emr *eng_mr_lookup(struct rxdp_engine *e, uint32_t key)
{
	struct rxdp_emr *mr = e->mrs[(key >> 8) % ENG_MAX_MR];

	return mr && mr->key == key ? mr : NULL;
}

/* --- completion queues ----------------------------------------------------- */

struct rxdp_ecq *rxdp_engine_create_cq(struct rxdp_engine *e, int cqe,
				       int *actual, void *user)
{
	struct rxdp_ecq *cq;
	uint32_t size = 1;

	if (cqe < 1 || cqe > ENG_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	while (size < (uint32_t)cqe)
		size <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	cq->ring = calloc(size, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	cq->e = e;
	cq->user = user;
	cq->size = size;
	pthread_mutex_init(&cq->lock, NULL);
	if (actual)
		*actual = size;
	return cq;
}

int rxdp_engine_destroy_cq(struct rxdp_ecq *cq)
{
	struct rxdp_engine *e = cq->e;

	eng_lock(e);
	if (cq->refs) {
		eng_unlock(e);
		return -EBUSY;
	}
	eng_unlock(e);
	free(cq->ring);
	free(cq);
	return 0;
}

/* Engine lock held: the only producer. */
void eng_cq_add(struct rxdp_ecq *cq, const struct ibv_wc *wc, bool solicited)
{
	uint32_t prod = atomic_load_explicit(&cq->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&cq->cons, memory_order_acquire);
	int armed;

	if (cq->overflow)
		return;
	if (prod - cons >= cq->size) {
		cq->overflow = true;
		cq->e->stats.cq_overflows++;
		pr_warn("engine: CQ overflow, completion of wr_id %llu lost\n",
			(unsigned long long)wc->wr_id);
		eng_event(cq->e, IBV_EVENT_CQ_ERR, cq->user);
		return;
	}
	cq->ring[prod & (cq->size - 1)] = *wc;
	atomic_store_explicit(&cq->prod, prod + 1, memory_order_release);
	armed = cq->armed;
	if (armed &&
	    (armed == 1 || solicited || wc->status != IBV_WC_SUCCESS)) {
		cq->armed = 0;
		if (cq->notify)
			cq->notify(cq->notify_arg);
	}
}

static int cq_take(struct rxdp_ecq *cq, int n, struct ibv_wc *wc)
{
	uint32_t cons, prod;
	int got = 0;

	pthread_mutex_lock(&cq->lock);
	cons = atomic_load_explicit(&cq->cons, memory_order_relaxed);
	prod = atomic_load_explicit(&cq->prod, memory_order_acquire);
	while (got < n && cons != prod)
		wc[got++] = cq->ring[cons++ & (cq->size - 1)];
	atomic_store_explicit(&cq->cons, cons, memory_order_release);
	pthread_mutex_unlock(&cq->lock);
	return got;
}

int rxdp_engine_poll_cq(struct rxdp_ecq *cq, int n, struct ibv_wc *wc)
{
	int got;

	if (n < 0)
		return -EINVAL;
	got = cq_take(cq, n, wc);
	if (got < n) {
		rxdp_engine_progress(cq->e);
		got += cq_take(cq, n - got, wc + got);
	}
	if (!got && cq->overflow)
		return -EOVERFLOW;
	return got;
}

int rxdp_engine_req_notify_cq(struct rxdp_ecq *cq, int solicited_only)
{
	struct rxdp_engine *e = cq->e;

	eng_lock(e);
	cq->armed = solicited_only ? 2 : 1;
	eng_unlock(e);
	return 0;
}

void rxdp_engine_cq_set_notify(struct rxdp_ecq *cq, void (*notify)(void *),
			       void *arg)
{
	struct rxdp_engine *e = cq->e;

	eng_lock(e);
	cq->notify = notify;
	cq->notify_arg = arg;
	eng_unlock(e);
}

/* --- queue pairs --------------------------------------------------------- */

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t s = 1;

	while (s < n)
		s <<= 1;
	return s;
}

static void qp_free(struct rxdp_eqp *qp)
{
	free(qp->sq);
	free(qp->sq_sge);
	free(qp->sq_inl);
	free(qp->sq_sg);
	free(qp->rq);
	free(qp->rq_sge);
	free(qp);
}

struct rxdp_eqp *rxdp_engine_create_qp(struct rxdp_engine *e,
				       struct rxdp_eqp_init *init)
{
	struct ibv_qp_cap *c = &init->cap;
	struct rxdp_eqp *qp;
	uint32_t ssge, rsge;

	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!init->send_cq || !init->recv_cq || !init->qpn ||
	    init->qpn > ROCE_QPN_MASK || c->max_send_wr > ENG_MAX_WR ||
	    c->max_recv_wr > ENG_MAX_WR || c->max_send_sge > ENG_MAX_SGE ||
	    c->max_recv_sge > ENG_MAX_SGE ||
	    c->max_inline_data > ENG_MAX_INLINE) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->e = e;
	qp->qpn = init->qpn;
	qp->type = init->qp_type;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;
	qp->srq = init->srq;
	qp->user = init->user;
	qp->sq_sig_all = !!init->sq_sig_all;
	qp->sq_size = pow2_at_least(c->max_send_wr ? c->max_send_wr : 1);
	qp->rq_size = pow2_at_least(c->max_recv_wr ? c->max_recv_wr : 1);
	ssge = c->max_send_sge ? c->max_send_sge : 1;
	rsge = c->max_recv_sge ? c->max_recv_sge : 1;
	qp->cap.max_send_wr = qp->sq_size;
	qp->cap.max_recv_wr = qp->rq_size;
	qp->cap.max_send_sge = ssge;
	qp->cap.max_recv_sge = rsge;
	qp->cap.max_inline_data = c->max_inline_data;
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->sq_sge = calloc((size_t)qp->sq_size * ssge, sizeof(*qp->sq_sge));
	qp->sq_sg = calloc((size_t)qp->sq_size * ssge, sizeof(*qp->sq_sg));
	qp->sq_inl = malloc((size_t)qp->sq_size * (c->max_inline_data + 1));
	qp->rq = calloc(qp->rq_size, sizeof(*qp->rq));
	qp->rq_sge = calloc((size_t)qp->rq_size * rsge, sizeof(*qp->rq_sge));
	if (!qp->sq || !qp->sq_sge || !qp->sq_sg || !qp->sq_inl || !qp->rq ||
	    !qp->rq_sge) {
		qp_free(qp);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < qp->sq_size; i++) {
		qp->sq[i].sge = qp->sq_sge + (size_t)i * ssge;
		qp->sq[i].sg = qp->sq_sg + (size_t)i * ssge;
	}
	for (uint32_t i = 0; i < qp->rq_size; i++)
		qp->rq[i].sge = qp->rq_sge + (size_t)i * rsge;
	pthread_mutex_init(&qp->sq_lock, NULL);
	pthread_mutex_init(&qp->rq_lock, NULL);
	qp->pkey = ROCE_DEFAULT_PKEY;
	qp->mtu = 1024;
	qp->timeout = 14;
	qp->retry_cnt = 7;
	qp->rnr_retry = 7;
	qp->max_rd_atomic = 1;
	qp->max_dest_rd_atomic = 1;
	atomic_store(&qp->state, IBV_QPS_RESET);

	eng_lock(e);
	if (e->qp_tab[qp->qpn & RXDP_QP_INDEX_MASK]) {
		eng_unlock(e);
		qp_free(qp);
		errno = EEXIST;
		return NULL;
	}
	qp->psn = e->cfg.psn_table
			  ? &e->cfg.psn_table[qp->qpn & RXDP_QP_INDEX_MASK]
			  : &qp->psn_local;
	rc_qp_reset(qp);
	e->qp_tab[qp->qpn & RXDP_QP_INDEX_MASK] = qp;
	qp->next = e->qps;
	e->qps = qp;
	qp->scq->refs++;
	qp->rcq->refs++;
	if (qp->srq)
		qp->srq->refs++;
	eng_unlock(e);
	*c = qp->cap;
	return qp;
}

int rxdp_engine_destroy_qp(struct rxdp_eqp *qp)
{
	struct rxdp_engine *e = qp->e;
	struct rxdp_eqp **pp;

	eng_lock(e);
	for (pp = &e->qps; *pp; pp = &(*pp)->next) {
		if (*pp == qp) {
			*pp = qp->next;
			break;
		}
	}
	e->qp_tab[qp->qpn & RXDP_QP_INDEX_MASK] = NULL;
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	eng_unlock(e);
	qp_free(qp);
	return 0;
}

enum ibv_qp_state rxdp_engine_qp_state(struct rxdp_eqp *qp)
{
	return atomic_load(&qp->state);
}

uint32_t rxdp_engine_qp_num(struct rxdp_eqp *qp)
{
	return qp->qpn;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128U << m : 1024;
}

int rxdp_engine_qp_modify(struct rxdp_eqp *qp, const struct ibv_qp_attr *attr,
			  int mask, const struct rxdp_path *path)
{
	struct rxdp_engine *e = qp->e;
	int state = atomic_load(&qp->state);
	int ns = (mask & IBV_QP_STATE) ? (int)attr->qp_state : state;

	/* connected QPs learn their peer's address on RTR (UD: per WR) */
	if (ns == IBV_QPS_RTR && state != IBV_QPS_RTR && !path &&
	    qp->type != IBV_QPT_UD)
		return -EINVAL;
	eng_lock(e);
	if (ns == IBV_QPS_RESET) {
		atomic_store(&qp->state, IBV_QPS_RESET);
		rc_qp_reset(qp);
		eng_unlock(e);
		return 0;
	}
	if (path)
		pkt_path_init(&qp->path, path);
	if (mask & IBV_QP_PATH_MTU) {
		qp->mtu = mtu_bytes(attr->path_mtu);
		if (qp->mtu > e->max_mtu)
			qp->mtu = e->max_mtu;
	}
	if (mask & IBV_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IBV_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num & ROCE_QPN_MASK;
	if (mask & IBV_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags & ACCESS_KNOWN;
	if (mask & IBV_QP_TIMEOUT)
		qp->timeout = attr->timeout > 31 ? 31 : attr->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt & 7;
	if (mask & IBV_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry & 7;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer & 0x1f;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC) {
		qp->max_rd_atomic = attr->max_rd_atomic;
		if (qp->max_rd_atomic > ENG_MAX_RD_ATOMIC)
			qp->max_rd_atomic = ENG_MAX_RD_ATOMIC;
	}
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC) {
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
		if (qp->max_dest_rd_atomic > ENG_MAX_RD_ATOMIC)
			qp->max_dest_rd_atomic = ENG_MAX_RD_ATOMIC;
	}
	if (mask & IBV_QP_RQ_PSN) {
		qp->epsn = attr->rq_psn & ROCE_PSN_MASK;
		qp->nak_sent = false;
		rc_psn_seed_epsn(qp);
	}
	if (mask & IBV_QP_SQ_PSN) {
		uint32_t psn = attr->sq_psn & ROCE_PSN_MASK;

		qp->send_psn = qp->next_psn = qp->una = qp->tx_hw =
			qp->flushed_psn = psn;
	}
	qp->retry_left = qp->retry_cnt;
	qp->rnr_left = qp->rnr_retry;
	if (ns == IBV_QPS_ERR && state != IBV_QPS_ERR)
		rc_qp_to_err(qp, false);
	else
		atomic_store(&qp->state, ns);
	rc_psn_sync(qp);
	eng_unlock(e);
	return 0;
}

/* --- posting ------------------------------------------------------------- */

static int post_one_send(struct rxdp_eqp *qp, struct ibv_send_wr *wr)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_relaxed);
	uint32_t cons =
		atomic_load_explicit(&qp->sq_cons, memory_order_acquire);
	struct rxdp_eah *ah = NULL;
	struct swqe *w;
	uint64_t len = 0;

	if (qp->type == IBV_QPT_UD) {
		struct rxdp_engine *e = qp->e;

		/* IBTA Table 38: UD has Send (with immediate) only */
		if (wr->opcode != IBV_WR_SEND &&
		    wr->opcode != IBV_WR_SEND_WITH_IMM)
			return EINVAL;
		if (!e->cfg.ah_lookup || !wr->wr.ud.ah ||
		    !(ah = e->cfg.ah_lookup(e->cfg.ah_arg, wr->wr.ud.ah)))
			return EINVAL;
	}
	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		break;
	case IBV_WR_RDMA_READ:
		/* IBTA Table 38: UC has no RDMA Read (nor atomics) */
		if (qp->type != IBV_QPT_RC)
			return EINVAL;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (qp->type != IBV_QPT_RC)
			return EINVAL;
		/* IBTA 9.4.5: 8 bytes at an 8-byte aligned address */
		if ((wr->wr.atomic.remote_addr & 7) || wr->num_sge != 1 ||
		    wr->sg_list[0].length < 8)
			return EINVAL;
		break;
	default:
		return EINVAL;
	}
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge)
		return EINVAL;
	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	if (len > (1U << 31))
		return EINVAL;
	if (wr->send_flags & IBV_SEND_INLINE) {
		if (len > qp->cap.max_inline_data ||
		    wr->opcode == IBV_WR_RDMA_READ ||
		    wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
			return EINVAL;
	}
	if (prod - cons >= qp->sq_size)
		return ENOMEM;
	w = &qp->sq[prod & (qp->sq_size - 1)];
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->imm = wr->imm_data;
	w->length = len;
	w->num_sge = wr->num_sge;
	w->started = w->done = false;
	w->status = IBV_WC_SUCCESS;
	w->inl = NULL;
	if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->raddr = wr->wr.atomic.remote_addr;
		w->rkey = wr->wr.atomic.rkey;
		w->compare_add = wr->wr.atomic.compare_add;
		w->swap = wr->wr.atomic.swap;
		w->length = 8;
	} else if (ah) {
		w->ud_path = ah->path;
		w->ud_qpn = wr->wr.ud.remote_qpn & ROCE_QPN_MASK;
		/* IBTA 10.2.5: a Q_Key with the high bit set means the QP's */
		w->ud_qkey = (wr->wr.ud.remote_qkey & 0x80000000U)
				     ? qp->qkey
				     : wr->wr.ud.remote_qkey;
	} else {
		w->raddr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (wr->send_flags & IBV_SEND_INLINE) {
		uint8_t *d = qp->sq_inl + (size_t)(prod & (qp->sq_size - 1)) *
						  (qp->cap.max_inline_data + 1);
		uint32_t off = 0;

		for (int i = 0; i < wr->num_sge; i++) {
			memcpy(d + off, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w->inl = d;
	} else if (wr->num_sge) {
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
	}
	atomic_store_explicit(&qp->sq_prod, prod + 1, memory_order_release);
	return 0;
}

int rxdp_engine_post_send(struct rxdp_eqp *qp, struct ibv_send_wr *wr,
			  struct ibv_send_wr **bad)
{
	int state = atomic_load(&qp->state);
	int err = 0;

	if (state == IBV_QPS_RESET || state == IBV_QPS_INIT ||
	    state == IBV_QPS_RTR) {
		*bad = wr;
		return EINVAL;
	}
	pthread_mutex_lock(&qp->sq_lock);
	for (; wr; wr = wr->next) {
		err = post_one_send(qp, wr);
		if (err) {
			*bad = wr;
			break;
		}
	}
	pthread_mutex_unlock(&qp->sq_lock);
	rxdp_engine_progress(qp->e);
	return err;
}

int rxdp_engine_post_recv(struct rxdp_eqp *qp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad)
{
	int err = 0;

	/* a QP on an SRQ has no receive queue of its own */
	if (atomic_load(&qp->state) == IBV_QPS_RESET || qp->srq) {
		*bad = wr;
		return EINVAL;
	}
	pthread_mutex_lock(&qp->rq_lock);
	for (; wr; wr = wr->next) {
		uint32_t prod = atomic_load_explicit(&qp->rq_prod,
						     memory_order_relaxed);
		uint32_t cons = atomic_load_explicit(&qp->rq_cons,
						     memory_order_acquire);
		struct rwqe *r;

		if (wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > qp->cap.max_recv_sge) {
			err = EINVAL;
		} else if (prod - cons >= qp->rq_size) {
			err = ENOMEM;
		}
		if (err) {
			*bad = wr;
			break;
		}
		r = &qp->rq[prod & (qp->rq_size - 1)];
		r->wr_id = wr->wr_id;
		r->num_sge = wr->num_sge;
		if (wr->num_sge)
			memcpy(r->sge, wr->sg_list,
			       wr->num_sge * sizeof(*r->sge));
		atomic_store_explicit(&qp->rq_prod, prod + 1,
				      memory_order_release);
	}
	pthread_mutex_unlock(&qp->rq_lock);
	if (atomic_load(&qp->state) == IBV_QPS_ERR)
		rxdp_engine_progress(qp->e);
	else
		rxdp_engine_progress(qp->e); /* an RNR-waiting peer may retry */
	return err;
}

/* --- shared receive queues ------------------------------------------------- */

struct rxdp_esrq *rxdp_engine_create_srq(struct rxdp_engine *e,
					 struct ibv_srq_attr *attr, void *user)
{
	struct rxdp_esrq *srq;
	uint32_t sge;

	if (!attr->max_wr || attr->max_wr > ENG_MAX_WR ||
	    attr->max_sge > ENG_MAX_SGE || attr->srq_limit > attr->max_wr) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	sge = attr->max_sge ? attr->max_sge : 1;
	srq->size = pow2_at_least(attr->max_wr);
	srq->rq = calloc(srq->size, sizeof(*srq->rq));
	srq->sge = calloc((size_t)srq->size * sge, sizeof(*srq->sge));
	if (!srq->rq || !srq->sge) {
		free(srq->rq);
		free(srq->sge);
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < srq->size; i++)
		srq->rq[i].sge = srq->sge + (size_t)i * sge;
	srq->e = e;
	srq->user = user;
	srq->max_wr = srq->size;
	srq->max_sge = sge;
	srq->limit = attr->srq_limit;
	pthread_mutex_init(&srq->lock, NULL);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	return srq;
}

int rxdp_engine_modify_srq(struct rxdp_esrq *srq, struct ibv_srq_attr *attr,
			   int mask)
{
	if (mask & IBV_SRQ_MAX_WR)
		return -EOPNOTSUPP;
	if (mask & IBV_SRQ_LIMIT) {
		if (attr->srq_limit > srq->max_wr)
			return -EINVAL;
		eng_lock(srq->e);
		srq->limit = attr->srq_limit;
		eng_unlock(srq->e);
	}
	return 0;
}

int rxdp_engine_query_srq(struct rxdp_esrq *srq, struct ibv_srq_attr *attr)
{
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	return 0;
}

int rxdp_engine_destroy_srq(struct rxdp_esrq *srq)
{
	struct rxdp_engine *e = srq->e;

	eng_lock(e);
	if (srq->refs) {
		eng_unlock(e);
		return -EBUSY;
	}
	eng_unlock(e);
	free(srq->rq);
	free(srq->sge);
	free(srq);
	return 0;
}

int rxdp_engine_post_srq_recv(struct rxdp_esrq *srq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad)
{
	int err = 0;

	pthread_mutex_lock(&srq->lock);
	for (; wr; wr = wr->next) {
		uint32_t prod =
			atomic_load_explicit(&srq->prod, memory_order_relaxed);
		uint32_t cons =
			atomic_load_explicit(&srq->cons, memory_order_acquire);
		struct rwqe *r;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge)
			err = EINVAL;
		else if (prod - cons >= srq->size)
			err = ENOMEM;
		if (err) {
			*bad = wr;
			break;
		}
		r = &srq->rq[prod & (srq->size - 1)];
		r->wr_id = wr->wr_id;
		r->num_sge = wr->num_sge;
		if (wr->num_sge)
			memcpy(r->sge, wr->sg_list,
			       wr->num_sge * sizeof(*r->sge));
		atomic_store_explicit(&srq->prod, prod + 1,
				      memory_order_release);
	}
	pthread_mutex_unlock(&srq->lock);
	rxdp_engine_progress(srq->e); /* an RNR-waiting peer may retry */
	return err;
}

/* --- address handles ---------------------------------------------------- */

struct rxdp_eah *rxdp_engine_create_ah(struct rxdp_engine *e,
				       const struct rxdp_path *path)
{
	struct rxdp_eah *ah;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	pkt_path_init(&ah->path, path);
	return ah;
}

int rxdp_engine_destroy_ah(struct rxdp_eah *ah)
{
	free(ah);
	return 0;
}
