#!/usr/bin/env bash
# Open MPI's rsh agent for hosts that are network namespaces of this
# machine (mpi.sh): `mpi_rsh.sh HOST COMMAND...` runs COMMAND in the
# namespace $RXDP_RSH_HOSTS names for HOST ("ADDR=NS ADDR=NS ...").
set -u
host=$1
shift
for pair in ${RXDP_RSH_HOSTS:-}; do
	if [ "${pair%%=*}" = "$host" ]; then
		exec ip netns exec "${pair#*=}" /bin/sh -c "$*"
	fi
done
echo "mpi_rsh.sh: no namespace for host $host" >&2
exit 1
