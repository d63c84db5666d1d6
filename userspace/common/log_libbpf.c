// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Kept apart from log.c so that code without libbpf can link the logger. */
#include <bpf/libbpf.h>

#include "common/log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	/* libbpf warnings show at INFO, its info and debug at DEBUG */
	enum rxdp_log_level ours = level == LIBBPF_WARN ? RXDP_LOG_INFO :
							  RXDP_LOG_DEBUG;

	rxdp_log_vprint(ours, fmt, ap);
	return 0;
}

void rxdp_log_libbpf_init(void)
{
	libbpf_set_print(libbpf_print);
}
