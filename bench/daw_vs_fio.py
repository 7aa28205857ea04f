#!/usr/bin/env python3
"""trackbench's DAW workloads beside fio, on the same files or the same pattern, in the same run.

Usage: python3 bench/daw_vs_fio.py [DIR] [--rounds N] [--files F] [--threads Q] [--tracks T]
                                   [--seconds S]

load: trackbench's cold pass with Q loader threads (every sample file opened, its 4 KiB header and
its 60 KiB preload read with O_DIRECT) against fio reading the same files' first 64 KiB with Q jobs
(psync, direct=1, the files split between the jobs). fio reads header and preload in one request
and opens its files outside its timed I/O, so it does less than a loader: the ratio is a floor.
bounce: trackbench's stage one (T float files written one 16 KiB render block each in turn,
buffered, fsync'd) against the job `bounce --fio-job` writes for the same pattern, over fio's
wall time (its own rate stops before its end_fsync; trackbench's stage ends when the files are
durable).
Rounds alternate which tool goes first; the table gives medians and ratios trackbench / fio.
Needs fio (apt-get install -y fio) and a release build (cargo build --release).
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB = os.path.join(ROOT, "target", "release", "trackbench")


def sh(args, **kw):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{r.stderr}")
    return r.stdout


def tb_doc(args):
    out = os.path.join(tempfile.gettempdir(), "tb-daw-bench.json")
    sh([TB] + args + ["-q", "--no-store", "--json", out])
    doc = json.load(open(out))
    os.remove(out)
    return doc


def figures(doc, row):
    r = next(r for r in doc["sections"][0]["rows"] if r["label"] == row)
    return {x["name"]: x["median"] for x in r["figures"]}


def fio_wall(jobfile):
    """MB/s over the fio process's wall time: for buffered writes fio's own rate stops before
    its end_fsync, which trackbench's stage time includes (a stage ends when its files are
    durable). Charges fio its start-up, a few tens of ms."""
    t = time.monotonic()
    out = sh(["fio", "--output-format=json", jobfile])
    secs = time.monotonic() - t
    j = json.loads(out[out.index("{"):])
    return sum(x["read"]["io_bytes"] + x["write"]["io_bytes"] for x in j["jobs"]) / secs / 1e6


def fio_bw(jobfile):
    out = sh(["fio", "--output-format=json", jobfile])
    j = json.loads(out[out.index("{"):])
    # fio's own rate: with group_reporting its job_runtime is the jobs' summed time, not the
    # wall time, so io_bytes / job_runtime would understate a group Q times.
    return sum(x["read"]["bw_bytes"] + x["write"]["bw_bytes"] for x in j["jobs"]) / 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--tracks", type=int, default=500)
    ap.add_argument("--seconds", type=int, default=30)
    a = ap.parse_args()
    if shutil.which("fio") is None:
        sys.exit("fio is not installed: apt-get update && apt-get install -y fio")
    if not os.path.exists(TB):
        sys.exit("build first: cargo build --release")
    base = a.dir or tempfile.mkdtemp(prefix="tb-daw-fio-", dir="/var/tmp")
    os.makedirs(base, exist_ok=True)
    data = os.path.join(base, "trackbench-data")
    q = a.threads
    row = f"cold · {q} threads"
    # The library, laid out once and kept for both tools.
    tb_doc(["load", base, "--files", str(a.files), "--threads", str(q), "--keep"])
    samples = sorted(f for f in os.listdir(data) if f.startswith("sample-"))
    # Each fio job gets a directory of hard links to its share of the files (the same inodes,
    # so the same cache state): fio's options hold at most 4096 characters.
    job = os.path.join(base, "load.fio")
    links = []
    with open(job, "w") as f:
        f.write("[global]\nioengine=psync\ndirect=1\nrw=read\nbs=64k\ngroup_reporting=1\n")
        for k in range(q):
            mine = samples[k::q]
            d = os.path.join(base, f"fio-loader{k}")
            os.makedirs(d, exist_ok=True)
            for s in mine:
                os.link(os.path.join(data, s), os.path.join(d, s))
            links.append(d)
            f.write(f"\n[loader{k}]\nopendir={d}\nsize={len(mine) * 65536}\n")
            f.write("file_service_type=sequential\n")
    bounce_job = os.path.join(base, "bounce.fio")
    bounce = ["bounce", base, "--tracks", str(a.tracks), "--duration", f"{a.seconds}s"]
    load = {"tb": [], "fio": [], "tb_files_s": []}
    render = {"tb": [], "fio": []}
    for r in range(a.rounds):
        order = ["tb", "fio"] if r % 2 == 0 else ["fio", "tb"]
        for who in order:
            if who == "tb":
                f = figures(tb_doc(["load", base, "--files", str(a.files), "--threads", str(q),
                                    "--keep"]), row)
                load["tb"].append(f["rate_mb_per_s"])
                load["tb_files_s"].append(f["files_per_s"])
                doc = tb_doc(bounce + ["--fio-job", bounce_job])
                render["tb"].append(figures(doc, "render (32-bit float)")["rate_mb_per_s"])
            else:
                load["fio"].append(fio_bw(job))
                render["fio"].append(fio_wall(bounce_job))
        print(f"round {r + 1}: load {load['tb'][-1]:.1f} vs {load['fio'][-1]:.1f} MB/s, "
              f"render {render['tb'][-1]:.1f} vs {render['fio'][-1]:.1f} MB/s", file=sys.stderr)
    med = statistics.median
    print(f"| pattern | trackbench MB/s | fio MB/s | ratio |")
    print(f"| --- | ---: | ---: | ---: |")
    print(f"| load, cold, {q} threads, {a.files} files ({med(load['tb_files_s']):.0f} files/s) | "
          f"{med(load['tb']):.1f} | {med(load['fio']):.1f} | {med(load['tb']) / med(load['fio']):.2f} |")
    print(f"| bounce stage one, {a.tracks} tracks x {a.seconds} s | {med(render['tb']):.1f} | "
          f"{med(render['fio']):.1f} | {med(render['tb']) / med(render['fio']):.2f} |")
    for d in links:
        shutil.rmtree(d)
    sh([TB, "clean", base])
    if not a.dir:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
