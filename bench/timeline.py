#!/usr/bin/env python3
"""Where a command's time goes, by its progress bars: runs it on a pseudo-terminal (so that
trackbench draws its progress on stderr as it does for a user) and prints, with the seconds since
the start, every line whose text changed apart from its numbers and bar, then when it exited.

Usage: python3 bench/timeline.py [--all] -- COMMAND [ARGS...]
       python3 bench/timeline.py -- target/release/trackbench play "$(mktemp -d)" --find-max --no-store

Each phase shows once, at its start: "laying out 5634 files", "locate (prefilling rings)",
"streaming", the result's lines, and EXIT (the files' cleanup runs after the result is printed).
With --all every redraw is printed.
"""
import os, pty, re, sys, time


def main():
    args = sys.argv[1:]
    every = False
    if args and args[0] == "--all":
        every, args = True, args[1:]
    if args and args[0] == "--":
        args = args[1:]
    if not args:
        sys.exit(__doc__)
    t0 = time.monotonic()
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execvp(args[0], args)
        finally:
            os._exit(127)
    buf, last = b"", None
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        buf += data
        parts = re.split(rb"[\r\n]", buf)
        buf = parts[-1]
        for p in parts[:-1]:
            line = re.sub(rb"\x1b\[[0-9;?]*[A-Za-z]", b"", p).decode(errors="replace").strip()
            key = re.sub(r"\[[=> ]*\]", "[]", re.sub(r"[\d.:]+", "#", line))
            if line and (every or key != last):
                print(f"{time.monotonic() - t0:8.2f}  {line}", flush=True)
                last = key
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    print(f"{time.monotonic() - t0:8.2f}  EXIT {code}")
    sys.exit(code)


if __name__ == "__main__":
    main()
