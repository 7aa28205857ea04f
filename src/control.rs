//! How the binary steers a measurement without the library printing: a cancel flag (Ctrl-C,
//! SIGTERM) and a progress sink.

use std::sync::atomic::{AtomicBool, Ordering};

/// What a progress position counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressUnit {
    Bytes,
    Millis,
    /// Files, tracks: things counted.
    Count,
}

/// Receives progress; the binary draws bars, tests ignore it. Called at most every few
/// milliseconds from the measuring thread.
pub trait Progress {
    fn begin(&self, label: &str, total: u64, unit: ProgressUnit);
    fn set(&self, position: u64);
    fn end(&self);
}

/// Progress that goes nowhere.
pub struct NoProgress;

impl Progress for NoProgress {
    fn begin(&self, _: &str, _: u64, _: ProgressUnit) {}
    fn set(&self, _: u64) {}
    fn end(&self) {}
}

/// The measurement's link to the outside world.
pub struct Control<'a> {
    pub cancel: &'a AtomicBool,
    pub progress: &'a dyn Progress,
    /// The computers running this measurement at once (one, or a studio's ranks).
    pub world: &'a dyn crate::world::World,
}

impl Control<'_> {
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}
