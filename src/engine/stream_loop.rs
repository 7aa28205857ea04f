//! The one streaming loop, for real disks and simulated devices alike: the locate (every
//! playback ring prefilled), then the butler — planning requests, issuing them through an
//! [`IoBackend`] and booking their completions — while the audio tick plays, then the drain and
//! the capture rings' last flush.
//!
//! A real run and a simulated one differ only in what is plugged in: the backend (a disk's, or
//! the device model's, `io::sim`) and the [`Timing`] (a real-time tick thread on the monotonic
//! clock, or the tick run inline on a virtual clock). What a tick does — a fixed set of tracks,
//! or note-ons and voices — is the scenario's [`TickSide`], with its [`ButlerSide`] for what the
//! butler must do in between (voices starting and stopping).

use super::butler::{Planner, Request};
use super::ring::RingsReady;
use super::shape::head_start_bytes;
use super::telemetry::{IdleLog, LagPoint};
use super::tick::Tick;
use super::{Direction, FillPoint, StreamSpec, Track, TrackReport};
use crate::clock::Clock;
use crate::control::{Control, ProgressUnit};
use crate::error::{Error, Result};
use crate::io::{AlignedBuf, Completion, IoBackend, Op, OpKind, completion_bytes};
use crate::stats::{CpuWait, LatencyHist, thread_cpu_s};
use crate::target::DeviceInfo;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

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
    fn ready_rings(&self, tracks: usize) -> usize {
        self.rings_ready.map_or(tracks, |r| r.count().min(tracks))
    }
}

/// How long the locate sleeps while it waits for ring memory with nothing else to do.
const RING_WAIT: std::time::Duration = std::time::Duration::from_micros(500);

/// Rings made ready that the locate's planner hears of at once (see `Butler::prefill`).
const READY_STEP: usize = 256;

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

/// The butler: turns the planner's requests into backend operations on ring memory and books
/// their completions.
pub struct Butler<'a> {
    pub planner: Planner,
    backend: &'a mut dyn IoBackend,
    pending: Vec<Option<(Request, u64)>>,
    free_slots: Vec<u32>,
    planned: Vec<Request>,
    done: Vec<Completion>,
    pub read_lat: LatencyHist,
    pub write_lat: LatencyHist,
    pub read_bytes: u64,
    pub written_bytes: u64,
    files: &'a Files<'a>,
    /// Where the run's clock started (0 while locating).
    t0: u64,
    /// A `read_whole` profile's own buffer for each request slot: a read that runs past the
    /// ring's end lands here and is copied into the ring when it completes. Allocated the first
    /// time a slot carries such a read (never in a simulation, whose rings have no memory, nor
    /// in a locate, whose reads fill rings from their start).
    scratch: Vec<Option<AlignedBuf>>,
    /// Through the page cache: where each file was last read, to see a read wrap to its start.
    last_read_at: Vec<u64>,
}

