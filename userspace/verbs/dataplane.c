// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The data-path verbs: rxdp's provider, as a hardware one is. rxdpd is the
 * HCA (it runs the transport for every process); this library makes the
 * objects with requests on the context's control connection and then
 * works on the queues rxdpd shares with it (common/hca.h):
 *
 *   ibv_post_send/recv   a WQE into the ring, a release store of prod, and
 *                        the doorbell (an eventfd write) only when the
 *                        device page says the data-path thread sleeps
 *   ibv_poll_cq          CQEs read from the ring, no system call
 *   ibv_req_notify_cq    the armed word; rxdpd writes the channel's pipe
 *
 * rxdpd moves payload to and from this process's memory itself, so the
 * target of an RDMA Write or Read needs no thread of its own.
 *
 * Conventions, as libibverbs: create calls return NULL with errno; modify,
 * query and destroy return a positive errno; post calls a positive errno and
 * *bad_wr; poll_cq a negative value on error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/hca.h"
#include "verbs/provider.h"

static int shm_map(struct shm *m, int fd, size_t len)
{
	m->len = len;
	m->p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m->p == MAP_FAILED) {
		m->p = NULL;
		return errno;
	}
	return 0;
}

/*
 * Make an object that comes with queues (CQ, SRQ, QP): the request, then
 * the memfd of its queues mapped into m; an object whose queues cannot be
 * mapped is destroyed again. 0 or a positive errno.
 */
static int queue_obj_create(struct ibv_context *ctx, uint16_t create,
			    uint16_t destroy, struct rxdp_ctl_obj *o,
			    struct shm *m)
{
	int fd, err;

	if (obj_call(ctx, create, o, NULL, &fd))
		return errno ? errno : EPROTO;
	if (fd < 0)
		return EPROTO;
	err = shm_map(m, fd, o->mem_size);
	if (err) {
		struct rxdp_ctl_obj d = { .handle = o->handle };

		obj_call(ctx, destroy, &d, NULL, NULL);
	}
	return err;
}

static void shm_unmap(struct shm *m)
{
	if (m->p)
		munmap(m->p, m->len);
	m->p = NULL;
}

/*
 * After a post: wake the data-path thread if it sleeps. The post's release
 * store and this load are ordered (seq_cst fence) against rxdpd's store of
 * "sleeping" and its last look at the queues before it blocks.
 */
void doorbell(struct ibv_context *ctx)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);
	uint64_t one = 1;

	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&c->page->sleeping, memory_order_relaxed) &&
	    write(c->doorbell, &one, sizeof(one)) < 0) {
		/* the counter is non-zero already: it wakes */
	}
}

/*
 * Tell rxdpd which CPU posts to this queue (a hint: its data-path thread
 * keeps off the CPUs of clients that post, so that both run at once).
 * Written only when it changes, so the line stays shared otherwise.
 */
static void note_cpu(struct rxdp_hca_wq *wq)
{
	uint32_t cpu = (uint32_t)sched_getcpu();

	if (atomic_load_explicit(&wq->cpu, memory_order_relaxed) != cpu)
		atomic_store_explicit(&wq->cpu, cpu, memory_order_relaxed);
}

/* rxdpd went away (its control connection hung up): no more completions */
static bool ctx_dead(struct ibv_context *ctx)
{
	struct rxdp_context *c = to_rxdp_ctx(ctx);
	struct pollfd pfd = { .fd = rxdp_ctl_fd(c->ctl), .events = 0 };

	if (c->dead)
		return true;
	if (poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLHUP | POLLERR))) {
		pr_warn("rxdp: %s: rxdpd is gone\n", c->dev->info.name);
		c->dead = 1;
	}
	return c->dead;
}

/* --- MRs by lkey, and the gathering of small sends (common/hca.h) ---------- */

static struct rxdp_mr **mr_slot(struct rxdp_context *c, uint32_t lkey)
{
	return &c->mr_hash[(lkey ^ lkey >> 8 ^ lkey >> 16) % RXDP_MR_HASH];
}

static void mr_hash_add(struct rxdp_context *c, struct rxdp_mr *m)
{
	struct rxdp_mr **h;

	pthread_rwlock_wrlock(&c->mr_lock);
	h = mr_slot(c, m->mr.lkey);
	m->hnext = *h;
	*h = m;
	pthread_rwlock_unlock(&c->mr_lock);
}

static void mr_hash_del(struct rxdp_context *c, struct rxdp_mr *m)
{
	pthread_rwlock_wrlock(&c->mr_lock);
	for (struct rxdp_mr **p = mr_slot(c, m->mr.lkey); *p; p = &(*p)->hnext)
		if (*p == m) {
			*p = m->hnext;
			break;
		}
	pthread_rwlock_unlock(&c->mr_lock);
}

/*
 * Copy the bytes of a small send's SGEs to dst when every SGE lies in an MR
 * of pd that this context registered; false (nothing promised) otherwise:
 * rxdpd then reads them itself and reports a bad SGE as an error
 * completion. The copy happens under the read lock, so an MR deregistered
 * meanwhile is not read through.
 */
bool gather(struct rxdp_context *c, struct ibv_pd *pd,
	    const struct ibv_send_wr *wr, uint8_t *dst)
{
	bool ok = true;

	pthread_rwlock_rdlock(&c->mr_lock);
	for (int i = 0; i < wr->num_sge && ok; i++) {
		const struct ibv_sge *g = &wr->sg_list[i];
		struct rxdp_mr *m = *mr_slot(c, g->lkey);

		if (!g->length)
			continue;
		while (m && m->mr.lkey != g->lkey)
			m = m->hnext;
		/* ODP memory may be unmapped: rxdpd reads it (or fails) */
		ok = m && !(m->access & IBV_ACCESS_ON_DEMAND) &&
		     m->mr.pd == pd && g->addr >= m->iova &&
		     g->addr - m->iova <= m->mr.length &&
		     g->length <= m->mr.length - (g->addr - m->iova);
		if (ok) {
			memcpy(dst, (uint8_t *)m->mr.addr + (g->addr - m->iova),
			       g->length);
			dst += g->length;
		}
	}
	pthread_rwlock_unlock(&c->mr_lock);
	return ok;
}

/* --- the static inline verbs dispatch through context->ops ------------------ */

static __u32 ah_handle(struct ibv_ah *ah)
{
	return ah ? ((struct rxdp_vah *)ah)->handle : 0;
}

/* A small send's bytes, if the library knows its MRs (arg: the QP) */
static bool qp_gather(void *arg, const struct ibv_send_wr *wr, __u8 *dst)
{
	struct rxdp_qp *w = arg;

	return gather(to_rxdp_ctx(w->qp.context), w->qp.pd, wr, dst);
}

void qp_poster(struct rxdp_qp *w, struct rxdp_hca_poster *p)
{
	*p = (struct rxdp_hca_poster){ .ah_handle = ah_handle,
				       .gather = qp_gather,
				       .arg = w };
}

