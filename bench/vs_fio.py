#!/usr/bin/env python3
"""trackbench and fio side by side on the same files, in the same run.

Usage: python3 bench/vs_fio.py [DIR] [--rounds N] [--seconds S] [--only NAME]

DIR must be on a filesystem with O_DIRECT (not tmpfs); default: a new directory under /var/tmp.
Each pattern runs ROUNDS times per tool, alternating which tool goes first; the table shows the
median of each tool and the ratio trackbench / fio. CPU is user + system seconds per GB moved.
Writes go to a new file that grows as it is written, for both tools (fio: no fallocate, appending),
as a recorder's file does.
Needs fio (apt-get install -y fio) and a release build (cargo build --release; TRACKBENCH_BIN names
another binary, e.g. an earlier commit's, to compare).
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TB = os.environ.get("TRACKBENCH_BIN") or os.path.join(ROOT, "target", "release", "trackbench")


def sh(args):
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(args)}\n{r.stderr}")
    return r.stdout


def tb(args, row):
    out = os.path.join(tempfile.gettempdir(), "tb-bench.json")
    sh([TB] + args + ["-q", "--json", out])
    doc = json.load(open(out))
    os.remove(out)
    r = next(r for r in doc["sections"][0]["rows"] if r["label"] == row)
    f = {x["name"]: x["median"] for x in r["figures"]}
    return {"mb_s": f["rate_mb_per_s"], "iops": f["iops"], "cpu_s_gb": f["cpu_s_per_gb"]}


def fio(args, rw, jobs=1):
    more = ["--numjobs=%d" % jobs, "--group_reporting"] if jobs > 1 else []
    out = sh(["fio", "--output-format=json", "--direct=1", "--name=job"] + args + more)
    j = json.loads(out[out.index("{"):])["jobs"][0]
    d = j["write" if "write" in rw else "read"]
    # With group_reporting, job_runtime is the jobs' runtimes summed, and usr_cpu/sys_cpu are the
    # summed CPU times over that summed runtime (fio's stat.c): their product is every job's CPU.
    secs = j["job_runtime"] / 1000.0
    gb = d["io_bytes"] / 1e9
    cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * secs
    return {"mb_s": d["bw_bytes"] / 1e6, "iops": d["iops"], "cpu_s_gb": cpu / gb if gb else 0.0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--only", help="run only the patterns whose name contains this")
    a = ap.parse_args()
    if shutil.which("fio") is None:
        sys.exit("fio is not installed: apt-get update && apt-get install -y fio")
    if not os.path.exists(TB):
        sys.exit("build first: cargo build --release")
    base = a.dir or tempfile.mkdtemp(prefix="tb-vs-fio-", dir="/var/tmp")
    os.makedirs(base, exist_ok=True)
    data = os.path.join(base, "trackbench-data")
    s = str(a.seconds)
    # Lay out trackbench's media once (kept for reuse): a 1 GiB span and 8 files of 128 MiB.
    sh([TB, "seek", base, "--size", "4G", "--duration", "100ms", "--keep", "-q"])
    sh([TB, "sweep", base, "--files", "8", "--file-size", "128M", "--blocks", "64K", "--duration", "100ms", "--keep", "-q"])
    span = os.path.join(data, "span-0000.wav")
    sweep = ":".join(os.path.join(data, f"sweep-{i:04d}.wav") for i in range(8))
    fio_seqw = os.path.join(base, "fio-seqw")

    def fio_write():
        try:
            return fio(["--filename=" + fio_seqw, "--size=4G", "--bs=1M", "--rw=write", "--ioengine=psync",
                        "--fallocate=none", "--file_append=1"], "write")
        finally:
            os.remove(fio_seqw)

    cases = [
        ("seq write 1M", lambda: tb(["seq", base, "--mode", "write", "--size", "4G", "--block", "1M", "--keep"], "write"), fio_write),
        ("seq read 1M", lambda: tb(["seq", base, "--mode", "read", "--size", "4G", "--block", "1M", "--keep"], "read"),
         lambda: fio(["--filename=" + span, "--bs=1M", "--rw=read", "--ioengine=psync", "--size=4G"], "read")),
        ("rand read 4K QD1 sync", lambda: tb(["seek", base, "--size", "4G", "--duration", s + "s", "--keep"], "random 4K"),
         lambda: fio(["--filename=" + span, "--bs=4k", "--rw=randread", "--ioengine=psync", "--runtime=" + s, "--time_based"], "randread")),
        # The portable parallel backend (macOS, Windows): 32 threads doing positional reads,
        # against fio's 32 psync jobs on the same file (glibc's posixaio serialises the requests
        # of one file, which makes it no reference here).
        ("rand read 4K QD32 threads", lambda: tb(["seek", base, "--size", "4G", "--duration", s + "s", "--qd", "32", "--backend", "threads", "--keep"], "random 4K"),
         lambda: fio(["--filename=" + span, "--bs=4k", "--rw=randread", "--ioengine=psync", "--runtime=" + s, "--time_based"], "randread", jobs=32)),
    ]
    # io_uring at four queue depths (issue 18: 0.95-1.05 of fio at each, content still checked).
    for qd in [1, 8, 32, 128]:
        cases.insert(len(cases) - 1, (f"rand read 4K QD{qd} io_uring",
                      lambda qd=qd: tb(["seek", base, "--size", "4G", "--duration", s + "s", "--qd", str(qd), "--backend", "uring", "--keep"], "random 4K"),
                      lambda qd=qd: fio(["--filename=" + span, "--bs=4k", "--rw=randread", "--ioengine=io_uring", "--iodepth=" + str(qd), "--runtime=" + s, "--time_based"], "randread")))
    for bs in ["64K", "8K"]:
        cases.append((f"8 files round robin {bs}",
                      lambda bs=bs: tb(["sweep", base, "--files", "8", "--file-size", "128M", "--blocks", bs, "--duration", s + "s", "--keep"], bs),
                      lambda bs=bs: fio(["--filename=" + sweep, "--file_service_type=roundrobin", "--bs=" + bs.lower(), "--rw=read",
                                         "--ioengine=psync", "--runtime=" + s, "--time_based"], "read")))
    print(f"target {base}; {a.rounds} rounds, medians; ratio = trackbench / fio")
    head = f"{'pattern':28} {'tb MB/s':>9} {'fio MB/s':>9} {'ratio':>6} {'tb IOPS':>9} {'fio IOPS':>9} {'ratio':>6} {'tb CPU s/GB':>11} {'fio CPU s/GB':>12} {'ratio':>6}"
    print(head)
    worst = []
    for name, run_tb, run_fio in cases:
        if a.only and a.only not in name:
            continue
        t, f = [], []
        for r in range(a.rounds):
            if r % 2 == 0:
                t.append(run_tb()); f.append(run_fio())
            else:
                f.append(run_fio()); t.append(run_tb())
        med = lambda xs, k: statistics.median(x[k] for x in xs)
        tm, fm = med(t, "mb_s"), med(f, "mb_s")
        ti, fi = med(t, "iops"), med(f, "iops")
        tc, fc = med(t, "cpu_s_gb"), med(f, "cpu_s_gb")
        print(f"{name:28} {tm:9.1f} {fm:9.1f} {tm/fm:6.2f} {ti:9.0f} {fi:9.0f} {ti/fi:6.2f} {tc:11.3f} {fc:12.3f} {tc/fc:6.2f}", flush=True)
        worst.append((name, tm / fm, tc / fc))
    sh([TB, "clean", base])
    if not a.dir:
        shutil.rmtree(base, ignore_errors=True)
    outside = [n for n, r, _ in worst if not 0.9 <= r <= 1.1]
    print("throughput ratios outside 0.9..1.1:", ", ".join(outside) or "none")
    cpu_over = [n for n, _, c in worst if c > 1.0]
    print("CPU per GB above fio's:", ", ".join(cpu_over) or "none")


if __name__ == "__main__":
    main()
