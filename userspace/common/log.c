// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"

static enum rxdp_log_level log_level = RXDP_LOG_WARN;
static const char *log_prefix;
static int journal = -1; /* unknown until the first line */

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

/*
 * systemd passes JOURNAL_STREAM="<st_dev>:<st_ino>" of the stream it
 * connected; it is the journal only while stderr is still that stream (a
 * child whose stderr was redirected inherits the variable, not the stream).
 */
bool rxdp_log_to_journal(void)
{
	const char *e;
	unsigned long long dev, ino;
	struct stat st;
	char tail;

	if (journal >= 0)
		return journal;
	journal = 0;
	e = getenv("JOURNAL_STREAM");
	if (e && sscanf(e, "%llu:%llu%c", &dev, &ino, &tail) == 2 &&
	    !fstat(STDERR_FILENO, &st) && st.st_dev == dev && st.st_ino == ino)
		journal = 1;
	return journal;
}

/* syslog(3)'s LOG_ERR .. LOG_DEBUG */
static int log_priority(enum rxdp_log_level level)
{
	switch (level) {
	case RXDP_LOG_ERR:
		return 3;
	case RXDP_LOG_WARN:
		return 4;
	case RXDP_LOG_INFO:
		return 6;
	default:
		return 7;
	}
}

/* One line (without its newline) with what goes before it, in one write */
static void put_line(int prio, const char *s, size_t n)
{
	char head[64];

	if (journal)
		snprintf(head, sizeof(head), "<%d>", prio);
	else if (log_prefix)
		snprintf(head, sizeof(head), "%s: ", log_prefix);
	else
		head[0] = '\0';
	flockfile(stderr);
	fputs(head, stderr);
	fwrite(s, 1, n, stderr);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void rxdp_log_vprint(enum rxdp_log_level level, const char *fmt, va_list ap)
{
	char small[512], *buf = small, *p, *nl;
	va_list aq;
	int n;

	if (level > log_level)
		return;
	rxdp_log_to_journal();
	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(small)) {
		/* a verifier log can be megabytes: all of it, or the start */
		buf = malloc((size_t)n + 1);
		if (buf)
			vsnprintf(buf, (size_t)n + 1, fmt, ap);
		else
			buf = small;
	}
	for (p = buf; *p; p = nl + 1) {
		nl = strchr(p, '\n');
		if (!nl) {
			put_line(log_priority(level), p, strlen(p));
			break;
		}
		put_line(log_priority(level), p, nl - p);
	}
	if (buf != small)
		free(buf);
}

void rxdp_log(enum rxdp_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	rxdp_log_vprint(level, fmt, ap);
	va_end(ap);
}
