#!/usr/bin/env bash
# Run each test (an executable or script) and print one summary line,
# "N passed, N failed, N skipped". A test exits 0 to pass, 77 to skip (the
# automake convention, for a missing kernel feature), anything else fails.
# Each test is bounded by RXDP_TEST_TIMEOUT seconds (default 600).
set -u
timeout_s=${RXDP_TEST_TIMEOUT:-600}
pass=0 fail=0 skip=0 failed=()
for t in "$@"; do
	printf '=== %s\n' "$t"
	timeout --kill-after=10 "$timeout_s" "$t"
	rc=$?
	case $rc in
	0) pass=$((pass + 1)); printf -- '--- PASS %s\n' "$t" ;;
	77) skip=$((skip + 1)); printf -- '--- SKIP %s\n' "$t" ;;
	124|137) fail=$((fail + 1)); failed+=("$t"); printf -- '--- FAIL %s (timed out after %ss)\n' "$t" "$timeout_s" ;;
	*) fail=$((fail + 1)); failed+=("$t"); printf -- '--- FAIL %s (exit %d)\n' "$t" "$rc" ;;
	esac
done
[ $fail -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
printf '%d passed, %d failed, %d skipped\n' "$pass" "$fail" "$skip"
[ $fail -eq 0 ]
