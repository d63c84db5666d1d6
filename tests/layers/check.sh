#!/usr/bin/env bash
# The layer check on the built tree: in each folder of tests/layers.txt
# calls go downward only and no files call each other in a cycle; no
# function in userspace/, tools/ or bpf/ over 150 lines (scripts/layers.py).
set -eu
cd "$(dirname "$0")/../.."
exec python3 scripts/layers.py --layers tests/layers.txt --obj "${BUILD:-build}/obj"
