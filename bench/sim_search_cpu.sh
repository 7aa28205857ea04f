#!/usr/bin/env bash
# The CPU a simulated search costs (the butler's planning, not the device, is what a model's run
# computes): two builds alternated on the same commands, user CPU seconds and the answers.
#   bash bench/sim_search_cpu.sh OLD_BINARY NEW_BINARY [ROUNDS]
set -euo pipefail
old=$1 new=$2 rounds=${3:-2}
cmds=(
  "hdr --device-model sata-ssd --find-max"
  "play --device-model sata-ssd --find-max"
  "record --device-model hdd-7200 --find-max"
)
for ((r = 1; r <= rounds; r++)); do
  for c in "${cmds[@]}"; do
    for b in old new; do
      bin=$old; [ $b = new ] && bin=$new
      d=$(mktemp -d)
      # shellcheck disable=SC2086
      /usr/bin/time -o "$d.time" -f "%U" "$bin" $c "$d" --no-store -q --json "$d.json" >/dev/null 2>&1
      t=$(tail -1 "$d.time")
      ans=$(python3 -c "
import json,sys
d=json.load(open('$d.json'))
print(','.join(str(s['capacity']['answer'])+'/'+str(len(s['capacity']['probes'])) for s in d['sections'][0]['detail']['searches']))")
      echo "round $r | $c | $b | user ${t} s | answers/probes $ans"
      rm -rf "$d" "$d.json" "$d.time"
    done
  done
done
