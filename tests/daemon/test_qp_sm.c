// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Unit tests of the QP state machine (userspace/engine/qp_sm.c) over
 * every state pair, every transport and every attribute bit.
 *
 * The expectations are written from IBTA Vol 1 10.3.1 (Figure 124, the QP
 * state diagram) and Table 98, independently of the table under test: the
 * legal edges as a list, and the required attributes of the transitions
 * that have any spelled out below.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <infiniband/verbs.h>

#include "daemon/mtu.h"
#include "engine/qp_sm.h"

#define NSTATES 7
static const __u32 types[] = { IBV_QPT_RC, IBV_QPT_UC, IBV_QPT_UD };

static int legal(__u32 type, __u32 cur, __u32 next)
{
	/* Reset and Error are reachable from every state (IBTA 10.3.1) */
	if (next == IBV_QPS_RESET || next == IBV_QPS_ERR)
		return 1;
	switch (cur) {
	case IBV_QPS_RESET:
		return next == IBV_QPS_INIT;
	case IBV_QPS_INIT:
		return next == IBV_QPS_INIT || next == IBV_QPS_RTR;
	case IBV_QPS_RTR:
		return next == IBV_QPS_RTS;
	case IBV_QPS_RTS:
		return next == IBV_QPS_RTS || next == IBV_QPS_SQD;
	case IBV_QPS_SQD:
		return next == IBV_QPS_RTS || next == IBV_QPS_SQD;
	case IBV_QPS_SQE: /* RC has no SQE state */
		return next == IBV_QPS_RTS && type != IBV_QPT_RC;
	default:
		return 0;
	}
}

/* Required attributes, IBTA Table 98 / ibv_modify_qp(3) */
static __u32 required(__u32 type, __u32 cur, __u32 next)
{
	if (cur == IBV_QPS_RESET && next == IBV_QPS_INIT)
		return type == IBV_QPT_UD
			       ? IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY
			       : IBV_QP_PKEY_INDEX | IBV_QP_PORT |
					 IBV_QP_ACCESS_FLAGS;
	if (cur == IBV_QPS_INIT && next == IBV_QPS_RTR) {
		if (type == IBV_QPT_UD)
			return 0;
		if (type == IBV_QPT_UC)
			return IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			       IBV_QP_RQ_PSN;
		return IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		       IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		       IBV_QP_MIN_RNR_TIMER;
	}
	if (cur == IBV_QPS_RTR && next == IBV_QPS_RTS) {
		if (type == IBV_QPT_RC)
			return IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			       IBV_QP_MAX_QP_RD_ATOMIC;
		return IBV_QP_SQ_PSN;
	}
	return 0;
}

static void test_every_pair(void **state)
{
	unsigned int t;
	__u32 cur, next;

	(void)state;
	for (t = 0; t < 3; t++) {
		for (cur = 0; cur < NSTATES; cur++) {
			for (next = 0; next < NSTATES; next++) {
				struct rxdp_qp_sm_result res;
				__u32 req, opt;
				int ok = legal(types[t], cur, next);
				int ret;

				ret = rxdp_qp_sm_masks(types[t], cur, next,
						       &req, &opt);
				assert_int_equal(ret, ok ? 0 : -EINVAL);
				if (ok) {
					assert_int_equal(req,
							 required(types[t], cur,
								  next));
				}
				/* with exactly the required attributes */
				ret = rxdp_qp_sm_check(
					types[t], cur,
					IBV_QP_STATE |
						required(types[t], cur, next),
					next, 0, &res);
				assert_int_equal(ret, ok ? 0 : -EINVAL);
				if (ok)
					assert_int_equal(res.next_state, next);
				else
					assert_non_null(res.why);
			}
		}
	}
}

