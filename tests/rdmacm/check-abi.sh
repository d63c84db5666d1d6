#!/usr/bin/env bash
# The drop-in librdmacm.so.1 against the installed Debian programs:
#  1. every RDMACM symbol@version that rdmacm-utils, perftest and pyverbs
#     import is defined by build/lib/librdmacm.so.1 under the same version,
#     Debian 12's librdmacm1 exports nothing we do not, and the version
#     nodes chain as rdma-core's (RDMACM_1.0 <- 1.1 <- 1.2 <- 1.3);
#  2. each program starts under LD_BIND_NOW with LD_LIBRARY_PATH=build/lib,
#     the loader takes librdmacm.so.1 from build/lib, and every binding of
#     an RDMACM symbol goes to it (pyverbs' CM module is imported the same
#     way).
# Needs no root and no daemon (tests/lib/abi.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/abi.sh"
ABI_NODE=RDMACM
ABI_SONAME=librdmacm.so.1
ABI_LIB="$root/build/lib/$ABI_SONAME"
libdir="$root/build/lib"
sys=/usr/lib/x86_64-linux-gnu/librdmacm.so.1
fail=0

[ -f "$ABI_LIB" ] || { echo "missing $ABI_LIB (make)"; exit 1; }
[ -f "$sys" ] || { echo "SKIP: Debian's librdmacm1 is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- 1. imported vs exported -------------------------------------------------
abi_programs rdmacm-utils perftest
objs=("${progs[@]}")
for m in cmid device; do
	f=$(ls /usr/lib/python3/dist-packages/pyverbs/$m.cpython-*.so 2>/dev/null | head -n 1)
	[ -n "$f" ] && objs+=("$f")
done
abi_check_imports 40 "${objs[@]}"
diff=$(comm -3 <(abi_exports "$sys") "$tmp/exports")
if [ -n "$diff" ]; then
	echo "FAIL: exports differ from Debian's librdmacm1 (left: only Debian's, right: only ours):"
	sed 's/^/  /' <<<"$diff"
	fail=1
else
	echo "ok: the same $(wc -l <"$tmp/exports") symbols as Debian's librdmacm1"
fi
abi_check_nodes RDMACM_1.0 RDMACM_1.1 RDMACM_1.2 RDMACM_1.3
abi_check_leaks

# --- 2. every program starts on our library ---------------------------------
for p in "${progs[@]}"; do
	objdump -T "$p" | grep -q RDMACM || continue
	abi_check_program "$p"
done
if [ -x /usr/bin/python3 ] && [ -d /usr/lib/python3/dist-packages/pyverbs ]; then
	abi_start pyverbs 60 /usr/bin/python3 -c 'import pyverbs.cmid, pyverbs.device' &&
		abi_check_bindings pyverbs
fi

if [ $fail -ne 0 ]; then
	echo "check-abi (rdmacm): FAILED"
	exit 1
fi
echo "check-abi (rdmacm): passed"
