/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The QP state machine of IBTA Vol 1 section 10.3 (Table 98 "QP State
 * Transition Properties"): which transitions ibv_modify_qp may request and,
 * for each one and each transport, the attributes it requires and those it
 * permits. Masks are enum ibv_qp_attr_mask values; states enum ibv_qp_state;
 * transports enum ibv_qp_type. Pure functions: no I/O, no state.
 */
#ifndef RXDP_ENGINE_QP_SM_H
#define RXDP_ENGINE_QP_SM_H

#include <linux/types.h>

struct rxdp_qp_sm_result {
	__u32 next_state;
	__u32 missing; /* required attributes not in the mask */
	__u32 extra; /* attributes in the mask the transition does not take */
	const char *why; /* a sentence when the transition itself is illegal */
};

/* Required and optional attributes of cur -> next for qp_type; -EINVAL if
 * the transition is not legal for that type (or an argument is out of range). */
int rxdp_qp_sm_masks(__u32 qp_type, __u32 cur, __u32 next, __u32 *req,
		     __u32 *opt);

/*
 * Check one ibv_modify_qp call on a QP of qp_type in state cur. The target
 * is attr_qp_state when IBV_QP_STATE is in mask, else cur (an attribute-only
 * modify). With IBV_QP_CUR_STATE, attr_cur_state must equal cur. Returns 0
 * or -EINVAL; *res says why.
 */
int rxdp_qp_sm_check(__u32 qp_type, __u32 cur, __u32 mask, __u32 attr_qp_state,
		     __u32 attr_cur_state, struct rxdp_qp_sm_result *res);

const char *rxdp_qp_state_name(__u32 state);
const char *rxdp_qp_type_name(__u32 type);
/* Write the names of the bits of mask, "|"-separated, into buf. */
void rxdp_qp_mask_str(__u32 mask, char *buf, unsigned int len);

#endif /* RXDP_ENGINE_QP_SM_H */
