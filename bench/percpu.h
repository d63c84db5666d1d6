/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* What the bench tools' per-CPU counter maps hold, summed over the CPUs */
#ifndef RXDP_BENCH_PERCPU_H
#define RXDP_BENCH_PERCPU_H

#include <stdint.h>
#include <stdlib.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* Entry key of the per-CPU array map_fd, summed; 0 where it cannot be read */
static inline uint64_t percpu_sum(int map_fd, uint32_t key)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *v;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(map_fd, &key, v))
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

#endif
