// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* Service classes of a device (tc.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/opts.h"
#include "engine/tc.h"

void eng_tcs_default(struct eng_tcs *t)
{
	memset(t, 0, sizeof(*t));
	t->n = 1;
	t->tc[0].weight = 1;
}

static void sl_add(unsigned long sl, void *set)
{
	*(uint16_t *)set |= (uint16_t)(1U << sl);
}

/* "0-3,6" of [s, end): the set of SLs (a bit each), 0 if it does not parse */
static uint16_t parse_sls(const char *s, const char *end)
{
	char list[64];
	uint16_t set = 0;

	if ((size_t)(end - s) >= sizeof(list))
		return 0;
	memcpy(list, s, (size_t)(end - s));
	list[end - s] = '\0';
	return rxdp_opts_list(list, ENG_SL_MAX, sl_add, &set) ? 0 : set;
}

int eng_tcs_add(struct eng_tcs *t, const char *spec)
{
	const char *eq = strchr(spec, '=');
	struct eng_tc tc = { 0 };
	uint16_t set;

	if (!eq || !eq[1])
		return -EINVAL;
	set = parse_sls(spec, eq);
	if (!set)
		return -EINVAL;
	if (!strcmp(eq + 1, "strict")) {
		tc.strict = 1;
	} else {
		char *p;
		long w = strtol(eq + 1, &p, 10);

		if (*p || w < 1 || w > ENG_TC_WEIGHT_MAX)
			return -EINVAL;
		tc.weight = (uint8_t)w;
	}
	if (!t->named)
		t->n = 0; /* the first class made replaces the default */
	if (set & t->named)
		return -EEXIST;
	if (t->n == ENG_TC_MAX)
		return -ENOSPC;
	t->tc[t->n] = tc;
	for (unsigned int sl = 0; sl < ENG_SL_MAX; sl++)
		if (set & (1U << sl))
			t->sl_tc[sl] = t->n;
	t->named |= set;
	t->n++;
	return 0;
}

int eng_tcs_finish(struct eng_tcs *t)
{
	uint16_t rest = (uint16_t)~t->named;

	if (!t->named || !rest)
		return 0;
	if (t->n == ENG_TC_MAX)
		return -ENOSPC;
	t->tc[t->n] = (struct eng_tc){ .weight = 1 };
	for (unsigned int sl = 0; sl < ENG_SL_MAX; sl++)
		if (rest & (1U << sl))
			t->sl_tc[sl] = t->n;
	t->n++;
	return 0;
}

int eng_tcs_sls(const struct eng_tcs *t, unsigned int k, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return 0;
	buf[0] = '\0';
	for (unsigned int sl = 0; sl < ENG_SL_MAX; sl++) {
		unsigned int end = sl;
		int n;

		if (eng_tcs_class(t, (uint8_t)sl) != k)
			continue;
		while (end + 1 < ENG_SL_MAX &&
		       eng_tcs_class(t, (uint8_t)(end + 1)) == k)
			end++;
		n = end > sl ? snprintf(buf + off, len - off, "%s%u-%u",
					off ? "," : "", sl, end)
			     : snprintf(buf + off, len - off, "%s%u",
					off ? "," : "", sl);
		if (n < 0 || (size_t)n >= len - off) {
			buf[off] = '\0'; /* whole items only */
			return (int)off;
		}
		off += (size_t)n;
		sl = end;
	}
	return (int)off;
}
