//! The real-time streaming model: per-track rings, the audio tick, the butler's policies, xrun
//! accounting and telemetry — run against real disks with threads, or against a simulated device
//! in virtual time, with the same ring, policy and accounting code.

pub mod butler;
pub mod profile;
pub mod real_time;
pub mod spsc;
pub mod stream_loop;
pub mod virtual_time;
pub mod voices;

pub mod ring;

pub mod telemetry;
pub mod tick;

use crate::audio::Format;
use crate::error::{Error, Result};
use crate::stats::{Histogram, LatencySummary};
use ring::Ring;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

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
    /// Fill the playback rings with what their files hold there instead of reading it, where
    /// the reads bypass the page cache (a search's probes): a ring filled so holds, byte for
    /// byte, what a locate would have read into it, and what a probe judges is the roll after
    /// it. Through the page cache the locate's reads shape the kernel's read-ahead, and a
    /// real locate is kept.
    #[serde(default)]
    pub locate_from_content: bool,
    /// Start the clock where the first refill falls due (a search's real probes of playback
    /// with direct reads, tracks in phase): each playback ring begins with the periods already
    /// played in which, from full rings, no ring would yet have room for a read
    /// ([`head_start_bytes`]). Nothing is read and nothing can fail in them, and from there on
    /// the run is the one from full rings, that much earlier: its verdict's windows (the first
    /// ring, the steady cycles) move with it, and a run of D seconds so started is the full
    /// start's run of D plus the head start.
    #[serde(default)]
    pub start_at_first_refill: bool,
    /// Stop as soon as the run cannot pass any more (an xrun, or a ring below the margin), as a
    /// search's probe does: the rest of the run would only cost time.
    #[serde(default)]
    pub stop_early: bool,
    /// Start in the steady state (a search's real probes of direct playback whose rings the
    /// in-phase start does not bind, [`steady_start_allowed`]; never its confirmations): the
    /// tracks' starts are spread over one chunk as with `stagger`, so that from the first
    /// period the refills fall due one after another as they do once a run has settled, and
    /// the verdict's steady part follows a warm-up of two refill cycles and at least 3.5 s
    /// ([`steady_warmup_s`]) instead of the first ring. The steady part itself, and all it
    /// must show, is the full run's.
    #[serde(default)]
    pub steady_start: bool,
    /// End the run as soon as its verdict is beyond doubt: once it is as long as the shortest
    /// run that can pass ([`early_end_at_ns`]), with the butler idle at least
    /// [`EARLY_PASS_IDLE_PCT`] over the steady part so far and its later half (a pass) or under
    /// [`early_fail_idle_pct`] (a failure: the device had no time to spare). A search's real
    /// probes that only steer it, started in the steady state; never its confirmations. Its
    /// verdict is the rule's, over the run as it ran.
    #[serde(default, alias = "pass_early")]
    pub end_early: bool,
}

impl StreamSpec {
    /// All tracks; saturating, so that absurd counts reach `validate` and are refused there.
    pub fn tracks(&self) -> u32 {
        self.play_tracks.saturating_add(self.record_tracks)
    }
    pub fn period_bytes(&self) -> u64 {
        u64::from(self.period_frames) * self.format.bytes_per_frame()
    }
    pub fn period_ns(&self) -> u64 {
        u64::from(self.period_frames) * 1_000_000_000 / u64::from(self.format.rate_hz)
    }
    /// Audio periods the run plays: enough to cover the duration (a run of 2 s at a 65536-frame
    /// period plays two periods, 2.73 s, not one of 1.37 s). Counted in frames, so a duration of
    /// whole periods is exactly that many.
    pub fn ticks(&self) -> u64 {
        let frames = u128::from(self.duration_ns) * u128::from(self.format.rate_hz);
        let per_tick = u128::from(self.period_frames) * 1_000_000_000;
        u64::try_from(frames.div_ceil(per_tick)).unwrap_or(u64::MAX)
    }
    pub fn ring_bytes(&self) -> u64 {
        match self.policy.ring_reserve_frames {
            Some(reserve) => {
                let frames = (self.policy.buffer_s * f64::from(self.format.rate_hz)).floor() as u64;
                Ring::reserved_capacity_frames(frames, reserve) * self.format.bytes_per_frame()
            }
            None => Ring::capacity_for(
                self.policy.buffer_s,
                self.format.bytes_per_second(),
                self.policy.chunk_bytes,
                self.policy.min_ring_chunks,
            ),
        }
    }
    /// The unit a ring's memory comes in, which divides `ring_bytes`: the chunk, or for a
    /// ring with a reservation (a power of two of frames less reservation + 1) reservation + 1
    /// frames.
    pub fn ring_slot_bytes(&self) -> u64 {
        match self.policy.ring_reserve_frames {
            Some(reserve) => (reserve + 1) * self.format.bytes_per_frame(),
            None => self.policy.chunk_bytes,
        }
    }
    /// Seconds of audio a ring really holds (whole chunks, at least the policy's minimum, or the
    /// program's own geometry: see `ring_bytes`).
    pub fn ring_s(&self) -> f64 {
        self.ring_bytes() as f64 / self.format.bytes_per_second() as f64
    }
    /// Where the ring is larger than `--buffer` asked for (whole chunks, the policy's fewest
    /// chunks): the seconds asked for and why it grew. Rounding up to the next chunk is not
    /// reported; raising to the minimum count of chunks is.
    pub fn ring_raised(&self) -> Option<(f64, u64)> {
        if self.policy.ring_reserve_frames.is_some() {
            return None;
        }
        let asked = (self.policy.buffer_s * self.format.bytes_per_second() as f64).ceil() as u64;
        let min = self.policy.min_ring_chunks.max(2);
        (asked.div_ceil(self.policy.chunk_bytes) < min).then_some((self.policy.buffer_s, min))
    }
    /// The buffer memory of all rings.
    pub fn ram_bytes(&self) -> u64 {
        self.ring_bytes() * u64::from(self.tracks())
    }

    /// What the butler holds beside the rings: a `read_whole` profile's own buffer for each
    /// request it keeps in flight (a refill that runs past a ring's end is read whole into it
    /// and copied), each at most one read and at most a ring. Nothing for other profiles,
    /// whose reads land in ring memory.
    pub fn butler_buffer_bytes(&self) -> u64 {
        if !self.policy.read_whole || self.play_tracks == 0 {
            return 0;
        }
        let ring = Ring::capacity_for_bytes(self.ring_bytes(), self.ring_slot_bytes());
        self.butler.queue_depth() as u64 * self.policy.read_max_bytes.min(ring)
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
        // A ring must hold what a refill waits for and still play while it is read: two
        // chunks, or for a program's ring of its own geometry its refill threshold and two
        // periods more.
        let least = match self.policy.ring_reserve_frames {
            Some(_) => self.policy.refill_at_bytes + 2 * self.period_bytes(),
            None => 2 * self.policy.chunk_bytes,
        };
        if self.ring_bytes() < least || self.ring_bytes() < self.period_bytes() * 2 {
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

/// One stream: a track's ring (or a sampler voice's), the file it streams from or to, and the
/// tick's accounting.
///
/// A track is bound to one file for the whole run. A sampler voice is bound again at every note:
/// the binding is atomic, written by the butler only while nothing of the voice is in flight, and
/// published to the tick through the scenario's own hand-over.
pub struct Track {
    pub dir: Direction,
    pub ring: Ring,
    /// The file in the backend's table.
    file: AtomicU32,
    /// Content id of the file's tags.
    content_id: AtomicU32,
    /// Where the stream's byte 0 lies in the file.
    data_start: AtomicU64,
    /// Playback: the stream's length (a track's reads wrap at its end, a voice stops there).
    /// Record: the most it may hold.
    data_len: AtomicU64,
    /// A track loops its file; a voice plays its sample once.
    wraps: bool,
    /// The butler may plan requests for it (a voice between notes may not).
    active: AtomicBool,
    // Written by the tick only.
    pub xruns: AtomicU32,
    pub first_xrun_ns: AtomicU64,
    /// Lowest headroom seen (playback: bytes left after a period; capture: room left).
    pub min_headroom: AtomicU64,
}

impl Track {
    /// A track streaming `data_len` bytes of `file` (the backend's file `file`, content id
    /// `content_id`) from `data_start` on; playback wraps at its end.
    pub fn new(
        dir: Direction,
        ring: Ring,
        file: u32,
        content_id: u32,
        data_start: u64,
        data_len: u64,
    ) -> Track {
        let cap = ring.capacity();
        Track {
            dir,
            ring,
            file: AtomicU32::new(file),
            content_id: AtomicU32::new(content_id),
            data_start: AtomicU64::new(data_start),
            data_len: AtomicU64::new(data_len),
            wraps: true,
            active: AtomicBool::new(true),
            xruns: AtomicU32::new(0),
            first_xrun_ns: AtomicU64::new(u64::MAX),
            min_headroom: AtomicU64::new(cap),
        }
    }

    /// A sampler voice: a playback stream bound to no file until its first note.
    pub fn voice(ring: Ring) -> Track {
        let mut t = Track::new(Direction::Play, ring, 0, 0, 0, 0);
        t.wraps = false;
        *t.active.get_mut() = false;
        t
    }

    /// Binds the stream to `len` bytes of `file` from `start` on, with an empty ring. The
    /// butler calls it while nothing of this stream is in flight and the tick leaves its ring
    /// alone (the scenario's hand-over publishes it).
    pub fn rebind(&self, file: u32, content_id: u32, start: u64, len: u64) {
        self.ring.reset();
        self.file.store(file, Ordering::Relaxed);
        self.content_id.store(content_id, Ordering::Relaxed);
        self.data_start.store(start, Ordering::Relaxed);
        self.data_len.store(len, Ordering::Relaxed);
        self.active.store(len > 0, Ordering::Release);
    }

    /// Stops planning requests for the stream (a voice whose note ended or was stolen).
    pub fn deactivate(&self) {
        self.active.store(false, Ordering::Release);
    }

    pub fn active(&self) -> bool {
        self.active.load(Ordering::Acquire)
    }
    pub fn file(&self) -> u32 {
        self.file.load(Ordering::Relaxed)
    }
    pub fn content_id(&self) -> u32 {
        self.content_id.load(Ordering::Relaxed)
    }
    pub fn data_start(&self) -> u64 {
        self.data_start.load(Ordering::Relaxed)
    }
    pub fn data_len(&self) -> u64 {
        self.data_len.load(Ordering::Relaxed)
    }
    pub fn wraps(&self) -> bool {
        self.wraps
    }

    /// Playback: bytes in the ring. Capture: room in the ring.
    pub fn headroom(&self) -> u64 {
        match self.dir {
            Direction::Play => self.ring.fill(),
            Direction::Record => self.ring.free(),
        }
    }

    /// The file offset of stream byte `pos` (a track's playback wraps at the end of the audio).
    pub fn file_offset(&self, pos: u64) -> u64 {
        let start = self.data_start();
        match self.dir {
            Direction::Play if self.wraps => start + pos % self.data_len().max(1),
            _ => start + pos,
        }
    }

    pub(crate) fn note_xrun(&self, t_ns: u64) {
        self.xruns.fetch_add(1, Ordering::Relaxed);
        if self.first_xrun_ns.load(Ordering::Relaxed) == u64::MAX {
            self.first_xrun_ns.store(t_ns, Ordering::Relaxed);
        }
    }
}

/// The outcome of a run: pass, too short to tell, marginal (a ring fell below the margin, the
/// rings drained, or the device had nothing to spare) or fail (any xrun).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Pass,
    /// Nothing went wrong, but the run was too short for that to mean anything: the prefilled
    /// rings alone could have carried it.
    TooShort,
    Marginal,
    Fail,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Pass => "PASS",
            Verdict::TooShort => "TOO SHORT",
            Verdict::Marginal => "MARGINAL",
            Verdict::Fail => "FAIL",
        }
    }
}

