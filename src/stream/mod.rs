//! The real-time streaming model: per-track rings, the audio tick, the butler's policies, xrun
//! accounting and telemetry — run against real disks with threads, or against a simulated device
//! in virtual time, with the same ring, policy and accounting code.

pub mod butler;
pub mod profile;
pub mod real;
pub mod sim;

pub mod ring;

pub mod telemetry;
pub mod tick;

use crate::audio::Format;
use crate::error::{Error, Result};
use crate::stats::LatencySummary;
use ring::Ring;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

pub use profile::{Order, Policy};
pub use telemetry::Sustain;

/// Which way a track's data flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Disk -> ring -> audio tick.
    Play,
    /// Audio tick -> ring -> disk.
    Record,
}

/// How the butler issues I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "queue_depth")]
pub enum ButlerMode {
    /// One request at a time, like most DAWs' disk threads.
    Serial,
    /// Up to this many requests in flight through io_uring.
    Parallel(u32),
}

impl ButlerMode {
    /// Parses `serial` or `parallel:QD`.
    pub fn parse(s: &str) -> Result<ButlerMode> {
        let bad = || {
            Error::invalid(
                "butler",
                s,
                "serial, or parallel:QD with QD from 2 to 1024 (e.g. parallel:8)",
            )
        };
        match s.trim() {
            "serial" => Ok(ButlerMode::Serial),
            p => {
                let qd = p.strip_prefix("parallel:").ok_or_else(bad)?;
                match qd.parse::<u32>() {
                    Ok(q) if (2..=1024).contains(&q) => Ok(ButlerMode::Parallel(q)),
                    _ => Err(bad()),
                }
            }
        }
    }

    pub fn queue_depth(&self) -> usize {
        match self {
            ButlerMode::Serial => 1,
            ButlerMode::Parallel(q) => *q as usize,
        }
    }
}

impl std::fmt::Display for ButlerMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ButlerMode::Serial => write!(f, "serial"),
            ButlerMode::Parallel(q) => write!(f, "parallel:{q}"),
        }
    }
}

/// Everything one streaming run needs to know.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamSpec {
    pub format: Format,
    pub play_tracks: u32,
    pub record_tracks: u32,
    /// Frames per audio period (the tick).
    pub period_frames: u32,
    pub duration_ns: u64,
    /// A ring below this share of its capacity (playback: data left; capture: room left) makes the
    /// run marginal.
    pub margin: f64,
    pub policy: Policy,
    pub butler: ButlerMode,
    /// Spread the tracks' starting points over one chunk, instead of starting them in phase.
    pub stagger: bool,
    /// Preallocate record files instead of letting them grow as written.
    pub prealloc: bool,
    /// Prefill the rings with this many reads in flight (io_uring) whatever the butler, to save
    /// time where the locate is not what is measured (the probes of a search). None: the butler
    /// itself prefills, as a program does, and the locate time is the program's.
    #[serde(default)]
    pub locate_queue_depth: Option<u32>,
}

impl StreamSpec {
    pub fn tracks(&self) -> u32 {
        self.play_tracks + self.record_tracks
    }
    pub fn period_bytes(&self) -> u64 {
        u64::from(self.period_frames) * self.format.bytes_per_frame()
    }
    pub fn period_ns(&self) -> u64 {
        u64::from(self.period_frames) * 1_000_000_000 / u64::from(self.format.rate_hz)
    }
    pub fn ticks(&self) -> u64 {
        self.duration_ns / self.period_ns()
    }
    pub fn ring_bytes(&self) -> u64 {
        Ring::capacity_for(
            self.policy.buffer_s,
            self.format.bytes_per_second(),
            self.policy.chunk_bytes,
        )
    }
    /// The buffer memory of all rings.
    pub fn ram_bytes(&self) -> u64 {
        self.ring_bytes() * u64::from(self.tracks())
    }

    /// Checks the combination, naming what is wrong.
    pub fn validate(&self) -> Result<()> {
        if self.tracks() == 0 {
            return Err(Error::invalid(
                "tracks",
                0,
                "at least one playback or record track",
            ));
        }
        if self.tracks() > 100_000 {
            return Err(Error::invalid("tracks", self.tracks(), "at most 100000"));
        }
        if !(16..=65_536).contains(&self.period_frames) {
            return Err(Error::invalid(
                "period",
                self.period_frames,
                "16 to 65536 frames (e.g. 64, 256, 1024)",
            ));
        }
        if !(0.0..1.0).contains(&self.margin) {
            return Err(Error::invalid(
                "margin",
                format!("{}%", self.margin * 100.0),
                "0% to 99%",
            ));
        }
        self.policy.validate()?;
        if self.ring_bytes() < 2 * self.policy.chunk_bytes
            || self.ring_bytes() < self.period_bytes() * 2
        {
            return Err(Error::invalid(
                "buffer",
                format!("{}s", self.policy.buffer_s),
                "at least two chunks and two periods of audio",
            ));
        }
        if self.ticks() == 0 {
            return Err(Error::invalid(
                "duration",
                format!("{} ns", self.duration_ns),
                "at least one audio period",
            ));
        }
        Ok(())
    }
}

