// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <ctype.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/opts.h"
#include "rxdp_version.h" /* generated: RXDP_VERSION, RXDP_GIT */

#define OPTS_MAX 64
#define KEY_HELP 'h'
#define KEY_VERSION 'V'

static const struct rxdp_opt builtin[] = {
	{ "help", KEY_HELP, NULL, "show this text and exit" },
	{ "version", KEY_VERSION, NULL, "show the version and exit" },
	{},
};

const char *rxdp_version(void)
{
	return RXDP_VERSION;
}

void rxdp_print_version(const char *prog, FILE *f)
{
	fprintf(f, "%s (rxdp) %s\n", prog, RXDP_VERSION);
	if (RXDP_GIT[0])
		fprintf(f, "built from git %s\n", RXDP_GIT);
}

/* "  -m, --mode MODE" padded to the help column, then the help's lines */
static void help_opt(const struct rxdp_opt *o, FILE *f)
{
	char head[64];
	const char *h, *nl;
	int n;

	if (o->key < 256)
		n = snprintf(head, sizeof(head), "  -%c, --%s%s%s", o->key,
			     o->name, o->metavar ? " " : "",
			     o->metavar ? o->metavar : "");
	else
		n = snprintf(head, sizeof(head), "      --%s%s%s", o->name,
			     o->metavar ? " " : "",
			     o->metavar ? o->metavar : "");
	if (n > 26) /* a long head: its help on the next line */
		fprintf(f, "%s\n%28s", head, "");
	else
		fprintf(f, "%-28s", head);
	for (h = o->help; (nl = strchr(h, '\n')); h = nl + 1)
		fprintf(f, "%.*s\n%28s", (int)(nl - h), h, "");
	fprintf(f, "%s\n", h);
}

void rxdp_opts_help(const struct rxdp_cmdline *cl, FILE *f)
{
	const char *u, *nl;
	const struct rxdp_opt *o;

	/* a line per form; one that starts with a space continues the last */
	for (u = cl->usage, nl = NULL; u; u = nl ? nl + 1 : NULL) {
		int n;

		nl = strchr(u, '\n');
		n = nl ? (int)(nl - u) : (int)strlen(u);
		if (u[0] == ' ')
			fprintf(f, "       %*s%.*s\n", (int)strlen(cl->prog),
				"", n, u);
		else
			fprintf(f, "%s %s %.*s\n",
				u == cl->usage ? "Usage:" : "      ", cl->prog,
				n, u);
	}
	if (cl->doc)
		fprintf(f, "\n%s", cl->doc);
	fprintf(f, "\nOptions:\n");
	for (o = cl->opts; o && o->name; o++)
		help_opt(o, f);
	for (o = builtin; o->name; o++)
		help_opt(o, f);
	if (cl->footer)
		fprintf(f, "\n%s", cl->footer);
}

/* getopt's tables from the tool's and the built-in options */
static int opts_build(const struct rxdp_cmdline *cl, struct option *lo,
		      char *so)
{
	const struct rxdp_opt *tabs[] = { cl->opts, builtin };
	int n = 0, s = 0;

	so[s++] = ':'; /* a missing value is ':', not '?' */
	for (int t = 0; t < 2; t++) {
		for (const struct rxdp_opt *o = tabs[t]; o && o->name; o++) {
			if (n == OPTS_MAX)
				return -1;
			lo[n++] = (struct option){ o->name,
						   o->metavar
							   ? required_argument
							   : no_argument,
						   NULL, o->key };
			if (o->key < 256) {
				so[s++] = (char)o->key;
				if (o->metavar)
					so[s++] = ':';
			}
		}
	}
	lo[n] = (struct option){ 0 };
	so[s] = '\0';
	return 0;
}

int rxdp_opts_parse(const struct rxdp_cmdline *cl, int argc, char **argv,
		    void *ctx)
{
	struct option lo[OPTS_MAX + 1];
	char so[3 * OPTS_MAX + 2];
	int opt;

	if (opts_build(cl, lo, so)) {
		fprintf(stderr, "%s: too many options\n", cl->prog);
		return -1;
	}
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		switch (opt) {
		case KEY_HELP:
			rxdp_opts_help(cl, stdout);
			exit(0);
		case KEY_VERSION:
			rxdp_print_version(cl->prog, stdout);
			exit(0);
		case ':':
			fprintf(stderr, "%s: %s needs a value (see --help)\n",
				cl->prog, argv[optind - 1]);
			return -1;
		case '?':
			if (optopt && optopt < 256)
				fprintf(stderr,
					"%s: unknown option '-%c' (see "
					"--help)\n",
					cl->prog, optopt);
			else
				fprintf(stderr,
					"%s: unknown option '%s' (see "
					"--help)\n",
					cl->prog, argv[optind - 1]);
			return -1;
		default:
			if (!cl->set || cl->set(opt, optarg, ctx))
				return -1;
		}
	}
	return optind;
}

int rxdp_opts_list(const char *s, unsigned long max,
		   void (*fn)(unsigned long n, void *arg), void *arg)
{
	for (;;) {
		unsigned long a, b;
		char *end;

		if (!isdigit((unsigned char)*s))
			return -1;
		a = b = strtoul(s, &end, 10);
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				return -1;
			b = strtoul(s, &end, 10);
		}
		if (a >= max || b >= max || b < a)
			return -1;
		for (; a <= b; a++)
			fn(a, arg);
		if (!*end)
			return 0;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}
