#!/usr/bin/python3
# holdfs MOUNTPOINT GATE: a FUSE file system of one file, "data" (1 MiB of
# zeros, anyone may read and write it), whose reads and writes wait while
# the file GATE exists: a FUSE server that withholds its answers, as any
# user may run one (fusermount3); it prints "held" when a request starts
# waiting. For tests/security/isolation.sh.
import errno
import os
import stat
import sys
import time

from fusepy import FUSE, FuseOSError, Operations

SIZE = 1 << 20


class HoldFS(Operations):
    def __init__(self, gate):
        self.gate = gate
        self.data = bytearray(SIZE)

    def _wait(self):
        if os.path.exists(self.gate):
            print("held", flush=True)
        while os.path.exists(self.gate):
            time.sleep(0.05)

    def getattr(self, path, fh=None):
        now = time.time()
        if path == "/":
            return {"st_mode": stat.S_IFDIR | 0o755, "st_nlink": 2,
                    "st_ctime": now, "st_mtime": now, "st_atime": now}
        if path == "/data":
            return {"st_mode": stat.S_IFREG | 0o666, "st_nlink": 1,
                    "st_size": SIZE, "st_ctime": now, "st_mtime": now,
                    "st_atime": now}
        raise FuseOSError(errno.ENOENT)

    def readdir(self, path, fh):
        return [".", "..", "data"]

    def open(self, path, flags):
        if path != "/data":
            raise FuseOSError(errno.ENOENT)
        return 0

    def truncate(self, path, length, fh=None):
        if length != SIZE:
            raise FuseOSError(errno.EPERM)

    def read(self, path, size, offset, fh):
        self._wait()
        return bytes(self.data[offset:offset + size])

    def write(self, path, buf, offset, fh):
        self._wait()
        self.data[offset:offset + len(buf)] = buf
        return len(buf)


if __name__ == "__main__":
    FUSE(HoldFS(sys.argv[2]), sys.argv[1], foreground=True, allow_other=True,
         nothreads=False)
