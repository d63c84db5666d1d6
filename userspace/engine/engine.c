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
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>

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

static void eng_unlock_run(struct rxdp_engine *e)
{
	for (;;) {
		eng_run_locked(e);
		pthread_mutex_unlock(&e->lock);
		if (!atomic_load(&e->work) || pthread_mutex_trylock(&e->lock))
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
	if (pthread_mutex_trylock(&e->lock))
		return; /* the holder sees e->work */
	eng_unlock_run(e);
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

	e->now = e->cfg.clock ? e->cfg.clock(e->cfg.clock_arg) : eng_now();
	e->tx_blocked = false;
	work += eng_mem_poll(e);
	work += eng_drain(e);
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
		eng_qp_publish(qp);
	}
	for (struct rxdp_esrq *srq = e->srqs; srq; srq = srq->next)
		if (srq->sh)
			atomic_store_explicit(&srq->sh->done,
					      atomic_load(&srq->cons),
					      memory_order_release);
	eng_mem_submit(e);
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
 * one, then blocks in epoll on the port's fds, the eventfds and the nearest
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

static void eng_thread_sched(struct rxdp_engine *e)
{
	struct eng_sched_attr a = { .size = sizeof(a),
				    .policy = SCHED_OTHER,
				    .runtime = ENG_SLICE_NS };

	if (e->cfg.cpus &&
	    pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t),
				   e->cfg.cpus))
		pr_warn("engine: cannot pin the progress thread\n");
	if (e->cfg.fifo_prio > 0) {
		struct sched_param sp = { .sched_priority = e->cfg.fifo_prio };

		if (!pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp)) {
			e->fifo = true;
			prctl(PR_SET_TIMERSLACK, 1000UL);
			return;
		}
		pr_warn("engine: no SCHED_FIFO for the progress thread; "
			"a short slice instead\n");
	}
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

/*
 * Placement: the progress thread keeps off the CPUs its clients post from,
 * where another CPU it may use exists. A SCHED_FIFO thread woken by the
 * doorbell of a client on its own CPU preempts that client at once, and the
 * two take turns a WQE at a time (64-byte ib_write_bw on the 2-core VM:
 * 0.05 Mpps); on another CPU the client goes on posting while the thread
 * works (0.21 Mpps). The hints are the clients' (common/hca.h): a wrong one
 * only moves this thread. Looked at every ENG_PLACE_NS, from the posts of
 * the last two periods; the affinity changes only when the answer does.
 */
#define ENG_PLACE_NS 10000000ULL

static void eng_place_init(struct rxdp_engine *e)
{
	if (e->cfg.cpus)
		e->allowed = *e->cfg.cpus;
	else if (sched_getaffinity(0, sizeof(e->allowed), &e->allowed))
		CPU_ZERO(&e->allowed);
	e->placed = e->allowed;
}

/* Engine lock held */
static void eng_place(struct rxdp_engine *e, uint64_t now)
{
	cpu_set_t busy, want;

	if (now - e->place_ns < ENG_PLACE_NS || !CPU_COUNT(&e->allowed))
		return;
	e->place_ns = now;
	CPU_ZERO(&busy);
	for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next)
		if (qp->sh && now - qp->post_ns < 2 * ENG_PLACE_NS &&
		    qp->post_cpu < CPU_SETSIZE)
			CPU_SET(qp->post_cpu, &busy);
	CPU_AND(&busy, &busy, &e->allowed);
	CPU_XOR(&want, &e->allowed, &busy);
	if (!CPU_COUNT(&want))
		want = e->allowed;
	if (CPU_EQUAL(&want, &e->placed))
		return;
	if (pthread_setaffinity_np(pthread_self(), sizeof(want), &want))
		pr_debug("engine: cannot move the progress thread\n");
	else
		e->placed = want;
}

/*
 * The thread blocks on one epoll set: the port's fds (readable: frames
 * arrived), the engine's own eventfd, and the doorbells handed out with
 * rxdp_engine_doorbell(), one per owner, so that no owner can drain
 * another's wake-up. Eventfds are edge-triggered: every write() queues an
 * event, so they are never read (a system call less per wake-up); their
 * counters grow by one a ring and would take 2^64 rings to fill (an owner
 * that fills its own by hand only stops its own doorbell).
 */
static int eng_epoll_add(struct rxdp_engine *e, int fd, bool eventfd)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (eventfd ? EPOLLET : 0),
		.data.fd = fd,
	};

	return epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

int rxdp_engine_doorbell(struct rxdp_engine *e)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = eng_epoll_add(e, fd, true);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

void rxdp_engine_doorbell_close(struct rxdp_engine *e, int fd)
{
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, fd, NULL);
	close(fd);
}

