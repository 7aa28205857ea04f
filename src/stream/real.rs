//! The engine on a real disk: an audio tick thread on absolute deadlines (SCHED_FIFO and mlockall
//! when granted) and a butler on the calling thread issuing the planner's requests straight into
//! and out of ring memory, serially (pread/pwrite) or in parallel (io_uring).

use super::butler::{Planner, Request};
use super::ring::{Ring, RingMemory};
use super::telemetry::IdleLog;
use super::tick::Tick;
use super::{ButlerMode, Direction, StreamOutcome, StreamSpec, Track, stagger};
use crate::clock::{Clock, RealClock};
use crate::control::{Control, ProgressUnit};
use crate::error::{Error, Result};
use crate::io::{BackendKind, Completion, IoBackend, IoSettings, Op, OpKind, completion_bytes};
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

/// SCHED_FIFO priority of the tick thread: above JACK's default 10 clients' helpers, below
/// PipeWire's 88 data loop, like a DAW's engine thread.
const TICK_PRIORITY: i32 = 70;

struct TickResult {
    tick: Tick,
    lateness: LatencyHist,
    realtime: bool,
    note: Option<String>,
    cpu_s: f64,
    interrupted: bool,
    stopped_early: bool,
    rt_allocations: u64,
}

/// Asks for SCHED_FIFO on the calling thread and locks memory; says what was refused.
fn go_realtime() -> (bool, Option<String>) {
    let mut refused = Vec::new();
    let param = libc::sched_param {
        sched_priority: TICK_PRIORITY,
    };
    // SAFETY: plain syscalls on the calling thread with valid arguments.
    let r = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if r != 0 {
        refused.push(format!(
            "SCHED_FIFO refused ({})",
            std::io::Error::from_raw_os_error(r)
        ));
    }
    if unsafe { libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) } != 0 {
        refused.push(format!(
            "mlockall refused ({})",
            std::io::Error::last_os_error()
        ));
    }
    if refused.is_empty() {
        (true, None)
    } else {
        (
            false,
            Some(format!("not real-time: {}", refused.join("; "))),
        )
    }
}

