#!/usr/bin/env python3
"""How much the same search answers differently on the same kind of device (issue 59).

Each search runs on a fresh capped-device fixture (bench/ardour.py's: a sparse image, a loop
device with direct I/O, its own ext4, reads capped by a cgroup v1 blkio group, the device's
read-ahead set), one search per fixture, so that nothing one search left in the page cache or
on the device meets the next. Prints each answer with its probes, then per cell the median, the
range and the spread ((max - min) / median), and the answer against the cap's exact bound.

    cargo build --release && sudo python3 bench/search_spread.py [--searches 5]
        [--cells ardour-medium-float,ardour-medium-int24,trackbench-int24]
        [--cap-bps 20971520] [--cap-iops 100 (cells NAME@iops)] [--read-ahead-kb 128]
        [--size-gib 12]

Leaves nothing behind.
"""

import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ardour import FORMATS, Capped, trackbench_detail  # noqa: E402

CELLS = {
    "ardour-medium-float": ("ardour-medium", "float"),
    "ardour-medium-int24": ("ardour-medium", "int24"),
    "trackbench-int24": ("trackbench", "int24"),
    "trackbench-float": ("trackbench", "float"),
}
# A cell NAME@iops runs NAME on a device capped at --cap-iops reads a second instead of
# --cap-bps bytes: its bound is the cap times the chunk each read fetches.


def search(args, cell):
    name, _, by = cell.partition("@")
    profile, fmt = CELLS[name]
    caps = {"read_iops": args.cap_iops} if by == "iops" else {"read_bps": args.cap_bps}
    fx = Capped(args.size_gib, read_ahead_kb=args.read_ahead_kb, **caps)
    try:
        d = trackbench_detail(fx, ["play", fx.mnt, "--find-max", "--profile", profile,
                                   "--format", FORMATS[fmt][0]])
    finally:
        fx.close()
    s = d["searches"][0]
    probes = s["capacity"]["probes"]
    trail = ", ".join(
        f"{'confirm ' if p['confirmation'] else ''}{p['count']} {p['verdict']}" for p in probes)
    return s["play_tracks"], trail, sum(p["elapsed_s"] for p in probes)


def bound(args, cell):
    name, _, by = cell.partition("@")
    rate = FORMATS[CELLS[name][1]][1]
    if by == "iops":
        # The default engine reads 256 KiB chunks with O_DIRECT: one read each.
        return args.cap_iops * args.chunk_kib * 1024 / rate
    return args.cap_bps / rate


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--searches", type=int, default=5)
    ap.add_argument("--cells", default="ardour-medium-float,trackbench-int24")
    ap.add_argument("--cap-bps", type=int, default=20 << 20)
    ap.add_argument("--cap-iops", type=int, default=100)
    ap.add_argument("--chunk-kib", type=int, default=256,
                    help="the chunk an @iops cell's engine reads (its bound)")
    ap.add_argument("--read-ahead-kb", type=int, default=128)
    ap.add_argument("--size-gib", type=int, default=12)
    args = ap.parse_args()
    cells = args.cells.split(",")
    answers = {c: [] for c in cells}
    # Cells alternate, so that the host's mood of the hour falls on all of them.
    for i in range(args.searches):
        for c in cells:
            n, trail, secs = search(args, c)
            answers[c].append(n)
            print(f"{c} search {i + 1}: {n} tracks in {secs:.0f} s of probes: {trail}", flush=True)
    for c in cells:
        a = answers[c]
        m = statistics.median(a)
        b = bound(args, c)
        print(f"{c}: {a}; median {m:g}, range {min(a)}-{max(a)}, spread "
              f"{100 * (max(a) - min(a)) / m:.1f}% of the median; bound {b:.1f} "
              f"(median {m / b:.3f} of it, highest {max(a) / b:.3f})")


if __name__ == "__main__":
    main()
