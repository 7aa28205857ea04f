#!/usr/bin/env python3
"""Time to an answer: `trackbench play DIR --find-max` with default settings.

Usage: python3 bench/find_max_time.py [--rounds N] [--base DIR]
       python3 bench/find_max_time.py --compare OLD_BINARY NEW_BINARY [--rounds N]

Each round runs the default search twice: on a fresh directory (the play files are laid out as
the search goes, as on a first run) and again on the same directory (files reused). Prints every
run's wall time, answer, probe count and the probes' trail, then the medians. Target: under 90 s.

With --compare, each round runs the two builds one after the other, each on a fresh directory
and without --keep, as a user's first search runs (its files laid out, and deleted at the end),
and prints each run's time, the mean time of its probes after the first, the median time of its
passing probes on files already laid out (a count no higher than one probed before: no layout
in it, and run to the end), all of them and split into the probes that steer the search and
its confirmations, and the medians.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB = os.path.join(ROOT, "target", "release", "trackbench")


def search(path, tb=TB, keep=True):
    out = os.path.join(tempfile.gettempdir(), "tb-find-max-time.json")
    t = time.monotonic()
    r = subprocess.run([tb, "play", path, "--find-max", "-q", "--no-store", "--json", out]
                       + (["--keep"] if keep else []),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t
    if r.returncode != 0:
        sys.exit(f"trackbench failed:\n{r.stderr[-2000:]}")
    doc = json.load(open(out))
    os.remove(out)
    cap = doc["sections"][0]["detail"]["searches"][0]["capacity"]
    trail = ", ".join(("confirm " if p["confirmation"] else "") + f"{p['count']} {p['verdict']}"
                      for p in cap["probes"])
    later = [p["elapsed_s"] for p in cap["probes"][1:]]
    search.later_probe_s = statistics.mean(later) if later else float("nan")
    # Passing probes that lay out no file (their count no higher than one before): their time
    # is a whole probe's own (set-up, lock, roll, unlock), not the layout's, and none stopped
    # early as a probe that could no longer pass does.
    # The same split by kind: the probes that steer the search (started in the steady state
    # where the build does so) and the confirmations (always in phase).
    most, reused, kinds = 0, [], {False: [], True: []}
    for p in cap["probes"]:
        if p["count"] <= most and p["verdict"] == "pass":
            reused.append(p["elapsed_s"])
            kinds[p["confirmation"]].append(p["elapsed_s"])
        most = max(most, p["count"])
    med = lambda v: statistics.median(v) if v else float("nan")
    search.reused_probe_s = med(reused)
    search.reused_probes = len(reused)
    search.reused_steer_s, search.reused_confirm_s = med(kinds[False]), med(kinds[True])
    return wall, cap["answer"], len(cap["probes"]), trail


def compare(a):
    times = {b: [] for b in a.compare}
    reused = {b: [] for b in a.compare}
    for r in range(a.rounds):
        for b in a.compare:
            d = tempfile.mkdtemp(prefix="tb-fmt-", dir=a.base)
            try:
                wall, n, probes, trail = search(d, b, keep=False)
            finally:
                shutil.rmtree(d, ignore_errors=True)
            times[b].append(wall)
            reused[b].append(search.reused_probe_s)
            print(f"round {r + 1} {b}: {wall:6.1f} s  {n:5d} tracks  {probes:2d} probes "
                  f"(after the first {search.later_probe_s:.1f} s each; the {search.reused_probes} "
                  f"passing on files already laid out {search.reused_probe_s:.1f} s in the median: "
                  f"probes {search.reused_steer_s:.1f} s, confirmations {search.reused_confirm_s:.1f} s): {trail}",
                  flush=True)
    for b, v in times.items():
        r = [x for x in reused[b] if x == x]
        print(f"{b}: median {statistics.median(v):.1f} s, range {min(v):.1f}-{max(v):.1f} s over {len(v)} runs; "
              f"passing probes on laid-out files {statistics.median(r) if r else float('nan'):.2f} s (median of the runs' medians)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--base", default="/var/tmp")
    ap.add_argument("--compare", nargs=2, metavar=("OLD", "NEW"))
    a = ap.parse_args()
    if a.compare:
        return compare(a)
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
