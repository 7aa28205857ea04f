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

/// One track group's rings at a moment: the worst and the mean, each as a share (0..=1) of
/// what the ring holds (playback: audio ahead; recording: room left).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GroupFill {
    pub worst: f64,
    pub mean: f64,
}

/// A streaming run as it goes, sampled by the butler a few times a second (never by the
/// real-time thread).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StreamLive {
    /// Run time, and how long the run is planned to last.
    pub t_ms: f64,
    pub planned_ms: f64,
    pub play_tracks: u32,
    pub record_tracks: u32,
    pub play: Option<GroupFill>,
    pub record: Option<GroupFill>,
    /// The share of a ring below which a run is marginal.
    pub margin: f64,
    /// Underruns and overruns so far.
    pub xruns: u64,
    /// Bytes read and written since the clock started.
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// The 99th percentile of read and write latency so far, in µs (None before any).
    pub read_p99_us: Option<f64>,
    pub write_p99_us: Option<f64>,
}

/// What a live view shows beside the progress bar.
#[derive(Debug, Clone, PartialEq)]
pub enum Live {
    Stream(StreamLive),
    /// A search's probe ended: the count it tried and its verdict's word.
    Probe {
        count: u32,
        verdict: &'static str,
        confirmation: bool,
    },
}

/// Receives progress; the binary draws bars, tests ignore it. Called at most every few
/// milliseconds from the measuring thread.
pub trait Progress {
    fn begin(&self, label: &str, total: u64, unit: ProgressUnit);
    fn set(&self, position: u64);
    fn end(&self);
    /// What a live view shows (ring fill, probes); a terminal ignores it.
    fn live(&self, _event: &Live) {}
    /// Whether anyone watches [`Progress::live`]: a run samples its rings for it only then.
    fn wants_live(&self) -> bool {
        false
    }
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
    pub world: &'a dyn crate::studio::World,
}

impl<'a> Control<'a> {
    /// A measurement alone, that nobody watches: the tests' control.
    #[cfg(test)]
    pub(crate) fn quiet(cancel: &'a AtomicBool) -> Control<'a> {
        Control {
            cancel,
            progress: &NoProgress,
            world: &crate::studio::Alone,
        }
    }

    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
}

/// Keeps what a live view is told of streaming runs, for tests.
#[cfg(test)]
#[derive(Default)]
pub struct LiveRecorder(pub std::cell::RefCell<Vec<StreamLive>>);

#[cfg(test)]
impl Progress for LiveRecorder {
    fn begin(&self, _: &str, _: u64, _: ProgressUnit) {}
    fn set(&self, _: u64) {}
    fn end(&self) {}
    fn live(&self, e: &Live) {
        if let Live::Stream(s) = e {
            self.0.borrow_mut().push(*s);
        }
    }
    fn wants_live(&self) -> bool {
        true
    }
}
