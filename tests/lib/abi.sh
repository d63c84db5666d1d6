# shellcheck shell=bash
# A drop-in library (build/lib's libibverbs.so.1, librdmacm.so.1) against
# the installed Debian programs, for tests/*/check-abi.sh. The caller sets
#   ABI_NODE   the symbol version prefix (IBVERBS, RDMACM)
#   ABI_LIB    our library; ABI_SONAME its soname
#   libdir, tmp, fail=0
# and reads `fail` at the end. Needs no root and no daemon.

is_elf() { [ "$(head -c 4 "$1" | od -An -c | tr -d ' ')" = '177ELF' ]; }

# abi_programs PKG...: the ELF programs in the packages' bin directories,
# into the array progs
abi_programs() {
	local pkg f
	progs=()
	for pkg in "$@"; do
		while read -r f; do
			case "$f" in */bin/*) [ -f "$f" ] && is_elf "$f" && progs+=("$f") ;; esac
		done < <(dpkg -L "$pkg" 2>/dev/null)
	done
	[ ${#progs[@]} -ge 10 ] ||
		{ echo "too few programs found (${#progs[@]}): $* installed?"; exit 1; }
}

# abi_exports LIB: LIB's name@version of ABI_NODE's nodes (objdump -T: the
# version in parentheses for a non-default binding)
abi_exports() {
	objdump -T "$1" | awk -v n="$ABI_NODE" 'NF >= 3 && $0 !~ /\*UND\*/ &&
		$(NF-1) ~ n && $NF !~ "^" n {
		v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v }' | sort -u
}

# abi_check_imports MIN OBJ...: every ABI_NODE symbol@version the objects
# import (at least MIN of them) is exported by ABI_LIB
abi_check_imports() {
	local min=$1 o n missing m
	shift
	for o in "$@"; do
		objdump -T "$o" | awk -v o="$o" -v n="$ABI_NODE" 'NF >= 3 &&
			$0 ~ /\*UND\*/ && $(NF-1) ~ n {
			v = $(NF-1); gsub(/[()]/, "", v); print $NF "@" v, o }'
	done | sort -u >"$tmp/imports"
	abi_exports "$ABI_LIB" >"$tmp/exports"
	n=$(cut -d' ' -f1 "$tmp/imports" | sort -u | wc -l)
	[ "$n" -ge "$min" ] ||
		{ echo "only $n imported symbols found: objdump parsing broken?"; exit 1; }
	missing=$(cut -d' ' -f1 "$tmp/imports" | sort -u | comm -23 - "$tmp/exports")
	if [ -n "$missing" ]; then
		echo "FAIL: imported but not exported by $ABI_LIB:"
		for m in $missing; do grep "^$m " "$tmp/imports" | sed 's/^/  /'; done
		fail=1
	else
		echo "ok: all $n imported $ABI_NODE symbols are exported with their versions"
	fi
}

# abi_check_nodes V...: ABI_LIB defines the version nodes V..., each the
# parent of the next (readelf -V: .gnu.version_d)
abi_check_nodes() {
	local v line prev="" bad=0
	readelf -V --wide "$ABI_LIB" |
		awk '/Version definition section/,/Version needs section/' >"$tmp/verdef"
	for v in "$@"; do
		line=$(grep -A1 "Name: $v\$" "$tmp/verdef" || true)
		if [ -z "$line" ]; then
			echo "FAIL: version node $v not defined"; bad=1
		elif [ -n "$prev" ] && ! grep -q "Parent 1: $prev\$" <<<"$line"; then
			echo "FAIL: version node $v does not inherit $prev"; bad=1
		fi
		prev=$v
	done
	[ $bad -eq 0 ] && echo "ok: version nodes $1 <- ... <- $prev"
	[ $bad -eq 0 ] || fail=1
}

# abi_check_leaks: nothing but the ABI leaks out of ABI_LIB
abi_check_leaks() {
	local leaks
	leaks=$(objdump -T "$ABI_LIB" | awk -v n="$ABI_NODE" 'NF >= 3 &&
		$0 !~ /\*UND\*/ && $2 ~ /g/ && $(NF-1) !~ n {print $NF}')
	if [ -n "$leaks" ]; then
		echo "FAIL: exported outside the $ABI_NODE nodes: $leaks"; fail=1
	fi
}

# abi_start NAME TIMEOUT CMD...: CMD runs under LD_BIND_NOW on build/lib
# with the loader's bindings logged, no daemon to find; 0 if it started,
# else a FAIL line
abi_start() {
	local name=$1 secs=$2 rc
	shift 2
	LD_BIND_NOW=1 LD_DEBUG=bindings,files LD_DEBUG_OUTPUT="$tmp/dbg.$name" \
		LD_LIBRARY_PATH="$libdir" RXDP_SOCKET="$tmp/no-daemon" \
		timeout "$secs" "$@" >"$tmp/out.$name" 2>&1 && rc=0 || rc=$?
	abi_rc=$rc
	if [ $rc -eq 127 ] || [ $rc -eq 124 ] ||
		grep -qE "symbol lookup error|error while loading shared libraries|version .$ABI_NODE" \
			"$tmp/out.$name"; then
		echo "FAIL: $name did not start (rc $rc):"
		sed 's/^/  /' "$tmp/out.$name" | head -5
		fail=1
		return 1
	fi
}

# abi_check_bindings NAME: what abi_start logged for NAME: no system copy
# of the library loaded, every ABI_NODE binding to ABI_LIB, at least one
abi_check_bindings() {
	local name=$1 dbg bad nb
	dbg=$(cat "$tmp/dbg.$name".* 2>/dev/null || true)
	if grep -qE "/lib/x86_64-linux-gnu/$ABI_SONAME" <<<"$dbg"; then
		echo "FAIL: $name loaded the system $ABI_SONAME"; fail=1; return
	fi
	bad=$(grep -E "normal symbol \`[a-z_0-9]+' \[$ABI_NODE" <<<"$dbg" |
		grep -v "to $ABI_LIB \[" || true)
	if [ -n "$bad" ]; then
		echo "FAIL: $name: $ABI_NODE bindings not to our library:"
		head -3 <<<"$bad"
		fail=1
		return
	fi
	nb=$(grep -cE "to $ABI_LIB \[0\]: normal symbol \`[a-z_0-9]+' \[$ABI_NODE" <<<"$dbg" || true)
	if [ "$nb" -lt 1 ]; then
		echo "FAIL: $name: no $ABI_NODE binding to $ABI_LIB seen"; fail=1; return
	fi
	echo "ok: $name starts (rc $abi_rc) with $nb $ABI_NODE bindings, all to build/lib"
}

# abi_check_program PROG: ldd finds ABI_SONAME in build/lib, PROG --help
# starts (non-zero is fine: perftest's usage), and its bindings are ours
abi_check_program() {
	local p=$1 name where
	name=$(basename "$p")
	where=$(LD_LIBRARY_PATH="$libdir" ldd "$p" | awk -v s="$ABI_SONAME" '$1 == s {print $3}')
	if [ "$(readlink -f "$where")" != "$(readlink -f "$ABI_LIB")" ]; then
		echo "FAIL: $name: ldd resolves $ABI_SONAME to '$where'"; fail=1; return
	fi
	abi_start "$name" 20 "$p" --help && abi_check_bindings "$name"
}
