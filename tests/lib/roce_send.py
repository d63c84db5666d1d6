#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Send hand-built RoCEv2 packets (or plain UDP) from an ordinary UDP socket.

The kernel builds Ethernet/IP/UDP; this writes the UDP payload: a BTH
(IBTA Vol 1 9.2), optional extension header bytes, a payload and a 4-byte
ICRC field. The ICRC is not computed (zeros): rxdp's XDP program checks
lengths, not the ICRC, and these packets only exercise its verdicts.

  roce_send.py DST [--port 4791] [--opcode 0x04] [--qpn 0x102] [--psn 0]
               [--pkey 0xffff] [--tver 0] [--pad 0] [--ext HEX]
               [--payload-len 0] [--count 1] [--raw HEX]

--raw sends HEX as the whole UDP payload instead (for non-RoCE packets).
"""
import argparse
import socket
import struct


def num(s):
    return int(s, 0)


def bth(opcode, tver, pad, pkey, qpn, psn, se=False, ackreq=False):
    flags = (0x80 if se else 0) | ((pad & 3) << 4) | (tver & 0xF)
    return struct.pack(
        ">BBHII",
        opcode,
        flags,
        pkey,
        qpn & 0xFFFFFF,
        (0x80000000 if ackreq else 0) | (psn & 0xFFFFFF),
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dst")
    ap.add_argument("--port", type=num, default=4791)
    ap.add_argument("--opcode", type=num, default=0x04)
    ap.add_argument("--qpn", type=num, default=0x102)
    ap.add_argument("--psn", type=num, default=0)
    ap.add_argument("--pkey", type=num, default=0xFFFF)
    ap.add_argument("--tver", type=num, default=0)
    ap.add_argument("--pad", type=num, default=0)
    ap.add_argument("--ext", default="", help="extension headers, hex")
    ap.add_argument("--payload-len", type=num, default=0)
    ap.add_argument("--count", type=num, default=1)
    ap.add_argument("--sport", type=num, default=0, help="UDP source port")
    ap.add_argument("--raw", default=None, help="whole UDP payload, hex")
    a = ap.parse_args()

    if a.raw is not None:
        data = bytes.fromhex(a.raw)
    else:
        data = (
            bth(a.opcode, a.tver, a.pad, a.pkey, a.qpn, a.psn)
            + bytes.fromhex(a.ext)
            + bytes(i & 0xFF for i in range(a.payload_len))
            + bytes(a.pad)
            + bytes(4)  # ICRC, not computed
        )
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    if a.sport:
        s.bind(("0.0.0.0", a.sport))
    for _ in range(a.count):
        s.sendto(data, (a.dst, a.port))
    s.close()


if __name__ == "__main__":
    main()