/// One track: its ring, where its data lives, and the tick's accounting.
pub struct Track {
    pub dir: Direction,
    pub ring: Ring,
    /// Content id of its file's tags.
    pub content_id: u32,
    /// Where the audio data starts in the file.
    pub data_start: u64,
    /// Playback: the file's audio length (reads wrap at its end). Record: the most it may hold.
    pub data_len: u64,
    /// Where the track sits on a simulated device (bytes), for seek distances.
    pub device_base: u64,
    // Written by the tick only.
    pub xruns: AtomicU32,
    pub first_xrun_ns: AtomicU64,
    /// Lowest headroom seen (playback: bytes left after a period; capture: room left).
    pub min_headroom: AtomicU64,
}

impl Track {
    pub fn new(
        dir: Direction,
        ring: Ring,
        content_id: u32,
        data_start: u64,
        data_len: u64,
        device_base: u64,
    ) -> Track {
        let cap = ring.capacity();
        Track {
            dir,
            ring,
            content_id,
            data_start,
            data_len,
            device_base,
            xruns: AtomicU32::new(0),
            first_xrun_ns: AtomicU64::new(u64::MAX),
            min_headroom: AtomicU64::new(cap),
        }
    }

    /// Playback: bytes in the ring. Capture: room in the ring.
    pub fn headroom(&self) -> u64 {
        match self.dir {
            Direction::Play => self.ring.fill(),
            Direction::Record => self.ring.free(),
        }
    }

    /// The file offset of stream byte `pos` (playback wraps at the end of the audio).
    pub fn file_offset(&self, pos: u64) -> u64 {
        match self.dir {
            Direction::Play => self.data_start + pos % self.data_len,
            Direction::Record => self.data_start + pos,
        }
    }

    pub(crate) fn note_xrun(&self, t_ns: u64) {
        self.xruns.fetch_add(1, Ordering::Relaxed);
        if self.first_xrun_ns.load(Ordering::Relaxed) == u64::MAX {
            self.first_xrun_ns.store(t_ns, Ordering::Relaxed);
        }
    }
}

/// The outcome of a run: pass, marginal (a ring fell below the margin) or fail (any xrun).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Marginal,
    Fail,
}

/// What one track went through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrackReport {
    pub index: u32,
    pub dir: Direction,
    pub xruns: u32,
    pub first_xrun_ms: Option<f64>,
    /// Lowest headroom as a share of the ring, in percent.
    pub min_headroom_pct: f64,
}

/// One point of the fill-over-time chart: the worst and the mean headroom over all tracks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FillPoint {
    pub t_ms: f64,
    pub worst_pct: f64,
    pub mean_pct: f64,
}

/// Everything a streaming run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StreamOutcome {
    pub verdict: Verdict,
    pub play_tracks: u32,
    pub record_tracks: u32,
    /// Time to prefill the playback rings before the clock started.
    pub locate_ms: f64,
    pub ran_ms: f64,
    pub ticks: u64,
    pub underruns: u64,
    pub overruns: u64,
    pub first_xrun_ms: Option<f64>,
    /// Lowest headroom of any ring, in percent of its capacity.
    pub worst_headroom_pct: f64,
    pub tracks: Vec<TrackReport>,
    pub fill: Vec<FillPoint>,
    /// Whether the butler kept up in the steady part of the run (runs of two refill cycles or
    /// more after the first ring has played).
    pub sustain: Option<Sustain>,
    pub read_bytes: u64,
    pub written_bytes: u64,
    pub read_latency: Option<LatencySummary>,
    pub write_latency: Option<LatencySummary>,
    /// The audio tick's wake-up lateness (real runs).
    pub tick_lateness: Option<LatencySummary>,
    /// SCHED_FIFO and mlockall both granted.
    pub realtime: bool,
    pub realtime_note: Option<String>,
    pub tick_cpu_pct: f64,
    pub butler_cpu_pct: f64,
    pub ring_bytes_per_track: u64,
    pub ram_bytes: u64,
    /// Allocations the audio tick made inside its loop (when the program counts them).
    pub realtime_allocations: Option<u64>,
    /// Peak resident memory of the process (real runs).
    pub peak_rss_bytes: Option<u64>,
    pub interrupted: bool,
    pub simulated: bool,
}

