#!/bin/bash
# The load of the suite's find_max_real::every_profile_searches_on_a_real_disk, outside the
# suite: every profile's play and record search at once (twelve, and ardour-small's play
# compared with the default engine), each on its own temporary directory under BASE, with
# --buffer BUF (the test's rings) and 16K chunks, at most 6 tracks. Prints, per search: its
# command, profile, answer, probes, seconds of probes, the counts probed and the worst headroom
# (%) of any probe. The directories are removed.
#
#   bench/searches_at_once.sh TRACKBENCH [BUF] [BASE]     e.g. target/release/trackbench 2s /tmp
set -eu
B=$(realpath "$1"); BUF=${2:-2s}; BASE=${3:-${TMPDIR:-/tmp}}
for p in trackbench ardour-small ardour-medium ardour-large protools cubase-vst; do
  for c in play record; do
    D=$(mktemp -d "$BASE/searches.XXXX")
    extra=()
    if [ "$p" = ardour-small ] && [ "$c" = play ]; then extra=(--compare-default); fi
    (
      XDG_DATA_HOME=$D/xdg "$B" "$c" "$D" --profile "$p" "${extra[@]}" --find-max \
        --buffer "$BUF" --chunk 16K --max-tracks 6 --json "$D/r.json" -q >/dev/null 2>"$D/err" \
        || { echo "$c $p failed: $(tail -1 "$D/err")"; rm -rf "$D"; exit 0; }
      python3 - "$D/r.json" "$c" "$p" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sections"]
s = s[0] if isinstance(s, list) else s
for se in s["detail"]["searches"]:
    c = se["capacity"]
    probes = c["probes"]
    print(sys.argv[2], sys.argv[3], c["answer"], len(probes),
          round(sum(p["elapsed_s"] for p in probes), 1), [p["count"] for p in probes],
          round(min(p["worst_headroom_pct"] for p in probes), 1))
PY
      rm -rf "$D"
    ) &
  done
done
wait
