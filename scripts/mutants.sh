#!/usr/bin/env bash
# make mutants: the tests fail on code broken on purpose. Each
# tests/mutants/NAME.patch breaks one thing (its "Breaks:" line says what)
# and names the tests that guard it ("Tests:"); applied to a copy of the
# tree (build/mutants/tree, this checkout's files as they are), built, each
# of those tests must fail. A test that passes on a mutant is a test that
# cannot see what it claims to: the mutant survived, and `make mutants`
# fails. The table is printed and kept in build/mutants/report.txt.
#
#   make mutants                 every mutant
#   make mutants MUTANTS="a b"   those (names without .patch)
#   RXDP_MUTANTS_GUESTS=0 make mutants
#                                the guests' tests (tests/vm/) left out,
#                                named as not run in the report (an hour
#                                less; under TCG on a busy machine they
#                                would only time out)
#
# A mutant that no longer applies (the code moved) fails too: mend it.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/build/mutants
tree=$out/tree
names=${MUTANTS:-$(cd "$root/tests/mutants" && ls ./*.patch | sed 's|^\./||; s|\.patch$||')}

rm -rf "$out"
mkdir -p "$tree"
(cd "$root" && tar --exclude=./build --exclude=./.git -cf - .) | tar -C "$tree" -xf - ||
	{ echo "mutants: cannot copy the tree" >&2; exit 1; }
cd "$tree" || exit 1
build() { make -j"$(nproc)" all test-bins >>"$out/build.log" 2>&1; }
echo "mutants: building the tree in $tree"
build || { tail -n 20 "$out/build.log"; echo "mutants: the tree does not build" >&2; exit 1; }
survived=0
: >"$out/report.txt"
for m in $names; do
	p=$root/tests/mutants/$m.patch
	what=$(sed -n 's/^Breaks: //p' "$p")
	tests=$(sed -n 's/^Tests: //p' "$p")
	if ! patch -p1 -s --dry-run <"$p" >/dev/null 2>&1; then
		echo "$m: does not apply (the code moved: mend the patch)" | tee -a "$out/report.txt"
		survived=$((survived + 1))
		continue
	fi
	patch -p1 -s <"$p"
	if ! build; then
		echo "$m: does not build" | tee -a "$out/report.txt"
		survived=$((survived + 1))
		patch -p1 -s -R <"$p"
		continue
	fi
	line="$m ($what):"
	for t in $tests; do
		if [ "${RXDP_MUTANTS_GUESTS:-1}" = 0 ] && [[ $t == tests/vm/* ]]; then
			line+=" $t not run (RXDP_MUTANTS_GUESTS=0)"
			continue
		fi
		RXDP_TEST_TIMEOUT=${RXDP_MUTANT_TIMEOUT:-300} tests/run-tests.sh "$t" \
			>"$out/$m.$(basename "$t").log" 2>&1
		if [ $? = 0 ]; then
			line+=" $t SURVIVED"
			survived=$((survived + 1))
		else
			line+=" $t caught ($(grep -m1 -E '^(FAIL|WRONG|ERROR|wirecheck [a-z]+: WRONG)|FAIL ' \
				"$out/$m.$(basename "$t").log" | cut -c1-100))"
		fi
	done
	echo "$line" | tee -a "$out/report.txt"
	patch -p1 -s -R <"$p"
done
build >/dev/null
echo "mutants: $(wc -l <"$out/report.txt") run, $survived survived or broken (build/mutants/report.txt)"
[ $survived = 0 ]
