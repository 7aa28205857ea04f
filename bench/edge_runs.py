#!/usr/bin/env python3
"""Fixed-count runs at a search's edge, repeated on one capped device (issue 59): whether the
same count passes every time, and what differs between a pass and a fail.

One capped-device fixture (bench/ardour.py's: a sparse image, a loop device with direct I/O,
its own ext4, reads capped by a cgroup v1 blkio group, the device's read-ahead set); the test
files kept between runs, the page cache dropped before each. Prints each run's verdict, the
worst ring, the butler's idle share, dropouts and why it fell short.

    cargo build --release && sudo python3 bench/edge_runs.py [--counts 104,98] [--rounds 3]
        [--profile ardour-medium] [--format float] [--duration 60s] [--cap-bps 20971520]

Leaves nothing behind.
"""

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ardour import FORMATS, ROOT, Capped  # noqa: E402

BIN = os.environ.get("TRACKBENCH_BIN", f"{ROOT}/target/release/trackbench")


def run(args, fx, n):
    subprocess.run(["sh", "-c", "sync; echo 3 > /proc/sys/vm/drop_caches"], check=True)
    out = fx.run([BIN, "play", fx.mnt, "--tracks", str(n), "--profile", args.profile, "--format",
                  FORMATS[args.format][0], "--duration", args.duration, "--json", "-", "-q",
                  "--no-store", "--keep"],
                 env=dict(os.environ, XDG_DATA_HOME=os.path.join(fx.work, "xdg")))
    try:
        d = json.loads(out.stdout)["sections"][0]["detail"]
    except (ValueError, KeyError, IndexError):
        sys.exit(f"trackbench failed:\n{out.stderr[-2000:]}")
    short = (d.get("shortcoming") or {}).get("kind", "-")
    print(f"{n} tracks: {d['verdict']}, worst ring {d['worst_headroom_pct']:.1f}%, "
          f"butler idle {d.get('butler_idle_pct') or 0:.1f}%, {d.get('underruns', 0)} dropouts, "
          f"short: {short}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counts", default="104,98")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", default="ardour-medium")
    ap.add_argument("--format", default="float", choices=sorted(FORMATS))
    ap.add_argument("--duration", default="60s")
    ap.add_argument("--cap-bps", type=int, default=20 << 20)
    ap.add_argument("--read-ahead-kb", type=int, default=128)
    ap.add_argument("--size-gib", type=int, default=12)
    args = ap.parse_args()
    counts = [int(c) for c in args.counts.split(",")]
    fx = Capped(args.size_gib, read_bps=args.cap_bps, read_ahead_kb=args.read_ahead_kb)
    try:
        for _ in range(args.rounds):
            for n in counts:
                run(args, fx, n)
    finally:
        # --keep left the test files in the fixture's own file system, which goes with it.
        fx.close()


if __name__ == "__main__":
    main()
