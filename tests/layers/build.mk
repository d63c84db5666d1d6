# The layer check (scripts/layers.py, the layers in tests/layers.txt), run
# on the objects `make` built, and a check of the checker on a made-up folder.
TESTS += tests/layers/selftest.sh tests/layers/check.sh
