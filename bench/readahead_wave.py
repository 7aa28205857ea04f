#!/usr/bin/env python3
"""A serial butler's first refill wave through the page cache, on the capped-device fixture.

What the kernel's read-ahead does to a DAW's first refill wave: N files of float audio (laid
out one after another, WAV-like: a 4 KiB header page, then the audio), the page cache dropped,
then a "locate" that reads each file's first RING bytes of audio, a pause, and a "wave" that
reads CHUNK more bytes of each file in file order, one file after another, as Ardour's butler
does once every track has played a chunk. Prints the wave's rate (what the reads got) and the
device's (what the loop device completed, after the throttle) for each variant of how the
program reads:

- calls: one read() per request (Ardour reading float through libsndfile) or 8190-byte calls
  (24-bit through libsndfile's conversion buffer);
- header: the file's header page read first, as libsndfile does when it opens a file (the
  locate's first read of the audio then continues a read from the file's start);
- split: the locate reads RING - CHUNK, then CHUNK (a locate that leaves one chunk for the
  butler to top up);
- offset: where the audio starts (4096 as trackbench's files; 56 as Ardour's float files: the
  locate's first read then starts in the file's first page, where the kernel treats it as the
  start of a sequential read).

As root, with the fixture of bench/ardour.py (a loop device with ext4, reads capped by a cgroup
v1 blkio group):

    sudo python3 bench/readahead_wave.py [--cap-bps 21000000] [--read-ahead-kb 128] [--files 88]
"""

import argparse
import itertools
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ardour import Capped  # noqa: E402

RING, CHUNK, FILE = 1015808, 262144, 6 << 20


def lay_out(d, n):
    block = os.urandom(1 << 20)
    for i in range(n):
        with open(os.path.join(d, f"f-{i:04}.wav"), "wb") as h:
            for _ in range(FILE >> 20):
                h.write(block)
    os.sync()


def wave(d, n, stat, calls, header, split, offset, wait):
    """One variant, run inside the fixture's group; returns its line."""
    fds = [os.open(os.path.join(d, f"f-{i:04}.wav"), os.O_RDONLY) for i in range(n)]
    for fd in fds:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)

    def read(fd, off, want):
        if calls == "one":
            os.pread(fd, want, off)
            return
        end = off + want
        while off < end:
            off += len(os.pread(fd, min(calls, end - off), off))

    def device():
        with open(stat) as f:
            return int(f.read().split()[2]) * 512

    if header:
        for fd in fds:
            os.pread(fd, 4096, 0)
    t = time.monotonic()
    for fd in fds:
        if split:
            read(fd, offset, RING - CHUNK)
            read(fd, offset + RING - CHUNK, CHUNK)
        else:
            read(fd, offset, RING)
    locate = time.monotonic() - t
    time.sleep(wait)
    d0, t = device(), time.monotonic()
    for fd in fds:
        read(fd, offset + RING, CHUNK)
    w, dev = time.monotonic() - t, device() - d0
    for fd in fds:
        os.close(fd)
    return (f"| {calls} | {'yes' if header else 'no'} | {'yes' if split else 'no'} | {offset} | "
            f"{n * RING / locate / 1e6:.1f} | {n * CHUNK / w / 1e6:.1f} | {dev / w / 1e6:.1f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap-bps", type=int, default=21000000)
    ap.add_argument("--read-ahead-kb", type=int, default=128)
    ap.add_argument("--files", type=int, default=88)
    ap.add_argument("--wait", type=float, default=4.0, help="seconds between the locate and the wave")
    ap.add_argument("--inside", nargs=7, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        d, n, stat, calls, header, split, offset = args.inside
        print(wave(d, int(n), stat, calls if calls == "one" else int(calls), header == "1",
                   split == "1", int(offset), args.wait), flush=True)
        return
    if os.geteuid() != 0:
        sys.exit("run as root: the fixture needs a loop device, a mount and a blkio group")
    fx = Capped(2 + args.files * FILE // (1 << 30), read_bps=args.cap_bps, read_ahead_kb=args.read_ahead_kb)
    try:
        lay_out(fx.mnt, args.files)
        print(f"# {args.files} files, locate {RING} B each, wave {CHUNK} B each, reads capped at "
              f"{args.cap_bps} B/s, read-ahead {args.read_ahead_kb} KiB, {args.wait} s between")
        print("| calls | header read first | locate split | audio at | locate MB/s | wave MB/s | device MB/s |")
        print("| --- | --- | --- | ---: | ---: | ---: | ---: |", flush=True)
        variants = [(c, h, s, 4096) for c, h, s in itertools.product(("one", "8190"), "01", "01")]
        # As Ardour's float files are read: the header first, the audio from byte 56.
        variants += [("one", "0", "0", 56), ("one", "1", "0", 56)]
        for calls, header, split, offset in variants:
            out = fx.run([sys.executable, os.path.abspath(__file__), "--wait", str(args.wait), "--inside",
                          fx.mnt, str(args.files), fx.stat(), calls, header, split, str(offset)])
            if out.returncode != 0:
                sys.exit(out.stderr)
            print(out.stdout.strip(), flush=True)
    finally:
        fx.close()


if __name__ == "__main__":
    main()