impl<'a> Butler<'a> {
    pub fn new(
        policy: &super::Policy,
        tracks: usize,
        backend: &'a mut dyn IoBackend,
        files: &'a Files<'a>,
    ) -> Butler<'a> {
        let qd = backend.queue_depth();
        Butler {
            planner: Planner::new(policy.clone(), tracks, qd),
            backend,
            pending: vec![None; qd],
            free_slots: (0..qd as u32).rev().collect(),
            planned: Vec::with_capacity(qd),
            done: Vec::with_capacity(qd),
            read_lat: LatencyHist::default(),
            write_lat: LatencyHist::default(),
            read_bytes: 0,
            written_bytes: 0,
            files,
            t0: 0,
            scratch: (0..qd).map(|_| None).collect(),
            last_read_at: vec![0; files.page_cache.map_or(0, <[_]>::len)],
        }
    }

    /// Plans and issues what the rings need now.
    fn issue(
        &mut self,
        tracks: &[Track],
        play_only: bool,
        final_flush: bool,
        now: u64,
    ) -> Result<()> {
        self.planned.clear();
        self.planner
            .plan(tracks, play_only, final_flush, &mut self.planned);
        for i in 0..self.planned.len() {
            let r = self.planned[i];
            let t = &tracks[r.track as usize];
            // Through the page cache a read that wraps to the file's start would find what the
            // first pass left cached, where a program playing a long take reads cold: the file's
            // pages go first. (Its files hold the whole run, so this is the exception.)
            if r.kind == OpKind::Read
                && !self.files.drop_behind
                && let Some(files) = self.files.page_cache
                && let Some(last) = self.last_read_at.get_mut(r.file as usize)
            {
                if r.file_offset < *last {
                    crate::dataset::drop_pages(files[r.file as usize], 0, 0);
                }
                *last = r.file_offset;
            }
            // SAFETY: the planner hands out a region of the ring owned by the butler (free space
            // for a read, filled data for a write) until the request is booked complete. A
            // simulated ring has no memory, and a simulated device moves no data.
            let slot = self
                .free_slots
                .pop()
                .expect("the planner stays within the queue depth");
            let ptr = if r.wraps_ring && t.ring.has_memory() {
                let buf = match &mut self.scratch[slot as usize] {
                    Some(buf) => buf,
                    empty => empty.insert(AlignedBuf::try_new(
                        self.planner.read_max_bytes().min(t.ring.capacity()) as usize,
                    )?),
                };
                buf.as_mut_ptr()
            } else {
                unsafe { t.ring.ptr(r.ring_offset) }.unwrap_or(std::ptr::null_mut())
            };
            // Stamped before submitting: a synchronous backend finishes inside submit().
            self.pending[slot as usize] = Some((r, now));
            self.backend.submit(Op {
                kind: r.kind,
                file: r.file,
                offset: r.file_offset,
                len: r.len as u32,
                slot,
                external: ptr,
            })?;
        }
        Ok(())
    }

    /// Books what completed by `deadline` (at least one without a deadline) and returns how
    /// many. Every completion is booked, even a failed one, so the count in flight stays true;
    /// the first failure is returned after all are booked.
    fn reap(
        &mut self,
        tracks: &[Track],
        deadline: Option<u64>,
        clock: &dyn Clock,
        side: &mut dyn ButlerSide,
    ) -> Result<usize> {
        self.done.clear();
        self.backend.complete_by(deadline, &mut self.done)?;
        let now = clock.now_ns();
        let mut first_err = None;
        for k in 0..self.done.len() {
            let c = self.done[k];
            let (r, sent) = self.pending[c.slot as usize]
                .take()
                .expect("completion of a pending request");
            self.free_slots.push(c.slot);
            if r.wraps_ring
                && c.result == r.len as i64
                && let Some(buf) = &self.scratch[c.slot as usize]
            {
                copy_into_ring(&tracks[r.track as usize], &r, buf);
            }
            self.planner.complete(tracks, &r);
            side.completed(tracks, &mut self.planner, &r, now.saturating_sub(self.t0));
            let path = &self.files.names[r.file as usize];
            let op = r.kind.as_str();
            let what = || {
                format!(
                    "{op} of {} bytes at {} in {}",
                    r.len,
                    r.file_offset,
                    path.display()
                )
            };
            let n = match completion_bytes(c.result, what) {
                Ok(n) => n,
                Err(e) => {
                    first_err.get_or_insert(e);
                    continue;
                }
            };
            if n != r.len {
                first_err.get_or_insert(Error::ShortIo {
                    op,
                    path: path.clone(),
                    offset: r.file_offset,
                    len: r.len,
                    got: n,
                });
                continue;
            }
            let latency = std::time::Duration::from_nanos(now.saturating_sub(sent));
            match r.kind {
                OpKind::Read => {
                    self.read_lat.record(latency);
                    self.read_bytes += n;
                    if let Some(files) = self.files.page_cache.filter(|_| self.files.drop_behind) {
                        crate::dataset::drop_pages(files[r.file as usize], r.file_offset, r.len);
                    }
                }
                OpKind::Write => {
                    self.write_lat.record(latency);
                    self.written_bytes += n;
                }
            }
        }
        first_err.map_or(Ok(self.done.len()), Err)
    }

    /// Fills every playback ring (the locate), each once its memory is ready. Returns the
    /// time it waited for ring memory (not the locate's own time): all of the time it had
    /// nothing in flight for want of a ready ring, and the share of its queue left empty for
    /// that want while reads were in flight.
    fn prefill(&mut self, tracks: &[Track], clock: &dyn Clock, ctl: &Control<'_>) -> Result<u64> {
        let mut waited = 0;
        let depth = self.planner.queue_depth();
        loop {
            if ctl.cancelled() {
                self.drain(tracks, clock)?;
                return Err(Error::Interrupted);
            }
            // Rings become ready one by one; the planner hears of them in steps (each step
            // costs it a fresh scan of the tracks), or at once when its queue is half empty.
            let ready = self.files.ready_rings(tracks.len());
            if ready == tracks.len()
                || ready >= self.planner.ready() + READY_STEP
                || self.planner.in_flight() <= depth / 2
            {
                self.planner.set_ready(ready);
            }
            self.issue(tracks, true, false, clock.now_ns())?;
            let in_flight = self.planner.in_flight();
            let gated = self.planner.ready() < tracks.len();
            if in_flight == 0 {
                if !gated {
                    return Ok(waited);
                }
                let t = clock.now_ns();
                std::thread::sleep(RING_WAIT);
                waited += clock.now_ns() - t;
                continue;
            }
            let t = clock.now_ns();
            self.reap(tracks, None, clock, &mut Tracks)?;
            if gated && in_flight < depth {
                let empty = (depth - in_flight) as u64;
                waited += (clock.now_ns() - t) * empty / depth as u64;
            }
            ctl.progress.set(self.read_bytes);
        }
    }

    /// Waits for everything in flight (ring memory must not be freed under the kernel).
    fn drain(&mut self, tracks: &[Track], clock: &dyn Clock) -> Result<()> {
        let mut first_err = None;
        while self.planner.in_flight() > 0 {
            let before = self.planner.in_flight();
            if let Err(e) = self.reap(tracks, None, clock, &mut Tracks) {
                let stuck = self.planner.in_flight() == before;
                first_err.get_or_insert(e);
                if stuck {
                    break; // the backend itself failed: nothing more will complete
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

/// The live view's samples of a run: every track group's fill, xruns and bytes moved, every
/// 100 ms of wall time or a hundredth of the run, whichever comes first (a simulated run's
/// virtual seconds pass in moments: it shows its whole curve too). Nothing at all where nobody
/// watches (the terminal, the tests).
struct LiveSampler<'a> {
    ctl: &'a Control<'a>,
    spec: &'a StreamSpec,
    watched: bool,
    last: Option<(std::time::Instant, u64)>,
    calls: u32,
}

impl<'a> LiveSampler<'a> {
    fn new(spec: &'a StreamSpec, ctl: &'a Control<'a>) -> LiveSampler<'a> {
        LiveSampler {
            ctl,
            spec,
            watched: ctl.progress.wants_live(),
            last: None,
            calls: 0,
        }
    }

    fn maybe(&mut self, tracks: &[Track], b: &Butler<'_>, t_ns: u64) {
        if !self.watched {
            return;
        }
        // The clock's time first: the wall clock is read every 64th call only (a simulated
        // run calls this millions of times).
        self.calls = self.calls.wrapping_add(1);
        if let Some((wall, t)) = self.last
            && t_ns.saturating_sub(t) < self.spec.duration_ns / 100
            && (!self.calls.is_multiple_of(64)
                || wall.elapsed() < std::time::Duration::from_millis(100))
        {
            return;
        }
        self.last = Some((std::time::Instant::now(), t_ns));
        let group = |dir: Direction| {
            let (mut worst, mut sum, mut n) = (f64::INFINITY, 0.0, 0u32);
            // A playback ring as a share of what it could hold of the rest of its stream (a
            // sampler voice near its note's end holds less); streams between notes, and voices
            // still playing their preload (their ring not yet drawn on), are left out.
            for t in tracks
                .iter()
                .filter(|t| t.dir == dir && t.active() && (t.wraps() || t.ring.consumed() > 0))
            {
                let (cap, fill) = (t.ring.capacity(), t.ring.fill());
                let h = match dir {
                    Direction::Play => {
                        let rest = t.data_len().saturating_sub(t.ring.produced());
                        let could = if t.wraps() { cap } else { cap.min(fill + rest) };
                        if could == 0 {
                            continue;
                        }
                        fill as f64 / could as f64
                    }
                    Direction::Record => 1.0 - fill as f64 / cap.max(1) as f64,
                };
                worst = worst.min(h);
                sum += h;
                n += 1;
            }
            (n > 0).then(|| crate::control::GroupFill {
                worst,
                mean: sum / f64::from(n),
            })
        };
        let xruns = tracks
            .iter()
            .map(|t| u64::from(t.xruns.load(std::sync::atomic::Ordering::Relaxed)))
            .sum();
        self.ctl
            .progress
            .live(&crate::control::Live::Stream(crate::control::StreamLive {
                t_ms: t_ns as f64 / 1e6,
                planned_ms: self.spec.duration_ns as f64 / 1e6,
                play_tracks: self.spec.play_tracks,
                record_tracks: self.spec.record_tracks,
                play: group(Direction::Play),
                record: group(Direction::Record),
                margin: self.spec.margin,
                xruns,
                read_bytes: b.read_bytes,
                written_bytes: b.written_bytes,
                read_p99_us: (b.read_lat.count() > 0).then(|| b.read_lat.quantile_us(0.99)),
                write_p99_us: (b.write_lat.count() > 0).then(|| b.write_lat.quantile_us(0.99)),
            }));
    }
}

/// The butler's loop while the ticks play: plan and issue, then book a completion or, with
/// nothing in flight, wait for the next tick (booked as idle: the device had time to spare).
/// After a completion it plans again before anything else, so a request can follow at once.
/// With `wait`, the thread's waits for a CPU are sampled at most every millisecond of its loop.
/// Returns how long the run lasted.
#[allow(clippy::too_many_arguments)]
fn butler_loop(
    b: &mut Butler<'_>,
    tracks: &[Track],
    side: &mut dyn ButlerSide,
    driver: &mut dyn TickDriver,
    clock: &dyn Clock,
    idle: &mut IdleLog,
    live: &mut LiveSampler<'_>,
    mut wait: Option<&mut CpuWait>,
    mut early: Option<(&dyn EarlyEnd, u64)>,
) -> Result<u64> {
    let t0 = clock.now_ns();
    b.t0 = t0;
    let mut sampled = t0;
    // A run that may end early looks once, when it is as long as the shortest that can pass,
    // at the idle share its verdict would take (`EarlyEnd`): as long on the clock
    // and in the periods the tick has played. A tick behind its schedule has played less than
    // the clock says, and a run ended on the clock alone had too little of it for a trend: its
    // verdict rested on the butler's idle time, which a slow tick's lighter demand leaves it.
    while !driver.finished() {
        let now = clock.now_ns();
        if let Some((judge, period_ns)) = early
            && now - t0 >= judge.look_at_ns()
            && driver.ticks_done() * period_ns >= judge.look_at_ns()
        {
            early = None;
            if judge.verdict_is_clear(idle, now - t0) {
                driver.end_now();
            }
        }
        if let Some(w) = wait.as_deref_mut()
            && now.saturating_sub(sampled) >= 1_000_000
        {
            w.sample();
            sampled = now;
        }
        live.maybe(tracks, b, now - t0);
        driver.step();
        side.poll(tracks, &mut b.planner, clock.now_ns() - t0);
        b.planner.tick_seen(driver.ticks_done());
        b.issue(tracks, false, false, clock.now_ns())?;
        if b.planner.in_flight() > 0 {
            if b.reap(tracks, driver.deadline(), clock, side)? > 0 {
                continue;
            }
        } else {
            let from = clock.now_ns();
            driver.idle();
            idle.add(from - t0, clock.now_ns() - t0);
        }
        driver.advance(tracks);
    }
    if let Some(w) = wait {
        w.sample();
    }
    Ok(clock.now_ns() - t0)
}

/// What the playback tracks have played so far, in bytes.
fn played_bytes_of(tracks: &[Track]) -> u64 {
    tracks
        .iter()
        .filter(|t| t.dir == Direction::Play)
        .map(|t| t.ring.consumed())
        .sum()
}

/// How often [`sample_buffered`] reads the device's counters.
const BUFFERED_STEP_NS: u64 = 50_000_000;

/// What the playback streams hold in their rings and in the page cache together, over the run:
/// what the device read less what the tracks played, as a share of the rings (100% at the
/// start, so the series reads like the rings' mean fill and takes the same trend). Through the
/// page cache the butler's reads are served from what the kernel read ahead, so the rings stay
/// full while a device that cannot keep up has its lead eaten: ardour-small's float tracks
/// confirmed 111 on a device capped at 21 MB/s, which carries 109.4 of them. Read every
/// `BUFFERED_STEP_NS` by a thread of its own until `stop` (the butler blocks in reads for up to
/// a second). Other readers of the device count as the tracks' (the counters are the device's).
fn sample_buffered(
    spec: &StreamSpec,
    device: &DeviceInfo,
    tracks: &[Track],
    stop: &AtomicBool,
) -> Vec<FillPoint> {
    let played = || played_bytes_of(tracks);
    let rings = (u64::from(spec.play_tracks) * spec.ring_bytes()).max(1) as f64;
    let steps = spec.duration_ns / BUFFERED_STEP_NS + 2;
    let mut points = Vec::with_capacity(steps as usize);
    let t0 = crate::platform::monotonic_ns();
    let (Some(read0), played0) = (device.bytes_read(), played()) else {
        return points;
    };
    let mut next = t0;
    while !stop.load(Ordering::Relaxed) && (points.len() as u64) < steps {
        next += BUFFERED_STEP_NS;
        crate::platform::sleep_until(next);
        let Some(read) = device.bytes_read() else {
            break;
        };
        let now = crate::platform::monotonic_ns();
        let lead = read as f64 - read0 as f64 - (played() - played0) as f64;
        let pct = 100.0 * (1.0 + lead / rings);
        points.push(FillPoint {
            t_ms: (now - t0) as f64 / 1e6,
            worst_pct: pct,
            mean_pct: pct,
        });
    }
    points
}

/// Copies a read that ran past the ring's end from the butler's buffer into the ring: up to
/// the end of ring memory, the rest from its start (what Ardour's PlaybackBuffer::write does
/// with a refill read into its sum_buffer).
fn copy_into_ring(t: &Track, r: &Request, scratch: &AlignedBuf) {
    let cap = t.ring.capacity();
    let len = r.len as usize;
    let first = ((cap - r.ring_offset) as usize).min(len);
    let src = &scratch[..len];
    // SAFETY: the planner handed this request the ring's free space from `ring_offset` on,
    // `len` bytes of it wrapping at the end of ring memory, and nobody else touches it until
    // the request is booked complete (which follows this copy).
    unsafe {
        if let Some(p) = t.ring.ptr(r.ring_offset) {
            std::ptr::copy_nonoverlapping(src.as_ptr(), p, first);
        }
        if len > first
            && let Some(p) = t.ring.ptr(0)
        {
            std::ptr::copy_nonoverlapping(src[first..].as_ptr(), p, len - first);
        }
    }
}

/// The locate of a run whose reads bypass the page cache and whose locate is not measured (a
/// search's probes, `StreamSpec::locate_from_content`): every playback ring filled as the
/// planner's locate fills it, with what its file holds there (`content::fill_range`, the
/// generator the files were written from), on every CPU at once. The ring then holds byte for
/// byte what the locate's reads would have brought, the roll's content check covers it, and
/// the roll's first reads continue where those reads would have ended. Returns the bytes filled.
fn fill_from_content(
    planner: &Planner,
    tracks: &[Track],
    files: &Files<'_>,
    ctl: &Control<'_>,
) -> Result<u64> {
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let cancel = ctl.cancel;
    let ready = |i: usize| files.rings_ready.is_none_or(|r| r.count() > i);
    let fill_track = |i: usize| {
        let t = &tracks[i];
        // Its ring's memory first (touched on other threads meanwhile).
        while !ready(i) {
            if stop.load(Ordering::Relaxed) || cancel.load(Ordering::Relaxed) {
                return;
            }
            std::thread::sleep(RING_WAIT);
        }
        while let Some(r) = planner.locate_request(tracks, i) {
            let cap = t.ring.capacity();
            let first = (cap - r.ring_offset).min(r.len);
            for (at, len, file_offset) in [
                (r.ring_offset, first, r.file_offset),
                (0, r.len - first, r.file_offset + first),
            ] {
                if len == 0 {
                    continue;
                }
                // SAFETY: the planner handed this request the ring's free region from
                // `ring_offset` on (wrapping at the end of ring memory), and nothing else
                // touches a ring before the clock starts.
                if let Some(p) = unsafe { t.ring.ptr(at) } {
                    let dst = unsafe { std::slice::from_raw_parts_mut(p, len as usize) };
                    crate::content::fill_range(dst, t.content_id(), file_offset);
                }
            }
            t.ring.commit_produce(r.len);
            done.fetch_add(r.len, Ordering::Relaxed);
        }
    };
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 16);
    let next = AtomicU64::new(0);
    // Tracks are handed out in batches: each worker takes the next one. False when none is left.
    const BATCH: u64 = 64;
    let batch = || {
        let from = (next.fetch_add(BATCH, Ordering::Relaxed) as usize).min(tracks.len());
        let to = (from + BATCH as usize).min(tracks.len());
        for (i, t) in tracks.iter().enumerate().take(to).skip(from) {
            if t.dir == Direction::Play {
                fill_track(i);
            }
        }
        to < tracks.len()
    };
    std::thread::scope(|s| {
        for _ in 1..workers {
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    if !batch() {
                        break;
                    }
                }
            });
        }
        // This thread works too, and keeps the progress bar and the cancellation.
        loop {
            if ctl.cancelled() {
                stop.store(true, Ordering::Relaxed);
                break;
            }
            let more = batch();
            ctl.progress.set(done.load(Ordering::Relaxed));
            if !more {
                break;
            }
        }
    });
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted);
    }
    Ok(done.into_inner())
}

