//! What a search leaves in the result document: its answer, every probe with the evidence it
//! was judged by, what capped it, and the rates its first guess came from.

use crate::verdict::evidence::CapacityEvidence;
use crate::verdict::{Shortcoming, Verdict};
use serde::{Deserialize, Serialize};

/// One run of the search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Probe {
    pub count: u32,
    /// Wall time the probe took, setup included.
    pub elapsed_s: f64,
    pub verdict: Verdict,
    /// Why a probe that did not pass did not (the first rule that held), where it can say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcoming: Option<Shortcoming>,
    pub worst_headroom_pct: f64,
    pub xruns: u64,
    /// A confirmation run: at the answer, or stepping down after a failed one.
    pub confirmation: bool,
    /// Located as the program the profile names locates (serially, in its own read calls)
    /// rather than quickly: a page-cache profile's confirmations.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub program_locate: bool,
    /// The count this probe suggests the device carries (see `ProbeResult::estimate`).
    #[serde(default)]
    pub estimate: Option<f64>,
    /// A studio's probe: what each rank saw (the verdict above is the worst of their own
    /// verdicts and the storage's, see `storage`). Empty for one computer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankFigures>,
    /// A studio's probe: the storage's capacity evidence, pooled from every rank's
    /// ([`CapacityEvidence::pooled`]), by which the capacity rules judged the probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub storage: Option<CapacityEvidence>,
    /// Started in the steady state, its tracks' starts spread over a chunk, its verdict's
    /// steady part after a warm-up instead of the first ring (`StreamSpec::steady_start`): a
    /// probe that steers the search, never a confirmation.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub steady_start: bool,
    /// Seconds the probe streamed after its locate: shorter than planned where it stopped as
    /// soon as it could no longer pass, or its verdict was beyond doubt (`StreamSpec::end_early`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ran_s: Option<f64>,
    /// One computer's probe: the capacity evidence the rules judged it by (the rings' trend
    /// and its noise, the butler's idle share). A studio's is its `storage`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evidence: Option<CapacityEvidence>,
}

/// What one rank of a studio saw in a probe: its verdict by its own deadlines (xruns, the margin,
/// its length: the storage's capacity is judged on the probe's pooled `storage`), its figures (by
/// metric name), and its capacity evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankFigures {
    pub rank: u32,
    pub verdict: Verdict,
    pub figures: std::collections::BTreeMap<String, f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<CapacityEvidence>,
}

/// The answer and how it was found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    /// The largest count that passed (0 when even one failed).
    pub answer: u32,
    /// The smallest count seen failing or marginal, if any.
    pub first_failing: Option<u32>,
    pub first_guess: u32,
    /// The confirmation run at the answer passed.
    pub confirmed: bool,
    /// The search stopped at the limit without a failure.
    pub hit_limit: bool,
    pub probes: Vec<Probe>,
}

/// What capped a search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SearchLimit {
    /// `--max-tracks`.
    MaxTracks,
    /// The rings may take at most half of RAM.
    Memory,
    /// Test files may take at most half of the free space.
    Space,
    /// The engine's own ceiling (20,000 tracks).
    Engine,
}

impl SearchLimit {
    pub fn words(self) -> &'static str {
        match self {
            SearchLimit::MaxTracks => "the --max-tracks limit",
            SearchLimit::Memory => "the memory the rings may take (half of RAM, or --max-memory)",
            SearchLimit::Space => "the free space test files may take (half of it)",
            SearchLimit::Engine => "the engine's ceiling of 20000 tracks",
        }
    }
}

/// One search of a `--find-max` run: its answer and every probe.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityReport {
    pub label: String,
    pub profile: String,
    pub butler: String,
    pub play_tracks: u32,
    pub record_tracks: u32,
    /// The audio period and the ring margin its probes were judged by (a program's profile
    /// brings its program's; None in documents from before they could differ by search).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period_frames: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub margin_pct: Option<f64>,
    /// What stopped the search short of a failing count, if anything did.
    #[serde(default)]
    pub limited_by: Option<SearchLimit>,
    pub capacity: Capacity,
}

/// What the short transfers before a search measured, in bytes per second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct GuessRates {
    pub round_robin_read: f64,
    pub round_robin_write: f64,
    pub sequential_read: f64,
    pub sequential_write: f64,
}

/// A `--find-max` run's detail: the first guess and every search with its probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchDetail {
    /// The share of the disk's stream tracks starting in phase can use (1 when staggered).
    #[serde(default = "one")]
    pub wave_share: f64,
    /// Sequential rate ÷ per-track rate.
    pub naive_tracks: f64,
    pub first_guess_tracks: f64,
    #[serde(default)]
    pub first_guess_parallel_tracks: f64,
    #[serde(default)]
    pub rates_bytes_per_s: GuessRates,
    pub searches: Vec<CapacityReport>,
}

fn one() -> f64 {
    1.0
}

/// One of the real-time section's searches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RealTimeSearch {
    /// The most tracks that passed (playback tracks for hdr).
    pub answer: u32,
    /// What stopped the search short of a failing count, if anything did.
    pub limited_by: Option<SearchLimit>,
    /// The search itself: its first guess and every probe.
    pub search: Option<SearchDetail>,
}

/// The real-time section's detail: its three searches, as far as the run got.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RealTimeDetail {
    pub play: Option<RealTimeSearch>,
    pub record: Option<RealTimeSearch>,
    pub hdr: Option<RealTimeSearch>,
}
