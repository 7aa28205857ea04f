//! The engine on a real disk: the audio tick on a thread of its own, on absolute deadlines of the
//! monotonic clock (SCHED_FIFO and mlockall when granted), beside the butler on the calling
//! thread, which issues the planner's requests straight into and out of ring memory, serially
//! (pread/pwrite) or in parallel (io_uring). The loop itself is `engine`'s, shared with
//! simulated runs.

use super::ring::{Ring, RingMemory, RingsReady};
use super::seams::{EarlyEnd, Files, TickDriver, TickReport, TickSide, Timing, Tracks, TracksRun};
use super::stream_loop::{self};
use super::telemetry::LagSeries;
use super::tick::Tick;
use super::{ButlerMode, Direction, StreamSpec, Track};
use crate::clock::{Clock, RealClock};
use crate::control::{Control, ProgressUnit};
use crate::error::{Error, Result};
use crate::io::{BackendKind, IoBackend, IoSettings};
use crate::stats::{LatencyHist, thread_cpu_s};
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// A file a track streams from or to.
pub struct StreamFile<'a> {
    pub file: &'a File,
    pub path: PathBuf,
    pub content_id: u32,
    pub data_start: u64,
    /// Playback: the audio length (reads wrap). Record: the most that may be written.
    pub data_len: u64,
}

thread_local! {
    static IN_REALTIME_LOOP: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// True on the audio tick thread while it is inside its real-time loop. A counting global
/// allocator (the binary installs one) uses it to prove the loop never allocates.
pub fn in_realtime_loop() -> bool {
    IN_REALTIME_LOOP.with(|c| c.get())
}

/// Allocations made on the real-time path, counted by a global allocator that checks
/// `in_realtime_loop` (when one is installed: see `ALLOCATIONS_COUNTED`).
pub static REALTIME_ALLOCATIONS: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

/// Set by a program whose global allocator counts `REALTIME_ALLOCATIONS`.
pub static ALLOCATIONS_COUNTED: AtomicBool = AtomicBool::new(false);

/// Real time: the tick on a thread of its own against the monotonic clock, the butler on the
/// calling thread.
pub struct RealTime;

static REAL_CLOCK: RealClock = RealClock;

/// The butler's view of a tick thread.
struct Threaded<'a> {
    ticks_done: &'a AtomicU64,
    finished: &'a AtomicBool,
    stop: &'a AtomicBool,
    /// Periods the tick plays in all: the run's, or fewer once it has shown its pass.
    end: &'a AtomicU64,
    period_ns: u64,
    ctl: &'a Control<'a>,
    started: Instant,
    last_progress: Instant,
}

impl TickDriver for Threaded<'_> {
    fn ticks_done(&self) -> u64 {
        self.ticks_done.load(Ordering::Acquire)
    }
    fn finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }
    fn deadline(&self) -> Option<u64> {
        None
    }
    fn step(&mut self) {
        if self.ctl.cancelled() {
            self.stop.store(true, Ordering::Relaxed);
        }
        if self.last_progress.elapsed() >= Duration::from_millis(100) {
            self.last_progress = Instant::now();
            self.ctl
                .progress
                .set(self.started.elapsed().as_millis() as u64);
        }
    }
    fn idle(&mut self) {
        // Woken by the tick after each period (it unparks the butler).
        std::thread::park_timeout(Duration::from_nanos(self.period_ns));
    }
    fn advance(&mut self, _tracks: &[Track]) {}
    fn abort(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
    fn end_now(&mut self) {
        let next = self.ticks_done.load(Ordering::Acquire) + 1;
        self.end.fetch_min(next, Ordering::Relaxed);
    }
}

impl Timing for RealTime {
    type Clock = RealClock;
    const REAL: bool = true;

    fn clock(&self) -> &RealClock {
        &REAL_CLOCK
    }

