#!/usr/bin/python3
"""A service manager's file descriptor store for one rxdpd, as systemd's
(sd_notify(3), sd_listen_fds(3)), for tests on a host whose PID 1 is not
systemd:

  fdstore.py LOG -- COMMAND...

starts COMMAND with $NOTIFY_SOCKET set and reads lines on stdin:
  restart       SIGTERM to the running one, wait for it, start COMMAND
                again with the store's descriptors (fd 3 on, $LISTEN_FDS,
                $LISTEN_PID, $LISTEN_FDNAMES), as systemd's restart does
  stop          SIGTERM, wait, then empty the store (systemd's stop)
  start         start COMMAND again (with what the store holds)
  corrupt OFF   the next start passes the "rxdp.state" memfd with the 32-bit
                word at offset OFF increased by one
  quit          stop, and exit
Like systemd it takes FDSTORE=1 (FDNAME=), FDSTOREREMOVE=1 and BARRIER=1
messages, keeps one of each open file (a descriptor whose file it already
holds is closed), and passes the store in the reverse of the order it was
filled (as systemd 252 does). It writes what happens to LOG, a line each:
"started PID", "ready PID", "exit PID STATUS", "store N" (its size after a
message that changed it), "passed N".
"""
import array
import ctypes
import fcntl
import os
import select
import signal
import socket
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
SYS_KCMP, KCMP_FILE = 312, 0  # x86_64


def log(msg):
    with open(LOG, "a") as f:
        f.write(msg + "\n")


def same_file(a, b):
    sa, sb = os.fstat(a), os.fstat(b)
    if (sa.st_dev, sa.st_ino) != (sb.st_dev, sb.st_ino):
        return False
    pid = os.getpid()
    return libc.syscall(SYS_KCMP, pid, pid, KCMP_FILE, a, b) == 0


def on_message(sock, store):
    fds = array.array("i")
    data, anc, _, _ = sock.recvmsg(4096, socket.CMSG_SPACE(253 * fds.itemsize))
    for level, kind, cdata in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(cdata[: len(cdata) - (len(cdata) % fds.itemsize)])
    kv = dict(l.split("=", 1) for l in data.decode().split("\n") if "=" in l)
    changed = False
    if kv.get("BARRIER") == "1":
        for fd in fds:
            os.close(fd)
        return None
    if kv.get("FDSTOREREMOVE") == "1":
        name = kv.get("FDNAME", "stored")
        for fd in [fd for n, fd in store if n == name]:
            os.close(fd)
        store[:] = [(n, fd) for n, fd in store if n != name]
        changed = True
    elif kv.get("FDSTORE") == "1":
        for fd in fds:
            if any(same_file(fd, s) for _, s in store):
                os.close(fd)
                continue
            store.append((kv.get("FDNAME", "stored"), fd))
            changed = True
    else:
        for fd in fds:
            os.close(fd)
    if changed:
        log("store %d" % len(store))
    return kv


def start(cmd, store, sockname, corrupt):
    passed = list(reversed(store))
    if corrupt is not None:
        for n, fd in passed:
            if n == "rxdp.state":
                (w,) = struct.unpack("<I", os.pread(fd, 4, corrupt))
                os.pwrite(fd, struct.pack("<I", w + 1), corrupt)
    pid = os.fork()
    if pid == 0:
        try:
            # out of the way of 3..3+n first, then into place
            base = max([3 + len(passed)] + [fd for _, fd in passed]) + 1
            moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, base) for _, fd in passed]
            for i, fd in enumerate(moved):
                os.dup2(fd, 3 + i)
            os.closerange(3 + len(passed), os.sysconf("SC_OPEN_MAX"))
            env = dict(os.environ, NOTIFY_SOCKET="@" + sockname)
            if passed:
                env.update(LISTEN_PID=str(os.getpid()),
                           LISTEN_FDS=str(len(passed)),
                           LISTEN_FDNAMES=":".join(n for n, _ in passed))
            os.execvpe(cmd[0], cmd, env)
        finally:
            os._exit(127)
    log("started %d" % pid)
    if passed:
        log("passed %d" % len(passed))
    return pid


def main():
    global LOG
    LOG = sys.argv[1]
    cmd = sys.argv[sys.argv.index("--") + 1:]
    sockname = "rxdp-fdstore-%d" % os.getpid()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + sockname)
    store, corrupt = [], None
    pid = start(cmd, store, sockname, None)
    poll = select.poll()
    poll.register(sock, select.POLLIN)
    poll.register(sys.stdin, select.POLLIN)
    want = []
    while True:
        for fd, _ in poll.poll(100):
            if fd == sock.fileno():
                kv = on_message(sock, store)
                if kv and kv.get("READY") == "1":
                    log("ready %d" % pid)
            else:
                line = sys.stdin.readline()
                if not line:
                    want.append("quit")
                else:
                    want.append(line.strip())
        if pid:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                # what it sent before it went is read first (as systemd)
                while select.select([sock], [], [], 0)[0]:
                    on_message(sock, store)
                log("exit %d %d" % (pid, os.waitstatus_to_exitcode(status)))
                pid = 0
        if not want:
            continue
        w = want.pop(0).split()
        if w[0] in ("restart", "stop", "quit") and pid:
            os.kill(pid, signal.SIGTERM)
            # its messages read meanwhile (it may wait for a BARRIER=1)
            while True:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    break
                if select.select([sock], [], [], 0.01)[0]:
                    on_message(sock, store)
            while select.select([sock], [], [], 0.05)[0]:
                on_message(sock, store)
            log("exit %d %d" % (pid, os.waitstatus_to_exitcode(status)))
            pid = 0
        if w[0] in ("stop", "quit"):
            for _, fd in store:
                os.close(fd)
            store.clear()
            log("store 0")
        if w[0] == "quit":
            return
        if w[0] == "corrupt":
            corrupt = int(w[1])
        if w[0] in ("restart", "start") and not pid:
            pid = start(cmd, store, sockname, corrupt)
            corrupt = None


if __name__ == "__main__":
    main()