/* Each required bit missing, each disallowed bit extra: -EINVAL */
static void test_masks(void **state)
{
	unsigned int t, bit;
	__u32 cur, next;
	int checked_missing = 0, checked_extra = 0, checked_opt = 0;

	(void)state;
	for (t = 0; t < 3; t++) {
		for (cur = 0; cur < NSTATES; cur++) {
			for (next = 0; next < NSTATES; next++) {
				__u32 req, opt;

				if (!legal(types[t], cur, next))
					continue;
				assert_int_equal(rxdp_qp_sm_masks(types[t], cur,
								  next, &req,
								  &opt),
						 0);
				for (bit = 0; bit < 26; bit++) {
					struct rxdp_qp_sm_result res;
					__u32 b = 1U << bit, mask;
					int ret;

					if (b == IBV_QP_STATE)
						continue;
					mask = IBV_QP_STATE | req;
					if (req & b) {
						ret = rxdp_qp_sm_check(
							types[t], cur,
							mask & ~b, next, cur,
							&res);
						assert_int_equal(ret, -EINVAL);
						assert_true(res.missing & b);
						checked_missing++;
					} else if (opt & b) {
						ret = rxdp_qp_sm_check(
							types[t], cur, mask | b,
							next, cur, &res);
						assert_int_equal(ret, 0);
						checked_opt++;
					} else {
						ret = rxdp_qp_sm_check(
							types[t], cur, mask | b,
							next, cur, &res);
						assert_int_equal(ret, -EINVAL);
						checked_extra++;
					}
				}
			}
		}
	}
	/* the loops really ran over the interesting cases */
	assert_int_equal(checked_missing, 9 + 10 + 7); /* Table 98 */
	assert_true(checked_extra > 500);
	assert_true(checked_opt >= 40);
}

/* Facts from Table 98 stated directly, one per transition that has some */
static void test_known_optional(void **state)
{
	__u32 req, opt;

	(void)state;
	/* INIT -> RTR, RC: alternate path, access flags, P_Key index */
	assert_int_equal(rxdp_qp_sm_masks(IBV_QPT_RC, IBV_QPS_INIT, IBV_QPS_RTR,
					  &req, &opt),
			 0);
	assert_int_equal(opt, IBV_QP_ALT_PATH | IBV_QP_ACCESS_FLAGS |
				      IBV_QP_PKEY_INDEX);
	/* INIT -> RTR, UD: P_Key index and Q_Key */
	assert_int_equal(rxdp_qp_sm_masks(IBV_QPT_UD, IBV_QPS_INIT, IBV_QPS_RTR,
					  &req, &opt),
			 0);
	assert_int_equal(opt, IBV_QP_PKEY_INDEX | IBV_QP_QKEY);
	/* RTS -> SQD: only the async-notify request, every transport */
	assert_int_equal(rxdp_qp_sm_masks(IBV_QPT_UC, IBV_QPS_RTS, IBV_QPS_SQD,
					  &req, &opt),
			 0);
	assert_int_equal(req, 0);
	assert_int_equal(opt, IBV_QP_EN_SQD_ASYNC_NOTIFY);
	/* RTS -> RTS, RC: the min RNR timer may change */
	assert_int_equal(rxdp_qp_sm_masks(IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_RTS,
					  &req, &opt),
			 0);
	assert_true(opt & IBV_QP_MIN_RNR_TIMER);
	assert_false(opt & IBV_QP_SQ_PSN);
	/* SQD -> SQD, RC: the address vector and timeouts may change */
	assert_int_equal(rxdp_qp_sm_masks(IBV_QPT_RC, IBV_QPS_SQD, IBV_QPS_SQD,
					  &req, &opt),
			 0);
	assert_true(opt & IBV_QP_AV);
	assert_true(opt & IBV_QP_TIMEOUT);
	/* to Reset and Error: no attributes at all */
	assert_int_equal(rxdp_qp_sm_masks(IBV_QPT_RC, IBV_QPS_RTS, IBV_QPS_ERR,
					  &req, &opt),
			 0);
	assert_int_equal(req | opt, 0);
}