    fn run<T: TickSide>(
        &self,
        spec: &StreamSpec,
        tracks: &[Track],
        side: T,
        ctl: &Control<'_>,
        butler: &mut dyn FnMut(&mut dyn TickDriver) -> Result<()>,
    ) -> Result<(T, TickReport)> {
        let period_ns = spec.period_ns();
        let total = spec.ticks();
        let shared = Shared {
            stop: AtomicBool::new(false),
            ticks_done: AtomicU64::new(0),
            end: AtomicU64::new(total),
            finished: AtomicBool::new(false),
        };
        let butler_thread = std::thread::current();
        // The ticks' times count from here, as the butler's do (it starts right after).
        let base = REAL_CLOCK.now_ns();
        std::thread::scope(|s| {
            let sh = &shared;
            let butler_thread = butler_thread.clone();
            let handle = std::thread::Builder::new()
                .name("trackbench-tick".into())
                .spawn_scoped(s, move || {
                    tick_thread(spec, tracks, side, sh, base, &butler_thread)
                })
                .map_err(|e| Error::io("cannot start the audio tick thread", e))?;
            let total_ms = total * period_ns / 1_000_000;
            ctl.progress
                .begin("streaming", total_ms, ProgressUnit::Millis);
            let mut driver = Threaded {
                ticks_done: &sh.ticks_done,
                finished: &sh.finished,
                stop: &sh.stop,
                end: &sh.end,
                period_ns,
                ctl,
                started: Instant::now(),
                last_progress: Instant::now(),
            };
            let served = butler(&mut driver);
            if served.is_err() {
                sh.stop.store(true, Ordering::Relaxed);
            }
            ctl.progress.end();
            let joined = handle.join();
            served?;
            joined.map_err(|_| {
                Error::io(
                    "the audio tick thread failed",
                    std::io::Error::other("panic"),
                )
            })
        })
    }
}

/// What the tick's thread and the butler share: a stop (an interruption, the butler failed),
/// the periods played, the periods the tick plays in all (fewer once the run has shown its
/// verdict), and the tick's end.
struct Shared {
    stop: AtomicBool,
    ticks_done: AtomicU64,
    end: AtomicU64,
    finished: AtomicBool,
}

/// The audio tick's thread: real-time where granted (everything it needs allocated before it
/// asks), its periods played on absolute deadlines from `base`, waking the butler after each;
/// then what it measured of itself.
fn tick_thread<T: TickSide>(
    spec: &StreamSpec,
    tracks: &[Track],
    mut side: T,
    sh: &Shared,
    base: u64,
    butler_thread: &std::thread::Thread,
) -> (T, TickReport) {
    let (period_ns, total) = (spec.period_ns(), spec.ticks());
    let mut lateness = LatencyHist::default();
    let mut lag = LagSeries::new(total, period_ns);
    let grant = crate::platform::go_realtime(spec.period_frames, spec.format.rate_hz);
    let (realtime, locked) = (grant.granted, grant.memory_locked);
    let note = grant
        .refused
        .as_ref()
        .map(|r| format!("not real-time: {r}"));
    let cpu0 = thread_cpu_s();
    let allocs0 = REALTIME_ALLOCATIONS.load(Ordering::Relaxed);
    IN_REALTIME_LOOP.with(|c| c.set(true));
    let ended = play_periods(
        spec,
        tracks,
        &mut side,
        sh,
        base,
        butler_thread,
        (&mut lateness, &mut lag),
    );
    IN_REALTIME_LOOP.with(|c| c.set(false));
    let allocations = REALTIME_ALLOCATIONS.load(Ordering::Relaxed) - allocs0;
    let cpu_s = thread_cpu_s() - cpu0;
    if locked {
        // Undoes this run's mlockall (or, in a search, keeps it for the next probe); nothing
        // else in trackbench locks memory.
        crate::platform::release_memory();
    }
    drop(grant);
    sh.finished.store(true, Ordering::Release);
    butler_thread.unpark();
    (
        side,
        TickReport {
            lateness: Some(lateness),
            lag: lag.finish(),
            realtime,
            realtime_note: note,
            cpu_s,
            interrupted: ended.interrupted,
            stopped_early: ended.stopped_early,
            stopped_behind: ended.stopped_behind,
            allocations: ALLOCATIONS_COUNTED
                .load(Ordering::Relaxed)
                .then_some(allocations),
        },
    )
}

/// How the tick's loop ended, besides playing every period.
#[derive(Default)]
struct TickEnded {
    interrupted: bool,
    stopped_early: bool,
    stopped_behind: bool,
}