/// Reads every playback file's header through the page cache, as a program does when it opens
/// a file to play it (libsndfile's `sf_open` parses the header from byte 0 before a single
/// sample is read). The kernel's read-ahead takes note: a file whose first page was read is a
/// stream from its start, so the audio's first read is read ahead of as a sequential one,
/// where a first read at the audio's page with nothing before it cached is taken for a random
/// read and read as asked. That head start is part of what the program gets: on a device
/// capped at 21 MB/s, ardour-small's 85 float tracks ran dry as their first rings ran out
/// (5.33 s in, the butler idle 60%) without it, and passed with the butler idle 65-71% with it,
/// as Ardour plays 95-104 there.
fn read_headers(tracks: &[Track], open: &[&File], names: &[PathBuf]) -> Result<()> {
    use crate::platform::FileAt;
    let mut header = [0u8; 4096];
    for (i, t) in tracks.iter().enumerate() {
        let (Direction::Play, Some(f)) = (t.dir, open.get(i)) else {
            continue;
        };
        let len = t.data_start().min(header.len() as u64) as usize;
        f.read_exact_at(&mut header[..len], 0).map_err(|e| {
            let name = names
                .get(i)
                .map_or_else(String::new, |p| p.display().to_string());
            Error::io(format!("cannot read the header of {name}"), e)
        })?;
    }
    Ok(())
}

