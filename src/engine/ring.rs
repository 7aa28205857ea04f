//! The single-producer / single-consumer ring of one track: aligned memory in chunk-sized slots and
//! two free-running byte counters. The real-time side never locks, allocates or blocks on it.
//!
//! A playback ring is filled by the butler (chunks read from disk straight into ring memory) and
//! drained by the audio tick (one period at a time); a capture ring the other way round. In
//! simulation the ring keeps only its counters (no memory), so the same accounting runs for
//! thousands of simulated tracks.

use crate::io::AlignedBuf;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

pub struct Ring {
    mem: Option<UnsafeCell<AlignedBuf>>,
    capacity: u64,
    chunk: u64,
    /// Bytes ever produced (written by the producer only).
    head: AtomicU64,
    /// Bytes ever consumed (written by the consumer only).
    tail: AtomicU64,
}

// SAFETY: the producer only writes ring memory in [head, tail + capacity) and the consumer only reads
// [tail, head); each counter has one writer and is published with release / read with acquire, so
// the two sides never touch the same bytes at the same time.
unsafe impl Sync for Ring {}
unsafe impl Send for Ring {}

impl Ring {
    /// A ring holding `capacity_bytes` rounded up to whole chunks, and never fewer than two chunks.
    /// `chunk` must be a multiple of 4096 (O_DIRECT). Without `with_memory` only counters are kept.
    pub fn new(capacity_bytes: u64, chunk: u64, with_memory: bool) -> Ring {
        assert!(
            chunk > 0 && chunk.is_multiple_of(4096),
            "ring chunk {chunk} must be a multiple of 4096"
        );
        let capacity = Self::slots(capacity_bytes, chunk) * chunk;
        let mem = with_memory.then(|| AlignedBuf::new(capacity as usize));
        Self::with(mem, capacity, chunk)
    }

    /// A ring like `new(capacity_bytes, chunk, true)` whose memory comes from `memory` (reused
    /// from an earlier run when it has some of the right size). Give it back with `into_memory`.
    pub fn from_memory(
        capacity_bytes: u64,
        chunk: u64,
        memory: &mut RingMemory,
    ) -> crate::error::Result<Ring> {
        assert!(
            chunk > 0 && chunk.is_multiple_of(4096),
            "ring chunk {chunk} must be a multiple of 4096"
        );
        let capacity = Self::slots(capacity_bytes, chunk) * chunk;
        Ok(Self::with(
            Some(memory.take(capacity as usize)?),
            capacity,
            chunk,
        ))
    }

    /// A ring like `from_memory` on the buffer `buf`, which must hold the ring's capacity.
    pub fn from_buf(capacity_bytes: u64, chunk: u64, buf: AlignedBuf) -> Ring {
        assert!(
            chunk > 0 && chunk.is_multiple_of(4096),
            "ring chunk {chunk} must be a multiple of 4096"
        );
        let capacity = Self::slots(capacity_bytes, chunk) * chunk;
        assert!(
            buf.len() as u64 >= capacity,
            "a ring of {capacity} bytes given {} bytes of memory",
            buf.len()
        );
        Self::with(Some(buf), capacity, chunk)
    }

    /// The ring's memory, for the next run's rings.
    pub fn into_memory(self) -> Option<AlignedBuf> {
        self.mem.map(UnsafeCell::into_inner)
    }

    /// The bytes a ring asked for `capacity_bytes` with chunks of `chunk` holds.
    pub fn capacity_for_bytes(capacity_bytes: u64, chunk: u64) -> u64 {
        Self::slots(capacity_bytes, chunk) * chunk
    }

    fn slots(capacity_bytes: u64, chunk: u64) -> u64 {
        capacity_bytes.div_ceil(chunk).max(2)
    }

    fn with(mem: Option<AlignedBuf>, capacity: u64, chunk: u64) -> Ring {
        Ring {
            mem: mem.map(UnsafeCell::new),
            capacity,
            chunk,
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
        }
    }

    /// The bytes a ring of `seconds` at `bytes_per_second` holds with chunks of `chunk`: whole
    /// chunks, and never fewer than `min_chunks` (at least two: one being read while one plays).
    pub fn capacity_for(seconds: f64, bytes_per_second: u64, chunk: u64, min_chunks: u64) -> u64 {
        let want = (seconds * bytes_per_second as f64).ceil() as u64;
        want.div_ceil(chunk).max(min_chunks.max(2)) * chunk
    }

