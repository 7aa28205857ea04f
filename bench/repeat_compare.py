#!/usr/bin/env python3
"""Can `compare` tell two disks apart by more than the search's own spread? (issue 59)

Two capped-device fixtures (bench/ardour.py's: a sparse image, a loop device with direct I/O,
its own ext4, reads capped by a cgroup v1 blkio group), the second's cap --apart-pct lower
than the first's, stand for two disks. On each, `play --find-max --runs N` with the given
profile and format stores its result in one store; then `trackbench compare 1 2` says whether
the two answers lie within each other's spread. Prints both answers (each search's, their
median and range), each answer against its cap's exact bound, and compare's words.

    cargo build --release && sudo python3 bench/repeat_compare.py [--runs 3]
        [--profile trackbench] [--format int24|float] [--cap-bps 20971520] [--apart-pct 5]
        [--read-ahead-kb 128] [--size-gib 12]

Leaves nothing behind.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ardour import FORMATS, ROOT, Capped  # noqa: E402

BIN = os.environ.get("TRACKBENCH_BIN", f"{ROOT}/target/release/trackbench")


def measure(args, cap, store):
    fx = Capped(args.size_gib, read_bps=cap, read_ahead_kb=args.read_ahead_kb)
    try:
        out = fx.run([BIN, "play", fx.mnt, "--find-max", "--runs", str(args.runs), "--profile",
                      args.profile, "--format", FORMATS[args.format][0], "--json", "-", "-q"],
                     env=dict(os.environ, XDG_DATA_HOME=store))
    finally:
        fx.close()
    if out.returncode != 0:
        sys.exit(f"trackbench failed:\n{out.stderr[-2000:]}")
    d = json.loads(out.stdout)["sections"][0]["detail"]
    reps = d.get("repetitions") or [d["searches"]]
    return [r[0]["capacity"]["answer"] for r in reps], sum(
        p["elapsed_s"] for r in reps for p in r[0]["capacity"]["probes"])


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--profile", default="trackbench")
    ap.add_argument("--format", default="int24", choices=sorted(FORMATS))
    ap.add_argument("--cap-bps", type=int, default=20 << 20)
    ap.add_argument("--apart-pct", type=float, default=5.0)
    ap.add_argument("--read-ahead-kb", type=int, default=128)
    ap.add_argument("--size-gib", type=int, default=12)
    args = ap.parse_args()
    store = tempfile.mkdtemp(prefix="trackbench-repeat-")
    try:
        rate = FORMATS[args.format][1]
        caps = [args.cap_bps, int(args.cap_bps * (1 - args.apart_pct / 100))]
        for i, cap in enumerate(caps):
            answers, secs = measure(args, cap, store)
            print(f"#{i + 1}: cap {cap} B/s (bound {cap / rate:.1f}): {answers}; "
                  f"range {min(answers)}-{max(answers)}, highest {max(answers) / (cap / rate):.3f} "
                  f"of the bound; {secs:.0f} s of probes", flush=True)
        out = subprocess.run([BIN, "compare", "1", "2"], capture_output=True, text=True,
                             env=dict(os.environ, XDG_DATA_HOME=store, COLUMNS="100"))
        print(out.stdout + out.stderr)
    finally:
        shutil.rmtree(store)


if __name__ == "__main__":
    main()
