#!/usr/bin/env python3
"""Why a search's first guess falls short of the engine: serial 256K O_DIRECT reads round robin
over N files of 1.5 MB (as the guess and a refill wave read them), into one buffer, or into B
buffers used in turn (the engine reads each track into its own ring).

Usage: python3 bench/round_robin_buffers.py DIR FILES BUFFERS[,BUFFERS...] [SECONDS]

DIR is a fresh directory on the disk to measure; FILES files f0..f(N-1) of 1,572,864 bytes are
written there with O_DIRECT first, and removed at the end. Prints MB/s and the median read time
for each buffer count, in the order given.
"""
import mmap, os, statistics, sys, time

d, n = sys.argv[1], int(sys.argv[2])
counts = [int(b) for b in sys.argv[3].split(",")]
secs = float(sys.argv[4]) if len(sys.argv) > 4 else 3.0
size, chunk = 1572864, 256 << 10
src = mmap.mmap(-1, size)
src.write(os.urandom(size))
names = [os.path.join(d, f"f{i}") for i in range(n)]
for p in names:
    fd = os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_DIRECT, 0o644)
    os.pwrite(fd, memoryview(src), 0)
    os.close(fd)
os.sync()
fds = [os.open(p, os.O_RDONLY | os.O_DIRECT) for p in names]
try:
    for b in counts:
        bufs = [mmap.mmap(-1, chunk) for _ in range(b)]
        for m in bufs:
            m.write(b"\1" * chunk)
        lat, k, t0 = [], 0, time.monotonic()
        while time.monotonic() - t0 < secs:
            for i, fd in enumerate(fds):
                t = time.perf_counter()
                os.preadv(fd, [bufs[(k * n + i) % b]], (k % (size // chunk)) * chunk)
                lat.append(time.perf_counter() - t)
            k += 1
        el = time.monotonic() - t0
        print(f"{n} files, {b:5d} buffers: {len(lat) * chunk / el / 1e6:6.0f} MB/s, "
              f"median read {statistics.median(lat) * 1e6:4.0f} us", flush=True)
finally:
    for fd in fds:
        os.close(fd)
    for p in names:
        os.remove(p)
