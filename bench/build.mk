# make bench: rxdp against kernel TCP on the same veth pair (bench/run.sh);
# results in build/bench/. Not part of make check (figures, not tests).
bench: all
	$(Q)bench/run.sh

.PHONY: bench
