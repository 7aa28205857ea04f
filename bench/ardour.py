#!/usr/bin/env python3
"""Ardour 7 against trackbench's ardour-* profiles, on a device whose rate the kernel caps.

Builds the capped-device fixture (a loop device with its own ext4, its reads capped by a cgroup v1
blkio group, every process of a trial in the group), has Ardour record a session of N mono tracks
from the Dummy backend's noise in its own native format, then bisects the most tracks Ardour
plays with no dropout for a roll of --roll seconds after its butler's first fill and without
keeping the device saturated (98% of its cap) in the roll's second half, where the tracks would
be draining their rings more slowly than a roll can show, with the page cache dropped before
every trial (bench/ardour/play.lua counts, after each track's disk reader,
the periods that went silent). Then runs `trackbench play --find-max --profile ardour-<preset>`
on the same fixture and format and prints the ratio. As root, with Debian's ardour package:

    cargo build --release && sudo python3 bench/ardour.py [--cap-bps 21000000 | --cap-iops 160]
        [--presets Small,Medium,Large] [--formats int24,float] [--roll 60] [--repeat 2]
        [--at 40,50,60: single trials instead of a search] [--check: the test's check, below]

With ARDOUR_WRAP set, each trial's luasession runs under that command, e.g.
`ARDOUR_WRAP="strace -f --seccomp-bpf -tt -T -e trace=openat,read,lseek -o /tmp/ardour.st"`:
how Ardour opens and reads its files (docs/lab/profiles.md, tenth stop, traced it this way).

Leaves nothing: the loop device, its mount and the group go at the end.
"""

import argparse
import glob
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from xml.etree import ElementTree

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LUASESSION = "/usr/lib/ardour7/luasession"
FORMATS = {"int24": ("48k/24/mono", 144000), "float": ("48k/32f/mono", 192000)}


def sh(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


class Capped:
    """The fixture: a sparse image, a loop device, ext4, a blkio group with one cap."""

    def __init__(self, size_gib, read_bps=None, read_iops=None, write_bps=None, read_ahead_kb=None):
        self.work = tempfile.mkdtemp(prefix="trackbench-ardour-")
        img = os.path.join(self.work, "disk.img")
        with open(img, "wb") as f:
            f.truncate(size_gib << 30)
        self.dev = sh("losetup", "-f", "--show", "--direct-io=on", img)
        # The loop device's read-ahead (2560 KiB on this VM: twice its 1280 KiB optimal I/O size)
        # sets how far the kernel reads ahead of both programs; a file takes it when opened.
        if read_ahead_kb:
            with open(f"/sys/block/{os.path.basename(self.dev)}/queue/read_ahead_kb", "w") as f:
                f.write(f"{read_ahead_kb}\n")
        self.read_bps, self.read_iops = read_bps, read_iops
        self.mnt = os.path.join(self.work, "mnt")
        self.group = f"/sys/fs/cgroup/blkio/trackbench-ardour-{os.getpid()}"
        sh("mkfs.ext4", "-q", "-F", self.dev)
        os.mkdir(self.mnt)
        sh("mount", self.dev, self.mnt)
        os.mkdir(self.group)
        majmin = open(f"/sys/block/{os.path.basename(self.dev)}/dev").read().strip()
        for name, value in (
            ("blkio.throttle.read_bps_device", read_bps),
            ("blkio.throttle.read_iops_device", read_iops),
            ("blkio.throttle.write_bps_device", write_bps),
        ):
            if value:
                with open(os.path.join(self.group, name), "w") as f:
                    f.write(f"{majmin} {value}\n")

    def stat(self):
        """The loop device's I/O counters (what it completed, after the throttle)."""
        return f"/sys/block/{os.path.basename(self.dev)}/stat"

    def busy(self, ios_per_s, bytes_per_s):
        """How much of its read cap the device served (1: saturated), or None without a read cap."""
        shares = []
        if self.read_bps:
            shares.append(bytes_per_s / self.read_bps)
        if self.read_iops:
            shares.append(ios_per_s / self.read_iops)
        return max(shares) if shares and bytes_per_s >= 0 else None

    def run(self, args, env=None, timeout=None):
        """Runs args inside the group (the shell joins it, then execs)."""
        cmd = ["sh", "-c", f'echo $$ > {self.group}/cgroup.procs && exec "$@"', "sh", *args]
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)

    def close(self):
        for _ in range(50):
            procs = open(os.path.join(self.group, "cgroup.procs")).read().split()
            if not procs:
                break
            time.sleep(0.2)
        for _ in range(20):
            if subprocess.run(["umount", self.mnt], capture_output=True).returncode == 0:
                break
            time.sleep(0.5)
        else:
            subprocess.run(["umount", "-l", self.mnt])
        subprocess.run(["losetup", "-d", self.dev])
        os.rmdir(self.group)
        shutil.rmtree(self.work)


