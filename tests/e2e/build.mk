# End-to-end tests in network namespaces (root; they skip with 77 otherwise).
TESTS += tests/e2e/loader.sh tests/e2e/cli.sh
