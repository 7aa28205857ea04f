//! The one streaming loop, for real disks and simulated devices alike: the locate (every
//! playback ring prefilled), then the butler — planning requests, issuing them through an
//! [`IoBackend`] and booking their completions — while the audio tick plays, then the drain and
//! the capture rings' last flush.
//!
//! A real run and a simulated one differ only in what is plugged in: the backend (a disk's, or
//! the device model's, `io::device_model`) and the [`Timing`] (a real-time tick thread on the monotonic
//! clock, or the tick run inline on a virtual clock). What a tick does — a fixed set of tracks,
//! or note-ons and voices — is the scenario's [`TickSide`], with its [`ButlerSide`] for what the
//! butler must do in between (voices starting and stopping).

use super::butler::Butler;
use super::seams::{
    ButlerSide, EarlyEnd, EngineOut, Files, TickDriver, TickReport, TickSide, Timing,
};
use super::shape::head_start_bytes;
use super::telemetry::IdleLog;
use super::{Direction, FillPoint, StreamSpec, Track};
use crate::clock::Clock;
use crate::control::Control;
use crate::error::Result;
use crate::io::IoBackend;
use crate::stats::{CpuWait, LatencyHist, thread_cpu_s};
use crate::target::DeviceInfo;
use std::sync::atomic::{AtomicBool, Ordering};

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
    let mut b = Butler::new(&spec.policy, tracks.len(), backend, files);
    if butler_side.uniform_ticks()
        && tracks
            .iter()
            .all(|t| t.ring.capacity() == tracks[0].ring.capacity())
    {
        b.planner.set_uniform_ticks(spec.period_bytes());
    }
    let locate_ns = super::locate::locate::<Tm>(spec, tracks, &mut b, locate, clock, device, ctl)?;
    // The workstations of a studio start their clocks together (alone, at once).
    ctl.world.start("clock start", ctl.cancel)?;
    start_clock(spec, tracks, &mut b);
    let rolled = roll(
        spec,
        tracks,
        &mut b,
        timing,
        side,
        butler_side,
        device,
        early,
        ctl,
    );
    let (side, tick, r) = rolled.inspect_err(|_| {
        let _ = b.drain(tracks, clock);
    })?;
    // Finish what is in flight, then write out what the capture rings still hold.
    b.drain(tracks, clock)?;
    if spec.record_tracks > 0 {
        b.flush_capture(tracks, clock)?;
    }
    Ok(EngineOut {
        side,
        tick,
        locate_ns,
        ran_ns: r.ran_ns,
        idle: r.idle,
        read_lat: b.read_lat,
        write_lat: b.write_lat,
        read_bytes: b.read_bytes,
        written_bytes: b.written_bytes,
        played_bytes: r.played_bytes,
        device_read_bytes: r.device_read_bytes,
        buffered: r.buffered,
        buffered_cycle_s: r.buffered_cycle_s,
        butler_cpu_s: r.butler_cpu_s,
        butler_cpu_wait_max_ms: r.cpu_wait.0,
        butler_cpu_wait_ms: r.cpu_wait.1,
    })
}

/// Where the clock starts: rates and latencies describe the run itself, not the prefill; a run
/// that starts at the first refill has played the periods before it already; staggered (or
/// steady) starts are spread over a chunk.
fn start_clock(spec: &StreamSpec, tracks: &[Track], b: &mut Butler<'_>) {
    b.read_bytes = 0;
    b.read_lat = LatencyHist::default();
    let head = head_start_bytes(spec);
    for t in tracks.iter().filter(|t| t.dir == Direction::Play) {
        t.ring.commit_consume(head.min(t.ring.fill()));
    }
    stagger(spec, tracks);
    b.planner.invalidate();
}

/// What the roll measured besides the tick and the butler's own books.
struct Rolled {
    ran_ns: u64,
    idle: IdleLog,
    played_bytes: u64,
    device_read_bytes: Option<u64>,
    buffered: Vec<FillPoint>,
    buffered_cycle_s: f64,
    butler_cpu_s: f64,
    cpu_wait: (Option<f64>, Option<f64>),
}

/// The roll: the tick plays its periods (on `timing`) while the butler loop serves the rings;
/// through the page cache a thread beside them follows what the rings and the kernel's
/// read-ahead hold together on the device's counters (the rings can stay full while the
/// device falls behind: the butler's reads are served from what the kernel read ahead, and
/// that lead is eaten instead).
#[allow(clippy::too_many_arguments)]
fn roll<Tm: Timing, T: TickSide>(
    spec: &StreamSpec,
    tracks: &[Track],
    b: &mut Butler<'_>,
    timing: &Tm,
    side: T,
    butler_side: &mut dyn ButlerSide,
    device: Option<&DeviceInfo>,
    early: Option<&dyn EarlyEnd>,
    ctl: &Control<'_>,
) -> Result<(T, TickReport, Rolled)> {
    let clock = timing.clock();
    let played = || played_bytes_of(tracks);
    let played0 = played();
    let device0 = device.and_then(|d| d.bytes_read());
    let mut r = Rolled {
        ran_ns: 0,
        idle: IdleLog::new(spec.ticks() * spec.period_ns()),
        played_bytes: 0,
        device_read_bytes: None,
        buffered: Vec::new(),
        buffered_cycle_s: 0.0,
        butler_cpu_s: 0.0,
        cpu_wait: (None, None),
    };
    let mut live = LiveSampler::new(spec, ctl);
    let buffered_device =
        device.filter(|d| Tm::REAL && b.files.page_cache.is_some() && d.bytes_read().is_some());
    let stop_sampling = AtomicBool::new(false);
    let rate = spec.format.bytes_per_second().max(1) as f64;
    r.buffered_cycle_s = buffered_device.map_or(0.0, |d| {
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
            let looked = butler_loop(
                b,
                tracks,
                butler_side,
                driver,
                clock,
                &mut r.idle,
                &mut live,
                wait.as_mut(),
                early
                    .filter(|_| spec.end_early)
                    .map(|judge| (judge, spec.period_ns())),
            );
            r.butler_cpu_s = thread_cpu_s() - cpu0;
            if let Some(w) = wait {
                let ms = |ns: Option<u64>| ns.map(|n| n as f64 / 1e6);
                r.cpu_wait = (ms(w.max_ns), ms(w.total_ns));
            }
            match looked {
                Ok(ns) => {
                    r.ran_ns = ns;
                    r.device_read_bytes = device
                        .and_then(|d| d.bytes_read())
                        .zip(device0)
                        .map(|(now, before)| now.saturating_sub(before));
                    r.played_bytes = played() - played0;
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
            r.buffered = h.join().unwrap_or_default();
        }
        ran
    })?;
    Ok((side, tick, r))
}