/// The tick's real-time loop: each period on its deadline, its lateness recorded, `side` run,
/// the butler woken; it ends at the last period, at a stop, where the run may stop early and
/// can no longer pass, or where a probe's tick is further behind than the run is long (it has
/// taken over twice its time: it cannot pass, and could go on for minutes). Nothing in it
/// allocates.
fn play_periods<T: TickSide>(
    spec: &StreamSpec,
    tracks: &[Track],
    side: &mut T,
    sh: &Shared,
    base: u64,
    butler_thread: &std::thread::Thread,
    (lateness, lag): (&mut LatencyHist, &mut LagSeries),
) -> TickEnded {
    let (period_ns, total) = (spec.period_ns(), spec.ticks());
    let clock = RealClock;
    let start = clock.now_ns() + period_ns;
    let run_ns = total * period_ns;
    let mut ended = TickEnded::default();
    for k in 0..total {
        if sh.stop.load(Ordering::Relaxed) {
            ended.interrupted = true;
            break;
        }
        if k >= sh.end.load(Ordering::Relaxed) {
            break;
        }
        let deadline = start + k * period_ns;
        clock.sleep_until(deadline);
        let late_ns = clock.now_ns().saturating_sub(deadline);
        lateness.record(Duration::from_nanos(late_ns));
        lag.record(late_ns);
        if spec.stop_early && late_ns > run_ns {
            lag.stop_behind(late_ns);
            ended.stopped_early = true;
            ended.stopped_behind = true;
            break;
        }
        side.run(tracks, deadline - base);
        sh.ticks_done.store(k + 1, Ordering::Release);
        butler_thread.unpark();
        if spec.stop_early && side.cannot_pass(spec) {
            ended.stopped_early = true;
            break;
        }
    }
    ended
}