/// Why a run did not pass: a structured finding that presenters turn into words.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Shortcoming {
    /// Underruns or overruns.
    Xruns { count: u64 },
    /// A ring fell below the margin.
    BelowMargin { worst_pct: f64, margin_pct: f64 },
    /// The butler brought measurably less than the tracks used.
    Draining { shortfall_pct: f64 },
    /// The butler was hardly ever idle: the device ran at its limit, with nothing to spare.
    NoSpareCapacity { idle_pct: f64, needed_pct: f64 },
    /// The rings lost ground (by less than `Draining` needs), and the butler's idle share was
    /// too small to outweigh it: idle time a bursty device lent, not spare capacity.
    LosingGround {
        shortfall_pct: f64,
        idle_pct: f64,
        ample_pct: f64,
    },
    /// The run ended before it could tell (it needs `needed_s`).
    TooShort { ran_s: f64, needed_s: f64 },
    /// Sampler voices had nothing to play: periods, and the notes they fell in.
    Dropouts { count: u64, notes: u64 },
    /// A note's first read landed with less of its preload left than the margin.
    LateFirstRead { slack_ms: f64, needed_ms: f64 },
    /// Through the page cache: the device read less than the tracks played, beyond the trend's
    /// noise (the rings stayed full from the kernel's read-ahead, which was eaten instead).
    DeviceBehind { shortfall_pct: f64, noise_pct: f64 },
    /// The audio tick fell behind its schedule (its periods' work did not fit in the CPU time
    /// it was given): it asked for `behind_pct` less than the demand stated, so nothing the run saw
    /// of the storage counts for that demand.
    TickBehind { behind_pct: f64, limit_pct: f64 },
}

impl Shortcoming {
    /// Whether the run failed, rather than ending too soon to tell.
    pub fn is_failure(&self) -> bool {
        !matches!(self, Shortcoming::TooShort { .. })
    }
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

/// The distributions behind a run's latency percentiles, for histograms.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Histograms {
    pub read: Option<Histogram>,
    pub write: Option<Histogram>,
    /// The audio tick's wake-up lateness (real runs).
    pub tick_lateness: Option<Histogram>,
}

/// Everything a streaming run measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    /// Through the page cache, on a device whose counters are known: the same trend of what
    /// the rings and the kernel's read-ahead hold together (what the device read less what
    /// played), whether the device kept up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered_sustain: Option<Sustain>,
    /// Share of the steady part of the run (whole refill cycles after the first ring played) in
    /// which the butler had nothing to do: the device's spare capacity, as seen by the butler.
    #[serde(default)]
    pub butler_idle_pct: Option<f64>,
    /// Why the verdict is not a pass.
    #[serde(default)]
    pub shortcoming: Option<Shortcoming>,
    /// Real runs: the share of the demand, in percent, that the tick did not ask for over the
    /// steady part because it ran behind its schedule (`telemetry::tick_behind_pct`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick_behind_pct: Option<f64>,
    /// The shortest run that can pass with these rings: one ring's length plus three refill
    /// cycles, so that the prefilled rings alone cannot carry it.
    #[serde(default)]
    pub min_run_s: f64,
    /// The run stopped as soon as it could no longer pass (a search's probe).
    #[serde(default)]
    pub stopped_early: bool,
    pub read_bytes: u64,
    pub written_bytes: u64,
    /// Bytes the playback tracks played (after the locate).
    #[serde(default)]
    pub played_bytes: u64,
    /// Bytes the target's block device read meanwhile, from its own counters (real runs where
    /// the device is known; other readers of the same device count too).
    #[serde(default)]
    pub device_read_bytes: Option<u64>,
    pub read_latency: Option<LatencySummary>,
    pub write_latency: Option<LatencySummary>,
    /// The audio tick's wake-up lateness (real runs).
    pub tick_lateness: Option<LatencySummary>,
    /// The distributions behind the latencies above (schema 5).
    #[serde(default)]
    pub histograms: Histograms,
    /// SCHED_FIFO and mlockall both granted.
    pub realtime: bool,
    pub realtime_note: Option<String>,
    pub tick_cpu_pct: f64,
    pub butler_cpu_pct: f64,
    /// The longest the butler's thread, ready to run, waited for a CPU (ms; real runs on
    /// Linux): a machine busy with other work, not the device, when it is long.
    #[serde(default)]
    pub butler_cpu_wait_max_ms: Option<f64>,
    /// All the butler's waiting for a CPU while the ticks played (ms).
    #[serde(default)]
    pub butler_cpu_wait_ms: Option<f64>,
    pub ring_bytes_per_track: u64,
    pub ram_bytes: u64,
    /// Allocations the audio tick made inside its loop (when the program counts them).
    pub realtime_allocations: Option<u64>,
    /// Peak resident memory of the process (real runs).
    pub peak_rss_bytes: Option<u64>,
    pub interrupted: bool,
    pub simulated: bool,
    /// Read and written through the page cache (a program's profile, `--cached`), where the
    /// rings' trend is judged against its noise too (`CapacityEvidence::through_page_cache`).
    #[serde(default)]
    pub page_cache: bool,
}

impl StreamOutcome {
    pub fn xruns(&self) -> u64 {
        self.underruns + self.overruns
    }

    /// What the device read per byte the butler read for the tracks during the run: about 1
    /// with O_DIRECT, above 1 where read-ahead fetched what was not asked for (yet), below 1
    /// where the page cache served it. Not per byte played: a run's first ring plays from the
    /// prefill, read before the clock started (a 12 s O_DIRECT run showed 0.91x, a run of 2 s
    /// with 9000 tracks 0.00x). None when the butler read nothing during the run.
    pub fn read_amplification(&self) -> Option<f64> {
        self.device_read_bytes
            .filter(|_| self.read_bytes > 0)
            .map(|d| d as f64 / self.read_bytes as f64)
    }

    /// What the run says of the storage's capacity (see [`CapacityEvidence`]).
    pub fn capacity_evidence(&self) -> CapacityEvidence {
        CapacityEvidence::of_stream(self.sustain, self.butler_idle_pct, self.simulated)
            .through_page_cache(self.page_cache)
            .with_buffered(self.buffered_sustain)
            .with_hold(self.longest_hold_ms(), self.sustain)
    }

