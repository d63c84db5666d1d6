// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The inboxes of a group's engines (a service of the core and the
 * transport): a frame one engine hands another, copied into its inbox, and
 * that engine woken.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "engine/engine_int.h"

void eng_wake(struct rxdp_engine *e)
{
	uint64_t one = 1;

	atomic_store(&e->work, 1);
	if (atomic_load(&e->sleep_until) &&
	    write(e->evfd, &one, sizeof(one)) < 0) {
		/* the counter is already non-zero: it will wake */
	}
}

/*
 * A copy of frame f into the inbox of engine to (the group's read lock
 * held, which keeps it from going)
 */
void eng_inbox_put_to(struct rxdp_engine *e, struct rxdp_engine *to,
		      const struct rxdp_frame *f, bool looped)
{
	struct eng_inbox *in = &to->inbox;
	uint32_t tail;

	pthread_mutex_lock(&in->lock);
	tail = atomic_load_explicit(&in->tail, memory_order_relaxed);
	if (f->len > ENG_INBOX_FRAME ||
	    tail - atomic_load_explicit(&in->head, memory_order_acquire) >=
		    ENG_INBOX_SLOTS) {
		pthread_mutex_unlock(&in->lock);
		e->stats.rx_drop_handoff++;
		return;
	}
	in->slot[tail % ENG_INBOX_SLOTS].len = f->len;
	memcpy(in->slot[tail % ENG_INBOX_SLOTS].data, f->data, f->len);
	atomic_store_explicit(&in->tail, tail + 1, memory_order_release);
	pthread_mutex_unlock(&in->lock);
	e->stats.rx_handoffs++;
	if (looped)
		return;
	eng_wake(to);
	/*
	 * Handing over is this thread's work as much as the transport: a
	 * stream of it makes a stream here too (a FIFO thread busy with it
	 * would keep the applications on its CPU from running); looped-back
	 * frames are no stream, here as anywhere
	 */
	eng_sched_data(&e->sched, true, true);
	eng_sched_msg(&e->sched, true);
}

/* A copy of frame f into the inbox of the group's engine number owner */
void eng_inbox_put(struct rxdp_engine *e, int owner, const struct rxdp_frame *f,
		   bool looped)
{
	struct rxdp_engine_group *g = e->cfg.group;
	struct rxdp_engine *to;

	pthread_rwlock_rdlock(&g->lock);
	to = g->e[owner];
	if (to)
		eng_inbox_put_to(e, to, f, looped);
	else /* going away with its QPs */
		e->stats.rx_drop_handoff++;
	pthread_rwlock_unlock(&g->lock);
}
