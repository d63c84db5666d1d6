#!/usr/bin/env bash
# The documents a newcomer reads, held to what issue 44 asked of them:
#  - README.md short (at most 200 lines) with its sections, the rest in
#    docs/; no document links outside the tree or to a file that is not
#    in it, and no tracked file names the developers' shared folder
#  - each option documented once, in the man pages, and they agree with
#    --help: every option (short and long, with its argument), every
#    command or WHAT, in both; the SYNOPSIS names every long option
# Needs no root, no namespace.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/netns.sh"
BIN=${RXDP_BIN:-$root/build/bin}
cd "$root" || fail "no $root"
command -v git >/dev/null && [ -e .git ] || skip "needs a git checkout"

n=$(wc -l <README.md)
[ "$n" -le 200 ] || fail "README.md is $n lines (at most 200)"
for h in "Quick start" "On a real host" "What runs" "Performance" "Limits" \
	"Troubleshooting" "Where the code lives"; do
	grep -qx "## $h" README.md || fail "README.md has no '## $h'"
done
for d in design features memory operating troubleshooting kernels testing performance; do
	[ -s "docs/$d.md" ] || fail "docs/$d.md missing"
	grep -q "(docs/$d.md" README.md || fail "README.md does not link docs/$d.md"
done
echo "ok: README.md $n lines, its sections, docs/ linked"

# links: every relative target exists in the tree, none leaves it
out=$(git ls-files -co --exclude-standard '*.md' | python3 -c '
import os, re, sys
bad = []
for f in sys.stdin.read().split():
    text = open(f).read()
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        t = m.group(1).split("#")[0]
        if not t or re.match(r"[a-z]+:", t):
            continue
        p = os.path.normpath(os.path.join(os.path.dirname(f), t))
        if p.startswith(".."):
            bad.append("%s: %s leaves the tree" % (f, t))
        elif not os.path.exists(p):
            bad.append("%s: %s does not exist" % (f, t))
print("\n".join(bad))
')
[ -z "$out" ] || fail "links: $out"
left=$(git grep --untracked -lE '\.\./shared/|shared/(notes|tools|DESIGN)' -- . ':!tests/e2e/docs.sh')
[ -z "$left" ] || fail "files that name a place outside the tree: $left"
echo "ok: no link leaves the tree or misses its file"


# --- the man pages against --help -------------------------------------------
# manhelp TOOL MANPAGE SECTION: SECTION is the man page's list of commands
for t in "rxdpd dist/man/rxdpd.8 -" "rxdp-loader dist/man/rxdp-loader.8 COMMANDS" \
	"rxdp-ctl dist/man/rxdp-ctl.1 WHAT"; do
	set -- $t
	[ -x "$BIN/$1" ] || fail "$BIN/$1 not built"
	"$BIN/$1" --help >"/tmp/rxdp-docs-help.$$" || fail "$1 --help"
	out=$(python3 - "$1" "$2" "$3" "/tmp/rxdp-docs-help.$$" <<'PYEOF'
import re, sys
tool, manf, cmdsec, helpf = sys.argv[1:]
man = open(manf).read()
helptext = open(helpf).read()
def section(name):
    m = re.search(r"^\.SH " + name + r"\n(.*?)(?=^\.SH |\Z)", man, re.S | re.M)
    return m.group(1) if m else ""
def plain(s):  # troff to text: escapes and fonts out
    s = re.sub(r"\\f[BIRP]", "", s).replace("\\-", "-").replace("\\&", "")
    return s.replace('"', "")
bad = []
# options: "-x, --long ARG" in --help; .BI/.BR items in OPTIONS
hopts = set()
for m in re.finditer(r"^  (-\w), (--[\w-]+)(?: ([A-Z]+))?", helptext, re.M):
    hopts.add((m.group(1), m.group(2), m.group(3) or ""))
mopts = set()
for ln in section("OPTIONS").splitlines():
    if not re.match(r"^\.(BI|BR|B) ", ln):
        continue
    p = plain(ln)
    m = re.match(r"^\.\w+ (-\w)(?: ([A-Z]+))?,? ?,? ?(--[\w-]+)(?: ([A-Z]+))?", p.replace(" , ", ", ").replace(",", " ").replace("  ", " "))
    if m:
        mopts.add((m.group(1), m.group(3), m.group(4) or m.group(2) or ""))
for o in sorted(hopts - mopts):
    bad.append("--help has %s %s %s, %s's OPTIONS does not" % (o[0], o[1], o[2], manf))
for o in sorted(mopts - hopts):
    bad.append("%s's OPTIONS has %s %s %s, --help does not" % (manf, o[0], o[1], o[2]))
if len(hopts) < 3:
    bad.append("too few options in --help")
# the SYNOPSIS names every long option but --help and --version
syn = plain(section("SYNOPSIS"))
for o in hopts:
    if o[1] not in ("--help", "--version", "--verbose") and o[1] not in syn:
        bad.append("%s's SYNOPSIS lacks %s" % (manf, o[1]))
# commands: "  name  text" under Commands:/WHAT in --help; .B/.BI/.BR items
if cmdsec != "-":
    hc = set(re.findall(r"^  ([a-z]+) {2,}", helptext.split("Options:")[0], re.M))
    mc = set()
    prev = ""
    for ln in section(cmdsec).splitlines():
        m = re.match(r"^\.(?:B|BI|BR) \"?([a-z]+)", plain(ln).replace(".B ", ".B ").replace(".BI ", ".BI ").replace(".BR ", ".BR "))
        if m and ln.startswith((".B ", ".BI ", ".BR ")) and prev == ".TP":
            mc.add(m.group(1))
        prev = ln
    for c in sorted(hc ^ mc):
        bad.append("command %s: %s" % (c, "--help only" if c in hc else manf + " only"))
else:
    hc = set()
print("\n".join(bad) if bad else "%s: %d options, %d commands agree" % (tool, len(hopts), len(hc)))
sys.exit(1 if bad else 0)
PYEOF
)
	rc=$?
	rm -f "/tmp/rxdp-docs-help.$$"
	[ $rc = 0 ] || fail "$1: the man page and --help disagree: $out"
	echo "ok: $out"
done
echo "PASS: the documents"
