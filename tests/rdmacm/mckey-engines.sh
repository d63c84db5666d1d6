#!/usr/bin/env bash
# tests/rdmacm/mckey.sh with two engines per device (rxdpd --engines 2 on a
# veth of two queues): multicast members of one device on several engines
MCKEY_ENGINES=2 exec "$(dirname "$0")/mckey.sh" "$@"
