#!/usr/bin/env python3
"""When a trackbench run's real-time thread starts: the time from the command to the first tick.

    python3 bench/first_tick.py trackbench play DIR --tracks 10000 --duration 1s --no-store -q

Runs the command given (its output discarded) and polls /proc every 20 ms (Linux): when the
process holds more than 5000 open files (the tracks' files opened, for runs of that many), when
its thread `trackbench-tick` (the audio thread, which starts once the locate has filled every
ring) first appears, when the memory it then locks (mlockall, as root) covers 95% of what the
process holds (its first tick follows at once; "-" as an ordinary user, who may not lock), and
when it exits. docs/lab/ten-thousand-tracks.md.
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
    tick = files = locked = None
    while p.poll() is None:
        try:
            if tick is None:
                for c in glob.glob(f"/proc/{p.pid}/task/*/comm"):
                    with open(c) as f:
                        if f.read().strip() == "trackbench-tick":
                            tick = time.time() - t0
            elif locked is None:
                with open(f"/proc/{p.pid}/status") as f:
                    kb = {l.split(":")[0]: int(l.split()[1]) for l in f if l.startswith("Vm")}
                if kb.get("VmLck", 0) >= 0.95 * kb.get("VmRSS", 1):
                    locked = time.time() - t0
            if files is None and len(os.listdir(f"/proc/{p.pid}/fd")) > 5000:
                files = time.time() - t0
        except OSError:
            pass  # the process or a thread ended between the listing and the read
        time.sleep(0.02)
    show = lambda t: "-" if t is None else f"{t:.2f} s"
    print(f"files open {show(files)}, tick thread {show(tick)}, memory locked {show(locked)}, "
          f"exit {time.time() - t0:.2f} s, rc {p.returncode}")
    sys.exit(p.returncode)


if __name__ == "__main__":
    main()
