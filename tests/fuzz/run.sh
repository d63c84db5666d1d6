#!/usr/bin/env bash
# Run each libFuzzer target (tests/fuzz/build.mk) for RXDP_FUZZ_SECONDS
# (default 20) from its committed seeds, and print what it did:
#   fuzz_NAME: N executions in S s (E/s), corpus C inputs, coverage F features
# A crash, a sanitizer report, a leak or a hang (10 s on one input) fails
# the test; the input that did it is kept in build/fuzz/artifacts/ and
# named in the output (rerun it: build/fuzz/fuzz_NAME FILE). New inputs go
# to build/fuzz/work/NAME (emptied first unless RXDP_FUZZ_KEEP=1); with
# RXDP_FUZZ_GROW=1 (make fuzz) the committed corpus is then merged with them
# (libFuzzer's -merge: the smallest set with every feature either had), for
# a commit to keep.
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${RXDP_FUZZ_SECONDS:-20}
out=$root/build/fuzz
fail=0
for name in engine_rx ctl xdp rings; do
	bin=$out/fuzz_$name
	work=$out/work/$name
	log=$out/fuzz_$name.log
	[ -x "$bin" ] || { echo "FAIL: $bin not built (make test)" >&2; exit 1; }
	[ "${RXDP_FUZZ_KEEP:-0}" = 1 ] || rm -rf "$work"
	mkdir -p "$work" "$out/artifacts"
	"$bin" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
		-artifact_prefix="$out/artifacts/${name}-" \
		"$work" "$root/tests/fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	corp=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\) .*/\1/p' <<<"$last")
	echo "fuzz_$name: ${execs:-?} executions in $secs s (${rate:-?}/s)," \
		"corpus ${corp:-?} inputs, coverage ${ft:-?} features"
	if [ $rc -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|Test unit written|==[0-9]+==|fuzz_[a-z_]*:' "$log" | head -n 20 >&2
		echo "FAIL: fuzz_$name found a bug (full log: $log)" >&2
		fail=1
	elif [ "${RXDP_FUZZ_GROW:-0}" = 1 ]; then
		corpus=$root/tests/fuzz/corpus/$name
		rm -rf "$corpus.new"
		mkdir -p "$corpus.new"
		"$bin" -merge=1 "$corpus.new" "$corpus" "$work" >"$log.merge" 2>&1 &&
			rm -rf "$corpus" && mv "$corpus.new" "$corpus" &&
			echo "fuzz_$name: the corpus now $(ls "$corpus" | wc -l) inputs (git status tests/fuzz/corpus)"
	fi
done
exit $fail
