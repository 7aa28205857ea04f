#!/usr/bin/env bash
# The studio search against the single-host one on the NAS fixture: a loop device whose reads the
# kernel caps (cgroup v1 blkio) at CAP bytes/s, every process in one group, so the storage's total
# rate is known exactly. Runs, in one go: one computer's `play --find-max`, the same under
# `mpirun -np N` (the studio), and the `nas:` model of the same storage; prints each answer, its
# time and its probes. As root, with OpenMPI and a release build with the mpi feature:
#
#   cargo build --release --features mpi && sudo bash bench/studio.sh [CAP] [N]
#
# TRACKBENCH_BIN names another build (one with the mpi feature).
#
# Leaves nothing: the loop device, its mount and the group are removed at the end.
set -euo pipefail
cap=${1:-21000000}
np=${2:-3}
bin=${TRACKBENCH_BIN:-$(cd "$(dirname "$0")/.." && pwd)/target/release/trackbench}
work=$(mktemp -d)
export XDG_DATA_HOME=$work/xdg
truncate -s 3G "$work/disk.img"
dev=$(losetup -f --show --direct-io=on "$work/disk.img")
group=/sys/fs/cgroup/blkio/trackbench-bench-$$
cleanup() {
  umount "$work/mnt" 2>/dev/null || true
  losetup -d "$dev" 2>/dev/null || true
  rmdir "$group" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkfs.ext4 -q -F "$dev"
mkdir "$work/mnt"
mount "$dev" "$work/mnt"
mkdir "$group"
echo "$(cat "/sys/block/$(basename "$dev")/dev") $cap" > "$group/blkio.throttle.read_bps_device"

# One search in the group; prints "answer-per-workstation seconds probes".
search() {
  local json=$work/r.json start end
  start=$(date +%s.%N)
  sh -c "echo \$\$ > $group/cgroup.procs && exec \"\$@\"" sh "$@" play "$work/mnt" --find-max \
    --json "$json" -q --no-store > "$work/out.txt" 2>&1
  end=$(date +%s.%N)
  python3 - "$json" "$start" "$end" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["sections"][0]["detail"]["searches"][0]
print(s["play_tracks"], round(float(sys.argv[3]) - float(sys.argv[2]), 1), len(s["capacity"]["probes"]))
EOF
}

bound=$(python3 -c "print(round($cap / 144000, 1))")
echo "storage capped at $cap B/s: exactly $bound tracks of 48k/24/mono in all"
read -r one t1 p1 < <(search "$bin")
echo "one computer:        $one tracks                      (${t1} s, $p1 probes; $(python3 -c "print(round($one / $bound, 3))") of the bound)"
read -r each tn pn < <(search mpirun --allow-run-as-root --oversubscribe -np "$np" "$bin")
echo "studio of $np:         $np x $each = $((np * each)) tracks at once   (${tn} s, $pn probes; $(python3 -c "print(round($np * $each / $bound, 3))") of the bound)"
model=$("$bin" play --find-max --device-model "nas:bw=$cap,clients=$np" --no-store -q --json - 2>/dev/null |
  python3 -c "import json,sys; print(json.load(sys.stdin)['sections'][0]['detail']['searches'][0]['play_tracks'])")
echo "model nas:bw=$cap,clients=$np: $np x $model = $((np * model)) tracks (virtual time; real/model $(python3 -c "print(round($each / $model, 3))"))"
