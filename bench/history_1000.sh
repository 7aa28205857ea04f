#!/usr/bin/env bash
# How long a disk's history of 1,000 stored results takes to analyse: 1,000 real `seq` runs on one
# folder (tmpfs, so that they take seconds, not minutes) kept in a store of their own, then
# `history --limit 0` (every series and its steps), `report` of the newest (its series charted, the
# last 100 runs of each) and
# the store's own listing without the series (`history --limit 1`), each timed 7 times; medians,
# beside sqlite3 reading the same documents (the floor any analysis of them starts from).
# Usage: bench/history_1000.sh [TRACKBENCH]   (default: target/release/trackbench)
set -euo pipefail
tb=${1:-target/release/trackbench}
work=$(mktemp -d)
dir=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$work" "$dir"' EXIT
db="$work/store.sqlite"
start=$(date +%s.%N)
for i in $(seq 1000); do
  "$tb" seq "$dir" --size 1M -q --no-report --db "$db" >/dev/null 2>&1
done
echo "1000 runs stored in $(echo "$(date +%s.%N) - $start" | bc) s"
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
timed() {
  for r in 1 2 3 4 5 6 7; do
    s=$(date +%s%N); "$@" >/dev/null; e=$(date +%s%N)
    echo $(( (e - s) / 1000000 ))
  done | median
}
echo "history --limit 0 (1000 results, series and steps): $(timed "$tb" history --limit 0 --db "$db") ms"
echo "history --limit 1 (the listing alone, one row):      $(timed "$tb" history --limit 1 --db "$db") ms"
echo "report 1000 (its series charted):                  $(timed "$tb" report 1000 --db "$db" -o "$work/r.html") ms"
# The reference: sqlite3 reading the same 1000 documents out of the same file, nothing parsed.
if command -v sqlite3 >/dev/null; then
  echo "sqlite3: SELECT document FROM results (reference): $(timed sqlite3 "$db" 'SELECT document FROM results') ms"
fi
echo "listed: $("$tb" history --limit 0 --db "$db" | grep -o '[0-9]* result(s)')"
echo "series in the report: $(grep -o 'data-chart="over-time"' "$work/r.html" | wc -l), each charting its last $(grep -o '[0-9]* runs from' "$work/r.html" | head -1)"
