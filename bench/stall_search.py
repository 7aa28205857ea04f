#!/usr/bin/env python3
"""A search whose first probe the host stalls: how the search recovers (docs/lab/search-time.md, "A failure
far below what passes after it").

    sudo python3 bench/stall_search.py TRACKBENCH [--after 3] [--for 2]

Runs `TRACKBENCH play DIR --find-max --no-store --json F` on a new directory under /var/tmp, waits
for its first probe's audio thread (`trackbench-tick`) to start, then after --after seconds runs
one SCHED_FIFO 99 busy loop on every CPU for --for seconds (above the audio thread's priority, as a
host that takes the CPUs away would), once. Prints the search's probes, its answer and how long it
took. Needs root (SCHED_FIFO) and Linux.
"""
import argparse, glob, json, os, shutil, subprocess, sys, tempfile, time


def tick_started(pid):
    for c in glob.glob(f"/proc/{pid}/task/*/comm"):
        try:
            if open(c).read().strip() == "trackbench-tick":
                return True
        except OSError:
            pass
    return False


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trackbench")
    ap.add_argument("--after", type=float, default=3.0)
    ap.add_argument("--for", dest="hold", type=float, default=2.0)
    a = ap.parse_args()
    d = tempfile.mkdtemp(dir="/var/tmp", prefix="tb-stall-")
    out = os.path.join(d, "result.json")
    data = os.path.join(d, "data")
    os.mkdir(data)
    try:
        t0 = time.time()
        p = subprocess.Popen([a.trackbench, "play", data, "--find-max", "--no-store", "--json", out],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while p.poll() is None and not tick_started(p.pid):
            time.sleep(0.02)
        if p.poll() is None:
            time.sleep(a.after)
            stalled_at = time.time() - t0
            # Each loop ends itself: a timer process beside it at the same priority would never
            # get its CPU back to stop it.
            spin = f"import time\nend = time.monotonic() + {a.hold}\nwhile time.monotonic() < end: pass"
            hogs = [subprocess.Popen(["taskset", "-c", str(cpu), "chrt", "-f", "99",
                                      sys.executable, "-c", spin])
                    for cpu in range(os.cpu_count())]
            for h in hogs:
                h.wait()
        p.wait()
        took = time.time() - t0
        doc = json.load(open(out))
        s = doc["sections"][0]["detail"]["searches"][0]["capacity"]
        trail = ", ".join(
            f"{'confirm ' if q['confirmation'] else ''}{q['count']} {q['verdict']}"
            + (f" ({q['shortcoming']['kind']})" if q.get("shortcoming") else "")
            for q in s["probes"])
        print(f"stalled {a.hold:g} s at {stalled_at:.1f} s; {trail} -> {s['answer']}"
              f"{' (confirmed)' if s['confirmed'] else ''} in {took:.1f} s")
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
