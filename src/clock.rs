//! Time for the streaming engine: the real monotonic clock with absolute-deadline sleeps, and a
//! simulated clock that jumps, so the same engine code can run in virtual time.

use std::cell::Cell;

/// A source of nanoseconds since an arbitrary start, and a way to wait for a deadline.
pub trait Clock {
    fn now_ns(&self) -> u64;
    /// Returns at or after `deadline_ns` (immediately when it has passed).
    fn sleep_until(&self, deadline_ns: u64);
}

/// CLOCK_MONOTONIC; sleeps with clock_nanosleep(TIMER_ABSTIME), so deadlines do not drift.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now_ns(&self) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: ts is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }

    fn sleep_until(&self, deadline_ns: u64) {
        let ts = libc::timespec {
            tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
        };
        // Interrupted sleeps (signals) are resumed until the deadline.
        // SAFETY: ts is valid; the remainder pointer may be null with TIMER_ABSTIME.
        while unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        } == libc::EINTR
        {}
    }
}

/// Virtual time: `sleep_until` moves the clock forward instantly.
#[derive(Debug, Default)]
pub struct SimClock {
    now: Cell<u64>,
}

impl SimClock {
    pub fn new() -> SimClock {
        SimClock::default()
    }
    pub fn advance_to(&self, t_ns: u64) {
        assert!(t_ns >= self.now.get(), "simulated time only moves forward");
        self.now.set(t_ns);
    }
}

impl Clock for SimClock {
    fn now_ns(&self) -> u64 {
        self.now.get()
    }
    fn sleep_until(&self, deadline_ns: u64) {
        if deadline_ns > self.now.get() {
            self.now.set(deadline_ns);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_clock_sleeps_to_absolute_deadlines() {
        let c = RealClock;
        let t0 = c.now_ns();
        c.sleep_until(t0 + 2_000_000);
        assert!(c.now_ns() >= t0 + 2_000_000);
        c.sleep_until(t0); // past: returns at once
    }

    #[test]
    fn sim_clock_jumps() {
        let c = SimClock::new();
        c.sleep_until(5_000);
        assert_eq!(c.now_ns(), 5_000);
        c.sleep_until(10);
        assert_eq!(c.now_ns(), 5_000);
        c.advance_to(6_000);
        assert_eq!(c.now_ns(), 6_000);
    }
}
