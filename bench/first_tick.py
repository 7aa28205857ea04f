#!/usr/bin/env python3
"""When a trackbench run's real-time thread starts: the time from the command to the first tick.

    python3 bench/first_tick.py trackbench play DIR --tracks 10000 --duration 1s --no-store -q

Runs the command given (its output discarded) and polls /proc every 20 ms (Linux): when the
process holds more than 5000 open files (the tracks' files opened, for runs of that many), when
its thread `trackbench-tick` (the audio thread, which starts once the locate has filled every
ring) first appears, and when it exits. BENCHMARKS.md, "Starting 10,000 tracks".
"""
import glob
import os
import subprocess
import sys
import time


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    t0 = time.time()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    tick = files = None
    while p.poll() is None:
        try:
            if tick is None:
                for c in glob.glob(f"/proc/{p.pid}/task/*/comm"):
                    with open(c) as f:
                        if f.read().strip() == "trackbench-tick":
                            tick = time.time() - t0
            if files is None and len(os.listdir(f"/proc/{p.pid}/fd")) > 5000:
                files = time.time() - t0
        except OSError:
            pass  # the process or a thread ended between the listing and the read
        time.sleep(0.02)
    show = lambda t: "-" if t is None else f"{t:.2f} s"
    print(f"files open {show(files)}, first tick {show(tick)}, exit {time.time() - t0:.2f} s, "
          f"rc {p.returncode}")
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
