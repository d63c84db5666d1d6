// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target: the XDP classifier (bpf/rxdp_xdp.bpf.c), the first
 * thing a host on the segment reaches, run on the fuzzer's frames through
 * BPF_PROG_TEST_RUN (root) and held to what every run must keep
 * (tests/bpf/xdp_rig.h): the frame comes out unchanged, exactly one verdict
 * counter moves, by one, the action agrees with it, and the engine's
 * parser agrees with the verdict (one parser for both sides). A rule
 * broken aborts, with the input kept. libFuzzer sees the parser's code,
 * not the program's (BPF is not instrumented): each verdict for each
 * transport's opcodes (known or not) is a feature of its own (extra
 * counters), so inputs that reach new verdicts are kept.
 *
 * An input is two bytes of setting, then the frame: byte 0 bits 0-2 the
 * RC QP's state, 3-5 the UC QP's (RXDP_QPS_*), bit 7 the variant (the
 * linear one); byte 1 the RC QP's PSN window (its expected PSN, the
 * requester's unacknowledged and next PSNs, around 0 and 1 << 23). The
 * QPs are tests/bpf/xdp_rig.h's: RC and UC from the rig's IPv4 peer, UD
 * with its Q_Key.
 *
 * RXDP_FUZZ_XDP_SEEDS=DIR writes the seed corpus into DIR and exits (make
 * fuzz-corpus): frames of every opcode for each QP, over IPv4 and IPv6,
 * with a VLAN tag, and the ways xdp_rig_build() lies.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bpf/xdp_rig.h"
#include "rxdp/opcodes.h"

static struct xdp_rig rig;
static int cur_cfg = -1, cur_win = -1;

/* libFuzzer's extra counters: verdict x transport x known opcode */
__attribute__((section(
	"__libfuzzer_extra_counters"))) static uint8_t seen[RXDP_V_MAX][8][2];

static void must(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "fuzz_xdp: %s: %s\n", what, strerror(-err));
		abort();
	}
}

static void settings(uint8_t cfg, uint8_t win)
{
	uint32_t e = win & 0x80 ? 1u << 23 : 0;

	if (cfg != cur_cfg) {
		must(xdp_rig_set_qp(&rig, XDP_RIG_QP_RC, RXDP_QPT_RC, cfg & 7,
				    0xffff, 0, 0),
		     "qp_ctx");
		must(xdp_rig_set_qp(&rig, XDP_RIG_QP_UC, RXDP_QPT_UC,
				    cfg >> 3 & 7, 0xffff, 0, 0),
		     "qp_ctx");
		xdp_rig_variant(&rig, cfg >> 7 & 1);
		cur_cfg = cfg;
	}
	if (win != cur_win) {
		must(xdp_rig_set_psn(&rig, XDP_RIG_QP_RC, e + (win & 7),
				     e + (win >> 3 & 7),
				     e + (win >> 3 & 7) + (win >> 6 & 1) * 4,
				     0),
		     "qp_psn");
		cur_win = win;
	}
}

/* The seed corpus: frames xdp_rig_build() makes, each with its settings */
static void write_seeds(const char *dir)
{
	static const uint32_t qpns[] = { XDP_RIG_QP_RC, XDP_RIG_QP_UC,
					 XDP_RIG_QP_UD };
	static uint8_t buf[XDP_RIG_PKT_MAX + 2];
	int n = 0;

	for (unsigned q = 0; q < 3; q++) {
		for (unsigned op = 0; op < 256; op++) {
			struct xdp_rig_pkt o = { .opcode = (uint8_t)op,
						 .qpn = qpns[q],
						 .qkey = XDP_RIG_QKEY,
						 .payload = 16,
						 .ipv6 = (op + q) % 3 == 0,
						 .vlan = op % 5 == 0 ? 0x8100
								     : 0 };
			uint32_t len;
			char path[512];
			FILE *f;

			/* the opcodes of the QP's transport (opcode >> 5: RC 0,
			 * UC 1, UD 3), and a few unknown ones */
			if (roce_opcode_flags((uint8_t)op)
				    ? op >> 5 != (q == 2 ? 3 : q)
				    : op % 37)
				continue;
			if (o.opcode == 0x0c || o.opcode == 0x06 ||
			    o.opcode == 0x0a)
				o.dma_len = 16; /* a Read's or a Write's RETH */
			len = xdp_rig_build(buf + 2, &o);
			buf[0] = RXDP_QPS_RTS | RXDP_QPS_RTS << 3;
			buf[1] = 0;
			snprintf(path, sizeof(path), "%s/qp%06x-op%02x", dir,
				 qpns[q], op);
			f = fopen(path, "wb");
			if (!f || fwrite(buf, 1, len + 2, f) != len + 2 ||
			    fclose(f)) {
				perror(path);
				exit(1);
			}
			n++;
		}
	}
	printf("fuzz_xdp: %d seeds in %s\n", n, dir);
	exit(0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *seeds = getenv("RXDP_FUZZ_XDP_SEEDS");
	int err = xdp_rig_open(&rig);

	(void)argc;
	(void)argv;
	if (err) {
		fprintf(stderr,
			"fuzz_xdp: cannot load the XDP program (root?): %s\n",
			strerror(-err));
		exit(1);
	}
	must(xdp_rig_set_qp(&rig, XDP_RIG_QP_UD, RXDP_QPT_UD, RXDP_QPS_RTS,
			    0xffff, XDP_RIG_QKEY, 0),
	     "qp_ctx");
	must(xdp_rig_set_psn(&rig, XDP_RIG_QP_UC, 0, 0, 0, 0), "qp_psn");
	must(xdp_rig_set_psn(&rig, XDP_RIG_QP_UD, 0, 0, 0, 0), "qp_psn");
	if (seeds)
		write_seeds(seeds);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t frame[XDP_RIG_PKT_MAX];
	uint32_t len, verdict;
	char why[160];
	int action;

	/* a frame has an Ethernet header: BPF_PROG_TEST_RUN refuses less */
	if (size < 2 + 14)
		return 0;
	settings(data[0], data[1]);
	len = (uint32_t)(size - 2 < sizeof(frame) ? size - 2 : sizeof(frame));
	memcpy(frame, data + 2, len);
	if (xdp_rig_run(&rig, frame, len, &verdict, &action, why,
			sizeof(why))) {
		fprintf(stderr, "fuzz_xdp: %s (%u bytes, settings %#x %#x)\n",
			why, len, data[0], data[1]);
		abort();
	}
	/* the byte where an untagged IPv4 frame's BTH opcode is */
	if (verdict != RXDP_V_PASS_NOT_ROCE && len > 42)
		seen[verdict][frame[42] >> 5][!!roce_opcode_flags(frame[42])]++;
	else
		seen[verdict][0][0]++;
	return 0;
}
