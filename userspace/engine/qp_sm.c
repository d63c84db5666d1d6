// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The QP state machine, IBTA Vol 1 section 10.3.1 and Table 98 (QP State
 * Transition Properties), as libibverbs documents it (ibv_modify_qp(3)) and
 * as the kernel enforces it for every RDMA device (ib_modify_qp_is_ok()).
 * SQE is entered only by the transport (a send error on UC/UD), never by a
 * modify; RC never enters it (IBTA 10.3.1: RC goes to ERR instead).
 */
#include <net/if.h> /* before any <linux/if*.h> */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "engine/qp_sm.h"

enum {
	T_RC,
	T_UC,
	T_UD,
	T_MAX
};

struct sm_edge {
	int valid;
	__u32 req[T_MAX];
	__u32 opt[T_MAX];
};

#define S(x) IBV_QPS_##x
#define A(x) IBV_QP_##x

/* Attributes an RC QP may change while in SQD (IBTA 10.3.1, SQD -> SQD) */
#define SQD_SQD_RC                                                    \
	(A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | \
	 A(MAX_QP_RD_ATOMIC) | A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |  \
	 A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(MIN_RNR_TIMER) |         \
	 A(PATH_MIG_STATE))

static const struct sm_edge sm_table[S(ERR) + 1][S(ERR) + 1] = {
	[S(RESET)] = {
		[S(RESET)] = { .valid = 1 },
		[S(INIT)] = {
			.valid = 1,
			.req = {
				[T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				[T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
			},
		},
		[S(ERR)] = { .valid = 1 },
	},
	[S(INIT)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(INIT)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				[T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
			},
		},
		[S(RTR)] = {
			.valid = 1,
			.req = {
				[T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
					 A(RQ_PSN) | A(MAX_DEST_RD_ATOMIC) |
					 A(MIN_RNR_TIMER),
				[T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) |
					 A(RQ_PSN),
			},
			.opt = {
				[T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX),
				[T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX),
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
			},
		},
	},
	[S(RTR)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(RTS)] = {
			.valid = 1,
			.req = {
				[T_RC] = A(TIMEOUT) | A(RETRY_CNT) |
					 A(RNR_RETRY) | A(SQ_PSN) |
					 A(MAX_QP_RD_ATOMIC),
				[T_UC] = A(SQ_PSN),
				[T_UD] = A(SQ_PSN),
			},
			.opt = {
				[T_RC] = A(CUR_STATE) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) |
					 A(PATH_MIG_STATE),
				[T_UC] = A(CUR_STATE) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
				[T_UD] = A(CUR_STATE) | A(QKEY),
			},
		},
	},
	[S(RTS)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(RTS)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(CUR_STATE) | A(ACCESS_FLAGS) |
					 A(ALT_PATH) | A(PATH_MIG_STATE) |
					 A(MIN_RNR_TIMER),
				[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) |
					 A(ALT_PATH) | A(PATH_MIG_STATE),
				[T_UD] = A(CUR_STATE) | A(QKEY),
			},
		},
		[S(SQD)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(EN_SQD_ASYNC_NOTIFY),
				[T_UC] = A(EN_SQD_ASYNC_NOTIFY),
				[T_UD] = A(EN_SQD_ASYNC_NOTIFY),
			},
		},
	},
	[S(SQD)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(RTS)] = {
			.valid = 1,
			.opt = {
				[T_RC] = A(CUR_STATE) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(MIN_RNR_TIMER) |
					 A(PATH_MIG_STATE),
				[T_UC] = A(CUR_STATE) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
				[T_UD] = A(CUR_STATE) | A(QKEY),
			},
		},
		[S(SQD)] = {
			.valid = 1,
			.opt = {
				[T_RC] = SQD_SQD_RC,
				[T_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(PKEY_INDEX) | A(PATH_MIG_STATE),
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
			},
		},
	},
	[S(SQE)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
		[S(RTS)] = {
			.valid = 1,
			.opt = {
				[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
				[T_UD] = A(CUR_STATE) | A(QKEY),
			},
		},
	},
	[S(ERR)] = {
		[S(RESET)] = { .valid = 1 },
		[S(ERR)] = { .valid = 1 },
	},
};

static int type_index(__u32 qp_type)
{
	switch (qp_type) {
	case IBV_QPT_RC:
		return T_RC;
	case IBV_QPT_UC:
		return T_UC;
	case IBV_QPT_UD:
		return T_UD;
	default:
		return -1;
	}
}