static void *eng_thread(void *arg)
{
	struct rxdp_engine *e = arg;
	int fds[RXDP_CTL_MAX_XSKS];
	int nfds = 0;

	if (e->cfg.ops->poll_fds)
		nfds = e->cfg.ops->poll_fds(e->cfg.port, fds,
					    RXDP_CTL_MAX_XSKS);
	for (int i = 0; i < nfds; i++)
		eng_epoll_add(e, fds[i], false);

	eng_thread_sched(e);
	eng_place_init(e);
	while (!atomic_load(&e->stop)) {
		/*
		 * A SCHED_FIFO thread is never preempted by the applications it
		 * serves, so spinning would starve them on a machine with no
		 * core to spare: it does not spin (on the 2-core VM even 5 us
		 * after each burst made ib_send_lat and ib_write_lat slower);
		 * its wake-ups preempt instead.
		 */
		uint64_t spin = e->fifo ? 0 : e->spin_backoff ? 0 : e->spin_ns;
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
		eng_place(e, now);
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
		{
			struct epoll_event evs[16];

			epoll_pwait2(e->epfd, evs, 16, tsp, NULL);
		}
		if (e->cfg.sleep_word)
			atomic_store(e->cfg.sleep_word, 0);
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
	e->evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	e->epfd = epoll_create1(EPOLL_CLOEXEC);
	e->pd0 = calloc(1, sizeof(*e->pd0));
	if (!e->qp_tab || eng_keytab_init(&e->keys) || e->evfd < 0 ||
	    e->epfd < 0 || !e->pd0 || eng_epoll_add(e, e->evfd, true))
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
	if (e->epfd >= 0)
		close(e->epfd);
	free(e->qp_tab);
	eng_keytab_free(&e->keys);
	free(e->pd0);
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
	close(e->epfd);
	free(e->qp_tab);
	eng_keytab_free(&e->keys);
	free(e->pd0);
	free(e);
}

void rxdp_engine_get_stats(struct rxdp_engine *e, struct rxdp_engine_stats *s)
{
	pthread_mutex_lock(&e->lock);
	*s = e->stats;
	pthread_mutex_unlock(&e->lock);
}

void rxdp_engine_hw_counters(struct rxdp_engine *e, struct rxdp_eqp *qp,
			     __u64 *out)
{
	pthread_mutex_lock(&e->lock);
	memcpy(out, qp ? qp->hwc : e->hwc, sizeof(e->hwc));
	pthread_mutex_unlock(&e->lock);
}

void eng_event(struct rxdp_engine *e, enum ibv_event_type ev, void *user)
{
	if (e->cfg.event_cb)
		e->cfg.event_cb(e->cfg.event_arg, ev, user);
}

/* --- protection domains --------------------------------------------------- */

static struct rxdp_epd *pd_or_default(struct rxdp_engine *e,
				      struct rxdp_epd *pd)
{
	return pd ? pd : e->pd0;
}

struct rxdp_epd *rxdp_engine_alloc_pd(struct rxdp_engine *e,
				      struct rxdp_emem *m)
{
	struct rxdp_epd *pd;

	if (m && m->e != e) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->e = e;
	pd->m = m ? m : &e->mem0;
	return pd;
}

int rxdp_engine_dealloc_pd(struct rxdp_epd *pd)
{
	struct rxdp_engine *e = pd->e;

	eng_lock(e);
	if (pd->refs) {
		eng_unlock(e);
		return -EBUSY;
	}
	eng_unlock(e);
	free(pd);
	return 0;
}

/* --- memory regions ------------------------------------------------------ */

#define ACCESS_KNOWN                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |  \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_MW_BIND)

/*
 * A new region or window (k, allocated) into the key table (keys.h): a
 * new index and a random key byte make its key. k, or NULL and errno
 * (ENOMEM: the table is full) with k freed.
 */
static struct rxdp_emr *key_add(struct rxdp_emr *k, enum eng_key_kind kind)
{
	struct rxdp_engine *e = k->e;
	int err;

	eng_lock(e);
	err = eng_key_add(&e->keys, &k->k, (uint8_t)kind, -1);
	if (err) {
		eng_unlock(e);
		free(k);
		errno = err == -ENOSPC ? ENOMEM : -err;
		return NULL;
	}
	k->pd->refs++;
	eng_unlock(e);
	return k;
}

struct rxdp_emr *rxdp_engine_reg_mr_pd(struct rxdp_epd *pd, uint64_t addr,
				       size_t len, uint64_t iova,
				       unsigned int access)
{
	struct rxdp_engine *e = pd->e;
	struct rxdp_emr *mr;

	/* IBTA 10.6.3.1 / ibv_reg_mr(3): remote write/atomic need local write */
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE)) {
		errno = EINVAL;
		return NULL;
	}
	if ((!addr && len) || addr + len < addr || iova + len < iova) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return NULL;
	mr->e = e;
	mr->pd = pd;
	mr->addr = addr;
	mr->len = len;
	mr->iova = iova;
	mr->access = access & ACCESS_KNOWN;
	return key_add(mr, ENG_KEY_MR);
}

struct rxdp_emr *rxdp_engine_alloc_mw(struct rxdp_engine *e,
				      struct rxdp_epd *pd,
				      enum ibv_mw_type type)
{
	struct rxdp_emr *mw;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	mw->e = e;
	mw->pd = pd_or_default(e, pd);
	mw->mw_type = (uint8_t)type;
	return key_add(mw, ENG_KEY_MW);
}

struct rxdp_emr *rxdp_engine_reg_mr(struct rxdp_engine *e, void *addr,
				    size_t len, uint64_t iova,
				    unsigned int access)
{
	return rxdp_engine_reg_mr_pd(e->pd0, (uintptr_t)addr, len, iova,
				     access);
}

