/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * One command-line parser for rxdp's tools, in xdp-tools' way: each tool
 * describes its options once, in a table, and the getopt tables, --help and
 * --version come from it, so every tool reads its options, answers --help
 * and --version and reports a bad option the same way:
 *
 *	static const struct rxdp_opt opts[] = {
 *		{ "mode", 'm', "MODE", "native or skb (default: native if the "
 *				       "driver has it)" },
 *		{ "verbose", 'v', NULL, "say more (twice: libbpf's too)" },
 *		{},
 *	};
 *	static const struct rxdp_cmdline cl = {
 *		.prog = "rxdp-loader", .usage = "[OPTIONS] COMMAND",
 *		.opts = opts, .set = set_opt,
 *	};
 *	int first = rxdp_opts_parse(&cl, argc, argv, &cfg);
 *	if (first < 0)
 *		return 2;
 *
 * -h/--help and -V/--version are every tool's: they print to stdout and
 * exit 0. A bad option or a missing value is one line on stderr
 * ("prog: unknown option '--frob' (see --help)") and a return of -1; so is
 * a value set() refuses (it prints its own line and returns non-zero).
 * Options and operands may be mixed (GNU getopt's permutation).
 */
#ifndef RXDP_OPTS_H
#define RXDP_OPTS_H

#include <stdio.h>

struct rxdp_opt {
	const char *name; /* long name, without "--"; NULL ends the table */
	int key; /* the short option's letter, or >= 256 for none */
	const char *metavar; /* the value's name in --help; NULL: no value */
	const char *help; /* one line or more ("\n" between them) */
};

struct rxdp_cmdline {
	const char *prog; /* as the user types it: "rxdp-ctl" */
	const char *usage; /* after "Usage: prog "; lines joined with "\n" */
	const char *doc; /* between the usage and the options (commands) */
	const struct rxdp_opt *opts;
	const char *footer; /* after the options (examples, files) */
	/* one option: 0, or non-zero after printing why the value is bad */
	int (*set)(int key, const char *arg, void *ctx);
};

/* Parse argv's options; the index of the first operand, or -1 (exit 2). */
int rxdp_opts_parse(const struct rxdp_cmdline *cl, int argc, char **argv,
		    void *ctx);
void rxdp_opts_help(const struct rxdp_cmdline *cl, FILE *f);
/* "prog (rxdp) VERSION" and, from a git tree, the commit it was built at */
void rxdp_print_version(const char *prog, FILE *f);
/* The version string alone ("0.1.0") */
const char *rxdp_version(void);
/*
 * A list of numbers and ranges below max, "0,2-3" (--cpus, --tc's SLs):
 * fn(n, arg) for each number in it; 0, or -1 for anything else (an empty
 * list, an empty item, a number out of range, a range backwards)
 */
int rxdp_opts_list(const char *s, unsigned long max,
		   void (*fn)(unsigned long n, void *arg), void *arg);

#endif /* RXDP_OPTS_H */
