//! What plugs into the one streaming loop (`stream_loop`), and what a run gives back: the
//! scenario's two sides (what the tick plays each period, [`TickSide`]; what the butler does
//! between requests, [`ButlerSide`]), the timing the tick runs on ([`Timing`], driven through a
//! [`TickDriver`]), the judge that may end a run early ([`EarlyEnd`]), where the streams' files
//! are ([`Files`]), and what the loop measured ([`EngineOut`], [`TracksRun`]).

use super::planner::{Planner, Request};
use super::ring::RingsReady;
use super::telemetry::{IdleLog, LagPoint};
use super::tick::Tick;
use super::{FillPoint, StreamSpec, Track, TrackReport};
use crate::clock::Clock;
use crate::control::Control;
use crate::error::Result;
use crate::stats::LatencyHist;
use std::fs::File;
use std::path::PathBuf;

/// What the audio tick does each period. Nothing in it may allocate, lock or block.
pub trait TickSide: Send {
    /// One period at `t_ns` since the clock started.
    fn run(&mut self, tracks: &[Track], t_ns: u64);
    /// The run can no longer pass: a search's probe stops there.
    fn cannot_pass(&self, spec: &StreamSpec) -> bool;
}

impl TickSide for Tick {
    fn run(&mut self, tracks: &[Track], t_ns: u64) {
        Tick::run(self, tracks, t_ns);
    }
    fn cannot_pass(&self, spec: &StreamSpec) -> bool {
        self.underruns + self.overruns > 0 || self.worst < spec.margin
    }
}

/// What the butler does besides refilling and flushing rings: the scenario's side of the
/// hand-over with the tick. Tracks ([`Tracks`]) have none; a sampler starts and stops voices.
pub trait ButlerSide {
    /// Before each planning: takes what the tick asked for. Times are since the clock started.
    fn poll(&mut self, _tracks: &[Track], _planner: &mut Planner, _now_ns: u64) {}
    /// A request finished (booked in its ring) at `now_ns`.
    fn completed(&mut self, _tracks: &[Track], _planner: &mut Planner, _r: &Request, _now_ns: u64) {
    }
    /// Every tick takes one period from every playback ring and puts one into every capture
    /// ring ([`Planner::set_uniform_ticks`], where the rings are of one size).
    fn uniform_ticks(&self) -> bool {
        false
    }
}

/// A fixed set of tracks: nothing to do between ticks.
pub struct Tracks;

impl ButlerSide for Tracks {
    fn uniform_ticks(&self) -> bool {
        true
    }
}

/// The butler's view of the ticks.
pub trait TickDriver {
    /// Periods played so far: after each, the rings have changed.
    fn ticks_done(&self) -> u64;
    /// The run is over (every period played, stopped early, interrupted).
    fn finished(&self) -> bool;
    /// The latest time the butler may wait for a completion until (the tick it runs itself),
    /// on the timing's clock; None when the tick runs on its own.
    fn deadline(&self) -> Option<u64>;
    /// Before each step of the butler: a cancel, progress.
    fn step(&mut self);
    /// Nothing to plan and nothing in flight: wait for the next tick.
    fn idle(&mut self);
    /// The butler waited until the deadline: the tick that was due runs.
    fn advance(&mut self, tracks: &[Track]);
    /// The butler failed: stop the ticks.
    fn abort(&mut self);
    /// The run's verdict is beyond doubt (`StreamSpec::end_early`): end it after the period
    /// being played, as a run planned that long would end.
    fn end_now(&mut self);
}

/// What the tick measured of itself.
#[derive(Debug, Default)]
pub struct TickReport {
    /// Wake-up lateness (real time only).
    pub lateness: Option<LatencyHist>,
    /// The tick's lag behind its schedule over the run (real time only; `LagSeries`).
    pub lag: Vec<LagPoint>,
    /// SCHED_FIFO and mlockall both granted.
    pub realtime: bool,
    pub realtime_note: Option<String>,
    pub cpu_s: f64,
    pub interrupted: bool,
    pub stopped_early: bool,
    /// A search's probe stopped because its tick was further behind its schedule than the run
    /// is long: it had taken over twice its time, and cannot pass (`real::RealTime`).
    pub stopped_behind: bool,
    /// Allocations inside the real-time loop, where the program counts them.
    pub allocations: Option<u64>,
}

/// What may end a run before its planned length once its verdict is beyond doubt
/// (`StreamSpec::end_early`). The engine knows no verdict: the judge's rule, outside it, says
/// when to look and what the butler's idle time so far shows (`verdict::windows::EarlyLook`).
pub trait EarlyEnd {
    /// The run time, in ns, at which the run looks (once): as long on the clock and in the
    /// periods the tick has played.
    fn look_at_ns(&self) -> u64;
    /// Whether the verdict is beyond doubt at `ran_ns`, given the butler's idle time so far.
    fn verdict_is_clear(&self, idle: &IdleLog, ran_ns: u64) -> bool;
}

