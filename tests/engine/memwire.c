// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The in-memory wire: two FIFOs of frames (one per direction) behind one
 * mutex, each with an eventfd that is readable while frames wait, so an
 * engine's progress thread can block on it as on an AF_XDP socket.
 * Faults are decided by a per-direction xorshift generator, so a seed
 * gives the same drops for the same sequence of frames.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "memwire.h"

#define MW_FRAME 4096
#define MW_QLEN 65536 /* frames a direction holds */

struct mw_frame {
	uint64_t due; /* the wire's clock when it may arrive (latency) */
	uint32_t len;
	uint8_t data[MW_FRAME];
};

struct mw_dir {
	struct mw_frame *q[MW_QLEN];
	uint32_t head, tail;
	uint32_t qlen; /* frames it holds before it drops (MW_QLEN at most) */
	uint32_t permille; /* how full it was at the last rx_burst */
	uint64_t latency; /* the wire's clock's ns a frame takes */
	int evfd; /* readable while the queue is not empty */
	uint64_t rng;
	struct mw_frame *held; /* a frame held back to reorder */
	/* run as frames arrive at the receiving side (an XDP stand-in) */
	int (*filter)(void *arg, uint8_t *frame, uint32_t len);
	void *filter_arg;
	void (*rx_hook)(void *arg); /* run as the receiver takes frames */
	void *rx_hook_arg;
	uint64_t filtered;
	/* frames the sender built, not yet flushed */
	struct mw_frame *pend[256];
	int npend;
};

struct mw_port {
	struct memwire *w;
	int side; /* sends on dir[side], receives from dir[!side] */
};

struct memwire {
	pthread_mutex_t lock;
	FILE *pcap; /* $RXDP_MEMWIRE_PCAP: every frame sent, for tshark */
	struct mw_dir dir[2];
	struct mw_port port[2];
	struct memwire_faults f;
	uint64_t (*clock)(void *arg); /* for latency: the engines' clock */
	void *clock_arg;
	int cut;
	struct memwire_stats st;
};

struct memwire *memwire_create(void)
{
	struct memwire *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	pthread_mutex_init(&w->lock, NULL);
	if (getenv("RXDP_MEMWIRE_PCAP")) {
		/* appended to, so one file collects every wire of a run */
		const char *path = getenv("RXDP_MEMWIRE_PCAP");
		/* libpcap file header: magic, v2.4, snaplen, Ethernet */
		uint32_t hdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1 };

		w->pcap = fopen(path, "a");
		if (w->pcap && ftell(w->pcap) == 0)
			fwrite(hdr, sizeof(hdr), 1, w->pcap);
	}
	for (int i = 0; i < 2; i++) {
		w->dir[i].evfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		w->dir[i].rng = 0x9e3779b97f4a7c15ULL + i;
		w->dir[i].qlen = MW_QLEN;
		w->port[i].w = w;
		w->port[i].side = i;
	}
	return w;
}

void memwire_destroy(struct memwire *w)
{
	if (w->pcap)
		fclose(w->pcap);
	for (int i = 0; i < 2; i++) {
		struct mw_dir *d = &w->dir[i];

		while (d->head != d->tail)
			free(d->q[d->tail++ % MW_QLEN]);
		free(d->held);
		for (int k = 0; k < d->npend; k++)
			free(d->pend[k]);
		close(d->evfd);
	}
	free(w);
}

void memwire_set_faults(struct memwire *w, const struct memwire_faults *f)
{
	pthread_mutex_lock(&w->lock);
	w->f = *f;
	for (int i = 0; i < 2; i++)
		w->dir[i].rng = (f->seed ? f->seed : 1) * (2 * i + 3);
	pthread_mutex_unlock(&w->lock);
}

void memwire_cut(struct memwire *w, int cut)
{
	pthread_mutex_lock(&w->lock);
	w->cut = cut;
	pthread_mutex_unlock(&w->lock);
}

