#!/usr/bin/env python3
"""Time to an answer: `trackbench play DIR --find-max` with default settings.

Usage: python3 bench/find_max_time.py [--rounds N] [--base DIR]

Each round runs the default search twice: on a fresh directory (the play files are laid out as
the search goes, as on a first run) and again on the same directory (files reused). Prints every
run's wall time, answer, probe count and the probes' trail, then the medians. Target: under 90 s.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB = os.path.join(ROOT, "target", "release", "trackbench")


def search(path):
    out = os.path.join(tempfile.gettempdir(), "tb-find-max-time.json")
    t = time.monotonic()
    r = subprocess.run([TB, "play", path, "--find-max", "--keep", "-q", "--json", out],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t
    if r.returncode != 0:
        sys.exit(f"trackbench failed:\n{r.stderr[-2000:]}")
    doc = json.load(open(out))
    os.remove(out)
    cap = doc["sections"][0]["detail"]["searches"][0]["capacity"]
    trail = ", ".join(("confirm " if p["confirmation"] else "") + f"{p['count']} {p['verdict']}"
                      for p in cap["probes"])
    return wall, cap["answer"], len(cap["probes"]), trail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--base", default="/var/tmp")
    a = ap.parse_args()
    if not os.path.exists(TB):
        sys.exit("build first: cargo build --release")
    times = {"fresh": [], "reused": []}
    for r in range(a.rounds):
        d = tempfile.mkdtemp(prefix="tb-fmt-", dir=a.base)
        try:
            for kind in ["fresh", "reused"]:
                wall, n, probes, trail = search(d)
                times[kind].append(wall)
                print(f"round {r + 1} {kind:6} {wall:6.1f} s  {n:5d} tracks  {probes:2d} probes: {trail}", flush=True)
            subprocess.run([TB, "clean", d], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        finally:
            shutil.rmtree(d, ignore_errors=True)
    for kind, v in times.items():
        print(f"{kind}: median {statistics.median(v):.1f} s, range {min(v):.1f}-{max(v):.1f} s over {len(v)} runs")


if __name__ == "__main__":
    main()