int rxdp_qp_sm_masks(__u32 qp_type, __u32 cur, __u32 next, __u32 *req,
		     __u32 *opt)
{
	int t = type_index(qp_type);

	if (t < 0 || cur > S(ERR) || next > S(ERR))
		return -EINVAL;
	if (!sm_table[cur][next].valid)
		return -EINVAL;
	/* RC never enters SQE (IBTA 10.3.1), so it never leaves it to RTS */
	if (cur == S(SQE) && next == S(RTS) && t == T_RC)
		return -EINVAL;
	*req = sm_table[cur][next].req[t];
	*opt = sm_table[cur][next].opt[t];
	return 0;
}

int rxdp_qp_sm_check(__u32 qp_type, __u32 cur, __u32 mask, __u32 attr_qp_state,
		     __u32 attr_cur_state, struct rxdp_qp_sm_result *res)
{
	__u32 next, req, opt;

	memset(res, 0, sizeof(*res));
	if (type_index(qp_type) < 0) {
		res->why = "unsupported QP type";
		return -EINVAL;
	}
	if (cur > S(ERR)) {
		res->why = "the QP is in an unknown state";
		return -EINVAL;
	}
	next = (mask & A(STATE)) ? attr_qp_state : cur;
	res->next_state = next;
	if (next > S(ERR)) {
		res->why = "unknown target state";
		return -EINVAL;
	}
	/* ib_modify_qp_is_ok(): the current state may only be asserted from
	 * the states that have it as an optional attribute */
	if (mask & A(CUR_STATE)) {
		if (cur != S(RTR) && cur != S(RTS) && cur != S(SQD) &&
		    cur != S(SQE)) {
			res->extra = A(CUR_STATE);
			res->why = "IBV_QP_CUR_STATE is not accepted in this "
				   "state";
			return -EINVAL;
		}
		if (attr_cur_state != cur) {
			res->why = "cur_qp_state does not match the QP's state";
			return -EINVAL;
		}
	}
	if (rxdp_qp_sm_masks(qp_type, cur, next, &req, &opt)) {
		res->why = "illegal state transition";
		return -EINVAL;
	}
	res->missing = req & ~mask;
	res->extra = mask & ~(req | opt | A(STATE));
	if (res->missing || res->extra) {
		res->why =
			res->missing
				? "required attributes missing"
				: "attributes not allowed in this transition";
		return -EINVAL;
	}
	return 0;
}

const char *rxdp_qp_state_name(__u32 state)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS",
					     "SQD",   "SQE",  "ERR" };

	return state <= S(ERR) ? names[state] : "?";
}

const char *rxdp_qp_type_name(__u32 type)
{
	switch (type) {
	case IBV_QPT_RC:
		return "RC";
	case IBV_QPT_UC:
		return "UC";
	case IBV_QPT_UD:
		return "UD";
	default:
		return "?";
	}
}

void rxdp_qp_mask_str(__u32 mask, char *buf, unsigned int len)
{
	static const char *const names[32] = {
		"STATE",
		"CUR_STATE",
		"EN_SQD_ASYNC_NOTIFY",
		"ACCESS_FLAGS",
		"PKEY_INDEX",
		"PORT",
		"QKEY",
		"AV",
		"PATH_MTU",
		"TIMEOUT",
		"RETRY_CNT",
		"RNR_RETRY",
		"RQ_PSN",
		"MAX_QP_RD_ATOMIC",
		"ALT_PATH",
		"MIN_RNR_TIMER",
		"SQ_PSN",
		"MAX_DEST_RD_ATOMIC",
		"PATH_MIG_STATE",
		"CAP",
		"DEST_QPN",
		[25] = "RATE_LIMIT",
	};
	unsigned int off = 0;
	int i;

	if (!len)
		return;
	buf[0] = '\0';
	for (i = 0; i < 32; i++) {
		int n;

		if (!(mask & (1U << i)))
			continue;
		if (names[i])
			n = snprintf(buf + off, len - off, "%sIBV_QP_%s",
				     off ? "|" : "", names[i]);
		else
			n = snprintf(buf + off, len - off, "%s(1<<%d)",
				     off ? "|" : "", i);
		if (n < 0 || (unsigned int)n >= len - off)
			return;
		off += n;
	}
}
