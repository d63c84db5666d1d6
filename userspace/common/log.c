// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "common/log.h"

static enum rxdp_log_level log_level = RXDP_LOG_WARN;
static const char *log_prefix;

void rxdp_log_set_level(enum rxdp_log_level level)
{
	log_level = level;
}

enum rxdp_log_level rxdp_log_get_level(void)
{
	return log_level;
}

void rxdp_log_set_prefix(const char *prefix)
{
	log_prefix = prefix;
}

void rxdp_log_vprint(enum rxdp_log_level level, const char *fmt, va_list ap)
{
	if (level > log_level)
		return;
	if (log_prefix)
		fprintf(stderr, "%s: ", log_prefix);
	vfprintf(stderr, fmt, ap);
}

void rxdp_log(enum rxdp_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rxdp_log_vprint(level, fmt, ap);
	va_end(ap);
}
