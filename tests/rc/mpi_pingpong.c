// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * mpi_pingpong: two MPI ranks (mpi.sh runs them on two rxdp hosts over
 * UCX): a ping-pong of 8 B, 4 KiB and 64 KiB messages whose every byte is
 * checked on arrival, then an allreduce of 4096 doubles and of a long,
 * checked against the sums computed here. Prints the one-way latency per
 * size and the 64 KiB bandwidth; exits non-zero on any wrong byte or sum.
 * With STOPFILE, first rounds of the three sizes, every byte checked, until
 * rank 0 finds STOPFILE (a job that outlasts whatever the caller does
 * meanwhile: mpi.sh's takeovers); rank 0 says "soaking" once they began.
 *
 *   mpirun -np 2 ... mpi_pingpong [ITERATIONS [STOPFILE]]
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_MSG (64 * 1024)
#define NRED 4096

static uint8_t pattern(int rank, int iter, size_t i)
{
	return (uint8_t)(rank * 131 + iter * 7 + i * 13 + (i >> 8));
}

/* 0 when buf holds what the peer filled in for this iteration */
static int check(const uint8_t *buf, size_t len, int peer, int iter)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != pattern(peer, iter, i)) {
			fprintf(stderr,
				"byte %zu of a %zu-byte message (iteration %d) "
				"is 0x%02x, expected 0x%02x\n",
				i, len, iter, buf[i], pattern(peer, iter, i));
			return 1;
		}
	return 0;
}

/* One round trip of len bytes, iteration i: 1 if a byte came wrong */
static int round_trip(int rank, size_t len, int i)
{
	static uint8_t out[MAX_MSG], in[MAX_MSG];

	for (size_t k = 0; k < len; k++)
		out[k] = pattern(rank, i, k);
	if (rank == 0) {
		MPI_Send(out, (int)len, MPI_BYTE, 1, i, MPI_COMM_WORLD);
		MPI_Recv(in, (int)len, MPI_BYTE, 1, i, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
	} else {
		MPI_Recv(in, (int)len, MPI_BYTE, 0, i, MPI_COMM_WORLD,
			 MPI_STATUS_IGNORE);
		MPI_Send(out, (int)len, MPI_BYTE, 0, i, MPI_COMM_WORLD);
	}
	return check(in, len, !rank, i);
}

/* Rounds of every size until rank 0 finds stop: 1 if a byte came wrong */
static int soak(int rank, const size_t *sizes, size_t nsizes, const char *stop)
{
	int bad = 0, done = 0, rounds = 0;

	while (!done) {
		for (size_t s = 0; s < nsizes; s++)
			bad |= round_trip(rank, sizes[s], rounds & 0x3fff);
		if (rank == 0) {
			done = access(stop, F_OK) == 0;
			if (!rounds) {
				printf("soaking until %s\n", stop);
				fflush(stdout);
			}
		}
		MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
		rounds++;
	}
	if (!rank)
		printf("soaked: %d rounds of %zu sizes, every byte %s\n",
		       rounds, nsizes, bad ? "checked: some WRONG" : "right");
	return bad;
}

int main(int argc, char **argv)
{
	static const size_t sizes[] = { 8, 4096, MAX_MSG };
	static double dv[NRED], dsum[NRED];
	int rank, n, bad = 0, allbad = 0;
	int iters = argc > 1 ? atoi(argv[1]) : 100;
	long lv, lsum;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (n != 2) {
		if (!rank)
			fprintf(stderr, "mpi_pingpong: needs 2 ranks\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (argc > 2)
		bad |= soak(rank, sizes, sizeof(sizes) / sizeof(sizes[0]),
			    argv[2]);
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t len = sizes[s];
		int it = len == MAX_MSG ? (iters + 4) / 5 : iters;
		double t0;

		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < it; i++)
			bad |= round_trip(rank, len, i);
		t0 = MPI_Wtime() - t0;
		if (!rank)
			printf("ping-pong %6zu B: %10.1f us one way, %8.2f "
			       "MB/s "
			       "(%d round trips)\n",
			       len, t0 / it / 2 * 1e6,
			       2.0 * len * it / t0 / 1e6, it);
	}
	for (int k = 0; k < NRED; k++)
		dv[k] = (rank + 1) * 0.5 + k;
	MPI_Allreduce(dv, dsum, NRED, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	for (int k = 0; k < NRED; k++)
		if (dsum[k] != 1.5 + 2.0 * k) {
			fprintf(stderr, "allreduce: element %d is %g, not %g\n",
				k, dsum[k], 1.5 + 2.0 * k);
			bad = 1;
			break;
		}
	lv = 1000 + rank;
	MPI_Allreduce(&lv, &lsum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (lsum != 2001) {
		fprintf(stderr, "allreduce: %ld, not 2001\n", lsum);
		bad = 1;
	}
	MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	if (!rank)
		printf("allreduce of %d doubles and a long: %s\n", NRED,
		       allbad ? "WRONG" : "right");
	MPI_Finalize();
	return allbad;
}