static int post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		     struct ibv_send_wr **bad_wr)
{
	struct rxdp_qp *w = to_qp(qp);
	struct rxdp_hca_ring r = { &w->sh->sq, w->sq, w->sq_size,
				   w->sq_stride };
	struct rxdp_hca_poster p;
	int err;

	if (qp->state == IBV_QPS_RESET || qp->state == IBV_QPS_INIT ||
	    qp->state == IBV_QPS_RTR) {
		*bad_wr = wr;
		return EINVAL;
	}
	qp_poster(w, &p);
	pthread_spin_lock(&w->sq_lock);
	note_cpu(r.wq);
	err = rxdp_hca_post_send(&r, &w->hcaps, &p, wr, bad_wr);
	pthread_spin_unlock(&w->sq_lock);
	doorbell(qp->context);
	return err;
}

static int post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct rxdp_qp *w = to_qp(qp);
	struct rxdp_hca_ring r = { &w->sh->rq, w->rq, w->rq_size,
				   w->rq_stride };
	int err;

	/* a QP on an SRQ has no receive queue of its own */
	if (qp->state == IBV_QPS_RESET || qp->srq) {
		*bad_wr = wr;
		return EINVAL;
	}
	pthread_spin_lock(&w->rq_lock);
	err = rxdp_hca_post_recv(&r, w->cap.max_recv_sge, wr, bad_wr);
	pthread_spin_unlock(&w->rq_lock);
	/* a QP in ERR flushes them: that needs the data path awake */
	if (atomic_load(&w->sh->state) == IBV_QPS_ERR)
		doorbell(qp->context);
	return err;
}

static int post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr)
{
	struct rxdp_srq *s = to_srq(srq);
	struct rxdp_hca_ring r = { s->wq, s->ring, s->size, s->stride };
	int err;

	pthread_spin_lock(&s->lock);
	err = rxdp_hca_post_recv(&r, s->max_sge, wr, bad_wr);
	pthread_spin_unlock(&s->lock);
	return err;
}

static int poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)
{
	struct rxdp_cq *w = to_cq(cq);
	int got;

	if (num_entries < 0)
		return -EINVAL;
	pthread_spin_lock(&w->lock);
	got = rxdp_hca_poll(w->sh, w->size, num_entries, wc);
	pthread_spin_unlock(&w->lock);
	return got ? got : -cq_idle(w);
}

/*
 * Flushed WQEs of one work queue, from its ring's slots [*cur, prod), into
 * the CQ ring at *prod while it has room; returns how many
 */
static uint32_t wq_flush(const struct rxdp_hca_wq *wq, const void *ring,
			 uint32_t stride, uint32_t *cur, uint32_t qpn,
			 struct rxdp_cq *w, uint32_t *prod, uint32_t cons)
{
	uint32_t end = atomic_load_explicit(&wq->prod, memory_order_acquire);
	uint32_t m = wq->size - 1, n = 0;

	for (; *cur != end && *prod - cons < w->size; (*cur)++, (*prod)++) {
		/* both WQE formats begin with the wr_id */
		const __u64 *wr_id = (const void *)((const char *)ring +
						    (*cur & m) * stride);
		struct ibv_wc *wc = &w->sh->ring[*prod & (w->size - 1)];

		memset(wc, 0, sizeof(*wc));
		wc->wr_id = *wr_id;
		wc->status = IBV_WC_WR_FLUSH_ERR;
		wc->qp_num = qpn;
		n++;
	}
	return n;
}

/*
 * rxdpd is gone, as an HCA in a fatal state: every WQE it did not complete
 * completes with IBV_WC_WR_FLUSH_ERR (only wr_id, status and qp_num are
 * valid in an error completion, ibv_poll_cq(3)), and the QPs read ERR.
 * Nobody else writes the CQ's ring now, so the library produces into it,
 * and every way of polling sees the entries; WQEs posted later are flushed
 * by a later poll. SRQ WQEs stay in their SRQ, as a QP error leaves them.
 * Returns how many were added.
 */
static uint32_t cq_flush_dead(struct rxdp_cq *w)
{
	struct rxdp_context *c = to_rxdp_ctx(w->cq.context);
	uint32_t prod, cons, n = 0;

	pthread_spin_lock(&w->lock);
	prod = atomic_load_explicit(&w->sh->prod, memory_order_relaxed);
	cons = atomic_load_explicit(&w->sh->cons, memory_order_relaxed);
	pthread_mutex_lock(&c->qps_lock);
	for (struct rxdp_qp *q = c->qps; q; q = q->next) {
		if (!q->flushing) {
			q->flushing = true;
			q->sq_flushed = atomic_load(&q->sh->sq.done);
			q->rq_flushed = atomic_load(&q->sh->rq.done);
			atomic_store(&q->sh->state, IBV_QPS_ERR);
		}
		if (q->qp.send_cq == &w->cq)
			n += wq_flush(&q->sh->sq, q->sq, q->sq_stride,
				      &q->sq_flushed, q->qp.qp_num, w, &prod,
				      cons);
		if (q->qp.recv_cq == &w->cq && !q->qp.srq)
			n += wq_flush(&q->sh->rq, q->rq, q->rq_stride,
				      &q->rq_flushed, q->qp.qp_num, w, &prod,
				      cons);
	}
	pthread_mutex_unlock(&c->qps_lock);
	atomic_store_explicit(&w->sh->prod, prod, memory_order_release);
	pthread_spin_unlock(&w->lock);
	return n;
}

int cq_idle(struct rxdp_cq *w)
{
	struct rxdp_context *c = to_rxdp_ctx(w->cq.context);

	if (atomic_load_explicit(&w->sh->overflow, memory_order_acquire))
		return EOVERFLOW;
	/*
	 * An application polling an empty CQ learns that rxdpd died (looked
	 * at every 65536th empty poll, or at once when another call saw it):
	 * what it had posted comes back flushed, then polls fail with EIO.
	 */
	if ((c->dead || !(++w->idle & 0xffff)) && ctx_dead(w->cq.context))
		return cq_flush_dead(w) ? 0 : EIO;
	/*
	 * An application spinning here waits for rxdpd, whose data-path
	 * thread may need this CPU to make the completion. While that thread
	 * spins through a stream (not SCHED_FIFO then, so it cannot take the
	 * CPU), every 16th empty poll gives it the CPU; a yield returns at
	 * once where nothing else waits (64 KiB ib_write_bw on the 2-core VM:
	 * 8.5 -> 9.4 Gbit/s). Otherwise never: a ping-pong's yield hands the
	 * CPU to whatever else spins there (2 B ib_send_lat: 21 -> 26 us).
	 */
	if (!(w->idle & 15) &&
	    atomic_load_explicit(&to_rxdp_ctx(w->cq.context)->page->streaming,
				 memory_order_relaxed))
		sched_yield();
	return 0;
}

static int req_notify_cq(struct ibv_cq *cq, int solicited_only)
{
	atomic_store(&to_cq(cq)->sh->armed, solicited_only ? 2 : 1);
	return 0;
}

