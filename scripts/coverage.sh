#!/usr/bin/env bash
# make coverage: line and branch coverage of rxdp's C code under its tests.
#
# A copy of the tree (build/coverage/tree, this checkout's files as they
# are) is built with gcc --coverage, and every test of `make check` but the
# guests' runs there, as root: their programs (rxdpd, the libraries in
# the test programs, the tools) write their counts as they exit. The guests
# (tests/vm/) are left out: they run the tree read-only over 9p, where no
# count can be written. Then gcovr reads the counts: line and branch
# figures per folder of the product (not the tests) are printed and
# written to build/coverage/summary.txt, every file's to
# build/coverage/files.txt, and the functions that libibverbs.so.1 and
# librdmacm.so.1 export (their .map files; rsockets among them) that no
# test ran to build/coverage/unreached.txt. Each of those must be listed,
# with why, in tests/untested-functions.txt: one that is not (a function
# a test stopped reaching, or a new one never tested) fails, and a listed
# one that a test now reaches is named, to be taken off the list.
#
# RXDP_COVERAGE_TESTS names the tests to run instead (a quick look; the
# list is not compared then).
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/coverage
tree=$out/tree

command -v gcovr >/dev/null || { echo "coverage: needs gcovr (apt-get install gcovr)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$tree"
# with .git: tests/install/deb.sh packages what git lists
(cd "$root" && tar --exclude=./build -cf - .) | tar -C "$tree" -xf - ||
	{ echo "coverage: cannot copy the tree" >&2; exit 1; }
cd "$tree" || exit 1
echo "coverage: building the tree with --coverage in $tree"
# atomic counters: rxdpd's threads (and a client's) count the same lines at
# once, and racing increments come out as negative counts gcovr refuses
cov_flags="--coverage -fprofile-update=atomic"
make -j"$(nproc)" EXTRA_CFLAGS="$cov_flags" EXTRA_LDFLAGS="$cov_flags" \
	all >"$out/build.log" 2>&1 &&
	make -j"$(nproc)" EXTRA_CFLAGS="$cov_flags" \
		EXTRA_LDFLAGS="$cov_flags" test-bins >>"$out/build.log" 2>&1 ||
	{ tail -n 20 "$out/build.log"; echo "coverage: the build failed" >&2; exit 1; }
# the tests' programs run as other users too: their counts must land,
# in files anyone may write (gcov makes them with the process's umask), and
# what gcov cannot write goes to a log, not to the stderr a test reads;
# a make a test runs (make install) builds as this build did
chmod -R a+rwX build/obj
umask 0
: >"$out/gcov-errors.log"
chmod 666 "$out/gcov-errors.log"
export GCOV_ERROR_FILE=$out/gcov-errors.log EXTRA_CFLAGS=$cov_flags EXTRA_LDFLAGS=$cov_flags
# (and the fuzzers, built by clang, which gcov does not count)
tests=${RXDP_COVERAGE_TESTS:-$(make -s print-tests | tr ' ' '\n' | grep -v -e '^tests/vm/' -e '^tests/fuzz/')}
# shellcheck disable=SC2086
RXDP_CHECK_START=$(date +%s) tests/run-tests.sh $tests >"$out/tests.log" 2>&1
echo "coverage: $(tail -n 1 "$out/tests.log") (log: $out/tests.log)"
[ -s "$out/gcov-errors.log" ] &&
	echo "coverage: gcov could not write some counts: $(sort -u "$out/gcov-errors.log" | head -n 3)"

# One pass over the counts. The figures are of the product's sources,
# userspace/ and tools/ (bpf/ is BPF, not gcov's). gcov files a function
# under the header that first declared it: the exported verbs and rdma_*
# and r* calls are under rdma-core's headers (<infiniband/verbs.h>,
# <rdma/rdma_cma.h>, <rdma/rsocket.h>), so those are read too, for their
# functions' calls only, with the functions gcovr takes for the
# compiler's own by their names (__verbs_log, __ioctl_final_num_attrs:
# exported, and run)
gcovr -r "$tree" --object-directory build/obj --filter 'userspace/' \
	--filter 'tools/' --filter '/usr/include/(infiniband|rdma)/' \
	--include-internal-functions --json "$out/cov.json" \
	>/dev/null 2>"$out/gcovr.log" ||
	{ tail -n 5 "$out/gcovr.log"; echo "coverage: gcovr failed" >&2; exit 1; }
/usr/bin/python3 - "$out" "$tree" "$root/tests/untested-functions.txt" \
	"${RXDP_COVERAGE_TESTS:+part}" <<'EOF'
import collections, json, re, sys
out, tree, listed_file, part = sys.argv[1:5]
d = json.load(open(out + "/cov.json"))
folders = collections.OrderedDict()
files = []
funcs = {}
for f in d["files"]:
    name = f["file"]
    for fn in f.get("functions", []):
        funcs[fn["name"]] = funcs.get(fn["name"], 0) + fn["execution_count"]
    if not name.startswith(("userspace/", "tools/")):
        continue  # a header of rdma-core's: its functions only
    lines = [l for l in f["lines"] if not l.get("gcovr/noncode")]
    lt = len(lines)
    lh = sum(1 for l in lines if l["count"] > 0)
    bt = sum(len(l["branches"]) for l in lines)
    bh = sum(1 for l in lines for b in l["branches"] if b["count"] > 0)
    parts = name.split("/")
    folder = "/".join(parts[:2]) if len(parts) > 2 else parts[0]
    s = folders.setdefault(folder, [0, 0, 0, 0])
    s[0] += lh; s[1] += lt; s[2] += bh; s[3] += bt
    files.append((name, lh, lt, bh, bt))
pct = lambda a, b: 100.0 * a / b if b else 100.0
total = [sum(v[i] for v in folders.values()) for i in range(4)]
with open(out + "/summary.txt", "w") as s:
    s.write("%-22s %8s %8s %7s %8s %8s %7s\n" % ("folder", "lines", "of", "%",
            "branches", "of", "%"))
    for k, v in sorted(folders.items()):
        s.write("%-22s %8d %8d %6.1f%% %8d %8d %6.1f%%\n" % (k, v[0], v[1],
                pct(v[0], v[1]), v[2], v[3], pct(v[2], v[3])))
    s.write("%-22s %8d %8d %6.1f%% %8d %8d %6.1f%%\n" % ("all", total[0],
            total[1], pct(total[0], total[1]), total[2], total[3],
            pct(total[2], total[3])))
with open(out + "/files.txt", "w") as s:
    for n, lh, lt, bh, bt in sorted(files):
        s.write("%-44s lines %5.1f%% (%d/%d) branches %5.1f%% (%d/%d)\n" %
                (n, pct(lh, lt), lh, lt, pct(bh, bt), bh, bt))
# the exported functions no test reached
unreached = []
for lib, mp in (("libibverbs.so.1", "userspace/verbs/libibverbs.map"),
                ("librdmacm.so.1", "userspace/rdmacm/librdmacm.map")):
    exported = re.findall(r"^\s*([A-Za-z_][A-Za-z0-9_]*);", open(tree + "/" + mp).read(), re.M)
    for e in sorted(set(exported)):
        if funcs.get(e, 0) == 0:
            unreached.append("%s %s%s" % (lib, e, "" if e in funcs else
                             " (no function body: a variable, an alias or a forward)"))
open(out + "/unreached.txt", "w").write("\n".join(unreached) + "\n")
print(open(out + "/summary.txt").read(), end="")
print("exported functions no test ran: %d (%s/unreached.txt)" % (len(unreached), out))
if part:
    sys.exit(0)  # a few tests: the list is for the whole suite
listed = {}
for l in open(listed_file):
    w = l.split(None, 2)
    if len(w) >= 2 and not l.startswith("#"):
        listed[(w[0], w[1])] = w[2].strip() if len(w) > 2 else ""
now = {tuple(u.split()[:2]) for u in unreached}
new = sorted(now - set(listed))
gone = sorted(set(listed) - now)
for lib, fn in new:
    print("coverage: %s %s: no test runs it, and tests/untested-functions.txt "
          "does not list it" % (lib, fn))
for lib, fn in gone:
    print("coverage: %s %s: a test runs it now: take it off "
          "tests/untested-functions.txt" % (lib, fn))
sys.exit(1 if new else 0)
EOF
