#!/usr/bin/env bash
# Run each test (an executable or script), print its time, and one summary
# line, "N passed, N failed, N skipped in S s". A test exits 0 to pass, 77
# to skip (the automake convention, for something missing), anything else
# fails.
#
# A skip fails too, unless the test is in tests/skips-allowed, the one list
# of tests that may not run on a fresh Debian 12 machine (each with why):
# `make check` installs everything else a test needs, so a skip there means
# a check that did not happen. RXDP_SKIPS=allow lets every skip pass (a
# developer's run without root; never CI's).
#
# Time: each test is bounded by RXDP_TEST_TIMEOUT seconds (default 600),
# and by what is left of the suite's budget: `make check` sets
# RXDP_CHECK_START (when it began) and RXDP_CHECK_BUDGET (seconds, 4800:
# under CI's 90 minutes), and a test that would run past it is stopped and
# fails, so the suite ends in time with the slow tests named. The slowest
# tests and the time so far are printed at the end. What a test leaves
# running in its process group is killed when it exits, and named.
set -u
here=$(cd "$(dirname "$0")" && pwd)
timeout_s=${RXDP_TEST_TIMEOUT:-600}
budget=${RXDP_CHECK_BUDGET:-4800}
start_all=$(date +%s)
check_start=${RXDP_CHECK_START:-$start_all}
allowed_file=$here/skips-allowed
pass=0 fail=0 skip=0 failed=() skipped=() times=()
out=$(mktemp)
trap 'rm -f "$out"' EXIT

# why TEST may skip (its line in tests/skips-allowed), or nothing
allowed() {
	[ -f "$allowed_file" ] || return 1
	awk -v t="$1" '!/^#/ && $1 == t { $1 = ""; sub(/^ +/, ""); print; f = 1 } END { exit !f }' \
		"$allowed_file"
}

for t in "$@"; do
	printf '=== %s\n' "$t"
	left=$((check_start + budget - $(date +%s)))
	limit=$timeout_s
	[ $left -lt $limit ] && limit=$left
	if [ $limit -le 0 ]; then
		fail=$((fail + 1)) failed+=("$t")
		printf -- '--- FAIL %s (not run: the suite used its %s s budget)\n' "$t" "$budget"
		continue
	fi
	t0=$(date +%s%N)
	# its output goes to a file (where a skip's reason is read), followed
	# here until the test exits: not through a pipe, which a process the
	# test left running would hold open, and the suite with it
	timeout --kill-after=10 "$limit" "$t" >"$out" 2>&1 &
	tp=$!
	tail -s 0.2 -n +1 -f --pid="$tp" "$out"
	wait "$tp"
	rc=$?
	# timeout made the test its process group's leader's: what the test
	# left running in that group ends with it
	left=$(pgrep -g "$tp" | tr '\n' ' ')
	if [ -n "$left" ]; then
		printf '%s left processes running: %s(killed)\n' "$t" "$left"
		kill -KILL -- -"$tp" 2>/dev/null
	fi
	ms=$((($(date +%s%N) - t0) / 1000000))
	dt=$((ms / 1000)).$((ms % 1000 / 100))
	times+=("$dt $t")
	why=$(sed -n 's/^SKIP: //p' "$out" | tail -n 1)
	case $rc in
	0) pass=$((pass + 1)); printf -- '--- PASS %s (%s s)\n' "$t" "$dt" ;;
	77)
		if reason=$(allowed "$t") || [ "${RXDP_SKIPS:-}" = allow ]; then
			skip=$((skip + 1)) skipped+=("$t: ${reason:-RXDP_SKIPS=allow}")
			printf -- '--- SKIP %s (%s s; %s)\n' "$t" "$dt" "${why:-no reason given}"
		else
			fail=$((fail + 1)) failed+=("$t")
			printf -- '--- FAIL %s (skipped: %s; not in tests/skips-allowed)\n' \
				"$t" "${why:-no reason given}"
		fi
		;;
	124|137)
		fail=$((fail + 1)) failed+=("$t")
		if [ "$limit" -lt "$timeout_s" ]; then
			printf -- '--- FAIL %s (stopped after %s s: the suite used its %s s budget)\n' \
				"$t" "$limit" "$budget"
		else
			printf -- '--- FAIL %s (timed out after %ss)\n' "$t" "$limit"
		fi
		;;
	*) fail=$((fail + 1)) failed+=("$t"); printf -- '--- FAIL %s (exit %d, %s s)\n' "$t" "$rc" "$dt" ;;
	esac
done
end=$(date +%s)
if [ ${#times[@]} -gt 0 ]; then
	echo "slowest:"
	printf '%s\n' "${times[@]}" | sort -rn | head -n 8 | sed 's/ /s  /; s/^/  /'
fi
if [ ${#skipped[@]} -gt 0 ]; then
	echo "skipped (tests/skips-allowed says why):"
	printf '  %s\n' "${skipped[@]}"
fi
n_allowed=$(grep -cv '^\(#\|$\)' "$allowed_file" 2>/dev/null)
echo "tests allowed to skip (tests/skips-allowed): ${n_allowed:-0}"
[ "${n_allowed:-0}" = 0 ] || grep -v '^\(#\|$\)' "$allowed_file" | sed 's/^/  /'
[ $fail -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
printf '%d passed, %d failed, %d skipped in %d s' "$pass" "$fail" "$skip" $((end - start_all))
[ -n "${RXDP_CHECK_START:-}" ] &&
	printf ' (make check so far: %d s of its %d s budget)' $((end - check_start)) "$budget"
printf '\n'
[ $fail -eq 0 ]