/// A fixed set of tracks' run as the engine measured it, for the verdict to judge
/// (`verdict::tracks::judge`).
pub struct TracksRun {
    pub engine: EngineOut<Tick>,
    /// What each track went through.
    pub tracks: Vec<TrackReport>,
    pub simulated: bool,
    /// The process's peak resident memory after the run (real runs).
    pub peak_rss_bytes: Option<u64>,
}

impl TracksRun {
    /// `engine`'s run of `tracks` (rings of `ring_bytes` each), with each track's accounting.
    pub fn of(tracks: &[Track], ring_bytes: u64, engine: EngineOut<Tick>, simulated: bool) -> Self {
        TracksRun {
            engine,
            tracks: tracks
                .iter()
                .enumerate()
                .map(|(i, t)| t.report(i as u32, ring_bytes))
                .collect(),
            simulated,
            peak_rss_bytes: None,
        }
    }
}

/// How the tick runs beside the butler: on a real-time thread against the monotonic clock
/// (`real::RealTime`), or inline against a virtual one (`sim::Virtual`).
pub trait Timing {
    type Clock: Clock;
    /// Wall-clock time on real threads (a simulated run's threads' waits say nothing of it).
    const REAL: bool = false;
    fn clock(&self) -> &Self::Clock;
    /// Plays `spec.ticks()` periods with `side` while `butler` runs (given the driver it waits
    /// on), and returns the side and what the tick measured.
    fn run<T: TickSide>(
        &self,
        spec: &StreamSpec,
        tracks: &[Track],
        side: T,
        ctl: &Control<'_>,
        butler: &mut dyn FnMut(&mut dyn TickDriver) -> Result<()>,
    ) -> Result<(T, TickReport)>;
}

/// Where the streams' files are, for messages and for the page cache.
pub struct Files<'a> {
    /// Each backend file's path (or name, for a simulated one).
    pub names: &'a [PathBuf],
    /// Through the page cache: the files. A track's hold the whole run, so no byte is read
    /// twice, as a DAW streaming long takes never does; should a read wrap all the same, the
    /// file's pages are dropped before it. Nothing else is dropped while tracks read: advice to
    /// drop each range once read changed what the kernel read ahead (ardour-medium's float
    /// tracks on a 20-IOPS device held 104 tracks with it where Ardour and the profile without
    /// it ran dry at 10.8 s).
    pub page_cache: Option<&'a [&'a File]>,
    /// Through the page cache, drop each range once read: a sampler's voices read the same
    /// sample files again note after note, and each voice reads cold, as the project's rule is
    /// that no run streams from RAM. Tracks read each file once and drop nothing.
    pub drop_behind: bool,
    /// Rings whose memory is still being touched on other threads while the run locates
    /// (`RingsReady`): the locate uses only the ready ones and the clock waits for all. None:
    /// every ring is ready.
    pub rings_ready: Option<&'a RingsReady>,
}

impl Files<'_> {
    /// Tracks whose rings are ready, from the first.
    pub(super) fn ready_rings(&self, tracks: usize) -> usize {
        self.rings_ready.map_or(tracks, |r| r.count().min(tracks))
    }
}

/// What a run measured, for the scenario to turn into its outcome.
pub struct EngineOut<T> {
    pub side: T,
    pub tick: TickReport,
    pub locate_ns: u64,
    pub ran_ns: u64,
    pub idle: IdleLog,
    pub read_lat: LatencyHist,
    pub write_lat: LatencyHist,
    /// During the run (after the locate).
    pub read_bytes: u64,
    /// Including the last flush.
    pub written_bytes: u64,
    /// Bytes the playback streams played.
    pub played_bytes: u64,
    /// Bytes the target's block device read during the run, from its counters.
    pub device_read_bytes: Option<u64>,
    /// Through the page cache, on a device whose counters are known: what the streams hold
    /// in their rings and in the kernel's read-ahead together, over time (see
    /// [`sample_buffered`]). Empty otherwise.
    pub buffered: Vec<FillPoint>,
    /// The rhythm of that series, in seconds of audio: the kernel reads ahead in windows as
    /// large as the locate's first read (a ring) or the device's read-ahead, and a file's
    /// lead rises and falls by one window as they land.
    pub buffered_cycle_s: f64,
    /// CPU time of the butler's thread while the ticks played.
    pub butler_cpu_s: f64,
    /// The longest the butler's thread, ready to run, waited for a CPU between two turns of
    /// its loop, and all its waiting, in ms (real runs where the kernel says).
    pub butler_cpu_wait_max_ms: Option<f64>,
    pub butler_cpu_wait_ms: Option<f64>,
}
