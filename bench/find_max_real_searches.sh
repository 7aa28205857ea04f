#!/bin/bash
# The suite's find_max_real searches (tests/suite/find_max_real.rs), all at once, beside a fio
# hog that reads and writes 256 KiB O_DIRECT at 8 in flight in two jobs (what the rest of the
# suite does to the disk), for ROUNDS rounds alternating binaries A and B: how often a search's
# probe comes out `draining`, and a search finds nothing, under load.
#   bench/find_max_real_searches.sh OLD_TRACKBENCH NEW_TRACKBENCH [ROUNDS] [DIR]
# Prints per round and binary: searches, those that found nothing, draining probes, and the
# probes' shortcomings. Removes its files; keeps the JSON documents under DIR/rN-{a,b}.
set -euo pipefail
A=$(realpath "$1"); B=$(realpath "$2"); ROUNDS=${3:-3}; DIR=${4:-$(mktemp -d)}
command -v fio >/dev/null || { echo "fio is needed (apt-get install -y fio)" >&2; exit 1; }
round() { # binary out
  local bin=$1 out=$2 i=0 pids=(); mkdir -p "$out"; export XDG_DATA_HOME=$out/xdg
  run() { local max=$1; shift; i=$((i+1)); local d; d=$(mktemp -d "$DIR/d.XXXX")
    ( "$bin" "$@" "$d" --find-max --buffer 2s --chunk 16K --max-tracks "$max" \
        --json "$out/j$i.json" -q >"$out/o$i.txt" 2>&1 || echo "failed: $*" >>"$out/o$i.txt"; rm -rf "$d" ) &
    pids+=($!); }
  run 8 record; run 8 record --butler parallel:4; run 8 record --prealloc
  run 8 hdr; run 8 hdr --butler parallel:4 --stagger
  for p in trackbench ardour-small ardour-medium ardour-large cubase-vst protools; do
    run 6 play --profile $p; run 6 record --profile $p; done
  run 10 play; run 10 play --butler parallel:4; run 10 play --stagger
  run 10 play --compare-parallel 4
  wait "${pids[@]}"   # the searches, not the hog
}
for r in $(seq "$ROUNDS"); do
  for ab in a b; do
    bin=$A; [ $ab = b ] && bin=$B
    fio --name=hog --directory="$DIR" --rw=randrw --bs=256k --size=512m --direct=1 --iodepth=8 \
      --ioengine=io_uring --numjobs=2 --time_based --runtime=900 >"$DIR/hog-r$r-$ab.txt" 2>&1 &
    hog=$!
    round "$bin" "$DIR/r$r-$ab"
    kill -INT $hog; wait $hog || true
    rm -f "$DIR"/hog.*
    python3 - "$DIR/r$r-$ab" "$DIR/hog-r$r-$ab.txt" <<'PY'
import json, glob, sys, re, collections
d, hog = sys.argv[1], sys.argv[2]
kinds = collections.Counter(); n = nothing = 0
for f in glob.glob(d + '/j*.json'):
    for s in json.load(open(f))['sections'][0]['detail']['searches']:
        n += 1; nothing += s['capacity']['answer'] == 0
        for p in s['capacity']['probes']:
            kinds[(p.get('shortcoming') or {}).get('kind', 'pass')] += 1
bw = re.search(r'READ: bw=(\S+)', open(hog).read())
print(f"{d}: {n} searches, {nothing} found nothing, probes {dict(kinds)}, hog read {bw.group(1) if bw else '?'}")
PY
  done
done
