#!/usr/bin/env bash
# The layer check (scripts/layers.py) on a made-up folder: it passes a
# folder that keeps its layers, and fails, naming the fault, on an upward
# call, a cycle between files of one layer, a file in no layer, and a
# function over 150 lines.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/userspace/f
mkdir -p "$src" "$tmp/obj/userspace/f"
fails=0

# top.c calls mid.c calls low.c; mid2.c calls mid.c (same layer)
cat >"$src/top.c" <<'C'
int mid(void);
int top(void)
{
	return mid();
}
C
cat >"$src/mid.c" <<'C'
int low(void);
int mid(void)
{
	return low();
}
C
cat >"$src/mid2.c" <<'C'
int mid(void);
int mid2(void)
{
	return mid();
}
C
cat >"$src/low.c" <<'C'
int low(void)
{
	return 1;
}
C

build() {
	for c in "$src"/*.c; do
		cc -c "$c" -o "$tmp/obj/userspace/f/$(basename "${c%.c}").o"
	done
}

layers() {
	cat >"$tmp/layers.txt"
}

# expect PASS|FAIL [pattern]: run the check, compare
expect() {
	local want=$1 pat=${2:-} out rc=0
	out=$(python3 "$here/scripts/layers.py" --layers "$tmp/layers.txt" \
		--obj "$tmp/obj" --root "$tmp" 2>&1) || rc=$?
	if [ "$want" = PASS ] && [ $rc -ne 0 ]; then
		echo "FAIL: expected a pass:"; echo "$out"; fails=$((fails + 1))
	elif [ "$want" = FAIL ] && { [ $rc -eq 0 ] || ! grep -q -- "$pat" <<<"$out"; }; then
		echo "FAIL: expected a fault matching '$pat' (rc $rc):"; echo "$out"
		fails=$((fails + 1))
	else
		echo "ok: $want ${pat:+($pat)}"
	fi
}

build
layers <<'L'
# a comment
userspace/f: top = top.c
userspace/f: mid = mid.c mid2.c
userspace/f: low = low.c
L
expect PASS

# low.c listed above mid.c: mid.c now calls up
layers <<'L'
userspace/f: top = top.c
userspace/f: low = low.c
userspace/f: mid = mid.c mid2.c
L
expect FAIL 'mid.c (mid) calls up into low.c (low): low'

# a file in no layer, and one listed that does not exist
layers <<'L'
userspace/f: top = top.c gone.c
userspace/f: mid = mid.c
userspace/f: low = low.c
L
expect FAIL 'mid2.c is in no layer'
expect FAIL 'gone.c is listed but does not exist'

# a malformed line
layers <<'L'
userspace/f top.c mid.c
L
expect FAIL "not 'FOLDER: LAYER = FILE.c"

# mid.c and mid2.c call each other: a cycle inside one layer
cat >"$src/mid.c" <<'C'
int low(void);
int mid2(void);
int mid(void)
{
	return low() + mid2();
}
C
build
layers <<'L'
userspace/f: top = top.c
userspace/f: mid = mid.c mid2.c
userspace/f: low = low.c
L
expect FAIL 'cycle: mid.c -> mid2.c -> mid.c'

# a function of 151 lines, then allowed by a long: line, then 150 lines
long_fn() {
	{
		echo 'int low(void)'
		echo '{'
		echo '	int x = 0;'
		for _ in $(seq "$1"); do echo '	x++;'; done
		echo '	return x;'
		echo '}'
	} >"$src/low.c"
}
cat >"$src/mid.c" <<'C'
int low(void);
int mid(void)
{
	return low();
}
C
long_fn 146
build
expect FAIL 'low.c:1: low() is 151 lines'
echo 'long: userspace/f/low.c:low  a made-up exception' >>"$tmp/layers.txt"
expect PASS
long_fn 145
expect FAIL 'long: userspace/f/low.c:low is no longer over 150 lines'

[ $fails -eq 0 ] || { echo "$fails check(s) of the layer check failed"; exit 1; }
echo "the layer check passes and fails as it should"
