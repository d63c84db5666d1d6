// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rxdp-lossyhop: a forwarding hop that loses frames at random, for the
 * benchmark's goodput under loss (tc netem is not in this kernel, and
 * AF_XDP transmits around a host's qdisc anyway). An XDP program on both
 * ports redirects each frame to the other port and drops IP frames with
 * the given probability (lossyhop.bpf.c), so the hop stays fast and the
 * loss is the only thing it adds.
 *
 *   rxdp-lossyhop [--loss PERCENT] IF0 IF1   forward until SIGINT/SIGTERM,
 *                                            then print what it did:
 *       lossyhop forwarded=N dropped=N
 *   rxdp-lossyhop --pass IF                  attach an XDP_PASS program to
 *                                            IF (the far end of a veth that
 *                                            receives redirected frames
 *                                            needs one) and exit
 */
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "percpu.h"
#include "lossyhop.skel.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr, "usage: rxdp-lossyhop [--loss PERCENT] IF0 IF1 | "
			"--pass IF\n");
	exit(2);
}

static int ifindex_of(const char *name)
{
	int idx = if_nametoindex(name);

	if (!idx) {
		fprintf(stderr, "rxdp-lossyhop: no interface %s\n", name);
		exit(2);
	}
	return idx;
}

static uint64_t stat_sum(struct lossyhop_bpf *skel, uint32_t key)
{
	return percpu_sum(bpf_map__fd(skel->maps.stats), key);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "loss", 1, NULL, 'l' },
		{ "pass", 0, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	const uint32_t flags = XDP_FLAGS_DRV_MODE;
	struct lossyhop_bpf *skel;
	int c, err, pass = 0, idx[2];
	double loss = 0;
	char *end;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			loss = strtod(optarg, &end);
			if (*end || loss < 0 || loss > 100) {
				fprintf(stderr, "rxdp-lossyhop: --loss takes a "
						"percentage, 0 to 100\n");
				return 2;
			}
			break;
		case 'p':
			pass = 1;
			break;
		default:
			usage();
		}
	}
	if (argc - optind != (pass ? 1 : 2))
		usage();
	for (int i = 0; i < argc - optind; i++)
		idx[i] = ifindex_of(argv[optind + i]);
	skel = lossyhop_bpf__open();
	if (!skel) {
		fprintf(stderr, "rxdp-lossyhop: cannot open the programs: %s\n",
			strerror(errno));
		return 1;
	}
	skel->rodata->loss_ppm = (uint32_t)(loss * 10000 + 0.5);
	skel->rodata->port0_ifindex = idx[0];
	err = lossyhop_bpf__load(skel);
	if (err) {
		fprintf(stderr, "rxdp-lossyhop: cannot load the programs: %s\n",
			strerror(-err));
		goto out;
	}
	if (pass) {
		/* a netlink attachment: it stays when this process exits */
		err = bpf_xdp_attach(idx[0], bpf_program__fd(skel->progs.pass),
				     flags, NULL);
		if (err)
			fprintf(stderr,
				"rxdp-lossyhop: cannot attach to %s: "
				"%s\n",
				argv[optind], strerror(-err));
		goto out;
	}
	for (uint32_t i = 0; i < 2; i++) {
		err = bpf_map_update_elem(bpf_map__fd(skel->maps.ports), &i,
					  &idx[i], 0);
		if (err) {
			fprintf(stderr, "rxdp-lossyhop: devmap: %s\n",
				strerror(errno));
			goto out;
		}
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	for (int i = 0; i < 2; i++) {
		err = bpf_xdp_attach(idx[i], bpf_program__fd(skel->progs.hop),
				     flags, NULL);
		if (err) {
			fprintf(stderr,
				"rxdp-lossyhop: cannot attach to %s: "
				"%s\n",
				argv[optind + i], strerror(-err));
			if (i)
				bpf_xdp_detach(idx[0], flags, NULL);
			goto out;
		}
	}
	printf("lossyhop ready loss_ppm=%u\n", skel->rodata->loss_ppm);
	fflush(stdout);
	while (!stop)
		pause();
	for (int i = 0; i < 2; i++)
		bpf_xdp_detach(idx[i], flags, NULL);
	printf("lossyhop forwarded=%llu dropped=%llu\n",
	       (unsigned long long)stat_sum(skel, 0),
	       (unsigned long long)stat_sum(skel, 1));
out:
	lossyhop_bpf__destroy(skel);
	return err ? 1 : 0;
}