    /// The longest single hold of the run, in ms (see [`longest_hold_ms`]).
    pub fn longest_hold_ms(&self) -> Option<f64> {
        longest_hold_ms(
            self.read_latency.as_ref().map(|l| l.max_us),
            self.write_latency.as_ref().map(|l| l.max_us),
            self.butler_cpu_wait_max_ms,
        )
    }

    /// The verdict apart from the capacity rules (see [`own_verdict`]).
    pub fn own_verdict(&self) -> Verdict {
        own_verdict(
            self.verdict,
            self.shortcoming.as_ref(),
            self.butler_idle_pct,
        )
    }

    /// What the device carries, as a share of this run's tracks, where the run can tell
    /// ([`CapacityEvidence::share`]); None when it missed a deadline of its own.
    pub fn capacity_estimate(&self) -> Option<f64> {
        capacity_share(self.shortcoming, || self.capacity_evidence())
    }
}

/// A run whose rings drain by more than this share of the demand is marginal even if no ring
/// reached the margin yet: it only ran too short to get there.
/// Two percent: the precision a search's answer is given to, and above the noise of a steady
/// run on a shared virtual disk (-3.5..-0.5% measured at 65..100% of the answer).
pub const SHORTFALL_LIMIT_PCT: f64 = 2.0;

/// A run whose tick fell behind its schedule by more than this share of the demand
/// (`Shortcoming::TickBehind`) cannot pass: it asked the storage for that much less than it
/// states. The drain's limit, for the same reason: a tick behind by b and rings draining by d
/// lose about b + d of the demand, and either alone is held to the precision of the answer.
/// On this machine, 11,000 tracks' tick before the prefetch (BENCHMARKS.md) took 16.98 s for a
/// 14.9 s run, 12% behind; 5000 tracks' tick, which kept up (woken 61 ms late at worst), was
/// 0.00005% behind.
pub const TICK_BEHIND_LIMIT_PCT: f64 = SHORTFALL_LIMIT_PCT;

/// trackbench's own margin: a ring below this share of its capacity makes a run marginal (a
/// program's profile may say its program tolerates less: `Policy::margin`).
pub const DEFAULT_MARGIN: f64 = 0.2;

/// trackbench's own audio period in frames, where a profile names none of its program's.
pub const DEFAULT_PERIOD: u32 = 256;

/// A pass needs the butler idle at least this share of the steady part of the run: positive
/// evidence of spare capacity. A device asked for more than it delivers keeps a butler busy
/// without a break once the first ring has played, however large the rings (which may take
/// minutes to drain far enough to show it).
///
/// Real runs: 2%. Devices serve faster after an idle gap than when saturated (a kernel throttle
/// lets a slice's budget through at once, drives have caches), so near the bound idle time is
/// overstated: on a loop device capped at 21 MB/s (bound 145.8 tracks of 48k/24 mono) 145
/// tracks left the butler idle 6.4%, 146 tracks 1.1% and 147 0.2% (BENCHMARKS.md). Simulated
/// runs have no noise: half a percent finds a model's exact bound to within 1%.
pub fn spare_min_pct(simulated: bool) -> f64 {
    if simulated { 0.5 } else { 2.0 }
}

/// Idle share, in percent, that counts as spare capacity even while the rings' fill trend
/// falls a little. The trend of a steady run is biased by up to ±0.5% of the demand (runs at 40%
/// of a capped device's bound measured +0.35% with the butler idle 60%), so a small fall alone
/// proves nothing; but a device that lends time after a gap (a kernel throttle's slice, a
/// drive's cache) keeps a saturated butler idle a few percent of every cycle while the rings
/// slip: on a loop device capped at 21 MB/s with 64K chunks, 146 tracks (0.1% above the bound)
/// left the butler idle 7% over 17 s while the rings lost 0.11% of the demand, and 147 tracks
/// idle 3.4% while losing 0.77%. Below the bound the trend rose (145: -0.5%). So a pass needs
/// the rings not to lose ground (by more than `LOSING_GROUND_PCT`), or this much idle time.
pub const AMPLE_IDLE_PCT: f64 = 10.0;

/// A fill trend falling by more than this share of the demand, in percent, is ground lost:
/// a fortieth of the search's precision, above the simulator's rounding (under 0.001%), below
/// the smallest real loss the rule must catch (0.1% at 146 tracks above).
pub const LOSING_GROUND_PCT: f64 = 0.05;

/// The fall of the fill trend that counts as ground lost, given the trend's standard error
/// (`Sustain::noise_pct`): beyond two standard errors, and at least `LOSING_GROUND_PCT`. A
/// shared virtual disk moves a 7.6 s trend by ±0.5% of the demand from one run to the next (138
/// tracks on the 21 MB/s loop device, 95% of its bound, idle 9.4% both times: +0.50% and
/// -0.47%), which the fixed threshold alone read as lost ground; a loss the device really has is
/// steady and shows over every cycle (147 tracks: 0.77%, well outside its noise).
///
/// The larger of the two, not their sum: with the sum, a search's 7.6 s probe of 146 tracks with
/// 1 s rings (0.1% above that device's bound) lost 0.10-0.12% of the demand against a threshold
/// of 0.11-0.12% (standard error 0.03%), passed one probe in two, and a search answered 146, above
/// the bound. The loss was steady from run to run (±0.006%, six runs); the larger of the two is
/// 0.06% there.
pub fn losing_ground_above(noise_pct: f64) -> f64 {
    LOSING_GROUND_PCT.max(2.0 * noise_pct)
}

/// What a run says of the storage's capacity, apart from its own deadlines (xruns, the margin,
/// its length): the rings' fill trend and the butler's idle share, judged by the capacity rules
/// (`SHORTFALL_LIMIT_PCT`, `spare_min_pct`, `losing_ground_above` with `AMPLE_IDLE_PCT`). One
/// computer judges its run by its own; a studio pools its ranks' first
/// ([`CapacityEvidence::pooled`]): they share one storage, and what it carries is its total.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CapacityEvidence {
    /// The fill trend's shortfall of the demand, in percent (negative: the rings gained; None:
    /// too few cycles for a trend).
    pub shortfall_pct: Option<f64>,
    /// The shortfall's standard error, in percent of the demand (0 where the workload does not
    /// measure it: ground lost is then anything beyond `LOSING_GROUND_PCT`).
    pub noise_pct: f64,
    /// Share of the steady part in which the butler had nothing to do, in percent (None: the
    /// run was too short to tell).
    pub idle_pct: Option<f64>,
    /// The idle share that may outweigh a small loss of ground: `idle_pct`, or for a sampler the
    /// smaller of it and its second half's (idle time a device lent early does not count).
    pub ground_idle_pct: Option<f64>,
    /// The least idle share that counts as spare capacity (`spare_min_pct`).
    pub spare_min_pct: f64,
    /// Through the page cache: the trend of the rings and the read-ahead together
    /// (`StreamOutcome::buffered_sustain`), as a shortfall of the demand and its standard
    /// error, in percent. None where it is not measured (direct I/O, a device without
    /// counters, a studio's pooled evidence: its ranks share the counters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffered_shortfall_pct: Option<f64>,
    #[serde(default)]
    pub buffered_noise_pct: f64,
    /// How many standard errors of the rings' trend (`noise_pct`) a drain must exceed besides
    /// `SHORTFALL_LIMIT_PCT` to count: 0 where the limit alone decides, `PAGE_CACHE_SIGMAS`
    /// through the page cache (see there).
    #[serde(default)]
    pub draining_sigmas: f64,
    /// The most of a drain, in percent of the demand, that the run's longest single hold
    /// accounts for ([`one_hold_pct`]). None where the run measured no hold or no trend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub one_hold_pct: Option<f64>,
}

/// The longest the rings waited on any one thing in a run, in ms: one request in flight (read
/// or write, from its submission to its completion, after the locate) or the butler's thread
/// waiting for a CPU. None where nothing was measured.
pub fn longest_hold_ms(
    read_max_us: Option<f64>,
    write_max_us: Option<f64>,
    cpu_wait_max_ms: Option<f64>,
) -> Option<f64> {
    [
        read_max_us.map(|u| u / 1000.0),
        write_max_us.map(|u| u / 1000.0),
        cpu_wait_max_ms,
    ]
    .into_iter()
    .flatten()
    .reduce(f64::max)
}

/// The most of a fill trend's shortfall, in percent of the demand, that one hold of `hold_ms`
/// accounts for over a trend of `window_ms`. Rings held for h lose h of audio and, where the
/// device has the rate, win it back; the least-squares slope of any dip no deeper than h over
/// a window T is at most 1.5 h / T (a step of h halfway through it). None without a window.
pub fn one_hold_pct(hold_ms: f64, window_ms: f64) -> Option<f64> {
    (window_ms > 0.0).then(|| 150.0 * hold_ms / window_ms)
}

