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
# Needs no root and no daemon.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
lib="$root/build/lib/librdmacm.so.1"
libdir="$root/build/lib"
sys=/usr/lib/x86_64-linux-gnu/librdmacm.so.1
fail=0

[ -f "$lib" ] || { echo "missing $lib (make)"; exit 1; }
[ -f "$sys" ] || { echo "SKIP: Debian's librdmacm1 is not installed"; exit 77; }

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

progs=()
for pkg in rdmacm-utils perftest; do
	while read -r f; do
		case "$f" in */bin/*) [ -f "$f" ] && is_elf "$f" && progs+=("$f") ;; esac
	done < <(dpkg -L "$pkg" 2>/dev/null)
done
[ ${#progs[@]} -ge 10 ] || { echo "too few programs found (${#progs[@]}): rdmacm-utils/perftest installed?"; exit 1; }
objs=("${progs[@]}")
for m in cmid device; do
	f=$(ls /usr/lib/python3/dist-packages/pyverbs/$m.cpython-*.so 2>/dev/null | head -n 1)
	[ -n "$f" ] && objs+=("$f")
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# objdump -T: "... *UND* <size> <version> <name>"; keep name@version
for o in "${objs[@]}"; do
	objdump -T "$o" | awk -v o="$o" 'NF >= 3 && $0 ~ /\*UND\*/ && $(NF-1) ~ /RDMACM/ {
		v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v, o }'
done | sort -u > "$tmp/imports"
exports() {
	objdump -T "$1" | awk 'NF >= 3 && $0 !~ /\*UND\*/ && $(NF-1) ~ /RDMACM/ && $NF !~ /^RDMACM/ {
		v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u
}
exports "$lib" > "$tmp/exports"
exports "$sys" > "$tmp/sys_exports"

n_imp=$(cut -d' ' -f1 "$tmp/imports" | sort -u | wc -l)
[ "$n_imp" -ge 40 ] || { echo "only $n_imp imported symbols found: objdump parsing broken?"; exit 1; }
missing=$(cut -d' ' -f1 "$tmp/imports" | sort -u | comm -23 - "$tmp/exports")
if [ -n "$missing" ]; then
	echo "FAIL: imported but not exported by $lib:"
	for m in $missing; do grep "^$m " "$tmp/imports" | sed 's/^/  /'; done
	fail=1
else
	echo "ok: all $n_imp imported RDMACM symbols are exported with their versions"
fi
diff=$(comm -3 "$tmp/sys_exports" "$tmp/exports")
if [ -n "$diff" ]; then
	echo "FAIL: exports differ from Debian's librdmacm1 (left: only Debian's, right: only ours):"
	sed 's/^/  /' <<<"$diff"
	fail=1
else
	echo "ok: the same $(wc -l <"$tmp/exports") symbols as Debian's librdmacm1"
fi

readelf -V --wide "$lib" | awk '/Version definition section/,/Version needs section/' > "$tmp/verdef"
prev=""
for v in RDMACM_1.0 RDMACM_1.1 RDMACM_1.2 RDMACM_1.3; do
	line=$(grep -A1 "Name: $v\$" "$tmp/verdef" || true)
	if [ -z "$line" ]; then
		echo "FAIL: version node $v not defined"; fail=1
	elif [ -n "$prev" ] && ! grep -q "Parent 1: $prev\$" <<<"$line"; then
		echo "FAIL: version node $v does not inherit $prev"; fail=1
	fi
	prev=$v
done
[ $fail -eq 0 ] && echo "ok: version nodes RDMACM_1.0 <- 1.1 <- 1.2 <- 1.3"

leaks=$(objdump -T "$lib" | awk 'NF >= 3 && $0 !~ /\*UND\*/ && $2 ~ /g/ && $(NF-1) !~ /RDMACM/ {print $NF}')
if [ -n "$leaks" ]; then
	echo "FAIL: exported outside the RDMACM nodes: $leaks"; fail=1
fi

# --- 2. every program starts on our library ---------------------------------
check_run() { # NAME DEBUG-PREFIX: the loader's bindings
	local name=$1 dbg
	dbg=$(cat "$tmp/dbg.$name".* 2>/dev/null || true)
	if grep -qE "/usr/lib/x86_64-linux-gnu/librdmacm.so|/lib/x86_64-linux-gnu/librdmacm.so" <<<"$dbg"; then
		echo "FAIL: $name loaded the system librdmacm"; fail=1; return
	fi
	local bad nb
	bad=$(grep -E "normal symbol \`[a-z_0-9]+' \[RDMACM" <<<"$dbg" | grep -v "to $lib \[" || true)
	if [ -n "$bad" ]; then
		echo "FAIL: $name: RDMACM bindings not to our library:"; head -3 <<<"$bad"; fail=1; return
	fi
	nb=$(grep -cE "to $lib \[0\]: normal symbol \`[a-z_0-9]+' \[RDMACM" <<<"$dbg" || true)
	if [ "$nb" -lt 1 ]; then
		echo "FAIL: $name: no RDMACM binding to $lib seen"; fail=1; return
	fi
	echo "ok: $name starts with $nb RDMACM bindings, all to build/lib"
}

for p in "${progs[@]}"; do
	name=$(basename "$p")
	objdump -T "$p" | grep -q RDMACM || continue
	where=$(LD_LIBRARY_PATH="$libdir" ldd "$p" | awk '$1 == "librdmacm.so.1" {print $3}')
	if [ "$(readlink -f "$where")" != "$(readlink -f "$lib")" ]; then
		echo "FAIL: $name: ldd resolves librdmacm.so.1 to '$where'"; fail=1; continue
	fi
	LD_BIND_NOW=1 LD_DEBUG=bindings,files LD_DEBUG_OUTPUT="$tmp/dbg.$name" \
		LD_LIBRARY_PATH="$libdir" RXDP_SOCKET="$tmp/no-daemon" \
		timeout 20 "$p" --help > "$tmp/out.$name" 2>&1 && rc=0 || rc=$?
	if [ $rc -eq 127 ] || [ $rc -eq 124 ] ||
		grep -qE 'symbol lookup error|error while loading shared libraries|version .RDMACM' "$tmp/out.$name"; then
		echo "FAIL: $name did not start (rc $rc):"; sed 's/^/  /' "$tmp/out.$name" | head -5; fail=1; continue
	fi
	check_run "$name"
done

if [ -x /usr/bin/python3 ] && [ -d /usr/lib/python3/dist-packages/pyverbs ]; then
	LD_BIND_NOW=1 LD_DEBUG=bindings,files LD_DEBUG_OUTPUT="$tmp/dbg.pyverbs" \
		LD_LIBRARY_PATH="$libdir" RXDP_SOCKET="$tmp/no-daemon" \
		timeout 60 /usr/bin/python3 -c 'import pyverbs.cmid, pyverbs.device' \
		> "$tmp/out.pyverbs" 2>&1 || { echo "FAIL: pyverbs.cmid does not import:"; cat "$tmp/out.pyverbs"; fail=1; }
	check_run pyverbs
fi

if [ $fail -ne 0 ]; then
	echo "check-abi (rdmacm): FAILED"
	exit 1
fi
echo "check-abi (rdmacm): passed"