void rxdp_dp_set_ops(struct ibv_context_ops *ops)
{
	ops->post_send = post_send;
	ops->post_recv = post_recv;
	ops->post_srq_recv = post_srq_recv;
	ops->poll_cq = poll_cq;
	ops->req_notify_cq = req_notify_cq;
	ops->alloc_mw = rxdp_alloc_mw;
	ops->bind_mw = rxdp_bind_mw;
	ops->dealloc_mw = rxdp_dealloc_mw;
}

/* --- protection domains ------------------------------------------------- */

struct ibv_pd *rxdp_alloc_pd(struct ibv_context *ctx)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_pd *p;

	if (!ctx)
		return fail_ptr(EINVAL);
	p = calloc(1, sizeof(*p));
	if (!p)
		return fail_ptr(ENOMEM);
	o.cookie = (uintptr_t)p;
	if (obj_call(ctx, RXDP_CTL_PD_ALLOC, &o, NULL, NULL)) {
		int err = errno;

		free(p);
		return fail_ptr(err);
	}
	p->pd.context = ctx;
	p->pd.handle = o.handle;
	return &p->pd;
}

int rxdp_dealloc_pd(struct ibv_pd *pd)
{
	struct rxdp_pd *p = to_rxdp_pd(pd);
	struct rxdp_ctl_obj o = { .handle = pd ? pd->handle : 0 };
	int ret;

	if (!pd)
		return EINVAL;
	if (__atomic_load_n(&p->users, __ATOMIC_ACQUIRE))
		return EBUSY;
	ret = obj_call(pd->context, RXDP_CTL_PD_FREE, &o, NULL, NULL);
	if (ret && ret != ECONNRESET && ret != EPIPE)
		return ret;
	free(p);
	return 0;
}

/* --- memory regions -------------------------------------------------------- */

/*
 * One function behind the three registrations. perftest registers with
 * ibv_reg_mr_iova2 and IBV_ACCESS_RELAXED_ORDERING, which rxdp accepts and
 * ignores. The range must be mapped (with write access when local write is
 * asked for), and its pages are shared with rxdpd where they can be
 * (regmem.c); rxdpd reaches the rest through /proc/self/mem.
 *
 * On-demand paging (IBV_ACCESS_ON_DEMAND): the range follows the page
 * tables, as the process maps it now and later. Nothing is checked,
 * re-backed or counted against RLIMIT_MEMLOCK (the kernel's ODP umems pin
 * nothing and charge nothing either); rxdpd reaches it through
 * /proc/self/mem, which faults pages in, and a page that is not there is
 * an access error of the WR that needed it. (NULL, SIZE_MAX) is implicit
 * ODP: the whole address space, as mlx5 has it.
 */

/*
 * A region larger than RLIMIT_MEMLOCK is refused before its pages move
 * (rxdpd counts every region of the context against it, as the kernel
 * counts pinned pages; CAP_IPC_LOCK lifts it)
 */
static bool over_memlock(size_t length)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	struct rlimit rl;

	if (!syscall(SYS_capget, &h, d) &&
	    (d[CAP_IPC_LOCK / 32].effective & (1U << (CAP_IPC_LOCK % 32))))
		return false;
	return !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	       rl.rlim_cur != RLIM_INFINITY && length > rl.rlim_cur;
}

static struct ibv_mr *reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			     uint64_t iova, unsigned int access)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_mr *m;
	int err;

	if (!pd)
		return fail_ptr(EINVAL);
	if (!(access & IBV_ACCESS_ON_DEMAND) && over_memlock(length))
		return fail_ptr(ENOMEM);
	m = calloc(1, sizeof(*m));
	if (!m)
		return fail_ptr(ENOMEM);
	err = access & IBV_ACCESS_ON_DEMAND
		      ? 0
		      : regmem_get(to_rxdp_ctx(pd->context), (uintptr_t)addr,
				   length, access & IBV_ACCESS_LOCAL_WRITE,
				   &m->mem);
	if (err) {
		free(m);
		return fail_ptr(err);
	}
	o.pd = pd->handle;
	o.addr = (uintptr_t)addr;
	o.length = length;
	o.iova = iova;
	o.access = access;
	o.cookie = (uintptr_t)m;
	if (obj_call(pd->context, RXDP_CTL_MR_REG, &o, NULL, NULL)) {
		err = errno;
		regmem_put(to_rxdp_ctx(pd->context), m->mem);
		free(m);
		return fail_ptr(err);
	}
	m->handle = o.handle;
	m->mr.context = pd->context;
	m->mr.pd = pd;
	m->mr.addr = addr;
	m->mr.length = length;
	m->mr.handle = o.handle;
	m->mr.lkey = o.lkey;
	m->mr.rkey = o.rkey;
	m->iova = iova;
	m->access = access;
	mr_hash_add(to_rxdp_ctx(pd->context), m);
	rxdp_pd_get(pd);
	return &m->mr;
}

struct ibv_mr *rxdp_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			   int access)
{
	return reg_mr(pd, addr, length, (uintptr_t)addr, (unsigned int)access);
}

struct ibv_mr *rxdp_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length,
				uint64_t iova, int access)
{
	return reg_mr(pd, addr, length, iova, (unsigned int)access);
}

struct ibv_mr *rxdp_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t iova, unsigned int access)
{
	return reg_mr(pd, addr, length, iova, access);
}

int rxdp_dereg_mr(struct ibv_mr *mr)
{
	struct rxdp_mr *m = (struct rxdp_mr *)mr;
	struct rxdp_ctl_obj o = { 0 };
	int ret;

	if (!mr)
		return EINVAL;
	o.handle = m->handle;
	mr_hash_del(to_rxdp_ctx(mr->context), m);
	ret = obj_call(mr->context, RXDP_CTL_MR_DEREG, &o, NULL, NULL);
	if (ret && ret != ECONNRESET && ret != EPIPE) {
		mr_hash_add(to_rxdp_ctx(mr->context), m);
		return ret;
	}
	regmem_put(to_rxdp_ctx(mr->context), m->mem);
	rxdp_pd_put(mr->pd);
	free(m);
	return 0;
}

static int rereg_fail(int err, int code)
{
	errno = err;
	return code;
}

/*
 * A new registration (translation, PD, access: what flags say changes,
 * the rest kept) replaces the old one in the same ibv_mr; the keys may
 * change, as with a kernel driver. As rdma-core: 0, or an enum
 * ibv_rereg_mr_err_code (negative) with errno; on failure the MR is as it
 * was.
 */