impl CapacityEvidence {
    /// A stream's: its fill trend and the butler's idle share over the steady part.
    pub fn of_stream(sustain: Option<Sustain>, idle_pct: Option<f64>, simulated: bool) -> Self {
        CapacityEvidence {
            shortfall_pct: sustain.map(|s| s.shortfall_pct),
            noise_pct: sustain.map_or(0.0, |s| s.noise_pct),
            idle_pct,
            ground_idle_pct: idle_pct,
            spare_min_pct: spare_min_pct(simulated),
            buffered_shortfall_pct: None,
            buffered_noise_pct: 0.0,
            draining_sigmas: 0.0,
            one_hold_pct: None,
        }
    }

    /// With the run's longest single hold (`longest_hold_ms`) set against the rings' trend:
    /// the drain that one hold accounts for (`one_hold_pct`).
    pub fn with_hold(self, hold_ms: Option<f64>, sustain: Option<Sustain>) -> Self {
        CapacityEvidence {
            one_hold_pct: hold_ms
                .zip(sustain)
                .and_then(|(h, s)| one_hold_pct(h, s.to_ms - s.from_ms)),
            ..self
        }
    }

    /// Whether a drain of `shortfall_pct` is one hold's, not the device's rate: no more than
    /// the longest hold accounts for (`one_hold_pct`), with the butler idle `AMPLE_IDLE_PCT` or
    /// more (`ground_idle_pct`), so that it caught up between the holds. A first guess of one
    /// track, searched beside a dozen other searches, drained 5.2% over 5.9 s with its ring at
    /// worst two thirds full; a real run of 4 recorded tracks drained 2.8% behind a write held
    /// 183 ms, its butler idle 87%. A device short of the rate leaves the butler no such idle
    /// time (three workstations on a loop device capped at 21 MB/s, 1.03 times its bound: 2.7%
    /// lost, the least idle 0%; BENCHMARKS.md, issue 16).
    pub fn drain_is_one_hold(&self, shortfall_pct: f64) -> bool {
        self.one_hold_pct.is_some_and(|h| shortfall_pct <= h)
            && self.ground_idle_pct.is_some_and(|i| i >= AMPLE_IDLE_PCT)
    }

    /// Of a run through the page cache (`true`): a drain counts only beyond
    /// `PAGE_CACHE_SIGMAS` standard errors of the rings' trend as well as the limit.
    pub fn through_page_cache(self, page_cache: bool) -> Self {
        CapacityEvidence {
            draining_sigmas: if page_cache { PAGE_CACHE_SIGMAS } else { 0.0 },
            ..self
        }
    }

    /// With the trend of what the rings and the page cache hold together, where measured.
    pub fn with_buffered(self, buffered: Option<Sustain>) -> Self {
        CapacityEvidence {
            buffered_shortfall_pct: buffered.map(|b| b.shortfall_pct),
            buffered_noise_pct: buffered.map_or(0.0, |b| b.noise_pct),
            ..self
        }
    }

    /// The first capacity rule the evidence breaks: the rings draining, no spare time, or
    /// ground lost without ample idle time to outweigh it.
    pub fn shortcoming(&self) -> Option<Shortcoming> {
        if let Some(s) = self
            .shortfall_pct
            .filter(|&s| s > SHORTFALL_LIMIT_PCT && s > self.draining_sigmas * self.noise_pct)
            .filter(|&s| !self.drain_is_one_hold(s))
        {
            Some(Shortcoming::Draining { shortfall_pct: s })
        } else if let Some(idle_pct) = self.idle_pct.filter(|&i| i < self.spare_min_pct) {
            Some(Shortcoming::NoSpareCapacity {
                idle_pct,
                needed_pct: self.spare_min_pct,
            })
        } else if let (Some(s), Some(idle_pct)) = (
            self.shortfall_pct
                .filter(|&s| s > losing_ground_above(self.noise_pct)),
            self.ground_idle_pct.filter(|&i| i < AMPLE_IDLE_PCT),
        ) {
            Some(Shortcoming::LosingGround {
                shortfall_pct: s,
                idle_pct,
                ample_pct: AMPLE_IDLE_PCT,
            })
        } else {
            // The butler's idle time says nothing here: its reads were served from the page
            // cache while the device read ahead, so no idle share outweighs this loss.
            let noise_pct = self.buffered_noise_pct;
            self.buffered_shortfall_pct
                .filter(|&s| s > BUFFERED_SIGMAS * noise_pct && s > LOSING_GROUND_PCT)
                .map(|shortfall_pct| Shortcoming::DeviceBehind {
                    shortfall_pct,
                    noise_pct,
                })
        }
    }

    /// What the device carries, as a share of the run's count, where the evidence tells: a run
    /// that broke a capacity rule saturated the device and delivered what it gives, which the
    /// fill trend measures; one that kept them left the butler idle, which bounds it from above
    /// (a device serves faster after idle gaps). None when the run was too short for either.
    pub fn share(&self) -> Option<f64> {
        match self.shortcoming() {
            None => self.idle_pct.map(|i| 1.0 / (1.0 - i / 100.0).max(0.01)),
            Some(Shortcoming::DeviceBehind { shortfall_pct, .. }) => {
                Some(1.0 - shortfall_pct / 100.0)
            }
            Some(_) => self.shortfall_pct.map(|s| 1.0 - s / 100.0),
        }
    }

    /// The storage's evidence from every workstation's on it, each streaming the same demand
    /// (a studio's ranks run one plan): the rings' mean shortfall, its standard error as of
    /// independent measurements (√Σσ² / n), and the least idle share (the storage rests only
    /// while every workstation's butler does, so no more than the least of them). A rank's
    /// trend alone moves with its share of a storage that serves them in turn: on a loop device
    /// capped at 21 MB/s, three ranks at 0.9 of its bound, each idle over 13%, lost 4.59% and
    /// gained 4.23% and 0.37% over the same 7.6 s; a storage that cannot carry the demand shows
    /// in the mean (at 1.03 of the bound: 2.7%, idle 0%). None without evidence.
    pub fn pooled(all: &[CapacityEvidence]) -> Option<CapacityEvidence> {
        let n = all.len() as f64;
        if all.is_empty() {
            return None;
        }
        let every = |f: fn(&CapacityEvidence) -> Option<f64>| -> Option<Vec<f64>> {
            all.iter().map(f).collect()
        };
        let least = |v: Vec<f64>| v.into_iter().fold(f64::INFINITY, f64::min);
        Some(CapacityEvidence {
            shortfall_pct: every(|e| e.shortfall_pct).map(|v| v.iter().sum::<f64>() / n),
            noise_pct: all.iter().map(|e| e.noise_pct.powi(2)).sum::<f64>().sqrt() / n,
            idle_pct: every(|e| e.idle_pct).map(least),
            ground_idle_pct: every(|e| e.ground_idle_pct).map(least),
            spare_min_pct: all.iter().map(|e| e.spare_min_pct).fold(0.0, f64::max),
            // Every rank reads the one device's counters, which count all of them.
            buffered_shortfall_pct: None,
            buffered_noise_pct: 0.0,
            draining_sigmas: all.iter().map(|e| e.draining_sigmas).fold(0.0, f64::max),
            // Each rank's mean shortfall, if its hold accounts for it, is within the mean.
            one_hold_pct: every(|e| e.one_hold_pct).map(|v| v.iter().sum::<f64>() / n),
        })
    }
}

/// What a run that ended with `shortcoming` tells of the count it carries, as a share of its
/// own: the capacity evidence's `share` where a capacity rule decided or none did; for a tick
/// that fell behind, the share of the demand it kept up with (the machine's bound, whatever the
/// device's); where a ring fell below the margin first, the rings' trend if it shows them
/// draining by one of the capacity rules (the share the device delivered: a count far above a
/// device's rate takes the first ring below the margin before any capacity rule decides, and a
/// search that had nothing to aim with bisected blind); nothing otherwise, where the run
/// missed a deadline of its own. Not from a run with xruns: a ring run dry stops draining, so
/// the trend understates the loss (200 tracks on a device that carries 100 showed 0.68, not
/// 0.50).
pub fn capacity_share(
    shortcoming: Option<Shortcoming>,
    evidence: impl FnOnce() -> CapacityEvidence,
) -> Option<f64> {
    match shortcoming {
        Some(Shortcoming::TickBehind { behind_pct, .. }) => Some(1.0 - behind_pct / 100.0),
        Some(Shortcoming::BelowMargin { .. }) => {
            let e = evidence();
            e.shortcoming()
                .and_then(|_| e.share())
                .filter(|&share| share < 1.0)
        }
        Some(s) if !s.is_capacity() => None,
        _ => evidence().share(),
    }
}

impl Shortcoming {
    /// `TickBehind` where a tick `behind_pct` behind its schedule is beyond the limit
    /// (`TICK_BEHIND_LIMIT_PCT`).
    pub fn tick_behind(behind_pct: Option<f64>) -> Option<Shortcoming> {
        behind_pct
            .filter(|&b| b > TICK_BEHIND_LIMIT_PCT)
            .map(|behind_pct| Shortcoming::TickBehind {
                behind_pct,
                limit_pct: TICK_BEHIND_LIMIT_PCT,
            })
    }