/// What a quick locate leaves of each playback ring to the program's own reads: enough for the
/// kernel's read-ahead window to grow from its first size to the device's read-ahead (each
/// window at most doubles the last, so twice the read-ahead), and at least one of the
/// program's refills; at most the ring.
fn locate_tail_bytes(spec: &StreamSpec, device: Option<&DeviceInfo>) -> u64 {
    /// Linux's default read-ahead, where the device's is not known.
    const DEFAULT_READ_AHEAD: u64 = 128 << 10;
    let p = &spec.policy;
    let ra = device
        .and_then(DeviceInfo::read_ahead_bytes)
        .unwrap_or(DEFAULT_READ_AHEAD);
    let round = p.read_round_bytes.max(4096);
    let tail = (2 * ra).max(p.refill_at_bytes).max(p.read_min_bytes);
    tail.div_ceil(round)
        .saturating_mul(round)
        .min(spec.ring_bytes())
}

/// With `--stagger`, spreads the tracks' positions over one chunk: track k starts k/T of a chunk
/// further on, so their refill thresholds do not all fall on the same tick.
fn stagger(spec: &StreamSpec, tracks: &[Track]) {
    if !spec.stagger && !spec.steady_start {
        return;
    }
    let n = tracks.len() as u64;
    for (k, t) in tracks.iter().enumerate() {
        let off =
            (k as u64 * spec.policy.chunk_bytes / n) / spec.period_bytes() * spec.period_bytes();
        let off = off.min(t.ring.capacity() - 2 * spec.period_bytes().min(t.ring.capacity() / 2));
        match t.dir {
            Direction::Play => t.ring.commit_consume(off.min(t.ring.fill())),
            Direction::Record => {
                let off = off.min(t.ring.free()) / 4096 * 4096;
                if t.ring.has_memory() {
                    super::tick::record_bytes(t, off);
                }
                t.ring.commit_produce(off);
            }
        }
    }
}

