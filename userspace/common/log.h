/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Logging for rxdp's userspace: pr_warn/pr_info/pr_debug to stderr, with the
 * level set once per program. libbpf's own messages go one level quieter
 * (rxdp_log_libbpf_init()).
 */
#ifndef RXDP_LOG_H
#define RXDP_LOG_H

#include <stdarg.h>
#include <stdio.h>

enum rxdp_log_level {
	RXDP_LOG_WARN = 0,
	RXDP_LOG_INFO = 1,
	RXDP_LOG_DEBUG = 2,
};

void rxdp_log_set_level(enum rxdp_log_level level);
void rxdp_log_set_prefix(const char *prefix); /* e.g. "rxdpd" */
enum rxdp_log_level rxdp_log_get_level(void);
void rxdp_log_vprint(enum rxdp_log_level level, const char *fmt, va_list ap);
void rxdp_log(enum rxdp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Route libbpf's print callback through rxdp_log, one level quieter. */
void rxdp_log_libbpf_init(void);

#define pr_warn(fmt, ...) rxdp_log(RXDP_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) rxdp_log(RXDP_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) rxdp_log(RXDP_LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif /* RXDP_LOG_H */
