// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-ecnmark: ECN marking on a switch port, for the many-hosts rig (this
 * kernel has TBF but no RED): a tc program on the port's egress keeps a
 * virtual queue drained at the port's rate and marks ECT packets CE by the
 * K_min/K_max/P_max rule (ecnmark.bpf.c). Put a TBF of the same rate on the
 * port as its real queue and buffer.
 *
 *   rxdp-ecnmark --rate MBIT [--kmin BYTES] [--kmax BYTES] [--pmax P]
 *                [--limit BYTES] IF
 *
 * marks until SIGINT/SIGTERM, then detaches and prints what it did:
 *   ecnmark packets=N bytes=N ect=N marked=N not_ect=N errors=N
 *           vq_max=BYTES vq_dropped=N
 * Defaults: kmin 20000, kmax 200000, pmax 0.1, no limit.
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ecnmark.h"
#include "percpu.h"
#include "ecnmark.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: rxdp-ecnmark --rate MBIT [--kmin BYTES] "
			"[--kmax BYTES] [--pmax P] [--limit BYTES] IF\n");
	exit(2);
}

static double number(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end || v < lo || v > hi) {
		fprintf(stderr,
			"rxdp-ecnmark: --%s takes a number from %g to %g\n",
			opt, lo, hi);
		exit(2);
	}
	return v;
}

static uint64_t stat_sum(struct ecnmark_bpf *skel, uint32_t key)
{
	return percpu_sum(bpf_map__fd(skel->maps.stats), key);
}

static void report(struct ecnmark_bpf *skel)
{
	struct ecnmark_vq q = { 0 };
	uint32_t zero = 0;

	bpf_map_lookup_elem(bpf_map__fd(skel->maps.vq), &zero, &q);
	printf("ecnmark packets=%llu bytes=%llu ect=%llu marked=%llu "
	       "not_ect=%llu errors=%llu vq_max=%llu vq_dropped=%llu\n",
	       (unsigned long long)stat_sum(skel, ECNMARK_PKTS),
	       (unsigned long long)stat_sum(skel, ECNMARK_BYTES),
	       (unsigned long long)stat_sum(skel, ECNMARK_ECT),
	       (unsigned long long)stat_sum(skel, ECNMARK_MARKED),
	       (unsigned long long)stat_sum(skel, ECNMARK_NOT_ECT),
	       (unsigned long long)stat_sum(skel, ECNMARK_ERRORS),
	       (unsigned long long)q.max_bytes, (unsigned long long)q.dropped);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rate", 1, NULL, 'r' },  { "kmin", 1, NULL, 'a' },
		{ "kmax", 1, NULL, 'b' },  { "pmax", 1, NULL, 'p' },
		{ "limit", 1, NULL, 'l' }, { NULL, 0, NULL, 0 },
	};
	double rate = 0, kmin = 20000, kmax = 200000, pmax = 0.1, limit = 0;
	struct ecnmark_bpf *skel;
	bool created;
	int c, err, idx;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rate = number("rate", optarg, 1, 400000);
			break;
		case 'a':
			kmin = number("kmin", optarg, 0, 1 << 30);
			break;
		case 'b':
			kmax = number("kmax", optarg, 1, 1 << 30);
			break;
		case 'p':
			pmax = number("pmax", optarg, 0, 1);
			break;
		case 'l':
			limit = number("limit", optarg, 0, 1 << 30);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1 || !rate)
		usage();
	if (kmin >= kmax) {
		fprintf(stderr, "rxdp-ecnmark: --kmin must be below --kmax\n");
		return 2;
	}
	idx = if_nametoindex(argv[optind]);
	if (!idx) {
		fprintf(stderr, "rxdp-ecnmark: no interface %s\n",
			argv[optind]);
		return 2;
	}
	skel = ecnmark_bpf__open();
	if (!skel) {
		fprintf(stderr, "rxdp-ecnmark: cannot open the program: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->rate_bps = (uint64_t)(rate * 1e6);
	skel->rodata->kmin = (uint64_t)kmin;
	skel->rodata->kmax = (uint64_t)kmax;
	skel->rodata->limit = (uint64_t)limit;
	skel->rodata->pmax = (uint32_t)(pmax * 4294967295.0);
	err = ecnmark_bpf__load(skel);
	if (err) {
		fprintf(stderr, "rxdp-ecnmark: cannot load the program: %s\n",
			strerror(-err));
		goto out;
	}
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = idx,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, tco,
		    .prog_fd = bpf_program__fd(skel->progs.ecnmark));
	err = bpf_tc_hook_create(&hook);
	created = !err;
	if (err && err != -EEXIST) {
		fprintf(stderr, "rxdp-ecnmark: cannot add clsact to %s: %s\n",
			argv[optind], strerror(-err));
		goto out;
	}
	err = bpf_tc_attach(&hook, &tco);
	if (err) {
		fprintf(stderr, "rxdp-ecnmark: cannot attach to %s: %s\n",
			argv[optind], strerror(-err));
		goto unhook;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	printf("ecnmark ready rate_bps=%llu kmin=%llu kmax=%llu pmax=%g\n",
	       (unsigned long long)skel->rodata->rate_bps,
	       (unsigned long long)skel->rodata->kmin,
	       (unsigned long long)skel->rodata->kmax, pmax);
	fflush(stdout);
	while (!stop)
		pause();
	tco.flags = tco.prog_fd = tco.prog_id = 0;
	bpf_tc_detach(&hook, &tco);
	report(skel);
unhook:
	if (created) {
		hook.attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS;
		bpf_tc_hook_destroy(&hook);
	}
out:
	ecnmark_bpf__destroy(skel);
	return err ? 1 : 0;
}
