//! What one streaming run is asked to do: its format, its tracks, its audio period, its
//! program's policy and butler, how it starts and when it may stop.

use super::profile::Policy;
use super::ring::Ring;
use crate::audio::Format;
use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};

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
    /// `play` playback and `record` capture tracks of `format`, streamed as `policy`'s program
    /// streams them: at its period and margin (trackbench's where the program names none), one
    /// read at a time, tracks starting in phase, for a second; the options of a search's probes
    /// (a quick locate, an early stop, a steady start …) off. Everything else is set by name
    /// (`StreamSpec { butler, duration_ns, ..StreamSpec::new(…) }`).
    pub fn new(format: Format, policy: Policy, (play, record): (u32, u32)) -> StreamSpec {
        StreamSpec {
            format,
            play_tracks: play,
            record_tracks: record,
            period_frames: policy.period_frames.unwrap_or(DEFAULT_PERIOD),
            duration_ns: 1_000_000_000,
            margin: policy.margin.unwrap_or(DEFAULT_MARGIN),
            policy,
            butler: ButlerMode::Serial,
            stagger: false,
            prealloc: false,
            locate_queue_depth: None,
            stop_early: false,
            steady_start: false,
            end_early: false,
            locate_from_content: false,
            start_at_first_refill: false,
        }
    }

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

/// trackbench's own margin: a ring below this share of its capacity makes a run marginal (a
/// program's profile may say its program tolerates less: `Policy::margin`).
pub const DEFAULT_MARGIN: f64 = 0.2;

/// trackbench's own audio period in frames, where a profile names none of its program's.
pub const DEFAULT_PERIOD: u32 = 256;
