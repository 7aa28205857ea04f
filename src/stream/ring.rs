//! The single-producer / single-consumer ring of one track: aligned memory in chunk-sized slots and
//! two free-running byte counters. The real-time side never locks, allocates or blocks on it.
//!
//! A playback ring is filled by the butler (chunks read from disk straight into ring memory) and
//! drained by the audio tick (one period at a time); a capture ring the other way round. In
//! simulation the ring keeps only its counters (no memory), so the same accounting runs for
//! thousands of simulated tracks.

use crate::io::AlignedBuf;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

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
        let slots = capacity_bytes.div_ceil(chunk).max(2);
        let capacity = slots * chunk;
        Ring {
            mem: with_memory.then(|| UnsafeCell::new(AlignedBuf::new(capacity as usize))),
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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