int rxdp_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr,
		  size_t length, int access)
{
	struct rxdp_mr *m = (struct rxdp_mr *)mr;
	struct regmem_ref *nmem = NULL;
	struct rxdp_ctl_obj o = { 0 };
	struct ibv_pd *npd;
	unsigned int acc;
	bool remap;

	if (!mr || !flags || (flags & ~IBV_REREG_MR_FLAGS_SUPPORTED) ||
	    ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) && (!addr || !length)) ||
	    (access && !(flags & IBV_REREG_MR_CHANGE_ACCESS)) ||
	    ((flags & IBV_REREG_MR_CHANGE_PD) &&
	     (!pd || pd->context != mr->context)))
		return rereg_fail(EINVAL, IBV_REREG_MR_ERR_INPUT);
	npd = flags & IBV_REREG_MR_CHANGE_PD ? pd : mr->pd;
	acc = flags & IBV_REREG_MR_CHANGE_ACCESS ? (unsigned int)access
						 : m->access;
	/* new memory, or the same going to or from on-demand paging */
	remap = (flags & IBV_REREG_MR_CHANGE_TRANSLATION) ||
		((acc ^ m->access) & IBV_ACCESS_ON_DEMAND);
	if (remap && !(acc & IBV_ACCESS_ON_DEMAND)) {
		int err = regmem_get(
			to_rxdp_ctx(mr->context),
			(uintptr_t)(flags & IBV_REREG_MR_CHANGE_TRANSLATION
					    ? addr
					    : mr->addr),
			flags & IBV_REREG_MR_CHANGE_TRANSLATION ? length
								: mr->length,
			acc & IBV_ACCESS_LOCAL_WRITE, &nmem);

		if (err)
			return rereg_fail(err, IBV_REREG_MR_ERR_INPUT);
	}
	o.handle = m->handle;
	o.pd = npd->handle;
	o.addr = (uintptr_t)(flags & IBV_REREG_MR_CHANGE_TRANSLATION
				     ? addr
				     : mr->addr);
	o.length = flags & IBV_REREG_MR_CHANGE_TRANSLATION ? length
							   : mr->length;
	o.iova = flags & IBV_REREG_MR_CHANGE_TRANSLATION ? (uintptr_t)addr
							 : m->iova;
	o.access = acc;
	if (obj_call(mr->context, RXDP_CTL_MR_REREG, &o, NULL, NULL)) {
		int err = errno;

		regmem_put(to_rxdp_ctx(mr->context), nmem);
		return rereg_fail(err, IBV_REREG_MR_ERR_CMD);
	}
	if (remap) {
		regmem_put(to_rxdp_ctx(mr->context), m->mem);
		m->mem = nmem;
	}
	/* out of the lkey table while it changes: posts do not gather then */
	mr_hash_del(to_rxdp_ctx(mr->context), m);
	m->iova = o.iova;
	m->access = o.access;
	mr->addr = (void *)(uintptr_t)o.addr;
	mr->length = o.length;
	mr->lkey = o.lkey;
	mr->rkey = o.rkey;
	if (npd != mr->pd) {
		rxdp_pd_get(npd);
		rxdp_pd_put(mr->pd);
		mr->pd = npd;
	}
	mr_hash_add(to_rxdp_ctx(mr->context), m);
	return 0;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

/*
 * The ODP MR of pd that g's lkey names (mr_lock read-held), as mlx5's
 * get_prefetchable_mr() finds it: 0, -ENOENT (no ODP MR has that key),
 * -EPERM (another PD's, or no local write for a write prefetch). *at: the
 * range's address if it lies in the MR, else 0.
 */
static int advise_find(struct rxdp_context *c, struct ibv_pd *pd,
		       const struct ibv_sge *g, bool write, uintptr_t *at)
{
	struct rxdp_mr *m = *mr_slot(c, g->lkey);

	while (m && m->mr.lkey != g->lkey)
		m = m->hnext;
	if (!m || !(m->access & IBV_ACCESS_ON_DEMAND))
		return -ENOENT;
	if (m->mr.pd != pd || (write && !(m->access & IBV_ACCESS_LOCAL_WRITE)))
		return -EPERM;
	*at = 0;
	if (g->addr >= m->iova && g->addr - m->iova <= m->mr.length &&
	    g->length <= m->mr.length - (g->addr - m->iova))
		*at = (uintptr_t)m->mr.addr + (uintptr_t)(g->addr - m->iova);
	return 0;
}

/*
 * ibv_advise_mr(3) on ODP MRs, its errors as mlx5 gives them (Linux 5.15
 * on): unknown advice EOPNOTSUPP; unknown flags or no SGE EINVAL; an lkey
 * that is no ODP MR ENOENT; another PD's MR, or PREFETCH_WRITE on an MR
 * without local write, EPERM; these for every SGE before anything is
 * done. rxdpd reaches ODP memory through the process's page tables, so a
 * prefetch is the process faulting the pages in itself
 * (MADV_POPULATE_READ / _WRITE, Linux 5.14; an address not mapped is an
 * error there, not a signal). With IBV_ADVISE_MR_FLAG_FLUSH that is done
 * before the call returns, and a range outside its MR or one that cannot
 * be faulted in is EFAULT. Without, it is done too (it costs the same) and
 * neither is reported, as mlx5's asynchronous prefetch does not report
 * them. PREFETCH_NO_FAULT faults nothing: pages present are reachable.
 */
int rxdp_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		   uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	bool write = advice == IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool sync = flags & IBV_ADVISE_MR_FLAG_FLUSH;
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE), at;
	struct rxdp_context *c;
	int err = 0;

	if (!pd)
		return EINVAL;
	if (advice != IBV_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return EOPNOTSUPP;
	if ((flags & ~(uint32_t)IBV_ADVISE_MR_FLAG_FLUSH) || !num_sge ||
	    !sg_list)
		return EINVAL;
	c = to_rxdp_ctx(pd->context);
	pthread_rwlock_rdlock(&c->mr_lock);
	for (uint32_t i = 0; i < num_sge && !err; i++)
		err = -advise_find(c, pd, &sg_list[i], write, &at);
	for (uint32_t i = 0; i < num_sge && !err &&
			     advice != IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	     i++) {
		uintptr_t s, e;

		advise_find(c, pd, &sg_list[i], write, &at);
		if (!at) {
			err = sync ? EFAULT : 0;
			continue;
		}
		if (!sg_list[i].length)
			continue;
		s = at & ~(pg - 1);
		e = (at + sg_list[i].length + pg - 1) & ~(pg - 1);
		if (madvise((void *)s, e - s,
			    write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ) &&
		    errno != EINVAL && sync)
			err = EFAULT;
	}
	pthread_rwlock_unlock(&c->mr_lock);
	return err;
}

/* --- completion channels ------------------------------------------------ */

/*
 * channel.fd is the read end of a pipe rxdpd writes: one record (the CQ's
 * pointer, as the library named it) per completion event.
 */
struct ibv_comp_channel *rxdp_create_comp_channel(struct ibv_context *ctx)
{
	struct rxdp_comp_channel *ch;
	struct rxdp_ctl_obj o = { 0 };
	int fd;

	if (!ctx)
		return fail_ptr(EINVAL);
	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return fail_ptr(ENOMEM);
	o.cookie = (uintptr_t)ch;
	if (obj_call(ctx, RXDP_CTL_CHANNEL_CREATE, &o, NULL, &fd) || fd < 0) {
		int err = errno ? errno : EPROTO;

		free(ch);
		return fail_ptr(err);
	}
	ch->channel.context = ctx;
	ch->channel.fd = fd;
	ch->channel.refcnt = 0;
	ch->handle = o.handle;
	return &ch->channel;
}

