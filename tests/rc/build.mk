# End to end through unmodified verbs programs (perftest, ibverbs-utils) on
# rxdp between two network namespaces: needs root, skips (77) otherwise.
TESTS += tests/rc/perftest.sh
