#!/usr/bin/env bash
# The static musl binary the release ships against the glibc build `cargo build --release`
# makes, alternating in one run: a simulated search's CPU (all computation, many allocations),
# a sequential transfer on tmpfs (memory bandwidth through the I/O path) and a template load
# with 8 threads (many opens and small reads at once: musl's allocator and its locks).
# Usage: bench/musl_vs_glibc.sh MUSL_BINARY GLIBC_BINARY [ROUNDS]
set -euo pipefail
musl=$1 glibc=$2 rounds=${3:-3}
dir=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$dir"' EXIT
cpu() { /usr/bin/time -f "%U" "$@" 2>&1 >/dev/null | tail -1; }
for r in $(seq "$rounds"); do
  for b in "$musl" "$glibc"; do
    label=$([ "$b" = "$musl" ] && echo musl || echo glibc)
    sim=$(cpu "$b" play --device-model sata-ssd --find-max --no-store --no-report -q)
    seq_mb=$("$b" seq "$dir" --size 512M --no-store --no-report -q --json - 2>/dev/null \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); r={x["label"]:x for x in d["sections"][0]["rows"]}; print(" / ".join("%.0f" % [f for f in r[k]["figures"] if f["name"]=="rate_mb_per_s"][0]["median"] for k in ("write","read")))')
    load=$("$b" load "$dir" --files 2000 --no-store --no-report -q --json - 2>/dev/null \
      | python3 -c 'import json,sys; d=json.load(sys.stdin); rows=d["sections"][0]["rows"]; print(" ".join("%s=%.3f" % (x["label"].replace(" · ","-").replace(" ",""), [f for f in x["figures"] if f["name"]=="load_s"][0]["median"]) for x in rows))')
    echo "round $r $label: simulated search ${sim} s user CPU; seq write/read ${seq_mb} MB/s; load ${load}"
  done
done