def ardour_env(work):
    env = dict(os.environ)
    env.update(
        LD_LIBRARY_PATH="/usr/lib/ardour7",
        ARDOUR_DATA_PATH=f"{HERE}/ardour:/usr/share/ardour7",
        ARDOUR_CONFIG_PATH="/etc/ardour7",
        ARDOUR_DLL_PATH="/usr/lib/ardour7",
        # Ardour's own configuration and cache stay inside the run's directory.
        XDG_CONFIG_HOME=os.path.join(work, "config"),
        XDG_CACHE_HOME=os.path.join(work, "cache"),
    )
    return env


def drop_cached(session):
    """The session's audio files leave the page cache (only these: a run beside keeps its own).

    Each file is written back first: the kernel drops only clean pages, and right after a
    recording every file's first page (the header Ardour rewrites as it closes the take) is
    still dirty. A trial that found it cached skipped the header's read, and its first refill
    of the file was then read as one ring-long window instead of the read-ahead's ramp from
    16 KiB (six I/Os where a session opened cold costs two), which on an IOPS cap let Ardour
    play more tracks in the first trial after a recording than in any later one."""
    for f in glob.glob(os.path.join(session, "interchange", "*", "audiofiles", "*")):
        fd = os.open(f, os.O_RDONLY)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def start_recording(fx, session, tracks, secs, fmt):
    """Ardour records the session in the background (in real time: `secs` of it); `finish`
    waits for it."""
    return subprocess.Popen(
        [LUASESSION, f"{HERE}/ardour/record.lua", session, str(tracks), str(secs), fmt],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ardour_env(fx.work),
    )


def finish_recording(proc, secs):
    try:
        stdout, stderr = proc.communicate(timeout=secs + 120)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
    line = [l for l in stdout.splitlines() if l.startswith("recorded")]
    if proc.returncode != 0 or not line:
        sys.exit(f"Ardour did not record the session:\n{stdout[-2000:]}\n{stderr[-2000:]}")
    return line[0]


def record(fx, session, tracks, secs, fmt):
    return finish_recording(start_recording(fx, session, tracks, secs, fmt), secs)


def snapshot(session, tracks):
    """A snapshot of the recorded session with only its first `tracks` tracks: the others are
    removed, not deactivated (Ardour's butler keeps refilling an inactive track's rings)."""
    tree = ElementTree.parse(os.path.join(session, "trackbench.ardour"))
    routes = tree.getroot().find("Routes")
    for r in list(routes):
        m = re.fullmatch(r"t (\d+)", r.get("name", ""))
        if m and int(m.group(1)) > tracks:
            routes.remove(r)
    name = f"trial-{tracks}"
    tree.write(os.path.join(session, f"{name}.ardour"), encoding="UTF-8", xml_declaration=True)
    return name


# A roll whose second half kept the device this busy was living on its rings and the kernel's
# read-ahead: with the device serving less than the tracks play, they run dry later, after a roll
# of any length the harness can afford (117 float tracks, 1.07 times the bound, played 60 s
# without a dropout on ten-second rings). Such a trial is not a sustained pass.
SATURATED = 0.98


