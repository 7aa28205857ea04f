//! A fixed-capacity single-producer / single-consumer queue of small `Copy` messages: how the
//! audio tick tells the butler what to do (a voice starts) without locking or allocating. The
//! slots are allocated when the queue is made; a full queue refuses a message rather than wait.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct Spsc<T: Copy> {
    slots: Box<[UnsafeCell<T>]>,
    /// Messages ever pushed (written by the producer only).
    head: AtomicU64,
    /// Messages ever popped (written by the consumer only).
    tail: AtomicU64,
}

// SAFETY: the producer writes only the slot at `head` before publishing it with a release store;
// the consumer reads only slots below `head` (acquired) and at or above `tail`, and frees them
// with a release store of `tail`: one side never touches a slot the other may be using.
unsafe impl<T: Copy + Send> Sync for Spsc<T> {}
unsafe impl<T: Copy + Send> Send for Spsc<T> {}

impl<T: Copy> Spsc<T> {
    /// A queue of `capacity` messages, each slot set to `fill` meanwhile.
    pub fn new(capacity: usize, fill: T) -> Spsc<T> {
        assert!(capacity > 0, "a queue holds at least one message");
        Spsc {
            slots: (0..capacity).map(|_| UnsafeCell::new(fill)).collect(),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
        }
    }

    /// Producer: queues `m`; false (and nothing queued) when the queue is full.
    pub fn push(&self, m: T) -> bool {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        if head - tail == self.slots.len() as u64 {
            return false;
        }
        // SAFETY: the slot at `head` is free (the consumer is below it) and only the producer
        // writes it.
        unsafe { *self.slots[(head % self.slots.len() as u64) as usize].get() = m };
        self.head.store(head + 1, Ordering::Release);
        true
    }

    /// Consumer: the oldest message, if any.
    pub fn pop(&self) -> Option<T> {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if tail == head {
            return None;
        }
        // SAFETY: the slot at `tail` was published by the producer's release of `head`.
        let m = unsafe { *self.slots[(tail % self.slots.len() as u64) as usize].get() };
        self.tail.store(tail + 1, Ordering::Release);
        Some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_come_out_in_order_and_a_full_queue_refuses() {
        let q = Spsc::new(2, 0u32);
        assert!(q.push(1) && q.push(2));
        assert!(!q.push(3), "full");
        assert_eq!(q.pop(), Some(1));
        assert!(q.push(3));
        assert_eq!((q.pop(), q.pop(), q.pop()), (Some(2), Some(3), None));
    }

    #[test]
    fn two_threads_pass_every_message_once_in_order() {
        let q = std::sync::Arc::new(Spsc::new(64, 0u64));
        let n = 200_000u64;
        let p = {
            let q = q.clone();
            std::thread::spawn(move || {
                for i in 0..n {
                    while !q.push(i) {
                        std::hint::spin_loop();
                    }
                }
            })
        };
        let mut next = 0;
        while next < n {
            if let Some(m) = q.pop() {
                assert_eq!(m, next);
                next += 1;
            }
        }
        p.join().unwrap();
    }
}