/// One streaming run: locate, play `spec.ticks()` periods with `side` while the butler serves
/// the rings through `backend` (the locate through `locate` where given: a deeper queue that
/// saves a search's probes time, since their locate is not what they measure), then drain and
/// write out what the capture rings still hold.
#[allow(clippy::too_many_arguments)]
pub fn run<Tm: Timing, T: TickSide>(
    spec: &StreamSpec,
    tracks: &[Track],
    backend: &mut dyn IoBackend,
    locate: Option<&mut dyn IoBackend>,
    timing: &Tm,
    side: T,
    butler_side: &mut dyn ButlerSide,
    files: &Files<'_>,
    device: Option<&DeviceInfo>,
    early: Option<&dyn EarlyEnd>,
    ctl: &Control<'_>,
) -> Result<EngineOut<T>> {
    let clock = timing.clock();
    let cap = spec.ring_bytes();
    let locate_start = clock.now_ns();
    ctl.progress.begin(
        "locate (prefilling rings)",
        u64::from(spec.play_tracks) * cap,
        ProgressUnit::Bytes,
    );
    let mut b = Butler::new(&spec.policy, tracks.len(), backend, files);
    if butler_side.uniform_ticks()
        && tracks
            .iter()
            .all(|t| t.ring.capacity() == tracks[0].ring.capacity())
    {
        b.planner.set_uniform_ticks(spec.period_bytes());
    }
    if let Some(open) = files.page_cache {
        read_headers(tracks, open, files.names)?;
    }
    let mut ring_wait_ns = 0;
    let from_content = spec.locate_from_content
        && Tm::REAL
        && files.page_cache.is_none()
        && tracks
            .iter()
            .all(|t| t.dir != Direction::Play || t.ring.has_memory());
    match locate {
        _ if from_content => {
            b.read_bytes = fill_from_content(&b.planner, tracks, files, ctl)?;
        }
        Some(l) if spec.play_tracks > 0 => {
            // Through the page cache, what the locate's reads leave in the kernel's read-ahead
            // state is part of what the run measures: a program that locates with its own
            // reads has ramped every file's read-ahead window up by the time it rolls. So the
            // quick locate reads each ring but its last part under random-access advice (the
            // reads exactly as asked, no read-ahead), and the program's own reads fill that
            // part: the roll then starts with the program's read-ahead state. Without this, on
            // a device capped at 160 I/Os a second, the roll's first reads of ardour-small's
            // 24-bit files went to the device in 16 KiB windows, and 84 tracks failed where
            // 100 pass after the program's own locate.
            let tail = files
                .page_cache
                .map_or(0, |_| locate_tail_bytes(spec, device));
            let advise = |random: bool| {
                for f in files.page_cache.into_iter().flatten() {
                    crate::platform::advise_random(f, random);
                }
            };
            advise(true);
            let mut quick = Butler::new(&spec.policy, tracks.len(), l, files);
            quick.planner.locate_leaves = tail;
            let filled = quick.prefill(tracks, clock, ctl);
            advise(false);
            ring_wait_ns += filled?;
            if tail > 0 {
                b.read_bytes = quick.read_bytes;
                ring_wait_ns += b.prefill(tracks, clock, ctl)?;
            }
        }
        _ => ring_wait_ns += b.prefill(tracks, clock, ctl)?,
    }
    // The clock starts on rings that are all ready (the capture rings, after the playback
    // rings, may still be being touched).
    let t = clock.now_ns();
    while files.ready_rings(tracks.len()) < tracks.len() {
        if ctl.cancelled() {
            return Err(Error::Interrupted);
        }
        std::thread::sleep(RING_WAIT);
    }
    ring_wait_ns += clock.now_ns() - t;
    ctl.progress.end();
    // The locate's own time: not what it waited for ring memory with nothing to read.
    let locate_ns = (clock.now_ns() - locate_start).saturating_sub(ring_wait_ns);
    // The workstations of a studio start their clocks together (alone, at once).
    ctl.world.start("clock start", ctl.cancel)?;
    // Rates and latencies describe the run itself, not the prefill.
    b.read_bytes = 0;
    b.read_lat = LatencyHist::default();
    // A run that starts at the first refill has played the periods before it already.
    let head = head_start_bytes(spec);
    for t in tracks.iter().filter(|t| t.dir == Direction::Play) {
        t.ring.commit_consume(head.min(t.ring.fill()));
    }
    stagger(spec, tracks);
    b.planner.invalidate();
    let played = || played_bytes_of(tracks);
    let played0 = played();
    let device0 = device.and_then(|d| d.bytes_read());
    let mut idle = IdleLog::new(spec.ticks() * spec.period_ns());
    let mut ran_ns = 0;
    let mut device_read_bytes = None;
    let mut played_bytes = 0;
    let mut butler_cpu_s = 0.0;
    let mut cpu_wait = (None, None);
    let mut live = LiveSampler::new(spec, ctl);
    // Through the page cache the rings can stay full while the device falls behind: the
    // butler's reads are served from what the kernel read ahead, and that lead is eaten
    // instead. A thread beside the butler follows both together on the device's counters.
    let buffered_device =
        device.filter(|d| Tm::REAL && files.page_cache.is_some() && d.bytes_read().is_some());
    let stop_sampling = AtomicBool::new(false);
    let mut buffered = Vec::new();
    let rate = spec.format.bytes_per_second().max(1) as f64;
    let buffered_cycle_s = buffered_device.map_or(0.0, |d| {
        spec.ring_bytes().max(d.read_ahead_bytes().unwrap_or(0)) as f64 / rate
    });
    let (side, tick) = std::thread::scope(|s| {
        let sampler = buffered_device.map(|d| {
            let stop = &stop_sampling;
            s.spawn(move || sample_buffered(spec, d, tracks, stop))
        });
        let ran = timing.run(spec, tracks, side, ctl, &mut |driver| {
            let cpu0 = thread_cpu_s();
            let mut wait = Tm::REAL.then(CpuWait::of_this_thread);
            let r = butler_loop(
                &mut b,
                tracks,
                butler_side,
                driver,
                clock,
                &mut idle,
                &mut live,
                wait.as_mut(),
                early
                    .filter(|_| spec.end_early)
                    .map(|judge| (judge, spec.period_ns())),
            );
            butler_cpu_s = thread_cpu_s() - cpu0;
            if let Some(w) = wait {
                let ms = |ns: Option<u64>| ns.map(|n| n as f64 / 1e6);
                cpu_wait = (ms(w.max_ns), ms(w.total_ns));
            }
            match r {
                Ok(ns) => {
                    ran_ns = ns;
                    device_read_bytes = device
                        .and_then(|d| d.bytes_read())
                        .zip(device0)
                        .map(|(now, before)| now.saturating_sub(before));
                    played_bytes = played() - played0;
                    Ok(())
                }
                Err(e) => {
                    driver.abort();
                    Err(e)
                }
            }
        });
        stop_sampling.store(true, Ordering::Relaxed);
        if let Some(h) = sampler {
            buffered = h.join().unwrap_or_default();
        }
        ran
    })
    .inspect_err(|_| {
        let _ = b.drain(tracks, clock);
    })?;
    // Finish what is in flight, then write out what the capture rings still hold.
    b.drain(tracks, clock)?;
    if spec.record_tracks > 0 {
        loop {
            b.issue(tracks, false, true, clock.now_ns())?;
            if b.planner.in_flight() == 0 {
                break;
            }
            b.reap(tracks, None, clock, &mut Tracks)?;
        }
    }
    Ok(EngineOut {
        side,
        tick,
        locate_ns,
        ran_ns,
        idle,
        read_lat: b.read_lat,
        write_lat: b.write_lat,
        read_bytes: b.read_bytes,
        written_bytes: b.written_bytes,
        played_bytes,
        device_read_bytes,
        buffered,
        buffered_cycle_s,
        butler_cpu_s,
        butler_cpu_wait_max_ms: cpu_wait.0,
        butler_cpu_wait_ms: cpu_wait.1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::audio::Format;
    use crate::engine::Policy;

    fn spec(profile: &str, format: &str) -> StreamSpec {
        let format = Format::parse(format).unwrap();
        let policy = Policy::named(profile, &format).unwrap();
        StreamSpec {
            period_frames: 1024,
            margin: 0.0,
            locate_queue_depth: Some(32),
            stop_early: true,
            ..StreamSpec::new(format, policy, (1, 0))
        }
    }

    /// A locate that fills rings without reading leaves each playback ring holding what its file
    /// holds where the locate's reads would have read (wrapping at the stream's end, as they
    /// do), leaves capture rings alone, and the roll's first read continues where the locate's
    /// reads would have ended.
    #[test]
    fn a_locate_from_content_fills_rings_as_the_locates_reads_would() {
        use crate::engine::ring::Ring;
        let s = spec("trackbench", "48k/24/mono");
        let chunk = s.policy.chunk_bytes;
        let cap = 4 * chunk;
        let tracks = vec![
            Track::new(
                Direction::Play,
                Ring::new(cap, chunk, true),
                0,
                7,
                4096,
                10 * chunk,
            ),
            // A stream shorter than its ring: the locate's reads wrap at its end.
            Track::new(
                Direction::Play,
                Ring::new(cap, chunk, true),
                1,
                8,
                8192,
                3 * chunk,
            ),
            Track::new(
                Direction::Record,
                Ring::new(cap, chunk, true),
                2,
                9,
                0,
                10 * chunk,
            ),
        ];
        let planner = Planner::new(s.policy.clone(), tracks.len(), 1);
        let cancel = AtomicBool::new(false);
        let ctl = Control {
            cancel: &cancel,
            progress: &crate::control::NoProgress,
            world: &crate::studio::Alone,
        };
        let files = Files {
            names: &[],
            page_cache: None,
            drop_behind: false,
            rings_ready: None,
        };
        assert_eq!(
            fill_from_content(&planner, &tracks, &files, &ctl).unwrap(),
            2 * cap
        );
        for t in &tracks[..2] {
            assert_eq!(t.ring.fill(), cap);
            let mut want = vec![0u8; cap as usize];
            let mut at = 0u64;
            while at < cap {
                let n = (t.data_len() - at % t.data_len()).min(cap - at);
                let (a, b) = (at as usize, (at + n) as usize);
                crate::content::fill_range(&mut want[a..b], t.content_id(), t.file_offset(at));
                at += n;
            }
            let mut got = vec![0u8; cap as usize];
            assert!(t.ring.pop(&mut got));
            assert!(got == want, "ring content differs from the file's");
        }
        assert_eq!(tracks[2].ring.fill(), 0);
        let next = planner.locate_request(&tracks, 0).unwrap();
        assert_eq!(next.file_offset, 4096 + cap);
        let wrapped = planner.locate_request(&tracks, 1).unwrap();
        assert_eq!(wrapped.file_offset, 8192 + cap % (3 * chunk));
        // Interrupted before it starts: nothing is filled and the run says so.
        cancel.store(true, Ordering::Relaxed);
        let fresh = [Track::new(
            Direction::Play,
            Ring::new(cap, chunk, true),
            0,
            7,
            4096,
            10 * chunk,
        )];
        assert!(matches!(
            fill_from_content(&planner, &fresh, &files, &ctl),
            Err(Error::Interrupted)
        ));
    }

    /// Rings whose memory is still being touched are filled only once it is: a ring filled
    /// before its touch would be zeroed by it, and its content would not be the file's.
    #[test]
    fn a_locate_fills_a_ring_only_once_its_memory_is_ready() {
        use crate::engine::ring::{Ring, RingMemory, RingsReady};
        let s = spec("trackbench", "48k/24/mono");
        let chunk = s.policy.chunk_bytes;
        let cap = 2 * chunk;
        let mut m = RingMemory::new();
        let (bufs, ready) = m.lend(6, cap as usize).unwrap();
        assert_eq!(ready, 0);
        let tracks: Vec<Track> = bufs
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let ring = Ring::from_buf(cap, chunk, b);
                Track::new(Direction::Play, ring, i as u32, 20 + i as u32, 0, 8 * chunk)
            })
            .collect();
        let gate = RingsReady::new(0, tracks.len());
        let planner = Planner::new(s.policy.clone(), tracks.len(), 1);
        let cancel = AtomicBool::new(false);
        let ctl = Control {
            cancel: &cancel,
            progress: &crate::control::NoProgress,
            world: &crate::studio::Alone,
        };
        let files = Files {
            names: &[],
            page_cache: None,
            drop_behind: false,
            rings_ready: Some(&gate),
        };
        let filled = std::thread::scope(|sc| {
            sc.spawn(|| {
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                    if !gate.touch_next(&tracks) {
                        break;
                    }
                }
            });
            fill_from_content(&planner, &tracks, &files, &ctl)
        });
        assert_eq!(filled.unwrap(), 6 * cap);
        for t in &tracks {
            let mut want = vec![0u8; cap as usize];
            crate::content::fill_range(&mut want, t.content_id(), t.file_offset(0));
            let mut got = vec![0u8; cap as usize];
            assert!(t.ring.pop(&mut got));
            assert!(
                got == want,
                "track {}: not the file's content",
                t.content_id()
            );
        }
    }

    /// Twice the read-ahead (Linux's 128 KiB where the device is not known), at least a refill
    /// of the program's, rounded to its reads, at most the ring.
    #[test]
    fn the_locate_tail_lets_the_read_ahead_grow_and_fits_the_ring() {
        let s = spec("ardour-small", "48k/24/mono");
        assert_eq!(locate_tail_bytes(&s, None), 256 << 10);
        // ardour-medium's float chunk is 1 MiB: one refill of it.
        let m = spec("ardour-medium", "48k/32f/mono");
        assert_eq!(locate_tail_bytes(&m, None), 1 << 20);
        // A device whose read-ahead cannot be read: Linux's default.
        let d = DeviceInfo {
            name: "no-such-device".into(),
            partition: None,
            model: None,
            rotational: None,
            scheduler: None,
            logical_block_bytes: None,
            size_bytes: None,
        };
        assert_eq!(d.read_ahead_bytes(), None);
        assert_eq!(locate_tail_bytes(&s, Some(&d)), 256 << 10);
    }
}
