/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Logging for rxdp's userspace: pr_err/pr_warn/pr_info/pr_debug to stderr,
 * with the level set once per program. libbpf's own messages go one level
 * quieter (rxdp_log_libbpf_init()).
 *
 * Each call writes whole lines (a newline is added where a message lacks
 * one, as some of libxdp's do). When stderr is the journal (systemd sets
 * JOURNAL_STREAM to stderr's "device:inode"), every line starts with its
 * syslog priority, "<3>" for an error to "<7>" for debug (sd-daemon(3)'s
 * convention, which journald strips and records), and without the program
 * prefix, which the journal records itself.
 */
#ifndef RXDP_LOG_H
#define RXDP_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

enum rxdp_log_level {
	RXDP_LOG_ERR = -1, /* shown at every level */
	RXDP_LOG_WARN = 0,
	RXDP_LOG_INFO = 1,
	RXDP_LOG_DEBUG = 2,
};

void rxdp_log_set_level(enum rxdp_log_level level);
void rxdp_log_set_prefix(const char *prefix); /* e.g. "rxdpd" */
enum rxdp_log_level rxdp_log_get_level(void);
/* Is stderr the journal (JOURNAL_STREAM names it)? Read once. */
bool rxdp_log_to_journal(void);
void rxdp_log_vprint(enum rxdp_log_level level, const char *fmt, va_list ap);
void rxdp_log(enum rxdp_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Route libbpf's print callback through rxdp_log, one level quieter. */
void rxdp_log_libbpf_init(void);

#define pr_err(fmt, ...) rxdp_log(RXDP_LOG_ERR, fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) rxdp_log(RXDP_LOG_WARN, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) rxdp_log(RXDP_LOG_INFO, fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) rxdp_log(RXDP_LOG_DEBUG, fmt, ##__VA_ARGS__)

#endif /* RXDP_LOG_H */
