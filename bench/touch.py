"""First touch of fresh anonymous memory, 4 KiB pages against MADV_HUGEPAGE (BENCHMARKS.md,
"Starting 10,000 tracks"). Usage: python3 bench/touch.py small|huge"""
import mmap, sys, time
n = 4 << 30
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
if sys.argv[1] == 'huge':
    m.madvise(mmap.MADV_HUGEPAGE)
t = time.time()
z = b'\0' * (1 << 20)
for off in range(0, n, 1 << 20):
    m[off:off + (1 << 20)] = z
print(sys.argv[1], round(n / (time.time() - t) / 1e9, 2), 'GB/s')
