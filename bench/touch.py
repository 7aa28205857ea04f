"""First touch of fresh anonymous memory (docs/lab/ten-thousand-tracks.md).

Usage: python3 bench/touch.py small|huge [GIB] [PROCS]

Each of PROCS processes (default 1) maps GIB GiB (default 4) of fresh anonymous memory, 4 KiB
pages or MADV_HUGEPAGE, and writes every byte of it once, as a run's ring touch does; prints each
process's rate and the whole touch's. Run after a minute idle to see what memory the host has
taken back costs, and right after to see memory it still backs."""
import mmap, multiprocessing, sys, time


def touch(kind, n, out):
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    if kind == 'huge':
        m.madvise(mmap.MADV_HUGEPAGE)
    t = time.time()
    z = b'\0' * (1 << 20)
    for off in range(0, n, 1 << 20):
        m[off:off + (1 << 20)] = z
    out.put(time.time() - t)


def main():
    kind = sys.argv[1]
    gib = float(sys.argv[2]) if len(sys.argv) > 2 else 4.0
    procs = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    n = int(gib * (1 << 30)) // (1 << 20) * (1 << 20)
    out = multiprocessing.Queue()
    t = time.time()
    ps = [multiprocessing.Process(target=touch, args=(kind, n, out)) for _ in range(procs)]
    for p in ps:
        p.start()
    each = [out.get() for _ in ps]
    for p in ps:
        p.join()
    whole = time.time() - t
    print(kind, f"{procs} x {gib:g} GiB:", ", ".join(f"{n / s / 1e9:.2f}" for s in each),
          f"GB/s each; all {procs * n / 1e9:.1f} GB in {whole:.1f} s")


if __name__ == '__main__':
    main()