    /// One of the capacity rules' ([`CapacityEvidence::shortcoming`]): what the storage could
    /// not carry, not a deadline the run itself missed.
    pub fn is_capacity(&self) -> bool {
        matches!(
            self,
            Shortcoming::Draining { .. }
                | Shortcoming::NoSpareCapacity { .. }
                | Shortcoming::LosingGround { .. }
                | Shortcoming::DeviceBehind { .. }
        )
    }
}

/// A run's verdict apart from the capacity rules: its own xruns, margin and length. A run the
/// capacity rules alone held back would otherwise have passed, or been too short to tell
/// (`idle_pct` None).
pub fn own_verdict(
    verdict: Verdict,
    shortcoming: Option<&Shortcoming>,
    idle_pct: Option<f64>,
) -> Verdict {
    match shortcoming {
        Some(s) if s.is_capacity() && idle_pct.is_none() => Verdict::TooShort,
        Some(s) if s.is_capacity() => Verdict::Pass,
        _ => verdict,
    }
}

/// Refill cycles after the first ring has played that a run needs before it can pass.
pub const MIN_CYCLES: f64 = 3.0;

/// Seconds of steady running (after the first ring) a run needs before it can pass, however
/// short its refill cycle. Devices are bursty on their own time scales, not the ring's: a
/// kernel throttle grants a 100 ms slice's budget at once after a gap, a drive serves from its
/// cache. On a loop device capped at 21 MB/s (bound 145.8 tracks) with 64K chunks (0.46 s
/// cycles), 147 tracks left the butler idle over 2% of a 1.8 s window, and 0.8% of a 28 s one.
/// Five seconds is what three cycles of the default engine (256K chunks) already last.
pub const MIN_STEADY_S: f64 = 5.0;

/// The butler's idle share, in percent, over the steady part so far at which a run that may end
/// early (`StreamSpec::end_early`) ends at the shortest length that can pass: twice
/// `AMPLE_IDLE_PCT`, at which the rule no longer asks the rings to hold their level, so that the
/// few milliseconds between the butler's look and the run's end cannot take the share below it.
/// On this machine's disk the first probes of this stop's searches, at 0.6-0.8 of the answer,
/// left the butler idle 24-36%: they had run a refill cycle longer than the rule needs.
pub const EARLY_PASS_IDLE_PCT: f64 = 2.0 * AMPLE_IDLE_PCT;

/// The butler's idle share, in percent, over the steady part so far under which a run that may
/// end early (`StreamSpec::end_early`) ends at the shortest length that can pass, failing: a
/// quarter of `spare_min_pct`, so that the rest of the probe would have to leave it idle about
/// four times the rule's least share over a refill cycle to pass. On this machine's disk a
/// steering probe of 7214 tracks (1.05 of that search's answer) left its butler idle 0.0% and
/// drained 4.0% over its full 11.5 s; the ones that lose ground nearer the answer leave it idle
/// 5-9%, and run in full.
pub fn early_fail_idle_pct(simulated: bool) -> f64 {
    spare_min_pct(simulated) / 4.0
}

/// Where a run of `spec` that may end early (`StreamSpec::end_early`) looks at its idle share
/// (the verdict's, [`idle_pct_of`]), in ns of run time: the shortest run that can pass
/// ([`min_run_s`]) with the scheduling slack a search's probes have (`planned_duration_s`).
pub fn early_end_at_ns(spec: &StreamSpec) -> u64 {
    ((min_run_s(spec) + EARLY_END_SLACK_S) * 1e9) as u64
}

/// Seconds past the shortest passing run at which a run that may end early looks: a probe's
/// own slack for scheduling (`planned_duration_s`).
const EARLY_END_SLACK_S: f64 = 0.3;

/// The steady part of the rule in words, for notes and errors: "at least 3 refill cycles and 5 s".
pub fn steady_words() -> String {
    format!("at least {MIN_CYCLES:.0} refill cycles and {MIN_STEADY_S:.0} s")
}

/// The evidence of spare capacity a pass needs, in words, for notes.
pub fn spare_words(simulated: bool) -> String {
    format!(
        "the butler idle at least {}% of the time, and the rings holding their level (within the trend's noise) unless it was idle {AMPLE_IDLE_PCT:.0}% or more",
        spare_min_pct(simulated)
    )
}

/// Whole refill cycles the steady part of a run must span: `MIN_CYCLES`, and at least
/// `MIN_STEADY_S`.
fn steady_cycles(cycle_s: f64) -> f64 {
    if cycle_s <= 0.0 {
        return MIN_CYCLES;
    }
    MIN_CYCLES.max((MIN_STEADY_S / cycle_s - 1e-9).ceil())
}

/// Seconds of audio between a ring's refills (playback) or flushes (capture), the longer of the
/// two, and the seconds the prefill lasts: the ring's length, less the head start of a run that
/// starts at the first refill.
fn cycle_and_prefill_s(spec: &StreamSpec) -> (f64, f64) {
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
    // A steady start's rings are already in their refill rhythm: its verdict waits out a
    // warm-up, not a ring.
    let full = spec.ring_bytes() - head_start_bytes(spec);
    let prefill = if spec.steady_start {
        let least = (STEADY_WARMUP_MIN_S * rate).ceil() as u64;
        (STEADY_WARMUP_CYCLES * cycle).max(least)
    } else {
        full
    };
    (cycle as f64 / rate, prefill as f64 / rate)
}

/// Refill cycles a steady start waits out before its steady part, and the least time. A
/// device idle between two probes serves the next one faster at first (a kernel throttle
/// grants a slice's budget at once after a gap), and staggered rings take that in without
/// falling behind: on a loop device capped at 21 MB/s (bound 145.8 tracks), probes of 151
/// tracks passed after a warm-up of one cycle (1.82 s with 256K chunks, 0.46 s with 64K) and
/// of two cycles of 64K (0.91 s), and failed, as every full start did, after two cycles of
/// 256K (3.64 s).
const STEADY_WARMUP_CYCLES: u64 = 2;
const STEADY_WARMUP_MIN_S: f64 = 3.5;

/// Seconds a steady start waits out before its verdict's steady part (see
/// `STEADY_WARMUP_CYCLES`).
pub fn steady_warmup_s(spec: &StreamSpec) -> f64 {
    cycle_and_prefill_s(&StreamSpec {
        steady_start: true,
        ..spec.clone()
    })
    .1
}

/// Whether a run of `spec`'s shape may start in the steady state (`StreamSpec::steady_start`):
/// direct playback alone, whose rings let tracks starting in phase each wait for their first
/// refill at least a refill cycle before the margin, so that the in-phase start does not hold
/// the count below what the steady state carries (DESIGN.md section 4: with two chunks a ring,
/// it does), and where the steady start saves at least a second. Where the in-phase start
/// binds, a probe must start as its answer will be stated, in phase.
pub fn steady_start_allowed(spec: &StreamSpec) -> bool {
    spec.policy.direct
        && spec.record_tracks == 0
        && spec.play_tracks > 0
        && wave_times(spec).is_some_and(|(slack_s, cycle_s)| slack_s >= cycle_s)
        && steady_start_saves_ns(spec) >= 1_000_000_000
}

/// For tracks starting in phase: how long each ring can wait for its refill once all cross the
/// threshold together (before it passes the margin), and the refill cycle, in seconds. None when
/// the starts are staggered.
pub fn wave_times(spec: &StreamSpec) -> Option<(f64, f64)> {
    if spec.stagger {
        return None;
    }
    let rate = spec.format.bytes_per_second() as f64;
    let cap = spec.ring_bytes() as f64;
    let slack_s = (cap - spec.policy.refill_at_bytes as f64 - spec.margin * cap).max(0.0) / rate;
    let cycle_s = spec.policy.read_len(spec.policy.refill_at_bytes).max(4096) as f64 / rate;
    Some((slack_s, cycle_s))
}

/// How much shorter a steady start's run is than the run it stands for, with the same steady
/// part: the full start's (from its first refill where `start_at_first_refill` asks for it),
/// by the first ring it need not wait out, less the warm-up it waits instead, in ns.
pub fn steady_start_saves_ns(spec: &StreamSpec) -> u64 {
    let full = StreamSpec {
        steady_start: false,
        ..spec.clone()
    };
    let (cycle_s, prefill_s) = cycle_and_prefill_s(&full);
    let (_, steady_s) = cycle_and_prefill_s(&StreamSpec {
        steady_start: true,
        ..full.clone()
    });
    ((prefill_s.max(cycle_s) - steady_s).max(0.0) * 1e9) as u64
}