void memwire_get_stats(struct memwire *w, struct memwire_stats *s)
{
	pthread_mutex_lock(&w->lock);
	*s = w->st;
	pthread_mutex_unlock(&w->lock);
}

void *memwire_port(struct memwire *w, int side)
{
	return &w->port[side];
}

static uint32_t mw_rand(struct mw_dir *d)
{
	d->rng ^= d->rng << 13;
	d->rng ^= d->rng >> 7;
	d->rng ^= d->rng << 17;
	return (uint32_t)(d->rng % 10000);
}

static void mw_push(struct memwire *w, struct mw_dir *d, struct mw_frame *f)
{
	uint64_t one = 1;

	if (d->filter && !d->filter(d->filter_arg, f->data, f->len)) {
		d->filtered++;
		free(f);
		return;
	}
	if (d->head - d->tail >= d->qlen) {
		free(f); /* a full queue drops, as a NIC ring would */
		w->st.lost++;
		return;
	}
	f->due = d->latency ? w->clock(w->clock_arg) + d->latency : 0;
	d->q[d->head++ % MW_QLEN] = f;
	if (write(d->evfd, &one, sizeof(one)) < 0) {
		/* the counter saturates only after 2^64 frames */
	}
}

void memwire_set_filter(struct memwire *w, int to,
			int (*fn)(void *arg, uint8_t *frame, uint32_t len),
			void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->dir[!to].filter = fn;
	w->dir[!to].filter_arg = arg;
	pthread_mutex_unlock(&w->lock);
}

void memwire_inject(struct memwire *w, int to, const void *frame, uint32_t len)
{
	struct mw_frame *f = malloc(sizeof(*f));

	if (!f || len > MW_FRAME) {
		free(f);
		return;
	}
	memcpy(f->data, frame, len);
	f->len = len;
	pthread_mutex_lock(&w->lock);
	mw_push(w, &w->dir[!to], f);
	pthread_mutex_unlock(&w->lock);
}

static void *mw_tx_get(void *port, uint32_t *cap)
{
	struct mw_port *p = port;
	struct mw_dir *d = &p->w->dir[p->side];
	struct mw_frame *f;

	if (d->npend == 256)
		return NULL;
	f = malloc(sizeof(*f));
	if (!f)
		return NULL;
	*cap = MW_FRAME;
	return f->data;
}

static void mw_tx_put(void *port, void *buf, uint32_t len)
{
	struct mw_port *p = port;
	struct mw_dir *d = &p->w->dir[p->side];
	struct mw_frame *f =
		(void *)((uint8_t *)buf - offsetof(struct mw_frame, data));

	f->len = len;
	d->pend[d->npend++] = f;
}

static void mw_tx_abort(void *port, void *buf)
{
	free((uint8_t *)buf - offsetof(struct mw_frame, data));
}

static int mw_tx_flush(void *port)
{
	struct mw_port *p = port;
	struct memwire *w = p->w;
	struct mw_dir *d = &w->dir[p->side];

	pthread_mutex_lock(&w->lock);
	if (d->npend) {
		w->st.flushes[p->side]++;
		if ((uint64_t)d->npend > w->st.batch_max[p->side])
			w->st.batch_max[p->side] = d->npend;
	}
	for (int i = 0; i < d->npend; i++) {
		struct mw_frame *f = d->pend[i];

		w->st.frames++;
		if (w->pcap) {
			struct timespec ts;
			uint32_t rec[4];

			clock_gettime(CLOCK_REALTIME, &ts);
			rec[0] = ts.tv_sec;
			rec[1] = ts.tv_nsec / 1000;
			rec[2] = rec[3] = f->len;
			fwrite(rec, sizeof(rec), 1, w->pcap);
			fwrite(f->data, f->len, 1, w->pcap);
		}
		if (w->cut || mw_rand(d) < w->f.loss) {
			w->st.lost++;
			free(f);
			continue;
		}
		if (mw_rand(d) < w->f.dup) {
			struct mw_frame *c = malloc(sizeof(*c));

			if (c) {
				memcpy(c, f, sizeof(*c));
				w->st.duplicated++;
				mw_push(w, d, c);
			}
		}
		if (!d->held && mw_rand(d) < w->f.reorder) {
			d->held = f; /* goes out after the next one */
			w->st.reordered++;
			continue;
		}
		mw_push(w, d, f);
		if (d->held) {
			mw_push(w, d, d->held);
			d->held = NULL;
		}
	}
	d->npend = 0;
	/* a held frame does not wait for ever */
	if (d->held && d->head == d->tail) {
		mw_push(w, d, d->held);
		d->held = NULL;
	}
	pthread_mutex_unlock(&w->lock);
	return 0;
}