impl StreamOutcome {
    pub fn xruns(&self) -> u64 {
        self.underruns + self.overruns
    }
}

/// A run whose rings drain by more than this share of the demand is marginal even if no ring
/// reached the margin yet: it only ran too short to get there.
/// Two percent: the precision a search's answer is given to, and above the noise of a steady
/// run on a shared virtual disk (-3.5..-0.5% measured at 65..100% of the answer).
pub const SHORTFALL_LIMIT_PCT: f64 = 2.0;

/// Seconds of audio between a ring's refills (playback) or flushes (capture), the longer of the
/// two, and the ring's length in seconds.
fn cycle_and_ring_s(spec: &StreamSpec) -> (f64, f64) {
    let rate = spec.format.bytes_per_second() as f64;
    let mut cycle = 0u64;
    if spec.play_tracks > 0 {
        cycle = spec
            .policy
            .read_len(spec.policy.refill_at_bytes)
            .max(spec.policy.refill_at_bytes);
    }
    if spec.record_tracks > 0 {
        cycle = cycle.max(spec.policy.write_bytes);
    }
    (cycle as f64 / rate, spec.ring_bytes() as f64 / rate)
}

/// The shortest run whose fill trend can be judged: the first ring played, then two cycles.
pub fn sustain_min_s(spec: &StreamSpec) -> f64 {
    let (cycle_s, ring_s) = cycle_and_ring_s(spec);
    ring_s.max(cycle_s) + 2.0 * cycle_s
}

/// The fill trend after the first ring has played, over whole refill cycles.
fn sustain_of(spec: &StreamSpec, fill: &[FillPoint]) -> Option<Sustain> {
    let (cycle_s, ring_s) = cycle_and_ring_s(spec);
    telemetry::sustain(
        fill,
        1000.0 * ring_s.max(cycle_s),
        1000.0 * cycle_s,
        ring_s,
        spec.margin,
    )
}

/// With `--stagger`, spreads the tracks' positions over one chunk: track k starts k/T of a chunk
/// further on, so their refill thresholds do not all fall on the same tick.
pub fn stagger(spec: &StreamSpec, tracks: &[Track]) {
    if !spec.stagger {
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
                    tick::record_bytes(t, off);
                }
                t.ring.commit_produce(off);
            }
        }
    }
}

/// Gathers the tick's and the tracks' accounting into an outcome; the caller adds I/O figures.
pub(crate) fn assemble(
    spec: &StreamSpec,
    tracks: &[Track],
    tick: tick::Tick,
    locate_ns: u64,
    ran_ns: u64,
    interrupted: bool,
) -> StreamOutcome {
    let cap = spec.ring_bytes();
    let reports: Vec<TrackReport> = tracks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let first = t.first_xrun_ns.load(Ordering::Relaxed);
            TrackReport {
                index: i as u32,
                dir: t.dir,
                xruns: t.xruns.load(Ordering::Relaxed),
                first_xrun_ms: (first != u64::MAX).then(|| first as f64 / 1e6),
                min_headroom_pct: 100.0 * t.min_headroom.load(Ordering::Relaxed) as f64
                    / cap as f64,
            }
        })
        .collect();
    let first_xrun_ms = reports
        .iter()
        .filter_map(|r| r.first_xrun_ms)
        .min_by(f64::total_cmp);
    let worst_headroom_pct = if tick.ticks == 0 {
        100.0
    } else {
        100.0 * tick.worst
    };
    let fill = tick.series.finish();
    let sustain = sustain_of(spec, &fill);
    let verdict = if tick.underruns + tick.overruns > 0 {
        Verdict::Fail
    } else if worst_headroom_pct < 100.0 * spec.margin
        || sustain.is_some_and(|s| s.shortfall_pct > SHORTFALL_LIMIT_PCT)
    {
        Verdict::Marginal
    } else {
        Verdict::Pass
    };
    StreamOutcome {
        verdict,
        play_tracks: spec.play_tracks,
        record_tracks: spec.record_tracks,
        locate_ms: locate_ns as f64 / 1e6,
        ran_ms: ran_ns as f64 / 1e6,
        ticks: tick.ticks,
        underruns: tick.underruns,
        overruns: tick.overruns,
        first_xrun_ms,
        worst_headroom_pct,
        tracks: reports,
        fill,
        sustain,
        read_bytes: 0,
        written_bytes: 0,
        read_latency: None,
        write_latency: None,
        tick_lateness: None,
        realtime: false,
        realtime_note: None,
        tick_cpu_pct: 0.0,
        butler_cpu_pct: 0.0,
        ring_bytes_per_track: cap,
        ram_bytes: cap * u64::from(spec.tracks()),
        realtime_allocations: None,
        peak_rss_bytes: None,
        interrupted,
        simulated: false,
    }
}