def trial(fx, session, tracks, roll, preset, fmt):
    """One Ardour run of `tracks` tracks; returns the parsed result line. It passes with no
    dropout, the whole roll rolled, and the device not saturated in the roll's second half."""
    drop_cached(session)
    name = snapshot(session, tracks)
    out = fx.run(
        [*os.environ.get("ARDOUR_WRAP", "").split(), LUASESSION, f"{HERE}/ardour/play.lua",
         session, name, str(tracks), str(roll), preset, str(FORMATS[fmt][1]), fx.stat()],
        env=ardour_env(fx.work), timeout=roll + 1900,
    )
    os.remove(os.path.join(session, f"{name}.ardour"))
    m = re.search(r"^result (.*)$", out.stdout, re.M)
    if out.returncode != 0 or not m:
        sys.exit(f"Ardour's trial of {tracks} tracks failed:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
    r = dict(kv.split("=") for kv in m.group(1).split())
    r = {k: (v if k == "preset" else float(v)) for k, v in r.items()}
    r["busy"] = fx.busy(r["device_ios_per_s"], r["device_bytes_per_s"])
    r["saturated"] = r["busy"] is not None and r["busy"] >= SATURATED
    r["pass"] = r["dropouts"] == 0 and r["rolled_s"] >= roll - 1 and not r["saturated"]
    # Why it failed, for the check line: silent periods, the device saturated, or neither and the
    # roll short of the wall clock: Ardour's engine did not keep real time (its audio thread late
    # on a busy CPU), which says nothing about the disk.
    if r["pass"]:
        r["reason"] = "pass"
    elif r["dropouts"] > 0:
        r["reason"] = f"dropouts:{int(r['dropouts'])}"
    elif r["saturated"]:
        r["reason"] = f"saturated:{r['busy']:.2f}"
    else:
        r["reason"] = f"engine:{r['rolled_s']:.1f}s-rolled:{r.get('engine_cpu_s', -1):.1f}s-cpu"
    r["engine_lost"] = r["reason"].startswith("engine:")
    return r


def bisect(fx, session, preset, fmt, roll, guess, limit, log):
    """Ardour's sustained maximum to 2%: exponential steps from the guess, then bisection."""
    lo, hi = 0, None
    n = guess
    while True:
        r = trial(fx, session, n, roll, preset, fmt)
        log(n, r)
        if r["pass"]:
            lo = n
            if hi is None:
                if n >= limit:
                    return lo, hi
                n = min(limit, math.ceil(n * 1.15))
                continue
        else:
            hi = n
            if lo == 0:
                n = max(1, math.floor(n / 1.15))
                continue
        if hi - lo <= max(1, math.floor(lo * 0.02)):
            return lo, hi
        n = (lo + hi) // 2


def trackbench_detail(fx, args, ok=(0,)):
    """Runs trackbench ARGS inside the fixture's group (its store in the fixture's directory) and
    returns its first section's detail; exits where its code is not in `ok`."""
    out = fx.run(
        [os.environ.get("TRACKBENCH_BIN", f"{ROOT}/target/release/trackbench"), *args,
         "--json", "-", "-q", "--no-store"],
        env=dict(os.environ, XDG_DATA_HOME=os.path.join(fx.work, "xdg")),
    )
    if out.returncode not in ok:
        sys.exit(f"trackbench failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)["sections"][0]["detail"]


def trackbench(fx, preset, fmt):
    """The profile's answer: `play --find-max --profile ardour-<preset>` on the fixture."""
    d = trackbench_detail(fx, ["play", fx.mnt, "--find-max", "--profile", f"ardour-{preset.lower()}",
                               "--format", FORMATS[fmt][0]])
    probes = d["searches"][0]["capacity"]["probes"]
    def why(p):
        s = p.get("shortcoming")
        return f" ({s['kind']})" if s and p["verdict"] != "pass" else ""

    trail = ", ".join(
        f"{'confirm ' if p['confirmation'] else ''}{p['count']} {p['verdict']}{why(p)}" for p in probes
    )
    limit = d["searches"][0].get("limited_by")
    print(f"<!-- trackbench {fmt} {preset}: {trail}; {sum(p['elapsed_s'] for p in probes):.0f} s"
          f"{f'; stopped at a limit: {limit}' if limit else ''} -->", flush=True)
    return d["searches"][0]["play_tracks"]


def trackbench_run(fx, preset, fmt, tracks, roll, k):
    """One run of the profile at `tracks` tracks for `roll` seconds, from a cold start as Ardour's
    trials are (trackbench drops its own files from the page cache before it locates), printed as
    a comment line of the same shape as Ardour's."""
    # The device's counters, sampled beside the run: what it served in the roll's second half,
    # as Ardour's trials report it (the run's end is the last sample whose reads moved).
    samples, stop = [], threading.Event()

    def sample():
        while not stop.is_set():
            f = open(fx.stat()).read().split()
            samples.append((time.monotonic(), int(f[0]), int(f[2]) * 512))
            stop.wait(0.25)

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        d = trackbench_detail(fx, ["play", fx.mnt, "--tracks", str(tracks), "--profile", f"ardour-{preset.lower()}",
                                   "--format", FORMATS[fmt][0], "--duration", f"{roll}s"], ok=(0, 1, 2))
    finally:
        stop.set()
        sampler.join()
    busy = "-"
    moved = [i for i in range(1, len(samples)) if samples[i][1] > samples[i - 1][1]]
    if moved and d.get("ran_ms"):
        end = samples[moved[-1]]
        start = [s for s in samples if s[0] <= end[0] - d["ran_ms"] / 2000]
        if start:
            s0 = start[-1]
            dt = end[0] - s0[0]
            ios, b = (end[1] - s0[1]) / dt, (end[2] - s0[2]) / dt
            busy = f"{fx.busy(ios, b):.3f} of its cap ({ios:.1f} I/Os a second of {b / max(ios, 1e-9) / 1e3:.0f} KB)"
    first = d.get("first_xrun_ms")
    sustain = d.get("sustain") or {}
    print(f"<!-- trackbench {fmt} {preset} #{k + 1}: {tracks} tracks {d['verdict']} (underruns "
          f"{d.get('underruns')}, first at {'-' if first is None else round(first / 1000, 2)} s; worst ring "
          f"{d.get('worst_headroom_pct')}%; device busy {busy} in the run's second half; butler idle "
          f"{d.get('butler_idle_pct')}%; sustain {json.dumps(sustain)[:200]}; locate {d.get('locate_ms')} ms) -->",
          flush=True)


def check(args):
    """The project's test of a profile against Ardour (tests/suite/ardour.rs): trackbench's prediction
    P for one preset and format, then Ardour itself playing P tracks on the same fixture until it
    has passed twice or failed twice (its own trials are noisy: a count it holds can fail once in
    its first refill pass, when every track asks at once; a roll its engine lost to the CPU is not
    counted either way and is repeated, five rolls at most), and once at the cap's bound
    (cap / bytes per second of a track, or 2P under an IOPS cap; a 30 s roll), which it must
    not hold: the fixture binds Ardour, so P passing says something. With --hold-share H and
    --fail-share F, Ardour plays floor(H x P) tracks instead of P and ceil(F x P) instead of the
    bound: the prediction is then checked from both sides, near Ardour's own maximum (within
    1/F to 1/H of it, allowing for Ardour's spread from one trial to the next). Ardour records
    the session while the profile searches (beside the fixture, then copied onto it). Prints
    one line: `check preset=… format=… predicted=P hold_tracks=… ardour_passed=K ardour_failed=F
    trials=M dropouts=… hold_reasons=… fail_tracks=… fail_passed=0|1 fail_reason=…
    fail_dropouts=… fail_first_dropout_s=… seconds=…` (a reason: pass, dropouts:N,
    saturated:BUSY, or engine:… where Ardour's engine fell behind real time),
    and its stages' times on stderr."""
    preset, fmt = args.presets.split(",")[0], args.formats.split(",")[0]
    rate = FORMATS[fmt][1]
    secs = args.roll + 20 + 15
    fx = None
    try:
        # Sized for a session of the cap's bound (or of 300 tracks under an IOPS cap).
        most = math.ceil(args.cap_bps / rate) if args.cap_bps else 300
        fx = Capped(max(4, math.ceil(most * secs * rate * 1.3 / 2**30) + 2),
                    read_bps=args.cap_bps, read_iops=args.cap_iops, read_ahead_kb=args.read_ahead_kb)
        # Ardour records the session (in real time) while the profile searches the capped
        # device: on the root filesystem beside the fixture, not on the fixture, whose reads the
        # search is measuring; then the session moves onto the fixture, written back to the
        # device so that each trial can evict it from the page cache and start cold.
        start = time.monotonic()
        bound = math.ceil(args.cap_bps / rate) if args.cap_bps else None
        staging = os.path.join(fx.work, "staging", "session")
        os.makedirs(os.path.dirname(staging))
        n_rec = bound or 300
        recording = start_recording(fx, staging, n_rec, secs, fmt)
        try:
            predicted = trackbench(fx, preset, fmt)
        finally:
            recorded = finish_recording(recording, secs)
        searched = time.monotonic() - start
        if bound is None:
            bound = 2 * predicted
        hold = max(1, math.floor(args.hold_share * predicted))
        fail = math.ceil(args.fail_share * predicted) if args.fail_share else bound
        if max(hold, fail) > n_rec:
            sys.exit(f"{recorded}, fewer than the {max(hold, fail)} tracks the check needs")
        session = os.path.join(fx.mnt, "session")
        shutil.copytree(staging, session)
        shutil.rmtree(os.path.dirname(staging))
        os.sync()
        print(f"# searched and recorded in {searched:.0f} s, session on the fixture after "
              f"{time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        # Twice out of three judged trials; a trial Ardour's engine lost (the roll behind the
        # wall clock with no dropout and the device not saturated: the CPU, not the disk) is not
        # judged and is repeated, up to five rolls in all.
        passed, failed, trials, dropouts, reasons = 0, 0, 0, [], []
        while passed < 2 and failed < 2 and trials < 5:
            r = trial(fx, session, hold, args.roll, preset, fmt)
            trials += 1
            passed += r["pass"]
            failed += not r["pass"] and not r["engine_lost"]
            dropouts.append(str(int(r["dropouts"])))
            reasons.append(r["reason"])
            print(f"# trial {trials} at {hold} tracks: {r['reason']}, "
                  f"{time.monotonic() - start:.0f} s in", file=sys.stderr, flush=True)
        # Above what it holds, Ardour drops out in the first refill pass (10.7 s into the
        # roll for Medium, 21.7 s for Large) or keeps the device saturated: a roll past the
        # first refill pass and long enough to judge its second half shows either.
        # A roll the engine lost is no evidence the device binds either: repeated, three at most.
        for _ in range(3):
            above = trial(fx, session, fail, min(args.roll, 30 if preset != "Large" else 60), preset, fmt)
            print(f"# at {fail} tracks: {above['reason']}, {time.monotonic() - start:.0f} s in",
                  file=sys.stderr, flush=True)
            if not above["engine_lost"]:
                break
        print(f"check preset={preset} format={fmt} predicted={predicted} hold_tracks={hold} "
              f"ardour_passed={passed} ardour_failed={failed} trials={trials} dropouts={','.join(dropouts)} "
              f"hold_reasons={','.join(reasons)} fail_tracks={fail} "
              f"fail_passed={int(above['pass'])} fail_reason={above['reason']} fail_dropouts={int(above['dropouts'])} "
              f"fail_first_dropout_s={above['first_dropout_s']} seconds={time.monotonic() - start:.0f}",
              flush=True)
    finally:
        if fx:
            fx.close()


def record_check(args):
    """The record side: on a fixture whose *writes* the kernel caps (--cap-bps), Ardour records N
    tracks for --roll seconds with each preset (a track lost samples where its file is shorter
    than the transport ran: Ardour drops a period its capture buffer cannot take), and
    `trackbench record --tracks N --profile ardour-<preset>` runs as long on the same fixture, with
    the default engine (direct writes) beside it. Prints one table row per count and preset."""
    import wave
    cap = args.cap_bps
    bound = cap / FORMATS["int24"][1]
    print(f"# recording on a device whose writes are capped at {cap} B/s (bound {bound:.1f} tracks of 24-bit), "
          f"{args.roll} s takes")
    print("| tracks | preset | Ardour: tracks that lost samples | profile | default engine (direct writes) |")
    print("| --- | --- | --- | --- | --- |", flush=True)

    def tb_record(fx, n, profile):
        extra = ["--profile", profile] if profile else []
        d = trackbench_detail(fx, ["record", fx.mnt, "--tracks", str(n), "--duration", f"{args.roll}s",
                                   "--format", FORMATS["int24"][0], *extra], ok=(0, 1))
        return f"{d['verdict']} ({d['overruns']} overruns)"

    for n in map(int, args.record_at.split(",")):
        for preset in args.presets.split(","):
            size = max(4, math.ceil(n * (args.roll + 10) * FORMATS["int24"][1] * 2.5 / 2**30) + 2)
            fx = Capped(size, write_bps=cap)
            try:
                session = os.path.join(fx.mnt, "session")
                out = fx.run([LUASESSION, f"{HERE}/ardour/record.lua", session, str(n), str(args.roll),
                              "int24", preset], env=ardour_env(fx.work), timeout=args.roll + 300)
                m = re.search(r"^recorded\s+(\d+)\s+tracks of\s+([\d.]+)\s+s", out.stdout, re.M)
                if out.returncode != 0 or not m:
                    sys.exit(f"Ardour did not record:\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}")
                rolled = float(m.group(2))
                files = glob.glob(os.path.join(session, "interchange", "*", "audiofiles", "*.wav"))
                short = 0
                for f in files:
                    with wave.open(f) as w:
                        short += w.getnframes() < round(rolled * 48000) - 1024
                shutil.rmtree(session)
                os.sync()
                ardour = f"{short} of {len(files)} ({rolled:.1f} s rolled)"
                profile = tb_record(fx, n, f"ardour-{preset.lower()}")
                default = tb_record(fx, n, None)
            finally:
                fx.close()
            print(f"| {n} | {preset} | {ardour} | {profile} | {default} |", flush=True)


def main():
    # A kill (or the test's timeout) cleans up as an exception does.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cap-bps", type=int, default=None)
    ap.add_argument("--cap-iops", type=int, default=None)
    ap.add_argument("--presets", default="Small,Medium,Large")
    ap.add_argument("--formats", default="int24,float")
    ap.add_argument("--roll", type=int, default=60)
    ap.add_argument("--read-ahead-kb", type=int, default=None,
                    help="the loop device's read-ahead (default: the kernel's, 2560 KiB on this VM)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--guess", type=int, default=None,
                    help="where Ardour's search starts (default: 0.3 x the bound, or 45)")
    ap.add_argument("--check", action="store_true",
                    help="the test's check: the first preset and format's prediction, and Ardour playing it")
    ap.add_argument("--hold-share", type=float, default=1.0,
                    help="--check: Ardour must hold this share of the prediction (default 1)")
    ap.add_argument("--fail-share", type=float, default=None,
                    help="--check: Ardour must not hold this multiple of the prediction (default: the cap's bound)")
    ap.add_argument("--at", default=None,
                    help="single trials at these track counts (comma-separated) instead of a search")
    ap.add_argument("--tb-at", default=None,
                    help="single runs of the profile at these track counts (comma-separated, --repeat "
                         "times each, --roll seconds long) instead of its search; with --no-ardour")
    ap.add_argument("--no-trackbench", action="store_true",
                    help="Ardour's maxima only (the profiles' answers come from another run)")
    ap.add_argument("--no-ardour", action="store_true",
                    help="the profiles' answers only, on a fixture of the same cap")
    ap.add_argument("--record-at", default=None,
                    help="the record side instead: Ardour and the profile recording these track counts "
                         "(comma-separated) on a device whose writes are capped at --cap-bps")
    ap.add_argument("--record-tracks", type=int, default=None,
                    help="tracks Ardour records (default: 1.5 x the bound of a bandwidth cap)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: the fixture needs a loop device, a mount and a blkio group")
    if not os.path.exists(LUASESSION):
        sys.exit(f"{LUASESSION} is missing: apt-get install -y ardour")
    if not args.cap_bps and not args.cap_iops:
        args.cap_bps = 21000000
    if args.check:
        return check(args)
    if args.record_at:
        return record_check(args)
    cap = f"{args.cap_bps} B/s" if args.cap_bps else f"{args.cap_iops} IOPS"
    print(f"# Ardour 7 against trackbench's ardour-* profiles, reads capped at {cap}, roll {args.roll} s")
    print("| format | preset | Ardour's max (each repeat) | trackbench | ratio |")
    print("| --- | --- | --- | --- | --- |", flush=True)
    for fmt in args.formats.split(","):
        rate = FORMATS[fmt][1]
        bound = args.cap_bps / rate if args.cap_bps else None
        n_rec = args.record_tracks or math.ceil(1.5 * (bound or 150))
        secs = args.roll + 20 + 15
        # Room for the recording, and for the profile's search beside it: its test files may
        # take half of the free space, and a confirmation at n_rec tracks plays about two
        # minutes after each ring (the image is sparse: only what is written takes space).
        size = max(4, math.ceil((n_rec * secs * rate * 1.3 + 2 * n_rec * 150 * rate) / 2**30) + 2)
        fx = Capped(size, read_bps=args.cap_bps, read_iops=args.cap_iops, read_ahead_kb=args.read_ahead_kb)
        try:
            session = os.path.join(fx.mnt, "session")
            if args.no_ardour:
                for preset in args.presets.split(","):
                    if args.tb_at:
                        for k in range(args.repeat):
                            for n in map(int, args.tb_at.split(",")):
                                trackbench_run(fx, preset, fmt, n, args.roll, k)
                        continue
                    print(f"| {fmt} | {preset} | - | {trackbench(fx, preset, fmt)} | - |", flush=True)
                continue
            print(f"<!-- {fmt}: {record(fx, session, n_rec, secs, fmt)} -->", flush=True)
            for preset in args.presets.split(","):
                guess = args.guess or math.ceil(0.3 * (bound or 150))
                found = []
                for k in range(args.repeat):
                    def log(n, r):
                        print(f"<!-- {fmt} {preset} #{k + 1}: {n} tracks {'pass' if r['pass'] else 'FAIL'} "
                              f"(dropouts {int(r['dropouts'])} on {int(r['tracks_hit'])} tracks, first at "
                              f"{r['first_dropout_s']} s; read {r['read_mb_per_s']} MB/s, {r['late_read_share']:.3f} of the "
                              f"demand in the roll's second half; device busy {'-' if r['busy'] is None else round(r['busy'], 3)} of its cap"
                              f"{', saturated' if r['saturated'] else ''}; butler {r.get('butler_cpu_s', -1)} s on a CPU, "
                              f"{r.get('butler_runqueue_s', -1)} s waiting for one, audio thread "
                              f"{r.get('engine_cpu_s', -1)} s; fill {int(r['fill_s'])} s) -->",
                              flush=True)
                    if args.at:
                        for n in map(int, args.at.split(",")):
                            log(n, trial(fx, session, n, args.roll, preset, fmt))
                        continue
                    lo, hi = bisect(fx, session, preset, fmt, args.roll, guess, n_rec, log)
                    found.append(lo)
                    guess = lo
                if args.at:
                    continue
                best = sorted(found)[len(found) // 2]
                predicted = "-" if args.no_trackbench else trackbench(fx, preset, fmt)
                ratio = "-" if args.no_trackbench else f"{predicted / best:.3f}"
                print(f"| {fmt} | {preset} | {', '.join(map(str, found))} | {predicted} | {ratio} |",
                      flush=True)
        finally:
            fx.close()


if __name__ == "__main__":
    main()
