// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: the engine's packet parser and receive path. Each input
 * is a few frames from "host a" (records, fuzz_host.h) that go, one per
 * pass, into host b with fresh QPs (its engine lives for the run): RC, UC
 * and UD QPs in RTS with receives posted
 * and requests of its own outstanding, so requests reach the responder
 * (sends, writes, reads, atomics, duplicates) and responses the completer
 * (ACKs, NAKs, read responses, atomic ACKs). Whatever b sends goes nowhere.
 * The engine must neither crash nor touch memory outside what it owns
 * (AddressSanitizer), nor hit undefined behaviour (UBSan).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_host.h"

#define MAX_FRAME 9216
#define MAX_RECORDS 32

/* A port that takes one frame at a time and sends into the void */
struct fport {
	uint8_t rx[MAX_FRAME];
	uint32_t rx_len;
	int rx_have;
	uint8_t tx[MAX_FRAME];
};

static void *fp_tx_get(void *port, uint32_t *cap)
{
	*cap = MAX_FRAME;
	return ((struct fport *)port)->tx;
}

static void fp_tx_put(void *port, void *buf, uint32_t len)
{
}

static void fp_tx_abort(void *port, void *buf)
{
}

static int fp_tx_flush(void *port)
{
	return 0;
}

static int fp_rx_burst(void *port, struct rxdp_frame *f, int max)
{
	struct fport *p = port;

	if (!p->rx_have || max < 1)
		return 0;
	p->rx_have = 0;
	f->data = p->rx;
	f->len = p->rx_len;
	f->cookie = 0;
	return 1;
}

static void fp_rx_release(void *port, struct rxdp_frame *f, int n)
{
}

static int fp_poll_fds(void *port, int *fds, int max)
{
	return 0;
}

static const struct rxdp_port_ops fport_ops = {
	.tx_get = fp_tx_get,
	.tx_put = fp_tx_put,
	.tx_abort = fp_tx_abort,
	.tx_flush = fp_tx_flush,
	.rx_burst = fp_rx_burst,
	.rx_release = fp_rx_release,
	.poll_fds = fp_poll_fds,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct fport port;
	static struct fuzz_host b;
	static int ready;
	int n = 0;

	/* one engine for the run; its QPs, MR and AH anew for each input */
	if (ready ? fuzz_host_qps(&b, 1)
		  : fuzz_host_init(&b, 1, &fport_ops, &port))
		__builtin_trap(); /* the setup itself must work */
	ready = 1;
	if (fuzz_host_post(&b, 1, 0))
		__builtin_trap();
	rxdp_engine_progress(b.e); /* b's own requests go out */
	while (size >= 3 && n++ < MAX_RECORDS) {
		uint8_t flags = data[0];
		uint32_t len = data[1] | (uint32_t)data[2] << 8;

		data += 3;
		size -= 3;
		if (len > size)
			len = (uint32_t)size;
		if (len > MAX_FRAME)
			len = MAX_FRAME;
		memcpy(port.rx, data, len);
		data += len;
		size -= len;
		if (flags & FUZZ_REC_KEY)
			fuzz_rkey_xor(port.rx, len, rxdp_emr_rkey(b.mr));
		if (flags & FUZZ_REC_FIX_ICRC)
			fuzz_icrc_fix(port.rx, len);
		port.rx_len = len;
		port.rx_have = 1;
		rxdp_engine_progress(b.e);
		fuzz_host_drain(&b);
	}
	rxdp_engine_progress(b.e);
	fuzz_host_drain(&b);
	if (getenv("RXDP_FUZZ_VERBOSE")) { /* what a reproducer did */
		struct rxdp_engine_stats st;

		rxdp_engine_get_stats(b.e, &st);
		fprintf(stderr,
			"b: %d records, rx %llu (icrc %llu malformed %llu "
			"no_qp %llu source %llu psn %llu dup %llu ud %llu), "
			"tx %llu, RC QP state %d\n",
			n, (unsigned long long)st.rx_packets,
			(unsigned long long)st.rx_drop_icrc,
			(unsigned long long)st.rx_drop_malformed,
			(unsigned long long)st.rx_drop_no_qp,
			(unsigned long long)st.rx_drop_source,
			(unsigned long long)st.rx_drop_psn,
			(unsigned long long)st.rx_duplicates,
			(unsigned long long)st.rx_drop_ud,
			(unsigned long long)st.tx_packets,
			rxdp_engine_qp_state(b.rc));
	}
	fuzz_host_fini_qps(&b);
	return 0;
}
