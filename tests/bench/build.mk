# The benchmark's own tools, smoke-tested (their figures are make bench's)
TESTS += tests/bench/xskraw.sh
TESTS += tests/bench/qp_rss.sh
TESTS += tests/bench/lossyhop.sh
TESTS += tests/bench/ecnmark.sh
TESTS += tests/bench/report.sh
TESTS += tests/bench/incast.sh