int rxdp_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct rxdp_comp_channel *ch = (struct rxdp_comp_channel *)channel;
	struct ibv_context *ctx = channel->context;
	struct rxdp_ctl_obj o = { .handle = ch->handle };
	int busy, ret;

	pthread_mutex_lock(&ctx->mutex);
	busy = channel->refcnt;
	pthread_mutex_unlock(&ctx->mutex);
	if (busy)
		return EBUSY; /* CQs still use it, as rdma-core says */
	ret = obj_call(ctx, RXDP_CTL_CHANNEL_DESTROY, &o, NULL, NULL);
	if (ret && ret != ECONNRESET && ret != EPIPE)
		return ret;
	close(channel->fd);
	free(ch);
	return 0;
}

/* --- completion queues ----------------------------------------------------- */

struct rxdp_cq *cq_create(struct ibv_context *context, int cqe,
			  void *cq_context, struct ibv_comp_channel *channel,
			  int comp_vector, uint32_t flags)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_cq *w;
	int err;

	if (!context || cqe < 1 || cqe > RXDP_VERBS_MAX_CQE ||
	    comp_vector < 0 || comp_vector >= context->num_comp_vectors)
		return fail_ptr(EINVAL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);
	o.cqe = (uint32_t)cqe;
	o.channel = channel ? ((struct rxdp_comp_channel *)channel)->handle : 0;
	o.cq_flags = flags;
	o.cookie = (uintptr_t)&w->cq;
	err = queue_obj_create(context, RXDP_CTL_CQ_CREATE, RXDP_CTL_CQ_DESTROY,
			       &o, &w->mem);
	if (err) {
		free(w);
		return fail_ptr(err);
	}
	w->handle = o.handle;
	w->sh = w->mem.p;
	w->size = o.cqe;
	w->flags = flags;
	w->data = rxdp_hca_cq_data(w->sh, w->size);
	pthread_spin_init(&w->lock, PTHREAD_PROCESS_PRIVATE);
	verbs_init_cq(&w->cq, context, channel, cq_context);
	w->cq.cqe = (int)o.cqe;
	return w;
}

struct ibv_cq *rxdp_create_cq(struct ibv_context *context, int cqe,
			      void *cq_context,
			      struct ibv_comp_channel *channel, int comp_vector)
{
	struct rxdp_cq *w;

	w = cq_create(context, cqe, cq_context, channel, comp_vector, 0);
	return w ? &w->cq : NULL;
}

/*
 * ibv_resize_cq(3): at least cqe entries, the completions waiting kept;
 * EINVAL if more wait than that. rxdpd moves the ring to a new memfd while
 * the CQ's lock keeps this process's pollers out.
 */
int rxdp_resize_cq(struct ibv_cq *cq, int cqe)
{
	struct rxdp_cq *w = to_cq(cq);
	struct rxdp_ctl_obj o = { 0 };
	struct shm m;
	int fd, ret;

	if (!cq || cqe < 1 || cqe > RXDP_VERBS_MAX_CQE)
		return EINVAL;
	o.handle = w->handle;
	o.cqe = (uint32_t)cqe;
	pthread_spin_lock(&w->lock);
	ret = obj_call(cq->context, RXDP_CTL_CQ_RESIZE, &o, NULL, &fd);
	if (!ret && fd < 0)
		ret = EPROTO;
	if (!ret)
		ret = shm_map(&m, fd, o.mem_size);
	if (!ret) {
		shm_unmap(&w->mem);
		w->mem = m;
		w->sh = m.p;
		w->size = o.cqe;
		w->data = rxdp_hca_cq_data(w->sh, w->size);
		cq->cqe = (int)o.cqe;
	}
	pthread_spin_unlock(&w->lock);
	errno = ret;
	return ret;
}

int rxdp_destroy_cq(struct ibv_cq *cq)
{
	struct rxdp_cq *w = to_cq(cq);
	struct rxdp_ctl_obj o = { 0 };
	uint32_t comp_read, async_read;
	int ret, keep;

	if (!cq)
		return EINVAL;
	o.handle = w->handle;
	ret = obj_call(cq->context, RXDP_CTL_CQ_DESTROY, &o, NULL, NULL);
	if (ret == EBUSY || ret == EINVAL)
		return ret; /* EBUSY while a QP uses it */
	/* no more notifies or events now: rxdpd's counts are final */
	keep = rxdp_events_destroyed(cq->context, cq, w, o.comp_events,
				     o.async_events, &comp_read, &async_read);
	rxdp_cq_wait_acked(cq, comp_read, async_read);
	rxdp_cq_fini(cq);
	shm_unmap(&w->mem);
	pthread_spin_destroy(&w->lock);
	if (!keep)
		free(w);
	return 0;
}

/* --- queue pairs ----------------------------------------------------------- */

struct rxdp_qp *qp_create(struct ibv_pd *pd, struct ibv_qp_init_attr *init_attr)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_qp *w;
	int err;

	if (!pd || !init_attr || !init_attr->send_cq || !init_attr->recv_cq)
		return fail_ptr(EINVAL);
	switch (init_attr->qp_type) {
	case IBV_QPT_RC:
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		break;
	default: /* XRC, raw packet, driver QPs */
		return fail_ptr(EOPNOTSUPP);
	}
	if (init_attr->cap.max_send_wr > RXDP_VERBS_MAX_QP_WR ||
	    init_attr->cap.max_recv_wr > RXDP_VERBS_MAX_QP_WR ||
	    init_attr->cap.max_send_sge > RXDP_VERBS_MAX_SGE ||
	    init_attr->cap.max_recv_sge > RXDP_VERBS_MAX_SGE ||
	    init_attr->cap.max_inline_data > RXDP_VERBS_MAX_INLINE)
		return fail_ptr(EINVAL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);
	o.pd = pd->handle;
	o.qp_type = init_attr->qp_type;
	o.send_cq = to_cq(init_attr->send_cq)->handle;
	o.recv_cq = to_cq(init_attr->recv_cq)->handle;
	o.srq = init_attr->srq ? to_srq(init_attr->srq)->handle : 0;
	o.sq_sig_all = !!init_attr->sq_sig_all;
	o.max_send_wr = init_attr->cap.max_send_wr;
	o.max_recv_wr = init_attr->cap.max_recv_wr;
	o.max_send_sge = init_attr->cap.max_send_sge;
	o.max_recv_sge = init_attr->cap.max_recv_sge;
	o.max_inline_data = init_attr->cap.max_inline_data;
	o.cookie = (uintptr_t)&w->qp;
	err = queue_obj_create(pd->context, RXDP_CTL_QP_CREATE,
			       RXDP_CTL_QP_DESTROY, &o, &w->mem);
	if (err) {
		free(w);
		return fail_ptr(err);
	}
	w->handle = o.handle;
	w->sh = w->mem.p;
	w->sq = (char *)w->mem.p + o.sq_off;
	w->rq = (char *)w->mem.p + o.rq_off;
	w->sq_size = o.max_send_wr;
	w->sq_stride = o.sq_stride;
	w->rq_size = o.max_recv_wr;
	w->rq_stride = o.rq_stride;
	w->cap.max_send_wr = o.max_send_wr;
	w->cap.max_recv_wr = o.max_recv_wr;
	w->cap.max_send_sge = o.max_send_sge;
	w->cap.max_recv_sge = o.max_recv_sge;
	w->cap.max_inline_data = o.max_inline_data;
	w->hcaps.qp_type = init_attr->qp_type;
	w->hcaps.max_send_sge = o.max_send_sge;
	w->hcaps.max_inline = o.max_inline_data;
	pthread_spin_init(&w->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&w->rq_lock, PTHREAD_PROCESS_PRIVATE);
	w->sq_sig_all = init_attr->sq_sig_all;
	w->qp.context = pd->context;
	w->qp.qp_context = init_attr->qp_context;
	w->qp.pd = pd;
	w->qp.send_cq = init_attr->send_cq;
	w->qp.recv_cq = init_attr->recv_cq;
	w->qp.srq = init_attr->srq;
	w->qp.handle = o.qpn;
	w->qp.qp_num = o.qpn;
	w->qp.state = IBV_QPS_RESET;
	w->qp.qp_type = init_attr->qp_type;
	pthread_mutex_init(&w->qp.mutex, NULL);
	pthread_cond_init(&w->qp.cond, NULL);
	init_attr->cap = w->cap;
	rxdp_pd_get(pd);
	{
		struct rxdp_context *c = to_rxdp_ctx(pd->context);

		pthread_mutex_lock(&c->qps_lock);
		w->next = c->qps;
		c->qps = w;
		pthread_mutex_unlock(&c->qps_lock);
	}
	return w;
}

