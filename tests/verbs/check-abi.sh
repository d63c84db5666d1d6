#!/usr/bin/env bash
# The drop-in libibverbs.so.1 against the installed Debian programs:
#  1. every IBVERBS symbol@version that perftest, ibverbs-utils, librdmacm,
#     libmlx5 and libefa import is defined by build/lib/libibverbs.so.1
#     under the same version, and the version nodes chain as rdma-core's;
#  2. each program starts under LD_BIND_NOW with LD_LIBRARY_PATH=build/lib,
#     the loader takes libibverbs.so.1 from build/lib, and every binding of
#     an IBVERBS symbol goes to it: nothing of the system libibverbs loads.
# Needs no root and no daemon (tests/lib/abi.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/lib/abi.sh"
ABI_NODE=IBVERBS
ABI_SONAME=libibverbs.so.1
ABI_LIB="$root/build/lib/$ABI_SONAME"
libdir="$root/build/lib"
multiarch=/usr/lib/x86_64-linux-gnu
fail=0

[ -f "$ABI_LIB" ] || { echo "missing $ABI_LIB (make build/lib/libibverbs.so.1)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# --- 1. imported vs exported -------------------------------------------------
abi_programs perftest ibverbs-utils
abi_check_imports 100 "${progs[@]}" "$multiarch/librdmacm.so.1" \
	"$multiarch/libmlx5.so.1" "$multiarch/libefa.so.1"
abi_check_nodes IBVERBS_1.0 IBVERBS_1.1 IBVERBS_1.5 IBVERBS_1.6 IBVERBS_1.7 \
	IBVERBS_1.8 IBVERBS_1.9 IBVERBS_1.10 IBVERBS_1.11 IBVERBS_1.12 \
	IBVERBS_1.13 IBVERBS_1.14
if grep -q "Name: IBVERBS_PRIVATE_34$" "$tmp/verdef"; then
	echo "ok: IBVERBS_PRIVATE_34 defined"
else
	echo "FAIL: IBVERBS_PRIVATE_34 not defined"; fail=1
fi
# the common archive stays internal
abi_check_leaks

# --- 2. every program starts on our library ------------------------------------
for p in "${progs[@]}"; do
	abi_check_program "$p"
done

if [ $fail -ne 0 ]; then
	echo "check-abi: FAILED"
	exit 1
fi
echo "check-abi: passed"
