#!/usr/bin/env python3
"""The kernel's read-ahead, traced while a command runs: for comparing how two programs' reads
reach a device through the page cache (docs/lab/profiles.md, "The IOPS cell from a cold session").

Enables the tracepoints readahead:page_cache_sync_ra, page_cache_async_ra, page_cache_ra_order
and block:block_rq_issue in /sys/kernel/tracing, runs COMMAND, saves the trace to --out, turns
the tracepoints off again, and summarises the reads of one block device (--dev MAJ:MIN, e.g. 7:0
for /dev/loop0) over the last --roll seconds of its reads, split at --split (seconds into that
window): I/Os and their mean size, the read-ahead windows the kernel opened (pages), how many
pages of the read were left when a read crossed a window's marker (which sets the next window's
size), and the reads that missed the page cache. As root:

    sudo python3 bench/readahead_trace.py --dev 7:0 --roll 60 --out /tmp/ra.txt -- \\
        python3 bench/ardour.py --cap-iops 100 --read-ahead-kb 128 --formats float \\
        --presets Small --roll 60 --at 240 --record-tracks 240 --repeat 1 --no-trackbench

(the fixture's loop device is the first free one; `losetup -f` before the run says which).
With --summarise FILE, summarises a saved trace instead of running anything.
"""

import argparse
import collections
import os
import re
import statistics
import subprocess
import sys

TRACING = "/sys/kernel/tracing"
EVENTS = (
    "readahead/page_cache_sync_ra",
    "readahead/page_cache_async_ra",
    "readahead/page_cache_ra_order",
    "block/block_rq_issue",
)
LINE = re.compile(r"\s*(\S+)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)")


def write(path, value):
    with open(os.path.join(TRACING, path), "w") as f:
        f.write(value)


def trace(command, out):
    if not os.path.exists(os.path.join(TRACING, "trace")):
        subprocess.run(["mount", "-t", "tracefs", "nodev", TRACING], check=True)
    write("tracing_on", "0")
    write("trace", "")
    write("buffer_size_kb", "131072")
    for e in EVENTS:
        write(f"events/{e}/enable", "1")
    write("tracing_on", "1")
    try:
        rc = subprocess.run(command).returncode
    finally:
        write("tracing_on", "0")
        with open(os.path.join(TRACING, "trace")) as src, open(out, "w") as dst:
            for line in src:
                dst.write(line)
        for e in EVENTS:
            write(f"events/{e}/enable", "0")
        write("trace", "")
    return rc


def parse(path, dev):
    major, minor = dev.split(":")
    rq_dev, ra_dev = f"{major},{minor}", f"dev={major}:{minor}"
    events = []
    with open(path) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            _, _, t, name, rest = m.groups()
            if name == "block_rq_issue":
                p = rest.split()
                if len(p) > 2 and p[0] == rq_dev and p[1].startswith("R"):
                    events.append((float(t), "io", int(p[2])))
            elif ra_dev in rest.split():
                kv = dict(x.split("=", 1) for x in rest.split() if "=" in x)
                events.append((float(t), name, kv))
    return events


def summarise(events, roll, splits):
    reads = [e for e in events if e[1] == "io"]
    if not reads:
        sys.exit("no reads of that device in the trace")
    start = reads[-1][0] - roll
    edges = [0.0, *splits, roll]
    for a, b in zip(edges, edges[1:]):
        part = [e for e in events if start + a <= e[0] < start + b]
        ios = [e[2] for e in part if e[1] == "io"]
        windows = [int(e[2]["size"]) for e in part if e[1] == "page_cache_ra_order"]
        left = [int(e[2]["req_count"]) for e in part if e[1] == "page_cache_async_ra"]
        misses = sum(1 for e in part if e[1] == "page_cache_sync_ra")
        if not ios:
            print(f"[{a:g}, {b:g}) s: no reads")
            continue
        common = ", ".join(f"{s}×{n}" for s, n in collections.Counter(windows).most_common(4))
        print(
            f"[{a:g}, {b:g}) s: {len(ios)} I/Os ({len(ios) / (b - a):.1f} a second), mean "
            f"{statistics.mean(ios) / 1e3:.0f} KB; {len(windows)} windows, median "
            f"{statistics.median(windows) if windows else 0:g} pages ({common}); pages left "
            f"at a marker, median {statistics.median(left) if left else 0:g}; "
            f"{misses} reads missed the page cache"
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dev", required=True, help="the block device, MAJ:MIN (7:0 is /dev/loop0)")
    ap.add_argument("--roll", type=float, default=60, help="seconds of reads to summarise, up to the last")
    ap.add_argument("--split", default="12,30", help="where to split that window (seconds, comma-separated)")
    ap.add_argument("--out", default="readahead-trace.txt", help="where the raw trace goes")
    ap.add_argument("--summarise", metavar="FILE", help="summarise a saved trace instead")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ...")
    args = ap.parse_args()
    splits = [float(x) for x in args.split.split(",") if x]
    if args.summarise:
        return summarise(parse(args.summarise, args.dev), args.roll, splits)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        sys.exit("nothing to run: give -- COMMAND, or --summarise FILE")
    if os.geteuid() != 0:
        sys.exit("run as root: the tracepoints need it")
    rc = trace(command, args.out)
    summarise(parse(args.out, args.dev), args.roll, splits)
    sys.exit(rc)


if __name__ == "__main__":
    main()