/// Bytes each playback ring starts short of full in a run that starts at the first refill
/// (`StreamSpec::start_at_first_refill`): the whole periods played, from full rings, before
/// the one after which a ring first has room for a read; 0 for every other run, and where it
/// would leave a ring within a period of its margin. The default engine's rings (1 MiB, read
/// when 256 KiB is free) skip 341 periods of 256 frames at 48k/24 mono, 1.82 s.
pub fn head_start_bytes(spec: &StreamSpec) -> u64 {
    if !spec.start_at_first_refill
        || spec.stagger
        || spec.steady_start
        || spec.record_tracks > 0
        || spec.play_tracks == 0
    {
        return 0;
    }
    let (period, ring) = (spec.period_bytes().max(1), spec.ring_bytes());
    let block = crate::content::BLOCK as u64;
    let mut k = 1;
    while k * period <= ring && spec.policy.read_len(k * period) < block {
        k += 1;
    }
    let skip = (k - 1) * period;
    let floor = (spec.margin * ring as f64).ceil() as u64 + period;
    if ring.saturating_sub(skip) < floor {
        0
    } else {
        skip
    }
}

/// [`head_start_bytes`] as time: whole periods.
pub fn head_start_ns(spec: &StreamSpec) -> u64 {
    head_start_bytes(spec) / spec.period_bytes().max(1) * spec.period_ns()
}

/// Seconds of audio between one ring's refills (or flushes): the steady rhythm of the butler.
pub fn refill_cycle_s(spec: &StreamSpec) -> f64 {
    cycle_and_prefill_s(spec).0
}

/// The shortest run that can pass: the first ring played (so the prefill alone cannot carry
/// it), then the steady refill cycles (at least `MIN_CYCLES`, at least `MIN_STEADY_S`) in
/// which the butler's idle share and the fill trend are measured.
pub fn min_run_s(spec: &StreamSpec) -> f64 {
    let (cycle_s, prefill_s) = cycle_and_prefill_s(spec);
    prefill_s.max(cycle_s) + steady_cycles(cycle_s) * cycle_s
}

/// The butler's idle share, in percent, over the whole refill cycles that follow the first
/// ring (counted back from the end of the run); None when fewer than `steady_cycles` fit.
pub(crate) fn idle_pct_of(
    spec: &StreamSpec,
    idle: &telemetry::IdleLog,
    ran_ns: u64,
) -> Option<f64> {
    idle_window_of(spec, ran_ns).map(|from| 100.0 * idle.share(from, ran_ns))
}

/// Where the steady part [`idle_pct_of`] takes its share over begins, in ns of run time: whole
/// refill cycles counted back from `ran_ns`; None when fewer than `steady_cycles` fit.
fn idle_window_of(spec: &StreamSpec, ran_ns: u64) -> Option<u64> {
    let (cycle_s, prefill_s) = cycle_and_prefill_s(spec);
    let (cycle_ns, from_ns) = (
        (cycle_s * 1e9) as u64,
        (prefill_s.max(cycle_s) * 1e9) as u64,
    );
    if cycle_ns == 0 || ran_ns <= from_ns {
        return None;
    }
    let k = (ran_ns - from_ns) / cycle_ns;
    ((k as f64) >= steady_cycles(cycle_s)).then(|| ran_ns - k * cycle_ns)
}

/// Whether a run that may end early (`StreamSpec::end_early`) has shown its verdict beyond
/// doubt at `ran_ns`: the butler idle `EARLY_PASS_IDLE_PCT` or more over the steady part so far
/// and over its later half as well (a pass), or under `fail_below_pct` over it (a failure).
/// The later half, because a device lends time at first: on a loop device capped at 21 MB/s
/// (bound 145.8), a steady start of 150 tracks left the butler idle 23.1% by the shortest run,
/// nearly all of it in the seconds before the throttle began to hold its reads back (it lets
/// every read through at once while the group stays under its rate, and a little beyond for a
/// while), and passed with the rings draining 2.4%; whole runs of 151 were idle 5.7-6.7%.
pub(crate) fn early_verdict_is_clear(
    spec: &StreamSpec,
    idle: &telemetry::IdleLog,
    ran_ns: u64,
    fail_below_pct: f64,
) -> bool {
    let Some(from) = idle_window_of(spec, ran_ns) else {
        return false;
    };
    let whole = 100.0 * idle.share(from, ran_ns);
    let later = 100.0 * idle.share(from + (ran_ns - from) / 2, ran_ns);
    (whole >= EARLY_PASS_IDLE_PCT && later >= EARLY_PASS_IDLE_PCT) || whole < fail_below_pct
}

/// The fill trend after the first ring has played, over whole refill cycles.
fn sustain_of(spec: &StreamSpec, fill: &[FillPoint]) -> Option<Sustain> {
    let (cycle_s, prefill_s) = cycle_and_prefill_s(spec);
    telemetry::sustain(
        fill,
        1000.0 * prefill_s.max(cycle_s),
        1000.0 * cycle_s,
        spec.ring_s(),
        spec.margin,
    )
}

/// The trend of what the rings and the page cache hold together, over the same steady part as
/// the rings' own but averaged over the read-ahead's rhythm (`cycle_s`, at least a refill
/// cycle), and only over `BUFFERED_MIN_CYCLES` of it or more: after a locate whose first read
/// took a whole ring, ardour-small's float files were read ahead a ring at a time, and 85
/// tracks at 0.78 of a 21 MB/s cap showed a loss of 14% over a 10 s steady part averaged by the
/// 1.37 s refill cycle alone; ardour-medium's probes of 1 to 3 tracks, two 10.75 s cycles
/// long, lost 27% (noise 9.5%) as the lead the locate left settled. A search's probes are
/// too short for it; its confirmations and a single run of a minute are not.
fn buffered_sustain_of(spec: &StreamSpec, points: &[FillPoint], cycle_s: f64) -> Option<Sustain> {
    let (refill_s, prefill_s) = cycle_and_prefill_s(spec);
    let (from_s, cycle_s) = (prefill_s.max(refill_s), refill_s.max(cycle_s));
    let to_s = points.last()?.t_ms / 1000.0;
    if to_s - from_s < BUFFERED_MIN_CYCLES * cycle_s {
        return None;
    }
    telemetry::sustain(
        points,
        1000.0 * from_s,
        1000.0 * cycle_s,
        spec.ring_s(),
        spec.margin,
    )
}

/// The fewest read-ahead cycles over which the page cache's share of the buffer is judged.
const BUFFERED_MIN_CYCLES: f64 = 4.0;

/// How many standard errors of its trend the page cache's share of the buffer must lose to
/// count as the device falling behind. Three, not the rings' two: the lead a locate leaves
/// settles in steps of a whole read-ahead window, a wobble the residuals understate (one
/// track, ardour-small float, 34 s at a fiftieth of a 21 MB/s cap: 2.79% with a noise of
/// 1.37%; 104 tracks at 0.95 of it: 1.01%, 0.72%), while a device that cannot keep up reads at
/// its cap without pause and its trend is smooth (111 tracks, 1.015 of the cap: 1.59% and
/// 0.16%, 1.77% and 0.24%).
pub const BUFFERED_SIGMAS: f64 = 3.0;

/// How many standard errors of the rings' trend a run through the page cache must lose, as
/// well as `SHORTFALL_LIMIT_PCT`, for its rings to count as draining. There the kernel's
/// read-ahead serves a whole wave of refills at once, the tracks refill in phase, and a probe's
/// 7 s trend carries the wave's phase: on a device capped at 100 I/Os a second (128 KiB
/// read-ahead, its I/Os 384 KiB, about 200 float tracks' worth), 60 ardour-small float tracks
/// for a probe's 12.4 s lost 2.42% of the demand with a standard error of 1.22% (twice; the
/// butler idle 99.8%), 110 tracks 4.59% (1.62%) and 1.39% (2.33%), idle 79-92%, and 30 s of
/// 110 lost 0.11% (0.16%). A
/// device that cannot carry the count drains the rings steadily, outside that noise; near its
/// bound, where the rings' trend cannot tell, the device's own (`DeviceBehind`) judges the runs
/// long enough for it, a search's confirmations among them.
pub const PAGE_CACHE_SIGMAS: f64 = 3.0;

/// Longest playback file: reads wrap around at its end, as a looping DAW transport would.
pub const PLAY_FILE_MAX_S: f64 = 8.0;

/// The audio each playback track's file holds, real or simulated: the run and a ring, up to
/// `PLAY_FILE_MAX_S` with direct I/O (reads wrap there; longer files would only cost space; a
/// profile reading through the page cache gets the whole run, or its wrapped reads would be
/// served from what the first pass left in the cache), at least a ring and
/// a chunk (a read never laps the ring), in whole frames, blocks and chunks. Whole chunks: a
/// wrap that left a short read would leave the ring out of step with its chunks, and split
/// every later read in two where the ring's memory ends (an IOPS-bound device carried 111
/// tracks instead of 113.8).
pub fn play_file_bytes(spec: &StreamSpec) -> u64 {
    use crate::audio::lcm;
    let unit = lcm(
        lcm(4096, spec.format.bytes_per_frame()),
        spec.policy.chunk_bytes,
    );
    let rate = spec.format.bytes_per_second() as f64;
    // A steady start plays the files of the full run it stands for.
    let saved = if spec.steady_start {
        steady_start_saves_ns(spec)
    } else {
        0
    };
    let run_s = (spec.duration_ns + saved) as f64 / 1e9;
    let secs = if spec.policy.direct {
        (run_s + spec.policy.buffer_s).min(PLAY_FILE_MAX_S)
    } else {
        // Through the page cache a wrapped read would find what the first pass left there,
        // where a program playing a session does not: those files hold the whole run, a full
        // ring ahead of its last period, the largest read and a staggered start's chunk beyond
        // it, so that no read wraps.
        let beyond = spec.ring_bytes() + spec.policy.read_max_bytes + spec.policy.chunk_bytes;
        run_s + beyond as f64 / rate
    };
    let least = (spec.ring_bytes() + spec.policy.chunk_bytes).div_ceil(unit);
    ((secs * rate) as u64 / unit).max(least) * unit
}

