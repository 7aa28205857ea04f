#!/usr/bin/env bash
# What overlapping a fresh start's two device passes could save, by fio alone: the layout's
# writes (10,000 files of 1,576,960 bytes, O_DIRECT, 4 in flight) and the locate's reads (a
# ring's 1 MiB from each of 10,000 files written before, 32 in flight), one after the other and
# then at the same time. The gap between the two is the most a locate that followed the layout
# file by file could take off a fresh 10,000-track start (docs/lab/ten-thousand-tracks.md).
#
#   bench/overlap_vs_fio.sh [ROUNDS]
set -euo pipefail
ROUNDS=${1:-2}
W=(--nrfiles=10000 --filesize=1576960 --bs=1576960 --rw=write --direct=1 --ioengine=io_uring
   --iodepth=4 --file_service_type=sequential --openfiles=64 --create_on_open=1 --minimal)
R=(--nrfiles=10000 --filesize=1M --bs=1M --rw=read --direct=1 --ioengine=io_uring --iodepth=32
   --file_service_type=sequential --openfiles=64 --minimal)
A=$(mktemp -d) B=
trap 'rm -rf "$A" ${B:+"$B"}' EXIT
# The files the reads read, written once (the same job name: fio reads `layout.0.N`).
fio --name=layout --directory="$A" "${W[@]}" >/dev/null
now() { date +%s.%N; }
for r in $(seq 1 "$ROUNDS"); do
  B=$(mktemp -d)
  t0=$(now); fio --name=layout --directory="$B" "${W[@]}" >/dev/null
  t1=$(now); fio --name=layout --directory="$A" "${R[@]}" >/dev/null
  t2=$(now)
  rm -rf "$B"; B=$(mktemp -d)
  t3=$(now)
  fio --name=layout --directory="$B" "${W[@]}" >/dev/null &
  fio --name=layout --directory="$A" "${R[@]}" >/dev/null
  t4=$(now); wait; t5=$(now)
  rm -rf "$B"; B=
  python3 - "$r" "$t0" "$t1" "$t2" "$t3" "$t4" "$t5" <<'PY'
import sys
r, *t = sys.argv[1:]
t = [float(x) for x in t]
seq, both = t[2] - t[0], t[5] - t[3]
print(f"round {r}: one after the other {seq:.1f} s (write {t[1]-t[0]:.1f} + read {t[2]-t[1]:.1f}); "
      f"at once {both:.1f} s (read done at {t[4]-t[3]:.1f}); saved {seq-both:.1f} s")
PY
done