int rxdp_engine_rereg_mr(struct rxdp_emr *mr, struct rxdp_epd *pd,
			 uint64_t addr, size_t len, uint64_t iova,
			 unsigned int access)
{
	struct rxdp_engine *e = mr->e;
	bool new_key;
	int err = 0;

	if (!pd)
		pd = e->pd0;
	access &= ACCESS_KNOWN;
	if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IBV_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if ((!addr && len) || addr + len < addr || iova + len < iova ||
	    pd->e != e || mr->mw_type)
		return -EINVAL;
	eng_lock(e);
	/* the windows bound to it hold its translation */
	if (mr->nmw) {
		eng_unlock(e);
		return -EBUSY;
	}
	/*
	 * A key someone was given must not reach other memory, another PD's
	 * QPs or a right taken away: then the MR gets a new key and the old
	 * one matches nothing. A change that only adds rights keeps it, as
	 * mlx5 and Soft-RoCE do and rdma-core's tests expect
	 * (test_mr_rereg_access writes through the R_Key it had before).
	 */
	new_key = addr != mr->addr || len != mr->len || iova != mr->iova ||
		  pd != mr->pd || (mr->access & ~access);
	if (new_key)
		err = eng_key_renew(&e->keys, &mr->k);
	if (!err) {
		mr->pd->refs--;
		mr->pd = pd;
		pd->refs++;
		mr->addr = addr;
		mr->len = len;
		mr->iova = iova;
		mr->access = access;
	}
	eng_unlock(e);
	return err;
}

/* A region with windows bound to it stays (-EBUSY); a window is unbound */
int rxdp_engine_dereg_mr(struct rxdp_emr *mr)
{
	struct rxdp_engine *e = mr->e;

	eng_lock(e);
	if (mr->nmw) {
		eng_unlock(e);
		return -EBUSY;
	}
	if (mr->mw_type)
		mw_unbind(mr);
	eng_key_del(&e->keys, &mr->k);
	mr->pd->refs--;
	eng_unlock(e);
	free(mr);
	return 0;
}

int rxdp_engine_dealloc_mw(struct rxdp_emr *mw)
{
	return mw->mw_type ? rxdp_engine_dereg_mr(mw) : -EINVAL;
}

uint32_t rxdp_emr_lkey(const struct rxdp_emr *mr)
{
	return mr->k.key;
}

uint32_t rxdp_emr_rkey(const struct rxdp_emr *mr)
{
	return mr->k.key;
}

/* The MR or MW with this key (whose PD the callers check, IBTA 10.6.3.2) */
struct rxdp_emr *eng_key_lookup(struct rxdp_engine *e, uint32_t key)
{
	struct eng_key *k = eng_key_find(&e->keys, key);

	return k ? (struct rxdp_emr *)((char *)k - offsetof(struct rxdp_emr, k))
		 : NULL;
}

/* The MR with this key: an L_Key never names a window (IBTA 10.6.7) */
struct rxdp_emr *eng_mr_lookup(struct rxdp_engine *e, uint32_t key)
{
	struct rxdp_emr *mr = eng_key_lookup(e, key);

	return mr && mr->k.kind == ENG_KEY_MR ? mr : NULL;
}

/*
 * A window by its key's index part alone (keys.h): its key byte is what
 * its last bind gave it
 */
struct rxdp_emr *eng_mw_by_index(struct rxdp_engine *e, uint32_t key)
{
	struct eng_key *k = eng_key_find_index(&e->keys, key);

	return k && k->kind == ENG_KEY_MW
		       ? (struct rxdp_emr *)((char *)k -
					     offsetof(struct rxdp_emr, k))
		       : NULL;
}

/* --- completion queues ----------------------------------------------------- */

static struct rxdp_ecq *cq_new(struct rxdp_engine *e, struct rxdp_hca_cq *sh,
			       uint32_t size, bool own, void *user)
{
	struct rxdp_ecq *cq = calloc(1, sizeof(*cq));

	if (!cq)
		return NULL;
	cq->e = e;
	cq->user = user;
	cq->sh = sh;
	cq->own = own;
	cq->size = size;
	pthread_mutex_init(&cq->lock, NULL);
	return cq;
}

struct rxdp_ecq *rxdp_engine_create_cq(struct rxdp_engine *e, int cqe,
				       int *actual, void *user)
{
	struct rxdp_hca_cq *sh;
	struct rxdp_ecq *cq;
	uint32_t size;

	if (cqe < 1 || cqe > ENG_MAX_CQE) {
		errno = EINVAL;
		return NULL;
	}
	size = rxdp_hca_pow2((uint32_t)cqe);
	sh = calloc(1, rxdp_hca_cq_bytes(size));
	if (!sh) {
		errno = ENOMEM;
		return NULL;
	}
	cq = cq_new(e, sh, size, true, user);
	if (!cq) {
		free(sh);
		errno = ENOMEM;
		return NULL;
	}
	if (actual)
		*actual = size;
	return cq;
}