/// Runs `spec` on real files: `play` for the playback tracks, `record` for the capture tracks (new,
/// empty files of ours). Ring memory comes from `rings` and goes back to it afterwards, so the
/// probes of a search allocate it once. `early` may end a run that may end early
/// (`StreamSpec::end_early`). Returns what the run measured, for the verdict to judge, and the
/// bytes each record track wrote.
pub fn run(
    spec: &StreamSpec,
    play: &[StreamFile<'_>],
    record: &[StreamFile<'_>],
    device: Option<&crate::target::DeviceInfo>,
    rings: &mut RingMemory,
    early: Option<&dyn EarlyEnd>,
    ctl: &Control<'_>,
) -> Result<(TracksRun, Vec<u64>)> {
    spec.validate()?;
    assert_eq!(
        play.len(),
        spec.play_tracks as usize,
        "one file per playback track"
    );
    assert_eq!(
        record.len(),
        spec.record_tracks as usize,
        "one file per record track"
    );
    // Rings kept from an earlier run are ready; new ones are touched while the run locates,
    // in track order on every CPU, and the locate fills each once it is (`RingsReady`).
    let (tracks, ready) = lend_tracks(spec, (play, record), rings)?;
    let gate = RingsReady::new(ready, tracks.len());
    let stop = AtomicBool::new(false);
    let out = std::thread::scope(|s| {
        let touchers = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(tracks.len() - ready);
        for _ in 0..touchers {
            s.spawn(|| {
                // Each call touches one ring: the work is in the condition.
                let mut more = true;
                while more && !stop.load(Ordering::Relaxed) {
                    more = gate.touch_next(&tracks);
                }
            });
        }
        let out = run_tracks(spec, (play, record), &tracks, device, early, ctl, &gate);
        // A run that ended early (failed, interrupted) does not wait for the rest.
        stop.store(true, Ordering::Relaxed);
        out
    });
    // Only memory that was touched is kept for the next run's rings.
    let ready = gate.count();
    give_back(tracks, ready, rings);
    out
}

/// The tracks of a run on `play` and `record`, their rings' memory lent by `rings` (the first
/// `ready` of them touched already).
fn lend_tracks(
    spec: &StreamSpec,
    (play, record): (&[StreamFile<'_>], &[StreamFile<'_>]),
    rings: &mut RingMemory,
) -> Result<(Vec<Track>, usize)> {
    let (cap, chunk) = (spec.ring_bytes(), spec.ring_slot_bytes());
    let (bufs, ready) = rings.lend(
        play.len() + record.len(),
        Ring::capacity_for_bytes(cap, chunk) as usize,
    )?;
    let tracks = play
        .iter()
        .map(|f| (Direction::Play, f))
        .chain(record.iter().map(|f| (Direction::Record, f)))
        .zip(bufs)
        .enumerate()
        .map(|(i, ((dir, f), buf))| {
            let ring = Ring::from_buf(cap, chunk, buf);
            Track::new(dir, ring, i as u32, f.content_id, f.data_start, f.data_len)
        })
        .collect();
    Ok((tracks, ready))
}

/// Gives the tracks' ring memory back to `rings`: the first `ready`, which were touched, for
/// the next run.
fn give_back(tracks: Vec<Track>, ready: usize, rings: &mut RingMemory) {
    for (i, t) in tracks.into_iter().enumerate() {
        if let Some(m) = t.ring.into_memory()
            && i < ready
        {
            rings.give(m);
        }
    }
}

/// `run` on tracks whose rings are ready.
fn run_tracks(
    spec: &StreamSpec,
    (play, record): (&[StreamFile<'_>], &[StreamFile<'_>]),
    tracks: &[Track],
    device: Option<&crate::target::DeviceInfo>,
    early: Option<&dyn EarlyEnd>,
    ctl: &Control<'_>,
    gate: &RingsReady,
) -> Result<(TracksRun, Vec<u64>)> {
    let files: Vec<&File> = play.iter().chain(record).map(|f| f.file).collect();
    let names: Vec<PathBuf> = play.iter().chain(record).map(|f| f.path.clone()).collect();
    let (mut backend, mut locate) = backends(spec, &files)?;
    let e = stream_loop::run(
        spec,
        tracks,
        backend.as_mut(),
        locate
            .as_mut()
            .map(|l| l.as_mut() as &mut dyn crate::io::IoBackend),
        &RealTime,
        Tick::new(spec.period_bytes(), spec.period_ns(), spec.ticks()),
        &mut Tracks,
        &Files {
            names: &names,
            page_cache: (!spec.policy.direct).then_some(&files[..]),
            drop_behind: false,
            rings_ready: Some(gate),
        },
        device,
        early,
        ctl,
    )?;
    if let Some((track, off)) = e.side.played.verify_error {
        return Err(Error::Verify {
            path: names[track as usize].clone(),
            offset: off,
            detail: "the audio tick played data that is not what was written there (its tag or its noise differs)".into(),
        });
    }
    let written: Vec<u64> = tracks
        .iter()
        .filter(|t| t.dir == Direction::Record)
        .map(|t| t.ring.consumed())
        .collect();
    let mut run = TracksRun::of(tracks, spec.ring_bytes(), e, false);
    run.peak_rss_bytes = peak_rss_bytes();
    Ok((run, written))
}

/// A run's butler backend and its locate's ([`backends`]).
pub(super) type Backends = (Box<dyn IoBackend>, Option<Box<dyn IoBackend>>);

/// The butler's backend for a real run of `spec` on `files` (serial or parallel; a serial one
/// through the page cache in the read calls of a library's small buffer, where the program
/// reads through libsndfile's), and a deeper queue for its locate (a search's probes, whose
/// locate is not what they measure; none where the locate fills rings from the files' content).
pub(super) fn backends(spec: &StreamSpec, files: &[&File]) -> Result<Backends> {
    let io = IoSettings {
        backend: match spec.butler {
            ButlerMode::Serial => BackendKind::Sync,
            ButlerMode::Parallel(_) => BackendKind::PARALLEL,
        },
        queue_depth: spec.butler.queue_depth() as u32,
        cached: !spec.policy.direct,
    };
    let backend = match (spec.butler, spec.policy.syscall_bytes) {
        (ButlerMode::Serial, Some(calls)) if io.cached => {
            Box::new(crate::io::sync::SyncBackend::new(files, 4096)?.with_read_calls(Some(calls)))
        }
        _ => io.build(files, 4096)?,
    };
    let from_content = spec.locate_from_content && spec.policy.direct;
    let locate = match spec.locate_queue_depth {
        Some(q) if spec.play_tracks > 0 && !from_content => Some(
            IoSettings {
                backend: BackendKind::PARALLEL,
                queue_depth: q,
                cached: io.cached,
            }
            .build(files, 4096)?,
        ),
        _ => None,
    };
    Ok((backend, locate))
}

/// The process's peak resident memory (VmHWM), for the memory-beyond-rings figure.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
