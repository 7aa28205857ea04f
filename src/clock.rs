//! Time for the streaming engine: the real monotonic clock with absolute-deadline sleeps, and a
//! simulated clock that jumps, so the same engine code can run in virtual time.

use std::cell::Cell;

/// A source of nanoseconds since an arbitrary start, and a way to wait for a deadline.
pub trait Clock {
    fn now_ns(&self) -> u64;
    /// Returns at or after `deadline_ns` (immediately when it has passed).
    fn sleep_until(&self, deadline_ns: u64);
}

/// The monotonic clock; on Linux sleeps with clock_nanosleep(TIMER_ABSTIME), so deadlines do not
/// drift (`platform::sleep_until`).
#[derive(Debug, Clone, Copy, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now_ns(&self) -> u64 {
        crate::platform::monotonic_ns()
    }

    fn sleep_until(&self, deadline_ns: u64) {
        crate::platform::sleep_until(deadline_ns)
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
