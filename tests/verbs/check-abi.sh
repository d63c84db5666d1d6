#!/usr/bin/env bash
# The drop-in libibverbs.so.1 against the installed Debian programs:
#  1. every IBVERBS symbol@version that perftest, ibverbs-utils, librdmacm,
#     libmlx5 and libefa import is defined by build/lib/libibverbs.so.1
#     under the same version, and the version nodes chain as rdma-core's;
#  2. each program starts under LD_BIND_NOW with LD_LIBRARY_PATH=build/lib,
#     the loader takes libibverbs.so.1 from build/lib, and every binding of
#     an IBVERBS symbol goes to it: nothing of the system libibverbs loads.
# Needs no root and no daemon.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
lib="$root/build/lib/libibverbs.so.1"
libdir="$root/build/lib"
multiarch=/usr/lib/x86_64-linux-gnu
fail=0

[ -f "$lib" ] || { echo "missing $lib (make build/lib/libibverbs.so.1)"; exit 1; }

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

progs=()
for pkg in perftest ibverbs-utils; do
	while read -r f; do
		case "$f" in */bin/*) [ -f "$f" ] && is_elf "$f" && progs+=("$f") ;; esac
	done < <(dpkg -L "$pkg")
done
[ ${#progs[@]} -ge 10 ] || { echo "too few programs found (${#progs[@]}): perftest/ibverbs-utils installed?"; exit 1; }
objs=("${progs[@]}" "$multiarch/librdmacm.so.1" "$multiarch/libmlx5.so.1" "$multiarch/libefa.so.1")

# --- 1. imported vs exported -------------------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# objdump -T: "... *UND* <size> <version> <name>" (version in parentheses
# for a non-default binding); keep name@version for IBVERBS ones.
for o in "${objs[@]}"; do
	objdump -T "$o" | awk -v o="$o" 'NF >= 3 && $0 ~ /\*UND\*/ && $(NF-1) ~ /IBVERBS/ {
		v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v, o }'
done | sort -u > "$tmp/imports"
objdump -T "$lib" | awk 'NF >= 3 && $0 !~ /\*UND\*/ && $(NF-1) ~ /IBVERBS/ {
	v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u > "$tmp/exports"

n_imp=$(cut -d' ' -f1 "$tmp/imports" | sort -u | wc -l)
[ "$n_imp" -ge 100 ] || { echo "only $n_imp imported symbols found: objdump parsing broken?"; exit 1; }
missing=$(cut -d' ' -f1 "$tmp/imports" | sort -u | comm -23 - "$tmp/exports")
if [ -n "$missing" ]; then
	echo "FAIL: imported but not exported by $lib:"
	for m in $missing; do grep "^$m " "$tmp/imports" | sed 's/^/  /'; done
	fail=1
else
	echo "ok: all $n_imp imported IBVERBS symbols are exported with their versions"
fi

# The version definitions and their parents (readelf -V, .gnu.version_d)
readelf -V --wide "$lib" | awk '/Version definition section/,/Version needs section/' > "$tmp/verdef"
prev=""
for v in IBVERBS_1.0 IBVERBS_1.1 IBVERBS_1.5 IBVERBS_1.6 IBVERBS_1.7 IBVERBS_1.8 \
	IBVERBS_1.9 IBVERBS_1.10 IBVERBS_1.11 IBVERBS_1.12 IBVERBS_1.13 IBVERBS_1.14; do
	line=$(grep -A1 "Name: $v\$" "$tmp/verdef" || true)
	if [ -z "$line" ]; then
		echo "FAIL: version node $v not defined"; fail=1
	elif [ -n "$prev" ] && ! grep -q "Parent 1: $prev\$" <<<"$line"; then
		echo "FAIL: version node $v does not inherit $prev"; fail=1
	fi
	prev=$v
done
grep -q "Name: IBVERBS_PRIVATE_34$" "$tmp/verdef" || { echo "FAIL: IBVERBS_PRIVATE_34 not defined"; fail=1; }
[ $fail -eq 0 ] && echo "ok: version nodes IBVERBS_1.0 <- ... <- 1.14 and IBVERBS_PRIVATE_34"

# Nothing but the ABI leaks out (the common archive stays internal)
leaks=$(objdump -T "$lib" | awk 'NF >= 3 && $0 !~ /\*UND\*/ && $2 ~ /g/ && $(NF-1) !~ /IBVERBS/ {print $NF}')
if [ -n "$leaks" ]; then
	echo "FAIL: exported outside the IBVERBS nodes: $leaks"; fail=1
fi

# --- 2. every program starts on our library ------------------------------------
for p in "${progs[@]}"; do
	name=$(basename "$p")
	where=$(LD_LIBRARY_PATH="$libdir" ldd "$p" | awk '$1 == "libibverbs.so.1" {print $3}')
	if [ "$(readlink -f "$where")" != "$(readlink -f "$lib")" ]; then
		echo "FAIL: $name: ldd resolves libibverbs.so.1 to '$where'"; fail=1; continue
	fi
	# --help prints usage and exits (non-zero for perftest); with no daemon
	# nothing is listed, so no program waits for a device.
	LD_BIND_NOW=1 LD_DEBUG=bindings,files LD_DEBUG_OUTPUT="$tmp/dbg.$name" \
		LD_LIBRARY_PATH="$libdir" RXDP_SOCKET="$tmp/no-daemon" \
		timeout 20 "$p" --help > "$tmp/out.$name" 2>&1 && rc=0 || rc=$?
	dbg=$(cat "$tmp/dbg.$name".* 2>/dev/null || true)
	if [ $rc -eq 127 ] || [ $rc -eq 124 ] ||
		grep -qE 'symbol lookup error|error while loading shared libraries|version .IBVERBS' "$tmp/out.$name"; then
		echo "FAIL: $name did not start (rc $rc):"; sed 's/^/  /' "$tmp/out.$name" | head -5; fail=1; continue
	fi
	if grep -q "$multiarch/libibverbs.so" <<<"$dbg" || grep -q '/lib/x86_64-linux-gnu/libibverbs.so' <<<"$dbg"; then
		echo "FAIL: $name loaded the system libibverbs"; fail=1; continue
	fi
	bad=$(grep -E "normal symbol \`[a-z_0-9]+' \[IBVERBS" <<<"$dbg" | grep -v "to $lib \[" || true)
	if [ -n "$bad" ]; then
		echo "FAIL: $name: IBVERBS bindings not to our library:"; head -3 <<<"$bad"; fail=1; continue
	fi
	nb=$(grep -cE "to $lib \[0\]: normal symbol \`[a-z_0-9]+' \[IBVERBS" <<<"$dbg" || true)
	if [ "$nb" -lt 1 ]; then
		echo "FAIL: $name: no IBVERBS binding to $lib seen"; fail=1; continue
	fi
	echo "ok: $name starts (rc $rc) with $nb IBVERBS bindings, all to build/lib"
done

if [ $fail -ne 0 ]; then
	echo "check-abi: FAILED"
	exit 1
fi
echo "check-abi: passed"
