// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Completion queues (the API: each call takes the engine lock): the rings
 * (common/hca.h) the engine produces into under its lock and their owner
 * polls (the verbs library in the application, or the ring's own poller in
 * tests: rxdp_hca_poll), resized, timestamped, notified. What goes into
 * them is cqe.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "engine/engine_int.h"

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

struct rxdp_engine *rxdp_engine_cq_ring(struct rxdp_ecq *cq,
					struct rxdp_hca_cq **sh, uint32_t *size)
{
	*sh = cq->sh;
	*size = cq->size;
	return cq->e;
}

bool rxdp_engine_cq_overflow(struct rxdp_ecq *cq)
{
	return atomic_load_explicit(&cq->sh->overflow, memory_order_acquire);
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
