#!/usr/bin/env bash
# Checks the release packages the way their users meet them (run as root, after release.sh):
# the checksums hold; the .deb installs with dpkg, puts the binary, manual pages and completions
# where Debian expects them, runs `trackbench run` on a temporary folder and removes cleanly;
# the Linux binary runs in a root that holds nothing but it; the Windows .exe answers --help and
# measures under wine; the completions load in bash and complete.
#
#   bash packaging/check.sh [OUT]        (default OUT: target/release-packages)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(cd "${1:-target/release-packages}" && pwd)
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
commit=$(git rev-parse --short=12 HEAD)
work=$(mktemp -d)
trap 'umount "$work/root" 2>/dev/null || true; rm -rf "$work"' EXIT
fail() { echo "packaging check failed: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "checksums"
(cd "$out" && sha256sum -c SHA256SUMS)

step "the Linux archive: a static binary, and what it carries"
linux="trackbench-$version-x86_64-unknown-linux-musl"
tar -C "$work" -xzf "$out/$linux.tar.gz"
for f in trackbench README.md LICENSE-MIT LICENSE-APACHE man/trackbench.1 man/trackbench-watch.1 \
  complete/trackbench.bash complete/_trackbench complete/trackbench.fish complete/_trackbench.ps1; do
  [ -s "$work/$linux/$f" ] || fail "$linux.tar.gz lacks $f"
done
file "$work/$linux/trackbench" | grep -Eq "static(-pie|ally) linked" || fail "the Linux binary is not static: $(file "$work/$linux/trackbench")"
"$work/$linux/trackbench" --version | grep -qx "trackbench $version (commit $commit)" \
  || fail "--version says: $("$work/$linux/trackbench" --version)"

step "the Linux binary in a root that holds nothing but it (a mount namespace of its own)"
mkdir -p "$work/root"
# A fresh tmpfs as the whole root: no /lib, no /etc, no /proc, no /dev; a folder to measure.
unshare --mount --propagation private sh -ec '
  mount -t tmpfs -o size=256m none "$1/root"
  cp "$1/'"$linux"'/trackbench" "$1/root/trackbench"
  mkdir "$1/root/data"
  chroot "$1/root" /trackbench --version
  chroot "$1/root" /trackbench seq /data --size 8M --no-store --no-report -q > "$1/seq.txt"
  [ -z "$(ls -A "$1/root/data")" ] || { echo "left data behind" >&2; exit 1; }
' sh "$work"
grep -q "MB/s" "$work/seq.txt" || fail "no measurement in an empty root: $(cat "$work/seq.txt")"
# Without /proc the root's tmpfs is still known for what it is: its figures are labelled cached.
grep -q "tmpfs keeps files in memory" "$work/seq.txt" || fail "the empty root's tmpfs is not labelled: $(cat "$work/seq.txt")"

step "the .deb installs, runs the suite, and removes cleanly"
deb="$out/trackbench_${version}_amd64.deb"
if dpkg -s trackbench >/dev/null 2>&1; then fail "trackbench is already installed here"; fi
dpkg -i "$deb"
for f in /usr/bin/trackbench /usr/share/man/man1/trackbench.1.gz /usr/share/man/man1/trackbench-run.1.gz \
  /usr/share/bash-completion/completions/trackbench /usr/share/zsh/vendor-completions/_trackbench \
  /usr/share/fish/vendor_completions.d/trackbench.fish /usr/share/doc/trackbench/copyright; do
  [ -s "$f" ] || fail "the .deb did not install $f"
done
[ "$(command -v trackbench)" = /usr/bin/trackbench ] || fail "trackbench is not /usr/bin/trackbench on PATH"
if command -v man >/dev/null; then
  man -P cat trackbench 2>/dev/null | grep -q "how many tracks and voices" || fail "man trackbench shows no page"
fi
folder=$(mktemp -d)
XDG_DATA_HOME="$work/store" trackbench run "$folder" --no-report | tee "$work/run.txt"
grep -q "tracks" "$work/run.txt" || fail "trackbench run said no tracks"
[ -z "$(ls -A "$folder")" ] || fail "trackbench run left files in $folder"
rmdir "$folder"
dpkg -r trackbench
for f in /usr/bin/trackbench /usr/share/man/man1/trackbench.1.gz /usr/share/bash-completion/completions/trackbench; do
  [ ! -e "$f" ] || fail "dpkg -r left $f"
done
dpkg -s trackbench >/dev/null 2>&1 && fail "dpkg still lists trackbench"
[ -z "$(dpkg -L trackbench 2>/dev/null)" ] || fail "dpkg still lists files of trackbench"

step "the completions load in bash and complete"
bash -c '
  source "$1"
  COMP_WORDS=(trackbench wat); COMP_CWORD=1; COMP_LINE="trackbench wat"; COMP_POINT=${#COMP_LINE}
  _trackbench trackbench wat trackbench
  printf "%s\n" "${COMPREPLY[@]}"
' bash "$work/$linux/complete/trackbench.bash" | grep -qx watch || fail "bash does not complete 'trackbench wat' to watch"

step "the Windows archive: the .exe under wine"
win="trackbench-$version-x86_64-pc-windows-gnu"
python3 -m zipfile -e "$out/$win.zip" "$work"
for f in trackbench.exe README.md LICENSE-MIT LICENSE-APACHE man/trackbench.1 complete/_trackbench.ps1; do
  [ -s "$work/$win/$f" ] || fail "$win.zip lacks $f"
done
# wine 8.0 lacks bcryptprimitives' ProcessPrng, which Rust's standard library calls at start-up
# (Windows 10 and later have it): the tests' shim stands in for it here, beside the unpacked
# .exe, never in the package (tests/suite/windows.rs says more).
x86_64-w64-mingw32-gcc -shared -O2 -o "$work/$win/bcryptprimitives.dll" tests/windows/processprng.c -ladvapi32
export WINEDEBUG=-all WINEPREFIX="$work/wine" WINEDLLOVERRIDES="mscoree,mshtml=;bcryptprimitives=n"
wine "$work/$win/trackbench.exe" --version | tr -d '\r' | grep -qx "trackbench $version (commit $commit)" \
  || fail "the .exe's --version: $(wine "$work/$win/trackbench.exe" --version 2>&1)"
# A new prefix goes on being set up after its first start returns: wait for it.
timeout 120 wineserver -w || true
wine "$work/$win/trackbench.exe" --help | grep -q "tracks and voices" || fail "the .exe's --help"
mkdir -p "$work/windata"
wine "$work/$win/trackbench.exe" seq "Z:${work//\//\\}\\windata" --size 8M --no-store --no-report -q | tee "$work/win.txt"
grep -q "MB/s" "$work/win.txt" || fail "no measurement from the .exe"
[ -z "$(ls -A "$work/windata")" ] || fail "the .exe left files behind"

echo "packaging check: every package as its users meet it"