void memwire_set_rx_hook(struct memwire *w, int side, void (*fn)(void *arg),
			 void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->dir[!side].rx_hook = fn;
	w->dir[!side].rx_hook_arg = arg;
	pthread_mutex_unlock(&w->lock);
}

static int mw_rx_burst(void *port, struct rxdp_frame *fr, int max)
{
	struct mw_port *p = port;
	struct memwire *w = p->w;
	struct mw_dir *d = &w->dir[!p->side];
	void (*hook)(void *arg);
	void *hook_arg;
	uint64_t v;
	int n = 0;

	pthread_mutex_lock(&w->lock);
	hook = d->head != d->tail ? d->rx_hook : NULL;
	hook_arg = d->rx_hook_arg;
	pthread_mutex_unlock(&w->lock);
	if (hook)
		hook(hook_arg);
	pthread_mutex_lock(&w->lock);
	d->permille =
		(uint32_t)((uint64_t)(d->head - d->tail) * 1000 / d->qlen);
	while (n < max && d->head != d->tail) {
		struct mw_frame *f = d->q[d->tail % MW_QLEN];

		if (f->due && f->due > w->clock(w->clock_arg))
			break; /* still on its way, and so is all behind it */
		d->tail++;

		fr[n].data = f->data;
		fr[n].len = f->len;
		fr[n].cookie = (uintptr_t)f;
		n++;
	}
	if (d->head == d->tail && read(d->evfd, &v, sizeof(v)) < 0) {
		/* already drained */
	}
	pthread_mutex_unlock(&w->lock);
	return n;
}

static uint32_t mw_rx_fill(void *port)
{
	struct mw_port *p = port;
	uint32_t v;

	pthread_mutex_lock(&p->w->lock);
	v = p->w->dir[!p->side].permille;
	pthread_mutex_unlock(&p->w->lock);
	return v;
}

void memwire_set_qlen(struct memwire *w, int to, uint32_t n)
{
	pthread_mutex_lock(&w->lock);
	w->dir[!to].qlen = n && n < MW_QLEN ? n : MW_QLEN;
	pthread_mutex_unlock(&w->lock);
}

void memwire_set_latency(struct memwire *w, int to, uint64_t ns,
			 uint64_t (*clock)(void *arg), void *arg)
{
	pthread_mutex_lock(&w->lock);
	w->clock = clock;
	w->clock_arg = arg;
	w->dir[!to].latency = ns;
	pthread_mutex_unlock(&w->lock);
}

static void mw_rx_release(void *port, struct rxdp_frame *f, int n)
{
	for (int i = 0; i < n; i++)
		free((void *)(uintptr_t)f[i].cookie);
}

static int mw_poll_fds(void *port, int *fds, int max)
{
	struct mw_port *p = port;

	if (max < 1)
		return 0;
	fds[0] = p->w->dir[!p->side].evfd;
	return 1;
}

const struct rxdp_port_ops memwire_ops = {
	.tx_get = mw_tx_get,
	.tx_put = mw_tx_put,
	.tx_abort = mw_tx_abort,
	.tx_flush = mw_tx_flush,
	.rx_burst = mw_rx_burst,
	.rx_release = mw_rx_release,
	.rx_fill = mw_rx_fill,
	.poll_fds = mw_poll_fds,
};
