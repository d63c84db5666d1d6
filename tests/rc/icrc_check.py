#!/usr/bin/python3
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""Check the ICRC of every RoCEv2 frame in a pcap file (Wireshark's
InfiniBand dissector does not verify it). IBTA Annex A17.3.3: CRC-32 over
8 bytes of 0xFF, then the IP header with its variant fields (IPv4 TOS, TTL,
checksum; IPv6 traffic class, flow label, hop limit) set to ones, the UDP
header with its checksum set to ones, the BTH with its FECN/BECN/Resv6a
byte set to ones, and the rest of the packet up to the ICRC, which is
stored least significant byte first.

usage: icrc_check.py FILE.pcap   prints "N frames, N bad ICRC", exit 1 if any
"""
import struct
import sys
import zlib


def frames(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        magic = struct.unpack("<I", hdr[:4])[0]
        endian = "<" if magic in (0xA1B2C3D4, 0xA1B23C4D) else ">"
        linktype = struct.unpack(endian + "I", hdr[20:24])[0]
        if linktype != 1:
            sys.exit("not an Ethernet capture (link type %d)" % linktype)
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            _, _, incl, orig = struct.unpack(endian + "IIII", rec)
            data = f.read(incl)
            yield data, incl == orig


def roce(frame):
    """(masked bytes covered by the ICRC, ICRC) or None if not RoCEv2"""
    off, etype = 14, struct.unpack(">H", frame[12:14])[0]
    if etype == 0x8100:
        off, etype = 18, struct.unpack(">H", frame[16:18])[0]
    if etype == 0x0800:
        ihl = (frame[off] & 0xF) * 4
        if frame[off + 9] != 17:
            return None
        ip = bytearray(frame[off:off + ihl])
        ip[1] = 0xFF  # TOS
        ip[8] = 0xFF  # TTL
        ip[10:12] = b"\xff\xff"  # header checksum
        udp_off = off + ihl
    elif etype == 0x86DD:
        if frame[off + 6] != 17:
            return None
        ip = bytearray(frame[off:off + 40])
        ip[0] |= 0x0F  # traffic class (low half of byte 0) ...
        ip[1:4] = b"\xff\xff\xff"  # ... and flow label
        ip[7] = 0xFF  # hop limit
        udp_off = off + 40
    else:
        return None
    udp = bytearray(frame[udp_off:udp_off + 8])
    if struct.unpack(">H", udp[2:4])[0] != 4791:
        return None
    ulen = struct.unpack(">H", udp[4:6])[0]
    payload = bytearray(frame[udp_off + 8:udp_off + ulen])
    udp[6:8] = b"\xff\xff"
    payload[4] = 0xFF  # BTH FECN/BECN/Resv6a
    return b"\xff" * 8 + bytes(ip) + bytes(udp) + bytes(payload[:-4]), \
        struct.unpack("<I", bytes(payload[-4:]))[0]


def main():
    total = bad = skipped = 0
    for data, whole in frames(sys.argv[1]):
        if not whole:
            skipped += 1
            continue
        r = roce(data)
        if r is None:
            continue
        total += 1
        if zlib.crc32(r[0]) & 0xFFFFFFFF != r[1]:
            bad += 1
            if bad <= 5:
                print("bad ICRC in RoCEv2 frame %d" % total)
    print("%d RoCEv2 frames, %d bad ICRC, %d truncated (not checked)"
          % (total, bad, skipped))
    return 1 if bad or not total else 0


if __name__ == "__main__":
    sys.exit(main())
