#!/usr/bin/env python3
"""Record what a fixed set of runs on the simulated device prints and stores, or compare a new
recording against one made earlier: the proof that a change meant to move code changed nothing
a user sees.

    python3 bench/same_behaviour.py record BIN OUTDIR     # before the first move
    python3 bench/same_behaviour.py record BIN OUTDIR2    # after the last
    python3 bench/same_behaviour.py compare OUTDIR OUTDIR2

Every run is in virtual time (`--device-model`), so its figures are exact and repeat; what
still varies from one run to the next is taken out before the files are written: timestamps,
free space, wall-clock durations of the simulation itself, and the temporary folder's name.
Each case writes the terminal text (stdout and stderr, with the exit status), the result
document (JSON), and what `show`, `history` and `report` (HTML and Markdown) make of it; the
reports are rendered from the scrubbed document, since a search's report charts and tabulates
the wall-clock time each probe took.
"""

import json
import os
import re
import subprocess
import sys
import tempfile

# name, arguments after the binary ({dir} is a fresh folder, {out} the case's output folder).
CASES = [
    ("play-find-max", "play {dir} --find-max --device-model bw=200M,lat=2ms"),
    ("play-find-max-parallel", "play {dir} --find-max --compare-parallel --device-model sata-ssd --max-tracks 400"),
    ("play-tracks-hdd", "play {dir} --tracks 60 --device-model hdd-7200 --duration 40s"),
    ("play-tracks-fail", "play {dir} --tracks 2000 --device-model bw=100M,lat=1ms --duration 20s"),
    ("play-stagger", "play {dir} --tracks 200 --stagger --device-model bw=100M,lat=1ms --duration 30s"),
    ("play-ardour", "play {dir} --profile ardour-medium --find-max --compare-default --device-model bw=40M,lat=4ms"),
    ("play-protools-96k", "play {dir} --profile protools --format 96k/24/stereo --find-max --device-model hdd-5400"),
    ("play-nas", "play {dir} --find-max --device-model nas:bw=1200M,link=10Gbit,clients=24"),
    ("record-find-max", "record {dir} --find-max --device-model bw=150M,lat=1ms"),
    ("record-tracks", "record {dir} --tracks 100 --device-model hdd-7200 --duration 30s"),
    ("hdr-find-max", "hdr {dir} --find-max --device-model bw=120M,lat=2ms"),
    ("hdr-tracks", "hdr {dir} --play 40 --record 20 --device-model sata-ssd --duration 30s"),
    ("sampler-find-max", "sampler {dir} --find-max --device-model nvme --files 300 --max-voices 1500"),
    ("sampler-kontakt", "sampler {dir} --profile kontakt --voices 200 --device-model hdd-7200 --files 300"),
    ("sampler-find-max-hdd", "sampler {dir} --find-max --profile linuxsampler --device-model hdd-7200 --files 200"),
    ("play-stall", "play {dir} --tracks 100 --device-model bw=100M,lat=1ms,stall=20s+3s --duration 40s"),
    ("play-runs", "play {dir} --tracks 100 --device-model bw=100M,lat=1ms --duration 20s --runs 3"),
    ("bad-format", "play {dir} --tracks 10 --format 47k/24/mono --device-model nvme"),
    ("bad-model", "play {dir} --tracks 10 --device-model bw=fast"),
    ("bad-duration", "play {dir} --find-max --duration 1s --device-model nvme"),
]

# Keys whose values are the wall clock, the free space or the machine's momentary state, and the
# fixed value each is given so that a report rendered from the scrubbed document repeats too.
VOLATILE_KEYS = {
    "started_at": "2026-01-01T00:00:00Z",
    "finished_at": "2026-01-01T00:00:01Z",
    "free_bytes": 1000000000,
    "elapsed_s": 1.0,
}