/// Runs `spec` on real files: `play` for the playback tracks, `record` for the capture tracks (new,
/// empty files of ours). Ring memory comes from `rings` and goes back to it afterwards, so the
/// probes of a search allocate it once. Returns the outcome and the bytes each record track
/// wrote.
pub fn run(
    spec: &StreamSpec,
    play: &[StreamFile<'_>],
    record: &[StreamFile<'_>],
    device: Option<&crate::target::DeviceInfo>,
    rings: &mut RingMemory,
    ctl: &Control<'_>,
) -> Result<(StreamOutcome, Vec<u64>)> {
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
    let cap = spec.ring_bytes();
    let chunk = spec.policy.chunk_bytes;
    rings.reserve(
        play.len() + record.len(),
        Ring::capacity_for_bytes(cap, chunk) as usize,
    );
    let tracks: Vec<Track> = play
        .iter()
        .map(|f| (Direction::Play, f))
        .chain(record.iter().map(|f| (Direction::Record, f)))
        .map(|(dir, f)| {
            let ring = Ring::from_memory(cap, chunk, rings);
            Track::new(dir, ring, f.content_id, f.data_start, f.data_len, 0)
        })
        .collect();
    let out = run_tracks(spec, play, record, &tracks, device, ctl);
    for t in tracks {
        if let Some(m) = t.ring.into_memory() {
            rings.give(m);
        }
    }
    out
}

/// `run` on tracks whose rings are ready.
fn run_tracks(
    spec: &StreamSpec,
    play: &[StreamFile<'_>],
    record: &[StreamFile<'_>],
    tracks: &[Track],
    device: Option<&crate::target::DeviceInfo>,
    ctl: &Control<'_>,
) -> Result<(StreamOutcome, Vec<u64>)> {
    let cap = spec.ring_bytes();
    let files: Vec<&File> = play.iter().chain(record).map(|f| f.file).collect();
    let paths: Vec<&PathBuf> = play.iter().chain(record).map(|f| &f.path).collect();
    let io = IoSettings {
        backend: match spec.butler {
            ButlerMode::Serial => BackendKind::Sync,
            ButlerMode::Parallel(_) => BackendKind::Uring,
        },
        queue_depth: spec.butler.queue_depth() as u32,
        cached: !spec.policy.direct,
    };
    let mut backend = io.build(&files, 4096)?;
    let qd = spec.butler.queue_depth();
    let mut b = Butler::new(
        &spec.policy,
        tracks.len(),
        qd,
        backend.as_mut(),
        &paths,
        &files,
    );

    // Locate: prefill every playback ring before the clock starts.
    let locate_start = Instant::now();
    ctl.progress.begin(
        "locate (prefilling rings)",
        u64::from(spec.play_tracks) * cap,
        ProgressUnit::Bytes,
    );
    match spec.locate_queue_depth {
        Some(lq) if spec.play_tracks > 0 => {
            let lio = IoSettings {
                backend: BackendKind::Uring,
                queue_depth: lq,
                cached: io.cached,
            };
            let mut lbackend = lio.build(&files, 4096)?;
            let mut lb = Butler::new(
                &spec.policy,
                tracks.len(),
                lq as usize,
                lbackend.as_mut(),
                &paths,
                &files,
            );
            lb.prefill(tracks, ctl)?;
        }
        _ => b.prefill(tracks, ctl)?,
    }
    ctl.progress.end();
    let locate = locate_start.elapsed();
    // Rates and latencies describe the run itself, not the prefill.
    b.read_bytes = 0;
    b.read_lat = LatencyHist::default();
    stagger(spec, tracks);
    b.planner.invalidate();
    let played = || -> u64 {
        tracks
            .iter()
            .filter(|t| t.dir == Direction::Play)
            .map(|t| t.ring.consumed())
            .sum()
    };
    let played0 = played();
    let device0 = device.and_then(|d| d.bytes_read());

    let period_ns = spec.period_ns();
    let total = spec.ticks();
    let stop = AtomicBool::new(false);
    let ticks_done = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    let butler_thread = std::thread::current();
    let mut idle = IdleLog::new(total * period_ns);
    let started = Instant::now();
    let mut butler_cpu = 0.0;
    let tick_result = std::thread::scope(|s| -> Result<TickResult> {
        let tracks = &tracks;
        let (stop, finished, ticks_done) = (&stop, &finished, &ticks_done);
        let butler_thread = butler_thread.clone();
        let handle = std::thread::Builder::new()
            .name("trackbench-tick".into())
            .spawn_scoped(s, move || {
                // Everything the tick needs is allocated before it asks for real-time.
                let mut tick = Tick::new(spec.period_bytes(), period_ns, total);
                let mut lateness = LatencyHist::default();
                let (realtime, note) = go_realtime();
                let clock = RealClock;
                let cpu0 = thread_cpu_s();
                let start = clock.now_ns() + period_ns;
                let mut interrupted = false;
                let mut stopped_early = false;
                let allocs0 = REALTIME_ALLOCATIONS.load(Ordering::Relaxed);
                IN_REALTIME_LOOP.with(|c| c.set(true));
                for k in 0..total {
                    if stop.load(Ordering::Relaxed) {
                        interrupted = true;
                        break;
                    }
                    let deadline = start + k * period_ns;
                    clock.sleep_until(deadline);
                    lateness.record(Duration::from_nanos(
                        clock.now_ns().saturating_sub(deadline),
                    ));
                    tick.run(tracks, k * period_ns);
                    ticks_done.store(k + 1, Ordering::Release);
                    butler_thread.unpark();
                    if spec.stop_early && super::cannot_pass(spec, &tick) {
                        stopped_early = true;
                        break;
                    }
                }
                IN_REALTIME_LOOP.with(|c| c.set(false));
                let rt_allocations = REALTIME_ALLOCATIONS.load(Ordering::Relaxed) - allocs0;
                let cpu_s = thread_cpu_s() - cpu0;
                if realtime {
                    // SAFETY: undoes this run's mlockall; nothing else in trackbench locks memory.
                    unsafe { libc::munlockall() };
                }
                finished.store(true, Ordering::Release);
                butler_thread.unpark();
                TickResult {
                    tick,
                    lateness,
                    realtime,
                    note,
                    cpu_s,
                    interrupted,
                    stopped_early,
                    rt_allocations,
                }
            })
            .map_err(|e| Error::io("cannot start the audio tick thread", e))?;

        let cpu0 = thread_cpu_s();
        let total_ms = total * period_ns / 1_000_000;
        ctl.progress
            .begin("streaming", total_ms, ProgressUnit::Millis);
        let mut last = Instant::now();
        let mut failure = None;
        let idle = &mut idle;
        while !finished.load(Ordering::Acquire) {
            if ctl.cancelled() {
                stop.store(true, Ordering::Relaxed);
            }
            b.planner.tick_seen(ticks_done.load(Ordering::Acquire));
            if let Err(e) = b.issue(tracks, false, false).and_then(|_| {
                if b.planner.in_flight() > 0 {
                    b.reap(tracks)
                } else {
                    // Nothing in flight and nothing to plan: the time until the next tick is
                    // capacity the device had to spare.
                    let t0 = started.elapsed().as_nanos() as u64;
                    std::thread::park_timeout(Duration::from_nanos(period_ns));
                    idle.add(t0, started.elapsed().as_nanos() as u64);
                    Ok(())
                }
            }) {
                stop.store(true, Ordering::Relaxed);
                failure = Some(e);
                break;
            }
            if last.elapsed() >= Duration::from_millis(100) {
                last = Instant::now();
                ctl.progress.set(started.elapsed().as_millis() as u64);
            }
        }
        ctl.progress.end();
        let joined = handle.join();
        butler_cpu = thread_cpu_s() - cpu0;
        if let Some(e) = failure {
            let _ = b.drain(tracks);
            return Err(e);
        }
        joined.map_err(|_| {
            Error::io(
                "the audio tick thread failed",
                std::io::Error::other("panic"),
            )
        })
    })?;
    let ran = started.elapsed();
    let device_read = device
        .and_then(|d| d.bytes_read())
        .zip(device0)
        .map(|(b, a)| b.saturating_sub(a));
    let played_bytes = played() - played0;
    // Finish what is in flight, then write out what the capture rings still hold.
    b.drain(tracks)?;
    if spec.record_tracks > 0 {
        loop {
            b.issue(tracks, false, true)?;
            if b.planner.in_flight() == 0 {
                break;
            }
            b.reap(tracks)?;
        }
    }
    let tr = tick_result;
    if let Some((track, off)) = tr.tick.verify_error {
        return Err(Error::Verify {
            path: paths[track as usize].clone(),
            offset: off,
            detail: "the audio tick played data that is not what was written there (its tag or its noise differs)".into(),
        });
    }
    let written: Vec<u64> = tracks
        .iter()
        .filter(|t| t.dir == Direction::Record)
        .map(|t| t.ring.consumed())
        .collect();
    let ran_s = ran.as_secs_f64().max(f64::MIN_POSITIVE);
    let mut out = super::assemble(
        spec,
        tracks,
        tr.tick,
        super::RunEnd {
            locate_ns: locate.as_nanos() as u64,
            ran_ns: ran.as_nanos() as u64,
            interrupted: tr.interrupted,
            stopped_early: tr.stopped_early,
            idle: &idle,
            simulated: false,
        },
    );
    out.read_bytes = b.read_bytes;
    out.written_bytes = b.written_bytes;
    out.played_bytes = played_bytes;
    out.device_read_bytes = device_read;
    out.read_latency = (b.read_lat.count() > 0).then(|| b.read_lat.summary());
    out.write_latency = (b.write_lat.count() > 0).then(|| b.write_lat.summary());
    out.tick_lateness = (tr.lateness.count() > 0).then(|| tr.lateness.summary());
    out.realtime = tr.realtime;
    out.realtime_note = tr.note;
    out.tick_cpu_pct = 100.0 * tr.cpu_s / ran_s;
    out.butler_cpu_pct = 100.0 * butler_cpu / ran_s;
    out.realtime_allocations = ALLOCATIONS_COUNTED
        .load(Ordering::Relaxed)
        .then_some(tr.rt_allocations);
    out.peak_rss_bytes = peak_rss_bytes();
    Ok((out, written))
}

/// The butler's side of a real run: turns planned requests into backend operations on ring
/// memory and books their completions.
struct Butler<'a, 'b> {
    planner: Planner,
    backend: &'b mut dyn IoBackend,
    pending: Vec<Option<(Request, Instant)>>,
    free_slots: Vec<u32>,
    planned: Vec<Request>,
    done: Vec<Completion>,
    read_lat: LatencyHist,
    write_lat: LatencyHist,
    read_bytes: u64,
    written_bytes: u64,
    paths: &'a [&'a PathBuf],
    /// Through the page cache: the files, to drop each range once it is read.
    drop_behind: Option<&'a [&'a File]>,
}

impl<'a, 'b> Butler<'a, 'b> {
    fn new(
        policy: &super::Policy,
        tracks: usize,
        qd: usize,
        backend: &'b mut dyn IoBackend,
        paths: &'a [&'a PathBuf],
        files: &'a [&'a File],
    ) -> Self {
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
            paths,
            // A DAW streams long takes and never reads a byte twice; test files are shorter
            // and wrap. Dropping what was read keeps the wrapped pass cold, while read-ahead
            // beyond the read position stays cached, as it does for the program.
            drop_behind: (!policy.direct).then_some(files),
        }
    }

    /// Fills every playback ring.
    fn prefill(&mut self, tracks: &[Track], ctl: &Control<'_>) -> Result<()> {
        loop {
            if ctl.cancelled() {
                self.drain(tracks)?;
                return Err(Error::Interrupted);
            }
            self.issue(tracks, true, false)?;
            if self.planner.in_flight() == 0 {
                return Ok(());
            }
            self.reap(tracks)?;
            ctl.progress.set(self.read_bytes);
        }
    }

    fn issue(&mut self, tracks: &[Track], play_only: bool, final_flush: bool) -> Result<()> {
        self.planned.clear();
        self.planner
            .plan(tracks, play_only, final_flush, &mut self.planned);
        for i in 0..self.planned.len() {
            let r = self.planned[i];
            let t = &tracks[r.track as usize];
            // SAFETY: the planner hands out a region of the ring owned by the butler (free space for
            // a read, filled data for a write) until the request is booked complete.
            let ptr = unsafe { t.ring.ptr(r.ring_offset) }.expect("real runs have ring memory");
            let slot = self
                .free_slots
                .pop()
                .expect("the planner stays within the queue depth");
            // Stamped before submitting: a synchronous backend finishes inside submit().
            self.pending[slot as usize] = Some((r, Instant::now()));
            self.backend.submit(Op {
                kind: r.kind,
                file: r.track,
                offset: r.file_offset,
                len: r.len as u32,
                slot,
                external: ptr,
            })?;
        }
        Ok(())
    }

    /// Books at least one completion. Every completion is booked, even a failed one, so the count
    /// in flight stays true; the first failure is returned after all are booked.
    fn reap(&mut self, tracks: &[Track]) -> Result<()> {
        self.done.clear();
        self.backend.complete(1, &mut self.done)?;
        let now = Instant::now();
        let mut first_err = None;
        for k in 0..self.done.len() {
            let c = self.done[k];
            let (r, sent) = self.pending[c.slot as usize]
                .take()
                .expect("completion of a pending request");
            self.free_slots.push(c.slot);
            self.planner.complete(tracks, &r);
            let path = self.paths[r.track as usize];
            let op = if r.kind == OpKind::Read {
                "read"
            } else {
                "write"
            };
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
            match r.kind {
                OpKind::Read => {
                    self.read_lat.record(now - sent);
                    self.read_bytes += n;
                    if let Some(files) = self.drop_behind {
                        crate::dataset::drop_pages(files[r.track as usize], r.file_offset, r.len);
                    }
                }
                OpKind::Write => {
                    self.write_lat.record(now - sent);
                    self.written_bytes += n;
                }
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Waits for everything in flight (ring memory must not be freed under the kernel).
    fn drain(&mut self, tracks: &[Track]) -> Result<()> {
        let mut first_err = None;
        while self.planner.in_flight() > 0 {
            let before = self.planner.in_flight();
            if let Err(e) = self.reap(tracks) {
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

/// The process's peak resident memory (VmHWM), for the memory-beyond-rings figure.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
