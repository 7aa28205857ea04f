#!/bin/bash
# Runs one fixed-count trackbench command N times on a capped fixture built as the suite's
# (tests/suite/common/capped.rs): a 3 GiB image, `losetup --direct-io=on`, ext4, reads capped
# through a cgroup v1 blkio group. Prints each run's verdict, the rings' trend with its noise,
# the butler's idle share and why it fell short. As root; leaves nothing behind.
#
#   BASE=/dev/shm bench/capped_counts.sh RUNS [CAP_BYTES_PER_S] -- play --tracks 146 --duration 13s
#
# BASE is where the image goes (default /tmp: the disk); CAP defaults to 21000000.
set -euo pipefail
RUNS=$1; shift
CAP=21000000
if [ "${1:-}" != "--" ]; then CAP=$1; shift; fi
[ "${1:-}" = "--" ] && shift
TB=${TB:-$(dirname "$0")/../target/release/trackbench}
D=$(mktemp -d "${BASE:-/tmp}/capped-counts.XXXXXX")
G=/sys/fs/cgroup/blkio/capped-counts-$$
DEV=
cleanup() {
  mountpoint -q "$D/mnt" 2>/dev/null && umount "$D/mnt"
  [ -n "$DEV" ] && losetup -d "$DEV"
  [ -d "$G" ] && rmdir "$G"
  rm -rf "$D"
}
trap cleanup EXIT
truncate -s 3G "$D/disk.img"
DEV=$(losetup -f --show --direct-io=on "$D/disk.img")
mkfs.ext4 -q -F "$DEV"
mkdir "$D/mnt"
mount -o discard "$DEV" "$D/mnt"
mkdir "$G"
echo "$(lsblk -no MAJ:MIN "$DEV" | tr -d ' ') $CAP" > "$G/blkio.throttle.read_bps_device"
for i in $(seq 1 "$RUNS"); do
  XDG_DATA_HOME="$D/xdg" sh -c "echo \$\$ > $G/cgroup.procs && exec \"\$0\" \"\$@\"" \
    "$TB" "$@" "$D/mnt" --json "$D/run.json" -q --no-store > /dev/null
  python3 - "$D/run.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["sections"][0]["detail"]
s = d.get("sustain") or {}
print("%-9s trend %6.3f%% ± %.3f%%  idle %5.2f%%  %s" % (
    d.get("verdict"), s.get("shortfall_pct", float("nan")), s.get("noise_pct", float("nan")),
    d.get("butler_idle_pct") if d.get("butler_idle_pct") is not None else float("nan"),
    (d.get("shortcoming") or {}).get("kind", "")))
PY
done