/* What perftest and ibv_rc_pingpong really send */
static void test_real_sequences(void **state)
{
	struct rxdp_qp_sm_result res;

	(void)state;
	/* perftest INIT: 0x39 */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RESET, 0x39,
					  IBV_QPS_INIT, 0, &res),
			 0);
	assert_int_equal(res.next_state, IBV_QPS_INIT);
	assert_int_equal(
		rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_INIT,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC |
					 IBV_QP_MIN_RNR_TIMER,
				 IBV_QPS_RTR, 0, &res),
		0);
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RTR,
					  IBV_QP_STATE | IBV_QP_TIMEOUT |
						  IBV_QP_RETRY_CNT |
						  IBV_QP_RNR_RETRY |
						  IBV_QP_SQ_PSN |
						  IBV_QP_MAX_QP_RD_ATOMIC,
					  IBV_QPS_RTS, 0, &res),
			 0);
	/* UD: RESET->INIT with Q_Key, RTR with state only, RTS with SQ PSN */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_UD, IBV_QPS_RESET,
					  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT | IBV_QP_QKEY,
					  IBV_QPS_INIT, 0, &res),
			 0);
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_UD, IBV_QPS_INIT,
					  IBV_QP_STATE, IBV_QPS_RTR, 0, &res),
			 0);
	/* UD RESET->INIT with access flags (an RC attribute): extra */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_UD, IBV_QPS_RESET,
					  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						  IBV_QP_PORT | IBV_QP_QKEY |
						  IBV_QP_ACCESS_FLAGS,
					  IBV_QPS_INIT, 0, &res),
			 -EINVAL);
	assert_int_equal(res.extra, IBV_QP_ACCESS_FLAGS);
	/* RC RTR without MIN_RNR_TIMER: missing */
	assert_int_equal(
		rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_INIT,
				 IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC,
				 IBV_QPS_RTR, 0, &res),
		-EINVAL);
	assert_int_equal(res.missing, IBV_QP_MIN_RNR_TIMER);
	/* skipping a state: RESET -> RTS */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RESET,
					  IBV_QP_STATE | IBV_QP_SQ_PSN,
					  IBV_QPS_RTS, 0, &res),
			 -EINVAL);
}

/* IBV_QP_CUR_STATE, attribute-only modifies, bad arguments */
static void test_cur_state_and_args(void **state)
{
	struct rxdp_qp_sm_result res;

	(void)state;
	/* CUR_STATE allowed RTS->RTS when it matches */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RTS,
					  IBV_QP_STATE | IBV_QP_CUR_STATE,
					  IBV_QPS_RTS, IBV_QPS_RTS, &res),
			 0);
	/* ... not when it lies */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RTS,
					  IBV_QP_STATE | IBV_QP_CUR_STATE,
					  IBV_QPS_RTS, IBV_QPS_SQD, &res),
			 -EINVAL);
	/* ... and never from INIT, even to RESET */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_INIT,
					  IBV_QP_STATE | IBV_QP_CUR_STATE,
					  IBV_QPS_RESET, IBV_QPS_INIT, &res),
			 -EINVAL);
	/* no IBV_QP_STATE: stay, with that state's optional attributes */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RTS,
					  IBV_QP_ACCESS_FLAGS, 0, 0, &res),
			 0);
	assert_int_equal(res.next_state, IBV_QPS_RTS);
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RTR,
					  IBV_QP_ACCESS_FLAGS, 0, 0, &res),
			 -EINVAL); /* RTR -> RTR is not a transition */
	assert_int_equal(
		rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RESET, 0, 0, 0, &res), 0);
	/* out of range */
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RESET,
					  IBV_QP_STATE, 7, 0, &res),
			 -EINVAL);
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, 9, IBV_QP_STATE,
					  IBV_QPS_RESET, 0, &res),
			 -EINVAL);
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RAW_PACKET, IBV_QPS_RESET,
					  IBV_QP_STATE, IBV_QPS_RESET, 0, &res),
			 -EINVAL);
	assert_int_equal(rxdp_qp_sm_check(IBV_QPT_RC, IBV_QPS_RTS,
					  IBV_QP_STATE | IBV_QP_RATE_LIMIT,
					  IBV_QPS_RTS, 0, &res),
			 -EINVAL);
}

