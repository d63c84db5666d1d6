// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The verbs library's event machinery, white box: events written the way
 * rxdpd writes them (cq_notify: a CQ pointer into the channel's pipe;
 * async_post: a struct rxdp_hca_event into the context's pipe, through
 * the fake rxdpd's write ends) against what applications call. Completion
 * events come out of ibv_get_cq_event in order and wake poll/epoll on the
 * channel fd; async events come out of ibv_get_async_event, and their acks
 * are counted on the right object so a destroy that waits for them returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <cmocka.h>

#include "fake_rxdpd.h"
#include "verbs/verbs_priv.h"

/* What rxdpd does when an armed CQ gets a completion */
static int rxdp_cq_notify(struct ibv_cq *cq)
{
	struct rxdp_comp_channel *ch = (struct rxdp_comp_channel *)cq->channel;
	uint64_t cookie = (uintptr_t)cq;

	if (!ch)
		return -EINVAL;
	return write(fake_rxdpd_channel_wfd(ch->handle), &cookie,
		     sizeof(cookie)) == sizeof(cookie)
		       ? 0
		       : -errno;
}

/* What rxdpd writes for an async event */
static int rxdp_async_event_post(struct ibv_context *ctx,
				 const struct ibv_async_event *ev)
{
	struct rxdp_hca_event r = { .type = ev->event_type };

	(void)ctx;
	switch (ev->event_type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_GID_CHANGE:
		r.port = (uint32_t)ev->element.port_num;
		break;
	case IBV_EVENT_DEVICE_FATAL:
		break;
	default: /* the element is a pointer, whichever it is */
		r.cookie = (uintptr_t)ev->element.qp;
		break;
	}
	return write(fake_rxdpd_async_wfd(), &r, sizeof(r)) == sizeof(r)
		       ? 0
		       : -errno;
}

static struct ibv_context *open_a(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	assert_non_null(list);
	for (i = 0; list[i]; i++)
		if (!strcmp(list[i]->name, "rxdp_veth7"))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	assert_non_null(ctx);
	return ctx;
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static void test_cq_events(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq cq1, cq2, *got;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	void *cq_ctx;
	int ep, i;

	assert_non_null(ch);
	memset(&cq1, 0, sizeof(cq1));
	memset(&cq2, 0, sizeof(cq2));
	verbs_init_cq(&cq1, ctx, ch, (void *)0x1111);
	verbs_init_cq(&cq2, ctx, ch, (void *)0x2222);
	assert_int_equal(ch->refcnt, 2);

	ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(ep >= 0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, ch->fd, &ev), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 0);

	assert_int_equal(rxdp_cq_notify(&cq1), 0);
	assert_int_equal(rxdp_cq_notify(&cq2), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, 0), 1);
	assert_true(readable(ch->fd));

	/* in the order queued, each with its CQ's context */
	assert_int_equal(ibv_get_cq_event(ch, &got, &cq_ctx), 0);
	assert_ptr_equal(got, &cq1);
	assert_ptr_equal(cq_ctx, (void *)0x1111);
	assert_int_equal(ibv_get_cq_event(ch, &got, &cq_ctx), 0);
	assert_ptr_equal(got, &cq2);
	assert_ptr_equal(cq_ctx, (void *)0x2222);
	assert_false(readable(ch->fd));

	/* many events queue up without loss */
	for (i = 0; i < 1000; i++)
		assert_int_equal(rxdp_cq_notify(i & 1 ? &cq2 : &cq1), 0);
	for (i = 0; i < 1000; i++) {
		assert_int_equal(ibv_get_cq_event(ch, &got, &cq_ctx), 0);
		assert_ptr_equal(got, i & 1 ? &cq2 : &cq1);
	}
	assert_false(readable(ch->fd));

	ibv_ack_cq_events(&cq1, 501);
	ibv_ack_cq_events(&cq2, 501);
	/* returns at once: everything delivered was acked */
	rxdp_cq_wait_acked(&cq1, 501, 0);
	rxdp_cq_wait_acked(&cq2, 501, 0);

	rxdp_cq_fini(&cq1);
	assert_int_equal(ibv_destroy_comp_channel(ch), EBUSY);
	rxdp_cq_fini(&cq2);
	assert_int_equal(ch->refcnt, 0);
	close(ep);
	assert_int_equal(ibv_destroy_comp_channel(ch), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_cq_without_channel(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_cq cq;

	memset(&cq, 0, sizeof(cq));
	verbs_init_cq(&cq, ctx, NULL, NULL);
	assert_int_equal(rxdp_cq_notify(&cq), -EINVAL);
	rxdp_cq_fini(&cq);
	assert_int_equal(ibv_close_device(ctx), 0);
}

struct acker {
	struct ibv_cq *cq;
	int n;
};

static void *ack_later(void *arg)
{
	struct acker *a = arg;
	int i;

	for (i = 0; i < a->n; i++) {
		usleep(2000);
		ibv_ack_cq_events(a->cq, 1);
	}
	return NULL;
}

/* ibv_destroy_cq's wait: blocks until the other thread has acked all */
static void test_destroy_waits_for_acks(void **state)
{
	struct ibv_context *ctx = open_a();
	struct acker a;
	struct ibv_cq cq;
	pthread_t t;

	memset(&cq, 0, sizeof(cq));
	verbs_init_cq(&cq, ctx, NULL, NULL);
	a.cq = &cq;
	a.n = 5;
	assert_int_equal(pthread_create(&t, NULL, ack_later, &a), 0);
	rxdp_cq_wait_acked(&cq, 5, 0);
	assert_int_equal(cq.comp_events_completed, 5);
	pthread_join(t, NULL);
	rxdp_cq_fini(&cq);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_async_events(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_async_event in, out;
	struct ibv_qp qp;
	struct ibv_srq srq;
	struct ibv_cq cq;

	memset(&qp, 0, sizeof(qp));
	memset(&srq, 0, sizeof(srq));
	memset(&cq, 0, sizeof(cq));
	pthread_mutex_init(&qp.mutex, NULL);
	pthread_cond_init(&qp.cond, NULL);
	pthread_mutex_init(&srq.mutex, NULL);
	pthread_cond_init(&srq.cond, NULL);
	verbs_init_cq(&cq, ctx, NULL, NULL);

	assert_false(readable(ctx->async_fd));
	in.element.qp = &qp;
	in.event_type = IBV_EVENT_QP_FATAL;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	in.element.srq = &srq;
	in.event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	in.element.cq = &cq;
	in.event_type = IBV_EVENT_CQ_ERR;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	in.element.port_num = 1;
	in.event_type = IBV_EVENT_PORT_ACTIVE;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	assert_true(readable(ctx->async_fd));

	assert_int_equal(ibv_get_async_event(ctx, &out), 0);
	assert_int_equal(out.event_type, IBV_EVENT_QP_FATAL);
	assert_ptr_equal(out.element.qp, &qp);
	ibv_ack_async_event(&out);
	assert_int_equal(qp.events_completed, 1);
	rxdp_qp_wait_acked(&qp, 1);

	assert_int_equal(ibv_get_async_event(ctx, &out), 0);
	assert_int_equal(out.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	ibv_ack_async_event(&out);
	assert_int_equal(srq.events_completed, 1);
	rxdp_srq_wait_acked(&srq, 1);

	assert_int_equal(ibv_get_async_event(ctx, &out), 0);
	assert_int_equal(out.event_type, IBV_EVENT_CQ_ERR);
	ibv_ack_async_event(&out);
	assert_int_equal(cq.async_events_completed, 1);
	assert_int_equal(cq.comp_events_completed, 0);
	rxdp_cq_wait_acked(&cq, 0, 1);

	assert_int_equal(ibv_get_async_event(ctx, &out), 0);
	assert_int_equal(out.event_type, IBV_EVENT_PORT_ACTIVE);
	assert_int_equal(out.element.port_num, 1);
	ibv_ack_async_event(&out); /* no object: nothing to count */
	assert_false(readable(ctx->async_fd));

	rxdp_cq_fini(&cq);
	pthread_cond_destroy(&qp.cond);
	pthread_mutex_destroy(&qp.mutex);
	pthread_cond_destroy(&srq.cond);
	pthread_mutex_destroy(&srq.mutex);
	assert_int_equal(ibv_close_device(ctx), 0);
}

/*
 * As uverbs: a destroy waits for the acks of the events the application
 * read, never for those it did not read (a program that ignores async
 * events must not hang in ibv_destroy_qp after a QP error); those are
 * skipped when read, and the object's memory lives until then.
 */
static void test_destroy_discards_unread(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_async_event in, out;
	struct ibv_qp *gone = calloc(1, sizeof(*gone));
	struct ibv_qp kept;
	uint32_t comp_read = 9, async_read = 9;

	assert_non_null(gone);
	memset(&kept, 0, sizeof(kept));
	memset(&in, 0, sizeof(in));

	/* read and acked before the destroy: waited for, nothing kept */
	in.event_type = IBV_EVENT_QP_FATAL;
	in.element.qp = &kept;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	assert_int_equal(ibv_get_async_event(ctx, &out), 0);
	assert_ptr_equal(out.element.qp, &kept);
	assert_int_equal(rxdp_events_destroyed(ctx, &kept, NULL, 0, 1,
					       &comp_read, &async_read),
			 0);
	assert_int_equal(comp_read, 0);
	assert_int_equal(async_read, 1);

	/* two never read: not waited for, skipped, the memory kept meanwhile */
	in.element.qp = gone;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	in.event_type = IBV_EVENT_QP_LAST_WQE_REACHED;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	in.event_type = IBV_EVENT_PORT_ACTIVE;
	in.element.port_num = 1;
	assert_int_equal(rxdp_async_event_post(ctx, &in), 0);
	assert_int_equal(rxdp_events_destroyed(ctx, gone, gone, 0, 2,
					       &comp_read, &async_read),
			 1);
	assert_int_equal(async_read, 0);
	assert_int_equal(ibv_get_async_event(ctx, &out), 0);
	assert_int_equal(out.event_type, IBV_EVENT_PORT_ACTIVE);
	assert_false(readable(ctx->async_fd));

	/* an object without events: nothing kept, nothing to wait for */
	assert_int_equal(rxdp_events_destroyed(ctx, &in, NULL, 0, 0, &comp_read,
					       &async_read),
			 0);
	assert_int_equal(async_read, 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

static void test_pd_in_use(void **state)
{
	struct ibv_context *ctx = open_a();
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	assert_non_null(pd);
	rxdp_pd_get(pd);
	rxdp_pd_get(pd);
	assert_int_equal(ibv_dealloc_pd(pd), EBUSY);
	rxdp_pd_put(pd);
	assert_int_equal(ibv_dealloc_pd(pd), EBUSY);
	rxdp_pd_put(pd);
	assert_int_equal(ibv_dealloc_pd(pd), 0);
	assert_int_equal(ibv_close_device(ctx), 0);
}

/* Several contexts talk to the daemon at once, each on its connection */
static void *query_loop(void *arg)
{
	struct ibv_context *ctx = arg;
	struct ibv_port_attr pa;
	union ibv_gid gid;
	long bad = 0;
	int i;

	for (i = 0; i < 200; i++) {
		if (ibv_query_port(ctx, 1, &pa) || pa.state != IBV_PORT_ACTIVE)
			bad++;
		if (ibv_query_gid(ctx, 1, i % 4, &gid))
			bad++;
	}
	return (void *)bad;
}

static void test_concurrent_queries(void **state)
{
	struct ibv_context *ctx = open_a();
	pthread_t t[4];
	void *bad;
	int i;

	/* four threads on one context: the ctl connection is serialised */
	for (i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&t[i], NULL, query_loop, ctx),
				 0);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &bad);
		assert_int_equal((long)bad, 0);
	}
	assert_int_equal(ibv_close_device(ctx), 0);
}

static int setup(void **state)
{
	fake_rxdpd_start();
	return 0;
}

static int teardown(void **state)
{
	fake_rxdpd_stop();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cq_events),
		cmocka_unit_test(test_cq_without_channel),
		cmocka_unit_test(test_destroy_waits_for_acks),
		cmocka_unit_test(test_async_events),
		cmocka_unit_test(test_destroy_discards_unread),
		cmocka_unit_test(test_pd_in_use),
		cmocka_unit_test(test_concurrent_queries),
	};

	return cmocka_run_group_tests_name("verbs events", tests, setup,
					   teardown);
}