struct ibv_qp *rxdp_create_qp(struct ibv_pd *pd,
			      struct ibv_qp_init_attr *init_attr)
{
	struct rxdp_qp *w;

	w = qp_create(pd, init_attr);
	return w ? &w->qp : NULL;
}

static void attr_to_ctl(const struct ibv_qp_attr *a, struct rxdp_qp_attr *r)
{
	memset(r, 0, sizeof(*r));
	r->qp_state = a->qp_state;
	r->cur_qp_state = a->cur_qp_state;
	r->path_mtu = a->path_mtu;
	r->qkey = a->qkey;
	r->rq_psn = a->rq_psn;
	r->sq_psn = a->sq_psn;
	r->dest_qp_num = a->dest_qp_num;
	r->qp_access_flags = a->qp_access_flags;
	r->pkey_index = a->pkey_index;
	r->sq_draining = a->sq_draining;
	r->max_rd_atomic = a->max_rd_atomic;
	r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	r->min_rnr_timer = a->min_rnr_timer;
	r->port_num = a->port_num;
	r->timeout = a->timeout;
	r->retry_cnt = a->retry_cnt;
	r->rnr_retry = a->rnr_retry;
	r->en_sqd_async_notify = a->en_sqd_async_notify;
	rxdp_ah_from_attr(&a->ah_attr, &r->ah);
}

/* Remember what was set, by mask, for ibv_query_qp */
static void attr_merge(struct ibv_qp_attr *dst, const struct ibv_qp_attr *a,
		       int mask)
{
#define MERGE(bit, field)                      \
	do {                                   \
		if (mask & (bit))              \
			dst->field = a->field; \
	} while (0)
	MERGE(IBV_QP_STATE, qp_state);
	MERGE(IBV_QP_EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
	MERGE(IBV_QP_ACCESS_FLAGS, qp_access_flags);
	MERGE(IBV_QP_PKEY_INDEX, pkey_index);
	MERGE(IBV_QP_PORT, port_num);
	MERGE(IBV_QP_QKEY, qkey);
	MERGE(IBV_QP_AV, ah_attr);
	MERGE(IBV_QP_PATH_MTU, path_mtu);
	MERGE(IBV_QP_TIMEOUT, timeout);
	MERGE(IBV_QP_RETRY_CNT, retry_cnt);
	MERGE(IBV_QP_RNR_RETRY, rnr_retry);
	MERGE(IBV_QP_RQ_PSN, rq_psn);
	MERGE(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic);
	MERGE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer);
	MERGE(IBV_QP_SQ_PSN, sq_psn);
	MERGE(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	MERGE(IBV_QP_DEST_QPN, dest_qp_num);
#undef MERGE
}

/*
 * A QP back in RESET leaves no completion behind in its CQs (as rdma-core's
 * providers clean them): the entries not yet polled that are not the QP's
 * move up, in order, and the consumer index follows. Only entries below
 * the producer index as read here are touched; rxdpd writes above it.
 */
static void cq_clean(struct rxdp_cq *w, uint32_t qpn)
{
	struct rxdp_hca_cq *sh = w->sh;
	uint32_t cons, prod, to, m = w->size - 1;
	__u64 *ts = w->flags & RXDP_CTL_CQ_F_TIMESTAMP
			    ? rxdp_hca_cq_ts(sh, w->size)
			    : NULL;

	pthread_spin_lock(&w->lock);
	cons = atomic_load_explicit(&sh->cons, memory_order_relaxed);
	prod = atomic_load_explicit(&sh->prod, memory_order_acquire);
	to = prod;
	for (uint32_t i = prod; i != cons; i--) {
		struct ibv_wc *wc = &sh->ring[(i - 1) & m];

		if (wc->qp_num == qpn)
			continue;
		to--;
		if (to != i - 1) {
			sh->ring[to & m] = *wc;
			if (ts)
				ts[to & m] = ts[(i - 1) & m];
			w->data[to & m] = w->data[(i - 1) & m];
		}
	}
	atomic_store_explicit(&sh->cons, to, memory_order_release);
	pthread_spin_unlock(&w->lock);
}

/*
 * rxdpd validates the transition (IBTA 10.3), resolves the path on RTR and
 * applies it to the engine; the library remembers what was set, for
 * ibv_query_qp.
 */
int rxdp_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask)
{
	struct rxdp_qp *w = to_qp(qp);
	struct rxdp_context *c;
	struct rxdp_qp_attr ra;
	int ret;

	if (!qp || !attr)
		return EINVAL;
	c = to_rxdp_ctx(qp->context);
	attr_to_ctl(attr, &ra);
	rxdp_ctx_ctl_lock(c);
	ret = rxdp_ctl_modify_qp(c->ctl, c->dev->info.ifindex, qp->qp_num, &ra,
				 attr_mask, NULL);
	if (ret)
		pr_debug("rxdp: modify QP 0x%x: %s\n", qp->qp_num,
			 rxdp_ctl_strerror(c->ctl));
	rxdp_ctx_ctl_unlock(c);
	if (ret) {
		errno = -ret;
		return -ret;
	}
	attr_merge(&w->attr, attr, attr_mask);
	if (attr_mask & IBV_QP_STATE)
		qp->state = attr->qp_state;
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		cq_clean(to_cq(qp->send_cq), qp->qp_num);
		if (qp->recv_cq != qp->send_cq)
			cq_clean(to_cq(qp->recv_cq), qp->qp_num);
	}
	return 0;
}