/// The most each record track's file may hold: every period of the run, a ring and a chunk, in
/// whole blocks.
pub fn record_file_bytes(spec: &StreamSpec) -> u64 {
    (spec.ticks() * spec.period_bytes() + spec.ring_bytes() + spec.policy.chunk_bytes)
        .div_ceil(4096)
        * 4096
}

/// With `--stagger`, spreads the tracks' positions over one chunk: track k starts k/T of a chunk
/// further on, so their refill thresholds do not all fall on the same tick.
pub fn stagger(spec: &StreamSpec, tracks: &[Track]) {
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
                    tick::record_bytes(t, off);
                }
                t.ring.commit_produce(off);
            }
        }
    }
}

/// How a run ended, besides the tick's and the tracks' accounting.
pub(crate) struct RunEnd<'a> {
    pub locate_ns: u64,
    pub ran_ns: u64,
    pub interrupted: bool,
    pub stopped_early: bool,
    pub idle: &'a telemetry::IdleLog,
    pub simulated: bool,
    /// What the rings and the page cache hold together, where measured (`EngineOut::buffered`).
    pub buffered: &'a [FillPoint],
    pub buffered_cycle_s: f64,
    /// The run's longest single hold (`longest_hold_ms`).
    pub longest_hold_ms: Option<f64>,
    /// The tick's lag behind its schedule (`TickReport::lag`; empty in simulated runs).
    pub lag: &'a [telemetry::LagPoint],
    /// The run stopped for it (`TickReport::stopped_behind`).
    pub stopped_behind: bool,
}

/// Whether a run with `stop_early` may stop now: it can no longer pass.
pub(crate) fn cannot_pass(spec: &StreamSpec, tick: &tick::Tick) -> bool {
    tick.underruns + tick.overruns > 0 || tick.worst < spec.margin
}

/// How far behind its schedule a run's tick fell, in percent of the demand: over the steady
/// part's `window` (tick time, ms), or over all of a run stopped for it.
pub(crate) fn tick_behind_of(
    lag: &[telemetry::LagPoint],
    window: Option<(f64, f64)>,
    stopped_behind: bool,
) -> Option<f64> {
    if stopped_behind {
        telemetry::tick_behind_whole_pct(lag)
    } else {
        window.and_then(|(from, to)| telemetry::tick_behind_pct(lag, from, to))
    }
}

/// A fixed set of tracks' run, real or simulated, as its outcome.
pub(crate) fn outcome(
    spec: &StreamSpec,
    tracks: &[Track],
    e: stream_loop::EngineOut<tick::Tick>,
    simulated: bool,
) -> StreamOutcome {
    let ran_s = (e.ran_ns as f64 / 1e9).max(f64::MIN_POSITIVE);
    let mut out = assemble(
        spec,
        tracks,
        e.side,
        RunEnd {
            locate_ns: e.locate_ns,
            ran_ns: e.ran_ns,
            interrupted: e.tick.interrupted,
            stopped_early: e.tick.stopped_early,
            idle: &e.idle,
            simulated,
            buffered: &e.buffered,
            buffered_cycle_s: e.buffered_cycle_s,
            longest_hold_ms: longest_hold_ms(
                (e.read_lat.count() > 0).then(|| e.read_lat.summary().max_us),
                (e.write_lat.count() > 0).then(|| e.write_lat.summary().max_us),
                e.butler_cpu_wait_max_ms.filter(|_| !simulated),
            ),
            lag: &e.tick.lag,
            stopped_behind: e.tick.stopped_behind,
        },
    );
    out.read_bytes = e.read_bytes;
    out.written_bytes = e.written_bytes;
    out.played_bytes = e.played_bytes;
    out.device_read_bytes = e.device_read_bytes;
    out.read_latency = (e.read_lat.count() > 0).then(|| e.read_lat.summary());
    out.write_latency = (e.write_lat.count() > 0).then(|| e.write_lat.summary());
    let lateness = e.tick.lateness.as_ref().filter(|l| l.count() > 0);
    out.tick_lateness = lateness.map(|l| l.summary());
    out.histograms = Histograms {
        read: e.read_lat.histogram(),
        write: e.write_lat.histogram(),
        tick_lateness: lateness.and_then(|l| l.histogram()),
    };
    out.realtime = e.tick.realtime;
    out.realtime_note = e.tick.realtime_note;
    if !simulated {
        out.tick_cpu_pct = 100.0 * e.tick.cpu_s / ran_s;
        out.butler_cpu_pct = 100.0 * e.butler_cpu_s / ran_s;
        out.butler_cpu_wait_max_ms = e.butler_cpu_wait_max_ms;
        out.butler_cpu_wait_ms = e.butler_cpu_wait_ms;
    }
    out.realtime_allocations = e.tick.allocations;
    out
}

