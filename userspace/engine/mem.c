// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The owners' memory: where the engine reads and writes payload, below the
 * transport roles (req.c, resp.c, comp.c reach an owner's memory only
 * through the calls here, with that owner's addresses).
 *
 * An owner is a process whose verbs objects the engine serves (rxdpd: one
 * per client context; tests and rxdpd's own QP1: this process). Its memory
 * is reached two ways:
 *
 * - Windows: ranges of the owner's address space that this process maps
 *   too (the verbs library re-backs registered memory with a memfd and
 *   hands it over, userspace/verbs/regmem.c). A payload there is one
 *   memcpy, as an HCA's DMA is: no system call, and nothing the owner can
 *   make wait (shmem pages, sealed against shrinking: the mapping cannot
 *   SIGBUS; the owner's mmap lock is not involved). Atomics there are the
 *   CPU's own.
 * - Everything else, the batched path, through the /proc/PID/mem the owner
 *   opened itself and handed over, which may block: on the owner's mmap
 *   lock (a process that keeps it busy), on a file system that answers
 *   page faults (FUSE). So the engine never does that I/O itself: the
 *   owner's own memory thread does, one job at a time in order, and the
 *   engine goes on with the other owners' QPs meanwhile. A slow owner slows
 *   only its own QPs:
 *     - writes (received payload) are copied into a batch and queued: one
 *       pwrite per run of contiguous bytes (a burst of a message's
 *       packets), never one per packet. What depends on them waits for
 *       them: the ACKs and NAKs that would acknowledge them, read and
 *       atomic responses after them, the completions of the receives and
 *       reads they belong to (the write sequence numbers: qp->mem_seq,
 *       m->wdone). If the owner has too much queued (ENG_MEM_BUDGET), a
 *       packet that needs more is dropped and comes again (loss recovery).
 *     - reads (payload to send) are staged: a job reads up to ENG_STAGE_MAX
 *       bytes of the buffer into a staging buffer of the WQE or read
 *       response that needs them, which waits (its QP sends other things,
 *       or nothing) until they are there. A stage serves only the WQE or
 *       response it was made for: a later RDMA Read of the same bytes
 *       reads them again.
 *     - atomics are done by the memory thread (read, compute, write): the
 *       request is not taken until then, and its retransmission finds the
 *       result.
 *   A job that fails (the memory is gone) is a local or remote access
 *   error for what needed it, as a real HCA reports one. Counted in the
 *   device's payload_syscalls (one per system call) and
 *   payload_syscall_bytes.
 *
 * Windows are kept sorted by address and never overlap; they change only
 * under the engine lock, so an access (engine lock held) never meets a
 * window being unmapped. A window says nothing about rights: the MR and
 * R_Key checks come first, in the transport.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "engine/crc32.h"
#include "engine/engine_int.h"

enum job_type {
	JOB_READ,
	JOB_WRITE,
	JOB_ATOMIC,
};

/* One piece of a write batch: len bytes at off in the batch's data */
struct job_piece {
	uint64_t addr;
	uint32_t len;
	uint32_t off;
	uint32_t qpn; /* whose */
	uint32_t psn; /* responder: the request's; completer: ~0 */
	uint32_t wqe; /* completer: the SQ index of the WQE */
	uint32_t epoch; /* the QP's incarnation (rc: fenced on failure) */
	bool rc;
	bool failed; /* set by the memory thread */
};

/* Work for an owner's memory thread; the engine makes it, then only reads */
struct eng_job {
	struct eng_job *next;
	enum job_type type;
	int err; /* by the memory thread: 0 or -EFAULT */
	uint32_t nsys; /* system calls it took */
	uint64_t seq; /* writes: the owner's write sequence number */
	uint64_t bytes; /* charged to the owner's budget */
	/* read: [addr, addr+len) into buf, for stage (NULL: abandoned) */
	uint64_t addr;
	uint32_t len;
	uint8_t *buf;
	struct eng_stage *stage;
	/* write: pieces, their bytes in buf */
	struct job_piece *pc;
	uint32_t npc, cap_pc;
	uint32_t used, size;
	/* atomic at addr: its slot (NULL: abandoned), result in orig */
	struct eng_aslot *slot;
	bool cas;
	uint64_t compare, swap_add, orig;
};

#define ENG_MEM_BUDGET (8U << 20) /* bytes an owner may have in jobs */
#define ENG_BATCH_MAX (256U << 10) /* bytes of one write batch */
#define ENG_BATCH_PIECES 256

static void *mem_thread(void *arg);

/* A new owner's memory, not yet on the engine's list (obj.c puts it there) */
struct rxdp_emem *eng_mem_new(struct rxdp_engine *e, int fd)
{
	struct rxdp_emem *m;

	if (fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->e = e;
	m->fd = fd;
	m->io_fd = m->wake_fd = -1;
	m->refs = 1;
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	return m;
}

static void job_free(struct eng_job *j)
{
	if (!j)
		return;
	free(j->buf);
	free(j->pc);
	free(j);
}

static void mem_put(struct rxdp_emem *m)
{
	struct eng_job *j;
	int refs;

	pthread_mutex_lock(&m->lock);
	refs = --m->refs;
	pthread_mutex_unlock(&m->lock);
	if (refs)
		return;
	while ((j = m->todo)) {
		m->todo = j->next;
		job_free(j);
	}
	while ((j = m->done)) {
		m->done = j->next;
		job_free(j);
	}
	if (m->wake_fd >= 0)
		close(m->wake_fd);
	if (m->io_fd >= 0)
		close(m->io_fd);
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	free(m->win);
	free(m);
}

/* Engine lock held, m off the engine's list: the batch it was filling */
void eng_mem_close(struct rxdp_emem *m)
{
	job_free(m->open);
	m->open = NULL;
}

/*
 * Engine lock not held (obj.c): its memory thread, if it is still in a
 * system call the owner holds up, goes when that returns (it has its own
 * fds): the caller never waits for it.
 */
void eng_mem_stop(struct rxdp_emem *m)
{
	pthread_mutex_lock(&m->lock);
	m->stop = true;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
	mem_put(m);
}

/* --- windows ------------------------------------------------------------ */

/* The index of the first window that ends after addr (nwin: none) */
static uint32_t win_search(const struct rxdp_emem *m, uint64_t addr)
{
	uint32_t lo = 0, hi = m->nwin;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct eng_win *w = &m->win[mid];

		if (w->addr + w->len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Engine lock held: a window from addr, len bytes, at local here */
int eng_mem_win_add(struct rxdp_emem *m, uint64_t addr, uint64_t len,
		    void *local)
{
	uint32_t i;
	int err = 0;

	i = win_search(m, addr);
	if (i < m->nwin && m->win[i].addr < addr + len) {
		err = -EEXIST;
	} else if (m->nwin == m->cap) {
		uint32_t cap = m->cap ? m->cap * 2 : 8;
		struct eng_win *w = realloc(m->win, cap * sizeof(*w));

		if (w) {
			m->win = w;
			m->cap = cap;
		} else {
			err = -ENOMEM;
		}
	}
	if (!err) {
		memmove(&m->win[i + 1], &m->win[i],
			(m->nwin - i) * sizeof(*m->win));
		m->win[i] = (struct eng_win){ .addr = addr,
					      .len = len,
					      .local = local };
		m->nwin++;
	}
	return err;
}

/* Engine lock held: the window that starts at addr goes */
int eng_mem_win_del(struct rxdp_emem *m, uint64_t addr)
{
	uint32_t i;
	int err = -ENOENT;

	i = win_search(m, addr);
	if (i < m->nwin && m->win[i].addr == addr) {
		memmove(&m->win[i], &m->win[i + 1],
			(m->nwin - i - 1) * sizeof(*m->win));
		m->nwin--;
		m->hint = 0;
		err = 0;
	}
	return err;
}

/*
 * The window holding addr, or NULL and *gap: how many bytes from addr on
 * are in no window. The last window found is tried first: a message's
 * packets land in the same one.
 */
static const struct eng_win *win_find(struct rxdp_emem *m, uint64_t addr,
				      uint64_t *gap)
{
	const struct eng_win *w;
	uint32_t i;

	if (m->hint < m->nwin) {
		w = &m->win[m->hint];
		if (addr >= w->addr && addr - w->addr < w->len)
			return w;
	}
	i = win_search(m, addr);
	if (i < m->nwin && m->win[i].addr <= addr) {
		m->hint = i;
		return &m->win[i];
	}
	*gap = i < m->nwin ? m->win[i].addr - addr : UINT64_MAX - addr;
	return NULL;
}

/*
 * [addr, addr+len) here, if it is all in one window (or this process):
 * the pointer, else NULL
 */
static uint8_t *mem_local(struct rxdp_emem *m, uint64_t addr, uint64_t len)
{
	const struct eng_win *w;
	uint64_t gap;

	if (m == &m->e->mem0)
		return (uint8_t *)(uintptr_t)addr;
	w = win_find(m, addr, &gap);
	if (!w || len > w->len - (addr - w->addr))
		return NULL;
	return w->local + (addr - w->addr);
}

bool eng_mem_direct(struct rxdp_epd *pd, uint64_t addr, uint64_t len)
{
	struct rxdp_emem *m = pd->m;

	if (m == &m->e->mem0)
		return true;
	while (len) {
		uint64_t gap, n;
		const struct eng_win *w = win_find(m, addr, &gap);

		if (!w)
			return false;
		n = w->len - (addr - w->addr);
		if (n >= len)
			return true;
		addr += n;
		len -= n;
	}
	return true;
}

/* --- the memory thread ---------------------------------------------------- */

/*
 * Whether an RC QP's write must not happen: one of its writes before it
 * failed. The engine learns of that failure only after the memory thread,
 * and meanwhile it may have queued the request's later packets (into the
 * pages after a hole) and later requests; the QP goes to ERR for the
 * first, and on the wire, where the responder stops at the error, nothing
 * after it lands. Those are skipped and fail too. A fence holds until the
 * QP's next incarnation (a reset); the oldest goes when all are taken.
 */
static bool write_fenced(struct rxdp_emem *m, const struct job_piece *pc)
{
	for (uint32_t i = 0; i < m->nfence; i++) {
		struct eng_fence *f = &m->fence[i];

		if (f->qpn != pc->qpn)
			continue;
		if (f->epoch == pc->epoch)
			return true;
		*f = m->fence[--m->nfence]; /* a new incarnation: lifted */
		return false;
	}
	return false;
}

static void write_fence(struct rxdp_emem *m, const struct job_piece *pc)
{
	if (!pc->rc || write_fenced(m, pc))
		return;
	if (m->nfence == ENG_MEM_FENCES)
		memmove(m->fence, m->fence + 1,
			--m->nfence * sizeof(m->fence[0]));
	m->fence[m->nfence++] =
		(struct eng_fence){ .qpn = pc->qpn, .epoch = pc->epoch };
}

static void job_write_run(struct rxdp_emem *m, struct eng_job *j)
{
	for (uint32_t i = 0; i < j->npc;) {
		/* a run of one QP's contiguous pieces is contiguous in buf too */
		const struct job_piece *pc = &j->pc[i];
		uint32_t k = i + 1, len = pc->len;
		ssize_t n = -1;

		while (k < j->npc && j->pc[k].qpn == pc->qpn &&
		       j->pc[k].addr == j->pc[k - 1].addr + j->pc[k - 1].len &&
		       j->pc[k].off == j->pc[k - 1].off + j->pc[k - 1].len)
			len += j->pc[k++].len;
		if (!write_fenced(m, pc)) {
			n = pwrite(m->io_fd, j->buf + pc->off, len,
				   (off_t)pc->addr);
			j->nsys++;
		}
		if (n != (ssize_t)len) {
			j->err = -EFAULT;
			for (uint32_t p = i; p < k; p++)
				j->pc[p].failed = true;
			write_fence(m, pc);
		}
		i = k;
	}
}

static void job_run(struct rxdp_emem *m, struct eng_job *j)
{
	uint64_t v;

	switch (j->type) {
	case JOB_READ:
		j->nsys++;
		if (pread(m->io_fd, j->buf, j->len, (off_t)j->addr) !=
		    (ssize_t)j->len)
			j->err = -EFAULT;
		break;
	case JOB_WRITE:
		job_write_run(m, j);
		break;
	case JOB_ATOMIC:
		j->nsys++;
		if (pread(m->io_fd, &j->orig, 8, (off_t)j->addr) != 8) {
			j->err = -EFAULT;
			break;
		}
		v = j->cas ? (j->orig == j->compare ? j->swap_add : j->orig)
			   : j->orig + j->swap_add;
		if (v != j->orig) {
			j->nsys++;
			if (pwrite(m->io_fd, &v, 8, (off_t)j->addr) != 8)
				j->err = -EFAULT;
		}
		break;
	}
}

/*
 * The owner's memory thread: its jobs in order. Only it ever waits for
 * the owner's memory; it holds no lock meanwhile.
 */
static void *mem_thread(void *arg)
{
	struct rxdp_emem *m = arg;
	uint64_t one = 1;

	pthread_setname_np(pthread_self(), "rxdp-memory");
	for (;;) {
		struct eng_job *j;

		pthread_mutex_lock(&m->lock);
		while (!m->todo && !m->stop)
			pthread_cond_wait(&m->cond, &m->lock);
		if (m->stop) {
			pthread_mutex_unlock(&m->lock);
			break;
		}
		j = m->todo;
		m->todo = j->next;
		if (!m->todo)
			m->todo_tail = NULL;
		pthread_mutex_unlock(&m->lock);
		job_run(m, j);
		pthread_mutex_lock(&m->lock);
		j->next = NULL;
		if (m->done_tail)
			m->done_tail->next = j;
		else
			m->done = j;
		m->done_tail = j;
		pthread_mutex_unlock(&m->lock);
		atomic_store(&m->pending, 1);
		if (write(m->wake_fd, &one, sizeof(one)) < 0) {
			/* the counter is non-zero already: the engine wakes */
		}
	}
	mem_put(m);
	return NULL;
}

/* Start the owner's memory thread (at its first job); -errno */
static int mem_thread_start(struct rxdp_emem *m)
{
	pthread_attr_t a;
	pthread_t t;
	int err;

	if (m->thread_up)
		return 0;
	m->io_fd = fcntl(m->fd, F_DUPFD_CLOEXEC, 0);
	m->wake_fd = fcntl(m->e->evfd, F_DUPFD_CLOEXEC, 0);
	if (m->io_fd < 0 || m->wake_fd < 0) {
		err = -errno;
		goto fail;
	}
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	m->refs++; /* the thread's */
	err = -pthread_create(&t, &a, mem_thread, m);
	pthread_attr_destroy(&a);
	if (err) {
		m->refs--;
		goto fail;
	}

	m->thread_up = true;
	return 0;
fail:
	if (m->io_fd >= 0)
		close(m->io_fd);
	if (m->wake_fd >= 0)
		close(m->wake_fd);
	m->io_fd = m->wake_fd = -1;
	return err;
}

static void job_queue(struct rxdp_emem *m, struct eng_job *j)
{
	j->next = NULL;
	pthread_mutex_lock(&m->lock);
	if (m->todo_tail)
		m->todo_tail->next = j;
	else
		m->todo = j;
	m->todo_tail = j;
	pthread_cond_signal(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

/* The write batch filled during this pass goes to the memory thread */
static void batch_submit(struct rxdp_emem *m)
{
	if (m->open) {
		job_queue(m, m->open);
		m->open = NULL;
	}
}

/* Engine lock held: hand over what this pass queued */
void eng_mem_submit(struct rxdp_engine *e)
{
	for (struct rxdp_emem *m = e->mems; m; m = m->next)
		batch_submit(m);
}

/* A job of the given kind and buffer size, charged; NULL if over budget */
static struct eng_job *job_new(struct rxdp_emem *m, enum job_type type,
			       uint32_t size)
{
	struct eng_job *j;

	if (m->bytes + size > ENG_MEM_BUDGET || mem_thread_start(m))
		return NULL;
	j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	if (size && !(j->buf = malloc(size))) {
		free(j);
		return NULL;
	}
	j->type = type;
	j->size = size;
	j->bytes = size;
	m->bytes += size;
	return j;
}

/* --- writes ---------------------------------------------------------------- */

/*
 * Queue a write of len bytes at addr (no window there) into the open
 * batch: 0, or -EAGAIN if the owner has too much queued
 */
static int write_queue(struct rxdp_eqp *qp, uint64_t addr, const void *src,
		       uint32_t len, const struct eng_wtag *tag)
{
	struct rxdp_emem *m = qp->pd->m;
	struct eng_job *j = m->open;
	struct job_piece *pc;

	if (j && (j->used + len > j->size || j->npc == j->cap_pc)) {
		batch_submit(m);
		j = NULL;
	}
	if (!j) {
		j = job_new(m, JOB_WRITE,
			    len > ENG_BATCH_MAX ? len : ENG_BATCH_MAX);
		if (!j)
			return -EAGAIN;
		j->pc = calloc(ENG_BATCH_PIECES, sizeof(*j->pc));
		if (!j->pc) {
			m->bytes -= j->bytes;
			job_free(j);
			return -EAGAIN;
		}
		j->cap_pc = ENG_BATCH_PIECES;
		j->seq = ++m->wseq;
		m->open = j;
	}
	memcpy(j->buf + j->used, src, len);
	pc = &j->pc[j->npc++];
	*pc = (struct job_piece){ .addr = addr,
				  .len = len,
				  .off = j->used,
				  .qpn = qp->qpn,
				  .psn = tag ? tag->psn : ~0U,
				  .wqe = tag ? tag->wqe : 0,
				  .epoch = qp->mem_epoch,
				  .rc = qp->type == IBV_QPT_RC };
	if (!tag)
		pc->psn = ~0U;
	j->used += len;
	qp->mem_seq = j->seq;
	return 0;
}

/*
 * Write len bytes at the owner's addr for qp: at once where rxdpd maps
 * them, else queued (qp->mem_seq says which batch; what depends on it
 * waits for it). tag says what they belong to, for an error found later
 * (NULL: a responder write with no PSN to name). 0, or -EAGAIN: the owner
 * has too much queued, nothing was written: drop what needed it.
 */
int eng_mem_write(struct rxdp_eqp *qp, uint64_t addr, const void *src,
		  size_t len, const struct eng_wtag *tag)
{
	struct rxdp_emem *m = qp->pd->m;
	struct rxdp_engine *e = qp->e;
	const uint8_t *p = src;
	uint8_t *at;

	if (!len)
		return 0;
	if ((at = mem_local(m, addr, len))) { /* the fast path */
		memcpy(at, src, len);
		e->hwc[RXDP_HWC_PAYLOAD_DIRECT_BYTES] += len;
		return 0;
	}
	/*
	 * What was written or queued before an -EAGAIN is written again by
	 * the retransmission: the same bytes, as they come with the same PSN
	 */
	while (len) {
		uint64_t n = len, gap = 0;
		const struct eng_win *w = win_find(m, addr, &gap);

		if (w) {
			if (n > w->len - (addr - w->addr))
				n = w->len - (addr - w->addr);
			memcpy(w->local + (addr - w->addr), p, n);
			e->hwc[RXDP_HWC_PAYLOAD_DIRECT_BYTES] += n;
		} else {
			if (n > gap)
				n = gap;
			if (write_queue(qp, addr, p, (uint32_t)n, tag))
				return -EAGAIN;
		}
		p += n;
		addr += n;
		len -= n;
	}
	return 0;
}

/* --- reads: stages --------------------------------------------------------- */

static void stage_drop(struct eng_stage *s)
{
	if (s->job) {
		s->job->stage = NULL; /* the job frees its buffer when done */
		s->job = NULL;
	} else if (s->buf) {
		s->m->bytes -= s->len;
		free(s->buf);
	}
	s->buf = NULL;
	s->state = STAGE_EMPTY;
}

/* The stage serves who (a WQE or read response, gen) from now on */
void eng_stage_use(struct eng_stage *s, struct rxdp_epd *pd, const void *who,
		   uint32_t gen)
{
	if (s->who == who && s->gen == gen && s->m == pd->m)
		return;
	if (s->m)
		stage_drop(s);
	s->m = pd->m;
	s->who = who;
	s->gen = gen;
}

void eng_stage_release(struct eng_stage *s)
{
	if (s->m)
		stage_drop(s);
	s->m = NULL;
	s->who = NULL;
}

/* The owner's bytes into a frame, the ICRC carried over them if asked */
static void stage_copy(void *dst, const void *src, size_t len, uint32_t *crc)
{
	if (crc)
		*crc = rxdp_crc32_copy(*crc, dst, src, len);
	else
		memcpy(dst, src, len);
}

/*
 * pkt_build's reader (arg: an eng_stage, already given to the WQE or
 * response the packet is of). span: how many bytes of the buffer there
 * are from addr on, which a stage may read ahead. crc: NULL, or the ICRC
 * so far, carried over the bytes copied. 0, -EAGAIN (staging: try again
 * when the memory thread is done), -EFAULT.
 */
int eng_stage_read(void *arg, void *dst, uint64_t addr, size_t len,
		   uint64_t span, uint32_t *crc)
{
	struct eng_stage *s = arg;
	struct rxdp_emem *m = s->m;
	struct rxdp_engine *e = m->e;
	struct eng_job *j;
	uint8_t *at;
	uint32_t n;

	if (!len)
		return 0;
	if ((at = mem_local(m, addr, len))) {
		stage_copy(dst, at, len, crc);
		if (m != &e->mem0)
			e->hwc[RXDP_HWC_PAYLOAD_DIRECT_BYTES] += len;
		return 0;
	}
	if (s->state == STAGE_READY && addr >= s->addr &&
	    addr + len <= s->addr + s->len) {
		stage_copy(dst, s->buf + (addr - s->addr), len, crc);
		return 0;
	}
	if (s->state == STAGE_FAILED && addr >= s->addr &&
	    addr - s->addr < s->len) {
		stage_drop(s);
		e->stats.mem_faults++;
		return -EFAULT;
	}
	if (s->state == STAGE_PENDING)
		return -EAGAIN;
	/*
	 * A piece of a window and a piece of the rest (rare): the window's
	 * bytes are read again from the stage's copy, which has them too
	 */
	stage_drop(s);
	n = span > ENG_STAGE_MAX ? ENG_STAGE_MAX : (uint32_t)span;
	if (n < len)
		n = (uint32_t)len;
	/* what was queued before is read after it */
	batch_submit(m);
	j = job_new(m, JOB_READ, n);
	if (!j)
		return -EAGAIN;
	j->addr = addr;
	j->len = n;
	j->stage = s;
	s->job = j;
	s->addr = addr;
	s->len = n;
	s->state = STAGE_PENDING;
	job_queue(m, j);
	return -EAGAIN;
}

/* --- atomics -------------------------------------------------------------- */

/*
 * An 8-byte atomic at the owner's addr (8-byte aligned) for qp's request
 * at psn: in a window, the CPU's own atomic, with *orig the value before;
 * elsewhere the memory thread does it and the request waits (-EAGAIN: not
 * taken; its retransmission finds the result in qp->aslot). -EFAULT if
 * the memory is gone.
 */
int eng_mem_atomic(struct rxdp_eqp *qp, uint32_t psn, uint64_t addr, bool cas,
		   uint64_t compare, uint64_t swap_add, uint64_t *orig)
{
	struct rxdp_emem *m = qp->pd->m;
	struct eng_aslot *a = &qp->aslot;
	uint64_t *p = (uint64_t *)mem_local(m, addr, 8);
	struct eng_job *j;

	if (p) {
		if (cas) {
			*orig = compare;
			__atomic_compare_exchange_n(p, orig, swap_add, false,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
		} else {
			*orig = __atomic_fetch_add(p, swap_add,
						   __ATOMIC_SEQ_CST);
		}
		return 0;
	}
	if (a->job)
		return -EAGAIN;
	if (a->done) {
		a->done = false;
		if (a->psn == psn && a->addr == addr) {
			*orig = a->orig;
			if (a->err)
				qp->e->stats.mem_faults++;
			return a->err;
		}
		/* the result of a request that went away (a reset) */
	}
	batch_submit(m);
	j = job_new(m, JOB_ATOMIC, 0);
	if (!j)
		return -EAGAIN;
	j->addr = addr;
	j->cas = cas;
	j->compare = compare;
	j->swap_add = swap_add;
	j->slot = a;
	a->job = j;
	a->psn = psn;
	a->addr = addr;
	job_queue(m, j);
	return -EAGAIN;
}

/*
 * An Atomic Write (IBTA 1.5 A19) of 8 bytes at the owner's addr (8-byte
 * aligned): in a window one store of the CPU's, which no reader sees torn,
 * ordered after the writes before it; elsewhere queued with the other
 * writes for the memory thread, whose pwrite() of 8 aligned bytes is as
 * atomic as its atomics are (it writes their results the same way).
 * 0, or -EAGAIN as eng_mem_write.
 */
int eng_mem_store64(struct rxdp_eqp *qp, uint64_t addr, uint64_t v,
		    const struct eng_wtag *tag)
{
	uint64_t *p = (uint64_t *)mem_local(qp->pd->m, addr, 8);

	if (p) {
		__atomic_store_n(p, v, __ATOMIC_RELEASE);
		qp->e->hwc[RXDP_HWC_PAYLOAD_DIRECT_BYTES] += 8;
		return 0;
	}
	return eng_mem_write(qp, addr, &v, 8, tag);
}

/* --- completions (engine lock held) ------------------------------------------ */

/*
 * A write to a QP's memory failed: what it was for fails too, which is the
 * transport's to do (recv.c): kept for it in e->mem_faults
 */
static void write_failed(struct rxdp_engine *e, const struct job_piece *pc,
			 uint64_t seq)
{
	struct eng_mem_fault *f = e->mem_faults;

	e->stats.mem_faults++;
	if (e->nmem_faults == e->mem_faults_cap) {
		uint32_t cap = e->mem_faults_cap ? e->mem_faults_cap * 2 : 8;

		f = realloc(e->mem_faults, cap * sizeof(*f));
		if (!f) {
			pr_warn("engine: QP %u: a failed write is lost "
				"(ENOMEM)\n",
				pc->qpn);
			return;
		}
		e->mem_faults = f;
		e->mem_faults_cap = cap;
	}
	f[e->nmem_faults++] = (struct eng_mem_fault){
		.qpn = pc->qpn, .psn = pc->psn, .wqe = pc->wqe, .seq = seq
	};
}

static void job_done(struct rxdp_engine *e, struct rxdp_emem *m,
		     struct eng_job *j)
{
	e->hwc[RXDP_HWC_PAYLOAD_SYSCALLS] += j->nsys;
	switch (j->type) {
	case JOB_READ:
		e->hwc[RXDP_HWC_PAYLOAD_SYSCALL_BYTES] += j->len;
		if (j->stage) {
			j->stage->job = NULL;
			j->stage->buf = j->buf;
			j->stage->state = j->err ? STAGE_FAILED : STAGE_READY;
			j->buf = NULL; /* the stage's now, still charged */
			j->bytes = 0;
		}
		break;
	case JOB_WRITE:
		e->hwc[RXDP_HWC_PAYLOAD_SYSCALL_BYTES] += j->used;
		if (j->err)
			for (uint32_t i = 0; i < j->npc; i++)
				if (j->pc[i].failed)
					write_failed(e, &j->pc[i], j->seq);
		m->wdone = j->seq;
		break;
	case JOB_ATOMIC:
		e->hwc[RXDP_HWC_PAYLOAD_SYSCALL_BYTES] += 8;
		if (j->slot) {
			j->slot->job = NULL;
			j->slot->done = true;
			j->slot->orig = j->orig;
			j->slot->err = j->err;
		}
		break;
	}
	m->bytes -= j->bytes;
	job_free(j);
}

/*
 * Engine lock held: what the memory threads finished. Returns how many
 * jobs; the writes that failed are in e->mem_faults, and the QPs waiting
 * for writes may go on: both the transport's to see to (recv.c).
 */
int eng_mem_poll(struct rxdp_engine *e)
{
	int n = 0;

	for (struct rxdp_emem *m = e->mems; m; m = m->next) {
		struct eng_job *j;

		if (!atomic_load(&m->pending))
			continue;
		atomic_store(&m->pending, 0);
		pthread_mutex_lock(&m->lock);
		j = m->done;
		m->done = m->done_tail = NULL;
		pthread_mutex_unlock(&m->lock);
		while (j) {
			struct eng_job *next = j->next;

			job_done(e, m, j);
			j = next;
			n++;
		}
	}
	return n;
}

/* Engine lock held: the writes qp queued are all done */
bool eng_mem_written(struct rxdp_eqp *qp, uint64_t seq)
{
	if (seq <= qp->pd->m->wdone)
		return true;
	qp->mem_wait = true;
	return false;
}

/* A QP goes away: its stages and atomic are abandoned */
void eng_mem_qp_gone(struct rxdp_eqp *qp)
{
	eng_stage_release(&qp->stage_req);
	eng_stage_release(&qp->stage_resp);
	if (qp->aslot.job)
		qp->aslot.job->slot = NULL;
	qp->aslot.job = NULL;
}
