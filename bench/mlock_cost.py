#!/usr/bin/env python3
"""What locking ring memory costs: mlockall over memory mapped and touched as a search's rings
are (1 MiB maps), locked fresh, locked again while locked, and unlocked.

Usage: python3 bench/mlock_cost.py [GIB]   (as root, or with a memlock limit that allows it)

A search's probes each locked their rings (go_realtime's mlockall) and unlocked them at the end;
under a hold (`platform::hold_memory_lock`) they stay locked and the next probe's mlockall only
walks them again (the MCL_CURRENT populate) and locks what is new.
"""
import ctypes, mmap, sys, time

MCL_CURRENT, MCL_FUTURE, MCL_ONFAULT = 1, 2, 4
libc = ctypes.CDLL(None, use_errno=True)
gib = int(sys.argv[1]) if len(sys.argv) > 1 else 4
rings = []
for _ in range(gib * 1024):
    m = mmap.mmap(-1, 1 << 20)
    m.write(b"\x01" * (1 << 20))
    rings.append(m)


def timed(what, flags=None):
    t = time.perf_counter()
    r = libc.munlockall() if flags is None else libc.mlockall(flags)
    if r != 0:
        sys.exit(f"{what}: refused (errno {ctypes.get_errno()}); run as root")
    print(f"{what:48} {time.perf_counter() - t:6.3f} s", flush=True)


print(f"{gib} GiB in 1 MiB maps, touched")
timed("mlockall(CURRENT|FUTURE), fresh (a probe before)", MCL_CURRENT | MCL_FUTURE)
timed("munlockall (a probe's end before)")
timed("mlockall(CURRENT|FUTURE), fresh again", MCL_CURRENT | MCL_FUTURE)
timed("mlockall(FUTURE|ONFAULT) (a probe's end now)", MCL_FUTURE | MCL_ONFAULT)
timed("mlockall(CURRENT|FUTURE), locked (a probe now)", MCL_CURRENT | MCL_FUTURE)
timed("munlockall (the search's end)")