/// Gathers the tick's and the tracks' accounting into an outcome; `outcome` adds I/O figures.
pub(crate) fn assemble(
    spec: &StreamSpec,
    tracks: &[Track],
    tick: tick::Tick,
    end: RunEnd<'_>,
) -> StreamOutcome {
    let RunEnd {
        locate_ns,
        ran_ns,
        interrupted,
        stopped_early,
        idle,
        simulated,
        buffered,
        buffered_cycle_s,
        longest_hold_ms,
        lag,
        stopped_behind,
    } = end;
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
    let buffered_sustain = buffered_sustain_of(spec, buffered, buffered_cycle_s);
    let butler_idle_pct = idle_pct_of(spec, idle, ran_ns);
    let min_run = min_run_s(spec);
    let xruns = tick.underruns + tick.overruns;
    let tick_behind_pct =
        tick_behind_of(lag, sustain.map(|s| (s.from_ms, s.to_ms)), stopped_behind);
    // The first of these that holds decides; a pass needs none, and positive evidence.
    let shortcoming = if xruns > 0 {
        Some(Shortcoming::Xruns { count: xruns })
    } else if worst_headroom_pct < 100.0 * spec.margin {
        Some(Shortcoming::BelowMargin {
            worst_pct: worst_headroom_pct,
            margin_pct: 100.0 * spec.margin,
        })
    } else if let Some(s) = Shortcoming::tick_behind(tick_behind_pct) {
        // The rings' trend and the butler's idle time were measured against a lighter demand.
        Some(s)
    } else if let Some(s) = CapacityEvidence::of_stream(sustain, butler_idle_pct, simulated)
        .through_page_cache(!spec.policy.direct)
        .with_buffered(buffered_sustain)
        .with_hold(longest_hold_ms, sustain)
        .shortcoming()
    {
        Some(s)
    } else if butler_idle_pct.is_none() {
        Some(Shortcoming::TooShort {
            ran_s: ran_ns as f64 / 1e9,
            needed_s: min_run,
        })
    } else {
        None
    };
    let verdict = match shortcoming {
        None => Verdict::Pass,
        Some(Shortcoming::Xruns { .. }) => Verdict::Fail,
        Some(Shortcoming::TooShort { .. }) => Verdict::TooShort,
        Some(_) => Verdict::Marginal,
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
        buffered_sustain,
        butler_idle_pct,
        shortcoming,
        tick_behind_pct,
        min_run_s: min_run,
        stopped_early,
        read_bytes: 0,
        written_bytes: 0,
        played_bytes: 0,
        device_read_bytes: None,
        read_latency: None,
        write_latency: None,
        tick_lateness: None,
        histograms: Histograms::default(),
        realtime: false,
        realtime_note: None,
        tick_cpu_pct: 0.0,
        butler_cpu_pct: 0.0,
        butler_cpu_wait_max_ms: None,
        butler_cpu_wait_ms: None,
        ring_bytes_per_track: cap,
        ram_bytes: cap * u64::from(spec.tracks()),
        realtime_allocations: None,
        peak_rss_bytes: None,
        interrupted,
        simulated,
        page_cache: !spec.policy.direct,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trend(shortfall_pct: f64, noise_pct: f64) -> Option<Sustain> {
        Some(Sustain {
            shortfall_pct,
            margin_in_s: None,
            noise_pct,
            from_ms: 5000.0,
            to_ms: 34000.0,
        })
    }

    /// A run a ring below the margin ended tells what the device delivered where its rings'
    /// trend shows them draining, and nothing where they held (a hold took the ring there, not
    /// the device's rate); a run with xruns, never (a ring run dry stops draining).
    #[test]
    fn a_ring_below_the_margin_estimates_by_the_rings_trend_only_where_they_drained() {
        let below = Some(Shortcoming::BelowMargin {
            worst_pct: 12.0,
            margin_pct: 20.0,
        });
        // The fresh clone's first probe of a 1 s-ring search, 72 tracks on a capped device
        // short of its rate: 12.8% ± 6.8% lost over the 4.1 s it ran, no idle share yet.
        let draining = || CapacityEvidence::of_stream(trend(12.82, 6.785), None, false);
        let share = capacity_share(below, draining).unwrap();
        assert!((share - 0.8718).abs() < 1e-9, "{share}");
        let held = || CapacityEvidence::of_stream(trend(0.3, 0.2), Some(40.0), false);
        assert_eq!(capacity_share(below, held), None);
        let short = || CapacityEvidence::of_stream(None, None, false);
        assert_eq!(capacity_share(below, short), None);
        let xruns = Some(Shortcoming::Xruns { count: 3 });
        assert_eq!(capacity_share(xruns, draining), None);
    }

    /// Through the page cache the butler idles on cached reads while the device falls behind:
    /// the trend of rings and read-ahead together decides, and no idle share outweighs it.
    #[test]
    fn the_device_falling_behind_the_page_cache_is_not_a_pass_however_idle_the_butler() {
        // 111 float tracks on a 21 MB/s cap (1.5% over it): the rings held, the butler idled 34%.
        let rings = trend(0.21, 1.47);
        let e = CapacityEvidence::of_stream(rings, Some(34.4), false);
        assert_eq!(e.shortcoming(), None, "the rings alone pass it");
        let e = e.with_buffered(trend(1.77, 0.24));
        assert!(
            matches!(
                e.shortcoming(),
                Some(Shortcoming::DeviceBehind { shortfall_pct, .. }) if shortfall_pct == 1.77
            ),
            "{:?}",
            e.shortcoming()
        );
        assert!(
            e.shortcoming()
                .is_some_and(|s| s.is_capacity() && s.is_failure())
        );
        // What the device delivered aims the search: 1.77% short of the count.
        assert!((e.share().unwrap() - 0.9823).abs() < 1e-9);
        // Within three times its noise it passes (104 tracks, 0.95 of the cap: 1.01% with a
        // noise of 0.72%; one track: 2.79% and 1.37%; a settling lead's trend wobbles), beyond
        // it it does not.
        let e = CapacityEvidence::of_stream(rings, Some(78.3), false);
        assert_eq!(e.with_buffered(trend(1.01, 0.72)).shortcoming(), None);
        assert_eq!(e.with_buffered(trend(2.79, 1.37)).shortcoming(), None);
        assert!(e.with_buffered(trend(2.5, 0.8)).shortcoming().is_some());
        // Not measured (direct I/O, no device counters): the rings' rules alone.
        assert_eq!(e.with_buffered(None).shortcoming(), None);
        // A studio's pooled evidence leaves it out: every rank reads the same counters.
        let pooled = CapacityEvidence::pooled(&[e.with_buffered(trend(5.0, 0.1))]).unwrap();
        assert_eq!(pooled.buffered_shortfall_pct, None);
    }

    /// Through the page cache the rings refill in phase from the read-ahead, and a probe's
    /// trend carries the wave: a drain counts there only beyond its noise as well as the limit;
    /// with direct I/O the limit alone decides, as before.
    #[test]
    fn through_the_page_cache_the_rings_drain_only_beyond_their_noise() {
        let idle = Some(92.3);
        // 110 float tracks, 100 I/Os a second, a probe's 12.4 s: 4.59% with a noise of 1.62%.
        let probe = trend(4.59, 1.62);
        let direct = CapacityEvidence::of_stream(probe, idle, false);
        assert!(matches!(
            direct.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        let cached = direct.through_page_cache(true);
        assert_eq!(cached.shortcoming(), None);
        assert!(
            cached.share().is_some_and(|s| s > 1.0),
            "the idle share aims the search"
        );
        // A device that cannot carry it drains steadily, outside the noise.
        let drained = CapacityEvidence::of_stream(trend(6.0, 0.5), idle, false);
        assert!(matches!(
            drained.through_page_cache(true).shortcoming(),
            Some(Shortcoming::Draining { shortfall_pct }) if shortfall_pct == 6.0
        ));
        // Beyond its noise but under the limit: the limit still holds.
        let small = CapacityEvidence::of_stream(trend(1.9, 0.1), idle, false);
        assert!(!matches!(
            small.through_page_cache(true).shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        // The device's own trend still judges what the rings cannot.
        assert!(matches!(
            cached.with_buffered(trend(2.5, 0.4)).shortcoming(),
            Some(Shortcoming::DeviceBehind { .. })
        ));
        // A studio's pooled evidence keeps the rule if any rank read through the cache.
        let pooled = CapacityEvidence::pooled(&[direct, cached]).unwrap();
        assert_eq!(pooled.draining_sigmas, PAGE_CACHE_SIGMAS);
    }
    /// A drain no deeper than one hold explains, with the butler idle between the holds, is
    /// the hold's; a drain beyond it, or without the idle time, is the device's.
    #[test]
    fn a_drain_one_hold_accounts_for_is_not_the_devices_rate() {
        // The bound of a least-squares trend over a step of h halfway through a window T.
        let (t_ms, h_ms) = (6000.0, 400.0);
        let n = 6001;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for i in 0..n {
            let t = t_ms * i as f64 / (n - 1) as f64;
            let y = if t > t_ms / 2.0 { -h_ms } else { 0.0 };
            sxy += (t - t_ms / 2.0) * y;
            sxx += (t - t_ms / 2.0).powi(2);
        }
        let slope_pct = -100.0 * sxy / sxx;
        let bound = one_hold_pct(h_ms, t_ms).unwrap();
        assert!((slope_pct - bound).abs() < 0.01, "{slope_pct} vs {bound}");
        assert_eq!(one_hold_pct(h_ms, 0.0), None);
        assert_eq!(
            longest_hold_ms(Some(9000.0), Some(183_000.0), Some(4.0)),
            Some(183.0)
        );
        assert_eq!(longest_hold_ms(None, None, None), None);

        // CI's first guess: one recorded track, 5.19% over 5.9 s, a write held about 0.55 s
        // (its ring at worst two thirds full), the butler otherwise idle.
        let window = Some(Sustain {
            shortfall_pct: 5.19,
            margin_in_s: None,
            noise_pct: 0.04,
            from_ms: 2048.0,
            to_ms: 7950.0,
        });
        let held = CapacityEvidence::of_stream(window, Some(85.0), false);
        assert!(matches!(
            held.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        let held = held.with_hold(Some(550.0), window);
        assert!(held.drain_is_one_hold(5.19));
        assert_eq!(held.shortcoming(), None);
        let finding = crate::result::findings::drain_within_one_hold(&held, Some(550.0));
        assert!(
            matches!(finding, Some(crate::result::findings::Finding::DrainWithinOneHold { hold_ms, .. }) if hold_ms == 550.0),
            "{finding:?}"
        );
        // A shorter hold does not account for it.
        let short = held.with_hold(Some(150.0), window);
        assert!(matches!(
            short.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        // Nor does a long one where the butler had no time to spare: a device short of the
        // rate (a studio at 1.03 times a capped device's bound: 2.7% lost, least idle 0%).
        let saturated =
            CapacityEvidence::of_stream(window, Some(0.0), false).with_hold(Some(550.0), window);
        assert!(matches!(
            saturated.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        let little = CapacityEvidence::of_stream(window, Some(AMPLE_IDLE_PCT - 0.1), false)
            .with_hold(Some(550.0), window);
        assert!(matches!(
            little.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
        // Through the page cache the read-ahead's own trend still judges the device.
        let cached = held.through_page_cache(true).with_buffered(trend(2.5, 0.4));
        assert!(matches!(
            cached.shortcoming(),
            Some(Shortcoming::DeviceBehind { .. })
        ));
        // A studio: the ranks' mean drain against their mean hold.
        let pooled = CapacityEvidence::pooled(&[held, short]).unwrap();
        let mean = (held.one_hold_pct.unwrap() + short.one_hold_pct.unwrap()) / 2.0;
        assert!((pooled.one_hold_pct.unwrap() - mean).abs() < 1e-9);
        assert_eq!(
            CapacityEvidence::pooled(&[held, saturated.with_hold(None, window)])
                .unwrap()
                .one_hold_pct,
            None
        );
        // Passing documents from before the figure read as before.
        let old: CapacityEvidence = serde_json::from_value(serde_json::json!({
            "shortfall_pct": 5.19, "noise_pct": 0.04, "idle_pct": 85.0,
            "ground_idle_pct": 85.0, "spare_min_pct": 2.0
        }))
        .unwrap();
        assert_eq!(old.one_hold_pct, None);
        assert!(matches!(
            old.shortcoming(),
            Some(Shortcoming::Draining { .. })
        ));
    }
}
