/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * What rxdp-ecnmark's tc program (ecnmark.bpf.c) and its loader share. User
 * space includes <linux/bpf.h> first (struct bpf_spin_lock); the program
 * has it from vmlinux.h.
 */
#ifndef RXDP_BENCH_ECNMARK_H
#define RXDP_BENCH_ECNMARK_H

/* The port's virtual queue (the one entry of the vq map) */
struct ecnmark_vq {
	struct bpf_spin_lock lock;
	__u32 pad;
	__u64 bytes; /* queued now */
	__u64 t_ns; /* when bytes was last computed (bpf_ktime_get_ns) */
	__u64 max_bytes; /* the most it held */
	__u64 dropped; /* packets that would not fit in limit */
};

/* The stats map's counters (per CPU) */
enum {
	ECNMARK_PKTS, /* every packet seen */
	ECNMARK_BYTES, /* their bytes, Ethernet header included */
	ECNMARK_ECT, /* IPv4/IPv6 packets that came ECT or CE */
	ECNMARK_MARKED, /* marked CE (or CE already) by the rule */
	ECNMARK_NOT_ECT, /* the rule said mark, but the packet is not ECT */
	ECNMARK_ERRORS, /* a header that could not be read or written */
	ECNMARK_NSTATS
};

#endif
