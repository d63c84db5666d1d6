# The RDMA connection manager (userspace/daemon/cm.c, gsi.c; the drop-in
# librdmacm.so.1 in userspace/rdmacm):
#  check-abi.sh  every RDMACM symbol@version that rdmacm-utils, perftest and
#                pyverbs import is exported; each program starts on ours
#  cm.sh         (root) rdma-core's CM programs and perftest -R between two
#                hosts, REJs, a killed peer, a capture tshark decodes
TESTS += tests/rdmacm/check-abi.sh tests/rdmacm/cm.sh