    /// The frames a ring of `frames` holds when it is the power of two at or above `frames +
    /// reserve`, of which `reserve + 1` frames are never filled (Ardour's PlaybackBuffer).
    pub fn reserved_capacity_frames(frames: u64, reserve: u64) -> u64 {
        (frames + reserve).max(2).next_power_of_two() - reserve - 1
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    pub fn chunk(&self) -> u64 {
        self.chunk
    }
    pub fn has_memory(&self) -> bool {
        self.mem.is_some()
    }

    /// Bytes waiting to be consumed.
    pub fn fill(&self) -> u64 {
        let head = self.head.load(Ordering::Acquire);
        let tail = self.tail.load(Ordering::Acquire);
        let fill = head - tail;
        assert!(
            fill <= self.capacity,
            "ring fill {fill} above capacity {}",
            self.capacity
        );
        fill
    }

    /// Room for the producer.
    pub fn free(&self) -> u64 {
        self.capacity - self.fill()
    }

    /// Total bytes produced and consumed so far.
    pub fn produced(&self) -> u64 {
        self.head.load(Ordering::Acquire)
    }
    pub fn consumed(&self) -> u64 {
        self.tail.load(Ordering::Acquire)
    }

    /// Producer: the contiguous free region starting at the head, at most `max` bytes (it stops at
    /// the end of the ring memory). Returns its offset in ring memory and its length.
    pub fn producer_region(&self, max: u64) -> (u64, u64) {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        let free = self.capacity - (head - tail);
        let at = head % self.capacity;
        (at, free.min(max).min(self.capacity - at))
    }

    /// Consumer: the contiguous filled region starting at the tail, at most `max` bytes.
    pub fn consumer_region(&self, max: u64) -> (u64, u64) {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        let at = tail % self.capacity;
        (at, (head - tail).min(max).min(self.capacity - at))
    }

    /// Raw pointer to ring memory at `offset` (for I/O straight into or out of the ring).
    ///
    /// # Safety
    /// The caller must only touch the region it owns: the producer what `producer_region` gave it,
    /// the consumer what `consumer_region` gave it, until it commits.
    pub unsafe fn ptr(&self, offset: u64) -> Option<*mut u8> {
        self.mem.as_ref().map(|m| {
            assert!(
                offset < self.capacity,
                "ring offset {offset} outside {}",
                self.capacity
            );
            // SAFETY: offset is inside the allocation; exclusivity is the caller's contract.
            unsafe { (*m.get()).as_mut_ptr().add(offset as usize) }
        })
    }

    /// Asks the processor to bring the next `n` bytes the consumer will take into its cache
    /// (where it can be asked: x86-64's prefetch; elsewhere nothing). Only a hint: nothing is read
    /// or written, and the bytes need not be filled yet. The tick reads one period of every
    /// playback ring in turn, each in memory of its own that the disk's DMA wrote last: asked for
    /// a few tracks ahead, the memory's latency overlaps the check of the tracks before
    /// (docs/lab/search-time.md, "The tick at 11,000 tracks").
    #[inline]
    pub fn prefetch_consumer(&self, n: u64) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: only the address of ring memory is formed, nothing is touched through it.
        if let Some(base) = unsafe { self.ptr(0) } {
            use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
            const LINE: u64 = 64;
            let at = self.tail.load(Ordering::Relaxed) % self.capacity;
            let first = n.min(self.capacity - at);
            // Up to the end of ring memory, then on from its start.
            for (from, len) in [(at, first), (0, n - first)] {
                let mut line = from / LINE * LINE;
                while line < from + len {
                    // SAFETY: an offset below capacity, inside the allocation; a prefetch reads
                    // nothing the program can see and cannot fault.
                    unsafe { _mm_prefetch::<_MM_HINT_T0>(base.add(line as usize) as *const i8) };
                    line += LINE;
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = n;
    }

    /// Empties the ring for a new stream, whose byte 0 goes to the start of ring memory. Only
    /// while neither side uses it: the producer has nothing in flight into it and the consumer
    /// has been told to leave it alone (the two counters do not change together).
    pub fn reset(&self) {
        self.tail.store(0, Ordering::Release);
        self.head.store(0, Ordering::Release);
    }

    /// Producer: `n` more bytes are in the ring.
    pub fn commit_produce(&self, n: u64) {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        assert!(
            head + n - tail <= self.capacity,
            "produce of {n} would overfill the ring"
        );
        self.head.store(head + n, Ordering::Release);
    }

    /// Consumer: `n` bytes were used.
    pub fn commit_consume(&self, n: u64) {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        assert!(
            tail + n <= head,
            "consume of {n} would take more than the ring holds"
        );
        self.tail.store(tail + n, Ordering::Release);
    }

    /// Producer: copies `src` in (wrapping), for capture data and tests. Returns false, copying
    /// nothing, when it does not fit.
    pub fn push(&self, src: &[u8]) -> bool {
        if (src.len() as u64) > self.free() {
            return false;
        }
        let mut done = 0usize;
        while done < src.len() {
            let (at, len) = self.producer_region((src.len() - done) as u64);
            // SAFETY: [at, at+len) is the producer's free region.
            if let Some(p) = unsafe { self.ptr(at) } {
                unsafe { std::ptr::copy_nonoverlapping(src[done..].as_ptr(), p, len as usize) };
            }
            self.commit_produce(len);
            done += len as usize;
        }
        true
    }

    /// Consumer: copies `dst.len()` bytes out (wrapping). Returns false, taking nothing, when the
    /// ring holds fewer.
    pub fn pop(&self, dst: &mut [u8]) -> bool {
        if (dst.len() as u64) > self.fill() {
            return false;
        }
        let mut done = 0usize;
        while done < dst.len() {
            let (at, len) = self.consumer_region((dst.len() - done) as u64);
            // SAFETY: [at, at+len) is the consumer's filled region.
            if let Some(p) = unsafe { self.ptr(at) } {
                unsafe { std::ptr::copy_nonoverlapping(p, dst[done..].as_mut_ptr(), len as usize) };
            }
            self.commit_consume(len);
            done += len as usize;
        }
        true
    }
}

/// Ring memory kept between the runs of a search. Each probe would otherwise allocate and touch
/// gigabytes afresh: on a virtual machine whose host backs guest memory on first touch, 9000
/// one-MiB rings took 25 s to allocate, longer than the probe streamed.
#[derive(Default)]
pub struct RingMemory {
    spare: Vec<AlignedBuf>,
}

impl RingMemory {
    pub fn new() -> RingMemory {
        RingMemory::default()
    }

    /// A buffer of `len` bytes: a spare one of that length, else a new one. Spares of another
    /// length are freed (a search keeps one ring size).
    fn take(&mut self, len: usize) -> crate::error::Result<AlignedBuf> {
        while let Some(b) = self.spare.pop() {
            if b.len() == len {
                return Ok(b);
            }
        }
        AlignedBuf::try_mapped(len)
    }

    /// Makes sure `count` buffers of `len` bytes are ready, allocating (and touching) the missing
    /// ones on every CPU at once: first-touching gigabytes is the slow part of starting a large
    /// run on a virtual machine, and it is work the CPUs can share.
    pub fn reserve(&mut self, count: usize, len: usize) -> crate::error::Result<()> {
        self.reserve_unless(count, len, &|| false)
    }

    /// `reserve`, stopping (with what was made kept spare) once `stop` says so: run beside a
    /// run's file layout, it must not hold up an interrupted or failed run for the seconds
    /// touching gigabytes takes.
    pub fn reserve_unless(
        &mut self,
        count: usize,
        len: usize,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> crate::error::Result<()> {
        self.spare.retain(|b| b.len() == len);
        let missing = count.saturating_sub(self.spare.len());
        if missing == 0 {
            return Ok(());
        }
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(missing);
        let per = missing.div_ceil(threads);
        let made: Vec<crate::error::Result<Vec<AlignedBuf>>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|i| {
                    let n = per.min(missing - (i * per).min(missing));
                    s.spawn(move || {
                        (0..n)
                            .take_while(|_| !stop())
                            .map(|_| AlignedBuf::try_mapped(len))
                            .collect::<crate::error::Result<Vec<_>>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Ok(Vec::new())))
                .collect()
        });
        // What was made stays spare even when some could not be: it is freed with the pool.
        let mut refused = None;
        for m in made {
            match m {
                Ok(v) => self.spare.extend(v),
                Err(e) => refused = Some(e),
            }
        }
        refused.map_or(Ok(()), Err)
    }

    /// `count` buffers of `len` bytes for a run's rings, and how many of them, from the first,
    /// are ready to use: the spares first, then new ones whose pages are not yet touched
    /// (`AlignedBuf::try_mapped_untouched`). The run touches those while it locates
    /// (`RingsReady`), and must not use one before: allocating 10,000 one-MiB rings this way
    /// takes milliseconds, touching them seconds of both CPUs.
    pub fn lend(
        &mut self,
        count: usize,
        len: usize,
    ) -> crate::error::Result<(Vec<AlignedBuf>, usize)> {
        self.spare.retain(|b| b.len() == len);
        let ready = self.spare.len().min(count);
        let mut bufs: Vec<AlignedBuf> = self.spare.drain(..ready).collect();
        for _ in ready..count {
            // SAFETY: the caller touches these before any use (the contract above), and the
            // run gives back only the buffers it touched.
            bufs.push(unsafe { AlignedBuf::try_mapped_untouched(len) }?);
        }
        Ok((bufs, ready))
    }

    /// Keeps `buf` for a later ring.
    pub fn give(&mut self, buf: AlignedBuf) {
        self.spare.push(buf);
    }

    /// Bytes held for later rings.
    pub fn spare_bytes(&self) -> u64 {
        self.spare.iter().map(|b| b.len() as u64).sum()
    }
}

/// How many of a run's rings, counted from the first, have their memory ready: touched, so
/// that neither the locate's reads nor the audio tick fault its pages in. The rings past that
/// are touched in order on every CPU (`touch_next`) while the run locates into the ready ones,
/// and the clock starts once all are (`stream_loop::run`): on a virtual machine, touching 10 GB of
/// new rings took 7.5 s of both CPUs, which the locate of 10,000 tracks otherwise waited for
/// whole although it needs one ring at a time.
pub struct RingsReady {
    ready: AtomicUsize,
    done: Vec<AtomicBool>,
    next: AtomicUsize,
}

impl RingsReady {
    /// `total` rings of which the first `ready` are ready already.
    pub fn new(ready: usize, total: usize) -> RingsReady {
        RingsReady {
            ready: AtomicUsize::new(ready.min(total)),
            done: (0..total).map(|i| AtomicBool::new(i < ready)).collect(),
            next: AtomicUsize::new(ready.min(total)),
        }
    }

    /// Rings ready, counted from the first: their memory may be used.
    pub fn count(&self) -> usize {
        self.ready.load(Ordering::Acquire)
    }

    pub fn total(&self) -> usize {
        self.done.len()
    }

    pub fn all_ready(&self) -> bool {
        self.count() == self.total()
    }

    /// Touches the memory of the next ring not yet taken by any thread (one thread or several
    /// call this in a loop), and marks it ready. False once none is left.
    pub fn touch_next(&self, tracks: &[super::Track]) -> bool {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        let Some(t) = tracks.get(i).filter(|_| i < self.total()) else {
            return false;
        };
        // SAFETY: ring `i` is past `count()` until it is marked below, so nothing else uses
        // its memory (the run's contract); `ptr(0)` is the start of the ring's buffer, which
        // holds its capacity.
        if let Some(p) = unsafe { t.ring.ptr(0) } {
            unsafe { AlignedBuf::touch(p, t.ring.capacity() as usize) };
        }
        // Sequentially consistent: a thread that marks its ring and then finds the one before
        // not yet done, and the thread that marks that one and then looks at this one, cannot
        // both miss the other's mark (the count would stop short of rings that are done).
        self.done[i].store(true, Ordering::SeqCst);
        // Move the ready count over every ring done in a row (another thread may have finished
        // the ones after this while this one touched).
        let mut r = self.ready.load(Ordering::SeqCst);
        while r < self.total() && self.done[r].load(Ordering::SeqCst) {
            match self
                .ready
                .compare_exchange(r, r + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => r += 1,
                Err(now) => r = now,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lent memory: the spares first and counted ready, then untouched buffers; several threads
    /// touching them make every ring ready, the count only ever growing and never past a ring
    /// not yet touched, and each touched ring's memory zero.
    #[test]
    fn lent_rings_are_made_ready_in_order_on_several_threads() {
        let len = 4 * 4096;
        let mut m = RingMemory::new();
        m.reserve(3, len).unwrap();
        let (bufs, ready) = m.lend(64, len).unwrap();
        assert_eq!((bufs.len(), ready), (64, 3));
        assert_eq!(m.spare_bytes(), 0);
        let tracks: Vec<super::super::Track> = bufs
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let ring = Ring::from_buf(len as u64, 4096, b);
                super::super::Track::new(
                    super::super::Direction::Play,
                    ring,
                    i as u32,
                    0,
                    0,
                    1 << 20,
                )
            })
            .collect();
        let gate = RingsReady::new(ready, tracks.len());
        assert_eq!(gate.count(), 3);
        assert!(!gate.all_ready());
        let seen = std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    let mut more = true;
                    while more {
                        more = gate.touch_next(&tracks);
                    }
                });
            }
            let mut seen = vec![gate.count()];
            while !gate.all_ready() {
                let n = gate.count();
                assert!(
                    n >= *seen.last().unwrap(),
                    "the count went back: {seen:?} then {n}"
                );
                seen.push(n);
            }
            seen
        });
        assert_eq!(gate.count(), 64, "{seen:?}");
        assert!(!gate.touch_next(&tracks), "nothing is left to touch");
        for t in &tracks[3..] {
            let mut got = vec![1u8; len];
            // SAFETY: the ring's own memory, touched, nothing else using it.
            unsafe { std::ptr::copy_nonoverlapping(t.ring.ptr(0).unwrap(), got.as_mut_ptr(), len) };
            assert!(got.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn ring_memory_is_reused_at_the_same_size_and_freed_otherwise() {
        let mut m = RingMemory::new();
        let r = Ring::from_memory(3 * 4096, 4096, &mut m).unwrap();
        assert_eq!(r.capacity(), 3 * 4096);
        assert!(r.has_memory());
        let p = unsafe { r.ptr(0) }.unwrap();
        m.give(r.into_memory().unwrap());
        assert_eq!(m.spare_bytes(), 3 * 4096);
        let again = Ring::from_memory(3 * 4096, 4096, &mut m).unwrap();
        assert_eq!(
            unsafe { again.ptr(0) }.unwrap(),
            p,
            "the same memory, not a new buffer"
        );
        assert_eq!(m.spare_bytes(), 0);
        m.give(again.into_memory().unwrap());
        let other = Ring::from_memory(8 * 4096, 4096, &mut m).unwrap();
        assert_eq!(other.capacity(), 8 * 4096);
        assert_eq!(
            m.spare_bytes(),
            0,
            "a spare of another size is freed, not kept"
        );
        assert!(Ring::new(8192, 4096, false).into_memory().is_none());
        // Reserving allocates only what is missing, of the size asked for.
        let mut m = RingMemory::new();
        m.reserve(5, 8192).unwrap();
        assert_eq!(m.spare_bytes(), 5 * 8192);
        m.reserve(3, 8192).unwrap();
        assert_eq!(m.spare_bytes(), 5 * 8192);
        m.reserve(2, 4096).unwrap();
        // A cancelled reservation stops, and keeps what it made.
        m.reserve_unless(9, 4096, &|| true).unwrap();
        assert_eq!(m.spare_bytes(), 2 * 4096);
    }

    /// The tick's prefetch only hints: across the wrap, past what is filled, on a ring without
    /// memory, the ring's bytes and counters are as they were.
    #[test]
    fn a_prefetch_changes_nothing_across_the_wrap_or_without_memory() {
        let r = Ring::new(3 * 4096, 4096, true);
        let data: Vec<u8> = (0..3 * 4096).map(|i| (i % 251) as u8).collect();
        assert!(r.push(&data));
        let mut out = vec![0u8; 2 * 4096 + 100];
        assert!(r.pop(&mut out));
        assert!(r.push(&data[..4096]));
        // The consumer's next bytes run from 8292 to the end and on from 0.
        for n in [0, 768, 4096, 3 * 4096] {
            r.prefetch_consumer(n);
        }
        assert_eq!((r.produced(), r.consumed()), (4 * 4096, 2 * 4096 + 100));
        let mut rest = vec![0u8; 4096 - 100];
        assert!(r.pop(&mut rest));
        assert_eq!(rest, data[2 * 4096 + 100..]);
        let mut wrapped = vec![0u8; 4096];
        assert!(r.pop(&mut wrapped));
        assert_eq!(wrapped, data[..4096]);
        let counters = Ring::new(3 * 4096, 4096, false);
        counters.prefetch_consumer(4096);
        assert_eq!((counters.produced(), counters.consumed()), (0, 0));
    }

    #[test]
    fn capacity_rounds_to_chunks_with_two_at_least() {
        assert_eq!(Ring::capacity_for(2.0, 144_000, 262_144, 2), 2 * 262_144);
        assert_eq!(Ring::capacity_for(2.0, 144_000, 262_144, 4), 4 * 262_144);
        assert_eq!(Ring::capacity_for(10.0, 144_000, 262_144, 4), 6 * 262_144);
        assert_eq!(Ring::capacity_for(0.001, 144_000, 4096, 0), 2 * 4096);
        assert_eq!(Ring::new(1, 4096, false).capacity(), 8192);
    }

    #[test]
    fn regions_stop_at_the_wrap() {
        let r = Ring::new(3 * 4096, 4096, true);
        assert!(r.push(&[1u8; 8192]));
        assert!(r.pop(&mut [0u8; 6000]));
        let (at, len) = r.producer_region(u64::MAX);
        assert_eq!((at, len), (8192, 4096));
        r.commit_produce(len);
        let (at, len) = r.producer_region(u64::MAX);
        assert_eq!((at, len), (0, 6000));
    }

    #[derive(Debug, Clone)]
    enum Step {
        Push(usize),
        Pop(usize),
    }

    proptest! {
        /// Under any interleaving, fill stays within 0..=capacity and bytes come out in order.
        #[test]
        fn fill_bounded_and_fifo(steps in proptest::collection::vec(
            prop_oneof![(1usize..9000).prop_map(Step::Push), (1usize..9000).prop_map(Step::Pop)], 1..200)) {
            let r = Ring::new(4 * 4096, 4096, true);
            let mut next_in = 0u64;
            let mut next_out = 0u64;
            for s in steps {
                match s {
                    Step::Push(n) => {
                        let data: Vec<u8> = (next_in..next_in + n as u64).map(|i| (i % 251) as u8).collect();
                        let fits = n as u64 <= r.free();
                        prop_assert_eq!(r.push(&data), fits);
                        if fits { next_in += n as u64; }
                    }
                    Step::Pop(n) => {
                        let mut out = vec![0u8; n];
                        let has = n as u64 <= r.fill();
                        prop_assert_eq!(r.pop(&mut out), has);
                        if has {
                            for (k, b) in out.iter().enumerate() {
                                prop_assert_eq!(*b, ((next_out + k as u64) % 251) as u8);
                            }
                            next_out += n as u64;
                        }
                    }
                }
                prop_assert!(r.fill() <= r.capacity());
                prop_assert_eq!(r.fill(), next_in - next_out);
            }
        }
    }

    #[test]
    fn two_threads_keep_order() {
        let r = std::sync::Arc::new(Ring::new(8 * 4096, 4096, true));
        let total = 4_000_000u64;
        let p = {
            let r = r.clone();
            std::thread::spawn(move || {
                let mut i = 0u64;
                while i < total {
                    let n = 1000.min(total - i);
                    let data: Vec<u8> = (i..i + n).map(|x| (x % 253) as u8).collect();
                    while !r.push(&data) {
                        std::hint::spin_loop();
                    }
                    i += n;
                }
            })
        };
        let mut i = 0u64;
        let mut buf = vec![0u8; 768];
        while i < total {
            let n = 768.min(total - i) as usize;
            if r.pop(&mut buf[..n]) {
                for (k, b) in buf[..n].iter().enumerate() {
                    assert_eq!(*b, ((i + k as u64) % 253) as u8);
                }
                i += n as u64;
            }
        }
        p.join().unwrap();
    }
}
