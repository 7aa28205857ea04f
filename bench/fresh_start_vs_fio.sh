#!/usr/bin/env bash
# A fresh directory's 10,000-track start against what fio takes for the same I/O, alternated:
# trackbench's first tick (bench/first_tick.py) and locate_ms, then fio writing the same 10,000
# files (1,576,960 bytes each, O_DIRECT, one write a file, 4 in flight as the layout has) and
# reading a ring's worth (1 MiB) back from each, 32 in flight as the locate has. fio's two
# passes one after the other are the device's share of the start; the rest of trackbench's is
# its own (the rings touched, the files registered and flushed, the real-time thread set up).
#
#   bench/fresh_start_vs_fio.sh [TRACKBENCH] [ROUNDS]      (docs/lab/ten-thousand-tracks.md)
set -euo pipefail
TB=${1:-target/release/trackbench}
ROUNDS=${2:-2}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for r in $(seq 1 "$ROUNDS"); do
  D=$(mktemp -d)
  line=$(python3 "$here/first_tick.py" "$TB" play "$D" --tracks 10000 --duration 1s --no-store -q --json "$out/r.json")
  rm -rf "$D"
  locate=$(python3 -c "import json,sys;print(round(json.load(open(sys.argv[1]))['sections'][0]['detail']['locate_ms']/1e3,1))" "$out/r.json")
  F=$(mktemp -d)
  w0=$(date +%s.%N)
  fio --name=layout --directory="$F" --nrfiles=10000 --filesize=1576960 --bs=1576960 --rw=write \
    --direct=1 --ioengine=io_uring --iodepth=4 --file_service_type=sequential --openfiles=64 \
    --create_on_open=1 --minimal >/dev/null
  w1=$(date +%s.%N)
  # The same job name: fio reads the files the first job wrote (`layout.0.N`).
  fio --name=layout --directory="$F" --nrfiles=10000 --filesize=1M --bs=1M --rw=read --direct=1 \
    --ioengine=io_uring --iodepth=32 --file_service_type=sequential --openfiles=64 --minimal >/dev/null
  r1=$(date +%s.%N)
  bytes=$(du -sb "$F" | cut -f1)
  rm -rf "$F"
  python3 - "$r" "$line" "$locate" "$w0" "$w1" "$r1" "$bytes" <<'PY'
import re, sys
r, line, locate, w0, w1, r1, nbytes = sys.argv[1:]
tick = float(re.search(r"tick thread ([\d.]+) s", line).group(1))
w, rd = float(w1) - float(w0), float(r1) - float(w1)
print(f"round {r}: trackbench first tick {tick:.1f} s (locate {locate} s); fio write "
      f"{int(nbytes)/1e9:.2f} GB {w:.1f} s + read 10.5 GB {rd:.1f} s = {w+rd:.1f} s; "
      f"ratio {tick/(w+rd):.2f}")
PY
done
