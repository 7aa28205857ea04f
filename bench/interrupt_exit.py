#!/usr/bin/env python3
"""How long an interrupted run takes to exit, and how long until its files are gone.

Runs `trackbench seek DIR --duration 30s --size 1G -q --json F` (one 1 GiB test file, the
case whose removal is slowest), sends SIGINT half a second after the layout is complete,
and times the process's exit from the signal, then the data directory's removal by the
cleaner the run hands it to. Alternates the builds given, a fresh directory and store each
run.

    python3 bench/interrupt_exit.py OLD_BINARY NEW_BINARY --rounds 5 [--dir /var/tmp]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import tempfile
import time


def one(binary, parent):
    t = tempfile.mkdtemp(prefix="tb-int-", dir=parent)
    target = os.path.join(t, "target")
    os.mkdir(target)
    env = dict(os.environ, XDG_DATA_HOME=os.path.join(t, "xdg"))
    p = subprocess.Popen(
        [binary, "seek", target, "--duration", "30s", "--size", "1G", "-q",
         "--json", os.path.join(t, "r.json")],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    manifest = os.path.join(target, "trackbench-data", "manifest.json")
    start = time.monotonic()
    while time.monotonic() - start < 120:
        try:
            if '"complete": true' in open(manifest).read():
                break
        except OSError:
            pass
        time.sleep(0.02)
    time.sleep(0.5)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    p.wait()
    exited = time.monotonic() - sent
    data = os.path.join(target, "trackbench-data")
    while os.path.exists(data) and time.monotonic() - sent < 60:
        time.sleep(0.005)
    gone = time.monotonic() - sent
    shutil.rmtree(t, ignore_errors=True)
    return p.returncode, exited, gone


def main():
    a = argparse.ArgumentParser()
    a.add_argument("binaries", nargs="+")
    a.add_argument("--rounds", type=int, default=5)
    a.add_argument("--dir", default="/var/tmp")
    o = a.parse_args()
    res = {b: [] for b in o.binaries}
    for r in range(o.rounds):
        for b in o.binaries:
            code, exited, gone = one(b, o.dir)
            res[b].append((exited, gone))
            print(f"round {r + 1} {b}: exit {code} after {exited:.3f} s, files gone after {gone:.3f} s",
                  flush=True)
    for b, v in res.items():
        ex = [e for e, _ in v]
        gone = [g for _, g in v]
        print(f"{b}: exit median {statistics.median(ex):.3f} s (max {max(ex):.3f}), "
              f"files gone median {statistics.median(gone):.3f} s")


if __name__ == "__main__":
    main()
