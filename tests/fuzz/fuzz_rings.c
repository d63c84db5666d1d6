// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: a hostile client's shared rings. The queues a process
 * shares with rxdpd (common/hca.h: each QP's SQ and RQ, each CQ) are its to
 * write: any bytes in any WQE slot, any producer index, any consumer index
 * on a CQ, at any time. Host a (fuzz_host.h: RC, UC and UD QPs and an MR)
 * is that client's, connected over the in-memory wire to host b, which is
 * honest (its receives posted, its own requests made); both engines live
 * for the run, their QPs anew for each input. The engines must neither
 * crash, nor touch memory outside what they own (AddressSanitizer), nor hit
 * undefined behaviour (UBSan), nor spin (libFuzzer's timeout): every WQE
 * that breaks a rule is a counted bad WQE or an error completion.
 *
 * An input is records, each a byte of kind and QP (kind << 2 | QP, QP 0-2
 * for RC, UC, UD) and then the kind's bytes:
 *   0  post: 1 byte, which of fuzz_host's honest requests to post again
 *   1  SQ slot write: 2 bytes slot, 2 bytes offset, 1 byte length, bytes
 *   2  RQ slot write: the same
 *   3  SQ producer index: 4 bytes, added to it (a leap, or backwards)
 *   4  RQ producer index: the same
 *   5  CQ consumer index: 1 byte which (send, receive), 4 bytes value
 *   6  passes: 1 byte, how many (of both engines, the wire between)
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hca.h"
#include "fuzz_host.h"
#include "memwire.h"

#define MAX_RECORDS 64

static struct fuzz_host h[2];
static struct memwire *w;

static struct rxdp_eqp *qp_of(int k)
{
	return k == 0 ? h[0].rc : k == 1 ? h[0].uc : h[0].ud;
}

static void passes(int n)
{
	for (int i = 0; i < n; i++) {
		rxdp_engine_progress(h[0].e);
		rxdp_engine_progress(h[1].e);
		fuzz_host_drain(&h[1]);
	}
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

/* Write len bytes at (slot, off) of ring r, inside its slots */
static void slot_write(const struct rxdp_hca_ring *r, uint32_t slot,
		       uint32_t off, const uint8_t *p, uint32_t len)
{
	uint8_t *s = (uint8_t *)r->slots +
		     (size_t)(slot & (r->size - 1)) * r->stride;

	if (off >= r->stride)
		off %= r->stride;
	if (len > r->stride - off)
		len = r->stride - off;
	memcpy(s + off, p, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	int n = 0;

	if (!ready) {
		w = memwire_create();
		if (!w)
			__builtin_trap();
		for (int i = 0; i < 2; i++)
			if (fuzz_host_init(&h[i], i, &memwire_ops,
					   memwire_port(w, i)))
				__builtin_trap();
		ready = 1;
	} else {
		for (int i = 0; i < 2; i++)
			if (fuzz_host_qps(&h[i], i))
				__builtin_trap();
	}
	if (fuzz_host_post(&h[1], 1, rxdp_emr_rkey(h[0].mr)))
		__builtin_trap();
	while (size >= 1 && n++ < MAX_RECORDS) {
		int kind = data[0] >> 2, k = data[0] & 3;
		struct rxdp_eqp_rings r;
		struct rxdp_hca_cq *cq;
		uint32_t csize;

		data++;
		size--;
		if (k > 2)
			k = 2;
		rxdp_engine_qp_rings(qp_of(k), &r);
		switch (kind) {
		case 0:
			if (size < 1)
				goto done;
			/* every request again, from the honest poster */
			if (data[0] & 1)
				fuzz_host_post(&h[0], 0,
					       rxdp_emr_rkey(h[1].mr));
			else
				fuzz_host_post_recvs(&h[0]);
			data++;
			size--;
			break;
		case 1:
		case 2: {
			uint32_t len;

			if (size < 5)
				goto done;
			len = data[4];
			if (len > size - 5)
				len = (uint32_t)(size - 5);
			if (kind == 1 || !r.srq)
				slot_write(kind == 1 ? &r.sq : &r.rq,
					   data[0] | (uint32_t)data[1] << 8,
					   data[2] | (uint32_t)data[3] << 8,
					   data + 5, len);
			data += 5 + len;
			size -= 5 + len;
			break;
		}
		case 3:
		case 4:
			if (size < 4)
				goto done;
			atomic_fetch_add(kind == 3 ? &r.sq.wq->prod
						   : &r.rq.wq->prod,
					 get32(data));
			data += 4;
			size -= 4;
			break;
		case 5:
			if (size < 5)
				goto done;
			rxdp_engine_cq_ring(data[0] & 1 ? h[0].rcq : h[0].scq,
					    &cq, &csize);
			atomic_store(&cq->cons, get32(data + 1));
			data += 5;
			size -= 5;
			break;
		default:
			if (size < 1)
				goto done;
			passes(data[0] % 16);
			data++;
			size--;
			break;
		}
	}
done:
	passes(4);
	/*
	 * a's completions are the client's to read, with whatever consumer
	 * index it wrote: it catches up instead (a poll from a leapt index
	 * would be its own library's loop, not rxdpd's)
	 */
	for (int i = 0; i < 2; i++) {
		struct rxdp_hca_cq *cq;
		uint32_t csize;

		rxdp_engine_cq_ring(i ? h[0].rcq : h[0].scq, &cq, &csize);
		atomic_store(&cq->cons, atomic_load(&cq->prod));
	}
	if (getenv("RXDP_FUZZ_VERBOSE")) {
		struct rxdp_engine_stats st;

		rxdp_engine_get_stats(h[0].e, &st);
		fprintf(stderr,
			"a: %d records, bad WQEs %llu, tx %llu, RC QP "
			"state %d\n",
			n, (unsigned long long)st.bad_wqes,
			(unsigned long long)st.tx_packets,
			rxdp_engine_qp_state(h[0].rc));
	}
	for (int i = 0; i < 2; i++)
		fuzz_host_fini_qps(&h[i]);
	return 0;
}