int rxdp_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		  struct ibv_qp_init_attr *init_attr)
{
	struct rxdp_qp *w = to_qp(qp);

	if (!qp || !attr || !init_attr)
		return EINVAL;
	*attr = w->attr;
	/* rxdpd may have taken the QP to ERR on its own */
	attr->qp_state = (enum ibv_qp_state)atomic_load(&w->sh->state);
	attr->cur_qp_state = attr->qp_state;
	attr->cap = w->cap;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = qp->qp_context;
	init_attr->send_cq = qp->send_cq;
	init_attr->recv_cq = qp->recv_cq;
	init_attr->srq = qp->srq;
	init_attr->cap = w->cap;
	init_attr->qp_type = qp->qp_type;
	init_attr->sq_sig_all = w->sq_sig_all;
	return 0;
}

/*
 * An HCA sends what was posted before its QP or the AH a WR names is
 * destroyed: a program may post unsignaled datagrams and destroy both at
 * once (rdma-core's mckey sender does, the AH first; Soft-RoCE sends them
 * inside ibv_post_send). rxdpd's engine takes WQEs from the ring a moment
 * later (and finds a UD WR's AH by its handle then): wait, while the QP is
 * in RTS and for a second at most, until it has taken (sent: done, as an
 * unreliable send is done once sent) every WQE posted so far. Not for RC,
 * whose sends are done when a peer that may be gone acknowledges them.
 */
static void sq_wait(struct rxdp_qp *w, bool sent)
{
	struct rxdp_hca_wq *sq = &w->sh->sq;
	uint32_t target = atomic_load(&sq->prod);

	for (int i = 0; i < 10000; i++) {
		_Atomic uint32_t *idx = sent ? &sq->done : &sq->cons;

		if (to_rxdp_ctx(w->qp.context)->dead ||
		    atomic_load(&w->sh->state) != IBV_QPS_RTS ||
		    (int32_t)(atomic_load_explicit(idx, memory_order_acquire) -
			      target) >= 0)
			return;
		usleep(100);
	}
}

int rxdp_destroy_qp(struct ibv_qp *qp)
{
	struct rxdp_qp *w = to_qp(qp);
	struct rxdp_ctl_obj o = { 0 };
	uint32_t none, read;
	int ret, keep;

	if (!qp)
		return EINVAL;
	if (qp->qp_type == IBV_QPT_UD || qp->qp_type == IBV_QPT_UC)
		sq_wait(w, true);
	o.handle = w->handle;
	ret = obj_call(qp->context, RXDP_CTL_QP_DESTROY, &o, NULL, NULL);
	if (ret == EINVAL)
		return ret;
	/*
	 * Wait for the acks of the events read, not of all raised: a program
	 * that never reads async events must not hang here after a QP error.
	 */
	keep = rxdp_events_destroyed(qp->context, qp, w, 0, o.async_events,
				     &none, &read);
	rxdp_qp_wait_acked(qp, read);
	rxdp_pd_put(qp->pd);
	{
		struct rxdp_context *c = to_rxdp_ctx(qp->context);
		struct rxdp_qp **pp = &c->qps;

		pthread_mutex_lock(&c->qps_lock);
		while (*pp && *pp != w)
			pp = &(*pp)->next;
		if (*pp)
			*pp = w->next;
		pthread_mutex_unlock(&c->qps_lock);
	}
	shm_unmap(&w->mem);
	pthread_spin_destroy(&w->sq_lock);
	pthread_spin_destroy(&w->rq_lock);
	pthread_cond_destroy(&qp->cond);
	pthread_mutex_destroy(&qp->mutex);
	if (!keep)
		free(w);
	return 0;
}

/*
 * The ibv_wr_* API (extended.c) of a QP made by ibv_create_qp_ex; NULL for
 * the others, as rdma-core. perftest uses it only on ConnectX/EFA part ids.
 */
struct ibv_qp_ex *rxdp_qp_to_qp_ex(struct ibv_qp *qp)
{
	struct rxdp_qp *w = to_qp(qp);

	return w->ex ? &w->qp_ex : fail_ptr(EOPNOTSUPP);
}

/* --- shared receive queues ----------------------------------------------- */

struct rxdp_srq *srq_create(struct ibv_pd *pd,
			    struct ibv_srq_init_attr *srq_init_attr)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_srq *w;
	int err;

	if (!pd || !srq_init_attr)
		return fail_ptr(EINVAL);
	if (!srq_init_attr->attr.max_wr ||
	    srq_init_attr->attr.max_wr > RXDP_VERBS_MAX_SRQ_WR ||
	    srq_init_attr->attr.max_sge > RXDP_VERBS_MAX_SRQ_SGE ||
	    srq_init_attr->attr.srq_limit > srq_init_attr->attr.max_wr)
		return fail_ptr(EINVAL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);
	o.pd = pd->handle;
	o.max_recv_wr = srq_init_attr->attr.max_wr;
	o.max_recv_sge = srq_init_attr->attr.max_sge;
	o.srq_limit = srq_init_attr->attr.srq_limit;
	o.cookie = (uintptr_t)&w->srq;
	err = queue_obj_create(pd->context, RXDP_CTL_SRQ_CREATE,
			       RXDP_CTL_SRQ_DESTROY, &o, &w->mem);
	if (err) {
		free(w);
		return fail_ptr(err);
	}
	w->handle = o.handle;
	w->wq = w->mem.p;
	w->ring = (char *)w->mem.p + o.rq_off;
	w->size = o.max_recv_wr;
	w->stride = o.rq_stride;
	w->max_sge = o.max_recv_sge;
	pthread_spin_init(&w->lock, PTHREAD_PROCESS_PRIVATE);
	w->srq.context = pd->context;
	w->srq.srq_context = srq_init_attr->srq_context;
	w->srq.pd = pd;
	w->srq.handle = o.handle;
	pthread_mutex_init(&w->srq.mutex, NULL);
	pthread_cond_init(&w->srq.cond, NULL);
	srq_init_attr->attr.max_wr = o.max_recv_wr;
	srq_init_attr->attr.max_sge = o.max_recv_sge;
	rxdp_pd_get(pd);
	return w;
}

struct ibv_srq *rxdp_create_srq(struct ibv_pd *pd,
				struct ibv_srq_init_attr *srq_init_attr)
{
	struct rxdp_srq *w;

	w = srq_create(pd, srq_init_attr);
	return w ? &w->srq : NULL;
}

static int srq_call(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
	struct rxdp_ctl_obj o = { 0 };
	int ret;

	o.handle = to_srq(srq)->handle;
	o.max_recv_wr = a->max_wr;
	o.max_recv_sge = a->max_sge;
	o.srq_limit = a->srq_limit;
	o.attr_mask = (uint32_t)mask;
	ret = obj_call(srq->context, RXDP_CTL_SRQ_MODIFY, &o, NULL, NULL);
	if (!ret) {
		a->max_wr = o.max_recv_wr;
		a->max_sge = o.max_recv_sge;
		a->srq_limit = o.srq_limit;
	}
	return ret;
}

int rxdp_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		    int srq_attr_mask)
{
	struct ibv_srq_attr a;

	if (!srq || !srq_attr)
		return EINVAL;
	a = *srq_attr;
	return srq_call(srq, &a, srq_attr_mask);
}

