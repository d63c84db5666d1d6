#!/usr/bin/python3
# Print the rtnetlink messages of a dump as C byte arrays: how the recorded
# messages in test_nl_parse.c were captured (run inside a namespace set up
# as that file's header describes). Usage: capture_rtnl.py link|addr|neigh
import socket, struct, sys

RTM = {"link": (18, 16), "addr": (22, 8), "neigh": (30, 12)}  # GET type, hdr
kind = sys.argv[1]
typ, hdrlen = RTM[kind]
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.bind((0, 0))
body = bytes(hdrlen)
nlh = struct.pack("=IHHII", 16 + len(body), typ, 0x301, 1, 0)
s.send(nlh + body)
n = 0
while True:
    data = s.recv(65536)
    off = 0
    done = False
    while off < len(data):
        ln, t, fl, seq, pid = struct.unpack_from("=IHHII", data, off)
        if t == 3:  # NLMSG_DONE
            done = True
            break
        msg = data[off:off + ln]
        print("/* type %d, %d bytes */" % (t, ln))
        print("static const unsigned char %s_%d[] = {" % (kind, n))
        for i in range(0, len(msg), 12):
            print("\t" + " ".join("0x%02x," % b for b in msg[i:i + 12]))
        print("};")
        n += 1
        off += (ln + 3) & ~3
    if done:
        break
