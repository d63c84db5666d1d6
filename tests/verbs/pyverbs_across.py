#!/usr/bin/env python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""rdma-core's pyverbs tests with their two players on two hosts.

The suite (a copy of /usr/share/doc/rdma-core/tests) makes a test's client
and server on one device and lets the HCA loop them back, which rxdp does
without the wire. Here each player is made on a host of its own, in one
process: a test's first player opens DEV (host A, this process's network
namespace), its second --dev-b in the namespace --ns-b names (host B), each
through that host's rxdpd (its control socket is abstract, one per network
namespace). The suite writes loopback routes, its own GID as the
destination; every GlobalRoute it makes is given the other host's GID
instead. Then its traffic helpers run across the wire with their own data
checks (utils.validate: every byte of every message).

    pyverbs_across.py --suite DIR --ns-b PATH --dev-b DEV_B \
        --dev DEV_A --gid N [-v] TEST...

Each test must have had its players on both hosts: one that made both on
one host (a resource class of its own making its context) is reported and
fails the run. A test that runs past a minute fails (the suite polls a CQ
for ever for a message that never comes).
"""
import argparse
import ctypes
import os
import signal
import sys
import unittest
from importlib.machinery import SourceFileLoader

CLONE_NEWNET = 0x40000000
libc = ctypes.CDLL(None, use_errno=True)


def enter(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, 'setns: ' + os.strerror(err))


ap = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
ap.add_argument('--suite', required=True)
ap.add_argument('--ns-b', required=True)
ap.add_argument('--dev-b', required=True)
own, rest = ap.parse_known_args()
sys.argv[1:] = rest
sys.path.insert(0, own.suite)

from args_parser import parser  # noqa: E402 (the suite's, from --suite)

tests = SourceFileLoader('tests', os.path.join(own.suite, '__init__.py')).load_module()
parser.parse_args()
cfg = parser.get_config()

import pyverbs.addr  # noqa: E402
from pyverbs.device import Context  # noqa: E402
import tests.base as base  # noqa: E402

ns_a = os.open('/proc/self/ns/net', os.O_RDONLY)
ns_b = os.open(own.ns_b, os.O_RDONLY)
hosts = [(ns_a, cfg['dev']), (ns_b, own.dev_b)]
port, gidx = cfg['port'], cfg['gid']


def gid_of(fd, dev):
    enter(fd)
    try:
        ctx = Context(name=dev)
        g = str(ctx.query_gid(port, gidx))
        ctx.close()
        return g
    finally:
        enter(ns_a)


gid_a, gid_b = (gid_of(fd, dev) for fd, dev in hosts)
if gid_a == gid_b:
    sys.exit('pyverbs_across: both hosts have GID %s' % gid_a)
peer = {gid_a: gid_b, gid_b: gid_a}
RealGlobalRoute = pyverbs.addr.GlobalRoute


def global_route(*args, **kw):
    """The suite's loopback route (dgid = the maker's own GID), to the peer."""
    g = kw.get('dgid')
    if g is not None and str(g) in peer:
        kw['dgid'] = pyverbs.addr.GID(peer[str(g)])
    return RealGlobalRoute(*args, **kw)


# every module of the suite that imported the class by name
for m in list(sys.modules.values()):
    if getattr(m, 'GlobalRoute', None) is RealGlobalRoute and m is not pyverbs.addr:
        m.GlobalRoute = global_route

made = []  # the hosts (0 A, 1 B) of the current test's players, in order
real_setup = base.RDMATestCase.setUp
real_create_context = base.BaseResources.create_context
real_teardown = base.RDMATestCase.tearDown
one_host = []
both = []  # the tests that had a player on each host


def too_long(signum, frame):
    raise TimeoutError('the test took over %d s (a message that never came?)' % TEST_LIMIT_S)


# a test whose message never comes polls its CQ for ever: bounded here
TEST_LIMIT_S = 60
signal.signal(signal.SIGALRM, too_long)


def setUp(self):
    made.clear()
    enter(ns_a)
    signal.alarm(TEST_LIMIT_S)
    real_setup(self)


def create_context(self):
    h = len(made) % 2
    made.append(h)
    fd, self.dev_name = hosts[h]
    enter(fd)
    try:
        real_create_context(self)
    finally:
        enter(ns_a)


def tearDown(self):
    signal.alarm(0)
    if set(made) == {0, 1}:
        both.append(self.id())
    elif self.client is not None and self.server is not None:
        one_host.append(self.id())
    real_teardown(self)


base.RDMATestCase.setUp = setUp
base.BaseResources.create_context = create_context
base.RDMATestCase.tearDown = tearDown

print('pyverbs_across: host A %s (GID %s), host B %s (GID %s)' %
      (cfg['dev'], gid_a, own.dev_b, gid_b), flush=True)
prog = unittest.main(module=tests, exit=False)
print('pyverbs_across: %d tests had a player on each host' % len(both))
if one_host:
    print('pyverbs_across: players on one host only: ' + ' '.join(one_host))
ok = prog.result.wasSuccessful() and not one_host
sys.exit(0 if ok else 1)