struct rxdp_ecq *rxdp_engine_create_cq_shared(struct rxdp_engine *e,
					      struct rxdp_hca_cq *sh,
					      uint32_t size, void *user)
{
	if (!sh || !size || size > ENG_MAX_CQE || (size & (size - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return cq_new(e, sh, size, false, user);
}

int rxdp_engine_resize_cq_shared(struct rxdp_ecq *cq, struct rxdp_hca_cq *sh,
				 uint32_t size)
{
	struct rxdp_engine *e = cq->e;
	struct rxdp_hca_cq *old = cq->sh;
	uint32_t prod, cons;

	if (!size || size > ENG_MAX_CQE || (size & (size - 1)) || cq->own)
		return -EINVAL;
	eng_lock(e);
	/*
	 * What was posted before the resize completes before it counts (as
	 * an HCA has it done by then): rare enough for this thread to do a
	 * pass of the data path itself.
	 */
	eng_pass(e);
	prod = atomic_load(&old->prod);
	cons = atomic_load(&old->cons);
	if (prod - cons > size) {
		eng_unlock(e);
		return -EINVAL; /* more completions wait than it would hold */
	}
	for (uint32_t i = cons; i != prod; i++) {
		sh->ring[i & (size - 1)] = old->ring[i & (cq->size - 1)];
		rxdp_hca_cq_data(sh, size)[i & (size - 1)] =
			rxdp_hca_cq_data(old, cq->size)[i & (cq->size - 1)];
		if (cq->ts)
			rxdp_hca_cq_ts(sh, size)[i & (size - 1)] =
				rxdp_hca_cq_ts(old,
					       cq->size)[i & (cq->size - 1)];
	}
	atomic_store(&sh->cons, cons);
	atomic_store(&sh->armed, atomic_load(&old->armed));
	atomic_store(&sh->overflow, atomic_load(&old->overflow));
	atomic_store(&sh->prod, prod);
	cq->sh = sh;
	cq->size = size;
	eng_unlock(e);
	return 0;
}

void rxdp_engine_cq_timestamps(struct rxdp_ecq *cq)
{
	eng_lock(cq->e);
	cq->ts = !cq->own;
	eng_unlock(cq->e);
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
	if (cq->own)
		free(cq->sh);
	free(cq);
	return 0;
}

/*
 * Engine lock held: the only producer. The consumer's index comes from
 * memory the owner writes: a wrong one can only overflow its own CQ.
 */
void eng_cq_add(struct rxdp_ecq *cq, const struct ibv_wc *wc, bool solicited)
{
	eng_cq_add_data(cq, wc, solicited, NULL);
}

/* d: the bytes of a small receive, for the owner to scatter (shared CQs) */
void eng_cq_add_data(struct rxdp_ecq *cq, const struct ibv_wc *wc,
		     bool solicited, const struct rxdp_hca_cqd *d)
{
	struct rxdp_hca_cq *sh = cq->sh;
	uint32_t prod = atomic_load_explicit(&sh->prod, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(&sh->cons, memory_order_acquire);
	uint32_t armed;

	if (cq->overflow)
		return;
	if (prod - cons >= cq->size) {
		cq->overflow = true;
		atomic_store_explicit(&sh->overflow, 1, memory_order_release);
		cq->e->stats.cq_overflows++;
		pr_warn("engine: CQ overflow, completion of wr_id %llu lost\n",
			(unsigned long long)wc->wr_id);
		eng_event(cq->e, IBV_EVENT_CQ_ERR, cq->user);
		return;
	}
	sh->ring[prod & (cq->size - 1)] = *wc;
	if (d) {
		rxdp_hca_cq_data(sh, cq->size)[prod & (cq->size - 1)] = *d;
		sh->ring[prod & (cq->size - 1)].vendor_err =
			RXDP_HCA_WC_SCATTER;
	}
	if (cq->ts)
		rxdp_hca_cq_ts(sh, cq->size)[prod & (cq->size - 1)] = eng_now();
	atomic_store_explicit(&sh->prod, prod + 1, memory_order_release);
	/*
	 * The owner arms (a store of armed), then polls (a load of prod);
	 * here the store of prod comes before the load of armed. Without a
	 * full fence on both sides each can miss the other's store (x86
	 * reorders a store before a later load): the completion is not seen
	 * and no event is sent, and a program blocked in ibv_get_cq_event
	 * waits forever. The owner's arming store is seq_cst.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	/* IBTA 11.4.2.2: arming is one-shot; an error completion always fires */
	armed = atomic_load_explicit(&sh->armed, memory_order_acquire);
	if (armed &&
	    (armed != 2 || solicited || wc->status != IBV_WC_SUCCESS) &&
	    atomic_exchange(&sh->armed, 0) && cq->notify)
		cq->notify(cq->notify_arg);
}

static int cq_take(struct rxdp_ecq *cq, int n, struct ibv_wc *wc)
{
	struct rxdp_hca_cq *sh = cq->sh;
	uint32_t cons, prod;
	int got = 0;

	pthread_mutex_lock(&cq->lock);
	cons = atomic_load_explicit(&sh->cons, memory_order_relaxed);
	prod = atomic_load_explicit(&sh->prod, memory_order_acquire);
	while (got < n && cons != prod)
		wc[got++] = sh->ring[cons++ & (cq->size - 1)];
	atomic_store_explicit(&sh->cons, cons, memory_order_release);
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
	atomic_store(&cq->sh->armed, solicited_only ? 2 : 1);
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

/* Bytes per SQ slot of inline data: inline WRs or gathered small sends */
static size_t eng_inl_stride(const struct rxdp_eqp *qp)
{
	uint32_t n = qp->cap.max_inline_data;

	return (n > RXDP_HCA_GATHER_MAX ? n : RXDP_HCA_GATHER_MAX) + 1;
}

static void qp_free(struct rxdp_eqp *qp)
{
	free(qp->rcqe);
	free(qp->sq);
	free(qp->sq_sge);
	free(qp->sq_inl);
	free(qp->sq_sg);
	free(qp->rq);
	free(qp->rq_sge);
	free(qp);
}

int rxdp_engine_qp_caps(struct ibv_qp_cap *c)
{
	if (c->max_send_wr > ENG_MAX_WR || c->max_recv_wr > ENG_MAX_WR ||
	    c->max_send_sge > ENG_MAX_SGE || c->max_recv_sge > ENG_MAX_SGE ||
	    c->max_inline_data > ENG_MAX_INLINE)
		return -EINVAL;
	c->max_send_wr = rxdp_hca_pow2(c->max_send_wr ? c->max_send_wr : 1);
	c->max_recv_wr = rxdp_hca_pow2(c->max_recv_wr ? c->max_recv_wr : 1);
	if (!c->max_send_sge)
		c->max_send_sge = 1;
	if (!c->max_recv_sge)
		c->max_recv_sge = 1;
	return 0;
}

struct rxdp_eqp *rxdp_engine_create_qp(struct rxdp_engine *e,
				       struct rxdp_eqp_init *init)
{
	struct ibv_qp_cap *c = &init->cap;
	struct rxdp_epd *pd = pd_or_default(e, init->pd);
	struct rxdp_eqp *qp;
	uint32_t ssge, rsge;

	if (init->qp_type != IBV_QPT_RC && init->qp_type != IBV_QPT_UC &&
	    init->qp_type != IBV_QPT_UD) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!init->send_cq || !init->recv_cq || !init->qpn ||
	    init->qpn > ROCE_QPN_MASK || rxdp_engine_qp_caps(c) ||
	    (init->sh && (!init->sh_sq || !init->sh_rq)) ||
	    (init->srq && init->srq->pd != pd)) {
		errno = EINVAL;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->e = e;
	qp->pd = pd;
	qp->sh = init->sh;
	qp->sh_sq = init->sh_sq;
	qp->sh_rq = init->sh_rq;
	qp->qpn = init->qpn;
	qp->type = init->qp_type;
	qp->scq = init->send_cq;
	qp->rcq = init->recv_cq;
	qp->srq = init->srq;
	qp->user = init->user;
	qp->sq_sig_all = !!init->sq_sig_all;
	qp->sq_size = c->max_send_wr;
	qp->rq_size = c->max_recv_wr;
	ssge = c->max_send_sge;
	rsge = c->max_recv_sge;
	qp->cap = *c;
	qp->sq = calloc(qp->sq_size, sizeof(*qp->sq));
	qp->sq_sge = calloc((size_t)qp->sq_size * ssge, sizeof(*qp->sq_sge));
	qp->sq_sg = calloc((size_t)qp->sq_size * ssge, sizeof(*qp->sq_sg));
	qp->sq_inl = malloc((size_t)qp->sq_size * eng_inl_stride(qp));
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
	qp->mem_req = (struct pkt_mem){ eng_stage_read, &qp->stage_req };
	qp->mem_resp = (struct pkt_mem){ eng_stage_read, &qp->stage_resp };
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
	pd->refs++;
	eng_unlock(e);
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
	mw_qp_gone(qp);
	eng_mem_qp_gone(qp);
	qp->scq->refs--;
	qp->rcq->refs--;
	if (qp->srq)
		qp->srq->refs--;
	qp->pd->refs--;
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

/* A shared QP's queues start over on RESET (the owner resets its prod) */
static void qp_share_reset(struct rxdp_eqp *qp)
{
	if (!qp->sh)
		return;
	atomic_store(&qp->sh->sq.cons, 0);
	atomic_store(&qp->sh->sq.done, 0);
	atomic_store(&qp->sh->rq.cons, 0);
	atomic_store(&qp->sh->rq.done, 0);
	atomic_store(&qp->sh->sq.prod, 0);
	atomic_store(&qp->sh->rq.prod, 0);
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
		eng_qp_set_state(qp, IBV_QPS_RESET);
		rc_qp_reset(qp);
		qp_share_reset(qp);
		eng_qp_publish(qp);
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
		eng_qp_set_state(qp, ns);
	rc_psn_sync(qp);
	eng_qp_publish(qp);
	eng_unlock(e);
	return 0;
}

/* --- posting ------------------------------------------------------------- */

/*
 * gathered: the bytes wr's SGEs name, copied already (a shared QP's small
 * send, common/hca.h); the SGEs are still checked when the WQE starts.
 */
static int post_one_send(struct rxdp_eqp *qp, struct ibv_send_wr *wr,
			 const uint8_t *gathered)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_relaxed);
	uint32_t cons =
		atomic_load_explicit(&qp->sq_cons, memory_order_acquire);
	struct rxdp_hca_qp_caps caps = {
		.qp_type = qp->type,
		.max_send_sge = qp->cap.max_send_sge,
		.max_inline = qp->cap.max_inline_data,
	};
	struct rxdp_eah *ah = NULL;
	int num_sge = wr->num_sge;
	struct swqe *w;
	uint64_t len = 0;
	int err;

	if (wr->num_sge < 0)
		return EINVAL;
	if (wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV)
		num_sge = 0; /* no payload: SGEs are not looked at */
	for (int i = 0; i < num_sge; i++)
		len += wr->sg_list[i].length;
	err = rxdp_hca_send_check(&caps, wr->opcode, wr->send_flags,
				  (uint32_t)num_sge, len,
				  wr->wr.atomic.remote_addr,
				  num_sge ? wr->sg_list[0].length : 0);
	if (err)
		return err;
	if (qp->type == IBV_QPT_UD) {
		struct rxdp_engine *e = qp->e;

		if (!e->cfg.ah_lookup || !wr->wr.ud.ah ||
		    !(ah = e->cfg.ah_lookup(e->cfg.ah_arg, wr->wr.ud.ah)) ||
		    ah->pd != qp->pd)
			return EINVAL;
	}
	if (prod - cons >= qp->sq_size)
		return ENOMEM;
	w = &qp->sq[prod & (qp->sq_size - 1)];
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags & ~RXDP_HCA_SEND_GATHERED;
	w->imm = wr->imm_data;
	w->length = len;
	w->num_sge = num_sge;
	w->started = w->done = false;
	w->status = IBV_WC_SUCCESS;
	w->mem_seq = 0;
	w->inl = NULL;
	w->gathered = false;
	/* the union of imm_data: for the invalidations, the key */
	w->inv_rkey = wr->invalidate_rkey;
	if (wr->opcode == IBV_WR_BIND_MW) {
		const struct ibv_mw_bind_info *b = &wr->bind_mw.bind_info;

		w->mw_key = wr->bind_mw.mw ? wr->bind_mw.mw->rkey : 0;
		w->new_key = wr->bind_mw.rkey;
		w->mr_key = b->mr ? b->mr->lkey : 0;
		w->bind_addr = b->addr;
		w->bind_len = b->mr ? b->length : 0;
		w->bind_access = b->mw_access_flags;
	} else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
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
						  eng_inl_stride(qp);
		uint32_t off = 0;

		/* inline data is in this process (the caller's, or a copy) */
		for (int i = 0; i < num_sge; i++) {
			memcpy(d + off, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			off += wr->sg_list[i].length;
		}
		w->inl = d;
	} else if (num_sge) {
		memcpy(w->sge, wr->sg_list, num_sge * sizeof(*w->sge));
		if (gathered) {
			w->inl = qp->sq_inl +
				 (size_t)(prod & (qp->sq_size - 1)) *
					 eng_inl_stride(qp);
			memcpy(w->inl, gathered, len);
			w->gathered = true;
		}
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
		err = post_one_send(qp, wr, NULL);
		if (err) {
			*bad = wr;
			break;
		}
	}
	pthread_mutex_unlock(&qp->sq_lock);
	rxdp_engine_progress(qp->e);
	return err;
}

/* One receive WQE into a ring; EINVAL / ENOMEM as libibverbs */
static int post_one_recv(_Atomic uint32_t *prodp, _Atomic uint32_t *consp,
			 struct rwqe *ring, uint32_t size, uint32_t max_sge,
			 const struct ibv_recv_wr *wr)
{
	uint32_t prod = atomic_load_explicit(prodp, memory_order_relaxed);
	uint32_t cons = atomic_load_explicit(consp, memory_order_acquire);
	struct rwqe *r;

	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge)
		return EINVAL;
	if (prod - cons >= size)
		return ENOMEM;
	r = &ring[prod & (size - 1)];
	r->wr_id = wr->wr_id;
	r->num_sge = wr->num_sge;
	if (wr->num_sge)
		memcpy(r->sge, wr->sg_list, wr->num_sge * sizeof(*r->sge));
	atomic_store_explicit(prodp, prod + 1, memory_order_release);
	return 0;
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
		err = post_one_recv(&qp->rq_prod, &qp->rq_cons, qp->rq,
				    qp->rq_size, qp->cap.max_recv_sge, wr);
		if (err) {
			*bad = wr;
			break;
		}
	}
	pthread_mutex_unlock(&qp->rq_lock);
	rxdp_engine_progress(qp->e); /* an ERR QP flushes it */
	return err;
}

/* --- shared queues: what owners posted in memory they share -------------- */

/*
 * A send WQE that broke the rules (the verbs library checks them first, so
 * only a broken or hostile owner gets here): it completes with
 * IBV_WC_LOC_QP_OP_ERR in its turn, which takes the QP to ERR.
 */
static void post_bad_send(struct rxdp_eqp *qp, uint64_t wr_id)
{
	uint32_t prod =
		atomic_load_explicit(&qp->sq_prod, memory_order_relaxed);
	struct swqe *w = &qp->sq[prod & (qp->sq_size - 1)];

	memset(w, 0, offsetof(struct swqe, sge));
	w->wr_id = wr_id;
	w->started = w->done = true;
	w->status = IBV_WC_LOC_QP_OP_ERR;
	qp->e->stats.bad_wqes++;
	atomic_store_explicit(&qp->sq_prod, prod + 1, memory_order_release);
}

/* Copy one shared send WQE out (then check it) and post it */
static void drain_send(struct rxdp_eqp *qp, const struct rxdp_hca_swqe *in)
{
	struct ibv_sge sge[ENG_MAX_SGE];
	uint8_t inl[ENG_MAX_INLINE];
	const uint8_t *gathered = NULL;
	struct rxdp_hca_swqe h;
	struct ibv_send_wr wr = { 0 };
	struct ibv_mw mw = { 0 };
	struct ibv_mr mr = { 0 };

	memcpy(&h, in, sizeof(h));
	wr.wr_id = h.wr_id;
	wr.opcode = h.opcode;
	wr.send_flags = h.send_flags;
	wr.imm_data = h.imm_data;
	if (h.send_flags & IBV_SEND_INLINE) {
		/* num_sge is the inline length: one SGE over a private copy */
		if (h.num_sge > qp->cap.max_inline_data) {
			post_bad_send(qp, h.wr_id);
			return;
		}
		memcpy(inl, in->sge, h.num_sge);
		sge[0] = (struct ibv_sge){ .addr = (uintptr_t)inl,
					   .length = h.num_sge };
		wr.num_sge = h.num_sge ? 1 : 0;
	} else {
		if (h.num_sge > qp->cap.max_send_sge) {
			post_bad_send(qp, h.wr_id);
			return;
		}
		memcpy(sge, in->sge, h.num_sge * sizeof(sge[0]));
		wr.num_sge = (int)h.num_sge;
		if (h.send_flags & RXDP_HCA_SEND_GATHERED) {
			uint64_t total = 0;

			for (uint32_t i = 0; i < h.num_sge; i++)
				total += sge[i].length;
			/* post_one_send refuses more than GATHER_MAX */
			if (total <= RXDP_HCA_GATHER_MAX) {
				memcpy(inl, in->sge + h.num_sge, total);
				gathered = inl;
			}
		}
	}
	wr.sg_list = sge;
	if (h.opcode == IBV_WR_BIND_MW) {
		/* the overlay of common/hca.h; the verbs objects are stand-ins */
		mw.rkey = h.remote_qpn;
		mr.lkey = h.remote_qkey;
		wr.bind_mw.mw = &mw;
		wr.bind_mw.rkey = h.rkey;
		wr.bind_mw.bind_info.mr = h.remote_qkey ? &mr : NULL;
		wr.bind_mw.bind_info.addr = h.remote_addr;
		wr.bind_mw.bind_info.length = h.compare_add;
		wr.bind_mw.bind_info.mw_access_flags = (unsigned int)h.swap;
	} else if (h.opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   h.opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = h.remote_addr;
		wr.wr.atomic.rkey = h.rkey;
		wr.wr.atomic.compare_add = h.compare_add;
		wr.wr.atomic.swap = h.swap;
	} else if (qp->type == IBV_QPT_UD) {
		wr.wr.ud.ah = (struct ibv_ah *)(uintptr_t)h.ah;
		wr.wr.ud.remote_qpn = h.remote_qpn;
		wr.wr.ud.remote_qkey = h.remote_qkey;
	} else {
		wr.wr.rdma.remote_addr = h.remote_addr;
		wr.wr.rdma.rkey = h.rkey;
	}
	if (post_one_send(qp, &wr, gathered))
		post_bad_send(qp, h.wr_id);
}

/* Take shared receive WQEs into a private ring while it has room */
static int drain_recv(struct rxdp_hca_wq *sh, void *shring,
		      _Atomic uint32_t *prodp, _Atomic uint32_t *consp,
		      struct rwqe *ring, uint32_t size, uint32_t max_sge,
		      bool *bad)
{
	uint32_t cons = atomic_load_explicit(&sh->cons, memory_order_relaxed);
	uint32_t prod = atomic_load_explicit(&sh->prod, memory_order_acquire);
	struct ibv_sge sge[ENG_MAX_SGE];
	int n = 0;

	for (; cons != prod; cons++, n++) {
		const struct rxdp_hca_rwqe *in = rxdp_hca_slot(
			shring, cons, size, rxdp_hca_rwqe_stride(max_sge));
		struct ibv_recv_wr wr = { .sg_list = sge };
		struct rxdp_hca_rwqe h;

		memcpy(&h, in, sizeof(h));
		if (h.num_sge > max_sge) {
			*bad = true;
			break;
		}
		memcpy(sge, in->sge, h.num_sge * sizeof(sge[0]));
		wr.wr_id = h.wr_id;
		wr.num_sge = (int)h.num_sge;
		if (post_one_recv(prodp, consp, ring, size, max_sge, &wr))
			break; /* full: the owner posted more than it may */
	}
	atomic_store_explicit(&sh->cons, cons, memory_order_release);
	return n;
}

/* The QP's state, for the engine and (shared QPs) for its owner */
void eng_qp_set_state(struct rxdp_eqp *qp, int state)
{
	atomic_store(&qp->state, state);
	if (qp->sh)
		atomic_store_explicit(&qp->sh->state, (uint32_t)state,
				      memory_order_release);
}

/* Publish the engine's progress on a shared QP to its owner */
void eng_qp_publish(struct rxdp_eqp *qp)
{
	struct rxdp_hca_qp *sh = qp->sh;
	uint32_t v;

	if (!sh)
		return;
	v = atomic_load_explicit(&qp->sq_cons, memory_order_relaxed);
	if (atomic_load_explicit(&sh->sq.done, memory_order_relaxed) != v)
		atomic_store_explicit(&sh->sq.done, v, memory_order_release);
	v = atomic_load_explicit(&qp->rq_cons, memory_order_relaxed);
	if (atomic_load_explicit(&sh->rq.done, memory_order_relaxed) != v)
		atomic_store_explicit(&sh->rq.done, v, memory_order_release);
	v = (uint32_t)atomic_load(&qp->state);
	if (atomic_load_explicit(&sh->state, memory_order_relaxed) != v)
		atomic_store_explicit(&sh->state, v, memory_order_release);
}

static int drain_qp(struct rxdp_eqp *qp)
{
	struct rxdp_hca_wq *sq = &qp->sh->sq;
	int state = atomic_load(&qp->state), n = 0;
	bool bad = false;

	if (state == IBV_QPS_RESET)
		return 0;
	if (state != IBV_QPS_INIT && state != IBV_QPS_RTR) {
		uint32_t cons =
			atomic_load_explicit(&sq->cons, memory_order_relaxed);
		uint32_t prod =
			atomic_load_explicit(&sq->prod, memory_order_acquire);

		if (cons != prod) {
			qp->post_cpu = atomic_load_explicit(
				&sq->cpu, memory_order_relaxed);
			qp->post_ns = qp->e->now;
		}
		/* no more than the private ring holds (the owner's limit) */
		for (; cons != prod &&
		       atomic_load(&qp->sq_prod) - atomic_load(&qp->sq_cons) <
			       qp->sq_size;
		     cons++, n++)
			drain_send(qp,
				   rxdp_hca_slot(
					   qp->sh_sq, cons, qp->sq_size,
					   rxdp_hca_swqe_stride(
						   qp->cap.max_send_sge,
						   qp->cap.max_inline_data)));
		atomic_store_explicit(&sq->cons, cons, memory_order_release);
	}
	if (!qp->srq)
		n += drain_recv(&qp->sh->rq, qp->sh_rq, &qp->rq_prod,
				&qp->rq_cons, qp->rq, qp->rq_size,
				qp->cap.max_recv_sge, &bad);
	if (bad && state != IBV_QPS_ERR) {
		qp->e->stats.bad_wqes++;
		rc_qp_to_err(qp, true);
	}
	return n;
}

int eng_drain(struct rxdp_engine *e)
{
	int n = 0;

	for (struct rxdp_esrq *srq = e->srqs; srq; srq = srq->next) {
		bool bad = false;

		if (!srq->sh)
			continue;
		n += drain_recv(srq->sh, srq->sh_ring, &srq->prod, &srq->cons,
				srq->rq, srq->size, srq->max_sge, &bad);
		if (bad) {
			/* the WQE stays; the owner hears of it once */
			if (!srq->bad_seen)
				eng_event(e, IBV_EVENT_SRQ_ERR, srq->user);
			srq->bad_seen = true;
			e->stats.bad_wqes++;
		}
	}
	for (struct rxdp_eqp *qp = e->qps; qp; qp = qp->next)
		if (qp->sh)
			n += drain_qp(qp);
	return n;
}

/* --- shared receive queues ------------------------------------------------- */

int rxdp_engine_srq_caps(struct ibv_srq_attr *attr)
{
	if (!attr->max_wr || attr->max_wr > ENG_MAX_WR ||
	    attr->max_sge > ENG_MAX_SGE || attr->srq_limit > attr->max_wr)
		return -EINVAL;
	attr->max_wr = rxdp_hca_pow2(attr->max_wr);
	if (!attr->max_sge)
		attr->max_sge = 1;
	return 0;
}

struct rxdp_esrq *rxdp_engine_create_srq(struct rxdp_engine *e,
					 struct rxdp_epd *pd,
					 struct ibv_srq_attr *attr, void *user)
{
	struct rxdp_esrq *srq;

	if (rxdp_engine_srq_caps(attr)) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	srq->size = attr->max_wr;
	srq->rq = calloc(srq->size, sizeof(*srq->rq));
	srq->sge = calloc((size_t)srq->size * attr->max_sge, sizeof(*srq->sge));
	if (!srq->rq || !srq->sge) {
		free(srq->rq);
		free(srq->sge);
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < srq->size; i++)
		srq->rq[i].sge = srq->sge + (size_t)i * attr->max_sge;
	srq->e = e;
	srq->pd = pd_or_default(e, pd);
	srq->user = user;
	srq->max_wr = srq->size;
	srq->max_sge = attr->max_sge;
	srq->limit = attr->srq_limit;
	pthread_mutex_init(&srq->lock, NULL);
	eng_lock(e);
	srq->next = e->srqs;
	e->srqs = srq;
	srq->pd->refs++;
	eng_unlock(e);
	return srq;
}

void rxdp_engine_srq_share(struct rxdp_esrq *srq, struct rxdp_hca_wq *sh,
			   void *ring)
{
	eng_lock(srq->e);
	srq->sh = sh;
	srq->sh_ring = ring;
	eng_unlock(srq->e);
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
	struct rxdp_esrq **pp;

	eng_lock(e);
	if (srq->refs) {
		eng_unlock(e);
		return -EBUSY;
	}
	for (pp = &e->srqs; *pp; pp = &(*pp)->next) {
		if (*pp == srq) {
			*pp = srq->next;
			break;
		}
	}
	srq->pd->refs--;
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
		err = post_one_recv(&srq->prod, &srq->cons, srq->rq, srq->size,
				    srq->max_sge, wr);
		if (err) {
			*bad = wr;
			break;
		}
	}
	pthread_mutex_unlock(&srq->lock);
	rxdp_engine_progress(srq->e); /* an RNR-waiting peer may retry */
	return err;
}

/* --- address handles ---------------------------------------------------- */

struct rxdp_eah *rxdp_engine_create_ah(struct rxdp_engine *e,
				       struct rxdp_epd *pd,
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
	ah->pd = pd_or_default(e, pd);
	pkt_path_init(&ah->path, path);
	eng_lock(e);
	ah->pd->refs++;
	eng_unlock(e);
	return ah;
}

int rxdp_engine_destroy_ah(struct rxdp_eah *ah)
{
	struct rxdp_engine *e = ah->pd->e;

	eng_lock(e);
	ah->pd->refs--;
	eng_unlock(e);
	free(ah);
	return 0;
}