int rxdp_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr)
{
	if (!srq || !srq_attr)
		return EINVAL;
	memset(srq_attr, 0, sizeof(*srq_attr));
	return srq_call(srq, srq_attr, 0);
}

int rxdp_destroy_srq(struct ibv_srq *srq)
{
	struct rxdp_srq *w = to_srq(srq);
	struct rxdp_ctl_obj o = { 0 };
	uint32_t none, read;
	int ret, keep;

	if (!srq)
		return EINVAL;
	o.handle = w->handle;
	ret = obj_call(srq->context, RXDP_CTL_SRQ_DESTROY, &o, NULL, NULL);
	if (ret == EBUSY || ret == EINVAL)
		return ret; /* EBUSY while a QP uses it */
	keep = rxdp_events_destroyed(srq->context, srq, w, 0, o.async_events,
				     &none, &read);
	rxdp_srq_wait_acked(srq, read);
	rxdp_pd_put(srq->pd);
	shm_unmap(&w->mem);
	pthread_spin_destroy(&w->lock);
	pthread_cond_destroy(&srq->cond);
	pthread_mutex_destroy(&srq->mutex);
	if (!keep)
		free(w);
	return 0;
}

/* --- address handles (UD) ------------------------------------------------ */

struct ibv_ah *rxdp_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_vah *w;
	struct rxdp_ah a;

	if (!pd || !attr)
		return fail_ptr(EINVAL);
	/* RoCE addresses by GID: a GRH is mandatory (IBTA A17.4.1) */
	if (!attr->is_global)
		return fail_ptr(EINVAL);
	w = calloc(1, sizeof(*w));
	if (!w)
		return fail_ptr(ENOMEM);
	rxdp_ah_from_attr(attr, &a);
	o.pd = pd->handle;
	o.cookie = (uintptr_t)w;
	if (obj_call(pd->context, RXDP_CTL_AH_CREATE, &o, &a, NULL)) {
		int err = errno;

		pr_warn("rxdp: create AH: %s\n", strerror(err));
		free(w);
		return fail_ptr(err);
	}
	w->handle = o.handle;
	w->ah.context = pd->context;
	w->ah.pd = pd;
	w->ah.handle = o.handle;
	rxdp_pd_get(pd);
	return &w->ah;
}

int rxdp_destroy_ah(struct ibv_ah *ah)
{
	struct rxdp_vah *w = (struct rxdp_vah *)ah;
	struct rxdp_ctl_obj o = { 0 };
	int ret;

	if (!ah)
		return EINVAL;
	/* WRs posted with it are taken (their path copied) first */
	{
		struct rxdp_context *c = to_rxdp_ctx(ah->context);

		pthread_mutex_lock(&c->qps_lock);
		for (struct rxdp_qp *q = c->qps; q; q = q->next)
			if (q->qp.qp_type == IBV_QPT_UD)
				sq_wait(q, false);
		pthread_mutex_unlock(&c->qps_lock);
	}
	o.handle = w->handle;
	ret = obj_call(ah->context, RXDP_CTL_AH_DESTROY, &o, NULL, NULL);
	if (ret == EINVAL)
		return ret;
	rxdp_pd_put(ah->pd);
	free(w);
	return 0;
}

/*
 * The sender's address from a UD receive's GRH area (IBTA 11.4.1.1 / RoCEv2
 * A17.4.5.1): an IPv6 header, or for IPv4 the IPv4 header in its last 20
 * bytes. dgid = the sender, sgid_index = our GID the packet was sent to.
 * 0, or -1 with errno, as rdma-core.
 */
int rxdp_init_ah_from_wc(struct ibv_context *context, uint8_t port_num,
			 struct ibv_wc *wc, struct ibv_grh *grh,
			 struct ibv_ah_attr *ah_attr)
{
	struct rxdp_context *c;
	uint8_t ours[16] = { 0 };
	const uint8_t *ip = (const uint8_t *)grh;
	uint32_t i;

	if (!context || !wc || !grh || !ah_attr ||
	    !(wc->wc_flags & IBV_WC_GRH)) {
		errno = EINVAL;
		return -1;
	}
	c = to_rxdp_ctx(context);
	memset(ah_attr, 0, sizeof(*ah_attr));
	if ((ip[0] >> 4) == 6) {
		uint32_t vtf = ntohl(grh->version_tclass_flow);

		ah_attr->grh.dgid = grh->sgid;
		memcpy(ours, grh->dgid.raw, 16);
		ah_attr->grh.flow_label = vtf & 0xfffff;
		ah_attr->grh.traffic_class = (vtf >> 20) & 0xff;
		ah_attr->grh.hop_limit = grh->hop_limit;
	} else {
		const uint8_t *v4 = ip + 20;

		if ((v4[0] >> 4) != 4) {
			errno = EINVAL;
			return -1;
		}
		ah_attr->grh.dgid.raw[10] = 0xff;
		ah_attr->grh.dgid.raw[11] = 0xff;
		memcpy(&ah_attr->grh.dgid.raw[12], v4 + 12, 4);
		ours[10] = ours[11] = 0xff;
		memcpy(&ours[12], v4 + 16, 4);
		ah_attr->grh.traffic_class = v4[1];
		ah_attr->grh.hop_limit = v4[8];
	}
	for (i = 0; i < c->dev->info.gid_tbl_len; i++) {
		struct rxdp_gid_entry g;
		int ret;

		rxdp_ctx_ctl_lock(c);
		ret = rxdp_ctl_query_gid(c->ctl, c->dev->info.ifindex, i, &g);
		rxdp_ctx_ctl_unlock(c);
		if (ret)
			break;
		if (!memcmp(g.gid, ours, 16)) {
			ah_attr->grh.sgid_index = i;
			ah_attr->is_global = 1;
			ah_attr->sl = wc->sl;
			ah_attr->port_num = port_num;
			return 0;
		}
	}
	errno = ENOENT; /* sent to an address that is not ours (any more) */
	return -1;
}

struct ibv_ah *rxdp_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc,
				      struct ibv_grh *grh, uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (rxdp_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return rxdp_create_ah(pd, &attr);
}

/*
 * Multicast (UD): the group is the GID; the LID means nothing on RoCE
 * (Annex A17 ignores it, as the kernel's ib_attach_mcast() does for
 * Ethernet ports). rxdpd checks the rest: EINVAL for a QP that is not UD
 * or a GID that is not multicast, and for a detach from a group the QP is
 * not in; ENOMEM past max_mcast_grp / max_mcast_qp_attach. Positive errno.
 */
static int mcast_call(struct ibv_qp *qp, const union ibv_gid *gid,
		      uint16_t type)
{
	struct rxdp_ctl_obj o = { 0 };
	struct rxdp_ah a = { 0 };

	if (!qp || !gid) {
		errno = EINVAL;
		return EINVAL;
	}
	o.handle = to_qp(qp)->handle;
	memcpy(a.dgid, gid->raw, sizeof(a.dgid));
	return obj_call(qp->context, type, &o, &a, NULL);
}

int rxdp_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, gid, RXDP_CTL_MCAST_ATTACH);
}

int rxdp_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
	return mcast_call(qp, gid, RXDP_CTL_MCAST_DETACH);
}