def scrub_doc(value):
    if isinstance(value, dict):
        return {k: (VOLATILE_KEYS[k] if k in VOLATILE_KEYS else scrub_doc(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub_doc(v) for v in value]
    return value


def scrub_text(text, folders):
    text = text.replace(BINARY, "trackbench")
    for f in folders:
        text = text.replace(f, "<DIR>")
    text = re.sub(r"\d+(\.\d+)?[KMGT]? free", "<n> free", text)
    text = re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>", text)
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?( UTC)?", "<time>", text)
    text = re.sub(r"free_bytes\D{0,12}\d+", "free_bytes <n>", text)
    text = re.sub(r"\d+(\.\d+)? (GB|GiB|MB|TB) free", "<n> free", text)
    return text


BINARY = "trackbench"


def record(binary, outdir):
    global BINARY
    BINARY = binary
    os.makedirs(outdir, exist_ok=True)
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1")
    for name, args in CASES:
        with tempfile.TemporaryDirectory(prefix="tb-same-") as tmp:
            data = os.path.join(tmp, "target")
            os.mkdir(data)
            env["XDG_DATA_HOME"] = os.path.join(tmp, "xdg")
            doc = os.path.join(tmp, "result.json")
            report = os.path.join(tmp, "report.html")
            argv = [binary] + args.format(dir=data).split()
            argv += ["--json", doc, "--report", report, "-q"]
            p = subprocess.run(argv, capture_output=True, text=True, env=env)
            folders = [tmp]
            text = f"exit {p.returncode}\n--- stdout\n{p.stdout}--- stderr\n{p.stderr}"
            with open(os.path.join(outdir, name + ".txt"), "w") as f:
                f.write(scrub_text(text, folders))
            if os.path.exists(doc):
                with open(doc) as f:
                    d = scrub_doc(json.load(f))
                out = json.dumps(d, indent=1, sort_keys=True)
                with open(os.path.join(outdir, name + ".json"), "w") as f:
                    f.write(scrub_text(out, folders))
                # The reports are made from the scrubbed document, whose times are fixed.
                fixed = os.path.join(tmp, "fixed.json")
                with open(fixed, "w") as f:
                    f.write(out)
                for extra, cmd, made in [
                    ("show", ["show", "1"], None),
                    ("history", ["history"], None),
                    ("markdown", ["report", fixed, "--markdown", "-o", os.path.join(tmp, "r.md")], "r.md"),
                    ("html", ["report", fixed, "-o", os.path.join(tmp, "r.html")], "r.html"),
                ]:
                    q = subprocess.run([binary] + cmd, capture_output=True, text=True, env=env)
                    body = f"exit {q.returncode}\n{q.stdout}{q.stderr}"
                    if made and os.path.exists(os.path.join(tmp, made)):
                        body += open(os.path.join(tmp, made)).read()
                    with open(os.path.join(outdir, f"{name}.{extra}.txt"), "w") as f:
                        f.write(scrub_text(body, folders))
        print(f"{name}: exit {p.returncode}", file=sys.stderr)
    # compare of two results side by side
    with tempfile.TemporaryDirectory(prefix="tb-same-") as tmp:
        env["XDG_DATA_HOME"] = os.path.join(tmp, "xdg")
        docs = []
        for i, model in enumerate(["bw=200M,lat=2ms", "hdd-7200"]):
            d = os.path.join(tmp, f"t{i}")
            os.mkdir(d)
            doc = os.path.join(tmp, f"c{i}.json")
            subprocess.run([binary, "play", d, "--find-max", "--device-model", model, "--json", doc, "-q",
                            "--no-store"], capture_output=True, env=env, check=True)
            docs.append(doc)
        p = subprocess.run([binary, "compare", "--unfair"] + docs + ["-o", os.path.join(tmp, "c.html")],
                           capture_output=True, text=True, env=env)
        body = f"exit {p.returncode}\n{p.stdout}{p.stderr}"
        body += open(os.path.join(tmp, "c.html")).read() if os.path.exists(os.path.join(tmp, "c.html")) else ""
        with open(os.path.join(outdir, "compare.txt"), "w") as f:
            f.write(scrub_text(body, [tmp]))


def compare(a, b):
    names = sorted(set(os.listdir(a)) | set(os.listdir(b)))
    differ = 0
    for n in names:
        pa, pb = os.path.join(a, n), os.path.join(b, n)
        if not (os.path.exists(pa) and os.path.exists(pb)):
            print(f"only in one: {n}")
            differ += 1
            continue
        if open(pa).read() != open(pb).read():
            print(f"differs: {n}")
            differ += 1
    print(f"{len(names)} files, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "record":
        record(os.path.abspath(sys.argv[2]), sys.argv[3])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