static void test_names(void **state)
{
	char buf[256];

	(void)state;
	rxdp_qp_mask_str(IBV_QP_AV | IBV_QP_DEST_QPN, buf, sizeof(buf));
	assert_string_equal(buf, "IBV_QP_AV|IBV_QP_DEST_QPN");
	rxdp_qp_mask_str(0xffffffff, buf, 16); /* truncates, terminated */
	assert_true(strlen(buf) < 16);
	assert_string_equal(rxdp_qp_state_name(IBV_QPS_SQD), "SQD");
	assert_string_equal(rxdp_qp_type_name(IBV_QPT_UC), "UC");
}

/* Soft-RoCE's rule (interface MTU - 80, largest IB MTU that fits), up to
 * 4096 where the kernel has multi-buffer AF_XDP, 2048 before */
static void test_mtu(void **state)
{
	(void)state;
	assert_int_equal(rxdp_ib_mtu(1500, RXDP_MTU_CAP_SG), IBV_MTU_1024);
	assert_int_equal(rxdp_ib_mtu(1104, RXDP_MTU_CAP_SG),
			 IBV_MTU_1024); /* 1024 + 80 */
	assert_int_equal(rxdp_ib_mtu(1103, RXDP_MTU_CAP_SG),
			 IBV_MTU_512); /* 1024 + 79 */
	assert_int_equal(rxdp_ib_mtu(2127, RXDP_MTU_CAP_SG), IBV_MTU_1024);
	assert_int_equal(rxdp_ib_mtu(2128, RXDP_MTU_CAP_SG), IBV_MTU_2048);
	assert_int_equal(rxdp_ib_mtu(4175, RXDP_MTU_CAP_SG),
			 IBV_MTU_2048); /* 4096 + 79 */
	assert_int_equal(rxdp_ib_mtu(4176, RXDP_MTU_CAP_SG), IBV_MTU_4096);
	assert_int_equal(rxdp_ib_mtu(9000, RXDP_MTU_CAP_SG),
			 IBV_MTU_4096); /* the largest */
	assert_int_equal(rxdp_ib_mtu(65535, RXDP_MTU_CAP_SG), IBV_MTU_4096);
	assert_int_equal(rxdp_ib_mtu(576, RXDP_MTU_CAP_SG), IBV_MTU_256);
	assert_int_equal(rxdp_ib_mtu(68, RXDP_MTU_CAP_SG),
			 IBV_MTU_256); /* the floor */
	assert_int_equal(rxdp_ib_mtu(0, RXDP_MTU_CAP_SG), IBV_MTU_256);
	/* without multi-buffer AF_XDP: 2048 at most */
	assert_int_equal(rxdp_ib_mtu(9000, RXDP_MTU_CAP_NOSG), IBV_MTU_2048);
	assert_int_equal(rxdp_ib_mtu(1500, RXDP_MTU_CAP_NOSG), IBV_MTU_1024);
	assert_int_equal(rxdp_mtu_cap("6.6.0"), RXDP_MTU_CAP_SG);
	assert_int_equal(rxdp_mtu_cap("6.18.0-1-amd64"), RXDP_MTU_CAP_SG);
	assert_int_equal(rxdp_mtu_cap("7.0"), RXDP_MTU_CAP_SG);
	assert_int_equal(rxdp_mtu_cap("6.1.0-28-amd64"), RXDP_MTU_CAP_NOSG);
	assert_int_equal(rxdp_mtu_cap("5.19.2"), RXDP_MTU_CAP_NOSG);
	assert_int_equal(rxdp_mtu_cap("garbage"), RXDP_MTU_CAP_NOSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_pair),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_known_optional),
		cmocka_unit_test(test_real_sequences),
		cmocka_unit_test(test_cur_state_and_args),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_mtu),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
